//! `GET /cluster/ha/status/current` and `manager_status`
//! (`API2/HA/Status.pm`), from the manager's state and the emulated clock.

use super::manager::{Disarm, Manager, Service};
use super::{Ha, Resource};
use crate::model::PveVersion;

/// One line of `GET /cluster/ha/status/current`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusLine<'a> {
    /// The local node's quorum.
    Quorum {
        /// The local node.
        node: &'a str,
        /// Whether it has quorum.
        quorate: bool,
    },
    /// The CRM master.
    Master {
        /// The master node.
        node: &'a str,
        /// By the age of its status: `active`, `idle`, `old timestamp -
        /// dead?` or `detected time drift!`.
        state: &'static str,
        /// When it last wrote its status, epoch seconds.
        timestamp: i64,
        /// A disarm of the HA stack (9.x).
        disarm: Option<&'a Disarm>,
    },
    /// The fencing state (9.x).
    Fencing {
        /// The master node, or the local one while there is none.
        node: &'a str,
        /// Armed, standing by or disarmed.
        fencing: Fencing<'a>,
    },
    /// A node's LRM.
    Lrm {
        /// The node.
        node: &'a str,
        /// Its status; `None` when there is none to read.
        status: Option<LrmLine>,
    },
    /// A service.
    Service(ServiceLine<'a>),
}

/// The fencing state of the `fencing` line (9.x).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fencing<'a> {
    /// Disarming or disarmed.
    Disarm(&'a Disarm),
    /// The CRM is active: its watchdog is armed.
    Armed,
    /// The CRM is not active.
    Standby,
}

/// The status of an LRM line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LrmLine {
    /// `active`, `idle`, `wait_for_agent_lock`, `<mode> mode`, or the
    /// age of the status (`old timestamp - dead?`, ...).
    pub state: String,
    /// The watchdog's state (9.x): `watchdog active`, `released` or
    /// `standby`.
    pub watchdog: Option<&'static str>,
    /// When the LRM last wrote its status, epoch seconds.
    pub timestamp: i64,
}

/// A service line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceLine<'a> {
    /// The sid.
    pub sid: &'a str,
    /// The manager's state of the service, once it took it up.
    pub crm_state: Option<&'a str>,
    /// The node: the manager's, or else the guest's.
    pub node: Option<String>,
    /// `get_verbose_service_state`.
    pub state: String,
    /// Its configuration, while it is configured.
    pub config: Option<&'a Resource>,
    /// 9.x, configured: the failback in force (on by default).
    pub failback: Option<bool>,
    /// 9.2, configured: whether the CRS may move it when it rebalances
    /// (on by default).
    pub auto_rebalance: Option<bool>,
}

/// What `GET /cluster/ha/status/manager_status` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ManagerStatus<'a> {
    /// The manager, once a CRM has been master.
    pub manager: Option<&'a Manager>,
    /// The local node.
    pub node: &'a str,
    /// Whether it has quorum.
    pub quorate: bool,
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
    pub fn status_current<'a>(
        &'a self,
        version: PveVersion,
        now: i64,
        local: &'a str,
        quorate: bool,
        guest_node: impl Fn(&str) -> Option<String>,
    ) -> Vec<StatusLine<'a>> {
        let mut out = vec![StatusLine::Quorum {
            node: local,
            quorate,
        }];
        let m = self.manager.as_ref();
        let mut crm_active = false;
        if let Some(m) = m {
            let mut st = timestamp_status(now, m.timestamp);
            crm_active = st == "active";
            if quorate && st != "active" && self.resources.is_empty() {
                st = "idle";
            }
            out.push(StatusLine::Master {
                node: &m.master_node,
                state: st,
                timestamp: m.timestamp,
                disarm: m.disarm.as_ref().filter(|_| version.is_v9()),
            });
        }
        if version.is_v9() {
            let node = m.map_or(local, |m| m.master_node.as_str());
            let fencing = match m.and_then(|m| m.disarm.as_ref()) {
                Some(d) => Fencing::Disarm(d),
                None if crm_active => Fencing::Armed,
                None => Fencing::Standby,
            };
            out.push(StatusLine::Fencing { node, fencing });
        }
        if let Some(m) = m {
            for node in m.node_status.keys() {
                out.push(StatusLine::Lrm {
                    node,
                    status: lrm_line(version, m, node, now),
                });
            }
        }
        let mut add = |sid: &'a str, ss: Option<&'a Service>| {
            let sc = self.resources.get(sid);
            let cfg_node = guest_node(sid);
            let node = match ss {
                Some(s) => Some(s.node.clone()),
                None => cfg_node.clone(),
            };
            let mut state = verbose_state(
                ss,
                sc.map(super::Resource::requested),
                sc.is_some() && cfg_node.is_some(),
            );
            if m.and_then(Manager::disarm_mode) == Some("ignore") && version.is_v9() {
                state = "ignore".into();
            }
            out.push(StatusLine::Service(ServiceLine {
                sid,
                crm_state: ss.map(Service::state),
                node,
                state,
                config: sc,
                failback: sc
                    .filter(|_| version.is_v9())
                    .map(|r| r.failback.unwrap_or(true)),
                auto_rebalance: sc
                    .filter(|_| version == PveVersion::V9_2)
                    .map(|r| r.auto_rebalance.unwrap_or(true)),
            }));
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
    pub fn manager_status<'a>(&'a self, local: &'a str, quorate: bool) -> ManagerStatus<'a> {
        ManagerStatus {
            manager: self.manager.as_ref(),
            node: local,
            quorate,
        }
    }
}

/// The status of the `lrm:<node>` line of `status/current`.
fn lrm_line(version: PveVersion, m: &Manager, node: &str, now: i64) -> Option<LrmLine> {
    let l = m.lrm.get(node)?;
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
    Some(LrmLine {
        state: st,
        watchdog: version.is_v9().then_some(wd),
        timestamp: l.timestamp,
    })
}
