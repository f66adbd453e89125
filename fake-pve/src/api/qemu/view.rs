//! The answers of `/nodes/{node}/qemu` as qemu-server's API writes them
//! (`API2/Qemu.pm`): the model's VM data turned into JSON, keys in PVE's
//! order, config values typed by the release's schema.

use serde_json::{Map, Value, json};

use std::collections::BTreeMap;

use crate::model::PveVersion;
use crate::model::node_hw::catalog::AvailableFlag;
use crate::model::qemu::cpu_models::{CpuModel, Setting};
use crate::model::qemu::{
    CloudinitItem, ConfigView, FeatureAnswer, MigratePrecondition, PendingRow, PendingView,
    config_prop,
};

/// A config value as GET config types it: integers and booleans as
/// numbers, everything else as a string.
pub fn typed(version: PveVersion, key: &str, value: &str) -> Value {
    let kind = config_prop(version, key).and_then(|p| p.kind.as_deref());
    match kind {
        Some("integer" | "boolean") => value
            .parse::<i64>()
            .map_or_else(|_| json!(value), |n| json!(n)),
        _ => json!(value),
    }
}

/// `GET .../migrate`: whether it runs, where it may go and why not,
/// its local disks and local resources.
pub fn migrate_precondition(p: &MigratePrecondition) -> Value {
    let not_allowed: Map<String, Value> = p
        .not_allowed_nodes
        .iter()
        .map(|n| {
            let mut why = json!({});
            if let Some(list) = &n.unavailable_storages {
                why["unavailable_storages"] = json!(list);
            }
            if !n.unavailable_resources.is_empty() {
                why["unavailable-resources"] = json!(n.unavailable_resources);
            }
            (n.node.clone(), why)
        })
        .collect();
    let local_disks: Vec<Value> = p
        .local_disks
        .iter()
        .map(|d| {
            let u = &d.usage;
            let mut v = json!({
                "volid": d.volid,
                "cdrom": u8::from(u.cdrom),
                "is_cloudinit": u8::from(u.cloudinit),
                "replicate": 1,
                "shared": 0,
                "is_unused": u8::from(u.unused),
                "is_attached": u8::from(u.attached),
                "is_vmstate": 0,
                "is_tpmstate": u8::from(u.drivename.as_deref() == Some("tpmstate0")),
            });
            if let Some(size) = u.size {
                v["size"] = json!(size);
            }
            if let Some(name) = &u.drivename {
                v["drivename"] = json!(name);
            }
            if u.pending {
                v["referenced_in_pending"] = json!(1);
            }
            if !u.snapshots.is_empty() {
                let snaps: Map<String, Value> =
                    u.snapshots.iter().map(|s| (s.clone(), json!(1))).collect();
                v["referenced_in_snapshot"] = Value::Object(snaps);
            }
            v
        })
        .collect();
    let mut res = json!({
        "running": u8::from(p.running),
        "allowed_nodes": p.allowed_nodes,
        "not_allowed_nodes": not_allowed,
        "local_disks": local_disks,
        "local_resources": p.local_resources,
        "mapped-resources": p.mapped.iter().map(|m| m.key.as_str()).collect::<Vec<_>>(),
        "mapped-resource-info": p
            .mapped
            .iter()
            .map(|m| {
                let mut info = json!({ "name": m.name });
                if m.live_migration {
                    info["live-migration"] = json!(1);
                }
                (m.key.clone(), info)
            })
            .collect::<Map<String, Value>>(),
    });
    if p.dbus_vmstate {
        res["has-dbus-vmstate"] = json!(1);
    }
    res
}

/// `GET .../snapshot/{snapname}/config`: the section's values typed
/// (`snaptime` a number), the cloud-init password hidden.
pub fn snapshot_config(version: PveVersion, conf: &BTreeMap<String, String>) -> Map<String, Value> {
    let mut out = Map::new();
    for (k, v) in conf {
        let v = if k == "cipassword" { "**********" } else { v };
        let value = match (k.as_str(), v.parse::<i64>()) {
            ("snaptime", Ok(n)) => json!(n),
            _ => typed(version, k, v),
        };
        out.insert(k.clone(), value);
    }
    out
}

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

/// A setting as the answers type it.
pub fn cpu_setting(v: Setting) -> Value {
    match v {
        Setting::Text(t) => Value::String(t),
        Setting::Number(n) => Value::from(n),
        Setting::Flag(b) => Value::from(u8::from(b)),
    }
}

/// A custom CPU model of `GET /cluster/qemu/custom-cpu-models`: the section as read (every set property, with
/// `cputype`), and the file's digest.
pub fn custom_cpu_model(name: &str, m: &CpuModel, digest: &str) -> Value {
    let mut out = Map::new();
    out.insert("cputype".into(), Value::String(format!("custom-{name}")));
    for (k, v) in m.settings() {
        out.insert(k.into(), cpu_setting(v));
    }
    out.insert("digest".into(), Value::String(digest.to_string()));
    Value::Object(out)
}

/// A flag of the cluster's or a node's (9.2) `cpu-flags`.
pub fn cpu_flag(f: &AvailableFlag) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), Value::String(f.name.to_string()));
    if let Some(d) = f.description {
        out.insert("description".into(), Value::String(d.to_string()));
    }
    out.insert("supported-on".into(), json!(f.supported_on));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[rstest]
    fn a_snapshots_config_hides_the_cloudinit_password_and_types_its_values() {
        let conf: BTreeMap<String, String> = [
            ("cipassword", "secret"),
            ("cores", "2"),
            ("name", "web"),
            ("snaptime", "1700000000"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect();
        assert_eq!(
            Value::Object(snapshot_config(PveVersion::V9_1, &conf)),
            json!({"cipassword": "**********", "cores": 2, "name": "web", "snaptime": 1_700_000_000}),
        );
    }
}
