//! Monitors, managers and metadata servers (pve-manager
//! `API2/Ceph/{MON,MGR,MDS}.pm`) as tasks.

use serde_json::json;

use super::{check, inited_and_connected, node_of, view};
use crate::api::{Ctx, Reply, Route, delete, get, post};
use crate::model::ceph::Install;
use crate::model::ceph::daemons::CephOp;
use crate::model::{Result, TaskEffect, Worker};

/// The routes of the monitors, managers and metadata servers.
pub fn routes() -> Vec<Route> {
    vec![
        get("/nodes/{node}/ceph/mon", listmon),
        post("/nodes/{node}/ceph/mon/{monid}", createmon),
        delete("/nodes/{node}/ceph/mon/{monid}", destroymon),
        get("/nodes/{node}/ceph/mgr", listmgr),
        post("/nodes/{node}/ceph/mgr/{id}", createmgr),
        delete("/nodes/{node}/ceph/mgr/{id}", destroymgr),
        get("/nodes/{node}/ceph/mds", listmds),
        post("/nodes/{node}/ceph/mds/{name}", createmds),
        delete("/nodes/{node}/ceph/mds/{name}", destroymds),
    ]
}

/// A Ceph task on `node` (`cephcreatemon`, `mon.<id>`, ...).
fn task(ctx: &Ctx<'_>, node: &str, kind: &str, id: &str, op: CephOp) -> Result<Reply> {
    let worker = Worker::new(kind, id).effect(TaskEffect::Ceph {
        node: node.to_string(),
        op,
    });
    Ok(json!(ctx.start_task(node, worker)?).into())
}

/// The packages of each node, for the version members.
fn installs(ctx: &Ctx<'_>) -> std::collections::BTreeMap<String, Install> {
    ctx.with(|c| {
        c.nodes()
            .members()
            .iter()
            .filter_map(|n| Some((n.name.clone(), c.ceph().install_of(&n.name)?.clone())))
            .collect()
    })
}

/// Each node's address.
fn ips(ctx: &Ctx<'_>) -> std::collections::BTreeMap<String, String> {
    ctx.with(|c| {
        c.nodes()
            .members()
            .iter()
            .map(|n| (n.name.clone(), n.ip.clone()))
            .collect()
    })
}

/// `GET /nodes/{node}/ceph/mon`: without a connection the monitors of
/// `ceph.conf` with `state: unknown`.
fn listmon(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    check(ctx, &node, |c, n| c.check_inited(n))?;
    let inst = installs(ctx);
    Ok(ctx
        .with(|c| {
            let connected = c.ceph().rados(&node).is_ok();
            view::mons(c.ceph(), &node, connected, &|h| inst.get(h).cloned())
        })
        .into())
}

/// `POST /nodes/{node}/ceph/mon/{monid}`.
fn createmon(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    let id = ctx.params.str("monid").unwrap_or_else(|| node.clone());
    let asked: Vec<String> =
        crate::spec::formats::split_list(&ctx.params.str("mon-address").unwrap_or_default())
            .into_iter()
            .map(str::to_string)
            .collect();
    let ip = ctx.with(|c| {
        c.nodes()
            .get(&node)
            .map(|n| n.ip.clone())
            .unwrap_or_default()
    });
    let addr = ctx.with(|c| c.ceph_mut().prepare_create_mon(&node, &ip, &id, &asked))?;
    task(
        ctx,
        &node,
        "cephcreatemon",
        &format!("mon.{id}"),
        CephOp::CreateMon { id, addr },
    )
}

/// `DELETE /nodes/{node}/ceph/mon/{monid}`.
fn destroymon(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    let id = ctx.param("monid")?;
    check(ctx, &node, |c, n| c.prepare_destroy_mon(n, &id))?;
    task(
        ctx,
        &node,
        "cephdestroymon",
        &format!("mon.{id}"),
        CephOp::DestroyMon { id },
    )
}

/// `GET /nodes/{node}/ceph/mgr`.
fn listmgr(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    let (inst, ips) = (installs(ctx), ips(ctx));
    Ok(ctx
        .with(|c| {
            let ceph = c.ceph();
            view::daemons(
                ceph.mgrs(),
                &node,
                ceph.active_mgr(),
                false,
                &|h| ips.get(h).cloned().unwrap_or_default(),
                &|h| inst.get(h).cloned(),
            )
        })
        .into())
}

/// `POST /nodes/{node}/ceph/mgr/{id}`.
fn createmgr(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    let id = ctx.params.str("id").unwrap_or_else(|| node.clone());
    ctx.with(|c| c.ceph_mut().prepare_create_mgr(&node))?;
    task(
        ctx,
        &node,
        "cephcreatemgr",
        &format!("mgr.{id}"),
        CephOp::CreateMgr { id },
    )
}

/// `DELETE /nodes/{node}/ceph/mgr/{id}`.
fn destroymgr(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    let id = ctx.param("id")?;
    check(ctx, &node, |c, n| c.check_inited(n))?;
    task(
        ctx,
        &node,
        "cephdestroymgr",
        &format!("mgr.{id}"),
        CephOp::DestroyMgr { id },
    )
}

/// `GET /nodes/{node}/ceph/mds`.
fn listmds(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    let (inst, ips) = (installs(ctx), ips(ctx));
    Ok(ctx
        .with(|c| {
            let mut list = view::daemons(
                c.ceph().mdss(),
                &node,
                None,
                true,
                &|h| ips.get(h).cloned().unwrap_or_default(),
                &|h| inst.get(h).cloned(),
            );
            let active = c.ceph().active_mds();
            for item in list.as_array_mut().into_iter().flatten() {
                let fs = item["name"].as_str().and_then(|n| active.get(n)).cloned();
                if let Some(fs) = fs {
                    item["state"] = json!("up:active");
                    item["rank"] = json!(0);
                    item["fs_name"] = json!(fs);
                }
            }
            list
        })
        .into())
}

/// `POST /nodes/{node}/ceph/mds/{name}`.
fn createmds(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    let id = ctx.params.str("name").unwrap_or_else(|| node.clone());
    check(ctx, &node, |c, n| c.prepare_create_mds(n, &id))?;
    task(
        ctx,
        &node,
        "cephcreatemds",
        &format!("mds.{id}"),
        CephOp::CreateMds { id },
    )
}

/// `DELETE /nodes/{node}/ceph/mds/{name}`.
fn destroymds(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    let id = ctx.param("name")?;
    check(ctx, &node, |c, n| c.check_inited(n))?;
    task(
        ctx,
        &node,
        "cephdestroymds",
        &format!("mds.{id}"),
        CephOp::DestroyMds { id },
    )
}
