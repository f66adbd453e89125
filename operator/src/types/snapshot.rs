//! MachineSnapshot: a snapshot of a machine.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A snapshot of a machine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, CustomResource)]
#[kube(
    group = "pve.fake-pve.io",
    version = "v1alpha1",
    kind = "MachineSnapshot",
    doc = "A snapshot of a Machine's VM.",
    plural = "machinesnapshots",
    namespaced,
    status = "MachineSnapshotStatus",
    shortname = "pvsnap",
    category = "pve",
    printcolumn = r#"{"name":"Machine","type":"string","jsonPath":".spec.machine"}"#,
    printcolumn = r#"{"name":"Snapshot","type":"string","jsonPath":".status.snapshotName"}"#,
    printcolumn = r#"{"name":"Ready","type":"boolean","jsonPath":".status.ready"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MachineSnapshotSpec {
    /// The Machine's name.
    #[schemars(length(min = 1))]
    pub machine: String,
    /// The snapshot's name in PVE (default: `metadata.name` with
    /// characters PVE refuses replaced by `_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_name: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Save the RAM too (`vmstate`).
    #[serde(default)]
    pub include_memory: bool,
    /// Roll the machine back to this snapshot once for each new value
    /// (any string: a date, a counter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback_request: Option<String>,
}

/// A snapshot as observed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineSnapshotStatus {
    /// Taken and present.
    pub ready: bool,
    /// The snapshot's name in PVE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_name: Option<String>,
    /// The cluster of the VM it belongs to (its deletion goes there once
    /// the Machine is gone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// The VM it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vmid: Option<u32>,
    /// Its node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The last `rollbackRequest` carried out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_rollback: Option<String>,
    /// Why it is not ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<String>,
}
