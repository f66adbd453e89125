//! What each section type of the SDN configuration files may hold, as
//! pve-network's plugins declare it (`options` of `Zones/*Plugin.pm`,
//! `VnetPlugin.pm`, `SubnetPlugin.pm`, `Controllers/*Plugin.pm`,
//! `Ipams/*Plugin.pm`, `Dns/*Plugin.pm`), and PVE's `SectionConfig`
//! `check_config` over them.

use std::collections::BTreeMap;

use serde_json::Value;

use super::Obj;
use crate::model::{Error, PveVersion, Result};

/// The kind of value an option holds, for storing it as PVE answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Str,
    Int,
    Bool,
    List,
}

fn kind(key: &str) -> Kind {
    match key {
        "tag" | "mtu" | "dp-id" | "vrf-vxlan" | "vxlan-port" | "asn" | "ebgp-multihop"
        | "section" | "ttl" | "reversemaskv6" | "reversev6mask" => Kind::Int,
        "vlanaware"
        | "isolate-ports"
        | "snat"
        | "advertise-subnets"
        | "bridge-disable-mac-learning"
        | "disable-arp-nd-suppression"
        | "exitnodes-local-routing"
        | "ebgp"
        | "bgp-multipath-as-path-relax" => Kind::Bool,
        "dhcp-range" | "secondary-controllers" => Kind::List,
        _ => Kind::Str,
    }
}

/// One option of a section type: its name and whether it is required.
type Opt = (&'static str, bool);

const DNS_OPTS: [Opt; 4] = [
    ("dns", false),
    ("reversedns", false),
    ("dnszone", false),
    ("ipam", false),
];

/// The options of a zone type, or `None` for an unknown type.
pub fn zone_options(version: PveVersion, kind: &str) -> Option<Vec<Opt>> {
    let mut o: Vec<Opt> = match kind {
        "simple" => vec![("nodes", false), ("mtu", false), ("dhcp", false)],
        "vlan" => vec![
            ("nodes", false),
            ("bridge", true),
            ("bridge-disable-mac-learning", false),
            ("mtu", false),
        ],
        "qinq" => vec![
            ("nodes", false),
            ("tag", true),
            ("bridge", true),
            ("bridge-disable-mac-learning", false),
            ("mtu", false),
            ("vlan-protocol", false),
        ],
        "vxlan" => {
            let mut v = vec![
                ("nodes", false),
                ("peers", !version.is_v9()),
                ("vxlan-port", false),
                ("mtu", false),
            ];
            if version.is_v9() {
                v.push(("fabric", false));
            }
            v
        }
        "evpn" => vec![
            ("nodes", false),
            ("vrf-vxlan", true),
            ("controller", true),
            ("exitnodes", false),
            ("exitnodes-local-routing", false),
            ("exitnodes-primary", false),
            ("advertise-subnets", false),
            ("disable-arp-nd-suppression", false),
            ("bridge-disable-mac-learning", false),
            ("rt-import", false),
            ("vxlan-port", false),
            ("mtu", false),
            ("mac", false),
        ]
        .into_iter()
        .chain((version == PveVersion::V9_2).then_some(("secondary-controllers", false)))
        .collect(),
        "faucet" => vec![("nodes", false), ("dp-id", true), ("controller", true)],
        _ => return None,
    };
    o.extend(DNS_OPTS);
    Some(o)
}

/// The options of a VNet.
pub fn vnet_options() -> Vec<Opt> {
    vec![
        ("zone", true),
        ("tag", false),
        ("alias", false),
        ("vlanaware", false),
        ("isolate-ports", false),
    ]
}

/// The options of a subnet.
pub fn subnet_options() -> Vec<Opt> {
    vec![
        ("vnet", true),
        ("gateway", false),
        ("snat", false),
        ("dnszoneprefix", false),
        ("dhcp-range", false),
        ("dhcp-dns-server", false),
    ]
}

/// The route maps a 9.2 evpn or bgp controller may apply to the routes
/// it receives and sends.
const ROUTE_MAPS: [Opt; 2] = [("route-map-in", false), ("route-map-out", false)];

/// The options of a controller type: 9.2 gives evpn controllers the
/// nodes they run on, their peer group, BGP mode and eBGP hops, and evpn
/// and bgp controllers route maps.
pub fn controller_options(version: PveVersion, kind: &str) -> Option<Vec<Opt>> {
    let v9_2 = version == PveVersion::V9_2;
    Some(match kind {
        "evpn" if v9_2 => {
            let mut o = vec![("asn", true), ("peers", false), ("fabric", false)];
            o.extend(ROUTE_MAPS);
            o.extend([
                ("nodes", false),
                ("peer-group-name", false),
                ("ebgp-multihop", false),
                ("bgp-mode", false),
            ]);
            o
        }
        "evpn" if version.is_v9() => vec![("asn", true), ("peers", false), ("fabric", false)],
        "evpn" => vec![("asn", true), ("peers", true)],
        "bgp" => {
            let mut o = vec![
                ("node", true),
                ("asn", true),
                ("peers", true),
                ("bgp-multipath-as-path-relax", false),
                ("ebgp", false),
                ("ebgp-multihop", false),
                ("loopback", false),
            ];
            if v9_2 {
                o.extend(ROUTE_MAPS);
            }
            o
        }
        "isis" => vec![
            ("isis-domain", true),
            ("isis-net", true),
            ("isis-ifaces", true),
            ("node", true),
            ("loopback", false),
        ],
        "faucet" => vec![],
        _ => return None,
    })
}

/// The options of an IPAM type.
pub fn ipam_options(kind: &str) -> Option<Vec<Opt>> {
    Some(match kind {
        "pve" => vec![],
        "netbox" => vec![("url", true), ("token", true), ("fingerprint", false)],
        "phpipam" => vec![
            ("url", true),
            ("token", true),
            ("section", true),
            ("fingerprint", false),
        ],
        _ => return None,
    })
}

/// The options of a DNS plugin type.
pub fn dns_options(kind: &str) -> Option<Vec<Opt>> {
    Some(match kind {
        "powerdns" => vec![
            ("url", true),
            ("key", true),
            ("ttl", false),
            ("reversemaskv6", false),
            ("fingerprint", false),
        ],
        _ => return None,
    })
}

/// A parameter's value as the configuration keeps it: integers and
/// booleans as numbers, lists as arrays of strings, the rest as text.
fn stored(key: &str, v: &Value) -> Value {
    let text = super::text(v);
    match kind(key) {
        Kind::Int => text.parse::<i64>().map_or(Value::String(text), Value::from),
        Kind::Bool => match v {
            Value::Bool(b) => Value::from(i64::from(*b)),
            _ => Value::from(i64::from(matches!(
                text.to_ascii_lowercase().as_str(),
                "1" | "on" | "yes" | "true"
            ))),
        },
        Kind::List => match v {
            Value::Array(a) => {
                Value::Array(a.iter().map(|x| Value::String(super::text(x))).collect())
            }
            _ => Value::Array(
                text.split('\0')
                    .filter(|s| !s.is_empty())
                    .map(|s| Value::String(s.to_string()))
                    .collect(),
            ),
        },
        Kind::Str => Value::String(text),
    }
}

/// A zone's `nodes` and `exitnodes` as the zone plugins' `decode_value`
/// and `encode_value` write them: the names sorted, each once, joined by
/// commas. (A 9.2 evpn controller keeps its `nodes` as given: the
/// controller plugins have no such hooks.)
pub fn zone_node_lists(zone: &mut Obj) {
    for key in ["nodes", "exitnodes"] {
        if let Some(v) = zone.get_mut(key) {
            let text = super::text(v);
            let mut nodes: Vec<&str> = text
                .split([',', ';', ' '])
                .filter(|s| !s.is_empty())
                .collect();
            nodes.sort_unstable();
            nodes.dedup();
            *v = Value::String(nodes.join(","));
        }
    }
}

/// `SectionConfig::check_config`: every parameter must be an option of
/// the type (`unexpected property`), and on create every required option
/// must be given. Answers the options as the configuration keeps them.
///
/// # Errors
/// `unexpected property '<k>'`, `missing value for required option '<k>'`.
pub fn check_config(opts: &[Opt], params: &BTreeMap<String, Value>, create: bool) -> Result<Obj> {
    let mut out = Obj::new();
    for (k, v) in params {
        if !opts.iter().any(|(o, _)| o == k) {
            return Err(Error::failed(format!("unexpected property '{k}'")));
        }
        out.insert(k.clone(), stored(k, v));
    }
    if create {
        for (k, required) in opts {
            if *required && !params.contains_key(*k) {
                return Err(Error::failed(format!(
                    "missing value for required option '{k}'"
                )));
            }
        }
    }
    Ok(out)
}

/// `SectionConfig::delete_from_config`: removes the options in `delete`.
///
/// # Errors
/// `no such option`, `unable to delete required option`, `cannot set and
/// delete property ... at the same time!`.
pub fn delete_from_config(
    section: &mut Obj,
    opts: &[Opt],
    new: &Obj,
    delete: &[String],
) -> Result<()> {
    for k in delete {
        let Some((_, required)) = opts.iter().find(|(o, _)| o == k) else {
            return Err(Error::failed(format!("no such option '{k}'")));
        };
        if *required {
            return Err(Error::failed(format!(
                "unable to delete required option '{k}'"
            )));
        }
        if new.contains_key(k) {
            return Err(Error::failed(format!(
                "cannot set and delete property '{k}' at the same time!"
            )));
        }
        section.remove(k);
    }
    Ok(())
}

/// The parameters of a call without those the handler takes out
/// (`extract_param`) before checking the rest against the options.
pub fn option_params(
    params: &BTreeMap<String, Value>,
    extracted: &[&str],
) -> BTreeMap<String, Value> {
    params
        .iter()
        .filter(|(k, _)| !extracted.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}
