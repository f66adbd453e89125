//! Fault injection through `/_fake/faults`.

mod common;

use common::{Auth, start};
use reqwest::Method;
use serde_json::json;

async fn add(pve: &common::Pve, root: &Auth, rule: serde_json::Value) -> common::Resp {
    pve.send(
        Method::POST,
        "/_fake/faults",
        root,
        Some(("application/json", rule.to_string())),
    )
    .await
}

#[tokio::test]
async fn status_faults_with_count_and_user() {
    let pve = start().await;
    let root = pve.root().await;
    let ids = add(
        &pve,
        &root,
        json!({"method": "GET", "path": "/nodes/pve/status", "status": 503, "message": "injected", "count": 1}),
    )
    .await
    .data();
    assert_eq!(ids, json!([1]));
    let r = pve.get("/nodes/pve/status", &root).await;
    r.assert_error(503, "injected\n");
    assert_eq!(
        pve.get("/nodes/pve/status", &root).await.status,
        200,
        "count spent"
    );
    let rules = pve
        .send(Method::GET, "/_fake/faults", &root, None)
        .await
        .data();
    assert_eq!(rules[0]["hits"], 1);

    // Only for one user; other users pass.
    add(
        &pve,
        &root,
        json!({"path": "/version", "user": "nobody@pve", "status": 500}),
    )
    .await
    .data();
    assert_eq!(pve.get("/version", &root).await.status, 200);
    // Patterns.
    add(
        &pve,
        &root,
        json!({"path": "/cluster/**", "status": 502, "message": "Bad Gateway"}),
    )
    .await
    .data();
    pve.get("/cluster/resources", &root)
        .await
        .assert_error(502, "Bad Gateway\n");
    // Remove one, then all.
    let r = pve
        .send(Method::DELETE, "/_fake/faults/3", &root, None)
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(pve.get("/cluster/resources", &root).await.status, 200);
    let r = pve
        .send(Method::DELETE, "/_fake/faults/3", &root, None)
        .await;
    r.assert_error(500, "no such fault rule '3'\n");
    assert_eq!(
        pve.send(Method::DELETE, "/_fake/faults", &root, None)
            .await
            .status,
        200
    );
    assert_eq!(
        pve.send(Method::GET, "/_fake/faults", &root, None)
            .await
            .data(),
        json!([])
    );
}

#[tokio::test]
async fn delay_and_dropped_connections() {
    let pve = start().await;
    let root = pve.root().await;
    add(
        &pve,
        &root,
        json!({"path": "/version", "delay_ms": 200, "count": 1}),
    )
    .await
    .data();
    let t = std::time::Instant::now();
    assert_eq!(pve.get("/version", &root).await.status, 200);
    assert!(
        t.elapsed() >= std::time::Duration::from_millis(200),
        "{:?}",
        t.elapsed()
    );

    add(
        &pve,
        &root,
        json!({"path": "/nodes", "drop": true, "count": 1}),
    )
    .await
    .data();
    let err = pve
        .http
        .get(pve.url("/api2/json/nodes"))
        .header("Authorization", "x")
        .send()
        .await;
    // Without credentials the request never reaches the fault: 401.
    assert_eq!(err.expect("answered").status().as_u16(), 401);
    let Auth::Ticket { ticket, .. } = root.clone() else {
        unreachable!()
    };
    let err = pve
        .http
        .get(pve.url("/api2/json/nodes"))
        .header("Cookie", format!("PVEAuthCookie={ticket}"))
        .send()
        .await;
    assert!(
        err.is_err(),
        "the connection is closed without an answer: {err:?}"
    );
    assert_eq!(pve.get("/nodes", &root).await.status, 200, "count spent");
}

#[tokio::test]
async fn bad_rules_are_refused() {
    let pve = start().await;
    let root = pve.root().await;
    add(&pve, &root, json!({"path": "/version"}))
        .await
        .assert_param_error(
            "rule",
            "a fault rule needs an effect: status, delay_ms, drop or task_error",
        );
    let r = add(
        &pve,
        &root,
        json!({"path": "/version", "status": 500, "colour": "red"}),
    )
    .await;
    assert_eq!(r.status, 400);
    assert!(
        r.json()["errors"]["rule"]
            .as_str()
            .is_some_and(|m| m.contains("unknown field `colour`")),
        "{r:?}"
    );
    add(&pve, &root, json!({"status": 500, "probability": 1.5}))
        .await
        .assert_param_error("rule", "probability must be between 0 and 1, got 1.5");
    let bob = common::start_scenario("users: [{userid: bob@pve, password: pw}]").await;
    let b = bob.login_as("bob@pve", "pw").await;
    assert_eq!(add(&bob, &b, json!({"status": 500})).await.status, 403);
}

#[tokio::test]
async fn task_faults_and_scenario_rules() {
    let pve = common::start_scenario(
        "faults:\n  - {task_type: stopall, task_error: \"stop failed: injected\", count: 1}\n",
    )
    .await;
    let root = pve.root().await;
    let upid = pve.post("/nodes/pve/stopall", &root, "").await.data();
    let st = pve.task_status(upid.as_str().expect("upid"), &root).await;
    assert_eq!(st["exitstatus"], "stop failed: injected");
    let upid = pve.post("/nodes/pve/stopall", &root, "").await.data();
    assert_eq!(
        pve.task_status(upid.as_str().expect("upid"), &root).await["exitstatus"],
        "OK",
        "count spent"
    );
    // A reset brings the scenario's rule back, unspent.
    assert_eq!(
        pve.send(Method::POST, "/_fake/reset", &root, None)
            .await
            .status,
        200
    );
    let upid = pve.post("/nodes/pve/stopall", &root, "").await.data();
    assert_eq!(
        pve.task_status(upid.as_str().expect("upid"), &root).await["exitstatus"],
        "stop failed: injected"
    );
    // Rules added at run time.
    add(
        &pve,
        &root,
        json!({"task_type": "startall", "task_error": "no quorum"}),
    )
    .await
    .data();
    let upid = pve.post("/nodes/pve/startall", &root, "").await.data();
    let log = pve
        .get(
            &format!(
                "/nodes/pve/tasks/{}/log",
                common::enc(upid.as_str().expect("upid"))
            ),
            &root,
        )
        .await
        .data();
    assert_eq!(log, json!([{"n": 1, "t": "TASK ERROR: no quorum"}]));
    let e =
        fake_pve::Scenario::parse("faults: [{task_type: qmstart}]", "s.yaml").expect_err("refused");
    assert_eq!(
        e.to_string(),
        "s.yaml:1: faults: a fault rule needs an effect: status, delay_ms, drop or task_error"
    );
}
