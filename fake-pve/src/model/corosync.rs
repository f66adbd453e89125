//! `corosync.conf` as pve-cluster reads it for `/cluster/config`
//! (`PVE/API2/ClusterConfig.pm`, `PVE/Corosync.pm`): the node list, the
//! totem section and the join information, made from the members; and
//! `POST /cluster/config` turning a standalone node into a one-node
//! cluster (`create_conf`); `DELETE /cluster/config/nodes/{node}`
//! taking a member out of the node list (`delnode`) and putting one in
//! (`addnode`).
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
    /// The links of the nodes `addnode` added, by node.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    node_links: BTreeMap<String, BTreeMap<u32, Link>>,
}

impl Corosync {
    /// Whether nothing beyond the defaults is kept.
    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
            && self.votes.is_empty()
            && self.token_coefficient.is_none()
            && self.node_links.is_empty()
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

/// The links of a member: those `addnode` was given for it, those
/// `create` was given for the node that made the cluster, else link 0 at the node's address.
fn links_of(nodes: &Nodes, corosync: &Corosync, node: &str) -> BTreeMap<u32, Link> {
    if let Some(links) = corosync.node_links.get(node) {
        return links.clone();
    }
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

/// `corosync.conf` as `write_conf` writes it (for its digest, and as
/// `addnode` answers it): each section's keys sorted, the nodes sorted by
/// name, the totem's interfaces by link number, a blank line after each
/// top-level section.
pub fn corosync_text(nodes: &Nodes, corosync: &Corosync, version: &PveVersion) -> String {
    let mut out = String::from("logging {\n  debug: off\n  to_syslog: yes\n}\n\nnodelist {\n");
    let mut sorted: Vec<&Node> = nodes.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    for n in sorted {
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
        out.push_str(&format!(
            "totem {{\n  cluster_name: {}\n  config_version: {}\n",
            t.cluster_name, t.config_version
        ));
        for i in t.interface.values() {
            out.push_str("  interface {\n");
            if let Some(p) = &i.knet_link_priority {
                out.push_str(&format!("    knet_link_priority: {p}\n"));
            }
            out.push_str(&format!("    linknumber: {}\n  }}\n", i.linknumber));
        }
        out.push_str(&format!(
            "  ip_version: {}\n  link_mode: {}\n  secauth: {}\n",
            t.ip_version, t.link_mode, t.secauth
        ));
        if let Some(c) = &t.token_coefficient {
            out.push_str(&format!("  token_coefficient: {c}\n"));
        }
        out.push_str(&format!("  version: {}\n}}\n\n", t.version));
    }
    out
}

/// A node of `corosync.conf`'s node list, as `parse_conf` reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfNode {
    /// `name`.
    pub name: String,
    /// `nodeid`.
    pub nodeid: u32,
    /// `quorum_votes` (1 when absent).
    pub votes: u64,
    /// `ringN_addr` by N.
    pub links: BTreeMap<u32, String>,
}

/// What a joining node reads of the `corosync.conf` the cluster answered
/// (`parse_conf`): the cluster's name, the node list and the totem's
/// links.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CorosyncConf {
    /// `totem.cluster_name`.
    pub cluster_name: String,
    /// The node list, in the file's order.
    pub nodes: Vec<ConfNode>,
    /// The totem's interfaces: link number to `knet_link_priority`.
    pub interfaces: BTreeMap<u32, Option<u64>>,
    /// `totem.token_coefficient`, when set.
    pub token_coefficient: Option<u64>,
}

/// A section of `corosync.conf`: its `key: value` pairs and its
/// subsections in order.
#[derive(Debug, Default)]
struct Section {
    values: BTreeMap<String, String>,
    children: Vec<(String, Section)>,
}

impl Section {
    fn child(&self, name: &str) -> Option<&Section> {
        self.children
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s)
    }

    fn children<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Section> + 'a {
        self.children
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, s)| s)
    }
}

/// `parse_conf`: `corosync.conf`'s sections and `key: value` pairs
/// (comments dropped), then the cluster's name, nodes and links.
///
/// # Errors
/// `parse_conf`'s messages (`missing ':' after key 'x'`, `parse error -
/// uncexpected '}'`, `parse error - no value for 'x'`) and `invalid
/// corosync.conf` when it names no cluster or a node without name or id.
pub fn parse_conf(text: &str) -> Result<CorosyncConf> {
    let cleaned: String = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join(" ");
    let tokens: Vec<&str> = cleaned.split_whitespace().collect();
    let mut stack: Vec<(String, Section)> = vec![(String::new(), Section::default())];
    let mut i = 0;
    while i < tokens.len() {
        let token = tokens[i];
        if tokens.get(i + 1) == Some(&"{") {
            stack.push((token.to_string(), Section::default()));
            i += 2;
            continue;
        }
        if token == "}" {
            if stack.len() < 2 {
                return Err(Error::failed("parse error - uncexpected '}'"));
            }
            let Some((name, done)) = stack.pop() else {
                return Err(Error::failed("parse error - uncexpected '}'"));
            };
            if let Some((_, parent)) = stack.last_mut() {
                parent.children.push((name, done));
            }
            i += 1;
            continue;
        }
        let Some(key) = token.strip_suffix(':') else {
            return Err(Error::failed(format!("missing ':' after key '{token}'")));
        };
        let Some(value) = tokens.get(i + 1) else {
            return Err(Error::failed(format!("parse error - no value for '{key}'")));
        };
        if let Some((_, s)) = stack.last_mut() {
            s.values.insert(key.to_string(), (*value).to_string());
        }
        i += 2;
    }
    let main = match stack.pop() {
        Some((_, main)) if stack.is_empty() => main,
        _ => return Err(Error::failed("invalid corosync.conf")),
    };
    let invalid = || Error::failed("invalid corosync.conf");
    let totem = main.child("totem").ok_or_else(invalid)?;
    let cluster_name = totem
        .values
        .get("cluster_name")
        .ok_or_else(invalid)?
        .clone();
    let mut nodes = Vec::new();
    for n in main
        .child("nodelist")
        .into_iter()
        .flat_map(|l| l.children("node"))
    {
        let name = n
            .values
            .get("name")
            .or_else(|| n.values.get("ring0_addr"))
            .ok_or_else(invalid)?;
        let nodeid = n
            .values
            .get("nodeid")
            .and_then(|v| v.parse().ok())
            .ok_or_else(invalid)?;
        let votes = n
            .values
            .get("quorum_votes")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1);
        let links = n
            .values
            .iter()
            .filter_map(|(k, v)| {
                let i = k
                    .strip_prefix("ring")?
                    .strip_suffix("_addr")?
                    .parse()
                    .ok()?;
                Some((i, v.clone()))
            })
            .collect();
        nodes.push(ConfNode {
            name: name.clone(),
            nodeid,
            votes,
            links,
        });
    }
    let interfaces = totem
        .children("interface")
        .filter_map(|i| {
            let n = i
                .values
                .get("linknumber")
                .or_else(|| i.values.get("ringnumber"))?
                .parse()
                .ok()?;
            let priority = i
                .values
                .get("knet_link_priority")
                .and_then(|p| p.parse().ok());
            Some((n, priority))
        })
        .collect();
    Ok(CorosyncConf {
        cluster_name,
        nodes,
        interfaces,
        token_coefficient: totem
            .values
            .get("token_coefficient")
            .and_then(|c| c.parse().ok()),
    })
}

impl Corosync {
    /// What a node that joined keeps of the cluster's `corosync.conf`:
    /// the links of `first` (the first member in node list order) with
    /// the totem's priorities, every other member's links, the votes
    /// other than 1 and the token coefficient.
    pub fn from_conf(conf: &CorosyncConf, first: &str) -> Self {
        let mut out = Self {
            token_coefficient: conf.token_coefficient,
            ..Self::default()
        };
        for n in &conf.nodes {
            if n.votes != 1 {
                out.votes.insert(n.name.clone(), n.votes);
            }
            let links: BTreeMap<u32, Link> = n
                .links
                .iter()
                .map(|(i, a)| {
                    let priority = (n.name == first)
                        .then(|| conf.interfaces.get(i).copied().flatten())
                        .flatten();
                    let link = Link {
                        address: a.clone(),
                        priority,
                    };
                    (*i, link)
                })
                .collect();
            if n.name == first {
                out.links = links;
            } else {
                out.node_links.insert(n.name.clone(), links);
            }
        }
        out
    }
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
    corosync.node_links.remove(&name);
    nodes.remove(&name);
    Ok(name)
}

/// The highest link number corosync knows (`MAX_LINK_INDEX`).
const MAX_LINK: u32 = 7;

/// The parameters of `POST /cluster/config/nodes/{node}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddNode {
    /// `node`: the name of the node to add.
    pub node: String,
    /// `nodeid` (the lowest free one unless given).
    pub nodeid: Option<u32>,
    /// `votes` (1 unless given).
    pub votes: Option<u64>,
    /// `linkN` by number.
    pub links: BTreeMap<u32, Link>,
    /// `new_node_ip`: link 0's address on a one-link cluster.
    pub new_node_ip: Option<String>,
    /// `force`: overwrite the entry of a node already listed.
    pub force: bool,
    /// `apiversion`: the joining node's join API version (0 unless given).
    pub apiversion: Option<i64>,
}

/// `POST /cluster/config/nodes/{node}` on the local node: `node` enters
/// the node list (offline until it has joined) with the links given, the
/// lowest free node id unless one is given and one vote unless told;
/// answers the warnings of `verify_conf` (none: every address here is an
/// IP address).
///
/// # Errors
/// PVE's refusals, in its order: `error: unsupported old API version on
/// joining node (v), ...`; `cluster not ready - no quorum?`; `invalid
/// corosync.conf` on a standalone node; `corosync: address 'a' already
/// used on link ringN_addr by node 'x'`; `corosync: link N exists in
/// cluster config but wasn't specified for new node` and the reverse;
/// `no links and no fallback ip (new_node_ip) given, cannot join
/// cluster`; `no links given but multiple links found on other nodes,
/// ...`; `can't add existing node 'x'` unless `force` with its votes and
/// node id.
pub fn addnode(
    nodes: &mut Nodes,
    corosync: &mut Corosync,
    p: &AddNode,
    now: i64,
) -> Result<Vec<String>> {
    let apiversion = p.apiversion.unwrap_or(0);
    let min = i64::from(JOIN_API_VERSION) - 1;
    if apiversion < min {
        return Err(Error::failed(format!(
            "error: unsupported old API version on joining node ({apiversion}), cluster node has {JOIN_API_VERSION} and supports >= {min}. Please upgrade node before joining"
        )));
    }
    if !nodes.quorate() {
        return Err(Error::failed("cluster not ready - no quorum?"));
    }
    if nodes.cluster_name().is_none() {
        return Err(Error::failed("invalid corosync.conf"));
    }
    let name = p.node.as_str();
    let listed: Vec<(String, u32, u64, BTreeMap<u32, Link>)> = nodes
        .iter()
        .map(|n| {
            let m = member(nodes, corosync, n);
            (n.name.clone(), n.nodeid, m.votes, m.links)
        })
        .collect();
    for link in p.links.values() {
        for (k, _, _, links) in listed.iter().filter(|(k, ..)| k != name) {
            if let Some(n) = links.iter().find(|(_, l)| l.address == link.address) {
                return Err(Error::failed(format!(
                    "corosync: address '{}' already used on link ring{}_addr by node '{k}'",
                    link.address, n.0
                )));
            }
        }
    }
    let cluster_links: Vec<u32> = listed
        .first()
        .map(|(.., l)| l.keys().copied().collect())
        .unwrap_or_default();
    let mut links = p.links.clone();
    let mut fallback = p.new_node_ip.clone().filter(|ip| !ip.is_empty());
    let mut legacy = false;
    if fallback.is_none() && links.len() == 1 && apiversion == 0 {
        fallback = links.pop_first().map(|(_, l)| l.address);
        legacy = true;
    }
    if links.is_empty() {
        let Some(ip) = fallback else {
            return Err(Error::failed(
                "no links and no fallback ip (new_node_ip) given, cannot join cluster",
            ));
        };
        match cluster_links.as_slice() {
            [n] => {
                links.insert(
                    *n,
                    Link {
                        address: ip,
                        priority: None,
                    },
                );
            }
            more if legacy => {
                return Err(Error::failed(format!(
                    "cluster has {} links, but only 1 given",
                    more.len()
                )));
            }
            _ => {
                return Err(Error::failed(
                    "no links given but multiple links found on other nodes, fallback only supported on single-link clusters",
                ));
            }
        }
    } else {
        for n in 0..=MAX_LINK {
            match (cluster_links.contains(&n), links.contains_key(&n)) {
                (true, false) => {
                    return Err(Error::failed(format!(
                        "corosync: link {n} exists in cluster config but wasn't specified for new node"
                    )));
                }
                (false, true) => {
                    return Err(Error::failed(format!(
                        "corosync: link {n} specified for new node doesn't exist in cluster config"
                    )));
                }
                _ => {}
            }
        }
    }
    // Links carry no priority in the node list.
    for l in links.values_mut() {
        l.priority = None;
    }
    let existing = listed.iter().find(|(k, ..)| k == name);
    let (nodeid, votes) = if let Some((_, id, v, _)) = existing {
        let nodeid = p.nodeid.unwrap_or(*id);
        let votes = p.votes.unwrap_or(*v);
        if !(votes == *v && nodeid == *id && p.force) {
            return Err(Error::failed(format!("can't add existing node '{name}'")));
        }
        (nodeid, votes)
    } else {
        let nodeid = p.nodeid.unwrap_or_else(|| {
            (1..)
                .find(|id| !listed.iter().any(|(_, n, ..)| n == id))
                .unwrap_or(1)
        });
        (nodeid, p.votes.unwrap_or(1))
    };
    if votes == 1 || votes == 0 {
        corosync.votes.remove(name);
    } else {
        corosync.votes.insert(name.to_string(), votes);
    }
    let ip = links
        .values()
        .next()
        .map(|l| l.address.clone())
        .unwrap_or_default();
    corosync.node_links.insert(name.to_string(), links);
    if existing.is_none() {
        nodes.add(Node::joining(name, nodeid, &ip, now));
    }
    Ok(Vec::new())
}

/// The `corosync_authkey` `addnode` answers: a stand-in for
/// `/etc/corosync/authkey`, the same for every node of a cluster.
pub fn authkey(nodes: &Nodes) -> String {
    let name = nodes.cluster_name().map_or("", String::as_str);
    sha1_hex(format!("corosync authkey {name}").as_bytes())
}
