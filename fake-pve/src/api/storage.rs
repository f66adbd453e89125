//! `/storage` (storage.cfg) and `/nodes/{node}/storage` (status per node)
//! (pve-storage `API2/Storage/Config.pm`, `API2/Storage/Status.pm`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::{Error, Result};

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/storage", storage_index, &[]),
        post("/storage", create_storage, &[]),
        get("/storage/{storage}", read_storage, &[]),
        put("/storage/{storage}", update_storage, &[]),
        delete("/storage/{storage}", delete_storage, &[]),
        get("/nodes/{node}/storage", node_storage_index, &[]),
        get("/nodes/{node}/storage/{storage}/status", read_status, &[]),
    ]
}

fn text_params(ctx: &Ctx<'_>) -> BTreeMap<String, String> {
    ctx.params
        .names()
        .filter_map(|k| Some((k.to_string(), ctx.params.str(k)?)))
        .collect()
}

/// Whether the caller sees a storage (Datastore.Audit or AllocateSpace).
fn may_see(ctx: &Ctx<'_>, c: &crate::model::Cluster, sid: &str) -> bool {
    let Some(who) = ctx.who.as_ref() else {
        return false;
    };
    let path = format!("/storage/{sid}");
    c.access.has_priv(who, &path, "Datastore.Audit")
        || c.access.has_priv(who, &path, "Datastore.AllocateSpace")
}

/// `GET /storage`, optionally by `type`.
fn storage_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let kind = ctx.params.str("type");
    let items = ctx.with(|c| {
        c.storages
            .iter()
            .filter(|s| kind.as_deref().is_none_or(|k| k == s.kind))
            .filter(|s| may_see(ctx, c, &s.storage))
            .map(|s| c.storage_config_view(s))
            .collect::<Vec<_>>()
    });
    Ok(Value::Array(items).into())
}

/// `GET /storage/{storage}`.
fn read_storage(ctx: &Ctx<'_>) -> Result<Reply> {
    let sid = ctx.param("storage")?;
    ctx.with(|c| {
        let s = c.storage(&sid)?;
        Ok(c.storage_config_view(s).into())
    })
}

/// `POST /storage`.
fn create_storage(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = text_params(ctx);
    let nodes: Vec<String> = p
        .get("nodes")
        .map(|n| {
            n.split([',', ';', ' '])
                .filter(|x| !x.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    ctx.with(|c| {
        if let Some(n) = nodes
            .iter()
            .find(|n| !c.nodes.iter().any(|x| &x.name == *n))
        {
            return Err(Error::invalid(
                "nodes",
                format!("invalid format - value '{n}' does not look like a valid node name\n"),
            ));
        }
        Ok(c.storage_create(&p)?.into())
    })
}

/// `PUT /storage/{storage}`.
fn update_storage(ctx: &Ctx<'_>) -> Result<Reply> {
    let sid = ctx.param("storage")?;
    let delete: Vec<String> = ctx
        .params
        .str("delete")
        .map(|d| crate::model::network::split_list(&d))
        .unwrap_or_default();
    let p = text_params(ctx);
    Ok(ctx.with(|c| c.storage_update(&sid, &p, &delete))?.into())
}

/// `DELETE /storage/{storage}`.
fn delete_storage(ctx: &Ctx<'_>) -> Result<Reply> {
    let sid = ctx.param("storage")?;
    ctx.with(|c| c.storage_delete(&sid))?;
    Ok(Value::Null.into())
}

fn node_name(ctx: &Ctx<'_>) -> Result<String> {
    let node = ctx.param("node")?;
    ctx.with(|c| c.node(&node).map(|n| n.name.clone()))
}

/// `GET /nodes/{node}/storage`: `storage`, `content`, `enabled`,
/// `target` filters.
fn node_storage_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let storage = ctx.params.str("storage");
    let content = ctx.params.str("content");
    let enabled = ctx.params.bool("enabled")?.unwrap_or(false);
    let target = ctx
        .params
        .str("target")
        .filter(|t| *t != node && t != "localhost");
    ctx.with(|c| {
        let infos: Vec<(String, Value)> = c
            .storages
            .iter()
            .filter_map(|s| {
                Some((
                    s.storage.clone(),
                    c.storage_status(s, &node, content.as_deref())?,
                ))
            })
            .collect();
        if let Some(sid) = &storage
            && !infos.iter().any(|(k, _)| k == sid)
        {
            return Err(Error::invalid("storage", "No such storage."));
        }
        let mut out = Vec::new();
        for (sid, data) in infos {
            if !may_see(ctx, c, &sid) || storage.as_ref().is_some_and(|s| *s != sid) {
                continue;
            }
            let Ok(s) = c.storage(&sid) else { continue };
            if enabled && s.disable {
                continue;
            }
            if let Some(t) = &target
                && (!s.shared || !s.nodes.as_ref().is_none_or(|n| n.contains(t)))
            {
                continue;
            }
            out.push(data);
        }
        Ok(Value::Array(out).into())
    })
}

/// `GET /nodes/{node}/storage/{storage}/status`.
fn read_status(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let sid = ctx.param("storage")?;
    ctx.with(|c| {
        c.storages
            .iter()
            .find(|s| s.storage == sid)
            .and_then(|s| c.storage_status(s, &node, None))
            .map(Reply::from)
            .ok_or_else(|| Error::invalid("storage", "No such storage."))
    })
}
