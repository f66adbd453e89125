//! SDN fabrics (9.x): OpenFabric and OSPF fabrics and their nodes, the
//! checks of proxmox-ve-config with its messages, the pending and
//! running views, apply, rollback and the global lock.

use std::collections::BTreeMap;

use rstest::{fixture, rstest};
use serde_json::{Value, json};

use super::{LAB, World, refused, rq};
use crate::model::sdn::{Entry, Listing, State, View};

/// Parameters from pairs (as the wire hands them over: text).
fn p(pairs: &[(&str, &str)]) -> BTreeMap<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), json!(v)))
        .collect()
}

/// Parameters with a list.
fn with_list(pairs: &[(&str, &str)], key: &str, items: &[&str]) -> BTreeMap<String, Value> {
    let mut m = p(pairs);
    m.insert(key.into(), json!(items));
    m
}

/// [`LAB`] with the OpenFabric fabric `of1` (10.100.0.0/24) and its node
/// `pve` (10.100.0.1, two interfaces), nothing applied yet.
#[fixture]
fn lab() -> World {
    let mut w = World::from_yaml(LAB);
    w.c.sdn
        .add_fabric(&p(&[
            ("id", "of1"),
            ("protocol", "openfabric"),
            ("ip_prefix", "10.100.0.0/24"),
            ("hello_interval", "3"),
        ]))
        .expect("fabric");
    w.c.sdn
        .add_fabric_node(
            &with_list(
                &[
                    ("fabric_id", "of1"),
                    ("node_id", "pve"),
                    ("protocol", "openfabric"),
                    ("ip", "10.100.0.1"),
                ],
                "interfaces",
                &["name=ens19", "hello_multiplier=3,name=ens20"],
            ),
            &mut rq(),
        )
        .expect("node");
    w
}

fn values(l: Listing) -> Vec<Entry> {
    l.items.into_values().collect()
}

#[rstest]
fn fabric_and_node_as_the_api_answers_them(lab: World) {
    let shown = lab.c.sdn.get_fabric("of1").expect("fabric");
    let f = &shown.entry.values;
    assert_eq!(f["protocol"], "openfabric");
    assert_eq!(f["ip_prefix"], "10.100.0.0/24");
    assert_eq!(f["hello_interval"], 3);
    assert_eq!(shown.digest.as_deref().map(str::len), Some(64));
    let node = lab.c.sdn.get_fabric_node("of1", "pve").expect("node");
    let n = &node.entry.values;
    assert_eq!(n["fabric_id"], "of1");
    assert_eq!(n["node_id"], "pve");
    assert_eq!(n["ip"], "10.100.0.1");
    // The crate's key order.
    assert_eq!(
        n["interfaces"],
        json!(["name=ens19", "name=ens20,hello_multiplier=3"])
    );
    assert_eq!(node.digest, shown.digest);
}

#[rstest]
fn the_prefix_is_made_canonical_on_create_only(mut lab: World) {
    lab.c
        .sdn
        .add_fabric(&p(&[
            ("id", "of2"),
            ("protocol", "openfabric"),
            ("ip6_prefix", "fd00:0:0:0::5/64"),
        ]))
        .expect("fabric");
    assert_eq!(
        lab.c.sdn.get_fabric("of2").expect("fabric").entry.values["ip6_prefix"],
        "fd00::/64"
    );
    lab.c
        .sdn
        .update_fabric(&p(&[
            ("id", "of2"),
            ("protocol", "openfabric"),
            ("ip6_prefix", "fd01::7/64"),
        ]))
        .expect("update");
    assert_eq!(
        lab.c.sdn.get_fabric("of2").expect("fabric").entry.values["ip6_prefix"],
        "fd01::7/64"
    );
}

#[rstest]
#[case(&[("id", "of1"), ("protocol", "openfabric"), ("ip_prefix", "10.200.0.0/24")],
    "adding fabric failed: fabric 'of1' already exists in config")]
#[case(&[("id", "of2"), ("protocol", "openfabric")],
    "adding fabric failed: fabric 'of2' does not have an IP prefix configured")]
#[case(&[("id", "of2"), ("protocol", "openfabric"), ("ip_prefix", "10.100.0.128/25")],
    "adding fabric failed: IP prefix 10.100.0.128/25 in fabric 'of2' overlaps with IPv4 prefix 10.100.0.0/24 in fabric 'of1'")]
#[case(&[("id", "os1"), ("protocol", "ospf"), ("ip_prefix", "10.200.0.0/24")],
    "adding fabric failed: missing field `area`")]
#[case(&[("id", "os1"), ("protocol", "ospf"), ("area", "x"), ("ip_prefix", "10.200.0.0/24")],
    "adding fabric failed: Area is not a number, nor an ip address")]
#[case(&[("id", "os1"), ("protocol", "ospf"), ("area", "0")],
    "adding fabric failed: fabric 'os1' does not have an IP prefix configured")]
#[case(&[("id", "os1"), ("protocol", "ospf"), ("area", "0"), ("ip_prefix", "10.200.0.0/24"), ("ip6_prefix", "fd00::/64")],
    "adding fabric failed: IPv6 is currently not supported for protocol ospf")]
fn fabric_refusals(mut lab: World, #[case] pairs: &[(&str, &str)], #[case] msg: &str) {
    assert_eq!(refused(lab.c.sdn.add_fabric(&p(pairs))), (500, msg.into()));
}

#[rstest]
fn one_ospf_fabric_per_area(mut lab: World) {
    let ospf = |id: &str, area: &str, prefix: &str| {
        p(&[
            ("id", id),
            ("protocol", "ospf"),
            ("area", area),
            ("ip_prefix", prefix),
        ])
    };
    lab.c
        .sdn
        .add_fabric(&ospf("os1", "0.0.0.5", "10.201.0.0/24"))
        .expect("first");
    // Area 5 is area 0.0.0.5.
    assert_eq!(
        refused(lab.c.sdn.add_fabric(&ospf("os2", "5", "10.202.0.0/24"))),
        (500, "adding fabric failed: duplicate OSPF area".into())
    );
}

#[rstest]
#[case(&[("node_id", "pve"), ("ip", "10.100.0.2")], &[],
    "adding node failed: node 'pve' already exists in config for fabric of1")]
#[case(&[("node_id", "pve2"), ("ip", "10.99.0.2")], &[],
    "adding node failed: node IP 10.99.0.2 is outside the IP prefix 10.100.0.0/24 of the fabric")]
#[case(&[("node_id", "pve2"), ("ip", "10.100.0.1")], &[],
    "adding node failed: fabric of1 contains nodes with duplicated IPs")]
#[case(&[("node_id", "pve2")], &[],
    "adding node failed: node 'of1_pve2' does not have an IP configured for this fabric prefix 10.100.0.0/24")]
#[case(&[("node_id", "pve2"), ("ip", "10.100.0.2"), ("ip6", "fd00::2")], &[],
    "adding node failed: fabric 'of1' does not have an IP prefix configured for the node IP fd00::2")]
#[case(&[("node_id", "pve2"), ("ip", "10.100.0.2"), ("protocol", "ospf")], &[],
    "adding node failed: node has a different protocol than the referenced fabric")]
#[case(&[("node_id", "pve2"), ("fabric_id", "nope"), ("ip", "10.100.0.2")], &[],
    "adding node failed: fabric 'nope' does not exist in configuration")]
fn node_refusals(
    mut lab: World,
    #[case] pairs: &[(&str, &str)],
    #[case] ifaces: &[&str],
    #[case] msg: &str,
) {
    let mut all = vec![("fabric_id", "of1"), ("protocol", "openfabric")];
    all.retain(|(k, _)| !pairs.iter().any(|(pk, _)| pk == k));
    all.extend_from_slice(pairs);
    let r = lab
        .c
        .sdn
        .add_fabric_node(&with_list(&all, "interfaces", ifaces), &mut rq());
    assert_eq!(refused(r), (500, msg.into()));
}

#[rstest]
fn an_interface_belongs_to_one_fabric(mut lab: World) {
    lab.c
        .sdn
        .add_fabric(&p(&[
            ("id", "of2"),
            ("protocol", "openfabric"),
            ("ip_prefix", "10.101.0.0/24"),
        ]))
        .expect("fabric");
    let node = |iface: &str| {
        with_list(
            &[
                ("fabric_id", "of2"),
                ("node_id", "pve"),
                ("protocol", "openfabric"),
                ("ip", "10.101.0.1"),
            ],
            "interfaces",
            &[iface],
        )
    };
    assert_eq!(
        refused(lab.c.sdn.add_fabric_node(&node("name=ens19"), &mut rq())),
        (
            500,
            "adding node failed: interface is already in use by another fabric".into()
        )
    );
    lab.c
        .sdn
        .add_fabric_node(&node("name=ens21"), &mut rq())
        .expect("another interface");
    // PVE keys the node list by node name: `pve` shows once, from of2.
    let nodes = values(lab.c.sdn.fabric_nodes_index(View::Current).expect("list"));
    assert_eq!(nodes.len(), 1);
    assert_eq!(nodes[0].values["fabric_id"], "of2");
    let (_, all) = lab.c.sdn.fabrics_all(View::Current).expect("all");
    assert_eq!(values(all).len(), 2);
}

#[rstest]
fn updates_and_deletes_of_a_node(mut lab: World) {
    lab.c
        .sdn
        .update_fabric_node(
            &with_list(
                &[
                    ("fabric_id", "of1"),
                    ("node_id", "pve"),
                    ("protocol", "openfabric"),
                    ("ip", "10.100.0.9"),
                ],
                "delete",
                &["interfaces"],
            ),
            &mut rq(),
        )
        .expect("update");
    let n = lab
        .c
        .sdn
        .get_fabric_node("of1", "pve")
        .expect("node")
        .entry
        .values;
    assert_eq!(n["ip"], "10.100.0.9");
    assert_eq!(n["interfaces"], json!([]));
    let r = lab.c.sdn.update_fabric_node(
        &with_list(
            &[
                ("fabric_id", "of1"),
                ("node_id", "pve"),
                ("protocol", "openfabric"),
            ],
            "delete",
            &["ip"],
        ),
        &mut rq(),
    );
    assert_eq!(
        refused(r),
        (
            500,
            "updating node failed: node 'of1_pve' does not have an IP configured for this fabric prefix 10.100.0.0/24"
                .into()
        )
    );
    let r = lab.c.sdn.update_fabric_node(
        &p(&[
            ("fabric_id", "of1"),
            ("node_id", "pve9"),
            ("protocol", "openfabric"),
        ]),
        &mut rq(),
    );
    assert_eq!(
        refused(r),
        (
            500,
            "updating node failed: node 'pve9' does not exist in fabric 'of1'".into()
        )
    );
    lab.c
        .sdn
        .delete_fabric_node(&p(&[("fabric_id", "of1"), ("node_id", "pve")]))
        .expect("delete");
    assert!(lab.c.sdn.get_fabric_node("of1", "pve").is_err());
}

#[rstest]
fn a_changed_digest_is_refused(mut lab: World) {
    let r = lab.c.sdn.update_fabric(&p(&[
        ("id", "of1"),
        ("protocol", "openfabric"),
        ("csnp_interval", "10"),
        ("digest", "0000"),
    ]));
    assert_eq!(
        refused(r),
        (
            500,
            "updating fabric failed: detected modified configuration - file changed by other user? Try again."
                .into()
        )
    );
    let digest = lab
        .c
        .sdn
        .get_fabric("of1")
        .expect("fabric")
        .digest
        .unwrap_or_default();
    lab.c
        .sdn
        .update_fabric(&with_list(
            &[
                ("id", "of1"),
                ("protocol", "openfabric"),
                ("csnp_interval", "10"),
                ("digest", digest.as_str()),
            ],
            "delete",
            &["hello_interval"],
        ))
        .expect("update");
    let f = lab.c.sdn.get_fabric("of1").expect("fabric");
    assert_eq!(f.entry.values["csnp_interval"], 10);
    assert!(!f.entry.values.contains_key("hello_interval"));
    assert_ne!(f.digest, Some(digest));
}

#[rstest]
fn fabric_delete_checks_users_and_node_permissions(mut lab: World) {
    let v = lab.c.version();
    lab.c
        .sdn
        .create_zone(
            v,
            &p(&[("zone", "vx"), ("type", "vxlan"), ("fabric", "of1")]),
            &mut super::rq(),
        )
        .expect("zone");
    let del = p(&[("id", "of1")]);
    assert_eq!(
        refused(lab.c.sdn.delete_fabric(&del, |_| true)),
        (
            500,
            "deleting fabric failed: this fabric is still used in the VXLAN zone \"vx\"".into()
        )
    );
    assert_eq!(
        refused(lab.c.sdn.delete_fabric(&del, |_| false)),
        (
            500,
            "deleting fabric failed: permission check failed: missing 'Sys.Modify' on node pve"
                .into()
        )
    );
    lab.c
        .sdn
        .delete_zone(&p(&[("zone", "vx")]))
        .expect("zone gone");
    lab.c.sdn.delete_fabric(&del, |_| true).expect("delete");
    assert_eq!(
        refused(lab.c.sdn.delete_fabric(&del, |_| true)),
        (
            500,
            "deleting fabric failed: fabric 'of1' does not exist in configuration".into()
        )
    );
}

#[rstest]
fn pending_running_apply_and_rollback(mut lab: World) {
    // Not applied: the running view is empty, the pending one new.
    assert!(values(lab.c.sdn.fabrics_index(View::Running).expect("running")).is_empty());
    let pending = values(lab.c.sdn.fabrics_index(View::Pending).expect("pending"));
    assert_eq!(pending[0].state, Some(State::New));
    let new = pending[0].pending.as_ref().expect("pending values");
    assert_eq!(new.set["ip_prefix"], "10.100.0.0/24");
    assert!(new.deleted.is_empty());
    assert!(!pending[0].values.contains_key("id"));
    // A fabric's nodes in a view it is not in: PVE's lookup fails.
    assert_eq!(
        refused(lab.c.sdn.fabric_node_list("of1", View::Running)),
        (500, "fabric 'of1' does not exist in configuration".into())
    );
    lab.c.sdn.commit(None, true).expect("apply");
    let running = lab.c.sdn.fabrics_index(View::Running).expect("running");
    assert!(running.digest.is_none());
    assert_eq!(values(running)[0].values["id"], "of1");
    let pending = values(lab.c.sdn.fabrics_index(View::Pending).expect("pending"));
    assert!(pending[0].state.is_none());
    // Reordered interfaces are no change (`encode_value` sorts them).
    lab.c
        .sdn
        .update_fabric_node(
            &with_list(
                &[
                    ("fabric_id", "of1"),
                    ("node_id", "pve"),
                    ("protocol", "openfabric"),
                ],
                "interfaces",
                &["name=ens20,hello_multiplier=3", "name=ens19"],
            ),
            &mut rq(),
        )
        .expect("reorder");
    let nodes = values(
        lab.c
            .sdn
            .fabric_node_list("of1", View::Pending)
            .expect("nodes"),
    );
    assert!(nodes[0].state.is_none());
    lab.c
        .sdn
        .update_fabric(&p(&[
            ("id", "of1"),
            ("protocol", "openfabric"),
            ("csnp_interval", "20"),
        ]))
        .expect("update");
    let pending = values(lab.c.sdn.fabrics_index(View::Pending).expect("pending"));
    assert_eq!(pending[0].state, Some(State::Changed));
    let changed = pending[0].pending.as_ref().expect("pending values");
    assert_eq!(changed.set["csnp_interval"], 20);
    lab.c.sdn.rollback(None, true).expect("rollback");
    let f = lab.c.sdn.get_fabric("of1").expect("fabric");
    assert!(!f.entry.values.contains_key("csnp_interval"));
}

#[rstest]
fn the_global_lock_guards_fabrics(mut lab: World) {
    let token = lab.c.sdn.lock(true, &mut super::rq()).expect("lock");
    let add = |t: Option<&str>| {
        let mut m = p(&[
            ("id", "of2"),
            ("protocol", "openfabric"),
            ("ip_prefix", "10.101.0.0/24"),
        ]);
        if let Some(t) = t {
            m.insert("lock-token".into(), json!(t));
        }
        m
    };
    assert_eq!(
        refused(lab.c.sdn.add_fabric(&add(None))),
        (
            500,
            "adding fabric failed: invalid lock token provided!".into()
        )
    );
    lab.c
        .sdn
        .add_fabric(&add(Some(&token)))
        .expect("with the token");
    let del = |t: Option<&str>| {
        let mut m = p(&[("id", "of2")]);
        if let Some(t) = t {
            m.insert("lock-token".into(), json!(t));
        }
        m
    };
    assert_eq!(
        refused(lab.c.sdn.delete_fabric(&del(None), |_| true)),
        (
            500,
            "deleting fabric failed: invalid lock token provided!".into()
        )
    );
    lab.c
        .sdn
        .delete_fabric(&del(Some(&token)), |_| true)
        .expect("deleted with the token");
}
