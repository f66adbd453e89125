//! Backups: `vzdump` archives, their restore, pruning, and the backup
//! jobs of `jobs.cfg` (pve-manager `API2/VZDump.pm`, `VZDump.pm`,
//! `API2/Backup.pm`, `API2/BackupInfo.pm`; qemu-server
//! `VZDump/QemuServer.pm`, `API2/Qemu.pm` restore; pve-storage
//! `prune_backups`, `prune_mark_backup_group`).
//!
//! A backup is a volume of the storage's `backup` content
//! (`backup/vzdump-qemu-100-2026_09_21-12_00_00.vma.zst`) plus the
//! [`Archive`] it holds: the guest's type, its VMID, its config as
//! backed up and the volumes saved. The archive keeps the type and the
//! config whatever the guest, so that a container's `tar` archive is
//! restored the same way a VM's `vma` is.
//!
//! - [`dump`]: `POST /nodes/{node}/vzdump`, its task and its log, for
//!   VMs (`vma`) and containers (`tar`, pve-container `VZDump/LXC.pm`);
//! - [`restore`]: `POST /nodes/{node}/qemu` with `archive` (a container's
//!   `restore=1` is `model::lxc`'s, from the same archives);
//! - [`prune`]: the keep-last/hourly/... selection and the prune calls;
//! - [`schedule`]: PVE's calendar events (`sat 02:00`, `*:0/15`);
//! - [`jobs`]: `/cluster/backup` and the jobs the clock runs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub mod dump;
pub mod file_restore;
pub mod jobs;
pub mod prune;
pub mod restore;
pub mod schedule;

pub use dump::{DumpJob, VzdumpRequest};
pub use jobs::Job;
pub use restore::{RestoreJob, RestoreRequest};

/// A saved volume of a guest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchiveDisk {
    /// The config key (`scsi0`, `rootfs`).
    pub key: String,
    /// The volume as it was (`local-lvm:vm-100-disk-0`).
    pub volid: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its format (`raw`, `qcow2`).
    pub format: String,
}

/// What a backup volume holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Archive {
    /// `qemu` or `lxc`.
    pub guest: String,
    /// The guest backed up.
    pub vmid: u32,
    /// Its config as backed up: no pending changes, snapshots or unused
    /// volumes, `lock` dropped.
    pub config: BTreeMap<String, String>,
    /// The volumes saved, in config order.
    pub disks: Vec<ArchiveDisk>,
}

/// What the cluster keeps about backups: the archives by volume, and the
/// backup jobs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Backups {
    /// Archives by `<scope>|<volid>` (scope: the node, empty for a shared
    /// storage).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    archives: BTreeMap<String, Archive>,
    /// Backup jobs by id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    jobs: BTreeMap<String, Job>,
}

/// The key of an archive: a backup on a local storage is the node's own.
pub fn archive_key(shared: bool, node: &str, volid: &str) -> String {
    let scope = if shared { "" } else { node };
    format!("{scope}|{volid}")
}

impl Backups {
    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.archives.is_empty() && self.jobs.is_empty()
    }

    /// The archive under `key` (see [`archive_key`]).
    pub fn archive(&self, key: &str) -> Option<&Archive> {
        self.archives.get(key)
    }

    /// Records what a backup volume holds.
    pub fn put_archive(&mut self, key: String, archive: Archive) {
        self.archives.insert(key, archive);
    }

    /// Forgets an archive whose volume is gone.
    pub fn drop_archive(&mut self, key: &str) {
        self.archives.remove(key);
    }

    /// The backup jobs, by id.
    pub fn jobs(&self) -> &BTreeMap<String, Job> {
        &self.jobs
    }

    pub(crate) fn jobs_mut(&mut self) -> &mut BTreeMap<String, Job> {
        &mut self.jobs
    }

    /// `remove_vmid_from_backup_jobs` (a guest destroyed with `purge`):
    /// the VMID leaves every job's `vmid` list, a job left without guests
    /// goes, and it leaves `exclude` lists.
    pub fn remove_vmid_from_jobs(&mut self, vmid: u32) {
        self.jobs.retain(|_, job| job.remove_vmid(vmid));
    }
}

/// What a backup task does when it ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum BackupOp {
    /// `vzdump`: write the archives, unlock the guests, prune.
    Dump(Box<DumpJob>),
    /// `qmrestore`: the guest from an archive.
    Restore(Box<RestoreJob>),
    /// `prunebackups`: remove the backups marked `remove`.
    Prune {
        /// The node whose view of the storage is pruned.
        node: String,
        /// The storage.
        storage: String,
        /// The volumes to remove, as the request marked them.
        volids: Vec<String>,
        /// On a Proxmox Backup Server: the groups pruned (`vm/100`),
        /// each logged as `proxmox-backup-client prune` runs for it.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        groups: Vec<String>,
    },
}

/// The areas a backup's steps read and change: the guests (their locks,
/// a restored VM), the storages (archives are volumes), the backups kept,
/// the ACLs and pools (a restored VM's pool, the restore's permission
/// checks), the SDN (bridges those checks read), the members and the
/// release. Built by
/// [`Cluster::backup_ops`](crate::model::cluster::Cluster::backup_ops).
pub struct BackupOps<'a> {
    /// The guests.
    pub(in crate::model) guests: &'a mut crate::model::guests::Guests,
    /// The storages and their volumes.
    pub(in crate::model) storage: &'a mut crate::model::storage::Storages,
    /// Backup archives and jobs.
    pub(in crate::model) backups: &'a mut Backups,
    /// The Proxmox Backup Servers.
    pub(in crate::model) pbs: &'a mut crate::model::pbs::Pbs,
    /// Users, ACLs and pools.
    pub(in crate::model) access: &'a mut crate::model::access::Access,
    /// The SDN configuration.
    pub(in crate::model) sdn: &'a crate::model::sdn::Sdn,
    /// The members (the cluster's name in a backup's notes).
    pub(in crate::model) nodes: &'a crate::model::nodes::Nodes,
    /// `datacenter.cfg` (its bandwidth limits).
    pub(in crate::model) datacenter: &'a crate::model::datacenter::Datacenter,
    /// The release.
    pub(in crate::model) version: crate::model::PveVersion,
}

/// What the backup answers read: the guests, the storages, the backups
/// kept and the pools. Built by
/// [`Cluster::backup_reader`](crate::model::cluster::Cluster::backup_reader).
#[derive(Clone, Copy)]
pub struct BackupReader<'a> {
    /// The guests.
    pub(in crate::model) guests: &'a crate::model::guests::Guests,
    /// The storages and their volumes.
    pub(in crate::model) storage: &'a crate::model::storage::Storages,
    /// Backup archives and jobs.
    pub(in crate::model) backups: &'a Backups,
    /// The Proxmox Backup Servers.
    pub(in crate::model) pbs: &'a crate::model::pbs::Pbs,
    /// Users, ACLs and pools.
    pub(in crate::model) access: &'a crate::model::access::Access,
}

impl BackupOps<'_> {
    /// The same areas, to read.
    pub(in crate::model) fn reader(&self) -> BackupReader<'_> {
        BackupReader {
            guests: self.guests,
            storage: self.storage,
            backups: self.backups,
            pbs: self.pbs,
            access: self.access,
        }
    }

    /// The permission checks, over the same areas.
    pub(in crate::model) fn perms(&self) -> crate::model::guest_perm::Perms<'_> {
        crate::model::guest_perm::Perms::of(
            self.access,
            self.storage,
            self.sdn,
            self.guests,
            self.version,
        )
    }

    /// Removes a volume with its attributes, and a backup archive's
    /// content with its volume.
    pub fn drop_volume(&mut self, sid: &str, node: &str, name: &str) {
        if let Some(s) = self.storage.find(sid).filter(|s| s.kind == "pbs").cloned() {
            let _ = self.pbs.forget(&s, name);
            return;
        }
        let shared = self.storage.find(sid).map(|s| s.shared);
        self.storage.drop_volume(sid, node, name);
        if let Some(shared) = shared {
            let volid = format!("{sid}:{name}");
            self.backups
                .drop_archive(&archive_key(shared, node, &volid));
        }
    }
}

/// `YYYY-MM-DD hh:mm:ss` (UTC), as `strftime("%F %H:%M:%S")`.
pub fn timestamp(epoch: i64) -> String {
    let (y, mo, d, h, mi, s, _) = crate::clock::civil(epoch);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}")
}

/// `YYYY_MM_DD-hh_mm_ss` of a backup name.
pub fn name_time(epoch: i64) -> String {
    let (y, mo, d, h, mi, s, _) = crate::clock::civil(epoch);
    format!("{y:04}_{mo:02}_{d:02}-{h:02}_{mi:02}_{s:02}")
}
