//! Container snapshots: no RAM state, volume snapshots per storage
//! (pve-container `API2/LXC/Snapshot.pm`, `LXC/Config.pm`;
//! pve-guest-common `AbstractConfig.pm` `snapshot_create`,
//! `snapshot_rollback`, `snapshot_delete`).

use std::collections::BTreeMap;

use super::schema::{is_indexed_key, is_mount_key, is_storage_volume, mp_volume};
use super::{Lxc, LxcOp, lxc_worker};
use crate::model::Result;
use crate::model::guest::snapshot::{
    SnapshotKind, Snapshots, check_name, feature_missing, thin_lv,
};
use crate::model::qemu::EffectResult;
use crate::model::tasks::Worker;

impl SnapshotKind for Lxc {
    fn reserved_snapshot_name(name: &str) -> Option<&str> {
        matches!(name, "current" | "vzdump").then_some(name)
    }

    fn not_copied(key: &str) -> bool {
        is_indexed_key(key, "unused")
    }

    fn snapshot_volumes(conf: &BTreeMap<String, String>) -> Vec<(String, String)> {
        mount_volumes(conf)
    }

    const LISTS_VMSTATE: bool = false;
    const LISTS_EMPTY_PARENT: bool = true;
}

/// The storage volumes of a config's mount points.
fn mount_volumes(conf: &BTreeMap<String, String>) -> Vec<(String, String)> {
    conf.iter()
        .filter(|(k, _)| is_mount_key(k))
        .filter_map(|(k, v)| {
            let vol = mp_volume(v)?;
            is_storage_volume(vol).then(|| (k.clone(), vol.to_string()))
        })
        .collect()
}

impl Snapshots<'_> {
    /// `POST .../snapshot`: the reserved names, then the prepare step of
    /// the `vzsnapshot` worker (its refusals end the task).
    ///
    /// # Errors
    /// A reserved name; a missing container.
    pub fn snapshot_ct(
        &mut self,
        node: &str,
        vmid: u32,
        name: &str,
        description: Option<String>,
        now: i64,
    ) -> Result<Worker> {
        check_name::<Lxc>(name)?;
        let ct = self.guests.ct(node, vmid)?;
        let worker = Worker::new("vzsnapshot", &vmid.to_string());
        if let Some(refusal) = ct.snapshot_refusal(name) {
            return Ok(worker.fail(refusal));
        }
        let vols = ct.snapshot_volumes();
        if feature_missing(self.storage, &vols, self.version.is_v9()) {
            return Ok(worker.fail("snapshot feature is not available"));
        }
        let lines: Vec<String> = vols
            .iter()
            .filter_map(|(_, v)| thin_lv(self.storage, v))
            .map(|lv| format!("  Logical volume \"snap_{lv}_{name}\" created."))
            .collect();
        let snap = ct.snapshot_copy();
        if let Some(ct) = self.guests.ct_by_id_mut(vmid) {
            ct.begin_snapshot(name, snap, description, now);
        }
        let mut w = lxc_worker(
            "vzsnapshot",
            vmid,
            LxcOp::Snapshot {
                name: name.to_string(),
            },
        );
        for l in lines {
            w = w.log(l);
        }
        Ok(w)
    }

    /// `__snapshot_commit`.
    pub(in crate::model) fn commit_ct_snapshot(
        &mut self,
        node: &str,
        vmid: u32,
        name: &str,
    ) -> EffectResult {
        let ct = self
            .guests
            .ct_mut(node, vmid)
            .map_err(|e| (vec![], e.to_string()))?;
        ct.commit_snapshot(name).map_err(|e| (vec![], e))?;
        Ok(vec![])
    }

    /// Undoes a snapshot whose task failed or was stopped.
    pub(in crate::model) fn abort_ct_snapshot(&mut self, vmid: u32, name: &str) {
        let Some(ct) = self.guests.ct_by_id_mut(vmid) else {
            return;
        };
        ct.abort_snapshot(name);
    }

    /// `PUT .../snapshot/{snapname}/config`: the description.
    ///
    /// # Errors
    /// A missing container or snapshot.
    pub fn update_ct_snapshot(
        &mut self,
        node: &str,
        vmid: u32,
        name: &str,
        description: Option<String>,
    ) -> Result<()> {
        let snap = self.guests.ct_mut(node, vmid)?.snapshot_mut(name)?;
        if let Some(d) = description {
            snap.insert("description".into(), d);
        }
        Ok(())
    }

    /// `POST .../snapshot/{snapname}/rollback`: the `vzrollback` worker
    /// (its refusals end the task).
    ///
    /// # Errors
    /// A missing container.
    pub fn rollback_ct(&self, node: &str, vmid: u32, name: &str, start: bool) -> Result<Worker> {
        let ct = self.guests.ct(node, vmid)?;
        let worker = Worker::new("vzrollback", &vmid.to_string());
        let Some(snap) = ct.snapshots.get(name) else {
            return Ok(worker.fail(format!("snapshot '{name}' does not exist")));
        };
        if let Err(e) = ct.check_lock() {
            return Ok(worker.fail(e.to_string()));
        }
        let mut w = lxc_worker(
            "vzrollback",
            vmid,
            LxcOp::Rollback {
                name: name.to_string(),
                start,
            },
        );
        for (_, v) in mount_volumes(snap) {
            if let Some(lv) = thin_lv(self.storage, &v) {
                w = w
                    .log(format!("  Logical volume \"{lv}\" successfully removed."))
                    .log(format!("  Logical volume \"{lv}\" created."));
            }
        }
        Ok(w)
    }

    /// `vzrollback`: stops a running container, makes the snapshot's
    /// config current, and starts it again with `start`.
    pub(in crate::model) fn finish_ct_rollback(
        &mut self,
        node: &str,
        vmid: u32,
        name: &str,
        start: bool,
        end_ms: i64,
    ) -> EffectResult {
        let ct = self
            .guests
            .ct_mut(node, vmid)
            .map_err(|e| (vec![], e.to_string()))?;
        ct.check_lock().map_err(|e| (vec![], e.to_string()))?;
        let Some(snap) = ct.snapshots.get(name).cloned() else {
            return Err((vec![], format!("snapshot '{name}' does not exist")));
        };
        if ct.running() {
            ct.set_stopped();
        }
        let current_vols: Vec<String> = mount_volumes(&ct.config)
            .into_iter()
            .map(|(_, v)| v)
            .collect();
        ct.config = ct.rollback_config(name, &snap);
        ct.pending.clear();
        ct.pending_delete.clear();
        let kept: Vec<String> = mount_volumes(&ct.config)
            .into_iter()
            .map(|(_, v)| v)
            .collect();
        for v in current_vols {
            if !kept.contains(&v) {
                ct.add_unused(&v);
            }
        }
        if start {
            ct.set_running(end_ms);
        }
        Ok(vec![])
    }

    /// `DELETE .../snapshot/{snapname}`: the `vzdelsnapshot` worker.
    ///
    /// # Errors
    /// A missing container.
    pub fn delete_ct_snapshot(
        &self,
        node: &str,
        vmid: u32,
        name: &str,
        force: bool,
    ) -> Result<Worker> {
        let ct = self.guests.ct(node, vmid)?;
        let worker = Worker::new("vzdelsnapshot", &vmid.to_string());
        let Some(snap) = ct.snapshots.get(name) else {
            return Ok(worker.fail(format!("snapshot '{name}' does not exist")));
        };
        if !force && let Err(e) = ct.check_lock() {
            return Ok(worker.fail(e.to_string()));
        }
        let mut w = lxc_worker(
            "vzdelsnapshot",
            vmid,
            LxcOp::DeleteSnapshot {
                name: name.to_string(),
                force,
            },
        );
        for (_, v) in mount_volumes(snap) {
            if let Some(lv) = thin_lv(self.storage, &v) {
                w = w.log(format!(
                    "  Logical volume \"snap_{lv}_{name}\" successfully removed."
                ));
            }
        }
        Ok(w)
    }

    /// `vzdelsnapshot`: removes the section and re-points the children.
    pub(in crate::model) fn finish_ct_delete_snapshot(
        &mut self,
        node: &str,
        vmid: u32,
        name: &str,
        force: bool,
    ) -> EffectResult {
        let ct = self
            .guests
            .ct_mut(node, vmid)
            .map_err(|e| (vec![], e.to_string()))?;
        if !force {
            ct.check_lock().map_err(|e| (vec![], e.to_string()))?;
        }
        if ct.remove_snapshot(name).is_none() {
            return Err((vec![], format!("snapshot '{name}' does not exist")));
        }
        Ok(vec![])
    }
}
