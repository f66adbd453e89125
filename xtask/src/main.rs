//! Maintenance commands for the workspace.
//!
//! - `cargo run -p xtask -- spec [SCHEMA_DIR]`: regenerate
//!   `schema/spec/pve-*.json` from the official schema (default
//!   `../shared/pve-schema`, beside the repository).
//! - `cargo run -p xtask -- coverage`: regenerate `COVERAGE.md`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn spec(schema_dir: &Path) -> Result<(), String> {
    for release in pve_schema::generate::RELEASES {
        let src = schema_dir.join(format!("pve-{release}.json"));
        let raw = std::fs::read_to_string(&src).map_err(|e| format!("{}: {e}", src.display()))?;
        let out = pve_schema::generate::generate(&raw, release)
            .map_err(|e| format!("{}: {e}", src.display()))?;
        let dst = root().join(format!("schema/spec/pve-{release}.json"));
        std::fs::write(&dst, out).map_err(|e| format!("{}: {e}", dst.display()))?;
        println!("wrote {}", dst.display());
    }
    Ok(())
}

fn coverage() -> Result<(), String> {
    let dst = root().join("COVERAGE.md");
    std::fs::write(&dst, fake_pve::coverage::report())
        .map_err(|e| format!("{}: {e}", dst.display()))?;
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
        _ => Err("usage: cargo run -p xtask -- spec [SCHEMA_DIR] | coverage".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}
