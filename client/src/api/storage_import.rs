//! `GET /nodes/{node}/storage/{storage}/import-metadata`: how to create a
//! guest from an importable one (an OVA archive or OVF manifest on a
//! file storage, a VM of an ESXi host).
//!
//! ```no_run
//! # async fn f(client: pve_client::Client) -> pve_client::Result<()> {
//! let m = client
//!     .storage()
//!     .get_import_metadata("pve", "local", "import/appliance.ova")
//!     .await?;
//! for (drive, disk) in &m.disks {
//!     println!("{drive}: {disk:?}");
//! }
//! # Ok(())
//! # }
//! ```

use std::collections::BTreeMap;

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::seg;
use super::storage::Storage;
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// A disk of [`ImportMetadata::disks`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ImportDisk {
    /// A volume to import from (`local:import/x.ova/disk1.vmdk`).
    Volume {
        /// The volume ID to give `import-from`.
        volid: String,
        /// Its size in bytes, where known.
        #[serde(default, deserialize_with = "de::opt_u64")]
        size: Option<u64>,
    },
    /// A disk to create new (`efidisk0: 1`).
    New(Value),
}

/// A known issue of an import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportWarning {
    /// `ova-needs-extracting`, `efi-state-lost`, `guest-is-running`...
    #[serde(rename = "type")]
    pub kind: String,
    /// The config key concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Its value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// The answer of `get_import_metadata`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportMetadata {
    /// The guest type to create (`vm`).
    #[serde(rename = "type")]
    pub kind: String,
    /// The import source (the volume name, or `esxi`).
    pub source: String,
    /// Parameters for creating the guest (`name`, `cores`, `memory`,
    /// `ostype`, `bios`, `boot`...).
    #[serde(rename = "create-args")]
    pub create_args: Map<String, Value>,
    /// Disks by drive key (`scsi0`, `efidisk0`).
    #[serde(default)]
    pub disks: BTreeMap<String, ImportDisk>,
    /// NICs by key (`net0`) with their settings (`model`).
    #[serde(default)]
    pub net: BTreeMap<String, Map<String, Value>>,
    /// Known issues.
    #[serde(default)]
    pub warnings: Vec<ImportWarning>,
}

impl Storage<'_> {
    /// `GET /nodes/{node}/storage/{storage}/import-metadata`
    /// (`get_import_metadata`): `volume` is the volume name on `storage`
    /// (`import/appliance.ova`).
    ///
    /// # Errors
    /// PVE's messages: `invalid content type 'iso'`, `invalid format`,
    /// `storage does not support the importer API`, a missing or broken
    /// archive's `tar` failure.
    pub async fn get_import_metadata(
        &self,
        node: &str,
        storage: &str,
        volume: &str,
    ) -> Result<ImportMetadata> {
        let path = format!(
            "/nodes/{}/storage/{}/import-metadata",
            seg(node),
            seg(storage)
        );
        let params = Params::new().set("volume", volume);
        self.client.call(Method::GET, &path, &params).await
    }
}
