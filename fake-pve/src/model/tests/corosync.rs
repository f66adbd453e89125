//! The corosync node list: taking members out of it (`delnode`).

use rstest::rstest;

use super::{World, cluster, fresh, refused};
use crate::model::corosync;

/// The names in `GET /cluster/config/nodes`.
fn listed(w: &World) -> Vec<String> {
    corosync::members(&w.c.nodes, &w.c.corosync)
        .iter()
        .map(|m| m.node.name.clone())
        .collect()
}

fn delnode(w: &mut World, node: &str) -> crate::model::Result<String> {
    corosync::delnode(&mut w.c.nodes, &mut w.c.corosync, node)
}

#[rstest]
fn a_member_leaves_the_node_list(mut cluster: World) {
    assert_eq!(delnode(&mut cluster, "pve3").expect("removed"), "pve3");
    assert_eq!(listed(&cluster), ["pve1", "pve2"]);
    assert!(!cluster.c.nodes.contains("pve3"));
    let totem = corosync::totem(&cluster.c.nodes, &cluster.c.corosync, &cluster.c.version)
        .expect("still a cluster");
    assert_eq!(totem.config_version, "2");
}

#[rstest]
fn a_member_is_named_by_its_link_address(mut cluster: World) {
    let ip = cluster.c.nodes.get("pve2").expect("member").ip.clone();
    assert_eq!(delnode(&mut cluster, &ip).expect("removed"), "pve2");
    assert_eq!(listed(&cluster), ["pve1", "pve3"]);
}

#[rstest]
#[case::myself("pve1", "Cannot delete myself from cluster!")]
#[case::unknown("pve9", "Node/IP: pve9 is not a known host of the cluster.")]
fn refusals(mut cluster: World, #[case] node: &str, #[case] msg: &str) {
    assert_eq!(refused(delnode(&mut cluster, node)), (500, msg.to_string()));
    assert_eq!(listed(&cluster), ["pve1", "pve2", "pve3"]);
}

#[rstest]
fn a_standalone_node_knows_no_other_host(mut fresh: World) {
    assert_eq!(
        refused(delnode(&mut fresh, "pve2")),
        (
            500,
            "Node/IP: pve2 is not a known host of the cluster.".to_string()
        )
    );
    assert_eq!(
        refused(delnode(&mut fresh, "pve")),
        (500, "Cannot delete myself from cluster!".to_string())
    );
}

#[rstest]
fn nothing_leaves_without_quorum(mut cluster: World) {
    cluster.c.nodes.get_mut("pve2").expect("member").status =
        crate::model::nodes::NodeStatus::Offline;
    assert_eq!(
        refused(delnode(&mut cluster, "pve3")),
        (500, "cluster not ready - no quorum?".to_string())
    );
    assert_eq!(listed(&cluster).len(), 3);
}

#[rstest]
fn the_removed_nodes_guests_stay() {
    let mut w = World::from_yaml(
        r#"
cluster: lab
nodes:
  - name: pve1
  - name: pve2
storages:
  - { id: local, type: dir, path: /var/lib/vz }
vms:
  - vmid: 100
    node: pve2
    config:
      net0: virtio=BC:24:11:00:01:00,bridge=vmbr0
"#,
    );
    delnode(&mut w, "pve2").expect("removed");
    assert_eq!(w.c.guests[&100].node, "pve2");
    let nodes: Vec<String> =
        w.c.resources()
            .nodes(&w.c.resources().guest_loads(), None)
            .iter()
            .map(|n| n.node.name.clone())
            .collect();
    assert_eq!(nodes, ["pve1"]);
}

fn link(address: &str) -> corosync::Link {
    corosync::Link {
        address: address.to_string(),
        priority: None,
    }
}

fn addnode(w: &mut World, p: &corosync::AddNode) -> crate::model::Result<Vec<String>> {
    let now = w.now();
    corosync::addnode(&mut w.c.nodes, &mut w.c.corosync, p, now)
}

fn add(node: &str, links: &[(u32, &str)]) -> corosync::AddNode {
    corosync::AddNode {
        node: node.to_string(),
        links: links.iter().map(|(n, a)| (*n, link(a))).collect(),
        apiversion: Some(1),
        ..Default::default()
    }
}

#[rstest]
fn a_node_enters_with_the_next_free_id(mut cluster: World) {
    cluster.c.nodes.get_mut("pve3").expect("member").status =
        crate::model::nodes::NodeStatus::Online;
    delnode(&mut cluster, "pve2").expect("removed");
    let warnings = addnode(&mut cluster, &add("pve4", &[(0, "192.0.2.40")])).expect("added");
    assert!(warnings.is_empty());
    let m = corosync::members(&cluster.c.nodes, &cluster.c.corosync);
    let pve4 = m.iter().find(|m| m.node.name == "pve4").expect("listed");
    assert_eq!(pve4.node.nodeid, 2);
    assert_eq!(pve4.votes, 1);
    assert_eq!(pve4.links[&0].address, "192.0.2.40");
    assert_eq!(pve4.node.status, crate::model::nodes::NodeStatus::Offline);
    let text = corosync::corosync_text(&cluster.c.nodes, &cluster.c.corosync, &cluster.c.version);
    assert!(
        text.contains(
            "name: pve4\n    nodeid: 2\n    quorum_votes: 1\n    ring0_addr: 192.0.2.40\n"
        )
    );
}

#[rstest]
fn new_node_ip_is_link_0_of_a_one_link_cluster(mut cluster: World) {
    let mut p = add("pve4", &[]);
    p.new_node_ip = Some("192.0.2.40".into());
    p.votes = Some(2);
    addnode(&mut cluster, &p).expect("added");
    let m = corosync::members(&cluster.c.nodes, &cluster.c.corosync);
    let pve4 = m.iter().find(|m| m.node.name == "pve4").expect("listed");
    assert_eq!(pve4.node.nodeid, 4);
    assert_eq!(pve4.votes, 2);
    assert_eq!(pve4.links[&0].address, "192.0.2.40");
}

#[rstest]
#[case::old_api(
    corosync::AddNode { apiversion: Some(-1), ..add("pve4", &[(0, "192.0.2.40")]) },
    "error: unsupported old API version on joining node (-1), cluster node has 1 and supports >= 0. Please upgrade node before joining"
)]
#[case::address_used(
    add("pve4", &[(0, "192.0.2.11")]),
    "corosync: address '192.0.2.11' already used on link ring0_addr by node 'pve2'"
)]
#[case::link_missing(
    add("pve4", &[(1, "192.0.2.40"), (2, "192.0.2.41")]),
    "corosync: link 0 exists in cluster config but wasn't specified for new node"
)]
#[case::link_unknown(
    add("pve4", &[(0, "192.0.2.40"), (1, "192.0.2.41")]),
    "corosync: link 1 specified for new node doesn't exist in cluster config"
)]
#[case::no_links(
    add("pve4", &[]),
    "no links and no fallback ip (new_node_ip) given, cannot join cluster"
)]
#[case::existing(
    add("pve2", &[(0, "192.0.2.11")]),
    "can't add existing node 'pve2'"
)]
fn refusals_of_addnode(mut cluster: World, #[case] p: corosync::AddNode, #[case] msg: &str) {
    assert_eq!(refused(addnode(&mut cluster, &p)), (500, msg.to_string()));
    assert_eq!(listed(&cluster), ["pve1", "pve2", "pve3"]);
}

#[rstest]
fn force_overwrites_a_node_with_its_votes_and_id(mut cluster: World) {
    let mut p = add("pve2", &[(0, "192.0.2.42")]);
    p.force = true;
    addnode(&mut cluster, &p).expect("overwritten");
    let m = corosync::members(&cluster.c.nodes, &cluster.c.corosync);
    let pve2 = m.iter().find(|m| m.node.name == "pve2").expect("listed");
    assert_eq!(pve2.links[&0].address, "192.0.2.42");
    assert_eq!(m.len(), 3);
    p.nodeid = Some(7);
    assert_eq!(
        refused(addnode(&mut cluster, &p)),
        (500, "can't add existing node 'pve2'".to_string())
    );
}

#[rstest]
fn a_standalone_node_has_no_node_list_to_add_to(mut fresh: World) {
    assert_eq!(
        refused(addnode(&mut fresh, &add("pve4", &[(0, "192.0.2.40")]))),
        (500, "invalid corosync.conf".to_string())
    );
}
