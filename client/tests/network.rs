//! The node network calls (`api::network`) against an in-process
//! fake-pve, in both authentication modes, every answer checked against
//! the schema.

mod common;

use common::{MODES, checked_client, start};
use pve_client::Category;
use pve_client::api::network::NetworkOptions;

const NODE: &str = "pve";

#[tokio::test]
async fn interfaces_pending_changes_apply_and_revert() {
    for mode in MODES {
        let run = start().await;
        let (pve, checked) = checked_client(&run, mode);
        let n = pve.network();

        let all = n.index(NODE, None).await.expect("index");
        let vmbr0 = all.iter().find(|i| i.iface == "vmbr0").expect("vmbr0");
        assert_eq!(vmbr0.kind, "bridge", "{mode:?}");
        let bridges = n.index(NODE, Some("bridge")).await.expect("bridges");
        assert!(bridges.iter().all(|i| i.kind == "bridge"), "{bridges:?}");

        let opts = NetworkOptions {
            cidr: Some("192.0.2.1/24".into()),
            bridge_vlan_aware: Some(true),
            autostart: Some(true),
            comments: Some("lab".into()),
            ..NetworkOptions::default()
        };
        n.create_network(NODE, "vmbr9", "bridge", &opts)
            .await
            .expect("create");
        let e = n
            .create_network(NODE, "vmbr9", "bridge", &opts)
            .await
            .expect_err("exists");
        assert_eq!(e.category(), Category::Validation);
        assert_eq!(
            e.param_errors()
                .and_then(|p| p.get("iface"))
                .map(String::as_str),
            Some("interface already exists")
        );
        let pending = n.index_with_changes(NODE, None).await.expect("index");
        assert!(pending.interfaces.iter().any(|i| i.iface == "vmbr9"));
        let diff = pending.changes.expect("a pending diff");
        assert!(diff.contains("vmbr9"), "{diff}");
        let i = n.network_config(NODE, "vmbr9").await.expect("read");
        assert_eq!(i.iface, "vmbr9");
        assert_eq!(i.cidr.as_deref(), Some("192.0.2.1/24"));
        assert_eq!(i.bridge_vlan_aware, Some(true));
        assert_eq!(i.comments.as_deref().map(str::trim), Some("lab"));

        n.update_network(
            NODE,
            "vmbr9",
            "bridge",
            &NetworkOptions {
                mtu: Some(9000),
                delete: vec!["comments".into()],
                ..NetworkOptions::default()
            },
        )
        .await
        .expect("update");
        let i = n.network_config(NODE, "vmbr9").await.expect("read");
        assert_eq!(i.mtu, Some(9000));
        assert_eq!(i.comments, None);

        // Applying makes the change current.
        let st = n.reload_network_config_and_wait(NODE).await.expect("apply");
        assert_eq!(st.kind, "srvreload");
        let applied = n.index_with_changes(NODE, None).await.expect("index");
        assert_eq!(applied.changes, None, "nothing pending once applied");
        let i = n.network_config(NODE, "vmbr9").await.expect("read");
        assert_eq!(i.mtu, Some(9000));

        // A pending removal, then reverted.
        n.delete_network(NODE, "vmbr9").await.expect("delete");
        assert!(
            !n.index(NODE, None)
                .await
                .expect("index")
                .iter()
                .any(|i| i.iface == "vmbr9")
        );
        n.revert_network_changes(NODE).await.expect("revert");
        assert!(
            n.index(NODE, None)
                .await
                .expect("index")
                .iter()
                .any(|i| i.iface == "vmbr9")
        );

        let e = n.network_config(NODE, "vmbr7").await.expect_err("unknown");
        assert_eq!(e.category(), Category::Validation);
        let e = n.delete_network(NODE, "vmbr7").await.expect_err("unknown");
        assert_eq!(
            e.param_errors()
                .and_then(|p| p.get("iface"))
                .map(String::as_str),
            Some("interface does not exist")
        );
        let e = n
            .update_network(NODE, "vmbr7", "bridge", &NetworkOptions::default())
            .await
            .expect_err("unknown");
        assert_eq!(e.category(), Category::Validation, "{e}");

        let names = checked.names();
        for want in [
            "GET index",
            "POST create_network",
            "GET network_config",
            "PUT update_network",
            "DELETE delete_network",
            "PUT reload_network_config",
            "DELETE revert_network_changes",
        ] {
            assert!(
                names.iter().any(|n| n == want),
                "{mode:?}: {want} not checked"
            );
        }
    }
}
