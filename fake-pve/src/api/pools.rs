//! `/pools`: resource pools and their members (pve-manager
//! `API2/Pool.pm`). Both releases have the `/pools/{poolid}` calls and
//! the newer `/pools` ones with a `poolid` parameter (for nested pools).

use serde_json::{Value, json};

use super::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::cluster::Cluster;
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
        let one = ctx.with(|c| pool_view(c, &poolid, kind.as_deref(), now))?;
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
        .with(|c| pool_view(c, &poolid, kind.as_deref(), now))?
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

/// `GET /pools?poolid=`: the pool with its members, guests first (as
/// `/cluster/resources` shows them) then storages (on the local node,
/// or the first node the storage is restricted to); `kind` keeps
/// only `qemu`, `lxc` or `storage` members.
///
/// # Errors
/// `pool 'x' does not exist`.
pub fn pool_view(
    c: &Cluster,
    poolid: &str,
    kind: Option<&str>,
    now: i64,
) -> Result<serde_json::Value> {
    let Some(pool) = c.access.pools().get(poolid) else {
        return Err(Error::not_found(format!("pool '{poolid}' does not exist")));
    };
    let mut members = Vec::new();
    for vmid in pool.vms() {
        let Some(v) = c.guests.get(vmid) else {
            continue;
        };
        let row = c.resources().guest_row(
            crate::model::resources::Guest::Vm(v),
            now,
            &c.resources().host_cpus(),
        );
        let mut e = serde_json::to_value(&row).unwrap_or_default();
        if kind.is_some_and(|k| e["type"] != k) {
            continue;
        }
        // `extract_vm_stats` alone: no pool, lock or tags.
        if let Some(o) = e.as_object_mut() {
            for k in ["pool", "lock", "tags"] {
                o.remove(k);
            }
        }
        members.push(e);
    }
    if kind.is_none_or(|k| k == "storage") {
        let local = c.nodes.local().to_string();
        for sid in pool.storage() {
            let Some(s) = c.storage.find(sid) else {
                continue;
            };
            let mut node = local.clone();
            if let Some(list) = &s.nodes
                && !list.contains(&node)
            {
                let mut sorted = list.clone();
                sorted.sort();
                if let Some(first) = sorted.into_iter().next() {
                    node = first;
                }
            }
            let n = c.nodes.iter().find(|n| n.name == node);
            if let Some(n) = n {
                members.push(
                    serde_json::to_value(c.resources().storage_row(s, n)).unwrap_or_default(),
                );
            }
        }
    }
    let mut out = json!({ "members": members, "poolid": poolid });
    if let Some(c) = pool.comment() {
        out["comment"] = json!(c);
    }
    Ok(out)
}
