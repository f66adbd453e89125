//! [`Desired`]: a Machine turned into what PVE should hold, its VM
//! configuration and creation parameters; the consoles PVE offers.

use std::collections::{BTreeMap, BTreeSet};

use pve_client::propstring::NetworkDevice;

use super::{GIB, MARK_TAG, MIB, ownership_mark};
use crate::types::{DiskSpec, MachineSpec, Metadata, Object};
use crate::validate::{self, FieldErrors};

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
    /// The name the Machine gives (`spec.name`, else `metadata.name`),
    /// which [`Desired::vm_name`] may have rewritten.
    pub given_name: String,
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
            given_name: name,
            memory_mib,
            disks,
            errors,
            deleting: false,
        }
    }

    /// Why the VM's name in PVE is not the name given, when it is not
    /// (PVE's VM names are DNS names: `name: "my vm"` is `my-vm`).
    pub fn name_rewritten(&self) -> Option<String> {
        (self.vm_name != self.given_name).then(|| {
            format!(
                "the VM is named '{}' in PVE: '{}' has characters a PVE VM name cannot hold (a space or '_' becomes '-')",
                self.vm_name, self.given_name
            )
        })
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
            if let Some(v) = self.vcpus() {
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

    /// PVE's `vcpus`: the spec's, or with `coresFromNode` the cores ×
    /// sockets asked for.
    fn vcpus(&self) -> Option<u32> {
        let cpu = &self.spec.cpu;
        cpu.vcpus.or_else(|| {
            cpu.cores_from_node
                .then(|| cpu.cores.saturating_mul(cpu.sockets))
        })
    }

    /// With `coresFromNode`, PVE's `cores`: those of the VM (`observed`,
    /// its config) when they allow the vCPUs with the spec's sockets, else
    /// as many as the node (`node_cpus`, when known) has CPUs per socket,
    /// at least the spec's. `None` without `coresFromNode` (the spec's
    /// cores are PVE's) or for a VM that keeps its template's hardware.
    pub fn hotplug_cores(
        &self,
        node_cpus: Option<u64>,
        observed: &BTreeMap<String, String>,
    ) -> Option<u32> {
        let cpu = &self.spec.cpu;
        if !cpu.cores_from_node || self.keeps_hardware() {
            return None;
        }
        let want = self.vcpus().unwrap_or(cpu.cores);
        let num = |k: &str| observed.get(k).and_then(|v| v.parse::<u32>().ok());
        if let Some(have) = num("cores")
            && num("sockets").unwrap_or(1) == cpu.sockets
            && have.saturating_mul(cpu.sockets) >= want
        {
            return Some(have);
        }
        let per_socket = node_cpus.map_or(0, |n| {
            u32::try_from(n / u64::from(cpu.sockets.max(1))).unwrap_or(u32::MAX)
        });
        Some(per_socket.clamp(cpu.cores, 128.max(cpu.cores)))
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
    pub(super) fn drives(&self) -> BTreeMap<String, String> {
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
    pub(super) fn new_disk(bytes: u64, d: &DiskSpec) -> String {
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
