//! `/cluster/sdn/prefix-lists` and `/cluster/sdn/route-maps` (9.2): FRR
//! prefix lists and route map entries, pending until `PUT /cluster/sdn`
//! (pve-network `API2/Network/SDN/PrefixLists*.pm`, `RouteMaps*.pm`).
//! 8.4 and 9.1 have none of these paths: their schemas do not route
//! them. Permissions come from the schema; the lists show what the caller
//! may audit or allocate.

use serde_json::{Value, json};

use super::sdn::view;
use super::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::sdn::Listing;
use crate::model::{Cluster, Result};

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    const PL: &str = "/cluster/sdn/prefix-lists";
    const PL_ID: &str = "/cluster/sdn/prefix-lists/{id}";
    const PL_ENTRIES: &str = "/cluster/sdn/prefix-lists/{id}/entries";
    const PL_ENTRY: &str = "/cluster/sdn/prefix-lists/{id}/entries/{url_seq}";
    const RM_ENTRY: &str = "/cluster/sdn/route-maps/entries/{route-map-id}/entry/{order}";
    vec![
        get(PL, list_prefix_lists),
        post(PL, create_prefix_list),
        get(PL_ID, get_prefix_list),
        put(PL_ID, update_prefix_list),
        delete(PL_ID, delete_prefix_list),
        get(PL_ENTRIES, get_prefix_list_entries),
        post(PL_ENTRIES, create_prefix_list_entry),
        get(PL_ENTRY, get_prefix_list_entry),
        put(PL_ENTRY, update_prefix_list_entry),
        delete(PL_ENTRY, delete_prefix_list_entry),
        get("/cluster/sdn/route-maps", list_route_maps),
        get("/cluster/sdn/route-maps/entries", list_route_map_entries),
        post("/cluster/sdn/route-maps/entries", create_route_map_entry),
        get(
            "/cluster/sdn/route-maps/entries/{route-map-id}",
            list_route_map_entries_for_route_map,
        ),
        get(RM_ENTRY, get_route_map_entry),
        put(RM_ENTRY, update_route_map_entry),
        delete(RM_ENTRY, delete_route_map_entry),
    ]
}

const PRIVS: [&str; 2] = ["SDN.Audit", "SDN.Allocate"];

fn may(ctx: &Ctx<'_>, c: &Cluster, path: &str) -> bool {
    ctx.who().is_ok_and(|w| c.access().has_any(w, path, &PRIVS))
}

/// A route map entry's route map, also from the pending values of a new
/// entry in the pending view.
fn route_map_of(e: &crate::model::sdn::Entry) -> String {
    e.text_or_pending("route-map-id").unwrap_or_default()
}

/// `GET /cluster/sdn/prefix-lists`: the lists the caller may see; with
/// `verbose` their members and the digest, else their ID (and `state`
/// in the pending view).
fn list_prefix_lists(ctx: &Ctx<'_>) -> Result<Reply> {
    let v = ctx.params.sdn_view()?;
    let verbose = ctx.params.bool("verbose")?.unwrap_or(false);
    let items = ctx.with(|c| {
        let l = c.sdn().prefix_lists_index(v);
        Ok::<_, crate::model::Error>(
            l.items
                .iter()
                .filter(|(id, _)| may(ctx, c, &format!("/sdn/prefix-lists/{id}")))
                .map(|(id, e)| view::prefix_list(id, e, verbose, l.digest.as_deref()))
                .collect::<Vec<_>>(),
        )
    })?;
    Ok(Value::Array(items).into())
}

fn get_prefix_list(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    let o = ctx.with(|c| c.sdn().get_prefix_list(&id))?;
    Ok(view::object(o).into())
}

fn create_prefix_list(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| c.sdn_mut().create_prefix_list(&p))?;
    Ok(Value::Null.into())
}

fn update_prefix_list(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| c.sdn_mut().update_prefix_list(&p))?;
    Ok(Value::Null.into())
}

fn delete_prefix_list(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| c.sdn_mut().delete_prefix_list(&p))?;
    Ok(Value::Null.into())
}

fn get_prefix_list_entries(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    let entries = ctx.with(|c| c.sdn().prefix_list_entries(&id))?;
    Ok(Value::Array(entries.into_iter().map(view::object).collect()).into())
}

fn get_prefix_list_entry(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    let seq = ctx.param("url_seq")?;
    let o = ctx.with(|c| c.sdn().prefix_list_entry(&id, &seq))?;
    Ok(view::object(o).into())
}

fn create_prefix_list_entry(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| c.sdn_mut().create_prefix_list_entry(&p))?;
    Ok(Value::Null.into())
}

fn update_prefix_list_entry(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| c.sdn_mut().update_prefix_list_entry(&p))?;
    Ok(Value::Null.into())
}

fn delete_prefix_list_entry(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| c.sdn_mut().delete_prefix_list_entry(&p))?;
    Ok(Value::Null.into())
}

/// `GET /cluster/sdn/route-maps`: `{id}` of each route map the caller
/// may see.
fn list_route_maps(ctx: &Ctx<'_>) -> Result<Reply> {
    let running = ctx.params.bool("running")?.unwrap_or(false);
    let items = ctx.with(|c| {
        Ok::<_, crate::model::Error>(
            c.sdn()
                .route_map_ids(running)
                .into_iter()
                .filter(|id| may(ctx, c, &format!("/sdn/route-maps/{id}")))
                .map(|id| json!({ "id": id }))
                .collect::<Vec<_>>(),
        )
    })?;
    Ok(Value::Array(items).into())
}

fn entries(l: &Listing, keep: impl Fn(&str) -> bool) -> Vec<Value> {
    l.items
        .values()
        .filter(|e| keep(&route_map_of(e)))
        .map(|e| view::fabric_record(e, l.digest.as_deref()))
        .collect()
}

/// `GET /cluster/sdn/route-maps/entries`: the entries of the route maps
/// the caller may see.
fn list_route_map_entries(ctx: &Ctx<'_>) -> Result<Reply> {
    let v = ctx.params.sdn_view()?;
    let items = ctx.with(|c| {
        let l = c.sdn().route_map_entries(None, v);
        Ok::<_, crate::model::Error>(entries(&l, |rm| {
            may(ctx, c, &format!("/sdn/route-maps/{rm}"))
        }))
    })?;
    Ok(Value::Array(items).into())
}

/// `GET /cluster/sdn/route-maps/entries/{route-map-id}`: one route
/// map's entries (none for an unknown one).
fn list_route_map_entries_for_route_map(ctx: &Ctx<'_>) -> Result<Reply> {
    let rm = ctx.param("route-map-id")?;
    let v = ctx.params.sdn_view()?;
    let l = ctx.with(|c| c.sdn().route_map_entries(Some(&rm), v));
    Ok(Value::Array(entries(&l, |_| true)).into())
}

fn order(ctx: &Ctx<'_>) -> Result<u16> {
    let o = ctx.param("order")?;
    o.parse().map_err(|_| {
        crate::model::Error::invalid(
            "order",
            format!("value must have a maximum value of 65535 - got '{o}'"),
        )
    })
}

fn get_route_map_entry(ctx: &Ctx<'_>) -> Result<Reply> {
    let rm = ctx.param("route-map-id")?;
    let order = order(ctx)?;
    let o = ctx.with(|c| c.sdn().route_map_entry(&rm, order))?;
    Ok(view::object(o).into())
}

fn create_route_map_entry(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| c.sdn_mut().create_route_map_entry(&p))?;
    Ok(Value::Null.into())
}

fn update_route_map_entry(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| c.sdn_mut().update_route_map_entry(&p))?;
    Ok(Value::Null.into())
}

fn delete_route_map_entry(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| c.sdn_mut().delete_route_map_entry(&p))?;
    Ok(Value::Null.into())
}
