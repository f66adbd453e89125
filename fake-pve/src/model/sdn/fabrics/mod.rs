//! The SDN fabrics of PVE 9.x (`sdn/fabrics.cfg`), as pve-network's
//! `API2/Network/SDN/Fabrics*.pm` hand them to the Rust crate
//! proxmox-ve-config (`sdn/fabric/`): OpenFabric and OSPF fabrics, each
//! with its nodes (a node of the cluster, its router IP and its
//! interfaces), 9.2's WireGuard fabrics, whose nodes are internal
//! (WireGuard interfaces with generated keys, and their peers) or
//! external ([`super::wireguard`]), and 9.2's BGP fabrics (no node can
//! be added to one through 9.2's API); OSPF and BGP fabrics redistribute
//! other protocols' routes (9.2).
//!
//! The configuration is a tree (fabric, then its nodes) that is checked
//! as a whole before it is written (`FabricConfig::validate`): prefixes
//! that overlap across fabrics, one OSPF area per fabric, an interface
//! of a node in one fabric only, node IPs inside the fabric's prefix and
//! unique in it, what each protocol requires (a WireGuard interface on a
//! node once, on a port of its own, and peers that name interfaces and
//! nodes of the fabric). Changes are pending until `PUT /cluster/sdn`
//! applies them, as for zones and VNets.
//!
//! Nothing is generated from them (no FRR, no `interfaces.d`, no
//! WireGuard configuration); what FRR would report for a node of an
//! applied fabric is derived in [`status`].
//!
//! The whole-file checks are in [`validate`], the fabric writes in
//! [`writes`], the node writes in [`nodes`].

mod nodes;
mod status;
mod validate;
mod writes;

pub use status::{FabricInterface, Neighbor, Route};

use std::collections::BTreeMap;
use std::net::IpAddr;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::net::Cidr;
use super::wireguard::{self, Role};
use super::{Entry, Listing, Obj, Sdn, Section, Shown, View, pending_config, text, wrapped};
use crate::model::{Error, Result};

/// The parameters of a call, by name (as the wire hands them over).
pub type Params = BTreeMap<String, Value>;

/// A fabric's routing protocol (`pve-sdn-fabric-protocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// OpenFabric (IS-IS based, IPv4 and IPv6).
    Openfabric,
    /// OSPFv2 (IPv4 only).
    Ospf,
    /// WireGuard tunnels between the nodes (9.2).
    Wireguard,
    /// eBGP over the nodes' interfaces (9.2).
    Bgp,
}

impl Protocol {
    /// The protocol of a call's `protocol` parameter, refused as serde
    /// refuses an unknown tag (the 9.1 schema refuses `wireguard` and
    /// `bgp` before the model is asked).
    fn of(p: &Params) -> Result<Self> {
        match p.get("protocol").map(text).as_deref() {
            Some("openfabric") => Ok(Protocol::Openfabric),
            Some("ospf") => Ok(Protocol::Ospf),
            Some("wireguard") => Ok(Protocol::Wireguard),
            Some("bgp") => Ok(Protocol::Bgp),
            Some(other) => Err(Error::failed(format!(
                "unknown variant `{other}`, expected one of `openfabric`, `ospf`, `wireguard`, `bgp`"
            ))),
            None => Err(Error::failed("missing field `protocol`")),
        }
    }
}

/// A node of a fabric (`NodeSection`): its router IPs and interfaces;
/// a WireGuard node's role and what the role has.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Node {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ip: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ip6: Option<String>,
    /// Property strings, in the crate's key order.
    #[serde(default)]
    interfaces: Vec<String>,
    /// A WireGuard node's role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    role: Option<Role>,
    /// An external WireGuard node's public key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    public_key: Option<String>,
    /// A WireGuard node's endpoint (an internal node's host, an external
    /// node's host and port).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    endpoint: Option<String>,
    /// An internal WireGuard node's peers (property strings).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    peers: Vec<String>,
    /// The networks routed via a WireGuard node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    allowed_ips: Vec<String>,
}

/// A fabric (`FabricSection`) and its nodes by node name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Fabric {
    protocol: Protocol,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ip_prefix: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ip6_prefix: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hello_interval: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    csnp_interval: Option<u16>,
    /// The OSPF area as written (a number or dotted quad).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    area: Option<String>,
    /// The prefix list that filters the routes installed (9.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    route_filter: Option<String>,
    /// A WireGuard fabric's keepalive interval in seconds (0 is off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    persistent_keepalive: Option<u16>,
    /// The routes an OSPF or BGP fabric redistributes (9.2): property
    /// strings `source=<protocol>[,route-map=<id>]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    redistribute: Vec<String>,
    #[serde(default)]
    nodes: BTreeMap<String, Node>,
}

/// The fabrics configuration (`sdn/fabrics.cfg`, or its copy in the
/// running configuration): fabrics by ID.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Fabrics {
    fabrics: BTreeMap<String, Fabric>,
}

/// A fabric as proxmox-ve-config's `api::Fabric` serializes it (what
/// PVE's handlers get and compare), its members in the type's order.
#[derive(Serialize)]
struct FabricApi<'a> {
    protocol: Protocol,
    id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    ip_prefix: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ip6_prefix: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hello_interval: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    csnp_interval: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    area: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    route_filter: Option<&'a str>,
    /// Left out when empty.
    #[serde(skip_serializing_if = "no_items")]
    redistribute: &'a [String],
    /// Left out when off (`persistent_keepalive_is_off`).
    #[serde(skip_serializing_if = "Option::is_none")]
    persistent_keepalive: Option<u16>,
}

/// What a WireGuard node has after its role: an external node's public
/// key and endpoint, an internal node's endpoint, interfaces and peers
/// (each left out when empty), the allowed networks of both.
#[derive(Serialize)]
struct WireGuardApi<'a> {
    role: Role,
    #[serde(skip_serializing_if = "Option::is_none")]
    public_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    endpoint: Option<&'a str>,
    #[serde(skip_serializing_if = "no_items")]
    interfaces: &'a [String],
    #[serde(skip_serializing_if = "no_items")]
    peers: &'a [String],
    #[serde(skip_serializing_if = "no_items")]
    allowed_ips: &'a [String],
}

/// What a node has after its IPs: the interfaces of an OpenFabric or
/// OSPF node (always there), or a WireGuard node's members.
#[derive(Serialize)]
#[serde(untagged)]
enum NodeProps<'a> {
    Interfaces { interfaces: &'a [String] },
    WireGuard(WireGuardApi<'a>),
}

impl<'a> NodeProps<'a> {
    fn of(protocol: Protocol, n: &'a Node) -> Self {
        match (protocol, n.role) {
            (Protocol::Wireguard, Some(role)) => NodeProps::WireGuard(WireGuardApi {
                role,
                public_key: n.public_key.as_deref(),
                endpoint: n.endpoint.as_deref(),
                interfaces: &n.interfaces,
                peers: &n.peers,
                allowed_ips: &n.allowed_ips,
            }),
            _ => NodeProps::Interfaces {
                interfaces: &n.interfaces,
            },
        }
    }
}

/// `Vec::is_empty` for a borrowed list.
fn no_items(v: &&[String]) -> bool {
    v.is_empty()
}

/// A node as `api::Node` serializes it.
#[derive(Serialize)]
struct NodeApi<'a> {
    protocol: Protocol,
    fabric_id: &'a str,
    node_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    ip: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ip6: Option<&'a str>,
    #[serde(flatten)]
    props: NodeProps<'a>,
}

/// A node as the configuration's digest serializes it (`NodeSection`:
/// its section id is `<fabric>_<node>`).
#[derive(Serialize)]
struct NodeSection<'a> {
    protocol: Protocol,
    id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    ip: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ip6: Option<&'a str>,
    #[serde(flatten)]
    props: NodeProps<'a>,
}

/// A fabric's entry as the digest serializes it: its protocol's
/// variant around the fabric and its nodes.
#[derive(Serialize)]
enum FabricEntry<'a> {
    Openfabric {
        fabric: FabricApi<'a>,
        nodes: BTreeMap<&'a str, NodeSection<'a>>,
    },
    Ospf {
        fabric: FabricApi<'a>,
        nodes: BTreeMap<&'a str, NodeSection<'a>>,
    },
    WireGuard {
        fabric: FabricApi<'a>,
        nodes: BTreeMap<&'a str, NodeSection<'a>>,
    },
    Bgp {
        fabric: FabricApi<'a>,
        nodes: BTreeMap<&'a str, NodeSection<'a>>,
    },
}

/// The members of a serialized value, by name (what PVE's handlers
/// compare for the pending view).
fn record(v: &impl Serialize) -> Obj {
    match serde_json::to_value(v) {
        Ok(Value::Object(m)) => m.into_iter().collect(),
        _ => Obj::new(),
    }
}

impl Fabric {
    /// The fabric as the API type holds it: an OpenFabric fabric's
    /// intervals, an OSPF fabric's area, a WireGuard fabric's keepalive
    /// (unless off), what an OSPF or BGP fabric redistributes.
    fn api<'a>(&'a self, id: &'a str) -> FabricApi<'a> {
        let openfabric = self.protocol == Protocol::Openfabric;
        let wireguard = self.protocol == Protocol::Wireguard;
        FabricApi {
            protocol: self.protocol,
            id,
            ip_prefix: self.ip_prefix.as_deref(),
            ip6_prefix: self.ip6_prefix.as_deref(),
            hello_interval: self.hello_interval.filter(|_| openfabric),
            csnp_interval: self.csnp_interval.filter(|_| openfabric),
            area: (self.protocol == Protocol::Ospf)
                .then(|| self.area.as_deref().unwrap_or_default()),
            route_filter: self.route_filter.as_deref().filter(|_| !wireguard),
            persistent_keepalive: self.persistent_keepalive.filter(|k| wireguard && *k != 0),
            redistribute: if self.redistributes() {
                &self.redistribute
            } else {
                &[]
            },
        }
    }

    /// A node as the API type holds it.
    fn node_api<'a>(&self, fabric: &'a str, id: &'a str, n: &'a Node) -> NodeApi<'a> {
        NodeApi {
            protocol: self.protocol,
            fabric_id: fabric,
            node_id: id,
            ip: n.ip.as_deref(),
            ip6: n.ip6.as_deref(),
            props: NodeProps::of(self.protocol, n),
        }
    }

    /// Whether the protocol has `redistribute` (OSPF and BGP).
    fn redistributes(&self) -> bool {
        matches!(self.protocol, Protocol::Ospf | Protocol::Bgp)
    }

    fn v4(&self) -> Option<Cidr> {
        self.ip_prefix.as_deref().and_then(Cidr::parse)
    }

    fn v6(&self) -> Option<Cidr> {
        self.ip6_prefix.as_deref().and_then(Cidr::parse)
    }
}

/// `assert_if_modified`.
pub(super) fn check_digest(current: &str, p: &Params) -> Result<()> {
    match p.get("digest").map(text) {
        Some(d) if !d.is_empty() && d != current => Err(Error::conflict(
            "detected modified configuration - file changed by other user? Try again.",
        )),
        _ => Ok(()),
    }
}

pub(super) fn opt(p: &Params, k: &str) -> Option<String> {
    p.get(k).map(text).filter(|v| !v.is_empty())
}

/// The values of a list parameter (a single value is a list of one).
pub(super) fn list(p: &Params, k: &str) -> Vec<String> {
    match p.get(k) {
        Some(Value::Array(a)) => a.iter().map(text).collect(),
        Some(v) => vec![text(v)],
        None => Vec::new(),
    }
}

/// A CIDR of one family (`Ipv4Cidr`, `Ipv6Cidr`).
fn cidr(v: &str, v4: bool) -> Result<Cidr> {
    Cidr::parse(v).filter(|c| c.is_v4() == v4).ok_or_else(|| {
        Error::failed(format!(
            "invalid {} CIDR '{v}'",
            if v4 { "IPv4" } else { "IPv6" }
        ))
    })
}

/// The text of a CIDR as the crate prints it: the address as given (in
/// its canonical form), or the network address when `canonical`.
fn cidr_text(c: Cidr, canonical: bool) -> String {
    let addr = if canonical {
        c.addr_of(c.network())
    } else {
        c.addr
    };
    format!("{addr}/{}", c.prefix)
}

/// An address of one family, in its canonical text.
fn addr(v: &str, v4: bool) -> Result<String> {
    v.parse::<IpAddr>()
        .ok()
        .filter(|a| a.is_ipv4() == v4)
        .map(|a| a.to_string())
        .ok_or_else(|| Error::failed(format!("invalid IP address syntax '{v}'")))
}

/// An interface property string in the crate's key order (`name`,
/// `hello_multiplier`, `ip`, `ip6`, an OSPF interface's 9.2
/// `network_type`; a BGP interface has its name only), its values as
/// the crate prints them. The schema has checked the keys and formats.
fn interface(proto: Protocol, v: &str) -> Result<String> {
    let mut kv: BTreeMap<&str, &str> = BTreeMap::new();
    for part in v.split(',').filter(|s| !s.is_empty()) {
        let (k, val) = part.split_once('=').unwrap_or(("name", part));
        kv.insert(k, val);
    }
    let name = kv
        .get("name")
        .ok_or_else(|| Error::failed("missing field `name`"))?;
    let mut out = vec![format!("name={name}")];
    if proto == Protocol::Openfabric
        && let Some(m) = kv.get("hello_multiplier")
    {
        out.push(format!("hello_multiplier={m}"));
    }
    if proto != Protocol::Bgp
        && let Some(ip) = kv.get("ip")
    {
        out.push(format!("ip={}", cidr_text(cidr(ip, true)?, false)));
    }
    if proto == Protocol::Openfabric
        && let Some(ip) = kv.get("ip6")
    {
        out.push(format!("ip6={}", cidr_text(cidr(ip, false)?, false)));
    }
    if proto == Protocol::Ospf
        && let Some(t) = kv.get("network_type")
    {
        out.push(format!("network_type={t}"));
    }
    Ok(out.join(","))
}

/// The interface name of a property string.
fn interface_name(v: &str) -> &str {
    v.split(',')
        .find_map(|p| p.strip_prefix("name="))
        .unwrap_or_default()
}

impl Fabrics {
    /// Whether no fabric is configured.
    pub fn is_empty(&self) -> bool {
        self.fabrics.is_empty()
    }

    /// `digest`: the SHA-256 of the configuration as the crate
    /// serializes it (`{"<id>": {"Openfabric": {"fabric": ..., "nodes":
    /// ...}}}`, the members in the order of its types' fields).
    pub fn digest(&self) -> String {
        let root: BTreeMap<&str, FabricEntry<'_>> = self
            .fabrics
            .iter()
            .map(|(id, f)| {
                let nodes = f
                    .nodes
                    .iter()
                    .map(|(nid, n)| {
                        let section = NodeSection {
                            protocol: f.protocol,
                            id: format!("{id}_{nid}"),
                            ip: n.ip.as_deref(),
                            ip6: n.ip6.as_deref(),
                            props: NodeProps::of(f.protocol, n),
                        };
                        (nid.as_str(), section)
                    })
                    .collect();
                let fabric = f.api(id);
                let entry = match f.protocol {
                    Protocol::Openfabric => FabricEntry::Openfabric { fabric, nodes },
                    Protocol::Ospf => FabricEntry::Ospf { fabric, nodes },
                    Protocol::Wireguard => FabricEntry::WireGuard { fabric, nodes },
                    Protocol::Bgp => FabricEntry::Bgp { fabric, nodes },
                };
                (id.as_str(), entry)
            })
            .collect();
        let data = serde_json::to_vec(&root).unwrap_or_default();
        hex::encode(Sha256::digest(&data))
    }

    /// `get_fabric`.
    fn get(&self, id: &str) -> Result<&Fabric> {
        self.fabrics.get(id).ok_or_else(|| no_fabric(id))
    }

    fn get_mut(&mut self, id: &str) -> Result<&mut Fabric> {
        self.fabrics.get_mut(id).ok_or_else(|| no_fabric(id))
    }

    /// The fabric whose `route_filter` is the prefix list `id`
    /// (`PrefixLists::check_references`).
    pub fn route_filter_user(&self, id: &str) -> Option<&str> {
        self.fabrics
            .iter()
            .find(|(_, f)| f.route_filter.as_deref() == Some(id))
            .map(|(fid, _)| fid.as_str())
    }

    /// The `(node, interface)` pairs of the internal WireGuard nodes,
    /// whose private keys an apply keeps.
    pub fn wireguard_interfaces(&self) -> Vec<(String, String)> {
        self.fabrics
            .values()
            .filter(|f| f.protocol == Protocol::Wireguard)
            .flat_map(|f| {
                f.nodes.iter().flat_map(|(nid, n)| {
                    n.interfaces
                        .iter()
                        .map(|i| (nid.clone(), wireguard::Interface::of(i).name))
                })
            })
            .collect()
    }

    /// `list_fabrics`: the fabrics by ID.
    pub fn fabrics(&self) -> Section {
        self.fabrics
            .iter()
            .map(|(id, f)| (id.clone(), record(&f.api(id))))
            .collect()
    }

    /// `list_nodes`: the nodes of every fabric keyed by node name, as
    /// PVE keys them (a node in two fabrics shows once, from the fabric
    /// whose ID sorts last).
    pub fn nodes(&self) -> Section {
        let mut out = Section::new();
        for (id, f) in &self.fabrics {
            for (nid, n) in &f.nodes {
                out.insert(nid.clone(), record(&f.node_api(id, nid, n)));
            }
        }
        out
    }

    /// `list_all`'s nodes: keyed by `<fabric>_<node>`.
    pub fn all_nodes(&self) -> Section {
        let mut out = Section::new();
        for (id, f) in &self.fabrics {
            for (nid, n) in &f.nodes {
                out.insert(format!("{id}_{nid}"), record(&f.node_api(id, nid, n)));
            }
        }
        out
    }

    /// `list_nodes_fabric`.
    ///
    /// # Errors
    /// `fabric '<id>' does not exist in configuration`.
    pub fn fabric_nodes(&self, fabric: &str) -> Result<Section> {
        let f = self.get(fabric)?;
        Ok(f.nodes
            .iter()
            .map(|(nid, n)| (nid.clone(), record(&f.node_api(fabric, nid, n))))
            .collect())
    }

    /// The node names of a fabric.
    fn node_names(&self, fabric: &str) -> Result<Vec<String>> {
        Ok(self.get(fabric)?.nodes.keys().cloned().collect())
    }
}

/// `FabricDoesNotExist`.
fn no_fabric(id: &str) -> Error {
    Error::failed(format!("fabric '{id}' does not exist in configuration"))
}

/// `NodeDoesNotExist`.
fn no_node(node: &str, fabric: &str) -> Error {
    Error::failed(format!("node '{node}' does not exist in fabric '{fabric}'"))
}

/// `ProtocolMismatch` (the crate says "node" for fabrics too).
fn mismatch() -> Error {
    Error::failed("node has a different protocol than the referenced fabric")
}

impl Sdn {
    fn running_fabrics(&self) -> Fabrics {
        self.running
            .as_ref()
            .map(|r| r.fabrics.clone())
            .unwrap_or_default()
    }

    /// Lists by view: `f` picks the sections from a configuration; the
    /// pending view compares the running configuration's with the
    /// current one's (`pending_config`). The lists show the digest of
    /// `fabrics.cfg`, but for the running view.
    fn fabric_view(&self, view: View, f: impl Fn(&Fabrics) -> Result<Section>) -> Result<Listing> {
        let of = |s: Section| s.into_iter().map(|(id, o)| (id, Entry::of(o))).collect();
        Ok(match view {
            View::Current => Listing {
                items: of(f(&self.fabrics)?),
                digest: Some(self.fabrics.digest()),
            },
            View::Running => Listing {
                items: of(f(&self.running_fabrics())?),
                digest: None,
            },
            View::Pending => {
                let running = f(&self.running_fabrics())?;
                let current = f(&self.fabrics)?;
                Listing {
                    items: pending_config(&running, &current),
                    digest: Some(self.fabrics.digest()),
                }
            }
        })
    }

    /// `GET /cluster/sdn/fabrics/fabric`: the fabrics by ID.
    ///
    /// # Errors
    /// None in practice (the signature is shared with the other lists).
    pub fn fabrics_index(&self, view: View) -> Result<Listing> {
        self.fabric_view(view, |c| Ok(c.fabrics()))
    }

    /// `GET /cluster/sdn/fabrics/node`: the nodes by node name.
    ///
    /// # Errors
    /// None in practice.
    pub fn fabric_nodes_index(&self, view: View) -> Result<Listing> {
        self.fabric_view(view, |c| Ok(c.nodes()))
    }

    /// `GET /cluster/sdn/fabrics/all`: fabrics and nodes (by
    /// `<fabric>_<node>`).
    ///
    /// # Errors
    /// None in practice.
    pub fn fabrics_all(&self, view: View) -> Result<(Listing, Listing)> {
        Ok((
            self.fabric_view(view, |c| Ok(c.fabrics()))?,
            self.fabric_view(view, |c| Ok(c.all_nodes()))?,
        ))
    }

    /// `GET /cluster/sdn/fabrics/node/{fabric_id}`: a fabric's nodes.
    ///
    /// # Errors
    /// `fabric '<id>' does not exist in configuration` (in the running
    /// configuration too, for `running` and `pending`).
    pub fn fabric_node_list(&self, fabric: &str, view: View) -> Result<Listing> {
        self.fabric_view(view, |c| c.fabric_nodes(fabric))
    }

    /// The names of a fabric's nodes (none for an unknown fabric).
    pub fn fabric_node_names(&self, fabric: &str) -> Vec<String> {
        self.fabrics.node_names(fabric).unwrap_or_default()
    }

    /// `GET /cluster/sdn/fabrics/fabric/{id}`, with the digest.
    ///
    /// # Errors
    /// `fabric '<id>' does not exist in configuration`.
    pub fn get_fabric(&self, id: &str) -> Result<Shown> {
        let values = record(&self.fabrics.get(id)?.api(id));
        Ok(Shown {
            entry: Entry::of(values),
            digest: Some(self.fabrics.digest()),
        })
    }

    /// `GET /cluster/sdn/fabrics/node/{fabric_id}/{node_id}`, with the
    /// digest.
    ///
    /// # Errors
    /// An unknown fabric or node.
    pub fn get_fabric_node(&self, fabric: &str, node: &str) -> Result<Shown> {
        let f = self.fabrics.get(fabric)?;
        let n = f.nodes.get(node).ok_or_else(|| no_node(node, fabric))?;
        Ok(Shown {
            entry: Entry::of(record(&f.node_api(fabric, node, n))),
            digest: Some(self.fabrics.digest()),
        })
    }

    /// Runs a change of `fabrics.cfg` as PVE does: under the global
    /// lock's token, the digest checked, the whole configuration
    /// validated before it is written, refusals after `errmsg`.
    fn fabrics_write(
        &mut self,
        errmsg: &str,
        p: &Params,
        change: impl FnOnce(&mut Fabrics) -> Result<()>,
    ) -> Result<()> {
        let run = |me: &mut Self| -> Result<()> {
            me.check_token(opt(p, "lock-token").as_deref())?;
            check_digest(&me.fabrics.digest(), p)?;
            let mut next = me.fabrics.clone();
            change(&mut next)?;
            next.validate()?;
            me.fabrics = next;
            Ok(())
        };
        run(self).map_err(|e| wrapped(errmsg, e))
    }
}
