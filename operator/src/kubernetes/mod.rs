//! The operator as a Kubernetes controller (`pve-operator run
//! --kubernetes`): kube-rs controllers over the custom resources, the
//! shared reconcile core of [`crate::controller`], status written by
//! server-side apply, Events, finalizers and a Lease for leader election.
//!
//! Each reconcile sees a [`World`] of its namespace (clusters, nodes,
//! machines with their statuses, images and Secrets) from reflector stores
//! ([`Stores`]), or any other [`WorldSource`] (tests use a fixed one).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event as KubeEvent, EventType, Recorder, Reporter};
use kube::runtime::finalizer::{Event as Finalize, finalizer};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tracing::{info, warn};

use crate::controller::{Operator, World};
use crate::types::{
    API_VERSION, Machine, MachineImage, MachineSnapshot, MachineStatus, Metadata, Object,
    ProxmoxCluster, ProxmoxNode, SecretObject,
};

mod dialects;
mod lead;

pub use dialects::sync_dialects;
pub use lead::Leadership;

/// The finalizer the operator puts on Machines and MachineSnapshots.
pub const FINALIZER: &str = "pve.fake-pve.io/finalizer";

/// The field manager of its server-side applies.
pub const MANAGER: &str = "pve-operator";

/// Why a Kubernetes reconcile did not finish.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the API server failed.
    #[error("kubernetes: {0}")]
    Kube(#[from] kube::Error),
    /// The finalizer helper failed.
    #[error("finalizer: {0}")]
    Finalizer(String),
    /// The reconcile core failed (retried with backoff when it may pass).
    #[error("{0}")]
    Core(crate::error::Error),
    /// A deletion goes on in PVE; look again soon.
    #[error("deletion in progress")]
    Deleting,
}

/// The world a reconcile sees, per namespace.
pub trait WorldSource: Send + Sync {
    /// Everything of `namespace`.
    fn world(&self, namespace: &str) -> World;
}

/// A world that does not change (tests, one-off runs).
#[derive(Debug, Clone, Default)]
pub struct FixedWorld(pub World);

impl WorldSource for FixedWorld {
    fn world(&self, _namespace: &str) -> World {
        self.0.clone()
    }
}

/// Reflector stores of every kind the core reads.
#[derive(Clone)]
pub struct Stores {
    clusters: Store<ProxmoxCluster>,
    nodes: Store<ProxmoxNode>,
    machines: Store<Machine>,
    images: Store<MachineImage>,
    secrets: Store<Secret>,
    snapshots: Option<Store<MachineSnapshot>>,
}

impl Stores {
    /// Stores filled by reflectors (or by hand, in tests).
    pub fn new(
        clusters: Store<ProxmoxCluster>,
        nodes: Store<ProxmoxNode>,
        machines: Store<Machine>,
        images: Store<MachineImage>,
        secrets: Store<Secret>,
    ) -> Self {
        Self {
            clusters,
            nodes,
            machines,
            images,
            secrets,
            snapshots: None,
        }
    }

    /// With the MachineSnapshots too (their names and owners, so that
    /// another system's snapshot is not applied over one of them).
    #[must_use]
    pub fn with_snapshots(mut self, snapshots: Store<MachineSnapshot>) -> Self {
        self.snapshots = Some(snapshots);
        self
    }
}

/// The uid of the object that controls `meta`'s object, if any.
fn controller_uid(meta: &ObjectMeta) -> Option<String> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
        .map(|o| o.uid.clone())
}

fn owned<K: Resource<DynamicType = ()>>(w: &mut World, k: &K) {
    w.owners.insert(
        crate::types::Key {
            kind: K::kind(&()).into_owned(),
            name: k.name_any(),
        },
        controller_uid(k.meta()),
    );
}

fn in_ns<K: Resource>(k: &K, ns: &str) -> bool {
    k.meta().namespace.as_deref().unwrap_or("default") == ns
}

impl WorldSource for Stores {
    fn world(&self, ns: &str) -> World {
        let mut w = World::default();
        for c in self.clusters.state().iter().filter(|c| in_ns(&***c, ns)) {
            w.clusters
                .insert(c.name_any(), object(&c.metadata, c.spec.clone()));
        }
        for n in self.nodes.state().iter().filter(|n| in_ns(&***n, ns)) {
            w.nodes.push(object(&n.metadata, n.spec.clone()));
        }
        for m in self.machines.state().iter().filter(|m| in_ns(&***m, ns)) {
            w.machines.insert(
                m.name_any(),
                (
                    object(&m.metadata, m.spec.clone()),
                    m.status.clone().unwrap_or_default(),
                ),
            );
        }
        for i in self.images.state().iter().filter(|i| in_ns(&***i, ns)) {
            w.images.insert(
                i.name_any(),
                (
                    object(&i.metadata, i.spec.clone()),
                    i.status.clone().unwrap_or_default(),
                ),
            );
        }
        for s in self.secrets.state().iter().filter(|s| in_ns(&***s, ns)) {
            w.secrets.insert(s.name_any(), secret(s));
        }
        for c in self.clusters.state().iter().filter(|c| in_ns(&***c, ns)) {
            owned(&mut w, &**c);
        }
        for n in self.nodes.state().iter().filter(|n| in_ns(&***n, ns)) {
            owned(&mut w, &**n);
        }
        for m in self.machines.state().iter().filter(|m| in_ns(&***m, ns)) {
            owned(&mut w, &**m);
        }
        for i in self.images.state().iter().filter(|i| in_ns(&***i, ns)) {
            owned(&mut w, &**i);
        }
        for s in self.snapshots.iter().flat_map(Store::state) {
            if in_ns(&*s, ns) {
                owned(&mut w, &*s);
            }
        }
        w
    }
}

/// The core's view of an object's metadata and spec.
pub fn object<S: Clone>(meta: &ObjectMeta, spec: S) -> Object<S> {
    Object {
        api_version: API_VERSION.into(),
        metadata: Metadata {
            name: meta.name.clone().unwrap_or_default(),
            labels: meta.labels.clone().unwrap_or_default(),
            annotations: meta.annotations.clone().unwrap_or_default(),
        },
        spec,
    }
}

/// A Secret's keys in clear (`data` decoded, `stringData` over it).
pub fn secret(s: &Secret) -> SecretObject {
    let mut string_data: BTreeMap<String, String> = s
        .data
        .iter()
        .flatten()
        .map(|(k, v)| (k.clone(), String::from_utf8_lossy(&v.0).into_owned()))
        .collect();
    for (k, v) in s.string_data.iter().flatten() {
        string_data.insert(k.clone(), v.clone());
    }
    SecretObject {
        api_version: "v1".into(),
        metadata: Metadata {
            name: s.name_any(),
            ..Metadata::default()
        },
        string_data,
    }
}

/// What every reconcile shares.
pub struct Ctx {
    /// The API server.
    pub client: Client,
    /// The reconcile core.
    pub operator: Arc<Operator>,
    /// The world of a namespace.
    pub worlds: Arc<dyn WorldSource>,
    /// Records Events.
    pub recorder: Recorder,
    /// Periodic resync.
    pub interval: Duration,
    /// Attempts per object and the backoff (the standalone loop's policy).
    pub retries: crate::error::Retries,
    /// Whether this replica leads: nothing is reconciled while it does
    /// not.
    pub leadership: Arc<Leadership>,
}

/// A reconcile of a replica that does not lead (any more): nothing is
/// done, the object is looked at again soon.
fn follower(ctx: &Ctx) -> Option<Action> {
    (!ctx.leadership.leads()).then(|| Action::requeue(Duration::from_secs(2)))
}

/// Writes `status` by server-side apply on the status subresource.
async fn apply_status<K, S>(api: &Api<K>, obj: &K, status: &S) -> Result<(), Error>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
    S: Serialize,
{
    let patch = serde_json::json!({
        "apiVersion": K::api_version(&()),
        "kind": K::kind(&()),
        "status": status,
    });
    api.patch_status(
        &obj.name_any(),
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(&patch),
    )
    .await?;
    Ok(())
}

async fn event<K: Resource<DynamicType = ()>>(
    ctx: &Ctx,
    obj: &K,
    warning: bool,
    reason: &str,
    note: String,
) {
    let ev = KubeEvent {
        type_: if warning {
            EventType::Warning
        } else {
            EventType::Normal
        },
        reason: reason.into(),
        note: Some(note),
        action: "Reconcile".into(),
        secondary: None,
    };
    if let Err(e) = ctx.recorder.publish(&ev, &obj.object_ref(&())).await {
        warn!("cannot record an event: {e}");
    }
}

fn ns_of<K: Resource>(k: &K) -> String {
    k.meta()
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into())
}

/// One reconcile of a Machine.
///
/// # Errors
/// The API server's, the core's (retried with backoff), or a deletion
/// still going on.
pub async fn reconcile_machine(m: Arc<Machine>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    if let Some(a) = follower(&ctx) {
        return Ok(a);
    }
    let api: Api<Machine> = Api::namespaced(ctx.client.clone(), &ns_of(&*m));
    finalizer(&api, FINALIZER, m, |ev| async {
        match ev {
            Finalize::Apply(m) => machine(&api, &ctx, &m, false).await,
            Finalize::Cleanup(m) => machine(&api, &ctx, &m, true).await,
        }
    })
    .await
    .map_err(unwrap_finalizer)
}

/// The reconcile's own error out of the finalizer helper's.
fn unwrap_finalizer(e: kube::runtime::finalizer::Error<Error>) -> Error {
    match e {
        kube::runtime::finalizer::Error::ApplyFailed(e)
        | kube::runtime::finalizer::Error::CleanupFailed(e) => e,
        other => Error::Finalizer(other.to_string()),
    }
}

/// The cluster of a Machine that names none: `default` (the operator's
/// `PROXMOX_DEFAULT_CLUSTER`), else the namespace's only ProxmoxCluster.
pub fn default_cluster(default: Option<String>, world: &World) -> Option<String> {
    default.filter(|d| !d.trim().is_empty()).or_else(|| {
        let mut names = world.clusters.keys();
        match (names.next(), names.next()) {
            (Some(one), None) => Some(one.clone()),
            _ => None,
        }
    })
}

async fn machine(
    api: &Api<Machine>,
    ctx: &Ctx,
    m: &Machine,
    deleting: bool,
) -> Result<Action, Error> {
    let world = ctx.worlds.world(&ns_of(m));
    let old: MachineStatus = m.status.clone().unwrap_or_default();
    let mut obj = object(&m.metadata, m.spec.clone());
    if obj.spec.cluster.is_empty()
        && let Some(c) = default_cluster(std::env::var("PROXMOX_DEFAULT_CLUSTER").ok(), &world)
    {
        obj.spec.cluster = c;
    }
    // The status after each step that changed PVE is written while the
    // reconcile goes on (a failed write is made good by the last one).
    let (tx, mut told) = tokio::sync::mpsc::unbounded_channel::<MachineStatus>();
    let tell = move |st: &MachineStatus| {
        let _ = tx.send(st.clone());
    };
    let reconcile = ctx
        .operator
        .reconcile_machine_with_progress(&world, &obj, &old, deleting, &tell);
    tokio::pin!(reconcile);
    let out = loop {
        tokio::select! {
            out = &mut reconcile => break out,
            Some(st) = told.recv() => {
                if let Err(e) = apply_status(api, m, &st).await {
                    warn!("writing a machine's progress: {e}");
                }
            }
        }
    };
    if !(deleting && out.finalized) {
        apply_status(api, m, &out.status).await?;
    }
    if old.vmid.is_none()
        && let Some(vmid) = out.status.vmid
    {
        let node = out.status.node.clone().unwrap_or_default();
        event(
            ctx,
            m,
            false,
            "Created",
            format!("Successfully created VM vmid={vmid} node={node}"),
        )
        .await;
    }
    if let Some(e) = out.error {
        event(ctx, m, true, e.error_type().reason(), e.to_string()).await;
        return Err(Error::Core(e));
    }
    if deleting {
        if out.finalized {
            event(
                ctx,
                m,
                false,
                "Deleted",
                "the VM is gone (or orphaned)".into(),
            )
            .await;
            return Ok(Action::await_change());
        }
        return Err(Error::Deleting);
    }
    Ok(if out.wait {
        Action::requeue(Duration::from_secs(2))
    } else {
        Action::requeue(ctx.interval)
    })
}

/// One reconcile of a MachineSnapshot (with the finalizer: deleting the
/// object deletes the snapshot).
///
/// # Errors
/// As [`reconcile_machine`].
pub async fn reconcile_snapshot(s: Arc<MachineSnapshot>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    if let Some(a) = follower(&ctx) {
        return Ok(a);
    }
    let api: Api<MachineSnapshot> = Api::namespaced(ctx.client.clone(), &ns_of(&*s));
    finalizer(&api, FINALIZER, s, |ev| async {
        let (s, deleting) = match ev {
            Finalize::Apply(s) => (s, false),
            Finalize::Cleanup(s) => (s, true),
        };
        let world = ctx.worlds.world(&ns_of(&*s));
        let old = s.status.clone().unwrap_or_default();
        let obj = object(&s.metadata, s.spec.clone());
        let (st, done, e) = ctx
            .operator
            .reconcile_snapshot(&world, &obj, &old, deleting)
            .await;
        if !(deleting && done) {
            apply_status(&api, &*s, &st).await?;
        }
        match (e, deleting, done) {
            (Some(e), _, _) => Err(Error::Core(e)),
            (None, true, true) => Ok(Action::await_change()),
            (None, true, false) => Err(Error::Deleting),
            (None, false, _) => Ok(Action::requeue(ctx.interval)),
        }
    })
    .await
    .map_err(unwrap_finalizer)
}

/// One reconcile of a MachineImage.
///
/// # Errors
/// As [`reconcile_machine`].
pub async fn reconcile_image(i: Arc<MachineImage>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    if let Some(a) = follower(&ctx) {
        return Ok(a);
    }
    let api: Api<MachineImage> = Api::namespaced(ctx.client.clone(), &ns_of(&*i));
    let world = ctx.worlds.world(&ns_of(&*i));
    let old = i.status.clone().unwrap_or_default();
    let obj = object(&i.metadata, i.spec.clone());
    let (st, e) = ctx.operator.reconcile_image(&world, &obj, &old).await;
    apply_status(&api, &*i, &st).await?;
    match e {
        Some(e) => Err(Error::Core(e)),
        None if !st.ready => Ok(Action::requeue(Duration::from_secs(2))),
        None => Ok(Action::requeue(ctx.interval)),
    }
}

/// One reconcile of a ProxmoxCluster: its health in its status.
///
/// # Errors
/// The API server's.
pub async fn reconcile_cluster(c: Arc<ProxmoxCluster>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    if let Some(a) = follower(&ctx) {
        return Ok(a);
    }
    let api: Api<ProxmoxCluster> = Api::namespaced(ctx.client.clone(), &ns_of(&*c));
    let world = ctx.worlds.world(&ns_of(&*c));
    let st = ctx.operator.reconcile_cluster(&world, &c.name_any()).await;
    apply_status(&api, &*c, &st).await?;
    Ok(Action::requeue(ctx.interval))
}

/// One reconcile of a ProxmoxNode: its figures in its status.
///
/// # Errors
/// The API server's.
pub async fn reconcile_node(n: Arc<ProxmoxNode>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    if let Some(a) = follower(&ctx) {
        return Ok(a);
    }
    let api: Api<ProxmoxNode> = Api::namespaced(ctx.client.clone(), &ns_of(&*n));
    let world = ctx.worlds.world(&ns_of(&*n));
    let obj = object(&n.metadata, n.spec.clone());
    let st = ctx.operator.reconcile_node(&world, &obj).await;
    apply_status(&api, &*n, &st).await?;
    Ok(Action::requeue(ctx.interval))
}

/// The key of an object in [`Ctx::retries`].
fn retry_key<K: Resource<DynamicType = ()>>(k: &K) -> String {
    format!("{}/{}/{}", K::kind(&()), ns_of(k), k.name_any())
}

/// What to do after a failed reconcile, as in standalone mode: retryable
/// errors (the API server's, PVE's transient ones, a deletion still going
/// on) are looked at again after 1 s, 2 s, 4 s ... up to 5 minutes, per
/// object; the others wait for the resync (that is, for a fix).
pub fn error_policy<K: Resource<DynamicType = ()>>(
    obj: Arc<K>,
    e: &Error,
    ctx: Arc<Ctx>,
) -> Action {
    let retryable = match e {
        Error::Core(c) => c.is_retryable(),
        Error::Deleting | Error::Kube(_) | Error::Finalizer(_) => true,
    };
    match ctx.retries.failed(&retry_key(&*obj), retryable) {
        Some(d) => Action::requeue(d),
        None => Action::requeue(ctx.interval),
    }
}

/// How the controller runs.
#[derive(Debug, Clone)]
pub struct KubeOptions {
    /// Periodic resync.
    pub interval: Duration,
    /// Reconciles at once, per kind.
    pub max_concurrent: u16,
    /// The namespace of the Lease (the operator's own).
    pub lease_namespace: String,
    /// The Lease's name.
    pub lease_name: String,
    /// This replica's identity (the pod name).
    pub identity: String,
    /// How long a Lease holds without renewal.
    pub lease_duration: Duration,
}

impl KubeOptions {
    /// Defaults from the environment: `POD_NAMESPACE` (else the service
    /// account's namespace, else `pve-operator-system`), `POD_NAME` (else
    /// the host name).
    pub fn from_env(interval: Duration, max_concurrent: usize) -> Self {
        let ns = std::env::var("POD_NAMESPACE")
            .ok()
            .or_else(|| {
                std::fs::read_to_string("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
                    .ok()
            })
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "pve-operator-system".into());
        let identity = std::env::var("POD_NAME")
            .ok()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .unwrap_or_else(|| format!("pve-operator-{}", std::process::id()));
        Self {
            interval,
            max_concurrent: u16::try_from(max_concurrent.clamp(1, 1000)).unwrap_or(5),
            lease_namespace: ns,
            lease_name: "pve-operator-leader".into(),
            identity,
            lease_duration: Duration::from_secs(15),
        }
    }
}

/// Takes or renews the Lease; answers whether this replica leads.
///
/// # Errors
/// The API server's.
pub async fn try_lead(client: &Client, o: &KubeOptions) -> Result<bool, kube::Error> {
    let api: Api<Lease> = Api::namespaced(client.clone(), &o.lease_namespace);
    let now = jiff_now();
    let secs = i32::try_from(o.lease_duration.as_secs()).unwrap_or(15);
    let spec = |transitions: i32| LeaseSpec {
        holder_identity: Some(o.identity.clone()),
        lease_duration_seconds: Some(secs),
        acquire_time: Some(MicroTime(now)),
        renew_time: Some(MicroTime(now)),
        lease_transitions: Some(transitions),
        ..LeaseSpec::default()
    };
    match api.get_opt(&o.lease_name).await? {
        None => {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(o.lease_name.clone()),
                    namespace: Some(o.lease_namespace.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(spec(0)),
            };
            match api.create(&PostParams::default(), &lease).await {
                Ok(_) => Ok(true),
                Err(kube::Error::Api(e)) if e.code == 409 => Ok(false),
                Err(e) => Err(e),
            }
        }
        Some(mut lease) => {
            let s = lease.spec.clone().unwrap_or_default();
            let mine = s.holder_identity.as_deref() == Some(o.identity.as_str());
            let expired = s.renew_time.as_ref().is_none_or(|t| {
                let held = i64::from(s.lease_duration_seconds.unwrap_or(secs));
                t.0.as_second() + held < now.as_second()
            });
            if !mine && !expired {
                return Ok(false);
            }
            let transitions = s.lease_transitions.unwrap_or(0) + i32::from(!mine);
            let mut new = spec(transitions);
            if mine {
                new.acquire_time = s.acquire_time.clone();
            }
            lease.spec = Some(new);
            // A replace carries the resourceVersion read: a replica that
            // took the Lease meanwhile makes it fail with 409.
            match api
                .replace(&o.lease_name, &PostParams::default(), &lease)
                .await
            {
                Ok(_) => Ok(true),
                Err(kube::Error::Api(e)) if e.code == 409 => Ok(false),
                Err(e) => Err(e),
            }
        }
    }
}

fn jiff_now() -> k8s_openapi::jiff::Timestamp {
    k8s_openapi::jiff::Timestamp::now()
}

/// Runs the controllers until the process ends: waits to lead, keeps the
/// Lease, and reconciles every kind while it holds it ([`Leadership`]: a
/// Lease lost or not renewed in time stops the reconciles until it is
/// held again).
///
/// # Errors
/// No Kubernetes configuration, or the API server unreachable at start.
pub async fn run(
    operator: Arc<Operator>,
    o: KubeOptions,
    health: Arc<crate::http::Health>,
) -> Result<(), kube::Error> {
    let client = Client::try_default().await?;
    info!(identity = %o.identity, lease = %o.lease_name, "waiting to lead");
    let leadership = Arc::new(Leadership::new(o.lease_duration));
    loop {
        health.beat();
        let asked = std::time::Instant::now();
        match try_lead(&client, &o).await {
            Ok(true) => {
                leadership.held(asked);
                break;
            }
            Ok(false) => {}
            Err(e) => warn!("leader election: {e}"),
        }
        tokio::time::sleep(o.lease_duration / 3).await;
    }
    info!(identity = %o.identity, "leading");
    {
        // Renews the Lease; a lost one (or one not renewed in time)
        // stops the reconciles until it is held again.
        let (client, o, health, leadership) = (
            client.clone(),
            o.clone(),
            health.clone(),
            leadership.clone(),
        );
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(o.lease_duration / 3).await;
                health.beat();
                let (asked, was) = (std::time::Instant::now(), leadership.leads());
                match try_lead(&client, &o).await {
                    Ok(true) => {
                        leadership.held(asked);
                        if !was {
                            info!(identity = %o.identity, "leading again");
                        }
                    }
                    Ok(false) => {
                        leadership.lost();
                        if was {
                            warn!(
                                "lost the Lease to another replica: reconciling stops until it is held again"
                            );
                        }
                    }
                    Err(e) => {
                        warn!("renewing the Lease: {e}");
                        if was && !leadership.leads() {
                            warn!(
                                "the Lease was not renewed in time: reconciling stops until it is held again"
                            );
                        }
                    }
                }
            }
        });
    }
    // Stores of what reconciles read, each filled by its own reflector.
    fn store<K>(client: &Client) -> Store<K>
    where
        K: Resource<DynamicType = ()>
            + Clone
            + DeserializeOwned
            + std::fmt::Debug
            + Send
            + Sync
            + 'static,
    {
        let (reader, writer) = reflector::store();
        let stream = reflector::reflector(
            writer,
            watcher(Api::<K>::all(client.clone()), watcher::Config::default()),
        )
        .default_backoff()
        .applied_objects()
        .for_each(|_| futures::future::ready(()));
        tokio::spawn(stream);
        reader
    }
    let stores = Stores::new(
        store(&client),
        store(&client),
        store(&client),
        store(&client),
        store(&client),
    )
    .with_snapshots(store(&client));
    let reporter = Reporter {
        controller: MANAGER.into(),
        instance: Some(o.identity.clone()),
    };
    let ctx = Arc::new(Ctx {
        client: client.clone(),
        operator,
        worlds: Arc::new(stores),
        recorder: Recorder::new(client.clone(), reporter),
        interval: o.interval,
        retries: crate::error::Retries::default(),
        leadership: leadership.clone(),
    });
    let cfg = kube::runtime::controller::Config::default().concurrency(o.max_concurrent);
    health.set_ready(true);
    {
        let (client, worlds, interval) = (client.clone(), ctx.worlds.clone(), o.interval);
        let settings = crate::dialects::Context::from_env(std::env::vars());
        tokio::spawn(async move {
            loop {
                if !leadership.leads() {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
                if let Err(e) = sync_dialects(&client, worlds.as_ref(), &settings).await {
                    warn!("the other systems' objects: {e}");
                }
                tokio::time::sleep(interval.min(Duration::from_secs(10))).await;
            }
        });
    }
    fn of<K>(client: &Client) -> Controller<K>
    where
        K: Resource<DynamicType = ()>
            + Clone
            + DeserializeOwned
            + std::fmt::Debug
            + Send
            + Sync
            + 'static,
    {
        Controller::new(Api::<K>::all(client.clone()), watcher::Config::default())
    }
    // A Secret's change reconciles at once the clusters that name it and
    // their Machines and MachineImages (credentials, CA).
    let secrets = || Api::<Secret>::all(client.clone());
    let machines = of::<Machine>(&client).watches(
        secrets(),
        watcher::Config::default(),
        secret_refs(ctx.worlds.clone(), "Machine"),
    );
    let images = of::<MachineImage>(&client).watches(
        secrets(),
        watcher::Config::default(),
        secret_refs(ctx.worlds.clone(), "MachineImage"),
    );
    let clusters = of::<ProxmoxCluster>(&client).watches(
        secrets(),
        watcher::Config::default(),
        secret_refs(ctx.worlds.clone(), "ProxmoxCluster"),
    );
    tokio::join!(
        control(machines, &cfg, "machine", reconcile_machine, &ctx),
        control(of(&client), &cfg, "snapshot", reconcile_snapshot, &ctx),
        control(images, &cfg, "image", reconcile_image, &ctx),
        control(clusters, &cfg, "cluster", reconcile_cluster, &ctx),
        control(of(&client), &cfg, "node", reconcile_node, &ctx),
    );
    Ok(())
}

/// The objects of a namespace's `world` a change of its Secret `secret`
/// concerns (`(kind, name)`): the ProxmoxClusters that name it anywhere
/// in their spec (`secretRef`s of credentials, CA, client certificate),
/// and the Machines and MachineImages on those clusters, a Machine that
/// names no cluster being on the one [`default_cluster`] gives it
/// (`default`: the operator's `PROXMOX_DEFAULT_CLUSTER`).
pub fn secret_dependents(
    world: &World,
    secret: &str,
    default: Option<String>,
) -> Vec<(&'static str, String)> {
    fn names(v: &serde_json::Value, secret: &str) -> bool {
        match v {
            serde_json::Value::Object(o) => {
                o.get("secretRef")
                    .and_then(|r| r.get("name"))
                    .is_some_and(|n| n == secret)
                    || o.values().any(|x| names(x, secret))
            }
            serde_json::Value::Array(a) => a.iter().any(|x| names(x, secret)),
            _ => false,
        }
    }
    let clusters: Vec<&String> = world
        .clusters
        .iter()
        .filter(|(_, c)| serde_json::to_value(&c.spec).is_ok_and(|v| names(&v, secret)))
        .map(|(n, _)| n)
        .collect();
    let mut out: Vec<(&'static str, String)> = clusters
        .iter()
        .map(|n| ("ProxmoxCluster", (*n).clone()))
        .collect();
    let default = default_cluster(default, world);
    out.extend(
        world
            .machines
            .iter()
            .filter(|(_, (m, _))| {
                let cluster = if m.spec.cluster.is_empty() {
                    default.as_ref()
                } else {
                    Some(&m.spec.cluster)
                };
                cluster.is_some_and(|c| clusters.contains(&c))
            })
            .map(|(n, _)| ("Machine", n.clone())),
    );
    out.extend(
        world
            .images
            .iter()
            .filter(|(_, (i, _))| clusters.contains(&&i.spec.cluster))
            .map(|(n, _)| ("MachineImage", n.clone())),
    );
    out
}

/// A controller of kind `K` running `reconcile` until its watch ends,
/// logging failed reconciles.
async fn control<K, F, Fut>(
    controller: Controller<K>,
    cfg: &kube::runtime::controller::Config,
    what: &'static str,
    reconcile: F,
    ctx: &Arc<Ctx>,
) where
    K: Resource<DynamicType = ()>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
    F: FnMut(Arc<K>, Arc<Ctx>) -> Fut,
    Fut: std::future::Future<Output = Result<Action, Error>> + Send + 'static,
{
    let mut reconcile = reconcile;
    // A success starts the object's backoff over.
    let run = move |obj: Arc<K>, ctx: Arc<Ctx>| {
        let key = retry_key(&*obj);
        let fut = reconcile(obj, ctx.clone());
        async move {
            let r = fut.await;
            if r.is_ok() {
                ctx.retries.succeeded(&key);
            }
            r
        }
    };
    controller
        .with_config(cfg.clone())
        .run(run, error_policy, ctx.clone())
        .for_each(|r| {
            if let Err(e) = r {
                warn!(controller = what, "reconcile failed: {e}");
            }
            futures::future::ready(())
        })
        .await;
}

/// The objects of `kind` a Secret's change reconciles: those
/// [`secret_dependents`] finds in the Secret's namespace.
fn secret_refs<K>(
    worlds: Arc<dyn WorldSource>,
    kind: &'static str,
) -> impl Fn(Secret) -> Vec<ObjectRef<K>> + Send + Sync + 'static
where
    K: Resource<DynamicType = ()> + 'static,
{
    move |s: Secret| {
        let ns = s.namespace().unwrap_or_else(|| "default".into());
        let default = std::env::var("PROXMOX_DEFAULT_CLUSTER").ok();
        secret_dependents(&worlds.world(&ns), &s.name_any(), default)
            .into_iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, n)| ObjectRef::new(&n).within(&ns))
            .collect()
    }
}
