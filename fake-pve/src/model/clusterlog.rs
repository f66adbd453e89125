//! The cluster log pmxcfs keeps (`PVE::Cluster::log_msg`, read by
//! `GET /cluster/log`): every task's `starting task UPID` and `end task
//! UPID STATUS` lines (RESTEnvironment's `fork_worker` and reaper), and
//! the logins' `successful auth for user 'x'` (AccessControl's
//! `create_ticket`), newest first, `max` entries (50 unless given).
//!
//! The task lines are read from the task list itself, so they cannot
//! drift from it; the logins are kept here.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Cluster;

/// syslog's `info`.
const INFO: u8 = 6;
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
    /// Whether nothing was logged (saved worlds leave it out).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A successful login on `node` at `time`, as `create_ticket` logs
    /// it (in root@pam's name).
    pub fn login(&mut self, node: &str, userid: &str, time: i64) {
        self.entries.push(Entry {
            time,
            pri: INFO,
            tag: "pvedaemon".into(),
            pid: 1_200,
            node: node.to_string(),
            user: "root@pam".into(),
            msg: format!("successful auth for user '{userid}'"),
        });
        if self.entries.len() > KEEP {
            let extra = self.entries.len() - KEEP;
            self.entries.drain(..extra);
        }
    }

    /// The entries kept, oldest first.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }
}

impl Cluster {
    /// The cluster log, to record logins.
    pub fn clusterlog_mut(&mut self) -> &mut ClusterLog {
        &mut self.clusterlog
    }

    /// `GET /cluster/log`: the newest `max` entries, those about `user`
    /// only when given (callers without `Sys.Syslog` on `/`); each with
    /// `id` `<uid>:<node>`.
    pub fn cluster_log_view(&self, user: Option<&str>, max: usize) -> Vec<Value> {
        let mut all: Vec<Entry> = self.clusterlog.entries.clone();
        for t in self.tasks.iter() {
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
            if let super::TaskState::Stopped {
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
        all.iter()
            .enumerate()
            .rev()
            .filter(|(_, e)| user.is_none_or(|u| e.user == u))
            .take(max)
            .map(|(i, e)| {
                let uid = i + 1;
                json!({
                    "uid": uid,
                    "time": e.time,
                    "pri": e.pri,
                    "tag": e.tag,
                    "pid": e.pid,
                    "node": e.node,
                    "user": e.user,
                    "msg": e.msg,
                    "id": format!("{uid}:{}", e.node),
                })
            })
            .collect()
    }

    /// `GET /cluster/tasks` (`get_tasklist`): per node, in the node
    /// list's order, the running tasks and the newest finished ones, 25 in
    /// all, as each node's `active` file broadcasts them.
    pub fn cluster_tasks_view(&self) -> Vec<Value> {
        const MAX_FINISHED: usize = 25;
        let mut out = Vec::new();
        for n in self.nodes.iter() {
            let mine: Vec<&super::Task> = self
                .tasks
                .iter()
                .filter(|t| t.upid.node == n.name)
                .collect();
            let running: Vec<&&super::Task> = mine.iter().filter(|t| t.running()).collect();
            let mut done: Vec<&&super::Task> = mine.iter().filter(|t| !t.running()).collect();
            done.sort_by_key(|t| std::cmp::Reverse(t.upid.starttime));
            let room = MAX_FINISHED.saturating_sub(running.len());
            for t in running.into_iter().chain(done.into_iter().take(room)) {
                let u = &t.upid;
                let mut v = json!({
                    "upid": t.upid_str,
                    "node": u.node,
                    "starttime": u.starttime,
                    "type": u.kind,
                    "id": u.id,
                    "user": u.user,
                });
                match &t.state {
                    super::TaskState::Stopped {
                        endtime,
                        exitstatus,
                    } => {
                        v["endtime"] = json!(endtime);
                        v["status"] = json!(exitstatus);
                        v["saved"] = json!("1");
                    }
                    super::TaskState::Running { .. } => {
                        v["pid"] = json!(u.pid);
                        v["saved"] = json!("0");
                    }
                }
                if let Some((user, tokenid)) = u.user.split_once('!') {
                    v["user"] = json!(user);
                    v["tokenid"] = json!(tokenid);
                }
                out.push(v);
            }
        }
        out
    }
}
