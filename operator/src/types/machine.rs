//! Machine: a virtual machine as wanted.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::MachineStatus;

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
    /// Room to hot-plug vCPUs: the VM gets as many cores (per socket) as
    /// its node has CPUs (at least `cores`), of which `cores` × `sockets`
    /// are plugged (PVE's `vcpus`; fewer when `vcpus` says so), so that a
    /// later change of `cores` applies to the running VM, up to the
    /// node's CPUs. A VM whose cores already allow the vCPUs keeps them.
    /// VirtRigaud's VMClass `cpus` are read so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cores_from_node: bool,
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
            cores_from_node: false,
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

pub(super) fn default_storage() -> String {
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
