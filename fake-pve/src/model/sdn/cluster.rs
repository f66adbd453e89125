//! Where SDN meets the rest of the cluster: applied VNets are bridges a
//! guest NIC may name, zones show in `/cluster/resources`, VNets in a
//! node's network listing, and a guest's start maps its MACs in a DHCP
//! zone's IPAM.

use serde_json::Value;

use super::{Sdn, text};
use crate::model::PveVersion;
use crate::model::nodes::Nodes;

/// The bridges a guest NIC on `node` may use: the node's bridges of
/// its applied network configuration and the applied VNets available
/// there.
pub fn node_bridges(nodes: &Nodes, sdn: &Sdn, node: &str) -> Vec<String> {
    let mut b = nodes
        .iter()
        .find(|n| n.name == node)
        .map(|n| n.bridges.clone())
        .unwrap_or_default();
    b.extend(sdn.vnets_on(node).into_iter().map(|(id, _, _)| id));
    b
}

/// `GET /nodes/{node}/sdn/zones/{zone}/bridges` over the areas it
/// reads: the node's applied Linux bridges, the NICs of the guests
/// running there and the running SDN configuration
/// ([`Sdn::zone_bridges`]).
///
/// # Errors
/// As [`Sdn::zone_bridges`].
pub fn zone_bridges(
    c: &crate::model::cluster::Cluster,
    node: &str,
    zone: &str,
    now: i64,
    may_audit: impl Fn(&str, &str) -> bool,
) -> crate::model::Result<Vec<super::bridges::ZoneBridge>> {
    use super::bridges::{GuestNic, LocalBridge};
    let local: Vec<LocalBridge> = c
        .network
        .node_or_fresh(&c.nodes, node, now)
        .linux_bridges()
        .into_iter()
        .map(|(name, vlan_aware, vids, ports)| LocalBridge {
            name,
            vlan_aware,
            vids,
            ports,
        })
        .collect();
    let nets = |conf: &std::collections::BTreeMap<String, String>, vmid: u32, container: bool| {
        conf.iter()
            .filter_map(|(k, v)| {
                let index = k.strip_prefix("net")?.parse().ok()?;
                Some(GuestNic {
                    vmid,
                    index,
                    container,
                    value: v.clone(),
                })
            })
            .collect::<Vec<_>>()
    };
    let mut nics = Vec::new();
    for vm in c.guests.vms_on(node).filter(|v| v.running()) {
        nics.extend(nets(vm.config(), vm.vmid(), false));
    }
    for ct in c.guests.cts_on(node).filter(|c| c.running()) {
        nics.extend(nets(ct.config(), ct.vmid(), true));
    }
    c.sdn.zone_bridges(node, zone, &local, &nics, may_audit)
}

/// The rows of the running zones in `/cluster/resources`: on 8.4
/// `type=sdn` rows (`status` `available`) beside `localnetwork`
/// (`ok`), sorted by id per node; on 9.x `type=network` rows, first
/// `localnetwork` on every node, then the zones of each node (nodes by
/// name) with their type. `may_audit(zone)` says whether the caller
/// holds SDN.Audit on it.
pub fn zone_resources(
    version: PveVersion,
    nodes: &Nodes,
    sdn: &Sdn,
    kind: Option<&str>,
    may_audit: impl Fn(&str) -> bool,
) -> Vec<ZoneResource> {
    let mut out = Vec::new();
    let v9 = version.is_v9();
    if !v9 && kind.is_none_or(|k| k == "sdn") {
        for n in nodes {
            let mut zones: Vec<ZoneResource> = sdn
                .zones_on(&n.name)
                .into_iter()
                .map(|(id, _)| ZoneResource::Sdn {
                    node: n.name.clone(),
                    zone: id,
                    status: "available",
                })
                .collect();
            zones.push(ZoneResource::Sdn {
                node: n.name.clone(),
                zone: "localnetwork".into(),
                status: "ok",
            });
            zones.sort_by(|a, b| a.zone().cmp(b.zone()));
            out.extend(zones.into_iter().filter(|r| may_audit(r.zone())));
        }
    }
    if v9 && kind.is_none() {
        if may_audit("localnetwork") {
            for n in nodes {
                out.push(ZoneResource::LocalNetwork {
                    node: n.name.clone(),
                });
            }
        }
        let mut names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        names.sort_unstable();
        for node in names {
            for (id, zt) in sdn.zones_on(node) {
                if !may_audit(&id) {
                    continue;
                }
                out.push(ZoneResource::Network {
                    node: node.to_string(),
                    zone: id,
                    zone_type: zt,
                });
            }
        }
    }
    out
}

impl Sdn {
    /// `get_local_vnets`: the applied VNets on `node` as interfaces
    /// (`type` `vnet`), for the network listing's `any_bridge`,
    /// `include_sdn` and `vnet` filters. `may_use(zone, vnet)` says
    /// whether the caller holds SDN.Audit or SDN.Use on the VNet.
    pub fn local_vnets(&self, node: &str, may_use: impl Fn(&str, &str) -> bool) -> Vec<LocalVnet> {
        self.vnets_on(node)
            .into_iter()
            .filter(|(id, v, _)| may_use(&v.get("zone").map(text).unwrap_or_default(), id))
            .map(|(id, v, zone)| LocalVnet {
                vnet: id,
                ipam: zone.contains_key("ipam"),
                vlanaware: v.get("vlanaware").map(text).is_some_and(|x| x == "1"),
                alias: v.get("alias").cloned(),
            })
            .collect()
    }

    /// `add_dhcp_mapping` for each NIC of a starting guest whose bridge is
    /// a VNet.
    ///
    /// # Errors
    /// The IPAM's refusal (no free address in the zone).
    pub(crate) fn map_guest(
        &mut self,
        vmid: u32,
        name: Option<&str>,
        nics: &[(String, String)],
    ) -> crate::model::Result<()> {
        for (bridge, mac) in nics {
            self.add_dhcp_mapping(bridge, mac, vmid, name)?;
        }
        Ok(())
    }
}

/// A running zone's row in `/cluster/resources`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ZoneResource {
    /// 8.4: a `type=sdn` row of a node (`localnetwork` too).
    Sdn {
        /// The node.
        node: String,
        /// The zone.
        zone: String,
        /// `available`, or `ok` for `localnetwork`.
        status: &'static str,
    },
    /// 9.x: a node's `localnetwork` zone (`type=network`, status `ok`).
    LocalNetwork {
        /// The node.
        node: String,
    },
    /// 9.x: a running zone on a node (`type=network`, status
    /// `available`).
    Network {
        /// The node.
        node: String,
        /// The zone.
        zone: String,
        /// The zone's type.
        zone_type: String,
    },
}

impl ZoneResource {
    /// The zone the row shows (the ACL path's).
    pub fn zone(&self) -> &str {
        match self {
            ZoneResource::Sdn { zone, .. } | ZoneResource::Network { zone, .. } => zone,
            ZoneResource::LocalNetwork { .. } => "localnetwork",
        }
    }
}

/// An applied VNet on a node, as the network listing shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalVnet {
    /// The VNet.
    pub vnet: String,
    /// Whether its zone has an IPAM.
    pub ipam: bool,
    /// Whether it is VLAN-aware.
    pub vlanaware: bool,
    /// Its `alias` as configured.
    pub alias: Option<Value>,
}

/// The bridge and MAC of a NIC value (`virtio=BC:24:11:..,bridge=vnet1`).
pub fn nic_bridge_mac(value: &str) -> Option<(String, String)> {
    let bridge = value
        .split(',')
        .find_map(|p| p.strip_prefix("bridge="))?
        .to_string();
    let mac = value.split(',').find_map(|p| {
        let (_, v) = p.split_once('=')?;
        (v.len() == 17 && v.bytes().filter(|b| *b == b':').count() == 5).then(|| v.to_string())
    })?;
    Some((bridge, mac))
}
