//! The dbus-vmstate helper of a running VM (qemu-server 9.x
//! `POST /nodes/{node}/qemu/{vmid}/dbus-vmstate`,
//! `PVE::QemuServer::DBusVMState`): the `pve-dbus-vmstate@<vmid>` unit
//! that carries the conntrack state of a VM across a migration. The
//! helper belongs to one run of the VM: when the VM stops, systemd stops
//! it with the VM's scope (`PartOf=<vmid>.scope`), so it is kept as the
//! start time of the run it was started in.

use super::Vm;
use crate::model::cluster::Cluster;
use crate::model::guests::Guests;
use crate::model::node_services::logs::LogLine;
use crate::model::{Error, Result};

/// The syslog identifier of the pveproxy worker that answers the call
/// (it is not `protected`, so pvedaemon is not asked).
const PVEPROXY_WORKER: &str = "pveproxy[1207]";

/// What the call asks of the helper (`action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbusAction {
    /// `start`: (re)start it.
    Start,
    /// `stop`: stop it, if it runs.
    Stop,
}

impl DbusAction {
    /// `start` or `stop`.
    ///
    /// # Errors
    /// Anything else, as the schema's enumeration refuses it.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "start" => Ok(Self::Start),
            "stop" => Ok(Self::Stop),
            _ => Err(Error::invalid(
                "action",
                format!("value '{s}' does not have a value in the enumeration 'start, stop'"),
            )),
        }
    }
}

/// The run a helper started now belongs to.
fn run_of(vm: &Vm) -> i64 {
    vm.started_ms.unwrap_or(-1)
}

/// Whether the helper of `vm` runs.
pub fn helper_running(vm: &Vm) -> bool {
    vm.running() && vm.kind.dbus_vmstate == Some(run_of(vm))
}

/// What one call did, for the node's journal: the lines pveproxy's
/// worker logs (`starting dbus-vmstate helper for VM 100`) and systemd's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbusOutcome {
    /// The worker's syslog lines.
    pub syslog: Vec<String>,
    /// systemd's lines about the `pve-dbus-vmstate@<vmid>` unit.
    pub systemd: Vec<String>,
}

/// The unit's name and description, as systemd logs them.
fn unit(vmid: u32) -> String {
    format!("pve-dbus-vmstate@{vmid}.service - PVE DBus VMState Helper (VM {vmid})")
}

impl Guests {
    /// `POST .../dbus-vmstate`: starts or stops the helper of VM `vmid`,
    /// which must run on `node` (where the call was proxied to). A start
    /// stops a helper left running first; a stop without a helper does
    /// nothing.
    ///
    /// # Errors
    /// `VM <vmid> not running locally on node '<node>'` (parameter
    /// `node`) for a VM that does not run there, or that does not exist.
    pub fn dbus_vmstate(
        &mut self,
        node: &str,
        vmid: u32,
        action: DbusAction,
    ) -> Result<DbusOutcome> {
        let vm = self
            .get_mut(&vmid)
            .filter(|v| v.node == node && v.running())
            .ok_or_else(|| {
                Error::invalid(
                    "node",
                    format!("VM {vmid} not running locally on node '{node}'"),
                )
            })?;
        let was = helper_running(vm);
        let mut out = DbusOutcome {
            syslog: Vec::new(),
            systemd: Vec::new(),
        };
        match action {
            DbusAction::Start => {
                out.syslog
                    .push(format!("starting dbus-vmstate helper for VM {vmid}"));
                if was {
                    out.systemd.push(format!("Stopping {}...", unit(vmid)));
                    out.systemd.push(format!("Stopped {}.", unit(vmid)));
                }
                out.systemd.push(format!("Starting {}...", unit(vmid)));
                out.systemd.push(format!("Started {}.", unit(vmid)));
                vm.kind.dbus_vmstate = Some(run_of(vm));
            }
            DbusAction::Stop => {
                out.syslog
                    .push(format!("stopping dbus-vmstate helper for VM {vmid}"));
                if was {
                    out.systemd.push(format!("Stopping {}...", unit(vmid)));
                    out.systemd.push(format!("Stopped {}.", unit(vmid)));
                }
                vm.kind.dbus_vmstate = None;
            }
        }
        Ok(out)
    }
}

/// `POST /nodes/{node}/qemu/{vmid}/dbus-vmstate` on the cluster: the
/// helper started or stopped ([`Guests::dbus_vmstate`]) and the lines
/// written to `node`'s journal at `now` (epoch seconds).
///
/// # Errors
/// As [`Guests::dbus_vmstate`].
pub fn dbus_vmstate(
    c: &mut Cluster,
    node: &str,
    vmid: u32,
    action: DbusAction,
    now: i64,
) -> Result<()> {
    let out = c.guests.dbus_vmstate(node, vmid, action)?;
    let mut lines: Vec<LogLine> = out
        .syslog
        .into_iter()
        .map(|m| LogLine::new(now, PVEPROXY_WORKER, Some("pveproxy"), m))
        .collect();
    lines.extend(
        out.systemd
            .into_iter()
            .map(|m| LogLine::new(now, "systemd[1]", None, m)),
    );
    let (nodes, version) = (&c.nodes, c.version());
    if let Ok(sys) = c.node_services.sys_mut(nodes, version, node) {
        sys.push_log(lines);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rstest::rstest;

    use super::*;
    use crate::model::qemu::{VmStatus, power_off};

    fn guests(status: VmStatus) -> Guests {
        let mut g = Guests::default();
        let mut vm = Vm::new(100, "pve", status, BTreeMap::new());
        if status == VmStatus::Running {
            vm.started_ms = Some(1_000);
        }
        g.insert(100, vm);
        g
    }

    fn running(g: &Guests) -> bool {
        helper_running(g.get(&100).expect("vm"))
    }

    #[test]
    fn start_then_stop() {
        let mut g = guests(VmStatus::Running);
        let out = g
            .dbus_vmstate("pve", 100, DbusAction::Start)
            .expect("start");
        assert_eq!(out.syslog, ["starting dbus-vmstate helper for VM 100"]);
        assert_eq!(
            out.systemd.last().map(String::as_str),
            Some("Started pve-dbus-vmstate@100.service - PVE DBus VMState Helper (VM 100).")
        );
        assert!(running(&g));
        let again = g
            .dbus_vmstate("pve", 100, DbusAction::Start)
            .expect("restart");
        assert_eq!(
            again.systemd.len(),
            4,
            "the left-over helper is stopped first"
        );
        let out = g.dbus_vmstate("pve", 100, DbusAction::Stop).expect("stop");
        assert_eq!(out.syslog, ["stopping dbus-vmstate helper for VM 100"]);
        assert_eq!(out.systemd.len(), 2);
        assert!(!running(&g));
        let none = g.dbus_vmstate("pve", 100, DbusAction::Stop).expect("stop");
        assert!(none.systemd.is_empty(), "nothing to stop");
    }

    #[test]
    fn the_helper_ends_with_the_run() {
        let mut g = guests(VmStatus::Running);
        g.dbus_vmstate("pve", 100, DbusAction::Start)
            .expect("start");
        let vm = g.get_mut(&100).expect("vm");
        power_off(vm);
        vm.status = VmStatus::Running;
        vm.started_ms = Some(9_000);
        assert!(!running(&g), "a new run has no helper");
    }

    #[rstest]
    #[case(VmStatus::Stopped, "pve", 100)]
    #[case(VmStatus::Running, "pve2", 100)]
    #[case(VmStatus::Running, "pve", 101)]
    fn only_a_vm_running_there(#[case] status: VmStatus, #[case] node: &str, #[case] vmid: u32) {
        let mut g = guests(status);
        let err = g
            .dbus_vmstate(node, vmid, DbusAction::Start)
            .expect_err("refused");
        assert_eq!(
            err.errors().and_then(|e| e.get("node")).map(String::as_str),
            Some(format!("VM {vmid} not running locally on node '{node}'").as_str())
        );
    }

    #[rstest]
    #[case("start", Some(DbusAction::Start))]
    #[case("stop", Some(DbusAction::Stop))]
    #[case("restart", None)]
    fn actions(#[case] s: &str, #[case] want: Option<DbusAction>) {
        assert_eq!(DbusAction::parse(s).ok(), want);
    }
}
