//! fake-pve as users run it, next to a bare server and to another PVE
//! fake, measured in one run: each server is a process of its own
//! started on loopback, and one load generator (this process) meets them
//! all the same way, in alternating rounds.
//!
//! - **fake-pve** is the `fake-pve` binary with the README's defaults
//!   (the access log on, on its standard output, which goes to a file),
//!   and once more with `--access-log off`, which shows what the log
//!   costs;
//! - the **bare server** (`pve-throughput --serve-bare`) is an axum
//!   router behind the same stack (tokio-rustls, hyper's HTTP/1.1 with
//!   keep-alive, mimalloc) answering the bytes and headers fake-pve
//!   answered;
//! - **fakepve** (the Python fake on PyPI, `ci/setup-fakepve` installs
//!   it) when its executable is given.
//!
//! The reads are `GET .../qemu/100/status/current` with a ticket cookie;
//! the write mix (fake-pve only, a third instance with the README's
//! defaults, so that the two read servers share their history) is, on
//! each connection over and over: a VM created, its config updated,
//! started, stopped and destroyed, with the instant profile's tasks.
//! Each server's processor time in its rounds is read from `/proc`, and
//! so is the load generator's own. Every connection sends one request after
//! the other on its own TLS keep-alive connection. Bounded: each round
//! lasts `round`, each connection stops after `max_requests`, and the
//! children are killed at the end.

use std::io::Read as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use tokio_rustls::TlsConnector;

use crate::throughput::Measured;

/// The targets of the issue.
pub const TARGET_BARE: f64 = 0.75;
/// fake-pve's reads per second next to fakepve's.
pub const TARGET_FAKEPVE: f64 = 12.0;
/// The access log's cost, as a share of the throughput without it.
pub const TARGET_LOG_COST: f64 = 0.05;
/// The write mix's throughput next to the reads'.
pub const TARGET_WRITES: f64 = 0.5;

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
    /// The `fake-pve` binary.
    pub fake_pve: PathBuf,
    /// This binary (it serves the bare server with `--serve-bare`).
    pub this: PathBuf,
    /// The `fakepve` executable, if it is to be compared.
    pub fakepve: Option<PathBuf>,
    /// Where the servers' output and the scenario go.
    pub dir: PathBuf,
    /// Whether the write mix is measured.
    pub writes: bool,
    /// The noise check: the second read server runs with the README's
    /// defaults too, so that the access log's comparison sets two
    /// servers alike side by side, and what it finds is the method's own
    /// spread (the run cannot pass).
    pub calibrate: bool,
}

/// One server's figures.
#[derive(Debug, Clone)]
pub struct Row {
    /// What it is.
    pub name: String,
    /// What it achieved.
    pub measured: Measured,
    /// Its resident memory at the end, bytes.
    pub rss: Option<u64>,
    /// The processor time the server spent in its measured rounds (all
    /// its threads).
    pub cpu: Option<Cpu>,
    /// The processor time the load generator (this process) spent in the
    /// same rounds: on two cores it shares, it bounds the throughput too.
    pub client_cpu: Option<Cpu>,
    /// Requests per second in each measured round, in order.
    pub rounds: Vec<f64>,
}

/// Processor time: in the program itself and in the kernel on its
/// behalf (the sockets, TLS records' writes and reads).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cpu {
    /// User time.
    pub user: Duration,
    /// System time.
    pub system: Duration,
}

impl Cpu {
    /// Both together.
    pub fn total(self) -> Duration {
        self.user + self.system
    }

    /// What was spent between `self` and `later`.
    fn until(self, later: Self) -> Self {
        Self {
            user: later.user.saturating_sub(self.user),
            system: later.system.saturating_sub(self.system),
        }
    }
}

impl std::ops::Add for Cpu {
    type Output = Self;
    fn add(self, o: Self) -> Self {
        Self {
            user: self.user + o.user,
            system: self.system + o.system,
        }
    }
}

impl Row {
    /// The server's processor time per answered request, microseconds.
    pub fn cpu_per_request_us(&self) -> Option<f64> {
        self.per_request_us(self.cpu?.total())
    }

    /// The part of [`Row::cpu_per_request_us`] spent in the kernel.
    pub fn system_per_request_us(&self) -> Option<f64> {
        self.per_request_us(self.cpu?.system)
    }

    /// The load generator's processor time per answered request,
    /// microseconds.
    pub fn client_per_request_us(&self) -> Option<f64> {
        self.per_request_us(self.client_cpu?.total())
    }

    fn per_request_us(&self, d: Duration) -> Option<f64> {
        (self.measured.ok > 0).then(|| d.as_secs_f64() * 1e6 / self.measured.ok as f64)
    }
}

/// The comparison.
#[derive(Debug, Clone)]
pub struct Report {
    /// Connections used.
    pub connections: usize,
    /// fake-pve with the README's defaults, reads.
    pub fake_pve: Row,
    /// fake-pve without the access log, reads.
    pub no_log: Row,
    /// The bare server, reads.
    pub bare: Row,
    /// fakepve, reads.
    pub fakepve: Option<Row>,
    /// fake-pve with the README's defaults, the write mix.
    pub writes: Row,
    /// Access log lines fake-pve wrote.
    pub log_lines: usize,
    /// Whether it is the noise check (see [`Options::calibrate`]).
    pub calibrate: bool,
}

/// The lowest and highest of the rounds' own ratios of `a` to `b` (the
/// round's figures side by side, measured one after the other): how far
/// a single round strays, beside the ratio of the totals.
fn round_spread(a: &Row, b: &Row) -> Option<(f64, f64)> {
    a.rounds
        .iter()
        .zip(&b.rounds)
        .map(|(x, y)| ratio(*x, *y))
        .fold(None, |acc, r| match acc {
            None => Some((r, r)),
            Some((lo, hi)) => Some((f64::min(lo, r), f64::max(hi, r))),
        })
}

impl Report {
    fn rate(r: &Row) -> f64 {
        r.measured.per_second()
    }

    /// fake-pve (defaults) next to the bare server.
    pub fn to_bare(&self) -> f64 {
        ratio(Self::rate(&self.fake_pve), Self::rate(&self.bare))
    }

    /// What the access log costs: the share of the throughput without it
    /// that is lost with it.
    pub fn log_cost(&self) -> f64 {
        1.0 - ratio(Self::rate(&self.fake_pve), Self::rate(&self.no_log))
    }

    /// fake-pve (defaults) next to fakepve.
    pub fn to_fakepve(&self) -> Option<f64> {
        self.fakepve
            .as_ref()
            .map(|f| ratio(Self::rate(&self.fake_pve), Self::rate(f)))
    }

    /// The write mix next to the reads.
    pub fn writes_to_reads(&self) -> f64 {
        ratio(Self::rate(&self.writes), Self::rate(&self.fake_pve))
    }

    fn failed(&self) -> u64 {
        [&self.fake_pve, &self.no_log, &self.bare, &self.writes]
            .into_iter()
            .chain(self.fakepve.as_ref())
            .map(|r| r.measured.failed)
            .sum()
    }

    /// Whether every target is met (fakepve's only when it was measured;
    /// never in the noise check).
    pub fn passed(&self) -> bool {
        !self.calibrate
            && self.writes.measured.elapsed > Duration::ZERO
            && self.failed() == 0
            && self.to_bare() >= TARGET_BARE
            && self.log_cost() < TARGET_LOG_COST
            && self.writes_to_reads() >= TARGET_WRITES
            && self.to_fakepve().is_none_or(|x| x >= TARGET_FAKEPVE)
    }

    /// A Markdown report.
    pub fn table(&self) -> String {
        let mib =
            |b: Option<u64>| b.map_or("-".into(), |b| format!("{:.0} MiB", b as f64 / 1048576.0));
        let row = |r: &Row| {
            format!(
                "| {} | {} | {:.0} | {} | {} | {} | {} |\n",
                r.name,
                r.measured.ok,
                r.measured.per_second(),
                match (r.cpu_per_request_us(), r.system_per_request_us()) {
                    (Some(us), Some(sys)) => format!("{us:.1} µs ({sys:.1} in the kernel)"),
                    _ => "-".into(),
                },
                r.client_per_request_us()
                    .map_or("-".into(), |us| format!("{us:.1} µs")),
                r.measured.failed,
                mib(r.rss)
            )
        };
        let verdict = |ok: bool| if ok { "PASS" } else { "FAIL" };
        let mut out = format!(
            "{} connections, TLS keep-alive, one request after the other on each\n\n\
             | server | requests | requests/s | server CPU per request | load generator CPU per request | failed | memory at the end |\n|---|---|---|---|---|---|---|\n",
            self.connections
        );
        for r in [&self.fake_pve, &self.no_log, &self.bare]
            .into_iter()
            .chain(self.fakepve.as_ref())
            .chain([&self.writes])
        {
            out.push_str(&row(r));
        }
        // How far the rounds' own ratios spread: " (rounds: 70 to 90 %)".
        let percent_spread = |a: &Row, b: &Row, cost: bool| {
            round_spread(a, b).map_or(String::new(), |(lo, hi)| {
                let (lo, hi) = if cost { (1.0 - hi, 1.0 - lo) } else { (lo, hi) };
                // (+ 0.0: a share that rounds to nothing is "0", not "-0".)
                let pct = |x: f64| (x * 100.0).round() + 0.0;
                format!(" (rounds: {:.0} to {:.0} %)", pct(lo), pct(hi))
            })
        };
        // A share that must reach its target: "- <who> reaches <x> % of
        // <what> (rounds: ...) (target <y> %): PASS".
        let reaches = |who: &str, share: f64, what: &str, spread: String, target: f64| {
            format!(
                "- {who} reaches {:.0} % of {what}{spread} (target {:.0} %): {}\n",
                share * 100.0,
                target * 100.0,
                verdict(share >= target)
            )
        };
        out.push('\n');
        out.push_str(&reaches(
            "fake-pve with its defaults",
            self.to_bare(),
            "the bare server",
            percent_spread(&self.fake_pve, &self.bare, false),
            TARGET_BARE,
        ));
        let log_spread = percent_spread(&self.fake_pve, &self.no_log, true);
        if self.calibrate {
            out.push_str(&format!(
                "- noise check: two servers alike, both with the README's defaults, differ by {:.1} %{log_spread}; the access log's comparison cannot tell apart less than that\n",
                self.log_cost() * 100.0,
            ));
        } else {
            out.push_str(&format!(
                "- the access log ({} lines written) costs {:.1} % of the throughput{log_spread} (target under {:.0} %): {}\n",
                self.log_lines,
                self.log_cost() * 100.0,
                TARGET_LOG_COST * 100.0,
                verdict(self.log_cost() < TARGET_LOG_COST)
            ));
        }
        match self.to_fakepve() {
            Some(x) => out.push_str(&format!(
                "- fake-pve answers {x:.1} times as many reads as fakepve{} (target {TARGET_FAKEPVE:.0}x): {}\n",
                self.fakepve
                    .as_ref()
                    .and_then(|f| round_spread(&self.fake_pve, f))
                    .map_or(String::new(), |(lo, hi)| format!(
                        " (rounds: {lo:.1} to {hi:.1})"
                    )),
                verdict(x >= TARGET_FAKEPVE)
            )),
            None => out.push_str("- fakepve not measured (no --fakepve)\n"),
        }
        out.push_str(&reaches(
            "the write mix",
            self.writes_to_reads(),
            "the reads' throughput",
            percent_spread(&self.writes, &self.fake_pve, false),
            TARGET_WRITES,
        ));
        out.push_str(&format!(
            "- failed requests: {}\n\nOverall: {}\n",
            self.failed(),
            verdict(self.passed())
        ));
        out
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

/// A child process, killed when dropped.
pub struct Process {
    child: Child,
}

impl Process {
    /// Starts `cmd` with its output in `out`, and waits until that
    /// output has a line containing `ready` (30 s at most).
    ///
    /// # Errors
    /// When it cannot start, ends, or is not ready in time.
    pub fn spawn(cmd: Command, out: &Path, ready: &str) -> Result<Self, String> {
        spawn(cmd, out, ready).map(|child| Self { child })
    }

    /// The processor time it has used so far (all its threads).
    pub fn cpu(&self) -> Option<Cpu> {
        cpu_of(&format!("/proc/{}/stat", self.child.id()))
    }

    /// Its resident memory, bytes.
    pub fn rss(&self) -> Option<u64> {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    }
}

/// The processor time a process has used so far (all its threads), from
/// its `/proc/.../stat` (clock ticks of 1/100 s, Linux's `USER_HZ`).
fn cpu_of(stat: &str) -> Option<Cpu> {
    let s = std::fs::read_to_string(stat).ok()?;
    // The fields after the command's name, which is in parentheses.
    let rest = &s[s.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    // utime and stime are the 14th and 15th fields; `rest` starts at
    // the 3rd.
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(Cpu {
        user: Duration::from_millis(utime * 10),
        system: Duration::from_millis(stime * 10),
    })
}

/// This process's processor time (the load generator's).
fn own_cpu() -> Option<Cpu> {
    cpu_of("/proc/self/stat")
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server process and how to reach it.
struct Server {
    name: String,
    process: Process,
    addr: SocketAddr,
    path: String,
    cookie: String,
    csrf: String,
    node: String,
}

impl Server {
    fn rss(&self) -> Option<u64> {
        self.process.rss()
    }

    fn cpu(&self) -> Option<Cpu> {
        self.process.cpu()
    }
}

/// The one-VM world fake-pve serves.
const SCENARIO: &str = "vms:\n  - { vmid: 100, node: pve, name: web, status: running }\n";
/// The same for fakepve.
const FAKEPVE_GUESTS: &str =
    r#"{"guests": [{"vmid": 100, "name": "web", "node": "pve", "status": "running"}]}"#;

/// Runs the comparison.
///
/// # Errors
/// When a server cannot start or the first answers cannot be read.
pub async fn run(opts: &Options) -> Result<Report, String> {
    std::fs::create_dir_all(&opts.dir).map_err(|e| format!("{}: {e}", opts.dir.display()))?;
    let connector = TlsConnector::from(Arc::new(crate::throughput::any_certificate()?));
    let scenario = opts.dir.join("scenario.yaml");
    std::fs::write(&scenario, SCENARIO).map_err(|e| e.to_string())?;
    let seed = scenario.display().to_string();
    let fake_log = opts.dir.join("fake-pve.out");
    let fake = start_fake_pve(
        &connector,
        opts,
        "fake-pve (README defaults)",
        &seed,
        &[],
        &fake_log,
    )
    .await?;
    let (name, extra): (&str, &[&str]) = if opts.calibrate {
        ("fake-pve (README defaults), a second one", &[])
    } else {
        ("fake-pve --access-log off", &["--access-log", "off"])
    };
    let no_log = start_fake_pve(
        &connector,
        opts,
        name,
        &seed,
        extra,
        &opts.dir.join("fake-pve-no-log.out"),
    )
    .await?;
    // The write mix has a server of its own, so that the two read
    // servers differ in nothing but the log (the writes' world grows
    // with every task).
    let writer = if opts.writes {
        Some(
            start_fake_pve(
                &connector,
                opts,
                "fake-pve (README defaults), write mix",
                &seed,
                &[],
                &opts.dir.join("fake-pve-writes.out"),
            )
            .await?,
        )
    } else {
        None
    };
    let (body, headers) = first_answer(&connector, &fake).await?;
    let answer = opts.dir.join("answer");
    write_answer(&answer, &body, &headers)?;
    let bare = start_bare(&connector, opts, &answer, &fake).await?;
    let fakepve = match &opts.fakepve {
        Some(exe) => Some(start_fakepve(&connector, opts, exe).await?),
        None => None,
    };

    let readers: Vec<&Server> = [&fake, &no_log, &bare]
        .into_iter()
        .chain(fakepve.as_ref())
        .collect();
    let mut reads = vec![Measured::default(); readers.len()];
    let mut per_round: Vec<Vec<f64>> = vec![Vec::new(); readers.len()];
    let mut write_rounds = Vec::new();
    let mut writes = Measured::default();
    // Each server's processor time in its measured rounds.
    let mut cpu: Vec<Option<Cpu>> = vec![Some(Cpu::default()); readers.len()];
    let mut write_cpu = Some(Cpu::default());
    // The load generator's, in the same rounds.
    let mut client: Vec<Option<Cpu>> = vec![Some(Cpu::default()); readers.len()];
    let mut write_client = Some(Cpu::default());
    let spent = |before: Option<Cpu>, after: Option<Cpu>, total: &mut Option<Cpu>| {
        *total = match (before, after, *total) {
            (Some(b), Some(a), Some(t)) => Some(t + b.until(a)),
            _ => None,
        };
    };
    for s in &readers {
        load(&connector, s, opts, opts.warm_up, Mix::Read).await;
    }
    if let Some(w) = &writer {
        load(&connector, w, opts, opts.warm_up, Mix::Write).await;
    }
    for round in 0..opts.rounds {
        // The two fake-pve servers take turns at going first, so that
        // what the round before left behind falls on both alike.
        let mut order: Vec<usize> = (0..readers.len()).collect();
        if round % 2 == 1 {
            order.swap(0, 1);
        }
        for i in order {
            let s = readers[i];
            let (before, own) = (s.cpu(), own_cpu());
            let m = load(&connector, s, opts, opts.round, Mix::Read).await;
            per_round[i].push(m.per_second());
            add(&mut reads[i], m);
            spent(before, s.cpu(), &mut cpu[i]);
            spent(own, own_cpu(), &mut client[i]);
        }
        if let Some(w) = &writer {
            let (before, own) = (w.cpu(), own_cpu());
            let m = load(&connector, w, opts, opts.round, Mix::Write).await;
            write_rounds.push(m.per_second());
            add(&mut writes, m);
            spent(before, w.cpu(), &mut write_cpu);
            spent(own, own_cpu(), &mut write_client);
        }
    }
    let row = |s: &Server, i: usize| Row {
        name: s.name.clone(),
        measured: reads[i],
        rss: s.rss(),
        cpu: cpu[i],
        client_cpu: client[i],
        rounds: per_round[i].clone(),
    };
    let report = Report {
        connections: opts.connections,
        fake_pve: row(&fake, 0),
        no_log: row(&no_log, 1),
        bare: row(&bare, 2),
        fakepve: fakepve.as_ref().map(|f| row(f, 3)),
        writes: Row {
            name: "fake-pve (README defaults), write mix".into(),
            measured: writes,
            rss: writer.as_ref().and_then(Server::rss),
            cpu: write_cpu,
            client_cpu: write_client,
            rounds: write_rounds,
        },
        log_lines: 0,
        calibrate: opts.calibrate,
    };
    drop((fake, no_log, bare, fakepve, writer));
    let log_lines = std::fs::read_to_string(&fake_log)
        .map(|t| t.lines().filter(|l| l.contains("\" 200 ")).count())
        .unwrap_or(0);
    Ok(Report {
        log_lines,
        ..report
    })
}

fn add(total: &mut Measured, m: Measured) {
    total.ok += m.ok;
    total.failed += m.failed;
    total.elapsed += m.elapsed;
}

/// A free loopback port (bound, then let go).
fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(l.local_addr().map_err(|e| e.to_string())?.port())
}

/// Starts `cmd` with its output in `out`, and waits until that output
/// has a line containing `ready` (30 s at most).
fn spawn(mut cmd: Command, out: &Path, ready: &str) -> Result<Child, String> {
    let file = std::fs::File::create(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let err = file.try_clone().map_err(|e| e.to_string())?;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut text = String::new();
        if let Ok(mut f) = std::fs::File::open(out) {
            let _ = f.read_to_string(&mut text);
        }
        if text.contains(ready) {
            return Ok(child);
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("{cmd:?} ended ({status}): {text}"));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            return Err(format!("{cmd:?} did not start: {text}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

async fn start_fake_pve(
    connector: &TlsConnector,
    opts: &Options,
    name: &str,
    seed: &str,
    extra: &[&str],
    out: &Path,
) -> Result<Server, String> {
    let port = free_port()?;
    let mut cmd = Command::new(&opts.fake_pve);
    cmd.args(["--listen", &format!("127.0.0.1:{port}"), "--seed", seed])
        .args(extra)
        .env_remove("RUST_LOG");
    let process = Process::spawn(cmd, out, "  login: root@pam")?;
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let (cookie, csrf) = login(connector, addr, "password").await?;
    Ok(Server {
        name: name.into(),
        process,
        addr,
        path: "/api2/json/nodes/pve/qemu/100/status/current".into(),
        cookie,
        csrf,
        node: "pve".into(),
    })
}

async fn start_bare(
    connector: &TlsConnector,
    opts: &Options,
    answer: &Path,
    fake: &Server,
) -> Result<Server, String> {
    let port = free_port()?;
    let mut cmd = Command::new(&opts.this);
    cmd.args([
        "--serve-bare",
        &answer.display().to_string(),
        "--listen",
        &format!("127.0.0.1:{port}"),
    ]);
    let process = Process::spawn(cmd, &opts.dir.join("bare.out"), "listening on")?;
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    // The bare server answers whatever cookie; a first request shows it
    // serves.
    let s = Server {
        name: "bare axum, same bytes".into(),
        process,
        addr,
        path: fake.path.clone(),
        cookie: fake.cookie.clone(),
        csrf: String::new(),
        node: "pve".into(),
    };
    first_answer(connector, &s).await?;
    Ok(s)
}

async fn start_fakepve(
    connector: &TlsConnector,
    opts: &Options,
    exe: &Path,
) -> Result<Server, String> {
    let guests = opts.dir.join("fakepve-guests.json");
    std::fs::write(&guests, FAKEPVE_GUESTS).map_err(|e| e.to_string())?;
    let port = free_port()?;
    let mut cmd = Command::new(exe);
    cmd.arg(&guests).args([
        "--host",
        "127.0.0.1",
        "--port",
        &port.to_string(),
        "--time-scale",
        "0",
    ]);
    let process = Process::spawn(cmd, &opts.dir.join("fakepve.out"), "listening on")?;
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let (cookie, csrf) = login(connector, addr, "secret").await?;
    let s = Server {
        name: "fakepve 0.5 (Python)".into(),
        process,
        addr,
        path: "/api2/json/nodes/pve/qemu/100/status/current".into(),
        cookie,
        csrf,
        node: "pve".into(),
    };
    first_answer(connector, &s).await?;
    Ok(s)
}

/// Writes fake-pve's answer for the bare server: the headers as
/// `name: value` lines, an empty line, the body.
fn write_answer(path: &Path, body: &Bytes, headers: &http::HeaderMap) -> Result<(), String> {
    let mut out = Vec::new();
    for (k, v) in headers {
        out.extend_from_slice(k.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(v.as_bytes());
        out.push(b'\n');
    }
    out.push(b'\n');
    out.extend_from_slice(body);
    std::fs::write(path, out).map_err(|e| e.to_string())
}

/// Reads what [`write_answer`] wrote.
///
/// # Errors
/// An unreadable file or header.
pub fn read_answer(path: &Path) -> Result<(Bytes, http::HeaderMap), String> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let split = data
        .windows(2)
        .position(|w| w == b"\n\n")
        .ok_or("no empty line after the headers")?;
    let mut headers = http::HeaderMap::new();
    for line in data[..split].split(|b| *b == b'\n') {
        let text = std::str::from_utf8(line).map_err(|e| e.to_string())?;
        let (k, v) = text.split_once(": ").ok_or("a header without ': '")?;
        headers.append(
            http::HeaderName::from_bytes(k.as_bytes()).map_err(|e| e.to_string())?,
            http::HeaderValue::from_str(v).map_err(|e| e.to_string())?,
        );
    }
    Ok((Bytes::copy_from_slice(&data[split + 2..]), headers))
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

/// One request; the status, headers and body.
async fn send(
    s: &mut Sender,
    req: http::Request<Full<Bytes>>,
) -> Result<(http::StatusCode, http::HeaderMap, Bytes), String> {
    s.ready().await.map_err(|e| e.to_string())?;
    let resp = s.send_request(req).await.map_err(|e| e.to_string())?;
    let (status, headers) = (resp.status(), resp.headers().clone());
    let body = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    Ok((status, headers, body))
}

fn request(
    addr: SocketAddr,
    method: http::Method,
    path: &str,
    cookie: &str,
    csrf: &str,
    form: Option<String>,
) -> http::Request<Full<Bytes>> {
    let mut b = http::Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::HOST, addr.to_string());
    if !cookie.is_empty() {
        b = b.header(http::header::COOKIE, cookie);
    }
    if !csrf.is_empty() {
        b = b.header("CSRFPreventionToken", csrf);
    }
    let body = match form {
        Some(f) => {
            b = b.header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            );
            Bytes::from(f)
        }
        None => Bytes::new(),
    };
    b.body(Full::new(body)).unwrap_or_default()
}

/// Logs in as root@pam: the ticket cookie and the CSRF token.
///
/// # Errors
/// The connection or the login.
pub async fn login(
    connector: &TlsConnector,
    addr: SocketAddr,
    password: &str,
) -> Result<(String, String), String> {
    let mut s = crate::throughput::connect(connector, addr).await?;
    let form = format!("username=root%40pam&password={password}");
    let (status, _, body) = send(
        &mut s,
        request(
            addr,
            http::Method::POST,
            "/api2/json/access/ticket",
            "",
            "",
            Some(form),
        ),
    )
    .await?;
    let v: serde_json::Value =
        serde_json::from_slice(&body).map_err(|e| format!("login: {status} {e}"))?;
    let ticket = v["data"]["ticket"]
        .as_str()
        .ok_or(format!("login: {status} {v}"))?;
    let csrf = v["data"]["CSRFPreventionToken"]
        .as_str()
        .unwrap_or_default();
    Ok((format!("PVEAuthCookie={ticket}"), csrf.to_string()))
}

/// The server's answer to the read: its body and the headers the bare
/// server repeats (all but those hyper writes itself).
async fn first_answer(
    connector: &TlsConnector,
    t: &Server,
) -> Result<(Bytes, http::HeaderMap), String> {
    let mut s = crate::throughput::connect(connector, t.addr).await?;
    let (status, mut headers, body) = send(
        &mut s,
        request(t.addr, http::Method::GET, &t.path, &t.cookie, "", None),
    )
    .await?;
    if status != http::StatusCode::OK {
        return Err(format!(
            "{}: {status} {}",
            t.name,
            String::from_utf8_lossy(&body)
        ));
    }
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

/// What the connections send.
#[derive(Debug, Clone, Copy)]
enum Mix {
    /// The read, over and over.
    Read,
    /// A VM's life: create, config, start, stop, destroy.
    Write,
}

/// `connections` clients sending requests for `time`; counts answers.
async fn load(
    connector: &TlsConnector,
    t: &Server,
    opts: &Options,
    time: Duration,
    mix: Mix,
) -> Measured {
    let mut senders = Vec::with_capacity(opts.connections);
    let mut failed = 0;
    for _ in 0..opts.connections {
        match crate::throughput::connect(connector, t.addr).await {
            Ok(s) => senders.push(s),
            Err(_) => failed += 1,
        }
    }
    let started = Instant::now();
    let deadline = started + time;
    let mut tasks = tokio::task::JoinSet::new();
    // Each connection's VMIDs, apart from the others' and from the rounds
    // before (a VM left by a failed step does not stop the next one).
    static ROUND: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let round = ROUND.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    for (i, mut send_to) in senders.into_iter().enumerate() {
        let (addr, path, cookie, csrf, node) = (
            t.addr,
            t.path.clone(),
            t.cookie.clone(),
            t.csrf.clone(),
            t.node.clone(),
        );
        let max = opts.max_requests;
        let conn = u32::try_from(i).unwrap_or(0);
        tasks.spawn(async move {
            let (mut ok, mut failed) = (0u64, 0u64);
            let mut n = 0u32;
            while ok + failed < max && Instant::now() < deadline {
                let steps: Vec<http::Request<Full<Bytes>>> = match mix {
                    Mix::Read => vec![request(addr, http::Method::GET, &path, &cookie, "", None)],
                    Mix::Write => {
                        let vmid = 200_000 + (round % 8) * 100_000 + conn * 1_000 + n % 1_000;
                        n += 1;
                        let vm = format!("/api2/json/nodes/{node}/qemu/{vmid}");
                        let post = |p: String, f: Option<String>| {
                            request(addr, http::Method::POST, &p, &cookie, &csrf, f)
                        };
                        vec![
                            post(
                                format!("/api2/json/nodes/{node}/qemu"),
                                Some(format!("vmid={vmid}&name=load{vmid}&memory=512&cores=1")),
                            ),
                            request(
                                addr,
                                http::Method::PUT,
                                &format!("{vm}/config"),
                                &cookie,
                                &csrf,
                                Some("description=under%20load&cores=2".into()),
                            ),
                            post(format!("{vm}/status/start"), None),
                            post(format!("{vm}/status/stop"), None),
                            request(addr, http::Method::DELETE, &vm, &cookie, &csrf, None),
                        ]
                    }
                };
                for req in steps {
                    match send(&mut send_to, req).await {
                        Ok((status, _, _)) if status == http::StatusCode::OK => ok += 1,
                        _ => {
                            failed += 1;
                            if send_to.is_closed() {
                                return (ok, failed);
                            }
                        }
                    }
                }
            }
            (ok, failed)
        });
    }
    Measured::gather(tasks, failed, started).await
}

/// The bare server (`pve-throughput --serve-bare FILE --listen ADDR`):
/// answers the saved answer at every path, behind the same stack as
/// fake-pve, until killed.
///
/// # Errors
/// When the answer cannot be read or the address bound.
pub async fn serve_bare(answer: &Path, listen: SocketAddr) -> Result<(), String> {
    let (body, headers) = read_answer(answer)?;
    let id = fake_pve::tls::Identity::self_signed(&[]).map_err(|e| e.to_string())?;
    let (addr, _stop) = crate::throughput::serve_bare_at(&id, body, headers, listen).await?;
    println!("bare server listening on {addr}");
    std::future::pending::<()>().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, ok: u64) -> Row {
        rounds(name, ok, &[])
    }

    /// A row with the rates of its rounds.
    fn rounds(name: &str, ok: u64, each: &[f64]) -> Row {
        Row {
            name: name.into(),
            measured: Measured {
                ok,
                failed: 0,
                elapsed: Duration::from_secs(1),
            },
            rss: None,
            cpu: Some(Cpu {
                user: Duration::from_millis(ok / 200),
                system: Duration::from_millis(ok / 200),
            }),
            client_cpu: Some(Cpu {
                user: Duration::from_millis(ok / 100),
                system: Duration::ZERO,
            }),
            rounds: each.to_vec(),
        }
    }

    #[test]
    fn the_report_states_each_target_and_its_verdict() {
        let report = Report {
            connections: 64,
            fake_pve: row("fake-pve (README defaults)", 20_000),
            no_log: row("fake-pve --access-log off", 20_000),
            bare: row("bare axum, same bytes", 40_000),
            fakepve: Some(row("fakepve 0.5 (Python)", 1_000)),
            writes: row("fake-pve (README defaults), write mix", 10_000),
            log_lines: 20_000,
            calibrate: false,
        };
        let table = report.table();
        for line in [
            "| bare axum, same bytes | 40000 | 40000 | 10.0 µs (5.0 in the kernel) | 10.0 µs | 0 | - |",
            "- fake-pve with its defaults reaches 50 % of the bare server (target 75 %): FAIL",
            "- the access log (20000 lines written) costs 0.0 % of the throughput (target under 5 %): PASS",
            "- fake-pve answers 20.0 times as many reads as fakepve (target 12x): PASS",
            "- the write mix reaches 50 % of the reads' throughput (target 50 %): PASS",
            "Overall: FAIL",
        ] {
            assert!(table.contains(line), "{line}\nnot in\n{table}");
        }
        assert!(!report.passed());
    }

    /// Each comparison names how far its rounds' own ratios spread; the
    /// noise check states the difference between two servers alike and
    /// never passes.
    #[test]
    fn the_report_states_the_rounds_spread_and_the_noise_check() {
        let mut report = Report {
            connections: 64,
            fake_pve: rounds("fake-pve (README defaults)", 40_000, &[40_000.0, 36_000.0]),
            no_log: rounds("fake-pve --access-log off", 40_000, &[39_990.0, 40_000.0]),
            bare: rounds("bare axum, same bytes", 50_000, &[50_000.0, 40_000.0]),
            fakepve: Some(rounds("fakepve 0.5 (Python)", 2_000, &[2_000.0, 4_000.0])),
            writes: rounds(
                "fake-pve (README defaults), write mix",
                24_000,
                &[24_000.0, 18_000.0],
            ),
            log_lines: 40_000,
            calibrate: false,
        };
        let table = report.table();
        for line in [
            "- fake-pve with its defaults reaches 80 % of the bare server (rounds: 80 to 90 %) (target 75 %): PASS",
            "- the access log (40000 lines written) costs 0.0 % of the throughput (rounds: 0 to 10 %) (target under 5 %): PASS",
            "- fake-pve answers 20.0 times as many reads as fakepve (rounds: 9.0 to 20.0) (target 12x): PASS",
            "- the write mix reaches 60 % of the reads' throughput (rounds: 50 to 60 %) (target 50 %): PASS",
            "Overall: PASS",
        ] {
            assert!(table.contains(line), "{line}\nnot in\n{table}");
        }
        assert!(report.passed());
        report.calibrate = true;
        report.no_log.name = "fake-pve (README defaults), a second one".into();
        let table = report.table();
        assert!(
            table.contains("- noise check: two servers alike, both with the README's defaults, differ by 0.0 % (rounds: 0 to 10 %); the access log's comparison cannot tell apart less than that"),
            "{table}"
        );
        assert!(table.contains("Overall: FAIL"), "{table}");
        assert!(!report.passed());
    }

    #[test]
    fn a_server_s_processor_time_is_read_from_proc() {
        let dir = std::env::temp_dir().join(format!("pve-throughput-cpu-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory");
        let mut cmd = Command::new("sh");
        // Ready at once, then busy for a while, then idle.
        cmd.args([
            "-c",
            "echo ready; i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; echo busy; sleep 30",
        ]);
        let p = Process::spawn(cmd, &dir.join("out"), "ready").expect("it starts");
        let start = p.cpu().expect("its processor time");
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !std::fs::read_to_string(dir.join("out"))
            .unwrap_or_default()
            .contains("busy")
        {
            assert!(std::time::Instant::now() < deadline, "the loop ends");
            std::thread::sleep(Duration::from_millis(20));
        }
        let after = p.cpu().expect("its processor time");
        assert!(after.total() > start.total(), "{start:?} then {after:?}");
        let row = Row {
            name: "sh".into(),
            measured: Measured {
                ok: 1000,
                failed: 0,
                elapsed: Duration::from_secs(1),
            },
            rss: p.rss(),
            cpu: Some(start.until(after)),
            client_cpu: own_cpu(),
            rounds: Vec::new(),
        };
        let us = row.cpu_per_request_us().expect("a figure");
        let spent = start.until(after);
        assert!((us - spent.total().as_secs_f64() * 1000.0).abs() < 1e-6);
        let sys = row.system_per_request_us().expect("a figure");
        assert!((sys - spent.system.as_secs_f64() * 1000.0).abs() < 1e-6);
        assert!(sys <= us);
        // The load generator's own time is read the same way: it grows
        // while this process works.
        assert!(row.client_per_request_us().is_some());
        let mine = own_cpu().expect("this process's processor time");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let mut n = 0u64;
        while own_cpu().is_some_and(|c| c.total() <= mine.total()) {
            assert!(std::time::Instant::now() < deadline, "own time grows");
            n = std::hint::black_box(n.wrapping_add(1));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
