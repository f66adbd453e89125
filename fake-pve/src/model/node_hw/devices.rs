//! The node's PCI and USB devices (with a GPU's mediated device types),
//! a fresh install's, and what the hardware scans answer of them
//! (pve-manager `API2/Hardware/{PCI,USB}.pm`).

use serde::{Deserialize, Serialize};

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
pub(super) fn default_pci() -> Vec<PciDevice> {
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

pub(super) fn default_usb() -> Vec<UsbDevice> {
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
