//! Container snapshots: no RAM state, volume snapshots per storage
//! (pve-container `API2/LXC/Snapshot.pm`, `LXC/Config.pm`;
//! pve-guest-common `AbstractConfig.pm` `snapshot_create`,
//! `snapshot_rollback`, `snapshot_delete`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::config::{add_unused, typed_map};
use super::schema::{is_indexed_key, is_mount_key, is_storage_volume, mp_volume};
use super::{LxcOp, lxc_worker};
use crate::model::cluster::Cluster;
use crate::model::qemu::EffectResult;
use crate::model::storage::ops::Feature;
use crate::model::tasks::Worker;
use crate::model::{Error, Result};

/// Keys `__snapshot_copy_config` leaves out.
fn not_copied(k: &str) -> bool {
    matches!(
        k,
        "snapstate" | "snaptime" | "vmstate" | "lock" | "digest" | "description"
    ) || is_indexed_key(k, "unused")
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

fn lv_name(volid: &str) -> &str {
    let name = volid.split_once(':').map_or(volid, |(_, n)| n);
    name.rsplit('/').next().unwrap_or(name)
}

impl Cluster {
    fn storage_kind(&self, volid: &str) -> Option<String> {
        let (sid, _) = volid.split_once(':')?;
        self.storage.find(sid).map(|s| s.kind.clone())
    }

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
        if name == "current" || name == "vzdump" {
            return Err(Error::failed(format!(
                "unable to use snapshot name '{name}' (reserved name)"
            )));
        }
        let ct = self.ct(node, vmid)?;
        let worker = Worker::new("vzsnapshot", &vmid.to_string());
        if ct.template() {
            return Ok(worker.fail("you can't take a snapshot if it's a template"));
        }
        if let Err(e) = ct.check_lock() {
            return Ok(worker.fail(e.to_string()));
        }
        if ct.snapshots.contains_key(name) {
            return Ok(worker.fail(format!("snapshot name '{name}' already used")));
        }
        let conf = ct.config.clone();
        let vols = mount_volumes(&conf);
        if vols.iter().any(|(_, v)| {
            !self
                .storage
                .volume_has_feature(Feature::Snapshot, v, false, self.version.is_v9())
        }) {
            return Ok(worker.fail("snapshot feature is not available"));
        }
        let mut lines = Vec::new();
        for (_, v) in &vols {
            if self.storage_kind(v).as_deref() == Some("lvmthin") {
                lines.push(format!(
                    "  Logical volume \"snap_{}_{name}\" created.",
                    lv_name(v)
                ));
            }
        }
        let mut snap: BTreeMap<String, String> = conf
            .iter()
            .filter(|(k, _)| !not_copied(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        snap.insert("snapstate".into(), "prepare".into());
        snap.insert("snaptime".into(), now.to_string());
        if let Some(d) = description.filter(|d| !d.is_empty()) {
            snap.insert("description".into(), d);
        }
        if let Some(ct) = self.guests.ct_mut(vmid) {
            ct.config.insert("lock".into(), "snapshot".into());
            ct.snapshots.insert(name.to_string(), snap);
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
    pub(super) fn commit_ct_snapshot(&mut self, node: &str, vmid: u32, name: &str) -> EffectResult {
        let ct = self
            .ct_mut(node, vmid)
            .map_err(|e| (vec![], e.to_string()))?;
        crate::model::guests::commit_snapshot(&mut ct.config, &mut ct.snapshots, name)
            .map_err(|e| (vec![], e.to_string()))?;
        Ok(vec![])
    }

    /// Undoes a snapshot whose task failed or was stopped.
    pub(super) fn abort_ct_snapshot(&mut self, vmid: u32, name: &str) {
        let Some(ct) = self.guests.ct_mut(vmid) else {
            return;
        };
        crate::model::guests::abort_snapshot(&mut ct.config, &mut ct.snapshots, name);
    }

    /// `GET .../snapshot`: every snapshot, then `current`.
    ///
    /// # Errors
    /// A missing container.
    pub fn ct_snapshot_list(&self, node: &str, vmid: u32) -> Result<Value> {
        let ct = self.ct(node, vmid)?;
        let mut out = Vec::new();
        for (name, s) in &ct.snapshots {
            let mut item = json!({
                "name": name,
                "snaptime": s.get("snaptime").and_then(|t| t.parse::<i64>().ok()).unwrap_or(0),
                "description": s.get("description").cloned().unwrap_or_default(),
            });
            if let Some(p) = s.get("parent") {
                item["parent"] = json!(p);
            }
            if let Some(st) = s.get("snapstate") {
                item["snapstate"] = json!(st);
            }
            out.push(item);
        }
        let mut current = json!({
            "name": "current",
            "digest": ct.digest(),
            "running": u8::from(ct.running()),
            "description": "You are here!",
        });
        if let Some(p) = ct.config.get("parent") {
            current["parent"] = json!(p);
        }
        out.push(current);
        Ok(Value::Array(out))
    }

    /// `GET .../snapshot/{snapname}/config` (and `GET config?snapshot=`).
    ///
    /// # Errors
    /// A missing container or snapshot.
    pub fn ct_snapshot_config(&self, node: &str, vmid: u32, name: &str) -> Result<Value> {
        let ct = self.ct(node, vmid)?;
        let Some(conf) = ct.snapshots.get(name) else {
            return Err(Error::not_found(format!(
                "snapshot '{name}' does not exist"
            )));
        };
        Ok(typed_map(self.version, conf, &ct.digest()))
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
        let ct = self.ct_mut(node, vmid)?;
        let Some(snap) = ct.snapshots.get_mut(name) else {
            return Err(Error::not_found(format!(
                "snapshot '{name}' does not exist"
            )));
        };
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
        let ct = self.ct(node, vmid)?;
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
            if self.storage_kind(&v).as_deref() == Some("lvmthin") {
                let lv = lv_name(&v);
                w = w
                    .log(format!("  Logical volume \"{lv}\" successfully removed."))
                    .log(format!("  Logical volume \"{lv}\" created."));
            }
        }
        Ok(w)
    }

    /// `vzrollback`: stops a running container, makes the snapshot's
    /// config current, and starts it again with `start`.
    pub(super) fn finish_ct_rollback(
        &mut self,
        node: &str,
        vmid: u32,
        name: &str,
        start: bool,
        end_ms: i64,
    ) -> EffectResult {
        let ct = self
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
        let mut conf: BTreeMap<String, String> = snap
            .into_iter()
            .filter(|(k, _)| !matches!(k.as_str(), "snapstate" | "snaptime" | "description"))
            .collect();
        if let Some(d) = ct.config.get("description") {
            conf.insert("description".into(), d.clone());
        }
        for (k, v) in &ct.config {
            if is_indexed_key(k, "unused") {
                conf.insert(k.clone(), v.clone());
            }
        }
        conf.insert("parent".into(), name.to_string());
        ct.config = conf;
        ct.pending.clear();
        ct.pending_delete.clear();
        let kept: Vec<String> = mount_volumes(&ct.config)
            .into_iter()
            .map(|(_, v)| v)
            .collect();
        for v in current_vols {
            if !kept.contains(&v) {
                add_unused(ct, &v);
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
        let ct = self.ct(node, vmid)?;
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
            if self.storage_kind(&v).as_deref() == Some("lvmthin") {
                w = w.log(format!(
                    "  Logical volume \"snap_{}_{name}\" successfully removed.",
                    lv_name(&v)
                ));
            }
        }
        Ok(w)
    }

    /// `vzdelsnapshot`: removes the section and re-points the children.
    pub(super) fn finish_ct_delete_snapshot(
        &mut self,
        node: &str,
        vmid: u32,
        name: &str,
        force: bool,
    ) -> EffectResult {
        let ct = self
            .ct_mut(node, vmid)
            .map_err(|e| (vec![], e.to_string()))?;
        if !force {
            ct.check_lock().map_err(|e| (vec![], e.to_string()))?;
        }
        let Some(snap) = ct.snapshots.remove(name) else {
            return Err((vec![], format!("snapshot '{name}' does not exist")));
        };
        let parent = snap.get("parent").cloned();
        let repoint = |conf: &mut BTreeMap<String, String>| {
            if conf.get("parent").is_some_and(|p| p == name) {
                match &parent {
                    Some(p) => conf.insert("parent".into(), p.clone()),
                    None => conf.remove("parent"),
                };
            }
        };
        repoint(&mut ct.config);
        for s in ct.snapshots.values_mut() {
            repoint(s);
        }
        Ok(vec![])
    }
}
