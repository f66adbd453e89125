//! Volume operations that guest tasks need beyond allocation: storage
//! features (`volume_has_feature`), base volumes of templates
//! (`vdisk_create_base`), linked clones (`vdisk_clone`), resizing and
//! renaming (pve-storage `Plugin.pm`, `LvmThinPlugin.pm`, `LVMPlugin.pm`,
//! `ZFSPoolPlugin.pm`, `RBDPlugin.pm`).
//!
//! Kept apart from `volumes` (allocation and listing) so that storage
//! configuration work and guest work do not collide.

use super::Storages;
use super::{Volume, parse_volid, path_based};
use crate::model::cluster::Storage;
use crate::model::{Error, Result};

/// A storage feature a volume may have, as `volume_has_feature` asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// Take snapshots.
    Snapshot,
    /// Linked clone (from a base volume or a snapshot).
    Clone,
    /// Become a base volume.
    Template,
    /// Full copy.
    Copy,
    /// Rename (reassign to another VM).
    Rename,
}

/// Which state of the volume a feature is asked for.
fn state_of(name: &str, snap: bool) -> &'static str {
    if snap {
        "snap"
    } else if is_base_name(name) {
        "base"
    } else {
        "current"
    }
}

/// Whether the last path component of a volume name is a base volume.
pub fn is_base_name(name: &str) -> bool {
    name.rsplit('/')
        .next()
        .is_some_and(|n| n.starts_with("base-"))
}

/// The file format of a volume name on a path-based storage.
fn format_of(name: &str) -> &str {
    name.rsplit_once('.').map_or("raw", |(_, e)| e)
}

/// PVE's feature tables per plugin: does `kind` offer `feature` for a
/// volume in `state` with file format `fmt`?
pub fn storage_has_feature(
    s: &Storage,
    feature: Feature,
    state: &str,
    fmt: &str,
    v9: bool,
) -> bool {
    let kind = s.kind.as_str();
    let any = |states: &[&str]| states.contains(&state);
    match kind {
        _ if feature == Feature::Rename => {
            let image = !path_based(kind) || matches!(fmt, "qcow2" | "raw" | "vmdk");
            matches!(kind, "lvmthin" | "lvm" | "zfspool" | "zfs" | "rbd") && any(&["current"])
                || path_based(kind) && image && any(&["current"])
        }
        "lvmthin" => match feature {
            Feature::Snapshot => any(&["current"]),
            Feature::Clone => any(&["base", "snap"]),
            Feature::Template => any(&["current"]),
            Feature::Copy => any(&["base", "current", "snap"]),
            Feature::Rename => false,
        },
        "zfspool" | "zfs" => match feature {
            Feature::Snapshot => any(&["current", "snap"]),
            Feature::Clone => any(&["base"]),
            Feature::Template => any(&["current"]),
            Feature::Copy => any(&["base", "current"]),
            Feature::Rename => false,
        },
        "rbd" => match feature {
            Feature::Snapshot => any(&["current", "snap"]),
            Feature::Clone => any(&["base", "snap"]),
            Feature::Template => any(&["current"]),
            Feature::Copy => any(&["base", "current", "snap"]),
            Feature::Rename => false,
        },
        "lvm" => {
            let chain = v9
                && s.options
                    .get("snapshot-as-volume-chain")
                    .is_some_and(|v| v == "1");
            match feature {
                Feature::Snapshot => chain && any(&["current"]),
                Feature::Clone => false,
                Feature::Template => false,
                Feature::Copy => any(&["base", "current"]),
                Feature::Rename => false,
            }
        }
        k if path_based(k) => {
            let qcow2 = fmt == "qcow2";
            let image = matches!(fmt, "qcow2" | "raw" | "vmdk");
            match feature {
                Feature::Snapshot => qcow2 && any(&["current", "snap"]),
                Feature::Clone => image && any(&["base"]),
                Feature::Template => (image || fmt == "subvol") && any(&["current"]),
                Feature::Copy => (image && any(&["base", "current"])) || (qcow2 && any(&["snap"])),
                Feature::Rename => false,
            }
        }
        _ => false,
    }
}

impl Storages {
    fn storage_of_volid(&self, volid: &str) -> Option<Storage> {
        let (sid, _) = parse_volid(volid)?;
        self.find(sid).cloned()
    }

    /// `volume_has_feature`: whether the volume `volid` offers `feature`
    /// (of a snapshot when `snap`). Volumes that are not on a storage
    /// (paths, devices) offer nothing.
    pub fn volume_has_feature(&self, feature: Feature, volid: &str, snap: bool, v9: bool) -> bool {
        let Some(s) = self.storage_of_volid(volid) else {
            return false;
        };
        let Some((_, name)) = parse_volid(volid) else {
            return false;
        };
        let fmt = if path_based(&s.kind) {
            format_of(name)
        } else {
            "raw"
        };
        storage_has_feature(&s, feature, state_of(name, snap), fmt, v9)
    }

    /// Whether the storage of `volid` is shared.
    pub fn volume_shared(&self, volid: &str) -> bool {
        self.storage_of_volid(volid).is_some_and(|s| s.shared)
    }

    /// The lowest free disk number of `vmid` on a storage as `node` sees
    /// it, counting every name whose last component is
    /// `vm-<vmid>-disk-<n>` or `base-<vmid>-disk-<n>`.
    fn free_disk_number(&self, s: &Storage, node: &str, vmid: u32) -> u32 {
        if matches!(s.kind.as_str(), "lvm" | "lvmthin") {
            // LVM names volumes plainly (even linked clones): look the
            // candidates up instead of reading every volume of the storage.
            let taken = |n: u32| {
                ["vm", "base"].iter().any(|p| {
                    self.volumes()
                        .get(s, node, &format!("{p}-{vmid}-disk-{n}"))
                        .is_some()
                })
            };
            return (0..u32::MAX).find(|n| !taken(*n)).unwrap_or(u32::MAX);
        }
        let used: std::collections::BTreeSet<u32> = self
            .volumes()
            .on(s, node)
            .filter_map(|v| {
                let last = v.name.rsplit('/').next()?;
                let last = last.split('.').next()?;
                let rest = last
                    .strip_prefix(&format!("vm-{vmid}-disk-"))
                    .or_else(|| last.strip_prefix(&format!("base-{vmid}-disk-")))?;
                rest.parse().ok()
            })
            .collect();
        (0..u32::MAX)
            .find(|n| !used.contains(n))
            .unwrap_or(u32::MAX)
    }

    /// `vdisk_create_base`: renames a VM's volume to its base name and
    /// answers the new volid and what the storage tools print.
    ///
    /// # Errors
    /// An unknown volume.
    pub fn create_base_volume(&mut self, volid: &str, node: &str) -> Result<(String, Vec<String>)> {
        let s = self
            .storage_of_volid(volid)
            .ok_or_else(|| Error::failed(format!("unable to parse volume ID '{volid}'")))?;
        let (_, name) = parse_volid(volid).unwrap_or_default();
        let Some(mut vol) = self.volumes_mut().remove(&s, node, name) else {
            return Err(Error::not_found(format!("volume '{volid}' does not exist")));
        };
        let last = name.rsplit('/').next().unwrap_or(name);
        let base_last = last.replacen("vm-", "base-", 1);
        let new_name = match name.rsplit_once('/') {
            Some((dir, _)) => format!("{dir}/{base_last}"),
            None => base_last.clone(),
        };
        let mut log = Vec::new();
        if s.kind == "lvmthin" || s.kind == "lvm" {
            let vg = s.options.get("vgname").map_or("pve", String::as_str);
            log.push(format!(
                "  Renamed \"{last}\" to \"{base_last}\" in volume group \"{vg}\""
            ));
        }
        vol.name = new_name;
        let new = vol.volid();
        self.volumes_mut().insert(&s, node, vol);
        Ok((new, log))
    }

    /// `vdisk_clone`: a linked clone of the base volume `base` (or of its
    /// snapshot) for `newid`; answers the new volid and what the storage
    /// tools print.
    ///
    /// # Errors
    /// An unknown volume.
    pub fn clone_volume_linked(
        &mut self,
        base: &str,
        node: &str,
        newid: u32,
        now: i64,
    ) -> Result<(String, Vec<String>)> {
        let s = self
            .storage_of_volid(base)
            .ok_or_else(|| Error::failed(format!("unable to parse volume ID '{base}'")))?;
        let (_, name) = parse_volid(base).unwrap_or_default();
        let Some(src) = self.volumes().get(&s, node, name).cloned() else {
            return Err(Error::not_found(format!("volume '{base}' does not exist")));
        };
        let n = self.free_disk_number(&s, node, newid);
        let disk = format!("vm-{newid}-disk-{n}");
        let (new_name, format) = if path_based(&s.kind) {
            (format!("{name}/{newid}/{disk}.qcow2"), "qcow2".to_string())
        } else if s.kind == "rbd" {
            let last = name.rsplit('/').next().unwrap_or(name);
            (format!("{last}/{disk}"), "raw".to_string())
        } else {
            (disk.clone(), "raw".to_string())
        };
        let mut log = Vec::new();
        if s.kind == "lvmthin" {
            log.push(format!("  Logical volume \"{disk}\" created."));
        }
        let vol = Volume {
            storage: s.storage.clone(),
            name: new_name,
            size: src.size,
            format,
            vmid: newid,
            ctime: now,
        };
        let volid = vol.volid();
        self.volumes_mut().insert(&s, node, vol);
        Ok((volid, log))
    }

    /// Sets the size of a volume (`volume_resize`) and answers what the
    /// storage tools print. QEMU resizes the image of a running VM on a
    /// path-based storage itself, so `qemu-img` prints nothing then.
    ///
    /// # Errors
    /// An unknown volume; an image format other than raw or qcow2 on a
    /// path-based storage (`can't resize this image format`).
    pub fn resize_volume(
        &mut self,
        volid: &str,
        node: &str,
        size: u64,
        running: bool,
    ) -> Result<Vec<String>> {
        let s = self
            .storage_of_volid(volid)
            .ok_or_else(|| Error::failed(format!("unable to parse volume ID '{volid}'")))?;
        let (_, name) = parse_volid(volid).unwrap_or_default();
        if path_based(&s.kind) && !matches!(format_of(name), "raw" | "qcow2") {
            return Err(Error::failed("can't resize this image format"));
        }
        let Some(vol) = self.volumes_mut().get_mut(&s, node, name) else {
            return Err(Error::not_found(format!("volume '{volid}' does not exist")));
        };
        let old = vol.size;
        vol.size = size;
        Ok(match s.kind.as_str() {
            "lvmthin" | "lvm" => {
                let vg = s.options.get("vgname").map_or("pve", String::as_str);
                let last = name.rsplit('/').next().unwrap_or(name);
                vec![
                    format!(
                        "  Size of logical volume {vg}/{last} changed from {} ({} extents) to {} ({} extents).",
                        lvm_size(old),
                        old.div_ceil(LVM_EXTENT),
                        lvm_size(size),
                        size.div_ceil(LVM_EXTENT)
                    ),
                    format!("  Logical volume {vg}/{last} successfully resized."),
                ]
            }
            k if path_based(k) && !running => vec!["Image resized.".to_string()],
            _ => Vec::new(),
        })
    }

    /// Changes the owner and name of a volume (`rename_volume`, used when
    /// a disk moves to another VM).
    ///
    /// # Errors
    /// An unknown volume.
    pub fn reassign_volume(
        &mut self,
        volid: &str,
        node: &str,
        newid: u32,
    ) -> Result<(String, Vec<String>)> {
        let s = self
            .storage_of_volid(volid)
            .ok_or_else(|| Error::failed(format!("unable to parse volume ID '{volid}'")))?;
        let (_, name) = parse_volid(volid).unwrap_or_default();
        let n = self.free_disk_number(&s, node, newid);
        let Some(mut vol) = self.volumes_mut().remove(&s, node, name) else {
            return Err(Error::not_found(format!("volume '{volid}' does not exist")));
        };
        let disk = format!("vm-{newid}-disk-{n}");
        let mut log = Vec::new();
        vol.name = if path_based(&s.kind) {
            format!("{newid}/{disk}.{}", vol.format)
        } else {
            disk.clone()
        };
        if s.kind == "lvmthin" || s.kind == "lvm" {
            let vg = s.options.get("vgname").map_or("pve", String::as_str);
            log.push(format!(
                "  Renamed \"{name}\" to \"{disk}\" in volume group \"{vg}\""
            ));
        }
        vol.vmid = newid;
        let new = vol.volid();
        self.volumes_mut().insert(&s, node, vol);
        Ok((new, log))
    }

    /// Moves the volumes of a storage that is not shared from one node's
    /// view to another's (a migration with local disks).
    pub fn transfer_volume(&mut self, volid: &str, from: &str, to: &str) -> bool {
        let Some(s) = self.storage_of_volid(volid) else {
            return false;
        };
        if s.shared {
            return true;
        }
        let (_, name) = parse_volid(volid).unwrap_or_default();
        let Some(vol) = self.volumes_mut().remove(&s, from, name) else {
            return false;
        };
        self.volumes_mut().insert(&s, to, vol);
        true
    }
}

/// LVM's default physical extent: 4 MiB.
const LVM_EXTENT: u64 = 4 << 20;

/// LVM's size rendering: `8.00 GiB`.
fn lvm_size(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i < units.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    format!("{v:.2} {}", units[i])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn storage(kind: &str) -> Storage {
        Storage {
            storage: "s".into(),
            kind: kind.into(),
            content: vec!["images".into()],
            shared: false,
            nodes: None,
            disable: false,
            total: 1 << 40,
            used: 0,
            options: BTreeMap::new(),
        }
    }

    #[test]
    fn feature_tables() {
        let thin = storage("lvmthin");
        assert!(!storage_has_feature(
            &thin,
            Feature::Clone,
            "current",
            "raw",
            true
        ));
        assert!(storage_has_feature(
            &thin,
            Feature::Clone,
            "base",
            "raw",
            true
        ));
        assert!(storage_has_feature(
            &thin,
            Feature::Snapshot,
            "current",
            "raw",
            true
        ));
        let dir = storage("dir");
        assert!(!storage_has_feature(
            &dir,
            Feature::Snapshot,
            "current",
            "raw",
            true
        ));
        assert!(storage_has_feature(
            &dir,
            Feature::Snapshot,
            "current",
            "qcow2",
            true
        ));
        let lvm = storage("lvm");
        assert!(!storage_has_feature(
            &lvm,
            Feature::Template,
            "current",
            "raw",
            true
        ));
        assert!(!storage_has_feature(
            &lvm,
            Feature::Snapshot,
            "current",
            "raw",
            true
        ));
        assert_eq!(lvm_size(8 << 30), "8.00 GiB");
        assert!(is_base_name("100/base-100-disk-0.qcow2"));
        assert!(!is_base_name(
            "100/base-100-disk-0.qcow2/101/vm-101-disk-0.qcow2"
        ));
    }
}
