//! Snapshots: `snapshot`, `snapshot_list`, `snapshot_cmd_idx`,
//! `get_snapshot_config`, `update_snapshot_config`, `rollback` and
//! `delsnapshot`.

use cucumber::gherkin::Step;
use cucumber::when;
use pve_client::api::seg;
use pve_client::{Method, Params};

use super::table_params;
use super::vm::{call_task, vm_path};
use crate::world::PveWorld;

fn snap_path(w: &PveWorld, vm: &str, snap: &str, tail: &str) -> String {
    vm_path(w, vm, &format!("/snapshot/{}{tail}", seg(&w.expand(snap))))
}

#[when(expr = "I take snapshot {string} of VM {string}")]
async fn snapshot(w: &mut PveWorld, step: &Step, snap: String, vm: String) {
    let mut params = Params::new().set("snapname", w.expand(&snap).as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    let path = vm_path(w, &vm, "/snapshot");
    call_task(w, Method::POST, &path, params).await;
}

#[when(expr = "I list the snapshots of VM {string}")]
async fn snapshot_list(w: &mut PveWorld, vm: String) {
    let path = vm_path(w, &vm, "/snapshot");
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I read snapshot {string} of VM {string}")]
async fn snapshot_cmd_idx(w: &mut PveWorld, snap: String, vm: String) {
    let path = snap_path(w, &vm, &snap, "");
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I read the config of snapshot {string} of VM {string}")]
async fn get_snapshot_config(w: &mut PveWorld, snap: String, vm: String) {
    let path = snap_path(w, &vm, &snap, "/config");
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I describe snapshot {string} of VM {string} as {string}")]
async fn update_snapshot_config(w: &mut PveWorld, snap: String, vm: String, text: String) {
    let path = snap_path(w, &vm, &snap, "/config");
    let params = Params::new().set("description", w.expand(&text).as_str());
    w.call(Method::PUT, &path, params).await;
}

#[when(expr = "I roll VM {string} back to snapshot {string}")]
async fn rollback(w: &mut PveWorld, step: &Step, vm: String, snap: String) {
    let params = table_params(w, step);
    let path = snap_path(w, &vm, &snap, "/rollback");
    call_task(w, Method::POST, &path, params).await;
}

#[when(expr = "I delete snapshot {string} of VM {string}")]
async fn delsnapshot(w: &mut PveWorld, step: &Step, snap: String, vm: String) {
    let params = table_params(w, step);
    let path = snap_path(w, &vm, &snap, "");
    call_task(w, Method::DELETE, &path, params).await;
}
