//! Step definitions, one module per API area. A step that makes one PVE
//! call is named after PVE's method for it (`create_ticket`,
//! `read_task_status`, `nextid`), as fake-pve's handler and pve-client's
//! method are.
//!
//! This module holds what every area shares: acting as someone, calling
//! any path, and the assertions on what the last call answered. Texts in
//! features may use placeholders (`{node}`, `{vm1}`, `{user:alice}`, ...;
//! see [`crate::world::PveWorld::expand`]).

pub mod access;
pub mod acme;
pub mod agent;
pub mod auth;
pub mod backup;
pub mod ceph;
pub mod clone;
pub mod cloudinit;
pub mod cluster;
pub mod content;
pub mod fake;
pub mod feature;
pub mod firewall;
pub mod ha;
pub mod import;
pub mod join;
pub mod load;
pub mod lxc;
pub mod mapping;
pub mod migrate;
pub mod move_disk;
pub mod network;
pub mod node_hw;
pub mod nodes;
pub mod notify;
pub mod oci;
pub mod pbs;
pub mod power;
pub mod realms;
pub mod resize;
pub mod rrd;
pub mod sdn;
pub mod sdn_fabrics;
pub mod sdn_routing;
pub mod services;
pub mod snapshot;
pub mod storage;
pub mod tasks;
pub mod vm;

use cucumber::gherkin::Step;
use cucumber::{given, then, when};
use pve_client::{Method, Params};
use serde_json::Value;

use crate::world::{ADMIN, PveWorld};

/// The HTTP method named in a feature.
pub fn method(m: &str) -> Method {
    match m.to_ascii_uppercase().as_str() {
        "GET" => Method::GET,
        "POST" | "CREATE" => Method::POST,
        "PUT" | "SET" => Method::PUT,
        "DELETE" => Method::DELETE,
        other => panic!("unknown method {other}"),
    }
}

/// A step's table with a header row as JSON objects, one per further
/// row: each non-empty cell (placeholders expanded) under its column's
/// name, as `value` makes it of the column and the text.
pub fn table_objects(
    w: &PveWorld,
    step: &Step,
    value: impl Fn(&str, String) -> Value,
) -> Vec<Value> {
    let rows = step
        .table
        .as_ref()
        .map(|t| t.rows.clone())
        .unwrap_or_default();
    let header = rows.first().cloned().unwrap_or_default();
    rows.iter()
        .skip(1)
        .map(|row| {
            let entry: serde_json::Map<String, Value> = header
                .iter()
                .zip(row)
                .filter(|(_, v)| !v.is_empty())
                .map(|(k, v)| (k.clone(), value(k, w.expand(v))))
                .collect();
            Value::Object(entry)
        })
        .collect()
}

/// The two-column table of a step as parameters (placeholders expanded).
pub fn table_params(w: &PveWorld, step: &Step) -> Params {
    let mut p = Params::new();
    if let Some(t) = &step.table {
        for row in &t.rows {
            match row.as_slice() {
                [k, v] => p.push(w.expand(k), w.expand(v)),
                _ => panic!("parameter tables have two columns: name | value"),
            }
        }
    }
    p
}

/// The value at `field` of `data`: a member name, or a `/`-separated
/// path (`cap/vms/VM.Audit`, `0/node`).
pub fn field<'a>(data: &'a Value, field: &str) -> Option<&'a Value> {
    let mut v = data;
    for part in field.split('/') {
        v = match v {
            Value::Array(a) => a.get(part.parse::<usize>().ok()?)?,
            Value::Object(o) => o.get(part)?,
            _ => return None,
        };
    }
    Some(v)
}

/// A value as a feature writes it: strings bare, numbers and booleans as
/// JSON.
pub fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[given("I am the administrator")]
#[when("I act as the administrator")]
fn administrator(w: &mut PveWorld) {
    w.act_as(ADMIN);
}

#[when(expr = "I act as {string}")]
#[given(expr = "I act as {string}")]
fn act_as(w: &mut PveWorld, actor: String) {
    w.act_as(&actor);
}

#[when(expr = "I call {word} {string}")]
async fn call(w: &mut PveWorld, step: &Step, m: String, path: String) {
    let params = table_params(w, step);
    let path = w.expand(&path);
    w.call(method(&m), &path, params).await;
}

#[when(expr = "I call {word} {string} without credentials")]
async fn call_without_credentials(w: &mut PveWorld, step: &Step, m: String, path: String) {
    let params = table_params(w, step);
    let path = w.expand(&path);
    w.call_raw(method(&m), &path, &[], params).await;
}

#[when(expr = "I call {word} {string} with the header {string}")]
async fn call_with_header(w: &mut PveWorld, step: &Step, m: String, path: String, header: String) {
    let params = table_params(w, step);
    let path = w.expand(&path);
    let header = w.expand(&header);
    let (name, value) = header
        .split_once(": ")
        .unwrap_or_else(|| panic!("a header is 'Name: value', not '{header}'"));
    let headers = [(name.to_string(), value.to_string())];
    w.call_raw(method(&m), &path, &headers, params).await;
}

/// A form sent as it is, a key given twice sent twice (as proxmoxer,
/// Ansible's modules and `requests` send a list), with the
/// administrator's credentials.
#[when(expr = "I send the form {word} {string} with:")]
async fn send_form(w: &mut PveWorld, step: &Step, m: String, path: String) {
    let params = table_params(w, step);
    let path = w.expand(&path);
    let headers = w.admin_headers().await;
    w.call_raw(method(&m), &path, &headers, params).await;
}

/// pveproxy reads at most 64 lines after the request line; a request
/// with more is not answered. `n` headers of no meaning are added to the
/// client's own.
#[when(expr = "I call {word} {string} with {int} more headers")]
async fn call_with_more_headers(w: &mut PveWorld, step: &Step, m: String, path: String, n: usize) {
    let params = table_params(w, step);
    let path = w.expand(&path);
    let mut headers = w.admin_headers().await;
    headers.extend((0..n).map(|i| (format!("X-Filler-{i}"), "1".to_string())));
    w.raw_outcome(method(&m), &path, &headers, params, true)
        .await;
}

#[then("the connection is closed without an answer")]
fn closed_without_answer(w: &mut PveWorld) {
    let o = w.last();
    assert_eq!(o.status, 0, "{} was answered: {o:?}", o.request);
}

#[then("the call succeeds")]
fn succeeds(w: &mut PveWorld) {
    let o = w.last();
    assert!(
        o.ok(),
        "{} failed: {} {} {:?}",
        o.request,
        o.status,
        o.message,
        o.errors
    );
}

#[then(expr = "PVE answers {int} {string}")]
fn answers(w: &mut PveWorld, status: u16, message: String) {
    // `\n` stands for a line break inside a message.
    let message = w.expand(&message).replace("\\n", "\n");
    let o = w.last();
    assert_eq!(
        (o.status, o.message.as_str()),
        (status, message.as_str()),
        "{}: {o:?}",
        o.request
    );
}

// PVE skips permission checks for root@pam alone; for anyone else they
// run first, on the raw parameters, and may refuse what root@pam's
// request gets further with. A scenario states both answers, one step
// each; the step that is not about the current principal checks nothing.

#[then(expr = "PVE answers {int} {string} to root@pam")]
fn answers_root(w: &mut PveWorld, status: u16, message: String) {
    if w.acting_as_root() {
        answers(w, status, message);
    }
}

#[then(expr = "PVE answers {int} {string} to anyone else")]
fn answers_others(w: &mut PveWorld, status: u16, message: String) {
    if !w.acting_as_root() {
        answers(w, status, message);
    }
}

#[then(expr = "parameter {string} is rejected with {string} for root@pam")]
fn parameter_rejected_root(w: &mut PveWorld, param: String, message: String) {
    if w.acting_as_root() {
        parameter_rejected(w, param, message);
    }
}

#[then(expr = "PVE answers {int} {string} with no body")]
fn answers_without_body(w: &mut PveWorld, status: u16, reason: String) {
    let reason = w.expand(&reason);
    let o = w.last();
    assert_eq!(o.status, status, "{o:?}");
    assert_eq!(o.reason.as_deref(), Some(reason.as_str()), "{o:?}");
    assert_eq!(o.body.as_deref(), Some(""), "{o:?}");
}

#[then(expr = "the reason phrase is {string}")]
fn reason_phrase(w: &mut PveWorld, reason: String) {
    let reason = w.expand(&reason);
    let o = w.last();
    assert_eq!(o.reason.as_deref(), Some(reason.as_str()), "{o:?}");
}

#[then(expr = "parameter {string} is rejected with {string}")]
fn parameter_rejected(w: &mut PveWorld, param: String, message: String) {
    let message = w.expand(&message).replace("\\n", "\n");
    let o = w.last();
    assert_eq!(
        (o.status, o.message.as_str()),
        (400, "Parameter verification failed."),
        "{}: {o:?}",
        o.request
    );
    assert_eq!(
        o.errors.get(&param).map(String::as_str),
        Some(message.as_str()),
        "{}: errors {:?}",
        o.request,
        o.errors
    );
}

#[then("exactly these parameters are rejected:")]
fn parameters_rejected(w: &mut PveWorld, step: &Step) {
    let want: std::collections::BTreeMap<String, String> = step
        .table
        .as_ref()
        .map(|t| {
            t.rows
                .iter()
                .map(|r| (w.expand(&r[0]), w.expand(&r[1]).replace("\\n", "\n")))
                .collect()
        })
        .unwrap_or_default();
    let o = w.last();
    assert_eq!(o.status, 400, "{o:?}");
    assert_eq!(o.errors, want, "{}", o.request);
}

#[then(expr = "the answer is {string}")]
fn answer_is(w: &mut PveWorld, want: String) {
    // `\r` and `\n` stand for the line ends of a text answer.
    let want = w.expand(&want).replace("\\r", "\r").replace("\\n", "\n");
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    assert_eq!(o.data, Value::String(want), "{}", o.request);
}

#[then("the answer is null")]
fn answer_is_null(w: &mut PveWorld) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    assert_eq!(o.data, Value::Null, "{}", o.request);
}

#[then(expr = "the answer has {string} = {string}")]
fn answer_has_value(w: &mut PveWorld, name: String, want: String) {
    let (name, want) = (w.expand(&name), w.expand(&want));
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let got = field(&o.data, &name).map(text);
    assert_eq!(
        got.as_deref(),
        Some(want.as_str()),
        "{}: {}",
        o.request,
        o.data
    );
}

#[then(expr = "the answer has {string} matching {string}")]
fn answer_matches(w: &mut PveWorld, name: String, pattern: String) {
    let (name, pattern) = (w.expand(&name), w.expand(&pattern));
    let re = regex::Regex::new(&format!("^(?:{pattern})$")).unwrap_or_else(|e| panic!("{e}"));
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let got = field(&o.data, &name).map(text).unwrap_or_default();
    assert!(
        re.is_match(&got),
        "{}: {name} = {got:?} does not match {pattern}",
        o.request
    );
}

#[then(expr = "the answer has {string}")]
fn answer_has(w: &mut PveWorld, name: String) {
    let name = w.expand(&name);
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    assert!(
        field(&o.data, &name).is_some(),
        "{}: no {name} in {}",
        o.request,
        o.data
    );
}

#[then(expr = "the answer has no {string}")]
fn answer_has_no(w: &mut PveWorld, name: String) {
    let name = w.expand(&name);
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    assert!(
        field(&o.data, &name).is_none(),
        "{}: {name} in {}",
        o.request,
        o.data
    );
}

#[then(expr = "the answer's fields are {string}")]
fn answer_fields(w: &mut PveWorld, names: String) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let mut got: Vec<&str> = o
        .data
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    got.sort_unstable();
    let mut want: Vec<&str> = names.split(',').map(str::trim).collect();
    want.sort_unstable();
    assert_eq!(got, want, "{}: {}", o.request, o.data);
}

#[then(regex = r"^the answer is a list of (\d+) items?$")]
fn answer_list_len(w: &mut PveWorld, n: usize) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let len = o.data.as_array().map(Vec::len);
    assert_eq!(len, Some(n), "{}: {}", o.request, o.data);
}

fn items_with<'a>(data: &'a Value, name: &str, want: &str) -> Vec<&'a Value> {
    data.as_array()
        .map(|a| {
            a.iter()
                .filter(|i| field(i, name).map(text).as_deref() == Some(want))
                .collect()
        })
        .unwrap_or_default()
}

#[then(expr = "the answer lists {string} = {string}")]
fn answer_lists(w: &mut PveWorld, name: String, want: String) {
    let (name, want) = (w.expand(&name), w.expand(&want));
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    assert!(
        !items_with(&o.data, &name, &want).is_empty(),
        "{}: no item with {name} = {want} in {}",
        o.request,
        o.data
    );
}

#[then(expr = "the answer does not list {string} = {string}")]
fn answer_does_not_list(w: &mut PveWorld, name: String, want: String) {
    let (name, want) = (w.expand(&name), w.expand(&want));
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    assert!(
        items_with(&o.data, &name, &want).is_empty(),
        "{}: an item with {name} = {want} in {}",
        o.request,
        o.data
    );
}

#[then(expr = "the item with {string} = {string} has {string} = {string}")]
fn item_has(w: &mut PveWorld, key: String, id: String, name: String, want: String) {
    let (key, id, name, want) = (
        w.expand(&key),
        w.expand(&id),
        w.expand(&name),
        w.expand(&want),
    );
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let items = items_with(&o.data, &key, &id);
    let item = items
        .first()
        .unwrap_or_else(|| panic!("{}: no item with {key} = {id} in {}", o.request, o.data));
    assert_eq!(
        field(item, &name).map(text).as_deref(),
        Some(want.as_str()),
        "{}: {item}",
        o.request
    );
}

#[then(expr = "the item with {string} = {string} has no {string}")]
fn item_has_no(w: &mut PveWorld, key: String, id: String, name: String) {
    let (key, id, name) = (w.expand(&key), w.expand(&id), w.expand(&name));
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let items = items_with(&o.data, &key, &id);
    let item = items
        .first()
        .unwrap_or_else(|| panic!("{}: no item with {key} = {id} in {}", o.request, o.data));
    assert!(field(item, &name).is_none(), "{}: {item}", o.request);
}

#[then(expr = "every item has {string}")]
fn every_item_has(w: &mut PveWorld, name: String) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let items = o.data.as_array().cloned().unwrap_or_default();
    assert!(!items.is_empty(), "{}: an empty list", o.request);
    for i in &items {
        assert!(field(i, &name).is_some(), "{}: no {name} in {i}", o.request);
    }
}

#[then(expr = "no item has {string}")]
fn no_item_has(w: &mut PveWorld, name: String) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let items = o.data.as_array().cloned().unwrap_or_default();
    assert!(!items.is_empty(), "{}: an empty list", o.request);
    for i in &items {
        assert!(field(i, &name).is_none(), "{}: {name} in {i}", o.request);
    }
}

#[then(expr = "every item has {string} = {string}")]
fn every_item_has_value(w: &mut PveWorld, name: String, want: String) {
    let want = w.expand(&want);
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let items = o.data.as_array().cloned().unwrap_or_default();
    assert!(!items.is_empty(), "{}: an empty list", o.request);
    for i in &items {
        assert_eq!(
            field(i, &name).map(text).as_deref(),
            Some(want.as_str()),
            "{}: {i}",
            o.request
        );
    }
}

#[then(expr = "the total is {int}")]
fn total_is(w: &mut PveWorld, n: u64) {
    let o = w.last();
    assert_eq!(o.total, Some(n), "{}: {o:?}", o.request);
}

#[then("the answer has no total")]
fn no_total(w: &mut PveWorld) {
    let o = w.last();
    assert_eq!(o.total, None, "{}: {o:?}", o.request);
}

#[then(expr = "the permissions on {string} include {string}")]
fn permissions_include(w: &mut PveWorld, path: String, privs: String) {
    let path = w.expand(&path);
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let on = o
        .data
        .get(&path)
        .unwrap_or_else(|| panic!("no {path} in {}", o.data));
    for p in privs.split(',').map(str::trim) {
        assert_eq!(
            on.get(p).map(text).as_deref(),
            Some("1"),
            "{p} on {path}: {on}"
        );
    }
}
