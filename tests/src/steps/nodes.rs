//! A node's own settings, services and logs: steps that read the
//! answers of `syslog`, `journal` and `get_config` (the calls themselves
//! go through `I call ...`).

use cucumber::then;
use serde_json::Value;

use crate::world::PveWorld;

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
