//! A container's backup (`VZDump/LXC.pm`).

use super::super::{Archive, ArchiveDisk, name_time, timestamp};
use super::units::{format_size, hms, rsync_human, tar_human};
use super::{DumpJob, GuestResult, Stored};
use crate::model::backup::BackupOps;
use crate::model::storage::ops::Feature;
use crate::model::storage::parse_volid;

/// The extension and format of a container archive by compressor.
fn tar_ext(compress: &str) -> (&'static str, &'static str) {
    match compress {
        "1" | "lzo" => (".tar.lzo", "tar.lzo"),
        "gzip" => (".tar.gz", "tar.gz"),
        "zstd" => (".tar.zst", "tar.zst"),
        _ => (".tar", "tar"),
    }
}

/// The logical volume of a volume ID (`vm-200-disk-0`).
fn lv_name(volid: &str) -> &str {
    let name = volid.split_once(':').map_or(volid, |(_, n)| n);
    name.rsplit('/').next().unwrap_or(name)
}

impl BackupOps<'_> {
    /// A container's backup (`VZDump/LXC.pm`): the mount points included,
    /// the mode (a `snapshot` falls back to `suspend` when a volume
    /// cannot be snapshotted), the `vzdump` snapshot, the tar archive.
    pub(in crate::model) fn dump_ct(
        &mut self,
        job: &DumpJob,
        vmid: u32,
        at: i64,
        secs: i64,
    ) -> GuestResult {
        let node = job.node.clone();
        let Some(ct) = self.guests.ct_by_id(vmid).cloned() else {
            return Err((Vec::new(), format!("unable to find VM '{vmid}'")));
        };
        let conf = ct.config().clone();
        let mut l = vec![
            format!("INFO: Starting Backup of VM {vmid} (lxc)"),
            format!("INFO: Backup started at {}", timestamp(at)),
        ];
        let running = ct.running();
        l.push(format!(
            "INFO: status = {}",
            if running { "running" } else { "stopped" }
        ));
        let vols = crate::model::lxc::backup::backup_volumes(&conf);
        let mut prepare = Vec::new();
        if let Some(h) = conf.get("hostname") {
            prepare.push(format!("INFO: CT Name: {h}"));
        }
        let mut disks = Vec::new();
        for v in &vols {
            if !v.included {
                prepare.push(format!(
                    "INFO: excluding {} mount point {} ('{}') from backup ({})",
                    v.kind, v.key, v.mp, v.reason
                ));
                continue;
            }
            prepare.push(format!(
                "INFO: including mount point {} ('{}') in backup",
                v.key, v.mp
            ));
            let vol = self.storage.volume(&v.volume, &node);
            let size = vol
                .map(|x| x.size)
                .unwrap_or_else(|| crate::model::lxc::schema::mp_size(&conf[&v.key]).unwrap_or(0));
            let format = vol.map_or_else(|| "raw".to_string(), |x| x.format.clone());
            disks.push(ArchiveDisk {
                key: v.key.clone(),
                volid: v.volume.clone(),
                size,
                format,
            });
        }
        let v9 = self.version.is_v9();
        let snapshots_ok = disks.iter().all(|d| {
            self.storage
                .volume_has_feature(Feature::Snapshot, &d.volid, false, v9)
        });
        let mut mode = if running { job.mode.as_str() } else { "stop" };
        if mode == "snapshot" {
            l.extend(prepare.iter().cloned());
            if !snapshots_ok {
                l.push("INFO: mode failure - some volumes do not support snapshots".into());
                l.push("INFO: trying 'suspend' mode instead".into());
                mode = "suspend";
            }
        }
        l.push(format!("INFO: backup mode: {mode}"));
        l.push("INFO: ionice priority: 7".into());
        let Some(s) = self.storage.find(&job.storage).cloned() else {
            return Err((l, format!("storage '{}' does not exist", job.storage)));
        };
        let (ext, format) = tar_ext(&job.compress);
        let base = format!("vzdump-lxc-{vmid}-{}", name_time(at));
        let name = format!("backup/{base}{ext}");
        let path = crate::model::storage::content::volume_path(&s, &name);
        let dumpdir = path.rsplit_once('/').map_or("", |(d, _)| d).to_string();
        let pid = 1000
            + job
                .uuid
                .bytes()
                .fold(0u32, |a, b| (a * 31 + u32::from(b)) % 60_000);
        let total: u64 = disks.iter().map(|d| d.size).sum();
        // What tar reads: the used part of the volumes, in 10 KiB records.
        let written = (total / 8).div_ceil(10_240) * 10_240 + 10_240;
        let secs = secs.max(1);
        let online_after = |s: i64| {
            if s < 1 {
                "<1".to_string()
            } else {
                s.to_string()
            }
        };
        match mode {
            "stop" => {
                l.extend(prepare);
                if running {
                    l.push("INFO: stopping virtual guest".into());
                }
            }
            "suspend" => {
                if job.mode == "suspend" {
                    l.extend(prepare.iter().cloned());
                } else {
                    l.extend(prepare);
                }
                let tmpdir = format!("{dumpdir}/{base}.tmp");
                let from = format!("/proc/{pid}/root/");
                l.push(format!("INFO: starting first sync {from} to {tmpdir}"));
                l.push(format!(
                    "INFO: first sync finished - transferred {} bytes in {}s",
                    rsync_human(written),
                    (secs / 2).max(1)
                ));
                l.push("INFO: suspending guest".into());
                l.push(format!("INFO: starting final sync {from} to {tmpdir}"));
                l.push("INFO: final sync finished - transferred 0 bytes in 0s".into());
                l.push("INFO: resuming guest".into());
                l.push(format!(
                    "INFO: guest is online again after {} seconds",
                    online_after(0)
                ));
            }
            _ => {
                if disks.len() > 1 {
                    l.push("INFO: suspend vm to make snapshot".into());
                }
                l.push("INFO: create storage snapshot 'vzdump'".into());
                for d in &disks {
                    if self.backup_storage_kind(&d.volid).as_deref() == Some("lvmthin") {
                        l.push(format!(
                            "  Logical volume \"snap_{}_vzdump\" created.",
                            lv_name(&d.volid)
                        ));
                    }
                }
                if disks.len() > 1 {
                    l.push("INFO: resume vm".into());
                    l.push(format!(
                        "INFO: guest is online again after {} seconds",
                        online_after(0)
                    ));
                }
            }
        }
        let mut config = conf.clone();
        config.remove("lock");
        config.remove("parent");
        let guestname = conf
            .get("hostname")
            .cloned()
            .unwrap_or_else(|| format!("CT{vmid}"));
        if s.kind == "pbs" {
            let snapdir = if mode == "suspend" {
                format!("/var/tmp/vzdumptmp{pid}_{vmid}")
            } else {
                "/mnt/vzsnap0".to_string()
            };
            let d = super::pbs::PbsDump {
                storage: &s,
                vmid,
                btype: "ct",
                at,
                secs,
                archive: Archive {
                    guest: "lxc".into(),
                    vmid,
                    config,
                    disks: disks.clone(),
                },
                guestname,
            };
            if let Err(e) = self.pbs_ct_archive(job, &d, &snapdir, &mut l) {
                return Err((l, e));
            }
        } else {
            l.push(format!("INFO: creating vzdump archive '{path}'"));
            let rate = written / u64::try_from(secs).unwrap_or(1);
            l.push(format!(
                "INFO: Total bytes written: {written} ({}, {}/s)",
                tar_human(written),
                tar_human(rate)
            ));
            let size = if format == "tar" {
                written
            } else {
                written * 2 / 5
            };
            l.push(format!("INFO: archive file size: {}", format_size(size)));
            let archive = Archive {
                guest: "lxc".into(),
                vmid,
                config,
                disks: disks.clone(),
            };
            let stored = Stored {
                storage: &s,
                node: &node,
                vmid,
                kind: "lxc",
                name,
                format,
                size,
                at,
                guestname,
            };
            self.store_backup(job, stored, archive, &mut l);
        }
        if mode == "snapshot" {
            l.push("INFO: cleanup temporary 'vzdump' snapshot".into());
            for d in &disks {
                if self.backup_storage_kind(&d.volid).as_deref() == Some("lvmthin") {
                    l.push(format!(
                        "  Logical volume \"snap_{}_vzdump\" successfully removed.",
                        lv_name(&d.volid)
                    ));
                }
            }
        }
        if running && mode == "stop" {
            l.push("INFO: restarting vm".into());
            l.push(format!(
                "INFO: guest is online again after {} seconds",
                online_after(secs)
            ));
            self.guests.ct_started_again(vmid, (at + secs) * 1000);
        }
        l.push(format!(
            "INFO: Finished Backup of VM {vmid} ({})",
            hms(secs)
        ));
        l.push(format!("INFO: Backup finished at {}", timestamp(at + secs)));
        Ok(l)
    }

    /// The type of the storage a volume is on.
    fn backup_storage_kind(&self, volid: &str) -> Option<String> {
        let (sid, _) = parse_volid(volid)?;
        self.storage.find(sid).map(|s| s.kind.clone())
    }
}
