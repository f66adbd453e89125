//! What PVE reads from an OVF manifest (pve-storage `GuestImport/OVF.pm`
//! `parse_ovf`): the guest's name, CPUs, memory, OS type and firmware,
//! its disks with the bus and unit their controllers give, and its NICs.

use std::collections::BTreeMap;

use super::xml::{self, Element};

const OVF: &str = "http://schemas.dmtf.org/ovf/envelope/1";
const VMW: &str = "http://www.vmware.com/schema/ovf";
const RASD: &str =
    "http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/CIM_ResourceAllocationSettingData";

/// A disk of the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OvfDisk {
    /// `scsi0`, `sata1`, `ide0` (the controller's bus and the address on it).
    pub address: String,
    /// The file, relative to the manifest.
    pub path: String,
    /// Bytes, from the disk's capacity and allocation units.
    pub virtual_size: Option<u64>,
}

/// What `parse_ovf` answers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ovf {
    /// `qm.conf`-style keys: `name`, `cores`, `memory`, `ostype`,
    /// `bios`, `boot` (values as the manifest's text gives them).
    pub qm: BTreeMap<String, String>,
    /// The disks, in the manifest's order.
    pub disks: Vec<OvfDisk>,
    /// NIC models by `net<N>`.
    pub net: BTreeMap<String, String>,
}

/// `get_ostype`: the CIM operating system id as PVE's `ostype`.
pub fn ostype(id: &str) -> &'static str {
    match id {
        "18" => "winxp",
        "29" | "81" => "solaris",
        "36" | "79" | "80" | "82" | "83" | "84" | "85" | "87" | "89" | "90" | "91" | "92"
        | "93" | "94" | "95" | "96" | "99" | "100" | "101" | "106" | "107" | "108" | "109" => "l26",
        "58" => "w2k",
        "67" | "71" | "72" | "75" => "wxp",
        "69" | "70" => "w2k3",
        "73" | "74" => "wvista",
        "76" | "77" => "w2k8",
        "97" | "98" => "l24",
        "103" | "105" => "win7",
        "111" | "112" | "113" | "114" | "115" | "117" | "118" => "win8",
        "116" | "119" | "120" | "121" => "win10",
        "122" | "123" => "win11",
        _ => "other",
    }
}

/// The bus of a controller's CIM resource type (`id_to_pve`).
fn bus(resource_type: &str) -> &'static str {
    match resource_type {
        "5" => "ide",
        "6" => "scsi",
        "20" => "sata",
        _ => "",
    }
}

/// Perl's truth of a string.
fn truthy(s: &str) -> bool {
    !s.is_empty() && s != "0"
}

/// The number at the start of a string, as Perl reads one (0 if none).
fn perl_num(s: &str) -> f64 {
    let t = s.trim_start();
    let mut end = 0;
    let b = t.as_bytes();
    if end < b.len() && (b[end] == b'-' || b[end] == b'+') {
        end += 1;
    }
    while end < b.len() && (b[end].is_ascii_digit() || b[end] == b'.') {
        end += 1;
    }
    t[..end].parse().unwrap_or(0.0)
}

/// `try_parse_capacity_unit`: `byte * base^exponent`.
fn capacity_factor(unit: &str) -> Option<f64> {
    let rest = unit.trim().strip_prefix("byte")?.trim_start();
    let rest = rest.strip_prefix('*')?.trim();
    let (base, exp) = rest.split_once('^')?;
    let (base, exp) = (base.trim(), exp.trim());
    if base.is_empty()
        || exp.is_empty()
        || !base.bytes().all(|c| c.is_ascii_digit())
        || !exp.bytes().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let f = base.parse::<f64>().ok()?.powf(exp.parse::<f64>().ok()?);
    (f != 0.0).then_some(f)
}

/// RFC 3986 unreserved characters.
fn uripath_char(c: char) -> bool {
    c.is_alphanumeric() || "-._~".contains(c)
}

/// Perl's `$`: the end, or before a final newline.
fn chomped(s: &str) -> &str {
    s.strip_suffix('\n').unwrap_or(s)
}

/// `<disk section>/<disk id>` of a `HostResource` (`ovf:/disk/vmdisk1`).
fn host_resource(s: &str) -> Option<(&str, &str)> {
    let s = chomped(s);
    let s = s.strip_prefix("ovf:").unwrap_or(s);
    let (section, id) = s.strip_prefix('/')?.split_once('/')?;
    let ok = |p: &str| !p.is_empty() && p.chars().all(uripath_char);
    (ok(section) && ok(id)).then_some((section, id))
}

/// `$SAFE_CHAR_WITH_WHITESPACE_CLASS_RE`.
pub fn safe_char_ws(c: char) -> bool {
    c.is_ascii_alphanumeric() || " -.+=_".contains(c)
}

/// A resource type test as XPath's `rasd:ResourceType=N` makes it: a
/// child whose number equals `n`.
fn has_type(item: &Element, n: u32) -> bool {
    item.children(RASD, "ResourceType")
        .any(|t| t.text().trim().parse::<f64>().ok() == Some(f64::from(n)))
}

/// Parses a manifest as PVE does for an archive (`$isOva`): disks are
/// not looked for on the storage. `warn` gets the lines PVE writes to
/// its log (not part of the answer).
///
/// # Errors
/// The XML's errors; `referenced path '...' is invalid`.
pub fn parse(text: &str, warn: &mut Vec<String>) -> Result<Ovf, String> {
    let root = xml::parse(text)?;
    let empty = Element::default();
    let envelope = if root.is(OVF, "Envelope") {
        &root
    } else {
        &empty
    };
    let systems: Vec<&Element> = envelope.children(OVF, "VirtualSystem").collect();
    let hardware: Vec<&Element> = systems
        .iter()
        .flat_map(|s| s.children(OVF, "VirtualHardwareSection"))
        .collect();
    let items: Vec<&Element> = hardware
        .iter()
        .flat_map(|h| h.children(OVF, "Item"))
        .collect();
    let mut ovf = Ovf::default();

    let mut name: String = systems.iter().map(|s| s.child_value(OVF, "Name")).collect();
    if !truthy(&name) {
        name = systems
            .first()
            .and_then(|s| s.attrs.iter().find(|a| a.qname == "ovf:id"))
            .map(|a| a.value.clone())
            .unwrap_or_default();
    }
    if truthy(&name) {
        let mut dashed = String::new();
        let mut in_space = false;
        for c in name.chars() {
            if c.is_whitespace() {
                if !in_space {
                    dashed.push('-');
                }
                in_space = true;
            } else {
                dashed.push(c);
                in_space = false;
            }
        }
        let clean: String = dashed
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '.')
            .collect();
        ovf.qm.insert("name".into(), clean);
    } else {
        warn.push(
            "warning: unable to parse the VM name in this OVF manifest, generating a default value"
                .into(),
        );
    }

    let quantity = |n: u32| -> String {
        items
            .iter()
            .filter(|i| has_type(i, n))
            .map(|i| i.child_value(RASD, "VirtualQuantity"))
            .collect()
    };
    ovf.qm.insert("cores".into(), quantity(3));
    ovf.qm.insert("memory".into(), quantity(4));

    let os_id: String = systems
        .iter()
        .flat_map(|s| s.children(OVF, "OperatingSystemSection"))
        .filter_map(|o| o.attr(Some(OVF), "id"))
        .collect();
    ovf.qm.insert("ostype".into(), ostype(&os_id).into());

    let firmware: String = hardware
        .iter()
        .flat_map(|h| h.children(VMW, "Config"))
        .filter(|c| c.attr(Some(VMW), "key") == Some("firmware"))
        .filter_map(|c| c.attr(Some(VMW), "value"))
        .collect();
    if firmware == "efi" {
        ovf.qm.insert("bios".into(), "ovmf".into());
    }

    let disk_section: Vec<&Element> = envelope
        .children(OVF, "DiskSection")
        .flat_map(|d| d.children(OVF, "Disk"))
        .collect();
    let files: Vec<&Element> = envelope
        .children(OVF, "References")
        .flat_map(|r| r.children(OVF, "File"))
        .collect();
    let disk_attr = |id: &str, attr: &str| -> String {
        disk_section
            .iter()
            .filter(|d| d.attr(Some(OVF), "diskId") == Some(id))
            .filter_map(|d| d.attr(Some(OVF), attr))
            .collect()
    };
    for item in items.iter().filter(|i| has_type(i, 17)) {
        let hr = item.child_value(RASD, "HostResource");
        let Some((_, disk_id)) = host_resource(&hr) else {
            warn.push(format!("invalid host resource {hr}, skipping"));
            continue;
        };
        let fileref = disk_attr(disk_id, "fileRef");
        let capacity = disk_attr(disk_id, "capacity");
        let unit = disk_attr(disk_id, "capacityAllocationUnits");
        let virtual_size = capacity_factor(&unit).map(|f| {
            let v = perl_num(&capacity) * f;
            if v.is_finite() && v >= 0.0 {
                v as u64
            } else {
                0
            }
        });
        let fr = chomped(&fileref);
        if fr.is_empty() || !fr.chars().all(|c| uripath_char(c) || c == '/') {
            warn.push(format!("invalid host resource {hr}, skipping"));
            continue;
        }
        let parent = item.child_value(RASD, "Parent");
        let controller_type: String = items
            .iter()
            .filter(|i| i.children(RASD, "InstanceID").any(|n| n.text() == parent))
            .map(|i| i.child_value(RASD, "ResourceType"))
            .collect();
        if !truthy(&controller_type) {
            warn.push(format!(
                "invalid or missing controller: {controller_type}, skipping"
            ));
            continue;
        }
        let on_parent = item.child_value(RASD, "AddressOnParent");
        let address = format!("{}{on_parent}", bus(&controller_type));
        let path: String = files
            .iter()
            .filter(|f| f.attr(Some(OVF), "id") == Some(fileref.as_str()))
            .filter_map(|f| f.attr(Some(OVF), "href"))
            .collect();
        if !truthy(&path) {
            warn.push(format!("invalid file reference {fileref}, skipping"));
            continue;
        }
        let p = chomped(&path);
        if p.is_empty() || !p.chars().all(safe_char_ws) || p == "." || p == ".." {
            return Err(format!("referenced path '{path}' is invalid"));
        }
        ovf.disks.push(OvfDisk {
            address,
            path: p.to_string(),
            virtual_size,
        });
    }

    for (n, item) in items.iter().filter(|i| has_type(i, 10)).enumerate() {
        let model = item.child_value(RASD, "ResourceSubType").to_lowercase();
        let model = if ["e1000", "e1000e", "vmxnet3"].contains(&model.as_str()) {
            model
        } else {
            "e1000".into()
        };
        ovf.net.insert(format!("net{n}"), model);
    }

    if !ovf.disks.is_empty() {
        let order: Vec<&str> = ovf.disks.iter().map(|d| d.address.as_str()).collect();
        ovf.qm
            .insert("boot".into(), format!("order={}", order.join(";")));
    }
    Ok(ovf)
}

/// The files an archive's manifest references, with the sizes it gives
/// (`References/File`: `href`, `size`).
pub fn referenced_files(text: &str) -> Vec<(String, u64)> {
    let Ok(root) = xml::parse(text) else {
        return Vec::new();
    };
    if !root.is(OVF, "Envelope") {
        return Vec::new();
    }
    root.children(OVF, "References")
        .flat_map(|r| r.children(OVF, "File"))
        .filter_map(|f| {
            let href = f.attr(Some(OVF), "href")?;
            let size = f
                .attr(Some(OVF), "size")
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(0);
            Some((href.to_string(), size))
        })
        .collect()
}
