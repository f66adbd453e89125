//! `POST /nodes/{node}/execute` (`Nodes.pm`, root@pam only): a batch of
//! API calls below `/nodes/{node}/`, run in order through the request
//! pipeline as the caller, each answered on its own as PVE's handler
//! answers it: `{status: 200, data}`, or the status, `message` and
//! (refused parameters) `errors` of its failure.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::super::{Ctx, RawData, Reply, pipeline, status_of};
use crate::model::{Error, Result};
use http::Method;

/// One command of the batch, as the schema's format has checked it.
fn command(item: &Value) -> (String, String, BTreeMap<String, Value>) {
    let text = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or_default();
    let args = item
        .get("args")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    (text("method").to_string(), text("path").to_string(), args)
}

/// A command's `data`: the handler's answer as a value.
fn data(reply: Reply) -> Value {
    match reply.raw {
        Some(RawData(bytes)) => bytes
            .get(RawData::OPENING.len()..)
            .and_then(|b| serde_json::from_slice(b).ok())
            .unwrap_or(Value::Null),
        None => reply.data,
    }
}

/// One command of `POST /nodes/{node}/execute` (`Nodes.pm`), run within
/// the caller's request as PVE's handler runs it: the path below
/// `/nodes/{node}/` is routed by the schema (`no handler for ...` when
/// none has it), an argument may not repeat a parameter of the path, then
/// the permission check, validation and the handler, as for a request of
/// its own (the handler runs here, not proxied).
///
/// # Errors
/// What the command's own request would answer.
fn execute_one(
    ctx: &Ctx<'_>,
    node: &str,
    method: &str,
    path: &str,
    args: BTreeMap<String, Value>,
) -> Result<Reply> {
    let full = format!("nodes/{node}/{path}");
    let no_handler = || Error::failed(format!("no handler for '{full}'"));
    let method = Method::from_bytes(method.as_bytes()).map_err(|_| no_handler())?;
    let rel = format!(
        "/{}",
        full.split('/')
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("/")
    );
    let segs = pipeline::path_segments(&rel);
    let spec = crate::spec::spec(ctx.state.settings().version);
    let found = spec.find(method.as_str(), &segs).ok_or_else(no_handler)?;
    if let Some(p) = args
        .keys()
        .find(|k| found.params.iter().any(|(n, _)| n == *k))
    {
        return Err(Error::invalid(p.clone(), "duplicate parameter"));
    }
    call_as_caller(ctx, method, &rel, args)
}

/// A call a handler makes on the caller's behalf (the API calls of a
/// bulk action's worker, an `execute` command): stages 5 to 8 for
/// `method rel` with `args`, as the caller, within the caller's request
/// (its instant; its random draws go on from where the caller's are).
///
/// # Errors
/// What the call's own request would answer.
pub(super) fn call_as_caller(
    ctx: &Ctx<'_>,
    method: Method,
    rel: &str,
    args: BTreeMap<String, Value>,
) -> Result<Reply> {
    static ROUTER: std::sync::LazyLock<crate::api::Router> =
        std::sync::LazyLock::new(crate::api::Router::default);
    let call = pipeline::Call {
        method,
        who: ctx.who.clone(),
        map: args,
        upload: None,
        rq: ctx.rq.borrow().clone(),
    };
    let mut back = None;
    let mut cluster = ctx.cluster.borrow_mut();
    let (_, result) = pipeline::dispatch(ctx.state, &mut cluster, &ROUTER, rel, call, &mut back);
    if let Some(rq) = back {
        *ctx.rq.borrow_mut() = rq;
    }
    result
}

/// `POST /nodes/{node}/execute`.
pub(super) fn execute(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let text = ctx.param("commands")?;
    let commands: Vec<Value> = serde_json::from_str(&text).unwrap_or_default();
    let answers: Vec<Value> = commands
        .iter()
        .map(|item| {
            let (method, path, args) = command(item);
            match execute_one(ctx, &node, &method, &path, args) {
                Ok(reply) => json!({ "status": 200, "data": data(reply) }),
                Err(e) => {
                    let msg = e.message();
                    let mut answer = json!({
                        "status": status_of(&e),
                        "message": if msg.ends_with('\n') { msg.to_string() } else { format!("{msg}\n") },
                    });
                    if let Some(errors) = e.errors() {
                        answer["errors"] = json!(errors);
                    }
                    answer
                }
            }
        })
        .collect();
    Ok(Value::Array(answers).into())
}
