//! `POST .../move_disk` and `PUT .../unlink` over the wire: a `qmmove`
//! task that copies a disk to another storage (format, `delete`, the
//! source kept as `unusedN`), a drive mirror for running VMs, PVE's
//! refusals before and inside the task, and unlinking disks.

mod common;

use common::{Auth, Pve, builder, ok, start_scenario, start_with, task, upid, volids};
use fake_pve::Latency;
use serde_json::Value;

async fn config(pve: &Pve, auth: &Auth) -> Value {
    pve.get("/nodes/pve/qemu/100/config", auth).await.data()
}

const LAB: &str = "storages:\n  - { id: local, type: dir, path: /var/lib/vz, content: [images, iso, vztmpl] }\n  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve }\n  - { id: isos, type: dir, path: /isos, content: [iso] }\n  - { id: off, type: dir, path: /off, content: [images], disable: true }\n";

async fn lab() -> (Pve, Auth) {
    let pve = start_scenario(LAB).await;
    let root = pve.root().await;
    let r = pve
        .post(
            "/nodes/pve/qemu",
            &root,
            "vmid=100&name=db&scsi0=local-lvm%3A8&ide2=none%2Cmedia%3Dcdrom&ide0=local-lvm%3Acloudinit",
        )
        .await;
    ok(&pve, &root, &r).await;
    (pve, root)
}

async fn move_disk(pve: &Pve, auth: &Auth, form: &str) -> common::Resp {
    pve.post("/nodes/pve/qemu/100/move_disk", auth, form).await
}

#[tokio::test]
async fn moves_to_a_directory_and_keeps_the_source_unused() {
    let (pve, root) = lab().await;
    let r = move_disk(&pve, &root, "disk=scsi0&storage=local&format=qcow2").await;
    let u = upid(&r);
    let fields: Vec<&str> = u.split(':').collect();
    assert_eq!(fields[5], "qmmove");
    assert_eq!(fields[6], "100");
    let lines = ok(&pve, &root, &r).await;
    assert_eq!(
        lines[0],
        "create full clone of drive scsi0 (local-lvm:vm-100-disk-0)"
    );
    assert!(
        lines[1].starts_with("Formatting '/var/lib/vz/images/100/vm-100-disk-0.qcow2', fmt=qcow2"),
        "{lines:?}"
    );
    assert_eq!(
        lines[2..],
        [
            "transferred 0.0 B of 8.0 GiB (0.00%)",
            "transferred 8.0 GiB of 8.0 GiB (100.00%)",
            "adding source volume 'local-lvm:vm-100-disk-0' as 'unused0' to config",
            "TASK OK"
        ]
    );
    let c = config(&pve, &root).await;
    assert_eq!(c["scsi0"], "local:100/vm-100-disk-0.qcow2,size=8G");
    assert_eq!(c["unused0"], "local-lvm:vm-100-disk-0");
    assert!(
        volids(&pve, &root, "pve", "local")
            .await
            .contains(&"local:100/vm-100-disk-0.qcow2".to_string())
    );
    assert!(
        volids(&pve, &root, "pve", "local-lvm")
            .await
            .contains(&"local-lvm:vm-100-disk-0".to_string())
    );

    // Back with delete=1: the qcow2 file is freed; the lowest free number
    // on local-lvm is 1 (disk-0 is the unused source).
    let r = move_disk(&pve, &root, "disk=scsi0&storage=local-lvm&delete=1").await;
    let lines = ok(&pve, &root, &r).await;
    assert_eq!(
        lines,
        [
            "create full clone of drive scsi0 (local:100/vm-100-disk-0.qcow2)",
            "  Logical volume \"vm-100-disk-1\" created.",
            "transferred 0.0 B of 8.0 GiB (0.00%)",
            "transferred 8.0 GiB of 8.0 GiB (100.00%)",
            "removing source volume 'local:100/vm-100-disk-0.qcow2' after successful copy",
            "TASK OK"
        ]
    );
    let c = config(&pve, &root).await;
    assert_eq!(c["scsi0"], "local-lvm:vm-100-disk-1,size=8G");
    assert!(c.get("unused1").is_none());
    assert!(
        !volids(&pve, &root, "pve", "local")
            .await
            .iter()
            .any(|v| v.contains("vm-100-disk-0"))
    );

    // An unused disk moves too and stays unused; the cloud-init drive
    // moves (no data is copied).
    let r = move_disk(&pve, &root, "disk=unused0&storage=local&delete=1").await;
    ok(&pve, &root, &r).await;
    assert_eq!(
        config(&pve, &root).await["unused0"],
        "local:100/vm-100-disk-0.raw"
    );
    let r = move_disk(&pve, &root, "disk=ide0&storage=local&delete=1").await;
    let lines = ok(&pve, &root, &r).await;
    assert_eq!(
        lines[0],
        "create full clone of drive ide0 (local-lvm:vm-100-cloudinit)"
    );
    assert!(
        !lines.iter().any(|l| l.starts_with("transferred")),
        "{lines:?}"
    );
    assert_eq!(
        config(&pve, &root).await["ide0"],
        "local:100/vm-100-cloudinit.raw,media=cdrom"
    );

    // A format the target cannot hold: a warning, and its default.
    let r = move_disk(&pve, &root, "disk=scsi0&storage=local&delete=1").await;
    ok(&pve, &root, &r).await;
    let r = move_disk(
        &pve,
        &root,
        "disk=scsi0&storage=local-lvm&format=qcow2&delete=1",
    )
    .await;
    let (exit, lines) = task(&pve, &root, &r).await;
    assert_eq!(exit, "WARNINGS: 1");
    assert_eq!(
        lines[0],
        "WARN: format 'qcow2' is not supported by the target storage 'local-lvm' - using 'raw' instead"
    );
}

#[tokio::test]
async fn refusals_before_the_task() {
    let (pve, root) = lab().await;
    move_disk(&pve, &root, "disk=scsi0&storage=local-lvm")
        .await
        .assert_error(500, "you can't move to the same storage with same format\n");
    move_disk(&pve, &root, "disk=scsi0&storage=local-lvm&format=raw")
        .await
        .assert_error(500, "you can't move to the same storage with same format\n");
    move_disk(&pve, &root, "disk=scsi5&storage=local")
        .await
        .assert_error(500, "disk 'scsi5' does not exist\n");
    move_disk(&pve, &root, "disk=ide2&storage=local")
        .await
        .assert_error(500, "you can't move a cdrom\n");
    move_disk(&pve, &root, "disk=scsi0&storage=isos")
        .await
        .assert_param_error("storage", "storage 'isos' does not support vm images");
    move_disk(&pve, &root, "disk=scsi0&storage=off")
        .await
        .assert_error(500, "storage 'off' is disabled\n");
    move_disk(&pve, &root, "disk=scsi0&storage=nope")
        .await
        .assert_error(500, "storage 'nope' does not exist\n");
    move_disk(
        &pve,
        &root,
        "disk=scsi0&storage=local&digest=0000000000000000000000000000000000000000",
    )
    .await
    .assert_error(
        500,
        "detected modified configuration - file changed by other user? Try again.\n",
    );
    move_disk(&pve, &root, "disk=scsi0")
        .await
        .assert_param_error(
            "storage",
            "both 'storage' and 'target-vmid' missing, either needs to be set",
        );
    let r = move_disk(&pve, &root, "disk=scsi0&storage=local&target-vmid=101").await;
    r.assert_param_error(
        "target-vmid",
        "either set 'storage' or 'target-vmid', but not both",
    );
    assert_eq!(
        r.json()["errors"]["storage"],
        "either set 'storage' or 'target-vmid', but not both"
    );

    // Snapshots keep the source: no delete, and a warning.
    let r = pve
        .post("/nodes/pve/qemu/100/snapshot", &root, "snapname=s1")
        .await;
    ok(&pve, &root, &r).await;
    move_disk(&pve, &root, "disk=scsi0&storage=local&delete=1")
        .await
        .assert_error(
            500,
            "you can't move a disk with snapshots and delete the source\n",
        );
    let r = move_disk(&pve, &root, "disk=scsi0&storage=local").await;
    let (exit, lines) = task(&pve, &root, &r).await;
    assert_eq!(exit, "WARNINGS: 1");
    assert_eq!(
        lines[0],
        "WARN: moving disk with snapshots, snapshots will not be moved!"
    );

    pve.put("/nodes/pve/qemu/100/config", &root, "lock=backup")
        .await
        .data();
    move_disk(&pve, &root, "disk=scsi0&storage=local-lvm")
        .await
        .assert_error(500, "VM is locked (backup)\n");
}

const USERS: &str = "users:\n  - userid: disk@pve\n    password: diskpass1\nroles:\n  - { roleid: DiskOnly, privs: [VM.Config.Disk, VM.Audit] }\nacl:\n  - { path: /vms, roles: [DiskOnly], users: [disk@pve] }\n";

#[tokio::test]
async fn target_storage_permission() {
    let pve = start_scenario(USERS).await;
    let root = pve.root().await;
    let r = pve
        .post("/nodes/pve/qemu", &root, "vmid=100&scsi0=local-lvm%3A1")
        .await;
    ok(&pve, &root, &r).await;
    let user = pve.login_as("disk@pve", "diskpass1").await;
    move_disk(&pve, &user, "disk=scsi0&storage=local")
        .await
        .assert_error(
            403,
            "Permission check failed (/storage/local, Datastore.AllocateSpace)\n",
        );
}

#[tokio::test]
async fn running_vm_mirrors_and_task_holds_the_config_lock() {
    let mut latency = Latency::instant();
    latency.set_task_ms("qmmove", 3_000);
    let pve = start_with(
        builder()
            .latency(latency)
            .scenario(fake_pve::Scenario::parse(LAB, "lab.yaml").expect("scenario")),
    )
    .await;
    let root = pve.root().await;
    let r = pve
        .post("/nodes/pve/qemu", &root, "vmid=100&scsi0=local-lvm%3A2")
        .await;
    ok(&pve, &root, &r).await;
    let r = pve
        .post("/nodes/pve/qemu/100/status/start", &root, "")
        .await;
    ok(&pve, &root, &r).await;
    let r = move_disk(&pve, &root, "disk=scsi0&storage=local&format=raw").await;
    let st = pve.task_status(&upid(&r), &root).await;
    assert_eq!(st["status"], "running");
    assert_eq!(
        config(&pve, &root).await["scsi0"],
        "local-lvm:vm-100-disk-0,size=2G"
    );
    pve.run.clock().advance(3);
    let lines = ok(&pve, &root, &r).await;
    assert_eq!(
        lines[2..],
        [
            "drive mirror is starting for drive-scsi0",
            "drive-scsi0: transferred 2.0 GiB of 2.0 GiB (100.00%) in 1s, ready",
            "all 'mirror' jobs are ready",
            "drive-scsi0: Completing block job...",
            "drive-scsi0: Completed successfully.",
            "drive-scsi0: mirror-job finished",
            "adding source volume 'local-lvm:vm-100-disk-0' as 'unused0' to config",
            "TASK OK"
        ]
    );
    assert_eq!(
        config(&pve, &root).await["scsi0"],
        "local:100/vm-100-disk-0.raw,size=2G"
    );
}

#[tokio::test]
async fn unlink_detaches_or_destroys() {
    let (pve, root) = lab().await;
    let r = pve
        .put(
            "/nodes/pve/qemu/100/config",
            &root,
            "scsi1=local-lvm%3A1&scsi2=local-lvm%3A1",
        )
        .await;
    r.data();
    let u = pve
        .put("/nodes/pve/qemu/100/unlink", &root, "idlist=scsi1")
        .await
        .data();
    assert_eq!(u, Value::Null);
    let c = config(&pve, &root).await;
    assert!(c.get("scsi1").is_none());
    assert_eq!(c["unused0"], "local-lvm:vm-100-disk-1");
    pve.put("/nodes/pve/qemu/100/unlink", &root, "idlist=scsi2&force=1")
        .await
        .data();
    let c = config(&pve, &root).await;
    assert!(c.get("scsi2").is_none());
    assert!(c.get("unused1").is_none());
    assert!(
        !volids(&pve, &root, "pve", "local-lvm")
            .await
            .contains(&"local-lvm:vm-100-disk-2".to_string())
    );
    // unusedN is destroyed.
    pve.put("/nodes/pve/qemu/100/unlink", &root, "idlist=unused0")
        .await
        .data();
    assert!(config(&pve, &root).await.get("unused0").is_none());
    assert!(
        !volids(&pve, &root, "pve", "local-lvm")
            .await
            .contains(&"local-lvm:vm-100-disk-1".to_string())
    );
    pve.put("/nodes/pve/qemu/100/unlink", &root, "idlist=foo")
        .await
        .assert_param_error("delete", "unknown option 'foo'");
}

#[tokio::test]
async fn reassign_to_another_vm() {
    let (pve, root) = lab().await;
    pve.put(
        "/nodes/pve/qemu/100/config",
        &root,
        "scsi1=local-lvm%3A2&boot=order%3Dscsi0%3Bscsi1",
    )
    .await
    .data();
    let r = pve
        .post("/nodes/pve/qemu", &root, "vmid=101&scsi0=local-lvm%3A1")
        .await;
    ok(&pve, &root, &r).await;

    // Refusals before the task.
    move_disk(&pve, &root, "disk=scsi1&target-vmid=100")
        .await
        .assert_param_error(
            "target-vmid",
            "must be different than source VMID to reassign disk",
        );
    move_disk(&pve, &root, "disk=scsi1&target-vmid=102")
        .await
        .assert_error(500, "could not find target VM 102\n");
    move_disk(&pve, &root, "disk=scsi0&target-vmid=101")
        .await
        .assert_error(
            500,
            "Target disk key 'scsi0' is already in use for VM '101'\n",
        );
    move_disk(&pve, &root, "disk=scsi7&target-vmid=101")
        .await
        .assert_error(500, "Disk 'scsi7' for VM '100' does not exist\n");
    move_disk(&pve, &root, "disk=ide2&target-vmid=101&target-disk=ide3")
        .await
        .assert_error(500, "CD drive contents can't be moved to another VM\n");
    move_disk(
        &pve,
        &root,
        "disk=scsi1&target-vmid=101&target-digest=0000000000000000000000000000000000000000",
    )
    .await
    .assert_error(
        500,
        "VM 101: detected modified configuration - file changed by other user? Try again.\n",
    );

    let r = move_disk(
        &pve,
        &root,
        "disk=scsi1&target-vmid=101&target-disk=virtio0",
    )
    .await;
    let u = upid(&r);
    assert_eq!(u.split(':').nth(5), Some("qmmove"));
    assert_eq!(u.split(':').nth(6), Some("100-scsi1>101-virtio0"));
    let lines = ok(&pve, &root, &r).await;
    assert_eq!(
        lines,
        [
            "reassign disk 'scsi1' from VM '100' as 'virtio0' to VM '101'",
            "  Renamed \"vm-100-disk-1\" to \"vm-101-disk-1\" in volume group \"pve\"",
            "removing disk 'scsi1' from boot order config",
            "removing disk 'scsi1' from VM '100' config",
            "update VM 101: -virtio0 local-lvm:vm-101-disk-1,size=2G",
            "TASK OK"
        ]
    );
    let c = config(&pve, &root).await;
    assert!(c.get("scsi1").is_none());
    assert_eq!(c["boot"], "order=scsi0");
    let c101 = pve.get("/nodes/pve/qemu/101/config", &root).await.data();
    assert_eq!(c101["virtio0"], "local-lvm:vm-101-disk-1,size=2G");
    assert!(
        volids(&pve, &root, "pve", "local-lvm")
            .await
            .contains(&"local-lvm:vm-101-disk-1".to_string())
    );

    // A running source keeps attached disks; a snapshot pins them.
    let r = pve
        .post("/nodes/pve/qemu/100/status/start", &root, "")
        .await;
    ok(&pve, &root, &r).await;
    move_disk(&pve, &root, "disk=scsi0&target-vmid=101&target-disk=scsi5")
        .await
        .assert_error(
            500,
            "Cannot move disk to another VM while the source VM is running - detach first\n",
        );
    let r = pve
        .post("/nodes/pve/qemu/101/snapshot", &root, "snapname=s1")
        .await;
    ok(&pve, &root, &r).await;
    pve.post(
        "/nodes/pve/qemu/101/move_disk",
        &root,
        "disk=virtio0&target-vmid=100&target-disk=scsi3",
    )
    .await
    .assert_error(500, "Can't move disk used by a snapshot to another VM\n");
}
