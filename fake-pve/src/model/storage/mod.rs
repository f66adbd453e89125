//! Storage: `storage.cfg`, the volumes on each storage and what they
//! hold (pve-storage).
//!
//! - [`cfg`]: `storage.cfg` as the API shows and changes it, and each
//!   storage's status on a node;
//! - `volumes` (re-exported here): volumes, their allocation with PVE's
//!   naming rules per storage type, capacity and usage;
//! - [`content`]: ISO images, templates, backups, snippets and imports,
//!   their attributes, and the content, upload and download calls;
//! - [`ops`]: what guest tasks do to volumes (features, base volumes,
//!   linked clones, resizing, renaming).

pub mod cfg;
pub mod content;
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
}
