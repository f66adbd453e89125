//! `FabricConfig::validate` of proxmox-ve-config, run on the whole
//! fabrics configuration before every write: prefixes that overlap
//! across fabrics, one OSPF area per fabric, an interface of a node in
//! one fabric only (a WireGuard interface's name and port too), and each
//! fabric's own checks (`FabricEntry::validate`): node IPs inside the
//! fabric's prefix and unique in it, what each protocol requires, a
//! WireGuard fabric's peers naming its interfaces and external nodes.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr};

use super::super::net::Cidr;
use super::super::wireguard::{self, Role};
use super::{Fabric, Fabrics, Node, Protocol, cidr_text, interface_name};
use crate::model::{Error, Result};

impl Fabrics {
    /// `FabricConfig::validate`, run before every write.
    pub(super) fn validate(&self) -> Result<()> {
        let list: Vec<(&String, &Fabric)> = self.fabrics.iter().collect();
        for (i, (id1, f1)) in list.iter().enumerate() {
            for (id2, f2) in list.iter().skip(i + 1) {
                if let (Some(a), Some(b)) = (f1.v4(), f2.v4())
                    && overlaps(a, b)
                {
                    return Err(Error::failed(format!(
                        "IP prefix {} in fabric '{id2}' overlaps with IPv4 prefix {} in fabric '{id1}'",
                        cidr_text(b, false),
                        cidr_text(a, false)
                    )));
                }
                if let (Some(a), Some(b)) = (f1.v6(), f2.v6())
                    && overlaps(a, b)
                {
                    return Err(Error::failed(format!(
                        "IPv6 prefix {} in fabric '{id2}' overlaps with IPv6 prefix {} in fabric '{id1}'",
                        cidr_text(b, false),
                        cidr_text(a, false)
                    )));
                }
            }
        }
        let mut areas = BTreeSet::new();
        let mut interfaces: BTreeSet<(String, String)> = BTreeSet::new();
        let mut wg_interfaces: BTreeSet<(String, String)> = BTreeSet::new();
        let mut wg_ports: BTreeSet<(String, String)> = BTreeSet::new();
        for (id, f) in &self.fabrics {
            if f.protocol == Protocol::Ospf
                && !areas.insert(area_key(f.area.as_deref().unwrap_or_default()))
            {
                return Err(Error::failed("duplicate OSPF area"));
            }
            for (nid, n) in &f.nodes {
                if f.protocol == Protocol::Wireguard {
                    // An internal node's WireGuard interfaces: each name
                    // and each port once on a node, across the fabrics.
                    let ifaces: Vec<_> = n
                        .interfaces
                        .iter()
                        .map(|i| wireguard::Interface::of(i))
                        .collect();
                    if !ifaces
                        .iter()
                        .all(|i| wg_interfaces.insert((nid.clone(), i.name.clone())))
                    {
                        return Err(Error::failed(
                            "interface is already in use by another fabric",
                        ));
                    }
                    for i in &ifaces {
                        if !wg_ports.insert((nid.clone(), i.listen_port.clone())) {
                            return Err(duplicate_port(&i.listen_port));
                        }
                    }
                    continue;
                }
                for iface in &n.interfaces {
                    if !interfaces.insert((nid.clone(), interface_name(iface).to_string())) {
                        return Err(Error::failed(
                            "interface is already in use by another fabric",
                        ));
                    }
                }
            }
            validate_fabric(id, f)?;
        }
        Ok(())
    }
}

/// `WireGuardPortDuplicated`.
fn duplicate_port(port: &str) -> Error {
    Error::failed(format!(
        "WireGuard interface listen port duplicated in node configuration: {port}"
    ))
}

/// The WireGuard part of `FabricEntry::validate`: interface addresses
/// unique in the fabric, and every peer names an interface of an
/// internal node of the fabric or an external node of it.
fn validate_wireguard_fabric(id: &str, f: &Fabric) -> Result<()> {
    let mut all_interfaces = BTreeSet::new();
    let mut external = BTreeSet::new();
    let mut internal_peers = BTreeSet::new();
    let mut external_peers = BTreeSet::new();
    let mut addresses = BTreeSet::new();
    for (nid, n) in &f.nodes {
        if n.role == Some(Role::External) {
            external.insert(nid.clone());
            continue;
        }
        for i in n.interfaces.iter().map(|i| wireguard::Interface::of(i)) {
            all_interfaces.insert((nid.clone(), i.name.clone()));
            for ip in [&i.ip, &i.ip6].into_iter().flatten() {
                if !addresses.insert(ip.clone()) {
                    return Err(Error::failed(format!(
                        "fabric {id} contains nodes with duplicated IPs"
                    )));
                }
            }
        }
        for (internal, node, node_iface, _) in n.peers.iter().map(|p| wireguard::peer_refs(p)) {
            if internal {
                internal_peers.insert((node, node_iface.unwrap_or_default()));
            } else {
                external_peers.insert(node);
            }
        }
    }
    if let Some((node, iface)) = internal_peers.difference(&all_interfaces).next() {
        return Err(Error::failed(format!(
            "peer configuration references non-existing interface '{iface}' on node '{node}'"
        )));
    }
    if let Some(node) = external_peers.difference(&external).next() {
        return Err(Error::failed(format!(
            "peer configuration references non-existing external node '{node}'"
        )));
    }
    Ok(())
}

/// An internal WireGuard node's own checks (`InternalWireGuardNode::
/// validate`): its interface names and ports once each, and its peers'
/// local interfaces among them.
fn validate_wireguard_node(n: &Node) -> Result<()> {
    if n.role != Some(Role::Internal) {
        return Ok(());
    }
    let mut names = BTreeSet::new();
    let mut ports = BTreeSet::new();
    for i in n.interfaces.iter().map(|i| wireguard::Interface::of(i)) {
        if !names.insert(i.name.clone()) {
            return Err(Error::failed(
                "interface is already in use by another fabric",
            ));
        }
        if !ports.insert(i.listen_port.clone()) {
            return Err(duplicate_port(&i.listen_port));
        }
    }
    for (_, _, _, iface) in n.peers.iter().map(|p| wireguard::peer_refs(p)) {
        if !names.contains(&iface) {
            return Err(Error::failed(format!(
                "peer configuration references non-existing local interface '{iface}'"
            )));
        }
    }
    Ok(())
}

/// `FabricEntry::validate`: each node's IPs against the fabric's
/// prefixes, unique in the fabric, the node's and the fabric's own
/// checks.
fn validate_fabric(id: &str, f: &Fabric) -> Result<()> {
    let mut ips = BTreeSet::new();
    let mut ip6s = BTreeSet::new();
    if f.protocol == Protocol::Wireguard {
        validate_wireguard_fabric(id, f)?;
    }
    for (nid, n) in &f.nodes {
        let section = format!("{id}_{nid}");
        if f.protocol == Protocol::Wireguard {
            validate_wireguard_node(n)?;
        }
        for (prefix, ip) in [(f.v4(), n.ip.as_deref()), (f.v6(), n.ip6.as_deref())] {
            let ip = ip.and_then(|i| i.parse::<IpAddr>().ok());
            match (prefix, ip) {
                (None, Some(ip)) => {
                    return Err(Error::failed(format!(
                        "fabric '{id}' does not have an IP prefix configured for the node IP {ip}"
                    )));
                }
                (Some(prefix), None) => {
                    return Err(Error::failed(format!(
                        "node '{section}' does not have an IP configured for this fabric prefix {}",
                        cidr_text(prefix, false)
                    )));
                }
                (Some(prefix), Some(ip)) if !prefix.contains(ip) => {
                    return Err(Error::failed(format!(
                        "node IP {ip} is outside the IP prefix {} of the fabric",
                        cidr_text(prefix, false)
                    )));
                }
                _ => {}
            }
        }
        if n.ip.as_ref().is_some_and(|ip| !ips.insert(ip.clone()))
            || n.ip6.as_ref().is_some_and(|ip| !ip6s.insert(ip.clone()))
        {
            return Err(Error::failed(format!(
                "fabric {id} contains nodes with duplicated IPs"
            )));
        }
        match f.protocol {
            Protocol::Openfabric if n.ip.is_none() && n.ip6.is_none() => {
                return Err(Error::failed(format!(
                    "node '{section}' does not have an IP configured"
                )));
            }
            Protocol::Ospf if n.ip.is_none() => {
                return Err(Error::failed(format!(
                    "node '{section}' does not have an IP configured"
                )));
            }
            Protocol::Ospf if n.ip6.is_some() => {
                return Err(Error::failed(
                    "IPv6 is currently not supported for protocol ospf",
                ));
            }
            _ => {}
        }
    }
    match f.protocol {
        Protocol::Openfabric | Protocol::Bgp if f.ip_prefix.is_none() && f.ip6_prefix.is_none() => {
            Err(Error::failed(format!(
                "fabric '{id}' does not have an IP prefix configured"
            )))
        }
        Protocol::Ospf if f.ip_prefix.is_none() => Err(Error::failed(format!(
            "fabric '{id}' does not have an IP prefix configured"
        ))),
        Protocol::Ospf if f.ip6_prefix.is_some() => Err(Error::failed(
            "IPv6 is currently not supported for protocol ospf",
        )),
        _ => Ok(()),
    }
}

/// The area as a 32-bit number (`get_ipv4_representation`).
fn area_key(v: &str) -> u32 {
    v.parse::<Ipv4Addr>()
        .map(u32::from)
        .unwrap_or_else(|_| v.parse().unwrap_or(0))
}

/// Whether two networks share an address (one holds the other's first
/// address).
fn overlaps(a: Cidr, b: Cidr) -> bool {
    a.is_v4() == b.is_v4()
        && (a.contains(b.addr_of(b.network())) || b.contains(a.addr_of(a.network())))
}
