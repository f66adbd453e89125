//! Property-string formats PVE registers by name
//! (`register_format('pve-qm-boot', $boot_fmt)`): the schema only names
//! them and prints their syntax in `typetext`, so their exact keys are
//! written down here, as PVE defines them (key, type, optional,
//! default_key, alias, enum, bounds, pattern, nested format), together
//! with the validator PVE attaches to some of them
//! (`register_format($name, $fmt, \&validator)`).
//!
//! These definitions replace the `typetext` derivation for their names
//! (see [`crate::typetext`], still the fallback for names not listed).
//! Sources, PVE 9.1 (November 2025):
//! - `backup-fleecing`, `backup-performance`: pve-guest-common
//!   `src/PVE/VZDump/Common.pm:96`, `:135`
//! - `prune-backups`: pve-storage `src/PVE/Storage/Plugin.pm:123`
//! - `proxmox-remote`: pve-common `src/PVE/JSONSchema.pm:880`
//! - `pve-qemu-sev-fmt`, `pve-qemu-tdx-fmt`, `pve-vm-cpu-conf`:
//!   qemu-server `src/PVE/QemuServer/CPUConfig.pm:411`, `:441`, `:472`
//! - `pve-qm-boot`, `pve-qm-cicustom`, `pve-qm-smbios1`,
//!   `pve-qm-watchdog`: qemu-server `src/PVE/QemuServer.pm:1011`, `:778`,
//!   `:1676`, `:161`
//! - `pve-qm-hostpci`: qemu-server `src/PVE/QemuServer/PCI.pm:137`
//! - `pve-qm-ide`: qemu-server `src/PVE/QemuServer/Drive.pm:452` (the
//!   keys of `ide[n]`, taken from the endpoint that names it)
//! - `pve-qm-ipconfig`: qemu-server `src/PVE/QemuServer/Network.pm:187`
//! - `pve-qm-rng`: qemu-server `src/PVE/QemuServer/RNG.pm:51`
//! - `pve-sdn-dhcp-range`: pve-network
//!   `src/PVE/Network/SDN/SubnetPlugin.pm:85`
//! - `pve-sdn-fabric-wireguard-interface` (9.2): pve-network
//!   `src/PVE/Network/SDN/Fabrics.pm` (a WireGuard fabric node's
//!   interface)
//! - `pve-node-location` (9.2): pve-common `src/PVE/JSONSchema.pm:322`
//! - `pve-tfa-config`, `realm-sync-options`: pve-access-control
//!   `src/PVE/Auth/Plugin.pm:203`, `:117`

use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::Prop;
use crate::formats::{Check, FormatError};
use crate::propstring::Parsed;

/// A validator PVE runs on a parsed property string of a named format.
pub type Validator = fn(&Parsed) -> Check;

const PCI_RE: &str = r"(?:[a-f0-9]{4,}:)?[a-f0-9]{2}:[a-f0-9]{2}(?:\.[a-f0-9])?";
const B64: &str = r"[A-Za-z0-9+\/]+={0,2}";
const HEX_ID: &str = r"^0x[0-9a-fA-F]{4}$";

/// The CPU models qemu-server knows (`$cpu_vendor_list`), identical in
/// 8.4 and 9.1.
pub const CPU_MODELS: &[&str] = &[
    "486",
    "pentium",
    "pentium2",
    "pentium3",
    "coreduo",
    "core2duo",
    "Conroe",
    "Penryn",
    "Nehalem",
    "Nehalem-IBRS",
    "Westmere",
    "Westmere-IBRS",
    "SandyBridge",
    "SandyBridge-IBRS",
    "IvyBridge",
    "IvyBridge-IBRS",
    "Haswell",
    "Haswell-IBRS",
    "Haswell-noTSX",
    "Haswell-noTSX-IBRS",
    "Broadwell",
    "Broadwell-IBRS",
    "Broadwell-noTSX",
    "Broadwell-noTSX-IBRS",
    "Skylake-Client",
    "Skylake-Client-IBRS",
    "Skylake-Client-noTSX-IBRS",
    "Skylake-Client-v4",
    "Skylake-Server",
    "Skylake-Server-IBRS",
    "Skylake-Server-noTSX-IBRS",
    "Skylake-Server-v4",
    "Skylake-Server-v5",
    "Cascadelake-Server",
    "Cascadelake-Server-v2",
    "Cascadelake-Server-noTSX",
    "Cascadelake-Server-v4",
    "Cascadelake-Server-v5",
    "Cooperlake",
    "Cooperlake-v2",
    "KnightsMill",
    "Icelake-Client",
    "Icelake-Client-noTSX",
    "Icelake-Server",
    "Icelake-Server-noTSX",
    "Icelake-Server-v3",
    "Icelake-Server-v4",
    "Icelake-Server-v5",
    "Icelake-Server-v6",
    "SapphireRapids",
    "SapphireRapids-v2",
    "GraniteRapids",
    "athlon",
    "phenom",
    "Opteron_G1",
    "Opteron_G2",
    "Opteron_G3",
    "Opteron_G4",
    "Opteron_G5",
    "EPYC",
    "EPYC-IBPB",
    "EPYC-v3",
    "EPYC-v4",
    "EPYC-Rome",
    "EPYC-Rome-v2",
    "EPYC-Rome-v3",
    "EPYC-Rome-v4",
    "EPYC-Milan",
    "EPYC-Milan-v2",
    "EPYC-Genoa",
    "host",
    "kvm32",
    "kvm64",
    "qemu32",
    "qemu64",
    "max",
];

/// What a `pve-vm-cpu-conf` check reads from the world around it:
/// qemu-server takes the models from the node's QEMU and from
/// `cpu-models.conf`, which a schema alone does not know.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuContext {
    /// The default and built-in models of the release (both
    /// architectures).
    pub models: Vec<String>,
    /// The custom models (`cpu-models.conf`'s ids, without `custom-`).
    pub custom: Vec<String>,
    /// qemu-server of PVE 9.2: the `level` key, and the VM-specific flags
    /// listed sorted in a refusal.
    pub qemu_server_9_2: bool,
}

std::thread_local! {
    static CPU_CONTEXT: std::cell::RefCell<Option<CpuContext>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `f` (a validation) with the CPU models of `context` in force;
/// without one, the models are [`CPU_MODELS`], no custom model exists
/// and qemu-server is 9.1's.
pub fn with_cpu_context<R>(context: CpuContext, f: impl FnOnce() -> R) -> R {
    let before = CPU_CONTEXT.with(|c| c.replace(Some(context)));
    let out = f();
    CPU_CONTEXT.with(|c| *c.borrow_mut() = before);
    out
}

/// qemu-server's `$builtin_models`.
const BUILTIN_CPU_MODELS: &[&str] = &["x86-64-v2", "x86-64-v2-AES", "x86-64-v3", "x86-64-v4"];

/// The CPU flags a VM-specific config may set (`$supported_cpu_flags`).
pub const VM_CPU_FLAGS: &[&str] = &[
    "nested-virt",
    "md-clear",
    "pcid",
    "spec-ctrl",
    "ssbd",
    "ibpb",
    "virt-ssbd",
    "amd-ssbd",
    "amd-no-ssb",
    "pdpe1gb",
    "hv-tlbflush",
    "hv-evmcs",
    "aes",
];

/// The names of the registered property-string formats fake-pve defines.
pub const NAMES: &[&str] = &[
    "backup-fleecing",
    "backup-performance",
    "prune-backups",
    "proxmox-remote",
    "pve-qemu-sev-fmt",
    "pve-qemu-tdx-fmt",
    "pve-vm-cpu-conf",
    "pve-qm-boot",
    "pve-qm-cicustom",
    "pve-qm-smbios1",
    "pve-qm-watchdog",
    "pve-qm-hostpci",
    "pve-qm-ide",
    "pve-qm-ipconfig",
    "pve-qm-rng",
    "pve-sdn-dhcp-range",
    "pve-sdn-fabric-wireguard-interface",
    "pve-node-location",
    "pve-tfa-config",
    "realm-sync-options",
];

fn definition(name: &str) -> Option<serde_json::Value> {
    use serde_json::json;
    let prune = json!({"optional": 1, "type": "integer", "minimum": 0});
    let b64 = json!({"type": "string", "pattern": B64, "optional": 1});
    let hex = json!({"type": "string", "pattern": HEX_ID, "optional": 1});
    let volume = json!({"type": "string", "format": "pve-volume-id", "optional": 1});
    let mut models: Vec<&str> = CPU_MODELS.to_vec();
    models.sort_by_key(|m| m.to_lowercase());
    Some(match name {
        "backup-fleecing" => json!({
            "enabled": {"type": "boolean", "default": 0, "optional": 1, "default_key": 1},
            "storage": {"type": "string", "format": "pve-storage-id", "optional": 1},
        }),
        "backup-performance" => json!({
            "max-workers": {"type": "integer", "minimum": 1, "maximum": 256, "default": 16, "optional": 1},
            "pbs-entries-max": {"type": "integer", "minimum": 1, "default": 1_048_576, "optional": 1},
        }),
        "prune-backups" => json!({
            "keep-all": {"type": "boolean", "optional": 1},
            "keep-last": prune, "keep-hourly": prune, "keep-daily": prune,
            "keep-weekly": prune, "keep-monthly": prune, "keep-yearly": prune,
        }),
        "proxmox-remote" => json!({
            "host": {"type": "string"},
            "port": {"type": "integer", "optional": 1},
            "apitoken": {"type": "string"},
            "fingerprint": {"type": "string", "pattern": "([A-Fa-f0-9]{2}:){31}[A-Fa-f0-9]{2}", "optional": 1},
        }),
        "pve-qemu-sev-fmt" => json!({
            "type": {"type": "string", "default_key": 1, "enum": ["std", "es", "snp"], "maxLength": 3},
            "no-debug": {"type": "boolean", "default": 0, "optional": 1},
            "no-key-sharing": {"type": "boolean", "default": 0, "optional": 1},
            "allow-smt": {"type": "boolean", "default": 1, "optional": 1},
            "kernel-hashes": {"type": "boolean", "default": 0, "optional": 1},
        }),
        "pve-qemu-tdx-fmt" => json!({
            "type": {"type": "string", "default_key": 1, "enum": ["tdx"]},
            "attestation": {"type": "boolean", "default": 1},
            "vsock-cid": {"type": "integer", "minimum": 2, "default": 2, "optional": 1},
            "vsock-port": {"type": "integer", "minimum": 0, "default": 4050, "optional": 1},
        }),
        "pve-vm-cpu-conf" => json!({
            "cputype": {"type": "string", "default": "kvm64", "default_key": 1, "optional": 1},
            "reported-model": {"type": "string", "enum": models, "default": "kvm64", "optional": 1},
            "hidden": {"type": "boolean", "optional": 1, "default": 0},
            "hv-vendor-id": {"type": "string", "pattern": "[a-zA-Z0-9]{1,12}", "optional": 1},
            "flags": {"type": "string", "optional": 1,
                      "pattern": r"([+-])([a-zA-Z0-9\-_\.]+)(;([+-])([a-zA-Z0-9\-_\.]+))*"},
            "guest-phys-bits": {"type": "integer", "minimum": 32, "maximum": 64, "optional": 1},
            "phys-bits": {"type": "string", "format": "pve-phys-bits", "optional": 1},
            // 9.2 (qemu-server 9.2.4); refused before by the validator.
            "level": {"type": "integer", "minimum": 0, "maximum": 4_294_967_295_u64, "optional": 1},
        }),
        "pve-qm-boot" => json!({
            "legacy": {"optional": 1, "default_key": 1, "type": "string", "pattern": "[acdn]{1,4}", "default": "cdn"},
            "order": {"optional": 1, "type": "string", "format": "pve-qm-bootdev-list"},
        }),
        "pve-qm-cicustom" => json!({
            "meta": volume, "network": volume, "user": volume, "vendor": volume,
        }),
        "pve-qm-smbios1" => json!({
            "uuid": {"type": "string", "pattern": "[a-fA-F0-9]{8}(?:-[a-fA-F0-9]{4}){3}-[a-fA-F0-9]{12}", "optional": 1},
            "version": b64, "serial": b64, "manufacturer": b64, "product": b64,
            "sku": b64, "family": b64,
            "base64": {"type": "boolean", "optional": 1},
        }),
        "pve-qm-watchdog" => json!({
            "model": {"default_key": 1, "type": "string", "enum": ["i6300esb", "ib700"], "default": "i6300esb", "optional": 1},
            "action": {"type": "string", "enum": ["reset", "shutdown", "poweroff", "pause", "debug", "none"], "optional": 1},
        }),
        "pve-qm-hostpci" => json!({
            "host": {"default_key": 1, "optional": 1, "type": "string", "pattern": format!("{PCI_RE}(;{PCI_RE})*")},
            "mapping": {"optional": 1, "type": "string", "format": "pve-configid"},
            "rombar": {"type": "boolean", "optional": 1, "default": 1},
            "romfile": {"type": "string", "pattern": "[^,;]+", "optional": 1},
            "pcie": {"type": "boolean", "optional": 1, "default": 0},
            "x-vga": {"type": "boolean", "optional": 1, "default": 0},
            "legacy-igd": {"type": "boolean", "optional": 1, "default": 0},
            "mdev": {"type": "string", "pattern": r"[^/\.:]+", "optional": 1},
            "vendor-id": hex, "device-id": hex, "sub-vendor-id": hex, "sub-device-id": hex,
            "driver": {"type": "string", "optional": 1, "default": "vfio", "enum": ["vfio", "keep"]},
        }),
        "pve-qm-ipconfig" => json!({
            "ip": {"type": "string", "format": "pve-ipv4-config", "optional": 1, "default": "dhcp"},
            "gw": {"type": "string", "format": "ipv4", "optional": 1, "requires": "ip"},
            "ip6": {"type": "string", "format": "pve-ipv6-config", "optional": 1, "default": "dhcp"},
            "gw6": {"type": "string", "format": "ipv6", "optional": 1, "requires": "ip6"},
        }),
        "pve-qm-rng" => json!({
            "source": {"type": "string", "enum": ["/dev/urandom", "/dev/random", "/dev/hwrng"], "default_key": 1},
            "max_bytes": {"type": "integer", "optional": 1, "default": 1024},
            "period": {"type": "integer", "optional": 1, "default": 1000},
        }),
        "pve-sdn-dhcp-range" => json!({
            "start-address": {"type": "ip"},
            "end-address": {"type": "ip"},
        }),
        "pve-sdn-fabric-wireguard-interface" => json!({
            "name": {"type": "string", "format": "pve-sdn-wireguard-iface-name"},
            "public_key": {"type": "string", "optional": 1},
            "ip": {"type": "string", "format": "CIDRv4", "optional": 1},
            "ip6": {"type": "string", "format": "CIDRv6", "optional": 1},
            "listen_port": {"type": "number", "optional": 1, "minimum": 1, "maximum": 65535},
        }),
        "pve-node-location" => json!({
            "name": {"type": "string", "optional": 1, "maxLength": 128},
            "latitude": {"type": "number", "minimum": -90, "maximum": 90},
            "longitude": {"type": "number", "minimum": -180, "maximum": 180},
        }),
        "pve-tfa-config" => json!({
            "type": {"type": "string", "enum": ["yubico", "oath"]},
            "id": {"type": "string", "optional": 1},
            "key": {"type": "string", "optional": 1},
            "url": {"type": "string", "optional": 1},
            "digits": {"type": "integer", "minimum": 6, "maximum": 8, "default": 6, "optional": 1},
            "step": {"type": "integer", "minimum": 10, "default": 30, "optional": 1},
        }),
        "realm-sync-options" => json!({
            "scope": {"type": "string", "enum": ["users", "groups", "both"], "optional": 1},
            "remove-vanished": {"type": "string", "default": "none", "optional": 1,
                                "pattern": r"(?:(?:(?:acl|properties|entry)\;)*(?:acl|properties|entry))|none"},
            "full": {"type": "boolean", "optional": 1},
            "enable-new": {"type": "boolean", "default": 1, "optional": 1},
            "purge": {"type": "boolean", "optional": 1},
        }),
        _ => return None,
    })
}

/// The keys of a registered property-string format. `pve-qm-ide` has no
/// standalone definition here: its keys are those of `ide[n]`, which the
/// spec carries expanded.
pub fn keys(name: &str) -> Option<BTreeMap<String, Prop>> {
    let def = definition(name)?;
    Some(serde_json::from_value(def).expect("registered formats deserialize"))
}

/// The keys of a registered format, parsed once.
pub fn cached(name: &str) -> Option<&'static BTreeMap<String, Prop>> {
    static CACHE: OnceLock<BTreeMap<&'static str, BTreeMap<String, Prop>>> = OnceLock::new();
    CACHE
        .get_or_init(|| NAMES.iter().filter_map(|n| Some((*n, keys(n)?))).collect())
        .get(name)
}

/// The validator PVE attaches to a registered format.
pub fn validator(name: &str) -> Option<Validator> {
    match name {
        "backup-fleecing" => Some(verify_backup_fleecing),
        "prune-backups" => Some(validate_prune_backups),
        "pve-vm-cpu-conf" => Some(validate_vm_cpu_conf),
        _ => None,
    }
}

fn truthy(v: Option<&String>) -> bool {
    v.is_some_and(|v| !v.is_empty() && v != "0")
}

fn verify_backup_fleecing(p: &Parsed) -> Check {
    if !truthy(p.get("storage")) && truthy(p.get("enabled")) {
        return Err(FormatError::Invalid(
            "'storage' parameter is required when 'enabled' is set\n".into(),
        ));
    }
    Ok(())
}

fn validate_prune_backups(p: &Parsed) -> Check {
    let positive = p
        .iter()
        .filter(|(k, _)| *k != "keep-all")
        .any(|(_, v)| v.parse::<f64>().is_ok_and(|n| n > 0.0));
    if positive && truthy(p.get("keep-all")) {
        return Err(FormatError::Invalid(
            "keep-all cannot be set together with other options.\n".into(),
        ));
    }
    Ok(())
}

fn validate_vm_cpu_conf(p: &Parsed) -> Check {
    let cputype = p.get("cputype").filter(|c| truthy(Some(c)));
    let Some(cputype) = cputype else {
        return Err(FormatError::Invalid("CPU is missing cputype\n".into()));
    };
    CPU_CONTEXT.with(|c| {
        let c = c.borrow();
        if let Some(name) = cputype.strip_prefix("custom-") {
            // `get_custom_model` dies on a model cpu-models.conf lacks.
            if !c
                .as_ref()
                .is_some_and(|c| c.custom.iter().any(|m| m == name))
            {
                return Err(FormatError::Invalid(format!(
                    "Custom cputype '{name}' not found\n"
                )));
            }
        } else {
            let known = match c.as_ref() {
                Some(c) => c.models.iter().any(|m| m == cputype),
                None => CPU_MODELS.contains(&cputype.as_str()),
            };
            if !known && !BUILTIN_CPU_MODELS.contains(&cputype.as_str()) {
                return Err(FormatError::Invalid(format!(
                    "Built-in cputype '{cputype}' is not defined (missing 'custom-' prefix?)\n"
                )));
            }
        }
        let newer = c.as_ref().is_some_and(|c| c.qemu_server_9_2);
        if !newer && p.contains_key("level") {
            return Err(FormatError::Invalid(
                "invalid key in comma-separated list property: level\n".into(),
            ));
        }
        if let Some(flags) = p.get("flags").filter(|f| truthy(Some(f))) {
            let ok = flags.split(';').all(|f| {
                f.strip_prefix(['+', '-'])
                    .is_some_and(|name| VM_CPU_FLAGS.contains(&name))
            });
            if !ok {
                // qemu-server lists them sorted since 9.1.5.
                let mut names = VM_CPU_FLAGS.to_vec();
                if newer {
                    names.sort_unstable();
                }
                return Err(FormatError::Invalid(format!(
                    "VM-specific CPU flags must be a subset of: {}\n",
                    names.join(", ")
                )));
            }
        }
        Ok(())
    })?;
    if p.contains_key("reported-model") {
        return Err(FormatError::Invalid(
            "Property 'reported-model' not allowed in VM-specific CPU config.\n".into(),
        ));
    }
    Ok(())
}
