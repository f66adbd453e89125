//! The SDN prefix list and route map calls (`api::sdn::routing`, 9.2)
//! against an in-process fake-pve: made, refused where
//! proxmox-ve-config refuses, applied, changed, deleted; every answer
//! checked against the schema.

mod common;

use common::{MODES, checked_client, start};
use pve_client::api::sdn::SdnView;

#[tokio::test]
async fn prefix_list_and_route_map_lifecycle() {
    for mode in MODES {
        let run = start().await;
        let (pve, checked) = checked_client(&run, mode);
        let sdn = pve.sdn();
        let lists = sdn.prefix_lists();
        let maps = sdn.route_maps();

        lists
            .create_prefix_list("plin", &["action=permit,prefix=10.0.0.0/8,le=24"])
            .await
            .expect("list");
        lists
            .create_prefix_list_entry("plin", "deny", "fd00::/48", &[("ge", "64")])
            .await
            .expect("entry");
        let entries = lists
            .get_prefix_list_entries("plin")
            .await
            .expect("entries");
        let seqs: Vec<u32> = entries.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, [5, 10]);
        assert_eq!(entries[1].ge, Some(64));
        let e = lists
            .create_prefix_list_entry("plin", "deny", "192.0.2.0/24", &[("le", "23")])
            .await
            .expect_err("le below the prefix length");
        assert!(
            e.to_string()
                .contains("creating prefix list entry failed: Prefix <= must not be less than 24"),
            "{e}"
        );
        lists
            .update_prefix_list_entry("plin", 5, &[("seq", "50")], &["le"])
            .await
            .expect("renumbered");
        let got = lists
            .get_prefix_list_entry("plin", 50)
            .await
            .expect("entry 50");
        assert_eq!((got.le, got.prefix.as_str()), (None, "10.0.0.0/8"));

        maps.create_route_map_entry(
            "rmout",
            10,
            "permit",
            &[
                ("match", "key=ip-address-prefix-list,value=plin"),
                ("set", "key=local-preference,value=+20"),
            ],
        )
        .await
        .expect("route map entry");
        let e = maps
            .create_route_map_entry(
                "rmout",
                20,
                "deny",
                &[("set", "key=ip-next-hop,value=fd00::1")],
            )
            .await
            .expect_err("an IPv6 next hop for ip-next-hop");
        assert!(
            e.to_string().contains("creating route map entry failed"),
            "{e}"
        );
        let e = lists.delete_prefix_list("plin").await.expect_err("in use");
        assert!(
            e.to_string()
                .contains("prefix list plin is still referenced by route map entry rmout #10"),
            "{e}"
        );

        let ids = lists
            .list_prefix_lists(SdnView::Pending, false)
            .await
            .expect("pending");
        assert_eq!(ids[0].state.as_deref(), Some("new"));
        assert!(
            maps.list_route_maps(true)
                .await
                .expect("running")
                .is_empty()
        );
        let upid = sdn.reload().await.expect("apply");
        pve.tasks().wait(&upid).await.expect("task");
        assert_eq!(
            maps.list_route_maps(true).await.expect("running")[0].id,
            "rmout"
        );
        let running = lists
            .list_prefix_lists(SdnView::Running, true)
            .await
            .expect("running");
        assert_eq!(running[0].entries.len(), 2);

        maps.update_route_map_entry("rmout", 10, &[("action", "deny")], &["set"])
            .await
            .expect("updated");
        let pending = maps
            .list_route_map_entries_for_route_map("rmout", SdnView::Pending)
            .await
            .expect("pending");
        assert_eq!(pending[0].state.as_deref(), Some("changed"));
        let entry = maps.get_route_map_entry("rmout", 10).await.expect("entry");
        assert!(entry.set.is_empty() && entry.action == "deny");
        maps.delete_route_map_entry("rmout", 10)
            .await
            .expect("deleted");
        assert!(
            maps.list_route_map_entries(SdnView::Current)
                .await
                .expect("none")
                .is_empty()
        );
        lists
            .update_prefix_list("plin", None, &["entries"], None)
            .await
            .expect("emptied");
        assert!(
            lists
                .get_prefix_list("plin")
                .await
                .expect("list")
                .entries
                .is_empty()
        );
        lists.delete_prefix_list("plin").await.expect("deleted");
        let names = checked.names();
        for want in [
            "GET list_prefix_lists",
            "GET get_prefix_list",
            "GET get_prefix_list_entries",
            "GET get_prefix_list_entry",
            "GET list_route_maps",
            "GET list_route_map_entries",
            "GET list_route_map_entries_for_route_map",
            "GET get_route_map_entry",
        ] {
            assert!(
                names.iter().any(|n| n == want),
                "{mode:?}: {want} not checked"
            );
        }
    }
}
