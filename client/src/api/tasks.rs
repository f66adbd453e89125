//! `/nodes/{node}/tasks`: the tasks PVE runs for asynchronous calls, and
//! waiting for them.
//!
//! Every call that answers a UPID runs a task; the node is part of the
//! UPID, so the calls here take only the [`Upid`].

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::seg;
use crate::Client;
use crate::de;
use crate::error::{Error, Result};
use crate::transport::Params;

/// A task ID: `UPID:<node>:<pid>:<pstart>:<starttime>:<type>:<id>:<user>:`
/// (the numbers in hex).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Upid {
    raw: String,
    node: String,
    pid: u32,
    pstart: u64,
    starttime: i64,
    kind: String,
    id: String,
    user: String,
}

impl Upid {
    /// The UPID as PVE wrote it.
    pub fn as_str(&self) -> &str {
        &self.raw
    }

    /// The node that runs the task.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// The worker's process ID.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The worker's process start time (in clock ticks).
    pub fn pstart(&self) -> u64 {
        self.pstart
    }

    /// When the task started, in epoch seconds.
    pub fn starttime(&self) -> i64 {
        self.starttime
    }

    /// The task type (`qmstart`, `startall`, ...).
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The object the task works on (a VMID, or empty).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Who started it (`root@pam`, `ci@pve!runner`).
    pub fn user(&self) -> &str {
        &self.user
    }
}

impl fmt::Display for Upid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

impl fmt::Debug for Upid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Upid({})", self.raw)
    }
}

impl FromStr for Upid {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let bad = || Error::Decode {
            message: format!("not a UPID: '{s}'"),
        };
        let rest = s.strip_prefix("UPID:").ok_or_else(bad)?;
        // The user may hold no ':' but the ID may, so split from both ends.
        let rest = rest.strip_suffix(':').ok_or_else(bad)?;
        let mut head = rest.splitn(5, ':');
        let node = head.next().ok_or_else(bad)?;
        let pid = head.next().ok_or_else(bad)?;
        let pstart = head.next().ok_or_else(bad)?;
        let starttime = head.next().ok_or_else(bad)?;
        let tail = head.next().ok_or_else(bad)?;
        let (kind, tail) = tail.split_once(':').ok_or_else(bad)?;
        let (id, user) = tail.rsplit_once(':').ok_or_else(bad)?;
        if node.is_empty() || kind.is_empty() || user.is_empty() {
            return Err(bad());
        }
        Ok(Self {
            raw: s.to_string(),
            node: node.to_string(),
            pid: u32::from_str_radix(pid, 16).map_err(|_| bad())?,
            pstart: u64::from_str_radix(pstart, 16).map_err(|_| bad())?,
            starttime: i64::from_str_radix(starttime, 16).map_err(|_| bad())?,
            kind: kind.to_string(),
            id: id.to_string(),
            user: user.to_string(),
        })
    }
}

impl Serialize for Upid {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.raw)
    }
}

impl<'de> Deserialize<'de> for Upid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Whether a task runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskState {
    /// Still running.
    Running,
    /// Ended; see the exit status.
    Stopped,
    /// Something newer PVE may say.
    #[serde(other)]
    Unknown,
}

/// What `GET .../tasks/{upid}/status` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskStatus {
    /// The task.
    pub upid: Upid,
    /// The node.
    pub node: String,
    /// The task type.
    #[serde(rename = "type")]
    pub kind: String,
    /// The object it works on.
    #[serde(default)]
    pub id: String,
    /// Who started it.
    pub user: String,
    /// When it started, epoch seconds.
    #[serde(deserialize_with = "de::i64_lenient")]
    pub starttime: i64,
    /// Running or stopped.
    pub status: TaskState,
    /// Once stopped: `OK`, `WARNINGS: n`, or the error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exitstatus: Option<String>,
    /// Anything else PVE sent (`pid`, `pstart`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl TaskStatus {
    /// Whether the task still runs.
    pub fn is_running(&self) -> bool {
        self.status == TaskState::Running
    }

    /// Whether it ended well: `OK`, or `WARNINGS: n` (PVE counts those as
    /// done).
    pub fn succeeded(&self) -> bool {
        self.status == TaskState::Stopped
            && self
                .exitstatus
                .as_deref()
                .is_some_and(|s| s == "OK" || s.starts_with("WARNINGS: "))
    }

    /// The number of warnings of a task that ended with `WARNINGS: n`.
    pub fn warnings(&self) -> Option<u32> {
        self.exitstatus
            .as_deref()?
            .strip_prefix("WARNINGS: ")?
            .trim()
            .parse()
            .ok()
    }
}

/// One line of a task log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskLogLine {
    /// The line number, from 1.
    #[serde(deserialize_with = "de::u64_lenient")]
    pub n: u64,
    /// The text.
    pub t: String,
}

/// A page of a task log, with the total number of lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskLog {
    /// The lines asked for.
    pub lines: Vec<TaskLogLine>,
    /// How many lines the log has.
    pub total: u64,
}

/// Where `node_tasks` looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskSource {
    /// Ended tasks (PVE's default).
    Archive,
    /// Running tasks.
    Active,
    /// Both.
    All,
}

impl TaskSource {
    /// PVE's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Archive => "archive",
            Self::Active => "active",
            Self::All => "all",
        }
    }
}

/// The filters of `GET /nodes/{node}/tasks`; all optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskFilter {
    /// Skip this many.
    pub start: Option<u64>,
    /// At most this many (PVE's default 50; 0 returns nothing).
    pub limit: Option<u64>,
    /// Users containing this text.
    pub userfilter: Option<String>,
    /// Tasks of this type.
    pub typefilter: Option<String>,
    /// Tasks about this guest.
    pub vmid: Option<u32>,
    /// Only failed tasks.
    pub errors: Option<bool>,
    /// Running, ended, or both.
    pub source: Option<TaskSource>,
    /// Started at or after (epoch seconds).
    pub since: Option<i64>,
    /// Started at or before (epoch seconds).
    pub until: Option<i64>,
    /// `ok`, `warning`, `error`, `unknown`.
    pub statusfilter: Vec<String>,
}

impl TaskFilter {
    fn params(&self) -> Params {
        Params::new()
            .opt("start", self.start)
            .opt("limit", self.limit)
            .opt("userfilter", self.userfilter.as_deref())
            .opt("typefilter", self.typefilter.as_deref())
            .opt("vmid", self.vmid)
            .opt("errors", self.errors)
            .opt("source", self.source.map(TaskSource::as_str))
            .opt("since", self.since)
            .opt("until", self.until)
            .opt(
                "statusfilter",
                (!self.statusfilter.is_empty()).then(|| self.statusfilter.join(",")),
            )
    }
}

/// One entry of `GET /nodes/{node}/tasks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskListItem {
    /// The task.
    pub upid: Upid,
    /// The node.
    pub node: String,
    /// The task type.
    #[serde(rename = "type")]
    pub kind: String,
    /// The object it works on.
    #[serde(default)]
    pub id: String,
    /// Who started it.
    pub user: String,
    /// When it started.
    #[serde(deserialize_with = "de::i64_lenient")]
    pub starttime: i64,
    /// When it ended.
    #[serde(default, deserialize_with = "de::opt_i64")]
    pub endtime: Option<i64>,
    /// `OK`, `WARNINGS: n`, the error, or `RUNNING` for active tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Anything else PVE sent (`pid`, `pstart`, `tokenid`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A page of the task list, with the number of all tasks that matched.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskList {
    /// The tasks asked for, running ones first, then newest first.
    pub tasks: Vec<TaskListItem>,
    /// How many matched in all.
    pub total: u64,
}

/// How [`Tasks::wait_with`] waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitOptions {
    poll_interval: Duration,
    timeout: Duration,
    log_lines: u64,
}

impl Default for WaitOptions {
    /// Poll every 2 s, give up after 5 minutes, keep 20 log lines of a
    /// failed task.
    fn default() -> Self {
        Self {
            poll_interval: Duration::from_secs(2),
            timeout: Duration::from_secs(300),
            log_lines: 20,
        }
    }
}

impl WaitOptions {
    /// How often the status is read.
    #[must_use]
    pub fn poll_interval(mut self, d: Duration) -> Self {
        self.poll_interval = d;
        self
    }

    /// How long to wait at most.
    #[must_use]
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = d;
        self
    }

    /// How many lines of a failed task's log to keep.
    #[must_use]
    pub fn log_lines(mut self, n: u64) -> Self {
        self.log_lines = n;
        self
    }
}

/// The tasks area; see [`Client::tasks`].
#[derive(Debug, Clone, Copy)]
pub struct Tasks<'a> {
    client: &'a Client,
}

impl Client {
    /// The task calls.
    pub fn tasks(&self) -> Tasks<'_> {
        Tasks { client: self }
    }
}

fn task_path(upid: &Upid, tail: &str) -> String {
    format!(
        "/nodes/{}/tasks/{}{tail}",
        seg(upid.node()),
        seg(upid.as_str())
    )
}

impl Tasks<'_> {
    /// `GET /nodes/{node}/tasks` (`node_tasks`).
    ///
    /// # Errors
    /// [`Error::Validation`] for a malformed filter.
    pub async fn node_tasks(&self, node: &str, filter: &TaskFilter) -> Result<TaskList> {
        let path = format!("/nodes/{}/tasks", seg(node));
        let (tasks, total): (Vec<TaskListItem>, _) = self
            .client
            .call_with_total(Method::GET, &path, &filter.params())
            .await?;
        // PVE leaves `total` out when it is zero.
        Ok(TaskList {
            total: total.unwrap_or(tasks.len() as u64),
            tasks,
        })
    }

    /// `GET .../tasks/{upid}/status` (`read_task_status`).
    ///
    /// # Errors
    /// [`Error::Validation`] (on `upid`) for an unknown task.
    pub async fn read_task_status(&self, upid: &Upid) -> Result<TaskStatus> {
        self.client
            .call(Method::GET, &task_path(upid, "/status"), &Params::new())
            .await
    }

    /// `GET .../tasks/{upid}/log` (`read_task_log`): `limit` lines from
    /// line `start` (0-based); `limit` 0 reads all.
    ///
    /// # Errors
    /// [`Error::Validation`] (on `upid`) for an unknown task.
    pub async fn read_task_log(&self, upid: &Upid, start: u64, limit: u64) -> Result<TaskLog> {
        let params = Params::new().set("start", start).set("limit", limit);
        let (lines, total): (Vec<TaskLogLine>, _) = self
            .client
            .call_with_total(Method::GET, &task_path(upid, "/log"), &params)
            .await?;
        Ok(TaskLog {
            total: total.unwrap_or(lines.len() as u64),
            lines,
        })
    }

    /// `DELETE .../tasks/{upid}` (`stop_task`): interrupts a running task
    /// (it then ends with an error); a no-op for an ended one.
    ///
    /// # Errors
    /// [`Error::Validation`] (on `upid`) for an unknown task.
    pub async fn stop_task(&self, upid: &Upid) -> Result<()> {
        let _: Value = self
            .client
            .call(Method::DELETE, &task_path(upid, ""), &Params::new())
            .await?;
        Ok(())
    }

    /// The last `n` lines of a task log.
    ///
    /// # Errors
    /// As [`Tasks::read_task_log`].
    pub async fn log_tail(&self, upid: &Upid, n: u64) -> Result<Vec<String>> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let first = self.read_task_log(upid, 0, 1).await?;
        let start = first.total.saturating_sub(n);
        let page = self.read_task_log(upid, start, n).await?;
        Ok(page.lines.into_iter().map(|l| l.t).collect())
    }

    /// Waits for a task with the client's [`WaitOptions`] (by default:
    /// poll every 2 s, at most 5 minutes).
    ///
    /// # Errors
    /// As [`Tasks::wait_with`].
    pub async fn wait(&self, upid: &Upid) -> Result<TaskStatus> {
        let opts = self.client.config().wait_options().clone();
        self.wait_with(upid, &opts).await
    }

    /// Waits until the task ends and returns its final status.
    ///
    /// # Errors
    /// [`Error::TaskFailed`] with the exit status and the log's last lines
    /// when the task ended with an error; [`Error::Timeout`] when it still
    /// runs after the timeout (it is left running); errors of the status
    /// calls (transient ones are retried by the retry policy).
    pub async fn wait_with(&self, upid: &Upid, opts: &WaitOptions) -> Result<TaskStatus> {
        let deadline = Instant::now() + opts.timeout;
        loop {
            let status = self.read_task_status(upid).await?;
            if !status.is_running() {
                if status.succeeded() {
                    return Ok(status);
                }
                let log_tail = match self.log_tail(upid, opts.log_lines).await {
                    Ok(lines) => lines,
                    Err(e) => vec![format!("(log unavailable: {e})")],
                };
                return Err(Error::TaskFailed {
                    upid: upid.to_string(),
                    exitstatus: status
                        .exitstatus
                        .unwrap_or_else(|| "unexpected status".into()),
                    log_tail,
                });
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::Timeout {
                    message: format!("task {upid} still running after {:?}", opts.timeout),
                });
            }
            tokio::time::sleep(opts.poll_interval.min(deadline - now)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[test]
    fn upids_are_parsed() {
        let u: Upid = "UPID:pve:0000A1B2:00C0FFEE:6A9C3E80:qmstart:100:root@pam!ci:"
            .parse()
            .expect("valid");
        assert_eq!(u.node(), "pve");
        assert_eq!(u.pid(), 0xA1B2);
        assert_eq!(u.pstart(), 0x00C0_FFEE);
        assert_eq!(u.starttime(), 0x6A9C_3E80);
        assert_eq!(u.kind(), "qmstart");
        assert_eq!(u.id(), "100");
        assert_eq!(u.user(), "root@pam!ci");
        assert_eq!(
            u.to_string(),
            "UPID:pve:0000A1B2:00C0FFEE:6A9C3E80:qmstart:100:root@pam!ci:"
        );
        let empty_id: Upid = "UPID:pve:1:2:3:startall::root@pam:".parse().expect("valid");
        assert_eq!(empty_id.id(), "");
    }

    #[rstest]
    #[case("")]
    #[case("UPID:pve:1:2:3:qmstart:100:root@pam")]
    #[case("PID:pve:1:2:3:qmstart:100:root@pam:")]
    #[case("UPID:pve:xyz:2:3:qmstart:100:root@pam:")]
    #[case("UPID::1:2:3:qmstart:100:root@pam:")]
    fn bad_upids(#[case] s: &str) {
        assert!(s.parse::<Upid>().is_err(), "{s}");
    }

    fn status(exit: Option<&str>) -> TaskStatus {
        let mut v = serde_json::json!({
            "upid": "UPID:pve:1:2:3:qmstart:100:root@pam:", "node": "pve",
            "type": "qmstart", "id": "100", "user": "root@pam", "starttime": 3,
            "pid": 1, "pstart": 2, "status": if exit.is_some() { "stopped" } else { "running" },
        });
        if let Some(e) = exit {
            v["exitstatus"] = e.into();
        }
        serde_json::from_value(v).expect("status")
    }

    #[test]
    fn exit_statuses() {
        assert!(status(None).is_running());
        assert!(status(Some("OK")).succeeded());
        assert!(status(Some("WARNINGS: 2")).succeeded());
        assert_eq!(status(Some("WARNINGS: 2")).warnings(), Some(2));
        assert!(!status(Some("VM 100 already running")).succeeded());
        assert!(!status(Some("unexpected status")).succeeded());
    }
}
