//! Node networks: the interfaces of a fresh install, changes written as
//! pending, their checks, apply and revert.

use std::collections::BTreeMap;

use rstest::rstest;
use serde_json::{Value, json};

use super::{World, fresh, lab, refused};
use crate::model::network::{self, NodeNetwork};
use crate::model::{PveVersion, Result};

/// `node`'s network configuration.
fn net<'a>(w: &'a mut World, node: &str, now: i64) -> &'a mut NodeNetwork {
    w.c.network.node_mut(&w.c.nodes, node, now)
}

/// `GET /nodes/{node}/network`.
fn list(
    w: &mut World,
    node: &str,
    filter: Option<&str>,
    can_see: impl Fn(&str) -> bool,
    now: i64,
) -> (Vec<Value>, Option<String>) {
    let v9 = w.c.version.is_v9();
    let (items, changes) = net(w, node, now).list(filter, can_see, v9);
    (crate::api::network::view::ifaces(&items), changes)
}

/// `GET /nodes/{node}/network/{iface}`.
fn iface(w: &mut World, node: &str, iface: &str, now: i64) -> Result<Value> {
    let v9 = w.c.version.is_v9();
    net(w, node, now)
        .iface(iface, v9)
        .map(|i| crate::api::network::view::iface(&i, false))
}

/// `POST /nodes/{node}/network`.
fn create(
    w: &mut World,
    node: &str,
    iface: &str,
    params: &BTreeMap<String, Value>,
    now: i64,
) -> Result<()> {
    net(w, node, now).create(iface, params, now)
}

/// `PUT /nodes/{node}/network/{iface}`.
fn update(
    w: &mut World,
    node: &str,
    iface: &str,
    params: &BTreeMap<String, Value>,
    delete: &[String],
    now: i64,
) -> Result<()> {
    net(w, node, now).update(iface, params, delete, now)
}

/// `DELETE /nodes/{node}/network/{iface}`.
fn delete(w: &mut World, node: &str, iface: &str, now: i64) -> Result<()> {
    net(w, node, now).delete(iface, now)
}

/// `DELETE /nodes/{node}/network`.
fn revert(w: &mut World, node: &str, now: i64) {
    net(w, node, now).revert();
}

/// The `srvreload` worker's apply.
fn apply(w: &mut World, node: &str, now: i64) {
    network::apply(&mut w.c.network, &mut w.c.nodes, node, now);
}

fn p(pairs: &[(&str, &str)]) -> BTreeMap<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), json!(v)))
        .collect()
}

fn names(w: &mut World, filter: Option<&str>) -> Vec<String> {
    let now = w.now();
    let (items, _) = list(w, "pve", filter, |_| true, now);
    items
        .iter()
        .map(|i| i["iface"].as_str().expect("iface").to_string())
        .collect()
}

#[rstest]
fn a_fresh_node_has_two_nics_and_its_bridges(mut lab: World) {
    assert_eq!(names(&mut lab, None), ["eno1", "eno2", "vmbr0", "vmbr1"]);
    assert_eq!(names(&mut lab, Some("bridge")), ["vmbr0", "vmbr1"]);
    assert_eq!(names(&mut lab, Some("any_bridge")), ["vmbr0", "vmbr1"]);
    assert_eq!(names(&mut lab, Some("eth")), ["eno1", "eno2"]);
    assert!(names(&mut lab, Some("bond")).is_empty());
}

#[rstest]
fn the_first_bridge_carries_the_node_address(mut fresh: World) {
    let now = fresh.now();
    let v = iface(&mut fresh, "pve", "vmbr0", now).expect("vmbr0");
    assert_eq!(v["cidr"], json!("192.0.2.10/24"));
    assert_eq!(v["gateway"], json!("192.0.2.1"));
    assert_eq!(v["bridge_ports"], json!("eno1"));
    assert_eq!(v["active"], json!(1));
    assert_eq!(v["method"], json!("static"));
    assert!(
        v.get("iface").is_none(),
        "GET of one interface leaves out its name"
    );
    let eno1 = iface(&mut fresh, "pve", "eno1", now).expect("eno1");
    assert_eq!(eno1["exists"], json!(1));
    assert_eq!(eno1["active"], json!(1), "enslaved by an auto bridge");
    let eno2 = iface(&mut fresh, "pve", "eno2", now).expect("eno2");
    assert!(eno2.get("active").is_none());
}

#[rstest]
fn bridges_the_caller_may_not_see_are_left_out(mut lab: World) {
    let now = lab.now();
    let (items, _) = list(&mut lab, "pve", None, |b| b == "vmbr1", now);
    let names: Vec<&str> = items.iter().filter_map(|i| i["iface"].as_str()).collect();
    assert_eq!(names, ["eno1", "eno2", "vmbr1"]);
}

#[rstest]
fn an_unknown_interface_is_a_400(mut fresh: World) {
    let now = fresh.now();
    assert_eq!(
        refused(iface(&mut fresh, "pve", "vmbr7", now)),
        (400, "iface: interface does not exist".into())
    );
    assert_eq!(
        refused(delete(&mut fresh, "pve", "vmbr7", now)),
        (400, "iface: interface does not exist".into())
    );
    assert_eq!(
        refused(update(&mut fresh, "pve", "vmbr7", &p(&[]), &[], now)),
        (400, "iface: interface does not exist".into())
    );
}

#[rstest]
#[case("vmbr0", &[("type", "bridge")], 400, "iface: interface already exists")]
#[case("vmbr1", &[("type", "bridge"), ("bridge_ports", "eno1")], 400, "bridge_ports: eno1 is already used on interface 'vmbr0'.")]
#[case("vmbr1", &[("type", "bridge"), ("cidr", "10.0.0.1/24"), ("gateway", "10.0.0.254")], 400,
    "gateway: Default gateway already exists on interface 'vmbr0'.")]
#[case("vmbr1", &[("type", "bridge"), ("cidr", "10.0.0.1/24"), ("address", "10.0.0.1")], 400,
    "address: address conflicts with cidr")]
#[case("vmbr1", &[("type", "bridge"), ("address6", "::1"), ("netmask6", "64")], 400,
    "address: ::1 with type 'LOOPBACK', cannot be used as host IPv6 address.")]
#[case("vmbr1", &[("type", "bridge"), ("address6", "fd00::1"), ("netmask6", "129")], 400,
    "netmask: 129 is not a valid subnet length for ipv6")]
#[case("vmbr1", &[("type", "bridge"), ("bridge_ports", "eno9")], 500, "bridge 'vmbr1' - unable to find bridge port 'eno9'")]
#[case("vmbr1", &[("type", "OVSBridge")], 500, "Open VSwitch is not installed (need package 'openvswitch-switch')")]
#[case("bond0", &[("type", "bond"), ("slaves", "eno7")], 500, "bond 'bond0' - unable to find slave 'eno7'")]
#[case("vlan5", &[("type", "vlan")], 500, "missing vlan-raw-device option")]
#[case("eno2.5000", &[("type", "vlan")], 500, "vlan 'eno2.5000' - vlan-id 5000 should be <= 4094")]
#[case("eno7.10", &[("type", "vlan")], 500, "vlan 'eno7.10' - unable to find parent 'eno7'")]
#[case("vmbr1", &[("type", "bridge"), ("bridge_vids", " ")], 400, "bridge_vids: VLAN list items are empty")]
fn create_refusals(
    mut fresh: World,
    #[case] iface: &str,
    #[case] params: &[(&str, &str)],
    #[case] code: u16,
    #[case] msg: &str,
) {
    let now = fresh.now();
    assert_eq!(
        refused(create(&mut fresh, "pve", iface, &p(params), now)),
        (code, msg.to_string())
    );
    assert!(
        fresh
            .c
            .networks()
            .get("pve")
            .expect("pve")
            .pending
            .is_none(),
        "nothing written"
    );
}

#[rstest]
fn a_created_bridge_is_pending_until_applied(mut fresh: World) {
    let now = fresh.now();
    create(
        &mut fresh,
        "pve",
        "vmbr1",
        &p(&[
            ("type", "bridge"),
            ("cidr", "10.0.0.1/24"),
            ("autostart", "1"),
            ("comments", "lab"),
        ]),
        now,
    )
    .expect("created");
    let v = iface(&mut fresh, "pve", "vmbr1", now).expect("visible while pending");
    assert_eq!(v["address"], json!("10.0.0.1"));
    assert_eq!(v["netmask"], json!("24"));
    assert_eq!(v["cidr"], json!("10.0.0.1/24"));
    assert_eq!(v["bridge_stp"], json!("off"));
    assert_eq!(v["comments"], json!("lab\n"));
    assert!(v.get("active").is_none(), "not up before apply");
    let (_, changes) = list(&mut fresh, "pve", None, |_| true, now);
    let diff = changes.expect("a diff of the pending file");
    assert!(diff.contains("+auto vmbr1"), "{diff}");
    assert!(diff.contains("+iface vmbr1 inet static"), "{diff}");
    // The VMs' bridges change only with apply.
    assert_eq!(fresh.c.nodes.members()[0].bridges, ["vmbr0"]);
    apply(&mut fresh, "pve", now);
    assert_eq!(fresh.c.nodes.members()[0].bridges, ["vmbr0", "vmbr1"]);
    let (_, changes) = list(&mut fresh, "pve", None, |_| true, now);
    assert_eq!(changes, None);
    let v = iface(&mut fresh, "pve", "vmbr1", now).expect("vmbr1");
    assert_eq!(v["active"], json!(1));
}

#[rstest]
fn revert_drops_the_pending_file(mut fresh: World) {
    let now = fresh.now();
    create(&mut fresh, "pve", "vmbr1", &p(&[("type", "bridge")]), now).expect("created");
    revert(&mut fresh, "pve", now);
    assert_eq!(names(&mut fresh, None), ["eno1", "eno2", "vmbr0"]);
    apply(&mut fresh, "pve", now);
    assert_eq!(fresh.c.nodes.members()[0].bridges, ["vmbr0"]);
}

#[rstest]
fn deleting_the_bridge_of_a_port_frees_the_port(mut fresh: World) {
    let now = fresh.now();
    delete(&mut fresh, "pve", "vmbr0", now).expect("deleted");
    create(
        &mut fresh,
        "pve",
        "vmbr5",
        &p(&[("type", "bridge"), ("bridge_ports", "eno1")]),
        now,
    )
    .expect("eno1 is free in the pending file");
    apply(&mut fresh, "pve", now);
    assert_eq!(fresh.c.nodes.members()[0].bridges, ["vmbr5"]);
}

#[rstest]
fn update_replaces_the_address_and_delete_removes_options(mut fresh: World) {
    let now = fresh.now();
    update(
        &mut fresh,
        "pve",
        "vmbr0",
        &p(&[("cidr", "198.51.100.5/25")]),
        &[],
        now,
    )
    .expect("updated");
    let v = iface(&mut fresh, "pve", "vmbr0", now).expect("vmbr0");
    assert_eq!(v["cidr"], json!("198.51.100.5/25"));
    update(
        &mut fresh,
        "pve",
        "vmbr0",
        &p(&[]),
        &["gateway".to_string()],
        now,
    )
    .expect("updated");
    let v = iface(&mut fresh, "pve", "vmbr0", now).expect("vmbr0");
    assert!(v.get("gateway").is_none(), "{v}");
}

#[rstest]
fn a_bond_of_two_nics(mut fresh: World) {
    let now = fresh.now();
    create(
        &mut fresh,
        "pve",
        "bond0",
        &p(&[
            ("type", "bond"),
            ("slaves", "eno2"),
            ("bond_mode", "active-backup"),
        ]),
        now,
    )
    .expect("created");
    let v = iface(&mut fresh, "pve", "bond0", now).expect("bond0");
    assert_eq!(v["slaves"], json!("eno2"));
    assert_eq!(v["type"], json!("bond"));
}

#[rstest]
fn a_bridged_port_may_not_carry_an_address(mut fresh: World) {
    let now = fresh.now();
    create(
        &mut fresh,
        "pve",
        "bond0",
        &p(&[
            ("type", "bond"),
            ("slaves", "eno2"),
            ("cidr", "10.1.1.1/24"),
        ]),
        now,
    )
    .expect("created");
    assert_eq!(
        refused(create(
            &mut fresh,
            "pve",
            "vmbr3",
            &p(&[("type", "bridge"), ("bridge_ports", "bond0")]),
            now
        )),
        (
            500,
            "iface bond0 - ip address can't be set on interface if bridged in vmbr3".into()
        )
    );
}

#[rstest]
fn a_vlan_on_a_bridge(mut fresh: World) {
    let now = fresh.now();
    create(&mut fresh, "pve", "vmbr0.20", &p(&[("type", "vlan")]), now).expect("created");
    let v = iface(&mut fresh, "pve", "vmbr0.20", now).expect("vlan");
    assert_eq!(v["type"], json!("vlan"));
}

/// `__write_etc_network_interfaces` `check_mtu`: a bridge port's MTU
/// (1500 when unset) may not be lower than the bridge's.
#[rstest]
#[ignore = "the writer checks of network_create do not compare the MTUs of a bridge and its ports"]
fn a_bridge_mtu_above_its_port_is_refused(mut fresh: World) {
    let now = fresh.now();
    assert_eq!(
        refused(create(
            &mut fresh,
            "pve",
            "vmbr1",
            &p(&[
                ("type", "bridge"),
                ("bridge_ports", "eno2"),
                ("mtu", "9000")
            ]),
            now
        )),
        (
            500,
            "interface 'eno2' - mtu 1500 is lower than 'vmbr1' - mtu 9000".into()
        )
    );
}

#[rstest]
fn a_bridge_mtu_within_its_port_is_accepted(mut fresh: World) {
    let now = fresh.now();
    create(
        &mut fresh,
        "pve",
        "vmbr1",
        &p(&[
            ("type", "bridge"),
            ("bridge_ports", "eno2"),
            ("mtu", "1400"),
        ]),
        now,
    )
    .expect("created");
    assert_eq!(
        iface(&mut fresh, "pve", "vmbr1", now).expect("vmbr1")["mtu"],
        json!("1400")
    );
}

/// PUT sets `method=static` only when `address` is in the request itself.
#[rstest]
fn an_update_without_address_sets_method_manual(mut fresh: World) {
    let now = fresh.now();
    update(
        &mut fresh,
        "pve",
        "vmbr0",
        &p(&[("comments", "uplink")]),
        &[],
        now,
    )
    .expect("updated");
    let v = iface(&mut fresh, "pve", "vmbr0", now).expect("vmbr0");
    assert_eq!(v["method"], json!("manual"));
    assert_eq!(v["comments"], json!("uplink\n"));
    assert_eq!(
        v["address"],
        json!("192.0.2.10"),
        "the address itself stays"
    );
}

#[rstest]
fn priorities_follow_the_file_order(mut fresh: World) {
    let now = fresh.now();
    create(&mut fresh, "pve", "vmbr1", &p(&[("type", "bridge")]), now).expect("created");
    let prio = |w: &mut World, i: &str| iface(w, "pve", i, now).expect("iface")["priority"].clone();
    assert_eq!(prio(&mut fresh, "eno1"), json!(2));
    assert_eq!(prio(&mut fresh, "vmbr0"), json!(4));
    assert_eq!(prio(&mut fresh, "vmbr1"), json!(5));
}

#[rstest]
fn a_vlan_on_a_bridge_has_a_null_exists(mut fresh: World) {
    let now = fresh.now();
    create(&mut fresh, "pve", "vmbr0.20", &p(&[("type", "vlan")]), now).expect("created");
    create(&mut fresh, "pve", "eno2.30", &p(&[("type", "vlan")]), now).expect("created");
    let on_bridge = iface(&mut fresh, "pve", "vmbr0.20", now).expect("vlan");
    assert_eq!(on_bridge.get("exists"), Some(&json!(null)));
    let on_nic = iface(&mut fresh, "pve", "eno2.30", now).expect("vlan");
    assert_eq!(on_nic["exists"], json!(1));
}

#[rstest]
#[case(PveVersion::V9_1, Some(("enp1s0", "enp2s0")))]
#[case(PveVersion::V8_4, None)]
fn physical_nics_list_their_altnames_on_pve_9(
    #[case] version: PveVersion,
    #[case] alt: Option<(&str, &str)>,
) {
    let mut w = World::from_yaml_v("", version);
    let now = w.now();
    let (items, _) = list(&mut w, "pve", None, |_| true, now);
    let of = |name: &str| {
        items
            .iter()
            .find(|i| i["iface"] == json!(name))
            .map(|i| i.get("altnames").cloned())
            .expect("listed")
    };
    assert_eq!(of("eno1"), alt.map(|(a, _)| json!([a])));
    assert_eq!(of("eno2"), alt.map(|(_, b)| json!([b])));
    assert_eq!(of("vmbr0"), None, "only physical NICs have altnames");
    let one = iface(&mut w, "pve", "eno1", now).expect("eno1");
    assert_eq!(one.get("altnames").cloned(), alt.map(|(a, _)| json!([a])));
    let bridge = iface(&mut w, "pve", "vmbr0", now).expect("vmbr0");
    assert!(bridge.get("altnames").is_none());
}
