//! The standalone loop's work queue: each object is reconciled on its
//! own (one worker per object at a time, at most `max_concurrent` at
//! once), its status file written when its reconcile ends, while the
//! directory keeps being read every `poll`, so that an edit made while
//! others run is picked up at the next read (and goes ahead of the
//! backlog). What is due: a new or changed object at once, one whose
//! reconcile failed after its backoff, one PVE still works on soon, the
//! others at the resync.

use std::collections::HashMap;

use tokio::task::JoinSet;

use super::*;

/// The order kinds start in when several are due: what the others
/// lean on first.
const ORDER: [&str; 5] = [
    "ProxmoxCluster",
    "ProxmoxNode",
    "MachineImage",
    "Machine",
    "MachineSnapshot",
];

fn rank(kind: &str) -> usize {
    ORDER.iter().position(|k| *k == kind).unwrap_or(ORDER.len())
}

/// What a worker hands back: the object, the generation of its document
/// it reconciled, and what the reconcile ended with.
type Done = (Key, u64, One);

/// What a worker tells while it runs: the object, which of its
/// reconciles ([`Tracked::runs`]), and its status after a step that
/// changed PVE.
type Progress = (Key, u64, Value);

impl Standalone {
    /// Whether `t` is to be reconciled (when due).
    fn wants_work(t: &Tracked) -> bool {
        !t.running && t.problem.is_none() && !t.finalized && (!t.deleting || has_finalizer(&t.res))
    }

    /// Starts workers for the due objects while there is room: edited
    /// ones first, then by kind ([`ORDER`]) and by when they fell due.
    fn dispatch(
        &mut self,
        set: &mut JoinSet<Done>,
        ids: &mut HashMap<tokio::task::Id, Key>,
        progress: &tokio::sync::mpsc::UnboundedSender<Progress>,
    ) {
        let room = self.opts.max_concurrent.max(1).saturating_sub(set.len());
        if room == 0 {
            return;
        }
        let now = Instant::now();
        let mut due: Vec<(bool, usize, Instant, Key)> = self
            .objects
            .iter()
            .filter(|(_, t)| Self::wants_work(t) && t.due <= now)
            .map(|(k, t)| (!t.edited, rank(&k.kind), t.due, k.clone()))
            .collect();
        if due.is_empty() {
            return;
        }
        due.sort();
        due.truncate(room);
        let world = Arc::new(self.world());
        for (.., k) in due {
            let Some(t) = self.objects.get_mut(&k) else {
                continue;
            };
            t.running = true;
            t.edited = false;
            t.runs += 1;
            let run = t.runs;
            let (snapshot, generation) = (t.clone(), t.generation);
            let (op, world) = (self.operator.clone(), world.clone());
            let key = k.clone();
            let tx = progress.clone();
            let task = set.spawn(async move {
                let tell = |st: &crate::types::MachineStatus| {
                    // The loop is gone only when it stops.
                    let _ = tx.send((key.clone(), run, js(st)));
                };
                let r = reconcile_one(&op, &world, &snapshot, &tell).await;
                (key, generation, r)
            });
            ids.insert(task.id(), k);
        }
    }

    /// When the next object that waits falls due (none: an hour away).
    fn next_due(&self) -> Instant {
        self.objects
            .values()
            .filter(|t| Self::wants_work(t))
            .map(|t| t.due)
            .min()
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(3600))
    }

    /// A worker's result: the status kept and its file written, the
    /// object scheduled again (at once when its document changed while
    /// it ran).
    fn finish(&mut self, (k, generation, (status, finalized, error, wait)): Done) {
        let Some(t) = self.objects.get_mut(&k) else {
            return;
        };
        t.running = false;
        t.status = status;
        if finalized {
            info!(object = %k, "finalized");
            t.finalized = true;
            report_deleted(&t.res, &mut t.status, &crate::types::now_rfc3339());
        }
        if let Some(p) = &t.problem {
            // Its document went wrong while it ran: say so still.
            report_problem(&t.res, &mut t.status, p, &crate::types::now_rfc3339());
        }
        let file = status_path(&t.file);
        if t.generation == generation {
            self.schedule(&k, error.as_ref(), wait);
        } else {
            t.due = Instant::now();
        }
        self.update_metrics();
        self.write_statuses(Some(&BTreeSet::from([file])));
    }

    /// A worker's status after a step: kept and its file written while
    /// the reconcile goes on.
    fn progress(&mut self, (k, run, status): Progress) {
        let Some(t) = self.objects.get_mut(&k) else {
            return;
        };
        // Told by a reconcile that has ended since: its result is newer.
        if !t.running || t.runs != run {
            return;
        }
        t.status = status;
        if let Some(p) = &t.problem {
            report_problem(&t.res, &mut t.status, p, &crate::types::now_rfc3339());
        }
        let file = status_path(&t.file);
        self.update_metrics();
        self.write_statuses(Some(&BTreeSet::from([file])));
    }

    /// One read of the directory, with its statuses and metrics.
    fn poll_dir(&mut self) {
        self.health.beat();
        self.scan();
        self.update_metrics();
        self.write_statuses(None);
        // Not ready while the manifests cannot be read.
        self.health.set_ready(self.dir_error.is_none());
    }

    /// Runs until `stop` resolves: reads the directory every `poll` and
    /// reconciles each object on its own as it falls due (see the
    /// module's documentation). Reconciles still running when `stop`
    /// resolves are dropped: the next start observes PVE afresh.
    pub async fn run(&mut self, stop: impl std::future::Future<Output = ()>) {
        tokio::pin!(stop);
        let mut poll = tokio::time::interval(self.opts.poll);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut beat = tokio::time::interval(self.health.beat_every());
        beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut set: JoinSet<Done> = JoinSet::new();
        let mut ids = HashMap::new();
        let (progress, mut told) = tokio::sync::mpsc::unbounded_channel::<Progress>();
        // The first read comes before any work.
        poll.tick().await;
        self.poll_dir();
        loop {
            self.dispatch(&mut set, &mut ids, &progress);
            let wake = tokio::time::Instant::from_std(self.next_due());
            tokio::select! {
                () = &mut stop => break,
                _ = poll.tick() => self.poll_dir(),
                Some(p) = told.recv() => self.progress(p),
                Some(j) = set.join_next_with_id(), if !set.is_empty() => match j {
                    Ok((id, done)) => {
                        ids.remove(&id);
                        self.finish(done);
                    }
                    Err(e) => {
                        // It is tried again after its backoff.
                        warn!(error = %e, "a reconcile ended abnormally");
                        if let Some(k) = ids.remove(&e.id()) {
                            if let Some(t) = self.objects.get_mut(&k) {
                                t.running = false;
                            }
                            // Not retryable: tried again at the resync.
                            let err = Error::NoProgress(format!("the reconcile of {k} ended abnormally: {e}"));
                            self.schedule(&k, Some(&err), false);
                        }
                    }
                },
                _ = beat.tick() => self.health.beat(),
                () = tokio::time::sleep_until(wake) => {}
            }
        }
        set.abort_all();
    }
}
