//! Storage replication: `/cluster/replication` (pve-manager
//! `API2/ReplicationConfig.pm`) and `/nodes/{node}/replication`
//! (`API2/Replication.pm`). 8.4 guards the writes with
//! `Datastore.Allocate` on `/storage` in the schema; 9.x checks
//! `VM.Replicate` on the guest in the handler.

use serde_json::{Value, json};

use super::params::value_text;
use super::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::replication::{JobUpdate, parse_job_id};
use crate::model::{Error, Result};
use crate::spec::formats::split_list;

pub mod view;

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/cluster/replication", index),
        post("/cluster/replication", create),
        get("/cluster/replication/{id}", read),
        put("/cluster/replication/{id}", update),
        delete("/cluster/replication/{id}", delete_job),
        get("/nodes/{node}/replication", status),
        get("/nodes/{node}/replication/{id}", job_index),
        get("/nodes/{node}/replication/{id}/status", job_status),
        get("/nodes/{node}/replication/{id}/log", read_job_log),
        post("/nodes/{node}/replication/{id}/schedule_now", schedule_now),
    ]
}

/// 9.x: `VM.Replicate` on the job's guest.
fn check_replicate(ctx: &Ctx<'_>, id: &str) -> Result<()> {
    if !ctx.state.settings().version.is_v9() {
        return Ok(());
    }
    let (guest, _) = parse_job_id(id)?;
    let who = ctx.who()?;
    ctx.with(|c| {
        c.access()
            .check_perm(who, &format!("/vms/{guest}"), &["VM.Replicate"])
    })
}

fn job_update(ctx: &Ctx<'_>) -> Result<JobUpdate> {
    let p = &ctx.params;
    let rate = match p.get("rate") {
        None => None,
        Some(v) => {
            let t = value_text(v);
            Some(t.parse::<f64>().map_err(|_| {
                Error::invalid("rate", format!("type check ('number') failed - got '{t}'"))
            })?)
        }
    };
    Ok(JobUpdate {
        target: p.str("target"),
        schedule: p.str("schedule"),
        rate,
        comment: p.str("comment"),
        disable: p.bool("disable")?,
        remove_job: p.str("remove_job"),
        source: p.str("source"),
        delete: p
            .str("delete")
            .map(|d| split_list(&d).into_iter().map(str::to_string).collect())
            .unwrap_or_default(),
        digest: p.str("digest"),
    })
}

/// `GET /cluster/replication`: the jobs of the guests the caller may
/// audit.
fn index(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let rows = ctx.with(|c| {
        c.replication()
            .jobs()
            .iter()
            .filter(|(_, j)| {
                c.access()
                    .has_priv(who, &format!("/vms/{}", j.guest()), "VM.Audit")
            })
            .map(|(id, j)| view::job(id, j))
            .collect::<Vec<_>>()
    });
    Ok(Value::Array(rows).into())
}

/// `GET /cluster/replication/{id}`.
fn read(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    let who = ctx.who()?;
    Ok(ctx
        .with(|c| {
            let (job, digest) = c.replication().read(&id)?;
            c.access()
                .check_perm(who, &format!("/vms/{}", job.guest()), &["VM.Audit"])?;
            Ok::<_, Error>(view::read(&id, job, &digest))
        })?
        .into())
}

/// `POST /cluster/replication`.
fn create(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    check_replicate(ctx, &id)?;
    let up = job_update(ctx)?;
    let now = ctx.now();
    ctx.with(|c| c.replication_ops().create_replication_job(&id, &up, now))?;
    Ok(Value::Null.into())
}

/// `PUT /cluster/replication/{id}`.
fn update(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    check_replicate(ctx, &id)?;
    let up = job_update(ctx)?;
    ctx.with(|c| c.replication_ops().update_replication_job(&id, &up))?;
    Ok(Value::Null.into())
}

/// `DELETE /cluster/replication/{id}`: marks the job for removal (or,
/// with `force`, removes its entry at once).
fn delete_job(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    check_replicate(ctx, &id)?;
    let keep = ctx.params.bool("keep")?.unwrap_or(false);
    let force = ctx.params.bool("force")?.unwrap_or(false);
    ctx.with(|c| c.replication_ops().delete_replication_job(&id, keep, force))?;
    Ok(Value::Null.into())
}

/// The node a node-level call names, reached as PVE's proxy reaches it.
fn node_of(ctx: &Ctx<'_>) -> Result<String> {
    let node = ctx.param("node")?;
    ctx.with(|c| c.nodes().reach(&node).map(|n| n.name.clone()))
}

/// `GET /nodes/{node}/replication`.
fn status(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    let guest = ctx
        .params
        .int("guest", None, None)?
        .and_then(|n| u32::try_from(n).ok());
    let who = ctx.who()?;
    let rows = ctx.with(|c| {
        c.replication_reader()
            .replication_status(&node, guest, |g| {
                c.access().has_priv(who, &format!("/vms/{g}"), "VM.Audit")
            })
            .iter()
            .map(view::status_line)
            .collect::<Vec<_>>()
    });
    Ok(Value::Array(rows).into())
}

/// `GET /nodes/{node}/replication/{id}`.
fn job_index(ctx: &Ctx<'_>) -> Result<Reply> {
    node_of(ctx)?;
    Ok(json!([{ "name": "schedule_now" }, { "name": "log" }, { "name": "status" }]).into())
}

/// `GET /nodes/{node}/replication/{id}/status`.
fn job_status(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    let id = ctx.param("id")?;
    let who = ctx.who()?;
    Ok(ctx
        .with(|c| {
            let line = c.replication_reader().replication_job_status(&node, &id)?;
            c.access()
                .check_perm(who, &format!("/vms/{}", line.job.guest()), &["VM.Audit"])?;
            Ok::<_, Error>(view::status_line(&line))
        })?
        .into())
}

/// `GET /nodes/{node}/replication/{id}/log`: `VM.Audit` on the guest or
/// `Sys.Audit` on the node.
fn read_job_log(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    let id = ctx.param("id")?;
    let p = &ctx.params;
    let start = usize::try_from(p.int("start", Some(0), None)?.unwrap_or(0)).unwrap_or(0);
    let limit = usize::try_from(p.int("limit", Some(0), None)?.unwrap_or(50)).unwrap_or(50);
    let who = ctx.who()?;
    let (items, total) = ctx.with(|c| {
        let guest = c
            .replication()
            .job(&id)
            .map(crate::model::replication::Job::guest)
            .ok_or_else(|| Error::not_found(format!("no such replication job '{id}'")))?;
        let a = c.access();
        if !(a.has_priv(who, &format!("/vms/{guest}"), "VM.Audit")
            || a.has_priv(who, &format!("/nodes/{node}"), "Sys.Audit"))
        {
            return Err(Error::Forbidden("Permission check failed".into()));
        }
        let (lines, total) = c
            .replication_reader()
            .replication_log(&node, &id, start, limit)?;
        Ok((view::log(&lines), total))
    })?;
    Ok(Reply {
        raw: None,
        data: Value::Array(items),
        total: Some(total as u64),
        attribs: Default::default(),
        deferred: None,
        download: None,
    })
}

/// `POST /nodes/{node}/replication/{id}/schedule_now`.
fn schedule_now(ctx: &Ctx<'_>) -> Result<Reply> {
    node_of(ctx)?;
    let id = ctx.param("id")?;
    check_replicate(ctx, &id)?;
    ctx.with(|c| c.replication_ops().replication_schedule_now(&id))?;
    Ok(Value::Null.into())
}
