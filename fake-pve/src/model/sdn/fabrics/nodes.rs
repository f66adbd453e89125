//! The writes of `/cluster/sdn/fabrics/node` (`add_node`,
//! `update_node`, `delete_node` of pve-network's
//! `Fabrics/FabricNode.pm`): an OpenFabric or OSPF node's router IPs and
//! interfaces; a 9.2 WireGuard node by its role, an internal node's
//! interfaces keyed on the way ([`super::super::wireguard`]).

use std::collections::BTreeMap;

use super::super::Sdn;
use super::super::wireguard::{self, NewInterface, Role};
use super::{Node, Params, Protocol, addr, interface, list, mismatch, no_node, opt};
use crate::model::{Context, Error, Result};

impl Sdn {
    /// `POST /cluster/sdn/fabrics/node/{fabric_id}` (`add_node`). An
    /// internal WireGuard node's interfaces get the public keys of their
    /// private keys, made on the way where there is none for the node's
    /// interface (the keys are kept only if the node is written).
    ///
    /// # Errors
    /// `adding node failed: ...`: an unknown fabric, another protocol, a
    /// node already in the fabric, a WireGuard node's values, what
    /// validation refuses.
    pub fn add_fabric_node(&mut self, p: &Params, rq: &mut Context) -> Result<()> {
        let mut keys = self.wg_keys.clone();
        self.fabrics_write("adding node failed", p, |c| {
            let fabric = opt(p, "fabric_id").unwrap_or_default();
            let node = opt(p, "node_id").unwrap_or_default();
            let protocol = Protocol::of(p)?;
            if protocol == Protocol::Bgp {
                // The crate's BGP node is tagged by a `role` (an internal
                // node has an `asn`), which 9.2's schema of this call
                // does not have.
                return Err(Error::failed("missing field `role`"));
            }
            let n = if protocol == Protocol::Wireguard {
                let interfaces = if opt(p, "role").as_deref() == Some("internal") {
                    let parsed = list(p, "interfaces")
                        .iter()
                        .map(|i| NewInterface::parse(i))
                        .collect::<Result<Vec<_>>>()?;
                    parsed
                        .iter()
                        .map(|i| i.print(&keys.upsert(&node, &i.name, rq)))
                        .collect()
                } else {
                    Vec::new()
                };
                wireguard_node(p, interfaces)?
            } else {
                Node {
                    ip: opt(p, "ip").map(|v| addr(&v, true)).transpose()?,
                    ip6: opt(p, "ip6").map(|v| addr(&v, false)).transpose()?,
                    interfaces: list(p, "interfaces")
                        .iter()
                        .map(|i| interface(protocol, i))
                        .collect::<Result<_>>()?,
                    ..Node::default()
                }
            };
            let f = c.get_mut(&fabric)?;
            if f.protocol != protocol {
                return Err(mismatch());
            }
            if f.nodes.contains_key(&node) {
                return Err(Error::failed(format!(
                    "node '{node}' already exists in config for fabric {fabric}"
                )));
            }
            f.nodes.insert(node, n);
            Ok(())
        })?;
        self.wg_keys = keys;
        Ok(())
    }

    /// `PUT /cluster/sdn/fabrics/node/{fabric_id}/{node_id}`
    /// (`update_node`): `interfaces` replaces the list; `delete` takes
    /// `interfaces`, `ip`, `ip6` (and a WireGuard node's `endpoint`,
    /// `peers`, `allowed_ips`). A WireGuard node keeps its role, and an
    /// internal one's interfaces are always replaced: by those given
    /// (one per name, in the order of the names; fake-pve's order, PVE's
    /// follows a Perl hash), none when none are given, as PVE's handler
    /// does.
    ///
    /// # Errors
    /// `updating node failed: ...`.
    pub fn update_fabric_node(&mut self, p: &Params, rq: &mut Context) -> Result<()> {
        if opt(p, "protocol").as_deref() == Some("wireguard") {
            return self.update_wireguard_node(p, rq);
        }
        self.fabrics_write("updating node failed", p, |c| {
            let fabric = opt(p, "fabric_id").unwrap_or_default();
            let node = opt(p, "node_id").unwrap_or_default();
            let protocol = Protocol::of(p)?;
            let ip = opt(p, "ip").map(|v| addr(&v, true)).transpose()?;
            let ip6 = opt(p, "ip6").map(|v| addr(&v, false)).transpose()?;
            let interfaces = p
                .get("interfaces")
                .map(|_| {
                    list(p, "interfaces")
                        .iter()
                        .map(|i| interface(protocol, i))
                        .collect::<Result<Vec<_>>>()
                })
                .transpose()?;
            let delete = list(p, "delete");
            let f = c.get_mut(&fabric)?;
            let same = f.protocol == protocol;
            let n = f
                .nodes
                .get_mut(&node)
                .ok_or_else(|| no_node(&node, &fabric))?;
            if !same {
                return Err(mismatch());
            }
            if ip.is_some() {
                n.ip = ip;
            }
            if ip6.is_some() {
                n.ip6 = ip6;
            }
            if let Some(i) = interfaces {
                n.interfaces = i;
            }
            for d in delete {
                match d.as_str() {
                    "ip" => n.ip = None,
                    "ip6" => n.ip6 = None,
                    "interfaces" => n.interfaces.clear(),
                    other => {
                        return Err(Error::failed(format!(
                            "unknown variant `{other}`, expected `ip` or `ip6`"
                        )));
                    }
                }
            }
            Ok(())
        })
    }

    /// `update_node` of a WireGuard node (`protocol` `wireguard`): the
    /// node is looked up first, its role kept, an internal node's
    /// interfaces keyed, then the crate's update.
    fn update_wireguard_node(&mut self, p: &Params, rq: &mut Context) -> Result<()> {
        let mut keys = self.wg_keys.clone();
        self.fabrics_write("updating node failed", p, |c| {
            let fabric = opt(p, "fabric_id").unwrap_or_default();
            let node = opt(p, "node_id").unwrap_or_default();
            let f = c.get(&fabric)?;
            let old = f.nodes.get(&node).ok_or_else(|| no_node(&node, &fabric))?;
            let mut role = opt(p, "role");
            if f.protocol == Protocol::Wireguard {
                let kept = match old.role {
                    Some(Role::External) => "external",
                    _ => "internal",
                };
                if role.as_deref().is_some_and(|r| r != kept) {
                    return Err(Error::failed(
                        "cannot change role of existing WireGuard node",
                    ));
                }
                role = Some(kept.to_string());
            }
            let interfaces = if role.as_deref() == Some("internal") {
                let mut by_name = BTreeMap::new();
                for i in list(p, "interfaces") {
                    let parsed = NewInterface::parse(&i)?;
                    by_name.insert(parsed.name.clone(), parsed);
                }
                Some(
                    by_name
                        .values()
                        .map(|i| i.print(&keys.upsert(&node, &i.name, rq)))
                        .collect::<Vec<_>>(),
                )
            } else {
                None
            };
            let ip = opt(p, "ip").map(|v| addr(&v, true)).transpose()?;
            let ip6 = opt(p, "ip6").map(|v| addr(&v, false)).transpose()?;
            let role = Role::of(role.as_deref())?;
            let endpoint = opt(p, "endpoint")
                .map(|e| match role {
                    Role::Internal => wireguard::host(&e),
                    Role::External => wireguard::service_endpoint(&e),
                })
                .transpose()?;
            let public_key = match role {
                Role::External => opt(p, "public_key")
                    .map(|k| wireguard::public_key(&k))
                    .transpose()?,
                Role::Internal => None,
            };
            let peers = match role {
                Role::Internal if p.contains_key("peers") => Some(
                    list(p, "peers")
                        .iter()
                        .map(|x| wireguard::peer(x))
                        .collect::<Result<Vec<_>>>()?,
                ),
                _ => None,
            };
            let allowed_ips = p
                .contains_key("allowed_ips")
                .then(|| {
                    list(p, "allowed_ips")
                        .iter()
                        .map(|x| wireguard::allowed_ip(x))
                        .collect::<Result<Vec<_>>>()
                })
                .transpose()?;
            let delete = list(p, "delete");
            let f = c.get_mut(&fabric)?;
            let same = f.protocol == Protocol::Wireguard;
            let n = f
                .nodes
                .get_mut(&node)
                .ok_or_else(|| no_node(&node, &fabric))?;
            if !same || n.role != Some(role) {
                return Err(mismatch());
            }
            if ip.is_some() {
                n.ip = ip;
            }
            if ip6.is_some() {
                n.ip6 = ip6;
            }
            for d in &delete {
                match d.as_str() {
                    "ip" => n.ip = None,
                    "ip6" => n.ip6 = None,
                    _ => {}
                }
            }
            if let Some(i) = interfaces {
                n.interfaces = i;
            }
            if endpoint.is_some() {
                n.endpoint = endpoint;
            }
            if public_key.is_some() {
                n.public_key = public_key;
            }
            if let Some(x) = peers {
                n.peers = x;
            }
            if let Some(x) = allowed_ips {
                n.allowed_ips = x;
            }
            for d in &delete {
                match (role, d.as_str()) {
                    (_, "ip" | "ip6") => {}
                    (_, "allowed_ips") => n.allowed_ips.clear(),
                    (Role::Internal, "interfaces") => n.interfaces.clear(),
                    (Role::Internal, "endpoint") => n.endpoint = None,
                    (Role::Internal, "peers") => n.peers.clear(),
                    (Role::External, "interfaces" | "endpoint" | "peers") => {
                        return Err(mismatch());
                    }
                    (_, other) => {
                        return Err(Error::failed(format!(
                            "unknown variant `{other}`, expected one of `ip`, `ip6`, \
                             `interfaces`, `endpoint`, `peers`, `allowed_ips`"
                        )));
                    }
                }
            }
            Ok(())
        })?;
        self.wg_keys = keys;
        Ok(())
    }

    /// `DELETE /cluster/sdn/fabrics/node/{fabric_id}/{node_id}`
    /// (`delete_node`).
    ///
    /// # Errors
    /// `deleting node failed: ...`: an unknown fabric or node.
    pub fn delete_fabric_node(&mut self, p: &Params) -> Result<()> {
        self.fabrics_write("deleting node failed", p, |c| {
            let fabric = opt(p, "fabric_id").unwrap_or_default();
            let node = opt(p, "node_id").unwrap_or_default();
            c.get_mut(&fabric)?
                .nodes
                .remove(&node)
                .map(|_| ())
                .ok_or_else(|| no_node(&node, &fabric))
        })
    }
}

/// A WireGuard node of `add_node` (`api::Node`'s `WireGuard` variant,
/// tagged by `role`), with an internal node's interfaces already keyed:
/// an internal node's host `endpoint` and `peers`, an external node's
/// `public_key` and `endpoint` with its port; `allowed_ips` for both.
/// What the other role has is ignored, as serde ignores it.
fn wireguard_node(p: &Params, interfaces: Vec<String>) -> Result<Node> {
    let ip = opt(p, "ip").map(|v| addr(&v, true)).transpose()?;
    let ip6 = opt(p, "ip6").map(|v| addr(&v, false)).transpose()?;
    let role = Role::of(opt(p, "role").as_deref())?;
    let allowed_ips = list(p, "allowed_ips")
        .iter()
        .map(|x| wireguard::allowed_ip(x))
        .collect::<Result<Vec<_>>>()?;
    Ok(match role {
        Role::Internal => Node {
            ip,
            ip6,
            interfaces,
            role: Some(role),
            endpoint: opt(p, "endpoint")
                .map(|e| wireguard::host(&e))
                .transpose()?,
            peers: list(p, "peers")
                .iter()
                .map(|x| wireguard::peer(x))
                .collect::<Result<_>>()?,
            allowed_ips,
            public_key: None,
        },
        Role::External => {
            let public_key = opt(p, "public_key")
                .ok_or_else(|| Error::failed("missing field `public_key`"))
                .and_then(|k| wireguard::public_key(&k))?;
            let endpoint = opt(p, "endpoint")
                .ok_or_else(|| Error::failed("missing field `endpoint`"))
                .and_then(|e| wireguard::service_endpoint(&e))?;
            Node {
                ip,
                ip6,
                role: Some(role),
                public_key: Some(public_key),
                endpoint: Some(endpoint),
                allowed_ips,
                ..Node::default()
            }
        }
    })
}
