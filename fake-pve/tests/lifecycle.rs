//! The server's connections over time: a TLS handshake, a request head or
//! a request body that never comes is cut off, an idle keep-alive
//! connection is closed, and shutting down lets the requests in flight
//! finish (for a bounded time).

use std::time::{Duration, Instant};

use fake_pve::{Clock, FakePve, Running};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn start(b: fake_pve::Builder) -> Running {
    b.listen("127.0.0.1:0".parse().expect("addr"))
        .auth_failure_delay(Duration::ZERO)
        .clock(Clock::manual(1_790_000_000))
        .start()
        .await
        .expect("fake-pve starts")
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

/// root@pam's ticket cookie and CSRF token.
async fn login(http: &reqwest::Client, pve: &Running) -> (String, String) {
    let r: Value = http
        .post(format!("{}/access/ticket", pve.api_url()))
        .form(&[("username", "root@pam"), ("password", "password")])
        .send()
        .await
        .expect("login")
        .json()
        .await
        .expect("JSON");
    let field = |k: &str| r["data"][k].as_str().expect("login data").to_string();
    (
        format!("PVEAuthCookie={}", field("ticket")),
        field("CSRFPreventionToken"),
    )
}

/// Holds every `GET /version` for `ms` with a delay fault.
async fn delay_version(http: &reqwest::Client, pve: &Running, auth: &(String, String), ms: u64) {
    let r = http
        .post(format!("{}/_fake/faults", pve.url()))
        .header("Cookie", &auth.0)
        .header("CSRFPreventionToken", &auth.1)
        .json(&json!({"path": "/version", "method": "GET", "delay_ms": ms}))
        .send()
        .await
        .expect("fault");
    assert_eq!(r.status(), 200, "{:?}", r.text().await);
}

#[tokio::test]
async fn a_stalled_tls_handshake_is_cut_off() {
    let pve = start(FakePve::builder().tls_handshake_timeout(Duration::from_millis(300))).await;
    let mut tcp = tokio::net::TcpStream::connect(pve.addr())
        .await
        .expect("connect");
    let started = Instant::now();
    let mut buf = [0u8; 16];
    let n = tokio::time::timeout(Duration::from_secs(10), tcp.read(&mut buf))
        .await
        .expect("the server closes the connection before 10 s")
        .unwrap_or(0);
    let waited = started.elapsed();
    assert_eq!(n, 0, "closed without an answer");
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_secs(5),
        "closed after {waited:?}"
    );
    // The server still serves.
    let r = client()
        .get(format!("{}/api2/json/version", pve.url()))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 401);
}

#[tokio::test]
async fn a_stalled_request_body_closes_the_connection() {
    let pve = start(
        FakePve::builder()
            .tls(fake_pve::Tls::Off)
            .request_body_timeout(Duration::from_millis(300)),
    )
    .await;
    let mut tcp = tokio::net::TcpStream::connect(pve.addr())
        .await
        .expect("connect");
    // 100 bytes announced, 12 sent.
    tcp.write_all(
        b"POST /api2/json/access/ticket HTTP/1.1\r\nHost: pve\r\n\
Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nusername=roo",
    )
    .await
    .expect("send");
    let started = Instant::now();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut answer))
        .await
        .expect("the server closes the connection before 10 s")
        .expect("read");
    let waited = started.elapsed();
    assert_eq!(
        String::from_utf8_lossy(&answer),
        "",
        "closed without an answer"
    );
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_secs(5),
        "closed after {waited:?}"
    );
}

#[tokio::test]
async fn shutdown_lets_a_request_in_flight_finish() {
    let pve = start(FakePve::builder()).await;
    let http = client();
    let auth = login(&http, &pve).await;
    delay_version(&http, &pve, &auth, 800).await;
    let cookie = auth.0;
    let url = format!("{}/version", pve.api_url());
    let addr = pve.addr();
    let in_flight = tokio::spawn({
        let (http, cookie) = (http.clone(), cookie.clone());
        async move {
            let r = http
                .get(url)
                .header("Cookie", cookie)
                .send()
                .await
                .expect("answered");
            (r.status(), r.text().await.expect("whole body"))
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    pve.shutdown().await;
    let took = started.elapsed();
    let (status, body) = in_flight.await.expect("request task");
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).expect("a whole JSON answer");
    assert!(v["data"]["version"].is_string(), "{v}");
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(5),
        "shutdown waited {took:?} for the request"
    );
    // No longer accepting.
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

#[tokio::test]
async fn shutdown_aborts_what_outlasts_the_grace_period() {
    let pve = start(FakePve::builder().shutdown_grace(Duration::from_millis(300))).await;
    let http = client();
    let auth = login(&http, &pve).await;
    delay_version(&http, &pve, &auth, 20_000).await;
    let cookie = auth.0;
    let url = format!("{}/version", pve.api_url());
    let in_flight = tokio::spawn({
        let http = http.clone();
        async move { http.get(url).header("Cookie", cookie).send().await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    pve.shutdown().await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "shutdown took {took:?}");
    let r = in_flight.await.expect("request task");
    assert!(r.is_err(), "aborted without an answer: {r:?}");
}

/// `GET /` (the dashboard's page) on `tcp`, its whole answer read: the
/// status.
async fn get_page(tcp: &mut tokio::net::TcpStream) -> u16 {
    tcp.write_all(b"GET / HTTP/1.1\r\nHost: pve\r\n\r\n")
        .await
        .expect("send");
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        let n = tcp.read(&mut buf).await.expect("read");
        assert!(n > 0, "closed before an answer");
        got.extend_from_slice(&buf[..n]);
        if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&got[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("a content length");
    while got.len() < head_end + length {
        let n = tcp.read(&mut buf).await.expect("read");
        assert!(n > 0, "closed within the body");
        got.extend_from_slice(&buf[..n]);
    }
    head.split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("a status")
}

/// Waits for the server to close `tcp` (10 s at most): how long it took.
async fn closed(tcp: &mut tokio::net::TcpStream) -> Duration {
    let started = Instant::now();
    let mut buf = [0u8; 64];
    let n = tokio::time::timeout(Duration::from_secs(10), tcp.read(&mut buf))
        .await
        .expect("the server closes the connection before 10 s")
        .unwrap_or(0);
    assert_eq!(n, 0, "closed without an answer");
    started.elapsed()
}

fn head_timeout(ms: u64) -> fake_pve::Builder {
    FakePve::builder()
        .tls(fake_pve::Tls::Off)
        .request_head_timeout(Duration::from_millis(ms))
}

#[rstest::rstest]
#[case::idle_after_an_answer(true)]
#[case::a_head_that_never_ends(false)]
#[tokio::test]
async fn a_connection_without_a_whole_request_head_is_closed(#[case] answered_first: bool) {
    let pve = start(head_timeout(300)).await;
    let mut tcp = tokio::net::TcpStream::connect(pve.addr())
        .await
        .expect("connect");
    if answered_first {
        assert_eq!(get_page(&mut tcp).await, 200);
    } else {
        tcp.write_all(b"GET / HTTP/1.1\r\nHost: pve\r\n")
            .await
            .expect("send");
    }
    let waited = closed(&mut tcp).await;
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_secs(5),
        "closed after {waited:?}"
    );
}

#[tokio::test]
async fn a_connection_asked_again_in_time_stays_open() {
    let pve = start(head_timeout(1_000)).await;
    let mut tcp = tokio::net::TcpStream::connect(pve.addr())
        .await
        .expect("connect");
    let started = Instant::now();
    for _ in 0..8 {
        assert_eq!(get_page(&mut tcp).await, 200);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(started.elapsed() > Duration::from_millis(1_500));
    assert_eq!(get_page(&mut tcp).await, 200, "the same connection");
}

#[tokio::test]
async fn a_request_answered_slower_than_the_head_timeout_is_answered() {
    let pve = start(head_timeout(300)).await;
    let http = client();
    let auth = login(&http, &pve).await;
    delay_version(&http, &pve, &auth, 900).await;
    let r = http
        .get(format!("{}/version", pve.api_url()))
        .header("Cookie", &auth.0)
        .send()
        .await
        .expect("answered");
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.expect("JSON");
    assert!(v["data"]["version"].is_string(), "{v}");
}
