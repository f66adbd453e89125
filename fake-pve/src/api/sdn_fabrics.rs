//! `/cluster/sdn/fabrics` (9.x): OpenFabric and OSPF fabrics (and 9.2's
//! WireGuard fabrics) and their nodes, pending until `PUT /cluster/sdn`
//! (pve-network `API2/Network/SDN/Fabrics.pm`, `Fabrics/Fabric.pm`,
//! `Fabrics/Node.pm`, `Fabrics/FabricNode.pm`), and a node's views of an
//! applied fabric as FRR reports them (`Nodes/Fabric.pm`: `interfaces`,
//! `neighbors`, `routes`). 8.4 has none of these paths: its schema does
//! not route them.

use serde_json::{Value, json};

use super::sdn::view;
use super::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::nodes::NodeStatus;
use crate::model::sdn::Listing;
use crate::model::sdn::fabrics::{FabricInterface, Neighbor, Route as FabricRoute};
use crate::model::{Cluster, Result};

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/cluster/sdn/fabrics", index),
        get("/cluster/sdn/fabrics/all", list_all),
        get("/cluster/sdn/fabrics/fabric", fabric_index),
        post("/cluster/sdn/fabrics/fabric", add_fabric),
        get("/cluster/sdn/fabrics/fabric/{id}", get_fabric),
        put("/cluster/sdn/fabrics/fabric/{id}", update_fabric),
        delete("/cluster/sdn/fabrics/fabric/{id}", delete_fabric),
        get("/cluster/sdn/fabrics/node", list_nodes),
        get("/cluster/sdn/fabrics/node/{fabric_id}", list_nodes_fabric),
        post("/cluster/sdn/fabrics/node/{fabric_id}", add_node),
        get("/cluster/sdn/fabrics/node/{fabric_id}/{node_id}", get_node),
        put(
            "/cluster/sdn/fabrics/node/{fabric_id}/{node_id}",
            update_node,
        ),
        delete(
            "/cluster/sdn/fabrics/node/{fabric_id}/{node_id}",
            delete_node,
        ),
        get("/nodes/{node}/sdn/fabrics/{fabric}", fabric_diridx),
        get("/nodes/{node}/sdn/fabrics/{fabric}/interfaces", interfaces),
        get("/nodes/{node}/sdn/fabrics/{fabric}/neighbors", neighbors),
        get("/nodes/{node}/sdn/fabrics/{fabric}/routes", fabric_routes),
    ]
}

const FABRIC_PRIVS: [&str; 2] = ["SDN.Audit", "SDN.Allocate"];
const NODE_PRIVS: [&str; 2] = ["Sys.Audit", "Sys.Modify"];

fn may(ctx: &Ctx<'_>, c: &Cluster, path: &str, privs: &[&str]) -> bool {
    ctx.who().is_ok_and(|w| c.access().has_any(w, path, privs))
}

/// The nodes of a list the caller may see: `SDN.Audit` or
/// `SDN.Allocate` on the fabric, `Sys.Audit` or `Sys.Modify` on the
/// node (a new node of the pending view has them in its `pending`
/// values).
fn visible_nodes(ctx: &Ctx<'_>, c: &Cluster, nodes: &Listing) -> Vec<Value> {
    let member = |e: &crate::model::sdn::Entry, k: &str| e.text_or_pending(k).unwrap_or_default();
    nodes
        .items
        .values()
        .filter(|e| {
            may(
                ctx,
                c,
                &format!("/sdn/fabrics/{}", member(e, "fabric_id")),
                &FABRIC_PRIVS,
            ) && may(
                ctx,
                c,
                &format!("/nodes/{}", member(e, "node_id")),
                &NODE_PRIVS,
            )
        })
        .map(|e| view::fabric_record(e, nodes.digest.as_deref()))
        .collect()
}

/// The fabrics of a list the caller may see.
fn visible_fabrics(ctx: &Ctx<'_>, c: &Cluster, fabrics: &Listing) -> Vec<Value> {
    fabrics
        .items
        .iter()
        .filter(|(id, _)| may(ctx, c, &format!("/sdn/fabrics/{id}"), &FABRIC_PRIVS))
        .map(|(_, e)| view::fabric_record(e, fabrics.digest.as_deref()))
        .collect()
}

/// `GET /cluster/sdn/fabrics`.
fn index(_ctx: &Ctx<'_>) -> Result<Reply> {
    Ok(view::fabrics_index().into())
}

/// `GET /cluster/sdn/fabrics/all`: `{fabrics, nodes}`.
fn list_all(ctx: &Ctx<'_>) -> Result<Reply> {
    let v = ctx.params.sdn_view()?;
    let out = ctx.with(|c| {
        let (fabrics, nodes) = c.sdn().fabrics_all(v)?;
        Ok::<_, crate::model::Error>(json!({
            "fabrics": visible_fabrics(ctx, c, &fabrics),
            "nodes": visible_nodes(ctx, c, &nodes),
        }))
    })?;
    Ok(out.into())
}

/// `GET /cluster/sdn/fabrics/fabric`.
fn fabric_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let v = ctx.params.sdn_view()?;
    let items = ctx.with(|c| {
        let l = c.sdn().fabrics_index(v)?;
        Ok::<_, crate::model::Error>(visible_fabrics(ctx, c, &l))
    })?;
    Ok(Value::Array(items).into())
}

fn get_fabric(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    let s = ctx.with(|c| c.sdn().get_fabric(&id))?;
    Ok(view::fabric_record(&s.entry, s.digest.as_deref()).into())
}

fn add_fabric(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| c.sdn_mut().add_fabric(&p))?;
    Ok(Value::Null.into())
}

fn update_fabric(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| c.sdn_mut().update_fabric(&p))?;
    Ok(Value::Null.into())
}

/// `DELETE .../fabric/{id}`: the caller needs `Sys.Modify` on each of
/// the fabric's nodes.
fn delete_fabric(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = ctx.params.to_map();
    let id = ctx.param("id")?;
    ctx.with(|c| {
        let allowed: Vec<String> = c
            .sdn()
            .fabric_node_names(&id)
            .into_iter()
            .filter(|n| may(ctx, c, &format!("/nodes/{n}"), &["Sys.Modify"]))
            .collect();
        c.sdn_mut()
            .delete_fabric(&p, |node| allowed.iter().any(|a| a == node))
    })?;
    Ok(Value::Null.into())
}

/// `GET /cluster/sdn/fabrics/node`.
fn list_nodes(ctx: &Ctx<'_>) -> Result<Reply> {
    let v = ctx.params.sdn_view()?;
    let items = ctx.with(|c| {
        let l = c.sdn().fabric_nodes_index(v)?;
        Ok::<_, crate::model::Error>(visible_nodes(ctx, c, &l))
    })?;
    Ok(Value::Array(items).into())
}

/// `GET /cluster/sdn/fabrics/node/{fabric_id}`: the nodes the caller
/// may audit (the fabric is checked by the schema).
fn list_nodes_fabric(ctx: &Ctx<'_>) -> Result<Reply> {
    let fabric = ctx.param("fabric_id")?;
    let v = ctx.params.sdn_view()?;
    let items = ctx.with(|c| {
        let l = c.sdn().fabric_node_list(&fabric, v)?;
        Ok::<_, crate::model::Error>(
            l.items
                .iter()
                .filter(|(n, _)| may(ctx, c, &format!("/nodes/{n}"), &NODE_PRIVS))
                .map(|(_, e)| view::fabric_record(e, l.digest.as_deref()))
                .collect::<Vec<_>>(),
        )
    })?;
    Ok(Value::Array(items).into())
}

fn get_node(ctx: &Ctx<'_>) -> Result<Reply> {
    let fabric = ctx.param("fabric_id")?;
    let node = ctx.param("node_id")?;
    let s = ctx.with(|c| c.sdn().get_fabric_node(&fabric, &node))?;
    Ok(view::fabric_record(&s.entry, s.digest.as_deref()).into())
}

fn add_node(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| c.sdn_mut().add_fabric_node(&p, &mut ctx.rq()))?;
    Ok(Value::Null.into())
}

fn update_node(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| c.sdn_mut().update_fabric_node(&p, &mut ctx.rq()))?;
    Ok(Value::Null.into())
}

fn delete_node(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| c.sdn_mut().delete_fabric_node(&p))?;
    Ok(Value::Null.into())
}

/// When each online member of the cluster booted (none for an offline
/// one).
fn up_since(c: &Cluster) -> impl Fn(&str) -> Option<i64> + '_ {
    |name| {
        c.nodes()
            .get(name)
            .filter(|n| n.status == NodeStatus::Online)
            .map(|n| n.boot_time)
    }
}

/// `GET /nodes/{node}/sdn/fabrics/{fabric}` (`diridx`): PVE's handler
/// lists `neighbors` and `routes` only (not `interfaces`, which the
/// schema has).
fn fabric_diridx(_ctx: &Ctx<'_>) -> Result<Reply> {
    Ok(json!([{ "subdir": "neighbors" }, { "subdir": "routes" }]).into())
}

/// `GET /nodes/{node}/sdn/fabrics/{fabric}/interfaces` (proxied to the
/// node).
fn interfaces(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let fabric = ctx.param("fabric")?;
    let items = ctx.with(|c| c.sdn().fabric_interfaces(&node, &fabric, &up_since(c)))?;
    Ok(Value::Array(items.iter().map(interface_record).collect()).into())
}

/// `GET /nodes/{node}/sdn/fabrics/{fabric}/neighbors` (proxied).
fn neighbors(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let fabric = ctx.param("fabric")?;
    let now = ctx.now();
    let items = ctx.with(|c| c.sdn().fabric_neighbors(&node, &fabric, &up_since(c), now))?;
    Ok(Value::Array(items.iter().map(neighbor_record).collect()).into())
}

/// `GET /nodes/{node}/sdn/fabrics/{fabric}/routes` (proxied).
fn fabric_routes(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let fabric = ctx.param("fabric")?;
    let items = ctx.with(|c| c.sdn().fabric_routes(&node, &fabric, &up_since(c)))?;
    Ok(Value::Array(items.iter().map(route_record).collect()).into())
}

fn interface_record(i: &FabricInterface) -> Value {
    json!({ "name": i.name, "state": i.state, "type": i.kind })
}

fn neighbor_record(n: &Neighbor) -> Value {
    json!({ "neighbor": n.neighbor, "status": n.status, "uptime": n.uptime })
}

fn route_record(r: &FabricRoute) -> Value {
    json!({ "route": r.route, "via": r.via })
}
