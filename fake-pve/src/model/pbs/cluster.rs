//! The cluster's ways to its Proxmox Backup Servers: the area itself,
//! whether a storage is a `pbs` one, and the prune task of such a
//! storage (the storages' retention, the server's snapshots).

use crate::model::Result;
use crate::model::cluster::{Cluster, Storage};

impl Cluster {
    /// The Proxmox Backup Servers.
    pub fn pbs(&self) -> &super::Pbs {
        &self.pbs
    }

    /// The Proxmox Backup Servers, to change (a snapshot's attributes).
    pub fn pbs_mut(&mut self) -> &mut super::Pbs {
        &mut self.pbs
    }

    /// Storage `sid` if it is a `pbs` storage usable on `node`.
    ///
    /// # Errors
    /// The storage checks (`storage 'x' does not exist`, disabled...).
    pub fn pbs_storage(&self, sid: &str, node: &str) -> Result<Option<Storage>> {
        let s = self.storage.usable_storage(sid, node)?;
        Ok((s.kind == "pbs").then(|| s.clone()))
    }

    /// `DELETE .../prunebackups` of a `pbs` storage: the `prunebackups`
    /// task that prunes each group (the retention is read in the
    /// worker, as for other storages).
    ///
    /// # Errors
    /// A bad `prune-backups` (400).
    pub fn pbs_prune_worker(
        &self,
        s: &Storage,
        node: &str,
        given: Option<&str>,
        vmid: Option<u32>,
        kind: Option<&str>,
    ) -> Result<crate::model::tasks::Worker> {
        use crate::model::tasks::Worker;
        let sid = s.storage.as_str();
        let id = vmid.map_or_else(|| sid.to_string(), |v| format!("{v}@{sid}"));
        let keep = match self.storage.prune_keep(sid, node, given) {
            Ok(k) => k,
            Err(crate::model::Error::Invalid(m)) => return Err(crate::model::Error::Invalid(m)),
            Err(e) => return Ok(Worker::new("prunebackups", &id).fail(e.to_string())),
        };
        let (marks, groups) = match self.pbs.prune_marks(s, vmid, kind, &keep) {
            Ok(m) => m,
            Err(e) => return Ok(Worker::new("prunebackups", &id).fail(e.to_string())),
        };
        Ok(crate::model::backup::prune::prune_worker(
            &id, node, sid, marks, groups,
        ))
    }
}
