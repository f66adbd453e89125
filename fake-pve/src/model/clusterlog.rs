//! The cluster log pmxcfs keeps (`PVE::Cluster::log_msg`, read by
//! `GET /cluster/log`): every task's `starting task UPID` and `end task
//! UPID STATUS` lines (RESTEnvironment's `fork_worker` and reaper), and
//! the logins' `successful auth for user 'x'` (AccessControl's
//! `create_ticket`), newest first, `max` entries (50 unless given).
//!
//! The task lines are read from the task list itself, so they cannot
//! drift from it; the logins are kept here.

use super::nodes::Nodes;
use super::tasks::{Task, TaskState, Tasks};
use serde::{Deserialize, Serialize};

/// syslog's `info`.
const INFO: u8 = 6;
/// syslog's `notice`.
const NOTICE: u8 = 5;
/// syslog's `err`.
const ERR: u8 = 3;
/// The entries kept of the logins (pmxcfs's log is a ring buffer too).
const KEEP: usize = 1000;
/// How many entries `GET /cluster/log` answers without `max`.
pub const DEFAULT_MAX: usize = 50;

/// One entry of the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Epoch seconds.
    pub time: i64,
    /// syslog priority (6 info, 3 err).
    pub pri: u8,
    /// The daemon that logged it.
    pub tag: String,
    /// Its pid.
    pub pid: u32,
    /// The node it was logged on.
    pub node: String,
    /// The user the entry is about (filters non-admin readers).
    pub user: String,
    /// The text.
    pub msg: String,
}

/// The log's own entries (logins).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterLog {
    #[serde(default)]
    entries: Vec<Entry>,
}

impl ClusterLog {
    /// A successful login on `node` at `time`, as `create_ticket` logs
    /// it (in root@pam's name).
    pub fn login(&mut self, node: &str, userid: &str, time: i64) {
        self.daemon_info(node, format!("successful auth for user '{userid}'"), time);
    }

    /// A successful OpenID login on `node` at `time`, as
    /// `API2/OpenId.pm`'s `login` logs it (in root@pam's name).
    pub fn openid_login(&mut self, node: &str, userid: &str, time: i64) {
        self.daemon_info(
            node,
            format!("successful openid auth for user '{userid}'"),
            time,
        );
    }

    /// A change of the cluster's membership on `node` at `time`, as
    /// `API2/ClusterConfig.pm` logs it (`notice`, in root@pam's name).
    pub fn membership(&mut self, node: &str, msg: String, time: i64) {
        self.push(node, NOTICE, msg, time);
    }

    fn daemon_info(&mut self, node: &str, msg: String, time: i64) {
        self.push(node, INFO, msg, time);
    }

    fn push(&mut self, node: &str, pri: u8, msg: String, time: i64) {
        self.entries.push(Entry {
            time,
            pri,
            tag: "pvedaemon".into(),
            pid: 1_200,
            node: node.to_string(),
            user: "root@pam".into(),
            msg,
        });
        if self.entries.len() > KEEP {
            let extra = self.entries.len() - KEEP;
            self.entries.drain(..extra);
        }
    }
}

/// One line of `GET /cluster/log`: an entry and its `uid` (its place in
/// the whole log, oldest 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The entry's place in the log, oldest first, from 1.
    pub uid: usize,
    /// The entry.
    pub entry: Entry,
}

/// `GET /cluster/log`: the newest `max` entries of the log's own and the
/// tasks' lines, those about `user` only when given (callers without
/// `Sys.Syslog` on `/`).
pub fn lines(log: &ClusterLog, tasks: &Tasks, user: Option<&str>, max: usize) -> Vec<Line> {
    let mut all: Vec<Entry> = log.entries.clone();
    for t in tasks.iter() {
        let u = &t.upid;
        all.push(Entry {
            time: u.starttime,
            pri: INFO,
            tag: "pvedaemon".into(),
            pid: u.pid,
            node: u.node.clone(),
            user: u.user.clone(),
            msg: format!("starting task {}", t.upid_str),
        });
        if let TaskState::Stopped {
            endtime,
            exitstatus,
        } = &t.state
        {
            let ok = exitstatus == "OK" || exitstatus.starts_with("WARNINGS");
            all.push(Entry {
                time: *endtime,
                pri: if ok { INFO } else { ERR },
                tag: "pvedaemon".into(),
                pid: u.pid,
                node: u.node.clone(),
                user: u.user.clone(),
                msg: format!("end task {} {exitstatus}", t.upid_str),
            });
        }
    }
    // Stable: a task's start comes before its end at the same second.
    all.sort_by_key(|e| e.time);
    let max = if max == 0 { DEFAULT_MAX } else { max };
    let mut out: Vec<Line> = Vec::new();
    for (i, e) in all.into_iter().enumerate().rev() {
        if out.len() == max {
            break;
        }
        if user.is_none_or(|u| e.user == u) {
            out.push(Line {
                uid: i + 1,
                entry: e,
            });
        }
    }
    out
}

/// `GET /cluster/tasks` (`get_tasklist`): per node, in the node list's
/// order, the running tasks and the newest finished ones, 25 in all, as
/// each node's `active` file broadcasts them.
pub fn recent_tasks<'a>(nodes: &Nodes, tasks: &'a Tasks) -> Vec<&'a Task> {
    const MAX_FINISHED: usize = 25;
    let mut out = Vec::new();
    for n in nodes.iter() {
        let mine: Vec<&Task> = tasks.iter().filter(|t| t.upid.node == n.name).collect();
        let running: Vec<&Task> = mine.iter().copied().filter(|t| t.running()).collect();
        let mut done: Vec<&Task> = mine.iter().copied().filter(|t| !t.running()).collect();
        done.sort_by_key(|t| std::cmp::Reverse(t.upid.starttime));
        let room = MAX_FINISHED.saturating_sub(running.len());
        out.extend(running.into_iter().chain(done.into_iter().take(room)));
    }
    out
}
