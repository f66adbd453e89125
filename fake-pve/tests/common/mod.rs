//! Shared helpers for the integration tests: an in-process fake-pve on a
//! free loopback port, and a client that keeps PVE's reason phrases.
#![allow(dead_code, missing_docs)]

use std::time::Duration;

use fake_pve::{Clock, FakePve, PveVersion, Running, Scenario, Tls};
use reqwest::Method;
use serde_json::Value;

/// A fixed start time, so that tests can reason about the clock.
pub const T0: i64 = 1_790_000_000;

pub struct Pve {
    pub run: Running,
    pub http: reqwest::Client,
    pub version: PveVersion,
}

/// What came back.
#[derive(Debug)]
pub struct Resp {
    /// The request, as `(METHOD, path after /api2/json)`, for shape checks.
    pub request: Option<(String, String)>,
    pub version: PveVersion,
    pub status: u16,
    pub reason: String,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
}

impl Resp {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.text))
    }

    /// The `data` member of a success, checked against the endpoint's
    /// `returns` schema.
    pub fn data(&self) -> Value {
        assert_eq!(self.status, 200, "{self:?}");
        let data = self.json()["data"].clone();
        if let Some((method, rel)) = &self.request {
            let segs: Vec<String> = rel
                .split('/')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            if let Some(found) = fake_pve::spec::spec(self.version).find(method, &segs) {
                let problems = fake_pve::spec::returns::check(&found.endpoint.returns, &data);
                assert!(
                    problems.is_empty(),
                    "{method} {rel}: the answer does not fit the schema: {problems:?}\n{data}"
                );
            }
        }
        data
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts a 400 with `errors.<param> == msg`.
    pub fn assert_param_error(&self, param: &str, msg: &str) {
        assert_eq!(self.status, 400, "{self:?}");
        assert_eq!(self.reason, "Parameter verification failed.");
        let j = self.json();
        assert_eq!(j["message"], "Parameter verification failed.\n");
        assert_eq!(j["errors"][param], msg, "{j}");
    }

    /// Asserts an error status with PVE's reason phrase and message body.
    pub fn assert_error(&self, status: u16, msg: &str) {
        assert_eq!(self.status, status, "{self:?}");
        assert_eq!(self.reason, msg.lines().next().unwrap_or(""));
        let j = self.json();
        assert_eq!(j["data"], Value::Null);
        assert_eq!(j["message"].as_str(), Some(msg), "{j}");
    }
}

/// How a request authenticates.
#[derive(Clone, Debug)]
pub enum Auth {
    None,
    Ticket { ticket: String, csrf: String },
    Token(String),
    Header(&'static str, String),
}

pub fn builder() -> fake_pve::Builder {
    FakePve::builder()
        .listen("127.0.0.1:0".parse().expect("addr"))
        .auth_failure_delay(Duration::ZERO)
        .clock(Clock::manual(T0))
}

pub async fn start() -> Pve {
    start_with(builder()).await
}

pub async fn start_version(v: PveVersion) -> Pve {
    start_with(builder().pve_version(v)).await
}

pub async fn start_scenario(yaml: &str) -> Pve {
    let s = Scenario::parse(yaml, "test.yaml").expect("valid scenario");
    start_with(builder().scenario(s)).await
}

pub async fn start_with(b: fake_pve::Builder) -> Pve {
    let run = b.start().await.expect("fake-pve starts");
    let version = run.state().settings().version;
    let http = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client");
    Pve { run, http, version }
}

pub async fn start_http() -> Pve {
    start_with(builder().tls(Tls::Off)).await
}

impl Pve {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.run.url())
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        auth: &Auth,
        body: Option<(&str, String)>,
    ) -> Resp {
        let mut rb = self.http.request(method.clone(), self.url(path));
        match auth {
            Auth::None => {}
            Auth::Ticket { ticket, csrf } => {
                rb = rb.header("Cookie", format!("PVEAuthCookie={ticket}"));
                if method != Method::GET {
                    rb = rb.header("CSRFPreventionToken", csrf);
                }
            }
            Auth::Token(t) => rb = rb.header("Authorization", t),
            Auth::Header(name, value) => rb = rb.header(*name, value),
        }
        if let Some((ctype, text)) = body {
            if !ctype.is_empty() {
                rb = rb.header("Content-Type", ctype);
            }
            rb = rb.body(text);
        }
        let r = rb.send().await.expect("request");
        let status = r.status().as_u16();
        let reason = r
            .extensions()
            .get::<hyper::ext::ReasonPhrase>()
            .map(|p| String::from_utf8_lossy(p.as_bytes()).into_owned())
            .or_else(|| r.status().canonical_reason().map(str::to_string))
            .unwrap_or_default();
        let headers = r.headers().clone();
        let text = r.text().await.expect("body");
        let request = path
            .split('?')
            .next()
            .and_then(|p| p.strip_prefix("/api2/json"))
            .map(|rel| (method.to_string(), percent_decode(rel)));
        Resp {
            request,
            version: self.version,
            status,
            reason,
            headers,
            text,
        }
    }

    pub async fn get(&self, path: &str, auth: &Auth) -> Resp {
        self.send(Method::GET, &format!("/api2/json{path}"), auth, None)
            .await
    }

    pub async fn post(&self, path: &str, auth: &Auth, form: &str) -> Resp {
        let body =
            (!form.is_empty()).then(|| ("application/x-www-form-urlencoded", form.to_string()));
        self.send(Method::POST, &format!("/api2/json{path}"), auth, body)
            .await
    }

    pub async fn put(&self, path: &str, auth: &Auth, form: &str) -> Resp {
        let body =
            (!form.is_empty()).then(|| ("application/x-www-form-urlencoded", form.to_string()));
        self.send(Method::PUT, &format!("/api2/json{path}"), auth, body)
            .await
    }

    pub async fn delete(&self, path: &str, auth: &Auth) -> Resp {
        self.send(Method::DELETE, &format!("/api2/json{path}"), auth, None)
            .await
    }

    /// Logs in with a form and returns the ticket auth.
    pub async fn login_as(&self, user: &str, password: &str) -> Auth {
        let r = self
            .post(
                "/access/ticket",
                &Auth::None,
                &format!("username={user}&password={password}"),
            )
            .await;
        let d = r.data();
        Auth::Ticket {
            ticket: d["ticket"].as_str().expect("ticket").to_string(),
            csrf: d["CSRFPreventionToken"].as_str().expect("csrf").to_string(),
        }
    }

    pub async fn root(&self) -> Auth {
        self.login_as("root@pam", "password").await
    }

    /// Waits for a task by advancing the clock, never by sleeping.
    pub async fn task_status(&self, upid: &str, auth: &Auth) -> Value {
        let node = upid.split(':').nth(1).expect("node");
        self.get(&format!("/nodes/{node}/tasks/{}/status", enc(upid)), auth)
            .await
            .data()
    }
}

fn percent_decode(s: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16);
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push(u8::try_from(h * 16 + l).unwrap_or(b'?'));
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Percent-encodes a path segment.
pub fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Percent-encodes each segment of a path (keeping the slashes).
pub fn enc_path(path: &str) -> String {
    path.split('/').map(enc).collect::<Vec<_>>().join("/")
}

/// The UPID a task-starting call answered.
pub fn upid(r: &Resp) -> String {
    r.data().as_str().expect("a UPID").to_string()
}

/// The lines of a task's log (up to 500).
pub async fn task_log(pve: &Pve, auth: &Auth, upid: &str) -> Vec<String> {
    let node = upid.split(':').nth(1).expect("node");
    pve.get(
        &format!("/nodes/{node}/tasks/{}/log?limit=500", enc(upid)),
        auth,
    )
    .await
    .data()
    .as_array()
    .expect("lines")
    .iter()
    .map(|l| l["t"].as_str().unwrap_or_default().to_string())
    .collect()
}

/// The exit status and log of the (stopped) task `r` started.
pub async fn task(pve: &Pve, auth: &Auth, r: &Resp) -> (String, Vec<String>) {
    let u = upid(r);
    let st = pve.task_status(&u, auth).await;
    assert_eq!(st["status"], "stopped", "{st}");
    (
        st["exitstatus"].as_str().unwrap_or_default().to_string(),
        task_log(pve, auth, &u).await,
    )
}

/// The log of the task `r` started, which ended OK.
pub async fn ok(pve: &Pve, auth: &Auth, r: &Resp) -> Vec<String> {
    let (exit, lines) = task(pve, auth, r).await;
    assert_eq!(exit, "OK", "{lines:?}");
    lines
}

/// A control API call (`/_fake/...`); a body starting with `{` or `[` is
/// sent as JSON, any other as a form.
pub async fn control(
    pve: &Pve,
    auth: &Auth,
    method: Method,
    path: &str,
    body: Option<String>,
) -> Resp {
    let body = body.map(|b| {
        let ctype = if b.starts_with('{') || b.starts_with('[') {
            "application/json"
        } else {
            "application/x-www-form-urlencoded"
        };
        (ctype, b)
    });
    pve.send(method, path, auth, body).await
}

/// The volume IDs of a storage as `node` lists them.
pub async fn volids(pve: &Pve, auth: &Auth, node: &str, sid: &str) -> Vec<String> {
    pve.get(&format!("/nodes/{node}/storage/{sid}/content"), auth)
        .await
        .data()
        .as_array()
        .expect("list")
        .iter()
        .map(|v| v["volid"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A TLS connection to the server that trusts only `trusted` (PEM) and
/// names the server `name`: the handshake fails when the chain the
/// server presents does not lead to it.
pub async fn tls_connect(
    pve: &Pve,
    trusted: &str,
    name: &str,
) -> Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>, String> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(rustls::pki_types::CertificateDer::from_pem_slice(trusted.as_bytes()).expect("PEM"))
        .expect("a root");
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(pve.run.addr())
        .await
        .expect("connect");
    let name = rustls::pki_types::ServerName::try_from(name.to_string()).expect("a name");
    tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| e.to_string())
}

/// The certificates the server presents over [`tls_connect`].
pub async fn presented(pve: &Pve, trusted: &str, name: &str) -> Result<Vec<Vec<u8>>, String> {
    let tls = tls_connect(pve, trusted, name).await?;
    let chain = tls.get_ref().1.peer_certificates().expect("certificates");
    Ok(chain.iter().map(|c| c.as_ref().to_vec()).collect())
}
