//! `/nodes/{node}/qemu`: VMs, their configuration and pending changes,
//! their power state, cloning, templates and snapshots.
//!
//! Calls that run a task answer its [`Upid`]; each has an `*_and_wait`
//! variant that waits with [`crate::api::tasks::Tasks::wait`] and answers
//! the final [`TaskStatus`](crate::api::tasks::TaskStatus) (a task that
//! fails is an [`Error::TaskFailed`](crate::Error::TaskFailed) with PVE's
//! exit status, such as `VM 100 already running`).
//!
//! ```
//! use pve_client::api::qemu::{CreateVm, UpdateVm};
//! use pve_client::propstring::{Disk, NetworkDevice};
//!
//! let create = CreateVm::new(200)
//!     .name("web-1")
//!     .memory(2048)
//!     .cores(2)
//!     .net(0, &NetworkDevice { bridge: Some("vmbr0".into()), ..NetworkDevice::new("virtio") })
//!     .disk("scsi0", &Disk::new("local-lvm:32"))
//!     .agent(true);
//! assert_eq!(create.settings()["net0"], "virtio,bridge=vmbr0");
//! // An optimistic update: refused with `checksum mismatch` when the
//! // config changed since it was read.
//! let update = UpdateVm::new().cores(4).delete("tags").digest("0123abcd");
//! # let _ = update;
//! ```

use reqwest::Method;

use super::seg;
use super::tasks::Upid;
use crate::Client;
use crate::error::Result;
use crate::transport::Params;

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

mod clone;
mod cloudinit;
mod config;
mod console;
mod disk;
mod migrate;
mod power;
mod rrd;
mod snapshot;

pub use clone::{CloneVm, Feature, VmFeature};
pub use cloudinit::CloudInitDump;
pub use config::{
    ConfigView, CreateVm, DestroyOptions, PendingItem, UpdateVm, VmConfig, VmSettings,
};
pub use disk::{MoveDisk, ResizeVm};
pub use migrate::{LocalDisk, MigratePrecondition, MigrateVm};
pub use power::{ShutdownOptions, StartOptions, StopOptions, SuspendOptions, VmStatus};
pub use rrd::{Consolidation, RrdPoint, Timeframe};
pub use snapshot::{SnapshotListItem, SnapshotOptions};

/// The `/nodes/{node}/qemu` area; see [`Client::qemu`].
#[derive(Debug, Clone, Copy)]
pub struct Qemu<'a> {
    pub(crate) client: &'a Client,
}

impl Client {
    /// The VM calls.
    pub fn qemu(&self) -> Qemu<'_> {
        Qemu { client: self }
    }
}

fn vm_path(node: &str, vmid: u32, tail: &str) -> String {
    format!("/nodes/{}/qemu/{vmid}{tail}", seg(node))
}

fn snap_path(node: &str, vmid: u32, snap: &str, tail: &str) -> String {
    vm_path(node, vmid, &format!("/snapshot/{}{tail}", seg(snap)))
}

impl Qemu<'_> {
    async fn task(&self, method: Method, path: &str, params: &Params) -> Result<Upid> {
        self.client.call(method, path, params).await
    }
}
