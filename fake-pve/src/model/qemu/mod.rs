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

use super::guest::{Guest, Kind};
use super::size::parse_size;
use super::storage::{VolumeKind, parse_volid, path_based};
use super::tasks::{TaskEffect, Worker};
use super::{Context, Error, PveVersion, Result};
use crate::spec::{Format, Prop, propstring};

mod clone;
mod cloudinit;
mod config;
pub mod cpu_models;
mod create;
pub mod dbus_vmstate;
mod destroy;
mod feature;
mod migrate;
pub mod monitor;
mod move_disk;
pub mod perm;
mod power;
mod resize;
pub(crate) mod rrd;
mod schema;
mod snapshot;
mod status;
pub use rrd::vm_rrddata;
pub use status::VmStatusReader;
pub(crate) use status::{VmFigures, adopt_seed_vms, vm_figures};

pub use clone::CloneRequest;
pub(crate) use migrate::volumes as vm_volumes;
#[cfg_attr(not(feature = "internals"), allow(unused_imports))]
pub use migrate::{
    MigrateJob, MigrateOptions, MigratePrecondition, MigrateRequest, StorageMap, VolUse,
};
pub use move_disk::{MoveJob, ReassignJob};
pub use resize::ResizeJob;
pub(crate) use resize::finish_resize;
pub use schema::{
    CREATE_ONLY, canonical, canonical_new, canonical_update, config_prop, drive_file, is_drive_key,
    option_exists, qemu_version,
};
use schema::{
    cloudinit_storage, drive_is_cdrom, drive_order, drive_with, is_cloudinit_option, is_disk,
    is_windows, machine_version, new_disk, qemu_clone_bytes, uuid,
};
pub(crate) use schema::{default_key, running_machine};
pub use {
    cloudinit::CloudinitItem,
    config::{ConfigView, PendingRow, PendingView},
    feature::{FeatureAnswer, vm_feature},
};

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

/// The areas a VM's operations read and change: the guests, the
/// storages their volumes live on, the ACLs and pools (permission checks,
/// a pool to join), the SDN (bridges, the IPAM), the guests' firewall
/// files, the members (a migration's target, a node's bridges),
/// `datacenter.cfg` (the tag style) and the release. Built by
/// [`Cluster::vm_ops`](crate::model::cluster::Cluster::vm_ops); the steps of a VM task are its methods.
pub struct VmOps<'a> {
    /// The guests.
    pub(in crate::model) guests: &'a mut crate::model::guests::Guests,
    /// The storages and their volumes.
    pub(in crate::model) storage: &'a mut crate::model::storage::Storages,
    /// Users, ACLs and pools.
    pub(in crate::model) access: &'a mut crate::model::access::Access,
    /// The SDN configuration and the IPAM.
    pub(in crate::model) sdn: &'a mut crate::model::sdn::Sdn,
    /// The guests' firewall files.
    pub(in crate::model) firewall: &'a mut crate::model::firewall::Firewall,
    /// The members.
    pub(in crate::model) nodes: &'a crate::model::nodes::Nodes,
    /// The nodes' network configuration (their addresses).
    pub(in crate::model) network: &'a crate::model::network::Networks,
    /// `datacenter.cfg`.
    pub(in crate::model) datacenter: &'a crate::model::datacenter::Datacenter,
    /// The resource mappings a VM's devices name.
    pub(in crate::model) mappings: &'a crate::model::mapping::Mappings,
    /// The nodes' devices the mappings are checked against.
    pub(in crate::model) hardware: &'a crate::model::node_hw::Hardware,
    /// The release.
    pub(in crate::model) version: PveVersion,
    /// The pid the next worker gets (a clone's temporary file name).
    pub(in crate::model) next_pid: u32,
}

impl VmOps<'_> {
    /// The permission checks, over the same areas.
    pub(in crate::model) fn perms(&self) -> crate::model::guest_perm::Perms<'_> {
        crate::model::guest_perm::Perms::of(
            self.access,
            self.storage,
            self.sdn,
            self.guests,
            self.version,
        )
    }
}

/// One emulated VM.
pub type Vm = Guest<Qemu>;

/// What a VM keeps beside the shared guest record.
#[derive(Debug, Clone, Default)]
pub struct Qemu {
    /// Pending deletions; `true` when forced (`delete: !key`).
    pub(in crate::model) pending_delete: BTreeMap<String, bool>,
    /// The QMP run state when it differs from `status` (`paused`).
    pub(in crate::model) qmpstatus: Option<QmpStatus>,
    /// The flock on `/var/lock/qemu-server/lock-<vmid>.conf` that running
    /// tasks hold (a clone holds it for its whole run).
    pub(in crate::model) flock: FileLock,
    /// The `[special:cloudinit]` section: values the generated cloud-init
    /// drive still holds for options changed on the running VM, and
    /// `added` for options it lacks.
    pub(in crate::model) ci_changes: BTreeMap<String, String>,
    /// The run (its `started_ms`, -1 for none) whose dbus-vmstate helper
    /// runs ([`dbus_vmstate`]).
    pub(in crate::model) dbus_vmstate: Option<i64>,
}

impl Qemu {
    /// The QMP run state where it differs from `status` (`paused`).
    pub fn qmpstatus(&self) -> Option<QmpStatus> {
        self.qmpstatus
    }
}

impl Kind for Qemu {
    const NOUN: &'static str = "VM";
    const PENDING_SECTION: &'static str = "[PENDING]";
    const EMPTY_DESCRIPTION_LINE: bool = false;

    fn pending_deletions(&self) -> Vec<String> {
        self.pending_delete
            .iter()
            .map(|(k, force)| if *force { format!("!{k}") } else { k.clone() })
            .collect()
    }

    fn own_sections(vm: &Vm) -> Vec<(&'static str, &BTreeMap<String, String>)> {
        if !vm.ci_changes.is_empty() && cloudinit::has_cloudinit(&vm.config) {
            vec![("[special:cloudinit]", &vm.ci_changes)]
        } else {
            Vec::new()
        }
    }
}

/// A VM as a saved world keeps it (the fields in this order).
#[derive(Serialize)]
struct VmOut<'a> {
    vmid: u32,
    node: &'a str,
    status: VmStatus,
    config: &'a BTreeMap<String, String>,
    pending: &'a BTreeMap<String, String>,
    pending_delete: &'a BTreeMap<String, bool>,
    qmpstatus: Option<QmpStatus>,
    started_ms: Option<i64>,
    snapshots: &'a BTreeMap<String, BTreeMap<String, String>>,
    flock: &'a FileLock,
    ci_changes: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dbus_vmstate: Option<i64>,
}

/// A VM as a saved world holds it (older worlds lack some fields).
#[derive(Deserialize)]
struct VmIn {
    vmid: u32,
    node: String,
    status: VmStatus,
    config: BTreeMap<String, String>,
    #[serde(default)]
    pending: BTreeMap<String, String>,
    #[serde(default)]
    pending_delete: BTreeMap<String, bool>,
    #[serde(default)]
    qmpstatus: Option<QmpStatus>,
    #[serde(default)]
    started_ms: Option<i64>,
    #[serde(default)]
    snapshots: BTreeMap<String, BTreeMap<String, String>>,
    #[serde(default)]
    flock: FileLock,
    #[serde(default)]
    ci_changes: BTreeMap<String, String>,
    #[serde(default)]
    dbus_vmstate: Option<i64>,
}

impl Serialize for Vm {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        VmOut {
            vmid: self.vmid,
            node: &self.node,
            status: self.status,
            config: &self.config,
            pending: &self.pending,
            pending_delete: &self.kind.pending_delete,
            qmpstatus: self.kind.qmpstatus,
            started_ms: self.started_ms,
            snapshots: &self.snapshots,
            flock: &self.kind.flock,
            ci_changes: &self.kind.ci_changes,
            dbus_vmstate: self.kind.dbus_vmstate,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Vm {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = VmIn::deserialize(d)?;
        Ok(Guest {
            vmid: v.vmid,
            node: v.node,
            status: v.status,
            config: v.config,
            pending: v.pending,
            started_ms: v.started_ms,
            snapshots: v.snapshots,
            kind: Qemu {
                pending_delete: v.pending_delete,
                qmpstatus: v.qmpstatus,
                flock: v.flock,
                ci_changes: v.ci_changes,
                dbus_vmstate: v.dbus_vmstate,
            },
        })
    }
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

/// The bytes of memory a config's `memory` gives (512 MiB without it).
pub(crate) fn maxmem_of(memory: Option<&str>) -> u64 {
    let mib = memory
        .and_then(|m| m.split(',').next())
        .and_then(|m| m.trim_start_matches("current=").parse::<u64>().ok())
        .unwrap_or(512);
    mib * 1024 * 1024
}

impl Vm {
    /// A VM with a config and nothing pending.
    pub fn new(vmid: u32, node: &str, status: VmStatus, config: BTreeMap<String, String>) -> Self {
        Guest::with(vmid, node, status, config)
    }

    /// Whether it is paused.
    pub fn paused(&self) -> bool {
        self.running() && self.qmpstatus == Some(QmpStatus::Paused)
    }

    /// Configured memory in bytes (`memory` is in MiB, default 512).
    pub fn maxmem(&self) -> u64 {
        maxmem_of(self.config.get("memory").map(String::as_str))
    }

    /// Configured vCPUs: sockets × cores (defaults 1), or `vcpus`.
    pub fn maxcpu(&self) -> u64 {
        self.config
            .get("vcpus")
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| self.max_vcpus())
    }

    /// The most vCPUs the current config allows: sockets × cores
    /// (defaults 1), QEMU's `maxcpus`.
    pub fn max_vcpus(&self) -> u64 {
        let get = |k: &str| {
            self.config
                .get(k)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(1)
        };
        get("sockets") * get("cores")
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

/// The SHA-1 of `data` in lower-case hex, as PVE's config digests are
/// (`Digest::SHA::sha1_hex`).
pub fn sha1_hex(data: &[u8]) -> String {
    use sha1::{Digest, Sha1};
    hex::encode(Sha1::digest(data))
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
pub(crate) struct CreateJob {
    pub(crate) config: BTreeMap<String, String>,
    pub(crate) storage: Option<String>,
    pub(crate) start: Option<(String, u64)>,
    pub(crate) ids: CreateIds,
    pub(crate) pool: Option<String>,
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
        /// The pool the new VM joins.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pool: Option<String>,
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
    /// `pool`: the pool the new VM joins.
    pub pool: Option<String>,
}

type Lines = Vec<String>;
/// Printed drives by key, and the volids allocated for them.
type Created = (BTreeMap<String, String>, Vec<String>);
/// The result of a task effect: log lines, or log lines and the error.
pub type EffectResult = std::result::Result<Lines, (Lines, String)>;

/// `Configuration file 'nodes/<node>/qemu-server/<vmid>.conf' does not exist`.
pub(crate) fn config_missing(node: &str, vmid: u32) -> Error {
    Error::not_found(format!(
        "Configuration file 'nodes/{node}/qemu-server/{vmid}.conf' does not exist"
    ))
}

pub(crate) fn power_off(vm: &mut Vm) {
    vm.status = VmStatus::Stopped;
    vm.qmpstatus = None;
    vm.started_ms = None;
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
        assert_eq!(
            sha1_hex("a".repeat(1_000_000).as_bytes()),
            "34aa973cd4c4daa4f61eeb2bdbad27316534016f"
        );
    }

    #[test]
    fn dates_and_sizes() {
        assert_eq!(ymd(0), "1970-01-01");
        assert_eq!(ymd(1_746_057_600), "2025-05-01");
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

    /// A saved world's VM, every field set: the exact text it is saved
    /// as, and loaded back unchanged.
    #[test]
    fn a_saved_vm_keeps_its_fields_and_their_order() {
        let mut vm = Vm::new(
            100,
            "pve",
            VmStatus::Running,
            BTreeMap::from([("memory".to_string(), "2048".to_string())]),
        );
        vm.pending.insert("cores".into(), "2".into());
        vm.pending_delete.insert("net1".into(), true);
        vm.pending_delete.insert("agent".into(), false);
        vm.qmpstatus = Some(QmpStatus::Paused);
        vm.started_ms = Some(1_700_000_000_123);
        vm.snapshots.insert(
            "s1".into(),
            BTreeMap::from([("snaptime".to_string(), "1700000000".to_string())]),
        );
        vm.flock = FileLock {
            shared: 2,
            exclusive: true,
        };
        vm.ci_changes.insert("added".into(), "ipconfig0".into());
        let text = serde_json::to_string(&vm).expect("in the test");
        let want = concat!(
            r#"{"vmid":100,"node":"pve","status":"running","config":{"memory":"2048"},"#,
            r#""pending":{"cores":"2"},"pending_delete":{"agent":false,"net1":true},"#,
            r#""qmpstatus":"paused","started_ms":1700000000123,"#,
            r#""snapshots":{"s1":{"snaptime":"1700000000"}},"#,
            r#""flock":{"shared":2,"exclusive":true},"ci_changes":{"added":"ipconfig0"}}"#
        );
        assert_eq!(text, want);
        let back: Vm = serde_json::from_str(&text).expect("in the test");
        assert_eq!(serde_json::to_string(&back).expect("in the test"), want);
    }

    /// A VM saved before the optional fields existed loads with them
    /// empty.
    #[test]
    fn an_old_saved_vm_loads() {
        let vm: Vm = serde_json::from_str(
            r#"{"vmid":101,"node":"pve","status":"stopped","config":{"cores":"1"}}"#,
        )
        .expect("in the test");
        assert_eq!(
            serde_json::to_string(&vm).expect("in the test"),
            concat!(
                r#"{"vmid":101,"node":"pve","status":"stopped","config":{"cores":"1"},"#,
                r#""pending":{},"pending_delete":{},"qmpstatus":null,"started_ms":null,"#,
                r#""snapshots":{},"flock":{"shared":0,"exclusive":false},"ci_changes":{}}"#
            )
        );
    }
}
