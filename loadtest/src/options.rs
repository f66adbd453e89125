//! What a load test runs, and against whom.

use std::path::PathBuf;

/// Whom the load test talks to.
#[derive(Debug, Clone)]
pub enum Target {
    /// A fake-pve started in this process on loopback.
    InProcess {
        /// `instant`, `documented`, or a YAML profile file.
        profile: String,
    },
    /// Any PVE (or fake-pve) at this URL.
    External {
        /// `https://host:8006` (with or without `/api2/json`).
        url: String,
        /// How to authenticate.
        auth: Auth,
    },
}

/// Credentials for an external target.
#[derive(Debug, Clone)]
pub enum Auth {
    /// `USER@REALM!TOKENID=SECRET`.
    Token(String),
    /// Each goose user logs in (`create_ticket`) and uses the ticket and
    /// its CSRF token.
    Password {
        /// `user@realm`.
        username: String,
        /// The password.
        password: String,
    },
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// The target.
    pub target: Target,
    /// Emulated seconds per real second (in-process fake-pve; for an
    /// external fake-pve, the scale it runs with).
    pub time_scale: f64,
    /// Task status polling interval, emulated milliseconds.
    pub poll_ms: f64,
    /// Concurrent goose users (spread over the 7 scenarios).
    pub users: usize,
    /// Wall-clock bound of the load, seconds.
    pub run_time: u64,
    /// Bound on scenario iterations per user (with `run_time` still
    /// bounding the time).
    pub iterations: Option<usize>,
    /// Run only these scenarios (goose machine names, e.g. `describe`).
    pub scenarios: Vec<String>,
    /// The node to create guests on.
    pub node: String,
    /// The storage of the guests' disks (must support snapshots and
    /// linked clones: lvmthin, zfs, rbd, ...).
    pub storage: String,
    /// First VMID the load test uses.
    pub vmid_base: u32,
    /// Where goose writes `report.html`, `report.json`, `report.md` (and
    /// this table as `table.md`); none: no reports.
    pub report_dir: Option<PathBuf>,
    /// Print goose's own metrics too.
    pub goose_metrics: bool,
    /// The in-process fake-pve keeps its world in this directory
    /// (journaled, default fsync mode), to measure what that costs.
    pub data_dir: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            target: Target::InProcess {
                profile: "documented".into(),
            },
            time_scale: 5.0,
            poll_ms: 20.0,
            users: 14,
            run_time: 60,
            iterations: None,
            scenarios: Vec::new(),
            node: "pve".into(),
            storage: "local-lvm".into(),
            vmid_base: 900_000,
            report_dir: None,
            goose_metrics: false,
            data_dir: None,
        }
    }
}
