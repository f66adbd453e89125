//! The fabric writes of `/cluster/sdn/fabrics/fabric` (`add_fabric`,
//! `update_fabric`, `delete_fabric` of pve-network's
//! `Fabrics/Fabric.pm`): each protocol's properties, 9.2's
//! redistribution of OSPF and BGP fabrics and the properties an update
//! deletes.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use super::super::{Obj, Sdn, text, wrapped};
use super::{Fabric, Params, Protocol, cidr, cidr_text, list, mismatch, no_fabric, opt};
use crate::model::{Error, Result};

impl Sdn {
    /// `POST /cluster/sdn/fabrics/fabric` (`add_fabric`).
    ///
    /// # Errors
    /// `adding fabric failed: ...`: a fabric of that ID, an OSPF fabric
    /// without `area`, what validation refuses.
    pub fn add_fabric(&mut self, p: &Params) -> Result<()> {
        self.fabrics_write("adding fabric failed", p, |c| {
            let id = opt(p, "id").unwrap_or_default();
            let protocol = Protocol::of(p)?;
            let fabric = Fabric {
                protocol,
                ip_prefix: opt(p, "ip_prefix")
                    .map(|v| cidr(&v, true).map(|c| cidr_text(c, true)))
                    .transpose()?,
                ip6_prefix: opt(p, "ip6_prefix")
                    .map(|v| cidr(&v, false).map(|c| cidr_text(c, true)))
                    .transpose()?,
                hello_interval: if protocol == Protocol::Openfabric {
                    seconds(p, "hello_interval")?
                } else {
                    None
                },
                csnp_interval: if protocol == Protocol::Openfabric {
                    seconds(p, "csnp_interval")?
                } else {
                    None
                },
                area: match protocol {
                    Protocol::Ospf => Some(area(
                        &opt(p, "area").ok_or_else(|| Error::failed("missing field `area`"))?,
                    )?),
                    Protocol::Openfabric | Protocol::Wireguard | Protocol::Bgp => None,
                },
                route_filter: opt(p, "route_filter")
                    .filter(|_| matches!(protocol, Protocol::Openfabric | Protocol::Ospf)),
                persistent_keepalive: if protocol == Protocol::Wireguard {
                    keepalive(p)?
                } else {
                    None
                },
                redistribute: redistribution(protocol, p)?.unwrap_or_default(),
                nodes: BTreeMap::new(),
            };
            if c.fabrics.contains_key(&id) {
                return Err(Error::failed(format!(
                    "fabric '{id}' already exists in config"
                )));
            }
            c.fabrics.insert(id, fabric);
            Ok(())
        })
    }

    /// `PUT /cluster/sdn/fabrics/fabric/{id}` (`update_fabric`):
    /// `protocol` must be the fabric's; the prefixes are taken as
    /// given; `redistribute` replaces the list; `delete` takes what
    /// `deletable` says.
    ///
    /// # Errors
    /// `updating fabric failed: ...`.
    pub fn update_fabric(&mut self, p: &Params) -> Result<()> {
        self.fabrics_write("updating fabric failed", p, |c| {
            let id = opt(p, "id").unwrap_or_default();
            let protocol = Protocol::of(p)?;
            let ip_prefix = opt(p, "ip_prefix")
                .map(|v| cidr(&v, true).map(|c| cidr_text(c, false)))
                .transpose()?;
            let ip6_prefix = opt(p, "ip6_prefix")
                .map(|v| cidr(&v, false).map(|c| cidr_text(c, false)))
                .transpose()?;
            let delete = list(p, "delete");
            deletable(protocol, &delete)?;
            let (hello, csnp, new_area) = match protocol {
                Protocol::Openfabric => (
                    seconds(p, "hello_interval")?,
                    seconds(p, "csnp_interval")?,
                    None,
                ),
                Protocol::Ospf => (None, None, opt(p, "area").map(|a| area(&a)).transpose()?),
                Protocol::Wireguard | Protocol::Bgp => (None, None, None),
            };
            let redistribute = redistribution(protocol, p)?;
            let keepalive = match protocol {
                Protocol::Wireguard => keepalive(p)?,
                _ => None,
            };
            let f = c.get_mut(&id)?;
            if f.protocol != protocol {
                return Err(mismatch());
            }
            if ip_prefix.is_some() {
                f.ip_prefix = ip_prefix;
            }
            if ip6_prefix.is_some() {
                f.ip6_prefix = ip6_prefix;
            }
            if hello.is_some() {
                f.hello_interval = hello;
            }
            if csnp.is_some() {
                f.csnp_interval = csnp;
            }
            if new_area.is_some() {
                f.area = new_area;
            }
            if let Some(r) = opt(p, "route_filter")
                .filter(|_| matches!(protocol, Protocol::Openfabric | Protocol::Ospf))
            {
                f.route_filter = Some(r);
            }
            if let Some(r) = redistribute {
                f.redistribute = r;
            }
            if keepalive.is_some() {
                f.persistent_keepalive = keepalive;
            }
            for d in delete {
                match d.as_str() {
                    "ip_prefix" => f.ip_prefix = None,
                    "ip6_prefix" => f.ip6_prefix = None,
                    "hello_interval" => f.hello_interval = None,
                    "csnp_interval" => f.csnp_interval = None,
                    "route_filter" => f.route_filter = None,
                    "persistent_keepalive" => f.persistent_keepalive = None,
                    "redistribute" => f.redistribute.clear(),
                    // A BGP fabric's route maps, which 9.2's API cannot set.
                    _ => {}
                }
            }
            Ok(())
        })
    }

    /// `DELETE /cluster/sdn/fabrics/fabric/{id}` (`delete_fabric`): the
    /// fabric and its nodes. `may_modify(node)` says whether the caller
    /// has `Sys.Modify` on `/nodes/<node>`.
    ///
    /// # Errors
    /// `deleting fabric failed: ...`: an unknown fabric, a node the
    /// caller may not modify, a fabric an EVPN controller or VXLAN zone
    /// uses.
    pub fn delete_fabric(&mut self, p: &Params, may_modify: impl Fn(&str) -> bool) -> Result<()> {
        let id = opt(p, "id").unwrap_or_default();
        let uses = |me: &Self| -> Result<()> {
            for node in me.fabrics.node_names(&id)? {
                if !may_modify(&node) {
                    return Err(Error::failed(format!(
                        "permission check failed: missing 'Sys.Modify' on node {node}"
                    )));
                }
            }
            let uses_fabric = |o: &Obj, kind: &str| {
                o.get("type").map(text).as_deref() == Some(kind)
                    && o.get("fabric").map(text).as_deref() == Some(id.as_str())
            };
            if let Some((c, _)) = me.controllers.iter().find(|(_, o)| uses_fabric(o, "evpn")) {
                return Err(Error::failed(format!(
                    "this fabric is still used in the EVPN controller \"{c}\""
                )));
            }
            if let Some((z, _)) = me.zones.iter().find(|(_, o)| uses_fabric(o, "vxlan")) {
                return Err(Error::failed(format!(
                    "this fabric is still used in the VXLAN zone \"{z}\""
                )));
            }
            Ok(())
        };
        if let Err(e) = self
            .check_token(opt(p, "lock-token").as_deref())
            .and_then(|()| uses(self))
        {
            return Err(wrapped("deleting fabric failed", e));
        }
        self.fabrics_write("deleting fabric failed", p, |c| {
            c.fabrics
                .remove(&id)
                .map(|_| ())
                .ok_or_else(|| no_fabric(&id))
        })
    }
}

/// `hello_interval`, `csnp_interval`: whole seconds (`u16`).
fn seconds(p: &Params, k: &str) -> Result<Option<u16>> {
    let Some(v) = opt(p, k) else {
        return Ok(None);
    };
    v.parse::<u16>().map(Some).map_err(|_| {
        Error::failed(format!(
            "invalid value for '{k}': '{v}' is not an integer between 1 and 600"
        ))
    })
}

/// `persistent_keepalive` (`PersistentKeepalive`, a `u16`; the schema
/// allows a number from 0 to 65535).
fn keepalive(p: &Params) -> Result<Option<u16>> {
    let Some(v) = opt(p, "persistent_keepalive") else {
        return Ok(None);
    };
    v.parse::<u16>().map(Some).map_err(|_| {
        Error::failed(format!(
            "invalid value for 'persistent_keepalive': '{v}' is not an integer between 0 and 65535"
        ))
    })
}

/// An OSPF area: a dotted quad or a 32-bit number, kept as written.
fn area(v: &str) -> Result<String> {
    if v.parse::<Ipv4Addr>().is_ok() || v.parse::<u32>().is_ok() {
        Ok(v.to_string())
    } else {
        Err(Error::failed("Area is not a number, nor an ip address"))
    }
}

/// What `delete` of `update_fabric` takes, by protocol (the crate's
/// `FabricDeletableProperties` of the protocol's properties): the
/// prefixes (9.2's schema offers them), an OpenFabric fabric's
/// intervals and route filter, an OSPF fabric's route filter and
/// redistribution, a BGP fabric's redistribution, route filter and
/// route maps, a WireGuard fabric's keepalive. An OSPF fabric's `area`,
/// which the schema offers, matches none of them.
fn deletable(protocol: Protocol, delete: &[String]) -> Result<()> {
    let allowed: &[&str] = match protocol {
        Protocol::Openfabric => &[
            "ip_prefix",
            "ip6_prefix",
            "hello_interval",
            "csnp_interval",
            "route_filter",
        ],
        Protocol::Ospf => &["ip_prefix", "ip6_prefix", "route_filter", "redistribute"],
        Protocol::Bgp => &[
            "ip_prefix",
            "ip6_prefix",
            "redistribute",
            "route_filter",
            "route_map_in",
            "route_map_out",
        ],
        Protocol::Wireguard => &["ip_prefix", "ip6_prefix", "persistent_keepalive"],
    };
    match delete.iter().find(|d| !allowed.contains(&d.as_str())) {
        Some(_) => Err(Error::failed(
            "data did not match any variant of untagged enum FabricDeletableProperties",
        )),
        None => Ok(()),
    }
}

/// `redistribute` of an OSPF or BGP fabric (9.2): each item a property
/// string `source=<protocol>[,route-map=<id>]` (the schema has checked
/// the keys, the sources of the protocol and the route map's ID),
/// printed in the crate's key order. None when not given or for another
/// protocol.
fn redistribution(protocol: Protocol, p: &Params) -> Result<Option<Vec<String>>> {
    if !matches!(protocol, Protocol::Ospf | Protocol::Bgp) || !p.contains_key("redistribute") {
        return Ok(None);
    }
    list(p, "redistribute")
        .iter()
        .filter(|v| !v.is_empty())
        .map(|v| {
            let mut source = None;
            let mut route_map = None;
            for part in v.split(',').filter(|s| !s.is_empty()) {
                match part.split_once('=') {
                    Some(("source", s)) => source = Some(s),
                    Some(("route-map", r)) => route_map = Some(r),
                    _ => source = source.or(Some(part)),
                }
            }
            let source = source.ok_or_else(|| Error::failed("missing field `source`"))?;
            Ok(match route_map {
                Some(r) => format!("source={source},route-map={r}"),
                None => format!("source={source}"),
            })
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}
