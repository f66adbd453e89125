//! `pve-loadtest`: the documented per-operation latency table against an
//! in-process fake-pve (any profile) or any PVE at a URL.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use pve_loadtest::{Auth, Options, Target};

/// Goose load tests of PVE operations, compared with the documented
/// VirtRigaud load-test table (PASS within 10 % of p50 and p95).
#[derive(Parser, Debug)]
#[command(name = "pve-loadtest", version)]
struct Args {
    /// Latency profile of the in-process fake-pve: instant, documented, or
    /// a YAML profile file.
    #[arg(long, default_value = "documented")]
    profile: String,
    /// Emulated seconds per real second (in-process fake-pve; with --url,
    /// the scale the target runs with). Ignored by `instant`.
    #[arg(long, default_value_t = 5.0)]
    time_scale: f64,
    /// Task status polling interval, emulated milliseconds.
    #[arg(long, default_value_t = 20.0)]
    poll_ms: f64,
    /// Concurrent users, spread over the scenarios (7 scenarios).
    #[arg(long, default_value_t = 14)]
    users: usize,
    /// Bound of the load in wall-clock seconds.
    #[arg(long, default_value_t = 60)]
    run_time: u64,
    /// Bound of scenario iterations per user (run-time still bounds it).
    #[arg(long)]
    iterations: Option<usize>,
    /// Only these scenarios (create-vm, power, describe, reconfigure,
    /// snapshot, clone, operator); repeatable.
    #[arg(long = "scenario")]
    scenarios: Vec<String>,
    /// An external target instead: https://HOST:8006 (loopback in tests).
    #[arg(long, requires = "auth")]
    url: Option<String>,
    /// API token for --url: USER@REALM!TOKENID=SECRET.
    #[arg(long, env = "PVE_LOADTEST_TOKEN", group = "auth")]
    token: Option<String>,
    /// User for --url (each goose user logs in and uses a ticket).
    #[arg(long, group = "auth", requires = "password")]
    username: Option<String>,
    /// Password for --username.
    #[arg(long, env = "PVE_LOADTEST_PASSWORD")]
    password: Option<String>,
    /// Node to create guests on.
    #[arg(long, default_value = "pve")]
    node: String,
    /// Storage of the guests' disks (supports snapshots and linked clones).
    #[arg(long, default_value = "local-lvm")]
    storage: String,
    /// First VMID to use.
    #[arg(long, default_value_t = 900_000)]
    vmid_base: u32,
    /// Directory for goose's report.html, report.json, report.md and the
    /// table (table.md).
    #[arg(long, default_value = "target/loadtest-report")]
    report_dir: PathBuf,
    /// Print goose's own metrics and error summary too.
    #[arg(long)]
    goose_metrics: bool,
    /// The in-process fake-pve keeps its world in this directory (to
    /// measure what `--data-dir` costs).
    #[arg(long, conflicts_with = "url")]
    data_dir: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let a = Args::parse();
    let target = match a.url {
        Some(url) => Target::External {
            url,
            auth: match (a.token, a.username, a.password) {
                (Some(t), _, _) => Auth::Token(t),
                (None, Some(username), Some(password)) => Auth::Password { username, password },
                _ => {
                    eprintln!("pve-loadtest: --url needs --token or --username and --password");
                    return ExitCode::from(2);
                }
            },
        },
        None => Target::InProcess { profile: a.profile },
    };
    let opts = Options {
        target,
        time_scale: a.time_scale,
        poll_ms: a.poll_ms,
        users: a.users,
        run_time: a.run_time,
        iterations: a.iterations,
        scenarios: a.scenarios,
        node: a.node,
        storage: a.storage,
        vmid_base: a.vmid_base,
        report_dir: Some(a.report_dir.clone()),
        goose_metrics: a.goose_metrics,
        data_dir: a.data_dir.clone(),
    };
    match pve_loadtest::run(&opts).await {
        Ok(out) => {
            println!("{}", out.table());
            println!(
                "reports: {}/report.{{html,json,md}}, table.md",
                a.report_dir.display()
            );
            if out.passed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("pve-loadtest: {e}");
            ExitCode::from(2)
        }
    }
}
