//! The answers of `/cluster/tasks` and `/cluster/log` as
//! `API2/Cluster.pm` writes them: the model's task rows and log lines
//! turned into JSON, keys in PVE's order.

use serde_json::{Value, json};

use crate::model::clusterlog::Line;
use crate::model::{Task, TaskState};

/// A task of `GET /cluster/tasks`, as its node's `active` file has it: a
/// running one with its `pid`, a finished one with `endtime` and
/// `status`; a token's with `user` and `tokenid` apart.
pub fn task(t: &Task) -> Value {
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
        TaskState::Stopped {
            endtime,
            exitstatus,
        } => {
            v["endtime"] = json!(endtime);
            v["status"] = json!(exitstatus);
            v["saved"] = json!("1");
        }
        TaskState::Running { .. } => {
            v["pid"] = json!(u.pid);
            v["saved"] = json!("0");
        }
    }
    if let Some((user, tokenid)) = u.user.split_once('!') {
        v["user"] = json!(user);
        v["tokenid"] = json!(tokenid);
    }
    v
}

/// A line of `GET /cluster/log`, with `id` `<uid>:<node>`.
pub fn line(l: &Line) -> Value {
    let (uid, e) = (l.uid, &l.entry);
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
}
