//! Addresses, networks, VLANs and the SDN's IDs.

use super::*;

pub(super) fn is_ip(v: &str) -> bool {
    v.parse::<Ipv4Addr>().is_ok() || v.parse::<Ipv6Addr>().is_ok()
}

pub(super) fn is_netmask(v: &str) -> bool {
    v.parse::<Ipv4Addr>().is_ok_and(|a| {
        let bits = u32::from(a);
        bits.leading_ones() + bits.trailing_zeros() == 32 && bits != 0
    })
}

pub(super) fn is_cidr(v: &str, v6: bool) -> bool {
    let Some((addr, bits)) = v.split_once('/') else {
        return false;
    };
    if bits.is_empty() || !bits.bytes().all(|c| c.is_ascii_digit()) {
        return false;
    }
    let bits: u32 = bits.parse().unwrap_or(u32::MAX);
    if v6 {
        addr.parse::<Ipv6Addr>().is_ok() && bits > 7 && bits <= 128
    } else {
        addr.parse::<Ipv4Addr>().is_ok() && bits > 7 && bits <= 32
    }
}

pub(super) fn verify_vlan(v: &str) -> Check {
    let Some(c) = re(r"(\d+)(?:-(\d+))?").captures(v) else {
        return Err(FormatError::Invalid(format!(
            "invalid VLAN configuration '{v}'\n"
        )));
    };
    let tag = |s: &str| -> Result<u32, FormatError> {
        let t: u32 = s
            .parse()
            .map_err(|_| FormatError::Invalid(format!("invalid VLAN tag '{s}'\n")))?;
        if (2..=4094).contains(&t) {
            Ok(t)
        } else {
            Err(FormatError::Invalid(format!("invalid VLAN tag '{s}'\n")))
        }
    };
    let start = tag(&c[1])?;
    if let Some(end) = c.get(2) {
        let end = tag(end.as_str())?;
        if start >= end {
            return Err(FormatError::Invalid(format!(
                "VLAN range must go from lower to higher tag '{v}'\n"
            )));
        }
    }
    Ok(())
}

pub(super) fn verify_ip_with_ll_iface(v: &str) -> Check {
    if let Some(c) = re(r"(fe80:[^%]+)%(.*)").captures(v)
        && is_ip(&c[1])
        && re(r"(?i:[a-z][a-z0-9_]{1,20}([:\.]\d+)?)").is_match(&c[2])
    {
        return Ok(());
    }
    ok(is_ip(v), "value does not look like a valid IP address\n")
}

pub(super) fn sdn_id(v: &str, kind: &str, pattern: &'static str, max: Option<usize>) -> Check {
    if !re(pattern).is_match(v) {
        return Err(FormatError::Invalid(format!(
            "{kind} ID '{v}' contains illegal characters\n"
        )));
    }
    if let Some(max) = max
        && v.len() > max
    {
        return Err(FormatError::Invalid(format!(
            "{kind} ID '{v}' can't be more length than {max} characters\n"
        )));
    }
    Ok(())
}

pub(super) fn verify_sdn_subnet_id(v: &str) -> Check {
    let cidr = if v.contains('/') {
        v.to_string()
    } else {
        let mut parts = v.split('-').skip(1);
        let ip = parts.next().unwrap_or("");
        let mask = parts.next().unwrap_or("");
        format!("{ip}/{mask}")
    };
    ok(
        is_cidr(&cidr, false) || is_cidr(&cidr, true),
        "value does not look like a valid CIDR network\n",
    )
}

pub(super) fn verify_sdn_bgp_rt(v: &str) -> Check {
    let good = re(r"(\d+):(\d+)").captures(v).is_some_and(|c| {
        c[1].parse::<u128>().is_ok_and(|n| n <= 4_294_967_295)
            && c[2].parse::<u128>().is_ok_and(|n| n <= 4_294_967_295)
    });
    ok(good, "value does not look like a valid bgp route-target\n")
}

/// Why `Net::IP->new` refuses an address, CIDR or range, in Net::IP's
/// words (without the newline PVE's callers add).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum NetIpError {
    /// A range whose ends are of different IP versions.
    #[error("Begin and end IP are different versions: {0} - {1}")]
    Versions(String, String),
    /// Not an IPv4 or IPv6 address.
    #[error("Invalid IP {0} - wrong format")]
    WrongFormat(String),
    /// A prefix length that is not a number within the version's bits.
    #[error("Invalid prefix length /{0}")]
    PrefixLength(String),
}

/// `Net::IP->new` on an address, CIDR or range. Approximate: Net::IP's
/// exact error texts are not reproduced for every case.
pub(super) fn net_ip(v: &str) -> Result<u8, NetIpError> {
    if let Some((a, b)) = v.split_once('-') {
        let (a, b) = (a.trim(), b.trim());
        let va = net_ip(a)?;
        let vb = net_ip(b)?;
        if va != vb {
            return Err(NetIpError::Versions(a.to_string(), b.to_string()));
        }
        return Ok(va);
    }
    let (addr, len) = match v.split_once('/') {
        Some((a, l)) => (a, Some(l)),
        None => (v, None),
    };
    let version = if addr.parse::<Ipv4Addr>().is_ok() {
        4
    } else if addr.parse::<Ipv6Addr>().is_ok() {
        6
    } else {
        return Err(NetIpError::WrongFormat(addr.to_string()));
    };
    if let Some(len) = len {
        let max = if version == 4 { 32 } else { 128 };
        if !len.bytes().all(|c| c.is_ascii_digit())
            || len.is_empty()
            || len.parse::<u32>().unwrap_or(u32::MAX) > max
        {
            return Err(NetIpError::PrefixLength(len.to_string()));
        }
    }
    Ok(version)
}

pub(super) fn verify_ip_or_cidr(v: &str) -> Check {
    let shape = v.split_once('/').map_or((v, None), |(a, l)| (a, Some(l)));
    let good_shape = is_ip(shape.0)
        && shape
            .1
            .is_none_or(|l| !l.is_empty() && l.bytes().all(|c| c.is_ascii_digit()));
    if !good_shape {
        return Err(FormatError::Invalid(
            "value does not look like a valid IP address or CIDR network\n".into(),
        ));
    }
    net_ip(v)
        .map(|_| ())
        .map_err(|e| FormatError::Invalid(format!("{e}\n")))
}

/// A prefix list's ID (pve-network 9.2, `pve-sdn-prefix-list-id`): the
/// lists the SDN stack generates itself are reserved.
pub(super) fn verify_sdn_prefix_list_id(v: &str) -> Check {
    if matches!(v, "only_default" | "only_default_v6" | "loopbacks_ips") {
        return Err(FormatError::Invalid(format!(
            "prefix list ID '{v}' is currently reserved and cannot be used\n"
        )));
    }
    if !re(SDN_ROUTING_ID).is_match(v) {
        return Err(FormatError::Invalid(format!(
            "prefix list ID '{v}' contains illegal characters\n"
        )));
    }
    Ok(())
}

/// A route map's ID (pve-network 9.2, `pve-sdn-route-map-id`): the maps
/// the SDN stack generates (`pve_*` and a few more) are reserved.
pub(super) fn verify_sdn_route_map_id(v: &str) -> Check {
    if v.starts_with("pve_") || matches!(v, "MAP_VTEP_IN" | "MAP_VTEP_OUT" | "correct_src") {
        return Err(FormatError::Invalid(format!(
            "route map ID '{v}' is currently reserved and cannot be used\n"
        )));
    }
    if !re(SDN_ROUTING_ID).is_match(v) {
        return Err(FormatError::Invalid(format!(
            "route map ID '{v}' contains illegal characters\n"
        )));
    }
    Ok(())
}

/// The IDs of prefix lists and route maps: a letter or digit, then up to
/// 31 letters, digits, `-` or `_`, ending in a letter or digit.
const SDN_ROUTING_ID: &str = r"[a-zA-Z0-9][a-zA-Z0-9\-_]{0,30}[a-zA-Z0-9]?";

/// `FullRangeCIDR` (pve-network 9.2): an IPv4 or IPv6 address with a
/// prefix length of its family, host bits allowed.
pub(super) fn verify_full_range_cidr(v: &str) -> Check {
    let good = v.split_once('/').is_some_and(|(addr, len)| {
        let max = if addr.parse::<std::net::Ipv4Addr>().is_ok() && !addr.contains(':') {
            32
        } else if addr.parse::<std::net::Ipv6Addr>().is_ok() {
            128
        } else {
            return false;
        };
        !len.is_empty()
            && len.bytes().all(|c| c.is_ascii_digit())
            && len.parse::<u32>().is_ok_and(|l| l <= max)
    });
    ok(good, "value does not look like a valid CIDR network\n")
}
