//! The resources of the `pve.fake-pve.io/v1alpha1` API group, as serde
//! types. The same types are read from YAML manifests in standalone mode
//! and would be served as custom resources on Kubernetes; field names
//! follow Kubernetes conventions (camelCase).

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The API group and version every resource of this operator carries.
pub const API_VERSION: &str = "pve.fake-pve.io/v1alpha1";

/// The annotation that asks the standalone operator to delete a Machine
/// or MachineSnapshot (`"true"`). Nothing else deletes: a document that
/// vanishes or cannot be read keeps its VM and is reported.
pub const DELETE_ANNOTATION: &str = "pve.fake-pve.io/delete";

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
    /// Credentials, as Kubernetes' `v1/Secret` (`stringData` or base64
    /// `data` is not decoded: use `stringData`).
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

/// A `v1/Secret` holding credentials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretObject {
    /// `v1`.
    pub api_version: String,
    /// Name.
    pub metadata: Metadata,
    /// Key to value, in clear.
    #[serde(default)]
    pub string_data: BTreeMap<String, String>,
}

// ---------------------------------------------------------------------
// ProxmoxCluster

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

// ---------------------------------------------------------------------
// ProxmoxNode

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

// ---------------------------------------------------------------------
// Machine

/// A virtual machine as wanted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, CustomResource)]
#[kube(
    group = "pve.fake-pve.io",
    version = "v1alpha1",
    kind = "Machine",
    doc = "A virtual machine in PVE.",
    plural = "machines",
    namespaced,
    status = "MachineStatus",
    shortname = "pvm",
    category = "pve",
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"Node","type":"string","jsonPath":".status.node"}"#,
    printcolumn = r#"{"name":"VMID","type":"integer","jsonPath":".status.vmid"}"#,
    printcolumn = r#"{"name":"IP","type":"string","jsonPath":".status.ipAddresses[0]"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MachineSpec {
    /// The ProxmoxCluster (site) it lives on (default:
    /// `PROXMOX_DEFAULT_CLUSTER`, else the only one declared).
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub cluster: String,
    /// The VM's name in PVE (default: `metadata.name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub name: Option<String>,
    /// A fixed VMID; otherwise the lowest free one in 10000-99999.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 100, max = 999_999_999))]
    pub vmid: Option<u32>,
    /// A fixed node; otherwise `placement` chooses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Rules for choosing a node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// What it starts from (none: an empty VM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// CPU topology.
    #[serde(default)]
    pub cpu: Cpu,
    /// PVE's machine type: `q35`, `pc` (i440fx), or a versioned one
    /// (`pc-q35-9.0`); PVE's default when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^(q35|pc|pc-(q35|i440fx)-[0-9]+\.[0-9]+(\+pve[0-9]+)?)$"))]
    pub machine: Option<String>,
    /// Firmware: `uefi` (PVE's `ovmf`, with an EFI disk on the first
    /// disk's storage) or `bios` (`seabios`, PVE's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["uefi", "bios", "ovmf", "seabios"]))]
    pub bios: Option<String>,
    /// Bytes (a number) or a quantity (`4Gi`, `8192Mi`, `4096` = MiB).
    #[serde(default = "default_memory")]
    pub memory: Quantity,
    /// Disks, numbered per bus in order (`scsi0`, `scsi1`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disks: Vec<DiskSpec>,
    /// NICs, `net0`, `net1`, ... in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32))]
    pub networks: Vec<NetworkSpec>,
    /// Cloud-init settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud_init: Option<CloudInit>,
    /// `linux`, `windows`, `solaris`, `other`, or a PVE `ostype`
    /// (`l26`, `win11`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["linux", "windows", "solaris", "other", "l26", "l24", "win11", "win10", "win8", "win7", "wvista", "w2k8", "w2k3", "w2k", "wxp"]))]
    pub os_type: Option<String>,
    /// `disk`, `network`, `cdrom`, or device names (`scsi0`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(inner(regex(
        pattern = r"^(disk|network|cdrom|(scsi|virtio|sata|ide|net)[0-9]+)$"
    )))]
    pub boot_order: Vec<String>,
    /// The QEMU guest agent.
    #[serde(default = "yes")]
    pub agent: bool,
    /// Memory ballooning.
    #[serde(default = "yes")]
    pub balloon: bool,
    /// PVE's deletion protection.
    #[serde(default)]
    pub protection: bool,
    /// PVE tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(inner(regex(pattern = r"^[A-Za-z0-9_][A-Za-z0-9_+.-]*$")))]
    pub tags: Vec<String>,
    /// Tenant: the tag `tenant_{id}` (else the `tenant-id` or
    /// `tenant.sankofa.nexus/id` label).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[A-Za-z0-9_+.-]+$"))]
    pub tenant: Option<String>,
    /// On (default), Off or Suspended.
    #[serde(default)]
    pub power_state: PowerState,
    /// How `powerState: Off` stops a running VM: `Graceful` (default:
    /// PVE's shutdown, ACPI or the guest agent, then a hard stop after
    /// `shutdownTimeoutSeconds`) or `Hard` (an immediate stop).
    #[serde(default)]
    pub power_off_mode: PowerOffMode,
    /// How long a graceful shutdown may take, 1-3600 s (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 3600))]
    pub shutdown_timeout_seconds: Option<u32>,
    /// Reboots the running VM once per new value (the last one carried
    /// out is `status.lastReboot`); a reboot also applies the changes
    /// that wait for a power cycle. A new VM counts as rebooted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reboot_request: Option<String>,
    /// Delete (default) or Orphan the VM when the Machine goes.
    #[serde(default)]
    pub deletion_policy: DeletionPolicy,
}

fn yes() -> bool {
    true
}

fn default_memory() -> Quantity {
    Quantity::Str("2Gi".into())
}

/// A size: a plain number, or a string with a unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Quantity {
    /// A YAML number.
    Int(u64),
    /// `4Gi`, `8192Mi`, `100`.
    Str(String),
}

/// Kubernetes' int-or-string (as `resource.Quantity` and `IntOrString`):
/// an untagged enum's `anyOf` is not a structural schema. The units are
/// checked by the operator (`validate::parse_memory`, `parse_disk`).
impl JsonSchema for Quantity {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Quantity".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "x-kubernetes-int-or-string": true })
    }
}

impl Default for Quantity {
    fn default() -> Self {
        default_memory()
    }
}

impl std::fmt::Display for Quantity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Int(n) => write!(f, "{n}"),
            Self::Str(s) => f.write_str(s),
        }
    }
}

/// Where a machine may go.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Placement {
    /// Labels the node's ProxmoxNode must carry.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    /// Label keys: no two machines with the same value of one of these
    /// labels share a node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub anti_affinity: Vec<String>,
    /// At most this many guests on the chosen node.
    #[serde(
        default,
        rename = "maxVMsPerNode",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_vms_per_node: Option<u32>,
    /// Memory the chosen node must still have free after placement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_free_memory: Option<Quantity>,
    /// The nodes it may go to, by name (empty: any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
    /// Anti-affinity narrowed to label values: a machine whose label
    /// `key` has one of `values` shares no node with another such machine.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub anti_affinity_terms: Vec<AntiAffinityTerm>,
}

/// One anti-affinity term (VirtRigaud's `key`, `operator: In`, `values`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AntiAffinityTerm {
    /// The label key.
    #[schemars(length(min = 1))]
    pub key: String,
    /// The values the term covers (empty: every value).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

/// What a machine starts from: exactly one of these.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Source {
    /// A template, by name or VMID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// A MachineImage's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// An ISO volume (`local:iso/x.iso`) attached as CD-ROM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<String>,
    /// Clone as a linked clone (default) or a full one.
    #[serde(default = "yes")]
    pub linked: bool,
    /// Storage of a full clone's disks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<String>,
    /// A clone keeps the CPU, memory and NICs its template has: the
    /// machine's `cpu`, `memory`, `balloon` and `networks` are not applied
    /// (a VirtRigaud VMClone of a VM no document declares).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_hardware: bool,
}

/// CPU topology.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Cpu {
    /// Cores per socket, 1-128.
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 128))]
    pub cores: u32,
    /// Sockets, 1-4.
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 4))]
    pub sockets: u32,
    /// Threads per core, 1-2 (validated; QEMU guests on PVE have no SMT
    /// setting, so it is not sent).
    #[serde(default = "one", alias = "threadsPerCore")]
    #[schemars(range(min = 1, max = 2))]
    pub threads: u32,
    /// vCPUs plugged in, up to cores × sockets (PVE's `vcpus`; all when
    /// unset). Hot-pluggable: a running VM takes a change at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 512))]
    pub vcpus: Option<u32>,
}

fn one() -> u32 {
    1
}

impl Default for Cpu {
    fn default() -> Self {
        Self {
            cores: 1,
            sockets: 1,
            threads: 1,
            vcpus: None,
        }
    }
}

/// One disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DiskSpec {
    /// A label (not sent to PVE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `20G`, `50Gi`, `1Ti`, `100` (GiB).
    pub size: Quantity,
    /// Storage (default `local-lvm`).
    #[serde(default = "default_storage")]
    #[schemars(length(min = 1))]
    pub storage: String,
    /// `scsi` (default), `virtio`, `sata`, `ide`.
    #[serde(default = "default_bus", alias = "type")]
    #[schemars(extend("enum" = ["scsi", "virtio", "sata", "ide"]))]
    pub bus: String,
    /// `none`, `writethrough`, `writeback`, `directsync`, `unsafe`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["none", "writethrough", "writeback", "directsync", "unsafe"]))]
    pub cache: Option<String>,
    /// `raw`, `qcow2`, `vmdk`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["raw", "qcow2", "vmdk"]))]
    pub format: Option<String>,
    /// `thick`: the disk must be allocated in full, so its storage must
    /// provision thickly (checked before the VM is made); `thin`: no
    /// check (a VirtRigaud VMClass's `storage.type`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["thin", "thick"]))]
    pub provisioning: Option<String>,
}

fn default_storage() -> String {
    "local-lvm".into()
}

fn default_bus() -> String {
    "scsi".into()
}

/// One NIC.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NetworkSpec {
    /// A label (not sent to PVE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `vmbr0` (default).
    #[serde(default = "default_bridge")]
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-]+$"))]
    pub bridge: String,
    /// `virtio` (default), `e1000`, `e1000e`, `rtl8139`, `vmxnet3`.
    #[serde(default = "default_model")]
    #[schemars(extend("enum" = ["virtio", "e1000", "e1000e", "rtl8139", "vmxnet3"]))]
    pub model: String,
    /// A fixed MAC; otherwise PVE generates one and it is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$"))]
    pub mac_address: Option<String>,
    /// VLAN tag, 1-4094.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 4094))]
    pub vlan: Option<u32>,
    /// PVE's firewall on this NIC.
    #[serde(default)]
    pub firewall: bool,
    /// Static address through cloud-init (`192.0.2.10/24`), or `dhcp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip: Option<String>,
    /// Gateway of the static address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway: Option<String>,
}

fn default_bridge() -> String {
    "vmbr0".into()
}

fn default_model() -> String {
    "virtio".into()
}

/// Cloud-init settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CloudInit {
    /// Default user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// SSH public keys for the user.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ssh_keys: Vec<String>,
    /// DNS servers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dns: Vec<String>,
    /// DNS search domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_domain: Option<String>,
    /// User data as a snippet volume (`local:snippets/web.yaml`), sent as
    /// `cicustom=user=...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data_volume: Option<String>,
    /// Inline user data (a `#cloud-config` mapping). PVE's API cannot
    /// upload snippets: what PVE's cloud-init options express (the user,
    /// its SSH keys and password, a hostname equal to the VM's name) is
    /// applied, and the rest is named in the `CloudInitConfigured`
    /// condition as refused (use `userDataVolume` for a whole snippet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data: Option<String>,
    /// Storage of the cloud-init drive (default: the first disk's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<String>,
}

/// Wanted power state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum PowerState {
    /// Running.
    #[default]
    On,
    /// Stopped.
    Off,
    /// Running but paused, its memory kept (PVE's suspend to RAM).
    Suspended,
}

/// How a running VM is powered off.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum PowerOffMode {
    /// PVE's shutdown (ACPI or the guest agent), then a hard stop after
    /// the timeout.
    #[default]
    Graceful,
    /// An immediate stop.
    Hard,
}

/// What happens to the VM when its Machine is removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum DeletionPolicy {
    /// Destroy the VM and its disks (unless PVE's protection is on).
    #[default]
    Delete,
    /// Leave the VM in PVE.
    Orphan,
}

/// Phase of a machine.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
)]
pub enum Phase {
    /// Waiting to be created (no node, source missing, retrying).
    #[default]
    Pending,
    /// Being created or configured.
    Creating,
    /// Running.
    Running,
    /// Stopped.
    Stopped,
    /// Paused (`powerState: Suspended`).
    Suspended,
    /// Cannot progress without a change (validation, configuration).
    Error,
}

impl Phase {
    /// The name, as in metrics and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "Pending",
            Self::Creating => "Creating",
            Self::Running => "Running",
            Self::Stopped => "Stopped",
            Self::Suspended => "Suspended",
            Self::Error => "Error",
        }
    }
}

/// A Machine's observed state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineStatus {
    /// Where it is in its life.
    pub phase: Phase,
    /// Its VMID once created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vmid: Option<u32>,
    /// Its node once placed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Guest-agent addresses (no loopback, no link-local).
    #[serde(default)]
    pub ip_addresses: Vec<String>,
    /// Ready, VMCreated, ResourcesAllocated, NetworkConfigured.
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// The last `rebootRequest` carried out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_reboot: Option<String>,
    /// How to reach its console, once it exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub console: Option<ConsoleInfo>,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<String>,
}

/// The consoles PVE offers for a VM.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConsoleInfo {
    /// The console PVE's web UI opens (noVNC, or xterm.js when the
    /// display is a serial port).
    pub url: String,
    /// What PVE offers: `novnc` (`vncproxy`), `spice` (`spiceproxy`, with
    /// a `qxl` display), `xtermjs` (`termproxy`, with a serial port).
    pub types: Vec<String>,
}

/// A Kubernetes-style condition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// `Ready`, `VMCreated`, ...
    #[serde(rename = "type")]
    pub kind: String,
    /// `True` or `False`.
    pub status: String,
    /// CamelCase reason (`ValidationFailed`, `CreationSucceeded`, ...).
    pub reason: String,
    /// Details.
    #[serde(default)]
    pub message: String,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
}

impl Condition {
    /// A condition without a time.
    pub fn new(kind: &str, ok: bool, reason: &str, message: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            status: if ok { "True" } else { "False" }.into(),
            reason: reason.into(),
            message: message.into(),
            last_transition_time: None,
        }
    }

    /// Whether the status is `True`.
    pub fn is_true(&self) -> bool {
        self.status == "True"
    }
}

/// Sets `c` in `list`, keeping the transition time when the status did
/// not change.
pub fn set_condition(list: &mut Vec<Condition>, mut c: Condition, now: &str) {
    if let Some(old) = list.iter_mut().find(|o| o.kind == c.kind) {
        c.last_transition_time = if old.status == c.status {
            old.last_transition_time.clone()
        } else {
            Some(now.to_string())
        };
        *old = c;
    } else {
        c.last_transition_time = Some(now.to_string());
        list.push(c);
    }
}

// ---------------------------------------------------------------------
// MachineSnapshot

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

// ---------------------------------------------------------------------
// MachineImage

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
mod tests {
    use super::*;

    #[test]
    fn rfc3339_formats_known_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_790_000_000), "2026-09-21T14:13:20Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn a_machine_manifest_reads_with_defaults() {
        let y = r"
apiVersion: pve.fake-pve.io/v1alpha1
kind: Machine
metadata: { name: web-1, labels: { tenant-id: acme } }
spec:
  cluster: lab
  cpu: { cores: 2 }
  memory: 4Gi
  disks: [{ size: 20G }]
  networks: [{ bridge: vmbr0, vlan: 100 }]
";
        let r: Resource = serde_yaml::from_str(y).expect("parses");
        let Resource::Machine(m) = r else {
            panic!("not a machine")
        };
        assert_eq!(m.spec.cpu.sockets, 1);
        assert_eq!(m.spec.memory, Quantity::Str("4Gi".into()));
        assert_eq!(m.spec.disks[0].storage, "local-lvm");
        assert_eq!(m.spec.disks[0].bus, "scsi");
        assert_eq!(m.spec.networks[0].model, "virtio");
        assert_eq!(m.spec.power_state, PowerState::On);
        assert_eq!(m.spec.deletion_policy, DeletionPolicy::Delete);
        assert!(m.spec.agent && m.spec.balloon && !m.spec.protection);
    }

    /// Issue #16: misspelt or foreign fields were dropped silently (a
    /// blank VM made instead of vitistack's `spec.template` clone).
    #[rstest::rstest]
    #[case("  memroy: 2Gi\n", "unknown field `memroy`")]
    #[case("  cpu: { cors: 4 }\n", "unknown field `cors`")]
    #[case("  template: { name: ubuntu }\n", "unknown field `template`")]
    #[case("  disks: [{ size: 4G, sotrage: fast }]\n", "unknown field `sotrage`")]
    #[case("  source: { templat: ubuntu }\n", "unknown field `templat`")]
    #[case("  networks: [{ bridge: vmbr0, vlna: 5 }]\n", "unknown field `vlna`")]
    fn unknown_fields_are_refused_by_name(#[case] extra: &str, #[case] want: &str) {
        let y = format!(
            "apiVersion: pve.fake-pve.io/v1alpha1\nkind: Machine\nmetadata: {{ name: w }}\nspec:\n  cluster: lab\n{extra}"
        );
        let e = serde_yaml::from_str::<Resource>(&y)
            .expect_err("refused")
            .to_string();
        assert!(e.contains(want), "{e}");
    }

    #[test]
    fn aliases_and_kubernetes_metadata_still_read() {
        let y = r"
apiVersion: pve.fake-pve.io/v1alpha1
kind: Machine
metadata: { name: w, namespace: default, annotations: { a: b } }
spec:
  cluster: lab
  cpu: { cores: 2, threadsPerCore: 1 }
  disks: [{ size: 4G, type: virtio }]
";
        let r: Resource = serde_yaml::from_str(y).expect("parses");
        assert_eq!(r.key().name, "w");
        let y = r"
apiVersion: pve.fake-pve.io/v1alpha1
kind: ProxmoxCluster
metadata: { name: lab }
spec:
  endpoint: https://pve:8006
  networks: [vmbr0]
  credentials: { username: root@pam, password: { value: x } }
";
        serde_yaml::from_str::<Resource>(y).expect("parses");
    }

    #[test]
    fn token_ids_are_completed_with_the_user() {
        let c = ClusterCredentials {
            username: "operator@pve".into(),
            token_id: Some("ci".into()),
            ..Default::default()
        };
        assert_eq!(c.full_token_id().as_deref(), Some("operator@pve!ci"));
        let c = ClusterCredentials {
            token_id: Some("a@pve!b".into()),
            ..Default::default()
        };
        assert_eq!(c.full_token_id().as_deref(), Some("a@pve!b"));
    }
}
