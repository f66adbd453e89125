//! `pve`: a pvesh-style command line for the PVE API, configured by the
//! same `PVE_*` environment variables as the library.
//!
//! ```text
//! pve get /nodes --output-format json-pretty
//! pve create /nodes/pve/startall --force 1 --wait
//! pve set /access/users/root@pam/token/ci --comment "CI runner"
//! pve delete /access/users/root@pam/token/ci
//! pve ls /nodes/pve
//! pve usage /nodes/{node}/qemu --verbose
//! ```
//!
//! API parameters follow the path as `--name value` (or `--name=value`;
//! a bare `--name` means `1`; a repeated name sends a list). Exit status:
//! 0 on success, 1 when PVE or the network refuses, 2 for a usage or
//! configuration error.

use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use pve_client::api::tasks::{Upid, WaitOptions};
use pve_client::schema::{self, Release};
use pve_client::{Category, Client, Config, Error, Method, Params};
use serde_json::Value;

#[derive(Parser, Debug)]
#[command(
    name = "pve",
    version,
    about = "pvesh-style access to the Proxmox VE API",
    after_help = "Environment: PVE_ENDPOINT, PVE_USERNAME/PVE_PASSWORD or \
                  PVE_TOKEN_ID/PVE_TOKEN_SECRET, PVE_INSECURE_SKIP_VERIFY, \
                  PVE_CA_BUNDLE (PEM text or a file), PVE_TLS_FINGERPRINT. \
                  RUST_LOG sets the log level (default warn)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Output format.
    #[arg(long, global = true, value_enum, default_value_t = Format::Text)]
    output_format: Format,
    /// When the call answers a task ID, wait for the task to end.
    #[arg(long, global = true)]
    wait: bool,
    /// Seconds between task status polls with --wait.
    #[arg(long, global = true, default_value_t = 2.0)]
    poll_interval: f64,
    /// Seconds to wait for a task at most with --wait.
    #[arg(long, global = true, default_value_t = 300.0)]
    wait_timeout: f64,
    /// The endpoint (overrides PVE_ENDPOINT).
    #[arg(long, global = true)]
    endpoint: Option<String>,
    /// Accept any certificate (overrides PVE_INSECURE_SKIP_VERIFY).
    #[arg(long, global = true)]
    insecure: bool,
    /// CA bundle, a PEM file (overrides PVE_CA_BUNDLE).
    #[arg(long, global = true)]
    ca_bundle: Option<String>,
    /// Pin the server certificate by SHA-256 fingerprint.
    #[arg(long, global = true)]
    fingerprint: Option<String>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// GET a path.
    Get(Call),
    /// POST to a path.
    Create(Call),
    /// PUT to a path.
    Set(Call),
    /// DELETE a path.
    Delete(Call),
    /// List the children of a path, with what each allows (pvesh's
    /// `Drwcd` flags).
    Ls(Call),
    /// Show the API's usage of a path, from the embedded schema of the
    /// server's release.
    Usage(UsageArgs),
}

#[derive(clap::Args, Debug)]
struct UsageArgs {
    /// The API path (e.g. /nodes/pve/qemu or /nodes/{node}/qemu).
    path: String,
    /// Also show permissions and format details.
    #[arg(long, short)]
    verbose: bool,
    /// The schema release (8.4, 9.1 or 9.2); by default the server's,
    /// when PVE_ENDPOINT is set and answers, else 9.2.
    #[arg(long, value_parser = ["8.4", "9.1", "9.2"])]
    release: Option<String>,
}

#[derive(clap::Args, Debug)]
struct Call {
    /// The API path, relative to /api2/json (e.g. /nodes/pve/status).
    path: String,
    /// API parameters: --name value ...
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    /// Tables and plain values.
    Text,
    /// Compact JSON.
    Json,
    /// Indented JSON.
    JsonPretty,
}

/// A usage problem (exit status 2).
struct Usage(String);

/// The CLI options that may also follow the path, pvesh-style.
fn split_args(cli: &mut Cli, args: &[String]) -> Result<Params, Usage> {
    let mut params = Params::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        let Some(name) = arg.strip_prefix("--") else {
            return Err(Usage(format!(
                "unexpected argument '{arg}': parameters are written --name value"
            )));
        };
        let (name, inline) = match name.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (name.to_string(), None),
        };
        if name.is_empty() {
            return Err(Usage("empty parameter name".into()));
        }
        let flag = matches!(name.as_str(), "wait" | "insecure");
        let value = match inline {
            Some(v) => v,
            None if flag => "1".into(),
            None => match args.get(i + 1) {
                Some(v) if !v.starts_with("--") => {
                    i += 1;
                    v.clone()
                }
                _ => "1".into(),
            },
        };
        let seconds = |v: &str| {
            v.parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s >= 0.0)
                .ok_or_else(|| Usage(format!("--{name} takes seconds, not '{v}'")))
        };
        match name.as_str() {
            "output-format" => {
                cli.output_format = Format::from_str(&value, true)
                    .map_err(|_| Usage(format!("unknown output format '{value}'")))?;
            }
            "wait" => cli.wait = value != "0",
            "insecure" => cli.insecure = value != "0",
            "poll-interval" => cli.poll_interval = seconds(&value)?,
            "wait-timeout" => cli.wait_timeout = seconds(&value)?,
            "endpoint" => cli.endpoint = Some(value),
            "ca-bundle" => cli.ca_bundle = Some(value),
            "fingerprint" => cli.fingerprint = Some(value),
            _ => params.push(name, value),
        }
        i += 1;
    }
    Ok(params)
}

fn config(cli: &Cli) -> pve_client::Result<Config> {
    let mut b = Config::builder().with_env(|k| std::env::var(k).ok())?;
    if let Some(e) = &cli.endpoint {
        b = b.endpoint(e);
    }
    if cli.insecure {
        b = b.insecure_skip_verify(true);
    }
    if let Some(ca) = &cli.ca_bundle {
        b = if ca.contains("-----BEGIN") {
            b.ca_bundle_pem(ca)
        } else {
            b.ca_bundle_file(ca)
        };
    }
    if let Some(fp) = &cli.fingerprint {
        b = b.fingerprint(fp);
    }
    b.build()
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// pvesh's text output, without borders: plain values, `key value`
/// lines for an object, an aligned table for a list of objects.
fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Array(items) if items.iter().all(Value::is_object) && !items.is_empty() => {
            let mut cols: Vec<String> = Vec::new();
            for item in items {
                if let Value::Object(o) = item {
                    for k in o.keys() {
                        if !cols.contains(k) {
                            cols.push(k.clone());
                        }
                    }
                }
            }
            cols.sort();
            let rows: Vec<Vec<String>> = items
                .iter()
                .map(|i| {
                    cols.iter()
                        .map(|c| i.get(c).map(scalar).unwrap_or_default())
                        .collect()
                })
                .collect();
            table(&cols, &rows)
        }
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::Array(_) | Value::Object(_) => format!("{i}\n"),
                other => scalar(other) + "\n",
            })
            .collect(),
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            let width = keys.iter().map(|k| k.len()).max().unwrap_or(0);
            keys.iter()
                .map(|k| format!("{k:<width$} {}\n", scalar(&o[k.as_str()])))
                .collect()
        }
        other => format!("{}\n", scalar(other)),
    }
}

fn table(cols: &[String], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = cols
        .iter()
        .enumerate()
        .map(|(i, c)| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([c.len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let mut s = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join(" ");
        s.truncate(s.trim_end().len());
        s + "\n"
    };
    let mut out = line(cols);
    for r in rows {
        out += &line(r);
    }
    out
}

fn render(format: Format, v: &Value) -> String {
    match format {
        Format::Text => text(v),
        Format::Json => format!("{v}\n"),
        Format::JsonPretty => {
            serde_json::to_string_pretty(v).map_or_else(|_| format!("{v}\n"), |s| s + "\n")
        }
    }
}

/// `pve usage`: the schema of the release asked for, or the server's
/// when it can be asked, else 9.2.
async fn usage(args: &UsageArgs, client: Option<&Client>) -> pve_client::Result<String> {
    let release = match (&args.release, client) {
        (Some(r), _) => schema::release_for(r),
        (None, Some(c)) => match c.version().await {
            Ok(_) => c.release(),
            Err(e) => {
                eprintln!("pve: cannot read the server's release ({e}); using 9.2");
                Release::V9_2
            }
        },
        (None, None) => Release::V9_2,
    };
    schema::usage(
        pve_client::pve_schema::spec(release),
        &args.path,
        args.verbose,
    )
}

/// `pve ls`: the children of a directory, named by the schema's link
/// key, with the methods each allows.
async fn ls(cli: &Cli, client: &Client, path: &str, params: &Params) -> pve_client::Result<String> {
    let data = client.request(Method::GET, path, params).await?.data;
    if client.known_release().is_none() {
        // Learn the release so that the right schema names the children.
        client.version().await?;
    }
    let children = schema::children(client.spec(), path, &data);
    if cli.output_format == Format::Text {
        return Ok(children
            .iter()
            .map(|c| format!("{:<12} {}\n", c.flags, c.name))
            .collect());
    }
    let names = children
        .into_iter()
        .map(|c| Value::String(c.name))
        .collect();
    Ok(render(cli.output_format, &Value::Array(names)))
}

async fn run(cli: &Cli, client: &Client, params: Params) -> pve_client::Result<String> {
    let (method, path) = match &cli.command {
        Command::Get(c) => (Method::GET, &c.path),
        Command::Create(c) => (Method::POST, &c.path),
        Command::Set(c) => (Method::PUT, &c.path),
        Command::Delete(c) => (Method::DELETE, &c.path),
        Command::Ls(c) => return ls(cli, client, &c.path, &params).await,
        Command::Usage(u) => return usage(u, Some(client)).await,
    };
    let data = client.request(method, path, &params).await?.data;
    let upid = data
        .as_str()
        .filter(|s| s.starts_with("UPID:"))
        .and_then(|s| s.parse::<Upid>().ok());
    match upid {
        Some(upid) if cli.wait => {
            let opts = WaitOptions::default()
                .poll_interval(Duration::from_secs_f64(cli.poll_interval))
                .timeout(Duration::from_secs_f64(cli.wait_timeout));
            let status = client.tasks().wait_with(&upid, &opts).await?;
            if cli.output_format == Format::Text {
                let log = client.tasks().read_task_log(&upid, 0, 0).await?;
                Ok(log.lines.into_iter().map(|l| l.t + "\n").collect())
            } else {
                let v = serde_json::to_value(&status).map_err(|e| Error::Decode {
                    message: e.to_string(),
                })?;
                Ok(render(cli.output_format, &v))
            }
        }
        _ => Ok(render(cli.output_format, &data)),
    }
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let mut cli = Cli::parse();
    let args = match &cli.command {
        Command::Get(c)
        | Command::Create(c)
        | Command::Set(c)
        | Command::Delete(c)
        | Command::Ls(c) => c.args.clone(),
        Command::Usage(_) => Vec::new(),
    };
    let params = match split_args(&mut cli, &args) {
        Ok(p) => p,
        Err(Usage(m)) => {
            eprintln!("pve: {m}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("pve: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let client = match config(&cli).and_then(Client::new) {
        Ok(c) => c,
        // `usage` works without a server: from the 9.2 schema, or the
        // release asked for.
        Err(_) if matches!(cli.command, Command::Usage(_)) => {
            let Command::Usage(u) = &cli.command else {
                return ExitCode::from(2);
            };
            return finish(runtime.block_on(usage(u, None)));
        }
        Err(e) => {
            eprintln!("pve: {e}");
            return ExitCode::from(2);
        }
    };
    finish(runtime.block_on(run(&cli, &client, params)))
}

/// Prints the outcome and picks the exit status.
fn finish(outcome: pve_client::Result<String>) -> ExitCode {
    match outcome {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("pve: {e}");
            if let Error::TaskFailed { log_tail, .. } = &e {
                for line in log_tail {
                    eprintln!("  {line}");
                }
            }
            if e.category() == Category::Config {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align() {
        let v = serde_json::json!([{"node": "pve", "status": "online"}, {"node": "pve2", "status": "offline", "level": ""}]);
        assert_eq!(
            text(&v),
            "level node status\n      pve  online\n      pve2 offline\n"
        );
        let o = serde_json::json!({"version": "9.1.5", "release": "9.1"});
        assert_eq!(text(&o), "release 9.1\nversion 9.1.5\n");
        assert_eq!(text(&Value::Null), "");
        assert_eq!(text(&serde_json::json!("100")), "100\n");
        assert_eq!(text(&serde_json::json!(["a", 1])), "a\n1\n");
    }

    #[test]
    fn parameters_after_the_path() {
        let mut cli = Cli::parse_from(["pve", "get", "/x"]);
        let args: Vec<String> = [
            "--vmid",
            "100",
            "--output-format",
            "json",
            "--force",
            "--vms=1,2",
            "--wait",
            "--cmd",
            "a",
            "--cmd",
            "b",
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        let p = split_args(&mut cli, &args).unwrap_or_else(|Usage(m)| panic!("{m}"));
        assert_eq!(cli.output_format, Format::Json);
        assert!(cli.wait);
        let pairs: Vec<(&str, &str)> = p
            .pairs()
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("vmid", "100"),
                ("force", "1"),
                ("vms", "1,2"),
                ("cmd", "a"),
                ("cmd", "b")
            ]
        );
        assert!(split_args(&mut cli, &["oops".to_string()]).is_err());
    }
}
