//! `/etc/frr/frr.conf` as pve-network writes it: the controllers'
//! `generate_frr_config` (BGP, ISIS, EVPN), each EVPN zone's VRF
//! (`generate_zone_frr_config`) and the exit nodes' routes of its VNets
//! (`generate_vnet_frr_config`), numbered route maps, laid out as the
//! FRR templates of `proxmox-frr` lay them out between the fixed head
//! (`frr version`, `hostname`, ...) and `line vty`.

use std::collections::BTreeMap;

use super::{Compiled, Host, flag, list, opt, subnets_of};
use crate::model::sdn::{Obj, Section};

/// The FRR version line PVE writes.
pub const FRR_VERSION: &str = "10.4.1";

/// A neighbor group of a BGP router.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    name: String,
    remote_as: String,
    bfd: bool,
    ebgp_multihop: Option<u32>,
    update_source: Option<String>,
    ips: Vec<String>,
}

/// A neighbor activated in an address family.
#[derive(Debug, Clone, PartialEq, Eq)]
struct AfNeighbor {
    name: &'static str,
    soft_reconfiguration_inbound: bool,
    route_map_in: Option<&'static str>,
    route_map_out: Option<&'static str>,
}

/// `address-family ipv4 unicast` / `ipv6 unicast`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct UnicastAf {
    networks: Vec<String>,
    import_vrf: Vec<String>,
    neighbors: Vec<AfNeighbor>,
    redistribute: Vec<&'static str>,
}

/// `address-family l2vpn evpn`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct EvpnAf {
    neighbors: Vec<AfNeighbor>,
    advertise_all_vni: bool,
    autort_as: Option<String>,
    default_originate: Vec<&'static str>,
    advertise_ipv4_unicast: bool,
    advertise_ipv6_unicast: bool,
    rt_import: Vec<String>,
    rt_export: Vec<String>,
}

/// A `router bgp` block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Router {
    asn: String,
    router_id: String,
    hard_administrative_reset: Option<bool>,
    default_ipv4_unicast: Option<bool>,
    coalesce_time: Option<u32>,
    graceful_restart_notification: Option<bool>,
    disable_ebgp_connected_route_check: bool,
    bestpath_as_path_multipath_relax: bool,
    groups: Vec<Group>,
    ipv4: Option<UnicastAf>,
    ipv6: Option<UnicastAf>,
    evpn: Option<EvpnAf>,
}

/// A static route.
#[derive(Debug, Clone, PartialEq, Eq)]
struct IpRoute {
    prefix: String,
    via: String,
    vrf: Option<String>,
}

impl IpRoute {
    fn line(&self) -> String {
        let fam = if self.prefix.contains(':') {
            "ipv6"
        } else {
            "ip"
        };
        match &self.vrf {
            Some(v) => format!("{fam} route {} {} {v}", self.prefix, self.via),
            None => format!("{fam} route {} {}", self.prefix, self.via),
        }
    }
}

/// A `vrf` block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Vrf {
    vni: Option<String>,
    ip_routes: Vec<IpRoute>,
}

/// A prefix list rule.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PrefixRule {
    seq: u32,
    network: String,
    le: Option<u32>,
}

/// A route map entry; its `seq` is its place in the map.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RouteMapEntry {
    action: &'static str,
    matches: Vec<String>,
    sets: Vec<String>,
}

/// The FRR configuration of a node, as the controllers build it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrrConfig {
    vrfs: BTreeMap<String, Vrf>,
    routers: BTreeMap<String, Router>,
    isis_routers: BTreeMap<String, String>,
    isis_ifaces: BTreeMap<String, String>,
    prefix_lists: BTreeMap<String, Vec<PrefixRule>>,
    routemaps: BTreeMap<String, Vec<RouteMapEntry>>,
    ip_routes: Vec<IpRoute>,
    protocol_routemaps: BTreeMap<String, String>,
}

/// The `loopback` of the node's BGP controller, else of its ISIS
/// controller (`find_bgp_controller`, `find_isis_controller`).
pub fn node_loopback(controllers: &Section, node: &str) -> Option<String> {
    let of = |kind: &str| {
        controllers.values().find(|c| {
            opt(c, "type").as_deref() == Some(kind) && opt(c, "node").as_deref() == Some(node)
        })
    };
    match of("bgp") {
        Some(b) => opt(b, "loopback"),
        None => of("isis").and_then(|i| opt(i, "loopback")),
    }
}

fn controller_of<'a>(controllers: &'a Section, kind: &str, node: &str) -> Option<&'a Obj> {
    controllers.values().find(|c| {
        opt(c, "type").as_deref() == Some(kind) && opt(c, "node").as_deref() == Some(node)
    })
}

/// `get_router_id`: an IPv4 address is its own router id.
fn router_id(ip: &str) -> Option<String> {
    ip.parse::<std::net::Ipv4Addr>()
        .ok()
        .map(|_| ip.to_string())
}

/// The EVPN controller's view on the node: the AS, whether it peers
/// externally with the node's BGP controller, the loopback, the local
/// address, the router id and the peers.
struct EvpnPeering {
    asn: String,
    autortas: Option<String>,
    ebgp: bool,
    loopback: Option<String>,
    ifaceip: Option<String>,
    router_id: Option<String>,
    peers: Vec<String>,
}

fn evpn_peering(controller: &Obj, cfg: &Compiled<'_>, host: &Host) -> Option<EvpnPeering> {
    let controllers = cfg.controllers;
    let (peers, loopback, ifaceip, router_id) = match opt(controller, "fabric") {
        Some(fabric) => {
            let (peers, own) = cfg.fabric_peers(&fabric, &host.node)?;
            (
                peers,
                Some(format!("dummy_{fabric}")),
                Some(own.clone()),
                Some(own),
            )
        }
        None => {
            let peers = list(controller, "peers");
            if peers.is_empty() {
                return None;
            }
            let loopback = node_loopback(controllers, &host.node);
            let ifaceip = host.local_ip(&peers, loopback.as_deref()).map(|x| x.0);
            let router_id = ifaceip.as_deref().and_then(router_id);
            (peers, loopback, ifaceip, router_id)
        }
    };
    let mut asn = opt(controller, "asn")?;
    let (mut ebgp, mut autortas) = (false, None);
    if let Some(b) = controller_of(controllers, "bgp", &host.node) {
        let basn = opt(b, "asn").unwrap_or_default();
        if basn != asn {
            ebgp = true;
            autortas = Some(asn.clone());
        }
        if !basn.is_empty() {
            asn = basn;
        }
    }
    Some(EvpnPeering {
        asn,
        autortas,
        ebgp,
        loopback,
        ifaceip,
        router_id,
        peers,
    })
}

fn vtep_neighbor() -> AfNeighbor {
    AfNeighbor {
        name: "VTEP",
        soft_reconfiguration_inbound: false,
        route_map_in: Some("MAP_VTEP_IN"),
        route_map_out: Some("MAP_VTEP_OUT"),
    }
}

/// The FRR configuration of `host` for `cfg` (`generate_frr_config`).
pub fn generate(cfg: &Compiled<'_>, host: &Host) -> FrrConfig {
    let mut f = FrrConfig::default();
    for c in cfg.controllers.values() {
        match opt(c, "type").as_deref() {
            Some("bgp") => bgp_controller(&mut f, c, host),
            Some("isis") => isis_controller(&mut f, c, host),
            Some("evpn") => evpn_controller(&mut f, c, cfg, host),
            _ => {}
        }
    }
    for (id, zone) in cfg.zones {
        let Some(c) = opt(zone, "controller").and_then(|c| cfg.controllers.get(&c)) else {
            continue;
        };
        if opt(c, "type").as_deref() == Some("evpn") {
            evpn_zone(&mut f, id, zone, c, cfg, host);
        }
    }
    for (id, vnet) in cfg.vnets {
        let Some(zone_id) = opt(vnet, "zone") else {
            continue;
        };
        let Some(zone) = cfg.zones.get(&zone_id) else {
            continue;
        };
        let evpn = opt(zone, "controller")
            .and_then(|c| cfg.controllers.get(&c))
            .is_some_and(|c| opt(c, "type").as_deref() == Some("evpn"));
        if !evpn
            || !flag(zone, "exitnodes-local-routing")
            || !list(zone, "exitnodes").contains(&host.node)
        {
            continue;
        }
        for (s, _) in subnets_of(cfg.running_subnets, Some(id)) {
            let v6 = s.network.contains(':');
            f.ip_routes.push(IpRoute {
                prefix: s.cidr,
                via: if v6 { "fe80::2" } else { "10.255.255.2" }.into(),
                vrf: Some(format!("xvrf_{zone_id}")),
            });
        }
    }
    f
}

/// `BgpPlugin::generate_frr_config`.
fn bgp_controller(f: &mut FrrConfig, c: &Obj, host: &Host) {
    let Some(asn) = opt(c, "asn") else { return };
    if opt(c, "node").as_deref() != Some(host.node.as_str()) {
        return;
    }
    let peers = list(c, "peers");
    let ebgp = flag(c, "ebgp");
    let loopback = opt(c, "loopback");
    let Some(ifaceip) = host.local_ip(&peers, loopback.as_deref()).map(|x| x.0) else {
        return;
    };
    let Some(rid) = router_id(&ifaceip) else {
        return;
    };
    let r = f.routers.entry("default".into()).or_insert_with(|| Router {
        asn: asn.clone(),
        router_id: rid,
        default_ipv4_unicast: Some(false),
        coalesce_time: Some(1000),
        ..Router::default()
    });
    if loopback.is_some() && ebgp {
        r.disable_ebgp_connected_route_check = true;
    }
    if flag(c, "bgp-multipath-as-path-relax") {
        r.bestpath_as_path_multipath_relax = true;
    }
    if !peers.is_empty() {
        r.groups.push(Group {
            name: "BGP".into(),
            remote_as: if ebgp { "external".into() } else { asn.clone() },
            bfd: true,
            ebgp_multihop: opt(c, "ebgp-multihop")
                .and_then(|m| m.parse().ok())
                .filter(|_| ebgp),
            update_source: None,
            ips: peers.clone(),
        });
        let v6 = ifaceip.contains(':');
        let af = if v6 { &mut r.ipv6 } else { &mut r.ipv4 };
        let af = af.get_or_insert_with(|| UnicastAf {
            neighbors: vec![AfNeighbor {
                name: "BGP",
                soft_reconfiguration_inbound: true,
                route_map_in: None,
                route_map_out: None,
            }],
            ..UnicastAf::default()
        });
        if loopback.is_some() {
            af.networks
                .push(format!("{ifaceip}/{}", if v6 { 128 } else { 32 }));
        }
    }
    if loopback.is_some() {
        f.prefix_lists.insert(
            "loopbacks_ips".into(),
            vec![PrefixRule {
                seq: 10,
                network: "0.0.0.0/0".into(),
                le: Some(32),
            }],
        );
        f.protocol_routemaps
            .insert("bgp".into(), "correct_src".into());
        f.routemaps
            .entry("correct_src".into())
            .or_default()
            .push(RouteMapEntry {
                action: "permit",
                matches: vec!["ip address prefix-list loopbacks_ips".into()],
                sets: vec![format!("src {ifaceip}")],
            });
    }
}

/// `IsisPlugin::generate_frr_config`.
fn isis_controller(f: &mut FrrConfig, c: &Obj, host: &Host) {
    let (Some(ifaces), Some(net), Some(domain)) = (
        opt(c, "isis-ifaces"),
        opt(c, "isis-net"),
        opt(c, "isis-domain"),
    ) else {
        return;
    };
    if opt(c, "node").as_deref() != Some(host.node.as_str()) {
        return;
    }
    f.isis_routers.insert(domain.clone(), net);
    for i in crate::model::network::split_list(&ifaces) {
        f.isis_ifaces.insert(i, domain.clone());
    }
}

/// `EvpnPlugin::generate_frr_config` (controllers with `peers`).
fn evpn_controller(f: &mut FrrConfig, c: &Obj, cfg: &Compiled<'_>, host: &Host) {
    let Some(p) = evpn_peering(c, cfg, host) else {
        return;
    };
    let Some(rid) = p.router_id.clone() else {
        return;
    };
    let r = f.routers.entry("default".into()).or_insert_with(|| Router {
        asn: p.asn.clone(),
        router_id: rid,
        default_ipv4_unicast: Some(false),
        hard_administrative_reset: Some(false),
        graceful_restart_notification: Some(false),
        coalesce_time: Some(1000),
        ..Router::default()
    });
    r.groups.push(Group {
        name: opt(c, "peer-group-name").unwrap_or_else(|| "VTEP".into()),
        remote_as: if p.ebgp {
            "external".into()
        } else {
            p.asn.clone()
        },
        bfd: true,
        ebgp_multihop: (p.ebgp && p.loopback.is_some()).then_some(10),
        update_source: p.loopback.clone(),
        ips: p
            .peers
            .iter()
            .filter(|x| Some(*x) != p.ifaceip.as_ref())
            .cloned()
            .collect(),
    });
    let evpn = r.evpn.get_or_insert_with(|| EvpnAf {
        neighbors: vec![vtep_neighbor()],
        advertise_all_vni: true,
        ..EvpnAf::default()
    });
    if let Some(a) = &p.autortas {
        evpn.autort_as = Some(a.clone());
    }
    for m in ["MAP_VTEP_IN", "MAP_VTEP_OUT"] {
        f.routemaps
            .entry(m.into())
            .or_default()
            .push(RouteMapEntry {
                action: "permit",
                matches: Vec::new(),
                sets: Vec::new(),
            });
    }
}

/// `EvpnPlugin::generate_zone_frr_config`.
fn evpn_zone(f: &mut FrrConfig, id: &str, zone: &Obj, c: &Obj, cfg: &Compiled<'_>, host: &Host) {
    let Some(p) = evpn_peering(c, cfg, host) else {
        return;
    };
    let Some(vni) = opt(zone, "vrf-vxlan") else {
        return;
    };
    let vrf = format!("vrf_{id}");
    let node = &host.node;
    let gateway = list(zone, "exitnodes").contains(node);
    let primary = opt(zone, "exitnodes-primary");
    let local_routing = flag(zone, "exitnodes-local-routing");
    let mut routes = Vec::new();
    if gateway {
        let mut cidrs: BTreeMap<String, u8> = BTreeMap::new();
        for (s, _) in subnets_of(cfg.subnets, None) {
            if s.zone != id {
                cidrs.insert(s.network.clone(), s.mask);
            }
        }
        let mut sorted: Vec<(u128, String, u8)> = cidrs
            .into_iter()
            .map(|(ip, m)| (ip_int(&ip), ip, m))
            .collect();
        sorted.sort();
        for (_, ip, m) in sorted {
            routes.push(IpRoute {
                prefix: format!("{ip}/{m}"),
                via: "null0".into(),
                vrf: None,
            });
        }
    }
    f.vrfs.insert(
        vrf.clone(),
        Vrf {
            vni: Some(vni.clone()),
            ip_routes: routes,
        },
    );
    let mut r = Router {
        asn: p.asn.clone(),
        router_id: p.router_id.clone().unwrap_or_default(),
        hard_administrative_reset: Some(false),
        graceful_restart_notification: Some(false),
        ..Router::default()
    };
    if let Some(a) = &p.autortas {
        let e = r.evpn.get_or_insert_with(EvpnAf::default);
        e.rt_import = vec![format!("{a}:{vni}")];
        e.rt_export = vec![format!("{a}:{vni}")];
    }
    let connected = |af: &mut Option<UnicastAf>| {
        af.get_or_insert_with(UnicastAf::default)
            .redistribute
            .push("connected");
    };
    if gateway {
        f.prefix_lists
            .entry("only_default".into())
            .or_insert_with(|| {
                vec![PrefixRule {
                    seq: 1,
                    network: "0.0.0.0/0".into(),
                    le: None,
                }]
            });
        f.prefix_lists
            .entry("only_default_v6".into())
            .or_insert_with(|| {
                vec![PrefixRule {
                    seq: 1,
                    network: "::/0".into(),
                    le: None,
                }]
            });
        let entry = |fam: &str, list: &str, action: &'static str, metric: bool| RouteMapEntry {
            action,
            matches: vec![format!("{fam} address prefix-list {list}")],
            sets: if metric {
                vec!["metric 200".into()]
            } else {
                Vec::new()
            },
        };
        let (map, action, metric) = match primary.as_deref() {
            Some(p) if p != node => ("MAP_VTEP_OUT", "permit", true),
            _ => ("MAP_VTEP_IN", "deny", false),
        };
        let m = f.routemaps.entry(map.into()).or_default();
        m.insert(0, entry("ipv6", "only_default_v6", action, metric));
        m.insert(0, entry("ip", "only_default", action, metric));
        if !local_routing {
            if let Some(d) = f.routers.get_mut("default") {
                d.ipv4
                    .get_or_insert_with(UnicastAf::default)
                    .import_vrf
                    .push(vrf.clone());
                d.ipv6
                    .get_or_insert_with(UnicastAf::default)
                    .import_vrf
                    .push(vrf.clone());
            }
            connected(&mut r.ipv4);
            connected(&mut r.ipv6);
        }
        r.evpn.get_or_insert_with(EvpnAf::default).default_originate = vec!["ipv4", "ipv6"];
    } else if flag(zone, "advertise-subnets") {
        connected(&mut r.ipv4);
        connected(&mut r.ipv6);
        let e = r.evpn.get_or_insert_with(EvpnAf::default);
        e.advertise_ipv4_unicast = true;
        e.advertise_ipv6_unicast = true;
    }
    if let Some(rt) = opt(zone, "rt-import") {
        r.evpn
            .get_or_insert_with(EvpnAf::default)
            .rt_import
            .extend(crate::model::network::split_list(&rt));
    }
    f.routers.insert(vrf, r);
}

/// An address as a number (`Net::IP->intip`), IPv4 below IPv6.
pub(crate) fn ip_int(ip: &str) -> u128 {
    match ip.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(a)) => u128::from(u32::from(a)),
        Ok(std::net::IpAddr::V6(a)) => u128::from(a),
        Err(_) => 0,
    }
}

/// The whole file: the fixed head, the configuration, `line vty`.
pub fn render(node: &str, f: &FrrConfig) -> String {
    let mut l: Vec<String> = vec![
        format!("frr version {FRR_VERSION}"),
        "frr defaults datacenter".into(),
        format!("hostname {node}"),
        "log syslog informational".into(),
        "service integrated-vtysh-config".into(),
    ];
    body(f, &mut l);
    l.extend(["!".into(), "line vty".into(), "!".into()]);
    let mut out = l.join("\n");
    out.push('\n');
    out
}

/// The lines the templates give for `f`.
fn body(f: &FrrConfig, l: &mut Vec<String>) {
    for (name, vrf) in &f.vrfs {
        l.push("!".into());
        l.push(format!("vrf {name}"));
        if let Some(v) = &vrf.vni {
            l.push(format!(" vni {v}"));
        }
        for r in &vrf.ip_routes {
            l.push(format!(" {}", r.line()));
        }
        l.push("exit-vrf".into());
    }
    for (name, r) in &f.routers {
        l.push("!".into());
        if name == "default" {
            l.push(format!("router bgp {}", r.asn));
        } else {
            l.push(format!("router bgp {} vrf {name}", r.asn));
        }
        router(r, l);
        l.push("exit".into());
    }
    for (domain, net) in &f.isis_routers {
        l.extend([
            "!".into(),
            format!("router isis {domain}"),
            format!(" net {net}"),
            " redistribute ipv4 connected level-1".into(),
            " redistribute ipv6 connected level-1".into(),
            " log-adjacency-changes".into(),
            "exit".into(),
        ]);
    }
    for (iface, domain) in &f.isis_ifaces {
        l.extend([
            "!".into(),
            format!("interface {iface}"),
            format!(" ip router isis {domain}"),
            "exit".into(),
        ]);
    }
    for (name, rules) in &f.prefix_lists {
        l.push("!".into());
        for r in rules {
            let fam = if r.network.contains(':') {
                "ipv6"
            } else {
                "ip"
            };
            let le = r.le.map(|x| format!(" le {x}")).unwrap_or_default();
            l.push(format!(
                "{fam} prefix-list {name} seq {} permit {}{le}",
                r.seq, r.network
            ));
        }
    }
    for (name, entries) in &f.routemaps {
        for (i, e) in entries.iter().enumerate() {
            l.push("!".into());
            l.push(format!("route-map {name} {} {}", e.action, i + 1));
            for m in &e.matches {
                l.push(format!(" match {m}"));
            }
            for s in &e.sets {
                l.push(format!(" set {s}"));
            }
            l.push("exit".into());
        }
    }
    for r in &f.ip_routes {
        l.push("!".into());
        l.push(r.line());
    }
    for (proto, map) in &f.protocol_routemaps {
        l.push("!".into());
        l.push(format!("ip protocol {proto} route-map {map}"));
    }
}

/// The inside of a `router bgp` block (`bgp_router.jinja`).
fn router(r: &Router, l: &mut Vec<String>) {
    l.push(format!(" bgp router-id {}", r.router_id));
    if r.hard_administrative_reset == Some(false) {
        l.push(" no bgp hard-administrative-reset".into());
    }
    if r.default_ipv4_unicast == Some(false) {
        l.push(" no bgp default ipv4-unicast".into());
    }
    if let Some(t) = r.coalesce_time {
        l.push(format!(" coalesce-time {t}"));
    }
    if r.graceful_restart_notification == Some(false) {
        l.push(" no bgp graceful-restart notification".into());
    }
    if r.disable_ebgp_connected_route_check {
        l.push(" bgp disable-ebgp-connected-route-check".into());
    }
    if r.bestpath_as_path_multipath_relax {
        l.push(" bgp bestpath as-path multipath-relax".into());
    }
    for g in &r.groups {
        let n = &g.name;
        l.push(format!(" neighbor {n} peer-group"));
        l.push(format!(" neighbor {n} remote-as {}", g.remote_as));
        if g.bfd {
            l.push(format!(" neighbor {n} bfd"));
        }
        if let Some(h) = g.ebgp_multihop {
            l.push(format!(" neighbor {n} ebgp-multihop {h}"));
        }
        if let Some(u) = &g.update_source {
            l.push(format!(" neighbor {n} update-source {u}"));
        }
        for ip in &g.ips {
            l.push(format!(" neighbor {ip} peer-group {n}"));
        }
    }
    for (fam, af) in [("ipv4", &r.ipv4), ("ipv6", &r.ipv6)] {
        let Some(af) = af else { continue };
        l.push(" !".into());
        l.push(format!(" address-family {fam} unicast"));
        for n in &af.networks {
            l.push(format!("  network {n}"));
        }
        common(&af.import_vrf, &af.neighbors, l);
        for p in &af.redistribute {
            l.push(format!("  redistribute {p}"));
        }
        l.push(" exit-address-family".into());
    }
    if let Some(e) = &r.evpn {
        l.push(" !".into());
        l.push(" address-family l2vpn evpn".into());
        common(&[], &e.neighbors, l);
        if e.advertise_all_vni {
            l.push("  advertise-all-vni".into());
        }
        if let Some(a) = &e.autort_as {
            l.push(format!("  autort as {a}"));
        }
        for d in &e.default_originate {
            l.push(format!("  default-originate {d}"));
        }
        if e.advertise_ipv4_unicast {
            l.push("  advertise ipv4 unicast".into());
        }
        if e.advertise_ipv6_unicast {
            l.push("  advertise ipv6 unicast".into());
        }
        for i in &e.rt_import {
            l.push(format!("  route-target import {i}"));
        }
        for x in &e.rt_export {
            l.push(format!("  route-target export {x}"));
        }
        l.push(" exit-address-family".into());
    }
}

/// `address_family_common`: imported VRFs, then activated neighbors.
fn common(import_vrf: &[String], neighbors: &[AfNeighbor], l: &mut Vec<String>) {
    for v in import_vrf {
        l.push(format!("  import vrf {v}"));
    }
    for n in neighbors {
        l.push(format!("  neighbor {} activate", n.name));
        if n.soft_reconfiguration_inbound {
            l.push(format!(
                "  neighbor {} soft-reconfiguration inbound",
                n.name
            ));
        }
        if let Some(m) = n.route_map_in {
            l.push(format!("  neighbor {} route-map {m} in", n.name));
        }
        if let Some(m) = n.route_map_out {
            l.push(format!("  neighbor {} route-map {m} out", n.name));
        }
    }
}
