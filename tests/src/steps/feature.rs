//! Storage feature checks of a VM's disks: `vm_feature`
//! (`GET .../feature`).

use cucumber::gherkin::Step;
use cucumber::when;
use pve_client::{Method, Params};

use super::table_params;
use super::vm::vm_path;
use crate::world::PveWorld;

#[when(expr = "I ask whether VM {string} supports {string}")]
async fn vm_feature(w: &mut PveWorld, step: &Step, vm: String, feature: String) {
    let mut params = Params::new().set("feature", w.expand(&feature).as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    let path = vm_path(w, &vm, "/feature");
    w.call(Method::GET, &path, params).await;
}
