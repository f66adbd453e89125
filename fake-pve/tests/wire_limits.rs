//! What a client without credentials can hold of the server, over the
//! real socket: a body is read only once its request's credentials (and,
//! for the control API, its permission) are checked from the head, and
//! within a deadline; connections over the cap are closed at once; a
//! transfer encoding is refused as pveproxy refuses it; a request line in
//! absolute form is served as pveproxy serves it.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Auth, builder, start_with};
use fake_pve::Tls;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// A client's side of a connection, plain or TLS.
trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// Opens a connection to `pve`, over TLS when it serves TLS (trusting
/// its own certificate).
async fn connect(pve: &fake_pve::Running) -> Box<dyn Io> {
    let tcp = tokio::net::TcpStream::connect(pve.addr())
        .await
        .expect("connect");
    let Some(pem) = pve.cert_pem() else {
        return Box::new(tcp);
    };
    let (_, pem) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).expect("a PEM certificate");
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(rustls::pki_types::CertificateDer::from(pem.contents))
        .expect("the server's certificate");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("a name");
    Box::new(connector.connect(name, tcp).await.expect("TLS handshake"))
}

/// An answer read off a connection.
#[derive(Debug)]
struct Answer {
    status: u16,
    reason: String,
    /// The head's lines after the status line, lower case.
    head: String,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            (n.trim() == name).then(|| v.trim())
        })
    }
}

/// Reads one answer (its head and a `Content-Length` body) within
/// `within`; `None` when the connection closes (or fails) first.
async fn answer(io: &mut Box<dyn Io>, within: Duration) -> Option<Answer> {
    let read = async {
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        let end = loop {
            if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            match io.read(&mut buf).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        };
        let head = String::from_utf8_lossy(&got[..end]).into_owned();
        let (line, rest) = head.split_once("\r\n").expect("a status line");
        let mut words = line.splitn(3, ' ');
        let _version = words.next();
        let status = words.next()?.parse().ok()?;
        let reason = words.next().unwrap_or("").to_string();
        let head = rest.to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while got.len() < end + length {
            match io.read(&mut buf).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
        let body = String::from_utf8_lossy(&got[end..end + length]).into_owned();
        Some(Answer {
            status,
            reason,
            head,
            body,
        })
    };
    tokio::time::timeout(within, read)
        .await
        .expect("an answer or a closed connection in time")
}

/// Whether the server closes `io` (without a further answer) within
/// `within`.
async fn closes(io: &mut Box<dyn Io>, within: Duration) -> bool {
    let mut buf = [0u8; 256];
    matches!(
        tokio::time::timeout(within, io.read(&mut buf)).await,
        Ok(Ok(0) | Err(_))
    )
}

/// The head of a request with a body of `length` bytes.
fn head(method: &str, path: &str, length: usize, extra: &str) -> String {
    format!(
        "{method} {path} HTTP/1.1\r\nHost: pve\r\n\
Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {length}\r\n{extra}\r\n"
    )
}

/// The headers of a ticket (and its CSRF token).
fn ticket_headers(auth: &Auth) -> String {
    let Auth::Ticket { ticket, csrf } = auth else {
        panic!("a ticket");
    };
    format!("Cookie: PVEAuthCookie={ticket}\r\nCSRFPreventionToken: {csrf}\r\n")
}

/// 400 MiB, as a client may declare.
const HUGE: usize = 400 << 20;

/// Sends the head of a request declaring a [`HUGE`] body and its first
/// bytes, and reads the answer that comes before the rest is sent.
async fn refused_before_the_body(
    pve: &fake_pve::Running,
    method: &str,
    path: &str,
    extra: &str,
) -> Answer {
    let mut io = connect(pve).await;
    let req = format!("{}{}", head(method, path, HUGE, extra), "x".repeat(64));
    io.write_all(req.as_bytes()).await.expect("send");
    io.flush().await.expect("send");
    let started = Instant::now();
    let a = answer(&mut io, Duration::from_secs(5))
        .await
        .unwrap_or_else(|| panic!("{method} {path}: closed without an answer"));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{method} {path}: answered after {:?}",
        started.elapsed()
    );
    // pveproxy closes the connection after an error answer: the rest of
    // the body is never read.
    assert_eq!(a.header("connection"), Some("close"), "{a:?}");
    assert!(
        closes(&mut io, Duration::from_secs(5)).await,
        "{method} {path}: the connection stays open"
    );
    a
}

#[tokio::test]
async fn a_body_without_credentials_is_refused_before_it_is_read() {
    for tls in [false, true] {
        let b = if tls {
            builder()
        } else {
            builder().tls(Tls::Off)
        };
        let pve = start_with(b).await;
        for (method, path) in [
            ("PUT", "/_fake/state"),
            ("POST", "/_fake/seed"),
            ("POST", "/api2/json/nodes/pve/qemu"),
            ("POST", "/api2/json/nodes/pve/storage/local/upload"),
            ("PUT", "/api2/extjs/access/password"),
        ] {
            let a = refused_before_the_body(&pve.run, method, path, "").await;
            assert_eq!(
                (a.status, a.reason.as_str(), a.body.as_str()),
                (401, "No ticket", ""),
                "{method} {path} (TLS: {tls})"
            );
        }
    }
}

#[tokio::test]
async fn bad_credentials_and_a_missing_permission_are_answered_before_the_body() {
    let pve = start_with(builder().tls(Tls::Off)).await;
    let root = pve.root().await;
    // A forged ticket.
    let a = refused_before_the_body(
        &pve.run,
        "POST",
        "/api2/json/nodes/pve/qemu",
        "Cookie: PVEAuthCookie=PVE:root@pam:6A000000::Zm9yZ2Vk\r\n",
    )
    .await;
    assert_eq!(a.status, 401, "{a:?}");
    // A ticket without its CSRF token, on a write.
    let Auth::Ticket { ticket, .. } = &root else {
        panic!("a ticket");
    };
    let cookie = format!("Cookie: PVEAuthCookie={ticket}\r\n");
    let a = refused_before_the_body(&pve.run, "POST", "/api2/json/nodes/pve/qemu", &cookie).await;
    assert_eq!(
        (a.status, a.reason.as_str()),
        (401, "Permission denied - invalid csrf token")
    );
    let a = refused_before_the_body(&pve.run, "PUT", "/_fake/state", &cookie).await;
    assert_eq!(
        (a.status, a.reason.as_str()),
        (401, "Permission denied - invalid csrf token")
    );
    // Another user than root@pam on the control API: 403 before its
    // body, as after it.
    let created = pve
        .post(
            "/access/users",
            &root,
            "userid=ci@pve&password=long-enough-secret",
        )
        .await;
    assert_eq!(created.status, 200, "{created:?}");
    let ci = pve.login_as("ci@pve", "long-enough-secret").await;
    let a = refused_before_the_body(&pve.run, "PUT", "/_fake/state", &ticket_headers(&ci)).await;
    assert_eq!(
        (a.status, a.reason.as_str()),
        (403, "Permission check failed (/_fake, root@pam)"),
        "{a:?}"
    );
}

#[tokio::test]
async fn bodies_with_credentials_and_the_login_are_read() {
    let pve = start_with(builder().tls(Tls::Off)).await;
    // The login needs no credentials: its body is read, also when it
    // comes in parts.
    let mut io = connect(&pve.run).await;
    let form = "username=root@pam&password=password";
    let req = head("POST", "/api2/json/access/ticket", form.len(), "");
    io.write_all(req.as_bytes()).await.expect("send");
    io.write_all(&form.as_bytes()[..10]).await.expect("send");
    io.flush().await.expect("send");
    tokio::time::sleep(Duration::from_millis(200)).await;
    io.write_all(&form.as_bytes()[10..]).await.expect("send");
    let a = answer(&mut io, Duration::from_secs(5))
        .await
        .expect("an answer");
    assert_eq!(a.status, 200, "{a:?}");
    let ticket: serde_json::Value = serde_json::from_str(&a.body).expect("JSON");
    let auth = Auth::Ticket {
        ticket: ticket["data"]["ticket"]
            .as_str()
            .expect("ticket")
            .to_string(),
        csrf: ticket["data"]["CSRFPreventionToken"]
            .as_str()
            .expect("csrf")
            .to_string(),
    };
    // An authenticated write on the same connection, its body in parts.
    let form = "vmid=4242&memory=512";
    let req = head(
        "POST",
        "/api2/json/nodes/pve/qemu",
        form.len(),
        &ticket_headers(&auth),
    );
    io.write_all(req.as_bytes()).await.expect("send");
    io.write_all(&form.as_bytes()[..4]).await.expect("send");
    io.flush().await.expect("send");
    tokio::time::sleep(Duration::from_millis(200)).await;
    io.write_all(&form.as_bytes()[4..]).await.expect("send");
    let a = answer(&mut io, Duration::from_secs(5))
        .await
        .expect("an answer");
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(
        pve.get("/nodes/pve/qemu/4242/status/current", &auth)
            .await
            .status,
        200
    );
    // The API's limit, declared: refused (after authentication) without
    // reading it.
    let a = refused_before_the_body(
        &pve.run,
        "POST",
        "/api2/json/nodes/pve/qemu",
        &ticket_headers(&auth),
    )
    .await;
    assert_eq!((a.status, a.reason.as_str()), (501, "for data too large"));
}

/// Sends a request declaring a body of 1000 bytes, then one byte of it
/// every 100 ms: how long until the server closes the connection (or
/// `None` if it has not within `within`), and whether it answered.
async fn drip(
    pve: &fake_pve::Running,
    method: &str,
    path: &str,
    extra: &str,
    within: Duration,
) -> Option<(Duration, Option<Answer>)> {
    let mut io = connect(pve).await;
    io.write_all(head(method, path, 1000, extra).as_bytes())
        .await
        .expect("send");
    io.flush().await.expect("send");
    let started = Instant::now();
    while started.elapsed() < within {
        let mut buf = [0u8; 4096];
        match tokio::time::timeout(Duration::from_millis(100), io.read(&mut buf)).await {
            Err(_) => {}
            Ok(Ok(0) | Err(_)) => return Some((started.elapsed(), None)),
            Ok(Ok(n)) => {
                let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                panic!("{method} {path}: answered while the body came: {text}");
            }
        }
        if io.write_all(b"a").await.is_err() || io.flush().await.is_err() {
            return Some((started.elapsed(), None));
        }
    }
    None
}

#[tokio::test]
async fn a_body_sent_a_byte_at_a_time_is_cut_off_at_its_deadline() {
    let pve = start_with(
        builder()
            .tls(Tls::Off)
            .request_body_timeout(Duration::from_secs(20))
            .request_body_deadline(Duration::from_millis(800)),
    )
    .await;
    let root = pve.root().await;
    for (method, path, extra) in [
        ("POST", "/api2/json/access/ticket", String::new()),
        ("PUT", "/_fake/state", ticket_headers(&root)),
        ("POST", "/api2/json/nodes/pve/qemu", ticket_headers(&root)),
    ] {
        let (after, _) = drip(&pve.run, method, path, &extra, Duration::from_secs(8))
            .await
            .unwrap_or_else(|| panic!("{method} {path}: still open after 8 s"));
        assert!(
            after >= Duration::from_millis(700) && after < Duration::from_secs(5),
            "{method} {path}: closed after {after:?}"
        );
    }
    // The server still serves.
    assert_eq!(pve.get("/version", &root).await.status, 200);
}

/// `GET /api2/json/access/domains` (no credentials needed, kept alive)
/// on `io`: the answer's status, if one came.
async fn domains(io: &mut Box<dyn Io>) -> Option<u16> {
    let req = b"GET /api2/json/access/domains HTTP/1.1\r\nHost: pve\r\n\r\n";
    if io.write_all(req).await.is_err() || io.flush().await.is_err() {
        return None;
    }
    answer(io, Duration::from_secs(5)).await.map(|a| a.status)
}

/// `GET /api2/json/access/domains` on `io`: the answer, if one came.
async fn domains_answer(io: &mut Box<dyn Io>) -> Option<Answer> {
    let req = b"GET /api2/json/access/domains HTTP/1.1\r\nHost: pve\r\n\r\n";
    if io.write_all(req).await.is_err() || io.flush().await.is_err() {
        return None;
    }
    answer(io, Duration::from_secs(5)).await
}

#[tokio::test]
async fn connections_over_the_cap_are_closed_at_once() {
    let pve = start_with(builder().tls(Tls::Off).max_connections(2)).await;
    let mut first = connect(&pve.run).await;
    assert_eq!(domains(&mut first).await, Some(200));
    // The second holds the last place (idle).
    let mut second = connect(&pve.run).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    // One more is closed as soon as it is accepted, unanswered.
    for _ in 0..3 {
        let mut over = connect(&pve.run).await;
        let started = Instant::now();
        assert_eq!(domains(&mut over).await, None);
        assert!(
            closes(&mut over, Duration::from_secs(2)).await,
            "the connection over the cap stays open"
        );
        assert!(started.elapsed() < Duration::from_secs(2));
    }
    // The one accepted first keeps being served.
    for _ in 0..3 {
        assert_eq!(domains(&mut first).await, Some(200));
    }
    // As pveproxy does, the connection that took the last place is
    // served one request, then closed.
    let a = domains_answer(&mut second).await.expect("an answer");
    assert_eq!((a.status, a.header("connection")), (200, Some("close")));
    assert!(closes(&mut second, Duration::from_secs(2)).await);
    // Its place is free again: a new connection is served.
    let started = Instant::now();
    loop {
        let mut next = connect(&pve.run).await;
        if domains(&mut next).await == Some(200) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "no connection served after one closed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(domains(&mut first).await, Some(200));
}

/// A `POST /api2/json/access/ticket` whose body is sent in the transfer
/// encodings given (one header line each): the answer.
async fn encoded(pve: &fake_pve::Running, encodings: &[&str]) -> Answer {
    let mut io = connect(pve).await;
    let mut req = String::from("POST /api2/json/access/ticket HTTP/1.1\r\nHost: pve\r\n");
    req.push_str("Content-Type: application/x-www-form-urlencoded\r\n");
    for te in encodings {
        req.push_str(&format!("Transfer-Encoding: {te}\r\n"));
    }
    req.push_str("\r\n23\r\nusername=root@pam&password=password\r\n0\r\n\r\n");
    io.write_all(req.as_bytes()).await.expect("send");
    io.flush().await.expect("send");
    answer(&mut io, Duration::from_secs(5))
        .await
        .expect("an answer")
}

#[tokio::test]
async fn a_body_in_a_transfer_encoding_is_refused_as_pveproxy_refuses_it() {
    let pve = start_with(builder()).await;
    for (encodings, msg) in [
        (&["chunked"][..], "chunked transfer encoding not supported"),
        (&["Chunked"][..], "chunked transfer encoding not supported"),
        (
            &["gzip, chunked"][..],
            "Unknown transfer encoding 'gzip, chunked'",
        ),
        (
            &["gzip", "chunked"][..],
            "Unknown transfer encoding 'gzip, chunked'",
        ),
        (
            &["identity, chunked"][..],
            "Unknown transfer encoding 'identity, chunked'",
        ),
    ] {
        let a = encoded(&pve.run, encodings).await;
        assert_eq!(
            (a.status, a.reason.as_str(), a.body.as_str()),
            (501, msg, msg),
            "{encodings:?}"
        );
    }
}

/// A writer the access log can write to, read by the test.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("the sink").extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_request_in_absolute_form_is_served_on_its_path() {
    // pveproxy takes the path of the URI it is given (`$request->uri->path`),
    // whatever host it names, and logs the request line as it came.
    let sink = Sink::default();
    let log = fake_pve::access_log::AccessLog::to_writer(Box::new(sink.clone())).expect("a log");
    let pve = start_with(builder().access_log(log)).await;
    let mut io = connect(&pve.run).await;
    let req = "GET http://other.example/api2/json/access/domains HTTP/1.1\r\nHost: pve\r\n\r\n";
    io.write_all(req.as_bytes()).await.expect("send");
    io.flush().await.expect("send");
    let a = answer(&mut io, Duration::from_secs(5))
        .await
        .expect("an answer");
    assert_eq!(a.status, 200, "{a:?}");
    let domains: serde_json::Value = serde_json::from_str(&a.body).expect("JSON");
    assert!(
        domains["data"].as_array().is_some_and(|d| !d.is_empty()),
        "{domains}"
    );
    // Outside /api2 too.
    let req = "GET https://other.example/nothing HTTP/1.1\r\nHost: pve\r\n\r\n";
    io.write_all(req.as_bytes()).await.expect("send");
    let a = answer(&mut io, Duration::from_secs(5))
        .await
        .expect("an answer");
    assert_eq!(
        (a.status, a.reason.as_str()),
        (500, "no such file '/nothing'")
    );
    pve.run.shutdown().await;
    let text = String::from_utf8(sink.0.lock().expect("the sink").clone()).expect("UTF-8");
    assert!(
        text.contains("\"GET http://other.example/api2/json/access/domains HTTP/1.1\" 200 "),
        "{text}"
    );
    assert!(
        text.contains("\"GET https://other.example/nothing HTTP/1.1\" 500 "),
        "{text}"
    );
}
