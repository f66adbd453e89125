//! Clones and templates (qemu-server `API2/Qemu.pm` `clone_vm` and
//! `template`, `QemuServer.pm` `clone_disk` and `template_create`).
//!
//! A clone checks synchronously what PVE's `load_and_check` checks, then
//! its task takes the source's file lock (exclusive when the source runs,
//! shared otherwise, so that many clones of a template run at once),
//! creates the target config as `lock: clone`, and when it ends copies or
//! links the disks and writes the target's config.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::VmOps;
use super::{
    EffectResult, Error, QemuOp, Result, TaskEffect, Vm, Worker, drive_file, drive_is_cdrom,
    drive_order, drive_with, is_disk, is_drive_key, lock_timeout, uuid,
};
use crate::model::AuthId;
use crate::model::Context;
use crate::model::storage::ops::Feature;
use crate::model::storage::{VolumeKind, parse_volid, path_based};
use crate::spec::propstring;

/// What `POST .../clone` asks for.
#[derive(Debug, Clone, Default)]
pub struct CloneRequest {
    /// The source's node (resolved).
    pub node: String,
    /// The source.
    pub vmid: u32,
    /// The clone.
    pub newid: u32,
    /// `name`.
    pub name: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `pool`: the pool the clone joins.
    pub pool: Option<String>,
    /// `snapname`: clone this snapshot's state.
    pub snapname: Option<String>,
    /// `storage` (full clones only).
    pub storage: Option<String>,
    /// `format` (full clones only).
    pub format: Option<String>,
    /// `full`; defaults to "not a template".
    pub full: Option<bool>,
    /// `target` node.
    pub target: Option<String>,
    /// The caller, for the storage permission checks.
    pub who: Option<AuthId>,
    /// `bwlimit` (KiB/s).
    pub bwlimit: Option<u64>,
}

/// One disk of a clone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloneDrive {
    /// The drive key (`scsi0`).
    pub key: String,
    /// The source drive as configured.
    pub value: String,
    /// Full copy (else linked).
    pub full: bool,
}

/// The work a clone task does when it ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloneJob {
    /// The clone.
    pub newid: u32,
    /// The source's node.
    pub node: String,
    /// The node the clone's config moves to.
    pub target: Option<String>,
    /// The target's config without its disks.
    pub conf: BTreeMap<String, String>,
    /// The disks to copy or link, in PVE's (sorted) order.
    pub drives: Vec<CloneDrive>,
    /// Target storage of full copies.
    pub storage: Option<String>,
    /// Target format of full copies.
    pub format: Option<String>,
    /// Whether the source ran (drive-mirror instead of qemu-img).
    pub running: bool,
    /// Cloned from a snapshot.
    pub snapname: Option<String>,
    /// Pending keys that are discarded.
    pub pending: Vec<String>,
    /// Whether the source's file lock is held exclusively.
    pub exclusive: bool,
    /// The pool the clone joins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
    /// `bwlimit` as the call gave it (KiB/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bwlimit: Option<u64>,
    /// Who clones (whether they may override the storages' limits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub who: Option<String>,
}

/// Keys a clone does not copy.
const SNAPSHOT_KEYS: &[&str] = &[
    "snapshots",
    "parent",
    "snaptime",
    "vmstate",
    "snapstate",
    "runningcpu",
    "runningmachine",
    "running-nets-host-mtu",
];

/// `drive_is_cloudinit`.
pub(super) fn is_cloudinit(value: &str) -> bool {
    let file = drive_file(value);
    file.rsplit([':', '/']).next().is_some_and(|n| {
        n.starts_with("vm-")
            && n.split('.')
                .next()
                .is_some_and(|b| b.ends_with("-cloudinit"))
    })
}

/// PVE's `render_bytes($v, 1)`.
pub(super) fn render_bytes1(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    if bytes > 1023 {
        i = ((v.ln() / 1024f64.ln()) as usize).min(units.len() - 1);
        v /= 1024f64.powi(i32::try_from(i).unwrap_or(0));
    }
    format!("{v:.1} {}", units[i])
}

/// `PVE::Format::render_duration`: `1h 2m 3s`, `0s`.
pub(super) fn render_duration(secs: u64) -> String {
    if secs == 0 {
        return "0s".into();
    }
    let mut rest = secs;
    let mut parts = Vec::new();
    for (unit, len) in [
        ("w", 7 * 86_400),
        ("d", 86_400),
        ("h", 3600),
        ("m", 60),
        ("s", 1),
    ] {
        let v = rest / len;
        if v > 0 {
            parts.push(format!("{v}{unit}"));
            rest -= v * len;
        }
    }
    parts.join(" ")
}

/// What a drive mirror of `size` bytes logs until it is ready
/// (`qemu_drive_mirror`, `qemu_drive_mirror_monitor`): its start (with
/// the bandwidth limit in KiB/s it runs with, if any), and the transfer,
/// which takes as long as the limit lets it (a second without one).
pub(super) fn mirror_lines(dev: &str, size: u64, limit: Option<u64>) -> Vec<String> {
    let total = render_bytes1(size);
    let (start, secs) = match limit.filter(|l| *l > 0) {
        Some(l) => (
            format!("drive mirror is starting for {dev} with bandwidth limit: {l} KiB/s"),
            size.div_ceil(l * 1024).max(1),
        ),
        None => (format!("drive mirror is starting for {dev}"), 1),
    };
    vec![
        start,
        format!(
            "{dev}: transferred {total} of {total} (100.00%) in {}, ready",
            render_duration(secs)
        ),
    ]
}

impl VmOps<'_> {
    /// The synchronous part of `clone_vm` plus the start of its worker:
    /// refuses what PVE refuses before forking, then takes the source's
    /// file lock and creates the target config with `lock: clone`.
    ///
    /// # Errors
    /// PVE's synchronous refusals (see PVE-ANSWERS Part 1 §3).
    pub fn clone_vm(&mut self, req: CloneRequest, rq: &mut Context) -> Result<Worker> {
        let CloneRequest {
            node, vmid, newid, ..
        } = req.clone();
        let target = req
            .target
            .clone()
            .filter(|t| *t != node && t != "localhost");
        if let Some(pool) = &req.pool {
            self.access.check_pool_exist(pool)?;
        }
        if let Some(t) = &target
            && !self.nodes.iter().any(|n| n.name == *t)
        {
            return Err(Error::not_found(format!("no such cluster node '{t}'")));
        }
        if let Some(sid) = &req.storage {
            let s = self.storage.usable_storage(sid, &node)?;
            if !s.content.iter().any(|c| c == "images") {
                return Err(Error::invalid(
                    "storage",
                    format!("storage '{sid}' does not support vm images"),
                ));
            }
            let shared = s.shared;
            if let Some(t) = &target {
                self.storage.usable_storage(sid, t)?;
                if !shared {
                    return Err(Error::failed(format!(
                        "can't clone to non-shared storage '{sid}'"
                    )));
                }
            }
        }
        let vm = self.guests.vm(&node, vmid)?;
        vm.check_lock()?;
        let running = vm.running();
        if let Some(s) = &req.snapname
            && !vm.snapshots.contains_key(s)
        {
            return Err(Error::not_found(format!("snapshot '{s}' does not exist")));
        }
        let full = req.full.unwrap_or(!vm.template());
        if req.storage.is_some() && !full {
            return Err(Error::failed(
                "parameter 'storage' not allowed for linked clones",
            ));
        }
        if req.format.is_some() && !full {
            return Err(Error::failed(
                "parameter 'format' not allowed for linked clones",
            ));
        }
        let oldconf = match &req.snapname {
            Some(s) => vm.snapshots.get(s).cloned().unwrap_or_default(),
            None => vm.config.clone(),
        };
        let pending: Vec<String> = if req.snapname.is_none() {
            let mut keys: Vec<String> = vm.pending.keys().cloned().collect();
            keys.extend(vm.pending_delete.keys().cloned());
            keys.sort();
            keys.dedup();
            keys
        } else {
            Vec::new()
        };
        let src_name = oldconf.get("name").cloned();
        // check_storage_access_clone, check_mapping_access,
        // check_bridge_access, check_cpu_model_access; without a caller
        // (the model's own use) as root@pam.
        let root = AuthId::User("root@pam".into());
        let who = req.who.as_ref().unwrap_or(&root);
        let sharedvm = self
            .perms()
            .check_clone_vm_perm(who, &oldconf, req.storage.as_deref())?;
        if let Some(t) = &target
            && !sharedvm
        {
            return Err(Error::failed(format!(
                "can't clone VM to node '{t}' (VM uses local storage)"
            )));
        }
        if self.guests.get(&newid).is_some_and(|v| v.node == node)
            || self.guests.ct_by_id(newid).is_some()
        {
            return Err(Error::exists(format!(
                "unable to create VM {newid}: config file already exists"
            )));
        }
        let version = self.version;
        let mut conf = BTreeMap::new();
        let mut drives = Vec::new();
        for (opt, value) in &oldconf {
            if SNAPSHOT_KEYS.contains(&opt.as_str()) || opt.starts_with("unused") {
                continue;
            }
            if full && running && req.snapname.is_none() && opt == "tpmstate0" {
                return Err(Error::conflict(
                    "cannot clone TPM state while VM is running",
                ));
            }
            if opt.starts_with("net") && opt[3..].parse::<u32>().is_ok() {
                let mac = rq.random_mac();
                conf.insert(
                    opt.clone(),
                    drive_with(version, opt, value, &[("macaddr", &mac)], &[]),
                );
            } else if is_drive_key(opt) {
                let cloudinit = is_cloudinit(value);
                if drive_is_cdrom(value) && !cloudinit {
                    conf.insert(opt.clone(), value.clone());
                    continue;
                }
                let volid = drive_file(value);
                let of = if req.snapname.is_some() {
                    " a snapshot of"
                } else {
                    ""
                };
                let msg = format!("clone feature is not supported for{of} '{volid}' ({opt})");
                let snap = req.snapname.is_some();
                let this_full = full || cloudinit || opt == "tpmstate0";
                if this_full {
                    if !self.storage.volume_has_feature(
                        Feature::Copy,
                        volid,
                        snap,
                        self.version.is_v9(),
                    ) {
                        return Err(Error::failed(format!("Full {msg}")));
                    }
                } else if !self.storage.volume_has_feature(
                    Feature::Clone,
                    volid,
                    snap,
                    self.version.is_v9(),
                ) {
                    return Err(Error::failed(format!("Linked {msg}")));
                }
                drives.push(CloneDrive {
                    key: opt.clone(),
                    value: value.clone(),
                    full: this_full,
                });
            } else {
                conf.insert(opt.clone(), value.clone());
            }
        }

        // The worker: lock the source, then create the target config.
        let mut worker = Worker::new("qmclone", &vmid.to_string());
        let flock = self
            .guests
            .get(&vmid)
            .map(|v| v.flock.clone())
            .unwrap_or_default();
        if flock.exclusive || (running && flock.held()) {
            return Ok(worker
                .log("trying to acquire lock...")
                .fail(lock_timeout(vmid)));
        }
        if let Some(other) = self.guests.get(&newid) {
            let pid = self.next_pid;
            let _ = other;
            return Ok(worker.fail(format!(
                "unable to open file '/etc/pve/nodes/{node}/qemu-server/{newid}.conf.tmp.{pid}' - File exists"
            )));
        }
        let smbios = conf.get("smbios1").cloned().unwrap_or_default();
        let new_uuid = uuid(rq);
        let smbios = if smbios.is_empty() {
            format!("uuid={new_uuid}")
        } else {
            drive_with(version, "smbios1", &smbios, &[("uuid", &new_uuid)], &[])
        };
        conf.insert("smbios1".into(), smbios);
        if conf
            .get("vmgenid")
            .is_some_and(|v| !v.is_empty() && v != "0")
        {
            conf.insert("vmgenid".into(), uuid(rq));
        }
        conf.remove("template");
        let name = req
            .name
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| {
                format!(
                    "Copy-of-VM-{}",
                    src_name.unwrap_or_else(|| vmid.to_string())
                )
            });
        conf.insert("name".into(), name);
        if let Some(d) = req.description.clone().filter(|d| !d.is_empty()) {
            conf.insert("description".into(), d);
        }
        let mut lock = BTreeMap::new();
        lock.insert("lock".to_string(), "clone".to_string());
        self.guests
            .insert(newid, Vm::new(newid, &node, super::VmStatus::Stopped, lock));
        self.firewall.clone_guest(vmid, newid);
        if let Some(src) = self.guests.get_mut(&vmid) {
            if running {
                src.flock.exclusive = true;
            } else {
                src.flock.shared += 1;
            }
        }
        drives.sort_by(|a, b| a.key.cmp(&b.key));
        worker = worker.effect(TaskEffect::Qemu {
            vmid,
            op: QemuOp::Clone(Box::new(CloneJob {
                newid,
                node,
                target,
                conf,
                drives,
                storage: req.storage,
                format: req.format,
                running,
                snapname: req.snapname,
                pending,
                exclusive: running,
                pool: req.pool,
                bwlimit: req.bwlimit,
                who: req.who.as_ref().map(ToString::to_string),
            })),
        });
        Ok(worker)
    }

    fn release_flock(&mut self, vmid: u32, exclusive: bool) {
        if let Some(vm) = self.guests.get_mut(&vmid) {
            if exclusive {
                vm.flock.exclusive = false;
            } else {
                vm.flock.shared = vm.flock.shared.saturating_sub(1);
            }
        }
    }

    /// The end of a clone: copies or links every disk and writes the
    /// target's config; on failure frees what it allocated and removes
    /// the target.
    pub(in crate::model) fn finish_clone(
        &mut self,
        vmid: u32,
        job: CloneJob,
        now: i64,
    ) -> EffectResult {
        let version = self.version;
        let node = job.node.clone();
        let newid = job.newid;
        let mut log = Vec::new();
        let mut conf = job.conf.clone();
        let mut allocated: Vec<String> = Vec::new();
        let mut result: Result<()> = Ok(());
        for d in &job.drives {
            let file = drive_file(&d.value).to_string();
            let kind = if d.full { "full" } else { "linked" };
            log.push(format!("create {kind} clone of drive {} ({file})", d.key));
            let step: Result<(String, u64)> = (|| {
                let (src_sid, _) = parse_volid(&file)
                    .ok_or_else(|| Error::failed(format!("unable to parse volume ID '{file}'")))?;
                let src = self.storage.volume(&file, &node).cloned();
                let size = src.as_ref().map(|v| v.size).unwrap_or_else(|| {
                    d.value
                        .split(',')
                        .find_map(|p| p.strip_prefix("size="))
                        .and_then(super::parse_size)
                        .unwrap_or(0)
                });
                if !d.full {
                    let (volid, lines) =
                        self.storage.clone_volume_linked(&file, &node, newid, now)?;
                    log.extend(lines);
                    return Ok((volid, size));
                }
                let sid = job.storage.clone().unwrap_or_else(|| src_sid.to_string());
                let dst_path = path_based(&self.storage.existing(&sid)?.kind);
                if is_cloudinit(&d.value) {
                    let fmt = dst_path.then_some("qcow2");
                    let (volid, lines) = self.storage.alloc_volume(
                        &sid,
                        &node,
                        newid,
                        &VolumeKind::CloudInit,
                        fmt,
                        4 << 20,
                        now,
                    )?;
                    log.extend(lines);
                    return Ok((volid, 4 << 20));
                }
                let fmt = if dst_path {
                    job.format
                        .clone()
                        .or_else(|| src.as_ref().map(|v| v.format.clone()))
                } else {
                    None
                };
                let (volid, lines) = self.storage.alloc_volume(
                    &sid,
                    &node,
                    newid,
                    &VolumeKind::Disk,
                    fmt.as_deref(),
                    size,
                    now,
                )?;
                log.extend(lines);
                let total = render_bytes1(size);
                if job.running && job.snapname.is_none() {
                    // get_bandwidth_limit('clone', [source, target]).
                    let mut sids = vec![src_sid.to_string()];
                    if let Some(t) = &job.storage {
                        sids.push(t.clone());
                    }
                    let who = job.who.as_deref().and_then(AuthId::parse);
                    let limit = crate::model::mtunnel::bandwidth_limit(
                        self.storage,
                        self.datacenter,
                        self.access,
                        who.as_ref(),
                        "clone",
                        &sids,
                        job.bwlimit.map(|b| b as f64),
                    )
                    .map(|l| l.round() as u64);
                    log.extend(mirror_lines(&format!("drive-{}", d.key), size, limit));
                    log.push("all 'mirror' jobs are ready".into());
                } else {
                    log.push(format!("transferred 0.0 B of {total} (0.00%)"));
                    log.push(format!("transferred {total} of {total} (100.00%)"));
                }
                Ok((volid, size))
            })();
            match step {
                Ok((volid, size)) => {
                    allocated.push(volid.clone());
                    let size_text = propstring::format_size(&size.to_string());
                    conf.insert(
                        d.key.clone(),
                        drive_with(
                            version,
                            &d.key,
                            &d.value,
                            &[("file", &volid), ("size", &size_text)],
                            &["format"],
                        ),
                    );
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        let last_mirror = job.running
            && job.snapname.is_none()
            && job.drives.iter().any(|d| d.full && !is_cloudinit(&d.value));
        if result.is_ok() && last_mirror {
            log.push("suspend vm".into());
            for d in job
                .drives
                .iter()
                .filter(|d| d.full && !is_cloudinit(&d.value))
            {
                log.push(format!("drive-{}: Cancelling block job", d.key));
                log.push(format!("drive-{}: Done.", d.key));
            }
            log.push("resume vm".into());
        }
        self.release_flock(vmid, job.exclusive);
        if let Err(e) = result {
            for v in &allocated {
                if let Some(l) = self.storage.free_volume(v, &node) {
                    log.extend(l);
                }
            }
            if self
                .guests
                .get(&newid)
                .is_some_and(|v| v.lock() == Some("clone"))
            {
                self.guests.remove(&newid);
                self.firewall.remove_guest(newid);
            }
            return Err((log, format!("clone failed: {e}")));
        }
        if !job.pending.is_empty() {
            log.push(format!(
                "found pending changes for '{}', discarding for clone",
                job.pending.join(",")
            ));
        }
        if let Some(vm) = self.guests.get_mut(&newid) {
            vm.config = conf;
            if let Some(t) = &job.target {
                vm.node.clone_from(t);
            }
        }
        if let Some(pool) = &job.pool {
            self.access.pools_mut().add_vm(newid, pool);
        }
        Ok(log)
    }

    /// Undoes the start of a clone whose task failed or was stopped.
    pub(in crate::model) fn abort_clone(&mut self, vmid: u32, job: &CloneJob) {
        self.release_flock(vmid, job.exclusive);
        if self
            .guests
            .get(&job.newid)
            .is_some_and(|v| v.lock() == Some("clone"))
        {
            self.guests.remove(&job.newid);
            self.firewall.remove_guest(job.newid);
        }
    }

    /// The checks `template` makes before forking and again under the
    /// lock.
    ///
    /// # Errors
    /// `VM is locked`, snapshots, already a template, running.
    pub fn check_template(&self, node: &str, vmid: u32, disk: Option<&str>) -> Result<()> {
        let vm = self.guests.vm(node, vmid)?;
        vm.check_lock()?;
        if !vm.snapshots.is_empty() {
            return Err(Error::failed(
                "unable to create template, because VM contains snapshots",
            ));
        }
        if vm.template() && disk.is_none() {
            return Err(Error::failed("you can't convert a template to a template"));
        }
        if vm.running() {
            return Err(Error::conflict(
                "you can't convert a VM to template if VM is running",
            ));
        }
        Ok(())
    }

    /// The end of `qmtemplate`: `template: 1` and base volumes.
    pub(in crate::model) fn finish_template(
        &mut self,
        node: &str,
        vmid: u32,
        disk: Option<&str>,
    ) -> EffectResult {
        self.check_template(node, vmid, disk)
            .map_err(|e| (vec![], e.to_string()))?;
        let version = self.version;
        let mut log = Vec::new();
        let mut keys: Vec<(String, String)> = self
            .guests
            .get(&vmid)
            .map(|vm| {
                vm.config
                    .iter()
                    .filter(|(k, v)| is_disk(k, v))
                    .filter(|(k, _)| disk.is_none_or(|d| d == k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        keys.sort_by_key(|(k, _)| drive_order(k));
        if let Some(vm) = self.guests.get_mut(&vmid) {
            vm.config.insert("template".into(), "1".into());
        }
        for (k, v) in keys {
            let volid = drive_file(&v).to_string();
            if !self.storage.volume_has_feature(
                Feature::Template,
                &volid,
                false,
                self.version.is_v9(),
            ) {
                continue;
            }
            let (new, lines) = self
                .storage
                .create_base_volume(&volid, node)
                .map_err(|e| (log.clone(), e.to_string()))?;
            log.extend(lines);
            let printed = drive_with(version, &k, &v, &[("file", &new)], &[]);
            if let Some(vm) = self.guests.get_mut(&vmid) {
                vm.config.insert(k, printed);
            }
        }
        Ok(log)
    }
}
