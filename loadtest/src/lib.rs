//! pve-loadtest: goose load tests of the operations PVE automation runs,
//! compared with the latency targets the VirtRigaud provider publishes as
//! "Load Test Results" measured against a fake PVE server.
//!
//! Each row of the table ([`ROWS`]) is one goose scenario with one
//! measured transaction; a mixed scenario ("Operator") runs the whole life
//! of a VM as an operator does (create, wait, start, describe,
//! reconfigure, snapshot, clone, stop, delete). Requests are named after
//! the PVE API methods (`create_vm`, `vm_start`, `read_task_status`, ...).
//!
//! An operation's latency is what a client sees: from sending the request
//! until polling `read_task_status` reports the task stopped (for tasks),
//! or the request's latency (Describe, `vm_status`). fake-pve runs on the
//! system clock sped up by `time_scale` (emulated seconds per real second),
//! so real durations are multiplied by `time_scale` before they are
//! compared with the table. Polling happens every `poll_ms` emulated
//! milliseconds, so a task is seen on average `poll_ms / 2` late.

use serde_json::Value;

pub mod connections;
mod error;
mod options;
mod run;
pub mod scale;
mod scenarios;
pub mod side_by_side;
mod table;
pub mod throughput;

pub use error::Error;
pub use options::{Auth, Options, Target};
pub use run::run;
pub use scenarios::scenario_names;
pub use table::{Measured, Outcome, ROWS, Row, TOLERANCE, percentile};

/// How a measuring binary ends: its report printed and exit code 0 when
/// it passed, 1 when it did not, 2 (with the reason on stderr) when it
/// could not measure.
pub fn finish(name: &str, result: Result<(String, bool), Error>) -> std::process::ExitCode {
    match result {
        Ok((report, passed)) => {
            print!("{report}");
            std::process::ExitCode::from(u8::from(!passed))
        }
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

/// A client that trusts an in-process fake-pve's certificate, logged in
/// as root@pam: the client, the ticket and the CSRF token.
///
/// # Errors
/// The certificate, the connection or the login.
pub async fn root_session(
    pve: &fake_pve::Running,
) -> Result<(reqwest::Client, String, String), Error> {
    let http = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(
            pve.cert_pem().unwrap_or_default().as_bytes(),
        )?)
        .build()?;
    let v: Value = http
        .post(format!("{}/access/ticket", pve.api_url()))
        .form(&[("username", "root@pam"), ("password", "password")])
        .send()
        .await?
        .json()
        .await?;
    let field = |k: &str| {
        v["data"][k]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| Error::NoField {
                field: k.to_string(),
                answer: v.clone(),
            })
    };
    let (ticket, csrf) = (field("ticket")?, field("CSRFPreventionToken")?);
    Ok((http, ticket, csrf))
}
