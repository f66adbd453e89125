//! Cluster members and what PVE reports about them.

use serde::{Deserialize, Serialize};

use super::PveVersion;

/// Whether a member answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum NodeStatus {
    /// Up and in the quorum.
    #[default]
    Online,
    /// Down: its calls fail as PVE's proxy fails to reach it.
    Offline,
}

/// One cluster member.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Node {
    /// The node name (`pve`).
    pub name: String,
    /// corosync node id (1-based in a cluster, 0 for a standalone node).
    pub nodeid: u32,
    /// The address PVE lists in `/cluster/status`.
    pub ip: String,
    /// Online or offline.
    pub status: NodeStatus,
    /// Logical CPUs.
    pub cpus: u32,
    /// CPU sockets.
    pub sockets: u32,
    /// CPU model name as `/proc/cpuinfo` gives it.
    pub cpu_model: String,
    /// Memory in bytes.
    pub memory: u64,
    /// Root file system size in bytes.
    pub rootfs: u64,
    /// Swap size in bytes.
    pub swap: u64,
    /// Subscription level: `""`, `c`, `b`, `s` or `p`.
    pub level: String,
    /// Boot time, epoch seconds (uptime is measured from it).
    pub boot_time: i64,
    /// SHA-256 fingerprint of the node certificate, colon-separated.
    pub ssl_fingerprint: String,
    /// Linux bridges on the node (`vmbr0`).
    pub bridges: Vec<String>,
    /// Physical NICs in their order (`eno1`, `eno2` when none are
    /// given).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nics: Vec<String>,
    /// While the node is down: when it is back online (epoch
    /// milliseconds), after a reboot or a wake-on-LAN; none while it is
    /// up or shut down for good.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub back_at_ms: Option<i64>,
}

const GIB: u64 = 1 << 30;

/// Memory the host itself uses, before any guest.
const BASE_MEM_USED: u64 = 1_288_490_188;

impl Node {
    /// A node added to the node list by `addnode` (`pvecm addnode`):
    /// offline until it has joined, with a fresh install's hardware.
    pub fn joining(name: &str, nodeid: u32, ip: &str, now: i64) -> Self {
        let fp = super::scenario::fake_fingerprint(name);
        Self {
            name: name.to_string(),
            nodeid,
            ip: ip.to_string(),
            status: NodeStatus::Offline,
            cpus: 8,
            sockets: 1,
            cpu_model: "Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz".into(),
            memory: 32 * GIB,
            rootfs: 100 * GIB,
            swap: 8 * GIB,
            level: String::new(),
            boot_time: now,
            ssl_fingerprint: fp,
            bridges: vec!["vmbr0".into()],
            nics: Vec::new(),
            back_at_ms: None,
        }
    }

    /// Seconds since boot at `now`.
    pub fn uptime(&self, now: i64) -> i64 {
        (now - self.boot_time).max(0)
    }

    /// Memory in use, given the memory of the running guests on the node.
    pub fn mem_used(&self, guest_mem: u64) -> u64 {
        (BASE_MEM_USED + guest_mem).min(self.memory)
    }

    /// Root file system bytes in use.
    pub fn rootfs_used(&self) -> u64 {
        self.rootfs / 8
    }

    /// CPU load fraction given the number of running guests.
    pub fn cpu_load(&self, running: usize) -> f64 {
        let load = 0.003 + 0.01 * running as f64 / f64::from(self.cpus.max(1));
        (load * 10_000.0).round() / 10_000.0
    }
}

/// The running kernel's build (`uname -v`) of a release's nodes; its
/// release (`uname -r`) is [`super::node_hw::catalog::kernel_release`].
pub fn kernel_build(version: PveVersion) -> &'static str {
    super::node_hw::catalog::kernel_build(version)
}

/// The cluster's members: its name (none for a standalone node), the
/// node clients connect to, and every member in `nodelist` order.
#[derive(Debug, Clone, Default)]
pub struct Nodes {
    cluster: Option<String>,
    local: String,
    members: Vec<Node>,
}

impl Nodes {
    /// The node a node-scoped call names, as PVE's proxy resolves it:
    /// `localhost` and the local name are local, another member is
    /// proxied to (and fails if it is offline), anything else fails the
    /// host name lookup.
    ///
    /// # Errors
    /// 500 for an unknown name, 595 for an offline member.
    pub fn reach(&self, name: &str) -> super::Result<&Node> {
        let name = if name == "localhost" {
            self.local()
        } else {
            name
        };
        let Some(node) = self.iter().find(|n| n.name == name) else {
            return Err(super::Error::failed(format!(
                "hostname lookup '{name}' failed - failed to get address info for: {name}: Name or service not known"
            )));
        };
        if node.status == NodeStatus::Offline {
            return Err(super::Error::Unreachable("No route to host".into()));
        }
        Ok(node)
    }

    /// The members of a saved world.
    pub fn new(cluster: Option<String>, local: String, members: Vec<Node>) -> Self {
        Self {
            cluster,
            local,
            members,
        }
    }

    /// The cluster's name; `None` for a standalone node.
    pub fn cluster_name(&self) -> Option<&String> {
        self.cluster.as_ref()
    }

    /// The node clients connect to.
    pub fn local(&self) -> &str {
        &self.local
    }

    /// Every member, in `nodelist` order.
    pub fn members(&self) -> &[Node] {
        &self.members
    }

    /// Every member, in `nodelist` order.
    pub fn iter(&self) -> std::slice::Iter<'_, Node> {
        self.members.iter()
    }

    /// How many members there are.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether there are none (never, once built).
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The member `name`.
    pub fn get(&self, name: &str) -> Option<&Node> {
        self.members.iter().find(|n| n.name == name)
    }

    /// The member `name`, to change.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Node> {
        self.members.iter_mut().find(|n| n.name == name)
    }

    /// Whether the local node has quorum (a standalone node always has).
    pub fn quorate(&self) -> bool {
        if self.cluster.is_none() {
            return true;
        }
        let online = self
            .members
            .iter()
            .filter(|n| n.status == NodeStatus::Online)
            .count();
        online * 2 > self.members.len()
    }

    /// Whether `name` is a member.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Makes a standalone node the one member of cluster `name` with
    /// corosync node id `nodeid` (`pvecm create`).
    pub fn form_cluster(&mut self, name: &str, nodeid: u32) {
        self.cluster = Some(name.to_string());
        let local = self.local.clone();
        if let Some(n) = self.get_mut(&local) {
            n.nodeid = nodeid;
        }
    }

    /// Appends `node` to the node list (`pvecm addnode`).
    pub fn add(&mut self, node: Node) {
        self.members.push(node);
    }

    /// Takes member `name` out of the node list (`pvecm delnode`);
    /// answers whether it was one.
    pub fn remove(&mut self, name: &str) -> bool {
        let before = self.members.len();
        self.members.retain(|n| n.name != name);
        self.members.len() != before
    }

    /// Sets the local node's `ssl_fingerprint` (the served certificate's).
    pub fn set_local_fingerprint(&mut self, fp: &str) {
        let local = self.local.clone();
        if let Some(n) = self.get_mut(&local) {
            fp.clone_into(&mut n.ssl_fingerprint);
        }
    }
}

impl<'a> IntoIterator for &'a Nodes {
    type Item = &'a Node;
    type IntoIter = std::slice::Iter<'a, Node>;
    fn into_iter(self) -> Self::IntoIter {
        self.members.iter()
    }
}
