//! Running the load test: the target started or reached, goose
//! configured with the scenarios asked for, the samples made a table.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use goose::config::GooseConfiguration;
use goose::prelude::*;

use crate::Error;
use crate::options::{Auth, Options, Target};
use crate::scenarios::{Ctx, scenarios};
use crate::table::{Measured, Outcome, ROWS, TOLERANCE, deviation, percentile};

/// Runs the load test.
///
/// # Errors
/// fake-pve could not start, goose refused the configuration, or the run
/// overran its bound.
pub async fn run(opts: &Options) -> Result<Outcome, Error> {
    if !(opts.time_scale.is_finite() && opts.time_scale > 0.0) {
        return Err(Error::TimeScale);
    }
    if opts.users == 0 || opts.run_time == 0 {
        return Err(Error::NoLoad);
    }
    let mut fake = None;
    let (host, auth, profile, scale) = match &opts.target {
        Target::InProcess { profile } => {
            let mut latency = match fake_pve::Latency::builtin(profile) {
                Some(l) => l,
                None => {
                    let text =
                        std::fs::read_to_string(profile).map_err(|source| Error::ProfileFile {
                            profile: profile.clone(),
                            source,
                        })?;
                    fake_pve::Latency::from_yaml(&text).map_err(|source| Error::Profile {
                        profile: profile.clone(),
                        source,
                    })?
                }
            };
            // instant: nothing to scale; the measured figures are real.
            let scale = if latency.name == "instant" {
                1.0
            } else {
                opts.time_scale
            };
            latency.time_scale = scale;
            let mut b = fake_pve::FakePve::builder();
            if let Some(dir) = &opts.data_dir {
                b = b.data_dir(dir);
            }
            let pve = b
                .listen(SocketAddr::from(([127, 0, 0, 1], 0)))
                .auth_failure_delay(Duration::ZERO)
                .latency(latency.clone())
                .start()
                .await?;
            let host = pve.url();
            fake = Some(pve);
            let auth = Auth::Password {
                username: "root@pam".into(),
                password: "password".into(),
            };
            (host, auth, latency.name, scale)
        }
        Target::External { url, auth } => {
            let host = url
                .trim_end_matches('/')
                .trim_end_matches("/api2/json")
                .to_string();
            (host, auth.clone(), "external".to_string(), opts.time_scale)
        }
    };
    let result = attack(opts, host, auth, profile, scale).await;
    if let Some(pve) = fake {
        pve.shutdown().await;
    }
    result
}

async fn attack(
    opts: &Options,
    host: String,
    auth: Auth,
    profile: String,
    scale: f64,
) -> Result<Outcome, Error> {
    let started = Instant::now();
    let run_time = Duration::from_secs(opts.run_time);
    let ctx = Arc::new(Ctx {
        node: opts.node.clone(),
        storage: opts.storage.clone(),
        auth,
        poll: Duration::from_secs_f64((opts.poll_ms / scale / 1000.0).max(0.000_5)),
        task_timeout: Duration::from_secs(30).min(run_time + Duration::from_secs(10)),
        deadline: started + run_time,
        next_vmid: AtomicU32::new(opts.vmid_base),
        snap: AtomicU64::new(0),
        samples: Mutex::new(vec![Vec::new(); ROWS.len()]),
    });

    let mut config = GooseConfiguration::default();
    config.host = Some(host);
    config.users = Some(opts.users);
    config.increase_rate = Some(opts.users.to_string());
    match opts.iterations {
        Some(n) => config.iterations = Some(n),
        None => {
            config.run_time = Some(opts.run_time.to_string());
            config.no_reset_metrics = true;
        }
    }
    config.accept_invalid_certs = true;
    config.no_telnet = true;
    config.quiet = 1;
    config.no_print_metrics = !opts.goose_metrics;
    config.no_error_summary = !opts.goose_metrics;
    if let Some(dir) = &opts.report_dir {
        std::fs::create_dir_all(dir).map_err(Error::file(dir))?;
        config.report_file = ["report.html", "report.json", "report.md"]
            .iter()
            .map(|f| dir.join(f).display().to_string())
            .collect();
    }
    let mut goose = GooseAttack::initialize_with_config(config)?;
    let wanted = |s: &Scenario| {
        opts.scenarios.is_empty()
            || opts
                .scenarios
                .iter()
                .any(|w| w.eq_ignore_ascii_case(&s.name) || w.eq_ignore_ascii_case(&s.machine_name))
    };
    let mut any = false;
    for s in scenarios(&ctx)? {
        if wanted(&s) {
            goose = goose.register_scenario(s);
            any = true;
        }
    }
    if !any {
        return Err(Error::NoScenario(opts.scenarios.clone()));
    }
    // Setup and teardown add to the bound: generous, but bounded.
    let hard = run_time * 3 + Duration::from_secs(60);
    let metrics = tokio::time::timeout(hard, goose.execute())
        .await
        .map_err(|_| Error::Overran(hard))??;
    let seconds = started.elapsed().as_secs_f64().min(run_time.as_secs_f64());

    let samples = ctx.samples.lock().map_err(|_| Error::Poisoned)?.clone();
    let compare = profile != "instant";
    let emulated_min = seconds * scale / 60.0;
    let rows = ROWS
        .iter()
        .zip(samples)
        .map(|(row, s)| {
            let mut v: Vec<f64> = s.iter().map(|d| d.as_secs_f64() * 1000.0 * scale).collect();
            v.sort_by(f64::total_cmp);
            let (p50, p95) = (percentile(&v, 0.50), percentile(&v, 0.95));
            let pass = (compare && !v.is_empty()).then(|| {
                deviation(p50, row.p50_ms).abs() <= TOLERANCE
                    && deviation(p95, row.p95_ms).abs() <= TOLERANCE
            });
            Measured {
                row: *row,
                count: v.len(),
                p50_ms: p50,
                p95_ms: p95,
                ops_min: if emulated_min > 0.0 {
                    v.len() as f64 / emulated_min
                } else {
                    0.0
                },
                pass: if compare && v.is_empty() { None } else { pass },
            }
        })
        .collect();
    let (requests, failed_requests) = metrics.requests.values().fold((0, 0), |(n, f), r| {
        (n + r.success_count + r.fail_count, f + r.fail_count)
    });
    let failed_transactions = metrics
        .transactions
        .iter()
        .flatten()
        .map(|t| t.fail_count)
        .sum();
    let outcome = Outcome {
        profile,
        time_scale: scale,
        rows,
        seconds,
        requests,
        failed_requests,
        failed_transactions,
    };
    if let Some(dir) = &opts.report_dir {
        std::fs::write(dir.join("table.md"), outcome.table()).map_err(Error::file(dir))?;
    }
    Ok(outcome)
}
