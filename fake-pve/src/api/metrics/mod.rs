//! `/cluster/metrics/server`: the external metric servers of
//! `status.cfg` (pve-manager `API2/Cluster/MetricServer.pm`). The schema
//! checks `Sys.Audit` / `Sys.Modify` on `/`.

use std::collections::BTreeMap;

use serde_json::Value;

use super::params::value_text;
use super::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::Result;
use crate::spec::formats::split_list;

pub mod view;

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/cluster/metrics/server", server_index),
        get("/cluster/metrics/server/{id}", read),
        post("/cluster/metrics/server/{id}", create),
        put("/cluster/metrics/server/{id}", update),
        delete("/cluster/metrics/server/{id}", delete_server),
        // pvestatd's cached figures.
        get("/cluster/metrics/export", export),
    ]
}

/// The plugin options of a call, as text.
fn given(ctx: &Ctx<'_>) -> BTreeMap<String, String> {
    ctx.params
        .names()
        .filter(|n| !matches!(*n, "id" | "type" | "delete" | "digest"))
        .filter_map(|n| ctx.params.get(n).map(|v| (n.to_string(), value_text(v))))
        .collect()
}

/// `GET /cluster/metrics/server`.
fn server_index(ctx: &Ctx<'_>) -> Result<Reply> {
    Ok(Value::Array(ctx.with(|c| view::index(&c.metrics))).into())
}

/// `GET /cluster/metrics/server/{id}`.
fn read(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    let v = ctx.state.settings().version;
    Ok(ctx
        .with(|c| c.metrics.read(&id).map(|s| view::server(s, v)))?
        .into())
}

/// `POST /cluster/metrics/server/{id}`: the connection test PVE makes
/// is not emulated (every server is taken as reachable).
fn create(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    let kind = ctx.param("type")?;
    let v = ctx.state.settings().version;
    let opts = given(ctx);
    ctx.with(|c| c.metrics.create(v, &id, &kind, opts))?;
    Ok(Value::Null.into())
}

/// `PUT /cluster/metrics/server/{id}`.
fn update(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    let v = ctx.state.settings().version;
    let opts = given(ctx);
    let delete: Vec<String> = ctx
        .params
        .str("delete")
        .map(|d| split_list(&d).into_iter().map(str::to_string).collect())
        .unwrap_or_default();
    let digest = ctx.params.str("digest");
    ctx.with(|c| c.metrics.update(v, &id, opts, &delete, digest.as_deref()))?;
    Ok(Value::Null.into())
}

/// `DELETE /cluster/metrics/server/{id}`.
fn delete_server(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    ctx.with(|c| c.metrics.delete(&id))?;
    Ok(Value::Null.into())
}

/// `GET /cluster/metrics/export`: the cached metrics of the local node,
/// and of the other online members unless `local-only`.
fn export(ctx: &Ctx<'_>) -> Result<Reply> {
    let q = crate::model::metrics::export::ExportQuery {
        local_only: ctx.params.bool("local-only")?.unwrap_or(false),
        node_list: ctx
            .params
            .str("node-list")
            .map(|l| split_list(&l).into_iter().map(str::to_string).collect())
            .unwrap_or_default(),
        start_time: ctx.params.int("start-time", None, None)?,
        history: ctx.params.bool("history")?.unwrap_or(false),
    };
    let now_ms = ctx.now_ms();
    ctx.with(|c| {
        let local = c.nodes().local().to_string();
        crate::model::metrics::export::Export {
            nodes: &c.nodes,
            guests: &c.guests,
            storage: &c.storage,
            version: c.version,
        }
        .metrics_export(&local, &q, now_ms)
    })
    .map(|m| Reply::from(view::export(&m)))
}
