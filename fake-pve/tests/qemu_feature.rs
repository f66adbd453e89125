//! `GET .../feature` and `PUT .../sendkey` over the wire: storage feature
//! tables per disk (current and snapshot), the nodes that see every
//! volume, and PVE's refusals.

mod common;

use common::{Auth, Pve, enc, start_scenario};
use serde_json::{Value, json};

const LAB: &str = "nodes:\n  - name: pve\n  - name: pve2\n  - name: pve3\nstorages:\n  - { id: local, type: dir, path: /var/lib/vz, content: [images, iso] }\n  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve }\n  - { id: nfs, type: nfs, server: 192.0.2.1, export: /x, path: /mnt/pve/nfs, content: [images] }\n  - { id: two, type: nfs, server: 192.0.2.1, export: /y, path: /mnt/pve/two, content: [images], nodes: [pve, pve2] }\n";

async fn ok(pve: &Pve, auth: &Auth, r: &common::Resp) {
    let u = r.data().as_str().expect("a UPID").to_string();
    let st = pve.task_status(&u, auth).await;
    assert_eq!(st["exitstatus"], "OK", "{st}");
    let _ = enc(&u);
}

async fn feature(pve: &Pve, auth: &Auth, q: &str) -> Value {
    pve.get(&format!("/nodes/pve/qemu/100/feature?{q}"), auth)
        .await
        .data()
}

#[tokio::test]
async fn features_and_nodes() {
    let pve = start_scenario(LAB).await;
    let root = pve.root().await;
    let r = pve
        .post(
            "/nodes/pve/qemu",
            &root,
            "vmid=100&scsi0=nfs%3A1%2Cformat%3Dqcow2&ide2=none%2Cmedia%3Dcdrom",
        )
        .await;
    ok(&pve, &root, &r).await;
    // qcow2 on shared NFS: snapshots, copies, no linked clone of a
    // current volume; every node sees it.
    assert_eq!(
        feature(&pve, &root, "feature=snapshot").await,
        json!({"hasFeature": 1, "nodes": ["pve", "pve2", "pve3"]})
    );
    assert_eq!(feature(&pve, &root, "feature=clone").await["hasFeature"], 0);
    assert_eq!(feature(&pve, &root, "feature=copy").await["hasFeature"], 1);

    // An LVM-thin disk: only this node; a restricted storage narrows it.
    pve.put(
        "/nodes/pve/qemu/100/config",
        &root,
        "scsi1=local-lvm%3A1&scsi2=two%3A1",
    )
    .await
    .data();
    let f = feature(&pve, &root, "feature=snapshot").await;
    assert_eq!(f, json!({"hasFeature": 0, "nodes": ["pve"]}), "raw on nfs");
    pve.put("/nodes/pve/qemu/100/config", &root, "delete=scsi2&force=1")
        .await
        .data();
    assert_eq!(
        feature(&pve, &root, "feature=snapshot").await,
        json!({"hasFeature": 1, "nodes": ["pve"]})
    );

    // Of a snapshot: LVM-thin snapshots can be cloned, not snapshotted.
    let r = pve
        .post("/nodes/pve/qemu/100/snapshot", &root, "snapname=s1")
        .await;
    ok(&pve, &root, &r).await;
    assert_eq!(
        feature(&pve, &root, "feature=copy&snapname=s1").await["hasFeature"],
        1
    );
    assert_eq!(
        feature(&pve, &root, "feature=snapshot&snapname=s1").await["hasFeature"],
        0
    );
    pve.get(
        "/nodes/pve/qemu/100/feature?feature=copy&snapname=nope",
        &root,
    )
    .await
    .assert_error(500, "snapshot 'nope' does not exist\n");
    pve.get("/nodes/pve/qemu/100/feature?feature=backup", &root)
        .await
        .assert_param_error(
            "feature",
            "value 'backup' does not have a value in the enumeration 'snapshot, clone, copy'",
        );
    pve.get("/nodes/pve/qemu/101/feature?feature=copy", &root)
        .await
        .assert_error(
            500,
            "Configuration file 'nodes/pve/qemu-server/101.conf' does not exist\n",
        );
}

#[tokio::test]
async fn sendkey() {
    let pve = start_scenario(LAB).await;
    let root = pve.root().await;
    let r = pve
        .post("/nodes/pve/qemu", &root, "vmid=100&scsi0=local-lvm%3A1")
        .await;
    ok(&pve, &root, &r).await;
    pve.put("/nodes/pve/qemu/100/sendkey", &root, "key=ctrl-alt-delete")
        .await
        .assert_error(500, "VM 100 not running\n");
    let r = pve
        .post("/nodes/pve/qemu/100/status/start", &root, "")
        .await;
    ok(&pve, &root, &r).await;
    let d = pve
        .put("/nodes/pve/qemu/100/sendkey", &root, "key=ctrl-alt-delete")
        .await
        .data();
    assert_eq!(d, Value::Null);
    pve.put("/nodes/pve/qemu/100/sendkey", &root, "")
        .await
        .assert_param_error("key", "property is missing and it is not optional");
}
