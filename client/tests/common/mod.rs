//! Shared helpers: an in-process fake-pve on a free loopback port with a
//! manual clock, and clients for it in either authentication mode.
#![allow(dead_code, missing_docs)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fake_pve::{Clock, FakePve, Latency, Running, Scenario};
use pve_client::api::tasks::WaitOptions;
use pve_client::pve_schema::{self, Release, returns};
use pve_client::schema::{release_for, segments};
use pve_client::{Answer, Client, Config, ConfigBuilder, Method, RetryPolicy};

/// The emulated clock's start.
pub const T0: i64 = 1_790_000_000;

pub const ROOT_TOKEN: &str = "root@pam!automation";
pub const ROOT_TOKEN_SECRET: &str = "0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60";
pub const CI_TOKEN: &str = "ci@pve!runner";
pub const CI_TOKEN_SECRET: &str = "7d1c4a52-0e2b-4b8f-9a61-3f5e8d2c9b10";

/// A single node `pve` with root's token, an unprivileged user with a
/// token, and two guests (100 starts on boot).
pub const SCENARIO: &str = r"
users:
  - userid: root@pam
    tokens:
      - { tokenid: automation, secret: 0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60, privsep: false }
  - userid: ci@pve
    password: ci-password
    tokens:
      - { tokenid: runner, secret: 7d1c4a52-0e2b-4b8f-9a61-3f5e8d2c9b10, privsep: false }
vms:
  - { vmid: 100, node: pve, name: gateway, status: stopped, config: { onboot: 1 } }
  - { vmid: 101, node: pve, name: worker, status: running }
";

/// How a test client authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Password,
    Token,
}

pub const MODES: [Mode; 2] = [Mode::Password, Mode::Token];

pub fn builder() -> fake_pve::Builder {
    FakePve::builder()
        .listen("127.0.0.1:0".parse().expect("address"))
        .auth_failure_delay(Duration::ZERO)
        .clock(Clock::manual(T0))
        .scenario(Scenario::parse(SCENARIO, "client-tests.yaml").expect("scenario"))
}

pub async fn start() -> Running {
    builder().start().await.expect("fake-pve starts")
}

/// Tasks of `kind` take `ms` of emulated time.
pub async fn start_with_latency(kind: &str, ms: u64) -> Running {
    let mut latency = Latency::instant();
    latency
        .tasks
        .insert(kind.to_string(), fake_pve::Dist::Fixed(ms));
    builder()
        .latency(latency)
        .start()
        .await
        .expect("fake-pve starts")
}

/// Fast retries and polls, so that failure paths end quickly.
pub fn fast(b: ConfigBuilder) -> ConfigBuilder {
    b.retry(
        RetryPolicy::default()
            .max_retries(2)
            .initial_delay(Duration::from_millis(1))
            .max_delay(Duration::from_millis(5)),
    )
    .timeout(Duration::from_secs(20))
    .wait_options(
        WaitOptions::default()
            .poll_interval(Duration::from_millis(5))
            .timeout(Duration::from_secs(10)),
    )
}

/// What the answer `data` of `method path` breaks in the endpoint's
/// `returns` schema of `release` (empty when it fits, or when the schema
/// has no such path, as for `/_fake/...`).
pub fn shape_problems(
    release: Release,
    method: &Method,
    path: &str,
    data: &serde_json::Value,
) -> Vec<String> {
    let spec = pve_schema::spec(release);
    match spec.find(method.as_str(), &segments(path)) {
        Some(found) => returns::check(&found.endpoint.returns, data)
            .into_iter()
            .map(|p| format!("{method} {path} ({}): {p}", found.endpoint.name))
            .collect(),
        None => Vec::new(),
    }
}

/// The calls a shape checker has checked, as `METHOD name` (the
/// schema's name of the endpoint).
#[derive(Clone, Default)]
pub struct Checked(Arc<Mutex<Vec<String>>>);

impl Checked {
    pub fn names(&self) -> Vec<String> {
        self.0.lock().expect("lock").clone()
    }
}

/// An observer that checks an answer against the schema's `returns` of
/// the server's release (9.2 until a `/version` answer says otherwise),
/// panicking (failing the test) on a mismatch, and records the calls it
/// checked.
pub fn shape_observer(
    checked: &Checked,
) -> impl Fn(&Method, &str, &Answer) + Send + Sync + 'static {
    let log = checked.clone();
    let release = Arc::new(Mutex::new(Release::V9_2));
    move |method: &Method, path: &str, answer: &Answer| {
        if path == "/version"
            && let Some(r) = answer.data.get("release").and_then(|r| r.as_str())
        {
            *release.lock().expect("lock") = release_for(r);
        }
        let r = *release.lock().expect("lock");
        let problems = shape_problems(r, method, path, &answer.data);
        assert!(
            problems.is_empty(),
            "answer does not fit the schema: {problems:#?}"
        );
        if let Some(f) = pve_schema::spec(r).find(method.as_str(), &segments(path)) {
            log.0
                .lock()
                .expect("lock")
                .push(format!("{method} {}", f.endpoint.name));
        }
    }
}

/// Checks every successful answer of a client built from `b` (see
/// [`shape_observer`]).
pub fn check_shapes(b: ConfigBuilder) -> (ConfigBuilder, Checked) {
    let checked = Checked::default();
    let b = b.observer(shape_observer(&checked));
    (b, checked)
}

/// A configuration that trusts the fake's certificate through the CA
/// bundle, without credentials, and checks every answer's shape.
pub fn base(run: &Running) -> ConfigBuilder {
    check_shapes(fast(
        Config::builder()
            .endpoint(run.url())
            .ca_bundle_pem(run.cert_pem().expect("TLS")),
    ))
    .0
}

pub fn config(run: &Running, mode: Mode) -> ConfigBuilder {
    match mode {
        Mode::Password => base(run).password("root@pam", "password"),
        Mode::Token => base(run).token(ROOT_TOKEN, ROOT_TOKEN_SECRET),
    }
}

pub fn client(run: &Running, mode: Mode) -> Client {
    Client::new(config(run, mode).build().expect("config")).expect("client")
}

/// A client whose every answer is shape-checked, with the record of the
/// calls checked.
pub fn checked_client(run: &Running, mode: Mode) -> (Client, Checked) {
    let b = fast(
        Config::builder()
            .endpoint(run.url())
            .ca_bundle_pem(run.cert_pem().expect("TLS")),
    );
    let b = match mode {
        Mode::Password => b.password("root@pam", "password"),
        Mode::Token => b.token(ROOT_TOKEN, ROOT_TOKEN_SECRET),
    };
    let (b, checked) = check_shapes(b);
    (
        Client::new(b.build().expect("config")).expect("client"),
        checked,
    )
}
