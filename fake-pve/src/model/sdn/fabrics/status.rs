//! What FRR reports for a node's fabric (`GET /nodes/{node}/sdn/fabrics/
//! {fabric}/{interfaces,neighbors,routes}`). PVE reads the applied
//! fabrics (`.running-config`), asks `vtysh` and keeps what belongs to
//! the fabric (proxmox-perl-rs `sdn/status.rs`). fake-pve runs no FRR:
//! the state is derived from the applied configuration as FRR would
//! have it with every online member's daemons up since the apply (or
//! since the later boot of either end):
//!
//! - interfaces: the fabric's dummy interface (`dummy_<fabric>`) and the
//!   node's interfaces in the fabric, all up; OpenFabric's in FRR's
//!   circuit order, OSPF's by name, their types as FRR names them
//!   (OpenFabric: `Loopback` for the dummy, `Point-To-Point` for the
//!   circuits; OSPF: the interface's `network_type`, else `Broadcast`
//!   for a numbered interface and `Point-To-Point` for an unnumbered
//!   one, as PVE's FRR configuration sets it; the dummy is `Broadcast`).
//! - neighbors: the online members the node shares a link with. Two
//!   interfaces are linked when both have an address in the same subnet,
//!   or when both are unnumbered (a full mesh). OpenFabric names the
//!   neighbor's host, `Up`, with IS-IS's uptime format (`8h24m12s`);
//!   OSPF names the neighbor's address on the link, its state as
//!   `<state>/<role>` (`Full/-` on point-to-point links; on broadcast
//!   links the highest router IDs are DR and Backup, the others DROther,
//!   two DROthers stay `2-Way`), with ospfd's uptime format (`1m04s`);
//!   a non-broadcast (NBMA) link has no neighbor without static
//!   neighbors, which PVE does not configure.
//! - routes: the router IPs of the members reachable over the links
//!   (`/32`, and OpenFabric's IPv6 `/128`), via the addresses of the
//!   first hops on the shortest paths.
//!
//! A node that is no member of the fabric has none of them; nor has a
//! WireGuard fabric (no FRR daemon) or a BGP fabric (9.2's API cannot
//! add BGP nodes).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::IpAddr;

use super::super::Sdn;
use super::super::net::{Cidr, num};
use super::{Fabric, Node, Protocol};
use crate::model::{Error, Result};

/// An interface of the node in the fabric, as FRR shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FabricInterface {
    /// The interface name.
    pub name: String,
    /// `Up` (OpenFabric's circuit state) or `up` (OSPF).
    pub state: &'static str,
    /// The network type as PVE prints FRR's.
    pub kind: &'static str,
}

/// A neighbor of the node in the fabric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neighbor {
    /// The neighbor's host name (OpenFabric) or address (OSPF).
    pub neighbor: String,
    /// The adjacency's state as FRR prints it.
    pub status: String,
    /// Since when the adjacency is up, in the daemon's format.
    pub uptime: String,
}

/// A route the fabric installed on the node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The destination (a member's router IP).
    pub route: String,
    /// The next hops.
    pub via: Vec<String>,
}

/// An interface property string's values.
struct Iface {
    name: String,
    ip: Option<Cidr>,
    ip6: Option<Cidr>,
    network_type: Option<String>,
}

impl Iface {
    fn of(v: &str) -> Self {
        let mut i = Iface {
            name: String::new(),
            ip: None,
            ip6: None,
            network_type: None,
        };
        for part in v.split(',') {
            match part.split_once('=') {
                Some(("name", n)) => i.name = n.to_string(),
                Some(("ip", c)) => i.ip = Cidr::parse(c),
                Some(("ip6", c)) => i.ip6 = Cidr::parse(c),
                Some(("network_type", t)) => i.network_type = Some(t.to_string()),
                _ => {}
            }
        }
        i
    }

    fn unnumbered(&self) -> bool {
        self.ip.is_none() && self.ip6.is_none()
    }

    /// The OSPF network type FRR runs the interface with.
    fn ospf_type(&self) -> &'static str {
        match self.network_type.as_deref() {
            Some("point-to-point") => "Point-To-Point",
            Some("point-to-multipoint") => "Point-To-Multipoint",
            Some("non-broadcast") => "NBMA",
            Some(_) => "Broadcast",
            None if self.ip.is_some() => "Broadcast",
            None => "Point-To-Point",
        }
    }
}

/// Whether two addresses share one subnet.
fn same_subnet(a: Option<Cidr>, b: Option<Cidr>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.prefix == b.prefix && a.contains(b.addr) && a.addr != b.addr,
        _ => false,
    }
}

/// A link of the node: its interface, the member at the other end and
/// that member's addresses on the link.
struct Link {
    iface: usize,
    peer: String,
    addr4: Option<IpAddr>,
    addr6: Option<IpAddr>,
}

/// The links of member `from` to the online members (`up`): for each of
/// its interfaces in order, the members (by name) with an interface on
/// the same subnet, or an unnumbered one when this one is unnumbered.
fn links(f: &Fabric, from: &str, up: &BTreeMap<&str, i64>) -> Vec<Link> {
    let Some(node) = f.nodes.get(from) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, mine) in node.interfaces.iter().map(|s| Iface::of(s)).enumerate() {
        for (peer, p) in &f.nodes {
            if peer == from || !up.contains_key(peer.as_str()) {
                continue;
            }
            let addr = |s: Option<&String>| s.and_then(|a| a.parse::<IpAddr>().ok());
            let theirs = p.interfaces.iter().map(|s| Iface::of(s)).find(|t| {
                (mine.unnumbered() && t.unnumbered())
                    || same_subnet(mine.ip, t.ip)
                    || same_subnet(mine.ip6, t.ip6)
            });
            if let Some(t) = theirs {
                let (addr4, addr6) = if t.unnumbered() {
                    (addr(p.ip.as_ref()), addr(p.ip6.as_ref()))
                } else {
                    (
                        t.ip.map(|c| c.addr).or(addr(p.ip.as_ref())),
                        t.ip6.map(|c| c.addr).or(addr(p.ip6.as_ref())),
                    )
                };
                out.push(Link {
                    iface: i,
                    peer: peer.clone(),
                    addr4,
                    addr6,
                });
            }
        }
    }
    out
}

/// IS-IS's `time2string`: years, months (30.4 days), weeks, days,
/// hours, minutes, seconds, each when not zero (`-` for none).
pub(crate) fn isis_time(secs: i64) -> String {
    const UNITS: [(i64, &str); 7] = [
        (31_536_000, "Y"),
        (2_628_000, "M"),
        (604_800, "w"),
        (86_400, "d"),
        (3_600, "h"),
        (60, "m"),
        (1, "s"),
    ];
    if secs <= 0 {
        return "-".into();
    }
    let mut rest = secs;
    let mut out = String::new();
    for (unit, name) in UNITS {
        if rest / unit > 0 {
            out.push_str(&format!("{}{name}", rest / unit));
        }
        rest %= unit;
    }
    out
}

/// ospfd's `ospf_timeval_dump` of whole seconds: weeks and days only
/// past a whole one, then hours, minutes and seconds.
pub(crate) fn ospf_time(secs: i64) -> String {
    const WEEK: i64 = 604_800;
    const DAY: i64 = 86_400;
    let mut s = secs.max(0);
    let (mut w, mut d) = (0, 0);
    if s > WEEK {
        w = s / WEEK;
        s -= w * WEEK;
    }
    if s > DAY {
        d = s / DAY;
        s -= d * DAY;
    }
    let h = s / 3600;
    s -= h * 3600;
    let m = s / 60;
    s -= m * 60;
    if w > 99 {
        format!("{w}w{d}d")
    } else if w > 0 {
        format!("{w}w{d}d{h:02}h")
    } else if d > 0 {
        format!("{d}d{h:02}h{m:02}m")
    } else if h > 0 {
        format!("{h}h{m:02}m{s:02}s")
    } else if m > 0 {
        format!("{m}m{s:02}s")
    } else {
        format!("{s}.000s")
    }
}

impl Sdn {
    /// The applied fabric and the time it was applied.
    fn applied_fabric(&self, fabric: &str) -> Result<(&Fabric, i64)> {
        let running = self
            .running
            .as_ref()
            .ok_or_else(|| Error::failed("No such file or directory (os error 2)"))?;
        let f = running.fabrics.get(fabric)?;
        Ok((f, running.applied))
    }

    /// The member `node` of an applied fabric FRR runs (OpenFabric,
    /// OSPF), with the online members and since when each is up.
    fn frr_member<'a>(
        &'a self,
        node: &str,
        fabric: &str,
        up: &dyn Fn(&str) -> Option<i64>,
    ) -> Result<Option<Member<'a>>> {
        let (f, applied) = self.applied_fabric(fabric)?;
        if !matches!(f.protocol, Protocol::Openfabric | Protocol::Ospf) {
            return Ok(None);
        }
        let Some(me) = f.nodes.get(node) else {
            return Ok(None);
        };
        let online = f
            .nodes
            .keys()
            .filter_map(|n| up(n).map(|t| (n.as_str(), t.max(applied))))
            .collect();
        Ok(Some(Member {
            fabric: f,
            name: node.to_string(),
            node: me,
            online,
        }))
    }

    /// `GET /nodes/{node}/sdn/fabrics/{fabric}/interfaces`: the node's
    /// interfaces in the applied fabric.
    ///
    /// # Errors
    /// Nothing applied yet (`.running-config` missing), a fabric the
    /// applied configuration does not have.
    pub fn fabric_interfaces(
        &self,
        node: &str,
        fabric: &str,
        up: &dyn Fn(&str) -> Option<i64>,
    ) -> Result<Vec<FabricInterface>> {
        let Some(m) = self.frr_member(node, fabric, up)? else {
            return Ok(Vec::new());
        };
        let dummy = format!("dummy_{fabric}");
        let ifaces = m.node.interfaces.iter().map(|s| Iface::of(s));
        Ok(if m.fabric.protocol == Protocol::Openfabric {
            std::iter::once(FabricInterface {
                name: dummy,
                state: "Up",
                kind: "Loopback",
            })
            .chain(ifaces.map(|i| FabricInterface {
                name: i.name,
                state: "Up",
                kind: "Point-To-Point",
            }))
            .collect()
        } else {
            let mut by_name: BTreeMap<String, &'static str> = ifaces
                .map(|i| {
                    let kind = i.ospf_type();
                    (i.name, kind)
                })
                .collect();
            by_name.insert(dummy, "Broadcast");
            by_name
                .into_iter()
                .map(|(name, kind)| FabricInterface {
                    name,
                    state: "up",
                    kind,
                })
                .collect()
        })
    }

    /// `GET /nodes/{node}/sdn/fabrics/{fabric}/neighbors`: the online
    /// members the node has an adjacency with, up since `now` minus the
    /// later of the apply and both ends' boots.
    ///
    /// # Errors
    /// As [`Self::fabric_interfaces`].
    pub fn fabric_neighbors(
        &self,
        node: &str,
        fabric: &str,
        up: &dyn Fn(&str) -> Option<i64>,
        now: i64,
    ) -> Result<Vec<Neighbor>> {
        let Some(m) = self.frr_member(node, fabric, up)? else {
            return Ok(Vec::new());
        };
        let mine = m.online.get(m.name.as_str()).copied().unwrap_or(now);
        let since = |peer: &str| now - mine.max(m.online.get(peer).copied().unwrap_or(now));
        let links = links(m.fabric, &m.name, &m.online);
        let mut seen = BTreeSet::new();
        if m.fabric.protocol == Protocol::Openfabric {
            return Ok(links
                .iter()
                .filter(|l| seen.insert(l.peer.clone()))
                .map(|l| Neighbor {
                    neighbor: l.peer.clone(),
                    status: "Up".into(),
                    uptime: isis_time(since(&l.peer)),
                })
                .collect());
        }
        let ifaces: Vec<Iface> = m.node.interfaces.iter().map(|s| Iface::of(s)).collect();
        let router_id = |n: &str| {
            m.fabric
                .nodes
                .get(n)
                .and_then(|x| x.ip.as_ref())
                .and_then(|ip| ip.parse::<IpAddr>().ok())
        };
        let mut by_router: BTreeMap<String, Neighbor> = BTreeMap::new();
        for l in &links {
            let kind = ifaces.get(l.iface).map_or("Broadcast", Iface::ospf_type);
            let (Some(addr), Some(rid)) = (l.addr4, router_id(&l.peer)) else {
                continue;
            };
            let status = match kind {
                "NBMA" => continue,
                "Point-To-Point" => "Full/-".to_string(),
                "Point-To-Multipoint" => "Full/DROther".to_string(),
                _ => {
                    let mut segment: Vec<IpAddr> = links
                        .iter()
                        .filter(|x| x.iface == l.iface)
                        .filter_map(|x| router_id(&x.peer))
                        .chain(router_id(&m.name))
                        .collect();
                    segment.sort_by_key(|ip| Reverse(num(*ip)));
                    let role = |ip: IpAddr| segment.iter().position(|x| *x == ip);
                    let peer_role = match role(rid) {
                        Some(0) => "DR",
                        Some(1) => "Backup",
                        _ => "DROther",
                    };
                    let me_elected = router_id(&m.name).and_then(role).is_some_and(|p| p < 2);
                    let state = if me_elected || peer_role != "DROther" {
                        "Full"
                    } else {
                        "2-Way"
                    };
                    format!("{state}/{peer_role}")
                }
            };
            by_router.entry(rid.to_string()).or_insert(Neighbor {
                neighbor: addr.to_string(),
                status,
                uptime: ospf_time(since(&l.peer)),
            });
        }
        Ok(by_router.into_values().collect())
    }

    /// `GET /nodes/{node}/sdn/fabrics/{fabric}/routes`: routes to the
    /// router IPs of the members reachable from the node, via the first
    /// hops of the shortest paths.
    ///
    /// # Errors
    /// As [`Self::fabric_interfaces`].
    pub fn fabric_routes(
        &self,
        node: &str,
        fabric: &str,
        up: &dyn Fn(&str) -> Option<i64>,
    ) -> Result<Vec<Route>> {
        let Some(m) = self.frr_member(node, fabric, up)? else {
            return Ok(Vec::new());
        };
        let first = links(m.fabric, &m.name, &m.online);
        // Breadth-first from the node: each member's distance and the
        // first hops (the node's neighbors) its shortest paths take.
        let mut hops: BTreeMap<String, (usize, BTreeSet<String>)> = BTreeMap::new();
        let mut queue = VecDeque::new();
        for l in &first {
            if hops.contains_key(&l.peer) {
                continue;
            }
            hops.insert(l.peer.clone(), (1, BTreeSet::from([l.peer.clone()])));
            queue.push_back(l.peer.clone());
        }
        while let Some(at) = queue.pop_front() {
            let (dist, via) = hops[&at].clone();
            for l in links(m.fabric, &at, &m.online) {
                if l.peer == m.name {
                    continue;
                }
                match hops.get_mut(&l.peer) {
                    None => {
                        hops.insert(l.peer.clone(), (dist + 1, via.clone()));
                        queue.push_back(l.peer);
                    }
                    Some((d, v)) if *d == dist + 1 => v.extend(via.iter().cloned()),
                    Some(_) => {}
                }
            }
        }
        let next = |peer: &str, v6: bool| {
            first
                .iter()
                .find(|l| l.peer == peer && if v6 { l.addr6 } else { l.addr4 }.is_some())
                .and_then(|l| if v6 { l.addr6 } else { l.addr4 })
        };
        let mut routes: BTreeMap<(bool, u128), Route> = BTreeMap::new();
        for (target, (_, via)) in &hops {
            let Some(t) = m.fabric.nodes.get(target) else {
                continue;
            };
            let v6 = m.fabric.protocol == Protocol::Openfabric;
            let addrs = [
                (t.ip.as_deref(), false, 32),
                (t.ip6.as_deref().filter(|_| v6), true, 128),
            ];
            for (ip, is6, len) in addrs {
                let Some(ip) = ip.and_then(|i| i.parse::<IpAddr>().ok()) else {
                    continue;
                };
                let hops: Vec<String> = via
                    .iter()
                    .filter_map(|h| next(h, is6))
                    .map(|a| a.to_string())
                    .collect();
                if !hops.is_empty() {
                    routes.insert(
                        (is6, num(ip)),
                        Route {
                            route: format!("{ip}/{len}"),
                            via: hops,
                        },
                    );
                }
            }
        }
        Ok(routes.into_values().collect())
    }
}

/// A member of an applied fabric and the online members with the time
/// each is up since.
struct Member<'a> {
    fabric: &'a Fabric,
    name: String,
    node: &'a Node,
    online: BTreeMap<&'a str, i64>,
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::{isis_time, ospf_time};

    #[rstest]
    #[case(0, "-")]
    #[case(56, "56s")]
    #[case(62, "1m2s")]
    #[case(3600, "1h")]
    #[case(30_252, "8h24m12s")]
    #[case(694_861, "1w1d1h1m1s")]
    fn isis_uptimes(#[case] secs: i64, #[case] text: &str) {
        assert_eq!(isis_time(secs), text);
    }

    #[rstest]
    #[case(56, "56.000s")]
    #[case(64, "1m04s")]
    #[case(30_252, "8h24m12s")]
    #[case(90_000, "1d01h00m")]
    #[case(86_400, "24h00m00s")]
    #[case(1_300_000, "2w1d01h")]
    fn ospf_uptimes(#[case] secs: i64, #[case] text: &str) {
        assert_eq!(ospf_time(secs), text);
    }
}
