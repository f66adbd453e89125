//! A VM's statistics: `rrddata` (`GET .../rrddata`).

use cucumber::gherkin::Step;
use cucumber::{then, when};
use pve_client::{Method, Params};

use super::table_params;
use super::vm::vm_path;
use crate::world::PveWorld;

#[when(expr = "I read the {word} statistics of VM {string}")]
async fn rrddata(w: &mut PveWorld, step: &Step, timeframe: String, vm: String) {
    let mut params = Params::new().set("timeframe", timeframe.as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    let path = vm_path(w, &vm, "/rrddata");
    w.call(Method::GET, &path, params).await;
}

#[then(expr = "the points are {int} seconds apart")]
fn points_apart(w: &mut PveWorld, secs: i64) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let times: Vec<i64> = o
        .data
        .as_array()
        .map(|a| a.iter().filter_map(|p| p["time"].as_i64()).collect())
        .unwrap_or_default();
    assert!(times.len() > 1, "{}: {}", o.request, o.data);
    for pair in times.windows(2) {
        assert_eq!(pair[1] - pair[0], secs, "{}: {times:?}", o.request);
    }
}
