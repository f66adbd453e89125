//! Plays every feature of `features/` against the target: a fresh
//! in-process fake-pve per scenario by default, or the real cluster that
//! `PVE_ENDPOINT` and credentials name (or `--target real`). Fails on any
//! failed, skipped or undefined step; prints the counts.
//!
//! `cargo test -p conformance --test features -- [--target fake|real]
//! [--junit FILE] [--pve-version 8.4|9.1] [--destructive] [--skip-slow]
//! [cucumber flags: --name REGEX, --tags EXPR, -v ...]`

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let features = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../features"));
    let args: Vec<String> = std::env::args().collect();
    let opts = match conformance::Options::from_args(features, &args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("conformance: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("conformance: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(conformance::run(opts)) {
        Ok(summary) => {
            for p in &summary.cleanup_problems {
                eprintln!("conformance: {p}");
            }
            println!("{}", conformance::runner::summary_line(&summary));
            if summary.failed() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("conformance: {e}");
            ExitCode::FAILURE
        }
    }
}
