//! Tasks: node-wide `startall` and `stopall`, and the task calls
//! (`node_tasks`, `read_task_status`, `read_task_log`, `stop_task`).
//!
//! Waiting never sleeps on fake-pve: its clock is manual, so a task has
//! either ended or waits for the scenario to let time pass. On a real
//! cluster the status is polled.

use std::time::{Duration, Instant};

use cucumber::gherkin::Step;
use cucumber::{then, when};
use pve_client::api::seg;
use pve_client::api::tasks::Upid;
use pve_client::{Method, Params};

use super::{table_params, text};
use crate::world::PveWorld;

async fn node_power(w: &mut PveWorld, call: &str, node: &str, params: Params) {
    let path = format!("/nodes/{}/{call}", seg(&w.expand(node)));
    w.call(Method::POST, &path, params).await;
    let o = w.last();
    if o.ok() {
        let upid: Upid = o
            .data
            .as_str()
            .unwrap_or_default()
            .parse()
            .unwrap_or_else(|e| panic!("{call} answered {}: {e}", o.data));
        w.upids.push(upid);
    }
}

#[when(expr = "I start all guests on node {string}")]
async fn startall(w: &mut PveWorld, step: &Step, node: String) {
    let params = table_params(w, step);
    node_power(w, "startall", &node, params).await;
}

#[when(expr = "I stop all guests on node {string}")]
async fn stopall(w: &mut PveWorld, step: &Step, node: String) {
    let params = table_params(w, step);
    node_power(w, "stopall", &node, params).await;
}

#[when(expr = "I start the guests {string} on node {string}")]
async fn startall_vms(w: &mut PveWorld, vms: String, node: String) {
    let params = Params::new().set("vms", w.expand(&vms).as_str());
    node_power(w, "startall", &node, params).await;
}

#[when(expr = "I stop the guests {string} on node {string}")]
async fn stopall_vms(w: &mut PveWorld, vms: String, node: String) {
    let params = Params::new().set("vms", w.expand(&vms).as_str());
    node_power(w, "stopall", &node, params).await;
}

fn task_path(upid: &Upid, tail: &str) -> String {
    format!(
        "/nodes/{}/tasks/{}{tail}",
        seg(upid.node()),
        seg(upid.as_str())
    )
}

#[when("I remember the answer's task")]
fn remember_answer_task(w: &mut PveWorld) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let u = o.data["upid"]
        .as_str()
        .unwrap_or_else(|| panic!("{}: no upid in {}", o.request, o.data));
    let upid: Upid = u.parse().unwrap_or_else(|e| panic!("{u}: {e}"));
    w.upids.push(upid);
}

#[when("I read the task status")]
async fn read_task_status(w: &mut PveWorld) {
    let path = task_path(w.last_upid(), "/status");
    w.call(Method::GET, &path, Params::new()).await;
}

#[when("I read the task log")]
async fn read_task_log(w: &mut PveWorld, step: &Step) {
    let path = task_path(w.last_upid(), "/log");
    let params = table_params(w, step);
    w.call(Method::GET, &path, params).await;
}

#[when("I stop the task")]
async fn stop_task(w: &mut PveWorld) {
    let path = task_path(w.last_upid(), "");
    w.call(Method::DELETE, &path, Params::new()).await;
}

#[when(expr = "I list the tasks of node {string}")]
async fn node_tasks(w: &mut PveWorld, step: &Step, node: String) {
    let path = format!("/nodes/{}/tasks", seg(&w.expand(&node)));
    let params = table_params(w, step);
    w.call(Method::GET, &path, params).await;
}

/// Waits for the last task: on fake-pve it must have ended already (time
/// moves only when a scenario says so); on a real cluster the status is
/// polled every half second for at most five minutes.
async fn wait(w: &mut PveWorld) -> serde_json::Value {
    let upid = w.last_upid().clone();
    let client = w.client();
    let path = task_path(&upid, "/status");
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let st = client
            .get(&path, &Params::new())
            .await
            .unwrap_or_else(|e| panic!("reading the status of {upid}: {e}"));
        w.check_shape(&Method::GET, &path, &st);
        if st["status"] != "running" {
            return st;
        }
        assert!(
            w.target().is_real(),
            "{upid} still runs: let time pass on fake-pve first"
        );
        assert!(
            Instant::now() < deadline,
            "{upid} still runs after 5 minutes"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[then(expr = "the task ends with {string}")]
async fn task_ends_with(w: &mut PveWorld, exit: String) {
    let exit = w.expand(&exit);
    let st = wait(w).await;
    assert_eq!(st["status"], "stopped", "{st}");
    assert_eq!(st["exitstatus"].as_str(), Some(exit.as_str()), "{st}");
}

#[then("the task is still running")]
async fn task_running(w: &mut PveWorld) {
    let path = task_path(w.last_upid(), "/status");
    let st = w
        .client()
        .get(&path, &Params::new())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(st["status"], "running", "{st}");
    assert!(st.get("exitstatus").is_none(), "{st}");
}

#[then(expr = "the task ID names node {string}, type {string}, ID {string} and user {string}")]
fn upid_fields(w: &mut PveWorld, node: String, kind: String, id: String, user: String) {
    let u = w.last_upid();
    let want = (
        w.expand(&node),
        w.expand(&kind),
        w.expand(&id),
        w.expand(&user),
    );
    let got = (
        u.node().to_string(),
        u.kind().to_string(),
        u.id().to_string(),
        u.user().to_string(),
    );
    assert_eq!(got, want, "{u}");
    let re =
        regex::Regex::new("^UPID:[^:]+:[0-9A-F]{8}:[0-9A-F]{8}:[0-9A-F]{8}:[^:]+:[^:]*:[^:]+:$")
            .unwrap_or_else(|e| panic!("{e}"));
    assert!(re.is_match(u.as_str()), "{u}");
}

#[then(expr = "the task started at {int}")]
fn upid_start(w: &mut PveWorld, at: i64) {
    assert_eq!(w.last_upid().starttime(), at);
}

#[then(expr = "the log's last line is {string}")]
fn last_log_line(w: &mut PveWorld, line: String) {
    let line = w.expand(&line);
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let last = o
        .data
        .as_array()
        .and_then(|a| a.last())
        .map(|l| text(&l["t"]));
    assert_eq!(last.as_deref(), Some(line.as_str()), "{}", o.data);
}

#[then("the log reads:")]
fn log_reads(w: &mut PveWorld, step: &Step) {
    let want: Vec<String> = step
        .docstring
        .as_deref()
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| w.expand(l))
        .collect();
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let lines: Vec<String> = o
        .data
        .as_array()
        .map(|a| a.iter().map(|l| text(&l["t"])).collect())
        .unwrap_or_default();
    assert_eq!(lines, want, "{}", o.data);
    let numbers: Vec<u64> = o
        .data
        .as_array()
        .map(|a| a.iter().filter_map(|l| l["n"].as_u64()).collect())
        .unwrap_or_default();
    if let Some(first) = numbers.first() {
        let expected: Vec<u64> = (*first..*first + numbers.len() as u64).collect();
        assert_eq!(numbers, expected, "line numbers");
    }
}

#[then("the list holds the task")]
fn list_holds_task(w: &mut PveWorld) {
    let upid = w.last_upid().to_string();
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let found = o
        .data
        .as_array()
        .is_some_and(|a| a.iter().any(|t| t["upid"] == upid.as_str()));
    assert!(found, "{upid} not in {}", o.data);
}

#[then("the list does not hold the task")]
fn list_lacks_task(w: &mut PveWorld) {
    let upid = w.last_upid().to_string();
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let found = o
        .data
        .as_array()
        .is_some_and(|a| a.iter().any(|t| t["upid"] == upid.as_str()));
    assert!(!found, "{upid} in {}", o.data);
}

#[then(regex = r"^the list holds the tasks (.+) in this order$")]
fn list_holds_in_order(w: &mut PveWorld, which: String) {
    // Task numbers count the tasks the scenario started, from 1.
    let want: Vec<String> = which
        .split([',', ' '])
        .filter(|s| !s.is_empty() && *s != "and")
        .map(|n| {
            let i: usize = n
                .trim_start_matches('#')
                .parse()
                .unwrap_or_else(|_| panic!("task number {n}"));
            w.upids
                .get(i - 1)
                .unwrap_or_else(|| panic!("no task #{i}"))
                .to_string()
        })
        .collect();
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let got: Vec<String> = o
        .data
        .as_array()
        .map(|a| a.iter().map(|t| text(&t["upid"])).collect())
        .unwrap_or_default();
    assert_eq!(got, want, "{}", o.data);
}
