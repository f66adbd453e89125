//! High availability: HA resources (`create`), 8.x groups (`create`),
//! 9.x rules (`create_rule`), and waiting for the HA manager, whose
//! rounds take seconds on a real cluster and follow the emulated clock on
//! fake-pve.
//!
//! Every resource, group and rule a scenario makes is remembered before
//! the call and removed after the scenario (resources before their VMs).

use std::time::{Duration, Instant};

use cucumber::gherkin::Step;
use cucumber::{then, when};
use pve_client::{Method, Params};

use super::{field, table_params};
use crate::world::{Made, PveWorld};

/// `vm:<vmid>` of a feature's `{vm1}` (or a full sid as written).
fn sid(w: &PveWorld, text: &str) -> String {
    let t = w.expand(text);
    if t.contains(':') {
        t
    } else {
        format!("vm:{t}")
    }
}

#[when(expr = "I make {string} an HA resource")]
async fn create_plain(w: &mut PveWorld, who: String) {
    create(w, &who, Params::new()).await;
}

#[when(expr = "I make {string} an HA resource with:")]
async fn create_with(w: &mut PveWorld, who: String, step: &Step) {
    let p = table_params(w, step);
    create(w, &who, p).await;
}

async fn create(w: &mut PveWorld, who: &str, p: Params) {
    let text = w.expand(who);
    let sid = sid(w, who);
    w.made(Made::HaResource(sid));
    w.call(Method::POST, "/cluster/ha/resources", p.set("sid", text))
        .await;
}

#[when(expr = "I create HA group {string} with:")]
async fn create_group(w: &mut PveWorld, id: String, step: &Step) {
    let id = w.expand(&id);
    let p = table_params(w, step).set("group", id.as_str());
    w.made(Made::HaGroup(id));
    w.call(Method::POST, "/cluster/ha/groups", p).await;
}

#[when(expr = "I create HA rule {string} with:")]
async fn create_rule(w: &mut PveWorld, id: String, step: &Step) {
    let id = w.expand(&id);
    let p = table_params(w, step).set("rule", id.as_str());
    w.made(Made::HaRule(id));
    w.call(Method::POST, "/cluster/ha/rules", p).await;
}

/// Polls `path` until `done` holds for its answer, for at most `secs`
/// seconds: on fake-pve the emulated clock moves a second per try, on a
/// real cluster time passes.
async fn wait_for(
    w: &mut PveWorld,
    path: &str,
    secs: u64,
    done: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut tries = 0;
    loop {
        w.call(Method::GET, path, Params::new()).await;
        let o = w.last();
        assert!(o.ok(), "GET {path}: {}", o.message);
        let data = o.data.clone();
        if done(&data) {
            return data;
        }
        tries += 1;
        if w.advance_fake_clock(1) {
            assert!(tries <= secs, "GET {path} after {secs} s: {data}");
        } else {
            assert!(
                Instant::now() < deadline,
                "GET {path} after {secs} s: {data}"
            );
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
}

#[then(expr = "within {int} seconds VM {string} is {string}")]
async fn vm_becomes(w: &mut PveWorld, secs: u64, vm: String, status: String) {
    let path = super::vm::vm_path(w, &vm, "/status/current");
    wait_for(w, &path, secs, |d| {
        d.get("status").and_then(|s| s.as_str()) == Some(status.as_str())
    })
    .await;
}

#[then(expr = "within {int} seconds the HA service {string} is {string}")]
async fn service_becomes(w: &mut PveWorld, secs: u64, who: String, state: String) {
    let sid = sid(w, &who);
    let line = wait_for(w, "/cluster/ha/status/current", secs, |d| {
        d.as_array().is_some_and(|lines| {
            lines.iter().any(|l| {
                l.get("sid").and_then(|s| s.as_str()) == Some(sid.as_str())
                    && field(l, "state").and_then(|s| s.as_str()) == Some(state.as_str())
            })
        })
    })
    .await;
    assert!(line.is_array());
}
