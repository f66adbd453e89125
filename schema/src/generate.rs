//! Turns the official API schema (`pve-docs`' `apidata.js`, as JSON) into
//! the compact spec fake-pve embeds: interface facts only, no prose.
//!
//! Run `cargo run -p xtask -- spec` to refresh `schema/spec/*.json` from
//! `../shared/pve-schema/`; a test fails when the committed copy is stale.

use serde_json::{Map, Value, json};

/// Keys of the schema that hold prose or GUI hints, not interface facts.
const PROSE: &[&str] = &[
    "description",
    "verbose_description",
    "title",
    "renderer",
    "print_width",
];

/// The releases whose schema is in `../shared/pve-schema/`.
pub const RELEASES: &[&str] = &["8.4", "9.1", "9.2"];

/// How many instances an indexed property (`net[n]`) has, from PVE's
/// sources (qemu-server, pve-container, pve-cluster, pve-manager).
pub const INDEXED: &[(&str, u32)] = &[
    ("acmedomain", 6),
    ("dev", 256),
    ("hostpci", 16),
    ("ide", 4),
    ("ipconfig", 32),
    ("link", 8),
    ("mp", 256),
    ("net", 32),
    ("numa", 8),
    ("parallel", 3),
    ("sata", 6),
    ("scsi", 31),
    ("serial", 4),
    ("unused", 256),
    ("usb", 14),
    ("virtio", 16),
    ("virtiofs", 10),
];

/// Why the schema could not be turned into a spec.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// The schema is not JSON.
    #[error("schema is not JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The schema holds something the generator does not know.
    #[error("{0}")]
    Unexpected(String),
}

fn strip(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| !PROSE.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), strip(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
        other => other.clone(),
    }
}

/// Builds the compact spec of one release from the raw schema text.
///
/// # Errors
/// When the text is not the schema, or holds an indexed property whose
/// count is unknown.
pub fn generate(raw: &str, release: &str) -> Result<String, GenerateError> {
    let tree: Value = serde_json::from_str(raw)?;
    let roots = tree.as_array().ok_or_else(|| {
        GenerateError::Unexpected("the schema's top level is not an array".into())
    })?;
    let mut endpoints = Vec::new();
    let mut stack: Vec<&Value> = roots.iter().collect();
    while let Some(node) = stack.pop() {
        let path = node["path"]
            .as_str()
            .ok_or_else(|| GenerateError::Unexpected("a node without path".into()))?;
        let children: Vec<Value> = node["children"]
            .as_array()
            .map(|c| {
                c.iter()
                    .filter_map(|ch| ch["path"].as_str())
                    .filter_map(|p| p.rsplit('/').next())
                    .filter(|s| !s.starts_with('{'))
                    .map(|s| json!(s))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(info) = node["info"].as_object() {
            for (method, m) in info {
                endpoints.push(endpoint(path, method, m, &children)?);
            }
        }
        if let Some(c) = node["children"].as_array() {
            stack.extend(c.iter());
        }
    }
    endpoints.sort_by(|a, b| {
        (a["path"].as_str(), a["method"].as_str()).cmp(&(b["path"].as_str(), b["method"].as_str()))
    });
    let mut out = format!("{{\"release\":{},\"endpoints\":[\n", json!(release));
    for (i, e) in endpoints.iter().enumerate() {
        out.push_str(&e.to_string());
        out.push_str(if i + 1 < endpoints.len() { ",\n" } else { "\n" });
    }
    out.push_str("]}\n");
    Ok(out)
}

fn endpoint(
    path: &str,
    method: &str,
    m: &Value,
    children: &[Value],
) -> Result<Value, GenerateError> {
    let mut e = Map::new();
    e.insert("path".into(), json!(path));
    e.insert("method".into(), json!(method));
    e.insert("name".into(), m["name"].clone());
    e.insert(
        "allowtoken".into(),
        json!(m["allowtoken"].as_i64().unwrap_or(1) != 0),
    );
    e.insert(
        "protected".into(),
        json!(m["protected"].as_i64().unwrap_or(0) != 0),
    );
    if let Some(p) = m["proxyto"].as_str() {
        e.insert("proxyto".into(), json!(p));
    }
    e.insert("permissions".into(), strip(&m["permissions"]));
    let params = &m["parameters"];
    let mut props = Map::new();
    if let Some(p) = params["properties"].as_object() {
        for (name, prop) in p {
            let mut prop = strip(prop);
            if let Some(base) = name.strip_suffix("[n]") {
                let count = INDEXED
                    .iter()
                    .find(|(k, _)| *k == base)
                    .map(|(_, n)| *n)
                    .ok_or_else(|| {
                        GenerateError::Unexpected(format!(
                            "{method} {path}: unknown indexed property '{name}'"
                        ))
                    })?;
                prop["max_index"] = json!(count);
            }
            props.insert(name.clone(), prop);
        }
    }
    let mut parameters = Map::new();
    parameters.insert("properties".into(), Value::Object(props));
    if let Some(a) = params.get("additionalProperties") {
        parameters.insert("additionalProperties".into(), strip(a));
    }
    // 9.2's HA rules state their parameters as groups that must all
    // hold, one of them a `oneOf` picked by a type property.
    if let Some(groups) = params.get("allOf") {
        parameters.insert("allOf".into(), strip(groups));
    }
    e.insert("parameters".into(), Value::Object(parameters));
    e.insert("returns".into(), strip(&m["returns"]));
    if !children.is_empty() && method == "GET" {
        e.insert("children".into(), json!(children));
    }
    Ok(Value::Object(e))
}
