//! `/cluster/firewall`, `/nodes/{node}/firewall` and the guests'
//! `/nodes/{node}/{qemu,lxc}/{vmid}/firewall` (pve-firewall
//! `API2/Firewall/{Cluster,Host,VM,Rules,Groups,Aliases,IPSet}.pm`).
//! The calls that PVE proxies to the node (a node's calls, a guest's
//! `options` and `log`) need the node reachable; the others read and
//! write the cluster file system wherever they run, so a guest's
//! firewall answers whether or not the guest exists, as PVE's does.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::params::value_text;
use super::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::Result;

pub(crate) mod view;
use crate::model::firewall::rules::RULE_PROPERTIES;
use crate::model::firewall::{Firewall, Level, RuleSet, RuleUpdate};
use crate::spec::formats::split_list;

const CLUSTER: u8 = 0;
const HOST: u8 = 1;
const VM: u8 = 2;
const CT: u8 = 3;

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    let mut r = vec![
        get("/cluster/firewall", cluster_index),
        get("/nodes/{node}/firewall", host_index),
        get("/nodes/{node}/qemu/{vmid}/firewall", guest_index),
        get("/nodes/{node}/lxc/{vmid}/firewall", guest_index),
        get("/cluster/firewall/macros", list_macros),
        get("/nodes/{node}/firewall/log", read_log::<HOST>),
        get("/nodes/{node}/qemu/{vmid}/firewall/log", read_log::<VM>),
        get("/nodes/{node}/lxc/{vmid}/firewall/log", read_log::<CT>),
        get("/cluster/firewall/refs", refs::<CLUSTER>),
        get("/nodes/{node}/qemu/{vmid}/firewall/refs", refs::<VM>),
        get("/nodes/{node}/lxc/{vmid}/firewall/refs", refs::<CT>),
        get("/cluster/firewall/groups", list_groups),
        post("/cluster/firewall/groups", create_group),
        delete("/cluster/firewall/groups/{group}", delete_group),
        get("/cluster/firewall/groups/{group}", group_rules),
        post("/cluster/firewall/groups/{group}", group_create_rule),
        get("/cluster/firewall/groups/{group}/{pos}", group_rule),
        put("/cluster/firewall/groups/{group}/{pos}", group_update_rule),
        delete("/cluster/firewall/groups/{group}/{pos}", group_delete_rule),
    ];
    macro_rules! level_routes {
        ($base:literal, $k:expr) => {
            r.extend([
                get(concat!($base, "/options"), read_options::<{ $k }>),
                put(concat!($base, "/options"), set_options::<{ $k }>),
                get(concat!($base, "/rules"), list_rules::<{ $k }>),
                post(concat!($base, "/rules"), create_rule::<{ $k }>),
                get(concat!($base, "/rules/{pos}"), read_rule::<{ $k }>),
                put(concat!($base, "/rules/{pos}"), update_rule::<{ $k }>),
                delete(concat!($base, "/rules/{pos}"), delete_rule::<{ $k }>),
            ]);
        };
    }
    macro_rules! set_routes {
        ($base:literal, $k:expr) => {
            r.extend([
                get(concat!($base, "/aliases"), list_aliases::<{ $k }>),
                post(concat!($base, "/aliases"), create_alias::<{ $k }>),
                get(concat!($base, "/aliases/{name}"), read_alias::<{ $k }>),
                put(concat!($base, "/aliases/{name}"), update_alias::<{ $k }>),
                delete(concat!($base, "/aliases/{name}"), remove_alias::<{ $k }>),
                get(concat!($base, "/ipset"), ipset_index::<{ $k }>),
                post(concat!($base, "/ipset"), create_ipset::<{ $k }>),
                get(concat!($base, "/ipset/{name}"), get_ipset::<{ $k }>),
                post(concat!($base, "/ipset/{name}"), create_ip::<{ $k }>),
                delete(concat!($base, "/ipset/{name}"), delete_ipset::<{ $k }>),
                get(concat!($base, "/ipset/{name}/{cidr}"), read_ip::<{ $k }>),
                put(concat!($base, "/ipset/{name}/{cidr}"), update_ip::<{ $k }>),
                delete(concat!($base, "/ipset/{name}/{cidr}"), remove_ip::<{ $k }>),
            ]);
        };
    }
    level_routes!("/cluster/firewall", CLUSTER);
    level_routes!("/nodes/{node}/firewall", HOST);
    level_routes!("/nodes/{node}/qemu/{vmid}/firewall", VM);
    level_routes!("/nodes/{node}/lxc/{vmid}/firewall", CT);
    set_routes!("/cluster/firewall", CLUSTER);
    set_routes!("/nodes/{node}/qemu/{vmid}/firewall", VM);
    set_routes!("/nodes/{node}/lxc/{vmid}/firewall", CT);
    r
}

/// Which file a call of kind `K` is about. `proxied` calls need their
/// node reachable (PVE's `proxyto => 'node'`).
fn level<const K: u8>(ctx: &Ctx<'_>, proxied: bool) -> Result<Level> {
    if K == CLUSTER {
        return Ok(Level::Cluster);
    }
    let node = ctx.param("node")?;
    let node = if K == HOST || proxied {
        ctx.with(|c| c.nodes().reach(&node).map(|n| n.name.clone()))?
    } else {
        node
    };
    if K == HOST {
        return Ok(Level::Host(node));
    }
    let vmid = ctx
        .params
        .int("vmid", Some(1), None)?
        .and_then(|v| u32::try_from(v).ok())
        .unwrap_or_default();
    Ok(if K == VM {
        Level::Vm(vmid)
    } else {
        Level::Ct(vmid)
    })
}

fn names(list: &[&str]) -> Reply {
    Value::Array(list.iter().map(|n| json!({ "name": n })).collect()).into()
}

/// `GET /cluster/firewall`.
fn cluster_index(_ctx: &Ctx<'_>) -> Result<Reply> {
    Ok(names(&[
        "aliases", "rules", "options", "groups", "ipset", "macros", "refs",
    ]))
}

/// `GET /nodes/{node}/firewall`.
fn host_index(_ctx: &Ctx<'_>) -> Result<Reply> {
    Ok(names(&["rules", "options", "log"]))
}

/// `GET /nodes/{node}/{qemu,lxc}/{vmid}/firewall`.
fn guest_index(_ctx: &Ctx<'_>) -> Result<Reply> {
    Ok(names(&["rules", "aliases", "ipset", "refs", "options"]))
}

/// `GET /cluster/firewall/macros`.
fn list_macros(_ctx: &Ctx<'_>) -> Result<Reply> {
    Ok(Firewall::macros()
        .iter()
        .map(|m| json!({ "macro": m.name, "descr": m.descr }))
        .collect::<Value>()
        .into())
}

/// `GET .../firewall/log`: the log is empty, so PVE's `dump_logfile`
/// answers its one `no content` line whatever `start`, `limit`, `since`
/// and `until` say.
fn read_log<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    level::<K>(ctx, true)?;
    Ok(Reply {
        raw: None,
        data: json!([{ "n": 1, "t": "no content" }]),
        total: Some(1),
        attribs: serde_json::Map::new(),
        deferred: None,
        download: None,
    })
}

/// `GET .../firewall/refs`.
fn refs<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    let l = level::<K>(ctx, false)?;
    let kind = ctx.params.str("type");
    Ok(ctx
        .with(|c| {
            c.firewall()
                .refs(&l, kind.as_deref())
                .iter()
                .map(fw_ref)
                .collect::<Value>()
        })
        .into())
}

// ---- options --------------------------------------------------------------

fn read_options<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    let l = level::<K>(ctx, K != CLUSTER)?;
    let now = ctx.now();
    Ok(ctx
        .with(|c| view::options(&c.firewall().options(&l, now)))
        .into())
}

fn set_options<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    let l = level::<K>(ctx, K != CLUSTER)?;
    let now = ctx.now();
    let skip = ["node", "vmid", "delete", "digest"];
    let set: BTreeMap<String, String> = ctx
        .params
        .names()
        .filter(|n| !skip.contains(n))
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

// ---- rules ----------------------------------------------------------------

fn rule_props(ctx: &Ctx<'_>) -> BTreeMap<String, String> {
    RULE_PROPERTIES
        .iter()
        .filter_map(|k| ctx.params.get(k).map(|v| ((*k).to_string(), value_text(v))))
        .collect()
}

fn pos(ctx: &Ctx<'_>) -> Result<usize> {
    let p = ctx.params.int("pos", Some(0), None)?.unwrap_or(0);
    Ok(usize::try_from(p).unwrap_or(usize::MAX))
}

fn rule_update(ctx: &Ctx<'_>) -> Result<RuleUpdate> {
    let moveto = ctx
        .params
        .int("moveto", Some(0), None)?
        .map(|m| usize::try_from(m).unwrap_or(usize::MAX));
    let delete = ctx.params.str("delete").unwrap_or_default();
    Ok(RuleUpdate {
        props: rule_props(ctx),
        moveto,
        delete: split_list(&delete)
            .into_iter()
            .map(str::to_string)
            .collect(),
        digest: ctx.params.str("digest"),
    })
}

pub(crate) fn do_list(ctx: &Ctx<'_>, set: &RuleSet) -> Result<Reply> {
    Ok(ctx
        .with(|c| c.firewall().rules(set).map(|l| view::rules(&l)))?
        .into())
}

pub(crate) fn do_read(ctx: &Ctx<'_>, set: &RuleSet) -> Result<Reply> {
    let p = pos(ctx)?;
    Ok(ctx
        .with(|c| {
            let (r, digest) = c.firewall().rule(set, p)?;
            Ok::<_, crate::model::Error>(view::rule(&r, &digest, p))
        })?
        .into())
}

pub(crate) fn do_create(ctx: &Ctx<'_>, set: &RuleSet) -> Result<Reply> {
    let props = rule_props(ctx);
    ctx.with(|c| c.firewall_mut().create_rule(set, &props))?;
    Ok(Value::Null.into())
}

pub(crate) fn do_update(ctx: &Ctx<'_>, set: &RuleSet) -> Result<Reply> {
    let p = pos(ctx)?;
    let up = rule_update(ctx)?;
    ctx.with(|c| c.firewall_mut().update_rule(set, p, &up))?;
    Ok(Value::Null.into())
}

pub(crate) fn do_delete(ctx: &Ctx<'_>, set: &RuleSet) -> Result<Reply> {
    let p = pos(ctx)?;
    let digest = ctx.params.str("digest");
    ctx.with(|c| c.firewall_mut().delete_rule(set, p, digest.as_deref()))?;
    Ok(Value::Null.into())
}

fn rule_set<const K: u8>(ctx: &Ctx<'_>) -> Result<RuleSet> {
    Ok(RuleSet::Level(level::<K>(ctx, K == HOST)?))
}

fn list_rules<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    do_list(ctx, &rule_set::<K>(ctx)?)
}

fn read_rule<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    do_read(ctx, &rule_set::<K>(ctx)?)
}

fn create_rule<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    do_create(ctx, &rule_set::<K>(ctx)?)
}

fn update_rule<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    do_update(ctx, &rule_set::<K>(ctx)?)
}

fn delete_rule<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    do_delete(ctx, &rule_set::<K>(ctx)?)
}

// ---- security groups ------------------------------------------------------

fn group_set(ctx: &Ctx<'_>) -> Result<RuleSet> {
    Ok(RuleSet::Group(ctx.param("group")?))
}

/// `GET /cluster/firewall/groups`.
fn list_groups(ctx: &Ctx<'_>) -> Result<Reply> {
    Ok(ctx
        .with(|c| view::sections(&c.firewall().groups(), "group"))
        .into())
}

/// `POST /cluster/firewall/groups`.
fn create_group(ctx: &Ctx<'_>) -> Result<Reply> {
    let group = ctx.param("group")?;
    let comment = ctx.params.str("comment");
    let rename = ctx.params.str("rename");
    let digest = ctx.params.str("digest");
    ctx.with(|c| {
        c.firewall_mut().create_group(
            &group,
            comment.as_deref(),
            rename.as_deref(),
            digest.as_deref(),
        )
    })?;
    Ok(Value::Null.into())
}

/// `DELETE /cluster/firewall/groups/{group}`.
fn delete_group(ctx: &Ctx<'_>) -> Result<Reply> {
    let group = ctx.param("group")?;
    ctx.with(|c| c.firewall_mut().delete_group(&group))?;
    Ok(Value::Null.into())
}

fn group_rules(ctx: &Ctx<'_>) -> Result<Reply> {
    do_list(ctx, &group_set(ctx)?)
}

fn group_rule(ctx: &Ctx<'_>) -> Result<Reply> {
    do_read(ctx, &group_set(ctx)?)
}

fn group_create_rule(ctx: &Ctx<'_>) -> Result<Reply> {
    do_create(ctx, &group_set(ctx)?)
}

fn group_update_rule(ctx: &Ctx<'_>) -> Result<Reply> {
    do_update(ctx, &group_set(ctx)?)
}

fn group_delete_rule(ctx: &Ctx<'_>) -> Result<Reply> {
    do_delete(ctx, &group_set(ctx)?)
}

// ---- aliases --------------------------------------------------------------

fn list_aliases<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    let l = level::<K>(ctx, false)?;
    Ok(ctx
        .with(|c| view::aliases(&c.firewall().aliases(&l)))
        .into())
}

fn read_alias<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    let l = level::<K>(ctx, false)?;
    let name = ctx.param("name")?;
    Ok(ctx
        .with(|c| {
            c.firewall()
                .alias(&l, &name)
                .map(|a| Value::Object(view::alias(a)))
        })?
        .into())
}

fn create_alias<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    let l = level::<K>(ctx, false)?;
    let name = ctx.param("name")?;
    let cidr = ctx.param("cidr")?;
    let comment = ctx.params.str("comment");
    ctx.with(|c| {
        c.firewall_mut()
            .create_alias(&l, &name, &cidr, comment.as_deref())
    })?;
    Ok(Value::Null.into())
}

fn update_alias<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    let l = level::<K>(ctx, false)?;
    let name = ctx.param("name")?;
    let cidr = ctx.param("cidr")?;
    let comment = ctx.params.str("comment");
    let rename = ctx.params.str("rename");
    let digest = ctx.params.str("digest");
    ctx.with(|c| {
        c.firewall_mut().update_alias(
            &l,
            &name,
            &cidr,
            comment.as_deref(),
            rename.as_deref(),
            digest.as_deref(),
        )
    })?;
    Ok(Value::Null.into())
}

fn remove_alias<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    let l = level::<K>(ctx, false)?;
    let name = ctx.param("name")?;
    let digest = ctx.params.str("digest");
    ctx.with(|c| c.firewall_mut().delete_alias(&l, &name, digest.as_deref()))?;
    Ok(Value::Null.into())
}

// ---- IP sets --------------------------------------------------------------

fn ipset_index<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    let l = level::<K>(ctx, false)?;
    Ok(ctx
        .with(|c| view::sections(&c.firewall().ipsets(&l), "name"))
        .into())
}

fn create_ipset<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    let l = level::<K>(ctx, false)?;
    let name = ctx.param("name")?;
    let comment = ctx.params.str("comment");
    let rename = ctx.params.str("rename");
    let digest = ctx.params.str("digest");
    ctx.with(|c| {
        c.firewall_mut().create_ipset(
            &l,
            &name,
            comment.as_deref(),
            rename.as_deref(),
            digest.as_deref(),
        )
    })?;
    Ok(Value::Null.into())
}

fn get_ipset<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    let l = level::<K>(ctx, false)?;
    let name = ctx.param("name")?;
    Ok(ctx
        .with(|c| c.firewall().ipset(&l, &name).map(|l| view::ips(&l)))?
        .into())
}

fn delete_ipset<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    let l = level::<K>(ctx, false)?;
    let name = ctx.param("name")?;
    let force = ctx.params.bool("force")?.unwrap_or(false);
    ctx.with(|c| c.firewall_mut().delete_ipset(&l, &name, force))?;
    Ok(Value::Null.into())
}

fn create_ip<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    let l = level::<K>(ctx, false)?;
    let name = ctx.param("name")?;
    let cidr = ctx.param("cidr")?;
    let nomatch = ctx.params.bool("nomatch")?.unwrap_or(false);
    let comment = ctx.params.str("comment");
    ctx.with(|c| {
        c.firewall_mut()
            .add_ip(&l, &name, &cidr, nomatch, comment.as_deref())
    })?;
    Ok(Value::Null.into())
}

fn read_ip<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    let l = level::<K>(ctx, false)?;
    let name = ctx.param("name")?;
    let cidr = ctx.param("cidr")?;
    Ok(ctx
        .with(|c| {
            c.firewall()
                .ip(&l, &name, &cidr)
                .map(|(e, d)| view::ip(&e, &d))
        })?
        .into())
}

fn update_ip<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    let l = level::<K>(ctx, false)?;
    let name = ctx.param("name")?;
    let cidr = ctx.param("cidr")?;
    let nomatch = ctx.params.bool("nomatch")?.unwrap_or(false);
    let comment = ctx.params.str("comment");
    let digest = ctx.params.str("digest");
    ctx.with(|c| {
        c.firewall_mut().update_ip(
            &l,
            &name,
            &cidr,
            nomatch,
            comment.as_deref(),
            digest.as_deref(),
        )
    })?;
    Ok(Value::Null.into())
}

fn remove_ip<const K: u8>(ctx: &Ctx<'_>) -> Result<Reply> {
    let l = level::<K>(ctx, false)?;
    let name = ctx.param("name")?;
    let cidr = ctx.param("cidr")?;
    let digest = ctx.params.str("digest");
    ctx.with(|c| {
        c.firewall_mut()
            .remove_ip(&l, &name, &cidr, digest.as_deref())
    })?;
    Ok(Value::Null.into())
}

/// A row of `GET .../refs`.
fn fw_ref(r: &crate::model::firewall::FwRef<'_>) -> Value {
    let mut e = json!({ "type": r.kind, "name": r.name, "ref": r.reference, "scope": r.scope });
    if let Some(c) = r.comment {
        e["comment"] = json!(c);
    }
    e
}
