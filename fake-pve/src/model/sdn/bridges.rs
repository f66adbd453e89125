//! `GET /nodes/{node}/sdn/zones/{zone}/bridges` (pve-network
//! `API2/Network/SDN/Nodes/Zone.pm` `bridges`): the bridges of a zone on
//! a node with their member ports, as `ip -d link` and `bridge vlan`
//! show them once the configuration is applied.
//!
//! A zone's bridges are its running VNets (`localnetwork`: the node's
//! Linux bridges). A VNet's bridge exists on the nodes its zone covers;
//! elsewhere it is listed without `vlan_filtering` or ports. Its ports
//! are the uplink the zone's plugin generates (`vmbr0.10` or `ln_<vnet>`
//! for a VLAN zone, `vxlan_<vnet>` for VXLAN and EVPN, `z_<zone>.<tag>`
//! or `pr_<zone>` for QinQ, none for a simple zone) and the NICs of the
//! running guests: `tap<vmid>i<n>` (QEMU), `veth<vmid>i<n>` (LXC) or,
//! with the firewall, `fwpr<vmid>p<n>`. On a VLAN-aware bridge a port
//! carries the VLANs `tap_plug` gives it: its `tag` untagged as the PVID
//! (1 without a tag) and its `trunks`, or `2-4094` without tag and
//! trunks.

use std::collections::BTreeSet;

use super::{Sdn, text};
use crate::model::{Error, Result};

/// A port of a bridge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgePort {
    /// The interface.
    pub name: String,
    /// The guest and its NIC (`net0`), for a guest's port.
    pub guest: Option<(u32, String)>,
    /// On a VLAN-aware bridge: the PVID and the other VLANs (`10`,
    /// `20-30`).
    pub vlans: Option<(u32, Vec<String>)>,
}

/// A bridge of a zone on a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneBridge {
    /// The bridge (the VNet).
    pub name: String,
    /// `vlan_filtering` of the kernel's bridge (0 or 1); none where the
    /// bridge does not exist on the node.
    pub vlan_filtering: Option<u8>,
    /// Its member ports.
    pub ports: Vec<BridgePort>,
}

/// A Linux bridge of the node's applied network configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalBridge {
    /// The bridge.
    pub name: String,
    /// `bridge_vlan_aware`.
    pub vlan_aware: bool,
    /// `bridge_vids` (`2-4094` when unset).
    pub vids: String,
    /// `bridge_ports`.
    pub ports: Vec<String>,
}

/// A NIC of a guest running on the node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestNic {
    /// The guest.
    pub vmid: u32,
    /// `n` of `net<n>`.
    pub index: u32,
    /// Whether the guest is a container (`veth`) rather than a VM (`tap`).
    pub container: bool,
    /// The NIC's settings (`bridge=vnet1,tag=10,firewall=1,...`).
    pub value: String,
}

impl GuestNic {
    fn opt(&self, key: &str) -> Option<&str> {
        self.value.split(',').find_map(|p| {
            let (k, v) = p.split_once('=')?;
            (k == key).then_some(v)
        })
    }

    /// The interface that is the bridge's port.
    fn port_name(&self) -> String {
        if self.opt("firewall") == Some("1") {
            format!("fwpr{}p{}", self.vmid, self.index)
        } else if self.container {
            format!("veth{}i{}", self.vmid, self.index)
        } else {
            format!("tap{}i{}", self.vmid, self.index)
        }
    }
}

/// VLAN IDs of a `bridge vlan add ... vid` list (`10`, `20-30`, joined
/// by `;` or `,`).
fn vids(list: &str) -> BTreeSet<u32> {
    let mut out = BTreeSet::new();
    for item in list.split([';', ',', ' ']).filter(|s| !s.is_empty()) {
        let (a, b) = item.split_once('-').unwrap_or((item, item));
        if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
            out.extend((a..=b.min(4094)).filter(|v| *v >= 1));
        }
    }
    out
}

/// The PVID and the other VLANs as `bridge -j vlan show` groups them:
/// runs of consecutive IDs as ranges, the PVID apart.
pub fn port_vlans(pvid: u32, vids: &BTreeSet<u32>) -> (u32, Vec<String>) {
    let mut out = Vec::new();
    let mut run: Option<(u32, u32)> = None;
    let flush = |run: Option<(u32, u32)>, out: &mut Vec<String>| {
        if let Some((a, b)) = run {
            out.push(if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            });
        }
    };
    for &v in vids.iter().filter(|v| **v != pvid) {
        run = match run {
            Some((a, b)) if b + 1 == v && !(a..=v).contains(&pvid) => Some((a, v)),
            prev => {
                flush(prev, &mut out);
                Some((v, v))
            }
        };
    }
    flush(run, &mut out);
    (pvid, out)
}

/// The VLANs `tap_plug` gives a guest's port on a VLAN-aware bridge.
fn guest_vlans(nic: &GuestNic) -> (u32, Vec<String>) {
    let tag = nic.opt("tag").and_then(|t| t.parse::<u32>().ok());
    let set = match (nic.opt("trunks"), tag) {
        (Some(t), _) => vids(t),
        (None, None) => vids("2-4094"),
        (None, Some(_)) => BTreeSet::new(),
    };
    port_vlans(tag.unwrap_or(1), &set)
}

/// The guests' ports on `bridge`, by name.
fn guest_ports(bridge: &str, vlan_aware: bool, nics: &[GuestNic]) -> Vec<BridgePort> {
    nics.iter()
        .filter(|n| n.opt("bridge") == Some(bridge))
        .map(|n| BridgePort {
            name: n.port_name(),
            guest: Some((n.vmid, format!("net{}", n.index))),
            vlans: vlan_aware.then(|| guest_vlans(n)),
        })
        .collect()
}

/// A port that ifupdown2 set up with the bridge's `bridge-vids`.
fn plain_port(name: String, vlan_aware: bool, vids_list: &str) -> BridgePort {
    BridgePort {
        name,
        guest: None,
        vlans: vlan_aware.then(|| port_vlans(1, &vids(vids_list))),
    }
}

impl Sdn {
    /// `bridges` of zone `zone` on `node`: `localnetwork` lists the
    /// node's Linux bridges (`local`), any other zone its running VNets.
    /// `nics` are the NICs of the guests running on the node, `local`
    /// its bridges, `may_audit(zone, bridge)` whether the caller holds
    /// SDN.Audit or SDN.Allocate on `/sdn/zones/<zone>/<bridge>`. Sorted
    /// by name.
    ///
    /// # Errors
    /// 400 `zone: zone does not exist` for a zone not applied.
    pub fn zone_bridges(
        &self,
        node: &str,
        zone: &str,
        local: &[LocalBridge],
        nics: &[GuestNic],
        may_audit: impl Fn(&str, &str) -> bool,
    ) -> Result<Vec<ZoneBridge>> {
        let mut out = Vec::new();
        if zone == "localnetwork" {
            for b in local.iter().filter(|b| may_audit(zone, &b.name)) {
                let mut ports: Vec<BridgePort> = b
                    .ports
                    .iter()
                    .map(|p| plain_port(p.clone(), b.vlan_aware, &b.vids))
                    .collect();
                ports.extend(guest_ports(&b.name, b.vlan_aware, nics));
                out.push(ZoneBridge {
                    name: b.name.clone(),
                    vlan_filtering: Some(u8::from(b.vlan_aware)),
                    ports,
                });
            }
            return Ok(out);
        }
        let no_zone = || Error::invalid("zone", "zone does not exist");
        let running = self.running.as_ref().ok_or_else(no_zone)?;
        let z = running.zones.get(zone).ok_or_else(no_zone)?;
        let here = z
            .get("nodes")
            .map(text)
            .is_none_or(|n| n.split(',').any(|x| x == node));
        let kind = z.get("type").map(text).unwrap_or_default();
        for (id, v) in running
            .vnets
            .iter()
            .filter(|(_, v)| v.get("zone").map(text).as_deref() == Some(zone))
        {
            if !may_audit(zone, id) {
                continue;
            }
            if !here {
                out.push(ZoneBridge {
                    name: id.clone(),
                    vlan_filtering: None,
                    ports: Vec::new(),
                });
                continue;
            }
            let aware = v.get("vlanaware").map(text).is_some_and(|x| x == "1");
            let tag = v.get("tag").map(text).filter(|t| !t.is_empty());
            let uplink = match kind.as_str() {
                "vlan" => {
                    let bridge = z.get("bridge").map(text).unwrap_or_default();
                    let under_aware = local.iter().any(|b| b.name == bridge && b.vlan_aware);
                    match tag {
                        Some(t) if under_aware => Some(format!("{bridge}.{t}")),
                        _ => Some(format!("ln_{id}")),
                    }
                }
                "qinq" => Some(match tag {
                    Some(t) => format!("z_{zone}.{t}"),
                    None => format!("pr_{zone}"),
                }),
                "vxlan" | "evpn" => Some(format!("vxlan_{id}")),
                _ => None,
            };
            let mut ports: Vec<BridgePort> = uplink
                .into_iter()
                .map(|p| plain_port(p, aware, "2-4094"))
                .collect();
            ports.extend(guest_ports(id, aware, nics));
            out.push(ZoneBridge {
                name: id.clone(),
                vlan_filtering: Some(u8::from(aware)),
                ports,
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[rstest]
    #[case(1, "2-4094", &["2-4094"])]
    #[case(5, "1-10", &["1-4", "6-10"])]
    #[case(10, "10;20", &["20"])]
    #[case(1, "10;11;12;20-30", &["10-12", "20-30"])]
    #[case(7, "", &[])]
    fn vlans_as_bridge_shows_them(#[case] pvid: u32, #[case] list: &str, #[case] want: &[&str]) {
        assert_eq!(port_vlans(pvid, &vids(list)).1, want);
    }

    fn nic(vmid: u32, index: u32, container: bool, value: &str) -> GuestNic {
        GuestNic {
            vmid,
            index,
            container,
            value: value.into(),
        }
    }

    #[rstest]
    #[case(nic(100, 0, false, "virtio=BC:24:11:00:00:01,bridge=vnet1"), "tap100i0", (1, vec!["2-4094".to_string()]))]
    #[case(nic(100, 1, false, "virtio=BC:24:11:00:00:01,bridge=vnet1,firewall=1,tag=20"), "fwpr100p1", (20, vec![]))]
    #[case(nic(200, 0, true, "name=eth0,bridge=vnet1,trunks=30;40-41"), "veth200i0", (1, vec!["30".to_string(), "40-41".to_string()]))]
    fn guest_ports_as_tap_plug_makes_them(
        #[case] n: GuestNic,
        #[case] name: &str,
        #[case] vlans: (u32, Vec<String>),
    ) {
        let ports = guest_ports("vnet1", true, std::slice::from_ref(&n));
        assert_eq!(ports.len(), 1);
        assert_eq!(ports[0].name, name);
        assert_eq!(ports[0].vlans, Some(vlans));
        assert_eq!(ports[0].guest, Some((n.vmid, format!("net{}", n.index))));
        assert!(guest_ports("vnet1", false, &[n])[0].vlans.is_none());
    }
}
