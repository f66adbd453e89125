//! fake-pve's own controls (`/_fake`): the clock, task durations and
//! seeding. Only `@fake-only` scenarios use them; a real cluster never
//! sees these steps.

use cucumber::gherkin::Step;
use cucumber::{given, then, when};
use pve_client::{Method, Params};
use serde_json::json;

use crate::world::PveWorld;

#[given(expr = "{word} tasks take {int} seconds")]
async fn task_duration(w: &mut PveWorld, kind: String, secs: u64) {
    let body = json!({"default_ms": 0, "tasks": {kind: secs * 1000}}).to_string();
    w.control(
        Method::PUT,
        "/_fake/latency",
        Some(("application/json", body)),
    )
    .await;
}

#[when(regex = r"^(\d+) seconds? pass(?:es)?$")]
#[given(regex = r"^(\d+) seconds? (?:have|has) passed$")]
async fn time_passes(w: &mut PveWorld, secs: u64) {
    w.control(
        Method::POST,
        "/_fake/clock",
        Some((
            "application/x-www-form-urlencoded",
            format!("advance={secs}"),
        )),
    )
    .await;
}

#[given("the cluster is seeded with:")]
async fn seed(w: &mut PveWorld, step: &Step) {
    let yaml = w.expand(step.docstring.as_deref().unwrap_or_default());
    w.control(
        Method::POST,
        "/_fake/seed",
        Some(("application/yaml", yaml)),
    )
    .await;
}

#[given("the node has the guests:")]
async fn guests(w: &mut PveWorld, step: &Step) {
    let rows = step
        .table
        .as_ref()
        .map(|t| t.rows.clone())
        .unwrap_or_default();
    let mut yaml = String::from("vms:\n");
    let header = rows.first().cloned().unwrap_or_default();
    for row in rows.iter().skip(1) {
        let mut entry = Vec::new();
        let mut config = Vec::new();
        for (k, v) in header.iter().zip(row) {
            let v = w.expand(v);
            match k.as_str() {
                "vmid" => {
                    let id: u32 = v.parse().unwrap_or_else(|_| panic!("vmid {v}"));
                    w.guard_vmid(id);
                    entry.push(format!("vmid: {id}"));
                }
                "name" | "status" => entry.push(format!("{k}: {v}")),
                _ => config.push(format!("{k}: {v}")),
            }
        }
        entry.push(format!("config: {{{}}}", config.join(", ")));
        yaml.push_str(&format!("  - {{{}}}\n", entry.join(", ")));
    }
    w.control(
        Method::POST,
        "/_fake/seed",
        Some(("application/yaml", yaml)),
    )
    .await;
}

#[then(expr = "guest {string} is {string}")]
async fn guest_status(w: &mut PveWorld, vmid: String, status: String) {
    let vmid = w.expand(&vmid);
    let data = w
        .admin()
        .get("/cluster/resources", &Params::new().set("type", "vm"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let got = data
        .as_array()
        .and_then(|a| a.iter().find(|v| super::text(&v["vmid"]) == vmid))
        .map(|v| super::text(&v["status"]));
    assert_eq!(got.as_deref(), Some(status.as_str()), "{data}");
}

#[when(expr = "I save the world as checkpoint {string}")]
#[given(expr = "the world is saved as checkpoint {string}")]
async fn save_checkpoint(w: &mut PveWorld, name: String) {
    w.control(
        Method::POST,
        "/_fake/checkpoints",
        Some(("application/x-www-form-urlencoded", format!("name={name}"))),
    )
    .await;
}

#[when(expr = "I restore checkpoint {string}")]
async fn restore_checkpoint(w: &mut PveWorld, name: String) {
    w.control(
        Method::POST,
        &format!("/_fake/checkpoints/{name}/restore"),
        None,
    )
    .await;
}
