//! PVE's named formats (`format => 'pve-vmid'`), each with the message its
//! validator dies with (pve-common `JSONSchema.pm`, pve-access-control
//! `Auth/Plugin.pm` and `AccessControl.pm`).
//!
//! A format with a `-list` suffix validates every item of a list split as
//! PVE's `split_list` splits it; `-opt` accepts an empty value. Formats
//! fake-pve does not know yet are accepted as they are.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

use regex::Regex;

/// The outcome of a named-format check: `Err(message)` is the text PVE's
/// validator dies with, ending in a newline.
pub type Check = Result<(), String>;

/// How a named format validates.
enum Kind {
    /// A regular expression and the message on mismatch (`{}` is the value).
    Re(&'static str, &'static str),
    /// A function.
    Fn(fn(&str) -> Check),
}

fn table() -> &'static [(&'static str, Kind)] {
    use Kind::{Fn, Re};
    &[
        (
            "pve-vmid",
            Re(
                r"[1-9][0-9]{2,8}",
                "value does not look like a valid VM ID\n",
            ),
        ),
        (
            "pve-node",
            Re(
                r"[a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?",
                "value does not look like a valid node name\n",
            ),
        ),
        (
            "pve-configid",
            Re(r"(?i:[a-z][a-z0-9_-]+)", "invalid configuration ID '{}'\n"),
        ),
        (
            "pve-bridge-id",
            Re(r"[-_.\w\d]+", "invalid bridge ID '{}'\n"),
        ),
        ("pve-storage-id", Fn(|v| parse_id(v, "storage"))),
        ("acme-plugin-id", Fn(|v| parse_id(v, "ACME plugin"))),
        (
            "mac-addr",
            Re(
                r"(?i:[a-f0-9][02468ace](?::[a-f0-9]{2}){5})",
                "value does not look like a valid unicast MAC address\n",
            ),
        ),
        (
            "ipv4",
            Fn(|v| {
                ok(
                    v.parse::<Ipv4Addr>().is_ok(),
                    "value does not look like a valid IPv4 address\n",
                )
            }),
        ),
        (
            "ipv6",
            Fn(|v| {
                ok(
                    v.parse::<Ipv6Addr>().is_ok(),
                    "value does not look like a valid IPv6 address\n",
                )
            }),
        ),
        (
            "ip",
            Fn(|v| ok(is_ip(v), "value does not look like a valid IP address\n")),
        ),
        (
            "ipv4mask",
            Fn(|v| {
                ok(
                    is_netmask(v),
                    "value does not look like a valid IP netmask\n",
                )
            }),
        ),
        (
            "CIDRv4",
            Fn(|v| {
                ok(
                    is_cidr(v, false),
                    "value does not look like a valid IPv4 CIDR network\n",
                )
            }),
        ),
        (
            "CIDRv6",
            Fn(|v| {
                ok(
                    is_cidr(v, true),
                    "value does not look like a valid IPv6 CIDR network\n",
                )
            }),
        ),
        (
            "CIDR",
            Fn(|v| {
                ok(
                    is_cidr(v, false) || is_cidr(v, true),
                    "value does not look like a valid CIDR network\n",
                )
            }),
        ),
        (
            "pve-ipv4-config",
            Fn(|v| {
                ok(
                    matches!(v, "dhcp" | "manual") || is_cidr(v, false),
                    "value does not look like a valid ipv4 network configuration\n",
                )
            }),
        ),
        (
            "pve-ipv6-config",
            Fn(|v| {
                ok(
                    matches!(v, "auto" | "dhcp" | "manual") || is_cidr(v, true),
                    "value does not look like a valid ipv6 network configuration\n",
                )
            }),
        ),
        (
            "email",
            Re(EMAIL, "value does not look like a valid email address\n"),
        ),
        (
            "dns-name",
            Re(DNS_NAME, "value does not look like a valid DNS name\n"),
        ),
        (
            "address",
            Fn(|v| {
                if is_ip(v) || re(DNS_NAME).is_match(v) {
                    Ok(())
                } else {
                    Err(format!("value does not look like a valid address: {v}\n"))
                }
            }),
        ),
        (
            "pve-iface",
            Re(
                r"(?i:[a-z][a-z0-9_]{1,20}([:\.]\d+)?)",
                "invalid network interface name '{}'\n",
            ),
        ),
        (
            "disk-size",
            Fn(|v| {
                if re(r"\d+(\.\d+)?[KMGT]?").is_match(v) {
                    Ok(())
                } else {
                    Err(format!("value does not look like a valid disk size: {v}\n"))
                }
            }),
        ),
        (
            "urlencoded",
            Re(r"[-%a-zA-Z0-9_.!~*'()]*", "invalid urlencoded string: {}\n"),
        ),
        (
            "pve-tag",
            Re(
                r"(?i:[a-z0-9_][a-z0-9_\-\+\.]*)",
                "invalid characters in tag\n",
            ),
        ),
        (
            "pve-task-status-type",
            Fn(|v| {
                ok(matches!(v, "ok" | "error" | "warning" | "unknown"), "")
                    .map_err(|_| format!("invalid status '{v}'\n"))
            }),
        ),
        (
            "pve-realm",
            Re(
                r"[A-Za-z][A-Za-z0-9\.\-_]+",
                "value does not look like a valid realm\n",
            ),
        ),
        ("pve-userid", Fn(verify_userid)),
        (
            "pve-tokenid",
            Re(
                r"[^\s:/]+@[A-Za-z][A-Za-z0-9\.\-_]+(?:![A-Za-z][A-Za-z0-9\.\-_]+)?",
                "value '{}' does not look like a valid token ID\n",
            ),
        ),
        (
            "pve-groupid",
            Re(
                r"[A-Za-z0-9\.\-_]+",
                "group name '{}' contains invalid characters\n",
            ),
        ),
        (
            "pve-roleid",
            Re(
                r"[A-Za-z0-9\.\-_]+",
                "role name '{}' contains invalid characters\n",
            ),
        ),
        (
            "pve-poolid",
            Fn(|v| {
                if v.split('/').count() > 3 {
                    Err(format!(
                        "pool name '{v}' nested too deeply (max levels = 3)\n"
                    ))
                } else if re(r"[A-Za-z0-9\.\-_]+(?:/[A-Za-z0-9\.\-_]+){0,2}").is_match(v) {
                    Ok(())
                } else {
                    Err(format!("pool name '{v}' contains invalid characters\n"))
                }
            }),
        ),
        ("pve-vlan-id-or-range", Fn(verify_vlan)),
        ("string", Fn(|_| Ok(()))),
    ]
}

const EMAIL: &str = r"[\w\+\-\~]+(\.[\w\+\-\~]+)*@[a-zA-Z0-9\-]+(\.[a-zA-Z0-9\-]+)*";
const DNS_NAME: &str =
    r"(([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?)\.)*([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?)";

fn ok(good: bool, msg: &str) -> Check {
    if good { Ok(()) } else { Err(msg.to_string()) }
}

/// An anchored regex, compiled once per pattern.
fn re(pattern: &'static str) -> &'static Regex {
    static CACHE: OnceLock<std::sync::Mutex<Vec<(&'static str, &'static Regex)>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut c = cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, r)) = c.iter().find(|(p, _)| *p == pattern) {
        return r;
    }
    let compiled: &'static Regex = Box::leak(Box::new(
        Regex::new(&format!("^(?:{pattern})$")).expect("format patterns compile"),
    ));
    c.push((pattern, compiled));
    compiled
}

fn parse_id(v: &str, kind: &str) -> Check {
    if v.chars().count() < 2 {
        return Err(format!(
            "{kind} ID '{v}' cannot be shorter than 2 characters\n"
        ));
    }
    if !re(r"(?i:[a-z][a-z0-9\-\_\.]*[a-z0-9])").is_match(v) {
        return Err(format!("{kind} ID '{v}' contains illegal characters\n"));
    }
    Ok(())
}

fn is_ip(v: &str) -> bool {
    v.parse::<Ipv4Addr>().is_ok() || v.parse::<Ipv6Addr>().is_ok()
}

fn is_netmask(v: &str) -> bool {
    v.parse::<Ipv4Addr>().is_ok_and(|a| {
        let bits = u32::from(a);
        bits.leading_ones() + bits.trailing_zeros() == 32 && bits != 0
    })
}

fn is_cidr(v: &str, v6: bool) -> bool {
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

fn verify_userid(v: &str) -> Check {
    let len = v.chars().count();
    if len < 3 {
        return Err(format!("user name '{v}' is too short\n"));
    }
    if len > 64 {
        return Err(format!("user name '{v}' is too long ({len} > 64)\n"));
    }
    if re(r"[^\s:/]+@[A-Za-z][A-Za-z0-9\.\-_]+").is_match(v) {
        Ok(())
    } else {
        Err(format!(
            "value '{v}' does not look like a valid user name\n"
        ))
    }
}

fn verify_vlan(v: &str) -> Check {
    let Some(c) = re(r"(\d+)(?:-(\d+))?").captures(v) else {
        return Err(format!("invalid VLAN configuration '{v}'\n"));
    };
    let tag = |s: &str| -> Result<u32, String> {
        let t: u32 = s.parse().map_err(|_| format!("invalid VLAN tag '{s}'\n"))?;
        if (2..=4094).contains(&t) {
            Ok(t)
        } else {
            Err(format!("invalid VLAN tag '{s}'\n"))
        }
    };
    let start = tag(&c[1])?;
    if let Some(end) = c.get(2) {
        let end = tag(end.as_str())?;
        if start >= end {
            return Err(format!(
                "VLAN range must go from lower to higher tag '{v}'\n"
            ));
        }
    }
    Ok(())
}

/// PVE's `split_list`: NUL-separated when a NUL is present, else split on
/// commas, semicolons and white space.
pub fn split_list(v: &str) -> Vec<&str> {
    if v.contains('\0') {
        return v.split('\0').collect();
    }
    v.split([',', ';', ' ', '\t', '\n', '\r'])
        .filter(|s| !s.is_empty())
        .collect()
}

/// Whether fake-pve knows the named format (with or without `-list` or
/// `-opt`).
pub fn known(format: &str) -> bool {
    let base = format
        .strip_suffix("-list")
        .or_else(|| format.strip_suffix("-opt"))
        .unwrap_or(format);
    table().iter().any(|(n, _)| *n == base)
}

/// Checks `value` against a named format. Unknown formats pass.
///
/// # Errors
/// The message PVE's validator dies with.
pub fn check(format: &str, value: &str) -> Check {
    let (base, kind) = if let Some(b) = format.strip_suffix("-list") {
        (b, "list")
    } else if let Some(b) = format.strip_suffix("-opt") {
        (b, "opt")
    } else {
        (format, "")
    };
    let Some((_, validator)) = table().iter().find(|(n, _)| *n == base) else {
        return Ok(());
    };
    let one = |v: &str| match validator {
        Kind::Re(pattern, msg) => {
            if re(pattern).is_match(v) {
                Ok(())
            } else {
                Err(msg.replace("{}", v))
            }
        }
        Kind::Fn(f) => f(v),
    };
    match kind {
        "list" => split_list(value).into_iter().try_for_each(one),
        "opt" if value.is_empty() => Ok(()),
        _ => one(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("pve-vmid", "100", None)]
    #[case("pve-vmid", "99", Some("value does not look like a valid VM ID\n"))]
    #[case("pve-vmid", "0100", Some("value does not look like a valid VM ID\n"))]
    #[case("pve-node", "pve-1", None)]
    #[case(
        "pve-node",
        "-pve",
        Some("value does not look like a valid node name\n")
    )]
    #[case("pve-configid", "net0", None)]
    #[case("pve-configid", "0net", Some("invalid configuration ID '0net'\n"))]
    #[case("pve-configid-list", "net0,scsi1;ide2 tags", None)]
    #[case(
        "pve-configid-list",
        "net0,-x",
        Some("invalid configuration ID '-x'\n")
    )]
    #[case("pve-storage-id", "local-lvm", None)]
    #[case(
        "pve-storage-id",
        "l",
        Some("storage ID 'l' cannot be shorter than 2 characters\n")
    )]
    #[case(
        "pve-storage-id",
        "local_",
        Some("storage ID 'local_' contains illegal characters\n")
    )]
    #[case("pve-bridge-id", "vmbr0", None)]
    #[case("pve-bridge-id", "vm br", Some("invalid bridge ID 'vm br'\n"))]
    #[case("mac-addr", "BC:24:11:00:00:01", None)]
    #[case(
        "mac-addr",
        "01:24:11:00:00:01",
        Some("value does not look like a valid unicast MAC address\n")
    )]
    #[case("ipv4", "192.0.2.1", None)]
    #[case(
        "ipv4",
        "192.0.2",
        Some("value does not look like a valid IPv4 address\n")
    )]
    #[case("ipv6", "2001:db8::1", None)]
    #[case("ip", "fe80::1", None)]
    #[case("ip", "host", Some("value does not look like a valid IP address\n"))]
    #[case("CIDR", "192.0.2.0/24", None)]
    #[case(
        "CIDR",
        "192.0.2.0/5",
        Some("value does not look like a valid CIDR network\n")
    )]
    #[case("CIDRv6", "2001:db8::/64", None)]
    #[case("ipv4mask", "255.255.255.0", None)]
    #[case(
        "ipv4mask",
        "255.0.255.0",
        Some("value does not look like a valid IP netmask\n")
    )]
    #[case("email", "root@example.com", None)]
    #[case(
        "email",
        "root",
        Some("value does not look like a valid email address\n")
    )]
    #[case("dns-name", "pve.example.com", None)]
    #[case(
        "dns-name",
        "-bad.example",
        Some("value does not look like a valid DNS name\n")
    )]
    #[case("address", "backup.example.com", None)]
    #[case(
        "address",
        "a b",
        Some("value does not look like a valid address: a b\n")
    )]
    #[case("pve-iface", "vmbr0", None)]
    #[case("pve-iface", "v", Some("invalid network interface name 'v'\n"))]
    #[case("disk-size", "32G", None)]
    #[case(
        "disk-size",
        "32X",
        Some("value does not look like a valid disk size: 32X\n")
    )]
    #[case("pve-userid", "root@pam", None)]
    #[case("pve-userid", "ro", Some("user name 'ro' is too short\n"))]
    #[case(
        "pve-userid",
        "root",
        Some("value 'root' does not look like a valid user name\n")
    )]
    #[case("pve-tokenid", "root@pam!ci", None)]
    #[case("pve-realm", "p", Some("value does not look like a valid realm\n"))]
    #[case(
        "pve-poolid",
        "a/b/c/d",
        Some("pool name 'a/b/c/d' nested too deeply (max levels = 3)\n")
    )]
    #[case("pve-vlan-id-or-range", "100-200", None)]
    #[case(
        "pve-vlan-id-or-range",
        "200-100",
        Some("VLAN range must go from lower to higher tag '200-100'\n")
    )]
    #[case("pve-vlan-id-or-range", "1", Some("invalid VLAN tag '1'\n"))]
    #[case("pve-tag-list", "web;db", None)]
    #[case("pve-tag-list", "web;d b!", Some("invalid characters in tag\n"))]
    #[case("pve-ipv4-config", "dhcp", None)]
    #[case("pve-ipv4-config", "192.0.2.10/24", None)]
    #[case(
        "pve-ipv4-config",
        "garbage",
        Some("value does not look like a valid ipv4 network configuration\n")
    )]
    #[case("pve-ipv6-config", "auto", None)]
    #[case(
        "pve-ipv6-config",
        "192.0.2.10/24",
        Some("value does not look like a valid ipv6 network configuration\n")
    )]
    #[case("some-unknown-format", "anything", None)]
    fn named_formats(#[case] format: &str, #[case] value: &str, #[case] err: Option<&str>) {
        assert_eq!(
            check(format, value).err().as_deref(),
            err,
            "{format} {value}"
        );
    }

    #[test]
    fn lists_split_as_pve() {
        assert_eq!(split_list(" a, b;c  d "), ["a", "b", "c", "d"]);
        assert_eq!(split_list("a b\0c"), ["a b", "c"]);
        assert!(split_list("").is_empty());
    }
}
