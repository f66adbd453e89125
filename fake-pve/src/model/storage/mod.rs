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
