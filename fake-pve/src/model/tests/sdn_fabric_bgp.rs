//! 9.2's fabric additions: BGP fabrics, what OSPF and BGP fabrics
//! redistribute, and the properties an update deletes.

use std::collections::BTreeMap;

use rstest::{fixture, rstest};
use serde_json::{Value, json};

use super::{LAB, World, refused, rq};

fn p(pairs: &[(&str, &str)]) -> BTreeMap<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), json!(v)))
        .collect()
}

fn with_list(pairs: &[(&str, &str)], key: &str, items: &[&str]) -> BTreeMap<String, Value> {
    let mut m = p(pairs);
    m.insert(key.into(), json!(items));
    m
}

/// [`LAB`] with the BGP fabric `bg1` and the OSPF fabric `os1`, both
/// redistributing connected routes.
#[fixture]
fn lab() -> World {
    let mut w = World::from_yaml(LAB);
    w.c.sdn
        .add_fabric(&with_list(
            &[
                ("id", "bg1"),
                ("protocol", "bgp"),
                ("ip_prefix", "10.60.0.7/24"),
            ],
            "redistribute",
            &["source=connected", "route-map=rm1,source=static"],
        ))
        .expect("bgp fabric");
    w.c.sdn
        .add_fabric(&with_list(
            &[
                ("id", "os1"),
                ("protocol", "ospf"),
                ("area", "0"),
                ("ip_prefix", "10.61.0.0/24"),
            ],
            "redistribute",
            &["source=bgp"],
        ))
        .expect("ospf fabric");
    w
}

#[rstest]
fn a_bgp_fabric_is_kept_and_read_back(lab: World) {
    let f = lab.c.sdn.get_fabric("bg1").expect("fabric").entry.values;
    assert_eq!(f["protocol"], "bgp");
    // Made canonical on create, as the other protocols' prefixes.
    assert_eq!(f["ip_prefix"], "10.60.0.0/24");
    // The crate's key order: source first.
    assert_eq!(
        f["redistribute"],
        json!(["source=connected", "source=static,route-map=rm1"])
    );
    assert!(!f.contains_key("area"));
    let o = lab.c.sdn.get_fabric("os1").expect("fabric").entry.values;
    assert_eq!(o["redistribute"], json!(["source=bgp"]));
}

#[rstest]
#[case(&[("id", "bg2"), ("protocol", "bgp")],
    "adding fabric failed: fabric 'bg2' does not have an IP prefix configured")]
#[case(&[("id", "bg2"), ("protocol", "bgp"), ("ip_prefix", "10.60.0.0/25")],
    "adding fabric failed: IP prefix 10.60.0.0/25 in fabric 'bg2' overlaps with IPv4 prefix 10.60.0.0/24 in fabric 'bg1'")]
fn bgp_fabric_refusals(mut lab: World, #[case] pairs: &[(&str, &str)], #[case] msg: &str) {
    assert_eq!(refused(lab.c.sdn.add_fabric(&p(pairs))), (500, msg.into()));
}

/// The crate's BGP node is tagged by `role`, which 9.2's schema of
/// `add_node` does not have: no BGP node can be added.
#[rstest]
fn a_bgp_node_wants_a_role(mut lab: World) {
    let node = with_list(
        &[
            ("fabric_id", "bg1"),
            ("node_id", "pve"),
            ("protocol", "bgp"),
            ("ip", "10.60.0.1"),
        ],
        "interfaces",
        &["name=ens19"],
    );
    assert_eq!(
        refused(lab.c.sdn.add_fabric_node(&node, &mut rq())),
        (500, "adding node failed: missing field `role`".into())
    );
    let update = p(&[
        ("fabric_id", "bg1"),
        ("node_id", "pve"),
        ("protocol", "bgp"),
    ]);
    assert_eq!(
        refused(lab.c.sdn.update_fabric_node(&update, &mut rq())),
        (
            500,
            "updating node failed: node 'pve' does not exist in fabric 'bg1'".into()
        )
    );
}

#[rstest]
fn redistribution_is_replaced_and_deleted(mut lab: World) {
    lab.c
        .sdn
        .update_fabric(&with_list(
            &[("id", "bg1"), ("protocol", "bgp")],
            "redistribute",
            &["source=kernel"],
        ))
        .expect("replace");
    let f = lab.c.sdn.get_fabric("bg1").expect("fabric").entry.values;
    assert_eq!(f["redistribute"], json!(["source=kernel"]));
    for (id, protocol) in [("bg1", "bgp"), ("os1", "ospf")] {
        lab.c
            .sdn
            .update_fabric(&p(&[
                ("id", id),
                ("protocol", protocol),
                ("delete", "redistribute"),
            ]))
            .expect("delete");
        let f = lab.c.sdn.get_fabric(id).expect("fabric").entry.values;
        assert!(!f.contains_key("redistribute"), "{id}: {f:?}");
    }
}

/// An OpenFabric fabric has no `redistribute`: what is given is
/// ignored, as serde ignores a member the type does not have.
#[rstest]
fn openfabric_has_no_redistribution(mut lab: World) {
    lab.c
        .sdn
        .add_fabric(&with_list(
            &[
                ("id", "of1"),
                ("protocol", "openfabric"),
                ("ip_prefix", "10.62.0.0/24"),
            ],
            "redistribute",
            &["source=connected"],
        ))
        .expect("fabric");
    let f = lab.c.sdn.get_fabric("of1").expect("fabric").entry.values;
    assert!(!f.contains_key("redistribute"));
}

#[rstest]
#[case("os1", "ospf", "area")]
#[case("os1", "ospf", "hello_interval")]
#[case("bg1", "bgp", "area")]
fn deletes_the_protocol_has_not(
    mut lab: World,
    #[case] id: &str,
    #[case] protocol: &str,
    #[case] key: &str,
) {
    let r = lab
        .c
        .sdn
        .update_fabric(&p(&[("id", id), ("protocol", protocol), ("delete", key)]));
    assert_eq!(
        refused(r),
        (
            500,
            "updating fabric failed: data did not match any variant of untagged enum FabricDeletableProperties"
                .into()
        )
    );
}

/// 9.2 deletes an OpenFabric fabric's prefixes; the nodes' IPs must
/// still have one (a node's IP cannot go while the prefix is there).
#[rstest]
fn openfabric_prefixes_are_deleted(mut lab: World) {
    lab.c
        .sdn
        .add_fabric(&p(&[
            ("id", "of1"),
            ("protocol", "openfabric"),
            ("ip_prefix", "10.62.0.0/24"),
            ("ip6_prefix", "fd62::/64"),
        ]))
        .expect("fabric");
    lab.c
        .sdn
        .add_fabric_node(
            &with_list(
                &[
                    ("fabric_id", "of1"),
                    ("node_id", "pve"),
                    ("protocol", "openfabric"),
                    ("ip", "10.62.0.1"),
                    ("ip6", "fd62::1"),
                ],
                "interfaces",
                &["name=ens19"],
            ),
            &mut rq(),
        )
        .expect("node");
    let del = |key: &str| p(&[("id", "of1"), ("protocol", "openfabric"), ("delete", key)]);
    assert_eq!(
        refused(lab.c.sdn.update_fabric(&del("ip_prefix"))),
        (
            500,
            "updating fabric failed: fabric 'of1' does not have an IP prefix configured for the node IP 10.62.0.1"
                .into()
        )
    );
    lab.c
        .sdn
        .delete_fabric_node(&p(&[("fabric_id", "of1"), ("node_id", "pve")]))
        .expect("node gone");
    lab.c
        .sdn
        .update_fabric(&del("ip_prefix"))
        .expect("prefix gone");
    let f = lab.c.sdn.get_fabric("of1").expect("fabric").entry.values;
    assert!(!f.contains_key("ip_prefix"));
    assert_eq!(f["ip6_prefix"], "fd62::/64");
}

/// A 9.2 OSPF interface keeps its `network_type`, after its IP.
#[rstest]
fn an_ospf_interface_keeps_its_network_type(mut lab: World) {
    lab.c
        .sdn
        .add_fabric_node(
            &with_list(
                &[
                    ("fabric_id", "os1"),
                    ("node_id", "pve"),
                    ("protocol", "ospf"),
                    ("ip", "10.61.0.1"),
                ],
                "interfaces",
                &["network_type=broadcast,name=ens19,ip=10.9.0.1/24"],
            ),
            &mut rq(),
        )
        .expect("node");
    let n = lab.c.sdn.get_fabric_node("os1", "pve").expect("node");
    assert_eq!(
        n.entry.values["interfaces"],
        json!(["name=ens19,ip=10.9.0.1/24,network_type=broadcast"])
    );
}

/// A changed redistribution is pending until applied.
#[rstest]
fn a_changed_redistribution_is_pending(mut lab: World) {
    use crate::model::sdn::{State, View};
    lab.c.sdn.commit(None, true).expect("apply");
    lab.c
        .sdn
        .update_fabric(&with_list(
            &[("id", "os1"), ("protocol", "ospf")],
            "redistribute",
            &["source=static,route-map=rm2"],
        ))
        .expect("update");
    let pending = lab.c.sdn.fabrics_index(View::Pending).expect("pending");
    let os1 = &pending.items["os1"];
    assert_eq!(os1.state, Some(State::Changed));
    let changed = os1.pending.as_ref().expect("pending values");
    assert_eq!(
        changed.set["redistribute"],
        json!(["source=static,route-map=rm2"])
    );
    let bg1 = &pending.items["bg1"];
    assert!(bg1.state.is_none());
}
