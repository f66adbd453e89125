//! Authentication realms (`/access/domains`), their sync and the realm
//! sync jobs (`/cluster/jobs/realm-sync`).
//!
//! Method names are PVE's: the realm calls are `create`, `read`,
//! `update`, `delete` and `sync` in the schema; here they are
//! [`Realms::create_domain`], [`Realms::read_domain`],
//! [`Realms::update_domain`], [`Realms::delete_domain`] and
//! [`Realms::sync`], as fake-pve's handlers are named. The listing is
//! [`crate::api::access::Access::list_domains`].

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::seg;
use super::tasks::Upid;
use crate::Client;
use crate::error::Result;
use crate::transport::Params;

/// The realm calls; see [`Client::realms`].
#[derive(Debug, Clone, Copy)]
pub struct Realms<'a> {
    client: &'a Client,
}

impl Client {
    /// The realm and realm sync job calls.
    pub fn realms(&self) -> Realms<'_> {
        Realms { client: self }
    }
}

/// What a realm sync should do (`realm-sync-options`); unset fields take
/// the realm's `sync-defaults-options`, then PVE's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncOptions {
    /// `users`, `groups` or `both`.
    pub scope: Option<String>,
    /// `none`, or a `;`-list of `acl`, `properties`, `entry`.
    pub remove_vanished: Option<String>,
    /// Enable newly synced users (PVE's default: yes).
    pub enable_new: Option<bool>,
}

impl SyncOptions {
    fn params(&self) -> Params {
        Params::new()
            .opt("scope", self.scope.as_deref())
            .opt("remove-vanished", self.remove_vanished.as_deref())
            .opt("enable-new", self.enable_new)
    }
}

/// A realm sync job of `GET /cluster/jobs/realm-sync`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyncJob {
    /// The job's id.
    #[serde(default)]
    pub id: Option<String>,
    /// The realm it syncs.
    pub realm: String,
    /// Its calendar event.
    pub schedule: String,
    /// When it last ran, epoch seconds.
    #[serde(default, rename = "last-run")]
    pub last_run: Option<i64>,
    /// When it runs next, epoch seconds.
    #[serde(default, rename = "next-run")]
    pub next_run: Option<i64>,
    /// Everything else (`scope`, `enabled`, `comment`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn pairs(options: &[(&str, &str)]) -> Params {
    options
        .iter()
        .fold(Params::new(), |p, (k, v)| p.set(*k, *v))
}

impl Realms<'_> {
    /// `POST /access/domains` (`create`): a realm of `kind` (`ldap`,
    /// `ad`, `openid`) with its options as PVE names them.
    ///
    /// # Errors
    /// PVE's refusals (`add auth server failed: ...`).
    pub async fn create_domain(
        &self,
        realm: &str,
        kind: &str,
        options: &[(&str, &str)],
    ) -> Result<()> {
        let params = pairs(options).set("realm", realm).set("type", kind);
        let _: Value = self
            .client
            .call(Method::POST, "/access/domains", &params)
            .await?;
        Ok(())
    }

    /// `GET /access/domains/{realm}` (`read`): the realm's options with
    /// `type` and `digest`.
    ///
    /// # Errors
    /// When the realm does not exist.
    pub async fn read_domain(&self, realm: &str) -> Result<Map<String, Value>> {
        let path = format!("/access/domains/{}", seg(realm));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `PUT /access/domains/{realm}` (`update`); `delete` lists options
    /// to remove.
    ///
    /// # Errors
    /// PVE's refusals (`update auth server failed: ...`).
    pub async fn update_domain(
        &self,
        realm: &str,
        options: &[(&str, &str)],
        delete: &[&str],
    ) -> Result<()> {
        let path = format!("/access/domains/{}", seg(realm));
        let params = pairs(options).opt("delete", (!delete.is_empty()).then(|| delete.join(",")));
        let _: Value = self.client.call(Method::PUT, &path, &params).await?;
        Ok(())
    }

    /// `DELETE /access/domains/{realm}` (`delete`).
    ///
    /// # Errors
    /// When the realm does not exist.
    pub async fn delete_domain(&self, realm: &str) -> Result<()> {
        let path = format!("/access/domains/{}", seg(realm));
        let _: Value = self
            .client
            .call(Method::DELETE, &path, &Params::new())
            .await?;
        Ok(())
    }

    /// `POST /access/domains/{realm}/sync` (`sync`): the
    /// `auth-realm-sync` task (`auth-realm-sync-test` with `dry_run`).
    ///
    /// # Errors
    /// A realm that is not LDAP or AD, no scope given or configured.
    pub async fn sync(&self, realm: &str, opts: &SyncOptions, dry_run: bool) -> Result<Upid> {
        let path = format!("/access/domains/{}/sync", seg(realm));
        let params = opts.params().opt("dry-run", dry_run.then_some(true));
        self.client.call(Method::POST, &path, &params).await
    }

    /// `GET /cluster/jobs/realm-sync` (`syncjob_index`).
    ///
    /// # Errors
    /// Without Sys.Audit on `/`.
    pub async fn syncjob_index(&self) -> Result<Vec<SyncJob>> {
        self.client
            .call(Method::GET, "/cluster/jobs/realm-sync", &Params::new())
            .await
    }

    /// `GET /cluster/jobs/realm-sync/{id}` (`read_job`).
    ///
    /// # Errors
    /// When the job does not exist.
    pub async fn read_job(&self, id: &str) -> Result<SyncJob> {
        let path = format!("/cluster/jobs/realm-sync/{}", seg(id));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST /cluster/jobs/realm-sync/{id}` (`create_job`).
    ///
    /// # Errors
    /// A taken id, an unknown or non-LDAP/AD realm, a bad schedule.
    pub async fn create_job(
        &self,
        id: &str,
        realm: &str,
        schedule: &str,
        opts: &SyncOptions,
        enabled: Option<bool>,
    ) -> Result<()> {
        let path = format!("/cluster/jobs/realm-sync/{}", seg(id));
        let params = opts
            .params()
            .set("realm", realm)
            .set("schedule", schedule)
            .opt("enabled", enabled);
        let _: Value = self.client.call(Method::POST, &path, &params).await?;
        Ok(())
    }

    /// `PUT /cluster/jobs/realm-sync/{id}` (`update_job`).
    ///
    /// # Errors
    /// When the job does not exist.
    pub async fn update_job(
        &self,
        id: &str,
        schedule: &str,
        opts: &SyncOptions,
        enabled: Option<bool>,
    ) -> Result<()> {
        let path = format!("/cluster/jobs/realm-sync/{}", seg(id));
        let params = opts
            .params()
            .set("schedule", schedule)
            .opt("enabled", enabled);
        let _: Value = self.client.call(Method::PUT, &path, &params).await?;
        Ok(())
    }

    /// `DELETE /cluster/jobs/realm-sync/{id}` (`delete_job`).
    ///
    /// # Errors
    /// When the job does not exist.
    pub async fn delete_job(&self, id: &str) -> Result<()> {
        let path = format!("/cluster/jobs/realm-sync/{}", seg(id));
        let _: Value = self
            .client
            .call(Method::DELETE, &path, &Params::new())
            .await?;
        Ok(())
    }
}
