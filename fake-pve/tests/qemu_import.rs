//! Disks created with `import-from`: the new volume takes the source's size.

mod common;

use common::{Auth, Pve};

async fn task_of(pve: &Pve, auth: &Auth, r: &common::Resp) -> serde_json::Value {
    let upid = r.data().as_str().expect("a UPID").to_string();
    let status = pve.task_status(&upid, auth).await;
    let log = pve
        .get(
            &format!("/nodes/pve/tasks/{}/log?limit=0", common::enc(&upid)),
            auth,
        )
        .await
        .data();
    serde_json::json!({"status": status, "log": log})
}

#[tokio::test]
async fn import_from_an_existing_volume() {
    let pve = common::start().await;
    let root = pve.root().await;
    let r = pve
        .post("/nodes/pve/qemu", &root, "vmid=100&scsi0=local-lvm%3A4")
        .await;
    assert_eq!(task_of(&pve, &root, &r).await["status"]["exitstatus"], "OK");
    let r = pve
        .post(
            "/nodes/pve/qemu",
            &root,
            "vmid=101&scsi0=local-lvm%3A0%2Cimport-from%3Dlocal-lvm%3Avm-100-disk-0%2Cdiscard%3Don",
        )
        .await;
    let t = task_of(&pve, &root, &r).await;
    assert_eq!(t["status"]["exitstatus"], "OK", "{t}");
    let lines: Vec<&str> = t["log"]
        .as_array()
        .expect("log")
        .iter()
        .filter_map(|l| l["t"].as_str())
        .collect();
    assert!(
        lines.contains(&"transferred 4.0 GiB of 4.0 GiB (100.00%)"),
        "{lines:?}"
    );
    let config = pve.get("/nodes/pve/qemu/101/config", &root).await.data();
    assert_eq!(
        config["scsi0"],
        "local-lvm:vm-101-disk-0,discard=on,size=4G"
    );

    // The source must exist; the syntax is `<storage>:0`.
    let r = pve
        .post(
            "/nodes/pve/qemu",
            &root,
            "vmid=102&scsi0=local-lvm%3A0%2Cimport-from%3Dlocal-lvm%3Avm-999-disk-0",
        )
        .await;
    let t = task_of(&pve, &root, &r).await;
    let exit = t["status"]["exitstatus"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        exit.contains("cannot import from 'local-lvm:vm-999-disk-0' - could not get size of local-lvm:vm-999-disk-0"),
        "{t}"
    );
    pve.post(
        "/nodes/pve/qemu",
        &root,
        "vmid=103&scsi0=local-lvm%3A4%2Cimport-from%3Dlocal-lvm%3Avm-100-disk-0",
    )
    .await
    .assert_param_error(
        "scsi0",
        "'import-from' requires special syntax - use <storage ID>:0,import-from=<source>",
    );
}
