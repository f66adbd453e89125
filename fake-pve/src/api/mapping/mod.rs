//! `/cluster/mapping/{pci,usb,dir}`: the resource mappings (pve-manager
//! `API2/Cluster/Mapping/{PCI,USB,Dir}.pm`). The schema checks the
//! permissions of the single-mapping calls (`Mapping.Modify` on
//! `/mapping/<kind>` to create and delete, on `/mapping/<kind>/<id>` to
//! update; any `Mapping.*` there to read); the lists show the mappings
//! the user holds a `Mapping.*` privilege on. `check-node` goes to that
//! node, which checks the entries naming it against its devices.

pub mod view;

use serde_json::Value;

use super::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::Result;
use crate::model::mapping::check::{self, Host};
use crate::model::mapping::{Kind, Mapping};
use crate::spec::formats::split_list;

/// The privileges that let a user see a mapping.
const SEE: &[&str] = &["Mapping.Modify", "Mapping.Use", "Mapping.Audit"];

/// The five handlers of a kind, bound to it.
macro_rules! kind_routes {
    ($kind:expr, $list:literal, $one:literal) => {{
        fn l(ctx: &Ctx<'_>) -> Result<Reply> {
            list(ctx, $kind)
        }
        fn c(ctx: &Ctx<'_>) -> Result<Reply> {
            create(ctx, $kind)
        }
        fn g(ctx: &Ctx<'_>) -> Result<Reply> {
            info(ctx, $kind)
        }
        fn u(ctx: &Ctx<'_>) -> Result<Reply> {
            update(ctx, $kind)
        }
        fn d(ctx: &Ctx<'_>) -> Result<Reply> {
            remove(ctx, $kind)
        }
        vec![
            get($list, l),
            post($list, c),
            get($one, g),
            put($one, u),
            delete($one, d),
        ]
    }};
}

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    let mut out = kind_routes!(
        Kind::Pci,
        "/cluster/mapping/pci",
        "/cluster/mapping/pci/{id}"
    );
    out.extend(kind_routes!(
        Kind::Usb,
        "/cluster/mapping/usb",
        "/cluster/mapping/usb/{id}"
    ));
    out.extend(kind_routes!(
        Kind::Dir,
        "/cluster/mapping/dir",
        "/cluster/mapping/dir/{id}"
    ));
    out
}

/// The mapping a call's parameters describe, and whether `map` was
/// given.
fn given(ctx: &Ctx<'_>, kind: Kind) -> Result<(Mapping, bool)> {
    let map = ctx.params.get("map").map(|v| match v {
        Value::Array(items) => items
            .iter()
            .map(super::params::value_text)
            .collect::<Vec<_>>(),
        other => vec![super::params::value_text(other)],
    });
    let flag = |name: &str| -> Result<Option<bool>> {
        if kind == Kind::Pci {
            ctx.params.bool(name)
        } else {
            Ok(None)
        }
    };
    Ok((
        Mapping {
            description: ctx.params.str("description"),
            mdev: flag("mdev")?,
            live_migration_capable: flag("live-migration-capable")?,
            map: map.clone().unwrap_or_default(),
        },
        map.is_some(),
    ))
}

/// `GET /cluster/mapping/{kind}`: the mappings the user may see, each
/// with the file's digest; with `check-node`, that node's findings.
fn list(ctx: &Ctx<'_>, kind: Kind) -> Result<Reply> {
    let who = ctx.who()?.clone();
    let check_node = match ctx.params.str("check-node") {
        Some(n) => Some(ctx.with(|c| c.nodes().reach(&n).map(|n| n.name.clone()))?),
        None => None,
    };
    let out = ctx.with(|c| {
        let digest = c.mappings().digest(kind);
        let fs = check_node.as_deref().map(|n| c.node_fs(n));
        let hw = check_node.as_deref().map(|n| c.hardware().node(n));
        c.mappings()
            .iter(kind)
            .filter(|(id, _)| {
                c.access()
                    .has_any(&who, &format!("/mapping/{}/{id}", kind.as_str()), SEE)
            })
            .map(|(id, m)| {
                let findings = match (&check_node, &fs, &hw) {
                    (Some(node), Some(fs), Some(hw)) => {
                        Some(check::check_node(kind, id, m, Host { node, hw, fs }))
                    }
                    _ => None,
                };
                view::list_entry(kind, id, m, &digest, findings.as_deref())
            })
            .collect::<Vec<_>>()
    });
    Ok(Value::Array(out).into())
}

/// `GET /cluster/mapping/{kind}/{id}`.
fn info(ctx: &Ctx<'_>, kind: Kind) -> Result<Reply> {
    let id = ctx.param("id")?;
    ctx.with(|c| {
        let m = c.mappings().get(kind, &id)?;
        Ok(Value::Object(view::mapping(kind, m, &c.mappings().digest(kind))).into())
    })
}

/// Runs `f` with the local node's `assert_valid_map_list` at hand.
fn with_map_check<R>(
    ctx: &Ctx<'_>,
    f: impl FnOnce(&mut crate::model::Cluster, &dyn Fn(&[String]) -> Result<()>) -> R,
) -> R {
    ctx.with(|c| {
        let local = c.nodes().local().to_string();
        let fs = c.node_fs(&local);
        let hw = c.hardware().node(&local).into_owned();
        let host = Host {
            node: &local,
            hw: &hw,
            fs: &fs,
        };
        let check = |map: &[String]| check::assert_valid_map_list(map, host);
        f(c, &check)
    })
}

/// `POST /cluster/mapping/{kind}`.
fn create(ctx: &Ctx<'_>, kind: Kind) -> Result<Reply> {
    let id = ctx.param("id")?;
    let (m, _) = given(ctx, kind)?;
    with_map_check(ctx, |c, check| c.mappings_mut().create(kind, &id, m, check))?;
    Ok(Value::Null.into())
}

/// `PUT /cluster/mapping/{kind}/{id}`.
fn update(ctx: &Ctx<'_>, kind: Kind) -> Result<Reply> {
    let id = ctx.param("id")?;
    let (m, has_map) = given(ctx, kind)?;
    let delete: Vec<String> = ctx
        .params
        .str("delete")
        .map(|d| split_list(&d).into_iter().map(str::to_string).collect())
        .unwrap_or_default();
    let digest = ctx.params.str("digest");
    with_map_check(ctx, |c, check| {
        c.mappings_mut().update(
            kind,
            &id,
            has_map.then_some(m),
            &delete,
            digest.as_deref(),
            check,
        )
    })?;
    Ok(Value::Null.into())
}

/// `DELETE /cluster/mapping/{kind}/{id}`: guests that use the mapping
/// keep it in their config (PVE does not look).
fn remove(ctx: &Ctx<'_>, kind: Kind) -> Result<Reply> {
    let id = ctx.param("id")?;
    ctx.with(|c| c.mappings_mut().delete(kind, &id));
    Ok(Value::Null.into())
}
