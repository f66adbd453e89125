//! Container templates and clones (pve-container `API2/LXC.pm`
//! `template`, `clone_vm`; `LXC.pm` `template_create`, `copy_volume`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::CtOps;
use super::schema::{canonical, is_indexed_key, is_mount_key, is_storage_volume, mp_volume};
use super::{Ct, LxcOp, lxc_worker};
use crate::model::qemu::EffectResult;
use crate::model::storage::ops::Feature;
use crate::model::tasks::Worker;
use crate::model::{Context, Error, Result};

/// What `POST .../clone` asks for.
#[derive(Debug, Clone, Default)]
pub struct CtCloneRequest {
    /// The new VMID.
    pub newid: u32,
    /// The node to move the clone to.
    pub target: Option<String>,
    /// The storage of full copies.
    pub storage: Option<String>,
    /// Full copy (default: unless the source is a template).
    pub full: Option<bool>,
    /// Clone from this snapshot.
    pub snapname: Option<String>,
    /// The new host name.
    pub hostname: Option<String>,
    /// The new description.
    pub description: Option<String>,
}

/// A `vzclone` task's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloneJob {
    /// The new VMID.
    pub newid: u32,
    /// Mount points to copy or link: key → (value, full copy).
    pub mounts: BTreeMap<String, (String, bool)>,
    /// Storage of the full copies.
    pub storage: Option<String>,
    /// The node the clone moves to.
    pub target: Option<String>,
}

impl CtOps<'_> {
    /// `POST .../template`: the checks and the `vztemplate` worker.
    ///
    /// # Errors
    /// A missing container; a lock; snapshots; already a template; running.
    pub fn template_ct(&self, node: &str, vmid: u32) -> Result<Worker> {
        let ct = self.guests.ct(node, vmid)?;
        ct.check_lock()?;
        if !ct.snapshots.is_empty() {
            return Err(Error::failed(
                "unable to create template, because CT contains snapshots",
            ));
        }
        if ct.template() {
            return Err(Error::failed("you can't convert a template to a template"));
        }
        if ct.running() {
            return Err(Error::conflict(
                "you can't convert a CT to template if the CT is running",
            ));
        }
        Ok(lxc_worker("vztemplate", vmid, LxcOp::Template))
    }

    /// `template_create`: base volumes and `template: 1`.
    pub(in crate::model) fn finish_ct_template(&mut self, node: &str, vmid: u32) -> EffectResult {
        let ct = self
            .guests
            .ct(node, vmid)
            .map_err(|e| (vec![], e.to_string()))?;
        if ct.template() {
            return Err((vec![], "you can't convert a template to a template".into()));
        }
        let mounts: Vec<(String, String)> = ct
            .config
            .iter()
            .filter(|(k, _)| is_mount_key(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut lines = Vec::new();
        let mut renamed = Vec::new();
        for (k, v) in mounts {
            let Some(vol) = mp_volume(&v).filter(|x| is_storage_volume(x)) else {
                continue;
            };
            if !self
                .storage
                .volume_has_feature(Feature::Template, vol, false, self.version.is_v9())
            {
                return Err((
                    lines,
                    format!("volume '{vol}' does not support template/clone"),
                ));
            }
            let (new, l) = self
                .storage
                .create_base_volume(vol, node)
                .map_err(|e| (vec![], e.to_string()))?;
            lines.extend(l);
            renamed.push((k, v.replacen(vol, &new, 1)));
        }
        if let Some(ct) = self.guests.ct_by_id_mut(vmid) {
            ct.config.extend(renamed);
            ct.config.insert("template".into(), "1".into());
        }
        Ok(lines)
    }

    /// `POST .../clone`: the checks PVE makes before forking; locks the
    /// source (`disk`), registers the clone with `lock: create`, and
    /// answers the `vzclone` worker.
    ///
    /// # Errors
    /// A taken new VMID; unknown nodes or storages; `storage` with a
    /// linked clone; a missing snapshot; a full clone of a running
    /// container without a snapshot; storages without linked clones; a
    /// clone to another node from local storage.
    pub fn clone_ct(
        &mut self,
        node: &str,
        vmid: u32,
        req: CtCloneRequest,
        rq: &mut Context,
    ) -> Result<Worker> {
        let version = self.version;
        let local = self.nodes.local().to_string();
        let target = req
            .target
            .clone()
            .filter(|t| t != &local && t != "localhost" && t != node);
        if let Some(t) = &target
            && !self.nodes.iter().any(|n| &n.name == t)
        {
            return Err(Error::failed(format!("no such cluster node '{t}'")));
        }
        if let Some(s) = &req.storage {
            self.storage.usable_storage(s, node)?;
            if let Some(t) = &target {
                let sc = self.storage.usable_storage(s, t)?;
                if !sc.shared {
                    return Err(Error::failed(format!(
                        "can't clone to non-shared storage '{s}'"
                    )));
                }
            }
        }
        let src = self.guests.ct(node, vmid)?;
        src.check_lock()?;
        if let Some((kind, n)) = self.guests.holder(req.newid) {
            return Err(Error::exists(format!(
                "{kind} {} already exists on node '{n}'",
                req.newid
            )));
        }
        let running = src.running();
        let full = req.full.unwrap_or(!src.template());
        if req.storage.is_some() && !full {
            return Err(Error::failed(
                "parameter 'storage' not allowed for linked clones",
            ));
        }
        let conf = match &req.snapname {
            Some(s) => src
                .snapshots
                .get(s)
                .cloned()
                .ok_or_else(|| Error::failed(format!("snapshot '{s}' does not exist")))?,
            None => src.config.clone(),
        };
        let mut newconf = BTreeMap::new();
        let mut mounts = BTreeMap::new();
        let mut sharedvm = true;
        for (opt, value) in &conf {
            if is_indexed_key(opt, "unused") {
                continue;
            }
            if is_mount_key(opt) {
                let vol = mp_volume(value).unwrap_or_default();
                if !is_storage_volume(vol) {
                    return Err(Error::failed(format!(
                        "unable to clone mountpoint '{opt}' (type bind)"
                    )));
                }
                let sid = req
                    .storage
                    .clone()
                    .unwrap_or_else(|| vol.split(':').next().unwrap_or_default().to_string());
                let s = self.storage.existing(&sid)?;
                if !s.shared {
                    sharedvm = false;
                }
                if full {
                    if running && req.snapname.is_none() {
                        return Err(Error::failed(
                            "Full clone of a running container is only possible from a snapshot",
                        ));
                    }
                } else if !self.storage.volume_has_feature(
                    Feature::Clone,
                    vol,
                    req.snapname.is_some(),
                    self.version.is_v9(),
                ) {
                    return Err(Error::failed(format!(
                        "Linked clone feature for '{vol}' is not available"
                    )));
                }
                mounts.insert(opt.clone(), (value.clone(), full));
            } else if is_indexed_key(opt, "net") {
                let without: Vec<&str> = value
                    .split(',')
                    .filter(|p| !p.starts_with("hwaddr="))
                    .collect();
                newconf.insert(
                    opt.clone(),
                    canonical(version, opt, &without.join(","), Some(rq))?,
                );
            } else {
                newconf.insert(opt.clone(), value.clone());
            }
        }
        if let Some(t) = &target
            && !sharedvm
        {
            return Err(Error::failed(format!(
                "can't clone CT to node '{t}' (CT uses local storage)"
            )));
        }
        for k in [
            "snapshots",
            "parent",
            "snaptime",
            "snapstate",
            "template",
            "lock",
        ] {
            newconf.remove(k);
        }
        newconf.insert("lock".into(), "create".into());
        if let Some(h) = req.hostname.filter(|h| !h.is_empty()) {
            newconf.insert("hostname".into(), h);
        }
        if let Some(d) = req.description.filter(|d| !d.is_empty()) {
            newconf.insert("description".into(), d);
        }
        if let Some(src) = self.guests.ct_by_id_mut(vmid) {
            src.config.insert("lock".into(), "disk".into());
        }
        self.guests.insert_ct(Ct::new(req.newid, node, newconf));
        self.firewall.clone_guest(vmid, req.newid);
        Ok(lxc_worker(
            "vzclone",
            vmid,
            LxcOp::Clone(Box::new(CloneJob {
                newid: req.newid,
                mounts,
                storage: req.storage,
                target,
            })),
        ))
    }

    /// `vzclone`: copies or links each mount point, unlocks both.
    pub(in crate::model) fn finish_ct_clone(
        &mut self,
        vmid: u32,
        job: CloneJob,
        now: i64,
    ) -> EffectResult {
        let version = self.version;
        let newid = job.newid;
        let Some(node) = self.guests.ct_by_id(vmid).map(|c| c.node.clone()) else {
            return Err((vec![], format!("CT {vmid} does not exist")));
        };
        let mut lines = vec![format!(
            "creating a clone of container {vmid} with ID {newid}"
        )];
        let mut made = Vec::new();
        let mut result = Ok(());
        for (opt, (value, full)) in &job.mounts {
            let vol = mp_volume(value).unwrap_or_default().to_string();
            let outcome = if *full {
                lines.push(format!("create full clone of mountpoint {opt} ({vol})"));
                let size = self.storage.volume(&vol, &node).map_or_else(
                    || super::schema::mp_size(value).unwrap_or(4 << 30),
                    |v| v.size,
                );
                let sid = job
                    .storage
                    .clone()
                    .unwrap_or_else(|| vol.split(':').next().unwrap_or_default().to_string());
                self.alloc_ct_volume(&sid, &node, newid, size, now)
                    .map(|(v, l)| {
                        lines.extend(l);
                        (v, size)
                    })
            } else {
                lines.push(format!("create linked clone of mount point {opt} ({vol})"));
                let size = self.storage.volume(&vol, &node).map_or(0, |v| v.size);
                self.storage
                    .clone_volume_linked(&vol, &node, newid, now)
                    .map(|(v, l)| {
                        lines.extend(l);
                        (v, size)
                    })
            };
            match outcome {
                Ok((newvol, size)) => {
                    made.push(newvol.clone());
                    let printed = super::schema::mp_with(version, opt, value, &newvol, size)
                        .unwrap_or_else(|_| value.replacen(&vol, &newvol, 1));
                    if let Some(c) = self.guests.ct_by_id_mut(newid) {
                        c.config.insert(opt.clone(), printed);
                    }
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        if let Some(src) = self.guests.ct_by_id_mut(vmid)
            && src.lock() == Some("disk")
        {
            src.config.remove("lock");
        }
        if let Err(e) = result {
            for v in made {
                self.storage.free_volume(&v, &node);
            }
            self.guests.remove_ct(newid);
            self.firewall.remove_guest(newid);
            return Err((lines, format!("clone failed: {e}")));
        }
        if let Some(c) = self.guests.ct_by_id_mut(newid) {
            c.config.remove("lock");
            if let Some(t) = job.target {
                for v in &made {
                    self.storage_transfer(v, &node, &t);
                }
                if let Some(c) = self.guests.ct_by_id_mut(newid) {
                    c.node = t;
                }
            }
        }
        Ok(lines)
    }

    /// Undoes a clone whose task failed or was stopped.
    pub(in crate::model) fn abort_ct_clone(&mut self, vmid: u32, job: &CloneJob) {
        if let Some(src) = self.guests.ct_by_id_mut(vmid)
            && src.lock() == Some("disk")
        {
            src.config.remove("lock");
        }
        if self
            .guests
            .ct_by_id(job.newid)
            .is_some_and(|c| c.lock() == Some("create"))
        {
            self.guests.remove_ct(job.newid);
            self.firewall.remove_guest(job.newid);
        }
    }

    /// A volume seen from another node afterwards (shared storages need
    /// nothing; local volumes move with `transfer_volume`).
    fn storage_transfer(&mut self, volid: &str, from: &str, to: &str) {
        if !self.storage.volume_shared(volid) {
            self.storage.transfer_volume(volid, from, to);
        }
    }
}
