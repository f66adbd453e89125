//! `corosync.conf` as pve-cluster reads it for `/cluster/config`
//! (`PVE/API2/ClusterConfig.pm`, `PVE/Corosync.pm`): the node list, the
//! totem section and the join information, made from the members; and
//! `POST /cluster/config` turning a standalone node into a one-node
//! cluster (`create_conf`).
//!
//! What `create` was given (links, votes, the token coefficient) is
//! kept here; a scenario's cluster is read as PVE's defaults write it
//! (one link per node at the node's address, one vote each).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::qemu::sha1_hex;
use super::{Cluster, Error, Result};

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

impl Cluster {
    /// The links of a member: those `create` was given for the node
    /// that made the cluster, else link 0 at the node's address.
    fn links_of(&self, node: &str) -> BTreeMap<u32, Link> {
        let first = self.nodes.iter().next().map(|n| n.name.as_str());
        if first == Some(node) && !self.corosync.links.is_empty() {
            return self.corosync.links.clone();
        }
        let ip = self
            .nodes
            .get(node)
            .map(|n| n.ip.clone())
            .unwrap_or_default();
        BTreeMap::from([(
            0,
            Link {
                address: ip,
                priority: None,
            },
        )])
    }

    /// A member's entry of the node list as `parse_conf` reads it: text
    /// values.
    fn corosync_node(&self, n: &super::Node) -> Value {
        let mut v = json!({
            "name": n.name,
            "nodeid": n.nodeid.to_string(),
            "quorum_votes": self.corosync.votes.get(&n.name).copied().unwrap_or(1).to_string(),
        });
        for (i, l) in self.links_of(&n.name) {
            v[format!("ring{i}_addr")] = json!(l.address);
        }
        v
    }

    /// The totem section (`None` for a standalone node).
    pub fn totem_view(&self) -> Option<Value> {
        let name = self.nodes.cluster_name()?;
        let first = self
            .nodes
            .iter()
            .next()
            .map(|n| n.name.clone())
            .unwrap_or_default();
        let mut interface = serde_json::Map::new();
        for (i, l) in self.links_of(&first) {
            let mut e = json!({ "linknumber": i.to_string() });
            if let Some(p) = l.priority {
                e["knet_link_priority"] = json!(p.to_string());
            }
            interface.insert(i.to_string(), e);
        }
        let mut t = json!({
            "cluster_name": name,
            "config_version": self.nodes.len().to_string(),
            "interface": interface,
            "ip_version": "ipv4-6",
            "link_mode": "passive",
            "secauth": "on",
            "version": "2",
        });
        let coefficient = self
            .corosync
            .token_coefficient
            .or_else(|| self.version.is_v9().then_some(125));
        if let Some(c) = coefficient {
            t["token_coefficient"] = json!(c.to_string());
        }
        Some(t)
    }

    /// `corosync.conf` as written (for its digest).
    fn corosync_text(&self) -> String {
        let mut out = String::from("logging {\n  debug: off\n  to_syslog: yes\n}\n\nnodelist {\n");
        for n in self.nodes.iter() {
            out.push_str(&format!(
                "  node {{\n    name: {}\n    nodeid: {}\n    quorum_votes: {}\n",
                n.name,
                n.nodeid,
                self.corosync.votes.get(&n.name).copied().unwrap_or(1)
            ));
            for (i, l) in self.links_of(&n.name) {
                out.push_str(&format!("    ring{i}_addr: {}\n", l.address));
            }
            out.push_str("  }\n");
        }
        out.push_str("}\n\nquorum {\n  provider: corosync_votequorum\n}\n\n");
        if let Some(t) = self.totem_view() {
            out.push_str(&format!("totem {t}\n"));
        }
        out
    }

    /// `GET /cluster/config/nodes`: `[]` on a standalone node.
    pub fn corosync_nodes_view(&self) -> Vec<Value> {
        if self.nodes.cluster_name().is_none() {
            return Vec::new();
        }
        let mut rows: Vec<Value> = self
            .nodes
            .iter()
            .map(|n| {
                let mut v = self.corosync_node(n);
                v["node"] = json!(n.name);
                v
            })
            .collect();
        rows.sort_by(|a, b| a["node"].as_str().cmp(&b["node"].as_str()));
        rows
    }

    /// `GET /cluster/config/join`: what a node needs to join through
    /// `node` (the local node unless given).
    ///
    /// # Errors
    /// 424 `node is not in a cluster, no join info available!`;
    /// `unknown node 'x'`.
    pub fn join_info(&self, node: Option<&str>) -> Result<Value> {
        let Some(totem) = self.totem_view() else {
            return Err(Error::FailedDependency(
                "node is not in a cluster, no join info available!".into(),
            ));
        };
        let node = node.unwrap_or_else(|| self.nodes.local()).to_string();
        if !self.nodes.contains(&node) {
            return Err(Error::failed(format!("unknown node '{node}'")));
        }
        let nodelist: Vec<Value> = self
            .nodes
            .iter()
            .map(|n| {
                let mut v = self.corosync_node(n);
                v["pve_fp"] = json!(n.ssl_fingerprint);
                v["pve_addr"] = json!(n.ip);
                v
            })
            .collect();
        Ok(json!({
            "nodelist": nodelist,
            "preferred_node": node,
            "totem": totem,
            "config_digest": sha1_hex(self.corosync_text().as_bytes()),
        }))
    }

    /// `POST /cluster/config` on the local node: a standalone node
    /// becomes the one member of a new cluster (node id 1 unless given).
    ///
    /// # Errors
    /// `cluster config '/etc/pve/corosync.conf' already exists` on a
    /// member of a cluster.
    pub fn create_cluster(&mut self, p: &CreateCluster) -> Result<()> {
        if self.nodes.cluster_name().is_some() {
            return Err(Error::failed(
                "cluster config '/etc/pve/corosync.conf' already exists",
            ));
        }
        let local = self.nodes.local().to_string();
        self.nodes
            .form_cluster(&p.clustername, p.nodeid.unwrap_or(1));
        self.corosync.links.clone_from(&p.links);
        if let Some(v) = p.votes.filter(|v| *v != 1) {
            self.corosync.votes.insert(local, v);
        }
        self.corosync.token_coefficient = if self.version.is_v9() {
            Some(p.token_coefficient.unwrap_or(125))
        } else {
            None
        };
        Ok(())
    }
}
