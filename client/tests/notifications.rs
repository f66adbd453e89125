//! Notifications (`api::notifications`) against an in-process fake-pve:
//! the targets and matchers with PVE's refusals, and a webhook test that
//! reaches a receiver on loopback; every answer is checked against the
//! schema.

mod common;

use std::time::Duration;

use base64::Engine;
use common::{Mode, checked_client, start};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

#[tokio::test]
async fn targets_and_matchers_follow_pve_s_rules() {
    let run = start().await;
    let (pve, _checked) = checked_client(&run, Mode::Token);
    let n = pve.notifications();
    let targets = n.get_all_targets().await.expect("targets");
    assert_eq!(targets.len(), 1);
    assert_eq!(targets[0].name, "mail-to-root");
    assert_eq!(targets[0].origin, "builtin");

    n.create_gotify_endpoint(
        "phone",
        &[("server", "http://127.0.0.1:1"), ("token", "t0p")],
    )
    .await
    .expect("gotify");
    let shown = n.get_gotify_endpoint("phone").await.expect("read");
    assert!(shown.get("token").is_none(), "{shown:?}");
    let err = n
        .create_matcher("phone", &[("target", "phone")])
        .await
        .expect_err("taken");
    assert!(
        err.to_string()
            .contains("Cannot create 'phone', an entity with the same name already exists"),
        "{err}"
    );
    n.create_matcher("m1", &[("target", "phone"), ("match-severity", "error")])
        .await
        .expect("matcher");
    let err = n.delete_gotify_endpoint("phone").await.expect_err("in use");
    assert!(
        err.to_string()
            .contains("cannot delete 'phone', referenced by: m1"),
        "{err}"
    );
    n.delete_matcher("m1").await.expect("matcher gone");
    n.delete_gotify_endpoint("phone")
        .await
        .expect("gotify gone");

    // A built-in changed, then reset by its deletion.
    n.update_sendmail_endpoint("mail-to-root", &[("comment", "mine")])
        .await
        .expect("update");
    let m = n.get_sendmail_endpoint("mail-to-root").await.expect("read");
    assert_eq!(m["origin"], "modified-builtin");
    n.delete_sendmail_endpoint("mail-to-root")
        .await
        .expect("reset");
    let m = n.get_sendmail_endpoint("mail-to-root").await.expect("read");
    assert_eq!(m["origin"], "builtin");
}

#[tokio::test]
async fn a_webhook_test_reaches_a_receiver_on_loopback() {
    let run = start().await;
    let (pve, _checked) = checked_client(&run, Mode::Token);
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let receiver = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.expect("accept");
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        // Read until the body announced has come.
        loop {
            let n = sock.read(&mut buf).await.expect("read");
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
                            .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                    })
                    .unwrap_or(0);
                if body.len() >= len {
                    break;
                }
            }
        }
        sock.write_all(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n")
            .await
            .expect("answer");
        String::from_utf8_lossy(&got).to_string()
    });
    let n = pve.notifications();
    let header = format!("name=X-Token,value={}", b64("Bearer {{ secrets.key }}"));
    let secret = format!("name=key,value={}", b64("s3cr3t"));
    let body = b64("{\"title\": \"{{ title }}\", \"severity\": \"{{ severity }}\"}");
    let url = format!("http://127.0.0.1:{port}/hook");
    n.create_webhook_endpoint(
        "hook",
        &[
            ("url", &url),
            ("method", "put"),
            ("header", &header),
            ("body", &body),
            ("secret", &secret),
        ],
    )
    .await
    .expect("webhook");
    let shown = n.get_webhook_endpoint("hook").await.expect("read");
    assert_eq!(shown["secret"], serde_json::json!(["name=key"]));
    n.test_target("hook").await.expect("test");
    let request = tokio::time::timeout(Duration::from_secs(10), receiver)
        .await
        .expect("the receiver was reached")
        .expect("receiver");
    assert!(request.starts_with("PUT /hook HTTP/1.1"), "{request}");
    assert!(
        request
            .to_ascii_lowercase()
            .contains("x-token: bearer s3cr3t"),
        "{request}"
    );
    assert!(
        request.ends_with("{\"title\": \"Test notification\", \"severity\": \"info\"}"),
        "{request}"
    );
}
