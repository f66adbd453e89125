//! The state of one emulated PVE cluster: plain synchronous Rust, no HTTP.
//!
//! The model owns PVE's rules and answers with domain [`Error`]s; the wire
//! layer (`crate::api`) turns those into PVE's status lines and bodies.

pub mod access;
pub mod acl;
pub mod agent;
pub mod cluster;
pub mod faults;
pub mod network;
pub mod nodes;
pub mod qemu;
pub mod scenario;
pub mod storage;
pub mod storage_cfg;
pub mod storage_content;
pub mod tasks;
pub mod volume_ops;
pub mod world;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use access::{AuthId, Token, User};
pub use cluster::{Cluster, Storage, Vm};
pub use nodes::{Node, NodeStatus};
pub use scenario::Scenario;
pub use tasks::{Task, TaskEffect, TaskState, Upid, VolumeChange, Worker};

/// A refusal from the model, in PVE's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A plain `die` in a PVE handler: HTTP 500 with the message.
    #[error("{0}")]
    Failed(String),
    /// A parameter error (`raise_param_exc`): HTTP 400 with `errors`.
    #[error("Parameter verification failed.")]
    Invalid(BTreeMap<String, String>),
    /// A permission error: HTTP 403 with the full message.
    #[error("{0}")]
    Forbidden(String),
    /// Any other status PVE answers with, e.g. 401 on a failed login or
    /// 595 from the proxy to an offline node.
    #[error("{msg}")]
    Status {
        /// The HTTP status code.
        code: u16,
        /// The message, which becomes the reason phrase.
        msg: String,
    },
}

impl Error {
    /// A 400 for a single parameter.
    pub fn invalid(param: impl Into<String>, msg: impl Into<String>) -> Self {
        let mut errors = BTreeMap::new();
        errors.insert(param.into(), msg.into());
        Error::Invalid(errors)
    }

    /// A 500 with PVE's message.
    pub fn failed(msg: impl Into<String>) -> Self {
        Error::Failed(msg.into())
    }

    /// `Permission check failed (<path>, <privs>)`, privileges joined as
    /// PVE's `check_any` joins them.
    pub fn permission(path: &str, privs: &[&str]) -> Self {
        Error::Forbidden(format!(
            "Permission check failed ({path}, {})",
            privs.join("|")
        ))
    }
}

/// `pub type Result` of the model.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Which PVE release the emulator impersonates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum PveVersion {
    /// PVE 8.4 (pve-manager 8.4.14).
    #[serde(rename = "8.4")]
    V8_4,
    /// PVE 9.1 (pve-manager 9.1.5, the first with the new 401 message).
    #[serde(rename = "9.1")]
    #[default]
    V9_1,
}

impl PveVersion {
    /// Parses `8.4` or `9.1` (a full `8.4.x`/`9.1.x` is accepted too).
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim();
        if s == "8.4" || s.starts_with("8.4.") || s == "8" {
            Some(Self::V8_4)
        } else if s == "9.1" || s.starts_with("9.1.") || s == "9" {
            Some(Self::V9_1)
        } else {
            None
        }
    }

    /// The full pve-manager version, as `/version` reports it.
    pub fn version(self) -> &'static str {
        match self {
            Self::V8_4 => "8.4.14",
            Self::V9_1 => "9.1.5",
        }
    }

    /// `x.y`.
    pub fn release(self) -> &'static str {
        match self {
            Self::V8_4 => "8.4",
            Self::V9_1 => "9.1",
        }
    }

    /// The 16-hex-digit id of the pve-manager release commit.
    pub fn repoid(self) -> &'static str {
        match self {
            Self::V8_4 => "b502d23c55afcba1",
            Self::V9_1 => "80cf92a64bef6889",
        }
    }

    /// The reason phrase of a 401 for a bad ticket or token.
    pub fn invalid_ticket_message(self) -> &'static str {
        match self {
            Self::V8_4 => "permission denied - invalid PVE ticket",
            Self::V9_1 => "Authentication failed!",
        }
    }

    /// Whether this is the 9.x line.
    pub fn is_v9(self) -> bool {
        matches!(self, Self::V9_1)
    }
}

impl std::fmt::Display for PveVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.release())
    }
}
