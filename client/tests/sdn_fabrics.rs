//! The SDN fabric calls (`api::sdn::fabrics`, 9.x) against an in-process
//! fake-pve: an OpenFabric fabric and a node made, refused where
//! proxmox-ve-config refuses, applied, changed, deleted; every answer
//! checked against the schema.

mod common;

use common::{MODES, checked_client, start};
use pve_client::api::sdn::SdnView;

#[tokio::test]
async fn fabric_and_node_lifecycle() {
    for mode in MODES {
        let run = start().await;
        let (pve, checked) = checked_client(&run, mode);
        let sdn = pve.sdn();
        let fabrics = sdn.fabrics();

        assert_eq!(
            fabrics.index().await.expect("index"),
            vec!["fabric", "node", "all"]
        );
        fabrics
            .add_fabric(
                "of1",
                "openfabric",
                &[("ip_prefix", "10.100.0.5/24"), ("hello_interval", "3")],
            )
            .await
            .expect("fabric");
        let f = fabrics.get_fabric("of1").await.expect("get");
        assert_eq!(f.ip_prefix.as_deref(), Some("10.100.0.0/24"));
        assert_eq!(f.options.get("hello_interval"), Some(&3.into()));

        let e = fabrics
            .add_fabric("of2", "openfabric", &[])
            .await
            .expect_err("no prefix");
        assert!(
            e.to_string().contains(
                "adding fabric failed: fabric 'of2' does not have an IP prefix configured"
            ),
            "{e}"
        );
        let e = fabrics
            .add_fabric(
                "os1",
                "ospf",
                &[("ip_prefix", "10.100.0.0/25"), ("area", "0")],
            )
            .await
            .expect_err("overlap");
        assert!(e.to_string().contains("overlaps with IPv4 prefix"), "{e}");

        // One interface, sent as a form value: a list of one.
        fabrics
            .add_node(
                "of1",
                "pve",
                "openfabric",
                &[("ip", "10.100.0.1"), ("interfaces", "name=ens19")],
                &[],
            )
            .await
            .expect("node");
        let e = fabrics
            .add_node("of1", "pve2", "openfabric", &[("ip", "10.99.0.1")], &[])
            .await
            .expect_err("outside");
        assert!(
            e.to_string()
                .contains("node IP 10.99.0.1 is outside the IP prefix 10.100.0.0/24"),
            "{e}"
        );
        let n = fabrics.get_node("of1", "pve").await.expect("node");
        assert_eq!(n.interfaces, vec!["name=ens19"]);
        assert_eq!(n.ip.as_deref(), Some("10.100.0.1"));

        let upid = sdn.reload().await.expect("apply");
        pve.tasks().wait(&upid).await.expect("task");
        let running = fabrics
            .list_nodes_fabric("of1", SdnView::Running)
            .await
            .expect("running nodes");
        assert_eq!(running.len(), 1);
        assert!(running[0].digest.is_none());

        fabrics
            .update_node(
                "of1",
                "pve",
                "openfabric",
                &[],
                Some(&["name=ens19", "name=ens20,hello_multiplier=4"]),
                &[],
            )
            .await
            .expect("update node");
        let all = fabrics.list_all(SdnView::Pending).await.expect("pending");
        assert_eq!(all.nodes[0].state.as_deref(), Some("changed"));
        fabrics
            .update_fabric("of1", "openfabric", &[], &["hello_interval"], None)
            .await
            .expect("update fabric");
        let list = fabrics.fabric_index(SdnView::Current).await.expect("list");
        assert!(list[0].options.get("hello_interval").is_none());

        fabrics
            .delete_node("of1", "pve")
            .await
            .expect("delete node");
        assert!(
            fabrics
                .list_nodes(SdnView::Current)
                .await
                .expect("nodes")
                .is_empty()
        );
        fabrics.delete_fabric("of1").await.expect("delete fabric");
        let e = fabrics.get_fabric("of1").await.expect_err("gone");
        assert!(
            e.to_string()
                .contains("fabric 'of1' does not exist in configuration"),
            "{e}"
        );

        let names = checked.names();
        for want in [
            "GET index",
            "GET list_all",
            "GET get_fabric",
            "GET get_node",
            "GET list_nodes_fabric",
            "GET list_nodes",
        ] {
            assert!(
                names.iter().any(|n| n == want),
                "{mode:?}: {want} not checked"
            );
        }
    }
}

/// 9.2's WireGuard fabrics: an external node, an internal node whose
/// interface PVE keys, its update keeping its role.
#[tokio::test]
async fn wireguard_fabric_and_nodes() {
    use pve_client::api::sdn::fabrics::WireGuardNode;

    for mode in MODES {
        let run = start().await;
        let (pve, _checked) = checked_client(&run, mode);
        let fabrics = pve.sdn().fabrics();
        fabrics
            .add_fabric(
                "wg1",
                "wireguard",
                &[
                    ("ip_prefix", "10.50.0.0/24"),
                    ("persistent_keepalive", "25"),
                ],
            )
            .await
            .expect("fabric");
        let f = fabrics.get_fabric("wg1").await.expect("get");
        assert_eq!(f.persistent_keepalive, Some(25));
        let external = WireGuardNode {
            role: Some("external".into()),
            ip: Some("10.50.0.9".into()),
            public_key: Some("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=".into()),
            endpoint: Some("198.51.100.9:51820".into()),
            allowed_ips: vec!["10.60.0.0/16".into()],
            ..WireGuardNode::default()
        };
        fabrics
            .add_wireguard_node("wg1", "ext", &external)
            .await
            .expect("external node");
        let internal = WireGuardNode {
            role: Some("internal".into()),
            ip: Some("10.50.0.1".into()),
            endpoint: Some("192.0.2.1".into()),
            interfaces: vec!["name=wg0,listen_port=51820".into()],
            peers: vec!["type=external,node=ext,iface=wg0".into()],
            ..WireGuardNode::default()
        };
        fabrics
            .add_wireguard_node("wg1", "pve", &internal)
            .await
            .expect("internal node");
        let n = fabrics.get_node("wg1", "pve").await.expect("node");
        assert_eq!(n.role.as_deref(), Some("internal"));
        assert_eq!(n.peers, vec!["type=external,node=ext,iface=wg0"]);
        let key = n.interfaces[0]
            .split(',')
            .find_map(|p| p.strip_prefix("public_key="))
            .expect("a key")
            .to_string();
        let e = fabrics.get_node("wg1", "ext").await.expect("external");
        assert_eq!(e.endpoint.as_deref(), Some("198.51.100.9:51820"));
        assert_eq!(e.allowed_ips, vec!["10.60.0.0/16"]);

        let change_role = WireGuardNode {
            role: Some("external".into()),
            ..WireGuardNode::default()
        };
        let err = fabrics
            .update_wireguard_node("wg1", "pve", &change_role, &[], None)
            .await
            .expect_err("role kept");
        assert!(
            err.to_string()
                .contains("cannot change role of existing WireGuard node"),
            "{err}"
        );
        let more = WireGuardNode {
            interfaces: vec![
                "name=wg0,listen_port=51820".into(),
                "name=wg1,listen_port=51821".into(),
            ],
            ..WireGuardNode::default()
        };
        fabrics
            .update_wireguard_node("wg1", "pve", &more, &[], None)
            .await
            .expect("interfaces");
        let n = fabrics.get_node("wg1", "pve").await.expect("node");
        assert_eq!(n.interfaces.len(), 2);
        assert!(n.interfaces[0].contains(&key), "{:?}", n.interfaces);
        assert!(!n.interfaces[1].contains(&key), "{:?}", n.interfaces);
    }
}

/// 9.2's BGP fabric with its redistribution, and a node's views of an
/// applied OpenFabric fabric (the node alone in it: no neighbor, no
/// route).
#[tokio::test]
async fn bgp_fabric_and_node_views() {
    for mode in MODES {
        let run = start().await;
        let (pve, checked) = checked_client(&run, mode);
        let sdn = pve.sdn();
        let fabrics = sdn.fabrics();
        fabrics
            .add_fabric(
                "bg1",
                "bgp",
                &[
                    ("ip_prefix", "10.70.0.0/24"),
                    ("redistribute", "source=connected"),
                    ("redistribute", "source=static,route-map=rm1"),
                ],
            )
            .await
            .expect("bgp fabric");
        let f = fabrics.get_fabric("bg1").await.expect("get");
        assert_eq!(f.protocol, "bgp");
        assert_eq!(
            f.redistribute,
            vec!["source=connected", "source=static,route-map=rm1"]
        );
        let e = fabrics
            .add_node("bg1", "pve", "bgp", &[("ip", "10.70.0.1")], &["name=ens19"])
            .await
            .expect_err("no BGP node");
        assert!(
            e.to_string()
                .contains("adding node failed: missing field `role`"),
            "{e}"
        );
        fabrics
            .update_fabric("bg1", "bgp", &[], &["redistribute"], None)
            .await
            .expect("delete redistribute");
        assert!(
            fabrics
                .get_fabric("bg1")
                .await
                .expect("get")
                .redistribute
                .is_empty()
        );

        fabrics
            .add_fabric("of1", "openfabric", &[("ip_prefix", "10.100.0.0/24")])
            .await
            .expect("fabric");
        fabrics
            .add_node(
                "of1",
                "pve",
                "openfabric",
                &[("ip", "10.100.0.1")],
                &["name=ens19"],
            )
            .await
            .expect("node");
        let upid = sdn.reload().await.expect("apply");
        pve.tasks().wait(&upid).await.expect("task");
        let node = sdn.node("pve");
        let ifaces = node.interfaces("of1").await.expect("interfaces");
        let names: Vec<&str> = ifaces.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, vec!["dummy_of1", "ens19"]);
        assert_eq!(ifaces[1].kind, "Point-To-Point");
        assert!(node.neighbors("of1").await.expect("neighbors").is_empty());
        assert!(node.routes("of1").await.expect("routes").is_empty());
        let e = node.routes("nope").await.expect_err("not applied");
        assert!(
            e.to_string()
                .contains("fabric 'nope' does not exist in configuration"),
            "{e}"
        );
        let names = checked.names();
        for want in ["GET interfaces", "GET neighbors", "GET routes"] {
            assert!(
                names.iter().any(|n| n == want),
                "{mode:?}: {want} not checked"
            );
        }
    }
}
