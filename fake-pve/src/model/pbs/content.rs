//! A `pbs` storage's content as PVE's `PBSPlugin` shows and changes it:
//! `list_volumes`, `path`, `volume_size_info`, the `notes` and
//! `protected` attributes, `free_image` (`forget`), and the checks of
//! `activate_storage` before each.

use serde::Serialize;

use super::{Pbs, Snapshot, parse_volname, repository, storage_ns};
use crate::model::cluster::Storage;
use crate::model::storage::content::{ContentItem, VolumeInfo};
use crate::model::{Error, Result};

/// The verification of a listed snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ItemVerification {
    /// `ok` or `failed`.
    pub state: String,
    /// The verify task.
    pub upid: String,
}

/// A row of a `pbs` storage's content, with `list_volumes`'s keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PbsItem {
    /// `STORAGE:backup/vm/100/2026-11-29T18:00:00Z`.
    pub volid: String,
    /// `pbs-vm` or `pbs-ct`.
    pub format: String,
    /// The sum of the snapshot's files.
    pub size: u64,
    /// `backup`.
    pub content: &'static str,
    /// The guest.
    pub vmid: u32,
    /// The backup time.
    pub ctime: i64,
    /// `qemu` or `lxc`.
    pub subtype: &'static str,
    /// The last verification.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification: Option<ItemVerification>,
    /// The snapshot's comment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// 1 for a protected snapshot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protected: Option<u8>,
    /// The encryption key's fingerprint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encrypted: Option<String>,
}

fn item(s: &Storage, x: &Snapshot) -> PbsItem {
    PbsItem {
        volid: format!("{}:backup/{}", s.storage, x.name()),
        format: format!("pbs-{}", x.btype),
        size: x.size(),
        content: "backup",
        vmid: x.id.parse().unwrap_or(0),
        ctime: x.time,
        subtype: if x.btype == "vm" { "qemu" } else { "lxc" },
        verification: x.verification.as_ref().map(|v| ItemVerification {
            state: v.state.clone(),
            upid: v.upid.clone(),
        }),
        notes: x
            .notes
            .as_ref()
            .map(|n| n.lines().next().unwrap_or_default().to_string()),
        protected: x.protected.then_some(1),
        encrypted: x.fingerprint.clone(),
    }
}

impl Pbs {
    /// `activate_storage`: the server answers and has the datastore.
    ///
    /// # Errors
    /// `<sid>: error fetching datastores - ...`, `<sid>: Cannot find
    /// datastore 'x', check permissions and existence!`.
    pub fn activate(&self, s: &Storage) -> Result<()> {
        self.datastore(s)
            .map(|_| ())
            .map_err(|e| Error::failed(e.activate_message(&s.storage)))
    }

    /// `GET .../content` of a `pbs` storage: its snapshots (nothing
    /// unless `backup` content is asked for).
    ///
    /// # Errors
    /// Those of [`Pbs::activate`] and [`Pbs::list`].
    pub fn content_list(
        &self,
        s: &Storage,
        content: Option<&str>,
        vmid: Option<u32>,
    ) -> Result<Vec<ContentItem>> {
        self.activate(s)?;
        if content.is_some_and(|c| c != "backup") || !s.content.iter().any(|c| c == "backup") {
            return Ok(Vec::new());
        }
        let mut items: Vec<ContentItem> = self
            .list(s, vmid)
            .map_err(Error::failed)?
            .into_iter()
            .map(|x| ContentItem::Pbs(item(s, x)))
            .collect();
        items.sort_by_key(|v| v.volid().to_lowercase());
        Ok(items)
    }

    /// `GET .../content/{volume}`: `path` (`pbs://...`), the files' size,
    /// `format`, `notes` and `protected`.
    ///
    /// # Errors
    /// The name's parse, the server, a snapshot that is not there.
    pub fn volume_info(&self, s: &Storage, name: &str) -> Result<(VolumeInfo, bool)> {
        let (btype, ..) = parse_volname(name).map_err(Error::failed)?;
        self.activate(s)?;
        let snap = self.snapshot(s, name).map_err(Error::failed)?;
        let mut path = format!(
            "pbs://{}/{}",
            repository(s),
            name.strip_prefix("backup/").unwrap_or(name)
        );
        let ns = storage_ns(s);
        if !ns.is_empty() {
            path.push_str(&format!("?ns={}", ns.replace('/', "%2f")));
        }
        let size = snap.size();
        Ok((
            VolumeInfo {
                path,
                size,
                used: size,
                format: format!("pbs-{btype}"),
                notes: Some(snap.notes.clone().unwrap_or_default()),
                protected: None,
            },
            snap.protected,
        ))
    }

    /// `PUT .../content/{volume}` on a `pbs` storage: the snapshot's
    /// notes, then its protection (within `max-protected-backups`).
    ///
    /// # Errors
    /// The lookups; `The number of protected backups per guest is
    /// limited to N on storage 'x'`.
    pub fn update_volume_attrs(
        &mut self,
        s: &Storage,
        name: &str,
        notes: Option<String>,
        protected: Option<bool>,
        max_protected: i64,
    ) -> Result<()> {
        let (btype, id, _) = parse_volname(name).map_err(Error::failed)?;
        self.activate(s)?;
        let snap = self.snapshot(s, name).map_err(Error::failed)?;
        if protected == Some(true) && !snap.protected && max_protected > -1 {
            let vmid = id.parse::<u32>().ok();
            let count = self
                .list(s, vmid)
                .map_err(Error::failed)?
                .iter()
                .filter(|x| x.protected && x.btype == btype)
                .count();
            if i64::try_from(count).unwrap_or(i64::MAX) >= max_protected {
                return Err(Error::failed(format!(
                    "The number of protected backups per guest is limited to {max_protected} on storage '{}'",
                    s.storage
                )));
            }
        }
        self.set_attrs(s, name, notes, protected)
            .map_err(Error::failed)
    }

    /// `prune_backups` of a `pbs` storage: the snapshots of each group
    /// (of `vmid` and of `kind`, `qemu` or `lxc`, if given) marked as
    /// `proxmox-backup-client prune` keeps them (`protected` ones stay),
    /// and the groups, in listing order.
    ///
    /// # Errors
    /// `failed to get list of all backups to prune - ...`.
    pub fn prune_marks(
        &self,
        s: &Storage,
        vmid: Option<u32>,
        kind: Option<&str>,
        keep: &crate::model::backup::prune::KeepOptions,
    ) -> Result<(Vec<crate::model::backup::prune::PruneEntry>, Vec<String>)> {
        use crate::model::backup::prune::{PruneEntry, mark_group};
        let btype = kind.map(|k| match k {
            "qemu" => "vm",
            "lxc" => "ct",
            other => other,
        });
        let list = self.list(s, vmid).map_err(|e| {
            Error::failed(format!("failed to get list of all backups to prune - {e}"))
        })?;
        let mut groups: Vec<String> = Vec::new();
        for x in list.iter().filter(|x| btype.is_none_or(|t| x.btype == t)) {
            let g = format!("{}/{}", x.btype, x.id);
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
        let mut out = Vec::new();
        for g in &groups {
            let mut group: Vec<PruneEntry> = list
                .iter()
                .filter(|x| format!("{}/{}", x.btype, x.id) == *g)
                .map(|x| PruneEntry {
                    volid: format!("{}:backup/{}", s.storage, x.name()),
                    ctime: x.time,
                    kind: if x.btype == "vm" { "qemu" } else { "lxc" }.into(),
                    vmid: x.id.parse().ok(),
                    mark: if x.protected {
                        "protected".into()
                    } else {
                        String::new()
                    },
                })
                .collect();
            mark_group(&mut group, keep);
            group.sort_by_key(|e| e.ctime);
            out.extend(group);
        }
        Ok((out, groups))
    }

    /// What `DELETE .../content/{volume}`'s `imgdel` task logs or fails
    /// with, and the task's id (`<vmid>@<storage>`).
    ///
    /// # Errors
    /// A name that is not a PBS volume name.
    pub fn plan_delete(
        &self,
        s: &Storage,
        name: &str,
    ) -> Result<(String, std::result::Result<Vec<String>, String>)> {
        let (_, id, _) = parse_volname(name).map_err(Error::failed)?;
        let task_id = format!("{id}@{}", s.storage);
        let outcome = match self.activate(s) {
            Err(e) => Err(e.to_string()),
            Ok(()) => match self.snapshot(s, name) {
                Err(e) => Err(format!("proxmox-backup-client failed: Error: {e}")),
                Ok(x) if x.protected => Err(
                    "proxmox-backup-client failed: Error: cannot remove protected snapshot".into(),
                ),
                Ok(_) => Ok(vec![format!("Removed volume '{}:{name}'", s.storage)]),
            },
        };
        Ok((task_id, outcome))
    }
}
