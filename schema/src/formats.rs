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
                    Err(format!("invalid boot disk '{v}'\n"))
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
    if good { Ok(()) } else { Err(msg.to_string()) }
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

fn parse_id_as(v: &str, format: &str) -> Check {
    match format {
        "pve-bridge-id" => {
            if re(r"[-_.\w\d]+").is_match(v) {
                Ok(())
            } else {
                Err(format!("invalid bridge ID '{v}'\n"))
            }
        }
        _ => parse_id(v, "storage"),
    }
}

/// `$verify_idpair`: one item of a `storage-pair-list` or
/// `bridge-pair-list`, checked by `parse_idmap`.
fn verify_idpair(v: &str, format: &str) -> Check {
    let fail = |e: String| Err(format!("entry '{v}' contains invalid ID - {e}\n\n"));
    for entry in split_list(v) {
        if entry == "1" {
            continue;
        }
        if let Some(c) = re(r"([^:]+):([^:]+)").captures(entry) {
            if let Err(e) = parse_id_as(&c[1], format).and_then(|()| parse_id_as(&c[2], format)) {
                return fail(e);
            }
        } else if let Err(e) = parse_id_as(entry, format) {
            return fail(e);
        }
    }
    Ok(())
}

fn verify_timezone(v: &str) -> Check {
    if v == "UTC" || crate::sysdata::ZONES.contains(&v) {
        Ok(())
    } else {
        Err(format!("invalid time zone '{v}'\n"))
    }
}

/// `pve_parse_startup_order`.
fn verify_startup_order(v: &str) -> Check {
    let parsed = !v.is_empty()
        && v != "0"
        && v.split(',')
            .all(|p| p.trim().is_empty() || re(r"(order=)?\d+|up=\d+|down=\d+").is_match(p));
    ok(parsed, "unable to parse startup options\n")
}

fn check_pem(v: &str, label: &'static str, multiple: bool) -> Check {
    // `strip_leading_text`: drop anything before the first header.
    let header = |l: &str| format!(r"-----BEGIN {l}-----(?:\s|\n)*");
    let any_header = Regex::new(&header(".*?")).expect("pem header");
    let content = any_header.find(v).map_or(v, |m| &v[m.start()..]);
    let b64 = r"[0-9A-Za-z\+/]";
    let one = format!(
        r"{}(?:(?:{b64})+\s*\n)*(?:{b64})*(?:=\s*\n=|={{0,2}})?\s*\n-----END {label}-----(?:\s|\n)*",
        header(label)
    );
    let full = if multiple {
        format!(r"(?s:^(?:{one}\n+)*{one}\n?$)")
    } else {
        format!(r"(?s:^{one}\n?$)")
    };
    let good = Regex::new(&full).is_ok_and(|r| r.is_match(content));
    ok(good, "not a valid PEM-formatted string.\n")
}

/// The privileges of PVE 9.1 and 8.4 (`$privgroups` plus
/// `Permissions.Modify`; 8.4 still had `VM.Monitor`, 9.x added the
/// `VM.GuestAgent.*` and `VM.Replicate` privileges).
pub const PRIVILEGES: &[&str] = &[
    "Datastore.Allocate",
    "Datastore.AllocateSpace",
    "Datastore.AllocateTemplate",
    "Datastore.Audit",
    "Group.Allocate",
    "Mapping.Audit",
    "Mapping.Modify",
    "Mapping.Use",
    "Permissions.Modify",
    "Pool.Allocate",
    "Pool.Audit",
    "Realm.Allocate",
    "Realm.AllocateUser",
    "SDN.Allocate",
    "SDN.Audit",
    "SDN.Use",
    "Sys.AccessNetwork",
    "Sys.Audit",
    "Sys.Console",
    "Sys.Incoming",
    "Sys.Modify",
    "Sys.PowerMgmt",
    "Sys.Syslog",
    "User.Modify",
    "VM.Allocate",
    "VM.Audit",
    "VM.Backup",
    "VM.Clone",
    "VM.Config.CDROM",
    "VM.Config.CPU",
    "VM.Config.Cloudinit",
    "VM.Config.Disk",
    "VM.Config.HWType",
    "VM.Config.Memory",
    "VM.Config.Network",
    "VM.Config.Options",
    "VM.Console",
    "VM.GuestAgent.Audit",
    "VM.GuestAgent.FileRead",
    "VM.GuestAgent.FileSystemMgmt",
    "VM.GuestAgent.FileWrite",
    "VM.GuestAgent.Unrestricted",
    "VM.Migrate",
    "VM.Monitor",
    "VM.PowerMgmt",
    "VM.Replicate",
    "VM.Snapshot",
    "VM.Snapshot.Rollback",
];

fn verify_privname(v: &str) -> Check {
    if PRIVILEGES.contains(&v) {
        Ok(())
    } else {
        Err(format!("invalid privilege '{v}'\n"))
    }
}

/// `verify_command_batch`: a JSON array of `{path, method, args}`.
/// Approximate: PVE's message quotes JSON::XS's parser error and the
/// schema errors, which fake-pve words as serde_json and plainly.
fn verify_command_batch(v: &str) -> Check {
    let parsed: serde_json::Value = serde_json::from_str(v)
        .map_err(|e| format!("commands param did not contain valid JSON: {e}\n"))?;
    let invalid = |why: &str| {
        Err(format!(
            "commands is not a valid array of commands: {why}\n"
        ))
    };
    let Some(items) = parsed.as_array() else {
        return invalid("type check ('array') failed");
    };
    for item in items {
        let Some(obj) = item.as_object() else {
            return invalid("type check ('object') failed");
        };
        if !obj.get("path").is_some_and(serde_json::Value::is_string) {
            return invalid("path: property is missing and it is not optional");
        }
        let method = obj.get("method").and_then(serde_json::Value::as_str);
        if !method.is_some_and(|m| re("(GET|POST|PUT|DELETE)").is_match(m)) {
            return invalid("method: value does not match the regex pattern");
        }
        if obj.get("args").is_some_and(|a| !a.is_object()) {
            return invalid("args: type check ('object') failed");
        }
    }
    Ok(())
}

fn verify_ip_with_ll_iface(v: &str) -> Check {
    if let Some(c) = re(r"(fe80:[^%]+)%(.*)").captures(v)
        && is_ip(&c[1])
        && re(r"(?i:[a-z][a-z0-9_]{1,20}([:\.]\d+)?)").is_match(&c[2])
    {
        return Ok(());
    }
    ok(is_ip(v), "value does not look like a valid IP address\n")
}

fn verify_lxc_mp_string(v: &str) -> Check {
    let bad = v.contains("/./")
        || v.contains("/../")
        || v.ends_with("/.")
        || v.ends_with("/..")
        || v.starts_with("../");
    if bad {
        Err(format!("{v} contains illegal character sequences\n"))
    } else {
        Ok(())
    }
}

fn verify_lxc_dev_string(v: &str) -> Check {
    if re(r"(?s:.*/\.\.?(?:/.*)?)").is_match(v) || !v.starts_with("/dev/") {
        Err(format!("{v} is not a valid device path\n"))
    } else {
        Ok(())
    }
}

/// `parse_replication_job_id`: only a guest ID below 100 dies; any other
/// text passes, as PVE's validator returns without dying.
fn verify_replication_job_id(v: &str) -> Check {
    if let Some(c) = re(r"(\d+)-(\d+)").captures(v)
        && c[1].parse::<u128>().is_ok_and(|g| g < 100)
    {
        return Err(format!(
            "invalid replication job id '{v}' (guest IDs < 100 are reserved)\n"
        ));
    }
    Ok(())
}

/// `PVE::Tools::parse_host_and_port`.
fn is_host_and_port(v: &str) -> bool {
    if re(r"[[:alnum:]\-.]+(?::\d+)?").is_match(v) {
        return true;
    }
    if let Some(c) = re(r"\[(.*)\](?::\d+)?").captures(v) {
        let inner = &c[1];
        return is_ip(inner) || re(r"[[:alnum:]\-.]+").is_match(inner);
    }
    if v.parse::<Ipv6Addr>().is_ok() {
        return true;
    }
    v.rsplit_once('.').is_some_and(|(a, p)| {
        !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()) && a.parse::<Ipv6Addr>().is_ok()
    })
}

const CONTENT_TYPES: &[&str] = &[
    "images", "rootdir", "vztmpl", "iso", "backup", "snippets", "none", "import",
];

fn verify_content(v: &str) -> Check {
    if CONTENT_TYPES.contains(&v) {
        Ok(())
    } else {
        Err(format!("invalid content type '{v}'\n"))
    }
}

fn verify_volume_id(v: &str) -> Check {
    if re(r"(?is:[a-z][a-z0-9\-\_\.]*[a-z0-9]:.+)").is_match(v) {
        Ok(())
    } else {
        Err(format!("unable to parse volume ID '{v}'\n"))
    }
}

fn verify_volume_id_or_absolute_path(v: &str) -> Check {
    if v.starts_with('/') {
        Ok(())
    } else {
        verify_volume_id(v)
    }
}

fn verify_dir_override(v: &str) -> Check {
    if let Some(c) = re(r"([a-z]+)=([^.]*(?:\.?[^.]+)+)").captures(v) {
        verify_content(&c[1])?;
        let path = &c[2];
        if path.len() < 1023 && !path.split('/').any(|p| p.len() >= 255) {
            return Ok(());
        }
    }
    Err(format!("invalid override '{v}'\n"))
}

/// `PVE::CpuSet::parse_cpuset`.
fn verify_cpuset(v: &str) -> Check {
    let mut parts: Vec<&str> = v.split(',').collect();
    while parts.last() == Some(&"") {
        parts.pop();
    }
    for part in parts {
        let Some(c) = re(r"\s*(\d+)(?:-(\d+))?\s*").captures(part) else {
            return Err("unable to parse cpuset option\n".into());
        };
        let from: u128 = c[1].parse().unwrap_or(u128::MAX);
        let to: u128 = c
            .get(2)
            .map_or(from, |t| t.as_str().parse().unwrap_or(u128::MAX));
        if to < from {
            return Err("unable to parse cpuset option\n".into());
        }
    }
    Ok(())
}

/// `is_valid_drivename`: ide0-3, scsi0-30, virtio0-15, sata0-5,
/// efidisk0, tpmstate0.
fn is_valid_drivename(v: &str) -> bool {
    indexed(v, "ide", 4)
        || indexed(v, "scsi", 31)
        || indexed(v, "virtio", 16)
        || indexed(v, "sata", 6)
        || v == "efidisk0"
        || v == "tpmstate0"
}

fn indexed(v: &str, base: &str, count: u32) -> bool {
    v.strip_prefix(base).is_some_and(|i| {
        !i.is_empty()
            && i.bytes().all(|c| c.is_ascii_digit())
            && !(i.len() > 1 && i.starts_with('0'))
            && i.parse::<u32>().is_ok_and(|n| n < count)
    })
}

fn verify_bootdev(v: &str) -> Check {
    let special = v.starts_with("efidisk") || v.starts_with("tpmstate");
    if (is_valid_drivename(v) && !special)
        || indexed(v, "net", 32)
        || indexed(v, "usb", 14)
        || indexed(v, "hostpci", 16)
    {
        Ok(())
    } else {
        Err(format!("invalid boot device '{v}'\n"))
    }
}

fn verify_hotplug_features(v: &str) -> Check {
    if v == "0" {
        return Ok(());
    }
    let v = if v == "1" { "network,disk,usb" } else { v };
    ok(
        split_list(v).iter().all(|f| {
            matches!(
                *f,
                "network" | "disk" | "cpu" | "memory" | "usb" | "cloudinit"
            )
        }),
        "unable to parse hotplug option\n",
    )
}

fn verify_phys_bits(v: &str) -> Check {
    let good = v == "host"
        || (re(r"\d{1,2}").is_match(v) && v.parse::<u32>().is_ok_and(|n| (8..=64).contains(&n)));
    ok(
        good,
        "value must be an integer between 8 and 64 or 'host'\n",
    )
}

fn sdn_id(v: &str, kind: &str, pattern: &'static str, max: Option<usize>) -> Check {
    if !re(pattern).is_match(v) {
        return Err(format!("{kind} ID '{v}' contains illegal characters\n"));
    }
    if let Some(max) = max
        && v.len() > max
    {
        return Err(format!(
            "{kind} ID '{v}' can't be more length than {max} characters\n"
        ));
    }
    Ok(())
}

fn verify_sdn_subnet_id(v: &str) -> Check {
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

fn verify_sdn_bgp_rt(v: &str) -> Check {
    let good = re(r"(\d+):(\d+)").captures(v).is_some_and(|c| {
        c[1].parse::<u128>().is_ok_and(|n| n <= 4_294_967_295)
            && c[2].parse::<u128>().is_ok_and(|n| n <= 4_294_967_295)
    });
    ok(good, "value does not look like a valid bgp route-target\n")
}

/// `Net::IP->new` on an address, CIDR or range. Approximate: Net::IP's
/// exact error texts are not reproduced for every case.
fn net_ip(v: &str) -> Result<u8, String> {
    if let Some((a, b)) = v.split_once('-') {
        let (a, b) = (a.trim(), b.trim());
        let va = net_ip(a)?;
        let vb = net_ip(b)?;
        if va != vb {
            return Err(format!(
                "Begin and end IP are different versions: {a} - {b}"
            ));
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
        return Err(format!("Invalid IP {addr} - wrong format"));
    };
    if let Some(len) = len {
        let max = if version == 4 { 32 } else { 128 };
        if !len.bytes().all(|c| c.is_ascii_digit())
            || len.is_empty()
            || len.parse::<u32>().unwrap_or(u32::MAX) > max
        {
            return Err(format!("Invalid prefix length /{len}"));
        }
    }
    Ok(version)
}

fn verify_ip_or_cidr(v: &str) -> Check {
    let shape = v.split_once('/').map_or((v, None), |(a, l)| (a, Some(l)));
    let good_shape = is_ip(shape.0)
        && shape
            .1
            .is_none_or(|l| !l.is_empty() && l.bytes().all(|c| c.is_ascii_digit()));
    if !good_shape {
        return Err("value does not look like a valid IP address or CIDR network\n".into());
    }
    net_ip(v).map(|_| ()).map_err(|e| format!("{e}\n"))
}

fn verify_conntrack_helper(v: &str) -> Check {
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
        return Err("extraneous commas in list\n".into());
    }
    for h in parts {
        if !HELPERS.contains(&h) {
            // PVE's message has no newline, so Perl appends the place.
            return Err(format!("unknown helper {h}"));
        }
    }
    Ok(())
}

/// Perl's `split(/,/, $s)`: trailing empty fields are dropped.
fn split_perl(v: &str) -> Vec<&str> {
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

fn is_icmp_type(v: &str) -> bool {
    ICMP_TYPES.contains(&v) || ICMPV6_TYPES.contains(&v)
}

fn verify_icmp_type(v: &str) -> Check {
    if is_icmp_type(v) || v.is_empty() {
        Ok(())
    } else {
        Err(format!("invalid icmp-type value '{v}'\n"))
    }
}

fn verify_protocol(v: &str) -> Check {
    use crate::sysdata::{PROTOCOL_IDS, PROTOCOLS};
    if v.is_empty()
        || v == "0"
        || v == "icmpv6"
        || PROTOCOLS.contains(&v)
        || PROTOCOL_IDS.contains(&v)
    {
        Ok(())
    } else {
        Err(format!("unknown protocol '{v}'\n"))
    }
}

/// `parse_port_name_number_or_range`.
fn parse_port_spec(v: &str, dport: bool) -> Check {
    let elements = split_perl(v);
    if v != elements.join(",") {
        return Err("extraneous commas in list\n".into());
    }
    let mut count = 0;
    let mut icmp = false;
    let port = |p: &str| -> Check {
        if p.parse::<u128>().is_ok_and(|n| n <= 65535) {
            Ok(())
        } else {
            Err(format!("invalid port '{p}'\n"))
        }
    };
    for item in elements {
        if let Some(c) = re(r"([0-9]+):([0-9]+)").captures(item) {
            count += 2;
            port(&c[1])?;
            port(&c[2])?;
            let (a, b): (u128, u128) = (c[1].parse().unwrap_or(0), c[2].parse().unwrap_or(0));
            if a > b {
                return Err(format!(
                    "backwards range '{}:{}' not allowed, did you mean '{}:{}'?\n",
                    &c[1], &c[2], &c[2], &c[1]
                ));
            }
        } else if re(r"[0-9]+").is_match(item) {
            count += 1;
            port(item)?;
        } else if dport && is_icmp_type(item) {
            icmp = true;
        } else if !crate::sysdata::SERVICES.contains(&item) {
            return Err(format!("invalid port '{item}'\n"));
        }
    }
    if icmp && count > 0 {
        return Err("ICMP ports not allowed in port range\n".into());
    }
    if count > 15 {
        return Err("too many entries in port list (> 15 numbers)\n".into());
    }
    Ok(())
}

/// `parse_address_list`.
fn parse_address_list(v: &str) -> Check {
    if re(r"(\+)(\S+)").is_match(v) {
        return ok(v.chars().count() <= 65, "ipset name too long\n");
    }
    if re(r"(dc/|guest/)?[A-Za-z][A-Za-z0-9\-\_]+").is_match(v) {
        return ok(v.chars().count() <= 64, "alias name too long\n");
    }
    let elements = split_perl(v);
    if v != elements.join(",") {
        return Err("extraneous commas in list\n".into());
    }
    let mut version = None;
    let mut range = false;
    for e in &elements {
        let nv = net_ip(e).map_err(|err| format!("invalid IP address: {err}\n"))?;
        range |= e.contains('-');
        if version.is_some_and(|old| old != nv) {
            return Err(format!(
                "detected mixed ipv4/ipv6 addresses in address list '{v}'\n"
            ));
        }
        version = Some(nv);
    }
    if range && elements.len() > 1 {
        return Err("you can't use a range in a list\n".into());
    }
    Ok(())
}

/// The calendar-event grammar of proxmox-time (systemd-like:
/// `[weekdays] [[year-]month-day] [[hour:]minute[:second]] [UTC]` or a
/// shorthand like `daily`). Approximate: the grammar is followed, but
/// the nom error after ` - ` is reduced to `unable to parse calendar
/// event`.
fn verify_calendar_event(v: &str) -> Check {
    let text = v.trim();
    if text.is_empty() {
        return Err(format!(
            "invalid calendar event '{v}' - unable to parse calendar event - event is empty\n\n"
        ));
    }
    if calendar_ok(text) {
        Ok(())
    } else {
        Err(format!(
            "invalid calendar event '{v}' - unable to parse calendar event\n"
        ))
    }
}

fn calendar_ok(text: &str) -> bool {
    let text = text
        .strip_suffix("UTC")
        .map_or(text, |t| t.trim_end_matches(' '));
    if matches!(
        text,
        "minutely"
            | "hourly"
            | "daily"
            | "weekly"
            | "monthly"
            | "yearly"
            | "annually"
            | "quarterly"
            | "semiannually"
            | "semi-annually"
    ) {
        return true;
    }
    let day = r"(?:mon|tue|wed|thu|fri|sat|sun)(?:day|sday|nesday|rsday|urday)?";
    let comp = r"(?:\d+(?:\.\.\d+)?(?:/\d+)?)";
    let list = format!(r"(?:\*(?:/\d+)?|{comp}(?:,{comp})*)");
    let full = format!(
        r"^(?:(?:{day}(?:\.\.{day})?)(?:,{day}(?:\.\.{day})?)* *)?(?:(?:{list}-)?{list}-{list} *)?(?:(?:{list}:)?{list}(?::{list})?)?$"
    );
    let Ok(r) = Regex::new(&full) else {
        return false;
    };
    if text.is_empty() || !r.is_match(text) {
        return false;
    }
    // every number within its field's bounds is beyond this grammar check;
    // ranges must go upwards.
    let range = re(r"(\d+)\.\.(\d+)");
    range
        .captures_iter(text)
        .all(|c| c[1].parse::<u64>().unwrap_or(u64::MAX) <= c[2].parse::<u64>().unwrap_or(0))
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
pub const ACCEPTED_AS_IS: &[(&str, &str)] = &[];

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

    #[test]
    fn each_named_format_is_found_by_its_name() {
        for (name, kind) in table() {
            let found = named(name).expect("in the index");
            assert!(std::ptr::eq(found, kind), "{name} is in the table twice");
        }
        assert!(named("no-such-format").is_none());
    }

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
    #[case("storage-pair-list", "local:local-lvm,1", None)]
    #[case(
        "storage-pair-list",
        "local:x",
        Some(
            "entry 'local:x' contains invalid ID - storage ID 'x' cannot be shorter than 2 characters\n\n\n"
        )
    )]
    #[case("bridge-pair-list", "vmbr0:vmbr1", None)]
    #[case("bridge-pair-list", "vm br", None)]
    #[case(
        "bridge-pair",
        "vmbr0:vm!",
        Some("entry 'vmbr0:vm!' contains invalid ID - invalid bridge ID 'vm!'\n\n\n")
    )]
    #[case("ldap-simple-attr", "uid", None)]
    #[case(
        "ldap-simple-attr",
        "mail-x",
        Some("value 'mail-x' does not look like a simple ldap attribute name\n")
    )]
    #[case("email-or-username", "root", None)]
    #[case(
        "email-or-username",
        "a b",
        Some("value does not look like a valid email address or user name\n")
    )]
    #[case("pve-startup-order", "order=1,up=30,down=60", None)]
    #[case("pve-startup-order", "2", None)]
    #[case(
        "pve-startup-order",
        "order=1,up=x",
        Some("unable to parse startup options\n")
    )]
    #[case("pve-calendar-event", "mon..fri 02:30", None)]
    #[case("pve-calendar-event", "*/15", None)]
    #[case("pve-calendar-event", "daily", None)]
    #[case(
        "pve-calendar-event",
        "every day",
        Some("invalid calendar event 'every day' - unable to parse calendar event\n")
    )]
    #[case(
        "pem-certificate-chain",
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        None
    )]
    #[case(
        "pem-certificate-chain",
        "garbage",
        Some("not a valid PEM-formatted string.\n")
    )]
    #[case(
        "pem-string",
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        None
    )]
    #[case("pem-string", "AAAA", Some("not a valid PEM-formatted string.\n"))]
    #[case("mac-prefix", "BC:24:11", None)]
    #[case(
        "mac-prefix",
        "01:24",
        Some("value is not a valid unicast MAC address prefix\n")
    )]
    #[case("pve-priv-list", "VM.Audit,Sys.Audit", None)]
    #[case("pve-priv", "VM.Fly", Some("invalid privilege 'VM.Fly'\n"))]
    #[case("pve-day-of-week-list", "mon,wed", None)]
    #[case("pve-day-of-week-list", "mon,xyz", Some("invalid day 'xyz'\n"))]
    #[case("pve-command-batch", r#"[{"method":"GET","path":"/version"}]"#, None)]
    #[case(
        "pve-command-batch",
        r#"[{"method":"GET"}]"#,
        Some(
            "commands is not a valid array of commands: path: property is missing and it is not optional\n"
        )
    )]
    #[case("pve-acme-domain", "pve.example.com", None)]
    #[case(
        "pve-acme-domain",
        "localhost",
        Some("value 'localhost' does not look like a valid domain name!\n")
    )]
    #[case("pve-acme-alias", "_acme.example.com", None)]
    #[case(
        "pve-acme-alias",
        "x",
        Some("value 'x' does not look like a valid alias name!\n")
    )]
    #[case("graphite-path", "proxmox.pve", None)]
    #[case(
        "graphite-path",
        "a..b",
        Some("value does not look like a valid graphite path\n")
    )]
    #[case("lxc-ip-with-ll-iface-list", "192.0.2.1 fe80::1%eth0", None)]
    #[case(
        "lxc-ip-with-ll-iface",
        "fe80::1%",
        Some("value does not look like a valid IP address\n")
    )]
    #[case("pve-ct-timezone", "host", None)]
    #[case("pve-ct-timezone", "Europe/Vienna", None)]
    #[case(
        "pve-ct-timezone",
        "Mars/Base",
        Some("invalid time zone 'Mars/Base'\n")
    )]
    #[case("pve-lxc-mp-string", "/mnt/data", None)]
    #[case(
        "pve-lxc-mp-string",
        "/mnt/../etc",
        Some("/mnt/../etc contains illegal character sequences\n")
    )]
    #[case("pve-lxc-dev-string", "/dev/ttyUSB0", None)]
    #[case(
        "pve-lxc-dev-string",
        "/etc/passwd",
        Some("/etc/passwd is not a valid device path\n")
    )]
    #[case("pve-replication-job-id", "100-0", None)]
    #[case(
        "pve-replication-job-id",
        "99-1",
        Some("invalid replication job id '99-1' (guest IDs < 100 are reserved)\n")
    )]
    #[case("pve-storage-path-in-property-string", "/srv/share", None)]
    #[case(
        "pve-storage-path-in-property-string",
        "srv",
        Some(
            "Value does not look like a valid absolute path. These symbols are currently not allowed in path: ;,=()\n"
        )
    )]
    #[case("pve-storage-path", "/mnt/pve/nfs", None)]
    #[case(
        "pve-storage-path",
        "mnt",
        Some("value does not look like a valid absolute path\n")
    )]
    #[case("pve-storage-server", "10.0.0.5", None)]
    #[case(
        "pve-storage-server",
        "a b",
        Some("value does not look like a valid server name or IP address\n")
    )]
    #[case("pve-storage-vgname", "pve", None)]
    #[case(
        "pve-storage-vgname",
        "-pve",
        Some("lvm name '-pve' contains illegal characters\n")
    )]
    #[case(
        "pve-storage-portal-dns-list",
        "10.0.0.1:3260 [2001:db8::1]:3260 iscsi.example",
        None
    )]
    #[case(
        "pve-storage-portal-dns",
        "a b",
        Some("value does not look like a valid portal address\n")
    )]
    #[case("pve-storage-content-list", "images,rootdir,iso", None)]
    #[case(
        "pve-storage-content",
        "movies",
        Some("invalid content type 'movies'\n")
    )]
    #[case("pve-storage-options", "vers=4.2", None)]
    #[case("pve-storage-options", "a b", Some("invalid options 'a b'\n"))]
    #[case("pve-volume-id", "local:iso/x.iso", None)]
    #[case("pve-volume-id", "x.iso", Some("unable to parse volume ID 'x.iso'\n"))]
    #[case("pve-volume-id-or-qm-path", "cdrom", None)]
    #[case("pve-volume-id-or-absolute-path", "/var/lib/vz/x.raw", None)]
    #[case(
        "pve-volume-id-or-qm-path",
        "x.raw",
        Some("unable to parse volume ID 'x.raw'\n")
    )]
    #[case("pve-dir-override-list", "iso=isos,backup=dump", None)]
    #[case("pve-dir-override", "iso", Some("invalid override 'iso'\n"))]
    #[case(
        "pve-dir-override",
        "movies=x",
        Some("invalid content type 'movies'\n")
    )]
    #[case("pve-cpuset", "0-3,8", None)]
    #[case("pve-cpuset", "3-1", Some("unable to parse cpuset option\n"))]
    #[case("pve-qm-bootdev-list", "scsi0;net0;hostpci15", None)]
    #[case("pve-qm-bootdev", "efidisk0", Some("invalid boot device 'efidisk0'\n"))]
    #[case("pve-qm-bootdisk", "virtio15", None)]
    #[case("pve-qm-bootdisk", "virtio16", Some("invalid boot disk 'virtio16'\n"))]
    #[case("pve-hotplug-features", "network,disk,cpu", None)]
    #[case("pve-hotplug-features", "0", None)]
    #[case(
        "pve-hotplug-features",
        "network,gpu",
        Some("unable to parse hotplug option\n")
    )]
    #[case("pve-phys-bits", "host", None)]
    #[case(
        "pve-phys-bits",
        "7",
        Some("value must be an integer between 8 and 64 or 'host'\n")
    )]
    #[case("pve-ha-resource-id-list", "vm:100,ct:101", None)]
    #[case(
        "pve-ha-resource-id",
        "100",
        Some("value does not look like a valid ha resource id\n")
    )]
    #[case("pve-ha-resource-or-vm-id", "100", None)]
    #[case(
        "pve-ha-resource-or-vm-id",
        "VM:100",
        Some("value does not look like a valid ha resource id\n")
    )]
    #[case("pve-ha-node-list", "pve1:2,pve2", None)]
    #[case(
        "pve-ha-node",
        "pve1:x",
        Some("value does not look like a valid ha node\n")
    )]
    #[case(
        "pve-ha-group-node",
        "-pve",
        Some("value does not look like a valid ha group node\n")
    )]
    #[case("pve-sdn-zone-id", "zone1", None)]
    #[case(
        "pve-sdn-zone-id",
        "zone_1",
        Some("zone ID 'zone_1' contains illegal characters\n")
    )]
    #[case(
        "pve-sdn-vnet-id",
        "vnetvnet1",
        Some("vnet ID 'vnetvnet1' can't be more length than 8 characters\n")
    )]
    #[case(
        "pve-sdn-controller-id",
        "-c",
        Some("controller ID '-c' contains illegal characters\n")
    )]
    #[case(
        "pve-sdn-dns-id",
        "d!",
        Some("dns ID 'd!' contains illegal characters\n")
    )]
    #[case("pve-sdn-ipam-id", "pve", None)]
    #[case(
        "pve-sdn-ipam-id",
        "p_",
        Some("ipam ID 'p_' contains illegal characters\n")
    )]
    #[case("pve-sdn-fabric-id", "fab1", None)]
    #[case(
        "pve-sdn-fabric-id",
        "fabric-long",
        Some("Fabric ID 'fabric-long' contains illegal characters\n")
    )]
    #[case("pve-sdn-subnet-id", "zone1-10.0.0.0-24", None)]
    #[case(
        "pve-sdn-subnet-id",
        "zone1-10.0.0.0-99",
        Some("value does not look like a valid CIDR network\n")
    )]
    #[case("pve-sdn-isis-net", "49.0001.1921.6800.1002.00", None)]
    #[case(
        "pve-sdn-isis-net",
        "49.1",
        Some("value does not look like a valid isis net\n")
    )]
    #[case("pve-sdn-bgp-rt-list", "65000:1,65000:2", None)]
    #[case(
        "pve-sdn-bgp-rt",
        "65000",
        Some("value does not look like a valid bgp route-target\n")
    )]
    #[case("IPorCIDR", "10.0.0.0/8", None)]
    #[case(
        "IPorCIDR",
        "host",
        Some("value does not look like a valid IP address or CIDR network\n")
    )]
    #[case("IPorCIDRorAlias", "dc/mynet", None)]
    #[case(
        "IPorCIDRorAlias",
        "1.2.3.4/",
        Some("value does not look like a valid IP address or CIDR network\n")
    )]
    #[case("pve-fw-conntrack-helper", "ftp,tftp", None)]
    #[case("pve-fw-conntrack-helper", "ftp,", Some("extraneous commas in list\n"))]
    #[case("pve-fw-dport-spec", "22,80:90,https", None)]
    #[case("pve-fw-dport-spec", "echo-request", None)]
    #[case(
        "pve-fw-sport-spec",
        "echo-request",
        Some("invalid port 'echo-request'\n")
    )]
    #[case(
        "pve-fw-dport-spec",
        "90:80",
        Some("backwards range '90:80' not allowed, did you mean '80:90'?\n")
    )]
    #[case("pve-fw-sport-spec", "70000", Some("invalid port '70000'\n"))]
    #[case("pve-fw-addr-spec", "10.0.0.1,10.0.0.0/24", None)]
    #[case("pve-fw-addr-spec", "+ipset1", None)]
    #[case(
        "pve-fw-addr-spec",
        "10.0.0.1,2001:db8::1",
        Some("detected mixed ipv4/ipv6 addresses in address list '10.0.0.1,2001:db8::1'\n")
    )]
    #[case(
        "pve-fw-addr-spec",
        "10.0.0.1-10.0.0.5,10.0.1.1",
        Some("you can't use a range in a list\n")
    )]
    #[case("pve-fw-protocol-spec", "tcp", None)]
    #[case("pve-fw-protocol-spec", "6", None)]
    #[case("pve-fw-protocol-spec", "tcpx", Some("unknown protocol 'tcpx'\n"))]
    #[case("pve-fw-icmp-type-spec", "echo-request", None)]
    #[case(
        "pve-fw-icmp-type-spec",
        "ping",
        Some("invalid icmp-type value 'ping'\n")
    )]
    #[case("pve-qm-boot", "order=scsi0;net0", None)]
    #[case(
        "pve-qm-boot",
        "order=scsi0;foo",
        Some("format error\norder: invalid format - invalid boot device 'foo'\n\n")
    )]
    #[case("pve-qm-watchdog", "i6300esb,action=reset", None)]
    #[case(
        "pve-qm-watchdog",
        "model=x",
        Some(
            "format error\nmodel: value 'x' does not have a value in the enumeration 'i6300esb, ib700'\n"
        )
    )]
    #[case("pve-qm-rng", "/dev/urandom,max_bytes=1024", None)]
    #[case(
        "pve-qm-rng",
        "max_bytes=1024",
        Some("format error\nsource: property is missing and it is not optional\n")
    )]
    #[case(
        "pve-qm-smbios1",
        "uuid=5b0f8e1c-0a7e-4b8f-9a47-1f0e1c2d3e4f,base64=1",
        None
    )]
    #[case(
        "pve-qm-smbios1",
        "uuid=nope",
        Some("format error\nuuid: value does not match the regex pattern\n")
    )]
    #[case("pve-qm-cicustom", "user=local:snippets/u.yaml", None)]
    #[case(
        "pve-qm-cicustom",
        "user=u.yaml",
        Some("format error\nuser: invalid format - unable to parse volume ID 'u.yaml'\n\n")
    )]
    #[case("pve-qm-hostpci", "0000:01:00.0,pcie=1", None)]
    #[case(
        "pve-qm-hostpci",
        "01:00.0,vendor-id=8086",
        Some("format error\nvendor-id: value does not match the regex pattern\n")
    )]
    #[case("pve-qm-ipconfig", "ip=10.0.0.5/24,gw=10.0.0.1", None)]
    #[case(
        "pve-qm-ipconfig",
        "gw=10.0.0.1",
        Some("format error\nip: missing property required by 'gw'\n")
    )]
    #[case("pve-qemu-sev-fmt", "snp,allow-smt=0", None)]
    #[case(
        "pve-qemu-sev-fmt",
        "type=tdx",
        Some(
            "format error\ntype: value 'tdx' does not have a value in the enumeration 'std, es, snp'\n"
        )
    )]
    #[case("pve-qemu-tdx-fmt", "tdx,attestation=1", None)]
    #[case(
        "pve-qemu-tdx-fmt",
        "tdx",
        Some("format error\nattestation: property is missing and it is not optional\n")
    )]
    #[case("pve-vm-cpu-conf", "host,flags=+aes;-pcid", None)]
    #[case(
        "pve-vm-cpu-conf",
        "host,flags=+avx2",
        Some(
            "VM-specific CPU flags must be a subset of: nested-virt, md-clear, pcid, spec-ctrl, ssbd, ibpb, virt-ssbd, amd-ssbd, amd-no-ssb, pdpe1gb, hv-tlbflush, hv-evmcs, aes\n"
        )
    )]
    #[case("pve-vm-cpu-conf", "flags=+aes", Some("CPU is missing cputype\n"))]
    #[case(
        "pve-vm-cpu-conf",
        "skylake",
        Some("Built-in cputype 'skylake' is not defined (missing 'custom-' prefix?)\n")
    )]
    #[case(
        "pve-vm-cpu-conf",
        "host,reported-model=EPYC",
        Some("Property 'reported-model' not allowed in VM-specific CPU config.\n")
    )]
    #[case("backup-fleecing", "1,storage=local-lvm", None)]
    #[case(
        "backup-fleecing",
        "enabled=1",
        Some("'storage' parameter is required when 'enabled' is set\n")
    )]
    #[case("backup-performance", "max-workers=8", None)]
    #[case(
        "backup-performance",
        "max-workers=0",
        Some("format error\nmax-workers: value must have a minimum value of 1\n")
    )]
    #[case("prune-backups", "keep-last=3,keep-daily=7", None)]
    #[case("prune-backups", "keep-all=1,keep-last=0", None)]
    #[case(
        "prune-backups",
        "keep-all=1,keep-last=2",
        Some("keep-all cannot be set together with other options.\n")
    )]
    #[case("proxmox-remote", "host=pve2,apitoken=PVEAPIToken=root@pam!t=s", None)]
    #[case(
        "proxmox-remote",
        "host=pve2",
        Some("format error\napitoken: property is missing and it is not optional\n")
    )]
    #[case("pve-tfa-config", "type=oath,digits=8", None)]
    #[case(
        "pve-tfa-config",
        "type=oath,digits=9",
        Some("format error\ndigits: value must have a maximum value of 8\n")
    )]
    #[case("realm-sync-options", "scope=users,remove-vanished=acl;entry", None)]
    #[case(
        "realm-sync-options",
        "remove-vanished=all",
        Some("format error\nremove-vanished: value does not match the regex pattern\n")
    )]
    #[case(
        "pve-sdn-dhcp-range",
        "start-address=10.0.0.10,end-address=10.0.0.20",
        None
    )]
    #[case(
        "pve-sdn-dhcp-range",
        "start-address=10.0.0.10",
        Some("format error\nend-address: property is missing and it is not optional\n")
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
