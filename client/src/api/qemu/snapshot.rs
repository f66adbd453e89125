//! A VM's snapshots.

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Qemu, VmConfig, snap_path, vm_path};
use crate::api::tasks::{TaskStatus, Upid};
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// One entry of `GET .../snapshot` (`snapshot_list`); the last is
/// `current`, the running state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotListItem {
    /// The snapshot's name (`current` for the running state).
    pub name: String,
    /// Its parent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// When it was taken, epoch seconds.
    #[serde(default, deserialize_with = "de::opt_i64")]
    pub snaptime: Option<i64>,
    /// Whether it holds the RAM state.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub vmstate: Option<bool>,
    /// Anything else PVE sent (`running`, `snapstate`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The request of `snapshot`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnapshotOptions {
    /// Save the RAM state too.
    pub vmstate: Option<bool>,
    /// A description.
    pub description: Option<String>,
}

impl Qemu<'_> {
    /// `GET .../snapshot` (`snapshot_list`).
    ///
    /// # Errors
    /// As [`Qemu::vm_config`].
    pub async fn snapshot_list(&self, node: &str, vmid: u32) -> Result<Vec<SnapshotListItem>> {
        self.client
            .call(
                Method::GET,
                &vm_path(node, vmid, "/snapshot"),
                &Params::new(),
            )
            .await
    }

    /// `POST .../snapshot` (`snapshot`): a `qmsnapshot` task.
    ///
    /// # Errors
    /// `snapshot name 'x' already used`; a lock.
    pub async fn snapshot(
        &self,
        node: &str,
        vmid: u32,
        snapname: &str,
        opts: &SnapshotOptions,
    ) -> Result<Upid> {
        let params = Params::new()
            .set("snapname", snapname)
            .opt("vmstate", opts.vmstate)
            .opt("description", opts.description.as_deref());
        self.task(Method::POST, &vm_path(node, vmid, "/snapshot"), &params)
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
    ) -> Result<VmConfig> {
        self.client
            .call(
                Method::GET,
                &snap_path(node, vmid, snapname, "/config"),
                &Params::new(),
            )
            .await
    }

    /// `PUT .../snapshot/{snapname}/config` (`update_snapshot_config`):
    /// sets the description.
    ///
    /// # Errors
    /// As [`Qemu::get_snapshot_config`].
    pub async fn update_snapshot_config(
        &self,
        node: &str,
        vmid: u32,
        snapname: &str,
        description: &str,
    ) -> Result<()> {
        let params = Params::new().set("description", description);
        let _: Value = self
            .client
            .call(
                Method::PUT,
                &snap_path(node, vmid, snapname, "/config"),
                &params,
            )
            .await?;
        Ok(())
    }

    /// `POST .../snapshot/{snapname}/rollback` (`rollback`): a
    /// `qmrollback` task; `start` starts the VM afterwards.
    ///
    /// # Errors
    /// As [`Qemu::get_snapshot_config`], in the task.
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
    /// `qmdelsnapshot` task; `force` removes the config entry even when
    /// removing a disk snapshot fails.
    ///
    /// # Errors
    /// As [`Qemu::get_snapshot_config`], in the task.
    pub async fn delsnapshot(
        &self,
        node: &str,
        vmid: u32,
        snapname: &str,
        force: bool,
    ) -> Result<Upid> {
        let params = Params::new().opt("force", force.then_some(true));
        self.task(
            Method::DELETE,
            &snap_path(node, vmid, snapname, ""),
            &params,
        )
        .await
    }

    and_wait! {
        /// [`Qemu::snapshot`], then waits for the task.
        snapshot_and_wait => snapshot(node: &str, vmid: u32, snapname: &str, opts: &SnapshotOptions);
        /// [`Qemu::rollback`], then waits for the task.
        rollback_and_wait => rollback(node: &str, vmid: u32, snapname: &str, start: bool);
        /// [`Qemu::delsnapshot`], then waits for the task.
        delsnapshot_and_wait => delsnapshot(node: &str, vmid: u32, snapname: &str, force: bool);
    }
}
