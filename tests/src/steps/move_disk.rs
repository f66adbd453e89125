//! Moving disks between storages: `move_vm_disk` (`POST .../move_disk`,
//! a `qmmove` task) and `unlink`.

use cucumber::gherkin::Step;
use cucumber::when;
use pve_client::{Method, Params};

use super::table_params;
use super::vm::{call_task, vm_path};
use crate::world::PveWorld;

#[when(expr = "I move disk {string} of VM {string} to storage {string}")]
async fn move_vm_disk(w: &mut PveWorld, step: &Step, disk: String, vm: String, storage: String) {
    let mut params = Params::new()
        .set("disk", w.expand(&disk).as_str())
        .set("storage", w.expand(&storage).as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    let path = vm_path(w, &vm, "/move_disk");
    call_task(w, Method::POST, &path, params).await;
}

#[when(expr = "I move disk {string} of VM {string} with:")]
async fn move_vm_disk_with(w: &mut PveWorld, step: &Step, disk: String, vm: String) {
    let mut params = Params::new().set("disk", w.expand(&disk).as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    let path = vm_path(w, &vm, "/move_disk");
    call_task(w, Method::POST, &path, params).await;
}

#[when(expr = "I unlink disks {string} of VM {string}")]
async fn unlink(w: &mut PveWorld, step: &Step, disks: String, vm: String) {
    let mut params = Params::new().set("idlist", w.expand(&disks).as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    let path = vm_path(w, &vm, "/unlink");
    w.call(Method::PUT, &path, params).await;
}
