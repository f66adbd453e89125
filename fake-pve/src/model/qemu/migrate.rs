//! Migrating a VM to another node of the cluster (`POST .../migrate`,
//! `GET .../migrate`; qemu-server `API2/Qemu.pm` `migrate_vm`,
//! `migrate_vm_precondition`, `QemuMigrate.pm`; pve-guest-common
//! `AbstractMigrate.pm`).
//!
//! The request checks what PVE checks before forking; the `qmigrate`
//! task sets `lock: migrate` at once (phase 1) and, when it ends, scans
//! the local volumes, copies them, and moves the config to the target.
//! Log lines carry PVE's `YYYY-MM-DD HH:MM:SS ` prefix.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::VmOps;
use super::clone::is_cloudinit;
use super::{
    EffectResult, Error, Lines, QemuOp, Result, TaskEffect, Worker, drive_file, drive_is_cdrom,
    is_drive_key, parse_size, ymd,
};
use crate::model::access::AuthId;
use crate::model::storage::{VolumeKind, parse_volid};

/// `pve-targetstorage`: a storage map (`parse_idmap`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StorageMap {
    /// `1`: every storage maps to itself.
    pub identity: bool,
    /// A single storage for everything not listed.
    pub default: Option<String>,
    /// Source → target.
    pub entries: BTreeMap<String, String>,
}

impl StorageMap {
    /// Parses `src:dst,...`, `dst` or `1`.
    ///
    /// # Errors
    /// The text of `parse_idmap`'s refusal.
    pub fn parse(s: &str) -> Result<Self> {
        let mut map = StorageMap::default();
        for entry in s.split([',', ';', ' ']).filter(|e| !e.is_empty()) {
            if entry == "1" {
                map.identity = true;
                continue;
            }
            match entry.split_once(':') {
                Some((src, dst)) => {
                    if map.entries.insert(src.into(), dst.into()).is_some() {
                        return Err(Error::failed(format!(
                            "duplicate mapping for source '{src}'\n"
                        )));
                    }
                }
                None => {
                    if map.default.is_some() {
                        return Err(Error::failed(
                            "default target ID can only be provided once\n",
                        ));
                    }
                    map.default = Some(entry.into());
                }
            }
        }
        if map.identity && (map.default.is_some() || !map.entries.is_empty()) {
            return Err(Error::failed(
                "identity mapping cannot be combined with other mappings\n",
            ));
        }
        Ok(map)
    }

    /// The target storage of a volume on `sid`.
    pub(crate) fn target<'a>(&'a self, sid: &'a str) -> &'a str {
        self.entries
            .get(sid)
            .or(self.default.as_ref())
            .map_or(sid, String::as_str)
    }
}

/// What a `qmigrate` task was asked to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MigrateJob {
    /// The target node.
    pub target: String,
    /// A live migration of a running VM.
    pub online: bool,
    /// `with-local-disks`.
    pub with_local_disks: bool,
    /// `targetstorage`.
    pub storagemap: Option<StorageMap>,
    /// When the task started, epoch seconds (for the log and duration).
    pub started: i64,
    /// `migration_type` and `migration_network` as asked (datacenter.cfg
    /// decides the rest when the task runs).
    #[serde(default)]
    pub options: MigrateOptions,
    /// The bandwidth limit of the RAM's transfer, KiB/s (`get_bwlimit`:
    /// `bwlimit`, datacenter.cfg's `migration` or `default`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bwlimit: Option<u64>,
}

/// The options of `migrate_vm` that choose the way the data goes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MigrateOptions {
    /// `secure` or `insecure`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration_type: Option<String>,
    /// The CIDR of the network to migrate over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration_network: Option<String>,
    /// `bwlimit`, KiB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bwlimit: Option<u64>,
}

/// A migration request as the API hands it over.
#[derive(Debug, Clone)]
pub struct MigrateRequest {
    /// The source node (the path's).
    pub node: String,
    /// The VM.
    pub vmid: u32,
    /// The target node.
    pub target: String,
    /// `online`.
    pub online: bool,
    /// `with-local-disks`.
    pub with_local_disks: bool,
    /// `targetstorage`, unparsed.
    pub targetstorage: Option<String>,
    /// Who asks (storage permissions).
    pub who: AuthId,
    /// Now, epoch seconds.
    pub now: i64,
    /// `migration_type`, `migration_network`, `bwlimit`.
    pub options: MigrateOptions,
}

/// PVE's `strftime("%F %H:%M:%S")` in the node's time zone (UTC here).
fn stamp(epoch: i64) -> String {
    let s = epoch.rem_euclid(86_400);
    format!(
        "{} {:02}:{:02}:{:02}",
        ymd(epoch),
        s / 3600,
        (s / 60) % 60,
        s % 60
    )
}

/// What phase 2 logs of a live migration's limits: the speed limit (the
/// lower of the bandwidth limit and the VM's `migrate_speed`, in MB/s),
/// the downtime limit (`migrate_downtime`, 0.1 s by default) and the
/// XBZRLE cache (a tenth of the memory, rounded up to a power of two).
fn live_limits(conf: &BTreeMap<String, String>, bwlimit: Option<u64>) -> Vec<String> {
    let mut out = Vec::new();
    #[allow(clippy::cast_precision_loss)]
    let bw = bwlimit.filter(|b| *b > 0).map(|b| b as f64);
    let speed = conf
        .get("migrate_speed")
        .and_then(|v| v.parse::<f64>().ok())
        .map(|mb| mb * 1024.0)
        .filter(|s| *s > 0.0);
    let limit = match (bw, speed) {
        (Some(b), Some(s)) => Some(b.min(s)),
        (b, s) => b.or(s),
    };
    if let Some(kib) = limit {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let bytes = (kib * 1024.0) as u64;
        out.push(format!(
            "migration speed limit: {}/s",
            super::clone::render_bytes1(bytes)
        ));
    }
    let downtime = conf
        .get("migrate_downtime")
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.1);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let mut ms = (downtime * 1000.0) as u64;
    if ms > 2_000_000 {
        out.push("capping downtime limit to maximum possible: 2000000 ms".into());
        ms = 2_000_000;
    }
    out.push(format!("migration downtime limit: {ms} ms"));
    let memory = conf
        .get("memory")
        .and_then(|m| {
            m.split(',').find_map(|p| match p.split_once('=') {
                Some(("current", v)) => Some(v),
                Some(_) => None,
                None => Some(p),
            })
        })
        .and_then(|m| m.parse::<u64>().ok())
        .unwrap_or(512);
    let cache = (memory * 1_048_576 / 10).max(1);
    let cache = if cache < 2 {
        1
    } else {
        cache.next_power_of_two()
    };
    out.push(format!(
        "migration cachesize: {}",
        super::clone::render_bytes1(cache)
    ));
    out
}

/// How a volume is used, as `foreach_volid` records it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct VolUse {
    /// Only CD-ROM drives name it.
    pub cdrom: bool,
    /// It is a cloud-init drive.
    pub cloudinit: bool,
    /// An `unusedN` names it.
    pub unused: bool,
    /// A drive of the current config names it.
    pub attached: bool,
    /// The snapshots that name it.
    pub snapshots: Vec<String>,
    /// The pending section names it.
    pub pending: bool,
    /// The drive's `size=` (an unused disk: the volume's own size).
    pub size: Option<u64>,
    /// The drive key that names it.
    pub drivename: Option<String>,
}

/// A local volume of `GET .../migrate`'s `local_disks`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalDisk {
    /// The volume.
    pub volid: String,
    /// How the VM uses it.
    pub usage: VolUse,
}

/// `GET .../migrate` (`migrate_vm_precondition`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigratePrecondition {
    /// Whether the VM runs.
    pub running: bool,
    /// The nodes it may go to.
    pub allowed_nodes: Vec<String>,
    /// Every other node, with what it lacks (nothing: empty).
    pub not_allowed_nodes: Vec<NotAllowed>,
    /// Its volumes on local storages.
    pub local_disks: Vec<LocalDisk>,
    /// The config keys that tie it to this node's hardware.
    pub local_resources: Vec<String>,
    /// Its mapped devices and directories.
    pub mapped: Vec<crate::model::mapping::check::MappedResource>,
    /// Whether the answer says `has-dbus-vmstate` (9.x).
    pub dbus_vmstate: bool,
}

/// A node a VM may not migrate to, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAllowed {
    /// The node.
    pub node: String,
    /// The storages of its disks the node lacks.
    pub unavailable_storages: Option<Vec<String>>,
    /// The keys of its mapped devices without an entry for the node.
    pub unavailable_resources: Vec<String>,
}

/// `foreach_volid`: every volume of the config, its pending section and
/// its snapshots.
pub(crate) fn volumes(vm: &super::Vm) -> BTreeMap<String, VolUse> {
    let mut out: BTreeMap<String, VolUse> = BTreeMap::new();
    let mut visit = |conf: &BTreeMap<String, String>, snap: Option<&str>, pending: bool| {
        for (k, v) in conf {
            let unused = k.starts_with("unused");
            if !is_drive_key(k) && !unused {
                continue;
            }
            let volid = if unused { v.as_str() } else { drive_file(v) };
            if volid.is_empty() {
                continue;
            }
            let e = out.entry(volid.to_string()).or_insert_with(|| VolUse {
                cdrom: true,
                ..VolUse::default()
            });
            if unused || !drive_is_cdrom(v) {
                e.cdrom = false;
            }
            e.cloudinit |= !unused && is_cloudinit(v);
            e.unused |= unused;
            if !e.unused && snap.is_none() && !pending {
                e.attached = true;
            }
            if let Some(s) = snap {
                e.snapshots.push(s.to_string());
            }
            e.pending |= pending;
            if e.size.is_none() && !unused {
                e.size = v
                    .split(',')
                    .find_map(|p| p.strip_prefix("size="))
                    .and_then(parse_size);
            }
            if !unused {
                e.drivename = Some(k.clone());
            }
        }
    };
    visit(&vm.config, None, false);
    visit(&vm.pending, None, true);
    for (name, snap) in &vm.snapshots {
        visit(snap, Some(name), false);
    }
    out
}

impl VmOps<'_> {
    /// Whether a volume lives on a storage that is not shared (or on no
    /// storage at all), as `check_vm_disks_local` decides.
    fn is_local_volume(&self, volid: &str, u: &VolUse) -> bool {
        if u.cdrom && volid == "none" {
            return false;
        }
        match parse_volid(volid) {
            Some((sid, _)) if !volid.starts_with('/') => {
                self.storage.find(sid).is_none_or(|s| !s.shared)
            }
            _ => true,
        }
    }

    /// `check_storage_availability`: every drive's storage must be
    /// enabled here and on `target`.
    fn check_storage_availability(
        &self,
        conf: &BTreeMap<String, String>,
        target: &str,
    ) -> Result<()> {
        for (k, v) in conf {
            if !is_drive_key(k) {
                continue;
            }
            let file = drive_file(v);
            let Some((sid, _)) = parse_volid(file) else {
                continue;
            };
            if file.starts_with('/') {
                continue;
            }
            let s = self.storage.existing(sid)?;
            if s.disable {
                return Err(Error::failed(format!("storage '{sid}' is disabled")));
            }
            self.storage.usable_storage(sid, target)?;
        }
        Ok(())
    }

    /// `check_storage_access_migrate` for a target storage.
    fn check_storage_access_migrate(&self, who: &AuthId, sid: &str, target: &str) -> Result<()> {
        self.storage.usable_storage(sid, target)?;
        let path = format!("/storage/{sid}");
        if !self.access.has_priv(who, &path, "Datastore.AllocateSpace") {
            return Err(Error::permission(&path, &["Datastore.AllocateSpace"]));
        }
        if !self
            .storage
            .existing(sid)?
            .content
            .iter()
            .any(|c| c == "images")
        {
            return Err(Error::failed(format!(
                "storage '{sid}' does not support vm images"
            )));
        }
        Ok(())
    }

    /// The synchronous part of `migrate_vm`: PVE's checks, then
    /// `lock: migrate` (phase 1 starts with the task) and the worker.
    ///
    /// # Errors
    /// PVE's refusals, in its order.
    pub fn migrate_vm(&mut self, req: MigrateRequest) -> Result<Worker> {
        let vmid = req.vmid;
        if req.target == req.node {
            return Err(Error::invalid("target", "target is local node."));
        }
        if !self.nodes.iter().any(|n| n.name == req.target) {
            return Err(Error::not_found(format!(
                "no such cluster node '{}'",
                req.target
            )));
        }
        let vm = self.guests.vm(&req.node, vmid)?;
        vm.check_lock()?;
        let running = vm.running();
        if running && !req.online {
            return Err(Error::conflict("can't migrate running VM without --online"));
        }
        let conf = vm.config.clone();
        let storagemap = match &req.targetstorage {
            Some(ts) => {
                let map = StorageMap::parse(ts).map_err(|e| {
                    Error::invalid("targetstorage", format!("failed to parse storage map: {e}"))
                })?;
                if !map.identity {
                    let path = format!("/vms/{vmid}");
                    if !self.access.has_priv(&req.who, &path, "VM.Config.Disk") {
                        return Err(Error::permission(&path, &["VM.Config.Disk"]));
                    }
                }
                for sid in map.entries.values() {
                    self.check_storage_access_migrate(&req.who, sid, &req.target)?;
                }
                if let Some(sid) = &map.default {
                    self.check_storage_access_migrate(&req.who, sid, &req.target)?;
                }
                if map.identity {
                    self.check_storage_availability(&conf, &req.target)?;
                }
                Some(map)
            }
            None => {
                self.check_storage_availability(&conf, &req.target)?;
                None
            }
        };
        let bwlimit = crate::model::mtunnel::bandwidth_limit(
            self.storage,
            self.datacenter,
            self.access,
            Some(&req.who),
            "migration",
            &[],
            req.options.bwlimit.map(|b| b as f64),
        )
        .filter(|b| *b > 0.0)
        .map(|b| b.round() as u64);
        if let Some(vm) = self.guests.get_mut(&vmid) {
            vm.config.insert("lock".into(), "migrate".into());
        }
        Ok(
            Worker::new("qmigrate", &vmid.to_string()).effect(TaskEffect::Qemu {
                vmid,
                op: QemuOp::Migrate(Box::new(MigrateJob {
                    target: req.target,
                    online: running && req.online,
                    with_local_disks: req.with_local_disks,
                    storagemap,
                    started: req.now,
                    options: req.options,
                    bwlimit,
                })),
            }),
        )
    }

    /// `get_local_migration_ip` on `node`: its one address in `cidr`.
    ///
    /// # Errors
    /// `pvecm`'s message when it has none, or several different ones.
    fn migration_ip(&self, node: &str, cidr: &str) -> std::result::Result<String, String> {
        let mut ips: Vec<String> = self
            .network
            .get(node)
            .map(crate::model::network::NodeNetwork::addresses)
            .unwrap_or_default();
        if let Some(n) = self.nodes.iter().find(|n| n.name == node)
            && !ips.contains(&n.ip)
        {
            ips.push(n.ip.clone());
        }
        ips.retain(|ip| crate::model::ceph::daemons::in_cidr(ip, cidr));
        match ips.as_slice() {
            [] => Err(format!(
                "could not get migration ip: no IP address configured on local node for network '{cidr}'"
            )),
            [one] => Ok(one.clone()),
            _ => Err(format!(
                "could not get migration ip: multiple, different, IP address configured for network '{cidr}'"
            )),
        }
    }

    /// Undoes `lock: migrate` when the task fails without its effect.
    pub(in crate::model) fn abort_migrate(&mut self, vmid: u32) {
        if let Some(vm) = self.guests.get_mut(&vmid)
            && vm.lock() == Some("migrate")
        {
            vm.config.remove("lock");
        }
    }

    /// The end of `qmigrate`: scan, copy, move the config.
    pub(in crate::model) fn finish_migrate(
        &mut self,
        node: &str,
        vmid: u32,
        job: &MigrateJob,
        now: i64,
    ) -> EffectResult {
        let t0 = stamp(job.started);
        let t1 = stamp(now);
        let secs = (now - job.started).max(0);
        let duration = format!(
            "{:02}:{:02}:{:02}",
            secs / 3600,
            (secs / 60) % 60,
            secs % 60
        );
        let ip = self
            .nodes
            .iter()
            .find(|n| n.name == job.target)
            .map(|n| n.ip.clone())
            .unwrap_or_default();
        // AbstractMigrate: the type and network asked, else datacenter.cfg's;
        // with a network, the target's address in it (`pvecm mtunnel
        // -get_migration_ip` over SSH).
        let (dc_type, dc_network) = self.datacenter.migration();
        let migration_type = job
            .options
            .migration_type
            .clone()
            .or(dc_type)
            .unwrap_or_else(|| "secure".into());
        let network = job.options.migration_network.clone().or(dc_network);
        let ip = match &network {
            None => ip,
            Some(cidr) => match self.migration_ip(&job.target, cidr) {
                Ok(found) => found,
                Err(msg) => {
                    self.abort_migrate(vmid);
                    let ssh = [
                        "/usr/bin/ssh",
                        "-e",
                        "none",
                        "-o",
                        "BatchMode=yes",
                        "-o",
                        &format!("HostKeyAlias={}", job.target),
                        "-o",
                        &format!(
                            "UserKnownHostsFile=/etc/pve/nodes/{}/ssh_known_hosts",
                            job.target
                        ),
                        "-o",
                        "GlobalKnownHostsFile=none",
                        &format!("root@{ip}"),
                        "pvecm",
                        "mtunnel",
                        "-migration_network",
                        cidr,
                        "-get_migration_ip",
                    ]
                    .map(crate::model::backup::jobs::shell_quote)
                    .join(" ");
                    return Err((vec![msg], format!("command '{ssh}' failed: exit code 255")));
                }
            },
        };
        let (conf, conf_running) = match self.guests.get(&vmid) {
            Some(vm) => (vm.config.clone(), vm.running()),
            None => (BTreeMap::new(), false),
        };
        // prepare: the mapped devices must have an entry on the target,
        // and a live migration needs live-migratable ones.
        let node_names: Vec<String> = self.nodes.iter().map(|n| n.name.clone()).collect();
        let (mapped, missing) = self.mappings.mapped_resources(&conf, &node_names);
        let mut prepared: Lines = Vec::new();
        if !mapped.is_empty() {
            let lacking = missing.get(&job.target).cloned().unwrap_or_default();
            let not_live: Vec<String> = mapped
                .iter()
                .filter(|m| !m.live_migration)
                .map(|m| format!("{}:{}", m.key, m.name))
                .collect();
            let refusal = if !lacking.is_empty() {
                Some(format!(
                    "can't migrate to '{}': missing mapped devices {}",
                    job.target,
                    lacking.join(", ")
                ))
            } else if conf_running && !not_live.is_empty() {
                Some(format!(
                    "can't live migrate running VM which uses following mapped devices: {}",
                    not_live.join(", ")
                ))
            } else {
                None
            };
            if let Some(msg) = refusal {
                let log = vec![format!(
                    "{t1} ERROR: migration aborted (duration {duration}): {msg}"
                )];
                self.abort_migrate(vmid);
                return Err((log, "migration aborted".into()));
            }
            prepared.push(format!("{t0} migrating VM which uses mapped local devices"));
        }
        let mut log: Lines = prepared;
        log.push(format!(
            "{t0} starting migration of VM {vmid} to node '{}' ({ip})",
            job.target
        ));
        if network.is_some() {
            log.push(format!(
                "{t0} use dedicated network address for sending migration traffic ({ip})"
            ));
        }
        let Some(vm) = self.guests.get(&vmid) else {
            return Err((log, "migration aborted".into()));
        };
        let running = vm.running();
        let local: BTreeMap<String, VolUse> = volumes(vm)
            .into_iter()
            .filter(|(volid, u)| self.is_local_volume(volid, u))
            .collect();
        // scan_local_volumes
        let mut errors: Vec<(String, String)> = Vec::new();
        for (volid, u) in &local {
            if u.cdrom && !u.cloudinit {
                errors.push((volid.clone(), "local cdrom image".into()));
            }
            if u.attached && !u.cloudinit && running && !job.with_local_disks {
                errors.push((
                    volid.clone(),
                    "can't live migrate attached local disks without with-local-disks option"
                        .into(),
                ));
            }
            let what = if u.cloudinit && u.attached {
                format!("found generated disk '{volid}' (in current VM config)")
            } else if u.attached {
                format!("found local disk '{volid}' (attached)")
            } else if u.unused {
                format!("found local disk '{volid}' (unused)")
            } else if !u.snapshots.is_empty() {
                format!("found local disk '{volid}' (referenced by snapshot(s))")
            } else if u.pending {
                format!("found local disk '{volid}' (pending change)")
            } else {
                format!("found local disk '{volid}'")
            };
            log.push(format!("{t0} {what}"));
        }
        let mut problem = None;
        if !errors.is_empty() {
            for (volid, e) in &errors {
                log.push(format!("{t0} can't migrate local disk '{volid}': {e}"));
            }
            problem = Some("can't migrate VM - check log".to_string());
        } else {
            for volid in local.keys() {
                let Some((sid, _)) = parse_volid(volid) else {
                    continue;
                };
                let kind = self
                    .storage
                    .existing(sid)
                    .map(|s| s.kind.clone())
                    .unwrap_or_default();
                if !matches!(
                    kind.as_str(),
                    "dir" | "btrfs" | "zfspool" | "lvmthin" | "lvm"
                ) {
                    problem = Some(format!(
                        "can't migrate '{volid}' - storage type '{kind}' not supported"
                    ));
                    break;
                }
            }
        }
        if let Some(p) = problem {
            let msg = format!("Problem found while scanning volumes - {p}");
            log.push(format!("{t0} ERROR: {msg}"));
            log.push(format!("{t0} aborting phase 1 - cleanup resources"));
            log.push(format!(
                "{t1} ERROR: migration aborted (duration {duration}): {msg}"
            ));
            self.abort_migrate(vmid);
            return Err((log, "migration aborted".into()));
        }
        // sync_offline_local_volumes (and, for a live migration, the
        // attached disks: their data goes over NBD, the volumes move the
        // same way).
        let mut map: BTreeMap<String, String> = BTreeMap::new();
        if !local.is_empty() {
            log.push(format!("{t1} copying local disk images"));
        }
        for (volid, u) in &local {
            let Some((sid, name)) = parse_volid(volid) else {
                continue;
            };
            let target_sid = job
                .storagemap
                .as_ref()
                .map_or(sid, |m| m.target(sid))
                .to_string();
            let (new, lines) = if target_sid == sid {
                let s = self.storage.existing(sid).cloned();
                if !self.storage.transfer_volume(volid, node, &job.target) {
                    continue;
                }
                let mut lines = Vec::new();
                if let Ok(s) = s
                    && matches!(s.kind.as_str(), "lvmthin" | "lvm")
                {
                    let last = name.rsplit('/').next().unwrap_or(name);
                    lines.push(format!("  Logical volume \"{last}\" created."));
                }
                (volid.clone(), lines)
            } else {
                let size = self.storage.volume(volid, node).map_or(0, |v| v.size);
                let kind = if u.cloudinit {
                    VolumeKind::CloudInit
                } else {
                    VolumeKind::Disk
                };
                match self.storage.alloc_volume(
                    &target_sid,
                    &job.target,
                    vmid,
                    &kind,
                    None,
                    size,
                    now,
                ) {
                    Ok((new, lines)) => {
                        self.storage.free_volume(volid, node);
                        (new, lines)
                    }
                    Err(e) => {
                        let msg = format!(
                            "storage migration for '{volid}' to storage '{target_sid}' failed - {e}"
                        );
                        log.push(format!("{t1} ERROR: {msg}"));
                        log.push(format!("{t1} aborting phase 1 - cleanup resources"));
                        log.push(format!(
                            "{t1} ERROR: migration aborted (duration {duration}): {msg}"
                        ));
                        self.abort_migrate(vmid);
                        return Err((log, "migration aborted".into()));
                    }
                }
            };
            for l in lines {
                log.push(format!("{t1} {l}"));
            }
            log.push(format!("{t1} successfully imported '{new}'"));
            log.push(format!("{t1} volume '{volid}' is '{new}' on the target"));
            map.insert(volid.clone(), new);
        }
        if job.online {
            log.push(format!(
                "{t1} starting VM {vmid} on remote node '{}'",
                job.target
            ));
            log.push(format!("{t1} start remote tunnel"));
            log.push(format!("{t1} ssh tunnel ver 1"));
            let uri = if migration_type == "insecure" {
                let host = if ip.contains(':') {
                    format!("[{ip}]")
                } else {
                    ip.clone()
                };
                format!("tcp:{host}:60000")
            } else {
                format!("unix:/run/qemu-server/{vmid}.migrate")
            };
            log.push(format!("{t1} starting online/live migration on {uri}"));
            log.push(format!("{t1} set migration capabilities"));
            for line in live_limits(&conf, job.bwlimit) {
                log.push(format!("{t1} {line}"));
            }
            log.push(format!("{t1} set migration parameters"));
            log.push(format!("{t1} start migrate command to {uri}"));
        }
        // phase3_cleanup: update_volume_ids, move_config_to_node.
        if let Some(vm) = self.guests.get_mut(&vmid) {
            let update = |conf: &mut BTreeMap<String, String>| {
                for (k, v) in conf.iter_mut() {
                    if k.starts_with("unused") {
                        if let Some(n) = map.get(v.as_str()) {
                            v.clone_from(n);
                        }
                    } else if is_drive_key(k) {
                        let file = drive_file(v).to_string();
                        if let Some(n) = map.get(&file) {
                            *v = v.replacen(&file, n, 1);
                        }
                    }
                }
            };
            update(&mut vm.config);
            update(&mut vm.pending);
            for snap in vm.snapshots.values_mut() {
                update(snap);
            }
            vm.config.remove("lock");
            vm.node.clone_from(&job.target);
        }
        log.push(format!(
            "{t1} migration finished successfully (duration {duration})"
        ));
        Ok(log)
    }

    /// `GET .../migrate` (`migrate_vm_precondition`).
    ///
    /// # Errors
    /// A missing VM, a locked config.
    pub fn migrate_precondition(&self, node: &str, vmid: u32) -> Result<MigratePrecondition> {
        let vm = self.guests.vm(node, vmid)?;
        vm.check_lock()?;
        let running = vm.running();
        // check_local_resources: a mapped PCI device blocks only a live
        // migration of a device that cannot be live-migrated.
        let node_names: Vec<String> = self.nodes.iter().map(|n| n.name.clone()).collect();
        let (mapped, missing) = self.mappings.mapped_resources(&vm.config, &node_names);
        let mut local_resources: Vec<String> = Vec::new();
        for (k, v) in &vm.config {
            let host_spice = v
                .split(',')
                .any(|p| p.eq_ignore_ascii_case("host=spice") || p.eq_ignore_ascii_case("spice"));
            let unblocked_pci = k.starts_with("hostpci")
                && mapped
                    .iter()
                    .any(|m| m.key == *k && (m.live_migration || !running));
            if (k.starts_with("usb") && !host_spice)
                || (k.starts_with("hostpci") && !unblocked_pci)
                || k.starts_with("virtiofs")
                || k == "ivshmem"
                || ((k.starts_with("serial") || k.starts_with("parallel"))
                    && v.starts_with("/dev/"))
            {
                local_resources.push(k.clone());
            }
        }
        // check_local_storage_availability
        let mut unavailable: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (k, v) in &vm.config {
            if !is_drive_key(k) {
                continue;
            }
            let Some((sid, _)) = parse_volid(drive_file(v)) else {
                continue;
            };
            let Some(s) = self.storage.find(sid) else {
                continue;
            };
            for n in self.nodes {
                let blocked =
                    s.disable || s.nodes.as_ref().is_some_and(|list| !list.contains(&n.name));
                if blocked {
                    let e = unavailable.entry(n.name.clone()).or_default();
                    if !e.iter().any(|x| x == sid) {
                        e.push(sid.to_string());
                        e.sort();
                    }
                }
            }
        }
        let mut allowed = Vec::new();
        let mut not_allowed = Vec::new();
        for n in self.nodes {
            if n.name == node {
                continue;
            }
            let lacks = unavailable.get(&n.name).cloned();
            let unmapped = missing.get(&n.name).cloned().unwrap_or_default();
            if lacks.is_none() && unmapped.is_empty() {
                allowed.push(n.name.clone());
            }
            not_allowed.push(NotAllowed {
                node: n.name.clone(),
                unavailable_storages: lacks,
                unavailable_resources: unmapped,
            });
        }
        let local_disks = volumes(vm)
            .into_iter()
            .filter(|(volid, u)| self.is_local_volume(volid, u))
            .map(|(volid, mut usage)| {
                // The drive's `size=`; an unused disk has none, so the
                // volume's own size stands in (the schema requires one).
                usage.size = usage
                    .size
                    .or_else(|| self.storage.volume(&volid, node).map(|v| v.size));
                LocalDisk { volid, usage }
            })
            .collect();
        Ok(MigratePrecondition {
            running,
            allowed_nodes: allowed,
            not_allowed_nodes: not_allowed,
            local_disks,
            local_resources,
            mapped,
            dbus_vmstate: self.version.is_v9(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{StorageMap, stamp};

    #[test]
    fn stamps_and_maps() {
        assert_eq!(stamp(1_790_000_000), "2026-09-21 14:13:20");
        let m = StorageMap::parse("local-lvm:zfs,dir").expect("map");
        assert_eq!(m.target("local-lvm"), "zfs");
        assert_eq!(m.target("other"), "dir");
        assert!(StorageMap::parse("1").expect("identity").identity);
        assert!(StorageMap::parse("a,b").is_err());
    }
}
