//! A node's view of the applied SDN configuration
//! (`PVE::Network::SDN::Zones::status` behind `/nodes/{node}/sdn/zones`
//! and `.../zones/{zone}/content`), and the running VNets a VNet firewall
//! is keyed by.
//!
//! A node generates its `/etc/network/interfaces.d/sdn` when the
//! configuration is applied (`PUT /cluster/sdn`) and fake-pve runs
//! nothing that could fail there, so every zone and VNet the running
//! configuration puts on a node is `available`; before the first apply
//! there is no running configuration and so no status at all.

use std::collections::BTreeMap;

use super::{Sdn, text};
use crate::model::{Error, Result};

/// The status of one VNet on a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VnetStatus {
    /// Its running zone.
    pub zone: String,
    /// `available`, `pending` or `error`.
    pub status: &'static str,
    /// Why it is not `available`.
    pub statusmsg: Option<String>,
}

/// The zones' status by zone and the VNets' by VNet, as `Zones::status`
/// answers them.
pub type NodeStatus = (BTreeMap<String, &'static str>, BTreeMap<String, VnetStatus>);

impl Sdn {
    /// `Zones::status` on `node`: the running zones that cover it and the
    /// running VNets of those zones, each `available`; `None` before the
    /// first apply (no running version).
    pub fn node_status(&self, node: &str) -> Option<NodeStatus> {
        self.running_version()?;
        let zones = self
            .zones_on(node)
            .into_iter()
            .map(|(id, _)| (id, "available"))
            .collect();
        let vnets = self
            .vnets_on(node)
            .into_iter()
            .map(|(id, v, _)| {
                let st = VnetStatus {
                    zone: v.get("zone").map(text).unwrap_or_default(),
                    status: "available",
                    statusmsg: None,
                };
                (id, st)
            })
            .collect();
        Some((zones, vnets))
    }

    /// `GET /nodes/{node}/sdn/zones`: every running zone on the node with
    /// its status, sorted (PVE lists them whatever the caller may audit).
    pub fn node_zones(&self, node: &str) -> Vec<(String, &'static str)> {
        self.node_status(node)
            .map(|(zones, _)| zones.into_iter().collect())
            .unwrap_or_default()
    }

    /// `GET /nodes/{node}/sdn/zones/{zone}/content`: the zone's running
    /// VNets on the node with their status, sorted by VNet. An unknown
    /// zone, or one not on the node, has none.
    pub fn zone_content(&self, node: &str, zone: &str) -> Vec<(String, VnetStatus)> {
        self.node_status(node)
            .map(|(_, vnets)| vnets.into_iter().filter(|(_, v)| v.zone == zone).collect())
            .unwrap_or_default()
    }

    /// The zone of a VNet of the running configuration, which a VNet
    /// firewall call needs (`check_vnet_access` of pve-firewall reads the
    /// running VNets).
    ///
    /// # Errors
    /// `invalid vnet specified` for a VNet not applied.
    pub fn running_vnet_zone(&self, vnet: &str) -> Result<String> {
        self.running
            .as_ref()
            .and_then(|r| r.vnets.get(vnet))
            .map(|v| v.get("zone").map(text).unwrap_or_default())
            .ok_or_else(|| Error::failed("invalid vnet specified"))
    }

    /// The checks of `GET /nodes/{node}/sdn/zones/{zone}/ip-vrf` (9.x)
    /// before it reads the zone's VRF from FRR: the zone is a running
    /// EVPN zone that covers `node`.
    ///
    /// # Errors
    /// 400 on `zone`: `zone does not exist`, `zone is not an EVPN zone`,
    /// `zone does not exist on node <node>`.
    pub fn check_ip_vrf(&self, node: &str, zone: &str) -> Result<()> {
        let z = self
            .running
            .as_ref()
            .and_then(|r| r.zones.get(zone))
            .ok_or_else(|| Error::invalid("zone", "zone does not exist"))?;
        if z.get("type").map(text).as_deref() != Some("evpn") {
            return Err(Error::invalid("zone", "zone is not an EVPN zone"));
        }
        if !covers(z, node) {
            return Err(Error::invalid(
                "zone",
                format!("zone does not exist on node {node}"),
            ));
        }
        Ok(())
    }

    /// The checks of `GET /nodes/{node}/sdn/vnets/{vnet}/mac-vrf` (9.x)
    /// after the access check, before it reads the VNet's EVPN routes
    /// from FRR: the VNet is running, in a running EVPN zone that covers
    /// `node`.
    ///
    /// # Errors
    /// 400 `vnet: vnet does not exist`; on `zone`: `zone <z> does not
    /// exist`, `zone <z> is not an EVPN zone.`, `zone <z> of vnet <v>
    /// does not exist on node <node>`.
    pub fn check_mac_vrf(&self, node: &str, vnet: &str) -> Result<()> {
        let running = self.running.as_ref();
        let v = running
            .and_then(|r| r.vnets.get(vnet))
            .ok_or_else(|| Error::invalid("vnet", "vnet does not exist"))?;
        let zone = v.get("zone").map(text).unwrap_or_default();
        let z = running
            .and_then(|r| r.zones.get(&zone))
            .ok_or_else(|| Error::invalid("zone", format!("zone {zone} does not exist")))?;
        if z.get("type").map(text).as_deref() != Some("evpn") {
            return Err(Error::invalid(
                "zone",
                format!("zone {zone} is not an EVPN zone."),
            ));
        }
        if !covers(z, node) {
            return Err(Error::invalid(
                "zone",
                format!("zone {zone} of vnet {vnet} does not exist on node {node}"),
            ));
        }
        Ok(())
    }
}

/// Whether a zone's `nodes` (none: every node) include `node`.
fn covers(zone: &super::Obj, node: &str) -> bool {
    zone.get("nodes")
        .map(text)
        .is_none_or(|n| n.split([',', '\0']).any(|x| x == node))
}
