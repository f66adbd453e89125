//! `GET /cluster/ha/status/current` and `manager_status`
//! (`API2/HA/Status.pm`), from the manager's state and the emulated clock.

use serde_json::{Value, json};

use super::Ha;
use super::manager::{Manager, Service};
use crate::model::PveVersion;

/// `scalar(localtime)` of the emulated node (UTC).
fn ctime_text(epoch: i64) -> String {
    let (y, mo, d, h, mi, s, wd) = crate::clock::civil(epoch);
    let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let m = months[usize::try_from(mo).unwrap_or(1).saturating_sub(1) % 12];
    let w = days[usize::try_from(wd).unwrap_or(0) % 7];
    format!("{w} {m} {d:2} {h:02}:{mi:02}:{s:02} {y}")
}

/// `timestamp_to_status`.
fn timestamp_status(now: i64, ts: i64) -> &'static str {
    let diff = now - ts;
    if diff > 30 {
        "old timestamp - dead?"
    } else if diff < -2 {
        "detected time drift!"
    } else {
        "active"
    }
}

/// `get_verbose_service_state`.
fn verbose_state(ss: Option<&Service>, req: Option<&str>, has_node: bool) -> String {
    let Some(req) = req else {
        return "deleting".into();
    };
    if req == "ignored" {
        return "ignored".into();
    }
    if !has_node {
        return "not found".into();
    }
    let Some(ss) = ss else {
        return "queued".into();
    };
    let cur = ss.state.as_str();
    let mut state = cur.to_string();
    match cur {
        "stopped" if req == "started" => state = "starting".into(),
        "stopped" if req == "disabled" => state = "disabled".into(),
        "started" => {
            if req == "stopped" || req == "disabled" {
                state = "stopping".into();
            }
            if !ss.running {
                state = "starting".into();
            }
        }
        "error" if req == "disabled" => state = "clearing error flag".into(),
        _ => {}
    }
    state
}

impl Ha {
    /// `GET /cluster/ha/status/current`.
    pub fn status_current(
        &self,
        version: PveVersion,
        now: i64,
        local: &str,
        quorate: bool,
        guest_node: impl Fn(&str) -> Option<String>,
    ) -> Vec<Value> {
        let mut out = vec![json!({
            "id": "quorum",
            "type": "quorum",
            "node": local,
            "status": if quorate { "OK".to_string() } else { format!("No quorum on node '{local}'!") },
            "quorate": u8::from(quorate),
        })];
        let m = self.manager.as_ref();
        let mut crm_active = false;
        if let Some(m) = m {
            let mut st = timestamp_status(now, m.timestamp);
            crm_active = st == "active";
            if quorate && st != "active" && self.resources.is_empty() {
                st = "idle";
            }
            let mut extra = String::new();
            if version.is_v9()
                && let Some(d) = &m.disarm
            {
                extra = format!(" - {}, resource mode: {}", d.state, d.mode);
            }
            out.push(json!({
                "id": "master",
                "type": "master",
                "node": m.master_node,
                "status": format!("{} ({st}, {}){extra}", m.master_node, ctime_text(m.timestamp)),
                "timestamp": m.timestamp,
            }));
        }
        if version.is_v9() {
            let node = m.map_or(local, |m| m.master_node.as_str());
            match m.and_then(|m| m.disarm.as_ref()) {
                Some(d) => {
                    let wd = if d.state == "disarmed" {
                        "CRM watchdog released"
                    } else {
                        "CRM watchdog active"
                    };
                    out.push(json!({
                        "id": "fencing",
                        "type": "fencing",
                        "node": node,
                        "status": format!("{}, resource mode: {} ({wd})", d.state, d.mode),
                        "armed-state": d.state,
                        "resource_mode": d.mode,
                    }));
                }
                None => {
                    let (armed, wd) = if crm_active {
                        ("armed", "CRM watchdog active")
                    } else {
                        ("standby", "CRM watchdog standby")
                    };
                    out.push(json!({
                        "id": "fencing",
                        "type": "fencing",
                        "node": node,
                        "status": format!("{armed} ({wd})"),
                        "armed-state": armed,
                    }));
                }
            }
        }
        if let Some(m) = m {
            for node in m.node_status.keys() {
                out.push(lrm_line(version, m, node, now));
            }
        }
        let mut add = |sid: &str, ss: Option<&Service>| {
            let sc = self.resources.get(sid);
            let mut d = json!({ "id": format!("service:{sid}"), "type": "service", "sid": sid });
            let cfg_node = guest_node(sid);
            let node = match ss {
                Some(s) => {
                    d["crm_state"] = json!(s.state);
                    Some(s.node.clone())
                }
                None => cfg_node.clone(),
            };
            if let Some(n) = &node {
                d["node"] = json!(n);
            }
            let mut state = verbose_state(
                ss,
                sc.map(super::Resource::requested),
                sc.is_some() && cfg_node.is_some(),
            );
            if m.and_then(Manager::disarm_mode) == Some("ignore") && version.is_v9() {
                state = "ignore".into();
            }
            d["status"] = json!(format!(
                "{sid} ({}, {state})",
                node.as_deref().unwrap_or("---")
            ));
            d["state"] = json!(state);
            if let Some(r) = sc {
                d["request_state"] = r.state().map_or(json!("started"), |s| json!(s));
                if let Some(g) = r.group() {
                    d["group"] = json!(g);
                }
                d["max_restart"] = json!(r.max_restart());
                d["max_relocate"] = json!(r.max_relocate());
                if version.is_v9() {
                    d["failback"] = json!(u8::from(r.failback.unwrap_or(true)));
                }
                if let Some(c) = &r.comment {
                    d["comment"] = json!(c);
                }
            }
            out.push(d);
        };
        if let Some(m) = m {
            for (sid, s) in &m.service_status {
                add(sid, Some(s));
            }
        }
        for sid in self.resources.keys() {
            if m.is_some_and(|m| m.service_status.contains_key(sid)) {
                continue;
            }
            add(sid, None);
        }
        out
    }

    /// `GET /cluster/ha/status/manager_status`.
    pub fn manager_status(&self, local: &str, quorate: bool) -> Value {
        let mut v = json!({
            "manager_status": self.manager.as_ref().map_or(json!({}), Manager::view),
            "quorum": { "node": local, "quorate": u8::from(quorate) },
        });
        if let Some(m) = &self.manager {
            v["lrm_status"] = m
                .node_status
                .keys()
                .map(|n| (n.clone(), m.lrm_view(n)))
                .collect::<serde_json::Map<_, _>>()
                .into();
        }
        v
    }
}

/// The `lrm:<node>` line of `status/current`.
fn lrm_line(version: PveVersion, m: &Manager, node: &str, now: i64) -> Value {
    let id = format!("lrm:{node}");
    let Some(l) = m.lrm.get(node) else {
        return json!({
            "id": id, "type": "lrm", "node": node,
            "status": format!("{node} (unable to read lrm status)"),
        });
    };
    let mut st = timestamp_status(now, l.timestamp).to_string();
    let active = st == "active";
    let wd = if active && (l.state == "active" || l.state == "maintenance") {
        "watchdog active"
    } else if l.mode == "disarm" {
        "watchdog released"
    } else {
        "watchdog standby"
    };
    if active {
        if l.mode != "active" {
            st = format!("{} mode", l.mode);
        } else if l.state == "wait_for_agent_lock" && m.active_on(node) == 0 {
            st = "idle".into();
        } else {
            st.clone_from(&l.state);
        }
    } else if l.mode == "maintenance" || (version.is_v9() && l.mode == "disarm") {
        st = format!("{} mode", l.mode);
    }
    let status = if version.is_v9() {
        format!("{node} ({st}, {wd}, {})", ctime_text(l.timestamp))
    } else {
        format!("{node} ({st}, {})", ctime_text(l.timestamp))
    };
    json!({ "id": id, "type": "lrm", "node": node, "status": status, "timestamp": l.timestamp })
}
