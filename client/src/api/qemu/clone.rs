//! Clones, templates, and the features (snapshot, clone, copy) a VM
//! supports.

use reqwest::Method;
use serde::{Deserialize, Serialize};

use super::{Qemu, vm_path};
use crate::api::tasks::{TaskStatus, Upid};
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// The request of `clone_vm`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CloneVm {
    /// The new VM's ID.
    pub newid: u32,
    /// Its name.
    pub name: Option<String>,
    /// Its description.
    pub description: Option<String>,
    /// A full copy (`true`) or a linked clone of a template (`false`;
    /// PVE's default for templates).
    pub full: Option<bool>,
    /// The target storage of a full clone.
    pub storage: Option<String>,
    /// The image format of a full clone (`raw`, `qcow2`, `vmdk`).
    pub format: Option<String>,
    /// Clone this snapshot's state.
    pub snapname: Option<String>,
    /// The target node (shared storage only).
    pub target: Option<String>,
    /// Add the clone to this pool.
    pub pool: Option<String>,
    /// Bandwidth limit, KiB/s.
    pub bwlimit: Option<u64>,
}

impl CloneVm {
    /// A clone with ID `newid` and PVE's defaults.
    pub fn new(newid: u32) -> Self {
        Self {
            newid,
            ..Self::default()
        }
    }

    fn params(&self) -> Params {
        Params::new()
            .set("newid", self.newid)
            .opt("name", self.name.as_deref())
            .opt("description", self.description.as_deref())
            .opt("full", self.full)
            .opt("storage", self.storage.as_deref())
            .opt("format", self.format.as_deref())
            .opt("snapname", self.snapname.as_deref())
            .opt("target", self.target.as_deref())
            .opt("pool", self.pool.as_deref())
            .opt("bwlimit", self.bwlimit)
    }
}

/// What `GET .../feature` (`vm_feature`) answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VmFeature {
    /// Whether the feature is available.
    #[serde(rename = "hasFeature", deserialize_with = "de::bool01")]
    pub has_feature: bool,
    /// The nodes where it is.
    #[serde(default, deserialize_with = "de::list")]
    pub nodes: Vec<String>,
}

/// The feature `vm_feature` asks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// Taking snapshots.
    Snapshot,
    /// Linked clones.
    Clone,
    /// Full copies.
    Copy,
}

impl Feature {
    /// PVE's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Snapshot => "snapshot",
            Self::Clone => "clone",
            Self::Copy => "copy",
        }
    }
}

impl Qemu<'_> {
    /// `POST .../clone` (`clone_vm`): a `qmclone` task; the new VM is
    /// locked (`clone`) until it ends.
    ///
    /// # Errors
    /// `VM is locked (...)`; the new ID taken; a linked clone of a VM
    /// that is no template.
    pub async fn clone_vm(&self, node: &str, vmid: u32, req: &CloneVm) -> Result<Upid> {
        self.task(Method::POST, &vm_path(node, vmid, "/clone"), &req.params())
            .await
    }

    /// `POST .../template` (`template`): a `qmtemplate` task that turns
    /// the VM (or only `disk`) into a template.
    ///
    /// # Errors
    /// A running VM; a VM with snapshots; a lock.
    pub async fn template(&self, node: &str, vmid: u32, disk: Option<&str>) -> Result<Upid> {
        let params = Params::new().opt("disk", disk);
        self.task(Method::POST, &vm_path(node, vmid, "/template"), &params)
            .await
    }

    /// `GET .../feature` (`vm_feature`): whether the VM (or its snapshot
    /// `snapname`) supports `feature`, and on which nodes.
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
        self.client
            .call(Method::GET, &vm_path(node, vmid, "/feature"), &params)
            .await
    }

    and_wait! {
        /// [`Qemu::clone_vm`], then waits for the task.
        clone_vm_and_wait => clone_vm(node: &str, vmid: u32, req: &CloneVm);
        /// [`Qemu::template`], then waits for the task.
        template_and_wait => template(node: &str, vmid: u32, disk: Option<&str>);
    }
}
