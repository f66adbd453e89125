//! The answers of a node's own settings and services as pve-manager's
//! `API2/Nodes.pm`, `API2/NodeConfig.pm`, `API2/Services.pm` and
//! `API2/Subscription.pm` write them: the model's node files, units,
//! subscription, journal and series turned into JSON, keys in PVE's order.

use serde_json::{Map, Value, json};

use crate::model::PveVersion;
use crate::model::node_services::apt_repos::{AptRepo, AptSources};
use crate::model::node_services::services::Unit;
use crate::model::node_services::stats::NodePoint;
use crate::model::node_services::subscription::{self, URL};
use crate::model::node_services::{LogLine, NetRow, NodeSys, ServiceState, Subscription};

/// `GET /nodes/{node}/config`: the options with `digest`, or only
/// `property` (`{}` when the file was never written or has no such key).
pub fn config(sys: &NodeSys, property: Option<&str>) -> Value {
    let Some(conf) = sys.config() else {
        return json!({});
    };
    let mut all = json!(conf.options());
    all["digest"] = json!(conf.digest());
    match property {
        Some(p) => all.get(p).map_or_else(|| json!({}), |v| json!({ p: v })),
        None => all,
    }
}

/// `GET /nodes/{node}/dns`: `search` and up to three name servers.
pub fn dns(sys: &NodeSys) -> Value {
    let mut v = Map::new();
    if let Some(s) = sys.search() {
        v.insert("search".into(), s.into());
    }
    for (i, ns) in sys.nameservers().iter().enumerate() {
        v.insert(format!("dns{}", i + 1), ns.clone().into());
    }
    v.into()
}

/// `GET /nodes/{node}/hosts`: the file and its SHA-1.
pub fn hosts(sys: &NodeSys) -> Value {
    json!({
        "data": sys.hosts(),
        "digest": sys.hosts_digest(),
    })
}

/// `GET /nodes/{node}/time` at `now`.
pub fn time(sys: &NodeSys, now: i64) -> Value {
    json!({
        "timezone": sys.timezone(),
        "time": now,
        "localtime": sys.localtime(now),
    })
}

/// A unit of `GET /nodes/{node}/services` (and its `state`).
pub fn service(unit: &Unit, state: ServiceState) -> Value {
    let (sub, active) = unit.sub_and_active(state);
    json!({
        "service": unit.name,
        "name": unit.name,
        "desc": unit.desc,
        "state": sub,
        "unit-state": unit.unit_state,
        "active-state": active,
    })
}

/// `GET /nodes/{node}/subscription` of `node` (with `sockets` sockets):
/// without Sys.Audit only the status, its message and the shop's URL.
pub fn subscription(sub: Option<&Subscription>, node: &str, sockets: u32, audit: bool) -> Value {
    let Some(sub) = sub else {
        let mut v = json!({
            "status": "notfound",
            "message": "There is no subscription key",
            "url": URL,
        });
        if audit {
            v["serverid"] = json!(subscription::server_id(node));
        }
        return v;
    };
    let sub = sub.checked(sockets);
    if !audit {
        let mut v = json!({ "status": sub.status(), "url": URL });
        if let Some(m) = sub.message() {
            v["message"] = json!(m);
        }
        return v;
    }
    let mut v = json!({
        "status": sub.status(),
        "key": sub.key(),
        "checktime": sub.checktime(),
        "serverid": subscription::server_id(node),
        "sockets": sockets,
        "url": URL,
    });
    if let Some(level) = sub.level() {
        v["level"] = json!(level);
    }
    for (k, val) in [
        ("regdate", sub.regdate()),
        ("nextduedate", sub.nextduedate()),
        ("productname", sub.productname()),
        ("message", sub.message()),
    ] {
        if let Some(val) = val {
            v[k] = json!(val);
        }
    }
    v
}

/// The `{n, t}` lines of `GET /nodes/{node}/syslog`.
pub fn syslog(lines: Vec<(u64, String)>) -> Value {
    lines
        .into_iter()
        .map(|(n, t)| json!({ "n": n, "t": t }))
        .collect()
}

/// 9.2's `GET /nodes/{node}/journal?structured=1`: one record per entry
/// (its cursor, time in microseconds, host, identifier, pid, priority,
/// unit and message), then, when asked, a record of the identifiers and
/// one of the units the journal holds, for filter completion.
pub fn journal_structured(
    picked: &[(String, &LogLine)],
    all: &[LogLine],
    host: &str,
    identifiers: bool,
    units: bool,
) -> Value {
    let mut out: Vec<Value> = picked
        .iter()
        .map(|(cursor, l)| {
            let mut v = json!({
                "cursor": cursor,
                "timestamp": l.t * 1_000_000,
                "hostname": host,
                "identifier": l.identifier(),
            });
            if let Some(pid) = l.pid() {
                v["pid"] = json!(pid);
            }
            v["priority"] = json!(l.priority());
            if let Some(u) = &l.unit {
                v["unit"] = json!(format!("{u}.service"));
            }
            v["message"] = json!(l.msg);
            v
        })
        .collect();
    if identifiers {
        let set: std::collections::BTreeSet<&str> = all.iter().map(LogLine::identifier).collect();
        out.push(json!({ "identifiers": set }));
    }
    if units {
        let set: std::collections::BTreeSet<String> = all
            .iter()
            .filter_map(|l| l.unit.as_ref().map(|u| format!("{u}.service")))
            .collect();
        out.push(json!({ "units": set }));
    }
    Value::Array(out)
}

/// `GET /nodes/{node}/netstat`: strings, as `/proc/net/dev` is read.
pub fn netstat(rows: &[NetRow]) -> Value {
    rows.iter()
        .map(|r| {
            json!({
                "vmid": r.vmid.to_string(),
                "dev": format!("net{}", r.id),
                "in": r.netin.to_string(),
                "out": r.netout.to_string(),
            })
        })
        .collect()
}

/// `GET /nodes/{node}/rrddata`.
pub fn rrddata(points: &[NodePoint]) -> Value {
    json!(points)
}

/// A repository of `GET /nodes/{node}/apt/repositories`, as proxmox-apt
/// serializes it (`kind` is its file's type).
fn apt_repo(r: &AptRepo, kind: &str) -> Value {
    let mut v = json!({
        "Types": r.types(),
        "URIs": r.uris(),
        "Suites": r.suites(),
        "FileType": kind,
        "Enabled": r.enabled(),
    });
    if !r.components().is_empty() {
        v["Components"] = json!(r.components());
    }
    if !r.options().is_empty() {
        v["Options"] = r
            .options()
            .iter()
            .map(|(k, vals)| json!({ "Key": k, "Values": vals }))
            .collect();
    }
    if !r.comment().is_empty() {
        v["Comment"] = json!(r.comment());
    }
    v
}

/// `GET /nodes/{node}/apt/repositories` on release `v`: the files (a
/// file's digest as its 32 bytes), the common digest, the origins and
/// the release's standard repositories.
pub fn apt_repositories(a: &AptSources, v: PveVersion) -> Value {
    let files: Vec<Value> = a
        .files()
        .iter()
        .map(|f| {
            let kind = f.file_type();
            let repos: Vec<Value> = f.repos().iter().map(|r| apt_repo(r, kind)).collect();
            json!({
                "path": f.path(),
                "file-type": kind,
                "repositories": repos,
                "digest": f.digest().to_vec(),
            })
        })
        .collect();
    let infos: Vec<Value> = a
        .origins()
        .into_iter()
        .map(|o| {
            json!({
                "path": o.path,
                "index": o.index,
                "kind": "origin",
                "message": o.origin,
            })
        })
        .collect();
    let standard: Vec<Value> = a
        .standard_repos(v)
        .into_iter()
        .map(|s| {
            let mut e = json!({
                "handle": s.handle,
                "name": s.name,
                "description": s.description,
            });
            if let Some(st) = s.status {
                e["status"] = json!(st);
            }
            e
        })
        .collect();
    json!({
        "files": files,
        "errors": [],
        "digest": a.digest(),
        "infos": infos,
        "standard-repos": standard,
    })
}
