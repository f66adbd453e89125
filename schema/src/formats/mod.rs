//! PVE's named formats (`format => 'pve-vmid'`), each with the message its
//! validator dies with (pve-common `JSONSchema.pm`, pve-access-control
//! `Auth/Plugin.pm` and `AccessControl.pm`).
//!
//! A format with a `-list` suffix validates every item of a list split as
//! PVE's `split_list` splits it; `-opt` accepts an empty value. Formats
//! fake-pve does not know yet are accepted as they are.
//!
//! This module has the table of formats by name and the checks by
//! pattern; those made by code are in `common` (pve-common, access
//! control, pve-manager), `net` (addresses, VLANs, SDN IDs), `firewall`,
//! `storage` and `guest` (QEMU, LXC, replication).

mod common;
mod error;
mod firewall;
mod guest;
mod net;
mod storage;

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

use regex::Regex;

pub use common::PRIVILEGES;
use common::*;
pub use error::FormatError;
use firewall::*;
pub use firewall::{ICMP_TYPES, ICMPV6_TYPES};
use guest::*;
use net::*;
use storage::*;

/// The outcome of a named-format check: the error displays as the text
/// PVE's validator dies with, ending in a newline.
pub type Check = Result<(), FormatError>;

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
                    Err(FormatError::Invalid(format!(
                        "value does not look like a valid address: {v}\n"
                    )))
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
                    Err(FormatError::Invalid(format!(
                        "value does not look like a valid disk size: {v}\n"
                    )))
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
                    .map_err(|_| FormatError::Invalid(format!("invalid status '{v}'\n")))
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
                    Err(FormatError::Invalid(format!(
                        "pool name '{v}' nested too deeply (max levels = 3)\n"
                    )))
                } else if re(r"[A-Za-z0-9\.\-_]+(?:/[A-Za-z0-9\.\-_]+){0,2}").is_match(v) {
                    Ok(())
                } else {
                    Err(FormatError::Invalid(format!(
                        "pool name '{v}' contains invalid characters\n"
                    )))
                }
            }),
        ),
        ("pve-vlan-id-or-range", Fn(verify_vlan)),
        // pve-common JSONSchema.pm:437, :447 (`parse_idmap` per item)
        ("storage-pair", Fn(|v| verify_idpair(v, "pve-storage-id"))),
        ("bridge-pair", Fn(|v| verify_idpair(v, "pve-bridge-id"))),
        // pve-common JSONSchema.pm:516
        (
            "ldap-simple-attr",
            Re(
                r"[a-zA-Z0-9]+",
                "value '{}' does not look like a simple ldap attribute name\n",
            ),
        ),
        // pve-common JSONSchema.pm:658
        (
            "email-or-username",
            Fn(|v| {
                ok(
                    re(EMAIL).is_match(v) || re(EMAIL_USER).is_match(v),
                    "value does not look like a valid email address or user name\n",
                )
            }),
        ),
        // pve-common JSONSchema.pm:687
        ("timezone", Fn(verify_timezone)),
        // pve-common JSONSchema.pm:803
        ("pve-startup-order", Fn(verify_startup_order)),
        // pve-common CalendarEvent.pm:24 (grammar of proxmox-time)
        ("pve-calendar-event", Fn(verify_calendar_event)),
        // pve-common Certificate.pm:16, :25, :34
        (
            "pem-certificate",
            Fn(|v| check_pem(v, "CERTIFICATE", false)),
        ),
        (
            "pem-certificate-chain",
            Fn(|v| check_pem(v, "CERTIFICATE", true)),
        ),
        ("pem-string", Fn(|v| check_pem(v, ".*?", false))),
        // pve-cluster DataCenterConfig.pm:222
        (
            "mac-prefix",
            Re(
                r"(?i:[a-f0-9][02468ace](?::[a-f0-9]{2}){0,2}:?)",
                "value is not a valid unicast MAC address prefix\n",
            ),
        ),
        // pve-access-control AccessControl.pm:1361
        ("pve-priv", Fn(verify_privname)),
        // pve-manager API2/Backup.pm:26
        (
            "pve-day-of-week",
            Re(r"mon|tue|wed|thu|fri|sat|sun", "invalid day '{}'\n"),
        ),
        // pve-manager API2/Nodes.pm:95
        ("pve-command-batch", Fn(verify_command_batch)),
        // pve-manager NodeConfig.pm:18, :31
        (
            "pve-acme-domain",
            Re(
                r"(?i:[a-z0-9][a-z0-9_-]*(?:\.[a-z0-9][a-z0-9_-]*)+)",
                "value '{}' does not look like a valid domain name!\n",
            ),
        ),
        (
            "pve-acme-alias",
            Re(
                r"(?i:[a-z0-9_][a-z0-9_-]*(?:\.[a-z0-9_][a-z0-9_-]*)+)",
                "value '{}' does not look like a valid alias name!\n",
            ),
        ),
        // pve-manager Status/Graphite.pm:159
        (
            "graphite-path",
            Re(DNS_NAME, "value does not look like a valid graphite path\n"),
        ),
        // pve-container LXC/Config.pm:411, :935, :944, :1061
        ("lxc-ip-with-ll-iface", Fn(verify_ip_with_ll_iface)),
        (
            "pve-ct-timezone",
            Fn(|v| {
                if v == "host" {
                    Ok(())
                } else {
                    verify_timezone(v)
                }
            }),
        ),
        ("pve-lxc-mp-string", Fn(verify_lxc_mp_string)),
        ("pve-lxc-dev-string", Fn(verify_lxc_dev_string)),
        // pve-guest-common ReplicationConfig.pm:25, Mapping/Dir.pm:48
        ("pve-replication-job-id", Fn(verify_replication_job_id)),
        (
            "pve-storage-path-in-property-string",
            Fn(|v| {
                ok(
                    re(r"(?s:/[^;,=\(\)]+.*)").is_match(v),
                    "Value does not look like a valid absolute path. These symbols are currently not allowed in path: ;,=()\n",
                )
            }),
        ),
        // pve-storage Storage/Plugin.pm:302 .. :430
        (
            "pve-storage-path",
            Fn(|v| {
                ok(
                    re(r"(?s:/[^;\(\)]+.*)").is_match(v),
                    "value does not look like a valid absolute path\n",
                )
            }),
        ),
        (
            "pve-storage-server",
            Fn(|v| {
                ok(
                    is_ip(v) || re(DNS_NAME).is_match(v),
                    "value does not look like a valid server name or IP address\n",
                )
            }),
        ),
        (
            "pve-storage-vgname",
            Re(
                r"(?i:[a-z0-9][a-z0-9\-\_\.]*[a-z0-9])",
                "lvm name '{}' contains illegal characters\n",
            ),
        ),
        (
            "pve-storage-portal-dns",
            Fn(|v| {
                ok(
                    is_host_and_port(v),
                    "value does not look like a valid portal address\n",
                )
            }),
        ),
        ("pve-storage-content", Fn(verify_content)),
        (
            "pve-storage-format",
            Re(r"raw|qcow2|vmdk|subvol", "invalid format '{}'\n"),
        ),
        ("pve-storage-options", Re(r"\S+", "invalid options '{}'\n")),
        ("pve-volume-id", Fn(verify_volume_id)),
        ("pve-dir-override", Fn(verify_dir_override)),
        ("pve-storage-zfs-blocksize", Fn(verify_zfs_blocksize)),
        // qemu-server QemuServer.pm:883 .. :1155
        ("pve-cpuset", Fn(verify_cpuset)),
        (
            "pve-volume-id-or-qm-path",
            Fn(|v| {
                if v == "none" || v == "cdrom" {
                    Ok(())
                } else {
                    verify_volume_id_or_absolute_path(v)
                }
            }),
        ),
        (
            "pve-volume-id-or-absolute-path",
            Fn(verify_volume_id_or_absolute_path),
        ),
        ("pve-qm-bootdev", Fn(verify_bootdev)),
        ("pve-hotplug-features", Fn(verify_hotplug_features)),
        // qemu-server QemuServer/Drive.pm:739, CPUConfig.pm:443
        (
            "pve-qm-bootdisk",
            Fn(|v| {
                if is_valid_drivename(v) {
                    Ok(())
                } else {
                    Err(FormatError::Invalid(format!("invalid boot disk '{v}'\n")))
                }
            }),
        ),
        ("pve-phys-bits", Fn(verify_phys_bits)),
        // pve-ha-manager HA/Tools.pm:31, :66, :90 (8.4: pve-ha-group-node)
        (
            "pve-ha-resource-id",
            Re(
                r"[a-z]+:\S+",
                "value does not look like a valid ha resource id\n",
            ),
        ),
        (
            "pve-ha-resource-or-vm-id",
            Re(
                r"[a-z]+:\S+|\d+",
                "value does not look like a valid ha resource id\n",
            ),
        ),
        (
            "pve-ha-node",
            Re(
                r"([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?)(:\d+)?",
                "value does not look like a valid ha node\n",
            ),
        ),
        (
            "pve-ha-group-node",
            Re(
                r"([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?)(:\d+)?",
                "value does not look like a valid ha group node\n",
            ),
        ),
        // pve-network (before ecf98c5, as in 9.1): SDN/*Plugin.pm
        (
            "pve-sdn-controller-id",
            Fn(|v| sdn_id(v, "controller", r"(?i:[a-z][a-z0-9_-]*[a-z0-9])", Some(64))),
        ),
        (
            "pve-sdn-dns-id",
            Fn(|v| sdn_id(v, "dns", r"(?i:[a-z][a-z0-9]*[a-z0-9])", None)),
        ),
        (
            "pve-sdn-ipam-id",
            Fn(|v| sdn_id(v, "ipam", r"(?i:[a-z][a-z0-9]*[a-z0-9])", None)),
        ),
        (
            "pve-sdn-vnet-id",
            Fn(|v| sdn_id(v, "vnet", r"(?i:[a-z][a-z0-9]*[a-z0-9])", Some(8))),
        ),
        (
            "pve-sdn-zone-id",
            Fn(|v| sdn_id(v, "zone", r"(?i:[a-z][a-z0-9]*[a-z0-9])", Some(8))),
        ),
        (
            "pve-sdn-fabric-id",
            Re(
                r"(?i:[a-zA-Z0-9][a-zA-Z0-9-]{0,6}[a-zA-Z0-9]?)",
                "Fabric ID '{}' contains illegal characters\n",
            ),
        ),
        ("pve-sdn-subnet-id", Fn(verify_sdn_subnet_id)),
        // pve-network 9.2: SDN/PrefixLists.pm, SDN/RouteMaps.pm
        ("pve-sdn-prefix-list-id", Fn(verify_sdn_prefix_list_id)),
        ("pve-sdn-route-map-id", Fn(verify_sdn_route_map_id)),
        ("FullRangeCIDR", Fn(verify_full_range_cidr)),
        // pve-network 9.2: SDN/Fabrics.pm (a WireGuard interface's name)
        (
            "pve-sdn-wireguard-iface-name",
            Re(
                r"[a-zA-Z0-9][a-zA-Z0-9-]{0,6}[a-zA-Z0-9]?",
                "WireGuard interface name '{}' contains illegal characters or exceeds the eight character limit\n",
            ),
        ),
        (
            "pve-sdn-isis-net",
            Re(
                r"[a-fA-F0-9]{2}(\.[a-fA-F0-9]{4}){3,9}\.[a-fA-F0-9]{2}",
                "value does not look like a valid isis net\n",
            ),
        ),
        ("pve-sdn-bgp-rt", Fn(verify_sdn_bgp_rt)),
        // pve-firewall Firewall.pm:74 .. :1217
        ("IPorCIDR", Fn(verify_ip_or_cidr)),
        (
            "IPorCIDRorAlias",
            Fn(|v| {
                if re(r"(dc/|guest/)?(?:[A-Za-z][A-Za-z0-9\-\_]+)").is_match(v) {
                    Ok(())
                } else {
                    verify_ip_or_cidr(v)
                }
            }),
        ),
        ("pve-fw-conntrack-helper", Fn(verify_conntrack_helper)),
        ("pve-fw-sport-spec", Fn(|v| parse_port_spec(v, false))),
        ("pve-fw-dport-spec", Fn(|v| parse_port_spec(v, true))),
        ("pve-fw-addr-spec", Fn(parse_address_list)),
        ("pve-fw-protocol-spec", Fn(verify_protocol)),
        ("pve-fw-icmp-type-spec", Fn(verify_icmp_type)),
        ("string", Fn(|_| Ok(()))),
    ]
}

const EMAIL: &str = r"[\w\+\-\~]+(\.[\w\+\-\~]+)*@[a-zA-Z0-9\-]+(\.[a-zA-Z0-9\-]+)*";
const EMAIL_USER: &str = r"[\w\+\-\~]+(\.[\w\+\-\~]+)*";
const DNS_NAME: &str =
    r"(([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?)\.)*([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?)";

fn ok(good: bool, msg: &str) -> Check {
    if good {
        Ok(())
    } else {
        Err(FormatError::Invalid(msg.to_string()))
    }
}

/// An anchored regex, compiled once per pattern. Each thread finds the
/// patterns it has used by their address, without a lock; a pattern new
/// to the thread is looked up (or compiled) under one.
fn re(pattern: &'static str) -> &'static Regex {
    type Seen =
        std::collections::HashMap<(usize, usize), &'static Regex, foldhash::fast::RandomState>;
    thread_local! {
        static SEEN: std::cell::RefCell<Seen> = std::cell::RefCell::default();
    }
    let key = (pattern.as_ptr() as usize, pattern.len());
    if let Some(r) = SEEN.with_borrow(|seen| seen.get(&key).copied()) {
        return r;
    }
    let compiled = compiled(pattern);
    SEEN.with_borrow_mut(|seen| seen.insert(key, compiled));
    compiled
}

/// The one compiled regex of a pattern, for all threads.
fn compiled(pattern: &'static str) -> &'static Regex {
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

/// A named format's check in [`table`], by name.
fn named(base: &str) -> Option<&'static Kind> {
    type ByName =
        std::collections::HashMap<&'static str, &'static Kind, foldhash::fast::RandomState>;
    static BY_NAME: OnceLock<ByName> = OnceLock::new();
    BY_NAME
        .get_or_init(|| table().iter().map(|(n, k)| (*n, k)).collect())
        .get(base)
        .copied()
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
/// `-opt`): a validator of this table, or a registered property-string
/// format ([`crate::registered`]).
pub fn known(format: &str) -> bool {
    let base = format
        .strip_suffix("-list")
        .or_else(|| format.strip_suffix("-opt"))
        .unwrap_or(format);
    named(base).is_some() || crate::registered::NAMES.contains(&format)
}

/// Named formats the specs use that fake-pve deliberately accepts as they
/// are, each with the reason. [`known`] is false for them; a test checks
/// that every format of both specs is either known or listed here.
pub const ACCEPTED_AS_IS: &[(&str, &str)] = &[(
    "pve-fw-comment-spec",
    "9.2's firewall comments: the schema names the format without its rules; a comment stays free text as in 9.1",
)];

/// Checks `value` against a named format. Unknown formats pass.
///
/// # Errors
/// The message PVE's validator dies with.
pub fn check(format: &str, value: &str) -> Check {
    if let Some(keys) = crate::registered::cached(format) {
        // A registered property string, parsed as PVE's
        // `parse_property_string` does, then its validator.
        let fmt = crate::Format::Object(keys.clone());
        crate::validate::check_format(&fmt, value, "")?;
        if let Some(validator) = crate::registered::validator(format) {
            let parsed = crate::propstring::parse(keys, value)?;
            validator(&parsed)?;
        }
        return Ok(());
    }
    let (base, kind) = if let Some(b) = format.strip_suffix("-list") {
        (b, "list")
    } else if let Some(b) = format.strip_suffix("-opt") {
        (b, "opt")
    } else {
        (format, "")
    };
    let Some(validator) = named(base) else {
        return Ok(());
    };
    let one = |v: &str| match validator {
        Kind::Re(pattern, msg) => {
            if re(pattern).is_match(v) {
                Ok(())
            } else {
                Err(FormatError::Invalid(msg.replace("{}", v)))
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
mod tests;
