//! `/cluster/ha`: HA resources, groups (8.x), rules (9.x) and the
//! manager's status (pve-ha-manager `API2/HA/{Resources,Groups,Rules,
//! Status}.pm`), and the diversion of an HA-managed guest's power and
//! migrate calls to the HA stack (qemu-server, pve-container). The
//! answers are written by [`view`].

mod view;

use serde_json::Value;

use super::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::ha::{GroupUpdate, HaRequest, ResourceUpdate, RuleUpdate};
use crate::model::tasks::Worker;
use crate::model::{Cluster, Error, Result};
use crate::spec::formats::split_list;

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/cluster/ha/resources", resources_index),
        post("/cluster/ha/resources", create_resource),
        get("/cluster/ha/resources/{sid}", read_resource),
        put("/cluster/ha/resources/{sid}", update_resource),
        delete("/cluster/ha/resources/{sid}", delete_resource),
        post("/cluster/ha/resources/{sid}/migrate", migrate),
        post("/cluster/ha/resources/{sid}/relocate", relocate),
        get("/cluster/ha/groups", groups_index),
        post("/cluster/ha/groups", create_group),
        get("/cluster/ha/groups/{group}", read_group),
        put("/cluster/ha/groups/{group}", update_group),
        delete("/cluster/ha/groups/{group}", delete_group),
        get("/cluster/ha/rules", rules_index),
        post("/cluster/ha/rules", create_rule),
        get("/cluster/ha/rules/{rule}", read_rule),
        put("/cluster/ha/rules/{rule}", update_rule),
        delete("/cluster/ha/rules/{rule}", delete_rule),
        get("/cluster/ha/status/current", status_current),
        get("/cluster/ha/status/manager_status", manager_status),
        post("/cluster/ha/status/disarm-ha", disarm),
        post("/cluster/ha/status/arm-ha", arm),
    ]
}

/// `delete`, split.
fn delete_list(ctx: &Ctx<'_>) -> Vec<String> {
    ctx.params
        .str("delete")
        .map(|d| split_list(&d).into_iter().map(str::to_string).collect())
        .unwrap_or_default()
}

fn count(ctx: &Ctx<'_>, name: &str) -> Result<Option<u64>> {
    Ok(ctx
        .params
        .int(name, Some(0), None)?
        .and_then(|n| u64::try_from(n).ok()))
}

fn resource_update(ctx: &Ctx<'_>) -> Result<ResourceUpdate> {
    Ok(ResourceUpdate {
        state: ctx.params.str("state"),
        group: ctx.params.str("group"),
        failback: ctx.params.bool("failback")?,
        auto_rebalance: ctx.params.bool("auto-rebalance")?,
        max_restart: count(ctx, "max_restart")?,
        max_relocate: count(ctx, "max_relocate")?,
        comment: ctx.params.str("comment"),
        delete: delete_list(ctx),
        digest: ctx.params.str("digest"),
        kind: ctx.params.str("type"),
    })
}

/// `GET /cluster/ha/resources`.
fn resources_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let kind = ctx.params.str("type");
    let v = ctx.state.settings().version;
    Ok(ctx
        .with(|c| view::resources(&c.ha().resources_index(v, kind.as_deref())))
        .into())
}

/// `GET /cluster/ha/resources/{sid}`.
fn read_resource(ctx: &Ctx<'_>) -> Result<Reply> {
    let sid = ctx.param("sid")?;
    Ok(ctx
        .with(|c| {
            let v = c.version();
            let (sid, _, _) = crate::model::ha::parse_sid(v, &sid, |id| {
                crate::model::ha::guest_type(c.guests(), id)
            })?;
            c.ha().read_resource(v, &sid).map(|e| view::resource(&e))
        })?
        .into())
}

/// `POST /cluster/ha/resources`.
fn create_resource(ctx: &Ctx<'_>) -> Result<Reply> {
    let sid = ctx.param("sid")?;
    let up = resource_update(ctx)?;
    let now = ctx.now();
    ctx.with(|c| {
        let v = c.version();
        let types = guest_types(c);
        c.ha_mut().create_resource(v, &sid, &up, types, now)
    })?;
    Ok(Value::Null.into())
}

/// A lookup of guest types that does not borrow the cluster.
fn guest_types(c: &Cluster) -> impl Fn(u32) -> Option<crate::model::ha::GuestType> + use<> {
    use crate::model::ha::GuestType;
    let vms: std::collections::BTreeSet<u32> = c.guests().keys().copied().collect();
    let cts: std::collections::BTreeSet<u32> = c.guests().cts().keys().copied().collect();
    move |id| {
        if vms.contains(&id) {
            Some(GuestType::Qemu)
        } else if cts.contains(&id) {
            Some(GuestType::Lxc)
        } else {
            None
        }
    }
}

/// `PUT /cluster/ha/resources/{sid}`.
fn update_resource(ctx: &Ctx<'_>) -> Result<Reply> {
    let sid = ctx.param("sid")?;
    let up = resource_update(ctx)?;
    let now = ctx.now();
    ctx.with(|c| {
        let v = c.version();
        let types = guest_types(c);
        c.ha_mut().update_resource(v, &sid, &up, types, now)
    })?;
    Ok(Value::Null.into())
}

/// `DELETE /cluster/ha/resources/{sid}`.
fn delete_resource(ctx: &Ctx<'_>) -> Result<Reply> {
    let sid = ctx.param("sid")?;
    let purge = ctx.params.bool("purge")?.unwrap_or(true);
    ctx.with(|c| {
        let v = c.version();
        let types = guest_types(c);
        c.ha_mut().delete_resource(v, &sid, purge, types)
    })?;
    Ok(Value::Null.into())
}

fn request_move(ctx: &Ctx<'_>, relocate: bool) -> Result<Reply> {
    let sid = ctx.param("sid")?;
    let node = ctx.param("node")?;
    let now = ctx.now();
    Ok(ctx
        .with(|c| {
            let v = c.version();
            let types = guest_types(c);
            c.ha_mut()
                .request_move(v, &sid, &node, relocate, types, now)
                .map(|m| view::moved(m.as_ref()))
        })?
        .into())
}

/// `POST /cluster/ha/resources/{sid}/migrate`.
fn migrate(ctx: &Ctx<'_>) -> Result<Reply> {
    request_move(ctx, false)
}

/// `POST /cluster/ha/resources/{sid}/relocate`.
fn relocate(ctx: &Ctx<'_>) -> Result<Reply> {
    request_move(ctx, true)
}

fn group_update(ctx: &Ctx<'_>) -> Result<GroupUpdate> {
    Ok(GroupUpdate {
        nodes: ctx.params.str("nodes"),
        restricted: ctx.params.bool("restricted")?,
        nofailback: ctx.params.bool("nofailback")?,
        comment: ctx.params.str("comment"),
        delete: delete_list(ctx),
        digest: ctx.params.str("digest"),
        kind: ctx.params.str("type"),
    })
}

/// `GET /cluster/ha/groups`.
fn groups_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let v = ctx.state.settings().version;
    Ok(ctx
        .with(|c| c.ha().groups_index(v).map(|l| view::groups(&l)))?
        .into())
}

/// `GET /cluster/ha/groups/{group}`.
fn read_group(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("group")?;
    let v = ctx.state.settings().version;
    Ok(ctx
        .with(|c| c.ha().read_group(v, &id).map(|e| view::group(&e)))?
        .into())
}

/// `POST /cluster/ha/groups`.
fn create_group(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("group")?;
    let up = group_update(ctx)?;
    let v = ctx.state.settings().version;
    ctx.with(|c| c.ha_mut().create_group(v, &id, &up))?;
    Ok(Value::Null.into())
}

/// `PUT /cluster/ha/groups/{group}`.
fn update_group(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("group")?;
    let up = group_update(ctx)?;
    let v = ctx.state.settings().version;
    ctx.with(|c| c.ha_mut().update_group(v, &id, &up))?;
    Ok(Value::Null.into())
}

/// `DELETE /cluster/ha/groups/{group}`.
fn delete_group(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("group")?;
    let v = ctx.state.settings().version;
    ctx.with(|c| c.ha_mut().delete_group(v, &id))?;
    Ok(Value::Null.into())
}

fn rule_update(ctx: &Ctx<'_>) -> Result<RuleUpdate> {
    Ok(RuleUpdate {
        kind: ctx.params.str("type"),
        resources: ctx.params.str("resources"),
        nodes: ctx.params.str("nodes"),
        strict: ctx.params.bool("strict")?,
        affinity: ctx.params.str("affinity"),
        disable: ctx.params.bool("disable")?,
        comment: ctx.params.str("comment"),
        delete: delete_list(ctx),
        digest: ctx.params.str("digest"),
    })
}

/// `GET /cluster/ha/rules`.
fn rules_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let kind = ctx.params.str("type");
    let resource = ctx.params.str("resource");
    Ok(ctx
        .with(|c| view::rules(&c.ha().rules_index(kind.as_deref(), resource.as_deref())))
        .into())
}

/// `GET /cluster/ha/rules/{rule}`.
fn read_rule(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("rule")?;
    Ok(ctx
        .with(|c| c.ha().read_rule(&id).map(|e| view::rule(&e)))?
        .into())
}

/// The nodes a rule may name (`check_node_exists`, the local node
/// always).
fn node_names(c: &Cluster) -> Vec<String> {
    c.nodes().iter().map(|n| n.name.clone()).collect()
}

/// `POST /cluster/ha/rules`.
fn create_rule(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("rule")?;
    let kind = ctx.param("type")?;
    let up = rule_update(ctx)?;
    ctx.with(|c| {
        let nodes = node_names(c);
        c.ha_mut()
            .create_rule(&id, &kind, &up, |n| nodes.iter().any(|x| x == n))
    })?;
    Ok(Value::Null.into())
}

/// `PUT /cluster/ha/rules/{rule}`.
fn update_rule(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("rule")?;
    let up = rule_update(ctx)?;
    ctx.with(|c| {
        let nodes = node_names(c);
        c.ha_mut()
            .update_rule(&id, &up, |n| nodes.iter().any(|x| x == n))
    })?;
    Ok(Value::Null.into())
}

/// `DELETE /cluster/ha/rules/{rule}`.
fn delete_rule(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("rule")?;
    ctx.with(|c| c.ha_mut().delete_rule(&id));
    Ok(Value::Null.into())
}

/// `GET /cluster/ha/status/current`.
fn status_current(ctx: &Ctx<'_>) -> Result<Reply> {
    let now = ctx.now();
    Ok(ctx
        .with(|c| {
            view::status_current(&crate::model::ha::status_current(
                &c.ha, &c.nodes, &c.guests, c.version, now,
            ))
        })
        .into())
}

/// `GET /cluster/ha/status/manager_status`.
fn manager_status(ctx: &Ctx<'_>) -> Result<Reply> {
    Ok(ctx
        .with(|c| view::manager_status(&c.ha.manager_status(c.nodes.local(), c.nodes.quorate())))
        .into())
}

/// `POST /cluster/ha/status/disarm-ha` (9.x).
fn disarm(ctx: &Ctx<'_>) -> Result<Reply> {
    let mode = ctx.param("resource-mode")?;
    let now = ctx.now();
    ctx.with(|c| c.ha_mut().queue_arm(Some(&mode), now));
    Ok(Value::Null.into())
}

/// `POST /cluster/ha/status/arm-ha` (9.x).
fn arm(ctx: &Ctx<'_>) -> Result<Reply> {
    let now = ctx.now();
    ctx.with(|c| c.ha_mut().queue_arm(None, now));
    Ok(Value::Null.into())
}

/// A guest's power or migrate call, diverted to the HA stack when HA
/// manages the guest; `None` when it does not.
///
/// # Errors
/// `overrule-shutdown` on an HA resource.
pub fn divert(c: &mut Cluster, vmid: u32, req: &HaRequest, now: i64) -> Result<Option<Worker>> {
    c.ha.divert(vmid, req, now)
}

/// The refusal of `overrule-shutdown` for an HA resource.
pub fn overrule_refused(c: &Cluster, vmid: u32, overrule: bool) -> Result<()> {
    if overrule && c.ha().managed_sid(vmid).is_some() {
        return Err(Error::invalid(
            "overrule-shutdown",
            "Not applicable for HA resources.",
        ));
    }
    Ok(())
}

/// A guest's destroy: refused without `purge` while the guest is an HA
/// resource; with `purge` the resource goes (and leaves the rules).
///
/// # Errors
/// `unable to remove VM 100 - used in HA resources and purge parameter
/// not set.`
pub fn destroy_guest(c: &mut Cluster, vmid: u32, purge: bool) -> Result<()> {
    let configured = ["vm", "ct"]
        .iter()
        .find(|t| c.ha().resources().contains_key(&format!("{t}:{vmid}")));
    let Some(t) = configured else {
        return Ok(());
    };
    if !purge {
        let what = if *t == "vm" { "VM" } else { "CT" };
        return Err(Error::conflict(format!(
            "unable to remove {what} {vmid} - used in HA resources and purge parameter not set."
        )));
    }
    c.ha_mut().forget_guest(vmid);
    Ok(())
}
