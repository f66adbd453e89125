//! A VM's status as qemu-server's `vmstatus` answers it (`status/current`,
//! `?full=1`, the VM listing): the figures and state the model keeps,
//! written member by member in PVE's order, to a JSON value or straight to
//! text for the calls polled hardest.

use serde_json::Value;

use crate::api::members::{JsonObject, Members};
use crate::model::qemu::{
    QmpStatus, Vm, VmFigures, VmStatusReader, default_key, is_drive_key, qemu_version,
    running_machine, vm_figures,
};

/// `vmstatus()` for one VM: `full` adds what `status/current` and
/// `?full=1` show; `current` adds `ha`, `agent`, `spice`, `clipboard`.
pub fn vm_status(r: &VmStatusReader<'_>, vm: &Vm, now_ms: i64, full: bool, current: bool) -> Value {
    let mut s = serde_json::Map::new();
    vm_status_members(r, vm, now_ms, full, current, &mut s);
    Value::Object(s)
}

/// [`vm_status`] as JSON text, as [`write_vm_status`] writes it (the
/// tests compare the two).
#[cfg(test)]
pub(crate) fn vm_status_json(
    r: &VmStatusReader<'_>,
    vm: &Vm,
    now_ms: i64,
    full: bool,
    current: bool,
) -> Vec<u8> {
    let mut out = Vec::new();
    write_vm_status(r, vm, now_ms, full, current, &mut out);
    out
}

/// [`vm_status`] as JSON text, written after what `out` holds without
/// building the value (`status/current`, the calls polled hardest).
pub fn write_vm_status(
    r: &VmStatusReader<'_>,
    vm: &Vm,
    now_ms: i64,
    full: bool,
    current: bool,
    out: &mut Vec<u8>,
) {
    let mut s = JsonObject::after(out, 1280);
    vm_status_members(r, vm, now_ms, full, current, &mut s);
    s.finish();
}

/// The members of [`vm_status`], in its order.
fn vm_status_members(
    r: &VmStatusReader<'_>,
    vm: &Vm,
    now_ms: i64,
    full: bool,
    current: bool,
    s: &mut impl Members,
) {
    let v9 = r.version.is_v9();
    let running = vm.running();
    let host_cpus = r
        .nodes
        .iter()
        .find(|n| n.name == vm.node())
        .map_or(1, |n| u64::from(n.cpus));
    let conf = vm.config();
    let VmFigures {
        name,
        cpus,
        maxmem,
        maxdisk,
        uptime,
        mem,
        cpu,
        netin,
        netout,
        lock,
        tags,
        template,
    } = vm_figures(r.storage, vm, now_ms, host_cpus);
    s.member("vmid", &vm.vmid());
    s.member("status", &vm.status());
    s.member("name", &*name);
    s.member("cpus", &cpus);
    s.member("maxmem", &maxmem);
    s.member("maxdisk", &maxdisk);
    s.member("disk", &0);
    s.member("cpu", &cpu);
    s.member("mem", &mem);
    s.member("netin", &netin);
    s.member("netout", &netout);
    s.member("uptime", &uptime);
    if v9 {
        s.member("memhost", &mem);
    }
    if let Some(l) = lock {
        s.member("lock", l);
    }
    if let Some(t) = tags {
        s.member("tags", t);
    }
    if template {
        s.member("template", &1);
    }
    if conf.keys().any(|k| k.starts_with("serial")) {
        s.member("serial", &1);
    }
    if let Some(b) = conf.get("balloon") {
        s.member(
            "balloon_min",
            &(b.parse::<u64>().unwrap_or(0) * 1024 * 1024),
        );
        s.member(
            "shares",
            &conf
                .get("shares")
                .and_then(|x| x.parse::<u64>().ok())
                .unwrap_or(1000),
        );
    }
    if running {
        s.member("pid", &(10_000 + vm.vmid()));
        // The guest's cgroup pressure (PVE 9's `vmstatus`, also in the
        // listing): `avg10 * 1`, numbers.
        if v9 {
            for name in crate::model::guest::rrd::PRESSURE_KEYS {
                s.member(name, &0);
            }
        }
    }
    if full {
        s.member(
            "qmpstatus",
            vm.qmpstatus()
                .map_or(vm.status().as_str(), QmpStatus::as_str),
        );
        if running {
            s.member("diskread", &(uptime * 4096));
            s.member("diskwrite", &(uptime * 2048));
            s.member("nics", &Nics { vm, uptime });
            s.member("blockstat", &BlockStats { vm, uptime });
            s.member("running-machine", &running_machine(r.version, conf));
            s.member("running-qemu", &qemu_version(r.version));
            s.member("proxmox-support", ProxmoxSupport::json());
            if conf.get("balloon").is_none_or(|b| b != "0") {
                s.member("balloon", &maxmem);
                s.member("freemem", &(maxmem - mem));
                s.object("ballooninfo", |b| {
                    b.member("actual", &maxmem);
                    b.member("max_mem", &maxmem);
                    b.member("total_mem", &maxmem);
                    b.member("free_mem", &(maxmem - mem));
                    b.member("mem_swapped_in", &0);
                    b.member("mem_swapped_out", &0);
                    b.member("major_page_faults", &0);
                    b.member("minor_page_faults", &0);
                    b.member("last_update", &(now_ms / 1000));
                });
            }
        }
    }
    if current {
        s.member("ha", &r.ha.guest_service_status("vm", vm.vmid()));
        if conf
            .get("agent")
            .is_some_and(|a| crate::model::agent::agent_enabled(a))
        {
            s.member("agent", &1);
        }
        if let Some(vga) = conf.get("vga") {
            let kind = default_key(vga, "type");
            if kind.starts_with("qxl") || kind.starts_with("virtio") {
                s.member("spice", &1);
            }
            let clip = vga.split(',').find_map(|p| p.strip_prefix("clipboard="));
            s.member("clipboard", &clip);
        }
    }
}

/// The `nics` of a running VM's full status: each NIC's tap device
/// (`tap<vmid>i<n>`) with its counters, in the order of the config's
/// keys.
struct Nics<'a> {
    vm: &'a Vm,
    uptime: i64,
}

impl serde::Serialize for Nics<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        #[derive(serde::Serialize)]
        struct Counters {
            netin: i64,
            netout: i64,
        }
        let vmid = self.vm.vmid();
        let counters = Counters {
            netin: self.uptime * 1500,
            netout: self.uptime * 300,
        };
        s.collect_map(
            self.vm
                .config()
                .keys()
                .filter(|k| k.starts_with("net"))
                .filter_map(|k| k[3..].parse::<u32>().ok())
                .map(|n| (format!("tap{vmid}i{n}"), &counters)),
        )
    }
}

/// The `blockstat` of a running VM's full status: each drive's
/// [`BlockStat`], in the order of the config's keys.
struct BlockStats<'a> {
    vm: &'a Vm,
    uptime: i64,
}

impl serde::Serialize for BlockStats<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let stat = BlockStat::after(self.uptime);
        s.collect_map(
            self.vm
                .config()
                .keys()
                .filter(|k| is_drive_key(k))
                .map(|k| (k, &stat)),
        )
    }
}

/// One drive's `query-blockstats` counters: every member of QEMU's
/// `BlockDeviceStats` (the zone-append ones since QEMU 8.1, in both
/// releases' QEMU).
#[derive(serde::Serialize)]
struct BlockStat {
    rd_bytes: i64,
    wr_bytes: i64,
    zone_append_bytes: i64,
    unmap_bytes: i64,
    rd_operations: i64,
    wr_operations: i64,
    zone_append_operations: i64,
    flush_operations: i64,
    unmap_operations: i64,
    rd_total_time_ns: i64,
    wr_total_time_ns: i64,
    zone_append_total_time_ns: i64,
    flush_total_time_ns: i64,
    unmap_total_time_ns: i64,
    rd_merged: i64,
    wr_merged: i64,
    zone_append_merged: i64,
    unmap_merged: i64,
    wr_highest_offset: i64,
    failed_rd_operations: i64,
    failed_wr_operations: i64,
    failed_zone_append_operations: i64,
    failed_flush_operations: i64,
    failed_unmap_operations: i64,
    invalid_rd_operations: i64,
    invalid_wr_operations: i64,
    invalid_zone_append_operations: i64,
    invalid_flush_operations: i64,
    invalid_unmap_operations: i64,
    idle_time_ns: i64,
    account_invalid: bool,
    account_failed: bool,
    timed_stats: [u8; 0],
}

impl BlockStat {
    /// The counters of a drive of a VM up for `uptime` seconds.
    fn after(uptime: i64) -> Self {
        Self {
            rd_bytes: uptime * 4096,
            wr_bytes: uptime * 2048,
            zone_append_bytes: 0,
            unmap_bytes: 0,
            rd_operations: uptime,
            wr_operations: uptime / 2,
            zone_append_operations: 0,
            flush_operations: 0,
            unmap_operations: 0,
            rd_total_time_ns: 0,
            wr_total_time_ns: 0,
            zone_append_total_time_ns: 0,
            flush_total_time_ns: 0,
            unmap_total_time_ns: 0,
            rd_merged: 0,
            wr_merged: 0,
            zone_append_merged: 0,
            unmap_merged: 0,
            wr_highest_offset: uptime * 2048,
            failed_rd_operations: 0,
            failed_wr_operations: 0,
            failed_zone_append_operations: 0,
            failed_flush_operations: 0,
            failed_unmap_operations: 0,
            invalid_rd_operations: 0,
            invalid_wr_operations: 0,
            invalid_zone_append_operations: 0,
            invalid_flush_operations: 0,
            invalid_unmap_operations: 0,
            idle_time_ns: 0,
            account_invalid: true,
            account_failed: true,
            timed_stats: [],
        }
    }
}

/// The `proxmox-support` of a running VM's full status: what its QEMU
/// build supports.
#[derive(serde::Serialize)]
#[serde(rename_all = "kebab-case")]
struct ProxmoxSupport {
    backup_fleecing: bool,
    backup_max_workers: bool,
    pbs_dirty_bitmap: bool,
    pbs_dirty_bitmap_migration: bool,
    pbs_dirty_bitmap_savevm: bool,
    pbs_library_version: &'static str,
    pbs_masterkey: bool,
    query_bitmap_info: bool,
}

impl ProxmoxSupport {
    /// The same for every VM: its JSON text, made once.
    fn json() -> &'static serde_json::value::RawValue {
        static TEXT: std::sync::LazyLock<Box<serde_json::value::RawValue>> =
            std::sync::LazyLock::new(|| {
                serde_json::value::to_raw_value(&ProxmoxSupport::default())
                    .expect("plain fields serialize")
            });
        &TEXT
    }
}

impl Default for ProxmoxSupport {
    fn default() -> Self {
        Self {
            backup_fleecing: true,
            backup_max_workers: true,
            pbs_dirty_bitmap: true,
            pbs_dirty_bitmap_migration: true,
            pbs_dirty_bitmap_savevm: true,
            pbs_library_version: "1.5.2 (UNKNOWN)",
            pbs_masterkey: true,
            query_bitmap_info: true,
        }
    }
}
