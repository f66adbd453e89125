//! `pve-connections`: the `fake-pve` binary holding many idle TLS
//! keep-alive connections at once (default 10,000), each answered before
//! and after the hold; reports the server's memory per idle connection
//! (PERFORMANCE.md).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

#[global_allocator]
static ALLOC: fake_pve_alloc::Allocator = fake_pve_alloc::Allocator;

/// Holds many keep-alive connections to fake-pve.
#[derive(Parser, Debug)]
#[command(name = "pve-connections", version)]
struct Args {
    /// Connections held at once (at most 20,000).
    #[arg(long, default_value_t = 10_000)]
    connections: usize,
    /// Seconds they stay idle.
    #[arg(long, default_value_t = 5)]
    hold_secs: u64,
    /// The `fake-pve` binary (default: the one beside this binary).
    #[arg(long)]
    fake_pve: Option<PathBuf>,
    /// Where the server's output goes.
    #[arg(long, default_value = "target/throughput")]
    dir: PathBuf,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let a = Args::parse();
    let this = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("pve-connections"));
    let fake_pve = a
        .fake_pve
        .unwrap_or_else(|| this.with_file_name("fake-pve"));
    let opts = pve_loadtest::connections::Options {
        connections: a.connections,
        hold: Duration::from_secs(a.hold_secs.min(60)),
        fake_pve,
        dir: a.dir,
    };
    let r = pve_loadtest::connections::run(&opts).await;
    pve_loadtest::finish("pve-connections", r.map(|r| (r.table(), r.passed())))
}
