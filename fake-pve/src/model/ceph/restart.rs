//! The rolling restart of a node's OSDs (`POST
//! /nodes/{node}/ceph/restart-bulk`, pve-manager `API2/Ceph.pm` and
//! `Ceph/Services.pm`): the entry health check with PVE's allowlist,
//! the plan, then each OSD restarted once Ceph says it is ok to stop,
//! under a per-OSD `noout`.

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

impl Ceph {
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
            let (ok, sev, blockers) = self.health_acceptable(o.force);
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
            if o.force && !blockers.is_empty() {
                out.push("WARNING: proceeding past HEALTH_WARN blockers due to force=1:".into());
                out.extend(blockers.iter().map(|b| format!("  - {b}")));
            }
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
