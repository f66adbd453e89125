//! ProxmoxCluster: how to reach and trust one PVE cluster.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::NodeResources;

/// How to reach and trust one PVE cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, CustomResource)]
#[kube(
    group = "pve.fake-pve.io",
    version = "v1alpha1",
    kind = "ProxmoxCluster",
    doc = "A PVE cluster: endpoint, TLS trust and credentials.",
    plural = "proxmoxclusters",
    namespaced,
    status = "ProxmoxClusterStatus",
    shortname = "pvecluster",
    category = "pve",
    printcolumn = r#"{"name":"Endpoint","type":"string","jsonPath":".spec.endpoint"}"#,
    printcolumn = r#"{"name":"Ready","type":"boolean","jsonPath":".status.ready"}"#,
    printcolumn = r#"{"name":"Version","type":"string","jsonPath":".status.version"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProxmoxClusterSpec {
    /// `https://pve.example.com:8006`.
    #[schemars(regex(pattern = r"^https?://.+"))]
    pub endpoint: String,
    /// Accept any certificate (development only).
    #[serde(default, rename = "insecureSkipTLSVerify")]
    pub insecure_skip_tls_verify: bool,
    /// A PEM CA bundle, inline or by reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_certificate: Option<ValueSource>,
    /// The SHA-256 fingerprint of the certificate to pin (`AB:CD:...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// A client certificate (PEM) for mutual TLS, with `clientKey`: for a
    /// TLS proxy in front of PVE that asks for one (pveproxy never does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_certificate: Option<ValueSource>,
    /// The client certificate's private key (PEM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_key: Option<ValueSource>,
    /// Username/password or API token.
    pub credentials: ClusterCredentials,
    /// Nodes machines may be placed on (empty: all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
    /// Storages disks may be allocated on (empty: all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub storages: Vec<String>,
    /// Bridges NICs may attach to (empty: all).
    #[serde(default, alias = "networks", skip_serializing_if = "Vec::is_empty")]
    pub bridges: Vec<String>,
}

/// Credentials of a cluster. Either `password` or `tokenSecret`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClusterCredentials {
    /// `operator@pve`.
    #[serde(default)]
    pub username: String,
    /// The password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<ValueSource>,
    /// The token's ID: `operator-token` (with `username`) or the whole
    /// `operator@pve!operator-token`.
    #[serde(default, rename = "tokenID", skip_serializing_if = "Option::is_none")]
    pub token_id: Option<String>,
    /// The token's secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_secret: Option<ValueSource>,
}

impl ClusterCredentials {
    /// The full token ID (`user@realm!id`), if a token is configured.
    pub fn full_token_id(&self) -> Option<String> {
        let id = self.token_id.as_deref()?;
        Some(if id.contains('!') {
            id.to_string()
        } else {
            format!("{}!{id}", self.username)
        })
    }
}

/// Where a secret value comes from: a Secret object, a file (relative to
/// the manifest directory), or inline (development only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ValueSource {
    /// A key of a `v1/Secret`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeyRef>,
    /// A file whose content (trimmed) is the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The value itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// A key of a Secret.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SecretKeyRef {
    /// The Secret's name.
    #[schemars(length(min = 1))]
    pub name: String,
    /// The key.
    #[schemars(length(min = 1))]
    pub key: String,
}

/// What the operator found out about a cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProxmoxClusterStatus {
    /// Connected and authenticated.
    pub ready: bool,
    /// PVE's version (`9.1.5`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Every node PVE lists, discovered.
    #[serde(default)]
    pub nodes: Vec<NodeStatusEntry>,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_health_check: Option<String>,
    /// Why it is not ready, or what it lacks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The PVE privileges the operator uses that its user lacks
    /// (`SDN.Use on /sdn/zones/localnetwork`), from `/access/permissions`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_privileges: Vec<String>,
}

/// One node in a cluster's status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeStatusEntry {
    /// The node's name.
    pub name: String,
    /// Online.
    pub ready: bool,
    /// Resources and use.
    pub resources: NodeResources,
    /// Guests on it.
    pub vm_count: u32,
}
