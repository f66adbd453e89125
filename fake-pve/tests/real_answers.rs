//! fake-pve's answers against answers captured from real PVE servers.
//!
//! `tests/real-answers/*.json` is a table of GET answers that real PVE
//! servers gave, taken from public sources (each file names its
//! repository, path and commit, and the PVE release it came from; see
//! the README there). A file keeps the keys and JSON types of the answer,
//! not its values. The test compares each with the answer fake-pve gives
//! for the same GET in `tests/snapshots/` (the insta snapshots of every
//! modelled GET, made by `tests/snapshots.rs`):
//!
//! - every key the capture has, fake-pve's answer has with the same JSON
//!   type (an integer may stand where the capture has a fraction: those
//!   are numbers that happened to be whole or not);
//! - where the releases are comparable (`"keys": true`), fake-pve's
//!   answer has no key the capture lacks either;
//! - `exclude` lists the paths left out of both checks, each with why
//!   (what differs between the captured object and the snapshot's,
//!   rather than between PVE and fake-pve).
//!
//! Lists are compared item by item: `select` names the values an item of
//! fake-pve's list must have to stand for the captured one. Maps keyed by
//! device (`blockstat`, `nics`) have one shape for every entry (`*`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

fn dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(sub)
}

/// The `data` of an insta snapshot of `tests/snapshots.rs`.
fn snapshot(name: &str) -> Result<Value, String> {
    let path = dir("snapshots").join(format!("snapshots__{name}.snap"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("snapshot {name}: {e}"))?;
    // The header sits between two `---` lines; the JSON follows.
    let body = text
        .splitn(3, "---\n")
        .nth(2)
        .ok_or_else(|| format!("snapshot {name}: no insta header"))?;
    let doc: Value = serde_json::from_str(body).map_err(|e| format!("snapshot {name}: {e}"))?;
    Ok(doc["data"].clone())
}

/// The JSON type of a value, as the table writes it.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// What one comparison found wrong, one line each.
struct Check<'a> {
    keys: bool,
    exclude: &'a Map<String, Value>,
    problems: Vec<String>,
}

impl Check<'_> {
    fn compare(&mut self, shape: &Value, fake: &Value, path: &str) {
        match shape {
            Value::String(want) => {
                let got = kind(fake);
                if got != want && !(want == "number" && got == "integer") {
                    self.problems
                        .push(format!("{path}: PVE sends {want}, fake-pve {got}"));
                }
            }
            Value::Array(elem) => {
                let Some(items) = fake.as_array() else {
                    self.problems
                        .push(format!("{path}: PVE sends array, fake-pve {}", kind(fake)));
                    return;
                };
                if let Some(elem) = elem.first() {
                    for (i, item) in items.iter().enumerate() {
                        self.compare(elem, item, &format!("{path}/{i}"));
                    }
                }
            }
            Value::Object(fields) => {
                let Some(obj) = fake.as_object() else {
                    self.problems
                        .push(format!("{path}: PVE sends object, fake-pve {}", kind(fake)));
                    return;
                };
                if let Some(each) = fields.get("*") {
                    for item in obj.values() {
                        self.compare(each, item, &format!("{path}/*"));
                    }
                    return;
                }
                for (k, s) in fields {
                    let p = format!("{path}/{k}");
                    if self.exclude.contains_key(&p) {
                        continue;
                    }
                    match obj.get(k) {
                        Some(v) => self.compare(s, v, &p),
                        None if self.keys => self
                            .problems
                            .push(format!("{p}: PVE sends it, fake-pve does not")),
                        None => {}
                    }
                }
                if self.keys {
                    for k in obj.keys().filter(|k| !fields.contains_key(*k)) {
                        let p = format!("{path}/{k}");
                        if !self.exclude.contains_key(&p) {
                            self.problems
                                .push(format!("{p}: fake-pve sends it, PVE does not"));
                        }
                    }
                }
            }
            other => self
                .problems
                .push(format!("{path}: the table has {other}, not a shape")),
        }
    }
}

/// Compares one table entry with one snapshot; the problems found.
fn check_entry(entry: &Value, fake: &Value, keys: bool) -> Vec<String> {
    let empty = Map::new();
    let mut check = Check {
        keys,
        exclude: entry["exclude"].as_object().unwrap_or(&empty),
        problems: Vec::new(),
    };
    if let Some(shape) = entry.get("shape") {
        check.compare(shape, fake, "");
    }
    for item in entry["items"].as_array().into_iter().flatten() {
        let select = item["select"].as_object().unwrap_or(&empty);
        let found = fake.as_array().and_then(|list| {
            list.iter()
                .find(|x| select.iter().all(|(k, v)| x.get(k) == Some(v)))
        });
        match found {
            Some(x) => check.compare(&item["shape"], x, ""),
            None => check.problems.push(format!(
                "no item with {} in fake-pve's list",
                Value::Object(select.clone())
            )),
        }
    }
    check.problems
}

/// The table: file name and entry.
fn table() -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir("real-answers")).expect("tests/real-answers") {
        let path = e.expect("entry").path();
        if path.extension().is_some_and(|x| x == "json") {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = std::fs::read_to_string(&path).expect("readable");
            let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            out.insert(name, v);
        }
    }
    out
}

#[test]
fn answers_have_the_keys_and_types_of_real_ones() {
    let table = table();
    assert!(table.len() >= 55, "the table has {} entries", table.len());
    let mut problems = Vec::new();
    let mut compared = 0;
    for (name, entry) in &table {
        for target in entry["compare"].as_array().expect("compare") {
            let snap = target["snapshot"].as_str().expect("snapshot name");
            let keys = target["keys"].as_bool().expect("keys");
            match snapshot(snap) {
                Ok(fake) => {
                    compared += 1;
                    for p in check_entry(entry, &fake, keys) {
                        problems.push(format!("{name} vs {snap}: {p}"));
                    }
                }
                Err(e) => problems.push(format!("{name}: {e}")),
            }
        }
    }
    assert!(compared >= 109, "only {compared} comparisons");
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn every_capture_says_where_it_came_from() {
    let readme = std::fs::read_to_string(dir("real-answers").join("README.md")).expect("README");
    for (name, entry) in table() {
        for field in ["repository", "path", "commit"] {
            assert!(
                entry["source"][field]
                    .as_str()
                    .is_some_and(|s| !s.is_empty()),
                "{name}: no source {field}"
            );
        }
        assert!(
            entry["request"]
                .as_str()
                .is_some_and(|r| r.starts_with("GET /")),
            "{name}"
        );
        assert!(
            entry["captured"]
                .as_str()
                .is_some_and(|c| c.contains("PVE")),
            "{name}"
        );
        assert!(readme.contains(&name), "README.md does not list {name}");
        for (path, why) in entry["exclude"].as_object().into_iter().flatten() {
            assert!(
                why.as_str().is_some_and(|w| w.len() > 10),
                "{name}: exclusion {path} without a reason"
            );
        }
    }
}

#[test]
fn the_check_finds_a_wrong_type_a_missing_and_an_extra_key() {
    let entry = serde_json::json!({
        "shape": {"cpu": "integer", "mem": "integer", "blockstat": {"*": {"rd_bytes": "integer"}}},
    });
    // A stopped guest's `cpu` as 0.0, no `mem`, an extra key, a drive
    // with its counter as a string.
    let fake = serde_json::json!({
        "cpu": 0.0,
        "maxmem": 1,
        "blockstat": {"scsi0": {"rd_bytes": "1"}},
    });
    let mut problems = check_entry(&entry, &fake, true);
    problems.sort();
    assert_eq!(
        problems,
        [
            "/blockstat/*/rd_bytes: PVE sends integer, fake-pve string",
            "/cpu: PVE sends integer, fake-pve number",
            "/maxmem: fake-pve sends it, PVE does not",
            "/mem: PVE sends it, fake-pve does not",
        ]
    );
    // Across releases only the types of common keys count.
    assert_eq!(check_entry(&entry, &fake, false).len(), 2);
    // A fraction the capture happened to send whole is no problem the
    // other way round.
    let entry = serde_json::json!({"items": [{"select": {"status": "running"}, "shape": {"status": "string", "cpu": "number"}}]});
    let fake = serde_json::json!([{"status": "stopped"}, {"status": "running", "cpu": 0}]);
    assert!(check_entry(&entry, &fake, true).is_empty());
    let missing = serde_json::json!([{"status": "stopped", "cpu": 0}]);
    assert_eq!(check_entry(&entry, &missing, true).len(), 1);
}

/// The GET paths COVERAGE.md counts as behaviour, in either release.
fn modelled_gets() -> Vec<String> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../COVERAGE.md"))
            .expect("COVERAGE.md");
    let mut out: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("| GET | `") && l.trim_end().ends_with("| behaviour |"))
        .filter_map(|l| l.split('`').nth(1).map(str::to_string))
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
fn every_modelled_get_has_a_capture_or_is_listed_without_one() {
    let readme = std::fs::read_to_string(dir("real-answers").join("README.md")).expect("README");
    let (_, without) = readme
        .split_once("## Modelled GETs without a capture")
        .expect("the README's list of GETs without a capture");
    let captured: Vec<String> = table()
        .values()
        .filter_map(|e| e["request"].as_str())
        .filter_map(|r| r.strip_prefix("GET "))
        .map(|r| r.split('?').next().unwrap_or(r).to_string())
        .collect();
    let gets = modelled_gets();
    assert!(gets.len() > 80, "only {} modelled GETs", gets.len());
    let mut unaccounted = Vec::new();
    for path in &gets {
        let listed = without.contains(&format!("- `{path}`\n"));
        let has = captured.contains(path);
        if has == listed {
            unaccounted.push(format!(
                "{path}: {}",
                if has {
                    "captured and listed as without a capture"
                } else {
                    "neither captured nor listed"
                }
            ));
        }
    }
    assert!(unaccounted.is_empty(), "\n{}", unaccounted.join("\n"));
}
