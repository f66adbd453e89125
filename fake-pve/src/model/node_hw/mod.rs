//! What a node has beside its guests: its disks with the volume groups,
//! thin pools, ZFS pools and mounted directories made on them, its PCI
//! and USB devices, the package updates it knows of, the storage servers
//! a scan from it reaches, and a custom certificate (pve-storage
//! `API2/Disks*.pm`, `Diskmanage.pm`, `API2/Storage/Scan.pm`; pve-manager
//! `API2/Hardware*.pm`, `API2/APT.pm`, `API2/Certificates.pm`).
//!
//! # Layout
//! - this module: the node's disks and what is made on them, as data;
//! - `seed`: the hardware's scenario form and a fresh install's;
//! - `devices`: PCI and USB devices; `scan`: the storage servers a scan
//!   reaches;
//! - `views`: what the read calls answer;
//! - [`disks`]: the disk calls' checks and the tasks that change disks;
//! - [`catalog`]: what the release's software reports (CPU models,
//!   machine types, packages);
//! - [`cluster`]: the tasks' effects on the cluster (storages added and
//!   cleaned up).

pub mod catalog;
pub mod certs;
pub mod cluster;
pub mod cpus;
mod devices;
pub mod disks;
pub mod osd_lvs;
mod scan;
mod seed;
#[cfg(test)]
mod tests;
mod views;
pub use views::DiskRow;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub(crate) use cluster::apply_disk_op;
pub use devices::{MdevType, PciDevice, UsbDevice, valid_pci_id};
pub use scan::ScanServers;
pub use seed::{DiskSpec, HardwareSpec, HardwareSpecError};

const GIB: u64 = 1 << 30;

/// Every node's hardware, by node name. A node not in the map has the
/// hardware of a fresh install ([`NodeHw::fresh`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Hardware {
    #[serde(default)]
    nodes: BTreeMap<String, NodeHw>,
}

impl Hardware {
    /// Whether every node has the hardware of a fresh install (and a
    /// saved world need not keep any).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The hardware of `node`.
    pub fn node(&self, node: &str) -> std::borrow::Cow<'_, NodeHw> {
        match self.nodes.get(node) {
            Some(hw) => std::borrow::Cow::Borrowed(hw),
            None => std::borrow::Cow::Owned(NodeHw::fresh()),
        }
    }

    /// The hardware of `node`, to change it.
    pub fn node_mut(&mut self, node: &str) -> &mut NodeHw {
        self.nodes
            .entry(node.to_string())
            .or_insert_with(NodeHw::fresh)
    }

    /// Sets a node's hardware from its scenario entry.
    ///
    /// # Errors
    /// A malformed device path, size or PCI id, in words for the
    /// scenario's error.
    pub fn seed(&mut self, node: &str, spec: &HardwareSpec) -> Result<(), HardwareSpecError> {
        if spec.is_empty() {
            return Ok(());
        }
        let hw = NodeHw::from_spec(spec)?;
        self.nodes.insert(node.to_string(), hw);
        Ok(())
    }
}

/// The kind of a disk as `get_disks` tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum DiskKind {
    /// Rotating.
    #[default]
    Hdd,
    /// SATA/SAS solid state.
    Ssd,
    /// NVMe.
    Nvme,
    /// On USB.
    Usb,
}

impl DiskKind {
    /// `hdd`, `ssd`, `nvme` or `usb`.
    pub fn as_str(self) -> &'static str {
        match self {
            DiskKind::Hdd => "hdd",
            DiskKind::Ssd => "ssd",
            DiskKind::Nvme => "nvme",
            DiskKind::Usb => "usb",
        }
    }

    /// Solid state (SATA/SAS or NVMe): it has a wear-out level.
    pub fn ssd_like(self) -> bool {
        matches!(self, DiskKind::Ssd | DiskKind::Nvme)
    }
}

/// A partition of a disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Partition {
    /// `/dev/sda3`.
    pub devpath: String,
    /// Bytes.
    pub size: u64,
    /// What holds it (`LVM`, `EFI`, `ext4`, `ZFS`, ...); `None` unused.
    #[serde(default)]
    pub used: Option<String>,
    /// Whether it is mounted.
    #[serde(default)]
    pub mounted: bool,
    /// Whether a device mapper device sits on it (active LVs).
    #[serde(default)]
    pub holder: bool,
}

/// One block device of `/sys/block`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disk {
    /// `/dev/sdb`.
    pub devpath: String,
    /// `hdd`, `ssd`, `nvme` or `usb`.
    #[serde(rename = "type")]
    pub kind: DiskKind,
    /// Bytes.
    pub size: u64,
    /// Model as udev reports it.
    pub model: String,
    /// Serial number.
    pub serial: String,
    /// Vendor (`ATA`; `unknown` for NVMe).
    pub vendor: String,
    /// World wide name.
    pub wwn: String,
    /// SMART health (`PASSED`, `FAILED!`, `UNKNOWN`).
    pub health: String,
    /// Percent of life left (SSDs); `None` is PVE's `N/A`.
    #[serde(default)]
    pub wearout: Option<u32>,
    /// Whether it has a GPT.
    #[serde(default)]
    pub gpt: bool,
    /// What holds the whole disk (`LVM`, `ZFS`, a file system).
    #[serde(default)]
    pub used: Option<String>,
    /// Whether the whole disk is mounted.
    #[serde(default)]
    pub mounted: bool,
    /// Whether a device mapper device sits on the whole disk.
    #[serde(default)]
    pub holder: bool,
    /// Its partitions, in order.
    #[serde(default)]
    pub partitions: Vec<Partition>,
}

impl Disk {
    /// The name under `/dev` (`sdb`, `nvme0n1`).
    pub fn name(&self) -> &str {
        self.devpath.trim_start_matches("/dev/")
    }

    /// Rotations per minute as udev reports them (0 for solid state).
    pub fn rpm(&self) -> i64 {
        match self.kind {
            DiskKind::Hdd => 7200,
            _ => 0,
        }
    }

    /// The `/dev/disk/by-id` link ZFS pools are made with.
    pub fn by_id_link(&self) -> String {
        let model = self.model.replace(' ', "_");
        match self.kind {
            DiskKind::Nvme => format!("/dev/disk/by-id/nvme-{model}_{}", self.serial),
            _ => format!("/dev/disk/by-id/ata-{model}_{}", self.serial),
        }
    }

    /// The disk's usage as `get_disks` works it out: its own, else (without
    /// partitions listed) its first used partition's, else `partitions`,
    /// else `Device Mapper` for a holder.
    pub fn usage(&self, include_partitions: bool) -> Option<String> {
        let mut used = self.used.clone();
        if used.is_none() && self.mounted {
            used = Some("mounted".into());
        }
        if include_partitions {
            if !self.partitions.is_empty() {
                used = Some("partitions".into());
            }
        } else if used.is_none() {
            used = self.partitions.iter().find_map(|p| p.usage());
        }
        if used.is_none() && !self.partitions.is_empty() {
            used = Some("partitions".into());
        }
        if used.is_none() && self.holder {
            used = Some("Device Mapper".into());
        }
        used
    }

    /// Whether anything holds the disk or one of its partitions
    /// (`disk_is_used`).
    pub fn is_used(&self) -> bool {
        self.usage(false).is_some()
    }
}

impl Partition {
    /// What holds it: its own use, else `mounted`, else `Device Mapper`
    /// for a holder.
    pub fn usage(&self) -> Option<String> {
        self.used
            .clone()
            .or_else(|| self.mounted.then(|| "mounted".to_string()))
            .or_else(|| self.holder.then(|| "Device Mapper".to_string()))
    }
}

/// A physical volume of a volume group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pv {
    /// The device (`/dev/sdb`, `/dev/sda3`).
    pub name: String,
    /// Bytes.
    pub size: u64,
    /// Bytes not given to logical volumes.
    pub free: u64,
}

/// An LVM volume group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vg {
    /// Its name.
    pub name: String,
    /// Its physical volumes.
    pub pvs: Vec<Pv>,
    /// How many logical volumes it has.
    pub lvcount: u32,
}

impl Vg {
    /// The size of its physical volumes.
    pub fn size(&self) -> u64 {
        self.pvs.iter().map(|p| p.size).sum()
    }

    /// The free space of its physical volumes.
    pub fn free(&self) -> u64 {
        self.pvs.iter().map(|p| p.free).sum()
    }
}

/// An LVM thin pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThinPool {
    /// Its volume group.
    pub vg: String,
    /// Its logical volume.
    pub lv: String,
    /// Bytes.
    pub lv_size: u64,
    /// Bytes of metadata.
    pub metadata_size: u64,
}

/// A ZFS pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Zpool {
    /// Its name.
    pub name: String,
    /// `single`, `mirror`, `raidz`, ... as it was made.
    pub raidlevel: String,
    /// The devices (by-id links) it was made of.
    pub devices: Vec<String>,
    /// Usable bytes.
    pub size: u64,
    /// `compression` property.
    pub compression: String,
}

impl Zpool {
    /// Bytes allocated (a fresh pool's: its root data set's metadata).
    pub fn alloc(&self) -> u64 {
        540_672 + 4096 * 128
    }
}

/// A directory storage's systemd mount unit (`/mnt/pve/<name>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MountUnit {
    /// The storage name.
    pub name: String,
    /// The partition mounted (`/dev/sdb1`).
    pub partition: String,
    /// `/dev/disk/by-uuid/<uuid>`.
    pub what: String,
    /// `ext4` or `xfs`.
    pub fstype: String,
}

impl MountUnit {
    /// `mnt-pve-<name>.mount` under `/etc/systemd/system`.
    pub fn unitfile(name: &str) -> String {
        format!(
            "/etc/systemd/system/{}.mount",
            escape_unit(&format!("/mnt/pve/{name}"))
        )
    }
}

/// `systemd-escape --path`, as `PVE::Systemd::escape_unit($path, 1)`.
pub fn escape_unit(path: &str) -> String {
    let trimmed = path.trim_matches('/');
    let mut out = String::new();
    for (i, c) in trimmed.chars().enumerate() {
        match c {
            '/' => out.push('-'),
            c if c.is_ascii_alphanumeric() || c == '_' || (c == '.' && i > 0) => out.push(c),
            c => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            }
        }
    }
    out
}

/// A package update the node knows of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Update {
    /// Package name.
    pub package: String,
    /// The version available.
    pub version: String,
    /// Short description (default: the installed package's).
    #[serde(default)]
    pub title: Option<String>,
}

/// A custom certificate uploaded to the node (`pveproxy-ssl.pem`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CustomCert {
    /// The chain as uploaded (`pveproxy-ssl.pem`).
    pub pem: String,
    /// Its key (`pveproxy-ssl.key`).
    pub key: String,
}

/// What a node has: disks and what is made on them, devices, updates,
/// scan servers, certificate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeHw {
    pub(super) disks: Vec<Disk>,
    #[serde(default)]
    pub(super) vgs: Vec<Vg>,
    #[serde(default)]
    pub(super) thinpools: Vec<ThinPool>,
    #[serde(default)]
    pub(super) zpools: Vec<Zpool>,
    #[serde(default)]
    pub(super) mounts: Vec<MountUnit>,
    #[serde(default)]
    pub(super) pci: Vec<PciDevice>,
    #[serde(default)]
    pub(super) usb: Vec<UsbDevice>,
    #[serde(default)]
    pub(super) updates: Vec<Update>,
    #[serde(default)]
    pub(super) scan: ScanServers,
    #[serde(default)]
    pub(super) custom_cert: Option<CustomCert>,
}

impl NodeHw {
    /// The disks, by device path.
    pub fn disks(&self) -> &[Disk] {
        &self.disks
    }

    /// The disk `/dev/<name>`.
    pub fn disk(&self, devpath: &str) -> Option<&Disk> {
        self.disks.iter().find(|d| d.devpath == devpath)
    }

    /// The storage servers the node's scans reach.
    pub fn scan(&self) -> &ScanServers {
        &self.scan
    }

    /// The volume groups.
    pub fn vgs(&self) -> &[Vg] {
        &self.vgs
    }

    /// The LVM thin pools.
    pub fn thinpools(&self) -> &[ThinPool] {
        &self.thinpools
    }

    /// The ZFS pools.
    pub fn zpools(&self) -> &[Zpool] {
        &self.zpools
    }

    /// The directory storages' mount units.
    pub fn mounts(&self) -> &[MountUnit] {
        &self.mounts
    }

    /// The PCI devices, every class.
    pub fn pci(&self) -> &[PciDevice] {
        &self.pci
    }

    /// The USB devices.
    pub fn usb(&self) -> &[UsbDevice] {
        &self.usb
    }

    /// The custom certificate, if one was uploaded.
    pub fn custom_cert(&self) -> Option<&CustomCert> {
        self.custom_cert.as_ref()
    }

    /// Uploads (`Some`) or removes (`None`) the custom certificate.
    pub fn set_custom_cert(&mut self, cert: Option<CustomCert>) {
        self.custom_cert = cert;
    }

    /// The package updates the node knows of.
    pub fn updates(&self) -> &[Update] {
        &self.updates
    }
}
