//! Snapshots over the wire: create (with vmstate), the list as a tree with
//! `current`, snapshot config and description, rollback (stopping a
//! running VM), delete with parent re-pointing, their tasks, locks and
//! refusals, and scenario VMs that declare snapshots.

mod common;

use common::{Auth, Pve, builder, ok, start_scenario, start_with, task, upid};
use fake_pve::Latency;
use serde_json::Value;

async fn config(pve: &Pve, auth: &Auth, vmid: u32) -> Value {
    pve.get(&format!("/nodes/pve/qemu/{vmid}/config"), auth)
        .await
        .data()
}

async fn list(pve: &Pve, auth: &Auth) -> Vec<Value> {
    pve.get("/nodes/pve/qemu/100/snapshot", auth)
        .await
        .data()
        .as_array()
        .cloned()
        .expect("list")
}

async fn vm(pve: &Pve, root: &Auth) {
    let r = pve
        .post(
            "/nodes/pve/qemu",
            root,
            "vmid=100&name=db&memory=2048&cores=2&scsi0=local-lvm%3A8",
        )
        .await;
    ok(pve, root, &r).await;
}

#[tokio::test]
async fn create_list_describe_and_delete() {
    let pve = common::start().await;
    let root = pve.root().await;
    vm(&pve, &root).await;
    let r = pve
        .post(
            "/nodes/pve/qemu/100/snapshot",
            &root,
            "snapname=first&description=before+upgrade",
        )
        .await;
    assert_eq!(upid(&r).split(':').nth(5), Some("qmsnapshot"));
    let lines = ok(&pve, &root, &r).await;
    assert_eq!(
        lines,
        [
            "snapshotting 'drive-scsi0' (local-lvm:vm-100-disk-0)",
            "  Logical volume \"snap_vm-100-disk-0_first\" created.",
            "TASK OK"
        ]
    );
    let c = config(&pve, &root, 100).await;
    assert_eq!(c["parent"], "first");
    assert!(c.get("lock").is_none());
    let l = list(&pve, &root).await;
    assert_eq!(l.len(), 2);
    assert_eq!(l[0]["name"], "first");
    assert_eq!(l[0]["snaptime"], common::T0);
    assert_eq!(l[0]["vmstate"], 0);
    assert_eq!(l[0]["description"], "before upgrade");
    assert!(l[0].get("parent").is_none());
    assert_eq!(l[1]["name"], "current");
    assert_eq!(l[1]["description"], "You are here!");
    assert_eq!(l[1]["running"], 0);
    assert_eq!(l[1]["parent"], "first");
    assert_eq!(l[1]["digest"], c["digest"]);

    // A change, then a second snapshot whose parent is the first.
    pve.put("/nodes/pve/qemu/100/config", &root, "cores=4")
        .await
        .data();
    let r = pve
        .post("/nodes/pve/qemu/100/snapshot", &root, "snapname=second")
        .await;
    ok(&pve, &root, &r).await;
    let s = pve
        .get("/nodes/pve/qemu/100/snapshot/second/config", &root)
        .await
        .data();
    assert_eq!(s["parent"], "first");
    assert_eq!(s["cores"], 4);
    assert_eq!(s["snaptime"], common::T0);
    assert!(s.get("digest").is_none());
    assert!(s.get("description").is_none());
    let first = pve
        .get("/nodes/pve/qemu/100/config?snapshot=first", &root)
        .await
        .data();
    assert_eq!(first["cores"], 2);
    assert_eq!(first["digest"], config(&pve, &root, 100).await["digest"]);
    let r = pve
        .get("/nodes/pve/qemu/100/config?snapshot=first&current=1", &root)
        .await;
    r.assert_param_error("current", "cannot use 'snapshot' parameter with 'current'");
    r.assert_param_error("snapshot", "cannot use 'snapshot' parameter with 'current'");
    pve.put(
        "/nodes/pve/qemu/100/snapshot/second/config",
        &root,
        "description=after",
    )
    .await
    .data();
    let l = list(&pve, &root).await;
    assert_eq!(l[1]["description"], "after");
    assert_eq!(l[2]["parent"], "second");

    // Refusals.
    for name in ["current", "pending", "PENDING"] {
        let shown = if name == "current" {
            "current"
        } else {
            "pending"
        };
        pve.post(
            "/nodes/pve/qemu/100/snapshot",
            &root,
            &format!("snapname={name}"),
        )
        .await
        .assert_error(
            500,
            &format!("unable to use snapshot name '{shown}' (reserved name)\n"),
        );
    }
    let r = pve
        .post("/nodes/pve/qemu/100/snapshot", &root, "snapname=first")
        .await;
    let (exit, _) = task(&pve, &root, &r).await;
    assert_eq!(exit, "snapshot name 'first' already used");
    pve.get("/nodes/pve/qemu/100/snapshot/nope/config", &root)
        .await
        .assert_error(500, "snapshot 'nope' does not exist\n");
    pve.put(
        "/nodes/pve/qemu/100/snapshot/nope/config",
        &root,
        "description=x",
    )
    .await
    .assert_error(500, "snapshot 'nope' does not exist\n");
    let r = pve.delete("/nodes/pve/qemu/100/snapshot/nope", &root).await;
    let (exit, _) = task(&pve, &root, &r).await;
    assert_eq!(exit, "snapshot 'nope' does not exist");

    // Deleting the first re-points the second to nothing.
    let r = pve
        .delete("/nodes/pve/qemu/100/snapshot/first", &root)
        .await;
    assert_eq!(upid(&r).split(':').nth(5), Some("qmdelsnapshot"));
    let lines = ok(&pve, &root, &r).await;
    assert_eq!(
        lines,
        [
            "  Logical volume \"snap_vm-100-disk-0_first\" successfully removed.",
            "TASK OK"
        ]
    );
    let l = list(&pve, &root).await;
    assert_eq!(l.len(), 2);
    assert_eq!(l[0]["name"], "second");
    assert!(l[0].get("parent").is_none(), "{l:?}");
    assert_eq!(l[1]["parent"], "second");
    let c = config(&pve, &root, 100).await;
    assert!(c.get("unused0").is_none(), "the disk is still in use: {c}");
    let r = pve
        .delete("/nodes/pve/qemu/100/snapshot/second", &root)
        .await;
    ok(&pve, &root, &r).await;
    let c = config(&pve, &root, 100).await;
    assert!(c.get("parent").is_none(), "{c}");
    assert_eq!(list(&pve, &root).await.len(), 1);
}

#[tokio::test]
async fn vmstate_rollback_and_locks() {
    let mut latency = Latency::instant();
    latency.set_task_ms("qmsnapshot", 3_000);
    latency.set_task_ms("qmrollback", 3_000);
    latency.set_task_ms("qmdelsnapshot", 3_000);
    let pve = start_with(builder().latency(latency)).await;
    let root = pve.root().await;
    vm(&pve, &root).await;
    let r = pve
        .post("/nodes/pve/qemu/100/status/start", &root, "")
        .await;
    ok(&pve, &root, &r).await;
    let r = pve
        .post(
            "/nodes/pve/qemu/100/snapshot",
            &root,
            "snapname=live&vmstate=1",
        )
        .await;
    // While it runs: lock snapshot, snapstate prepare, edits refused.
    assert_eq!(config(&pve, &root, 100).await["lock"], "snapshot");
    let l = list(&pve, &root).await;
    assert_eq!(l[0]["snapstate"], "prepare");
    pve.put("/nodes/pve/qemu/100/config", &root, "cores=4")
        .await
        .assert_error(500, "VM is locked (snapshot)\n");
    pve.run.clock().advance(3);
    let lines = ok(&pve, &root, &r).await;
    assert_eq!(
        lines[0],
        "saving VM state and RAM using storage 'local-lvm'"
    );
    assert!(lines[2].starts_with("completed saving the VM state in "));
    assert_eq!(
        lines[3],
        "snapshotting 'drive-scsi0' (local-lvm:vm-100-disk-0)"
    );
    let s = pve
        .get("/nodes/pve/qemu/100/snapshot/live/config", &root)
        .await
        .data();
    assert_eq!(s["vmstate"], "local-lvm:vm-100-state-live");
    assert!(s["runningmachine"].as_str().is_some());
    assert_eq!(list(&pve, &root).await[0]["vmstate"], 1);
    let content = pve
        .get("/nodes/pve/storage/local-lvm/content", &root)
        .await
        .data();
    let state = content
        .as_array()
        .expect("list")
        .iter()
        .find(|v| v["volid"] == "local-lvm:vm-100-state-live")
        .cloned()
        .expect("the state volume");
    assert_eq!(state["size"], (2u64 * 2048 + 500) << 20);

    // Change the config, then roll back: the VM is stopped first, then
    // started again because the snapshot has RAM.
    pve.put("/nodes/pve/qemu/100/config", &root, "name=changed")
        .await
        .data();
    let before = config(&pve, &root, 100).await;
    let r = pve
        .post("/nodes/pve/qemu/100/snapshot/live/rollback", &root, "")
        .await;
    assert_eq!(upid(&r).split(':').nth(5), Some("qmrollback"));
    assert_eq!(config(&pve, &root, 100).await["lock"], "rollback");
    let st = pve
        .get("/nodes/pve/qemu/100/status/current", &root)
        .await
        .data();
    assert_eq!(st["status"], "stopped", "hard-stopped first");
    pve.run.clock().advance(3);
    let lines = ok(&pve, &root, &r).await;
    assert_eq!(
        lines,
        [
            "  Logical volume \"vm-100-disk-0\" successfully removed.",
            "  Logical volume \"vm-100-disk-0\" created.",
            "TASK OK"
        ]
    );
    let c = config(&pve, &root, 100).await;
    assert_eq!(c["name"], "db");
    assert_eq!(c["parent"], "live");
    assert_ne!(c["vmgenid"], before["vmgenid"], "a new generation");
    assert!(c.get("lock").is_none());
    assert!(c.get("runningmachine").is_none());
    let st = pve
        .get("/nodes/pve/qemu/100/status/current", &root)
        .await
        .data();
    assert_eq!(st["status"], "running");

    // A snapshot without RAM rolls back to a stopped VM unless start=1.
    let r = pve
        .post("/nodes/pve/qemu/100/snapshot", &root, "snapname=cold")
        .await;
    pve.run.clock().advance(3);
    ok(&pve, &root, &r).await;
    let r = pve
        .post("/nodes/pve/qemu/100/snapshot/cold/rollback", &root, "")
        .await;
    pve.run.clock().advance(3);
    ok(&pve, &root, &r).await;
    let st = pve
        .get("/nodes/pve/qemu/100/status/current", &root)
        .await
        .data();
    assert_eq!(st["status"], "stopped");
    let r = pve
        .post(
            "/nodes/pve/qemu/100/snapshot/cold/rollback",
            &root,
            "start=1",
        )
        .await;
    pve.run.clock().advance(3);
    ok(&pve, &root, &r).await;
    let st = pve
        .get("/nodes/pve/qemu/100/status/current", &root)
        .await
        .data();
    assert_eq!(st["status"], "running");

    // Delete holds snapshot-delete; the state volume goes away.
    let r = pve.delete("/nodes/pve/qemu/100/snapshot/live", &root).await;
    assert_eq!(config(&pve, &root, 100).await["lock"], "snapshot-delete");
    assert_eq!(list(&pve, &root).await[1]["snapstate"], "delete");
    let r2 = pve
        .post("/nodes/pve/qemu/100/snapshot", &root, "snapname=other")
        .await;
    pve.run.clock().advance(3);
    ok(&pve, &root, &r).await;
    let (exit, _) = task(&pve, &root, &r2).await;
    assert_eq!(exit, "VM is locked (snapshot-delete)");
    let content = pve
        .get("/nodes/pve/storage/local-lvm/content", &root)
        .await
        .data();
    assert!(
        !content.to_string().contains("vm-100-state-live"),
        "{content}"
    );
    let l = list(&pve, &root).await;
    let names: Vec<&str> = l.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(names, ["cold", "current"]);
    assert!(
        l[0].get("parent").is_none(),
        "re-pointed past 'live': {l:?}"
    );
}

#[tokio::test]
async fn storage_without_snapshots_and_scenario_snapshots() {
    let pve = start_scenario(
        "storages:\n  - { id: local, type: dir, path: /var/lib/vz, content: [images, iso] }\n  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve }\nvms:\n  - vmid: 100\n    name: seeded\n    config: { scsi0: 'local-lvm:vm-100-disk-0,size=4G', cores: 2, parent: two }\n    snapshots:\n      one: { scsi0: 'local-lvm:vm-100-disk-0,size=4G', cores: 1, snaptime: 1700000000, description: first }\n      two: { scsi0: 'local-lvm:vm-100-disk-0,size=4G', cores: 2, snaptime: 1700000100, parent: one }\n  - vmid: 101\n    config: { scsi0: 'local:101/vm-101-disk-0.raw,size=1G' }\n",
    )
    .await;
    let root = pve.root().await;
    let r = pve
        .post("/nodes/pve/qemu/101/snapshot", &root, "snapname=snap")
        .await;
    let (exit, _) = task(&pve, &root, &r).await;
    assert_eq!(exit, "snapshot feature is not available");
    assert!(config(&pve, &root, 101).await.get("lock").is_none());

    let l = list(&pve, &root).await;
    assert_eq!(l.len(), 3);
    assert_eq!(l[0]["name"], "one");
    assert_eq!(l[0]["snaptime"], 1_700_000_000);
    assert_eq!(l[0]["description"], "first");
    assert_eq!(l[1]["parent"], "one");
    assert_eq!(l[2]["parent"], "two");
    let r = pve
        .post("/nodes/pve/qemu/100/snapshot/one/rollback", &root, "")
        .await;
    ok(&pve, &root, &r).await;
    let c = config(&pve, &root, 100).await;
    assert_eq!(c["cores"], 1);
    assert_eq!(c["parent"], "one");
    // A scenario naming a parent that does not exist is refused.
    let bad = fake_pve::Scenario::parse(
        "vms:\n  - vmid: 100\n    config: { parent: ghost }\n",
        "bad.yaml",
    )
    .and_then(|s| {
        s.build(fake_pve::PveVersion::V9_1, "password", common::T0)
            .map(|_| ())
    });
    let err = bad.expect_err("refused").to_string();
    assert!(err.contains("parent 'ghost' is not a snapshot"), "{err}");
}
