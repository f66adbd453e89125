//! The executor: connects to clusters, observes PVE, calls the planner,
//! carries out one step at a time and observes again, and reports status
//! and conditions. Shared by every reconcile (VMID reservations,
//! connections, metrics).

mod cluster;
mod connect;
mod execute;
mod image;
mod machine;
mod observe;
mod pve;
mod snapshot;

pub use pve::Pve;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use pve_client::{Client, ConfigBuilder};

use crate::error::Error;
use crate::metrics::Metrics;
use crate::types::{
    MachineImageSpec, MachineImageStatus, MachineSpec, MachineStatus, Object, ProxmoxClusterSpec,
    ProxmoxNodeSpec, SecretObject,
};

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
    /// On Kubernetes, the operator's own objects of the namespace by kind
    /// and name, each with the uid of the object that controls it (its
    /// controller owner reference), if any: another system's object is
    /// applied only where no object of its name exists or onto the one
    /// it controls, never over another.
    pub owners: BTreeMap<crate::types::Key, Option<String>>,
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
pub(super) struct Placed {
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
}
