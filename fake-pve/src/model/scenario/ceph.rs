//! A scenario's `ceph:`: which nodes have the packages of which release,
//! whether the cluster is initialised (networks, fsid), its monitors,
//! managers and metadata servers by node, and the OSD map's flags.
//!
//! ```yaml
//! ceph:
//!   release: squid          # quincy, reef, squid, tentacle
//!   nodes: [pve1]           # default: every node
//!   network: 10.0.0.0/24    # initialises the cluster
//!   mons: [pve1]            # a node name, or {id, node, running}
//!   mgrs: [pve1]
//!   flags: [noout]
//! ```

use serde::Deserialize;

use super::{Scenario, ScenarioError};
use crate::model::ceph::{DaemonKind, InitOptions, OSD_FLAGS, Release};
use crate::model::cluster::Cluster;

/// The `ceph:` key.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CephSpec {
    /// The release installed (`squid`).
    pub release: String,
    /// Its point version; the newest Proxmox ships when not given.
    #[serde(default)]
    pub version: Option<String>,
    /// The nodes with the packages; every node when not given.
    #[serde(default)]
    pub nodes: Option<Vec<String>>,
    /// Whether `pveceph init` ran; implied by a network, an fsid or a
    /// daemon.
    #[serde(default)]
    pub initialised: Option<bool>,
    /// The public network.
    #[serde(default)]
    pub network: Option<String>,
    /// A separate cluster network.
    #[serde(default, rename = "cluster-network", alias = "cluster_network")]
    pub cluster_network: Option<String>,
    /// The cluster's fsid; drawn when not given.
    #[serde(default)]
    pub fsid: Option<String>,
    /// The monitors.
    #[serde(default)]
    pub mons: Vec<DaemonSpec>,
    /// The managers.
    #[serde(default)]
    pub mgrs: Vec<DaemonSpec>,
    /// The metadata servers.
    #[serde(default)]
    pub mdss: Vec<DaemonSpec>,
    /// OSD map flags PVE offers (`noout`, `pause`, ...).
    #[serde(default)]
    pub flags: Vec<String>,
}

/// A daemon: the node it runs on (its id is the node's name), or all of
/// it.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum DaemonSpec {
    /// The node.
    Node(String),
    /// Id, node, and whether it runs (default: it does).
    Full {
        /// The id; the node's name when not given.
        #[serde(default)]
        id: Option<String>,
        /// The node.
        node: String,
        /// Whether it runs.
        #[serde(default = "yes")]
        running: bool,
    },
}

fn yes() -> bool {
    true
}

impl DaemonSpec {
    fn parts(&self) -> (String, &str, bool) {
        match self {
            Self::Node(n) => (n.clone(), n, true),
            Self::Full { id, node, running } => {
                (id.clone().unwrap_or_else(|| node.clone()), node, *running)
            }
        }
    }
}

impl Scenario {
    /// Puts the scenario's Ceph into `cluster`.
    pub(super) fn build_ceph(
        &self,
        cluster: &mut Cluster,
        now: i64,
        seed: u64,
    ) -> Result<(), ScenarioError> {
        let Some(spec) = &self.ceph else {
            return Ok(());
        };
        let err = |reason: String| self.err("ceph", format!("ceph: {reason}"));
        let release = Release::parse(&spec.release).ok_or_else(|| {
            err(format!(
                "unknown release '{}' (quincy, reef, squid, tentacle)",
                spec.release
            ))
        })?;
        let names: Vec<String> = cluster
            .nodes()
            .members()
            .iter()
            .map(|n| n.name.clone())
            .collect();
        let nodes = spec.nodes.clone().unwrap_or_else(|| names.clone());
        let ceph = &mut cluster.ceph;
        for n in &nodes {
            if !names.contains(n) {
                return Err(err(format!("unknown node '{n}'")));
            }
            ceph.install(n, release, spec.version.as_deref());
        }
        let daemons = !spec.mons.is_empty() || !spec.mgrs.is_empty() || !spec.mdss.is_empty();
        let inited = spec.initialised.unwrap_or(
            spec.network.is_some() || spec.fsid.is_some() || daemons || !spec.flags.is_empty(),
        );
        if !inited {
            if daemons || !spec.flags.is_empty() {
                return Err(err("daemons and flags need an initialised cluster".into()));
            }
            return Ok(());
        }
        let Some(first) = nodes.first() else {
            return Err(err("no node has the packages".into()));
        };
        let fsid = spec.fsid.clone().unwrap_or_else(|| {
            let mut rq = crate::model::Context::new(now * 1000, seed);
            rq.uuid_v4()
        });
        let opts = InitOptions {
            network: spec.network.clone(),
            cluster_network: spec.cluster_network.clone(),
            ..Default::default()
        };
        if opts.cluster_network.is_some() && opts.network.is_none() {
            return Err(err("cluster-network needs network".into()));
        }
        ceph.init(first, &opts, &fsid)
            .map_err(|e| err(e.to_string()))?;
        for (kind, list) in [
            (DaemonKind::Mon, &spec.mons),
            (DaemonKind::Mgr, &spec.mgrs),
            (DaemonKind::Mds, &spec.mdss),
        ] {
            for d in list {
                let (id, node, running) = d.parts();
                let Some(member) = cluster.nodes.get(node) else {
                    return Err(err(format!("unknown node '{node}'")));
                };
                if !nodes.iter().any(|n| n == node) {
                    return Err(err(format!("node '{node}' has no Ceph packages")));
                }
                let addr = member.ip.clone();
                let ceph = &mut cluster.ceph;
                ceph.declare(kind, &id, node, &addr, running).map_err(err)?;
                ceph.link(node);
            }
        }
        let ceph = &mut cluster.ceph;
        for f in &spec.flags {
            if !OSD_FLAGS.contains(&f.as_str()) {
                return Err(err(format!(
                    "unknown flag '{f}' ({})",
                    OSD_FLAGS.join(", ")
                )));
            }
            ceph.set_flag(f, true);
        }
        ceph.declare_created(now * 1000);
        Ok(())
    }
}
