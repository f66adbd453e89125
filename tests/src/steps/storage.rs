//! Storage configuration and capacity: the storage list (`index`),
//! `read`, `create`, `update`, `delete` under `/storage`, and the node's
//! view (`/nodes/{node}/storage`, `read_status`).
//!
//! Storages a scenario defines are named `{storage:NAME}` (the
//! scenario's prefix) and removed after it.

use cucumber::gherkin::Step;
use cucumber::{given, then, when};
use pve_client::api::seg;
use pve_client::{Method, Params};

use super::table_params;
use crate::world::{Made, PveWorld};

#[when("I list the storages")]
async fn storage_index(w: &mut PveWorld, step: &Step) {
    let params = table_params(w, step);
    w.call(Method::GET, "/storage", params).await;
}

#[when(expr = "I read storage {string}")]
async fn storage_read(w: &mut PveWorld, id: String) {
    let path = format!("/storage/{}", seg(&w.expand(&id)));
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I define storage {string} with:")]
#[given(expr = "I define storage {string} with:")]
async fn storage_create(w: &mut PveWorld, step: &Step, id: String) {
    let id = w.expand(&id);
    w.made(Made::Storage(id.clone()));
    let mut params = Params::new().set("storage", id.as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    w.call(Method::POST, "/storage", params).await;
}

#[when(expr = "I update storage {string} with:")]
async fn storage_update(w: &mut PveWorld, step: &Step, id: String) {
    let params = table_params(w, step);
    let path = format!("/storage/{}", seg(&w.expand(&id)));
    w.call(Method::PUT, &path, params).await;
}

#[when(expr = "I remove storage {string}")]
async fn storage_delete(w: &mut PveWorld, id: String) {
    let path = format!("/storage/{}", seg(&w.expand(&id)));
    w.call(Method::DELETE, &path, Params::new()).await;
}

#[when(expr = "I list the storages of node {string}")]
async fn node_storage_index(w: &mut PveWorld, step: &Step, node: String) {
    let params = table_params(w, step);
    let path = format!("/nodes/{}/storage", seg(&w.expand(&node)));
    w.call(Method::GET, &path, params).await;
}

#[when(expr = "I read the status of storage {string} on node {string}")]
async fn read_status(w: &mut PveWorld, id: String, node: String) {
    let path = format!(
        "/nodes/{}/storage/{}/status",
        seg(&w.expand(&node)),
        seg(&w.expand(&id))
    );
    w.call(Method::GET, &path, Params::new()).await;
}

#[then("the storage's usage adds up")]
fn usage_adds_up(w: &mut PveWorld) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let d = &o.data;
    let n = |k: &str| {
        d[k].as_u64()
            .unwrap_or_else(|| panic!("{k} is not a number: {d}"))
    };
    let (total, used, avail) = (n("total"), n("used"), n("avail"));
    assert!(total > 0 && used <= total && avail <= total, "{d}");
    assert_eq!(d["active"], 1, "{d}");
}
