//! What the operator's test files share: root@pam's token on fake-pve, an
//! in-process fake-pve (manual clock, instant tasks), and an operator whose
//! clients give up fast.
#![allow(dead_code, missing_docs, clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use fake_pve::{Clock, FakePve, Latency, Running, Scenario};
use pve_client::RetryPolicy;
use pve_client::api::tasks::WaitOptions;
use pve_operator::Operator;

pub const TOKEN: &str = "root@pam!automation";
pub const SECRET: &str = "0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60";

/// An operator without retries and with short task polls.
pub fn operator() -> Arc<Operator> {
    Arc::new(Operator::new(operator_tuning()))
}

/// The client settings of [`operator`].
pub fn operator_tuning() -> Option<pve_operator::controller::ClientTuning> {
    Some(Arc::new(|b| {
        b.retry(RetryPolicy::none())
            .timeout(Duration::from_millis(1500))
            .wait_options(
                WaitOptions::default()
                    .poll_interval(Duration::from_millis(5))
                    .timeout(Duration::from_secs(10)),
            )
    }))
}

/// fake-pve on a free loopback port with `scenario`.
pub async fn fake(scenario: &str) -> Running {
    FakePve::builder()
        .listen("127.0.0.1:0".parse().unwrap())
        .auth_failure_delay(Duration::ZERO)
        .clock(Clock::manual(1_790_000_000))
        .latency(Latency::instant())
        .scenario(Scenario::parse(scenario, "operator.yaml").unwrap())
        .start()
        .await
        .unwrap()
}

/// A directory of a test's own under the system's temporary directory
/// (`pve-operator-{what}-` and a unique tail), removed with everything in
/// it when dropped.
pub struct TempDir(tempfile::TempDir);

impl TempDir {
    /// A new, empty one.
    pub fn new(what: &str) -> Self {
        Self(
            tempfile::Builder::new()
                .prefix(&format!("pve-operator-{what}-"))
                .tempdir()
                .unwrap(),
        )
    }
}

impl std::ops::Deref for TempDir {
    type Target = std::path::Path;

    fn deref(&self) -> &std::path::Path {
        self.0.path()
    }
}

impl AsRef<std::path::Path> for TempDir {
    fn as_ref(&self) -> &std::path::Path {
        self.0.path()
    }
}
