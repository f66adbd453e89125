//! Whole worlds: `GET/PUT /_fake/state` round trips, a state document as
//! a scenario (`--seed`, `POST /_fake/seed`), and checkpoints through the
//! control API and the library.

mod common;

use common::{Auth, Pve, builder, control, start_with};
use fake_pve::{PveVersion, Scenario, StateError};
use reqwest::Method;
use serde_json::{Value, json};

const SCENARIO: &str = "\
cluster: lab
nodes:
  - { name: pve1 }
  - { name: pve2 }
users:
  - userid: alice@pve
    password: secret12
    tokens:
      - { tokenid: ci, secret: 5b7f3c1e-8a2d-4e6f-9b1c-0d2e3f4a5b6c, privsep: false }
acl:
  - { path: /vms, roles: [PVEVMAdmin], users: [alice@pve] }
vms:
  - vmid: 100
    node: pve1
    name: web
    status: running
    config: { agent: 1, net0: 'virtio=BC:24:11:00:00:01,bridge=vmbr0', scsi0: 'local-lvm:vm-100-disk-0,size=8G' }
    snapshots:
      clean: { snaptime: 1790000000, description: before }
faults:
  - { method: GET, path: /nodes/pve2/status, status: 503, message: injected }
";

async fn start() -> Pve {
    let s = Scenario::parse(SCENARIO, "world.yaml").expect("scenario");
    start_with(builder().scenario(s)).await
}

async fn state(pve: &Pve, root: &Auth) -> Value {
    control(pve, root, Method::GET, "/_fake/state", None)
        .await
        .data()
}

/// Changes of every kind beyond the scenario: a VM with a disk, a pending
/// change, a snapshot, a network change, a task log, a guest's hostname.
async fn change_things(pve: &Pve, root: &Auth) {
    for (path, form) in [
        (
            "/nodes/pve1/qemu",
            "vmid=101&name=db&memory=1024&scsi0=local-lvm%3A4&net0=virtio%2Cbridge%3Dvmbr0",
        ),
        ("/nodes/pve1/qemu/100/snapshot", "snapname=second"),
        ("/nodes/pve1/network", "iface=vmbr7&type=bridge&autostart=1"),
    ] {
        let r = pve.post(path, root, form).await;
        assert_eq!(r.status, 200, "{path}: {r:?}");
    }
    let r = pve
        .put("/nodes/pve1/qemu/100/config", root, "memory=4096&cores=2")
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = control(
        pve,
        root,
        Method::PUT,
        "/_fake/guests/100",
        Some(json!({"hostname": "web-01"}).to_string()),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
}

#[tokio::test]
async fn a_state_document_round_trips_into_another_fake_pve() {
    let a = start().await;
    let root = a.root().await;
    change_things(&a, &root).await;
    let doc = state(&a, &root).await;
    assert_eq!(doc["format"], "fake-pve-state");
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["pve"], "9.2");
    assert!(doc["cluster"]["vms"]["101"].is_object(), "{doc}");
    let text = doc.to_string();

    // PUT into a fresh fake-pve (same clock): the same document comes back.
    let b = common::start().await;
    let broot = b.root().await;
    let r = control(&b, &broot, Method::PUT, "/_fake/state", Some(text.clone())).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.data()["vms"], 2);
    assert_eq!(state(&b, &broot).await, doc);

    // And the world answers as before: configs, snapshots, pending
    // network changes, injected faults, the token of the saved world.
    for p in [
        "/nodes/pve1/qemu/100/config",
        "/nodes/pve1/qemu/100/snapshot",
        "/nodes/pve1/qemu/101/config",
        "/nodes/pve1/network",
        "/nodes/pve1/storage/local-lvm/content",
    ] {
        assert_eq!(
            b.get(p, &broot).await.data(),
            a.get(p, &root).await.data(),
            "{p}"
        );
    }
    b.get("/nodes/pve2/status", &broot)
        .await
        .assert_error(503, "injected\n");
    let token = Auth::Token("PVEAPIToken=alice@pve!ci=5b7f3c1e-8a2d-4e6f-9b1c-0d2e3f4a5b6c".into());
    assert_eq!(
        b.get("/nodes/pve1/qemu/101/status/current", &token)
            .await
            .status,
        200
    );

    // As a scenario (what --seed reads): the same world again.
    let s = Scenario::parse(&text, "saved.json").expect("a state document is a scenario");
    let c = start_with(builder().scenario(s)).await;
    let croot = c.root().await;
    assert_eq!(state(&c, &croot).await, doc);
    // ... and POST /_fake/reset returns to it.
    c.post("/nodes/pve1/qemu/101/status/start", &croot, "")
        .await
        .data();
    control(&c, &croot, Method::POST, "/_fake/reset", None)
        .await
        .data();
    assert_eq!(state(&c, &croot).await["cluster"], doc["cluster"]);
}

#[tokio::test]
async fn bad_state_documents_leave_the_world_as_it_was() {
    let pve = start().await;
    let root = pve.root().await;
    let before = state(&pve, &root).await;
    let put = |body: String| {
        let (pve, root) = (&pve, root.clone());
        async move { control(pve, &root, Method::PUT, "/_fake/state", Some(body)).await }
    };
    put("{\"format\": \"other\"}".into())
        .await
        .assert_param_error(
            "state",
            "format 'other' is not a fake-pve state document ('fake-pve-state')",
        );
    let mut future = before.clone();
    future["version"] = json!(2);
    put(future.to_string()).await.assert_param_error(
        "state",
        "state version 2 is not supported (this fake-pve reads version 1)",
    );
    put(
        "{\"format\": \"fake-pve-state\", \"version\": 1, \"pve\": \"9.1\", \"cluster\": 5}".into(),
    )
    .await
    .assert_error(400, "Parameter verification failed.\n");

    // A world of another release is refused.
    let old = start_with(common::builder().pve_version(PveVersion::V8_4)).await;
    let oroot = old.root().await;
    let doc8 = state(&old, &oroot).await;
    put(doc8.to_string()).await.assert_param_error(
        "state",
        "the state is of PVE 8.4, but this fake-pve impersonates PVE 9.2",
    );
    let e = Scenario::parse(&doc8.to_string(), "old.json").expect("parses");
    let err = common::builder()
        .scenario(e)
        .start()
        .await
        .expect_err("another release");
    assert!(
        err.to_string()
            .contains("the state is of PVE 8.4, but this fake-pve impersonates PVE 9.2"),
        "{err}"
    );
    assert_eq!(state(&pve, &root).await, before);
}

#[tokio::test]
async fn checkpoints_save_and_restore_whole_worlds() {
    let pve = start().await;
    let root = pve.root().await;
    let base = state(&pve, &root).await;
    let r = control(
        &pve,
        &root,
        Method::POST,
        "/_fake/checkpoints",
        Some("name=base".into()),
    )
    .await;
    assert_eq!(r.data(), "base");

    change_things(&pve, &root).await;
    let changed = state(&pve, &root).await;
    assert_ne!(changed["cluster"], base["cluster"]);
    control(
        &pve,
        &root,
        Method::POST,
        "/_fake/checkpoints",
        Some("name=changed".into()),
    )
    .await
    .data();
    let list = control(&pve, &root, Method::GET, "/_fake/checkpoints", None)
        .await
        .data();
    assert_eq!(list[0]["name"], "base");
    assert_eq!(list[0]["vms"], 1);
    assert_eq!(list[1]["name"], "changed");
    assert_eq!(list[1]["vms"], 2);

    // Back to the start: VM 101 is gone, and the ticket still works.
    let r = control(
        &pve,
        &root,
        Method::POST,
        "/_fake/checkpoints/base/restore",
        None,
    )
    .await;
    assert_eq!(r.data()["vms"], 1);
    assert_eq!(state(&pve, &root).await, base);
    pve.get("/nodes/pve1/qemu/101/config", &root)
        .await
        .assert_error(
            500,
            "Configuration file 'nodes/pve1/qemu-server/101.conf' does not exist\n",
        );
    // ... and forward again.
    control(
        &pve,
        &root,
        Method::POST,
        "/_fake/checkpoints/changed/restore",
        None,
    )
    .await
    .data();
    assert_eq!(state(&pve, &root).await["cluster"], changed["cluster"]);

    // Refusals.
    control(
        &pve,
        &root,
        Method::POST,
        "/_fake/checkpoints/nope/restore",
        None,
    )
    .await
    .assert_error(500, "checkpoint 'nope' does not exist\n");
    control(
        &pve,
        &root,
        Method::POST,
        "/_fake/checkpoints",
        Some("name=-x".into()),
    )
    .await
    .assert_param_error("name", "invalid checkpoint name '-x'");
    control(&pve, &root, Method::POST, "/_fake/checkpoints", None)
        .await
        .assert_param_error("name", "property is missing and it is not optional");
    control(&pve, &root, Method::DELETE, "/_fake/checkpoints/base", None)
        .await
        .data();
    control(&pve, &root, Method::DELETE, "/_fake/checkpoints/base", None)
        .await
        .assert_error(500, "checkpoint 'base' does not exist\n");
    let alice = pve.login_as("alice@pve", "secret12").await;
    control(&pve, &alice, Method::GET, "/_fake/checkpoints", None)
        .await
        .assert_error(403, "Permission check failed (/_fake, root@pam)\n");
}

#[tokio::test]
async fn the_library_seeds_once_and_restores_per_test() {
    let pve = start().await;
    let root = pve.root().await;
    pve.run.checkpoint("seeded").expect("checkpoint");
    for vmid in [300, 301] {
        pve.post("/nodes/pve1/qemu", &root, &format!("vmid={vmid}"))
            .await
            .data();
        let vms = pve.get("/nodes/pve1/qemu", &root).await.data();
        assert_eq!(
            vms.as_array().map(Vec::len),
            Some(2),
            "only this test's VM: {vms}"
        );
        pve.run.restore("seeded").expect("restore");
    }
    let e = pve.run.restore("other").expect_err("no such checkpoint");
    assert_eq!(e, StateError::NoSuchCheckpoint("other".into()));
    assert_eq!(e.to_string(), "checkpoint 'other' does not exist");
    let e = pve.run.checkpoint("a/b").expect_err("a bad name");
    assert_eq!(e.to_string(), "invalid checkpoint name 'a/b'");
}

#[tokio::test]
async fn large_worlds_fit_through_the_control_api() {
    let mut yaml = String::from("vms:\n");
    for v in 0..1500 {
        yaml.push_str(&format!(
            "  - {{ vmid: {}, name: vm-{v}, config: {{ scsi0: 'local-lvm:vm-{}-disk-0,size=8G', net0: 'virtio=BC:24:11:00:{:02X}:{:02X},bridge=vmbr0' }} }}\n",
            1000 + v,
            1000 + v,
            v / 256,
            v % 256
        ));
    }
    let s = Scenario::parse(&yaml, "big.yaml").expect("scenario");
    let a = start_with(builder().scenario(s)).await;
    let root = a.root().await;
    let doc = state(&a, &root).await;
    let text = doc.to_string();
    assert!(text.len() > 512 * 1024, "{} bytes", text.len());
    let b = common::start().await;
    let broot = b.root().await;
    let r = control(&b, &broot, Method::PUT, "/_fake/state", Some(text)).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.data()["vms"], 1500);
    assert_eq!(state(&b, &broot).await, doc);
    // The API keeps PVE's limit.
    let big = format!("description={}", "x".repeat(600 * 1024));
    let r = b.put("/nodes/pve/qemu/1000/config", &broot, &big).await;
    assert_eq!(r.status, 501);
}
