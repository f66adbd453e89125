//! The answers of `/cluster/notifications` as the `pve-rs` bindings
//! shape them: each entry's properties with its `name` and `origin`
//! (`user-created`, `builtin`, `modified-builtin`); the secrets never
//! (a gotify `token`, an smtp `password`), a webhook's `secret`s by name
//! only.

use serde_json::{Value, json};

use crate::model::notify::{Entry, Kind, Notifications};

/// An entry as the list and single GETs show it.
pub fn entry(n: &Notifications, name: &str, e: &Entry) -> Value {
    let mut v = json!({ "name": name });
    for (k, val) in &e.props {
        v[k] = val.clone();
    }
    if e.kind == Kind::Webhook {
        let names = n.secret_names(name);
        if !names.is_empty() {
            v["secret"] = json!(
                names
                    .iter()
                    .map(|s| format!("name={s}"))
                    .collect::<Vec<_>>()
            );
        }
        if e.text("method").is_none() {
            v["method"] = json!("post");
        }
    }
    v["origin"] = json!(n.origin(name).as_str());
    v
}

/// A target as `GET /cluster/notifications/targets` lists it.
pub fn target(n: &Notifications, name: &str, e: &Entry) -> Value {
    let mut v = json!({
        "name": name,
        "origin": n.origin(name).as_str(),
        "type": e.kind.as_str(),
    });
    if let Some(d) = e.props.get("disable") {
        v["disable"] = d.clone();
    }
    if let Some(c) = e.text("comment") {
        v["comment"] = json!(c);
    }
    v
}
