//! Clones and templates: `clone_vm` and `template`.

use cucumber::gherkin::Step;
use cucumber::when;
use pve_client::{Method, Params};

use super::table_params;
use super::vm::{call_task, vm_path, vmid};
use crate::world::{Made, PveWorld};

#[when(expr = "I clone VM {string} to {string}")]
async fn clone_vm(w: &mut PveWorld, step: &Step, vm: String, new: String) {
    let newid = vmid(w, &new);
    // Remembered first: a refused clone must not be left behind either.
    w.made(Made::Vm(newid));
    let mut params = Params::new().set("newid", newid);
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    let path = vm_path(w, &vm, "/clone");
    call_task(w, Method::POST, &path, params).await;
}

#[when(expr = "I convert VM {string} to a template")]
async fn template(w: &mut PveWorld, step: &Step, vm: String) {
    let params = table_params(w, step);
    let path = vm_path(w, &vm, "/template");
    call_task(w, Method::POST, &path, params).await;
}
