//! The resources of the `pve.fake-pve.io/v1alpha1` API group, as serde
//! types. The same types are read from YAML manifests in standalone mode
//! and would be served as custom resources on Kubernetes; field names
//! follow Kubernetes conventions (camelCase).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

mod cluster;
mod image;
mod machine;
mod node;
mod snapshot;
mod status;

pub use cluster::{
    ClusterCredentials, NodeStatusEntry, ProxmoxCluster, ProxmoxClusterSpec, ProxmoxClusterStatus,
    SecretKeyRef, ValueSource,
};
pub use image::{MachineImage, MachineImageSpec, MachineImageStatus};
pub use machine::{
    AntiAffinityTerm, CloudInit, Cpu, DeletionPolicy, DiskSpec, Machine, MachineSpec, NetworkSpec,
    Placement, PowerOffMode, PowerState, Quantity, Source,
};
pub use node::{NodeResources, ProxmoxNode, ProxmoxNodeSpec, ProxmoxNodeStatus, Usage};
pub use snapshot::{MachineSnapshot, MachineSnapshotSpec, MachineSnapshotStatus};
pub use status::{Condition, ConsoleInfo, MachineStatus, Phase, set_condition};

/// The API group and version every resource of this operator carries.
pub const API_VERSION: &str = "pve.fake-pve.io/v1alpha1";

/// The annotation that asks the standalone operator to delete a Machine
/// or MachineSnapshot (`"true"`). Nothing else deletes: a document that
/// vanishes or cannot be read keeps its VM and is reported.
pub const DELETE_ANNOTATION: &str = "pve.fake-pve.io/delete";

/// Set by the translation of VirtRigaud's and the Crossplane provider's
/// documents (never written by hand: a native document carrying it is
/// refused) on the objects of a Provider or ProviderConfig that says
/// `deleteOnRemoval: true`, and on their Machines and MachineSnapshots:
/// in standalone mode, removing such a Machine's or MachineSnapshot's
/// document deletes it, as the delete annotation would, while its
/// cluster is still declared with it.
pub const REMOVAL_DELETES_ANNOTATION: &str = "pve.fake-pve.io/delete-on-removal";

/// Any document of a manifest directory.
// A directory holds a few documents: a Machine is not boxed.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub enum Resource {
    /// A PVE cluster (one site).
    ProxmoxCluster(Object<ProxmoxClusterSpec>),
    /// A node of a cluster, with its limits.
    ProxmoxNode(Object<ProxmoxNodeSpec>),
    /// A virtual machine.
    Machine(Object<MachineSpec>),
    /// A snapshot of a machine.
    MachineSnapshot(Object<MachineSnapshotSpec>),
    /// A template machines are cloned from.
    MachineImage(Object<MachineImageSpec>),
    /// Credentials, as Kubernetes' `v1/Secret` (`data` in base64 and
    /// `stringData` in clear, the latter winning).
    Secret(SecretObject),
}

impl Resource {
    /// `Kind/name`, the key of the object in a store.
    pub fn key(&self) -> Key {
        Key {
            kind: self.kind().to_string(),
            name: self.name().to_string(),
        }
    }

    /// The kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::ProxmoxCluster(_) => "ProxmoxCluster",
            Self::ProxmoxNode(_) => "ProxmoxNode",
            Self::Machine(_) => "Machine",
            Self::MachineSnapshot(_) => "MachineSnapshot",
            Self::MachineImage(_) => "MachineImage",
            Self::Secret(_) => "Secret",
        }
    }

    /// `metadata.name`.
    pub fn name(&self) -> &str {
        match self {
            Self::ProxmoxCluster(o) => &o.metadata.name,
            Self::ProxmoxNode(o) => &o.metadata.name,
            Self::Machine(o) => &o.metadata.name,
            Self::MachineSnapshot(o) => &o.metadata.name,
            Self::MachineImage(o) => &o.metadata.name,
            Self::Secret(o) => &o.metadata.name,
        }
    }

    /// `metadata`.
    pub fn metadata(&self) -> &Metadata {
        match self {
            Self::ProxmoxCluster(o) => &o.metadata,
            Self::ProxmoxNode(o) => &o.metadata,
            Self::Machine(o) => &o.metadata,
            Self::MachineSnapshot(o) => &o.metadata,
            Self::MachineImage(o) => &o.metadata,
            Self::Secret(o) => &o.metadata,
        }
    }

    /// `metadata`, to change.
    pub fn metadata_mut(&mut self) -> &mut Metadata {
        match self {
            Self::ProxmoxCluster(o) => &mut o.metadata,
            Self::ProxmoxNode(o) => &mut o.metadata,
            Self::Machine(o) => &mut o.metadata,
            Self::MachineSnapshot(o) => &mut o.metadata,
            Self::MachineImage(o) => &mut o.metadata,
            Self::Secret(o) => &mut o.metadata,
        }
    }

    /// Whether the object was made from a document whose provider says
    /// that removing the document deletes it ([`REMOVAL_DELETES_ANNOTATION`]).
    pub fn removal_deletes(&self) -> bool {
        self.metadata()
            .annotations
            .get(REMOVAL_DELETES_ANNOTATION)
            .is_some_and(|v| v == "true")
    }

    /// Whether the manifest asks for the object's deletion (standalone:
    /// the [`DELETE_ANNOTATION`] set to `"true"`).
    pub fn deletion_requested(&self) -> bool {
        self.metadata()
            .annotations
            .get(DELETE_ANNOTATION)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    }

    /// `apiVersion` as written.
    pub fn api_version(&self) -> &str {
        match self {
            Self::ProxmoxCluster(o) => &o.api_version,
            Self::ProxmoxNode(o) => &o.api_version,
            Self::Machine(o) => &o.api_version,
            Self::MachineSnapshot(o) => &o.api_version,
            Self::MachineImage(o) => &o.api_version,
            Self::Secret(o) => &o.api_version,
        }
    }
}

/// An object's identity in a store.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Key {
    /// The kind (`Machine`).
    pub kind: String,
    /// `metadata.name`.
    pub name: String,
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.kind, self.name)
    }
}

/// Kubernetes-style object metadata (the parts the operator reads).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metadata {
    /// The object's name, unique per kind.
    pub name: String,
    /// Labels: tenant (`tenant-id`), placement selectors.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations (kept, not interpreted).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// `apiVersion`, `metadata` and `spec`; `status` lives beside the
/// manifest, never in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Object<S> {
    /// Must be [`API_VERSION`].
    pub api_version: String,
    /// Name and labels.
    pub metadata: Metadata,
    /// What is wanted.
    pub spec: S,
}

/// A `v1/Secret` holding credentials, its keys in clear: `data`
/// (base64, as `kubectl create secret` writes it) decoded, `stringData`
/// over it, as Kubernetes merges them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", try_from = "SecretDocument")]
pub struct SecretObject {
    /// `v1`.
    pub api_version: String,
    /// Name.
    pub metadata: Metadata,
    /// Key to value, in clear.
    #[serde(default)]
    pub string_data: BTreeMap<String, String>,
}

/// A `v1/Secret` as a manifest writes it; any other key is refused.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SecretDocument {
    api_version: String,
    /// `Secret` when the document is read on its own (inside a
    /// [`Resource`] the kind is its tag).
    #[serde(default)]
    kind: Option<String>,
    metadata: Metadata,
    /// Base64 values.
    #[serde(default)]
    data: BTreeMap<String, String>,
    /// Values in clear; a key here wins over the same key in `data`.
    #[serde(default)]
    string_data: BTreeMap<String, String>,
    /// `Opaque`, `kubernetes.io/basic-auth`...: not read.
    #[serde(default, rename = "type")]
    _kind: Option<String>,
    /// Not read.
    #[serde(default)]
    _immutable: Option<bool>,
}

/// Why a Secret document is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretDataError {
    /// A `data` value that is not base64 of UTF-8 text.
    #[error("Secret '{secret}': data.{key} is {problem}")]
    Data {
        /// The Secret.
        secret: String,
        /// The key.
        key: String,
        /// `not valid base64` or `not UTF-8 text once decoded`.
        problem: &'static str,
    },
    /// A document of another kind read as a Secret.
    #[error("expected kind `Secret`, found `{0}`")]
    Kind(String),
}

impl TryFrom<SecretDocument> for SecretObject {
    type Error = SecretDataError;

    fn try_from(d: SecretDocument) -> Result<Self, Self::Error> {
        use base64::Engine as _;
        if let Some(kind) = d.kind.filter(|k| k != "Secret") {
            return Err(SecretDataError::Kind(kind));
        }
        let mut string_data = BTreeMap::new();
        for (key, value) in d.data {
            let fail = |problem| SecretDataError::Data {
                secret: d.metadata.name.clone(),
                key: key.clone(),
                problem,
            };
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(value.trim())
                .map_err(|_| fail("not valid base64"))?;
            let text = String::from_utf8(bytes).map_err(|_| fail("not UTF-8 text once decoded"))?;
            string_data.insert(key, text);
        }
        string_data.extend(d.string_data);
        Ok(Self {
            api_version: d.api_version,
            metadata: d.metadata,
            string_data,
        })
    }
}

/// RFC 3339 (UTC, seconds) of a Unix time.
pub fn rfc3339(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Now, RFC 3339.
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    rfc3339(secs)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
