//! The HA manager on the emulated clock: a CRM round every ten seconds
//! (`PVE/HA/Manager.pm`), each followed by what the nodes' LRMs do with
//! the services the CRM assigned them (`PVE/HA/LRM.pm`): they start,
//! stop and migrate the guests through ordinary tasks by `root@pam`.
//!
//! What is emulated: the master election (the local node), node status
//! (online or unknown), the service states `request_start`, `started`,
//! `request_stop`, `stopped`, `migrate`, `relocate` and `error` (after
//! more failed starts than `max_restart`), the CRM commands (`migrate`,
//! `relocate`, `stop`, `disarm-ha`, `arm-ha`) and, on 9.x, the migration
//! of groups to rules. Not emulated: fencing, watchdogs, recovery of the
//! services of a failed node, node placement by rules and CRS.

use std::collections::BTreeMap;

use base64::Engine;
use serde::{Deserialize, Serialize};

use super::{GuestType, Ha};
use crate::model::PveVersion;
use crate::model::qemu::sha1_hex;

/// Seconds between two manager rounds.
pub const ROUND_SECS: i64 = 10;
/// How long an LRM's start or stop task runs, milliseconds.
pub(crate) const LRM_TASK_MS: u64 = 1_000;
/// Rounds the CRM waits before it first tries to migrate groups.
const GROUP_MIGRATION_ROUNDS: u32 = 3;
/// Rounds it waits before it tries again.
const GROUP_MIGRATION_COOLDOWN: u32 = 6;

/// The first round time on the ten-second grid after `now`.
pub fn next_grid(now: i64) -> i64 {
    (now.div_euclid(ROUND_SECS) + 1) * ROUND_SECS
}

/// What a guest's power or migrate call asks of the HA stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HaRequest {
    /// `status/start`: `ha-manager set <sid> --state started`.
    Start,
    /// `status/stop` (timeout 0) and `status/shutdown`:
    /// `ha-manager crm-command stop <sid> <timeout>`.
    Stop {
        /// Seconds the LRM's shutdown waits; 0 stops hard.
        timeout: u64,
    },
    /// `migrate`: `ha-manager migrate <sid> <target>`.
    Migrate {
        /// The target node.
        target: String,
    },
}

/// One service of the manager's `service_status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Service {
    pub(super) node: String,
    pub(super) state: String,
    pub(super) uid: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(super) running: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) target: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) cmd: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) timeout: Option<u64>,
    /// Failed start attempts (the LRM's restart count).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(super) tries: u64,
    /// The move of a `migrate`/`relocate` failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(super) move_failed: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Service {
    /// The CRM's state of the service.
    pub fn state(&self) -> &str {
        &self.state
    }

    /// The node it is assigned to.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// The target node of a migration or relocation.
    pub fn target(&self) -> Option<&str> {
        self.target.as_deref()
    }

    /// The service's uid.
    pub fn uid(&self) -> &str {
        &self.uid
    }

    /// Whether the LRM reported it running.
    pub fn running(&self) -> bool {
        self.running
    }

    /// The timeout of a stop request.
    pub fn timeout(&self) -> Option<u64> {
        self.timeout
    }
}

/// One node's `lrm_status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lrm {
    pub(super) mode: String,
    pub(super) state: String,
    pub(super) timestamp: i64,
}

impl Lrm {
    /// `active`, `maintenance` or `disarm`.
    pub fn mode(&self) -> &str {
        &self.mode
    }

    /// `active` or `wait_for_agent_lock`.
    pub fn state(&self) -> &str {
        &self.state
    }

    /// When the LRM last wrote its status, epoch seconds.
    pub fn timestamp(&self) -> i64 {
        self.timestamp
    }
}

/// A requested or completed disarm of the HA stack (9.x).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Disarm {
    pub(super) mode: String,
    pub(super) state: String,
}

impl Disarm {
    /// The resource mode: `freeze` or `ignore`.
    pub fn mode(&self) -> &str {
        &self.mode
    }

    /// `disarming` or `disarmed`.
    pub fn state(&self) -> &str {
        &self.state
    }
}

/// `ha/manager_status` with the LRMs' status files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manager {
    pub(super) master_node: String,
    pub(super) node_status: BTreeMap<String, String>,
    #[serde(default)]
    pub(super) service_status: BTreeMap<String, Service>,
    pub(super) timestamp: i64,
    #[serde(default)]
    pub(super) lrm: BTreeMap<String, Lrm>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) disarm: Option<Disarm>,
    #[serde(default)]
    pub(super) group_migration_round: u32,
}

impl Manager {
    /// The service `sid`, once the CRM took it up.
    pub fn service(&self, sid: &str) -> Option<&Service> {
        self.service_status.get(sid)
    }

    /// Every service.
    pub fn services(&self) -> &BTreeMap<String, Service> {
        &self.service_status
    }

    /// The manager's state of `node` (`online`, `unknown`, ...).
    pub fn node_state(&self, node: &str) -> Option<&str> {
        self.node_status.get(node).map(String::as_str)
    }

    /// The nodes the manager knows.
    pub fn nodes(&self) -> impl Iterator<Item = &str> {
        self.node_status.keys().map(String::as_str)
    }

    /// The master node.
    pub fn master(&self) -> &str {
        &self.master_node
    }

    /// The disarm mode in force (`freeze` or `ignore`) once disarmed.
    pub fn disarm_mode(&self) -> Option<&str> {
        self.disarm
            .as_ref()
            .filter(|d| d.state == "disarmed")
            .map(|d| d.mode.as_str())
    }

    /// `count_active_services` of `node`.
    pub(super) fn active_on(&self, node: &str) -> usize {
        self.service_status
            .values()
            .filter(|s| s.node == node || s.target.as_deref() == Some(node))
            .filter(|s| {
                !matches!(
                    s.state.as_str(),
                    "stopped" | "freeze" | "error" | "request_start"
                )
            })
            .count()
    }

    /// Every node's state.
    pub fn node_status(&self) -> &BTreeMap<String, String> {
        &self.node_status
    }

    /// When the CRM last wrote its status, epoch seconds.
    pub fn timestamp(&self) -> i64 {
        self.timestamp
    }

    /// The `lrm_status` of `node`, once its LRM wrote one.
    pub fn lrm(&self, node: &str) -> Option<&Lrm> {
        self.lrm.get(node)
    }

    /// A requested or completed disarm.
    pub fn disarm(&self) -> Option<&Disarm> {
        self.disarm.as_ref()
    }
}

/// What the cluster tells the manager about a guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestFact {
    /// VM or container.
    pub kind: GuestType,
    /// Its node.
    pub node: String,
    /// Whether it runs.
    pub running: bool,
    /// Whether it holds a lock (an operation is under way).
    pub locked: bool,
}

/// What an LRM does for a service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LrmAction {
    /// Start the guest.
    Start(String),
    /// Stop it; a timeout of 0 stops hard.
    Stop(String, u64),
    /// Move it to `target`, online when it runs.
    Move(String, String),
}

/// A service's uid: 22 characters of base64, as the CRM makes them.
fn uid(sid: &str, now: i64) -> String {
    let h = sha1_hex(format!("{sid}{now}").as_bytes());
    let bytes = hex::decode(&h[..32]).unwrap_or_default();
    base64::engine::general_purpose::STANDARD_NO_PAD.encode(bytes)
}

impl Ha {
    /// The round due by `now_ms`, if any (epoch milliseconds). After a
    /// long jump of the clock only the last few rounds are run.
    pub fn due_round(&mut self, now_ms: i64) -> Option<i64> {
        let now = now_ms.div_euclid(1000);
        let next = self.next_round?;
        if next > now {
            return None;
        }
        if now - next > 3 * ROUND_SECS {
            let skipped = (now - 2 * ROUND_SECS).div_euclid(ROUND_SECS) * ROUND_SECS;
            self.next_round = Some(skipped);
            return Some(skipped * 1000);
        }
        Some(next * 1000)
    }

    /// One CRM round at `now`: the commands, the services' states, the
    /// LRMs' status; answers what the LRMs are to do.
    pub fn crm_round(
        &mut self,
        version: PveVersion,
        now: i64,
        local: &str,
        nodes: &[(String, bool)],
        guests: &BTreeMap<String, GuestFact>,
    ) -> Vec<LrmAction> {
        self.next_round = Some(now + ROUND_SECS);
        let online = |n: &str| nodes.iter().any(|(x, o)| x == n && *o);
        if self.manager.is_none() {
            if self.resources.is_empty() {
                self.next_round = None;
                return Vec::new();
            }
            let master = if online(local) {
                local.to_string()
            } else if let Some((n, _)) = nodes.iter().find(|(_, o)| *o) {
                n.clone()
            } else {
                return Vec::new();
            };
            self.manager = Some(Manager {
                master_node: master,
                node_status: BTreeMap::new(),
                service_status: BTreeMap::new(),
                timestamp: now,
                lrm: BTreeMap::new(),
                disarm: None,
                group_migration_round: GROUP_MIGRATION_ROUNDS,
            });
        }
        let commands = std::mem::take(&mut self.crm_commands);
        let migrate_groups = version.is_v9() && !self.groups.is_empty() && {
            let m = self.manager.as_mut().expect("manager");
            m.group_migration_round = m.group_migration_round.saturating_sub(1);
            if m.group_migration_round == 0 {
                m.group_migration_round = GROUP_MIGRATION_COOLDOWN;
                nodes.iter().all(|(_, o)| *o)
            } else {
                false
            }
        };
        if migrate_groups {
            self.migrate_groups_persistently();
        }
        let resources = self.resources.clone();
        let m = self.manager.as_mut().expect("manager");
        for (n, o) in nodes {
            m.node_status
                .insert(n.clone(), if *o { "online" } else { "unknown" }.into());
        }
        let mut stop_requests = Vec::new();
        // A disarm asked for at the last round is complete at this one.
        if let Some(d) = &mut m.disarm {
            d.state = "disarmed".into();
        }
        for cmd in commands {
            let parts: Vec<&str> = cmd.split_whitespace().collect();
            match parts.as_slice() {
                ["disarm-ha", mode] => {
                    m.disarm = Some(Disarm {
                        mode: (*mode).to_string(),
                        state: "disarming".into(),
                    });
                }
                ["arm-ha"] => m.disarm = None,
                [c @ ("migrate" | "relocate"), sid, node] => {
                    if let Some(s) = m.service_status.get_mut(*sid)
                        && online(node)
                        && s.node != *node
                    {
                        s.cmd = vec![(*c).to_string(), (*node).to_string()];
                    }
                }
                ["stop", sid, timeout] => {
                    if let Some(s) = m.service_status.get_mut(*sid) {
                        s.cmd = vec!["stop".into(), (*timeout).to_string()];
                    }
                }
                _ => {}
            }
        }
        let frozen = m.disarm.is_some();
        m.service_status.retain(|sid, _| {
            resources
                .get(sid)
                .is_some_and(|r| r.state() != Some("ignored"))
        });
        for (sid, r) in &resources {
            if r.state() == Some("ignored") || m.service_status.contains_key(sid) {
                continue;
            }
            let Some(g) = guests.get(sid) else {
                continue;
            };
            let state = if r.requested() == "started" {
                "request_start"
            } else {
                "request_stop"
            };
            m.service_status.insert(
                sid.clone(),
                Service {
                    node: g.node.clone(),
                    state: state.into(),
                    uid: uid(sid, now),
                    running: false,
                    target: None,
                    cmd: Vec::new(),
                    timeout: None,
                    tries: 0,
                    move_failed: false,
                },
            );
        }
        let mut actions = Vec::new();
        if !frozen {
            for (sid, s) in &mut m.service_status {
                let Some(r) = resources.get(sid) else {
                    continue;
                };
                let g = guests.get(sid);
                if let Some(stop) = step(sid, s, r.requested(), g, r.max_restart()) {
                    stop_requests.push(stop);
                }
                if online(&s.node)
                    && let Some(a) = lrm_action(sid, s, r.requested(), g)
                {
                    actions.push(a);
                }
            }
        }
        for (n, o) in nodes {
            if !*o {
                continue;
            }
            let state = if m.active_on(n) > 0 {
                "active"
            } else {
                "wait_for_agent_lock"
            };
            let mode = if frozen { "disarm" } else { "active" };
            m.lrm.insert(
                n.clone(),
                Lrm {
                    mode: mode.into(),
                    state: state.into(),
                    timestamp: now,
                },
            );
        }
        if !self.resources.is_empty() {
            m.timestamp = now;
        }
        for sid in stop_requests {
            if let Some(r) = self.resources.get_mut(&sid) {
                r.state = Some("stopped".into());
            }
        }
        actions
    }

    /// The persistent group migration of 9.x: the groups become rules,
    /// the resources lose their group (keeping `failback=0` for a group
    /// with `nofailback`), and `groups.cfg` goes.
    fn migrate_groups_persistently(&mut self) {
        super::rules::migrate_groups(&mut self.rules, &self.groups, &self.resources);
        for r in self.resources.values_mut() {
            let Some(g) = r.group.take() else {
                continue;
            };
            if self.groups.get(&g).is_some_and(super::Group::nofailback) {
                r.failback = Some(false);
            }
        }
        self.groups.clear();
    }

    /// An LRM could not do what it was asked for `sid`.
    pub fn lrm_failed(&mut self, sid: &str) {
        if let Some(s) = self
            .manager
            .as_mut()
            .and_then(|m| m.service_status.get_mut(sid))
            && matches!(s.state.as_str(), "migrate" | "relocate")
        {
            s.move_failed = true;
        }
    }

    /// `POST /cluster/ha/status/disarm-ha` and `arm-ha` (9.x): queued for
    /// the CRM.
    pub fn queue_arm(&mut self, disarm: Option<&str>, now: i64) {
        self.crm_commands.push(match disarm {
            Some(mode) => format!("disarm-ha {mode}"),
            None => "arm-ha".into(),
        });
        if self.next_round.is_none() {
            self.next_round = Some(next_grid(now));
        }
    }
}

/// One CRM step of a service; answers the sid whose configured state a
/// `stop` command sets to `stopped`.
fn step(
    sid: &str,
    s: &mut Service,
    req: &str,
    g: Option<&GuestFact>,
    max_restart: u64,
) -> Option<String> {
    let cmd = std::mem::take(&mut s.cmd);
    match s.state.as_str() {
        "request_start" => {
            s.state = "started".into();
        }
        "started" => {
            if req == "stopped" || req == "disabled" {
                s.state = "request_stop".into();
                s.running = false;
                return None;
            }
            match cmd.as_slice() {
                [c, target] if c == "migrate" || c == "relocate" => {
                    s.state.clone_from(c);
                    s.target = Some(target.clone());
                    s.move_failed = false;
                }
                [c, timeout] if c == "stop" => {
                    s.state = "request_stop".into();
                    s.timeout = timeout.parse().ok();
                    s.running = false;
                    return Some(sid.to_string());
                }
                _ => {
                    if let Some(g) = g {
                        s.node.clone_from(&g.node);
                        if g.running {
                            s.running = true;
                            s.tries = 0;
                        } else if s.tries > max_restart {
                            s.state = "error".into();
                            s.running = false;
                        }
                    }
                }
            }
        }
        "request_stop" if g.is_none_or(|g| !g.running && !g.locked) => {
            s.state = "stopped".into();
            s.timeout = None;
        }
        "stopped" => match cmd.as_slice() {
            [c, target] if c == "migrate" || c == "relocate" => {
                s.state.clone_from(c);
                s.target = Some(target.clone());
                s.move_failed = false;
            }
            _ => {
                if req == "started" {
                    s.state = "request_start".into();
                }
            }
        },
        "migrate" | "relocate" => {
            let target = s.target.clone().unwrap_or_default();
            let arrived = g.is_some_and(|g| g.node == target && !g.locked);
            if arrived || s.move_failed {
                if arrived {
                    s.node = target;
                }
                s.target = None;
                s.move_failed = false;
                s.running = g.is_some_and(|g| g.running);
                s.state = if req == "started" {
                    "started"
                } else {
                    "request_stop"
                }
                .into();
            }
        }
        "error" if req == "disabled" => {
            s.state = "stopped".into();
            s.tries = 0;
        }
        _ => {}
    }
    None
}

/// What the service's LRM does this round.
fn lrm_action(sid: &str, s: &mut Service, req: &str, g: Option<&GuestFact>) -> Option<LrmAction> {
    let g = g?;
    if g.locked {
        return None;
    }
    match s.state.as_str() {
        "started" if !g.running => {
            s.tries += 1;
            Some(LrmAction::Start(sid.to_string()))
        }
        "request_stop" if g.running => {
            Some(LrmAction::Stop(sid.to_string(), s.timeout.unwrap_or(60)))
        }
        "stopped" if g.running && req != "started" => Some(LrmAction::Stop(sid.to_string(), 60)),
        "migrate" if g.node == s.node => Some(LrmAction::Move(
            sid.to_string(),
            s.target.clone().unwrap_or_default(),
        )),
        "relocate" if g.node == s.node => {
            if g.running {
                Some(LrmAction::Stop(sid.to_string(), 60))
            } else {
                Some(LrmAction::Move(
                    sid.to_string(),
                    s.target.clone().unwrap_or_default(),
                ))
            }
        }
        _ => None,
    }
}
