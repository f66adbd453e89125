//! Maintenance commands for the workspace.
//!
//! - `cargo run -p xtask -- spec [SCHEMA_DIR]`: regenerate
//!   `schema/spec/pve-*.json` from the official schema (default
//!   `../shared/pve-schema`, beside the repository).
//! - `cargo run -p xtask -- coverage`: regenerate `COVERAGE.md`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Why a command failed; each names the file it was at.
#[derive(Debug, thiserror::Error)]
enum XtaskError {
    /// The command line names no known command.
    #[error("usage: cargo run -p xtask -- spec [SCHEMA_DIR] | coverage")]
    Usage,
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system answered.
        source: std::io::Error,
    },
    /// The official schema could not be turned into a spec.
    #[error("{}: {source}", path.display())]
    Generate {
        /// The schema file.
        path: PathBuf,
        /// What the generator answered.
        source: pve_schema::generate::GenerateError,
    },
}

impl XtaskError {
    fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Self {
        |source| Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn spec(schema_dir: &Path) -> Result<(), XtaskError> {
    for release in pve_schema::generate::RELEASES {
        let src = schema_dir.join(format!("pve-{release}.json"));
        let raw = std::fs::read_to_string(&src).map_err(XtaskError::io(&src))?;
        let out = pve_schema::generate::generate(&raw, release).map_err(|source| {
            XtaskError::Generate {
                path: src.clone(),
                source,
            }
        })?;
        let dst = root().join(format!("schema/spec/pve-{release}.json"));
        std::fs::write(&dst, out).map_err(XtaskError::io(&dst))?;
        println!("wrote {}", dst.display());
    }
    Ok(())
}

fn coverage() -> Result<(), XtaskError> {
    let dst = root().join("COVERAGE.md");
    std::fs::write(&dst, fake_pve::coverage::report()).map_err(XtaskError::io(&dst))?;
    println!("wrote {}", dst.display());
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("spec") => {
            let dir = args
                .get(1)
                .map_or_else(|| root().join("../shared/pve-schema"), PathBuf::from);
            spec(&dir)
        }
        Some("coverage") => coverage(),
        _ => Err(XtaskError::Usage),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}
