//! The retry policy at the socket: what is retried, how often, and what
//! never is. fake-pve cannot yet inject 502/503 or connection drops, so
//! these tests answer with a few canned HTTP responses from a plain
//! loopback listener and count the attempts.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use pve_client::api::nodes::StartAll;
use pve_client::{Category, Client, Config, Params, RetryPolicy};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A listener that answers every request with `response` (or drops the
/// connection when it is empty), counting the connections.
async fn canned(response: &'static str) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
            if response.is_empty() {
                drop(sock);
                continue;
            }
            tokio::spawn(async move {
                // Read the head and the body announced, then answer.
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let head_end = loop {
                    match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break i + 4;
                    }
                };
                let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                while buf.len() < head_end + len {
                    match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let _ = sock.write_all(response.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    (url, count)
}

fn client(url: &str, retries: u32) -> Client {
    Client::new(
        Config::builder()
            .endpoint(url)
            .token("root@pam!ci", "secret")
            .retry(
                RetryPolicy::default()
                    .max_retries(retries)
                    .initial_delay(Duration::from_millis(1))
                    .max_delay(Duration::from_millis(5)),
            )
            .timeout(Duration::from_secs(10))
            .build()
            .expect("config"),
    )
    .expect("client")
}

fn answer(status_line: &str, body: &str) -> &'static str {
    Box::leak(
        format!(
            "HTTP/1.1 {status_line}\r\nContent-Type: application/json;charset=UTF-8\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_boxed_str(),
    )
}

#[tokio::test]
async fn unavailable_is_retried_for_any_method() {
    let (url, count) = canned(answer("503 Service Unavailable", "")).await;
    let pve = client(&url, 3);
    let e = pve.version().await.expect_err("always 503");
    assert_eq!(e.category(), Category::Server);
    assert_eq!(e.status(), Some(503));
    assert_eq!(e.message(), "Service Unavailable");
    assert_eq!(count.load(Ordering::SeqCst), 4, "1 attempt + 3 retries");
    let e = pve
        .nodes()
        .startall("pve", &StartAll::default())
        .await
        .expect_err("always 503");
    assert!(e.is_retryable());
    assert_eq!(
        count.load(Ordering::SeqCst),
        8,
        "a 503 POST was not acted on"
    );
}

#[tokio::test]
async fn a_lock_is_retried_and_keeps_pves_message() {
    let (url, count) = canned(answer(
        "500 VM is locked (backup)",
        r#"{"data":null,"message":"VM is locked (backup)\n"}"#,
    ))
    .await;
    let pve = client(&url, 2);
    let e = pve
        .post("/nodes/pve/qemu/100/status/start", &Params::new())
        .await
        .expect_err("locked");
    assert_eq!(e.category(), Category::Conflict);
    assert!(e.is_locked());
    assert_eq!(e.message(), "VM is locked (backup)");
    assert_eq!(count.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn client_errors_are_never_retried() {
    for (status, body, category) in [
        (
            "400 Parameter verification failed.",
            r#"{"data":null,"message":"Parameter verification failed.\n","errors":{"vmid":"VM 100 already exists"}}"#,
            Category::Validation,
        ),
        ("401 authentication failure", "", Category::Authentication),
        (
            "403 Permission check failed (/, Sys.Audit)",
            r#"{"data":null,"message":"Permission check failed (/, Sys.Audit)\n"}"#,
            Category::Permission,
        ),
        (
            "500 VM 100 is running - destroy failed",
            r#"{"data":null,"message":"VM 100 is running - destroy failed\n"}"#,
            Category::Server,
        ),
    ] {
        let (url, count) = canned(answer(status, body)).await;
        let e = client(&url, 3).version().await.expect_err("refused");
        assert_eq!(e.category(), category, "{status}: {e}");
        assert_eq!(count.load(Ordering::SeqCst), 1, "{status} was retried");
        assert!(!e.is_retryable());
    }
}

#[tokio::test]
async fn dropped_connections_are_retried_for_reads_only() {
    let (url, count) = canned("").await;
    let pve = client(&url, 2);
    let e = pve.version().await.expect_err("dropped");
    assert_eq!(e.category(), Category::Network, "{e}");
    assert_eq!(count.load(Ordering::SeqCst), 3);
    // The POST may have reached PVE: not sent again.
    let e = pve
        .post("/nodes/pve/startall", &Params::new())
        .await
        .expect_err("dropped");
    assert_eq!(e.category(), Category::Network, "{e}");
    assert_eq!(count.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn refused_connections_are_retried_for_any_method() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let pve = client(&format!("http://127.0.0.1:{port}"), 2);
    let started = std::time::Instant::now();
    let e = pve
        .post("/nodes/pve/startall", &Params::new())
        .await
        .expect_err("refused");
    assert_eq!(e.category(), Category::Network);
    assert!(e.message().contains("cannot connect"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(5));
}
