//! A node's disks, hardware, packages and scans: the calls that start a
//! task (`zfscreate`, `lvmcreate`, `dircreate`, `diskinit`, `wipedisk`,
//! `aptupdate`, ...) keep its UPID for the task steps.

use cucumber::gherkin::Step;
use cucumber::when;
use pve_client::api::tasks::Upid;

use super::{method, table_params};
use crate::world::PveWorld;

#[when(expr = "I start the task {word} {string}")]
async fn start_task(w: &mut PveWorld, step: &Step, m: String, path: String) {
    let params = table_params(w, step);
    let path = w.expand(&path);
    w.call(method(&m), &path, params).await;
    let o = w.last();
    if o.ok() {
        let upid: Upid = o
            .data
            .as_str()
            .unwrap_or_default()
            .parse()
            .unwrap_or_else(|e| panic!("{m} {path} answered {}: {e}", o.data));
        w.upids.push(upid);
    }
}
