//! The state of one emulated PVE cluster: plain synchronous Rust, no HTTP.
//!
//! The model owns PVE's rules and answers with domain [`Error`]s; the wire
//! layer (`crate::api`) turns those into PVE's status lines and bodies.

pub mod access;
pub mod acl;
pub mod acme;
pub mod agent;
pub mod backup;
pub mod bulk;
pub mod ceph;
pub mod chunked;
pub mod cluster;
pub mod clusterlog;
pub mod conf_value;
pub mod console;
pub mod context;
pub mod corosync;
pub mod datacenter;
mod effects;
pub mod faults;
pub mod firewall;
pub mod guest;
pub mod guest_perm;
pub mod guests;
pub mod ha;
pub mod join;
pub mod lxc;
pub mod mapping;
pub mod metrics;
pub mod mtunnel;
pub mod network;
pub mod node_hw;
pub mod node_services;
pub mod nodes;
pub mod notify;
pub mod oci;
pub mod overview;
pub mod pbs;
pub mod pools;
pub mod power;
pub mod qemu;
pub mod replication;
pub mod resources;
pub mod scenario;
pub mod sdn;
pub mod size;
pub mod storage;
pub mod tasks;
pub mod world;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

pub use access::AuthId;
pub use cluster::Cluster;
pub use context::Context;
pub use nodes::{Node, NodeStatus};
pub use tasks::{Task, TaskEffect, TaskState, VolumeChange, Worker};

/// `s` with its percent-escapes decoded (invalid UTF-8 replaced); text
/// without a `%` (most paths and tickets) as it is, without a copy.
pub(crate) fn percent_decoded(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('%') {
        percent_encoding::percent_decode_str(s).decode_utf8_lossy()
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// A refusal from the model, in PVE's words: what kind of refusal it is
/// and the message PVE gives.
///
/// Most of PVE's refusals are a plain `die` (HTTP 500) whatever their
/// reason; the kind says the reason, so that the model's callers and
/// tests can tell them apart. Only the wire (`crate::api`) decides the
/// status line a kind is answered with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A refusal of no more specific kind.
    #[error("{0}")]
    Failed(String),
    /// The thing named does not exist (a VM, volume, user, snapshot ...).
    #[error("{0}")]
    NotFound(String),
    /// The thing to be made exists already.
    #[error("{0}")]
    Exists(String),
    /// The guest or file is locked by another operation.
    #[error("{0}")]
    Locked(String),
    /// The request contradicts the current state: a changed digest, a
    /// guest in the wrong power state, protection mode.
    #[error("{0}")]
    Conflict(String),
    /// Parameters refused (`raise_param_exc`), by parameter name.
    #[error("Parameter verification failed.")]
    Invalid(BTreeMap<String, String>),
    /// A permission check failed.
    #[error("{0}")]
    Forbidden(String),
    /// The credentials were refused.
    #[error("{0}")]
    Unauthorized(String),
    /// A node that cannot be reached (pveproxy's 595).
    #[error("{0}")]
    Unreachable(String),
    /// A method PVE does not have, or one fake-pve does not emulate.
    #[error("{0}")]
    NotImplemented(String),
    /// What the call needs is not there (HTTP 424, as `join_info` on a
    /// standalone node).
    #[error("{0}")]
    FailedDependency(String),
    /// A refusal PVE raises with HTTP 404 (`raise(..., code =>
    /// HTTP_NOT_FOUND)`, as a missing second factor entry).
    #[error("{0}")]
    HttpNotFound(String),
    /// A refusal PVE raises with HTTP 400 but no parameter errors
    /// (`raise(..., 400)`: a node's missing ACME domain list, the
    /// notification system's `BAD_REQUEST`s).
    #[error("{0}")]
    BadRequest(String),
}

/// The kinds of [`Error`], without their messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// [`Error::Failed`].
    Failed,
    /// [`Error::NotFound`].
    NotFound,
    /// [`Error::Exists`].
    Exists,
    /// [`Error::Locked`].
    Locked,
    /// [`Error::Conflict`].
    Conflict,
    /// [`Error::Invalid`].
    Invalid,
    /// [`Error::Forbidden`].
    Forbidden,
    /// [`Error::Unauthorized`].
    Unauthorized,
    /// [`Error::Unreachable`].
    Unreachable,
    /// [`Error::NotImplemented`].
    NotImplemented,
    /// [`Error::FailedDependency`].
    FailedDependency,
    /// [`Error::HttpNotFound`].
    HttpNotFound,
    /// [`Error::BadRequest`].
    BadRequest,
}

impl Error {
    /// A parameter error for a single parameter.
    pub fn invalid(param: impl Into<String>, msg: impl Into<String>) -> Self {
        let mut errors = BTreeMap::new();
        errors.insert(param.into(), msg.into());
        Error::Invalid(errors)
    }

    /// A refusal of no more specific kind, with PVE's message.
    pub fn failed(msg: impl Into<String>) -> Self {
        Error::Failed(msg.into())
    }

    /// The thing named does not exist.
    pub fn not_found(msg: impl Into<String>) -> Self {
        Error::NotFound(msg.into())
    }

    /// The thing to be made exists already.
    pub fn exists(msg: impl Into<String>) -> Self {
        Error::Exists(msg.into())
    }

    /// Locked by another operation.
    pub fn locked(msg: impl Into<String>) -> Self {
        Error::Locked(msg.into())
    }

    /// In contradiction with the current state.
    pub fn conflict(msg: impl Into<String>) -> Self {
        Error::Conflict(msg.into())
    }

    /// `Permission check failed (<path>, <privs>)`, privileges joined as
    /// PVE's `check_any` joins them.
    pub fn permission(path: &str, privs: &[&str]) -> Self {
        Error::Forbidden(format!(
            "Permission check failed ({path}, {})",
            privs.join("|")
        ))
    }

    /// The kind of refusal.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Failed(_) => ErrorKind::Failed,
            Error::NotFound(_) => ErrorKind::NotFound,
            Error::Exists(_) => ErrorKind::Exists,
            Error::Locked(_) => ErrorKind::Locked,
            Error::Conflict(_) => ErrorKind::Conflict,
            Error::Invalid(_) => ErrorKind::Invalid,
            Error::Forbidden(_) => ErrorKind::Forbidden,
            Error::Unauthorized(_) => ErrorKind::Unauthorized,
            Error::Unreachable(_) => ErrorKind::Unreachable,
            Error::NotImplemented(_) => ErrorKind::NotImplemented,
            Error::FailedDependency(_) => ErrorKind::FailedDependency,
            Error::HttpNotFound(_) => ErrorKind::HttpNotFound,
            Error::BadRequest(_) => ErrorKind::BadRequest,
        }
    }

    /// PVE's message (for [`Error::Invalid`], the summary line; the
    /// parameters' messages are in [`Error::errors`]).
    pub fn message(&self) -> &str {
        match self {
            Error::Invalid(_) => "Parameter verification failed.",
            Error::Failed(m)
            | Error::NotFound(m)
            | Error::Exists(m)
            | Error::Locked(m)
            | Error::Conflict(m)
            | Error::Forbidden(m)
            | Error::Unauthorized(m)
            | Error::Unreachable(m)
            | Error::NotImplemented(m)
            | Error::FailedDependency(m)
            | Error::HttpNotFound(m)
            | Error::BadRequest(m) => m,
        }
    }

    /// The refused parameters and their messages, for [`Error::Invalid`].
    pub fn errors(&self) -> Option<&BTreeMap<String, String>> {
        match self {
            Error::Invalid(e) => Some(e),
            _ => None,
        }
    }

    /// The same refusal with its message passed through `f`, as PVE's
    /// `"update role failed: $@"` wrappers do: the kind stays, except that
    /// a parameter error becomes a plain one with its summary line.
    #[must_use]
    pub fn map_message(self, f: impl FnOnce(&str) -> String) -> Self {
        match self {
            Error::Invalid(_) => Error::Failed(f("Parameter verification failed.")),
            Error::Failed(m) => Error::Failed(f(&m)),
            Error::NotFound(m) => Error::NotFound(f(&m)),
            Error::Exists(m) => Error::Exists(f(&m)),
            Error::Locked(m) => Error::Locked(f(&m)),
            Error::Conflict(m) => Error::Conflict(f(&m)),
            Error::Forbidden(m) => Error::Forbidden(f(&m)),
            Error::Unauthorized(m) => Error::Unauthorized(f(&m)),
            Error::Unreachable(m) => Error::Unreachable(f(&m)),
            Error::NotImplemented(m) => Error::NotImplemented(f(&m)),
            Error::FailedDependency(m) => Error::FailedDependency(f(&m)),
            Error::HttpNotFound(m) => Error::HttpNotFound(f(&m)),
            Error::BadRequest(m) => Error::BadRequest(f(&m)),
        }
    }
}

/// `pub type Result` of the model.
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub use crate::version::PveVersion;
