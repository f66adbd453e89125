//! Moving a disk to another storage (`POST .../move_disk`, qemu-server
//! `API2/Qemu.pm` `move_vm_disk`, `QemuServer.pm` `clone_disk`).
//!
//! PVE checks the move before forking the `qmmove` task and again under
//! the config lock inside it; the copy (`qemu-img convert`, or a drive
//! mirror for a running VM) and the config change happen in the task.

use serde::{Deserialize, Serialize};

use super::Qemu;
use super::VmOps;
use super::clone::{is_cloudinit, render_bytes1};
use super::{
    EffectResult, Error, Lines, Result, drive_file, drive_is_cdrom, drive_with, is_disk,
    is_drive_key,
};
use crate::model::guest::volumes::{MODIFIED, VolumeKeys};
use crate::model::storage::ops::Feature;
use crate::model::storage::{VolumeKind, parse_volid, path_based};
use crate::spec::propstring;

/// What a `qmmove` task was asked to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveJob {
    /// The drive key (`scsi0`, or `unused0`).
    pub disk: String,
    /// The target storage.
    pub storage: String,
    /// The requested target format.
    pub format: Option<String>,
    /// Free the source afterwards instead of keeping it as `unusedN`.
    pub delete: bool,
    /// The expected config digest.
    pub digest: Option<String>,
    /// `bwlimit` as the call gave it (KiB/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bwlimit: Option<u64>,
    /// Who moves (whether they may override the storages' limits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub who: Option<String>,
}

impl VolumeKeys for Qemu {
    fn volume_of<'v>(key: &str, value: &'v str) -> Option<&'v str> {
        is_disk(key, value).then(|| drive_file(value))
    }
}

/// The format of a volume as `parse_volname` reports it.
fn volume_format(kind: &str, name: &str) -> String {
    if path_based(kind) {
        name.rsplit_once('.').map_or("raw", |(_, e)| e).to_string()
    } else {
        "raw".to_string()
    }
}

impl VmOps<'_> {
    /// `move_vm_disk`'s `$load_and_check_move`: answers the source volid
    /// and whether snapshots still use it.
    ///
    /// # Errors
    /// PVE's refusals, in its order.
    pub fn check_move_disk(&self, node: &str, vmid: u32, job: &MoveJob) -> Result<(String, bool)> {
        let vm = self.guests.vm(node, vmid)?;
        vm.check_lock()?;
        vm.check_digest(job.digest.as_deref())?;
        let Some(value) = vm.config.get(&job.disk) else {
            return Err(Error::not_found(format!(
                "disk '{}' does not exist",
                job.disk
            )));
        };
        let old = drive_file(value).to_string();
        if old.is_empty() {
            return Err(Error::failed(format!(
                "disk '{}' has no associated volume",
                job.disk
            )));
        }
        // drive_is_cdrom($drive, 1): a cloud-init drive may move.
        if is_drive_key(&job.disk) && drive_is_cdrom(value) && !is_cloudinit(value) {
            return Err(Error::failed("you can't move a cdrom"));
        }
        let Some((old_sid, old_name)) = parse_volid(&old) else {
            return Err(Error::failed(format!("unable to parse volume ID '{old}'")));
        };
        let old_fmt = self
            .storage
            .existing(old_sid)
            .ok()
            .map(|s| volume_format(&s.kind, old_name));
        if old_sid == job.storage
            && (job.format.is_none() || old_fmt.is_none() || old_fmt == job.format)
        {
            return Err(Error::failed(
                "you can't move to the same storage with same format",
            ));
        }
        let s = self.storage.usable_storage(&job.storage, node)?;
        if !s.content.iter().any(|c| c == "images") {
            return Err(Error::invalid(
                "storage",
                format!("storage '{}' does not support vm images", job.storage),
            ));
        }
        let snapshotted = vm.volume_in_snapshots(&old);
        if snapshotted && job.delete {
            return Err(Error::failed(
                "you can't move a disk with snapshots and delete the source",
            ));
        }
        Ok((old, snapshotted))
    }

    /// The `qmmove` task: copies the volume to the target storage, points
    /// the drive at it, and keeps the source as `unusedN` or frees it.
    pub(in crate::model) fn finish_move_disk(
        &mut self,
        node: &str,
        vmid: u32,
        job: &MoveJob,
        now: i64,
    ) -> EffectResult {
        let fail = |e: Error| (Vec::new(), e.to_string());
        let (old, snapshotted) = self.check_move_disk(node, vmid, job).map_err(fail)?;
        let mut log: Lines = Vec::new();
        if snapshotted {
            log.push("WARN: moving disk with snapshots, snapshots will not be moved!".into());
        }
        let (running, value, template) = match self.guests.vm(node, vmid) {
            Ok(vm) => (
                vm.running(),
                vm.config.get(&job.disk).cloned().unwrap_or_default(),
                vm.template(),
            ),
            Err(e) => return Err(fail(e)),
        };
        let src = self.storage.volume(&old, node).cloned();
        let size = src.as_ref().map_or(0, |v| v.size);
        // resolve_dst_disk_format: the requested format, else the
        // source's, if the target storage takes it; else its default.
        let target = self
            .storage
            .usable_storage(&job.storage, node)
            .map_err(fail)?
            .clone();
        let hint = job
            .format
            .clone()
            .or_else(|| src.as_ref().map(|v| v.format.clone()));
        let fmt = if path_based(&target.kind) {
            match hint.as_deref() {
                Some(f @ ("raw" | "qcow2" | "vmdk")) => f.to_string(),
                _ => target
                    .options
                    .get("format")
                    .cloned()
                    .unwrap_or_else(|| "raw".into()),
            }
        } else {
            "raw".to_string()
        };
        if let Some(f) = &job.format
            && *f != fmt
        {
            log.push(format!(
                "WARN: format '{f}' is not supported by the target storage '{}' - using '{fmt}' instead",
                job.storage
            ));
        }
        log.push(format!("create full clone of drive {} ({old})", job.disk));
        let cloudinit = is_cloudinit(&value);
        let (kind, size) = if cloudinit {
            (VolumeKind::CloudInit, 4 << 20)
        } else {
            (VolumeKind::Disk, size)
        };
        let (newvolid, lines) = self
            .storage
            .alloc_volume(
                &job.storage,
                node,
                vmid,
                &kind,
                path_based(&target.kind).then_some(fmt.as_str()),
                size,
                now,
            )
            .map_err(|e| (log.clone(), format!("storage migration failed: {e}")))?;
        log.extend(lines);
        let total = render_bytes1(size);
        let unused = !is_drive_key(&job.disk);
        if cloudinit {
            // No data needs to be copied for the cloud-init drive.
        } else if running && !unused {
            let dev = format!("drive-{}", job.disk);
            // get_bandwidth_limit('move', [source, target]).
            let from = parse_volid(&old).map_or("", |(s, _)| s).to_string();
            let who = job.who.as_deref().and_then(crate::model::AuthId::parse);
            let limit = crate::model::mtunnel::bandwidth_limit(
                self.storage,
                self.datacenter,
                self.access,
                who.as_ref(),
                "move",
                &[from, job.storage.clone()],
                job.bwlimit.map(|b| b as f64),
            )
            .map(|l| l.round() as u64);
            log.extend(super::clone::mirror_lines(&dev, size, limit));
            log.push("all 'mirror' jobs are ready".into());
            log.push(format!("{dev}: Completing block job..."));
            log.push(format!("{dev}: Completed successfully."));
            log.push(format!("{dev}: mirror-job finished"));
        } else {
            log.push(format!("transferred 0.0 B of {total} (0.00%)"));
            log.push(format!("transferred {total} of {total} (100.00%)"));
        }
        let version = self.version;
        let printed = if unused {
            newvolid.clone()
        } else if cloudinit {
            drive_with(version, &job.disk, &value, &[("file", &newvolid)], &[])
        } else {
            let size_text = propstring::format_size(&size.to_string());
            drive_with(
                version,
                &job.disk,
                &value,
                &[("file", &newvolid), ("size", &size_text)],
                &["format"],
            )
        };
        if let Some(vm) = self.guests.get_mut(&vmid) {
            vm.config.insert(job.disk.clone(), printed);
            if !job.delete
                && let Some(key) = vm.add_unused(&old)
            {
                log.push(format!("adding source volume '{old}' as '{key}' to config"));
            }
        }
        if template && let Ok(lines) = self.finish_template(node, vmid, Some(&job.disk)) {
            log.extend(lines);
        }
        if job.delete {
            log.push(format!(
                "removing source volume '{old}' after successful copy"
            ));
            if let Some(lines) = self.storage.free_volume(&old, node) {
                log.extend(lines);
            }
        }
        Ok(log)
    }
}

/// What a `qmmove` task that reassigns a disk to another VM was asked
/// to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReassignJob {
    /// The node of both VMs.
    pub node: String,
    /// The source drive key.
    pub disk: String,
    /// The VM that gets the disk.
    pub target_vmid: u32,
    /// The key it gets there (default: the source key).
    pub target_disk: String,
    /// The expected digest of the source config.
    pub digest: Option<String>,
    /// The expected digest of the target config.
    pub target_digest: Option<String>,
}

impl VmOps<'_> {
    /// `$load_and_check_reassign_configs`: answers the source volid.
    ///
    /// # Errors
    /// PVE's refusals, in its order.
    pub fn check_reassign(&self, vmid: u32, job: &ReassignJob) -> Result<String> {
        let t = job.target_vmid;
        let src = self
            .guests
            .get(&vmid)
            .ok_or_else(|| Error::not_found(format!("could not find VM {vmid}")))?;
        let dst = self
            .guests
            .get(&t)
            .ok_or_else(|| Error::not_found(format!("could not find target VM {t}")))?;
        if src.node != dst.node {
            return Err(Error::failed(format!(
                "Both VMs need to be on the same node ({} != {})",
                src.node, dst.node
            )));
        }
        let src = self.guests.vm(&job.node, vmid)?;
        src.check_lock()?;
        let dst = self.guests.vm(&job.node, t)?;
        dst.check_lock()?;
        if src.template() || dst.template() {
            return Err(Error::failed("Can't move disks from or to template VMs"));
        }
        if src.check_digest(job.digest.as_deref()).is_err() {
            return Err(Error::failed(format!("VM {vmid}: {MODIFIED}")));
        }
        if dst.check_digest(job.target_digest.as_deref()).is_err() {
            return Err(Error::failed(format!("VM {t}: {MODIFIED}")));
        }
        let Some(value) = src.config.get(&job.disk) else {
            return Err(Error::not_found(format!(
                "Disk '{}' for VM '{vmid}' does not exist",
                job.disk
            )));
        };
        if dst.config.contains_key(&job.target_disk) {
            return Err(Error::failed(format!(
                "Target disk key '{}' is already in use for VM '{t}'",
                job.target_disk
            )));
        }
        let unused = !is_drive_key(&job.disk);
        let volid = if unused {
            value.clone()
        } else {
            drive_file(value).to_string()
        };
        if volid.is_empty() {
            return Err(Error::failed(format!(
                "disk '{}' has no associated volume",
                job.disk
            )));
        }
        if !unused && drive_is_cdrom(value) && !is_cloudinit(value) {
            return Err(Error::failed(
                "CD drive contents can't be moved to another VM",
            ));
        }
        if parse_volid(&volid).is_none() || volid.starts_with('/') {
            return Err(Error::failed(format!(
                "Volume '{volid}' not managed by PVE"
            )));
        }
        // is_volume_in_use with the disk itself skipped.
        let uses = |conf: &std::collections::BTreeMap<String, String>, skip: Option<&str>| {
            conf.iter().any(|(k, v)| {
                Some(k.as_str()) != skip
                    && is_drive_key(k)
                    && !drive_is_cdrom(v)
                    && drive_file(v) == volid
            })
        };
        if uses(&src.config, Some(&job.disk)) || src.snapshots.values().any(|s| uses(s, None)) {
            return Err(Error::failed(
                "Can't move disk used by a snapshot to another VM",
            ));
        }
        if !self
            .storage
            .volume_has_feature(Feature::Rename, &volid, false, self.version.is_v9())
        {
            return Err(Error::failed(
                "Storage does not support moving of this disk to another VM",
            ));
        }
        if src.running() && !unused {
            return Err(Error::conflict(
                "Cannot move disk to another VM while the source VM is running - detach first",
            ));
        }
        Ok(volid)
    }

    /// The reassigning `qmmove` task: renames the volume for the target,
    /// drops the disk (and its boot entry) from the source and adds it to
    /// the target through a config update.
    pub(in crate::model) fn finish_reassign(
        &mut self,
        vmid: u32,
        job: &ReassignJob,
        now: i64,
    ) -> EffectResult {
        let fail = |e: Error| (Vec::new(), e.to_string());
        let volid = self.check_reassign(vmid, job).map_err(fail)?;
        let t = job.target_vmid;
        let node = job.node.clone();
        let mut log: Lines = vec![format!(
            "reassign disk '{}' from VM '{vmid}' as '{}' to VM '{t}'",
            job.disk, job.target_disk
        )];
        let (new, lines) = self
            .storage
            .reassign_volume(&volid, &node, t)
            .map_err(|e| (log.clone(), e.to_string()))?;
        log.extend(lines);
        let value = self
            .guests
            .get(&vmid)
            .and_then(|vm| vm.config.get(&job.disk).cloned())
            .unwrap_or_default();
        if let Some(vm) = self.guests.get_mut(&vmid) {
            if let Some(boot) = vm.config.get("boot").cloned()
                && let Some(order) = boot.strip_prefix("order=")
            {
                let devs: Vec<&str> = order.split(';').collect();
                if devs.contains(&job.disk.as_str()) {
                    log.push(format!(
                        "removing disk '{}' from boot order config",
                        job.disk
                    ));
                    let rest: Vec<&str> = devs.into_iter().filter(|d| *d != job.disk).collect();
                    let printed = if rest.is_empty() {
                        String::new()
                    } else {
                        format!("order={}", rest.join(";"))
                    };
                    vm.config.insert("boot".into(), printed);
                }
            }
            vm.config.remove(&job.disk);
        }
        log.push(format!(
            "removing disk '{}' from VM '{vmid}' config",
            job.disk
        ));
        let version = self.version;
        let drive = if is_drive_key(&job.disk) && is_drive_key(&job.target_disk) {
            drive_with(version, &job.target_disk, &value, &[("file", &new)], &[])
        } else if is_drive_key(&job.target_disk) {
            new.clone()
        } else {
            // An unused slot holds the bare volume.
            new.clone()
        };
        if !is_drive_key(&job.target_disk) {
            if let Some(vm) = self.guests.get_mut(&t) {
                vm.config.insert(job.target_disk.clone(), drive);
            }
            return Ok(log);
        }
        let line = format!("update VM {t}: -{} {drive}", job.target_disk);
        log.push(line.clone());
        let mut set = std::collections::BTreeMap::new();
        set.insert(job.target_disk.clone(), drive);
        let update = super::ConfigUpdate {
            set,
            log: line,
            ..super::ConfigUpdate::default()
        };
        match self.update_config(&node, t, &update, now) {
            Ok(lines) => {
                // update_config repeats the `update VM` line.
                log.extend(lines.into_iter().filter(|l| !l.starts_with("update VM ")));
                Ok(log)
            }
            Err((lines, e)) => {
                log.extend(lines);
                Err((log, e.to_string()))
            }
        }
    }
}
