//! What a VM's status and listings show (qemu-server `vmstatus`), and the
//! adoption of a scenario's seeded VMs.

use super::*;

/// What a VM's status and its row of the cluster's resources both show
/// ([`vm_figures`]).
pub(crate) struct VmFigures<'a> {
    pub name: std::borrow::Cow<'a, str>,
    pub cpus: u64,
    pub maxmem: u64,
    pub maxdisk: u64,
    /// Seconds.
    pub uptime: i64,
    pub mem: u64,
    pub cpu: serde_json::Number,
    pub netin: u64,
    pub netout: u64,
    /// The config's `lock`.
    pub lock: Option<&'a str>,
    /// The config's `tags`.
    pub tags: Option<&'a str>,
    pub template: bool,
}

/// The config keys the figures read, found in one pass over the config
/// (a listing reads them for every guest).
#[derive(Default)]
struct FigureKeys<'a> {
    name: Option<&'a str>,
    vcpus: Option<&'a str>,
    sockets: Option<&'a str>,
    cores: Option<&'a str>,
    memory: Option<&'a str>,
    boot: Option<&'a str>,
    lock: Option<&'a str>,
    tags: Option<&'a str>,
    template: Option<&'a str>,
    /// The first disk (not a CD-ROM) in the config's key order.
    first_disk: Option<&'a str>,
}

impl<'a> FigureKeys<'a> {
    fn of(config: &'a BTreeMap<String, String>) -> Self {
        let mut keys = Self::default();
        for (k, v) in config {
            let v = Some(v.as_str());
            match k.as_str() {
                "name" => keys.name = v,
                "vcpus" => keys.vcpus = v,
                "sockets" => keys.sockets = v,
                "cores" => keys.cores = v,
                "memory" => keys.memory = v,
                "boot" => keys.boot = v,
                "lock" => keys.lock = v,
                "tags" => keys.tags = v,
                "template" => keys.template = v,
                k => {
                    if keys.first_disk.is_none() && v.is_some_and(|v| is_disk(k, v)) {
                        keys.first_disk = v;
                    }
                }
            }
        }
        keys
    }
}

/// `Cluster::boot_disk_size` with the config's keys found already.
fn boot_disk_size_of(
    storage: &crate::model::storage::Storages,
    vm: &Vm,
    keys: &FigureKeys<'_>,
) -> u64 {
    let order = keys
        .boot
        .and_then(|b| b.split(',').find_map(|p| p.strip_prefix("order=")));
    let disk = order
        .and_then(|o| {
            o.split(';').find_map(|k| {
                vm.config
                    .get(k)
                    .filter(|v| is_disk(k, v))
                    .map(String::as_str)
            })
        })
        .or(keys.first_disk);
    disk.and_then(|v| {
        v.split(',')
            .find_map(|p| p.strip_prefix("size="))
            .and_then(parse_size)
            .or_else(|| storage.volume(drive_file(v), &vm.node).map(|x| x.size))
    })
    .unwrap_or(0)
}

/// The figures of a VM that its status and the cluster's resources
/// share, on a node of `host_cpus` CPUs.
pub(crate) fn vm_figures<'a>(
    storage: &crate::model::storage::Storages,
    vm: &'a Vm,
    now_ms: i64,
    host_cpus: u64,
) -> VmFigures<'a> {
    let running = vm.running();
    let keys = FigureKeys::of(&vm.config);
    let cpus = keys.vcpus.and_then(|v| v.parse().ok()).unwrap_or_else(|| {
        let g = |v: Option<&str>| v.and_then(|v| v.parse::<u64>().ok()).unwrap_or(1);
        (g(keys.sockets) * g(keys.cores)).min(host_cpus)
    });
    let maxmem = maxmem_of(keys.memory);
    let uptime = match (running, vm.started_ms) {
        (true, Some(s)) => (now_ms - s).max(0) / 1000,
        _ => 0,
    };
    let u = u64::try_from(uptime).unwrap_or(0);
    VmFigures {
        name: keys.name.map_or_else(
            || std::borrow::Cow::Owned(format!("VM {}", vm.vmid)),
            std::borrow::Cow::Borrowed,
        ),
        cpus,
        maxmem,
        maxdisk: boot_disk_size_of(storage, vm, &keys),
        uptime,
        mem: if running { maxmem / 4 } else { 0 },
        // `vmstatus` starts every VM at the integer 0 and only a
        // running one's share of the host's CPU is a fraction.
        cpu: if running {
            serde_json::Number::from_f64(0.0123).unwrap_or_else(|| 0.into())
        } else {
            0.into()
        },
        netin: if running { u * 1500 } else { 0 },
        netout: if running { u * 300 } else { 0 },
        lock: keys.lock,
        tags: keys.tags,
        template: keys.template == Some("1"),
    }
}

/// The `maxdisk` of a VM: the size of its boot disk (the first disk in
/// the boot order).
pub fn vm_maxdisk(storage: &crate::model::storage::Storages, vm: &Vm) -> u64 {
    boot_disk_size_of(storage, vm, &FigureKeys::of(&vm.config))
}

/// What a VM's status reads beside the VM: the members (the host's
/// CPUs), the storages (the boot disk's size), HA (the `ha` member) and
/// the release. Built by [`VmStatusReader::vm_status_reader`].
#[derive(Clone, Copy)]
pub struct VmStatusReader<'a> {
    /// The members.
    pub(crate) nodes: &'a crate::model::nodes::Nodes,
    /// The storages.
    pub(crate) storage: &'a crate::model::storage::Storages,
    /// HA's resources and state.
    pub(crate) ha: &'a crate::model::ha::Ha,
    /// The release.
    pub(crate) version: PveVersion,
}

/// Gives the VMs of a scenario their full behaviour: the volumes their
/// disks name are recorded on the storages, running ones have been up for
/// an hour.
pub(crate) fn adopt_seed_vms(
    guests: &mut crate::model::guests::Guests,
    storage: &mut crate::model::storage::Storages,
    now: i64,
) {
    for vm in guests.values_mut() {
        if vm.running() {
            vm.started_ms = Some((now - 3_600) * 1000);
        }
        let sections = std::iter::once(&vm.config).chain(vm.snapshots.values());
        for (k, v) in sections.flat_map(|c| c.iter()) {
            let (file, size) = if k.starts_with("unused") || k == "vmstate" {
                (v.as_str(), None)
            } else if is_disk(k, v) {
                let size = v
                    .split(',')
                    .find_map(|p| p.strip_prefix("size="))
                    .and_then(parse_size);
                (drive_file(v), size)
            } else {
                continue;
            };
            storage.adopt_volume(file, &vm.node, vm.vmid, size.unwrap_or(0), now);
        }
    }
}
