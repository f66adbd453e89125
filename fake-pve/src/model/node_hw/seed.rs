//! A node's hardware as a scenario gives it (`disks`, `pci`, `usb`,
//! `updates`, `scan`), and a fresh install's: the system disk with the
//! `pve` volume group, data disks, and the pools the scenario's disks
//! name.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::devices::{default_pci, default_usb};
use super::{
    Disk, DiskKind, GIB, NodeHw, Partition, PciDevice, Pv, ScanServers, ThinPool, Update,
    UsbDevice, Vg, disks, valid_pci_id,
};

/// Why a scenario's hardware of a node is refused, in words for the
/// scenario's error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HardwareSpecError {
    /// A device path that is no disk's (`sdb`, `nvme0n1`).
    #[error("invalid disk '{0}'")]
    InvalidDisk(String),
    /// A disk listed twice.
    #[error("duplicate disk '{0}'")]
    DuplicateDisk(String),
    /// A malformed PCI id.
    #[error("invalid PCI id '{0}'")]
    InvalidPciId(String),
    /// A disk naming both a ZFS pool and a volume group.
    #[error("disk '{0}' cannot be in a ZFS pool and a volume group")]
    PoolAndVg(String),
    /// A disk naming a thin pool but no volume group.
    #[error("disk '{0}': a thin pool needs a vg")]
    ThinPoolWithoutVg(String),
    /// A volume group named that exists already.
    #[error("volume group '{0}' exists")]
    VgExists(String),
    /// A pool or volume group the disk calls refuse to make.
    #[error(transparent)]
    Disk(#[from] crate::model::Error),
}

/// A disk of a scenario's node (`disks:`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskSpec {
    /// `sdb` or `/dev/sdb`.
    pub dev: String,
    /// Bytes or `4T`.
    pub size: crate::model::scenario::Size,
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
    pub(super) fn is_empty(&self) -> bool {
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

fn data_disk(spec: &DiskSpec) -> Result<Disk, HardwareSpecError> {
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
        return Err(HardwareSpecError::InvalidDisk(spec.dev.clone()));
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
        size: crate::model::scenario::Size(size),
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

    pub(super) fn from_spec(spec: &HardwareSpec) -> Result<Self, HardwareSpecError> {
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
                return Err(HardwareSpecError::DuplicateDisk(d.dev.clone()));
            }
            hw.disks.push(disk);
        }
        hw.disks.sort_by(|a, b| a.devpath.cmp(&b.devpath));
        hw.seed_pools(&specs)?;
        hw.pci = spec.pci.clone().unwrap_or_else(default_pci);
        for p in &hw.pci {
            if !valid_pci_id(&p.id) {
                return Err(HardwareSpecError::InvalidPciId(p.id.clone()));
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
    fn seed_pools(&mut self, specs: &[DiskSpec]) -> Result<(), HardwareSpecError> {
        let mut zpools: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        let mut vgs: BTreeMap<&str, (Vec<String>, Option<&str>)> = BTreeMap::new();
        for d in specs {
            let dev = if d.dev.starts_with("/dev/") {
                d.dev.clone()
            } else {
                format!("/dev/{}", d.dev)
            };
            if d.zpool.is_some() && d.vg.is_some() {
                return Err(HardwareSpecError::PoolAndVg(d.dev.clone()));
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
                return Err(HardwareSpecError::ThinPoolWithoutVg(d.dev.clone()));
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
            self.apply("", &op)?;
        }
        for (name, (devices, thin)) in vgs {
            if self.vgs.iter().any(|v| v.name == name) {
                return Err(HardwareSpecError::VgExists(name.to_string()));
            }
            let mut pvs = Vec::new();
            for dev in &devices {
                let (at, path) = self.verify_blockdev_path(dev)?;
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
}
