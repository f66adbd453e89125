//! Node power, `execute` batches and bulk actions on guests: reboot and
//! shutdown (`POST /nodes/{node}/status`), a node's state in the node
//! list, bringing a node back through fake-pve's control API, the
//! cluster's bulk actions (`/cluster/bulk-action/guest/*`) and
//! `POST /nodes/{node}/execute`.

use cucumber::gherkin::Step;
use cucumber::{then, when};
use pve_client::api::seg;
use pve_client::{Method, Params};
use serde_json::Value;

use crate::world::PveWorld;

#[when(regex = r#"^I (reboot|shut down) node "([^"]*)"$"#)]
async fn node_cmd(w: &mut PveWorld, what: String, node: String) {
    let command = if what == "reboot" {
        "reboot"
    } else {
        "shutdown"
    };
    let path = format!("/nodes/{}/status", seg(&w.expand(&node)));
    w.call(Method::POST, &path, Params::new().set("command", command))
        .await;
}

#[then(expr = "node {string} is {word} in the node list")]
async fn node_listed_as(w: &mut PveWorld, node: String, status: String) {
    let node = w.expand(&node);
    let data = w
        .admin()
        .get("/nodes", &Params::new())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let got = data
        .as_array()
        .and_then(|a| a.iter().find(|n| super::text(&n["node"]) == node))
        .map(|n| super::text(&n["status"]));
    assert_eq!(got.as_deref(), Some(status.as_str()), "{data}");
}

#[when(expr = "node {string} is booted through the control API")]
async fn boot(w: &mut PveWorld, node: String) {
    let path = format!("/_fake/nodes/{}/boot", seg(&w.expand(&node)));
    w.control(Method::POST, &path, None).await;
}

/// `POST /cluster/bulk-action/guest/{action}` on the guests listed (by
/// commas), with the table's parameters: a task.
#[when(expr = "I {word} the guests {string} in bulk")]
async fn bulk(w: &mut PveWorld, step: &Step, action: String, vms: String) {
    let ids: Vec<String> = w
        .expand(&vms)
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let params = super::table_params(w, step).array("vms", &ids);
    let path = format!("/cluster/bulk-action/guest/{action}");
    super::vm::call_task(w, Method::POST, &path, params).await;
}

/// `POST /nodes/{node}/execute` with the docstring's JSON array of
/// commands.
#[when(expr = "I run these calls on node {string}:")]
async fn execute(w: &mut PveWorld, step: &Step, node: String) {
    let commands = w.expand(step.docstring.as_deref().unwrap_or("[]"));
    let path = format!("/nodes/{}/execute", seg(&w.expand(&node)));
    w.call(Method::POST, &path, Params::new().set("commands", commands))
        .await;
}

#[then(regex = r"^call (\d+) of the batch answered (\d+)$")]
fn batch_status(w: &mut PveWorld, n: usize, status: u16) {
    batch_answer(w, n, status, "");
}

#[then(regex = r#"^call (\d+) of the batch answered (\d+) "(.*)"$"#)]
fn batch_message(w: &mut PveWorld, n: usize, status: u16, message: String) {
    batch_answer(w, n, status, &message);
}

/// Asserts the status (and, unless empty, the message) of the `n`th
/// answer of an `execute` batch.
fn batch_answer(w: &mut PveWorld, n: usize, status: u16, message: &str) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let item = o
        .data
        .as_array()
        .and_then(|a| a.get(n.saturating_sub(1)))
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(
        item["status"].as_u64(),
        Some(u64::from(status)),
        "{}",
        o.data
    );
    if !message.is_empty() {
        let message = w.expand(message);
        assert_eq!(
            item["message"].as_str().map(str::trim_end),
            Some(message.as_str()),
            "{}",
            o.data
        );
    }
}

/// `POST /nodes/{node}/migrateall` to `target`, with the table's
/// parameters: a task.
#[when(expr = "I migrate the guests of node {string} to {string}")]
async fn migrateall(w: &mut PveWorld, step: &Step, node: String, target: String) {
    let params = super::table_params(w, step).set("target", w.expand(&target));
    let path = format!("/nodes/{}/migrateall", seg(&w.expand(&node)));
    super::vm::call_task(w, Method::POST, &path, params).await;
}
