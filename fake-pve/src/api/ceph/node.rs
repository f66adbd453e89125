//! `/nodes/{node}/ceph`'s own calls (pve-manager `API2/Ceph.pm`,
//! `API2/Ceph/Cfg.pm`, `Ceph/Releases.pm`).

use serde_json::{Map, Value, json};

use super::{check, inited_and_connected, node_of, view};
use crate::api::{Ctx, Reply};
use crate::model::ceph::InitOptions;
use crate::model::ceph::daemons::CephOp;
use crate::model::ceph::restart::BulkRestart;
use crate::model::{Result, TaskEffect, Worker};

/// Every release pve-manager knows (`get_ceph_release_def`), by code
/// name: its version, and the PVE majors it is available for.
const RELEASES: &[(&str, &str, &[u32])] = &[
    ("octopus", "15.2", &[6, 7]),
    ("pacific", "16.2", &[7]),
    ("quincy", "17.2", &[7, 8]),
    ("reef", "18.2", &[8]),
    ("squid", "19.2", &[8, 9]),
    ("tentacle", "20.2", &[9]),
];

/// `GET /nodes/{node}/ceph/releases` (9.2): no Ceph check; on PVE 9
/// squid and tentacle are available, tentacle the default.
pub fn releases(ctx: &Ctx<'_>) -> Result<Reply> {
    node_of(ctx)?;
    let major = if ctx.with(|c| c.version().is_v9()) {
        9
    } else {
        8
    };
    Ok(Value::Array(
        RELEASES
            .iter()
            .map(|(name, version, majors)| {
                json!({
                    "release": name,
                    "version": version,
                    "available": i32::from(majors.contains(&major)),
                    "is-default": i32::from(*name == "tentacle"),
                    "unsupported": 0,
                })
            })
            .collect(),
    )
    .into())
}

/// `POST /nodes/{node}/ceph/init`.
pub fn init(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    let int = |name: &str| -> Result<Option<u32>> {
        Ok(ctx
            .params
            .int(name, Some(1), Some(7))?
            .and_then(|n| u32::try_from(n).ok()))
    };
    let opts = InitOptions {
        network: ctx.params.str("network"),
        cluster_network: ctx.params.str("cluster-network"),
        size: int("size")?,
        min_size: int("min_size")?,
        disable_cephx: ctx.params.bool("disable_cephx")?.unwrap_or(false),
    };
    let fsid = ctx.rq().uuid_v4();
    ctx.with(|c| c.ceph_mut().init(&node, &opts, &fsid))?;
    Ok(Value::Null.into())
}

/// start, stop and restart: initialised, a configuration, then the
/// task (`srvstart`, ... with the service or `ceph` as its id).
fn service(ctx: &Ctx<'_>, action: &str) -> Result<Reply> {
    let node = node_of(ctx)?;
    check(ctx, &node, |c, n| {
        c.check_inited(n)?;
        if c.conf().is_none_or(crate::model::ceph::CephConf::is_empty) {
            return Err(crate::model::Error::failed("no configuration"));
        }
        Ok(())
    })?;
    let service = ctx.params.str("service");
    let id = service.clone().unwrap_or_else(|| "ceph".into());
    let worker = Worker::new(&format!("srv{action}"), &id).effect(TaskEffect::Ceph {
        node: node.clone(),
        op: CephOp::Service {
            action: action.into(),
            service,
        },
    });
    Ok(json!(ctx.start_task(&node, worker)?).into())
}

/// `POST /nodes/{node}/ceph/start`.
pub fn start(ctx: &Ctx<'_>) -> Result<Reply> {
    service(ctx, "start")
}

/// `POST /nodes/{node}/ceph/stop`.
pub fn stop(ctx: &Ctx<'_>) -> Result<Reply> {
    service(ctx, "stop")
}

/// `POST /nodes/{node}/ceph/restart`.
pub fn restart(ctx: &Ctx<'_>) -> Result<Reply> {
    service(ctx, "restart")
}

/// `POST /nodes/{node}/ceph/restart-bulk` (9.2): initialised, a
/// configuration; then the task `srvrestart` of `<node>-osd`, the
/// rolling restart of the node's OSDs.
pub fn restart_bulk(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    check(ctx, &node, |c, n| {
        c.check_inited(n)?;
        if c.conf().is_none_or(crate::model::ceph::CephConf::is_empty) {
            return Err(crate::model::Error::failed("no ceph configuration"));
        }
        Ok(())
    })?;
    let kind = ctx.param("service-type")?;
    let flag = |name: &str, default: bool| -> Result<bool> {
        Ok(ctx.params.bool(name)?.unwrap_or(default))
    };
    let opts = BulkRestart {
        set_noout: flag("set-noout", true)?,
        timeout: ctx
            .params
            .int("timeout", Some(30), Some(1800))?
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(600),
        dry_run: flag("dry-run", false)?,
        force: flag("force", false)?,
        only_outdated: flag("only-outdated", false)?,
        resume: flag("resume", false)?,
    };
    let worker = Worker::new("srvrestart", &format!("{node}-{kind}")).effect(TaskEffect::Ceph {
        node: node.clone(),
        op: CephOp::RestartBulk { opts },
    });
    Ok(json!(ctx.start_task(&node, worker)?).into())
}

/// `GET /nodes/{node}/ceph/status`: the cluster's status.
pub fn status(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    cluster_status(ctx, &node)
}

/// `ceph status` as `ceph_cluster_status` returns it, asked on `node`.
pub(crate) fn cluster_status(ctx: &Ctx<'_>, node: &str) -> Result<Reply> {
    inited_and_connected(ctx, node)?;
    let now = ctx.now();
    Ok(ctx
        .with(|c| {
            let nodes = c.nodes();
            let ip_of = |n: &str| nodes.get(n).map(|x| x.ip.clone()).unwrap_or_default();
            let stored = crate::model::ceph::usage::stored_by_pool(c.ceph(), c.storages(), node);
            view::status(c.ceph(), c.ceph().install_of(node), now, &ip_of, &stored)
        })
        .into())
}

/// `GET /nodes/{node}/ceph/crush`.
pub fn crush(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    Ok(json!(view::crush()).into())
}

/// `GET /nodes/{node}/ceph/log`: the cluster log's lines, `total` set.
pub fn log(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    check(ctx, &node, |c, n| c.check_inited(n))?;
    let num = |name: &str| -> Result<Option<usize>> {
        Ok(ctx
            .params
            .int(name, Some(0), None)?
            .and_then(|n| usize::try_from(n).ok()))
    };
    let start = num("start")?.unwrap_or(0);
    let limit = num("limit")?.unwrap_or(50);
    let (total, lines) = ctx.with(|c| view::log(c.ceph(), start, limit));
    let mut reply: Reply = lines.into();
    reply.total = Some(total);
    Ok(reply)
}

/// `GET /nodes/{node}/ceph/rules`.
pub fn rules(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    let rules = ctx.with(|c| c.ceph().crush_rules());
    Ok(serde_json::Value::Array(
        rules
            .into_iter()
            .map(|(_, name)| json!({ "name": name }))
            .collect(),
    )
    .into())
}

/// `GET /nodes/{node}/ceph/cmd-safety`: Ceph's answer to the safety
/// command of the service and action, from the model. On 9.2 `safe` is
/// a boolean and `status` absent when empty; before, PVE answers the
/// raw command result with `safe` as `0`/`1` and `status` always.
pub fn cmd_safety(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    let service = ctx.param("service")?;
    let id = ctx.param("id")?;
    let action = ctx.param("action")?;
    ctx.with(|c| {
        let s = c.ceph().cmd_safety(&service, &id, &action)?;
        let safe = s.code == 0;
        if c.version() == crate::version::PveVersion::V9_2 {
            let mut v = json!({ "safe": safe });
            if !s.status.is_empty() {
                v["status"] = json!(s.status);
            }
            Ok(v.into())
        } else {
            Ok(json!({
                "safe": u8::from(safe),
                "status": s.status,
                "return_code": s.code,
                "status_message": s.status,
            })
            .into())
        }
    })
}

/// `GET /nodes/{node}/ceph/cfg/raw`: `/etc/pve/ceph.conf`.
pub fn cfg_raw(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    check(ctx, &node, |c, n| c.check_inited(n))?;
    let text = ctx.with(|c| c.ceph().conf().map(|c| c.text()).unwrap_or_default());
    Ok(json!(text).into())
}

/// `GET /nodes/{node}/ceph/cfg/db`: `config dump`.
pub fn cfg_db(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    Ok(ctx.with(|c| view::config_dump(c.ceph())).into())
}

/// `GET /nodes/{node}/ceph/cfg/value`: the asked `section:key` pairs,
/// from the config database and then `ceph.conf` (which wins), `_`
/// read as `-`.
pub fn cfg_value(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    check(ctx, &node, |c, n| c.check_inited(n))?;
    let norm = |t: &str| t.replace('_', "-");
    let asked: Vec<(String, String)> =
        crate::spec::formats::split_list(&ctx.params.str("config-keys").unwrap_or_default())
            .iter()
            .filter_map(|p| {
                let (s, k) = p.split_once(':')?;
                Some((norm(s), norm(k)))
            })
            .collect();
    check(ctx, &node, |c, n| c.rados(n))?;
    let wanted = |s: &str, k: &str| asked.iter().any(|(a, b)| a == s && b == k);
    let out = ctx.with(|c| {
        let mut out: Map<String, Value> = Map::new();
        let mut put = |s: &str, k: &str, v: &str| {
            let (s, k) = (norm(s), norm(k));
            if wanted(&s, &k)
                && let Value::Object(m) = out.entry(s).or_insert_with(|| json!({}))
            {
                m.insert(k, json!(v));
            }
        };
        for (s, keys) in c.ceph().db() {
            for (k, v) in keys {
                put(s, k, v);
            }
        }
        if let Some(conf) = c.ceph().conf() {
            for s in conf.names() {
                for (k, v) in conf.section(s).into_iter().flatten() {
                    put(s, k, v);
                }
            }
        }
        out
    });
    Ok(Value::Object(out).into())
}
