//! MachineImage: a template machines can be cloned from.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::machine::default_storage;

/// A template that machines can be cloned from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, CustomResource)]
#[kube(
    group = "pve.fake-pve.io",
    version = "v1alpha1",
    kind = "MachineImage",
    doc = "A template Machines are cloned from.",
    plural = "machineimages",
    namespaced,
    status = "MachineImageStatus",
    shortname = "pvimg",
    category = "pve",
    printcolumn = r#"{"name":"Cluster","type":"string","jsonPath":".spec.cluster"}"#,
    printcolumn = r#"{"name":"Node","type":"string","jsonPath":".status.node"}"#,
    printcolumn = r#"{"name":"VMID","type":"integer","jsonPath":".status.vmid"}"#,
    printcolumn = r#"{"name":"Ready","type":"boolean","jsonPath":".status.ready"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MachineImageSpec {
    /// The ProxmoxCluster.
    #[schemars(length(min = 1))]
    pub cluster: String,
    /// The node the template lives on (default: the first online one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// An existing template, by name or VMID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// Or: a disk image to download (`https://.../x.qcow2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// File name in the download storage (default: the URL's last part).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_name: Option<String>,
    /// Checksum of the download, and its algorithm (`sha256`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<String>,
    /// `sha256`, `sha512`, `md5`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum_algorithm: Option<String>,
    /// Storage the download goes to (`local`, content `import`).
    #[serde(default = "default_download_storage")]
    pub download_storage: String,
    /// Storage of the template's disk (`local-lvm`).
    #[serde(default = "default_storage")]
    pub storage: String,
    /// The template's VMID (default: the lowest free operator VMID).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vmid: Option<u32>,
    /// The template's name (default: `metadata.name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

fn default_download_storage() -> String {
    "local".into()
}

/// A MachineImage as observed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineImageStatus {
    /// The template exists.
    pub ready: bool,
    /// Its VMID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vmid: Option<u32>,
    /// Its node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Why it is not ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<String>,
}
