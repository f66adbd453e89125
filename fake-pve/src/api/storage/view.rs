//! The storage answers' JSON, built from the model's storages: a
//! `storage.cfg` section as `GET /storage` shows it, a storage's status
//! with the format information `format=1` asks for, its RRD points.

use serde_json::{Map, Value, json};

use crate::model::cluster::Storage;
use crate::model::storage::Storages;
use crate::model::storage::cfg::{
    StoragePoint, StorageRef, StorageStatus, always_shared, plugin_formats,
};
use crate::model::storage::content::ContentItem;
use crate::model::storage::hooks::Written;

/// Keys whose numeric values `GET /storage` answers as numbers.
const NUMERIC: &[&str] = &["sparse", "krbd", "saferemove", "tagged_only"];

/// One entry of `GET /storage` (and `GET /storage/{storage}`): the
/// section's keys, with the config's digest.
pub fn storage_config(storages: &Storages, s: &Storage) -> Value {
    let mut v = json!({
        "storage": s.storage,
        "type": s.kind,
        "content": s.content_text(),
        "digest": storages.digest(),
    });
    for (k, val) in &s.options {
        v[k.as_str()] = match val.parse::<i64>() {
            Ok(n) if NUMERIC.contains(&k.as_str()) => json!(n),
            _ => json!(val),
        };
    }
    if s.shared || always_shared(&s.kind) {
        v["shared"] = json!(1);
    }
    if s.disable {
        v["disable"] = json!(1);
    }
    if let Some(n) = &s.nodes {
        v["nodes"] = json!(n.join(","));
    }
    v
}

/// A storage's status (a row of `GET /nodes/{node}/storage`).
pub fn status(st: &StorageStatus) -> Value {
    to_json(st)
}

/// A typed answer (a volume's information, a URL's metadata) as JSON,
/// its keys in the order the model's type declares them (PVE's).
pub fn to_json<T: serde::Serialize>(answer: &T) -> Value {
    serde_json::to_value(answer).unwrap_or(Value::Null)
}

/// A content listing.
pub fn content(items: &[ContentItem]) -> Value {
    to_json(&items)
}

/// What `GET /nodes/{node}/storage?format=1` adds to a storage's entry:
/// on 8.4 the plugin's `format` (`[{fmt: 1, ...}, default]`) where it
/// declares one; on 9.x also `formats` (`supported`, `default`),
/// raw-only for plugins without formats; and `select_existing` for
/// iSCSI.
pub fn add_format_info(s: &Storage, entry: &mut Value, v9: bool) {
    let declared = plugin_formats(&s.kind, v9);
    let default = s
        .options
        .get("format")
        .filter(|_| v9)
        .cloned()
        .unwrap_or_else(|| "raw".to_string());
    if let Some(valid) = declared.or(v9.then_some(&["raw"][..])) {
        let map: Map<String, Value> = valid.iter().map(|f| ((*f).to_string(), json!(1))).collect();
        entry["format"] = json!([map, default]);
        if v9 {
            entry["formats"] = json!({ "supported": valid, "default": default });
        }
    }
    if matches!(s.kind.as_str(), "iscsi" | "iscsidirect") {
        entry["select_existing"] = json!(1);
    }
}

/// `{storage, type}`, as a create or update answers.
pub fn storage_ref(r: &StorageRef) -> Value {
    json!({ "storage": r.storage, "type": r.kind })
}

/// What `POST /storage` and `PUT /storage/{storage}` answer: the
/// storage, and `config` with the key a `pbs` storage was given or made.
pub fn written(w: &Written) -> Value {
    let mut v = storage_ref(&w.storage);
    if let Some(k) = &w.encryption_key {
        v["config"] = json!({ "encryption-key": k });
    }
    v
}

/// A storage's `rrddata`.
pub fn rrddata(points: &[StoragePoint]) -> Value {
    to_json(&points)
}

/// `GET /nodes/{node}/storage/{storage}/identity`.
pub fn identity(kind: &str, id: &str) -> Value {
    json!({ "type": kind, "id": id })
}

/// `GET .../import-metadata`: `type`, `source`, `create-args`, `disks`,
/// `warnings`, `net` (a NIC as `{ model }`).
pub fn import_metadata(m: &crate::model::storage::import::ImportMetadata) -> Value {
    let net: Map<String, Value> = m
        .net
        .iter()
        .map(|(k, model)| (k.clone(), json!({ "model": model })))
        .collect();
    json!({
        "type": "vm",
        "source": m.source,
        "create-args": m.create_args,
        "disks": to_json(&m.disks),
        "warnings": to_json(&m.warnings),
        "net": net,
    })
}
