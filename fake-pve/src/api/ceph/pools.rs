//! Pools (pve-manager `API2/Ceph/Pool.pm`): the list from `osd dump`,
//! a pool's `osd pool get all`, and the tasks `cephcreatepool`,
//! `cephsetpool` and `cephdestroypool`.

use serde_json::json;

use super::{check, inited_and_connected, node_of, view};
use crate::api::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::ceph::PoolOp;
use crate::model::ceph::daemons::CephOp;
use crate::model::ceph::erasure::ErasureCoding;
use crate::model::ceph::usage::stored_by_pool;
use crate::model::{Error, Result, TaskEffect, Worker};

/// The routes of the pools.
pub fn routes() -> Vec<Route> {
    vec![
        get("/nodes/{node}/ceph/pool", lspools),
        post("/nodes/{node}/ceph/pool", createpool),
        delete("/nodes/{node}/ceph/pool/{name}", destroypool),
        put("/nodes/{node}/ceph/pool/{name}", setpool),
        get("/nodes/{node}/ceph/pool/{name}/status", getpool),
    ]
}

/// A pool task on `node`.
fn task(ctx: &Ctx<'_>, node: &str, kind: &str, id: &str, pool: PoolOp) -> Result<Reply> {
    let worker = Worker::new(kind, id).effect(TaskEffect::Ceph {
        node: node.to_string(),
        op: CephOp::Pool { pool },
    });
    Ok(json!(ctx.start_task(node, worker)?).into())
}

/// The settings a create or set call gives, as `set_pool` applies them
/// (`target_size` as `target_size_bytes`).
fn settings(ctx: &Ctx<'_>) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for key in [
        "size",
        "min_size",
        "pg_num",
        "pg_num_min",
        "crush_rule",
        "application",
        "pg_autoscale_mode",
        "target_size_ratio",
    ] {
        if let Some(v) = ctx.params.str(key) {
            out.push((key.to_string(), v));
        }
    }
    if let Some(t) = ctx.params.str("target_size") {
        let bytes = crate::model::size::parse_size(&t)
            .ok_or_else(|| Error::invalid("target_size", "unable to parse size"))?;
        out.push(("target_size_bytes".into(), bytes.to_string()));
    }
    Ok(out)
}

/// `GET /nodes/{node}/ceph/pool`.
fn lspools(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    Ok(ctx
        .with(|c| {
            let stored = stored_by_pool(c.ceph(), c.storages(), &node);
            view::pools(c.ceph(), &stored)
        })
        .into())
}

/// Whether a storage ID is one PVE accepts (`parse_storage_id`).
fn storage_id_ok(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() >= 2
        && b[0].is_ascii_alphabetic()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c))
}

/// `POST /nodes/{node}/ceph/pool`.
fn createpool(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    ctx.with(|c| {
        if c.nodes().quorate() {
            Ok(())
        } else {
            Err(Error::failed("cluster not ready - no quorum?"))
        }
    })?;
    check(ctx, &node, |c, n| c.check_configured(n))?;
    let name = ctx.param("name")?;
    let mut settings = settings(ctx)?;
    check(ctx, &node, |c, n| c.rados(n))?;
    let erasure = match ctx.params.str("erasure-coding") {
        Some(text) => {
            let ec = ErasureCoding::parse(&text)?;
            if let Some(p) = &ec.profile
                && ctx.with(|c| c.ceph().ec_profile(p).is_none())
            {
                return Err(Error::failed(format!(
                    "Erasure code profile '{p}' does not exist."
                )));
            }
            Some(ec)
        }
        None => None,
    };
    let add_storage = ctx
        .params
        .bool("add_storages")?
        .unwrap_or(erasure.is_some());
    if add_storage {
        let who = ctx.who()?;
        ctx.with(|c| {
            c.access()
                .check_perm(who, "/storage", &["Datastore.Allocate"])
        })?;
        if !storage_id_ok(&name) {
            return Err(Error::failed(
                "pool name contains characters which are illegal for storage naming",
            ));
        }
    }
    for (key, default) in [
        ("pg_num", "128"),
        ("size", "3"),
        ("min_size", "2"),
        ("application", "rbd"),
        ("pg_autoscale_mode", "warn"),
    ] {
        if !settings.iter().any(|(k, _)| k == key) {
            settings.push((key.into(), default.into()));
        }
    }
    let id = name.clone();
    task(
        ctx,
        &node,
        "cephcreatepool",
        &id,
        PoolOp::Create {
            name,
            settings,
            add_storage,
            erasure,
        },
    )
}

/// `DELETE /nodes/{node}/ceph/pool/{name}`.
fn destroypool(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    check(ctx, &node, |c, n| c.check_inited(n))?;
    let remove_storages = ctx.params.bool("remove_storages")?.unwrap_or(false);
    if remove_storages {
        let who = ctx.who()?;
        ctx.with(|c| {
            c.access()
                .check_perm(who, "/storage", &["Datastore.Allocate"])
        })?;
    }
    let name = ctx.param("name")?;
    let force = ctx.params.bool("force")?.unwrap_or(false);
    let remove_ecprofile = ctx.params.bool("remove_ecprofile")?.unwrap_or(true);
    let id = name.clone();
    task(
        ctx,
        &node,
        "cephdestroypool",
        &id,
        PoolOp::Destroy {
            name,
            force,
            remove_storages,
            remove_ecprofile,
        },
    )
}

/// `PUT /nodes/{node}/ceph/pool/{name}`.
fn setpool(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    check(ctx, &node, |c, n| c.check_configured(n))?;
    let name = ctx.param("name")?;
    let settings = settings(ctx)?;
    let id = name.clone();
    task(
        ctx,
        &node,
        "cephsetpool",
        &id,
        PoolOp::Set { name, settings },
    )
}

/// `GET /nodes/{node}/ceph/pool/{name}/status`.
fn getpool(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    let name = ctx.param("name")?;
    let verbose = ctx.params.bool("verbose")?.unwrap_or(false);
    ctx.with(|c| {
        let flags_as_bools = c.version() == crate::version::PveVersion::V9_2;
        let pool = c.ceph().existing_pool(&name)?;
        let stored = stored_by_pool(c.ceph(), c.storages(), &node);
        let stats = c.ceph().pool_stats(pool, &stored);
        Ok(view::pool_status(pool, verbose, flags_as_bools, &stats).into())
    })
}
