//! What the node's disk, LVM, ZFS, directory and device calls read
//! from its hardware, selected and ordered as PVE lists them.

use super::{Disk, MdevType, MountUnit, NodeHw, Partition, PciDevice, ThinPool, Vg, Zpool};

/// A row of `GET /nodes/{node}/disks/list`.
#[derive(Debug, Clone, Copy)]
pub enum DiskRow<'a> {
    /// A disk.
    Disk(&'a Disk),
    /// A partition of a disk (`include-partitions=1`).
    Partition(&'a Disk, &'a Partition),
}

impl NodeHw {
    /// `GET /nodes/{node}/disks/list`: the disks (and their partitions
    /// with `include_partitions`) of `kind` (`unused`, `journal_disks`),
    /// by name.
    pub fn disks_list(&self, kind: Option<&str>, include_partitions: bool) -> Vec<DiskRow<'_>> {
        let mut out = Vec::new();
        for d in &self.disks {
            let used = d.usage(include_partitions);
            let keep = match kind {
                Some("unused") => used.is_none(),
                Some("journal_disks") => match used.as_deref() {
                    None => true,
                    Some(u) => (u == "partitions" && d.gpt) || u == "LVM",
                },
                _ => true,
            };
            if keep {
                out.push((d.name().to_string(), DiskRow::Disk(d)));
            }
            if include_partitions {
                for p in &d.partitions {
                    let used = p.usage();
                    let keep = match kind {
                        Some("unused") => used.is_none(),
                        Some("journal_disks") => match used.as_deref() {
                            None => true,
                            Some(u) => u == "LVM",
                        },
                        _ => true,
                    };
                    if keep {
                        out.push((
                            p.devpath.trim_start_matches("/dev/").to_string(),
                            DiskRow::Partition(d, p),
                        ));
                    }
                }
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out.into_iter().map(|(_, v)| v).collect()
    }

    /// The volume groups by name (`disks/lvm`, `scan/lvm`).
    pub fn vgs_by_name(&self) -> Vec<&Vg> {
        let mut vgs: Vec<&Vg> = self.vgs.iter().collect();
        vgs.sort_by(|a, b| a.name.cmp(&b.name));
        vgs
    }

    /// `GET /nodes/{node}/disks/lvmthin` (and `scan/lvmthin` for one VG).
    pub fn thinpools_of(&self, vg: Option<&str>) -> Vec<&ThinPool> {
        self.thinpools
            .iter()
            .filter(|t| vg.is_none_or(|v| v == t.vg))
            .collect()
    }

    /// The ZFS pools by name (`disks/zfs`, `scan/zfs`).
    pub fn zpools_by_name(&self) -> Vec<&Zpool> {
        let mut pools: Vec<&Zpool> = self.zpools.iter().collect();
        pools.sort_by(|a, b| a.name.cmp(&b.name));
        pools
    }

    /// The pool of `GET /nodes/{node}/disks/zfs/{name}`.
    ///
    /// # Errors
    /// `zpool status` of a pool that does not exist.
    pub fn zpool(&self, name: &str) -> crate::model::Result<&Zpool> {
        self.zpools.iter().find(|p| p.name == name).ok_or_else(|| {
            crate::model::Error::failed(format!(
                "command '/sbin/zpool status -P {name}' failed: exit code 1"
            ))
        })
    }

    /// `GET /nodes/{node}/disks/directory`: the mount units by unit file.
    pub fn mounts_by_unit(&self) -> Vec<&MountUnit> {
        let mut mounts: Vec<&MountUnit> = self.mounts.iter().collect();
        mounts.sort_by(|a, b| MountUnit::unitfile(&a.name).cmp(&MountUnit::unitfile(&b.name)));
        mounts
    }

    /// `GET /nodes/{node}/hardware/pci`: the devices whose class does
    /// not start with one of `blacklist`'s prefixes.
    pub fn pci_scan(&self, blacklist: &[&str]) -> Vec<&PciDevice> {
        self.pci
            .iter()
            .filter(|p| {
                let class = p.class.trim_start_matches("0x");
                !blacklist
                    .iter()
                    .any(|b| !b.is_empty() && class.starts_with(b))
            })
            .collect()
    }

    /// `GET /nodes/{node}/hardware/pci/{id}/mdev`: a device's mediated
    /// device types by type (none for a device without).
    pub fn mdev_types(&self, id: &str) -> Vec<&MdevType> {
        let id = if id.len() == 7 {
            format!("0000:{id}")
        } else {
            id.to_string()
        };
        let mut types: Vec<&MdevType> = self
            .pci
            .iter()
            .filter(|p| p.id.eq_ignore_ascii_case(&id))
            .flat_map(|p| p.mdev.iter())
            .collect();
        types.sort_by(|a, b| a.kind.cmp(&b.kind));
        types
    }
}
