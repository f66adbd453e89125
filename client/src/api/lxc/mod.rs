//! `/nodes/{node}/lxc`: containers, their configuration and pending
//! changes, power state, snapshots, templates and clones, volumes,
//! migration, and the appliance index (`/nodes/{node}/aplinfo`) their
//! OS templates come from.
//!
//! Calls that run a task answer its [`Upid`]; each has an `*_and_wait`
//! variant that waits with [`crate::api::tasks::Tasks::wait`] and answers
//! the final [`TaskStatus`](crate::api::tasks::TaskStatus) (a task that
//! fails is an [`Error::TaskFailed`](crate::Error::TaskFailed) with PVE's
//! exit status, such as `CT 100 already running`).
//!
//! ```
//! use pve_client::api::lxc::{CreateCt, UpdateCt};
//!
//! let create = CreateCt::new(200, "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst")
//!     .hostname("web-1")
//!     .memory(1024)
//!     .rootfs("local-lvm:8")
//!     .net(0, "name=eth0,bridge=vmbr0,ip=dhcp")
//!     .password("s3cret-pw");
//! assert_eq!(create.settings()["rootfs"], "local-lvm:8");
//! let update = UpdateCt::new().cores(2).delete("swap").digest("0123abcd");
//! # let _ = update;
//! ```

use reqwest::Method;

use super::seg;
use super::tasks::Upid;
use crate::Client;
use crate::error::Result;
use crate::transport::Params;

fn ct_path(node: &str, vmid: u32, tail: &str) -> String {
    format!("/nodes/{}/lxc/{vmid}{tail}", seg(node))
}

fn snap_path(node: &str, vmid: u32, snap: &str, tail: &str) -> String {
    ct_path(node, vmid, &format!("/snapshot/{}{tail}", seg(snap)))
}

/// The generated `*_and_wait` variants of task-returning calls.
macro_rules! and_wait {
    ($(#[$doc:meta] $wait:ident => $call:ident($($arg:ident: $t:ty),*);)*) => {$(
        #[$doc]
        ///
        /// # Errors
        /// As the call, and [`crate::api::tasks::Tasks::wait`]: a failed
        /// task is an [`Error::TaskFailed`](crate::Error::TaskFailed)
        /// with PVE's exit status.
        pub async fn $wait(&self, $($arg: $t),*) -> Result<TaskStatus> {
            let upid = self.$call($($arg),*).await?;
            self.client.tasks().wait(&upid).await
        }
    )*};
}

mod appliance;
mod clone;
mod config;
mod console;
mod migrate;
mod power;
mod snapshot;
mod volume;

pub use appliance::Appliance;
pub use clone::CloneCt;
pub use config::{CreateCt, CtConfig, CtSettings, UpdateCt};
pub use power::{CtInterface, CtStatus};

/// The `/nodes/{node}/lxc` area; see [`Client::lxc`].
#[derive(Debug, Clone, Copy)]
pub struct Lxc<'a> {
    pub(crate) client: &'a Client,
}

impl Client {
    /// The container calls.
    pub fn lxc(&self) -> Lxc<'_> {
        Lxc { client: self }
    }
}

impl Lxc<'_> {
    async fn task(&self, method: Method, path: &str, params: &Params) -> Result<Upid> {
        self.client.call(method, path, params).await
    }

    async fn get<T: serde::de::DeserializeOwned>(&self, path: &str, params: &Params) -> Result<T> {
        self.client.call(Method::GET, path, params).await
    }
}
