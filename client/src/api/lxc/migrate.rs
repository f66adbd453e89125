//! Migration of a container to another node.

use reqwest::Method;

use super::{Lxc, ct_path};
use crate::api::tasks::{TaskStatus, Upid};
use crate::error::Result;
use crate::transport::Params;

impl Lxc<'_> {
    /// `POST .../migrate` (`migrate_vm`): a `vzmigrate` task; `restart`
    /// shuts a running container down and starts it on the target.
    ///
    /// # Errors
    /// `can't migrate running container without --online or --restart`.
    pub async fn migrate_vm(
        &self,
        node: &str,
        vmid: u32,
        target: &str,
        restart: bool,
    ) -> Result<Upid> {
        let params = Params::new()
            .set("target", target)
            .opt("restart", restart.then_some(true));
        self.task(Method::POST, &ct_path(node, vmid, "/migrate"), &params)
            .await
    }

    and_wait! {
        /// [`Lxc::migrate_vm`], then waits for the task.
        migrate_vm_and_wait => migrate_vm(node: &str, vmid: u32, target: &str, restart: bool);
    }
}
