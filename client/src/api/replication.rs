//! Storage replication: the jobs of `/cluster/replication` and each
//! node's view of them under `/nodes/{node}/replication` (status, log,
//! `schedule_now`).
//!
//! ```no_run
//! # async fn f(client: &pve_client::Client) -> pve_client::error::Result<()> {
//! use pve_client::api::replication::ReplicationJobConfig;
//!
//! let repl = client.replication();
//! repl.create("100-0", "pve2", &ReplicationJobConfig::default().schedule("*/30"))
//!     .await?;
//! for job in repl.status("pve1", None).await? {
//!     println!("{} last synced at {:?}", job.id, job.last_sync);
//! }
//! # Ok(())
//! # }
//! ```

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::seg;
use super::tasks::TaskLog;
use crate::Client;
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// The replication calls; see [`Client::replication`].
#[derive(Debug, Clone, Copy)]
pub struct Replication<'a> {
    client: &'a Client,
}

impl Client {
    /// The `/cluster/replication` and `/nodes/{node}/replication` calls.
    pub fn replication(&self) -> Replication<'_> {
        Replication { client: self }
    }
}

/// A replication job as `/cluster/replication` lists it, and (with the
/// state's figures) as a node's `/replication` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplicationJob {
    /// `<guest>-<jobnum>`.
    pub id: String,
    /// The guest's VMID.
    #[serde(deserialize_with = "de::u64_lenient")]
    pub guest: u64,
    /// The job number.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub jobnum: Option<u64>,
    /// The target node.
    #[serde(default)]
    pub target: String,
    /// The node the guest runs on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The schedule (`*/15` when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// The rate limit in MB/s.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub rate: Option<f64>,
    /// The comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Whether the job is disabled.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub disable: Option<bool>,
    /// `local` or `full` once the job is marked for removal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remove_job: Option<String>,
    /// \[node status\] the start of the last successful run (0: never).
    #[serde(default, deserialize_with = "de::opt_i64")]
    pub last_sync: Option<i64>,
    /// \[node status\] the start of the last run.
    #[serde(default, deserialize_with = "de::opt_i64")]
    pub last_try: Option<i64>,
    /// \[node status\] when the job is next due (0: not scheduled).
    #[serde(default, deserialize_with = "de::opt_i64")]
    pub next_sync: Option<i64>,
    /// \[node status\] failed runs since the last success.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub fail_count: Option<u64>,
    /// \[node status\] the last run's error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// \[node status\] how long the last run took, in seconds.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub duration: Option<f64>,
    /// Anything else (`type`, `vmtype`, `digest`, `pid`).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The settings of `create` and `update`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReplicationJobConfig {
    /// `schedule`, a calendar event.
    pub schedule: Option<String>,
    /// `rate` in MB/s.
    pub rate: Option<f64>,
    /// `comment`.
    pub comment: Option<String>,
    /// `disable`.
    pub disable: Option<bool>,
    /// `delete` (update only).
    pub delete: Vec<String>,
    /// `digest` (update only).
    pub digest: Option<String>,
}

impl ReplicationJobConfig {
    /// Sets the schedule.
    #[must_use]
    pub fn schedule(mut self, s: &str) -> Self {
        self.schedule = Some(s.into());
        self
    }

    /// Sets the rate limit.
    #[must_use]
    pub fn rate(mut self, mb_per_s: f64) -> Self {
        self.rate = Some(mb_per_s);
        self
    }

    /// Sets the comment.
    #[must_use]
    pub fn comment(mut self, c: &str) -> Self {
        self.comment = Some(c.into());
        self
    }

    /// Disables (or enables) the job.
    #[must_use]
    pub fn disable(mut self, yes: bool) -> Self {
        self.disable = Some(yes);
        self
    }

    /// Options to delete.
    #[must_use]
    pub fn delete(mut self, keys: &[&str]) -> Self {
        self.delete = keys.iter().map(|k| (*k).to_string()).collect();
        self
    }

    fn params(&self) -> Params {
        Params::new()
            .opt("schedule", self.schedule.as_deref())
            .opt("rate", self.rate)
            .opt("comment", self.comment.as_deref())
            .opt("disable", self.disable)
            .opt(
                "delete",
                (!self.delete.is_empty()).then(|| self.delete.join(",")),
            )
            .opt("digest", self.digest.as_deref())
    }
}

impl Replication<'_> {
    /// `GET /cluster/replication` (`index`): the jobs of the guests the
    /// caller may audit.
    ///
    /// # Errors
    /// As any call.
    pub async fn index(&self) -> Result<Vec<ReplicationJob>> {
        self.client
            .call(Method::GET, "/cluster/replication", &Params::new())
            .await
    }

    /// `GET /cluster/replication/{id}` (`read`), with the file's digest
    /// in `extra`.
    ///
    /// # Errors
    /// `no such replication job 'x'`.
    pub async fn read(&self, id: &str) -> Result<ReplicationJob> {
        let path = format!("/cluster/replication/{}", seg(id));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST /cluster/replication` (`create`): a `local` job of the guest
    /// named by `id` to `target`.
    ///
    /// # Errors
    /// PVE's refusals (`Guest '100' does not exist.`, `No replicatable
    /// volumes found`, `missing replicate feature on volume '...'`).
    pub async fn create(&self, id: &str, target: &str, cfg: &ReplicationJobConfig) -> Result<()> {
        let params = cfg
            .params()
            .set("id", id)
            .set("type", "local")
            .set("target", target);
        let _: Value = self
            .client
            .call(Method::POST, "/cluster/replication", &params)
            .await?;
        Ok(())
    }

    /// `PUT /cluster/replication/{id}` (`update`).
    ///
    /// # Errors
    /// `no such job 'x'`, the digest check, bad options.
    pub async fn update(&self, id: &str, cfg: &ReplicationJobConfig) -> Result<()> {
        let path = format!("/cluster/replication/{}", seg(id));
        let _: Value = self.client.call(Method::PUT, &path, &cfg.params()).await?;
        Ok(())
    }

    /// `DELETE /cluster/replication/{id}` (`delete`): marks the job for
    /// removal (its next run removes it; `keep` leaves the target's
    /// data), or with `force` removes the entry at once.
    ///
    /// # Errors
    /// `no such job 'x'`.
    pub async fn delete(&self, id: &str, keep: bool, force: bool) -> Result<()> {
        let path = format!("/cluster/replication/{}", seg(id));
        let params = Params::new()
            .opt("keep", keep.then_some(true))
            .opt("force", force.then_some(true));
        let _: Value = self.client.call(Method::DELETE, &path, &params).await?;
        Ok(())
    }

    /// `GET /nodes/{node}/replication` (`status`): the node's jobs with
    /// their state, optionally of one guest.
    ///
    /// # Errors
    /// As any node call.
    pub async fn status(&self, node: &str, guest: Option<u32>) -> Result<Vec<ReplicationJob>> {
        let path = format!("/nodes/{}/replication", seg(node));
        let params = Params::new().opt("guest", guest);
        self.client.call(Method::GET, &path, &params).await
    }

    /// `GET /nodes/{node}/replication/{id}/status` (`job_status`).
    ///
    /// # Errors
    /// `no such replication job 'x'` for a job that is not the node's.
    pub async fn job_status(&self, node: &str, id: &str) -> Result<ReplicationJob> {
        let path = format!("/nodes/{}/replication/{}/status", seg(node), seg(id));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `GET /nodes/{node}/replication/{id}/log` (`read_job_log`): the
    /// node's log of the job's last run (`limit` 0 reads all).
    ///
    /// # Errors
    /// `no such replication job 'x'`.
    pub async fn read_job_log(
        &self,
        node: &str,
        id: &str,
        start: u64,
        limit: u64,
    ) -> Result<TaskLog> {
        let path = format!("/nodes/{}/replication/{}/log", seg(node), seg(id));
        let params = Params::new().set("start", start).set("limit", limit);
        let (lines, total) = self
            .client
            .call_with_total(Method::GET, &path, &params)
            .await?;
        Ok(TaskLog {
            lines,
            total: total.unwrap_or(0),
        })
    }

    /// `POST /nodes/{node}/replication/{id}/schedule_now`
    /// (`schedule_now`): a job that ran before is due at once.
    ///
    /// # Errors
    /// `no such replication job 'x'`.
    pub async fn schedule_now(&self, node: &str, id: &str) -> Result<()> {
        let path = format!("/nodes/{}/replication/{}/schedule_now", seg(node), seg(id));
        let _: Value = self
            .client
            .call(Method::POST, &path, &Params::new())
            .await?;
        Ok(())
    }
}
