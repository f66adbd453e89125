//! The answers of `/cluster/backup`, `/cluster/backup-info`,
//! `/cluster/jobs/schedule-analyze` and the
//! prune dry run as pve-manager's `API2/Backup.pm`, `API2/BackupInfo.pm`
//! and pve-storage's `API2/Storage/PruneBackups.pm` write them: the
//! model's backup data turned into JSON, keys in PVE's order.

use serde_json::{Map, Value, json};

use crate::model::backup::dump::NotBackedUp;
use crate::model::backup::jobs::{IncludedGuest, IncludedVolume, Job, JobRow};
use crate::model::backup::prune::PruneEntry;

/// `GET /cluster/backup/{id}`: the options by name, then `id` and
/// `type`.
pub fn job(id: &str, job: &Job) -> Value {
    let mut v: Map<String, Value> = job
        .options()
        .iter()
        .map(|(k, o)| (k.clone(), json!(o)))
        .collect();
    v.insert("id".into(), json!(id));
    v.insert("type".into(), json!("vzdump"));
    Value::Object(v)
}

/// `GET /cluster/backup`: every job with its `next-run`.
pub fn jobs(rows: &[JobRow<'_>]) -> Value {
    rows.iter()
        .map(|r| {
            let mut v = job(r.id, r.job);
            if let Some(next) = r.next_run {
                v["next-run"] = json!(next);
            }
            v
        })
        .collect()
}

fn included_volume(vmid: u32, v: &IncludedVolume) -> Value {
    json!({
        "id": format!("{vmid}:{}", v.key),
        "name": v.file,
        "included": u8::from(v.included),
        "reason": if v.included { "enabled" } else { "disabled" },
        "leaf": 1,
    })
}

/// `GET /cluster/backup/{id}/included_volumes`.
pub fn included_volumes(guests: &[IncludedGuest]) -> Value {
    let children: Vec<Value> = guests
        .iter()
        .map(|g| match g {
            IncludedGuest::Unknown(vmid) => json!({ "id": vmid, "type": "unknown", "leaf": 1 }),
            IncludedGuest::Qemu {
                vmid,
                name,
                volumes,
            } => {
                let vols: Vec<Value> = volumes.iter().map(|v| included_volume(*vmid, v)).collect();
                json!({
                    "id": vmid,
                    "type": "qemu",
                    "name": name,
                    "children": vols,
                    "leaf": u8::from(volumes.is_empty()),
                })
            }
        })
        .collect();
    json!({ "children": children })
}

/// A backup of `GET .../prunebackups`.
pub fn prune_entry(e: &PruneEntry) -> Value {
    let mut v = json!({
        "volid": e.volid,
        "ctime": e.ctime,
        "mark": e.mark,
        "type": e.kind,
    });
    if let Some(id) = e.vmid {
        v["vmid"] = json!(id);
    }
    v
}

/// A guest of `GET /cluster/backup-info/not-backed-up`.
pub fn not_backed_up(g: &NotBackedUp<'_>) -> Value {
    let mut e = json!({ "vmid": g.vmid, "type": g.kind });
    if let Some(name) = g.name {
        e["name"] = json!(name);
    }
    e
}

/// A run of `GET /cluster/jobs/schedule-analyze`: the time and Perl's
/// `scalar(gmtime)` of it.
pub fn schedule_run(timestamp: i64) -> Value {
    json!({ "timestamp": timestamp, "utc": crate::clock::ctime(timestamp) })
}

/// The entries of `GET .../file-restore/list`: `filepath` base64, and
/// `leaf` as PVE turns it into 0 or 1.
pub fn file_restore_entries(entries: &[crate::model::pbs::files::Entry]) -> Value {
    use base64::Engine;
    let rows: Vec<Value> = entries
        .iter()
        .map(|e| {
            let mut v = json!({
                "filepath": base64::engine::general_purpose::STANDARD.encode(e.path.as_bytes()),
                "text": e.text,
                "type": e.kind.to_string(),
                "leaf": u8::from(e.leaf),
            });
            if let Some(s) = e.size {
                v["size"] = json!(s);
            }
            if let Some(m) = e.mtime {
                v["mtime"] = json!(m);
            }
            v
        })
        .collect();
    Value::Array(rows)
}
