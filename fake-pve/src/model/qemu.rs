//! QEMU guests: config with pending changes and digests, creation with
//! disk allocation, power state and its tasks, destruction (qemu-server
//! `API2/Qemu.pm`, `QemuServer.pm`, `QemuConfig.pm`; pve-guest-common
//! `AbstractConfig.pm`).
//!
//! A config is kept as PVE keeps it: key to text, in canonical form
//! (property strings printed in PVE's order, MACs generated, disks
//! allocated). Requests check what PVE checks synchronously and hand the
//! rest to a task ([`QemuOp`]), whose effect runs when the task ends.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::cluster::Cluster;
use super::storage::{VolumeKind, parse_volid, path_based};
use super::tasks::{TaskEffect, Worker};
use super::{Context, Error, PveVersion, Result};
use crate::spec::{Format, Prop, propstring};

mod clone;
mod cloudinit;
mod feature;
mod migrate;
mod move_disk;
mod resize;
pub(crate) mod rrd;
mod snapshot;

pub use clone::CloneRequest;
pub use migrate::{MigrateJob, MigrateRequest, StorageMap};
pub use move_disk::{MoveJob, ReassignJob};
pub use resize::ResizeJob;

/// Whether a guest's process runs (`status` in PVE's answers).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VmStatus {
    /// No process.
    #[default]
    Stopped,
    /// The process runs (also when QEMU has paused the guest).
    Running,
}

impl VmStatus {
    /// `stopped` or `running`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stopped => "stopped",
            Self::Running => "running",
        }
    }

    /// Parses `stopped` or `running`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "stopped" => Some(Self::Stopped),
            "running" => Some(Self::Running),
            _ => None,
        }
    }
}

impl std::fmt::Display for VmStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// QEMU's run state where it differs from [`VmStatus`] (`qmpstatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QmpStatus {
    /// `qm suspend` without `todisk`: the process runs, the guest does not.
    Paused,
}

impl QmpStatus {
    /// `paused`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Paused => "paused",
        }
    }
}

/// One emulated VM.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Vm {
    /// The VMID.
    pub vmid: u32,
    /// The node that holds its config.
    pub node: String,
    /// Whether its process runs.
    pub status: VmStatus,
    /// The current configuration, key by key, as PVE stores it.
    pub config: BTreeMap<String, String>,
    /// `[PENDING]` values.
    #[serde(default)]
    pub pending: BTreeMap<String, String>,
    /// Pending deletions; `true` when forced (`delete: !key`).
    #[serde(default)]
    pub pending_delete: BTreeMap<String, bool>,
    /// The QMP run state when it differs from `status` (`paused`).
    #[serde(default)]
    pub qmpstatus: Option<QmpStatus>,
    /// When the QEMU process started, epoch milliseconds.
    #[serde(default)]
    pub started_ms: Option<i64>,
    /// Snapshot sections by name.
    #[serde(default)]
    pub snapshots: BTreeMap<String, BTreeMap<String, String>>,
    /// The flock on `/var/lock/qemu-server/lock-<vmid>.conf` that running
    /// tasks hold (a clone holds it for its whole run).
    #[serde(default)]
    pub flock: FileLock,
    /// The `[special:cloudinit]` section: values the generated cloud-init
    /// drive still holds for options changed on the running VM, and
    /// `added` for options it lacks.
    #[serde(default)]
    pub ci_changes: BTreeMap<String, String>,
}

/// Holders of a VM's config file lock (`lock_config_full`,
/// `lock_config_shared`), distinct from the `lock:` key of the config.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileLock {
    /// Shared holders (clones of a stopped VM).
    pub shared: u32,
    /// An exclusive holder (a clone of a running VM).
    pub exclusive: bool,
}

impl FileLock {
    /// Whether anybody holds it.
    pub fn held(&self) -> bool {
        self.exclusive || self.shared > 0
    }
}

/// `lock_file_full`'s timeout: `can't lock file '...' - got timeout`.
pub fn lock_timeout(vmid: u32) -> String {
    format!("can't lock file '/var/lock/qemu-server/lock-{vmid}.conf' - got timeout")
}

impl Vm {
    /// A VM with a config and nothing pending.
    pub fn new(vmid: u32, node: &str, status: VmStatus, config: BTreeMap<String, String>) -> Self {
        Self {
            vmid,
            node: node.to_string(),
            status,
            config,
            pending: BTreeMap::new(),
            pending_delete: BTreeMap::new(),
            qmpstatus: None,
            started_ms: None,
            snapshots: BTreeMap::new(),
            flock: FileLock::default(),
            ci_changes: BTreeMap::new(),
        }
    }

    /// Whether the VM runs (paused counts as running).
    pub fn running(&self) -> bool {
        self.status == VmStatus::Running
    }

    /// Whether it is paused.
    pub fn paused(&self) -> bool {
        self.running() && self.qmpstatus == Some(QmpStatus::Paused)
    }

    /// Configured memory in bytes (`memory` is in MiB, default 512).
    pub fn maxmem(&self) -> u64 {
        let mib = self
            .config
            .get("memory")
            .and_then(|m| m.split(',').next())
            .and_then(|m| m.trim_start_matches("current=").parse::<u64>().ok())
            .unwrap_or(512);
        mib * 1024 * 1024
    }

    /// Configured vCPUs: sockets × cores (defaults 1), or `vcpus`.
    pub fn maxcpu(&self) -> u64 {
        let get = |k: &str| {
            self.config
                .get(k)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(1)
        };
        self.config
            .get("vcpus")
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| get("sockets") * get("cores"))
    }

    /// Whether the VM is a template.
    pub fn template(&self) -> bool {
        self.config.get("template").is_some_and(|t| t == "1")
    }

    /// The config lock, if any.
    pub fn lock(&self) -> Option<&str> {
        self.config.get("lock").map(String::as_str)
    }

    /// `check_lock`: `VM is locked (<lock>)`.
    ///
    /// # Errors
    /// When a lock is set.
    pub fn check_lock(&self) -> Result<()> {
        match self.lock() {
            Some(l) => Err(Error::locked(format!("VM is locked ({l})"))),
            None => Ok(()),
        }
    }

    /// The config with pending values applied, as GET config shows it.
    pub fn effective(&self) -> BTreeMap<String, String> {
        let mut c = self.config.clone();
        for k in self.pending_delete.keys() {
            c.remove(k);
        }
        c.extend(self.pending.clone());
        c
    }

    /// The config file as PVE writes it (`write_vm_config`).
    pub fn config_text(&self) -> String {
        fn section(conf: &BTreeMap<String, String>, pending: bool) -> String {
            let mut raw = String::new();
            if let Some(d) = conf.get("description") {
                if d.is_empty() {
                    if pending {
                        raw.push_str("#\n");
                    }
                } else {
                    for line in d.split('\n') {
                        raw.push('#');
                        raw.push_str(&encode_text(line));
                        raw.push('\n');
                    }
                }
            }
            for (k, v) in conf {
                if k == "description" || k == "digest" {
                    continue;
                }
                raw.push_str(&format!("{k}: {v}\n"));
            }
            raw
        }
        let mut raw = section(&self.config, false);
        if !self.pending.is_empty() || !self.pending_delete.is_empty() {
            let mut p = self.pending.clone();
            if !self.pending_delete.is_empty() {
                let list: Vec<String> = self
                    .pending_delete
                    .iter()
                    .map(|(k, force)| if *force { format!("!{k}") } else { k.clone() })
                    .collect();
                p.insert("delete".into(), list.join(","));
            }
            raw.push_str("\n[PENDING]\n");
            raw.push_str(&section(&p, true));
        }
        if !self.ci_changes.is_empty() && cloudinit::has_cloudinit(&self.config) {
            raw.push_str("\n[special:cloudinit]\n");
            raw.push_str(&section(&self.ci_changes, false));
        }
        for (name, snap) in &self.snapshots {
            raw.push_str(&format!("\n[{name}]\n"));
            raw.push_str(&section(snap, false));
        }
        raw
    }

    /// The SHA-1 of the config text, as GET config's `digest`.
    pub fn digest(&self) -> String {
        sha1_hex(self.config_text().as_bytes())
    }

    /// The hotplug features in force (`network,disk,usb` by default).
    fn hotplug(&self) -> BTreeSet<String> {
        let v = self
            .config
            .get("hotplug")
            .map_or("network,disk,usb", String::as_str);
        match v {
            "1" => ["network", "disk", "usb"].map(String::from).into(),
            "0" => BTreeSet::new(),
            other => other.split(',').map(str::to_string).collect(),
        }
    }
}

/// PVE's `encode_text` for description lines.
fn encode_text(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == '%' || (c as u32) < 0x20 || c as u32 == 0x7f {
                format!("%{:02X}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// SHA-1 (FIPS 180-1), for config digests.
pub fn sha1_hex(data: &[u8]) -> String {
    let mut h: [u32; 5] = [
        0x6745_2301,
        0xEFCD_AB89,
        0x98BA_DCFE,
        0x1032_5476,
        0xC3D2_E1F0,
    ];
    let mut msg = data.to_vec();
    let bits = (data.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bits.to_be_bytes());
    for chunk in msg.chunks(64) {
        let mut w = [0u32; 80];
        for (i, word) in chunk.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A82_7999),
                20..=39 => (b ^ c ^ d, 0x6ED9_EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC),
                _ => (b ^ c ^ d, 0xCA62_C1D6),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}

// ---------------------------------------------------------------------
// The schema of config keys

/// Parameters of `create_vm` that are not config keys.
const CREATE_ONLY: &[&str] = &[
    "node",
    "vmid",
    "archive",
    "bwlimit",
    "force",
    "pool",
    "start",
    "storage",
    "unique",
    "live-restore",
    "import-working-storage",
    "ha-managed",
];

/// Config keys that are not in the create schema but appear in configs.
const INTERNAL_KEYS: &[&str] = &[
    "meta",
    "parent",
    "snaptime",
    "vmstate",
    "runningmachine",
    "runningcpu",
    "running-nets-host-mtu",
];

fn config_props(version: PveVersion) -> Option<&'static BTreeMap<String, Prop>> {
    crate::spec::spec(version)
        .endpoint("POST", "/nodes/{node}/qemu")
        .map(|e| &e.parameters.properties)
}

/// The schema of a config key (`net0` → `net[n]`).
pub fn config_prop(version: PveVersion, key: &str) -> Option<&'static Prop> {
    if CREATE_ONLY.contains(&key) {
        return None;
    }
    let props = config_props(version)?;
    if let Some(p) = props.get(key) {
        return Some(p);
    }
    let base = key.trim_end_matches(|c: char| c.is_ascii_digit());
    if base.len() == key.len() || base.is_empty() {
        return None;
    }
    let idx: u32 = key[base.len()..].parse().ok()?;
    if key[base.len()..].starts_with('0') && key.len() - base.len() > 1 {
        return None;
    }
    let p = props.get(&format!("{base}[n]"))?;
    match p.max_index {
        Some(count) if idx >= count => None,
        _ => Some(p),
    }
}

/// `option_exists`: whether `key` is a config option.
pub fn option_exists(version: PveVersion, key: &str) -> bool {
    config_prop(version, key).is_some() || INTERNAL_KEYS.contains(&key)
}

fn object_format(p: &Prop) -> Option<&BTreeMap<String, Prop>> {
    match &p.format {
        Some(Format::Object(f)) => Some(f),
        _ => None,
    }
}

/// Drive keys (`is_valid_drivename`), in PVE's order of allocation.
pub fn is_drive_key(key: &str) -> bool {
    if key == "efidisk0" || key == "tpmstate0" {
        return true;
    }
    let base = key.trim_end_matches(|c: char| c.is_ascii_digit());
    base.len() < key.len() && matches!(base, "ide" | "sata" | "scsi" | "virtio")
}

fn drive_order(key: &str) -> (u8, u32) {
    let base = key.trim_end_matches(|c: char| c.is_ascii_digit());
    let n = key[base.len()..].parse().unwrap_or(0);
    let rank = match base {
        "ide" => 0,
        "sata" => 1,
        "scsi" => 2,
        "virtio" => 3,
        "efidisk" => 4,
        "tpmstate" => 5,
        _ => 6,
    };
    (rank, n)
}

/// The volume (`file`) of a drive value.
pub fn drive_file(value: &str) -> &str {
    for part in value.split(',') {
        match part.split_once('=') {
            None => return part,
            Some(("file" | "volume", v)) => return v,
            _ => {}
        }
    }
    ""
}

fn drive_is_cdrom(value: &str) -> bool {
    value.split(',').any(|p| p == "media=cdrom") || drive_file(value) == "cdrom"
}

/// `STORAGE:SIZE` or `SIZE`: a new disk of SIZE GiB.
fn new_disk(file: &str) -> Option<(Option<&str>, f64)> {
    let (sid, size) = match file.split_once(':') {
        Some((s, n)) => (Some(s), n),
        None => (None, file),
    };
    if sid.is_some_and(|s| s.is_empty() || s.contains('/') || s.contains(char::is_whitespace)) {
        return None;
    }
    let mut parts = size.splitn(2, '.');
    let int = parts.next()?;
    let frac = parts.next();
    if int.is_empty()
        || !int.bytes().all(|c| c.is_ascii_digit())
        || frac.is_some_and(|f| f.is_empty() || !f.bytes().all(|c| c.is_ascii_digit()))
    {
        return None;
    }
    Some((sid, size.parse().ok()?))
}

/// Bytes as qemu-img's progress prints them (`8.0 GiB`).
fn qemu_clone_bytes(bytes: u64) -> String {
    clone::render_bytes1(bytes)
}

/// `STORAGE:cloudinit` or `cloudinit`.
fn cloudinit_storage(file: &str) -> Option<Option<&str>> {
    match file.split_once(':') {
        Some((s, "cloudinit")) => Some(Some(s)),
        None if file == "cloudinit" => Some(None),
        _ => None,
    }
}

fn random_mac(rq: &mut Context) -> String {
    let b = rq.next_u64().to_le_bytes();
    format!("BC:24:11:{:02X}:{:02X}:{:02X}", b[0], b[1], b[2])
}

fn uuid(rq: &mut Context) -> String {
    rq.uuid_v4()
}

/// Cloud-init options, applied at once even on a running VM.
fn is_cloudinit_option(key: &str) -> bool {
    matches!(
        key,
        "ciuser"
            | "cipassword"
            | "citype"
            | "ciupgrade"
            | "cicustom"
            | "nameserver"
            | "searchdomain"
            | "sshkeys"
    ) || key.starts_with("ipconfig")
}

/// Normalises a value to the form PVE writes: property strings in
/// canonical order, booleans as 0/1, tags de-duplicated and sorted.
///
/// # Errors
/// 400 with the property-string error.
pub fn canonical(version: PveVersion, key: &str, value: &str) -> Result<String> {
    canonical_inner(version, key, value, None)
}

/// As [`canonical`], and a new NIC without `macaddr` gets a generated
/// one (PVE's `BC:24:11` prefix), drawn from the request's context.
///
/// # Errors
/// As [`canonical`].
pub fn canonical_new(
    version: PveVersion,
    key: &str,
    value: &str,
    rq: &mut Context,
) -> Result<String> {
    canonical_inner(version, key, value, Some(rq))
}

fn canonical_inner(
    version: PveVersion,
    key: &str,
    value: &str,
    rq: Option<&mut Context>,
) -> Result<String> {
    let Some(prop) = config_prop(version, key) else {
        return Ok(value.to_string());
    };
    if key == "tags" {
        let mut tags: Vec<&str> = value
            .split([';', ',', ' '])
            .filter(|t| !t.is_empty())
            .collect();
        tags.sort_unstable();
        tags.dedup();
        return Ok(tags.join(";"));
    }
    if prop.kind.as_deref() == Some("boolean") {
        return Ok(match propstring::parse_boolean(value) {
            Some(true) => "1".into(),
            Some(false) => "0".into(),
            None => value.to_string(),
        });
    }
    let Some(format) = object_format(prop) else {
        return Ok(value.to_string());
    };
    let mut parsed = propstring::parse(format, value)
        .map_err(|e| Error::invalid(key, e.trim_end().to_string()))?;
    if let Some(rq) = rq
        && key.starts_with("net")
        && !parsed.contains_key("macaddr")
    {
        parsed.insert("macaddr".into(), random_mac(rq));
    }
    Ok(propstring::print(format, &parsed))
}

fn drive_with(
    version: PveVersion,
    key: &str,
    value: &str,
    set: &[(&str, &str)],
    drop: &[&str],
) -> String {
    let Some(format) = config_prop(version, key).and_then(object_format) else {
        return value.to_string();
    };
    let Ok(mut parsed) = propstring::parse(format, value) else {
        return value.to_string();
    };
    for k in drop {
        parsed.remove(*k);
    }
    for (k, v) in set {
        parsed.insert((*k).to_string(), (*v).to_string());
    }
    propstring::print(format, &parsed)
}

/// A config value as GET config types it: integers and booleans as
/// numbers, everything else as a string.
pub fn typed(version: PveVersion, key: &str, value: &str) -> Value {
    let kind = config_prop(version, key).and_then(|p| p.kind.as_deref());
    match kind {
        Some("integer" | "boolean") => value
            .parse::<i64>()
            .map_or_else(|_| json!(value), |n| json!(n)),
        _ => json!(value),
    }
}

/// The QEMU version a release ships (`kvm --version`).
pub fn qemu_version(version: PveVersion) -> &'static str {
    match version {
        PveVersion::V8_4 => "9.2.0",
        PveVersion::V9_1 => "10.1.2",
    }
}

fn machine_version(version: PveVersion) -> &'static str {
    match version {
        PveVersion::V8_4 => "9.2",
        PveVersion::V9_1 => "10.1",
    }
}

fn running_machine(version: PveVersion, conf: &BTreeMap<String, String>) -> String {
    let machine = conf
        .get("machine")
        .map_or("", |m| m.split(',').next().unwrap_or(""));
    if machine.starts_with("pc-") {
        return machine.to_string();
    }
    let kind = if machine.contains("q35") {
        "q35"
    } else {
        "i440fx"
    };
    format!("pc-{kind}-{}+pve0", machine_version(version))
}

fn is_windows(ostype: Option<&String>) -> bool {
    ostype.is_some_and(|o| o.starts_with('w'))
}

// ---------------------------------------------------------------------
// Requests and task effects

/// The identities a new VM gets: its SMBIOS UUID and `vmgenid`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateIds {
    /// `smbios1: uuid=...`, unless the request gave one.
    pub smbios_uuid: String,
    /// `vmgenid`, unless the request gave one (or `0`).
    pub vmgenid: String,
}

impl CreateIds {
    /// These, or (for a task saved before they were drawn up front)
    /// identities drawn from the VMID and the time.
    fn or_drawn(self, vmid: u32, now: i64) -> Self {
        if !self.smbios_uuid.is_empty() {
            return self;
        }
        let mut rq = Context::new(now.saturating_mul(1000), u64::from(vmid));
        Self {
            smbios_uuid: uuid(&mut rq),
            vmgenid: uuid(&mut rq),
        }
    }
}

/// A `qmcreate` task's plan, as [`QemuOp::Create`] holds it.
struct CreateJob {
    config: BTreeMap<String, String>,
    storage: Option<String>,
    start: Option<(String, u64)>,
    ids: CreateIds,
}

/// What a VM task does when it ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum QemuOp {
    /// `qmcreate`: allocate disks, write the config, maybe start.
    Create {
        /// Config keys as requested (drives not yet allocated).
        config: BTreeMap<String, String>,
        /// The default storage for `SIZE` disks.
        storage: Option<String>,
        /// Start afterwards: as whom and how long that start takes.
        start: Option<(String, u64)>,
        /// The generated identities of the new VM.
        #[serde(default)]
        ids: CreateIds,
    },
    /// `qmstart` (also `qmresume` of a hibernated VM).
    Start {
        /// Skip the lock check.
        skiplock: bool,
    },
    /// `qmstop`.
    Stop {
        /// Skip the lock check.
        skiplock: bool,
    },
    /// `qmshutdown`.
    Shutdown {
        /// Stop hard when the guest does not react.
        force_stop: bool,
        /// Seconds to wait.
        timeout: u64,
        /// Skip the shutdown because the VM is paused (forceStop).
        hard: bool,
    },
    /// `qmreboot`.
    Reboot,
    /// `qmreset`.
    Reset {
        /// Skip the lock check.
        skiplock: bool,
    },
    /// `qmpause` or (`todisk`) `qmsuspend`.
    Suspend {
        /// Skip the lock check.
        skiplock: bool,
        /// Hibernate to this storage.
        todisk: Option<String>,
    },
    /// `qmresume`.
    Resume {
        /// Skip the lock check.
        skiplock: bool,
    },
    /// `qmdestroy`.
    Destroy {
        /// Skip the lock check.
        skiplock: bool,
        /// Log the purge.
        purge: bool,
        /// Also free unreferenced volumes of this VMID.
        unreferenced: bool,
    },
    /// `qmconfig`: a config update.
    Config(ConfigUpdate),
    /// `qmclone`: copy the disks and write the target's config.
    Clone(Box<clone::CloneJob>),
    /// `qmtemplate`: base volumes and `template: 1`.
    Template {
        /// Only this disk.
        disk: Option<String>,
    },
    /// `qmsnapshot`: commit the prepared snapshot.
    Snapshot {
        /// The snapshot.
        name: String,
    },
    /// `qmrollback`: make the snapshot's config current.
    Rollback {
        /// The snapshot.
        name: String,
        /// Start afterwards.
        start: bool,
        /// The new `vmgenid` (when the snapshot has one), drawn by the
        /// request.
        #[serde(default)]
        vmgenid: String,
    },
    /// `qmdelsnapshot`: remove the snapshot.
    DeleteSnapshot {
        /// The snapshot.
        name: String,
    },
    /// `resize`: grow a disk.
    Resize(Box<ResizeJob>),
    /// `qmmove`: move a disk to another storage.
    MoveDisk(Box<MoveJob>),
    /// `qmmove` with `target-vmid`: give a disk to another VM.
    Reassign(Box<ReassignJob>),
    /// `qmigrate`: move the VM to another node.
    Migrate(Box<MigrateJob>),
}

/// A config update as PUT/POST config ask for it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigUpdate {
    /// New values, by key (already checked and canonical).
    pub set: BTreeMap<String, String>,
    /// Keys to delete.
    pub delete: Vec<String>,
    /// Keys whose pending change to drop.
    pub revert: Vec<String>,
    /// Delete volumes instead of making them unused.
    pub force: bool,
    /// Skip the lock check (root@pam only).
    pub skiplock: bool,
    /// The expected digest.
    pub digest: Option<String>,
    /// The `update VM N: ...` log line.
    pub log: String,
}

/// What a create request asks for.
#[derive(Debug, Clone, Default)]
pub struct CreateRequest {
    /// The VMID.
    pub vmid: u32,
    /// The node.
    pub node: String,
    /// Config keys.
    pub config: BTreeMap<String, String>,
    /// Default storage.
    pub storage: Option<String>,
    /// `start=1`: as whom and for how long.
    pub start: Option<(String, u64)>,
}

type Lines = Vec<String>;
/// Printed drives by key, and the volids allocated for them.
type Created = (BTreeMap<String, String>, Vec<String>);
/// The result of a task effect: log lines, or log lines and the error.
pub type EffectResult = std::result::Result<Lines, (Lines, String)>;

fn config_missing(node: &str, vmid: u32) -> Error {
    Error::not_found(format!(
        "Configuration file 'nodes/{node}/qemu-server/{vmid}.conf' does not exist"
    ))
}

impl Cluster {
    /// The VM `vmid` as seen from `node` (its config must be there).
    ///
    /// # Errors
    /// `Configuration file 'nodes/<node>/qemu-server/<vmid>.conf' does not
    /// exist`.
    pub fn vm(&self, node: &str, vmid: u32) -> Result<&Vm> {
        self.guests
            .get(&vmid)
            .filter(|v| v.node == node)
            .ok_or_else(|| config_missing(node, vmid))
    }

    fn vm_mut(&mut self, node: &str, vmid: u32) -> Result<&mut Vm> {
        self.guests
            .get_mut(&vmid)
            .filter(|v| v.node == node)
            .ok_or_else(|| config_missing(node, vmid))
    }

    /// `check_running`'s refusal for a VM whose config is elsewhere.
    ///
    /// # Errors
    /// `unable to find configuration file for VM N on node 'x'`.
    pub fn vm_on_node(&self, node: &str, vmid: u32) -> Result<&Vm> {
        self.guests
            .get(&vmid)
            .filter(|v| v.node == node)
            .ok_or_else(|| {
                Error::not_found(format!(
                    "unable to find configuration file for VM {vmid} on node '{node}'"
                ))
            })
    }

    /// The synchronous part of `create_vm`: refuses what PVE refuses
    /// before forking, then creates the config with `lock: create` and
    /// answers the task's worker.
    ///
    /// # Errors
    /// An existing VMID, unknown storages, storages without `images`.
    pub fn create_vm(&mut self, mut req: CreateRequest, rq: &mut Context) -> Result<Worker> {
        let vmid = req.vmid;
        if let Some(v) = self.guests.get(&vmid) {
            return Err(Error::exists(format!(
                "unable to create VM {vmid} - VM {vmid} already exists on node '{}'",
                v.node
            )));
        }
        if let Some(cd) = req.config.remove("cdrom") {
            req.config
                .insert("ide2".into(), format!("{cd},media=cdrom"));
        }
        self.check_storage_access(&req.config, req.storage.as_deref())?;
        // `import-from` needs `<storage>:0` (qemu-server API2/Qemu.pm,
        // check_drive_param).
        for (k, v) in &req.config {
            if is_drive_key(k) && v.split(',').any(|p| p.starts_with("import-from=")) {
                let file = v.split(',').next().unwrap_or_default();
                if new_disk(file).is_none_or(|(_, size)| size != 0.0) {
                    return Err(Error::invalid(
                        k.clone(),
                        "'import-from' requires special syntax - use <storage ID>:0,import-from=<source>",
                    ));
                }
            }
        }
        let version = self.version;
        for (k, v) in &mut req.config {
            if !is_drive_key(k) {
                *v = canonical_new(version, k, v, rq)?;
            }
        }
        // The identities the VM gets when its task ends, drawn now so
        // that a replay of this request gives the same ones.
        let ids = CreateIds {
            smbios_uuid: uuid(rq),
            vmgenid: uuid(rq),
        };
        let mut lock = BTreeMap::new();
        lock.insert("lock".to_string(), "create".to_string());
        self.guests
            .insert(vmid, Vm::new(vmid, &req.node, VmStatus::Stopped, lock));
        Ok(
            Worker::new("qmcreate", &vmid.to_string()).effect(TaskEffect::Qemu {
                vmid,
                op: QemuOp::Create {
                    config: req.config,
                    storage: req.storage,
                    start: req.start,
                    ids,
                },
            }),
        )
    }

    /// `check_storage_access`: new disks need an existing storage with
    /// `images` content.
    fn check_storage_access(
        &self,
        conf: &BTreeMap<String, String>,
        default_storage: Option<&str>,
    ) -> Result<()> {
        for (k, v) in conf {
            if !is_drive_key(k) || drive_is_cdrom(v) {
                continue;
            }
            let file = drive_file(v);
            if cloudinit_storage(file).is_some() {
                continue;
            }
            if let Some((sid, _)) = new_disk(file) {
                let Some(sid) = sid.or(default_storage) else {
                    return Err(Error::failed(
                        "no storage ID specified (and no default storage)",
                    ));
                };
                let s = self.storage(sid)?;
                if !s.content.iter().any(|c| c == "images") {
                    return Err(Error::invalid(
                        "storage",
                        format!("storage '{sid}' does not support vm images"),
                    ));
                }
            } else if let Some((sid, _)) = parse_volid(file) {
                self.storage(sid)?;
            }
        }
        Ok(())
    }

    /// Allocates the new disks among `drives`, as `create_disks` does;
    /// answers the printed drives and the allocated volids.
    #[allow(clippy::too_many_arguments)]
    fn create_disks(
        &mut self,
        vmid: u32,
        node: &str,
        drives: &BTreeMap<String, String>,
        default_storage: Option<&str>,
        existing: &BTreeMap<String, String>,
        now: i64,
        log: &mut Lines,
    ) -> std::result::Result<Created, (Lines, String)> {
        let version = self.version;
        let mut keys: Vec<&String> = drives.keys().filter(|k| is_drive_key(k)).collect();
        keys.sort_by_key(|k| drive_order(k));
        let mut out = BTreeMap::new();
        let mut vols = Vec::new();
        for key in keys {
            let value = &drives[key];
            let file = drive_file(value).to_string();
            let result: Result<String> = (|| {
                if file == "none" || file == "cdrom" || file.is_empty() {
                    return Ok(drive_with(version, key, value, &[], &["size"]));
                }
                if let Some(sid) = cloudinit_storage(&file) {
                    let sid = sid.or(default_storage).ok_or_else(|| {
                        Error::failed("no storage ID specified (and no default storage)")
                    })?;
                    if let Some(other) = existing
                        .iter()
                        .chain(out.iter())
                        .find(|(k, v)| *k != key && is_drive_key(k) && v.contains("-cloudinit"))
                    {
                        return Err(Error::exists(format!(
                            "{key} - cloud-init drive is already attached at '{}'",
                            other.0
                        )));
                    }
                    let fmt = if path_based(&self.storage(sid)?.kind) {
                        Some("qcow2")
                    } else {
                        None
                    };
                    let (volid, lines) = self.alloc_volume(
                        sid,
                        node,
                        vmid,
                        &VolumeKind::CloudInit,
                        fmt,
                        4 << 20,
                        now,
                    )?;
                    vols.push(volid.clone());
                    log.extend(lines);
                    let printed = drive_with(
                        version,
                        key,
                        value,
                        &[("file", &volid), ("media", "cdrom")],
                        &["format", "size"],
                    );
                    log.push(format!("{key}: successfully created disk '{printed}'"));
                    return Ok(printed);
                }
                if let Some((sid, gib)) = new_disk(&file) {
                    let sid = sid.or(default_storage).ok_or_else(|| {
                        Error::failed("no storage ID specified (and no default storage)")
                    })?;
                    let s = self.storage(sid)?;
                    let is_path = path_based(&s.kind);
                    let size = match key.as_str() {
                        "efidisk0" => {
                            let small = value.contains("efitype=2m");
                            match (is_path, small) {
                                (true, true) => 128 << 10,
                                (true, false) => 540_672,
                                (false, _) => 4 << 20,
                            }
                        }
                        "tpmstate0" => 4 << 20,
                        _ => (gib * f64::from(1u32 << 30)) as u64,
                    };
                    // `import-from`: the new volume takes the source's size
                    // and content (`import_from_volid` in API2/Qemu.pm).
                    let import = value
                        .split(',')
                        .find_map(|p| p.strip_prefix("import-from="))
                        .map(str::to_string);
                    let size = match &import {
                        None => size,
                        Some(src) => {
                            if src.contains("cloudinit") {
                                return Err(Error::failed(format!(
                                    "cannot import from '{src}' - cannot import from cloudinit disk"
                                )));
                            }
                            self.volume(src, node).map(|v| v.size).ok_or_else(|| {
                                Error::failed(format!(
                                    "cannot import from '{src}' - could not get size of {src}"
                                ))
                            })?
                        }
                    };
                    let fmt = value
                        .split(',')
                        .find_map(|p| p.strip_prefix("format="))
                        .map(str::to_string);
                    let (volid, lines) = self.alloc_volume(
                        sid,
                        node,
                        vmid,
                        &VolumeKind::Disk,
                        fmt.as_deref(),
                        size,
                        now,
                    )?;
                    vols.push(volid.clone());
                    log.extend(lines);
                    if import.is_some() {
                        let total = qemu_clone_bytes(size);
                        log.push(format!("transferred 0.0 B of {total} (0.00%)"));
                        log.push(format!("transferred {total} of {total} (100.00%)"));
                    }
                    let size_text = propstring::format_size(&size.to_string());
                    let printed = drive_with(
                        version,
                        key,
                        value,
                        &[("file", &volid), ("size", &size_text)],
                        &["format", "import-from"],
                    );
                    log.push(format!("{key}: successfully created disk '{printed}'"));
                    return Ok(printed);
                }
                // An existing volume or path: kept, with its size if known.
                let size = self.volume(&file, node).map(|v| v.size);
                Ok(match size {
                    Some(sz) if !drive_is_cdrom(value) => drive_with(
                        version,
                        key,
                        value,
                        &[("size", &propstring::format_size(&sz.to_string()))],
                        &[],
                    ),
                    _ => canonical(version, key, value)?,
                })
            })();
            match result {
                Ok(printed) => {
                    out.insert(key.clone(), printed);
                }
                Err(e) => {
                    let mut freed = Vec::new();
                    for v in &vols {
                        if let Some(lines) = self.free_volume(v, node) {
                            freed.extend(lines);
                        }
                    }
                    return Err((freed, e.to_string()));
                }
            }
        }
        Ok((out, vols))
    }

    /// Undoes what the start of a VM task did when the task fails without
    /// running its effect (an injected fault, `DELETE .../tasks/{upid}`).
    pub(crate) fn abort_qemu(&mut self, vmid: u32, op: &QemuOp) {
        match op {
            QemuOp::Clone(job) => self.abort_clone(vmid, job),
            QemuOp::Snapshot { name } => self.abort_snapshot(vmid, name),
            QemuOp::Migrate(_) => self.abort_migrate(vmid),
            _ => {}
        }
    }

    /// Applies the effect of a VM task that ended at `end_ms`.
    pub(crate) fn apply_qemu(&mut self, vmid: u32, op: QemuOp, end_ms: i64) -> EffectResult {
        let now = end_ms.div_euclid(1000);
        let node = match (self.guests.get(&vmid), &op) {
            (Some(v), _) => v.node.clone(),
            // PVE forks a resize before loading the config.
            (None, QemuOp::Resize(job)) => {
                return Err((vec![], config_missing(&job.node, vmid).to_string()));
            }
            (None, _) => return Err((vec![], format!("VM {vmid} does not exist"))),
        };
        let fail = |e: Error| (Vec::new(), e.to_string());
        let takes_flock = !matches!(op, QemuOp::Clone(_) | QemuOp::Create { .. });
        if takes_flock && self.guests.get(&vmid).is_some_and(|v| v.flock.held()) {
            return Err((vec!["trying to acquire lock...".into()], lock_timeout(vmid)));
        }
        match op {
            QemuOp::Clone(job) => self.finish_clone(vmid, *job, now),
            QemuOp::Template { disk } => self.finish_template(&node, vmid, disk.as_deref()),
            QemuOp::Snapshot { name } => self.commit_snapshot(&node, vmid, &name),
            QemuOp::Rollback {
                name,
                start,
                vmgenid,
            } => self.finish_rollback(&node, vmid, &name, start, vmgenid, end_ms),
            QemuOp::DeleteSnapshot { name } => self.finish_delete_snapshot(&node, vmid, &name),
            QemuOp::Resize(job) => self.finish_resize(vmid, &job),
            QemuOp::MoveDisk(job) => self.finish_move_disk(&node, vmid, &job, now),
            QemuOp::Reassign(job) => self.finish_reassign(vmid, &job, now),
            QemuOp::Migrate(job) => self.finish_migrate(&node, vmid, &job, now),
            QemuOp::Create {
                config,
                storage,
                start,
                ids,
            } => {
                let job = CreateJob {
                    config,
                    storage,
                    start,
                    ids,
                };
                self.finish_create(vmid, &node, job, now)
            }
            QemuOp::Start { skiplock } => self.power_on(vmid, skiplock, end_ms),
            QemuOp::Stop { skiplock } => {
                let vm = self.vm_mut(&node, vmid).map_err(fail)?;
                if !skiplock {
                    vm.check_lock().map_err(fail)?;
                }
                power_off(vm);
                Ok(vec![])
            }
            QemuOp::Shutdown {
                force_stop,
                timeout,
                hard,
            } => {
                let vm = self.vm_mut(&node, vmid).map_err(fail)?;
                vm.check_lock().map_err(fail)?;
                let mut lines = Vec::new();
                if hard {
                    lines.push("VM is paused - stop instead of shutdown".to_string());
                } else if vm.running() && vm.config.get("acpi").is_some_and(|a| a == "0") {
                    if !force_stop {
                        return Err((lines, "VM quit/powerdown failed - got timeout".to_string()));
                    }
                    let _ = timeout;
                    lines.push("VM still running - terminating now with SIGTERM".into());
                }
                power_off(vm);
                Ok(lines)
            }
            QemuOp::Reboot => {
                let vm = self.vm_mut(&node, vmid).map_err(fail)?;
                vm.check_lock().map_err(fail)?;
                if !vm.running() {
                    return Err((vec![], format!("VM {vmid} not running")));
                }
                power_off(vm);
                // `qm cleanup` starts it again in a task of its own, which
                // applies the pending changes.
                self.spawn_task(
                    &node,
                    Worker::new("qmstart", &vmid.to_string()).effect(TaskEffect::Qemu {
                        vmid,
                        op: QemuOp::Start { skiplock: false },
                    }),
                    "root@pam",
                    end_ms,
                    0,
                );
                Ok(vec![])
            }
            QemuOp::Reset { skiplock } => {
                let vm = self.vm_mut(&node, vmid).map_err(fail)?;
                if !skiplock {
                    vm.check_lock().map_err(fail)?;
                }
                if !vm.running() {
                    return Err((vec![], format!("VM {vmid} not running")));
                }
                vm.qmpstatus = None;
                Ok(vec![])
            }
            QemuOp::Suspend { skiplock, todisk } => {
                self.suspend(&node, vmid, skiplock, todisk.as_deref(), now)
            }
            QemuOp::Resume { skiplock } => {
                let vm = self.vm_mut(&node, vmid).map_err(fail)?;
                if vm.lock() == Some("suspended") {
                    return self.power_on(vmid, true, end_ms);
                }
                if !skiplock {
                    vm.check_lock().map_err(fail)?;
                }
                if !vm.running() {
                    return Err((vec![], format!("VM {vmid} not running")));
                }
                vm.qmpstatus = None;
                Ok(vec![])
            }
            QemuOp::Destroy {
                skiplock,
                purge,
                unreferenced,
            } => self.destroy(&node, vmid, skiplock, purge, unreferenced),
            QemuOp::Config(update) => {
                self.update_config(&node, vmid, &update, now)
                    .map_err(|(lines, e)| {
                        let msg = match &e {
                            Error::Invalid(map) => {
                                let mut s = "400 Parameter verification failed.".to_string();
                                for (k, v) in map {
                                    s.push_str(&format!("\n{k}: {v}"));
                                }
                                s
                            }
                            other => other.to_string(),
                        };
                        (lines, msg)
                    })
            }
        }
    }

    fn finish_create(&mut self, vmid: u32, node: &str, job: CreateJob, now: i64) -> EffectResult {
        let CreateJob {
            config,
            storage,
            start,
            ids,
        } = job;
        let storage = storage.as_deref();
        let emsg = format!("unable to create VM {vmid} -");
        let version = self.version;
        let mut log = Vec::new();
        let created = self.create_disks(
            vmid,
            node,
            &config,
            storage,
            &BTreeMap::new(),
            now,
            &mut log,
        );
        let (drives, _) = match created {
            Ok(d) => d,
            Err((freed, e)) => {
                log.extend(freed);
                self.guests.remove(&vmid);
                return Err((log, format!("{emsg} {e}")));
            }
        };
        let ids = ids.or_drawn(vmid, now);
        let mut conf = config;
        conf.extend(drives);
        conf.insert(
            "meta".into(),
            format!("creation-qemu={},ctime={now}", qemu_version(version)),
        );
        if !conf.contains_key("boot") {
            conf.insert("boot".into(), default_boot(&conf));
        }
        if !conf.contains_key("smbios1") {
            conf.insert("smbios1".into(), format!("uuid={}", ids.smbios_uuid));
        }
        if conf.get("vmgenid").is_none_or(|v| v == "1")
            && conf.get("arch").is_none_or(|a| a != "aarch64")
        {
            conf.insert("vmgenid".into(), ids.vmgenid);
        }
        if !conf.contains_key("machine") && is_windows(conf.get("ostype")) {
            let m = format!("pc-i440fx-{}+pve0", machine_version(version));
            log.push(format!(
                "pinning machine type to '{m}' for Windows guest OS"
            ));
            conf.insert("machine".into(), m);
        }
        if let Some(vm) = self.guests.get_mut(&vmid) {
            vm.config = conf;
        }
        if let Some((user, ms)) = start {
            log.push("Execute autostart".into());
            self.spawn_task(
                node,
                Worker::new("qmstart", &vmid.to_string()).effect(TaskEffect::Qemu {
                    vmid,
                    op: QemuOp::Start { skiplock: false },
                }),
                &user,
                now * 1000,
                ms,
            );
        }
        Ok(log)
    }

    /// `vm_start`: refusals, bridges, pending changes, then running.
    fn power_on(&mut self, vmid: u32, skiplock: bool, end_ms: i64) -> EffectResult {
        let Some(vm) = self.guests.get(&vmid) else {
            return Err((vec![], format!("VM {vmid} does not exist")));
        };
        if vm.template() {
            return Err((vec![], "you can't start a vm if it's a template".into()));
        }
        let hibernated = vm.lock() == Some("suspended");
        if !skiplock && !hibernated {
            vm.check_lock().map_err(|e| (vec![], e.to_string()))?;
        }
        if vm.running() {
            return Err((vec![], format!("VM {vmid} already running")));
        }
        let node = vm.node.clone();
        let bridges = self
            .nodes
            .iter()
            .find(|n| n.name == node)
            .map(|n| n.bridges.clone())
            .unwrap_or_default();
        let effective = vm.effective();
        for (k, v) in &effective {
            if !k.starts_with("net") || config_prop(self.version, k).is_none() {
                continue;
            }
            if let Some(b) = v.split(',').find_map(|p| p.strip_prefix("bridge="))
                && !bridges.iter().any(|x| x == b)
            {
                return Err((vec![], format!("bridge '{b}' does not exist")));
            }
        }
        let mut lines = Vec::new();
        if effective
            .iter()
            .any(|(k, v)| is_drive_key(k) && v.contains("-cloudinit"))
        {
            lines.push("generating cloud-init ISO".to_string());
        }
        self.apply_pending(vmid, &mut lines);
        // The start regenerates the cloud-init drive from the config.
        if let Some(vm) = self.guests.get_mut(&vmid) {
            vm.ci_changes.clear();
        }
        if hibernated {
            let state = self.guests.get_mut(&vmid).and_then(|vm| {
                vm.config.remove("lock");
                vm.config.remove("runningmachine");
                vm.config.remove("runningcpu");
                vm.config.remove("vmstate")
            });
            if let Some(volid) = state {
                self.free_volume(&volid, &node);
            }
        }
        if let Some(vm) = self.guests.get_mut(&vmid) {
            vm.status = VmStatus::Running;
            vm.qmpstatus = None;
            vm.started_ms = Some(end_ms);
        }
        Ok(lines)
    }

    fn suspend(
        &mut self,
        node: &str,
        vmid: u32,
        skiplock: bool,
        todisk: Option<&str>,
        now: i64,
    ) -> EffectResult {
        let version = self.version;
        let vm = self
            .vm_mut(node, vmid)
            .map_err(|e| (vec![], e.to_string()))?;
        if !skiplock {
            vm.check_lock().map_err(|e| (vec![], e.to_string()))?;
        }
        if !vm.running() {
            return Err((vec![], format!("VM {vmid} not running")));
        }
        let Some(sid) = todisk else {
            vm.qmpstatus = Some(QmpStatus::Paused);
            return Ok(vec![]);
        };
        let size = 2 * vm.maxmem() + (500 << 20);
        let machine = running_machine(version, &vm.config);
        let date = ymd(now);
        let (volid, mut lines) = self
            .alloc_volume(
                sid,
                node,
                vmid,
                &VolumeKind::State(format!("suspend-{date}")),
                None,
                size,
                now,
            )
            .map_err(|e| (vec![], e.to_string()))?;
        lines.push("suspend vm".into());
        if let Some(vm) = self.guests.get_mut(&vmid) {
            vm.config.insert("lock".into(), "suspended".into());
            vm.config.insert("vmstate".into(), volid);
            vm.config.insert("runningmachine".into(), machine);
            vm.config.insert(
                "runningcpu".into(),
                "kvm64,enforce,+kvm_pv_eoi,+kvm_pv_unhalt,+lahf_lm,+sep".into(),
            );
            power_off(vm);
        }
        Ok(lines)
    }

    fn destroy(
        &mut self,
        node: &str,
        vmid: u32,
        skiplock: bool,
        purge: bool,
        unreferenced: bool,
    ) -> EffectResult {
        let vm = self.vm(node, vmid).map_err(|e| (vec![], e.to_string()))?;
        if vm.config.get("protection").is_some_and(|p| p == "1") {
            return Err((
                vec![],
                format!("can't remove VM {vmid} - protection mode enabled"),
            ));
        }
        if vm.running() {
            return Err((vec![], format!("VM {vmid} is running - destroy failed")));
        }
        if !skiplock {
            vm.check_lock().map_err(|e| (vec![], e.to_string()))?;
        }
        let mut volids: Vec<String> = Vec::new();
        let confs = std::iter::once(&vm.config)
            .chain(std::iter::once(&vm.pending))
            .chain(vm.snapshots.values());
        for conf in confs {
            for (k, v) in conf {
                let file = if k.starts_with("unused") || k == "vmstate" {
                    v.as_str()
                } else if is_drive_key(k) {
                    drive_file(v)
                } else {
                    continue;
                };
                if self.volume(file, node).is_some_and(|x| x.vmid == vmid)
                    && !volids.iter().any(|x| x == file)
                {
                    volids.push(file.to_string());
                }
            }
        }
        if unreferenced {
            for s in self.storage.cfg().iter().filter(|s| s.active_on(node)) {
                for v in self
                    .storage
                    .volumes()
                    .on(s, node)
                    .filter(|v| v.vmid == vmid)
                {
                    let id = v.volid();
                    if !volids.contains(&id) {
                        volids.push(id);
                    }
                }
            }
        }
        let mut lines = Vec::new();
        for v in volids {
            if let Some(l) = self.free_volume(&v, node) {
                lines.extend(l);
            }
        }
        if purge {
            lines.push(format!("purging VM {vmid} from related configurations.."));
        }
        self.guests.remove(&vmid);
        Ok(lines)
    }

    /// Checks of an update that PVE makes before forking
    /// (`load_and_check_config`): digest and lock.
    ///
    /// # Errors
    /// `checksum mismatch (file change by other user?)`, `VM is locked`.
    pub fn check_update(&self, node: &str, vmid: u32, u: &ConfigUpdate) -> Result<()> {
        let vm = self.vm(node, vmid)?;
        if vm.flock.held() {
            return Err(Error::locked(lock_timeout(vmid)));
        }
        if let Some(d) = &u.digest
            && *d != vm.digest()
        {
            return Err(Error::conflict(
                "checksum mismatch (file change by other user?)",
            ));
        }
        if !u.skiplock {
            vm.check_lock()?;
        }
        let mem = u
            .set
            .get("memory")
            .or_else(|| vm.pending.get("memory"))
            .or_else(|| vm.config.get("memory"))
            .and_then(|m| m.split(',').next())
            .and_then(|m| m.trim_start_matches("current=").parse::<u64>().ok())
            .unwrap_or(512);
        if let Some(b) = u.set.get("balloon").and_then(|b| b.parse::<u64>().ok())
            && b > mem
        {
            return Err(Error::failed(
                "balloon value too large (must be smaller than assigned memory)",
            ));
        }
        Ok(())
    }

    /// `update_vm_api`'s work under the config lock: writes the changes as
    /// pending, then applies them (stopped) or hot-plugs what it can
    /// (running).
    ///
    /// # Errors
    /// The checks of [`Cluster::check_update`]; 400 for hotplug problems.
    pub fn update_config(
        &mut self,
        node: &str,
        vmid: u32,
        u: &ConfigUpdate,
        now: i64,
    ) -> std::result::Result<Lines, (Lines, Error)> {
        let mut log = vec![u.log.clone()];
        self.check_update(node, vmid, u)
            .map_err(|e| (log.clone(), e))?;
        let version = self.version;
        let mut set = u.set.clone();
        let mut delete = u.delete.clone();
        let (running, mut warns) = {
            let vm = self.vm(node, vmid).map_err(|e| (log.clone(), e))?;
            let mut warns = Vec::new();
            for k in &u.revert {
                if let Some(v) = vm.config.get(k) {
                    set.insert(k.clone(), v.clone());
                } else if vm.pending.contains_key(k) {
                    delete.push(k.clone());
                }
            }
            for k in &delete {
                if !vm.config.contains_key(k) && !vm.pending.contains_key(k) {
                    warns.push(format!(
                        "cannot delete '{k}' - not set in current configuration!"
                    ));
                }
            }
            (vm.running(), warns)
        };
        log.append(&mut warns);
        // Deletions.
        for k in &delete {
            let Some(vm) = self.guests.get_mut(&vmid) else {
                break;
            };
            let Some(val) = vm.config.get(k).or_else(|| vm.pending.get(k)).cloned() else {
                continue;
            };
            let was_pending = vm.pending.remove(k).is_some();
            let protected = vm.config.get("protection").is_some_and(|p| p == "1");
            if k.starts_with("unused") {
                if protected {
                    return Err((
                        log,
                        Error::conflict(format!(
                            "can't remove unused disk '{val}' - protection mode enabled"
                        )),
                    ));
                }
                vm.config.remove(k);
                if let Some(l) = self.free_volume(&val, node) {
                    log.extend(l);
                }
                continue;
            }
            if k == "tags" {
                vm.config.remove(k);
                continue;
            }
            if is_drive_key(k) {
                if protected {
                    return Err((
                        log,
                        Error::conflict(format!(
                            "can't remove drive '{k}' - protection mode enabled"
                        )),
                    ));
                }
                if was_pending {
                    // A pending drive that never became current: its
                    // volume becomes unused.
                    let file = drive_file(&val).to_string();
                    self.register_unused(node, vmid, &file);
                }
                if !self
                    .guests
                    .get(&vmid)
                    .is_some_and(|v| v.config.contains_key(k))
                {
                    continue;
                }
            }
            if let Some(vm) = self.guests.get_mut(&vmid)
                && vm.config.contains_key(k)
            {
                vm.pending_delete.insert(k.clone(), u.force);
            }
        }
        // Additions and changes.
        let mut drives: BTreeMap<String, String> = BTreeMap::new();
        for (k, v) in &set {
            if is_drive_key(k) {
                drives.insert(k.clone(), v.clone());
                continue;
            }
            if let Some(vm) = self.guests.get_mut(&vmid) {
                vm.pending.insert(k.clone(), v.clone());
                vm.pending_delete.remove(k);
            }
        }
        if !drives.is_empty() {
            let existing = self
                .guests
                .get(&vmid)
                .map(Vm::effective)
                .unwrap_or_default();
            let (created, _) = self
                .create_disks(vmid, node, &drives, None, &existing, now, &mut log)
                .map_err(|(lines, e)| {
                    let mut l = log.clone();
                    l.extend(lines);
                    (l, Error::failed(e))
                })?;
            for (k, v) in created {
                let old_pending = self
                    .guests
                    .get(&vmid)
                    .and_then(|vm| vm.pending.get(&k).cloned());
                if let Some(old) = old_pending {
                    let file = drive_file(&old).to_string();
                    if file != drive_file(&v) {
                        self.register_unused(node, vmid, &file);
                    }
                }
                if let Some(vm) = self.guests.get_mut(&vmid) {
                    vm.pending.insert(k.clone(), v);
                    vm.pending_delete.remove(&k);
                }
            }
        }
        // Drop pending values equal to the current ones.
        if let Some(vm) = self.guests.get_mut(&vmid) {
            let same: Vec<String> = vm
                .pending
                .iter()
                .filter(|(k, v)| vm.config.get(*k) == Some(*v))
                .map(|(k, _)| k.clone())
                .collect();
            for k in same {
                vm.pending.remove(&k);
            }
        }
        if running {
            self.hotplug_pending(vmid, &mut log)
                .map_err(|e| (log.clone(), e))?;
        } else {
            self.apply_pending(vmid, &mut log);
        }
        let _ = version;
        Ok(log)
    }

    /// Records a volume of the VM as the next free `unusedN`, unless the
    /// config still uses it.
    fn register_unused(&mut self, node: &str, vmid: u32, volid: &str) {
        if self.volume(volid, node).is_none_or(|v| v.vmid != vmid) {
            return;
        }
        if volid.contains("-cloudinit") {
            self.free_volume(volid, node);
            return;
        }
        let Some(vm) = self.guests.get_mut(&vmid) else {
            return;
        };
        let used = vm.config.iter().chain(vm.pending.iter()).any(|(k, v)| {
            (is_drive_key(k) && drive_file(v) == volid) || (k.starts_with("unused") && v == volid)
        });
        if used {
            return;
        }
        if let Some(n) = (0..256).find(|n| !vm.config.contains_key(&format!("unused{n}"))) {
            vm.config.insert(format!("unused{n}"), volid.to_string());
        }
    }

    /// `vmconfig_apply_pending`: everything pending becomes current.
    fn apply_pending(&mut self, vmid: u32, log: &mut Lines) {
        let Some(vm) = self.guests.get_mut(&vmid) else {
            return;
        };
        let node = vm.node.clone();
        let deletes = std::mem::take(&mut vm.pending_delete);
        let pending = std::mem::take(&mut vm.pending);
        for (k, force) in deletes {
            self.apply_one(vmid, &node, &k, None, force, log);
        }
        for (k, v) in pending {
            self.apply_one(vmid, &node, &k, Some(v), false, log);
        }
    }

    /// Makes one pending change current, turning replaced or removed
    /// volumes into `unusedN` (or freeing them when forced).
    fn apply_one(
        &mut self,
        vmid: u32,
        node: &str,
        key: &str,
        value: Option<String>,
        force: bool,
        log: &mut Lines,
    ) {
        let old = self.guests.get_mut(&vmid).and_then(|vm| {
            let old = vm.config.remove(key);
            if let Some(v) = &value {
                vm.config.insert(key.to_string(), v.clone());
            }
            old
        });
        if let Some(old) = old
            && is_drive_key(key)
        {
            let file = drive_file(&old).to_string();
            if value.as_deref().map(drive_file) != Some(file.as_str()) {
                if drive_is_cdrom(&old)
                    && file.contains("-cloudinit")
                    && let Some(vm) = self.guests.get_mut(&vmid)
                {
                    vm.ci_changes.clear();
                }
                if force || drive_is_cdrom(&old) && file.contains("-cloudinit") {
                    if self.volume(&file, node).is_some_and(|v| v.vmid == vmid)
                        && let Some(l) = self.free_volume(&file, node)
                    {
                        log.extend(l);
                    }
                } else {
                    self.register_unused(node, vmid, &file);
                }
            }
        }
    }

    /// `vmconfig_hotplug_pending`: applies what a running VM can take,
    /// leaves the rest pending.
    fn hotplug_pending(&mut self, vmid: u32, log: &mut Lines) -> Result<()> {
        let Some(vm) = self.guests.get(&vmid) else {
            return Ok(());
        };
        let node = vm.node.clone();
        let features = vm.hotplug();
        let bridges = self
            .nodes
            .iter()
            .find(|n| n.name == node)
            .map(|n| n.bridges.clone())
            .unwrap_or_default();
        let mut errors = BTreeMap::new();
        let deletes: Vec<(String, bool)> = vm
            .pending_delete
            .iter()
            .map(|(k, f)| (k.clone(), *f))
            .collect();
        let pending: Vec<(String, String)> = vm
            .pending
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let live_ok = |key: &str, old: Option<&String>, new: Option<&String>| -> bool {
            if always_live(key) {
                return true;
            }
            let base = key.trim_end_matches(|c: char| c.is_ascii_digit());
            match base {
                "net" => features.contains("network"),
                "usb" => {
                    features.contains("usb")
                        && vm
                            .config
                            .get("ostype")
                            .is_some_and(|o| o == "l26" || o.starts_with("win1") || o == "win8")
                }
                "scsi" | "virtio" => features.contains("disk"),
                "unused" => true,
                "ide" | "sata" => {
                    // Only a CD-ROM's medium changes live.
                    old.is_some_and(|o| drive_is_cdrom(o)) && new.is_some_and(|n| drive_is_cdrom(n))
                }
                "vcpus" => features.contains("cpu"),
                "memory" => features.contains("memory"),
                "tablet" => features.contains("usb"),
                "agent" => false,
                _ => false,
            }
        };
        let live_deletes: Vec<(String, bool)> = deletes
            .into_iter()
            .filter(|(k, _)| live_ok(k, vm.config.get(k), None))
            .collect();
        let mut apply = Vec::new();
        for (k, v) in pending {
            let old = vm.config.get(&k);
            if !live_ok(&k, old, Some(&v)) {
                continue;
            }
            if k.starts_with("net")
                && let Some(b) = v.split(',').find_map(|p| p.strip_prefix("bridge="))
                && !bridges.iter().any(|x| x == b)
            {
                errors.insert(
                    k.clone(),
                    format!("hotplug problem - bridge '{b}' does not exist"),
                );
                continue;
            }
            apply.push((k, v));
        }
        for (k, force) in live_deletes {
            let old = self
                .guests
                .get(&vmid)
                .and_then(|vm| vm.config.get(&k).cloned());
            self.record_ci_change(vmid, &k, old.as_deref(), None);
            self.apply_one(vmid, &node, &k, None, force, log);
            if let Some(vm) = self.guests.get_mut(&vmid) {
                vm.pending_delete.remove(&k);
            }
        }
        for (k, v) in apply {
            let old = self.guests.get_mut(&vmid).and_then(|vm| {
                vm.pending.remove(&k);
                vm.config.get(&k).cloned()
            });
            self.record_ci_change(vmid, &k, old.as_deref(), Some(&v));
            self.apply_one(vmid, &node, &k, Some(v), false, log);
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(Error::Invalid(errors))
        }
    }

    // -----------------------------------------------------------------
    // Views

    /// GET config: the effective config (or the current one), typed, with
    /// `digest`.
    pub fn config_view(&self, node: &str, vmid: u32, current: bool) -> Result<Value> {
        let vm = self.vm(node, vmid)?;
        let conf = if current {
            vm.config.clone()
        } else {
            vm.effective()
        };
        let mut out = serde_json::Map::new();
        for (k, v) in &conf {
            let v = if k == "cipassword" { "**********" } else { v };
            out.insert(k.clone(), typed(self.version, k, v));
        }
        out.insert("digest".into(), json!(vm.digest()));
        Ok(Value::Object(out))
    }

    /// GET pending.
    pub fn pending_view(&self, node: &str, vmid: u32) -> Result<Value> {
        let vm = self.vm(node, vmid)?;
        let v = self.version;
        let hide = |k: &str, val: &str| {
            if k == "cipassword" {
                "**********".to_string()
            } else {
                val.to_string()
            }
        };
        let mut items = Vec::new();
        for (k, val) in &vm.config {
            let mut item = json!({ "key": k, "value": typed(v, k, &hide(k, val)) });
            if let Some(p) = vm.pending.get(k) {
                item["pending"] = typed(v, k, &hide(k, p));
            }
            if let Some(force) = vm.pending_delete.get(k) {
                item["delete"] = json!(if *force { 2 } else { 1 });
            }
            items.push(item);
        }
        items.push(json!({ "key": "digest", "value": vm.digest() }));
        for (k, p) in &vm.pending {
            if !vm.config.contains_key(k) {
                items.push(json!({ "key": k, "pending": typed(v, k, &hide(k, p)) }));
            }
        }
        Ok(Value::Array(items))
    }

    /// The size of the boot disk (first disk in the boot order).
    fn boot_disk_size(&self, vm: &Vm) -> u64 {
        let order: Vec<String> = vm
            .config
            .get("boot")
            .and_then(|b| b.split(',').find_map(|p| p.strip_prefix("order=")))
            .map(|o| o.split(';').map(str::to_string).collect())
            .unwrap_or_default();
        let disk = order
            .iter()
            .find(|k| {
                vm.config
                    .get(*k)
                    .is_some_and(|v| is_drive_key(k) && !drive_is_cdrom(v))
            })
            .or_else(|| {
                vm.config
                    .keys()
                    .find(|k| is_drive_key(k) && !drive_is_cdrom(&vm.config[*k]))
            });
        disk.and_then(|k| vm.config.get(k))
            .and_then(|v| {
                v.split(',')
                    .find_map(|p| p.strip_prefix("size="))
                    .and_then(parse_size)
                    .or_else(|| self.volume(drive_file(v), &vm.node).map(|x| x.size))
            })
            .unwrap_or(0)
    }

    /// `vmstatus()` for one VM: `full` adds what `status/current` and
    /// `?full=1` show; `current` adds `ha`, `agent`, `spice`, `clipboard`.
    pub fn vm_status(&self, vm: &Vm, now_ms: i64, full: bool, current: bool) -> Value {
        let v9 = self.version.is_v9();
        let running = vm.running();
        let host_cpus = self
            .nodes
            .iter()
            .find(|n| n.name == vm.node)
            .map_or(1, |n| u64::from(n.cpus));
        let conf = &vm.config;
        let cpus = conf
            .get("vcpus")
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| {
                let g = |k: &str| conf.get(k).and_then(|v| v.parse::<u64>().ok()).unwrap_or(1);
                (g("sockets") * g("cores")).min(host_cpus)
            });
        let maxmem = vm.maxmem();
        let uptime = match (running, vm.started_ms) {
            (true, Some(s)) => (now_ms - s).max(0) / 1000,
            _ => 0,
        };
        let mem = if running { maxmem / 4 } else { 0 };
        let mut s = json!({
            "vmid": vm.vmid,
            "status": vm.status,
            "name": conf.get("name").cloned().unwrap_or_else(|| format!("VM {}", vm.vmid)),
            "cpus": cpus,
            "maxmem": maxmem,
            "maxdisk": self.boot_disk_size(vm),
            "disk": 0,
            "cpu": if running { 0.0123 } else { 0.0 },
            "mem": mem,
            "netin": if running { uptime * 1500 } else { 0 },
            "netout": if running { uptime * 300 } else { 0 },
            "uptime": uptime,
        });
        if v9 {
            s["memhost"] = json!(mem);
        }
        if let Some(l) = vm.lock() {
            s["lock"] = json!(l);
        }
        if let Some(t) = conf.get("tags") {
            s["tags"] = json!(t);
        }
        if vm.template() {
            s["template"] = json!(1);
        }
        if conf.keys().any(|k| k.starts_with("serial")) {
            s["serial"] = json!(1);
        }
        if let Some(b) = conf.get("balloon") {
            s["balloon_min"] = json!(b.parse::<u64>().unwrap_or(0) * 1024 * 1024);
            s["shares"] = json!(
                conf.get("shares")
                    .and_then(|x| x.parse::<u64>().ok())
                    .unwrap_or(1000)
            );
        }
        if running {
            s["pid"] = json!(10_000 + vm.vmid);
        }
        if full {
            s["qmpstatus"] = json!(vm.qmpstatus.map_or(vm.status.as_str(), QmpStatus::as_str));
            if running {
                s["diskread"] = json!(uptime * 4096);
                s["diskwrite"] = json!(uptime * 2048);
                let mut nics = serde_json::Map::new();
                for k in conf.keys().filter(|k| k.starts_with("net")) {
                    if let Ok(n) = k[3..].parse::<u32>() {
                        nics.insert(
                            format!("tap{}i{n}", vm.vmid),
                            json!({ "netin": uptime * 1500, "netout": uptime * 300 }),
                        );
                    }
                }
                s["nics"] = Value::Object(nics);
                let mut blockstat = serde_json::Map::new();
                for k in conf.keys().filter(|k| is_drive_key(k)) {
                    blockstat.insert(k.clone(), block_stats(uptime));
                }
                s["blockstat"] = Value::Object(blockstat);
                s["running-machine"] = json!(running_machine(self.version, conf));
                s["running-qemu"] = json!(qemu_version(self.version));
                s["proxmox-support"] = json!({
                    "backup-fleecing": true,
                    "backup-max-workers": true,
                    "pbs-dirty-bitmap": true,
                    "pbs-dirty-bitmap-migration": true,
                    "pbs-dirty-bitmap-savevm": true,
                    "pbs-library-version": "1.5.2 (UNKNOWN)",
                    "pbs-masterkey": true,
                    "query-bitmap-info": true,
                });
                if conf.get("balloon").is_none_or(|b| b != "0") {
                    s["balloon"] = json!(maxmem);
                    s["freemem"] = json!(maxmem - mem);
                    s["ballooninfo"] = json!({
                        "actual": maxmem,
                        "max_mem": maxmem,
                        "total_mem": maxmem,
                        "free_mem": maxmem - mem,
                        "mem_swapped_in": 0,
                        "mem_swapped_out": 0,
                        "major_page_faults": 0,
                        "minor_page_faults": 0,
                        "last_update": now_ms / 1000,
                    });
                }
                if v9 {
                    for (name, val) in [
                        ("pressurecpusome", 0.0),
                        ("pressurecpufull", 0.0),
                        ("pressureiosome", 0.0),
                        ("pressureiofull", 0.0),
                        ("pressurememorysome", 0.0),
                        ("pressurememoryfull", 0.0),
                    ] {
                        s[name] = json!(val);
                    }
                }
            }
        }
        if current {
            s["ha"] = json!({ "managed": 0 });
            if conf
                .get("agent")
                .is_some_and(|a| a.split(',').any(|p| p == "1" || p == "enabled=1"))
            {
                s["agent"] = json!(1);
            }
            if let Some(vga) = conf.get("vga") {
                let kind = vga.split(',').find(|p| !p.contains('=')).unwrap_or("");
                if kind.starts_with("qxl") || kind.starts_with("virtio") {
                    s["spice"] = json!(1);
                }
                let clip = vga
                    .split(',')
                    .find_map(|p| p.strip_prefix("clipboard="))
                    .map_or(Value::Null, |c| json!(c));
                s["clipboard"] = clip;
            }
        }
        s
    }

    /// Gives the VMs of a scenario their full behaviour: the volumes their
    /// disks name are recorded on the storages, running ones have been up
    /// for an hour.
    pub fn adopt_seed_vms(&mut self, now: i64) {
        let mut adopt = Vec::new();
        for vm in self.guests.values_mut() {
            if vm.running() {
                vm.started_ms = Some((now - 3_600) * 1000);
            }
            let sections = std::iter::once(&vm.config).chain(vm.snapshots.values());
            for (k, v) in sections.flat_map(|c| c.iter()) {
                let (file, size) = if k.starts_with("unused") || k == "vmstate" {
                    (v.as_str(), None)
                } else if is_drive_key(k) && !drive_is_cdrom(v) {
                    let size = v
                        .split(',')
                        .find_map(|p| p.strip_prefix("size="))
                        .and_then(parse_size);
                    (drive_file(v), size)
                } else {
                    continue;
                };
                adopt.push((
                    file.to_string(),
                    vm.node.clone(),
                    vm.vmid,
                    size.unwrap_or(0),
                ));
            }
        }
        for (volid, node, vmid, size) in adopt {
            self.adopt_volume(&volid, &node, vmid, size, now);
        }
    }

    /// The VMs on `node`, in VMID order.
    pub fn vms_on(&self, node: &str) -> impl Iterator<Item = &Vm> {
        self.guests.values().filter(move |v| v.node == node)
    }

    /// The `maxdisk` of a VM for `/cluster/resources`.
    pub fn vm_maxdisk(&self, vm: &Vm) -> u64 {
        self.boot_disk_size(vm)
    }
}

fn block_stats(uptime: i64) -> Value {
    json!({
        "rd_bytes": uptime * 4096,
        "wr_bytes": uptime * 2048,
        "rd_operations": uptime,
        "wr_operations": uptime / 2,
        "flush_operations": 0,
        "rd_total_time_ns": 0,
        "wr_total_time_ns": 0,
        "flush_total_time_ns": 0,
        "unmap_bytes": 0,
        "unmap_operations": 0,
        "unmap_total_time_ns": 0,
        "failed_rd_operations": 0,
        "failed_wr_operations": 0,
        "failed_flush_operations": 0,
        "failed_unmap_operations": 0,
        "invalid_rd_operations": 0,
        "invalid_wr_operations": 0,
        "invalid_flush_operations": 0,
        "invalid_unmap_operations": 0,
        "idle_time_ns": 0,
        "account_invalid": true,
        "account_failed": true,
        "timed_stats": [],
    })
}

fn power_off(vm: &mut Vm) {
    vm.status = VmStatus::Stopped;
    vm.qmpstatus = None;
    vm.started_ms = None;
}

/// Keys a running VM takes at once (`vmconfig_hotplug_pending`).
fn always_live(key: &str) -> bool {
    matches!(
        key,
        "name"
            | "description"
            | "onboot"
            | "protection"
            | "tags"
            | "startup"
            | "shares"
            | "hookscript"
            | "lock"
            | "migrate_downtime"
            | "migrate_speed"
            | "vmstatestorage"
            | "cpuunits"
            | "cpulimit"
            | "balloon"
    ) || is_cloudinit_option(key)
}

/// `8G`, `4M`, `528K`, `1T` or bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1u64 << 10),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        'T' | 't' => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    let n: f64 = num.parse().ok()?;
    Some((n * mult as f64) as u64)
}

/// The default boot order: first hard disk, first CD-ROM, first NIC.
pub fn default_boot(conf: &BTreeMap<String, String>) -> String {
    let mut drives: Vec<&String> = conf.keys().filter(|k| is_drive_key(k)).collect();
    drives.sort_by_key(|k| drive_order(k));
    let disk = drives.iter().find(|k| {
        !k.starts_with("efidisk") && !k.starts_with("tpmstate") && !drive_is_cdrom(&conf[**k])
    });
    let cdrom = drives.iter().find(|k| drive_is_cdrom(&conf[**k]));
    let mut nets: Vec<(u32, &String)> = conf
        .keys()
        .filter_map(|k| Some((k.strip_prefix("net")?.parse().ok()?, k)))
        .collect();
    nets.sort();
    let mut order: Vec<&str> = Vec::new();
    order.extend(disk.map(|k| k.as_str()));
    order.extend(cdrom.map(|k| k.as_str()));
    order.extend(nets.first().map(|(_, k)| k.as_str()));
    format!("order={}", order.join(";"))
}

/// `YYYY-MM-DD` of an epoch time (UTC).
pub fn ymd(epoch: i64) -> String {
    let (y, m, d, ..) = crate::clock::civil(epoch);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_known_vectors() {
        assert_eq!(sha1_hex(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(sha1_hex(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(
            sha1_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
    }

    #[test]
    fn dates_and_sizes() {
        assert_eq!(ymd(0), "1970-01-01");
        assert_eq!(ymd(1_746_057_600), "2025-05-01");
        assert_eq!(parse_size("8G"), Some(8 << 30));
        assert_eq!(parse_size("528K"), Some(528 << 10));
        assert_eq!(new_disk("local-lvm:8"), Some((Some("local-lvm"), 8.0)));
        assert_eq!(new_disk("0.5"), Some((None, 0.5)));
        assert_eq!(new_disk("local-lvm:vm-100-disk-0"), None);
        assert_eq!(new_disk("local:iso/x.iso"), None);
    }

    #[test]
    fn boot_order_and_keys() {
        let conf: BTreeMap<String, String> = [
            ("scsi0", "local-lvm:vm-100-disk-0,size=8G"),
            ("ide2", "local:iso/x.iso,media=cdrom"),
            ("net1", "virtio=BC:24:11:00:00:01,bridge=vmbr0"),
            ("net0", "virtio=BC:24:11:00:00:00,bridge=vmbr0"),
            ("efidisk0", "local-lvm:vm-100-disk-1,size=4M"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(default_boot(&conf), "order=scsi0;ide2;net0");
        assert!(option_exists(PveVersion::V9_1, "net31"));
        assert!(!option_exists(PveVersion::V9_1, "net32"));
        assert!(!option_exists(PveVersion::V9_1, "vmid"));
        assert!(option_exists(PveVersion::V9_1, "cores"));
        assert!(!option_exists(PveVersion::V9_1, "bogus"));
    }
}
