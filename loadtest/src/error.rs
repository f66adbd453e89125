//! Why a measurement could not be made: the one error of the crate. Each
//! variant names its cause and prints as the measuring binaries have
//! always printed it (after their name, on stderr).

use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

use http::StatusCode;
use serde_json::Value;

/// Why a load test, a comparison or a measurement could not run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or directory could not be made, read or written.
    #[error("{}: {source}", path.display())]
    File {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// Other input or output: a socket, a listener, a file, the runtime.
    #[error(transparent)]
    Io(#[from] std::io::Error),

    /// The time scale is zero, negative or not a number.
    #[error("--time-scale must be positive")]
    TimeScale,
    /// No users or no run time.
    #[error("--users and --run-time must be positive")]
    NoLoad,
    /// The latency profile file could not be read.
    #[error("profile {profile}: {source}")]
    ProfileFile {
        /// The profile as given.
        profile: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The latency profile was refused.
    #[error("profile {profile}: {source}")]
    Profile {
        /// The profile as given.
        profile: String,
        /// What is wrong with it.
        #[source]
        source: fake_pve::LatencyError,
    },
    /// No scenario has any of the names asked for.
    #[error("no scenario matches {0:?}")]
    NoScenario(Vec<String>),
    /// The load ran past its bound.
    #[error("the load test overran its bound of {0:?}")]
    Overran(Duration),
    /// A goose user panicked while holding the samples.
    #[error("poisoned lock: another task failed inside")]
    Poisoned,
    /// Goose refused the configuration or failed to run.
    #[error(transparent)]
    Goose(Box<goose::GooseError>),

    /// The in-process fake-pve could not start, or its TLS identity
    /// could not be made.
    #[error(transparent)]
    FakePve(#[from] fake_pve::Error),
    /// The in-process fake-pve's world was refused.
    #[error(transparent)]
    Scenario(#[from] fake_pve::ScenarioError),

    /// A request with reqwest failed.
    #[error(transparent)]
    Http(#[from] reqwest::Error),
    /// A request on a hyper connection, or its handshake, failed.
    #[error(transparent)]
    Hyper(#[from] hyper::Error),
    /// TLS could not be set up.
    #[error(transparent)]
    Tls(#[from] rustls::Error),
    /// A certificate's PEM could not be read.
    #[error(transparent)]
    Pem(#[from] rustls::pki_types::pem::Error),
    /// An answer lacked a field.
    #[error("no {field} in {answer}")]
    NoField {
        /// The field.
        field: String,
        /// The whole answer.
        answer: Value,
    },
    /// The login's answer was not JSON.
    #[error("login: {status} {source}")]
    LoginAnswer {
        /// Its status.
        status: StatusCode,
        /// Why it did not parse.
        #[source]
        source: serde_json::Error,
    },
    /// The login's answer had no ticket.
    #[error("login: {status} {answer}")]
    NoTicket {
        /// Its status.
        status: StatusCode,
        /// The answer.
        answer: Value,
    },
    /// A server refused the first read.
    #[error("{server}: {status} {body}")]
    Refused {
        /// The server's name.
        server: String,
        /// The status it answered.
        status: StatusCode,
        /// The body it answered.
        body: String,
    },
    /// A request was not answered with 200.
    #[error("{status}: {body}")]
    Status {
        /// The status answered.
        status: StatusCode,
        /// The body answered.
        body: String,
    },
    /// A measured call failed.
    #[error("{call}: {status} {body}")]
    Call {
        /// The call, as measured.
        call: &'static str,
        /// The status answered.
        status: StatusCode,
        /// The body answered.
        body: String,
    },

    /// A server process could not be started.
    #[error("{command}: {source}")]
    Spawn {
        /// The command, as `Command` debug-prints it.
        command: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A server process ended before it was ready.
    #[error("{command} ended ({status}): {output}")]
    Ended {
        /// The command, as `Command` debug-prints it.
        command: String,
        /// How it ended.
        status: ExitStatus,
        /// What it wrote.
        output: String,
    },
    /// A server process was not ready in time.
    #[error("{command} did not start: {output}")]
    NotReady {
        /// The command, as `Command` debug-prints it.
        command: String,
        /// What it wrote.
        output: String,
    },

    /// A saved answer has no end of its headers.
    #[error("no empty line after the headers")]
    NoHeaderEnd,
    /// A saved answer has a header line without its separator.
    #[error("a header without ': '")]
    HeaderLine,
    /// A saved answer's header is not UTF-8.
    #[error(transparent)]
    Utf8(#[from] std::str::Utf8Error),
    /// A saved answer's header name is invalid.
    #[error(transparent)]
    HeaderName(#[from] http::header::InvalidHeaderName),
    /// A saved answer's header value is invalid.
    #[error(transparent)]
    HeaderValue(#[from] http::header::InvalidHeaderValue),

    /// Too few file descriptors for the connections asked for.
    #[error("{connections} connections need {want} file descriptors; the limit here is {have}")]
    FileLimit {
        /// The connections asked for.
        connections: usize,
        /// The file descriptors they need.
        want: u64,
        /// The limit.
        have: u64,
    },
}

impl From<goose::GooseError> for Error {
    fn from(e: goose::GooseError) -> Self {
        Self::Goose(Box::new(e))
    }
}

impl Error {
    /// A file or directory at `path` that could not be made, read or
    /// written.
    pub(crate) fn file(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::File { path, source }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts are those the binaries printed when the errors were
    /// strings.
    #[test]
    fn errors_print_as_before() {
        let gone = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let cases = [
            (
                Error::TimeScale,
                "--time-scale must be positive".to_string(),
            ),
            (
                Error::NoLoad,
                "--users and --run-time must be positive".to_string(),
            ),
            (
                Error::NoScenario(vec!["nope".into()]),
                format!("no scenario matches {:?}", vec!["nope".to_string()]),
            ),
            (
                Error::Overran(Duration::from_secs(90)),
                format!(
                    "the load test overran its bound of {:?}",
                    Duration::from_secs(90)
                ),
            ),
            (
                Error::file("/x/report")(gone()),
                format!("/x/report: {}", gone()),
            ),
            (Error::Io(gone()), gone().to_string()),
            (
                Error::ProfileFile {
                    profile: "p.yaml".into(),
                    source: gone(),
                },
                format!("profile p.yaml: {}", gone()),
            ),
            (
                Error::NoField {
                    field: "ticket".into(),
                    answer: serde_json::json!({"data": null}),
                },
                format!("no ticket in {}", serde_json::json!({"data": null})),
            ),
            (
                Error::Refused {
                    server: "bare".into(),
                    status: StatusCode::UNAUTHORIZED,
                    body: "no".into(),
                },
                format!("bare: {} no", StatusCode::UNAUTHORIZED),
            ),
            (
                Error::Status {
                    status: StatusCode::NOT_FOUND,
                    body: "{}".into(),
                },
                format!("{}: {{}}", StatusCode::NOT_FOUND),
            ),
            (
                Error::Spawn {
                    command: "\"fake-pve\"".into(),
                    source: gone(),
                },
                format!("\"fake-pve\": {}", gone()),
            ),
            (
                Error::NotReady {
                    command: "\"fake-pve\"".into(),
                    output: "half".into(),
                },
                "\"fake-pve\" did not start: half".to_string(),
            ),
            (
                Error::NoHeaderEnd,
                "no empty line after the headers".to_string(),
            ),
            (Error::HeaderLine, "a header without ': '".to_string()),
            (
                Error::FileLimit {
                    connections: 10,
                    want: 266,
                    have: 100,
                },
                "10 connections need 266 file descriptors; the limit here is 100".to_string(),
            ),
        ];
        for (e, text) in cases {
            assert_eq!(e.to_string(), text);
        }
        let lock = std::sync::Mutex::new(());
        let _ = std::panic::catch_unwind(|| {
            let _held = lock.lock();
            panic!("poisoning the lock");
        });
        let poisoned = lock.lock().err().map(|e| e.to_string());
        assert_eq!(poisoned, Some(Error::Poisoned.to_string()));
    }
}
