//! The EVPN tables FRR holds once a configuration is applied and every
//! node of a zone is up, derived from the model rather than read from
//! `vtysh`: the type-2 (MAC/IP) routes of a VNet (`show bgp l2vpn evpn
//! route vni <tag> type 2`, `GET .../vnets/{vnet}/mac-vrf`) and the
//! routes of a zone's VRF (`show ip route vrf vrf_<zone>`,
//! `GET .../zones/{zone}/ip-vrf`).
//!
//! A guest NIC on a VNet is known to FRR once the guest runs on a node
//! the zone covers: its MAC with each address the IPAM maps to it or
//! the guest's configuration sets. Each node's VTEP address is the
//! controller's peer address it holds ([`Host::local_ip`]).

use std::collections::BTreeMap;

use super::{Host, list, opt, subnets_of};
use crate::model::sdn::Sdn;

/// A NIC of a running guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestNic {
    /// The node the guest runs on.
    pub node: String,
    /// The bridge (the VNet).
    pub bridge: String,
    /// The MAC.
    pub mac: String,
    /// The addresses the guest's configuration sets on it.
    pub ips: Vec<String>,
}

/// An entry of a VNet's MAC VRF.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MacRoute {
    /// The MAC (lower case, as FRR prints it).
    pub mac: String,
    /// The address.
    pub ip: String,
    /// The VTEP address of the node the guest runs on.
    pub nexthop: String,
}

/// An installed route of a zone's VRF.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VrfRoute {
    /// The prefix (`10.0.0.0/24`).
    pub ip: String,
    /// `connected`, `local`, `kernel` or `bgp`.
    pub protocol: &'static str,
    /// FRR's metric.
    pub metric: u32,
    /// The nexthops: addresses or interfaces.
    pub nexthops: Vec<String>,
}

/// The metric FRR shows for the kernel's `unreachable default metric
/// 4278198272` (the low 24 bits; the high byte is the distance).
const UNREACHABLE_METRIC: u32 = 4_278_198_272 & 0x00FF_FFFF;

impl Sdn {
    /// The running zone of a running VNet, with the zone.
    fn running_vnet(&self, vnet: &str) -> Option<(String, &crate::model::sdn::Obj)> {
        let r = self.running.as_ref()?;
        let zone = opt(r.vnets.get(vnet)?, "zone")?;
        let z = r.zones.get(&zone)?;
        Some((zone, z))
    }

    /// The VTEP address of `host` in an EVPN zone: the controller's
    /// peer it holds (or the loopback of its BGP or ISIS controller).
    pub fn vtep(&self, zone: &str, host: &Host) -> Option<String> {
        let r = self.running.as_ref()?;
        let z = r.zones.get(zone)?;
        let c = r.controllers.get(&opt(z, "controller")?)?;
        if let Some(fabric) = opt(c, "fabric") {
            let cfg = self.running_compiled()?;
            return cfg.fabric_peers(&fabric, &host.node).map(|x| x.1);
        }
        let peers = list(c, "peers");
        let lo = super::frr::node_loopback(&r.controllers, &host.node);
        host.local_ip(&peers, lo.as_deref()).map(|x| x.0)
    }

    /// The addresses FRR knows for a NIC on `vnet`: the IPAM's for its
    /// MAC in the zone, then those the guest's configuration sets.
    fn nic_ips(&self, zone: &str, nic: &GuestNic) -> Vec<String> {
        let mut ips: Vec<String> = self
            .ipam_db
            .get(zone)
            .into_iter()
            .flat_map(|z| z.values())
            .flat_map(|ips| ips.iter())
            .filter(|(_, e)| {
                e.mac
                    .as_ref()
                    .is_some_and(|m| m.eq_ignore_ascii_case(&nic.mac))
            })
            .map(|(ip, _)| ip.clone())
            .collect();
        for ip in &nic.ips {
            if !ips.contains(ip) {
                ips.push(ip.clone());
            }
        }
        ips
    }

    /// `GET /nodes/{node}/sdn/vnets/{vnet}/mac-vrf` after its checks:
    /// the best type-2 routes with an address, self-originated (guests
    /// on `hosts`' node) and learned from the other VTEPs, in FRR's
    /// order (by route key: MAC, then address length and address).
    pub fn mac_vrf(
        &self,
        vnet: &str,
        hosts: &BTreeMap<String, Host>,
        nics: &[GuestNic],
    ) -> Vec<MacRoute> {
        let Some((zone, z)) = self.running_vnet(vnet) else {
            return Vec::new();
        };
        let mut out = BTreeMap::new();
        for nic in nics.iter().filter(|n| n.bridge == vnet) {
            if z.contains_key("nodes") && !list(z, "nodes").contains(&nic.node) {
                continue;
            }
            let Some(nexthop) = hosts.get(&nic.node).and_then(|h| self.vtep(&zone, h)) else {
                continue;
            };
            let mac = nic.mac.to_ascii_lowercase();
            for ip in self.nic_ips(&zone, nic) {
                let len = if ip.contains(':') { 128 } else { 32 };
                let key = format!("[2]:[0]:[48]:[{mac}]:[{len}]:[{ip}]");
                out.insert(
                    key,
                    MacRoute {
                        mac: mac.clone(),
                        ip,
                        nexthop: nexthop.clone(),
                    },
                );
            }
        }
        out.into_values().collect()
    }

    /// `GET /nodes/{node}/sdn/zones/{zone}/ip-vrf` after its checks: the
    /// installed routes of `vrf_<zone>` on `node`. The gateways' subnets
    /// of the zone's VNets are connected (with the gateway's `local`
    /// host route), other nodes' guests come as BGP host routes with
    /// their VTEP as nexthop, the default route from the exit nodes (the
    /// primary one alone when set), or without exit nodes the kernel's
    /// unreachable default. This host's guests are reached through
    /// their VNet's bridge and do not show.
    pub fn ip_vrf(
        &self,
        node: &str,
        zone: &str,
        hosts: &BTreeMap<String, Host>,
        nics: &[GuestNic],
    ) -> Vec<VrfRoute> {
        let Some(r) = self.running.as_ref() else {
            return Vec::new();
        };
        let Some(z) = r.zones.get(zone) else {
            return Vec::new();
        };
        let vnets: Vec<&String> = r
            .vnets
            .iter()
            .filter(|(_, v)| opt(v, "zone").as_deref() == Some(zone))
            .map(|(id, _)| id)
            .collect();
        let mut out: BTreeMap<(u8, u128, u8), VrfRoute> = BTreeMap::new();
        let mut add = |prefix: String, protocol, metric, nexthops: Vec<String>| {
            let (ip, len) = prefix.split_once('/').unwrap_or((&prefix, "32"));
            let key = (
                u8::from(ip.contains(':')),
                super::frr::ip_int(ip),
                len.parse().unwrap_or(0),
            );
            out.entry(key).or_insert(VrfRoute {
                ip: prefix.clone(),
                protocol,
                metric,
                nexthops,
            });
        };
        for vnet in &vnets {
            for (s, _) in subnets_of(&r.subnets, Some(vnet)) {
                let Some(gw) = s.gateway.clone() else {
                    continue;
                };
                add(s.cidr.clone(), "connected", 0, vec![(*vnet).clone()]);
                let host_len = if gw.contains(':') { 128 } else { 32 };
                if s.mask != host_len {
                    add(
                        format!("{gw}/{host_len}"),
                        "local",
                        0,
                        vec![(*vnet).clone()],
                    );
                }
            }
        }
        for nic in nics {
            if nic.node == node || !vnets.contains(&&nic.bridge) {
                continue;
            }
            if z.contains_key("nodes") && !list(z, "nodes").contains(&nic.node) {
                continue;
            }
            let Some(vtep) = hosts.get(&nic.node).and_then(|h| self.vtep(zone, h)) else {
                continue;
            };
            for ip in self.nic_ips(zone, nic) {
                let len = if ip.contains(':') { 128 } else { 32 };
                let nh = if ip.contains(':') && !vtep.contains(':') {
                    format!("::ffff:{vtep}")
                } else {
                    vtep.clone()
                };
                add(format!("{ip}/{len}"), "bgp", 0, vec![nh]);
            }
        }
        let exits = list(z, "exitnodes");
        if !exits.iter().any(|e| e == node) {
            let primary = opt(z, "exitnodes-primary").filter(|p| exits.contains(p));
            let via: Vec<&String> = match &primary {
                Some(p) => vec![p],
                None => exits.iter().collect(),
            };
            let hops: Vec<String> = via
                .iter()
                .filter_map(|n| hosts.get(*n).and_then(|h| self.vtep(zone, h)))
                .collect();
            if hops.is_empty() {
                add("0.0.0.0/0".into(), "kernel", UNREACHABLE_METRIC, Vec::new());
            } else {
                add("0.0.0.0/0".into(), "bgp", 0, hops.clone());
                let v6 = hops
                    .iter()
                    .map(|h| {
                        if h.contains(':') {
                            h.clone()
                        } else {
                            format!("::ffff:{h}")
                        }
                    })
                    .collect();
                add("::/0".into(), "bgp", 0, v6);
            }
        }
        out.into_values().collect()
    }
}
