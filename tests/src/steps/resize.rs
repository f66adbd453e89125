//! Growing disks: `resize_vm` (`PUT .../resize`, a `resize` task whose
//! refusals end the task, not the request).

use cucumber::gherkin::Step;
use cucumber::when;
use pve_client::{Method, Params};

use super::table_params;
use super::vm::{call_task, vm_path};
use crate::world::PveWorld;

#[when(expr = "I resize disk {string} of VM {string} to {string}")]
async fn resize_vm(w: &mut PveWorld, step: &Step, disk: String, vm: String, size: String) {
    let mut params = Params::new()
        .set("disk", w.expand(&disk).as_str())
        .set("size", w.expand(&size).as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    let path = vm_path(w, &vm, "/resize");
    call_task(w, Method::PUT, &path, params).await;
}
