//! `/cluster/notifications`: the targets and matchers of
//! `notifications.cfg` (pve-manager `API2/Cluster/Notifications.pm` over
//! the `proxmox-notify` crate), the known matcher fields and values, and
//! `targets/{name}/test`. The schema checks the permissions (`Mapping.*`
//! on `/mapping/notifications`, with `Sys.Modify` or `Sys.AccessNetwork`
//! on `/` to create or change a target). What is sent lands in the
//! outbox (`GET /_fake/notifications/outbox`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::notify::{Change, Kind, Notifications};
use crate::model::{Cluster, Result};
use crate::spec::formats::split_list;

pub mod view;

/// The five routes of a target kind.
macro_rules! kind_routes {
    ($m:ident, $name:literal) => {
        vec![
            get(
                concat!("/cluster/notifications/endpoints/", $name),
                $m::list,
            ),
            post(
                concat!("/cluster/notifications/endpoints/", $name),
                $m::create,
            ),
            get(
                concat!("/cluster/notifications/endpoints/", $name, "/{name}"),
                $m::info,
            ),
            put(
                concat!("/cluster/notifications/endpoints/", $name, "/{name}"),
                $m::update,
            ),
            delete(
                concat!("/cluster/notifications/endpoints/", $name, "/{name}"),
                $m::remove,
            ),
        ]
    };
}
/// The handlers of one kind, each a call of the generic one.
macro_rules! kind_handlers {
    ($m:ident, $kind:expr) => {
        mod $m {
            use super::*;
            pub(super) fn list(ctx: &Ctx<'_>) -> Result<Reply> {
                super::list(ctx, $kind)
            }
            pub(super) fn create(ctx: &Ctx<'_>) -> Result<Reply> {
                super::create(ctx, $kind)
            }
            pub(super) fn info(ctx: &Ctx<'_>) -> Result<Reply> {
                super::info(ctx, $kind)
            }
            pub(super) fn update(ctx: &Ctx<'_>) -> Result<Reply> {
                super::update(ctx, $kind)
            }
            pub(super) fn remove(ctx: &Ctx<'_>) -> Result<Reply> {
                super::remove(ctx, $kind)
            }
        }
    };
}

kind_handlers!(gotify, Kind::Gotify);
kind_handlers!(sendmail, Kind::Sendmail);
kind_handlers!(smtp, Kind::Smtp);
kind_handlers!(webhook, Kind::Webhook);
kind_handlers!(matchers, Kind::Matcher);

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    let mut out = vec![
        get("/cluster/notifications/matcher-fields", matcher_fields),
        get(
            "/cluster/notifications/matcher-field-values",
            matcher_field_values,
        ),
        get("/cluster/notifications/targets", targets),
        post("/cluster/notifications/targets/{name}/test", test_target),
        get("/cluster/notifications/matchers", matchers::list),
        post("/cluster/notifications/matchers", matchers::create),
        get("/cluster/notifications/matchers/{name}", matchers::info),
        put("/cluster/notifications/matchers/{name}", matchers::update),
        delete("/cluster/notifications/matchers/{name}", matchers::remove),
    ];
    out.extend(kind_routes!(gotify, "gotify"));
    out.extend(kind_routes!(sendmail, "sendmail"));
    out.extend(kind_routes!(smtp, "smtp"));
    out.extend(kind_routes!(webhook, "webhook"));
    out
}

/// The properties a call may set on an entry of the kind, public ones
/// first; the flags and numbers among them.
fn settable(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Gotify => &["server", "comment", "disable", "token"],
        Kind::Sendmail => &[
            "mailto",
            "mailto-user",
            "from-address",
            "author",
            "comment",
            "disable",
        ],
        Kind::Smtp => &[
            "server",
            "port",
            "mode",
            "username",
            "mailto",
            "mailto-user",
            "from-address",
            "author",
            "comment",
            "disable",
            "password",
        ],
        Kind::Webhook => &[
            "url", "method", "header", "body", "comment", "disable", "secret",
        ],
        Kind::Matcher => &[
            "match-field",
            "match-severity",
            "match-calendar",
            "target",
            "mode",
            "invert-match",
            "comment",
            "disable",
        ],
    }
}

/// The change a call's parameters describe.
fn given(ctx: &Ctx<'_>, kind: Kind) -> Result<Change> {
    let mut change = Change::default();
    for &key in settable(kind) {
        let Some(v) = ctx.params.get(key) else {
            continue;
        };
        let value = if kind.list_keys().contains(&key) {
            Value::Array(
                crate::model::notify::list_of(Some(v))
                    .into_iter()
                    .map(Value::String)
                    .collect(),
            )
        } else if matches!(key, "disable" | "invert-match") {
            Value::Bool(ctx.params.bool(key)?.unwrap_or(false))
        } else if key == "port" {
            ctx.params
                .int(key, Some(1), Some(65535))?
                .map_or(Value::Null, |n| json!(n))
        } else {
            Value::String(ctx.params.str(key).unwrap_or_default())
        };
        if kind.private_keys().contains(&key) {
            change.private.insert(key.to_string(), value);
        } else {
            change.set.insert(key.to_string(), value);
        }
    }
    change.delete = ctx
        .params
        .str("delete")
        .map(|d| split_list(&d).into_iter().map(str::to_string).collect())
        .unwrap_or_default();
    if let Some(Value::Array(a)) = ctx.params.get("delete") {
        change.delete = crate::model::notify::list_of(Some(&Value::Array(a.clone())));
    }
    change.digest = ctx.params.str("digest");
    Ok(change)
}

/// `GET .../endpoints/<kind>` and `GET .../matchers`.
fn list(ctx: &Ctx<'_>, kind: Kind) -> Result<Reply> {
    Ok(ctx
        .with(|c| {
            let n = c.notifications();
            Value::Array(
                n.of_kind(kind)
                    .map(|(name, e)| view::entry(n, name, e))
                    .collect(),
            )
        })
        .into())
}

/// `GET .../endpoints/<kind>/{name}` and `GET .../matchers/{name}`: the
/// entry and the digest.
fn info(ctx: &Ctx<'_>, kind: Kind) -> Result<Reply> {
    let name = ctx.param("name")?;
    ctx.with(|c| {
        let n = c.notifications();
        let e = n.get(kind, &name)?;
        let mut v = view::entry(n, &name, e);
        v["digest"] = json!(n.digest());
        Ok(v.into())
    })
}

/// `POST .../endpoints/<kind>` and `POST .../matchers`.
fn create(ctx: &Ctx<'_>, kind: Kind) -> Result<Reply> {
    let name = ctx.param("name")?;
    let change = given(ctx, kind)?;
    ctx.with(|c| c.notifications_mut().create(kind, &name, change))?;
    ctx.state.changed();
    Ok(Value::Null.into())
}

/// `PUT .../endpoints/<kind>/{name}` and `PUT .../matchers/{name}`.
fn update(ctx: &Ctx<'_>, kind: Kind) -> Result<Reply> {
    let name = ctx.param("name")?;
    let change = given(ctx, kind)?;
    ctx.with(|c| c.notifications_mut().update(kind, &name, change))?;
    ctx.state.changed();
    Ok(Value::Null.into())
}

/// `DELETE .../endpoints/<kind>/{name}` and `DELETE .../matchers/{name}`.
fn remove(ctx: &Ctx<'_>, kind: Kind) -> Result<Reply> {
    let name = ctx.param("name")?;
    ctx.with(|c| c.notifications_mut().delete(kind, &name))?;
    ctx.state.changed();
    Ok(Value::Null.into())
}

/// `GET /cluster/notifications/targets`.
fn targets(ctx: &Ctx<'_>) -> Result<Reply> {
    Ok(ctx
        .with(|c| {
            let n = c.notifications();
            Value::Array(
                n.targets()
                    .into_iter()
                    .map(|(name, e)| view::target(n, name, e))
                    .collect(),
            )
        })
        .into())
}

/// A user's mail address from `user.cfg`.
pub fn email_lookup(c: &Cluster) -> BTreeMap<String, String> {
    c.access()
        .users()
        .iter()
        .filter_map(|(id, u)| u.email.clone().map(|m| (id.clone(), m)))
        .collect()
}

/// `POST /cluster/notifications/targets/{name}/test`: the test
/// notification is queued; the answer does not wait for the receiver
/// (how the request went shows in the outbox).
fn test_target(ctx: &Ctx<'_>) -> Result<Reply> {
    let name = ctx.param("name")?;
    let now = ctx.now();
    ctx.with(|c| {
        let emails = email_lookup(c);
        c.notifications_mut()
            .test_target(&name, now, &|u| emails.get(u).cloned())
    })?;
    ctx.state.changed();
    Ok(Value::Null.into())
}

/// `GET /cluster/notifications/matcher-fields`.
fn matcher_fields(_ctx: &Ctx<'_>) -> Result<Reply> {
    Ok(json!([{ "name": "type" }, { "name": "hostname" }, { "name": "job-id" }]).into())
}

/// `GET /cluster/notifications/matcher-field-values`: the notification
/// types, the backup jobs (with `Sys.Audit` on `/`), the replication
/// jobs the user may see and the nodes.
fn matcher_field_values(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?.clone();
    let out = ctx.with(|c| {
        let mut out: Vec<Value> = [
            "package-updates",
            "fencing",
            "replication",
            "vzdump",
            "system-mail",
        ]
        .iter()
        .map(|v| json!({ "value": v, "field": "type" }))
        .collect();
        if c.access().has_any(&who, "/", &["Sys.Audit"]) {
            for (id, job) in c.backups().jobs() {
                let mut v = json!({ "value": id, "field": "job-id" });
                if let Some(comment) = job.comment() {
                    v["comment"] = json!(comment);
                }
                out.push(v);
            }
        }
        for (id, job) in c.replication().jobs() {
            if c.access()
                .has_any(&who, &format!("/vms/{}", job.guest()), &["VM.Audit"])
            {
                let mut v = json!({ "value": id, "field": "job-id" });
                if let Some(comment) = job.comment() {
                    v["comment"] = json!(comment);
                }
                out.push(v);
            }
        }
        for node in c.nodes().members() {
            out.push(json!({ "value": node.name, "field": "hostname" }));
        }
        out
    });
    Ok(Value::Array(out).into())
}

/// The outbox as the control API and the dashboard show it.
pub fn outbox(n: &Notifications) -> Value {
    serde_json::to_value(n.outbox().deliveries()).unwrap_or(Value::Null)
}
