//! The official API schema (crate `pve-schema`) as fake-pve uses it: the
//! spec of the release it impersonates.
//!
//! Every request is routed through it: the endpoint is found, permissions
//! are checked (`crate::api`'s evaluation of the schema's
//! `permissions`) and parameters validated before any handler runs.

pub use pve_schema::*;

use crate::version::PveVersion;

impl From<PveVersion> for Release {
    fn from(v: PveVersion) -> Self {
        match v {
            PveVersion::V8_4 => Release::V8_4,
            PveVersion::V9_1 => Release::V9_1,
            PveVersion::V9_2 => Release::V9_2,
        }
    }
}

/// The spec of the release fake-pve impersonates.
pub fn spec(version: PveVersion) -> &'static Spec {
    pve_schema::spec(version.into())
}
