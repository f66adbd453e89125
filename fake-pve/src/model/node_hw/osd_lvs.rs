//! What `cephcreateosd` and `cephdestroyosd` do to a node's disks
//! beside the OSD's own disk (pve-manager `API2/Ceph/OSD.pm`): the
//! checks of a `block.db` or `block.wal` device, the logical volume made
//! for it (in a new `ceph-<uuid>` volume group on an unused device, or
//! in the Ceph volume group already on it), and `ceph-volume lvm zap`
//! of one logical volume.

use super::disks::Dev;
use super::{DiskKind, NodeHw, Pv, Vg};
use crate::model::{Error, Result};

/// LVM's extent size.
const EXTENT: u64 = 4 << 20;

/// A device as `get_disks($devs, 1, 1)` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevInfo {
    /// `/dev/sdc`, `/dev/sdc2`.
    pub devpath: String,
    /// Bytes.
    pub size: u64,
    /// What holds it (with the partitions listed: `partitions` for a
    /// disk that has some).
    pub used: Option<String>,
    /// Whether its disk has a GPT.
    pub gpt: bool,
    /// Whether it is a partition.
    pub partition: bool,
    /// Its disk's kind.
    pub kind: DiskKind,
}

/// A logical volume made for an OSD's `block.db` or `block.wal`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MadeLv {
    /// Its volume group.
    pub vg: String,
    /// Its name.
    pub lv: String,
    /// Its size (whole extents).
    pub size: u64,
}

impl NodeHw {
    /// The device `path` names, as `get_disks` with partitions reports it.
    ///
    /// # Errors
    /// [`NodeHw::verify_blockdev_path`]'s.
    pub fn osd_device_info(&self, path: &str) -> Result<DevInfo> {
        let (dev, devpath) = self.verify_blockdev_path(path)?;
        Ok(match dev {
            Dev::Disk(i) => {
                let d = &self.disks[i];
                DevInfo {
                    devpath,
                    size: d.size,
                    used: d.usage(true),
                    gpt: d.gpt,
                    partition: false,
                    kind: d.kind,
                }
            }
            Dev::Part(i, j) => {
                let d = &self.disks[i];
                let p = &d.partitions[j];
                DevInfo {
                    devpath,
                    size: p.size,
                    used: p.usage(),
                    gpt: d.gpt,
                    partition: true,
                    kind: d.kind,
                }
            }
        })
    }

    /// The Ceph volume group (`ceph-...`) whose physical volume is
    /// `devpath`, the first by name.
    pub fn ceph_vg_on(&self, devpath: &str) -> Option<&Vg> {
        let mut vgs: Vec<&Vg> = self
            .vgs
            .iter()
            .filter(|v| v.name.starts_with("ceph-") && v.pvs.iter().any(|p| p.name == devpath))
            .collect();
        vgs.sort_by(|a, b| a.name.cmp(&b.name));
        vgs.first().copied()
    }

    /// `$create_part_or_lv` for an unused device or one with a Ceph
    /// volume group: `size` bytes (rounded down to KiB) for `kind`
    /// (`osd-db`, `osd-wal`) in a new `ceph-<vg_uuid>` group or the one
    /// there, the logical volume `<kind>-<lv_uuid>`; answers it and the
    /// lines `pvcreate`, `vgcreate`, `lvcreate` and `sgdisk` print.
    ///
    /// # Errors
    /// PVE's messages: the device too small, no Ceph volume group, not
    /// enough free space (as `lvcreate` says it), a device in other use.
    pub fn ceph_lv_create(
        &mut self,
        path: &str,
        size: u64,
        kind: &str,
        vg_uuid: &str,
        lv_uuid: &str,
        out: &mut Vec<String>,
    ) -> Result<MadeLv> {
        let info = self.osd_device_info(path)?;
        let devpath = info.devpath.clone();
        if info.size < size {
            return Err(Error::failed(format!(
                "'{devpath}' is smaller than requested size '{size}' bytes"
            )));
        }
        let kb = size / 1024;
        let lv = format!("{kind}-{lv_uuid}");
        let vg = match info.used.as_deref() {
            None => {
                let vg = format!("ceph-{vg_uuid}");
                let (dev, _) = self.verify_blockdev_path(&devpath)?;
                let pv_size = (info.size - (1 << 20)) / EXTENT * EXTENT;
                out.push(format!(
                    "  Physical volume \"{devpath}\" successfully created."
                ));
                out.push(format!("  Volume group \"{vg}\" successfully created"));
                self.vgs.push(Vg {
                    name: vg.clone(),
                    pvs: vec![Pv {
                        name: devpath.clone(),
                        size: pv_size,
                        free: pv_size,
                    }],
                    lvcount: 0,
                });
                self.mark_lvm(dev);
                vg
            }
            Some("LVM") => {
                let Some(vg) = self.ceph_vg_on(&devpath) else {
                    return Err(Error::failed(format!("no ceph vg found on '{devpath}'")));
                };
                // PVE compares the group's free bytes with the size in KiB.
                if vg.free() < kb {
                    return Err(Error::failed(format!(
                        "vg '{}' has not enough free space",
                        vg.name
                    )));
                }
                vg.name.clone()
            }
            _ => {
                return Err(Error::failed(format!(
                    "cannot use '{devpath}' for '{kind}'"
                )));
            }
        };
        let made = self.lvcreate(&vg, &lv, kb * 1024, out)?;
        if info.used.is_none() && info.partition {
            out.push("The operation has completed successfully.".into());
        }
        Ok(made)
    }

    /// `lvcreate --size <n>k`: whole extents out of the group's free
    /// space.
    fn lvcreate(
        &mut self,
        vg: &str,
        lv: &str,
        bytes: u64,
        out: &mut Vec<String>,
    ) -> Result<MadeLv> {
        let Some(g) = self.vgs.iter_mut().find(|v| v.name == vg) else {
            return Err(Error::failed(format!("no ceph vg found on '{vg}'")));
        };
        let need = bytes.div_ceil(EXTENT);
        let free = g.free() / EXTENT;
        if need > free {
            return Err(Error::failed(format!(
                "lvcreate '{vg}/{lv}' error:   Volume group \"{vg}\" has insufficient free space ({free} extents): {need} required."
            )));
        }
        let mut left = need * EXTENT;
        for p in &mut g.pvs {
            let take = left.min(p.free);
            p.free -= take;
            left -= take;
        }
        g.lvcount += 1;
        out.push(format!("  Logical volume \"{lv}\" created."));
        Ok(MadeLv {
            vg: vg.to_string(),
            lv: lv.to_string(),
            size: need * EXTENT,
        })
    }

    fn mark_lvm(&mut self, dev: Dev) {
        match dev {
            Dev::Disk(i) => {
                self.disks[i].used = Some("LVM".into());
                self.disks[i].holder = true;
            }
            Dev::Part(i, j) => {
                let p = &mut self.disks[i].partitions[j];
                p.used = Some("LVM".into());
                p.holder = true;
            }
        }
    }

    /// `ceph-volume lvm batch --osds-per-device <n>` on `devpath`'s
    /// group `vg` (made by [`NodeHw::ceph_osd_create`]): its `n` logical
    /// volumes of equal size. Answers that size.
    pub fn ceph_batch_split(&mut self, vg: &str, n: u32) -> u64 {
        let Some(g) = self.vgs.iter_mut().find(|v| v.name == vg) else {
            return 0;
        };
        let size = g.size() / EXTENT / u64::from(n.max(1)) * EXTENT;
        g.lvcount = n;
        for p in &mut g.pvs {
            p.free = p.size - size * u64::from(n);
        }
        size
    }

    /// `ceph-volume lvm zap --destroy` of one logical volume of `size`
    /// bytes in `vg`: the last one of its group takes the group and
    /// frees its devices; else the group gets the space back.
    pub fn ceph_lv_zap(&mut self, vg: &str, size: u64) {
        let Some(at) = self.vgs.iter().position(|v| v.name == vg) else {
            return;
        };
        if self.vgs[at].lvcount <= 1 {
            let gone = self.vgs.remove(at);
            for pv in gone.pvs {
                if let Ok((dev, _)) = self.verify_blockdev_path(&pv.name) {
                    match dev {
                        Dev::Disk(i) => {
                            let d = &mut self.disks[i];
                            d.used = None;
                            d.holder = false;
                        }
                        Dev::Part(i, j) => {
                            let p = &mut self.disks[i].partitions[j];
                            p.used = None;
                            p.holder = false;
                        }
                    }
                }
            }
            return;
        }
        let g = &mut self.vgs[at];
        g.lvcount -= 1;
        let mut back = size;
        for p in &mut g.pvs {
            let room = (p.size - p.free).min(back);
            p.free += room;
            back -= room;
        }
    }
}
