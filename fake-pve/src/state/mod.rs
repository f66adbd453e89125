//! The shared handle to one emulated cluster: cheap to clone, a
//! `std::sync::Mutex` around the model (never held across `.await`), the
//! clock, the signing keys and the settings that outlive a reset; and
//! the [`hub::Hub`] that tells live dashboards of each change.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

pub mod hub;

use crate::clock::Clock;
pub use crate::latency::Latency;
use crate::model::access::keys::Keys;
use crate::model::faults::Faults;
use crate::model::scenario::{Scenario, ScenarioError};
use crate::model::world::{self, StateDoc};
use crate::model::{Cluster, PveVersion};

#[cfg(test)]
thread_local! {
    /// How many times this thread took the model's lock (for the tests
    /// that a request takes it once).
    pub(crate) static LOCKS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Settings that stay as they are across `/_fake/reset`.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The release impersonated.
    pub version: PveVersion,
    /// root@pam's password.
    pub root_password: String,
    /// Delay before answering a failed authentication.
    pub auth_failure_delay: Duration,
    /// The served certificate's fingerprint, reported as the local node's
    /// `ssl_fingerprint` (plain HTTP: a made-up one).
    pub fingerprint: Option<String>,
    /// The certificate served instead of the local node's `pve-ssl.pem`
    /// (`--cert`), which `certificates/info` lists as its
    /// `pveproxy-ssl.pem`, as pveproxy serves a custom certificate.
    pub proxy_pem: Option<String>,
    /// The cluster CA and the nodes' certificates (`pve-root-ca.pem`,
    /// `pve-ssl.pem`), made when first needed.
    pub pki: Arc<crate::pki::Pki>,
    /// What the TLS listener serves (none on plain HTTP), which a custom
    /// certificate's upload or removal with `restart` changes.
    pub served: Option<Arc<crate::tls::Served>>,
    /// Seed of every random draw (fault probabilities, generated MAC
    /// addresses, UUIDs), for repeatable runs. Token secrets are drawn
    /// from it and the signing keys' secret key (see
    /// `model::Context::secret_uuid`).
    pub random_seed: u64,
}

fn build(seed: &Scenario, s: &Settings, now: i64, keys: &Keys) -> Result<Cluster, ScenarioError> {
    let mut c = seed.build(s.version, &s.root_password, now)?;
    c.access_mut().seal(&keys.secret());
    with_settings(c, seed, s)
}

/// [`build`] of a seed given to the state, and the seed as kept
/// ([`Scenario::build_seed`]): neither keeps a password or token secret
/// in clear ([`seal_seed`]).
fn build_seed(
    seed: Scenario,
    s: &Settings,
    now: i64,
    keys: &Keys,
) -> Result<(Cluster, Scenario), ScenarioError> {
    let (mut c, mut seed) = seed.build_seed(s.version, &s.root_password, now)?;
    c.access_mut().seal(&keys.secret());
    seal_seed(&mut seed, keys);
    Ok((with_settings(c, &seed, s)?, seed))
}

/// A seed as kept (in a data directory's snapshot, for a reset): its
/// saved world's and its text's passwords and token secrets hashed as
/// [`crate::model::access::Access::seal`] hashes them, so that it builds
/// the same world.
fn seal_seed(seed: &mut Scenario, keys: &Keys) {
    if let Some(w) = &mut seed.world {
        w.access_mut().seal(&keys.secret());
    }
    if let Some(text) = crate::model::access::shadow::seal_document(&seed.text, &keys.secret()) {
        seed.text = text;
    }
}

/// The fault rules and fingerprint of the settings on a world built from
/// `seed`.
fn with_settings(mut c: Cluster, seed: &Scenario, s: &Settings) -> Result<Cluster, ScenarioError> {
    if seed.world.is_some() {
        // A saved world keeps its fault rules, their random state and its
        // nodes' fingerprints.
        return Ok(c);
    }
    *c.faults_mut() = Faults::new(s.random_seed);
    for rule in &seed.faults {
        c.faults_mut()
            .add(rule.clone())
            .map_err(|reason| ScenarioError {
                file: seed.source.clone(),
                line: None,
                reason: format!("faults: {reason}"),
            })?;
    }
    if let Some(fp) = &s.fingerprint {
        c.nodes_mut().set_local_fingerprint(fp);
    }
    Ok(c)
}

/// Why the world could not be saved, taken back or replaced.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StateError {
    /// A checkpoint name that is not 1 to 64 letters, digits, `-`, `_`
    /// or `.` starting with a letter or digit.
    #[error("invalid checkpoint name '{0}'")]
    InvalidCheckpointName(String),
    /// No checkpoint of that name.
    #[error("checkpoint '{0}' does not exist")]
    NoSuchCheckpoint(String),
    /// A state document of another release.
    #[error("{}", world::release_mismatch(*found, *serving))]
    DocumentRelease {
        /// The document's release.
        found: PveVersion,
        /// The release this fake-pve impersonates.
        serving: PveVersion,
    },
    /// A data directory holding a world of another release.
    #[error(
        "the data directory holds a world of PVE {}, but this fake-pve impersonates PVE {}",
        found.release(),
        serving.release()
    )]
    DataDirRelease {
        /// The saved world's release.
        found: PveVersion,
        /// The release this fake-pve impersonates.
        serving: PveVersion,
    },
    /// A latency profile that does not parse.
    #[error(transparent)]
    Latency(#[from] crate::latency::LatencyError),
    /// A saved scenario that no longer parses.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
}

/// A saved world: `POST /_fake/checkpoints`.
#[derive(Debug, Clone)]
struct Checkpoint {
    cluster: Arc<Cluster>,
    latency: Latency,
    /// Emulated time it was taken at, epoch seconds.
    taken: i64,
}

struct Shared {
    cluster: Mutex<Cluster>,
    /// The requests waiting for the model ([`State::lock_for_request`]),
    /// and how they are told it is free.
    waiting: std::sync::atomic::AtomicUsize,
    released: tokio::sync::Notify,
    checkpoints: Mutex<std::collections::BTreeMap<String, Checkpoint>>,
    seed: Mutex<Scenario>,
    latency: Mutex<Latency>,
    settings: Settings,
    clock: Clock,
    keys: Keys,
    seeds: crate::model::context::Seeds,
    store: std::sync::OnceLock<Arc<crate::persist::Store>>,
    hub: hub::Hub,
    /// The notification requests for the dispatcher
    /// ([`crate::deliver`]), and how it is told of new ones.
    outgoing: Mutex<Vec<crate::model::notify::Send>>,
    outgoing_ready: tokio::sync::Notify,
    /// The cluster joins for their worker ([`crate::join`]), and how it
    /// is told of new ones.
    joins: Mutex<Vec<crate::model::join::JoinJob>>,
    joins_ready: tokio::sync::Notify,
}

/// The most notification requests waiting for the dispatcher; more are
/// dropped (a server without one, as in the unit tests).
const OUTGOING_MAX: usize = 1000;

/// A handle to the state of one fake-pve server.
#[derive(Clone)]
pub struct State {
    inner: Arc<Shared>,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State").finish_non_exhaustive()
    }
}

/// The model, locked (see [`State::lock_at`]). Releasing it tells a
/// request waiting for it ([`State::lock_for_request`]).
pub(crate) struct ModelGuard<'a> {
    // The fields drop in this order: the model is released before a
    // waiting request is told.
    guard: MutexGuard<'a, Cluster>,
    _release: Release<'a>,
}

impl<'a> ModelGuard<'a> {
    fn new(guard: MutexGuard<'a, Cluster>, shared: &'a Shared) -> Self {
        Self {
            guard,
            _release: Release(shared),
        }
    }
}

impl Drop for ModelGuard<'_> {
    /// Hands the notification requests the model queued to the
    /// dispatcher, which sends them once the model is released.
    fn drop(&mut self) {
        let sends = self.guard.notifications_mut().outbox_mut().take_pending();
        if sends.is_empty() {
            return;
        }
        let shared = self._release.0;
        let mut queue = shared
            .outgoing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let room = OUTGOING_MAX.saturating_sub(queue.len());
        queue.extend(sends.into_iter().take(room));
        drop(queue);
        shared.outgoing_ready.notify_one();
    }
}

impl std::ops::Deref for ModelGuard<'_> {
    type Target = Cluster;

    fn deref(&self) -> &Cluster {
        &self.guard
    }
}

impl std::ops::DerefMut for ModelGuard<'_> {
    fn deref_mut(&mut self) -> &mut Cluster {
        &mut self.guard
    }
}

/// Tells a request waiting for the model, once the model is released.
struct Release<'a>(&'a Shared);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        use std::sync::atomic::{Ordering, fence};
        fence(Ordering::SeqCst);
        if self.0.waiting.load(Ordering::SeqCst) > 0 {
            self.0.released.notify_one();
        }
    }
}

/// One request counted as waiting for the model while it lives.
struct Waiting<'a>(&'a std::sync::atomic::AtomicUsize);

impl<'a> Waiting<'a> {
    fn new(count: &'a std::sync::atomic::AtomicUsize) -> Self {
        count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Self(count)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl State {
    /// Builds the state from a scenario; its signing keys follow from
    /// the settings' `random_seed` (see `Keys::from_seed`).
    ///
    /// # Errors
    /// When the scenario does not describe a valid cluster.
    pub fn new(
        seed: Scenario,
        settings: Settings,
        clock: Clock,
        latency: Latency,
    ) -> Result<Self, ScenarioError> {
        let keys = Keys::from_seed(settings.random_seed);
        Self::with_keys(seed, settings, clock, latency, keys)
    }

    /// As [`State::new`], with the given signing keys.
    ///
    /// # Errors
    /// As [`State::new`].
    pub fn with_keys(
        seed: Scenario,
        settings: Settings,
        clock: Clock,
        latency: Latency,
        keys: Keys,
    ) -> Result<Self, ScenarioError> {
        let (cluster, seed) = build_seed(seed, &settings, clock.now(), &keys)?;
        clock.set_scale(latency.time_scale);
        let seeds = crate::model::context::Seeds::new(settings.random_seed);
        Ok(Self {
            inner: Arc::new(Shared {
                cluster: Mutex::new(cluster),
                waiting: std::sync::atomic::AtomicUsize::new(0),
                released: tokio::sync::Notify::new(),
                checkpoints: Mutex::default(),
                seed: Mutex::new(seed),
                latency: Mutex::new(latency),
                settings,
                clock,
                keys,
                seeds,
                store: std::sync::OnceLock::new(),
                hub: hub::Hub::default(),
                outgoing: Mutex::default(),
                outgoing_ready: tokio::sync::Notify::new(),
                joins: Mutex::default(),
                joins_ready: tokio::sync::Notify::new(),
            }),
        })
    }

    fn lock(&self) -> ModelGuard<'_> {
        #[cfg(test)]
        LOCKS.with(|n| n.set(n.get() + 1));
        // A handler that panicked must not take the whole server down: the
        // model is left as the panicking call left it.
        let guard = self
            .inner
            .cluster
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        ModelGuard::new(guard, &self.inner)
    }

    /// The model locked, as of `now_ms` (the tasks due by then end
    /// first): what a request's synchronous part holds from its
    /// authentication to its handler's answer, so that the model is
    /// locked once per request (see `crate::api::pipeline`). Never held
    /// across an `.await`.
    pub(crate) fn lock_at(&self, now_ms: i64) -> ModelGuard<'_> {
        let mut c = self.lock();
        c.advance(now_ms);
        self.restart_pveproxy(&mut c);
        c
    }

    /// Serves the certificate a task that ended restarted pveproxy with
    /// (an ACME order or revocation on the local node), as pveproxy
    /// serves its `pveproxy-ssl.pem` after a restart, and reports its
    /// fingerprint as the local node's.
    fn restart_pveproxy(&self, c: &mut Cluster) {
        let Some(cert) = c.take_pveproxy_restart() else {
            return;
        };
        let Some(served) = &self.settings().served else {
            return;
        };
        match cert {
            Some(cert) => {
                if let Err(e) = served.serve_pem(&cert.pem, &cert.key) {
                    tracing::warn!(error = %e, "the new certificate cannot be served");
                    return;
                }
            }
            None => served.serve_first(),
        }
        let fp = served.fingerprint();
        c.nodes_mut().set_local_fingerprint(&fp);
    }

    /// [`State::lock_at`] if the model is free now.
    pub(crate) fn try_lock_at(&self, now_ms: i64) -> Option<ModelGuard<'_>> {
        let guard = match self.inner.cluster.try_lock() {
            Ok(c) => c,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        #[cfg(test)]
        LOCKS.with(|n| n.set(n.get() + 1));
        let mut c = ModelGuard::new(guard, &self.inner);
        c.advance(now_ms);
        self.restart_pveproxy(&mut c);
        Some(c)
    }

    /// How many requests wait for the model now.
    #[cfg(test)]
    pub(crate) fn waiting_for_model(&self) -> usize {
        self.inner.waiting.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// [`State::lock_at`] for a request on the runtime: while another
    /// holds the model, the request's task waits to be told it is free
    /// (its worker serves other connections meanwhile) rather than put
    /// the thread to sleep or poll again and again.
    pub(crate) async fn lock_for_request(&self, now_ms: i64) -> ModelGuard<'_> {
        use std::sync::atomic::{Ordering, fence};
        let shared = &self.inner;
        loop {
            if let Some(c) = self.try_lock_at(now_ms) {
                return c;
            }
            // Counted until this wait ends, also when the request is
            // dropped while it waits.
            let _waiting = Waiting::new(&shared.waiting);
            let released = shared.released.notified();
            tokio::pin!(released);
            released.as_mut().enable();
            // Either this try sees the model released, or the holder's
            // release sees this request waiting (and tells it).
            fence(Ordering::SeqCst);
            if let Some(c) = self.try_lock_at(now_ms) {
                return c;
            }
            released.await;
        }
    }

    /// Runs `f` on the cluster as of the clock's time, after ending the
    /// tasks whose time has come.
    pub fn with<R>(&self, f: impl FnOnce(&mut Cluster) -> R) -> R {
        self.at(self.inner.clock.now_millis(), f)
    }

    /// Runs `f` on the cluster as of `now_ms` (epoch milliseconds): the
    /// tasks due by then end first (a request's instant, see
    /// `model::Context`).
    pub fn at<R>(&self, now_ms: i64, f: impl FnOnce(&mut Cluster) -> R) -> R {
        f(&mut self.lock_at(now_ms))
    }

    /// A context for a request at the clock's time, with the next seed of
    /// the run's stream (`--random-seed`).
    pub fn request_context(&self) -> crate::model::Context {
        self.request_context_at(self.inner.clock.now_millis())
    }

    /// A context for a request at `now_ms`, with the next seed of the
    /// run's stream.
    pub fn request_context_at(&self, now_ms: i64) -> crate::model::Context {
        crate::model::Context::new(now_ms, self.inner.seeds.draw()).keyed(self.inner.keys.secret())
    }

    /// The next seed of the run's stream, for a journaled request.
    pub fn next_seed(&self) -> u64 {
        self.inner.seeds.draw()
    }

    /// Runs `f` on the model as it is, without ending the tasks that are
    /// due (for what a journal record keeps of a request, worked out
    /// before it runs).
    pub(crate) fn peek<R>(&self, f: impl FnOnce(&Cluster) -> R) -> R {
        f(&self.lock())
    }

    /// Runs `f` on the fault rules (kept with the cluster, so that a
    /// reset returns to the scenario's rules).
    pub fn faults<R>(&self, f: impl FnOnce(&mut Faults) -> R) -> R {
        f(self.lock().faults_mut())
    }

    /// The clock.
    pub fn clock(&self) -> &Clock {
        &self.inner.clock
    }

    /// What the dashboards wait on: the world's changes and the request
    /// log.
    pub fn hub(&self) -> &hub::Hub {
        &self.inner.hub
    }

    /// Tells the connected dashboards that the world changed (nothing
    /// while none is connected).
    pub fn changed(&self) {
        self.inner.hub.changed();
    }

    /// The notification requests queued for sending, taken.
    pub(crate) fn take_outgoing(&self) -> Vec<crate::model::notify::Send> {
        std::mem::take(
            &mut *self
                .inner
                .outgoing
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Waits until notification requests are queued.
    pub(crate) async fn outgoing_ready(&self) {
        self.inner.outgoing_ready.notified().await;
    }

    /// Hands a cluster join to its worker, which talks to the cluster
    /// while the request that asked for it has long been answered.
    pub(crate) fn queue_join(&self, job: crate::model::join::JoinJob) {
        self.inner
            .joins
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(job);
        self.inner.joins_ready.notify_one();
    }

    /// The cluster joins queued, taken.
    pub(crate) fn take_joins(&self) -> Vec<crate::model::join::JoinJob> {
        std::mem::take(
            &mut *self
                .inner
                .joins
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Waits until a cluster join is queued.
    pub(crate) async fn joins_ready(&self) {
        self.inner.joins_ready.notified().await;
    }

    /// Records how a notification request went (without ending the
    /// tasks that are due: no request's instant).
    pub(crate) fn settle_delivery(&self, id: u64, ok: bool, detail: String) {
        self.lock()
            .notifications_mut()
            .outbox_mut()
            .settle(id, ok, detail);
        self.changed();
    }

    /// The signing keys.
    pub fn keys(&self) -> &Keys {
        &self.inner.keys
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.inner.settings
    }

    /// The latency profile's delay before answering a call of the PVE
    /// method `name`, in milliseconds (without copying the profile).
    pub fn request_delay_ms(&self, name: &str) -> u64 {
        self.latency_locked().request_ms(name)
    }

    /// The latency profile's duration of a task of `kind` (see
    /// [`Latency::task_ms`]), without copying the profile.
    pub fn task_ms(&self, kind: &str, draw: Option<u64>) -> u64 {
        self.latency_locked().task_ms(kind, draw)
    }

    /// The latency profile in force.
    pub fn latency(&self) -> Latency {
        self.latency_locked().clone()
    }

    /// Replaces the latency profile (and the clock's speed with it).
    pub fn set_latency(&self, latency: Latency) {
        self.inner.clock.set_scale(latency.time_scale);
        *self.latency_locked() = latency;
        self.changed();
    }

    fn latency_locked(&self) -> MutexGuard<'_, Latency> {
        self.inner
            .latency
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The seed scenario's `setup` calls (run by the API layer once the
    /// world is built: `api::run_setup`).
    pub fn setup_calls(&self) -> Vec<crate::model::scenario::SetupCall> {
        self.inner
            .seed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .setup
            .clone()
    }

    /// Goes back to the seed scenario, built at `now` (epoch seconds).
    pub fn reset(&self, now: i64) {
        let seed = self
            .inner
            .seed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        // The seed was built once already, so it builds again.
        if let Ok(c) = build(&seed, &self.inner.settings, now, &self.inner.keys) {
            *self.lock() = c;
        }
        self.changed();
    }

    /// Loads a new scenario, built at `now` (epoch seconds), which also
    /// becomes what `reset` returns to.
    ///
    /// # Errors
    /// When the scenario does not describe a valid cluster; the state is
    /// then left as it was.
    pub fn load(&self, seed: Scenario, now: i64) -> Result<(), ScenarioError> {
        let (c, seed) = build_seed(seed, &self.inner.settings, now, &self.inner.keys)?;
        *self.lock() = c;
        self.changed();
        *self
            .inner
            .seed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = seed;
        Ok(())
    }

    /// The whole world as a state document (`GET /_fake/state`).
    pub fn export(&self) -> StateDoc {
        let cluster = self.with(|c| c.clone());
        let c = self.clock();
        StateDoc {
            format: world::FORMAT.into(),
            version: world::VERSION,
            pve: cluster.version().release().into(),
            cluster,
            latency: serde_json::to_value(self.latency()).ok(),
            clock: Some(c.view()),
        }
    }

    /// Replaces the world with a state document's (`PUT /_fake/state`):
    /// the cluster and, when the document has one, the latency profile.
    /// The clock is left as it is; tasks that were running end when their
    /// time has come. What `reset` returns to does not change.
    ///
    /// # Errors
    /// A document of another release, or a latency profile that does not
    /// parse; the world is then left as it was.
    pub fn import(&self, mut doc: StateDoc) -> Result<(), StateError> {
        let version = self.settings().version;
        if doc.cluster.version() != version {
            return Err(StateError::DocumentRelease {
                found: doc.cluster.version(),
                serving: version,
            });
        }
        let latency = match doc.latency {
            Some(v) => Some(Latency::from_json(v)?),
            None => None,
        };
        doc.cluster.access_mut().seal(&self.inner.keys.secret());
        *self.lock() = doc.cluster;
        if let Some(l) = latency {
            self.set_latency(l);
        }
        self.changed();
        Ok(())
    }

    fn checkpoints(&self) -> MutexGuard<'_, std::collections::BTreeMap<String, Checkpoint>> {
        self.inner
            .checkpoints
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Saves the current world (with its latency profile) as checkpoint
    /// `name`, replacing one of the same name.
    ///
    /// # Errors
    /// A name that is not 1 to 64 letters, digits, `-`, `_` or `.`
    /// starting with a letter or digit.
    pub fn checkpoint(&self, name: &str) -> Result<(), StateError> {
        if !valid_checkpoint_name(name) {
            return Err(StateError::InvalidCheckpointName(name.to_string()));
        }
        let cluster = Arc::new(self.with(|c| c.clone()));
        let cp = Checkpoint {
            cluster,
            latency: self.latency(),
            taken: self.clock().now(),
        };
        self.checkpoints().insert(name.to_string(), cp);
        self.changed();
        Ok(())
    }

    /// Returns to checkpoint `name`: its cluster and latency profile. The
    /// clock and the signing keys stay (tickets remain valid); tasks that
    /// were running then end when their time has come.
    ///
    /// # Errors
    /// `checkpoint 'x' does not exist`.
    pub fn restore(&self, name: &str) -> Result<(), StateError> {
        let cp = self
            .checkpoints()
            .get(name)
            .cloned()
            .ok_or_else(|| StateError::NoSuchCheckpoint(name.to_string()))?;
        *self.lock() = (*cp.cluster).clone();
        self.set_latency(cp.latency);
        self.changed();
        Ok(())
    }

    /// Removes checkpoint `name`.
    ///
    /// # Errors
    /// `checkpoint 'x' does not exist`.
    pub fn drop_checkpoint(&self, name: &str) -> Result<(), StateError> {
        self.checkpoints()
            .remove(name)
            .map(|_| self.changed())
            .ok_or_else(|| StateError::NoSuchCheckpoint(name.to_string()))
    }

    /// The checkpoints: name, emulated time taken, number of guests and
    /// tasks, sorted by name.
    pub fn list_checkpoints(&self) -> Vec<CheckpointInfo> {
        self.checkpoints()
            .iter()
            .map(|(name, cp)| CheckpointInfo {
                name: name.clone(),
                time: cp.taken,
                vms: cp.cluster.guests().len(),
                tasks: cp.cluster.tasks().len(),
            })
            .collect()
    }
}

impl State {
    /// The data directory's store, when fake-pve keeps its world on disk.
    pub fn store(&self) -> Option<&Arc<crate::persist::Store>> {
        self.inner.store.get()
    }

    /// Starts journaling into `store` (once).
    pub(crate) fn attach_store(&self, store: Arc<crate::persist::Store>) {
        let _ = self.inner.store.set(store);
    }

    /// Everything a data directory keeps, as of now.
    pub fn snapshot(&self) -> crate::persist::Snapshot {
        use crate::persist::{SavedCheckpoint, SavedSeed, Snapshot};
        let seed = self
            .inner
            .seed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let checkpoints = self
            .checkpoints()
            .iter()
            .map(|(name, cp)| {
                (
                    name.clone(),
                    SavedCheckpoint {
                        cluster: (*cp.cluster).clone(),
                        latency: cp.latency.clone(),
                        taken: cp.taken,
                    },
                )
            })
            .collect();
        Snapshot {
            format: String::new(),
            version: 0,
            seq: 0,
            cluster: self.lock().clone(),
            seed: SavedSeed {
                text: seed.world.is_none().then(|| seed.text.clone()),
                source: seed.source.clone(),
                world: seed.world.as_deref().cloned(),
            },
            latency: self.latency(),
            clock: self.clock().saved(),
            checkpoints,
        }
    }

    /// Takes the state back to a snapshot of a data directory.
    ///
    /// # Errors
    /// A saved world of another release, or a saved scenario that no
    /// longer parses.
    pub fn restore_snapshot(&self, mut snap: crate::persist::Snapshot) -> Result<(), StateError> {
        let version = self.settings().version;
        if snap.cluster.version() != version {
            return Err(StateError::DataDirRelease {
                found: snap.cluster.version(),
                serving: version,
            });
        }
        // A snapshot of an older release keeps passwords and token
        // secrets in clear: they are hashed now.
        let key = self.inner.keys.secret();
        snap.cluster.access_mut().seal(&key);
        for cp in snap.checkpoints.values_mut() {
            cp.cluster.access_mut().seal(&key);
        }
        let mut seed = match (snap.seed.world, snap.seed.text) {
            (Some(w), _) => Scenario::from_world(w, &snap.seed.source),
            (None, Some(text)) => Scenario::parse(&text, &snap.seed.source)?,
            (None, None) => Scenario::default_single_node(),
        };
        seal_seed(&mut seed, &self.inner.keys);
        self.clock().restore(&snap.clock);
        *self.lock() = snap.cluster;
        *self
            .inner
            .seed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = seed;
        self.set_latency(snap.latency);
        let cps = snap
            .checkpoints
            .into_iter()
            .map(|(name, cp)| {
                (
                    name,
                    Checkpoint {
                        cluster: Arc::new(cp.cluster),
                        latency: cp.latency,
                        taken: cp.taken,
                    },
                )
            })
            .collect();
        *self.checkpoints() = cps;
        Ok(())
    }

    /// Ends, as a node crash does, the tasks still running at `at_ms`
    /// (epoch milliseconds) after those due by then: `unexpected status`,
    /// without their effect; locks stay as the tasks left them.
    pub fn interrupt_running_tasks(&self, at_ms: i64) -> usize {
        self.at(at_ms, |c| c.interrupt_running(at_ms.div_euclid(1000)))
    }
}

/// What `GET /_fake/checkpoints` lists of a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CheckpointInfo {
    /// Its name.
    pub name: String,
    /// Emulated time it was taken at, epoch seconds.
    pub time: i64,
    /// Guests in it.
    pub vms: usize,
    /// Tasks in it.
    pub tasks: usize,
}

/// 1 to 64 letters, digits, `-`, `_` or `.`, starting with a letter or a
/// digit.
pub fn valid_checkpoint_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

impl crate::persist::Journaling for State {
    fn now_millis(&self) -> i64 {
        self.clock().now_millis()
    }

    fn secret(&self) -> crate::model::context::SecretKey {
        self.keys().secret()
    }

    fn next_seed(&self) -> u64 {
        State::next_seed(self)
    }

    fn snapshot(&self) -> crate::persist::Snapshot {
        State::snapshot(self)
    }
}
