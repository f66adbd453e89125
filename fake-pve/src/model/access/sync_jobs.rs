//! Realm sync jobs: `/cluster/jobs/realm-sync` (the `realm-sync` sections
//! of `jobs.cfg`, pve-access-control `API2/Jobs/RealmSync.pm`,
//! `Jobs/RealmSync.pm`).
//!
//! A job runs when the emulated clock passes its schedule's next event
//! after its last run (or its creation): pvescheduler then starts the
//! realm's sync as `root@pam`, an `auth-realm-sync` task. A clock that
//! jumps over several events runs it once.

use super::realms::SyncOptions;
use super::*;
use crate::model::backup::schedule::CalendarEvent;
use crate::model::conf_value::ConfValue;

/// The options a job keeps (`enabled`, `schedule`, `comment`, `scope`,
/// `realm`, `remove-vanished`, `enable-new`), with whether each is
/// required and fixed.
const OPTIONS: &[(&str, bool, bool)] = &[
    ("comment", false, false),
    ("enable-new", false, false),
    ("enabled", false, false),
    ("realm", true, true),
    ("remove-vanished", false, false),
    ("schedule", true, false),
    ("scope", true, false),
];

/// One realm sync job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyncJob {
    options: BTreeMap<String, ConfValue>,
    /// The last run's start (or the job's creation), epoch seconds.
    last_run: i64,
    /// Whether the job has run yet (its state file has a UPID).
    #[serde(default)]
    ran: bool,
}

impl SyncJob {
    /// The options as `jobs.cfg` keeps them, each typed as the schema
    /// types it.
    pub fn options(&self) -> &BTreeMap<String, ConfValue> {
        &self.options
    }

    /// The last run's start, once the job has run.
    pub fn last_run(&self) -> Option<i64> {
        self.ran.then_some(self.last_run)
    }

    /// The next run after the last (or, before the first, after `now`),
    /// by the job's schedule.
    pub fn next_run(&self, now: i64) -> Option<i64> {
        let last = if self.ran { self.last_run } else { now };
        self.text("schedule")
            .and_then(|s| CalendarEvent::parse(&s).ok())
            .and_then(|ev| ev.next_after(last))
    }

    fn text(&self, k: &str) -> Option<String> {
        self.options.get(k).map(ConfValue::text)
    }

    fn enabled(&self) -> bool {
        self.options
            .get("enabled")
            .is_none_or(|v| v != &ConfValue::Int(0))
    }

    /// The sync this job runs.
    pub fn sync_options(&self) -> SyncOptions {
        SyncOptions {
            scope: self.text("scope").unwrap_or_else(|| "both".into()),
            remove_vanished: self
                .text("remove-vanished")
                .unwrap_or_else(|| "none".into()),
            enable_new: self
                .options
                .get("enable-new")
                .is_none_or(|v| v != &ConfValue::Int(0)),
        }
    }
}

fn typed(k: &str, v: &str) -> ConfValue {
    if matches!(k, "enabled" | "enable-new") {
        return ConfValue::Int(i64::from(matches!(v, "1" | "true" | "yes" | "on")));
    }
    v.into()
}

/// A param exception raised inside `cfs_lock_file` and died with again
/// as text (`die "$@"`): a 500 whose message is the stringified
/// exception.
fn stringified(param: &str, msg: &str) -> Error {
    Error::failed(format!(
        "400 Parameter verification failed.\n{param}: {msg}"
    ))
}

fn check_schedule(opts: &BTreeMap<String, String>) -> Result<()> {
    if let Some(s) = opts.get("schedule") {
        CalendarEvent::parse(s).map_err(|e| Error::invalid("schedule", e.to_string()))?;
    }
    Ok(())
}

impl Access {
    /// The realm-sync jobs by id.
    pub fn sync_jobs(&self) -> impl Iterator<Item = (&String, &SyncJob)> {
        self.sync_jobs.iter()
    }

    /// A realm-sync job.
    ///
    /// # Errors
    /// 400 `id: No such job 'x'`.
    pub fn sync_job(&self, id: &str) -> Result<&SyncJob> {
        self.sync_jobs
            .get(id)
            .ok_or_else(|| Error::invalid("id", format!("No such job '{id}'")))
    }

    /// `POST /cluster/jobs/realm-sync/{id}`. `taken` says whether another
    /// job of `jobs.cfg` (a backup job) has the id.
    ///
    /// # Errors
    /// `Job 'x' already exists`, a missing required option, an unknown
    /// or non-LDAP/AD realm (PVE's stringified 400 inside a 500).
    pub fn create_sync_job(
        &mut self,
        id: &str,
        opts: BTreeMap<String, String>,
        taken: bool,
        now: i64,
    ) -> Result<()> {
        check_schedule(&opts)?;
        if taken || self.sync_jobs.contains_key(id) {
            return Err(Error::exists(format!("Job '{id}' already exists")));
        }
        if let Some((k, _, _)) = OPTIONS
            .iter()
            .find(|(k, req, _)| *req && !opts.contains_key(*k))
        {
            return Err(Error::failed(format!(
                "missing value for required option '{k}'"
            )));
        }
        let realm = &opts["realm"];
        let Some(r) = self.realms.get(realm) else {
            return Err(stringified("realm", &format!("No such realm '{realm}'")));
        };
        if !r.kind().is_directory() {
            return Err(stringified("realm", "Only LDAP/AD realms can be synced."));
        }
        let options = opts.iter().map(|(k, v)| (k.clone(), typed(k, v))).collect();
        self.sync_jobs.insert(
            id.to_string(),
            SyncJob {
                options,
                last_run: now,
                ran: false,
            },
        );
        Ok(())
    }

    /// `PUT /cluster/jobs/realm-sync/{id}`.
    ///
    /// # Errors
    /// `no such realm-sync job`, PVE's `delete` refusals.
    pub fn update_sync_job(
        &mut self,
        id: &str,
        opts: BTreeMap<String, String>,
        delete: &[String],
    ) -> Result<()> {
        if opts.is_empty() {
            return Err(Error::failed("no job options specified"));
        }
        check_schedule(&opts)?;
        let Some(job) = self.sync_jobs.get_mut(id) else {
            return Err(Error::not_found("no such realm-sync job"));
        };
        for k in delete {
            let Some((_, req, fixed)) = OPTIONS.iter().find(|(o, _, _)| o == k) else {
                return Err(Error::failed(format!("no such option '{k}'")));
            };
            if *req {
                return Err(Error::failed(format!(
                    "unable to delete required option '{k}'"
                )));
            }
            if *fixed {
                return Err(Error::failed(format!(
                    "unable to delete fixed option '{k}'"
                )));
            }
            if opts.contains_key(k) {
                return Err(Error::failed(format!(
                    "cannot set and delete property '{k}' at the same time!"
                )));
            }
        }
        for k in delete {
            job.options.remove(k);
        }
        for (k, v) in &opts {
            job.options.insert(k.clone(), typed(k, v));
        }
        Ok(())
    }

    /// `DELETE /cluster/jobs/realm-sync/{id}`.
    ///
    /// # Errors
    /// PVE's stringified 400 `id: No such job 'x'` inside a 500.
    pub fn delete_sync_job(&mut self, id: &str) -> Result<()> {
        self.sync_jobs
            .remove(id)
            .map(|_| ())
            .ok_or_else(|| stringified("id", &format!("No such job '{id}'")))
    }

    /// The enabled jobs whose next event after their last run is due by
    /// `now`: each is marked as run at `now` and answered with its realm,
    /// options and the event's time.
    pub fn due_sync_jobs(&mut self, now: i64) -> Vec<(String, SyncOptions, i64)> {
        let mut out = Vec::new();
        for job in self.sync_jobs.values_mut() {
            if !job.enabled() {
                continue;
            }
            let Some(next) = job
                .text("schedule")
                .and_then(|s| CalendarEvent::parse(&s).ok())
                .and_then(|ev| ev.next_after(job.last_run))
            else {
                continue;
            };
            if next > now {
                continue;
            }
            job.last_run = now;
            job.ran = true;
            if let Some(realm) = job.text("realm") {
                out.push((realm, job.sync_options(), next));
            }
        }
        out
    }
}

impl Access {
    /// The realm syncs whose schedule is due by `now_ms`, as pvescheduler
    /// starts them: `auth-realm-sync` workers, each with the time it
    /// starts at (ms).
    pub(crate) fn due_realm_syncs(&mut self, now_ms: i64) -> Vec<(crate::model::Worker, i64)> {
        self.due_sync_jobs(now_ms.div_euclid(1000))
            .into_iter()
            .map(|(realm, options, at)| {
                let mut worker = crate::model::Worker::new("auth-realm-sync", &realm);
                worker.effect = crate::model::TaskEffect::RealmSync {
                    realm,
                    options,
                    dry_run: false,
                };
                (worker, at.saturating_mul(1000))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    fn with_ldap() -> Access {
        let mut a = Access::default();
        a.realms_mut()
            .create(
                "corp",
                "ldap",
                opts(&[("server1", "x"), ("base_dn", "dc=x"), ("user_attr", "uid")]),
                None,
                None,
            )
            .expect("realm");
        a
    }

    #[test]
    fn jobs_run_on_their_schedule() {
        let mut a = with_ldap();
        a.create_sync_job(
            "nightly",
            opts(&[("realm", "corp"), ("schedule", "daily"), ("scope", "users")]),
            false,
            1_000,
        )
        .expect("create");
        let job = a.sync_job("nightly").expect("job");
        assert_eq!(job.next_run(1_000), Some(86_400));
        assert_eq!(job.last_run(), None);
        assert!(a.due_sync_jobs(86_399).is_empty());
        let due = a.due_sync_jobs(86_400);
        assert_eq!(due.len(), 1);
        assert_eq!(due[0].0, "corp");
        assert_eq!(due[0].1.scope, "users");
        assert_eq!(due[0].2, 86_400);
        assert!(a.due_sync_jobs(86_401).is_empty());
        assert_eq!(a.sync_job("nightly").expect("job").last_run(), Some(86_400));
    }

    #[test]
    fn job_refusals() {
        let mut a = with_ldap();
        let e = a
            .create_sync_job(
                "j",
                opts(&[("realm", "pve"), ("schedule", "daily"), ("scope", "users")]),
                false,
                0,
            )
            .expect_err("pve");
        assert_eq!(
            e.message(),
            "400 Parameter verification failed.\nrealm: Only LDAP/AD realms can be synced."
        );
        let e = a
            .create_sync_job(
                "j",
                opts(&[("realm", "corp"), ("schedule", "daily")]),
                false,
                0,
            )
            .expect_err("scope");
        assert_eq!(e.message(), "missing value for required option 'scope'");
        let e = a
            .create_sync_job(
                "j",
                opts(&[("realm", "corp"), ("schedule", "daily"), ("scope", "users")]),
                true,
                0,
            )
            .expect_err("taken");
        assert_eq!(e.message(), "Job 'j' already exists");
        a.create_sync_job(
            "j",
            opts(&[("realm", "corp"), ("schedule", "daily"), ("scope", "users")]),
            false,
            0,
        )
        .expect("create");
        let e = a
            .update_sync_job("j", opts(&[("schedule", "hourly")]), &["scope".into()])
            .expect_err("required");
        assert_eq!(e.message(), "unable to delete required option 'scope'");
        a.update_sync_job("j", opts(&[("schedule", "hourly"), ("enabled", "0")]), &[])
            .expect("update");
        assert_eq!(
            a.sync_job("j").expect("read").options()["enabled"],
            ConfValue::Int(0)
        );
        assert!(a.due_sync_jobs(100_000).is_empty());
        a.delete_sync_job("j").expect("delete");
        assert!(a.delete_sync_job("j").is_err());
    }
}
