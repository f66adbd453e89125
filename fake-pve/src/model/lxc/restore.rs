//! Restoring a container from a backup: `POST /nodes/{node}/lxc` with
//! `restore=1` and its `vzrestore` task (pve-container `API2/LXC.pm`
//! `create_vm`, `LXC/Create.pm` `recover_config`, `restore_archive`,
//! `restore_configuration`, `sanitize_and_merge_config`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::CtOps;
use super::schema::{
    self, canonical, is_indexed_key, is_mount_key, is_storage_volume, mp_size, mp_volume, new_disk,
};
use super::{Ct, LxcOp, lxc_worker};
use crate::model::backup::archive_key;
use crate::model::qemu::EffectResult;
use crate::model::storage::parse_volid;
use crate::model::tasks::Worker;
use crate::model::{Context, Error, Result};

/// What a container restore asks for.
#[derive(Debug, Clone, Default)]
pub struct CtRestoreRequest {
    /// The VMID restored to.
    pub vmid: u32,
    /// The node.
    pub node: String,
    /// `ostemplate`: the backup volume.
    pub archive: String,
    /// `force`: overwrite the container of this VMID.
    pub force: bool,
    /// `unique`: new MAC addresses.
    pub unique: bool,
    /// `storage` (`local` when not given): where the volumes go when no
    /// `rootfs` is given.
    pub storage: Option<String>,
    /// Config keys given (`rootfs`, `mpN` and others): they win over the
    /// backed-up ones.
    pub config: BTreeMap<String, String>,
    /// `unprivileged` as given.
    pub unprivileged: Option<bool>,
    /// Whether root@pam asks.
    pub is_root: bool,
    /// Whether the caller has `Sys.Modify` on `/` (a privileged
    /// container needs it).
    pub sys_modify: bool,
    /// `pool`.
    pub pool: Option<String>,
    /// `start=1`: as whom and how long that start takes.
    pub start: Option<(String, u64)>,
}

/// A `vzrestore` task's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CtRestoreJob {
    /// The backup volume.
    pub archive: String,
    /// Config keys given, canonical, mount points apart.
    pub config: BTreeMap<String, String>,
    /// `rootfs` and `mpN` given (new volumes as `STORAGE:GiB`).
    pub mounts: BTreeMap<String, String>,
    /// The default storage.
    pub storage: String,
    /// New MAC addresses.
    pub unique: bool,
    /// `unprivileged` as given.
    pub unprivileged: Option<bool>,
    /// A container of this VMID was there (`force`).
    pub existed: bool,
    /// Whether that container was unprivileged.
    pub old_unprivileged: bool,
    /// Whether root@pam asked.
    pub is_root: bool,
    /// Whether the caller has `Sys.Modify` on `/`.
    pub sys_modify: bool,
    /// Pool to join.
    pub pool: Option<String>,
    /// Start afterwards: as whom and how long that start takes.
    pub start: Option<(String, u64)>,
    /// A draw for new MAC addresses.
    pub seed: u64,
}

/// Keys `sanitize_and_merge_config` does not take from the backup.
fn not_merged(key: &str) -> bool {
    matches!(
        key,
        "digest" | "rootfs" | "snapshots" | "unprivileged" | "parent" | "template" | "lock"
    ) || is_indexed_key(key, "mp")
        || is_indexed_key(key, "unused")
}

/// The mount point type of a volume.
fn mount_type(volume: &str) -> &'static str {
    if volume.starts_with("/dev/") {
        "device"
    } else if volume.starts_with('/') {
        "bind"
    } else {
        "volume"
    }
}

/// `GiB` as `create_disks` reads it from `<storage>:<GiB>`.
fn gib(size: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let g = size as f64 / f64::from(1u32 << 30);
    let s = format!("{g}");
    s.trim_end_matches(".0").to_string()
}

impl CtOps<'_> {
    /// The synchronous part of a container restore: the VMID must be free
    /// (or, with `force`, hold a stopped, unprotected container of this
    /// node), the archive must be a backup volume, the storages must take
    /// container volumes; the config is locked `create` and the
    /// `vzrestore` worker answered.
    ///
    /// # Errors
    /// `CT 100 already exists on node 'x'`, `can't overwrite running
    /// container`, `unable to restore CT N - protection mode enabled`,
    /// `unable to use volume x - content type needs to be 'backup'`,
    /// `storage 'x' does not support container directories`, `unable to
    /// restore CT N - CT is locked (x)`.
    pub fn restore_ct(&mut self, req: CtRestoreRequest, rq: &mut Context) -> Result<Worker> {
        let vmid = req.vmid;
        let version = self.version;
        let same = self.guests.ct_by_id(vmid).filter(|c| c.node == req.node);
        let (existed, old_unprivileged) = match same {
            Some(ct) if req.force => {
                if ct.running() {
                    return Err(Error::failed("can't overwrite running container"));
                }
                ct.check_protection(&format!("unable to restore CT {vmid}"))?;
                (
                    true,
                    ct.config.get("unprivileged").is_some_and(|u| u == "1"),
                )
            }
            _ => {
                if let Some((kind, node)) = self.guests.holder(vmid) {
                    return Err(Error::exists(format!(
                        "{kind} {vmid} already exists on node '{node}'"
                    )));
                }
                (false, false)
            }
        };
        // check_volume_access with the content type `backup`.
        if let Some((sid, name)) = parse_volid(&req.archive) {
            if self.storage.existing(sid)?.kind == "pbs" {
                crate::model::pbs::parse_volname(name).map_err(Error::failed)?;
            } else if !name.starts_with("backup/") {
                return Err(Error::failed(format!(
                    "unable to use volume {} - content type needs to be 'backup'",
                    req.archive
                )));
            }
        } else if !req.is_root {
            return Err(Error::failed(
                "Only root can pass arbitrary filesystem paths.",
            ));
        }
        let storage = req.storage.clone().unwrap_or_else(|| "local".into());
        let mut mounts = BTreeMap::new();
        let mut config = BTreeMap::new();
        for (k, v) in &req.config {
            if is_mount_key(k) {
                let v = if new_disk(&format!("x:{v}")).is_some() && !v.contains(':') {
                    format!("{storage}:{v}")
                } else {
                    v.clone()
                };
                mounts.insert(k.clone(), v);
            } else if !is_indexed_key(k, "unused") {
                config.insert(k.clone(), v.clone());
            }
        }
        if !mounts.is_empty() && !mounts.contains_key("rootfs") {
            return Err(Error::failed(
                "mount points configured, but 'rootfs' not set - aborting",
            ));
        }
        for v in mounts.values() {
            let vol = mp_volume(v).unwrap_or_default();
            if is_storage_volume(vol) {
                let sid = vol.split(':').next().unwrap_or_default();
                self.check_rootdir_storage(sid, &req.node)?;
            } else if !req.is_root {
                return Err(Error::failed(
                    "Only root can pass arbitrary filesystem paths.",
                ));
            }
        }
        if !mounts.contains_key("rootfs") {
            self.check_rootdir_storage(&storage, &req.node)?;
        }
        for (k, v) in &mut config {
            *v = canonical(version, k, v, Some(rq))?;
        }
        let emsg = format!("unable to restore CT {vmid} -");
        if existed {
            let ct = self.guests.ct_mut(&req.node, vmid)?;
            ct.check_lock()
                .map_err(|e| e.map_message(|m| format!("{emsg} {m}")))?;
            ct.config.insert("lock".into(), "create".into());
        } else {
            let lock = BTreeMap::from([("lock".to_string(), "create".to_string())]);
            self.guests.insert_ct(Ct::new(vmid, &req.node, lock));
        }
        let job = CtRestoreJob {
            archive: req.archive,
            config,
            mounts,
            storage,
            unique: req.unique,
            unprivileged: req.unprivileged,
            existed,
            old_unprivileged,
            is_root: req.is_root,
            sys_modify: req.sys_modify,
            pool: req.pool,
            start: req.start,
            seed: rq.next_u64(),
        };
        Ok(lxc_worker("vzrestore", vmid, LxcOp::Restore(Box::new(job))))
    }

    /// `check_and_activate_storage`: enabled here and taking `rootdir`.
    fn check_rootdir_storage(&self, sid: &str, node: &str) -> Result<()> {
        let s = self.storage.usable_storage(sid, node)?;
        if !s.content.iter().any(|x| x == "rootdir") {
            return Err(Error::invalid(
                "storage",
                format!("storage '{sid}' does not support container directories"),
            ));
        }
        Ok(())
    }

    /// Undoes the start of a restore whose task ended without its effect.
    pub(in crate::model) fn abort_ct_restore(&mut self, vmid: u32, job: &CtRestoreJob) {
        if job.existed {
            self.guests.unlock_ct(vmid, "create");
        } else if self
            .guests
            .ct_by_id(vmid)
            .is_some_and(|c| c.lock() == Some("create"))
        {
            self.guests.remove_ct(vmid);
        }
    }

    /// The `vzrestore` task: the backed-up config, the volumes made anew
    /// (where the backup had them, sized as they were, on `storage`), the
    /// old container's volumes freed, the archive extracted and the
    /// configs merged.
    pub(in crate::model) fn finish_ct_restore(
        &mut self,
        vmid: u32,
        node: &str,
        job: CtRestoreJob,
        end_ms: i64,
    ) -> EffectResult {
        let now = end_ms.div_euclid(1000);
        let version = self.version;
        let emsg = format!("unable to restore CT {vmid} -");
        let mut lines = Vec::new();
        let mut allocated: Vec<String> = Vec::new();
        // Until the volumes are made, a failure leaves an existing
        // container as it was.
        let mut destroy_config_on_error = !job.existed;
        let old = self.guests.ct_by_id(vmid).cloned();
        let result = (|| -> Result<(BTreeMap<String, String>, bool)> {
            if old.as_ref().is_some_and(Ct::running) {
                return Err(Error::failed("can't overwrite running container"));
            }
            lines.push(format!(
                "recovering backed-up configuration from '{}'",
                job.archive
            ));
            let (orig, path, size) = self.recover_ct_config(node, &job.archive, &mut lines)?;
            let mut conf = job.config.clone();
            let unprivileged = job
                .unprivileged
                .unwrap_or_else(|| orig.get("unprivileged").is_some_and(|u| u == "1"));
            if unprivileged {
                conf.insert("unprivileged".into(), "1".into());
            }
            if (!job.existed || job.old_unprivileged) && !unprivileged && !job.sys_modify {
                return Err(Error::permission("/", &["Sys.Modify"]));
            }
            let was_template = orig.get("template").is_some_and(|t| t == "1");
            let mut mounts = job.mounts.clone();
            let mut delayed = BTreeMap::new();
            if mounts.is_empty() {
                if !orig.contains_key("rootfs") {
                    return Err(Error::failed(
                        "rootfs configuration could not be recovered, please check and specify manually!",
                    ));
                }
                for (k, v) in orig.iter().filter(|(k, _)| is_mount_key(k)) {
                    let vol = mp_volume(v).unwrap_or_default();
                    let kind = mount_type(vol);
                    if kind == "volume" {
                        let Some(size) = mp_size(v) else {
                            return Err(Error::failed(format!(
                                "unable to detect disk size - please specify {k} (size)"
                            )));
                        };
                        let new = format!("{}:{}", job.storage, gib(size));
                        let rest: Vec<&str> = v
                            .split(',')
                            .skip(1)
                            .filter(|p| !p.starts_with("size="))
                            .collect();
                        let mut value = new;
                        for p in rest {
                            value.push(',');
                            value.push_str(p);
                        }
                        mounts.insert(k.clone(), value);
                    } else {
                        if k == "rootfs" {
                            return Err(Error::failed(format!(
                                "restoring rootfs to {kind} mount is only possible by specifying -rootfs manually!"
                            )));
                        }
                        if !job.is_root {
                            return Err(Error::failed(format!(
                                "restoring '{k}' to {kind} mount is only possible for root"
                            )));
                        }
                        delayed.insert(k.clone(), v.clone());
                    }
                }
            }
            destroy_config_on_error = true;
            // create_disks: rootfs first, then the mount points in order.
            let mut keys: Vec<String> = mounts.keys().cloned().collect();
            keys.sort_by_key(|k| {
                (
                    k.as_str() != "rootfs",
                    k.trim_start_matches("mp").parse::<u32>().unwrap_or(0),
                )
            });
            for k in keys {
                let v = mounts[&k].clone();
                let vol = mp_volume(&v).unwrap_or_default().to_string();
                let printed = if let Some((sid, size)) = new_disk(&vol) {
                    let (volid, l) = self.alloc_ct_volume(sid, node, vmid, size, now)?;
                    allocated.push(volid.clone());
                    lines.extend(l);
                    schema::mp_with(version, &k, &v, &volid, size)?
                } else {
                    if is_storage_volume(&vol) && self.storage.volume(&vol, node).is_none() {
                        return Err(Error::failed(format!("volume '{vol}' does not exist")));
                    }
                    canonical(version, &k, &v, None)?
                };
                conf.insert(k, printed);
            }
            // The old container's volumes go (`destroy_lxc_container`).
            if let Some(old) = old.as_ref().filter(|_| job.existed) {
                let mut vols: Vec<String> = Vec::new();
                let sections = std::iter::once(&old.config).chain(old.snapshots.values());
                for section in sections {
                    for (k, v) in section {
                        if schema::is_volume_key(k)
                            && let Some(vol) = mp_volume(v)
                            && is_storage_volume(vol)
                            && !vols.iter().any(|x| x == vol)
                            && !allocated.iter().any(|x| x == vol)
                        {
                            vols.push(vol.to_string());
                        }
                    }
                }
                for v in vols {
                    if self
                        .storage
                        .volume(&v, node)
                        .is_some_and(|x| x.vmid == vmid)
                        && let Some(l) = self.storage.free_volume(&v, node)
                    {
                        lines.extend(l);
                    }
                }
            }
            lines.push(format!("restoring '{}' now..", job.archive));
            // A PBS archive is restored by `proxmox-backup-client
            // restore`, which prints nothing.
            if !path.is_empty() {
                lines.push(format!("extracting archive '{path}'"));
                let read = (size / 8).div_ceil(10_240) * 10_240 + 10_240;
                lines.push(format!(
                    "Total bytes read: {read} ({}, {}/s)",
                    crate::model::backup::dump::tar_human(read),
                    crate::model::backup::dump::tar_human(read / 2)
                ));
            }
            lines.push("merging backed-up and given configuration..".into());
            let mut rq = Context::new(end_ms, job.seed);
            for (k, v) in &orig {
                if not_merged(k) {
                    continue;
                }
                if job.unique && is_indexed_key(k, "net") {
                    let stripped: Vec<&str> =
                        v.split(',').filter(|p| !p.starts_with("hwaddr=")).collect();
                    let net = canonical(version, k, &stripped.join(","), Some(&mut rq))?;
                    conf.insert(k.clone(), net);
                    continue;
                }
                conf.entry(k.clone()).or_insert_with(|| v.clone());
            }
            conf.entry("hostname".into())
                .or_insert_with(|| format!("CT{vmid}"));
            conf.entry("memory".into()).or_insert_with(|| "512".into());
            conf.entry("swap".into()).or_insert_with(|| "512".into());
            conf.extend(delayed);
            if was_template {
                lines.push("Convert restored container to template...".into());
            }
            Ok((conf, was_template))
        })();
        let (conf, was_template) = match result {
            Ok(c) => c,
            Err(e) => {
                for v in &allocated {
                    self.storage.free_volume(v, node);
                }
                if destroy_config_on_error {
                    self.guests.remove_ct(vmid);
                } else {
                    self.guests.unlock_ct(vmid, "create");
                }
                return Err((lines, format!("{emsg} {e}")));
            }
        };
        let Some(ct) = self.guests.ct_by_id_mut(vmid) else {
            for v in &allocated {
                self.storage.free_volume(v, node);
            }
            return Err((lines, format!("{emsg} CT vanished")));
        };
        ct.config = conf;
        ct.pending.clear();
        ct.pending_delete.clear();
        ct.snapshots.clear();
        if was_template {
            match self.finish_ct_template(node, vmid) {
                Ok(l) => lines.extend(l),
                Err((l, e)) => {
                    lines.extend(l);
                    return Err((lines, format!("{emsg} {e}")));
                }
            }
        }
        self.ct_made(vmid, job.pool.as_deref());
        Ok(lines)
    }

    /// `recover_config`: the container config a backup holds, the
    /// archive's path and the size of what it saved.
    ///
    /// # Errors
    /// `can't find file 'x'`, `ERROR: archive contains no configuration
    /// file` (an archive of a VM, or one fake-pve did not make).
    fn recover_ct_config(
        &self,
        node: &str,
        volid: &str,
        lines: &mut Vec<String>,
    ) -> Result<(BTreeMap<String, String>, String, u64)> {
        let missing = || Error::failed(format!("can't find file '{volid}'"));
        let (sid, name) = parse_volid(volid).ok_or_else(missing)?;
        let s = self.storage.usable_storage(sid, node)?;
        if s.kind == "pbs" {
            // `recover_config_from_proxmox_backup`: `pct.conf` of the
            // snapshot; no path (the archive is not a file).
            let snap = self.pbs.snapshot(s, name).map_err(Error::failed)?;
            if let Some(e) = self.pbs.restore_key_error(sid, snap.fingerprint.as_deref()) {
                lines.push(format!("Error: {e}"));
                return Err(Error::failed(
                    crate::model::pbs::keys::restore_command_failed(
                        self.pbs,
                        s,
                        name,
                        "pct.conf -",
                    ),
                ));
            }
            if snap.btype != "ct" {
                return Err(Error::failed(format!(
                    "got unexpected backup format 'pbs-{}'",
                    snap.btype
                )));
            }
            let size = snap.archive.disks.iter().map(|d| d.size).sum();
            return Ok((snap.archive.config.clone(), String::new(), size));
        }
        if self.storage.volumes().get(s, node, name).is_none() {
            return Err(missing());
        }
        let path = crate::model::storage::content::volume_path(s, name);
        match self.backups.archive(&archive_key(s.shared, node, volid)) {
            Some(a) if a.guest == "lxc" => {
                let size = a.disks.iter().map(|d| d.size).sum();
                Ok((a.config.clone(), path, size))
            }
            _ => Err(Error::failed(
                "ERROR: archive contains no configuration file",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_in_gib_as_create_disks_reads_them() {
        assert_eq!(gib(8 << 30), "8");
        assert_eq!(gib(512 << 20), "0.5");
        assert!(not_merged("mp3") && not_merged("rootfs") && !not_merged("net0"));
        assert_eq!(mount_type("/dev/sdb"), "device");
        assert_eq!(mount_type("/srv"), "bind");
    }
}
