//! Backup jobs: `/cluster/backup` (the `vzdump:` sections of `jobs.cfg`)
//! and their runs on the emulated clock (pve-manager `API2/Backup.pm`,
//! `Jobs.pm`).
//!
//! A job runs when the clock passes its next event after its last run:
//! every node with guests the job includes starts a `vzdump` task as
//! `root@pam` at the scheduled time. A clock that jumps over several
//! events runs the job once, as PVE's scheduler does when it wakes late
//! (`repeat-missed` is not emulated).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::dump::VzdumpRequest;
use super::prune::KeepOptions;
use super::schedule::CalendarEvent;
use super::{BackupReader, Backups};
use crate::model::qemu::{drive_file, is_drive_key};
use crate::model::{Context, Error, Result};

/// Options of a job stored as numbers (booleans and integers).
const NUMERIC: &[&str] = &[
    "all",
    "bwlimit",
    "enabled",
    "ionice",
    "lockwait",
    "maxfiles",
    "pigz",
    "protected",
    "quiet",
    "remove",
    "repeat-missed",
    "stdexcludes",
    "stop",
    "stopwait",
    "zstd",
];

/// A stored option of a job: a number (booleans and integers), a
/// parsed `prune-backups`, or a text. Saved as the bare JSON value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JobOption {
    /// A number (`enabled`, `bwlimit`, ...).
    Number(i64),
    /// A text (`schedule`, `storage`, `vmid`, ...).
    Text(String),
    /// A parsed `prune-backups` property string.
    Keep(KeepOptions),
}

impl JobOption {
    /// The option as text (numbers as PVE prints them).
    fn text(&self) -> String {
        match self {
            Self::Text(s) => s.clone(),
            Self::Number(n) => n.to_string(),
            Self::Keep(k) => k.property_string(),
        }
    }

    fn typed(k: &str, v: &str) -> Self {
        if k == "prune-backups"
            && let Ok(keep) = KeepOptions::parse(v)
        {
            return Self::Keep(keep);
        }
        if NUMERIC.contains(&k)
            && let Ok(n) = v.parse::<i64>()
        {
            return Self::Number(n);
        }
        Self::Text(v.to_string())
    }
}

/// One backup job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// The options as `jobs.cfg` keeps them (`schedule`, `storage`,
    /// `vmid`, `enabled`, ...).
    options: BTreeMap<String, JobOption>,
    /// When it last ran (or was made), epoch seconds.
    last_run: i64,
}

impl Job {
    /// Whether the job is enabled.
    pub fn enabled(&self) -> bool {
        self.options
            .get("enabled")
            .is_none_or(|v| *v != JobOption::Number(0))
    }

    /// The job's `comment`.
    pub fn comment(&self) -> Option<String> {
        self.text("comment")
    }

    /// The options, by name.
    pub fn options(&self) -> &BTreeMap<String, JobOption> {
        &self.options
    }

    /// The job's next event after `now`, if its schedule has one.
    pub fn next_run(&self, now: i64) -> Option<i64> {
        self.text("schedule")
            .and_then(|s| CalendarEvent::parse(&s).ok())
            .and_then(|ev| ev.next_after(now))
    }

    fn text(&self, k: &str) -> Option<String> {
        self.options.get(k).map(JobOption::text)
    }

    fn list(&self, k: &str) -> Vec<u32> {
        self.text(k)
            .map(|v| {
                crate::spec::formats::split_list(&v)
                    .into_iter()
                    .filter_map(|x| x.parse().ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn flag(&self, k: &str) -> bool {
        self.options.get(k) == Some(&JobOption::Number(1))
    }

    /// Takes `vmid` out of the job (`remove_vmid_from_job`); `false` when
    /// the job is left without guests.
    pub(in crate::model) fn remove_vmid(&mut self, vmid: u32) -> bool {
        let key = if self.options.contains_key("vmid") {
            "vmid"
        } else if self.options.contains_key("exclude") {
            "exclude"
        } else {
            return true;
        };
        let rest: Vec<String> = self
            .list(key)
            .into_iter()
            .filter(|v| *v != vmid)
            .map(|v| v.to_string())
            .collect();
        if rest.is_empty() {
            self.options.remove(key);
            return key != "vmid";
        }
        self.options
            .insert(key.to_string(), JobOption::Text(rest.join(",")));
        true
    }
}

/// A job of `GET /cluster/backup`: its id, the job and its next run.
#[derive(Debug, Clone, Copy)]
pub struct JobRow<'a> {
    /// The job id.
    pub id: &'a str,
    /// The job.
    pub job: &'a Job,
    /// Its next event after now, if any.
    pub next_run: Option<i64>,
}

/// A guest of `GET /cluster/backup/{id}/included_volumes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IncludedGuest {
    /// A VMID with no VM behind it.
    Unknown(u32),
    /// A VM and its volumes.
    Qemu {
        /// The VM.
        vmid: u32,
        /// Its `name` (empty when it has none).
        name: String,
        /// Its volumes but CD-ROMs and cloud-init, by config key.
        volumes: Vec<IncludedVolume>,
    },
}

/// A volume of a VM a job includes or leaves out (`backup=0`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncludedVolume {
    /// The config key (`scsi0`).
    pub key: String,
    /// The volume (`local-lvm:vm-100-disk-0`).
    pub file: String,
    /// Whether the backup takes it.
    pub included: bool,
}

/// A new job id: `backup-` and the first two groups of a UUID.
pub fn new_job_id(rq: &mut Context) -> String {
    let uuid = rq.uuid_v4();
    format!("backup-{}", &uuid[..13])
}

/// `verify_vzdump_parameters` of a job's options.
fn verify(opts: &BTreeMap<String, String>) -> Result<()> {
    let has = |k: &str| opts.get(k).is_some_and(|v| !v.is_empty() && v != "0");
    if has("all") && has("vmid") {
        return Err(Error::invalid("all", "option conflicts with option 'vmid'"));
    }
    if has("exclude") && has("vmid") {
        return Err(Error::invalid(
            "exclude",
            "option conflicts with option 'vmid'",
        ));
    }
    if has("pool") && has("vmid") {
        return Err(Error::invalid(
            "pool",
            "option conflicts with option 'vmid'",
        ));
    }
    if let Some(p) = opts.get("prune-backups") {
        super::prune::KeepOptions::parse(p)
            .map_err(|e| Error::invalid("prune-backups", e.to_string()))?;
    }
    if let Some(t) = opts.get("notes-template") {
        super::dump::verify_notes_template(t)
            .map_err(|e| Error::invalid("notes-template", e.to_string()))?;
    }
    let all = has("all") || (has("exclude") && !has("pool"));
    if !(all || has("stop") || has("pool") || has("vmid")) {
        return Err(Error::invalid("vmid", "property is missing"));
    }
    Ok(())
}

/// The `schedule` check of create and update: `starttime`/`dow` become a
/// schedule, and a schedule must parse.
fn schedule_param(opts: &mut BTreeMap<String, String>, required: bool) -> Result<()> {
    if opts.contains_key("schedule") {
        if opts.contains_key("starttime") {
            return Err(Error::invalid(
                "starttime",
                "'starttime' and 'schedule' cannot both be set",
            ));
        }
    } else if let Some(start) = opts.get("starttime").cloned() {
        let dow = opts.get("dow").cloned().unwrap_or_default();
        let dow = crate::spec::formats::split_list(&dow).join(",");
        let all = "mon,tue,wed,thu,fri,sat,sun";
        let sched = if dow.is_empty() || dow == all {
            start
        } else {
            format!("{dow} {start}")
        };
        opts.insert("schedule".into(), sched);
    } else if required {
        return Err(Error::invalid(
            "schedule",
            "neither 'starttime' nor 'schedule' were set",
        ));
    }
    opts.remove("starttime");
    opts.remove("dow");
    if let Some(s) = opts.get("schedule") {
        CalendarEvent::parse(s).map_err(|e| Error::invalid("schedule", e.to_string()))?;
    }
    Ok(())
}

impl Job {
    /// The node the job is limited to, if any.
    pub(in crate::model) fn node(&self) -> Option<String> {
        self.text("node")
    }

    /// The `vzdump` call a run of job `id` makes on `node`.
    pub(in crate::model) fn vzdump_request(&self, id: &str, node: &str) -> VzdumpRequest {
        VzdumpRequest {
            node: node.to_string(),
            vmid: self.list("vmid"),
            all: self.flag("all"),
            pool: self.text("pool"),
            exclude: self.list("exclude"),
            mode: self.text("mode").unwrap_or_else(|| "snapshot".into()),
            compress: self.text("compress").unwrap_or_else(|| "0".into()),
            storage: self.text("storage"),
            notes_template: self.text("notes-template"),
            protected: self.flag("protected"),
            prune_backups: self.text("prune-backups"),
            remove: self
                .options
                .get("remove")
                .is_none_or(|v| *v != JobOption::Number(0)),
            cmdline: job_cmdline(id, self),
            denied: Vec::new(),
            notice: crate::model::notify::events::BackupNotice {
                job_id: Some(id.to_string()),
                mailto: self
                    .text("mailto")
                    .map(|m| {
                        crate::spec::formats::split_list(&m)
                            .into_iter()
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default(),
                policy: self.text("mailnotification"),
                mode: self.text("notification-mode"),
            },
        }
    }
}

impl Backups {
    /// The enabled jobs whose next event has come by `now` (epoch
    /// seconds), each with that event's time, marked as run at `now`.
    pub(in crate::model) fn take_due(&mut self, now: i64) -> Vec<(String, i64, Job)> {
        let due: Vec<(String, i64)> = self
            .jobs()
            .iter()
            .filter(|(_, j)| j.enabled())
            .filter_map(|(id, j)| {
                let ev = CalendarEvent::parse(&j.text("schedule")?).ok()?;
                let next = ev.next_after(j.last_run)?;
                (next <= now).then(|| (id.clone(), next))
            })
            .collect();
        let mut out = Vec::new();
        for (id, at) in due {
            if let Some(job) = self.jobs_mut().get_mut(&id) {
                job.last_run = now;
                out.push((id, at, job.clone()));
            }
        }
        out
    }
}

impl Backups {
    /// `GET /cluster/backup`: every job with its `next-run` after `now`.
    pub fn backup_jobs(&self, now: i64) -> Vec<JobRow<'_>> {
        self.jobs()
            .iter()
            .map(|(id, job)| JobRow {
                id,
                job,
                next_run: job.next_run(now),
            })
            .collect()
    }

    /// `GET /cluster/backup/{id}`.
    ///
    /// # Errors
    /// 400 `id: No such job 'x'`.
    pub fn backup_job(&self, id: &str) -> Result<&Job> {
        self.jobs()
            .get(id)
            .ok_or_else(|| Error::invalid("id", format!("No such job '{id}'")))
    }

    /// `POST /cluster/backup`: a new enabled job; answers its id.
    ///
    /// # Errors
    /// 400 for a missing or bad schedule and conflicting options; `Job
    /// 'x' already exists`.
    pub fn create_backup_job(
        &mut self,
        id: Option<String>,
        mut opts: BTreeMap<String, String>,
        rq: &mut Context,
    ) -> Result<String> {
        schedule_param(&mut opts, true)?;
        opts.entry("enabled".into()).or_insert_with(|| "1".into());
        let id = id.unwrap_or_else(|| new_job_id(rq));
        if self.jobs().contains_key(&id) {
            return Err(Error::exists(format!("Job '{id}' already exists")));
        }
        if opts.contains_key("exclude") && !opts.contains_key("pool") {
            opts.insert("all".into(), "1".into());
        }
        verify(&opts)?;
        let options = opts
            .iter()
            .map(|(k, v)| (k.clone(), JobOption::typed(k, v)))
            .collect();
        self.jobs_mut().insert(
            id.clone(),
            Job {
                options,
                last_run: rq.now(),
            },
        );
        Ok(id)
    }

    /// `PUT /cluster/backup/{id}`: changes options, deletes those in
    /// `delete`; a new `vmid`, `all` or `pool` replaces the others.
    ///
    /// # Errors
    /// `no options specified`, `no such vzdump job`, 400 `delete: unknown
    /// option 'x'`, and the checks of create.
    pub fn update_backup_job(
        &mut self,
        id: &str,
        mut opts: BTreeMap<String, String>,
        delete: &[String],
    ) -> Result<()> {
        schedule_param(&mut opts, false)?;
        if opts.is_empty() && delete.is_empty() {
            return Err(Error::failed("no options specified"));
        }
        let Some(job) = self.jobs().get(id) else {
            return Err(Error::not_found("no such vzdump job"));
        };
        let mut cur: BTreeMap<String, String> = job
            .options
            .iter()
            .map(|(k, v)| (k.clone(), v.text()))
            .collect();
        let last_run = job.last_run;
        for k in delete {
            let known = crate::model::backup::jobs::JOB_KEYS.contains(&k.as_str());
            if !known {
                return Err(Error::invalid("delete", format!("unknown option '{k}'")));
            }
            cur.remove(k);
        }
        let (vmid, all) = (
            opts.contains_key("vmid"),
            opts.get("all").is_some_and(|a| a == "1"),
        );
        cur.extend(opts);
        if cur.contains_key("exclude") && !cur.contains_key("pool") {
            cur.insert("all".into(), "1".into());
        }
        if vmid {
            for k in ["all", "exclude", "pool"] {
                cur.remove(k);
            }
        } else if all {
            cur.remove("vmid");
            cur.remove("pool");
        } else if cur.contains_key("pool") {
            for k in ["vmid", "all", "exclude"] {
                cur.remove(k);
            }
        }
        verify(&cur)?;
        let options = cur
            .iter()
            .map(|(k, v)| (k.clone(), JobOption::typed(k, v)))
            .collect();
        self.jobs_mut()
            .insert(id.to_string(), Job { options, last_run });
        Ok(())
    }

    /// `DELETE /cluster/backup/{id}`.
    ///
    /// # Errors
    /// 400 `id: No such job 'x'`.
    pub fn delete_backup_job(&mut self, id: &str) -> Result<()> {
        self.jobs_mut()
            .remove(id)
            .map(|_| ())
            .ok_or_else(|| Error::invalid("id", format!("No such job '{id}'")))
    }
}

impl<'a> BackupReader<'a> {
    /// The guests a job includes, on `node` or everywhere.
    pub(in crate::model) fn job_guests(self, job: &Job, node: Option<&str>) -> Vec<u32> {
        let pool = job.text("pool");
        let all = job.flag("all") || (job.options.contains_key("exclude") && pool.is_none());
        let node = node.or(job.text("node").as_deref()).map(str::to_string);
        self.included_guests(
            node.as_deref(),
            &job.list("vmid"),
            all,
            pool.as_deref(),
            &job.list("exclude"),
        )
    }

    /// `GET /cluster/backup/{id}/included_volumes`: per guest the
    /// volumes the job backs up or leaves out, and why.
    ///
    /// # Errors
    /// 400 `id: No such job 'x'`.
    pub fn job_included_volumes(
        self,
        id: &str,
        visible: impl Fn(u32) -> bool,
    ) -> Result<Vec<IncludedGuest>> {
        let Some(job) = self.backups.jobs().get(id) else {
            return Err(Error::invalid("id", format!("No such job '{id}'")));
        };
        let mut children = Vec::new();
        for vmid in self
            .job_guests(job, None)
            .into_iter()
            .filter(|v| visible(*v))
        {
            let Some(vm) = self.guests.get(&vmid) else {
                children.push(IncludedGuest::Unknown(vmid));
                continue;
            };
            let mut keys: Vec<&String> = vm.config.keys().filter(|k| is_drive_key(k)).collect();
            keys.sort();
            let mut vols = Vec::new();
            for k in keys {
                let v = &vm.config[k];
                let cdrom =
                    v.split(',').any(|p| p == "media=cdrom") || drive_file(v).contains("cloudinit");
                if cdrom {
                    continue;
                }
                let excluded = v.split(',').any(|p| p == "backup=0");
                vols.push(IncludedVolume {
                    key: k.clone(),
                    file: drive_file(v).to_string(),
                    included: !excluded,
                });
            }
            children.push(IncludedGuest::Qemu {
                vmid,
                name: vm.config.get("name").cloned().unwrap_or_default(),
                volumes: vols,
            });
        }
        Ok(children)
    }
}

/// The keys a job may have deleted (`option_exists` and `comment`,
/// `repeat-missed`).
pub const JOB_KEYS: &[&str] = &[
    "all",
    "bwlimit",
    "comment",
    "compress",
    "dumpdir",
    "exclude",
    "exclude-path",
    "fleecing",
    "ionice",
    "lockwait",
    "mailnotification",
    "mailto",
    "maxfiles",
    "mode",
    "node",
    "notes-template",
    "notification-mode",
    "notification-policy",
    "notification-target",
    "pbs-change-detection-mode",
    "performance",
    "pigz",
    "pool",
    "protected",
    "prune-backups",
    "quiet",
    "remove",
    "repeat-missed",
    "script",
    "stdexcludes",
    "stop",
    "stopwait",
    "storage",
    "tmpdir",
    "vmid",
    "zstd",
];

/// The command line a job's run logs (`vzdump ... --job-id <id>`).
fn job_cmdline(id: &str, job: &Job) -> String {
    let mut cmd = "vzdump".to_string();
    for v in job.list("vmid") {
        cmd.push_str(&format!(" {v}"));
    }
    let skip: BTreeSet<&str> = [
        "vmid",
        "schedule",
        "enabled",
        "comment",
        "repeat-missed",
        "id",
        "type",
    ]
    .into();
    for (k, v) in &job.options {
        if skip.contains(k.as_str()) {
            continue;
        }
        cmd.push_str(&format!(" --{k} {}", shell_quote(&v.text())));
    }
    cmd.push_str(&format!(" --job-id {id}"));
    cmd
}

/// PVE's `shellquote`: bare when safe, else in single quotes.
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.,:/=@+%".contains(&b));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\"'\"'"))
    }
}
