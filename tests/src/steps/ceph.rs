//! Ceph's calls that start tasks (monitors, managers, metadata servers,
//! services, flags): the task is remembered for the task steps.

use cucumber::gherkin::Step;
use cucumber::when;

use super::{method, table_params, vm::call_task};
use crate::world::PveWorld;

#[when(expr = "I start the Ceph task {word} {string}")]
async fn ceph_task(w: &mut PveWorld, step: &Step, m: String, path: String) {
    let params = table_params(w, step);
    let path = w.expand(&path);
    call_task(w, method(&m), &path, params).await;
}
