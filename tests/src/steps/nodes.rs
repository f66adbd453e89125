//! A node's own settings, services and logs: steps that read the
//! answers of `syslog`, `journal` and `get_config` (the calls themselves
//! go through `I call ...`).

use cucumber::{then, when};
use pve_client::api::seg;
use pve_client::{Method, Params};
use serde_json::Value;

use crate::world::PveWorld;

/// `POST /nodes/{node}/services/{service}/{cmd}` (`service_start`,
/// `service_stop`, `service_restart`, `service_reload`): a task.
#[when(expr = "I {word} service {string} of node {string}")]
async fn service_cmd(w: &mut PveWorld, cmd: String, service: String, node: String) {
    let path = format!(
        "/nodes/{}/services/{}/{cmd}",
        seg(&w.expand(&node)),
        seg(&w.expand(&service))
    );
    super::vm::call_task(w, Method::POST, &path, Params::new()).await;
}

/// The text of one line of a log answer: a `syslog` item's `t`, or a
/// `journal` line.
fn line_text(v: &Value) -> &str {
    v.as_str()
        .or_else(|| v.get("t").and_then(Value::as_str))
        .unwrap_or_default()
}

#[then(expr = "a line of the answer contains {string}")]
fn a_line_contains(w: &mut PveWorld, needle: String) {
    let needle = w.expand(&needle);
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let lines = o.data.as_array().cloned().unwrap_or_default();
    assert!(
        lines.iter().any(|l| line_text(l).contains(&needle)),
        "{}: no line contains {needle:?} in {}",
        o.request,
        o.data
    );
}

#[then("the answer is an empty object")]
fn empty_object(w: &mut PveWorld) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    assert!(
        o.data.as_object().is_some_and(serde_json::Map::is_empty),
        "{}: {}",
        o.request,
        o.data
    );
}
