//! The shared handle to one emulated cluster: cheap to clone, a
//! `std::sync::Mutex` around the model (never held across `.await`), the
//! clock, the signing keys and the settings that outlive a reset.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::api::auth::Keys;
use crate::clock::Clock;
pub use crate::latency::Latency;
use crate::model::faults::Faults;
use crate::model::scenario::{Scenario, ScenarioError};
use crate::model::{Cluster, PveVersion};

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
    /// Seed of every random draw (fault probabilities), for repeatable runs.
    pub random_seed: u64,
}

fn build(seed: &Scenario, s: &Settings, now: i64) -> Result<Cluster, ScenarioError> {
    let mut c = seed.build(s.version, &s.root_password, now)?;
    c.faults = Faults::new(s.random_seed);
    for rule in &seed.faults {
        c.faults.add(rule.clone()).map_err(|reason| ScenarioError {
            file: seed.source.clone(),
            line: None,
            reason: format!("faults: {reason}"),
        })?;
    }
    if let Some(fp) = &s.fingerprint {
        let local = c.local_node.clone();
        if let Some(n) = c.nodes.iter_mut().find(|n| n.name == local) {
            n.ssl_fingerprint.clone_from(fp);
        }
    }
    Ok(c)
}

struct Shared {
    cluster: Mutex<Cluster>,
    seed: Mutex<Scenario>,
    latency: Mutex<Latency>,
    settings: Settings,
    clock: Clock,
    keys: Keys,
}

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

impl State {
    /// Builds the state from a scenario.
    ///
    /// # Errors
    /// When the scenario does not describe a valid cluster.
    pub fn new(
        seed: Scenario,
        settings: Settings,
        clock: Clock,
        latency: Latency,
    ) -> Result<Self, ScenarioError> {
        let cluster = build(&seed, &settings, clock.now())?;
        clock.set_scale(latency.time_scale);
        Ok(Self {
            inner: Arc::new(Shared {
                cluster: Mutex::new(cluster),
                seed: Mutex::new(seed),
                latency: Mutex::new(latency),
                settings,
                clock,
                keys: Keys::random(),
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Cluster> {
        // A handler that panicked must not take the whole server down: the
        // model is left as the panicking call left it.
        self.inner
            .cluster
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs `f` on the cluster, after ending the tasks whose time has come.
    pub fn with<R>(&self, f: impl FnOnce(&mut Cluster) -> R) -> R {
        let mut c = self.lock();
        c.advance(self.inner.clock.now_millis());
        f(&mut c)
    }

    /// Runs `f` on the fault rules (kept with the cluster, so that a
    /// reset returns to the scenario's rules).
    pub fn faults<R>(&self, f: impl FnOnce(&mut Faults) -> R) -> R {
        f(&mut self.lock().faults)
    }

    /// The clock.
    pub fn clock(&self) -> &Clock {
        &self.inner.clock
    }

    /// The signing keys.
    pub fn keys(&self) -> &Keys {
        &self.inner.keys
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.inner.settings
    }

    /// The latency profile in force.
    pub fn latency(&self) -> Latency {
        self.inner
            .latency
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Replaces the latency profile (and the clock's speed with it).
    pub fn set_latency(&self, latency: Latency) {
        self.inner.clock.set_scale(latency.time_scale);
        *self
            .inner
            .latency
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = latency;
    }

    /// Goes back to the seed scenario.
    pub fn reset(&self) {
        let seed = self
            .inner
            .seed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        // The seed was built once already, so it builds again.
        if let Ok(c) = build(&seed, &self.inner.settings, self.inner.clock.now()) {
            *self.lock() = c;
        }
    }

    /// Loads a new scenario, which also becomes what `reset` returns to.
    ///
    /// # Errors
    /// When the scenario does not describe a valid cluster; the state is
    /// then left as it was.
    pub fn load(&self, seed: Scenario) -> Result<(), ScenarioError> {
        let c = build(&seed, &self.inner.settings, self.inner.clock.now())?;
        *self.lock() = c;
        *self
            .inner
            .seed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = seed;
        Ok(())
    }
}
