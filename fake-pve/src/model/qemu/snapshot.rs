//! Snapshots: create (with the VM state of a running VM), list as a
//! tree, read and describe, roll back, delete (pve-guest-common
//! `AbstractConfig.pm` `snapshot_create`/`snapshot_rollback`/
//! `snapshot_delete`; qemu-server `QemuConfig.pm`, `API2/Qemu.pm`).
//!
//! The part of a task that PVE runs at once (prepare: checks, lock,
//! snapshot section with `snapstate`) happens when the task starts; the
//! commit happens when it ends.

use std::collections::BTreeMap;

use super::clone::is_cloudinit;
use super::config::register_unused;
use super::{
    EffectResult, Error, Lines, Qemu, QemuOp, Result, TaskEffect, Worker, config_missing,
    drive_file, drive_is_cdrom, drive_order, is_disk, is_drive_key, lock_timeout, power_off,
    running_machine, uuid,
};
use crate::model::Context;
use crate::model::guest::snapshot::{
    SnapshotKind, Snapshots, check_name, feature_missing, thin_lv,
};
use crate::model::storage::{VolumeKind, parse_volid};

impl SnapshotKind for Qemu {
    fn reserved_snapshot_name(name: &str) -> Option<&str> {
        if name == "current" {
            Some("current")
        } else if name.eq_ignore_ascii_case("pending") {
            Some("pending")
        } else {
            None
        }
    }

    fn not_copied(key: &str) -> bool {
        key == "snapshots" || key.starts_with("unused")
    }

    fn snapshot_volumes(conf: &BTreeMap<String, String>) -> Vec<(String, String)> {
        disks(conf)
    }

    const LISTS_VMSTATE: bool = true;
    const LISTS_EMPTY_PARENT: bool = false;
    const DROPPED_ON_ROLLBACK: &'static [&'static str] =
        &["runningmachine", "runningcpu", "running-nets-host-mtu"];
}

/// PVE's `render_bytes` (two decimals).
fn render_bytes2(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    if bytes > 1023 {
        i = ((v.ln() / 1024f64.ln()) as usize).min(units.len() - 1);
        v /= 1024f64.powi(i32::try_from(i).unwrap_or(0));
    }
    format!("{v:.2} {}", units[i])
}

/// The disks of a config section (not CD-ROMs, not cloud-init), in
/// `foreach_volume` order.
fn disks(conf: &BTreeMap<String, String>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = conf
        .iter()
        .filter(|(k, v)| is_disk(k, v))
        .map(|(k, v)| (k.clone(), drive_file(v).to_string()))
        .collect();
    out.sort_by_key(|(k, _)| drive_order(k));
    out
}

/// The volumes a section refers to, cloud-init drives included
/// (`drive_is_cdrom($drive, 1)`).
fn volumes_of(conf: &BTreeMap<String, String>) -> Vec<String> {
    conf.iter()
        .filter(|(k, v)| is_drive_key(k) && (!drive_is_cdrom(v) || is_cloudinit(v)))
        .map(|(_, v)| drive_file(v).to_string())
        .collect()
}

/// `find_vmstate_storage`: `vmstatestorage`, else the storage of the
/// first disk, else `local`.
pub fn find_vmstate_storage(conf: &BTreeMap<String, String>) -> String {
    if let Some(s) = conf.get("vmstatestorage") {
        return s.clone();
    }
    disks(conf)
        .into_iter()
        .find_map(|(_, f)| parse_volid(&f).map(|(s, _)| s.to_string()))
        .unwrap_or_else(|| "local".into())
}

impl Snapshots<'_> {
    /// `POST .../snapshot`: the synchronous refusals, then the prepare
    /// step of the `qmsnapshot` worker.
    ///
    /// # Errors
    /// Reserved names; a missing VM.
    pub fn snapshot_vm(
        &mut self,
        node: &str,
        vmid: u32,
        name: &str,
        vmstate: bool,
        description: Option<String>,
        now: i64,
    ) -> Result<Worker> {
        check_name::<Qemu>(name)?;
        let version = self.version;
        let vm = self.guests.vm(node, vmid)?;
        let worker = Worker::new("qmsnapshot", &vmid.to_string());
        if vm.flock.held() {
            return Ok(worker
                .log("trying to acquire lock...")
                .fail(lock_timeout(vmid)));
        }
        if let Some(refusal) = vm.snapshot_refusal(name) {
            return Ok(worker.fail(refusal));
        }
        let conf = vm.config.clone();
        let running = vm.running();
        let mem = vm.maxmem();
        let vols = vm.snapshot_volumes();
        if feature_missing(self.storage, &vols, version.is_v9()) {
            return Ok(worker.fail("snapshot feature is not available"));
        }
        let mut snap = vm.snapshot_copy();
        let mut lines = Vec::new();
        if vmstate && running {
            let sid = find_vmstate_storage(&conf);
            let size = 2 * mem + (500 << 20);
            let fmt = self
                .storage
                .existing(&sid)
                .ok()
                .filter(|s| crate::model::storage::path_based(&s.kind))
                .map(|_| "raw");
            let (volid, _) = match self.storage.alloc_volume(
                &sid,
                node,
                vmid,
                &VolumeKind::State(name.to_string()),
                fmt,
                size,
                now,
            ) {
                Ok(v) => v,
                Err(e) => return Ok(worker.fail(e.to_string())),
            };
            lines.push(format!("saving VM state and RAM using storage '{sid}'"));
            let used = mem / 4;
            lines.push(format!("{} in 1s", render_bytes2(used / 2)));
            lines.push(format!(
                "completed saving the VM state in 2s, saved {}",
                render_bytes2(used)
            ));
            snap.insert("vmstate".into(), volid);
            snap.insert(
                "runningmachine".into(),
                running_machine(version, &conf).into_owned(),
            );
            snap.insert(
                "runningcpu".into(),
                "kvm64,enforce,+kvm_pv_eoi,+kvm_pv_unhalt,+lahf_lm,+sep".into(),
            );
        }
        for (k, f) in &vols {
            lines.push(format!("snapshotting 'drive-{k}' ({f})"));
            if let Some(lv) = thin_lv(self.storage, f) {
                lines.push(format!("  Logical volume \"snap_{lv}_{name}\" created."));
            }
        }
        if let Some(vm) = self.guests.get_mut(&vmid) {
            vm.begin_snapshot(name, snap, description, now);
        }
        let mut w = worker.effect(TaskEffect::Qemu {
            vmid,
            op: QemuOp::Snapshot {
                name: name.to_string(),
            },
        });
        for l in lines {
            w = w.log(l);
        }
        Ok(w)
    }

    /// `__snapshot_commit`.
    pub(in crate::model) fn commit_snapshot(
        &mut self,
        node: &str,
        vmid: u32,
        name: &str,
    ) -> EffectResult {
        let vm = self
            .guests
            .vm_mut(node, vmid)
            .map_err(|e| (vec![], e.to_string()))?;
        vm.commit_snapshot(name).map_err(|e| (vec![], e))?;
        Ok(vec![])
    }

    /// Undoes a snapshot whose task failed or was stopped.
    pub(in crate::model) fn abort_snapshot(&mut self, vmid: u32, name: &str) {
        let Some(vm) = self.guests.get_mut(&vmid) else {
            return;
        };
        let node = vm.node.clone();
        let snap = vm.abort_snapshot(name);
        if let Some(state) = snap.and_then(|s| s.get("vmstate").cloned()) {
            self.storage.free_volume(&state, &node);
        }
    }

    /// `PUT .../snapshot/{snapname}/config`: the description.
    ///
    /// # Errors
    /// The file lock, `VM is locked`, a missing snapshot.
    pub fn update_snapshot(
        &mut self,
        node: &str,
        vmid: u32,
        name: &str,
        description: Option<String>,
    ) -> Result<()> {
        let Some(description) = description else {
            return Ok(());
        };
        let vm = self.guests.vm_mut(node, vmid)?;
        if vm.flock.held() {
            return Err(Error::locked(lock_timeout(vmid)));
        }
        vm.check_lock()?;
        let snap = vm.snapshot_mut(name)?;
        if description.is_empty() {
            snap.remove("description");
        } else {
            snap.insert("description".into(), description);
        }
        Ok(())
    }

    /// `POST .../snapshot/{snapname}/rollback`: the prepare step of the
    /// `qmrollback` worker (a running VM is stopped hard).
    pub fn rollback_vm(
        &mut self,
        node: &str,
        vmid: u32,
        name: &str,
        start: bool,
        rq: &mut Context,
    ) -> Worker {
        let worker = Worker::new("qmrollback", &vmid.to_string());
        let Some(vm) = self.guests.get(&vmid).filter(|v| v.node == node) else {
            return worker.fail(config_missing(node, vmid).to_string());
        };
        if vm.flock.held() {
            return worker
                .log("trying to acquire lock...")
                .fail(lock_timeout(vmid));
        }
        if vm.template() {
            return worker.fail("you can't rollback if vm is a template");
        }
        let Some(snap) = vm.snapshots.get(name) else {
            return worker.fail(format!("snapshot '{name}' does not exist"));
        };
        if let Some(st) = snap.get("snapstate") {
            return worker.fail(format!(
                "unable to rollback to incomplete snapshot (snapstate = {st})"
            ));
        }
        if let Err(e) = vm.check_lock() {
            return worker.fail(e.to_string());
        }
        let mut end = Vec::new();
        for (_, f) in disks(snap) {
            if let Some(lv) = thin_lv(self.storage, &f) {
                end.push(format!("  Logical volume \"{lv}\" successfully removed."));
                end.push(format!("  Logical volume \"{lv}\" created."));
            }
        }
        if let Some(vm) = self.guests.get_mut(&vmid) {
            power_off(vm);
            vm.config.insert("lock".into(), "rollback".into());
        }
        let mut w = worker.effect(TaskEffect::Qemu {
            vmid,
            op: QemuOp::Rollback {
                name: name.to_string(),
                start,
                vmgenid: uuid(rq),
            },
        });
        for l in end {
            w = w.log(l);
        }
        w
    }

    /// The end of `qmrollback`: the snapshot's config becomes current.
    pub(in crate::model) fn finish_rollback(
        &mut self,
        node: &str,
        vmid: u32,
        name: &str,
        start: bool,
        vmgenid: String,
        end_ms: i64,
    ) -> EffectResult {
        let fail = |e: Error| (Vec::new(), e.to_string());
        let vm = self.guests.vm(node, vmid).map_err(fail)?;
        if vm.lock() != Some("rollback") {
            return Err((vec![], "got wrong lock".into()));
        }
        let Some(snap) = vm.snapshots.get(name).cloned() else {
            return Err((vec![], format!("snapshot '{name}' does not exist")));
        };
        let keep: Vec<String> = volumes_of(&snap);
        let unused: Vec<String> = volumes_of(&vm.config)
            .into_iter()
            .filter(|v| !keep.contains(v))
            .collect();
        let mut log: Lines = Vec::new();
        let mut conf = vm.rollback_config(name, &snap);
        if conf
            .get("vmgenid")
            .is_some_and(|v| !v.is_empty() && v != "0")
        {
            let vmgenid = if vmgenid.is_empty() {
                // A task saved before the draw was made up front.
                uuid(&mut Context::new(end_ms, u64::from(vmid)))
            } else {
                vmgenid
            };
            conf.insert("vmgenid".into(), vmgenid);
        }
        if let Some(vm) = self.guests.get_mut(&vmid) {
            vm.config = conf;
            vm.pending.clear();
            vm.pending_delete.clear();
        }
        for v in unused {
            if is_cloudinit(&v) {
                log.push(format!("found unused cloudinit disk '{v}', removing it"));
                self.storage.free_volume(&v, node);
            } else {
                register_unused(self.guests, self.storage, node, vmid, &v);
            }
        }
        let with_state = snap.get("vmstate").is_some_and(|v| !v.is_empty());
        if (with_state || start)
            && let Some(vm) = self.guests.get_mut(&vmid)
        {
            vm.status = super::VmStatus::Running;
            vm.qmpstatus = None;
            vm.started_ms = Some(end_ms);
        }
        Ok(log)
    }

    /// `DELETE .../snapshot/{snapname}`: the prepare step of the
    /// `qmdelsnapshot` worker.
    pub fn delete_snapshot(&mut self, node: &str, vmid: u32, name: &str) -> Worker {
        let worker = Worker::new("qmdelsnapshot", &vmid.to_string());
        let Some(vm) = self.guests.get_mut(&vmid).filter(|v| v.node == node) else {
            return worker.fail(config_missing(node, vmid).to_string());
        };
        if vm.flock.held() {
            return worker
                .log("trying to acquire lock...")
                .fail(lock_timeout(vmid));
        }
        if !vm.snapshots.contains_key(name) {
            return worker.fail(format!("snapshot '{name}' does not exist"));
        }
        if let Err(e) = vm.check_lock() {
            return worker.fail(e.to_string());
        }
        vm.config.insert("lock".into(), "snapshot-delete".into());
        if vm.template() {
            return worker.fail("you can't delete a snapshot if vm is a template");
        }
        if let Some(s) = vm.snapshots.get_mut(name) {
            s.insert("snapstate".into(), "delete".into());
        }
        worker.effect(TaskEffect::Qemu {
            vmid,
            op: QemuOp::DeleteSnapshot {
                name: name.to_string(),
            },
        })
    }

    /// The end of `qmdelsnapshot`.
    pub(in crate::model) fn finish_delete_snapshot(
        &mut self,
        node: &str,
        vmid: u32,
        name: &str,
    ) -> EffectResult {
        let vm = self
            .guests
            .vm(node, vmid)
            .map_err(|e| (vec![], e.to_string()))?;
        if vm.lock() != Some("snapshot-delete") {
            return Err((
                vec![],
                "encountered invalid lock, expected 'snapshot-delete'".into(),
            ));
        }
        let Some(snap) = vm.snapshots.get(name).cloned() else {
            return Err((vec![], format!("snapshot '{name}' does not exist")));
        };
        let mut log = Vec::new();
        if let Some(state) = snap.get("vmstate").filter(|s| !s.is_empty())
            && let Some(l) = self.storage.free_volume(state, node)
        {
            log.extend(l);
        }
        for (_, f) in disks(&snap) {
            if let Some(lv) = thin_lv(self.storage, &f) {
                log.push(format!(
                    "  Logical volume \"snap_{lv}_{name}\" successfully removed."
                ));
            }
        }
        let mut orphans = Vec::new();
        if let Some(vm) = self.guests.get_mut(&vmid) {
            vm.remove_snapshot(name);
            vm.config.remove("lock");
            let mut still: Vec<String> = volumes_of(&vm.config);
            still.extend(vm.pending.values().map(|v| drive_file(v).to_string()));
            for s in vm.snapshots.values() {
                still.extend(volumes_of(s));
            }
            for v in volumes_of(&snap) {
                if !still.contains(&v) {
                    orphans.push(v);
                }
            }
        }
        for v in orphans {
            if is_cloudinit(&v) {
                log.push(format!("found unused cloudinit disk '{v}', removing it"));
                self.storage.free_volume(&v, node);
            } else {
                register_unused(self.guests, self.storage, node, vmid, &v);
            }
        }
        Ok(log)
    }
}
