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
use super::tasks::{TaskStatus, Upid};
use crate::Client;
use crate::de;
use crate::error::Result;
use crate::transport::{ParamValue, Params};

/// The storage area; see [`Client::storage`].
#[derive(Debug, Clone, Copy)]
pub struct Storage<'a> {
    pub(super) client: &'a Client,
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
/// What `GET /nodes/{node}/storage/{storage}/identity` (9.2) answers.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct StorageIdentity {
    /// The storage type (`pbs`).
    #[serde(rename = "type")]
    pub kind: String,
    /// The plugin's id of the storage instance (a Proxmox Backup Server's
    /// `pbs-instance-id`).
    pub id: String,
}

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

    /// `GET /nodes/{node}/storage/{storage}/identity` (`identity`, 9.2).
    ///
    /// # Errors
    /// `get_identity not implemented for this plugin ...` for a storage
    /// type without one (every type but `pbs`); `storage 'x' is
    /// disabled`.
    pub async fn identity(&self, node: &str, storage: &str) -> Result<StorageIdentity> {
        let path = format!("/nodes/{}/storage/{}/identity", seg(node), seg(storage));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `GET /nodes/{node}/storage/{storage}/rrddata` (`rrddata`): the
    /// storage's size and usage over `timeframe`, oldest first.
    ///
    /// # Errors
    /// PVE's `RRD error: opening '...': No such file or directory` for a
    /// storage the node keeps no statistics of.
    pub async fn rrddata(
        &self,
        node: &str,
        storage: &str,
        timeframe: super::qemu::Timeframe,
        cf: Option<super::qemu::Consolidation>,
    ) -> Result<Vec<StorageRrdPoint>> {
        let path = format!("/nodes/{}/storage/{}/rrddata", seg(node), seg(storage));
        let params = Params::new()
            .set("timeframe", timeframe.as_str())
            .opt("cf", cf.map(super::qemu::Consolidation::as_str));
        self.client.call(Method::GET, &path, &params).await
    }
}

/// One point of a storage's `rrddata`; a field is `None` where the RRD
/// has no value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StorageRrdPoint {
    /// Epoch seconds.
    #[serde(deserialize_with = "de::i64_lenient")]
    pub time: i64,
    /// Size, bytes.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub total: Option<f64>,
    /// Bytes in use.
    #[serde(default, deserialize_with = "de::opt_f64")]
    pub used: Option<f64>,
}

/// The content area of a node's storages (`/nodes/{node}/storage/{storage}/content`);
/// see [`Client::storage_content`]. `volume` arguments take a volume
/// name (`iso/debian.iso`, `vm-100-disk-0`) or a full volume ID
/// (`local:iso/debian.iso`).
#[derive(Debug, Clone, Copy)]
pub struct StorageContent<'a> {
    client: &'a Client,
}

impl Client {
    /// The storage content calls.
    pub fn storage_content(&self) -> StorageContent<'_> {
        StorageContent { client: self }
    }
}

/// One volume of `GET .../content` (`index`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContentItem {
    /// The volume ID (`local:iso/debian.iso`).
    pub volid: String,
    /// The content type (`images`, `iso`, `vztmpl`, `backup`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The format (`raw`, `qcow2`, `iso`, `vma.zst`, ...).
    pub format: String,
    /// Size, bytes. PVE 9.2 leaves it out where only an upper bound is
    /// known ([`ContentItem::approximate_size`]).
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub size: Option<u64>,
    /// PVE 9.2: an upper bound of the size, instead of `size` (a qcow2
    /// image on LVM whose logical volume is not active).
    #[serde(
        rename = "approximate-size",
        default,
        deserialize_with = "de::opt_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub approximate_size: Option<u64>,
    /// Used, bytes (not every storage reports it).
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub used: Option<u64>,
    /// The owning guest.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub vmid: Option<u64>,
    /// Creation time, epoch seconds.
    #[serde(default, deserialize_with = "de::opt_i64")]
    pub ctime: Option<i64>,
    /// The first line of the notes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// Whether it is protected from removal.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub protected: Option<bool>,
    /// The base volume of a linked clone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Anything else (`subtype`, `encrypted`, `verification`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The filters of `GET .../content`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContentFilter {
    /// Only this content type.
    pub content: Option<String>,
    /// Only volumes of this guest.
    pub vmid: Option<u32>,
}

/// The request of `POST .../content` (`create`): allocates a disk image.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllocateVolume {
    /// The name (`vm-100-disk-1`, `vm-100-disk-1.qcow2` on file storages).
    pub filename: String,
    /// Size in KiB, or with an `M`/`G` suffix.
    pub size: String,
    /// The owning VM.
    pub vmid: u32,
    /// `raw`, `qcow2`, `subvol`, `vmdk`.
    pub format: Option<String>,
}

impl AllocateVolume {
    /// A volume `filename` of `size` for `vmid`.
    pub fn new(vmid: u32, filename: &str, size: &str) -> Self {
        Self {
            filename: filename.into(),
            size: size.into(),
            vmid,
            format: None,
        }
    }

    /// The format.
    #[must_use]
    pub fn format(mut self, format: &str) -> Self {
        self.format = Some(format.into());
        self
    }
}

/// What `GET .../content/{volume}` (`info`) answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VolumeInfo {
    /// The path on the node.
    pub path: String,
    /// Size, bytes.
    #[serde(deserialize_with = "de::u64_lenient")]
    pub size: u64,
    /// Used, bytes.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub used: Option<u64>,
    /// The format.
    pub format: String,
    /// The notes (backups).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// Whether it is protected (backups).
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub protected: Option<bool>,
    /// Anything else.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The request of `PUT .../content/{volume}` (`updateattributes`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VolumeAttributes {
    /// New notes (an empty text removes them).
    pub notes: Option<String>,
    /// Protect from removal, or not.
    pub protected: Option<bool>,
}

/// The request of `POST .../upload` (`upload`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Upload {
    /// `iso`, `vztmpl` or `import`.
    pub content: String,
    /// The file name on the storage (PVE normalises it).
    pub filename: String,
    /// The file's bytes.
    pub data: Vec<u8>,
    /// The expected checksum.
    pub checksum: Option<String>,
    /// `md5`, `sha1`, `sha224`, `sha256`, `sha384`, `sha512`.
    pub checksum_algorithm: Option<String>,
}

impl Upload {
    /// Uploads `data` as `filename` of type `content`.
    pub fn new(content: &str, filename: &str, data: impl Into<Vec<u8>>) -> Self {
        Self {
            content: content.into(),
            filename: filename.into(),
            data: data.into(),
            ..Self::default()
        }
    }

    /// Verifies the file against `checksum` with `algorithm`.
    #[must_use]
    pub fn checksum(mut self, algorithm: &str, checksum: &str) -> Self {
        self.checksum_algorithm = Some(algorithm.into());
        self.checksum = Some(checksum.into());
        self
    }

    fn fields(&self) -> Vec<(String, String)> {
        let mut f = vec![("content".to_string(), self.content.clone())];
        if let Some(c) = &self.checksum {
            f.push(("checksum".into(), c.clone()));
        }
        if let Some(a) = &self.checksum_algorithm {
            f.push(("checksum-algorithm".into(), a.clone()));
        }
        f
    }
}

/// The request of `POST .../download-url` (`download_url`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DownloadUrl {
    /// The URL.
    pub url: String,
    /// `iso`, `vztmpl` or `import`.
    pub content: String,
    /// The file name on the storage.
    pub filename: String,
    /// The expected checksum.
    pub checksum: Option<String>,
    /// `md5`, `sha1`, `sha224`, `sha256`, `sha384`, `sha512`.
    pub checksum_algorithm: Option<String>,
    /// Decompress with `zstd`, `gz`, `lzo`, `bz2`.
    pub compression: Option<String>,
    /// Check the server's certificate (PVE's default: yes).
    pub verify_certificates: Option<bool>,
}

impl DownloadUrl {
    /// Downloads `url` as `filename` of type `content`.
    pub fn new(url: &str, content: &str, filename: &str) -> Self {
        Self {
            url: url.into(),
            content: content.into(),
            filename: filename.into(),
            ..Self::default()
        }
    }

    /// Verifies the file against `checksum` with `algorithm`.
    #[must_use]
    pub fn checksum(mut self, algorithm: &str, checksum: &str) -> Self {
        self.checksum_algorithm = Some(algorithm.into());
        self.checksum = Some(checksum.into());
        self
    }

    fn params(&self) -> Params {
        Params::new()
            .set("url", &self.url)
            .set("content", &self.content)
            .set("filename", &self.filename)
            .opt("checksum", self.checksum.as_deref())
            .opt("checksum-algorithm", self.checksum_algorithm.as_deref())
            .opt("compression", self.compression.as_deref())
            .opt("verify-certificates", self.verify_certificates)
    }
}

/// What `GET /nodes/{node}/query-url-metadata` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UrlMetadata {
    /// The file name the server suggests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// The `Content-Type`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mimetype: Option<String>,
    /// The `Content-Length`.
    #[serde(default, deserialize_with = "de::opt_u64")]
    pub size: Option<u64>,
}

fn content_path(node: &str, storage: &str, volume: Option<&str>) -> String {
    let base = format!("/nodes/{}/storage/{}/content", seg(node), seg(storage));
    match volume {
        Some(v) => format!("{base}/{}", seg(v)),
        None => base,
    }
}

impl StorageContent<'_> {
    /// `GET .../content` (`index`): the volumes, sorted by volume ID.
    ///
    /// # Errors
    /// `storage 'x' does not exist`.
    pub async fn index(
        &self,
        node: &str,
        storage: &str,
        filter: &ContentFilter,
    ) -> Result<Vec<ContentItem>> {
        let params = Params::new()
            .opt("content", filter.content.as_deref())
            .opt("vmid", filter.vmid);
        self.client
            .call(Method::GET, &content_path(node, storage, None), &params)
            .await
    }

    /// `POST .../content` (`create`): allocates a disk image and answers
    /// its volume ID.
    ///
    /// # Errors
    /// PVE's refusals: `illegal name 'vm-101-disk-0' - should be
    /// 'vm-100-*'`, `not enough free space (...)`, a taken name.
    pub async fn create(&self, node: &str, storage: &str, req: &AllocateVolume) -> Result<String> {
        let params = Params::new()
            .set("filename", &req.filename)
            .set("size", &req.size)
            .set("vmid", req.vmid)
            .opt("format", req.format.as_deref());
        self.client
            .call(Method::POST, &content_path(node, storage, None), &params)
            .await
    }

    /// `GET .../content/{volume}` (`info`).
    ///
    /// # Errors
    /// `volume_size_info on 'local:iso/x.iso' failed - no format` for a
    /// missing volume.
    pub async fn info(&self, node: &str, storage: &str, volume: &str) -> Result<VolumeInfo> {
        self.client
            .call(
                Method::GET,
                &content_path(node, storage, Some(volume)),
                &Params::new(),
            )
            .await
    }

    /// `PUT .../content/{volume}` (`updateattributes`): notes and
    /// protection.
    ///
    /// # Errors
    /// `attribute 'protected' is not supported for storage type 'lvmthin'`.
    pub async fn updateattributes(
        &self,
        node: &str,
        storage: &str,
        volume: &str,
        attrs: &VolumeAttributes,
    ) -> Result<()> {
        let params = Params::new()
            .opt("notes", attrs.notes.as_deref())
            .opt("protected", attrs.protected);
        let _: Value = self
            .client
            .call(
                Method::PUT,
                &content_path(node, storage, Some(volume)),
                &params,
            )
            .await?;
        Ok(())
    }

    /// `DELETE .../content/{volume}` (`delete`): an `imgdel` task; with
    /// `delay` (1 to 30 s) PVE waits that long and answers no UPID when
    /// the task ended well in time.
    ///
    /// # Errors
    /// As any call; a refusal (`cannot remove protected volume ...`)
    /// fails the task, or the call when it ended within `delay`.
    pub async fn delete(
        &self,
        node: &str,
        storage: &str,
        volume: &str,
        delay: Option<u32>,
    ) -> Result<Option<Upid>> {
        let params = Params::new().opt("delay", delay);
        self.client
            .call(
                Method::DELETE,
                &content_path(node, storage, Some(volume)),
                &params,
            )
            .await
    }

    /// [`StorageContent::delete`], then waits for the task if there is
    /// one.
    ///
    /// # Errors
    /// As [`StorageContent::delete`] and [`crate::api::tasks::Tasks::wait`].
    pub async fn delete_and_wait(
        &self,
        node: &str,
        storage: &str,
        volume: &str,
        delay: Option<u32>,
    ) -> Result<Option<TaskStatus>> {
        match self.delete(node, storage, volume, delay).await? {
            Some(upid) => Ok(Some(self.client.tasks().wait(&upid).await?)),
            None => Ok(None),
        }
    }

    /// `POST .../content/{volume}` (`copy`): an `imgcopy` task copying
    /// the volume to `target` (a volume ID), on `target_node` if given.
    ///
    /// # Errors
    /// As any call; a missing source or taken target fails the task.
    pub async fn copy(
        &self,
        node: &str,
        storage: &str,
        volume: &str,
        target: &str,
        target_node: Option<&str>,
    ) -> Result<Upid> {
        let params = Params::new()
            .set("target", target)
            .opt("target_node", target_node);
        self.client
            .call(
                Method::POST,
                &content_path(node, storage, Some(volume)),
                &params,
            )
            .await
    }

    /// [`StorageContent::copy`], then waits for the task.
    ///
    /// # Errors
    /// As [`StorageContent::copy`] and [`crate::api::tasks::Tasks::wait`].
    pub async fn copy_and_wait(
        &self,
        node: &str,
        storage: &str,
        volume: &str,
        target: &str,
        target_node: Option<&str>,
    ) -> Result<TaskStatus> {
        let upid = self
            .copy(node, storage, volume, target, target_node)
            .await?;
        self.client.tasks().wait(&upid).await
    }
}

impl Storage<'_> {
    /// `POST /nodes/{node}/storage/{storage}/download-url`
    /// (`download_url`): a `download` task.
    ///
    /// # Errors
    /// [`crate::Error::Validation`] for a bad file name (`filename`:
    /// `wrong file extension`); a failed download or checksum mismatch
    /// fails the task.
    pub async fn download_url(&self, node: &str, storage: &str, req: &DownloadUrl) -> Result<Upid> {
        let path = format!("/nodes/{}/storage/{}/download-url", seg(node), seg(storage));
        self.client.call(Method::POST, &path, &req.params()).await
    }

    /// `POST /nodes/{node}/storage/{storage}/upload` (`upload`): sends the
    /// file as `multipart/form-data`; an `imgcopy` task stores it.
    ///
    /// # Errors
    /// [`crate::Error::Validation`] for a bad file name (`filename`:
    /// `wrong file extension`); a checksum mismatch fails the task.
    pub async fn upload(&self, node: &str, storage: &str, req: &Upload) -> Result<Upid> {
        let path = format!("/nodes/{}/storage/{}/upload", seg(node), seg(storage));
        self.client
            .call_upload(&path, &req.fields(), &req.filename, &req.data)
            .await
    }

    /// [`Storage::upload`], then waits for the task.
    ///
    /// # Errors
    /// As [`Storage::upload`] and [`crate::api::tasks::Tasks::wait`].
    pub async fn upload_and_wait(
        &self,
        node: &str,
        storage: &str,
        req: &Upload,
    ) -> Result<TaskStatus> {
        let upid = self.upload(node, storage, req).await?;
        self.client.tasks().wait(&upid).await
    }

    /// [`Storage::download_url`], then waits for the task.
    ///
    /// # Errors
    /// As [`Storage::download_url`] and [`crate::api::tasks::Tasks::wait`].
    pub async fn download_url_and_wait(
        &self,
        node: &str,
        storage: &str,
        req: &DownloadUrl,
    ) -> Result<TaskStatus> {
        let upid = self.download_url(node, storage, req).await?;
        self.client.tasks().wait(&upid).await
    }

    /// `GET /nodes/{node}/query-url-metadata` (`query_url_metadata`).
    ///
    /// # Errors
    /// PVE's message: `invalid server response: '404 Not Found'`.
    pub async fn query_url_metadata(
        &self,
        node: &str,
        url: &str,
        verify_certificates: Option<bool>,
    ) -> Result<UrlMetadata> {
        let path = format!("/nodes/{}/query-url-metadata", seg(node));
        let params = Params::new()
            .set("url", url)
            .opt("verify-certificates", verify_certificates);
        self.client.call(Method::GET, &path, &params).await
    }
}

#[cfg(test)]
mod tests {
    use super::ContentItem;

    /// PVE 9.2 may give `approximate-size` instead of `size`.
    #[test]
    fn a_content_item_with_only_an_approximate_size() {
        let item: ContentItem = serde_json::from_value(serde_json::json!({
            "volid": "lvm:vm-100-disk-0.qcow2", "content": "images", "format": "qcow2",
            "approximate-size": 1_077_936_128u64, "vmid": 100, "ctime": 1
        }))
        .expect("parses");
        assert_eq!(
            (item.size, item.approximate_size),
            (None, Some(1_077_936_128))
        );
        let item: ContentItem = serde_json::from_value(serde_json::json!({
            "volid": "local:iso/a.iso", "format": "iso", "size": "6"
        }))
        .expect("parses");
        assert_eq!((item.size, item.approximate_size), (Some(6), None));
    }
}
