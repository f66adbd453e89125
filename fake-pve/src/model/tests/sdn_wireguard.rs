//! 9.2's WireGuard fabrics: a fabric's keepalive, internal nodes with
//! their interfaces (keyed by the model) and peers, external nodes, the
//! checks of proxmox-ve-config with its messages, the keys kept across
//! a node's removal until an apply.

use std::collections::BTreeMap;

use rstest::{fixture, rstest};
use serde_json::{Value, json};

use super::{LAB, World, refused, rq};
use crate::model::PveVersion;
use crate::model::sdn::{Obj, State, View};

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

/// An external node's key (proxmox-wireguard's test key).
const EXT_KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

/// A 9.2 [`LAB`] with the WireGuard fabric `wg1` (10.50.0.0/24, a
/// keepalive of 25 s), its external node `ext` and its internal node
/// `pve` with the interface `wg0` peering with `ext`; nothing applied.
#[fixture]
fn lab() -> World {
    let mut w = World::from_yaml_v(LAB, PveVersion::V9_2);
    w.c.sdn
        .add_fabric(&p(&[
            ("id", "wg1"),
            ("protocol", "wireguard"),
            ("ip_prefix", "10.50.0.0/24"),
            ("persistent_keepalive", "25"),
        ]))
        .expect("fabric");
    add(&mut w, &external("ext", "10.50.0.9")).expect("external node");
    add(
        &mut w,
        &[
            ("fabric_id", "wg1"),
            ("node_id", "pve"),
            ("protocol", "wireguard"),
            ("role", "internal"),
            ("ip", "10.50.0.1"),
            ("endpoint", "192.0.2.1"),
            ("interfaces", "name=wg0,listen_port=51820,ip=10.51.0.1/24"),
            ("peers", "type=external,node=ext,iface=wg0"),
            ("allowed_ips", "10.60.0.0/16"),
        ],
    )
    .expect("internal node");
    w
}

fn external<'a>(node: &'a str, ip: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("fabric_id", "wg1"),
        ("node_id", node),
        ("protocol", "wireguard"),
        ("role", "external"),
        ("ip", ip),
        ("public_key", EXT_KEY),
        ("endpoint", "[2001:DB8::9]:51820"),
    ]
}

fn add(w: &mut World, pairs: &[(&str, &str)]) -> crate::model::Result<()> {
    w.c.sdn.add_fabric_node(&p(pairs), &mut rq())
}

/// A request context of its own: its random draws (the keys it makes)
/// differ from every other request's, as the run's seed stream makes
/// them.
fn next_rq() -> crate::model::Context {
    static SEED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(100);
    let seed = SEED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    crate::model::Context::new(super::T0 * 1000, seed)
}

fn update(w: &mut World, pairs: &[(&str, &str)]) -> crate::model::Result<()> {
    let mut all = vec![
        ("fabric_id", "wg1"),
        ("node_id", "pve"),
        ("protocol", "wireguard"),
    ];
    all.extend_from_slice(pairs);
    w.c.sdn.update_fabric_node(&p(&all), &mut next_rq())
}

fn node(w: &World, id: &str) -> Obj {
    w.c.sdn
        .get_fabric_node("wg1", id)
        .expect("node")
        .entry
        .values
}

/// The public key of an interface property string.
fn key_of(iface: &Value) -> String {
    iface
        .as_str()
        .and_then(|s| s.split(',').find_map(|p| p.strip_prefix("public_key=")))
        .expect("a public key")
        .to_string()
}

#[rstest]
fn nodes_as_the_api_answers_them(lab: World) {
    let f = lab.c.sdn.get_fabric("wg1").expect("fabric").entry.values;
    assert_eq!(f["protocol"], "wireguard");
    assert_eq!(f["persistent_keepalive"], 25);
    assert!(!f.contains_key("area") && !f.contains_key("hello_interval"));
    let n = node(&lab, "pve");
    assert_eq!(n["role"], "internal");
    assert_eq!(n["endpoint"], "192.0.2.1");
    assert_eq!(n["peers"], json!(["type=external,node=ext,iface=wg0"]));
    assert_eq!(n["allowed_ips"], json!(["10.60.0.0/16"]));
    // The crate's key order, the key of the interface's private key.
    let iface = n["interfaces"][0].as_str().expect("interface");
    let key = key_of(&n["interfaces"][0]);
    assert_eq!(key.len(), 44);
    assert_eq!(
        iface,
        format!("name=wg0,listen_port=51820,public_key={key},ip=10.51.0.1/24")
    );
    assert!(!n.contains_key("public_key"));
    let e = node(&lab, "ext");
    assert_eq!(e["role"], "external");
    assert_eq!(e["public_key"], EXT_KEY);
    assert_eq!(e["endpoint"], "[2001:db8::9]:51820");
    // An external node has no interfaces, and no empty list of them.
    assert!(!e.contains_key("interfaces") && !e.contains_key("peers"));
}

#[rstest]
fn a_keepalive_of_zero_is_off_and_can_be_deleted(mut lab: World) {
    let upd = |pairs: &[(&str, &str)]| {
        let mut all = vec![("id", "wg1"), ("protocol", "wireguard")];
        all.extend_from_slice(pairs);
        p(&all)
    };
    lab.c
        .sdn
        .update_fabric(&upd(&[("persistent_keepalive", "0")]))
        .expect("off");
    let f = lab.c.sdn.get_fabric("wg1").expect("fabric").entry.values;
    assert!(!f.contains_key("persistent_keepalive"), "{f:?}");
    lab.c
        .sdn
        .update_fabric(&upd(&[("persistent_keepalive", "30")]))
        .expect("on");
    lab.c
        .sdn
        .update_fabric(&upd(&[("delete", "persistent_keepalive")]))
        .expect("deleted");
    let f = lab.c.sdn.get_fabric("wg1").expect("fabric").entry.values;
    assert!(!f.contains_key("persistent_keepalive"), "{f:?}");
    assert_eq!(
        refused(
            lab.c
                .sdn
                .update_fabric(&upd(&[("persistent_keepalive", "2.5")]))
        ),
        (
            500,
            "updating fabric failed: invalid value for 'persistent_keepalive': '2.5' is not an integer between 0 and 65535"
                .into()
        )
    );
}

/// A given public key is no interface's: the key is always that of the
/// interface's private key, kept while the node is changed, removed or
/// added again, until an apply finds the interface gone.
#[rstest]
fn an_interface_keeps_its_key_until_an_apply_finds_it_gone(mut lab: World) {
    let first = key_of(&node(&lab, "pve")["interfaces"][0]);
    update(
        &mut lab,
        &[
            (
                "interfaces",
                &format!("name=wg0,listen_port=51821,public_key={EXT_KEY}"),
            ),
            ("interfaces", "name=wg1,listen_port=51822"),
            ("peers", "type=external,node=ext,iface=wg1"),
        ],
    )
    .expect("updated");
    let n = node(&lab, "pve");
    assert_eq!(key_of(&n["interfaces"][0]), first);
    let second = key_of(&n["interfaces"][1]);
    assert_ne!(second, first);
    lab.c
        .sdn
        .delete_fabric_node(&p(&[("fabric_id", "wg1"), ("node_id", "pve")]))
        .expect("deleted");
    add(
        &mut lab,
        &[
            ("fabric_id", "wg1"),
            ("node_id", "pve"),
            ("protocol", "wireguard"),
            ("role", "internal"),
            ("ip", "10.50.0.1"),
            ("interfaces", "name=wg0,listen_port=51820"),
        ],
    )
    .expect("again");
    assert_eq!(key_of(&node(&lab, "pve")["interfaces"][0]), first);
    // The apply keeps wg0's key and drops wg1's.
    lab.c.sdn.commit(None, false).expect("applied");
    lab.c
        .sdn
        .update_fabric_node(
            &p(&[
                ("fabric_id", "wg1"),
                ("node_id", "pve"),
                ("protocol", "wireguard"),
                ("interfaces", "name=wg0,listen_port=51820"),
                ("interfaces", "name=wg1,listen_port=51822"),
            ]),
            &mut next_rq(),
        )
        .expect("wg1 again");
    let n = node(&lab, "pve");
    assert_eq!(key_of(&n["interfaces"][0]), first);
    assert_ne!(key_of(&n["interfaces"][1]), second);
}

/// PVE's handler always hands the crate the interfaces it keyed: an
/// update of an internal node without them leaves it none (and its
/// peers then name no interface of it).
#[rstest]
fn an_update_without_interfaces_leaves_an_internal_node_none(mut lab: World) {
    let r = update(&mut lab, &[("endpoint", "wg.example.com")]);
    assert_eq!(
        refused(r),
        (
            500,
            "updating node failed: peer configuration references non-existing local interface 'wg0'"
                .into()
        )
    );
    update(
        &mut lab,
        &[("endpoint", "wg.example.com"), ("delete", "peers")],
    )
    .expect("updated");
    let n = node(&lab, "pve");
    assert_eq!(n["endpoint"], "wg.example.com");
    assert!(!n.contains_key("interfaces") && !n.contains_key("peers"));
}

#[rstest]
#[case(&[("role", "external")], "updating node failed: cannot change role of existing WireGuard node")]
#[case(&[("endpoint", "10.0.0.1:51820")], "updating node failed: invalid hostname or IP address: '10.0.0.1:51820'")]
#[case(&[("interfaces", "name=wg0")], "updating node failed: listen_port: property is missing and it is not optional")]
#[case(&[("interfaces", "name=wg0,listen_port=51820"), ("interfaces", "name=wg1,listen_port=51820")],
    "updating node failed: WireGuard interface listen port duplicated in node configuration: 51820")]
#[case(&[("interfaces", "name=wg0,listen_port=51820"), ("peers", "type=internal,node=pve9,node_iface=wg0,iface=wg0")],
    "updating node failed: peer configuration references non-existing interface 'wg0' on node 'pve9'")]
#[case(&[("interfaces", "name=wg0,listen_port=51820"), ("peers", "type=external,node=nobody,iface=wg0")],
    "updating node failed: peer configuration references non-existing external node 'nobody'")]
#[case(&[("protocol", "openfabric"), ("ip", "10.50.0.3")],
    "updating node failed: node has a different protocol than the referenced fabric")]
fn update_refusals(mut lab: World, #[case] pairs: &[(&str, &str)], #[case] msg: &str) {
    let mut all: Vec<(&str, &str)> = vec![
        ("fabric_id", "wg1"),
        ("node_id", "pve"),
        ("protocol", "wireguard"),
    ];
    all.retain(|(k, _)| !pairs.iter().any(|(pk, _)| pk == k));
    all.extend_from_slice(pairs);
    let r = lab.c.sdn.update_fabric_node(&p(&all), &mut rq());
    assert_eq!(refused(r), (500, msg.into()));
}

#[rstest]
#[case(&[("node_id", "ext2"), ("role", "external"), ("ip", "10.50.0.8"), ("endpoint", "192.0.2.9:1")],
    "adding node failed: missing field `public_key`")]
#[case(&[("node_id", "ext2"), ("role", "external"), ("ip", "10.50.0.8"), ("public_key", EXT_KEY)],
    "adding node failed: missing field `endpoint`")]
#[case(&[("node_id", "ext2"), ("role", "external"), ("ip", "10.50.0.8"), ("public_key", "AAECAw=="), ("endpoint", "192.0.2.9:1")],
    "adding node failed: expected 32 bytes, got 4")]
#[case(&[("node_id", "ext2"), ("role", "external"), ("ip", "10.50.0.8"), ("public_key", EXT_KEY), ("endpoint", "192.0.2.9")],
    "adding node failed: host and port must be separated by a colon")]
#[case(&[("node_id", "pve2"), ("ip", "10.50.0.8")], "adding node failed: missing field `role`")]
#[case(&[("node_id", "pve2"), ("role", "internal")],
    "adding node failed: node 'wg1_pve2' does not have an IP configured for this fabric prefix 10.50.0.0/24")]
#[case(&[("node_id", "pve2"), ("role", "internal"), ("ip", "10.50.0.8"), ("interfaces", "name=wg0,listen_port=1,ip=10.51.0.1/24")],
    "adding node failed: fabric wg1 contains nodes with duplicated IPs")]
#[case(&[("node_id", "pve2"), ("role", "internal"), ("ip", "10.50.0.8"), ("interfaces", "name=wg0,listen_port=1"), ("interfaces", "name=wg0,listen_port=2")],
    "adding node failed: interface is already in use by another fabric")]
#[case(&[("node_id", "pve2"), ("role", "internal"), ("ip", "10.50.0.8"), ("peers", "type=external,node=ext,iface=wg9")],
    "adding node failed: peer configuration references non-existing local interface 'wg9'")]
fn add_refusals(mut lab: World, #[case] pairs: &[(&str, &str)], #[case] msg: &str) {
    let mut all = vec![("fabric_id", "wg1"), ("protocol", "wireguard")];
    all.extend_from_slice(pairs);
    assert_eq!(refused(add(&mut lab, &all)), (500, msg.into()));
}

/// A node's WireGuard interface name is its own across fabrics, and so
/// is the port it listens on.
#[rstest]
fn interfaces_and_ports_are_a_node_s_own_across_fabrics(mut lab: World) {
    lab.c
        .sdn
        .add_fabric(&p(&[("id", "wg2"), ("protocol", "wireguard")]))
        .expect("second fabric");
    let second = |iface: &'static str| {
        vec![
            ("fabric_id", "wg2"),
            ("node_id", "pve"),
            ("protocol", "wireguard"),
            ("role", "internal"),
            ("interfaces", iface),
        ]
    };
    assert_eq!(
        refused(add(&mut lab, &second("name=wg0,listen_port=51900"))),
        (
            500,
            "adding node failed: interface is already in use by another fabric".into()
        )
    );
    assert_eq!(
        refused(add(&mut lab, &second("name=wg5,listen_port=51820"))),
        (
            500,
            "adding node failed: WireGuard interface listen port duplicated in node configuration: 51820"
                .into()
        )
    );
    add(&mut lab, &second("name=wg5,listen_port=51900")).expect("its own");
}

/// An internal peer names another node's interface; it is printed in
/// the crate's order.
#[rstest]
fn an_internal_peer_names_an_interface_of_the_fabric(mut lab: World) {
    let pve2 = |peer: &'static str| {
        vec![
            ("fabric_id", "wg1"),
            ("node_id", "pve2"),
            ("protocol", "wireguard"),
            ("role", "internal"),
            ("ip", "10.50.0.2"),
            ("interfaces", "name=wg0,listen_port=51820"),
            ("peers", peer),
        ]
    };
    assert_eq!(
        refused(add(
            &mut lab,
            &pve2("type=internal,node=pve,node_iface=wg7,iface=wg0")
        )),
        (
            500,
            "adding node failed: peer configuration references non-existing interface 'wg7' on node 'pve'"
                .into()
        )
    );
    add(
        &mut lab,
        &pve2("iface=wg0,node_iface=wg0,node=pve,type=internal,endpoint=2001:DB8::1,skip_route_generation=1"),
    )
    .expect("peer");
    assert_eq!(
        node(&lab, "pve2")["peers"],
        json!([
            "type=internal,node=pve,node_iface=wg0,iface=wg0,endpoint=2001:db8::1,skip_route_generation=true"
        ])
    );
}

#[rstest]
fn an_external_node_changes_its_key_endpoint_and_networks(mut lab: World) {
    let ext = |pairs: &[(&str, &str)]| {
        let mut all = vec![
            ("fabric_id", "wg1"),
            ("node_id", "ext"),
            ("protocol", "wireguard"),
        ];
        all.extend_from_slice(pairs);
        p(&all)
    };
    let key = "ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=";
    lab.c
        .sdn
        .update_fabric_node(
            &ext(&[
                ("public_key", key),
                ("endpoint", "wg.example.com:51821"),
                ("allowed_ips", "10.70.0.0/16"),
                ("allowed_ips", "fd70::/48"),
            ]),
            &mut rq(),
        )
        .expect("updated");
    let e = node(&lab, "ext");
    assert_eq!(e["public_key"], key);
    assert_eq!(e["endpoint"], "wg.example.com:51821");
    assert_eq!(e["allowed_ips"], json!(["10.70.0.0/16", "fd70::/48"]));
    lab.c
        .sdn
        .update_fabric_node(&ext(&[("delete", "allowed_ips")]), &mut rq())
        .expect("deleted");
    assert!(!node(&lab, "ext").contains_key("allowed_ips"));
    assert_eq!(
        refused(
            lab.c
                .sdn
                .update_fabric_node(&ext(&[("delete", "endpoint")]), &mut rq())
        ),
        (
            500,
            "updating node failed: node has a different protocol than the referenced fabric".into()
        )
    );
}

/// The fabric and its nodes are pending until applied, and shown in
/// the running view after.
#[rstest]
fn wireguard_is_pending_until_applied(mut lab: World) {
    let (fabrics, nodes) = lab.c.sdn.fabrics_all(View::Pending).expect("pending");
    assert_eq!(fabrics.items["wg1"].state, Some(State::New));
    assert_eq!(nodes.items["wg1_pve"].state, Some(State::New));
    lab.c.sdn.commit(None, false).expect("applied");
    let running = lab
        .c
        .sdn
        .fabric_node_list("wg1", View::Running)
        .expect("running");
    assert_eq!(running.items["pve"].values["role"], "internal");
    update(
        &mut lab,
        &[
            ("interfaces", "name=wg0,listen_port=51820,ip=10.51.0.1/24"),
            ("peers", "type=external,node=ext,iface=wg0"),
            ("allowed_ips", "10.61.0.0/16"),
        ],
    )
    .expect("changed");
    let pending = lab
        .c
        .sdn
        .fabric_node_list("wg1", View::Pending)
        .expect("pending");
    let e = &pending.items["pve"];
    assert_eq!(e.state, Some(State::Changed));
    let set = &e.pending.as_ref().expect("pending values").set;
    assert_eq!(set["allowed_ips"], json!(["10.61.0.0/16"]));
    assert!(!set.contains_key("interfaces"), "{set:?}");
}

/// A saved world keeps the keys, so that a node's interface keeps its
/// public key across a restart.
#[rstest]
fn the_keys_survive_a_saved_world(lab: World) {
    let saved = serde_json::to_value(&lab.c.sdn).expect("saved");
    let back: crate::model::sdn::Sdn = serde_json::from_value(saved).expect("loaded");
    assert_eq!(back, lab.c.sdn);
    let mut again = World::from_yaml_v(LAB, PveVersion::V9_2);
    again.c.sdn = back;
    let before = key_of(&node(&lab, "pve")["interfaces"][0]);
    update(
        &mut again,
        &[
            ("interfaces", "name=wg0,listen_port=51820"),
            ("peers", "type=external,node=ext,iface=wg0"),
        ],
    )
    .expect("updated");
    assert_eq!(key_of(&node(&again, "pve")["interfaces"][0]), before);
}
