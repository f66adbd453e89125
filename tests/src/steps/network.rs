//! The node's network: `index` (the interface list, with the pending
//! `changes`), `network_config`, `create_network`, `update_network`,
//! `delete_network`, `reload_network_config` (apply) and
//! `revert_network_changes`.

use cucumber::gherkin::Step;
use cucumber::{then, when};
use pve_client::api::seg;
use pve_client::{Method, Params};

use super::table_params;
use super::vm::call_task;
use crate::world::PveWorld;

fn net_path(w: &PveWorld, node: &str, tail: &str) -> String {
    format!("/nodes/{}/network{tail}", seg(&w.expand(node)))
}

/// Lists the interfaces over plain HTTP, so that the top-level `changes`
/// PVE adds beside `data` can be read.
#[when(expr = "I list the network interfaces of node {string}")]
async fn network_index(w: &mut PveWorld, step: &Step, node: String) {
    let params = table_params(w, step);
    let path = net_path(w, &node, "");
    let headers = w.admin_headers().await;
    w.call_raw(Method::GET, &path, &headers, params).await;
}

#[when(expr = "I read network interface {string} of node {string}")]
async fn network_config(w: &mut PveWorld, iface: String, node: String) {
    let path = net_path(w, &node, &format!("/{}", seg(&w.expand(&iface))));
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I create network interface {string} on node {string} with:")]
async fn create_network(w: &mut PveWorld, step: &Step, iface: String, node: String) {
    let mut params = Params::new().set("iface", w.expand(&iface).as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    let path = net_path(w, &node, "");
    w.call(Method::POST, &path, params).await;
}

#[when(expr = "I update network interface {string} of node {string} with:")]
async fn update_network(w: &mut PveWorld, step: &Step, iface: String, node: String) {
    let params = table_params(w, step);
    let path = net_path(w, &node, &format!("/{}", seg(&w.expand(&iface))));
    w.call(Method::PUT, &path, params).await;
}

#[when(expr = "I delete network interface {string} of node {string}")]
async fn delete_network(w: &mut PveWorld, iface: String, node: String) {
    let path = net_path(w, &node, &format!("/{}", seg(&w.expand(&iface))));
    w.call(Method::DELETE, &path, Params::new()).await;
}

#[when(expr = "I apply the pending network changes of node {string}")]
async fn reload_network_config(w: &mut PveWorld, node: String) {
    let path = net_path(w, &node, "");
    call_task(w, Method::PUT, &path, Params::new()).await;
}

#[when(expr = "I revert the pending network changes of node {string}")]
async fn revert_network_changes(w: &mut PveWorld, node: String) {
    let path = net_path(w, &node, "");
    w.call(Method::DELETE, &path, Params::new()).await;
}

fn changes(w: &PveWorld) -> Option<String> {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let body: serde_json::Value =
        serde_json::from_str(o.body.as_deref().unwrap_or_default()).unwrap_or_default();
    body.get("changes")
        .map(|c| c.as_str().unwrap_or_default().to_string())
}

#[then(expr = "the pending changes add the line {string}")]
fn changes_add(w: &mut PveWorld, line: String) {
    let line = format!("+{}", w.expand(&line));
    let diff = changes(w).unwrap_or_else(|| panic!("no changes in {:?}", w.last().body));
    assert!(
        diff.starts_with("--- /etc/network/interfaces"),
        "not a unified diff: {diff}"
    );
    assert!(
        diff.lines().any(|l| l == line),
        "no line {line:?} in\n{diff}"
    );
}

#[then("there are no pending network changes")]
fn no_changes(w: &mut PveWorld) {
    assert_eq!(changes(w), None, "{:?}", w.last().body);
}
