//! `vzdump`: which guests a job backs up, the `backup` lock while it
//! runs, the archives it leaves and the log it writes (pve-manager
//! `API2/VZDump.pm`, `VZDump.pm` `exec_backup_task`; qemu-server
//! `VZDump/QemuServer.pm`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::prune::{KeepOptions, mark_backups};
use super::{Archive, ArchiveDisk, BackupOp, archive_key, name_time, timestamp};
use crate::model::cluster::Cluster;
use crate::model::cluster::Storage;
use crate::model::qemu::{EffectResult, Vm, VmStatus, drive_file, is_drive_key};
use crate::model::storage::ops::Feature;
use crate::model::storage::{Volume, parse_volid, path_based};
use crate::model::tasks::{TaskEffect, Worker};
use crate::model::{Context, Error, Result};
use crate::spec::propstring;

/// What `POST /nodes/{node}/vzdump` asks for.
#[derive(Debug, Clone, Default)]
pub struct VzdumpRequest {
    /// The node (resolved).
    pub node: String,
    /// `vmid`: the guests named.
    pub vmid: Vec<u32>,
    /// `all`.
    pub all: bool,
    /// `pool`: the pool's guests.
    pub pool: Option<String>,
    /// `exclude` (implies `all`).
    pub exclude: Vec<u32>,
    /// `mode`: `snapshot`, `suspend` or `stop`.
    pub mode: String,
    /// `compress`: `0`, `1`, `gzip`, `lzo` or `zstd`.
    pub compress: String,
    /// `storage` (default `local`).
    pub storage: Option<String>,
    /// `notes-template`.
    pub notes_template: Option<String>,
    /// `protected`.
    pub protected: bool,
    /// `prune-backups`.
    pub prune_backups: Option<String>,
    /// `remove` (default on): prune after the backup.
    pub remove: bool,
    /// The command line PVE logs first.
    pub cmdline: String,
    /// Guests the caller lacks `VM.Backup` on: skipped with `all`, else
    /// the task fails on the first (`exec_backup`'s check).
    pub denied: Vec<u32>,
}

/// A `vzdump` task's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DumpJob {
    /// The node.
    pub node: String,
    /// The target storage.
    pub storage: String,
    /// The guests, in order (orphaned VMIDs included, to fail visibly).
    pub vmids: Vec<u32>,
    /// The backup mode asked for.
    pub mode: String,
    /// The compressor.
    pub compress: String,
    /// `notes-template`.
    pub notes_template: Option<String>,
    /// Mark the backups protected.
    pub protected: bool,
    /// Retention given with the job (else the storage's, else keep all).
    pub prune: Option<KeepOptions>,
    /// Prune after the backup.
    pub remove: bool,
    /// When the task started, epoch seconds.
    pub started: i64,
    /// Guests refused when the task started, with why.
    pub failures: BTreeMap<u32, String>,
    /// Guests the task locked.
    pub locked: Vec<u32>,
    /// The id of the QEMU backup job, drawn by the request.
    pub uuid: String,
}

/// `verify_notes_template`.
///
/// # Errors
/// `contains a line feed`, `found unknown: ...`.
pub fn verify_notes_template(t: &str) -> std::result::Result<(), String> {
    if t.contains('\n') {
        return Err("contains a line feed".into());
    }
    let mut problems = Vec::new();
    let chars: Vec<char> = t.chars().collect();
    let mut i = 0;
    while i + 1 < chars.len() {
        if chars[i] == '\\' {
            let c = chars[i + 1];
            if c != 'n' && c != '\\' {
                problems.push(format!("escape sequence '\\{c}' at char {i}"));
            }
            i += 2;
            continue;
        }
        i += 1;
    }
    let mut rest = t;
    let mut offset = 0;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        let var = &after[..end];
        if !var.is_empty() && !var.contains(|c: char| c.is_whitespace() || c == '{' || c == '}') {
            if !["cluster", "guestname", "node", "vmid"].contains(&var) {
                problems.push(format!("variable '{var}' at char {}", offset + start + 2));
            }
            offset += start + 2 + end + 2;
            rest = &after[end + 2..];
        } else {
            offset += start + 1;
            rest = &rest[start + 1..];
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("found unknown: {}", problems.join(", ")))
    }
}

/// `generate_notes`: the template with its variables and escapes filled.
pub fn render_notes(t: &str, cluster: &str, guestname: &str, node: &str, vmid: u32) -> String {
    let mut out = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some(o) => out.push(o),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out.replace("{{cluster}}", cluster)
        .replace("{{guestname}}", guestname)
        .replace("{{node}}", node)
        .replace("{{vmid}}", &vmid.to_string())
}

/// The extension and format of an archive by compressor.
fn archive_ext(compress: &str) -> (&'static str, &'static str) {
    match compress {
        "1" | "lzo" => (".vma.lzo", "vma.lzo"),
        "gzip" => (".vma.gz", "vma.gz"),
        "zstd" => (".vma.zst", "vma.zst"),
        _ => (".vma", "vma"),
    }
}

/// `render_bytes($v, 1)`.
fn render_bytes(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", units[i])
    }
}

/// `format_size` of `VZDump.pm`: `731MB`, `1.02GB`.
fn format_size(bytes: u64) -> String {
    let kb = bytes as f64 / 1024.0;
    if kb < 1024.0 {
        return format!("{}KB", kb as u64);
    }
    let mb = kb / 1024.0;
    if mb < 1024.0 {
        return format!("{}MB", mb as u64);
    }
    let gb = mb / 1024.0;
    if gb < 1024.0 {
        return format!("{gb:.2}GB");
    }
    format!("{:.2}TB", gb / 1024.0)
}

/// A backup volume written, for [`Cluster::store_backup`].
struct Stored<'a> {
    storage: &'a Storage,
    node: &'a str,
    vmid: u32,
    /// `qemu` or `lxc`.
    kind: &'static str,
    /// `backup/vzdump-...`.
    name: String,
    format: &'static str,
    size: u64,
    at: i64,
    /// `{{guestname}}`: the VM's name, the container's hostname.
    guestname: String,
}

/// One guest's outcome: its log, or its log and why it failed.
type GuestResult = std::result::Result<Vec<String>, (Vec<String>, String)>;

/// The extension and format of a container archive by compressor.
fn tar_ext(compress: &str) -> (&'static str, &'static str) {
    match compress {
        "1" | "lzo" => (".tar.lzo", "tar.lzo"),
        "gzip" => (".tar.gz", "tar.gz"),
        "zstd" => (".tar.zst", "tar.zst"),
        _ => (".tar", "tar"),
    }
}

/// GNU tar's `--totals` sizes: `9.8KiB`, `47MiB`, `1.1GiB`.
pub(crate) fn tar_human(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    #[allow(clippy::cast_precision_loss)]
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes}B")
    } else if v < 10.0 {
        format!("{:.1}{}", (v * 10.0).ceil() / 10.0, units[i])
    } else {
        format!("{}{}", v.ceil(), units[i])
    }
}

/// rsync's `-h` sizes (powers of 1000): `812`, `1.37G`.
fn rsync_human(bytes: u64) -> String {
    let units = ['K', 'M', 'G', 'T', 'P'];
    #[allow(clippy::cast_precision_loss)]
    let mut v = bytes as f64;
    if v < 1000.0 {
        return bytes.to_string();
    }
    let mut i = 0;
    v /= 1000.0;
    while v >= 1000.0 && i + 1 < units.len() {
        v /= 1000.0;
        i += 1;
    }
    format!("{v:.2}{}", units[i])
}

/// The logical volume of a volume ID (`vm-200-disk-0`).
fn lv_name(volid: &str) -> &str {
    let name = volid.split_once(':').map_or(volid, |(_, n)| n);
    name.rsplit('/').next().unwrap_or(name)
}

/// The rank of a drive in `foreach_volume` order.
fn drive_rank(key: &str) -> (u8, u32) {
    let digits = key.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let n = digits.parse().unwrap_or(0);
    let prefix = &key[..key.len() - digits.len()];
    let r = match prefix {
        "ide" => 0,
        "sata" => 1,
        "scsi" => 2,
        "virtio" => 3,
        "efidisk" => 4,
        _ => 5,
    };
    (r, n)
}

fn is_cdrom_or_cloudinit(value: &str) -> bool {
    let file = drive_file(value);
    value.split(',').any(|p| p == "media=cdrom")
        || file == "none"
        || file == "cdrom"
        || file.contains("cloudinit")
}

/// `H:MM:SS` of a duration as `Finished Backup of VM` prints it.
fn hms(secs: i64) -> String {
    let s = secs.max(0);
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

impl Cluster {
    /// The guests a job includes, as `get_included_guests` finds them:
    /// the pool's, the listed ones or all but the excluded, sorted; those
    /// on other nodes are left to their node, unknown ones stay to fail.
    pub fn included_guests(
        &self,
        node: Option<&str>,
        vmid: &[u32],
        all: bool,
        pool: Option<&str>,
        exclude: &[u32],
    ) -> Vec<u32> {
        let mut ids: Vec<u32> = if let Some(p) = pool {
            self.access
                .pools()
                .get(p)
                .map(|p| {
                    p.vms()
                        .iter()
                        .copied()
                        .filter(|v| self.guests.contains_key(v))
                        .collect()
                })
                .unwrap_or_default()
        } else if !vmid.is_empty() {
            vmid.to_vec()
        } else if all {
            self.guests
                .all_ids()
                .into_iter()
                .filter(|v| !exclude.contains(v))
                .collect()
        } else {
            Vec::new()
        };
        ids.sort_unstable();
        ids.dedup();
        ids.retain(|v| {
            self.guests
                .holder(*v)
                .is_none_or(|(_, g)| node.is_none_or(|n| g == n))
        });
        ids
    }

    /// The synchronous part of `vzdump`: the parameter checks, the guests
    /// included, their `backup` lock; answers the worker, or `None` when
    /// PVE answers `OK` without a task (no guest of the list is here).
    ///
    /// # Errors
    /// 400 for conflicting or missing parameters and a bad notes template
    /// or retention.
    pub fn vzdump(&mut self, req: VzdumpRequest, rq: &mut Context) -> Result<Option<Worker>> {
        let has_vmid = !req.vmid.is_empty();
        if req.all && has_vmid {
            return Err(Error::invalid("all", "option conflicts with option 'vmid'"));
        }
        if !req.exclude.is_empty() && has_vmid {
            return Err(Error::invalid(
                "exclude",
                "option conflicts with option 'vmid'",
            ));
        }
        if req.pool.is_some() && has_vmid {
            return Err(Error::invalid(
                "pool",
                "option conflicts with option 'vmid'",
            ));
        }
        let prune = req
            .prune_backups
            .as_deref()
            .map(KeepOptions::parse)
            .transpose()
            .map_err(|m| Error::invalid("prune-backups", m))?;
        if let Some(t) = &req.notes_template {
            verify_notes_template(t).map_err(|m| Error::invalid("notes-template", m))?;
        }
        let all = req.all || (!req.exclude.is_empty() && req.pool.is_none());
        if !(all || req.pool.is_some() || has_vmid) {
            return Err(Error::invalid("vmid", "property is missing"));
        }
        let vmids = self.included_guests(
            Some(&req.node),
            &req.vmid,
            all,
            req.pool.as_deref(),
            &req.exclude,
        );
        if vmids.is_empty() && !all {
            return Ok(None);
        }
        let storage = req.storage.clone().unwrap_or_else(|| "local".into());
        let id = if vmids.len() == 1 {
            vmids[0].to_string()
        } else {
            String::new()
        };
        let mut worker = Worker::new("vzdump", &id)
            .log(format!("INFO: starting new backup job: {}", req.cmdline));
        let target = match self.storage.existing(&storage) {
            Err(e) => Err(e.to_string()),
            Ok(s) if !s.content.iter().any(|c| c == "backup") => Err(format!(
                "can't use storage '{storage}' for backups - wrong content type"
            )),
            Ok(s) if !path_based(&s.kind) => {
                return Err(Error::NotImplemented(format!(
                    "backups to '{}' storages are not emulated by fake-pve",
                    s.kind
                )));
            }
            Ok(_) => Ok(()),
        };
        if let Err(e) = target {
            return Ok(Some(worker.fail(format!(
                "could not get storage information for '{storage}': {e}"
            ))));
        }
        let mut vmids = vmids;
        if all {
            vmids.retain(|v| !req.denied.contains(v));
        } else if let Some(v) = vmids.iter().find(|v| req.denied.contains(v)) {
            return Ok(Some(
                worker.fail(format!("Permission check failed (/vms/{v}, VM.Backup)")),
            ));
        }
        let mut failures = BTreeMap::new();
        let mut locked = Vec::new();
        for vmid in &vmids {
            if self.guests.kind(*vmid) == Some("lxc") {
                match self.lock_ct(*vmid, "backup") {
                    Err(e) => {
                        failures.insert(*vmid, e.to_string());
                    }
                    Ok(()) => locked.push(*vmid),
                }
                continue;
            }
            match self.guests.get_mut(vmid) {
                None => {
                    failures.insert(*vmid, format!("unable to find VM '{vmid}'"));
                }
                Some(vm) => match vm.check_lock() {
                    Err(e) => {
                        failures.insert(*vmid, e.to_string());
                    }
                    Ok(()) => {
                        vm.config.insert("lock".into(), "backup".into());
                        locked.push(*vmid);
                    }
                },
            }
        }
        let job = DumpJob {
            node: req.node,
            storage,
            vmids,
            mode: req.mode,
            compress: req.compress,
            notes_template: req.notes_template,
            protected: req.protected,
            prune,
            remove: req.remove,
            started: rq.now(),
            failures,
            locked,
            uuid: rq.uuid_v4(),
        };
        worker = worker.effect(TaskEffect::Backup(BackupOp::Dump(Box::new(job))));
        Ok(Some(worker))
    }

    /// Drops the `backup` lock of the guests a job locked.
    pub(super) fn unlock_dumped(&mut self, job: &DumpJob) {
        for vmid in &job.locked {
            if let Some(vm) = self.guests.get_mut(vmid)
                && vm.lock() == Some("backup")
            {
                vm.config.remove("lock");
            }
            self.unlock_ct(*vmid, "backup");
        }
    }

    /// The end of a `vzdump` task: each guest's archive and log.
    pub(super) fn finish_dump(&mut self, job: DumpJob, end_ms: i64) -> EffectResult {
        let end = end_ms.div_euclid(1000);
        let per_guest = (end - job.started) / i64::try_from(job.vmids.len().max(1)).unwrap_or(1);
        let mut lines = Vec::new();
        let mut errors = 0;
        let mut at = job.started;
        for vmid in job.vmids.clone() {
            let result = match job.failures.get(&vmid) {
                Some(e) if !self.guests.contains_key(&vmid) => Err((Vec::new(), e.clone())),
                Some(e) => {
                    let kind = self.guests.kind(vmid).unwrap_or("qemu");
                    let running = match kind {
                        "lxc" => self.guests.ct(vmid).is_some_and(|c| c.running()),
                        _ => self.guests.get(&vmid).is_some_and(Vm::running),
                    };
                    Err((
                        vec![
                            format!("INFO: Starting Backup of VM {vmid} ({kind})"),
                            format!("INFO: Backup started at {}", timestamp(at)),
                            format!(
                                "INFO: status = {}",
                                if running { "running" } else { "stopped" }
                            ),
                        ],
                        e.clone(),
                    ))
                }
                None if self.guests.kind(vmid) == Some("lxc") => {
                    self.dump_ct(&job, vmid, at, per_guest)
                }
                None => self.dump_guest(&job, vmid, at, per_guest),
            };
            at += per_guest;
            match result {
                Ok(l) => lines.extend(l),
                Err((l, e)) => {
                    errors += 1;
                    lines.extend(l);
                    lines.push(format!("ERROR: Backup of VM {vmid} failed - {e}"));
                    lines.push(format!("INFO: Failed at {}", timestamp(at)));
                }
            }
        }
        self.unlock_dumped(&job);
        if errors > 0 {
            lines.push("INFO: Backup job finished with errors".into());
            return Err((lines, "job errors".into()));
        }
        lines.push("INFO: Backup job finished successfully".into());
        Ok(lines)
    }

    /// What follows the archive of any guest: the volume and what it
    /// holds, its notes and protection, then the prune of its group.
    fn store_backup(
        &mut self,
        job: &DumpJob,
        st: Stored<'_>,
        archive: Archive,
        l: &mut Vec<String>,
    ) {
        let s = st.storage;
        let node = st.node;
        let vmid = st.vmid;
        let name = st.name;
        let volid = format!("{}:{name}", s.storage);
        let volume = Volume {
            storage: s.storage.clone(),
            name: name.clone(),
            size: st.size,
            format: st.format.into(),
            vmid,
            ctime: st.at,
        };
        self.storage.put_file_volume(s, node, volume);
        self.backups
            .put_archive(archive_key(s.shared, node, &volid), archive);
        if let Some(t) = job.notes_template.as_deref().filter(|t| !t.is_empty()) {
            l.push("INFO: adding notes to backup".into());
            let cluster = self
                .nodes
                .cluster_name()
                .cloned()
                .unwrap_or_else(|| "standalone node".into());
            let notes = render_notes(t, &cluster, &st.guestname, node, vmid);
            let _ = self
                .storage
                .update_volume_attrs(&s.storage, node, &name, Some(notes), None);
        }
        if job.protected {
            l.push("INFO: marking backup as protected".into());
            let _ = self
                .storage
                .update_volume_attrs(&s.storage, node, &name, None, Some(true));
        }
        if job.remove {
            let keep = job
                .prune
                .clone()
                .or_else(|| {
                    s.options
                        .get("prune-backups")
                        .and_then(|p| KeepOptions::parse(p).ok())
                })
                .unwrap_or_else(KeepOptions::keep_all);
            l.push(format!(
                "INFO: prune older backups with retention: {}",
                keep.describe()
            ));
            let marked = mark_backups(self, &s.storage, node, Some(vmid), Some(st.kind), &keep);
            let mut pruned = 0;
            for e in marked.iter().filter(|e| e.mark == "remove") {
                l.push(format!("INFO: removing backup '{}'", e.volid));
                self.remove_backup(&e.volid, node);
                pruned += 1;
            }
            let extra = if pruned > 0 {
                " not covered by keep-retention policy"
            } else {
                ""
            };
            l.push(format!("INFO: pruned {pruned} backup(s){extra}"));
        }
    }

    /// A container's backup (`VZDump/LXC.pm`): the mount points included,
    /// the mode (a `snapshot` falls back to `suspend` when a volume
    /// cannot be snapshotted), the `vzdump` snapshot, the tar archive.
    fn dump_ct(&mut self, job: &DumpJob, vmid: u32, at: i64, secs: i64) -> GuestResult {
        let node = job.node.clone();
        let Some(ct) = self.guests.ct(vmid).cloned() else {
            return Err((Vec::new(), format!("unable to find VM '{vmid}'")));
        };
        let conf = ct.config().clone();
        let mut l = vec![
            format!("INFO: Starting Backup of VM {vmid} (lxc)"),
            format!("INFO: Backup started at {}", timestamp(at)),
        ];
        let running = ct.running();
        l.push(format!(
            "INFO: status = {}",
            if running { "running" } else { "stopped" }
        ));
        let vols = crate::model::lxc::backup::backup_volumes(&conf);
        let mut prepare = Vec::new();
        if let Some(h) = conf.get("hostname") {
            prepare.push(format!("INFO: CT Name: {h}"));
        }
        let mut disks = Vec::new();
        for v in &vols {
            if !v.included {
                prepare.push(format!(
                    "INFO: excluding {} mount point {} ('{}') from backup ({})",
                    v.kind, v.key, v.mp, v.reason
                ));
                continue;
            }
            prepare.push(format!(
                "INFO: including mount point {} ('{}') in backup",
                v.key, v.mp
            ));
            let vol = self.storage.volume(&v.volume, &node);
            let size = vol
                .map(|x| x.size)
                .unwrap_or_else(|| crate::model::lxc::schema::mp_size(&conf[&v.key]).unwrap_or(0));
            let format = vol.map_or_else(|| "raw".to_string(), |x| x.format.clone());
            disks.push(ArchiveDisk {
                key: v.key.clone(),
                volid: v.volume.clone(),
                size,
                format,
            });
        }
        let v9 = self.version.is_v9();
        let snapshots_ok = disks.iter().all(|d| {
            self.storage
                .volume_has_feature(Feature::Snapshot, &d.volid, false, v9)
        });
        let mut mode = if running { job.mode.as_str() } else { "stop" };
        if mode == "snapshot" {
            l.extend(prepare.iter().cloned());
            if !snapshots_ok {
                l.push("INFO: mode failure - some volumes do not support snapshots".into());
                l.push("INFO: trying 'suspend' mode instead".into());
                mode = "suspend";
            }
        }
        l.push(format!("INFO: backup mode: {mode}"));
        l.push("INFO: ionice priority: 7".into());
        let Some(s) = self.storage.find(&job.storage).cloned() else {
            return Err((l, format!("storage '{}' does not exist", job.storage)));
        };
        let (ext, format) = tar_ext(&job.compress);
        let base = format!("vzdump-lxc-{vmid}-{}", name_time(at));
        let name = format!("backup/{base}{ext}");
        let path = crate::model::storage::content::volume_path(&s, &name);
        let dumpdir = path.rsplit_once('/').map_or("", |(d, _)| d).to_string();
        let pid = 1000
            + job
                .uuid
                .bytes()
                .fold(0u32, |a, b| (a * 31 + u32::from(b)) % 60_000);
        let total: u64 = disks.iter().map(|d| d.size).sum();
        // What tar reads: the used part of the volumes, in 10 KiB records.
        let written = (total / 8).div_ceil(10_240) * 10_240 + 10_240;
        let secs = secs.max(1);
        let online_after = |s: i64| {
            if s < 1 {
                "<1".to_string()
            } else {
                s.to_string()
            }
        };
        match mode {
            "stop" => {
                l.extend(prepare);
                if running {
                    l.push("INFO: stopping virtual guest".into());
                }
            }
            "suspend" => {
                if job.mode == "suspend" {
                    l.extend(prepare.iter().cloned());
                } else {
                    l.extend(prepare);
                }
                let tmpdir = format!("{dumpdir}/{base}.tmp");
                let from = format!("/proc/{pid}/root/");
                l.push(format!("INFO: starting first sync {from} to {tmpdir}"));
                l.push(format!(
                    "INFO: first sync finished - transferred {} bytes in {}s",
                    rsync_human(written),
                    (secs / 2).max(1)
                ));
                l.push("INFO: suspending guest".into());
                l.push(format!("INFO: starting final sync {from} to {tmpdir}"));
                l.push("INFO: final sync finished - transferred 0 bytes in 0s".into());
                l.push("INFO: resuming guest".into());
                l.push(format!(
                    "INFO: guest is online again after {} seconds",
                    online_after(0)
                ));
            }
            _ => {
                if disks.len() > 1 {
                    l.push("INFO: suspend vm to make snapshot".into());
                }
                l.push("INFO: create storage snapshot 'vzdump'".into());
                for d in &disks {
                    if self.backup_storage_kind(&d.volid).as_deref() == Some("lvmthin") {
                        l.push(format!(
                            "  Logical volume \"snap_{}_vzdump\" created.",
                            lv_name(&d.volid)
                        ));
                    }
                }
                if disks.len() > 1 {
                    l.push("INFO: resume vm".into());
                    l.push(format!(
                        "INFO: guest is online again after {} seconds",
                        online_after(0)
                    ));
                }
            }
        }
        l.push(format!("INFO: creating vzdump archive '{path}'"));
        let rate = written / u64::try_from(secs).unwrap_or(1);
        l.push(format!(
            "INFO: Total bytes written: {written} ({}, {}/s)",
            tar_human(written),
            tar_human(rate)
        ));
        let size = if format == "tar" {
            written
        } else {
            written * 2 / 5
        };
        l.push(format!("INFO: archive file size: {}", format_size(size)));
        let mut config = conf.clone();
        config.remove("lock");
        config.remove("parent");
        let archive = Archive {
            guest: "lxc".into(),
            vmid,
            config,
            disks: disks.clone(),
        };
        let guestname = conf
            .get("hostname")
            .cloned()
            .unwrap_or_else(|| format!("CT{vmid}"));
        let stored = Stored {
            storage: &s,
            node: &node,
            vmid,
            kind: "lxc",
            name,
            format,
            size,
            at,
            guestname,
        };
        self.store_backup(job, stored, archive, &mut l);
        if mode == "snapshot" {
            l.push("INFO: cleanup temporary 'vzdump' snapshot".into());
            for d in &disks {
                if self.backup_storage_kind(&d.volid).as_deref() == Some("lvmthin") {
                    l.push(format!(
                        "  Logical volume \"snap_{}_vzdump\" successfully removed.",
                        lv_name(&d.volid)
                    ));
                }
            }
        }
        if running && mode == "stop" {
            l.push("INFO: restarting vm".into());
            l.push(format!(
                "INFO: guest is online again after {} seconds",
                online_after(secs)
            ));
            self.ct_started_again(vmid, (at + secs) * 1000);
        }
        l.push(format!(
            "INFO: Finished Backup of VM {vmid} ({})",
            hms(secs)
        ));
        l.push(format!("INFO: Backup finished at {}", timestamp(at + secs)));
        Ok(l)
    }

    /// The type of the storage a volume is on.
    fn backup_storage_kind(&self, volid: &str) -> Option<String> {
        let (sid, _) = parse_volid(volid)?;
        self.storage.find(sid).map(|s| s.kind.clone())
    }

    /// One guest's backup: the archive volume and its log.
    fn dump_guest(&mut self, job: &DumpJob, vmid: u32, at: i64, secs: i64) -> GuestResult {
        let node = job.node.clone();
        let Some(vm) = self.guests.get(&vmid).cloned() else {
            return Err((Vec::new(), format!("unable to find VM '{vmid}'")));
        };
        let mut l = vec![
            format!("INFO: Starting Backup of VM {vmid} (qemu)"),
            format!("INFO: Backup started at {}", timestamp(at)),
        ];
        let running = vm.running();
        l.push(format!(
            "INFO: status = {}",
            if running { "running" } else { "stopped" }
        ));
        let (prepare, archive) = self.prepare_archive(&vm, &node);
        let mode = if !running && job.mode == "snapshot" {
            "stop"
        } else {
            job.mode.as_str()
        };
        if running {
            l.extend(prepare.iter().cloned());
        }
        l.push(format!("INFO: backup mode: {mode}"));
        l.push("INFO: ionice priority: 7".into());
        if !running {
            l.extend(prepare);
        }
        if running && mode == "stop" {
            l.push("INFO: stopping virtual guest".into());
        }
        if running && mode == "suspend" {
            l.push("INFO: suspending guest".into());
        }
        let Some(s) = self.storage.find(&job.storage).cloned() else {
            return Err((l, format!("storage '{}' does not exist", job.storage)));
        };
        let (ext, format) = archive_ext(&job.compress);
        let file = format!("vzdump-qemu-{vmid}-{}{ext}", name_time(at));
        let name = format!("backup/{file}");
        let path = crate::model::storage::content::volume_path(&s, &name);
        l.push(format!("INFO: creating vzdump archive '{path}'"));
        let agent = vm.config.get("agent").is_some_and(|a| {
            a.split(',')
                .next()
                .is_some_and(|v| v == "1" || v == "enabled=1")
        });
        if running && mode == "snapshot" && agent {
            l.push("INFO: issuing guest-agent 'fs-freeze' command".into());
            l.push("INFO: issuing guest-agent 'fs-thaw' command".into());
        }
        if !running || mode == "stop" {
            l.push("INFO: starting kvm to execute backup task".into());
        }
        l.push(format!("INFO: started backup task '{}'", job.uuid));
        if running && mode != "stop" {
            l.push("INFO: resuming VM again".into());
        }
        let total: u64 = archive.disks.iter().map(|d| d.size).sum();
        let size = total / 32 + 4096;
        let secs = secs.max(1);
        let rate = render_bytes(total / u64::try_from(secs).unwrap_or(1));
        let t = render_bytes(total);
        l.push(format!(
            "INFO: 100% ({t} of {t}) in {secs}s, read: {rate}/s, write: {}/s",
            render_bytes(size / u64::try_from(secs).unwrap_or(1))
        ));
        if total > 0 {
            let zero = total.saturating_sub(size);
            l.push(format!(
                "INFO: backup is sparse: {} ({}%) total zero data",
                render_bytes(zero),
                zero * 100 / total
            ));
        }
        l.push(format!(
            "INFO: transferred {t} in {secs} seconds ({rate}/s)"
        ));
        if !running || mode == "stop" {
            l.push("INFO: stopping kvm after backup task".into());
        }
        if running && mode == "stop" {
            l.push("INFO: restarting vm".into());
        }
        if running && mode == "suspend" {
            l.push("INFO: resuming guest".into());
        }
        l.push(format!("INFO: archive file size: {}", format_size(size)));
        let guestname = vm
            .config
            .get("name")
            .cloned()
            .unwrap_or_else(|| format!("VM {vmid}"));
        let stored = Stored {
            storage: &s,
            node: &node,
            vmid,
            kind: "qemu",
            name,
            format,
            size,
            at,
            guestname,
        };
        self.store_backup(job, stored, archive, &mut l);
        l.push(format!(
            "INFO: Finished Backup of VM {vmid} ({})",
            hms(secs)
        ));
        l.push(format!("INFO: Backup finished at {}", timestamp(at + secs)));
        Ok(l)
    }

    /// What `prepare` and `assemble` log for a VM, and its archive: the
    /// disks included, the config without what a backup leaves out.
    fn prepare_archive(&self, vm: &Vm, node: &str) -> (Vec<String>, Archive) {
        let mut l = Vec::new();
        if let Some(name) = vm.config.get("name") {
            l.push(format!("INFO: VM Name: {name}"));
        }
        let mut keys: Vec<&String> = vm
            .config
            .keys()
            .filter(|k| is_drive_key(k) && !is_cdrom_or_cloudinit(&vm.config[*k]))
            .collect();
        keys.sort_by_key(|k| drive_rank(k));
        let mut disks = Vec::new();
        for key in keys {
            let value = &vm.config[key];
            let file = drive_file(value).to_string();
            if value.split(',').any(|p| p == "backup=0") {
                l.push(format!("INFO: exclude disk '{key}' '{file}' (backup=no)"));
                continue;
            }
            let vol = self.storage.volume(&file, node);
            let size = vol.map(|v| v.size).unwrap_or_else(|| {
                value
                    .split(',')
                    .find_map(|p| p.strip_prefix("size="))
                    .and_then(crate::model::size::parse_size)
                    .unwrap_or(0)
            });
            let format = vol.map_or_else(|| "raw".to_string(), |v| v.format.clone());
            l.push(format!(
                "INFO: include disk '{key}' '{file}' {}",
                propstring::format_size(&size.to_string())
            ));
            disks.push(ArchiveDisk {
                key: key.clone(),
                volid: file,
                size,
                format,
            });
        }
        let mut config = vm.config.clone();
        config.remove("lock");
        config.remove("parent");
        let unused: Vec<String> = config
            .keys()
            .filter(|k| k.starts_with("unused"))
            .cloned()
            .collect();
        for k in unused {
            if let Some(v) = config.remove(&k) {
                l.push(format!(
                    "INFO: skip unused drive '{v}' (not included into backup)"
                ));
            }
        }
        if !vm.ci_changes.is_empty() {
            l.push("INFO: special config section found (not included into backup)".into());
        }
        if !vm.snapshots.is_empty() {
            l.push("INFO: snapshots found (not included into backup)".into());
        }
        if !vm.pending.is_empty() || !vm.pending_delete.is_empty() {
            l.push("INFO: pending configuration changes found (not included into backup)".into());
        }
        let archive = Archive {
            guest: "qemu".into(),
            vmid: vm.vmid,
            config,
            disks,
        };
        (l, archive)
    }

    /// `GET /nodes/{node}/vzdump/extractconfig`: the config in a backup,
    /// as the archive holds it (with the `#qmdump#map` lines of a VM).
    ///
    /// # Errors
    /// `unable to parse volume ID 'x'`, the storage checks, `volume 'x'
    /// does not exist`, and for a backup fake-pve did not make, that it
    /// holds no config.
    pub fn extract_config(&self, node: &str, volid: &str) -> Result<String> {
        let (sid, name) = parse_volid(volid)
            .ok_or_else(|| Error::failed(format!("unable to parse volume ID '{volid}'")))?;
        let s = self.storage.usable_storage(sid, node)?;
        if self.storage.volumes().get(s, node, name).is_none() {
            return Err(Error::not_found(format!("volume '{volid}' does not exist")));
        }
        let Some(a) = self.backups.archive(&archive_key(s.shared, node, volid)) else {
            return Err(Error::failed(format!(
                "unable to extract config from '{volid}' - the archive holds no configuration"
            )));
        };
        if a.guest == "lxc" {
            return Ok(crate::model::lxc::Ct::new(a.vmid, node, a.config.clone()).config_text());
        }
        let mut text = Vm::new(a.vmid, node, VmStatus::Stopped, a.config.clone()).config_text();
        if a.guest == "qemu" {
            for d in &a.disks {
                let sid = parse_volid(&d.volid).map_or("", |(s, _)| s);
                text.push_str(&format!(
                    "#qmdump#map:{k}:drive-{k}:{sid}:{}:\n",
                    d.format,
                    k = d.key
                ));
            }
        }
        Ok(text)
    }

    /// Removes a backup volume and what it holds.
    pub fn remove_backup(&mut self, volid: &str, node: &str) {
        let Some((sid, name)) = parse_volid(volid) else {
            return;
        };
        self.drop_volume(sid, node, name);
    }

    /// `GET /cluster/backup-info/not-backed-up`: the guests no enabled
    /// backup job includes.
    pub fn not_backed_up(&self) -> Vec<serde_json::Value> {
        let mut covered = std::collections::BTreeSet::new();
        for job in self.backups.jobs().values().filter(|j| j.enabled()) {
            covered.extend(self.job_guests(job, None));
        }
        let vms = self
            .guests
            .values()
            .map(|v| (v.vmid, "qemu", v.config.get("name")));
        let cts = self
            .guests
            .cts()
            .values()
            .map(|c| (c.vmid(), "lxc", c.config().get("hostname")));
        let mut all: Vec<_> = vms
            .chain(cts)
            .filter(|(id, ..)| !covered.contains(id))
            .collect();
        all.sort_by_key(|(id, ..)| *id);
        all.into_iter()
            .map(|(vmid, kind, name)| {
                let mut e = serde_json::json!({ "vmid": vmid, "type": kind });
                if let Some(name) = name {
                    e["name"] = serde_json::json!(name);
                }
                e
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("{{guestname}} on {{node}}", Ok(()))]
    #[case("a\\nb \\\\ c", Ok(()))]
    #[case("x\ny", Err("contains a line feed".to_string()))]
    #[case("{{nope}}", Err("found unknown: variable 'nope' at char 2".to_string()))]
    #[case("a\\tb", Err("found unknown: escape sequence '\\t' at char 1".to_string()))]
    fn notes_templates(#[case] t: &str, #[case] want: std::result::Result<(), String>) {
        assert_eq!(verify_notes_template(t), want);
    }

    #[test]
    fn notes_are_filled() {
        assert_eq!(
            render_notes(
                "{{guestname}}\\n{{vmid}}@{{cluster}}",
                "lab",
                "web",
                "pve",
                100
            ),
            "web\n100@lab"
        );
    }

    #[test]
    fn sizes_as_vzdump_prints_them() {
        assert_eq!(format_size(500 << 10), "500KB");
        assert_eq!(format_size(731 << 20), "731MB");
        assert_eq!(format_size(1_095_216_660), "1.02GB");
        assert_eq!(render_bytes(8 << 30), "8.0 GiB");
        assert_eq!(hms(3725), "01:02:05");
    }
}
