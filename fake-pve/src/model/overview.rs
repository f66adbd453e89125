//! The dashboard's picture of the world (`GET /` of fake-pve, pushed by
//! `/_fake/events`): one read of every area as JSON, without changing
//! anything. Guests come from `/cluster/resources`, so every kind that
//! lists there (`qemu`, and `lxc` once containers exist) shows.

use serde_json::{Value, json};

use super::cluster::Cluster;
use super::tasks::{Task, TaskState};

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

impl Cluster {
    /// The world at a glance as of `now_ms` (epoch milliseconds): nodes,
    /// guests (with their pending changes and the addresses their guest
    /// agent reports), storages, each node's network with its pending
    /// changes, tasks (running first) and fault rules.
    pub fn overview(&self, now_ms: i64, limits: Limits) -> Value {
        let now = now_ms.div_euclid(1000);
        let resources = self.resources_view(None, now);
        let of = |kind: &'static str| resources.iter().filter(move |r| r["type"] == kind);
        let nodes: Vec<Value> = of("node")
            .map(|n| {
                let name = n["node"].as_str().unwrap_or_default();
                let mut n = n.clone();
                n["guests"] = json!(self.guests().values().filter(|v| v.node == name).count());
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
            .map(|g| self.guest_overview(g, now_ms))
            .collect();
        let storages: Vec<Value> = of("storage").cloned().collect();
        let network: Vec<Value> = self
            .nodes()
            .iter()
            .map(|n| {
                let (ifaces, changes) = match self.networks().get(&n.name) {
                    Some(net) => net.overview(self.version.is_v9()),
                    // Not read yet: a fresh install's, as the first read
                    // makes it.
                    None => super::network::NodeNetwork::fresh(&n.ip, &n.bridges, now)
                        .overview(self.version.is_v9()),
                };
                json!({ "node": n.name, "interfaces": ifaces, "changes": changes })
            })
            .collect();
        let running: Vec<&Task> = self.tasks().iter().filter(|t| t.running()).collect();
        let finished = self
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
            "tasks_total": self.tasks().len(),
            "tasks_running": running.len(),
            "faults": self.faults.rules(),
        })
    }

    /// A guest of `/cluster/resources` with its pending changes (keys
    /// set or deleted on the next start) and its guest agent's
    /// addresses, when the agent answers.
    fn guest_overview(&self, item: &Value, now_ms: i64) -> Value {
        let mut g = item.clone();
        let vm = item["vmid"]
            .as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .and_then(|vmid| self.guests().get(&vmid));
        let Some(vm) = vm else {
            return g;
        };
        let mut pending: Vec<&String> = vm.pending.keys().chain(vm.pending_delete.keys()).collect();
        pending.sort();
        pending.dedup();
        g["pending"] = json!(pending);
        if vm.lock().is_none() && vm.flock.held() {
            g["lock"] = json!("(file lock)");
        }
        if self.agent_available(&vm.node, vm.vmid, now_ms).is_ok() {
            let interfaces = match self.guests().agent(vm.vmid) {
                Some(agent) => agent.interfaces(vm),
                None => super::agent::Guest::default().interfaces(vm),
            };
            g["ips"] = json!(agent_addresses(&interfaces));
        }
        g
    }
}

/// The addresses of `network-get-interfaces`, loopback and link-local
/// ones left out.
fn agent_addresses(interfaces: &Value) -> Vec<String> {
    interfaces
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|i| i["ip-addresses"].as_array().into_iter().flatten())
        .filter_map(|a| a["ip-address"].as_str())
        .filter(|ip| !ip.starts_with("127.") && *ip != "::1" && !ip.starts_with("fe80:"))
        .map(str::to_string)
        .collect()
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
