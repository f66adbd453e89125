//! The whole emulated cluster: members, storages, guests, users and tasks.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::access::Access;
use super::faults::Faults;
use super::nodes::{Node, NodeStatus};
pub use super::qemu::Vm;
use super::storage::Volumes;
use super::tasks::{Task, TaskEffect, TaskFilter, TaskState, Upid, Worker};
use super::{Error, PveVersion, Result};

/// The lowest VMID `/cluster/nextid` hands out.
pub const NEXTID_LOWER: u32 = 100;
/// One past the highest VMID `/cluster/nextid` hands out.
pub const NEXTID_UPPER: u32 = 1_000_000;

/// A storage definition of `storage.cfg`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Storage {
    /// Storage id (`local-lvm`).
    pub storage: String,
    /// Plugin type: `dir`, `lvmthin`, `lvm`, `zfspool`, `nfs`, ...
    #[serde(rename = "type")]
    pub kind: String,
    /// Content types (`images`, `rootdir`, `iso`, ...), in order.
    pub content: Vec<String>,
    /// Whether every node sees the same storage.
    pub shared: bool,
    /// Nodes it is restricted to; `None` for all.
    pub nodes: Option<Vec<String>>,
    /// Disabled storages are configured but not active.
    pub disable: bool,
    /// Capacity in bytes.
    pub total: u64,
    /// Bytes in use before any volume the emulator allocates.
    pub used: u64,
    /// Other options (`path`, `thinpool`, `vgname`, `server`, `export`...).
    pub options: BTreeMap<String, String>,
}

impl Storage {
    /// Whether the storage is configured for `node` and enabled.
    pub fn active_on(&self, node: &str) -> bool {
        !self.disable
            && self
                .nodes
                .as_ref()
                .is_none_or(|n| n.iter().any(|x| x == node))
    }
}

/// One emulated cluster (or standalone node).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cluster {
    /// The release the cluster impersonates.
    pub version: PveVersion,
    /// The cluster name; `None` for a standalone node.
    pub name: Option<String>,
    /// The node clients connect to (the first one listed).
    pub local_node: String,
    /// Members, in `nodelist` order.
    pub nodes: Vec<Node>,
    /// `storage.cfg`.
    pub storages: Vec<Storage>,
    /// Guests by VMID.
    pub vms: BTreeMap<u32, Vm>,
    /// Users and tokens.
    pub access: Access,
    /// Volumes allocated on the storages.
    #[serde(default)]
    pub volumes: Volumes,
    /// Every task, oldest first.
    pub tasks: Vec<Task>,
    /// The next worker pid.
    pub next_pid: u32,
    /// Fault rules in force (`/_fake/faults`, a scenario's `faults:`).
    #[serde(default)]
    pub faults: Faults,
    /// Lookups into `tasks`, rebuilt when missing (they are not saved).
    #[serde(skip)]
    pub task_index: TaskIndex,
    /// Network configuration per node (`/etc/network/interfaces`).
    #[serde(default)]
    pub network: BTreeMap<String, super::network::NodeNetwork>,
    /// Guest-agent state per VM.
    #[serde(default)]
    pub guests: BTreeMap<u32, super::agent::Guest>,
}

/// Where tasks are, so that a request never scans every task: running
/// ones by their end, all of them by UPID.
#[derive(Debug, Clone, Default)]
pub struct TaskIndex {
    running: std::collections::BTreeSet<(i64, usize)>,
    by_upid: std::collections::HashMap<String, usize>,
}

impl Cluster {
    /// Rebuilds the task lookups when they do not cover every task (after
    /// loading a saved state).
    fn index_tasks(&mut self) {
        if self.task_index.by_upid.len() == self.tasks.len() {
            return;
        }
        let mut idx = TaskIndex::default();
        for (i, t) in self.tasks.iter().enumerate() {
            idx.by_upid.insert(t.upid_str.clone(), i);
            if let TaskState::Running { until_ms } = t.state {
                idx.running.insert((until_ms, i));
            }
        }
        self.task_index = idx;
    }

    /// The node a node-scoped call names, as PVE's proxy resolves it:
    /// `localhost` and the local name are local, another member is
    /// proxied to (and fails if it is offline), anything else fails the
    /// host name lookup.
    ///
    /// # Errors
    /// 500 for an unknown name, 595 for an offline member.
    pub fn node(&self, name: &str) -> Result<&Node> {
        let name = if name == "localhost" {
            self.local_node.as_str()
        } else {
            name
        };
        let Some(node) = self.nodes.iter().find(|n| n.name == name) else {
            return Err(Error::failed(format!(
                "hostname lookup '{name}' failed - failed to get address info for: {name}: Name or service not known"
            )));
        };
        if node.status == NodeStatus::Offline {
            return Err(Error::Unreachable("No route to host".into()));
        }
        Ok(node)
    }

    /// Memory of the running guests on `node`, and how many run.
    pub fn guest_load(&self, node: &str) -> (u64, usize) {
        self.vms
            .values()
            .filter(|v| v.node == node && v.running())
            .fold((0, 0), |(m, n), v| (m + v.maxmem(), n + 1))
    }

    /// `GET /nodes` items.
    pub fn nodes_view(&self, now: i64) -> Vec<Value> {
        self.nodes
            .iter()
            .map(|n| {
                let (mem, running) = self.guest_load(&n.name);
                n.list_item(now, mem, running, false)
            })
            .collect()
    }

    /// `GET /cluster/status`.
    pub fn status_view(&self) -> Vec<Value> {
        let mut out = Vec::new();
        if let Some(name) = &self.name {
            let online = self
                .nodes
                .iter()
                .filter(|n| n.status == NodeStatus::Online)
                .count();
            out.push(json!({
                "type": "cluster",
                "id": "cluster",
                "name": name,
                "nodes": self.nodes.len(),
                "quorate": u8::from(online * 2 > self.nodes.len()),
                "version": self.nodes.len(),
            }));
        }
        for n in &self.nodes {
            out.push(json!({
                "type": "node",
                "id": format!("node/{}", n.name),
                "name": n.name,
                "nodeid": n.nodeid,
                "ip": n.ip,
                "local": u8::from(n.name == self.local_node),
                "online": u8::from(n.status == NodeStatus::Online),
                "level": n.level,
            }));
        }
        out
    }

    /// `GET /cluster/resources`, optionally filtered by `type`.
    pub fn resources_view(&self, kind: Option<&str>, now: i64) -> Vec<Value> {
        let mut out = Vec::new();
        let want = |k: &str| kind.is_none_or(|t| t == k);
        if want("vm") {
            let mut vms: Vec<&Vm> = self.vms.values().collect();
            vms.sort_by_key(|v| v.vmid.to_string());
            out.extend(vms.into_iter().map(|v| self.vm_resource(v, now)));
        }
        if want("node") {
            for n in &self.nodes {
                let (mem, running) = self.guest_load(&n.name);
                out.push(n.list_item(now, mem, running, true));
            }
        }
        if want("storage") {
            for n in &self.nodes {
                for s in self.storages.iter().filter(|s| s.active_on(&n.name)) {
                    out.push(json!({
                        "id": format!("storage/{}/{}", n.name, s.storage),
                        "storage": s.storage,
                        "node": n.name,
                        "type": "storage",
                        "plugintype": s.kind,
                        "status": if n.status == NodeStatus::Online { "available" } else { "unknown" },
                        "shared": u8::from(s.shared),
                        "content": s.content.join(","),
                        "maxdisk": s.total,
                        "disk": self.storage_used(s, &n.name),
                    }));
                }
            }
        }
        if !self.version.is_v9() && want("sdn") {
            for n in &self.nodes {
                out.push(json!({
                    "id": format!("sdn/{}/localnetwork", n.name),
                    "sdn": "localnetwork",
                    "node": n.name,
                    "type": "sdn",
                    "status": "ok",
                }));
            }
        }
        if self.version.is_v9() && kind.is_none() {
            for n in &self.nodes {
                out.push(json!({
                    "id": format!("network/{}/zone/localnetwork", n.name),
                    "network": "localnetwork",
                    "network-type": "zone",
                    "zone-type": "local",
                    "node": n.name,
                    "type": "network",
                    "status": "ok",
                }));
            }
        }
        out
    }

    fn vm_resource(&self, v: &Vm, now: i64) -> Value {
        let st = self.vm_status(v, now.saturating_mul(1000), false, false);
        let mut item = json!({
            "id": format!("qemu/{}", v.vmid),
            "vmid": v.vmid,
            "type": "qemu",
            "node": v.node,
            "name": st["name"],
            "status": v.qmpstatus.clone().unwrap_or_else(|| v.status.clone()),
            "template": u8::from(v.template()),
            "uptime": st["uptime"],
            "maxcpu": st["cpus"],
            "cpu": st["cpu"],
            "maxmem": st["maxmem"],
            "mem": st["mem"],
            "maxdisk": st["maxdisk"],
            "disk": 0,
            "netin": st["netin"],
            "netout": st["netout"],
            "diskread": 0,
            "diskwrite": 0,
        });
        if self.version.is_v9() {
            item["memhost"] = item["mem"].clone();
        }
        for key in ["lock", "tags"] {
            if let Some(val) = v.config.get(key) {
                item[key] = json!(val);
            }
        }
        item
    }

    /// `GET /cluster/nextid`: the lowest free VMID, or a check of `vmid`.
    ///
    /// # Errors
    /// 400 `VM N already exists` on `vmid`; 500 when no id is free.
    pub fn nextid(&self, vmid: Option<u32>) -> Result<String> {
        if let Some(id) = vmid {
            if self.vms.contains_key(&id) {
                return Err(Error::invalid("vmid", format!("VM {id} already exists")));
            }
            return Ok(id.to_string());
        }
        (NEXTID_LOWER..NEXTID_UPPER)
            .find(|id| !self.vms.contains_key(id))
            .map(|id| id.to_string())
            .ok_or_else(|| Error::failed("unable to get any free VMID in range [100, 999999]"))
    }

    /// Starts a task on `node` for `user` and returns its UPID. A zero
    /// `duration_ms` ends it at once.
    pub fn start_task(
        &mut self,
        node: &str,
        worker: Worker,
        user: &str,
        now_ms: i64,
        duration_ms: u64,
    ) -> String {
        let upid = self.spawn_task(node, worker, user, now_ms, duration_ms);
        self.advance(now_ms);
        upid
    }

    /// Records a running task without ending any; used by task effects
    /// that start a follow-up task (a create with `start=1`, a reboot).
    pub(crate) fn spawn_task(
        &mut self,
        node: &str,
        worker: Worker,
        user: &str,
        now_ms: i64,
        duration_ms: u64,
    ) -> String {
        let now = now_ms.div_euclid(1000);
        let boot = self
            .nodes
            .iter()
            .find(|n| n.name == node)
            .map_or(now, |n| n.boot_time);
        let pid = self.next_pid;
        self.next_pid = self.next_pid.wrapping_add(1).max(1000);
        let upid = Upid {
            node: node.to_string(),
            pid,
            pstart: u64::try_from((now - boot).max(0) * 100).unwrap_or(0) + 3_000,
            starttime: now,
            kind: worker.kind.clone(),
            id: worker.id.clone(),
            user: user.to_string(),
        };
        let upid_str = upid.to_string();
        let until_ms = now_ms.saturating_add(i64::try_from(duration_ms).unwrap_or(i64::MAX));
        let mut worker = worker;
        if let Some((rule, error)) = self.faults.on_task(&worker.kind, user) {
            tracing::warn!(rule, task = %upid_str, "injected task fault");
            worker.outcome = Err(super::tasks::TaskFailure(error));
        }
        let task = Task {
            upid,
            upid_str: upid_str.clone(),
            log: worker.start_lines.clone(),
            state: TaskState::Running { until_ms },
            worker,
        };
        self.index_tasks();
        let i = self.tasks.len();
        self.tasks.push(task);
        self.task_index.by_upid.insert(upid_str.clone(), i);
        self.task_index.running.insert((until_ms, i));
        upid_str
    }

    /// Ends every task whose time has come, in the order they end, and
    /// applies what they do.
    pub fn advance(&mut self, now_ms: i64) {
        self.index_tasks();
        loop {
            let due = self.task_index.running.first().copied();
            let Some((until_ms, i)) = due.filter(|(until, _)| *until <= now_ms) else {
                break;
            };
            self.task_index.running.remove(&(until_ms, i));
            if !self.tasks[i].running() {
                continue;
            }
            let effect = self.tasks[i].worker.effect.clone();
            let outcome = if self.tasks[i].worker.outcome.is_ok() {
                self.apply(effect, until_ms)
            } else {
                self.abort(&effect);
                Ok(Vec::new())
            };
            let task = &mut self.tasks[i];
            match outcome {
                Ok(lines) => {
                    task.worker.end_lines.extend(lines);
                    task.finish(until_ms.div_euclid(1000), None);
                }
                Err((lines, e)) => {
                    task.log.extend(lines);
                    task.finish(until_ms.div_euclid(1000), Some(e));
                }
            }
        }
    }

    fn apply(&mut self, effect: TaskEffect, end_ms: i64) -> super::qemu::EffectResult {
        match effect {
            TaskEffect::None => Ok(Vec::new()),
            TaskEffect::SetVmStatus { vmids, status } => {
                for id in vmids {
                    if status == "running" {
                        // startall: a guest that cannot start is skipped.
                        let _ = self.apply_qemu(
                            id,
                            super::qemu::QemuOp::Start { skiplock: false },
                            end_ms,
                        );
                    } else if let Some(vm) = self.vms.get_mut(&id) {
                        vm.status.clone_from(&status);
                        vm.qmpstatus = None;
                        vm.started_ms = None;
                    }
                }
                Ok(Vec::new())
            }
            TaskEffect::Qemu { vmid, op } => self.apply_qemu(vmid, op, end_ms),
            TaskEffect::Volume { node, change } => {
                self.apply_volume_change(&node, change);
                Ok(Vec::new())
            }
        }
    }

    /// Undoes the start of a task that ends without its effect.
    fn abort(&mut self, effect: &TaskEffect) {
        if let TaskEffect::Qemu { vmid, op } = effect {
            self.abort_qemu(*vmid, op);
        }
    }

    /// Sets the local node's `ssl_fingerprint` (the served certificate's).
    pub fn set_local_fingerprint(&mut self, fp: &str) {
        let local = self.local_node.clone();
        if let Some(n) = self.nodes.iter_mut().find(|n| n.name == local) {
            fp.clone_into(&mut n.ssl_fingerprint);
        }
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
            n += 1;
        }
        self.task_index = TaskIndex::default();
        n
    }

    /// Finds a task by its UPID text.
    ///
    /// # Errors
    /// 400 `unable to parse worker upid` or `no such task`.
    pub fn task(&self, upid: &str) -> Result<&Task> {
        let i = self.find_task(upid)?;
        Ok(&self.tasks[i])
    }

    fn find_task(&self, upid: &str) -> Result<usize> {
        if Upid::parse(upid).is_none() {
            return Err(Error::invalid("upid", "unable to parse worker upid"));
        }
        let found = if self.task_index.by_upid.len() == self.tasks.len() {
            self.task_index.by_upid.get(upid).copied()
        } else {
            self.tasks.iter().position(|t| t.upid_str == upid)
        };
        found.ok_or_else(|| Error::invalid("upid", "no such task"))
    }

    /// `DELETE .../tasks/{upid}`: a running task is interrupted and ends
    /// with an error; a stopped one is left as it is.
    ///
    /// # Errors
    /// As [`Cluster::task`].
    pub fn stop_task(&mut self, upid: &str, now: i64) -> Result<()> {
        let i = self.find_task(upid)?;
        if let TaskState::Running { until_ms } = self.tasks[i].state {
            self.task_index.running.remove(&(until_ms, i));
            let task = &mut self.tasks[i];
            task.finish(now, Some("received interrupt".into()));
            let effect = task.worker.effect.clone();
            self.abort(&effect);
        }
        Ok(())
    }

    /// `GET /nodes/{node}/tasks`: the items and the `total` of all that
    /// matched.
    pub fn list_tasks(
        &self,
        node: &str,
        f: &TaskFilter,
        visible: impl Fn(&Task) -> bool,
    ) -> (Vec<Value>, usize) {
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
