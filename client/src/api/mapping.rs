//! `/cluster/mapping/{pci,usb,dir}`: the cluster's resource mappings, a
//! name for a PCI device, a USB device or a directory with an entry per
//! node (`map`, property strings).
//!
//! ```no_run
//! # async fn f(client: &pve_client::Client) -> pve_client::error::Result<()> {
//! use pve_client::api::mapping::{MappingKind, MappingSpec};
//! let pci = client.mappings(MappingKind::Pci);
//! let spec = MappingSpec::of(&[
//!     "node=pve1,path=0000:65:00.0,id=10de:1eb8,iommugroup=30,subsystem-id=10de:12a2",
//! ]);
//! pci.create("gpu", &spec).await?;
//! let checked = pci.index(Some("pve1")).await?;
//! # let _ = checked;
//! # Ok(())
//! # }
//! ```

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::seg;
use crate::Client;
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// The three kinds of mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MappingKind {
    /// PCI devices (`/cluster/mapping/pci`).
    Pci,
    /// USB devices (`/cluster/mapping/usb`).
    Usb,
    /// Directories for virtiofs (`/cluster/mapping/dir`).
    Dir,
}

impl MappingKind {
    /// `pci`, `usb`, `dir`.
    pub fn as_str(self) -> &'static str {
        match self {
            MappingKind::Pci => "pci",
            MappingKind::Usb => "usb",
            MappingKind::Dir => "dir",
        }
    }
}

/// The calls of one kind of mapping; see [`Client::mappings`].
#[derive(Debug, Clone, Copy)]
pub struct Mappings<'a> {
    client: &'a Client,
    kind: MappingKind,
}

impl Client {
    /// The `/cluster/mapping/<kind>` calls.
    pub fn mappings(&self, kind: MappingKind) -> Mappings<'_> {
        Mappings { client: self, kind }
    }
}

/// A finding of the list's `check-node`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MappingCheck {
    /// `warning` or `error`.
    pub severity: String,
    /// What is wrong (`No mapping for node pve2.`).
    pub message: String,
}

/// A mapping as the list and `get` give it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Mapping {
    /// The id (the list only).
    #[serde(default)]
    pub id: Option<String>,
    /// `pci`, `usb` or `dir`.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// The description.
    #[serde(default)]
    pub description: Option<String>,
    /// PCI: the devices provide mediated devices.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub mdev: Option<bool>,
    /// PCI: the devices can be live-migrated.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub live_migration_capable: Option<bool>,
    /// The per-node entries.
    #[serde(default)]
    pub map: Vec<String>,
    /// The file's digest.
    #[serde(default)]
    pub digest: Option<String>,
    /// With `check-node`: the findings (PCI, directories).
    #[serde(default)]
    pub checks: Option<Vec<MappingCheck>>,
    /// With `check-node`: the findings (USB).
    #[serde(default)]
    pub errors: Option<Vec<MappingCheck>>,
}

impl Mapping {
    /// The `check-node` findings, whatever the kind calls them.
    pub fn findings(&self) -> &[MappingCheck] {
        self.checks
            .as_deref()
            .or(self.errors.as_deref())
            .unwrap_or_default()
    }
}

/// What a create or an update sets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MappingSpec {
    /// The per-node entries (required, for an update too).
    pub map: Vec<String>,
    /// `description`.
    pub description: Option<String>,
    /// PCI: `mdev`.
    pub mdev: Option<bool>,
    /// PCI: `live-migration-capable`.
    pub live_migration_capable: Option<bool>,
}

impl MappingSpec {
    /// A mapping of these entries, nothing else set.
    pub fn of(map: &[&str]) -> Self {
        Self {
            map: map.iter().map(|m| (*m).to_string()).collect(),
            ..Self::default()
        }
    }

    fn params(&self, params: Params) -> Params {
        params
            .array("map", &self.map)
            .opt("description", self.description.clone())
            .opt("mdev", self.mdev)
            .opt("live-migration-capable", self.live_migration_capable)
    }
}

impl Mappings<'_> {
    fn base(&self) -> String {
        format!("/cluster/mapping/{}", self.kind.as_str())
    }

    fn one(&self, id: &str) -> String {
        format!("{}/{}", self.base(), seg(id))
    }

    /// `GET /cluster/mapping/<kind>` (`index`): the mappings the caller
    /// holds a `Mapping.*` privilege on; with `check_node`, that node's
    /// findings for each.
    ///
    /// # Errors
    /// An unknown `check_node`.
    pub async fn index(&self, check_node: Option<&str>) -> Result<Vec<Mapping>> {
        let params = Params::new().opt("check-node", check_node);
        self.client.call(Method::GET, &self.base(), &params).await
    }

    /// `POST /cluster/mapping/<kind>` (`create`).
    ///
    /// # Errors
    /// `create hardware mapping failed: pci ID 'x' already defined`;
    /// directories: `Path /x does not exist` (the local node's entry),
    /// `Node 'n' is specified 2 times.`.
    pub async fn create(&self, id: &str, spec: &MappingSpec) -> Result<()> {
        let params = spec.params(Params::new().set("id", id));
        let _: Value = self
            .client
            .call(Method::POST, &self.base(), &params)
            .await?;
        Ok(())
    }

    /// `GET /cluster/mapping/<kind>/{id}` (`get`).
    ///
    /// # Errors
    /// `mapping 'x' not found`.
    pub async fn get(&self, id: &str) -> Result<Mapping> {
        self.client
            .call(Method::GET, &self.one(id), &Params::new())
            .await
    }

    /// `PUT /cluster/mapping/<kind>/{id}` (`update`): `map` replaces the
    /// entries; `delete` names options to remove; `digest` guards the
    /// file.
    ///
    /// # Errors
    /// `update hardware mapping failed: pci ID 'x' does not exist`, a
    /// changed digest, `... missing value for required option 'map'`.
    pub async fn update(
        &self,
        id: &str,
        spec: &MappingSpec,
        delete: &[&str],
        digest: Option<&str>,
    ) -> Result<()> {
        let params = spec.params(
            Params::new()
                .opt("delete", (!delete.is_empty()).then(|| delete.join(",")))
                .opt("digest", digest),
        );
        let _: Value = self
            .client
            .call(Method::PUT, &self.one(id), &params)
            .await?;
        Ok(())
    }

    /// `DELETE /cluster/mapping/<kind>/{id}` (`delete`): a missing id is
    /// no error; guests that use the mapping keep naming it.
    ///
    /// # Errors
    /// 403 without `Mapping.Modify` on `/mapping/<kind>`.
    pub async fn delete(&self, id: &str) -> Result<()> {
        let _: Value = self
            .client
            .call(Method::DELETE, &self.one(id), &Params::new())
            .await?;
        Ok(())
    }
}
