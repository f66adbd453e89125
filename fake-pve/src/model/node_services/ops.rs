//! The node services' operations that span areas: service tasks, the
//! journal made of the node's tasks, the subscription's level in the
//! node list, and the per-guest network counters and statistics series
//! made of the guests' figures.

use std::borrow::Cow;

use serde_json::{Value, json};

use super::logs::LogLine;
use super::services::{self, ServiceAction, ServiceState};
use super::{NodeSys, Seed, Subscription};
use crate::model::tasks::{TaskEffect, Worker};
use crate::model::{Cluster, Error, Result};

/// The syslog identifier of the node's pvedaemon (the daemon that forks
/// the API's workers and logs their start and end), with its pid.
const PVEDAEMON: &str = "pvedaemon[1190]";

impl Cluster {
    /// The member `node` (`localhost` is the local node), reachable or not.
    ///
    /// # Errors
    /// An unknown node.
    fn member(&self, node: &str) -> Result<&crate::model::Node> {
        let name = if node == "localhost" {
            self.nodes.local()
        } else {
            node
        };
        self.nodes
            .get(name)
            .ok_or_else(|| Error::failed(format!("no such cluster node '{node}'")))
    }

    /// What the defaults of `node`'s files are made from.
    ///
    /// # Errors
    /// An unknown node (as the proxy's host name lookup fails).
    pub fn node_seed(&self, node: &str) -> Result<Seed<'_>> {
        let n = self.member(node)?;
        Ok(Seed {
            name: &n.name,
            ip: &n.ip,
            clustered: self.nodes.cluster_name().is_some() || self.nodes.len() > 1,
            sockets: n.sockets,
            version: self.version,
        })
    }

    /// `node`'s own files and services.
    ///
    /// # Errors
    /// As [`Cluster::node_seed`].
    pub fn node_sys(&self, node: &str) -> Result<Cow<'_, NodeSys>> {
        let seed = self.node_seed(node)?;
        Ok(self.node_services.get(seed))
    }

    /// `node`'s own files and services, to change.
    ///
    /// # Errors
    /// As [`Cluster::node_seed`].
    pub fn node_sys_mut(&mut self, node: &str) -> Result<&mut NodeSys> {
        let n = self.member(node)?;
        let (name, ip, sockets) = (n.name.clone(), n.ip.clone(), n.sockets);
        let seed = Seed {
            name: &name,
            ip: &ip,
            clustered: self.nodes.cluster_name().is_some() || self.nodes.len() > 1,
            sockets,
            version: self.version,
        };
        Ok(self.node_services.get_mut(seed))
    }

    /// `GET /nodes/{node}/services`: every unit, in name order.
    ///
    /// # Errors
    /// As [`Cluster::node_seed`].
    pub fn services_view(&self, node: &str) -> Result<Vec<Value>> {
        let seed = self.node_seed(node)?;
        let sys = self.node_services.get(seed);
        Ok(services::units(self.version)
            .map(|u| u.view(sys.service_state(u, seed.clustered)))
            .collect())
    }

    /// `GET /nodes/{node}/services/{service}/state`.
    ///
    /// # Errors
    /// As [`Cluster::node_seed`]; a service of the other release.
    pub fn service_view(&self, node: &str, service: &str) -> Result<Value> {
        let seed = self.node_seed(node)?;
        let unit = services::unit(self.version, service).ok_or_else(|| {
            Error::invalid(
                "service",
                format!("value '{service}' does not have a value in the enumeration"),
            )
        })?;
        let sys = self.node_services.get(seed);
        Ok(unit.view(sys.service_state(unit, seed.clustered)))
    }

    /// The worker of `systemctl <action> <service>` on `node`: it fails
    /// as PVE's does for an essential service asked to stop and for a unit
    /// that is not installed; otherwise the unit changes when it ends.
    ///
    /// # Errors
    /// As [`Cluster::service_view`].
    pub fn service_worker(
        &self,
        node: &str,
        service: &str,
        action: ServiceAction,
    ) -> Result<Worker> {
        let seed = self.node_seed(node)?;
        let unit = services::unit(self.version, service).ok_or_else(|| {
            Error::invalid(
                "service",
                format!("value '{service}' does not have a value in the enumeration"),
            )
        })?;
        let state = self
            .node_services
            .get(seed)
            .service_state(unit, seed.clustered);
        let mut worker = Worker::new(action.task_kind(), service);
        match unit.apply(action, state, seed.clustered) {
            Ok(_) => {
                worker = worker.effect(TaskEffect::Service {
                    node: seed.name.to_string(),
                    service: service.to_string(),
                    action,
                });
            }
            Err((lines, msg)) => {
                for l in lines {
                    worker = worker.log(l);
                }
                worker = worker.fail(msg);
            }
        }
        Ok(worker)
    }

    /// What a finished service task does: the unit's new state and
    /// systemd's lines in the journal.
    pub(crate) fn apply_service(
        &mut self,
        node: &str,
        service: &str,
        action: ServiceAction,
        end_ms: i64,
    ) {
        let Ok(seed) = self.node_seed(node) else {
            return;
        };
        let Some(unit) = services::unit(self.version, service) else {
            return;
        };
        let clustered = seed.clustered;
        let Ok(sys) = self.node_sys_mut(node) else {
            return;
        };
        let before = sys.service_state(unit, clustered);
        let Ok(after) = unit.apply(action, before, clustered) else {
            return;
        };
        let t = end_ms.div_euclid(1000);
        let name = format!("{}.service - {}", unit.unit, unit.desc);
        let line = |msg: String| LogLine::new(t, "systemd[1]", Some(unit.unit), msg);
        let mut lines = Vec::new();
        let stops = before != ServiceState::Stopped
            && matches!(action, ServiceAction::Stop | ServiceAction::Restart);
        if stops {
            lines.push(line(format!("Stopping {name}...")));
            lines.push(line(format!(
                "{}.service: Deactivated successfully.",
                unit.unit
            )));
            lines.push(line(format!("Stopped {name}.")));
        }
        match (action, after) {
            (ServiceAction::Reload, ServiceState::Running) => {
                lines.push(line(format!("Reloading {name}...")));
                lines.push(line(format!("Reloaded {name}.")));
            }
            (ServiceAction::Start | ServiceAction::Restart, ServiceState::Running)
                if before != ServiceState::Running || action == ServiceAction::Restart =>
            {
                lines.push(line(format!("Starting {name}...")));
                lines.push(line(format!("Started {name}.")));
            }
            (ServiceAction::Start | ServiceAction::Restart, ServiceState::Stopped) => {
                lines.push(line(format!(
                    "{name} was skipped because of an unmet condition check (ConditionPathExists=/etc/corosync/corosync.conf)."
                )));
            }
            _ => {}
        }
        sys.push_log(lines);
        sys.set_service_state(service, after);
    }

    /// `node`'s journal: the boot, then what was written since (the
    /// tasks' lines, systemd's), oldest first.
    ///
    /// # Errors
    /// As [`Cluster::node_seed`].
    pub fn node_journal(&self, node: &str) -> Result<Vec<LogLine>> {
        let seed = self.node_seed(node)?;
        let n = self.member(node)?;
        let sys = self.node_services.get(seed);
        let boot = n.boot_time;
        let kernel = if self.version.is_v9() {
            "6.17.2-1-pve"
        } else {
            "6.8.12-15-pve"
        };
        let mut lines = vec![LogLine::new(
            boot,
            "kernel",
            None,
            format!("Linux version {kernel} (build@proxmox) #1 SMP PREEMPT_DYNAMIC PMX"),
        )];
        for u in services::units(self.version) {
            if u.installed() && u.initial(seed.clustered) == ServiceState::Running {
                lines.push(LogLine::new(
                    boot + 5,
                    "systemd[1]",
                    Some(u.unit),
                    format!("Started {}.service - {}.", u.unit, u.desc),
                ));
            }
        }
        lines.extend(sys.log().iter().cloned());
        lines.sort_by_key(|l| l.t);
        Ok(lines)
    }

    /// Writes pvedaemon's `starting task` line (and a service worker's
    /// own line) for the task at `i` to the journal of its node.
    pub(crate) fn log_task_start(&mut self, i: usize) {
        let Some(task) = self.tasks.at(i) else {
            return;
        };
        let (u, upid) = (&task.upid, &task.upid_str);
        let mut lines = vec![LogLine::new(
            u.starttime,
            PVEDAEMON,
            Some("pvedaemon"),
            format!("<{}> starting task {upid}", u.user),
        )];
        if let Some(action) = [
            ServiceAction::Start,
            ServiceAction::Stop,
            ServiceAction::Restart,
            ServiceAction::Reload,
        ]
        .into_iter()
        .find(|a| a.task_kind() == u.kind)
        {
            lines.push(LogLine::new(
                u.starttime,
                format!("pvedaemon[{}]", u.pid),
                Some("pvedaemon"),
                format!("{} service {}: {upid}", action.syslog_verb(), u.id),
            ));
        }
        let node = u.node.clone();
        if let Ok(sys) = self.node_sys_mut(&node) {
            sys.push_log(lines);
        }
    }

    /// Writes pvedaemon's `end task` line of the `i`th task, once it has
    /// stopped.
    pub(crate) fn log_task_end(&mut self, i: usize) {
        let Some(task) = self.tasks.at(i) else {
            return;
        };
        let crate::model::TaskState::Stopped {
            endtime,
            exitstatus,
        } = &task.state
        else {
            return;
        };
        let line = LogLine::new(
            *endtime,
            PVEDAEMON,
            Some("pvedaemon"),
            format!(
                "<{}> end task {} {exitstatus}",
                task.upid.user, task.upid_str
            ),
        );
        let node = task.upid.node.clone();
        if let Ok(sys) = self.node_sys_mut(&node) {
            sys.push_log([line]);
        }
    }

    /// `PUT /nodes/{node}/subscription`: sets the key, which checks out
    /// as an active subscription; the node's level follows.
    ///
    /// # Errors
    /// As [`Cluster::node_seed`]; a key of the wrong format or for fewer
    /// sockets than the node has.
    pub fn set_subscription_key(&mut self, node: &str, key: &str, now: i64) -> Result<()> {
        let sockets = self.member(node)?.sockets;
        let sub = Subscription::activate(key.trim(), sockets, now)?;
        self.store_subscription(node, Some(sub))
    }

    /// `POST /nodes/{node}/subscription`.
    ///
    /// # Errors
    /// As [`Cluster::set_subscription_key`].
    pub fn update_subscription(&mut self, node: &str, force: bool, now: i64) -> Result<()> {
        let sockets = self.member(node)?.sockets;
        let Some(mut sub) = self.node_sys(node)?.subscription().cloned() else {
            return Ok(());
        };
        sub.update(sockets, force, now)?;
        self.store_subscription(node, Some(sub))
    }

    /// `DELETE /nodes/{node}/subscription` (and a scenario's setting).
    ///
    /// # Errors
    /// As [`Cluster::node_seed`].
    pub fn store_subscription(&mut self, node: &str, sub: Option<Subscription>) -> Result<()> {
        let sockets = self.member(node)?.sockets;
        let level = sub
            .as_ref()
            .filter(|s| super::subscription::check_key(s.key(), sockets).is_ok())
            .and_then(Subscription::level)
            .unwrap_or_default();
        let name = self.member(node)?.name.clone();
        self.node_sys_mut(node)?.set_subscription(sub);
        if let Some(n) = self.nodes.get_mut(&name) {
            n.level = level;
        }
        Ok(())
    }

    /// `GET /nodes/{node}/netstat`: the tap (VM) and veth (container)
    /// counters of the running guests on `node`, as `/proc/net/dev` has
    /// them (the host's transmit is the guest's receive).
    ///
    /// # Errors
    /// As [`Cluster::node_seed`].
    pub fn netstat(&self, node: &str, now_ms: i64) -> Result<Vec<Value>> {
        let name = self.member(node)?.name.clone();
        let mut rows: Vec<(u32, u32, Value)> = Vec::new();
        let nets = |conf: &std::collections::BTreeMap<String, String>| -> Vec<u32> {
            conf.keys()
                .filter_map(|k| k.strip_prefix("net").and_then(|i| i.parse().ok()))
                .collect()
        };
        let num = |v: &Value| v.as_u64().unwrap_or(0);
        for vm in self
            .guests
            .values()
            .filter(|v| v.node == name && v.running())
        {
            let st = self.vm_status(vm, now_ms, false, false);
            for (i, id) in nets(vm.config()).into_iter().enumerate() {
                let (netin, netout) = if i == 0 {
                    (num(&st["netin"]), num(&st["netout"]))
                } else {
                    (0, 0)
                };
                rows.push((vm.vmid, id, row("tap", vm.vmid, id, netin, netout)));
            }
        }
        for ct in self.cts_on(&name).filter(|c| c.running()) {
            let st = self.ct_resource(ct, now_ms.div_euclid(1000));
            for (i, id) in nets(ct.config()).into_iter().enumerate() {
                let (netin, netout) = if i == 0 {
                    (num(&st["netin"]), num(&st["netout"]))
                } else {
                    (0, 0)
                };
                rows.push((ct.vmid(), id, row("veth", ct.vmid(), id, netin, netout)));
            }
        }
        // `sort keys %$netdev`: by device name (`tap100i0`, `veth200i0`).
        rows.sort_by_key(|(vmid, id, v)| {
            (
                v["_dev"].as_str().unwrap_or_default().to_string(),
                *vmid,
                *id,
            )
        });
        Ok(rows
            .into_iter()
            .map(|(.., mut v)| {
                if let Some(o) = v.as_object_mut() {
                    o.remove("_dev");
                }
                v
            })
            .collect())
    }
}

/// A netstat row; `_dev` is the host device's name, to sort by.
fn row(prefix: &str, vmid: u32, id: u32, netin: u64, netout: u64) -> Value {
    json!({
        "vmid": vmid.to_string(),
        "dev": format!("net{id}"),
        "in": netin.to_string(),
        "out": netout.to_string(),
        "_dev": format!("{prefix}{vmid}i{id}"),
    })
}
