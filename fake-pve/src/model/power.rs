//! Node power: the guests a node's `startall`/`stopall` take, a node's
//! reboot and shutdown (`POST /nodes/{node}/status`) and its coming back
//! (after a reboot by itself, after a shutdown by wake-on-LAN or the
//! control API), on the emulated clock.
//!
//! A node going down first stops its running guests, as `pve-guests`
//! does with a `stopall` task by `root@pam`, then leaves the cluster:
//! `/nodes`, `/cluster/status` and `/cluster/resources` show it offline
//! and calls proxied to it fail with 595. A node coming back boots with
//! a new boot time and starts its `onboot` guests in a `startall` task
//! (HA-managed guests are left to the HA stack, which starts them again
//! once the node is online).

use super::cluster::Cluster;
use super::nodes::NodeStatus;
use super::qemu::VmStatus;
use super::tasks::{TaskEffect, Worker};
use super::{Error, Result};

/// How long a rebooting node stays offline, milliseconds.
pub const REBOOT_MS: i64 = 60_000;
/// How long a node woken by wake-on-LAN takes to boot, milliseconds.
pub const BOOT_MS: i64 = 60_000;

/// What `POST /nodes/{node}/status` asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowerCommand {
    /// `reboot`: down, and up again after [`REBOOT_MS`].
    Reboot,
    /// `shutdown`: down until woken.
    Shutdown,
}

impl PowerCommand {
    /// The command of its name (`reboot`, `shutdown`).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "reboot" => Some(Self::Reboot),
            "shutdown" => Some(Self::Shutdown),
            _ => None,
        }
    }
}

/// Whether a guest config marks the guest `onboot`.
fn onboot(conf: Option<&String>) -> bool {
    conf.is_some_and(|o| o == "1")
}

impl Cluster {
    /// The guests `startall` starts on `node`, in VMID order, with their
    /// kind (`VM`, `CT`): those listed in `vms`, or else the `onboot`
    /// ones (all with `force`); never templates or running guests.
    pub fn startall_guests(
        &self,
        node: &str,
        vms: Option<&[u32]>,
        force: bool,
    ) -> Vec<(u32, &'static str)> {
        let wanted = |vmid: u32, onboot: bool| match vms {
            Some(list) => list.contains(&vmid),
            None => force || onboot,
        };
        let mut ids: Vec<(u32, &'static str)> = self
            .guests
            .values()
            .filter(|v| v.node() == node && !v.running() && !v.template())
            .filter(|v| wanted(v.vmid(), onboot(v.config().get("onboot"))))
            .map(|v| (v.vmid(), "VM"))
            .collect();
        ids.extend(
            self.guests
                .cts_on(node)
                .filter(|ct| !ct.running() && !ct.template())
                .filter(|ct| wanted(ct.vmid(), onboot(ct.config().get("onboot"))))
                .map(|ct| (ct.vmid(), "CT")),
        );
        ids.sort_unstable();
        ids
    }

    /// The running guests `stopall` stops on `node` (those listed in
    /// `vms`, or all), highest VMID first, with their kind.
    pub fn stopall_guests(&self, node: &str, vms: Option<&[u32]>) -> Vec<(u32, &'static str)> {
        let listed = |vmid: u32| vms.is_none_or(|list| list.contains(&vmid));
        let mut ids: Vec<(u32, &'static str)> = self
            .guests
            .values()
            .filter(|v| v.node() == node && v.running() && listed(v.vmid()))
            .map(|v| (v.vmid(), "VM"))
            .collect();
        ids.extend(
            self.guests
                .cts_on(node)
                .filter(|ct| ct.running() && listed(ct.vmid()))
                .map(|ct| (ct.vmid(), "CT")),
        );
        ids.sort_unstable();
        ids.reverse();
        ids
    }

    /// The `startall` worker starting `guests`.
    pub fn startall_worker(guests: &[(u32, &str)]) -> Worker {
        let mut worker = Worker::new("startall", "");
        for (id, kind) in guests {
            worker = worker.log(format!("Starting {kind} {id}"));
        }
        worker.effect(TaskEffect::SetVmStatus {
            vmids: guests.iter().map(|(id, _)| *id).collect(),
            status: VmStatus::Running,
        })
    }

    /// The `stopall` worker stopping `guests` (each with `timeout`
    /// seconds to shut down).
    pub fn stopall_worker(guests: &[(u32, &str)], timeout: i64) -> Worker {
        let mut worker = Worker::new("stopall", "");
        for (id, kind) in guests {
            worker = worker.log(format!(
                "Stopping {kind} {id} (timeout = {timeout} seconds)"
            ));
        }
        worker.effect(TaskEffect::SetVmStatus {
            vmids: guests.iter().map(|(id, _)| *id).collect(),
            status: VmStatus::Stopped,
        })
    }

    /// Reboots or shuts down `node` at `now_ms`: its running guests stop
    /// (a `stopall` task by `root@pam`), then it goes offline; a reboot
    /// comes back after [`REBOOT_MS`].
    ///
    /// # Errors
    /// An unknown or offline node.
    pub fn node_power(&mut self, node: &str, cmd: PowerCommand, now_ms: i64) -> Result<()> {
        let name = self.nodes.reach(node)?.name.clone();
        let guests = self.stopall_guests(&name, None);
        let worker = Self::stopall_worker(&guests, 180);
        self.start_task(&name, worker, "root@pam", now_ms, 0);
        if let Some(n) = self.nodes.get_mut(&name) {
            n.status = NodeStatus::Offline;
            n.back_at_ms = (cmd == PowerCommand::Reboot).then_some(now_ms + REBOOT_MS);
        }
        Ok(())
    }

    /// A wake-on-LAN packet for `node` at `now_ms`: an offline node that
    /// is not booting already boots, online after [`BOOT_MS`]. An online
    /// node ignores it.
    ///
    /// # Errors
    /// An unknown node.
    pub fn wake_node(&mut self, node: &str, now_ms: i64) -> Result<()> {
        let n = self
            .nodes
            .get_mut(node)
            .ok_or_else(|| Error::failed(format!("no such cluster node '{node}'")))?;
        if n.status == NodeStatus::Offline && n.back_at_ms.is_none() {
            n.back_at_ms = Some(now_ms + BOOT_MS);
        }
        Ok(())
    }

    /// Brings `node` back online at `at_ms` (a control call, or a boot
    /// that is due): it boots then and starts its `onboot` guests, those
    /// the HA stack does not manage.
    ///
    /// # Errors
    /// An unknown node.
    pub fn power_on(&mut self, node: &str, at_ms: i64) -> Result<()> {
        let n = self
            .nodes
            .get_mut(node)
            .ok_or_else(|| Error::failed(format!("no such cluster node '{node}'")))?;
        n.back_at_ms = None;
        if n.status == NodeStatus::Online {
            return Ok(());
        }
        n.status = NodeStatus::Online;
        n.boot_time = at_ms.div_euclid(1000);
        let guests: Vec<(u32, &str)> = self
            .startall_guests(node, None, false)
            .into_iter()
            .filter(|(id, _)| self.ha.managed_sid(*id).is_none())
            .collect();
        let worker = Self::startall_worker(&guests);
        self.spawn_task(node, worker, "root@pam", at_ms, 0);
        Ok(())
    }

    /// Brings back every node whose boot is due by `now_ms`, in the order
    /// they come back.
    pub(crate) fn run_due_boots(&mut self, now_ms: i64) {
        loop {
            let due = self
                .nodes
                .iter()
                .filter_map(|n| n.back_at_ms.map(|at| (at, n.name.clone())))
                .filter(|(at, _)| *at <= now_ms)
                .min();
            let Some((at, name)) = due else {
                break;
            };
            let _ = self.power_on(&name, at);
        }
    }
}
