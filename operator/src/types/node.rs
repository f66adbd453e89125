//! ProxmoxNode: a node's limits for placement.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A node's limits for placement.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, CustomResource)]
#[kube(
    group = "pve.fake-pve.io",
    version = "v1alpha1",
    kind = "ProxmoxNode",
    doc = "A PVE node's labels and limits for placement.",
    plural = "proxmoxnodes",
    namespaced,
    status = "ProxmoxNodeStatus",
    shortname = "pvenode",
    category = "pve",
    printcolumn = r#"{"name":"Cluster","type":"string","jsonPath":".spec.cluster"}"#,
    printcolumn = r#"{"name":"Node","type":"string","jsonPath":".spec.nodeName"}"#,
    printcolumn = r#"{"name":"Ready","type":"boolean","jsonPath":".status.ready"}"#,
    printcolumn = r#"{"name":"VMs","type":"integer","jsonPath":".status.vmCount"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProxmoxNodeSpec {
    /// The ProxmoxCluster's name.
    #[schemars(length(min = 1))]
    pub cluster: String,
    /// The node's name in PVE.
    #[schemars(length(min = 1))]
    pub node_name: String,
    /// At most this many guests.
    #[serde(default, rename = "maxVMs", skip_serializing_if = "Option::is_none")]
    pub max_vms: Option<u32>,
}

/// A node as the operator saw it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProxmoxNodeStatus {
    /// Online.
    pub ready: bool,
    /// Totals and use.
    pub resources: NodeResources,
    /// Guests on it.
    pub vm_count: u32,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<String>,
}

/// Totals and use of a node.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NodeResources {
    /// CPUs.
    pub cpu: Usage,
    /// Memory, bytes.
    pub memory: Usage,
    /// Root storage, bytes.
    pub storage: Usage,
}

/// A total and how much of it is used.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    /// Total.
    pub total: u64,
    /// Used.
    pub used: u64,
}
