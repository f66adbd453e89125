//! The retry policy observed against fake-pve's injected faults: what is
//! retried, what is not, and how a failed task surfaces.

mod common;

use common::{MODES, Mode};
use pve_client::error::Category;
use serde_json::{Value, json};

const ROOT_TOKEN: &str = "PVEAPIToken=root@pam!automation=0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60";

/// Adds fault rules through `/_fake/faults`.
async fn fault(run: &fake_pve::Running, rule: Value) -> u64 {
    let http = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .expect("client");
    let ids: Value = http
        .post(format!("{}/_fake/faults", run.url()))
        .header("Authorization", ROOT_TOKEN)
        .json(&rule)
        .send()
        .await
        .expect("faults")
        .json()
        .await
        .expect("json");
    ids["data"][0].as_u64().expect("rule id")
}

/// How often a rule fired.
async fn hits(run: &fake_pve::Running, id: u64) -> u64 {
    let http = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .expect("client");
    let rules: Value = http
        .get(format!("{}/_fake/faults", run.url()))
        .header("Authorization", ROOT_TOKEN)
        .send()
        .await
        .expect("faults")
        .json()
        .await
        .expect("json");
    rules["data"]
        .as_array()
        .and_then(|a| a.iter().find(|r| r["id"] == id))
        .and_then(|r| r["hits"].as_u64())
        .unwrap_or(0)
}

fn client(run: &fake_pve::Running, mode: Mode) -> pve_client::Client {
    pve_client::Client::new(
        common::fast(common::config(run, mode))
            .build()
            .expect("config"),
    )
    .expect("client")
}

#[tokio::test]
async fn server_errors_are_retried_until_they_stop() {
    for mode in MODES {
        let run = common::start().await;
        let pve = client(&run, mode);
        let id = fault(&run, json!({"method": "GET", "path": "/version", "status": 503, "message": "injected", "count": 2})).await;
        let v = pve.version().await.expect("the third attempt succeeds");
        assert_eq!(v.release, "9.2");
        assert_eq!(hits(&run, id).await, 2, "{mode:?}");
    }
}

#[tokio::test]
async fn retries_give_up_with_the_server_error() {
    let run = common::start().await;
    let pve = client(&run, Mode::Token);
    let id = fault(
        &run,
        json!({"path": "/version", "status": 503, "message": "still down"}),
    )
    .await;
    let e = pve.version().await.expect_err("always 503");
    assert_eq!(e.category(), Category::Server, "{e}");
    assert!(e.to_string().contains("still down"), "{e}");
    assert_eq!(hits(&run, id).await, 3, "the first attempt and two retries");
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let run = common::start().await;
    let pve = client(&run, Mode::Token);
    let id = fault(&run, json!({"path": "/version", "status": 403, "message": "Permission check failed (/, Sys.Audit)"})).await;
    let e = pve.version().await.expect_err("403");
    assert_eq!(e.category(), Category::Permission, "{e}");
    assert_eq!(hits(&run, id).await, 1, "never retried");
}

#[tokio::test]
async fn dropped_connections_are_retried_for_reads() {
    let run = common::start().await;
    let pve = client(&run, Mode::Token);
    let id = fault(
        &run,
        json!({"method": "GET", "path": "/version", "drop": true, "count": 1}),
    )
    .await;
    assert_eq!(pve.version().await.expect("retried").release, "9.2");
    assert_eq!(hits(&run, id).await, 1);
}

#[tokio::test]
async fn failed_tasks_surface_with_their_exit_status() {
    let run = common::start().await;
    let pve = client(&run, Mode::Token);
    fault(
        &run,
        json!({"task_type": "stopall", "task_error": "stop failed: injected", "count": 1}),
    )
    .await;
    let upid = pve
        .nodes()
        .stopall("pve", &pve_client::api::nodes::StopAll::default())
        .await
        .expect("a UPID");
    let e = pve.tasks().wait(&upid).await.expect_err("the task fails");
    assert_eq!(e.category(), Category::TaskFailed, "{e}");
    assert!(e.to_string().contains("stop failed: injected"), "{e}");
}

#[tokio::test]
async fn the_error_observer_sees_every_failed_call_once() {
    let run = common::start().await;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let pve = pve_client::Client::new(
        common::fast(common::config(&run, Mode::Token))
            .error_observer(move |method, path, e| {
                log.lock()
                    .expect("lock")
                    .push(format!("{method} {path} {:?}", e.status()));
            })
            .build()
            .expect("config"),
    )
    .expect("client");
    fault(
        &run,
        json!({"path": "/version", "status": 403, "message": "Permission check failed (/, Sys.Audit)", "count": 1}),
    )
    .await;
    pve.version().await.expect_err("403");
    pve.version().await.expect("answered");
    assert_eq!(
        *seen.lock().expect("lock"),
        vec!["GET /version Some(403)".to_string()]
    );
}
