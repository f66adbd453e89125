//! `plan(desired, observed) -> steps`: pure functions, no I/O. The
//! executor observes PVE, calls these, carries out the steps one at a
//! time and plans again, so every decision here is unit-tested without a
//! server.

use std::collections::{BTreeMap, BTreeSet};

use pve_client::propstring::{Disk, NetworkDevice};

use crate::types::{
    Condition, DeletionPolicy, DiskSpec, MachineSnapshotSpec, MachineSnapshotStatus, MachineSpec,
    Metadata, Object, Phase, PowerOffMode, PowerState,
};
use crate::validate::{self, FieldErrors};

/// The tag every VM the operator made carries.
pub const MARK_TAG: &str = "pve-operator";

/// The operator's VMID range.
pub const VMID_RANGE: std::ops::RangeInclusive<u32> = 10_000..=99_999;

/// Bytes in a MiB.
pub const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// The description that marks a VM as made by this operator for one
/// Machine: a restarted operator finds and adopts it by this line.
pub fn ownership_mark(cluster: &str, machine: &str) -> String {
    format!("managed-by=pve-operator machine={cluster}/{machine}")
}

/// Whether a VM's description carries the mark of `cluster`/`machine`.
pub fn has_mark(description: Option<&str>, cluster: &str, machine: &str) -> bool {
    let mark = ownership_mark(cluster, machine);
    description.is_some_and(|d| d.lines().any(|l| l.trim() == mark))
}

/// A Machine turned into what PVE should hold.
#[derive(Debug, Clone)]
pub struct Desired {
    /// `metadata.name`.
    pub machine: String,
    /// Labels (placement, tenant).
    pub labels: BTreeMap<String, String>,
    /// The spec.
    pub spec: MachineSpec,
    /// The VM name PVE stores.
    pub vm_name: String,
    /// Memory in MiB (0 when invalid).
    pub memory_mib: u64,
    /// `(scsi0, bytes, spec)` per disk.
    pub disks: Vec<(String, u64, DiskSpec)>,
    /// Validation failures.
    pub errors: FieldErrors,
    /// Being deleted.
    pub deleting: bool,
    /// The inline user data as PVE's cloud-init options.
    pub user_data: Option<crate::cloudinit::Mapped>,
}

impl Desired {
    /// Validates and derives what PVE should hold from a Machine.
    pub fn from_machine(m: &Object<MachineSpec>) -> Self {
        Self::new(&m.metadata, &m.spec)
    }

    /// As [`Desired::from_machine`], from its parts.
    pub fn new(meta: &Metadata, spec: &MachineSpec) -> Self {
        let name = spec.name.clone().unwrap_or_else(|| meta.name.clone());
        let errors = validate::validate_machine(&name, spec);
        let memory_mib = validate::parse_memory(&spec.memory).unwrap_or(0) / MIB;
        let mut per_bus: BTreeMap<&str, u32> = BTreeMap::new();
        let mut disks = Vec::new();
        for d in &spec.disks {
            let i = per_bus.entry(d.bus.as_str()).or_default();
            let bytes = validate::parse_disk(&d.size).unwrap_or(GIB);
            disks.push((format!("{}{i}", d.bus), bytes, d.clone()));
            *i += 1;
        }
        let vm_name = validate::pve_name(&name);
        let user_data = spec
            .cloud_init
            .as_ref()
            .and_then(|c| c.user_data.as_deref())
            .and_then(|u| crate::cloudinit::map_user_data(u, &vm_name).ok());
        Self {
            machine: meta.name.clone(),
            labels: meta.labels.clone(),
            spec: spec.clone(),
            user_data,
            vm_name,
            memory_mib,
            disks,
            errors,
            deleting: false,
        }
    }

    /// The tenant: the spec's, else the `tenant-id` or
    /// `tenant.sankofa.nexus/id` label.
    pub fn tenant(&self) -> Option<&str> {
        self.spec
            .tenant
            .as_deref()
            .or_else(|| self.labels.get("tenant-id").map(String::as_str))
            .or_else(|| {
                self.labels
                    .get("tenant.sankofa.nexus/id")
                    .map(String::as_str)
            })
    }

    /// The tags PVE should hold: the spec's, `tenant_{id}`, and the
    /// operator's mark, sorted.
    pub fn tags(&self) -> BTreeSet<String> {
        let mut t: BTreeSet<String> = self.spec.tags.iter().map(|t| t.to_lowercase()).collect();
        if let Some(id) = self.tenant() {
            t.insert(format!("tenant_{id}").to_lowercase());
        }
        t.insert(MARK_TAG.into());
        t
    }

    fn uses_cloud_init(&self) -> bool {
        self.spec.cloud_init.is_some() || self.spec.networks.iter().any(|n| n.ip.is_some())
    }

    fn boot(&self) -> Option<String> {
        if self.spec.boot_order.is_empty() {
            return None;
        }
        let mut order = Vec::new();
        for b in &self.spec.boot_order {
            let dev = match b.as_str() {
                "disk" => self.disks.first().map(|d| d.0.clone()),
                "network" => (!self.spec.networks.is_empty()).then(|| "net0".to_string()),
                "cdrom" => Some("ide2".to_string()),
                other => Some(other.to_string()),
            };
            if let Some(d) = dev
                && !order.contains(&d)
            {
                order.push(d);
            }
        }
        Some(format!("order={}", order.join(";")))
    }

    /// The `netN` value, keeping the MAC PVE generated when the spec
    /// names none.
    fn net(&self, i: usize, observed: Option<&str>) -> String {
        let n = &self.spec.networks[i];
        let mac = n.mac_address.clone().map(|m| m.to_uppercase()).or_else(|| {
            observed
                .and_then(|o| NetworkDevice::parse(o).ok())
                .filter(|o| o.model == n.model)
                .and_then(|o| o.macaddr)
        });
        NetworkDevice {
            macaddr: mac,
            bridge: Some(n.bridge.clone()),
            tag: n.vlan.map(|v| v as u16),
            firewall: n.firewall.then_some(true),
            ..NetworkDevice::new(n.model.clone())
        }
        .to_string()
    }

    /// Every key PVE should hold, apart from disks and drives, given the
    /// VM's current config (for the MACs PVE generated).
    pub fn config(
        &self,
        cluster: &str,
        observed: &BTreeMap<String, String>,
    ) -> BTreeMap<String, String> {
        let s = &self.spec;
        let mut c = BTreeMap::new();
        c.insert("name".into(), self.vm_name.clone());
        if !self.keeps_hardware() {
            c.insert("cores".into(), s.cpu.cores.to_string());
            c.insert("sockets".into(), s.cpu.sockets.to_string());
            if let Some(v) = s.cpu.vcpus {
                c.insert("vcpus".into(), v.to_string());
            }
            c.insert("memory".into(), self.memory_mib.to_string());
            if !s.balloon {
                c.insert("balloon".into(), "0".into());
            }
        }
        c.insert("agent".into(), if s.agent { "1" } else { "0" }.into());
        if s.protection {
            c.insert("protection".into(), "1".into());
        }
        c.insert(
            "tags".into(),
            self.tags().into_iter().collect::<Vec<_>>().join(";"),
        );
        c.insert("description".into(), ownership_mark(cluster, &self.machine));
        c.insert("hotplug".into(), "network,disk,usb,memory,cpu".into());
        c.insert("numa".into(), "1".into());
        if let Some(m) = &s.machine {
            c.insert("machine".into(), m.clone());
        }
        if let Some(b) = self.bios() {
            c.insert("bios".into(), b.into());
        }
        if let Some(os) = s.os_type.as_deref().and_then(validate::ostype) {
            c.insert("ostype".into(), os.into());
        }
        if let Some(b) = self.boot() {
            c.insert("boot".into(), b);
        }
        for i in 0..s.networks.len() {
            let key = format!("net{i}");
            let v = self.net(i, observed.get(&key).map(String::as_str));
            c.insert(key, v);
            let n = &s.networks[i];
            if let Some(ip) = &n.ip {
                let mut v = format!("ip={ip}");
                if let Some(gw) = &n.gateway {
                    v.push_str(&format!(",gw={gw}"));
                }
                c.insert(format!("ipconfig{i}"), v);
            }
        }
        if let Some(ci) = &s.cloud_init {
            let ud = self.user_data.clone().unwrap_or_default();
            if let Some(u) = ci.user.as_ref().or(ud.user.as_ref()) {
                c.insert("ciuser".into(), u.clone());
            }
            let keys = if ci.ssh_keys.is_empty() {
                &ud.ssh_keys
            } else {
                &ci.ssh_keys
            };
            if !keys.is_empty() {
                c.insert("sshkeys".into(), encode_sshkeys(&keys.join("\n")));
            }
            if let Some(p) = &ud.password {
                c.insert("cipassword".into(), p.clone());
            }
            if !ci.dns.is_empty() {
                c.insert("nameserver".into(), ci.dns.join(" "));
            }
            if let Some(d) = &ci.search_domain {
                c.insert("searchdomain".into(), d.clone());
            }
            if let Some(v) = &ci.user_data_volume {
                c.insert("cicustom".into(), format!("user={v}"));
            }
        }
        c
    }

    /// Whether the VM keeps its template's CPU, memory and NICs
    /// ([`crate::types::Source::keep_hardware`]).
    pub fn keeps_hardware(&self) -> bool {
        self.spec.source.as_ref().is_some_and(|s| s.keep_hardware)
    }

    /// PVE's `bios` for the spec's firmware.
    fn bios(&self) -> Option<&'static str> {
        match self.spec.bios.as_deref()? {
            "uefi" | "ovmf" => Some("ovmf"),
            _ => Some("seabios"),
        }
    }

    /// Drives that are set once and never removed: the ISO (`ide2`), the
    /// cloud-init drive (`ide3`) and UEFI's EFI vars disk (`efidisk0`).
    fn drives(&self) -> BTreeMap<String, String> {
        let mut c = BTreeMap::new();
        if self.bios() == Some("ovmf") {
            let storage = self
                .disks
                .first()
                .map_or_else(|| "local-lvm".to_string(), |d| d.2.storage.clone());
            c.insert("efidisk0".into(), format!("{storage}:1,efitype=4m"));
        }
        if let Some(v) = self.spec.source.as_ref().and_then(|s| s.volume.as_ref()) {
            c.insert("ide2".into(), format!("{v},media=cdrom"));
        }
        if self.uses_cloud_init() {
            let storage = self
                .spec
                .cloud_init
                .as_ref()
                .and_then(|c| c.storage.clone())
                .or_else(|| self.disks.first().map(|d| d.2.storage.clone()))
                .unwrap_or_else(|| "local-lvm".into());
            c.insert("ide3".into(), format!("{storage}:cloudinit"));
        }
        c
    }

    /// A new disk's allocation: `local-lvm:20,cache=writeback`.
    fn new_disk(bytes: u64, d: &DiskSpec) -> String {
        let mut v = format!("{}:{}", d.storage, bytes.div_ceil(GIB));
        if let Some(c) = &d.cache {
            v.push_str(&format!(",cache={c}"));
        }
        if let Some(f) = &d.format {
            v.push_str(&format!(",format={f}"));
        }
        v
    }

    /// The parameters of `POST /nodes/{node}/qemu` for a new VM.
    pub fn create_params(&self, cluster: &str, vmid: u32) -> Vec<(String, String)> {
        let mut p = vec![("vmid".to_string(), vmid.to_string())];
        p.extend(self.config(cluster, &BTreeMap::new()));
        for (key, bytes, d) in &self.disks {
            p.push((key.clone(), Self::new_disk(*bytes, d)));
        }
        p.extend(self.drives());
        p
    }
}

/// The consoles PVE offers for a VM of `config`, with the URL its web UI
/// (at `ui`, `https://host:8006`) opens.
pub fn console(
    ui: &str,
    node: &str,
    vmid: u32,
    config: &BTreeMap<String, String>,
) -> crate::types::ConsoleInfo {
    let vga = config
        .get("vga")
        .map(|v| {
            v.split(',')
                .find_map(|p| match p.split_once('=') {
                    Some(("type", t)) => Some(t.to_string()),
                    Some(_) => None,
                    None => Some(p.to_string()),
                })
                .unwrap_or_default()
        })
        .unwrap_or_else(|| "std".into());
    let serial = config.keys().any(|k| k.starts_with("serial"));
    let mut types = Vec::new();
    if !vga.starts_with("serial") && vga != "none" {
        types.push("novnc".to_string());
    }
    if vga.starts_with("qxl") {
        types.push("spice".to_string());
    }
    if serial {
        types.push("xtermjs".to_string());
    }
    let name = config.get("name").map_or("", String::as_str);
    let kind = if types.first().is_some_and(|t| t == "novnc") {
        "novnc=1&resize=off"
    } else {
        "xtermjs=1"
    };
    crate::types::ConsoleInfo {
        url: format!(
            "{}/?console=kvm&{kind}&vmid={vmid}&vmname={name}&node={node}&cmd=",
            ui.trim_end_matches('/')
        ),
        types,
    }
}

/// PVE wants `sshkeys` URL-encoded (and `%20` for spaces).
fn encode_sshkeys(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

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
    fn flag(&self, key: &str) -> bool {
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

/// One thing to do in PVE.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// `POST /nodes/{node}/qemu`.
    Create {
        /// Node.
        node: String,
        /// VMID (`auto`: chosen by the planner, may be moved on conflict).
        vmid: u32,
        /// Whether the VMID was chosen automatically.
        auto: bool,
        /// Every parameter but `vmid`.
        params: Vec<(String, String)>,
    },
    /// `POST /nodes/{node}/qemu/{source}/clone`.
    Clone {
        /// The template's node.
        node: String,
        /// The template.
        source: u32,
        /// The new VMID.
        vmid: u32,
        /// Whether the VMID was chosen automatically.
        auto: bool,
        /// Another node (full clones from shared storage).
        target: Option<String>,
        /// Name.
        name: String,
        /// Description (the ownership mark).
        description: String,
        /// Full clone.
        full: bool,
        /// Storage of a full clone.
        storage: Option<String>,
    },
    /// `PUT .../config`.
    Configure {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
        /// Keys to set.
        set: Vec<(String, String)>,
        /// Keys to remove.
        delete: Vec<String>,
    },
    /// `PUT .../resize`.
    Resize {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
        /// `scsi0`.
        disk: String,
        /// The new size (`20G`).
        size: String,
    },
    /// `POST .../status/start`.
    Start {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
    },
    /// `POST .../status/stop`.
    Stop {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
    },
    /// `POST .../status/shutdown` with `forceStop`: graceful, then hard
    /// after `timeout` seconds.
    Shutdown {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
        /// Seconds before the hard stop.
        timeout: u32,
    },
    /// `POST .../status/reboot`.
    Reboot {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
    },
    /// `POST .../status/suspend`: paused, in RAM.
    Suspend {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
    },
    /// `POST .../status/resume`.
    Resume {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
    },
    /// `DELETE /nodes/{node}/qemu/{vmid}` with `purge`.
    Destroy {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
    },
    /// `POST .../snapshot`.
    Snapshot {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
        /// Snapshot name.
        name: String,
        /// Description.
        description: Option<String>,
        /// Save RAM.
        vmstate: bool,
    },
    /// `POST .../snapshot/{name}/rollback`.
    Rollback {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
        /// Snapshot name.
        name: String,
    },
    /// `DELETE .../snapshot/{name}`.
    DeleteSnapshot {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
        /// Snapshot name.
        name: String,
    },
    /// `POST /nodes/{node}/storage/{storage}/download-url`.
    DownloadUrl {
        /// Node.
        node: String,
        /// Storage.
        storage: String,
        /// URL.
        url: String,
        /// File name.
        filename: String,
        /// Checksum and algorithm.
        checksum: Option<(String, String)>,
    },
    /// `POST .../template`.
    Template {
        /// Node.
        node: String,
        /// VMID.
        vmid: u32,
    },
}

impl Step {
    /// A short name, for logs and metrics.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Create { .. } => "create",
            Self::Clone { .. } => "clone",
            Self::Configure { .. } => "configure",
            Self::Resize { .. } => "resize",
            Self::Start { .. } => "start",
            Self::Stop { .. } => "stop",
            Self::Shutdown { .. } => "shutdown",
            Self::Reboot { .. } => "reboot",
            Self::Suspend { .. } => "suspend",
            Self::Resume { .. } => "resume",
            Self::Destroy { .. } => "destroy",
            Self::Snapshot { .. } => "snapshot",
            Self::Rollback { .. } => "rollback",
            Self::DeleteSnapshot { .. } => "delete_snapshot",
            Self::DownloadUrl { .. } => "download_url",
            Self::Template { .. } => "template",
        }
    }
}

/// What to do next and what to report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// In order; empty when PVE matches the spec.
    pub steps: Vec<Step>,
    /// Conditions to set.
    pub conditions: Vec<Condition>,
    /// The phase to report.
    pub phase: Phase,
    /// The node, once known.
    pub node: Option<String>,
    /// The VMID, once known.
    pub vmid: Option<u32>,
    /// Something is in progress in PVE (a lock): look again soon.
    pub wait: bool,
    /// A problem that only a change of the spec or of PVE fixes.
    pub blocked: bool,
}

impl Plan {
    fn cond(&mut self, kind: &str, ok: bool, reason: &str, msg: impl Into<String>) {
        self.conditions.push(Condition::new(kind, ok, reason, msg));
    }
}

/// The lowest free VMID of the operator's range.
pub fn assign_vmid(used: &BTreeSet<u32>) -> Option<u32> {
    VMID_RANGE.clone().find(|v| !used.contains(v))
}

/// Chooses a node for a new VM: online, allowed, matching the selector,
/// with the bridges, under `maxVMs`/`maxVMsPerNode`, with the memory
/// (plus `minFreeMemory`) free, and away from anti-affine peers; the one
/// with the most memory left wins, then the fewest guests, then the name.
///
/// # Errors
/// Why no node fits, node by node.
pub fn select_node(d: &Desired, o: &Observed) -> Result<String, String> {
    let need = d.memory_mib * MIB;
    let placement = d.spec.placement.clone().unwrap_or_default();
    let min_free = placement
        .min_free_memory
        .as_ref()
        .map(|q| validate::parse_memory(q).unwrap_or(0))
        .unwrap_or(0);
    let mut reasons = Vec::new();
    let mut best: Option<(u64, u32, &str)> = None;
    for n in &o.nodes {
        let why = if !n.online {
            Some("offline".to_string())
        } else if !o.allowed_nodes.is_empty() && !o.allowed_nodes.contains(&n.name) {
            Some("not allowed by the cluster".into())
        } else if !placement.nodes.is_empty() && !placement.nodes.contains(&n.name) {
            Some("not in the placement's nodes".into())
        } else if !placement
            .node_selector
            .iter()
            .all(|(k, v)| n.labels.get(k) == Some(v))
        {
            Some("does not match the node selector".into())
        } else if let Some(b) = n.bridges.as_ref().and_then(|bs| {
            d.spec
                .networks
                .iter()
                .find(|x| !bs.contains(&x.bridge))
                .map(|x| x.bridge.clone())
        }) {
            Some(format!("has no bridge '{b}'"))
        } else if let Some(max) = [n.max_vms, placement.max_vms_per_node]
            .into_iter()
            .flatten()
            .min()
            .filter(|m| n.vm_count >= *m)
        {
            Some(format!("has {} VMs, the limit is {max}", n.vm_count))
        } else if n.maxmem.saturating_sub(n.allocated_mem) < need + min_free {
            Some(format!(
                "insufficient resources: {} MiB free, {} MiB requested{}",
                n.maxmem.saturating_sub(n.allocated_mem) / MIB,
                d.memory_mib,
                if min_free > 0 {
                    format!(" plus {} MiB to keep free", min_free / MIB)
                } else {
                    String::new()
                }
            ))
        } else {
            placement
                .anti_affinity
                .iter()
                .find_map(|k| {
                    let mine = d.labels.get(k)?;
                    o.peers.iter().find(|p| {
                        p.machine != d.machine && p.node == n.name && p.labels.get(k) == Some(mine)
                    })
                })
                .or_else(|| {
                    placement.anti_affinity_terms.iter().find_map(|t| {
                        let covers = |v: Option<&String>| {
                            v.is_some_and(|v| t.values.is_empty() || t.values.contains(v))
                        };
                        let mine = d.labels.get(&t.key);
                        if !covers(mine) {
                            return None;
                        }
                        o.peers.iter().find(|p| {
                            p.machine != d.machine
                                && p.node == n.name
                                && covers(p.labels.get(&t.key))
                        })
                    })
                })
                .map(|p| format!("holds '{}' (anti-affinity)", p.machine))
        };
        match why {
            Some(w) => reasons.push(format!("{}: {w}", n.name)),
            None => {
                let free = n.maxmem - n.allocated_mem - need;
                let better = match best {
                    None => true,
                    Some((bf, bc, bn)) => {
                        (
                            free,
                            std::cmp::Reverse(n.vm_count),
                            std::cmp::Reverse(n.name.as_str()),
                        ) > (bf, std::cmp::Reverse(bc), std::cmp::Reverse(bn))
                    }
                };
                if better {
                    best = Some((free, n.vm_count, n.name.as_str()));
                }
            }
        }
    }
    match best {
        Some((_, _, n)) => Ok(n.to_string()),
        None if o.nodes.is_empty() => Err("the cluster lists no nodes".into()),
        None => Err(format!("no node fits: {}", reasons.join("; "))),
    }
}

/// Values compared as PVE means them, not as written.
fn same(key: &str, a: &str, b: &str) -> bool {
    let set = |s: &str, seps: &[char]| -> BTreeSet<String> {
        s.split(seps)
            .filter(|x| !x.is_empty())
            .map(|x| x.trim().to_lowercase())
            .collect()
    };
    if key == "tags" {
        return set(a, &[';', ',', ' ']) == set(b, &[';', ',', ' ']);
    }
    if key.starts_with("net") {
        return match (NetworkDevice::parse(a), NetworkDevice::parse(b)) {
            (Ok(x), Ok(y)) => {
                x.model == y.model
                    && x.bridge == y.bridge
                    && x.tag == y.tag
                    && x.firewall.unwrap_or(false) == y.firewall.unwrap_or(false)
                    && x.macaddr.map(|m| m.to_uppercase()) == y.macaddr.map(|m| m.to_uppercase())
            }
            _ => a == b,
        };
    }
    if matches!(key, "agent") {
        let f = |s: &str| {
            s.split(',')
                .next()
                .is_some_and(|v| v == "1" || v == "enabled=1")
        };
        return f(a) == f(b);
    }
    if key == "cipassword" {
        // PVE shows a set password as `**********`.
        return !a.is_empty() && !b.is_empty();
    }
    if key == "hotplug" || key.starts_with("ipconfig") || key == "boot" {
        return set(a, &[',']) == set(b, &[',']);
    }
    a.trim_end() == b.trim_end()
}

/// Keys the operator removes when the spec does not set them.
/// The keys a clone that keeps its template's hardware leaves as they are.
fn kept_hardware(key: &str) -> bool {
    matches!(key, "balloon" | "vcpus")
        || key
            .strip_prefix("net")
            .or_else(|| key.strip_prefix("ipconfig"))
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

fn managed_optional(key: &str) -> bool {
    matches!(
        key,
        "balloon"
            | "vcpus"
            | "protection"
            | "ciuser"
            | "sshkeys"
            | "nameserver"
            | "searchdomain"
            | "cicustom"
    ) || key
        .strip_prefix("net")
        .or_else(|| key.strip_prefix("ipconfig"))
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

fn size_text(bytes: u64) -> String {
    if bytes.is_multiple_of(GIB) {
        format!("{}G", bytes / GIB)
    } else {
        format!("{}M", bytes.div_ceil(MIB))
    }
}

fn with_cache(volume: &str, cache: &str) -> String {
    let mut parts: Vec<String> = volume
        .split(',')
        .filter(|p| !p.starts_with("cache="))
        .map(str::to_string)
        .collect();
    parts.push(format!("cache={cache}"));
    parts.join(",")
}

/// Plans a Machine that exists (or should).
pub fn plan_machine(d: &Desired, o: &Observed) -> Plan {
    let mut p = Plan::default();
    if !d.errors.is_empty() {
        let msg = d
            .errors
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect::<Vec<_>>()
            .join("; ");
        p.cond("Ready", false, "ValidationFailed", msg);
        p.phase = Phase::Error;
        p.blocked = true;
        return p;
    }
    if let Some(s) = d
        .disks
        .iter()
        .map(|x| &x.2.storage)
        .find(|s| !o.allowed_storages.is_empty() && !o.allowed_storages.contains(s))
    {
        p.cond(
            "Ready",
            false,
            "ConfigurationError",
            format!("storage '{s}' is not allowed by cluster '{}'", o.cluster),
        );
        p.phase = Phase::Error;
        p.blocked = true;
        return p;
    }
    if let Some(b) = d
        .spec
        .networks
        .iter()
        .map(|n| &n.bridge)
        .find(|b| !o.allowed_bridges.is_empty() && !o.allowed_bridges.contains(b))
    {
        let msg = format!("bridge '{b}' is not allowed by cluster '{}'", o.cluster);
        p.cond("NetworkConfigured", false, "NetworkError", msg.clone());
        p.cond("Ready", false, "NetworkError", msg);
        p.phase = Phase::Error;
        p.blocked = true;
        return p;
    }
    if let Some(ud) = &d.user_data {
        if ud.refused.is_empty() {
            p.cond(
                "CloudInitConfigured",
                true,
                "UserDataMapped",
                "user data as PVE's cloud-init options",
            );
        } else {
            p.cond(
                "CloudInitConfigured",
                false,
                "UserDataNotExpressible",
                format!(
                    "PVE's cloud-init options cannot carry: {} (place the whole user data in a snippet and name it in cloudInit.userDataVolume)",
                    ud.refused.join(", ")
                ),
            );
        }
    }
    match &o.vm {
        None => plan_create(d, o, p),
        Some(vm) => plan_update(d, o, vm, p),
    }
}

fn plan_create(d: &Desired, o: &Observed, mut p: Plan) -> Plan {
    p.phase = Phase::Pending;
    if !o.provisioning_refused.is_empty() {
        let m = o.provisioning_refused.join("; ");
        p.cond(
            "ResourcesAllocated",
            false,
            "ThinProvisionedStorage",
            m.clone(),
        );
        p.cond("Ready", false, "ConfigurationError", m);
        p.phase = Phase::Error;
        p.blocked = true;
        return p;
    }
    if let Some(b) = d
        .spec
        .networks
        .iter()
        .find(|n| o.unusable_bridges.contains(&n.bridge))
    {
        let m = format!(
            "permission problem: bridge '{0}' is hidden from the operator's PVE user, which lacks SDN.Use on /sdn/zones/localnetwork/{0}",
            b.bridge
        );
        p.cond("NetworkConfigured", false, "PermissionDenied", m.clone());
        p.cond("Ready", false, "AuthorizationError", m);
        p.phase = Phase::Error;
        p.blocked = true;
        return p;
    }
    let template = match &o.source {
        SourceState::Missing(m) => {
            p.cond("VMCreated", false, "CreationFailed", m.clone());
            p.cond("Ready", false, "ConfigurationError", m.clone());
            return p;
        }
        SourceState::Found { node, vmid } => Some((node.clone(), *vmid)),
        SourceState::None => None,
    };
    // Node: the spec's, the template's (clones stay beside it), or chosen.
    let node = if let Some(n) = &d.spec.node {
        match o.nodes.iter().find(|x| &x.name == n) {
            Some(x) if x.online => n.clone(),
            Some(_) => {
                let m = format!("node '{n}' is not online");
                p.cond("Ready", false, "NodeUnhealthy", m);
                return p;
            }
            None => {
                let m = format!("node '{n}' does not exist in cluster '{}'", o.cluster);
                p.cond("Ready", false, "ConfigurationError", m);
                p.phase = Phase::Error;
                p.blocked = true;
                return p;
            }
        }
    } else if let Some((tnode, _)) = &template {
        tnode.clone()
    } else {
        match select_node(d, o) {
            Ok(n) => n,
            Err(m) => {
                p.cond(
                    "ResourcesAllocated",
                    false,
                    "InsufficientResources",
                    m.clone(),
                );
                p.cond("Ready", false, "QuotaExceeded", m);
                return p;
            }
        }
    };
    if let Some(bs) = o
        .nodes
        .iter()
        .find(|x| x.name == node)
        .and_then(|x| x.bridges.as_ref())
        && let Some(b) = d.spec.networks.iter().find(|n| !bs.contains(&n.bridge))
    {
        let m = format!(
            "network bridge '{}' does not exist on node '{node}'",
            b.bridge
        );
        p.cond("NetworkConfigured", false, "NetworkError", m.clone());
        p.cond("Ready", false, "NetworkError", m);
        p.phase = Phase::Error;
        p.blocked = true;
        return p;
    }
    let (vmid, auto) = match d.spec.vmid {
        Some(v) if o.used_vmids.contains(&v) => {
            let m = format!("VM {v} already exists");
            p.cond("VMCreated", false, "CreationFailed", m.clone());
            p.cond("Ready", false, "ConfigurationError", m);
            p.phase = Phase::Error;
            p.blocked = true;
            return p;
        }
        Some(v) => (v, false),
        None => match assign_vmid(&o.used_vmids) {
            Some(v) => (v, true),
            None => {
                let m = "no free VMID in 10000-99999".to_string();
                p.cond("Ready", false, "QuotaExceeded", m);
                return p;
            }
        },
    };
    p.cond(
        "ResourcesAllocated",
        true,
        "AllocationSucceeded",
        format!("node {node}, VMID {vmid}"),
    );
    p.cond(
        "VMCreated",
        false,
        "Creating",
        format!("creating VM {vmid} on {node}"),
    );
    p.cond("Ready", false, "Creating", "");
    p.phase = Phase::Creating;
    p.node = Some(node.clone());
    p.vmid = Some(vmid);
    let step = match template {
        Some((tnode, source)) => {
            let src = d.spec.source.clone().unwrap_or_default();
            Step::Clone {
                target: (tnode != node).then(|| node.clone()),
                node: tnode,
                source,
                vmid,
                auto,
                name: d.vm_name.clone(),
                description: ownership_mark(&o.cluster, &d.machine),
                full: !src.linked,
                storage: if src.linked { None } else { src.storage },
            }
        }
        None => Step::Create {
            node,
            vmid,
            auto,
            params: d
                .create_params(&o.cluster, vmid)
                .into_iter()
                .filter(|(k, _)| k != "vmid")
                .collect(),
        },
    };
    p.steps.push(step);
    p
}

fn plan_update(d: &Desired, o: &Observed, vm: &ObservedVm, mut p: Plan) -> Plan {
    p.node = Some(vm.node.clone());
    p.vmid = Some(vm.vmid);
    let (node, vmid) = (vm.node.clone(), vm.vmid);
    if let Some(lock) = &vm.lock {
        p.phase = if matches!(lock.as_str(), "create" | "clone") {
            Phase::Creating
        } else if vm.running {
            Phase::Running
        } else {
            Phase::Stopped
        };
        p.cond(
            "Ready",
            false,
            "Locked",
            format!("VM {vmid} is locked ({lock})"),
        );
        p.wait = true;
        return p;
    }
    p.cond(
        "VMCreated",
        true,
        "CreationSucceeded",
        format!("VM {vmid} on {node}"),
    );
    let want_on = d.spec.power_state == PowerState::On;
    let want_running = d.spec.power_state != PowerState::Off;
    let mut running = vm.running;
    let mut paused = vm.running && vm.paused;
    if !want_running && running {
        p.steps.push(match d.spec.power_off_mode {
            PowerOffMode::Hard => Step::Stop {
                node: node.clone(),
                vmid,
            },
            PowerOffMode::Graceful => Step::Shutdown {
                node: node.clone(),
                vmid,
                timeout: d.spec.shutdown_timeout_seconds.unwrap_or(60),
            },
        });
        running = false;
        paused = false;
    }

    // A reboot asked for applies what waits for a power cycle: sent
    // before it (PVE keeps it pending until then).
    let rebooting = want_on
        && running
        && !paused
        && d.spec.reboot_request.is_some()
        && d.spec.reboot_request != o.last_reboot;

    // Config drift, hot-plug rules.
    let desired = d.config(&o.cluster, &vm.config);
    let mut set = Vec::new();
    let mut delete = Vec::new();
    let mut power_cycle = Vec::new();
    let mut refused = Vec::new();
    for (k, v) in &desired {
        let current = vm.config.get(k);
        if current.is_some_and(|c| same(k, c, v)) {
            continue;
        }
        // Already pending with this value: waits for a power cycle.
        if running && vm.pending.get(k).is_some_and(|pv| same(k, pv, v)) {
            power_cycle.push(k.clone());
            continue;
        }
        if k == "memory" && running && !rebooting {
            let cur: u64 = current.and_then(|c| c.parse().ok()).unwrap_or(0);
            if d.memory_mib < cur {
                power_cycle.push(format!("memory {cur} MiB -> {} MiB", d.memory_mib));
                continue;
            }
        }
        set.push((k.clone(), v.clone()));
    }
    for k in vm.config.keys() {
        if d.keeps_hardware() && kept_hardware(k) {
            continue;
        }
        if managed_optional(k) && !desired.contains_key(k) && !vm.pending.contains_key(k) {
            delete.push(k.clone());
        }
    }
    // A clone's template may carry its cloud-init drive elsewhere (often
    // `ide2`): a second one is not added.
    let has_cloud_init = vm
        .config
        .iter()
        .any(|(k, v)| Disk::parse_as(k, v).is_ok() && v.contains("cloudinit"));
    for (k, v) in d.drives() {
        let second_cloud_init = k == "ide3" && has_cloud_init;
        if !vm.config.contains_key(&k) && !second_cloud_init {
            set.push((k, v));
        }
    }
    let mut resizes = Vec::new();
    for (key, bytes, spec) in &d.disks {
        match vm.config.get(key) {
            None => set.push((key.clone(), Desired::new_disk(*bytes, spec))),
            Some(cur) => {
                let Ok(disk) = Disk::parse_as(key, cur) else {
                    continue;
                };
                let have = disk
                    .size
                    .as_deref()
                    .and_then(crate::validate::parse_size_text)
                    .unwrap_or(0)
                    .max(vm.volume_sizes.get(key).copied().unwrap_or(0));
                if *bytes > have {
                    resizes.push(Step::Resize {
                        node: node.clone(),
                        vmid,
                        disk: key.clone(),
                        size: size_text(*bytes),
                    });
                } else if *bytes < have {
                    refused.push(format!(
                        "{key} is {}, shrinking to {} is not supported",
                        size_text(have),
                        size_text(*bytes)
                    ));
                }
                if let Some(c) = &spec.cache
                    && disk.cache.as_deref() != Some(c.as_str())
                {
                    set.push((key.clone(), with_cache(cur, c)));
                }
            }
        }
    }
    if !set.is_empty() || !delete.is_empty() {
        p.steps.push(Step::Configure {
            node: node.clone(),
            vmid,
            set,
            delete,
        });
    }
    // Started before disks grow (they grow online): a resize that cannot
    // progress must not keep the VM down.
    if want_running && !running {
        p.steps.push(Step::Start {
            node: node.clone(),
            vmid,
        });
    }
    p.steps.extend(resizes);
    if d.spec.power_state == PowerState::Suspended && !paused {
        p.steps.push(Step::Suspend {
            node: node.clone(),
            vmid,
        });
    }
    if want_on && paused {
        p.steps.push(Step::Resume {
            node: node.clone(),
            vmid,
        });
    }
    // A reboot asked for, after the changes it is to apply.
    if rebooting {
        p.steps.push(Step::Reboot {
            node: node.clone(),
            vmid,
        });
    }

    // Keys the running VM left pending (not hot-pluggable).
    if running {
        for k in vm.pending.keys() {
            if desired.contains_key(k) && !power_cycle.contains(k) {
                power_cycle.push(k.clone());
            }
        }
    }
    if !refused.is_empty() {
        p.cond(
            "ResourcesAllocated",
            false,
            "DiskShrinkRefused",
            refused.join("; "),
        );
    } else if !power_cycle.is_empty() {
        p.cond(
            "ResourcesAllocated",
            false,
            "PowerCycleRequired",
            format!(
                "takes effect after a power cycle: {}",
                power_cycle.join(", ")
            ),
        );
    } else {
        p.cond("ResourcesAllocated", true, "AllocationSucceeded", "");
    }
    let nets_ok = (0..d.spec.networks.len()).all(|i| {
        let k = format!("net{i}");
        vm.config
            .get(&k)
            .zip(desired.get(&k))
            .is_some_and(|(a, b)| same(&k, a, b))
    });
    if nets_ok {
        p.cond(
            "NetworkConfigured",
            true,
            "NetworkReady",
            vm.ip_addresses.join(", "),
        );
    } else {
        p.cond("NetworkConfigured", false, "Configuring", "");
    }
    p.phase = if paused {
        Phase::Suspended
    } else if running {
        Phase::Running
    } else {
        Phase::Stopped
    };
    if p.steps.is_empty() {
        if refused.is_empty() && power_cycle.is_empty() {
            p.cond(
                "Ready",
                true,
                if paused {
                    "Suspended"
                } else if running {
                    "Running"
                } else {
                    "Stopped"
                },
                "",
            );
        } else {
            p.cond(
                "Ready",
                true,
                "ConfigurationPending",
                "see ResourcesAllocated",
            );
        }
    } else {
        p.cond("Ready", false, "Reconciling", "");
    }
    p
}

/// What deleting a Machine takes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeletePlan {
    /// Steps, in order.
    pub steps: Vec<Step>,
    /// Nothing left to do: drop the finalizer.
    pub done: bool,
    /// Why it cannot go on (protection).
    pub blocked: Option<String>,
}

/// Plans the deletion of a Machine's VM.
pub fn plan_delete(policy: DeletionPolicy, vm: Option<&ObservedVm>) -> DeletePlan {
    let Some(vm) = vm else {
        return DeletePlan {
            done: true,
            ..DeletePlan::default()
        };
    };
    if policy == DeletionPolicy::Orphan {
        return DeletePlan {
            done: true,
            ..DeletePlan::default()
        };
    }
    if vm.flag("protection") {
        return DeletePlan {
            blocked: Some(format!(
                "VM {} has protection enabled: not deleting it (turn protection off in PVE, or use deletionPolicy: Orphan)",
                vm.vmid
            )),
            ..DeletePlan::default()
        };
    }
    if vm.lock.is_some() {
        return DeletePlan::default();
    }
    let mut steps = Vec::new();
    if vm.running {
        steps.push(Step::Stop {
            node: vm.node.clone(),
            vmid: vm.vmid,
        });
    }
    steps.push(Step::Destroy {
        node: vm.node.clone(),
        vmid: vm.vmid,
    });
    DeletePlan {
        steps,
        ..DeletePlan::default()
    }
}

/// Plans a MachineSnapshot: `vm` is the machine's `(node, vmid)` when it
/// exists, `existing` the VM's snapshot names.
pub fn plan_snapshot(
    snapname: &str,
    spec: &MachineSnapshotSpec,
    status: &MachineSnapshotStatus,
    vm: Option<(&str, u32)>,
    existing: &[String],
    deleting: bool,
) -> Vec<Step> {
    let Some((node, vmid)) = vm else {
        return Vec::new();
    };
    let present = existing.iter().any(|s| s == snapname);
    let (node, name) = (node.to_string(), snapname.to_string());
    if deleting {
        return if present {
            vec![Step::DeleteSnapshot { node, vmid, name }]
        } else {
            Vec::new()
        };
    }
    if !present {
        return vec![Step::Snapshot {
            node,
            vmid,
            name,
            description: spec.description.clone(),
            vmstate: spec.include_memory,
        }];
    }
    match &spec.rollback_request {
        Some(r) if status.last_rollback.as_ref() != Some(r) => {
            vec![Step::Rollback { node, vmid, name }]
        }
        _ => Vec::new(),
    }
}

/// Addresses worth reporting from `agent/network-get-interfaces`: no
/// loopback, no link-local.
pub fn agent_ips(answer: &serde_json::Value) -> Vec<String> {
    let list = answer
        .get("result")
        .and_then(|r| r.as_array())
        .or_else(|| answer.as_array());
    let mut out = Vec::new();
    for iface in list.into_iter().flatten() {
        if iface.get("name").and_then(|n| n.as_str()) == Some("lo") {
            continue;
        }
        let addrs = iface.get("ip-addresses").and_then(|a| a.as_array());
        for a in addrs.into_iter().flatten() {
            let Some(ip) = a.get("ip-address").and_then(|i| i.as_str()) else {
                continue;
            };
            let Ok(parsed) = ip.parse::<std::net::IpAddr>() else {
                continue;
            };
            let skip = match parsed {
                std::net::IpAddr::V4(v) => v.is_loopback() || v.is_link_local(),
                std::net::IpAddr::V6(v) => v.is_loopback() || (v.segments()[0] & 0xffc0) == 0xfe80,
            };
            if !skip && !out.contains(&ip.to_string()) {
                out.push(ip.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::types::{NetworkSpec, Placement, Quantity, Source};

    fn machine(yaml: &str) -> Desired {
        let spec: MachineSpec = serde_yaml::from_str(yaml).expect("spec");
        Desired::new(
            &Metadata {
                name: "web".into(),
                ..Metadata::default()
            },
            &spec,
        )
    }

    fn node(name: &str) -> NodeInfo {
        NodeInfo {
            name: name.into(),
            online: true,
            maxmem: 32 * GIB,
            maxcpu: 8,
            bridges: Some(vec!["vmbr0".into()]),
            ..NodeInfo::default()
        }
    }

    fn observed() -> Observed {
        Observed {
            cluster: "lab".into(),
            nodes: vec![node("pve")],
            ..Observed::default()
        }
    }

    const BASIC: &str = "
cluster: lab
cpu: { cores: 2 }
memory: 2Gi
disks: [{ size: 20G }]
networks: [{ bridge: vmbr0, vlan: 100 }]
tags: [web]
tenant: acme
";

    /// The VM `plan` would create for `d`, as PVE then holds it.
    fn created(d: &Desired, running: bool) -> ObservedVm {
        let mut config: BTreeMap<String, String> = d.config("lab", &BTreeMap::new());
        config.insert(
            "net0".into(),
            "virtio=BC:24:11:00:00:01,bridge=vmbr0,tag=100".into(),
        );
        config.insert("scsi0".into(), "local-lvm:vm-10000-disk-0,size=20G".into());
        ObservedVm {
            vmid: 10000,
            node: "pve".into(),
            running,
            config,
            ..ObservedVm::default()
        }
    }

    #[test]
    fn a_new_machine_is_created_on_the_lowest_free_vmid() {
        let d = machine(BASIC);
        let mut o = observed();
        o.used_vmids = [100, 10000, 10001, 10003].into();
        let p = plan_machine(&d, &o);
        let Some(Step::Create {
            node,
            vmid,
            auto,
            params,
        }) = p.steps.first()
        else {
            panic!("{p:?}")
        };
        assert_eq!((node.as_str(), *vmid, *auto), ("pve", 10002, true));
        let params: BTreeMap<_, _> = params.iter().cloned().collect();
        assert_eq!(params["scsi0"], "local-lvm:20");
        assert_eq!(params["net0"], "virtio,bridge=vmbr0,tag=100");
        assert_eq!(params["memory"], "2048");
        assert_eq!(params["cores"], "2");
        assert_eq!(params["tags"], "pve-operator;tenant_acme;web");
        assert_eq!(
            params["description"],
            "managed-by=pve-operator machine=lab/web"
        );
        assert_eq!(p.phase, Phase::Creating);
        assert_eq!(p.steps.len(), 1);
    }

    #[test]
    fn an_explicit_vmid_in_use_is_an_error() {
        let d = machine(&format!("{BASIC}vmid: 500\n"));
        let mut o = observed();
        o.used_vmids = [500].into();
        let p = plan_machine(&d, &o);
        assert!(p.steps.is_empty());
        assert_eq!(p.phase, Phase::Error);
        assert_eq!(p.conditions[0].message, "VM 500 already exists");
    }

    #[test]
    fn validation_failures_block_everything() {
        let d = machine("cluster: lab\nmemory: 64Mi\n");
        let p = plan_machine(&d, &observed());
        assert!(p.steps.is_empty() && p.blocked);
        assert_eq!(p.conditions[0].reason, "ValidationFailed");
        assert_eq!(
            p.conditions[0].message,
            "spec.memory: memory 64Mi is below minimum of 128 MB"
        );
    }

    #[test]
    fn a_missing_bridge_is_a_network_error() {
        let d = machine("cluster: lab\nnode: pve\nnetworks: [{bridge: vmbr9}]\n");
        let p = plan_machine(&d, &observed());
        assert!(p.steps.is_empty());
        let c = p
            .conditions
            .iter()
            .find(|c| c.kind == "NetworkConfigured")
            .expect("cond");
        assert_eq!(c.reason, "NetworkError");
        assert_eq!(
            c.message,
            "network bridge 'vmbr9' does not exist on node 'pve'"
        );
    }

    #[test]
    fn node_selection_honours_resources_labels_limits_and_anti_affinity() {
        let mut d = machine("cluster: lab\nmemory: 4Gi\n");
        d.labels.insert("app".into(), "db".into());
        let mut o = observed();
        let mut a = node("a");
        a.allocated_mem = 30 * GIB; // 2 GiB free
        let mut b = node("b");
        b.allocated_mem = 8 * GIB;
        b.labels.insert("zone".into(), "east".into());
        let mut c = node("c");
        c.allocated_mem = 4 * GIB;
        c.max_vms = Some(3);
        c.vm_count = 3;
        o.nodes = vec![a, b, c];
        assert_eq!(select_node(&d, &o), Ok("b".into()));
        // anti-affinity: a peer with app=db on b
        d.spec.placement = Some(Placement {
            anti_affinity: vec!["app".into()],
            ..Placement::default()
        });
        o.peers.push(Peer {
            machine: "db-0".into(),
            labels: d.labels.clone(),
            node: "b".into(),
        });
        let e = select_node(&d, &o).unwrap_err();
        assert_eq!(
            e,
            "no node fits: a: insufficient resources: 2048 MiB free, 4096 MiB requested; \
             b: holds 'db-0' (anti-affinity); c: has 3 VMs, the limit is 3"
        );
        // node selector
        o.peers.clear();
        d.spec.placement = Some(Placement {
            node_selector: [("zone".to_string(), "west".to_string())].into(),
            ..Placement::default()
        });
        assert!(
            select_node(&d, &o)
                .unwrap_err()
                .contains("b: does not match the node selector")
        );
        // minFreeMemory and maxVMsPerNode
        d.spec.placement = Some(Placement {
            min_free_memory: Some(Quantity::Str("25Gi".into())),
            ..Placement::default()
        });
        let e = select_node(&d, &o).unwrap_err();
        assert!(e.contains("b: insufficient resources: 24576 MiB free, 4096 MiB requested plus 25600 MiB to keep free"), "{e}");
        d.spec.placement = Some(Placement {
            max_vms_per_node: Some(3),
            ..Placement::default()
        });
        assert_eq!(select_node(&d, &o), Ok("b".into()));
    }

    #[test]
    fn the_emptiest_node_wins() {
        let d = machine("cluster: lab\n");
        let mut o = observed();
        let mut a = node("a");
        a.allocated_mem = 10 * GIB;
        o.nodes = vec![a, node("b"), node("c")];
        assert_eq!(select_node(&d, &o), Ok("b".into()));
        o.nodes[2].online = false;
        o.allowed_nodes = vec!["a".into(), "c".into()];
        assert_eq!(select_node(&d, &o), Ok("a".into()));
    }

    #[test]
    fn vmids_come_from_the_operator_range() {
        assert_eq!(assign_vmid(&BTreeSet::new()), Some(10_000));
        assert_eq!(assign_vmid(&[10_000, 10_002].into()), Some(10_001));
        let full: BTreeSet<u32> = VMID_RANGE.collect();
        assert_eq!(assign_vmid(&full), None);
    }

    #[test]
    fn a_vm_matching_its_spec_needs_nothing() {
        let d = machine(BASIC);
        let mut o = observed();
        o.vm = Some(created(&d, true));
        let p = plan_machine(&d, &o);
        assert_eq!(p.steps, vec![]);
        assert_eq!(p.phase, Phase::Running);
        let ready = p
            .conditions
            .iter()
            .find(|c| c.kind == "Ready")
            .expect("ready");
        assert!(ready.is_true(), "{p:?}");
    }

    #[test]
    fn a_stopped_vm_is_configured_then_started() {
        let d = machine(BASIC);
        let mut o = observed();
        let mut vm = created(&d, false);
        vm.config.insert("cores".into(), "1".into());
        o.vm = Some(vm);
        let p = plan_machine(&d, &o);
        assert_eq!(
            p.steps,
            vec![
                Step::Configure {
                    node: "pve".into(),
                    vmid: 10000,
                    set: vec![("cores".into(), "2".into())],
                    delete: vec![],
                },
                Step::Start {
                    node: "pve".into(),
                    vmid: 10000
                }
            ]
        );
    }

    #[rstest::rstest]
    #[case::lvm("lvm", None, None)]
    #[case::iscsi("iscsi", None, None)]
    #[case::zfs("zfspool", Some(serde_json::json!({})), None)]
    #[case::zfs_sparse("zfspool", Some(serde_json::json!({ "sparse": 1 })), Some("is sparse"))]
    #[case::dir_full("dir", Some(serde_json::json!({ "preallocation": "full" })), None)]
    #[case::dir_falloc("nfs", Some(serde_json::json!({ "preallocation": "falloc" })), None)]
    #[case::dir_default("dir", Some(serde_json::json!({})), Some("preallocates metadata"))]
    #[case::dir_unread("dir", None, Some("could not be read"))]
    #[case::lvmthin("lvmthin", None, Some("provisions thinly"))]
    #[case::rbd("rbd", Some(serde_json::json!({})), Some("provisions thinly"))]
    fn thick_provisioning_follows_the_storage_type_and_options(
        #[case] kind: &str,
        #[case] options: Option<serde_json::Value>,
        #[case] refused: Option<&str>,
    ) {
        let got = thick_refusal(
            "scsi0",
            "ssd-storage",
            kind,
            options.as_ref().and_then(|o| o.as_object()),
        );
        match (refused, got) {
            (None, None) => {}
            (Some(why), Some(m)) => {
                assert!(
                    m.starts_with(&format!("disk scsi0: storage 'ssd-storage' ({kind}) ")),
                    "{m}"
                );
                assert!(m.contains(why), "{m}");
            }
            (want, got) => panic!("{kind}: want {want:?}, got {got:?}"),
        }
    }

    #[test]
    fn a_machine_whose_thick_disks_cannot_be_thick_is_not_created() {
        let d = machine(
            "cluster: lab\ndisks: [{ size: 10G, storage: local-lvm, provisioning: thick }]\n",
        );
        let mut o = observed();
        o.provisioning_refused =
            vec![thick_refusal("scsi0", "local-lvm", "lvmthin", None).unwrap()];
        let p = plan_machine(&d, &o);
        assert!(p.steps.is_empty(), "{p:?}");
        assert_eq!(p.phase, Phase::Error);
        let c = p
            .conditions
            .iter()
            .find(|c| c.kind == "ResourcesAllocated")
            .expect("cond");
        assert_eq!(c.reason, "ThinProvisionedStorage");
        assert!(
            c.message
                .contains("storage 'local-lvm' (lvmthin) provisions thinly"),
            "{}",
            c.message
        );
        o.provisioning_refused.clear();
        assert!(matches!(
            plan_machine(&d, &o).steps.first(),
            Some(Step::Create { .. })
        ));
    }

    #[test]
    fn a_clone_that_keeps_its_template_s_hardware_is_not_reconfigured_to_defaults() {
        let d = machine("cluster: lab\nsource: { template: tmpl, keepHardware: true }\n");
        let mut o = observed();
        let mut vm = created(&d, true);
        for (k, v) in [
            ("cores", "4"),
            ("sockets", "2"),
            ("vcpus", "6"),
            ("memory", "512"),
            ("balloon", "0"),
            ("net0", "virtio=BC:24:11:00:00:09,bridge=vmbr1"),
            ("ipconfig0", "ip=dhcp"),
        ] {
            vm.config.insert(k.into(), v.into());
        }
        o.vm = Some(vm);
        let p = plan_machine(&d, &o);
        let touched: Vec<String> = p
            .steps
            .iter()
            .flat_map(|s| match s {
                Step::Configure { set, delete, .. } => set
                    .iter()
                    .map(|(k, _)| k.clone())
                    .chain(delete.iter().cloned())
                    .collect(),
                _ => Vec::new(),
            })
            .collect();
        for k in [
            "cores",
            "sockets",
            "vcpus",
            "memory",
            "balloon",
            "net0",
            "ipconfig0",
        ] {
            assert!(!touched.contains(&k.to_string()), "{k} changed: {p:?}");
        }
        // Without the flag the same VM is brought to the machine's defaults.
        let d = machine("cluster: lab\nsource: { template: tmpl }\n");
        let desired = d.config("lab", &BTreeMap::new());
        assert_eq!(
            (desired["cores"].as_str(), desired["memory"].as_str()),
            ("1", "2048")
        );
    }

    #[test]
    fn drift_is_undone_and_the_mac_is_kept() {
        let d = machine(BASIC);
        let mut o = observed();
        let mut vm = created(&d, true);
        vm.config.insert("memory".into(), "4096".into()); // larger: decrease
        vm.config.insert(
            "net0".into(),
            "virtio=BC:24:11:00:00:01,bridge=vmbr0".into(),
        );
        vm.config.insert("tags".into(), "pve-operator;web".into());
        vm.config.insert("net1".into(), "e1000,bridge=vmbr0".into());
        vm.config.insert("protection".into(), "1".into());
        o.vm = Some(vm);
        let p = plan_machine(&d, &o);
        let Some(Step::Configure { set, delete, .. }) = p.steps.first() else {
            panic!("{p:?}")
        };
        let set: BTreeMap<_, _> = set.iter().cloned().collect();
        assert_eq!(set["net0"], "virtio=BC:24:11:00:00:01,bridge=vmbr0,tag=100");
        assert_eq!(set["tags"], "pve-operator;tenant_acme;web");
        assert!(
            !set.contains_key("memory"),
            "memory decrease waits for a power cycle"
        );
        assert_eq!(delete, &vec!["net1".to_string(), "protection".to_string()]);
        let c = p
            .conditions
            .iter()
            .find(|c| c.kind == "ResourcesAllocated")
            .expect("cond");
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("False", "PowerCycleRequired")
        );
        assert_eq!(
            c.message,
            "takes effect after a power cycle: memory 4096 MiB -> 2048 MiB"
        );
    }

    #[test]
    fn memory_decrease_applies_when_stopped_and_increase_online() {
        let d = machine(&BASIC.replace("2Gi", "1Gi").replace("power", ""));
        let mut o = observed();
        let mut vm = created(&d, false);
        vm.config.insert("memory".into(), "2048".into());
        o.vm = Some(vm);
        let p = plan_machine(&d, &o);
        assert!(
            matches!(&p.steps[0], Step::Configure { set, .. } if set == &vec![("memory".to_string(), "1024".to_string())])
        );
        let d = machine(&BASIC.replace("2Gi", "4Gi"));
        let mut vm = created(&d, true);
        vm.config.insert("memory".into(), "2048".into());
        o.vm = Some(vm);
        let p = plan_machine(&d, &o);
        assert!(
            matches!(&p.steps[..], [Step::Configure { set, .. }] if set == &vec![("memory".to_string(), "4096".to_string())]),
            "{p:?}"
        );
    }

    #[test]
    fn disks_grow_and_never_shrink() {
        let d = machine(&BASIC.replace("20G", "40G"));
        let mut o = observed();
        o.vm = Some(created(&d, true));
        let p = plan_machine(&d, &o);
        assert_eq!(
            p.steps,
            vec![Step::Resize {
                node: "pve".into(),
                vmid: 10000,
                disk: "scsi0".into(),
                size: "40G".into()
            }]
        );
        let d = machine(&BASIC.replace("20G", "10G"));
        o.vm = Some(created(&d, true));
        let p = plan_machine(&d, &o);
        assert!(p.steps.is_empty());
        let c = p
            .conditions
            .iter()
            .find(|c| c.kind == "ResourcesAllocated")
            .expect("c");
        assert_eq!(c.reason, "DiskShrinkRefused");
        assert_eq!(c.message, "scsi0 is 20G, shrinking to 10G is not supported");
    }

    /// Issue #16: after a rollback PVE's config says 20G while the volume
    /// kept its 40G; resizing to 40G is a no-op, so planning it again and
    /// again (with Start behind it) kept the VM down for ever.
    #[test]
    fn a_volume_already_grown_is_not_resized_and_start_comes_first() {
        let d = machine(&BASIC.replace("20G", "40G"));
        let mut o = observed();
        let mut vm = created(&machine(BASIC), false);
        vm.volume_sizes.insert("scsi0".into(), 40 << 30);
        o.vm = Some(vm);
        let p = plan_machine(&d, &o);
        assert_eq!(
            p.steps,
            vec![Step::Start {
                node: "pve".into(),
                vmid: 10000
            }]
        );
        // a stopped VM whose disk does need to grow: started first
        let mut vm = created(&machine(BASIC), false);
        vm.volume_sizes.insert("scsi0".into(), 20 << 30);
        o.vm = Some(vm);
        let p = plan_machine(&d, &o);
        assert!(
            matches!(&p.steps[..], [Step::Start { .. }, Step::Resize { size, .. }] if size == "40G"),
            "{p:?}"
        );
    }

    #[test]
    fn vcpus_are_set_online_and_removed_when_unset() {
        let d = machine(&BASIC.replace("cores: 2", "cores: 4, vcpus: 2"));
        let mut o = observed();
        o.vm = Some(created(&machine(BASIC), true));
        let p = plan_machine(&d, &o);
        let Some(Step::Configure { set, delete, .. }) = p.steps.first() else {
            panic!("{p:?}")
        };
        let set: BTreeMap<_, _> = set.iter().cloned().collect();
        assert_eq!((set["cores"].as_str(), set["vcpus"].as_str()), ("4", "2"));
        assert!(delete.is_empty());
        let mut vm = created(&machine(BASIC), true);
        vm.config.insert("vcpus".into(), "1".into());
        o.vm = Some(vm);
        let p = plan_machine(&machine(BASIC), &o);
        assert!(
            matches!(&p.steps[..], [Step::Configure { set, delete, .. }] if set.is_empty() && delete == &vec!["vcpus".to_string()]),
            "{p:?}"
        );
    }

    #[test]
    fn a_reboot_is_asked_once_per_value_after_the_changes() {
        let d = machine(&format!("{BASIC}rebootRequest: '1'\n").replace("cores: 2", "cores: 4"));
        let mut o = observed();
        o.vm = Some(created(&machine(BASIC), true));
        let p = plan_machine(&d, &o);
        assert!(
            matches!(
                &p.steps[..],
                [Step::Configure { .. }, Step::Reboot { vmid: 10000, .. }]
            ),
            "{p:?}"
        );
        o.last_reboot = Some("1".into());
        let p = plan_machine(&d, &o);
        assert!(
            !p.steps.iter().any(|s| matches!(s, Step::Reboot { .. })),
            "{p:?}"
        );
        // not while stopped
        o.last_reboot = None;
        o.vm = Some(created(&d, false));
        let p = plan_machine(&d, &o);
        assert!(matches!(&p.steps[..], [Step::Start { .. }]), "{p:?}");
    }

    #[test]
    fn suspend_and_resume() {
        let d = machine(&format!("{BASIC}powerState: Suspended\n"));
        let mut o = observed();
        o.vm = Some(created(&d, true));
        let p = plan_machine(&d, &o);
        assert!(
            matches!(&p.steps[..], [Step::Suspend { vmid: 10000, .. }]),
            "{p:?}"
        );
        // stopped: started, then suspended
        o.vm = Some(created(&d, false));
        let p = plan_machine(&d, &o);
        assert!(
            matches!(&p.steps[..], [Step::Start { .. }, Step::Suspend { .. }]),
            "{p:?}"
        );
        let mut vm = created(&d, true);
        vm.paused = true;
        o.vm = Some(vm.clone());
        let p = plan_machine(&d, &o);
        assert!(p.steps.is_empty(), "{p:?}");
        assert_eq!(p.phase, Phase::Suspended);
        // On again: resumed
        let p = plan_machine(&machine(BASIC), &o);
        assert!(matches!(&p.steps[..], [Step::Resume { .. }]), "{p:?}");
    }

    #[test]
    fn pending_keys_on_a_running_vm_are_reported_not_resent() {
        let d = machine(&BASIC.replace("cores: 2", "cores: 4"));
        let mut o = observed();
        let mut vm = created(&d, true);
        vm.config.insert("cores".into(), "2".into());
        vm.pending.insert("cores".into(), "4".into());
        o.vm = Some(vm);
        let p = plan_machine(&d, &o);
        assert!(p.steps.is_empty(), "{p:?}");
        let c = p
            .conditions
            .iter()
            .find(|c| c.kind == "ResourcesAllocated")
            .expect("c");
        assert_eq!(c.message, "takes effect after a power cycle: cores");
    }

    #[test]
    fn power_off_shuts_down_first_or_stops_when_hard() {
        let d = machine(&format!("{BASIC}powerState: Off\n"));
        let mut o = observed();
        o.vm = Some(created(&d, true));
        let p = plan_machine(&d, &o);
        assert_eq!(
            p.steps,
            vec![Step::Shutdown {
                node: "pve".into(),
                vmid: 10000,
                timeout: 60
            }]
        );
        let hard = machine(&format!(
            "{BASIC}powerState: Off\npowerOffMode: Hard\nshutdownTimeoutSeconds: 5\n"
        ));
        let p = plan_machine(&hard, &o);
        assert_eq!(
            p.steps,
            vec![Step::Stop {
                node: "pve".into(),
                vmid: 10000
            }]
        );
        let slow = machine(&format!(
            "{BASIC}powerState: Off\nshutdownTimeoutSeconds: 5\n"
        ));
        let p = plan_machine(&slow, &o);
        assert!(
            matches!(p.steps[..], [Step::Shutdown { timeout: 5, .. }]),
            "{p:?}"
        );
        o.vm = Some(created(&d, false));
        let p = plan_machine(&d, &o);
        assert!(p.steps.is_empty());
        assert_eq!(p.phase, Phase::Stopped);
    }

    #[test]
    fn a_locked_vm_is_waited_for() {
        let d = machine(BASIC);
        let mut o = observed();
        let mut vm = created(&d, false);
        vm.lock = Some("clone".into());
        o.vm = Some(vm);
        let p = plan_machine(&d, &o);
        assert!(p.steps.is_empty() && p.wait);
        assert_eq!(p.phase, Phase::Creating);
    }

    #[test]
    fn templates_are_cloned_beside_them() {
        let mut d = machine(
            "cluster: lab\nsource: { template: ubuntu, linked: false, storage: local-lvm }\n",
        );
        d.spec.networks.push(NetworkSpec {
            bridge: "vmbr0".into(),
            model: "virtio".into(),
            mac_address: None,
            vlan: None,
            firewall: false,
            ip: None,
            gateway: None,
            name: None,
        });
        let mut o = observed();
        o.nodes.push(node("pve2"));
        o.source = SourceState::Found {
            node: "pve2".into(),
            vmid: 9000,
        };
        let p = plan_machine(&d, &o);
        assert_eq!(
            p.steps,
            vec![Step::Clone {
                node: "pve2".into(),
                source: 9000,
                vmid: 10000,
                auto: true,
                target: None,
                name: "web".into(),
                description: "managed-by=pve-operator machine=lab/web".into(),
                full: true,
                storage: Some("local-lvm".into()),
            }]
        );
        o.source = SourceState::Missing("template 'ubuntu' not found".into());
        let p = plan_machine(&d, &o);
        assert!(p.steps.is_empty());
        assert_eq!(p.phase, Phase::Pending);
        let _ = Source::default();
    }

    #[test]
    fn cloud_init_and_iso_drives_are_added() {
        let d = machine(
            "cluster: lab\nsource: { volume: 'local:iso/x.iso' }\nnetworks: [{ip: 192.0.2.10/24, gateway: 192.0.2.1}]\ncloudInit: { user: ops, dns: [192.0.2.53], sshKeys: ['ssh-ed25519 AAA a@b'] }\nbootOrder: [cdrom, network]\n",
        );
        let p: BTreeMap<_, _> = d.create_params("lab", 10000).into_iter().collect();
        assert_eq!(p["ide2"], "local:iso/x.iso,media=cdrom");
        assert_eq!(p["ide3"], "local-lvm:cloudinit");
        assert_eq!(p["ipconfig0"], "ip=192.0.2.10/24,gw=192.0.2.1");
        assert_eq!(p["nameserver"], "192.0.2.53");
        assert_eq!(p["ciuser"], "ops");
        assert_eq!(p["sshkeys"], "ssh-ed25519%20AAA%20a%40b");
        assert_eq!(p["boot"], "order=ide2;net0");
    }

    #[test]
    fn deletion_respects_policy_and_protection() {
        let vm = ObservedVm {
            vmid: 10000,
            node: "pve".into(),
            running: true,
            ..ObservedVm::default()
        };
        let p = plan_delete(DeletionPolicy::Delete, Some(&vm));
        assert_eq!(p.steps.len(), 2);
        assert!(matches!(p.steps[1], Step::Destroy { vmid: 10000, .. }));
        assert!(plan_delete(DeletionPolicy::Orphan, Some(&vm)).done);
        assert!(plan_delete(DeletionPolicy::Delete, None).done);
        let mut protected = vm.clone();
        protected.config.insert("protection".into(), "1".into());
        let p = plan_delete(DeletionPolicy::Delete, Some(&protected));
        assert!(p.steps.is_empty() && !p.done && p.blocked.is_some());
    }

    #[test]
    fn snapshots_are_taken_rolled_back_once_and_deleted() {
        let spec = MachineSnapshotSpec {
            machine: "web".into(),
            include_memory: true,
            rollback_request: Some("1".into()),
            ..Default::default()
        };
        let mut st = MachineSnapshotStatus::default();
        let vm = Some(("pve", 10000));
        let s = plan_snapshot("pre", &spec, &st, vm, &[], false);
        assert!(matches!(&s[..], [Step::Snapshot { vmstate: true, .. }]));
        let have = vec!["pre".to_string()];
        let s = plan_snapshot("pre", &spec, &st, vm, &have, false);
        assert!(matches!(&s[..], [Step::Rollback { .. }]));
        st.last_rollback = Some("1".into());
        assert!(plan_snapshot("pre", &spec, &st, vm, &have, false).is_empty());
        let s = plan_snapshot("pre", &spec, &st, vm, &have, true);
        assert!(matches!(&s[..], [Step::DeleteSnapshot { .. }]));
        assert!(plan_snapshot("pre", &spec, &st, None, &have, false).is_empty());
    }

    #[test]
    fn agent_addresses_skip_loopback_and_link_local() {
        let answer = serde_json::json!({"result": [
            {"name": "lo", "ip-addresses": [{"ip-address": "127.0.0.1"}, {"ip-address": "::1"}]},
            {"name": "eth0", "ip-addresses": [
                {"ip-address": "192.0.2.10"}, {"ip-address": "fe80::1"},
                {"ip-address": "169.254.1.1"}, {"ip-address": "2001:db8::10"}]},
            {"name": "eth1", "ip-addresses": [{"ip-address": "127.0.0.2"}]}
        ]});
        assert_eq!(agent_ips(&answer), vec!["192.0.2.10", "2001:db8::10"]);
    }

    #[test]
    fn ownership_marks_are_exact() {
        assert!(has_mark(
            Some("managed-by=pve-operator machine=lab/web\n"),
            "lab",
            "web"
        ));
        assert!(!has_mark(
            Some("managed-by=pve-operator machine=lab/web2"),
            "lab",
            "web"
        ));
        assert!(!has_mark(None, "lab", "web"));
    }
}

#[cfg(test)]
mod console_tests {
    use std::collections::BTreeMap;

    fn cfg(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    #[rstest::rstest]
    #[case(&[("name", "web")], &["novnc"], "novnc=1&resize=off")]
    #[case(&[("name", "web"), ("vga", "qxl"), ("serial0", "socket")], &["novnc", "spice", "xtermjs"], "novnc=1")]
    #[case(&[("name", "web"), ("vga", "type=qxl2,memory=32")], &["novnc", "spice"], "novnc=1")]
    #[case(&[("name", "web"), ("vga", "serial0"), ("serial0", "socket")], &["xtermjs"], "xtermjs=1")]
    fn consoles_follow_the_display_and_serial_ports(
        #[case] c: &[(&str, &str)],
        #[case] types: &[&str],
        #[case] kind: &str,
    ) {
        let info = super::console("https://pve:8006", "pve1", 100, &cfg(c));
        assert_eq!(info.types, types);
        assert!(
            info.url.starts_with("https://pve:8006/?console=kvm&"),
            "{}",
            info.url
        );
        assert!(info.url.contains(kind), "{}", info.url);
        assert!(
            info.url.ends_with("&vmid=100&vmname=web&node=pve1&cmd="),
            "{}",
            info.url
        );
    }
}
