//! `/storage` (the cluster's `storage.cfg`) and `/nodes/{node}/storage`
//! (each storage's state on a node).
//!
//! ```
//! use pve_client::api::storage::{StorageCreate, StorageUpdate};
//!
//! let nfs = StorageCreate::new("backups", "dir")
//!     .option("path", "/mnt/backups")
//!     .content(&["backup", "iso"]);
//! let change = StorageUpdate::default().disable(true).digest("6c1f...");
//! # let _ = (nfs, change);
//! ```

use std::collections::BTreeMap;

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::seg;
use crate::Client;
use crate::de;
use crate::error::Result;
use crate::transport::{ParamValue, Params};

/// The storage area; see [`Client::storage`].
#[derive(Debug, Clone, Copy)]
pub struct Storage<'a> {
    client: &'a Client,
}

impl Client {
    /// The storage calls.
    pub fn storage(&self) -> Storage<'_> {
        Storage { client: self }
    }
}

/// A storage's configuration (`GET /storage`, `GET /storage/{storage}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StorageConfig {
    /// The storage ID.
    pub storage: String,
    /// The type (`dir`, `lvmthin`, `nfs`, `zfspool`, ...).
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The content types (`images`, `iso`, `backup`, ...).
    #[serde(default, deserialize_with = "de::list")]
    pub content: Vec<String>,
    /// The nodes it is limited to (empty: all).
    #[serde(default, deserialize_with = "de::list")]
    pub nodes: Vec<String>,
    /// Whether every node sees the same content.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub shared: Option<bool>,
    /// Whether it is disabled.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub disable: Option<bool>,
    /// The path of directory storages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The digest of `storage.cfg`, for [`StorageUpdate::digest`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The type's other options (`thinpool`, `vgname`, `server`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl StorageConfig {
    /// Whether it is enabled.
    pub fn is_enabled(&self) -> bool {
        self.disable != Some(true)
    }
}

/// What `create` and `update` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StorageChanged {
    /// The storage ID.
    pub storage: String,
    /// The type.
    #[serde(rename = "type")]
    pub kind: String,
    /// Partial, type-specific configuration (a generated encryption key,
    /// ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Map<String, Value>>,
}

/// The request of `create`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StorageCreate {
    /// The storage ID.
    pub storage: String,
    /// The type.
    pub kind: String,
    /// The content types.
    pub content: Vec<String>,
    /// Limit to these nodes.
    pub nodes: Vec<String>,
    /// Mark it shared.
    pub shared: Option<bool>,
    /// Create it disabled.
    pub disable: Option<bool>,
    /// Type-specific options (`path`, `server`, `export`, `thinpool`, ...).
    pub options: BTreeMap<String, String>,
}

impl StorageCreate {
    /// A storage `storage` of type `kind`.
    pub fn new(storage: &str, kind: &str) -> Self {
        Self {
            storage: storage.into(),
            kind: kind.into(),
            ..Self::default()
        }
    }

    /// The content types.
    #[must_use]
    pub fn content(mut self, content: &[&str]) -> Self {
        self.content = content.iter().map(|c| (*c).to_string()).collect();
        self
    }

    /// Limits it to `nodes`.
    #[must_use]
    pub fn nodes(mut self, nodes: &[&str]) -> Self {
        self.nodes = nodes.iter().map(|c| (*c).to_string()).collect();
        self
    }

    /// A type-specific option.
    #[must_use]
    pub fn option(mut self, key: &str, value: impl ParamValue) -> Self {
        self.options.insert(key.into(), value.to_param());
        self
    }

    fn params(&self) -> Params {
        let mut p = Params::new()
            .set("storage", &self.storage)
            .set("type", &self.kind)
            .opt("content", join(&self.content))
            .opt("nodes", join(&self.nodes))
            .opt("shared", self.shared)
            .opt("disable", self.disable);
        for (k, v) in &self.options {
            p.push(k.clone(), v);
        }
        p
    }
}

/// The request of `update`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StorageUpdate {
    /// New content types.
    pub content: Vec<String>,
    /// New node list.
    pub nodes: Vec<String>,
    /// Shared or not.
    pub shared: Option<bool>,
    /// Disable or enable.
    pub disable: Option<bool>,
    /// Options to delete.
    pub delete: Vec<String>,
    /// Refuse unless `storage.cfg` still has this digest.
    pub digest: Option<String>,
    /// Type-specific options.
    pub options: BTreeMap<String, String>,
}

impl StorageUpdate {
    /// Disables (`true`) or enables it.
    #[must_use]
    pub fn disable(mut self, yes: bool) -> Self {
        self.disable = Some(yes);
        self
    }

    /// New content types.
    #[must_use]
    pub fn content(mut self, content: &[&str]) -> Self {
        self.content = content.iter().map(|c| (*c).to_string()).collect();
        self
    }

    /// Deletes an option.
    #[must_use]
    pub fn delete(mut self, key: &str) -> Self {
        self.delete.push(key.into());
        self
    }

    /// Applies only if `storage.cfg` still has `digest`.
    #[must_use]
    pub fn digest(mut self, digest: impl Into<String>) -> Self {
        self.digest = Some(digest.into());
        self
    }

    /// A type-specific option.
    #[must_use]
    pub fn option(mut self, key: &str, value: impl ParamValue) -> Self {
        self.options.insert(key.into(), value.to_param());
        self
    }

    fn params(&self) -> Params {
        let mut p = Params::new()
            .opt("content", join(&self.content))
            .opt("nodes", join(&self.nodes))
            .opt("shared", self.shared)
            .opt("disable", self.disable)
            .opt("delete", join(&self.delete))
            .opt("digest", self.digest.as_deref());
        for (k, v) in &self.options {
            p.push(k.clone(), v);
        }
        p
    }
}

fn join(v: &[String]) -> Option<String> {
    (!v.is_empty()).then(|| v.join(","))
}

/// A storage's state on a node (`GET /nodes/{node}/storage`, `GET
/// .../storage/{storage}/status`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StorageStatus {
    /// The storage ID (left out by `read_status`).
    #[serde(default)]
    pub storage: String,
    /// The type.
    #[serde(rename = "type")]
    pub kind: String,
    /// The content types.
    #[serde(default, deserialize_with = "de::list")]
    pub content: Vec<String>,
    /// Whether it is active on the node.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub active: Option<bool>,
    /// Whether it is enabled.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub enabled: Option<bool>,
    /// Whether it is shared.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub shared: Option<bool>,
    /// Size, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub total: Option<u64>,
    /// In use, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub used: Option<u64>,
    /// Available, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub avail: Option<u64>,
    /// `used / total`.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub used_fraction: Option<f64>,
    /// Anything else (`formats`, `select_existing`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The filters of `GET /nodes/{node}/storage`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StorageFilter {
    /// Only storages with this content type (`images`, `iso`, ...).
    pub content: Option<String>,
    /// Only enabled storages.
    pub enabled: Option<bool>,
    /// Add the supported formats.
    pub format: Option<bool>,
    /// Only this storage.
    pub storage: Option<String>,
    /// Only storages shared with this node.
    pub target: Option<String>,
}

impl Storage<'_> {
    /// `GET /storage` (`index`): the configured storages, of type `kind`
    /// if given.
    ///
    /// # Errors
    /// As any call.
    pub async fn index(&self, kind: Option<&str>) -> Result<Vec<StorageConfig>> {
        let params = Params::new().opt("type", kind);
        self.client.call(Method::GET, "/storage", &params).await
    }

    /// `GET /storage/{storage}` (`read`).
    ///
    /// # Errors
    /// [`crate::Error::NotFound`]: `storage 'x' does not exist`.
    pub async fn read(&self, storage: &str) -> Result<StorageConfig> {
        let path = format!("/storage/{}", seg(storage));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST /storage` (`create`).
    ///
    /// # Errors
    /// [`crate::Error::Conflict`]: `create storage failed: storage ID 'x'
    /// already defined`; [`crate::Error::Validation`] for bad options.
    pub async fn create(&self, req: &StorageCreate) -> Result<StorageChanged> {
        self.client
            .call(Method::POST, "/storage", &req.params())
            .await
    }

    /// `PUT /storage/{storage}` (`update`).
    ///
    /// # Errors
    /// [`crate::Error::NotFound`] for an unknown storage;
    /// [`crate::Error::Conflict`] for a stale digest.
    pub async fn update(&self, storage: &str, req: &StorageUpdate) -> Result<StorageChanged> {
        let path = format!("/storage/{}", seg(storage));
        self.client.call(Method::PUT, &path, &req.params()).await
    }

    /// `DELETE /storage/{storage}` (`delete`): removes the configuration
    /// (not the data).
    ///
    /// # Errors
    /// [`crate::Error::NotFound`] for an unknown storage.
    pub async fn delete(&self, storage: &str) -> Result<()> {
        let path = format!("/storage/{}", seg(storage));
        let _: Value = self
            .client
            .call(Method::DELETE, &path, &Params::new())
            .await?;
        Ok(())
    }

    /// `GET /nodes/{node}/storage` (the schema's `index`; fake-pve's
    /// `node_storage_index`): the storages a node sees, with their use.
    ///
    /// # Errors
    /// [`crate::Error::Validation`] (`storage`: `No such storage.`).
    pub async fn node_storage_index(
        &self,
        node: &str,
        filter: &StorageFilter,
    ) -> Result<Vec<StorageStatus>> {
        let path = format!("/nodes/{}/storage", seg(node));
        let params = Params::new()
            .opt("content", filter.content.as_deref())
            .opt("enabled", filter.enabled)
            .opt("format", filter.format)
            .opt("storage", filter.storage.as_deref())
            .opt("target", filter.target.as_deref());
        self.client.call(Method::GET, &path, &params).await
    }

    /// `GET /nodes/{node}/storage/{storage}/status` (`read_status`).
    ///
    /// # Errors
    /// [`crate::Error::Validation`] (`storage`: `No such storage.`).
    pub async fn read_status(&self, node: &str, storage: &str) -> Result<StorageStatus> {
        let path = format!("/nodes/{}/storage/{}/status", seg(node), seg(storage));
        let mut s: StorageStatus = self.client.call(Method::GET, &path, &Params::new()).await?;
        if s.storage.is_empty() {
            s.storage = storage.to_string();
        }
        Ok(s)
    }
}
