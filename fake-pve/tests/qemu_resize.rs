//! `PUT .../resize` over the wire: a `resize` task that grows a disk by
//! `+N` or to an absolute size, the storage tools' output, the volume and
//! storage usage that follow, and every refusal ending the task (not the
//! request) with PVE's message.

mod common;

use common::{Auth, Pve, builder, ok, start_scenario, start_with, task, upid};
use fake_pve::Latency;
use serde_json::Value;

const GIB: u64 = 1 << 30;

/// Asserts that the task failed with `msg` as its only line.
async fn task_error(pve: &Pve, auth: &Auth, r: &common::Resp, msg: &str) {
    let (exit, lines) = task(pve, auth, r).await;
    assert_eq!(exit, msg);
    assert_eq!(lines, [format!("TASK ERROR: {msg}")]);
}

async fn config(pve: &Pve, auth: &Auth) -> Value {
    pve.get("/nodes/pve/qemu/100/config", auth).await.data()
}

async fn used(pve: &Pve, auth: &Auth, sid: &str) -> u64 {
    pve.get(&format!("/nodes/pve/storage/{sid}/status"), auth)
        .await
        .data()["used"]
        .as_u64()
        .expect("used")
}

async fn vm(pve: &Pve, root: &Auth, disks: &str) {
    let r = pve
        .post(
            "/nodes/pve/qemu",
            root,
            &format!("vmid=100&name=db&{disks}"),
        )
        .await;
    ok(pve, root, &r).await;
}

async fn resize(pve: &Pve, auth: &Auth, form: &str) -> common::Resp {
    pve.put("/nodes/pve/qemu/100/resize", auth, form).await
}

#[tokio::test]
async fn grows_lvm_thin_disk_relative_and_absolute() {
    let pve = common::start().await;
    let root = pve.root().await;
    vm(&pve, &root, "scsi0=local-lvm%3A8&ide2=none%2Cmedia%3Dcdrom").await;
    let before = used(&pve, &root, "local-lvm").await;

    let r = resize(&pve, &root, "disk=scsi0&size=%2B2G").await;
    let u = upid(&r);
    let fields: Vec<&str> = u.split(':').collect();
    assert_eq!(fields[5], "resize");
    assert_eq!(fields[6], "100");
    assert_eq!(fields[7], "root@pam");
    let lines = ok(&pve, &root, &r).await;
    assert_eq!(
        lines,
        [
            "  Size of logical volume pve/vm-100-disk-0 changed from 8.00 GiB (2048 extents) to 10.00 GiB (2560 extents).",
            "  Logical volume pve/vm-100-disk-0 successfully resized.",
            "TASK OK"
        ]
    );
    assert_eq!(
        config(&pve, &root).await["scsi0"],
        "local-lvm:vm-100-disk-0,size=10G"
    );
    assert_eq!(used(&pve, &root, "local-lvm").await, before + 2 * GIB);
    let content = pve
        .get("/nodes/pve/storage/local-lvm/content?vmid=100", &root)
        .await
        .data();
    assert_eq!(content[0]["size"], 10 * GIB);

    // Absolute: 12G; the same size again does nothing and ends OK.
    let r = resize(&pve, &root, "disk=scsi0&size=12G").await;
    ok(&pve, &root, &r).await;
    assert_eq!(
        config(&pve, &root).await["scsi0"],
        "local-lvm:vm-100-disk-0,size=12G"
    );
    let digest = config(&pve, &root).await["digest"].clone();
    let r = resize(&pve, &root, "disk=scsi0&size=12288M").await;
    assert_eq!(ok(&pve, &root, &r).await, ["TASK OK"]);
    assert_eq!(config(&pve, &root).await["digest"], digest);
    assert_eq!(used(&pve, &root, "local-lvm").await, before + 4 * GIB);

    // A size that is not a whole GiB is printed in the largest exact unit.
    let r = resize(&pve, &root, "disk=scsi0&size=%2B512M").await;
    ok(&pve, &root, &r).await;
    assert_eq!(
        config(&pve, &root).await["scsi0"],
        "local-lvm:vm-100-disk-0,size=12800M"
    );
}

#[tokio::test]
async fn refusals_end_the_task() {
    let pve = common::start().await;
    let root = pve.root().await;
    vm(&pve, &root, "scsi0=local-lvm%3A8&ide2=none%2Cmedia%3Dcdrom").await;
    let digest = config(&pve, &root).await["digest"].clone();

    let r = resize(&pve, &root, "disk=scsi0&size=4G").await;
    task_error(&pve, &root, &r, "shrinking disks is not supported").await;
    let r = resize(&pve, &root, "disk=scsi9&size=%2B1G").await;
    task_error(&pve, &root, &r, "disk 'scsi9' does not exist").await;
    let r = resize(&pve, &root, "disk=ide2&size=%2B1G").await;
    task_error(&pve, &root, &r, "you can't resize a cdrom").await;
    let r = resize(
        &pve,
        &root,
        "disk=scsi0&size=%2B1G&digest=0000000000000000000000000000000000000000",
    )
    .await;
    task_error(
        &pve,
        &root,
        &r,
        "checksum mismatch (file change by other user?)",
    )
    .await;
    // Nothing changed.
    assert_eq!(config(&pve, &root).await["digest"], digest);

    // PVE forks before loading the config: a missing VM fails the task.
    let r = pve
        .put("/nodes/pve/qemu/101/resize", &root, "disk=scsi0&size=%2B1G")
        .await;
    task_error(
        &pve,
        &root,
        &r,
        "Configuration file 'nodes/pve/qemu-server/101.conf' does not exist",
    )
    .await;

    // A locked VM; skiplock is for root@pam and passes the lock.
    pve.put("/nodes/pve/qemu/100/config", &root, "lock=backup")
        .await
        .data();
    let r = resize(&pve, &root, "disk=scsi0&size=%2B1G").await;
    task_error(&pve, &root, &r, "VM is locked (backup)").await;
    let r = resize(&pve, &root, "disk=scsi0&size=%2B1G&skiplock=1").await;
    ok(&pve, &root, &r).await;
    assert_eq!(
        config(&pve, &root).await["scsi0"],
        "local-lvm:vm-100-disk-0,size=9G"
    );

    // The schema's checks still refuse the request itself.
    resize(&pve, &root, "disk=scsi0&size=-1G")
        .await
        .assert_param_error("size", "value does not match the regex pattern");
    resize(&pve, &root, "disk=foo0&size=1G")
        .await
        .assert_param_error(
            "disk",
            &format!(
                "value 'foo0' does not have a value in the enumeration '{}'",
                drive_names()
            ),
        );
}

/// `valid_drive_names` as the schema lists them.
fn drive_names() -> String {
    let mut names: Vec<String> = Vec::new();
    names.extend((0..4).map(|i| format!("ide{i}")));
    names.extend((0..31).map(|i| format!("scsi{i}")));
    names.extend((0..16).map(|i| format!("virtio{i}")));
    names.extend((0..6).map(|i| format!("sata{i}")));
    names.push("efidisk0".into());
    names.push("tpmstate0".into());
    names.join(", ")
}

const USERS: &str = r"
users:
  - userid: disk@pve
    password: diskpass1
roles:
  - { roleid: DiskOnly, privs: [VM.Config.Disk, VM.Audit] }
acl:
  - { path: /vms, roles: [DiskOnly], users: [disk@pve] }
";

#[tokio::test]
async fn storage_permission_and_skiplock_are_checked() {
    let pve = start_scenario(USERS).await;
    let root = pve.root().await;
    vm(&pve, &root, "scsi0=local-lvm%3A8").await;
    let user = pve.login_as("disk@pve", "diskpass1").await;
    resize(&pve, &user, "disk=scsi0&size=%2B1G&skiplock=1")
        .await
        .assert_param_error("skiplock", "Only root may use this option.");
    let r = resize(&pve, &user, "disk=scsi0&size=%2B1G").await;
    let (exit, lines) = task(&pve, &user, &r).await;
    assert_eq!(
        exit,
        "Permission check failed (/storage/local-lvm, Datastore.AllocateSpace)"
    );
    assert_eq!(lines.len(), 1, "{lines:?}");
}

const DIR: &str = "storages:\n  - { id: local, type: dir, path: /var/lib/vz, content: [images, iso, vztmpl] }\n  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve }\n";

#[tokio::test]
async fn directory_images_and_running_vms() {
    let pve = start_scenario(DIR).await;
    let root = pve.root().await;
    vm(
        &pve,
        &root,
        "scsi0=local%3A4%2Cformat%3Dqcow2&scsi1=local%3A1%2Cformat%3Dvmdk",
    )
    .await;
    let r = resize(&pve, &root, "disk=scsi0&size=%2B1G").await;
    assert_eq!(ok(&pve, &root, &r).await, ["Image resized.", "TASK OK"]);
    assert_eq!(
        config(&pve, &root).await["scsi0"],
        "local:100/vm-100-disk-0.qcow2,size=5G"
    );
    let r = resize(&pve, &root, "disk=scsi1&size=%2B1G").await;
    task_error(&pve, &root, &r, "can't resize this image format").await;

    // A running VM: QEMU grows the image itself, qemu-img prints nothing.
    let r = pve
        .post("/nodes/pve/qemu/100/status/start", &root, "")
        .await;
    ok(&pve, &root, &r).await;
    let r = resize(&pve, &root, "disk=scsi0&size=6G").await;
    assert_eq!(ok(&pve, &root, &r).await, ["TASK OK"]);
    assert_eq!(
        config(&pve, &root).await["scsi0"],
        "local:100/vm-100-disk-0.qcow2,size=6G"
    );
}

#[tokio::test]
async fn a_running_resize_task_is_observable() {
    let mut latency = Latency::instant();
    latency.set_task_ms("resize", 2_000);
    let pve = start_with(builder().latency(latency)).await;
    let root = pve.root().await;
    vm(&pve, &root, "scsi0=local-lvm%3A8").await;
    let r = resize(&pve, &root, "disk=scsi0&size=%2B1G").await;
    let st = pve.task_status(&upid(&r), &root).await;
    assert_eq!(st["status"], "running");
    assert_eq!(st["type"], "resize");
    assert_eq!(
        config(&pve, &root).await["scsi0"],
        "local-lvm:vm-100-disk-0,size=8G"
    );
    pve.run.clock().advance(2);
    ok(&pve, &root, &r).await;
    assert_eq!(
        config(&pve, &root).await["scsi0"],
        "local-lvm:vm-100-disk-0,size=9G"
    );
}
