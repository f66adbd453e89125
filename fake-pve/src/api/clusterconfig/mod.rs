//! `/cluster/config`: the corosync configuration (pve-cluster
//! `API2/ClusterConfig.pm`). Reading it, creating a cluster on a
//! standalone node, putting a member into the node list and taking one
//! out of it are emulated, and so is joining the cluster of another
//! fake-pve (or PVE) over HTTPS: the `clusterjoin` task is held open
//! here and carried out by the join worker (`crate::join`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{Ctx, Reply, Route, delete, get, post};
use crate::model::corosync::{self, AddNode, CreateCluster, JOIN_API_VERSION, Link};
use crate::model::join::{self, JoinJob, JoinParams};
use crate::model::tasks::Worker;
use crate::model::{Error, Result};

pub mod view;

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        post("/cluster/config", create),
        get("/cluster/config/nodes", nodes),
        delete("/cluster/config/nodes/{node}", delnode),
        post("/cluster/config/nodes/{node}", addnode),
        get("/cluster/config/totem", totem),
        get("/cluster/config/join", join_info),
        post("/cluster/config/join", join),
        get("/cluster/config/qdevice", status),
        get("/cluster/config/apiversion", join_api_version),
    ]
}

/// `GET /cluster/config/apiversion`.
fn join_api_version(_: &Ctx<'_>) -> Result<Reply> {
    Ok(json!(JOIN_API_VERSION).into())
}

/// `GET /cluster/config/nodes`.
fn nodes(ctx: &Ctx<'_>) -> Result<Reply> {
    Ok(ctx
        .with(|c| view::nodes(&corosync::members(&c.nodes, &c.corosync)))
        .into())
}

/// `DELETE /cluster/config/nodes/{node}` (root@pam only, as the schema
/// has no permissions): the member leaves the node list; PVE logs it in
/// the cluster log.
fn delnode(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.param("node")?;
    let now = ctx.now();
    ctx.with(|c| {
        let name = corosync::delnode(&mut c.nodes, &mut c.corosync, &node)?;
        let local = c.nodes().local().to_string();
        c.clusterlog
            .membership(&local, format!("deleting node {name} from cluster"), now);
        Ok::<_, Error>(())
    })?;
    Ok(Value::Null.into())
}

/// `POST /cluster/config/nodes/{node}` (root@pam only, as the schema
/// has no permissions): the node enters the node list; answers the new
/// `corosync.conf`, the cluster's auth key and `verify_conf`'s warnings.
fn addnode(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = &ctx.params;
    let req = AddNode {
        node: ctx.param("node")?,
        nodeid: nodeid(ctx)?,
        votes: votes(ctx)?,
        links: links(ctx)?,
        new_node_ip: p.str("new_node_ip"),
        force: p.bool("force")?.unwrap_or(false),
        apiversion: p.int("apiversion", None, None)?,
    };
    let now = ctx.now();
    let answer = ctx.with(|c| {
        let warnings = corosync::addnode(&mut c.nodes, &mut c.corosync, &req, now)?;
        let local = c.nodes().local().to_string();
        c.clusterlog
            .membership(&local, format!("adding node {} to cluster", req.node), now);
        let conf = corosync::corosync_text(&c.nodes, &c.corosync, &c.version);
        Ok::<_, Error>(view::added(&conf, &corosync::authkey(&c.nodes), &warnings))
    })?;
    Ok(answer.into())
}

/// `GET /cluster/config/totem`: `null` on a standalone node.
fn totem(ctx: &Ctx<'_>) -> Result<Reply> {
    Ok(ctx
        .with(|c| corosync::totem(&c.nodes, &c.corosync, &c.version).map(|t| view::totem(&t)))
        .unwrap_or(Value::Null)
        .into())
}

/// `GET /cluster/config/join`.
fn join_info(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.params.str("node");
    let mut info = ctx.with(|c| {
        corosync::join_info(&c.nodes, &c.corosync, &c.version, node.as_deref())
            .map(|j| view::join_info(&j))
    })?;
    // each member's own certificate's fingerprint (read outside the model)
    for m in info["nodelist"].as_array_mut().into_iter().flatten() {
        let (Some(name), Some(fp)) = (m["name"].as_str(), m["pve_fp"].as_str()) else {
            continue;
        };
        m["pve_fp"] = json!(super::node_hw::member_fingerprint(ctx, name, fp));
    }
    Ok(info.into())
}

/// `POST /cluster/config/join` (root@pam only, as the schema has no
/// permissions): a `clusterjoin` task, held open while the join worker
/// talks to the cluster (`crate::join`), which logs what it does and
/// ends it. A replayed call (its password sealed in the journal) starts
/// no worker: the journal holds how the join ended.
fn join(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = &ctx.params;
    let params = JoinParams {
        hostname: ctx.param("hostname")?,
        fingerprint: ctx.param("fingerprint")?,
        nodeid: nodeid(ctx)?,
        votes: votes(ctx)?,
        force: p.bool("force")?,
        links: links(ctx)?,
    };
    let password = ctx.param("password")?;
    let replayed = ctx.rq().is_sealed("password");
    let who = ctx.who()?.to_string();
    let now_ms = ctx.now_ms();
    let (upid, job) = ctx.with(|c| {
        let node = c.nodes().local().to_string();
        let local_ip = c
            .nodes()
            .get(&node)
            .map(|n| n.ip.clone())
            .unwrap_or_default();
        // Held until the worker ends it.
        let upid = c.start_task(&node, Worker::new(join::TASK, ""), &who, now_ms, u64::MAX);
        // A fault rule's error ends it at once.
        let injected = c
            .tasks
            .get(&upid)
            .ok()
            .and_then(|t| t.worker.as_ref())
            .and_then(|w| w.outcome.clone().err());
        if let Some(f) = injected {
            let w = Worker::new(join::TASK, "").fail(f.0);
            let _ = c.replan_task(&upid, now_ms, w, now_ms);
            return (upid, None);
        }
        let job = JoinJob {
            upid: upid.clone(),
            node,
            local_ip,
            params,
            password,
        };
        (upid, Some(job))
    });
    if let Some(job) = job.filter(|_| !replayed) {
        ctx.state.queue_join(job);
    }
    Ok(json!(upid).into())
}

/// `GET /cluster/config/qdevice`: no QDevice runs here, so `{}` (PVE's
/// answer without the qdevice socket).
fn status(_: &Ctx<'_>) -> Result<Reply> {
    Ok(json!({}).into())
}

/// `nodeid` (1 or more), as addnode and join take it.
fn nodeid(ctx: &Ctx<'_>) -> Result<Option<u32>> {
    Ok(ctx
        .params
        .int("nodeid", Some(1), None)?
        .and_then(|n| u32::try_from(n).ok()))
}

/// `votes` (0 or more), as addnode and join take it.
fn votes(ctx: &Ctx<'_>) -> Result<Option<u64>> {
    Ok(ctx
        .params
        .int("votes", Some(0), None)?
        .and_then(|n| u64::try_from(n).ok()))
}

/// The `linkN` parameters.
fn links(ctx: &Ctx<'_>) -> Result<BTreeMap<u32, Link>> {
    let mut out = BTreeMap::new();
    for name in ctx.params.names() {
        let Some(n) = name
            .strip_prefix("link")
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let text = ctx.params.str(name).unwrap_or_default();
        let mut address = None;
        let mut priority = None;
        for part in text.split(',') {
            match part.split_once('=') {
                Some(("address", a)) => address = Some(a.to_string()),
                Some(("priority", p)) => priority = p.parse::<u64>().ok(),
                None => address = Some(part.to_string()),
                _ => {}
            }
        }
        let address = address
            .ok_or_else(|| Error::invalid(name, "property is missing and it is not optional"))?;
        out.insert(n, Link { address, priority });
    }
    Ok(out)
}

/// `POST /cluster/config` (root@pam only, as the schema has no
/// permissions): refused on a cluster member, else a `clustercreate`
/// task; the cluster exists once the call answers.
fn create(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = &ctx.params;
    let clustername = ctx.param("clustername")?;
    let req = CreateCluster {
        clustername: clustername.clone(),
        nodeid: p
            .int("nodeid", Some(1), None)?
            .and_then(|n| u32::try_from(n).ok()),
        votes: p
            .int("votes", Some(1), None)?
            .and_then(|n| u64::try_from(n).ok()),
        links: links(ctx)?,
        token_coefficient: p
            .int("token-coefficient", Some(0), None)?
            .and_then(|n| u64::try_from(n).ok()),
    };
    let who = ctx.who()?.to_string();
    let now_ms = ctx.now_ms();
    let ms = ctx.task_ms("clustercreate");
    let upid = ctx.with(|c| {
        corosync::create(&mut c.nodes, &mut c.corosync, &c.version, &req)?;
        let node = c.nodes().local().to_string();
        let worker = Worker::new("clustercreate", &clustername)
            .log("Corosync Cluster Engine Authentication key generator.")
            .log("Gathering 2048 bits for key from /dev/urandom.")
            .log("Writing corosync key to /etc/corosync/authkey.")
            .log("Writing corosync config to /etc/pve/corosync.conf")
            .log("Restart corosync and cluster filesystem");
        Ok::<_, Error>(c.start_task(&node, worker, &who, now_ms, ms))
    })?;
    Ok(json!(upid).into())
}
