//! `/nodes`: the members, their status and version, node-wide power
//! calls, and choosing a node by `PVE_NODE_SELECTOR`.

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::seg;
use super::tasks::Upid;
use super::version::Version;
use crate::Client;
use crate::de;
use crate::error::{Error, Result};
use crate::transport::Params;

/// The `/nodes` area; see [`Client::nodes`].
#[derive(Debug, Clone, Copy)]
pub struct Nodes<'a> {
    client: &'a Client,
}

impl Client {
    /// The `/nodes` calls.
    pub fn nodes(&self) -> Nodes<'_> {
        Nodes { client: self }
    }
}

impl<'a> Nodes<'a> {
    /// The client the calls go through.
    pub(crate) fn client(&self) -> &'a Client {
        self.client
    }
}

/// One entry of `GET /nodes`. The figures are left out for callers
/// without Sys.Audit on the node, and for offline nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeListItem {
    /// The node's name.
    pub node: String,
    /// `online`, `offline` or `unknown`.
    pub status: String,
    /// `node/<name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The subscription level (`""` for none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
    /// The SHA-256 fingerprint of its certificate (`AB:CD:...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssl_fingerprint: Option<String>,
    /// CPU use, a fraction.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub cpu: Option<f64>,
    /// CPUs.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub maxcpu: Option<u64>,
    /// Memory in use, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub mem: Option<u64>,
    /// Memory, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub maxmem: Option<u64>,
    /// Root disk in use, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub disk: Option<u64>,
    /// Root disk size, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub maxdisk: Option<u64>,
    /// Seconds since boot.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub uptime: Option<u64>,
    /// Anything else PVE sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl NodeListItem {
    /// Whether the node is online.
    pub fn is_online(&self) -> bool {
        self.status == "online"
    }
}

/// Memory, swap or file system figures, in bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Size.
    #[serde(deserialize_with = "de::u64_lenient")]
    pub total: u64,
    /// In use.
    #[serde(deserialize_with = "de::u64_lenient")]
    pub used: u64,
    /// Free.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub free: Option<u64>,
    /// \[rootfs\] available to unprivileged users.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub avail: Option<u64>,
    /// \[memory, 9.x\] available memory.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub available: Option<u64>,
}

/// The CPU model of a node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuInfo {
    /// The model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Logical CPUs.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub cpus: Option<u64>,
    /// Sockets.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub sockets: Option<u64>,
    /// Cores per socket.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub cores: Option<u64>,
    /// Anything else PVE sent (`mhz`, `flags`, `hvm`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What `GET /nodes/{node}/status` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeStatus {
    /// Seconds since boot.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub uptime: Option<u64>,
    /// CPU use, a fraction.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub cpu: Option<f64>,
    /// I/O wait, a fraction.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub wait: Option<f64>,
    /// The load averages, as PVE sends them (strings).
    #[serde(default)]
    pub loadavg: Vec<String>,
    /// The kernel version string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kversion: Option<String>,
    /// `pve-manager/<version>/<repoid>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pveversion: Option<String>,
    /// Memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Usage>,
    /// Swap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap: Option<Usage>,
    /// The root file system.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rootfs: Option<Usage>,
    /// The CPU model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpuinfo: Option<CpuInfo>,
    /// Anything else PVE sent (`boot-info`, `current-kernel`, `ksm`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Options of `startall`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StartAll {
    /// Start guests even without `onboot`.
    pub force: Option<bool>,
    /// Only these guests.
    pub vms: Vec<u32>,
    /// Parallel workers (9.x).
    pub max_workers: Option<u32>,
}

/// Options of `stopall`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StopAll {
    /// Hard-stop guests that do not shut down in time.
    pub force_stop: Option<bool>,
    /// Seconds to wait for each guest.
    pub timeout: Option<u32>,
    /// Only these guests.
    pub vms: Vec<u32>,
    /// Parallel workers (9.x).
    pub max_workers: Option<u32>,
}

fn vm_list(vms: &[u32]) -> Option<String> {
    (!vms.is_empty()).then(|| vms.iter().map(u32::to_string).collect::<Vec<_>>().join(","))
}

impl Nodes<'_> {
    /// `GET /nodes` (`index`; fake-pve's `list_nodes`): the cluster's
    /// members.
    ///
    /// # Errors
    /// As any call.
    pub async fn list_nodes(&self) -> Result<Vec<NodeListItem>> {
        self.client
            .call(Method::GET, "/nodes", &Params::new())
            .await
    }

    /// `GET /nodes/{node}/status` (`status`; fake-pve's `node_status`).
    ///
    /// # Errors
    /// [`Error::Permission`] without Sys.Audit on the node; an error
    /// naming the host lookup for an unknown node; [`Error::Network`]
    /// (PVE's 595) for an offline one.
    pub async fn node_status(&self, node: &str) -> Result<NodeStatus> {
        let path = format!("/nodes/{}/status", seg(node));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `GET /nodes/{node}/version` (`version`; fake-pve's
    /// `node_version`).
    ///
    /// # Errors
    /// As [`Nodes::node_status`].
    pub async fn node_version(&self, node: &str) -> Result<Version> {
        let path = format!("/nodes/{}/version", seg(node));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST /nodes/{node}/startall` (`startall`): starts the node's
    /// guests in a task.
    ///
    /// # Errors
    /// [`Error::Permission`] without VM.PowerMgmt; [`Error::Validation`]
    /// for a malformed option.
    pub async fn startall(&self, node: &str, opts: &StartAll) -> Result<Upid> {
        let params = Params::new()
            .opt("force", opts.force)
            .opt("vms", vm_list(&opts.vms))
            .opt("max-workers", opts.max_workers);
        let path = format!("/nodes/{}/startall", seg(node));
        self.client.call(Method::POST, &path, &params).await
    }

    /// `POST /nodes/{node}/stopall` (`stopall`): stops the node's running
    /// guests in a task.
    ///
    /// # Errors
    /// As [`Nodes::startall`].
    pub async fn stopall(&self, node: &str, opts: &StopAll) -> Result<Upid> {
        let params = Params::new()
            .opt("force-stop", opts.force_stop)
            .opt("timeout", opts.timeout)
            .opt("vms", vm_list(&opts.vms))
            .opt("max-workers", opts.max_workers);
        let path = format!("/nodes/{}/stopall", seg(node));
        self.client.call(Method::POST, &path, &params).await
    }

    /// Picks the node to work on: the first online node of the
    /// configured node selector (`PVE_NODE_SELECTOR`), or without one the
    /// online node with the most free memory.
    ///
    /// # Errors
    /// [`Error::NotFound`] when no node qualifies.
    pub async fn select_node(&self) -> Result<String> {
        let nodes = self.list_nodes().await?;
        pick_node(&nodes, self.client.config().node_selector())
    }
}

/// The choice [`Nodes::select_node`] makes.
fn pick_node(nodes: &[NodeListItem], preferred: &[String]) -> Result<String> {
    let online = || nodes.iter().filter(|n| n.is_online());
    if !preferred.is_empty() {
        return preferred
            .iter()
            .find(|p| online().any(|n| &n.node == *p))
            .cloned()
            .ok_or_else(|| Error::NotFound {
                status: None,
                message: format!(
                    "no online node among the preferred nodes ({})",
                    preferred.join(", ")
                ),
            });
    }
    online()
        .max_by_key(|n| {
            let free = n.maxmem.unwrap_or(0).saturating_sub(n.mem.unwrap_or(0));
            (free, std::cmp::Reverse(n.node.clone()))
        })
        .map(|n| n.node.clone())
        .ok_or_else(|| Error::NotFound {
            status: None,
            message: "no online node".into(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, status: &str, mem: u64, maxmem: u64) -> NodeListItem {
        serde_json::from_value(serde_json::json!({
            "node": name, "status": status, "mem": mem, "maxmem": maxmem
        }))
        .expect("node")
    }

    #[test]
    fn node_choice() {
        let nodes = [
            node("a", "online", 90, 100),
            node("b", "offline", 0, 100),
            node("c", "online", 10, 100),
        ];
        assert_eq!(pick_node(&nodes, &[]).expect("a node"), "c");
        let pref = ["b".to_string(), "a".to_string()];
        assert_eq!(pick_node(&nodes, &pref).expect("a node"), "a");
        let e = pick_node(&nodes, &["b".to_string()]).expect_err("none");
        assert_eq!(e.message(), "no online node among the preferred nodes (b)");
    }
}
