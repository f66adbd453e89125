//! The standalone loop's work queue: many machines against an in-process
//! fake-pve whose tasks take a little time (the system clock). Each
//! machine's status is written when its own reconcile ends, the table
//! and the machine count are there from the first read of the directory,
//! and an edit made while the others still run is applied before most
//! of them are done.
#![allow(missing_docs, clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{SECRET, TOKEN, TempDir, operator};
use fake_pve::{Clock, FakePve, Latency, Running, Scenario};
use pve_operator::standalone::{read_statuses, status_table};
use pve_operator::types::{MachineStatus, Phase};
use pve_operator::{Options, Standalone};

const MACHINES: usize = 200;

const SCENARIO: &str = r"
users:
  - userid: root@pam
    tokens:
      - { tokenid: automation, secret: 0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60, privsep: false }
";

async fn slow_pve() -> Running {
    pve_taking(40).await
}

/// A fake-pve whose every task (create, start, config) takes `ms` of
/// real time.
async fn pve_taking(ms: u64) -> Running {
    let mut latency = Latency::instant();
    latency.default_ms = ms;
    FakePve::builder()
        .listen("127.0.0.1:0".parse().unwrap())
        .auth_failure_delay(Duration::ZERO)
        .clock(Clock::system())
        .latency(latency)
        .scenario(Scenario::parse(SCENARIO, "queue.yaml").unwrap())
        .start()
        .await
        .unwrap()
}

fn machine(name: &str, cores: u32) -> String {
    format!(
        "apiVersion: pve.fake-pve.io/v1alpha1
kind: Machine
metadata: {{ name: {name} }}
spec:
  cluster: lab
  cpu: {{ cores: {cores} }}
  memory: 128Mi
  disks: [{{ size: 1G }}]
  networks: [{{ bridge: vmbr0 }}]
"
    )
}

fn write_cluster(dir: &Path, pve: &Running) {
    std::fs::write(dir.join("ca.pem"), pve.cert_pem().unwrap()).unwrap();
    std::fs::write(
        dir.join("cluster.yaml"),
        format!(
            "apiVersion: pve.fake-pve.io/v1alpha1
kind: ProxmoxCluster
metadata: {{ name: lab }}
spec:
  endpoint: {}
  caCertificate: {{ file: ca.pem }}
  credentials:
    tokenID: '{TOKEN}'
    tokenSecret: {{ secretRef: {{ name: pve-token, key: secret }} }}
---
apiVersion: v1
kind: Secret
metadata: {{ name: pve-token }}
stringData: {{ secret: {SECRET} }}
",
            pve.url()
        ),
    )
    .unwrap();
}

/// The machines' statuses as the status files say, by name.
fn statuses(dir: &Path) -> Vec<(String, MachineStatus)> {
    read_statuses(dir)
        .into_iter()
        .filter(|(e, _)| e.kind == "Machine")
        .map(|(e, _)| (e.name, serde_json::from_value(e.status).unwrap_or_default()))
        .collect()
}

fn running(st: &[(String, MachineStatus)]) -> usize {
    st.iter().filter(|(_, s)| s.phase == Phase::Running).count()
}

async fn cores_of(pve: &Running, http: &reqwest::Client, vmid: u32) -> u64 {
    let v: serde_json::Value = http
        .get(format!(
            "{}/api2/json/nodes/pve/qemu/{vmid}/config",
            pve.url()
        ))
        .header("Authorization", format!("PVEAPIToken={TOKEN}={SECRET}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    v["data"]["cores"].as_u64().unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_machine_is_reconciled_on_its_own_and_edits_go_ahead_of_the_backlog() {
    let pve = slow_pve().await;
    let dir = TempDir::new("queue");
    write_cluster(&dir, &pve);
    for i in 0..MACHINES {
        std::fs::write(
            dir.join(format!("m{i:03}.yaml")),
            machine(&format!("m{i:03}"), 1),
        )
        .unwrap();
    }
    let mut opts = Options::new(&*dir);
    opts.poll = Duration::from_millis(50);
    opts.max_concurrent = 10;
    // Machines PVE still works on are looked at again soon.
    opts.backoff.base = Duration::from_millis(50);
    let op = operator();
    let metrics = op.metrics.clone();
    let mut sa = Standalone::new(opts, op);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let runner = tokio::spawn(async move {
        sa.run(async {
            let _ = stopped.await;
        })
        .await;
    });
    let http = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);

    // From the first read: every machine has a status file, a row in the
    // table and a count in the metrics, long before they are all made.
    loop {
        assert!(Instant::now() < deadline, "no status file appeared");
        let st = statuses(&dir);
        if st.len() == MACHINES {
            assert!(
                running(&st) < MACHINES / 2,
                "the statuses appeared only when most machines were done"
            );
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let table = status_table(&dir);
    assert_eq!(
        table.lines().filter(|l| l.starts_with('m')).count(),
        MACHINES
    );
    let counted: u64 = metrics
        .render()
        .lines()
        .filter(|l| l.starts_with("proxmox_operator_machines_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum();
    assert_eq!(counted, MACHINES as u64, "{}", metrics.render());

    // The first machine done is written while most still run.
    let (first, vmid) = loop {
        assert!(
            Instant::now() < deadline,
            "no machine was made: {}",
            std::fs::read_to_string(dir.join("m000.status.yaml")).unwrap_or_default()
        );
        let st = statuses(&dir);
        if let Some((name, s)) = st.iter().find(|(_, s)| s.phase == Phase::Running) {
            let done = running(&st);
            assert!(
                done < MACHINES / 2,
                "the first status was written when {done} of {MACHINES} machines were done"
            );
            break (name.clone(), s.vmid.unwrap());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };

    // An edit made now is applied while most of the others still wait.
    std::fs::write(dir.join(format!("{first}.yaml")), machine(&first, 3)).unwrap();
    loop {
        assert!(Instant::now() < deadline, "the edit was not applied");
        if cores_of(&pve, &http, vmid).await == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let done = running(&statuses(&dir));
    assert!(
        done < MACHINES / 2,
        "the edit was applied only when {done} of {MACHINES} machines were done"
    );

    // Stopping drops the reconciles still running, promptly.
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), runner)
        .await
        .unwrap()
        .unwrap();
    // No machine was made twice.
    let vms: serde_json::Value = http
        .get(format!("{}/api2/json/nodes/pve/qemu", pve.url()))
        .header("Authorization", format!("PVEAPIToken={TOKEN}={SECRET}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut names: Vec<&str> = vms["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    let made = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), made, "a machine was made twice");
    assert!(made >= running(&statuses(&dir)));
}

/// A machine's reconcile of several steps (create, start) writes its
/// status file after each: the VMID and the step done appear while the
/// VM is still being made, before the reconcile ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_machine_s_status_is_written_after_each_step() {
    let pve = pve_taking(400).await;
    let dir = TempDir::new("steps");
    write_cluster(&dir, &pve);
    std::fs::write(dir.join("web.yaml"), machine("web", 1)).unwrap();
    let mut opts = Options::new(&*dir);
    opts.poll = Duration::from_millis(50);
    let mut sa = Standalone::new(opts, operator());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let runner = tokio::spawn(async move {
        sa.run(async {
            let _ = stopped.await;
        })
        .await;
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen: Vec<(Phase, Option<u32>, String)> = Vec::new();
    loop {
        assert!(Instant::now() < deadline, "not running in time: {seen:?}");
        if let Some((_, st)) = statuses(&dir).into_iter().find(|(n, _)| n == "web") {
            let ready = st
                .conditions
                .iter()
                .find(|c| c.kind == "Ready")
                .map(|c| c.message.clone())
                .unwrap_or_default();
            let now = (st.phase, st.vmid, ready);
            if seen.last() != Some(&now) {
                seen.push(now);
            }
            if st.phase == Phase::Running {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), runner)
        .await
        .unwrap()
        .unwrap();
    let vmid = seen.last().and_then(|s| s.1).expect("a VMID");
    assert!(
        seen.iter().any(|(phase, v, msg)| *phase != Phase::Running
            && *v == Some(vmid)
            && msg == &format!("step 1: create of VM {vmid} done, reconciling goes on")),
        "the VM made was not shown before the reconcile ended: {seen:?}"
    );
}
