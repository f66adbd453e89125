//! Guests: configs, pending changes, snapshots, firewalls, HA.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::super::convert::{call, field, items, params, text, texts, truthy};
use super::super::{Reader, TwinError};
use super::PARALLEL;
use super::cluster::firewall;

type Guests = (Vec<Value>, Vec<Value>, Vec<Value>);

/// The guests `/cluster/resources` lists, read [`PARALLEL`] at a time.
pub(super) async fn guests(reader: &Arc<Reader>) -> Result<Guests, TwinError> {
    let list = reader.get("/cluster/resources?type=vm").await?;
    let mut rows: Vec<Value> = items(list.as_ref()).to_vec();
    rows.sort_by_key(|r| r["vmid"].as_u64());
    let ha = reader.get("/cluster/ha/resources").await?;
    let (mut vms, mut cts, mut setup) = (Vec::new(), Vec::new(), Vec::new());
    for chunk in rows.chunks(PARALLEL) {
        let mut set = tokio::task::JoinSet::new();
        for (i, row) in chunk.iter().enumerate() {
            let (reader, row) = (Arc::clone(reader), row.clone());
            set.spawn(async move { (i, guest(&reader, &row).await) });
        }
        let mut done: Vec<(usize, Result<_, TwinError>)> = set.join_all().await;
        done.sort_by_key(|(i, _)| *i);
        for (_, r) in done {
            let Some((kind, spec, calls)) = r? else {
                continue;
            };
            setup.extend(calls);
            if kind == "lxc" {
                cts.push(spec);
            } else {
                vms.push(spec);
            }
        }
    }
    for r in items(ha.as_ref()) {
        let p = params(r, &["type", "state-info"]);
        setup.push(call("POST", "/cluster/ha/resources", p));
    }
    Ok((vms, cts, setup))
}

/// One guest: its config, pending changes, snapshots and firewall.
async fn guest(
    reader: &Reader,
    row: &Value,
) -> Result<Option<(String, Value, Vec<Value>)>, TwinError> {
    let (Some(vmid), Some(node)) = (row["vmid"].as_u64(), field(row, "node")) else {
        return Ok(None);
    };
    let kind = field(row, "type").unwrap_or_else(|| "qemu".into());
    let base = format!("/nodes/{node}/{kind}/{vmid}");
    // The config as it is, not with its pending changes applied.
    let Some(config) = reader.get(&format!("{base}/config?current=1")).await? else {
        // Its node does not answer (offline) or the credentials may not
        // read it: what the cluster's list says of it.
        return Ok(Some((
            kind.clone(),
            from_row(vmid, &node, &kind, row),
            Vec::new(),
        )));
    };
    let mut spec = Map::new();
    spec.insert("vmid".into(), json!(vmid));
    spec.insert("node".into(), json!(node));
    let running = matches!(row["status"].as_str(), Some("running" | "paused"));
    spec.insert(
        "status".into(),
        json!(if running { "running" } else { "stopped" }),
    );
    let mut conf = texts(&config, &[]);
    if let Some(p) = reader.get(&format!("{base}/pending")).await? {
        let (mut pending, mut deleted) = (Map::new(), Vec::new());
        for r in items(Some(&p)) {
            let Some(key) = field(r, "key") else { continue };
            if let Some(v) = r.get("pending") {
                pending.insert(key.clone(), json!(text(v)));
            }
            match r["delete"].as_u64() {
                Some(2) => deleted.push(json!(format!("!{key}"))),
                Some(1) => deleted.push(json!(key)),
                _ => {}
            }
        }
        if !pending.is_empty() {
            spec.insert("pending".into(), Value::Object(pending));
        }
        if !deleted.is_empty() {
            spec.insert("pending_delete".into(), Value::Array(deleted));
        }
    }
    if let Some(list) = reader.get(&format!("{base}/snapshot")).await? {
        let mut snaps = Map::new();
        for sn in items(Some(&list)) {
            let Some(name) = field(sn, "name") else {
                continue;
            };
            if name == "current" {
                if let Some(p) = field(sn, "parent") {
                    conf.insert("parent".into(), json!(p));
                }
                continue;
            }
            let mut section = reader
                .get(&format!("{base}/snapshot/{name}/config"))
                .await?
                .map(|c| texts(&c, &[]))
                .unwrap_or_default();
            for k in ["snaptime", "description", "parent", "vmstate"] {
                if let Some(v) = field(sn, k)
                    && !section.contains_key(k)
                    && !(k == "vmstate" && v == "0")
                {
                    section.insert(k.into(), json!(v));
                }
            }
            snaps.insert(name, Value::Object(section));
        }
        if !snaps.is_empty() {
            spec.insert("snapshots".into(), Value::Object(snaps));
        }
    }
    spec.insert("config".into(), Value::Object(conf));
    let mut setup = Vec::new();
    firewall(reader, &format!("{base}/firewall"), true, &mut setup).await?;
    Ok(Some((kind, Value::Object(spec), setup)))
}

/// A guest whose config could not be read, as `/cluster/resources`
/// shows it: its name, tags, template flag, CPUs and memory.
fn from_row(vmid: u64, node: &str, kind: &str, row: &Value) -> Value {
    let mut conf = Map::new();
    if let Some(name) = field(row, "name") {
        let key = if kind == "lxc" { "hostname" } else { "name" };
        conf.insert(key.into(), json!(name));
    }
    if let Some(tags) = field(row, "tags") {
        conf.insert("tags".into(), json!(tags));
    }
    if truthy(row.get("template")) {
        conf.insert("template".into(), json!("1"));
    }
    if let Some(c) = row["maxcpu"].as_u64().filter(|c| *c > 0) {
        conf.insert("cores".into(), json!(c.to_string()));
    }
    if let Some(m) = row["maxmem"].as_u64().filter(|m| *m > 0) {
        conf.insert("memory".into(), json!((m >> 20).to_string()));
    }
    json!({"vmid": vmid, "node": node, "status": "stopped", "config": conf})
}
