//! The health checks the monitors raise from the model (`ceph health
//! detail`): monitors out of quorum, no active manager, fewer OSDs than
//! the default pool size, OSDs down, OSD map flags; muted ones stay listed but do
//! not count.

use std::collections::BTreeMap;

use super::Ceph;

/// A check's severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// `HEALTH_OK`.
    Ok,
    /// `HEALTH_WARN`.
    Warn,
    /// `HEALTH_ERR`.
    Err,
}

impl Severity {
    /// As Ceph prints it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ok => "HEALTH_OK",
            Self::Warn => "HEALTH_WARN",
            Self::Err => "HEALTH_ERR",
        }
    }
}

/// One raised check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// Its severity.
    pub severity: Severity,
    /// The summary line.
    pub summary: String,
    /// The summary's count.
    pub count: u64,
    /// The detail lines.
    pub detail: Vec<String>,
    /// Whether a mute hides it.
    pub muted: bool,
}

/// The cluster's health.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Health {
    /// The worst severity of the checks not muted.
    pub status: Severity,
    /// The checks by code.
    pub checks: BTreeMap<String, Check>,
}

/// The OSD map flags Ceph warns about, in its order.
const WARNED_FLAGS: &[&str] = &[
    "full",
    "pauserd",
    "pausewr",
    "noup",
    "nodown",
    "noin",
    "noout",
    "nobackfill",
    "norecover",
    "norebalance",
    "noscrub",
    "nodeep-scrub",
    "notieragent",
];

impl Ceph {
    /// The health as the monitors see it, with `osds` OSDs.
    pub fn health(&self, osds: u32) -> Health {
        let mut checks = BTreeMap::new();
        let quorum = self.quorum();
        let down: Vec<(usize, &super::Mon)> = self
            .mons
            .iter()
            .enumerate()
            .filter(|(i, _)| !quorum.contains(i))
            .collect();
        if !down.is_empty() && !quorum.is_empty() {
            checks.insert(
                "MON_DOWN".into(),
                Check {
                    severity: Severity::Warn,
                    summary: format!(
                        "{}/{} mons down, quorum {}",
                        down.len(),
                        self.mons.len(),
                        self.quorum_names().join(",")
                    ),
                    count: down.len() as u64,
                    detail: down
                        .iter()
                        .map(|(rank, m)| {
                            format!(
                                "mon.{} (rank {rank}) addr {} is down (out of quorum)",
                                m.id,
                                mon_addrvec(&m.addr)
                            )
                        })
                        .collect(),
                    muted: false,
                },
            );
        }
        if self.active_mgr().is_none() {
            checks.insert(
                "MGR_DOWN".into(),
                Check {
                    severity: Severity::Warn,
                    summary: "no active mgr".into(),
                    count: 0,
                    detail: Vec::new(),
                    muted: false,
                },
            );
        }
        let size = self.pool_default("osd_pool_default_size");
        if osds < size {
            checks.insert(
                "TOO_FEW_OSDS".into(),
                Check {
                    severity: Severity::Warn,
                    summary: format!("OSD count {osds} < osd_pool_default_size {size}"),
                    count: 1,
                    detail: Vec::new(),
                    muted: false,
                },
            );
        }
        let down: Vec<&super::Osd> = self.osds.iter().filter(|o| !o.up).collect();
        if !down.is_empty() {
            checks.insert(
                "OSD_DOWN".into(),
                Check {
                    severity: Severity::Warn,
                    summary: format!("{} osds down", down.len()),
                    count: down.len() as u64,
                    detail: down
                        .iter()
                        .map(|o| format!("{} (root=default,host={}) is down", o.name(), o.host))
                        .collect(),
                    muted: false,
                },
            );
        }
        let flags: Vec<&str> = WARNED_FLAGS
            .iter()
            .copied()
            .filter(|f| self.flags.contains(*f))
            .collect();
        if !flags.is_empty() {
            checks.insert(
                "OSDMAP_FLAGS".into(),
                Check {
                    severity: Severity::Warn,
                    summary: format!("{} flag(s) set", flags.join(",")),
                    count: 0,
                    detail: Vec::new(),
                    muted: false,
                },
            );
        }
        for (code, check) in &mut checks {
            check.muted = self.mutes.contains_key(code);
        }
        let status = checks
            .values()
            .filter(|c| !c.muted)
            .map(|c| c.severity)
            .max()
            .unwrap_or(Severity::Ok);
        Health { status, checks }
    }
}

/// A monitor's address vector as Ceph prints it.
pub fn mon_addrvec(ip: &str) -> String {
    let host = if ip.contains(':') {
        format!("[{ip}]")
    } else {
        ip.to_string()
    };
    format!("[v2:{host}:3300/0,v1:{host}:6789/0]")
}
