//! SDN: zones, VNets and subnets with their checks, the pending and
//! running configuration, apply, the 9.x lock and rollback, the PVE
//! IPAM, and applied VNets as guest bridges.

use std::collections::BTreeMap;

use rstest::{fixture, rstest};
use serde_json::{Value, json};

use super::{LAB, World, refused, rq};
use crate::model::PveVersion;
use crate::model::qemu::QemuOp;
use crate::model::sdn::split_subnet_id;
use crate::model::sdn::status::VnetStatus;
use crate::model::sdn::{File, State, View};

/// Parameters from pairs (as the wire hands them over: text).
fn p(pairs: &[(&str, &str)]) -> BTreeMap<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), json!(v)))
        .collect()
}

/// The pending values of a section of the pending view.
fn pending(e: &crate::model::sdn::Entry) -> &crate::model::sdn::Pending {
    e.pending.as_ref().expect("pending values")
}

fn zone(w: &mut World, pairs: &[(&str, &str)]) -> crate::model::Result<()> {
    let v = w.c.version();
    w.c.sdn.create_zone(v, &p(pairs), &mut rq())
}

/// [`LAB`] with a simple zone `lab` (PVE IPAM, DHCP), its VNet `labnet`
/// and the subnet 10.10.0.0/24 with a gateway and a DHCP range; nothing
/// applied yet.
#[fixture]
fn lab() -> World {
    lab_v(PveVersion::V9_1)
}

fn lab_v(v: PveVersion) -> World {
    let mut w = World::from_yaml_v(LAB, v);
    zone(
        &mut w,
        &[
            ("zone", "lab"),
            ("type", "simple"),
            ("ipam", "pve"),
            ("dhcp", "dnsmasq"),
        ],
    )
    .expect("zone");
    w.c.sdn
        .create_vnet(&p(&[("vnet", "labnet"), ("zone", "lab")]))
        .expect("vnet");
    w.c.sdn
        .create_subnet(&p(&[
            ("vnet", "labnet"),
            ("subnet", "10.10.0.0/24"),
            ("type", "subnet"),
            ("gateway", "10.10.0.1"),
            (
                "dhcp-range",
                "start-address=10.10.0.100,end-address=10.10.0.101",
            ),
        ]))
        .expect("subnet");
    w
}

#[rstest]
#[case(&[("zone", "v1"), ("type", "vlan")], "missing value for required option 'bridge'")]
#[case(&[("zone", "q1"), ("type", "qinq"), ("bridge", "vmbr0")], "missing value for required option 'tag'")]
#[case(&[("zone", "s1"), ("type", "simple"), ("bridge", "vmbr0")], "unexpected property 'bridge'")]
#[case(&[("zone", "e1"), ("type", "evpn"), ("controller", "c1")], "missing value for required option 'vrf-vxlan'")]
#[case(
    &[("zone", "e1"), ("type", "evpn"), ("controller", "nope"), ("vrf-vxlan", "100")],
    "create sdn zone object failed: controller nope don't exist"
)]
#[case(
    &[("zone", "x1"), ("type", "vxlan")],
    "create sdn zone object failed: 400 Parameter verification failed.\nfabric: must have exactly one of peers / fabric defined\npeers: must have exactly one of peers / fabric defined"
)]
#[case(&[("zone", "lab"), ("type", "simple")], "create sdn zone object failed: sdn zone object ID 'lab' already defined")]
#[case(
    &[("zone", "s2"), ("type", "simple"), ("ipam", "nope")],
    "create sdn zone object failed: 400 Parameter verification failed.\nipam: nope not existing"
)]
#[case(
    &[("zone", "s2"), ("type", "simple"), ("dnszone", "example.com")],
    "create sdn zone object failed: 400 Parameter verification failed.\ndnszone: missing dns server"
)]
fn zone_refusals(mut lab: World, #[case] pairs: &[(&str, &str)], #[case] msg: &str) {
    assert_eq!(refused(zone(&mut lab, pairs)), (500, msg.to_string()));
}

#[test]
fn vxlan_needs_peers_on_8_4() {
    let mut w = lab_v(PveVersion::V8_4);
    let r = zone(&mut w, &[("zone", "x1"), ("type", "vxlan")]);
    assert_eq!(
        refused(r),
        (500, "missing value for required option 'peers'".into())
    );
    zone(
        &mut w,
        &[
            ("zone", "x1"),
            ("type", "vxlan"),
            ("peers", "10.0.0.1,10.0.0.2"),
        ],
    )
    .expect("vxlan with peers");
}

#[test]
fn evpn_zone_needs_an_evpn_controller_and_gets_a_mac() {
    let mut w = lab_v(PveVersion::V8_4);
    let v = w.c.version();
    w.c.sdn
        .create_plugin(
            v,
            File::Controllers,
            &p(&[
                ("controller", "ctl"),
                ("type", "evpn"),
                ("asn", "65000"),
                ("peers", "10.0.0.1"),
            ]),
            &[],
        )
        .expect("controller");
    zone(
        &mut w,
        &[
            ("zone", "ev"),
            ("type", "evpn"),
            ("controller", "ctl"),
            ("vrf-vxlan", "10000"),
        ],
    )
    .expect("evpn");
    let z =
        w.c.sdn
            .read(File::Zones, "ev", View::Current)
            .expect("read")
            .entry
            .values;
    assert!(
        z["mac"]
            .as_str()
            .is_some_and(|m| m.starts_with("BC:24:11:")),
        "{z:?}"
    );
    assert_eq!(z["vrf-vxlan"], json!(10000));
    let again = zone(
        &mut w,
        &[
            ("zone", "ev2"),
            ("type", "evpn"),
            ("controller", "ctl"),
            ("vrf-vxlan", "10000"),
        ],
    );
    assert_eq!(
        refused(again),
        (
            500,
            "create sdn zone object failed: vrf-vxlan 10000 is already declared in ev".into()
        )
    );
    let del =
        w.c.sdn
            .delete_plugin(File::Controllers, &p(&[("controller", "ctl")]));
    assert_eq!(
        refused(del),
        (
            500,
            "delete sdn controller object failed: controller ctl is used by ev".into()
        )
    );
}

#[rstest]
#[case(
    "simple",
    None,
    Some("5"),
    "tag: vlan tag is not allowed on simple zone"
)]
#[case("vlan", Some("vmbr0"), None, "tag: missing vlan tag")]
#[case("vlan", Some("vmbr0"), Some("5000"), "tag: vlan tag max value is 4096")]
#[case("vxlan", None, None, "tag: missing vxlan tag")]
fn vnet_tag_checks(
    mut lab: World,
    #[case] kind: &str,
    #[case] bridge: Option<&str>,
    #[case] tag: Option<&str>,
    #[case] msg: &str,
) {
    let mut z = vec![("zone", "z1"), ("type", kind)];
    if let Some(b) = bridge {
        z.push(("bridge", b));
    }
    if kind == "vxlan" {
        z.push(("peers", "10.0.0.1"));
    }
    zone(&mut lab, &z).expect("zone");
    let mut v = vec![("vnet", "n1"), ("zone", "z1")];
    if let Some(t) = tag {
        v.push(("tag", t));
    }
    let r = lab.c.sdn.create_vnet(&p(&v));
    assert_eq!(
        refused(r),
        (
            500,
            format!("create sdn vnet object failed: 400 Parameter verification failed.\n{msg}")
        )
    );
}

#[test]
fn vlan_tags_are_unique_per_zone_and_vxlan_tags_globally() {
    let mut w = lab();
    zone(
        &mut w,
        &[("zone", "v1"), ("type", "vlan"), ("bridge", "vmbr0")],
    )
    .expect("v1");
    zone(
        &mut w,
        &[("zone", "v2"), ("type", "vlan"), ("bridge", "vmbr0")],
    )
    .expect("v2");
    w.c.sdn
        .create_vnet(&p(&[("vnet", "a"), ("zone", "v1"), ("tag", "10")]))
        .expect("a");
    w.c.sdn
        .create_vnet(&p(&[("vnet", "b"), ("zone", "v2"), ("tag", "10")]))
        .expect("other zone");
    let dup =
        w.c.sdn
            .create_vnet(&p(&[("vnet", "c"), ("zone", "v1"), ("tag", "10")]));
    assert!(
        refused(dup)
            .1
            .ends_with("tag: tag 10 already exist in vnet a")
    );
    zone(
        &mut w,
        &[("zone", "x1"), ("type", "vxlan"), ("peers", "10.0.0.1")],
    )
    .expect("x1");
    zone(
        &mut w,
        &[("zone", "x2"), ("type", "vxlan"), ("peers", "10.0.0.1")],
    )
    .expect("x2");
    w.c.sdn
        .create_vnet(&p(&[("vnet", "d"), ("zone", "x1"), ("tag", "100")]))
        .expect("d");
    let dup =
        w.c.sdn
            .create_vnet(&p(&[("vnet", "e"), ("zone", "x2"), ("tag", "100")]));
    assert!(
        refused(dup)
            .1
            .ends_with("tag: vxlan tag 100 already exist in vnet d in zone x1 ")
    );
}

#[rstest]
#[case(&[("gateway", "10.20.0.1")], "gateway: 10.20.0.1 is not in subnet 10.10.1.0/24")]
#[case(
    &[("dhcp-range", "start-address=10.10.1.50,end-address=10.10.1.10")],
    "dhcp-range: start-address 10.10.1.50 must be smaller than end-address 10.10.1.10"
)]
#[case(
    &[("dhcp-range", "start-address=10.10.1.10,end-address=10.10.2.10")],
    "dhcp-range: end-address 10.10.2.10 is not in subnet 10.10.1.0/24"
)]
fn subnet_checks(mut lab: World, #[case] extra: &[(&str, &str)], #[case] msg: &str) {
    let mut pairs = vec![
        ("vnet", "labnet"),
        ("subnet", "10.10.1.0/24"),
        ("type", "subnet"),
    ];
    pairs.extend_from_slice(extra);
    let r = lab.c.sdn.create_subnet(&p(&pairs));
    assert_eq!(
        refused(r),
        (
            500,
            format!("create sdn subnet object failed: 400 Parameter verification failed.\n{msg}")
        )
    );
}

#[rstest]
fn subnet_ids_carry_the_zone_and_the_ipam_holds_the_gateway(lab: World) {
    let s = lab
        .c
        .sdn
        .read(File::Subnets, "lab-10.10.0.0-24", View::Current)
        .expect("subnet");
    assert_eq!(s.entry.values["vnet"], json!("labnet"));
    assert_eq!(
        split_subnet_id("lab-10.10.0.0-24"),
        Some(("lab", "10.10.0.0", "24"))
    );
    assert_eq!(
        s.entry.values["dhcp-range"],
        json!(["start-address=10.10.0.100,end-address=10.10.0.101"])
    );
    let ips = lab
        .c
        .sdn
        .ipam_entries("lab", "10.10.0.0/24")
        .expect("ipam subnet");
    assert!(ips.get("10.10.0.1").is_some_and(|e| e.gateway));
}

#[rstest]
fn pending_shows_new_changed_and_deleted(mut lab: World) {
    let l = lab.c.sdn.sections(File::Zones, View::Pending);
    assert!(l.digest.is_none());
    assert_eq!(l.items["lab"].state, Some(State::New));
    assert_eq!(pending(&l.items["lab"]).set["ipam"], json!("pve"));
    assert!(!l.items["lab"].values.contains_key("ipam"));
    assert!(
        lab.c
            .sdn
            .sections(File::Zones, View::Running)
            .items
            .is_empty()
    );
    assert!(lab.c.sdn.has_pending_changes());
    lab.c.sdn.commit(None, true).expect("apply");
    assert!(!lab.c.sdn.has_pending_changes());
    assert_eq!(lab.c.sdn.running_version(), Some(1));
    let z = lab.c.sdn.sections(File::Zones, View::Pending).items;
    assert!(z["lab"].state.is_none(), "{:?}", z["lab"]);
    assert!(z["lab"].pending.is_none(), "{:?}", z["lab"]);
    let v = lab.c.version();
    lab.c
        .sdn
        .update_zone(
            v,
            &p(&[("zone", "lab"), ("mtu", "1400"), ("delete", "dhcp")]),
            &mut rq(),
        )
        .expect("update");
    let z = lab.c.sdn.sections(File::Zones, View::Pending).items;
    assert_eq!(z["lab"].state, Some(State::Changed));
    assert_eq!(pending(&z["lab"]).set["mtu"], json!(1400));
    assert_eq!(pending(&z["lab"]).deleted, ["dhcp"]);
    assert!(!pending(&z["lab"]).set.contains_key("dhcp"));
    assert_eq!(z["lab"].values["dhcp"], json!("dnsmasq"));
    lab.c
        .sdn
        .delete_subnet(&p(&[("vnet", "labnet"), ("subnet", "lab-10.10.0.0-24")]))
        .expect("subnet delete");
    lab.c
        .sdn
        .delete_vnet(&p(&[("vnet", "labnet")]))
        .expect("vnet delete");
    let vn = lab.c.sdn.sections(File::Vnets, View::Pending).items;
    assert_eq!(vn["labnet"].state, Some(State::Deleted));
    lab.c.sdn.commit(None, true).expect("apply");
    assert_eq!(lab.c.sdn.running_version(), Some(2));
    assert!(
        lab.c
            .sdn
            .sections(File::Vnets, View::Running)
            .items
            .is_empty()
    );
}

#[rstest]
fn digest_guards_updates(mut lab: World) {
    let d = lab.c.sdn.digest(File::Zones);
    assert_eq!(d.len(), 40);
    let v = lab.c.version();
    let stale = "0".repeat(40);
    let r = lab.c.sdn.update_zone(
        v,
        &p(&[("zone", "lab"), ("mtu", "1400"), ("digest", &stale)]),
        &mut rq(),
    );
    assert_eq!(
        refused(r),
        (500, "update sdn zone object failed: detected modified configuration - file changed by other user? Try again.".into())
    );
    lab.c
        .sdn
        .update_zone(
            v,
            &p(&[("zone", "lab"), ("mtu", "1400"), ("digest", &d)]),
            &mut rq(),
        )
        .expect("same digest");
    assert_ne!(lab.c.sdn.digest(File::Zones), d);
}

#[rstest]
fn zones_with_vnets_and_vnets_with_subnets_stay(mut lab: World) {
    let r = lab.c.sdn.delete_zone(&p(&[("zone", "lab")]));
    assert_eq!(
        refused(r),
        (
            500,
            "delete sdn zone object failed: zone lab is used by vnet labnet".into()
        )
    );
    let r = lab.c.sdn.delete_vnet(&p(&[("vnet", "labnet")]));
    assert_eq!(
        refused(r),
        (500, "delete sdn vnet object failed: 400 Parameter verification failed.\nvnet: Can't delete vnet if subnets exists".into())
    );
}

#[rstest]
fn lock_and_rollback(mut lab: World) {
    let mut ctx = rq();
    let r = lab.c.sdn.lock(false, &mut ctx);
    assert_eq!(
        refused(r),
        (
            500,
            "could not acquire lock for SDN config: configuration has pending changes".into()
        )
    );
    let token = lab.c.sdn.lock(true, &mut ctx).expect("lock");
    assert_eq!(token.len(), 36);
    assert_eq!(&token[14..15], "7");
    let r = lab
        .c
        .sdn
        .create_vnet(&p(&[("vnet", "other"), ("zone", "lab")]));
    assert_eq!(
        refused(r),
        (
            500,
            "create sdn vnet object failed: invalid lock token provided!".into()
        )
    );
    lab.c
        .sdn
        .create_vnet(&p(&[
            ("vnet", "other"),
            ("zone", "lab"),
            ("lock-token", &token),
        ]))
        .expect("with the token");
    lab.c.sdn.rollback(Some(&token), true).expect("rollback");
    assert!(!lab.c.sdn.locked());
    assert!(
        lab.c
            .sdn
            .sections(File::Vnets, View::Current)
            .items
            .is_empty()
    );
    assert!(
        lab.c
            .sdn
            .sections(File::Zones, View::Current)
            .items
            .is_empty()
    );
}

#[rstest]
fn applied_vnets_are_bridges_and_guests_get_addresses(mut lab: World) {
    let set_net = |w: &mut World, net: &str| {
        let vm = w.c.guests.get_mut(&100).expect("vm 100");
        vm.config.insert("net0".into(), net.into());
    };
    set_net(&mut lab, "virtio=BC:24:11:00:01:00,bridge=labnet");
    let start = |w: &mut World| w.qm("qmstart", 100, QemuOp::Start { skiplock: false });
    assert_eq!(start(&mut lab), "bridge 'labnet' does not exist");
    assert!(
        !crate::model::sdn::node_bridges(&lab.c.nodes, &lab.c.sdn, "pve")
            .contains(&"labnet".to_string())
    );
    lab.c.sdn.commit(None, true).expect("apply");
    assert!(
        crate::model::sdn::node_bridges(&lab.c.nodes, &lab.c.sdn, "pve")
            .contains(&"labnet".to_string())
    );
    assert_eq!(start(&mut lab), "OK");
    let ips = lab.c.sdn.ipam_entries("lab", "10.10.0.0/24").expect("ipam");
    let guest = ips.get("10.10.0.100").expect("first address of the range");
    assert_eq!(guest.mac.as_deref(), Some("BC:24:11:00:01:00"));
    assert_eq!(guest.vmid.as_deref(), Some("100"));
    let status = lab.c.sdn.ipam_status("pve", |_, _| true).expect("status");
    assert_eq!(status.len(), 2);
    assert!(status.iter().any(|e| e.ip == "10.10.0.100"
        && e.entry.vmid.as_deref() == Some("100")
        && e.vnet == "labnet"));
    let r = lab
        .c
        .sdn
        .ipam_status("netbox", |_, _| true)
        .map(|s| s.len());
    assert_eq!(
        refused(r),
        (500, "Currently only PVE IPAM is supported!".into())
    );
    // The subnet holds a guest's address: it cannot go.
    let del = |w: &mut World| {
        w.c.sdn
            .delete_subnet(&p(&[("vnet", "labnet"), ("subnet", "lab-10.10.0.0-24")]))
    };
    assert_eq!(
        refused(del(&mut lab)),
        (
            500,
            "delete sdn subnet object failed: cannot delete subnet '10.10.0.0/24', not empty"
                .into()
        )
    );
    // Destroying the guest frees its address; only the gateway is left.
    assert_eq!(
        lab.qm("qmstop", 100, QemuOp::Stop { skiplock: false }),
        "OK"
    );
    let destroy = QemuOp::Destroy {
        skiplock: false,
        purge: true,
        unreferenced: false,
    };
    assert_eq!(lab.qm("qmdestroy", 100, destroy), "OK");
    let left = lab
        .c
        .sdn
        .ipam_entries("lab", "10.10.0.0/24")
        .map(|e| e.len());
    assert_eq!(left, Some(1));
    del(&mut lab).expect("an empty subnet goes");
}

#[rstest]
fn a_full_dhcp_range_refuses_the_start(mut lab: World) {
    lab.c.sdn.commit(None, true).expect("apply");
    lab.c
        .sdn
        .ipcreate("labnet", "10.10.0.100", None)
        .expect("ip");
    lab.c
        .sdn
        .ipcreate("labnet", "10.10.0.101", None)
        .expect("ip");
    let r = lab.c.sdn.ipcreate("labnet", "10.10.0.101", None);
    assert_eq!(refused(r), (500, "IP '10.10.0.101' already exist".into()));
    let r = lab.c.sdn.ipcreate("labnet", "10.99.0.1", None);
    assert_eq!(
        refused(r),
        (500, "can't find any subnet for ip 10.99.0.1".into())
    );
    let vm = lab.c.guests.get_mut(&100).expect("vm");
    vm.config.insert(
        "net0".into(),
        "virtio=BC:24:11:00:01:00,bridge=labnet".into(),
    );
    let exit = lab.qm("qmstart", 100, QemuOp::Start { skiplock: false });
    assert_eq!(exit, "can't find any free ip in zone lab for IPv4");
    lab.c
        .sdn
        .ipdelete("labnet", "10.10.0.101")
        .expect("free one");
    let r = lab.c.sdn.ipdelete("labnet", "10.10.0.101");
    assert_eq!(
        refused(r),
        (500, "IP '10.10.0.101' does not exist in IPAM DB".into())
    );
}

#[rstest]
#[case(PveVersion::V8_4)]
#[case(PveVersion::V9_1)]
fn resources_show_applied_zones(#[case] v: PveVersion) {
    let mut w = lab_v(v);
    let kind = if v.is_v9() { "network" } else { "sdn" };
    let rows = |w: &World| -> Vec<Value> {
        crate::api::cluster::view::resources(&w.c.resources(), None, w.now())
            .into_iter()
            .filter(|r| r["type"] == kind)
            .collect()
    };
    assert_eq!(rows(&w).len(), 1, "only localnetwork before apply");
    w.c.sdn.commit(None, true).expect("apply");
    let r = rows(&w);
    assert_eq!(r.len(), 2);
    let lab_row = r.iter().find(|x| x[kind] == "lab").expect("zone row");
    if v.is_v9() {
        assert_eq!(lab_row["id"], json!("network/pve/zone/lab"));
        assert_eq!(lab_row["zone-type"], json!("simple"));
    } else {
        assert_eq!(lab_row["id"], json!("sdn/pve/lab"));
    }
    assert_eq!(lab_row["status"], json!("available"));
}

#[rstest]
fn the_running_config_survives_a_saved_world(mut lab: World) {
    lab.c.sdn.commit(None, true).expect("apply");
    let doc = serde_json::to_value(&lab.c).expect("save");
    let back: crate::model::Cluster = serde_json::from_value(doc).expect("load");
    assert_eq!(back.sdn(), lab.c.sdn());
    assert!(
        crate::model::sdn::node_bridges(&back.nodes, &back.sdn, "pve")
            .contains(&"labnet".to_string())
    );
}

// ---- a node's view of the applied configuration ------------------------------

#[rstest]
fn a_node_sees_no_status_before_the_first_apply(mut lab: World) {
    assert!(lab.c.sdn.node_zones("pve").is_empty());
    assert!(lab.c.sdn.zone_content("pve", "lab").is_empty());
    assert_eq!(
        refused(lab.c.sdn.running_vnet_zone("labnet")),
        (500, "invalid vnet specified".into())
    );
    lab.c.sdn.commit(None, true).expect("apply");
    assert_eq!(
        lab.c.sdn.node_zones("pve"),
        [("lab".to_string(), "available")]
    );
    let available = VnetStatus {
        zone: "lab".into(),
        status: "available",
        statusmsg: None,
    };
    assert_eq!(
        lab.c.sdn.zone_content("pve", "lab"),
        [("labnet".to_string(), available)]
    );
    assert!(lab.c.sdn.zone_content("pve", "nosuch").is_empty());
    assert_eq!(lab.c.sdn.running_vnet_zone("labnet").expect("zone"), "lab");
}

#[rstest]
fn a_zone_restricted_to_other_nodes_is_not_on_this_one(mut lab: World) {
    zone(
        &mut lab,
        &[("zone", "far"), ("type", "simple"), ("nodes", "elsewhere")],
    )
    .expect("zone");
    lab.c
        .sdn
        .create_vnet(&p(&[("vnet", "farnet"), ("zone", "far")]))
        .expect("vnet");
    lab.c.sdn.commit(None, true).expect("apply");
    let zones = lab.c.sdn.node_zones("pve");
    assert_eq!(zones.len(), 1, "{zones:?}");
    assert!(lab.c.sdn.zone_content("pve", "far").is_empty());
    assert_eq!(lab.c.sdn.node_zones("elsewhere").len(), 2);
    // Pending changes are not what the node runs.
    lab.c
        .sdn
        .create_vnet(&p(&[("vnet", "newnet"), ("zone", "lab")]))
        .expect("vnet");
    assert_eq!(lab.c.sdn.zone_content("pve", "lab").len(), 1);
}

/// A guest's VMID in the IPAM status: an integer since PVE 9, the IPAM
/// database's string in 8.x (pve-network made it an integer for 9.0).
#[rstest]
#[case::pve8(PveVersion::V8_4, json!("100"))]
#[case::pve9(PveVersion::V9_1, json!(100))]
fn the_ipam_status_sends_the_vmid_as_each_release_does(
    #[case] version: PveVersion,
    #[case] vmid: Value,
) {
    let mut lab = lab_v(version);
    let vm = lab.c.guests.get_mut(&100).expect("vm 100");
    vm.config.insert(
        "net0".into(),
        "virtio=BC:24:11:00:01:00,bridge=labnet".into(),
    );
    lab.c.sdn.commit(None, true).expect("apply");
    assert_eq!(
        lab.qm("qmstart", 100, QemuOp::Start { skiplock: false }),
        "OK"
    );
    let status = lab.c.sdn.ipam_status("pve", |_, _| true).expect("status");
    let guest = status
        .iter()
        .find(|e| e.ip == "10.10.0.100")
        .expect("the guest's entry");
    assert_eq!(guest.entry.vmid.as_deref(), Some("100"));
    let answer = crate::api::sdn::view::ipam_address(guest, version.is_v9());
    assert_eq!(answer["vmid"], vmid);
}

/// The checks `ip-vrf` and `mac-vrf` make before they read FRR: the
/// running configuration must hold an EVPN zone on the node.
#[rstest]
fn evpn_views_need_a_running_evpn_zone_on_the_node(mut lab: World) {
    let v = lab.c.version();
    lab.c
        .sdn
        .create_plugin(
            v,
            File::Controllers,
            &p(&[
                ("controller", "ctl"),
                ("type", "evpn"),
                ("asn", "65000"),
                ("peers", "10.0.0.1"),
            ]),
            &[],
        )
        .expect("controller");
    zone(
        &mut lab,
        &[
            ("zone", "ev"),
            ("type", "evpn"),
            ("controller", "ctl"),
            ("vrf-vxlan", "10000"),
            ("nodes", "pve"),
        ],
    )
    .expect("zone");
    lab.c
        .sdn
        .create_vnet(&p(&[("vnet", "evnet"), ("zone", "ev"), ("tag", "20000")]))
        .expect("vnet");
    let msg = |r: crate::model::Result<()>, param: &str| {
        r.expect_err("refused")
            .errors()
            .and_then(|e| e.get(param).cloned())
            .unwrap_or_default()
    };
    assert_eq!(
        msg(lab.c.sdn.check_ip_vrf("pve", "ev"), "zone"),
        "zone does not exist"
    );
    assert_eq!(
        msg(lab.c.sdn.check_mac_vrf("pve", "evnet"), "vnet"),
        "vnet does not exist"
    );
    lab.c.sdn.commit(None, true).expect("apply");
    assert!(lab.c.sdn.check_ip_vrf("pve", "ev").is_ok());
    assert!(lab.c.sdn.check_mac_vrf("pve", "evnet").is_ok());
    assert_eq!(
        msg(lab.c.sdn.check_ip_vrf("pve", "lab"), "zone"),
        "zone is not an EVPN zone"
    );
    assert_eq!(
        msg(lab.c.sdn.check_mac_vrf("pve", "labnet"), "zone"),
        "zone lab is not an EVPN zone."
    );
    assert_eq!(
        msg(lab.c.sdn.check_ip_vrf("pve2", "ev"), "zone"),
        "zone does not exist on node pve2"
    );
    assert_eq!(
        msg(lab.c.sdn.check_mac_vrf("pve2", "evnet"), "zone"),
        "zone ev of vnet evnet does not exist on node pve2"
    );
}
