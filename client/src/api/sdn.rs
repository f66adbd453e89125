//! `/cluster/sdn`: SDN zones, VNets, subnets, controllers, IPAMs and DNS
//! servers (pending until applied with [`Sdn::reload`]), the VNets' IPs
//! and the PVE IPAM's status. Each sub-area has PVE's method names
//! (`index`, `read`, `create`, `update`, `delete`).
//!
//! ```no_run
//! # async fn f(client: &pve_client::Client) -> pve_client::error::Result<()> {
//! let sdn = client.sdn();
//! sdn.zones().create("lab", "simple", &[("ipam", "pve")]).await?;
//! sdn.vnets().create_vnet("labnet", &[("zone", "lab")]).await?;
//! sdn.subnets("labnet")
//!     .create("10.10.0.0/24", &[("gateway", "10.10.0.1")], &[])
//!     .await?;
//! let upid = sdn.reload().await?;
//! client.tasks().wait(&upid).await?;
//! # Ok(())
//! # }
//! ```

pub mod fabrics;
pub mod routing;

use reqwest::Method;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::seg;
use super::tasks::Upid;
use crate::Client;
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// The `/cluster/sdn` area; see [`Client::sdn`].
#[derive(Debug, Clone, Copy)]
pub struct Sdn<'a> {
    client: &'a Client,
}

impl Client {
    /// The `/cluster/sdn` calls.
    pub fn sdn(&self) -> Sdn<'_> {
        Sdn { client: self }
    }
}

/// Which configuration a read shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SdnView {
    /// The configuration as written (with its `digest`).
    #[default]
    Current,
    /// `running=1`: as last applied.
    Running,
    /// `pending=1`: the running configuration with `state` and `pending`.
    Pending,
}

impl SdnView {
    fn params(self, p: Params) -> Params {
        match self {
            SdnView::Current => p,
            SdnView::Running => p.set("running", true),
            SdnView::Pending => p.set("pending", true),
        }
    }
}

/// A zone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SdnZone {
    /// The zone ID.
    pub zone: String,
    /// `simple`, `vlan`, `qinq`, `vxlan`, `evpn`, `faucet`.
    #[serde(rename = "type")]
    pub kind: String,
    /// \[pending view\] `new`, `changed` or `deleted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// \[pending view\] the values applying would set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Map<String, Value>>,
    /// The digest of `zones.cfg`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// \[9.2, evpn\] further evpn controllers of the zone.
    #[serde(
        default,
        rename = "secondary-controllers",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub secondary_controllers: Vec<String>,
    /// The other options (`bridge`, `ipam`, `mtu`, ...).
    #[serde(flatten)]
    pub options: Map<String, Value>,
}

/// A VNet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SdnVnet {
    /// The VNet ID.
    pub vnet: String,
    /// Its zone (in the pending view of a new VNet: under `pending`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// The VLAN tag or VXLAN VNI.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub tag: Option<u64>,
    /// Its alias.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// \[pending view\] `new`, `changed` or `deleted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// \[pending view\] the values applying would set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Map<String, Value>>,
    /// The digest of `vnets.cfg`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The other options (`vlanaware`, `isolate-ports`, ...).
    #[serde(flatten)]
    pub options: Map<String, Value>,
}

/// A DHCP range of a subnet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DhcpRange {
    /// The first address.
    #[serde(rename = "start-address")]
    pub start: String,
    /// The last address.
    #[serde(rename = "end-address")]
    pub end: String,
}

/// A subnet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SdnSubnet {
    /// The subnet ID, `<zone>-<address>-<prefix>`.
    pub subnet: String,
    /// Its VNet.
    #[serde(default)]
    pub vnet: String,
    /// `10.10.0.0/24`.
    #[serde(default)]
    pub cidr: String,
    /// Its gateway.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway: Option<String>,
    /// Its DHCP ranges.
    #[serde(default, rename = "dhcp-range")]
    pub dhcp_range: Vec<DhcpRange>,
    /// \[pending view\] `new`, `changed` or `deleted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// \[pending view\] the values applying would set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Map<String, Value>>,
    /// The digest of `subnets.cfg`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The other options (`snat`, `zone`, `network`, `mask`, ...).
    #[serde(flatten)]
    pub options: Map<String, Value>,
}

/// A controller: its type and, for each type, its options; 9.2 adds an
/// evpn controller's nodes, peer group and BGP mode, and route maps to
/// evpn and bgp controllers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SdnController {
    /// The controller ID.
    #[serde(default)]
    pub controller: String,
    /// `evpn`, `bgp`, `isis`, `faucet`.
    #[serde(rename = "type")]
    pub kind: String,
    /// \[evpn, bgp\] the local ASN.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub asn: Option<u64>,
    /// \[evpn, bgp\] the peers' addresses, comma-separated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peers: Option<String>,
    /// \[evpn, 9.x\] the fabric it peers over (instead of `peers`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fabric: Option<String>,
    /// \[bgp, isis\] the node it runs on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// \[evpn, 9.2\] the nodes it runs on (all when unset), as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<String>,
    /// \[evpn, 9.2\] its BGP peer group (`VTEP` when unset).
    #[serde(
        default,
        rename = "peer-group-name",
        skip_serializing_if = "Option::is_none"
    )]
    pub peer_group_name: Option<String>,
    /// \[evpn, 9.2\] `auto` (when unset), `external` or `internal`.
    #[serde(default, rename = "bgp-mode", skip_serializing_if = "Option::is_none")]
    pub bgp_mode: Option<String>,
    /// \[evpn, bgp, 9.2\] the route map of the routes received.
    #[serde(
        default,
        rename = "route-map-in",
        skip_serializing_if = "Option::is_none"
    )]
    pub route_map_in: Option<String>,
    /// \[evpn, bgp, 9.2\] the route map of the routes sent.
    #[serde(
        default,
        rename = "route-map-out",
        skip_serializing_if = "Option::is_none"
    )]
    pub route_map_out: Option<String>,
    /// \[pending view\] `new`, `changed` or `deleted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// \[pending view\] the values applying would set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Map<String, Value>>,
    /// The digest of `controllers.cfg`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The other options (`ebgp`, `ebgp-multihop`, `loopback`,
    /// `isis-domain`, ...).
    #[serde(flatten)]
    pub options: Map<String, Value>,
}

/// An IPAM or DNS server: its ID under the area's key, its type and its
/// options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SdnPlugin {
    /// `pve`, `netbox`, `phpipam`; `powerdns`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The ID (under `controller`, `ipam` or `dns`) and the options.
    #[serde(flatten)]
    pub options: Map<String, Value>,
}

/// An address the PVE IPAM holds (`ipamindex`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IpamEntry {
    /// The address.
    pub ip: String,
    /// The subnet's CIDR.
    pub subnet: String,
    /// The zone.
    pub zone: String,
    /// The VNet.
    pub vnet: String,
    /// The guest holding it.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub vmid: Option<u64>,
    /// Its MAC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
    /// Its host name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// `1` for a subnet's gateway.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub gateway: Option<u64>,
}

/// Options as `(name, value)` pairs.
fn with(mut p: Params, opts: &[(&str, &str)]) -> Params {
    for (k, v) in opts {
        p.push(*k, *v);
    }
    p
}

impl<'a> Sdn<'a> {
    /// `GET /cluster/sdn` (`index`): the sub-areas.
    ///
    /// # Errors
    /// As any call.
    pub async fn index(&self) -> Result<Vec<String>> {
        let list: Vec<Map<String, Value>> = self
            .client
            .call(Method::GET, "/cluster/sdn", &Params::new())
            .await?;
        Ok(list
            .into_iter()
            .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_string))
            .collect())
    }

    /// `PUT /cluster/sdn` (`reload`): applies the pending configuration
    /// (task `reloadnetworkall`).
    ///
    /// # Errors
    /// As any call; on 9.x with a global lock, `invalid lock token`.
    pub async fn reload(&self) -> Result<Upid> {
        self.client
            .call(Method::PUT, "/cluster/sdn", &Params::new())
            .await
    }

    /// `GET /cluster/sdn/dry-run` (`dry-run`, 9.x): on `node`, the diffs
    /// of its FRR and interfaces files between the running and the
    /// pending configuration (none where a file would not change).
    ///
    /// # Errors
    /// As any call (Sys.Audit on `/nodes/<node>`).
    pub async fn dry_run(&self, node: &str) -> Result<SdnDryRun> {
        let p = Params::new().set("node", node);
        self.client
            .call(Method::GET, "/cluster/sdn/dry-run", &p)
            .await
    }

    /// `POST /cluster/sdn/lock` (`lock`, 9.x): the global lock's token.
    ///
    /// # Errors
    /// `configuration has pending changes` without `allow_pending`.
    pub async fn lock(&self, allow_pending: bool) -> Result<String> {
        let p = Params::new().opt("allow-pending", allow_pending.then_some(true));
        self.client
            .call(Method::POST, "/cluster/sdn/lock", &p)
            .await
    }

    /// `DELETE /cluster/sdn/lock` (`release_lock`, 9.x).
    ///
    /// # Errors
    /// `invalid lock token provided!`.
    pub async fn release_lock(&self, token: Option<&str>, force: bool) -> Result<()> {
        let p = Params::new()
            .opt("lock-token", token)
            .opt("force", force.then_some(true));
        let _: Value = self
            .client
            .call(Method::DELETE, "/cluster/sdn/lock", &p)
            .await?;
        Ok(())
    }

    /// `POST /cluster/sdn/rollback` (`rollback`, 9.x): the pending
    /// configuration becomes the running one again.
    ///
    /// # Errors
    /// `invalid lock token provided!`.
    pub async fn rollback(&self, token: Option<&str>) -> Result<()> {
        let p = Params::new().opt("lock-token", token);
        let _: Value = self
            .client
            .call(Method::POST, "/cluster/sdn/rollback", &p)
            .await?;
        Ok(())
    }

    /// The zones.
    pub fn zones(&self) -> Area<'a, SdnZone> {
        Area::new(self.client, "/cluster/sdn/zones".into(), "zone")
    }

    /// The VNets.
    pub fn vnets(&self) -> Area<'a, SdnVnet> {
        Area::new(self.client, "/cluster/sdn/vnets".into(), "vnet")
    }

    /// The subnets of a VNet.
    pub fn subnets(&self, vnet: &str) -> Subnets<'a> {
        Subnets {
            area: Area::new(
                self.client,
                format!("/cluster/sdn/vnets/{}/subnets", seg(vnet)),
                "subnet",
            ),
        }
    }

    /// The controllers.
    pub fn controllers(&self) -> Area<'a, SdnController> {
        Area::new(self.client, "/cluster/sdn/controllers".into(), "controller")
    }

    /// The IPAMs.
    pub fn ipams(&self) -> Area<'a, SdnPlugin> {
        Area::new(self.client, "/cluster/sdn/ipams".into(), "ipam")
    }

    /// The DNS servers.
    pub fn dns(&self) -> Area<'a, SdnPlugin> {
        Area::new(self.client, "/cluster/sdn/dns".into(), "dns")
    }

    /// `GET /cluster/sdn/ipams/{ipam}/status` (`ipamindex`).
    ///
    /// # Errors
    /// `Currently only PVE IPAM is supported!`.
    pub async fn ipamindex(&self, ipam: &str) -> Result<Vec<IpamEntry>> {
        let path = format!("/cluster/sdn/ipams/{}/status", seg(ipam));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST /cluster/sdn/vnets/{vnet}/ips` (`ipcreate`).
    ///
    /// # Errors
    /// `can't find any subnet for ip ...`, `IP '...' already exist`.
    pub async fn ipcreate(
        &self,
        zone: &str,
        vnet: &str,
        ip: &str,
        mac: Option<&str>,
    ) -> Result<()> {
        self.ips(Method::POST, zone, vnet, ip, mac, None).await
    }

    /// `PUT /cluster/sdn/vnets/{vnet}/ips` (`ipupdate`).
    ///
    /// # Errors
    /// As `ipcreate`.
    pub async fn ipupdate(
        &self,
        zone: &str,
        vnet: &str,
        ip: &str,
        mac: Option<&str>,
        vmid: Option<u32>,
    ) -> Result<()> {
        self.ips(Method::PUT, zone, vnet, ip, mac, vmid).await
    }

    /// `DELETE /cluster/sdn/vnets/{vnet}/ips` (`ipdelete`).
    ///
    /// # Errors
    /// `IP '...' does not exist in IPAM DB`.
    pub async fn ipdelete(
        &self,
        zone: &str,
        vnet: &str,
        ip: &str,
        mac: Option<&str>,
    ) -> Result<()> {
        self.ips(Method::DELETE, zone, vnet, ip, mac, None).await
    }

    async fn ips(
        &self,
        method: Method,
        zone: &str,
        vnet: &str,
        ip: &str,
        mac: Option<&str>,
        vmid: Option<u32>,
    ) -> Result<()> {
        let path = format!("/cluster/sdn/vnets/{}/ips", seg(vnet));
        let p = Params::new()
            .set("zone", zone)
            .set("ip", ip)
            .opt("mac", mac)
            .opt("vmid", vmid);
        let _: Value = self.client.call(method, &path, &p).await?;
        Ok(())
    }
}

/// One sub-area of `/cluster/sdn` with PVE's five calls.
#[derive(Debug, Clone)]
pub struct Area<'a, T> {
    client: &'a Client,
    path: String,
    key: &'static str,
    _t: std::marker::PhantomData<T>,
}

impl<'a, T: DeserializeOwned> Area<'a, T> {
    fn new(client: &'a Client, path: String, key: &'static str) -> Self {
        Self {
            client,
            path,
            key,
            _t: std::marker::PhantomData,
        }
    }

    /// `GET` of the list (`index`), in the view asked for (controllers,
    /// zones, VNets, subnets; IPAMs and DNS servers ignore it).
    ///
    /// # Errors
    /// As any call.
    pub async fn index(&self, view: SdnView) -> Result<Vec<T>> {
        self.client
            .call(Method::GET, &self.path, &view.params(Params::new()))
            .await
    }

    /// `GET` of one (`read`).
    ///
    /// # Errors
    /// `sdn '<id>' does not exist` and the like.
    pub async fn read(&self, id: &str, view: SdnView) -> Result<T> {
        let path = format!("{}/{}", self.path, seg(id));
        self.client
            .call(Method::GET, &path, &view.params(Params::new()))
            .await
    }

    /// `POST` (`create`) of a zone, controller, IPAM or DNS server of a
    /// `kind`, with its options.
    ///
    /// # Errors
    /// PVE's refusals (`missing value for required option`, ...).
    pub async fn create(&self, id: &str, kind: &str, opts: &[(&str, &str)]) -> Result<()> {
        let p = with(Params::new().set(self.key, id), opts);
        let p = if kind.is_empty() {
            p
        } else {
            p.set("type", kind)
        };
        let _: Value = self.client.call(Method::POST, &self.path, &p).await?;
        Ok(())
    }

    /// `PUT` (`update`): options to set, options to `delete`, and the
    /// `digest` the caller read.
    ///
    /// # Errors
    /// PVE's refusals; a changed digest.
    pub async fn update(
        &self,
        id: &str,
        opts: &[(&str, &str)],
        delete: &[&str],
        digest: Option<&str>,
    ) -> Result<()> {
        let path = format!("{}/{}", self.path, seg(id));
        let p = with(Params::new(), opts)
            .opt("delete", (!delete.is_empty()).then(|| delete.join(",")))
            .opt("digest", digest);
        let _: Value = self.client.call(Method::PUT, &path, &p).await?;
        Ok(())
    }

    /// `DELETE` (`delete`).
    ///
    /// # Errors
    /// PVE's refusals (`zone x is used by vnet y`, ...).
    pub async fn delete(&self, id: &str) -> Result<()> {
        let path = format!("{}/{}", self.path, seg(id));
        let _: Value = self
            .client
            .call(Method::DELETE, &path, &Params::new())
            .await?;
        Ok(())
    }
}

impl Area<'_, SdnZone> {
    /// `PUT /cluster/sdn/zones/{zone}` of an evpn zone's
    /// `secondary-controllers` (9.2): the list replaces the zone's;
    /// none deletes it.
    ///
    /// # Errors
    /// `controller <id> don't exist`, `<id> is not a evpn controller
    /// type`; a changed digest.
    pub async fn set_secondary_controllers(
        &self,
        zone: &str,
        controllers: &[&str],
        digest: Option<&str>,
    ) -> Result<()> {
        let path = format!("{}/{}", self.path, seg(zone));
        let p = if controllers.is_empty() {
            Params::new().set("delete", "secondary-controllers")
        } else {
            Params::new().array("secondary-controllers", controllers)
        }
        .opt("digest", digest);
        let _: Value = self.client.call(Method::PUT, &path, &p).await?;
        Ok(())
    }
}

impl<'a> Area<'a, SdnVnet> {
    /// `POST /cluster/sdn/vnets` (`create`) with its options (`zone`
    /// among them).
    ///
    /// # Errors
    /// PVE's refusals (tags, unknown zone, ...).
    pub async fn create_vnet(&self, id: &str, opts: &[(&str, &str)]) -> Result<()> {
        self.create(id, "", opts).await
    }
}

/// The subnets of a VNet.
#[derive(Debug, Clone)]
pub struct Subnets<'a> {
    area: Area<'a, SdnSubnet>,
}

impl Subnets<'_> {
    /// `GET .../subnets` (`index`).
    ///
    /// # Errors
    /// `sdn vnet 'x' does not exist`.
    pub async fn index(&self, view: SdnView) -> Result<Vec<SdnSubnet>> {
        self.area.index(view).await
    }

    /// `GET .../subnets/{subnet}` (`read`), by subnet ID
    /// (`<zone>-10.10.0.0-24`).
    ///
    /// # Errors
    /// `sdn subnet 'x' does not exist`.
    pub async fn read(&self, id: &str, view: SdnView) -> Result<SdnSubnet> {
        self.area.read(id, view).await
    }

    /// `POST .../subnets` (`create`) of a CIDR, with options and DHCP
    /// ranges.
    ///
    /// # Errors
    /// PVE's refusals (gateway outside the subnet, ...).
    pub async fn create(
        &self,
        cidr: &str,
        opts: &[(&str, &str)],
        dhcp_ranges: &[DhcpRange],
    ) -> Result<()> {
        let ranges: Vec<String> = dhcp_ranges
            .iter()
            .map(|r| format!("start-address={},end-address={}", r.start, r.end))
            .collect();
        let mut p = with(
            Params::new().set("subnet", cidr).set("type", "subnet"),
            opts,
        );
        if !ranges.is_empty() {
            p = p.array("dhcp-range", &ranges);
        }
        let _: Value = self
            .area
            .client
            .call(Method::POST, &self.area.path, &p)
            .await?;
        Ok(())
    }

    /// `PUT .../subnets/{subnet}` (`update`).
    ///
    /// # Errors
    /// PVE's refusals.
    pub async fn update(
        &self,
        id: &str,
        opts: &[(&str, &str)],
        delete: &[&str],
        digest: Option<&str>,
    ) -> Result<()> {
        self.area.update(id, opts, delete, digest).await
    }

    /// `DELETE .../subnets/{subnet}` (`delete`).
    ///
    /// # Errors
    /// `cannot delete subnet '...', not empty`.
    pub async fn delete(&self, id: &str) -> Result<()> {
        self.area.delete(id).await
    }
}

// ---- a node's view of the applied configuration (`/nodes/{node}/sdn`) ------

/// A zone as a node runs it (`GET /nodes/{node}/sdn/zones`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SdnZoneStatus {
    /// The zone ID.
    pub zone: String,
    /// `available`, `pending` (the node's generated configuration is
    /// older than the running one) or `error`.
    pub status: String,
}

/// A VNet of a zone as a node runs it
/// (`GET /nodes/{node}/sdn/zones/{zone}/content`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SdnVnetStatus {
    /// The VNet ID.
    pub vnet: String,
    /// `available`, `pending` or `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Why it is not `available` (PVE sends null otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statusmsg: Option<String>,
}

/// A port of a zone's bridge
/// (`GET /nodes/{node}/sdn/zones/{zone}/bridges`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SdnBridgePort {
    /// The interface (`tap100i0`, `veth200i0`, `fwpr100p0`, `vxlan_vnet1`).
    pub name: String,
    /// The guest whose NIC it is (PVE sends the digits as text).
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub vmid: Option<u64>,
    /// The guest's NIC (`net0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<String>,
    /// The PVID, on a VLAN-aware bridge.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub primary_vlan: Option<u64>,
    /// The other VLANs (`10`, `20-30`), on a VLAN-aware bridge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vlans: Option<Vec<String>>,
}

/// A bridge of a zone on a node
/// (`GET /nodes/{node}/sdn/zones/{zone}/bridges`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SdnZoneBridge {
    /// The bridge (the VNet, or for `localnetwork` the node's bridge).
    pub name: String,
    /// Whether the kernel's bridge filters VLANs (0 or 1); none where
    /// the bridge does not exist on the node.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub vlan_filtering: Option<u64>,
    /// Its member ports.
    #[serde(default)]
    pub ports: Vec<SdnBridgePort>,
}

/// What applying would change on a node (`GET /cluster/sdn/dry-run`):
/// `diff -u` of each file, none where it would not change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SdnDryRun {
    /// The diff of `/etc/frr/frr.conf`.
    #[serde(rename = "frr-diff", default)]
    pub frr_diff: Option<String>,
    /// The diff of `/etc/network/interfaces.d/sdn`.
    #[serde(rename = "interfaces-diff", default)]
    pub interfaces_diff: Option<String>,
}

/// A route of an EVPN zone's VRF on a node
/// (`GET /nodes/{node}/sdn/zones/{zone}/ip-vrf`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SdnVrfRoute {
    /// The prefix (`10.0.0.0/24`).
    pub ip: String,
    /// Where FRR has it from (`connected`, `local`, `kernel`, `bgp`).
    pub protocol: String,
    /// Its metric.
    pub metric: i64,
    /// Its nexthops: addresses or interfaces.
    #[serde(default)]
    pub nexthops: Vec<String>,
}

/// A MAC/IP entry of an EVPN VNet (`GET /nodes/{node}/sdn/vnets/{vnet}/mac-vrf`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SdnMacVrfEntry {
    /// The guest's address.
    pub ip: String,
    /// The guest NIC's MAC.
    pub mac: String,
    /// The VTEP the guest is behind.
    pub nexthop: String,
}

/// The SDN views of one node; see [`Sdn::node`].
#[derive(Debug, Clone)]
pub struct NodeSdn<'a> {
    client: &'a Client,
    node: String,
}

impl<'a> Sdn<'a> {
    /// The SDN views of `node` (`/nodes/{node}/sdn`). A VNet's firewall
    /// is a [`crate::api::firewall::Scope::Vnet`] of the firewall calls.
    pub fn node(&self, node: &str) -> NodeSdn<'a> {
        NodeSdn {
            client: self.client,
            node: node.to_string(),
        }
    }
}

impl NodeSdn<'_> {
    /// `GET /nodes/{node}/sdn/zones` (PVE's `index` of the node's zones):
    /// the applied zones on the node and their status (none before the
    /// first apply).
    ///
    /// # Errors
    /// As any call (the node must be reachable).
    pub async fn zones(&self) -> Result<Vec<SdnZoneStatus>> {
        let path = format!("/nodes/{}/sdn/zones", seg(&self.node));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `GET /nodes/{node}/sdn/zones/{zone}/content` (PVE's `index` of a
    /// zone's content): the zone's applied VNets on the node and their
    /// status.
    ///
    /// # Errors
    /// `Permission check failed` without SDN.Audit on `/sdn/zones/<zone>`.
    pub async fn zone_content(&self, zone: &str) -> Result<Vec<SdnVnetStatus>> {
        let path = format!("/nodes/{}/sdn/zones/{}/content", seg(&self.node), seg(zone));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `GET /nodes/{node}/sdn/zones/{zone}/bridges` (`bridges`, 9.x): the
    /// zone's bridges on the node (`localnetwork`: the node's own) with
    /// their ports and VLANs.
    ///
    /// # Errors
    /// 400 `zone does not exist` for a zone not applied.
    pub async fn bridges(&self, zone: &str) -> Result<Vec<SdnZoneBridge>> {
        let path = format!("/nodes/{}/sdn/zones/{}/bridges", seg(&self.node), seg(zone));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `GET /nodes/{node}/sdn/zones/{zone}/ip-vrf` (`ip-vrf`, 9.x): the
    /// routes of an EVPN zone's VRF on the node.
    ///
    /// # Errors
    /// 400 on `zone` for a zone not applied, not EVPN or not on the node.
    pub async fn ip_vrf(&self, zone: &str) -> Result<Vec<SdnVrfRoute>> {
        let path = format!("/nodes/{}/sdn/zones/{}/ip-vrf", seg(&self.node), seg(zone));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `GET /nodes/{node}/sdn/vnets/{vnet}/mac-vrf` (`mac-vrf`, 9.x): the
    /// MAC/IP entries of an EVPN VNet, local and learned from the other
    /// VTEPs.
    ///
    /// # Errors
    /// 400 on `vnet` or `zone` for a VNet not applied, not EVPN or not on
    /// the node.
    pub async fn mac_vrf(&self, vnet: &str) -> Result<Vec<SdnMacVrfEntry>> {
        let path = format!("/nodes/{}/sdn/vnets/{}/mac-vrf", seg(&self.node), seg(vnet));
        self.client.call(Method::GET, &path, &Params::new()).await
    }
}
