//! `corosync.conf` as pve-cluster reads it for `/cluster/config`
//! (`PVE/API2/ClusterConfig.pm`, `PVE/Corosync.pm`): the node list, the
//! totem section and the join information, made from the members; and
//! `POST /cluster/config` turning a standalone node into a one-node
//! cluster (`create_conf`); `DELETE /cluster/config/nodes/{node}`
//! taking a member out of the node list (`delnode`).
//!
//! What `create` was given (links, votes, the token coefficient) is
//! kept here; a scenario's cluster is read as PVE's defaults write it
//! (one link per node at the node's address, one vote each).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::nodes::{Node, Nodes};
use super::qemu::sha1_hex;
use super::{Error, PveVersion, Result};

/// The cluster join API version (`PVE::Cluster::Setup::JOIN_API_VERSION`).
pub const JOIN_API_VERSION: u32 = 1;

/// A link of `create`: its address and priority.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// `ringN_addr`.
    pub address: String,
    /// `knet_link_priority`, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<u64>,
}

/// What `create` wrote beyond PVE's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Corosync {
    /// The links of the node that made the cluster, by number.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    links: BTreeMap<u32, Link>,
    /// `quorum_votes` other than 1, by node.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    votes: BTreeMap<String, u64>,
    /// `token_coefficient`, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    token_coefficient: Option<u64>,
}

impl Corosync {
    /// Whether nothing beyond the defaults is kept.
    pub fn is_empty(&self) -> bool {
        self.links.is_empty() && self.votes.is_empty() && self.token_coefficient.is_none()
    }
}

/// The parameters of `POST /cluster/config`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CreateCluster {
    /// `clustername`.
    pub clustername: String,
    /// `nodeid` (1 unless given).
    pub nodeid: Option<u32>,
    /// `votes` (1 unless given).
    pub votes: Option<u64>,
    /// `linkN` by number.
    pub links: BTreeMap<u32, Link>,
    /// 9.x `token-coefficient` (125 unless given).
    pub token_coefficient: Option<u64>,
}

/// A link of the totem section's `interface`: `linknumber` and, when set,
/// `knet_link_priority` (text, as `parse_conf` reads them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Interface {
    /// The link's number.
    pub linknumber: String,
    /// Its priority, when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub knet_link_priority: Option<String>,
}

/// The totem section as `parse_conf` reads it: text values, in the
/// order `corosync.conf` is read back (its JSON is part of the text the
/// config digest is taken of).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Totem {
    /// `cluster_name`.
    pub cluster_name: String,
    /// `config_version` (the member count).
    pub config_version: String,
    /// The links by number.
    pub interface: BTreeMap<u32, Interface>,
    /// `ip_version`.
    pub ip_version: &'static str,
    /// `link_mode`.
    pub link_mode: &'static str,
    /// `secauth`.
    pub secauth: &'static str,
    /// `version`.
    pub version: &'static str,
    /// `token_coefficient`, when written (always on 9.x).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_coefficient: Option<String>,
}

/// A member's entry of the node list.
#[derive(Debug, Clone)]
pub struct Member<'a> {
    /// The node.
    pub node: &'a Node,
    /// Its `quorum_votes`.
    pub votes: u64,
    /// Its links by number (`ringN_addr`).
    pub links: BTreeMap<u32, Link>,
}

/// What `GET /cluster/config/join` answers.
#[derive(Debug, Clone)]
pub struct JoinInfo<'a> {
    /// Every member, in the node list's order.
    pub nodelist: Vec<Member<'a>>,
    /// The node to join through.
    pub preferred_node: String,
    /// The totem section.
    pub totem: Totem,
    /// The SHA-1 of `corosync.conf`.
    pub config_digest: String,
}

/// The links of a member: those `create` was given for the node that
/// made the cluster, else link 0 at the node's address.
fn links_of(nodes: &Nodes, corosync: &Corosync, node: &str) -> BTreeMap<u32, Link> {
    let first = nodes.iter().next().map(|n| n.name.as_str());
    if first == Some(node) && !corosync.links.is_empty() {
        return corosync.links.clone();
    }
    let ip = nodes.get(node).map(|n| n.ip.clone()).unwrap_or_default();
    BTreeMap::from([(
        0,
        Link {
            address: ip,
            priority: None,
        },
    )])
}

/// A member's entry of the node list.
fn member<'a>(nodes: &Nodes, corosync: &Corosync, n: &'a Node) -> Member<'a> {
    Member {
        node: n,
        votes: corosync.votes.get(&n.name).copied().unwrap_or(1),
        links: links_of(nodes, corosync, &n.name),
    }
}

/// The totem section (`None` for a standalone node).
pub fn totem(nodes: &Nodes, corosync: &Corosync, version: &PveVersion) -> Option<Totem> {
    let name = nodes.cluster_name()?;
    let first = nodes
        .iter()
        .next()
        .map(|n| n.name.clone())
        .unwrap_or_default();
    let interface = links_of(nodes, corosync, &first)
        .into_iter()
        .map(|(i, l)| {
            let e = Interface {
                linknumber: i.to_string(),
                knet_link_priority: l.priority.map(|p| p.to_string()),
            };
            (i, e)
        })
        .collect();
    let coefficient = corosync
        .token_coefficient
        .or_else(|| version.is_v9().then_some(125));
    Some(Totem {
        cluster_name: name.to_string(),
        config_version: nodes.len().to_string(),
        interface,
        ip_version: "ipv4-6",
        link_mode: "passive",
        secauth: "on",
        version: "2",
        token_coefficient: coefficient.map(|c| c.to_string()),
    })
}

/// `corosync.conf` as written (for its digest).
fn corosync_text(nodes: &Nodes, corosync: &Corosync, version: &PveVersion) -> String {
    let mut out = String::from("logging {\n  debug: off\n  to_syslog: yes\n}\n\nnodelist {\n");
    for n in nodes.iter() {
        out.push_str(&format!(
            "  node {{\n    name: {}\n    nodeid: {}\n    quorum_votes: {}\n",
            n.name,
            n.nodeid,
            corosync.votes.get(&n.name).copied().unwrap_or(1)
        ));
        for (i, l) in links_of(nodes, corosync, &n.name) {
            out.push_str(&format!("    ring{i}_addr: {}\n", l.address));
        }
        out.push_str("  }\n");
    }
    out.push_str("}\n\nquorum {\n  provider: corosync_votequorum\n}\n\n");
    if let Some(t) = totem(nodes, corosync, version) {
        let t = serde_json::to_string(&t).unwrap_or_default();
        out.push_str(&format!("totem {t}\n"));
    }
    out
}

/// `GET /cluster/config/nodes`: the members sorted by name, none on a
/// standalone node.
pub fn members<'a>(nodes: &'a Nodes, corosync: &Corosync) -> Vec<Member<'a>> {
    if nodes.cluster_name().is_none() {
        return Vec::new();
    }
    let mut rows: Vec<Member<'a>> = nodes.iter().map(|n| member(nodes, corosync, n)).collect();
    rows.sort_by(|a, b| a.node.name.cmp(&b.node.name));
    rows
}

/// `GET /cluster/config/join`: what a node needs to join through `node`
/// (the local node unless given).
///
/// # Errors
/// 424 `node is not in a cluster, no join info available!`;
/// `unknown node 'x'`.
pub fn join_info<'a>(
    nodes: &'a Nodes,
    corosync: &Corosync,
    version: &PveVersion,
    node: Option<&str>,
) -> Result<JoinInfo<'a>> {
    let Some(totem) = totem(nodes, corosync, version) else {
        return Err(Error::FailedDependency(
            "node is not in a cluster, no join info available!".into(),
        ));
    };
    let node = node.unwrap_or_else(|| nodes.local()).to_string();
    if !nodes.contains(&node) {
        return Err(Error::failed(format!("unknown node '{node}'")));
    }
    let nodelist = nodes.iter().map(|n| member(nodes, corosync, n)).collect();
    Ok(JoinInfo {
        nodelist,
        preferred_node: node,
        totem,
        config_digest: sha1_hex(corosync_text(nodes, corosync, version).as_bytes()),
    })
}

/// `POST /cluster/config` on the local node: a standalone node becomes
/// the one member of a new cluster (node id 1 unless given).
///
/// # Errors
/// `cluster config '/etc/pve/corosync.conf' already exists` on a member
/// of a cluster.
pub fn create(
    nodes: &mut Nodes,
    corosync: &mut Corosync,
    version: &PveVersion,
    p: &CreateCluster,
) -> Result<()> {
    if nodes.cluster_name().is_some() {
        return Err(Error::failed(
            "cluster config '/etc/pve/corosync.conf' already exists",
        ));
    }
    let local = nodes.local().to_string();
    nodes.form_cluster(&p.clustername, p.nodeid.unwrap_or(1));
    corosync.links.clone_from(&p.links);
    if let Some(v) = p.votes.filter(|v| *v != 1) {
        corosync.votes.insert(local, v);
    }
    corosync.token_coefficient = if version.is_v9() {
        Some(p.token_coefficient.unwrap_or(125))
    } else {
        None
    };
    Ok(())
}

/// `DELETE /cluster/config/nodes/{node}` on the local node: the member
/// named `node` (by name or by its link 0 or link 1 address) leaves the
/// node list; answers its name. Nothing else goes: as on PVE, its
/// guests' configs stay (`/etc/pve/nodes/<node>` is kept).
///
/// # Errors
/// `Cannot delete myself from cluster!` for the local node; `cluster
/// not ready - no quorum?` without quorum; `Node/IP: x is not a known
/// host of the cluster.` for anything else (every name on a standalone
/// node).
pub fn delnode(nodes: &mut Nodes, corosync: &mut Corosync, node: &str) -> Result<String> {
    if node == nodes.local() {
        return Err(Error::failed("Cannot delete myself from cluster!"));
    }
    if !nodes.quorate() {
        return Err(Error::failed("cluster not ready - no quorum?"));
    }
    let found = members(nodes, corosync).into_iter().find(|m| {
        m.node.name == node
            || [0, 1]
                .iter()
                .any(|i| m.links.get(i).is_some_and(|l| l.address == node))
    });
    let Some(name) = found.map(|m| m.node.name.clone()) else {
        return Err(Error::failed(format!(
            "Node/IP: {node} is not a known host of the cluster."
        )));
    };
    let first = nodes.iter().next().is_some_and(|n| n.name == name);
    if first {
        // The links `create` was given were the removed node's.
        corosync.links.clear();
    }
    corosync.votes.remove(&name);
    nodes.remove(&name);
    Ok(name)
}
