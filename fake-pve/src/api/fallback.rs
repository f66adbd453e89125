//! What an endpoint of the schema without behaviour answers: its index,
//! an empty list where a fresh install has nothing, or a 501.

use serde_json::{Value, json};

use super::Reply;
use crate::model::{Error, Result};

/// What an endpoint without behaviour answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fallback {
    /// A directory index: its children, from the schema.
    Index(String),
    /// A collection that is empty on a fresh install and cannot be filled
    /// yet.
    EmptyList,
    /// 501: not emulated yet.
    NotEmulated,
}

/// Collections that are empty on a fresh install and that fake-pve cannot
/// fill yet, so that `[]` is the truth.
const EMPTY_ON_FRESH_INSTALL: &[&str] = &[
    "/cluster/firewall/aliases",
    "/cluster/firewall/groups",
    "/cluster/firewall/ipset",
    "/cluster/firewall/rules",
    "/cluster/ha/groups",
    "/cluster/ha/resources",
    "/cluster/ha/rules",
    "/cluster/metrics/server",
    "/cluster/replication",
    "/cluster/sdn/controllers",
    "/cluster/sdn/dns",
    "/cluster/sdn/vnets",
    "/cluster/sdn/zones",
    "/nodes/{node}/firewall/rules",
    "/nodes/{node}/lxc",
    "/nodes/{node}/replication",
];

/// How an endpoint without a handler answers.
pub fn fallback_kind(e: &crate::spec::Endpoint) -> Fallback {
    if e.method != "GET" {
        return Fallback::NotEmulated;
    }
    if !e.children.is_empty()
        && e.returns_list()
        && let Some(key) = e.index_key()
    {
        return Fallback::Index(key);
    }
    if e.returns_list() && EMPTY_ON_FRESH_INSTALL.contains(&e.path.as_str()) {
        return Fallback::EmptyList;
    }
    Fallback::NotEmulated
}

pub(super) fn fallback(e: &crate::spec::Endpoint, full_path: &str) -> Result<Reply> {
    match fallback_kind(e) {
        Fallback::Index(key) => Ok(Value::Array(
            e.children
                .iter()
                .map(|c| json!({ key.as_str(): c }))
                .collect(),
        )
        .into()),
        Fallback::EmptyList => Ok(json!([]).into()),
        Fallback::NotEmulated => Err(Error::NotImplemented(format!(
            "Method '{} {full_path}' is not emulated by fake-pve",
            e.method
        ))),
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;
    use crate::model::PveVersion;
    use crate::spec::spec;

    fn endpoint(version: PveVersion, method: &str, path: &str) -> &'static crate::spec::Endpoint {
        spec(version)
            .endpoints
            .iter()
            .find(|e| e.method == method && e.path == path)
            .unwrap_or_else(|| panic!("{method} {path} in {version:?}"))
    }

    /// An endpoint of the schema that no route serves answers by its
    /// kind: a directory its children, a collection empty on a fresh
    /// install `[]`, anything else 501 naming the call.
    #[rstest]
    #[case("GET", "/cluster/ha", Ok(json!([{"id": "resources"}, {"id": "groups"}, {"id": "rules"}, {"id": "status"}])))]
    #[case("GET", "/cluster/replication", Ok(json!([])))]
    #[case(
        "GET",
        "/nodes/{node}/storage/{storage}/import-metadata",
        Err("Method 'GET /api2/json/nodes/pve/x' is not emulated by fake-pve")
    )]
    #[case(
        "POST",
        "/cluster/replication",
        Err("Method 'POST /api2/json/nodes/pve/x' is not emulated by fake-pve")
    )]
    fn an_endpoint_without_a_handler(
        #[case] method: &str,
        #[case] path: &str,
        #[case] want: std::result::Result<Value, &str>,
    ) {
        let e = endpoint(PveVersion::V9_2, method, path);
        match (fallback(e, "/api2/json/nodes/pve/x"), want) {
            (Ok(reply), Ok(v)) => assert_eq!(reply.data, v),
            (Err(Error::NotImplemented(msg)), Err(m)) => assert_eq!(msg, m),
            (got, want) => panic!("{method} {path}: {got:?} != {want:?}"),
        }
    }
}
