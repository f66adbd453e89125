//! fake-pve: an in-memory Proxmox VE emulator that speaks the real API.
//!
//! Real PVE clients (proxmoxer, the Terraform and Ansible providers, Packer,
//! this workspace's `pve-client`) log in, read the cluster and wait on
//! tasks exactly as they do against a PVE host. Start one in-process:
//!
//! ```no_run
//! # async fn demo() -> Result<(), fake_pve::Error> {
//! let pve = fake_pve::FakePve::builder()
//!     .listen("127.0.0.1:0".parse().expect("address"))
//!     .auth_failure_delay(std::time::Duration::ZERO)
//!     .start()
//!     .await?;
//! println!("PVE at {} (fingerprint {:?})", pve.api_url(), pve.fingerprint());
//! pve.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! # What a library user gets
//! [`FakePve::builder`] and the [`Running`] server it starts; [`app()`],
//! the same wire without a socket; [`Scenario`] (a world in YAML),
//! [`PveVersion`], [`Clock`] and [`Latency`], the [`State`] a server
//! shares; and [`Error`]. The modules inside are crate-private; the
//! `internals` feature makes them public for fake-pve's own tests,
//! benchmarks and `xtask` (not a stable API).
//!
//! # Layout (in the order modules depend on each other, lowest first)
//! - `version`, `clock`, `latency`: the release impersonated, the
//!   injectable clock tests advance instead of sleeping, and how long
//!   tasks and requests take (profiles).
//! - `spec`: the official API schema (crate `pve-schema`) for the release
//!   impersonated.
//! - `model`: the state of one cluster (nodes, storages, guests, users,
//!   tokens, tasks) and PVE's rules, as plain synchronous Rust.
//! - `persist`: the data directory (journal, snapshots); `state`: the
//!   shared handle around the model, the clock, the keys and the
//!   dashboards' hub.
//! - `api`: the wire. Routing (a table built once), authentication, the
//!   schema's permissions, parameters, and PVE's envelope, status lines
//!   and reason phrases; one module per API area.
//! - `dashboard`: fake-pve's own live dashboard at `/` and its event
//!   stream (`/_fake/events`); `control`: `/_fake/...`, the calls that
//!   are not PVE's, one line each in a table that both its axum routes
//!   and the journal's replay use; `body`: a request body read within its
//!   limits.
//! - `app`: pveproxy's front (request logs, refusals, body limits, body
//!   timeout), then `/api2` straight to the API and the rest through an
//!   axum router; `tls`: certificates and the rustls configuration;
//!   `server`: the builder, TLS, one hyper HTTP/1.1 connection per client
//!   and the graceful shutdown.
//!
//! `tests/layering.rs` holds the modules to that order.
//!
//! The `cli` feature (on by default) builds the `fake-pve` binary
//! (`main.rs`: flags, log output, allocator); crates that only use the
//! library turn default features off.

// The modules inside: crate-private, but public with the `internals`
// feature, which fake-pve's own tests, benchmarks and `xtask` turn on to
// reach the model, the schema and the wire directly. A library user
// needs none of them: what they need is re-exported below. (Declared
// one by one, not by a macro, so that rustfmt reaches their files.)
#[cfg(feature = "internals")]
pub mod access_log;
#[cfg(not(feature = "internals"))]
pub(crate) mod access_log;
#[cfg(feature = "internals")]
pub mod api;
#[cfg(not(feature = "internals"))]
pub(crate) mod api;
#[cfg(feature = "internals")]
pub mod app;
#[cfg(not(feature = "internals"))]
pub(crate) mod app;
mod body;
#[cfg(feature = "internals")]
pub mod clock;
#[cfg(not(feature = "internals"))]
pub(crate) mod clock;
#[cfg(feature = "internals")]
pub mod console;
#[cfg(not(feature = "internals"))]
pub(crate) mod console;
#[cfg(feature = "internals")]
pub mod control;
#[cfg(not(feature = "internals"))]
pub(crate) mod control;
/// Which endpoints have behaviour (`cargo xtask coverage`): tooling of
/// the workspace, with the `internals` feature only.
#[cfg(feature = "internals")]
pub mod coverage;
#[cfg(feature = "internals")]
pub mod dashboard;
#[cfg(not(feature = "internals"))]
pub(crate) mod dashboard;
mod deliver;
mod join;
#[cfg(feature = "internals")]
pub mod latency;
#[cfg(not(feature = "internals"))]
pub(crate) mod latency;
#[cfg(feature = "internals")]
pub mod model;
#[cfg(not(feature = "internals"))]
pub(crate) mod model;
/// The emulated container registries' distribution API (`/v2/...`).
mod oci;
/// The emulated OpenID provider's routes (`/_openid/...`).
mod openid;
#[cfg(feature = "internals")]
pub mod persist;
#[cfg(not(feature = "internals"))]
pub(crate) mod persist;
#[cfg(feature = "internals")]
pub mod pki;
#[cfg(not(feature = "internals"))]
pub(crate) mod pki;
#[cfg(feature = "internals")]
pub mod remote;
#[cfg(not(feature = "internals"))]
pub(crate) mod remote;
#[cfg(feature = "internals")]
pub mod server;
#[cfg(not(feature = "internals"))]
pub(crate) mod server;
#[cfg(feature = "internals")]
pub mod spec;
#[cfg(not(feature = "internals"))]
pub(crate) mod spec;
#[cfg(feature = "internals")]
pub mod state;
#[cfg(not(feature = "internals"))]
pub(crate) mod state;
#[cfg(feature = "internals")]
pub mod tls;
#[cfg(not(feature = "internals"))]
pub(crate) mod tls;
/// A twin of a running PVE: `fake-pve scenario capture` and `fake-pve
/// compare` (the `cli` feature).
#[cfg(feature = "cli")]
pub mod twin;
mod version;
#[cfg(feature = "internals")]
pub mod ws;
#[cfg(not(feature = "internals"))]
pub(crate) mod ws;

pub use access_log::AccessLog;
pub use app::app;
pub use clock::Clock;
pub use latency::{Dist, LatencyError};
pub use model::scenario::{Scenario, ScenarioError};
pub use persist::{Fsync, StoreError};
pub use pki::Pki;
pub use server::{Builder, FakePve, Running, Tls};
pub use state::{Latency, Settings, State, StateError};
pub use tls::Identity;
pub use version::PveVersion;

/// Why fake-pve could not start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The listen address could not be bound.
    #[error("cannot listen on {0}: {1}")]
    Bind(std::net::SocketAddr, #[source] std::io::Error),
    /// TLS could not be set up.
    #[error("TLS: {0}")]
    Tls(String),
    /// The scenario is malformed.
    #[error("scenario {0}")]
    Scenario(#[from] ScenarioError),
    /// The data directory cannot be used.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// The data directory holds a world this fake-pve cannot take up.
    #[error("{0}")]
    Restore(#[from] StateError),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
