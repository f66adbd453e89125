//! Clones and templates of a container, and the features (snapshot,
//! clone, copy) it supports.

use reqwest::Method;
use serde_json::Value;

use super::{Lxc, ct_path};
use crate::api::qemu::{Feature, VmFeature};
use crate::api::tasks::{TaskStatus, Upid};
use crate::error::Result;
use crate::transport::Params;

/// The request of `clone_vm`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CloneCt {
    /// The new VMID.
    pub newid: u32,
    /// Full copy (default: unless the source is a template).
    pub full: Option<bool>,
    /// The host name of the clone.
    pub hostname: Option<String>,
    /// Its description.
    pub description: Option<String>,
    /// The storage of a full copy.
    pub storage: Option<String>,
    /// Clone from this snapshot.
    pub snapname: Option<String>,
    /// Move the clone to this node (shared storage only).
    pub target: Option<String>,
}

impl CloneCt {
    fn params(&self) -> Params {
        Params::new()
            .set("newid", self.newid)
            .opt("full", self.full)
            .opt("hostname", self.hostname.as_deref())
            .opt("description", self.description.as_deref())
            .opt("storage", self.storage.as_deref())
            .opt("snapname", self.snapname.as_deref())
            .opt("target", self.target.as_deref())
    }
}

impl Lxc<'_> {
    /// `POST .../clone` (`clone_vm`): a `vzclone` task.
    ///
    /// # Errors
    /// `parameter 'storage' not allowed for linked clones`; `Full clone
    /// of a running container is only possible from a snapshot`.
    pub async fn clone_vm(&self, node: &str, vmid: u32, req: &CloneCt) -> Result<Upid> {
        self.task(Method::POST, &ct_path(node, vmid, "/clone"), &req.params())
            .await
    }

    /// `POST .../template` (`template`): PVE forks a `vztemplate` task
    /// but answers null; the config says `template: 1` once it ends.
    ///
    /// # Errors
    /// `you can't convert a CT to template if the CT is running`.
    pub async fn template(&self, node: &str, vmid: u32) -> Result<()> {
        let _: Value = self
            .client
            .call(
                Method::POST,
                &ct_path(node, vmid, "/template"),
                &Params::new(),
            )
            .await?;
        Ok(())
    }

    /// `GET .../feature` (`vm_feature`).
    ///
    /// # Errors
    /// `snapshot 'x' does not exist`.
    pub async fn vm_feature(
        &self,
        node: &str,
        vmid: u32,
        feature: Feature,
        snapname: Option<&str>,
    ) -> Result<VmFeature> {
        let params = Params::new()
            .set("feature", feature.as_str())
            .opt("snapname", snapname);
        self.get(&ct_path(node, vmid, "/feature"), &params).await
    }

    and_wait! {
        /// [`Lxc::clone_vm`], then waits for the task.
        clone_vm_and_wait => clone_vm(node: &str, vmid: u32, req: &CloneCt);
    }
}
