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
