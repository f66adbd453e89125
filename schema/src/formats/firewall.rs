//! pve-firewall's formats: conntrack helpers, ICMP types, protocols,
//! port and address lists (`Firewall.pm`).

use super::*;

pub(super) fn verify_conntrack_helper(v: &str) -> Check {
    const HELPERS: &[&str] = &[
        "amanda",
        "ftp",
        "irc",
        "netbios-ns",
        "pptp",
        "sane",
        "sip",
        "snmp",
        "tftp",
    ];
    let parts: Vec<&str> = split_perl(v);
    if v != parts.join(",") {
        return Err(FormatError::Invalid("extraneous commas in list\n".into()));
    }
    for h in parts {
        if !HELPERS.contains(&h) {
            // PVE's message has no newline, so Perl appends the place.
            return Err(FormatError::Invalid(format!("unknown helper {h}")));
        }
    }
    Ok(())
}

/// Perl's `split(/,/, $s)`: trailing empty fields are dropped.
pub(super) fn split_perl(v: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = v.split(',').collect();
    while parts.last() == Some(&"") {
        parts.pop();
    }
    parts
}

/// The ICMP type names pve-firewall knows (`$icmp_type_names`).
pub const ICMP_TYPES: &[&str] = &[
    "any",
    "echo-reply",
    "destination-unreachable",
    "network-unreachable",
    "host-unreachable",
    "protocol-unreachable",
    "port-unreachable",
    "fragmentation-needed",
    "source-route-failed",
    "network-unknown",
    "host-unknown",
    "network-prohibited",
    "host-prohibited",
    "TOS-network-unreachable",
    "TOS-host-unreachable",
    "communication-prohibited",
    "host-precedence-violation",
    "precedence-cutoff",
    "source-quench",
    "redirect",
    "network-redirect",
    "host-redirect",
    "TOS-network-redirect",
    "TOS-host-redirect",
    "echo-request",
    "router-advertisement",
    "router-solicitation",
    "time-exceeded",
    "ttl-zero-during-transit",
    "ttl-zero-during-reassembly",
    "parameter-problem",
    "ip-header-bad",
    "required-option-missing",
    "timestamp-request",
    "timestamp-reply",
    "address-mask-request",
    "address-mask-reply",
];

/// The ICMPv6 type names pve-firewall knows (`$icmpv6_type_names`).
pub const ICMPV6_TYPES: &[&str] = &[
    "destination-unreachable",
    "no-route",
    "communication-prohibited",
    "beyond-scope",
    "address-unreachable",
    "port-unreachable",
    "failed-policy",
    "reject-route",
    "packet-too-big",
    "time-exceeded",
    "ttl-zero-during-transit",
    "ttl-zero-during-reassembly",
    "parameter-problem",
    "bad-header",
    "unknown-header-type",
    "unknown-option",
    "echo-request",
    "echo-reply",
    "router-solicitation",
    "router-advertisement",
    "neighbor-solicitation",
    "neighbour-solicitation",
    "neighbor-advertisement",
    "neighbour-advertisement",
    "redirect",
];

pub(super) fn is_icmp_type(v: &str) -> bool {
    ICMP_TYPES.contains(&v) || ICMPV6_TYPES.contains(&v)
}

pub(super) fn verify_icmp_type(v: &str) -> Check {
    if is_icmp_type(v) || v.is_empty() {
        Ok(())
    } else {
        Err(FormatError::Invalid(format!(
            "invalid icmp-type value '{v}'\n"
        )))
    }
}

pub(super) fn verify_protocol(v: &str) -> Check {
    use crate::sysdata::{PROTOCOL_IDS, PROTOCOLS};
    if v.is_empty()
        || v == "0"
        || v == "icmpv6"
        || PROTOCOLS.contains(&v)
        || PROTOCOL_IDS.contains(&v)
    {
        Ok(())
    } else {
        Err(FormatError::Invalid(format!("unknown protocol '{v}'\n")))
    }
}

/// `parse_port_name_number_or_range`.
pub(super) fn parse_port_spec(v: &str, dport: bool) -> Check {
    let elements = split_perl(v);
    if v != elements.join(",") {
        return Err(FormatError::Invalid("extraneous commas in list\n".into()));
    }
    let mut count = 0;
    let mut icmp = false;
    let port = |p: &str| -> Check {
        if p.parse::<u128>().is_ok_and(|n| n <= 65535) {
            Ok(())
        } else {
            Err(FormatError::Invalid(format!("invalid port '{p}'\n")))
        }
    };
    for item in elements {
        if let Some(c) = re(r"([0-9]+):([0-9]+)").captures(item) {
            count += 2;
            port(&c[1])?;
            port(&c[2])?;
            let (a, b): (u128, u128) = (c[1].parse().unwrap_or(0), c[2].parse().unwrap_or(0));
            if a > b {
                return Err(FormatError::Invalid(format!(
                    "backwards range '{}:{}' not allowed, did you mean '{}:{}'?\n",
                    &c[1], &c[2], &c[2], &c[1]
                )));
            }
        } else if re(r"[0-9]+").is_match(item) {
            count += 1;
            port(item)?;
        } else if dport && is_icmp_type(item) {
            icmp = true;
        } else if !crate::sysdata::SERVICES.contains(&item) {
            return Err(FormatError::Invalid(format!("invalid port '{item}'\n")));
        }
    }
    if icmp && count > 0 {
        return Err(FormatError::Invalid(
            "ICMP ports not allowed in port range\n".into(),
        ));
    }
    if count > 15 {
        return Err(FormatError::Invalid(
            "too many entries in port list (> 15 numbers)\n".into(),
        ));
    }
    Ok(())
}

/// `parse_address_list`.
pub(super) fn parse_address_list(v: &str) -> Check {
    if re(r"(\+)(\S+)").is_match(v) {
        return ok(v.chars().count() <= 65, "ipset name too long\n");
    }
    if re(r"(dc/|guest/)?[A-Za-z][A-Za-z0-9\-\_]+").is_match(v) {
        return ok(v.chars().count() <= 64, "alias name too long\n");
    }
    let elements = split_perl(v);
    if v != elements.join(",") {
        return Err(FormatError::Invalid("extraneous commas in list\n".into()));
    }
    let mut version = None;
    let mut range = false;
    for e in &elements {
        let nv = net_ip(e)
            .map_err(|err| FormatError::Invalid(format!("invalid IP address: {err}\n")))?;
        range |= e.contains('-');
        if version.is_some_and(|old| old != nv) {
            return Err(FormatError::Invalid(format!(
                "detected mixed ipv4/ipv6 addresses in address list '{v}'\n"
            )));
        }
        version = Some(nv);
    }
    if range && elements.len() > 1 {
        return Err(FormatError::Invalid(
            "you can't use a range in a list\n".into(),
        ));
    }
    Ok(())
}
