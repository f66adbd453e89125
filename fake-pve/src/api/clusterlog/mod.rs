//! `/cluster/tasks` and `/cluster/log` (pve-manager `API2/Cluster.pm`):
//! every node's recent tasks and the cluster log.

use serde_json::Value;

use super::{Ctx, Reply, Route, get};
use crate::model::{AuthId, Result, clusterlog};

pub mod view;

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![get("/cluster/tasks", tasks), get("/cluster/log", log)]
}

/// `GET /cluster/tasks`: all of them with `Sys.Audit` on `/`, else the
/// caller's own (a token's tasks carry the token's user, so a token
/// without it sees none).
fn tasks(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let me = who.to_string();
    let rows = ctx.with(|c| {
        let all = c.access().has_priv(who, "/", "Sys.Audit");
        clusterlog::recent_tasks(&c.nodes, &c.tasks)
            .into_iter()
            .map(view::task)
            .filter(|t| all || t["user"].as_str() == Some(me.as_str()))
            .collect::<Vec<_>>()
    });
    Ok(Value::Array(rows).into())
}

/// `GET /cluster/log`: everything with `Sys.Syslog` on `/`, else the
/// entries about the caller.
fn log(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let max = ctx
        .params
        .int("max", Some(1), None)?
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(0);
    let rows = ctx.with(|c| {
        let admin = c.access().has_priv(who, "/", "Sys.Syslog");
        let me = match who {
            AuthId::User(u) => u.clone(),
            AuthId::Token { .. } => who.to_string(),
        };
        clusterlog::lines(
            &c.clusterlog,
            &c.tasks,
            (!admin).then_some(me.as_str()),
            max,
        )
        .iter()
        .map(view::line)
        .collect::<Vec<_>>()
    });
    Ok(Value::Array(rows).into())
}
