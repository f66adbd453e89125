//! What a node has beside its guests: its disks with the volume groups,
//! thin pools, ZFS pools and mounted directories made on them, its PCI
//! and USB devices, the package updates it knows of, the storage servers
//! a scan from it reaches, and a custom certificate (pve-storage
//! `API2/Disks*.pm`, `Diskmanage.pm`, `API2/Storage/Scan.pm`; pve-manager
//! `API2/Hardware*.pm`, `API2/APT.pm`, `API2/Certificates.pm`).
//!
//! # Layout
//! - this module: the node's hardware as data, its scenario form and the
//!   defaults of a fresh install, the read views;
//! - [`disks`]: the disk calls' checks and the tasks that change disks;
//! - [`catalog`]: what the release's software reports (CPU models,
//!   machine types, packages);
//! - [`cluster`]: the tasks' effects on the cluster (storages added and
//!   cleaned up).

pub mod catalog;
pub mod certs;
pub mod cluster;
pub mod disks;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

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
    pub fn seed(&mut self, node: &str, spec: &HardwareSpec) -> Result<(), String> {
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
    fn as_str(self) -> &'static str {
        match self {
            DiskKind::Hdd => "hdd",
            DiskKind::Ssd => "ssd",
            DiskKind::Nvme => "nvme",
            DiskKind::Usb => "usb",
        }
    }

    fn ssd_like(self) -> bool {
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
    fn rpm(&self) -> i64 {
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
    fn usage(&self, include_partitions: bool) -> Option<String> {
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

    /// The `disks/list` entry.
    pub fn list_entry(&self, skipsmart: bool, include_partitions: bool) -> Value {
        let (health, wearout) = if skipsmart {
            ("UNKNOWN".to_string(), json!("N/A"))
        } else {
            (
                self.health.clone(),
                match (self.kind.ssd_like(), self.wearout) {
                    (true, Some(w)) => json!(w),
                    _ => json!("N/A"),
                },
            )
        };
        let mut v = json!({
            "devpath": self.devpath,
            "vendor": self.vendor,
            "model": self.model,
            "size": self.size,
            "serial": self.serial,
            "gpt": u8::from(self.gpt),
            "rpm": self.rpm(),
            "type": self.kind.as_str(),
            "wwn": self.wwn,
            "health": health,
            "wearout": wearout,
            "by_id_link": self.by_id_link(),
            "osdid": -1,
            "osdid-list": null,
        });
        // `get_disks` sets `mounted` only on a mounted device (pve-storage's
        // "only set mounted property for mounted devices").
        if self.mounted {
            v["mounted"] = json!(1);
        }
        if let Some(u) = self.usage(include_partitions) {
            v["used"] = json!(u);
        }
        v
    }

    /// The `disks/smart` answer.
    pub fn smart(&self, healthonly: bool) -> Value {
        if healthonly {
            return json!({ "health": self.health });
        }
        match self.kind {
            DiskKind::Nvme => {
                let used = 100 - self.wearout.unwrap_or(100).min(100);
                let text = format!(
                    "\nSMART/Health Information (NVMe Log 0x02, NSID 0xffffffff)\nCritical Warning:                   0x00\nTemperature:                        36 Celsius\nAvailable Spare:                    100%\nAvailable Spare Threshold:          10%\nPercentage Used:                    {used}%\nData Units Read:                    1,299,288 [665 GB]\nData Units Written:                 5,592,478 [2.86 TB]\nHost Read Commands:                 30,360,807\nHost Write Commands:                470,356,196\nController Busy Time:               12\nPower Cycles:                       98\nPower On Hours:                     687\nUnsafe Shutdowns:                   21\nMedia and Data Integrity Errors:    0\nError Information Log Entries:      0\n"
                );
                let mut v = json!({ "health": self.health, "type": "text", "text": text });
                if let Some(w) = self.wearout {
                    v["wearout"] = json!(w);
                }
                v
            }
            DiskKind::Usb => json!({ "health": self.health }),
            _ => {
                let attr =
                    |id: u32, name: &str, flags: &str, value: u32, thresh: u32, raw: &str| {
                        json!({
                            "id": format!("{id:>3}"),
                            "name": name,
                            "flags": flags,
                            "value": value,
                            "normalized": value,
                            "worst": value,
                            "threshold": thresh,
                            "fail": "-",
                            "raw": raw,
                        })
                    };
                let mut attributes = vec![
                    attr(1, "Raw_Read_Error_Rate", "POSR-K", 100, 6, "0"),
                    attr(5, "Reallocated_Sector_Ct", "PO--CK", 100, 10, "0"),
                    attr(9, "Power_On_Hours", "-O--CK", 99, 0, "1309"),
                    attr(12, "Power_Cycle_Count", "-O--CK", 100, 20, "98"),
                ];
                if self.kind == DiskKind::Ssd {
                    let w = self.wearout.unwrap_or(100);
                    attributes.push(attr(177, "Wear_Leveling_Count", "PO--C-", w, 0, "12"));
                }
                attributes.push(attr(194, "Temperature_Celsius", "-O---K", 64, 0, "36"));
                attributes.push(attr(199, "UDMA_CRC_Error_Count", "-OSRCK", 200, 0, "0"));
                json!({ "health": self.health, "type": "ata", "attributes": attributes })
            }
        }
    }
}

impl Partition {
    fn usage(&self) -> Option<String> {
        self.used
            .clone()
            .or_else(|| self.mounted.then(|| "mounted".to_string()))
            .or_else(|| self.holder.then(|| "Device Mapper".to_string()))
    }

    /// The `disks/list` entry of a partition (`include-partitions=1`).
    fn list_entry(&self, disk: &Disk) -> Value {
        let mut v = json!({
            "devpath": self.devpath,
            "parent": disk.devpath,
            "gpt": u8::from(disk.gpt),
            "type": "partition",
            "size": self.size,
            "osdid": -1,
            "osdid-list": null,
        });
        if self.mounted {
            v["mounted"] = json!(1);
        }
        if let Some(u) = self.usage() {
            v["used"] = json!(u);
        }
        v
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
    fn size(&self) -> u64 {
        self.pvs.iter().map(|p| p.size).sum()
    }

    fn free(&self) -> u64 {
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

/// A PCI device of the node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PciDevice {
    /// `0000:01:00.0`.
    pub id: String,
    /// `0x030000`.
    pub class: String,
    /// `0x10de`.
    pub vendor: String,
    /// `0x1eb8`.
    pub device: String,
    /// Vendor name from `pci.ids`.
    #[serde(default)]
    pub vendor_name: Option<String>,
    /// Device name from `pci.ids`.
    #[serde(default)]
    pub device_name: Option<String>,
    /// `0x10de`.
    #[serde(default)]
    pub subsystem_vendor: Option<String>,
    /// `0x12a2`.
    #[serde(default)]
    pub subsystem_device: Option<String>,
    /// Subsystem vendor name.
    #[serde(default)]
    pub subsystem_vendor_name: Option<String>,
    /// Subsystem device name.
    #[serde(default)]
    pub subsystem_device_name: Option<String>,
    /// IOMMU group; -1 without IOMMU.
    #[serde(default = "no_iommu")]
    pub iommugroup: i64,
    /// Mediated device types it offers (vGPU).
    #[serde(default)]
    pub mdev: Vec<MdevType>,
}

fn no_iommu() -> i64 {
    -1
}

/// A mediated device type of a PCI device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MdevType {
    /// `nvidia-222`.
    #[serde(rename = "type")]
    pub kind: String,
    /// How many more can be made.
    pub available: u32,
    /// `GRID T4-1B`.
    #[serde(default)]
    pub name: Option<String>,
    /// The driver's description.
    #[serde(default)]
    pub description: String,
}

impl PciDevice {
    /// The `hardware/pci` entry.
    pub fn entry(&self, verbose: bool) -> Value {
        let mut v = json!({
            "id": self.id,
            "class": self.class,
            "vendor": self.vendor,
            "device": self.device,
            "iommugroup": self.iommugroup,
        });
        if !self.mdev.is_empty() {
            v["mdev"] = json!(1);
        }
        if verbose {
            for (k, val) in [
                ("vendor_name", &self.vendor_name),
                ("device_name", &self.device_name),
                ("subsystem_vendor", &self.subsystem_vendor),
                ("subsystem_device", &self.subsystem_device),
                ("subsystem_vendor_name", &self.subsystem_vendor_name),
                ("subsystem_device_name", &self.subsystem_device_name),
            ] {
                if let Some(s) = val {
                    v[k] = json!(s);
                }
            }
        }
        v
    }
}

/// A USB device of the node (hubs are not listed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsbDevice {
    /// Bus number.
    pub busnum: u32,
    /// Device number.
    pub devnum: u32,
    /// Port.
    #[serde(default = "one")]
    pub port: u32,
    /// Depth below the root hub.
    #[serde(default = "one")]
    pub level: u32,
    /// `046d`.
    pub vendid: String,
    /// `c52b`.
    pub prodid: String,
    /// Speed in Mbit/s (`12`, `480`, `5000`).
    #[serde(default = "full_speed")]
    pub speed: String,
    /// Device class.
    #[serde(default)]
    pub class: u32,
    /// Manufacturer string.
    #[serde(default)]
    pub manufacturer: Option<String>,
    /// Product string.
    #[serde(default)]
    pub product: Option<String>,
    /// Serial string.
    #[serde(default)]
    pub serial: Option<String>,
}

fn one() -> u32 {
    1
}

fn full_speed() -> String {
    "12".into()
}

impl UsbDevice {
    /// The `hardware/usb` entry.
    pub fn entry(&self) -> Value {
        let mut v = json!({
            "busnum": self.busnum,
            "devnum": self.devnum,
            "port": self.port,
            "level": self.level,
            "usbpath": format!("{}-{}", self.busnum, self.port),
            "vendid": self.vendid,
            "prodid": self.prodid,
            "speed": self.speed,
            "class": self.class,
        });
        for (k, val) in [
            ("manufacturer", &self.manufacturer),
            ("product", &self.product),
            ("serial", &self.serial),
        ] {
            if let Some(s) = val {
                v[k] = json!(s);
            }
        }
        v
    }
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

/// An NFS export a server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NfsExport {
    /// `/export/pve`.
    pub path: String,
    /// Who may mount it (`192.0.2.0/24`, `*`).
    #[serde(default = "everyone")]
    pub options: String,
}

fn everyone() -> String {
    "*".into()
}

/// A CIFS share a server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CifsShare {
    /// Share name.
    pub share: String,
    /// Its comment.
    #[serde(default)]
    pub description: String,
}

/// A CIFS server: its shares and, when it wants a login, the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CifsServer {
    /// The shares.
    pub shares: Vec<CifsShare>,
    /// The user it accepts; none: guest access.
    #[serde(default)]
    pub username: Option<String>,
    /// That user's password.
    #[serde(default)]
    pub password: Option<String>,
}

/// A Proxmox Backup Server: its login and datastores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PbsServer {
    /// `user@realm` (or a token id).
    pub username: String,
    /// Its password or token secret.
    pub password: String,
    /// The server certificate's fingerprint.
    #[serde(default)]
    pub fingerprint: Option<String>,
    /// Datastores: name and comment.
    pub datastores: Vec<PbsStore>,
}

/// A datastore of a Proxmox Backup Server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PbsStore {
    /// Datastore name.
    pub store: String,
    /// Its comment.
    #[serde(default)]
    pub comment: Option<String>,
}

/// The storage servers a scan from the node reaches, by address (as
/// given to the scan; a name is resolved only if it is declared here).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScanServers {
    /// NFS servers and their exports (also what a 8.x GlusterFS scan,
    /// which asks showmount, finds).
    #[serde(default)]
    pub nfs: BTreeMap<String, Vec<NfsExport>>,
    /// CIFS servers.
    #[serde(default)]
    pub cifs: BTreeMap<String, CifsServer>,
    /// iSCSI portals and their targets.
    #[serde(default)]
    pub iscsi: BTreeMap<String, Vec<String>>,
    /// Proxmox Backup Servers.
    #[serde(default)]
    pub pbs: BTreeMap<String, PbsServer>,
}

impl ScanServers {
    fn is_empty(&self) -> bool {
        self.nfs.is_empty() && self.cifs.is_empty() && self.iscsi.is_empty() && self.pbs.is_empty()
    }
}

/// A custom certificate uploaded to the node (`pveproxy-ssl.pem`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// A disk of a scenario's node (`disks:`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskSpec {
    /// `sdb` or `/dev/sdb`.
    pub dev: String,
    /// Bytes or `4T`.
    pub size: super::scenario::Size,
    /// `hdd` (default), `ssd`, `nvme` or `usb`.
    #[serde(default, rename = "type")]
    pub kind: Option<DiskKind>,
    /// Model (default by type).
    #[serde(default)]
    pub model: Option<String>,
    /// Serial (default made from the name).
    #[serde(default)]
    pub serial: Option<String>,
    /// Vendor (default `ATA`, `unknown` for NVMe).
    #[serde(default)]
    pub vendor: Option<String>,
    /// WWN.
    #[serde(default)]
    pub wwn: Option<String>,
    /// SMART health (default `PASSED`).
    #[serde(default)]
    pub health: Option<String>,
    /// Life left in percent, SSDs (default 100).
    #[serde(default)]
    pub wearout: Option<u32>,
    /// What already holds it (`LVM`, `ZFS`, `ext4`, ...).
    #[serde(default)]
    pub used: Option<String>,
    /// Whether it has a GPT.
    #[serde(default)]
    pub gpt: bool,
    /// The ZFS pool it is part of (disks naming one pool make it: one is
    /// `single`, two a `mirror`, more a `raidz`).
    #[serde(default)]
    pub zpool: Option<String>,
    /// The LVM volume group it is the physical volume of.
    #[serde(default)]
    pub vg: Option<String>,
    /// A thin pool in that volume group (named like it by default).
    #[serde(default)]
    pub thinpool: Option<String>,
}

/// A node's hardware in a scenario (the node keys `disks`, `pci`, `usb`,
/// `updates`, `scan`); what is left out is a fresh install's.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct HardwareSpec {
    /// Disks beside the system disk `/dev/sda` (which a scenario may
    /// replace by listing `sda`).
    #[serde(default)]
    pub disks: Option<Vec<DiskSpec>>,
    /// PCI devices.
    #[serde(default)]
    pub pci: Option<Vec<PciDevice>>,
    /// USB devices.
    #[serde(default)]
    pub usb: Option<Vec<UsbDevice>>,
    /// Package updates available.
    #[serde(default)]
    pub updates: Option<Vec<Update>>,
    /// Storage servers for the scans.
    #[serde(default)]
    pub scan: Option<ScanServers>,
}

impl HardwareSpec {
    fn is_empty(&self) -> bool {
        self.disks.is_none()
            && self.pci.is_none()
            && self.usb.is_none()
            && self.updates.is_none()
            && self.scan.as_ref().is_none_or(ScanServers::is_empty)
    }
}

/// The system disk of a fresh install: GPT with BIOS boot, EFI (mounted
/// on `/boot/efi`) and the `pve` volume group.
fn system_disk() -> Disk {
    let size = 500_107_862_016;
    let p1 = 1_031_168;
    let p2 = GIB;
    Disk {
        devpath: "/dev/sda".into(),
        kind: DiskKind::Ssd,
        size,
        model: "Samsung SSD 870 EVO 500GB".into(),
        serial: "S6PXNM0T412345A".into(),
        vendor: "ATA".into(),
        wwn: "0x5002538f4212345a".into(),
        health: "PASSED".into(),
        wearout: Some(99),
        gpt: true,
        used: None,
        mounted: false,
        holder: false,
        partitions: vec![
            Partition {
                devpath: "/dev/sda1".into(),
                size: p1,
                used: Some("BIOS boot".into()),
                mounted: false,
                holder: false,
            },
            Partition {
                devpath: "/dev/sda2".into(),
                size: p2,
                used: Some("EFI".into()),
                mounted: true,
                holder: false,
            },
            Partition {
                devpath: "/dev/sda3".into(),
                size: size - p1 - p2 - 2 * 1024 * 1024,
                used: Some("LVM".into()),
                mounted: false,
                holder: true,
            },
        ],
    }
}

fn data_disk(spec: &DiskSpec) -> Result<Disk, String> {
    let devpath = if spec.dev.starts_with("/dev/") {
        spec.dev.clone()
    } else {
        format!("/dev/{}", spec.dev)
    };
    let name = devpath.trim_start_matches("/dev/");
    let valid = (name.starts_with("sd") || name.starts_with("vd") || name.starts_with("hd"))
        && name.len() > 2
        && name[2..].bytes().all(|b| b.is_ascii_lowercase())
        || name.starts_with("nvme")
            && name[4..].split_once('n').is_some_and(|(a, b)| {
                !a.is_empty()
                    && !b.is_empty()
                    && a.bytes().all(|c| c.is_ascii_digit())
                    && b.bytes().all(|c| c.is_ascii_digit())
            });
    if !valid {
        return Err(format!("invalid disk '{}'", spec.dev));
    }
    let kind = spec.kind.unwrap_or(if name.starts_with("nvme") {
        DiskKind::Nvme
    } else {
        DiskKind::Hdd
    });
    let model = spec.model.clone().unwrap_or_else(|| {
        match kind {
            DiskKind::Hdd => "ST4000NM000A-2HZ100",
            DiskKind::Ssd => "Samsung SSD 870 EVO 1TB",
            DiskKind::Nvme => "Samsung SSD 980 PRO 1TB",
            DiskKind::Usb => "Ultra Fit",
        }
        .to_string()
    });
    let tag: u32 = name.bytes().map(u32::from).sum();
    Ok(Disk {
        devpath: devpath.clone(),
        kind,
        size: spec.size.0,
        model,
        serial: spec
            .serial
            .clone()
            .unwrap_or_else(|| format!("ZC1{:05}", tag * 37)),
        vendor: spec.vendor.clone().unwrap_or_else(|| {
            if kind == DiskKind::Nvme {
                "unknown".into()
            } else {
                "ATA".into()
            }
        }),
        wwn: spec
            .wwn
            .clone()
            .unwrap_or_else(|| format!("0x5000c500{:08x}", tag * 7919)),
        health: spec.health.clone().unwrap_or_else(|| "PASSED".into()),
        wearout: if kind.ssd_like() {
            Some(spec.wearout.unwrap_or(100))
        } else {
            None
        },
        gpt: spec.gpt,
        used: spec.used.clone(),
        mounted: false,
        holder: false,
        partitions: Vec::new(),
    })
}

fn default_disks() -> Vec<DiskSpec> {
    let disk = |dev: &str, size: u64, kind: DiskKind, wearout: Option<u32>| DiskSpec {
        dev: dev.into(),
        size: super::scenario::Size(size),
        kind: Some(kind),
        model: None,
        serial: None,
        vendor: None,
        wwn: None,
        health: None,
        wearout,
        used: None,
        gpt: false,
        zpool: None,
        vg: None,
        thinpool: None,
    };
    vec![
        disk("sdb", 4_000_787_030_016, DiskKind::Hdd, None),
        disk("sdc", 4_000_787_030_016, DiskKind::Hdd, None),
        disk("nvme0n1", 1_000_204_886_016, DiskKind::Nvme, Some(98)),
    ]
}

fn pci(id: &str, class: &str, vendor: (&str, &str), device: (&str, &str), group: i64) -> PciDevice {
    PciDevice {
        id: id.into(),
        class: class.into(),
        vendor: vendor.0.into(),
        device: device.0.into(),
        vendor_name: Some(vendor.1.into()),
        device_name: Some(device.1.into()),
        subsystem_vendor: Some(vendor.0.into()),
        subsystem_device: Some("0x0000".into()),
        subsystem_vendor_name: Some(vendor.1.into()),
        subsystem_device_name: None,
        iommugroup: group,
        mdev: Vec::new(),
    }
}

/// The PCI devices of a fresh node: host bridge, ISA bridge, SMBus (left
/// out by the default class filter), USB, SATA, NICs, an NVMe
/// controller and a vGPU-capable GPU.
fn default_pci() -> Vec<PciDevice> {
    const INTEL: (&str, &str) = ("0x8086", "Intel Corporation");
    let mut gpu = pci(
        "0000:65:00.0",
        "0x030200",
        ("0x10de", "NVIDIA Corporation"),
        ("0x1eb8", "TU104GL [Tesla T4]"),
        30,
    );
    gpu.subsystem_device = Some("0x12a2".into());
    gpu.mdev = (0..4)
        .map(|i| {
            let (kind, name, avail) = [
                ("nvidia-222", "GRID T4-1B", 16),
                ("nvidia-223", "GRID T4-2B", 8),
                ("nvidia-230", "GRID T4-4Q", 4),
                ("nvidia-234", "GRID T4-16Q", 1),
            ][i];
            MdevType {
                kind: kind.into(),
                available: avail,
                name: Some(name.into()),
                description: format!("num_heads=4, frl_config=45, framebuffer={}M, max_resolution=5120x2880, max_instance={avail}", 16384 / avail),
            }
        })
        .collect();
    vec![
        pci(
            "0000:00:00.0",
            "0x060000",
            INTEL,
            ("0x2020", "Sky Lake-E DMI3 Registers"),
            0,
        ),
        pci(
            "0000:00:14.0",
            "0x0c0330",
            INTEL,
            (
                "0xa1af",
                "C620 Series Chipset Family USB 3.0 xHCI Controller",
            ),
            14,
        ),
        pci(
            "0000:00:17.0",
            "0x010601",
            INTEL,
            (
                "0xa182",
                "C620 Series Chipset Family SATA Controller [AHCI mode]",
            ),
            15,
        ),
        pci(
            "0000:00:1f.0",
            "0x060100",
            INTEL,
            ("0xa1c2", "C621 Series Chipset LPC/eSPI Controller"),
            16,
        ),
        pci(
            "0000:00:1f.4",
            "0x0c0500",
            INTEL,
            ("0xa1a3", "C620 Series Chipset Family SMBus"),
            16,
        ),
        pci(
            "0000:18:00.0",
            "0x020000",
            INTEL,
            ("0x1521", "I350 Gigabit Network Connection"),
            20,
        ),
        pci(
            "0000:18:00.1",
            "0x020000",
            INTEL,
            ("0x1521", "I350 Gigabit Network Connection"),
            21,
        ),
        pci(
            "0000:5e:00.0",
            "0x010802",
            ("0x144d", "Samsung Electronics Co Ltd"),
            ("0xa80a", "NVMe SSD Controller PM9A1/PM9A3/980PRO"),
            28,
        ),
        gpu,
    ]
}

fn default_usb() -> Vec<UsbDevice> {
    vec![
        UsbDevice {
            busnum: 1,
            devnum: 2,
            port: 3,
            level: 1,
            vendid: "0557".into(),
            prodid: "2419".into(),
            speed: "12".into(),
            class: 0,
            manufacturer: Some("ATEN International Co., Ltd".into()),
            product: Some("Virtual Keyboard and Mouse".into()),
            serial: None,
        },
        UsbDevice {
            busnum: 2,
            devnum: 2,
            port: 1,
            level: 1,
            vendid: "0781".into(),
            prodid: "5583".into(),
            speed: "5000".into(),
            class: 0,
            manufacturer: Some("SanDisk".into()),
            product: Some("Ultra Fit".into()),
            serial: Some("4C530001230614116223".into()),
        },
    ]
}

impl NodeHw {
    /// A fresh install: the system disk with the `pve` volume group and
    /// its `data` thin pool (`local-lvm`), two empty HDDs (`sdb`, `sdc`)
    /// and an empty NVMe disk, a few PCI and USB devices, no updates, no
    /// scan servers.
    pub fn fresh() -> Self {
        Self::from_spec(&HardwareSpec::default()).unwrap_or_else(|_| Self::empty())
    }

    fn empty() -> Self {
        Self {
            disks: Vec::new(),
            vgs: Vec::new(),
            thinpools: Vec::new(),
            zpools: Vec::new(),
            mounts: Vec::new(),
            pci: Vec::new(),
            usb: Vec::new(),
            updates: Vec::new(),
            scan: ScanServers::default(),
            custom_cert: None,
        }
    }

    fn from_spec(spec: &HardwareSpec) -> Result<Self, String> {
        let mut hw = Self::empty();
        let specs = spec.disks.clone().unwrap_or_else(default_disks);
        let own_sda = specs
            .iter()
            .any(|d| d.dev.trim_start_matches("/dev/") == "sda");
        if !own_sda {
            let sda = system_disk();
            let pv = &sda.partitions[2];
            let thin = 348 * GIB + 864 * (1 << 20);
            hw.vgs.push(Vg {
                name: "pve".into(),
                pvs: vec![Pv {
                    name: pv.devpath.clone(),
                    size: pv.size,
                    free: 16 * GIB,
                }],
                lvcount: 3,
            });
            hw.thinpools.push(ThinPool {
                vg: "pve".into(),
                lv: "data".into(),
                lv_size: thin,
                metadata_size: 3_565_158_400,
            });
            hw.disks.push(sda);
        }
        for d in &specs {
            let disk = data_disk(d)?;
            if hw.disks.iter().any(|x| x.devpath == disk.devpath) {
                return Err(format!("duplicate disk '{}'", d.dev));
            }
            hw.disks.push(disk);
        }
        hw.disks.sort_by(|a, b| a.devpath.cmp(&b.devpath));
        hw.seed_pools(&specs)?;
        hw.pci = spec.pci.clone().unwrap_or_else(default_pci);
        for p in &hw.pci {
            if !valid_pci_id(&p.id) {
                return Err(format!("invalid PCI id '{}'", p.id));
            }
        }
        hw.pci.sort_by(|a, b| a.id.cmp(&b.id));
        hw.usb = spec.usb.clone().unwrap_or_else(default_usb);
        hw.updates = spec.updates.clone().unwrap_or_default();
        hw.scan = spec.scan.clone().unwrap_or_default();
        Ok(hw)
    }

    /// Makes the ZFS pools and volume groups the scenario's disks name,
    /// as the disk calls would have made them.
    fn seed_pools(&mut self, specs: &[DiskSpec]) -> Result<(), String> {
        let mut zpools: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        let mut vgs: BTreeMap<&str, (Vec<String>, Option<&str>)> = BTreeMap::new();
        for d in specs {
            let dev = if d.dev.starts_with("/dev/") {
                d.dev.clone()
            } else {
                format!("/dev/{}", d.dev)
            };
            if d.zpool.is_some() && d.vg.is_some() {
                return Err(format!(
                    "disk '{}' cannot be in a ZFS pool and a volume group",
                    d.dev
                ));
            }
            if let Some(z) = &d.zpool {
                zpools.entry(z).or_default().push(dev.clone());
            }
            if let Some(v) = &d.vg {
                let e = vgs.entry(v).or_default();
                e.0.push(dev.clone());
                if let Some(t) = &d.thinpool {
                    e.1 = Some(t);
                }
            } else if d.thinpool.is_some() {
                return Err(format!("disk '{}': a thin pool needs a vg", d.dev));
            }
        }
        for (name, devices) in zpools {
            let raidlevel = match devices.len() {
                1 => "single",
                2 => "mirror",
                _ => "raidz",
            };
            let op = disks::DiskOp::ZfsCreate {
                name: name.to_string(),
                devices,
                raidlevel: raidlevel.into(),
                ashift: 12,
                compression: "on".into(),
                draid: String::new(),
                add_storage: false,
            };
            self.apply("", &op).map_err(|e| e.to_string())?;
        }
        for (name, (devices, thin)) in vgs {
            if self.vgs.iter().any(|v| v.name == name) {
                return Err(format!("volume group '{name}' exists"));
            }
            let mut pvs = Vec::new();
            for dev in &devices {
                let (at, path) = self.verify_blockdev_path(dev).map_err(|e| e.to_string())?;
                let size = match at {
                    disks::Dev::Disk(i) => {
                        self.disks[i].used = Some("LVM".into());
                        self.disks[i].holder = thin.is_some();
                        self.disks[i].size
                    }
                    disks::Dev::Part(i, j) => self.disks[i].partitions[j].size,
                };
                let size = (size - (1 << 20)) / (4 << 20) * (4 << 20);
                pvs.push(Pv {
                    name: path,
                    size,
                    free: size,
                });
            }
            let mut vg = Vg {
                name: name.to_string(),
                pvs,
                lvcount: 0,
            };
            if let Some(lv) = thin {
                let size = vg.size() / 100 * 98;
                vg.pvs.iter_mut().for_each(|p| p.free = p.size / 100 * 2);
                vg.lvcount = 1;
                self.thinpools.push(ThinPool {
                    vg: name.to_string(),
                    lv: lv.to_string(),
                    lv_size: size,
                    metadata_size: (size / 100).clamp(GIB, 16 * GIB),
                });
            }
            self.vgs.push(vg);
        }
        Ok(())
    }

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

    /// The custom certificate, if one was uploaded.
    pub fn custom_cert(&self) -> Option<&CustomCert> {
        self.custom_cert.as_ref()
    }

    /// Uploads (`Some`) or removes (`None`) the custom certificate.
    pub fn set_custom_cert(&mut self, cert: Option<CustomCert>) {
        self.custom_cert = cert;
    }

    /// `GET /nodes/{node}/disks/list`.
    pub fn disks_list(
        &self,
        kind: Option<&str>,
        skipsmart: bool,
        include_partitions: bool,
    ) -> Vec<Value> {
        let mut out = Vec::new();
        for d in &self.disks {
            let entry = d.list_entry(skipsmart, include_partitions);
            let keep = match kind {
                Some("unused") => entry.get("used").is_none(),
                Some("journal_disks") => match entry["used"].as_str() {
                    None => true,
                    Some(u) => (u == "partitions" && d.gpt) || u == "LVM",
                },
                _ => true,
            };
            if keep {
                out.push((d.name().to_string(), entry));
            }
            if include_partitions {
                for p in &d.partitions {
                    let entry = p.list_entry(d);
                    let keep = match kind {
                        Some("unused") => entry.get("used").is_none(),
                        Some("journal_disks") => match entry["used"].as_str() {
                            None => true,
                            Some(u) => u == "LVM",
                        },
                        _ => true,
                    };
                    if keep {
                        out.push((p.devpath.trim_start_matches("/dev/").to_string(), entry));
                    }
                }
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out.into_iter().map(|(_, v)| v).collect()
    }

    /// `GET /nodes/{node}/disks/lvm`.
    pub fn lvm_view(&self) -> Value {
        let mut vgs: Vec<&Vg> = self.vgs.iter().collect();
        vgs.sort_by(|a, b| a.name.cmp(&b.name));
        let children: Vec<Value> = vgs
            .into_iter()
            .map(|vg| {
                json!({
                    "name": vg.name,
                    "size": vg.size(),
                    "free": vg.free(),
                    "lvcount": vg.lvcount,
                    "leaf": 0,
                    "children": vg.pvs.iter().map(|p| json!({
                        "name": p.name, "size": p.size, "free": p.free, "leaf": 1,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        json!({ "leaf": 0, "children": children })
    }

    /// `GET /nodes/{node}/disks/lvmthin` (and `scan/lvmthin` for one VG).
    pub fn thinpools_view(&self, vg: Option<&str>) -> Vec<Value> {
        self.thinpools
            .iter()
            .filter(|t| vg.is_none_or(|v| v == t.vg))
            .map(|t| {
                json!({
                    "lv": t.lv,
                    "vg": t.vg,
                    "lv_size": t.lv_size,
                    "used": 0,
                    "metadata_size": t.metadata_size,
                    "metadata_used": t.metadata_size / 100,
                })
            })
            .collect()
    }

    /// `GET /nodes/{node}/disks/zfs`.
    pub fn zpools_view(&self) -> Vec<Value> {
        let mut pools: Vec<&Zpool> = self.zpools.iter().collect();
        pools.sort_by(|a, b| a.name.cmp(&b.name));
        pools
            .into_iter()
            .map(|p| {
                let alloc = 540_672 + 4096 * 128;
                json!({
                    "name": p.name,
                    "size": p.size,
                    "alloc": alloc,
                    "free": p.size - alloc,
                    "frag": 0,
                    "dedup": 1.0,
                    "health": "ONLINE",
                })
            })
            .collect()
    }

    /// `GET /nodes/{node}/disks/zfs/{name}`: `zpool status` as a tree.
    ///
    /// # Errors
    /// `zpool status` of a pool that does not exist.
    pub fn zpool_detail(&self, name: &str) -> super::Result<Value> {
        let Some(p) = self.zpools.iter().find(|p| p.name == name) else {
            return Err(super::Error::failed(format!(
                "command '/sbin/zpool status -P {name}' failed: exit code 1"
            )));
        };
        let leaf = |dev: &String| json!({ "name": format!("{dev}-part1"), "state": "ONLINE", "read": 0, "write": 0, "cksum": 0, "msg": "", "leaf": 1 });
        let vdevs: Vec<Value> = match p.raidlevel.as_str() {
            "single" => p.devices.iter().map(leaf).collect(),
            "raid10" => p
                .devices
                .chunks(2)
                .enumerate()
                .map(|(i, pair)| {
                    json!({ "name": format!("mirror-{i}"), "state": "ONLINE", "read": 0, "write": 0, "cksum": 0, "msg": "", "leaf": 0,
                        "children": pair.iter().map(leaf).collect::<Vec<_>>() })
                })
                .collect(),
            level => {
                let vname = match level {
                    "raidz" => "raidz1",
                    other => other,
                };
                vec![json!({ "name": format!("{vname}-0"), "state": "ONLINE", "read": 0, "write": 0, "cksum": 0, "msg": "", "leaf": 0,
                    "children": p.devices.iter().map(leaf).collect::<Vec<_>>() })]
            }
        };
        Ok(json!({
            "name": p.name,
            "state": "ONLINE",
            "errors": "No known data errors",
            "leaf": 0,
            "children": [{
                "name": p.name, "state": "ONLINE", "read": 0, "write": 0, "cksum": 0, "msg": "", "leaf": 0,
                "children": vdevs,
            }],
        }))
    }

    /// `GET /nodes/{node}/disks/directory`.
    pub fn mounts_view(&self) -> Vec<Value> {
        let mut mounts: Vec<&MountUnit> = self.mounts.iter().collect();
        mounts.sort_by(|a, b| MountUnit::unitfile(&a.name).cmp(&MountUnit::unitfile(&b.name)));
        mounts
            .into_iter()
            .map(|m| {
                json!({
                    "unitfile": MountUnit::unitfile(&m.name),
                    "path": format!("/mnt/pve/{}", m.name),
                    "device": m.what,
                    "type": m.fstype,
                    "options": "defaults",
                })
            })
            .collect()
    }

    /// `GET /nodes/{node}/scan/lvm`: the volume groups.
    pub fn scan_lvm(&self) -> Vec<Value> {
        let mut vgs: Vec<Value> = self
            .vgs
            .iter()
            .map(|vg| json!({ "vg": vg.name, "size": vg.size(), "free": vg.free() }))
            .collect();
        vgs.sort_by(|a, b| a["vg"].as_str().cmp(&b["vg"].as_str()));
        vgs
    }

    /// `GET /nodes/{node}/scan/zfs`: the pools' file systems.
    pub fn scan_zfs(&self) -> Vec<Value> {
        self.zpools_view()
            .into_iter()
            .map(|p| json!({ "pool": p["name"], "size": p["free"], "free": p["free"] }))
            .collect()
    }

    /// `GET /nodes/{node}/hardware/pci`: the devices whose class does
    /// not start with one of `blacklist`'s prefixes.
    pub fn pci_scan(&self, blacklist: &[&str], verbose: bool) -> Vec<Value> {
        self.pci
            .iter()
            .filter(|p| {
                let class = p.class.trim_start_matches("0x");
                !blacklist
                    .iter()
                    .any(|b| !b.is_empty() && class.starts_with(b))
            })
            .map(|p| p.entry(verbose))
            .collect()
    }

    /// `GET /nodes/{node}/hardware/pci/{id}/mdev`: a device's mediated
    /// device types (none for a device without); a mapping name finds
    /// no device (fake-pve has no resource mappings).
    pub fn mdev_types(&self, id: &str) -> Vec<Value> {
        let id = if id.len() == 7 {
            format!("0000:{id}")
        } else {
            id.to_string()
        };
        let mut types: Vec<Value> = self
            .pci
            .iter()
            .filter(|p| p.id.eq_ignore_ascii_case(&id))
            .flat_map(|p| p.mdev.iter())
            .map(|m| {
                let mut v = json!({ "type": m.kind, "available": m.available, "description": m.description });
                if let Some(n) = &m.name {
                    v["name"] = json!(n);
                }
                v
            })
            .collect();
        types.sort_by(|a, b| a["type"].as_str().cmp(&b["type"].as_str()));
        types
    }

    /// `GET /nodes/{node}/hardware/usb`.
    pub fn usb_scan(&self) -> Vec<Value> {
        self.usb.iter().map(UsbDevice::entry).collect()
    }

    /// The package updates the node knows of.
    pub fn updates(&self) -> &[Update] {
        &self.updates
    }
}

/// `[domain:]bus:slot.function` in hex.
pub fn valid_pci_id(id: &str) -> bool {
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    let (rest, func) = match id.rsplit_once('.') {
        Some(x) => x,
        None => return false,
    };
    let parts: Vec<&str> = rest.split(':').collect();
    hex(func, 1)
        && match parts.as_slice() {
            [d, b, s] => hex(d, 4) && hex(b, 2) && hex(s, 2),
            [b, s] => hex(b, 2) && hex(s, 2),
            _ => false,
        }
}
