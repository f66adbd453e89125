//! The HA stack's hold on the rest of the cluster: guests looked up by
//! sid, the diversion of an HA-managed guest's power and migrate calls,
//! and the LRMs' tasks of each manager round.

use std::collections::BTreeMap;

use super::manager::{GuestFact, HaRequest, LrmAction, ROUND_SECS};
use super::status::StatusLine;
use super::{GuestType, Ha};
use crate::model::guests::Guests;
use crate::model::lxc::{LxcOp, lxc_worker};
use crate::model::nodes::{NodeStatus, Nodes};
use crate::model::qemu::QemuOp;
use crate::model::tasks::{TaskEffect, Worker};
use crate::model::{PveVersion, Result};

/// How the HA stack looks a guest up (`get_vmlist`).
pub fn guest_type(guests: &Guests, vmid: u32) -> Option<GuestType> {
    if guests.get(&vmid).is_some() {
        Some(GuestType::Qemu)
    } else if guests.ct_by_id(vmid).is_some() {
        Some(GuestType::Lxc)
    } else {
        None
    }
}

/// The node of the guest behind `sid`.
pub fn sid_node(guests: &Guests, sid: &str) -> Option<String> {
    guest_fact(guests, sid).map(|f| f.node)
}

fn guest_fact(guests: &Guests, sid: &str) -> Option<GuestFact> {
    let (kind, name) = sid.split_once(':')?;
    let vmid: u32 = name.parse().ok()?;
    match kind {
        "vm" => guests.get(&vmid).map(|v| GuestFact {
            kind: GuestType::Qemu,
            node: v.node.clone(),
            running: v.running(),
            locked: v.lock().is_some(),
        }),
        "ct" => guests.ct_by_id(vmid).map(|c| GuestFact {
            kind: GuestType::Lxc,
            node: c.node().to_string(),
            running: c.running(),
            locked: c.lock().is_some(),
        }),
        _ => None,
    }
}

impl Ha {
    /// A guest's power or migrate call when HA manages the guest: the
    /// request goes to the HA stack and the call answers with an
    /// `hastart`, `hastop` or `hamigrate` task instead of its own.
    ///
    /// # Errors
    /// A service in error state.
    pub fn divert(&mut self, vmid: u32, req: &HaRequest, now: i64) -> Result<Option<Worker>> {
        let Some(sid) = self.managed_sid(vmid) else {
            return Ok(None);
        };
        let what = if sid.starts_with("ct:") { "CT" } else { "VM" };
        let (kind, line, cmd) = match req {
            HaRequest::Start => (
                "hastart",
                format!("Requesting HA start for {what} {vmid}"),
                format!("ha-manager set {sid} --state started"),
            ),
            HaRequest::Stop { timeout } => (
                "hastop",
                format!("Requesting HA stop for {what} {vmid}"),
                format!("ha-manager crm-command stop {sid} {timeout}"),
            ),
            HaRequest::Migrate { target } => (
                "hamigrate",
                format!("Requesting HA migration for {what} {vmid} to node {target}"),
                format!("ha-manager migrate {sid} {target}"),
            ),
        };
        let worker = Worker::new(kind, &vmid.to_string()).log(line);
        Ok(Some(match self.request(&sid, req, now) {
            Ok(()) => worker,
            Err(e) => worker
                .log(e.message().to_string())
                .fail(format!("command '{cmd}' failed: exit code 255")),
        }))
    }
}

/// A task an LRM starts after a manager round, on the node of its
/// guest.
#[derive(Debug)]
pub struct LrmTask {
    /// The service.
    pub sid: String,
    /// The guest's node, where the task runs.
    pub node: String,
    /// The guest.
    pub vmid: u32,
    /// What the task does.
    pub job: LrmJob,
}

/// What an LRM's task does.
#[derive(Debug)]
pub enum LrmJob {
    /// A start, stop or shutdown, its worker made.
    Worker(Box<Worker>),
    /// A VM's migration to `target`, online when it runs.
    MigrateVm {
        /// The node it goes to.
        target: String,
        /// Whether it runs.
        online: bool,
    },
    /// A container's (restart) migration to `target`.
    MigrateCt {
        /// The node it goes to.
        target: String,
        /// Whether it runs.
        restart: bool,
    },
}

/// A worker to start.
fn boxed(w: Worker) -> LrmJob {
    LrmJob::Worker(Box::new(w))
}

/// Runs a manager round at `at_ms`: the tasks the LRMs start then, in
/// order (none without quorum; the round is then put off).
pub fn round(
    ha: &mut Ha,
    nodes: &Nodes,
    guests: &Guests,
    version: PveVersion,
    at_ms: i64,
) -> Vec<LrmTask> {
    let now = at_ms.div_euclid(1000);
    if !nodes.quorate() {
        ha.next_round = Some(now + ROUND_SECS);
        return Vec::new();
    }
    let members: Vec<(String, bool)> = nodes
        .iter()
        .map(|n| (n.name.clone(), n.status == NodeStatus::Online))
        .collect();
    let mut sids: Vec<String> = ha.resources.keys().cloned().collect();
    if let Some(m) = &ha.manager {
        sids.extend(m.service_status.keys().cloned());
    }
    let facts: BTreeMap<String, GuestFact> = sids
        .into_iter()
        .filter_map(|s| guest_fact(guests, &s).map(|f| (s, f)))
        .collect();
    let actions = ha.crm_round(version, now, nodes.local(), &members, &facts);
    let mut tasks = Vec::new();
    for a in actions {
        let sid = match &a {
            LrmAction::Start(s) | LrmAction::Stop(s, _) | LrmAction::Move(s, _) => s.clone(),
        };
        let Some(fact) = facts.get(&sid) else {
            continue;
        };
        let Some(vmid) = sid.split_once(':').and_then(|(_, n)| n.parse::<u32>().ok()) else {
            continue;
        };
        let job = match (&a, fact.kind) {
            (LrmAction::Start(_), GuestType::Qemu) => boxed(
                Worker::new("qmstart", &vmid.to_string()).effect(TaskEffect::Qemu {
                    vmid,
                    op: QemuOp::Start { skiplock: false },
                }),
            ),
            (LrmAction::Start(_), GuestType::Lxc) => boxed(lxc_worker(
                "vzstart",
                vmid,
                LxcOp::Start { skiplock: false },
            )),
            (LrmAction::Stop(_, 0), GuestType::Qemu) => boxed(
                Worker::new("qmstop", &vmid.to_string()).effect(TaskEffect::Qemu {
                    vmid,
                    op: QemuOp::Stop { skiplock: false },
                }),
            ),
            (LrmAction::Stop(_, t), GuestType::Qemu) => boxed(
                Worker::new("qmshutdown", &vmid.to_string()).effect(TaskEffect::Qemu {
                    vmid,
                    op: QemuOp::Shutdown {
                        force_stop: true,
                        timeout: *t,
                        hard: false,
                    },
                }),
            ),
            (LrmAction::Stop(_, 0), GuestType::Lxc) => {
                boxed(lxc_worker("vzstop", vmid, LxcOp::Stop { skiplock: false }))
            }
            (LrmAction::Stop(_, t), GuestType::Lxc) => boxed(lxc_worker(
                "vzshutdown",
                vmid,
                LxcOp::Shutdown {
                    timeout: *t,
                    force_stop: true,
                },
            )),
            (LrmAction::Move(_, target), GuestType::Qemu) => LrmJob::MigrateVm {
                target: target.clone(),
                online: fact.running,
            },
            (LrmAction::Move(_, target), GuestType::Lxc) => LrmJob::MigrateCt {
                target: target.clone(),
                restart: fact.running,
            },
        };
        tasks.push(LrmTask {
            sid,
            node: fact.node.clone(),
            vmid,
            job,
        });
    }
    tasks
}

/// `GET /cluster/ha/status/current` as of `now`.
pub fn status_current<'a>(
    ha: &'a Ha,
    nodes: &'a Nodes,
    guests: &Guests,
    version: PveVersion,
    now: i64,
) -> Vec<StatusLine<'a>> {
    ha.status_current(version, now, nodes.local(), nodes.quorate(), |sid| {
        sid_node(guests, sid)
    })
}
