//! The server: a builder that binds, TLS, and one hyper HTTP/1.1
//! connection per client, as pveproxy serves them, each answered by the
//! axum router of [`crate::app`]. At most [`Builder::max_connections`]
//! connections are open at once, below the process's open-files limit:
//! one more is closed as soon as it is accepted. Shutting down stops
//! accepting and lets the requests in flight finish.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::Error;
use crate::api::auth::Keys;
use crate::api::{self, Router};
use crate::clock::Clock;
use crate::model::PveVersion;
use crate::model::scenario::Scenario;
use crate::state::{Latency, Settings, State};
use crate::tls::Identity;

/// How the server speaks TLS.
#[derive(Debug, Clone, Default)]
pub enum Tls {
    /// A self-signed certificate made at start (the default).
    #[default]
    SelfSigned,
    /// Certificate chain and key from PEM files.
    Pem {
        /// The certificate chain.
        cert: PathBuf,
        /// The private key.
        key: PathBuf,
    },
    /// Plain HTTP.
    Off,
}

/// The emulator, to be started with [`FakePve::builder`].
#[derive(Debug)]
pub struct FakePve;

impl FakePve {
    /// A builder with PVE's defaults: `127.0.0.1:8006`, TLS, root@pam
    /// with password `password`, PVE 9.2, a 3 s failed-auth delay, the
    /// built-in single-node scenario, the system clock and instant tasks.
    pub fn builder() -> Builder {
        Builder::default()
    }
}

/// Settings for one server.
#[derive(Debug, Clone)]
pub struct Builder {
    listen: SocketAddr,
    tls: Tls,
    root_password: String,
    version: PveVersion,
    auth_failure_delay: Duration,
    scenario: Option<Scenario>,
    clock: Option<Clock>,
    latency: Latency,
    random_seed: Option<u64>,
    data_dir: Option<std::path::PathBuf>,
    fsync: crate::persist::Fsync,
    handshake_timeout: Duration,
    head_timeout: Duration,
    body_timeout: Duration,
    body_deadline: Duration,
    max_connections: Option<usize>,
    shutdown_grace: Duration,
    access_log: Option<crate::access_log::AccessLog>,
}

impl Default for Builder {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8006)),
            tls: Tls::SelfSigned,
            root_password: "password".into(),
            version: PveVersion::default(),
            auth_failure_delay: Duration::from_secs(3),
            scenario: None,
            clock: None,
            latency: Latency::default(),
            random_seed: None,
            data_dir: None,
            fsync: crate::persist::Fsync::default(),
            handshake_timeout: Duration::from_secs(10),
            head_timeout: Duration::from_secs(30),
            body_timeout: crate::app::BODY_IDLE_TIMEOUT,
            body_deadline: crate::app::BODY_DEADLINE,
            max_connections: None,
            shutdown_grace: Duration::from_secs(10),
            access_log: None,
        }
    }
}

impl Builder {
    /// The address to bind (port 0 picks a free port).
    #[must_use]
    pub fn listen(mut self, addr: SocketAddr) -> Self {
        self.listen = addr;
        self
    }

    /// TLS mode.
    #[must_use]
    pub fn tls(mut self, tls: Tls) -> Self {
        self.tls = tls;
        self
    }

    /// root@pam's password.
    #[must_use]
    pub fn root_password(mut self, pw: impl Into<String>) -> Self {
        self.root_password = pw.into();
        self
    }

    /// The release to impersonate.
    #[must_use]
    pub fn pve_version(mut self, v: PveVersion) -> Self {
        self.version = v;
        self
    }

    /// Delay before answering a failed authentication.
    #[must_use]
    pub fn auth_failure_delay(mut self, d: Duration) -> Self {
        self.auth_failure_delay = d;
        self
    }

    /// Keeps the world in `dir` (see the book's "Keeping the world across restarts"): reloaded at
    /// start when the directory holds one (the scenario is then only what
    /// a first start builds), journaled as it changes.
    #[must_use]
    pub fn data_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.data_dir = Some(dir.into());
        self
    }

    /// When journal writes reach the disk (with [`Builder::data_dir`]).
    #[must_use]
    pub fn fsync(mut self, mode: crate::persist::Fsync) -> Self {
        self.fsync = mode;
        self
    }

    /// The scenario to start from.
    #[must_use]
    pub fn scenario(mut self, s: Scenario) -> Self {
        self.scenario = Some(s);
        self
    }

    /// The clock (for tests: [`Clock::manual`]).
    #[must_use]
    pub fn clock(mut self, c: Clock) -> Self {
        self.clock = Some(c);
        self
    }

    /// Task durations.
    #[must_use]
    pub fn latency(mut self, l: Latency) -> Self {
        self.latency = l;
        self
    }

    /// The seed of every random draw, so that runs repeat: MAC addresses,
    /// UUIDs, fault probabilities, and the signing keys and token secrets
    /// too (deterministic on purpose). Without it, the seed and the keys
    /// come from the operating system's random source.
    #[must_use]
    pub fn random_seed(mut self, seed: u64) -> Self {
        self.random_seed = Some(seed);
        self
    }

    /// How long a client may take over the TLS handshake before its
    /// connection is closed (10 s).
    #[must_use]
    pub fn tls_handshake_timeout(mut self, d: Duration) -> Self {
        self.handshake_timeout = d;
        self
    }

    /// How long a connection may wait for the next request's head (its
    /// request line and headers, whole) once the previous answer is
    /// sent, or from the handshake for the first, before it is closed
    /// (30 s): an idle keep-alive connection is closed too.
    #[must_use]
    pub fn request_head_timeout(mut self, d: Duration) -> Self {
        self.head_timeout = d;
        self
    }

    /// How long a request body may pause before the connection is
    /// closed without an answer (30 s).
    #[must_use]
    pub fn request_body_timeout(mut self, d: Duration) -> Self {
        self.body_timeout = d;
        self
    }

    /// How long reading a request body whole (the API's, up to 512 KiB;
    /// the control API's, up to 1 GiB) may take in all before the
    /// connection is closed without an answer (30 s). An upload is
    /// bounded by [`Builder::request_body_timeout`] alone.
    #[must_use]
    pub fn request_body_deadline(mut self, d: Duration) -> Self {
        self.body_deadline = d;
        self
    }

    /// How many connections are served at once (at least one); a
    /// connection accepted beyond them is closed at once, so that those
    /// being served keep being served. By default the process's
    /// open-files limit (`RLIMIT_NOFILE`'s soft limit when the server
    /// starts) less 64 files the server keeps for itself, and at most
    /// 16,384. As pveproxy does, once all but 20 of them (of more than
    /// 100) are open, a new connection is served one request and
    /// closed.
    #[must_use]
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = Some(n);
        self
    }

    /// How long [`Running::shutdown`] waits for the requests in flight
    /// before it aborts them (10 s).
    #[must_use]
    pub fn shutdown_grace(mut self, d: Duration) -> Self {
        self.shutdown_grace = d;
        self
    }

    /// Writes one line per request to `log`, as pveproxy's access log
    /// (none by default; the `fake-pve` binary writes it to its standard
    /// output).
    #[must_use]
    pub fn access_log(mut self, log: crate::access_log::AccessLog) -> Self {
        self.access_log = Some(log);
        self
    }

    /// Binds and starts serving in the background.
    ///
    /// # Errors
    /// When the address cannot be bound, TLS cannot be set up or the
    /// scenario is invalid.
    pub async fn start(self) -> Result<Running, Error> {
        let scenario = self.scenario.unwrap_or_else(Scenario::default_single_node);
        let loaded = match &self.data_dir {
            Some(dir) => Some(crate::persist::Store::open(dir, self.fsync, || {
                fresh_keys(self.random_seed).to_text()
            })?),
            None => None,
        };
        let clock = self.clock.unwrap_or_else(Clock::system);
        // The cluster CA and node certificates are kept with the world, so
        // that pinned fingerprints and trusted CAs stay valid across
        // restarts.
        let pki = Arc::new(match &self.data_dir {
            Some(dir) => crate::pki::Pki::kept_in(&dir.join("pki")).map_err(Error::Tls)?,
            None => crate::pki::Pki::in_memory(),
        });
        let identity = match &self.tls {
            Tls::SelfSigned => {
                let (name, ip, domain) = local_node(&scenario);
                let names = crate::pki::NodeNames {
                    name: &name,
                    ip: &ip,
                    domain: domain.as_deref(),
                };
                let now = clock.now();
                let node = pki.node(&names, now).map_err(Error::Tls)?;
                let ca = pki.ca(now).map_err(Error::Tls)?;
                Some(Identity::issued(&node, &ca)?)
            }
            Tls::Pem { cert, key } => Some(Identity::from_pem_files(cert, key)?),
            Tls::Off => None,
        };
        let fingerprint = identity.as_ref().map(Identity::fingerprint);
        let served = match &identity {
            Some(id) => Some(id.served()?),
            None => None,
        };
        let acceptor = served
            .as_ref()
            .map(|s| tokio_rustls::TlsAcceptor::from(crate::tls::served_config(Arc::clone(s))));
        let settings = Settings {
            version: self.version,
            root_password: self.root_password,
            auth_failure_delay: self.auth_failure_delay,
            fingerprint: fingerprint.clone(),
            proxy_pem: match &self.tls {
                Tls::Pem { .. } => identity.as_ref().map(|i| i.cert_pem.clone()),
                _ => None,
            },
            pki,
            served,
            random_seed: self.random_seed.unwrap_or_else(rand::random),
        };
        let router = Router::default();
        let state = match loaded {
            None => {
                let source = scenario.source.clone();
                let state = State::with_keys(
                    scenario,
                    settings,
                    clock,
                    self.latency,
                    fresh_keys(self.random_seed),
                )
                .map_err(Error::Scenario)?;
                crate::api::run_setup(&state, &router).map_err(|reason| {
                    Error::Scenario(crate::model::scenario::ScenarioError {
                        file: source,
                        line: None,
                        reason,
                    })
                })?;
                state
            }
            Some(loaded) => {
                let keys = Keys::from_text(&loaded.keys).ok_or_else(|| {
                    crate::persist::StoreError::Corrupt {
                        path: loaded.store.dir().join("keys"),
                        offset: 0,
                        reason: "not two 32-byte hex keys".into(),
                    }
                })?;
                let state = State::with_keys(scenario, settings, clock, self.latency, keys)
                    .map_err(Error::Scenario)?;
                let mut last_ms = None;
                if let Some(snap) = loaded.snapshot {
                    last_ms = Some(snap.clock.now_ms);
                    state.restore_snapshot(snap).map_err(Error::Restore)?;
                } else {
                    // A fresh directory: the seed's setup, before the journal.
                    crate::api::run_setup(&state, &router).map_err(|reason| {
                        Error::Scenario(crate::model::scenario::ScenarioError {
                            file: String::new(),
                            line: None,
                            reason,
                        })
                    })?;
                }
                let replayed = loaded.records.len();
                for rec in &loaded.records {
                    if let Some(t) = rec.now_ms {
                        last_ms = Some(last_ms.map_or(t, |l: i64| l.max(t)));
                    }
                    match rec.kind {
                        crate::persist::Kind::Api => crate::api::replay(&state, &router, rec),
                        crate::persist::Kind::Control => crate::control::replay(&state, rec),
                        crate::persist::Kind::Worker => crate::join::replay(&state, rec),
                    }
                }
                // Tasks that ran when the process died end as after a
                // node crash. When did it die? A manual clock only moves
                // through the journal, so its time now is that moment; a
                // running clock's last sign of life is the journal's last
                // record or the heartbeat written every second.
                let at = if state.clock().is_manual() {
                    state.clock().now_millis()
                } else {
                    let alive = std::fs::read_to_string(loaded.store.dir().join("alive"))
                        .ok()
                        .and_then(|t| t.trim().parse::<i64>().ok());
                    match (last_ms, alive) {
                        (Some(a), Some(b)) => a.max(b),
                        (a, b) => a.or(b).unwrap_or_else(|| state.clock().now_millis()),
                    }
                };
                let interrupted = state.interrupt_running_tasks(at.max(0));
                if let Some(fp) = &fingerprint {
                    state.with(|c| c.nodes_mut().set_local_fingerprint(fp));
                }
                crate::persist::blocking(|| loaded.store.write_snapshot(state.snapshot()))?;
                tracing::info!(
                    dir = %loaded.store.dir().display(),
                    replayed,
                    interrupted,
                    "world loaded from the data directory"
                );
                state.attach_store(loaded.store);
                state
            }
        };
        let mut fingerprint = fingerprint;
        if let Some(served) = &state.settings().served {
            // The local node's custom certificate, kept with the world, is
            // served as pveproxy serves its pveproxy-ssl.pem at start.
            let custom = state.with(|c| {
                let local = c.nodes().local().to_string();
                c.hardware().node(&local).custom_cert().cloned()
            });
            if let Some(c) = custom {
                match served.serve_pem(&c.pem, &c.key) {
                    Ok(()) => {
                        let fp = served.fingerprint();
                        state.with(|c| c.nodes_mut().set_local_fingerprint(&fp));
                        fingerprint = Some(fp);
                    }
                    Err(e) => tracing::warn!(error = %e, "the custom certificate cannot be served"),
                }
            }
        }
        let listener = TcpListener::bind(self.listen)
            .await
            .map_err(|e| Error::Bind(self.listen, e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::Bind(self.listen, e))?;
        let (stop_tx, stop_rx) = watch::channel(false);
        if let Some(store) = state.store() {
            // A heartbeat of the emulated time, so that a restart after a
            // crash knows when the process was last alive.
            let (path, clock, mut stop) = (
                store.dir().join("alive"),
                state.clock().clone(),
                stop_rx.clone(),
            );
            tokio::spawn(async move {
                loop {
                    let now = clock.now_millis().to_string();
                    let _ = crate::persist::write_private(&path, now.as_bytes());
                    tokio::select! {
                        _ = stop.changed() => break,
                        () = tokio::time::sleep(Duration::from_secs(1)) => {}
                    }
                }
            });
        }
        tokio::spawn(crate::deliver::run(state.clone(), stop_rx.clone()));
        tokio::spawn(crate::join::run(state.clone(), stop_rx.clone()));
        let conns = Connections {
            wire: Arc::new(crate::app::wire(
                state.clone(),
                crate::app::BodyTimes {
                    idle: self.body_timeout,
                    deadline: self.body_deadline,
                },
                self.access_log.clone(),
            )),
            acceptor,
            handshake_timeout: self.handshake_timeout,
            head_timeout: self.head_timeout,
            stop: stop_rx.clone(),
        };
        let cap = Cap::new(self.max_connections.unwrap_or_else(default_max_connections));
        tracing::debug!(max = cap.max, "connections served at once");
        let task = tokio::spawn(serve(listener, conns, cap, stop_rx, self.shutdown_grace));
        Ok(Running {
            addr,
            tls: identity.is_some(),
            fingerprint,
            cert_pem: identity.map(|i| i.trust_pem),
            state,
            stop: stop_tx,
            task: Some(task),
            access_log: self.access_log,
        })
    }
}

/// The local node of `scenario`: its name, address and DNS domain, which
/// its certificate names.
fn local_node(scenario: &Scenario) -> (String, String, Option<String>) {
    if let Some(w) = &scenario.world {
        let local = w.nodes().local().to_string();
        let ip = w
            .nodes()
            .get(&local)
            .map(|n| n.ip.clone())
            .unwrap_or_default();
        let domain = w
            .node_services
            .sys(w.nodes(), w.version, &local)
            .ok()
            .and_then(|s| s.search().map(str::to_string));
        return (local, ip, domain);
    }
    let (name, ip) = scenario.nodes.first().map_or_else(
        || ("pve".to_string(), None),
        |n| (n.name.clone(), n.ip.clone()),
    );
    let domain = Some(crate::model::node_services::DOMAIN.to_string());
    (name, ip.unwrap_or_else(|| "192.0.2.10".into()), domain)
}

/// The signing keys of a new server: from the operating system's random
/// source, or following from an explicit random seed (then runs with the
/// same seed sign alike, on purpose).
fn fresh_keys(seed: Option<u64>) -> Keys {
    seed.map_or_else(Keys::random, Keys::from_seed)
}

/// A running server. Dropping it stops the server.
#[derive(Debug)]
pub struct Running {
    addr: SocketAddr,
    tls: bool,
    fingerprint: Option<String>,
    cert_pem: Option<String>,
    state: State,
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
    access_log: Option<crate::access_log::AccessLog>,
}

impl Running {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `https://127.0.0.1:PORT` (or `http://`).
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// The base URL of the API: `{url}/api2/json`.
    pub fn api_url(&self) -> String {
        format!("{}/api2/json", self.url())
    }

    /// The certificate's SHA-256 fingerprint, when serving TLS.
    pub fn fingerprint(&self) -> Option<&str> {
        self.fingerprint.as_deref()
    }

    /// The certificate to verify the server against, in PEM, when
    /// serving TLS: the cluster CA (`pve-root-ca.pem`) that signed the
    /// served node certificate, or the certificate given as PEM files
    /// ([`Tls::Pem`]).
    pub fn cert_pem(&self) -> Option<&str> {
        self.cert_pem.as_deref()
    }

    /// The state, for tests that look inside.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The clock.
    pub fn clock(&self) -> &Clock {
        self.state.clock()
    }

    /// Saves the current world as checkpoint `name` (see
    /// [`State::checkpoint`]): seed once, then [`Running::restore`] before
    /// each test.
    ///
    /// # Errors
    /// An invalid name.
    pub fn checkpoint(&self, name: &str) -> Result<(), crate::state::StateError> {
        self.state.checkpoint(name)
    }

    /// Returns to checkpoint `name` (see [`State::restore`]).
    ///
    /// # Errors
    /// An unknown checkpoint.
    pub fn restore(&self, name: &str) -> Result<(), crate::state::StateError> {
        self.state.restore(name)
    }

    /// Stops accepting connections, lets the requests in flight finish
    /// (for up to the [`Builder::shutdown_grace`], then aborts them) and
    /// closes every connection; with a data directory, then writes a
    /// snapshot.
    pub async fn shutdown(mut self) {
        self.state.hub().close();
        let _ = self.stop.send(true);
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
        if let Some(store) = self.state.store() {
            let _gate = store.gate();
            if let Err(e) = crate::persist::blocking(|| store.write_snapshot(self.state.snapshot()))
            {
                tracing::error!("snapshot at shutdown failed: {e}");
            }
            store.release();
        }
        if let Some(log) = &self.access_log {
            crate::persist::blocking(|| log.flush());
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.state.hub().close();
        let _ = self.stop.send(true);
    }
}

/// What each connection needs.
#[derive(Clone)]
struct Connections {
    wire: Arc<crate::app::Wire>,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    handshake_timeout: Duration,
    head_timeout: Duration,
    stop: watch::Receiver<bool>,
}

/// The open files the server keeps for itself below the open-files
/// limit (the listener, the runtime's, the data directory's and the
/// access log's files, a TLS certificate being read).
const FILES_KEPT: u64 = 64;

/// The most connections served at once by default, whatever the
/// open-files limit (each idle TLS connection holds about 32 KiB).
const MAX_CONNECTIONS: usize = 16_384;

/// How many connections a server serves at once unless told otherwise
/// ([`Builder::max_connections`]): the process's open-files limit (its
/// soft limit, `RLIMIT_NOFILE`, as it is now: the `fake-pve` binary
/// raises it to the hard limit at start) less [`FILES_KEPT`] (half the
/// limit when it is lower than twice that), and at most
/// [`MAX_CONNECTIONS`].
fn default_max_connections() -> usize {
    #[cfg(unix)]
    let limit = rlimit::getrlimit(rlimit::Resource::NOFILE).map_or(1024, |(soft, _)| soft);
    #[cfg(not(unix))]
    let limit = 1024_u64;
    let open = if limit >= 2 * FILES_KEPT {
        limit - FILES_KEPT
    } else {
        limit / 2
    };
    usize::try_from(open).map_or(MAX_CONNECTIONS, |n| n.clamp(1, MAX_CONNECTIONS))
}

/// The connections a server may have open at once: one permit each.
struct Cap {
    max: usize,
    /// Once this many are open, a new one is served without keep-alive
    /// (pveproxy's `max_conn_soft_limit`).
    soft: usize,
    permits: Arc<tokio::sync::Semaphore>,
    /// Whether the last connection accepted was over the cap (warned
    /// about once, not for each).
    refusing: bool,
}

impl Cap {
    fn new(max: usize) -> Self {
        let max = max.clamp(1, tokio::sync::Semaphore::MAX_PERMITS);
        Self {
            max,
            soft: if max > 100 { max - 20 } else { max },
            permits: Arc::new(tokio::sync::Semaphore::new(max)),
            refusing: false,
        }
    }

    /// A permit for one more connection, held while it is open, and
    /// whether it may be kept alive; `None` over the cap.
    fn admit(&mut self, peer: SocketAddr) -> Option<(tokio::sync::OwnedSemaphorePermit, bool)> {
        let Ok(permit) = self.permits.clone().try_acquire_owned() else {
            if !self.refusing {
                tracing::warn!(
                    max = self.max,
                    "connection limit reached: connections over it are closed at once"
                );
            }
            self.refusing = true;
            tracing::debug!(%peer, "over the connection limit: closed");
            return None;
        };
        self.refusing = false;
        let open = self.max - self.permits.available_permits();
        Some((permit, open < self.soft))
    }
}

/// Accepts connections until told to stop, then waits for them to end
/// (each closes once its request in flight is answered) for up to
/// `grace`, and aborts those left. A connection over the cap is closed
/// as soon as it is accepted.
async fn serve(
    listener: TcpListener,
    conns: Connections,
    mut cap: Cap,
    mut stop: watch::Receiver<bool>,
    grace: Duration,
) {
    let mut running = tokio::task::JoinSet::new();
    loop {
        let accepted = tokio::select! {
            r = listener.accept() => r,
            () = stopped(&mut stop) => break,
        };
        let (stream, peer) = match accepted {
            Ok(x) => x,
            Err(e) => {
                tracing::warn!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Some((permit, keep_alive)) = cap.admit(peer) else {
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let conn = conns.clone().serve(stream, peer, keep_alive);
        running.spawn(async move {
            conn.await;
            drop(permit);
        });
        while running.try_join_next().is_some() {}
    }
    drop(listener);
    let drained = async { while running.join_next().await.is_some() {} };
    if tokio::time::timeout(grace, drained).await.is_err() {
        tracing::warn!(
            left = running.len(),
            "requests still running after the shutdown grace period: aborted"
        );
        running.shutdown().await;
    }
}

impl Connections {
    /// Serves one connection: the TLS handshake (bounded in time), then
    /// HTTP/1.1 with keep-alive (unless `keep_alive` is false: one
    /// request) until the client closes or the server stops.
    async fn serve(mut self, stream: tokio::net::TcpStream, peer: SocketAddr, keep_alive: bool) {
        let Some(acceptor) = self.acceptor.clone() else {
            return self.http(stream, peer, keep_alive).await;
        };
        let handshake = tokio::time::timeout(self.handshake_timeout, acceptor.accept(stream));
        let tls = tokio::select! {
            r = handshake => r,
            () = stopped(&mut self.stop) => return,
        };
        match tls {
            Ok(Ok(tls)) => self.http(tls, peer, keep_alive).await,
            Ok(Err(e)) => tracing::debug!(%peer, "TLS handshake failed: {e}"),
            Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
        }
    }

    async fn http<I>(mut self, io: I, peer: SocketAddr, keep_alive: bool)
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        // Each request holds the wire while it is answered: through a
        // handle of this connection's own, so that the count of holders
        // the requests change is not one all connections share (and
        // pass from core to core).
        let handle = Arc::new(ConnectionWire::new(self.wire.clone()));
        let wire = handle.clone();
        let svc = service_fn(move |req: http::Request<Incoming>| answer(wire.clone(), req, peer));
        let mut http = hyper::server::conn::http1::Builder::new();
        // An answer's head and body go out as one buffer, so as one TLS
        // record and one write, rather than as a record each. pveproxy's
        // limit on the number of header lines is the wire's
        // (`app::refusal`): hyper's own, higher, only bounds the parsing.
        // The wait for a request's head is bounded here
        // (`ConnectionWire::idle`), by one timer a connection, not by
        // hyper's, set for each request.
        http.keep_alive(keep_alive).writev(false);
        // A console's `vncwebsocket` takes the connection over.
        let conn = http.serve_connection(TokioIo::new(io), svc).with_upgrades();
        tokio::pin!(conn);
        let result = tokio::select! {
            biased;
            r = conn.as_mut() => r,
            () = stopped(&mut self.stop) => {
                // Finishes the request in flight, if any, then closes.
                conn.as_mut().graceful_shutdown();
                conn.await
            }
            () = handle.idle(self.head_timeout) => {
                tracing::debug!(%peer, "no request for {:?}: connection closed", self.head_timeout);
                // Closes at once when idle, after the answer being sent
                // if any; a head still coming in is not waited for long.
                conn.as_mut().graceful_shutdown();
                match tokio::time::timeout(self.head_timeout, conn).await {
                    Ok(r) => r,
                    Err(_) => Ok(()),
                }
            }
        };
        if let Err(e) = result {
            tracing::debug!(%peer, "connection ended: {e}");
        }
    }
}

/// Returns once the server is told to stop (or its handle is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// A connection's own handle on the server's wire (see
/// `Connections::http`), and what the connection is doing: how many of
/// its requests are being answered, and when the last one was.
struct ConnectionWire {
    wire: Arc<crate::app::Wire>,
    opened: std::time::Instant,
    in_flight: AtomicUsize,
    /// When the last answer was ready, milliseconds after `opened`.
    last_ms: AtomicU64,
}

impl ConnectionWire {
    fn new(wire: Arc<crate::app::Wire>) -> Self {
        Self {
            wire,
            opened: std::time::Instant::now(),
            in_flight: AtomicUsize::new(0),
            last_ms: AtomicU64::new(0),
        }
    }

    /// Resolves once the connection has waited `limit` for a request
    /// with none being answered: after its last answer, or from its
    /// start. A request costs two counts and a clock reading; the timer
    /// is set again only when it goes off.
    async fn idle(&self, limit: Duration) {
        let mut deadline = self.opened + limit;
        loop {
            tokio::time::sleep_until(deadline.into()).await;
            let now = std::time::Instant::now();
            if self.in_flight.load(Ordering::Acquire) > 0 {
                deadline = now + limit;
                continue;
            }
            let last = self.opened + Duration::from_millis(self.last_ms.load(Ordering::Acquire));
            if last + limit <= now {
                return;
            }
            deadline = last + limit;
        }
    }
}

/// A request being answered on a connection ([`ConnectionWire`]): counted
/// until its answer is ready, or until it is dropped.
struct Answering<'a>(&'a ConnectionWire);

impl<'a> Answering<'a> {
    fn start(conn: &'a ConnectionWire) -> Self {
        conn.in_flight.fetch_add(1, Ordering::AcqRel);
        Self(conn)
    }
}

impl Drop for Answering<'_> {
    fn drop(&mut self) {
        let ms = u64::try_from(self.0.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.0.last_ms.store(ms, Ordering::Release);
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One request through the wire; an answer marked
/// [`api::DropConnection`] (an injected `drop` fault) becomes an error,
/// on which hyper closes the connection without answering.
///
/// A websocket upgrade of a `...websocket` call is answered after the
/// API's answer, as pveproxy answers it ([`crate::console::Upgrade`]).
async fn answer(
    wire: Arc<ConnectionWire>,
    mut req: http::Request<Incoming>,
    peer: SocketAddr,
) -> Result<axum::response::Response, api::DropConnection> {
    let answering = Answering::start(&wire);
    let upgrade = crate::console::Upgrade::take(&mut req);
    let resp = wire
        .wire
        .answer(req.map(axum::body::Body::new), Some(peer))
        .await;
    drop(answering);
    if api::DropConnection::marks(&resp) {
        return Err(api::DropConnection);
    }
    match upgrade {
        Some(u) => u
            .answer(resp, wire.wire.clone())
            .await
            .ok_or(api::DropConnection),
        None => Ok(resp),
    }
}
