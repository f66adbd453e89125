//! Latency profiles through `/_fake/latency`: task durations in emulated
//! time, request latencies, built-in and custom profiles.

mod common;

use common::{Auth, enc, start};
use reqwest::Method;
use serde_json::json;

async fn put(pve: &common::Pve, root: &Auth, body: serde_json::Value) -> common::Resp {
    pve.send(
        Method::PUT,
        "/_fake/latency",
        root,
        Some(("application/json", body.to_string())),
    )
    .await
}

#[tokio::test]
async fn builtin_profiles() {
    let pve = start().await;
    let root = pve.root().await;
    let l = pve
        .send(Method::GET, "/_fake/latency", &root, None)
        .await
        .data();
    assert_eq!(l["name"], "instant");
    let l = put(&pve, &root, json!({"profile": "documented", "seed": 7}))
        .await
        .data();
    assert_eq!(l["name"], "documented");
    assert_eq!(
        l["tasks"]["qmcreate"],
        json!({"p50_ms": 2300.0, "p95_ms": 4100.0})
    );
    assert_eq!(
        l["requests"]["vm_status"],
        json!({"p50_ms": 120.0, "p95_ms": 200.0})
    );
    assert_eq!(l["seed"], 7);
    put(&pve, &root, json!({"profile": "glacial"}))
        .await
        .assert_param_error(
            "latency",
            "unknown profile 'glacial' (instant or documented)",
        );
    put(
        &pve,
        &root,
        json!({"tasks": {"qmstart": {"p50_ms": 10, "p95_ms": 5}}}),
    )
    .await
    .assert_param_error(
        "latency",
        "qmstart: need 0 <= p50_ms <= p95_ms, got 10 and 5",
    );
}

#[tokio::test]
async fn task_durations_follow_the_profile_in_emulated_time() {
    let pve = start().await;
    let root = pve.root().await;
    put(
        &pve,
        &root,
        json!({"name": "lab", "tasks": {"startall": {"p50_ms": 4000, "p95_ms": 4000}}}),
    )
    .await
    .data();
    let upid = pve
        .post("/nodes/pve/startall", &root, "")
        .await
        .data()
        .as_str()
        .expect("upid")
        .to_string();
    let path = format!("/nodes/pve/tasks/{}/status", enc(&upid));
    assert_eq!(pve.get(&path, &root).await.data()["status"], "running");
    pve.run.clock().advance(3);
    assert_eq!(pve.get(&path, &root).await.data()["status"], "running");
    pve.run.clock().advance(1);
    assert_eq!(pve.get(&path, &root).await.data()["status"], "stopped");
}

#[tokio::test]
async fn request_latency_by_pve_method() {
    let pve = start().await;
    let root = pve.root().await;
    put(
        &pve,
        &root,
        json!({"name": "slow-version", "requests": {"version": 150}}),
    )
    .await
    .data();
    let t = std::time::Instant::now();
    assert_eq!(pve.get("/version", &root).await.status, 200);
    assert!(
        t.elapsed() >= std::time::Duration::from_millis(150),
        "{:?}",
        t.elapsed()
    );
    // A faster clock shortens it in real time.
    put(
        &pve,
        &root,
        json!({"name": "fast", "requests": {"version": 150}, "time_scale": 1000}),
    )
    .await
    .data();
    let t = std::time::Instant::now();
    assert_eq!(pve.get("/version", &root).await.status, 200);
    assert!(
        t.elapsed() < std::time::Duration::from_millis(150),
        "{:?}",
        t.elapsed()
    );
}
