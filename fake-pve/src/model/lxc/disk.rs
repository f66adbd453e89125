//! A container's volumes: resizing a mount point and moving it to another
//! storage (pve-container `API2/LXC.pm` `resize_vm`, `move_volume`;
//! `LXC.pm` `copy_volume`).

use serde::{Deserialize, Serialize};

use super::CtOps;
use super::schema::{is_indexed_key, is_mount_key, is_storage_volume, mp_volume, mp_with};
use super::{Lxc, LxcOp, lxc_worker};
use crate::model::guest::volumes::{MODIFIED, VolumeKeys};
use crate::model::qemu::EffectResult;
use crate::model::size::parse_size;
use crate::model::storage::parse_volid;
use crate::model::tasks::Worker;
use crate::model::{Error, Result};

/// What `POST .../move_volume` asks for.
#[derive(Debug, Clone, Default)]
pub struct CtMoveRequest {
    /// `rootfs`, `mpN` or `unusedN`.
    pub volume: String,
    /// The target storage.
    pub storage: String,
    /// Free the source instead of keeping it as `unusedN`.
    pub delete: bool,
    /// The expected digest.
    pub digest: Option<String>,
}

/// A `move_volume` task's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveJob {
    /// The mount point.
    pub key: String,
    /// The target storage.
    pub storage: String,
    /// Free the source.
    pub delete: bool,
}

impl VolumeKeys for Lxc {
    fn volume_of<'v>(key: &str, value: &'v str) -> Option<&'v str> {
        is_mount_key(key).then(|| mp_volume(value)).flatten()
    }
}

impl CtOps<'_> {
    /// `PUT .../resize`: the early checks, then the `resize` worker.
    ///
    /// # Errors
    /// A missing container; a lock; a changed digest; a mount point that
    /// is not a storage volume; shrinking; the same size.
    pub fn resize_ct(
        &self,
        node: &str,
        vmid: u32,
        disk: &str,
        size: &str,
        digest: Option<&str>,
    ) -> Result<Worker> {
        let (ext, sizestr) = match size.strip_prefix('+') {
            Some(s) => (true, s),
            None => (false, size),
        };
        let Some(request) = parse_size(sizestr) else {
            return Err(Error::failed("invalid size string"));
        };
        let ct = self.guests.ct(node, vmid)?;
        ct.check_lock()?;
        ct.check_digest(digest)?;
        let value = ct.config.get(disk).cloned().unwrap_or_default();
        let volid = mp_volume(&value).unwrap_or_default().to_string();
        if !is_storage_volume(&volid) {
            return Err(Error::failed(format!(
                "unable to parse volume ID '{volid}'"
            )));
        }
        let owner = volid
            .rsplit(['/', ':'])
            .next()
            .and_then(|n| n.split('-').nth(1))
            .and_then(|n| n.parse::<u32>().ok());
        if let Some(o) = owner
            && o != vmid
        {
            return Err(Error::failed(format!(
                "can't resize mount point owned by another container ({o})"
            )));
        }
        let Some(cur) = self.storage.volume(&volid, node).map(|v| v.size) else {
            return Err(Error::failed(format!(
                "Could not determine current size of volume '{volid}'"
            )));
        };
        let new = if ext { cur + request } else { request };
        if new < cur {
            return Err(Error::failed("unable to shrink disk size"));
        }
        if new == cur {
            return Err(Error::failed("disk is already at specified size"));
        }
        Ok(lxc_worker(
            "resize",
            vmid,
            LxcOp::Resize {
                disk: disk.to_string(),
                size: new,
            },
        ))
    }

    /// `resize`: the volume grows, `size=` follows, the file system is
    /// grown (`resize2fs`).
    pub(in crate::model) fn finish_ct_resize(
        &mut self,
        node: &str,
        vmid: u32,
        disk: &str,
        size: u64,
    ) -> EffectResult {
        let version = self.version;
        let fail = |e: Error| (Vec::new(), e.to_string());
        let ct = self.guests.ct(node, vmid).map_err(fail)?;
        ct.check_lock().map_err(fail)?;
        let running = ct.running();
        let value = ct.config.get(disk).cloned().unwrap_or_default();
        let volid = mp_volume(&value).unwrap_or_default().to_string();
        let mut lines = self
            .storage
            .resize_volume(&volid, node, size, false)
            .map_err(fail)?;
        let raw = self
            .storage
            .volume(&volid, node)
            .is_some_and(|v| v.format == "raw");
        let printed = mp_with(version, disk, &value, &volid, size).map_err(fail)?;
        if let Some(ct) = self.guests.ct_by_id_mut(vmid) {
            ct.config.insert(disk.to_string(), printed);
        }
        if raw {
            let dev = self.ct_volume_path(&volid);
            let blocks = size / 4096;
            if !running {
                lines.push("e2fsck 1.47.2 (1-Jan-2025)".into());
                lines.push(format!("{dev}: clean"));
            }
            lines.push("resize2fs 1.47.2 (1-Jan-2025)".into());
            lines.push(format!(
                "Resizing the filesystem on {dev} to {blocks} (4k) blocks."
            ));
            lines.push(format!(
                "The filesystem on {dev} is now {blocks} (4k) blocks long."
            ));
        }
        Ok(lines)
    }

    /// The device or file of a volume as the storage tools name it.
    fn ct_volume_path(&self, volid: &str) -> String {
        let Some((sid, name)) = parse_volid(volid) else {
            return volid.to_string();
        };
        let Some(s) = self.storage.find(sid) else {
            return volid.to_string();
        };
        match s.kind.as_str() {
            "lvm" | "lvmthin" => {
                let vg = s.options.get("vgname").map_or("pve", String::as_str);
                format!("/dev/{vg}/{name}")
            }
            k if crate::model::storage::path_based(k) => {
                let path = s.options.get("path").map_or("/var/lib/vz", String::as_str);
                format!("{path}/images/{name}")
            }
            _ => format!("/dev/{name}"),
        }
    }

    /// `POST .../move_volume` to a storage: the checks, `lock: disk`, and
    /// the `move_volume` worker.
    ///
    /// # Errors
    /// A missing container or storage; a lock; a running container; an
    /// unused volume; snapshots with `delete`; a changed digest.
    pub fn move_ct_volume(&mut self, node: &str, vmid: u32, req: CtMoveRequest) -> Result<Worker> {
        let s = self.storage.usable_storage(&req.storage, node)?;
        if !s.content.iter().any(|c| c == "rootdir") {
            return Err(Error::failed(format!(
                "storage '{}' does not allow content type 'rootdir' (Container)",
                req.storage
            )));
        }
        let ct = self.guests.ct(node, vmid)?;
        ct.check_lock()?;
        if ct.running() {
            return Err(Error::conflict(
                "cannot move volumes of a running container",
            ));
        }
        if is_indexed_key(&req.volume, "unused") {
            return Err(Error::failed(format!(
                "cannot move volume '{}', only configured volumes can be moved to another storage",
                req.volume
            )));
        }
        let value = ct.config.get(&req.volume).cloned().unwrap_or_default();
        let old = mp_volume(&value).unwrap_or_default().to_string();
        if !is_storage_volume(&old) {
            return Err(Error::failed(format!("unable to parse volume ID '{old}'")));
        }
        if req.delete && ct.volume_in_snapshots(&old) {
            return Err(Error::failed(
                "you can't move a volume with snapshots and delete the source",
            ));
        }
        ct.check_digest(req.digest.as_deref())?;
        if let Some(ct) = self.guests.ct_by_id_mut(vmid) {
            ct.config.insert("lock".into(), "disk".into());
        }
        Ok(lxc_worker(
            "move_volume",
            vmid,
            LxcOp::MoveVolume(Box::new(MoveJob {
                key: req.volume,
                storage: req.storage,
                delete: req.delete,
            })),
        ))
    }

    /// `move_volume`: copy to the target storage, re-point the mount
    /// point, keep or free the source; the `disk` lock goes in any case.
    pub(in crate::model) fn finish_ct_move(
        &mut self,
        node: &str,
        vmid: u32,
        job: &MoveJob,
        now: i64,
    ) -> EffectResult {
        let version = self.version;
        let result = (|| -> Result<Vec<String>> {
            let ct = self.guests.ct(node, vmid)?;
            let template = ct.template();
            let value = ct.config.get(&job.key).cloned().unwrap_or_default();
            let old = mp_volume(&value).unwrap_or_default().to_string();
            let size = self.storage.volume(&old, node).map_or(4 << 30, |v| v.size);
            let (mut new, mut lines) = self.alloc_ct_volume(&job.storage, node, vmid, size, now)?;
            if template {
                let (base, l) = self.storage.create_base_volume(&new, node)?;
                lines.extend(l);
                new = base;
            }
            let printed = mp_with(version, &job.key, &value, &new, size)?;
            if let Some(ct) = self.guests.ct_by_id_mut(vmid) {
                ct.config.insert(job.key.clone(), printed);
                if !job.delete {
                    ct.add_unused(&old);
                }
            }
            if job.delete
                && let Some(l) = self.storage.free_volume(&old, node)
            {
                lines.extend(l);
            }
            Ok(lines)
        })();
        if let Some(ct) = self.guests.ct_by_id_mut(vmid)
            && ct.lock() == Some("disk")
        {
            ct.config.remove("lock");
        }
        result.map_err(|e| (Vec::new(), e.to_string()))
    }
}

/// What `POST .../move_volume` with `target-vmid` asks for.
#[derive(Debug, Clone, Default)]
pub struct CtReassignRequest {
    /// `mpN` or `unusedN`.
    pub volume: String,
    /// The container that takes the volume.
    pub target_vmid: u32,
    /// Its key there (`target-volume`, default the same key).
    pub target_volume: Option<String>,
    /// The source's expected digest.
    pub digest: Option<String>,
    /// The target's expected digest.
    pub target_digest: Option<String>,
}

/// A reassigning `move_volume` task's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CtReassignJob {
    /// The node of both containers.
    pub node: String,
    /// The source key.
    pub key: String,
    /// The target container.
    pub target_vmid: u32,
    /// The target key.
    pub target_key: String,
    /// The source's expected digest.
    pub digest: Option<String>,
    /// The target's expected digest.
    pub target_digest: Option<String>,
}

impl CtOps<'_> {
    /// `$load_and_check_reassign_configs`: answers the source volume.
    fn check_ct_reassign(&self, vmid: u32, job: &CtReassignJob) -> Result<String> {
        let t = job.target_vmid;
        if job.key == "rootfs" || job.target_key == "rootfs" {
            return Err(Error::failed("Cannot move to/from 'rootfs'"));
        }
        if is_indexed_key(&job.key, "unused") && !is_indexed_key(&job.target_key, "unused") {
            return Err(Error::failed(
                "Moving an unused volume to a used one is not possible",
            ));
        }
        let Some((_, source_node)) = self.guests.holder(vmid) else {
            return Err(Error::failed(format!("could not find CT {vmid}")));
        };
        let Some((_, target_node)) = self.guests.holder(t) else {
            return Err(Error::failed(format!("could not find CT {t}")));
        };
        if source_node != target_node {
            return Err(Error::failed(format!(
                "Both containers need to be on the same node ({source_node} != {target_node})"
            )));
        }
        let src = self.guests.ct(&job.node, vmid)?;
        src.check_lock()?;
        let dst = self.guests.ct(&job.node, t)?;
        dst.check_lock()?;
        if src.template() || dst.template() {
            return Err(Error::failed("Can't move volumes from or to template CT"));
        }
        if src.check_digest(job.digest.as_deref()).is_err() {
            return Err(Error::failed(format!("Container {vmid}: {MODIFIED}")));
        }
        if dst.check_digest(job.target_digest.as_deref()).is_err() {
            return Err(Error::failed(format!("Container {t}: {MODIFIED}")));
        }
        let Some(value) = src.config.get(&job.key) else {
            return Err(Error::failed(format!(
                "volume '{}' for container '{vmid}' does not exist",
                job.key
            )));
        };
        if dst.config.contains_key(&job.target_key) {
            return Err(Error::failed(format!(
                "Target volume key '{}' is already in use for container '{t}'",
                job.target_key
            )));
        }
        let volid = mp_volume(value).unwrap_or_default().to_string();
        if volid.is_empty() {
            return Err(Error::failed(format!(
                "Volume '{}' has no associated image",
                job.key
            )));
        }
        if src.volume_in_snapshots(&volid) {
            return Err(Error::failed(
                "Cannot move volume used by a snapshot to another container",
            ));
        }
        if !is_storage_volume(&volid)
            || !self.storage.volume_has_feature(
                crate::model::storage::ops::Feature::Rename,
                &volid,
                false,
                self.version.is_v9(),
            )
        {
            return Err(Error::failed(
                "Storage does not support moving of this disk to another container",
            ));
        }
        if src.running() && !is_indexed_key(&job.key, "unused") {
            return Err(Error::failed(
                "Cannot move in-use volume while the source CT is running - detach or shutdown first",
            ));
        }
        Ok(volid)
    }

    /// `POST .../move_volume` with `target-vmid`: the checks, then the
    /// `move_volume` worker named `<vmid>-<key>><target>-<key>`.
    ///
    /// # Errors
    /// What `$load_and_check_reassign_configs` refuses.
    pub fn reassign_ct_volume(
        &self,
        node: &str,
        vmid: u32,
        req: CtReassignRequest,
    ) -> Result<Worker> {
        let target_key = req.target_volume.unwrap_or_else(|| req.volume.clone());
        let job = CtReassignJob {
            node: node.to_string(),
            key: req.volume,
            target_vmid: req.target_vmid,
            target_key,
            digest: req.digest,
            target_digest: req.target_digest,
        };
        self.check_ct_reassign(vmid, &job)?;
        let id = format!("{vmid}-{}>{}-{}", job.key, job.target_vmid, job.target_key);
        Ok(
            Worker::new("move_volume", &id).effect(crate::model::tasks::TaskEffect::Lxc {
                vmid,
                op: LxcOp::Reassign(Box::new(job)),
            }),
        )
    }

    /// The storage a reassignable volume is on (for the permission check).
    ///
    /// # Errors
    /// What the checks refuse.
    pub fn ct_reassign_storage(
        &self,
        node: &str,
        vmid: u32,
        req: &CtReassignRequest,
    ) -> Result<String> {
        let job = CtReassignJob {
            node: node.to_string(),
            key: req.volume.clone(),
            target_vmid: req.target_vmid,
            target_key: req
                .target_volume
                .clone()
                .unwrap_or_else(|| req.volume.clone()),
            digest: req.digest.clone(),
            target_digest: req.target_digest.clone(),
        };
        let volid = self.check_ct_reassign(vmid, &job)?;
        Ok(volid.split(':').next().unwrap_or_default().to_string())
    }

    /// The reassigning `move_volume` task: the volume renamed for the
    /// target, gone from the source's config, in the target's.
    pub(in crate::model) fn finish_ct_reassign(
        &mut self,
        vmid: u32,
        job: &CtReassignJob,
    ) -> EffectResult {
        let fail = |e: Error| (Vec::new(), e.to_string());
        let volid = self.check_ct_reassign(vmid, job).map_err(fail)?;
        let t = job.target_vmid;
        let node = job.node.clone();
        let mut log = vec![format!(
            "moving volume '{}' from container '{vmid}' to '{t}'",
            job.key
        )];
        let (new, lines) = self
            .storage
            .reassign_volume(&volid, &node, t)
            .map_err(|e| (log.clone(), e.to_string()))?;
        log.extend(lines);
        let value = self
            .guests
            .ct_by_id(vmid)
            .and_then(|c| c.config.get(&job.key).cloned())
            .unwrap_or_default();
        if let Some(ct) = self.guests.ct_by_id_mut(vmid) {
            ct.config.remove(&job.key);
        }
        log.push(format!(
            "removing volume '{}' from container '{vmid}' config",
            job.key
        ));
        let printed = if is_indexed_key(&job.target_key, "unused") {
            new
        } else {
            let size = self.storage.volume(&new, &node).map_or(0, |v| v.size);
            mp_with(self.version, &job.target_key, &value, &new, size).map_err(fail)?
        };
        if let Some(ct) = self.guests.ct_by_id_mut(t) {
            ct.config.insert(job.target_key.clone(), printed);
        }
        log.push(format!(
            "target container '{t}' updated with '{}'",
            job.target_key
        ));
        Ok(log)
    }
}
