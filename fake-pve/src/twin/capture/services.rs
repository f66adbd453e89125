//! Metric servers, notification endpoints and matchers, ACME accounts
//! and plugins, as calls. Secrets are not in the answers: a Gotify
//! endpoint (whose token a create needs) gets a new one, and an ACME
//! plugin's data is read only with `Sys.Modify`.

use serde_json::{Value, json};

use super::super::convert::{call, field, items, params};
use super::super::{Reader, TwinError};

/// The notification endpoint kinds, in the order the twin makes them.
const ENDPOINTS: &[&str] = &["sendmail", "gotify", "smtp", "webhook"];

/// The calls (see the module).
pub(super) async fn services(reader: &Reader, setup: &mut Vec<Value>) -> Result<(), TwinError> {
    for s in items(reader.get("/cluster/metrics/server").await?.as_ref()) {
        let Some(id) = field(s, "id") else { continue };
        let path = format!("/cluster/metrics/server/{id}");
        let p = reader
            .get(&path)
            .await?
            .map_or_else(|| params(s, &["id"]), |full| params(&full, &["id"]));
        setup.push(call("POST", &path, p));
    }
    for kind in ENDPOINTS {
        let list = format!("/cluster/notifications/endpoints/{kind}");
        for e in items(reader.get(&list).await?.as_ref()) {
            let Some(name) = field(e, "name") else {
                continue;
            };
            let mut p = params(e, &["origin", "type"]);
            match field(e, "origin").as_deref() {
                Some("builtin") => {}
                Some("modified-builtin") => {
                    p.remove("name");
                    setup.push(call("PUT", &format!("{list}/{name}"), p));
                }
                _ => {
                    if *kind == "gotify" {
                        p.insert("token".into(), json!(uuid::Uuid::new_v4().to_string()));
                    }
                    setup.push(call("POST", &list, p));
                }
            }
        }
    }
    let matchers = "/cluster/notifications/matchers";
    for m in items(reader.get(matchers).await?.as_ref()) {
        let Some(name) = field(m, "name") else {
            continue;
        };
        let mut p = params(m, &["origin"]);
        match field(m, "origin").as_deref() {
            Some("builtin") => {}
            Some("modified-builtin") => {
                p.remove("name");
                setup.push(call("PUT", &format!("{matchers}/{name}"), p));
            }
            _ => setup.push(call("POST", matchers, p)),
        }
    }
    reader.get("/cluster/notifications/targets").await?;
    for a in items(reader.get("/cluster/acme/account").await?.as_ref()) {
        let Some(name) = field(a, "name") else {
            continue;
        };
        let Some(acc) = reader.get(&format!("/cluster/acme/account/{name}")).await? else {
            continue;
        };
        let mut p = std::collections::BTreeMap::new();
        p.insert("name".to_string(), json!(name));
        let contact: Vec<String> = items(acc["account"].get("contact"))
            .iter()
            .filter_map(Value::as_str)
            .map(|c| c.trim_start_matches("mailto:").to_string())
            .collect();
        if !contact.is_empty() {
            p.insert("contact".into(), json!(contact.join(",")));
        }
        if let Some(d) = field(&acc, "directory") {
            p.insert("directory".into(), json!(d));
        }
        if let Some(t) = field(&acc, "tos") {
            p.insert("tos_url".into(), json!(t));
        }
        setup.push(call("POST", "/cluster/acme/account", p));
    }
    for pl in items(reader.get("/cluster/acme/plugins").await?.as_ref()) {
        if field(pl, "plugin").as_deref() == Some("standalone") {
            continue;
        }
        let mut p = params(pl, &["plugin"]);
        if let Some(id) = field(pl, "plugin") {
            p.insert("id".into(), json!(id));
        }
        setup.push(call("POST", "/cluster/acme/plugins", p));
    }
    Ok(())
}
