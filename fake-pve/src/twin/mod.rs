//! A twin of a running PVE: `fake-pve scenario capture` reads a cluster
//! through its API (GETs only) and writes the scenario that recreates
//! it; `fake-pve compare` reads a cluster and a fake-pve started from
//! its capture alike and reports where their answers differ.
//!
//! - [`Source`]: where the cluster is and how to log in (the flags both
//!   commands share), and [`Reader`], the GETs with their count and what
//!   could not be read;
//! - `capture`: the scenario, area by area;
//! - `compare`: the same reads on both, the differences, the report;
//! - [`MOVING`]: the figures that move by themselves, never compared.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use pve_client::{Client, Config, Params};
use serde_json::Value;

pub mod capture;
pub mod cli;
pub mod compare;
mod convert;

pub use capture::{Capture, capture};
pub use compare::{CompareReport, compare};

/// The keys of answers whose values move by themselves on a running
/// cluster (usage counters, clocks, load, generated times): `compare`
/// leaves them out, and `capture` does not copy them. One list, for
/// every call.
pub const MOVING: &[&str] = &[
    "uptime",
    "cpu",
    "mem",
    "maxmem_used",
    "netin",
    "netout",
    "diskread",
    "diskwrite",
    "disk",
    "loadavg",
    "time",
    "localtime",
    "idle",
    "wait",
    "used",
    "free",
    "available",
    "avail",
    "used_fraction",
    "ksm",
    "pid",
    "ctime",
    "pressurecpusome",
    "pressurecpufull",
    "pressureiosome",
    "pressureiofull",
    "pressurememorysome",
    "pressurememoryfull",
];

/// Whether `key` is a moving figure ([`MOVING`]).
pub fn is_moving(key: &str) -> bool {
    MOVING.contains(&key)
}

/// The releases both commands speak to.
pub const RELEASES: &[&str] = &["8.4", "9.1", "9.2"];

/// Where a cluster is and how to read it (`--from`, credentials, TLS).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Source {
    /// The PVE to read: `https://host:8006`.
    #[arg(long = "from", value_name = "URL")]
    pub url: String,
    /// An API token, `USER@REALM!ID=SECRET` (PVEAuditor suffices; see
    /// the book's twin chapter).
    #[arg(long, env = "FAKE_PVE_TWIN_TOKEN", conflicts_with = "username")]
    pub token: Option<String>,
    /// A user to log in as (with --password-file).
    #[arg(long, requires = "password_file")]
    pub username: Option<String>,
    /// A file whose first line is the user's password.
    #[arg(long, requires = "username")]
    pub password_file: Option<std::path::PathBuf>,
    /// Accept any TLS certificate.
    #[arg(long, conflicts_with = "fingerprint")]
    pub insecure: bool,
    /// Accept only the certificate with this SHA-256 fingerprint.
    #[arg(long)]
    pub fingerprint: Option<String>,
}

/// Why a capture or a comparison did not run.
#[derive(Debug, thiserror::Error)]
pub enum TwinError {
    /// The flags do not make a client.
    #[error("{0}")]
    Config(String),
    /// The endpoint does not answer as a PVE API.
    #[error("{url} does not answer as a Proxmox VE API: {reason}")]
    NotPve {
        /// The endpoint.
        url: String,
        /// What it answered.
        reason: String,
    },
    /// A PVE release neither command speaks to.
    #[error("PVE {0} is not a release fake-pve emulates (8.4, 9.1 or 9.2)")]
    Release(String),
    /// A read failed for another reason than permissions.
    #[error("GET {path}: {source}")]
    Read {
        /// The path.
        path: String,
        /// The client's error.
        #[source]
        source: pve_client::Error,
    },
    /// A file could not be read or written.
    #[error("{0}: {1}")]
    Io(String, #[source] std::io::Error),
    /// The twin did not start from the capture.
    #[error("the twin does not start from the capture: {0}")]
    Twin(String),
}

impl Source {
    /// A client for this source. Nothing is sent yet.
    ///
    /// # Errors
    /// [`TwinError::Config`] for missing or malformed credentials.
    pub fn client(&self) -> Result<Client, TwinError> {
        let mut b = Config::builder()
            .endpoint(self.url.clone())
            .insecure_skip_verify(self.insecure);
        if let Some(fp) = &self.fingerprint {
            b = b.fingerprint(fp.clone());
        }
        match (&self.token, &self.username, &self.password_file) {
            (Some(t), _, _) => {
                let (id, secret) = t.split_once('=').ok_or_else(|| {
                    TwinError::Config("--token must be USER@REALM!ID=SECRET".into())
                })?;
                b = b.token(id.to_string(), secret.to_string());
            }
            (None, Some(u), Some(f)) => {
                let text = std::fs::read_to_string(f)
                    .map_err(|e| TwinError::Io(f.display().to_string(), e))?;
                let pw = text.lines().next().unwrap_or_default().to_string();
                b = b.password(u.clone(), pw);
            }
            _ => {
                return Err(TwinError::Config(
                    "give --token or --username with --password-file".into(),
                ));
            }
        }
        b.build()
            .and_then(Client::new)
            .map_err(|e| TwinError::Config(e.to_string()))
    }
}

/// A read that gave nothing: the path and why (permissions, absent).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Unread {
    /// The path.
    pub path: String,
    /// PVE's message.
    pub reason: String,
}

/// The GETs of a capture or comparison: counted, with what could not be
/// read kept rather than failing.
#[derive(Debug)]
pub struct Reader {
    client: Client,
    calls: AtomicU64,
    unread: Mutex<Vec<Unread>>,
    read: Mutex<Vec<String>>,
}

impl Reader {
    /// A reader over `client`.
    pub fn new(client: Client) -> Self {
        Self {
            client,
            calls: AtomicU64::new(0),
            unread: Mutex::new(Vec::new()),
            read: Mutex::new(Vec::new()),
        }
    }

    /// The client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// `GET path` (a `?k=v&...` query allowed): the data, `None` when
    /// PVE refuses it (permissions) or has no such thing, which is kept
    /// in [`Reader::unread`].
    ///
    /// # Errors
    /// Network, TLS and authentication failures.
    pub async fn get(&self, path: &str) -> Result<Option<Value>, TwinError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let r = self.get_raw(path).await;
        match r {
            Ok(v) => {
                lock(&self.read).push(path.to_string());
                Ok(Some(v))
            }
            Err(e) if skippable(&e) => {
                lock(&self.unread).push(Unread {
                    path: path.to_string(),
                    reason: e.to_string(),
                });
                Ok(None)
            }
            Err(source) => Err(TwinError::Read {
                path: path.to_string(),
                source,
            }),
        }
    }

    /// `GET path` as it is, errors and all.
    ///
    /// # Errors
    /// The client's.
    pub async fn get_raw(&self, path: &str) -> pve_client::Result<Value> {
        let (p, query) = path.split_once('?').unwrap_or((path, ""));
        let mut params = Params::new();
        for pair in query.split('&').filter(|s| !s.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            params.push(k, v);
        }
        self.client.get(p, &params).await
    }

    /// Keeps what was read but cannot be recreated, with why, among
    /// what [`Reader::unread`] lists.
    pub fn note(&self, path: &str, reason: String) {
        lock(&self.unread).push(Unread {
            path: path.to_string(),
            reason,
        });
    }

    /// The GETs sent.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// What could not be read, in the order tried.
    pub fn unread(&self) -> Vec<Unread> {
        lock(&self.unread).clone()
    }

    /// The paths read, in the order answered.
    pub fn read_paths(&self) -> Vec<String> {
        lock(&self.read).clone()
    }

    /// The release `/version` gives, checked: a PVE answer of a release
    /// fake-pve emulates.
    ///
    /// # Errors
    /// [`TwinError::NotPve`] for anything that is not a PVE answer;
    /// [`TwinError::Release`] for another release.
    pub async fn release(&self, url: &str) -> Result<crate::PveVersion, TwinError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let not_pve = |reason: String| TwinError::NotPve {
            url: url.to_string(),
            reason,
        };
        let v = match self.client.get("/version", &Params::new()).await {
            Ok(v) => v,
            Err(e @ pve_client::Error::Authentication { .. }) => {
                return Err(TwinError::Config(e.to_string()));
            }
            Err(e) => return Err(not_pve(format!("GET /version: {e}"))),
        };
        lock(&self.read).push("/version".into());
        let (Some(version), Some(_)) = (
            v.get("version").and_then(Value::as_str),
            v.get("release").and_then(Value::as_str),
        ) else {
            return Err(not_pve(format!("GET /version answered {v}")));
        };
        crate::PveVersion::parse(version).ok_or_else(|| TwinError::Release(version.to_string()))
    }
}

/// Errors that mean "not readable here", not "broken": PVE's refusals,
/// and its 595 for a node it cannot reach.
fn skippable(e: &pve_client::Error) -> bool {
    matches!(
        e,
        pve_client::Error::Network {
            status: Some(_),
            ..
        } | pve_client::Error::Permission { .. }
            | pve_client::Error::NotFound { .. }
            | pve_client::Error::Validation { .. }
            | pve_client::Error::Server { .. }
            | pve_client::Error::Conflict { .. }
    )
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
