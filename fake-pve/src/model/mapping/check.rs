//! What a mapping's entries are checked against: the node's PCI and USB
//! devices (`PVE::SysFSTools::pci_device_info`, `scan_usb`) and its
//! directories, as `assert_valid` of pve-guest-common's
//! `PVE/Mapping/{PCI,USB,Dir}.pm` checks them, and the checks a VM's
//! start makes of its mapped devices (qemu-server `parse_hostpci`,
//! `USB::parse_usb_device`, `Virtiofs::assert_virtiofs_config`).

use std::collections::{BTreeMap, BTreeSet};

use super::{Entry, Kind, Mapping, Mappings};
use crate::model::node_hw::{NodeHw, PciDevice, UsbDevice};

/// The directories (and a few files) a node has, for the directory
/// mappings: fake-pve has no file system, so a node has the usual
/// system directories, `/mnt/pve/<storage>` of its mount units and the
/// paths its storages name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeFs {
    dirs: BTreeSet<String>,
    files: BTreeSet<String>,
}

/// The directories every node has.
const SYSTEM_DIRS: &[&str] = &[
    "/",
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/etc/pve",
    "/home",
    "/media",
    "/mnt",
    "/mnt/pve",
    "/opt",
    "/proc",
    "/root",
    "/run",
    "/sbin",
    "/srv",
    "/sys",
    "/tmp",
    "/usr",
    "/usr/share",
    "/var",
    "/var/lib",
    "/var/lib/vz",
    "/var/log",
    "/var/tmp",
];

/// Files every node has.
const SYSTEM_FILES: &[&str] = &[
    "/etc/hostname",
    "/etc/hosts",
    "/etc/fstab",
    "/etc/pve/storage.cfg",
    "/etc/pve/datacenter.cfg",
];

impl NodeFs {
    /// A node's directories: the system's, its mount units', and
    /// `extra` (its storages' paths).
    pub fn of(hw: &NodeHw, extra: impl IntoIterator<Item = String>) -> Self {
        let mut dirs: BTreeSet<String> = SYSTEM_DIRS.iter().map(|d| (*d).to_string()).collect();
        dirs.extend(hw.mounts().iter().map(|m| format!("/mnt/pve/{}", m.name)));
        dirs.extend(extra.into_iter().map(|d| normalize(&d)));
        Self {
            dirs,
            files: SYSTEM_FILES.iter().map(|f| (*f).to_string()).collect(),
        }
    }

    /// `Dir::assert_valid`: the path must be a directory.
    ///
    /// # Errors
    /// `Path X does not exist`, `Path X exists, but is not a directory`.
    pub fn assert_dir(&self, path: &str) -> Result<(), String> {
        let p = normalize(path);
        if self.dirs.contains(&p) {
            Ok(())
        } else if self.files.contains(&p) {
            Err(format!("Path {path} exists, but is not a directory"))
        } else {
            Err(format!("Path {path} does not exist"))
        }
    }
}

/// A path without repeated or trailing slashes.
fn normalize(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    format!("/{}", parts.join("/"))
}

/// `0x10de` → `10de`.
fn hex(s: &str) -> String {
    s.replace("0x", "")
}

/// `PCI::assert_valid`: each path of the entry is a device of the node
/// whose ids, IOMMU group (first device only) and mdev capability match
/// the entry's and the mapping's.
///
/// # Errors
/// `pci device 'X' not found`, `missing expected property 'p' for device
/// 'X'`, `unexpected property 'p' configured for device 'X'`, `'p' does
/// not match for 'name' (expected != configured)`.
pub fn assert_valid_pci(
    name: &str,
    entry: &Entry,
    mdev: bool,
    devices: &[PciDevice],
) -> Result<(), String> {
    let paths = entry.path.as_deref().unwrap_or_default();
    for (idx, path) in paths.split(';').filter(|p| !p.is_empty()).enumerate() {
        let has_function = path
            .rsplit_once('.')
            .is_some_and(|(_, f)| f.chars().next().is_some_and(|c| c.is_ascii_hexdigit()));
        let path = if has_function {
            path.to_string()
        } else {
            format!("{path}.0")
        };
        let Some(dev) = devices.iter().find(|d| d.id.eq_ignore_ascii_case(&path)) else {
            return Err(format!("pci device '{path}' not found"));
        };
        let mut expected: BTreeMap<&str, Option<String>> = BTreeMap::new();
        let mut configured: BTreeMap<&str, Option<String>> = BTreeMap::new();
        expected.insert("id", Some(format!("{}:{}", dev.vendor, dev.device)));
        expected.insert("iommugroup", Some(dev.iommugroup.to_string()));
        expected.insert(
            "subsystem-id",
            dev.subsystem_vendor
                .as_ref()
                .zip(dev.subsystem_device.as_ref())
                .map(|(v, d)| format!("{v}:{d}")),
        );
        expected.insert("mdev", Some(u8::from(!dev.mdev.is_empty()).to_string()));
        configured.insert("id", entry.id.clone());
        configured.insert("iommugroup", entry.iommugroup.clone());
        configured.insert("subsystem-id", entry.subsystem_id.clone());
        configured.insert("mdev", Some(u8::from(mdev).to_string()));
        for (prop, want) in &expected {
            if *prop == "iommugroup" && idx > 0 {
                continue;
            }
            let have = configured.get(prop).cloned().flatten();
            match (want, have) {
                (None, None) => {}
                (Some(_), None) => {
                    return Err(format!(
                        "missing expected property '{prop}' for device '{path}'"
                    ));
                }
                (None, Some(_)) => {
                    return Err(format!(
                        "unexpected property '{prop}' configured for device '{path}'"
                    ));
                }
                (Some(w), Some(h)) => {
                    let (w, h) = (hex(w), hex(&h));
                    if w != h {
                        return Err(format!("'{prop}' does not match for '{name}' ({w} != {h})"));
                    }
                }
            }
        }
    }
    Ok(())
}

/// `USB::assert_valid`: the device at the entry's path has its id, or
/// (without a path) a device with the id is there.
///
/// # Errors
/// `usb device 'P' not found`, `'id' does not match for 'name' (real !=
/// configured)`, `usb device 'ID' not found`.
pub fn assert_valid_usb(name: &str, entry: &Entry, devices: &[UsbDevice]) -> Result<(), String> {
    let id = entry.id.clone().unwrap_or_default();
    let real = |d: &UsbDevice| format!("{}:{}", d.vendid, d.prodid);
    match entry.path.as_deref().filter(|p| !p.is_empty()) {
        Some(path) => {
            let Some(dev) = devices
                .iter()
                .rev()
                .find(|d| format!("{}-{}", d.busnum, d.port) == path)
            else {
                return Err(format!("usb device '{path}' not found"));
            };
            let r = real(dev);
            if r != id {
                return Err(format!("'id' does not match for '{name}' ({r} != {id})"));
            }
            Ok(())
        }
        None => {
            if devices.iter().any(|d| real(d) == id) {
                Ok(())
            } else {
                Err(format!("usb device '{id}' not found"))
            }
        }
    }
}

/// What a node is checked against.
#[derive(Debug, Clone, Copy)]
pub struct Host<'a> {
    /// The node's name.
    pub node: &'a str,
    /// Its devices.
    pub hw: &'a NodeHw,
    /// Its directories.
    pub fs: &'a NodeFs,
}

/// One finding of `check-node`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// `warning` or `error`.
    pub severity: &'static str,
    /// The message (an invalid entry's keeps `die`'s line feed).
    pub message: String,
}

/// The list's `check-node` diagnostics of one mapping: a warning when no
/// entry names the node, an error for each entry that is not valid
/// there.
pub fn check_node(kind: Kind, id: &str, m: &Mapping, host: Host<'_>) -> Vec<Finding> {
    let entries = m.on_node(host.node);
    let mut out = Vec::new();
    if entries.is_empty() {
        out.push(Finding {
            severity: "warning",
            message: format!("No mapping for node {}.", host.node),
        });
    }
    for e in &entries {
        if let Err(err) = assert_valid(kind, id, m, e, host) {
            out.push(Finding {
                severity: "error",
                message: format!("Invalid configuration: {err}\n"),
            });
        }
    }
    out
}

/// An entry checked as its kind's `assert_valid` checks it.
fn assert_valid(
    kind: Kind,
    id: &str,
    m: &Mapping,
    e: &Entry,
    host: Host<'_>,
) -> Result<(), String> {
    match kind {
        Kind::Pci => assert_valid_pci(id, e, m.mdev.unwrap_or(false), host.hw.pci()),
        Kind::Usb => assert_valid_usb(id, e, host.hw.usb()),
        Kind::Dir => host.fs.assert_dir(e.path.as_deref().unwrap_or_default()),
    }
}

/// `Dir::assert_valid_map_list`: the local node's entry must name a
/// directory, and no node may be named twice.
///
/// # Errors
/// `Path ...`, `Node 'n' is specified N times.`.
pub fn assert_valid_map_list(map: &[String], local: Host<'_>) -> crate::model::Result<()> {
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for text in map {
        let Some(e) = Entry::parse(text) else {
            continue;
        };
        if e.node == local.node {
            local
                .fs
                .assert_dir(e.path.as_deref().unwrap_or_default())
                .map_err(crate::model::Error::failed)?;
        }
        *count.entry(e.node).or_default() += 1;
    }
    if let Some((node, n)) = count.into_iter().find(|(_, n)| *n > 1) {
        return Err(crate::model::Error::failed(format!(
            "Node '{node}' is specified {n} times."
        )));
    }
    Ok(())
}

/// The mappings a VM config names: `(key, kind, id)` for each
/// `hostpciN: mapping=`, `usbN: mapping=` and `virtiofsN: dirid=`.
pub fn mapped_devices(conf: &BTreeMap<String, String>) -> Vec<(String, Kind, String)> {
    let prop = |v: &str, key: &str| {
        v.split(',')
            .filter_map(|p| p.split_once('='))
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.to_string())
    };
    let numbered = |k: &str, prefix: &str| {
        k.strip_prefix(prefix)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let mut out = Vec::new();
    for (k, v) in conf {
        let found = if numbered(k, "hostpci") {
            prop(v, "mapping").map(|m| (Kind::Pci, m))
        } else if numbered(k, "usb") {
            prop(v, "mapping").map(|m| (Kind::Usb, m))
        } else if numbered(k, "virtiofs") {
            prop(v, "dirid")
                .or_else(|| {
                    v.split(',')
                        .next()
                        .filter(|f| !f.contains('='))
                        .map(str::to_string)
                })
                .map(|d| (Kind::Dir, d))
        } else {
            None
        };
        if let Some((kind, id)) = found {
            out.push((k.clone(), kind, id));
        }
    }
    out
}

impl Mappings {
    /// The checks `vm_start` makes of the VM's mapped devices on its
    /// node, PCI devices first, then USB, then directories.
    ///
    /// # Errors
    /// `PCI device mapping not found for 'x'`, `PCI device mapping
    /// invalid (hardware probably changed): ...`, `USB device mapping not
    /// found for 'x'`, `More than one USB mapping per host not
    /// supported`, `USB Mapping invalid (hardware probably changed):
    /// ...`, `Directory ID x does not exist.`, `No directory mapping for
    /// node n.`, `More than than one directory mapping for node n.`,
    /// `directory mapping invalid: ...`.
    pub fn assert_startable(
        &self,
        conf: &BTreeMap<String, String>,
        host: Host<'_>,
    ) -> Result<(), String> {
        let mut devices = mapped_devices(conf);
        devices.sort_by_key(|(_, kind, _)| *kind);
        for (_, kind, id) in devices {
            let m = self.find(kind, &id);
            let entries = m.map(|m| m.on_node(host.node)).unwrap_or_default();
            match kind {
                Kind::Pci => {
                    let Some(m) = m.filter(|_| !entries.is_empty()) else {
                        return Err(format!("PCI device mapping not found for '{id}'"));
                    };
                    for e in &entries {
                        assert_valid(kind, &id, m, e, host).map_err(|err| {
                            format!("PCI device mapping invalid (hardware probably changed): {err}")
                        })?;
                    }
                }
                Kind::Usb => {
                    let Some(m) = m.filter(|_| !entries.is_empty()) else {
                        return Err(format!("USB device mapping not found for '{id}'"));
                    };
                    if entries.len() > 1 {
                        return Err("More than one USB mapping per host not supported".into());
                    }
                    assert_valid(kind, &id, m, &entries[0], host).map_err(|err| {
                        format!("USB Mapping invalid (hardware probably changed): {err}")
                    })?;
                }
                Kind::Dir => {
                    let Some(m) = m else {
                        return Err(format!("Directory ID {id} does not exist."));
                    };
                    match entries.len() {
                        0 => return Err(format!("No directory mapping for node {}.", host.node)),
                        1 => {}
                        _ => {
                            return Err(format!(
                                "More than than one directory mapping for node {}.",
                                host.node
                            ));
                        }
                    }
                    assert_valid(kind, &id, m, &entries[0], host)
                        .map_err(|err| format!("directory mapping invalid: {err}"))?;
                }
            }
        }
        Ok(())
    }

    /// `check_local_resources`' view of the mapped devices: for each,
    /// its key and mapping name and whether it can be live-migrated;
    /// and per node the keys whose mapping has no entry there.
    pub fn mapped_resources(
        &self,
        conf: &BTreeMap<String, String>,
        nodes: &[String],
    ) -> (Vec<MappedResource>, BTreeMap<String, Vec<String>>) {
        let mut res = Vec::new();
        let mut missing: BTreeMap<String, Vec<String>> =
            nodes.iter().map(|n| (n.clone(), Vec::new())).collect();
        for (key, kind, id) in mapped_devices(conf) {
            let m = self.find(kind, &id);
            for n in nodes {
                if !m.is_some_and(|m| m.has_node(n))
                    && let Some(list) = missing.get_mut(n)
                {
                    list.push(key.clone());
                }
            }
            res.push(MappedResource {
                key,
                name: id,
                live_migration: kind == Kind::Pci
                    && m.and_then(|m| m.live_migration_capable).unwrap_or(false),
            });
        }
        (res, missing)
    }
}

/// A mapped device of a VM, as `check_local_resources` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MappedResource {
    /// `hostpci0`, `usb1`, `virtiofs0`.
    pub key: String,
    /// The mapping's id.
    pub name: String,
    /// A PCI mapping marked `live-migration-capable`.
    pub live_migration: bool,
}
