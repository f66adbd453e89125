//! `pve-scale`: the memory and start time of a world of 1,000,000 guests
//! on 1,000 nodes, and single-VM call latency there next to a world of
//! ten guests.

use std::process::ExitCode;

use cap::Cap;
use clap::Parser;
use pve_loadtest::scale::{Options, measure};

/// The allocator of the `fake-pve` binary (mimalloc), counting what is
/// allocated.
#[global_allocator]
static ALLOC: Cap<fake_pve_alloc::Allocator> = Cap::new(fake_pve_alloc::Allocator, usize::MAX);

/// Measures fake-pve with many guests.
#[derive(Parser, Debug)]
#[command(name = "pve-scale", version)]
struct Args {
    /// Nodes of the big world.
    #[arg(long, default_value_t = 1_000)]
    nodes: u32,
    /// Guests of the big world.
    #[arg(long, default_value_t = 1_000_000)]
    vms: u32,
    /// Requests per call and world.
    #[arg(long, default_value_t = 2_000)]
    requests: u32,
}

fn main() -> ExitCode {
    // fake-pve's allocator as its binary sets it, before the runtime
    // starts its threads.
    fake_pve_alloc::configure();
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(run(Args::parse())),
        Err(e) => pve_loadtest::finish("pve-scale", Err(e.into())),
    }
}

async fn run(a: Args) -> ExitCode {
    let opts = Options {
        nodes: a.nodes.clamp(1, 10_000),
        vms: a.vms.clamp(1, 10_000_000),
        requests: a.requests.clamp(1, 1_000_000),
        live_bytes: || Some(ALLOC.allocated()),
    };
    let r = measure(&opts).await;
    pve_loadtest::finish("pve-scale", r.map(|r| (r.table(), r.passed())))
}
