//! What the observer found: nodes, peers, the VM, the clone source, and
//! why a storage cannot hold a thick-provisioned disk.

use std::collections::{BTreeMap, BTreeSet};

/// A node as the planner sees it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeInfo {
    /// The node's name.
    pub name: String,
    /// Online.
    pub online: bool,
    /// Memory, bytes.
    pub maxmem: u64,
    /// Memory given to guests (their `maxmem`), bytes.
    pub allocated_mem: u64,
    /// CPUs.
    pub maxcpu: u64,
    /// Guests on it.
    pub vm_count: u32,
    /// Its bridges, when read.
    pub bridges: Option<Vec<String>>,
    /// Labels of its ProxmoxNode.
    pub labels: BTreeMap<String, String>,
    /// Its ProxmoxNode's `maxVMs`.
    pub max_vms: Option<u32>,
}

/// Another machine, for anti-affinity.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Peer {
    /// Its name.
    pub machine: String,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
    /// Its node.
    pub node: String,
}

/// Where a clone comes from.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum SourceState {
    /// No template or image: an empty VM (or an ISO).
    #[default]
    None,
    /// The template, found.
    Found {
        /// Its node.
        node: String,
        /// Its VMID.
        vmid: u32,
    },
    /// Not found (yet), with why.
    Missing(String),
}

/// The VM as PVE has it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObservedVm {
    /// VMID.
    pub vmid: u32,
    /// Node.
    pub node: String,
    /// Running.
    pub running: bool,
    /// Running but paused (suspended).
    pub paused: bool,
    /// The current config, values as text.
    pub config: BTreeMap<String, String>,
    /// Pending values (`key -> value`) and pending deletions (`key -> ""`).
    pub pending: BTreeMap<String, String>,
    /// For the keys that have a pending value or deletion, the value in
    /// force until it is applied (a running VM's `cores` until its next
    /// start).
    pub in_force: BTreeMap<String, String>,
    /// Its lock (`create`, `clone`, `backup`...).
    pub lock: Option<String>,
    /// Guest-agent addresses.
    pub ip_addresses: Vec<String>,
    /// The size of a disk's volume as its storage reports it (bytes), for
    /// the disks whose config says less than the spec: after a rollback
    /// the config keeps the snapshot's size while the volume stays grown,
    /// and a resize to the size the volume already has changes nothing.
    pub volume_sizes: BTreeMap<String, u64>,
}

impl ObservedVm {
    /// The most vCPUs the VM can have plugged as it runs: the sockets ×
    /// cores in force (QEMU's `maxcpus`), not the pending ones.
    pub fn max_vcpus(&self) -> u32 {
        let get = |k: &str| {
            self.in_force
                .get(k)
                .or_else(|| self.config.get(k))
                .and_then(|v| v.parse::<u32>().ok())
                .unwrap_or(1)
        };
        get("sockets").saturating_mul(get("cores"))
    }

    pub(super) fn flag(&self, key: &str) -> bool {
        self.config.get(key).is_some_and(|v| {
            v.split(',')
                .next()
                .is_some_and(|f| f == "1" || f == "enabled=1")
        })
    }
}

/// What the observer found.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// The cluster's name.
    pub cluster: String,
    /// The Machine's VM, found by its mark.
    pub vm: Option<ObservedVm>,
    /// Every node.
    pub nodes: Vec<NodeInfo>,
    /// VMIDs in use, plus those reserved by other reconciles.
    pub used_vmids: BTreeSet<u32>,
    /// Other machines and their nodes.
    pub peers: Vec<Peer>,
    /// The clone source.
    pub source: SourceState,
    /// The cluster's allowed nodes, storages and bridges (empty: all).
    pub allowed_nodes: Vec<String>,
    /// Allowed storages.
    pub allowed_storages: Vec<String>,
    /// Allowed bridges.
    pub allowed_bridges: Vec<String>,
    /// Wanted bridges no node lists and the caller has no SDN.Use on
    /// (PVE hides them).
    pub unusable_bridges: Vec<String>,
    /// The last `rebootRequest` carried out (from the status).
    pub last_reboot: Option<String>,
    /// Why disks that want thick provisioning cannot have it on their
    /// storage ([`thick_refusal`]), read before the VM is made.
    pub provisioning_refused: Vec<String>,
}

/// Why a storage cannot hold a thick-provisioned disk, from its PVE type
/// and, where they matter, its options (`None`: not readable): `lvm` and
/// iSCSI LUNs allocate in full; `zfspool` (and ZFS over iSCSI) does unless
/// `sparse` is set; file storages (`dir`, `nfs`, `cifs`, `cephfs`,
/// `glusterfs`, `btrfs`) do with `preallocation` `full` or `falloc`
/// (PVE's default is `metadata`); `lvmthin` and `rbd` never do.
pub fn thick_refusal(
    disk: &str,
    storage: &str,
    kind: &str,
    options: Option<&serde_json::Map<String, serde_json::Value>>,
) -> Option<String> {
    let opt = |k: &str| {
        options.and_then(|o| o.get(k)).map(|v| match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    };
    let why = match kind {
        "lvm" | "iscsi" | "iscsidirect" => return None,
        "zfspool" | "zfs" => match opt("sparse").as_deref() {
            Some("1") => "is sparse".to_string(),
            _ => return None,
        },
        "dir" | "nfs" | "cifs" | "cephfs" | "glusterfs" | "btrfs" => {
            match (options, opt("preallocation").as_deref()) {
                (_, Some("full" | "falloc")) => return None,
                (None, _) => {
                    "may not preallocate (its preallocation option could not be read)".to_string()
                }
                (Some(_), p) => format!("preallocates {}", p.unwrap_or("metadata")),
            }
        }
        _ => "provisions thinly".to_string(),
    };
    Some(format!(
        "disk {disk}: storage '{storage}' ({kind}) {why}; thick provisioning needs an lvm, iSCSI or non-sparse zfspool storage, or a file storage with preallocation full or falloc"
    ))
}
