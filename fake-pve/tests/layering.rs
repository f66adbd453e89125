//! fake-pve's modules depend on each other in one direction: no module
//! reaches, through `crate::` paths in its code, a module that reaches it
//! back, and the model imports nothing of the wire. Read from the
//! sources (comments and unit-test modules left out).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules of `src/` (a file `x.rs` or a folder `x/`).
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(src).expect("src") {
        let path = entry.expect("entry").path();
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("name")
            .to_string();
        if name == "lib" || name == "main" {
            continue;
        }
        if path.is_dir() || path.extension().is_some_and(|e| e == "rs") {
            out.insert(name, path);
        }
    }
    out
}

/// The `.rs` files of a module, but for its unit tests' folders.
fn files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let mut out = Vec::new();
    for entry in std::fs::read_dir(path).expect("dir") {
        let p = entry.expect("entry").path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "tests") {
                out.extend(files(&p));
            }
        } else if p.extension().is_some_and(|e| e == "rs")
            && p.file_stem().is_some_and(|n| n != "tests")
        {
            out.push(p);
        }
    }
    out
}

/// The code of a file: no comment lines, nothing from its unit tests on.
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|n| n.trim_start().starts_with("mod tests"))
        {
            break;
        }
        if t.starts_with("//") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The modules a text names as `crate::<module>`.
fn named(text: &str, known: &BTreeMap<String, PathBuf>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        if i > 0 && text[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[i + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if known.contains_key(&name) {
            out.insert(name);
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let known = modules(&src);
    let mut edges = BTreeMap::new();
    for (name, path) in &known {
        let mut deps = BTreeSet::new();
        for f in files(path) {
            let text = std::fs::read_to_string(&f).expect("source");
            deps.extend(named(&code(&text), &known));
        }
        deps.remove(name);
        edges.insert(name.clone(), deps);
    }
    edges
}

/// A cycle through `from`, if there is one: the modules along it.
fn cycle(edges: &BTreeMap<String, BTreeSet<String>>, from: &str) -> Option<Vec<String>> {
    fn walk(
        edges: &BTreeMap<String, BTreeSet<String>>,
        goal: &str,
        at: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for next in edges.get(at).into_iter().flatten() {
            if next == goal {
                path.push(next.clone());
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(edges, goal, next, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![from.to_string()];
    let mut seen = BTreeSet::new();
    walk(edges, from, from, &mut path, &mut seen).then_some(path)
}

#[test]
fn no_module_reaches_one_that_reaches_it_back() {
    let edges = graph();
    for m in [
        "state",
        "api",
        "persist",
        "dashboard",
        "control",
        "app",
        "model",
        "spec",
        "server",
        "tls",
    ] {
        assert!(edges.contains_key(m), "no module {m}: {:?}", edges.keys());
    }
    let cycles: Vec<String> = edges
        .keys()
        .filter_map(|m| cycle(&edges, m))
        .map(|c| c.join(" -> "))
        .collect();
    assert!(cycles.is_empty(), "cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_model_imports_nothing_of_the_wire() {
    let edges = graph();
    let model = &edges["model"];
    for wire in [
        "api",
        "app",
        "body",
        "control",
        "dashboard",
        "persist",
        "server",
        "state",
        "tls",
    ] {
        assert!(!model.contains(wire), "the model uses crate::{wire}");
    }
    for m in ["spec", "version", "clock"] {
        let deps = &edges[m];
        assert!(
            !deps.contains("model") && !deps.contains("api"),
            "{m} uses {deps:?}"
        );
    }
}

/// The checks find what they look for: a cycle in a made-up graph, and
/// the names of a line of code but not of a comment.
#[test]
fn the_checks_see_a_cycle_and_skip_comments() {
    let mut edges = BTreeMap::new();
    edges.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    edges.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    edges.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(
        cycle(&edges, "a"),
        Some(vec!["a".into(), "b".into(), "a".into()])
    );
    assert_eq!(cycle(&edges, "c"), None);
    let known = BTreeMap::from([
        ("api".to_string(), PathBuf::new()),
        ("tls".to_string(), PathBuf::new()),
    ]);
    let text = code(
        "use crate::api::x;\n// crate::tls\nfn f() { my_crate::tls::g() }\n#[cfg(test)]\nmod tests {\n use crate::tls;\n}\n",
    );
    assert_eq!(named(&text, &known), BTreeSet::from(["api".to_string()]));
}
