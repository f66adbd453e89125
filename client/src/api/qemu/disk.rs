//! A VM's disks: resize, move, unlink.

use reqwest::Method;
use serde_json::Value;

use super::{Qemu, vm_path};
use crate::api::tasks::{TaskStatus, Upid};
use crate::error::Result;
use crate::transport::Params;

/// The request of `resize_vm`: grow `disk` by `+N` (`+2G`) or to an
/// absolute size (`10G`); PVE refuses to shrink.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResizeVm {
    /// The disk (`scsi0`, `virtio1`, ...).
    pub disk: String,
    /// `+<size>[KMGT]` to grow by, `<size>[KMGT]` for the new size.
    pub size: String,
    /// Refuse unless the config still has this digest.
    pub digest: Option<String>,
    /// Ignore the lock (root only).
    pub skiplock: Option<bool>,
}

impl ResizeVm {
    /// Resizes `disk` to `size` (`+2G` or `10G`).
    pub fn new(disk: &str, size: &str) -> Self {
        Self {
            disk: disk.into(),
            size: size.into(),
            ..Self::default()
        }
    }

    /// Applies only if the config still has `digest`.
    #[must_use]
    pub fn digest(mut self, digest: impl Into<String>) -> Self {
        self.digest = Some(digest.into());
        self
    }

    fn params(&self) -> Params {
        Params::new()
            .set("disk", &self.disk)
            .set("size", &self.size)
            .opt("digest", self.digest.as_deref())
            .opt("skiplock", self.skiplock)
    }
}

/// The request of `move_vm_disk`: to another storage (`storage`), or to
/// another VM (`target_vmid`, `target_disk`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MoveDisk {
    /// The disk to move (`scsi0`, `unused0`, ...).
    pub disk: String,
    /// The target storage.
    pub storage: Option<String>,
    /// The target format (`raw`, `qcow2`, `vmdk`).
    pub format: Option<String>,
    /// Delete the source afterwards (otherwise it stays as `unused[n]`).
    pub delete: Option<bool>,
    /// The VM to move it to.
    pub target_vmid: Option<u32>,
    /// The key it gets there.
    pub target_disk: Option<String>,
    /// Refuse unless the source config still has this digest.
    pub digest: Option<String>,
    /// Refuse unless the target config still has this digest.
    pub target_digest: Option<String>,
    /// Bandwidth limit, KiB/s.
    pub bwlimit: Option<u64>,
}

impl MoveDisk {
    /// Moves `disk` to `storage`.
    pub fn to_storage(disk: &str, storage: &str) -> Self {
        Self {
            disk: disk.into(),
            storage: Some(storage.into()),
            ..Self::default()
        }
    }

    /// Reassigns `disk` to VM `vmid` as `target_disk`.
    pub fn to_vm(disk: &str, vmid: u32, target_disk: &str) -> Self {
        Self {
            disk: disk.into(),
            target_vmid: Some(vmid),
            target_disk: Some(target_disk.into()),
            ..Self::default()
        }
    }

    /// Deletes the source afterwards.
    #[must_use]
    pub fn delete(mut self, yes: bool) -> Self {
        self.delete = Some(yes);
        self
    }

    /// The target format.
    #[must_use]
    pub fn format(mut self, format: &str) -> Self {
        self.format = Some(format.into());
        self
    }

    fn params(&self) -> Params {
        Params::new()
            .set("disk", &self.disk)
            .opt("storage", self.storage.as_deref())
            .opt("format", self.format.as_deref())
            .opt("delete", self.delete)
            .opt("target-vmid", self.target_vmid)
            .opt("target-disk", self.target_disk.as_deref())
            .opt("digest", self.digest.as_deref())
            .opt("target-digest", self.target_digest.as_deref())
            .opt("bwlimit", self.bwlimit)
    }
}

impl Qemu<'_> {
    /// `PUT .../resize` (`resize_vm`): a `resize` task. A refusal (a
    /// shrink: `shrinking disks is not supported`; an unknown disk; a
    /// stale digest) fails the task, not the call.
    ///
    /// # Errors
    /// [`crate::Error::Validation`] for a malformed size.
    pub async fn resize_vm(&self, node: &str, vmid: u32, req: &ResizeVm) -> Result<Upid> {
        self.task(Method::PUT, &vm_path(node, vmid, "/resize"), &req.params())
            .await
    }

    /// `POST .../move_disk` (`move_vm_disk`): a `qmmove` task.
    ///
    /// # Errors
    /// `you can't move to the same storage with same format`, `disk
    /// 'scsi5' does not exist`, `you can't move a cdrom`, a lock.
    pub async fn move_vm_disk(&self, node: &str, vmid: u32, req: &MoveDisk) -> Result<Upid> {
        self.task(
            Method::POST,
            &vm_path(node, vmid, "/move_disk"),
            &req.params(),
        )
        .await
    }

    /// `PUT .../unlink` (`unlink`): removes disks from the config;
    /// `force` also deletes their volumes (else they become `unused`).
    ///
    /// # Errors
    /// As [`Qemu::update_vm`].
    pub async fn unlink(&self, node: &str, vmid: u32, idlist: &[&str], force: bool) -> Result<()> {
        let params = Params::new()
            .set("idlist", idlist.join(","))
            .opt("force", force.then_some(true));
        let _: Value = self
            .client
            .call(Method::PUT, &vm_path(node, vmid, "/unlink"), &params)
            .await?;
        Ok(())
    }

    and_wait! {
        /// [`Qemu::resize_vm`], then waits for the task.
        resize_vm_and_wait => resize_vm(node: &str, vmid: u32, req: &ResizeVm);
        /// [`Qemu::move_vm_disk`], then waits for the task.
        move_vm_disk_and_wait => move_vm_disk(node: &str, vmid: u32, req: &MoveDisk);
    }
}
