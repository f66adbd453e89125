//! No source file outside tests is over 1,000 lines, in any crate of the
//! workspace: a module that grows past it is split into a folder of
//! cohesive parts. Test files (under a `tests/` folder, or a module's
//! `tests.rs`) and benchmarks are not counted; a unit-test module written
//! inside a source file is.

use std::path::{Path, PathBuf};

/// The most lines a source file may have.
const MAX_LINES: usize = 1_000;

/// The workspace's crates, as `Cargo.toml` lists its members.
const CRATES: [&str; 8] = [
    "alloc", "client", "fake-pve", "loadtest", "operator", "schema", "tests", "xtask",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the repository")
        .to_path_buf()
}

/// The `.rs` files below `dir`, leaving out test folders and files.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if name != "tests" {
                sources(&path, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" {
            out.push(path);
        }
    }
}

/// The files of `files` over `max` lines, with their counts.
fn over(files: &[PathBuf], max: usize) -> Vec<String> {
    files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).expect("source").lines().count();
            (n > max).then(|| format!("{} ({n} lines)", f.display()))
        })
        .collect()
}

#[test]
fn no_source_file_is_over_a_thousand_lines() {
    let mut files = Vec::new();
    for c in CRATES {
        sources(&root().join(c).join("src"), &mut files);
    }
    assert!(files.len() > 300, "only {} source files found", files.len());
    let long = over(&files, MAX_LINES);
    assert!(
        long.is_empty(),
        "over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}

/// The count sees a long file, and leaves test folders out.
#[test]
fn the_count_finds_a_long_file_and_skips_tests() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("a/tests")).expect("dirs");
    std::fs::write(dir.path().join("a/long.rs"), "x\n".repeat(12)).expect("write");
    std::fs::write(dir.path().join("a/short.rs"), "x\n".repeat(3)).expect("write");
    std::fs::write(dir.path().join("a/tests.rs"), "x\n".repeat(40)).expect("write");
    std::fs::write(dir.path().join("a/tests/t.rs"), "x\n".repeat(40)).expect("write");
    let mut files = Vec::new();
    sources(dir.path(), &mut files);
    assert_eq!(files.len(), 2, "{files:?}");
    let long = over(&files, 10);
    assert_eq!(long.len(), 1);
    assert!(long[0].contains("long.rs (12 lines)"), "{long:?}");
}
