//! Where a finished task's effect is applied: the steps of VM, container
//! and backup tasks, each given the areas it works in (`Cluster::vm_ops`,
//! `Cluster::ct_ops`, `Cluster::backup_ops`), and what a task that ends
//! without its effect undoes. `Cluster::apply` sends each effect here.

use super::Error;
use super::backup::BackupOp;
use super::cluster::Cluster;
use super::context::Context;
use super::lxc::LxcOp;
use super::qemu::{CreateJob, EffectResult, QemuOp, config_missing, lock_timeout, power_off};
use super::tasks::{Spawn, TaskEffect, Worker};

impl Cluster {
    /// Applies what a task does when it ends at `end_ms`: its log lines,
    /// or its error with the lines so far.
    pub(super) fn apply(&mut self, effect: TaskEffect, end_ms: i64) -> EffectResult {
        match effect {
            TaskEffect::None => Ok(Vec::new()),
            TaskEffect::SetVmStatus { vmids, status } => {
                for id in vmids {
                    if self.guests.ct_by_id(id).is_some() {
                        // startall/stopall: containers start and stop in
                        // the same run; one that cannot is skipped.
                        let op = if status == super::qemu::VmStatus::Running {
                            super::lxc::LxcOp::Start { skiplock: false }
                        } else {
                            super::lxc::LxcOp::Stop { skiplock: false }
                        };
                        let _ = self.apply_lxc(id, op, end_ms);
                    } else if status == super::qemu::VmStatus::Running {
                        // startall: a guest that cannot start is skipped.
                        let _ = self.apply_qemu(
                            id,
                            super::qemu::QemuOp::Start { skiplock: false },
                            end_ms,
                        );
                    } else if let Some(vm) = self.guests.get_mut(&id) {
                        vm.status = status;
                        vm.qmpstatus = None;
                        vm.started_ms = None;
                    }
                }
                Ok(Vec::new())
            }
            TaskEffect::Qemu { vmid, op } => self.apply_qemu(vmid, op, end_ms),
            TaskEffect::Lxc { vmid, op } => self.apply_lxc(vmid, op, end_ms),
            TaskEffect::Volume { node, change } => {
                self.apply_volume_change(&node, change);
                Ok(Vec::new())
            }
            TaskEffect::Backup(op) => self.apply_backup(op, end_ms),
            TaskEffect::NodeHw { node, op } => super::node_hw::apply_disk_op(
                &mut self.hardware,
                &mut self.storage,
                &self.nodes,
                &node,
                &op,
            ),
            TaskEffect::Service {
                node,
                service,
                action,
            } => {
                self.node_services.apply_service(
                    &self.nodes,
                    self.version,
                    &node,
                    &service,
                    action,
                    end_ms,
                );
                Ok(Vec::new())
            }
            TaskEffect::RealmSync {
                realm,
                options,
                dry_run,
            } => self.access.run_realm_sync(&realm, &options, dry_run),
            TaskEffect::Ceph {
                node,
                op: super::ceph::daemons::CephOp::RestartCluster { kind, opts },
            } => {
                // Its sub-tasks run on their nodes as root@pam (the API
                // client of `create_client`) and end at once.
                let known: Vec<String> = self.nodes.iter().map(|n| n.name.clone()).collect();
                let tasks = &mut self.tasks;
                let nodes = &self.nodes;
                let mut spawn = |t: super::ceph::restart::SubTask| {
                    let boot = nodes
                        .iter()
                        .find(|n| n.name == t.node)
                        .map_or(end_ms.div_euclid(1000), |n| n.boot_time);
                    let mut w = Worker::new(t.kind, &t.id);
                    for l in t.log {
                        w = w.log(l);
                    }
                    if let Some(e) = t.error {
                        w = w.fail(e);
                    }
                    let at = Spawn {
                        node: &t.node,
                        boot,
                        user: "root@pam",
                        now_ms: end_ms,
                        duration_ms: 0,
                    };
                    tasks.spawn(at, w)
                };
                let mut lines = Vec::new();
                match self
                    .ceph
                    .run_cluster_restart(&kind, &opts, &node, &known, &mut spawn, &mut lines)
                {
                    Ok(()) => Ok(lines),
                    Err(e) => Err((lines, e.to_string())),
                }
            }
            TaskEffect::Ceph { node, op } => {
                let mut around = super::ceph::Around {
                    storages: &mut self.storage,
                    hardware: &mut self.hardware,
                };
                self.ceph.apply_in(&mut around, &node, &op, end_ms)
            }
            TaskEffect::Acme(op) => {
                self.acme.apply(op);
                Ok(Vec::new())
            }
            TaskEffect::Mtunnel { socket } => self.mtunnel_timeout(&socket),
            TaskEffect::NodeCert { node, cert } => {
                self.hardware.node_mut(&node).set_custom_cert(cert.clone());
                if node == self.nodes.local() {
                    self.pveproxy_restart = Some(cert);
                }
                Ok(Vec::new())
            }
        }
    }

    /// Undoes the start of a task that ends without its effect.
    pub(super) fn abort(&mut self, effect: &TaskEffect) {
        match effect {
            TaskEffect::Qemu { vmid, op } => self.abort_qemu(*vmid, op),
            TaskEffect::Lxc { vmid, op } => self.abort_lxc(*vmid, op),
            TaskEffect::Backup(op) => self.abort_backup(op),
            _ => {}
        }
    }

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
                    self.start_vm(&node, vmid, &user, now * 1000, ms);
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
                self.start_vm(&node, vmid, "root@pam", end_ms, 0);
                Ok(vec![])
            }
            QemuOp::Reset { skiplock } => {
                let vm = self.guests.vm_mut(&node, vmid).map_err(fail)?;
                run_again(vm, skiplock)
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
                run_again(vm, skiplock)
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

    /// Undoes what the start of a container task did when the task ends
    /// without its effect (an injected fault, `DELETE .../tasks/{upid}`).
    pub(crate) fn abort_lxc(&mut self, vmid: u32, op: &LxcOp) {
        match op {
            LxcOp::Create(_)
                if self
                    .guests
                    .ct_by_id(vmid)
                    .is_some_and(|c| c.lock() == Some("create")) =>
            {
                self.guests.remove_ct(vmid);
            }
            LxcOp::Restore(job) => self.ct_ops().abort_ct_restore(vmid, job),
            LxcOp::Snapshot { name } => self.snapshots().abort_ct_snapshot(vmid, name),
            LxcOp::Clone(job) => self.ct_ops().abort_ct_clone(vmid, job),
            LxcOp::Migrate(_) => {
                if let Some(ct) = self.guests.ct_by_id_mut(vmid)
                    && ct.lock() == Some("migrate")
                {
                    ct.config.remove("lock");
                }
            }
            _ => {}
        }
    }

    /// Applies the effect of a container task that ended at `end_ms`.
    pub(crate) fn apply_lxc(&mut self, vmid: u32, op: LxcOp, end_ms: i64) -> EffectResult {
        let now = end_ms.div_euclid(1000);
        let Some(node) = self.guests.ct_by_id(vmid).map(|c| c.node.clone()) else {
            return Err((vec![], config_missing(self.nodes.local(), vmid).to_string()));
        };
        let fail = |e: Error| (Vec::new(), e.to_string());
        match op {
            LxcOp::Create(job) => {
                let start = job.start.clone();
                let lines = self.ct_ops().finish_ct_create(vmid, &node, *job, end_ms)?;
                self.ct_start_after(&node, vmid, start, end_ms);
                Ok(lines)
            }
            LxcOp::Start { skiplock } => self.ct_ops().ct_power_on(vmid, skiplock, end_ms),
            LxcOp::Stop { skiplock } => {
                let ct = self.guests.ct_mut(&node, vmid).map_err(fail)?;
                if !skiplock {
                    ct.check_lock().map_err(fail)?;
                }
                if !ct.running() {
                    return Err((vec![], format!("CT {vmid} not running")));
                }
                ct.set_stopped();
                Ok(vec![])
            }
            LxcOp::Shutdown {
                timeout,
                force_stop,
            } => {
                let ct = self.guests.ct_mut(&node, vmid).map_err(fail)?;
                ct.check_lock().map_err(fail)?;
                if !ct.running() {
                    return Err((vec![], format!("CT {vmid} not running")));
                }
                // The emulated init always stops in time; a zero timeout
                // gives it none.
                if timeout == 0 && !force_stop {
                    return Err((vec![], "container did not stop".into()));
                }
                ct.set_stopped();
                Ok(vec![])
            }
            LxcOp::Reboot => {
                let ct = self.guests.ct_mut(&node, vmid).map_err(fail)?;
                ct.check_lock().map_err(fail)?;
                if !ct.running() {
                    return Err((vec![], format!("CT {vmid} not running")));
                }
                ct.set_stopped();
                let mut lines = Vec::new();
                self.ct_ops().apply_ct_pending(vmid, &mut lines, now);
                if let Some(ct) = self.guests.ct_by_id_mut(vmid) {
                    ct.set_running(end_ms);
                }
                Ok(lines)
            }
            LxcOp::Suspend => {
                let ct = self.guests.ct_mut(&node, vmid).map_err(fail)?;
                ct.check_lock().map_err(fail)?;
                if !ct.running() {
                    return Err((vec![], format!("CT {vmid} not running")));
                }
                ct.set_stopped();
                ct.checkpoint = true;
                Ok(vec![])
            }
            LxcOp::Resume => {
                let ct = self.guests.ct_mut(&node, vmid).map_err(fail)?;
                if ct.running() {
                    return Err((vec![], format!("CT {vmid} already running")));
                }
                if !ct.checkpoint {
                    return Err((
                        vec![],
                        format!(
                            "command 'lxc-checkpoint -n {vmid} -r --foreground -D /var/lib/vz/dump' failed: exit code 1"
                        ),
                    ));
                }
                ct.set_running(end_ms);
                Ok(vec![])
            }
            LxcOp::Destroy {
                purge,
                unreferenced,
                force,
            } => self
                .ct_ops()
                .finish_ct_destroy(&node, vmid, purge, unreferenced, force),
            LxcOp::Snapshot { name } => self.snapshots().commit_ct_snapshot(&node, vmid, &name),
            LxcOp::Rollback { name, start } => self
                .snapshots()
                .finish_ct_rollback(&node, vmid, &name, start, end_ms),
            LxcOp::DeleteSnapshot { name, force } => self
                .snapshots()
                .finish_ct_delete_snapshot(&node, vmid, &name, force),
            LxcOp::Template => self.ct_ops().finish_ct_template(&node, vmid),
            LxcOp::Clone(job) => self.ct_ops().finish_ct_clone(vmid, *job, now),
            LxcOp::Resize { disk, size } => {
                self.ct_ops().finish_ct_resize(&node, vmid, &disk, size)
            }
            LxcOp::MoveVolume(job) => self.ct_ops().finish_ct_move(&node, vmid, &job, now),
            LxcOp::Migrate(job) => self.ct_ops().finish_ct_migrate(&node, vmid, &job, end_ms),
            LxcOp::Restore(job) => {
                let start = job.start.clone();
                let lines = self.ct_ops().finish_ct_restore(vmid, &node, *job, end_ms)?;
                self.ct_start_after(&node, vmid, start, end_ms);
                Ok(lines)
            }
            LxcOp::Reassign(job) => self.ct_ops().finish_ct_reassign(vmid, &job),
        }
    }

    /// A `qmstart` task as `user`, begun at `at_ms` and taking `ms`: after
    /// a reboot's stop, or the start `start=1` asks for when the task that
    /// created or restored the VM ends.
    fn start_vm(&mut self, node: &str, vmid: u32, user: &str, at_ms: i64, ms: u64) {
        let worker = Worker::new("qmstart", &vmid.to_string()).effect(TaskEffect::Qemu {
            vmid,
            op: QemuOp::Start { skiplock: false },
        });
        self.spawn_task(node, worker, user, at_ms, ms);
    }

    /// The `vzstart` task `start=1` asks for, begun when the task that
    /// created or restored the container ends.
    fn ct_start_after(&mut self, node: &str, vmid: u32, start: Option<(String, u64)>, end_ms: i64) {
        if let Some((user, ms)) = start {
            self.spawn_task(
                node,
                Worker::new("vzstart", &vmid.to_string()).effect(TaskEffect::Lxc {
                    vmid,
                    op: LxcOp::Start { skiplock: false },
                }),
                &user,
                end_ms,
                ms,
            );
        }
    }

    /// Applies the effect of a backup task that ended at `end_ms`; a
    /// restore with `start=1` begins the VM's `qmstart` task.
    pub(crate) fn apply_backup(&mut self, op: BackupOp, end_ms: i64) -> EffectResult {
        match op {
            BackupOp::Dump(job) => self.backup_ops().finish_dump(*job, end_ms),
            BackupOp::Restore(job) => {
                let (vmid, node, start) = (job.vmid, job.node.clone(), job.start.clone());
                let lines = self.backup_ops().finish_restore(*job, end_ms)?;
                if let Some((user, ms)) = start {
                    self.start_vm(&node, vmid, &user, end_ms, ms);
                }
                Ok(lines)
            }
            BackupOp::Prune {
                node,
                volids,
                groups,
                ..
            } => self.backup_ops().finish_prune(&node, &volids, &groups),
        }
    }

    /// Undoes the start of a backup task that ends without its effect.
    pub(crate) fn abort_backup(&mut self, op: &BackupOp) {
        match op {
            BackupOp::Dump(job) => self.backup_ops().unlock_dumped(job),
            BackupOp::Restore(job) => self.backup_ops().remove_create_lock(job.vmid),
            BackupOp::Prune { .. } => {}
        }
    }

    /// Starts the runs of the jobs whose next event has come by `now_ms`:
    /// a `vzdump` task on each online node the job is for that holds one
    /// of its guests.
    pub(crate) fn run_due_jobs(&mut self, now_ms: i64) {
        for (id, at, job) in self.backups.take_due(now_ms.div_euclid(1000)) {
            let nodes: Vec<String> = self
                .nodes
                .iter()
                .filter(|n| n.status == crate::model::NodeStatus::Online)
                .map(|n| n.name.clone())
                .filter(|n| job.node().is_none_or(|x| x == *n))
                .collect();
            for node in nodes {
                let req = job.vzdump_request(&id, &node);
                let guests = self.backup_reader().job_guests(&job, Some(&node));
                if guests.is_empty() && !req.all {
                    continue;
                }
                let seed = at.unsigned_abs()
                    ^ id.bytes()
                        .fold(0u64, |h, b| h.wrapping_mul(31) + u64::from(b));
                let mut rq = Context::new(at.saturating_mul(1000), seed);
                if let Ok(Some(worker)) = self.backup_ops().vzdump(req, &mut rq) {
                    self.spawn_task(&node, worker, "root@pam", at.saturating_mul(1000), 0);
                }
            }
        }
    }
}

/// A reset or a resume of a running VM: the lock (unless skipped), then
/// QEMU runs the guest again.
fn run_again(vm: &mut super::qemu::Vm, skiplock: bool) -> EffectResult {
    if !skiplock {
        vm.check_lock().map_err(|e| (vec![], e.to_string()))?;
    }
    if !vm.running() {
        return Err((vec![], format!("VM {} not running", vm.vmid())));
    }
    vm.qmpstatus = None;
    Ok(vec![])
}
