//! `/nodes/{node}/qemu`: VMs, their configuration and pending changes,
//! their power state, cloning, templates and snapshots.
//!
//! Calls that run a task answer its [`Upid`]; each has an `*_and_wait`
//! variant that waits with [`crate::api::tasks::Tasks::wait`] and answers
//! the final [`TaskStatus`] (a task that fails is an
//! [`Error::TaskFailed`](crate::Error::TaskFailed) with PVE's exit status,
//! such as `VM 100 already running`).
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

use std::collections::BTreeMap;
use std::fmt;

use reqwest::Method;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::seg;
use super::tasks::{TaskStatus, Upid};
use crate::Client;
use crate::de;
use crate::error::Result;
use crate::propstring::{Disk, IpConfig, NetworkDevice, PropertyString};
use crate::transport::{ParamValue, Params};

/// The `/nodes/{node}/qemu` area; see [`Client::qemu`].
#[derive(Debug, Clone, Copy)]
pub struct Qemu<'a> {
    client: &'a Client,
}

impl Client {
    /// The VM calls.
    pub fn qemu(&self) -> Qemu<'_> {
        Qemu { client: self }
    }
}

/// A VM's entry in `GET /nodes/{node}/qemu` (`vmlist`), and what `GET
/// .../status/current` (`vm_status`) answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VmStatus {
    /// The VM ID.
    #[serde(deserialize_with = "de::u64_lenient")]
    pub vmid: u64,
    /// `running` or `stopped`.
    pub status: String,
    /// The name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// QEMU's own state (`running`, `paused`, `prelaunch`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qmpstatus: Option<String>,
    /// The config lock (`backup`, `clone`, `suspended`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<String>,
    /// Whether it is a template.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub template: Option<bool>,
    /// \[status\] whether the agent is enabled in the config.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub agent: Option<bool>,
    /// Tags, `;`-separated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<String>,
    /// CPU use, a fraction of `cpus`.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub cpu: Option<f64>,
    /// CPUs.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub cpus: Option<f64>,
    /// Memory in use, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub mem: Option<u64>,
    /// Memory, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub maxmem: Option<u64>,
    /// Root disk size, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub maxdisk: Option<u64>,
    /// Seconds since start.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub uptime: Option<u64>,
    /// The QEMU process ID, while running.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub pid: Option<u64>,
    /// \[status\] the HA state (`{"managed": 0}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ha: Option<Value>,
    /// Anything else PVE sent (`netin`, `diskread`, `pressure*`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl VmStatus {
    /// Whether the VM runs (paused VMs run too; see `qmpstatus`).
    pub fn is_running(&self) -> bool {
        self.status == "running"
    }

    /// Whether QEMU reports the VM paused.
    pub fn is_paused(&self) -> bool {
        self.qmpstatus.as_deref() == Some("paused")
    }
}

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

/// Options of `vm_start`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StartOptions {
    /// Ignore the lock (root only).
    pub skiplock: Option<bool>,
    /// Seconds to wait (default: max(30, 10 per GiB of memory)).
    pub timeout: Option<u32>,
    /// The QEMU machine type.
    pub machine: Option<String>,
}

/// Options of `vm_stop`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StopOptions {
    /// Ignore the lock (root only).
    pub skiplock: Option<bool>,
    /// Seconds to wait.
    pub timeout: Option<u32>,
    /// Keep the disks active (root only).
    pub keep_active: Option<bool>,
    /// Abort a running shutdown task first.
    pub overrule_shutdown: Option<bool>,
}

/// Options of `vm_shutdown`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShutdownOptions {
    /// Stop the VM when it does not shut down in time.
    pub force_stop: Option<bool>,
    /// Seconds to wait for the guest (qemu-server waits 60 by default).
    pub timeout: Option<u32>,
    /// Ignore the lock (root only).
    pub skiplock: Option<bool>,
    /// Keep the disks active (root only).
    pub keep_active: Option<bool>,
}

/// Options of `vm_suspend`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SuspendOptions {
    /// Hibernate: save the state to disk and stop (`qmsuspend`);
    /// otherwise pause (`qmpause`).
    pub todisk: Option<bool>,
    /// The storage for the state with `todisk`.
    pub statestorage: Option<String>,
    /// Ignore the lock (root only).
    pub skiplock: Option<bool>,
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

fn vm_path(node: &str, vmid: u32, tail: &str) -> String {
    format!("/nodes/{}/qemu/{vmid}{tail}", seg(node))
}

fn snap_path(node: &str, vmid: u32, snap: &str, tail: &str) -> String {
    vm_path(node, vmid, &format!("/snapshot/{}{tail}", seg(snap)))
}

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

impl Qemu<'_> {
    async fn task(&self, method: Method, path: &str, params: &Params) -> Result<Upid> {
        self.client.call(method, path, params).await
    }

    /// `GET /nodes/{node}/qemu` (`vmlist`): the VMs of a node the caller
    /// may audit; `full` adds the figures a running VM's `status` has.
    ///
    /// # Errors
    /// As any call.
    pub async fn vmlist(&self, node: &str, full: bool) -> Result<Vec<VmStatus>> {
        let path = format!("/nodes/{}/qemu", seg(node));
        let params = Params::new().opt("full", full.then_some(true));
        self.client.call(Method::GET, &path, &params).await
    }

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

    /// `GET .../status/current` (`vm_status`).
    ///
    /// # Errors
    /// As [`Qemu::vm_config`].
    pub async fn vm_status(&self, node: &str, vmid: u32) -> Result<VmStatus> {
        self.client
            .call(
                Method::GET,
                &vm_path(node, vmid, "/status/current"),
                &Params::new(),
            )
            .await
    }

    /// `POST .../status/start` (`vm_start`): a `qmstart` task, which
    /// fails with `VM 100 already running` for a running VM.
    ///
    /// # Errors
    /// As any call.
    pub async fn vm_start(&self, node: &str, vmid: u32, opts: &StartOptions) -> Result<Upid> {
        let params = Params::new()
            .opt("skiplock", opts.skiplock)
            .opt("timeout", opts.timeout)
            .opt("machine", opts.machine.as_deref());
        self.task(Method::POST, &vm_path(node, vmid, "/status/start"), &params)
            .await
    }

    /// `POST .../status/stop` (`vm_stop`): a `qmstop` task (hard stop).
    ///
    /// # Errors
    /// As any call.
    pub async fn vm_stop(&self, node: &str, vmid: u32, opts: &StopOptions) -> Result<Upid> {
        let params = Params::new()
            .opt("skiplock", opts.skiplock)
            .opt("timeout", opts.timeout)
            .opt("keepActive", opts.keep_active)
            .opt("overrule-shutdown", opts.overrule_shutdown);
        self.task(Method::POST, &vm_path(node, vmid, "/status/stop"), &params)
            .await
    }

    /// `POST .../status/shutdown` (`vm_shutdown`): a `qmshutdown` task
    /// (ACPI or agent shutdown).
    ///
    /// # Errors
    /// `VM is paused - cannot shutdown` without `force_stop`.
    pub async fn vm_shutdown(&self, node: &str, vmid: u32, opts: &ShutdownOptions) -> Result<Upid> {
        let params = Params::new()
            .opt("forceStop", opts.force_stop)
            .opt("timeout", opts.timeout)
            .opt("skiplock", opts.skiplock)
            .opt("keepActive", opts.keep_active);
        self.task(
            Method::POST,
            &vm_path(node, vmid, "/status/shutdown"),
            &params,
        )
        .await
    }

    /// `POST .../status/reboot` (`vm_reboot`): a `qmreboot` task.
    ///
    /// # Errors
    /// `VM 100 not running` for a stopped VM.
    pub async fn vm_reboot(&self, node: &str, vmid: u32, timeout: Option<u32>) -> Result<Upid> {
        let params = Params::new().opt("timeout", timeout);
        self.task(
            Method::POST,
            &vm_path(node, vmid, "/status/reboot"),
            &params,
        )
        .await
    }

    /// `POST .../status/reset` (`vm_reset`): a `qmreset` task.
    ///
    /// # Errors
    /// `VM 100 not running` for a stopped VM.
    pub async fn vm_reset(&self, node: &str, vmid: u32, skiplock: bool) -> Result<Upid> {
        let params = Params::new().opt("skiplock", skiplock.then_some(true));
        self.task(Method::POST, &vm_path(node, vmid, "/status/reset"), &params)
            .await
    }

    /// `POST .../status/suspend` (`vm_suspend`): a `qmpause` task, or
    /// `qmsuspend` (hibernation) with `todisk`.
    ///
    /// # Errors
    /// `VM 100 not running` for a stopped VM.
    pub async fn vm_suspend(&self, node: &str, vmid: u32, opts: &SuspendOptions) -> Result<Upid> {
        let params = Params::new()
            .opt("todisk", opts.todisk)
            .opt("statestorage", opts.statestorage.as_deref())
            .opt("skiplock", opts.skiplock);
        self.task(
            Method::POST,
            &vm_path(node, vmid, "/status/suspend"),
            &params,
        )
        .await
    }

    /// `POST .../status/resume` (`vm_resume`): a `qmresume` task.
    ///
    /// # Errors
    /// `VM 100 not running` for a stopped VM that is not hibernated.
    pub async fn vm_resume(&self, node: &str, vmid: u32, skiplock: bool) -> Result<Upid> {
        let params = Params::new().opt("skiplock", skiplock.then_some(true));
        self.task(
            Method::POST,
            &vm_path(node, vmid, "/status/resume"),
            &params,
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
        /// [`Qemu::create_vm`], then waits for the task.
        create_vm_and_wait => create_vm(node: &str, req: &CreateVm);
        /// [`Qemu::vm_start`], then waits for the task.
        vm_start_and_wait => vm_start(node: &str, vmid: u32, opts: &StartOptions);
        /// [`Qemu::vm_stop`], then waits for the task.
        vm_stop_and_wait => vm_stop(node: &str, vmid: u32, opts: &StopOptions);
        /// [`Qemu::vm_shutdown`], then waits for the task.
        vm_shutdown_and_wait => vm_shutdown(node: &str, vmid: u32, opts: &ShutdownOptions);
        /// [`Qemu::vm_reboot`], then waits for the task.
        vm_reboot_and_wait => vm_reboot(node: &str, vmid: u32, timeout: Option<u32>);
        /// [`Qemu::vm_reset`], then waits for the task.
        vm_reset_and_wait => vm_reset(node: &str, vmid: u32, skiplock: bool);
        /// [`Qemu::vm_suspend`], then waits for the task.
        vm_suspend_and_wait => vm_suspend(node: &str, vmid: u32, opts: &SuspendOptions);
        /// [`Qemu::vm_resume`], then waits for the task.
        vm_resume_and_wait => vm_resume(node: &str, vmid: u32, skiplock: bool);
        /// [`Qemu::destroy_vm`], then waits for the task.
        destroy_vm_and_wait => destroy_vm(node: &str, vmid: u32, opts: &DestroyOptions);
        /// [`Qemu::clone_vm`], then waits for the task.
        clone_vm_and_wait => clone_vm(node: &str, vmid: u32, req: &CloneVm);
        /// [`Qemu::template`], then waits for the task.
        template_and_wait => template(node: &str, vmid: u32, disk: Option<&str>);
        /// [`Qemu::snapshot`], then waits for the task.
        snapshot_and_wait => snapshot(node: &str, vmid: u32, snapname: &str, opts: &SnapshotOptions);
        /// [`Qemu::rollback`], then waits for the task.
        rollback_and_wait => rollback(node: &str, vmid: u32, snapname: &str, start: bool);
        /// [`Qemu::delsnapshot`], then waits for the task.
        delsnapshot_and_wait => delsnapshot(node: &str, vmid: u32, snapname: &str, force: bool);
    }
}

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

/// Which generated cloud-init file `cloudinit_generated_config_dump`
/// reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloudInitDump {
    /// `user-data`.
    User,
    /// `network-config`.
    Network,
    /// `meta-data`.
    Meta,
}

impl CloudInitDump {
    /// PVE's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Network => "network",
            Self::Meta => "meta",
        }
    }
}

/// The span of `rrddata`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timeframe {
    /// The last hour (one point a minute).
    Hour,
    /// The last day.
    Day,
    /// The last week.
    Week,
    /// The last month.
    Month,
    /// The last year.
    Year,
}

impl Timeframe {
    /// PVE's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hour => "hour",
            Self::Day => "day",
            Self::Week => "week",
            Self::Month => "month",
            Self::Year => "year",
        }
    }
}

/// The consolidation of `rrddata`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consolidation {
    /// Averages (PVE's default).
    Average,
    /// Maxima.
    Max,
}

impl Consolidation {
    /// PVE's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Average => "AVERAGE",
            Self::Max => "MAX",
        }
    }
}

/// One point of `GET .../rrddata` (`rrddata`); a field is `None` where
/// the RRD has no value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RrdPoint {
    /// Epoch seconds.
    #[serde(deserialize_with = "de::i64_lenient")]
    pub time: i64,
    /// CPU use, a fraction of `maxcpu`.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub cpu: Option<f64>,
    /// CPUs.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub maxcpu: Option<f64>,
    /// Memory in use, bytes.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub mem: Option<f64>,
    /// Memory, bytes.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub maxmem: Option<f64>,
    /// Disk in use, bytes.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub disk: Option<f64>,
    /// Disk size, bytes.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub maxdisk: Option<f64>,
    /// Network in, bytes/s.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub netin: Option<f64>,
    /// Network out, bytes/s.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub netout: Option<f64>,
    /// Disk reads, bytes/s.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub diskread: Option<f64>,
    /// Disk writes, bytes/s.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub diskwrite: Option<f64>,
    /// Anything else (`memhost`, `pressure*`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
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

    /// `PUT .../sendkey` (`vm_sendkey`): a key press (`ctrl-alt-delete`).
    ///
    /// # Errors
    /// `VM 100 not running`.
    pub async fn vm_sendkey(&self, node: &str, vmid: u32, key: &str, skiplock: bool) -> Result<()> {
        let params = Params::new()
            .set("key", key)
            .opt("skiplock", skiplock.then_some(true));
        let _: Value = self
            .client
            .call(Method::PUT, &vm_path(node, vmid, "/sendkey"), &params)
            .await?;
        Ok(())
    }

    /// `GET .../cloudinit` (`cloudinit_pending`): the cloud-init keys
    /// with their value in the generated image (`value`) and the one it
    /// will get (`pending`, or `delete`).
    ///
    /// # Errors
    /// As [`Qemu::vm_config`].
    pub async fn cloudinit_pending(&self, node: &str, vmid: u32) -> Result<Vec<PendingItem>> {
        self.client
            .call(
                Method::GET,
                &vm_path(node, vmid, "/cloudinit"),
                &Params::new(),
            )
            .await
    }

    /// `PUT .../cloudinit` (`cloudinit_update`): regenerates the
    /// cloud-init drive with the pending values.
    ///
    /// # Errors
    /// A lock (`VM is locked (backup)`).
    pub async fn cloudinit_update(&self, node: &str, vmid: u32) -> Result<()> {
        let _: Value = self
            .client
            .call(
                Method::PUT,
                &vm_path(node, vmid, "/cloudinit"),
                &Params::new(),
            )
            .await?;
        Ok(())
    }

    /// `GET .../cloudinit/dump` (`cloudinit_generated_config_dump`): the
    /// generated `user-data`, `network-config` or `meta-data`.
    ///
    /// # Errors
    /// As [`Qemu::vm_config`].
    pub async fn cloudinit_generated_config_dump(
        &self,
        node: &str,
        vmid: u32,
        kind: CloudInitDump,
    ) -> Result<String> {
        let params = Params::new().set("type", kind.as_str());
        self.client
            .call(
                Method::GET,
                &vm_path(node, vmid, "/cloudinit/dump"),
                &params,
            )
            .await
    }

    /// `GET .../rrddata` (`rrddata`): the VM's statistics over
    /// `timeframe`, oldest first.
    ///
    /// # Errors
    /// As [`Qemu::vm_config`].
    pub async fn rrddata(
        &self,
        node: &str,
        vmid: u32,
        timeframe: Timeframe,
        cf: Option<Consolidation>,
    ) -> Result<Vec<RrdPoint>> {
        let params = Params::new()
            .set("timeframe", timeframe.as_str())
            .opt("cf", cf.map(Consolidation::as_str));
        self.client
            .call(Method::GET, &vm_path(node, vmid, "/rrddata"), &params)
            .await
    }

    and_wait! {
        /// [`Qemu::resize_vm`], then waits for the task.
        resize_vm_and_wait => resize_vm(node: &str, vmid: u32, req: &ResizeVm);
        /// [`Qemu::move_vm_disk`], then waits for the task.
        move_vm_disk_and_wait => move_vm_disk(node: &str, vmid: u32, req: &MoveDisk);
        /// [`Qemu::migrate_vm`], then waits for the task.
        migrate_vm_and_wait => migrate_vm(node: &str, vmid: u32, req: &MigrateVm);
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
