//! Volumes on storages: allocation with PVE's naming rules per storage
//! type, capacity and usage, and the image listing of a storage's content
//! (pve-storage `Plugin.pm`, `LvmThinPlugin.pm`, `LVMPlugin.pm`,
//! `ZFSPoolPlugin.pm`, `API2/Storage/Content.pm`).
//!
//! A storage that is not shared has one set of volumes per node (the
//! `local-lvm` of `pve1` is not that of `pve2`); a shared one has a single
//! set that every node sees.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Storages;
use super::content::{ContentItem, ImageItem};
use crate::model::cluster::Storage;
use crate::model::{Error, Result};

/// One volume (a disk image, a cloud-init drive or a saved VM state).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Volume {
    /// The storage id.
    pub storage: String,
    /// The volume name within the storage (`vm-100-disk-0`,
    /// `100/vm-100-disk-0.qcow2`).
    pub name: String,
    /// Size in bytes.
    pub size: u64,
    /// `raw`, `qcow2`, `vmdk` or `subvol`.
    pub format: String,
    /// The owning guest.
    pub vmid: u32,
    /// Creation time, epoch seconds.
    pub ctime: i64,
}

impl Volume {
    /// `<storage>:<name>`.
    pub fn volid(&self) -> String {
        format!("{}:{}", self.storage, self.name)
    }
}

/// Every allocated volume: storage → scope (`""` for a shared storage,
/// otherwise the node) → name → volume.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Volumes {
    map: BTreeMap<String, BTreeMap<String, BTreeMap<String, Volume>>>,
    /// Notes and protection by `<scope>|<volid>` (see
    /// `model::storage::content`).
    #[serde(default)]
    pub(crate) attrs: BTreeMap<String, super::content::VolumeAttrs>,
    /// The URLs the emulated network knows (`download-url`,
    /// `query-url-metadata`); kept here as the state of the storage area.
    #[serde(default)]
    pub downloads: Vec<super::content::KnownUrl>,
    /// The images the emulated container registries hold
    /// (`query-oci-repo-tags`, `oci-registry-pull`).
    #[serde(default)]
    pub oci: crate::model::oci::Registry,
}

/// What a new volume is for; decides its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VolumeKind {
    /// `vm-<vmid>-disk-<n>`, with the lowest free `n`.
    Disk,
    /// `vm-<vmid>-cloudinit`.
    CloudInit,
    /// `vm-<vmid>-state-<name>` (snapshots with vmstate, hibernation).
    State(String),
    /// `subvol-<vmid>-disk-<n>`: a container's directory volume (ZFS
    /// datasets, or size 0 on directory storages).
    Subvol,
}

/// What `qemu-img measure` gives as `fully-allocated` for a qcow2 image
/// of `virtual_size` bytes (64 KiB clusters, 16-bit refcounts: header,
/// L1 and L2 tables, refcount table and blocks, data), rounded up to
/// the 4 MiB extents of the logical volume PVE's LVM plugin creates for
/// it (`calculate_lvm_size`, `lvcreate`).
pub fn lvm_qcow2_lv_size(virtual_size: u64) -> u64 {
    const CLUSTER: u64 = 65_536;
    const EXTENT: u64 = 4 * 1024 * 1024;
    let clusters = |bytes: u64| bytes.div_ceil(CLUSTER);
    let data = clusters(virtual_size);
    let l2 = clusters(data * 8);
    let l1 = clusters(l2 * 8);
    let meta = 1 + l2 + l1;
    let (mut blocks, mut table) = (0, 0);
    loop {
        let total = data + meta + blocks + table;
        let (b, t) = (clusters(total * 2), clusters(clusters(total * 2) * 8));
        if (b, t) == (blocks, table) {
            break;
        }
        (blocks, table) = (b, t);
    }
    ((data + meta + blocks + table) * CLUSTER).div_ceil(EXTENT) * EXTENT
}

/// Storage types whose volumes are files under a path.
pub fn path_based(kind: &str) -> bool {
    matches!(
        kind,
        "dir" | "nfs" | "cifs" | "cephfs" | "glusterfs" | "btrfs"
    )
}

/// Splits `storage:name`.
pub fn parse_volid(volid: &str) -> Option<(&str, &str)> {
    let (s, n) = volid.split_once(':')?;
    (!s.is_empty() && !n.is_empty()).then_some((s, n))
}

impl Volumes {
    fn scope<'a>(storage: &Storage, node: &'a str) -> &'a str {
        if storage.shared { "" } else { node }
    }

    /// The volumes of one storage as `node` sees it.
    pub fn on(&self, storage: &Storage, node: &str) -> impl Iterator<Item = &Volume> {
        self.map
            .get(&storage.storage)
            .and_then(|m| m.get(Self::scope(storage, node)))
            .into_iter()
            .flat_map(BTreeMap::values)
    }

    /// A volume by name.
    pub fn get(&self, storage: &Storage, node: &str, name: &str) -> Option<&Volume> {
        self.map
            .get(&storage.storage)?
            .get(Self::scope(storage, node))?
            .get(name)
    }

    /// A volume by name, to change it.
    pub fn get_mut(&mut self, storage: &Storage, node: &str, name: &str) -> Option<&mut Volume> {
        self.map
            .get_mut(&storage.storage)?
            .get_mut(Self::scope(storage, node))?
            .get_mut(name)
    }

    /// Bytes allocated on a storage as `node` sees it.
    pub fn allocated(&self, storage: &Storage, node: &str) -> u64 {
        self.on(storage, node).map(|v| v.size).sum()
    }

    /// Records a volume.
    pub fn insert(&mut self, storage: &Storage, node: &str, vol: Volume) {
        // The storage's and the node's keys are made once, not for every
        // volume (a scenario of a million guests records a million).
        let scope = Self::scope(storage, node);
        if !self.map.contains_key(&storage.storage) {
            self.map.insert(storage.storage.clone(), BTreeMap::new());
        }
        let Some(scopes) = self.map.get_mut(&storage.storage) else {
            return;
        };
        if !scopes.contains_key(scope) {
            scopes.insert(scope.to_string(), BTreeMap::new());
        }
        if let Some(names) = scopes.get_mut(scope) {
            names.insert(vol.name.clone(), vol);
        }
    }

    /// Removes a volume.
    pub fn remove(&mut self, storage: &Storage, node: &str, name: &str) -> Option<Volume> {
        self.map
            .get_mut(&storage.storage)?
            .get_mut(Self::scope(storage, node))?
            .remove(name)
    }
}

/// `storage 'x' does not exist`.
pub fn no_such_storage(sid: &str) -> Error {
    Error::not_found(format!("storage '{sid}' does not exist"))
}

impl Storages {
    /// The storage `sid`.
    ///
    /// # Errors
    /// 500 `storage 'x' does not exist`.
    pub fn existing(&self, sid: &str) -> Result<&Storage> {
        self.find(sid).ok_or_else(|| no_such_storage(sid))
    }

    /// A storage that `node` can allocate on, as `activate_storage` checks
    /// it.
    ///
    /// # Errors
    /// `storage 'x' does not exist`, `storage 'x' is disabled`, `storage 'x'
    /// is not available on node 'n'`.
    pub fn usable_storage(&self, sid: &str, node: &str) -> Result<&Storage> {
        let s = self.existing(sid)?;
        if s.disable {
            return Err(Error::failed(format!("storage '{sid}' is disabled")));
        }
        if !s.active_on(node) {
            return Err(Error::failed(format!(
                "storage '{sid}' is not available on node '{node}'"
            )));
        }
        Ok(s)
    }

    /// Allocates a volume as `vdisk_alloc` does; answers its volid and the
    /// lines the storage tools print.
    ///
    /// # Errors
    /// The storage checks of [`Storages::usable_storage`]; on thick LVM
    /// `not enough free space (<free> < <KiB>)`; on a non-sparse ZFS pool
    /// `out of space`.
    #[allow(clippy::too_many_arguments)]
    pub fn alloc_volume(
        &mut self,
        sid: &str,
        node: &str,
        vmid: u32,
        kind: &VolumeKind,
        format: Option<&str>,
        size: u64,
        now: i64,
    ) -> Result<(String, Vec<String>)> {
        let s = self.usable_storage(sid, node)?.clone();
        let is_path = path_based(&s.kind);
        let format = if is_path {
            format
                .map(str::to_string)
                .or_else(|| s.options.get("format").cloned())
                .unwrap_or_else(|| {
                    if matches!(kind, VolumeKind::CloudInit) {
                        "qcow2".into()
                    } else {
                        "raw".into()
                    }
                })
        } else if *kind == VolumeKind::Subvol {
            "subvol".to_string()
        } else if s.kind == "lvm" && format == Some("qcow2") && *kind == VolumeKind::Disk {
            // 9.x: qcow2 images on thick LVM, as volume chains
            // (`alloc_lvm_image`).
            if s.options
                .get("snapshot-as-volume-chain")
                .is_none_or(|v| v != "1")
            {
                return Err(Error::failed(
                    "snapshot-as-volume-chain option need to be enabled to use qcow2 format",
                ));
            }
            "qcow2".to_string()
        } else {
            "raw".to_string()
        };
        let ext = if is_path || format == "qcow2" {
            format!(".{format}")
        } else {
            String::new()
        };
        let base = match kind {
            VolumeKind::Disk | VolumeKind::Subvol => {
                // find_free_diskname: VM disks and container subvolumes
                // share the numbers.
                let taken = |n: u32| {
                    ["vm", "base", "subvol", "basevol"].iter().any(|p| {
                        let name = format!("{p}-{vmid}-disk-{n}");
                        let name = if is_path {
                            format!("{vmid}/{name}{ext}")
                        } else {
                            name
                        };
                        // an LV's number is taken whatever its format
                        self.volumes().get(&s, node, &name).is_some()
                            || (!is_path
                                && self
                                    .volumes()
                                    .get(&s, node, &format!("{name}.qcow2"))
                                    .is_some())
                    })
                };
                let n = (0..u32::MAX).find(|n| !taken(*n)).unwrap_or(u32::MAX);
                if *kind == VolumeKind::Subvol {
                    format!("subvol-{vmid}-disk-{n}")
                } else {
                    format!("vm-{vmid}-disk-{n}")
                }
            }
            VolumeKind::CloudInit => format!("vm-{vmid}-cloudinit"),
            VolumeKind::State(name) => format!("vm-{vmid}-state-{name}"),
        };
        let name = if is_path {
            format!("{vmid}/{base}{ext}")
        } else {
            format!("{base}{ext}")
        };
        self.create_volume(&s, node, vmid, &name, &base, &format, size, now)
    }

    /// `pvesm import` of a volume into `sid`: named `name` (`vm-101-disk-0`,
    /// `101/vm-101-disk-0.qcow2` on a path-based storage) unless that is
    /// taken, when `allow_rename` picks the next free disk name; answers
    /// its volid and the lines the storage tools print.
    ///
    /// # Errors
    /// As [`Storages::alloc_volume`]; `volume 'x' already exists` when the
    /// name is taken and no rename is allowed.
    #[allow(clippy::too_many_arguments)]
    pub fn import_volume(
        &mut self,
        sid: &str,
        node: &str,
        vmid: u32,
        name: &str,
        format: &str,
        size: u64,
        allow_rename: bool,
        now: i64,
    ) -> Result<(String, Vec<String>)> {
        let s = self.usable_storage(sid, node)?.clone();
        if self.volumes().get(&s, node, name).is_some() {
            if !allow_rename {
                return Err(Error::exists(format!(
                    "volume '{}:{name}' already exists",
                    s.storage
                )));
            }
            let kind = if name
                .rsplit('/')
                .next()
                .is_some_and(|n| n.starts_with("subvol-"))
            {
                VolumeKind::Subvol
            } else {
                VolumeKind::Disk
            };
            let fmt = path_based(&s.kind).then_some(format);
            return self.alloc_volume(sid, node, vmid, &kind, fmt, size, now);
        }
        let file = name.rsplit('/').next().unwrap_or(name);
        let base = if path_based(&s.kind) {
            file.rsplit_once('.').map_or(file, |(b, _)| b)
        } else {
            file
        };
        self.create_volume(&s, node, vmid, name, base, format, size, now)
    }

    /// Records a new volume `name` of storage `s` (`base`: its name
    /// without directory and extension) and answers its volid and the
    /// lines the storage tools print when they make it.
    #[allow(clippy::too_many_arguments)]
    fn create_volume(
        &mut self,
        s: &Storage,
        node: &str,
        vmid: u32,
        name: &str,
        base: &str,
        format: &str,
        size: u64,
        now: i64,
    ) -> Result<(String, Vec<String>)> {
        let s = s.clone();
        let name = name.to_string();
        let format = format.to_string();
        if self.volumes().get(&s, node, &name).is_some() {
            return Err(Error::exists(format!(
                "volume '{}:{name}' already exists",
                s.storage
            )));
        }
        // Only thick storages check room; summing a storage's volumes is
        // not done on the others (thin pools and directories overcommit).
        let free = || s.total.saturating_sub(self.used(&s, node));
        let mut log = Vec::new();
        match s.kind.as_str() {
            "lvm" => {
                let free = free();
                if size > free {
                    return Err(Error::failed(format!(
                        "not enough free space ({free} < {})",
                        size / 1024
                    )));
                }
                log.push(format!("  Logical volume \"{name}\" created."));
                if format == "qcow2" {
                    let vg = s.options.get("vgname").map_or("pve", String::as_str);
                    log.push(format!(
                        "Formatting '/dev/{vg}/{name}', fmt=qcow2 cluster_size=65536 extended_l2=off preallocation=metadata compression_type=zlib size={size} lazy_refcounts=off refcount_bits=16"
                    ));
                }
            }
            "lvmthin" => log.push(format!("  Logical volume \"{base}\" created.")),
            "zfspool" => {
                let sparse = s.options.get("sparse").is_some_and(|v| v == "1");
                if !sparse && size > free() {
                    let pool = s.options.get("pool").map_or("rpool/data", String::as_str);
                    return Err(Error::failed(format!(
                        "zfs error: cannot create '{pool}/{base}': out of space"
                    )));
                }
            }
            k if path_based(k) => {
                let path = s.options.get("path").map_or("/var/lib/vz", String::as_str);
                let file = format!("{path}/images/{name}");
                log.push(if format == "qcow2" {
                    format!(
                        "Formatting '{file}', fmt=qcow2 cluster_size=65536 extended_l2=off preallocation=metadata compression_type=zlib size={size} lazy_refcounts=off refcount_bits=16"
                    )
                } else {
                    format!("Formatting '{file}', fmt={format} size={size}")
                });
            }
            _ => {}
        }
        let vol = Volume {
            storage: s.storage.clone(),
            name,
            size,
            format,
            vmid,
            ctime: now,
        };
        let volid = vol.volid();
        self.volumes_mut().insert(&s, node, vol);
        Ok((volid, log))
    }

    /// Frees a volume as `vdisk_free` does; answers the lines the storage
    /// tools print, or `None` if there was no such volume.
    pub fn free_volume(&mut self, volid: &str, node: &str) -> Option<Vec<String>> {
        let (sid, name) = parse_volid(volid)?;
        let s = self.find(sid)?.clone();
        let vol = self.volumes_mut().remove(&s, node, name)?;
        Some(match s.kind.as_str() {
            "lvm" | "lvmthin" => vec![format!(
                "  Logical volume \"{}\" successfully removed.",
                vol.name
            )],
            _ => Vec::new(),
        })
    }

    /// The volume `volid` as `node` sees it.
    pub fn volume(&self, volid: &str, node: &str) -> Option<&Volume> {
        let (sid, name) = parse_volid(volid)?;
        let s = self.find(sid)?;
        self.volumes().get(s, node, name)
    }

    /// Records a volume that a scenario's VM refers to, unless it exists.
    pub fn adopt_volume(&mut self, volid: &str, node: &str, vmid: u32, size: u64, now: i64) {
        let Some((sid, name)) = parse_volid(volid) else {
            return;
        };
        let Some(s) = self.cfg.iter().find(|s| s.storage == sid) else {
            return;
        };
        let volumes = &mut self.volumes;
        if volumes.get(s, node, name).is_some() {
            return;
        }
        let format = match name.rsplit_once('.') {
            Some((_, ext)) if path_based(&s.kind) => ext.to_string(),
            Some((_, "qcow2")) if s.kind == "lvm" => "qcow2".to_string(),
            _ => "raw".to_string(),
        };
        volumes.insert(
            s,
            node,
            Volume {
                storage: s.storage.clone(),
                name: name.to_string(),
                size,
                format,
                vmid,
                ctime: now,
            },
        );
    }

    /// The VM images of `GET /nodes/{node}/storage/{storage}/content`,
    /// sorted by volid as PVE sorts them.
    ///
    /// # Errors
    /// `storage 'x' does not exist`.
    pub fn image_content(
        &self,
        sid: &str,
        node: &str,
        vmid: Option<u32>,
        is_ct: &dyn Fn(u32) -> bool,
    ) -> Result<Vec<ContentItem>> {
        let s = self.existing(sid)?;
        let mut items: Vec<ContentItem> = self
            .volumes()
            .on(s, node)
            .filter(|v| vmid.is_none_or(|id| id == v.vmid))
            .map(|v| {
                // A container's volumes are `rootdir` (volume_list).
                let content = if is_ct(v.vmid) { "rootdir" } else { "images" };
                ContentItem::Image(ImageItem {
                    volid: v.volid(),
                    content,
                    format: v.format.clone(),
                    size: Some(v.size),
                    approximate_size: None,
                    vmid: v.vmid,
                    ctime: v.ctime,
                    used: path_based(&s.kind).then_some(0),
                })
            })
            .collect();
        items.sort_by_key(|v| v.volid().to_lowercase());
        Ok(items)
    }
}
