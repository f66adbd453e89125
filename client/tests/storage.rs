//! The storage calls (`api::storage`) against an in-process fake-pve, in
//! both authentication modes, every answer checked against the schema.

mod common;

use common::{MODES, checked_client, start};
use pve_client::Category;
use pve_client::api::storage::{StorageCreate, StorageFilter, StorageUpdate};

#[tokio::test]
async fn storage_configuration_crud() {
    for mode in MODES {
        let run = start().await;
        let (pve, checked) = checked_client(&run, mode);
        let s = pve.storage();

        let all = s.index(None).await.expect("index");
        let ids: Vec<&str> = all.iter().map(|c| c.storage.as_str()).collect();
        assert_eq!(ids, ["local", "local-lvm"], "{mode:?}");
        let lvm = s.index(Some("lvmthin")).await.expect("by type");
        assert_eq!(lvm.len(), 1);
        assert_eq!(lvm[0].content, ["images", "rootdir"]);
        assert_eq!(lvm[0].extra["thinpool"], "data");

        let made = s
            .create(
                &StorageCreate::new("backups", "dir")
                    .option("path", "/mnt/backups")
                    .content(&["backup", "iso"])
                    .nodes(&["pve"]),
            )
            .await
            .expect("create");
        assert_eq!(
            (made.storage.as_str(), made.kind.as_str()),
            ("backups", "dir")
        );
        let e = s
            .create(&StorageCreate::new("backups", "dir").option("path", "/x"))
            .await
            .expect_err("taken");
        assert!(e.message().contains("already defined"), "{e}");
        let e = s
            .create(
                &StorageCreate::new("elsewhere", "dir")
                    .option("path", "/x")
                    .nodes(&["nope"]),
            )
            .await
            .expect_err("unknown node");
        assert_eq!(e.category(), Category::Validation, "{e}");

        let c = s.read("backups").await.expect("read");
        assert_eq!(c.path.as_deref(), Some("/mnt/backups"));
        assert_eq!(c.content, ["backup", "iso"]);
        assert_eq!(c.nodes, ["pve"]);
        assert!(c.is_enabled());
        let digest = c.digest.clone().expect("digest");

        s.update(
            "backups",
            &StorageUpdate::default()
                .disable(true)
                .content(&["backup"])
                .delete("nodes")
                .digest(&digest),
        )
        .await
        .expect("update");
        let c = s.read("backups").await.expect("read");
        assert!(!c.is_enabled());
        assert_eq!(c.content, ["backup"]);
        assert!(c.nodes.is_empty());
        let e = s
            .update(
                "backups",
                &StorageUpdate::default().disable(false).digest(&digest),
            )
            .await
            .expect_err("stale digest");
        assert_eq!(
            e.message(),
            "update storage failed: detected modified configuration - file changed by other user? Try again."
        );
        assert_eq!(e.category(), Category::Conflict);

        s.delete("backups").await.expect("delete");
        let e = s.read("backups").await.expect_err("gone");
        assert_eq!(e.message(), "storage 'backups' does not exist");
        assert_eq!(e.category(), Category::NotFound);
        let e = s.delete("backups").await.expect_err("gone");
        assert_eq!(e.category(), Category::NotFound, "{e}");
        let e = s
            .update("backups", &StorageUpdate::default().disable(true))
            .await
            .expect_err("gone");
        assert!(e.message().contains("does not exist"), "{e}");

        let names = checked.names();
        for want in [
            "GET index",
            "POST create",
            "GET read",
            "PUT update",
            "DELETE delete",
        ] {
            assert!(
                names.iter().any(|n| n == want),
                "{mode:?}: {want} not checked"
            );
        }
    }
}

#[tokio::test]
async fn storage_status_per_node() {
    for mode in MODES {
        let run = start().await;
        let (pve, checked) = checked_client(&run, mode);
        let s = pve.storage();
        let all = s
            .node_storage_index("pve", &StorageFilter::default())
            .await
            .expect("node storage");
        assert_eq!(all.len(), 2, "{mode:?}: {all:?}");
        for st in &all {
            assert_eq!(st.active, Some(true), "{st:?}");
            let (total, used, avail) = (
                st.total.expect("total"),
                st.used.expect("used"),
                st.avail.expect("avail"),
            );
            assert!(used <= total && avail <= total, "{st:?}");
        }
        let images = s
            .node_storage_index(
                "pve",
                &StorageFilter {
                    content: Some("images".into()),
                    ..StorageFilter::default()
                },
            )
            .await
            .expect("images");
        assert_eq!(images.len(), 1);
        assert_eq!(images[0].storage, "local-lvm");
        let e = s
            .node_storage_index(
                "pve",
                &StorageFilter {
                    storage: Some("nope".into()),
                    ..StorageFilter::default()
                },
            )
            .await
            .expect_err("no such storage");
        assert_eq!(e.category(), Category::Validation);
        assert_eq!(
            e.param_errors()
                .and_then(|p| p.get("storage"))
                .map(String::as_str),
            Some("No such storage.")
        );

        let st = s.read_status("pve", "local-lvm").await.expect("status");
        assert_eq!(st.storage, "local-lvm");
        assert_eq!(st.kind, "lvmthin");
        assert!(st.content.contains(&"images".to_string()));
        let e = s.read_status("pve", "nope").await.expect_err("unknown");
        assert_eq!(e.category(), Category::Validation);

        let series = s
            .rrddata(
                "pve",
                "local-lvm",
                pve_client::api::qemu::Timeframe::Hour,
                None,
            )
            .await
            .expect("rrddata");
        assert_eq!(series.len(), 60, "{mode:?}");
        let last = series.last().expect("a point");
        assert!(st.total.is_some_and(|t| t > 0), "{st:?}");
        assert_eq!(last.total, st.total.map(|t| t as f64));
        assert_eq!(last.used, st.used.map(|u| u as f64));
        assert_eq!(series[1].time - series[0].time, 60);
        let e = s
            .rrddata("pve", "nope", pve_client::api::qemu::Timeframe::Day, None)
            .await
            .expect_err("no statistics");
        assert!(e.message().starts_with("RRD error: opening '"), "{e}");

        let names = checked.names();
        for want in ["GET index", "GET read_status", "GET rrddata"] {
            assert!(
                names.iter().any(|n| n == want),
                "{mode:?}: {want} not checked"
            );
        }
    }
}
