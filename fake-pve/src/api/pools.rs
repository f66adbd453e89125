//! `/pools`: resource pools and their members (pve-manager
//! `API2/Pool.pm`). Both releases have the `/pools/{poolid}` calls and
//! the newer `/pools` ones with a `poolid` parameter (for nested pools).

use serde_json::{Value, json};

use super::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::pools::PoolUpdate;
use crate::model::{Error, Result};
use crate::spec::formats::split_list;

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/pools", index),
        post("/pools", create_pool),
        put("/pools", update_pool),
        delete("/pools", delete_pool),
        get("/pools/{poolid}", read_pool),
        put("/pools/{poolid}", update_pool),
        delete("/pools/{poolid}", delete_pool),
    ]
}

/// `GET /pools`: every pool the caller may audit, or (with `poolid`) one
/// pool with its members. PVE's check of the one pool does not refuse.
fn index(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?.clone();
    let kind = ctx.params.str("type");
    let now = ctx.now();
    if let Some(poolid) = ctx.params.str("poolid") {
        let one = ctx.with(|c| c.pool_view(&poolid, kind.as_deref(), now))?;
        return Ok(json!([one]).into());
    }
    if kind.is_some() {
        return Err(Error::invalid(
            "type",
            "parameter 'type' requires parameter 'poolid'",
        ));
    }
    let items = ctx.with(|c| {
        c.access()
            .pools()
            .iter()
            .filter(|(id, _)| {
                c.access()
                    .has_priv(&who, &format!("/pool/{id}"), "Pool.Audit")
            })
            .map(|(id, p)| {
                let mut e = json!({ "poolid": id });
                if let Some(comment) = p.comment() {
                    e["comment"] = json!(comment);
                }
                e
            })
            .collect::<Vec<_>>()
    });
    Ok(Value::Array(items).into())
}

/// `GET /pools/{poolid}`: the pool with its members.
fn read_pool(ctx: &Ctx<'_>) -> Result<Reply> {
    let poolid = ctx.param("poolid")?;
    let kind = ctx.params.str("type");
    let now = ctx.now();
    Ok(ctx
        .with(|c| c.pool_view(&poolid, kind.as_deref(), now))?
        .into())
}

/// `POST /pools`.
fn create_pool(ctx: &Ctx<'_>) -> Result<Reply> {
    let poolid = ctx.param("poolid")?;
    let comment = ctx.params.str("comment");
    ctx.with(|c| c.access_mut().pools_mut().create(&poolid, comment))?;
    Ok(Value::Null.into())
}

/// `PUT /pools` and `PUT /pools/{poolid}`.
fn update_pool(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?.clone();
    let poolid = ctx.param("poolid")?;
    let list = |name: &str| {
        ctx.params
            .str(name)
            .map(|v| {
                split_list(&v)
                    .into_iter()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    let vms = list("vms")
        .iter()
        .map(|v| {
            v.parse::<u32>().map_err(|_| {
                Error::invalid(
                    "vms",
                    format!("value '{v}' does not look like a valid VM ID"),
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let up = PoolUpdate {
        comment: ctx.params.str("comment"),
        vms,
        storage: list("storage"),
        allow_move: ctx.params.bool("allow-move")?.unwrap_or(false),
        delete: ctx.params.bool("delete")?.unwrap_or(false),
    };
    ctx.with(|c| c.access_mut().update_pool(&who, &poolid, &up))?;
    Ok(Value::Null.into())
}

/// `DELETE /pools` and `DELETE /pools/{poolid}`: only an empty pool.
fn delete_pool(ctx: &Ctx<'_>) -> Result<Reply> {
    let poolid = ctx.param("poolid")?;
    ctx.with(|c| {
        let vms: Vec<u32> = c.guests().keys().copied().collect();
        let storages: Vec<String> = c
            .storages()
            .cfg()
            .iter()
            .map(|s| s.storage.clone())
            .collect();
        c.access_mut().delete_pool(
            &poolid,
            |v| vms.contains(&v),
            |s| storages.iter().any(|x| x == s),
        )
    })?;
    Ok(Value::Null.into())
}
