//! Nodes and the cluster views: name resolution, offline members, the
//! node list and status, `/cluster/status`, `/cluster/resources` and
//! `/cluster/nextid`.

use rstest::rstest;
use serde_json::json;

use super::{T0, World, cluster, fresh, lab, refused};
use crate::model::PveVersion;
use crate::model::qemu::QemuOp;

#[rstest]
#[case("pve1", Ok("pve1"))]
#[case("localhost", Ok("pve1"))]
#[case("pve2", Ok("pve2"))]
#[case("pve3", Err((595, "No route to host")))]
#[case("pve9", Err((500, "hostname lookup 'pve9' failed - failed to get address info for: pve9: Name or service not known")))]
fn node_names_resolve_as_the_proxy_does(
    cluster: World,
    #[case] name: &str,
    #[case] want: Result<&str, (u16, &str)>,
) {
    let got = cluster.c.nodes.reach(name).map(|n| n.name.clone());
    match want {
        Ok(n) => assert_eq!(got.expect("found"), n),
        Err((code, msg)) => assert_eq!(refused(got), (code, msg.to_string())),
    }
}

/// The rows of `GET /nodes`, all figures shown.
fn nodes_view(c: &crate::model::Cluster) -> Vec<serde_json::Value> {
    let res = c.resources();
    let loads = res.guest_loads();
    res.nodes(&loads, None)
        .iter()
        .map(|n| crate::api::cluster::view::node(n, T0, false))
        .collect()
}

#[rstest]
fn the_node_list_shows_offline_members_without_load(cluster: World) {
    let items = nodes_view(&cluster.c);
    assert_eq!(items.len(), 3);
    assert_eq!(items[0]["status"], json!("online"));
    assert!(items[0]["uptime"].as_i64().is_some_and(|u| u > 3 * 86_400));
    assert!(
        items[0]["ssl_fingerprint"]
            .as_str()
            .is_some_and(|f| f.len() == 95)
    );
    assert_eq!(items[2]["status"], json!("offline"));
    assert!(items[2].get("uptime").is_none());
    assert!(items[2].get("mem").is_none());
}

#[rstest]
fn running_guests_add_to_node_memory(mut lab: World) {
    let mem = |w: &World| nodes_view(&w.c)[0]["mem"].as_u64().expect("mem");
    let before = mem(&lab);
    lab.qm("qmstart", 100, QemuOp::Start { skiplock: false });
    assert_eq!(mem(&lab) - before, 2048 << 20);
    assert_eq!(
        crate::model::resources::guest_load(&lab.c.nodes, &lab.c.guests, "pve"),
        ((4096 + 2048) << 20, 2)
    );
}

#[rstest]
fn node_status_reports_the_release(lab: World) {
    let n = &lab.c.nodes.members()[0];
    let v9 = crate::api::nodes::view::node_status(n, T0, 0, 0, PveVersion::V9_1);
    assert_eq!(
        v9["pveversion"],
        json!("pve-manager/9.1.5/80cf92a64bef6889")
    );
    assert_eq!(v9["cpuinfo"]["cpus"], json!(16));
    assert_eq!(v9["memory"]["total"], json!(64u64 << 30));
    assert!(v9["memory"].get("available").is_some());
    let v8 = crate::api::nodes::view::node_status(n, T0, 0, 0, PveVersion::V8_4);
    assert_eq!(
        v8["pveversion"],
        json!("pve-manager/8.4.14/b502d23c55afcba1")
    );
    assert!(v8["memory"].get("available").is_none());
    // `cpuinfo.vendor` and `.family` are PVE 9.2's.
    for v in [&v8, &v9] {
        assert!(v["cpuinfo"].get("vendor").is_none(), "{v}");
        assert!(v["cpuinfo"].get("family").is_none(), "{v}");
    }
    assert!(
        v8["kversion"]
            .as_str()
            .is_some_and(|k| k.contains("6.8.12"))
    );
}

#[rstest]
fn cluster_status_of_a_cluster(cluster: World) {
    let st = crate::api::nodes::view::cluster_status(&cluster.c.nodes);
    assert_eq!(
        st[0],
        json!({"type": "cluster", "id": "cluster", "name": "lab", "nodes": 3, "quorate": 1, "version": 3})
    );
    let nodes: Vec<_> = st[1..]
        .iter()
        .map(|n| {
            (
                n["name"].clone(),
                n["local"].clone(),
                n["online"].clone(),
                n["nodeid"].clone(),
            )
        })
        .collect();
    assert_eq!(
        nodes,
        [
            (json!("pve1"), json!(1), json!(1), json!(1)),
            (json!("pve2"), json!(0), json!(1), json!(2)),
            (json!("pve3"), json!(0), json!(0), json!(3)),
        ]
    );
}

#[rstest]
fn a_cluster_without_a_majority_is_not_quorate() {
    let w =
        World::from_yaml("cluster: duo\nnodes:\n  - name: a\n  - name: b\n    status: offline\n");
    assert_eq!(
        crate::api::nodes::view::cluster_status(&w.c.nodes)[0]["quorate"],
        json!(0)
    );
}

#[rstest]
fn a_standalone_node_lists_only_itself(fresh: World) {
    let st = crate::api::nodes::view::cluster_status(&fresh.c.nodes);
    assert_eq!(st.len(), 1);
    assert_eq!(st[0]["type"], json!("node"));
    assert_eq!(st[0]["nodeid"], json!(0));
    assert_eq!(st[0]["local"], json!(1));
}

#[rstest]
#[case(Some("vm"), 3)]
#[case(Some("node"), 1)]
#[case(Some("storage"), 3)]
#[case(Some("sdn"), 0)]
#[case(None, 8)]
fn resources_by_type(lab: World, #[case] kind: Option<&str>, #[case] n: usize) {
    assert_eq!(
        crate::api::cluster::view::resources(&lab.c.resources(), kind, T0).len(),
        n
    );
}

#[rstest]
fn resources_on_8_4_list_the_sdn_zone() {
    let w = World::from_yaml_v(super::LAB, PveVersion::V8_4);
    let sdn = crate::api::cluster::view::resources(&w.c.resources(), Some("sdn"), T0);
    assert_eq!(sdn.len(), 1);
    assert_eq!(sdn[0]["id"], json!("sdn/pve/localnetwork"));
    assert!(
        crate::api::cluster::view::resources(&w.c.resources(), None, T0)
            .iter()
            .all(|r| r["type"] != "network")
    );
}

#[rstest]
fn vm_resources(mut lab: World) {
    lab.c
        .guests
        .get_mut(&100)
        .expect("vm")
        .config
        .insert("lock".into(), "backup".into());
    let vms = crate::api::cluster::view::resources(&lab.c.resources(), Some("vm"), T0);
    let v100 = &vms[0];
    assert_eq!(v100["id"], json!("qemu/100"));
    assert_eq!(v100["lock"], json!("backup"));
    assert_eq!(v100["status"], json!("stopped"));
    assert_eq!(v100["maxdisk"], json!(8u64 << 30));
    assert_eq!(v100["memhost"], v100["mem"], "9.x adds memhost");
    assert_eq!(vms[1]["status"], json!("running"));
    assert_eq!(vms[2]["template"], json!(1));
}

#[rstest]
fn storage_resources_per_node(cluster: World) {
    let st = crate::api::cluster::view::resources(&cluster.c.resources(), Some("storage"), T0);
    let ids: Vec<&str> = st.iter().filter_map(|s| s["id"].as_str()).collect();
    assert_eq!(ids.len(), 9, "{ids:?}");
    let pve3 = st
        .iter()
        .find(|s| s["id"] == "storage/pve3/nfs")
        .expect("nfs on pve3");
    assert_eq!(
        pve3["status"],
        json!("unknown"),
        "an offline node's storages are unknown"
    );
    assert_eq!(pve3["shared"], json!(1));
}

#[rstest]
#[case(None, Ok("102"))]
#[case(Some(555), Ok("555"))]
#[case(Some(101), Err("vmid: VM 101 already exists"))]
fn nextid(lab: World, #[case] vmid: Option<u32>, #[case] want: Result<&str, &str>) {
    match want {
        Ok(id) => assert_eq!(
            lab.c
                .guests
                .nextid(vmid, crate::model::datacenter::NEXT_ID_DEFAULT)
                .expect("id"),
            id
        ),
        Err(msg) => assert_eq!(
            refused(
                lab.c
                    .guests
                    .nextid(vmid, crate::model::datacenter::NEXT_ID_DEFAULT)
            ),
            (400, msg.to_string())
        ),
    }
}

#[rstest]
fn nextid_starts_at_100(fresh: World) {
    assert_eq!(
        fresh
            .c
            .guests
            .nextid(None, crate::model::datacenter::NEXT_ID_DEFAULT)
            .expect("id"),
        "100"
    );
}
