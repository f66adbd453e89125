//! The `fake-pve` binary: parses flags (each with a `FAKE_PVE_*`
//! environment twin) and runs the emulator until Ctrl-C or SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use fake_pve::{AccessLog, LatencyError};
use fake_pve::{FakePve, Latency, PveVersion, Scenario, ScenarioError, Tls};

/// Many small allocations per request (JSON values): mimalloc serves them
/// faster than the system allocator (`fake_pve_alloc` says how it is set).
#[global_allocator]
static ALLOC: fake_pve_alloc::Allocator = fake_pve_alloc::Allocator;

/// A Proxmox VE API emulator.
#[derive(Debug, Parser)]
#[command(
    name = "fake-pve",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
struct Args {
    /// A subcommand; without one, fake-pve serves.
    #[command(subcommand)]
    cmd: Option<fake_pve::twin::cli::Cmd>,
    /// Address to listen on.
    #[arg(long, env = "FAKE_PVE_LISTEN", default_value = "127.0.0.1:8006")]
    listen: SocketAddr,
    /// Serve plain HTTP instead of HTTPS.
    #[arg(long, env = "FAKE_PVE_HTTP")]
    http: bool,
    /// PEM certificate chain (with --key); a self-signed one is made otherwise.
    #[arg(long, env = "FAKE_PVE_CERT", requires = "key")]
    cert: Option<PathBuf>,
    /// PEM private key (with --cert).
    #[arg(long, env = "FAKE_PVE_KEY", requires = "cert")]
    key: Option<PathBuf>,
    /// root@pam's password.
    #[arg(long, env = "FAKE_PVE_ROOT_PASSWORD", default_value = "password")]
    root_password: String,
    /// Scenario file (YAML) describing the cluster; a fresh single node otherwise.
    #[arg(long, env = "FAKE_PVE_SEED")]
    seed: Option<PathBuf>,
    /// PVE release to impersonate: 8.4, 9.1 or 9.2.
    #[arg(long, env = "FAKE_PVE_PVE_VERSION", default_value = "9.2", value_parser = parse_version)]
    pve_version: PveVersion,
    /// Seconds to wait before answering a failed authentication (PVE: 3).
    #[arg(long, env = "FAKE_PVE_AUTH_FAILURE_DELAY", default_value = "3")]
    auth_failure_delay: f64,
    /// Latency profile: `instant` (tasks end at once), `documented` (PVE's
    /// published timings) or a YAML file.
    #[arg(long, env = "FAKE_PVE_PROFILE", default_value = "instant")]
    profile: String,
    /// Emulated seconds per real second (speeds up or slows down tasks).
    #[arg(long, env = "FAKE_PVE_TIME_SCALE")]
    time_scale: Option<f64>,
    /// Task durations in milliseconds over the profile: a default (`500`)
    /// or per task type (`qmstart=800`); repeat or separate with commas.
    #[arg(long, env = "FAKE_PVE_TASK_DURATION", value_delimiter = ',')]
    task_duration: Vec<String>,
    /// Seed of every random draw (fault probabilities, generated MAC
    /// addresses, UUIDs, task durations) and of the signing keys and token
    /// secrets, for repeatable runs: deterministic on purpose. Without it,
    /// all come from the operating system's random source.
    #[arg(long, env = "FAKE_PVE_RANDOM_SEED")]
    random_seed: Option<u64>,
    /// Keep the world in this directory: reloaded at start, every change
    /// journaled before it is answered.
    #[arg(long, env = "FAKE_PVE_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// With --data-dir: when journal writes reach the disk: always (before
    /// every answer), interval (about once a second) or never.
    #[arg(
        long,
        env = "FAKE_PVE_FSYNC",
        default_value = "interval",
        requires = "data_dir"
    )]
    fsync: fake_pve::Fsync,
    /// Where the access log goes (one line per request, as pveproxy's
    /// access.log): `-` for the standard output, `off`, or a file to
    /// append to.
    #[arg(long, env = "FAKE_PVE_ACCESS_LOG", default_value = "-")]
    access_log: String,
    /// Connections served at once; one more is closed as soon as it is
    /// accepted. Default: the open-files limit (raised to the system's
    /// hard limit at start) less 64, at most 16384.
    #[arg(long, env = "FAKE_PVE_MAX_CONNECTIONS", value_parser = clap::value_parser!(u32).range(1..))]
    max_connections: Option<u32>,
}

/// Why the binary does not start, printed after `fake-pve: `.
#[derive(Debug, thiserror::Error)]
enum StartError {
    /// `--pve-version` names no release fake-pve impersonates.
    #[error("unsupported PVE version '{0}' (use 8.4, 9.1 or 9.2)")]
    Version(String),
    /// `--profile` is no built-in profile and no readable file.
    #[error("--profile {0}: not instant, documented or a readable file: {1}")]
    ProfileFile(String, #[source] std::io::Error),
    /// The `--profile` file is no latency profile.
    #[error("--profile {0}: {1}")]
    Profile(String, #[source] LatencyError),
    /// A `--task-duration` that is neither `MS` nor `TYPE=MS`.
    #[error("invalid task duration '{0}' (use MS or TYPE=MS)")]
    TaskDuration(String),
    /// The latency settings together do not hold.
    #[error("latency: {0}")]
    Latency(#[source] LatencyError),
    /// The `--seed` scenario does not load.
    #[error("scenario {0}")]
    Scenario(#[source] ScenarioError),
    /// `--auth-failure-delay` out of range.
    #[error("--auth-failure-delay must be between 0 and 3600 seconds")]
    AuthFailureDelay,
    /// The access log cannot be opened.
    #[error("access log {0}: {1}")]
    AccessLog(String, #[source] std::io::Error),
    /// The server does not start.
    #[error(transparent)]
    Server(#[from] fake_pve::Error),
}

fn parse_version(s: &str) -> Result<PveVersion, StartError> {
    PveVersion::parse(s).ok_or_else(|| StartError::Version(s.to_string()))
}

fn parse_latency(args: &Args) -> Result<Latency, StartError> {
    let mut l = match Latency::builtin(&args.profile) {
        Some(l) => l,
        None => {
            let text = std::fs::read_to_string(&args.profile)
                .map_err(|e| StartError::ProfileFile(args.profile.clone(), e))?;
            Latency::from_yaml(&text).map_err(|e| StartError::Profile(args.profile.clone(), e))?
        }
    };
    for item in &args.task_duration {
        let bad = || StartError::TaskDuration(item.clone());
        match item.split_once('=') {
            Some((kind, ms)) => l.set_task_ms(kind.trim(), ms.trim().parse().map_err(|_| bad())?),
            None => {
                l.default_ms = item.trim().parse().map_err(|_| bad())?;
                l.default_task = None;
            }
        }
    }
    if let Some(t) = args.time_scale {
        l.time_scale = t;
    }
    l.seed = args.random_seed.unwrap_or_else(rand::random);
    l.check().map_err(StartError::Latency)?;
    Ok(l)
}

fn main() -> std::process::ExitCode {
    // Before the runtime starts its threads.
    fake_pve_alloc::configure();
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => {
            let code = rt.block_on(serve());
            // Work left on blocking threads (a large document's parse
            // whose request the shutdown dropped) is not waited for.
            rt.shutdown_timeout(std::time::Duration::from_secs(1));
            code
        }
        Err(e) => {
            eprintln!("fake-pve: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn serve() -> std::process::ExitCode {
    let mut args = Args::parse();
    if let Some(cmd) = args.cmd.take() {
        // Warnings go to the standard error: a scenario may go to the output.
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_env_filter(
                tracing_subscriber::EnvFilter::try_from_default_env()
                    .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
            )
            .init();
        return fake_pve::twin::cli::run(cmd).await;
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    // Each connection is a file descriptor: allow as many as the system
    // lets this process have (many clients may keep connections open).
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    match run(args).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fake-pve: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), StartError> {
    let scenario = match &args.seed {
        Some(path) => Scenario::load(path).map_err(StartError::Scenario)?,
        None => Scenario::default_single_node(),
    };
    let tls = match (args.http, &args.cert, &args.key) {
        (true, _, _) => Tls::Off,
        (false, Some(cert), Some(key)) => Tls::Pem {
            cert: cert.clone(),
            key: key.clone(),
        },
        _ => Tls::SelfSigned,
    };
    if !(0.0..=3600.0).contains(&args.auth_failure_delay) {
        return Err(StartError::AuthFailureDelay);
    }
    let mut builder = FakePve::builder();
    if let Some(seed) = args.random_seed {
        builder = builder.random_seed(seed);
    }
    let access_log = match args.access_log.as_str() {
        "off" => None,
        "-" => Some(AccessLog::stdout()),
        path => Some(AccessLog::file(std::path::Path::new(path))),
    };
    if let Some(log) = access_log {
        let log = log.map_err(|e| StartError::AccessLog(args.access_log.clone(), e))?;
        builder = builder.access_log(log);
    }
    if let Some(dir) = &args.data_dir {
        builder = builder.data_dir(dir).fsync(args.fsync);
    }
    if let Some(n) = args.max_connections {
        builder = builder.max_connections(usize::try_from(n).unwrap_or(usize::MAX));
    }
    let pve = builder
        .listen(args.listen)
        .tls(tls)
        .root_password(args.root_password.clone())
        .pve_version(args.pve_version)
        .auth_failure_delay(Duration::from_secs_f64(args.auth_failure_delay))
        .latency(parse_latency(&args)?)
        .scenario(scenario)
        .start()
        .await?;

    let url = pve.url();
    let insecure = if pve.fingerprint().is_some() {
        " -k"
    } else {
        ""
    };
    println!(
        "fake-pve: Proxmox VE {} API at {}/api2/json",
        args.pve_version.version(),
        url
    );
    if let Some(fp) = pve.fingerprint() {
        println!("  TLS fingerprint (SHA-256): {fp}");
    }
    if let Some(dir) = &args.data_dir {
        println!("  data directory: {}", dir.display());
    }
    println!("  login: root@pam / {}", args.root_password);
    println!("  dashboard: {url}/");
    println!("  try:");
    println!(
        "    TICKET=$(curl -s{insecure} -d username=root@pam -d password={} {url}/api2/json/access/ticket | sed 's/.*\"ticket\":\"\\([^\"]*\\)\".*/\\1/')",
        args.root_password
    );
    println!("    curl -s{insecure} -b \"PVEAuthCookie=$TICKET\" {url}/api2/json/version");
    tracing::info!("ready");

    shutdown_signal().await;
    tracing::info!("shutting down");
    pve.shutdown().await;
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}
