//! SDN controllers of 9.2: evpn controllers with their nodes, peer
//! group, BGP mode and route maps (several of them now, which evpn zones
//! name as secondary controllers), bgp controllers with route maps, and
//! the checks of pve-network's controller plugins; 9.1's one evpn
//! controller.

use std::collections::BTreeMap;

use rstest::{fixture, rstest};
use serde_json::{Value, json};

use super::{LAB, World, refused, rq};
use crate::model::PveVersion;
use crate::model::sdn::{File, Obj, State, View};

/// Parameters from pairs (as the wire hands them over: text); a key
/// given twice is a list.
fn p(pairs: &[(&str, &str)]) -> BTreeMap<String, Value> {
    let mut m: BTreeMap<String, Value> = BTreeMap::new();
    for (k, v) in pairs {
        match m.get_mut(*k) {
            Some(Value::Array(a)) => a.push(json!(v)),
            Some(old) => *old = json!([old.clone(), v]),
            None => {
                m.insert((*k).to_string(), json!(v));
            }
        }
    }
    m
}

/// The cluster's nodes, as the wire hands them to the model.
fn nodes() -> Vec<String> {
    vec!["pve".into(), "pve2".into()]
}

fn controller(w: &mut World, pairs: &[(&str, &str)]) -> crate::model::Result<()> {
    let v = w.c.version();
    w.c.sdn
        .create_plugin(v, File::Controllers, &p(pairs), &nodes())
}

fn update(w: &mut World, pairs: &[(&str, &str)]) -> crate::model::Result<()> {
    let v = w.c.version();
    w.c.sdn
        .update_plugin(v, File::Controllers, &p(pairs), &nodes())
}

fn zone(w: &mut World, pairs: &[(&str, &str)]) -> crate::model::Result<()> {
    let v = w.c.version();
    w.c.sdn.create_zone(v, &p(pairs), &mut rq())
}

fn read(w: &World, f: File, id: &str) -> Obj {
    w.c.sdn
        .read(f, id, View::Current)
        .expect("read")
        .entry
        .values
}

/// A 9.2 [`LAB`] with the evpn controller `evpn1` (ASN 65000, peers,
/// the default peer group `VTEP`) and the route map `rmin`.
#[fixture]
fn lab() -> World {
    let mut w = World::from_yaml_v(LAB, PveVersion::V9_2);
    controller(
        &mut w,
        &[
            ("controller", "evpn1"),
            ("type", "evpn"),
            ("asn", "65000"),
            ("peers", "10.0.0.1,10.0.0.2"),
        ],
    )
    .expect("controller");
    w.c.sdn
        .create_route_map_entry(&p(&[
            ("route-map-id", "rmin"),
            ("order", "10"),
            ("action", "permit"),
        ]))
        .expect("route map");
    w
}

#[rstest]
fn an_evpn_controller_keeps_its_new_options(mut lab: World) {
    controller(
        &mut lab,
        &[
            ("controller", "evpn2"),
            ("type", "evpn"),
            ("asn", "65000"),
            ("fabric", "f1"),
            ("nodes", "pve2,pve"),
            ("peer-group-name", "EDGE"),
            ("bgp-mode", "external"),
            ("ebgp-multihop", "3"),
            ("route-map-in", "rmin"),
            ("route-map-out", "rmin"),
        ],
    )
    .expect("a second evpn controller");
    let c = read(&lab, File::Controllers, "evpn2");
    // The controller plugins keep `nodes` as given (zones sort theirs).
    assert_eq!(c["nodes"], "pve2,pve");
    assert_eq!(c["peer-group-name"], "EDGE");
    assert_eq!(c["bgp-mode"], "external");
    assert_eq!(c["ebgp-multihop"], 3);
    assert_eq!(c["route-map-in"], "rmin");
    let pending = lab
        .c
        .sdn
        .read(File::Controllers, "evpn2", View::Pending)
        .expect("pending")
        .entry;
    assert_eq!(pending.state, Some(State::New));
    let set = &pending.pending.expect("pending values").set;
    assert_eq!(set["peer-group-name"], "EDGE");
    assert_eq!(set["nodes"], "pve2,pve");
    update(
        &mut lab,
        &[
            ("controller", "evpn2"),
            ("delete", "peer-group-name,route-map-in"),
            ("bgp-mode", "internal"),
        ],
    )
    .expect_err("two VTEP peer groups");
    update(
        &mut lab,
        &[
            ("controller", "evpn2"),
            ("delete", "route-map-in,nodes"),
            ("bgp-mode", "internal"),
        ],
    )
    .expect("updated");
    let c = read(&lab, File::Controllers, "evpn2");
    assert!(!c.contains_key("route-map-in") && !c.contains_key("nodes"));
    assert_eq!(c["bgp-mode"], "internal");
}

#[rstest]
#[case(&[("controller", "evpn2"), ("type", "evpn"), ("asn", "65000"), ("peers", "10.0.0.3")],
    "create sdn controller object failed: cannot have two controllers with same peer-group-name configured (VTEP)")]
#[case(&[("controller", "evpn2"), ("type", "evpn"), ("asn", "65001"), ("peers", "10.0.0.3"), ("peer-group-name", "B")],
    "create sdn controller object failed: all EVPN controllers on a node must have the same ASN configured")]
#[case(&[("controller", "evpn2"), ("type", "evpn"), ("asn", "65000"), ("peers", "10.0.0.3"), ("peer-group-name", "B"), ("route-map-out", "nope")],
    "create sdn controller object failed: route map nope does not exist!")]
#[case(&[("controller", "evpn2"), ("type", "evpn"), ("asn", "65000"), ("peer-group-name", "B")],
    "create sdn controller object failed: must have exactly one of peers / fabric defined")]
#[case(&[("controller", "bgp1"), ("type", "bgp"), ("asn", "65000"), ("node", "pve"), ("peers", "10.0.0.9"), ("route-map-in", "nope")],
    "create sdn controller object failed: route map nope does not exist!")]
#[case(&[("controller", "bgp1"), ("type", "bgp"), ("asn", "65000"), ("node", "pve"), ("peers", "10.0.0.9"), ("nodes", "pve")],
    "unexpected property 'nodes'")]
#[case(&[("controller", "isis1"), ("type", "isis"), ("node", "pve"), ("isis-domain", "d"), ("isis-net", "49.0001.1921.6800.1002.00"), ("isis-ifaces", "eth0"), ("route-map-in", "rmin")],
    "unexpected property 'route-map-in'")]
#[case(&[("controller", "bgp1"), ("type", "bgp"), ("asn", "65000"), ("node", "pve"), ("peers", "10.0.0.9"), ("peer-group-name", "X")],
    "unexpected property 'peer-group-name'")]
fn controller_refusals(mut lab: World, #[case] pairs: &[(&str, &str)], #[case] msg: &str) {
    assert_eq!(refused(controller(&mut lab, pairs)), (500, msg.into()));
}

/// Evpn controllers on other nodes may have their own ASN; on one node
/// iBGP sessions share the bgp controller's, unless it is eBGP or the
/// evpn controller speaks eBGP.
#[rstest]
fn the_router_asn_of_a_node_is_unambiguous(mut lab: World) {
    update(&mut lab, &[("controller", "evpn1"), ("nodes", "pve")]).expect("pve only");
    controller(
        &mut lab,
        &[
            ("controller", "evpn2"),
            ("type", "evpn"),
            ("asn", "65001"),
            ("peers", "10.0.0.3"),
            ("peer-group-name", "B"),
            ("nodes", "pve2"),
        ],
    )
    .expect("another node, another ASN");
    controller(
        &mut lab,
        &[
            ("controller", "bgp2"),
            ("type", "bgp"),
            ("asn", "65100"),
            ("node", "pve2"),
            ("peers", "10.0.0.9"),
        ],
    )
    .expect("the bgp controller's own hook does not look");
    assert_eq!(
        refused(update(&mut lab, &[("controller", "evpn2"), ("asn", "65001")])),
        (
            500,
            "update sdn controller object failed: cannot have two different ASNs for iBGP sessions configured"
                .into()
        )
    );
    update(
        &mut lab,
        &[("controller", "evpn2"), ("bgp-mode", "external")],
    )
    .expect("eBGP");
    update(&mut lab, &[("controller", "bgp2"), ("ebgp", "1")]).expect("bgp as eBGP");
    update(&mut lab, &[("controller", "evpn2"), ("delete", "bgp-mode")]).expect("auto again");
}

/// A route map a controller names stays while it has an entry: its last
/// entry cannot be deleted.
#[rstest]
fn a_route_map_a_controller_names_keeps_its_last_entry(mut lab: World) {
    update(
        &mut lab,
        &[("controller", "evpn1"), ("route-map-out", "rmin")],
    )
    .expect("named");
    lab.c
        .sdn
        .create_route_map_entry(&p(&[
            ("route-map-id", "rmin"),
            ("order", "20"),
            ("action", "deny"),
        ]))
        .expect("second entry");
    let del = |order: &str| p(&[("route-map-id", "rmin"), ("order", order)]);
    lab.c
        .sdn
        .delete_route_map_entry(&del("20"))
        .expect("one of two");
    assert_eq!(
        refused(lab.c.sdn.delete_route_map_entry(&del("10"))),
        (
            500,
            "deleting route map entry failed: route map rmin still referenced by controller evpn1"
                .into()
        )
    );
    update(
        &mut lab,
        &[("controller", "evpn1"), ("delete", "route-map-out")],
    )
    .expect("unnamed");
    lab.c
        .sdn
        .delete_route_map_entry(&del("10"))
        .expect("the last one");
}

/// 9.1 knows one evpn controller and none of 9.2's options (its schema
/// refuses them before the model is asked; the model refuses too).
#[test]
fn nine_one_has_one_evpn_controller() {
    let mut w = World::from_yaml_v(LAB, PveVersion::V9_1);
    let evpn = |id: &'static str| {
        vec![
            ("controller", id),
            ("type", "evpn"),
            ("asn", "65000"),
            ("peers", "10.0.0.1"),
        ]
    };
    controller(&mut w, &evpn("evpn1")).expect("first");
    assert_eq!(
        refused(controller(&mut w, &evpn("evpn2"))),
        (
            500,
            "create sdn controller object failed: only 1 global evpn controller can be defined"
                .into()
        )
    );
    let mut with_group = evpn("evpn2");
    with_group.push(("peer-group-name", "B"));
    assert_eq!(
        refused(controller(&mut w, &with_group)),
        (500, "unexpected property 'peer-group-name'".into())
    );
    let r = zone(
        &mut w,
        &[
            ("zone", "ev"),
            ("type", "evpn"),
            ("controller", "evpn1"),
            ("vrf-vxlan", "10000"),
            ("secondary-controllers", "evpn1"),
        ],
    );
    assert_eq!(
        refused(r),
        (500, "unexpected property 'secondary-controllers'".into())
    );
}

/// A 9.2 evpn zone names secondary evpn controllers, which then stay.
#[rstest]
fn secondary_controllers_are_evpn_controllers_a_zone_holds(mut lab: World) {
    controller(
        &mut lab,
        &[
            ("controller", "evpn2"),
            ("type", "evpn"),
            ("asn", "65000"),
            ("peers", "10.0.0.3"),
            ("peer-group-name", "B"),
        ],
    )
    .expect("second");
    controller(
        &mut lab,
        &[
            ("controller", "bgp1"),
            ("type", "bgp"),
            ("asn", "65000"),
            ("node", "pve"),
            ("peers", "10.0.0.9"),
        ],
    )
    .expect("bgp");
    let ev = |secondary: &[&'static str]| {
        let mut pairs = vec![
            ("zone", "ev"),
            ("type", "evpn"),
            ("controller", "evpn1"),
            ("vrf-vxlan", "10000"),
        ];
        pairs.extend(secondary.iter().map(|s| ("secondary-controllers", *s)));
        pairs
    };
    assert_eq!(
        refused(zone(&mut lab, &ev(&["nope"]))),
        (
            500,
            "create sdn zone object failed: controller nope don't exist".into()
        )
    );
    assert_eq!(
        refused(zone(&mut lab, &ev(&["bgp1"]))),
        (
            500,
            "create sdn zone object failed: bgp1 is not a evpn controller type".into()
        )
    );
    zone(&mut lab, &ev(&["evpn2"])).expect("zone");
    let z = read(&lab, File::Zones, "ev");
    assert_eq!(z["secondary-controllers"], json!(["evpn2"]));
    let del = |id: &str| p(&[("controller", id)]);
    assert_eq!(
        refused(lab.c.sdn.delete_plugin(File::Controllers, &del("evpn2"))),
        (
            500,
            "delete sdn controller object failed: controller evpn2 is used by ev".into()
        )
    );
    // Applied, then the list's order alone is no change.
    lab.c.sdn.commit(None, false).expect("applied");
    let v = lab.c.version();
    lab.c
        .sdn
        .update_zone(
            v,
            &p(&[("zone", "ev"), ("delete", "secondary-controllers")]),
            &mut rq(),
        )
        .expect("none");
    let pending = lab
        .c
        .sdn
        .read(File::Zones, "ev", View::Pending)
        .expect("pending")
        .entry;
    assert_eq!(pending.state, Some(State::Changed));
    assert_eq!(
        pending.pending.expect("pending values").deleted,
        ["secondary-controllers"]
    );
    lab.c
        .sdn
        .delete_plugin(File::Controllers, &del("evpn2"))
        .expect("no longer used");
}
