//! Rolling restarts (pve-manager `Ceph/Services.pm`):
//!
//! - of a node's OSDs (`POST /nodes/{node}/ceph/restart-bulk`,
//!   `API2/Ceph.pm`): the entry health check with PVE's allowlist, the
//!   plan, then each OSD restarted once Ceph says it is ok to stop, under
//!   a per-OSD `noout`;
//! - of every daemon of a type across the cluster (`POST
//!   /cluster/ceph/restart-bulk`, `API2/Cluster/Ceph.pm`): monitors,
//!   managers and metadata servers one by one (a remote one through its
//!   node's `restart`), OSDs node by node through each node's own rolling
//!   restart, each a sub-task on its node.

use serde::{Deserialize, Serialize};

use super::Ceph;
use super::health::Severity;
use crate::model::{Error, Result};

/// Health checks PVE lets a rolling restart start past.
const BENIGN_CHECKS: &[&str] = &[
    "MON_CLOCK_SKEW",
    "RECENT_CRASH",
    "TELEMETRY_CHANGED",
    "AUTH_INSECURE_GLOBAL_ID_RECLAIM_ALLOWED",
    "AUTH_INSECURE_GLOBAL_ID_RECLAIM",
    "BLUESTORE_DISK_SIZE_MISMATCH",
    "BLUESTORE_SLOW_OP_ALERT",
    "PG_NOT_SCRUBBED",
    "PG_NOT_DEEP_SCRUBBED",
    "LARGE_OMAP_OBJECTS",
];

/// OSD map flags that do not stop a rolling restart.
const BENIGN_FLAGS: &[&str] = &[
    "noout",
    "noscrub",
    "nodeep-scrub",
    "notieragent",
    "sortbitwise",
    "recovery_deletes",
    "purged_snapdirs",
    "pglog_hardlimit",
];

/// The options of a node's rolling restart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BulkRestart {
    /// `set-noout`.
    pub set_noout: bool,
    /// `timeout`, seconds per OSD.
    pub timeout: u32,
    /// `dry-run`.
    pub dry_run: bool,
    /// `force`: past a HEALTH_WARN.
    pub force: bool,
    /// `only-outdated`.
    pub only_outdated: bool,
    /// `resume`.
    pub resume: bool,
}

/// A task a cluster-wide restart starts on a node, through the node's
/// API as root@pam, and that ends at once with its log and error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubTask {
    /// The node.
    pub node: String,
    /// Its task type (`srvrestart`).
    pub kind: &'static str,
    /// Its task id (`mon.pve2`, `pve2-osd`).
    pub id: String,
    /// Its log.
    pub log: Vec<String>,
    /// Its error.
    pub error: Option<String>,
}

/// `is_safe_to_stop` tries a failing `ok-to-stop` this often.
const OK_TO_STOP_RETRIES: u32 = 4;

impl Ceph {
    /// The entry health check of a rolling restart of `kind` daemons:
    /// refused past HEALTH_ERR, and past a blocking HEALTH_WARN unless
    /// `force` (then the blockers are logged).
    fn entry_health(&self, kind: &str, force: bool, out: &mut Vec<String>) -> Result<()> {
        let (ok, sev, blockers) = self.health_acceptable(force);
        let list = blockers.join("\n  - ");
        if !ok {
            if sev == Severity::Err {
                return Err(Error::failed(format!(
                    "Ceph cluster is in HEALTH_ERR state, refusing rolling restart of '{kind}' daemons:\n  - {list}"
                )));
            }
            return Err(Error::failed(format!(
                "Ceph cluster has blocking HEALTH_WARN issues, refusing rolling restart of '{kind}' daemons (pass force=1 to override):\n  - {list}"
            )));
        }
        if force && !blockers.is_empty() {
            out.push("WARNING: proceeding past HEALTH_WARN blockers due to force=1:".into());
            out.extend(blockers.iter().map(|b| format!("  - {b}")));
        }
        Ok(())
    }

    /// `is_safe_to_stop`: Ceph's `ok-to-stop` of the daemon, or for a
    /// manager (which has none) whether a standby takes over.
    fn is_safe_to_stop(&self, kind: &str, id: &str) -> (bool, String) {
        if kind == "mgr" {
            let active = self.active_mgr().map(|m| m.id.clone());
            let standbys = self
                .mgrs
                .iter()
                .filter(|m| m.running && Some(&m.id) != active.as_ref())
                .count();
            if active.as_deref() == Some(id) {
                if standbys == 0 {
                    return (
                        false,
                        "no standby mgr available for failover, would cause mgr outage".into(),
                    );
                }
                return (
                    true,
                    format!(
                        "active mgr restart will trigger failover ({standbys} standby available)"
                    ),
                );
            }
            return (true, "standby mgr restart, no failover".into());
        }
        match self.cmd_safety(kind, id, "stop") {
            Ok(s) if s.code == 0 => (true, s.status),
            Ok(s) => (
                false,
                format!(
                    "'{kind} ok-to-stop' for '{id}' did not pass after {OK_TO_STOP_RETRIES} attempts: {}",
                    if s.status.is_empty() {
                        "not safe"
                    } else {
                        &s.status
                    }
                ),
            ),
            Err(e) => (false, e.to_string()),
        }
    }

    /// Whether the cluster is in HEALTH_ERR.
    fn health_err(&self) -> bool {
        self.health(self.osds.len() as u32).status == Severity::Err
    }

    /// The work of a cluster-wide rolling restart of `kind` daemons,
    /// asked on `local`; `known` are the cluster's nodes. `spawn` starts a
    /// sub-task on a node and answers its UPID.
    ///
    /// # Errors
    /// PVE's refusals: the cluster's health, a daemon on a node that is
    /// not in the cluster, one not safe to stop, a sub-task that failed.
    pub fn run_cluster_restart(
        &mut self,
        kind: &str,
        o: &BulkRestart,
        local: &str,
        known: &[String],
        spawn: &mut dyn FnMut(SubTask) -> String,
        out: &mut Vec<String>,
    ) -> Result<()> {
        self.rados(local)?;
        if !o.dry_run {
            self.entry_health(kind, o.force, out)?;
        }
        let dry = if o.dry_run { "[DRY-RUN] " } else { "" };
        if kind == "osd" {
            let mut nodes: Vec<(String, usize)> = Vec::new();
            for osd in &self.osds {
                if !known.contains(&osd.host) {
                    continue;
                }
                match nodes.iter_mut().find(|(h, _)| *h == osd.host) {
                    Some((_, n)) => *n += 1,
                    None => nodes.push((osd.host.clone(), 1)),
                }
            }
            nodes.sort();
            // Every OSD runs the version its node has installed.
            if o.only_outdated {
                nodes.clear();
            }
            if nodes.is_empty() {
                out.push(if o.only_outdated {
                    "no outdated OSDs found in cluster, nothing to do".into()
                } else {
                    "no OSDs found in cluster, nothing to do".into()
                });
                return Ok(());
            }
            let total = nodes.len();
            out.push(format!(
                "{dry}planned cluster-wide rolling restart of OSDs (per-node):"
            ));
            for (i, (host, n)) in nodes.iter().enumerate() {
                out.push(format!("  [{}/{total}] {host} ({n} OSDs)", i + 1));
            }
            if o.dry_run {
                out.push("[DRY-RUN] no daemons were restarted".into());
                return Ok(());
            }
            for (i, (host, n)) in nodes.iter().enumerate() {
                let tag = format!("[{}/{total}]", i + 1);
                if self.health_err() {
                    return Err(Error::failed(format!(
                        "{tag} Ceph cluster degraded to HEALTH_ERR mid-restart, aborting"
                    )));
                }
                if i > 0 {
                    let sample = self
                        .osds
                        .iter()
                        .filter(|d| d.host == *host)
                        .map(|d| d.id)
                        .min();
                    if let Some(id) = sample {
                        out.push(format!(
                            "{tag} waiting for recovery to allow restart on {host} (probing osd.{id}, up to {}s)",
                            o.timeout
                        ));
                        let (safe, msg) = self.is_safe_to_stop("osd", &id.to_string());
                        if !safe {
                            return Err(Error::failed(format!(
                                "{tag} recovery did not allow restart on {host}: recovery did not allow safe restart of 'osd.{id}' within {}s: {msg}",
                                o.timeout
                            )));
                        }
                        out.push(format!("{tag} recovery quiesced: {msg}"));
                    }
                }
                out.push(format!(
                    "{tag} starting per-node OSD bulk-restart on {host} ({n} OSDs)"
                ));
                let sub = BulkRestart {
                    set_noout: true,
                    dry_run: false,
                    resume: false,
                    ..o.clone()
                };
                let mut log = Vec::new();
                let error = self
                    .run_bulk_restart(host, &sub, &mut log)
                    .err()
                    .map(|e| e.to_string());
                let summary = log.last().cloned();
                let upid = spawn(SubTask {
                    node: host.clone(),
                    kind: "srvrestart",
                    id: format!("{host}-osd"),
                    log,
                    error: error.clone(),
                });
                out.push(format!("{tag} sub-task UPID: {upid}"));
                if let Some(e) = error {
                    return Err(Error::failed(format!(
                        "remote task {upid} on {host} ended with status 'stopped' exit '{}'",
                        e.trim_end()
                    )));
                }
                out.push(match summary {
                    Some(s) => format!("{tag} finished on {host}: {s}"),
                    None => format!("{tag} finished on {host}"),
                });
            }
            out.push("cluster-wide OSD rolling restart finished".into());
            return Ok(());
        }
        let mut daemons: Vec<(String, String)> = match kind {
            "mon" => self
                .mons
                .iter()
                .map(|m| (m.id.clone(), m.host.clone()))
                .collect(),
            "mgr" => self
                .mgrs
                .iter()
                .map(|m| (m.id.clone(), m.host.clone()))
                .collect(),
            _ => self
                .mdss
                .iter()
                .map(|m| (m.id.clone(), m.host.clone()))
                .collect(),
        };
        daemons.sort();
        if let Some((name, host)) = daemons.iter().find(|(_, h)| !known.contains(h)) {
            return Err(Error::failed(format!(
                "daemon '{kind}.{name}' is registered on host '{host}' which is not in the cluster node list - aborting before any restart to avoid a mid-loop transport failure (clean up stale ceph.conf entries first)"
            )));
        }
        let total = daemons.len();
        if total == 0 {
            out.push(format!(
                "no '{kind}' daemons found in cluster, nothing to do"
            ));
            return Ok(());
        }
        out.push(format!("{dry}planned rolling restart order:"));
        for (i, (name, host)) in daemons.iter().enumerate() {
            out.push(format!("  [{}/{total}] {host}: {kind}.{name}", i + 1));
        }
        if o.dry_run {
            out.push("[DRY-RUN] no daemons were restarted".into());
            return Ok(());
        }
        for (i, (name, host)) in daemons.iter().enumerate() {
            let tag = format!("[{}/{total}]", i + 1);
            let daemon = format!("{kind}.{name}");
            if self.health_err() {
                return Err(Error::failed(format!(
                    "{tag} Ceph cluster degraded to HEALTH_ERR mid-restart, aborting"
                )));
            }
            let (safe, msg) = self.is_safe_to_stop(kind, name);
            if !safe {
                return Err(Error::failed(format!(
                    "{tag} Ceph reports '{daemon}' is not safe to stop: {msg}"
                )));
            }
            if host == local {
                out.push(format!("{tag} restarting {daemon} on {host} (local)"));
            } else {
                out.push(format!("{tag} restarting {daemon} on {host} (remote)"));
                let upid = spawn(SubTask {
                    node: host.clone(),
                    kind: "srvrestart",
                    id: daemon.clone(),
                    log: Vec::new(),
                    error: None,
                });
                out.push(format!("{tag} sub-task UPID: {upid}"));
            }
            self.service(host, "restart", Some(&daemon));
            out.push(format!(
                "{tag} waiting up to {}s for {daemon} to come back up",
                o.timeout
            ));
            out.push(format!("{tag} {daemon} is up"));
        }
        out.push(format!(
            "rolling restart of '{kind}' daemons across the cluster finished"
        ));
        Ok(())
    }

    /// `check_health_acceptable`: whether the restart may start, the
    /// severity and the blockers.
    fn health_acceptable(&self, force: bool) -> (bool, Severity, Vec<String>) {
        let h = self.health(self.osds.len() as u32);
        if h.status == Severity::Ok {
            return (true, h.status, Vec::new());
        }
        let mut blockers = Vec::new();
        for (name, check) in h.checks.iter().filter(|(_, c)| !c.muted) {
            if BENIGN_CHECKS.contains(&name.as_str()) {
                continue;
            }
            if name == "OSDMAP_FLAGS" {
                let mut bad: Vec<&str> = self
                    .flags
                    .iter()
                    .map(String::as_str)
                    .filter(|f| !BENIGN_FLAGS.contains(f))
                    .collect();
                bad.sort_unstable();
                if !bad.is_empty() {
                    blockers.push(format!(
                        "OSDMAP_FLAGS: cluster-wide flag(s) interfering with rolling restart: {}",
                        bad.join(", ")
                    ));
                }
                continue;
            }
            blockers.push(format!("{name}: {}", check.summary));
        }
        match h.status {
            Severity::Err => (false, h.status, blockers),
            _ if blockers.is_empty() => (true, h.status, blockers),
            _ => (force, h.status, blockers),
        }
    }

    /// The work of the rolling restart on `node`.
    ///
    /// # Errors
    /// PVE's refusals: the cluster's health, no saved state to resume,
    /// an OSD not safe to stop.
    pub(super) fn run_bulk_restart(
        &mut self,
        node: &str,
        o: &BulkRestart,
        out: &mut Vec<String>,
    ) -> Result<()> {
        self.rados(node)?;
        let kind = "osd";
        if !o.dry_run && !o.resume {
            self.entry_health(kind, o.force, out)?;
        }
        if o.resume {
            return Err(Error::failed(format!(
                "no resumable bulk-restart state found for node '{node}'"
            )));
        }
        let plan: Vec<u32> = self
            .osds
            .iter()
            .filter(|d| d.host == node)
            .map(|d| d.id)
            .collect();
        if plan.is_empty() {
            out.push(format!(
                "no '{kind}' daemons found on node '{node}', nothing to do"
            ));
            return Ok(());
        }
        let total = plan.len();
        if o.only_outdated {
            out.push(format!(
                "all {total} '{kind}' daemon(s) on '{node}' already on the installed version, nothing to restart"
            ));
            return Ok(());
        }
        let dry = if o.dry_run { "[DRY-RUN] " } else { "" };
        out.push(format!("{dry}planned rolling restart order on '{node}':"));
        for (i, id) in plan.iter().enumerate() {
            out.push(format!("  [{}/{total}] osd.{id}", i + 1));
        }
        if o.dry_run {
            out.push("[DRY-RUN] no daemons were restarted".into());
            return Ok(());
        }
        if o.set_noout {
            out.push(format!("setting 'noout' flag on {total} OSDs"));
        }
        let mut result = Ok(());
        for (i, id) in plan.iter().enumerate() {
            let tag = format!("[{}/{total}]", i + 1);
            let s = self.cmd_safety("osd", &id.to_string(), "stop")?;
            if s.code != 0 {
                result = Err(Error::failed(format!(
                    "{tag} Ceph reports 'osd.{id}' is not safe to stop: {}",
                    s.status
                )));
                break;
            }
            out.push(format!("{tag} restarting osd.{id}"));
            out.push(format!(
                "{tag} waiting up to {}s for osd.{id} to come back up",
                o.timeout
            ));
            self.run_osds(node, Some(&id.to_string()), true);
            out.push(format!("{tag} osd.{id} is up"));
        }
        if o.set_noout {
            out.push(format!("unsetting 'noout' flag on {total} OSDs"));
        }
        result?;
        out.push(format!(
            "rolling restart of '{kind}' daemons on node '{node}' finished"
        ));
        Ok(())
    }
}
