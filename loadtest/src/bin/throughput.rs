//! `pve-throughput`: fake-pve's `GET status/current` throughput over TLS
//! keep-alive with a ticket, next to a bare axum server answering the same
//! bytes in the same run (target: at least 60 %).

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

/// The allocator the fake-pve binary uses, for both servers.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;
use pve_loadtest::throughput::{Options, compare};

/// Compares fake-pve's request path with a bare axum server.
#[derive(Parser, Debug)]
#[command(name = "pve-throughput", version)]
struct Args {
    /// Concurrent keep-alive connections.
    #[arg(long, default_value_t = 64)]
    connections: usize,
    /// Measured rounds per server (alternating).
    #[arg(long, default_value_t = 3)]
    rounds: u32,
    /// Seconds per round.
    #[arg(long, default_value_t = 5)]
    round_secs: u64,
    /// Bound of requests per connection and round.
    #[arg(long, default_value_t = 1_000_000)]
    max_requests: u64,
}

#[tokio::main]
async fn main() -> ExitCode {
    let a = Args::parse();
    let opts = Options {
        connections: a.connections.max(1),
        rounds: a.rounds.max(1),
        round: Duration::from_secs(a.round_secs.clamp(1, 600)),
        max_requests: a.max_requests,
        ..Options::default()
    };
    match compare(&opts).await {
        Ok(r) => {
            print!("{}", r.table());
            if r.passed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("pve-throughput: {e}");
            ExitCode::from(2)
        }
    }
}
