//! The answers' shapes of the ACME area.

use serde_json::{Map, Value, json};

use crate::model::acme::{Account, plugins::Plugin};

/// `GET /cluster/acme/plugins/{id}` and the index's items: the options
/// with the plugin's id as `plugin` and the file's digest; `disable` and
/// `validation-delay` as numbers.
pub fn plugin(id: &str, p: &Plugin, digest: &str) -> Value {
    let mut out = Map::new();
    for (k, v) in p {
        let value = match k.as_str() {
            "disable" => json!(u8::from(matches!(v.as_str(), "1" | "true" | "on" | "yes"))),
            "validation-delay" => v.parse::<u64>().map_or_else(|_| json!(v), |n| json!(n)),
            _ => json!(v),
        };
        out.insert(k.clone(), value);
    }
    out.insert("plugin".into(), json!(id));
    out.insert("digest".into(), json!(digest));
    Value::Object(out)
}

/// `GET /cluster/acme/account/{name}`.
pub fn account(a: &Account) -> Value {
    let mut out = json!({
        "account": a.account,
        "directory": a.directory,
        "location": a.location,
    });
    if let Some(tos) = &a.tos {
        out["tos"] = json!(tos);
    }
    out
}

/// `GET /cluster/acme/directories`.
pub fn directories() -> Value {
    Value::Array(
        crate::model::acme::directory::known()
            .iter()
            .map(|(name, url)| json!({ "name": name, "url": url }))
            .collect(),
    )
}

/// One item of `GET /cluster/acme/challenge-schema`.
pub fn challenge(id: &str, schema: Value) -> Value {
    let name = schema
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or(id)
        .to_string();
    json!({ "id": id, "name": name, "type": "dns", "schema": schema })
}
