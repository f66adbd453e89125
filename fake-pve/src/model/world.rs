//! A whole world as one versioned JSON document: what `GET /_fake/state`
//! exports, `PUT /_fake/state` imports, and `--seed` (or `POST
//! /_fake/seed`) accepts in place of a scenario file, so that a world
//! captured in one run becomes a fixture for another.
//!
//! The document holds the cluster model as it is (nodes, storages, VMs
//! with their pending sections and snapshots, volumes, networks with
//! pending changes, users, tokens, ACLs, tasks with their logs, guest
//! models, fault rules with their random state), the latency profile, and
//! the clock it was taken at (for reference: importing never turns the
//! clock back).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::cluster::Cluster;
use super::scenario::ScenarioError;

/// The `format` member of a state document.
pub const FORMAT: &str = "fake-pve-state";

/// The version of the document this fake-pve writes and reads.
pub const VERSION: u32 = 1;

/// A state document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StateDoc {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// The release the world impersonates (`9.1`).
    pub pve: String,
    /// The model.
    pub cluster: Cluster,
    /// The latency profile in force when it was taken.
    #[serde(default)]
    pub latency: Option<Value>,
    /// The clock when it was taken (`now`, `now_ms`, `manual`, ...).
    #[serde(default)]
    pub clock: Option<Value>,
}

/// Why a world of release `found` cannot be taken up by a fake-pve that
/// impersonates `wanted`.
pub fn release_mismatch(found: super::PveVersion, wanted: super::PveVersion) -> String {
    format!(
        "the state is of PVE {}, but this fake-pve impersonates PVE {}",
        found.release(),
        wanted.release()
    )
}

/// Whether `text` is a state document rather than a scenario: a JSON
/// object whose `format` is [`FORMAT`].
pub fn is_state_doc(text: &str) -> bool {
    /// Only the `format` member is read; the rest is skipped (a large
    /// JSON scenario is not built as a value to find out).
    #[derive(serde::Deserialize)]
    struct Probe {
        format: Option<String>,
    }
    let t = text.trim_start();
    t.starts_with('{')
        && serde_json::from_str::<Probe>(t).is_ok_and(|p| p.format.as_deref() == Some(FORMAT))
}

/// Parses a state document.
///
/// # Errors
/// Malformed JSON, another format, a version this fake-pve cannot read,
/// or a model that does not deserialize, each naming `source`.
pub fn parse(text: &str, source: &str) -> Result<StateDoc, ScenarioError> {
    let err = |line: Option<usize>, reason: String| ScenarioError {
        file: source.to_string(),
        line,
        reason,
    };
    super::scenario::nesting::check(text).map_err(|e| err(Some(e.line), e.to_string()))?;
    let v: Value =
        serde_json::from_str(text).map_err(|e| err(Some(e.line()), format!("not JSON: {e}")))?;
    match v.get("format").and_then(Value::as_str) {
        Some(FORMAT) => {}
        Some(other) => {
            return Err(err(
                None,
                format!("format '{other}' is not a fake-pve state document ('{FORMAT}')"),
            ));
        }
        None => return Err(err(None, format!("no 'format': '{FORMAT}' member"))),
    }
    match v.get("version").and_then(Value::as_u64) {
        Some(n) if n == u64::from(VERSION) => {}
        Some(n) => {
            return Err(err(
                None,
                format!(
                    "state version {n} is not supported (this fake-pve reads version {VERSION})"
                ),
            ));
        }
        None => return Err(err(None, "no 'version' member".into())),
    }
    let doc: StateDoc =
        serde_json::from_value(v).map_err(|e| err(None, format!("invalid state: {e}")))?;
    if doc.cluster.version.release() != doc.pve {
        return Err(err(
            None,
            format!(
                "'pve' says {} but the cluster is of PVE {}",
                doc.pve,
                doc.cluster.version.release()
            ),
        ));
    }
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenarios_are_not_state_documents() {
        assert!(!is_state_doc("nodes:\n  - { name: pve }\n"));
        assert!(!is_state_doc("{\"nodes\": []}"));
        assert!(!is_state_doc("{\"format\": \"other\"}"));
        assert!(is_state_doc("  {\"format\": \"fake-pve-state\"}"));
    }

    #[test]
    fn bad_documents_are_refused_with_their_reason() {
        let e = parse("{\"format\": \"x\"}", "f.json").expect_err("format");
        assert_eq!(
            e.to_string(),
            "f.json: format 'x' is not a fake-pve state document ('fake-pve-state')"
        );
        let e = parse("{\"format\": \"fake-pve-state\", \"version\": 7}", "f.json")
            .expect_err("version");
        assert_eq!(
            e.to_string(),
            "f.json: state version 7 is not supported (this fake-pve reads version 1)"
        );
        let e = parse("{\"format\": \"fake-pve-state\", \"version\": 1}", "f.json")
            .expect_err("no cluster");
        assert!(e.to_string().starts_with("f.json: invalid state: "), "{e}");
        let e = parse("{\"format\":", "f.json").expect_err("truncated");
        assert!(e.to_string().starts_with("f.json:1: not JSON"), "{e}");
    }
}
