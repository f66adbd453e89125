//! Where a finished task's effect is applied: the steps of VM, container
//! and backup tasks, each given the areas it works in (`Cluster::vm_ops`,
//! `Cluster::ct_ops`, `Cluster::backup_ops`), and what a task that ends
//! without its effect undoes. `Cluster::apply` sends each effect here.

use super::Error;
use super::cluster::Cluster;
use super::qemu::{CreateJob, EffectResult, QemuOp, config_missing, lock_timeout, power_off};
use super::tasks::{TaskEffect, Worker};

impl Cluster {
    /// Undoes what the start of a VM task did when the task fails without
    /// running its effect (an injected fault, `DELETE .../tasks/{upid}`).
    pub(crate) fn abort_qemu(&mut self, vmid: u32, op: &QemuOp) {
        match op {
            QemuOp::Clone(job) => self.vm_ops().abort_clone(vmid, job),
            QemuOp::Snapshot { name } => self.snapshots().abort_snapshot(vmid, name),
            QemuOp::Migrate(_) => self.vm_ops().abort_migrate(vmid),
            _ => {}
        }
    }

    /// Applies the effect of a VM task that ended at `end_ms`.
    pub(crate) fn apply_qemu(&mut self, vmid: u32, op: QemuOp, end_ms: i64) -> EffectResult {
        let now = end_ms.div_euclid(1000);
        let node = match (self.guests.get(&vmid), &op) {
            (Some(v), _) => v.node.clone(),
            // PVE forks a resize before loading the config.
            (None, QemuOp::Resize(job)) => {
                return Err((vec![], config_missing(&job.node, vmid).to_string()));
            }
            (None, _) => return Err((vec![], format!("VM {vmid} does not exist"))),
        };
        let fail = |e: Error| (Vec::new(), e.to_string());
        let takes_flock = !matches!(op, QemuOp::Clone(_) | QemuOp::Create { .. });
        if takes_flock && self.guests.get(&vmid).is_some_and(|v| v.flock.held()) {
            return Err((vec!["trying to acquire lock...".into()], lock_timeout(vmid)));
        }
        match op {
            QemuOp::Clone(job) => self.vm_ops().finish_clone(vmid, *job, now),
            QemuOp::Template { disk } => {
                self.vm_ops().finish_template(&node, vmid, disk.as_deref())
            }
            QemuOp::Snapshot { name } => self.snapshots().commit_snapshot(&node, vmid, &name),
            QemuOp::Rollback {
                name,
                start,
                vmgenid,
            } => self
                .snapshots()
                .finish_rollback(&node, vmid, &name, start, vmgenid, end_ms),
            QemuOp::DeleteSnapshot { name } => {
                self.snapshots().finish_delete_snapshot(&node, vmid, &name)
            }
            QemuOp::Resize(job) => super::qemu::finish_resize(
                &mut self.guests,
                &mut self.storage,
                &self.access,
                self.version,
                vmid,
                &job,
            ),
            QemuOp::MoveDisk(job) => self.vm_ops().finish_move_disk(&node, vmid, &job, now),
            QemuOp::Reassign(job) => self.vm_ops().finish_reassign(vmid, &job, now),
            QemuOp::Migrate(job) => self.vm_ops().finish_migrate(&node, vmid, &job, now),
            QemuOp::Create {
                config,
                storage,
                start,
                ids,
                pool,
            } => {
                let job = CreateJob {
                    config,
                    storage,
                    start: start.clone(),
                    ids,
                    pool,
                };
                let lines = self.vm_ops().finish_create(vmid, &node, job, now)?;
                if let Some((user, ms)) = start {
                    self.spawn_task(
                        &node,
                        Worker::new("qmstart", &vmid.to_string()).effect(TaskEffect::Qemu {
                            vmid,
                            op: QemuOp::Start { skiplock: false },
                        }),
                        &user,
                        now * 1000,
                        ms,
                    );
                }
                Ok(lines)
            }
            QemuOp::Start { skiplock } => self.vm_ops().power_on(vmid, skiplock, end_ms),
            QemuOp::Stop { skiplock } => {
                let vm = self.guests.vm_mut(&node, vmid).map_err(fail)?;
                if !skiplock {
                    vm.check_lock().map_err(fail)?;
                }
                power_off(vm);
                Ok(vec![])
            }
            QemuOp::Shutdown {
                force_stop,
                timeout,
                hard,
            } => {
                let vm = self.guests.vm_mut(&node, vmid).map_err(fail)?;
                vm.check_lock().map_err(fail)?;
                let mut lines = Vec::new();
                if hard {
                    lines.push("VM is paused - stop instead of shutdown".to_string());
                } else if vm.running() && vm.config.get("acpi").is_some_and(|a| a == "0") {
                    if !force_stop {
                        return Err((lines, "VM quit/powerdown failed - got timeout".to_string()));
                    }
                    let _ = timeout;
                    lines.push("VM still running - terminating now with SIGTERM".into());
                }
                power_off(vm);
                Ok(lines)
            }
            QemuOp::Reboot => {
                let vm = self.guests.vm_mut(&node, vmid).map_err(fail)?;
                vm.check_lock().map_err(fail)?;
                if !vm.running() {
                    return Err((vec![], format!("VM {vmid} not running")));
                }
                power_off(vm);
                // `qm cleanup` starts it again in a task of its own, which
                // applies the pending changes.
                self.spawn_task(
                    &node,
                    Worker::new("qmstart", &vmid.to_string()).effect(TaskEffect::Qemu {
                        vmid,
                        op: QemuOp::Start { skiplock: false },
                    }),
                    "root@pam",
                    end_ms,
                    0,
                );
                Ok(vec![])
            }
            QemuOp::Reset { skiplock } => {
                let vm = self.guests.vm_mut(&node, vmid).map_err(fail)?;
                if !skiplock {
                    vm.check_lock().map_err(fail)?;
                }
                if !vm.running() {
                    return Err((vec![], format!("VM {vmid} not running")));
                }
                vm.qmpstatus = None;
                Ok(vec![])
            }
            QemuOp::Suspend { skiplock, todisk } => {
                self.vm_ops()
                    .suspend(&node, vmid, skiplock, todisk.as_deref(), now)
            }
            QemuOp::Resume { skiplock } => {
                let vm = self.guests.vm_mut(&node, vmid).map_err(fail)?;
                if vm.lock() == Some("suspended") {
                    return self.vm_ops().power_on(vmid, true, end_ms);
                }
                if !skiplock {
                    vm.check_lock().map_err(fail)?;
                }
                if !vm.running() {
                    return Err((vec![], format!("VM {vmid} not running")));
                }
                vm.qmpstatus = None;
                Ok(vec![])
            }
            QemuOp::Destroy {
                skiplock,
                purge,
                unreferenced,
            } => {
                let lines = self
                    .vm_ops()
                    .destroy(&node, vmid, skiplock, purge, unreferenced)?;
                if purge {
                    self.backups.remove_vmid_from_jobs(vmid);
                }
                Ok(lines)
            }
            QemuOp::Config(update) => self
                .vm_ops()
                .update_config(&node, vmid, &update, now)
                .map_err(|(lines, e)| {
                    let msg = match &e {
                        Error::Invalid(map) => {
                            let mut s = "400 Parameter verification failed.".to_string();
                            for (k, v) in map {
                                s.push_str(&format!("\n{k}: {v}"));
                            }
                            s
                        }
                        other => other.to_string(),
                    };
                    (lines, msg)
                }),
        }
    }
}
