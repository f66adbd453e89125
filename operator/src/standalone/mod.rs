//! Standalone mode: resources come from YAML files in a directory, which
//! is polled for changes; each object's status goes to a status file
//! beside its manifest (`web.yaml` -> `web.status.yaml`), never into the
//! user's file. A Machine or MachineSnapshot is deleted only when its
//! manifest asks for it (the annotation `pve.fake-pve.io/delete: "true"`),
//! through its finalizer, recorded in the status file so that a restarted
//! operator still finishes the deletion; so is one made from a VirtRigaud
//! or Crossplane document whose provider opts into it
//! (`deleteOnRemoval: true`) when that document stays removed. A document
//! that vanishes otherwise or cannot be read, or a directory that cannot
//! be listed, deletes nothing:
//! the objects are left as they are and the problem is reported in their
//! status.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::Semaphore;
use tracing::{info, warn};

use crate::controller::{Operator, World};
use crate::dialects::Context;
use crate::error::{Backoff, Error, Result, Retries};
use crate::http::Health;
use crate::types::{
    API_VERSION, Key, MachineImageStatus, MachineSnapshotStatus, MachineStatus,
    ProxmoxClusterStatus, ProxmoxNodeStatus, Resource,
};

mod files;
mod queue;
mod report;

use files::manifest_of;
pub use files::{Loaded, load_dir, load_dir_with, read_statuses, status_path};
use report::js;
pub use report::{check_dir, check_dir_with, status_table, status_table_with, unknown_clusters};

/// Settings of the standalone loop.
#[derive(Debug, Clone)]
pub struct Options {
    /// The manifest directory.
    pub dir: PathBuf,
    /// Periodic resync (`RECONCILE_INTERVAL`, default 30 s).
    pub resync: Duration,
    /// Reconciles at once (`MAX_CONCURRENT_RECONCILES`, default 5).
    pub max_concurrent: usize,
    /// How often the directory is looked at.
    pub poll: Duration,
    /// Requeue backoff for retryable errors.
    pub backoff: Backoff,
    /// How the other systems' documents are read (default cluster,
    /// environment, network names).
    pub dialects: Context,
    /// How long the document of an object whose provider says
    /// `deleteOnRemoval: true` must stay missing (seen missing at two
    /// reads at least this far apart) before its deletion starts: an
    /// editor that saves by moving the file away and writing it again
    /// deletes nothing.
    pub removal_grace: Duration,
}

impl Options {
    /// Defaults for `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            resync: Duration::from_secs(30),
            max_concurrent: 5,
            poll: Duration::from_secs(1),
            backoff: Backoff::default(),
            dialects: Context::default(),
            removal_grace: Duration::from_secs(10),
        }
    }
}

/// One entry of a status file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusEntry {
    /// The API version of another system's object (Crossplane's,
    /// VirtRigaud's, vitistack's), whose status follows its Machine's in
    /// its own shape; none for the operator's own kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// The status.
    pub status: Value,
    /// The object as last applied, while its deletion is pending
    /// (Machines and MachineSnapshots).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finalizer: Option<Resource>,
}

#[derive(Debug, Clone)]
struct Tracked {
    res: Resource,
    file: PathBuf,
    status: Value,
    /// Its deletion was asked for ([`crate::types::DELETE_ANNOTATION`]);
    /// for clusters and secrets: gone from the manifests but still needed
    /// by a deletion.
    deleting: bool,
    /// The deletion is done: nothing more to do while the manifest says
    /// the same.
    finalized: bool,
    /// Why its manifest cannot be followed (unreadable, vanished): the
    /// object is left as it is in PVE and the problem reported.
    problem: Option<String>,
    /// When its document was first seen missing (while it stays so).
    missing_since: Option<Instant>,
    /// The other system's object it was made from, whose status is
    /// written in that system's shape too.
    origin: Option<crate::dialects::Origin>,
    due: Instant,
    /// A worker of the queue reconciles it now ([`Standalone::run`]).
    running: bool,
    /// Counts the changes of its document: a reconcile that started
    /// before one is followed by another at once.
    generation: u64,
    /// Its document changed since its last reconcile started: it goes
    /// ahead of the backlog.
    edited: bool,
    /// Counts its reconciles: what one tells while it runs is not taken
    /// once it has ended.
    runs: u64,
}

impl Tracked {
    fn new(res: Resource, file: PathBuf, status: Value, now: Instant) -> Self {
        Self {
            deleting: has_finalizer(&res) && res.deletion_requested(),
            res,
            file,
            status,
            finalized: false,
            problem: None,
            missing_since: None,
            origin: None,
            due: now,
            running: false,
            generation: 0,
            edited: false,
            runs: 0,
        }
    }
}

/// The standalone operator.
pub struct Standalone {
    /// Settings.
    pub opts: Options,
    /// The shared reconcile state and metrics.
    pub operator: Arc<Operator>,
    /// Probes.
    pub health: Arc<Health>,
    objects: BTreeMap<Key, Tracked>,
    started: bool,
    written: BTreeMap<PathBuf, String>,
    retries: Retries,
    /// Objects that several documents declare and that are not tracked
    /// (nothing was made for them): the file their report goes to, and
    /// the report.
    duplicates: BTreeMap<Key, (PathBuf, String)>,
    /// Why the directory cannot be read, while it cannot (said once).
    dir_error: Option<String>,
    /// The errors of the files last read (each said once, when new).
    file_errors: BTreeSet<String>,
}

impl std::fmt::Debug for Standalone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Standalone")
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

fn has_finalizer(r: &Resource) -> bool {
    matches!(r, Resource::Machine(_) | Resource::MachineSnapshot(_))
}

impl Standalone {
    /// A standalone operator over `opts.dir`.
    pub fn new(opts: Options, operator: Arc<Operator>) -> Self {
        let opts_backoff = opts.backoff;
        Self {
            opts,
            operator,
            health: Arc::new(Health::default()),
            objects: BTreeMap::new(),
            started: false,
            written: BTreeMap::new(),
            retries: Retries::new(opts_backoff),
            duplicates: BTreeMap::new(),
            dir_error: None,
            file_errors: BTreeSet::new(),
        }
    }

    /// The status of an object, as last written.
    pub fn status(&self, kind: &str, name: &str) -> Option<&Value> {
        self.objects
            .get(&Key {
                kind: kind.into(),
                name: name.into(),
            })
            .map(|t| &t.status)
    }

    /// A Machine's status.
    pub fn machine_status(&self, name: &str) -> Option<MachineStatus> {
        self.status("Machine", name)
            .and_then(|v| serde_json::from_value(v.clone()).ok())
    }

    /// Whether an object is still tracked (a deleted one until its
    /// finalizer ran).
    pub fn tracks(&self, kind: &str, name: &str) -> bool {
        self.objects
            .get(&Key {
                kind: kind.into(),
                name: name.into(),
            })
            .is_some_and(|t| !t.finalized)
    }

    /// Why an object's manifest cannot be followed (unreadable, missing,
    /// its name declared by several documents), if it cannot.
    pub fn problem(&self, kind: &str, name: &str) -> Option<&str> {
        let key = Key {
            kind: kind.into(),
            name: name.into(),
        };
        self.objects
            .get(&key)
            .and_then(|t| t.problem.as_deref())
            .or_else(|| self.duplicates.get(&key).map(|(_, m)| m.as_str()))
    }

    fn scan(&mut self) {
        let now = Instant::now();
        if !self.started {
            self.started = true;
            // Objects known from a previous run: kept (as last applied)
            // until their manifest is read, so that one missing then is
            // reported instead of forgotten.
            for (e, file) in read_statuses(&self.opts.dir) {
                let key = Key {
                    kind: e.kind.clone(),
                    name: e.name.clone(),
                };
                let Some(res) = e.finalizer.clone() else {
                    continue;
                };
                self.objects
                    .insert(key, Tracked::new(res, manifest_of(&file), e.status, now));
            }
        }
        let loaded = match load_dir_with(&self.opts.dir, &self.opts.dialects) {
            Ok(l) => l,
            Err(e) => {
                // Nothing is known: nothing is taken as removed.
                let msg = e.to_string();
                if self.dir_error.as_deref() != Some(msg.as_str()) {
                    warn!(error = %e, "manifest directory unreadable: every object is left as it is");
                    self.dir_error = Some(msg.clone());
                }
                self.health.set_ready(false);
                let now = crate::types::now_rfc3339();
                for t in self.objects.values_mut() {
                    report_problem(&t.res, &mut t.status, &msg, &now);
                    t.problem = Some(msg.clone());
                }
                return;
            }
        };
        if let Some(e) = self.dir_error.take() {
            info!(was = e.as_str(), "manifest directory readable again");
        }
        // Each error is said when it appears, not at every read.
        let mut unreadable: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
        let mut errors = BTreeSet::new();
        for (f, e) in loaded.errors {
            let text = e.to_string();
            if !self.file_errors.contains(&text) {
                warn!(error = %e, "manifest error: its objects are left as they are");
            }
            errors.insert(text.clone());
            unreadable.entry(f).or_default().push(text);
        }
        self.file_errors = errors;
        let mut seen = BTreeSet::new();
        // A name two documents declare: what exists is left as it is
        // (not updated, not deleted, nothing made) and both are reported.
        self.duplicates.clear();
        for d in &loaded.duplicates {
            seen.insert(d.key.clone());
            let message = d.message();
            match self.objects.get_mut(&d.key) {
                Some(t) => t.problem = Some(message),
                None => {
                    if let Some((file, _)) = d.docs.first() {
                        self.duplicates
                            .insert(d.key.clone(), (file.clone(), message));
                    }
                }
            }
        }
        let mut origins = loaded.origins;
        for (r, file) in loaded.found {
            let key = r.key();
            seen.insert(key.clone());
            let origin = origins.remove(&key);
            match self.objects.get_mut(&key) {
                Some(t) => {
                    let deleting = has_finalizer(&r) && r.deletion_requested();
                    if t.res != r || t.problem.is_some() || t.deleting != deleting {
                        if t.res != r {
                            t.finalized = false;
                        }
                        t.deleting = deleting;
                        t.res = r;
                        t.problem = None;
                        t.due = now;
                        t.generation += 1;
                        t.edited = true;
                        // A new spec starts its backoff over.
                        self.retries.succeeded(&key.to_string());
                    }
                    t.file = file;
                    t.missing_since = None;
                    t.origin = origin;
                }
                None => {
                    let mut t = Tracked::new(r, file, Value::Null, now);
                    t.origin = origin;
                    self.objects.insert(key, t);
                }
            }
        }
        let gone: Vec<Key> = self
            .objects
            .keys()
            .filter(|k| !seen.contains(*k))
            .cloned()
            .collect();
        let instant = Instant::now();
        let grace = self.opts.removal_grace;
        for k in gone {
            let referenced = self.referenced(&k);
            let removal = self.removal_deletes(&k, &seen);
            let Some(t) = self.objects.get_mut(&k) else {
                continue;
            };
            if let Some(errors) = unreadable.get(&t.file) {
                // Its file is there but unreadable: keep the object.
                let p = errors.join("; ");
                if t.problem.as_ref() != Some(&p) {
                    warn!(object = %k, "manifest unreadable: left as it is");
                }
                t.problem = Some(p);
                t.missing_since = None;
            } else if has_finalizer(&t.res) && !t.finalized && t.deleting {
                // Its deletion was asked for: it goes on without the
                // document (as after a restart).
            } else if let (Some(cluster), false) = (&removal, t.finalized) {
                // Its provider says that removing it deletes it: once it
                // stays missing.
                match t.missing_since {
                    Some(since) if instant.duration_since(since) >= grace => {
                        info!(object = %k, cluster = cluster.as_str(), "document removed and its cluster says deleteOnRemoval: deleting");
                        t.deleting = true;
                        t.problem = None;
                        t.due = instant;
                        t.missing_since = None;
                    }
                    _ => {
                        if t.missing_since.is_none() {
                            t.missing_since = Some(instant);
                            warn!(object = %k, file = %t.file.display(), "manifest missing: deleted if still missing in {}s (deleteOnRemoval)", grace.as_secs());
                        }
                        t.problem = Some(format!(
                            "{k} is no longer in {}: deleted if it is still missing {}s after it was first missed (deleteOnRemoval of ProxmoxCluster {cluster})",
                            t.file.display(),
                            grace.as_secs()
                        ));
                    }
                }
            } else if has_finalizer(&t.res) && !t.finalized {
                // Only the delete annotation deletes (or a removal its
                // provider opted into); a vanished document is an error
                // to report.
                let p = format!(
                    "{k} is no longer in {}: left as it is (to delete it, set the annotation {}: \"true\")",
                    t.file.display(),
                    crate::types::DELETE_ANNOTATION
                );
                if t.problem.as_ref() != Some(&p) {
                    warn!(object = %k, file = %t.file.display(), "manifest missing: left as it is; set the annotation pve.fake-pve.io/delete: \"true\" to delete");
                }
                t.problem = Some(p);
                // A removal counts only while its provider says so.
                t.missing_since = None;
            } else if referenced {
                // Clusters and secrets stay while deletions need them.
                t.deleting = true;
            } else {
                self.objects.remove(&k);
            }
        }
        let now = crate::types::now_rfc3339();
        for t in self.objects.values_mut() {
            if let Some(p) = &t.problem {
                report_problem(&t.res, &mut t.status, p, &now);
            }
        }
    }

    /// The cluster that makes the removal of `k`'s document a deletion:
    /// `k` is a Machine or MachineSnapshot made from a document whose
    /// provider said `deleteOnRemoval: true`, and its cluster is declared
    /// in this read of the directory (`seen`), readable, and still says
    /// so. Anything else (the provider's document gone, unreadable, or
    /// changed) keeps the object.
    fn removal_deletes(&self, k: &Key, seen: &BTreeSet<Key>) -> Option<String> {
        let t = self.objects.get(k)?;
        if !has_finalizer(&t.res) || !t.res.removal_deletes() || t.deleting {
            return None;
        }
        let cluster = match &t.res {
            Resource::Machine(m) => m.spec.cluster.clone(),
            Resource::MachineSnapshot(s) => {
                let m = self.objects.get(&Key {
                    kind: "Machine".into(),
                    name: s.spec.machine.clone(),
                })?;
                match &m.res {
                    Resource::Machine(m) => m.spec.cluster.clone(),
                    _ => return None,
                }
            }
            _ => return None,
        };
        let ck = Key {
            kind: "ProxmoxCluster".into(),
            name: cluster.clone(),
        };
        let c = self.objects.get(&ck)?;
        (seen.contains(&ck) && c.problem.is_none() && !c.deleting && c.res.removal_deletes())
            .then_some(cluster)
    }

    /// Whether a deleting object still needs `k` (a cluster or secret).
    fn referenced(&self, k: &Key) -> bool {
        if !matches!(k.kind.as_str(), "ProxmoxCluster" | "Secret") {
            return false;
        }
        self.objects
            .values()
            .any(|t| t.deleting && !t.finalized && has_finalizer(&t.res))
    }

    fn world(&self) -> World {
        let mut w = World {
            dir: self.opts.dir.clone(),
            ..World::default()
        };
        for t in self.objects.values() {
            match &t.res {
                Resource::ProxmoxCluster(c) => {
                    w.clusters.insert(c.metadata.name.clone(), c.clone());
                }
                Resource::ProxmoxNode(n) => w.nodes.push(n.clone()),
                Resource::Secret(s) => {
                    w.secrets.insert(s.metadata.name.clone(), s.clone());
                }
                Resource::Machine(_) if t.finalized => {}
                Resource::Machine(m) => {
                    let st = serde_json::from_value(t.status.clone()).unwrap_or_default();
                    w.machines.insert(m.metadata.name.clone(), (m.clone(), st));
                }
                Resource::MachineImage(i) => {
                    let st = serde_json::from_value(t.status.clone()).unwrap_or_default();
                    w.images.insert(i.metadata.name.clone(), (i.clone(), st));
                }
                Resource::MachineSnapshot(_) => {}
            }
        }
        w
    }

    /// When `key` is looked at again: the one retry policy of both modes
    /// ([`Retries`]) for errors, soon while PVE works, else at the resync.
    fn schedule(&mut self, key: &Key, error: Option<&Error>, wait: bool) {
        let k = key.to_string();
        let delay = match error {
            Some(e) => self
                .retries
                .failed(&k, e.is_retryable())
                .unwrap_or(self.opts.resync),
            None => {
                self.retries.succeeded(&k);
                if wait {
                    self.retries.backoff.base
                } else {
                    self.opts.resync
                }
            }
        };
        if let Some(t) = self.objects.get_mut(key) {
            t.due = Instant::now() + delay;
        }
    }

    /// One pass: read the directory, reconcile what is due (everything
    /// with `force`), write the status files. Returns how many objects
    /// were reconciled.
    pub async fn pass(&mut self, force: bool) -> usize {
        self.health.beat();
        self.scan();
        let now = Instant::now();
        let due = |t: &Tracked| force || t.due <= now;
        let mut count = 0;
        let order = [
            "ProxmoxCluster",
            "ProxmoxNode",
            "MachineImage",
            "Machine",
            "MachineSnapshot",
        ];
        for kind in order {
            let world = Arc::new(self.world());
            let keys: Vec<Key> = self
                .objects
                .iter()
                .filter(|(k, t)| {
                    k.kind == kind
                        && due(t)
                        && t.problem.is_none()
                        && !t.finalized
                        && (!t.deleting || has_finalizer(&t.res))
                })
                .map(|(k, _)| k.clone())
                .collect();
            let sem = Arc::new(Semaphore::new(self.opts.max_concurrent.max(1)));
            let mut set = tokio::task::JoinSet::new();
            for k in keys {
                let Some(t) = self.objects.get(&k).cloned() else {
                    continue;
                };
                let (op, world, sem) = (self.operator.clone(), world.clone(), sem.clone());
                count += 1;
                set.spawn(async move {
                    let _permit = sem.acquire_owned().await;
                    let r = reconcile_one(&op, &world, &t, &|_| {}).await;
                    (k, r)
                });
            }
            // The loop is alive while it waits on PVE: it beats.
            let mut beat = tokio::time::interval(self.health.beat_every());
            loop {
                let j = tokio::select! {
                    j = set.join_next() => j,
                    _ = beat.tick() => {
                        self.health.beat();
                        continue;
                    }
                };
                let Some(j) = j else {
                    break;
                };
                let Ok((k, (status, finalized, error, wait))) = j else {
                    continue;
                };
                if let Some(t) = self.objects.get_mut(&k) {
                    t.status = status;
                    if finalized {
                        info!(object = %k, "finalized");
                        t.finalized = true;
                        report_deleted(&t.res, &mut t.status, &crate::types::now_rfc3339());
                    }
                }
                self.schedule(&k, error.as_ref(), wait);
            }
        }
        self.update_metrics();
        self.write_statuses(None);
        self.health.beat();
        // Not ready while the manifests cannot be read.
        self.health.set_ready(self.dir_error.is_none());
        count
    }

    fn update_metrics(&self) {
        let mut counts: BTreeMap<(String, String), u64> = BTreeMap::new();
        for t in self.objects.values() {
            if let Resource::Machine(_) = t.res {
                let st: MachineStatus =
                    serde_json::from_value(t.status.clone()).unwrap_or_default();
                *counts
                    .entry((st.phase.as_str().to_string(), st.node.unwrap_or_default()))
                    .or_default() += 1;
            }
        }
        self.operator.metrics.set_machines(counts);
    }

    /// Writes the status files that changed: all of them (and removes
    /// those of manifests whose objects are all gone), or with `only`
    /// the ones of those manifests.
    fn write_statuses(&mut self, only: Option<&BTreeSet<PathBuf>>) {
        let mut files: BTreeMap<PathBuf, Vec<StatusEntry>> = BTreeMap::new();
        for (k, t) in &self.objects {
            if matches!(t.res, Resource::Secret(_)) || (t.deleting && !has_finalizer(&t.res)) {
                continue;
            }
            let status = if t.status.is_null() && k.kind == "Machine" {
                queued_status()
            } else {
                t.status.clone()
            };
            // The other system's object it comes from, in its shape,
            // after it.
            let theirs = t.origin.as_ref().and_then(|o| {
                let st = serde_json::from_value::<MachineStatus>(status.clone()).ok()?;
                Some(StatusEntry {
                    api_version: Some(o.api_version.clone()),
                    kind: o.kind.clone(),
                    name: o.name.clone(),
                    status: crate::dialects::foreign_status(&o.api_version, &o.kind, &st)?,
                    finalizer: None,
                })
            });
            let entries = files.entry(status_path(&t.file)).or_default();
            entries.push(StatusEntry {
                api_version: None,
                kind: k.kind.clone(),
                name: k.name.clone(),
                status,
                finalizer: has_finalizer(&t.res).then(|| t.res.clone()),
            });
            entries.extend(theirs);
        }
        // Names several documents declare, for which nothing was made.
        let now = crate::types::now_rfc3339();
        for (k, (file, message)) in &self.duplicates {
            if k.kind == "Secret" {
                continue;
            }
            let mut status = Value::Null;
            report_problem_of(&k.kind, &mut status, message, &now);
            files
                .entry(status_path(file))
                .or_default()
                .push(StatusEntry {
                    api_version: None,
                    kind: k.kind.clone(),
                    name: k.name.clone(),
                    status,
                    finalizer: None,
                });
        }
        if let Some(only) = only {
            files.retain(|p, _| only.contains(p));
        }
        // Status files of manifests whose objects are all gone.
        let stale: Vec<PathBuf> = if only.is_some() {
            Vec::new()
        } else {
            self.written
                .keys()
                .filter(|p| !files.contains_key(*p))
                .cloned()
                .chain(
                    read_statuses(&self.opts.dir)
                        .into_iter()
                        .map(|(_, f)| f)
                        .filter(|f| !files.contains_key(f)),
                )
                .collect()
        };
        for p in stale {
            let _ = std::fs::remove_file(&p);
            self.written.remove(&p);
        }
        for (p, entries) in files {
            let text = match serde_yaml::to_string(&entries) {
                Ok(t) => format!("# Written by pve-operator; edits are overwritten.\n{t}"),
                Err(e) => {
                    warn!(error = %e, "status not serializable");
                    continue;
                }
            };
            if self.written.get(&p) == Some(&text) {
                continue;
            }
            let tmp = p.with_extension("yaml.tmp");
            let ok = std::fs::write(&tmp, &text).and_then(|()| std::fs::rename(&tmp, &p));
            match ok {
                Ok(()) => {
                    self.written.insert(p, text);
                }
                Err(e) => warn!(file = %p.display(), error = %e, "cannot write status"),
            }
        }
    }
}

type One = (Value, bool, Option<Error>, bool);

/// One reconcile of `t`; a Machine's status goes to `progress` after
/// each step that changed PVE.
async fn reconcile_one(
    op: &Operator,
    world: &World,
    t: &Tracked,
    progress: &(dyn Fn(&MachineStatus) + Send + Sync),
) -> One {
    match &t.res {
        Resource::ProxmoxCluster(c) => {
            let st: ProxmoxClusterStatus = op.reconcile_cluster(world, &c.metadata.name).await;
            (js(&st), false, None, false)
        }
        Resource::ProxmoxNode(n) => {
            let st: ProxmoxNodeStatus = op.reconcile_node(world, n).await;
            (js(&st), false, None, false)
        }
        Resource::Machine(m) => {
            let old: MachineStatus = serde_json::from_value(t.status.clone()).unwrap_or_default();
            let o = op
                .reconcile_machine_with_progress(world, m, &old, t.deleting, progress)
                .await;
            (js(&o.status), o.finalized, o.error, o.wait)
        }
        Resource::MachineSnapshot(s) => {
            let old: MachineSnapshotStatus =
                serde_json::from_value(t.status.clone()).unwrap_or_default();
            let (st, done, e) = op.reconcile_snapshot(world, s, &old, t.deleting).await;
            (js(&st), done, e, false)
        }
        Resource::MachineImage(i) => {
            let old: MachineImageStatus =
                serde_json::from_value(t.status.clone()).unwrap_or_default();
            let (st, e) = op.reconcile_image(world, i, &old).await;
            let wait = !st.ready && e.is_none() && st.message.is_some();
            (js(&st), false, e, wait)
        }
        Resource::Secret(_) => (Value::Null, false, None, false),
    }
}

/// The status of a Machine not reconciled yet.
fn queued_status() -> Value {
    let mut st = MachineStatus::default();
    st.conditions.push(crate::types::Condition::new(
        "Ready",
        false,
        "Queued",
        "waiting for its first reconcile",
    ));
    js(&st)
}

/// Writes a manifest problem into a status: the Ready condition of a
/// Machine (reason `ManifestError`, the rest kept), the `message` of the
/// others.
fn report_problem(res: &Resource, status: &mut Value, problem: &str, now: &str) {
    report_problem_of(res.kind(), status, problem, now);
}

/// [`report_problem`] by kind.
fn report_problem_of(kind: &str, status: &mut Value, problem: &str, now: &str) {
    match kind {
        "Machine" => {
            let mut st: MachineStatus = serde_json::from_value(status.clone()).unwrap_or_default();
            crate::types::set_condition(
                &mut st.conditions,
                crate::types::Condition::new("Ready", false, "ManifestError", problem),
                now,
            );
            *status = js(&st);
        }
        "Secret" => {}
        _ => {
            if !status.is_object() {
                *status = Value::Object(serde_json::Map::new());
            }
            status["message"] = Value::String(problem.to_string());
        }
    }
}

/// Writes a finished deletion into a status.
fn report_deleted(res: &Resource, status: &mut Value, now: &str) {
    let what = match res {
        Resource::Machine(m) if m.spec.deletion_policy == crate::types::DeletionPolicy::Orphan => {
            "deleted; its VM was left in PVE (deletionPolicy Orphan)"
        }
        _ => "deleted",
    };
    match res {
        Resource::Machine(_) => {
            let mut st: MachineStatus = serde_json::from_value(status.clone()).unwrap_or_default();
            st.vmid = None;
            st.node = None;
            st.ip_addresses.clear();
            crate::types::set_condition(
                &mut st.conditions,
                crate::types::Condition::new("Ready", false, "Deleted", what),
                now,
            );
            *status = js(&st);
        }
        _ => {
            if !status.is_object() {
                *status = Value::Object(serde_json::Map::new());
            }
            status["ready"] = Value::Bool(false);
            status["message"] = Value::String(what.to_string());
        }
    }
}
