//! Notifications: a webhook receiver on loopback that the steps start
//! (its address is `{var:receiver}`), what it received, and fake-pve's
//! outbox (`/_fake/notifications/outbox`, fake-only).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use cucumber::{given, then};
use pve_client::Method;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::world::PveWorld;

/// The requests each receiver got, by its address.
type Received = Arc<Mutex<Vec<String>>>;

fn receivers() -> &'static Mutex<HashMap<String, Received>> {
    static R: OnceLock<Mutex<HashMap<String, Received>>> = OnceLock::new();
    R.get_or_init(Mutex::default)
}

/// Reads one HTTP request (head and the body its length announces).
async fn read_request(sock: &mut tokio::net::TcpStream) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = sock.read(&mut buf).await {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .and_then(|v| v.trim().parse::<usize>().ok())
                })
                .unwrap_or(0);
            if body.len() >= len {
                break;
            }
        }
    }
    String::from_utf8_lossy(&got).to_string()
}

#[given("a webhook receiver listens on loopback")]
async fn start_receiver(w: &mut PveWorld) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("{e}"))
        .to_string();
    let received: Received = Arc::default();
    receivers()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(addr.clone(), received.clone());
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let request = read_request(&mut sock).await;
            received
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(request);
            let _ = sock
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .await;
        }
    });
    w.vars.insert("receiver".into(), addr);
}

/// The receiver's first request, waited for up to 10 seconds.
async fn first_request(w: &PveWorld) -> String {
    let addr = w.vars.get("receiver").cloned().unwrap_or_default();
    let received = receivers()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(&addr)
        .cloned()
        .unwrap_or_else(|| panic!("no receiver at {addr}"));
    for _ in 0..200 {
        if let Some(r) = received
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .first()
        {
            return r.clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the receiver at {addr} got no request within 10 seconds")
}

#[then(expr = "the receiver gets a {word} request to {string}")]
async fn receiver_gets(w: &mut PveWorld, method: String, path: String) {
    let r = first_request(w).await;
    let line = r.lines().next().unwrap_or_default();
    assert_eq!(
        line,
        format!("{method} {} HTTP/1.1", w.expand(&path)),
        "{r}"
    );
}

#[then(expr = "the receiver's request has the header {string} = {string}")]
async fn receiver_header(w: &mut PveWorld, name: String, value: String) {
    let r = first_request(w).await;
    let head = r.split("\r\n\r\n").next().unwrap_or_default();
    let want = format!("{}: {}", name.to_ascii_lowercase(), w.expand(&value));
    assert!(
        head.lines().any(|l| l.eq_ignore_ascii_case(&want)),
        "no header {want} in\n{head}"
    );
}

#[then(expr = "the receiver's request body is {string}")]
async fn receiver_body(w: &mut PveWorld, body: String) {
    let r = first_request(w).await;
    let got = r.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or_default();
    assert_eq!(got, w.expand(&body.replace("\\\"", "\"")));
}

/// The value at a dotted path (`notification.severity`).
fn at<'a>(v: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(v, |v, k| &v[k])
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[then(expr = "the outbox has a delivery to {string} with {string} = {string}")]
async fn outbox_has(w: &mut PveWorld, target: String, path: String, value: String) {
    let target = w.expand(&target);
    let value = w.expand(&value);
    let outbox = w
        .control(Method::GET, "/_fake/notifications/outbox", None)
        .await;
    let deliveries: Vec<&Value> = outbox
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|d| d["target"] == target.as_str())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        deliveries.iter().any(|d| text(at(d, &path)) == value),
        "no delivery to {target} with {path} = {value} in {outbox}"
    );
}

#[then(expr = "the outbox has no delivery to {string}")]
async fn outbox_has_none(w: &mut PveWorld, target: String) {
    let target = w.expand(&target);
    let outbox = w
        .control(Method::GET, "/_fake/notifications/outbox", None)
        .await;
    let any = outbox
        .as_array()
        .is_some_and(|a| a.iter().any(|d| d["target"] == target.as_str()));
    assert!(!any, "a delivery to {target} in {outbox}");
}

#[given(expr = "the next {word} task fails with {string}")]
async fn next_task_fails(w: &mut PveWorld, kind: String, error: String) {
    let rule = serde_json::json!({ "task_type": kind, "task_error": error, "count": 1 });
    w.control(
        Method::POST,
        "/_fake/faults",
        Some(("application/json", rule.to_string())),
    )
    .await;
}
