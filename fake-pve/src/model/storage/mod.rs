//! Storage: `storage.cfg`, the volumes on each storage and what they
//! hold (pve-storage).
//!
//! - [`cfg`]: `storage.cfg` as the API shows and changes it, and each
//!   storage's status on a node;
//! - `volumes` (re-exported here): volumes, their allocation with PVE's
//!   naming rules per storage type, capacity and usage;
//! - [`content`]: ISO images, templates, backups, snippets and imports,
//!   their attributes, and the content, upload and download calls;
//! - [`hooks`]: what creating, changing and deleting a storage does
//!   beyond `storage.cfg` (a PBS storage's key and activation), and a
//!   storage's status where another server holds its figures;
//! - [`import`]: what an OVA archive or OVF manifest gives a guest to
//!   import (`import-metadata`);
//! - [`ops`]: what guest tasks do to volumes (features, base volumes,
//!   linked clones, resizing, renaming).

pub mod cfg;
pub mod content;
pub mod hooks;
pub mod import;
pub mod ops;
mod volumes;

pub use volumes::*;

use crate::model::cluster::Storage;

/// `storage.cfg` and the volumes on its storages.
#[derive(Debug, Clone, Default)]
pub struct Storages {
    cfg: Vec<Storage>,
    volumes: Volumes,
}

impl Storages {
    /// The storages of a saved world, in `storage.cfg` order, and their
    /// volumes.
    pub fn new(cfg: Vec<Storage>, volumes: Volumes) -> Self {
        Self { cfg, volumes }
    }

    /// `storage.cfg`, in order.
    pub fn cfg(&self) -> &[Storage] {
        &self.cfg
    }

    /// The storage `sid`.
    pub fn find(&self, sid: &str) -> Option<&Storage> {
        self.cfg.iter().find(|s| s.storage == sid)
    }

    /// The storage `sid`, to change its options.
    pub fn find_mut(&mut self, sid: &str) -> Option<&mut Storage> {
        self.cfg.iter_mut().find(|s| s.storage == sid)
    }

    /// Adds a storage at the end of `storage.cfg`; `false` (and nothing
    /// added) when its id is taken.
    #[must_use]
    pub fn add(&mut self, s: Storage) -> bool {
        if self.find(&s.storage).is_some() {
            return false;
        }
        self.cfg.push(s);
        true
    }

    /// Replaces `storage.cfg` (a node that joined a cluster takes the
    /// cluster's); the volumes stay where they are.
    pub fn replace_cfg(&mut self, cfg: Vec<Storage>) {
        self.cfg = cfg;
    }

    /// Removes storage `sid` from `storage.cfg` (its volumes stay, as
    /// PVE leaves the data where it was).
    pub fn remove(&mut self, sid: &str) -> Option<Storage> {
        let i = self.cfg.iter().position(|s| s.storage == sid)?;
        Some(self.cfg.remove(i))
    }

    /// The volumes.
    pub fn volumes(&self) -> &Volumes {
        &self.volumes
    }

    /// The volumes, to change.
    pub fn volumes_mut(&mut self) -> &mut Volumes {
        &mut self.volumes
    }

    /// `GET /nodes/{node}/storage/{storage}/identity` (9.2): the
    /// storage's type and the id its plugin's `get_identity` gives. Only
    /// Proxmox Backup Server storages have one (the server's
    /// `pbs-instance-id`; fake-pve derives it from the server's name, so
    /// that two storages on one server share it).
    ///
    /// # Errors
    /// The checks of `storage_check_enabled`; the base plugin's `die` for
    /// every other type.
    pub fn identity(&self, sid: &str, node: &str) -> crate::model::Result<(String, String)> {
        use sha2::{Digest, Sha256};
        let s = self.usable_storage(sid, node)?;
        if s.kind != "pbs" {
            return Err(crate::model::Error::failed(
                "get_identity not implemented for this plugin at /usr/share/perl5/PVE/Storage/Plugin.pm line 2681.",
            ));
        }
        let server = s.options.get("server").map_or("", String::as_str);
        let id = Sha256::digest(format!("pbs-instance-id:{server}").as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Ok((s.kind.clone(), id))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn storage(id: &str, kind: &str, server: &str, disable: bool) -> Storage {
        Storage {
            storage: id.into(),
            kind: kind.into(),
            content: vec!["backup".into()],
            shared: true,
            nodes: None,
            disable,
            total: 1 << 40,
            used: 0,
            options: BTreeMap::from([("server".to_string(), server.to_string())]),
        }
    }

    #[test]
    fn only_a_backup_server_has_an_identity_and_one_server_one_id() {
        let s = Storages::new(
            vec![
                storage("pbs-a", "pbs", "backup.example.com", false),
                storage("pbs-b", "pbs", "backup.example.com", false),
                storage("pbs-c", "pbs", "other.example.com", false),
                storage("nfs", "nfs", "198.51.100.5", false),
                storage("off", "pbs", "backup.example.com", true),
            ],
            Volumes::default(),
        );
        let (kind, a) = s.identity("pbs-a", "pve").expect("pbs");
        assert_eq!(kind, "pbs");
        assert_eq!(a.len(), 64);
        assert_eq!(s.identity("pbs-b", "pve").expect("pbs").1, a);
        assert_ne!(s.identity("pbs-c", "pve").expect("pbs").1, a);
        let e = s.identity("nfs", "pve").expect_err("no identity");
        assert!(
            e.to_string()
                .starts_with("get_identity not implemented for this plugin")
        );
        assert_eq!(
            s.identity("off", "pve").expect_err("disabled").to_string(),
            "storage 'off' is disabled"
        );
        assert_eq!(
            s.identity("gone", "pve").expect_err("missing").to_string(),
            "storage 'gone' does not exist"
        );
    }
}
