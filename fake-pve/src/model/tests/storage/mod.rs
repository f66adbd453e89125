//! Storages: `storage.cfg` CRUD, volumes, content listing, allocation and
//! capacity.

use rstest::rstest;
use serde_json::json;

use super::{LAB, T0, World, cluster, fresh, lab, map, refused};
use crate::model::storage::content::{
    DownloadRequest, UploadRequest, file_format, normalize_filename, real_volume_id, vtype,
};
use crate::model::storage::{Volume, VolumeKind, parse_volid, path_based};

mod alloc;
mod cfg;
mod content;
mod transfer;

fn alloc(w: &mut World, sid: &str, vmid: u32, size: u64) -> Result<String, crate::model::Error> {
    let now = w.now();
    w.c.storage
        .alloc_volume(sid, "pve", vmid, &VolumeKind::Disk, None, size, now)
        .map(|(v, _)| v)
}
