//! The manual (`docs/book`, an mdBook) and the READMEs hold together: every
//! chapter is in the summary and every file the summary names exists, and
//! no relative link or `{{#include}}` leads nowhere (a file that is not
//! there, or an anchor that no heading of the target makes). `mdbook
//! build` (run by `ci/test`) renders the book; this finds what it would
//! render as a dead link.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the repository")
        .to_path_buf()
}

/// The book's chapters and pictures.
fn src() -> PathBuf {
    root().join("docs/book/src")
}

/// `a/b/../c` as `a/c`, without touching the file system.
fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// The text of a Markdown file without its fenced code blocks and inline
/// code (a link there is an example, not a link).
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            out.push('\n');
            continue;
        }
        if fence {
            out.push('\n');
            continue;
        }
        let mut code = false;
        for ch in line.chars() {
            if ch == '`' {
                code = !code;
            } else if !code {
                out.push(ch);
            }
        }
        out.push('\n');
    }
    out
}

/// The targets of the Markdown links (`[text](target)`, `![alt](target)`)
/// in `text`'s prose.
fn links(text: &str) -> Vec<String> {
    let prose = prose(text);
    let mut found = Vec::new();
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        let target = after[..end].split_whitespace().next().unwrap_or("");
        if !target.is_empty() {
            found.push(target.to_string());
        }
        rest = &after[end..];
    }
    found
}

/// The paths of `{{#include PATH}}` directives (in code blocks too).
fn includes(text: &str) -> Vec<String> {
    text.match_indices("{{#include ")
        .filter_map(|(at, m)| {
            let after = &text[at + m.len()..];
            let end = after.find("}}")?;
            // `PATH:anchor` or `PATH:1:10` takes part of the file.
            let path = after[..end].trim().split(':').next()?;
            Some(path.to_string())
        })
        .collect()
}

/// The anchors mdBook gives a chapter's headings: lower case, spaces as
/// `-`, only letters, digits, `-` and `_` kept; a repeated one gets `-1`,
/// `-2`, ...
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        let Some(title) = line.strip_prefix('#') else {
            continue;
        };
        if fence {
            continue;
        }
        let title = title.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let id: String = title
            .trim()
            .chars()
            .filter_map(|c| {
                if c == ' ' {
                    Some('-')
                } else if c.is_alphanumeric() || c == '_' || c == '-' {
                    Some(c.to_ascii_lowercase())
                } else {
                    None
                }
            })
            .collect();
        let mut candidate = id.clone();
        let mut n = 0;
        while seen.contains(&candidate) {
            n += 1;
            candidate = format!("{id}-{n}");
        }
        seen.insert(candidate);
    }
    seen
}

/// Every Markdown file below `dir`.
fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).expect("a readable directory") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// What is wrong with the links of one Markdown file (`file`, whose
/// relative links start from its own folder).
fn dead_links(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).expect("a readable chapter");
    let dir = file.parent().expect("a folder");
    let name = file
        .strip_prefix(root())
        .unwrap_or(file)
        .display()
        .to_string();
    let mut dead = Vec::new();
    for target in links(&text) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (path, anchor) = match target.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (target.as_str(), None),
        };
        let to = if path.is_empty() {
            file.to_path_buf()
        } else {
            normalized(&dir.join(path))
        };
        if !to.exists() {
            dead.push(format!("{name}: {target}: no such file"));
            continue;
        }
        if let Some(anchor) = anchor {
            let text = std::fs::read_to_string(&to).unwrap_or_default();
            if !anchors(&text).contains(anchor) {
                dead.push(format!("{name}: {target}: no heading makes #{anchor}"));
            }
        }
    }
    for path in includes(&text) {
        if !normalized(&dir.join(&path)).exists() {
            dead.push(format!("{name}: {{{{#include {path}}}}}: no such file"));
        }
    }
    dead
}

#[test]
fn the_summary_names_every_chapter_and_only_chapters_that_exist() {
    let summary = std::fs::read_to_string(src().join("SUMMARY.md")).expect("SUMMARY.md");
    let named: BTreeSet<PathBuf> = links(&summary)
        .iter()
        .map(|l| normalized(&src().join(l)))
        .collect();
    let missing: Vec<_> = named.iter().filter(|p| !p.exists()).collect();
    assert!(
        missing.is_empty(),
        "SUMMARY.md names missing chapters: {missing:?}"
    );
    let unlisted: Vec<_> = markdown_files(&src())
        .into_iter()
        .filter(|p| !p.ends_with("SUMMARY.md") && !named.contains(p))
        .collect();
    assert!(
        unlisted.is_empty(),
        "chapters not in SUMMARY.md: {unlisted:?}"
    );
}

#[test]
fn no_link_of_the_book_or_a_readme_leads_nowhere() {
    let mut files = markdown_files(&src());
    files.push(root().join("README.md"));
    for krate in [
        "fake-pve", "client", "operator", "loadtest", "schema", "tests", "xtask", "alloc",
    ] {
        let readme = root().join(krate).join("README.md");
        assert!(readme.exists(), "{krate}/README.md is missing");
        files.push(readme);
    }
    let dead: Vec<String> = files.iter().flat_map(|f| dead_links(f)).collect();
    assert!(dead.is_empty(), "dead links:\n{}", dead.join("\n"));
}

#[test]
fn the_checks_find_what_they_look_for() {
    // The link finder skips code, the anchor maker follows mdBook's rules,
    // and a dead link is reported.
    let text = "See [a](a.md#the-api-surface) and `[b](b.md)`.\n```\n[c](c.md)\n```\n";
    assert_eq!(links(text), vec!["a.md#the-api-surface".to_string()]);
    let heads = anchors("# The API surface\n## Flags (`--x`)\n## Flags (`--x`)\n");
    assert!(heads.contains("the-api-surface"), "{heads:?}");
    assert!(heads.contains("flags---x"), "{heads:?}");
    assert!(heads.contains("flags---x-1"), "{heads:?}");
    assert_eq!(
        includes("{{#include ../../x.md}}\n"),
        vec!["../../x.md".to_string()]
    );
    let dir = std::env::temp_dir().join(format!("book-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder");
    let chapter = dir.join("c.md");
    std::fs::write(
        &chapter,
        "# C\n[gone](nowhere.md) [here](c.md#c) [bad](c.md#d)\n",
    )
    .expect("written");
    let dead = dead_links(&chapter);
    std::fs::remove_dir_all(&dir).expect("removed");
    assert_eq!(dead.len(), 2, "{dead:?}");
    assert!(dead[0].ends_with("nowhere.md: no such file"), "{dead:?}");
    assert!(dead[1].ends_with("c.md#d: no heading makes #d"), "{dead:?}");
}
