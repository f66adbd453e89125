//! Monitors, managers and metadata servers (pve-manager
//! `API2/Ceph/{MON,MGR,MDS}.pm`) as tasks; and the checks of the OSD,
//! pool and CephFS calls (`OSD.pm`, `Pool.pm`, `FS.pm`) before their 501.

use serde_json::json;

use super::{check, inited_and_connected, node_of, not_emulated, view};
use crate::api::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::ceph::daemons::CephOp;
use crate::model::ceph::{Binary, Install};
use crate::model::{Error, Result, TaskEffect, Worker};

/// The routes of the daemons, OSDs, pools and CephFS.
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
        get("/nodes/{node}/ceph/osd", osd_index).checks_only(),
        post("/nodes/{node}/ceph/osd", createosd).checks_only(),
        delete("/nodes/{node}/ceph/osd/{osdid}", destroyosd).checks_only(),
        post("/nodes/{node}/ceph/osd/{osdid}/in", osd_in).checks_only(),
        post("/nodes/{node}/ceph/osd/{osdid}/out", osd_out).checks_only(),
        post("/nodes/{node}/ceph/osd/{osdid}/scrub", osd_scrub).checks_only(),
        get("/nodes/{node}/ceph/osd/{osdid}/metadata", osddetails).checks_only(),
        get("/nodes/{node}/ceph/osd/{osdid}/lv-info", osdvolume).checks_only(),
        get("/nodes/{node}/ceph/pool", lspools).checks_only(),
        post("/nodes/{node}/ceph/pool", createpool).checks_only(),
        delete("/nodes/{node}/ceph/pool/{name}", destroypool).checks_only(),
        put("/nodes/{node}/ceph/pool/{name}", setpool).checks_only(),
        get("/nodes/{node}/ceph/pool/{name}/status", getpool).checks_only(),
        get("/nodes/{node}/ceph/fs", fs_index).checks_only(),
        post("/nodes/{node}/ceph/fs/{name}", createfs).checks_only(),
        delete("/nodes/{node}/ceph/fs/{name}", destroyfs).checks_only(),
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
            view::daemons(
                c.ceph().mdss(),
                &node,
                None,
                true,
                &|h| ips.get(h).cloned().unwrap_or_default(),
                &|h| inst.get(h).cloned(),
            )
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

/// The 501 of a call under `/nodes/{node}/ceph`.
fn later(ctx: &Ctx<'_>, method: &str, rest: &str) -> Result<Reply> {
    let node = node_of(ctx)?;
    Err(not_emulated(method, &format!("/nodes/{node}/ceph/{rest}")))
}

/// `GET /nodes/{node}/ceph/osd`.
fn osd_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    later(ctx, "GET", "osd")
}

/// `POST /nodes/{node}/ceph/osd`: initialised, the OSD binary and
/// `ceph-volume`.
fn createosd(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    check(ctx, &node, |c, n| {
        c.check_inited(n)?;
        c.check_installed(n, Binary::Osd)?;
        c.check_installed(n, Binary::Volume)
    })?;
    later(ctx, "POST", "osd")
}

/// An OSD that the cluster does not have (`$get_osd_status`): there
/// are none yet.
fn no_such_osd(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    let id = ctx.param("osdid")?;
    Err(Error::not_found(format!("no such OSD '{id}'")))
}

/// `DELETE /nodes/{node}/ceph/osd/{osdid}`.
fn destroyosd(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    let id = ctx.param("osdid")?;
    Err(Error::failed(format!(
        "OSD osd.{id} does not belong to node {node}!"
    )))
}

/// `POST /nodes/{node}/ceph/osd/{osdid}/in`.
fn osd_in(ctx: &Ctx<'_>) -> Result<Reply> {
    no_such_osd(ctx)
}

/// `POST /nodes/{node}/ceph/osd/{osdid}/out`.
fn osd_out(ctx: &Ctx<'_>) -> Result<Reply> {
    no_such_osd(ctx)
}

/// `POST /nodes/{node}/ceph/osd/{osdid}/scrub`.
fn osd_scrub(ctx: &Ctx<'_>) -> Result<Reply> {
    no_such_osd(ctx)
}

/// `GET /nodes/{node}/ceph/osd/{osdid}/metadata`.
fn osddetails(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    let id = ctx.param("osdid")?;
    Err(Error::failed(format!(
        "OSD '{id}' does not exists on host '{node}'"
    )))
}

/// `GET /nodes/{node}/ceph/osd/{osdid}/lv-info`.
fn osdvolume(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    check(ctx, &node, |c, n| c.check_inited(n))?;
    let id = ctx.param("osdid")?;
    Err(Error::failed(format!(
        "OSD '{id}' not found in 'ceph-volume lvm list' on node '{node}'.\n\
         Maybe it was created before LVM became the default?"
    )))
}

/// `GET /nodes/{node}/ceph/pool`.
fn lspools(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    later(ctx, "GET", "pool")
}

/// `POST /nodes/{node}/ceph/pool`.
fn createpool(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    check(ctx, &node, |c, n| c.check_configured(n))?;
    check(ctx, &node, |c, n| c.rados(n))?;
    later(ctx, "POST", "pool")
}

/// `DELETE /nodes/{node}/ceph/pool/{name}`.
fn destroypool(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    check(ctx, &node, |c, n| c.check_inited(n))?;
    let name = ctx.param("name")?;
    later(ctx, "DELETE", &format!("pool/{name}"))
}

/// `PUT /nodes/{node}/ceph/pool/{name}`.
fn setpool(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    check(ctx, &node, |c, n| c.check_configured(n))?;
    let name = ctx.param("name")?;
    later(ctx, "PUT", &format!("pool/{name}"))
}

/// `GET /nodes/{node}/ceph/pool/{name}/status`.
fn getpool(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    let name = ctx.param("name")?;
    later(ctx, "GET", &format!("pool/{name}/status"))
}

/// `GET /nodes/{node}/ceph/fs`.
fn fs_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    later(ctx, "GET", "fs")
}

/// `POST /nodes/{node}/ceph/fs/{name}`.
fn createfs(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    check(ctx, &node, |c, n| c.check_configured(n))?;
    check(ctx, &node, |c, n| c.rados(n))?;
    let name = ctx.param("name")?;
    later(ctx, "POST", &format!("fs/{name}"))
}

/// `DELETE /nodes/{node}/ceph/fs/{name}` (9.2): initialised, a
/// connection, then the file system (there is none yet).
fn destroyfs(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    let name = ctx.param("name")?;
    Err(Error::not_found(format!("no such cephfs '{name}'")))
}
