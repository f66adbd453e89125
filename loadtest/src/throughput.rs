//! What fake-pve's request path costs next to the cheapest server that
//! could answer the same bytes: `GET .../status/current` with ticket
//! authentication over TLS keep-alive at many connections, against fake-pve
//! and against a bare axum server on the same TLS stack that answers the
//! bytes fake-pve sent, in the same process and the same run.
//!
//! The load comes from `connections` hyper HTTP/1.1 clients, each on its
//! own keep-alive TLS connection sending one request after the other. Both
//! servers are measured in alternating rounds, so that noise from other
//! work on the machine falls on both; the figure is requests per second
//! summed over the rounds. Bounded: each round lasts `round` and each
//! connection stops after `max_requests`.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use fake_pve::Identity;
use fake_pve::{FakePve, Scenario};
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_rustls::{TlsAcceptor, TlsConnector};
use tower::ServiceExt;

use crate::Error;

/// The path both servers answer.
pub const PATH: &str = "/api2/json/nodes/pve/qemu/100/status/current";

/// The target of the issue: fake-pve reaches at least this share of the
/// bare server's throughput.
pub const TARGET_RATIO: f64 = 0.6;

/// How to measure.
#[derive(Debug, Clone)]
pub struct Options {
    /// Concurrent keep-alive connections.
    pub connections: usize,
    /// Rounds per server (they alternate).
    pub rounds: u32,
    /// Length of one round.
    pub round: Duration,
    /// Bound of requests per connection and round.
    pub max_requests: u64,
    /// Warm-up before the rounds, per server.
    pub warm_up: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            connections: 64,
            rounds: 3,
            round: Duration::from_secs(5),
            max_requests: 1_000_000,
            warm_up: Duration::from_secs(1),
        }
    }
}

/// What one server achieved.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Measured {
    /// Requests answered with 200.
    pub ok: u64,
    /// Requests that failed (other status, broken connection).
    pub failed: u64,
    /// Time spent measuring.
    pub elapsed: Duration,
}

impl Measured {
    /// The figures of a round's load tasks, each of which answers its
    /// `(ok, failed)` requests (one that panicked counts one failure),
    /// after `failed` connections that could not be made; the round
    /// started at `started` and ends when the last task does.
    pub async fn gather(
        mut tasks: tokio::task::JoinSet<(u64, u64)>,
        failed: u64,
        started: Instant,
    ) -> Self {
        let mut m = Self {
            failed,
            ..Self::default()
        };
        while let Some(r) = tasks.join_next().await {
            let (ok, f) = r.unwrap_or((0, 1));
            m.ok += ok;
            m.failed += f;
        }
        m.elapsed = started.elapsed();
        m
    }

    /// Answered requests per second.
    pub fn per_second(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 { self.ok as f64 / s } else { 0.0 }
    }
}

/// The comparison.
#[derive(Debug, Clone)]
pub struct Report {
    /// Connections used.
    pub connections: usize,
    /// The answer both servers sent, in bytes.
    pub body_len: usize,
    /// fake-pve.
    pub fake_pve: Measured,
    /// The bare axum server.
    pub bare: Measured,
}

impl Report {
    /// fake-pve's throughput as a share of the bare server's.
    pub fn ratio(&self) -> f64 {
        let bare = self.bare.per_second();
        if bare > 0.0 {
            self.fake_pve.per_second() / bare
        } else {
            0.0
        }
    }

    /// Whether fake-pve meets [`TARGET_RATIO`].
    pub fn passed(&self) -> bool {
        self.ratio() >= TARGET_RATIO && self.fake_pve.failed == 0 && self.bare.failed == 0
    }

    /// A Markdown table of the figures.
    pub fn table(&self) -> String {
        let row = |name: &str, m: &Measured| {
            format!(
                "| {name} | {} | {:.0} | {} | {:.1} s |\n",
                m.ok,
                m.per_second(),
                m.failed,
                m.elapsed.as_secs_f64()
            )
        };
        format!(
            "GET {PATH} ({} bytes), ticket cookie, TLS keep-alive, {} connections\n\n\
             | server | requests | requests/s | failed | measured |\n|---|---|---|---|---|\n{}{}\n\
             fake-pve reaches {:.0} % of the bare server (target {:.0} %): {}\n",
            self.body_len,
            self.connections,
            row("fake-pve", &self.fake_pve),
            row("bare axum, same bytes", &self.bare),
            self.ratio() * 100.0,
            TARGET_RATIO * 100.0,
            if self.passed() { "PASS" } else { "FAIL" }
        )
    }
}

/// A server under test: where it listens and the headers a request needs.
struct Target {
    addr: SocketAddr,
    cookie: String,
}

/// The one-VM world fake-pve serves.
const SCENARIO: &str = "vms:\n  - { vmid: 100, node: pve, name: web, status: running }\n";

/// Runs the comparison.
///
/// # Errors
/// When a server cannot start or the first answer cannot be read.
pub async fn compare(opts: &Options) -> Result<Report, Error> {
    let scenario = Scenario::parse(SCENARIO, "throughput")?;
    let pve = FakePve::builder()
        .listen(SocketAddr::from(([127, 0, 0, 1], 0)))
        .scenario(scenario)
        .start()
        .await?;
    let bare_id = Identity::self_signed(&[])?;
    let mut roots = rustls::RootCertStore::empty();
    for pem in [
        pve.cert_pem().unwrap_or_default(),
        bare_id.cert_pem.as_str(),
    ] {
        let cert = CertificateDer::from_pem_slice(pem.as_bytes())?;
        roots.add(cert)?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let client_cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = TlsConnector::from(Arc::new(client_cfg));

    let (_, ticket, _) = crate::root_session(&pve).await?;
    let fake = Target {
        addr: pve.addr(),
        cookie: format!("PVEAuthCookie={ticket}"),
    };
    let (body, headers) = first_answer(&connector, &fake).await?;
    let (bare_addr, stop) = serve_bare(&bare_id, body.clone(), headers).await?;
    let bare = Target {
        addr: bare_addr,
        cookie: fake.cookie.clone(),
    };

    load(&connector, &fake, opts, opts.warm_up).await;
    load(&connector, &bare, opts, opts.warm_up).await;
    let (mut f, mut b) = (Measured::default(), Measured::default());
    for _ in 0..opts.rounds {
        add(&mut f, load(&connector, &fake, opts, opts.round).await);
        add(&mut b, load(&connector, &bare, opts, opts.round).await);
    }
    let _ = stop.send(true);
    pve.shutdown().await;
    Ok(Report {
        connections: opts.connections,
        body_len: body.len(),
        fake_pve: f,
        bare: b,
    })
}

fn add(total: &mut Measured, m: Measured) {
    total.ok += m.ok;
    total.failed += m.failed;
    total.elapsed += m.elapsed;
}

type Sender = hyper::client::conn::http1::SendRequest<Empty<Bytes>>;

/// A TLS keep-alive HTTP/1.1 connection to `addr`, ready to send
/// requests with bodies of type `B`.
///
/// # Errors
/// The connection, the TLS handshake or the HTTP handshake.
pub async fn connect<B>(
    connector: &TlsConnector,
    addr: SocketAddr,
) -> Result<hyper::client::conn::http1::SendRequest<B>, Error>
where
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let tcp = TcpStream::connect(addr).await?;
    tcp.set_nodelay(true)?;
    let name = ServerName::IpAddress(addr.ip().into());
    let tls = connector.connect(name, tcp).await?;
    let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls)).await?;
    tokio::spawn(conn);
    Ok(send)
}

fn request(t: &Target) -> http::Request<Empty<Bytes>> {
    http::Request::get(PATH)
        .header(http::header::HOST, t.addr.to_string())
        .header(http::header::COOKIE, &t.cookie)
        .body(Empty::new())
        .unwrap_or_default()
}

/// One request: the body and headers on 200, else an error.
async fn once(send: &mut Sender, t: &Target) -> Result<(Bytes, http::HeaderMap), Error> {
    send.ready().await?;
    let resp = send.send_request(request(t)).await?;
    let status = resp.status();
    let headers = resp.headers().clone();
    let body = resp.into_body().collect().await?.to_bytes();
    if status == http::StatusCode::OK {
        Ok((body, headers))
    } else {
        Err(Error::Status {
            status,
            body: String::from_utf8_lossy(&body).into_owned(),
        })
    }
}

/// fake-pve's answer: its body and the headers the bare server repeats
/// (all but those hyper writes itself).
async fn first_answer(
    connector: &TlsConnector,
    t: &Target,
) -> Result<(Bytes, http::HeaderMap), Error> {
    let mut send = connect(connector, t.addr).await?;
    let (body, mut headers) = once(&mut send, t).await?;
    for h in [
        http::header::DATE,
        http::header::CONTENT_LENGTH,
        http::header::CONNECTION,
        http::header::TRANSFER_ENCODING,
    ] {
        headers.remove(h);
    }
    Ok((body, headers))
}

/// `connections` clients sending requests for `time`; counts answers.
async fn load(connector: &TlsConnector, t: &Target, opts: &Options, time: Duration) -> Measured {
    let mut senders = Vec::with_capacity(opts.connections);
    let mut failed = 0;
    for _ in 0..opts.connections {
        match connect(connector, t.addr).await {
            Ok(s) => senders.push(s),
            Err(_) => failed += 1,
        }
    }
    let started = Instant::now();
    let deadline = started + time;
    let mut tasks = tokio::task::JoinSet::new();
    for mut send in senders {
        let t = Target {
            addr: t.addr,
            cookie: t.cookie.clone(),
        };
        let max = opts.max_requests;
        tasks.spawn(async move {
            let (mut ok, mut failed) = (0u64, 0u64);
            while ok + failed < max && Instant::now() < deadline {
                match once(&mut send, &t).await {
                    Ok(_) => ok += 1,
                    Err(_) => {
                        failed += 1;
                        if send.is_closed() {
                            break;
                        }
                    }
                }
            }
            (ok, failed)
        });
    }
    Measured::gather(tasks, failed, started).await
}

/// A bare axum router behind the same TLS and HTTP/1.1 stack as fake-pve,
/// answering `body` with `headers` at [`PATH`]; answers its address and a
/// stop switch.
async fn serve_bare(
    id: &Identity,
    body: Bytes,
    headers: http::HeaderMap,
) -> Result<(SocketAddr, watch::Sender<bool>), Error> {
    serve_bare_at(id, body, headers, SocketAddr::from(([127, 0, 0, 1], 0))).await
}

/// [`serve_bare`] on `listen`.
///
/// # Errors
/// When TLS cannot be set up or the address bound.
pub async fn serve_bare_at(
    id: &Identity,
    body: Bytes,
    headers: http::HeaderMap,
    listen: SocketAddr,
) -> Result<(SocketAddr, watch::Sender<bool>), Error> {
    let app = axum::Router::new().route(
        PATH,
        axum::routing::get(move || {
            let (body, headers) = (body.clone(), headers.clone());
            async move { (headers, body) }
        }),
    );
    let acceptor = TlsAcceptor::from(id.server_config()?);
    let listener = TcpListener::bind(listen).await?;
    let addr = listener.local_addr()?;
    let (stop, mut stopped) = watch::channel(false);
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                a = listener.accept() => a,
                _ = stopped.changed() => break,
            };
            let Ok((tcp, _)) = accepted else { continue };
            let _ = tcp.set_nodelay(true);
            let (acceptor, app) = (acceptor.clone(), app.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let svc =
                    hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                        let app = app.clone();
                        async move {
                            Ok::<_, Infallible>(
                                app.oneshot(req.map(axum::body::Body::new))
                                    .await
                                    .unwrap_or_else(|e| match e {}),
                            )
                        }
                    });
                let _ = hyper::server::conn::http1::Builder::new()
                    .keep_alive(true)
                    .serve_connection(TokioIo::new(tls), svc)
                    .await;
            });
        }
    });
    Ok((addr, stop))
}

/// A TLS client configuration that takes any server certificate (each
/// server compared makes its own), still checking the handshake's
/// signatures.
///
/// # Errors
/// When the protocol versions cannot be set.
pub fn any_certificate() -> Result<rustls::ClientConfig, Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(
        rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
            .with_no_client_auth(),
    )
}

#[derive(Debug)]
struct AnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
