//! The guest agent: every call under `/nodes/{node}/qemu/{vmid}/agent/`
//! (`agent_ping`, `agent_get_osinfo`, `agent_exec`, `agent_file_read`,
//! ...) and the legacy `agent` call.

use cucumber::gherkin::Step;
use cucumber::when;
use pve_client::{Method, Params};

use super::table_params;
use super::vm::vm_path;
use crate::world::PveWorld;

/// The calls PVE serves with GET; every other agent call is a POST.
const GETS: [&str; 13] = [
    "info",
    "get-fsinfo",
    "get-host-name",
    "get-memory-block-info",
    "get-memory-blocks",
    "get-osinfo",
    "get-time",
    "get-timezone",
    "get-users",
    "get-vcpus",
    "network-get-interfaces",
    "exec-status",
    "file-read",
];

#[when(expr = "I ask the guest agent of VM {string} for {string}")]
async fn agent_call(w: &mut PveWorld, step: &Step, vm: String, command: String) {
    let params = table_params(w, step);
    let method = if GETS.contains(&command.as_str()) {
        Method::GET
    } else {
        Method::POST
    };
    let path = vm_path(w, &vm, &format!("/agent/{command}"));
    w.call(method, &path, params).await;
}

#[when(expr = "I send the guest agent of VM {string} the command {string}")]
async fn agent(w: &mut PveWorld, vm: String, command: String) {
    let path = vm_path(w, &vm, "/agent");
    let params = Params::new().set("command", command.as_str());
    w.call(Method::POST, &path, params).await;
}

#[when(expr = "I list the guest agent calls of VM {string}")]
async fn agent_index(w: &mut PveWorld, vm: String) {
    let path = vm_path(w, &vm, "/agent");
    w.call(Method::GET, &path, Params::new()).await;
}
