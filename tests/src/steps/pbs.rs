//! Proxmox Backup Server storages: a server the in-process fake-pve is
//! told about (`/_fake/pbs`), and file-restore's `list` and `download` of a
//! backup (`filepath` given as a plain path here and sent base64, `/`
//! as it is).

use base64::Engine;
use cucumber::gherkin::Step;
use cucumber::{given, when};
use pve_client::api::seg;
use pve_client::{Method, Params};
use serde_json::{Value, json};

use crate::world::PveWorld;

/// A Proxmox Backup Server runs: the in-process fake-pve is told about
/// it (`/_fake/pbs`, as a scenario's `pbs:` declares one) from a table
/// of `name`, `address`, `fingerprint`, `datastore`, `namespaces`
/// (comma-separated) and `verify-new`; a real target must have it
/// already (`ci/conformance-real` starts fake-pve with
/// `ci/conformance-real.yaml`, which declares it).
#[given("a Proxmox Backup Server runs:")]
async fn declare_pbs(w: &mut PveWorld, step: &Step) {
    let rows = step
        .table
        .as_ref()
        .map(|t| t.rows.clone())
        .unwrap_or_default();
    let get = |k: &str| {
        rows.iter()
            .find(|r| r.first().is_some_and(|c| c == k))
            .and_then(|r| r.get(1).cloned())
    };
    let name = w.expand(&get("name").unwrap_or_else(|| "pbs".into()));
    let datastore = w.expand(&get("datastore").unwrap_or_else(|| "store1".into()));
    let namespaces: Vec<String> = get("namespaces")
        .map(|n| {
            n.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| w.expand(s))
                .collect()
        })
        .unwrap_or_default();
    let mut ds = json!({ "namespaces": namespaces });
    if get("verify-new").is_some_and(|v| v == "1" || v == "true") {
        ds["verify-new"] = json!(true);
    }
    let mut server = json!({
        "name": name,
        "datastores": { datastore: ds },
    });
    if let Some(a) = get("address") {
        server["address"] = json!(w.expand(&a));
    }
    if let Some(fp) = get("fingerprint") {
        server["fingerprint"] = json!(w.expand(&fp));
    }
    w.control_for_parity(
        Method::POST,
        "/_fake/pbs",
        Some(("application/json", server.to_string())),
    )
    .await;
}

fn filepath(path: &str) -> String {
    if path == "/" {
        path.to_string()
    } else {
        base64::engine::general_purpose::STANDARD.encode(path)
    }
}

fn file_restore_path(w: &PveWorld, storage: &str, what: &str) -> String {
    format!(
        "/nodes/{}/storage/{}/file-restore/{what}",
        seg(&w.target().node),
        seg(storage)
    )
}

/// `list`: the entries of a backup under a path (`/`: its archives).
#[when(expr = "I list the files of backup {string} on storage {string} under {string}")]
async fn list(w: &mut PveWorld, backup: String, storage: String, path: String) {
    let (backup, storage, path) = (w.expand(&backup), w.expand(&storage), w.expand(&path));
    let params = Params::new()
        .set("volume", backup.as_str())
        .set("filepath", filepath(&path));
    let p = file_restore_path(w, &storage, "list");
    w.call(Method::GET, &p, params).await;
}

/// `download`: a file's bytes (kept as text), or a directory's archive.
#[when(regex = r#"^I download "([^"]*)" from backup "([^"]*)" on storage "([^"]*)"( as tar)?$"#)]
async fn download(w: &mut PveWorld, path: String, backup: String, storage: String, tar: String) {
    let (backup, storage, path) = (w.expand(&backup), w.expand(&storage), w.expand(&path));
    let mut params = Params::new()
        .set("volume", backup.as_str())
        .set("filepath", filepath(&path));
    if !tar.is_empty() {
        params = params.set("tar", 1);
    }
    let p = file_restore_path(w, &storage, "download");
    w.call(Method::GET, &p, params).await;
}

/// The listed entry `text` decodes to `path`.
#[cucumber::then(expr = "the entry {string} has the path {string}")]
fn entry_path(w: &mut PveWorld, text: String, path: String) {
    let (text, path) = (w.expand(&text), w.expand(&path));
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let entry = o
        .data
        .as_array()
        .and_then(|a| a.iter().find(|e| e["text"] == Value::String(text.clone())))
        .unwrap_or_else(|| panic!("{}: no entry {text} in {}", o.request, o.data));
    let got = entry["filepath"]
        .as_str()
        .and_then(|f| base64::engine::general_purpose::STANDARD.decode(f).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    assert_eq!(got, path, "{}", o.request);
}

/// A line of the task log read last matches a regular expression (for
/// the lines that name a backup's time).
#[cucumber::then(regex = r#"^the log has a line matching "(.*)"$"#)]
fn log_line_matching(w: &mut PveWorld, pattern: String) {
    let pattern = w.expand(&pattern);
    let re = regex::Regex::new(&format!("^(?:{pattern})$")).unwrap_or_else(|e| panic!("{e}"));
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let found = o.data.as_array().is_some_and(|a| {
        a.iter()
            .any(|l| l["t"].as_str().is_some_and(|t| re.is_match(t)))
    });
    assert!(
        found,
        "{}: no line matching {pattern:?} in {}",
        o.request, o.data
    );
}
