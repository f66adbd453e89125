//! `/cluster/sdn/vnets/{vnet}/firewall/{options,rules}`: a VNet's own firewall file
//! (options and `forward` rules), as pve-firewall's
//! `API2/Firewall/Vnet.pm` and `VnetRules` serve it. The rules and options
//! are the firewall model's ([`Level::Vnet`]); this module adds the
//! access check every call makes: the VNet must be applied (its running
//! zone names the ACL path), and the caller needs SDN.Audit or
//! SDN.Allocate (reads) or SDN.Allocate (writes) on
//! `/sdn/zones/<zone>/<vnet>`.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{AUDIT, check_any};
use crate::api::firewall::{do_create, do_delete, do_list, do_read, do_update};
use crate::api::params::value_text;
use crate::api::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::Result;
use crate::model::firewall::{Level, RuleSet};
use crate::spec::formats::split_list;

/// The routes of the VNet firewall.
pub fn routes() -> Vec<Route> {
    vec![
        get("/cluster/sdn/vnets/{vnet}/firewall/options", get_options),
        put("/cluster/sdn/vnets/{vnet}/firewall/options", set_options),
        get("/cluster/sdn/vnets/{vnet}/firewall/rules", get_rules),
        post("/cluster/sdn/vnets/{vnet}/firewall/rules", create_rule),
        get("/cluster/sdn/vnets/{vnet}/firewall/rules/{pos}", get_rule),
        put(
            "/cluster/sdn/vnets/{vnet}/firewall/rules/{pos}",
            update_rule,
        ),
        delete(
            "/cluster/sdn/vnets/{vnet}/firewall/rules/{pos}",
            delete_rule,
        ),
    ]
}

const ALLOCATE: [&str; 1] = ["SDN.Allocate"];
/// `get_options` names them in this order (the rules the other way).
const OPTIONS_AUDIT: [&str; 2] = ["SDN.Allocate", "SDN.Audit"];

/// pve-firewall's `check_vnet_access`: the VNet of the running
/// configuration (`invalid vnet specified` otherwise) and `privs` on its
/// ACL path. Answers the VNet's file.
fn access(ctx: &Ctx<'_>, privs: &[&str]) -> Result<Level> {
    let vnet = ctx.param("vnet")?;
    ctx.with(|c| {
        let zone = c.sdn().running_vnet_zone(&vnet)?;
        check_any(ctx, c, &format!("/sdn/zones/{zone}/{vnet}"), privs)
    })?;
    Ok(Level::Vnet(vnet))
}

/// `GET .../firewall/options`: the options set, with their digest.
fn get_options(ctx: &Ctx<'_>) -> Result<Reply> {
    let l = access(ctx, &OPTIONS_AUDIT)?;
    let now = ctx.now();
    Ok(ctx
        .with(|c| crate::api::firewall::view::options(&c.firewall().options(&l, now)))
        .into())
}

/// `PUT .../firewall/options`: `enable`, `policy_forward`,
/// `log_level_forward`, with `delete` and `digest`.
fn set_options(ctx: &Ctx<'_>) -> Result<Reply> {
    let l = access(ctx, &ALLOCATE)?;
    let now = ctx.now();
    let set: BTreeMap<String, String> = ["enable", "policy_forward", "log_level_forward"]
        .into_iter()
        .filter_map(|n| ctx.params.get(n).map(|v| (n.to_string(), value_text(v))))
        .collect();
    let delete = ctx.params.str("delete").unwrap_or_default();
    let delete = split_list(&delete);
    let digest = ctx.params.str("digest");
    ctx.with(|c| {
        c.firewall_mut()
            .set_options(&l, &set, &delete, digest.as_deref(), now)
    })?;
    Ok(Value::Null.into())
}

fn rules_of(ctx: &Ctx<'_>, privs: &[&str]) -> Result<RuleSet> {
    Ok(RuleSet::Level(access(ctx, privs)?))
}

/// `GET .../firewall/rules`.
fn get_rules(ctx: &Ctx<'_>) -> Result<Reply> {
    do_list(ctx, &rules_of(ctx, &AUDIT)?)
}

/// `GET .../firewall/rules/{pos}`.
fn get_rule(ctx: &Ctx<'_>) -> Result<Reply> {
    do_read(ctx, &rules_of(ctx, &AUDIT)?)
}

/// `POST .../firewall/rules`: `forward` and `group` rules only.
fn create_rule(ctx: &Ctx<'_>) -> Result<Reply> {
    do_create(ctx, &rules_of(ctx, &ALLOCATE)?)
}

/// `PUT .../firewall/rules/{pos}`.
fn update_rule(ctx: &Ctx<'_>) -> Result<Reply> {
    do_update(ctx, &rules_of(ctx, &ALLOCATE)?)
}

/// `DELETE .../firewall/rules/{pos}`.
fn delete_rule(ctx: &Ctx<'_>) -> Result<Reply> {
    do_delete(ctx, &rules_of(ctx, &ALLOCATE)?)
}
