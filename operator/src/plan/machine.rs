//! [`plan_machine`]: creating a VM, and bringing an existing one to its
//! spec (drift, resizing, power, reboots).

use std::collections::{BTreeMap, BTreeSet};

use pve_client::propstring::{Disk, NetworkDevice};

use super::{
    Desired, GIB, MIB, Observed, ObservedVm, Plan, SourceState, Step, assign_vmid, ownership_mark,
    select_node,
};
use crate::types::{Phase, PowerOffMode, PowerState};

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

/// The condition that reports a VM name rewritten for PVE (`False`,
/// reason `NameRewritten`); absent while the name is PVE's as given.
pub const NAME_CONDITION: &str = "NameAccepted";

/// The CPUs of `node`, when observed.
fn node_cpus(o: &Observed, node: &str) -> Option<u64> {
    o.nodes
        .iter()
        .find(|n| n.name == node && n.maxcpu > 0)
        .map(|n| n.maxcpu)
}

/// Plans a Machine that exists (or should).
pub fn plan_machine(d: &Desired, o: &Observed) -> Plan {
    let mut p = plan_machine_steps(d, o);
    if let Some(m) = d.name_rewritten() {
        p.cond(NAME_CONDITION, false, "NameRewritten", m);
    }
    p
}

fn plan_machine_steps(d: &Desired, o: &Observed) -> Plan {
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
            Err(e) => {
                let m = e.to_string();
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
        None => {
            let cores = d.hotplug_cores(node_cpus(o, &node), &BTreeMap::new());
            Step::Create {
                params: d
                    .create_params(&o.cluster, vmid)
                    .into_iter()
                    .filter(|(k, _)| k != "vmid")
                    .map(|(k, v)| match (k.as_str(), cores) {
                        ("cores", Some(c)) => (k, c.to_string()),
                        _ => (k, v),
                    })
                    .collect(),
                node,
                vmid,
                auto,
            }
        }
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
    let mut desired = d.config(&o.cluster, &vm.config);
    if let Some(c) = d.hotplug_cores(node_cpus(o, &vm.node), &vm.config) {
        desired.insert("cores".into(), c.to_string());
    }
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
        // More vCPUs than the cores and sockets the VM runs with cannot
        // be plugged (PVE answers a hotplug problem): they wait for the
        // start that applies the new cores (sent now, pending till then).
        if k == "vcpus" && running {
            let most = vm.max_vcpus();
            if v.parse::<u32>().is_ok_and(|n| n > most) {
                power_cycle.push(format!(
                    "vcpus {v} (the VM runs with {most} cores x sockets)"
                ));
                continue;
            }
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
    // Disks whose configuration and volume disagree on the size (a
    // rollback restores the configuration's older size, not the volume's).
    let mut mismatched = Vec::new();
    for (key, bytes, spec) in &d.disks {
        match vm.config.get(key) {
            None => set.push((key.clone(), Desired::new_disk(*bytes, spec))),
            Some(cur) => {
                let Ok(disk) = Disk::parse_as(key, cur) else {
                    continue;
                };
                let recorded = disk
                    .size
                    .as_deref()
                    .and_then(crate::validate::parse_size_text)
                    .unwrap_or(0);
                let volume = vm.volume_sizes.get(key).copied();
                if let Some(v) = volume
                    && v != recorded
                {
                    mismatched.push(format!(
                        "{key}: PVE's configuration says {}, its volume {} is {} (after a rollback the configuration keeps the snapshot's size; `qm disk rescan --vmid {vmid}` on node {node} records the volume's)",
                        size_text(recorded),
                        disk.file,
                        size_text(v)
                    ));
                }
                let have = recorded.max(volume.unwrap_or(0));
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
    } else if !mismatched.is_empty() {
        p.cond(
            "ResourcesAllocated",
            false,
            "DiskSizeMismatch",
            mismatched.join("; "),
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
        if !mismatched.is_empty() {
            // Not what the Machine asks for until PVE records the size.
            p.cond("Ready", false, "DiskSizeMismatch", mismatched.join("; "));
        } else if refused.is_empty() && power_cycle.is_empty() {
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
