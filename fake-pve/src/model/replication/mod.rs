//! Storage replication as pve-guest-common and pvesr keep it:
//! `replication.cfg` (jobs `<guest>-<jobnum>` of type `local`, to one
//! target node each), the state file `pve-replication-state.json` (per
//! guest and target: `last_sync`, `last_try`, `fail_count`, `error`,
//! `duration`) and the per-job log of the last run
//! (`PVE/ReplicationConfig.pm`, `ReplicationState.pm`, `Replication.pm`;
//! pve-manager `API2/ReplicationConfig.pm`, `API2/Replication.pm`).
//!
//! The configuration and the state live here with their rules; the runs
//! (pvescheduler starting `run_jobs` every minute of the emulated clock)
//! live in [`run`], where they read the guests and storages.

pub mod run;
pub use run::{ReplicationOps, ReplicationReader};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::backup::schedule::CalendarEvent;
use super::qemu::sha1_hex;
use super::{Error, Result};

/// The message of a digest that no longer matches
/// (`SectionConfig::assert_if_modified`).
pub const MODIFIED: &str =
    "detected modified configuration - file changed by other user? Try again.";

/// The schedule of a job without one.
pub const DEFAULT_SCHEDULE: &str = "*/15";

/// `parse_replication_job_id`: the guest and the job number.
///
/// # Errors
/// `invalid replication job id '...'` (with `(guest IDs < 100 are
/// reserved)` for a guest below 100).
pub fn parse_job_id(id: &str) -> Result<(u32, u64)> {
    let msg = format!("invalid replication job id '{id}'");
    let Some((g, n)) = id.split_once('-') else {
        return Err(Error::failed(msg));
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(g) || !digits(n) {
        return Err(Error::failed(msg));
    }
    let (Ok(guest), Ok(jobnum)) = (g.parse::<u32>(), n.parse::<u64>()) else {
        return Err(Error::failed(msg));
    };
    if guest < 100 {
        return Err(Error::failed(format!(
            "{msg} (guest IDs < 100 are reserved)"
        )));
    }
    Ok((guest, jobnum))
}

/// A job's line of a node's status: the job, its guest type, its next
/// sync and its state.
#[derive(Debug, Clone)]
pub struct StatusLine {
    /// The job id.
    pub id: String,
    /// The job.
    pub job: Job,
    /// `qemu` or `lxc`.
    pub vmtype: &'static str,
    /// The next sync (0: none).
    pub next_sync: i64,
    /// The state file's figures.
    pub state: JobState,
}

/// One job of `replication.cfg` (type `local`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Job {
    guest: u32,
    jobnum: u64,
    target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    schedule: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    comment: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    disable: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    remove_job: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source: Option<String>,
}

impl Job {
    /// The guest the job replicates.
    pub fn guest(&self) -> u32 {
        self.guest
    }

    /// The target node.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The node the guest was on when the job was last written.
    pub fn source(&self) -> Option<&str> {
        self.source.as_deref()
    }

    /// The schedule, `*/15` unless set.
    pub fn schedule(&self) -> &str {
        self.schedule.as_deref().unwrap_or(DEFAULT_SCHEDULE)
    }

    /// The rate limit in MB/s, if any.
    pub fn rate(&self) -> Option<f64> {
        self.rate
    }

    /// Whether the job is disabled.
    pub fn disabled(&self) -> bool {
        self.disable == Some(true)
    }

    /// `local` or `full` once the job is marked for removal.
    pub fn remove_job(&self) -> Option<&str> {
        self.remove_job.as_deref()
    }

    /// The unique target id of the state file (`local/<target>`).
    pub fn tid(&self) -> String {
        format!("local/{}", self.target)
    }

    /// The job number.
    pub fn jobnum(&self) -> u64 {
        self.jobnum
    }

    /// The schedule as written, if set.
    pub fn schedule_set(&self) -> Option<&str> {
        self.schedule.as_deref()
    }

    /// The comment, if any.
    pub fn comment(&self) -> Option<&str> {
        self.comment.as_deref()
    }

    /// The `disable` flag as written, if set.
    pub fn disable_set(&self) -> Option<bool> {
        self.disable
    }

    fn section_text(&self, id: &str, out: &mut String) {
        out.push_str(&format!("local: {id}\n"));
        if let Some(c) = &self.comment {
            out.push_str(&format!("\tcomment {c}\n"));
        }
        if let Some(d) = self.disable {
            out.push_str(&format!("\tdisable {}\n", u8::from(d)));
        }
        if let Some(r) = self.rate {
            out.push_str(&format!("\trate {r}\n"));
        }
        if let Some(r) = &self.remove_job {
            out.push_str(&format!("\tremove_job {r}\n"));
        }
        if let Some(s) = &self.schedule {
            out.push_str(&format!("\tschedule {s}\n"));
        }
        if let Some(s) = &self.source {
            out.push_str(&format!("\tsource {s}\n"));
        }
        out.push_str(&format!("\ttarget {}\n\n", self.target));
    }
}

/// The options of a create or an update, as given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobUpdate {
    /// The target node (create only: it is fixed).
    pub target: Option<String>,
    /// `schedule`.
    pub schedule: Option<String>,
    /// `rate`.
    pub rate: Option<f64>,
    /// `comment`.
    pub comment: Option<String>,
    /// `disable`.
    pub disable: Option<bool>,
    /// `remove_job`.
    pub remove_job: Option<String>,
    /// `source`.
    pub source: Option<String>,
    /// `delete` (update only), split.
    pub delete: Vec<String>,
    /// `digest` (update only).
    pub digest: Option<String>,
}

impl JobUpdate {
    /// The options' own checks (`check_config`): the schedule must be a
    /// calendar event, the rate at least 1.
    fn check(&self) -> Result<()> {
        if let Some(s) = &self.schedule {
            CalendarEvent::parse(s).map_err(|e| Error::invalid("schedule", e.to_string()))?;
        }
        if let Some(r) = self.rate
            && r < 1.0
        {
            return Err(Error::invalid(
                "rate",
                "value must have a minimum value of 1",
            ));
        }
        Ok(())
    }
}

/// A job's entry in the state file, per guest and target.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobState {
    /// The start of the last run (`last_try`).
    pub last_try: i64,
    /// The start of the last successful run.
    pub last_sync: i64,
    /// The scheduler round of the last run.
    pub last_iteration: i64,
    /// Failed runs since the last success.
    pub fail_count: u64,
    /// The last run's error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How long the last run took, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<f64>,
    /// The node that ran it last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_node: Option<String>,
    /// The storages of the replicated volumes.
    #[serde(default)]
    pub storeid_list: Vec<String>,
}

/// `replication.cfg`, the state file and each node's job logs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Replication {
    #[serde(default)]
    jobs: BTreeMap<String, Job>,
    /// By guest, then by target id (`local/<node>`).
    #[serde(default)]
    states: BTreeMap<u32, BTreeMap<String, JobState>>,
    /// `/var/log/pve/replicate/<jobid>` by node, then by job.
    #[serde(default)]
    logs: BTreeMap<String, BTreeMap<String, Vec<String>>>,
    /// The last minute the scheduler ran jobs at (epoch seconds).
    #[serde(default)]
    tick: i64,
}

impl Replication {
    /// Whether nothing is configured or kept (saved worlds leave it out).
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty() && self.states.is_empty() && self.logs.is_empty()
    }

    /// The jobs by id, in the order PVE sorts them.
    pub fn jobs(&self) -> &BTreeMap<String, Job> {
        &self.jobs
    }

    /// A job.
    pub fn job(&self, id: &str) -> Option<&Job> {
        self.jobs.get(id)
    }

    /// `replication.cfg` as written.
    pub fn cfg_text(&self) -> String {
        let mut out = String::new();
        for (id, j) in &self.jobs {
            j.section_text(id, &mut out);
        }
        out
    }

    /// The file's digest.
    pub fn digest(&self) -> String {
        sha1_hex(self.cfg_text().as_bytes())
    }

    /// `GET /cluster/replication/{id}`: the job with the file's digest.
    ///
    /// # Errors
    /// `no such replication job 'x'`.
    pub fn read(&self, id: &str) -> Result<(&Job, String)> {
        let job = self
            .jobs
            .get(id)
            .ok_or_else(|| Error::not_found(format!("no such replication job '{id}'")))?;
        Ok((job, self.digest()))
    }

    /// Adds a job once the guest, the target and the volumes were
    /// checked (the file part of `create`).
    ///
    /// # Errors
    /// `replication job 'x' already exists`, bad options, and
    /// `replication job for guest '100' to target 'local/pve2' already
    /// exists` from writing the file.
    pub fn create(&mut self, id: &str, up: &JobUpdate, now: i64) -> Result<()> {
        let (guest, jobnum) = parse_job_id(id)?;
        if self.jobs.contains_key(id) {
            return Err(Error::exists(format!(
                "replication job '{id}' already exists"
            )));
        }
        up.check()?;
        let target = up.target.clone().ok_or_else(|| {
            Error::invalid("target", "property is missing and it is not optional")
        })?;
        let job = Job {
            guest,
            jobnum,
            target,
            schedule: up.schedule.clone(),
            rate: up.rate,
            comment: up.comment.clone(),
            disable: up.disable,
            remove_job: up.remove_job.clone(),
            source: up.source.clone(),
        };
        let tid = job.tid();
        if self
            .jobs
            .values()
            .any(|j| j.guest == guest && j.tid() == tid)
        {
            return Err(Error::exists(format!(
                "replication job for guest '{guest}' to target '{tid}' already exists"
            )));
        }
        self.jobs.insert(id.to_string(), job);
        // pvescheduler's next round is the next minute.
        self.tick = self.tick.max(now - now.rem_euclid(60));
        Ok(())
    }

    /// `PUT /cluster/replication/{id}`: set options, then delete those in
    /// `delete`.
    ///
    /// # Errors
    /// The digest check, `no such job 'x'`, `no such option 'x'`,
    /// `unable to delete required option 'target'`, bad options.
    pub fn update(&mut self, id: &str, up: &JobUpdate) -> Result<()> {
        if let Some(d) = &up.digest
            && *d != self.digest()
        {
            return Err(Error::conflict(MODIFIED));
        }
        let Some(job) = self.jobs.get(id) else {
            return Err(Error::not_found(format!("no such job '{id}'")));
        };
        up.check()?;
        let mut job = job.clone();
        if up.target.is_some() {
            return Err(Error::failed(
                "can't change value of fixed parameter 'target'",
            ));
        }
        if let Some(s) = &up.schedule {
            job.schedule = Some(s.clone());
        }
        if let Some(r) = up.rate {
            job.rate = Some(r);
        }
        if let Some(c) = &up.comment {
            job.comment = Some(c.clone());
        }
        if let Some(d) = up.disable {
            job.disable = Some(d);
        }
        if let Some(r) = &up.remove_job {
            job.remove_job = Some(r.clone());
        }
        if let Some(s) = &up.source {
            job.source = Some(s.clone());
        }
        for k in &up.delete {
            match k.as_str() {
                "schedule" => job.schedule = None,
                "rate" => job.rate = None,
                "comment" => job.comment = None,
                "disable" => job.disable = None,
                "remove_job" => job.remove_job = None,
                "source" => job.source = None,
                "target" => {
                    return Err(Error::failed("unable to delete required option 'target'"));
                }
                _ => return Err(Error::failed(format!("no such option '{k}'"))),
            }
        }
        self.jobs.insert(id.to_string(), job);
        Ok(())
    }

    /// `DELETE /cluster/replication/{id}`: `force` removes the entry at
    /// once (whether or not it exists); otherwise the job is marked for
    /// removal (`full`, or `local` with `keep`) and its next run removes
    /// it.
    ///
    /// # Errors
    /// 400 `keep: conflicts with parameter 'force'`; `no such job 'x'`.
    pub fn delete(&mut self, id: &str, keep: bool, force: bool) -> Result<()> {
        if force {
            if keep {
                return Err(Error::invalid("keep", "conflicts with parameter 'force'"));
            }
            self.jobs.remove(id);
            return Ok(());
        }
        let Some(job) = self.jobs.get_mut(id) else {
            return Err(Error::not_found(format!("no such job '{id}'")));
        };
        job.remove_job = Some(if keep { "local" } else { "full" }.into());
        Ok(())
    }

    /// A job's state (`extract_job_state`): zeros until it first ran.
    pub fn state(&self, job: &Job) -> JobState {
        self.states
            .get(&job.guest)
            .and_then(|m| m.get(&job.tid()))
            .cloned()
            .unwrap_or_default()
    }

    /// Whether the state file has an entry for the job.
    pub fn has_state(&self, job: &Job) -> bool {
        self.states
            .get(&job.guest)
            .is_some_and(|m| m.contains_key(&job.tid()))
    }

    /// Writes a job's state (`write_job_state`); `None` removes it.
    fn write_state(&mut self, job: &Job, state: Option<JobState>) {
        let tid = job.tid();
        match state {
            Some(s) => {
                self.states.entry(job.guest).or_default().insert(tid, s);
            }
            None => {
                if let Some(m) = self.states.get_mut(&job.guest) {
                    m.remove(&tid);
                    if m.is_empty() {
                        self.states.remove(&job.guest);
                    }
                }
            }
        }
    }

    /// `POST .../schedule_now` (`schedule_job_now`): a job that ran
    /// before is due at once (`last_try` 0); one that never ran is left
    /// as it is.
    ///
    /// # Errors
    /// `no such replication job 'x'`.
    pub fn schedule_now(&mut self, id: &str) -> Result<()> {
        let Some(job) = self.jobs.get(id).cloned() else {
            return Err(Error::not_found(format!("no such replication job '{id}'")));
        };
        if self.has_state(&job) {
            let mut st = self.state(&job);
            st.last_try = 0;
            self.write_state(&job, Some(st));
        }
        Ok(())
    }

    /// When a job is next due (`job_status`'s `next_sync`): at once for a
    /// job marked for removal, after 5, 10, 15 then every 30 minutes of
    /// failures (never while the target is offline), else the schedule's
    /// next event after the last try; 0 for never.
    pub fn next_sync(&self, job: &Job, target_online: bool) -> i64 {
        if job.remove_job.is_some() {
            return 1;
        }
        let st = self.state(job);
        if st.fail_count > 0 {
            if !target_online {
                return 0;
            }
            let minutes = if st.fail_count <= 3 {
                5 * i64::try_from(st.fail_count).unwrap_or(3)
            } else {
                30
            };
            return st.last_try + 60 * minutes;
        }
        CalendarEvent::parse(job.schedule())
            .ok()
            .and_then(|ev| ev.next_after(st.last_try))
            .unwrap_or(0)
    }

    /// A job's line of `GET /nodes/{node}/replication`
    /// (`extract_job_status`): its configuration, `vmtype`,
    /// `next_sync` and the state's figures.
    pub fn status_line(
        &self,
        id: String,
        job: Job,
        vmtype: &'static str,
        next_sync: i64,
    ) -> StatusLine {
        let state = self.state(&job);
        StatusLine {
            id,
            job,
            vmtype,
            next_sync,
            state,
        }
    }

    /// The log of a job's last run on `node`, if it ran there.
    pub fn log(&self, node: &str, id: &str) -> Option<&[String]> {
        self.logs
            .get(node)
            .and_then(|m| m.get(id))
            .map(Vec::as_slice)
    }

    /// The last minute the scheduler ran at.
    pub fn tick(&self) -> i64 {
        self.tick
    }

    /// Records the scheduler's round at `t`.
    fn set_tick(&mut self, t: i64) {
        self.tick = t;
    }

    /// Drops the jobs of a guest that is gone (`remove_vmid_jobs`) and
    /// its states.
    pub fn remove_guest(&mut self, vmid: u32) {
        self.jobs.retain(|_, j| j.guest != vmid);
        self.states.remove(&vmid);
    }
}
