//! The official API schema (crate `pve-schema`) as fake-pve uses it: the
//! spec of the release it impersonates, and the schema's permission
//! checks evaluated against fake-pve's users, tokens and ACLs ([`perm`]).
//!
//! Every request is routed through it: the endpoint is found, permissions
//! are checked and parameters validated before any handler runs.

pub use pve_schema::*;

pub mod perm;

use crate::model::PveVersion;

impl From<PveVersion> for Release {
    fn from(v: PveVersion) -> Self {
        match v {
            PveVersion::V8_4 => Release::V8_4,
            PveVersion::V9_1 => Release::V9_1,
        }
    }
}

/// The spec of the release fake-pve impersonates.
pub fn spec(version: PveVersion) -> &'static Spec {
    pve_schema::spec(version.into())
}
