//! A backup to a Proxmox Backup Server (pve-manager `VZDump.pm` with
//! `opts->{pbs}`; qemu-server `VZDump/QemuServer.pm` `archive_pbs` and
//! its status loop; pve-container `VZDump/LXC.pm`'s
//! `proxmox-backup-client backup`; pve-storage `PBSPlugin.pm`
//! `prune_backups`).
//!
//! The snapshot `vm/ID/TIME` or `ct/ID/TIME` goes into the storage's
//! datastore and namespace with the files such a backup uploads; notes,
//! protection and the retention are then applied to it and its group as
//! the plugin does.

use super::super::Archive;
use super::super::prune::{KeepOptions, PruneEntry, mark_group};
use super::units::{binary_units, render_bytes};
use super::{DumpJob, retention};
use crate::model::backup::BackupOps;
use crate::model::cluster::Storage;
use crate::model::pbs::{SnapFile, Snapshot, repository, rfc3339, storage_ns};

/// PBS's `HumanByte` (`403.456 MiB`).
fn human(bytes: u64) -> String {
    binary_units(bytes, 3)
}

/// What a guest's PBS backup is about.
pub(super) struct PbsDump<'a> {
    pub storage: &'a Storage,
    pub vmid: u32,
    /// `vm` or `ct`.
    pub btype: &'static str,
    pub at: i64,
    pub secs: i64,
    pub archive: Archive,
    /// The `{{guestname}}` of the notes.
    pub guestname: String,
}

impl BackupOps<'_> {
    /// Whether the group has a snapshot already (an incremental backup).
    fn has_previous(&self, s: &Storage, btype: &str, vmid: u32) -> bool {
        self.pbs
            .list(s, Some(vmid))
            .is_ok_and(|l| l.iter().any(|x| x.btype == btype))
    }

    /// A VM's PBS archive: from `creating Proxmox Backup Server archive`
    /// to the transfer's summary. The disks' bytes go up in full the
    /// first time; a running VM with an earlier snapshot in the group
    /// sends only its dirty blocks.
    ///
    /// # Errors
    /// The log so far and why the backup failed (a server not reached).
    pub(super) fn pbs_vm_archive(
        &mut self,
        job: &DumpJob,
        d: &PbsDump<'_>,
        running: bool,
        mode: &str,
        agent: bool,
        l: &mut Vec<String>,
    ) -> Result<u64, String> {
        let s = d.storage;
        let vmid = d.vmid;
        l.push(format!(
            "INFO: creating Proxmox Backup Server archive 'vm/{vmid}/{}'",
            rfc3339(d.at)
        ));
        // get_and_check_pbs_encryption_config
        if let Some(e) = self.pbs.missing_key_error(s) {
            return Err(e);
        }
        if self.pbs.key(&s.storage).is_some() {
            l.push(if s.options.contains_key("master-pubkey") {
                "INFO: enabling encryption with master key feature".into()
            } else {
                "INFO: enabling encryption".into()
            });
        }
        let stopped = !running || mode == "stop";
        if stopped {
            l.push("INFO: starting kvm to execute backup task".into());
        }
        if running && mode == "snapshot" && agent {
            l.push("INFO: issuing guest-agent 'fs-freeze' command".into());
            l.push("INFO: issuing guest-agent 'fs-thaw' command".into());
        }
        l.push("INFO: starting backup via QMP command".into());
        if let Err(e) = self.pbs.datastore(s) {
            let msg = format!(
                "VM {vmid} qmp command 'backup' failed - backup connect failed: command error: {}",
                e.client_message()
            );
            l.push(format!("ERROR: {msg}"));
            if stopped {
                l.push("INFO: stopping kvm after backup task".into());
            }
            return Err(msg);
        }
        l.push(format!("INFO: started backup task '{}'", job.uuid));
        if running && mode != "stop" {
            l.push("INFO: resuming VM again".into());
        }
        let previous = self.has_previous(s, "vm", vmid);
        let total: u64 = d.archive.disks.iter().map(|x| x.size).sum();
        let mut target = total;
        for disk in &d.archive.disks {
            let status = if running && !stopped && previous {
                let dirty = disk.size / 64;
                format!(
                    "OK ({} of {} dirty)",
                    render_bytes(dirty),
                    render_bytes(disk.size)
                )
            } else {
                "created new".into()
            };
            l.push(format!("INFO: {}: dirty-bitmap status: {status}", disk.key));
        }
        if running && !stopped && previous {
            target = total / 64;
            l.push(format!(
                "INFO: using fast incremental mode (dirty-bitmap), {} dirty of {} total",
                render_bytes(target),
                render_bytes(total)
            ));
        }
        let secs = d.secs.max(1);
        let per_sec = |b: u64| {
            if b == 0 {
                "0 B/s".to_string()
            } else {
                format!("{}/s", render_bytes(b / u64::try_from(secs).unwrap_or(1)))
            }
        };
        // What a fresh guest's disks hold: mostly zeroes.
        let zero = target - target / 32;
        let written = target - zero;
        l.push(format!(
            "INFO: 100% ({t} of {t}) in {secs}s, read: {}, write: {}",
            per_sec(target),
            per_sec(written),
            t = render_bytes(target)
        ));
        if zero > 0 && !previous {
            l.push(format!(
                "INFO: backup is sparse: {} ({}%) total zero data",
                render_bytes(zero),
                zero * 100 / target.max(1)
            ));
        }
        let reused = if previous { total - written } else { zero };
        if reused > 0 {
            l.push(format!(
                "INFO: backup was done incrementally, reused {} ({}%)",
                render_bytes(reused),
                reused * 100 / total.max(1)
            ));
        }
        if target > 0 {
            l.push(format!(
                "INFO: transferred {} in {secs} seconds ({})",
                render_bytes(target),
                per_sec(target)
            ));
        }
        if stopped {
            l.push("INFO: stopping kvm after backup task".into());
        }
        let conf_len = crate::model::qemu::Vm::new(
            vmid,
            "",
            crate::model::qemu::VmStatus::Stopped,
            d.archive.config.clone(),
        )
        .config_text()
        .len() as u64;
        let mut files = vec![("qemu-server.conf.blob".to_string(), conf_len + 52)];
        for disk in &d.archive.disks {
            files.push((format!("drive-{}.img.fidx", disk.key), disk.size));
        }
        self.put_snapshot(job, d, files, l)?;
        Ok(total)
    }

    /// A container's PBS archive: `proxmox-backup-client backup` and
    /// what it prints.
    ///
    /// # Errors
    /// The log so far and why the backup failed.
    pub(super) fn pbs_ct_archive(
        &mut self,
        job: &DumpJob,
        d: &PbsDump<'_>,
        snapdir: &str,
        l: &mut Vec<String>,
    ) -> Result<u64, String> {
        let s = d.storage;
        let vmid = d.vmid;
        let name = format!("ct/{vmid}/{}", rfc3339(d.at));
        l.push(format!(
            "INFO: creating Proxmox Backup Server archive '{name}'"
        ));
        let pid = 1000
            + job
                .uuid
                .bytes()
                .fold(0u32, |a, b| (a * 31 + u32::from(b)) % 60_000);
        let tmpdir = format!("/var/tmp/vzdumptmp{pid}_{vmid}");
        let unprivileged = d
            .archive
            .config
            .get("unprivileged")
            .is_some_and(|v| v == "1");
        // pbs_open_encryption_key
        if let Some(e) = self.pbs.missing_key_error(s) {
            return Err(e);
        }
        let crypt = match self.pbs.crypt_args(&s.storage) {
            c if s.options.contains_key("master-pubkey") && self.pbs.key(&s.storage).is_some() => {
                format!("{c} --master-pubkey-fd=15")
            }
            c => c.to_string(),
        };
        let userns = if unprivileged {
            "lxc-usernsexec -m u:0:100000:65536 -m g:0:100000:65536 -- "
        } else {
            ""
        };
        let skip = if unprivileged {
            " --skip-lost-and-found"
        } else {
            ""
        };
        let repo = repository(s);
        let ns = storage_ns(s);
        let ns_arg = if ns.is_empty() {
            String::new()
        } else {
            format!(" --ns {ns}")
        };
        l.push(format!(
            "INFO: run: {userns}/usr/bin/proxmox-backup-client backup {crypt} pct.conf:{tmpdir}/etc/vzdump/pct.conf root.pxar:{snapdir} --include-dev {snapdir}/.{skip} --exclude=/tmp/?* --exclude=/var/tmp/?* --exclude=/var/run/?*.pid --backup-type ct --backup-id {vmid} --backup-time {} --repository {repo}{ns_arg}",
            d.at
        ));
        if let Err(e) = self.pbs.datastore(s) {
            l.push(format!("INFO: Error: {}", e.client_message()));
            return Err(format!(
                "command '{userns}/usr/bin/proxmox-backup-client backup ...' failed: exit code 255"
            ));
        }
        let previous = self.has_previous(s, "ct", vmid);
        let total: u64 = d.archive.disks.iter().map(|x| x.size).sum();
        // What the archive holds: the used part of the volumes.
        let data = total / 8;
        let secs = d.secs.max(1);
        let node = job.node.as_str();
        let shown_repo = {
            let server = s.options.get("server").map_or("", String::as_str);
            let port = s.options.get("port").map_or("8007", String::as_str);
            let user = s.options.get("username").map_or("root@pam", String::as_str);
            let store = s.options.get("datastore").map_or("", String::as_str);
            format!("{user}@{server}:{port}:{store}")
        };
        l.push(format!("INFO: Starting backup: {name}"));
        l.push(format!("INFO: Client name: {node}"));
        l.push(format!(
            "INFO: Starting backup protocol: {}",
            crate::clock::ctime(d.at)
        ));
        if previous {
            l.push(format!(
                "INFO: Downloading previous manifest ({})",
                crate::clock::ctime(d.at - 86_400)
            ));
        } else {
            l.push("INFO: No previous manifest available.".into());
        }
        l.push(format!(
            "INFO: Upload config file '{tmpdir}/etc/vzdump/pct.conf' to '{shown_repo}' as pct.conf.blob"
        ));
        l.push(format!(
            "INFO: Upload directory '{snapdir}' to '{shown_repo}' as root.pxar.didx"
        ));
        let sent = if previous { data / 50 } else { data };
        let avg = sent / u64::try_from(secs).unwrap_or(1);
        l.push(format!(
            "INFO: root.pxar: had to backup {} of {} (compressed {}) in {secs}.00 s (average {}/s)",
            human(sent),
            human(data),
            human(sent * 2 / 5),
            human(avg)
        ));
        if previous {
            let reused = data - sent;
            l.push(format!(
                "INFO: root.pxar: backup was done incrementally, reused {} ({:.1}%)",
                human(reused),
                reused as f64 * 100.0 / data.max(1) as f64
            ));
        }
        let catalog = 4096 + data / 40_000;
        l.push(format!(
            "INFO: Uploaded backup catalog ({})",
            human(catalog)
        ));
        l.push(format!("INFO: Duration: {secs}.00s"));
        l.push(format!(
            "INFO: End Time: {}",
            crate::clock::ctime(d.at + secs)
        ));
        let conf_len = crate::model::lxc::Ct::new(vmid, node, d.archive.config.clone())
            .config_text()
            .len() as u64;
        let files = vec![
            ("pct.conf.blob".to_string(), conf_len + 52),
            ("root.pxar.didx".to_string(), data),
            ("catalog.pcat1.didx".to_string(), catalog),
        ];
        self.put_snapshot(job, d, files, l)?;
        Ok(data)
    }

    /// The snapshot into its datastore, then its notes, protection and
    /// the prune of its group (`VZDump.pm` after `archive`).
    fn put_snapshot(
        &mut self,
        job: &DumpJob,
        d: &PbsDump<'_>,
        files: Vec<(String, u64)>,
        l: &mut Vec<String>,
    ) -> Result<(), String> {
        let s = d.storage;
        let fingerprint = self.pbs.key(&s.storage).map(|_| {
            self.pbs
                .key_fingerprint(&s.storage)
                .or_else(|| s.options.get("encryption-key").cloned())
                .unwrap_or_default()
        });
        let mode = if fingerprint.is_some() {
            "encrypt"
        } else {
            "none"
        };
        let mut snap_files: Vec<SnapFile> = files
            .into_iter()
            .map(|(filename, size)| SnapFile {
                filename,
                size,
                crypt_mode: mode.into(),
            })
            .collect();
        for f in ["index.json.blob", "client.log.blob"] {
            snap_files.push(SnapFile {
                filename: f.into(),
                size: if f == "index.json.blob" { 540 } else { 2048 },
                crypt_mode: "none".into(),
            });
        }
        snap_files.sort_by(|a, b| a.filename.cmp(&b.filename));
        let owner = s
            .options
            .get("username")
            .cloned()
            .unwrap_or_else(|| "root@pam".into());
        let server = s.options.get("server").cloned().unwrap_or_default();
        let store = s.options.get("datastore").cloned().unwrap_or_default();
        let upid = format!(
            "UPID:{server}:{:08X}:{:08X}:{:08X}:{:08X}:verify:{store}\\x3a{}-{}-{:08X}:{owner}:",
            700 + d.vmid % 1000,
            d.at % 0x0100_0000,
            d.vmid,
            d.at + d.secs,
            d.btype,
            d.vmid,
            d.at
        );
        let snap = Snapshot {
            ns: storage_ns(s),
            btype: d.btype.into(),
            id: d.vmid.to_string(),
            time: d.at,
            files: snap_files,
            notes: None,
            protected: false,
            fingerprint,
            verification: None,
            owner,
            archive: d.archive.clone(),
        };
        let name = format!("backup/{}", snap.name());
        self.pbs.put(s, snap, &upid)?;
        if let Some(t) = job.notes_template.as_deref().filter(|t| !t.is_empty()) {
            l.push("INFO: adding notes to backup".into());
            let cluster = self
                .nodes
                .cluster_name()
                .cloned()
                .unwrap_or_else(|| "standalone node".into());
            let notes = super::render_notes(t, &cluster, &d.guestname, &job.node, d.vmid);
            let _ = self.pbs.set_attrs(s, &name, Some(notes), None);
        }
        if job.protected {
            l.push("INFO: marking backup as protected".into());
            let _ = self.pbs.set_attrs(s, &name, None, Some(true));
        }
        if job.remove {
            let keep = retention(job, s);
            l.push(format!(
                "INFO: prune older backups with retention: {}",
                keep.describe()
            ));
            let group = format!("{}/{}", d.btype, d.vmid);
            l.push(format!(
                "INFO: running 'proxmox-backup-client prune' for '{group}'"
            ));
            let pruned = self.prune_pbs_group(s, d.btype, d.vmid, &keep);
            let extra = if pruned > 0 {
                " not covered by keep-retention policy"
            } else {
                ""
            };
            l.push(format!("INFO: pruned {pruned} backup(s){extra}"));
        }
        Ok(())
    }

    /// `proxmox-backup-client prune` of one group: the snapshots the
    /// retention does not keep are forgotten (protected ones stay).
    /// Answers how many went.
    pub(in crate::model) fn prune_pbs_group(
        &mut self,
        s: &Storage,
        btype: &str,
        vmid: u32,
        keep: &KeepOptions,
    ) -> usize {
        let Ok(list) = self.pbs.list(s, Some(vmid)) else {
            return 0;
        };
        let mut group: Vec<PruneEntry> = list
            .iter()
            .filter(|x| x.btype == btype)
            .map(|x| PruneEntry {
                volid: format!("{}:backup/{}", s.storage, x.name()),
                ctime: x.time,
                kind: btype.to_string(),
                vmid: Some(vmid),
                mark: if x.protected {
                    "protected".into()
                } else {
                    String::new()
                },
            })
            .collect();
        mark_group(&mut group, keep);
        let mut pruned = 0;
        for e in group.iter().filter(|e| e.mark == "remove") {
            if let Some((_, name)) = e.volid.split_once(':')
                && self.pbs.forget(s, name).is_ok()
            {
                pruned += 1;
            }
        }
        pruned
    }
}
