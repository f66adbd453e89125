//! The cluster's services as monitoring and admin tools read them:
//! replication job logs and the cluster log, whose lines carry times and
//! so are matched by their ends.

use cucumber::then;
use serde_json::Value;

use crate::world::PveWorld;

/// The texts (`t` or `msg`) of the last answer's lines.
fn lines(w: &PveWorld) -> Vec<String> {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    o.data
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.get("t").or_else(|| i.get("msg")).and_then(Value::as_str))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// A line of the log read last (`read_job_log`, `log`) ends with `tail`.
#[then(expr = "a log line ends with {string}")]
fn a_line_ends_with(w: &mut PveWorld, tail: String) {
    let tail = w.expand(&tail);
    let all = lines(w);
    assert!(
        all.iter().any(|l| l.ends_with(&tail)),
        "no line ends with {tail:?}: {all:#?}"
    );
}

/// No line of the log read last contains `needle`.
#[then(expr = "no log line contains {string}")]
fn no_line_contains(w: &mut PveWorld, needle: String) {
    let needle = w.expand(&needle);
    let all = lines(w);
    assert!(
        !all.iter().any(|l| l.contains(&needle)),
        "a line contains {needle:?}: {all:#?}"
    );
}

/// A line of the log read last contains `needle`.
#[then(expr = "a log line contains {string}")]
fn a_line_contains(w: &mut PveWorld, needle: String) {
    let needle = w.expand(&needle);
    let all = lines(w);
    assert!(
        all.iter().any(|l| l.contains(&needle)),
        "no line contains {needle:?}: {all:#?}"
    );
}
