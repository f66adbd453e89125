//! The answers of `/cluster/ha` as pve-ha-manager's API writes them
//! (`API2/HA/{Resources,Groups,Rules,Status}.pm`): the model's HA data
//! turned into JSON, keys in PVE's order, flags as 0/1.

use serde_json::{Map, Value, json};

use crate::model::ha::{
    Fencing, GroupEntry, LrmLine, Manager, ManagerStatus, MoveRequested, ResourceEntry, RuleEntry,
    Service, ServiceLine, ServiceStatus, StatusLine,
};

/// An object of the pairs given, in their order.
fn object<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// A resource of `GET /cluster/ha/resources/{sid}`.
pub fn resource(e: &ResourceEntry<'_>) -> Value {
    let r = e.resource;
    let mut v = object([
        ("sid", json!(e.sid)),
        ("type", json!(r.kind())),
        ("digest", json!(e.digest)),
    ]);
    if let Some(a) = r.configured_auto_rebalance() {
        v.insert("auto-rebalance".into(), json!(u8::from(a)));
    }
    if let Some(c) = r.comment() {
        v.insert("comment".into(), json!(c));
    }
    if let Some(f) = r.configured_failback() {
        v.insert("failback".into(), json!(u8::from(f)));
    }
    if let Some(g) = e.group {
        v.insert("group".into(), json!(g));
    }
    if let Some(n) = r.configured_max_relocate() {
        v.insert("max_relocate".into(), json!(n));
    }
    if let Some(n) = r.configured_max_restart() {
        v.insert("max_restart".into(), json!(n));
    }
    if let Some(s) = r.state() {
        v.insert("state".into(), json!(s));
    }
    Value::Object(v)
}

/// `GET /cluster/ha/resources`: a missing group is in `errors`.
pub fn resources(list: &[ResourceEntry<'_>]) -> Value {
    list.iter()
        .map(|e| {
            let mut v = resource(e);
            if let Some(g) = e.missing_group {
                v["errors"] = json!({ "group": format!("group '{g}' does not exist") });
            }
            v
        })
        .collect()
}

/// A group of `GET /cluster/ha/groups[/{group}]`.
pub fn group(e: &GroupEntry<'_>) -> Value {
    let g = e.group;
    let mut v = object([
        ("group", json!(e.id)),
        ("type", json!("group")),
        ("digest", json!(e.digest)),
    ]);
    if let Some(c) = g.comment() {
        v.insert("comment".into(), json!(c));
    }
    if let Some(f) = g.configured_nofailback() {
        v.insert("nofailback".into(), json!(u8::from(f)));
    }
    v.insert("nodes".into(), json!(g.nodes().join(",")));
    if let Some(r) = g.configured_restricted() {
        v.insert("restricted".into(), json!(u8::from(r)));
    }
    Value::Object(v)
}

/// `GET /cluster/ha/groups`.
pub fn groups(list: &[GroupEntry<'_>]) -> Value {
    list.iter().map(group).collect()
}

/// `GET /cluster/ha/rules`.
pub fn rules(list: &[RuleEntry]) -> Value {
    list.iter().map(rule).collect()
}

/// A rule of `GET /cluster/ha/rules[/{rule}]`.
pub fn rule(e: &RuleEntry) -> Value {
    let r = &e.rule;
    let mut v = object([
        ("rule", json!(e.id)),
        ("type", json!(r.kind().as_str())),
        ("digest", json!(e.digest)),
        ("order", json!(r.order())),
    ]);
    if let Some(a) = r.affinity() {
        v.insert("affinity".into(), json!(a));
    }
    if let Some(c) = r.comment() {
        v.insert("comment".into(), json!(c));
    }
    if let Some(d) = r.configured_disable() {
        v.insert("disable".into(), json!(u8::from(d)));
    }
    if !r.nodes().is_empty() {
        v.insert("nodes".into(), json!(r.nodes_text()));
    }
    v.insert("resources".into(), json!(r.resources_text()));
    if let Some(s) = r.configured_strict() {
        v.insert("strict".into(), json!(u8::from(s)));
    }
    if let Some(errors) = &e.errors {
        v.insert("errors".into(), json!(errors));
    }
    Value::Object(v)
}

/// What `POST .../migrate` and `.../relocate` answer: `null` on 8.x.
pub fn moved(m: Option<&MoveRequested>) -> Value {
    let Some(m) = m else {
        return Value::Null;
    };
    let mut v = object([("sid", json!(m.sid)), ("requested-node", json!(m.node))]);
    if !m.comigrated.is_empty() {
        v.insert("comigrated-resources".into(), json!(m.comigrated));
    }
    if !m.blocking.is_empty() {
        let blocking: Vec<Value> = m
            .blocking
            .iter()
            .map(|s| json!({ "sid": s, "cause": "resource-affinity" }))
            .collect();
        v.insert("blocking-resources".into(), Value::Array(blocking));
    }
    Value::Object(v)
}

/// `GET /cluster/ha/status/current`.
pub fn status_current(lines: &[StatusLine<'_>]) -> Value {
    lines.iter().map(status_line).collect()
}

fn status_line(line: &StatusLine<'_>) -> Value {
    match line {
        StatusLine::Quorum { node, quorate } => json!({
            "id": "quorum",
            "type": "quorum",
            "node": node,
            "status": if *quorate { "OK".to_string() } else { format!("No quorum on node '{node}'!") },
            "quorate": u8::from(*quorate),
        }),
        StatusLine::Master {
            node,
            state,
            timestamp,
            disarm,
        } => {
            let extra = disarm.map_or(String::new(), |d| {
                format!(" - {}, resource mode: {}", d.state(), d.mode())
            });
            json!({
                "id": "master",
                "type": "master",
                "node": node,
                "status": format!("{node} ({state}, {}){extra}", crate::clock::ctime(*timestamp)),
                "timestamp": timestamp,
            })
        }
        StatusLine::Fencing { node, fencing } => match fencing {
            Fencing::Disarm(d) => {
                let wd = if d.state() == "disarmed" {
                    "CRM watchdog released"
                } else {
                    "CRM watchdog active"
                };
                json!({
                    "id": "fencing",
                    "type": "fencing",
                    "node": node,
                    "status": format!("{}, resource mode: {} ({wd})", d.state(), d.mode()),
                    "armed-state": d.state(),
                    "resource_mode": d.mode(),
                })
            }
            Fencing::Armed | Fencing::Standby => {
                let (armed, wd) = if *fencing == Fencing::Armed {
                    ("armed", "CRM watchdog active")
                } else {
                    ("standby", "CRM watchdog standby")
                };
                json!({
                    "id": "fencing",
                    "type": "fencing",
                    "node": node,
                    "status": format!("{armed} ({wd})"),
                    "armed-state": armed,
                })
            }
        },
        StatusLine::Lrm { node, status } => lrm_line(node, status.as_ref()),
        StatusLine::Service(s) => service_line(s),
    }
}

/// The `lrm:<node>` line.
fn lrm_line(node: &str, status: Option<&LrmLine>) -> Value {
    let id = format!("lrm:{node}");
    let Some(l) = status else {
        return json!({
            "id": id, "type": "lrm", "node": node,
            "status": format!("{node} (unable to read lrm status)"),
        });
    };
    let ctime = crate::clock::ctime(l.timestamp);
    let status = match l.watchdog {
        Some(wd) => format!("{node} ({}, {wd}, {ctime})", l.state),
        None => format!("{node} ({}, {ctime})", l.state),
    };
    json!({ "id": id, "type": "lrm", "node": node, "status": status, "timestamp": l.timestamp })
}

/// The `service:<sid>` line.
fn service_line(s: &ServiceLine<'_>) -> Value {
    let mut d = object([
        ("id", json!(format!("service:{}", s.sid))),
        ("type", json!("service")),
        ("sid", json!(s.sid)),
    ]);
    if let Some(c) = s.crm_state {
        d.insert("crm_state".into(), json!(c));
    }
    if let Some(n) = &s.node {
        d.insert("node".into(), json!(n));
    }
    let status = format!(
        "{} ({}, {})",
        s.sid,
        s.node.as_deref().unwrap_or("---"),
        s.state
    );
    d.insert("status".into(), json!(status));
    d.insert("state".into(), json!(s.state));
    if let Some(r) = s.config {
        d.insert(
            "request_state".into(),
            json!(r.state().unwrap_or("started")),
        );
        if let Some(g) = r.group() {
            d.insert("group".into(), json!(g));
        }
        d.insert("max_restart".into(), json!(r.max_restart()));
        d.insert("max_relocate".into(), json!(r.max_relocate()));
        if let Some(f) = s.failback {
            d.insert("failback".into(), json!(u8::from(f)));
        }
        if let Some(a) = s.auto_rebalance {
            d.insert("auto-rebalance".into(), json!(u8::from(a)));
        }
        if let Some(c) = r.comment() {
            d.insert("comment".into(), json!(c));
        }
    }
    Value::Object(d)
}

/// `GET /cluster/ha/status/manager_status`: the manager's status (`{}`
/// before a CRM has been master), the quorum and each LRM's status.
pub fn manager_status(ms: &ManagerStatus<'_>) -> Value {
    let mut v = object([
        ("manager_status", ms.manager.map_or(json!({}), manager_view)),
        (
            "quorum",
            json!({ "node": ms.node, "quorate": u8::from(ms.quorate) }),
        ),
    ]);
    if let Some(m) = ms.manager {
        let lrm: Map<String, Value> = m
            .node_status()
            .keys()
            .map(|n| (n.clone(), lrm_view(m, n)))
            .collect();
        v.insert("lrm_status".into(), Value::Object(lrm));
    }
    Value::Object(v)
}

/// `ha/manager_status` as the API shows it.
fn manager_view(m: &Manager) -> Value {
    let services: Map<String, Value> = m
        .services()
        .iter()
        .map(|(k, s)| (k.clone(), service_view(s)))
        .collect();
    let mut v = object([
        ("master_node", json!(m.master())),
        ("node_status", json!(m.node_status())),
        ("service_status", Value::Object(services)),
        ("timestamp", json!(m.timestamp())),
    ]);
    if let Some(d) = m.disarm() {
        v.insert(
            "disarm".into(),
            json!({ "mode": d.mode(), "state": d.state() }),
        );
    }
    Value::Object(v)
}

/// A service of `manager_status`.
fn service_view(s: &Service) -> Value {
    let mut v = object([
        ("node", json!(s.node())),
        ("state", json!(s.state())),
        ("uid", json!(s.uid())),
    ]);
    if s.running() {
        v.insert("running".into(), json!(1));
    }
    if let Some(t) = s.target() {
        v.insert("target".into(), json!(t));
    }
    if let Some(t) = s.timeout() {
        v.insert("timeout".into(), json!(t));
    }
    Value::Object(v)
}

/// A node's `lrm_status`: `{"mode":"unknown"}` before its LRM wrote one.
fn lrm_view(m: &Manager, node: &str) -> Value {
    match m.lrm(node) {
        Some(l) => json!({
            "mode": l.mode(),
            "state": l.state(),
            "results": {},
            "timestamp": l.timestamp(),
        }),
        None => json!({ "mode": "unknown" }),
    }
}

/// The `ha` member of a guest's `status/current`: `{"managed":0}`, or
/// `{"managed":1,"state":...}` with the manager's state of the service
/// (`null` before the manager has seen it).
impl serde::Serialize for ServiceStatus<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            Self::Unmanaged => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("managed", &0)?;
                m.end()
            }
            Self::Managed(state) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("managed", &1)?;
                m.serialize_entry("state", state)?;
                m.end()
            }
        }
    }
}
