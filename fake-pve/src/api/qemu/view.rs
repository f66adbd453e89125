//! The answers of `/nodes/{node}/qemu` as qemu-server's API writes them
//! (`API2/Qemu.pm`): the model's VM data turned into JSON, keys in PVE's
//! order, config values typed by the release's schema.

use serde_json::{Map, Value, json};

use crate::model::qemu::{
    CloudinitItem, ConfigView, FeatureAnswer, PendingRow, PendingView, typed,
};

/// `GET .../config`: the values typed, then `digest`.
pub fn config(v: &ConfigView) -> Value {
    let mut out = Map::new();
    for (k, val) in &v.config {
        out.insert(k.clone(), typed(v.version, k, val));
    }
    out.insert("digest".into(), json!(v.digest));
    Value::Object(out)
}

/// `GET .../pending`: `{key, value?, pending?, delete?}` per row.
pub fn pending(v: &PendingView<'_>) -> Value {
    let version = v.version;
    v.rows
        .iter()
        .map(|row| match row {
            PendingRow::Key {
                key,
                value,
                pending,
                delete,
            } => {
                let mut item = Map::new();
                item.insert("key".into(), json!(key));
                if let Some(val) = value {
                    item.insert("value".into(), typed(version, key, val));
                }
                if let Some(p) = pending {
                    item.insert("pending".into(), typed(version, key, p));
                }
                if let Some(d) = delete {
                    item.insert("delete".into(), json!(d));
                }
                Value::Object(item)
            }
            PendingRow::Digest(d) => json!({ "key": "digest", "value": d }),
        })
        .collect()
}

/// `GET .../cloudinit`: `{key, value?, pending?, delete?}` per option.
pub fn cloudinit_pending(items: &[CloudinitItem<'_>]) -> Value {
    items
        .iter()
        .map(|i| {
            let mut item = Map::new();
            item.insert("key".into(), json!(i.key));
            if let Some(v) = i.value {
                item.insert("value".into(), json!(v));
            }
            if let Some(p) = i.pending {
                item.insert("pending".into(), json!(p));
            }
            if i.delete {
                item.insert("delete".into(), json!(1));
            }
            Value::Object(item)
        })
        .collect()
}

/// `GET .../feature`: `{hasFeature, nodes}`.
pub fn feature(f: &FeatureAnswer) -> Value {
    json!({ "hasFeature": u8::from(f.has), "nodes": f.nodes })
}
