//! The answers both guest kinds give the same way, built from the
//! model's typed guest data (pve-guest-common's shapes as qemu-server's
//! and pve-container's APIs return them).

use serde_json::{Value, json};

use crate::model::guest::rrd::GuestPoint;
use crate::model::guest::snapshot::SnapshotList;

/// `GET .../rrddata`: the points, each with what its step holds.
pub fn rrddata(points: &[GuestPoint]) -> Value {
    serde_json::to_value(points).unwrap_or_default()
}

/// `GET .../snapshot`: `{name, snaptime, vmstate?, description,
/// parent?, snapstate?}` per snapshot, then `current`.
pub fn snapshot_list(list: &SnapshotList<'_>) -> Value {
    let mut out: Vec<Value> = list
        .snapshots
        .iter()
        .map(|s| {
            let mut item = json!({"name": s.name, "snaptime": s.snaptime});
            if let Some(vmstate) = s.vmstate {
                item["vmstate"] = json!(u8::from(vmstate));
            }
            item["description"] = json!(s.description);
            if let Some(p) = s.parent {
                item["parent"] = json!(p);
            }
            if let Some(st) = s.snapstate {
                item["snapstate"] = json!(st);
            }
            item
        })
        .collect();
    let mut current = json!({
        "name": "current",
        "digest": list.current.digest,
        "running": u8::from(list.current.running),
        "description": "You are here!",
    });
    if let Some(p) = list.current.parent {
        current["parent"] = json!(p);
    }
    out.push(current);
    Value::Array(out)
}
