//! `/nodes/{node}/network`: a node's interfaces, their pending changes,
//! apply and revert (pve-manager `API2/Network.pm`).

use serde_json::{Value, json};

use super::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::network::{self, split_list};
use crate::model::{Result, Worker};

pub(crate) mod view;

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/nodes/{node}/network", network_index),
        post("/nodes/{node}/network", create_network),
        put("/nodes/{node}/network", reload_network_config),
        delete("/nodes/{node}/network", revert_network_changes),
        get("/nodes/{node}/network/{iface}", network_config),
        put("/nodes/{node}/network/{iface}", update_network),
        delete("/nodes/{node}/network/{iface}", delete_network),
    ]
}

/// `GET /nodes/{node}/network`: bridges need SDN.Audit or SDN.Use on
/// `/sdn/zones/localnetwork/<bridge>` unless the caller is root@pam.
fn network_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let filter = ctx.params.str("type");
    let who = ctx.who()?.clone();
    let now = ctx.now();
    let (items, changes) = ctx.with(|c| {
        let access = c.access().clone();
        let root = who.to_string() == "root@pam";
        let v9 = c.version.is_v9();
        let (listed, changes) = c.network.node_mut(&c.nodes, &node, now).list(
            filter.as_deref(),
            |br| {
                let path = format!("/sdn/zones/localnetwork/{br}");
                root || access.has_priv(&who, &path, "SDN.Audit")
                    || access.has_priv(&who, &path, "SDN.Use")
            },
            v9,
        );
        let mut items = view::ifaces(&listed);
        // Applied VNets (`get_local_vnets`) with `any_bridge`,
        // `include_sdn` and `vnet`.
        if matches!(
            filter.as_deref(),
            Some("any_bridge" | "include_sdn" | "vnet")
        ) {
            let vnets = c.sdn().local_vnets(&node, |zone, vnet| {
                access.has_any(
                    &who,
                    &format!("/sdn/zones/{zone}/{vnet}"),
                    &["SDN.Audit", "SDN.Use"],
                )
            });
            items.extend(vnets.iter().map(crate::api::sdn::view::local_vnet));
        }
        (items, changes)
    });
    let mut reply = Reply::from(Value::Array(items));
    if let Some(ch) = changes {
        reply.attribs.insert("changes".into(), json!(ch));
    }
    Ok(reply)
}

/// `POST /nodes/{node}/network`.
fn create_network(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let iface = ctx.param("iface")?;
    let p = ctx.params.to_map();
    let now = ctx.now();
    ctx.with(|c| {
        c.network
            .node_mut(&c.nodes, &node, now)
            .create(&iface, &p, now)
    })?;
    Ok(Value::Null.into())
}

/// `GET /nodes/{node}/network/{iface}`.
fn network_config(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let iface = ctx.param("iface")?;
    let now = ctx.now();
    Ok(ctx
        .with(|c| {
            let v9 = c.version.is_v9();
            c.network
                .node_mut(&c.nodes, &node, now)
                .iface(&iface, v9)
                .map(|i| view::iface(&i, false))
        })?
        .into())
}

/// `PUT /nodes/{node}/network/{iface}`.
fn update_network(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let iface = ctx.param("iface")?;
    let delete = ctx
        .params
        .str("delete")
        .map(|d| split_list(&d))
        .unwrap_or_default();
    let p = ctx.params.to_map();
    let now = ctx.now();
    ctx.with(|c| {
        c.network
            .node_mut(&c.nodes, &node, now)
            .update(&iface, &p, &delete, now)
    })?;
    Ok(Value::Null.into())
}

/// `DELETE /nodes/{node}/network/{iface}`: answers null, not a task.
fn delete_network(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let iface = ctx.param("iface")?;
    let now = ctx.now();
    ctx.with(|c| c.network.node_mut(&c.nodes, &node, now).delete(&iface, now))?;
    Ok(Value::Null.into())
}

/// `DELETE /nodes/{node}/network`: unlinks `interfaces.new`.
fn revert_network_changes(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let now = ctx.now();
    ctx.with(|c| c.network.node_mut(&c.nodes, &node, now).revert());
    Ok(Value::Null.into())
}

/// `PUT /nodes/{node}/network`: a `srvreload` task whose worker first
/// moves the pending file into place, then reloads.
fn reload_network_config(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let who = ctx.who()?.to_string();
    let now_ms = ctx.now_ms();
    let ms = ctx.task_ms("srvreload");
    let upid = ctx.with(|c| {
        network::apply(&mut c.network, &mut c.nodes, &node, now_ms.div_euclid(1000));
        c.start_task(
            &node,
            Worker::new("srvreload", "networking"),
            &who,
            now_ms,
            ms,
        )
    });
    Ok(json!(upid).into())
}
