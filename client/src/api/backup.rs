//! Backups: `vzdump` and its defaults, `extractconfig`, pruning
//! (`prunebackups`), backup jobs (`/cluster/backup`) and the guests no
//! job covers; single files of a Proxmox Backup Server snapshot
//! (`file-restore` `list` and `download`). A restore is a
//! [`crate::api::qemu::CreateVm`] with an `archive`.
//!
//! ```no_run
//! # async fn f(client: &pve_client::Client) -> pve_client::error::Result<()> {
//! use pve_client::api::backup::Vzdump;
//!
//! let req = Vzdump::vmids(&[100]).storage("local").compress("zstd");
//! if let Some(upid) = client.backup().vzdump("pve", &req).await? {
//!     client.tasks().wait(&upid).await?;
//! }
//! # Ok(())
//! # }
//! ```

use std::collections::BTreeMap;

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::seg;
use super::tasks::Upid;
use crate::Client;
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// The backup calls; see [`Client::backup`].
#[derive(Debug, Clone, Copy)]
pub struct Backup<'a> {
    client: &'a Client,
}

impl Client {
    /// The backup calls.
    pub fn backup(&self) -> Backup<'_> {
        Backup { client: self }
    }
}

/// The request of `vzdump` (and the options of a backup job).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Vzdump {
    /// Options by PVE's names (`vmid`, `all`, `pool`, `mode`, ...).
    pub options: BTreeMap<String, String>,
}

impl Vzdump {
    /// These guests.
    pub fn vmids(vmids: &[u32]) -> Self {
        let list: Vec<String> = vmids.iter().map(u32::to_string).collect();
        Self::default().set("vmid", list.join(","))
    }

    /// Every guest (of the node).
    pub fn all() -> Self {
        Self::default().set("all", "1")
    }

    /// The guests of a pool.
    pub fn pool(pool: &str) -> Self {
        Self::default().set("pool", pool)
    }

    /// Any option.
    #[must_use]
    pub fn set(mut self, key: &str, value: impl Into<String>) -> Self {
        self.options.insert(key.into(), value.into());
        self
    }

    /// `storage`.
    #[must_use]
    pub fn storage(self, storage: &str) -> Self {
        self.set("storage", storage)
    }

    /// `mode`: `snapshot`, `suspend` or `stop`.
    #[must_use]
    pub fn mode(self, mode: &str) -> Self {
        self.set("mode", mode)
    }

    /// `compress`: `0`, `1`, `gzip`, `lzo` or `zstd`.
    #[must_use]
    pub fn compress(self, compress: &str) -> Self {
        self.set("compress", compress)
    }

    /// `notes-template` (`{{guestname}}`, `{{vmid}}`, ...).
    #[must_use]
    pub fn notes_template(self, template: &str) -> Self {
        self.set("notes-template", template)
    }

    /// `protected`.
    #[must_use]
    pub fn protected(self, yes: bool) -> Self {
        self.set("protected", if yes { "1" } else { "0" })
    }

    /// `prune-backups` (`keep-last=3,keep-daily=7`).
    #[must_use]
    pub fn prune_backups(self, keep: &str) -> Self {
        self.set("prune-backups", keep)
    }

    fn params(&self) -> Params {
        self.options
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }
}

/// A backup's entry in a prune listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PruneEntry {
    /// The backup volume.
    pub volid: String,
    /// `keep`, `remove`, `protected` or `renamed`.
    pub mark: String,
    /// Its time.
    #[serde(default, deserialize_with = "de::opt_i64")]
    pub ctime: Option<i64>,
    /// `qemu`, `lxc` or `unknown`.
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The guest.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub vmid: Option<u64>,
}

/// A run of a schedule (`GET /cluster/jobs/schedule-analyze`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScheduleRun {
    /// When, epoch seconds.
    #[serde(deserialize_with = "de::i64_lenient")]
    pub timestamp: i64,
    /// The same time in UTC as Perl's `gmtime` prints it
    /// (`Mon Sep 21 21:30:00 2026`).
    pub utc: String,
}

/// A backup job (`GET /cluster/backup`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackupJob {
    /// The job ID (`backup-1a2b3c4d-5e6f`).
    pub id: String,
    /// Its calendar event (`sat 02:00`).
    #[serde(default)]
    pub schedule: String,
    /// When it runs next (listing only).
    #[serde(rename = "next-run", default, deserialize_with = "de::opt_i64")]
    pub next_run: Option<i64>,
    /// Whether it is enabled.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub enabled: Option<bool>,
    /// Its other options.
    #[serde(flatten)]
    pub options: Map<String, Value>,
}

/// An entry of `file-restore/list` (`proxmox-file-restore`'s
/// `ArchiveEntry`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRestoreEntry {
    /// The entry's path, base64: give it back to list or download it.
    pub filepath: String,
    /// The name to show.
    pub text: String,
    /// `d`, `f`, `l`, `h`, `b`, `c`, `p`, `s`, or `v` (an archive or a
    /// drive's virtual level).
    #[serde(rename = "type")]
    pub kind: String,
    /// Whether it has no children.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub leaf: Option<bool>,
    /// A file's (or an archive's, a partition's) size.
    #[serde(default)]
    pub size: Option<u64>,
    /// A file's modification time.
    #[serde(default)]
    pub mtime: Option<i64>,
}

fn file_restore_path(node: &str, storage: &str, what: &str) -> String {
    format!(
        "/nodes/{}/storage/{}/file-restore/{what}",
        seg(node),
        seg(storage)
    )
}

fn prune_path(node: &str, storage: &str) -> String {
    format!("/nodes/{}/storage/{}/prunebackups", seg(node), seg(storage))
}

impl Backup<'_> {
    /// `POST /nodes/{node}/vzdump` (`vzdump`): the task, or `None` when
    /// PVE answers `OK` (no guest of the request is on the node).
    ///
    /// # Errors
    /// 400 for conflicting options (`all: option conflicts with option
    /// 'vmid'`).
    pub async fn vzdump(&self, node: &str, req: &Vzdump) -> Result<Option<Upid>> {
        let path = format!("/nodes/{}/vzdump", seg(node));
        let v: Value = self.client.call(Method::POST, &path, &req.params()).await?;
        Ok(v.as_str().and_then(|s| s.parse().ok()))
    }

    /// `GET /nodes/{node}/vzdump/defaults` (`defaults`).
    ///
    /// # Errors
    /// As any call.
    pub async fn defaults(&self, node: &str, storage: Option<&str>) -> Result<Map<String, Value>> {
        let path = format!("/nodes/{}/vzdump/defaults", seg(node));
        let params = Params::new().opt("storage", storage);
        self.client.call(Method::GET, &path, &params).await
    }

    /// `GET /nodes/{node}/vzdump/extractconfig` (`extractconfig`): the
    /// guest config a backup holds.
    ///
    /// # Errors
    /// A missing volume.
    pub async fn extractconfig(&self, node: &str, volume: &str) -> Result<String> {
        let path = format!("/nodes/{}/vzdump/extractconfig", seg(node));
        let params = Params::new().set("volume", volume);
        self.client.call(Method::GET, &path, &params).await
    }

    /// `GET /nodes/{node}/storage/{storage}/file-restore/list` (`list`):
    /// the entries under `filepath` (`/` for the snapshot's archives,
    /// else an entry's base64 `filepath`) of a Proxmox Backup Server
    /// snapshot.
    ///
    /// # Errors
    /// `storage: Only PBS storages supported for file-restore.`, a path
    /// the snapshot does not have, a server not reached.
    pub async fn list(
        &self,
        node: &str,
        storage: &str,
        volume: &str,
        filepath: &str,
    ) -> Result<Vec<FileRestoreEntry>> {
        let params = Params::new()
            .set("volume", volume)
            .set("filepath", filepath);
        self.client
            .call(
                Method::GET,
                &file_restore_path(node, storage, "list"),
                &params,
            )
            .await
    }

    /// `GET /nodes/{node}/storage/{storage}/file-restore/download`
    /// (`download`): a file's bytes, a directory as a zip (with `tar`, a
    /// `tar.zst`).
    ///
    /// # Errors
    /// As [`Backup::list`].
    pub async fn download(
        &self,
        node: &str,
        storage: &str,
        volume: &str,
        filepath: &str,
        tar: bool,
    ) -> Result<Vec<u8>> {
        let params = Params::new()
            .set("volume", volume)
            .set("filepath", filepath)
            .opt("tar", tar.then_some(1));
        self.client
            .call_download(
                Method::GET,
                &file_restore_path(node, storage, "download"),
                &params,
            )
            .await
    }

    /// `GET .../prunebackups` (`dryrun`): what a prune with `keep` (or the
    /// storage's retention) would do.
    ///
    /// # Errors
    /// `no prune-backups options configured for storage 'x'`.
    pub async fn dryrun(
        &self,
        node: &str,
        storage: &str,
        keep: Option<&str>,
        vmid: Option<u32>,
    ) -> Result<Vec<PruneEntry>> {
        let params = Params::new().opt("prune-backups", keep).opt("vmid", vmid);
        self.client
            .call(Method::GET, &prune_path(node, storage), &params)
            .await
    }

    /// `DELETE .../prunebackups` (`delete`): the `prunebackups` task.
    ///
    /// # Errors
    /// As any call; a missing retention fails the task.
    pub async fn delete(
        &self,
        node: &str,
        storage: &str,
        keep: Option<&str>,
        vmid: Option<u32>,
    ) -> Result<Upid> {
        let params = Params::new().opt("prune-backups", keep).opt("vmid", vmid);
        self.client
            .call(Method::DELETE, &prune_path(node, storage), &params)
            .await
    }

    /// `GET /cluster/backup` (`index`): the jobs with their `next-run`.
    ///
    /// # Errors
    /// As any call.
    pub async fn index(&self) -> Result<Vec<BackupJob>> {
        self.client
            .call(Method::GET, "/cluster/backup", &Params::new())
            .await
    }

    /// `POST /cluster/backup` (`create_job`): a job running `req` on
    /// `schedule`; PVE answers nothing, the id is `id` or generated.
    ///
    /// # Errors
    /// 400 for a bad schedule or conflicting options.
    pub async fn create_job(&self, id: Option<&str>, schedule: &str, req: &Vzdump) -> Result<()> {
        let params = req.params().set("schedule", schedule).opt("id", id);
        let _: Value = self
            .client
            .call(Method::POST, "/cluster/backup", &params)
            .await?;
        Ok(())
    }

    /// `GET /cluster/backup/{id}` (`read_job`).
    ///
    /// # Errors
    /// 400 `id: No such job 'x'`.
    pub async fn read_job(&self, id: &str) -> Result<BackupJob> {
        let path = format!("/cluster/backup/{}", seg(id));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `PUT /cluster/backup/{id}` (`update_job`): sets `req`'s options,
    /// deletes those in `delete`.
    ///
    /// # Errors
    /// `no such vzdump job`, 400 `delete: unknown option 'x'`.
    pub async fn update_job(&self, id: &str, req: &Vzdump, delete: &[&str]) -> Result<()> {
        let path = format!("/cluster/backup/{}", seg(id));
        let params = req
            .params()
            .opt("delete", (!delete.is_empty()).then(|| delete.join(",")));
        let _: Value = self.client.call(Method::PUT, &path, &params).await?;
        Ok(())
    }

    /// `DELETE /cluster/backup/{id}` (`delete_job`).
    ///
    /// # Errors
    /// 400 `id: No such job 'x'`.
    pub async fn delete_job(&self, id: &str) -> Result<()> {
        let path = format!("/cluster/backup/{}", seg(id));
        let _: Value = self
            .client
            .call(Method::DELETE, &path, &Params::new())
            .await?;
        Ok(())
    }

    /// `GET /cluster/backup/{id}/included_volumes`
    /// (`get_volume_backup_included`): the tree of guests and volumes.
    ///
    /// # Errors
    /// 400 `id: No such job 'x'`.
    pub async fn get_volume_backup_included(&self, id: &str) -> Result<Value> {
        let path = format!("/cluster/backup/{}/included_volumes", seg(id));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `GET /cluster/backup-info/not-backed-up`
    /// (`get_guests_not_in_backup`).
    ///
    /// # Errors
    /// As any call.
    pub async fn get_guests_not_in_backup(&self) -> Result<Vec<Map<String, Value>>> {
        self.client
            .call(
                Method::GET,
                "/cluster/backup-info/not-backed-up",
                &Params::new(),
            )
            .await
    }

    /// `GET /cluster/jobs/schedule-analyze` (`schedule-analyze`): the
    /// next `iterations` (10 by default) runs of a calendar event after
    /// `starttime` (now by default).
    ///
    /// # Errors
    /// 400 for a schedule that does not parse.
    pub async fn schedule_analyze(
        &self,
        schedule: &str,
        starttime: Option<i64>,
        iterations: Option<u32>,
    ) -> Result<Vec<ScheduleRun>> {
        let params = Params::new()
            .set("schedule", schedule)
            .opt("starttime", starttime)
            .opt("iterations", iterations);
        self.client
            .call(Method::GET, "/cluster/jobs/schedule-analyze", &params)
            .await
    }
}
