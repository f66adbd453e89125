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
//!   pools:                  # a name, or {name, size, min_size, pg_num,
//!     - vm                  #   pg_num_min, application, storage}
//!     - { name: data, size: 2, storage: true }   # storage: an rbd storage
//!   osds:                   # on a disk of the node's hardware
//!     - { node: pve1, disk: /dev/sdb }           # class, up, in, encrypted
//!   filesystems: [cephfs]   # CephFS with its pools, a running MDS each
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
    /// The pools.
    #[serde(default)]
    pub pools: Vec<PoolSpec>,
    /// The OSDs, in id order.
    #[serde(default)]
    pub osds: Vec<OsdSpec>,
    /// The CephFS file systems (with `<name>_data` and `<name>_metadata`
    /// pools), each served by a running metadata server.
    #[serde(default)]
    pub filesystems: Vec<String>,
}

/// An OSD on a disk of a node's hardware.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OsdSpec {
    /// The node.
    pub node: String,
    /// Its disk (`/dev/sdb`), unused in the node's hardware.
    pub disk: String,
    /// The crush device class; the disk's kind when not given.
    #[serde(default)]
    pub class: Option<String>,
    /// Whether its service runs (default: it does).
    #[serde(default = "yes")]
    pub up: bool,
    /// Whether it takes data (default: it does).
    #[serde(default = "yes", rename = "in")]
    pub is_in: bool,
    /// Made with `--dmcrypt`.
    #[serde(default)]
    pub encrypted: bool,
}

/// A pool: its name (PVE's defaults), or its settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum PoolSpec {
    /// The name.
    Name(String),
    /// Name and settings.
    Full {
        /// The name.
        name: String,
        /// Replicas (3).
        #[serde(default)]
        size: Option<u32>,
        /// Replicas needed for writes (2).
        #[serde(default)]
        min_size: Option<u32>,
        /// Placement groups (128).
        #[serde(default)]
        pg_num: Option<u32>,
        /// The autoscaler's floor.
        #[serde(default)]
        pg_num_min: Option<u32>,
        /// `rbd` (default), `cephfs` or `rgw`.
        #[serde(default)]
        application: Option<String>,
        /// `on`, `off` or `warn` (default).
        #[serde(default)]
        pg_autoscale_mode: Option<String>,
        /// Adds an `rbd` storage named after the pool, as
        /// `add_storages=1` does.
        #[serde(default)]
        storage: bool,
    },
}

impl PoolSpec {
    /// The name, the settings PVE's create applies, and whether a
    /// storage goes with it.
    fn parts(&self) -> (String, Vec<(String, String)>, bool) {
        let (name, size, min_size, pg_num, pg_num_min, app, mode, storage) = match self {
            Self::Name(n) => (n.clone(), None, None, None, None, None, None, false),
            Self::Full {
                name,
                size,
                min_size,
                pg_num,
                pg_num_min,
                application,
                pg_autoscale_mode,
                storage,
            } => (
                name.clone(),
                *size,
                *min_size,
                *pg_num,
                *pg_num_min,
                application.clone(),
                pg_autoscale_mode.clone(),
                *storage,
            ),
        };
        let mut s = vec![
            ("size".to_string(), size.unwrap_or(3).to_string()),
            ("min_size".to_string(), min_size.unwrap_or(2).to_string()),
            ("pg_num".to_string(), pg_num.unwrap_or(128).to_string()),
            (
                "application".to_string(),
                app.unwrap_or_else(|| "rbd".into()),
            ),
            (
                "pg_autoscale_mode".to_string(),
                mode.unwrap_or_else(|| "warn".into()),
            ),
        ];
        if let Some(n) = pg_num_min {
            s.push(("pg_num_min".into(), n.to_string()));
        }
        (name, s, storage)
    }
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
            spec.network.is_some()
                || spec.fsid.is_some()
                || daemons
                || !spec.flags.is_empty()
                || !spec.pools.is_empty()
                || !spec.osds.is_empty()
                || !spec.filesystems.is_empty(),
        );
        if !inited {
            if daemons
                || !spec.flags.is_empty()
                || !spec.pools.is_empty()
                || !spec.osds.is_empty()
                || !spec.filesystems.is_empty()
            {
                return Err(err(
                    "daemons, flags, pools and OSDs need an initialised cluster".into(),
                ));
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
        let mut rq = crate::model::Context::new(now * 1000, seed ^ 0x006f_7364);
        for o in &spec.osds {
            if !nodes.contains(&o.node) {
                return Err(err(format!("node '{}' has no Ceph packages", o.node)));
            }
            let hw = cluster.hardware.node_mut(&o.node);
            let (dev, path) = hw
                .verify_blockdev_path(&o.disk)
                .map_err(|e| err(format!("OSD on '{}': {e}", o.disk)))?;
            let (used, size, kind) = match dev {
                crate::model::node_hw::disks::Dev::Disk(i) => {
                    let d = &hw.disks()[i];
                    (d.is_used(), d.size, d.kind)
                }
                crate::model::node_hw::disks::Dev::Part(i, j) => {
                    let d = &hw.disks()[i];
                    (
                        d.partitions[j].usage().is_some(),
                        d.partitions[j].size,
                        d.kind,
                    )
                }
            };
            if used {
                return Err(err(format!("OSD on '{path}': the device is in use")));
            }
            let class = o.class.clone().unwrap_or_else(|| match kind.as_str() {
                "usb" => "hdd".into(),
                k => k.into(),
            });
            let new = crate::model::ceph::NewOsd {
                devpath: path.clone(),
                size,
                class,
                encrypted: o.encrypted,
                uuid: rq.uuid_v4(),
                vg_uuid: rq.uuid_v4(),
                ..Default::default()
            };
            hw.ceph_osd_create(&path, &format!("ceph-{}", new.vg_uuid))
                .map_err(|e| err(format!("OSD on '{path}': {e}")))?;
            cluster
                .ceph
                .declare_osd(&o.node, &new, o.up, o.is_in, now * 1000)
                .map_err(err)?;
        }
        for p in &spec.pools {
            let (name, settings, storage) = p.parts();
            if name.is_empty() || name.contains([':', '/']) || name.contains(char::is_whitespace) {
                return Err(err(format!("invalid pool name '{name}'")));
            }
            cluster
                .ceph
                .declare_pool(&name, &settings)
                .map_err(|e| err(format!("pool '{name}': {e}")))?;
            if storage {
                cluster
                    .storage
                    .create(&crate::model::ceph::pools::rbd_storage(&name))
                    .map_err(|e| err(format!("pool '{name}': {e}")))?;
            }
        }
        let running = cluster.ceph.mdss().iter().filter(|m| m.running).count();
        if spec.filesystems.len() > running {
            return Err(err(format!(
                "{} file systems need as many running metadata servers ({running} declared)",
                spec.filesystems.len()
            )));
        }
        for f in &spec.filesystems {
            cluster
                .ceph
                .declare_fs(f, 128)
                .map_err(|e| err(format!("file system '{f}': {e}")))?;
        }
        Ok(())
    }
}
