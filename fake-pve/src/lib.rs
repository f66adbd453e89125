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
//! # Layout
//! - [`model`]: the state of one cluster (nodes, storages, guests, users,
//!   tokens, tasks) and PVE's rules, as plain synchronous Rust.
//! - [`api`]: the wire. Routing, authentication, parameters, and PVE's
//!   envelope, status lines and reason phrases; one module per API area.
//! - [`control`]: `/_fake/...`, the calls that are not PVE's (health,
//!   reset, seeding, state dumps, clock, task durations), one line each
//!   in a table that both its axum routes and the journal's replay use.
//! - [`state`]: the shared handle around the model, the clock and keys.
//! - [`app`]: the wire: pveproxy's front (request logs, refusals, body
//!   limits, body timeout), then `/api2` straight to [`api::handle`] and
//!   the rest through an axum router (`/_fake` to [`control`]'s routes,
//!   `/` the dashboard); [`app()`] serves it without a socket.
//! - [`server`]: [`FakePve::builder`], TLS (with a handshake timeout),
//!   one hyper HTTP/1.1 connection per client serving the same wire, and
//!   the graceful shutdown.
//! - [`spec`]: the official API schema (crate `pve-schema`) for the
//!   release impersonated, and its permission checks on fake-pve's ACLs;
//!   [`coverage`] reports which endpoints have behaviour.
//! - [`clock`]: the injectable clock tests advance instead of sleeping;
//!   [`latency`]: how long tasks and requests take (profiles).
//! - [`tls`]: certificates and the rustls configuration.
//! - [`dashboard`]: fake-pve's own live dashboard at `/`, its event
//!   stream (`/_fake/events`) and the request log.
//!
//! The `cli` feature (on by default) builds the `fake-pve` binary
//! (`main.rs`: flags, log output, allocator); crates that only use the
//! library turn default features off.

pub mod access_log;
pub mod api;
pub mod app;
mod body;
pub mod clock;
pub mod control;
pub mod coverage;
pub mod dashboard;
pub mod latency;
pub mod model;
pub mod persist;
pub mod server;
pub mod spec;
pub mod state;
pub mod tls;
mod version;

pub use app::app;
pub use clock::Clock;
pub use model::PveVersion;
pub use model::scenario::{Scenario, ScenarioError};
pub use server::{Builder, FakePve, Running, Tls};
pub use state::{Latency, State, StateError};

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
    Store(#[from] persist::StoreError),
    /// The data directory holds a world this fake-pve cannot take up.
    #[error("{0}")]
    Restore(#[from] state::StateError),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
