//! `pve-throughput`: fake-pve's throughput as users run it, next to a
//! bare server on the same stack and to the Python fake `fakepve`, each a
//! process of its own, measured in one run (PERFORMANCE.md); with
//! `--in-process`, the earlier comparison of fake-pve's request path
//! with a bare server, both inside this process.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

/// The allocator the fake-pve binary uses, for the bare server too.
#[global_allocator]
static ALLOC: fake_pve_alloc::Allocator = fake_pve_alloc::Allocator;

/// Compares fake-pve's throughput with a bare server's and fakepve's.
#[derive(Parser, Debug)]
#[command(name = "pve-throughput", version)]
struct Args {
    /// Concurrent keep-alive connections.
    #[arg(long, default_value_t = 64)]
    connections: usize,
    /// Measured rounds per server (alternating; the two fake-pve read
    /// servers take turns at going first, so an even number weighs them
    /// alike).
    #[arg(long, default_value_t = 10)]
    rounds: u32,
    /// Seconds per round (short rounds, many of them: the machine's
    /// speed drifts less between two servers' turns).
    #[arg(long, default_value_t = 2)]
    round_secs: u64,
    /// Bound of requests per connection and round.
    #[arg(long, default_value_t = 1_000_000)]
    max_requests: u64,
    /// The `fake-pve` binary (default: the one beside this binary, built
    /// by `cargo build --release -p fake-pve`).
    #[arg(long)]
    fake_pve: Option<PathBuf>,
    /// The `fakepve` executable to compare with (`ci/setup-fakepve`
    /// installs it; default: the project's virtualenv's, when there).
    #[arg(long)]
    fakepve: Option<PathBuf>,
    /// Leave fakepve out.
    #[arg(long)]
    no_fakepve: bool,
    /// Leave the write mix out (the run then cannot pass).
    #[arg(long)]
    no_writes: bool,
    /// Noise check: run the second read server with the README's
    /// defaults too, so that the access log's comparison measures two
    /// servers alike (the run then cannot pass).
    #[arg(long)]
    calibrate: bool,
    /// Where the servers' output goes.
    #[arg(long, default_value = "target/throughput")]
    dir: PathBuf,
    /// The earlier comparison, both servers inside this process.
    #[arg(long)]
    in_process: bool,
    /// Serve the bare server with the answer saved in FILE (used by the
    /// comparison itself).
    #[arg(long, value_name = "FILE")]
    serve_bare: Option<PathBuf>,
    /// With --serve-bare: where to listen.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
}

fn main() -> ExitCode {
    // The bare server's allocator is set as fake-pve's, before the
    // runtime starts its threads.
    fake_pve_alloc::configure();
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(run(Args::parse())),
        Err(e) => pve_loadtest::finish("pve-throughput", Err(e.into())),
    }
}

async fn run(a: Args) -> ExitCode {
    if let Some(answer) = &a.serve_bare {
        let served = pve_loadtest::side_by_side::serve_bare(answer, a.listen).await;
        return pve_loadtest::finish("pve-throughput", served.map(|()| (String::new(), true)));
    }
    let round = Duration::from_secs(a.round_secs.clamp(1, 600));
    if a.in_process {
        let opts = pve_loadtest::throughput::Options {
            connections: a.connections.max(1),
            rounds: a.rounds.max(1),
            round,
            max_requests: a.max_requests,
            ..pve_loadtest::throughput::Options::default()
        };
        let r = pve_loadtest::throughput::compare(&opts).await;
        return pve_loadtest::finish("pve-throughput", r.map(|r| (r.table(), r.passed())));
    }
    let this = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("pve-throughput"));
    let fake_pve = a
        .fake_pve
        .clone()
        .unwrap_or_else(|| this.with_file_name("fake-pve"));
    if !fake_pve.exists() {
        eprintln!(
            "pve-throughput: no fake-pve binary at {} (cargo build --release -p fake-pve, or --fake-pve)",
            fake_pve.display()
        );
        return ExitCode::from(2);
    }
    let venv = std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".cache/fake-pve/venv/bin/fakepve"))
        .filter(|p| p.exists());
    let fakepve = if a.no_fakepve {
        None
    } else {
        a.fakepve.clone().or(venv)
    };
    let opts = pve_loadtest::side_by_side::Options {
        connections: a.connections.max(1),
        rounds: a.rounds.max(1),
        round,
        max_requests: a.max_requests,
        warm_up: Duration::from_secs(1),
        fake_pve,
        this,
        fakepve,
        dir: a.dir.clone(),
        writes: !a.no_writes,
        calibrate: a.calibrate,
    };
    let r = pve_loadtest::side_by_side::run(&opts).await;
    pve_loadtest::finish("pve-throughput", r.map(|r| (r.table(), r.passed())))
}
