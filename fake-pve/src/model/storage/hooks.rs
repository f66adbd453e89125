//! `POST`, `PUT` and `DELETE /storage`: what pve-storage's
//! `API2/Storage/Config.pm` does beyond `storage.cfg`, with the rest of
//! the cluster: a plugin's hooks that keep files of their own (a `pbs`
//! storage's encryption key) and the activation a new storage goes
//! through on the local node, so that an unreachable server is refused
//! at once; and a storage's status where it is another server's
//! (a `pbs` storage reports its datastore's figures, or is inactive when
//! the server does not answer).

use std::collections::BTreeMap;

use crate::model::cluster::{Cluster, Storage};
use crate::model::storage::cfg::{StorageRef, StorageStatus};
use crate::model::{Context, Error, Result};

/// What a create or an update answers: the storage, and the `config` a
/// plugin hands back (a `pbs` storage's key, generated or given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// `{storage, type}`.
    pub storage: StorageRef,
    /// `config.encryption-key`.
    pub encryption_key: Option<String>,
}

/// Whether `delete` names `key` (a `delete` list as the call gives it).
fn deletes(delete: &[String], key: &str) -> bool {
    delete.iter().any(|k| k == key)
}

impl Cluster {
    /// `POST /storage`: `storage.cfg`'s checks and the plugin's
    /// `on_add_hook`, then, for a storage enabled on the local node, its
    /// activation there (a `pbs` storage's server and datastore must
    /// answer); a failed activation leaves nothing behind.
    ///
    /// # Errors
    /// Those of [`crate::model::storage::Storages::create`];
    /// `create storage failed: <sid>: error fetching datastores - ...`.
    pub fn create_storage(
        &mut self,
        p: &BTreeMap<String, String>,
        rq: &mut Context,
    ) -> Result<Written> {
        let local = self.nodes.local().to_string();
        let now = rq.now();
        let pbs = &mut self.pbs;
        let mut encryption_key = None;
        let storage = self.storage.create_with(p, |s| {
            if s.kind != "pbs" {
                return Ok(());
            }
            let key = p.get("encryption-key").map(String::as_str);
            encryption_key = pbs
                .on_add_hook(s, key, p.contains_key("master-pubkey"), rq, now)
                .map_err(|e| Error::failed(format!("create storage failed: {e}")))?;
            let enabled = !s.disable && s.nodes.as_ref().is_none_or(|n| n.contains(&local));
            if enabled && let Err(e) = pbs.datastore(s) {
                pbs.on_delete_hook(&s.storage);
                return Err(Error::failed(format!(
                    "create storage failed: {}",
                    e.activate_message(&s.storage)
                )));
            }
            Ok(())
        })?;
        Ok(Written {
            storage,
            encryption_key,
        })
    }

    /// `PUT /storage/{storage}`: a `pbs` storage's `on_update_hook`
    /// replaces or removes its key file and `master-pubkey`.
    ///
    /// # Errors
    /// Those of [`crate::model::storage::Storages::update`];
    /// `update storage failed: Value does not seems like a valid, JSON
    /// formatted encryption key!`.
    pub fn update_storage(
        &mut self,
        sid: &str,
        p: &BTreeMap<String, String>,
        delete: &[String],
        rq: &mut Context,
    ) -> Result<Written> {
        let now = rq.now();
        let pbs = &mut self.pbs;
        let mut encryption_key = None;
        let storage = self
            .storage
            .update_with(sid, p, delete, |s: &mut Storage| {
                if s.kind != "pbs" {
                    return Ok(());
                }
                let key = match p.get("encryption-key") {
                    Some(k) => Some(Some(k.as_str())),
                    None => deletes(delete, "encryption-key").then_some(None),
                };
                let master = if p.contains_key("master-pubkey") {
                    Some(true)
                } else {
                    deletes(delete, "master-pubkey").then_some(false)
                };
                encryption_key = pbs
                    .on_update_hook(s, key, master, rq, now)
                    .map_err(|e| Error::failed(format!("update storage failed: {e}")))?;
                Ok(())
            })?;
        Ok(Written {
            storage,
            encryption_key,
        })
    }

    /// `DELETE /storage/{storage}`: the storage, its key file, and the
    /// ACLs on it.
    ///
    /// # Errors
    /// `delete storage failed: storage 'x' does not exist`.
    pub fn delete_storage(&mut self, sid: &str) -> Result<()> {
        self.storage.delete(sid)?;
        self.pbs.on_delete_hook(sid);
        self.access.remove_storage_access(sid);
        Ok(())
    }

    /// `storage_info` of storage `s` on `node` (see
    /// [`crate::model::storage::Storages::status`]); an `rbd` storage
    /// answers its pool's figures, a `pbs` storage its datastore's
    /// `status`, and is not active (all figures 0) when its server or
    /// datastore does not answer.
    pub fn storage_status(
        &self,
        s: &Storage,
        node: &str,
        content: Option<&str>,
    ) -> Option<StorageStatus> {
        let mut st = self.storage.status(s, node, content)?;
        crate::model::ceph::usage::rbd_status(&self.ceph, &self.storage, node, &mut st);
        if s.kind == "pbs" && st.enabled == 1 {
            let (active, total, used) = match self.pbs.datastore(s) {
                Ok(ds) => {
                    let (total, used) = ds.usage(s.total);
                    (1, total, used)
                }
                Err(_) => (0, 0, 0),
            };
            st.active = active;
            st.total = total;
            st.used = used;
            st.avail = total - used;
            st.used_fraction = (total > 0).then(|| used as f64 / total as f64);
        }
        Some(st)
    }
}
