//! `pve-operator`: the standalone operator.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand};

use pve_operator::standalone::{Options, Standalone, check_dir_with, status_table_with};
use pve_operator::{Operator, http};

#[derive(Parser)]
#[command(
    name = "pve-operator",
    version,
    about = "Reconciles declared machines into Proxmox VE"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Reconcile the resources of a manifest directory until stopped.
    Run {
        /// The directory of YAML manifests (standalone mode).
        #[arg(
            long,
            env = "PVE_OPERATOR_MANIFESTS",
            required_unless_present = "kubernetes"
        )]
        manifests: Option<PathBuf>,
        /// Run as a Kubernetes controller (the default inside a cluster,
        /// when no --manifests is given).
        #[arg(long, env = "PVE_OPERATOR_KUBERNETES", conflicts_with = "manifests")]
        kubernetes: bool,
        /// Periodic resync, seconds (or with an `s`/`m` suffix).
        #[arg(long, env = "RECONCILE_INTERVAL", default_value = "30s")]
        reconcile_interval: String,
        /// Reconciles at once.
        #[arg(long, env = "MAX_CONCURRENT_RECONCILES", default_value_t = 5)]
        max_concurrent_reconciles: usize,
        /// Where /metrics is served (`0` turns it off).
        #[arg(long, env = "METRICS_BIND_ADDRESS", default_value = ":8080")]
        metrics_bind_address: String,
        /// Where /healthz and /readyz are served (`0` turns it off).
        #[arg(long, env = "HEALTH_PROBE_BIND_ADDRESS", default_value = ":8081")]
        health_probe_bind_address: String,
        /// How often the directory is looked at, milliseconds.
        #[arg(long, env = "PVE_OPERATOR_POLL_MS", default_value_t = 1000)]
        poll_ms: u64,
        /// How long a document whose provider says `deleteOnRemoval:
        /// true` must stay removed before its deletion starts (seconds, or
        /// with an `s`/`m` suffix).
        #[arg(long, env = "PVE_OPERATOR_REMOVAL_GRACE", default_value = "10s")]
        removal_grace: String,
    },
    /// Print the machines of a manifest directory: phase, node, VMID, IPs.
    Status {
        /// The directory of YAML manifests (as `run`'s `--manifests`).
        #[arg(env = "PVE_OPERATOR_MANIFESTS")]
        dir: PathBuf,
    },
    /// Print the CustomResourceDefinitions (`pve-operator crd | kubectl apply -f -`).
    Crd {
        /// Write one file per CRD and a kustomization.yaml into this
        /// directory instead (`operator/config/crd`).
        #[arg(long)]
        write: Option<PathBuf>,
    },
    /// Read and validate a manifest directory without contacting PVE.
    Check {
        /// The directory of YAML manifests (as `run`'s `--manifests`).
        #[arg(env = "PVE_OPERATOR_MANIFESTS")]
        dir: PathBuf,
    },
}

/// A `RECONCILE_INTERVAL` that is not a positive number of seconds or
/// minutes.
#[derive(Debug, thiserror::Error)]
#[error("invalid duration {0:?}")]
struct InvalidDuration(String);

fn duration(s: &str) -> Result<Duration, InvalidDuration> {
    let s = s.trim();
    let (n, mult) = if let Some(m) = s.strip_suffix('m') {
        (m, 60.0)
    } else if let Some(x) = s.strip_suffix('s') {
        (x, 1.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = n.parse().map_err(|_| InvalidDuration(s.to_string()))?;
    if v <= 0.0 {
        return Err(InvalidDuration(s.to_string()));
    }
    Ok(Duration::from_secs_f64(v * mult))
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Crd { write: None } => match pve_operator::crd::yaml() {
            Ok(y) => {
                print!("{y}");
                std::process::ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("pve-operator: {e}");
                std::process::ExitCode::FAILURE
            }
        },
        Cmd::Crd { write: Some(dir) } => {
            let files = match pve_operator::crd::files() {
                Ok(f) => f,
                Err(e) => {
                    eprintln!("pve-operator: {e}");
                    return std::process::ExitCode::FAILURE;
                }
            };
            let all = files.into_iter().chain([(
                "kustomization.yaml".to_string(),
                pve_operator::crd::kustomization(),
            )]);
            for (name, text) in all {
                let path = dir.join(name);
                if let Err(e) = std::fs::write(&path, text) {
                    eprintln!("pve-operator: {}: {e}", path.display());
                    return std::process::ExitCode::FAILURE;
                }
            }
            std::process::ExitCode::SUCCESS
        }
        Cmd::Status { dir } => {
            print!("{}", status_table_with(&dir, &dialects()));
            std::process::ExitCode::SUCCESS
        }
        Cmd::Check { dir } => match check_dir_with(&dir, &dialects()) {
            Ok((list, errors)) => {
                let unreadable = !errors.is_empty();
                let mut bad = false;
                for e in &errors {
                    println!("{e}");
                }
                // The clusters `run` would find: declared, or the one
                // the PVE_* variables give.
                let env = env_cluster();
                for m in pve_operator::standalone::unknown_clusters(
                    &list,
                    env.as_ref().map(|e| e.name.as_str()),
                ) {
                    bad = true;
                    println!("{m}");
                }
                for r in &list {
                    let errors = match r {
                        pve_operator::types::Resource::Machine(m) => {
                            let name = m
                                .spec
                                .name
                                .clone()
                                .unwrap_or_else(|| m.metadata.name.clone());
                            pve_operator::validate::validate_machine(&name, &m.spec)
                        }
                        pve_operator::types::Resource::MachineSnapshot(s) => {
                            pve_operator::validate::validate_snapshot(&s.metadata.name, &s.spec)
                        }
                        pve_operator::types::Resource::MachineImage(i) => {
                            pve_operator::validate::validate_image(&i.metadata.name, &i.spec)
                        }
                        _ => Default::default(),
                    };
                    for (k, v) in &errors {
                        bad = true;
                        println!("{}: {k}: {v}", r.key());
                    }
                }
                println!("{} resources", list.len());
                if unreadable {
                    std::process::ExitCode::from(2)
                } else if bad {
                    std::process::ExitCode::FAILURE
                } else {
                    std::process::ExitCode::SUCCESS
                }
            }
            Err(e) => {
                eprintln!("pve-operator: {e}");
                std::process::ExitCode::from(2)
            }
        },
        Cmd::Run {
            manifests,
            kubernetes,
            reconcile_interval,
            max_concurrent_reconciles,
            metrics_bind_address,
            health_probe_bind_address,
            poll_ms,
            removal_grace,
        } => {
            let resync = match duration(&reconcile_interval) {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("pve-operator: RECONCILE_INTERVAL: {e}");
                    return std::process::ExitCode::from(2);
                }
            };
            let removal_grace = match duration(&removal_grace) {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("pve-operator: PVE_OPERATOR_REMOVAL_GRACE: {e}");
                    return std::process::ExitCode::from(2);
                }
            };
            let in_cluster = std::env::var_os("KUBERNETES_SERVICE_HOST").is_some();
            let manifests = match manifests {
                Some(m) if !kubernetes => m,
                _ if kubernetes || in_cluster => {
                    return run_kubernetes(
                        resync,
                        max_concurrent_reconciles,
                        &metrics_bind_address,
                        &health_probe_bind_address,
                    )
                    .await;
                }
                _ => {
                    eprintln!("pve-operator: run needs --manifests DIR or --kubernetes");
                    return std::process::ExitCode::from(2);
                }
            };
            let mut opts = Options::new(manifests);
            opts.resync = resync;
            opts.max_concurrent = max_concurrent_reconciles.max(1);
            opts.poll = Duration::from_millis(poll_ms.max(50));
            opts.removal_grace = removal_grace;
            opts.dialects = dialects();
            let op = Arc::new(Operator::new(None).with_env_cluster(env_cluster()));
            let mut sa = Standalone::new(opts, op.clone());
            if let Err(code) = serve_http(
                &op,
                &sa.health,
                &metrics_bind_address,
                &health_probe_bind_address,
            )
            .await
            {
                return code;
            }
            tracing::info!(dir = %sa.opts.dir.display(), "pve-operator started");
            sa.run(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await;
            std::process::ExitCode::SUCCESS
        }
    }
}

/// `run --kubernetes`: the controllers of [`pve_operator::kubernetes`],
/// with the same metrics and probes as standalone.
async fn run_kubernetes(
    resync: Duration,
    max_concurrent: usize,
    metrics_addr: &str,
    health_addr: &str,
) -> std::process::ExitCode {
    let op = Arc::new(Operator::new(None).with_env_cluster(env_cluster()));
    let health = Arc::new(http::Health::default());
    if let Err(code) = serve_http(&op, &health, metrics_addr, health_addr).await {
        return code;
    }
    let o = pve_operator::kubernetes::KubeOptions::from_env(resync, max_concurrent);
    tracing::info!(namespace = %o.lease_namespace, "pve-operator started on Kubernetes");
    tokio::select! {
        r = pve_operator::kubernetes::run(op, o, health) => match r {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("pve-operator: {e}");
                std::process::ExitCode::from(2)
            }
        },
        _ = tokio::signal::ctrl_c() => std::process::ExitCode::SUCCESS,
    }
}

/// Serves `/metrics` and the probes on their addresses (`0`: not served).
async fn serve_http(
    op: &Operator,
    health: &Arc<http::Health>,
    metrics_addr: &str,
    health_addr: &str,
) -> Result<(), std::process::ExitCode> {
    for (what, addr) in [("metrics", metrics_addr), ("health probes", health_addr)] {
        match http::parse_bind(addr) {
            Ok(Some(a)) => match http::serve(a, op.metrics.clone(), health.clone()).await {
                Ok((bound, _)) => tracing::info!("serving {what} on {bound}"),
                Err(e) => {
                    eprintln!("pve-operator: {what} on {a}: {e}");
                    return Err(std::process::ExitCode::from(2));
                }
            },
            Ok(None) => {}
            Err(e) => {
                eprintln!("pve-operator: {e}");
                return Err(std::process::ExitCode::from(2));
            }
        }
    }
    Ok(())
}

/// The cluster the `PVE_*` variables give (`PVE_ENDPOINT` and
/// credentials), named `PVE_CLUSTER_NAME` (default `pve`).
/// How the other systems' documents are read, from the environment.
fn dialects() -> pve_operator::dialects::Context {
    pve_operator::dialects::Context::from_env(std::env::vars())
}

fn env_cluster() -> Option<pve_operator::controller::EnvCluster> {
    let name = std::env::var("PVE_CLUSTER_NAME").unwrap_or_else(|_| "pve".into());
    let env = pve_operator::controller::EnvCluster::from_env(&name, std::env::vars());
    if let Some(e) = &env {
        tracing::info!(
            cluster = e.name.as_str(),
            "the PVE_* variables give a cluster"
        );
    }
    env
}
