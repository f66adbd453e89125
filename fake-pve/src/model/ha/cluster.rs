//! The HA stack's hold on the rest of the cluster: guests looked up by
//! sid, quorum, the diversion of an HA-managed guest's power and migrate
//! calls, and the LRMs' tasks of each manager round.

use std::collections::BTreeMap;

use super::manager::{GuestFact, HaRequest, LRM_TASK_MS, LrmAction, ROUND_SECS};
use super::status::{ManagerStatus, StatusLine};
use super::{GuestType, Ha};
use crate::model::Result;
use crate::model::access::AuthId;
use crate::model::cluster::Cluster;
use crate::model::lxc::{LxcOp, lxc_worker};
use crate::model::nodes::NodeStatus;
use crate::model::qemu::QemuOp;
use crate::model::tasks::{TaskEffect, Worker};

impl Cluster {
    /// The HA configuration and manager.
    pub fn ha(&self) -> &Ha {
        &self.ha
    }

    /// The HA configuration and manager, to change.
    pub fn ha_mut(&mut self) -> &mut Ha {
        &mut self.ha
    }

    /// How the HA stack looks a guest up (`get_vmlist`).
    pub fn guest_type(&self, vmid: u32) -> Option<GuestType> {
        if self.guests.get(&vmid).is_some() {
            Some(GuestType::Qemu)
        } else if self.guests.ct(vmid).is_some() {
            Some(GuestType::Lxc)
        } else {
            None
        }
    }

    /// Whether the local node has quorum (a standalone node always has).
    pub fn quorate(&self) -> bool {
        if self.nodes.cluster_name().is_none() {
            return true;
        }
        let online = self
            .nodes
            .iter()
            .filter(|n| n.status == NodeStatus::Online)
            .count();
        online * 2 > self.nodes.len()
    }

    /// The node of the guest behind `sid`.
    pub fn sid_node(&self, sid: &str) -> Option<String> {
        self.guest_fact(sid).map(|f| f.node)
    }

    fn guest_fact(&self, sid: &str) -> Option<GuestFact> {
        let (kind, name) = sid.split_once(':')?;
        let vmid: u32 = name.parse().ok()?;
        match kind {
            "vm" => self.guests.get(&vmid).map(|v| GuestFact {
                kind: GuestType::Qemu,
                node: v.node.clone(),
                running: v.running(),
                locked: v.lock().is_some(),
            }),
            "ct" => self.guests.ct(vmid).map(|c| GuestFact {
                kind: GuestType::Lxc,
                node: c.node().to_string(),
                running: c.running(),
                locked: c.lock().is_some(),
            }),
            _ => None,
        }
    }

    /// A guest's power or migrate call when HA manages the guest: the
    /// request goes to the HA stack and the call answers with an
    /// `hastart`, `hastop` or `hamigrate` task instead of its own.
    ///
    /// # Errors
    /// A service in error state.
    pub fn ha_divert(&mut self, vmid: u32, req: &HaRequest, now: i64) -> Result<Option<Worker>> {
        let Some(sid) = self.ha.managed_sid(vmid) else {
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
        Ok(Some(match self.ha.request(&sid, req, now) {
            Ok(()) => worker,
            Err(e) => worker
                .log(e.message().to_string())
                .fail(format!("command '{cmd}' failed: exit code 255")),
        }))
    }

    /// Runs a manager round at `at_ms` and starts the LRMs' tasks.
    pub(crate) fn ha_round(&mut self, at_ms: i64) {
        let now = at_ms.div_euclid(1000);
        if !self.quorate() {
            self.ha.next_round = Some(now + ROUND_SECS);
            return;
        }
        let nodes: Vec<(String, bool)> = self
            .nodes
            .iter()
            .map(|n| (n.name.clone(), n.status == NodeStatus::Online))
            .collect();
        let mut sids: Vec<String> = self.ha.resources.keys().cloned().collect();
        if let Some(m) = &self.ha.manager {
            sids.extend(m.service_status.keys().cloned());
        }
        let guests: BTreeMap<String, GuestFact> = sids
            .into_iter()
            .filter_map(|s| self.guest_fact(&s).map(|f| (s, f)))
            .collect();
        let local = self.nodes.local().to_string();
        let version = self.version;
        let actions = self.ha.crm_round(version, now, &local, &nodes, &guests);
        for a in actions {
            let sid = match &a {
                LrmAction::Start(s) | LrmAction::Stop(s, _) | LrmAction::Move(s, _) => s.clone(),
            };
            let Some(fact) = guests.get(&sid) else {
                continue;
            };
            let Some(vmid) = sid.split_once(':').and_then(|(_, n)| n.parse::<u32>().ok()) else {
                continue;
            };
            let worker = match (&a, fact.kind) {
                (LrmAction::Start(_), GuestType::Qemu) => {
                    Ok(
                        Worker::new("qmstart", &vmid.to_string()).effect(TaskEffect::Qemu {
                            vmid,
                            op: QemuOp::Start { skiplock: false },
                        }),
                    )
                }
                (LrmAction::Start(_), GuestType::Lxc) => Ok(lxc_worker(
                    "vzstart",
                    vmid,
                    LxcOp::Start { skiplock: false },
                )),
                (LrmAction::Stop(_, 0), GuestType::Qemu) => {
                    Ok(
                        Worker::new("qmstop", &vmid.to_string()).effect(TaskEffect::Qemu {
                            vmid,
                            op: QemuOp::Stop { skiplock: false },
                        }),
                    )
                }
                (LrmAction::Stop(_, t), GuestType::Qemu) => {
                    Ok(
                        Worker::new("qmshutdown", &vmid.to_string()).effect(TaskEffect::Qemu {
                            vmid,
                            op: QemuOp::Shutdown {
                                force_stop: true,
                                timeout: *t,
                                hard: false,
                            },
                        }),
                    )
                }
                (LrmAction::Stop(_, 0), GuestType::Lxc) => {
                    Ok(lxc_worker("vzstop", vmid, LxcOp::Stop { skiplock: false }))
                }
                (LrmAction::Stop(_, t), GuestType::Lxc) => Ok(lxc_worker(
                    "vzshutdown",
                    vmid,
                    LxcOp::Shutdown {
                        timeout: *t,
                        force_stop: true,
                    },
                )),
                (LrmAction::Move(_, target), GuestType::Qemu) => {
                    self.migrate_vm(crate::model::qemu::MigrateRequest {
                        node: fact.node.clone(),
                        vmid,
                        target: target.clone(),
                        online: fact.running,
                        with_local_disks: false,
                        targetstorage: None,
                        who: AuthId::User("root@pam".into()),
                        now,
                    })
                }
                (LrmAction::Move(_, target), GuestType::Lxc) => self.migrate_ct(
                    &fact.node,
                    vmid,
                    crate::model::lxc::CtMigrateJob {
                        target: target.clone(),
                        restart: fact.running,
                        timeout: 180,
                        online: false,
                        target_storage: None,
                    },
                ),
            };
            match worker {
                Ok(w) => {
                    self.spawn_task(&fact.node, w, "root@pam", at_ms, LRM_TASK_MS);
                }
                Err(_) => self.ha.lrm_failed(&sid),
            }
        }
    }

    /// `GET /cluster/ha/status/current` as of `now`.
    pub fn ha_status_current(&self, now: i64) -> Vec<StatusLine<'_>> {
        self.ha.status_current(
            self.version,
            now,
            self.nodes.local(),
            self.quorate(),
            |sid| self.sid_node(sid),
        )
    }

    /// `GET /cluster/ha/status/manager_status`.
    pub fn ha_manager_status(&self) -> ManagerStatus<'_> {
        self.ha.manager_status(self.nodes.local(), self.quorate())
    }
}
