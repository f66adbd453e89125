//! Migration: `migrate_vm` (`POST .../migrate`, a `qmigrate` task) and
//! `migrate_vm_precondition` (`GET .../migrate`). A VM a scenario moves
//! to another node is moved back before it ends, so that the World's
//! cleanup finds it on the test node.

use cucumber::gherkin::Step;
use cucumber::when;
use pve_client::api::seg;
use pve_client::{Method, Params};

use super::table_params;
use super::vm::{call_task, vm_path, vmid};
use crate::world::PveWorld;

fn on_node(w: &PveWorld, node: &str, vm: &str, tail: &str) -> String {
    format!("/nodes/{}/qemu/{}{tail}", seg(&w.expand(node)), vmid(w, vm))
}

#[when(expr = "I migrate VM {string} to node {string}")]
async fn migrate_vm(w: &mut PveWorld, step: &Step, vm: String, target: String) {
    let mut params = Params::new().set("target", w.expand(&target).as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    let path = vm_path(w, &vm, "/migrate");
    call_task(w, Method::POST, &path, params).await;
}

#[when(expr = "I migrate VM {string} from node {string} to node {string}")]
async fn migrate_vm_from(w: &mut PveWorld, step: &Step, vm: String, from: String, target: String) {
    let mut params = Params::new().set("target", w.expand(&target).as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    let path = on_node(w, &from, &vm, "/migrate");
    call_task(w, Method::POST, &path, params).await;
}

#[when(expr = "I read the migration preconditions of VM {string}")]
async fn migrate_vm_precondition(w: &mut PveWorld, step: &Step, vm: String) {
    let params = table_params(w, step);
    let path = vm_path(w, &vm, "/migrate");
    w.call(Method::GET, &path, params).await;
}

#[when(expr = "I read the config of VM {string} on node {string}")]
async fn vm_config_on(w: &mut PveWorld, vm: String, node: String) {
    let path = on_node(w, &node, &vm, "/config");
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I read the status of VM {string} on node {string}")]
async fn vm_status_on(w: &mut PveWorld, vm: String, node: String) {
    let path = on_node(w, &node, &vm, "/status/current");
    w.call(Method::GET, &path, Params::new()).await;
}
