//! The Crossplane provider's validation rules (seed 000) and the operator
//! reference's ranges (seed 003), checked before anything is sent to PVE.
//! Each rule answers with the field and a message a user can act on.

use std::collections::BTreeMap;

use crate::types::{MachineImageSpec, MachineSnapshotSpec, MachineSpec, Quantity};

mod error;

pub use error::{BridgeNameError, DiskSizeError, ImageRefError, MemoryError, NameError};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
const TIB: u64 = 1 << 40;

/// Splits `4Gi` into `(4.0, "gi")`: the number and the lower-cased unit
/// without spaces and a trailing `b` (`4 GiB`, `4gb`).
fn split_quantity(s: &str) -> Option<(f64, String)> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    if num.is_empty() || num.starts_with('.') || num.ends_with('.') {
        return None;
    }
    let n: f64 = num.parse().ok()?;
    let mut unit = unit.trim().to_ascii_lowercase();
    if unit.len() > 1 && unit.ends_with('b') {
        unit.pop();
    }
    Some((n, unit))
}

/// Memory in bytes. A YAML number is bytes (seed 003); a string takes
/// `Ki`, `Mi`, `Gi`, `Ti`, `K`, `M`, `G`, `T` case-insensitively (binary
/// multiples, as PVE counts) or no unit for MiB (seed 000); 128 MiB to
/// 2 TiB.
///
/// # Errors
/// The message for the `memory` field.
pub fn parse_memory(q: &Quantity) -> Result<u64, MemoryError> {
    let bytes = match q {
        Quantity::Int(n) => *n,
        Quantity::Str(s) => {
            let (n, unit) = split_quantity(s).ok_or_else(|| MemoryError::Format(s.clone()))?;
            let mult = match unit.as_str() {
                "" | "mi" | "m" => MIB,
                "ki" | "k" => KIB,
                "gi" | "g" => GIB,
                "ti" | "t" => TIB,
                _ => return Err(MemoryError::Unit(s.clone())),
            };
            (n * mult as f64) as u64
        }
    };
    if bytes < 128 * MIB {
        return Err(MemoryError::BelowMinimum(q.clone()));
    }
    if bytes > 2 * TIB {
        return Err(MemoryError::AboveMaximum(q.clone()));
    }
    Ok(bytes)
}

/// Disk size in bytes: `Ti`, `Gi`, `Mi`, `T`, `G`, `M` case-insensitively
/// or no unit for GiB (a YAML number too); 1 GiB to 100 TiB.
///
/// # Errors
/// The message for the disk's `size`.
pub fn parse_disk(q: &Quantity) -> Result<u64, DiskSizeError> {
    let bytes = match q {
        Quantity::Int(n) => n.saturating_mul(GIB),
        Quantity::Str(s) => {
            let (n, unit) = split_quantity(s).ok_or_else(|| DiskSizeError::Format(s.clone()))?;
            let mult = match unit.as_str() {
                "" | "gi" | "g" => GIB,
                "mi" | "m" => MIB,
                "ti" | "t" => TIB,
                _ => return Err(DiskSizeError::Unit(s.clone())),
            };
            (n * mult as f64) as u64
        }
    };
    if bytes < GIB {
        return Err(DiskSizeError::BelowMinimum(q.clone()));
    }
    if bytes > 100 * TIB {
        return Err(DiskSizeError::AboveMaximum(q.clone()));
    }
    Ok(bytes)
}

/// A size as PVE writes it (`20G`, `512M`, `1T`, bytes).
pub fn parse_size_text(s: &str) -> Option<u64> {
    let (n, unit) = split_quantity(s)?;
    let mult = match unit.as_str() {
        "" => 1,
        "k" => KIB,
        "m" => MIB,
        "g" => GIB,
        "t" => TIB,
        _ => return None,
    };
    Some((n * mult as f64) as u64)
}

/// Checks a VM name: 1-100 characters, letters, digits, `-`, `_`, `.`
/// and spaces, not starting or ending with a space.
///
/// # Errors
/// The message for the `name` field.
pub fn check_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if name.chars().count() > 100 {
        return Err(NameError::TooLong(name.chars().count()));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ' '))
    {
        return Err(NameError::InvalidCharacters);
    }
    if name.starts_with(' ') || name.ends_with(' ') {
        return Err(NameError::EdgeSpace);
    }
    Ok(())
}

/// The name PVE stores: a DNS name, so spaces and underscores become
/// hyphens.
pub fn pve_name(name: &str) -> String {
    name.chars()
        .map(|c| if c == ' ' || c == '_' { '-' } else { c })
        .collect()
}

/// Checks a bridge name's format (existence is checked per node).
///
/// # Errors
/// The message for the bridge.
pub fn check_bridge(b: &str) -> Result<(), BridgeNameError> {
    if b.is_empty()
        || !b
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(BridgeNameError(b.to_string()));
    }
    Ok(())
}

/// What an image reference names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageRef {
    /// A template's VMID.
    Vmid(u32),
    /// `storage:path`.
    Volume {
        /// The storage.
        storage: String,
        /// The volume path (`iso/x.iso`).
        path: String,
    },
    /// A template's name.
    Name(String),
}

/// Parses an image reference: a VMID (100-999999999), a volume ID
/// (`storage:path`), or a name of at most 255 characters.
///
/// # Errors
/// The message for the image.
pub fn parse_image(s: &str) -> Result<ImageRef, ImageRefError> {
    if s.is_empty() {
        return Err(ImageRefError::Empty);
    }
    if s.chars().all(|c| c.is_ascii_digit()) {
        let n: u64 = s
            .parse()
            .map_err(|_| ImageRefError::VmidOverflow(s.to_string()))?;
        if !(100..=999_999_999).contains(&n) {
            return Err(ImageRefError::VmidOutOfRange(s.to_string()));
        }
        return Ok(ImageRef::Vmid(n as u32));
    }
    if let Some((storage, path)) = s.split_once(':') {
        let id_ok = !storage.is_empty()
            && storage
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !id_ok || path.is_empty() || path.contains("..") {
            return Err(ImageRefError::VolumeId(s.to_string()));
        }
        return Ok(ImageRef::Volume {
            storage: storage.into(),
            path: path.into(),
        });
    }
    if s.len() > 255 {
        return Err(ImageRefError::NameTooLong(s.len()));
    }
    if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(ImageRefError::Name(s.to_string()));
    }
    Ok(ImageRef::Name(s.into()))
}

fn is_mac(s: &str) -> bool {
    let parts: Vec<&str> = s.split(':').collect();
    parts.len() == 6
        && parts
            .iter()
            .all(|p| p.len() == 2 && p.chars().all(|c| c.is_ascii_hexdigit()))
}

fn is_ip(s: &str) -> bool {
    s.parse::<std::net::IpAddr>().is_ok()
}

fn is_cidr(s: &str) -> bool {
    let Some((ip, len)) = s.split_once('/') else {
        return false;
    };
    let Ok(addr) = ip.parse::<std::net::IpAddr>() else {
        return false;
    };
    let max = if addr.is_ipv4() { 32 } else { 128 };
    len.parse::<u8>().is_ok_and(|l| l <= max)
}

/// PVE's tag format.
pub fn is_tag(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+' | '.'))
}

/// Field path to message, for every rule a Machine breaks.
pub type FieldErrors = BTreeMap<String, String>;

/// The PVE `ostype` for a spec's `osType`.
pub fn ostype(s: &str) -> Option<&'static str> {
    Some(match s.to_ascii_lowercase().as_str() {
        "linux" | "l26" => "l26",
        "l24" => "l24",
        "windows" | "win11" => "win11",
        "win10" => "win10",
        "win8" => "win8",
        "win7" => "win7",
        "wvista" => "wvista",
        "w2k8" => "w2k8",
        "w2k3" => "w2k3",
        "w2k" => "w2k",
        "wxp" => "wxp",
        "solaris" => "solaris",
        "other" => "other",
        _ => return None,
    })
}

/// Checks a Machine (`name` is the effective VM name).
pub fn validate_machine(name: &str, spec: &MachineSpec) -> FieldErrors {
    let mut e = FieldErrors::new();
    if spec.cluster.is_empty() {
        e.insert("spec.cluster".into(), "cluster is required".into());
    }
    if let Err(m) = check_name(name) {
        e.insert("spec.name".into(), m.to_string());
    }
    if let Some(v) = spec.vmid
        && !(100..=999_999_999).contains(&v)
    {
        e.insert(
            "spec.vmid".into(),
            format!("vmid {v} is out of range 100-999999999"),
        );
    }
    if !(1..=128).contains(&spec.cpu.cores) {
        e.insert(
            "spec.cpu.cores".into(),
            format!("cpu cores {} out of range 1-128", spec.cpu.cores),
        );
    }
    if !(1..=4).contains(&spec.cpu.sockets) {
        e.insert(
            "spec.cpu.sockets".into(),
            format!("cpu sockets {} out of range 1-4", spec.cpu.sockets),
        );
    }
    if !(1..=2).contains(&spec.cpu.threads) {
        e.insert(
            "spec.cpu.threads".into(),
            format!("cpu threads per core {} out of range 1-2", spec.cpu.threads),
        );
    }
    if let Some(t) = spec.shutdown_timeout_seconds
        && !(1..=3600).contains(&t)
    {
        e.insert(
            "spec.shutdownTimeoutSeconds".into(),
            format!("shutdown timeout {t} s out of range 1-3600"),
        );
    }
    let most = spec.cpu.cores.saturating_mul(spec.cpu.sockets);
    if let Some(v) = spec.cpu.vcpus
        && !(1..=most).contains(&v)
    {
        e.insert(
            "spec.cpu.vcpus".into(),
            format!("cpu vcpus {v} out of range 1-{most} (cores x sockets)"),
        );
    }
    if let Err(m) = parse_memory(&spec.memory) {
        e.insert("spec.memory".into(), m.to_string());
    }
    let mut per_bus: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, d) in spec.disks.iter().enumerate() {
        let f = |k: &str| format!("spec.disks[{i}].{k}");
        if let Err(m) = parse_disk(&d.size) {
            e.insert(f("size"), m.to_string());
        }
        let max = match d.bus.as_str() {
            "scsi" => 31,
            "virtio" => 16,
            "sata" => 6,
            "ide" => 2, // ide2 and ide3 hold the CD-ROM and cloud-init drive
            other => {
                e.insert(
                    f("bus"),
                    format!("invalid disk bus {other:?}: use ide, sata, scsi or virtio"),
                );
                continue;
            }
        };
        let n = per_bus.entry(d.bus.as_str()).or_default();
        *n += 1;
        if *n > max {
            e.insert(f("bus"), format!("at most {max} {} disks", d.bus));
        }
        if let Some(c) = &d.cache
            && !matches!(
                c.as_str(),
                "none" | "writethrough" | "writeback" | "directsync" | "unsafe"
            )
        {
            e.insert(
                f("cache"),
                format!("invalid cache mode {c:?}: use none, writethrough, writeback, directsync or unsafe"),
            );
        }
        if let Some(fm) = &d.format
            && !matches!(fm.as_str(), "raw" | "qcow2" | "vmdk")
        {
            e.insert(
                f("format"),
                format!("invalid disk format {fm:?}: use raw, qcow2 or vmdk"),
            );
        }
        if let Some(p) = &d.provisioning
            && !matches!(p.as_str(), "thin" | "thick")
        {
            e.insert(
                f("provisioning"),
                format!("invalid provisioning {p:?}: use thin or thick"),
            );
        }
        if d.storage.is_empty() {
            e.insert(f("storage"), "storage is required".into());
        }
    }
    if spec.networks.len() > 32 {
        e.insert("spec.networks".into(), "at most 32 networks".into());
    }
    for (i, n) in spec.networks.iter().enumerate() {
        let f = |k: &str| format!("spec.networks[{i}].{k}");
        if let Err(m) = check_bridge(&n.bridge) {
            e.insert(f("bridge"), m.to_string());
        }
        if !matches!(
            n.model.as_str(),
            "virtio" | "e1000" | "e1000e" | "rtl8139" | "vmxnet3"
        ) {
            e.insert(
                f("model"),
                format!(
                    "invalid NIC model {:?}: use virtio, e1000, e1000e, rtl8139 or vmxnet3",
                    n.model
                ),
            );
        }
        if let Some(mac) = &n.mac_address
            && !is_mac(mac)
        {
            e.insert(f("macAddress"), format!("invalid MAC address {mac:?}"));
        }
        if let Some(v) = n.vlan
            && !(1..=4094).contains(&v)
        {
            e.insert(f("vlan"), format!("VLAN {v} out of range 1-4094"));
        }
        if let Some(ip) = &n.ip
            && ip != "dhcp"
            && !is_cidr(ip)
        {
            e.insert(
                f("ip"),
                format!("invalid address {ip:?}: use CIDR (192.0.2.10/24) or dhcp"),
            );
        }
        if let Some(gw) = &n.gateway {
            if !is_ip(gw) {
                e.insert(f("gateway"), format!("invalid gateway {gw:?}"));
            } else if n.ip.as_deref().is_none_or(|ip| ip == "dhcp") {
                e.insert(f("gateway"), "a gateway needs a static ip".into());
            }
        }
    }
    if let Some(ci) = &spec.cloud_init {
        for (i, d) in ci.dns.iter().enumerate() {
            if !is_ip(d) {
                e.insert(
                    format!("spec.cloudInit.dns[{i}]"),
                    format!("invalid DNS server {d:?}"),
                );
            }
        }
        if let Some(u) = &ci.user_data {
            match serde_yaml::from_str::<serde_yaml::Value>(u) {
                Ok(serde_yaml::Value::Mapping(_)) => {}
                Ok(_) => {
                    e.insert(
                        "spec.cloudInit.userData".into(),
                        "user data must be a YAML mapping".into(),
                    );
                }
                Err(err) => {
                    e.insert(
                        "spec.cloudInit.userData".into(),
                        format!("user data is not valid YAML: {err}"),
                    );
                }
            }
        }
        if let Some(v) = &ci.user_data_volume
            && !matches!(parse_image(v), Ok(ImageRef::Volume { .. }))
        {
            e.insert(
                "spec.cloudInit.userDataVolume".into(),
                format!("invalid volume ID {v:?}: expected storage:snippets/file.yaml"),
            );
        }
    }
    if let Some(src) = &spec.source {
        let n = [&src.template, &src.image, &src.volume]
            .iter()
            .filter(|x| x.is_some())
            .count();
        if n != 1 {
            e.insert(
                "spec.source".into(),
                "give exactly one of template, image and volume".into(),
            );
        }
        if let Some(t) = &src.template {
            match parse_image(t) {
                Ok(ImageRef::Volume { .. }) => {
                    e.insert(
                        "spec.source.template".into(),
                        "a template is a VMID or a name; use source.volume for volumes".into(),
                    );
                }
                Ok(_) => {}
                Err(m) => {
                    e.insert("spec.source.template".into(), m.to_string());
                }
            }
        }
        if let Some(v) = &src.volume {
            match parse_image(v) {
                Ok(ImageRef::Volume { .. }) => {}
                Ok(_) => {
                    e.insert(
                        "spec.source.volume".into(),
                        format!("invalid volume ID {v:?}: expected storage:path, as local:iso/ubuntu.iso"),
                    );
                }
                Err(m) => {
                    e.insert("spec.source.volume".into(), m.to_string());
                }
            }
        }
    }
    if let Some(os) = &spec.os_type
        && ostype(os).is_none()
    {
        e.insert(
            "spec.osType".into(),
            format!("invalid os type {os:?}: use linux, windows, solaris, other or a PVE ostype"),
        );
    }
    for (i, b) in spec.boot_order.iter().enumerate() {
        let ok = matches!(b.as_str(), "disk" | "network" | "cdrom")
            || b.strip_prefix("scsi")
                .or_else(|| b.strip_prefix("virtio"))
                .or_else(|| b.strip_prefix("sata"))
                .or_else(|| b.strip_prefix("ide"))
                .or_else(|| b.strip_prefix("net"))
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if !ok {
            e.insert(
                format!("spec.bootOrder[{i}]"),
                format!("invalid boot device {b:?}: use disk, network, cdrom or a device (scsi0)"),
            );
        }
    }
    for (i, t) in spec.tags.iter().enumerate() {
        if !is_tag(t) {
            e.insert(format!("spec.tags[{i}]"), format!("invalid tag {t:?}"));
        }
    }
    if let Some(t) = &spec.tenant
        && !is_tag(&format!("tenant_{t}"))
    {
        e.insert(
            "spec.tenant".into(),
            format!("invalid tenant id {t:?}: letters, digits, '_', '-', '+', '.'"),
        );
    }
    if let Some(p) = &spec.placement {
        if p.max_vms_per_node == Some(0) {
            e.insert(
                "spec.placement.maxVMsPerNode".into(),
                "maxVMsPerNode must be at least 1".into(),
            );
        }
        if let Some(q) = &p.min_free_memory
            && let Err(m) = parse_memory(q).or_else(|m| {
                // Any amount is fine here, only the format matters (as
                // ever, a refusal whose message holds the words counts as
                // one: a malformed value that itself reads "below minimum").
                if matches!(m, MemoryError::BelowMinimum(_))
                    || m.to_string().contains("below minimum")
                {
                    Ok(0)
                } else {
                    Err(m)
                }
            })
        {
            e.insert("spec.placement.minFreeMemory".into(), m.to_string());
        }
    }
    e
}

/// Checks a MachineSnapshot.
pub fn validate_snapshot(name: &str, spec: &MachineSnapshotSpec) -> FieldErrors {
    let mut e = FieldErrors::new();
    if spec.machine.is_empty() {
        e.insert("spec.machine".into(), "machine is required".into());
    }
    let snap = snapshot_name(name, spec);
    let ok = snap.len() <= 40
        && snap.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && snap
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !ok || snap == "current" {
        e.insert(
            "spec.snapshotName".into(),
            format!("invalid snapshot name {snap:?}: a letter, then up to 39 letters, digits, '-' or '_'"),
        );
    }
    e
}

/// The snapshot's name in PVE.
pub fn snapshot_name(name: &str, spec: &MachineSnapshotSpec) -> String {
    spec.snapshot_name.clone().unwrap_or_else(|| {
        name.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    })
}

/// Checks a MachineImage.
pub fn validate_image(name: &str, spec: &MachineImageSpec) -> FieldErrors {
    let mut e = FieldErrors::new();
    if spec.cluster.is_empty() {
        e.insert("spec.cluster".into(), "cluster is required".into());
    }
    if let Err(m) = check_name(spec.name.as_deref().unwrap_or(name)) {
        e.insert("spec.name".into(), m.to_string());
    }
    match (&spec.template, &spec.url) {
        (Some(t), None) => match parse_image(t) {
            Ok(ImageRef::Volume { .. }) => {
                e.insert(
                    "spec.template".into(),
                    "a template is a VMID or a name".into(),
                );
            }
            Ok(_) => {}
            Err(m) => {
                e.insert("spec.template".into(), m.to_string());
            }
        },
        (None, Some(u)) => {
            if !(u.starts_with("https://") || u.starts_with("http://")) {
                e.insert(
                    "spec.url".into(),
                    format!("invalid URL {u:?}: http or https"),
                );
            }
            let file = spec
                .file_name
                .clone()
                .unwrap_or_else(|| u.rsplit('/').next().unwrap_or_default().to_string());
            if !(file.ends_with(".qcow2")
                || file.ends_with(".raw")
                || file.ends_with(".img")
                || file.ends_with(".vmdk"))
            {
                e.insert(
                    "spec.fileName".into(),
                    format!("image file {file:?} must end in .qcow2, .raw, .img or .vmdk"),
                );
            }
        }
        _ => {
            e.insert("spec".into(), "give exactly one of template and url".into());
        }
    }
    e
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
