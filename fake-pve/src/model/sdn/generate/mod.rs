//! What pve-network generates from an SDN configuration for one node:
//! `/etc/network/interfaces.d/sdn` ([`interfaces`], the zone plugins'
//! `generate_sdn_config`) and `/etc/frr/frr.conf` ([`frr`], the
//! controllers' `generate_frr_config` laid out as the FRR templates
//! lay it out), the `GET /cluster/sdn/dry-run` diff of both between the
//! running and the pending configuration, and the EVPN tables FRR would
//! hold once a configuration is applied ([`vrf`]).
//!
//! Generation reads the node's applied network configuration
//! ([`Host`]): its bridges, addresses, MTUs and default route.

pub mod cluster;
pub mod frr;
pub mod interfaces;
pub mod vrf;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

use super::{Obj, Sdn, Section, text};
use crate::model::network::{IfaceValue, NodeNetwork};

/// An interface of the node's applied network configuration, as the
/// generators read it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostIface {
    /// `type` (`bridge`, `OVSBridge`, `eth`, ...).
    pub kind: String,
    /// The IPv4 address (without its prefix length).
    pub address: Option<String>,
    /// The IPv4 prefix length.
    pub prefix: Option<u8>,
    /// The IPv6 address (without its prefix length).
    pub address6: Option<String>,
    /// The IPv4 default gateway set on it.
    pub gateway: Option<String>,
    /// The IPv6 default gateway set on it.
    pub gateway6: Option<String>,
    /// `mtu`.
    pub mtu: Option<u32>,
    /// `bridge_vlan_aware`.
    pub vlan_aware: bool,
    /// The bridge's or bond's ports.
    pub ports: Vec<String>,
}

/// A node as the generators see it: its name and applied interfaces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Host {
    /// The node's name (`hostname` of FRR's configuration).
    pub node: String,
    /// The interfaces by name.
    pub ifaces: BTreeMap<String, HostIface>,
    /// The physical NICs.
    pub physical: BTreeSet<String>,
    /// The node's cluster address (the source of its routes when no
    /// interface carries a better one).
    pub ip: String,
}

impl Host {
    /// The node's applied network configuration as the generators read it.
    pub fn of(node: &str, ip: &str, net: &NodeNetwork) -> Self {
        let txt = |v: Option<&IfaceValue>| match v {
            Some(IfaceValue::Text(s)) if !s.is_empty() => Some(s.clone()),
            Some(IfaceValue::Int(n)) => Some(n.to_string()),
            _ => None,
        };
        let mut ifaces = BTreeMap::new();
        for (name, c) in &net.current {
            let addr = txt(c.get("address")).or_else(|| txt(c.get("cidr")));
            let (address, prefix) = match addr {
                Some(a) => match a.split_once('/') {
                    Some((ip, p)) => (Some(ip.to_string()), p.parse().ok()),
                    None => (Some(a), txt(c.get("netmask")).and_then(|m| mask_len(&m))),
                },
                None => (None, None),
            };
            let address6 =
                txt(c.get("address6")).map(|a| a.split('/').next().unwrap_or_default().to_string());
            let ports = ["bridge_ports", "ovs_ports", "slaves", "ovs_bonds"]
                .iter()
                .filter_map(|k| txt(c.get(*k)))
                .flat_map(|v| crate::model::network::split_list(&v))
                .filter(|p| p != "none")
                .collect();
            ifaces.insert(
                name.clone(),
                HostIface {
                    kind: txt(c.get("type")).unwrap_or_default(),
                    address,
                    prefix,
                    address6,
                    gateway: txt(c.get("gateway")),
                    gateway6: txt(c.get("gateway6")),
                    mtu: txt(c.get("mtu")).and_then(|m| m.parse().ok()),
                    vlan_aware: txt(c.get("bridge_vlan_aware")).is_some_and(|v| v == "1"),
                    ports,
                },
            );
        }
        Self {
            node: node.to_string(),
            ifaces,
            physical: net.physical.clone(),
            ip: ip.to_string(),
        }
    }

    /// `get_local_route_ip`: the source address and interface of the
    /// node's route to `dest`: the interface whose subnet holds it, else
    /// the one with the default gateway of its family.
    pub fn route_to(&self, dest: &str) -> Option<(String, String)> {
        let v6 = dest.contains(':');
        if !v6 {
            for (name, i) in &self.ifaces {
                if let (Some(a), Some(p)) = (&i.address, i.prefix)
                    && same_net_v4(a, dest, p)
                {
                    return Some((a.clone(), name.clone()));
                }
            }
        }
        self.ifaces.iter().find_map(|(name, i)| {
            if v6 {
                i.gateway6.as_ref()?;
                Some((i.address6.clone()?, name.clone()))
            } else {
                i.gateway.as_ref()?;
                Some((i.address.clone()?, name.clone()))
            }
        })
    }

    /// `find_local_ip_interface_peers`: the address of `loopback` if it
    /// has one, else the interface holding one of `peers`, else the route
    /// source towards the first peer.
    pub fn local_ip(&self, peers: &[String], loopback: Option<&str>) -> Option<(String, String)> {
        if let Some(lo) = loopback
            && let Some(a) = self.ifaces.get(lo).and_then(|i| i.address.clone())
        {
            return Some((a, lo.to_string()));
        }
        for p in peers {
            for (name, i) in &self.ifaces {
                if i.address.as_deref() == Some(p.as_str()) {
                    return Some((p.clone(), name.clone()));
                }
            }
        }
        let first = peers.first()?;
        self.route_to(first)
    }

    /// A bridge or interface of the node's network.
    pub fn iface(&self, name: &str) -> Option<&HostIface> {
        self.ifaces.get(name)
    }
}

/// A dotted netmask or a prefix length as a prefix length.
fn mask_len(m: &str) -> Option<u8> {
    if let Ok(n) = m.parse::<u8>() {
        return Some(n);
    }
    let ip: std::net::Ipv4Addr = m.parse().ok()?;
    u8::try_from(u32::from(ip).count_ones()).ok()
}

/// Whether two IPv4 addresses share a `/prefix` network.
fn same_net_v4(a: &str, b: &str, prefix: u8) -> bool {
    let (Ok(a), Ok(b)) = (
        a.parse::<std::net::Ipv4Addr>(),
        b.parse::<std::net::Ipv4Addr>(),
    ) else {
        return false;
    };
    let mask = if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(prefix.min(32)))
    };
    u32::from(a) & mask == u32::from(b) & mask
}

/// The configuration a generation reads: the compiled sections (the
/// running ones, or in a dry run the configuration as written with the
/// running version) and the running subnets, which the zone plugins
/// read for a VNet's addresses whichever configuration they generate.
#[derive(Debug, Clone, Copy)]
pub struct Compiled<'a> {
    /// `#version` of the generated interfaces file.
    pub version: u64,
    /// The zones.
    pub zones: &'a Section,
    /// The VNets.
    pub vnets: &'a Section,
    /// The subnets compiled with the rest.
    pub subnets: &'a Section,
    /// The controllers.
    pub controllers: &'a Section,
    /// The running subnets.
    pub running_subnets: &'a Section,
    /// The running fabrics (zones and controllers on a fabric read its
    /// nodes' addresses).
    pub fabrics: Option<&'a super::fabrics::Fabrics>,
}

impl Compiled<'_> {
    /// A fabric's nodes' addresses (sorted by node) and `node`'s, for a
    /// zone or controller on `fabric`; none when the fabric or the
    /// node's address is missing (PVE warns and skips it).
    pub fn fabric_peers(&self, fabric: &str, node: &str) -> Option<(Vec<String>, String)> {
        let nodes = self.fabrics?.fabric_nodes(fabric).ok()?;
        let ip =
            |o: &Obj| opt(o, "ip").map(|a| a.split('/').next().unwrap_or_default().to_string());
        let own = ip(nodes.get(node)?)?;
        Some((nodes.values().filter_map(ip).collect(), own))
    }
}

/// An option's text.
pub(crate) fn opt(o: &Obj, k: &str) -> Option<String> {
    o.get(k).map(text).filter(|s| !s.is_empty())
}

/// A flag option (`1`).
pub(crate) fn flag(o: &Obj, k: &str) -> bool {
    opt(o, k).is_some_and(|v| v == "1")
}

/// A list option (`nodes`, `exitnodes`, `peers`): a JSON list or text
/// separated by commas, semicolons or white space.
pub(crate) fn list(o: &Obj, k: &str) -> Vec<String> {
    match o.get(k) {
        Some(serde_json::Value::Array(a)) => a.iter().map(text).collect(),
        Some(v) => text(v)
            .split(|c: char| c == ',' || c == ';' || c == '\0' || c.is_whitespace())
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect(),
        None => Vec::new(),
    }
}

/// A subnet as `sdn_subnets_config` completes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubnetInfo {
    /// The subnet's id.
    pub id: String,
    /// Its zone (from the id).
    pub zone: String,
    /// `10.0.0.0/24`.
    pub cidr: String,
    /// The network address.
    pub network: String,
    /// The prefix length.
    pub mask: u8,
    /// The gateway.
    pub gateway: Option<String>,
    /// `snat`.
    pub snat: bool,
}

/// `get_subnets`: the subnets of `subnets` (of `vnet` if given), by id.
pub(crate) fn subnets_of(subnets: &Section, vnet: Option<&str>) -> Vec<(SubnetInfo, String)> {
    subnets
        .iter()
        .filter_map(|(id, s)| {
            let v = opt(s, "vnet")?;
            if vnet.is_some_and(|x| x != v) {
                return None;
            }
            let (zone, network, mask) = super::split_subnet_id(id)?;
            Some((
                SubnetInfo {
                    id: id.clone(),
                    zone: zone.to_string(),
                    cidr: format!("{network}/{mask}"),
                    network: network.to_string(),
                    mask: mask.parse().ok()?,
                    gateway: opt(s, "gateway"),
                    snat: flag(s, "snat"),
                },
                v,
            ))
        })
        .collect()
}

/// What `GET /cluster/sdn/dry-run` answers: the diffs, none where the
/// files would not change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DryRun {
    /// `frr-diff`.
    pub frr: Option<String>,
    /// `interfaces-diff`.
    pub interfaces: Option<String>,
}

/// `/etc/frr/frr.conf` as the frr package installs it, before SDN
/// writes it.
pub const FRR_PACKAGE_CONF: &str = "\
# default to using syslog. /etc/rsyslog.d/45-frr.conf places the log in
# /var/log/frr/frr.log
#
# Note:
# FRR's configuration shell, vtysh, dynamically edits the live, in-memory
# configuration while FRR is running. When instructed, vtysh will persist the
# live configuration to this file, overwriting its contents. If you want to
# avoid this, you can edit this file manually before starting FRR, or instruct
# vtysh to write configuration to a different file.
log syslog informational
";

impl Sdn {
    /// The running configuration as a generation reads it (empty before
    /// the first apply).
    pub fn running_compiled(&self) -> Option<Compiled<'_>> {
        let r = self.running.as_ref()?;
        Some(Compiled {
            version: r.version,
            zones: &r.zones,
            vnets: &r.vnets,
            subnets: &r.subnets,
            controllers: &r.controllers,
            running_subnets: &r.subnets,
            fabrics: Some(&r.fabrics),
        })
    }

    /// `compile_running_cfg(1)`: the configuration as written, with the
    /// running version (1 before the first apply).
    pub fn pending_compiled<'a>(&'a self, empty: &'a Section) -> Compiled<'a> {
        Compiled {
            version: self.running.as_ref().map_or(1, |r| r.version),
            zones: &self.zones,
            vnets: &self.vnets,
            subnets: &self.subnets,
            controllers: &self.controllers,
            running_subnets: self.running.as_ref().map_or(empty, |r| &r.subnets),
            fabrics: self.running.as_ref().map(|r| &r.fabrics),
        }
    }

    /// The files the last apply wrote on the node: the interfaces file
    /// (none before the first apply) and `frr.conf` (the package's until
    /// an apply with controllers or fabrics wrote it).
    pub fn applied_files(&self, host: &Host) -> (Option<String>, String) {
        let Some(r) = self.running_compiled() else {
            return (None, FRR_PACKAGE_CONF.to_string());
        };
        let ifaces = interfaces::generate(&r, host);
        let frr = if self.running.as_ref().is_some_and(|r| r.frr_written) {
            frr::render(&host.node, &frr::generate(&r, host))
        } else {
            FRR_PACKAGE_CONF.to_string()
        };
        (Some(ifaces), frr)
    }

    /// `GET /cluster/sdn/dry-run` on `host`: `diff -b -N -u` of the
    /// files the last apply wrote against those the configuration as
    /// written would give. `applied` is when the last apply wrote them,
    /// `now` the time of the temporary files named `tmp_frr` and
    /// `tmp_ifaces`.
    pub fn dry_run(&self, host: &Host, now: i64, tmp_frr: &str, tmp_ifaces: &str) -> DryRun {
        let empty = Section::new();
        let pending = self.pending_compiled(&empty);
        let new_ifaces = interfaces::generate(&pending, host);
        let new_frr = frr::render(&host.node, &frr::generate(&pending, host));
        let (old_ifaces, old_frr) = self.applied_files(host);
        let applied = self.running.as_ref().map_or(0, |r| r.applied);
        let frr_time = if self.running.as_ref().is_some_and(|r| r.frr_written) {
            applied
        } else {
            0
        };
        let ifaces_time = if old_ifaces.is_some() { applied } else { 0 };
        DryRun {
            frr: file_diff(
                "/etc/frr/frr.conf",
                &old_frr,
                frr_time,
                tmp_frr,
                &new_frr,
                now,
            ),
            interfaces: file_diff(
                "/etc/network/interfaces.d/sdn",
                old_ifaces.as_deref().unwrap_or(""),
                ifaces_time,
                tmp_ifaces,
                &new_ifaces,
                now,
            ),
        }
    }
}

/// `diff -u` of two files with their headers, none when they do not
/// differ.
fn file_diff(a: &str, old: &str, old_time: i64, b: &str, new: &str, now: i64) -> Option<String> {
    let body = removals_first(&crate::model::network::unified_diff(old, new));
    if body.is_empty() {
        return None;
    }
    Some(format!(
        "--- {a}\t{}\n+++ {b}\t{}\n{body}",
        diff_time(old_time),
        diff_time(now)
    ))
}

/// A diff's hunks with each run of changed lines as GNU diff prints
/// it: the removed lines, then the added ones.
fn removals_first(body: &str) -> String {
    let mut out = String::new();
    let (mut minus, mut plus) = (String::new(), String::new());
    for line in body.lines() {
        match line.as_bytes().first() {
            Some(b'-') => minus.push_str(&format!("{line}\n")),
            Some(b'+') => plus.push_str(&format!("{line}\n")),
            _ => {
                out.push_str(&minus);
                out.push_str(&plus);
                minus.clear();
                plus.clear();
                out.push_str(&format!("{line}\n"));
            }
        }
    }
    out.push_str(&minus);
    out.push_str(&plus);
    out
}

/// A diff timestamp (`1970-01-01 00:00:00.000000000 +0000` for a
/// missing file).
fn diff_time(epoch: i64) -> String {
    let (year, month, day, h, m, sec, _) = crate::clock::civil(epoch);
    format!("{year:04}-{month:02}-{day:02} {h:02}:{m:02}:{sec:02}.000000000 +0000")
}
