//! `/nodes/{node}/tasks`: listing, status, log and stop (pve-manager
//! `API2/Tasks.pm`).

use serde_json::{Value, json};

use super::{Ctx, Reply, Route, delete, get};
use crate::model::tasks::TaskFilter;
use crate::model::{AuthId, Error, Result, Task};

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/nodes/{node}/tasks", node_tasks),
        get("/nodes/{node}/tasks/{upid}", upid_index),
        get("/nodes/{node}/tasks/{upid}/status", read_task_status),
        get("/nodes/{node}/tasks/{upid}/log", read_task_log),
        delete("/nodes/{node}/tasks/{upid}", stop_task),
    ]
}

/// Whether `who` started `task` (a user owns the tasks of its tokens).
fn owns(who: &AuthId, task: &Task) -> bool {
    let owner = &task.upid.user;
    match who {
        AuthId::User(u) => owner == u || owner.split_once('!').is_some_and(|(o, _)| o == u),
        AuthId::Token { .. } => *owner == who.to_string(),
    }
}

/// `GET /nodes/{node}/tasks`.
fn node_tasks(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = &ctx.params;
    let node = ctx.with(|c| c.nodes().reach(&ctx.param("node")?).map(|n| n.name.clone()))?;
    // The schema has validated every parameter (formats, ranges, enums).
    let statusfilter = p.str("statusfilter").map(|l| {
        crate::spec::formats::split_list(&l)
            .into_iter()
            .map(str::to_string)
            .collect()
    });
    let vmid = p
        .int("vmid", None, None)?
        .and_then(|n| u32::try_from(n).ok());
    let filter = TaskFilter {
        start: usize::try_from(p.int("start", Some(0), None)?.unwrap_or(0)).unwrap_or(0),
        limit: usize::try_from(p.int("limit", Some(0), None)?.unwrap_or(50)).unwrap_or(50),
        userfilter: p.str("userfilter"),
        typefilter: p.str("typefilter"),
        vmid,
        errors: p.bool("errors")?.unwrap_or(false),
        source: p
            .enumeration("source", &["archive", "active", "all"])?
            .unwrap_or_else(|| "archive".into()),
        since: p.int("since", None, None)?,
        until: p.int("until", None, None)?,
        statusfilter,
    };
    let who = ctx.who()?;
    let (items, total) = ctx.with(|c| {
        let audit = c
            .access()
            .has_priv(who, &format!("/nodes/{node}"), "Sys.Audit");
        let (items, total) = c.tasks().list(&node, &filter, |t| audit || owns(who, t));
        let items: Vec<Value> = items.iter().map(|i| json!(i)).collect();
        (items, total)
    });
    Ok(Reply {
        raw: None,
        data: Value::Array(items),
        total: Some(total as u64),
        attribs: Default::default(),
        deferred: None,
        download: None,
    })
}

/// `GET /nodes/{node}/tasks/{upid}`.
fn upid_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let upid = ctx.param("upid")?;
    ctx.with(|c| c.tasks().get(&upid).map(|_| ()))?;
    Ok(json!([{ "name": "log" }, { "name": "status" }]).into())
}

/// Runs `f` on the task the call names, after the owner-or-privilege
/// check PVE makes.
fn with_task<R>(ctx: &Ctx<'_>, privilege: &str, f: impl FnOnce(&Task) -> R) -> Result<R> {
    let upid = ctx.param("upid")?;
    let node = ctx.param("node")?;
    let who = ctx.who()?;
    ctx.with(|c| {
        let node = c.nodes().reach(&node)?.name.clone();
        let task = c.tasks().get(&upid)?;
        if task.upid.node != node {
            return Err(Error::invalid("upid", "no such task"));
        }
        if !owns(who, task) {
            c.access()
                .check_perm(who, &format!("/nodes/{node}"), &[privilege])?;
        }
        Ok(f(task))
    })
}

/// `GET /nodes/{node}/tasks/{upid}/status`.
fn read_task_status(ctx: &Ctx<'_>) -> Result<Reply> {
    Ok(with_task(ctx, "Sys.Audit", |t| json!(t.status()))?.into())
}

/// `GET /nodes/{node}/tasks/{upid}/log`: `[{n, t}]` with `total`.
fn read_task_log(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = &ctx.params;
    let start = usize::try_from(p.int("start", Some(0), None)?.unwrap_or(0)).unwrap_or(0);
    let limit = usize::try_from(p.int("limit", Some(0), None)?.unwrap_or(50)).unwrap_or(50);
    if p.bool("download")?.unwrap_or(false) {
        return Err(Error::failed(
            "downloading task logs is not emulated; read them with start and limit",
        ));
    }
    let log = with_task(ctx, "Sys.Audit", |t| t.log.clone())?;
    if log.is_empty() {
        return Ok(Reply {
            raw: None,
            data: json!([{ "n": 1, "t": "no content" }]),
            total: Some(1),
            attribs: Default::default(),
            deferred: None,
            download: None,
        });
    }
    let take = if limit == 0 { usize::MAX } else { limit };
    let items: Vec<Value> = log
        .iter()
        .enumerate()
        .skip(start)
        .take(take)
        .map(|(i, t)| json!({ "n": i + 1, "t": t }))
        .collect();
    Ok(Reply {
        raw: None,
        data: Value::Array(items),
        total: Some(log.len() as u64),
        attribs: Default::default(),
        deferred: None,
        download: None,
    })
}

/// `DELETE /nodes/{node}/tasks/{upid}`: interrupts a running task;
/// answers `null` for a stopped one too.
fn stop_task(ctx: &Ctx<'_>) -> Result<Reply> {
    let upid = ctx.param("upid")?;
    with_task(ctx, "Sys.Modify", |_| ())?;
    let now = ctx.now();
    ctx.with(|c| c.stop_task(&upid, now))?;
    Ok(Value::Null.into())
}
