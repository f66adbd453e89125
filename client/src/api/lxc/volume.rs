//! A container's volumes: resize, and move to another storage or
//! container.

use reqwest::Method;

use super::{Lxc, ct_path};
use crate::api::tasks::{TaskStatus, Upid};
use crate::error::Result;
use crate::transport::Params;

impl Lxc<'_> {
    /// `PUT .../resize` (`resize_vm`): a `resize` task; `size` is `+N`
    /// or absolute (`10G`).
    ///
    /// # Errors
    /// `unable to shrink disk size`; `disk is already at specified size`.
    pub async fn resize_vm(&self, node: &str, vmid: u32, disk: &str, size: &str) -> Result<Upid> {
        let params = Params::new().set("disk", disk).set("size", size);
        self.task(Method::PUT, &ct_path(node, vmid, "/resize"), &params)
            .await
    }

    /// `POST .../move_volume` (`move_volume`) to another storage: a
    /// `move_volume` task; the source stays as `unusedN` unless `delete`.
    ///
    /// # Errors
    /// `cannot move volumes of a running container`.
    pub async fn move_volume(
        &self,
        node: &str,
        vmid: u32,
        volume: &str,
        storage: &str,
        delete: bool,
    ) -> Result<Upid> {
        let params = Params::new()
            .set("volume", volume)
            .set("storage", storage)
            .opt("delete", delete.then_some(true));
        self.task(Method::POST, &ct_path(node, vmid, "/move_volume"), &params)
            .await
    }

    /// `POST .../move_volume` (`move_volume`) with `target-vmid`: the
    /// volume goes to another container of the node (as `target_volume`,
    /// default the same key); a `move_volume` task.
    ///
    /// # Errors
    /// `Cannot move to/from 'rootfs'`, `Target volume key 'mp0' is
    /// already in use for container '301'`, ...
    pub async fn move_volume_to_ct(
        &self,
        node: &str,
        vmid: u32,
        volume: &str,
        target_vmid: u32,
        target_volume: Option<&str>,
    ) -> Result<Upid> {
        let params = Params::new()
            .set("volume", volume)
            .set("target-vmid", target_vmid)
            .opt("target-volume", target_volume);
        self.task(Method::POST, &ct_path(node, vmid, "/move_volume"), &params)
            .await
    }

    and_wait! {
        /// [`Lxc::resize_vm`], then waits for the task.
        resize_vm_and_wait => resize_vm(node: &str, vmid: u32, disk: &str, size: &str);
        /// [`Lxc::move_volume`], then waits for the task.
        move_volume_and_wait => move_volume(node: &str, vmid: u32, volume: &str, storage: &str, delete: bool);
    }
}
