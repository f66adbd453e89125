//! `POST .../migrate` and `GET .../migrate` over the wire: offline
//! migration moving the config and local disks (with `targetstorage`),
//! live migration of running VMs, `lock: migrate` while the `qmigrate`
//! task runs, timestamped log lines, PVE's refusals before and inside the
//! task, and the migration preconditions.

mod common;

use common::{Auth, Pve, builder, ok, start_with, task, upid, volids};
use fake_pve::Latency;
use serde_json::json;

const LAB: &str = "nodes:\n  - name: pve\n  - name: pve2\n    ip: 10.0.0.2\n  - name: pve3\nstorages:\n  - { id: local, type: dir, path: /var/lib/vz, content: [images, iso] }\n  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve }\n  - { id: nfs, type: nfs, server: 192.0.2.1, export: /x, path: /mnt/pve/nfs, content: [images] }\n  - { id: only1, type: dir, path: /only1, content: [images], nodes: [pve, pve2] }\n";

/// `2026-09-21 14:13:20` plus `secs`.
fn ts(secs: i64) -> String {
    let t = common::T0 + secs;
    let s = t.rem_euclid(86_400);
    format!(
        "2026-09-21 {:02}:{:02}:{:02}",
        s / 3600,
        (s / 60) % 60,
        s % 60
    )
}

async fn lab(latency: Option<Latency>) -> (Pve, Auth) {
    let mut b = builder().scenario(fake_pve::Scenario::parse(LAB, "lab.yaml").expect("scenario"));
    if let Some(l) = latency {
        b = b.latency(l);
    }
    let pve = start_with(b).await;
    let root = pve.root().await;
    (pve, root)
}

async fn create(pve: &Pve, root: &Auth, form: &str) {
    let r = pve.post("/nodes/pve/qemu", root, form).await;
    ok(pve, root, &r).await;
}

async fn migrate(pve: &Pve, auth: &Auth, form: &str) -> common::Resp {
    pve.post("/nodes/pve/qemu/100/migrate", auth, form).await
}

#[tokio::test]
async fn offline_migration_moves_config_and_local_disks() {
    let mut latency = Latency::instant();
    latency.set_task_ms("qmigrate", 12_000);
    let (pve, root) = lab(Some(latency)).await;
    create(
        &pve,
        &root,
        "vmid=100&scsi0=local-lvm%3A8&scsi1=nfs%3A1&ide2=none%2Cmedia%3Dcdrom",
    )
    .await;
    let r = migrate(&pve, &root, "target=pve2").await;
    let u = upid(&r);
    let f: Vec<&str> = u.split(':').collect();
    assert_eq!((f[1], f[5], f[6]), ("pve", "qmigrate", "100"));
    // Phase 1 holds the migrate lock; edits are refused meanwhile.
    let c = pve.get("/nodes/pve/qemu/100/config", &root).await.data();
    assert_eq!(c["lock"], "migrate");
    pve.put("/nodes/pve/qemu/100/config", &root, "cores=2")
        .await
        .assert_error(500, "VM is locked (migrate)\n");
    pve.run.clock().advance(12);
    let lines = ok(&pve, &root, &r).await;
    assert_eq!(
        lines,
        [
            format!(
                "{} starting migration of VM 100 to node 'pve2' (10.0.0.2)",
                ts(0)
            ),
            format!(
                "{} found local disk 'local-lvm:vm-100-disk-0' (attached)",
                ts(0)
            ),
            format!("{} copying local disk images", ts(12)),
            format!("{}   Logical volume \"vm-100-disk-0\" created.", ts(12)),
            format!("{} successfully imported 'local-lvm:vm-100-disk-0'", ts(12)),
            format!(
                "{} volume 'local-lvm:vm-100-disk-0' is 'local-lvm:vm-100-disk-0' on the target",
                ts(12)
            ),
            format!(
                "{} migration finished successfully (duration 00:00:12)",
                ts(12)
            ),
            "TASK OK".to_string(),
        ]
    );
    pve.get("/nodes/pve/qemu/100/config", &root)
        .await
        .assert_error(
            500,
            "Configuration file 'nodes/pve/qemu-server/100.conf' does not exist\n",
        );
    let c = pve.get("/nodes/pve2/qemu/100/config", &root).await.data();
    assert!(c.get("lock").is_none());
    assert_eq!(c["scsi0"], "local-lvm:vm-100-disk-0,size=8G");
    assert_eq!(c["scsi1"], "nfs:100/vm-100-disk-0.raw,size=1G");
    assert!(
        volids(&pve, &root, "pve2", "local-lvm")
            .await
            .contains(&"local-lvm:vm-100-disk-0".to_string())
    );
    assert!(volids(&pve, &root, "pve", "local-lvm").await.is_empty());

    // Back, onto another storage with targetstorage.
    let r = pve
        .post(
            "/nodes/pve2/qemu/100/migrate",
            &root,
            "target=pve&targetstorage=local-lvm%3Alocal",
        )
        .await;
    pve.run.clock().advance(12);
    let lines = ok(&pve, &root, &r).await;
    assert_eq!(
        lines[4..6],
        [
            format!(
                "{} successfully imported 'local:100/vm-100-disk-0.raw'",
                ts(24)
            ),
            format!(
                "{} volume 'local-lvm:vm-100-disk-0' is 'local:100/vm-100-disk-0.raw' on the target",
                ts(24)
            ),
        ]
    );
    let c = pve.get("/nodes/pve/qemu/100/config", &root).await.data();
    assert_eq!(c["scsi0"], "local:100/vm-100-disk-0.raw,size=8G");
    assert!(volids(&pve, &root, "pve2", "local-lvm").await.is_empty());
}

#[tokio::test]
async fn refusals_before_the_task() {
    let (pve, root) = lab(None).await;
    create(&pve, &root, "vmid=100&scsi0=only1%3A1").await;
    migrate(&pve, &root, "target=pve")
        .await
        .assert_param_error("target", "target is local node.");
    migrate(&pve, &root, "target=pve9")
        .await
        .assert_error(500, "no such cluster node 'pve9'\n");
    migrate(&pve, &root, "target=pve3")
        .await
        .assert_error(500, "storage 'only1' is not available on node 'pve3'\n");
    migrate(&pve, &root, "target=pve3&targetstorage=only1")
        .await
        .assert_error(500, "storage 'only1' is not available on node 'pve3'\n");
    // Two bare storage IDs pass the schema's `storage-pair-list` check, and
    // the handler's map parser refuses them.
    migrate(&pve, &root, "target=pve3&targetstorage=aa%2Cbb")
        .await
        .assert_param_error(
            "targetstorage",
            "failed to parse storage map: default target ID can only be provided once\n",
        );
    migrate(&pve, &root, "target=pve3&targetstorage=a%2Cb")
        .await
        .assert_param_error(
            "targetstorage",
            "invalid format - entry 'a' contains invalid ID - storage ID 'a' cannot be shorter than 2 characters\n\n\n",
        );
    pve.post("/nodes/pve/qemu/101/migrate", &root, "target=pve2")
        .await
        .assert_error(
            500,
            "Configuration file 'nodes/pve/qemu-server/101.conf' does not exist\n",
        );
    let r = pve
        .post("/nodes/pve/qemu/100/status/start", &root, "")
        .await;
    ok(&pve, &root, &r).await;
    migrate(&pve, &root, "target=pve2")
        .await
        .assert_error(500, "can't migrate running VM without --online\n");
    pve.put("/nodes/pve/qemu/100/config", &root, "lock=backup")
        .await
        .data();
    migrate(&pve, &root, "target=pve2&online=1")
        .await
        .assert_error(500, "VM is locked (backup)\n");
}

#[tokio::test]
async fn live_migration_with_local_disks_needs_the_option() {
    let (pve, root) = lab(None).await;
    create(&pve, &root, "vmid=100&scsi0=local-lvm%3A8").await;
    let r = pve
        .post("/nodes/pve/qemu/100/status/start", &root, "")
        .await;
    ok(&pve, &root, &r).await;
    let r = migrate(&pve, &root, "target=pve2&online=1").await;
    let (exit, lines) = task(&pve, &root, &r).await;
    assert_eq!(exit, "migration aborted");
    let t = ts(0);
    assert_eq!(
        lines,
        [
            format!("{t} starting migration of VM 100 to node 'pve2' (10.0.0.2)"),
            format!("{t} found local disk 'local-lvm:vm-100-disk-0' (attached)"),
            format!(
                "{t} can't migrate local disk 'local-lvm:vm-100-disk-0': can't live migrate attached local disks without with-local-disks option"
            ),
            format!(
                "{t} ERROR: Problem found while scanning volumes - can't migrate VM - check log"
            ),
            format!("{t} aborting phase 1 - cleanup resources"),
            format!(
                "{t} ERROR: migration aborted (duration 00:00:00): Problem found while scanning volumes - can't migrate VM - check log"
            ),
            "TASK ERROR: migration aborted".to_string(),
        ]
    );
    let c = pve.get("/nodes/pve/qemu/100/config", &root).await.data();
    assert!(c.get("lock").is_none(), "{c}");

    // With the option, the VM arrives running on pve2.
    let r = migrate(&pve, &root, "target=pve2&online=1&with-local-disks=1").await;
    let lines = ok(&pve, &root, &r).await;
    assert!(
        lines.contains(&format!("{t} starting VM 100 on remote node 'pve2'")),
        "{lines:?}"
    );
    assert!(
        lines.contains(&format!(
            "{t} start migrate command to unix:/run/qemu-server/100.migrate"
        )),
        "{lines:?}"
    );
    let st = pve
        .get("/nodes/pve2/qemu/100/status/current", &root)
        .await
        .data();
    assert_eq!(st["status"], "running");
}

#[tokio::test]
async fn preconditions() {
    let (pve, root) = lab(None).await;
    create(
        &pve,
        &root,
        "vmid=100&scsi0=only1%3A1&scsi1=nfs%3A1&scsi2=local-lvm%3A2&usb0=host%3D1234%3A5678&ide2=none%2Cmedia%3Dcdrom",
    )
    .await;
    pve.put("/nodes/pve/qemu/100/unlink", &root, "idlist=scsi2")
        .await
        .data();
    let p = pve.get("/nodes/pve/qemu/100/migrate", &root).await.data();
    assert_eq!(p["running"], 0);
    assert_eq!(p["allowed_nodes"], json!(["pve2"]));
    // PVE leaves an empty entry for each allowed node.
    assert_eq!(p["not_allowed_nodes"]["pve2"], json!({}));
    assert_eq!(
        p["not_allowed_nodes"]["pve3"],
        json!({"unavailable_storages": ["only1"]})
    );
    assert_eq!(p["local_resources"], json!(["usb0"]));
    let disks = p["local_disks"].as_array().expect("disks");
    let vols: Vec<&str> = disks.iter().filter_map(|d| d["volid"].as_str()).collect();
    assert_eq!(
        vols,
        ["local-lvm:vm-100-disk-0", "only1:100/vm-100-disk-0.raw"],
        "{p}"
    );
    assert_eq!(disks[0]["is_unused"], 1);
    assert_eq!(disks[0]["is_attached"], 0);
    assert_eq!(disks[0]["size"], 2u64 << 30);
    assert_eq!(disks[1]["size"], 1u64 << 30);
    assert_eq!(disks[1]["is_attached"], 1);
    assert_eq!(disks[1]["drivename"], "scsi0");
    assert_eq!(p["mapped-resources"], json!([]));
}
