//! The subcommands `fake-pve scenario capture` and `fake-pve compare`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use super::{Reader, Source, TwinError, capture, compare};

/// The subcommands (without one, `fake-pve` serves).
#[derive(Debug, clap::Subcommand)]
pub enum Cmd {
    /// Scenario files.
    #[command(subcommand)]
    Scenario(ScenarioCmd),
    /// Compares a PVE with a twin fake-pve started from its capture: the
    /// same read-only calls on both, and where their answers differ
    /// (moving figures aside). Only GETs are sent to the PVE. Exit
    /// status: 0 when every answer agrees, 1 when some differ, 2 when
    /// the comparison could not run.
    Compare(CompareArgs),
}

/// `fake-pve scenario ...`.
#[derive(Debug, clap::Subcommand)]
pub enum ScenarioCmd {
    /// Reads a running PVE through its API, read-only (GETs only:
    /// nothing is changed), and writes the scenario that recreates it.
    /// PVEAuditor on / suffices (see the book's twin chapter); what the
    /// credentials may not read is listed, not fatal. Passwords and
    /// token secrets are never read: in the twin, log in as root@pam
    /// with fake-pve's --root-password; tokens get new secrets.
    Capture(CaptureArgs),
}

/// `fake-pve scenario capture`.
#[derive(Debug, clap::Args)]
pub struct CaptureArgs {
    /// The PVE and how to log in.
    #[command(flatten)]
    pub source: Source,
    /// The scenario file to write (`-` for the standard output).
    #[arg(long, short)]
    pub output: PathBuf,
}

/// `fake-pve compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The PVE and how to log in.
    #[command(flatten)]
    pub source: Source,
    /// The paths to compare, one a line (default: every read of the
    /// capture).
    #[arg(long)]
    pub paths: Option<PathBuf>,
    /// Where the report goes as JSON.
    #[arg(long, default_value = "fake-pve-compare.json")]
    pub json: PathBuf,
}

/// Runs a subcommand.
pub async fn run(cmd: Cmd) -> ExitCode {
    let r = match cmd {
        Cmd::Scenario(ScenarioCmd::Capture(a)) => run_capture(a).await,
        Cmd::Compare(a) => run_compare(a).await,
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            eprintln!("fake-pve: {e}");
            ExitCode::from(2)
        }
    }
}

async fn run_capture(a: CaptureArgs) -> Result<ExitCode, TwinError> {
    let reader = Arc::new(Reader::new(a.source.client()?));
    let cap = capture(reader, &a.source.url).await?;
    let yaml = cap.to_yaml(&a.source.url);
    if a.output.as_os_str() == "-" {
        print!("{yaml}");
    } else {
        std::fs::write(&a.output, yaml)
            .map_err(|e| TwinError::Io(a.output.display().to_string(), e))?;
    }
    eprintln!(
        "fake-pve: captured PVE {} ({} guests) with {} GETs in {:.1} s; {} not readable",
        cap.release.version(),
        cap.guests(),
        cap.calls,
        cap.elapsed.as_secs_f64(),
        cap.unread.len()
    );
    for u in &cap.unread {
        eprintln!("  not read: {} ({})", u.path, u.reason);
    }
    Ok(ExitCode::SUCCESS)
}

async fn run_compare(a: CompareArgs) -> Result<ExitCode, TwinError> {
    let paths = match &a.paths {
        Some(p) => Some(compare::read_paths(
            &std::fs::read_to_string(p).map_err(|e| TwinError::Io(p.display().to_string(), e))?,
        )),
        None => None,
    };
    let report = compare::compare(&a.source, paths).await?;
    print!("{}", report.to_text());
    let json = serde_json::to_string_pretty(&report).unwrap_or_default();
    std::fs::write(&a.json, json).map_err(|e| TwinError::Io(a.json.display().to_string(), e))?;
    Ok(if report.faithful() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
