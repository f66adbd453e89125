//! Many keep-alive connections held at once: the `fake-pve` binary (its
//! defaults, a process of its own on loopback) is sent one request on
//! each of `connections` TLS connections, which then stay open and idle
//! for `hold`, and are sent one more request each. Every answer must be a
//! 200; the server's resident memory before and with the connections open
//! gives the memory an idle connection costs. Bounded: at most 20,000
//! connections, every step under a deadline, the server killed at the end.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use tokio_rustls::TlsConnector;

use crate::Error;

/// The most connections a run opens.
pub const MAX_CONNECTIONS: usize = 20_000;

/// How to measure.
#[derive(Debug, Clone)]
pub struct Options {
    /// Connections held at once.
    pub connections: usize,
    /// How long they stay idle.
    pub hold: Duration,
    /// The `fake-pve` binary.
    pub fake_pve: PathBuf,
    /// Where its output goes.
    pub dir: PathBuf,
}

/// What a run saw.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Connections asked for.
    pub connections: usize,
    /// Connections opened (TLS handshake done).
    pub opened: usize,
    /// First requests answered 200.
    pub first_ok: usize,
    /// Second requests (after the hold) answered 200.
    pub second_ok: usize,
    /// The server's resident memory before the connections, bytes.
    pub rss_before: u64,
    /// With all of them open and idle.
    pub rss_held: u64,
    /// Time to open them all and send the first requests.
    pub open_time: Duration,
}

impl Report {
    /// Whether every connection opened and every request was answered.
    pub fn passed(&self) -> bool {
        self.opened == self.connections
            && self.first_ok == self.connections
            && self.second_ok == self.connections
    }

    /// The memory an idle connection costs the server, bytes.
    pub fn per_connection(&self) -> f64 {
        self.rss_held.saturating_sub(self.rss_before) as f64 / self.connections.max(1) as f64
    }

    /// A Markdown report.
    pub fn table(&self) -> String {
        let mib = |b: u64| b as f64 / 1048576.0;
        format!(
            "| connections | opened | first request 200 | after the hold 200 | server RSS before | with them open | per idle connection | opening time |\n\
             |---|---|---|---|---|---|---|---|\n\
             | {} | {} | {} | {} | {:.0} MiB | {:.0} MiB | {:.1} KiB | {:.1} s |\n\n{}\n",
            self.connections,
            self.opened,
            self.first_ok,
            self.second_ok,
            mib(self.rss_before),
            mib(self.rss_held),
            self.per_connection() / 1024.0,
            self.open_time.as_secs_f64(),
            if self.passed() { "PASS" } else { "FAIL" }
        )
    }
}

type Sender = hyper::client::conn::http1::SendRequest<Empty<Bytes>>;

/// Runs it.
///
/// # Errors
/// When the server does not start, or file descriptors for the
/// connections cannot be had.
pub async fn run(opts: &Options) -> Result<Report, Error> {
    let n = opts.connections.clamp(1, MAX_CONNECTIONS);
    let want = u64::try_from(n).unwrap_or(u64::MAX) + 256;
    let have = rlimit::increase_nofile_limit(want)?;
    if have < want {
        return Err(Error::FileLimit {
            connections: n,
            want,
            have,
        });
    }
    std::fs::create_dir_all(&opts.dir)?;
    let connector = TlsConnector::from(Arc::new(crate::throughput::any_certificate()?));
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0")?;
        l.local_addr()?.port()
    };
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut cmd = std::process::Command::new(&opts.fake_pve);
    cmd.args(["--listen", &addr.to_string()]);
    let server = crate::side_by_side::Process::spawn(
        cmd,
        &opts.dir.join("fake-pve-connections.out"),
        "  login: root@pam",
    )?;
    let (cookie, _) = crate::side_by_side::login(&connector, addr, "password").await?;
    let rss_before = server.rss().unwrap_or(0);
    let mut report = Report {
        connections: n,
        rss_before,
        ..Report::default()
    };
    let started = Instant::now();
    let deadline = started + Duration::from_secs(120);
    // Opened 100 at a time, each with its first request.
    let mut open: Vec<Sender> = Vec::with_capacity(n);
    while open.len() < n && Instant::now() < deadline {
        let batch = (n - open.len()).min(100);
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..batch {
            let (connector, cookie) = (connector.clone(), cookie.clone());
            set.spawn(async move {
                let mut s = crate::throughput::connect(&connector, addr).await.ok()?;
                let ok = version(&mut s, addr, &cookie).await;
                Some((s, ok))
            });
        }
        let mut opened_now = 0;
        while let Some(r) = set.join_next().await {
            if let Ok(Some((s, ok))) = r {
                opened_now += 1;
                report.first_ok += usize::from(ok);
                open.push(s);
            }
        }
        if opened_now == 0 {
            break;
        }
    }
    report.opened = open.len();
    report.open_time = started.elapsed();
    tokio::time::sleep(opts.hold.min(Duration::from_secs(60))).await;
    report.rss_held = server.rss().unwrap_or(0);
    let mut set = tokio::task::JoinSet::new();
    for mut s in open {
        let cookie = cookie.clone();
        set.spawn(async move { version(&mut s, addr, &cookie).await });
    }
    let second = async {
        let mut ok = 0;
        while let Some(r) = set.join_next().await {
            ok += usize::from(r.unwrap_or(false));
        }
        ok
    };
    report.second_ok = tokio::time::timeout(Duration::from_secs(120), second)
        .await
        .unwrap_or(0);
    drop(server);
    Ok(report)
}

/// `GET /version` on `s`: whether it was answered 200 (within 60 s).
async fn version(s: &mut Sender, addr: SocketAddr, cookie: &str) -> bool {
    let req = http::Request::get("/api2/json/version")
        .header(http::header::HOST, addr.to_string())
        .header(http::header::COOKIE, cookie)
        .body(Empty::new())
        .unwrap_or_default();
    let go = async {
        s.ready().await.ok()?;
        let resp = s.send_request(req).await.ok()?;
        let ok = resp.status() == http::StatusCode::OK;
        resp.into_body().collect().await.ok()?;
        Some(ok)
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(60), go).await,
        Ok(Some(true))
    )
}
