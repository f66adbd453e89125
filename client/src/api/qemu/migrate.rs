//! Migration of a VM to another node.

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Qemu, vm_path};
use crate::api::tasks::{TaskStatus, Upid};
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// The request of `migrate_vm`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MigrateVm {
    /// The target node.
    pub target: String,
    /// Live migration of a running VM.
    pub online: Option<bool>,
    /// Copy local disks too.
    pub with_local_disks: Option<bool>,
    /// Target storage (`<storage>` or `<source>:<target>` pairs).
    pub targetstorage: Option<String>,
    /// Allow migrating VMs with local devices (root only).
    pub force: Option<bool>,
    /// Bandwidth limit, KiB/s.
    pub bwlimit: Option<u64>,
    /// `secure` or `insecure`.
    pub migration_type: Option<String>,
    /// The migration network (CIDR).
    pub migration_network: Option<String>,
}

impl MigrateVm {
    /// A migration to `target` with PVE's defaults (offline).
    pub fn new(target: &str) -> Self {
        Self {
            target: target.into(),
            ..Self::default()
        }
    }

    /// Live migration.
    #[must_use]
    pub fn online(mut self, yes: bool) -> Self {
        self.online = Some(yes);
        self
    }

    /// Copy local disks too.
    #[must_use]
    pub fn with_local_disks(mut self, yes: bool) -> Self {
        self.with_local_disks = Some(yes);
        self
    }

    /// The target storage.
    #[must_use]
    pub fn targetstorage(mut self, storage: &str) -> Self {
        self.targetstorage = Some(storage.into());
        self
    }

    fn params(&self) -> Params {
        Params::new()
            .set("target", &self.target)
            .opt("online", self.online)
            .opt("with-local-disks", self.with_local_disks)
            .opt("targetstorage", self.targetstorage.as_deref())
            .opt("force", self.force)
            .opt("bwlimit", self.bwlimit)
            .opt("migration_type", self.migration_type.as_deref())
            .opt("migration_network", self.migration_network.as_deref())
    }
}

/// A local disk in [`MigratePrecondition::local_disks`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalDisk {
    /// The volume.
    pub volid: String,
    /// Size, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub size: Option<u64>,
    /// Whether it is a CD-ROM image.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub cdrom: Option<bool>,
    /// Whether it is only referenced as `unused[n]`.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub is_unused: Option<bool>,
    /// Anything else (`drivename`, `is_attached`, `is_cloudinit`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What `GET .../migrate` (`migrate_vm_precondition`) answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MigratePrecondition {
    /// Whether the VM runs.
    #[serde(deserialize_with = "de::bool01")]
    pub running: bool,
    /// The nodes it may migrate to (offline).
    #[serde(default, deserialize_with = "de::list")]
    pub allowed_nodes: Vec<String>,
    /// The nodes it may not migrate to, with the reasons
    /// (`unavailable_storages`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_allowed_nodes: Option<Map<String, Value>>,
    /// Its local disks.
    #[serde(default)]
    pub local_disks: Vec<LocalDisk>,
    /// Local resources that prevent migration (`hostpci0`, ...).
    #[serde(default, deserialize_with = "de::list")]
    pub local_resources: Vec<String>,
    /// Mapped resources.
    #[serde(rename = "mapped-resources", default, deserialize_with = "de::list")]
    pub mapped_resources: Vec<String>,
    /// Anything else (`has-dbus-vmstate`, `mapped-resource-info`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Qemu<'_> {
    /// `POST .../migrate` (`migrate_vm`): a `qmigrate` task.
    ///
    /// # Errors
    /// `target is local node.` (validation), `no such cluster node 'x'`,
    /// `can't migrate running VM without --online`, a lock.
    pub async fn migrate_vm(&self, node: &str, vmid: u32, req: &MigrateVm) -> Result<Upid> {
        self.task(
            Method::POST,
            &vm_path(node, vmid, "/migrate"),
            &req.params(),
        )
        .await
    }

    /// `GET .../migrate` (`migrate_vm_precondition`): whether and where
    /// the VM may migrate, and its local disks.
    ///
    /// # Errors
    /// As [`Qemu::vm_config`].
    pub async fn migrate_vm_precondition(
        &self,
        node: &str,
        vmid: u32,
        target: Option<&str>,
    ) -> Result<MigratePrecondition> {
        let params = Params::new().opt("target", target);
        self.client
            .call(Method::GET, &vm_path(node, vmid, "/migrate"), &params)
            .await
    }

    and_wait! {
        /// [`Qemu::migrate_vm`], then waits for the task.
        migrate_vm_and_wait => migrate_vm(node: &str, vmid: u32, req: &MigrateVm);
    }
}
