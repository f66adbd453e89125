//! Where SDN meets the rest of the cluster: applied VNets are bridges a
//! guest NIC may name, zones show in `/cluster/resources`, VNets in a
//! node's network listing, and a guest's start maps its MACs in a DHCP
//! zone's IPAM.

use serde_json::{Value, json};

use super::{Sdn, text};
use crate::model::Cluster;

impl Cluster {
    /// The SDN configuration.
    pub fn sdn(&self) -> &Sdn {
        &self.sdn
    }

    /// The SDN configuration, to change.
    pub fn sdn_mut(&mut self) -> &mut Sdn {
        &mut self.sdn
    }

    /// The bridges a guest NIC on `node` may use: the node's bridges of
    /// its applied network configuration and the applied VNets available
    /// there.
    pub fn node_bridges(&self, node: &str) -> Vec<String> {
        let mut b = self
            .nodes
            .iter()
            .find(|n| n.name == node)
            .map(|n| n.bridges.clone())
            .unwrap_or_default();
        b.extend(self.sdn.vnets_on(node).into_iter().map(|(id, _, _)| id));
        b
    }

    /// The rows of the running zones in `/cluster/resources`: on 8.4
    /// `type=sdn` rows (`sdn/<node>/<zone>`, `status` `available`) beside
    /// `localnetwork`, sorted by id per node; on 9.x `type=network` rows
    /// (`network/<node>/zone/<zone>`) with their `zone-type`.
    /// `may_audit(zone)` says whether the caller holds SDN.Audit on it.
    pub fn sdn_resources(
        &self,
        kind: Option<&str>,
        may_audit: impl Fn(&str) -> bool,
    ) -> Vec<Value> {
        let mut out = Vec::new();
        let v9 = self.version.is_v9();
        if !v9 && kind.is_none_or(|k| k == "sdn") {
            for n in &self.nodes {
                let mut zones: Vec<(String, Value)> = self
                    .sdn
                    .zones_on(&n.name)
                    .into_iter()
                    .map(|(id, _)| {
                        let row = json!({
                            "id": format!("sdn/{}/{id}", n.name),
                            "sdn": id,
                            "node": n.name,
                            "type": "sdn",
                            "status": "available",
                        });
                        (id, row)
                    })
                    .collect();
                zones.push((
                    "localnetwork".into(),
                    json!({
                        "id": format!("sdn/{}/localnetwork", n.name),
                        "sdn": "localnetwork",
                        "node": n.name,
                        "type": "sdn",
                        "status": "ok",
                    }),
                ));
                zones.sort_by(|a, b| a.0.cmp(&b.0));
                out.extend(
                    zones
                        .into_iter()
                        .filter(|(id, _)| may_audit(id))
                        .map(|(_, r)| r),
                );
            }
        }
        if v9 && kind.is_none() {
            if may_audit("localnetwork") {
                for n in &self.nodes {
                    out.push(json!({
                        "id": format!("network/{}/zone/localnetwork", n.name),
                        "network": "localnetwork",
                        "network-type": "zone",
                        "zone-type": "local",
                        "node": n.name,
                        "type": "network",
                        "status": "ok",
                    }));
                }
            }
            let mut names: Vec<&str> = self.nodes.iter().map(|n| n.name.as_str()).collect();
            names.sort_unstable();
            for node in names {
                for (id, zt) in self.sdn.zones_on(node) {
                    if !may_audit(&id) {
                        continue;
                    }
                    out.push(json!({
                        "id": format!("network/{node}/zone/{id}"),
                        "node": node,
                        "network": id,
                        "network-type": "zone",
                        "zone-type": zt,
                        "type": "network",
                        "status": "available",
                    }));
                }
            }
        }
        out
    }

    /// `get_local_vnets`: the applied VNets on `node` as interfaces
    /// (`type` `vnet`), for the network listing's `any_bridge`,
    /// `include_sdn` and `vnet` filters. `may_use(zone, vnet)` says
    /// whether the caller holds SDN.Audit or SDN.Use on the VNet.
    pub fn sdn_local_vnets(&self, node: &str, may_use: impl Fn(&str, &str) -> bool) -> Vec<Value> {
        self.sdn
            .vnets_on(node)
            .into_iter()
            .filter(|(id, v, _)| may_use(&v.get("zone").map(text).unwrap_or_default(), id))
            .map(|(id, v, zone)| {
                let mut item = json!({
                    "iface": id,
                    "type": "vnet",
                    "active": "1",
                    "ipam": u8::from(zone.contains_key("ipam")),
                    "vlanaware": u8::from(v.get("vlanaware").map(text).is_some_and(|x| x == "1")),
                });
                if let Some(alias) = v.get("alias") {
                    item["comments"] = alias.clone();
                }
                item
            })
            .collect()
    }

    /// `add_dhcp_mapping` for each NIC of a starting guest whose bridge is
    /// a VNet.
    ///
    /// # Errors
    /// The IPAM's refusal (no free address in the zone).
    pub(crate) fn sdn_map_guest(
        &mut self,
        vmid: u32,
        name: Option<&str>,
        nics: &[(String, String)],
    ) -> crate::model::Result<()> {
        for (bridge, mac) in nics {
            self.sdn.add_dhcp_mapping(bridge, mac, vmid, name)?;
        }
        Ok(())
    }
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
