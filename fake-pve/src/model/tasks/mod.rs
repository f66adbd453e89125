//! The task engine: UPIDs, task logs and their life from running to
//! stopped (pve-common `UPID.pm`, `RESTEnvironment.pm`; pve-manager
//! `API2/Tasks.pm`).
//!
//! A task is created with a [`Worker`]: the lines it logs, how it ends and
//! the [`TaskEffect`] it has on the cluster. It stays running until the
//! clock reaches its end time; the cluster then applies the effect and
//! writes the closing `TASK OK` / `TASK WARNINGS: n` / `TASK ERROR: msg`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A parsed task id:
/// `UPID:<node>:<pid %08X>:<pstart %08X>:<starttime %08X>:<type>:<id>:<user>:`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Upid {
    /// Node that runs the task.
    pub node: String,
    /// Worker process id.
    pub pid: u32,
    /// Worker process start, in clock ticks since boot.
    pub pstart: u64,
    /// Start time, epoch seconds.
    pub starttime: i64,
    /// Task type (`qmstart`, `startall`, ...).
    pub kind: String,
    /// Task id, usually the VMID; may be empty.
    pub id: String,
    /// `user@realm` or `user@realm!token`.
    pub user: String,
}

impl Upid {
    /// Parses a UPID as PVE's `decode_upid` does.
    pub fn parse(s: &str) -> Option<Self> {
        let rest = s.strip_prefix("UPID:")?.strip_suffix(':')?;
        let parts: Vec<&str> = rest.split(':').collect();
        let [node, pid, pstart, starttime, kind, id, user] = parts.as_slice() else {
            return None;
        };
        let node_ok = !node.is_empty()
            && node.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-')
            && !node.starts_with('-')
            && !node.ends_with('-');
        let hex = |v: &str, lens: &[usize]| {
            lens.contains(&v.len()) && v.bytes().all(|c| c.is_ascii_hexdigit())
        };
        let word = |v: &str| !v.chars().any(|c| c.is_whitespace());
        if !node_ok
            || !hex(pid, &[8])
            || !hex(pstart, &[8, 9])
            || !hex(starttime, &[8])
            || kind.is_empty()
            || !word(kind)
            || !word(id)
            || user.is_empty()
            || !word(user)
        {
            return None;
        }
        Some(Upid {
            node: (*node).to_string(),
            pid: u32::from_str_radix(pid, 16).ok()?,
            pstart: u64::from_str_radix(pstart, 16).ok()?,
            starttime: i64::from_str_radix(starttime, 16).ok()?,
            kind: (*kind).to_string(),
            id: (*id).to_string(),
            user: (*user).to_string(),
        })
    }
}

impl fmt::Display for Upid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `UPID:{node}:{pid:08X}:{pstart:08X}:{starttime:08X}:...`,
        // written piece by piece (each task writes one).
        let mut buf = [0u8; 16];
        f.write_str("UPID:")?;
        f.write_str(&self.node)?;
        f.write_str(":")?;
        f.write_str(hex08(u64::from(self.pid), &mut buf))?;
        f.write_str(":")?;
        f.write_str(hex08(self.pstart, &mut buf))?;
        f.write_str(":")?;
        // As `{:X}` writes an i64: its two's complement.
        #[allow(clippy::cast_sign_loss)]
        f.write_str(hex08(self.starttime as u64, &mut buf))?;
        for part in [&self.kind, &self.id, &self.user] {
            f.write_str(":")?;
            f.write_str(part)?;
        }
        f.write_str(":")
    }
}

/// `v` in upper-case hex, zero-padded to at least 8 digits (`{:08X}`).
fn hex08(v: u64, buf: &mut [u8; 16]) -> &str {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    let len = (64 - v.leading_zeros()).div_ceil(4).max(8) as usize;
    for (i, b) in buf[..len].iter_mut().enumerate() {
        let shift = 4 * (len - 1 - i);
        *b = DIGITS[((v >> shift) & 0xF) as usize];
    }
    // Only ASCII digits were written.
    std::str::from_utf8(&buf[..len]).unwrap_or_default()
}

/// What a finished task does to the cluster. Each area adds its variants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum TaskEffect {
    /// Nothing beyond its log.
    #[default]
    None,
    /// Sets the power state of guests (startall, stopall).
    SetVmStatus {
        /// The guests.
        vmids: Vec<u32>,
        /// The state they end in.
        status: super::qemu::VmStatus,
    },
    /// What a VM task does (create, power, config, destroy, ...).
    Qemu {
        /// The VM.
        vmid: u32,
        /// The operation.
        op: super::qemu::QemuOp,
    },
    /// What a container task does (create, power, snapshot, destroy, ...).
    Lxc {
        /// The container.
        vmid: u32,
        /// The operation.
        op: super::lxc::LxcOp,
    },
    /// What a backup task does (vzdump, restore, prune).
    Backup(super::backup::BackupOp),
    /// What a node's disk task does (initgpt, wipedisk, ZFS, LVM,
    /// LVM-thin and directory creation and removal).
    NodeHw {
        /// The node.
        node: String,
        /// The operation.
        op: super::node_hw::disks::DiskOp,
    },
    /// `systemctl <action> <service>` on a node (srvstart, srvstop,
    /// srvrestart, srvreload).
    Service {
        /// The node.
        node: String,
        /// The API's service id.
        service: String,
        /// The command.
        action: super::node_services::ServiceAction,
    },
    /// A realm sync (`auth-realm-sync`): reads the realm's directory and
    /// updates users and groups when the worker gets there.
    RealmSync {
        /// The realm.
        realm: String,
        /// What to sync and remove.
        options: super::access::realms::SyncOptions,
        /// Log only, write nothing.
        dry_run: bool,
    },
    /// What a Ceph task does (monitors, managers, metadata servers,
    /// services, flags).
    Ceph {
        /// The node it runs on.
        node: String,
        /// The operation.
        op: super::ceph::daemons::CephOp,
    },
    /// Adds or removes a storage volume (upload, download, copy, delete):
    /// on PVE the file appears or goes when the worker gets there.
    Volume {
        /// The node whose view of the storage changes.
        node: String,
        /// What happens to the volume.
        change: VolumeChange,
    },
    /// What an ACME account task does (register, update, deactivate).
    Acme(super::acme::AcmeOp),
    /// A remote migration's tunnel worker (`qmtunnel`, `vzmtunnel`)
    /// whose wait for its connection ran out: its empty config goes.
    Mtunnel {
        /// Its control socket.
        socket: String,
    },
    /// A node's `pveproxy-ssl.pem` set (`Some`) or removed (`None`) by an
    /// ACME order or revocation, pveproxy restarted.
    NodeCert {
        /// The node.
        node: String,
        /// The certificate and key.
        cert: Option<super::node_hw::CustomCert>,
    },
}

/// A change to one storage volume made by a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum VolumeChange {
    /// The volume is written (an existing one of that name is replaced).
    Put {
        /// The new volume.
        volume: super::storage::Volume,
        /// The image config of an OCI archive pulled from a registry.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        oci: Option<Box<super::oci::ImageConfig>>,
        /// What an OVA archive holds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ova: Option<Box<super::storage::import::OvaContent>>,
    },
    /// The volume is removed with its attributes.
    Drop {
        /// Storage id.
        storage: String,
        /// Volume name on that storage.
        name: String,
    },
}

/// Why a task ends in failure: the message after `TASK ERROR: `.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(transparent)]
#[error("{0}")]
pub struct TaskFailure(pub String);

impl From<super::Error> for TaskFailure {
    fn from(e: super::Error) -> Self {
        TaskFailure(e.to_string())
    }
}

/// The plan of a task: what it logs and how it ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Worker {
    /// Task type.
    pub kind: String,
    /// Task id (a VMID, a storage, or empty).
    pub id: String,
    /// Lines logged when the task starts.
    pub start_lines: Vec<String>,
    /// Lines logged when it ends, before the closing line.
    pub end_lines: Vec<String>,
    /// `Err(failure)` ends it with `TASK ERROR: <message>`.
    pub outcome: Result<(), TaskFailure>,
    /// Applied when the task ends successfully.
    pub effect: TaskEffect,
}

impl Worker {
    /// A worker that logs nothing and ends OK.
    pub fn new(kind: &str, id: &str) -> Self {
        Self {
            kind: kind.to_string(),
            id: id.to_string(),
            start_lines: Vec::new(),
            end_lines: Vec::new(),
            outcome: Ok(()),
            effect: TaskEffect::None,
        }
    }

    /// Adds a line logged at the start.
    #[must_use]
    pub fn log(mut self, line: impl Into<String>) -> Self {
        self.start_lines.push(line.into());
        self
    }

    /// Adds a line logged at the end.
    #[must_use]
    pub fn log_end(mut self, line: impl Into<String>) -> Self {
        self.end_lines.push(line.into());
        self
    }

    /// Makes the task fail with `msg`.
    #[must_use]
    pub fn fail(mut self, msg: impl Into<String>) -> Self {
        self.outcome = Err(TaskFailure(msg.into()));
        self
    }

    /// Sets the effect applied on success.
    #[must_use]
    pub fn effect(mut self, effect: TaskEffect) -> Self {
        self.effect = effect;
        self
    }
}

/// Where a task is in its life.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum TaskState {
    /// Running until the clock reaches `until_ms`.
    Running {
        /// Planned end, epoch milliseconds.
        until_ms: i64,
    },
    /// Finished.
    Stopped {
        /// End time, epoch seconds.
        endtime: i64,
        /// `OK`, `WARNINGS: n`, the error text or `unexpected status`.
        exitstatus: String,
    },
}

/// One task with its log.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Task {
    /// The parsed id.
    pub upid: Upid,
    /// The id as text, as clients see it.
    pub upid_str: String,
    /// Log lines so far.
    pub log: Vec<String>,
    /// Running or stopped.
    pub state: TaskState,
    /// What is left to do when it ends, while it runs (apart, so that
    /// the list of every task kept grows by less per task); gone once it
    /// has ended, so that a kept task holds only its id, log and status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<Box<Worker>>,
}

impl Task {
    /// Whether the task still runs.
    pub fn running(&self) -> bool {
        matches!(self.state, TaskState::Running { .. })
    }

    /// The exit status once stopped.
    pub fn exitstatus(&self) -> Option<&str> {
        match &self.state {
            TaskState::Stopped { exitstatus, .. } => Some(exitstatus),
            TaskState::Running { .. } => None,
        }
    }

    /// Ends the task: logs the end lines (unless `error` overrides the
    /// outcome) and the closing line, and records the exit status.
    pub fn finish(&mut self, now: i64, error: Option<String>) {
        let worker = self.worker.take();
        let error = error.or_else(|| {
            worker
                .as_ref()
                .and_then(|w| w.outcome.clone().err())
                .map(|f| f.0)
        });
        if error.is_none()
            && let Some(w) = worker
        {
            self.log.extend(w.end_lines);
        }
        let warnings = self.log.iter().filter(|l| l.starts_with("WARN: ")).count();
        let exitstatus = match error {
            Some(e) => {
                let e = e.trim_end().replace(['\n', '\r'], " ");
                self.log.push(format!("TASK ERROR: {e}"));
                e
            }
            None if warnings > 0 => {
                self.log.push(format!("TASK WARNINGS: {warnings}"));
                format!("WARNINGS: {warnings}")
            }
            None => {
                self.log.push("TASK OK".into());
                "OK".into()
            }
        };
        self.state = TaskState::Stopped {
            endtime: now,
            exitstatus,
        };
    }

    /// The id parts its answers start with, and a token's name.
    fn ids(&self) -> (Ids<'_>, Option<&str>) {
        let u = &self.upid;
        let (user, tokenid) = split_token(&u.user);
        let ids = Ids {
            upid: &self.upid_str,
            node: &u.node,
            pid: u.pid,
            pstart: u.pstart,
            starttime: u.starttime,
            kind: &u.kind,
            id: &u.id,
            user,
        };
        (ids, tokenid)
    }

    /// `GET .../tasks/{upid}/status`.
    pub fn status(&self) -> Status<'_> {
        let (ids, tokenid) = self.ids();
        Status {
            ids,
            status: if self.running() { "running" } else { "stopped" },
            tokenid,
            exitstatus: self.exitstatus(),
        }
    }

    /// An item of `GET /nodes/{node}/tasks`.
    pub fn list_item(&self) -> ListItem<'_> {
        let (ids, tokenid) = self.ids();
        let (endtime, saved, status) = match &self.state {
            TaskState::Stopped {
                endtime,
                exitstatus,
            } => (Some(*endtime), None, exitstatus.as_str()),
            // As the `active` file lists it.
            TaskState::Running { .. } => (None, Some("0"), "RUNNING"),
        };
        ListItem {
            ids,
            tokenid,
            endtime,
            saved,
            status,
        }
    }

    /// The status class used by `statusfilter`: ok, warning, error or
    /// unknown.
    pub fn status_class(&self) -> &'static str {
        match self.exitstatus() {
            None => "unknown",
            Some("OK") => "ok",
            Some(s) if s.starts_with("WARNINGS: ") => "warning",
            Some("") | Some("unexpected status") => "unknown",
            Some(_) => "error",
        }
    }
}

/// A task's user and, for an API token's task, the token's name apart
/// (`user@realm!token`).
fn split_token(user: &str) -> (&str, Option<&str>) {
    match user.split_once('!') {
        Some((user, tokenid)) => (user, Some(tokenid)),
        None => (user, None),
    }
}

/// A task's id parts as its answers start: its UPID and what the UPID
/// says, the user without a token's name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ids<'a> {
    /// The UPID.
    pub upid: &'a str,
    /// The node.
    pub node: &'a str,
    /// The worker's pid.
    pub pid: u32,
    /// Its start in clock ticks.
    pub pstart: u64,
    /// Its start, epoch seconds.
    pub starttime: i64,
    /// The task type.
    #[serde(rename = "type")]
    pub kind: &'a str,
    /// The task id.
    pub id: &'a str,
    /// The user (without a token's name).
    pub user: &'a str,
}

/// `GET .../tasks/{upid}/status`: the task's id parts, `status`
/// (`running`/`stopped`), then a token's `tokenid` and a finished task's
/// `exitstatus`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Status<'a> {
    /// The task's id parts.
    #[serde(flatten)]
    pub ids: Ids<'a>,
    /// `running` or `stopped`.
    pub status: &'static str,
    /// A token's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokenid: Option<&'a str>,
    /// A finished task's exit status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exitstatus: Option<&'a str>,
}

/// An item of `GET /nodes/{node}/tasks`: the task's id parts, a token's
/// `tokenid`, then a finished task's `endtime` and exit `status`, or a
/// running one's `saved` `0` and `RUNNING` (as the `active` file lists
/// it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListItem<'a> {
    /// The task's id parts.
    #[serde(flatten)]
    pub ids: Ids<'a>,
    /// A token's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokenid: Option<&'a str>,
    /// A finished task's end, epoch seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endtime: Option<i64>,
    /// `0` for a running task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saved: Option<&'static str>,
    /// The exit status, or `RUNNING`.
    pub status: &'a str,
}

/// Every task of the cluster, oldest first, with the lookups that keep a
/// request from scanning them all: running ones by their end, all of
/// them by UPID. Only this type changes the list, so the lookups always
/// cover it.
#[derive(Debug, Clone, Default)]
pub struct Tasks {
    tasks: super::chunked::Chunked<Task>,
    next_pid: u32,
    running: std::collections::BTreeSet<(i64, usize)>,
    /// The latest task of each pid (a UPID names its pid, which is new
    /// for each task until the pids wrap around).
    /// Ordered: new pids come in ascending order, so an insert goes to
    /// the end, which stays in the cache, and the map grows node by node
    /// rather than by copying itself into a table twice its size.
    by_pid: std::collections::BTreeMap<u32, usize>,
}

/// Where a new task runs and for whom.
#[derive(Debug, Clone, Copy)]
pub struct Spawn<'a> {
    /// The node.
    pub node: &'a str,
    /// The node's boot time, epoch seconds (the UPID's `pstart` counts
    /// from it).
    pub boot: i64,
    /// Who started it.
    pub user: &'a str,
    /// When, epoch milliseconds.
    pub now_ms: i64,
    /// How long it runs.
    pub duration_ms: u64,
}

impl Tasks {
    /// The tasks of a saved world, with `next_pid` the pid the next task
    /// gets.
    pub fn new(tasks: Vec<Task>, next_pid: u32) -> Self {
        let mut t = Self {
            tasks: tasks.into(),
            next_pid,
            running: Default::default(),
            by_pid: Default::default(),
        };
        for (i, task) in t.tasks.iter_mut().enumerate() {
            // A world saved before ended tasks gave up their worker.
            if !task.running() {
                task.worker = None;
            }
            t.by_pid.insert(task.upid.pid, i);
            if let TaskState::Running { until_ms } = task.state {
                t.running.insert((until_ms, i));
            }
        }
        t
    }

    /// The tasks, oldest first, and the next pid: what a saved world keeps.
    pub fn parts(&self) -> (&super::chunked::Chunked<Task>, u32) {
        (&self.tasks, self.next_pid)
    }

    /// How many tasks there are.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Every task, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Task> {
        self.tasks.iter()
    }

    /// The pid the next task gets.
    pub fn next_pid(&self) -> u32 {
        self.next_pid
    }

    /// Records a running task and answers its UPID. A `{upid}` in its log
    /// lines becomes the UPID.
    pub fn spawn(&mut self, at: Spawn<'_>, mut worker: Worker) -> String {
        let now = at.now_ms.div_euclid(1000);
        let pid = self.next_pid;
        self.next_pid = self.next_pid.wrapping_add(1).max(1000);
        let upid = Upid {
            node: at.node.to_string(),
            pid,
            pstart: u64::try_from((now - at.boot).max(0) * 100).unwrap_or(0) + 3_000,
            starttime: now,
            kind: worker.kind.clone(),
            id: worker.id.clone(),
            user: at.user.to_string(),
        };
        let upid_str = upid.to_string();
        for l in worker
            .start_lines
            .iter_mut()
            .chain(worker.end_lines.iter_mut())
        {
            if l.contains("{upid}") {
                *l = l.replace("{upid}", &upid_str);
            }
        }
        let until_ms = at
            .now_ms
            .saturating_add(i64::try_from(at.duration_ms).unwrap_or(i64::MAX));
        let task = Task {
            upid,
            upid_str: upid_str.clone(),
            log: std::mem::take(&mut worker.start_lines),
            state: TaskState::Running { until_ms },
            worker: Some(Box::new(worker)),
        };
        let i = self.tasks.len();
        self.tasks.push(task);
        self.by_pid.insert(pid, i);
        self.running.insert((until_ms, i));
        upid_str
    }

    /// The first running task due by `now_ms`, taken off the running
    /// list: its index and end time. It is still marked running; end it
    /// with [`Tasks::finish`].
    pub fn next_due(&mut self, now_ms: i64) -> Option<(usize, i64)> {
        loop {
            let (until_ms, i) = *self.running.first()?;
            if until_ms > now_ms {
                return None;
            }
            self.running.remove(&(until_ms, i));
            if self.tasks[i].running() {
                return Some((i, until_ms));
            }
        }
    }

    /// When the next running task is planned to end (epoch
    /// milliseconds), if any runs: the moment the world next changes by
    /// itself.
    pub fn next_end_ms(&self) -> Option<i64> {
        self.running
            .iter()
            .find(|(_, i)| self.tasks.get(*i).is_some_and(Task::running))
            .map(|(until_ms, _)| *until_ms)
    }

    /// The task at `i` (from [`Tasks::next_due`]).
    pub fn at(&self, i: usize) -> Option<&Task> {
        self.tasks.get(i)
    }

    /// Ends the task at `i` (from [`Tasks::next_due`]) at `now` (epoch
    /// seconds): `extra` lines are added to its end lines on success, or
    /// logged before its error.
    pub fn finish(&mut self, i: usize, now: i64, extra: Vec<String>, error: Option<String>) {
        let Some(task) = self.tasks.get_mut(i) else {
            return;
        };
        match (&error, task.worker.as_mut()) {
            (None, Some(w)) => w.end_lines.extend(extra),
            _ => task.log.extend(extra),
        }
        task.finish(now, error);
    }

    /// Takes what the task at `i` does when it ends, leaving
    /// [`TaskEffect::None`] (a task's effect happens once).
    pub fn take_effect(&mut self, i: usize) -> TaskEffect {
        self.tasks
            .get_mut(i)
            .and_then(|t| t.worker.as_mut())
            .map(|w| std::mem::take(&mut w.effect))
            .unwrap_or_default()
    }

    /// Ends every running task as a node crash does (`unexpected status`
    /// at `now`, epoch seconds), without its effect; answers how many.
    pub fn interrupt_running(&mut self, now: i64) -> usize {
        let mut n = 0;
        for t in self.tasks.iter_mut().filter(|t| t.running()) {
            t.state = TaskState::Stopped {
                endtime: now,
                exitstatus: "unexpected status".into(),
            };
            t.worker = None;
            n += 1;
        }
        self.running.clear();
        n
    }

    /// Gives a running task a new plan: what it does when it ends and
    /// when that is (`until_ms`, epoch milliseconds); its log so far
    /// stays, the worker's start lines are added to it. A task that has
    /// ended is left as it is.
    ///
    /// # Errors
    /// As [`Tasks::get`].
    pub fn replan(
        &mut self,
        upid: &str,
        until_ms: i64,
        mut worker: Worker,
    ) -> Result<(), super::Error> {
        let i = self.find(upid)?;
        let TaskState::Running { until_ms: before } = self.tasks[i].state else {
            return Ok(());
        };
        self.running.remove(&(before, i));
        let task = &mut self.tasks[i];
        task.log.append(&mut worker.start_lines);
        task.state = TaskState::Running { until_ms };
        task.worker = Some(Box::new(worker));
        self.running.insert((until_ms, i));
        Ok(())
    }

    /// Adds lines to the log of a running task (a worker whose log grows
    /// as it goes); answers whether it runs.
    pub fn append(&mut self, upid: &str, lines: Vec<String>) -> bool {
        let Ok(i) = self.find(upid) else {
            return false;
        };
        let task = &mut self.tasks[i];
        if !task.running() {
            return false;
        }
        task.log.extend(lines);
        true
    }

    /// Replaces the log of task `upid` (a join's worker writes the whole
    /// log it reached when it ends).
    ///
    /// # Errors
    /// As [`Tasks::get`].
    pub fn set_log(&mut self, upid: &str, lines: Vec<String>) -> Result<(), super::Error> {
        let i = self.find(upid)?;
        self.tasks[i].log = lines;
        Ok(())
    }

    /// Finds a task by its UPID text.
    ///
    /// # Errors
    /// 400 `unable to parse worker upid` or `no such task`.
    pub fn get(&self, upid: &str) -> Result<&Task, super::Error> {
        let i = self.find(upid)?;
        Ok(&self.tasks[i])
    }

    fn find(&self, upid: &str) -> Result<usize, super::Error> {
        let Some(parsed) = Upid::parse(upid) else {
            return Err(super::Error::invalid("upid", "unable to parse worker upid"));
        };
        let no_such_task = || super::Error::invalid("upid", "no such task");
        let i = *self.by_pid.get(&parsed.pid).ok_or_else(no_such_task)?;
        if self.tasks[i].upid_str == upid {
            return Ok(i);
        }
        // An older task of the same pid (once the pids wrapped around, or
        // in a saved world that repeats them), or no task at all.
        (0..i)
            .rev()
            .find(|&j| self.tasks[j].upid_str == upid)
            .ok_or_else(no_such_task)
    }

    /// Interrupts a running task (`received interrupt`) and answers the
    /// effect it will not have; a stopped one is left as it is.
    ///
    /// # Errors
    /// As [`Tasks::get`].
    pub fn interrupt(&mut self, upid: &str, now: i64) -> Result<Option<TaskEffect>, super::Error> {
        let i = self.find(upid)?;
        let TaskState::Running { until_ms } = self.tasks[i].state else {
            return Ok(None);
        };
        self.running.remove(&(until_ms, i));
        // Taken before the end gives up the worker that holds it.
        let effect = self.take_effect(i);
        self.tasks[i].finish(now, Some("received interrupt".into()));
        Ok(Some(effect))
    }

    /// `GET /nodes/{node}/tasks`: the items and the `total` of all that
    /// matched (running ones first, then the others newest first).
    pub fn list(
        &self,
        node: &str,
        f: &TaskFilter,
        visible: impl Fn(&Task) -> bool,
    ) -> (Vec<ListItem<'_>>, usize) {
        let active = f.source == "active" || f.source == "all";
        let archive = f.source == "archive" || f.source == "all";
        let on_node = |t: &&Task| t.upid.node == node && visible(t) && f.matches(t);
        let running = self.tasks.iter().filter(|t| t.running()).filter(on_node);
        let done = self
            .tasks
            .iter()
            .rev()
            .filter(|t| !t.running())
            .filter(on_node);
        let all: Vec<&Task> = match (active, archive) {
            (true, true) => running.chain(done).collect(),
            (true, false) => running.collect(),
            _ => done.collect(),
        };
        let total = all.len();
        let items = all
            .into_iter()
            .skip(f.start)
            .take(f.limit)
            .map(Task::list_item)
            .collect();
        (items, total)
    }
}

/// The filters of `GET /nodes/{node}/tasks`.
#[derive(Debug, Clone, Default)]
pub struct TaskFilter {
    /// First item to return.
    pub start: usize,
    /// How many items at most (`0` returns none).
    pub limit: usize,
    /// Case-insensitive substring of the user.
    pub userfilter: Option<String>,
    /// Exact task type.
    pub typefilter: Option<String>,
    /// Task id equal to this VMID.
    pub vmid: Option<u32>,
    /// Only tasks that did not end OK.
    pub errors: bool,
    /// `archive`, `active` or `all`.
    pub source: String,
    /// Started at or after.
    pub since: Option<i64>,
    /// Started at or before.
    pub until: Option<i64>,
    /// Status classes to keep.
    pub statusfilter: Option<Vec<String>>,
}

impl TaskFilter {
    /// Whether `task` passes the filters other than paging and source.
    pub fn matches(&self, task: &Task) -> bool {
        let u = &task.upid;
        if let Some(f) = &self.userfilter
            && !u.user.to_lowercase().contains(&f.to_lowercase())
        {
            return false;
        }
        if self.typefilter.as_ref().is_some_and(|t| *t != u.kind) {
            return false;
        }
        if self.vmid.is_some_and(|v| v.to_string() != u.id) {
            return false;
        }
        if self.since.is_some_and(|s| u.starttime < s)
            || self.until.is_some_and(|s| u.starttime > s)
        {
            return false;
        }
        // A running task has no status yet: its class is `unknown`.
        let class = task.status_class();
        if self.errors {
            return class != "ok";
        }
        match &self.statusfilter {
            Some(list) => list.iter().any(|s| s == class),
            None => true,
        }
    }
}

#[cfg(test)]
mod tests;
