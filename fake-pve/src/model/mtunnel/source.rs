//! The source side of a remote migration: the checks of
//! `remote_migrate_vm` and what the `qmigrate`/`vzmigrate` task reads and
//! changes of the local guest (`QemuMigrate.pm`, `LXC/Migrate.pm`,
//! `AbstractMigrate.pm`, `StorageTunnel.pm` `storage_migrate`).
//!
//! The task's log lines are PVE's; those with a time stamp are made by
//! the caller, which knows the time of each step (see [`stamp`]).

use std::collections::BTreeMap;

use super::{GuestType, is_volume_key, map_bridges, volume_of, with_volume};
use crate::model::access::AuthId;
use crate::model::cluster::Cluster;
use crate::model::qemu::{StorageMap, is_drive_key};
use crate::model::storage::parse_volid;
use crate::model::{Error, Result};

/// A remote migration as its task runs it.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// What moves.
    pub kind: GuestType,
    /// The guest's node here.
    pub node: String,
    /// The guest here.
    pub vmid: u32,
    /// Its VMID on the target (`target-vmid`, else the same).
    pub target_vmid: u32,
    /// The target's node (the one `/cluster/status` calls `local`).
    pub target_node: String,
    /// The endpoint's host, as the log names the target.
    pub host: String,
    /// A live migration of a running VM.
    pub online: bool,
    /// A restart migration of a running container.
    pub restart: bool,
    /// The shutdown timeout of a restart migration, seconds.
    pub timeout: u64,
    /// `delete`: the guest goes here once it is there.
    pub delete: bool,
    /// `target-storage`.
    pub storagemap: StorageMap,
    /// `target-bridge`.
    pub bridgemap: StorageMap,
    /// `bwlimit`, KiB/s.
    pub bwlimit: Option<f64>,
    /// Who asked.
    pub who: AuthId,
}

/// What `prepare` found: whether the guest runs, the target storages
/// and bridges to name to `mtunnel`, and the lines it logged.
#[derive(Debug, Clone, Default)]
pub struct Prepared {
    /// Whether it runs (and, for a VM, migrates live).
    pub running: bool,
    /// The target storages its volumes map to.
    pub storages: Vec<String>,
    /// The target bridges its NICs map to.
    pub bridges: Vec<String>,
    /// What it logged (time stamped by the caller).
    pub lines: Vec<String>,
}

/// One volume a migration moves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalVolume {
    /// The volume here.
    pub volid: String,
    /// Its storage here.
    pub sid: String,
    /// The storage it goes to.
    pub targetsid: String,
    /// Its size, bytes.
    pub size: u64,
    /// Its image format.
    pub format: String,
    /// The config key that names it (a VM's drive).
    pub drivename: Option<String>,
    /// Whether it moves with the running VM (over NBD) rather than
    /// before.
    pub online: bool,
}

/// The scan of a guest's volumes (`scan_local_volumes`, `phase1`'s
/// `test_volid`).
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// The storages each volume's bandwidth limit is asked for (one
    /// `bwlimit` command each, in this order): `(source, target)`.
    pub bwlimits: Vec<(String, String)>,
    /// The volumes that move, by volid.
    pub volumes: Vec<LocalVolume>,
    /// What the scan logged: `found ...`, and the volumes it cannot move.
    pub lines: Vec<String>,
    /// Why it stops the migration.
    pub error: Option<String>,
}

/// What `storage_migrate` sends the target for one volume
/// (`disk-import`), and the stream's size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumeExport {
    /// The name the volume should have there (its VMID replaced).
    pub volname: String,
    /// Its image format.
    pub format: String,
    /// The storage it goes to.
    pub storage: String,
    /// The transport formats this storage exports it in.
    pub export_formats: Vec<String>,
    /// Whether the stream carries snapshots.
    pub with_snapshots: bool,
    /// Whether a `__migration__` snapshot is taken for it.
    pub migration_snapshot: bool,
    /// The size the stream announces, bytes.
    pub size: u64,
}

/// The config the target gets, before the NBD disks are allocated there.
#[derive(Debug, Clone, Default)]
pub struct RemoteConf {
    /// Its main section, volumes and bridges mapped.
    pub conf: BTreeMap<String, String>,
    /// The NICs whose bridge was mapped: `(nic, from, to)`.
    pub mapped: Vec<(String, String, String)>,
    /// The drives that move live, to allocate there with `disk`.
    pub nbd: Vec<NbdDrive>,
}

/// A drive of a running VM that moves over NBD: allocated there first.
#[derive(Debug, Clone, Default)]
pub struct NbdDrive {
    /// Its config key (`scsi0`).
    pub key: String,
    /// Its volume here.
    pub volid: String,
    /// The storage it goes to.
    pub storage: String,
    /// Its image format.
    pub format: String,
    /// The drive's options (no `file`, no `format`; `size` in bytes).
    pub options: BTreeMap<String, String>,
}

/// `mapped: net0 from vmbr0 to vmbr1`, in the order PVE's hash walk
/// gives (here: by target bridge, then NIC).
pub fn mapped_lines(mapped: &[(String, String, String)]) -> Vec<String> {
    let mut m: Vec<&(String, String, String)> = mapped.iter().collect();
    m.sort_by(|a, b| (&a.2, &a.0).cmp(&(&b.2, &b.0)));
    m.into_iter()
        .map(|(nic, from, to)| format!("mapped: {nic} from {from} to {to}"))
        .collect()
}

/// The last line of the migration's log: `migration finished
/// successfully (duration 00:00:05)`.
pub fn finished_line(secs: i64) -> String {
    format!(
        "migration finished successfully (duration {})",
        duration(secs)
    )
}

/// `HH:MM:SS` of a number of seconds, as `AbstractMigrate` prints it.
pub fn duration(secs: i64) -> String {
    let s = secs.max(0);
    format!("{:02}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
}

/// The config keys that tie a VM to this node's hardware
/// (`check_local_resources`), as `GET .../migrate` lists them.
fn local_resources(conf: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in conf {
        let host_spice = v
            .split(',')
            .any(|p| p.eq_ignore_ascii_case("host=spice") || p.eq_ignore_ascii_case("spice"));
        if (k.starts_with("usb") && !host_spice)
            || k.starts_with("hostpci")
            || k.starts_with("virtiofs")
            || k == "ivshmem"
            || ((k.starts_with("serial") || k.starts_with("parallel")) && v.starts_with("/dev/"))
        {
            out.push(k.clone());
        }
    }
    out
}

impl Cluster {
    /// The guest's config here.
    fn guest_conf(
        &self,
        kind: GuestType,
        node: &str,
        vmid: u32,
    ) -> Result<&BTreeMap<String, String>> {
        Ok(match kind {
            GuestType::Qemu => &self.guests.vm(node, vmid)?.config,
            GuestType::Lxc => &self.guests.ct(node, vmid)?.config,
        })
    }

    fn guest_running(&self, kind: GuestType, vmid: u32) -> bool {
        match kind {
            GuestType::Qemu => self.guests.get(&vmid).is_some_and(|v| v.running()),
            GuestType::Lxc => self.guests.ct_by_id(vmid).is_some_and(|c| c.running()),
        }
    }

    /// `remote_migrate_vm`'s checks before it reaches the target: quorum,
    /// the guest and its lock, a running container without `online` or
    /// `restart`, HA.
    ///
    /// # Errors
    /// `cluster not ready - no quorum?`, `Configuration file ... does not
    /// exist`, `VM is locked (...)`, `can't migrate running container
    /// without --online or --restart`, `vmid: cannot remote-migrate VM
    /// that is configured for HA`.
    pub fn remote_migrate_check(
        &self,
        kind: GuestType,
        node: &str,
        vmid: u32,
        online: bool,
        restart: bool,
    ) -> Result<()> {
        if !self.nodes.quorate() {
            return Err(Error::failed("cluster not ready - no quorum?"));
        }
        match kind {
            GuestType::Qemu => self.guests.vm(node, vmid)?.check_lock()?,
            GuestType::Lxc => {
                let ct = self.guests.ct(node, vmid)?;
                ct.check_lock()?;
                if ct.running() && !online && !restart {
                    return Err(Error::failed(
                        "can't migrate running container without --online or --restart",
                    ));
                }
            }
        }
        let sid = match kind {
            GuestType::Qemu => format!("vm:{vmid}"),
            GuestType::Lxc => format!("ct:{vmid}"),
        };
        if self.ha.resources().contains_key(&sid) {
            return Err(Error::invalid(
                "vmid",
                format!(
                    "cannot remote-migrate {} that is configured for HA",
                    kind.noun()
                ),
            ));
        }
        Ok(())
    }

    /// A VM's further checks once the target answered: replication, and
    /// whether it migrates live (`online` is ignored for a stopped VM).
    ///
    /// # Errors
    /// `cannot remote-migrate replicated VM`, `can't migrate running VM
    /// without --online`.
    pub fn remote_migrate_online(&self, vmid: u32, online: bool) -> Result<bool> {
        if self.replication.jobs().values().any(|j| j.guest() == vmid) {
            return Err(Error::failed("cannot remote-migrate replicated VM"));
        }
        let running = self.guests.get(&vmid).is_some_and(|v| v.running());
        if running && !online {
            return Err(Error::failed("can't migrate running VM without --online"));
        }
        Ok(running && online)
    }

    /// The custom CPU model (`custom-<name>`) a VM's `cpu` names, whose
    /// definition the target must have.
    pub fn remote_custom_cpu(&self, vmid: u32) -> Option<String> {
        let cpu = self.guests.get(&vmid)?.config.get("cpu")?;
        let cputype = cpu.split(',').find_map(|p| match p.split_once('=') {
            Some(("cputype", v)) => Some(v),
            None => Some(p),
            _ => None,
        })?;
        cputype.strip_prefix("custom-").map(str::to_string)
    }

    /// A custom CPU model's definition here (`get_custom_model`): its
    /// properties Perl takes as true, as text.
    pub fn custom_cpu_model(&self, name: &str) -> Option<BTreeMap<String, String>> {
        let m = self.cpu_models.info(name).ok()?;
        let mut out = BTreeMap::new();
        for (k, v) in m.truthy_settings() {
            let v = match v {
                crate::model::qemu::cpu_models::Setting::Text(t) => t,
                crate::model::qemu::cpu_models::Setting::Number(n) => n.to_string(),
                crate::model::qemu::cpu_models::Setting::Flag(b) => u8::from(b).to_string(),
            };
            out.insert(k.to_string(), v);
        }
        Some(out)
    }

    /// `prepare`: the guest, its lock and power state, its local devices
    /// and mount points, the storages of its volumes (enabled here, mapped
    /// to the target's) and its bridges, mapped.
    ///
    /// # Errors
    /// PVE's refusal, as the migration's log gives it.
    pub fn remote_prepare(&self, job: &Outgoing) -> std::result::Result<Prepared, String> {
        let conf = self
            .guest_conf(job.kind, &job.node, job.vmid)
            .map_err(|e| e.to_string())?;
        match job.kind {
            GuestType::Qemu => {
                self.guests
                    .vm(&job.node, job.vmid)
                    .and_then(|v| v.check_lock())
                    .map_err(|e| e.to_string())?;
            }
            GuestType::Lxc => {
                self.guests
                    .ct(&job.node, job.vmid)
                    .and_then(|c| c.check_lock())
                    .map_err(|e| e.to_string())?;
            }
        }
        let running = self.guest_running(job.kind, job.vmid);
        let mut out = Prepared {
            running,
            ..Prepared::default()
        };
        match job.kind {
            GuestType::Qemu => {
                if running && !job.online {
                    return Err("can't migrate running VM without --online".into());
                }
                if running && self.version.is_v9() {
                    out.lines.push(
                        "conntrack state migration not supported or disabled, active connections might get dropped"
                            .into(),
                    );
                }
                let (mapped, missing) = self
                    .mappings
                    .mapped_resources(conf, std::slice::from_ref(&job.target_node));
                let blocking: Vec<String> = local_resources(conf)
                    .into_iter()
                    .filter(|k| !mapped.iter().any(|m| &m.key == k))
                    .collect();
                if !blocking.is_empty() {
                    return Err(format!(
                        "can't migrate VM which uses local devices: {}",
                        blocking.join(", ")
                    ));
                }
                if !mapped.is_empty() {
                    let lacking = missing.get(&job.target_node).cloned().unwrap_or_default();
                    let not_live: Vec<String> = mapped
                        .iter()
                        .filter(|m| !m.live_migration)
                        .map(|m| format!("{}:{}", m.key, m.name))
                        .collect();
                    if !lacking.is_empty() {
                        return Err(format!(
                            "can't migrate to '{}': missing mapped devices {}",
                            job.target_node,
                            lacking.join(", ")
                        ));
                    } else if running && !not_live.is_empty() {
                        return Err(format!(
                            "can't live migrate running VM which uses following mapped devices: {}",
                            not_live.join(", ")
                        ));
                    }
                    out.lines
                        .push("migrating VM which uses mapped local devices".into());
                }
                for (k, v) in conf {
                    if !is_volume_key(job.kind, k) {
                        continue;
                    }
                    let Some(volid) = volume_of(job.kind, k, v) else {
                        continue;
                    };
                    if volid.starts_with('/') || volid == "none" || volid == "cdrom" {
                        continue;
                    }
                    let Some((sid, _)) = parse_volid(&volid) else {
                        continue;
                    };
                    self.storage_enabled(sid)?;
                    let target = job.storagemap.target(sid).to_string();
                    if !out.storages.contains(&target) {
                        out.storages.push(target);
                    }
                }
            }
            GuestType::Lxc => {
                if running {
                    if job.online {
                        return Err("lxc live migration is currently not implemented".into());
                    }
                    if !job.restart {
                        return Err("running container can only be migrated in restart mode".into());
                    }
                }
                for (k, v) in conf {
                    if !crate::model::lxc::schema::is_volume_key(k) {
                        continue;
                    }
                    let Some(volid) = volume_of(job.kind, k, v) else {
                        return Err(format!("missing volume for mount point '{k}'"));
                    };
                    if volid.starts_with('/') {
                        let shared = v.split(',').any(|p| p == "shared=1");
                        if shared {
                            continue;
                        }
                        let what = if volid.starts_with("/dev/") {
                            "device"
                        } else {
                            "bind"
                        };
                        return Err(format!("cannot migrate local {what} mount point '{k}'"));
                    }
                    let Some((sid, _)) = parse_volid(&volid) else {
                        return Err(format!(
                            "can't determine assigned storage for mount point '{k}'"
                        ));
                    };
                    let s = self.storage_enabled(sid)?;
                    if !s.content.iter().any(|c| c == "rootdir") {
                        return Err(format!(
                            "content type 'rootdir' is not available on storage '{sid}'"
                        ));
                    }
                    let target = job.storagemap.target(sid).to_string();
                    if !out.storages.contains(&target) {
                        out.storages.push(target);
                    }
                }
            }
        }
        let mut conf = conf.clone();
        for (_, _, to) in map_bridges(&mut conf, &job.bridgemap) {
            if !out.bridges.contains(&to) {
                out.bridges.push(to);
            }
        }
        Ok(out)
    }

    /// `storage_check_enabled` without a node: the storage exists and is
    /// not disabled.
    fn storage_enabled(
        &self,
        sid: &str,
    ) -> std::result::Result<&crate::model::cluster::Storage, String> {
        let s = self.storage.existing(sid).map_err(|e| e.to_string())?;
        if s.disable {
            return Err(format!("storage '{sid}' is disabled"));
        }
        Ok(s)
    }

    /// A restart migration shuts the running container down before its
    /// volumes move.
    pub fn remote_shutdown(&mut self, vmid: u32) {
        if let Some(ct) = self.guests.ct_by_id_mut(vmid) {
            ct.set_stopped();
        }
    }

    /// A container stopped for a restart migration that did not happen
    /// starts again here; a guest that was not moved loses its
    /// `lock: migrate`.
    pub fn remote_abort(&mut self, job: &Outgoing, start_again: bool, now_ms: i64) {
        let conf = match job.kind {
            GuestType::Qemu => self.guests.get_mut(&job.vmid).map(|v| &mut v.config),
            GuestType::Lxc => self.guests.ct_by_id_mut(job.vmid).map(|c| &mut c.config),
        };
        if let Some(conf) = conf
            && conf.get("lock").is_some_and(|l| l == "migrate")
        {
            conf.remove("lock");
        }
        if start_again && job.kind == GuestType::Lxc {
            let _ = self.apply_lxc(
                job.vmid,
                crate::model::lxc::LxcOp::Start { skiplock: true },
                now_ms,
            );
        }
    }

    /// `phase1`'s start: the guest locked `migrate`.
    pub fn remote_lock(&mut self, job: &Outgoing) {
        let conf = match job.kind {
            GuestType::Qemu => self.guests.get_mut(&job.vmid).map(|v| &mut v.config),
            GuestType::Lxc => self.guests.ct_by_id_mut(job.vmid).map(|c| &mut c.config),
        };
        if let Some(conf) = conf {
            conf.insert("lock".into(), "migrate".into());
        }
    }

    /// `scan_local_volumes` (a VM) or `phase1`'s volume checks (a
    /// container): every volume of the config, its pending changes and
    /// snapshots; for a remote migration every storage counts as local.
    pub fn remote_scan(&self, job: &Outgoing, running: bool) -> Scan {
        match job.kind {
            GuestType::Qemu => self.remote_scan_vm(job, running),
            GuestType::Lxc => self.remote_scan_ct(job),
        }
    }

    fn remote_scan_vm(&self, job: &Outgoing, running: bool) -> Scan {
        let mut scan = Scan::default();
        let Some(vm) = self.guests.get(&job.vmid) else {
            scan.error = Some(format!(
                "Problem found while scanning volumes - {}",
                crate::model::qemu::config_missing(&job.node, job.vmid)
            ));
            return scan;
        };
        let mut refs: BTreeMap<String, &'static str> = BTreeMap::new();
        let mut errors: BTreeMap<String, String> = BTreeMap::new();
        let mut other: Vec<String> = Vec::new();
        for (volid, u) in crate::model::qemu::vm_volumes(vm) {
            if volid.starts_with('/') {
                refs.insert(volid.clone(), "config");
                errors.insert(volid, "local file/device".into());
                continue;
            }
            if u.cdrom && !u.cloudinit {
                if volid == "cdrom" {
                    other.push("can't migrate local cdrom drive".into());
                    continue;
                }
                if volid == "none" {
                    continue;
                }
            }
            let Some((sid, _)) = parse_volid(&volid) else {
                continue;
            };
            if let Err(e) = self.storage_enabled(sid) {
                errors.insert(volid, e);
                continue;
            }
            let targetsid = job.storagemap.target(sid).to_string();
            let r = if u.cloudinit && u.attached {
                "generated"
            } else if u.attached {
                "attached"
            } else if u.unused {
                "unused"
            } else if !u.snapshots.is_empty() {
                "snapshot"
            } else if u.pending {
                "pending"
            } else {
                "other"
            };
            refs.insert(volid.clone(), r);
            scan.bwlimits.push((sid.to_string(), targetsid.clone()));
            let vol = self.storage.volume(&volid, &job.node);
            let size = vol.map(|v| v.size).or(u.size).unwrap_or(0);
            let format = vol.map_or_else(|| "raw".to_string(), |v| v.format.clone());
            if u.cdrom {
                if u.cloudinit {
                    refs.insert(volid.clone(), "generated");
                } else {
                    errors.insert(volid, "local cdrom image".into());
                    continue;
                }
            }
            if let Some(v) = vol
                && v.vmid != job.vmid
            {
                errors.insert(volid, format!("owned by other VM (owner = VM {})", v.vmid));
                continue;
            }
            if !u.snapshots.is_empty() {
                if running {
                    errors.insert(
                        volid,
                        "online storage migration not possible if non-replicated snapshot exists"
                            .into(),
                    );
                } else {
                    errors.insert(
                        volid,
                        "remote migration with snapshots not supported yet".into(),
                    );
                }
                continue;
            }
            let online = running && r == "attached";
            scan.volumes.push(LocalVolume {
                volid: volid.clone(),
                sid: sid.to_string(),
                targetsid,
                size,
                format,
                drivename: u.drivename.clone(),
                online,
            });
        }
        for (volid, r) in &refs {
            scan.lines.push(match *r {
                "attached" => format!("found local disk '{volid}' (attached)"),
                "unused" => format!("found local disk '{volid}' (unused)"),
                "snapshot" => format!("found local disk '{volid}' (referenced by snapshot(s))"),
                "pending" => format!("found local disk '{volid}' (pending change)"),
                "generated" => format!("found generated disk '{volid}' (in current VM config)"),
                _ => format!("found local disk '{volid}'"),
            });
        }
        for (volid, e) in &errors {
            scan.lines
                .push(format!("can't migrate local disk '{volid}': {e}"));
        }
        scan.lines.extend(other.iter().cloned());
        if !errors.is_empty() || !other.is_empty() {
            scan.error =
                Some("Problem found while scanning volumes - can't migrate VM - check log".into());
            scan.volumes.clear();
        }
        scan
    }

    fn remote_scan_ct(&self, job: &Outgoing) -> Scan {
        let mut scan = Scan::default();
        let Some(ct) = self.guests.ct_by_id(job.vmid) else {
            scan.error = Some(crate::model::lxc::config_missing(&job.node, job.vmid).to_string());
            return scan;
        };
        let mut found: BTreeMap<String, &'static str> = BTreeMap::new();
        let mut errors: BTreeMap<String, String> = BTreeMap::new();
        let mut sizes: BTreeMap<String, u64> = BTreeMap::new();
        let mut test = |volid: &str, snapshot: bool, scan: &mut Scan| {
            let Some((sid, _)) = parse_volid(volid) else {
                return;
            };
            if let Err(e) = self.storage_enabled(sid) {
                errors.entry(volid.to_string()).or_insert(e);
                return;
            }
            let targetsid = job.storagemap.target(sid).to_string();
            scan.bwlimits.push((sid.to_string(), targetsid));
            let r = if snapshot { "snapshot" } else { "config" };
            found.entry(volid.to_string()).or_insert(r);
            let vol = self.storage.volume(volid, &job.node);
            if let Some(v) = vol {
                sizes.insert(volid.to_string(), v.size);
                if v.vmid != job.vmid {
                    errors
                        .entry(volid.to_string())
                        .or_insert(format!("owned by other guest (owner = {})", v.vmid));
                    return;
                }
            }
            if snapshot {
                errors
                    .entry(volid.to_string())
                    .or_insert("remote migration with snapshots not supported yet".into());
            }
        };
        for snap in ct.snapshots.values() {
            for (k, v) in snap {
                if crate::model::lxc::schema::is_mount_key(k)
                    && let Some(vol) = volume_of(job.kind, k, v)
                    && !vol.starts_with('/')
                {
                    test(&vol, true, &mut scan);
                }
            }
        }
        for (k, v) in ct.pending.iter().chain(ct.config.iter()) {
            if crate::model::lxc::schema::is_volume_key(k)
                && let Some(vol) = volume_of(job.kind, k, v)
                && !vol.starts_with('/')
            {
                test(&vol, false, &mut scan);
            }
        }
        for volid in found.keys() {
            let Some((sid, _)) = parse_volid(volid) else {
                continue;
            };
            let kind = self
                .storage
                .find(sid)
                .map(|s| s.kind.clone())
                .unwrap_or_default();
            let movable = matches!(
                kind.as_str(),
                "dir" | "zfspool" | "lvmthin" | "lvm" | "btrfs" | "cifs" | "nfs" | "rbd"
            );
            if !movable {
                errors
                    .entry(volid.clone())
                    .or_insert(format!("storage type '{kind}' not supported"));
            }
        }
        for (volid, r) in &found {
            scan.lines.push(match *r {
                "snapshot" => format!("found local volume '{volid}' (referenced by snapshot(s))"),
                _ => format!("found local volume '{volid}' (in current VM config)"),
            });
        }
        for (volid, e) in &errors {
            scan.lines
                .push(format!("can't migrate local volume '{volid}': {e}"));
        }
        if !errors.is_empty() {
            scan.error = Some("can't migrate CT - check log".into());
            return scan;
        }
        for volid in found.keys() {
            let Some((sid, _)) = parse_volid(volid) else {
                continue;
            };
            let vol = self.storage.volume(volid, &job.node);
            scan.volumes.push(LocalVolume {
                volid: volid.clone(),
                sid: sid.to_string(),
                targetsid: job.storagemap.target(sid).to_string(),
                size: sizes.get(volid).copied().unwrap_or(0),
                format: vol.map_or_else(|| "raw".to_string(), |v| v.format.clone()),
                drivename: None,
                online: false,
            });
        }
        scan
    }

    /// `storage_migrate`'s `disk-import` of one volume: its name there,
    /// its formats, the size its stream announces.
    ///
    /// # Errors
    /// `no export formats for '<volid>' - check storage plugin support!`.
    pub fn remote_export(
        &self,
        job: &Outgoing,
        vol: &LocalVolume,
    ) -> std::result::Result<VolumeExport, String> {
        let s = self
            .storage
            .find(&vol.sid)
            .ok_or_else(|| crate::model::storage::no_such_storage(&vol.sid).to_string())?;
        let name = parse_volid(&vol.volid).map_or("", |(_, n)| n);
        let owner = self
            .storage
            .volume(&vol.volid, &job.node)
            .map_or(job.vmid, |v| v.vmid);
        let mut volname = name.to_string();
        if owner != job.target_vmid {
            volname = volname.replace(&format!("-{owner}-"), &format!("-{}-", job.target_vmid));
            if let Some(rest) = volname.strip_prefix(&format!("{owner}/")) {
                volname = rest.to_string();
            }
        }
        let mut with_snapshots =
            job.kind == GuestType::Qemu && matches!(vol.format.as_str(), "qcow2" | "vmdk");
        let migration_snapshot = s.kind == "zfspool";
        if migration_snapshot {
            with_snapshots = true;
        }
        let formats: Vec<String> =
            super::commands::transfer_formats(&s.kind, &vol.format, with_snapshots)
                .into_iter()
                .map(str::to_string)
                .collect();
        if formats.is_empty() {
            return Err(format!(
                "no export formats for '{}' - check storage plugin support!",
                vol.volid
            ));
        }
        Ok(VolumeExport {
            volname,
            format: vol.format.clone(),
            storage: vol.targetsid.clone(),
            export_formats: formats,
            with_snapshots,
            migration_snapshot,
            size: vol.size,
        })
    }

    /// `phase1_remote`: the config as it is here now, its volumes
    /// renamed to what the target made of them and its bridges mapped;
    /// the drives of a live migration are still to be allocated there.
    pub fn remote_conf(
        &self,
        job: &Outgoing,
        volume_map: &BTreeMap<String, String>,
        online: &[LocalVolume],
    ) -> RemoteConf {
        let Ok(conf) = self.guest_conf(job.kind, &job.node, job.vmid) else {
            return RemoteConf::default();
        };
        let mut conf = conf.clone();
        for (k, v) in conf.iter_mut() {
            if !is_volume_key(job.kind, k) {
                continue;
            }
            if let Some(old) = volume_of(job.kind, k, v)
                && let Some(new) = volume_map.get(&old)
            {
                *v = with_volume(v, &old, new);
            }
        }
        let mapped = map_bridges(&mut conf, &job.bridgemap);
        let mut nbd = Vec::new();
        for vol in online {
            let Some(ds) = vol.drivename.clone() else {
                continue;
            };
            let Some(value) = conf.get(&ds) else {
                continue;
            };
            if !is_drive_key(&ds) {
                continue;
            }
            let mut opts: BTreeMap<String, String> = BTreeMap::new();
            for (i, part) in value.split(',').enumerate() {
                match part.split_once('=') {
                    Some(("file" | "format", _)) => {}
                    Some(("size", v)) => {
                        let bytes = crate::model::size::parse_size(v).unwrap_or(vol.size);
                        opts.insert("size".into(), bytes.to_string());
                    }
                    Some((k, v)) => {
                        opts.insert(k.to_string(), v.to_string());
                    }
                    None if i == 0 => {}
                    None => {}
                }
            }
            opts.entry("size".into())
                .or_insert_with(|| vol.size.to_string());
            nbd.push(NbdDrive {
                key: ds,
                volid: vol.volid.clone(),
                storage: vol.targetsid.clone(),
                format: vol.format.clone(),
                options: opts,
            });
        }
        RemoteConf { conf, mapped, nbd }
    }

    /// The config file the target gets (`write_vm_config`,
    /// `write_pct_config`): `conf` as the guest's main section.
    pub fn remote_conf_text(&self, job: &Outgoing, conf: &BTreeMap<String, String>) -> String {
        match job.kind {
            GuestType::Qemu => crate::model::qemu::Vm::new(
                job.vmid,
                &job.node,
                crate::model::qemu::VmStatus::Stopped,
                conf.clone(),
            )
            .config_text(),
            GuestType::Lxc => {
                crate::model::lxc::Ct::new(job.vmid, &job.node, conf.clone()).config_text()
            }
        }
    }

    /// The local bandwidth limit of moving a volume of `sid`
    /// (`get_bwlimit`: the source storage's, the datacenter's, the
    /// override for who may give one), KiB/s.
    pub fn remote_bwlimit(&self, job: &Outgoing, sid: &str) -> Option<f64> {
        super::bandwidth_limit(
            &self.storage,
            &self.datacenter,
            &self.access,
            Some(&job.who),
            "migration",
            &[sid.to_string()],
            job.bwlimit,
        )
    }

    /// The sizes of a VM's drives, bytes, by key (a live migration's
    /// mirror jobs).
    pub fn remote_drive_sizes(&self, job: &Outgoing) -> BTreeMap<String, u64> {
        let Some(vm) = self.guests.get(&job.vmid) else {
            return BTreeMap::new();
        };
        vm.config
            .iter()
            .filter(|(k, _)| is_drive_key(k))
            .map(|(k, v)| {
                let file = crate::model::qemu::drive_file(v);
                let size = self
                    .storage
                    .volume(file, &job.node)
                    .map(|x| x.size)
                    .or_else(|| {
                        v.split(',')
                            .find_map(|p| p.strip_prefix("size="))
                            .and_then(crate::model::size::parse_size)
                    })
                    .unwrap_or(0);
                (k.clone(), size)
            })
            .collect()
    }

    /// What a live migration's settings come from: the VM's memory
    /// (bytes), its `migrate_speed` (MB/s) and `migrate_downtime`
    /// (seconds).
    pub fn remote_live_settings(&self, job: &Outgoing) -> (u64, Option<f64>, Option<f64>) {
        let Some(vm) = self.guests.get(&job.vmid) else {
            return (512 << 20, None, None);
        };
        let get = |k: &str| vm.config.get(k).and_then(|v| v.parse::<f64>().ok());
        (vm.maxmem(), get("migrate_speed"), get("migrate_downtime"))
    }

    /// The VM here stops once its instance there took over (`vm_stop`
    /// with `nocheck`): it keeps `lock: migrate`.
    pub fn remote_stop_local(&mut self, job: &Outgoing) {
        if job.kind == GuestType::Qemu
            && let Some(vm) = self.guests.get_mut(&job.vmid)
        {
            crate::model::qemu::power_off(vm);
        }
    }

    /// The end of a successful migration here: with `delete` the guest
    /// goes with its volumes (else it stays, stopped and locked
    /// `migrate`). Answers what that printed.
    pub fn remote_finish(&mut self, job: &Outgoing) -> Vec<String> {
        let mut lines = Vec::new();
        match job.kind {
            GuestType::Qemu => {
                if job.delete {
                    match self
                        .vm_ops()
                        .destroy(&job.node, job.vmid, true, false, false)
                    {
                        Ok(l) => lines.extend(l),
                        Err((l, e)) => {
                            lines.extend(l);
                            lines.push(format!("Failed to remove source VM - {e}"));
                        }
                    }
                }
            }
            GuestType::Lxc => {
                if let Some(ct) = self.guests.ct_by_id_mut(job.vmid) {
                    ct.set_stopped();
                }
                if job.delete {
                    if let Some(ct) = self.guests.ct_by_id_mut(job.vmid) {
                        ct.config.remove("lock");
                    }
                    match self
                        .ct_ops()
                        .finish_ct_destroy(&job.node, job.vmid, false, false, true)
                    {
                        Ok(l) => lines.extend(l),
                        Err((l, e)) => {
                            lines.extend(l);
                            lines.push(e);
                        }
                    }
                }
            }
        }
        lines
    }
}
