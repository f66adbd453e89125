//! A VM's configuration: create, read, update (with its pending
//! changes) and destroy.

use std::collections::BTreeMap;
use std::fmt;

use reqwest::Method;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::{Qemu, vm_path};
use crate::api::seg;
use crate::api::tasks::{TaskStatus, Upid};
use crate::de;
use crate::error::Result;
use crate::propstring::{Disk, IpConfig, NetworkDevice, PropertyString};
use crate::transport::{ParamValue, Params};

/// A VM configuration (`GET .../config`, `vm_config`; also a snapshot's,
/// `get_snapshot_config`): the keys the client models, typed, and every
/// other key in [`VmConfig::other`].
///
/// Values that do not parse as their typed form (a key of a newer
/// release, say) are kept in `other` as PVE sent them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VmConfig {
    /// The SHA-1 of the config file, for optimistic updates
    /// ([`UpdateVm::digest`]).
    pub digest: Option<String>,
    /// The name.
    pub name: Option<String>,
    /// The description (notes).
    pub description: Option<String>,
    /// Tags.
    pub tags: Vec<String>,
    /// Memory in MiB (`memory`, whose 9.x form is `[current=]<MiB>`).
    pub memory: Option<u64>,
    /// Cores per socket.
    pub cores: Option<u32>,
    /// Sockets.
    pub sockets: Option<u32>,
    /// The CPU type.
    pub cpu: Option<String>,
    /// The guest OS type (`l26`, `win11`, ...).
    pub ostype: Option<String>,
    /// Whether it starts on boot.
    pub onboot: Option<bool>,
    /// Whether it is a template.
    pub template: bool,
    /// The config lock (`backup`, `clone`, `snapshot`, ...).
    pub lock: Option<String>,
    /// The snapshot the current state descends from.
    pub parent: Option<String>,
    /// The boot order (`order=scsi0;net0`).
    pub boot: Option<String>,
    /// The guest agent settings (`agent`: `1`, `enabled=1,fstrim_cloned_disks=1`).
    pub agent: Option<PropertyString>,
    /// Network devices, `net[n]`, by `n`.
    pub nets: BTreeMap<u32, NetworkDevice>,
    /// Disks, by key (`scsi0`, `virtio1`, `sata0`, `ide2`).
    pub disks: BTreeMap<String, Disk>,
    /// Cloud-init addresses, `ipconfig[n]`, by `n`.
    pub ipconfigs: BTreeMap<u32, IpConfig>,
    /// Every other key, as PVE sent it.
    pub other: BTreeMap<String, Value>,
}

fn value_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(if *b { "1" } else { "0" }.into()),
        _ => None,
    }
}

fn indexed(key: &str, prefix: &str) -> Option<u32> {
    let n = key.strip_prefix(prefix)?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .then(|| n.parse().ok())
        .flatten()
}

/// Whether `key` is a disk of the buses [`Disk`] models.
fn is_disk_key(key: &str) -> bool {
    ["scsi", "virtio", "sata", "ide"]
        .iter()
        .any(|p| indexed(key, p).is_some())
}

impl VmConfig {
    /// Reads PVE's JSON object; never fails on a value it cannot type.
    pub fn from_map(map: Map<String, Value>) -> Self {
        let mut c = Self::default();
        for (k, v) in map {
            let text = value_text(&v);
            let keep = match (k.as_str(), text.as_deref()) {
                (_, None) => false,
                ("digest", Some(t)) => {
                    c.digest = Some(t.into());
                    true
                }
                ("name", Some(t)) => {
                    c.name = Some(t.into());
                    true
                }
                ("description", Some(t)) => {
                    c.description = Some(t.into());
                    true
                }
                ("tags", Some(t)) => {
                    c.tags = t
                        .split([';', ',', ' '])
                        .filter(|x| !x.is_empty())
                        .map(str::to_string)
                        .collect();
                    true
                }
                ("memory", Some(t)) => {
                    c.memory = t.strip_prefix("current=").unwrap_or(t).parse().ok();
                    c.memory.is_some()
                }
                ("cores", Some(t)) => {
                    c.cores = t.parse().ok();
                    c.cores.is_some()
                }
                ("sockets", Some(t)) => {
                    c.sockets = t.parse().ok();
                    c.sockets.is_some()
                }
                ("cpu", Some(t)) => {
                    c.cpu = Some(t.into());
                    true
                }
                ("ostype", Some(t)) => {
                    c.ostype = Some(t.into());
                    true
                }
                ("onboot", Some(t)) => {
                    c.onboot = pve_schema::propstring::parse_boolean(t);
                    c.onboot.is_some()
                }
                ("template", Some(t)) => {
                    c.template = pve_schema::propstring::parse_boolean(t).unwrap_or(false);
                    true
                }
                ("lock", Some(t)) => {
                    c.lock = Some(t.into());
                    true
                }
                ("parent", Some(t)) => {
                    c.parent = Some(t.into());
                    true
                }
                ("boot", Some(t)) => {
                    c.boot = Some(t.into());
                    true
                }
                ("agent", Some(t)) => PropertyString::qemu_format("agent")
                    .and_then(|f| PropertyString::parse(f, t).ok())
                    .map(|p| c.agent = Some(p))
                    .is_some(),
                (key, Some(t)) => {
                    if let Some(n) = indexed(key, "net") {
                        NetworkDevice::parse(t)
                            .ok()
                            .map(|d| c.nets.insert(n, d))
                            .is_some()
                    } else if let Some(n) = indexed(key, "ipconfig") {
                        IpConfig::parse(t)
                            .ok()
                            .map(|d| c.ipconfigs.insert(n, d))
                            .is_some()
                    } else if is_disk_key(key) {
                        Disk::parse_as(key, t)
                            .ok()
                            .map(|d| c.disks.insert(key.to_string(), d))
                            .is_some()
                    } else {
                        false
                    }
                }
            };
            if !keep {
                c.other.insert(k, v);
            }
        }
        c
    }

    /// Whether the guest agent is enabled (`agent: 1` or `enabled=1`).
    pub fn agent_enabled(&self) -> bool {
        self.agent
            .as_ref()
            .and_then(|a| a.get_bool("enabled"))
            .unwrap_or(false)
    }

    /// A key of [`VmConfig::other`] as text.
    pub fn get_other(&self, key: &str) -> Option<String> {
        self.other.get(key).and_then(value_text)
    }
}

impl<'de> Deserialize<'de> for VmConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Ok(Self::from_map(Map::deserialize(d)?))
    }
}

/// One entry of `GET .../pending` (`vm_pending`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingItem {
    /// The config key.
    pub key: String,
    /// The current value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// The value it will have once applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Value>,
    /// 1: to be deleted; 2: to be deleted, forced.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub delete: Option<u64>,
}

impl PendingItem {
    /// Whether a change waits for the next start (a pending value or
    /// deletion).
    pub fn is_pending(&self) -> bool {
        self.pending.is_some() || self.delete.is_some_and(|d| d > 0)
    }
}

/// Configuration keys as sent to `create_vm` and `update_vm`, with typed
/// setters for the common ones and [`VmSettings::set`] for any other.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VmSettings(BTreeMap<String, String>);

impl VmSettings {
    /// Sets any key (`balloon`, `scsihw`, `serial0`, ...).
    pub fn insert(&mut self, key: impl Into<String>, value: impl ParamValue) {
        self.0.insert(key.into(), value.to_param());
    }

    /// The keys and values, as they will be sent.
    pub fn values(&self) -> &BTreeMap<String, String> {
        &self.0
    }

    fn push_to(&self, params: &mut Params) {
        for (k, v) in &self.0 {
            params.push(k.clone(), v);
        }
    }
}

impl std::ops::Index<&str> for VmSettings {
    type Output = String;

    fn index(&self, key: &str) -> &String {
        &self.0[key]
    }
}

/// The typed setters shared by [`CreateVm`] and [`UpdateVm`].
macro_rules! settings_setters {
    () => {
        /// Sets any config key.
        #[must_use]
        pub fn set(mut self, key: impl Into<String>, value: impl ParamValue) -> Self {
            self.settings.insert(key, value);
            self
        }

        /// `name`.
        #[must_use]
        pub fn name(self, name: &str) -> Self {
            self.set("name", name)
        }

        /// `description`.
        #[must_use]
        pub fn description(self, text: &str) -> Self {
            self.set("description", text)
        }

        /// `tags`, `;`-joined.
        #[must_use]
        pub fn tags(self, tags: &[&str]) -> Self {
            self.set("tags", tags.join(";"))
        }

        /// `memory`, MiB.
        #[must_use]
        pub fn memory(self, mib: u64) -> Self {
            self.set("memory", mib)
        }

        /// `cores`.
        #[must_use]
        pub fn cores(self, n: u32) -> Self {
            self.set("cores", n)
        }

        /// `sockets`.
        #[must_use]
        pub fn sockets(self, n: u32) -> Self {
            self.set("sockets", n)
        }

        /// `cpu` (`host`, `x86-64-v2-AES`, ...).
        #[must_use]
        pub fn cpu(self, kind: &str) -> Self {
            self.set("cpu", kind)
        }

        /// `ostype` (`l26`, `win11`, ...).
        #[must_use]
        pub fn ostype(self, os: &str) -> Self {
            self.set("ostype", os)
        }

        /// `onboot`.
        #[must_use]
        pub fn onboot(self, yes: bool) -> Self {
            self.set("onboot", yes)
        }

        /// `agent`: enables or disables the guest agent.
        #[must_use]
        pub fn agent(self, enabled: bool) -> Self {
            self.set("agent", enabled)
        }

        /// `net[n]`.
        #[must_use]
        pub fn net(self, n: u32, dev: &NetworkDevice) -> Self {
            self.set(format!("net{n}"), dev.to_string())
        }

        /// A disk (`scsi0`, `virtio1`, `ide2`, ...).
        #[must_use]
        pub fn disk(self, key: &str, disk: &Disk) -> Self {
            self.set(key, disk.to_string())
        }

        /// `ipconfig[n]`.
        #[must_use]
        pub fn ipconfig(self, n: u32, ip: &IpConfig) -> Self {
            self.set(format!("ipconfig{n}"), ip.to_string())
        }

        /// Any property-string key (`efidisk0`, `vga`, `rng0`, ...).
        #[must_use]
        pub fn property(self, key: &str, value: &PropertyString) -> Self {
            self.set(key, value.to_string())
        }

        /// The config keys set so far.
        pub fn settings(&self) -> &VmSettings {
            &self.settings
        }
    };
}

/// The request of `create_vm`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CreateVm {
    /// The new VM's ID.
    pub vmid: u32,
    /// The config keys.
    pub settings: VmSettings,
    /// Start the VM once created.
    pub start: Option<bool>,
    /// The default storage for new disks.
    pub storage: Option<String>,
    /// Add it to this resource pool.
    pub pool: Option<String>,
    /// Overwrite an existing VM (only with `archive`).
    pub force: Option<bool>,
    /// Restore from this backup volume (`qmrestore`).
    pub archive: Option<String>,
    /// With `archive`: new MAC addresses and SMBIOS UUID.
    pub unique: Option<bool>,
}

impl CreateVm {
    /// A VM `vmid` with PVE's defaults.
    pub fn new(vmid: u32) -> Self {
        Self {
            vmid,
            ..Self::default()
        }
    }

    settings_setters!();

    /// Starts it once created.
    #[must_use]
    pub fn start(mut self, yes: bool) -> Self {
        self.start = Some(yes);
        self
    }

    /// The default storage for new disks.
    #[must_use]
    pub fn storage(mut self, storage: &str) -> Self {
        self.storage = Some(storage.into());
        self
    }

    /// Adds it to a resource pool.
    #[must_use]
    pub fn pool(mut self, pool: &str) -> Self {
        self.pool = Some(pool.into());
        self
    }

    /// Restores it from a backup volume (`local:backup/vzdump-qemu-...`):
    /// the task is a `qmrestore`.
    #[must_use]
    pub fn archive(mut self, volid: &str) -> Self {
        self.archive = Some(volid.into());
        self
    }

    /// With [`CreateVm::archive`]: overwrites an existing VM.
    #[must_use]
    pub fn force(mut self, yes: bool) -> Self {
        self.force = Some(yes);
        self
    }

    /// With [`CreateVm::archive`]: new MAC addresses and SMBIOS UUID.
    #[must_use]
    pub fn unique(mut self, yes: bool) -> Self {
        self.unique = Some(yes);
        self
    }

    fn params(&self) -> Params {
        let mut p = Params::new()
            .set("vmid", self.vmid)
            .opt("start", self.start)
            .opt("storage", self.storage.as_deref())
            .opt("pool", self.pool.as_deref())
            .opt("force", self.force)
            .opt("archive", self.archive.as_deref())
            .opt("unique", self.unique);
        self.settings.push_to(&mut p);
        p
    }
}

/// The request of `update_vm` and `update_vm_async`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpdateVm {
    /// Keys to set.
    pub settings: VmSettings,
    /// Keys to delete.
    pub delete: Vec<String>,
    /// Pending changes to drop.
    pub revert: Vec<String>,
    /// Refuse the change unless the config still has this digest
    /// (`checksum mismatch (file change by other user?)`).
    pub digest: Option<String>,
    /// Ignore the lock (root only).
    pub skiplock: Option<bool>,
    /// Force physical removal of deleted disks.
    pub force: Option<bool>,
    /// \[async\] wait up to this many seconds for the task; PVE then
    /// answers no UPID when it finished in time.
    pub background_delay: Option<u32>,
}

impl UpdateVm {
    /// An empty change (PVE refuses to apply one: `no options specified`).
    pub fn new() -> Self {
        Self::default()
    }

    settings_setters!();

    /// Deletes `key` (may be called for several).
    #[must_use]
    pub fn delete(mut self, key: &str) -> Self {
        self.delete.push(key.into());
        self
    }

    /// Drops the pending change of `key`.
    #[must_use]
    pub fn revert(mut self, key: &str) -> Self {
        self.revert.push(key.into());
        self
    }

    /// Applies only if the config still has `digest` (from
    /// [`VmConfig::digest`]).
    #[must_use]
    pub fn digest(mut self, digest: impl Into<String>) -> Self {
        self.digest = Some(digest.into());
        self
    }

    /// Ignores the config lock (root only).
    #[must_use]
    pub fn skiplock(mut self, yes: bool) -> Self {
        self.skiplock = Some(yes);
        self
    }

    fn params(&self) -> Params {
        let mut p = Params::new();
        self.settings.push_to(&mut p);
        p.opt("delete", join(&self.delete))
            .opt("revert", join(&self.revert))
            .opt("digest", self.digest.as_deref())
            .opt("skiplock", self.skiplock)
            .opt("force", self.force)
            .opt("background_delay", self.background_delay)
    }
}

fn join(keys: &[String]) -> Option<String> {
    (!keys.is_empty()).then(|| keys.join(","))
}

/// Which configuration `vm_config` reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ConfigView {
    /// With pending changes applied (PVE's default).
    #[default]
    Pending,
    /// The values in effect (`current=1`).
    Current,
    /// The config of a snapshot.
    Snapshot(String),
}

/// Options of `destroy_vm`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DestroyOptions {
    /// Also remove it from backup jobs, replication and HA.
    pub purge: Option<bool>,
    /// Also destroy disks of the VM not referenced by its config.
    pub destroy_unreferenced_disks: Option<bool>,
    /// Ignore the lock (root only).
    pub skiplock: Option<bool>,
}

impl Qemu<'_> {
    /// `POST /nodes/{node}/qemu` (`create_vm`): a `qmcreate` task.
    ///
    /// # Errors
    /// [`crate::Error::Validation`] for a malformed key;
    /// [`crate::Error::Conflict`] when the VMID is taken (`unable to
    /// create VM 100 - VM 100 already exists on node 'pve'`).
    pub async fn create_vm(&self, node: &str, req: &CreateVm) -> Result<Upid> {
        let path = format!("/nodes/{}/qemu", seg(node));
        self.task(Method::POST, &path, &req.params()).await
    }

    /// `GET .../config` (`vm_config`).
    ///
    /// # Errors
    /// [`crate::Error::NotFound`] for an unknown VM (`Configuration file
    /// 'nodes/pve/qemu-server/999.conf' does not exist`); a validation
    /// error for an unknown snapshot.
    pub async fn vm_config(&self, node: &str, vmid: u32, view: &ConfigView) -> Result<VmConfig> {
        let params = match view {
            ConfigView::Pending => Params::new(),
            ConfigView::Current => Params::new().set("current", true),
            ConfigView::Snapshot(s) => Params::new().set("snapshot", s),
        };
        self.client
            .call(Method::GET, &vm_path(node, vmid, "/config"), &params)
            .await
    }

    /// `PUT .../config` (`update_vm`): applies at once (hot-pluggable
    /// keys of a running VM; others become pending).
    ///
    /// # Errors
    /// [`crate::Error::Conflict`] for a stale digest (`checksum mismatch
    /// (file change by other user?)`) or a lock (`VM is locked (clone)`);
    /// [`crate::Error::Validation`] for malformed keys.
    pub async fn update_vm(&self, node: &str, vmid: u32, req: &UpdateVm) -> Result<()> {
        let _: Value = self
            .client
            .call(Method::PUT, &vm_path(node, vmid, "/config"), &req.params())
            .await?;
        Ok(())
    }

    /// `POST .../config` (`update_vm_async`): a `qmconfig` task; `None`
    /// when `background_delay` was given and the task ended in time.
    ///
    /// # Errors
    /// As [`Qemu::update_vm`] (the digest is checked before the task).
    pub async fn update_vm_async(
        &self,
        node: &str,
        vmid: u32,
        req: &UpdateVm,
    ) -> Result<Option<Upid>> {
        self.client
            .call(Method::POST, &vm_path(node, vmid, "/config"), &req.params())
            .await
    }

    /// [`Qemu::update_vm_async`], then waits for the task.
    ///
    /// # Errors
    /// As [`Qemu::update_vm_async`] and [`crate::api::tasks::Tasks::wait`].
    pub async fn update_vm_async_and_wait(
        &self,
        node: &str,
        vmid: u32,
        req: &UpdateVm,
    ) -> Result<Option<TaskStatus>> {
        match self.update_vm_async(node, vmid, req).await? {
            Some(upid) => Ok(Some(self.client.tasks().wait(&upid).await?)),
            None => Ok(None),
        }
    }

    /// `GET .../pending` (`vm_pending`): every key with its current and
    /// pending value.
    ///
    /// # Errors
    /// As [`Qemu::vm_config`].
    pub async fn vm_pending(&self, node: &str, vmid: u32) -> Result<Vec<PendingItem>> {
        self.client
            .call(
                Method::GET,
                &vm_path(node, vmid, "/pending"),
                &Params::new(),
            )
            .await
    }

    /// `DELETE /nodes/{node}/qemu/{vmid}` (`destroy_vm`): a `qmdestroy`
    /// task.
    ///
    /// # Errors
    /// `VM 100 is running - destroy failed`; `can't remove VM 100 -
    /// protection mode enabled`.
    pub async fn destroy_vm(&self, node: &str, vmid: u32, opts: &DestroyOptions) -> Result<Upid> {
        let params = Params::new()
            .opt("purge", opts.purge)
            .opt(
                "destroy-unreferenced-disks",
                opts.destroy_unreferenced_disks,
            )
            .opt("skiplock", opts.skiplock);
        self.task(Method::DELETE, &vm_path(node, vmid, ""), &params)
            .await
    }

    and_wait! {
        /// [`Qemu::create_vm`], then waits for the task.
        create_vm_and_wait => create_vm(node: &str, req: &CreateVm);
        /// [`Qemu::destroy_vm`], then waits for the task.
        destroy_vm_and_wait => destroy_vm(node: &str, vmid: u32, opts: &DestroyOptions);
    }
}

impl fmt::Display for ConfigView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Pending => f.write_str("pending"),
            Self::Current => f.write_str("current"),
            Self::Snapshot(s) => write!(f, "snapshot {s}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn configs_are_typed_leniently() {
        let c: VmConfig = serde_json::from_value(json!({
            "digest": "abc", "name": "web", "memory": "current=2048", "cores": 2,
            "onboot": 1, "agent": "1", "tags": "a;b",
            "net0": "virtio=BC:24:11:00:00:01,bridge=vmbr0",
            "net1": "virtio,bridge=vmbr0,colour=red",
            "scsi0": "local-lvm:vm-100-disk-0,size=32G",
            "ide2": "none,media=cdrom",
            "ipconfig0": "ip=dhcp", "scsihw": "virtio-scsi-pci", "balloon": 0,
        }))
        .expect("config");
        assert_eq!(c.digest.as_deref(), Some("abc"));
        assert_eq!(c.memory, Some(2048));
        assert_eq!(c.cores, Some(2));
        assert_eq!(c.onboot, Some(true));
        assert!(c.agent_enabled());
        assert_eq!(c.tags, ["a", "b"]);
        assert_eq!(c.nets[&0].bridge.as_deref(), Some("vmbr0"));
        assert!(!c.nets.contains_key(&1));
        assert_eq!(c.other["net1"], "virtio,bridge=vmbr0,colour=red");
        assert_eq!(c.disks["scsi0"].size.as_deref(), Some("32G"));
        assert_eq!(c.disks["ide2"].media.as_deref(), Some("cdrom"));
        assert!(c.ipconfigs[&0].is_dhcp());
        assert_eq!(c.get_other("balloon").as_deref(), Some("0"));
        assert_eq!(c.get_other("scsihw").as_deref(), Some("virtio-scsi-pci"));
    }

    #[test]
    fn updates_send_deletes_and_digests() {
        let u = UpdateVm::new()
            .cores(4)
            .delete("tags")
            .delete("balloon")
            .digest("d1");
        let p = u.params();
        let pairs: Vec<(&str, &str)> = p
            .pairs()
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [("cores", "4"), ("delete", "tags,balloon"), ("digest", "d1")]
        );
    }
}
