//! `/version` and the cluster read side (pve-manager `API2.pm`,
//! `API2/Cluster.pm`).

pub mod options_view;
pub mod overview;
pub mod view;

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::params::value_text;
use super::{Ctx, RawData, Reply, Route, get, put};
use crate::model::{Result, datacenter};
use crate::spec::formats::split_list;

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/", api_index),
        get("/version", version),
        get("/cluster/status", get_status),
        get("/cluster/resources", resources),
        get("/cluster/nextid", nextid),
        get("/cluster/options", get_options),
        put("/cluster/options", set_options),
    ]
}

/// `GET /api2/json/`.
fn api_index(_: &Ctx<'_>) -> Result<Reply> {
    let dirs = ["version", "cluster", "nodes", "storage", "access", "pools"];
    Ok(json!(
        dirs.iter()
            .map(|d| json!({ "subdir": d }))
            .collect::<Vec<_>>()
    )
    .into())
}

/// `GET /version`.
fn version(ctx: &Ctx<'_>) -> Result<Reply> {
    let v = ctx.state.settings().version;
    Ok(json!({ "version": v.version(), "release": v.release(), "repoid": v.repoid() }).into())
}

/// `GET /cluster/status`.
fn get_status(ctx: &Ctx<'_>) -> Result<Reply> {
    Ok(Value::Array(ctx.with(|c| super::nodes::view::cluster_status(c.nodes()))).into())
}

/// `GET /cluster/resources`.
fn resources(ctx: &Ctx<'_>) -> Result<Reply> {
    let kind = ctx
        .params
        .enumeration("type", &["vm", "storage", "node", "sdn"])?;
    let now = ctx.now();
    let who = ctx.who()?;
    let json = ctx.with(|c| {
        let res = c.resources();
        RawData::written(res.capacity(), |out| {
            view::write_resources(&res, kind.as_deref(), now, who, out);
        })
    });
    Ok(Reply {
        raw: Some(json),
        ..Reply::default()
    })
}

/// `GET /cluster/nextid`: a string, as PVE answers it. The schema has
/// checked `vmid` (type, `pve-vmid` format, range).
fn nextid(ctx: &Ctx<'_>) -> Result<Reply> {
    let vmid = ctx
        .params
        .int("vmid", None, None)?
        .and_then(|n| u32::try_from(n).ok());
    let version = ctx.state.settings().version;
    Ok(json!(ctx.with(|c| {
        let bounds = c.datacenter().next_id_bounds(version);
        c.guests().nextid(vmid, bounds)
    })?)
    .into())
}

/// `GET /cluster/options`: datacenter.cfg's options for the caller, with
/// the tags it may use.
fn get_options(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?.clone();
    Ok(ctx
        .with(|c| {
            let audit = c.access.has_priv(&who, "/", "Sys.Audit");
            let options = c.datacenter.options(c.version, audit);
            let tags = datacenter::allowed_tags(&c.access, &c.guests, &who);
            options_view::options_with_tags(&options, &tags)
        })
        .into())
}

/// `PUT /cluster/options`: the given options are written as given, those
/// in `delete` removed (see [`datacenter::Datacenter::set`]). The schema
/// has checked `Sys.Modify` on `/` and each option's format.
fn set_options(ctx: &Ctx<'_>) -> Result<Reply> {
    let set: BTreeMap<String, String> = ctx
        .params
        .names()
        .filter(|n| *n != "delete")
        .filter_map(|n| ctx.params.get(n).map(|v| (n.to_string(), value_text(v))))
        .collect();
    let delete: Vec<String> = ctx
        .params
        .str("delete")
        .map(|d| split_list(&d).into_iter().map(str::to_string).collect())
        .unwrap_or_default();
    let version = ctx.state.settings().version;
    ctx.with(|c| {
        c.datacenter_mut().set(version, &set, &delete)?;
        // The tag rules are the file's.
        let rules = c.datacenter().tag_access(version);
        c.access_mut().set_tag_access(rules);
        Ok::<_, crate::model::Error>(())
    })?;
    Ok(Value::Null.into())
}
