//! An OpenAPI 3 document of one release, generated from the spec, for
//! generic tools (schema-based fuzzers, client generators). Served at
//! `/_fake/openapi.json`.
//!
//! Booleans are described as the integers `0`/`1` that PVE accepts in
//! forms; indexed properties (`net[n]`) are spelled out (`net0` ...).
//!
//! Each operation's answer is declared as `{"data": <returns>}`, the
//! endpoint's `returns` schema as [`super::returns::json_schema`] writes
//! it: as loosely typed as PVE's answers are, so that a fuzzer checking
//! answers against it reports wrong shapes, not Perl's numbers as text.

use serde_json::{Map, Value, json};

use super::{Endpoint, Format, Prop, Spec};

fn schema_of(p: &Prop) -> Value {
    let mut s = Map::new();
    match p.kind.as_deref() {
        Some("boolean") => {
            s.insert("type".into(), json!("integer"));
            s.insert("enum".into(), json!([0, 1]));
        }
        Some("integer") => {
            s.insert("type".into(), json!("integer"));
        }
        Some("number") => {
            s.insert("type".into(), json!("number"));
        }
        Some("array") => {
            s.insert("type".into(), json!("array"));
            s.insert(
                "items".into(),
                p.items.as_deref().map_or(json!({}), schema_of),
            );
        }
        Some("object") => {
            s.insert("type".into(), json!("object"));
        }
        _ => {
            s.insert("type".into(), json!("string"));
        }
    }
    if let Some(e) = &p.enumeration {
        s.insert("enum".into(), json!(e));
    }
    if let Some(m) = p.minimum {
        s.insert("minimum".into(), json!(m));
    }
    if let Some(m) = p.maximum {
        s.insert("maximum".into(), json!(m));
    }
    if let Some(m) = p.max_length {
        s.insert("maxLength".into(), json!(m));
    }
    if let Some(m) = p.min_length {
        s.insert("minLength".into(), json!(m));
    }
    if let Some(pat) = &p.pattern {
        s.insert(
            "pattern".into(),
            json!(format!("^(?:{})$", super::perl_to_rust(pat))),
        );
    }
    if let Some(d) = &p.default {
        s.insert("default".into(), d.clone());
    }
    match &p.format {
        Some(Format::Named(f)) => {
            s.insert("format".into(), json!(f));
        }
        Some(Format::Object(_)) => {
            s.insert("format".into(), json!("pve-property-string"));
        }
        None => {}
    }
    if let Some(t) = &p.typetext {
        s.insert("description".into(), json!(t));
    }
    Value::Object(s)
}

/// Every concrete parameter name of an endpoint with its schema.
fn params(e: &Endpoint) -> Vec<(String, &Prop)> {
    let mut out = Vec::new();
    for (name, p) in &e.parameters.properties {
        match name.strip_suffix("[n]") {
            Some(base) => {
                out.extend((0..p.max_index.unwrap_or(0)).map(|i| (format!("{base}{i}"), p)))
            }
            None => out.push((name.clone(), p)),
        }
    }
    out
}

/// The OpenAPI document of a release.
pub fn document(spec: &Spec, version: &str) -> Value {
    let mut paths = Map::new();
    for e in &spec.endpoints {
        let path_params: Vec<&str> = e
            .path
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .collect();
        let mut parameters = Vec::new();
        let mut body = Map::new();
        let mut required = Vec::new();
        for (name, p) in params(e) {
            if path_params.contains(&name.as_str()) {
                parameters.push(
                    json!({"name": name, "in": "path", "required": true, "schema": schema_of(p)}),
                );
            } else if e.method == "GET" || e.method == "DELETE" {
                parameters.push(json!({"name": name, "in": "query", "required": !p.optional, "schema": schema_of(p)}));
            } else {
                if !p.optional {
                    required.push(json!(name));
                }
                body.insert(name, schema_of(p));
            }
        }
        let mut op = json!({
            "operationId": format!("{}_{}", e.name, e.method.to_lowercase()),
            "parameters": parameters,
            "responses": {
                "200": {
                    "description": "success",
                    "content": {"application/json": {"schema": {
                        "type": "object",
                        "properties": {"data": super::returns::json_schema(&e.returns)},
                        "required": ["data"]
                    }}}
                },
                "400": {"description": "Parameter verification failed."},
                "401": {"description": "authentication failure"},
                "403": {"description": "Permission check failed"}
            },
            "security": [{"ticket": []}, {"token": []}],
            "x-pve-permissions": e.permissions,
            "x-pve-allowtoken": e.allowtoken,
        });
        if !body.is_empty() {
            let schema = json!({"type": "object", "properties": body, "required": required});
            op["requestBody"] = json!({
                "content": {
                    "application/x-www-form-urlencoded": {"schema": schema},
                    "application/json": {"schema": schema}
                }
            });
        }
        let item = paths.entry(e.path.clone()).or_insert_with(|| json!({}));
        item[e.method.to_lowercase()] = op;
    }
    json!({
        "openapi": "3.0.3",
        "info": {"title": "Proxmox VE API (fake-pve)", "version": version},
        "servers": [{"url": "/api2/json"}],
        "paths": paths,
        "components": {"securitySchemes": {
            "ticket": {"type": "apiKey", "in": "cookie", "name": "PVEAuthCookie"},
            "token": {"type": "apiKey", "in": "header", "name": "Authorization"}
        }}
    })
}
