//! `vzdump`: which guests a job backs up, the `backup` lock while it
//! runs, the archives it leaves and the log it writes (pve-manager
//! `API2/VZDump.pm`, `VZDump.pm` `exec_backup_task`; qemu-server
//! `VZDump/QemuServer.pm`).
//!
//! This module plans a job and runs it guest by guest; `lxc` and
//! `qemu` back up one container or VM, `notes` checks and fills the
//! notes template, `units` prints sizes and durations as the log does.

mod lxc;
mod notes;
mod pbs;
mod qemu;
mod units;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::prune::{KeepOptions, mark_backups};
use super::{Archive, BackupOp, archive_key, timestamp};
use crate::model::backup::{BackupOps, BackupReader};
use crate::model::cluster::Storage;
use crate::model::qemu::{EffectResult, Vm, VmStatus};
use crate::model::storage::{Volume, parse_volid, path_based};
use crate::model::tasks::{TaskEffect, Worker};
use crate::model::{Context, Error, Result};
pub use notes::{render_notes, verify_notes_template};
pub(crate) use units::tar_human;

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
    /// How the task notifies at its end.
    pub notice: crate::model::notify::events::BackupNotice,
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
    /// How the task notifies at its end.
    #[serde(default)]
    pub notice: crate::model::notify::events::BackupNotice,
}

/// A backup volume written, for [`BackupOps::store_backup`].
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

impl<'a> BackupReader<'a> {
    /// The guests a job includes, as `get_included_guests` finds them:
    /// the pool's, the listed ones or all but the excluded, sorted; those
    /// on other nodes are left to their node, unknown ones stay to fail.
    pub fn included_guests(
        self,
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

    /// `GET /nodes/{node}/vzdump/extractconfig`: the config in a backup,
    /// as the archive holds it (with the `#qmdump#map` lines of a VM).
    ///
    /// # Errors
    /// `unable to parse volume ID 'x'`, the storage checks, `volume 'x'
    /// does not exist`, and for a backup fake-pve did not make, that it
    /// holds no config.
    pub fn extract_config(self, node: &str, volid: &str) -> Result<String> {
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

    /// `GET /cluster/backup-info/not-backed-up`: the guests no enabled
    /// backup job includes.
    pub fn not_backed_up(self) -> Vec<NotBackedUp<'a>> {
        let mut covered = std::collections::BTreeSet::new();
        for job in self.backups.jobs().values().filter(|j| j.enabled()) {
            covered.extend(self.job_guests(job, None));
        }
        let vms = self
            .guests
            .values()
            .map(|v| (v.vmid, "qemu", v.config.get("name").map(String::as_str)));
        let cts = self.guests.cts().values().map(|c| {
            (
                c.vmid(),
                "lxc",
                c.config().get("hostname").map(String::as_str),
            )
        });
        let mut all: Vec<_> = vms
            .chain(cts)
            .filter(|(id, ..)| !covered.contains(id))
            .collect();
        all.sort_by_key(|(id, ..)| *id);
        all.into_iter()
            .map(|(vmid, kind, name)| NotBackedUp { vmid, kind, name })
            .collect()
    }
}

impl BackupOps<'_> {
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
            .map_err(|e| Error::invalid("prune-backups", e.to_string()))?;
        if let Some(t) = &req.notes_template {
            verify_notes_template(t)
                .map_err(|e| Error::invalid("notes-template", e.to_string()))?;
        }
        let all = req.all || (!req.exclude.is_empty() && req.pool.is_none());
        if !(all || req.pool.is_some() || has_vmid) {
            return Err(Error::invalid("vmid", "property is missing"));
        }
        let vmids = self.reader().included_guests(
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
            Ok(s) if !path_based(&s.kind) && s.kind != "pbs" => {
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
                match self.guests.lock_ct(*vmid, "backup") {
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
            notice: req.notice,
        };
        worker = worker.effect(TaskEffect::Backup(BackupOp::Dump(Box::new(job))));
        Ok(Some(worker))
    }

    /// Drops the `backup` lock of the guests a job locked.
    pub(in crate::model) fn unlock_dumped(&mut self, job: &DumpJob) {
        for vmid in &job.locked {
            if let Some(vm) = self.guests.get_mut(vmid)
                && vm.lock() == Some("backup")
            {
                vm.config.remove("lock");
            }
            self.guests.unlock_ct(*vmid, "backup");
        }
    }

    /// The end of a `vzdump` task: each guest's archive and log.
    pub(in crate::model) fn finish_dump(&mut self, job: DumpJob, end_ms: i64) -> EffectResult {
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
                        "lxc" => self.guests.ct_by_id(vmid).is_some_and(|c| c.running()),
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
            let keep = retention(job, s);
            l.push(format!(
                "INFO: prune older backups with retention: {}",
                keep.describe()
            ));
            let marked = mark_backups(
                self.storage,
                &s.storage,
                node,
                Some(vmid),
                Some(st.kind),
                &keep,
            );
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

    /// Removes a backup volume and what it holds.
    pub fn remove_backup(&mut self, volid: &str, node: &str) {
        let Some((sid, name)) = parse_volid(volid) else {
            return;
        };
        self.drop_volume(sid, node, name);
    }
}

/// A guest of `GET /cluster/backup-info/not-backed-up`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotBackedUp<'a> {
    /// The guest.
    pub vmid: u32,
    /// `qemu` or `lxc`.
    pub kind: &'static str,
    /// A VM's `name`, a container's `hostname`.
    pub name: Option<&'a str>,
}

#[cfg(test)]
mod tests;

/// The retention a backup with `remove` prunes its group by: the job's
/// `prune-backups`, else the storage's, else keep all.
pub(super) fn retention(job: &DumpJob, s: &Storage) -> KeepOptions {
    job.prune
        .clone()
        .or_else(|| {
            s.options
                .get("prune-backups")
                .and_then(|p| KeepOptions::parse(p).ok())
        })
        .unwrap_or_else(KeepOptions::keep_all)
}
