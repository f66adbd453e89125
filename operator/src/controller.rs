//! The executor: connects to clusters, observes PVE, calls the planner,
//! carries out one step at a time and observes again, and reports status
//! and conditions. Shared by every reconcile (VMID reservations,
//! connections, metrics).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use pve_client::api::cluster::ClusterResource;
use pve_client::api::qemu::{
    CloneVm, ConfigView, CreateVm, DestroyOptions, ResizeVm, ShutdownOptions, SnapshotOptions,
    StartOptions, StopOptions, SuspendOptions, UpdateVm,
};
use pve_client::api::storage::DownloadUrl;
use pve_client::api::tasks::Upid;
use pve_client::{Client, Config, ConfigBuilder};
use serde_json::Value;
use tracing::{Instrument, info, warn};

use crate::error::{Error, Result};
use crate::metrics::Metrics;
use crate::plan::{
    self, Desired, NodeInfo, Observed, ObservedVm, Peer, SourceState, Step, has_mark,
};
use crate::types::{
    Condition, MachineImageSpec, MachineImageStatus, MachineSnapshotSpec, MachineSnapshotStatus,
    MachineSpec, MachineStatus, NodeResources, NodeStatusEntry, Object, Phase, ProxmoxClusterSpec,
    ProxmoxClusterStatus, ProxmoxNodeSpec, ProxmoxNodeStatus, SecretObject, Usage, ValueSource,
    now_rfc3339, set_condition,
};
use crate::validate::{self, ImageRef};

/// Everything a reconcile may look at: the declared objects and the
/// statuses known so far.
#[derive(Debug, Clone, Default)]
pub struct World {
    /// Clusters by name.
    pub clusters: BTreeMap<String, Object<ProxmoxClusterSpec>>,
    /// Nodes.
    pub nodes: Vec<Object<ProxmoxNodeSpec>>,
    /// Secrets by name.
    pub secrets: BTreeMap<String, SecretObject>,
    /// Machines and their statuses, by name.
    pub machines: BTreeMap<String, (Object<MachineSpec>, MachineStatus)>,
    /// Images and their statuses, by name.
    pub images: BTreeMap<String, (Object<MachineImageSpec>, MachineImageStatus)>,
    /// The directory `file:` references are relative to.
    pub dir: PathBuf,
}

/// Adjusts every client the operator builds (tests shorten polls).
pub type ClientTuning = Arc<dyn Fn(ConfigBuilder) -> ConfigBuilder + Send + Sync>;

/// The shared state of all reconciles.
pub struct Operator {
    /// The metrics.
    pub metrics: Arc<Metrics>,
    conns: Mutex<HashMap<String, (String, Client)>>,
    reserved: Mutex<BTreeSet<u32>>,
    /// Nodes chosen for machines whose choice the world does not show yet
    /// (placed in this pass), by cluster and machine; held while a machine
    /// without a VM is placed, so that machines reconciled at once see
    /// each other's choices (anti-affinity, memory, VM counts).
    placing: tokio::sync::Mutex<BTreeMap<(String, String), Placed>>,
    tuning: Option<ClientTuning>,
    env_cluster: Option<EnvCluster>,
}

/// A cluster given by the operator's `PVE_*` environment variables
/// (`PVE_ENDPOINT`, `PVE_TOKEN_ID` and `PVE_TOKEN_SECRET` or
/// `PVE_USERNAME` and `PVE_PASSWORD`, `PVE_INSECURE_SKIP_VERIFY`,
/// `PVE_CA_BUNDLE`, ...), as VirtRigaud's provider takes them: Machines
/// name it like a declared ProxmoxCluster, which wins over it.
#[derive(Debug, Clone)]
pub struct EnvCluster {
    /// The name Machines give as `spec.cluster`.
    pub name: String,
    /// The `PVE_*` variables.
    pub vars: BTreeMap<String, String>,
}

impl EnvCluster {
    /// The cluster `name` from `vars` (their `PVE_*` ones), if
    /// `PVE_ENDPOINT` is among them.
    pub fn from_env(name: &str, vars: impl IntoIterator<Item = (String, String)>) -> Option<Self> {
        let vars: BTreeMap<String, String> = vars
            .into_iter()
            .filter(|(k, v)| k.starts_with("PVE_") && !v.trim().is_empty())
            .collect();
        vars.contains_key("PVE_ENDPOINT").then(|| Self {
            name: name.to_string(),
            vars,
        })
    }
}

/// A node chosen for a machine.
#[derive(Debug, Clone)]
struct Placed {
    node: String,
    labels: BTreeMap<String, String>,
    memory: u64,
    vmid: u32,
}

impl std::fmt::Debug for Operator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Operator").finish_non_exhaustive()
    }
}

/// A connected client. Every request goes through pve-client's typed
/// calls, named after PVE's methods; the client's observers count them in
/// the metrics (see [`Operator::connect`]).
#[derive(Clone)]
pub struct Pve {
    client: Client,
}

impl Pve {
    /// Waits for a task.
    async fn wait(&self, upid: Upid) -> Result<()> {
        self.client.tasks().wait(&upid).await?;
        Ok(())
    }

    /// `GET /version` (`version`).
    async fn version(&self) -> Result<String> {
        Ok(self.client.version().await?.version)
    }

    /// `GET /cluster/resources` (`resources`).
    async fn resources(&self) -> Result<Vec<ClusterResource>> {
        Ok(self.client.cluster().resources(None).await?)
    }

    /// `GET .../pending` (`vm_pending`): the config as `GET .../config`
    /// shows it (pending values applied, pending deletions gone) and the
    /// pending changes (`key -> value`, `key -> ""` for a deletion).
    async fn vm_state(
        &self,
        node: &str,
        vmid: u32,
    ) -> Result<(BTreeMap<String, String>, BTreeMap<String, String>)> {
        let items = self.client.qemu().vm_pending(node, vmid).await?;
        let mut config = BTreeMap::new();
        let mut pending = BTreeMap::new();
        for i in items {
            if i.key == "digest" {
                continue;
            }
            if i.delete.is_some_and(|d| d > 0) {
                pending.insert(i.key.clone(), String::new());
                continue;
            }
            if let Some(p) = &i.pending {
                pending.insert(i.key.clone(), text(p));
                config.insert(i.key.clone(), text(p));
            } else if let Some(v) = &i.value {
                config.insert(i.key.clone(), text(v));
            }
        }
        Ok((config, pending))
    }

    /// `GET .../status/current` (`vm_status`): whether it is paused.
    async fn paused(&self, node: &str, vmid: u32) -> Result<bool> {
        Ok(self.client.qemu().vm_status(node, vmid).await?.is_paused())
    }

    /// `GET .../agent/network-get-interfaces`: the usable addresses.
    async fn agent_ips(&self, node: &str, vmid: u32) -> Result<Vec<String>> {
        let ifaces = self
            .client
            .agent()
            .network_get_interfaces(node, vmid)
            .await?;
        Ok(plan::agent_ips(
            &serde_json::to_value(ifaces).unwrap_or(Value::Null),
        ))
    }

    /// `GET /access/permissions` (`permissions`) on the bridge's
    /// `/sdn/zones/localnetwork/{bridge}`: whether the caller has SDN.Use
    /// there (PVE hides and refuses a bridge without it).
    async fn may_use_bridge(&self, bridge: &str) -> Result<bool> {
        let path = format!("/sdn/zones/localnetwork/{bridge}");
        let perms = self.client.access().permissions(None, Some(&path)).await?;
        Ok(perms.values().any(|p| p.contains_key("SDN.Use")))
    }

    /// `GET /access/permissions` (`permissions`): the privileges of
    /// [`REQUIRED_PRIVILEGES`] the caller lacks, as `PRIV on PATH`.
    async fn missing_privileges(&self) -> Result<Vec<String>> {
        let mut missing = Vec::new();
        for (path, privs) in REQUIRED_PRIVILEGES {
            let perms = self.client.access().permissions(None, Some(path)).await?;
            let have = |p: &str| perms.values().any(|m| m.contains_key(p));
            for p in *privs {
                // `A|B`: either (VM.Monitor became the guest-agent
                // privileges in PVE 9).
                if !p.split('|').any(have) {
                    missing.push(format!("{p} on {path}"));
                }
            }
        }
        Ok(missing)
    }

    /// `GET /nodes/{node}/storage/{storage}/status` (`read_status`): the
    /// storage's PVE type.
    async fn storage_type(&self, node: &str, storage: &str) -> Result<String> {
        Ok(self.client.storage().read_status(node, storage).await?.kind)
    }

    /// `GET /storage/{storage}` (`read`): the storage's options (`sparse`,
    /// `preallocation`, ...); `None` when the caller may not read them
    /// (PVE asks Datastore.Allocate) or the call fails.
    async fn storage_options(
        &self,
        storage: &str,
    ) -> Option<serde_json::Map<String, serde_json::Value>> {
        self.client
            .storage()
            .read(storage)
            .await
            .ok()
            .map(|c| c.extra)
    }

    /// `GET /nodes/{node}/network` (`index`): the bridges.
    async fn bridges(&self, node: &str) -> Result<Vec<String>> {
        Ok(self
            .client
            .network()
            .index(node, None)
            .await?
            .into_iter()
            .filter(|i| matches!(i.kind.as_str(), "bridge" | "OVSBridge"))
            .map(|i| i.iface)
            .collect())
    }

    /// `GET .../snapshot` (`snapshot_list`): the names, without `current`.
    async fn snapshot_names(&self, node: &str, vmid: u32) -> Result<Vec<String>> {
        Ok(self
            .client
            .qemu()
            .snapshot_list(node, vmid)
            .await?
            .into_iter()
            .map(|s| s.name)
            .filter(|n| n != "current")
            .collect())
    }

    /// `GET .../storage/{storage}/content` (`index`): the volume IDs.
    async fn volids(&self, node: &str, storage: &str) -> Result<Vec<String>> {
        Ok(self
            .client
            .storage_content()
            .index(node, storage, &Default::default())
            .await?
            .into_iter()
            .map(|c| c.volid)
            .collect())
    }

    /// `GET .../storage/{storage}/content/{volume}` (`info`).
    async fn volume_info(
        &self,
        node: &str,
        storage: &str,
        volume: &str,
    ) -> Result<pve_client::api::storage::VolumeInfo> {
        Ok(self
            .client
            .storage_content()
            .info(node, storage, volume)
            .await?)
    }
}

/// The PVE privileges the operator uses, by the path it needs them on
/// (the book's pve-operator chapter lists what each is for).
pub const REQUIRED_PRIVILEGES: &[(&str, &[&str])] = &[
    (
        "/vms",
        &[
            "VM.Allocate",
            "VM.Audit",
            "VM.Clone",
            "VM.Config.CDROM",
            "VM.Config.CPU",
            "VM.Config.Cloudinit",
            "VM.Config.Disk",
            "VM.Config.HWType",
            "VM.Config.Memory",
            "VM.Config.Network",
            "VM.Config.Options",
            "VM.PowerMgmt",
            "VM.Snapshot",
            "VM.Snapshot.Rollback",
            "VM.GuestAgent.Audit|VM.Monitor",
        ],
    ),
    (
        "/storage",
        &[
            "Datastore.Audit",
            "Datastore.AllocateSpace",
            "Datastore.AllocateTemplate",
        ],
    ),
    ("/nodes", &["Sys.Audit"]),
    ("/sdn/zones/localnetwork", &["SDN.Use"]),
];

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// What one reconcile of a Machine ended with.
#[derive(Debug)]
pub struct MachineOutcome {
    /// The new status.
    pub status: MachineStatus,
    /// The deletion finished: drop the finalizer.
    pub finalized: bool,
    /// Something runs in PVE: look again soon.
    pub wait: bool,
    /// The error to back off on.
    pub error: Option<Error>,
}

const MAX_STEPS: usize = 16;

impl Operator {
    /// An operator with its own metrics.
    pub fn new(tuning: Option<ClientTuning>) -> Self {
        Self {
            metrics: Arc::new(Metrics::default()),
            conns: Mutex::new(HashMap::new()),
            reserved: Mutex::new(BTreeSet::new()),
            placing: tokio::sync::Mutex::new(BTreeMap::new()),
            tuning,
            env_cluster: None,
        }
    }

    /// Makes the cluster of the `PVE_*` variables available.
    #[must_use]
    pub fn with_env_cluster(mut self, env: Option<EnvCluster>) -> Self {
        self.env_cluster = env;
        self
    }

    fn resolve(&self, world: &World, v: &ValueSource, what: &str) -> Result<String> {
        if let Some(r) = &v.secret_ref {
            let s = world
                .secrets
                .get(&r.name)
                .ok_or_else(|| Error::Config(format!("{what}: secret '{}' not found", r.name)))?;
            return s.string_data.get(&r.key).cloned().ok_or_else(|| {
                Error::Config(format!(
                    "{what}: secret '{}' has no key '{}'",
                    r.name, r.key
                ))
            });
        }
        if let Some(f) = &v.file {
            let p = world.dir.join(f);
            return std::fs::read_to_string(&p)
                .map(|s| s.trim().to_string())
                .map_err(|e| Error::Config(format!("{what}: {}: {e}", p.display())));
        }
        v.value
            .clone()
            .ok_or_else(|| Error::Config(format!("{what}: give secretRef, file or value")))
    }

    /// A connected client for a cluster (cached while its settings stay
    /// the same).
    ///
    /// # Errors
    /// Missing cluster or secrets, unreachable PVE, refused credentials.
    pub async fn connect(&self, world: &World, cluster: &str) -> Result<Pve> {
        let Some(c) = world.clusters.get(cluster) else {
            if let Some(env) = self.env_cluster.as_ref().filter(|e| e.name == cluster) {
                return self.connect_env(env).await;
            }
            return Err(Error::Config(format!(
                "ProxmoxCluster '{cluster}' not found"
            )));
        };
        let s = &c.spec;
        let mut b = Config::builder().endpoint(&s.endpoint);
        let creds = &s.credentials;
        let mut fp = format!(
            "{}|{}|{:?}",
            s.endpoint, s.insecure_skip_tls_verify, s.fingerprint
        );
        if let (Some(id), Some(sec)) = (creds.full_token_id(), &creds.token_secret) {
            let secret = self.resolve(world, sec, "credentials.tokenSecret")?;
            fp.push_str(&format!("|t:{id}:{secret}"));
            b = b.token(id, secret);
        } else if let Some(pw) = &creds.password {
            let password = self.resolve(world, pw, "credentials.password")?;
            fp.push_str(&format!("|p:{}:{password}", creds.username));
            b = b.password(creds.username.clone(), password);
        } else {
            return Err(Error::Config(
                "credentials: give password or tokenID with tokenSecret".into(),
            ));
        }
        if s.insecure_skip_tls_verify {
            b = b.insecure_skip_verify(true);
        }
        if let Some(f) = &s.fingerprint {
            b = b.fingerprint(f.clone());
        }
        if let Some(ca) = &s.ca_certificate {
            let pem = self.resolve(world, ca, "caCertificate")?;
            fp.push_str(&format!("|ca:{}", pem.len()));
            b = b.ca_bundle_pem(pem);
        }
        match (&s.client_certificate, &s.client_key) {
            (Some(c), Some(k)) => {
                let cert = self.resolve(world, c, "clientCertificate")?;
                let key = self.resolve(world, k, "clientKey")?;
                fp.push_str(&format!("|cc:{}:{}", cert.len(), key.len()));
                b = b.client_certificate_pem(cert, key);
            }
            (None, None) => {}
            _ => {
                return Err(Error::Config(
                    "clientCertificate and clientKey go together".into(),
                ));
            }
        }
        self.connect_with(cluster, b, fp).await
    }

    /// Whether `cluster` is declared, or is the one the environment gives.
    pub fn knows_cluster(&self, world: &World, cluster: &str) -> bool {
        world.clusters.contains_key(cluster)
            || self.env_cluster.as_ref().is_some_and(|e| e.name == cluster)
    }

    /// The cluster of the `PVE_*` variables (pve-client's
    /// `ConfigBuilder::with_env`).
    async fn connect_env(&self, env: &EnvCluster) -> Result<Pve> {
        let b = Config::builder()
            .with_env(|k| env.vars.get(k).cloned())
            .map_err(Error::Pve)?;
        let fp = format!("env|{:?}", env.vars);
        self.connect_with(&env.name, b, fp).await
    }

    /// Tunes, observes, builds and connects (or reuses the client made
    /// with the same settings, `fp`).
    async fn connect_with(&self, cluster: &str, mut b: ConfigBuilder, fp: String) -> Result<Pve> {
        if let Some(t) = &self.tuning {
            b = t(b);
        }
        // Every call the client makes, typed, counted by its outcome.
        let (ok, failed) = (self.metrics.clone(), self.metrics.clone());
        b = b
            .observer(move |method, path, _| ok.api_request(method.as_str(), path, "200"))
            .error_observer(move |method, path, e| {
                let status = e
                    .status()
                    .map_or_else(|| "error".to_string(), |s| s.to_string());
                failed.api_request(method.as_str(), path, &status);
            });
        if let Some((f, client)) = self
            .conns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(cluster)
            && *f == fp
        {
            return Ok(Pve {
                client: client.clone(),
            });
        }
        let config = b.build().map_err(Error::Pve)?;
        let client = Client::connect(config).await;
        self.metrics.api_request(
            "GET",
            "/version",
            if client.is_ok() { "200" } else { "error" },
        );
        let client = client?;
        self.conns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(cluster.to_string(), (fp, client.clone()));
        Ok(Pve { client })
    }

    /// Forgets a cluster's client (after authentication failures).
    fn drop_conn(&self, cluster: &str) {
        self.conns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(cluster);
    }

    // -----------------------------------------------------------------
    // Clusters and nodes

    /// Checks a cluster: version, nodes, their use.
    pub async fn reconcile_cluster(&self, world: &World, name: &str) -> ProxmoxClusterStatus {
        let start = Instant::now();
        let mut st = ProxmoxClusterStatus {
            last_health_check: Some(now_rfc3339()),
            ..Default::default()
        };
        let r = async {
            let pve = self.connect(world, name).await?;
            let version = pve.version().await?;
            let res = pve.resources().await?;
            let missing = pve.missing_privileges().await;
            Ok::<_, Error>((version, res, missing))
        }
        .await;
        match r {
            Ok((version, res, missing)) => {
                st.ready = true;
                st.version = Some(version);
                match missing {
                    Ok(m) if !m.is_empty() => {
                        warn!(cluster = name, missing = %m.join(", "), "the operator's PVE user lacks privileges it uses");
                        st.message = Some(format!("missing PVE privileges: {}", m.join(", ")));
                        st.missing_privileges = m;
                    }
                    Ok(_) => {}
                    Err(e) => {
                        st.message = Some(format!("cannot read the PVE privileges: {e}"));
                    }
                }
                st.nodes = node_entries(&res);
                let online = st.nodes.iter().filter(|n| n.ready).count() as u64;
                self.metrics.set_cluster(name, true, online);
            }
            Err(e) => {
                self.metrics.error(e.error_type().as_str(), "cluster");
                self.metrics.set_cluster(name, false, 0);
                if matches!(e.error_type(), crate::error::ErrorType::Authentication) {
                    self.drop_conn(name);
                }
                warn!(cluster = name, error = %e, "cluster health check failed");
                st.message = Some(e.to_string());
            }
        }
        self.metrics
            .reconcile_duration("cluster", start.elapsed().as_secs_f64());
        st
    }

    /// A ProxmoxNode's status, from the cluster's resources.
    pub async fn reconcile_node(
        &self,
        world: &World,
        n: &Object<ProxmoxNodeSpec>,
    ) -> ProxmoxNodeStatus {
        let start = Instant::now();
        let mut st = ProxmoxNodeStatus {
            last_updated: Some(now_rfc3339()),
            ..Default::default()
        };
        let r = async {
            let pve = self.connect(world, &n.spec.cluster).await?;
            pve.resources().await
        }
        .await;
        match r {
            Ok(res) => {
                if let Some(e) = node_entries(&res)
                    .into_iter()
                    .find(|e| e.name == n.spec.node_name)
                {
                    st.ready = e.ready;
                    st.resources = e.resources;
                    st.vm_count = e.vm_count;
                }
            }
            Err(e) => {
                self.metrics.error(e.error_type().as_str(), "node");
            }
        }
        self.metrics
            .reconcile_duration("node", start.elapsed().as_secs_f64());
        st
    }

    // -----------------------------------------------------------------
    // Machines

    /// Finds the Machine's VM by its ownership mark: the VMID in its
    /// status first, then every VM of its name.
    async fn find_vm(
        &self,
        pve: &Pve,
        res: &[ClusterResource],
        cluster: &str,
        d: &Desired,
        hint: Option<u32>,
    ) -> Result<Option<ObservedVm>> {
        let mut candidates: Vec<&ClusterResource> = Vec::new();
        for r in res.iter().filter(|r| r.kind == "qemu") {
            let by_hint = hint.is_some() && r.vmid.map(|v| v as u32) == hint;
            if by_hint || r.name.as_deref() == Some(d.vm_name.as_str()) {
                candidates.push(r);
            }
        }
        candidates.sort_by_key(|r| (r.vmid.map(|v| v as u32) != hint, r.vmid));
        for r in candidates {
            let (Some(node), Some(vmid)) = (r.node.clone(), r.vmid) else {
                continue;
            };
            let vmid = vmid as u32;
            let (config, pending) = match pve.vm_state(&node, vmid).await {
                Ok(c) => c,
                Err(e) if e.error_type() == crate::error::ErrorType::NotFound => continue,
                Err(e) => return Err(e),
            };
            // The mark, or the VM this Machine's status names still
            // carrying its name (its description was edited behind our
            // back: drift to undo, not a stranger).
            let by_hint = hint == Some(vmid) && config.get("name") == Some(&d.vm_name);
            if !by_hint
                && !has_mark(
                    config.get("description").map(String::as_str),
                    cluster,
                    &d.machine,
                )
            {
                continue;
            }
            // A paused VM is a running one (its resource status may say
            // `paused`).
            let running = matches!(r.status.as_deref(), Some("running" | "paused"));
            let lock = config
                .get("lock")
                .cloned()
                .or_else(|| r.lock.clone().filter(|l| !l.is_empty()));
            // Paused (suspended) VMs count as running in the resources.
            let paused = r.status.as_deref() == Some("paused")
                || (running && pve.paused(&node, vmid).await?);
            let mut vm = ObservedVm {
                vmid,
                node: node.clone(),
                running,
                paused,
                config,
                pending,
                lock,
                ip_addresses: Vec::new(),
                volume_sizes: BTreeMap::new(),
            };
            // Disks whose config says less than the spec: the volume may
            // be larger already (a rollback restores the config's size,
            // not the volume's).
            for (key, bytes, _) in &d.disks {
                let Some(disk) = vm
                    .config
                    .get(key)
                    .and_then(|v| pve_client::propstring::Disk::parse_as(key, v).ok())
                else {
                    continue;
                };
                let recorded = disk
                    .size
                    .as_deref()
                    .and_then(validate::parse_size_text)
                    .unwrap_or(0);
                let Some((storage, _)) = disk.file.split_once(':') else {
                    continue;
                };
                if recorded >= *bytes {
                    continue;
                }
                if let Ok(info) = pve.volume_info(&node, storage, &disk.file).await {
                    vm.volume_sizes.insert(key.clone(), info.size);
                }
            }
            if running
                && vm
                    .config
                    .get("agent")
                    .is_some_and(|a| a.starts_with('1') || a.contains("enabled=1"))
            {
                // Graceful: no agent, no addresses.
                if let Ok(ips) = pve.agent_ips(&node, vmid).await {
                    vm.ip_addresses = ips;
                }
            }
            return Ok(Some(vm));
        }
        Ok(None)
    }

    async fn observe(
        &self,
        pve: &Pve,
        world: &World,
        d: &Desired,
        hint: Option<u32>,
        extra_used: &BTreeSet<u32>,
    ) -> Result<Observed> {
        let cluster = d.spec.cluster.clone();
        let res = pve.resources().await?;
        let vm = self.find_vm(pve, &res, &cluster, d, hint).await?;
        let cspec = world
            .clusters
            .get(&cluster)
            .map(|c| c.spec.clone())
            .unwrap_or_default();
        let mut nodes = Vec::new();
        for e in node_entries(&res) {
            let pn = world
                .nodes
                .iter()
                .find(|n| n.spec.cluster == cluster && n.spec.node_name == e.name);
            let allocated: u64 = res
                .iter()
                .filter(|r| r.kind == "qemu" && r.node.as_deref() == Some(e.name.as_str()))
                .filter_map(|r| r.maxmem)
                .sum();
            nodes.push(NodeInfo {
                name: e.name.clone(),
                online: e.ready,
                maxmem: e.resources.memory.total,
                allocated_mem: allocated,
                maxcpu: e.resources.cpu.total,
                vm_count: e.vm_count,
                bridges: None,
                labels: pn.map(|p| p.metadata.labels.clone()).unwrap_or_default(),
                max_vms: pn.and_then(|p| p.spec.max_vms),
            });
        }
        let mut unusable_bridges = Vec::new();
        if vm.is_none() {
            for n in nodes.iter_mut().filter(|n| n.online) {
                if let Ok(list) = pve.bridges(&n.name).await {
                    n.bridges = Some(list);
                }
            }
            // PVE hides the bridges the caller may not use: one that no
            // node lists is first a question of privileges.
            for b in d.spec.networks.iter().map(|n| &n.bridge) {
                let listed = nodes
                    .iter()
                    .any(|n| n.bridges.as_ref().is_some_and(|l| l.contains(b)));
                if !listed && !unusable_bridges.contains(b) && !pve.may_use_bridge(b).await? {
                    unusable_bridges.push(b.clone());
                }
            }
        }
        // Disks that must be thick: their storages' types (and options,
        // where the caller may read them), before the VM is made.
        let mut provisioning_refused = Vec::new();
        if vm.is_none() {
            let online = nodes.iter().find(|n| n.online).map(|n| n.name.clone());
            for (key, _, disk) in d
                .disks
                .iter()
                .filter(|(_, _, s)| s.provisioning.as_deref() == Some("thick"))
            {
                let Some(node) = &online else { break };
                let kind = pve.storage_type(node, &disk.storage).await?;
                let options = pve.storage_options(&disk.storage).await;
                if let Some(m) =
                    crate::plan::thick_refusal(key, &disk.storage, &kind, options.as_ref())
                {
                    provisioning_refused.push(m);
                }
            }
        }
        let mut used: BTreeSet<u32> = res
            .iter()
            .filter_map(|r| r.vmid.map(|v| v as u32))
            .collect();
        used.extend(
            self.reserved
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter(),
        );
        used.extend(extra_used);
        let source = match d.spec.source.as_ref() {
            None => SourceState::None,
            Some(s) => {
                if let Some(t) = &s.template {
                    find_source(&res, t, !s.linked)
                } else if let Some(i) = &s.image {
                    match world.images.get(i) {
                        Some((_, st)) if st.ready => match (st.node.clone(), st.vmid) {
                            (Some(node), Some(vmid)) => SourceState::Found { node, vmid },
                            _ => SourceState::Missing(format!("MachineImage '{i}' is not ready")),
                        },
                        Some(_) => SourceState::Missing(format!("MachineImage '{i}' is not ready")),
                        None => SourceState::Missing(format!("MachineImage '{i}' not found")),
                    }
                } else {
                    SourceState::None
                }
            }
        };
        let peers = world
            .machines
            .values()
            .filter(|(m, st)| m.spec.cluster == cluster && st.node.is_some())
            .map(|(m, st)| Peer {
                machine: m.metadata.name.clone(),
                labels: m.metadata.labels.clone(),
                node: st.node.clone().unwrap_or_default(),
            })
            .collect();
        Ok(Observed {
            cluster,
            vm,
            nodes,
            used_vmids: used,
            peers,
            source,
            allowed_nodes: cspec.nodes,
            allowed_storages: cspec.storages,
            allowed_bridges: cspec.bridges,
            unusable_bridges,
            last_reboot: None,
            provisioning_refused,
        })
    }

    /// Reserves a VMID for a create; false when another reconcile holds it.
    fn reserve(&self, vmid: u32) -> bool {
        self.reserved
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(vmid)
    }

    fn release(&self, vmid: u32) {
        self.reserved
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&vmid);
    }

    /// Carries out one step.
    ///
    /// # Errors
    /// PVE's, and failed tasks.
    pub async fn execute(&self, pve: &Pve, step: &Step) -> Result<()> {
        // Instrumented, never entered: a guard held across `.await` would
        // lend this span to whatever else runs on the thread meanwhile.
        let span = tracing::info_span!("step", step = step.name());
        self.execute_step(pve, step).instrument(span).await
    }

    async fn execute_step(&self, pve: &Pve, step: &Step) -> Result<()> {
        let qemu = pve.client.qemu();
        match step {
            Step::Create {
                node, vmid, params, ..
            } => {
                let mut req = CreateVm::new(*vmid);
                for (k, v) in params {
                    req = req.set(k.clone(), v.as_str());
                }
                pve.wait(qemu.create_vm(node, &req).await?).await?;
                info!(
                    vmid = *vmid,
                    node = node.as_str(),
                    "Successfully created VM vmid={vmid} node={node}"
                );
            }
            Step::Clone {
                node,
                source,
                vmid,
                target,
                name,
                description,
                full,
                storage,
                ..
            } => {
                let req = CloneVm {
                    name: Some(name.clone()),
                    description: Some(description.clone()),
                    full: Some(*full),
                    target: target.clone(),
                    storage: storage.clone(),
                    ..CloneVm::new(*vmid)
                };
                pve.wait(qemu.clone_vm(node, *source, &req).await?).await?;
                let at = target.as_deref().unwrap_or(node);
                info!(
                    vmid = *vmid,
                    node = at,
                    source = *source,
                    "Successfully created VM vmid={vmid} node={at}"
                );
            }
            Step::Configure {
                node,
                vmid,
                set,
                delete,
            } => {
                let mut req = UpdateVm::new();
                for (k, v) in set {
                    req = req.set(k.clone(), v.as_str());
                }
                for k in delete {
                    req = req.delete(k);
                }
                qemu.update_vm(node, *vmid, &req).await?;
                info!(vmid = *vmid, keys = ?set.iter().map(|x| &x.0).collect::<Vec<_>>(), deleted = ?delete, "configured VM");
            }
            Step::Resize {
                node,
                vmid,
                disk,
                size,
            } => {
                let req = ResizeVm::new(disk, size);
                pve.wait(qemu.resize_vm(node, *vmid, &req).await?).await?;
                info!(
                    vmid = *vmid,
                    disk = disk.as_str(),
                    size = size.as_str(),
                    "resized disk"
                );
            }
            Step::Start { node, vmid } => {
                let upid = qemu.vm_start(node, *vmid, &StartOptions::default()).await?;
                pve.wait(upid).await?;
                info!(vmid = *vmid, node = node.as_str(), "started VM");
            }
            Step::Stop { node, vmid } => {
                let upid = qemu.vm_stop(node, *vmid, &StopOptions::default()).await?;
                pve.wait(upid).await?;
                info!(vmid = *vmid, node = node.as_str(), "stopped VM");
            }
            Step::Shutdown {
                node,
                vmid,
                timeout,
            } => {
                let opts = ShutdownOptions {
                    force_stop: Some(true),
                    timeout: Some(*timeout),
                    ..ShutdownOptions::default()
                };
                pve.wait(qemu.vm_shutdown(node, *vmid, &opts).await?)
                    .await?;
                info!(vmid = *vmid, node = node.as_str(), "shut VM down");
            }
            Step::Reboot { node, vmid } => {
                pve.wait(qemu.vm_reboot(node, *vmid, None).await?).await?;
                info!(vmid = *vmid, node = node.as_str(), "rebooted VM");
            }
            Step::Suspend { node, vmid } => {
                let opts = SuspendOptions::default();
                pve.wait(qemu.vm_suspend(node, *vmid, &opts).await?).await?;
                info!(vmid = *vmid, node = node.as_str(), "suspended VM");
            }
            Step::Resume { node, vmid } => {
                pve.wait(qemu.vm_resume(node, *vmid, false).await?).await?;
                info!(vmid = *vmid, node = node.as_str(), "resumed VM");
            }
            Step::Destroy { node, vmid } => {
                let opts = DestroyOptions {
                    purge: Some(true),
                    destroy_unreferenced_disks: Some(true),
                    ..DestroyOptions::default()
                };
                pve.wait(qemu.destroy_vm(node, *vmid, &opts).await?).await?;
                info!(
                    vmid = *vmid,
                    node = node.as_str(),
                    "Successfully deleted VM vmid={vmid} node={node}"
                );
            }
            Step::Snapshot {
                node,
                vmid,
                name,
                description,
                vmstate,
            } => {
                let opts = SnapshotOptions {
                    vmstate: vmstate.then_some(true),
                    description: description.clone(),
                };
                pve.wait(qemu.snapshot(node, *vmid, name, &opts).await?)
                    .await?;
                info!(vmid = *vmid, snapshot = name.as_str(), "took snapshot");
            }
            Step::Rollback { node, vmid, name } => {
                pve.wait(qemu.rollback(node, *vmid, name, false).await?)
                    .await?;
                info!(vmid = *vmid, snapshot = name.as_str(), "rolled back");
            }
            Step::DeleteSnapshot { node, vmid, name } => {
                pve.wait(qemu.delsnapshot(node, *vmid, name, false).await?)
                    .await?;
                info!(vmid = *vmid, snapshot = name.as_str(), "deleted snapshot");
            }
            Step::DownloadUrl {
                node,
                storage,
                url,
                filename,
                checksum,
            } => {
                let mut req = DownloadUrl::new(url, "import", filename);
                if let Some((sum, alg)) = checksum {
                    req = req.checksum(alg, sum);
                }
                let upid = pve
                    .client
                    .storage()
                    .download_url(node, storage, &req)
                    .await?;
                pve.wait(upid).await?;
                info!(
                    url = url.as_str(),
                    storage = storage.as_str(),
                    "downloaded image"
                );
            }
            Step::Template { node, vmid } => {
                pve.wait(qemu.template(node, *vmid, None).await?).await?;
                info!(vmid = *vmid, "turned VM into a template");
            }
        }
        Ok(())
    }

    /// One reconcile of a Machine: observe, plan, one step, again, until
    /// PVE matches the spec (or it is deleted, when `deleting`).
    pub async fn reconcile_machine(
        &self,
        world: &World,
        m: &Object<MachineSpec>,
        old: &MachineStatus,
        deleting: bool,
    ) -> MachineOutcome {
        let span = tracing::info_span!("reconcile", machine = m.metadata.name.as_str());
        self.reconcile_machine_in_span(world, m, old, deleting)
            .instrument(span)
            .await
    }

    async fn reconcile_machine_in_span(
        &self,
        world: &World,
        m: &Object<MachineSpec>,
        old: &MachineStatus,
        deleting: bool,
    ) -> MachineOutcome {
        let start = Instant::now();
        let mut status = old.clone();
        let out = self.machine_inner(world, m, &mut status, deleting).await;
        let now = now_rfc3339();
        status.last_updated = Some(now.clone());
        let outcome = match out {
            Ok((finalized, wait)) => MachineOutcome {
                status,
                finalized,
                wait,
                error: None,
            },
            Err(e) => {
                let t = e.error_type();
                self.metrics.error(t.as_str(), "machine");
                if t == crate::error::ErrorType::Authentication {
                    self.drop_conn(&m.spec.cluster);
                }
                warn!(machine = m.metadata.name.as_str(), error = %e, error_type = t.as_str(), "reconcile failed");
                let reason = if matches!(&e, Error::Pve(p) if p.status() == Some(595)) {
                    "NodeUnhealthy"
                } else {
                    t.reason()
                };
                set_condition(
                    &mut status.conditions,
                    Condition::new("Ready", false, reason, e.to_string()),
                    &now,
                );
                if let Error::Refused { .. } = &e {
                    set_condition(
                        &mut status.conditions,
                        Condition::new("VMCreated", false, "CreationFailed", e.to_string()),
                        &now,
                    );
                }
                if status.vmid.is_none() && !t.is_retryable() {
                    status.phase = Phase::Error;
                }
                MachineOutcome {
                    status,
                    finalized: false,
                    wait: false,
                    error: Some(e),
                }
            }
        };
        self.metrics
            .reconcile_duration("machine", start.elapsed().as_secs_f64());
        outcome
    }

    async fn machine_inner(
        &self,
        world: &World,
        m: &Object<MachineSpec>,
        status: &mut MachineStatus,
        deleting: bool,
    ) -> Result<(bool, bool)> {
        let d = Desired::from_machine(m);
        let now = now_rfc3339();
        if !d.errors.is_empty() && !deleting {
            let p = plan::plan_machine(&d, &Observed::default());
            apply(status, &p, &now);
            return Ok((false, false));
        }
        if deleting && m.spec.deletion_policy == crate::types::DeletionPolicy::Orphan {
            // Nothing to do in PVE: no need to reach it.
            info!(
                vmid = ?status.vmid,
                "orphaning the VM, if any: deletionPolicy is Orphan"
            );
            return Ok((true, false));
        }
        if deleting && !self.knows_cluster(world, &m.spec.cluster) {
            // Nothing can be done in a cluster that is not declared; a
            // finalizer kept for ever would help nobody.
            warn!(
                cluster = m.spec.cluster.as_str(),
                vmid = ?status.vmid,
                "ProxmoxCluster not found: the VM, if any, is left in PVE"
            );
            return Ok((true, false));
        }
        let pve = match self.connect(world, &m.spec.cluster).await {
            Ok(p) => p,
            Err(e) if deleting => return Err(Error::Deleting(Box::new(e))),
            Err(e) => return Err(e),
        };
        let mut extra_used = BTreeSet::new();
        let mut done: Vec<Step> = Vec::new();
        for _ in 0..MAX_STEPS {
            // A machine without a VM is placed alone, seeing the choices
            // made for the others in this pass.
            let mut placing = if status.vmid.is_none() && !deleting {
                Some(self.placing.lock().await)
            } else {
                None
            };
            let mut o = self
                .observe(&pve, world, &d, status.vmid, &extra_used)
                .await?;
            o.last_reboot = status.last_reboot.clone();
            if let Some(placed) = placing.as_mut() {
                add_placed(&mut o, placed, world, &m.spec.cluster, &m.metadata.name);
            }
            if deleting {
                let dp = plan::plan_delete(m.spec.deletion_policy, o.vm.as_ref());
                if dp.done {
                    if let Some(vm) = &o.vm {
                        info!(vmid = vm.vmid, "orphaning VM: deletionPolicy is Orphan");
                    }
                    return Ok((true, false));
                }
                if let Some(b) = dp.blocked {
                    set_condition(
                        &mut status.conditions,
                        Condition::new("Ready", false, "DeletionBlocked", b),
                        &now,
                    );
                    return Ok((false, false));
                }
                match dp.steps.first() {
                    Some(s) => self.execute(&pve, s).await?,
                    None => return Ok((false, true)),
                }
                continue;
            }
            let p = plan::plan_machine(&d, &o);
            if o.vm.is_none() {
                // No VM (any more): forget the VMID, node and addresses,
                // and the conditions that spoke of them (the VMID may
                // belong to another machine by now).
                status.vmid = None;
                status.node = None;
                status.ip_addresses.clear();
                status
                    .conditions
                    .retain(|c| p.conditions.iter().any(|n| n.kind == c.kind));
            }
            apply(status, &p, &now);
            status.console = None;
            if let Some(vm) = &o.vm {
                status.ip_addresses = vm.ip_addresses.clone();
                let api = pve.client.config().api_url();
                let ui = api.strip_suffix("/api2/json").unwrap_or(api);
                status.console = Some(plan::console(ui, &vm.node, vm.vmid, &vm.config));
            }
            let Some(step) = p.steps.first() else {
                return Ok((false, p.wait));
            };
            // A step planned again after it ran changed nothing: stop
            // instead of sending it for ever.
            if done.contains(step) {
                return Err(Error::NoProgress(format!(
                    "{} of VM {} changed nothing and is planned again",
                    step.name(),
                    p.vmid.map_or_else(|| "-".to_string(), |v| v.to_string())
                )));
            }
            if let (Some(placed), Some(node)) = (placing.as_mut(), p.node.as_ref())
                && let Step::Create { vmid, .. } | Step::Clone { vmid, .. } = step
            {
                placed.insert(
                    (m.spec.cluster.clone(), m.metadata.name.clone()),
                    Placed {
                        node: node.clone(),
                        labels: m.metadata.labels.clone(),
                        memory: d.memory_mib * plan::MIB,
                        vmid: *vmid,
                    },
                );
            }
            drop(placing);
            match step {
                Step::Create { vmid, auto, .. } | Step::Clone { vmid, auto, .. } => {
                    if !self.reserve(*vmid) {
                        extra_used.insert(*vmid);
                        continue;
                    }
                    let r = self.execute(&pve, step).await;
                    self.release(*vmid);
                    match r {
                        Err(e) if *auto && e.is_already_exists() => {
                            info!(vmid = *vmid, "VMID taken meanwhile; choosing another");
                            extra_used.insert(*vmid);
                            continue;
                        }
                        // PVE answered no (500 with its reason): the
                        // same request would get the same answer.
                        Err(Error::Pve(source))
                            if source.status() == Some(500)
                                && source.category() == pve_client::Category::Server =>
                        {
                            return Err(Error::Refused {
                                step: step.name(),
                                source,
                            });
                        }
                        Err(e) => return Err(e),
                        Ok(()) => {
                            status.vmid = Some(*vmid);
                            status.node = p.node.clone();
                            // A new VM needs no reboot.
                            status.last_reboot = m.spec.reboot_request.clone();
                        }
                    }
                }
                s => {
                    self.execute(&pve, s).await?;
                    // A start boots afresh: it counts as the reboot.
                    if let Step::Reboot { .. } | Step::Start { .. } = s {
                        status.last_reboot = m.spec.reboot_request.clone();
                    }
                    done.push(s.clone());
                }
            }
        }
        Ok((false, true))
    }

    // -----------------------------------------------------------------
    // Snapshots

    /// One reconcile of a MachineSnapshot. Returns the status, whether the
    /// deletion finished, and the error to back off on.
    pub async fn reconcile_snapshot(
        &self,
        world: &World,
        s: &Object<MachineSnapshotSpec>,
        old: &MachineSnapshotStatus,
        deleting: bool,
    ) -> (MachineSnapshotStatus, bool, Option<Error>) {
        let start = Instant::now();
        let mut st = old.clone();
        st.last_updated = Some(now_rfc3339());
        let span = tracing::info_span!("snapshot", snapshot = s.metadata.name.as_str());
        let r = self
            .snapshot_inner(world, s, &mut st, deleting)
            .instrument(span)
            .await;
        self.metrics
            .reconcile_duration("snapshot", start.elapsed().as_secs_f64());
        match r {
            Ok(done) => (st, done, None),
            Err(e) => {
                self.metrics.error(e.error_type().as_str(), "snapshot");
                st.message = Some(e.to_string());
                (st, false, Some(e))
            }
        }
    }

    async fn snapshot_inner(
        &self,
        world: &World,
        s: &Object<MachineSnapshotSpec>,
        st: &mut MachineSnapshotStatus,
        deleting: bool,
    ) -> Result<bool> {
        let errors = validate::validate_snapshot(&s.metadata.name, &s.spec);
        if !errors.is_empty() {
            st.ready = false;
            st.message = Some(
                errors
                    .iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect::<Vec<_>>()
                    .join("; "),
            );
            return Ok(deleting);
        }
        let name = validate::snapshot_name(&s.metadata.name, &s.spec);
        st.snapshot_name = Some(name.clone());
        let machine = world.machines.get(&s.spec.machine);
        let target =
            machine.and_then(|(m, ms)| Some((m.spec.cluster.clone(), ms.node.clone()?, ms.vmid?)));
        // The Machine gone (deleted with it): where the snapshot was taken.
        // (A status written before the cluster was recorded: the only
        // cluster, never a guess among several.)
        let recorded = st.cluster.clone().or_else(|| {
            (world.clusters.len() == 1)
                .then(|| world.clusters.keys().next().cloned())
                .flatten()
        });
        let Some((cluster, node, vmid)) =
            target.or_else(|| Some((recorded?, st.node.clone()?, st.vmid?)).filter(|_| deleting))
        else {
            st.ready = false;
            st.message = Some(format!(
                "waiting for machine '{}' to be created",
                s.spec.machine
            ));
            return Ok(deleting);
        };
        st.cluster = Some(cluster.clone());
        st.node = Some(node.clone());
        st.vmid = Some(vmid);
        let pve = self.connect(world, &cluster).await?;
        for _ in 0..4 {
            let names = match pve.snapshot_names(&node, vmid).await {
                Ok(v) => v,
                Err(e) if deleting && e.error_type() == crate::error::ErrorType::NotFound => {
                    return Ok(true);
                }
                Err(e) => return Err(e),
            };
            let steps =
                plan::plan_snapshot(&name, &s.spec, st, Some((&node, vmid)), &names, deleting);
            let Some(step) = steps.first() else {
                st.ready = !deleting;
                st.message = None;
                return Ok(deleting);
            };
            self.execute(&pve, step).await?;
            if matches!(step, Step::Rollback { .. }) {
                st.last_rollback = s.spec.rollback_request.clone();
            }
        }
        Ok(false)
    }

    // -----------------------------------------------------------------
    // Images

    /// One reconcile of a MachineImage: the template exists, or is made.
    pub async fn reconcile_image(
        &self,
        world: &World,
        i: &Object<MachineImageSpec>,
        old: &MachineImageStatus,
    ) -> (MachineImageStatus, Option<Error>) {
        let start = Instant::now();
        let mut st = old.clone();
        st.last_updated = Some(now_rfc3339());
        let span = tracing::info_span!("image", image = i.metadata.name.as_str());
        let r = self.image_inner(world, i, &mut st).instrument(span).await;
        self.metrics
            .reconcile_duration("image", start.elapsed().as_secs_f64());
        match r {
            Ok(()) => (st, None),
            Err(e) => {
                self.metrics.error(e.error_type().as_str(), "image");
                st.ready = false;
                st.message = Some(e.to_string());
                (st, Some(e))
            }
        }
    }

    async fn image_inner(
        &self,
        world: &World,
        i: &Object<MachineImageSpec>,
        st: &mut MachineImageStatus,
    ) -> Result<()> {
        let errors = validate::validate_image(&i.metadata.name, &i.spec);
        if !errors.is_empty() {
            st.ready = false;
            st.message = Some(
                errors
                    .iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect::<Vec<_>>()
                    .join("; "),
            );
            return Ok(());
        }
        let pve = self.connect(world, &i.spec.cluster).await?;
        let name = validate::pve_name(i.spec.name.as_deref().unwrap_or(&i.metadata.name));
        for _ in 0..6 {
            let res = pve.resources().await?;
            if let Some(t) = &i.spec.template {
                match find_source(&res, t, false) {
                    SourceState::Found { node, vmid } => {
                        st.ready = true;
                        st.node = Some(node);
                        st.vmid = Some(vmid);
                        st.message = None;
                    }
                    SourceState::Missing(m) => {
                        st.ready = false;
                        st.message = Some(m);
                    }
                    SourceState::None => st.ready = false,
                }
                return Ok(());
            }
            // From a URL: a VM of this name with our mark, made a template.
            let mark = plan::ownership_mark(&i.spec.cluster, &format!("image/{}", i.metadata.name));
            let mut mine = None;
            for r in res
                .iter()
                .filter(|r| r.kind == "qemu" && r.name.as_deref() == Some(&name))
            {
                let (Some(node), Some(vmid)) = (r.node.clone(), r.vmid) else {
                    continue;
                };
                let cfg = pve
                    .client
                    .qemu()
                    .vm_config(&node, vmid as u32, &ConfigView::Pending)
                    .await?;
                if cfg
                    .description
                    .as_deref()
                    .is_some_and(|d| d.lines().any(|l| l.trim() == mark))
                {
                    mine = Some((node, vmid as u32, r.template == Some(true)));
                    break;
                }
            }
            let node = match (&mine, &i.spec.node) {
                (Some((n, _, _)), _) => n.clone(),
                (None, Some(n)) => n.clone(),
                (None, None) => node_entries(&res)
                    .into_iter()
                    .find(|n| n.ready)
                    .map(|n| n.name)
                    .ok_or_else(|| Error::Config("no online node".into()))?,
            };
            if let Some((node, vmid, true)) = &mine {
                st.ready = true;
                st.node = Some(node.clone());
                st.vmid = Some(*vmid);
                st.message = None;
                return Ok(());
            }
            let url = i.spec.url.clone().unwrap_or_default();
            let file = i
                .spec
                .file_name
                .clone()
                .unwrap_or_else(|| import_file_name(&url));
            let step = if let Some((node, vmid, false)) = mine {
                Step::Template { node, vmid }
            } else {
                let volid = format!("{}:import/{file}", i.spec.download_storage);
                let have = pve
                    .volids(&node, &i.spec.download_storage)
                    .await?
                    .contains(&volid);
                if have {
                    let used: BTreeSet<u32> = res
                        .iter()
                        .filter_map(|r| r.vmid.map(|v| v as u32))
                        .collect();
                    let vmid = match i.spec.vmid {
                        Some(v) => v,
                        None => plan::assign_vmid(&used)
                            .ok_or_else(|| Error::Config("no free VMID".into()))?,
                    };
                    Step::Create {
                        node: node.clone(),
                        vmid,
                        auto: i.spec.vmid.is_none(),
                        params: vec![
                            ("name".into(), name.clone()),
                            ("description".into(), mark.clone()),
                            ("tags".into(), plan::MARK_TAG.into()),
                            (
                                "scsi0".into(),
                                format!("{}:0,import-from={volid}", i.spec.storage),
                            ),
                            ("scsihw".into(), "virtio-scsi-single".into()),
                        ],
                    }
                } else {
                    Step::DownloadUrl {
                        node: node.clone(),
                        storage: i.spec.download_storage.clone(),
                        url: url.clone(),
                        filename: file.clone(),
                        checksum: i.spec.checksum.clone().map(|c| {
                            (
                                c,
                                i.spec
                                    .checksum_algorithm
                                    .clone()
                                    .unwrap_or_else(|| "sha256".into()),
                            )
                        }),
                    }
                }
            };
            st.message = Some(format!("{} in progress", step.name()));
            self.execute(&pve, &step).await?;
        }
        Ok(())
    }
}

/// The name a downloaded disk image gets in a storage's `import`
/// content: the URL's last segment, except that a cloud image's `.img`
/// (which PVE's `import` content does not take: it knows `.qcow2`,
/// `.raw`, `.vmdk`, `.ova`) is saved as the QCOW2 it is (Ubuntu's and
/// Debian's `.img` cloud images are QCOW2; give `fileName: x.raw` for a
/// raw one).
fn import_file_name(url: &str) -> String {
    let last = url
        .split(['?', '#'])
        .next()
        .unwrap_or_default()
        .rsplit('/')
        .next()
        .unwrap_or_default();
    match last.strip_suffix(".img") {
        Some(stem) if !stem.is_empty() => format!("{stem}.qcow2"),
        _ => last.to_string(),
    }
}

/// A clone's source by VMID or name: a template, or for a full clone
/// (`any`) any VM (templates first when names repeat).
fn find_source(res: &[ClusterResource], t: &str, any: bool) -> SourceState {
    let qemu = |r: &&ClusterResource| r.kind == "qemu";
    let found = match validate::parse_image(t) {
        Ok(ImageRef::Vmid(v)) => res
            .iter()
            .filter(qemu)
            .find(|r| r.vmid == Some(u64::from(v))),
        Ok(ImageRef::Name(n)) => {
            let named = |r: &&ClusterResource| r.name.as_deref() == Some(&n);
            res.iter()
                .filter(qemu)
                .filter(named)
                .find(|r| r.template == Some(true))
                .or_else(|| res.iter().filter(qemu).find(named))
        }
        _ => None,
    };
    match found {
        Some(r) if r.template == Some(true) || any => SourceState::Found {
            node: r.node.clone().unwrap_or_default(),
            vmid: r.vmid.unwrap_or_default() as u32,
        },
        Some(r) => SourceState::Missing(format!(
            "VM {} is not a template: a linked clone needs one (a full clone, linked: false, copies any VM)",
            r.vmid.unwrap_or_default()
        )),
        None => SourceState::Missing(format!("template '{t}' not found")),
    }
}

/// Per-node entries from `/cluster/resources`.
fn node_entries(res: &[ClusterResource]) -> Vec<NodeStatusEntry> {
    res.iter()
        .filter(|r| r.kind == "node")
        .map(|r| {
            let name = r.node.clone().unwrap_or_default();
            let vms: Vec<&ClusterResource> = res
                .iter()
                .filter(|g| g.kind == "qemu" && g.node.as_deref() == Some(name.as_str()))
                .collect();
            NodeStatusEntry {
                ready: r.status.as_deref() == Some("online"),
                resources: NodeResources {
                    cpu: Usage {
                        total: r.maxcpu.unwrap_or(0.0) as u64,
                        used: vms
                            .iter()
                            .filter(|g| matches!(g.status.as_deref(), Some("running" | "paused")))
                            .map(|g| g.maxcpu.unwrap_or(0.0) as u64)
                            .sum(),
                    },
                    memory: Usage {
                        total: r.maxmem.unwrap_or(0),
                        used: r.mem.unwrap_or(0),
                    },
                    storage: Usage {
                        total: r.maxdisk.unwrap_or(0),
                        used: r.disk.unwrap_or(0),
                    },
                },
                vm_count: vms.len() as u32,
                name,
            }
        })
        .collect()
}

/// Writes a plan's phase, placement and conditions into a status.
fn apply(status: &mut MachineStatus, p: &plan::Plan, now: &str) {
    status.phase = p.phase;
    if p.vmid.is_some()
        && !p
            .steps
            .iter()
            .any(|s| matches!(s, Step::Create { .. } | Step::Clone { .. }))
    {
        status.vmid = p.vmid;
        status.node = p.node.clone();
    }
    for c in &p.conditions {
        set_condition(&mut status.conditions, c.clone(), now);
    }
}

/// Adds to what is observed the machines placed in this pass that the
/// world does not show yet: as peers (anti-affinity), and on their node's
/// figures while their VM is not in the cluster's resources yet.
fn add_placed(
    o: &mut Observed,
    placed: &mut BTreeMap<(String, String), Placed>,
    world: &World,
    cluster: &str,
    me: &str,
) {
    // Choices the world shows now (or of machines gone) are done with.
    placed.retain(|(_, name), _| {
        world
            .machines
            .get(name)
            .is_some_and(|(_, st)| st.node.is_none())
    });
    for ((c, name), p) in placed.iter() {
        if c != cluster || name == me {
            continue;
        }
        if !o.peers.iter().any(|x| &x.machine == name) {
            o.peers.push(plan::Peer {
                machine: name.clone(),
                labels: p.labels.clone(),
                node: p.node.clone(),
            });
        }
        if !o.used_vmids.contains(&p.vmid)
            && let Some(n) = o.nodes.iter_mut().find(|n| n.name == p.node)
        {
            n.allocated_mem += p.memory;
            n.vm_count += 1;
        }
    }
}
