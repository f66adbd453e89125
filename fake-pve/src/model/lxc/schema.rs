//! The config keys of a container: which keys a release knows, their
//! canonical form (property strings in PVE's order, MAC addresses, tags,
//! DNS lists), their JSON types, and the mount point helpers
//! (pve-container `LXC/Config.pm`: `$confdesc`, `$rootfs_desc`,
//! `$mp_desc`, `$netconf_desc`, `parse_lxc_network`, `print_ct_mountpoint`).

use std::collections::BTreeMap;

use crate::model::{Context, Error, PveVersion, Result};
use crate::spec::{Format, Prop, propstring};

/// Parameters of `create_vm` that are not config keys.
pub const CREATE_ONLY: &[&str] = &[
    "node",
    "vmid",
    "ostemplate",
    "password",
    "storage",
    "force",
    "restore",
    "unique",
    "pool",
    "ignore-unpack-errors",
    "ssh-public-keys",
    "bwlimit",
    "start",
    "ha-managed",
    "unprivileged",
];

/// Config keys that are not parameters but appear in configs.
const INTERNAL_KEYS: &[&str] = &["parent", "snaptime", "snapstate"];

fn config_props(version: PveVersion) -> Option<&'static BTreeMap<String, Prop>> {
    crate::spec::spec(version)
        .endpoint("POST", "/nodes/{node}/lxc")
        .map(|e| &e.parameters.properties)
}

/// The schema of a config key (`net0` → `net[n]`).
pub fn config_prop(version: PveVersion, key: &str) -> Option<&'static Prop> {
    if CREATE_ONLY.contains(&key) && key != "unprivileged" {
        return None;
    }
    let props = config_props(version)?;
    if let Some(p) = props.get(key) {
        return Some(p);
    }
    let base = key.trim_end_matches(|c: char| c.is_ascii_digit());
    if base.len() == key.len() || base.is_empty() {
        return None;
    }
    let digits = &key[base.len()..];
    if digits.len() > 1 && digits.starts_with('0') {
        return None;
    }
    let idx: u32 = digits.parse().ok()?;
    let p = props.get(&format!("{base}[n]"))?;
    match p.max_index {
        Some(count) if idx >= count => None,
        _ => Some(p),
    }
}

/// `option_exists`: whether `key` is a container config option.
pub fn option_exists(version: PveVersion, key: &str) -> bool {
    config_prop(version, key).is_some() || INTERNAL_KEYS.contains(&key)
}

/// `rootfs`, `mpN` and `unusedN`: keys whose value names a volume.
pub fn is_volume_key(key: &str) -> bool {
    key == "rootfs" || is_indexed_key(key, "mp") || is_indexed_key(key, "unused")
}

/// `rootfs` or `mpN`.
pub fn is_mount_key(key: &str) -> bool {
    key == "rootfs" || is_indexed_key(key, "mp")
}

/// Whether `key` is `<base><n>` (`net0`, `mp10`, `unused3`).
pub fn is_indexed_key(key: &str, base: &str) -> bool {
    key.strip_prefix(base)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The volume of a mount point value (its default key or `volume=`).
pub fn mp_volume(value: &str) -> Option<&str> {
    for part in value.split(',') {
        match part.split_once('=') {
            None => return Some(part),
            Some(("volume", v)) => return Some(v),
            _ => {}
        }
    }
    None
}

/// Whether a mount point's volume is a storage volume (not a bind mount
/// of a host path or a device).
pub fn is_storage_volume(volume: &str) -> bool {
    !volume.starts_with('/') && volume.contains(':')
}

/// `$NEW_DISK_RE`: `STORAGE:SIZE_IN_GiB`, answered as the storage and
/// the size in bytes.
pub fn new_disk(volume: &str) -> Option<(&str, u64)> {
    let (sid, size) = volume.split_once(':')?;
    if sid.is_empty() || sid.contains(char::is_whitespace) {
        return None;
    }
    let (int, frac) = size.split_once('.').unwrap_or((size, ""));
    if int.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
        || (size.contains('.') && frac.is_empty())
    {
        return None;
    }
    let gib: f64 = size.parse().ok()?;
    // Whole KiB, as `create_disks` asks the storage for.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let kib = (gib * 1024.0 * 1024.0) as u64;
    Some((sid, kib * 1024))
}

/// The `size=` of a mount point, in bytes.
pub fn mp_size(value: &str) -> Option<u64> {
    value
        .split(',')
        .find_map(|p| p.strip_prefix("size="))
        .and_then(crate::model::size::parse_size)
}

/// A mount point value with its volume and `size=` replaced, printed in
/// PVE's order.
///
/// # Errors
/// A value that does not parse.
pub fn mp_with(
    version: PveVersion,
    key: &str,
    value: &str,
    volume: &str,
    size: u64,
) -> Result<String> {
    let format =
        object_format(version, key).ok_or_else(|| Error::invalid(key, "unknown mount point"))?;
    let mut parsed = propstring::parse(format, value)
        .map_err(|e| Error::invalid(key, e.to_string().trim_end().to_string()))?;
    parsed.insert("volume".into(), volume.to_string());
    parsed.insert("size".into(), size.to_string());
    Ok(propstring::print(format, &parsed))
}

fn object_format(version: PveVersion, key: &str) -> Option<&'static BTreeMap<String, Prop>> {
    match &config_prop(version, key)?.format {
        Some(Format::Object(f)) => Some(f),
        _ => None,
    }
}

/// The canonical text of a config value as PVE writes it: booleans as
/// `1`/`0`, tags sorted and unique, DNS lists space-separated, property
/// strings printed in PVE's order; a network device gets `type=veth` and,
/// when `rq` is given and it has none, a generated `hwaddr`
/// (`parse_lxc_network`).
///
/// # Errors
/// A property string that does not parse.
pub fn canonical(
    version: PveVersion,
    key: &str,
    value: &str,
    rq: Option<&mut Context>,
) -> Result<String> {
    let Some(prop) = config_prop(version, key) else {
        return Ok(value.to_string());
    };
    match key {
        "tags" => {
            let mut tags: Vec<&str> = value
                .split([';', ',', ' '])
                .filter(|t| !t.is_empty())
                .collect();
            tags.sort_unstable();
            tags.dedup();
            return Ok(tags.join(";"));
        }
        "nameserver" | "searchdomain" => {
            return Ok(value
                .split([',', ';', ' ', '\t'])
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join(" "));
        }
        _ => {}
    }
    if prop.kind.as_deref() == Some("boolean") {
        return Ok(match propstring::parse_boolean(value) {
            Some(true) => "1".into(),
            Some(false) => "0".into(),
            None => value.to_string(),
        });
    }
    let Some(format) = object_format(version, key) else {
        return Ok(value.to_string());
    };
    let mut parsed = propstring::parse(format, value)
        .map_err(|e| Error::invalid(key, e.to_string().trim_end().to_string()))?;
    if is_indexed_key(key, "net") {
        parsed.insert("type".into(), "veth".into());
        if let Some(rq) = rq
            && !parsed.contains_key("hwaddr")
        {
            parsed.insert("hwaddr".into(), rq.random_mac());
        }
    }
    Ok(propstring::print(format, &parsed))
}

/// The `ostype` PVE's setup code detects in a template, guessed from the
/// template's file name (`debian-12-standard_...` is `debian`).
pub fn detect_ostype(template: &str) -> &'static str {
    let file = template
        .rsplit('/')
        .next()
        .unwrap_or(template)
        .to_ascii_lowercase();
    let known: [(&str, &'static str); 14] = [
        ("debian", "debian"),
        ("devuan", "devuan"),
        ("ubuntu", "ubuntu"),
        ("alpine", "alpine"),
        ("archlinux", "archlinux"),
        ("centos", "centos"),
        ("rockylinux", "centos"),
        ("almalinux", "centos"),
        ("fedora", "fedora"),
        ("opensuse", "opensuse"),
        ("gentoo", "gentoo"),
        ("nixos", "nixos"),
        ("openeuler", "openeuler"),
        ("turnkey", "debian"),
    ];
    known
        .iter()
        .find(|(p, _)| file.starts_with(p))
        .map_or("unmanaged", |(_, t)| t)
}

/// The architecture in a template's file name (`_amd64`, `_arm64`...),
/// `amd64` when it names none.
pub fn detect_arch(template: &str) -> &'static str {
    for arch in ["arm64", "armhf", "i386", "riscv32", "riscv64"] {
        if template.contains(&format!("_{arch}")) {
            return arch;
        }
    }
    "amd64"
}
