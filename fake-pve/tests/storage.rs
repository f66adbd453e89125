//! Storages over the wire: the storage.cfg CRUD with its digest, each
//! storage's status on a node with PVE's filters, and capacity as disks
//! come and go (thin pools overcommit, thick LVM refuses).

mod common;

use common::{Auth, Pve, enc, start_scenario};
use serde_json::Value;

const GIB: u64 = 1 << 30;

async fn status(pve: &Pve, auth: &Auth, sid: &str) -> Value {
    pve.get(&format!("/nodes/pve/storage/{sid}/status"), auth)
        .await
        .data()
}

async fn task_exit(pve: &Pve, auth: &Auth, r: &common::Resp) -> String {
    let upid = r.data().as_str().expect("upid").to_string();
    let st = pve.task_status(&upid, auth).await;
    assert_eq!(st["status"], "stopped");
    st["exitstatus"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn the_configuration_lists_with_a_digest_and_changes() {
    let pve = common::start().await;
    let root = pve.root().await;
    let list = pve.get("/storage", &root).await.data();
    let items = list.as_array().expect("list");
    assert_eq!(items.len(), 2);
    let lvm = items
        .iter()
        .find(|s| s["storage"] == "local-lvm")
        .expect("local-lvm");
    assert_eq!(lvm["type"], "lvmthin");
    assert_eq!(lvm["thinpool"], "data");
    assert_eq!(lvm["vgname"], "pve");
    assert_eq!(lvm["content"], "images,rootdir");
    let digest = lvm["digest"].as_str().expect("digest").to_string();
    assert_eq!(digest.len(), 40);
    assert_eq!(lvm.get("shared"), None);
    let dirs = pve.get("/storage?type=dir", &root).await.data();
    assert_eq!(dirs.as_array().map(Vec::len), Some(1));

    // Each type's required options, as PVE's storage plugins declare them.
    pve.post(
        "/storage",
        &root,
        "storage=isos&type=nfs&server=192.0.2.50&path=%2Fmnt%2Fpve%2Fisos",
    )
    .await
    .assert_error(500, "missing value for required option 'export'\n");
    pve.post("/storage", &root, "storage=thin&type=lvmthin&vgname=pve")
        .await
        .assert_error(500, "missing value for required option 'thinpool'\n");
    let r = pve
        .post(
            "/storage",
            &root,
            "storage=isos&type=nfs&server=192.0.2.50&export=%2Fexport%2Fiso&path=%2Fmnt%2Fpve%2Fisos&content=iso,vztmpl",
        )
        .await;
    assert_eq!(
        r.data(),
        serde_json::json!({"storage": "isos", "type": "nfs"})
    );
    let one = pve.get("/storage/isos", &root).await.data();
    assert_eq!(one["shared"], 1, "nfs is always shared");
    assert_eq!(one["server"], "192.0.2.50");
    assert_eq!(one["content"], "iso,vztmpl");
    assert_ne!(one["digest"], digest.as_str(), "the file changed");
    pve.post("/storage", &root, "storage=isos&type=dir&path=%2Fx")
        .await
        .assert_error(
            500,
            "create storage failed: storage ID 'isos' already defined\n",
        );

    // Required options are fixed once the storage exists.
    pve.put("/storage/isos", &root, "server=192.0.2.51")
        .await
        .assert_error(
            500,
            "update storage failed: can't change value of fixed parameter 'server'\n",
        );
    pve.put("/storage/isos", &root, "delete=export")
        .await
        .assert_error(
            500,
            "update storage failed: unable to delete required option 'export'\n",
        );
    pve.put(
        "/storage/isos",
        &root,
        &format!("content=iso&digest={digest}"),
    )
    .await
    .assert_error(
        500,
        "update storage failed: detected modified configuration - file changed by other user? Try again.\n",
    );
    let fresh = one["digest"].as_str().unwrap_or_default().to_string();
    pve.put(
        "/storage/isos",
        &root,
        &format!("content=iso&disable=1&digest={fresh}"),
    )
    .await
    .data();
    let one = pve.get("/storage/isos", &root).await.data();
    assert_eq!(one["content"], "iso");
    assert_eq!(one["disable"], 1);
    pve.put("/storage/isos", &root, "content=iso&delete=content")
        .await
        .assert_error(
            500,
            "update storage failed: cannot set and delete property 'content' at the same time!\n",
        );

    assert_eq!(pve.delete("/storage/isos", &root).await.data(), Value::Null);
    pve.delete("/storage/isos", &root).await.assert_error(
        500,
        "delete storage failed: storage 'isos' does not exist\n",
    );
    pve.get("/storage/isos", &root)
        .await
        .assert_error(500, "storage 'isos' does not exist\n");
}

#[tokio::test]
async fn node_status_lists_with_pves_fields_and_filters() {
    let pve = start_scenario(
        "nodes: [{ name: pve }, { name: pve2 }]\nstorages:\n  - { id: local, type: dir, path: /var/lib/vz, content: [iso, backup], size: 100G, used: 25G }\n  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve, size: 200G }\n  - { id: old, type: dir, path: /old, disable: true }\n  - { id: far, type: zfspool, pool: tank, nodes: [pve2] }\n  - { id: shared, type: nfs, server: 192.0.2.9, export: /e }\n",
    )
    .await;
    let root = pve.root().await;
    let items = pve.get("/nodes/pve/storage", &root).await.data();
    let items = items.as_array().expect("list").clone();
    let mut names: Vec<&str> = items.iter().filter_map(|s| s["storage"].as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["local", "local-lvm", "old", "shared"],
        "far is on pve2 only"
    );
    let local = items
        .iter()
        .find(|s| s["storage"] == "local")
        .expect("local");
    assert_eq!(local["total"], 100 * GIB);
    assert_eq!(local["used"], 25 * GIB);
    assert_eq!(local["avail"], 75 * GIB);
    assert_eq!(local["used_fraction"], 0.25);
    assert_eq!(local["active"], 1);
    assert_eq!(local["enabled"], 1);
    assert_eq!(local["shared"], 0);
    assert_eq!(local["content"], "iso,backup");
    let old = items.iter().find(|s| s["storage"] == "old").expect("old");
    assert_eq!(old["enabled"], 0);
    assert_eq!(old["active"], 0);
    assert_eq!(old["total"], 0);
    assert_eq!(old.get("used_fraction"), None);

    let images = pve
        .get("/nodes/pve/storage?content=images", &root)
        .await
        .data();
    let mut names: Vec<&str> = images
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["storage"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["local-lvm", "old", "shared"]);
    let enabled = pve.get("/nodes/pve/storage?enabled=1", &root).await.data();
    assert!(
        enabled
            .as_array()
            .is_some_and(|l| l.iter().all(|s| s["storage"] != "old"))
    );
    let target = pve
        .get("/nodes/pve/storage?target=pve2", &root)
        .await
        .data();
    assert_eq!(target.as_array().map(Vec::len), Some(1), "{target}");
    assert_eq!(target[0]["storage"], "shared");
    pve.get("/nodes/pve/storage?storage=far", &root)
        .await
        .assert_param_error("storage", "No such storage.");
    pve.get("/nodes/pve/storage/far/status", &root)
        .await
        .assert_param_error("storage", "No such storage.");
    let far = pve
        .get("/nodes/pve2/storage/far/status", &root)
        .await
        .data();
    assert_eq!(far["type"], "zfspool");
}

#[tokio::test]
async fn capacity_follows_the_disks_thin_overcommits_thick_refuses() {
    let pve = start_scenario(
        "storages:\n  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve, size: 10G }\n  - { id: thick, type: lvm, vgname: vg0, size: 10G }\n",
    )
    .await;
    let root = pve.root().await;
    assert_eq!(status(&pve, &root, "local-lvm").await["used"], 0);
    let r = pve
        .post(
            "/nodes/pve/qemu",
            &root,
            "vmid=100&scsi0=local-lvm%3A8&scsi1=local-lvm%3A8",
        )
        .await;
    assert_eq!(task_exit(&pve, &root, &r).await, "OK");
    let st = status(&pve, &root, "local-lvm").await;
    assert_eq!(st["used"], 16 * GIB, "a thin pool overcommits");
    assert_eq!(st["avail"], 0);

    let r = pve
        .post("/nodes/pve/qemu", &root, "vmid=101&scsi0=thick%3A20")
        .await;
    let exit = task_exit(&pve, &root, &r).await;
    assert_eq!(
        exit,
        format!(
            "unable to create VM 101 - not enough free space ({} < {})",
            10 * GIB,
            20 * GIB / 1024
        )
    );
    assert_eq!(status(&pve, &root, "thick").await["used"], 0);

    let r = pve.delete("/nodes/pve/qemu/100", &root).await;
    assert_eq!(task_exit(&pve, &root, &r).await, "OK");
    assert_eq!(status(&pve, &root, "local-lvm").await["used"], 0);
    let _ = enc("");
}

#[tokio::test]
async fn rrddata_and_rrd_follow_the_status_per_release() {
    use fake_pve::PveVersion;
    for (version, frame, points, reso, layout) in [
        (PveVersion::V9_1, "hour", 60, 60, "pve-storage-9.0"),
        (PveVersion::V9_1, "week", 336, 1800, "pve-storage-9.0"),
        (PveVersion::V8_4, "day", 70, 1800, "pve2-storage"),
    ] {
        let pve = common::start_version(version).await;
        let root = pve.root().await;
        let now = status(&pve, &root, "local-lvm").await;
        let series = pve
            .get(
                &format!("/nodes/pve/storage/local-lvm/rrddata?timeframe={frame}"),
                &root,
            )
            .await
            .data();
        let series = series.as_array().expect("points");
        assert_eq!(series.len(), points, "{version:?} {frame}");
        let t0 = series[0]["time"].as_i64().expect("time");
        assert_eq!(t0 % reso, 0, "aligned to the resolution");
        assert_eq!(series[1]["time"].as_i64(), Some(t0 + reso));
        let last = &series[points - 1];
        assert_eq!(last["total"], now["total"]);
        assert_eq!(last["used"], now["used"]);
        let end = last["time"].as_i64().expect("time") + reso;
        assert!(
            end <= common::T0 && end + reso > common::T0,
            "the last full step before now: {end}"
        );
        pve.get("/nodes/pve/storage/nope/rrddata?timeframe=hour", &root)
            .await
            .assert_error(
                500,
                &format!(
                    "RRD error: opening '/var/lib/rrdcached/db/{layout}/pve/nope': No such file or directory\n"
                ),
            );
        let graph = pve
            .get(
                "/nodes/pve/storage/local/rrd?timeframe=day&ds=total,used",
                &root,
            )
            .await
            .data();
        assert_eq!(
            graph["filename"],
            "/var/lib/rrdcached/db/pve2-storage/pve/local_total_used.png"
        );
        assert!(
            graph["image"]
                .as_str()
                .is_some_and(|i| i.starts_with("\u{89}PNG")),
            "{graph}"
        );
    }
}

#[tokio::test]
async fn the_format_flag_adds_each_plugins_formats_per_release() {
    use fake_pve::PveVersion;
    let by_id = |list: &Value, sid: &str| {
        list.as_array()
            .and_then(|l| l.iter().find(|s| s["storage"] == sid).cloned())
            .unwrap_or(Value::Null)
    };
    let pve = common::start_version(PveVersion::V9_1).await;
    let root = pve.root().await;
    let list = pve.get("/nodes/pve/storage?format=1", &root).await.data();
    let local = by_id(&list, "local");
    assert_eq!(
        local["formats"],
        serde_json::json!({"supported": ["qcow2", "raw", "subvol", "vmdk"], "default": "raw"})
    );
    assert_eq!(
        local["format"],
        serde_json::json!([{"qcow2": 1, "raw": 1, "subvol": 1, "vmdk": 1}, "raw"])
    );
    let thin = by_id(&list, "local-lvm");
    assert_eq!(
        thin["formats"],
        serde_json::json!({"supported": ["raw"], "default": "raw"}),
        "a plugin without formats is raw-only"
    );
    let plain = pve.get("/nodes/pve/storage", &root).await.data();
    assert_eq!(
        by_id(&plain, "local").get("formats"),
        None,
        "only on request"
    );

    let pve = common::start_version(PveVersion::V8_4).await;
    let root = pve.root().await;
    let list = pve.get("/nodes/pve/storage?format=1", &root).await.data();
    let local = by_id(&list, "local");
    assert_eq!(local.get("formats"), None, "8.4 has no `formats`");
    assert_eq!(
        local["format"],
        serde_json::json!([{"qcow2": 1, "raw": 1, "subvol": 1, "vmdk": 1}, "raw"])
    );
    assert_eq!(
        by_id(&list, "local-lvm").get("format"),
        None,
        "lvmthin declares no formats"
    );
}
