//! The seed systems' own example manifests (`tests/seeds/`, verbatim),
//! applied by the standalone operator against in-process fake-pve
//! instances that answer for the seeds' host names (the client connects
//! to the fake for `pve.example.com:8006`, as curl's `--resolve`; the
//! fake's certificate carries those names and is the operator's
//! `PVE_CA_BUNDLE`), and the VMs PVE ends up with.
#![allow(missing_docs, clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{TempDir, operator_tuning};
use fake_pve::{Clock, FakePve, Latency, Running, Scenario, Tls};
use pve_operator::dialects::Context;
use pve_operator::types::{MachineStatus, Phase, Resource};
use pve_operator::{Operator, Options, Standalone};
use serde_json::Value;

const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/seeds");

/// Every host name the seeds' endpoints use.
const HOSTS: &[&str] = &[
    "pve.example.com",
    "pve-cluster.example.com",
    "proxmox.example.com",
    "ml110-01.sankofa.nexus",
    "r630-01.sankofa.nexus",
];

static N: AtomicUsize = AtomicUsize::new(0);

fn seed(path: &str) -> String {
    std::fs::read_to_string(Path::new(SEEDS).join(path)).unwrap()
}

fn temp(what: &str) -> TempDir {
    TempDir::new(&format!("seeds-{what}"))
}

/// A CA's certificate file, kept while this lives.
struct Ca {
    pem: PathBuf,
    _dir: TempDir,
}

impl std::ops::Deref for Ca {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.pem
    }
}

impl AsRef<Path> for Ca {
    fn as_ref(&self) -> &Path {
        &self.pem
    }
}

/// fake-pve with `scenario`, its certificate made for the seeds' hosts.
async fn fake(scenario: &str) -> (Running, Ca) {
    let tls = temp("tls");
    let names: Vec<String> = HOSTS.iter().map(|h| (*h).to_string()).collect();
    fake_pve::Identity::kept_in(&tls, &names).unwrap();
    // The seeds' endpoints say port 8006: each fake listens on 8006 of an
    // address of its own in 127.0.0.0/8.
    let mut last = None;
    for _ in 0..20 {
        let n = N.fetch_add(1, Ordering::SeqCst);
        let ip = format!(
            "127.{}.{}.{}",
            20 + std::process::id() % 200,
            n / 250,
            1 + n % 250
        );
        let started = FakePve::builder()
            .listen(format!("{ip}:8006").parse().unwrap())
            .tls(Tls::Pem {
                cert: tls.join("cert.pem"),
                key: tls.join("key.pem"),
            })
            .auth_failure_delay(Duration::ZERO)
            .clock(Clock::manual(1_790_000_000))
            .latency(Latency::instant())
            .scenario(Scenario::parse(scenario, "seeds.yaml").unwrap())
            .start()
            .await;
        match started {
            Ok(pve) => {
                let pem = tls.join("cert.pem");
                return (pve, Ca { pem, _dir: tls });
            }
            Err(e) => last = Some(e),
        }
    }
    panic!("no loopback address with port 8006 free: {last:?}");
}

struct Env {
    dir: TempDir,
    /// The CA file the operator trusts, when the environment keeps it.
    ca: Option<Ca>,
    sa: Standalone,
    http: reqwest::Client,
}

/// A standalone operator over a new directory, its clients sent to
/// `routes` (host -> fake) and trusting `ca`.
fn env(routes: &[(&str, &Running)], ca: &Path, extra_env: &[(&str, &str)]) -> Env {
    let dir = temp("dir");
    let addrs: Vec<(String, std::net::IpAddr)> = routes
        .iter()
        .map(|(h, p)| ((*h).to_string(), p.addr().ip()))
        .collect();
    let base = operator_tuning().unwrap();
    let tuning: pve_operator::controller::ClientTuning = Arc::new(move |mut b| {
        b = base(b);
        for (h, a) in &addrs {
            b = b.resolve(h.clone(), *a);
        }
        b
    });
    let mut opts = Options::new(&*dir);
    opts.max_concurrent = 10;
    let mut vars = vec![("PVE_CA_BUNDLE".to_string(), ca.display().to_string())];
    vars.extend(
        extra_env
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string())),
    );
    opts.dialects = Context::from_env(vars);
    let sa = Standalone::new(opts, Arc::new(Operator::new(Some(tuning))));
    let http = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .unwrap();
    Env {
        dir,
        ca: None,
        sa,
        http,
    }
}

impl Env {
    fn copy(&self, seed_path: &str) {
        let name = seed_path.replace('/', "-");
        std::fs::write(self.dir.join(name), seed(seed_path)).unwrap();
    }

    fn write(&self, file: &str, text: &str) {
        std::fs::write(self.dir.join(file), text).unwrap();
    }

    fn status(&self, name: &str) -> MachineStatus {
        self.sa.machine_status(name).unwrap_or_default()
    }

    /// The status the status file gives the other system's object
    /// `kind`/`name` (`apiVersion` and its own shape), after its Machine's.
    fn theirs(&self, api_version: &str, kind: &str, name: &str) -> Value {
        let entries = pve_operator::standalone::read_statuses(&self.dir);
        let at = |k: &str, api: Option<&str>| {
            entries
                .iter()
                .position(|(e, _)| e.kind == k && e.name == name && e.api_version.as_deref() == api)
        };
        let mine = at("Machine", None).expect("the Machine's status");
        let i = at(kind, Some(api_version))
            .unwrap_or_else(|| panic!("no {api_version} {kind} {name} in {:?}", entries));
        assert_eq!(entries[i].1, entries[mine].1, "in the same status file");
        assert!(i > mine, "after the Machine's");
        entries[i].0.status.clone()
    }

    async fn converge(&mut self, max: usize, done: impl Fn(&Self) -> bool) {
        for _ in 0..max {
            self.sa.pass(true).await;
            if done(self) {
                return;
            }
        }
        let statuses: Vec<String> = std::fs::read_dir(&self.dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".status.yaml"))
            .map(|e| std::fs::read_to_string(e.path()).unwrap())
            .collect();
        let (found, errors) = pve_operator::standalone::check_dir(&self.dir).unwrap();
        panic!(
            "did not converge in {max} passes; statuses: {}\nerrors: {errors:?}\nfound: {}",
            statuses.join("\n"),
            found.len()
        );
    }

    async fn running(&mut self, name: &str) -> MachineStatus {
        self.converge(10, |e| {
            let st = e.status(name);
            st.phase == Phase::Running
                && st
                    .conditions
                    .iter()
                    .find(|c| c.kind == "Ready")
                    .is_some_and(|c| c.reason != "Reconciling")
        })
        .await;
        self.status(name)
    }

    async fn get(&self, pve: &Running, path: &str) -> Value {
        let r = self
            .http
            .get(format!("{}{path}", pve.api_url()))
            .header(
                "Authorization",
                format!("PVEAPIToken={}={}", common::TOKEN, common::SECRET),
            )
            .send()
            .await
            .unwrap();
        let status = r.status();
        let v: Value = r.json().await.unwrap_or(Value::Null);
        assert!(status.is_success(), "{path}: {status} {v}");
        v["data"].clone()
    }

    async fn config(&self, pve: &Running, node: &str, vmid: u32) -> BTreeMap<String, String> {
        let v = self
            .get(pve, &format!("/nodes/{node}/qemu/{vmid}/config"))
            .await;
        v.as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    v.as_str().map_or_else(|| v.to_string(), str::to_string),
                )
            })
            .collect()
    }
}

impl Env {
    /// The sources of the clone tasks a node ran (`qmclone`'s ID is the
    /// source's VMID).
    async fn clone_sources(&self, pve: &Running, node: &str) -> Vec<String> {
        self.get(
            pve,
            &format!("/nodes/{node}/tasks?typefilter=qmclone&limit=500"),
        )
        .await
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["id"].as_str().map(str::to_string))
        .collect()
    }
}

fn cond(st: &MachineStatus, kind: &str) -> (String, String, String) {
    st.conditions
        .iter()
        .find(|c| c.kind == kind)
        .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
        .unwrap_or_default()
}

const ROOT_TOKEN: &str = "
  - userid: root@pam
    tokens:
      - { tokenid: automation, secret: 0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60, privsep: false }";

// ---------------------------------------------------------------------
// Crossplane

/// The credentials.json the ProviderConfig names (the seed shows only the
/// reference): PVE's API token.
const CROSSPLANE_SECRET: &str = r#"apiVersion: v1
kind: Secret
metadata:
  name: proxmox-credentials
  namespace: crossplane-system
stringData:
  credentials.json: '{"tokenID": "root@pam!automation", "tokenSecret": "0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60"}'
"#;

#[tokio::test]
async fn crossplane_provider_config_and_proxmox_vm_apply_unchanged() {
    let (site_a, ca) = fake(&format!(
        "nodes: [{{ name: pve1 }}]
users:{ROOT_TOKEN}
vms:
  - {{ vmid: 9000, node: pve1, name: ubuntu-22.04-cloud, config: {{ template: 1, scsi0: 'local-lvm:base-9000-disk-0,size=8G', cores: 1, memory: 1024, net0: 'virtio=BC:24:11:00:00:01,bridge=vmbr0' }} }}
"
    ))
    .await;
    // both sites' hosts reach the fake (nothing leaves loopback)
    let mut e = env(
        &[
            ("ml110-01.sankofa.nexus", &site_a),
            ("r630-01.sankofa.nexus", &site_a),
        ],
        &ca,
        &[],
    );
    e.copy("crossplane/provider-config.yaml");
    e.copy("crossplane/web-server-01.yaml");
    e.write("secret.yaml", CROSSPLANE_SECRET);
    let st = e.running("web-server-01").await;
    assert_eq!(st.node.as_deref(), Some("pve1"));
    let vmid = st.vmid.unwrap();
    let c = e.config(&site_a, "pve1", vmid).await;
    assert_eq!(c["name"], "web-server-01");
    assert_eq!(c["cores"], "4");
    assert_eq!(c["memory"], "8192");
    assert!(c["scsi0"].contains("size=100G"), "{c:?}");
    assert!(
        e.clone_sources(&site_a, "pve1")
            .await
            .contains(&"9000".into()),
        "cloned from the image's template"
    );
    assert!(c["net0"].contains("bridge=vmbr0"), "{c:?}");
    assert_eq!(
        e.get(&site_a, &format!("/nodes/pve1/qemu/{vmid}/status/current"))
            .await["status"],
        "running"
    );
    // The ProxmoxVM's status in the provider's shape, beside the
    // Machine's: vmId, state, ipAddress, conditions.
    let theirs = e.theirs(
        "proxmox.sankofa.nexus/v1alpha1",
        "ProxmoxVM",
        "web-server-01",
    );
    assert_eq!(theirs["vmId"], vmid, "{theirs}");
    assert_eq!(theirs["state"], "running", "{theirs}");
    assert!(theirs.get("phase").is_none(), "{theirs}");
    assert!(
        theirs["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True"),
        "{theirs}"
    );
    // The table shows the machine once.
    let table = pve_operator::standalone::status_table(&e.dir);
    assert_eq!(table.matches("web-server-01").count(), 1, "{table}");
}

/// A ProxmoxVM's `name: "my vm"` is `my-vm` in PVE, and its status says
/// so (until the name is one PVE takes as given).
#[tokio::test]
async fn crossplane_a_rewritten_vm_name_is_reported() {
    let (site_a, ca) = fake(&format!(
        "nodes: [{{ name: pve1 }}]
users:{ROOT_TOKEN}
vms:
  - {{ vmid: 9000, node: pve1, name: ubuntu-22.04-cloud, config: {{ template: 1, scsi0: 'local-lvm:base-9000-disk-0,size=8G', cores: 1, memory: 1024, net0: 'virtio=BC:24:11:00:00:01,bridge=vmbr0' }} }}
"
    ))
    .await;
    let mut e = env(&[("ml110-01.sankofa.nexus", &site_a)], &ca, &[]);
    e.copy("crossplane/provider-config.yaml");
    e.write("secret.yaml", CROSSPLANE_SECRET);
    let vm = seed("crossplane/web-server-01.yaml");
    e.write(
        "vm.yaml",
        &vm.replace("    name: web-server-01", "    name: \"my vm\""),
    );
    let st = e.running("web-server-01").await;
    let c = e.config(&site_a, "pve1", st.vmid.unwrap()).await;
    assert_eq!(c["name"], "my-vm");
    let (ok, reason, msg) = cond(&st, "NameAccepted");
    assert_eq!((ok.as_str(), reason.as_str()), ("False", "NameRewritten"));
    assert!(msg.contains("'my-vm'") && msg.contains("'my vm'"), "{msg}");
    let table = pve_operator::standalone::status_table(&e.dir);
    assert!(table.contains("NameRewritten"), "{table}");
    // a name PVE takes as given: nothing to say
    e.write(
        "vm.yaml",
        &vm.replace("    name: web-server-01", "    name: my-vm"),
    );
    e.converge(3, |e| {
        cond(&e.status("web-server-01"), "NameAccepted")
            .1
            .is_empty()
    })
    .await;
}

#[tokio::test]
async fn crossplane_sites_are_clusters_and_a_vmid_image_clones_that_template() {
    let scenario = |node: &str| {
        format!(
            "nodes: [{{ name: {node} }}]
users:{ROOT_TOKEN}
vms:
  - {{ vmid: 100, node: {node}, name: base, config: {{ template: 1, scsi0: 'local-lvm:base-100-disk-0,size=4G', cores: 1, memory: 512 }} }}
"
        )
    };
    let (a, ca) = fake(&scenario("pve1")).await;
    let (b, ca_b) = fake(&scenario("r630-01")).await;
    // one CA bundle with both fakes' certificates
    let bundle = ca.with_file_name("bundle.pem");
    std::fs::write(
        &bundle,
        std::fs::read_to_string(&ca).unwrap() + &std::fs::read_to_string(&ca_b).unwrap(),
    )
    .unwrap();
    let mut e = env(
        &[
            ("ml110-01.sankofa.nexus", &a),
            ("r630-01.sankofa.nexus", &b),
        ],
        &bundle,
        &[],
    );
    e.copy("crossplane/provider-config.yaml");
    e.write("secret.yaml", CROSSPLANE_SECRET);
    // the seed's VM on each site, the image given as a template's VMID
    let vm = |name: &str, node: &str, site: &str| {
        seed("crossplane/web-server-01.yaml")
            .replace("web-server-01", name)
            .replace("node: pve1", &format!("node: {node}"))
            .replace("us-sfvalley", site)
            .replace("ubuntu-22.04-cloud", "\"100\"")
            .replace("100Gi", "10Gi")
    };
    // the Multi-Tenancy fragment in the seed's metadata
    e.write(
        "us.yaml",
        &vm("us-1", "pve1", "us-sfvalley").replace(
            "metadata:\n  name: us-1\n",
            "metadata:\n  name: us-1\n  labels:\n    tenant-id: \"customer-123\"\n",
        ),
    );
    e.write("eu.yaml", &vm("eu-1", "r630-01", "eu-west-1"));
    let us = e.running("us-1").await;
    let c = e.config(&a, "pve1", us.vmid.unwrap()).await;
    assert!(
        c["tags"].split(';').any(|t| t == "tenant_customer-123"),
        "{c:?}"
    );
    let st = e.running("eu-1").await;
    assert_eq!(st.node.as_deref(), Some("r630-01"));
    let c = e.config(&b, "r630-01", st.vmid.unwrap()).await;
    assert!(c["scsi0"].contains("size=10G"), "{c:?}");
    assert!(e.clone_sources(&b, "r630-01").await.contains(&"100".into()));
    let names = |v: Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["name"].as_str().map(str::to_string))
            .collect()
    };
    assert!(names(e.get(&a, "/cluster/resources?type=vm").await).contains(&"us-1".into()));
    assert!(!names(e.get(&a, "/cluster/resources?type=vm").await).contains(&"eu-1".into()));
    assert!(names(e.get(&b, "/cluster/resources?type=vm").await).contains(&"eu-1".into()));
    // a site the ProviderConfig does not have is refused by name
    e.write("bad.yaml", &vm("x-1", "pve1", "ap-south-1"));
    let (_, errors) = pve_operator::standalone::check_dir(&e.dir).unwrap();
    assert!(
        errors.iter().any(|x| x.to_string().contains(
            "site 'ap-south-1' is not a site of ProviderConfig 'proxmox-provider-config'"
        )),
        "{errors:?}"
    );
}

// ---------------------------------------------------------------------
// VirtRigaud

/// Two nodes and the third the placement policy leaves out, the bridges
/// of its network names, its templates (cloud-init on `ide2`, as PVE's
/// cloud-image templates have it), and the token of its Secret with the
/// roles its documents grant, and SDN.Use on the plain bridges, which
/// those roles lack and PVE asks for a VM's network devices (the operator
/// reports it missing; an administrator grants it).
fn virtrigaud_scenario() -> String {
    format!(
        "cluster: lab
nodes:
  - {{ name: pve-node-1, bridges: [vmbr0, vmbr1, vmbr2], memory: 64G }}
  - {{ name: pve-node-2, bridges: [vmbr0, vmbr1, vmbr2], memory: 64G }}
  - {{ name: pve-node-3, bridges: [vmbr0, vmbr1, vmbr2], memory: 128G }}
users:{ROOT_TOKEN}
  - userid: virtrigaud@pve
    password: secure-password
    tokens:
      - {{ tokenid: vrtg-token, secret: xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, privsep: false }}
acl:
  - {{ path: /, roles: [PVEVMAdmin, PVEDatastoreUser, PVEAuditor], users: [virtrigaud@pve] }}
  - {{ path: /sdn/zones/localnetwork, roles: [PVESDNUser], users: [virtrigaud@pve] }}
vms:
  - {{ vmid: 9000, node: pve-node-1, name: ubuntu-22-template, config: {{ template: 1, scsi0: 'local-lvm:base-9000-disk-0,size=8G', ide2: 'local-lvm:vm-9000-cloudinit,media=cdrom', cores: 1, memory: 1024 }} }}
  - {{ vmid: 9001, node: pve-node-1, name: template-vm, config: {{ template: 1, scsi0: 'local-lvm:base-9001-disk-0,size=4G', cores: 1, memory: 512 }} }}
"
    )
}

async fn virtrigaud() -> (Running, Env) {
    let (pve, ca) = fake(&virtrigaud_scenario()).await;
    let mut e = env(&[("pve.example.com", &pve)], &ca, &[]);
    e.ca = Some(ca);
    (pve, e)
}

#[tokio::test]
async fn virtrigaud_virtual_machine_class_image_snapshot_and_reconfigure() {
    let (pve, mut e) = virtrigaud().await;
    e.copy("virtrigaud/provider-proxmox-prod.yaml");
    e.copy("virtrigaud/pve-credentials-token.yaml");
    e.copy("virtrigaud/vmclass-small.yaml");
    e.copy("virtrigaud/vmimage-ubuntu-22.yaml");
    e.copy("virtrigaud/virtualmachine-web-server.yaml");
    let st = e.running("web-server").await;
    let (node, vmid) = (st.node.clone().unwrap(), st.vmid.unwrap());
    assert_eq!(node, "pve-node-1", "clones stay beside their template");
    let c = e.config(&pve, &node, vmid).await;
    // VMClass small: 2 CPUs, 4Gi, q35, UEFI (with its EFI disk); the 2
    // are vCPUs plugged into as many cores as the node has CPUs (8), room
    // for VirtRigaud's online CPU changes
    assert_eq!(
        (c["cores"].as_str(), c["vcpus"].as_str()),
        ("8", "2"),
        "{c:?}"
    );
    assert_eq!(c["memory"], "4096");
    assert_eq!(c["machine"], "q35");
    assert_eq!(c["bios"], "ovmf");
    assert!(c["efidisk0"].contains("efitype=4m"), "{c:?}");
    // VMImage ubuntu-22: a clone of the template of that name
    assert!(e.clone_sources(&pve, &node).await.contains(&"9000".into()));
    assert!(c["scsi0"].contains("size=40G"), "disk root 40Gi: {c:?}");
    // network lan: vmbr0
    assert!(c["net0"].contains("bridge=vmbr0"), "{c:?}");
    // the template's cloud-init drive on ide2 is the only one
    assert!(c["ide2"].contains("cloudinit"), "{c:?}");
    assert!(!c.contains_key("ide3"), "a second cloud-init drive: {c:?}");
    // inline user data: the user and key through PVE's options, the
    // packages refused by name
    assert_eq!(c["ciuser"], "ubuntu");
    assert!(c["sshkeys"].contains("ssh-ed25519"), "{c:?}");
    let (s, reason, msg) = cond(&st, "CloudInitConfigured");
    assert_eq!(
        (s.as_str(), reason.as_str()),
        ("False", "UserDataNotExpressible")
    );
    assert!(msg.contains("packages"), "{msg}");
    let table = pve_operator::standalone::status_table(&e.dir);
    assert!(table.contains("UserDataNotExpressible"), "{table}");
    // The VirtualMachine's status in VirtRigaud's shape, beside the
    // Machine's: phase, powerState, addresses, consoleURL, vmid.
    let theirs = e.theirs(
        "infra.virtrigaud.io/v1beta1",
        "VirtualMachine",
        "web-server",
    );
    assert_eq!(theirs["phase"], "Running", "{theirs}");
    assert_eq!(theirs["powerState"], "On", "{theirs}");
    assert_eq!(theirs["vmid"], vmid, "{theirs}");
    assert_eq!(theirs["ips"], theirs["ipAddresses"], "{theirs}");
    assert!(
        theirs["consoleURL"]
            .as_str()
            .is_some_and(|u| u.contains(&format!("vmid={vmid}")) || u.contains(&vmid.to_string())),
        "{theirs}"
    );

    // Reconfiguration: classRef small -> large (the seed's VMClass large),
    // hot-plugged into the running VM
    e.write(
        "virtrigaud-reconfigure-large.yaml",
        seed("virtrigaud/reconfigure-large.yaml")
            .split("---\n")
            .nth(1)
            .unwrap(),
    );
    e.write(
        "virtrigaud-virtualmachine-web-server.yaml",
        &seed("virtrigaud/virtualmachine-web-server.yaml").replace("name: small", "name: large"),
    );
    e.converge(6, |e| {
        let st = e.status("web-server");
        cond(&st, "Ready").0 == "True" && cond(&st, "ResourcesAllocated").1 == "AllocationSucceeded"
    })
    .await;
    let c = e.config(&pve, &node, vmid).await;
    assert_eq!(
        (
            c["cores"].as_str(),
            c["vcpus"].as_str(),
            c["memory"].as_str()
        ),
        ("8", "8", "16384")
    );
    // Applied to the running VM, nothing left for a power cycle.
    let pending = e
        .get(&pve, &format!("/nodes/{node}/qemu/{vmid}/pending"))
        .await;
    assert!(
        pending
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i.get("pending").is_none() && i.get("delete").is_none()),
        "{pending}"
    );
    let current = e
        .get(&pve, &format!("/nodes/{node}/qemu/{vmid}/status/current"))
        .await;
    assert_eq!(current["status"], "running");
    assert_eq!(current["cpus"], 8, "{current}");

    // VMSnapshot with memory
    e.copy("virtrigaud/vmsnapshot-before-upgrade-memory.yaml");
    e.converge(4, |e| {
        e.sa.status("MachineSnapshot", "before-upgrade")
            .is_some_and(|s| s["ready"] == true)
    })
    .await;
    let snaps = e
        .get(&pve, &format!("/nodes/{node}/qemu/{vmid}/snapshot"))
        .await;
    let snap = snaps
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "before-upgrade")
        .unwrap_or_else(|| panic!("{snaps}"));
    assert_eq!(snap["description"], "Pre-maintenance snapshot");
    assert_eq!(snap["vmstate"], 1, "{snap}");
}

#[tokio::test]
async fn virtrigaud_reconfiguration_document_alone_is_refused_not_applied() {
    let (_pve, e) = virtrigaud().await;
    e.copy("virtrigaud/provider-proxmox-prod.yaml");
    e.copy("virtrigaud/pve-credentials-token.yaml");
    e.copy("virtrigaud/reconfigure-large.yaml");
    let (found, errors) = pve_operator::standalone::check_dir(&e.dir).unwrap();
    // the "... existing spec ..." excerpt has no providerRef: unreadable
    assert!(
        errors
            .iter()
            .any(|x| x.to_string().contains("spec.providerRef is required")),
        "{errors:?}"
    );
    assert!(!found.iter().any(|r| matches!(r, Resource::Machine(_))));
}

/// VMClass `medium` is named by the multi-NIC example but given nowhere.
const MEDIUM: &str = "apiVersion: infra.virtrigaud.io/v1beta1
kind: VMClass
metadata:
  name: medium
spec:
  cpus: 4
  memory: \"8Gi\"
";

#[tokio::test]
async fn virtrigaud_multi_nic_vm_with_password_credentials() {
    let (pve, mut e) = virtrigaud().await;
    e.copy("virtrigaud/provider-proxmox-prod-v0.2.3.yaml");
    e.copy("virtrigaud/pve-credentials-password.yaml");
    e.copy("virtrigaud/vmimage-ubuntu-22.yaml");
    e.copy("virtrigaud/multi-nic-vm.yaml");
    e.write("medium.yaml", MEDIUM);
    let st = e.running("multi-nic-vm").await;
    let c = e
        .config(&pve, st.node.as_deref().unwrap(), st.vmid.unwrap())
        .await;
    assert_eq!((c["vcpus"].as_str(), c["memory"].as_str()), ("4", "8192"));
    assert!(
        c["net0"].contains("bridge=vmbr0") && !c["net0"].contains("tag="),
        "{c:?}"
    );
    assert!(
        c["net1"].contains("bridge=vmbr1") && c["net1"].contains("tag=100"),
        "{c:?}"
    );
    assert!(c["net2"].contains("bridge=vmbr2"), "{c:?}");
    assert!(
        c["net2"].to_uppercase().contains("02:00:00:AA:BB:CC"),
        "{c:?}"
    );
    let parts = |v: &str| -> std::collections::BTreeSet<String> {
        v.split(',').map(str::to_string).collect()
    };
    assert_eq!(
        parts(&c["ipconfig0"]),
        parts("ip=192.168.1.100/24,gw=192.168.1.1")
    );
    assert_eq!(c["ipconfig1"], "ip=10.0.100.50/24");
    assert_eq!(c["nameserver"], "8.8.8.8 1.1.1.1");
    assert!(!c.contains_key("ide3"), "{c:?}");
}

#[tokio::test]
async fn virtrigaud_clones_of_a_template_and_of_an_ordinary_vm_and_placement() {
    let (pve, mut e) = virtrigaud().await;
    e.copy("virtrigaud/provider-proxmox-prod.yaml");
    e.copy("virtrigaud/pve-credentials-token.yaml");
    e.copy("virtrigaud/vmclass-small.yaml");
    e.copy("virtrigaud/vmimage-ubuntu-22.yaml");
    e.copy("virtrigaud/virtualmachine-web-server.yaml");
    e.copy("virtrigaud/vmclone-web-clone.yaml");
    e.copy("virtrigaud/vmplacementpolicy-production.yaml");
    // a full clone (the seed's `linkedClone: false`) of the ordinary VM
    // web-server
    e.write(
        "full.yaml",
        &seed("virtrigaud/vmclone-web-clone.yaml")
            .replace("web-clone", "web-copy")
            .replace("template-vm", "web-server")
            .replace("linkedClone: true  # Default", "linkedClone: false"),
    );
    // databases placed by the seed's policy
    let db = |n: &str| {
        format!(
            "apiVersion: infra.virtrigaud.io/v1beta1
kind: VirtualMachine
metadata:
  name: {n}
  labels: {{ vm.type: database }}
spec:
  providerRef: {{ name: proxmox-prod }}
  classRef: {{ name: small }}
  placementRef: {{ name: production-placement }}
  powerState: Off
"
        )
    };
    e.write("db-1.yaml", &db("db-1"));
    e.write("db-2.yaml", &db("db-2"));
    let clone = e.running("web-clone").await;
    let c = e
        .config(&pve, clone.node.as_deref().unwrap(), clone.vmid.unwrap())
        .await;
    assert!(
        e.clone_sources(&pve, "pve-node-1")
            .await
            .contains(&"9001".into()),
        "{c:?}"
    );
    // template-vm is declared by no document: the clone keeps its CPU and
    // memory rather than taking the operator's defaults.
    assert_eq!(
        (c["cores"].as_str(), c["memory"].as_str()),
        ("1", "512"),
        "{c:?}"
    );
    e.running("web-server").await;
    let copy = e.running("web-copy").await;
    let ws = e.status("web-server");
    let c = e
        .config(&pve, copy.node.as_deref().unwrap(), copy.vmid.unwrap())
        .await;
    let ws_vmid = ws.vmid.unwrap().to_string();
    assert!(
        e.clone_sources(&pve, ws.node.as_deref().unwrap())
            .await
            .contains(&ws_vmid)
    );
    assert_eq!(c["vcpus"], "2", "the source VirtualMachine's class");
    assert_ne!(copy.vmid, ws.vmid);
    e.converge(6, |e| {
        e.status("db-1").phase == Phase::Stopped && e.status("db-2").phase == Phase::Stopped
    })
    .await;
    let (n1, n2) = (
        e.status("db-1").node.unwrap(),
        e.status("db-2").node.unwrap(),
    );
    assert!(
        n1 != "pve-node-3" && n2 != "pve-node-3",
        "nodeSelector: {n1} {n2}"
    );
    assert_ne!(n1, n2, "anti-affinity on vm.type In [database]");
}

impl Env {
    /// The VMIDs PVE has.
    async fn vmids(&self, pve: &Running) -> Vec<u64> {
        self.get(pve, "/cluster/resources?type=vm")
            .await
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["vmid"].as_u64())
            .collect()
    }
}

/// The seed's Provider with `deleteOnRemoval: true`.
fn provider_deleting_on_removal() -> String {
    seed("virtrigaud/provider-proxmox-prod.yaml").replace(
        "  type: proxmox\n",
        "  type: proxmox\n  deleteOnRemoval: true\n",
    )
}

/// Without `deleteOnRemoval` (the seeds as written), a removed
/// VirtualMachine's VM stays and is reported, as a native Machine's.
#[tokio::test]
async fn virtrigaud_removal_without_the_opt_in_deletes_nothing() {
    let (pve, mut e) = virtrigaud().await;
    e.sa.opts.removal_grace = Duration::ZERO;
    e.copy("virtrigaud/provider-proxmox-prod.yaml");
    e.copy("virtrigaud/pve-credentials-token.yaml");
    e.copy("virtrigaud/vmclass-small.yaml");
    e.copy("virtrigaud/vmimage-ubuntu-22.yaml");
    e.copy("virtrigaud/virtualmachine-web-server.yaml");
    let vmid = e.running("web-server").await.vmid.unwrap();
    std::fs::remove_file(e.dir.join("virtrigaud-virtualmachine-web-server.yaml")).unwrap();
    for _ in 0..4 {
        e.sa.pass(true).await;
    }
    assert!(e.vmids(&pve).await.contains(&u64::from(vmid)));
    let (_, reason, msg) = cond(&e.status("web-server"), "Ready");
    assert_eq!(reason, "ManifestError");
    assert!(msg.contains("pve.fake-pve.io/delete"), "{msg}");
}

/// With the Provider's `deleteOnRemoval: true`, removing a
/// VirtualMachine's document deletes its VM once it stays missing (two
/// reads); an unreadable document, or one removed with its Provider,
/// deletes nothing.
#[tokio::test]
async fn virtrigaud_removal_deletes_with_the_providers_opt_in_only() {
    let (pve, mut e) = virtrigaud().await;
    e.sa.opts.removal_grace = Duration::ZERO;
    e.write("provider.yaml", &provider_deleting_on_removal());
    e.copy("virtrigaud/pve-credentials-token.yaml");
    e.copy("virtrigaud/vmclass-small.yaml");
    e.copy("virtrigaud/vmimage-ubuntu-22.yaml");
    let vm = seed("virtrigaud/virtualmachine-web-server.yaml");
    e.write("vm.yaml", &vm);
    let vmid = u64::from(e.running("web-server").await.vmid.unwrap());
    // unreadable: kept
    e.write("vm.yaml", &vm.replacen("spec:", "spec: [", 1));
    for _ in 0..3 {
        e.sa.pass(true).await;
    }
    assert!(
        e.vmids(&pve).await.contains(&vmid),
        "unreadable is no removal"
    );
    assert_eq!(cond(&e.status("web-server"), "Ready").1, "ManifestError");
    // removed with its Provider: kept
    std::fs::remove_file(e.dir.join("vm.yaml")).unwrap();
    std::fs::remove_file(e.dir.join("provider.yaml")).unwrap();
    for _ in 0..3 {
        e.sa.pass(true).await;
    }
    assert!(e.vmids(&pve).await.contains(&vmid), "no provider says so");
    assert!(e.sa.tracks("Machine", "web-server"));
    // the Provider back, saying so: the first read reports, the next
    // deletes
    e.write("provider.yaml", &provider_deleting_on_removal());
    e.sa.pass(true).await;
    assert!(e.vmids(&pve).await.contains(&vmid));
    let msg =
        e.sa.problem("Machine", "web-server")
            .unwrap_or_default()
            .to_string();
    assert!(msg.contains("deleteOnRemoval"), "{msg}");
    // not before the grace has passed
    e.sa.opts.removal_grace = Duration::from_secs(3600);
    for _ in 0..3 {
        e.sa.pass(true).await;
    }
    assert!(e.vmids(&pve).await.contains(&vmid), "within the grace");
    // the opt-in withdrawn, then given again: the wait starts over
    e.copy("virtrigaud/provider-proxmox-prod.yaml");
    std::fs::remove_file(e.dir.join("provider.yaml")).unwrap();
    e.sa.pass(true).await;
    let msg =
        e.sa.problem("Machine", "web-server")
            .unwrap_or_default()
            .to_string();
    assert!(msg.contains("pve.fake-pve.io/delete"), "{msg}");
    std::fs::remove_file(e.dir.join("virtrigaud-provider-proxmox-prod.yaml")).unwrap();
    e.write("provider.yaml", &provider_deleting_on_removal());
    e.sa.opts.removal_grace = Duration::ZERO;
    e.sa.pass(true).await;
    assert!(
        e.vmids(&pve).await.contains(&vmid),
        "seen missing once since"
    );
    e.converge(4, |e| !e.sa.tracks("Machine", "web-server"))
        .await;
    assert!(!e.vmids(&pve).await.contains(&vmid), "deleted");
    // a native document cannot carry the operator's mark
    e.write(
        "native.yaml",
        "apiVersion: pve.fake-pve.io/v1alpha1
kind: Machine
metadata:
  name: n
  annotations: { pve.fake-pve.io/delete-on-removal: 'true' }
spec: { cluster: proxmox-prod }
",
    );
    let (_, errors) = pve_operator::standalone::check_dir(&e.dir).unwrap();
    assert!(
        errors
            .iter()
            .any(|m| m.to_string().contains("is the operator's own")),
        "{errors:?}"
    );
}

/// `deleteOnRemoval` of a Crossplane ProviderConfig marks its sites'
/// clusters and their ProxmoxVMs; anything but true or false is refused.
#[test]
fn crossplane_delete_on_removal_marks_its_sites_and_vms() {
    let dir = temp("removal");
    let config = seed("crossplane/provider-config.yaml");
    std::fs::write(dir.join("secret.yaml"), CROSSPLANE_SECRET).unwrap();
    std::fs::write(dir.join("vm.yaml"), seed("crossplane/web-server-01.yaml")).unwrap();
    let marked = |dir: &Path| -> BTreeMap<String, bool> {
        let l = pve_operator::standalone::load_dir(dir).unwrap();
        assert!(l.errors.is_empty(), "{:?}", l.errors);
        l.found
            .iter()
            .filter(|(r, _)| r.kind() != "Secret")
            .map(|(r, _)| (format!("{}/{}", r.kind(), r.name()), r.removal_deletes()))
            .collect()
    };
    std::fs::write(dir.join("config.yaml"), &config).unwrap();
    let off = marked(&dir);
    assert_eq!(off.len(), 3, "{off:?}");
    assert!(off.values().all(|m| !m), "not by default: {off:?}");
    std::fs::write(
        dir.join("config.yaml"),
        config.replace("spec:\n", "spec:\n  deleteOnRemoval: true\n"),
    )
    .unwrap();
    let on = marked(&dir);
    assert!(on.values().all(|m| *m), "{on:?}");
    std::fs::write(
        dir.join("config.yaml"),
        config.replace("spec:\n", "spec:\n  deleteOnRemoval: yes please\n"),
    )
    .unwrap();
    let (_, errors) = pve_operator::standalone::check_dir(&dir).unwrap();
    assert!(
        errors.iter().any(|e| e
            .to_string()
            .contains("spec.deleteOnRemoval: expected true or false")),
        "{errors:?}"
    );
}

/// The seed's `VMClone web-clone` runs; a native `Machine web-clone`
/// beside it (in a file read first) takes nothing over: the clone keeps
/// its CPU, memory and power, both documents are refused and named, and
/// `check` fails.
#[tokio::test]
async fn a_native_machine_beside_a_vmclone_of_its_name_takes_nothing_over() {
    let (pve, mut e) = virtrigaud().await;
    e.copy("virtrigaud/provider-proxmox-prod.yaml");
    e.copy("virtrigaud/pve-credentials-token.yaml");
    e.copy("virtrigaud/vmclone-web-clone.yaml");
    let st = e.running("web-clone").await;
    let (node, vmid) = (st.node.clone().unwrap(), st.vmid.unwrap());
    let before = e.config(&pve, &node, vmid).await;
    e.write(
        "a-web-clone.yaml",
        "apiVersion: pve.fake-pve.io/v1alpha1
kind: Machine
metadata: { name: web-clone }
spec:
  cluster: proxmox-prod
  cpu: { cores: 3 }
  memory: 1Gi
  powerState: Off
",
    );
    for _ in 0..3 {
        e.sa.pass(true).await;
    }
    let after = e.config(&pve, &node, vmid).await;
    assert_eq!(
        (&after["cores"], &after["memory"]),
        (&before["cores"], &before["memory"])
    );
    let cur = e
        .get(&pve, &format!("/nodes/{node}/qemu/{vmid}/status/current"))
        .await;
    assert_eq!(cur["status"], "running");
    let (_, reason, msg) = cond(&e.status("web-clone"), "Ready");
    assert_eq!(reason, "ManifestError");
    assert!(
        msg.contains("a-web-clone.yaml document 1 (Machine/web-clone)")
            && msg.contains("virtrigaud-vmclone-web-clone.yaml document 1 (VMClone/web-clone)"),
        "{msg}"
    );
    let (found, errors) = pve_operator::standalone::check_dir(&e.dir).unwrap();
    assert!(
        !found.iter().any(|r| r.name() == "web-clone"),
        "neither is applied"
    );
    assert_eq!(errors.len(), 2, "{errors:?}");
}

#[tokio::test]
async fn virtrigaud_linked_clone_of_an_ordinary_vm_is_refused_clearly() {
    let (_pve, mut e) = virtrigaud().await;
    e.copy("virtrigaud/provider-proxmox-prod.yaml");
    e.copy("virtrigaud/pve-credentials-token.yaml");
    e.copy("virtrigaud/vmclass-small.yaml");
    e.copy("virtrigaud/vmimage-ubuntu-22.yaml");
    e.copy("virtrigaud/virtualmachine-web-server.yaml");
    e.write(
        "linked.yaml",
        &seed("virtrigaud/vmclone-web-clone.yaml").replace("template-vm", "web-server"),
    );
    e.running("web-server").await;
    e.converge(4, |e| {
        cond(&e.status("web-clone"), "VMCreated")
            .2
            .contains("is not a template: a linked clone needs one")
    })
    .await;
}

/// The seed's VMClass standard (`storage.type: thick` on `ssd-storage`):
/// its disks are made on that storage when PVE provisions it thickly (an
/// LVM volume group here), and a thin one refuses the machine, saying why.
#[tokio::test]
async fn virtrigaud_thick_class_disks_go_only_to_a_thick_storage() {
    let scenario = format!(
        "{}storages:
  - {{ id: local, type: dir, path: /var/lib/vz, content: [iso, vztmpl, backup, snippets] }}
  - {{ id: local-lvm, type: lvmthin, thinpool: data, vgname: pve, content: [images, rootdir] }}
  - {{ id: ssd-storage, type: lvm, vgname: ssd, content: [images, rootdir] }}
",
        virtrigaud_scenario()
    );
    let (pve, ca) = fake(&scenario).await;
    let mut e = env(&[("pve.example.com", &pve)], &ca, &[]);
    e.copy("virtrigaud/provider-proxmox-prod.yaml");
    e.copy("virtrigaud/pve-credentials-token.yaml");
    e.copy("virtrigaud/vmclass-standard.yaml");
    e.write(
        "thin-class.yaml",
        &seed("virtrigaud/vmclass-standard.yaml")
            .replace("name: standard", "name: standard-thin")
            .replace("ssd-storage", "local-lvm"),
    );
    let vm = |name: &str, class: &str| {
        format!(
            "apiVersion: infra.virtrigaud.io/v1beta1
kind: VirtualMachine
metadata: {{ name: {name} }}
spec:
  providerRef: {{ name: proxmox-prod }}
  classRef: {{ name: {class} }}
  disks: [{{ name: root, size: 10Gi }}]
  powerState: Off
"
        )
    };
    e.write("thick.yaml", &vm("thick", "standard"));
    e.write("thin.yaml", &vm("thin", "standard-thin"));
    e.converge(8, |e| {
        e.status("thick").phase == Phase::Stopped && e.status("thin").phase == Phase::Error
    })
    .await;
    let st = e.status("thick");
    let c = e
        .config(&pve, st.node.as_deref().unwrap(), st.vmid.unwrap())
        .await;
    assert!(c["scsi0"].starts_with("ssd-storage:"), "{c:?}");
    assert_eq!((c["vcpus"].as_str(), c["memory"].as_str()), ("4", "8192"));
    let thin = e.status("thin");
    assert_eq!(thin.vmid, None, "no VM is made");
    let (s, reason, msg) = cond(&thin, "ResourcesAllocated");
    assert_eq!(
        (s.as_str(), reason.as_str()),
        ("False", "ThinProvisionedStorage")
    );
    assert!(
        msg.contains("storage 'local-lvm' (lvmthin) provisions thinly"),
        "{msg}"
    );
}

#[test]
fn virtrigaud_documents_read_as_their_system_means_them() {
    let dir = temp("read");
    let copy = |p: &str| std::fs::write(dir.join(p.replace('/', "-")), seed(p)).unwrap();
    copy("virtrigaud/provider-proxmox-cluster.yaml");
    copy("virtrigaud/vmclass-high-performance.yaml");
    copy("virtrigaud/vmclass-standard.yaml");
    copy("virtrigaud/provider-proxmox-prod.yaml");
    copy("virtrigaud/vmsnapshot-before-upgrade.yaml");
    // the seed's token Secret with the `ca.crt` of its CA example
    std::fs::write(
        dir.join("pve-credentials.yaml"),
        format!(
            "{}{}",
            seed("virtrigaud/pve-credentials-token.yaml"),
            seed("virtrigaud/pve-credentials-ca.yaml")
                .split("stringData:\n")
                .nth(1)
                .unwrap()
        ),
    )
    .unwrap();
    let vm = |name: &str, class: &str, nets: &str| {
        format!(
            "apiVersion: infra.virtrigaud.io/v1beta1
kind: VirtualMachine
metadata: {{ name: {name} }}
spec:
  providerRef: {{ name: proxmox-cluster }}
  classRef: {{ name: {class} }}
  networks: {nets}
  disks: [{{ name: root, size: 10Gi }}]
"
        )
    };
    std::fs::write(
        dir.join("a.yaml"),
        vm(
            "a",
            "high-performance",
            "[{ name: lan }, { name: dmz }, { name: mgmt }, { name: vmbr7 }, { name: storage }]",
        ),
    )
    .unwrap();
    std::fs::write(dir.join("b.yaml"), vm("b", "standard", "[]")).unwrap();
    std::fs::write(
        dir.join("c.yaml"),
        vm("c", "high-performance", "[{ name: lan, vlna: 5 }]"),
    )
    .unwrap();
    let ctx = Context::from_env([
        (
            "PVE_TOKEN_ID".to_string(),
            "virtrigaud@pve!vrtg-token".to_string(),
        ),
        ("PVE_TOKEN_SECRET".to_string(), "s".to_string()),
        (
            "PVE_OPERATOR_NETWORK_BRIDGES".to_string(),
            "storage=vmbr9,lan=vmbr3".to_string(),
        ),
    ]);
    let l = pve_operator::standalone::load_dir_with(&dir, &ctx).unwrap();
    let errors: Vec<String> = l.errors.iter().map(|(_, e)| e.to_string()).collect();
    // thick provisioning: the class's storage, checked when the VM is made
    assert!(
        !errors.iter().any(|e| e.contains("VMClass 'standard'")),
        "{errors:?}"
    );
    // unknown fields are refused by name
    assert!(
        errors
            .iter()
            .any(|e| e.contains("spec.networks[0]: unknown field `vlna`")),
        "{errors:?}"
    );
    let found: BTreeMap<String, Resource> = l
        .found
        .into_iter()
        .map(|(r, _)| (format!("{}/{}", r.kind(), r.name()), r))
        .collect();
    let Some(Resource::ProxmoxCluster(c)) = found.get("ProxmoxCluster/proxmox-cluster") else {
        panic!("{:?}", found.keys());
    };
    // runtime.env's PVE_NODE_SELECTOR, the operator's token
    assert_eq!(c.spec.nodes, ["pve-1", "pve-2", "pve-3"]);
    assert_eq!(
        c.spec.credentials.token_id.as_deref(),
        Some("virtrigaud@pve!vrtg-token")
    );
    let Some(Resource::ProxmoxCluster(prod)) = found.get("ProxmoxCluster/proxmox-prod") else {
        panic!("{:?}", found.keys());
    };
    let ca = prod
        .spec
        .ca_certificate
        .as_ref()
        .unwrap()
        .secret_ref
        .as_ref()
        .unwrap();
    assert_eq!(
        (ca.name.as_str(), ca.key.as_str()),
        ("pve-credentials", "ca.crt")
    );
    let tok = prod
        .spec
        .credentials
        .token_secret
        .as_ref()
        .unwrap()
        .secret_ref
        .as_ref()
        .unwrap();
    assert_eq!(tok.key, "token_secret");
    let Some(Resource::MachineSnapshot(snap)) = found.get("MachineSnapshot/before-upgrade") else {
        panic!("{:?}", found.keys());
    };
    assert_eq!(snap.spec.machine, "web-server");
    assert_eq!(
        snap.spec.description.as_deref(),
        Some("Snapshot before system upgrade")
    );
    assert!(!snap.spec.include_memory);
    let Some(Resource::Machine(a)) = found.get("Machine/a") else {
        panic!("{:?}", found.keys());
    };
    let bridges: Vec<&str> = a.spec.networks.iter().map(|n| n.bridge.as_str()).collect();
    assert_eq!(
        bridges,
        ["vmbr3", "vmbr1", "vmbr2", "vmbr7", "vmbr9"],
        "configurable map over VirtRigaud's"
    );
    assert_eq!(a.spec.disks[0].storage, "nvme-storage", "storage.class");
    assert_eq!(a.spec.cpu.cores, 8);
    assert!(a.spec.cpu.cores_from_node, "cpus are hot-pluggable vCPUs");
}

// ---------------------------------------------------------------------
// vitistack

#[tokio::test]
async fn vitistack_reference_resources_apply() {
    let (pve, ca) = fake(&format!(
        "nodes: [{{ name: pve-node1 }}]
users:{ROOT_TOKEN}
  - userid: operator@pve
    tokens:
      - {{ tokenid: operator-token, secret: token-secret-value, privsep: false }}
acl:
  - {{ path: /, roles: [Administrator], users: [operator@pve] }}
vms:
  - {{ vmid: 9000, node: pve-node1, name: ubuntu-template, config: {{ template: 1, scsi0: 'local-lvm:base-9000-disk-0,size=8G', cores: 1, memory: 1024 }} }}
"
    ))
    .await;
    let mut e = env(&[("proxmox.example.com", &pve)], &ca, &[]);
    for f in [
        "proxmoxcluster",
        "proxmoxnode",
        "machine",
        "proxmox-credentials",
    ] {
        e.copy(&format!("vitistack/{f}.yaml"));
    }
    let st = e.running("test-vm").await;
    assert_eq!(st.vmid, Some(1000));
    assert_eq!(st.node.as_deref(), Some("pve-node1"));
    // vitistack's Machine shows the reference's status fields, and the
    // table still shows the machine once.
    let theirs = e.theirs("vitistack.io/v1alpha1", "Machine", "test-vm");
    assert_eq!(theirs["phase"], "Running", "{theirs}");
    assert_eq!(
        (&theirs["vmid"], &theirs["node"]),
        (&1000.into(), &"pve-node1".into())
    );
    assert!(theirs["lastUpdated"].is_string(), "{theirs}");
    let table = pve_operator::standalone::status_table(&e.dir);
    assert_eq!(table.matches("test-vm").count(), 1, "{table}");
    let c = e.config(&pve, "pve-node1", 1000).await;
    assert_eq!(c["name"], "test-vm");
    assert_eq!((c["cores"].as_str(), c["sockets"].as_str()), ("2", "1"));
    assert_eq!(c["memory"], "2048", "2147483648 bytes");
    assert!(
        e.clone_sources(&pve, "pve-node1")
            .await
            .contains(&"9000".into())
    );
    assert!(
        c["scsi0"].contains("size=20G") && c["scsi0"].contains("cache=writeback"),
        "{c:?}"
    );
    let net = c["net0"].to_uppercase();
    for want in [
        "VIRTIO=AA:BB:CC:DD:EE:FF",
        "BRIDGE=VMBR0",
        "TAG=100",
        "FIREWALL=1",
    ] {
        assert!(net.contains(want), "{c:?}");
    }
    assert_eq!(c["ostype"], "l26");
    assert_eq!(c["boot"], "order=scsi0;net0");
    assert!(c["agent"].starts_with('1'), "{c:?}");
    // a vitistack Machine goes to PROXMOX_DEFAULT_CLUSTER when several are
    // declared, and says so when none is set
    e.write(
        "other.yaml",
        &seed("vitistack/proxmoxcluster.yaml").replace("name: proxmox-cluster ", "name: other "),
    );
    let (_, errors) = pve_operator::standalone::check_dir(&e.dir).unwrap();
    assert!(
        errors
            .iter()
            .any(|x| x.to_string().contains("set PROXMOX_DEFAULT_CLUSTER")),
        "{errors:?}"
    );
    let ctx = Context::from_env([("PROXMOX_DEFAULT_CLUSTER".to_string(), "other".to_string())]);
    let (found, errors) = pve_operator::standalone::check_dir_with(&e.dir, &ctx).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    // `status` reads the documents as `run` does
    let table = pve_operator::standalone::status_table(&e.dir);
    assert!(table.contains("set PROXMOX_DEFAULT_CLUSTER"), "{table}");
    let table = pve_operator::standalone::status_table_with(&e.dir, &ctx);
    assert!(!table.contains("PROXMOX_DEFAULT_CLUSTER"), "{table}");
    let m = found
        .iter()
        .find_map(|r| match r {
            Resource::Machine(m) => Some(m),
            _ => None,
        })
        .unwrap();
    assert_eq!(m.spec.cluster, "other");
}

/// VirtRigaud's documents grant its user PVEVMAdmin and PVEDatastoreUser
/// on `/`: the operator says at start what that lacks, and a bridge PVE
/// hides for want of SDN.Use is a permission problem, not a missing bridge.
#[tokio::test]
async fn missing_privileges_are_reported_and_a_hidden_bridge_is_a_permission_problem() {
    let scenario = virtrigaud_scenario().replace(
        "  - { path: /, roles: [PVEVMAdmin, PVEDatastoreUser, PVEAuditor], users: [virtrigaud@pve] }",
        "  - { path: /, roles: [PVEVMAdmin, PVEDatastoreUser], users: [virtrigaud@pve] }
  - { path: /nodes, roles: [NodeAudit], users: [virtrigaud@pve] }
roles:
  - { roleid: NodeAudit, privs: [Sys.Audit] }",
    )
    // Without the grant of SDN.Use the other tests add.
    .replace(
        "  - { path: /sdn/zones/localnetwork, roles: [PVESDNUser], users: [virtrigaud@pve] }\n",
        "",
    );
    assert!(scenario.contains("NodeAudit"));
    assert!(!scenario.contains("PVESDNUser"));
    let (_pve, ca) = fake(&scenario).await;
    let mut e = env(&[("pve.example.com", &_pve)], &ca, &[]);
    e.copy("virtrigaud/provider-proxmox-prod.yaml");
    e.copy("virtrigaud/pve-credentials-token.yaml");
    e.copy("virtrigaud/vmclass-small.yaml");
    e.copy("virtrigaud/vmimage-ubuntu-22.yaml");
    e.copy("virtrigaud/virtualmachine-web-server.yaml");
    e.converge(4, |e| {
        e.status("web-server").phase == Phase::Error
            && e.sa
                .status("ProxmoxCluster", "proxmox-prod")
                .is_some_and(|s| s["ready"] == true)
    })
    .await;
    let c = e.sa.status("ProxmoxCluster", "proxmox-prod").unwrap();
    let missing: Vec<&str> = c["missingPrivileges"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        missing,
        [
            "Datastore.AllocateTemplate on /storage",
            "SDN.Use on /sdn/zones/localnetwork"
        ],
        "{c}"
    );
    let (s, reason, msg) = cond(&e.status("web-server"), "NetworkConfigured");
    assert_eq!((s.as_str(), reason.as_str()), ("False", "PermissionDenied"));
    assert_eq!(
        msg,
        "permission problem: bridge 'vmbr0' is hidden from the operator's PVE user, which lacks SDN.Use on /sdn/zones/localnetwork/vmbr0"
    );
}

/// vitistack's ProxmoxCluster names a client certificate and key for
/// mutual TLS: they reach pve-client's TLS settings (checked there; the
/// handshake with a server that asks for them is pve-client's
/// `tests/mtls.rs`, since fake-pve, like pveproxy, never asks).
#[tokio::test]
async fn vitistack_client_certificates_reach_the_client() {
    let (pve, ca) = fake(&format!(
        "nodes: [{{ name: pve-node1 }}]\nusers:{ROOT_TOKEN}\n"
    ))
    .await;
    let mut e = env(&[("proxmox.example.com", &pve)], &ca, &[]);
    e.copy("vitistack/proxmox-credentials.yaml");
    e.write(
        "cluster.yaml",
        &seed("vitistack/proxmoxcluster.yaml").replace(
            "  insecureSkipTLSVerify: true",
            "  insecureSkipTLSVerify: true\n  clientCertificate: not a certificate\n  clientKey: not a key",
        ),
    );
    e.converge(2, |e| {
        e.sa.status("ProxmoxCluster", "proxmox-cluster")
            .is_some_and(|s| {
                s["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("client certificate"))
            })
    })
    .await;
}

/// On Kubernetes the seeds' objects (here as the API server returns them,
/// with their UIDs) become the operator's own, applied in their namespace
/// and owned by them.
#[test]
fn on_kubernetes_the_seeds_objects_become_owned_native_objects() {
    let mut objects = Vec::new();
    for (i, f) in [
        "virtrigaud/provider-proxmox-prod.yaml",
        "virtrigaud/vmclass-small.yaml",
        "virtrigaud/vmimage-ubuntu-22.yaml",
        "virtrigaud/virtualmachine-web-server.yaml",
        "virtrigaud/vmsnapshot-before-upgrade.yaml",
    ]
    .iter()
    .enumerate()
    {
        let mut v: Value = serde_yaml::from_str(&seed(f)).unwrap();
        v["metadata"]["uid"] = Value::from(format!("5d3e7c1a-0000-4000-8000-00000000000{i}"));
        objects.push(v);
    }
    let mut ctx = Context::default();
    let secret: pve_operator::types::SecretObject =
        serde_yaml::from_str(&seed("virtrigaud/pve-credentials-token.yaml")).unwrap();
    ctx.secrets.insert("pve-credentials".into(), secret);
    let (native, errors) = pve_operator::dialects::kubernetes_objects(&objects, "apps", &ctx);
    assert!(errors.is_empty(), "{errors:?}");
    let kinds: Vec<(&str, &str)> = native
        .iter()
        .map(|v| {
            (
                v["kind"].as_str().unwrap(),
                v["metadata"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("ProxmoxCluster", "proxmox-prod"),
            ("Machine", "web-server"),
            ("MachineSnapshot", "before-upgrade")
        ]
    );
    let m = &native[1];
    assert_eq!(m["apiVersion"], "pve.fake-pve.io/v1alpha1");
    assert_eq!(m["metadata"]["namespace"], "apps");
    let owner = &m["metadata"]["ownerReferences"][0];
    assert_eq!(owner["apiVersion"], "infra.virtrigaud.io/v1beta1");
    assert_eq!(owner["kind"], "VirtualMachine");
    assert_eq!(owner["name"], "web-server");
    assert_eq!(owner["uid"], "5d3e7c1a-0000-4000-8000-000000000003");
    assert_eq!(owner["controller"], true);
    // what is applied reads into the custom resource type
    let typed: pve_operator::types::Machine = serde_json::from_value(m.clone()).unwrap();
    assert_eq!(typed.spec.cluster, "proxmox-prod");
    assert_eq!(typed.spec.bios.as_deref(), Some("uefi"));
    // and the seeds' kinds have CRDs beside the operator's own
    let crds = pve_operator::crd::foreign_crds();
    assert_eq!(crds.len(), pve_operator::dialects::FOREIGN_KINDS.len());
    assert!(
        crds.iter()
            .any(|c| c.metadata.name.as_deref() == Some("virtualmachines.infra.virtrigaud.io"))
    );
}

/// VirtRigaud's "Static IP Configuration" user data (a fragment, put in
/// its VirtualMachine example): a netplan file PVE's cloud-init options
/// cannot write, refused by name (its networks' `staticIP` is the way PVE
/// takes a static address).
#[test]
fn virtrigaud_static_ip_user_data_is_refused_by_name() {
    let fragment = seed("virtrigaud/fragment-userdata-static-ip.yaml");
    let vm = seed("virtrigaud/virtualmachine-web-server.yaml");
    let at = vm.find("  userData:").unwrap();
    let indented: String = fragment.lines().map(|l| format!("  {l}\n")).collect();
    let doc = format!("{}{indented}", &vm[..at]);
    let dir = temp("static-ip");
    for f in [
        "virtrigaud/provider-proxmox-prod.yaml",
        "virtrigaud/pve-credentials-token.yaml",
        "virtrigaud/vmclass-small.yaml",
        "virtrigaud/vmimage-ubuntu-22.yaml",
    ] {
        std::fs::write(dir.join(f.replace('/', "-")), seed(f)).unwrap();
    }
    std::fs::write(dir.join("vm.yaml"), doc).unwrap();
    let (found, errors) = pve_operator::standalone::check_dir(&dir).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    let m = found
        .iter()
        .find_map(|r| match r {
            Resource::Machine(m) => Some(m),
            _ => None,
        })
        .unwrap();
    let d = pve_operator::plan::Desired::from_machine(m);
    let ud = d.user_data.clone().unwrap();
    assert_eq!(ud.refused, ["write_files"]);
    let p = pve_operator::plan::plan_machine(&d, &pve_operator::plan::Observed::default());
    let c = p
        .conditions
        .iter()
        .find(|c| c.kind == "CloudInitConfigured")
        .unwrap();
    assert_eq!(c.reason, "UserDataNotExpressible");
    assert!(c.message.contains("write_files"), "{}", c.message);
}

/// Two VMClass documents of one name: both refused, and the
/// VirtualMachine that names the class is not made from either.
#[test]
fn a_class_declared_twice_is_used_by_nobody() {
    let dir = temp("class-twice");
    let write = |f: &str, t: &str| std::fs::write(dir.join(f), t).unwrap();
    write(
        "provider.yaml",
        &seed("virtrigaud/provider-proxmox-prod.yaml"),
    );
    write(
        "secret.yaml",
        &seed("virtrigaud/pve-credentials-token.yaml"),
    );
    write("small.yaml", &seed("virtrigaud/vmclass-small.yaml"));
    write(
        "small-2.yaml",
        &seed("virtrigaud/vmclass-small.yaml").replace("cpus: 2", "cpus: 8"),
    );
    write("image.yaml", &seed("virtrigaud/vmimage-ubuntu-22.yaml"));
    write(
        "vm.yaml",
        &seed("virtrigaud/virtualmachine-web-server.yaml"),
    );
    let (found, errors) = pve_operator::standalone::check_dir(&dir).unwrap();
    let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert!(!found.iter().any(|r| r.kind() == "Machine"), "{found:?}");
    let twice: Vec<&String> = errors
        .iter()
        .filter(|e| e.contains("VMClass/small is declared by 2 documents"))
        .collect();
    assert_eq!(twice.len(), 2, "one per file: {errors:?}");
    assert!(
        errors
            .iter()
            .any(|e| e.contains("VMClass 'small'") && e.contains("not found")),
        "{errors:?}"
    );
}
