//! The task engine over the wire: UPIDs, status, logs, listing filters
//! and stopping, with the clock advanced instead of slept.

mod common;

use common::{Auth, T0, builder, enc, start_with};
use fake_pve::{Latency, Scenario};
use serde_json::{Value, json};

const SECRET: &str = "11111111-2222-3333-4444-555555555555";

async fn pve_with_slow_startall() -> common::Pve {
    let mut latency = Latency::instant();
    latency.set_task_ms("startall", 5_000);
    let scenario = Scenario::parse(
        &format!(
            "users:\n  - userid: root@pam\n    tokens: [{{tokenid: ci, secret: {SECRET}, privsep: false}}]\n\
vms:\n  - {{vmid: 100, name: web, config: {{onboot: 1}}}}\n  - {{vmid: 101, name: db}}\n  - {{vmid: 102, status: running}}\n"
        ),
        "t.yaml",
    )
    .expect("scenario");
    start_with(builder().latency(latency).scenario(scenario)).await
}

fn upid_of(r: &common::Resp) -> String {
    r.data().as_str().expect("a UPID string").to_string()
}

#[tokio::test]
async fn upid_format_and_status_life() {
    let pve = pve_with_slow_startall().await;
    let root = pve.root().await;
    let upid = upid_of(&pve.post("/nodes/pve/startall", &root, "").await);
    let parts: Vec<&str> = upid.split(':').collect();
    assert_eq!(parts.len(), 9, "{upid}");
    assert_eq!(
        (parts[0], parts[1], parts[5], parts[6], parts[7], parts[8]),
        ("UPID", "pve", "startall", "", "root@pam", "")
    );
    assert!(parts[2..5].iter().all(|p| {
        p.len() == 8
            && p.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_lowercase())
    }));
    assert_eq!(i64::from_str_radix(parts[4], 16).expect("hex"), T0);

    let st = pve.task_status(&upid, &root).await;
    assert_eq!(st["status"], "running");
    assert!(st.get("exitstatus").is_none());
    assert_eq!(st["upid"], upid.as_str());
    assert_eq!(st["type"], "startall");
    assert_eq!(st["id"], "");
    assert_eq!(st["user"], "root@pam");
    assert_eq!(st["node"], "pve");
    assert_eq!(st["starttime"], T0);
    assert!(st["pid"].is_u64() && st["pstart"].is_u64());

    // Raw UPID in the path works as well as the percent-encoded one.
    let raw = pve
        .get(&format!("/nodes/pve/tasks/{upid}/status"), &root)
        .await
        .data();
    assert_eq!(raw, st);

    pve.run.clock().advance(5);
    let st = pve.task_status(&upid, &root).await;
    assert_eq!(st["status"], "stopped");
    assert_eq!(st["exitstatus"], "OK");
    let log = pve
        .get(&format!("/nodes/pve/tasks/{}/log", enc(&upid)), &root)
        .await;
    assert_eq!(log.json()["total"], 2);
    assert_eq!(
        log.data(),
        json!([{"n": 1, "t": "Starting VM 100"}, {"n": 2, "t": "TASK OK"}])
    );
    // The effect happened when the task ended: VM 100 (onboot) runs, 101 does not.
    let vms = pve.get("/cluster/resources?type=vm", &root).await.data();
    let status: Vec<(u64, &str)> = vms
        .as_array()
        .expect("list")
        .iter()
        .map(|v| {
            (
                v["vmid"].as_u64().unwrap_or(0),
                v["status"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        status,
        [(100, "running"), (101, "stopped"), (102, "running")]
    );
}

#[tokio::test]
async fn empty_node_startall_and_stopall() {
    let pve = common::start().await;
    let root = pve.root().await;
    for call in ["startall", "stopall"] {
        let upid = upid_of(&pve.post(&format!("/nodes/pve/{call}"), &root, "").await);
        assert!(upid.contains(&format!(":{call}::root@pam:")), "{upid}");
        let st = pve.task_status(&upid, &root).await;
        assert_eq!(
            (st["status"].as_str(), st["exitstatus"].as_str()),
            (Some("stopped"), Some("OK"))
        );
        let log = pve
            .get(&format!("/nodes/pve/tasks/{}/log", enc(&upid)), &root)
            .await
            .data();
        assert_eq!(log, json!([{"n": 1, "t": "TASK OK"}]));
    }
    pve.post("/nodes/pve/startall", &root, "vms=100,abc")
        .await
        .assert_param_error(
            "vms",
            "invalid format - value does not look like a valid VM ID\n",
        );
    pve.post("/nodes/pve/stopall", &root, "timeout=7201")
        .await
        .assert_param_error("timeout", "value must have a maximum value of 7200");
}

#[tokio::test]
async fn stopall_stops_highest_first() {
    let pve = pve_with_slow_startall().await;
    let root = pve.root().await;
    pve.post("/nodes/pve/startall", &root, "force=1")
        .await
        .data();
    pve.run.clock().advance(5);
    let upid = upid_of(&pve.post("/nodes/pve/stopall", &root, "timeout=30").await);
    let log = pve
        .get(
            &format!("/nodes/pve/tasks/{}/log?limit=0", enc(&upid)),
            &root,
        )
        .await
        .data();
    let lines: Vec<&str> = log
        .as_array()
        .expect("log")
        .iter()
        .filter_map(|l| l["t"].as_str())
        .collect();
    assert_eq!(
        lines,
        [
            "Stopping VM 102 (timeout = 30 seconds)",
            "Stopping VM 101 (timeout = 30 seconds)",
            "Stopping VM 100 (timeout = 30 seconds)",
            "TASK OK"
        ]
    );
}

#[tokio::test]
async fn log_paging() {
    let pve = pve_with_slow_startall().await;
    let root = pve.root().await;
    let upid = upid_of(&pve.post("/nodes/pve/stopall", &root, "").await);
    let path = format!("/nodes/pve/tasks/{}/log", enc(&upid));
    let r = pve.get(&format!("{path}?start=1&limit=1"), &root).await;
    assert_eq!(
        r.json(),
        json!({"data": [{"n": 2, "t": "TASK OK"}], "total": 2})
    );
    let r = pve.get(&format!("{path}?start=5"), &root).await;
    assert_eq!(r.json(), json!({"data": [], "total": 2}));
}

#[tokio::test]
async fn bad_and_unknown_upids() {
    let pve = common::start().await;
    let root = pve.root().await;
    pve.get("/nodes/pve/tasks/not-a-upid/status", &root)
        .await
        .assert_param_error("upid", "unable to parse worker upid");
    let ghost = "UPID:pve:00001234:00005678:6A000000:qmstart:100:root@pam:";
    pve.get(&format!("/nodes/pve/tasks/{}/status", enc(ghost)), &root)
        .await
        .assert_param_error("upid", "no such task");
    pve.delete(&format!("/nodes/pve/tasks/{}", enc(ghost)), &root)
        .await
        .assert_param_error("upid", "no such task");
    let idx = pve
        .get(&format!("/nodes/pve/tasks/{}", enc(ghost)), &root)
        .await;
    idx.assert_param_error("upid", "no such task");
}

#[tokio::test]
async fn stopping_a_running_task() {
    let pve = pve_with_slow_startall().await;
    let root = pve.root().await;
    let upid = upid_of(&pve.post("/nodes/pve/startall", &root, "").await);
    assert_eq!(
        pve.delete(&format!("/nodes/pve/tasks/{}", enc(&upid)), &root)
            .await
            .data(),
        Value::Null
    );
    let st = pve.task_status(&upid, &root).await;
    assert_eq!(
        (st["status"].as_str(), st["exitstatus"].as_str()),
        (Some("stopped"), Some("received interrupt"))
    );
    let log = pve
        .get(&format!("/nodes/pve/tasks/{}/log", enc(&upid)), &root)
        .await
        .data();
    assert_eq!(
        log.as_array()
            .and_then(|l| l.last())
            .map(|l| l["t"].clone()),
        Some(json!("TASK ERROR: received interrupt"))
    );
    // Interrupted before its end: the VMs were not started.
    pve.run.clock().advance(10);
    let vms = pve.get("/cluster/resources?type=vm", &root).await.data();
    assert_eq!(vms[0]["status"], "stopped");
    // Stopping a stopped task is not an error.
    assert_eq!(
        pve.delete(&format!("/nodes/pve/tasks/{}", enc(&upid)), &root)
            .await
            .status,
        200
    );
}

/// The UPIDs a task listing returns, and its `total`.
async fn list(pve: &common::Pve, auth: &Auth, query: &str) -> (Vec<String>, Option<Value>) {
    let j = pve
        .get(&format!("/nodes/pve/tasks{query}"), auth)
        .await
        .json();
    let ids = j["data"]
        .as_array()
        .expect("list")
        .iter()
        .map(|t| t["upid"].as_str().unwrap_or("").to_string())
        .collect();
    (ids, j.get("total").cloned())
}

#[tokio::test]
async fn task_list_filters() {
    let pve = pve_with_slow_startall().await;
    let root = pve.root().await;
    let tok = Auth::Token(format!("PVEAPIToken=root@pam!ci={SECRET}"));
    let a = upid_of(&pve.post("/nodes/pve/stopall", &root, "").await);
    pve.run.clock().advance(60);
    let b = upid_of(&pve.post("/nodes/pve/stopall", &tok, "").await);
    pve.run.clock().advance(60);
    let running = upid_of(&pve.post("/nodes/pve/startall", &root, "").await);
    pve.run.clock().advance(1);
    let killed = upid_of(&pve.post("/nodes/pve/startall", &root, "").await);
    pve.delete(&format!("/nodes/pve/tasks/{}", enc(&killed)), &root)
        .await
        .data();

    // Archive (the default): finished tasks only, newest first.
    assert_eq!(
        list(&pve, &root, "").await,
        (vec![killed.clone(), b.clone(), a.clone()], Some(json!(3)))
    );
    assert_eq!(
        list(&pve, &root, "?source=active").await,
        (vec![running.clone()], Some(json!(1)))
    );
    assert_eq!(
        list(&pve, &root, "?source=all").await.0,
        vec![running.clone(), killed.clone(), b.clone(), a.clone()]
    );
    assert_eq!(
        list(&pve, &root, "?limit=1&start=1").await,
        (vec![b.clone()], Some(json!(3)))
    );
    assert_eq!(
        list(&pve, &root, "?limit=0").await,
        (vec![], Some(json!(3)))
    );
    assert_eq!(
        list(&pve, &root, "?typefilter=stopall").await.0,
        vec![b.clone(), a.clone()]
    );
    assert_eq!(
        list(&pve, &root, "?typefilter=qmstart").await,
        (vec![], None),
        "total is left out when zero"
    );
    assert_eq!(list(&pve, &root, "?userfilter=CI").await.0, vec![b.clone()]);
    assert_eq!(list(&pve, &root, "?errors=1").await.0, vec![killed.clone()]);
    assert_eq!(
        list(&pve, &root, "?statusfilter=ok").await.0,
        vec![b.clone(), a.clone()]
    );
    assert_eq!(
        list(&pve, &root, "?statusfilter=error,ok&errors=1").await.0,
        vec![killed.clone()]
    );
    assert_eq!(
        list(&pve, &root, &format!("?since={}", T0 + 1)).await.0,
        vec![killed.clone(), b.clone()]
    );
    assert_eq!(
        list(&pve, &root, &format!("?until={}", T0 + 60)).await.0,
        vec![b.clone(), a.clone()]
    );
    assert_eq!(
        list(&pve, &root, "?source=all&statusfilter=ok").await.0,
        vec![b.clone(), a.clone()],
        "running tasks count as unknown"
    );
    assert_eq!(list(&pve, &root, "?vmid=100").await.0, Vec::<String>::new());

    let items = pve.get("/nodes/pve/tasks?source=all", &root).await.data();
    assert_eq!(items[0]["status"], "RUNNING");
    assert_eq!(items[0]["saved"], "0");
    assert!(items[0].get("endtime").is_none());
    let tok_item = items
        .as_array()
        .expect("list")
        .iter()
        .find(|t| t["upid"] == b.as_str())
        .expect("token task")
        .clone();
    assert_eq!(
        (tok_item["user"].as_str(), tok_item["tokenid"].as_str()),
        (Some("root@pam"), Some("ci"))
    );
    assert_eq!(tok_item["status"], "OK");
    assert!(tok_item["endtime"].is_i64());
    pve.get("/nodes/pve/tasks?statusfilter=fine", &root)
        .await
        .assert_param_error("statusfilter", "invalid format - invalid status 'fine'\n");
    pve.get("/nodes/pve/tasks?source=old", &root)
        .await
        .assert_param_error(
            "source",
            "value 'old' does not have a value in the enumeration 'archive, active, all'",
        );
}
