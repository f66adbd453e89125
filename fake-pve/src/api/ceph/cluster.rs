//! `/cluster/ceph` (pve-manager `API2/Cluster/Ceph.pm`): the status and
//! metadata asked on the local node, the OSD flags, the health mutes.

use serde_json::{Map, Value, json};

use super::{check, inited_and_connected, local};
use crate::api::{Ctx, Reply};
use crate::model::ceph::daemons::CephOp;
use crate::model::ceph::health::mon_addrvec;
use crate::model::ceph::restart::BulkRestart;
use crate::model::ceph::{Mute, OSD_FLAGS};
use crate::model::{Result, TaskEffect, Worker};

/// `GET /cluster/ceph/status`.
pub fn status(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = local(ctx);
    super::node::cluster_status(ctx, &node)
}

/// `GET /cluster/ceph/metadata`: each installed node's version (all a
/// `scope=versions` call wants, and allowed without Ceph), then the
/// monitors, managers and metadata servers by `<id>@<host>`, and the
/// OSDs.
pub fn metadata(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = local(ctx);
    let scope = ctx.params.str("scope").unwrap_or_else(|| "all".into());
    let mut res = Map::new();
    let nodes = ctx.with(|c| {
        let mut out = Map::new();
        for n in c.nodes().members() {
            if let Some(i) = c.ceph().install_of(&n.name) {
                let parts: Vec<Value> = i
                    .version
                    .split('.')
                    .map(|p| json!(p.parse::<u64>().unwrap_or_default().to_string()))
                    .collect();
                let commit = i
                    .version_line()
                    .split(['(', ')'])
                    .nth(1)
                    .unwrap_or_default()
                    .to_string();
                out.insert(
                    n.name.clone(),
                    json!({
                        "version": { "str": i.version, "parts": parts },
                        "buildcommit": commit,
                    }),
                );
            }
        }
        out
    });
    res.insert("node".into(), Value::Object(nodes));
    if scope == "versions" {
        return Ok(Value::Object(res).into());
    }
    inited_and_connected(ctx, &node)?;
    ctx.with(|c| {
        let ceph = c.ceph();
        let ip_of = |n: &str| c.nodes().get(n).map(|x| x.ip.clone()).unwrap_or_default();
        let entry = |id: &str, host: &str, addr: String| {
            let mut v = json!({
                "name": id,
                "hostname": host,
                "addr": addr,
                "mem_total_kb": 65_843_496,
                "mem_swap_kb": 8_388_604,
                "service": true,
                "direxists": true,
            });
            if let (Some(i), Some(o)) = (ceph.install_of(host), v.as_object_mut()) {
                o.insert("ceph_release".into(), json!(i.release.codename()));
                o.insert("ceph_version".into(), json!(i.version_line()));
                o.insert("ceph_version_short".into(), json!(i.version));
            }
            v
        };
        let mut mon = Map::new();
        for m in ceph.mons() {
            let a = mon_addrvec(&m.addr);
            mon.insert(format!("{}@{}", m.id, m.host), entry(&m.id, &m.host, a));
        }
        let mut mgr = Map::new();
        for m in ceph.mgrs() {
            let a = format!("{}:0/0", ip_of(&m.host));
            mgr.insert(format!("{}@{}", m.id, m.host), entry(&m.id, &m.host, a));
        }
        let mut mds = Map::new();
        for m in ceph.mdss() {
            let a = mon_addrvec(&ip_of(&m.host));
            mds.insert(format!("{}@{}", m.id, m.host), entry(&m.id, &m.host, a));
        }
        res.insert("mon".into(), Value::Object(mon));
        res.insert("mgr".into(), Value::Object(mgr));
        res.insert("mds".into(), Value::Object(mds));
        // `osd metadata`: a list on every release (no OSDs yet).
        res.insert("osd".into(), json!([]));
    });
    Ok(Value::Object(res).into())
}

/// `check_ceph_configured` on the local node.
fn configured(ctx: &Ctx<'_>) -> Result<String> {
    let node = local(ctx);
    check(ctx, &node, |c, n| c.check_configured(n))?;
    Ok(node)
}

/// `GET /cluster/ceph/flags`: every flag PVE offers and whether it is
/// set.
pub fn get_all_flags(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = configured(ctx)?;
    check(ctx, &node, |c, n| c.rados(n))?;
    Ok(ctx
        .with(|c| {
            OSD_FLAGS
                .iter()
                .map(|f| json!({ "name": f, "value": i32::from(c.ceph().flag(f)) }))
                .collect::<Vec<_>>()
        })
        .into_iter()
        .collect::<Value>()
        .into())
}

/// `PUT /cluster/ceph/flags`: a `cephsetflags` task setting and unsetting
/// the flags given.
pub fn set_flags(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = configured(ctx)?;
    let mut flags = Vec::new();
    for f in OSD_FLAGS {
        if let Some(v) = ctx.params.bool(f)? {
            flags.push(((*f).to_string(), v));
        }
    }
    let worker = Worker::new("cephsetflags", "").effect(TaskEffect::Ceph {
        node: node.clone(),
        op: CephOp::SetFlags { flags },
    });
    Ok(json!(ctx.start_task(&node, worker)?).into())
}

/// `GET /cluster/ceph/flags/{flag}`.
pub fn get_flag(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = configured(ctx)?;
    let flag = ctx.param("flag")?;
    check(ctx, &node, |c, n| c.rados(n))?;
    Ok(json!(i32::from(ctx.with(|c| c.ceph().flag(&flag)))).into())
}

/// `PUT /cluster/ceph/flags/{flag}`: at once, no task.
pub fn update_flag(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = configured(ctx)?;
    let flag = ctx.param("flag")?;
    let value = ctx.params.bool("value")?.unwrap_or(false);
    check(ctx, &node, |c, n| c.rados(n))?;
    ctx.with(|c| c.ceph_mut().set_flag(&flag, value));
    Ok(Value::Null.into())
}

/// `GET /cluster/ceph/health-mute` (9.2): the muted checks.
pub fn list_health_mutes(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = configured(ctx)?;
    check(ctx, &node, |c, n| c.rados(n))?;
    Ok(ctx.with(|c| {
        let health = c.ceph().health(c.ceph().osds().len() as u32);
        c.ceph()
            .mutes()
            .iter()
            .map(|(code, m)| {
                let mut v = json!({ "code": code, "sticky": i32::from(m.sticky) });
                if let Some(o) = v.as_object_mut() {
                    if let Some(t) = &m.ttl {
                        o.insert("ttl".into(), json!(t));
                    }
                    if let Some(ch) = health.checks.get(code) {
                        o.insert("summary".into(), json!(ch.summary));
                    }
                }
                v
            })
            .collect::<Value>()
            .into()
    }))
}

/// `PUT /cluster/ceph/health-mute/{code}` (9.2): `value` mutes or
/// unmutes (`ceph health mute|unmute`).
pub fn update_health_mute(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = configured(ctx)?;
    let code = ctx.param("code")?;
    let value = ctx.params.bool("value")?.unwrap_or(false);
    let mute = value.then(|| -> Result<Mute> {
        Ok(Mute {
            sticky: ctx.params.bool("sticky")?.unwrap_or(false),
            ttl: ctx.params.str("ttl"),
        })
    });
    let mute = mute.transpose()?;
    check(ctx, &node, |c, n| c.rados(n))?;
    ctx.with(|c| c.ceph_mut().mute(&code, mute));
    Ok(Value::Null.into())
}

/// `POST /cluster/ceph/restart-bulk` (9.2): `only-outdated` only for
/// OSDs, initialised; then the task `srvrestart` of `cluster-<type>`,
/// the rolling restart of the type's daemons across the cluster.
pub fn restart_bulk(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = local(ctx);
    let kind = ctx.param("service-type")?;
    let flag = |name: &str| -> Result<bool> { Ok(ctx.params.bool(name)?.unwrap_or(false)) };
    let only_outdated = flag("only-outdated")?;
    if only_outdated && kind != "osd" {
        return Err(crate::model::Error::invalid(
            "only-outdated",
            "only supported with service-type=osd",
        ));
    }
    check(ctx, &node, |c, n| c.check_inited(n))?;
    let opts = BulkRestart {
        set_noout: true,
        timeout: ctx
            .params
            .int("timeout", Some(30), Some(1800))?
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(600),
        dry_run: flag("dry-run")?,
        force: flag("force")?,
        only_outdated,
        resume: false,
    };
    let worker = Worker::new("srvrestart", &format!("cluster-{kind}")).effect(TaskEffect::Ceph {
        node: node.clone(),
        op: CephOp::RestartCluster { kind, opts },
    });
    Ok(json!(ctx.start_task(&node, worker)?).into())
}
