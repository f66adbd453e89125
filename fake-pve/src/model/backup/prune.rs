//! Pruning backups: the retention options (`prune-backups`), PVE's
//! keep-last/hourly/daily/weekly/monthly/yearly selection per backup
//! group, and `/nodes/{node}/storage/{storage}/prunebackups` (pve-storage
//! `Storage.pm` `prune_backups`, `prune_mark_backup_group`,
//! `Storage/Plugin.pm` `prune_backups`).
//!
//! Times are read in UTC, the emulated nodes' time zone.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::BackupOp;
use super::BackupOps;
use crate::model::qemu::EffectResult;
use crate::model::storage::Storages;
use crate::model::storage::content::vtype;
use crate::model::storage::path_based;
use crate::model::tasks::{TaskEffect, Worker};
use crate::model::{Error, Result};

/// The retention options, in PVE's order of selection.
pub const KEEP_KEYS: [&str; 6] = [
    "keep-last",
    "keep-hourly",
    "keep-daily",
    "keep-weekly",
    "keep-monthly",
    "keep-yearly",
];

/// Why a `prune-backups` string is refused, displayed as PVE's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeepOptionsError {
    /// A part without `=`.
    #[error("missing key in comma-separated list property - '{0}'")]
    MissingKey(String),
    /// A key that is no retention option.
    #[error("invalid format - unexpected property '{0}'")]
    Unexpected(String),
    /// A count (key, value) that is not a non-negative integer.
    #[error("invalid format - {0}: type check ('integer') failed - got '{1}'")]
    NotInteger(String, String),
    /// A `keep-all` (key, value) that is no boolean.
    #[error("invalid format - {0}: type check ('boolean') failed - got '{1}'")]
    NotBoolean(String, String),
    /// `keep-all` set with other options.
    #[error("keep-all cannot be set together with other options.")]
    KeepAllWithOthers,
}

/// A parsed `prune-backups` property string.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct KeepOptions(BTreeMap<String, u64>);

impl KeepOptions {
    /// `keep-all=1`.
    pub fn keep_all() -> Self {
        Self(BTreeMap::from([("keep-all".to_string(), 1)]))
    }

    /// Parses `keep-last=3,keep-daily=7` as the `prune-backups` format
    /// does.
    ///
    /// # Errors
    /// An unknown key, a value that is not a non-negative integer, or
    /// `keep-all` set with others.
    pub fn parse(s: &str) -> std::result::Result<Self, KeepOptionsError> {
        let mut map = BTreeMap::new();
        for part in s.split(',').filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| KeepOptionsError::MissingKey(part.to_string()))?;
            if k != "keep-all" && !KEEP_KEYS.contains(&k) {
                return Err(KeepOptionsError::Unexpected(k.to_string()));
            }
            let n: u64 = v
                .parse()
                .map_err(|_| KeepOptionsError::NotInteger(k.to_string(), v.to_string()))?;
            if k == "keep-all" && n > 1 {
                return Err(KeepOptionsError::NotBoolean(k.to_string(), v.to_string()));
            }
            map.insert(k.to_string(), n);
        }
        if map.get("keep-all").is_some_and(|v| *v == 1) && map.len() > 1 {
            return Err(KeepOptionsError::KeepAllWithOthers);
        }
        Ok(Self(map))
    }

    /// `keep-daily=7, keep-last=3`: sorted by key, as the vzdump log
    /// prints them.
    pub fn describe(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `keep-daily=7,keep-last=3`: the property string, sorted by key.
    pub fn property_string(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    fn get(&self, k: &str) -> u64 {
        self.0.get(k).copied().unwrap_or(0)
    }
}

/// One backup with its mark (`keep`, `remove`, `protected`, `renamed`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PruneEntry {
    /// The volume.
    pub volid: String,
    /// Its time (from the name for standard names).
    pub ctime: i64,
    /// `qemu`, `lxc` or `unknown`.
    pub kind: String,
    /// The guest.
    pub vmid: Option<u32>,
    /// What pruning does with it.
    pub mark: String,
}

/// The ISO 8601 week and its year of an epoch time (UTC).
pub fn iso_week(epoch: i64) -> (i64, u32) {
    let days = epoch.div_euclid(86_400);
    // 1970-01-01 was a Thursday; ISO weekdays run Monday = 1 .. Sunday = 7.
    let wd = (days + 3).rem_euclid(7) + 1;
    // The Thursday of this week decides the year.
    let thursday = days - wd + 4;
    let (year, ..) = crate::clock::civil(thursday * 86_400);
    let jan1 = crate::model::storage::content::days_from_civil(year, 1, 1);
    let week = (thursday - jan1) / 7 + 1;
    (year, u32::try_from(week).unwrap_or(0))
}

fn period(key: &str, ctime: i64) -> String {
    let (y, mo, d, h, ..) = crate::clock::civil(ctime);
    match key {
        "keep-last" => ctime.to_string(),
        "keep-hourly" => format!("{h}/{d}/{mo}/{y}"),
        "keep-daily" => format!("{d}/{mo}/{y}"),
        "keep-weekly" => {
            let (wy, w) = iso_week(ctime);
            format!("{w}/{wy}")
        }
        "keep-monthly" => format!("{mo}/{y}"),
        _ => y.to_string(),
    }
}

/// `prune_mark_backup_group`: marks one group's backups (entries already
/// marked, like protected ones, keep their mark).
pub fn mark_group(group: &mut [PruneEntry], keep: &KeepOptions) {
    let positive = KEEP_KEYS.iter().any(|k| keep.get(k) > 0);
    if keep.get("keep-all") > 0 || !positive {
        for e in group.iter_mut() {
            if e.mark.is_empty() || e.mark == "remove" {
                e.mark = "keep".into();
            }
        }
        return;
    }
    group.sort_by_key(|e| std::cmp::Reverse(e.ctime));
    for key in KEEP_KEYS {
        let count = keep.get(key);
        if count == 0 {
            continue;
        }
        let already: BTreeSet<String> = group
            .iter()
            .filter(|e| e.mark == "keep")
            .map(|e| period(key, e.ctime))
            .collect();
        let mut newly = BTreeSet::new();
        for e in group.iter_mut() {
            let id = period(key, e.ctime);
            if !e.mark.is_empty() || already.contains(&id) {
                continue;
            }
            if newly.contains(&id) {
                e.mark = "remove".into();
            } else {
                if newly.len() as u64 >= count {
                    break;
                }
                newly.insert(id);
                e.mark = "keep".into();
            }
        }
    }
    for e in group.iter_mut() {
        if e.mark.is_empty() {
            e.mark = "remove".into();
        }
    }
}

/// The backups of a storage as `prune_backups` marks them, in listing
/// order.
pub fn mark_backups(
    storage: &Storages,
    sid: &str,
    node: &str,
    vmid: Option<u32>,
    kind: Option<&str>,
    keep: &KeepOptions,
) -> Vec<PruneEntry> {
    let Some(s) = storage.find(sid) else {
        return Vec::new();
    };
    let mut entries: Vec<PruneEntry> = Vec::new();
    let mut vols: Vec<_> = storage
        .volumes()
        .on(s, node)
        .filter(|v| vtype(&v.name) == "backup")
        .collect();
    vols.sort_by_key(|v| v.volid().to_lowercase());
    for v in vols {
        let file = v.name.split_once('/').map_or("", |(_, f)| f);
        let (std_kind, owner, ctime) = crate::model::storage::content::backup_info(file);
        let bkind = std_kind.clone().unwrap_or_else(|| "unknown".into());
        let owner = owner.or(Some(v.vmid)).filter(|o| *o != 0);
        if vmid.is_some_and(|id| Some(id) != owner) {
            continue;
        }
        if kind.is_some_and(|k| k != bkind) {
            continue;
        }
        let standard = std_kind.is_some() && ctime.is_some();
        let mut mark = if standard {
            String::new()
        } else {
            "renamed".into()
        };
        if storage.volume_attrs(s, node, &v.name).protected {
            mark = "protected".into();
        }
        entries.push(PruneEntry {
            volid: v.volid(),
            ctime: ctime.unwrap_or(v.ctime),
            kind: bkind,
            vmid: owner,
            mark,
        });
    }
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, e) in entries.iter().enumerate() {
        if e.mark != "renamed" {
            let id = e.vmid.map_or_else(String::new, |v| v.to_string());
            groups
                .entry(format!("{}/{id}", e.kind))
                .or_default()
                .push(i);
        }
    }
    for idx in groups.values() {
        let mut group: Vec<PruneEntry> = idx.iter().map(|i| entries[*i].clone()).collect();
        mark_group(&mut group, keep);
        for g in group {
            if let Some(e) = entries.iter_mut().find(|e| e.volid == g.volid) {
                e.mark = g.mark;
            }
        }
    }
    entries
}

impl Storages {
    /// The retention a prune call uses: the one given, else the
    /// storage's.
    ///
    /// # Errors
    /// `storage 'x' does not exist`, `storage 'x' does not support
    /// backups`, `no prune-backups options configured for storage 'x'`.
    pub fn prune_keep(&self, sid: &str, node: &str, given: Option<&str>) -> Result<KeepOptions> {
        let s = self.existing(sid)?;
        if !s.content.iter().any(|c| c == "backup") {
            return Err(Error::failed(format!(
                "storage '{sid}' does not support backups"
            )));
        }
        let keep = match given {
            Some(p) => {
                KeepOptions::parse(p).map_err(|e| Error::invalid("prune-backups", e.to_string()))?
            }
            None => {
                let p = s.options.get("prune-backups").ok_or_else(|| {
                    Error::failed(format!(
                        "no prune-backups options configured for storage '{sid}'"
                    ))
                })?;
                KeepOptions::parse(p).map_err(|e| Error::failed(e.to_string()))?
            }
        };
        self.usable_storage(sid, node)?;
        Ok(keep)
    }

    /// `GET .../prunebackups`: what a prune would keep and remove.
    ///
    /// # Errors
    /// As the retention and storage checks.
    pub fn prune_dryrun(
        &self,
        sid: &str,
        node: &str,
        given: Option<&str>,
        vmid: Option<u32>,
        kind: Option<&str>,
    ) -> Result<Vec<PruneEntry>> {
        let keep = self.prune_keep(sid, node, given)?;
        if !path_based(&self.existing(sid)?.kind) {
            return Ok(Vec::new());
        }
        Ok(mark_backups(self, sid, node, vmid, kind, &keep))
    }

    /// `DELETE .../prunebackups`: the `prunebackups` task that removes
    /// the backups marked `remove` (task id `<vmid>@<storage>` or
    /// `<storage>`).
    ///
    /// # Errors
    /// As [`Storages::prune_dryrun`].
    pub fn prune_backups(
        &self,
        sid: &str,
        node: &str,
        given: Option<&str>,
        vmid: Option<u32>,
        kind: Option<&str>,
    ) -> Result<Worker> {
        let id = vmid.map_or_else(|| sid.to_string(), |v| format!("{v}@{sid}"));
        let keep = match self.prune_keep(sid, node, given) {
            Ok(k) => k,
            // PVE reads the retention in the worker: it fails the task.
            Err(Error::Invalid(m)) => return Err(Error::Invalid(m)),
            Err(e) => return Ok(Worker::new("prunebackups", &id).fail(e.to_string())),
        };
        let marks = mark_backups(self, sid, node, vmid, kind, &keep);
        Ok(prune_worker(&id, node, sid, marks, Vec::new()))
    }
}

/// The `prunebackups` task `id` on `node`: it removes the backups of
/// `sid` that `marks` marks `remove` (and, on a PBS storage, prunes each
/// of `groups`).
pub(in crate::model) fn prune_worker(
    id: &str,
    node: &str,
    sid: &str,
    marks: Vec<PruneEntry>,
    groups: Vec<String>,
) -> Worker {
    let volids = marks
        .into_iter()
        .filter(|e| e.mark == "remove")
        .map(|e| e.volid)
        .collect();
    Worker::new("prunebackups", id).effect(TaskEffect::Backup(BackupOp::Prune {
        node: node.to_string(),
        storage: sid.to_string(),
        volids,
        groups,
    }))
}

impl BackupOps<'_> {
    /// The end of a `prunebackups` task.
    pub(in crate::model) fn finish_prune(
        &mut self,
        node: &str,
        volids: &[String],
        groups: &[String],
    ) -> EffectResult {
        let mut lines = Vec::new();
        if !groups.is_empty() {
            // PBSPlugin: the client prunes each group; nothing per backup.
            for g in groups {
                lines.push(format!("running 'proxmox-backup-client prune' for '{g}'"));
            }
            for v in volids {
                self.remove_backup(v, node);
            }
            return Ok(lines);
        }
        for v in volids {
            lines.push(format!("removing backup '{v}'"));
            self.remove_backup(v, node);
        }
        Ok(lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// 2026-09-21 12:00:00 UTC, a Monday.
    const MON: i64 = 1_790_000_000 - 1_790_000_000 % 86_400 + 12 * 3600;

    fn group(times: &[i64]) -> Vec<PruneEntry> {
        times
            .iter()
            .enumerate()
            .map(|(i, t)| PruneEntry {
                volid: format!("local:backup/{i}"),
                ctime: *t,
                kind: "qemu".into(),
                vmid: Some(100),
                mark: String::new(),
            })
            .collect()
    }

    fn kept(g: &[PruneEntry]) -> Vec<i64> {
        let mut k: Vec<i64> = g
            .iter()
            .filter(|e| e.mark == "keep")
            .map(|e| e.ctime)
            .collect();
        k.sort_unstable();
        k
    }

    #[rstest]
    #[case("2026-01-01", 2026, 1)]
    #[case("2021-01-03", 2020, 53)]
    #[case("2024-12-30", 2025, 1)]
    #[case("2026-09-21", 2026, 39)]
    fn iso_weeks(#[case] date: &str, #[case] year: i64, #[case] week: u32) {
        let p: Vec<i64> = date.split('-').map(|x| x.parse().expect("num")).collect();
        let days = crate::model::storage::content::days_from_civil(p[0], p[1], p[2]);
        assert_eq!(iso_week(days * 86_400 + 3600), (year, week));
    }

    #[test]
    fn keep_last_keeps_the_newest() {
        let mut g = group(&[MON, MON + 10, MON + 20, MON + 30]);
        mark_group(&mut g, &KeepOptions::parse("keep-last=2").expect("parse"));
        assert_eq!(kept(&g), [MON + 20, MON + 30]);
        assert_eq!(g.iter().filter(|e| e.mark == "remove").count(), 2);
    }

    #[test]
    fn keep_daily_keeps_the_newest_of_each_day() {
        let day = 86_400;
        let mut g = group(&[MON, MON + 60, MON + day, MON + day + 60, MON + 2 * day]);
        mark_group(&mut g, &KeepOptions::parse("keep-daily=2").expect("parse"));
        assert_eq!(kept(&g), [MON + day + 60, MON + 2 * day]);
    }

    #[test]
    fn keep_daily_counts_only_days_keep_last_left_uncovered() {
        let day = 86_400;
        // keep-last takes the two newest (both on day 2); keep-daily then
        // takes two more days, skipping day 2 (already kept).
        let mut g = group(&[MON - day, MON, MON + day, MON + 2 * day, MON + 2 * day + 60]);
        mark_group(
            &mut g,
            &KeepOptions::parse("keep-last=2,keep-daily=2").expect("parse"),
        );
        assert_eq!(
            kept(&g),
            [MON, MON + day, MON + 2 * day, MON + 2 * day + 60]
        );
    }

    #[test]
    fn keep_weekly_monthly_yearly() {
        let week = 7 * 86_400;
        let mut g = group(&[MON, MON + 86_400, MON + week, MON + 2 * week]);
        mark_group(&mut g, &KeepOptions::parse("keep-weekly=2").expect("parse"));
        assert_eq!(kept(&g), [MON + week, MON + 2 * week]);
        let mut g = group(&[MON, MON + 40 * 86_400, MON + 400 * 86_400]);
        mark_group(
            &mut g,
            &KeepOptions::parse("keep-monthly=1,keep-yearly=2").expect("parse"),
        );
        assert_eq!(kept(&g), [MON + 40 * 86_400, MON + 400 * 86_400]);
    }

    #[test]
    fn protected_backups_keep_their_mark_and_keep_all_keeps_everything() {
        let mut g = group(&[MON, MON + 10, MON + 20]);
        g[2].mark = "protected".into();
        mark_group(&mut g, &KeepOptions::parse("keep-last=1").expect("parse"));
        let mark = |t: i64| g.iter().find(|e| e.ctime == t).map(|e| e.mark.clone());
        assert_eq!(mark(MON + 20).as_deref(), Some("protected"));
        assert_eq!(mark(MON + 10).as_deref(), Some("keep"));
        assert_eq!(mark(MON).as_deref(), Some("remove"));
        let mut g = group(&[MON, MON + 10]);
        mark_group(&mut g, &KeepOptions::keep_all());
        assert!(g.iter().all(|e| e.mark == "keep"));
        let mut g = group(&[MON, MON + 10]);
        mark_group(&mut g, &KeepOptions::parse("keep-last=0").expect("parse"));
        assert!(
            g.iter().all(|e| e.mark == "keep"),
            "no positive option keeps all"
        );
    }

    #[rstest]
    #[case("keep-last=3,keep-daily=7", Ok("keep-daily=7, keep-last=3"))]
    #[case("keep-all=1", Ok("keep-all=1"))]
    #[case(
        "keep-all=1,keep-last=2",
        Err("keep-all cannot be set together with other options.")
    )]
    #[case(
        "keep-forever=1",
        Err("invalid format - unexpected property 'keep-forever'")
    )]
    fn retention_strings(#[case] s: &str, #[case] want: std::result::Result<&str, &str>) {
        let got = KeepOptions::parse(s)
            .map(|k| k.describe())
            .map_err(|e| e.to_string());
        assert_eq!(got, want.map(str::to_string).map_err(str::to_string));
    }
}
