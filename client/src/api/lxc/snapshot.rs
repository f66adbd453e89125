//! A container's snapshots.

use reqwest::Method;

use super::{CtConfig, Lxc, ct_path, snap_path};
use crate::api::qemu::SnapshotListItem;
use crate::api::tasks::{TaskStatus, Upid};
use crate::error::Result;
use crate::transport::Params;

impl Lxc<'_> {
    /// `GET .../snapshot` (`list`): the snapshots, then `current`.
    ///
    /// # Errors
    /// As [`Lxc::vm_config`].
    pub async fn list(&self, node: &str, vmid: u32) -> Result<Vec<SnapshotListItem>> {
        self.get(&ct_path(node, vmid, "/snapshot"), &Params::new())
            .await
    }

    /// `POST .../snapshot` (`snapshot`): a `vzsnapshot` task.
    ///
    /// # Errors
    /// `snapshot name 'x' already used` (in the task).
    pub async fn snapshot(
        &self,
        node: &str,
        vmid: u32,
        snapname: &str,
        description: Option<&str>,
    ) -> Result<Upid> {
        let params = Params::new()
            .set("snapname", snapname)
            .opt("description", description);
        self.task(Method::POST, &ct_path(node, vmid, "/snapshot"), &params)
            .await
    }

    /// `GET .../snapshot/{snapname}/config` (`get_snapshot_config`).
    ///
    /// # Errors
    /// `snapshot 'x' does not exist`.
    pub async fn get_snapshot_config(
        &self,
        node: &str,
        vmid: u32,
        snapname: &str,
    ) -> Result<CtConfig> {
        self.get(&snap_path(node, vmid, snapname, "/config"), &Params::new())
            .await
    }

    /// `POST .../snapshot/{snapname}/rollback` (`rollback`): a
    /// `vzrollback` task.
    ///
    /// # Errors
    /// `snapshot 'x' does not exist` (in the task).
    pub async fn rollback(
        &self,
        node: &str,
        vmid: u32,
        snapname: &str,
        start: bool,
    ) -> Result<Upid> {
        let params = Params::new().opt("start", start.then_some(true));
        self.task(
            Method::POST,
            &snap_path(node, vmid, snapname, "/rollback"),
            &params,
        )
        .await
    }

    /// `DELETE .../snapshot/{snapname}` (`delsnapshot`): a
    /// `vzdelsnapshot` task.
    ///
    /// # Errors
    /// `snapshot 'x' does not exist` (in the task).
    pub async fn delsnapshot(&self, node: &str, vmid: u32, snapname: &str) -> Result<Upid> {
        self.task(
            Method::DELETE,
            &snap_path(node, vmid, snapname, ""),
            &Params::new(),
        )
        .await
    }

    and_wait! {
        /// [`Lxc::snapshot`], then waits for the task.
        snapshot_and_wait => snapshot(node: &str, vmid: u32, snapname: &str, description: Option<&str>);
        /// [`Lxc::rollback`], then waits for the task.
        rollback_and_wait => rollback(node: &str, vmid: u32, snapname: &str, start: bool);
        /// [`Lxc::delsnapshot`], then waits for the task.
        delsnapshot_and_wait => delsnapshot(node: &str, vmid: u32, snapname: &str);
    }
}
