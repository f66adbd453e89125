//! The dashboard's picture of the world (`GET /` of fake-pve, pushed by
//! `/_fake/events`): one read of every area as JSON, without changing
//! anything. Guests come from `/cluster/resources`, so every kind that
//! lists there (`qemu`, and `lxc` once containers exist) shows.

use serde_json::{Value, json};

use crate::model::Cluster;
use crate::model::tasks::{Task, TaskState};

/// How much of a large world the overview carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Guests listed (the first by VMID); `guests_total` counts all.
    pub guests: usize,
    /// Finished tasks listed (the newest); running ones are always all
    /// listed.
    pub tasks: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            guests: 500,
            tasks: 50,
        }
    }
}

/// The world at a glance as of `now_ms` (epoch milliseconds): nodes,
/// guests (with their pending changes and the addresses their guest
/// agent reports), storages, each node's network with its pending
/// changes, tasks (running first) and fault rules.
pub fn overview(c: &Cluster, now_ms: i64, limits: Limits) -> Value {
    let now = now_ms.div_euclid(1000);
    let resources = super::view::resources(&c.resources(), None, now);
    let of = |kind: &'static str| resources.iter().filter(move |r| r["type"] == kind);
    let nodes: Vec<Value> = of("node")
        .map(|n| {
            let name = n["node"].as_str().unwrap_or_default();
            let mut n = n.clone();
            n["guests"] = json!(c.guests().values().filter(|v| v.node() == name).count());
            n
        })
        .collect();
    let guests_all: Vec<&Value> = resources
        .iter()
        .filter(|r| matches!(r["type"].as_str(), Some("qemu" | "lxc")))
        .collect();
    let guests: Vec<Value> = guests_all
        .iter()
        .take(limits.guests)
        .map(|g| guest_overview(c, g, now_ms))
        .collect();
    let storages: Vec<Value> = of("storage").cloned().collect();
    let network: Vec<Value> = c
        .nodes()
        .iter()
        .map(|n| {
            let (ifaces, changes) = match c.networks().get(&n.name) {
                Some(net) => net.overview(c.version.is_v9()),
                // Not read yet: a fresh install's, as the first read
                // makes it.
                None => crate::model::network::NodeNetwork::fresh(&n.ip, &n.bridges, &n.nics, now)
                    .overview(c.version.is_v9()),
            };
            let ifaces = crate::api::network::view::ifaces(&ifaces);
            json!({ "node": n.name, "interfaces": ifaces, "changes": changes })
        })
        .collect();
    let running: Vec<&Task> = c.tasks().iter().filter(|t| t.running()).collect();
    let finished = c
        .tasks()
        .iter()
        .rev()
        .filter(|t| !t.running())
        .take(limits.tasks);
    let tasks: Vec<Value> = running
        .iter()
        .copied()
        .chain(finished)
        .map(task_overview)
        .collect();
    json!({
        "now_ms": now_ms,
        "nodes": nodes,
        "guests": guests,
        "guests_total": guests_all.len(),
        "storages": storages,
        "network": network,
        "tasks": tasks,
        "tasks_total": c.tasks().len(),
        "tasks_running": running.len(),
        "faults": c.faults.rules(),
    })
}

/// A guest of `/cluster/resources` with its pending changes (keys
/// set or deleted on the next start) and its guest agent's
/// addresses, when the agent answers.
fn guest_overview(c: &Cluster, item: &Value, now_ms: i64) -> Value {
    let mut g = item.clone();
    let Some(vmid) = item["vmid"].as_u64().and_then(|v| u32::try_from(v).ok()) else {
        return g;
    };
    let agent_up = c
        .guests()
        .get(&vmid)
        .is_some_and(|vm| c.guests.agent_available(vm.node(), vmid, now_ms).is_ok());
    let Some(extras) = crate::model::overview::vm_extras(c.guests(), vmid, agent_up) else {
        return g;
    };
    g["pending"] = json!(extras.pending);
    if extras.file_lock {
        g["lock"] = json!("(file lock)");
    }
    if let Some(ips) = extras.ips {
        g["ips"] = json!(ips);
    }
    g
}

/// A task as `GET /nodes/{node}/tasks` lists it, with the number of its
/// log lines so far, whether it failed, and, while it runs, its planned
/// end (epoch milliseconds).
fn task_overview(t: &Task) -> Value {
    let mut v = json!(t.list_item());
    v["lines"] = json!(t.log.len());
    v["failed"] = json!(t.status_class() == "error");
    if let TaskState::Running { until_ms } = t.state {
        v["until_ms"] = json!(until_ms);
    }
    v
}
