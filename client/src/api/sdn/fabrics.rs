//! `/cluster/sdn/fabrics` (PVE 9.x): OpenFabric and OSPF fabrics, 9.2's
//! WireGuard fabrics, and their nodes, pending until [`Sdn::reload`]
//! applies them. The calls carry PVE's method names (`list_all`,
//! `add_fabric`, `get_node`, ...).
//!
//! ```no_run
//! # async fn f(client: &pve_client::Client) -> pve_client::error::Result<()> {
//! use pve_client::api::sdn::SdnView;
//! let fabrics = client.sdn().fabrics();
//! fabrics
//!     .add_fabric("of1", "openfabric", &[("ip_prefix", "10.100.0.0/24")])
//!     .await?;
//! fabrics
//!     .add_node("of1", "pve", "openfabric", &[("ip", "10.100.0.1")], &["name=ens19"])
//!     .await?;
//! let pending = fabrics.fabric_index(SdnView::Pending).await?; // state "new"
//! # Ok(())
//! # }
//! ```

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Sdn, SdnView};
use crate::Client;
use crate::api::seg;
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// The fabrics calls; see [`Sdn::fabrics`].
#[derive(Debug, Clone, Copy)]
pub struct Fabrics<'a> {
    client: &'a Client,
}

impl<'a> Sdn<'a> {
    /// The `/cluster/sdn/fabrics` calls (9.x; 8.4 has no such paths).
    pub fn fabrics(&self) -> Fabrics<'a> {
        Fabrics {
            client: self.client,
        }
    }
}

/// A fabric. In the pending view a new fabric has its values (its `id`
/// and `protocol` among them) under `pending` only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SdnFabric {
    /// The fabric ID.
    #[serde(default)]
    pub id: String,
    /// `openfabric`, `ospf` or (9.2) `wireguard`, `bgp`.
    #[serde(default)]
    pub protocol: String,
    /// The IPv4 prefix of the nodes' router IPs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_prefix: Option<String>,
    /// The IPv6 prefix (OpenFabric only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip6_prefix: Option<String>,
    /// \[pending view\] `new`, `changed` or `deleted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// \[pending view\] the values applying would set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Map<String, Value>>,
    /// The digest of `fabrics.cfg` (not in the running view).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// \[WireGuard\] the keepalive interval in seconds (absent when
    /// off).
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub persistent_keepalive: Option<u64>,
    /// \[9.2, OSPF and BGP\] the routes redistributed, as property
    /// strings (`source=connected,route-map=rm1`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redistribute: Vec<String>,
    /// The protocol's options (`hello_interval`, `csnp_interval`,
    /// `area`, `route_filter`).
    #[serde(flatten)]
    pub options: Map<String, Value>,
}

/// A node of a fabric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SdnFabricNode {
    /// Its fabric (under `pending` for a new node in the pending view).
    #[serde(default)]
    pub fabric_id: String,
    /// The node's name.
    #[serde(default)]
    pub node_id: String,
    /// The fabric's protocol.
    #[serde(default)]
    pub protocol: String,
    /// Its IPv4 router address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip: Option<String>,
    /// Its IPv6 router address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip6: Option<String>,
    /// Its interfaces as property strings (`name=ens19,ip=10.0.0.1/31`;
    /// a WireGuard interface `name=wg0,listen_port=51820,public_key=...`
    /// with the key of its private key).
    #[serde(default)]
    pub interfaces: Vec<String>,
    /// \[WireGuard\] `internal` (a node of the cluster) or `external`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// \[WireGuard\] where it is reached: an internal node's host, an
    /// external node's host and port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// \[WireGuard, external\] its public key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_key: Option<String>,
    /// \[WireGuard, internal\] its interfaces' peers as property strings
    /// (`type=external,node=ext,iface=wg0`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub peers: Vec<String>,
    /// \[WireGuard\] the networks routed via it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_ips: Vec<String>,
    /// \[pending view\] `new`, `changed` or `deleted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// \[pending view\] the values applying would set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Map<String, Value>>,
    /// The digest of `fabrics.cfg` (not in the running view).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// A node of a WireGuard fabric to add or change (9.2): its role and
/// what the role has (an internal node's `endpoint` host, interfaces and
/// peers; an external node's `public_key` and `endpoint` with port),
/// the router `ip`/`ip6`, the `allowed_ips`. An internal node's
/// interfaces get their keys from PVE (a `public_key` given in one is
/// not used).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WireGuardNode {
    /// `internal` or `external` (an update may leave it out: a node
    /// keeps its role).
    pub role: Option<String>,
    /// The router IPv4 address.
    pub ip: Option<String>,
    /// The router IPv6 address.
    pub ip6: Option<String>,
    /// Where the node is reached.
    pub endpoint: Option<String>,
    /// An external node's public key.
    pub public_key: Option<String>,
    /// An internal node's interfaces (`name=wg0,listen_port=51820`).
    pub interfaces: Vec<String>,
    /// An internal node's peers.
    pub peers: Vec<String>,
    /// The networks routed via the node.
    pub allowed_ips: Vec<String>,
}

impl WireGuardNode {
    /// The node as parameters; `interfaces` always for an update of an
    /// internal node (PVE replaces them with what is given, none when
    /// none is).
    fn params(&self, mut p: Params, update: bool) -> Params {
        p = p
            .set("protocol", "wireguard")
            .opt("role", self.role.as_deref())
            .opt("ip", self.ip.as_deref())
            .opt("ip6", self.ip6.as_deref())
            .opt("endpoint", self.endpoint.as_deref())
            .opt("public_key", self.public_key.as_deref());
        if !self.interfaces.is_empty() || (update && self.role.as_deref() != Some("external")) {
            p = p.array("interfaces", &self.interfaces);
        }
        if !self.peers.is_empty() {
            p = p.array("peers", &self.peers);
        }
        if !self.allowed_ips.is_empty() {
            p = p.array("allowed_ips", &self.allowed_ips);
        }
        p
    }
}

/// `GET /cluster/sdn/fabrics/all`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FabricsAll {
    /// The fabrics.
    #[serde(default)]
    pub fabrics: Vec<SdnFabric>,
    /// The nodes of all fabrics.
    #[serde(default)]
    pub nodes: Vec<SdnFabricNode>,
}

/// Options as `(name, value)` pairs; `redistribute` (a list, which may
/// repeat) is sent as an array.
fn with(mut p: Params, opts: &[(&str, &str)]) -> Params {
    let mut redistribute = Vec::new();
    for (k, v) in opts {
        if *k == "redistribute" {
            redistribute.push(*v);
        } else {
            p.push(*k, *v);
        }
    }
    if !redistribute.is_empty() {
        p = p.array("redistribute", &redistribute);
    }
    p
}

fn view(v: SdnView) -> Params {
    v.params(Params::new())
}

impl Fabrics<'_> {
    /// `GET /cluster/sdn/fabrics` (`index`): `fabric`, `node`, `all`.
    ///
    /// # Errors
    /// As any call (404-like on 8.4: no such path).
    pub async fn index(&self) -> Result<Vec<String>> {
        let list: Vec<Map<String, Value>> = self
            .client
            .call(Method::GET, "/cluster/sdn/fabrics", &Params::new())
            .await?;
        Ok(list
            .into_iter()
            .filter_map(|m| m.get("subdir").and_then(Value::as_str).map(str::to_string))
            .collect())
    }

    /// `GET /cluster/sdn/fabrics/all` (`list_all`).
    ///
    /// # Errors
    /// As any call.
    pub async fn list_all(&self, v: SdnView) -> Result<FabricsAll> {
        self.client
            .call(Method::GET, "/cluster/sdn/fabrics/all", &view(v))
            .await
    }

    /// `GET /cluster/sdn/fabrics/fabric` (`index` of the fabrics).
    ///
    /// # Errors
    /// As any call.
    pub async fn fabric_index(&self, v: SdnView) -> Result<Vec<SdnFabric>> {
        self.client
            .call(Method::GET, "/cluster/sdn/fabrics/fabric", &view(v))
            .await
    }

    /// `GET /cluster/sdn/fabrics/fabric/{id}` (`get_fabric`).
    ///
    /// # Errors
    /// `fabric 'x' does not exist in configuration`.
    pub async fn get_fabric(&self, id: &str) -> Result<SdnFabric> {
        let path = format!("/cluster/sdn/fabrics/fabric/{}", seg(id));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST /cluster/sdn/fabrics/fabric` (`add_fabric`) with its
    /// options (`ip_prefix`, `ip6_prefix`, `hello_interval`,
    /// `csnp_interval`, `area`, `lock-token`; 9.2: `route_filter`,
    /// `persistent_keepalive`, `redistribute`, which may repeat).
    ///
    /// # Errors
    /// `adding fabric failed: ...`.
    pub async fn add_fabric(&self, id: &str, protocol: &str, opts: &[(&str, &str)]) -> Result<()> {
        let p = with(Params::new().set("id", id).set("protocol", protocol), opts);
        let _: Value = self
            .client
            .call(Method::POST, "/cluster/sdn/fabrics/fabric", &p)
            .await?;
        Ok(())
    }

    /// `PUT /cluster/sdn/fabrics/fabric/{id}` (`update_fabric`):
    /// `protocol` must be the fabric's.
    ///
    /// # Errors
    /// `updating fabric failed: ...`.
    pub async fn update_fabric(
        &self,
        id: &str,
        protocol: &str,
        opts: &[(&str, &str)],
        delete: &[&str],
        digest: Option<&str>,
    ) -> Result<()> {
        let path = format!("/cluster/sdn/fabrics/fabric/{}", seg(id));
        let mut p = with(Params::new().set("protocol", protocol), opts).opt("digest", digest);
        if !delete.is_empty() {
            p = p.array("delete", delete);
        }
        let _: Value = self.client.call(Method::PUT, &path, &p).await?;
        Ok(())
    }

    /// `DELETE /cluster/sdn/fabrics/fabric/{id}` (`delete_fabric`),
    /// with its nodes.
    ///
    /// # Errors
    /// `deleting fabric failed: ...` (a VXLAN zone or EVPN controller
    /// uses it, ...).
    pub async fn delete_fabric(&self, id: &str) -> Result<()> {
        let path = format!("/cluster/sdn/fabrics/fabric/{}", seg(id));
        let _: Value = self
            .client
            .call(Method::DELETE, &path, &Params::new())
            .await?;
        Ok(())
    }

    /// `GET /cluster/sdn/fabrics/node` (`list_nodes`): PVE keys them by
    /// node name, so a node in two fabrics shows once.
    ///
    /// # Errors
    /// As any call.
    pub async fn list_nodes(&self, v: SdnView) -> Result<Vec<SdnFabricNode>> {
        self.client
            .call(Method::GET, "/cluster/sdn/fabrics/node", &view(v))
            .await
    }

    /// `GET /cluster/sdn/fabrics/node/{fabric_id}`
    /// (`list_nodes_fabric`).
    ///
    /// # Errors
    /// `fabric 'x' does not exist in configuration` (also when it is not
    /// in the running configuration, for `running` and `pending`).
    pub async fn list_nodes_fabric(&self, fabric: &str, v: SdnView) -> Result<Vec<SdnFabricNode>> {
        let path = format!("/cluster/sdn/fabrics/node/{}", seg(fabric));
        self.client.call(Method::GET, &path, &view(v)).await
    }

    /// `GET /cluster/sdn/fabrics/node/{fabric_id}/{node_id}`
    /// (`get_node`).
    ///
    /// # Errors
    /// An unknown fabric or node.
    pub async fn get_node(&self, fabric: &str, node: &str) -> Result<SdnFabricNode> {
        let path = format!("/cluster/sdn/fabrics/node/{}/{}", seg(fabric), seg(node));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST /cluster/sdn/fabrics/node/{fabric_id}` (`add_node`): the
    /// node's `ip`/`ip6` among `opts`, its interfaces as property
    /// strings.
    ///
    /// # Errors
    /// `adding node failed: ...`.
    pub async fn add_node(
        &self,
        fabric: &str,
        node: &str,
        protocol: &str,
        opts: &[(&str, &str)],
        interfaces: &[&str],
    ) -> Result<()> {
        let path = format!("/cluster/sdn/fabrics/node/{}", seg(fabric));
        let mut p = with(
            Params::new().set("node_id", node).set("protocol", protocol),
            opts,
        );
        if !interfaces.is_empty() {
            p = p.array("interfaces", interfaces);
        }
        let _: Value = self.client.call(Method::POST, &path, &p).await?;
        Ok(())
    }

    /// `PUT /cluster/sdn/fabrics/node/{fabric_id}/{node_id}`
    /// (`update_node`): `interfaces`, when given, replaces the list;
    /// `delete` takes `interfaces`, `ip`, `ip6`.
    ///
    /// # Errors
    /// `updating node failed: ...`.
    pub async fn update_node(
        &self,
        fabric: &str,
        node: &str,
        protocol: &str,
        opts: &[(&str, &str)],
        interfaces: Option<&[&str]>,
        delete: &[&str],
    ) -> Result<()> {
        let path = format!("/cluster/sdn/fabrics/node/{}/{}", seg(fabric), seg(node));
        let mut p = with(Params::new().set("protocol", protocol), opts);
        if let Some(i) = interfaces {
            p = p.array("interfaces", i);
        }
        if !delete.is_empty() {
            p = p.array("delete", delete);
        }
        let _: Value = self.client.call(Method::PUT, &path, &p).await?;
        Ok(())
    }

    /// `POST /cluster/sdn/fabrics/node/{fabric_id}` (`add_node`) of a
    /// WireGuard node (9.2).
    ///
    /// # Errors
    /// `adding node failed: ...` (`missing field `role``, a peer that
    /// names no interface or node of the fabric, ...).
    pub async fn add_wireguard_node(
        &self,
        fabric: &str,
        node: &str,
        spec: &WireGuardNode,
    ) -> Result<()> {
        let path = format!("/cluster/sdn/fabrics/node/{}", seg(fabric));
        let p = spec.params(Params::new().set("node_id", node), false);
        let _: Value = self.client.call(Method::POST, &path, &p).await?;
        Ok(())
    }

    /// `PUT /cluster/sdn/fabrics/node/{fabric_id}/{node_id}`
    /// (`update_node`) of a WireGuard node (9.2): what `spec` has is
    /// set (an internal node's interfaces always), `delete` takes
    /// `endpoint`, `peers`, `allowed_ips`, `interfaces`, `ip`, `ip6`.
    ///
    /// # Errors
    /// `updating node failed: cannot change role of existing WireGuard
    /// node`, ...
    pub async fn update_wireguard_node(
        &self,
        fabric: &str,
        node: &str,
        spec: &WireGuardNode,
        delete: &[&str],
        digest: Option<&str>,
    ) -> Result<()> {
        let path = format!("/cluster/sdn/fabrics/node/{}/{}", seg(fabric), seg(node));
        let mut p = spec.params(Params::new(), true).opt("digest", digest);
        if !delete.is_empty() {
            p = p.array("delete", delete);
        }
        let _: Value = self.client.call(Method::PUT, &path, &p).await?;
        Ok(())
    }

    /// `DELETE /cluster/sdn/fabrics/node/{fabric_id}/{node_id}`
    /// (`delete_node`).
    ///
    /// # Errors
    /// `deleting node failed: ...`.
    pub async fn delete_node(&self, fabric: &str, node: &str) -> Result<()> {
        let path = format!("/cluster/sdn/fabrics/node/{}/{}", seg(fabric), seg(node));
        let _: Value = self
            .client
            .call(Method::DELETE, &path, &Params::new())
            .await?;
        Ok(())
    }
}

// ---- a node's view of an applied fabric (`/nodes/{node}/sdn/fabrics`) ----

/// An interface of a node in a fabric, as FRR reports it
/// (`GET /nodes/{node}/sdn/fabrics/{fabric}/interfaces`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FabricInterfaceStatus {
    /// The interface (`dummy_<fabric>` is the fabric's loopback).
    pub name: String,
    /// `Up` (OpenFabric) or `up`/`down` (OSPF).
    pub state: String,
    /// `Point-To-Point`, `Broadcast`, `Loopback`, ...
    #[serde(rename = "type")]
    pub kind: String,
}

/// A neighbor of a node in a fabric
/// (`GET /nodes/{node}/sdn/fabrics/{fabric}/neighbors`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FabricNeighbor {
    /// The neighbor's host name (OpenFabric) or address (OSPF).
    pub neighbor: String,
    /// The adjacency's state (`Up`, `Full/DR`, ...).
    pub status: String,
    /// How long it is up, in FRR's format (`8h24m12s`).
    pub uptime: String,
}

/// A route a fabric installed on a node
/// (`GET /nodes/{node}/sdn/fabrics/{fabric}/routes`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FabricRoute {
    /// The destination.
    pub route: String,
    /// The next hops.
    #[serde(default)]
    pub via: Vec<String>,
}

impl super::NodeSdn<'_> {
    fn fabric_path(&self, fabric: &str, view: &str) -> String {
        format!(
            "/nodes/{}/sdn/fabrics/{}/{view}",
            seg(&self.node),
            seg(fabric)
        )
    }

    /// `GET /nodes/{node}/sdn/fabrics/{fabric}/interfaces` (PVE's
    /// `interfaces`, 9.x): the node's interfaces in the applied fabric.
    ///
    /// # Errors
    /// `fabric 'x' does not exist in configuration` for a fabric not
    /// applied.
    pub async fn interfaces(&self, fabric: &str) -> Result<Vec<FabricInterfaceStatus>> {
        let path = self.fabric_path(fabric, "interfaces");
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `GET /nodes/{node}/sdn/fabrics/{fabric}/neighbors` (`neighbors`):
    /// the node's neighbors in the applied fabric.
    ///
    /// # Errors
    /// As [`Self::interfaces`].
    pub async fn neighbors(&self, fabric: &str) -> Result<Vec<FabricNeighbor>> {
        let path = self.fabric_path(fabric, "neighbors");
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `GET /nodes/{node}/sdn/fabrics/{fabric}/routes` (`routes`): the
    /// routes the applied fabric installed on the node.
    ///
    /// # Errors
    /// As [`Self::interfaces`].
    pub async fn routes(&self, fabric: &str) -> Result<Vec<FabricRoute>> {
        let path = self.fabric_path(fabric, "routes");
        self.client.call(Method::GET, &path, &Params::new()).await
    }
}
