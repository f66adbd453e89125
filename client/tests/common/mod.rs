//! Shared helpers: an in-process fake-pve on a free loopback port with a
//! manual clock, and clients for it in either authentication mode.
#![allow(dead_code, missing_docs)]

use std::collections::BTreeMap;
use std::time::Duration;

use fake_pve::{Clock, FakePve, Latency, Running, Scenario};
use pve_client::api::tasks::WaitOptions;
use pve_client::{Client, Config, ConfigBuilder, RetryPolicy};

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
    builder()
        .latency(Latency {
            default_ms: 0,
            tasks: BTreeMap::from([(kind.to_string(), ms)]),
        })
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

/// A configuration that trusts the fake's certificate through the CA
/// bundle, without credentials.
pub fn base(run: &Running) -> ConfigBuilder {
    fast(
        Config::builder()
            .endpoint(run.url())
            .ca_bundle_pem(run.cert_pem().expect("TLS")),
    )
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
