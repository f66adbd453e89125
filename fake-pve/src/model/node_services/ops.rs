//! The node services' operations that span areas: a node's files found
//! by its name in the node list, service tasks, the journal made of the
//! node's tasks, the subscription's level in the node list, and the
//! per-guest network counters made of the guests' figures.

use std::borrow::Cow;

use super::logs::LogLine;
use super::services::{self, ServiceAction, ServiceState, Unit};
use super::{NodeServices, NodeSys, Seed, Subscription};
use crate::model::cluster::Vm;
use crate::model::guests::Guests;
use crate::model::lxc::Ct;
use crate::model::nodes::Nodes;
use crate::model::tasks::{TaskEffect, Tasks, Worker};
use crate::model::{Error, Node, PveVersion, Result};

/// The syslog identifier of the node's pvedaemon (the daemon that forks
/// the API's workers and logs their start and end), with its pid.
const PVEDAEMON: &str = "pvedaemon[1190]";

/// The member `node` (`localhost` is the local node), reachable or not.
///
/// # Errors
/// An unknown node.
fn member<'a>(nodes: &'a Nodes, node: &str) -> Result<&'a Node> {
    let name = if node == "localhost" {
        nodes.local()
    } else {
        node
    };
    nodes
        .get(name)
        .ok_or_else(|| Error::failed(format!("no such cluster node '{node}'")))
}

/// What the defaults of `node`'s files are made from.
///
/// # Errors
/// An unknown node (as the proxy's host name lookup fails).
pub fn node_seed<'a>(nodes: &'a Nodes, version: PveVersion, node: &str) -> Result<Seed<'a>> {
    let n = member(nodes, node)?;
    Ok(Seed {
        name: &n.name,
        ip: &n.ip,
        clustered: nodes.cluster_name().is_some() || nodes.len() > 1,
        sockets: n.sockets,
        version,
    })
}

/// The unit `service` of release `version`.
///
/// # Errors
/// A service of the other release.
fn unit_of(version: PveVersion, service: &str) -> Result<&'static Unit> {
    services::unit(version, service).ok_or_else(|| {
        Error::invalid(
            "service",
            format!("value '{service}' does not have a value in the enumeration"),
        )
    })
}

impl NodeServices {
    /// `node`'s own files and services.
    ///
    /// # Errors
    /// As [`node_seed`].
    pub fn sys(&self, nodes: &Nodes, version: PveVersion, node: &str) -> Result<Cow<'_, NodeSys>> {
        let seed = node_seed(nodes, version, node)?;
        Ok(self.get(seed))
    }

    /// `node`'s own files and services, to change.
    ///
    /// # Errors
    /// As [`node_seed`].
    pub fn sys_mut(
        &mut self,
        nodes: &Nodes,
        version: PveVersion,
        node: &str,
    ) -> Result<&mut NodeSys> {
        let seed = node_seed(nodes, version, node)?;
        Ok(self.get_mut(seed))
    }

    /// `GET /nodes/{node}/services`: every unit with its state, in name
    /// order.
    ///
    /// # Errors
    /// As [`node_seed`].
    pub fn services(
        &self,
        nodes: &Nodes,
        version: PveVersion,
        node: &str,
    ) -> Result<Vec<(&'static Unit, ServiceState)>> {
        let seed = node_seed(nodes, version, node)?;
        let sys = self.get(seed);
        Ok(services::units(version)
            .map(|u| (u, sys.service_state(u, seed.clustered)))
            .collect())
    }

    /// `GET /nodes/{node}/services/{service}/state`: the unit and its state.
    ///
    /// # Errors
    /// As [`node_seed`]; a service of the other release.
    pub fn service(
        &self,
        nodes: &Nodes,
        version: PveVersion,
        node: &str,
        service: &str,
    ) -> Result<(&'static Unit, ServiceState)> {
        let seed = node_seed(nodes, version, node)?;
        let unit = unit_of(version, service)?;
        let sys = self.get(seed);
        Ok((unit, sys.service_state(unit, seed.clustered)))
    }

    /// The worker of `systemctl <action> <service>` on `node`: it fails
    /// as PVE's does for an essential service asked to stop and for a unit
    /// that is not installed; otherwise the unit changes when it ends.
    ///
    /// # Errors
    /// As [`NodeServices::service`].
    pub fn service_worker(
        &self,
        nodes: &Nodes,
        version: PveVersion,
        node: &str,
        service: &str,
        action: ServiceAction,
    ) -> Result<Worker> {
        let seed = node_seed(nodes, version, node)?;
        let unit = unit_of(version, service)?;
        let state = self.get(seed).service_state(unit, seed.clustered);
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
        nodes: &Nodes,
        version: PveVersion,
        node: &str,
        service: &str,
        action: ServiceAction,
        end_ms: i64,
    ) {
        let Ok(seed) = node_seed(nodes, version, node) else {
            return;
        };
        let Some(unit) = services::unit(version, service) else {
            return;
        };
        let clustered = seed.clustered;
        let sys = self.get_mut(seed);
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
    /// As [`node_seed`].
    pub fn journal(&self, nodes: &Nodes, version: PveVersion, node: &str) -> Result<Vec<LogLine>> {
        let seed = node_seed(nodes, version, node)?;
        let n = member(nodes, node)?;
        let sys = self.get(seed);
        let boot = n.boot_time;
        let kernel = crate::model::node_hw::catalog::kernel_release(version);
        let mut lines = vec![LogLine::new(
            boot,
            "kernel",
            None,
            format!("Linux version {kernel} (build@proxmox) #1 SMP PREEMPT_DYNAMIC PMX"),
        )];
        for u in services::units(version) {
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
    pub(crate) fn log_task_start(
        &mut self,
        nodes: &Nodes,
        version: PveVersion,
        tasks: &Tasks,
        i: usize,
    ) {
        let Some(task) = tasks.at(i) else {
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
        if let Ok(sys) = self.sys_mut(nodes, version, &u.node) {
            sys.push_log(lines);
        }
    }

    /// Writes pvedaemon's `end task` line of the `i`th task, once it has
    /// stopped.
    pub(crate) fn log_task_end(
        &mut self,
        nodes: &Nodes,
        version: PveVersion,
        tasks: &Tasks,
        i: usize,
    ) {
        let Some(task) = tasks.at(i) else {
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
        if let Ok(sys) = self.sys_mut(nodes, version, &task.upid.node) {
            sys.push_log([line]);
        }
    }
}

/// `PUT /nodes/{node}/subscription`: sets the key, which checks out
/// as an active subscription; the node's level follows.
///
/// # Errors
/// As [`node_seed`]; a key of the wrong format or for fewer
/// sockets than the node has.
pub fn set_subscription_key(
    nodes: &mut Nodes,
    services: &mut NodeServices,
    version: PveVersion,
    node: &str,
    key: &str,
    now: i64,
) -> Result<()> {
    let sockets = member(nodes, node)?.sockets;
    let sub = Subscription::activate(key.trim(), sockets, now)?;
    store_subscription(nodes, services, version, node, Some(sub))
}

/// `POST /nodes/{node}/subscription`.
///
/// # Errors
/// As [`set_subscription_key`].
pub fn update_subscription(
    nodes: &mut Nodes,
    services: &mut NodeServices,
    version: PveVersion,
    node: &str,
    force: bool,
    now: i64,
) -> Result<()> {
    let sockets = member(nodes, node)?.sockets;
    let Some(mut sub) = services.sys(nodes, version, node)?.subscription().cloned() else {
        return Ok(());
    };
    sub.update(sockets, force, now)?;
    store_subscription(nodes, services, version, node, Some(sub))
}

/// `DELETE /nodes/{node}/subscription` (and a scenario's setting).
///
/// # Errors
/// As [`node_seed`].
pub fn store_subscription(
    nodes: &mut Nodes,
    services: &mut NodeServices,
    version: PveVersion,
    node: &str,
    sub: Option<Subscription>,
) -> Result<()> {
    let sockets = member(nodes, node)?.sockets;
    let level = sub
        .as_ref()
        .filter(|s| super::subscription::check_key(s.key(), sockets).is_ok())
        .and_then(Subscription::level)
        .unwrap_or_default();
    let name = member(nodes, node)?.name.clone();
    services
        .sys_mut(nodes, version, node)?
        .set_subscription(sub);
    if let Some(n) = nodes.get_mut(&name) {
        n.level = level;
    }
    Ok(())
}

/// A row of `GET /nodes/{node}/netstat`: a guest's network device with
/// the counters of its host side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetRow {
    /// The guest.
    pub vmid: u32,
    /// The `netN` index of the guest's device.
    pub id: u32,
    /// Bytes the guest received.
    pub netin: u64,
    /// Bytes the guest sent.
    pub netout: u64,
}

/// `GET /nodes/{node}/netstat`: the tap (VM) and veth (container)
/// devices of the running guests on `node`, with the counters
/// `vm_counters`/`ct_counters` give for a guest (its `netin`, `netout`)
/// on its first device, as `/proc/net/dev` has them (the host's transmit
/// is the guest's receive), sorted by the host device's name.
///
/// # Errors
/// As [`node_seed`].
pub fn netstat(
    nodes: &Nodes,
    guests: &Guests,
    node: &str,
    vm_counters: impl Fn(&Vm) -> (u64, u64),
    ct_counters: impl Fn(&Ct) -> (u64, u64),
) -> Result<Vec<NetRow>> {
    let name = member(nodes, node)?.name.clone();
    let mut rows: Vec<(String, NetRow)> = Vec::new();
    let nets = |conf: &std::collections::BTreeMap<String, String>| -> Vec<u32> {
        conf.keys()
            .filter_map(|k| k.strip_prefix("net").and_then(|i| i.parse().ok()))
            .collect()
    };
    let mut add = |prefix: &str, vmid: u32, ids: Vec<u32>, (netin, netout): (u64, u64)| {
        for (i, id) in ids.into_iter().enumerate() {
            let (netin, netout) = if i == 0 { (netin, netout) } else { (0, 0) };
            rows.push((
                format!("{prefix}{vmid}i{id}"),
                NetRow {
                    vmid,
                    id,
                    netin,
                    netout,
                },
            ));
        }
    };
    for vm in guests.values().filter(|v| v.node == name && v.running()) {
        add("tap", vm.vmid, nets(vm.config()), vm_counters(vm));
    }
    for ct in guests
        .cts()
        .values()
        .filter(|c| c.node() == name && c.running())
    {
        add("veth", ct.vmid(), nets(ct.config()), ct_counters(ct));
    }
    // `sort keys %$netdev`: by device name (`tap100i0`, `veth200i0`).
    rows.sort_by(|(a, ra), (b, rb)| (a, ra.vmid, ra.id).cmp(&(b, rb.vmid, rb.id)));
    Ok(rows.into_iter().map(|(_, r)| r).collect())
}
