//! `--data-dir`: the world survives a restart (a clean one, and a crash
//! at any moment, replayed from the journal), damaged journals are
//! handled, a second process is refused, and a journal that cannot be
//! written refuses the request without changing anything.

mod common;

use std::path::{Path, PathBuf};

use common::{Auth, Pve, builder, control, start_with};
use fake_pve::Scenario;
use reqwest::Method;
use serde_json::{Value, json};

const SCENARIO: &str = "\
nodes:
  - { name: pve }
users:
  - { userid: alice@pve, password: secret12 }
vms:
  - vmid: 100
    name: web
    status: running
    config: { agent: 1, scsi0: 'local-lvm:vm-100-disk-0,size=8G', net0: 'virtio=BC:24:11:00:00:01,bridge=vmbr0' }
";

/// A new empty directory of its own (removed by the test when done).
fn temp_dir(name: &str) -> PathBuf {
    tempfile::Builder::new()
        .prefix(&format!("fake-pve-durable-{name}-"))
        .tempdir()
        .expect("a temporary directory")
        .keep()
}

async fn start_in(dir: &Path) -> Pve {
    let s = Scenario::parse(SCENARIO, "durable.yaml").expect("scenario");
    start_with(builder().scenario(s).data_dir(dir)).await
}

async fn state(pve: &Pve, root: &Auth) -> Value {
    let mut s = control(pve, root, Method::GET, "/_fake/state", None)
        .await
        .data();
    // The wall-clock part of the clock is not part of the world.
    s["clock"] = Value::Null;
    s
}

/// Changes of every kind: VMs with disks, pending changes, snapshots,
/// tasks, network changes, users, tokens, ACLs, guest models, fault rules,
/// the latency profile, checkpoints and the clock.
async fn change_everything(pve: &Pve, root: &Auth) {
    let posts = [
        (
            "/nodes/pve/qemu",
            "vmid=101&name=db&memory=1024&scsi0=local-lvm%3A4&net0=virtio%2Cbridge%3Dvmbr0",
        ),
        ("/nodes/pve/qemu/100/snapshot", "snapname=second"),
        ("/nodes/pve/network", "iface=vmbr7&type=bridge&autostart=1"),
        ("/access/users/alice@pve/token/ci", "privsep=0"),
        ("/nodes/pve/qemu/100/status/stop", ""),
    ];
    for (path, form) in posts {
        let r = pve.post(path, root, form).await;
        assert_eq!(r.status, 200, "{path}: {r:?}");
    }
    for (path, form) in [
        ("/nodes/pve/qemu/101/config", "memory=4096&cores=2"),
        (
            "/access/acl",
            "path=/vms/101&roles=PVEVMUser&users=alice@pve",
        ),
    ] {
        let r = pve.put(path, root, form).await;
        assert_eq!(r.status, 200, "{path}: {r:?}");
    }
    // Reads are not journaled: they must leave no trace in the world.
    for path in [
        "/cluster/resources",
        "/cluster/nextid",
        "/cluster/status",
        "/nodes/pve/status",
        "/nodes/pve/network",
        "/nodes/pve/storage",
        "/nodes/pve/storage/local-lvm/content",
        "/nodes/pve/tasks",
        "/nodes/pve/qemu/100/agent/get-osinfo",
        "/nodes/pve/qemu/101/agent/network-get-interfaces",
        "/nodes/pve/qemu/100/rrddata?timeframe=hour",
        "/nodes/pve/qemu/101/pending",
        "/nodes/pve/qemu/100/snapshot",
        "/_fake/guests/101",
        "/access/users",
    ] {
        let _ = pve.get(path, root).await;
    }
    // The node reboots: offline, back a minute later (the clock moves
    // five seconds below).
    let r = pve.post("/nodes/pve/status", root, "command=reboot").await;
    assert_eq!(r.status, 200, "{r:?}");
    for (method, path, body) in [
        (
            Method::PUT,
            "/_fake/guests/100",
            json!({"hostname": "web-01"}).to_string(),
        ),
        (
            Method::POST,
            "/_fake/faults",
            json!({"method": "GET", "path": "/nodes/pve/ceph/cmd-safety", "status": 503, "message": "x"})
                .to_string(),
        ),
        (
            Method::PUT,
            "/_fake/latency",
            json!({"profile": "documented"}).to_string(),
        ),
        (Method::POST, "/_fake/checkpoints", "name=later".to_string()),
        (Method::POST, "/_fake/clock", "advance=5".to_string()),
    ] {
        let r = control(pve, root, method, path, Some(body)).await;
        assert_eq!(r.status, 200, "{path}: {r:?}");
    }
}

/// Copies a data directory as it is on disk now: what a crash at this
/// moment would leave.
fn crash_copy(from: &Path, name: &str) -> PathBuf {
    let to = temp_dir(name);
    copy_tree(from, &to);
    to
}

/// Copies the files and directories (`pki/`) of `from` into `to`, all
/// but the lock.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir").flatten() {
        let n = e.file_name();
        if e.path().is_dir() {
            copy_tree(&e.path(), &to.join(&n));
        } else if n != "lock" {
            std::fs::copy(e.path(), to.join(&n)).expect("copy");
        }
    }
}

/// fake-pve on `dir` whose `qmstart` tasks take `ms` (emulated).
async fn start_slow(dir: &Path, ms: u64) -> Pve {
    let mut latency = fake_pve::latency::Latency::instant();
    latency.set_task_ms("qmstart", ms);
    let s = Scenario::parse(SCENARIO, "durable.yaml").expect("scenario");
    start_with(builder().scenario(s).latency(latency).data_dir(dir)).await
}

/// Creates VM `vmid` and starts it; answers the start's UPID.
async fn create_and_start(pve: &Pve, root: &Auth, vmid: u32) -> String {
    let r = pve
        .post("/nodes/pve/qemu", root, &format!("vmid={vmid}"))
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = pve
        .post(&format!("/nodes/pve/qemu/{vmid}/status/start"), root, "")
        .await;
    r.data().as_str().expect("upid").to_string()
}

/// What a crash now would leave, started again: copies the directory,
/// stops the running fake-pve and starts one on the copy. Answers it and
/// the copy's path.
async fn crash_and_restart(pve: Pve, dir: &Path, name: &str) -> (Pve, PathBuf) {
    let copy = crash_copy(dir, name);
    pve.run.shutdown().await;
    (start_in(&copy).await, copy)
}

async fn finish(pve: Pve, dirs: &[&Path]) {
    pve.run.shutdown().await;
    for d in dirs {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[tokio::test]
async fn every_kind_of_state_survives_a_clean_restart() {
    let dir = temp_dir("clean");
    let pve = start_in(&dir).await;
    let root = pve.root().await;
    change_everything(&pve, &root).await;
    let before = state(&pve, &root).await;
    let fingerprint = pve.run.fingerprint().map(str::to_string);
    let ca = pve.run.cert_pem().map(str::to_string);
    pve.run.shutdown().await;

    let pve = start_in(&dir).await;
    // So is the cluster CA, which clients trust.
    assert_eq!(pve.run.cert_pem().map(str::to_string), ca);
    // The ticket of the first run is still valid: the keys are kept.
    assert_eq!(state(&pve, &root).await, before);
    assert_eq!(pve.run.fingerprint().map(str::to_string), fingerprint);
    let list = control(&pve, &root, Method::GET, "/_fake/checkpoints", None)
        .await
        .data();
    assert_eq!(list[0]["name"], "later");
    pve.run.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_crash_at_any_moment_is_replayed_from_the_journal() {
    let dir = temp_dir("crash");
    let pve = start_in(&dir).await;
    let root = pve.root().await;
    change_everything(&pve, &root).await;
    let before = state(&pve, &root).await;
    // What the disk holds now: the start's snapshot and a journal of
    // every request since (nothing was compacted).
    assert!(
        std::fs::metadata(dir.join("journal.log"))
            .expect("journal")
            .len()
            > 0
    );
    let (again, copy) = crash_and_restart(pve, &dir, "crash-copy").await;
    assert_eq!(state(&again, &root).await, before);
    finish(again, &[&dir, &copy]).await;
}

#[tokio::test]
async fn snapshots_compact_the_journal_as_it_grows() {
    let dir = temp_dir("compact");
    let pve = start_in(&dir).await;
    pve.run
        .state()
        .store()
        .expect("store")
        .set_snapshot_every(3);
    let root = pve.root().await;
    change_everything(&pve, &root).await;
    let before = state(&pve, &root).await;
    let (again, copy) = crash_and_restart(pve, &dir, "compact-copy").await;
    assert_eq!(state(&again, &root).await, before);
    finish(again, &[&dir, &copy]).await;
}

#[tokio::test]
async fn a_record_cut_short_by_a_crash_is_dropped() {
    let dir = temp_dir("torn");
    let pve = start_in(&dir).await;
    let root = pve.root().await;
    let r = pve.post("/nodes/pve/qemu", &root, "vmid=200").await;
    assert_eq!(r.status, 200);
    let with_200 = state(&pve, &root).await;
    let r = pve.post("/nodes/pve/qemu", &root, "vmid=201").await;
    assert_eq!(r.status, 200);
    let copy = crash_copy(&dir, "torn-copy");
    pve.run.shutdown().await;

    // Cut the last record (VM 201's creation) in the middle.
    let journal = copy.join("journal.log");
    let len = std::fs::metadata(&journal).expect("journal").len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&journal)
        .expect("open");
    f.set_len(len - 10).expect("truncate");
    drop(f);
    let again = start_in(&copy).await;
    assert_eq!(state(&again, &root).await, with_200);
    // The journal goes on from there.
    let r = again.post("/nodes/pve/qemu", &root, "vmid=202").await;
    assert_eq!(r.status, 200, "{r:?}");
    again.run.shutdown().await;
    for d in [dir, copy] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[tokio::test]
async fn damage_inside_the_journal_stops_the_start_with_file_and_offset() {
    let dir = temp_dir("damaged");
    let pve = start_in(&dir).await;
    let root = pve.root().await;
    for vmid in [200, 201] {
        let r = pve
            .post("/nodes/pve/qemu", &root, &format!("vmid={vmid}"))
            .await;
        assert_eq!(r.status, 200);
    }
    let copy = crash_copy(&dir, "damaged-copy");
    pve.run.shutdown().await;
    let journal = copy.join("journal.log");
    let mut bytes = std::fs::read(&journal).expect("read");
    bytes[12] ^= 0x55; // inside the first record's payload
    std::fs::write(&journal, &bytes).expect("write");
    let s = Scenario::parse(SCENARIO, "durable.yaml").expect("scenario");
    let err = builder()
        .scenario(s)
        .data_dir(&copy)
        .start()
        .await
        .expect_err("damaged journal");
    assert_eq!(
        err.to_string(),
        format!(
            "{}: corrupt at offset 0: checksum mismatch",
            journal.display()
        )
    );
    // Nothing was thrown away.
    assert_eq!(std::fs::read(&journal).expect("read"), bytes);
    for d in [dir, copy] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[tokio::test]
async fn a_second_process_on_the_same_directory_is_refused() {
    let dir = temp_dir("locked");
    let pve = start_in(&dir).await;
    let s = Scenario::parse(SCENARIO, "durable.yaml").expect("scenario");
    let err = builder()
        .scenario(s)
        .data_dir(&dir)
        .start()
        .await
        .expect_err("locked");
    assert_eq!(
        err.to_string(),
        format!(
            "data directory {} is in use by another fake-pve",
            dir.display()
        )
    );
    pve.run.shutdown().await;
    // Once the first has stopped, the directory is free.
    let again = start_in(&dir).await;
    again.run.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_full_disk_refuses_the_request_and_changes_nothing() {
    let dir = temp_dir("full");
    let pve = start_in(&dir).await;
    let root = pve.root().await;
    let before = state(&pve, &root).await;
    let store = pve.run.state().store().expect("store").clone();
    store.simulate_full_disk(true);
    let r = pve.post("/nodes/pve/qemu", &root, "vmid=300").await;
    assert_eq!(r.status, 500, "{r:?}");
    let msg = r.json()["message"].as_str().unwrap_or_default().to_string();
    assert!(msg.starts_with("unable to write the journal - "), "{msg}");
    store.simulate_full_disk(false);
    assert_eq!(state(&pve, &root).await, before);
    let r = pve.post("/nodes/pve/qemu", &root, "vmid=300").await;
    assert_eq!(r.status, 200, "{r:?}");
    pve.run.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn tasks_running_at_a_crash_end_as_after_a_node_crash() {
    let dir = temp_dir("tasks");
    let pve = start_slow(&dir, 60_000).await;
    let root = pve.root().await;
    let upid = create_and_start(&pve, &root, 400).await;
    assert_eq!(pve.task_status(&upid, &root).await["status"], "running");
    let (again, copy) = crash_and_restart(pve, &dir, "tasks-copy").await;
    let st = again.task_status(&upid, &root).await;
    assert_eq!(st["status"], "stopped");
    assert_eq!(st["exitstatus"], "unexpected status");
    let cur = again
        .get("/nodes/pve/qemu/400/status/current", &root)
        .await
        .data();
    assert_eq!(cur["status"], "stopped");
    finish(again, &[&dir, &copy]).await;
}

#[tokio::test]
async fn logins_are_not_journaled_and_their_passwords_stay_out() {
    let dir = temp_dir("logins");
    let pve = start_in(&dir).await;
    let root = pve.root().await;
    let _alice = pve.login_as("alice@pve", "secret12").await;
    let r = pve.post("/nodes/pve/qemu", &root, "vmid=500").await;
    assert_eq!(r.status, 200);
    let journal = std::fs::read(dir.join("journal.log")).expect("journal");
    let text = String::from_utf8_lossy(&journal);
    // The write is journaled as parsed: its path and its parameters.
    assert!(text.contains(r#""path":"/nodes/pve/qemu""#), "{text}");
    assert!(text.contains(r#""params":{"vmid":"500"}"#), "{text}");
    assert!(!text.contains("secret12"), "{text}");
    assert!(!text.contains("access/ticket"), "{text}");
    pve.run.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn tasks_that_ended_before_a_crash_stay_ended() {
    let dir = temp_dir("ended");
    let pve = start_slow(&dir, 10_000).await;
    let root = pve.root().await;
    let upid = create_and_start(&pve, &root, 410).await;
    // The (manual) clock moves past the task's end: it ends OK.
    let r = control(
        &pve,
        &root,
        Method::POST,
        "/_fake/clock",
        Some("advance=20".into()),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(pve.task_status(&upid, &root).await["exitstatus"], "OK");
    let (again, copy) = crash_and_restart(pve, &dir, "ended-copy").await;
    assert_eq!(again.task_status(&upid, &root).await["exitstatus"], "OK");
    let cur = again
        .get("/nodes/pve/qemu/410/status/current", &root)
        .await
        .data();
    assert_eq!(cur["status"], "running");
    finish(again, &[&dir, &copy]).await;
}
