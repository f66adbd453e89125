//! OCI registries (pve-manager `Nodes.pm` `query_oci_repo_tags`,
//! pve-storage `Status.pm` `oci_registry_pull`): the registries reached
//! are the emulated ones of [`crate::model::oci`].

use serde_json::json;

use super::{Ctx, Reply, Route, get, post};
use crate::model::Result;
use crate::model::oci::PullRequest;

/// The routes of the two calls.
pub fn routes() -> Vec<Route> {
    vec![
        get("/nodes/{node}/query-oci-repo-tags", query_oci_repo_tags),
        post(
            "/nodes/{node}/storage/{storage}/oci-registry-pull",
            oci_registry_pull,
        ),
    ]
}

/// `GET /nodes/{node}/query-oci-repo-tags`: the repository's tags.
fn query_oci_repo_tags(ctx: &Ctx<'_>) -> Result<Reply> {
    ctx.node()?;
    let reference = ctx.param("reference")?;
    let tags = ctx.with(|c| c.storages().volumes().oci.list_tags(&reference))?;
    Ok(json!(tags).into())
}

/// `POST /nodes/{node}/storage/{storage}/oci-registry-pull`: task
/// `ociregistrypull`; the archive appears when it ends.
fn oci_registry_pull(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let now = ctx.now();
    let mut req = PullRequest {
        node: node.clone(),
        storage: ctx.param("storage")?,
        reference: ctx.param("reference")?,
        filename: ctx.params.str("filename"),
        pid: 0,
        now,
        stamp: stamp(now),
    };
    let worker = ctx.with(|c| {
        req.pid = c.tasks().next_pid();
        c.storages().oci_pull_task(&req)
    })?;
    Ok(json!(ctx.start_task(&node, worker)?).into())
}

/// The time in skopeo's log lines (logrus' RFC 3339, in UTC).
fn stamp(epoch: i64) -> String {
    let (y, mo, d, h, mi, s, _) = crate::clock::civil(epoch);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}
