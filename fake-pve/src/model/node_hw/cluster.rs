//! The disk tasks' hold on the rest of the cluster: the storage a
//! creation adds (`create_or_update`) and the storages a removal cleans
//! up (`cleanup_storages_for_node`), in pve-storage `API2/Storage/Config.pm`.
//! These are functions of the areas they touch (the node's hardware,
//! the storage configuration, the node list).

use std::collections::BTreeMap;

use super::disks::DiskOp;
use super::{Hardware, NodeHw};
use crate::model::cluster::Storage;
use crate::model::nodes::Nodes;
use crate::model::qemu::EffectResult;
use crate::model::storage::Storages;
use crate::model::tasks::{TaskEffect, Worker};
use crate::model::{Error, Result};

/// The storage a disk creation adds: type, content and the options
/// `create_or_update` compares with an existing storage of that id.
struct StorageParams {
    kind: &'static str,
    content: &'static [&'static str],
    options: Vec<(&'static str, String)>,
    verify: &'static [&'static str],
    shared_flag: bool,
}

fn storage_params(op: &DiskOp) -> Option<(String, StorageParams)> {
    match op {
        DiskOp::ZfsCreate {
            name,
            add_storage: true,
            ..
        } => Some((
            name.clone(),
            StorageParams {
                kind: "zfspool",
                content: &["rootdir", "images"],
                options: vec![("pool", name.clone())],
                verify: &["pool"],
                shared_flag: false,
            },
        )),
        DiskOp::LvmCreate {
            name,
            add_storage: true,
            ..
        } => Some((
            name.clone(),
            StorageParams {
                kind: "lvm",
                content: &["rootdir", "images"],
                options: vec![("vgname", name.clone())],
                verify: &["vgname"],
                shared_flag: true,
            },
        )),
        DiskOp::LvmThinCreate {
            name,
            add_storage: true,
            ..
        } => Some((
            name.clone(),
            StorageParams {
                kind: "lvmthin",
                content: &["rootdir", "images"],
                options: vec![("vgname", name.clone()), ("thinpool", name.clone())],
                verify: &["vgname", "thinpool"],
                shared_flag: false,
            },
        )),
        DiskOp::DirCreate {
            name,
            add_storage: true,
            ..
        } => Some((
            name.clone(),
            StorageParams {
                kind: "dir",
                content: &["rootdir", "images", "iso", "backup", "vztmpl", "snippets"],
                options: vec![
                    ("is_mountpoint", "1".into()),
                    ("path", format!("/mnt/pve/{name}")),
                ],
                verify: &["path"],
                shared_flag: false,
            },
        )),
        _ => None,
    }
}

/// `create_or_update` of a storage a disk creation adds: a dry run
/// before the task (`dryrun`), the real one when it ends.
fn create_or_update(
    storage: &mut Storages,
    sid: &str,
    node: &str,
    p: &StorageParams,
    dryrun: bool,
    size: u64,
) -> Result<Option<String>> {
    if let Some(s) = storage.find(sid) {
        if s.nodes.as_ref().is_none_or(|n| n.iter().any(|x| x == node)) {
            return Err(Error::exists(format!(
                "Storage ID '{sid}' already exists on node {node}"
            )));
        }
        if s.kind != p.kind {
            return Err(Error::conflict(format!(
                "Option 'type' ({}) does not match existing storage configuration '{}'",
                p.kind, s.kind
            )));
        }
        for key in p.verify {
            let want = p
                .options
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
                .unwrap_or_default();
            match s.options.get(*key) {
                None => {
                    return Err(Error::conflict(format!(
                        "Option '{key}' is not configured for storage '{sid}', expected it to be '{want}'"
                    )));
                }
                Some(have) if have != want => {
                    return Err(Error::conflict(format!(
                        "Option '{key}' ({want}) does not match existing storage configuration '{have}'"
                    )));
                }
                _ => {}
            }
        }
        if dryrun {
            return Ok(None);
        }
        if let Some(s) = storage.find_mut(sid)
            && let Some(nodes) = s.nodes.as_mut()
        {
            nodes.push(node.to_string());
            nodes.sort();
            return Ok(Some(format!("Added '{node}' to nodes for storage '{sid}'")));
        }
        return Ok(None);
    }
    if dryrun {
        return Ok(None);
    }
    let mut options: BTreeMap<String, String> = p
        .options
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect();
    if p.shared_flag {
        options.insert("shared".into(), "0".into());
    }
    let added = storage.add(Storage {
        storage: sid.to_string(),
        kind: p.kind.to_string(),
        content: p.content.iter().map(|c| (*c).to_string()).collect(),
        shared: false,
        nodes: Some(vec![node.to_string()]),
        disable: false,
        total: size,
        used: 0,
        options,
    });
    if !added {
        return Err(Error::exists(format!(
            "create storage failed: storage ID '{sid}' already defined"
        )));
    }
    Ok(None)
}

/// The checks a disk creation with `add_storage=1` makes before its
/// task (`create_or_update` as a dry run).
///
/// # Errors
/// A storage of that id on the node, or one that does not match.
pub fn check_disk_storage(storage: &mut Storages, node: &str, op: &DiskOp) -> Result<()> {
    if let Some((sid, p)) = storage_params(op) {
        create_or_update(storage, &sid, node, &p, true, 0)?;
    }
    Ok(())
}

impl Hardware {
    /// The worker of a disk call on `node`: its start lines, and the
    /// disk operation as its effect.
    pub fn disk_worker(&self, node: &str, op: DiskOp) -> Worker {
        let (kind, id) = op.task();
        let lines = self.node(node).start_lines(&op);
        let mut worker = Worker::new(kind, &id).effect(TaskEffect::NodeHw {
            node: node.to_string(),
            op,
        });
        for l in lines {
            worker = worker.log(l);
        }
        worker
    }
}

/// What a disk task does when it ends: the node's disks change, and
/// the storage is added or cleaned up.
pub(crate) fn apply_disk_op(
    hardware: &mut Hardware,
    storage: &mut Storages,
    nodes: &Nodes,
    node: &str,
    op: &DiskOp,
) -> EffectResult {
    let hw: &mut NodeHw = hardware.node_mut(node);
    let (mut lines, size) = hw
        .apply(node, op)
        .map_err(|e| (Vec::new(), e.to_string()))?;
    if let Some((sid, p)) = storage_params(op) {
        match create_or_update(storage, &sid, node, &p, false, size) {
            Ok(Some(line)) => lines.push(line),
            Ok(None) => {}
            Err(e) => return Err((lines, e.to_string())),
        }
    }
    let cleanup = match op {
        DiskOp::ZfsRemove {
            name,
            cleanup_config: true,
            ..
        } => Some(("zfspool", vec![("pool", name.clone())])),
        DiskOp::LvmRemove {
            name,
            cleanup_config: true,
            ..
        } => Some(("lvm", vec![("vgname", name.clone())])),
        DiskOp::LvmThinRemove {
            vg,
            lv,
            cleanup_config: true,
            ..
        } => Some((
            "lvmthin",
            vec![("vgname", vg.clone()), ("thinpool", lv.clone())],
        )),
        DiskOp::DirRemove {
            name,
            cleanup_config: true,
            ..
        } => Some(("dir", vec![("path", format!("/mnt/pve/{name}"))])),
        _ => None,
    };
    if let Some((kind, keys)) = cleanup {
        cleanup_storages_for_node(storage, nodes, node, kind, &keys);
    }
    Ok(lines)
}

/// `cleanup_storages_for_node`: the node leaves the `nodes` of every
/// matching storage; a storage left without nodes is removed.
fn cleanup_storages_for_node(
    storage: &mut Storages,
    nodes: &Nodes,
    node: &str,
    kind: &str,
    keys: &[(&str, String)],
) {
    let all: Vec<String> = nodes.iter().map(|n| n.name.clone()).collect();
    let ids: Vec<String> = storage
        .cfg()
        .iter()
        .filter(|s| {
            s.kind == kind
                && keys
                    .iter()
                    .all(|(k, v)| s.options.get(*k).is_some_and(|x| x == v))
        })
        .map(|s| s.storage.clone())
        .collect();
    for sid in ids {
        let Some(s) = storage.find_mut(&sid) else {
            continue;
        };
        let mut nodes = s.nodes.clone().unwrap_or_else(|| all.clone());
        if !nodes.iter().any(|n| n == node) {
            continue;
        }
        nodes.retain(|n| n != node);
        if nodes.is_empty() {
            storage.remove(&sid);
        } else {
            nodes.sort();
            s.nodes = Some(nodes);
        }
    }
}
