//! A node's views of an applied fabric (`interfaces`, `neighbors`,
//! `routes`), derived from the applied configuration as FRR would report
//! it.

use std::collections::BTreeMap;

use rstest::{fixture, rstest};
use serde_json::{Value, json};

use super::{LAB, World, refused, rq};
use crate::model::sdn::fabrics::{FabricInterface, Neighbor, Route};

/// When the fabrics are applied.
const APPLIED: i64 = 1_000_000;
/// 8h24m12s after the apply.
const NOW: i64 = APPLIED + 8 * 3600 + 24 * 60 + 12;

fn p(pairs: &[(&str, &str)]) -> BTreeMap<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), json!(v)))
        .collect()
}

fn node(w: &mut World, fabric: &str, protocol: &str, name: &str, ip: &str, ifaces: &[&str]) {
    let mut m = p(&[
        ("fabric_id", fabric),
        ("node_id", name),
        ("protocol", protocol),
        ("ip", ip),
    ]);
    m.insert("interfaces".into(), json!(ifaces));
    w.c.sdn.add_fabric_node(&m, &mut rq()).expect("node");
}

/// An OpenFabric full mesh `of1` of pve1..pve3 (unnumbered), an OSPF
/// fabric `os1` of three nodes on one broadcast subnet and an OSPF chain
/// `os2` (pve1 - pve2 - pve3 over /31 links), applied at [`APPLIED`].
#[fixture]
fn lab() -> World {
    let mut w = World::from_yaml(LAB);
    let fabric = |w: &mut World, pairs: &[(&str, &str)]| {
        w.c.sdn.add_fabric(&p(pairs)).expect("fabric");
    };
    fabric(
        &mut w,
        &[
            ("id", "of1"),
            ("protocol", "openfabric"),
            ("ip_prefix", "10.100.0.0/24"),
        ],
    );
    for (n, ip) in [
        ("pve1", "10.100.0.1"),
        ("pve2", "10.100.0.2"),
        ("pve3", "10.100.0.3"),
    ] {
        node(
            &mut w,
            "of1",
            "openfabric",
            n,
            ip,
            &["name=ens19", "name=ens20"],
        );
    }
    fabric(
        &mut w,
        &[
            ("id", "os1"),
            ("protocol", "ospf"),
            ("area", "0"),
            ("ip_prefix", "10.200.0.0/24"),
        ],
    );
    for (i, n) in ["pve1", "pve2", "pve3"].iter().enumerate() {
        let ip = format!("10.200.0.{}", i + 1);
        let iface = format!("name=ens21,ip=10.0.0.{}/24", i + 1);
        node(&mut w, "os1", "ospf", n, &ip, &[&iface]);
    }
    fabric(
        &mut w,
        &[
            ("id", "os2"),
            ("protocol", "ospf"),
            ("area", "1"),
            ("ip_prefix", "10.201.0.0/24"),
        ],
    );
    node(
        &mut w,
        "os2",
        "ospf",
        "pve1",
        "10.201.0.1",
        &["name=ens22,ip=10.1.0.0/31"],
    );
    node(
        &mut w,
        "os2",
        "ospf",
        "pve2",
        "10.201.0.2",
        &["name=ens22,ip=10.1.0.1/31", "name=ens23,ip=10.1.0.2/31"],
    );
    node(
        &mut w,
        "os2",
        "ospf",
        "pve3",
        "10.201.0.3",
        &["name=ens23,ip=10.1.0.3/31"],
    );
    w.c.sdn.commit_at(None, true, APPLIED).expect("apply");
    w
}

/// Every member online, booted long before the apply.
fn all_up(_: &str) -> Option<i64> {
    Some(0)
}

fn iface(name: &str, state: &'static str, kind: &'static str) -> FabricInterface {
    FabricInterface {
        name: name.into(),
        state,
        kind,
    }
}

fn nb(neighbor: &str, status: &str, uptime: &str) -> Neighbor {
    Neighbor {
        neighbor: neighbor.into(),
        status: status.into(),
        uptime: uptime.into(),
    }
}

fn route(route: &str, via: &[&str]) -> Route {
    Route {
        route: route.into(),
        via: via.iter().map(|v| (*v).to_string()).collect(),
    }
}

#[rstest]
fn openfabric_as_fabricd_reports_it(lab: World) {
    let sdn = &lab.c.sdn;
    assert_eq!(
        sdn.fabric_interfaces("pve1", "of1", &all_up)
            .expect("interfaces"),
        vec![
            iface("dummy_of1", "Up", "Loopback"),
            iface("ens19", "Up", "Point-To-Point"),
            iface("ens20", "Up", "Point-To-Point"),
        ]
    );
    assert_eq!(
        sdn.fabric_neighbors("pve1", "of1", &all_up, NOW)
            .expect("neighbors"),
        vec![nb("pve2", "Up", "8h24m12s"), nb("pve3", "Up", "8h24m12s")]
    );
    assert_eq!(
        sdn.fabric_routes("pve1", "of1", &all_up).expect("routes"),
        vec![
            route("10.100.0.2/32", &["10.100.0.2"]),
            route("10.100.0.3/32", &["10.100.0.3"]),
        ]
    );
}

/// An offline member is no neighbor and has no route; a member booted
/// after the apply is up since its boot.
#[rstest]
fn offline_members_are_no_neighbors(lab: World) {
    let up = |n: &str| match n {
        "pve3" => None,
        "pve2" => Some(NOW - 62),
        _ => Some(0),
    };
    let sdn = &lab.c.sdn;
    assert_eq!(
        sdn.fabric_neighbors("pve1", "of1", &up, NOW)
            .expect("neighbors"),
        vec![nb("pve2", "Up", "1m2s")]
    );
    assert_eq!(
        sdn.fabric_routes("pve1", "of1", &up).expect("routes"),
        vec![route("10.100.0.2/32", &["10.100.0.2"])]
    );
    assert_eq!(
        sdn.fabric_neighbors("pve1", "os1", &up, NOW)
            .expect("neighbors"),
        vec![nb("10.0.0.2", "Full/DR", "1m02s")]
    );
}

/// A broadcast segment elects the highest router IDs: pve3 DR, pve2
/// Backup; pve1 sees both Full.
#[rstest]
fn ospf_on_a_broadcast_subnet(lab: World) {
    let sdn = &lab.c.sdn;
    assert_eq!(
        sdn.fabric_interfaces("pve1", "os1", &all_up)
            .expect("interfaces"),
        vec![
            iface("dummy_os1", "up", "Broadcast"),
            iface("ens21", "up", "Broadcast"),
        ]
    );
    assert_eq!(
        sdn.fabric_neighbors("pve1", "os1", &all_up, NOW)
            .expect("neighbors"),
        vec![
            nb("10.0.0.2", "Full/Backup", "8h24m12s"),
            nb("10.0.0.3", "Full/DR", "8h24m12s"),
        ]
    );
    assert_eq!(
        sdn.fabric_routes("pve1", "os1", &all_up).expect("routes"),
        vec![
            route("10.200.0.2/32", &["10.0.0.2"]),
            route("10.200.0.3/32", &["10.0.0.3"]),
        ]
    );
}

/// Over a chain, the far end is reached via the middle node.
#[rstest]
fn ospf_over_a_chain(lab: World) {
    let sdn = &lab.c.sdn;
    assert_eq!(
        sdn.fabric_neighbors("pve1", "os2", &all_up, NOW)
            .expect("neighbors"),
        vec![nb("10.1.0.1", "Full/DR", "8h24m12s")]
    );
    assert_eq!(
        sdn.fabric_routes("pve1", "os2", &all_up).expect("routes"),
        vec![
            route("10.201.0.2/32", &["10.1.0.1"]),
            route("10.201.0.3/32", &["10.1.0.1"]),
        ]
    );
    assert_eq!(
        sdn.fabric_neighbors("pve2", "os2", &all_up, NOW)
            .expect("neighbors")
            .len(),
        2
    );
}

/// A node outside the fabric, a WireGuard or BGP fabric: FRR has
/// nothing for them.
#[rstest]
fn nothing_for_a_node_outside_the_fabric(mut lab: World) {
    let sdn = &lab.c.sdn;
    assert!(
        sdn.fabric_interfaces("pve", "of1", &all_up)
            .expect("ok")
            .is_empty()
    );
    assert!(
        sdn.fabric_neighbors("pve", "of1", &all_up, NOW)
            .expect("ok")
            .is_empty()
    );
    assert!(
        sdn.fabric_routes("pve", "of1", &all_up)
            .expect("ok")
            .is_empty()
    );
    lab.c
        .sdn
        .add_fabric(&p(&[
            ("id", "bg1"),
            ("protocol", "bgp"),
            ("ip_prefix", "10.60.0.0/24"),
        ]))
        .expect("bgp");
    lab.c.sdn.commit_at(None, true, APPLIED).expect("apply");
    assert!(
        lab.c
            .sdn
            .fabric_routes("pve1", "bg1", &all_up)
            .expect("ok")
            .is_empty()
    );
}

#[rstest]
fn unknown_and_unapplied_fabrics(mut lab: World) {
    assert_eq!(
        refused(lab.c.sdn.fabric_routes("pve1", "nope", &all_up)),
        (500, "fabric 'nope' does not exist in configuration".into())
    );
    // Added, not applied: the running configuration does not have it.
    lab.c
        .sdn
        .add_fabric(&p(&[
            ("id", "of2"),
            ("protocol", "openfabric"),
            ("ip_prefix", "10.102.0.0/24"),
        ]))
        .expect("fabric");
    assert_eq!(
        refused(lab.c.sdn.fabric_neighbors("pve1", "of2", &all_up, NOW)),
        (500, "fabric 'of2' does not exist in configuration".into())
    );
    let fresh = World::from_yaml(LAB);
    assert_eq!(
        refused(fresh.c.sdn.fabric_interfaces("pve", "of1", &all_up)),
        (500, "No such file or directory (os error 2)".into())
    );
}
