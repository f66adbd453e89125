//! `POST /nodes/{node}/execute` (`Nodes.pm`, root@pam only): a batch of
//! API calls below `/nodes/{node}/`, run in order through the request
//! pipeline as the caller, each answered on its own as PVE's handler
//! answers it: `{status: 200, data}`, or the status, `message` and
//! (refused parameters) `errors` of its failure.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::super::{Ctx, RawData, Reply, status_of};
use crate::model::Result;

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

/// `POST /nodes/{node}/execute`.
pub(super) fn execute(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let text = ctx.param("commands")?;
    let commands: Vec<Value> = serde_json::from_str(&text).unwrap_or_default();
    let answers: Vec<Value> = commands
        .iter()
        .map(|item| {
            let (method, path, args) = command(item);
            match crate::api::pipeline::execute_one(ctx, &node, &method, &path, args) {
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
