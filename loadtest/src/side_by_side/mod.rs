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

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio_rustls::TlsConnector;

use crate::Error;
use crate::throughput::Measured;

mod answers;
mod load;
mod report;
mod servers;

pub use answers::{login, read_answer, serve_bare};
pub use report::{Cpu, Report, Row};
pub use servers::Process;

use answers::{first_answer, write_answer};
use load::{Mix, load};
use servers::{Server, own_cpu, start_bare, start_fake_pve, start_fakepve};

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

/// The one-VM world fake-pve serves.
const SCENARIO: &str = "vms:\n  - { vmid: 100, node: pve, name: web, status: running }\n";

/// Runs the comparison.
///
/// # Errors
/// When a server cannot start or the first answers cannot be read.
pub async fn run(opts: &Options) -> Result<Report, Error> {
    std::fs::create_dir_all(&opts.dir).map_err(Error::file(&opts.dir))?;
    let connector = TlsConnector::from(Arc::new(crate::throughput::any_certificate()?));
    let scenario = opts.dir.join("scenario.yaml");
    std::fs::write(&scenario, SCENARIO)?;
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
