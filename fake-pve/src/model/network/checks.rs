//! The checks of an interface's settings before the configuration is
//! written: CIDR and netmask forms, IPv6 addresses, duplicate addresses
//! and ports, and the whole configuration's consistency (pve-manager
//! `API2/Network.pm`, pve-common `Network/Interfaces.pm`).

use super::*;

/// Keys of create/update that are flags in the file.
const FLAGS: &[&str] = &["autostart", "bridge_vlan_aware"];
/// Request parameters that are not interface settings.
const NOT_SETTINGS: &[&str] = &["node", "iface", "delete", "digest"];

/// Reads the settings of a create or update request into the form PVE
/// reads back from the file.
pub(super) fn settings(params: &BTreeMap<String, Value>) -> IfaceConf {
    let mut out = IfaceConf::new();
    for (k, v) in params {
        if NOT_SETTINGS.contains(&k.as_str()) {
            continue;
        }
        let t = match v {
            Value::String(s) => s.clone(),
            Value::Bool(b) => u8::from(*b).to_string(),
            Value::Null => continue,
            other => other.to_string(),
        };
        if FLAGS.contains(&k.as_str()) {
            if t == "1" || t == "true" {
                out.insert(k.clone(), IfaceValue::Int(1));
            }
            continue;
        }
        out.insert(k.clone(), IfaceValue::Text(t));
    }
    out
}

/// `cidr`/`cidr6` into address and netmask, as `map_cidr_to_address_netmask`.
pub(super) fn map_cidr(p: &mut IfaceConf) -> Result<()> {
    for (cidr, addr, mask) in [
        ("cidr", "address", "netmask"),
        ("cidr6", "address6", "netmask6"),
    ] {
        if let Some(c) = text(p, cidr) {
            if p.contains_key(addr) {
                return Err(Error::invalid(
                    addr,
                    format!("{addr} conflicts with {cidr}"),
                ));
            }
            if p.contains_key(mask) {
                return Err(Error::invalid(
                    mask,
                    format!("{mask} conflicts with {cidr}"),
                ));
            }
            let (a, m) = c.rsplit_once('/').unwrap_or((c.as_str(), ""));
            p.insert(addr.into(), s(a));
            p.insert(mask.into(), s(m));
            p.swap_remove(cidr);
        }
    }
    Ok(())
}

/// Bits of a dotted netmask, or the prefix as it is.
pub(super) fn mask_bits(mask: &str) -> Option<u32> {
    if let Ok(n) = mask.parse::<u32>() {
        return Some(n);
    }
    let ip: std::net::Ipv4Addr = mask.parse().ok()?;
    let v = u32::from(ip);
    (v.leading_ones() + v.trailing_zeros() == 32).then(|| v.leading_ones())
}

/// Derives `cidr`/`netmask` as the reader does.
pub(super) fn derive_cidr(c: &mut IfaceConf) {
    c.swap_remove("cidr");
    c.swap_remove("cidr6");
    if let Some(addr) = text(c, "address") {
        match text(c, "netmask").and_then(|m| mask_bits(&m)) {
            Some(bits) => {
                c.insert("netmask".into(), s(&bits.to_string()));
                c.insert("cidr".into(), s(&format!("{addr}/{bits}")));
            }
            None => {
                c.insert("cidr".into(), s(&format!("{addr}/32")));
            }
        }
    }
    if let Some(addr) = text(c, "address6") {
        let cidr = match text(c, "netmask6") {
            Some(m) => format!("{addr}/{m}"),
            None => format!("{addr}/128"),
        };
        c.insert("cidr6".into(), s(&cidr));
    }
}

pub(super) fn check_ipv6(address: &str, netmask: &str) -> Result<()> {
    let bits: i64 = netmask.parse().unwrap_or(0);
    if !(0..=128).contains(&bits) {
        return Err(Error::invalid(
            "netmask",
            format!("{netmask} is not a valid subnet length for ipv6"),
        ));
    }
    let Ok(ip) = address.parse::<std::net::Ipv6Addr>() else {
        return Err(Error::invalid(
            "address",
            format!("{address} is not a valid host IPv6 address."),
        ));
    };
    let kind = if ip.is_loopback() {
        Some("LOOPBACK")
    } else if ip.is_unspecified() {
        Some("UNSPECIFIED")
    } else if ip.is_multicast() {
        Some("MULTICAST")
    } else {
        None
    };
    if let Some(t) = kind {
        return Err(Error::invalid(
            "address",
            format!("{address} with type '{t}', cannot be used as host IPv6 address."),
        ));
    }
    Ok(())
}

pub(super) fn check_duplicate(
    conf: &BTreeMap<String, IfaceConf>,
    iface: &str,
    key: &str,
    what: &str,
) -> Result<()> {
    for (name, c) in conf {
        if name != iface && text(c, key).is_some() {
            return Err(Error::invalid(
                key,
                format!("{what} already exists on interface '{name}'."),
            ));
        }
    }
    Ok(())
}

pub(super) fn check_duplicate_ports(
    conf: &BTreeMap<String, IfaceConf>,
    iface: &str,
    new: &IfaceConf,
) -> Result<()> {
    let (new_ports, key) = ports(new);
    let Some(key) = key else { return Ok(()) };
    for (name, c) in conf {
        if name == iface {
            continue;
        }
        for p in ports(c).0 {
            if new_ports.contains(&p) {
                return Err(Error::invalid(
                    key,
                    format!("{p} is already used on interface '{name}'."),
                ));
            }
        }
    }
    Ok(())
}

/// The checks of `__write_etc_network_interfaces` over the whole file.
pub(super) fn check_write(
    conf: &BTreeMap<String, IfaceConf>,
    physical: &BTreeSet<String>,
) -> Result<()> {
    let exists = |p: &str| conf.contains_key(p) || physical.contains(p);
    let type_of = |p: &str| match conf.get(p) {
        Some(c) => kind(c).to_string(),
        None => "eth".to_string(),
    };
    let mut used: BTreeMap<String, String> = BTreeMap::new();
    for (name, c) in conf {
        for p in ports(c).0 {
            if let Some(other) = used.get(&p)
                && other != name
            {
                return Err(Error::exists(format!(
                    "port '{p}' is already used on interface '{other}'"
                )));
            }
            used.insert(p, name.clone());
        }
    }
    for (name, c) in conf {
        if kind(c) == "bond" {
            for p in text(c, "slaves")
                .map(|v| split_list(&v))
                .unwrap_or_default()
            {
                if !exists(&p) {
                    return Err(Error::failed(format!(
                        "bond '{name}' - unable to find slave '{p}'"
                    )));
                }
                let t = type_of(&p);
                if t != "eth" && t != "bond" {
                    return Err(Error::failed(format!(
                        "bond '{name}' - wrong interface type on slave '{p}' ('{t}' != 'eth or bond')"
                    )));
                }
            }
        }
    }
    for (name, c) in conf {
        if kind(c) != "vlan" {
            continue;
        }
        let (parent, id) = if let Some((p, id)) = name
            .rsplit_once('.')
            .filter(|(_, id)| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
        {
            (p.to_string(), id.parse::<u64>().unwrap_or(0))
        } else {
            let Some(p) = text(c, "vlan-raw-device") else {
                return Err(Error::failed("missing vlan-raw-device option"));
            };
            let id = if let Some(n) = name.strip_prefix("vlan").and_then(|n| n.parse().ok()) {
                n
            } else {
                let Some(id) = text(c, "vlan-id") else {
                    return Err(Error::failed("missing vlan-id option"));
                };
                id.parse().unwrap_or(0)
            };
            (p, id)
        };
        if id > 4094 {
            return Err(Error::failed(format!(
                "vlan '{name}' - vlan-id {id} should be <= 4094"
            )));
        }
        if !exists(&parent) {
            return Err(Error::failed(format!(
                "vlan '{name}' - unable to find parent '{parent}'"
            )));
        }
        let t = type_of(&parent);
        if !matches!(t.as_str(), "eth" | "bridge" | "bond" | "vlan") {
            return Err(Error::failed(format!(
                "vlan '{name}' - wrong interface type on parent '{parent}' ('{t}' != 'eth|bond|bridge|vlan' )"
            )));
        }
    }
    for (name, c) in conf {
        if kind(c) != "bridge" {
            continue;
        }
        for p in text(c, "bridge_ports")
            .map(|v| split_list(&v))
            .unwrap_or_default()
        {
            let vlan_port = p
                .rsplit_once('.')
                .is_some_and(|(_, id)| id.bytes().all(|b| b.is_ascii_digit()));
            if !exists(&p) && !vlan_port {
                return Err(Error::failed(format!(
                    "bridge '{name}' - unable to find bridge port '{p}'"
                )));
            }
            if let Some(pc) = conf.get(&p) {
                let v4 = text(pc, "method").as_deref() == Some("static")
                    && text(pc, "address").as_deref() != Some("0.0.0.0");
                let v6 = text(pc, "method6").as_deref() == Some("static")
                    && text(pc, "address6").as_deref() != Some("::");
                if v4 || v6 {
                    return Err(Error::failed(format!(
                        "iface {p} - ip address can't be set on interface if bridged in {name}"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// `interface does not exist` (400 on `iface`).
pub(super) fn no_iface() -> Error {
    Error::invalid("iface", "interface does not exist")
}

/// `bridge_vids` must not be empty and is kept space separated.
pub(super) fn normalize_vids(p: &mut IfaceConf) -> Result<()> {
    if let Some(IfaceValue::Text(v)) = p.get("bridge_vids").cloned() {
        let l = split_list(&v);
        if l.is_empty() {
            return Err(Error::invalid("bridge_vids", "VLAN list items are empty"));
        }
        p.insert("bridge_vids".into(), s(&l.join(" ")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn netmasks() {
        assert_eq!(mask_bits("255.255.255.0"), Some(24));
        assert_eq!(mask_bits("24"), Some(24));
        assert_eq!(mask_bits("255.0.255.0"), None);
    }
}
