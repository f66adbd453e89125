//! pve-client: a typed async client for the Proxmox VE API, and `pve`, a
//! pvesh-style command line on top of it.
//!
//! It is the one client the operator, the conformance harness and the
//! load tests talk to PVE through, so it does what a production client
//! must: ticket or API-token authentication (CSRF tokens on writes,
//! renewal before the two hours run out, one new login when PVE rejects a
//! ticket), TLS verification with a CA bundle or a pinned fingerprint,
//! configuration from the `PVE_*` environment, task polling, and a retry
//! policy that knows which errors are worth retrying.
//!
//! # Example
//!
//! Against an in-process fake-pve (any PVE works the same):
//!
//! ```
//! use pve_client::api::nodes::StartAll;
//! use pve_client::{Client, Config};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let fake = fake_pve::FakePve::builder()
//! #     .listen("127.0.0.1:0".parse()?)
//! #     .auth_failure_delay(std::time::Duration::ZERO)
//! #     .start()
//! #     .await?;
//! # let (endpoint, ca_pem) = (fake.url(), fake.cert_pem().unwrap_or_default().to_string());
//! let config = Config::builder()
//!     .endpoint(endpoint)                  // https://host:8006, /api2/json optional
//!     .password("root@pam", "password")    // or .token("user@realm!id", secret)
//!     .ca_bundle_pem(ca_pem)               // or .fingerprint("AB:CD:...")
//!     .build()?;
//! let pve = Client::connect(config).await?; // logs in, reads /version
//!
//! let version = pve.version().await?;
//! println!("PVE {}", version.release);
//! for node in pve.nodes().list_nodes().await? {
//!     println!("{} is {}", node.node, node.status);
//! }
//!
//! // Asynchronous calls answer a task ID; wait for the task.
//! let upid = pve.nodes().startall("pve", &StartAll::default()).await?;
//! let done = pve.tasks().wait(&upid).await?;
//! assert_eq!(done.exitstatus.as_deref(), Some("OK"));
//! # Ok(())
//! # }
//! ```
//!
//! From the environment (`PVE_ENDPOINT`, `PVE_USERNAME`/`PVE_PASSWORD` or
//! `PVE_TOKEN_ID`/`PVE_TOKEN_SECRET`, `PVE_INSECURE_SKIP_VERIFY`,
//! `PVE_CA_BUNDLE`, `PVE_NODE_SELECTOR`, `PVE_TLS_FINGERPRINT`):
//!
//! ```no_run
//! # async fn demo() -> pve_client::Result<()> {
//! let pve = pve_client::Client::from_env().await?;
//! let node = pve.nodes().select_node().await?; // honours PVE_NODE_SELECTOR
//! # Ok(()) }
//! ```
//!
//! Errors carry PVE's message and a category to act on:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let fake = fake_pve::FakePve::builder()
//! #     .listen("127.0.0.1:0".parse()?)
//! #     .auth_failure_delay(std::time::Duration::ZERO)
//! #     .tls(fake_pve::Tls::Off)
//! #     .start()
//! #     .await?;
//! use pve_client::{Category, Client, Config, Params};
//!
//! let pve = Client::new(
//!     Config::builder()
//!         .endpoint(fake.url())
//!         .password("root@pam", "password")
//!         .build()?,
//! )?;
//! // Anything not typed yet: raw calls relative to /api2/json.
//! let id = pve.get("/cluster/nextid", &Params::new()).await?;
//! assert_eq!(id, "100");
//!
//! let err = pve.cluster().nextid(Some(0)).await.unwrap_err();
//! assert_eq!(err.category(), Category::Validation);
//! assert!(err.param_errors().is_some_and(|e| e.contains_key("vmid")));
//! assert!(!err.is_retryable());
//! # Ok(())
//! # }
//! ```
//!
//! # Layout
//! - [`config`]: [`Config`] from a builder or the `PVE_*` environment,
//!   checked at start ([`Credentials`], [`Secret`]).
//! - [`client`]: [`Client`], its typed areas ([`Client::qemu`],
//!   [`Client::agent`], [`Client::storage`], [`Client::network`], ...) and the raw
//!   `get`/`post`/`put`/`delete` calls.
//! - [`transport`]: login, CSRF, ticket renewal, [`RetryPolicy`] with
//!   backoff and jitter, the `{"data": ...}` envelope, PVE's messages.
//! - [`error`]: [`Error`] with its [`Category`] and
//!   [`Error::is_retryable`].
//! - [`tls`]: certificate verification, CA bundles, fingerprint pinning.
//! - [`api`]: one module per PVE area, methods named after PVE's:
//!   [`api::version`], [`api::cluster`], [`api::nodes`], [`api::tasks`],
//!   [`api::access`] (users, groups, roles, ACLs, permissions, password,
//!   tokens), [`api::qemu`] (VMs: config with digests, power, clones,
//!   templates, snapshots; `*_and_wait` variants), [`api::agent`] (the
//!   guest agent, with usable IP addresses), [`api::storage`],
//!   [`api::network`].
//! - [`schema`]: the embedded API schema of the server's release
//!   ([`Client::release`]): usage text, directory children.
//! - [`propstring`]: typed property strings ([`propstring::NetworkDevice`],
//!   [`propstring::Disk`], [`propstring::IpConfig`],
//!   [`propstring::PropertyString`]) with PVE's canonical printing.
//! - `src/bin/pve.rs`: the `pve` command line (`get`, `create`, `set`,
//!   `delete`, `ls`, `usage`, `--output-format`, `--wait`).
//!
//! [`schema`] and [`propstring`] need no HTTP: they work on
//! [`pve_schema`], re-exported here.

pub mod api;
pub mod client;
pub mod config;
mod de;
pub mod error;
pub mod propstring;
pub mod schema;
pub mod tls;
pub mod transport;

pub use pve_schema;

pub use client::Client;
pub use config::{Config, ConfigBuilder, Credentials, ErrorObserver, Observer, Secret};
pub use error::{Category, Error, Result};
pub use reqwest::Method;
pub use transport::{Answer, Params, RetryPolicy, TicketInfo};
