//! `fake-pve compare`: the same GETs against a cluster and against a
//! fake-pve started from its capture, and where their answers differ in
//! keys, types or values ([`super::MOVING`] figures aside).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use pve_client::{Client, Config};
use serde::Serialize;
use serde_json::Value;

use super::{Reader, Source, TwinError, capture, is_moving};
use crate::{FakePve, Scenario, Tls};

/// What names an entry of a list, tried in order: the first that every
/// entry has, and that tells them apart, matches entries across the
/// answers rather than their positions.
const IDENTITY: &[&[&str]] = &[
    &["id"],
    &["upid"],
    &["volid"],
    &["path", "type", "ugid", "roleid"],
    &["vmid"],
    &["key"],
    &["sid"],
    &["userid"],
    &["tokenid"],
    &["groupid"],
    &["roleid"],
    &["poolid"],
    &["storage"],
    &["node"],
    &["iface"],
    &["realm"],
    &["vnet"],
    &["zone"],
    &["subnet"],
    &["cidr"],
    &["rule"],
    &["group"],
    &["pos"],
    &["name"],
    &["type"],
];

/// What a twin makes anew where the cluster's cannot be read or made
/// again: a call's path prefix and the place in its answer (a JSON
/// pointer prefix). An ACME account registered again has a new key and
/// a new creation time.
pub const ANEW: &[(&str, &str)] = &[
    ("/cluster/acme/account/", "/account/key"),
    ("/cluster/acme/account/", "/account/createdAt"),
];

/// One difference in one answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    /// Where, as a JSON pointer (`/3/maxmem`; a list entry by its
    /// identity, `/[vmid=100]/name`).
    pub at: String,
    /// `missing` (the twin lacks it), `extra` (only the twin has it),
    /// `type` or `value`.
    pub kind: &'static str,
    /// The cluster's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub real: Option<Value>,
    /// The twin's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub twin: Option<Value>,
}

/// One call compared.
#[derive(Debug, Clone, Serialize)]
pub struct CallReport {
    /// The path read.
    pub path: String,
    /// `same`, `differs` or `unread` (the cluster refused it).
    pub outcome: &'static str,
    /// The differences (none when the answers agree).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<Difference>,
    /// The cluster's error, when it refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The counts of a comparison.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Calls compared.
    pub calls: usize,
    /// Calls answered alike.
    pub same: usize,
    /// Calls answered differently.
    pub differ: usize,
    /// Calls the cluster did not answer (permissions).
    pub unread: usize,
    /// Differences in all.
    pub differences: usize,
}

/// The report of `fake-pve compare` (also written as JSON).
#[derive(Debug, Clone, Serialize)]
pub struct CompareReport {
    /// The cluster's endpoint.
    pub source: String,
    /// Its release.
    pub release: String,
    /// The GETs of the capture.
    pub capture_calls: u64,
    /// The counts.
    pub summary: Summary,
    /// Each call.
    pub calls: Vec<CallReport>,
    /// The figures left out, wherever they stand.
    pub moving: Vec<&'static str>,
}

impl CompareReport {
    /// Whether the twin answered every call as the cluster did.
    pub fn faithful(&self) -> bool {
        self.summary.differ == 0
    }

    /// The report as text: a line per call, one per difference below
    /// it, and the summary.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for c in &self.calls {
            let tag = match c.outcome {
                "same" => "same   ",
                "differs" => "DIFFERS",
                _ => "unread ",
            };
            out.push_str(&format!("{tag} GET {}\n", c.path));
            if let Some(e) = &c.error {
                out.push_str(&format!("    {e}\n"));
            }
            for d in &c.differences {
                let show = |v: &Option<Value>| v.as_ref().map_or("-".into(), Value::to_string);
                out.push_str(&format!(
                    "    {} {}: real {} twin {}\n",
                    d.kind,
                    d.at,
                    show(&d.real),
                    show(&d.twin)
                ));
            }
        }
        let s = &self.summary;
        out.push_str(&format!(
            "PVE {} at {}: {} calls, {} same, {} differ ({} differences), {} not readable\n",
            self.release, self.source, s.calls, s.same, s.differ, s.differences, s.unread
        ));
        out
    }
}

/// Captures the cluster `source` names, starts its twin and compares
/// them on the capture's reads, or on `paths` when given.
///
/// # Errors
/// As [`capture`], and when the twin does not start.
pub async fn compare(
    source: &Source,
    paths: Option<Vec<String>>,
) -> Result<CompareReport, TwinError> {
    compare_client(source.client()?, &source.url, paths).await
}

/// [`compare`] with a client made already.
///
/// # Errors
/// As [`compare`].
pub async fn compare_client(
    client: Client,
    url: &str,
    paths: Option<Vec<String>>,
) -> Result<CompareReport, TwinError> {
    let reader = Arc::new(Reader::new(client));
    let cap = capture(Arc::clone(&reader), url).await?;
    let yaml = cap.to_yaml(url);
    let scenario =
        Scenario::read_owned(yaml, "<capture>").map_err(|e| TwinError::Twin(e.to_string()))?;
    let password = format!("twin-{}", uuid::Uuid::new_v4());
    let twin = FakePve::builder()
        .listen(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
        .tls(Tls::Off)
        .root_password(password.clone())
        .pve_version(cap.release)
        .auth_failure_delay(std::time::Duration::ZERO)
        .scenario(scenario)
        .start()
        .await
        .map_err(|e| TwinError::Twin(e.to_string()))?;
    let twin_client = Config::builder()
        .endpoint(twin.url())
        .password("root@pam", password)
        .build()
        .and_then(Client::new)
        .map_err(|e| TwinError::Twin(e.to_string()))?;
    let twin_reader = Reader::new(twin_client);
    let list = paths.unwrap_or_else(|| cap.paths.clone());
    let calls = compare_readers(&reader, &twin_reader, list).await;
    twin.shutdown().await;
    Ok(CompareReport::new(url, cap.release, cap.calls, calls))
}

/// The same GETs (each path once) on `real` and `twin`.
pub async fn compare_readers(real: &Reader, twin: &Reader, paths: Vec<String>) -> Vec<CallReport> {
    let mut seen = BTreeSet::new();
    let mut calls = Vec::new();
    for path in paths {
        if seen.insert(path.clone()) {
            calls.push(compare_one(real, twin, &path).await);
        }
    }
    calls
}

impl CompareReport {
    /// The report of `calls` compared on the cluster at `url`.
    pub fn new(
        url: &str,
        release: crate::PveVersion,
        capture_calls: u64,
        calls: Vec<CallReport>,
    ) -> Self {
        let mut summary = Summary {
            calls: calls.len(),
            ..Summary::default()
        };
        for c in &calls {
            match c.outcome {
                "same" => summary.same += 1,
                "differs" => summary.differ += 1,
                _ => summary.unread += 1,
            }
            summary.differences += c.differences.len();
        }
        Self {
            source: url.to_string(),
            release: release.release().to_string(),
            capture_calls,
            summary,
            calls,
            moving: super::MOVING.to_vec(),
        }
    }
}

/// One GET on both sides.
async fn compare_one(real: &Reader, twin: &Reader, path: &str) -> CallReport {
    let (a, b) = (real.get_raw(path).await, twin.get_raw(path).await);
    let mut report = CallReport {
        path: path.to_string(),
        outcome: "same",
        differences: Vec::new(),
        error: None,
    };
    match (a, b) {
        (Ok(a), Ok(b)) => {
            diff("", &a, &b, &mut report.differences);
            report.differences.retain(|d| {
                !ANEW
                    .iter()
                    .any(|(call, at)| path.starts_with(call) && d.at.starts_with(at))
            });
        }
        (Err(e), _) if super::skippable(&e) => {
            report.outcome = "unread";
            report.error = Some(e.to_string());
        }
        (Err(e), Ok(b)) => report.differences.push(Difference {
            at: String::new(),
            kind: "status",
            real: Some(Value::String(e.to_string())),
            twin: Some(b),
        }),
        (Ok(a), Err(e)) => report.differences.push(Difference {
            at: String::new(),
            kind: "status",
            real: Some(a),
            twin: Some(Value::String(e.to_string())),
        }),
        (Err(a), Err(b)) => {
            if a.to_string() != b.to_string() {
                report.differences.push(Difference {
                    at: String::new(),
                    kind: "status",
                    real: Some(Value::String(a.to_string())),
                    twin: Some(Value::String(b.to_string())),
                });
            }
        }
    }
    if !report.differences.is_empty() {
        report.outcome = "differs";
    }
    report
}

/// The differences between `a` (the cluster's) and `b` (the twin's).
pub fn diff(at: &str, a: &Value, b: &Value, out: &mut Vec<Difference>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                if is_moving(k) {
                    continue;
                }
                let here = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                match (x.get(k), y.get(k)) {
                    (Some(v), Some(w)) => diff(&here, v, w, out),
                    (Some(v), None) => out.push(missing(here, v)),
                    (None, Some(w)) => out.push(extra(here, w)),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => match (keyed(x), keyed(y)) {
            (Some(kx), Some(ky)) => {
                let keys: BTreeSet<&String> = kx.keys().chain(ky.keys()).collect();
                for k in keys {
                    let here = format!("{at}/[{k}]");
                    match (kx.get(k), ky.get(k)) {
                        (Some(v), Some(w)) => diff(&here, v, w, out),
                        (Some(v), None) => out.push(missing(here, v)),
                        (None, Some(w)) => out.push(extra(here, w)),
                        (None, None) => {}
                    }
                }
            }
            _ => {
                for i in 0..x.len().max(y.len()) {
                    let here = format!("{at}/{i}");
                    match (x.get(i), y.get(i)) {
                        (Some(v), Some(w)) => diff(&here, v, w, out),
                        (Some(v), None) => out.push(missing(here, v)),
                        (None, Some(w)) => out.push(extra(here, w)),
                        (None, None) => {}
                    }
                }
            }
        },
        _ if kind(a) != kind(b) => out.push(Difference {
            at: at.to_string(),
            kind: "type",
            real: Some(a.clone()),
            twin: Some(b.clone()),
        }),
        _ if a != b => out.push(Difference {
            at: at.to_string(),
            kind: "value",
            real: Some(a.clone()),
            twin: Some(b.clone()),
        }),
        _ => {}
    }
}

fn missing(at: String, v: &Value) -> Difference {
    Difference {
        at,
        kind: "missing",
        real: Some(v.clone()),
        twin: None,
    }
}

fn extra(at: String, w: &Value) -> Difference {
    Difference {
        at,
        kind: "extra",
        real: None,
        twin: Some(w.clone()),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A list of objects by their identities ([`IDENTITY`]), when one
/// names each entry.
fn keyed(list: &[Value]) -> Option<BTreeMap<String, &Value>> {
    'identity: for keys in IDENTITY {
        let mut out = BTreeMap::new();
        for v in list {
            let o = v.as_object()?;
            let mut id = Vec::new();
            for k in *keys {
                let Some(x) = o.get(*k) else {
                    continue 'identity;
                };
                id.push(format!("{k}={}", super::convert::text(x)));
            }
            if out.insert(id.join(","), v).is_some() {
                continue 'identity;
            }
        }
        return Some(out);
    }
    None
}

/// The paths of a `--paths` file: one a line, `#` comments and blank
/// lines left out.
pub fn read_paths(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.trim_start_matches("GET ").trim().to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn differences(a: Value, b: Value) -> Vec<(String, &'static str)> {
        let mut out = Vec::new();
        diff("", &a, &b, &mut out);
        out.into_iter().map(|d| (d.at, d.kind)).collect()
    }

    #[test]
    fn moving_figures_are_left_out() {
        let a = json!({"uptime": 1, "cpu": 0.1, "name": "a"});
        let b = json!({"uptime": 9, "cpu": 0.7, "name": "a"});
        assert!(differences(a, b).is_empty());
    }

    #[test]
    fn keys_types_and_values() {
        let a = json!({"a": 1, "b": "x", "c": 1, "gone": true});
        let b = json!({"a": "1", "b": "y", "c": 1, "new": 0});
        assert_eq!(
            differences(a, b),
            [
                ("/a".to_string(), "type"),
                ("/b".to_string(), "value"),
                ("/gone".to_string(), "missing"),
                ("/new".to_string(), "extra"),
            ]
        );
    }

    #[test]
    fn list_entries_match_by_identity_not_position() {
        let a = json!([{"vmid": 100, "name": "a"}, {"vmid": 101, "name": "b"}]);
        let b = json!([{"vmid": 101, "name": "b"}, {"vmid": 100, "name": "z"}]);
        assert_eq!(
            differences(a, b),
            [("/[vmid=100]/name".to_string(), "value")]
        );
    }

    #[test]
    fn lists_without_identity_match_by_position() {
        assert_eq!(
            differences(json!(["a", "b"]), json!(["a"])),
            [("/1".to_string(), "missing")]
        );
    }

    #[test]
    fn paths_file() {
        let text = "# reads\n/version\n\nGET /nodes\n";
        assert_eq!(read_paths(text), ["/version", "/nodes"]);
    }
}
