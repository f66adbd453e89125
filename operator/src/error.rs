//! The operator's error, its classification (seed 003's table: what is
//! retried and what waits for a fix) and the requeue backoff.

use std::time::Duration;

use pve_client::Category;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// PVE or the network refused.
    #[error(transparent)]
    Pve(#[from] pve_client::Error),
    /// A resource refers to something missing or malformed (a cluster,
    /// a secret, a file).
    #[error("{0}")]
    Config(String),
    /// A manifest could not be read.
    #[error("{path}: {message}")]
    Manifest {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
    /// A deletion cannot reach PVE (classified as the error inside).
    #[error(
        "cannot delete the VM: {0} (fix the cluster's settings, or set deletionPolicy: Orphan to leave the VM)"
    )]
    Deleting(Box<Error>),
    /// PVE refused to create or clone the VM (an answer, not a failure to
    /// get one): retrying the same request would get the same answer.
    #[error("PVE refused to {step} the VM: {source}")]
    Refused {
        /// `create` or `clone`.
        step: &'static str,
        /// PVE's answer.
        source: pve_client::Error,
    },
    /// A step ran and PVE still needs it: retrying would not help.
    #[error("no progress: {0}")]
    NoProgress(String),
    /// A file could not be read or written.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The error types of the `proxmox_operator_errors_total` metric and of
/// the retry decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorType {
    /// 401: wrong credentials. Not retried.
    Authentication,
    /// 403: missing privileges. Not retried.
    Authorization,
    /// 404, or a missing object. Not retried.
    NotFound,
    /// 409, `already exists`, digest mismatch. Retried.
    Conflict,
    /// `VM is locked`. Retried.
    Locked,
    /// 5xx. Retried.
    Server,
    /// Connection failures, timeouts, 595. Retried.
    Network,
    /// 400 from PVE. Not retried.
    Validation,
    /// The operator's own configuration (TLS, missing secrets). Not
    /// retried.
    Configuration,
    /// A PVE task ended with an error. Retried.
    TaskFailed,
}

impl ErrorType {
    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Authentication => "authentication",
            Self::Authorization => "authorization",
            Self::NotFound => "not_found",
            Self::Conflict => "conflict",
            Self::Locked => "locked",
            Self::Server => "server",
            Self::Network => "network",
            Self::Validation => "validation",
            Self::Configuration => "configuration",
            Self::TaskFailed => "task_failed",
        }
    }

    /// Whether a reconcile that failed so is retried with backoff (the
    /// others wait for the periodic resync, that is for a fix).
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            Self::Conflict | Self::Locked | Self::Server | Self::Network | Self::TaskFailed
        )
    }

    /// The condition reason to report.
    pub fn reason(self) -> &'static str {
        match self {
            Self::Authentication | Self::Authorization => "AuthenticationError",
            Self::Network => "NetworkError",
            Self::NotFound | Self::Validation | Self::Configuration => "ConfigurationError",
            Self::Conflict | Self::Locked | Self::Server | Self::TaskFailed => "TransientError",
        }
    }
}

impl Error {
    /// Sorts the error (seed 003: 401/403/404 are not retried; 409,
    /// locks, 5xx and the network are).
    pub fn error_type(&self) -> ErrorType {
        match self {
            Self::Pve(e) => match e.category() {
                Category::Authentication => ErrorType::Authentication,
                Category::Permission => ErrorType::Authorization,
                Category::NotFound => ErrorType::NotFound,
                Category::Conflict if e.is_locked() => ErrorType::Locked,
                Category::Conflict => ErrorType::Conflict,
                Category::Network if e.status() == Some(595) => ErrorType::Network,
                Category::Network | Category::Timeout => ErrorType::Network,
                Category::Validation => ErrorType::Validation,
                Category::TaskFailed => ErrorType::TaskFailed,
                Category::Server | Category::Decode => ErrorType::Server,
                _ => ErrorType::Configuration,
            },
            Self::Deleting(e) => e.error_type(),
            Self::Refused { .. } => ErrorType::Validation,
            Self::Config(_) | Self::Manifest { .. } | Self::NoProgress(_) => {
                ErrorType::Configuration
            }
            Self::Io(_) => ErrorType::Server,
        }
    }

    /// Whether to retry with backoff.
    pub fn is_retryable(&self) -> bool {
        self.error_type().is_retryable()
    }

    /// Whether PVE said the VMID is taken.
    pub fn is_already_exists(&self) -> bool {
        matches!(self, Self::Pve(e) if e.message().contains("already exists"))
    }
}

/// Requeue delays: 1 s, 2 s, 4 s, 8 s ... capped (5 minutes), with
/// jitter of up to a tenth either way (never above the cap).
#[derive(Debug, Clone, Copy)]
pub struct Backoff {
    /// The first delay.
    pub base: Duration,
    /// The largest delay.
    pub cap: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            base: Duration::from_secs(1),
            cap: Duration::from_secs(300),
        }
    }
}

impl Backoff {
    /// The delay before retry `attempt` (1 for the first), without jitter.
    pub fn nominal(&self, attempt: u32) -> Duration {
        let exp = attempt.saturating_sub(1).min(30);
        self.base.saturating_mul(1u32 << exp).min(self.cap)
    }

    /// The delay with `jitter` in `[-1, 1]` scaling a tenth of it.
    pub fn delay_with(&self, attempt: u32, jitter: f64) -> Duration {
        let n = self.nominal(attempt).as_secs_f64();
        let j = n * 0.1 * jitter.clamp(-1.0, 1.0);
        Duration::from_secs_f64((n + j).max(0.0)).min(self.cap)
    }

    /// The delay with random jitter.
    pub fn delay(&self, attempt: u32) -> Duration {
        self.delay_with(attempt, rand::random::<f64>() * 2.0 - 1.0)
    }
}

/// The one retry policy of both modes: per object, a retryable failure
/// waits 1 s, 2 s, 4 s ... up to the cap; a success or a failure that
/// waits for a fix (the resync) starts over.
#[derive(Debug, Default)]
pub struct Retries {
    /// The delays.
    pub backoff: Backoff,
    attempts: std::sync::Mutex<std::collections::HashMap<String, u32>>,
}

impl Retries {
    /// A policy with `backoff`.
    pub fn new(backoff: Backoff) -> Self {
        Self {
            backoff,
            attempts: Default::default(),
        }
    }

    fn attempts(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, u32>> {
        self.attempts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// After a failure of `key`: the backoff delay when `retryable`, else
    /// `None` (wait for the resync).
    pub fn failed(&self, key: &str, retryable: bool) -> Option<Duration> {
        let mut a = self.attempts();
        if !retryable {
            a.remove(key);
            return None;
        }
        let n = a.entry(key.to_string()).or_default();
        *n = n.saturating_add(1);
        Some(self.backoff.delay(*n))
    }

    /// After a success of `key`.
    pub fn succeeded(&self, key: &str) {
        self.attempts().remove(key);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case(1, 1)]
    #[case(2, 2)]
    #[case(3, 4)]
    #[case(4, 8)]
    #[case(9, 256)]
    #[case(10, 300)]
    #[case(60, 300)]
    fn backoff_doubles_up_to_five_minutes(#[case] attempt: u32, #[case] secs: u64) {
        let b = Backoff::default();
        assert_eq!(b.nominal(attempt), Duration::from_secs(secs));
        assert!(b.delay_with(attempt, 1.0) <= b.cap);
        let d = b.delay(attempt).as_secs_f64();
        assert!(d >= secs as f64 * 0.9 - 1e-9 && d <= (secs as f64 * 1.1).min(300.0) + 1e-9);
    }

    #[test]
    fn retries_double_per_object_and_start_over() {
        let r = Retries::default();
        let within = |d: Option<Duration>, secs: f64| {
            let d = d.unwrap().as_secs_f64();
            assert!(
                d >= secs * 0.9 - 1e-9 && d <= secs * 1.1 + 1e-9,
                "{d} vs {secs}"
            );
        };
        within(r.failed("a", true), 1.0);
        within(r.failed("a", true), 2.0);
        within(r.failed("b", true), 1.0);
        within(r.failed("a", true), 4.0);
        assert_eq!(r.failed("a", false), None);
        within(r.failed("a", true), 1.0);
        r.succeeded("b");
        within(r.failed("b", true), 1.0);
    }

    fn pve(status: u16, msg: &str) -> Error {
        Error::Pve(pve_client::Error::Server {
            status,
            message: msg.into(),
        })
    }

    #[rstest]
    #[case(Error::Pve(pve_client::Error::Authentication { message: "authentication failure".into() }), ErrorType::Authentication, false)]
    #[case(Error::Pve(pve_client::Error::Permission { message: "Permission check failed".into() }), ErrorType::Authorization, false)]
    #[case(Error::Pve(pve_client::Error::NotFound { status: Some(404), message: "no such VM".into() }), ErrorType::NotFound, false)]
    #[case(Error::Pve(pve_client::Error::Conflict { status: 409, message: "already exists".into() }), ErrorType::Conflict, true)]
    #[case(Error::Pve(pve_client::Error::Conflict { status: 500, message: "VM is locked (backup)".into() }), ErrorType::Locked, true)]
    #[case(pve(500, "internal error"), ErrorType::Server, true)]
    #[case(pve(503, "injected"), ErrorType::Server, true)]
    #[case(Error::Pve(pve_client::Error::Network { message: "refused".into(), status: None }), ErrorType::Network, true)]
    #[case(Error::Pve(pve_client::Error::Timeout { message: "slow".into() }), ErrorType::Network, true)]
    #[case(Error::Pve(pve_client::Error::TaskFailed { upid: "UPID:x".into(), exitstatus: "boom".into(), log_tail: vec![] }), ErrorType::TaskFailed, true)]
    #[case(Error::Config("secret 'x' not found".into()), ErrorType::Configuration, false)]
    fn errors_are_classified(#[case] e: Error, #[case] t: ErrorType, #[case] retry: bool) {
        assert_eq!(e.error_type(), t);
        assert_eq!(e.is_retryable(), retry);
    }
}
