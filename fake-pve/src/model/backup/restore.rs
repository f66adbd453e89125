//! Restoring a VM from a backup: `POST /nodes/{node}/qemu` with
//! `archive` and its `qmrestore` task (qemu-server `API2/Qemu.pm`
//! `create_vm`, `QemuServer.pm` `restore_vma_archive`,
//! `restore_update_config_line`; pve-guest-common
//! `create_and_lock_config`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{BackupOp, archive_key};
use crate::model::backup::BackupOps;
use crate::model::qemu::{EffectResult, Vm, VmStatus, drive_file, is_drive_key};
use crate::model::storage::{VolumeKind, parse_volid, path_based};
use crate::model::tasks::{TaskEffect, Worker};
use crate::model::{AuthId, Context, Error, Result};

/// What a restore asks for.
#[derive(Debug, Clone, Default)]
pub struct RestoreRequest {
    /// The node (resolved).
    pub node: String,
    /// The VMID restored to.
    pub vmid: u32,
    /// `archive`: the backup volume.
    pub archive: String,
    /// `force`: overwrite an existing VM.
    pub force: bool,
    /// `unique`: new MAC addresses and SMBIOS UUID.
    pub unique: bool,
    /// `storage`: where the disks go (else where they were).
    pub storage: Option<String>,
    /// `pool`: the pool the VM joins.
    pub pool: Option<String>,
    /// `start=1`: as whom and for how long.
    pub start: Option<(String, u64)>,
    /// Other config keys given: they override the backed-up ones.
    pub overrides: BTreeMap<String, String>,
    /// Who restores (`None`: not checked, as for root@pam): the task
    /// checks the restored config's bridges and mapped devices for them.
    pub user: Option<String>,
    /// `bwlimit` (KiB/s): overrides the storages' and datacenter.cfg's
    /// `restore` limits for who may change them.
    pub bwlimit: Option<u64>,
}

/// A `qmrestore` task's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestoreJob {
    /// The VMID restored to.
    pub vmid: u32,
    /// The node.
    pub node: String,
    /// The backup volume.
    pub archive: String,
    /// A VM was there before (`force`).
    pub existed: bool,
    /// New MACs and SMBIOS UUID.
    pub unique: bool,
    /// Target storage of the disks.
    pub storage: Option<String>,
    /// Pool to join.
    pub pool: Option<String>,
    /// Start afterwards: as whom and how long that start takes.
    pub start: Option<(String, u64)>,
    /// Config keys that override the backed-up ones.
    pub overrides: BTreeMap<String, String>,
    /// Who restores: the restored config's bridges and mapped devices
    /// are checked for them (none in a task saved before this was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The seed of the new identities (vmgenid, MACs, UUID).
    pub seed: u64,
    /// `bwlimit` as the call gave it (KiB/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bwlimit: Option<u64>,
}

/// The storage a backed-up disk is restored to: the call's `storage`,
/// else the one it was on.
fn target_of(job: &RestoreJob, volid: &str) -> String {
    job.storage
        .clone()
        .or_else(|| parse_volid(volid).map(|(s, _)| s.to_string()))
        .unwrap_or_default()
}

/// A limit as Perl prints the number: whole numbers without a fraction.
fn kib(l: f64) -> String {
    if l.fract() == 0.0 && l.abs() < 1e15 {
        format!("{}", l as i64)
    } else {
        l.to_string()
    }
}

/// The drive with its file replaced.
fn with_file(value: &str, file: &str) -> String {
    match value.split_once(',') {
        Some((_, rest)) if !value.starts_with("file=") => format!("{file},{rest}"),
        _ => file.to_string(),
    }
}

impl BackupOps<'_> {
    /// The synchronous part of a restore: the archive must exist, an
    /// existing VMID needs `force` and no lock; the config is then locked
    /// `create` and the `qmrestore` worker answered.
    ///
    /// # Errors
    /// `can't find file 'x'`, `unable to restore VM N - VM N already
    /// exists on node 'x'`, `unable to restore VM N - VM is locked (x)`.
    pub fn restore_vm(&mut self, req: RestoreRequest, rq: &mut Context) -> Result<Worker> {
        let vmid = req.vmid;
        let missing = || Error::failed(format!("can't find file '{}'", req.archive));
        let Some((sid, name)) = parse_volid(&req.archive) else {
            return Err(missing());
        };
        let s = self.storage.existing(sid)?;
        if s.kind == "pbs" {
            crate::model::pbs::parse_volname(name).map_err(Error::failed)?;
        } else if self.storage.volumes().get(s, &req.node, name).is_none() {
            return Err(missing());
        }
        let emsg = format!("unable to restore VM {vmid} -");
        let existed = match self.guests.get_mut(&vmid) {
            Some(v) if !req.force || v.node != req.node => {
                return Err(Error::exists(format!(
                    "{emsg} VM {vmid} already exists on node '{}'",
                    v.node
                )));
            }
            Some(v) => {
                v.check_lock()
                    .map_err(|e| e.map_message(|m| format!("{emsg} {m}")))?;
                v.config.insert("lock".into(), "create".into());
                true
            }
            None => {
                let lock = BTreeMap::from([("lock".to_string(), "create".to_string())]);
                self.guests
                    .insert(vmid, Vm::new(vmid, &req.node, VmStatus::Stopped, lock));
                false
            }
        };
        let job = RestoreJob {
            vmid,
            node: req.node,
            archive: req.archive,
            existed,
            unique: req.unique,
            storage: req.storage,
            pool: req.pool,
            start: req.start,
            overrides: req.overrides,
            user: req.user,
            seed: rq.next_u64(),
            bwlimit: req.bwlimit,
        };
        Ok(Worker::new("qmrestore", &vmid.to_string())
            .effect(TaskEffect::Backup(BackupOp::Restore(Box::new(job)))))
    }

    /// Drops the `create` lock a failed restore leaves.
    pub(in crate::model) fn remove_create_lock(&mut self, vmid: u32) {
        if let Some(vm) = self.guests.get_mut(&vmid)
            && vm.lock() == Some("create")
        {
            vm.config.remove("lock");
        }
    }

    /// The end of a `qmrestore` task.
    pub(in crate::model) fn finish_restore(
        &mut self,
        job: RestoreJob,
        end_ms: i64,
    ) -> EffectResult {
        let vmid = job.vmid;
        let emsg = format!("unable to restore VM {vmid} -");
        let before = format!(
            "error before or during data restore, some or all disks were not completely restored. VM {vmid} state is NOT cleaned up."
        );
        let fail = |c: &mut Self, msg: String| {
            c.remove_create_lock(vmid);
            Err((vec![before.clone()], msg))
        };
        let Some(vm) = self.guests.get(&vmid).cloned() else {
            return Err((vec![], format!("{emsg} VM {vmid} does not exist")));
        };
        if vm.config.get("protection").is_some_and(|p| p == "1") {
            return fail(self, format!("{emsg} - protection mode enabled"));
        }
        if vm.running() {
            return fail(self, format!("{emsg} vm is running"));
        }
        let node = job.node.clone();
        let Some((sid, name)) = parse_volid(&job.archive) else {
            return fail(self, format!("can't find file '{}'", job.archive));
        };
        let Some(s) = self.storage.find(sid).cloned() else {
            return fail(self, format!("storage '{sid}' does not exist"));
        };
        let pbs = s.kind == "pbs";
        let (ctime, archive) = if pbs {
            match self.pbs.snapshot(&s, name) {
                Ok(snap) => {
                    // The client checks the manifest's key before it
                    // fetches `index.json`.
                    if let Some(e) = self.pbs.restore_key_error(sid, snap.fingerprint.as_deref()) {
                        let pid = 10_000 + (job.seed % 50_000);
                        let files = format!("index.json /var/tmp/vzdumptmp{pid}/index.json");
                        let msg = crate::model::pbs::keys::restore_command_failed(
                            self.pbs, &s, name, &files,
                        );
                        self.remove_create_lock(vmid);
                        return Err((vec![format!("Error: {e}"), before.clone()], msg));
                    }
                    (snap.time, snap.archive.clone())
                }
                Err(e) => return fail(self, format!("{emsg} {e}")),
            }
        } else {
            let Some(vol) = self.storage.volumes().get(&s, &node, name).cloned() else {
                return fail(self, format!("can't find file '{}'", job.archive));
            };
            let Some(archive) = self
                .backups
                .archive(&archive_key(s.shared, &node, &job.archive))
                .cloned()
            else {
                return fail(
                    self,
                    format!(
                        "{emsg} the archive '{}' holds no configuration",
                        job.archive
                    ),
                );
            };
            (vol.ctime, archive)
        };
        if archive.guest != "qemu" {
            return fail(
                self,
                format!("{emsg} archive '{}' is not a VM backup", job.archive),
            );
        }
        // qemu-server's worker checks the backed-up config, merged with the
        // keys given, before it restores anything (check_restore_permissions:
        // the bridges' SDN.Use, the mapped devices' Mapping.Use).
        if let Some(who) = job.user.as_deref().and_then(AuthId::parse) {
            let mut merged = archive.config.clone();
            merged.extend(job.overrides.clone());
            let checked = self
                .perms()
                .check_qemu_bridge_access(&who, &merged)
                .and_then(|()| self.perms().check_mapping_access(&who, &merged));
            if let Err(e) = checked {
                return fail(self, e.to_string());
            }
        }
        let path = crate::model::storage::content::volume_path(&s, name);
        let mut log = Vec::new();
        // The old VM's disks go first (`destroy_vm` with `lock: restore`).
        if job.existed {
            let mut old: Vec<String> = Vec::new();
            for (k, v) in &vm.config {
                let file = if k.starts_with("unused") {
                    v.as_str()
                } else if is_drive_key(k) {
                    drive_file(v)
                } else {
                    continue;
                };
                if self
                    .storage
                    .volume(file, &node)
                    .is_some_and(|x| x.vmid == vmid)
                {
                    old.push(file.to_string());
                }
            }
            for v in old {
                if let Some(l) = self.storage.free_volume(&v, &node) {
                    log.extend(l);
                }
            }
        }
        let pid = 10_000 + (job.seed % 50_000);
        let tmp = format!("/var/tmp/vzdumptmp{pid}");
        let decompress = if name.ends_with(".zst") {
            Some("zstd -q -d -c")
        } else if name.ends_with(".gz") {
            Some("zcat")
        } else if name.ends_with(".lzo") {
            Some("lzop -d -c")
        } else {
            None
        };
        // get_bandwidth_limit('restore', ...), as the worker's caller.
        let who = job.user.as_deref().and_then(AuthId::parse);
        let limit = |c: &Self, sid: &str| {
            crate::model::mtunnel::bandwidth_limit(
                c.storage,
                c.datacenter,
                c.access,
                who.as_ref(),
                "restore",
                &[sid.to_string()],
                job.bwlimit.map(|b| b as f64),
            )
            .filter(|l| *l > 0.0)
        };
        if !pbs {
            // The backup's own storage limits the reading (cstream).
            let mut source = path.clone();
            let mut piped = false;
            if let Some(l) = limit(self, sid) {
                log.push(format!("applying read rate limit: {}", kib(l)));
                source = format!("cstream -t {} -- {path} |", kib(l * 1024.0));
                piped = true;
            }
            log.push(match (decompress, piped) {
                (Some(d), false) => format!(
                    "restore vma archive: {d} {path} | vma extract -v -r {tmp}.fifo - {tmp}"
                ),
                (Some(d), true) => format!(
                    "restore vma archive: {source} {d} - | vma extract -v -r {tmp}.fifo - {tmp}"
                ),
                (None, true) => {
                    format!("restore vma archive: {source} vma extract -v -r {tmp}.fifo - {tmp}")
                }
                (None, false) => {
                    format!("restore vma archive: vma extract -v -r {tmp}.fifo {path} {tmp}")
                }
            });
            let conf_text =
                Vm::new(vmid, &node, VmStatus::Stopped, archive.config.clone()).config_text();
            log.push(format!(
                "CFG: size: {} name: qemu-server.conf",
                conf_text.len()
            ));
            for (i, d) in archive.disks.iter().enumerate() {
                log.push(format!(
                    "DEV: dev_id={} size: {} devname: drive-{}",
                    i + 1,
                    d.size,
                    d.key
                ));
            }
            log.push(format!("CTIME: {}", crate::clock::ctime(ctime)));
            // Each target storage's own limit for writing.
            let mut seen: Vec<String> = Vec::new();
            for d in &archive.disks {
                let target = target_of(&job, &d.volid);
                if seen.contains(&target) {
                    continue;
                }
                if let Some(l) = limit(self, &target) {
                    log.push(format!("rate limit for storage {target}: {} KiB/s", kib(l)));
                }
                seen.push(target);
            }
        }
        let now = end_ms.div_euclid(1000);
        let mut config = archive.config.clone();
        let mut total = 0;
        let mut pbs_lines = Vec::new();
        for d in &archive.disks {
            let target = target_of(&job, &d.volid);
            let fmt = self
                .storage
                .find(&target)
                .filter(|t| path_based(&t.kind))
                .map(|_| if d.format == "qcow2" { "qcow2" } else { "raw" });
            let allocated = self.storage.alloc_volume(
                &target,
                &node,
                vmid,
                &VolumeKind::Disk,
                fmt,
                d.size,
                now,
            );
            let (volid, lines) = match allocated {
                Ok(a) => a,
                Err(e) => return fail(self, format!("{emsg} {e}")),
            };
            log.extend(lines);
            log.push(format!("new volume ID is '{volid}'"));
            let dev_path = parse_volid(&volid)
                .and_then(|(t, n)| {
                    self.storage
                        .find(t)
                        .map(|ts| crate::model::storage::content::volume_path(ts, n))
                })
                .unwrap_or_default();
            if pbs {
                pbs_lines.extend(
                    self.pbs_restore_lines(&s, name, &d.key, &d.format, &dev_path, d.size, &volid),
                );
            } else {
                log.push(format!(
                    "map 'drive-{}' to '{dev_path}' (write zeros = 0)",
                    d.key
                ));
            }
            total += d.size;
            if let Some(v) = config.get(&d.key) {
                let v = with_file(v, &volid);
                config.insert(d.key.clone(), v);
            }
        }
        if pbs {
            log.extend(pbs_lines);
        } else {
            log.push(format!(
                "progress 100% (read {total} bytes, duration {} sec)",
                (end_ms.div_euclid(1000) - ctime).clamp(0, 1)
            ));
            log.push(format!(
                "total bytes read {total}, sparse bytes {total} (100%)"
            ));
            log.push("space reduction due to 4K zero blocks 100%".into());
        }
        // Drives not in the archive are left out; cloud-init drives are
        // made anew; CD-ROMs stay.
        let saved: Vec<&str> = archive.disks.iter().map(|d| d.key.as_str()).collect();
        let drives: Vec<String> = config
            .keys()
            .filter(|k| is_drive_key(k) && !saved.contains(&k.as_str()))
            .cloned()
            .collect();
        for k in drives {
            let v = config[&k].clone();
            let file = drive_file(&v).to_string();
            if file.contains("cloudinit") {
                let target = job
                    .storage
                    .clone()
                    .or_else(|| parse_volid(&file).map(|(s, _)| s.to_string()))
                    .unwrap_or_default();
                let fmt = self
                    .storage
                    .find(&target)
                    .filter(|t| path_based(&t.kind))
                    .map(|_| "qcow2");
                match self.storage.alloc_volume(
                    &target,
                    &node,
                    vmid,
                    &VolumeKind::CloudInit,
                    fmt,
                    4 << 20,
                    now,
                ) {
                    Ok((volid, lines)) => {
                        log.extend(lines);
                        config.insert(k, with_file(&v, &volid));
                    }
                    Err(_) => {
                        config.remove(&k);
                    }
                }
            } else if !(v.split(',').any(|p| p == "media=cdrom")
                || file == "none"
                || file == "cdrom")
            {
                config.remove(&k);
            }
        }
        log.push("rescan volumes...".into());
        let mut rq = Context::new(end_ms, job.seed);
        if config.get("vmgenid").is_some_and(|g| g != "0") {
            config.insert("vmgenid".into(), rq.uuid_v4());
        }
        if job.unique {
            let nets: Vec<String> = config
                .keys()
                .filter(|k| k.starts_with("net") && k[3..].parse::<u32>().is_ok())
                .cloned()
                .collect();
            for k in nets {
                let v = config[&k].clone();
                let mac = rq.random_mac();
                let parts: Vec<String> = v
                    .split(',')
                    .map(|p| match p.split_once('=') {
                        Some((model, m)) if m.len() == 17 && m.contains(':') => {
                            format!("{model}={mac}")
                        }
                        _ => p.to_string(),
                    })
                    .collect();
                config.insert(k, parts.join(","));
            }
            if let Some(sm) = config.get("smbios1").cloned() {
                let uuid = rq.uuid_v4();
                let parts: Vec<String> = sm
                    .split(',')
                    .map(|p| {
                        if p.starts_with("uuid=") {
                            format!("uuid={uuid}")
                        } else {
                            p.to_string()
                        }
                    })
                    .collect();
                config.insert("smbios1".into(), parts.join(","));
            }
        }
        for (k, v) in &job.overrides {
            config.insert(k.clone(), v.clone());
        }
        config.remove("lock");
        if let Some(vm) = self.guests.get_mut(&vmid) {
            vm.config = config;
            vm.pending.clear();
            vm.pending_delete.clear();
            vm.snapshots.clear();
        }
        if let Some(pool) = &job.pool {
            self.access.pools_mut().add_vm(vmid, pool);
        }
        if self.guests.get(&vmid).is_some_and(Vm::template) {
            log.push("Convert to template.".into());
        }
        if job.start.is_some() {
            log.push("Execute autostart".into());
        }
        Ok(log)
    }
}

impl BackupOps<'_> {
    /// What restoring one drive from a PBS snapshot logs
    /// (`restore_proxmox_backup_archive` and `pbs-restore --verbose`).
    #[allow(clippy::too_many_arguments)]
    fn pbs_restore_lines(
        &self,
        s: &crate::model::cluster::Storage,
        name: &str,
        key: &str,
        format: &str,
        dev_path: &str,
        size: u64,
        volid: &str,
    ) -> Vec<String> {
        let repo = crate::model::pbs::repository(s);
        let snap = name.strip_prefix("backup/").unwrap_or(name);
        let ns = crate::model::pbs::storage_ns(s);
        let ns_arg = if ns.is_empty() {
            String::new()
        } else {
            format!(" --ns {ns}")
        };
        let target_kind = parse_volid(volid)
            .and_then(|(t, _)| self.storage.find(t))
            .map(|t| t.kind.clone())
            .unwrap_or_default();
        let fmt = if format == "qcow2" { "qcow2" } else { "raw" };
        let skip = if target_kind == "lvm" {
            ""
        } else {
            " --skip-zero"
        };
        let keyfile = if self.pbs.key(&s.storage).is_some() {
            format!(" --keyfile /etc/pve/priv/storage/{}.enc", s.storage)
        } else {
            String::new()
        };
        let zeroes = size - size / 32;
        vec![
            format!(
                "restore proxmox backup image: /usr/bin/pbs-restore --repository {repo}{ns_arg} {snap} drive-{key}.img.fidx {dev_path} --verbose --format {fmt}{keyfile}{skip}"
            ),
            format!("connecting to repository '{repo}'"),
            format!("open block backend for target '{dev_path}'"),
            format!("starting to restore snapshot '{snap}'"),
            "download and verify backup index".into(),
            format!(
                "progress 100% (read {size} bytes, zeroes = {}% ({zeroes} bytes), duration 1 sec)",
                zeroes * 100 / size.max(1)
            ),
            format!(
                "restore image complete (bytes={size}, duration=1.00s, speed={:.2}MB/s)",
                size as f64 / 1_048_576.0
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drive_files_are_replaced() {
        assert_eq!(
            with_file("local-lvm:vm-100-disk-0,size=8G", "tank:vm-101-disk-0"),
            "tank:vm-101-disk-0,size=8G"
        );
        assert_eq!(with_file("local:100/a.qcow2", "x:y"), "x:y");
    }
}
