//! The schema of config keys: which keys a PVE version knows, their canonical
//! form (property strings in PVE's order, drives, MACs) and the drive helpers
//! (qemu-server `QemuServer.pm`, `QemuServer/Drive.pm`).

use super::*;

/// Parameters of `create_vm` that are not config keys.
pub const CREATE_ONLY: &[&str] = &[
    "node",
    "vmid",
    "archive",
    "bwlimit",
    "force",
    "pool",
    "start",
    "storage",
    "unique",
    "live-restore",
    "import-working-storage",
    "ha-managed",
];

/// Config keys that are not in the create schema but appear in configs.
const INTERNAL_KEYS: &[&str] = &[
    "meta",
    "parent",
    "snaptime",
    "vmstate",
    "runningmachine",
    "runningcpu",
    "running-nets-host-mtu",
];

fn config_props(version: PveVersion) -> Option<&'static BTreeMap<String, Prop>> {
    crate::spec::spec(version)
        .endpoint("POST", "/nodes/{node}/qemu")
        .map(|e| &e.parameters.properties)
}

/// The schema of a config key (`net0` → `net[n]`).
pub fn config_prop(version: PveVersion, key: &str) -> Option<&'static Prop> {
    if CREATE_ONLY.contains(&key) {
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
    let idx: u32 = key[base.len()..].parse().ok()?;
    if key[base.len()..].starts_with('0') && key.len() - base.len() > 1 {
        return None;
    }
    let p = props.get(&format!("{base}[n]"))?;
    match p.max_index {
        Some(count) if idx >= count => None,
        _ => Some(p),
    }
}

/// `option_exists`: whether `key` is a config option.
pub fn option_exists(version: PveVersion, key: &str) -> bool {
    config_prop(version, key).is_some() || INTERNAL_KEYS.contains(&key)
}

fn object_format(p: &Prop) -> Option<&BTreeMap<String, Prop>> {
    match &p.format {
        Some(Format::Object(f)) => Some(f),
        _ => None,
    }
}

/// Drive keys (`is_valid_drivename`), in PVE's order of allocation.
pub fn is_drive_key(key: &str) -> bool {
    if key == "efidisk0" || key == "tpmstate0" {
        return true;
    }
    let base = key.trim_end_matches(|c: char| c.is_ascii_digit());
    base.len() < key.len() && matches!(base, "ide" | "sata" | "scsi" | "virtio")
}

pub(super) fn drive_order(key: &str) -> (u8, u32) {
    let base = key.trim_end_matches(|c: char| c.is_ascii_digit());
    let n = key[base.len()..].parse().unwrap_or(0);
    let rank = match base {
        "ide" => 0,
        "sata" => 1,
        "scsi" => 2,
        "virtio" => 3,
        "efidisk" => 4,
        "tpmstate" => 5,
        _ => 6,
    };
    (rank, n)
}

/// The volume (`file`) of a drive value.
pub fn drive_file(value: &str) -> &str {
    for part in value.split(',') {
        match part.split_once('=') {
            None => return part,
            Some(("file" | "volume", v)) => return v,
            _ => {}
        }
    }
    ""
}

pub(super) fn drive_is_cdrom(value: &str) -> bool {
    value.split(',').any(|p| p == "media=cdrom") || drive_file(value) == "cdrom"
}

/// Whether the config line `key: value` is a disk: a drive that is not a
/// CD-ROM.
pub(super) fn is_disk(key: &str, value: &str) -> bool {
    is_drive_key(key) && !drive_is_cdrom(value)
}

/// `STORAGE:SIZE` or `SIZE`: a new disk of SIZE GiB.
pub(super) fn new_disk(file: &str) -> Option<(Option<&str>, f64)> {
    let (sid, size) = match file.split_once(':') {
        Some((s, n)) => (Some(s), n),
        None => (None, file),
    };
    if sid.is_some_and(|s| s.is_empty() || s.contains('/') || s.contains(char::is_whitespace)) {
        return None;
    }
    let mut parts = size.splitn(2, '.');
    let int = parts.next()?;
    let frac = parts.next();
    if int.is_empty()
        || !int.bytes().all(|c| c.is_ascii_digit())
        || frac.is_some_and(|f| f.is_empty() || !f.bytes().all(|c| c.is_ascii_digit()))
    {
        return None;
    }
    Some((sid, size.parse().ok()?))
}

/// Bytes as qemu-img's progress prints them (`8.0 GiB`).
pub(super) fn qemu_clone_bytes(bytes: u64) -> String {
    clone::render_bytes1(bytes)
}

/// `STORAGE:cloudinit` or `cloudinit`.
pub(super) fn cloudinit_storage(file: &str) -> Option<Option<&str>> {
    match file.split_once(':') {
        Some((s, "cloudinit")) => Some(Some(s)),
        None if file == "cloudinit" => Some(None),
        _ => None,
    }
}

pub(super) fn uuid(rq: &mut Context) -> String {
    rq.uuid_v4()
}

/// Cloud-init options, applied at once even on a running VM.
pub(super) fn is_cloudinit_option(key: &str) -> bool {
    matches!(
        key,
        "ciuser"
            | "cipassword"
            | "citype"
            | "ciupgrade"
            | "cicustom"
            | "nameserver"
            | "searchdomain"
            | "sshkeys"
    ) || key.starts_with("ipconfig")
}

/// Normalises a value to the form PVE writes. PVE parses every property
/// string to validate it but writes most options as given; it rewrites
/// only what qemu-server's `API2/Qemu.pm` prints again: drives
/// (`print_drive`), NICs (`print_net`, in `add_random_macs` and
/// `update_vm_api`) and a boot `order` (`print_bootorder`), while
/// `JSONSchema::check_type` turns booleans given as words into 0/1.
///
/// # Errors
/// 400 with the property-string error.
pub fn canonical(version: PveVersion, key: &str, value: &str) -> Result<String> {
    canonical_inner(version, key, value, None)
}

/// As [`canonical`], and a new NIC without `macaddr` gets a generated
/// one (PVE's `BC:24:11` prefix), drawn from the request's context.
///
/// # Errors
/// As [`canonical`].
pub fn canonical_new(
    version: PveVersion,
    key: &str,
    value: &str,
    rq: &mut Context,
) -> Result<String> {
    canonical_inner(version, key, value, Some(rq))
}

/// As [`canonical_new`], for a config update: `vmgenid=1` asks for a
/// fresh generation ID, which `update_vm_api` draws at once (a create
/// draws it when its task ends).
///
/// # Errors
/// As [`canonical`].
pub fn canonical_update(
    version: PveVersion,
    key: &str,
    value: &str,
    rq: &mut Context,
) -> Result<String> {
    if key == "vmgenid" && value == "1" {
        return Ok(uuid(rq));
    }
    canonical_inner(version, key, value, Some(rq))
}

fn canonical_inner(
    version: PveVersion,
    key: &str,
    value: &str,
    rq: Option<&mut Context>,
) -> Result<String> {
    let Some(prop) = config_prop(version, key) else {
        return Ok(value.to_string());
    };
    if prop.kind.as_deref() == Some("boolean") {
        return Ok(match propstring::parse_boolean(value) {
            Some(true) => "1".into(),
            Some(false) => "0".into(),
            None => value.to_string(),
        });
    }
    let Some(format) = object_format(prop) else {
        return Ok(value.to_string());
    };
    let mut parsed = propstring::parse(format, value)
        .map_err(|e| Error::invalid(key, e.to_string().trim_end().to_string()))?;
    if is_drive_key(key) {
        return Ok(propstring::print(format, &parsed));
    }
    if is_net_key(key) {
        if let Some(rq) = rq
            && !parsed.contains_key("macaddr")
        {
            parsed.insert("macaddr".into(), rq.random_mac());
        }
        return Ok(propstring::print(format, &parsed));
    }
    if key == "boot"
        && let Some(order) = parsed.get("order")
    {
        let devs: Vec<&str> = order
            .split([';', ',', ' '])
            .filter(|d| !d.is_empty())
            .collect();
        return Ok(format!("order={}", devs.join(";")));
    }
    Ok(value.to_string())
}

/// `netN`: the NICs, which PVE prints again (`print_net`).
fn is_net_key(key: &str) -> bool {
    key.strip_prefix("net")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
}

pub(super) fn drive_with(
    version: PveVersion,
    key: &str,
    value: &str,
    set: &[(&str, &str)],
    drop: &[&str],
) -> String {
    let Some(format) = config_prop(version, key).and_then(object_format) else {
        return value.to_string();
    };
    let Ok(mut parsed) = propstring::parse(format, value) else {
        return value.to_string();
    };
    for k in drop {
        parsed.remove(*k);
    }
    for (k, v) in set {
        parsed.insert((*k).to_string(), (*v).to_string());
    }
    propstring::print(format, &parsed)
}

/// The QEMU version a release ships (`kvm --version`).
pub fn qemu_version(version: PveVersion) -> &'static str {
    match version {
        PveVersion::V8_4 => "9.2.0",
        PveVersion::V9_1 => "10.1.2",
        PveVersion::V9_2 => "11.0.2",
    }
}

/// The machine version a release's QEMU runs an unpinned VM at, with its
/// `+pveN` revision: the newest of qemu-server's `$PVE_MACHINE_VERSION`
/// for the QEMU it ships (11.0 has two revisions on 9.2).
pub(super) fn machine_version(version: PveVersion) -> &'static str {
    match version {
        PveVersion::V8_4 => "9.2+pve0",
        PveVersion::V9_1 => "10.1+pve0",
        PveVersion::V9_2 => "11.0+pve2",
    }
}

/// The value of a property string's default key, given bare
/// (`qxl,memory=32`) or by its name (`type=qxl,memory=32`): PVE stores
/// such options as given.
pub(crate) fn default_key<'a>(value: &'a str, key: &str) -> &'a str {
    value
        .split(',')
        .find_map(|p| match p.split_once('=') {
            None => Some(p),
            Some((k, v)) if k == key => Some(v),
            Some(_) => None,
        })
        .unwrap_or("")
}

pub(crate) fn running_machine(
    version: PveVersion,
    conf: &BTreeMap<String, String>,
) -> std::borrow::Cow<'_, str> {
    let machine = conf.get("machine").map_or("", |m| default_key(m, "type"));
    if machine.starts_with("pc-") {
        return machine.into();
    }
    let q35 = machine.contains("q35");
    // `pc-<type>-<machine_version>+pve0`, spelled out.
    match (version, q35) {
        (PveVersion::V8_4, false) => "pc-i440fx-9.2+pve0",
        (PveVersion::V8_4, true) => "pc-q35-9.2+pve0",
        (PveVersion::V9_1, false) => "pc-i440fx-10.1+pve0",
        (PveVersion::V9_1, true) => "pc-q35-10.1+pve0",
        (PveVersion::V9_2, false) => "pc-i440fx-11.0+pve2",
        (PveVersion::V9_2, true) => "pc-q35-11.0+pve2",
    }
    .into()
}

pub(super) fn is_windows(ostype: Option<&String>) -> bool {
    ostype.is_some_and(|o| o.starts_with('w'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    fn the_running_machine_is_the_type_at_the_release_s_version(
        #[values(PveVersion::V8_4, PveVersion::V9_1, PveVersion::V9_2)] version: PveVersion,
        #[values(None, Some("q35"), Some("type=q35,viommu=intel"), Some("pc"))] machine: Option<
            &str,
        >,
    ) {
        let conf: BTreeMap<String, String> = machine
            .map(|m| ("machine".to_string(), m.to_string()))
            .into_iter()
            .collect();
        let kind = if machine.is_some_and(|m| m.contains("q35")) {
            "q35"
        } else {
            "i440fx"
        };
        assert_eq!(
            running_machine(version, &conf),
            format!("pc-{kind}-{}", machine_version(version))
        );
    }

    #[rstest]
    fn a_pinned_machine_runs_as_it_is() {
        let conf = BTreeMap::from([("machine".to_string(), "pc-q35-8.1+pve0".to_string())]);
        assert_eq!(running_machine(PveVersion::V9_1, &conf), "pc-q35-8.1+pve0");
    }
}
