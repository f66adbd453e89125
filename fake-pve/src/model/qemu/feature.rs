//! `GET .../feature` (`vm_feature`: `QemuConfig::has_feature`,
//! `QemuServer::shared_nodes`) and `PUT .../sendkey` (`vm_sendkey`).

use super::{Error, PveVersion, Result, Vm, drive_file, drive_is_cdrom, is_drive_key};
use crate::model::guests::Guests;
use crate::model::nodes::Nodes;
use crate::model::storage::Storages;
use crate::model::storage::ops::Feature;
use crate::model::storage::parse_volid;

/// What `GET .../feature` answers.
#[derive(Debug)]
pub struct FeatureAnswer {
    /// Whether every disk offers the feature.
    pub has: bool,
    /// The nodes whose storages hold all the volumes.
    pub nodes: Vec<String>,
}

/// `vm_feature`: whether every disk of `vm`'s config (or of snapshot
/// `snapname`) offers `feature` on the storages, and the nodes whose
/// storages hold all its volumes.
///
/// # Errors
/// A missing snapshot; an unknown feature name.
pub fn vm_feature(
    vm: &Vm,
    nodes: &Nodes,
    storage: &Storages,
    version: PveVersion,
    feature: &str,
    snapname: Option<&str>,
) -> Result<FeatureAnswer> {
    let node = vm.node();
    let conf = match snapname {
        Some(s) => vm
            .snapshots
            .get(s)
            .ok_or_else(|| Error::not_found(format!("snapshot '{s}' does not exist")))?,
        None => &vm.config,
    };
    let feature = match feature {
        "snapshot" => Feature::Snapshot,
        "clone" => Feature::Clone,
        "copy" => Feature::Copy,
        other => {
            return Err(Error::invalid(
                "feature",
                format!(
                    "value '{other}' does not have a value in the enumeration 'snapshot, clone, copy'"
                ),
            ));
        }
    };
    let mut has = true;
    let mut nodes: Vec<String> = nodes.iter().map(|n| n.name.clone()).collect();
    for (k, v) in conf {
        if !is_drive_key(k) {
            continue;
        }
        let volid = drive_file(v);
        if !drive_is_cdrom(v)
            && !storage.volume_has_feature(feature, volid, snapname.is_some(), version.is_v9())
        {
            has = false;
        }
        if volid.is_empty() || volid.starts_with('/') {
            continue;
        }
        let Some((sid, _)) = parse_volid(volid) else {
            continue;
        };
        let Some(s) = storage.find(sid) else {
            continue;
        };
        if s.disable {
            nodes.clear();
        } else if let Some(avail) = &s.nodes {
            nodes.retain(|n| avail.contains(n));
        } else if !s.shared {
            nodes.retain(|n| n == node);
        }
    }
    Ok(FeatureAnswer { has, nodes })
}

impl Guests {
    /// `vm_sendkey`: the HMP `sendkey` of a running VM.
    ///
    /// # Errors
    /// A missing or stopped VM.
    pub fn vm_sendkey(&self, node: &str, vmid: u32) -> Result<()> {
        let vm = self.vm(node, vmid)?;
        if !vm.running() {
            return Err(Error::conflict(format!("VM {vmid} not running")));
        }
        Ok(())
    }
}
