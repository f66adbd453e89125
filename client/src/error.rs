//! One error type for everything the client does, sorted into the
//! categories a caller acts on: fix the configuration, fix the
//! credentials, fix the request, wait and retry, or give up.
//!
//! Each error carries PVE's own message (the body's `message` member, or
//! the HTTP reason phrase when PVE sent none), without its trailing
//! newline.

use std::collections::BTreeMap;
use std::fmt;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, by the action it calls for.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration is incomplete or malformed (`endpoint is
    /// required`, `invalid endpoint URL: ...`, no credentials).
    #[error("{0}")]
    Config(String),
    /// The server could not be reached or the connection broke: refused
    /// connections, DNS failures, resets, and PVE's 595 when it cannot
    /// reach another cluster node.
    #[error("network error: {message}")]
    Network {
        /// What failed, with the cause chain.
        message: String,
        /// The HTTP status when a proxy or PVE answered (502, 503, 595).
        status: Option<u16>,
    },
    /// The TLS handshake failed: an untrusted certificate, a host name
    /// mismatch, or a pinned fingerprint that does not match.
    #[error("TLS error: {message}")]
    Tls {
        /// What the TLS layer said.
        message: String,
    },
    /// A request or a task wait took longer than allowed.
    #[error("timeout: {message}")]
    Timeout {
        /// What timed out.
        message: String,
    },
    /// 401: wrong credentials, an expired ticket, a bad CSRF token.
    #[error("authentication failed: {message}")]
    Authentication {
        /// PVE's message (`authentication failure`, `Authentication
        /// failed!`, `Permission denied - invalid csrf token`...).
        message: String,
    },
    /// 403: authenticated, but not allowed.
    #[error("permission denied: {message}")]
    Permission {
        /// PVE's message (`Permission check failed (/, Sys.Audit)`).
        message: String,
    },
    /// The object or the API path does not exist (PVE says so with a
    /// 500 `... does not exist` or a 501 `Method '...' not implemented`).
    #[error("not found: {message}")]
    NotFound {
        /// The HTTP status, when PVE answered.
        status: Option<u16>,
        /// PVE's message.
        message: String,
    },
    /// The object is locked or in a state that refuses the change
    /// (`VM is locked (backup)`, `... already exists`, `checksum
    /// mismatch`).
    #[error("conflict: {message}")]
    Conflict {
        /// The HTTP status.
        status: u16,
        /// PVE's message.
        message: String,
    },
    /// 400: parameter verification failed; `errors` has one message per
    /// parameter.
    #[error("{message}{}", ParamErrors(errors))]
    Validation {
        /// PVE's message (`Parameter verification failed.`).
        message: String,
        /// Parameter name to PVE's message about it.
        errors: BTreeMap<String, String>,
    },
    /// Any other error status (5xx), with PVE's message.
    #[error("server error {status}: {message}")]
    Server {
        /// The HTTP status.
        status: u16,
        /// PVE's message.
        message: String,
    },
    /// A task ended with an error exit status.
    #[error("task {upid} failed: {exitstatus}")]
    TaskFailed {
        /// The task.
        upid: String,
        /// PVE's exit status (the error text of `TASK ERROR: ...`).
        exitstatus: String,
        /// The last lines of the task log.
        log_tail: Vec<String>,
    },
    /// PVE answered something this client cannot read.
    #[error("unexpected answer: {message}")]
    Decode {
        /// What did not fit.
        message: String,
    },
}

struct ParamErrors<'a>(&'a BTreeMap<String, String>);

impl fmt::Display for ParamErrors<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (k, v)) in self.0.iter().enumerate() {
            f.write_str(if i == 0 { " " } else { "; " })?;
            write!(f, "{k}: {}", v.trim_end())?;
        }
        Ok(())
    }
}

/// The category of an [`Error`], for callers that branch on it (metrics
/// labels, conditions, exit codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Category {
    /// [`Error::Config`].
    Config,
    /// [`Error::Network`].
    Network,
    /// [`Error::Tls`].
    Tls,
    /// [`Error::Timeout`].
    Timeout,
    /// [`Error::Authentication`].
    Authentication,
    /// [`Error::Permission`].
    Permission,
    /// [`Error::NotFound`].
    NotFound,
    /// [`Error::Conflict`].
    Conflict,
    /// [`Error::Validation`].
    Validation,
    /// [`Error::Server`].
    Server,
    /// [`Error::TaskFailed`].
    TaskFailed,
    /// [`Error::Decode`].
    Decode,
}

impl Category {
    /// A short lower-case name (`network`, `authentication`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Config => "config",
            Self::Network => "network",
            Self::Tls => "tls",
            Self::Timeout => "timeout",
            Self::Authentication => "authentication",
            Self::Permission => "permission",
            Self::NotFound => "not_found",
            Self::Conflict => "conflict",
            Self::Validation => "validation",
            Self::Server => "server",
            Self::TaskFailed => "task_failed",
            Self::Decode => "decode",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Error {
    /// The category.
    pub fn category(&self) -> Category {
        match self {
            Self::Config(_) => Category::Config,
            Self::Network { .. } => Category::Network,
            Self::Tls { .. } => Category::Tls,
            Self::Timeout { .. } => Category::Timeout,
            Self::Authentication { .. } => Category::Authentication,
            Self::Permission { .. } => Category::Permission,
            Self::NotFound { .. } => Category::NotFound,
            Self::Conflict { .. } => Category::Conflict,
            Self::Validation { .. } => Category::Validation,
            Self::Server { .. } => Category::Server,
            Self::TaskFailed { .. } => Category::TaskFailed,
            Self::Decode { .. } => Category::Decode,
        }
    }

    /// PVE's message (or this client's, for errors PVE did not send).
    pub fn message(&self) -> &str {
        match self {
            Self::Config(m) => m,
            Self::Network { message, .. }
            | Self::Tls { message }
            | Self::Timeout { message }
            | Self::Authentication { message }
            | Self::Permission { message }
            | Self::NotFound { message, .. }
            | Self::Conflict { message, .. }
            | Self::Validation { message, .. }
            | Self::Server { message, .. }
            | Self::Decode { message } => message,
            Self::TaskFailed { exitstatus, .. } => exitstatus,
        }
    }

    /// The HTTP status PVE answered with, if it answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Network { status, .. } => *status,
            Self::Authentication { .. } => Some(401),
            Self::Permission { .. } => Some(403),
            Self::Validation { .. } => Some(400),
            Self::NotFound { status, .. } => *status,
            Self::Conflict { status, .. } | Self::Server { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The per-parameter messages of a 400 (empty for other errors).
    pub fn param_errors(&self) -> Option<&BTreeMap<String, String>> {
        match self {
            Self::Validation { errors, .. } => Some(errors),
            _ => None,
        }
    }

    /// Whether the object is locked (`VM is locked (...)`, `can't lock
    /// file ... - got timeout`): the refusal of a request PVE did not
    /// act on, which is worth retrying later.
    pub fn is_locked(&self) -> bool {
        matches!(self, Self::Conflict { message, .. } if is_lock_message(message))
    }

    /// Whether the same request may succeed if tried again later:
    /// network failures, timeouts, 502/503 and locks. Never 400, 401,
    /// 403, nor a failed task.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Network { .. } | Self::Timeout { .. } => true,
            Self::Server { status, .. } => matches!(status, 502..=504),
            Self::Conflict { .. } => self.is_locked(),
            _ => false,
        }
    }

    /// Whether PVE certainly did not act on the request, so that even a
    /// non-idempotent call (a POST) may be sent again: it was refused
    /// before any work (a lock, 502/503 from a proxy, PVE's 595), or the
    /// connection could not be made at all.
    pub(crate) fn not_acted_on(&self, connect_failed: bool) -> bool {
        match self {
            Self::Network { status, .. } => connect_failed || status.is_some(),
            Self::Server { status, .. } => matches!(status, 502 | 503),
            Self::Conflict { .. } => self.is_locked(),
            _ => false,
        }
    }

    /// The error for an HTTP answer with status `status`, PVE's message
    /// and the body's `errors` member.
    pub(crate) fn from_status(
        status: u16,
        message: String,
        errors: BTreeMap<String, String>,
    ) -> Self {
        match status {
            400 => Self::Validation { message, errors },
            401 => Self::Authentication { message },
            403 => Self::Permission { message },
            404 => Self::NotFound {
                status: Some(status),
                message,
            },
            409 | 423 => Self::Conflict { status, message },
            501 if message.starts_with("Method '") => Self::NotFound {
                status: Some(status),
                message,
            },
            595 | 596 => Self::Network {
                message,
                status: Some(status),
            },
            502..=504 => Self::Server { status, message },
            _ if is_lock_message(&message) || is_conflict_message(&message) => {
                Self::Conflict { status, message }
            }
            _ if is_not_found_message(&message) => Self::NotFound {
                status: Some(status),
                message,
            },
            _ => Self::Server { status, message },
        }
    }
}

fn is_lock_message(m: &str) -> bool {
    m.contains("is locked") || (m.contains("can't lock file") && m.contains("got timeout"))
}

fn is_conflict_message(m: &str) -> bool {
    m.contains("already exists")
        || m.contains("checksum mismatch")
        || m.contains("detected modified configuration")
}

fn is_not_found_message(m: &str) -> bool {
    m.contains("does not exist") || m.contains("unable to find configuration file")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case(400, "Parameter verification failed.", Category::Validation, false)]
    #[case(401, "authentication failure", Category::Authentication, false)]
    #[case(
        403,
        "Permission check failed (/, Sys.Audit)",
        Category::Permission,
        false
    )]
    #[case(500, "VM is locked (backup)", Category::Conflict, true)]
    #[case(
        500,
        "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout",
        Category::Conflict,
        true
    )]
    #[case(
        500,
        "unable to create VM 100 - VM 100 already exists on node 'pve'",
        Category::Conflict,
        false
    )]
    #[case(
        500,
        "Configuration file 'nodes/pve/qemu-server/100.conf' does not exist",
        Category::NotFound,
        false
    )]
    #[case(
        500,
        "update storage failed: detected modified configuration - file changed by other user? Try again.",
        Category::Conflict,
        false
    )]
    #[case(501, "Method 'GET /nope' not implemented", Category::NotFound, false)]
    #[case(501, "Unexpected content for method 'GET'", Category::Server, false)]
    #[case(500, "VM 100 is running - destroy failed", Category::Server, false)]
    #[case(502, "Bad Gateway", Category::Server, true)]
    #[case(503, "Service Unavailable", Category::Server, true)]
    #[case(595, "No route to host", Category::Network, true)]
    fn statuses_sort_into_categories(
        #[case] status: u16,
        #[case] msg: &str,
        #[case] want: Category,
        #[case] retryable: bool,
    ) {
        let e = Error::from_status(status, msg.into(), BTreeMap::new());
        assert_eq!(e.category(), want, "{e}");
        assert_eq!(e.is_retryable(), retryable, "{e}");
        assert_eq!(e.message(), msg);
        assert_eq!(e.status(), Some(status));
    }

    #[test]
    fn validation_errors_name_each_parameter() {
        let errors = BTreeMap::from([
            ("vmid".to_string(), "VM 200 already exists\n".to_string()),
            ("name".to_string(), "invalid format".to_string()),
        ]);
        let e = Error::from_status(400, "Parameter verification failed.".into(), errors);
        assert_eq!(
            e.to_string(),
            "Parameter verification failed. name: invalid format; vmid: VM 200 already exists"
        );
        assert_eq!(
            e.param_errors()
                .and_then(|m| m.get("vmid"))
                .map(String::as_str),
            Some("VM 200 already exists\n")
        );
    }

    #[test]
    fn only_unprocessed_requests_may_be_resent() {
        let locked = Error::from_status(500, "VM is locked (clone)".into(), BTreeMap::new());
        assert!(locked.not_acted_on(false));
        let reset = Error::Network {
            message: "connection reset".into(),
            status: None,
        };
        assert!(!reset.not_acted_on(false));
        assert!(reset.not_acted_on(true));
        let timeout = Error::Timeout {
            message: "x".into(),
        };
        assert!(timeout.is_retryable());
        assert!(!timeout.not_acted_on(false));
        let auth = Error::from_status(401, "No ticket".into(), BTreeMap::new());
        assert!(!auth.is_retryable());
        assert!(!auth.not_acted_on(true));
    }
}
