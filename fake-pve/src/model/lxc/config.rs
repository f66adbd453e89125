//! Config updates of a container and their pending changes (pve-container
//! `API2/LXC/Config.pm` `update_vm`, `LXC/Config.pm` `update_pct_config`,
//! `vmconfig_hotplug_pending`, `vmconfig_apply_pending`), and the config
//! views.

use std::collections::BTreeMap;

use super::CtOps;
use super::schema::{
    self, canonical, is_indexed_key, is_mount_key, is_storage_volume, mp_volume, new_disk,
    option_exists,
};
use crate::model::storage::VolumeKind;
use crate::model::{Context, Error, Result};

/// A config update as PUT config asks for it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CtUpdate {
    /// New values by key, as given.
    pub set: BTreeMap<String, String>,
    /// Keys to delete.
    pub delete: Vec<String>,
    /// Keys whose pending change to drop.
    pub revert: Vec<String>,
    /// The expected digest.
    pub digest: Option<String>,
}

/// Options a running container takes at once (`$LXC_FASTPLUG_OPTIONS`).
fn fastplug(key: &str) -> bool {
    matches!(
        key,
        "description"
            | "onboot"
            | "startup"
            | "protection"
            | "hostname"
            | "hookscript"
            | "cores"
            | "tags"
            | "lock"
    )
}

impl CtOps<'_> {
    /// `PUT /nodes/{node}/lxc/{vmid}/config`: checks, writes the changes as
    /// pending, then applies them (stopped) or hot-plugs what a running
    /// container can take, as `update_pct_config` does.
    ///
    /// # Errors
    /// A missing container; `CT is locked`; a changed digest; unknown or
    /// conflicting `delete`/`revert` options; required or read-only
    /// options; protection; storages without `rootdir`.
    pub fn update_ct_config(
        &mut self,
        node: &str,
        vmid: u32,
        u: &CtUpdate,
        rq: &mut Context,
    ) -> Result<()> {
        let version = self.version;
        let now = rq.now();
        if u.set.is_empty() && u.delete.is_empty() && u.revert.is_empty() {
            return Err(Error::failed("no options specified"));
        }
        let mut ct = self.guests.ct(node, vmid)?.clone();
        ct.check_lock()?;
        ct.check_digest(u.digest.as_deref())?;
        for opt in &u.revert {
            if !option_exists(version, opt) {
                return Err(Error::invalid("revert", format!("unknown option '{opt}'")));
            }
            if u.set.contains_key(opt) {
                return Err(Error::invalid(
                    "revert",
                    format!("you can't use '-{opt}' and '-revert {opt}' at the same time"),
                ));
            }
        }
        for opt in &u.delete {
            if !option_exists(version, opt) {
                return Err(Error::invalid("delete", format!("unknown option '{opt}'")));
            }
            if u.set.contains_key(opt) {
                return Err(Error::invalid(
                    "delete",
                    format!("you can't use '-{opt}' and -delete {opt}' at the same time"),
                ));
            }
            if u.revert.contains(opt) {
                return Err(Error::invalid(
                    "delete",
                    format!("you can't use '-delete {opt}' and '-revert {opt}' at the same time"),
                ));
            }
        }
        for opt in &u.revert {
            ct.pending.remove(opt);
            ct.pending_delete.retain(|k| k != opt);
        }
        for opt in &u.delete {
            if !ct.config.contains_key(opt) && !ct.pending.contains_key(opt) {
                continue;
            }
            if matches!(opt.as_str(), "memory" | "rootfs" | "ostype") {
                return Err(Error::failed(format!(
                    "unable to delete required option '{opt}'"
                )));
            }
            if is_indexed_key(opt, "unused") || is_indexed_key(opt, "mp") {
                ct.check_protection(&format!("can't remove CT {vmid} drive '{opt}'"))?;
            }
            if opt == "unprivileged" {
                return Err(Error::failed(format!(
                    "unable to delete read-only option: '{opt}'"
                )));
            }
            ct.pending.remove(opt);
            if !ct.pending_delete.contains(opt) {
                ct.pending_delete.push(opt.clone());
            }
        }
        for (opt, value) in &u.set {
            let mut value = value.clone();
            if is_mount_key(opt) {
                ct.check_protection(&format!("can't update CT {vmid} drive '{opt}'"))?;
                let vol = mp_volume(&value).unwrap_or_default();
                if is_storage_volume(vol) {
                    let sid = vol.split(':').next().unwrap_or_default();
                    let s = self.storage.existing(sid)?;
                    if !s.content.iter().any(|c| c == "rootdir") {
                        return Err(Error::failed(format!(
                            "storage '{sid}' does not allow content type 'rootdir' (Container)"
                        )));
                    }
                }
                value = canonical(version, opt, &value, None)?;
            } else if opt == "unprivileged" {
                return Err(Error::failed(format!(
                    "unable to modify read-only option: '{opt}'"
                )));
            } else {
                value = canonical(version, opt, &value, None)?;
            }
            ct.pending.insert(opt.clone(), value);
            ct.pending_delete.retain(|k| k != opt);
        }
        // cleanup_pending: values equal to the current ones are not pending.
        let config = ct.config.clone();
        ct.pending.retain(|k, v| config.get(k) != Some(v));
        ct.pending_delete.retain(|k| config.contains_key(k));
        let modified: Vec<String> = u.set.keys().chain(u.delete.iter()).cloned().collect();
        if ct.running() {
            self.guests.insert_ct(ct);
            self.hotplug_ct_pending(vmid, &modified, rq, now)
        } else {
            self.guests.insert_ct(ct);
            let mut lines = Vec::new();
            self.apply_ct_pending_selected(vmid, Some(&modified), &mut lines, Some(rq), now)
        }
    }

    /// `vmconfig_hotplug_pending`: what a running container takes now.
    fn hotplug_ct_pending(
        &mut self,
        vmid: u32,
        selection: &[String],
        rq: &mut Context,
        now: i64,
    ) -> Result<()> {
        let version = self.version;
        let Some(ct) = self.guests.ct_by_id(vmid).cloned() else {
            return Ok(());
        };
        let mut ct = ct;
        let node = ct.node.clone();
        let hot_delete = |k: &str| {
            fastplug(k)
                || is_indexed_key(k, "unused")
                || is_indexed_key(k, "net")
                || matches!(k, "swap" | "cpulimit" | "cpuunits")
        };
        let deletes: Vec<String> = ct
            .pending_delete
            .iter()
            .filter(|k| selection.contains(k) && hot_delete(k))
            .cloned()
            .collect();
        let mut unused_free = Vec::new();
        for k in &deletes {
            if let Some(v) = ct.config.remove(k)
                && is_indexed_key(k, "unused")
            {
                unused_free.push(v);
            }
            ct.pending_delete.retain(|x| x != k);
        }
        let sets: Vec<String> = ct
            .pending
            .keys()
            .filter(|k| selection.contains(k))
            .cloned()
            .collect();
        let mut new_mps = Vec::new();
        for k in sets {
            let hot = fastplug(&k)
                || matches!(k.as_str(), "cpulimit" | "cpuunits" | "memory" | "swap")
                || is_indexed_key(&k, "net");
            if hot {
                let mut v = ct.pending.remove(&k).unwrap_or_default();
                if is_indexed_key(&k, "net") {
                    v = canonical(version, &k, &v, Some(rq))?;
                }
                ct.config.insert(k, v);
            } else if is_indexed_key(&k, "mp") && !ct.config.contains_key(&k) {
                new_mps.push(k);
            }
        }
        self.guests.insert_ct(ct);
        for v in unused_free {
            if let Some(vol) = mp_volume(&v) {
                self.storage.free_volume(vol, &node);
            }
        }
        for k in new_mps {
            self.apply_pending_mountpoint(vmid, &k, now)?;
        }
        Ok(())
    }

    /// `vmconfig_apply_pending` for every pending change (a start, a
    /// reboot); errors are logged as PVE logs them.
    pub(in crate::model) fn apply_ct_pending(
        &mut self,
        vmid: u32,
        lines: &mut Vec<String>,
        now: i64,
    ) {
        let _ = self.apply_ct_pending_selected(vmid, None, lines, None, now);
    }

    /// `vmconfig_apply_pending` for the keys in `selection` (all when
    /// `None`).
    fn apply_ct_pending_selected(
        &mut self,
        vmid: u32,
        selection: Option<&[String]>,
        lines: &mut Vec<String>,
        mut rq: Option<&mut Context>,
        now: i64,
    ) -> Result<()> {
        let version = self.version;
        let Some(mut ct) = self.guests.ct_by_id(vmid).cloned() else {
            return Ok(());
        };
        let node = ct.node.clone();
        let selected = |k: &str| selection.is_none_or(|s| s.iter().any(|x| x == k));
        let mut to_free = Vec::new();
        let deletes: Vec<String> = ct
            .pending_delete
            .iter()
            .filter(|k| selected(k))
            .cloned()
            .collect();
        for k in &deletes {
            if let Some(old) = ct.config.remove(k) {
                if is_indexed_key(k, "mp") {
                    if let Some(vol) = mp_volume(&old).filter(|v| is_storage_volume(v)) {
                        ct.add_unused(vol);
                    }
                } else if is_indexed_key(k, "unused")
                    && let Some(vol) = mp_volume(&old)
                {
                    to_free.push(vol.to_string());
                }
            }
            ct.pending_delete.retain(|x| x != k);
        }
        let sets: Vec<String> = ct.pending.keys().filter(|k| selected(k)).cloned().collect();
        let mut mps = Vec::new();
        for k in sets {
            if is_indexed_key(&k, "mp") {
                mps.push(k);
                continue;
            }
            let mut v = ct.pending.remove(&k).unwrap_or_default();
            if is_indexed_key(&k, "net") {
                v = match rq.as_deref_mut() {
                    Some(rq) => canonical(version, &k, &v, Some(rq))?,
                    None => {
                        let mut draw = Context::new(now.saturating_mul(1000), u64::from(vmid));
                        canonical(version, &k, &v, Some(&mut draw))?
                    }
                };
            }
            ct.config.insert(k, v);
        }
        self.guests.insert_ct(ct);
        for vol in to_free {
            if let Some(l) = self.storage.free_volume(&vol, &node) {
                lines.extend(l);
            }
        }
        for k in mps {
            if let Err(e) = self.apply_pending_mountpoint(vmid, &k, now) {
                if selection.is_some() {
                    return Err(e);
                }
                lines.push(format!("unable to apply pending change {k} : {e}"));
            }
        }
        Ok(())
    }

    /// `apply_pending_mountpoint`: a new disk is allocated; the volume a
    /// changed mount point leaves becomes unused.
    fn apply_pending_mountpoint(&mut self, vmid: u32, key: &str, now: i64) -> Result<()> {
        let version = self.version;
        let Some(ct) = self.guests.ct_by_id(vmid) else {
            return Ok(());
        };
        let node = ct.node.clone();
        let Some(value) = ct.pending.get(key).cloned() else {
            return Ok(());
        };
        let old = ct.config.get(key).cloned();
        let vol = mp_volume(&value).unwrap_or_default().to_string();
        let printed = if let Some((sid, size)) = new_disk(&vol) {
            let (volid, _) = self.alloc_ct_volume(sid, &node, vmid, size, now)?;
            schema::mp_with(version, key, &value, &volid, size)?
        } else {
            value
        };
        let Some(ct) = self.guests.ct_by_id_mut(vmid) else {
            return Ok(());
        };
        if let Some(old) = old
            && let Some(ov) = mp_volume(&old).filter(|v| is_storage_volume(v))
            && mp_volume(&printed) != Some(ov)
        {
            let ov = ov.to_string();
            ct.add_unused(&ov);
        }
        ct.pending.remove(key);
        ct.config.insert(key.to_string(), printed);
        Ok(())
    }

    /// Allocates a container volume as `alloc_disk` does: a raw image on
    /// block and file storages, a subvolume on ZFS (and, for size 0, on
    /// directories).
    ///
    /// # Errors
    /// The storage's refusals.
    pub(in crate::model) fn alloc_ct_volume(
        &mut self,
        sid: &str,
        node: &str,
        vmid: u32,
        size: u64,
        now: i64,
    ) -> Result<(String, Vec<String>)> {
        let s = self.storage.usable_storage(sid, node)?;
        let subvol =
            s.kind == "zfspool" || (size == 0 && crate::model::storage::path_based(&s.kind));
        if !s.content.iter().any(|c| c == "rootdir") {
            return Err(Error::failed(format!(
                "storage '{sid}' does not allow content type 'rootdir' (Container)"
            )));
        }
        if subvol {
            self.storage.alloc_volume(
                sid,
                node,
                vmid,
                &VolumeKind::Subvol,
                Some("subvol"),
                size,
                now,
            )
        } else {
            let (volid, mut log) = self.storage.alloc_volume(
                sid,
                node,
                vmid,
                &VolumeKind::Disk,
                Some("raw"),
                size,
                now,
            )?;
            log.extend(mkfs_lines(size, vmid, now));
            Ok((volid, log))
        }
    }
}

/// What `mkfs.ext4` prints for a new container volume of `size` bytes.
pub(super) fn mkfs_lines(size: u64, vmid: u32, now: i64) -> Vec<String> {
    let blocks = size / 4096;
    let inodes = size / 16384;
    let mut rq = Context::new(now.saturating_mul(1000), u64::from(vmid) << 8);
    vec![
        format!("Creating filesystem with {blocks} 4k blocks and {inodes} inodes"),
        format!("Filesystem UUID: {}", rq.uuid_v4()),
        "Allocating group tables: done".into(),
        "Writing inode tables: done".into(),
        "Creating journal (16384 blocks): done".into(),
        "Writing superblocks and filesystem accounting information: done".into(),
        String::new(),
    ]
}
