//! A VM's backup (qemu-server `VZDump/QemuServer.pm`).

use super::super::{Archive, ArchiveDisk, name_time, timestamp};
use super::units::{format_size, hms, render_bytes};
use super::{DumpJob, GuestResult, Stored};
use crate::model::backup::BackupOps;
use crate::model::qemu::{Vm, drive_file, is_drive_key};
use crate::spec::propstring;

/// The extension and format of an archive by compressor.
fn archive_ext(compress: &str) -> (&'static str, &'static str) {
    match compress {
        "1" | "lzo" => (".vma.lzo", "vma.lzo"),
        "gzip" => (".vma.gz", "vma.gz"),
        "zstd" => (".vma.zst", "vma.zst"),
        _ => (".vma", "vma"),
    }
}

/// The rank of a drive in `foreach_volume` order.
fn drive_rank(key: &str) -> (u8, u32) {
    let digits = key.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let n = digits.parse().unwrap_or(0);
    let prefix = &key[..key.len() - digits.len()];
    let r = match prefix {
        "ide" => 0,
        "sata" => 1,
        "scsi" => 2,
        "virtio" => 3,
        "efidisk" => 4,
        _ => 5,
    };
    (r, n)
}

fn is_cdrom_or_cloudinit(value: &str) -> bool {
    let file = drive_file(value);
    value.split(',').any(|p| p == "media=cdrom")
        || file == "none"
        || file == "cdrom"
        || file.contains("cloudinit")
}

impl BackupOps<'_> {
    /// One guest's backup: the archive volume and its log.
    pub(in crate::model) fn dump_guest(
        &mut self,
        job: &DumpJob,
        vmid: u32,
        at: i64,
        secs: i64,
    ) -> GuestResult {
        let node = job.node.clone();
        let Some(vm) = self.guests.get(&vmid).cloned() else {
            return Err((Vec::new(), format!("unable to find VM '{vmid}'")));
        };
        let mut l = vec![
            format!("INFO: Starting Backup of VM {vmid} (qemu)"),
            format!("INFO: Backup started at {}", timestamp(at)),
        ];
        let running = vm.running();
        l.push(format!(
            "INFO: status = {}",
            if running { "running" } else { "stopped" }
        ));
        let (prepare, archive) = self.prepare_archive(&vm, &node);
        let mode = if !running && job.mode == "snapshot" {
            "stop"
        } else {
            job.mode.as_str()
        };
        if running {
            l.extend(prepare.iter().cloned());
        }
        l.push(format!("INFO: backup mode: {mode}"));
        l.push("INFO: ionice priority: 7".into());
        if !running {
            l.extend(prepare);
        }
        if running && mode == "stop" {
            l.push("INFO: stopping virtual guest".into());
        }
        if running && mode == "suspend" {
            l.push("INFO: suspending guest".into());
        }
        let Some(s) = self.storage.find(&job.storage).cloned() else {
            return Err((l, format!("storage '{}' does not exist", job.storage)));
        };
        let agent = vm.config.get("agent").is_some_and(|a| {
            a.split(',')
                .next()
                .is_some_and(|v| v == "1" || v == "enabled=1")
        });
        let guestname = vm
            .config
            .get("name")
            .cloned()
            .unwrap_or_else(|| format!("VM {vmid}"));
        if s.kind == "pbs" {
            let d = super::pbs::PbsDump {
                storage: &s,
                vmid,
                btype: "vm",
                at,
                secs: secs.max(1),
                archive,
                guestname,
            };
            if let Err(e) = self.pbs_vm_archive(job, &d, running, mode, agent, &mut l) {
                return Err((l, e));
            }
            if running && mode == "stop" {
                l.push("INFO: restarting vm".into());
            }
            if running && mode == "suspend" {
                l.push("INFO: resuming guest".into());
            }
            let secs = secs.max(1);
            l.push(format!(
                "INFO: Finished Backup of VM {vmid} ({})",
                hms(secs)
            ));
            l.push(format!("INFO: Backup finished at {}", timestamp(at + secs)));
            return Ok(l);
        }
        let (ext, format) = archive_ext(&job.compress);
        let file = format!("vzdump-qemu-{vmid}-{}{ext}", name_time(at));
        let name = format!("backup/{file}");
        let path = crate::model::storage::content::volume_path(&s, &name);
        l.push(format!("INFO: creating vzdump archive '{path}'"));
        if running && mode == "snapshot" && agent {
            l.push("INFO: issuing guest-agent 'fs-freeze' command".into());
            l.push("INFO: issuing guest-agent 'fs-thaw' command".into());
        }
        if !running || mode == "stop" {
            l.push("INFO: starting kvm to execute backup task".into());
        }
        l.push(format!("INFO: started backup task '{}'", job.uuid));
        if running && mode != "stop" {
            l.push("INFO: resuming VM again".into());
        }
        let total: u64 = archive.disks.iter().map(|d| d.size).sum();
        let size = total / 32 + 4096;
        let secs = secs.max(1);
        let rate = render_bytes(total / u64::try_from(secs).unwrap_or(1));
        let t = render_bytes(total);
        l.push(format!(
            "INFO: 100% ({t} of {t}) in {secs}s, read: {rate}/s, write: {}/s",
            render_bytes(size / u64::try_from(secs).unwrap_or(1))
        ));
        if total > 0 {
            let zero = total.saturating_sub(size);
            l.push(format!(
                "INFO: backup is sparse: {} ({}%) total zero data",
                render_bytes(zero),
                zero * 100 / total
            ));
        }
        l.push(format!(
            "INFO: transferred {t} in {secs} seconds ({rate}/s)"
        ));
        if !running || mode == "stop" {
            l.push("INFO: stopping kvm after backup task".into());
        }
        if running && mode == "stop" {
            l.push("INFO: restarting vm".into());
        }
        if running && mode == "suspend" {
            l.push("INFO: resuming guest".into());
        }
        l.push(format!("INFO: archive file size: {}", format_size(size)));
        let stored = Stored {
            storage: &s,
            node: &node,
            vmid,
            kind: "qemu",
            name,
            format,
            size,
            at,
            guestname,
        };
        self.store_backup(job, stored, archive, &mut l);
        l.push(format!(
            "INFO: Finished Backup of VM {vmid} ({})",
            hms(secs)
        ));
        l.push(format!("INFO: Backup finished at {}", timestamp(at + secs)));
        Ok(l)
    }

    /// What `prepare` and `assemble` log for a VM, and its archive: the
    /// disks included, the config without what a backup leaves out.
    fn prepare_archive(&self, vm: &Vm, node: &str) -> (Vec<String>, Archive) {
        let mut l = Vec::new();
        if let Some(name) = vm.config.get("name") {
            l.push(format!("INFO: VM Name: {name}"));
        }
        let mut keys: Vec<&String> = vm
            .config
            .keys()
            .filter(|k| is_drive_key(k) && !is_cdrom_or_cloudinit(&vm.config[*k]))
            .collect();
        keys.sort_by_key(|k| drive_rank(k));
        let mut disks = Vec::new();
        for key in keys {
            let value = &vm.config[key];
            let file = drive_file(value).to_string();
            if value.split(',').any(|p| p == "backup=0") {
                l.push(format!("INFO: exclude disk '{key}' '{file}' (backup=no)"));
                continue;
            }
            let vol = self.storage.volume(&file, node);
            let size = vol.map(|v| v.size).unwrap_or_else(|| {
                value
                    .split(',')
                    .find_map(|p| p.strip_prefix("size="))
                    .and_then(crate::model::size::parse_size)
                    .unwrap_or(0)
            });
            let format = vol.map_or_else(|| "raw".to_string(), |v| v.format.clone());
            l.push(format!(
                "INFO: include disk '{key}' '{file}' {}",
                propstring::format_size(&size.to_string())
            ));
            disks.push(ArchiveDisk {
                key: key.clone(),
                volid: file,
                size,
                format,
            });
        }
        let mut config = vm.config.clone();
        config.remove("lock");
        config.remove("parent");
        let unused: Vec<String> = config
            .keys()
            .filter(|k| k.starts_with("unused"))
            .cloned()
            .collect();
        for k in unused {
            if let Some(v) = config.remove(&k) {
                l.push(format!(
                    "INFO: skip unused drive '{v}' (not included into backup)"
                ));
            }
        }
        if !vm.ci_changes.is_empty() {
            l.push("INFO: special config section found (not included into backup)".into());
        }
        if !vm.snapshots.is_empty() {
            l.push("INFO: snapshots found (not included into backup)".into());
        }
        if !vm.pending.is_empty() || !vm.pending_delete.is_empty() {
            l.push("INFO: pending configuration changes found (not included into backup)".into());
        }
        let archive = Archive {
            guest: "qemu".into(),
            vmid: vm.vmid,
            config,
            disks,
        };
        (l, archive)
    }
}
