//! End to end: the standalone operator against an in-process fake-pve
//! (manual clock, instant tasks), driven pass by pass.
#![allow(missing_docs, clippy::unwrap_used)]

mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::{SECRET, TOKEN, TempDir, fake, operator};
use fake_pve::{Clock, FakePve, Running};
use pve_operator::types::{MachineStatus, Phase};
use pve_operator::{Options, Standalone};
use serde_json::Value;

const SCENARIO: &str = r"
users:
  - userid: root@pam
    tokens:
      - { tokenid: automation, secret: 0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60, privsep: false }
vms:
  - { vmid: 100, node: pve, name: gateway, status: running }
  - { vmid: 9000, node: pve, name: ubuntu-tpl, config: { template: 1, scsi0: 'local-lvm:base-9000-disk-0,size=8G', cores: 1, memory: 1024 } }
";

struct Env {
    pve: Running,
    dir: TempDir,
    sa: Standalone,
    http: reqwest::Client,
}

fn options(dir: &std::path::Path) -> Options {
    let mut o = Options::new(dir);
    o.max_concurrent = 10;
    o
}

async fn env() -> Env {
    env_with(SCENARIO).await
}

/// A ProxmoxCluster manifest named `name` for `pve` (its CA in `ca-NAME.pem`).
fn cluster_manifest(dir: &std::path::Path, name: &str, pve: &Running) -> String {
    std::fs::write(dir.join(format!("ca-{name}.pem")), pve.cert_pem().unwrap()).unwrap();
    format!(
        "apiVersion: pve.fake-pve.io/v1alpha1
kind: ProxmoxCluster
metadata: {{ name: {name} }}
spec:
  endpoint: {}
  caCertificate: {{ file: ca-{name}.pem }}
  credentials:
    tokenID: '{TOKEN}'
    tokenSecret: {{ secretRef: {{ name: pve-token, key: secret }} }}
",
        pve.url()
    )
}

async fn env_with(scenario: &str) -> Env {
    let pve = fake(scenario).await;
    let dir = TempDir::new("e2e");
    let cluster = format!(
        "{}---
apiVersion: v1
kind: Secret
metadata: {{ name: pve-token }}
stringData: {{ secret: {SECRET} }}
",
        cluster_manifest(&dir, "lab", &pve)
    );
    std::fs::write(dir.join("cluster.yaml"), cluster).unwrap();
    let sa = Standalone::new(options(&dir), operator());
    let http = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .unwrap();
    Env { pve, dir, sa, http }
}

fn machine(name: &str, extra: &str) -> String {
    format!(
        "apiVersion: pve.fake-pve.io/v1alpha1
kind: Machine
metadata: {{ name: {name} }}
spec:
  cluster: lab
  cpu: {{ cores: 2 }}
  memory: 512Mi
  disks: [{{ size: 4G }}]
  networks: [{{ bridge: vmbr0, vlan: 100 }}]
{}",
        extra
            .lines()
            .map(|l| format!("  {l}\n"))
            .collect::<String>()
    )
}

/// A manifest with the standalone delete annotation on its first document.
fn deleted(doc: &str) -> String {
    let at = doc.find("metadata: { name: ").unwrap();
    let end = at + doc[at..].find(" }").unwrap();
    format!(
        "{}, annotations: {{ pve.fake-pve.io/delete: 'true' }}{}",
        &doc[..end],
        &doc[end..]
    )
}

impl Env {
    fn write(&self, file: &str, text: &str) {
        std::fs::write(self.dir.join(file), text).unwrap();
    }

    fn remove(&self, file: &str) {
        std::fs::remove_file(self.dir.join(file)).unwrap();
    }

    fn status(&self, name: &str) -> MachineStatus {
        self.sa.machine_status(name).unwrap_or_default()
    }

    /// Passes until `done` holds; at most `max` passes.
    async fn converge(&mut self, max: usize, done: impl Fn(&Self) -> bool) {
        for _ in 0..max {
            self.sa.pass(true).await;
            if done(self) {
                return;
            }
        }
        panic!(
            "did not converge in {max} passes; statuses: {}",
            std::fs::read_dir(&self.dir)
                .unwrap()
                .filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().ends_with(".status.yaml"))
                .map(|e| std::fs::read_to_string(e.path()).unwrap())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }

    async fn running(&mut self, name: &str) -> MachineStatus {
        self.converge(8, |e| e.status(name).phase == Phase::Running)
            .await;
        self.status(name)
    }

    async fn call(&self, method: reqwest::Method, path: &str, form: &[(&str, &str)]) -> Value {
        let url = if path.starts_with("/_fake") {
            format!("{}{path}", self.pve.url())
        } else {
            format!("{}{path}", self.pve.api_url())
        };
        let mut rb = self
            .http
            .request(method, url)
            .header("Authorization", format!("PVEAPIToken={TOKEN}={SECRET}"));
        if !form.is_empty() {
            rb = rb.form(form);
        }
        let r = rb.send().await.unwrap();
        let status = r.status();
        let v: Value = r.json().await.unwrap_or(Value::Null);
        assert!(status.is_success(), "{path}: {status} {v}");
        v["data"].clone()
    }

    async fn get(&self, path: &str) -> Value {
        self.call(reqwest::Method::GET, path, &[]).await
    }

    async fn fault(&self, rule: Value) {
        let r = self
            .http
            .post(format!("{}/_fake/faults", self.pve.url()))
            .header("Authorization", format!("PVEAPIToken={TOKEN}={SECRET}"))
            .json(&rule)
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    }

    async fn clear_faults(&self) {
        self.call(reqwest::Method::DELETE, "/_fake/faults", &[])
            .await;
    }

    async fn config(&self, vmid: u32) -> Value {
        self.get(&format!("/nodes/pve/qemu/{vmid}/config")).await
    }

    /// VMs carrying the operator's mark for `name`.
    async fn owned(&self, name: &str) -> Vec<u32> {
        let mut out = Vec::new();
        for r in self
            .get("/cluster/resources?type=vm")
            .await
            .as_array()
            .unwrap()
        {
            let vmid = r["vmid"].as_u64().unwrap() as u32;
            let c = self.config(vmid).await;
            if c["description"]
                .as_str()
                .is_some_and(|d| d.trim() == format!("managed-by=pve-operator machine=lab/{name}"))
            {
                out.push(vmid);
            }
        }
        out
    }
}

fn cond(st: &MachineStatus, kind: &str) -> (String, String, String) {
    st.conditions
        .iter()
        .find(|c| c.kind == kind)
        .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
        .unwrap_or_default()
}

#[tokio::test]
async fn machine_lifecycle_create_update_power_drift_delete() {
    let mut e = env().await;
    e.write("web.yaml", &machine("web", "tags: [web]\ntenant: acme\n"));
    let st = e.running("web").await;
    assert_eq!(st.vmid, Some(10000), "lowest free operator VMID");
    assert_eq!(st.node.as_deref(), Some("pve"));
    assert_eq!(cond(&st, "Ready").0, "True");
    assert_eq!(cond(&st, "VMCreated").1, "CreationSucceeded");
    // Describe: the console PVE offers
    let console = st.console.clone().unwrap();
    assert_eq!(console.types, ["novnc"]);
    assert_eq!(
        console.url,
        format!(
            "{}/?console=kvm&novnc=1&resize=off&vmid=10000&vmname=web&node=pve&cmd=",
            e.pve.url()
        )
    );
    let c = e.config(10000).await;
    assert_eq!(c["cores"], 2);
    assert!(c["net0"].as_str().unwrap().contains("tag=100"), "{c}");
    let tags = c["tags"].as_str().unwrap();
    assert!(
        tags.contains("tenant_acme") && tags.contains("pve-operator"),
        "{c}"
    );
    assert_eq!(
        e.get("/nodes/pve/qemu/10000/status/current").await["status"],
        "running"
    );
    // the status file sits beside the manifest, the manifest is untouched
    let status_file = std::fs::read_to_string(e.dir.join("web.status.yaml")).unwrap();
    assert!(status_file.contains("phase: Running"), "{status_file}");
    assert!(
        std::fs::read_to_string(e.dir.join("web.yaml"))
            .unwrap()
            .starts_with("apiVersion")
    );
    let table = pve_operator::standalone::status_table(&e.dir);
    assert!(table.lines().nth(1).unwrap().starts_with("web"), "{table}");
    assert!(
        table.contains("Running") && table.contains("10000"),
        "{table}"
    );

    // memory increase: online (hot-plug)
    e.write("web.yaml", &machine("web", "").replace("512Mi", "1Gi"));
    e.converge(4, |e| cond(&e.status("web"), "Ready").0 == "True")
        .await;
    let c = e.config(10000).await;
    assert_eq!(c["memory"].to_string().trim_matches('"'), "1024");
    assert_eq!(
        e.get("/nodes/pve/qemu/10000/status/current").await["status"],
        "running"
    );

    // Configure is PUT .../config (update_vm), as documented; issue #16:
    // it was sent as POST
    let m = &e.sa.operator.metrics;
    assert!(m.api_requests("PUT", "/nodes/{node}/qemu/{vmid}/config") >= 1);
    assert_eq!(
        m.api_requests("POST", "/nodes/{node}/qemu/{vmid}/config"),
        0
    );

    // memory decrease while running: reported, not applied
    e.write("web.yaml", &machine("web", "").replace("512Mi", "256Mi"));
    e.sa.pass(true).await;
    let st = e.status("web");
    let (s, reason, msg) = cond(&st, "ResourcesAllocated");
    assert_eq!(
        (s.as_str(), reason.as_str()),
        ("False", "PowerCycleRequired"),
        "{msg}"
    );
    assert_eq!(
        msg,
        "takes effect after a power cycle: memory 1024 MiB -> 256 MiB"
    );
    // the status command shows it (issue #16: Ready is True, so it did not)
    let table = pve_operator::standalone::status_table(&e.dir);
    assert!(
        table.contains("PowerCycleRequired: takes effect after a power cycle"),
        "{table}"
    );
    assert_eq!(
        e.config(10000).await["memory"]
            .to_string()
            .trim_matches('"'),
        "1024"
    );

    // disk shrink: refused with a condition
    e.write("web.yaml", &machine("web", "").replace("4G", "2G"));
    e.sa.pass(true).await;
    let (_, reason, msg) = cond(&e.status("web"), "ResourcesAllocated");
    assert_eq!(reason, "DiskShrinkRefused");
    assert_eq!(msg, "scsi0 is 4G, shrinking to 2G is not supported");
    let table = pve_operator::standalone::status_table(&e.dir);
    assert!(table.contains("DiskShrinkRefused: scsi0 is 4G"), "{table}");

    // power off: the pending memory decrease applies while stopped
    e.write(
        "web.yaml",
        &machine("web", "powerState: Off\n").replace("512Mi", "256Mi"),
    );
    e.converge(4, |e| e.status("web").phase == Phase::Stopped)
        .await;
    e.sa.pass(true).await;
    assert_eq!(
        e.get("/nodes/pve/qemu/10000/status/current").await["status"],
        "stopped"
    );
    assert_eq!(
        e.config(10000).await["memory"]
            .to_string()
            .trim_matches('"'),
        "256"
    );

    // cpu increase on a stopped VM, then on again
    e.write(
        "web.yaml",
        &machine("web", "").replace("cores: 2", "cores: 4"),
    );
    e.running("web").await;
    assert_eq!(e.config(10000).await["cores"], 4);

    // drift: changed in PVE behind the operator's back, undone next pass
    e.call(
        reqwest::Method::PUT,
        "/nodes/pve/qemu/10000/config",
        &[
            ("net1", "e1000,bridge=vmbr0"),
            ("tags", "hacked"),
            ("description", "mine now"),
        ],
    )
    .await;
    e.call(
        reqwest::Method::POST,
        "/nodes/pve/qemu/10000/status/stop",
        &[],
    )
    .await;
    e.sa.pass(true).await;
    let c = e.config(10000).await;
    assert!(c.get("net1").is_none(), "extra NIC removed: {c}");
    assert!(c["tags"].as_str().unwrap().contains("pve-operator"), "{c}");
    assert_eq!(
        c["description"].as_str().unwrap().trim(),
        "managed-by=pve-operator machine=lab/web"
    );
    assert_eq!(
        e.get("/nodes/pve/qemu/10000/status/current").await["status"],
        "running"
    );
    assert_eq!(e.owned("web").await, vec![10000]);

    // delete: the annotation destroys the VM; removing the file then
    // removes the status file
    e.write("web.yaml", &deleted(&machine("web", "")));
    e.converge(4, |e| !e.sa.tracks("Machine", "web")).await;
    assert!(e.owned("web").await.is_empty());
    assert_eq!(cond(&e.status("web"), "Ready").1, "Deleted");
    e.remove("web.yaml");
    e.sa.pass(true).await;
    assert!(!e.dir.join("web.status.yaml").exists());
}

/// Issue #16: an edit that cannot be read (`cores: 2x`) left the VM to
/// be destroyed as if the Machine had been removed.
#[tokio::test]
async fn an_unreadable_edit_keeps_the_vm_and_reports_it() {
    let mut e = env().await;
    e.write("web.yaml", &machine("web", ""));
    let vmid = e.running("web").await.vmid.unwrap();
    e.write(
        "web.yaml",
        &machine("web", "").replace("cores: 2", "cores: 2x"),
    );
    for _ in 0..3 {
        e.sa.pass(true).await;
    }
    assert_eq!(e.owned("web").await, vec![vmid], "the VM is kept");
    assert!(e.sa.tracks("Machine", "web"));
    let st = e.status("web");
    let (ok, reason, msg) = cond(&st, "Ready");
    assert_eq!((ok.as_str(), reason.as_str()), ("False", "ManifestError"));
    assert!(
        msg.contains("web.yaml") && msg.contains("Machine/web"),
        "{msg}"
    );
    assert_eq!(st.vmid, Some(vmid));
    let table = pve_operator::standalone::status_table(&e.dir);
    assert!(table.contains("ManifestError"), "{table}");
    assert!(
        table.contains("error: ") && table.contains("web.yaml"),
        "{table}"
    );
    // fixed: followed again
    e.write(
        "web.yaml",
        &machine("web", "").replace("cores: 2", "cores: 3"),
    );
    e.converge(3, |e| cond(&e.status("web"), "Ready").0 == "True")
        .await;
    assert_eq!(e.config(vmid).await["cores"], 3);
}

/// Issue #16: unknown fields were dropped silently: vitistack's top-level
/// `spec.template` made a blank VM instead of a clone. `check` stopped at
/// the first unreadable file.
#[tokio::test]
async fn unknown_fields_are_refused_by_name_and_check_lists_every_error() {
    let mut e = env().await;
    e.write(
        "tpl.yaml",
        &machine("tpl", "template: { name: ubuntu-tpl }\n"),
    );
    e.write("typo.yaml", &machine("typo", "memroy: 2Gi\n"));
    e.sa.pass(true).await;
    e.sa.pass(true).await;
    assert!(e.owned("tpl").await.is_empty(), "no blank VM");
    assert!(e.owned("typo").await.is_empty());
    let table = pve_operator::standalone::status_table(&e.dir);
    assert!(table.contains("unknown field `template`"), "{table}");
    assert!(table.contains("unknown field `memroy`"), "{table}");
    let (found, errors) = pve_operator::standalone::check_dir(&e.dir).unwrap();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(found.len(), 2, "the cluster and its secret");
}

/// Issue #16: a YAML syntax error in a multi-document file did it to
/// every machine of the file.
#[tokio::test]
async fn a_syntax_error_keeps_every_vm_of_the_file() {
    let mut e = env().await;
    let docs = [machine("a", ""), machine("b", ""), machine("c", "")].join("---\n");
    e.write("fleet.yaml", &docs);
    e.converge(8, |e| {
        ["a", "b", "c"]
            .iter()
            .all(|m| e.status(m).phase == Phase::Running)
    })
    .await;
    let before: Vec<Vec<u32>> = vec![e.owned("a").await, e.owned("b").await, e.owned("c").await];
    e.write("fleet.yaml", &docs.replacen("cpu: {", "cpu: {{ [", 1));
    for _ in 0..3 {
        e.sa.pass(true).await;
    }
    let after: Vec<Vec<u32>> = vec![e.owned("a").await, e.owned("b").await, e.owned("c").await];
    assert_eq!(before, after);
    for m in ["a", "b", "c"] {
        assert_eq!(cond(&e.status(m), "Ready").1, "ManifestError", "{m}");
    }
}

/// Issue #16: `mv dir dir.x; sleep 3; mv dir.x dir` destroyed every VM and
/// made them again with new, empty disks.
#[tokio::test]
async fn a_vanished_directory_keeps_every_vm() {
    let mut e = env().await;
    e.write("a.yaml", &machine("a", ""));
    e.write("b.yaml", &machine("b", ""));
    e.converge(8, |e| {
        e.status("a").phase == Phase::Running && e.status("b").phase == Phase::Running
    })
    .await;
    let (a, b) = (e.owned("a").await, e.owned("b").await);
    let away = e.dir.with_extension("x");
    std::fs::rename(&e.dir, &away).unwrap();
    for _ in 0..3 {
        e.sa.pass(true).await;
    }
    assert!(e.sa.problem("Machine", "a").is_some());
    assert_eq!(cond(&e.status("a"), "Ready").1, "ManifestError");
    assert_eq!(
        (e.owned("a").await, e.owned("b").await),
        (a.clone(), b.clone())
    );
    assert!(!e.dir.exists(), "the directory is not made again");
    std::fs::rename(&away, &e.dir).unwrap();
    e.converge(3, |e| {
        e.sa.problem("Machine", "a").is_none()
            && cond(&e.status("a"), "Ready").0 == "True"
            && cond(&e.status("b"), "Ready").0 == "True"
    })
    .await;
    assert_eq!((e.owned("a").await, e.owned("b").await), (a, b));
}

/// A document that vanishes is not a deletion: the VM stays, the status
/// says why, and the annotation deletes it.
#[tokio::test]
async fn a_vanished_document_keeps_its_vm_until_deletion_is_asked() {
    let mut e = env().await;
    e.write("web.yaml", &machine("web", ""));
    let vmid = e.running("web").await.vmid.unwrap();
    e.remove("web.yaml");
    for _ in 0..3 {
        e.sa.pass(true).await;
    }
    assert_eq!(e.owned("web").await, vec![vmid]);
    let (_, reason, msg) = cond(&e.status("web"), "Ready");
    assert_eq!(reason, "ManifestError");
    assert!(msg.contains("pve.fake-pve.io/delete"), "{msg}");
    let table = pve_operator::standalone::status_table(&e.dir);
    assert!(table.contains("ManifestError"), "{table}");
    e.write("web.yaml", &deleted(&machine("web", "")));
    e.converge(3, |e| !e.sa.tracks("Machine", "web")).await;
    assert!(e.owned("web").await.is_empty());
}

#[tokio::test]
async fn orphan_policy_and_protection_keep_the_vm() {
    let mut e = env().await;
    e.write("keep.yaml", &machine("keep", "deletionPolicy: Orphan\n"));
    e.write("prot.yaml", &machine("prot", "protection: true\n"));
    e.converge(8, |e| {
        e.status("keep").phase == Phase::Running && e.status("prot").phase == Phase::Running
    })
    .await;
    let keep = e.status("keep").vmid.unwrap();
    let prot = e.status("prot").vmid.unwrap();
    e.write(
        "keep.yaml",
        &deleted(&machine("keep", "deletionPolicy: Orphan\n")),
    );
    e.write(
        "prot.yaml",
        &deleted(&machine("prot", "protection: true\n")),
    );
    e.sa.pass(true).await;
    e.sa.pass(true).await;
    assert!(!e.sa.tracks("Machine", "keep"), "orphaned: finalizer done");
    assert_eq!(e.owned("keep").await, vec![keep]);
    assert!(
        e.sa.tracks("Machine", "prot"),
        "protected: deletion blocked"
    );
    assert_eq!(e.owned("prot").await, vec![prot]);
    let (_, reason, _) = cond(&e.status("prot"), "Ready");
    assert_eq!(reason, "DeletionBlocked");
    // a deletion asked for goes on once the document is gone too
    e.remove("prot.yaml");
    e.sa.pass(true).await;
    assert_eq!(cond(&e.status("prot"), "Ready").1, "DeletionBlocked");
    assert!(e.sa.problem("Machine", "prot").is_none());
    // protection lifted in PVE: the deletion goes through
    e.call(
        reqwest::Method::PUT,
        &format!("/nodes/pve/qemu/{prot}/config"),
        &[("delete", "protection")],
    )
    .await;
    e.converge(3, |e| !e.sa.tracks("Machine", "prot")).await;
    assert!(e.owned("prot").await.is_empty());
}

/// The delete annotation and `protection: false` in one edit: the
/// protection the Machine asked for until then is lifted and the VM
/// deleted, without a second edit; with `protection: true` it stays.
#[tokio::test]
async fn delete_and_protection_false_in_one_edit_deletes() {
    let mut e = env().await;
    e.write("prot.yaml", &machine("prot", "protection: true\n"));
    let vmid = e.running("prot").await.vmid.unwrap();
    assert_eq!(e.config(vmid).await["protection"], 1);
    e.write(
        "prot.yaml",
        &deleted(&machine("prot", "protection: false\n")),
    );
    e.converge(3, |e| !e.sa.tracks("Machine", "prot")).await;
    assert!(e.owned("prot").await.is_empty());
}

#[tokio::test]
async fn validation_failures_create_nothing() {
    let mut e = env().await;
    e.write(
        "bad.yaml",
        &machine("bad", "")
            .replace("512Mi", "64Mi")
            .replace("vlan: 100", "vlan: 5000"),
    );
    e.write(
        "nobridge.yaml",
        &machine("nobridge", "node: pve\n").replace("vmbr0", "vmbr9"),
    );
    e.sa.pass(true).await;
    let st = e.status("bad");
    assert_eq!(st.phase, Phase::Error);
    let (_, reason, msg) = cond(&st, "Ready");
    assert_eq!(reason, "ValidationFailed");
    assert_eq!(
        msg,
        "spec.memory: memory 64Mi is below minimum of 128 MB; spec.networks[0].vlan: VLAN 5000 out of range 1-4094"
    );
    let st = e.status("nobridge");
    assert_eq!(st.phase, Phase::Error);
    assert_eq!(
        cond(&st, "NetworkConfigured"),
        (
            "False".into(),
            "NetworkError".into(),
            "network bridge 'vmbr9' does not exist on node 'pve'".into()
        )
    );
    assert_eq!(
        e.get("/cluster/resources?type=vm")
            .await
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[tokio::test]
async fn fifty_machines_converge_without_duplicates() {
    let mut e = env().await;
    let docs: Vec<String> = (0..50)
        .map(|i| machine(&format!("m{i:02}"), "").replace("512Mi", "256Mi"))
        .collect();
    e.write("fleet.yaml", &docs.join("---\n"));
    e.converge(10, |e| {
        (0..50).all(|i| e.status(&format!("m{i:02}")).phase == Phase::Running)
    })
    .await;
    let mut vmids: Vec<u32> = (0..50)
        .map(|i| e.status(&format!("m{i:02}")).vmid.unwrap())
        .collect();
    vmids.sort_unstable();
    vmids.dedup();
    assert_eq!(vmids.len(), 50);
    assert_eq!(vmids.first(), Some(&10000));
    assert_eq!(vmids.last(), Some(&10049));
    let all = e.get("/cluster/resources?type=vm").await;
    assert_eq!(
        all.as_array().unwrap().len(),
        52,
        "50 machines, the gateway and the template"
    );
}

#[tokio::test]
async fn a_restarted_operator_adopts_instead_of_duplicating() {
    let mut e = env().await;
    // The first operator creates the VM but its start task fails.
    e.fault(serde_json::json!({"task_type": "qmstart", "task_error": "start failed: injected", "count": 1}))
        .await;
    e.write("app.yaml", &machine("app", ""));
    e.sa.pass(true).await;
    let st = e.status("app");
    assert_eq!(st.vmid, Some(10000));
    assert_ne!(st.phase, Phase::Running);
    // A new operator over the same directory, without memory of the first.
    std::fs::remove_file(e.dir.join("app.status.yaml")).unwrap();
    e.sa = Standalone::new(options(&e.dir), operator());
    let st = e.running("app").await;
    assert_eq!(st.vmid, Some(10000));
    assert_eq!(e.owned("app").await, vec![10000]);
    // one that restarts after the manifest was removed keeps the VM and
    // says why
    e.remove("app.yaml");
    e.sa = Standalone::new(options(&e.dir), operator());
    e.sa.pass(true).await;
    e.sa.pass(true).await;
    assert_eq!(e.owned("app").await, vec![10000]);
    assert!(e.sa.problem("Machine", "app").is_some());
    assert_eq!(cond(&e.status("app"), "Ready").1, "ManifestError");
    // and one that restarts after the deletion was asked for deletes
    e.write("app.yaml", &deleted(&machine("app", "")));
    e.sa = Standalone::new(options(&e.dir), operator());
    e.converge(3, |e| !e.sa.tracks("Machine", "app")).await;
    assert!(e.owned("app").await.is_empty());
}

#[tokio::test]
async fn faults_are_retried_until_they_stop() {
    let mut e = env().await;
    e.fault(serde_json::json!({"method": "POST", "path": "/nodes/pve/qemu", "status": 503, "message": "injected", "count": 2}))
        .await;
    e.fault(serde_json::json!({"task_type": "qmcreate", "task_error": "unable to create VM: injected", "count": 1}))
        .await;
    e.fault(serde_json::json!({"method": "GET", "path": "/nodes/pve/qemu/*/pending", "status": 500, "message": "VM is locked (backup)", "count": 1}))
        .await;
    e.write("f.yaml", &machine("f", ""));
    e.sa.pass(true).await;
    let (s, reason, msg) = cond(&e.status("f"), "Ready");
    assert_eq!(
        (s.as_str(), reason.as_str()),
        ("False", "TransientError"),
        "{msg}"
    );
    e.converge(8, |e| e.status("f").phase == Phase::Running)
        .await;
    assert_eq!(e.owned("f").await.len(), 1);
    // failed requests are counted by their status too
    let metrics = e.sa.operator.metrics.render();
    assert!(
        metrics.contains("proxmox_operator_api_requests_total{method=\"POST\",endpoint=\"/nodes/{node}/qemu\",status=\"503\"} 2"),
        "{metrics}"
    );

    // timeouts: answers slower than the client waits
    e.fault(serde_json::json!({"method": "POST", "path": "/nodes/pve/qemu/*/status/shutdown", "delay_ms": 2500, "count": 1}))
        .await;
    e.write("f.yaml", &machine("f", "powerState: Off\n"));
    e.sa.pass(true).await;
    let (_, reason, _) = cond(&e.status("f"), "Ready");
    assert_eq!(reason, "NetworkError");
    e.converge(6, |e| e.status("f").phase == Phase::Stopped)
        .await;

    // authentication failures are not retried with backoff
    e.clear_faults().await;
    e.write(
        "cluster.yaml",
        &std::fs::read_to_string(e.dir.join("cluster.yaml"))
            .unwrap()
            .replace(SECRET, "00000000-0000-0000-0000-000000000000"),
    );
    e.write("g.yaml", &machine("g", ""));
    e.sa.pass(true).await;
    let (_, reason, _) = cond(&e.status("g"), "Ready");
    assert_eq!(reason, "AuthenticationError");
    let metrics = e.sa.operator.metrics.render();
    assert!(
        metrics.contains(
            "proxmox_operator_errors_total{error_type=\"authentication\",controller=\"machine\"}"
        ),
        "{metrics}"
    );
    assert!(
        metrics.contains("proxmox_cluster_connection_status{cluster=\"lab\"} 0"),
        "{metrics}"
    );
}

#[tokio::test]
async fn clones_linked_and_full() {
    let mut e = env().await;
    e.write(
        "c.yaml",
        &[
            machine("linked", "source: { template: ubuntu-tpl }\n"),
            machine(
                "full",
                "source: { template: '9000', linked: false, storage: local-lvm }\n",
            ),
        ]
        .join("---\n"),
    );
    e.converge(8, |e| {
        e.status("linked").phase == Phase::Running && e.status("full").phase == Phase::Running
    })
    .await;
    let l = e.status("linked").vmid.unwrap();
    let f = e.status("full").vmid.unwrap();
    let lc = e.config(l).await;
    let fc = e.config(f).await;
    // Both carry the template's 8G disk (the spec's 4G is a refused shrink).
    assert!(
        lc["scsi0"].as_str().unwrap().contains("size=8G"),
        "linked: {lc}"
    );
    assert!(
        fc["scsi0"].as_str().unwrap().contains("size=8G"),
        "full: {fc}"
    );
    assert!(
        !fc["scsi0"].as_str().unwrap().contains("base-9000"),
        "full: {fc}"
    );
    assert_eq!(
        cond(&e.status("linked"), "ResourcesAllocated").1,
        "DiskShrinkRefused"
    );
    assert_eq!(lc["cores"], 2);
    assert!(lc["net0"].as_str().unwrap().contains("tag=100"));
    assert_eq!(e.owned("linked").await, vec![l]);
    // a missing template is reported and nothing is made
    e.write(
        "m.yaml",
        &machine("missing", "source: { template: nope }\n"),
    );
    e.sa.pass(true).await;
    let st = e.status("missing");
    assert_eq!(st.phase, Phase::Pending);
    assert_eq!(cond(&st, "VMCreated").2, "template 'nope' not found");
}

#[tokio::test]
async fn snapshot_and_rollback() {
    let mut e = env().await;
    e.write("s.yaml", &machine("s", ""));
    let st = e.running("s").await;
    let vmid = st.vmid.unwrap();
    let snap = "apiVersion: pve.fake-pve.io/v1alpha1
kind: MachineSnapshot
metadata: { name: before }
spec: { machine: s, description: before the change }
";
    e.write("snap.yaml", snap);
    e.sa.pass(true).await;
    let st = e.sa.status("MachineSnapshot", "before").cloned().unwrap();
    assert_eq!(st["ready"], true, "{st}");
    let list = e.get(&format!("/nodes/pve/qemu/{vmid}/snapshot")).await;
    assert!(
        list.as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "before"),
        "{list}"
    );
    // change, then roll back
    e.write("s.yaml", &machine("s", "").replace("cores: 2", "cores: 3"));
    e.sa.pass(true).await;
    assert_eq!(e.config(vmid).await["cores"], 3);
    e.write(
        "snap.yaml",
        &snap.replace(
            "before the change }",
            "before the change, rollbackRequest: '1' }",
        ),
    );
    e.write("s.yaml", &machine("s", ""));
    e.sa.pass(true).await;
    let st = e.sa.status("MachineSnapshot", "before").cloned().unwrap();
    assert_eq!(st["lastRollback"], "1", "{st}");
    assert_eq!(e.config(vmid).await["cores"], 2);
    // deleting the MachineSnapshot deletes the snapshot
    e.write("snap.yaml", &deleted(snap));
    e.converge(3, |e| !e.sa.tracks("MachineSnapshot", "before"))
        .await;
    let list = e.get(&format!("/nodes/pve/qemu/{vmid}/snapshot")).await;
    assert!(
        !list
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "before"),
        "{list}"
    );
}

/// Issue #16: after a rollback PVE's config says 4G while the volume
/// kept its 6G; every resize to 6G was a no-op, planned again at once
/// (160 in 10 s), and the Start behind it never came.
#[tokio::test]
async fn a_rollback_after_a_disk_grow_starts_the_vm_without_resizing_again() {
    let mut e = env().await;
    e.write("s.yaml", &machine("s", ""));
    let vmid = e.running("s").await.vmid.unwrap();
    let snap = "apiVersion: pve.fake-pve.io/v1alpha1
kind: MachineSnapshot
metadata: { name: before }
spec: { machine: s }
";
    e.write("snap.yaml", snap);
    e.sa.pass(true).await;
    e.write("s.yaml", &machine("s", "").replace("4G", "6G"));
    e.converge(3, |e| cond(&e.status("s"), "Ready").0 == "True")
        .await;
    let resizes = |e: &Env| {
        e.sa.operator
            .metrics
            .api_requests("PUT", "/nodes/{node}/qemu/{vmid}/resize")
    };
    assert_eq!(resizes(&e), 1);
    e.write(
        "snap.yaml",
        &snap.replace("machine: s }", "machine: s, rollbackRequest: '1' }"),
    );
    for _ in 0..3 {
        e.sa.pass(true).await;
    }
    let c = e.config(vmid).await;
    assert!(c["scsi0"].as_str().unwrap().contains("size=4G"), "{c}");
    assert_eq!(
        e.get(&format!("/nodes/pve/qemu/{vmid}/status/current"))
            .await["status"],
        "running",
        "started again after the rollback"
    );
    assert_eq!(resizes(&e), 1, "no resize to the size the volume has");
    assert_eq!(e.status("s").phase, Phase::Running);
    // the configuration's 4G and the volume's 6G disagree: reported, not
    // Ready
    let (ok, reason, msg) = cond(&e.status("s"), "Ready");
    assert_eq!(
        (ok.as_str(), reason.as_str()),
        ("False", "DiskSizeMismatch"),
        "{msg}"
    );
    assert!(
        msg.contains("scsi0") && msg.contains("says 4G") && msg.contains("is 6G"),
        "{msg}"
    );
    assert_eq!(
        cond(&e.status("s"), "ResourcesAllocated").1,
        "DiskSizeMismatch"
    );
    let table = pve_operator::standalone::status_table(&e.dir);
    assert!(table.contains("DiskSizeMismatch"), "{table}");
}

#[tokio::test]
async fn metrics_and_probes_are_served() {
    let mut e = env().await;
    let (addr, task) = pve_operator::http::serve(
        "127.0.0.1:0".parse().unwrap(),
        e.sa.operator.metrics.clone(),
        e.sa.health.clone(),
    )
    .await
    .unwrap();
    let client = e.http.clone();
    let get = |p: &'static str| {
        let http = client.clone();
        async move {
            let r = http.get(format!("http://{addr}{p}")).send().await.unwrap();
            (r.status().as_u16(), r.text().await.unwrap())
        }
    };
    assert_eq!(get("/readyz").await.0, 500);
    e.write("w.yaml", &machine("w", ""));
    e.running("w").await;
    assert_eq!(get("/readyz").await.0, 200);
    assert_eq!(get("/healthz").await.0, 200);
    let (code, text) = get("/metrics").await;
    assert_eq!(code, 200);
    for want in [
        "proxmox_operator_machines_total{phase=\"Running\",node=\"pve\"} 1",
        "proxmox_operator_api_requests_total{method=\"POST\",endpoint=\"/nodes/{node}/qemu\",status=\"200\"} 1",
        "proxmox_cluster_connection_status{cluster=\"lab\"} 1",
        "proxmox_cluster_nodes_available{cluster=\"lab\"} 1",
        "proxmox_operator_reconciliation_duration_seconds_count{controller=\"machine\"}",
    ] {
        assert!(text.contains(want), "missing {want}:\n{text}");
    }
    task.abort();
}

#[tokio::test]
async fn disks_grow_online() {
    let mut e = env().await;
    e.write("d.yaml", &machine("d", ""));
    let vmid = e.running("d").await.vmid.unwrap();
    e.write("d.yaml", &machine("d", "").replace("4G", "6G"));
    e.converge(3, |e| cond(&e.status("d"), "Ready").0 == "True")
        .await;
    let c = e.config(vmid).await;
    assert!(c["scsi0"].as_str().unwrap().contains("size=6G"), "{c}");
    assert_eq!(
        e.get(&format!("/nodes/pve/qemu/{vmid}/status/current"))
            .await["status"],
        "running"
    );
}

/// Off shuts the guest down (a hard stop only after the timeout), and a
/// new `rebootRequest` reboots it once, applying what waited for a power
/// cycle.
#[tokio::test]
async fn power_off_is_graceful_and_reboot_requests_apply_pending_changes() {
    let mut e = env().await;
    e.write("p.yaml", &machine("p", "").replace("512Mi", "1Gi"));
    let vmid = e.running("p").await.vmid.unwrap();
    let calls = |e: &Env, action: &str| {
        e.sa.operator.metrics.api_requests(
            "POST",
            &format!("/nodes/{{node}}/qemu/{{vmid}}/status/{action}"),
        )
    };
    e.write(
        "p.yaml",
        &machine("p", "powerState: Off\n").replace("512Mi", "1Gi"),
    );
    e.converge(3, |e| e.status("p").phase == Phase::Stopped)
        .await;
    assert_eq!((calls(&e, "shutdown"), calls(&e, "stop")), (1, 0));
    // started again with a reboot request: the start is the reboot
    e.write(
        "p.yaml",
        &machine("p", "rebootRequest: a\n").replace("512Mi", "1Gi"),
    );
    e.running("p").await;
    e.sa.pass(true).await;
    assert_eq!(calls(&e, "reboot"), 0);
    assert_eq!(e.status("p").last_reboot.as_deref(), Some("a"));
    // a memory decrease waits for a power cycle; the next request gives it
    e.write("p.yaml", &machine("p", "rebootRequest: a\n"));
    e.sa.pass(true).await;
    assert_eq!(
        cond(&e.status("p"), "ResourcesAllocated").1,
        "PowerCycleRequired"
    );
    e.write("p.yaml", &machine("p", "rebootRequest: b\n"));
    e.converge(4, |e| {
        cond(&e.status("p"), "ResourcesAllocated").1 == "AllocationSucceeded"
            && e.status("p").phase == Phase::Running
    })
    .await;
    assert_eq!(calls(&e, "reboot"), 1);
    assert_eq!(e.status("p").last_reboot.as_deref(), Some("b"));
    assert_eq!(
        e.config(vmid).await["memory"].to_string().trim_matches('"'),
        "512"
    );
    e.sa.pass(true).await;
    assert_eq!(calls(&e, "reboot"), 1, "once per value");
}

#[tokio::test]
async fn suspended_machines_are_paused_and_resumed() {
    let mut e = env().await;
    e.write("s.yaml", &machine("s", ""));
    let vmid = e.running("s").await.vmid.unwrap();
    let path = format!("/nodes/pve/qemu/{vmid}/status/current");
    e.write("s.yaml", &machine("s", "powerState: Suspended\n"));
    e.converge(3, |e| e.status("s").phase == Phase::Suspended)
        .await;
    assert_eq!(e.get(&path).await["qmpstatus"], "paused");
    assert_eq!(cond(&e.status("s"), "Ready").1, "Suspended");
    e.sa.pass(true).await;
    assert_eq!(e.status("s").phase, Phase::Suspended, "stays so");
    e.write("s.yaml", &machine("s", ""));
    e.running("s").await;
    assert_eq!(e.get(&path).await["qmpstatus"], "running");
    // Off from suspended: stopped
    e.write("s.yaml", &machine("s", "powerState: Suspended\n"));
    e.converge(3, |e| e.status("s").phase == Phase::Suspended)
        .await;
    e.write("s.yaml", &machine("s", "powerState: Off\n"));
    e.converge(3, |e| e.status("s").phase == Phase::Stopped)
        .await;
}

#[tokio::test]
async fn vcpus_are_hot_plugged() {
    let mut e = env().await;
    e.write("v.yaml", &machine("v", "").replace("cores: 2", "cores: 4"));
    let vmid = e.running("v").await.vmid.unwrap();
    e.write(
        "v.yaml",
        &machine("v", "").replace("cores: 2", "cores: 4, vcpus: 2"),
    );
    e.converge(3, |e| cond(&e.status("v"), "Ready").0 == "True")
        .await;
    assert_eq!(
        cond(&e.status("v"), "ResourcesAllocated").1,
        "AllocationSucceeded"
    );
    assert_eq!(e.config(vmid).await["vcpus"], 2);
    assert_eq!(
        e.get(&format!("/nodes/pve/qemu/{vmid}/status/current"))
            .await["status"],
        "running"
    );
}

#[tokio::test]
async fn guest_agent_addresses_reach_the_status_without_loopback_or_link_local() {
    let mut e = env().await;
    e.write(
        "app.yaml",
        "apiVersion: pve.fake-pve.io/v1alpha1
kind: Machine
metadata: { name: app }
spec:
  cluster: lab
  memory: 512Mi
  agent: true
  networks: [{ bridge: vmbr0, ip: 192.0.2.50/24, gateway: 192.0.2.1 }]
",
    );
    let st = e.running("app").await;
    // The agent answers once the guest has booted.
    assert!(st.ip_addresses.is_empty(), "{st:?}");
    e.pve.clock().advance(10);
    e.converge(4, |e| !e.status("app").ip_addresses.is_empty())
        .await;
    let ips = e.status("app").ip_addresses;
    assert!(ips.contains(&"192.0.2.50".to_string()), "{ips:?}");
    for ip in &ips {
        let a: std::net::IpAddr = ip.parse().unwrap();
        assert!(!a.is_loopback(), "{ips:?}");
        assert!(
            !ip.starts_with("fe80:") && !ip.starts_with("169.254."),
            "{ips:?}"
        );
    }
    // What the guest reports does include them.
    let vmid = e.status("app").vmid.unwrap();
    let raw = e
        .get(&format!(
            "/nodes/pve/qemu/{vmid}/agent/network-get-interfaces"
        ))
        .await;
    assert!(raw.to_string().contains("127.0.0.1"), "{raw}");
}

const IMAGE_SCENARIO: &str = r"
users:
  - userid: root@pam
    tokens:
      - { tokenid: automation, secret: 0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60, privsep: false }
storages:
  - { id: local, type: dir, path: /var/lib/vz, content: [iso, import, vztmpl, backup, snippets] }
  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve, size: 100G }
downloads:
  - { url: 'https://cloud.example.com/debian-12-generic-amd64.qcow2', size: 341835776 }
";

#[tokio::test]
async fn an_image_from_a_url_becomes_a_template_that_machines_clone() {
    let mut e = env_with(IMAGE_SCENARIO).await;
    e.write(
        "image.yaml",
        "apiVersion: pve.fake-pve.io/v1alpha1
kind: MachineImage
metadata: { name: debian-12 }
spec:
  cluster: lab
  url: https://cloud.example.com/debian-12-generic-amd64.qcow2
  downloadStorage: local
  storage: local-lvm
",
    );
    e.write("web.yaml", &machine("web", "source: { image: debian-12 }"));
    let st = e.running("web").await;
    // The download is in the storage, the template made from it.
    let content = e.get("/nodes/pve/storage/local/content").await;
    assert!(
        content
            .to_string()
            .contains("local:import/debian-12-generic-amd64.qcow2"),
        "{content}"
    );
    let templates: Vec<Value> = e
        .get("/cluster/resources?type=vm")
        .await
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["template"] == 1)
        .cloned()
        .collect();
    assert_eq!(templates.len(), 1, "{templates:?}");
    assert_eq!(templates[0]["name"], "debian-12");
    // The machine is a clone of it.
    let tpl = templates[0]["vmid"].as_u64().unwrap();
    let clones = e.get("/nodes/pve/tasks?typefilter=qmclone").await;
    assert!(
        clones
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"].as_str() == Some(tpl.to_string().as_str())),
        "{clones}"
    );
    assert_eq!(e.config(st.vmid.unwrap()).await["name"], "web");
    // Another pass changes nothing: the image is not downloaded again.
    let tasks_before = e.get("/nodes/pve/tasks?typefilter=download").await;
    e.sa.pass(true).await;
    assert_eq!(
        e.get("/nodes/pve/tasks?typefilter=download").await,
        tasks_before
    );
}

/// Issue #16: a `.img` cloud-image URL was downloaded under its own name,
/// which PVE's `import` content refuses.
#[tokio::test]
async fn a_cloud_image_img_url_is_imported_as_qcow2() {
    let mut e = env_with(&IMAGE_SCENARIO.replace(
        "debian-12-generic-amd64.qcow2",
        "jammy-server-cloudimg-amd64.img",
    ))
    .await;
    e.write(
        "image.yaml",
        "apiVersion: pve.fake-pve.io/v1alpha1
kind: MachineImage
metadata: { name: jammy }
spec:
  cluster: lab
  url: https://cloud.example.com/jammy-server-cloudimg-amd64.img
",
    );
    e.write("web.yaml", &machine("web", "source: { image: jammy }"));
    e.running("web").await;
    let content = e.get("/nodes/pve/storage/local/content").await;
    assert!(
        content
            .to_string()
            .contains("local:import/jammy-server-cloudimg-amd64.qcow2"),
        "{content}"
    );
}

const NODES_SCENARIO: &str = r"
users:
  - userid: root@pam
    tokens:
      - { tokenid: automation, secret: 0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60, privsep: false }
cluster: lab
nodes:
  - { name: pve1 }
  - { name: pve2 }
  - { name: pve3 }
";

#[tokio::test]
async fn placement_spreads_machines_over_the_nodes() {
    let mut e = env_with(NODES_SCENARIO).await;
    for (node, zone) in [("pve1", "a"), ("pve2", "b"), ("pve3", "a")] {
        e.write(
            &format!("node-{node}.yaml"),
            &format!(
                "apiVersion: pve.fake-pve.io/v1alpha1
kind: ProxmoxNode
metadata: {{ name: {node}, labels: {{ zone: {zone} }} }}
spec: {{ cluster: lab, nodeName: {node} }}
"
            ),
        );
    }
    // Three web machines that must not share a node.
    for i in 0..3 {
        e.write(
            &format!("web-{i}.yaml"),
            &format!(
                "apiVersion: pve.fake-pve.io/v1alpha1
kind: Machine
metadata: {{ name: web-{i}, labels: {{ app: web }} }}
spec:
  cluster: lab
  memory: 512Mi
  placement: {{ antiAffinity: [app] }}
"
            ),
        );
    }
    // One that must go to zone b.
    e.write(
        "db.yaml",
        "apiVersion: pve.fake-pve.io/v1alpha1
kind: Machine
metadata: { name: db }
spec:
  cluster: lab
  memory: 512Mi
  placement: { nodeSelector: { zone: b } }
",
    );
    e.converge(12, |e| {
        ["web-0", "web-1", "web-2", "db"]
            .iter()
            .all(|m| e.status(m).phase == Phase::Running)
    })
    .await;
    let mut nodes: Vec<String> = (0..3)
        .map(|i| e.status(&format!("web-{i}")).node.unwrap())
        .collect();
    nodes.sort();
    assert_eq!(nodes, ["pve1", "pve2", "pve3"]);
    assert_eq!(e.status("db").node.as_deref(), Some("pve2"));
    // A fourth web machine has nowhere to go, and says why.
    e.write(
        "web-3.yaml",
        "apiVersion: pve.fake-pve.io/v1alpha1
kind: Machine
metadata: { name: web-3, labels: { app: web } }
spec:
  cluster: lab
  memory: 512Mi
  placement: { antiAffinity: [app] }
",
    );
    e.sa.pass(true).await;
    let st = e.status("web-3");
    assert_ne!(st.phase, Phase::Running);
    let (_, reason, message) = cond(&st, "ResourcesAllocated");
    assert!(message.contains("anti-affinity"), "{reason}: {message}");
}

#[tokio::test]
async fn machines_go_to_the_cluster_they_name() {
    let mut e = env().await;
    let site_b = fake(SCENARIO).await;
    e.write("site-b.yaml", &cluster_manifest(&e.dir, "site-b", &site_b));
    e.write("a.yaml", &machine("a", ""));
    e.write(
        "b.yaml",
        &machine("b", "").replace("cluster: lab", "cluster: site-b"),
    );
    e.converge(10, |e| {
        e.status("a").phase == Phase::Running && e.status("b").phase == Phase::Running
    })
    .await;
    let on = |pve: &Running, vmid: u32| {
        let url = format!("{}/nodes/pve/qemu/{vmid}/config", pve.api_url());
        let http = e.http.clone();
        async move {
            http.get(url)
                .header("Authorization", format!("PVEAPIToken={TOKEN}={SECRET}"))
                .send()
                .await
                .unwrap()
                .status()
                .is_success()
        }
    };
    let (va, vb) = (e.status("a").vmid.unwrap(), e.status("b").vmid.unwrap());
    let a_names = e.config(va).await["name"].clone();
    assert_eq!(a_names, "a");
    assert!(on(&site_b, vb).await, "b is on site-b");
    // Both may use the same VMID: they are different clusters. What counts
    // is that neither landed on the other.
    if va != vb {
        assert!(!on(&e.pve, vb).await, "b is not on lab");
        assert!(!on(&site_b, va).await, "a is not on site-b");
    }
}

/// Issue #16: a snapshot deleted with its Machine was deleted in the
/// alphabetically first cluster, not in the Machine's.
#[tokio::test]
async fn a_snapshot_deleted_with_its_machine_is_deleted_in_the_machines_cluster() {
    let mut e = env().await;
    let site_b = fake(SCENARIO).await;
    e.write("site-b.yaml", &cluster_manifest(&e.dir, "site-b", &site_b));
    let b = machine("b", "deletionPolicy: Orphan\n").replace("cluster: lab", "cluster: site-b");
    e.write("b.yaml", &b);
    e.converge(8, |e| e.status("b").phase == Phase::Running)
        .await;
    let vmid = e.status("b").vmid.unwrap();
    let snap = "apiVersion: pve.fake-pve.io/v1alpha1
kind: MachineSnapshot
metadata: { name: before }
spec: { machine: b }
";
    e.write("snap.yaml", snap);
    e.sa.pass(true).await;
    let client = e.http.clone();
    let snapshots = || {
        let url = format!("{}/nodes/pve/qemu/{vmid}/snapshot", site_b.api_url());
        let http = client.clone();
        async move {
            let v: Value = http
                .get(url)
                .header("Authorization", format!("PVEAPIToken={TOKEN}={SECRET}"))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            v["data"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| s["name"] != "current")
                .count()
        }
    };
    assert_eq!(snapshots().await, 1);
    e.write("b.yaml", &deleted(&b));
    e.write("snap.yaml", &deleted(snap));
    e.converge(4, |e| {
        !e.sa.tracks("Machine", "b") && !e.sa.tracks("MachineSnapshot", "before")
    })
    .await;
    assert_eq!(snapshots().await, 0, "deleted on site-b, where it was");
}

/// Issue #16: a Machine whose cluster is missing, or refuses the
/// credentials, could never be deleted (the deletion connected first).
#[tokio::test]
async fn a_machine_of_a_missing_or_refusing_cluster_can_be_deleted() {
    let mut e = env().await;
    let ghost = machine("ghost", "").replace("cluster: lab", "cluster: nowhere");
    e.write("ghost.yaml", &ghost);
    e.write("keep.yaml", &machine("keep", "deletionPolicy: Orphan\n"));
    e.write("gone.yaml", &machine("gone", ""));
    e.converge(8, |e| {
        e.status("keep").phase == Phase::Running && e.status("gone").phase == Phase::Running
    })
    .await;
    assert!(e.sa.tracks("Machine", "ghost"));
    e.write("ghost.yaml", &deleted(&ghost));
    e.converge(2, |e| !e.sa.tracks("Machine", "ghost")).await;
    // credentials refused
    e.write(
        "cluster.yaml",
        &std::fs::read_to_string(e.dir.join("cluster.yaml"))
            .unwrap()
            .replace(SECRET, "00000000-0000-0000-0000-000000000000"),
    );
    e.write(
        "keep.yaml",
        &deleted(&machine("keep", "deletionPolicy: Orphan\n")),
    );
    e.write("gone.yaml", &deleted(&machine("gone", "")));
    e.sa.pass(true).await;
    e.sa.pass(true).await;
    assert!(!e.sa.tracks("Machine", "keep"), "Orphan needs no PVE");
    assert!(e.sa.tracks("Machine", "gone"), "Delete needs PVE");
    let (_, reason, msg) = cond(&e.status("gone"), "Ready");
    assert_eq!(reason, "AuthenticationError");
    assert!(msg.contains("deletionPolicy: Orphan"), "{msg}");
    // told to leave the VM: done
    e.write(
        "gone.yaml",
        &deleted(&machine("gone", "deletionPolicy: Orphan\n")),
    );
    e.converge(2, |e| !e.sa.tracks("Machine", "gone")).await;
}

/// Issue #16: PVE refusing a clone for good was retried for ever with the
/// phase at `Creating`.
#[tokio::test]
async fn a_refused_clone_is_an_error_not_a_retry() {
    let mut e = env().await;
    e.fault(serde_json::json!({"method": "POST", "path": "/nodes/pve/qemu/9000/clone", "status": 500, "message": "can't clone VM to node 'pve2' (VM uses local storage)"}))
        .await;
    e.write(
        "c.yaml",
        &machine("c", "source: { template: ubuntu-tpl }\n"),
    );
    e.sa.pass(true).await;
    let st = e.status("c");
    assert_eq!(st.phase, Phase::Error);
    let (ok, reason, msg) = cond(&st, "VMCreated");
    assert_eq!((ok.as_str(), reason.as_str()), ("False", "CreationFailed"));
    assert!(msg.contains("VM uses local storage"), "{msg}");
    let clones = |e: &Env| {
        e.sa.operator
            .metrics
            .api_requests("POST", "/nodes/{node}/qemu/{vmid}/clone")
    };
    assert_eq!(clones(&e), 1);
    // not due again before the resync
    e.sa.pass(false).await;
    assert_eq!(clones(&e), 1);
    // fixed in PVE: the next reconcile clones
    e.clear_faults().await;
    e.converge(4, |e| e.status("c").phase == Phase::Running)
        .await;
}

/// Issue #16: a VM gone from PVE left its VMID (soon another machine's)
/// in the status and its conditions.
#[tokio::test]
async fn a_vanished_vm_leaves_no_vmid_in_the_status() {
    let mut e = env().await;
    e.write("v.yaml", &machine("v", ""));
    let vmid = e.running("v").await.vmid.unwrap();
    e.call(
        reqwest::Method::POST,
        &format!("/nodes/pve/qemu/{vmid}/status/stop"),
        &[],
    )
    .await;
    e.call(
        reqwest::Method::DELETE,
        &format!("/nodes/pve/qemu/{vmid}"),
        &[],
    )
    .await;
    // the VMID goes to another VM, and the re-creation is refused
    e.call(
        reqwest::Method::POST,
        "/nodes/pve/qemu",
        &[("vmid", &vmid.to_string()), ("name", "stranger")],
    )
    .await;
    e.fault(serde_json::json!({"method": "POST", "path": "/nodes/pve/qemu", "status": 500, "message": "no space left"}))
        .await;
    e.sa.pass(true).await;
    let st = e.status("v");
    assert_eq!(st.vmid, None);
    assert_eq!(st.node, None);
    assert!(
        !serde_json::to_string(&st.conditions)
            .unwrap()
            .contains(&vmid.to_string()),
        "{:?}",
        st.conditions
    );
}

#[tokio::test]
async fn the_watcher_follows_the_directory() {
    let e = env().await;
    let mut opts = options(&e.dir);
    opts.poll = Duration::from_millis(50);
    let mut sa = Standalone::new(opts, operator());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let runner = tokio::spawn(async move {
        sa.run(async {
            let _ = stopped.await;
        })
        .await;
    });
    let until = |what: &'static str, f: Box<dyn Fn(Vec<Value>) -> bool + Send>| {
        let e = &e;
        async move {
            for _ in 0..200 {
                let vms = e.get("/nodes/pve/qemu").await;
                if f(vms.as_array().cloned().unwrap_or_default()) {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            panic!("the watcher did not {what}");
        }
    };
    e.write("watched.yaml", &machine("watched", ""));
    until(
        "create the machine",
        Box::new(|vms| {
            vms.iter()
                .any(|v| v["name"] == "watched" && v["status"] == "running")
        }),
    )
    .await;
    e.write(
        "watched.yaml",
        &machine("watched", "").replace("cores: 2", "cores: 4"),
    );
    let vmid = loop {
        let vms = e.get("/nodes/pve/qemu").await;
        if let Some(v) = vms
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == "watched")
        {
            break v["vmid"].as_u64().unwrap() as u32;
        }
    };
    let mut cores = 0;
    for _ in 0..200 {
        cores = e.config(vmid).await["cores"].as_u64().unwrap_or(0);
        if cores == 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(cores, 4, "the watcher did not apply the change");
    e.write("watched.yaml", &deleted(&machine("watched", "")));
    until(
        "delete the machine",
        Box::new(|vms| !vms.iter().any(|v| v["name"] == "watched")),
    )
    .await;
    let _ = stop.send(());
    runner.await.unwrap();
}

/// The book's walk-through (pve-operator): the shipped examples against fake-pve's
/// default scenario (only the endpoint differs) are created, started and
/// given addresses.
#[tokio::test]
async fn the_shipped_examples_converge_against_the_default_scenario() {
    let pve = FakePve::builder()
        .listen("127.0.0.1:0".parse().unwrap())
        .auth_failure_delay(Duration::ZERO)
        .clock(Clock::manual(1_790_000_000))
        .start()
        .await
        .unwrap();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/manifests");
    let dir = TempDir::new("examples");
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path())
            .unwrap()
            .replace("https://127.0.0.1:8006", &pve.url());
        std::fs::write(dir.join(e.file_name()), text).unwrap();
    }
    let mut sa = Standalone::new(options(&dir), operator());
    let status = |sa: &Standalone, n: &str| sa.machine_status(n).unwrap_or_default();
    for _ in 0..10 {
        sa.pass(true).await;
        if ["web-1", "db-1"]
            .iter()
            .all(|m| status(&sa, m).phase == Phase::Running)
        {
            break;
        }
    }
    assert_eq!(status(&sa, "web-1").phase, Phase::Running);
    assert_eq!(status(&sa, "db-1").phase, Phase::Running);
    assert_eq!(status(&sa, "db-1").vmid, Some(1500));
    pve.clock().advance(10);
    sa.pass(true).await;
    assert_eq!(status(&sa, "web-1").ip_addresses, ["192.0.2.10"]);
    let table = pve_operator::standalone::status_table(&dir);
    assert!(table.contains("192.0.2.10"), "{table}");
}

/// A `MakeWriter` into a shared buffer.
#[derive(Clone, Default)]
struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Self;
    fn make_writer(&'a self) -> Self {
        self.clone()
    }
}

/// Issue #16: log lines named the wrong machine (a span entered and held
/// across `.await` while other reconciles ran on the same thread).
#[tokio::test]
async fn log_lines_name_the_machine_they_are_about() {
    // Global (scoped subscribers miss events whose callsite interest
    // another test's thread cached); other tests' lines are told apart by
    // the machine names.
    let out = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(out.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .finish();
    tracing::subscriber::set_global_default(subscriber).unwrap();
    let mut e = env().await;
    let names = ["logged-0", "logged-1", "logged-2", "logged-3", "logged-4"];
    let docs: Vec<String> = names.iter().map(|n| machine(n, "")).collect();
    e.write("fleet.yaml", &docs.join("---\n"));
    e.converge(8, |e| {
        names.iter().all(|n| e.status(n).phase == Phase::Running)
    })
    .await;
    let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
    let mut checked = 0;
    for line in text
        .lines()
        .filter(|l| l.contains("machine=\"logged-") && l.contains("Successfully created VM"))
    {
        let named: Vec<&str> = line
            .match_indices("machine=\"")
            .map(|(i, _)| line[i + 9..].split('"').next().unwrap())
            .collect();
        assert_eq!(named.len(), 1, "one machine per line: {line}");
        let vmid = e.status(named[0]).vmid.unwrap();
        assert!(
            line.contains(&format!("vmid={vmid} ")),
            "{} (VM {vmid}) logged as: {line}",
            named[0]
        );
        checked += 1;
    }
    assert_eq!(checked, names.len(), "{text}");
}

/// The one retry policy of both modes, standalone: a retryable failure
/// (here PVE unreachable) is looked at again after 1 s, then 2 s, ...
#[tokio::test]
async fn standalone_backs_off_1_2_4_seconds() {
    let e = env().await;
    let cluster = std::fs::read_to_string(e.dir.join("cluster.yaml"))
        .unwrap()
        .replace(&e.pve.url(), "https://127.0.0.1:1");
    e.write("cluster.yaml", &cluster);
    e.write("m.yaml", &machine("m", ""));
    let mut sa = Standalone::new(options(&e.dir), operator());
    assert_eq!(sa.pass(false).await, 2, "the cluster and the machine");
    assert_eq!(
        cond(&sa.machine_status("m").unwrap(), "Ready").1,
        "NetworkError"
    );
    let started = std::time::Instant::now();
    let mut retries = Vec::new();
    while retries.len() < 2 && started.elapsed() < Duration::from_secs(6) {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if sa.pass(false).await > 0 {
            retries.push(started.elapsed().as_secs_f64());
        }
    }
    assert_eq!(retries.len(), 2, "{retries:?}");
    assert!((0.85..1.6).contains(&retries[0]), "{retries:?}");
    assert!((2.6..4.0).contains(&retries[1]), "{retries:?}");
}

/// VirtRigaud's provider takes its PVE from `PVE_*` variables: the
/// operator offers them as a cluster Machines can name (here `env-pve`),
/// and a declared ProxmoxCluster of the same name wins.
#[tokio::test]
async fn the_pve_variables_give_a_cluster() {
    let mut e = env().await;
    let vars = [
        ("PVE_ENDPOINT", e.pve.url()),
        ("PVE_TOKEN_ID", TOKEN.to_string()),
        ("PVE_TOKEN_SECRET", SECRET.to_string()),
        ("PVE_CA_BUNDLE", e.pve.cert_pem().unwrap().to_string()),
        ("HOME", "/root".to_string()),
    ]
    .map(|(k, v)| (k.to_string(), v));
    let env_cluster = pve_operator::controller::EnvCluster::from_env("env-pve", vars);
    assert!(
        env_cluster
            .as_ref()
            .is_some_and(|c| !c.vars.contains_key("HOME"))
    );
    let op = std::sync::Arc::new(
        pve_operator::Operator::new(common::operator_tuning()).with_env_cluster(env_cluster),
    );
    e.sa = Standalone::new(options(&e.dir), op);
    e.write(
        "v.yaml",
        &machine("v", "").replace("cluster: lab", "cluster: env-pve"),
    );
    let st = e.running("v").await;
    assert_eq!(e.config(st.vmid.unwrap()).await["name"], "v");
    // without PVE_ENDPOINT there is none
    assert!(pve_operator::controller::EnvCluster::from_env("x", []).is_none());
}

/// Issue #44: `/healthz` answered 500 while a long pass ran (the loop beat
/// only when a pass ended). A PVE that accepts connections and never
/// answers keeps the pass waiting well beyond the staleness window; the
/// loop must still count as alive.
#[tokio::test]
async fn the_loop_stays_live_while_a_pass_waits_on_pve() {
    // Accepts connections and holds them without a byte in reply.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = silent.local_addr().unwrap().port();
    let held = tokio::spawn(async move {
        let mut conns = Vec::new();
        while let Ok((c, _)) = silent.accept().await {
            conns.push(c);
        }
    });
    let dir = TempDir::new("health");
    std::fs::write(
        dir.join("lab.yaml"),
        format!(
            "apiVersion: pve.fake-pve.io/v1alpha1
kind: ProxmoxCluster
metadata: {{ name: lab }}
spec:
  endpoint: https://127.0.0.1:{port}
  insecureSkipTLSVerify: true
  credentials: {{ tokenID: '{TOKEN}', tokenSecret: {{ value: {SECRET} }} }}
"
        ),
    )
    .unwrap();
    std::fs::write(dir.join("web.yaml"), machine("web", "")).unwrap();
    // Each request waits 4 s for an answer that does not come.
    let slow = pve_operator::Operator::new(Some(std::sync::Arc::new(|b| {
        b.retry(pve_client::RetryPolicy::none())
            .timeout(Duration::from_secs(4))
    })));
    let mut sa = Standalone::new(options(&dir), std::sync::Arc::new(slow));
    sa.health = std::sync::Arc::new(pve_operator::http::Health::with_stale_after(
        Duration::from_millis(600),
    ));
    // As after an earlier pass: the loop beat, then the next pass starts.
    sa.health.beat();
    let health = sa.health.clone();
    let probe = async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        health.is_live()
    };
    let started = std::time::Instant::now();
    let (_, live) = tokio::join!(sa.pass(true), probe);
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "the pass waited on the silent PVE ({:?})",
        started.elapsed()
    );
    assert!(live, "the loop beat while the pass waited");
    held.abort();
}

/// Two documents that declare the same Machine: neither is applied (the
/// running VM keeps its CPU, memory and power), both files are named in
/// the report, `check` lists the conflict, and removing one document
/// makes the other followed again. A name two new documents declare
/// makes no VM.
#[tokio::test]
async fn a_name_declared_twice_changes_nothing_and_is_reported() {
    let mut e = env().await;
    e.write("web.yaml", &machine("web", ""));
    let vmid = e.running("web").await.vmid.unwrap();
    // sorts before web.yaml: read first
    e.write(
        "a-web.yaml",
        &machine("web", "powerState: Off\n")
            .replace("cores: 2", "cores: 3")
            .replace("512Mi", "1Gi"),
    );
    e.write("fresh-1.yaml", &machine("fresh", ""));
    e.write("fresh-2.yaml", &machine("fresh", ""));
    for _ in 0..3 {
        e.sa.pass(true).await;
    }
    let c = e.config(vmid).await;
    assert_eq!(
        (c["cores"].clone(), c["memory"].clone()),
        (2.into(), "512".into()),
        "{c}"
    );
    let st = e
        .get(&format!("/nodes/pve/qemu/{vmid}/status/current"))
        .await;
    assert_eq!(st["status"], "running");
    assert_eq!(e.owned("web").await, vec![vmid]);
    assert!(e.owned("fresh").await.is_empty(), "nothing made for fresh");
    let problem =
        e.sa.problem("Machine", "web")
            .unwrap_or_default()
            .to_string();
    assert!(
        problem.contains("Machine/web is declared by 2 documents")
            && problem.contains("a-web.yaml")
            && problem.contains("/web.yaml"),
        "{problem}"
    );
    let (ok, reason, msg) = cond(&e.status("web"), "Ready");
    assert_eq!((ok.as_str(), reason.as_str()), ("False", "ManifestError"));
    assert_eq!(msg, problem);
    assert_eq!(e.status("web").vmid, Some(vmid));
    let fresh =
        e.sa.problem("Machine", "fresh")
            .unwrap_or_default()
            .to_string();
    assert!(
        fresh.contains("fresh-1.yaml") && fresh.contains("fresh-2.yaml"),
        "{fresh}"
    );
    let table = pve_operator::standalone::status_table(&e.dir);
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("fresh ") && l.contains("ManifestError")),
        "{table}"
    );
    let (found, errors) = pve_operator::standalone::check_dir(&e.dir).unwrap();
    let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(errors.len(), 4, "each file of each conflict: {errors:?}");
    assert!(
        errors
            .iter()
            .filter(|m| m.contains("Machine/web is declared by 2 documents"))
            .all(|m| m.contains("a-web.yaml") && m.contains("/web.yaml")),
        "{errors:?}"
    );
    assert_eq!(found.len(), 2, "the cluster and its secret: {found:?}");
    // one document left: followed again
    e.remove("a-web.yaml");
    e.converge(3, |e| cond(&e.status("web"), "Ready").0 == "True")
        .await;
    assert!(e.sa.problem("Machine", "web").is_none());
    assert_eq!(e.owned("web").await, vec![vmid]);
    assert_eq!(e.config(vmid).await["cores"], 2);
}

/// The `status` table shows every condition that is not met, Ready's
/// first, not only one.
#[test]
fn the_status_table_shows_every_unmet_condition() {
    let dir = TempDir::new("table");
    std::fs::write(
        dir.join("web.status.yaml"),
        "- kind: Machine
  name: web
  status:
    phase: Running
    vmid: 10000
    node: pve
    conditions:
      - { type: ResourcesAllocated, status: 'False', reason: PowerCycleRequired, message: 'memory 2048 -> 1024 waits for a power cycle' }
      - { type: VMCreated, status: 'True', reason: CreationSucceeded, message: '' }
      - { type: CloudInitConfigured, status: 'False', reason: UserDataNotExpressible, message: 'packages' }
      - { type: Ready, status: 'False', reason: DiskSizeMismatch, message: 'scsi0' }
",
    )
    .unwrap();
    let table = pve_operator::standalone::status_table(&dir);
    let row = table.lines().find(|l| l.starts_with("web ")).unwrap();
    assert!(
        row.ends_with(
            "Ready DiskSizeMismatch: scsi0; ResourcesAllocated PowerCycleRequired: memory 2048 -> 1024 waits for a power cycle; CloudInitConfigured UserDataNotExpressible: packages"
        ),
        "{table}"
    );
    assert!(!row.contains("CreationSucceeded"), "{table}");
}
