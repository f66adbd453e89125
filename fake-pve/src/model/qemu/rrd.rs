//! `GET .../rrddata` (`PVE::RRD::create_rrd_data`): the VM's statistics
//! series for a time frame, at PVE's resolutions (the `pve2-vm` layout on
//! 8.4, `pve-vm-9.0` on 9.x). The figures are the ones `status/current`
//! reports, as per-second rates for network and disk I/O, while the VM
//! runs; before it started (or while it is stopped) a point has only the
//! VM's sizes, as pvestatd records the rest as unknown.
//!
//! The answer always spans the whole frame: `rrdtool fetch` gives a row
//! for every step, and the steps from before pvestatd created the VM's
//! RRD file (when the VM was created: its `meta` option's `ctime`) hold
//! no value at all, so those points carry only their `time`. As
//! `create_rrd_data` does, a last point that has only its `time` is
//! dropped (the step still being filled).

use super::{PveVersion, Vm};
use crate::model::guest::rrd::{GuestPoint, Load, Pressure, Sizes, steps};
use crate::model::nodes::Nodes;
use crate::model::storage::Storages;

/// `[resolution seconds, points]` per time frame.
pub(crate) fn setup(v9: bool, timeframe: &str) -> (i64, i64) {
    if v9 {
        match timeframe {
            "day" => (60, 1440),
            "week" => (60 * 30, 336),
            "month" => (60 * 30, 1440),
            "year" => (3600 * 6, 1440),
            _ => (60, 60),
        }
    } else {
        match timeframe {
            "day" => (60 * 30, 70),
            "week" => (60 * 180, 70),
            "month" => (60 * 720, 70),
            "year" => (60 * 10080, 70),
            _ => (60, 60),
        }
    }
}

/// The series of `vm` for `timeframe` ending at `now_ms`.
pub fn vm_rrddata(
    vm: &Vm,
    nodes: &Nodes,
    storage: &Storages,
    version: PveVersion,
    timeframe: &str,
    now_ms: i64,
) -> Vec<GuestPoint> {
    let v9 = version.is_v9();
    let maxmem = vm.maxmem();
    let maxcpu = vm.maxcpu().min(
        nodes
            .iter()
            .find(|n| n.name == vm.node)
            .map_or(u64::MAX, |n| u64::from(n.cpus)),
    );
    let maxdisk = super::status::vm_maxdisk(storage, vm);
    let created = created(vm.config().get("meta").map(String::as_str));
    let started = if vm.running() {
        vm.started_ms.map(|ms| ms.div_euclid(1000))
    } else {
        None
    };
    let mut points: Vec<GuestPoint> = steps(v9, timeframe, now_ms)
        .map(|t| {
            let made = created.is_none_or(|c| c <= t);
            // pvestatd writes `U` (unknown) for the load while the VM
            // is stopped, and rrddata leaves unknown values out.
            let up = made && started.is_some_and(|s| s <= t);
            GuestPoint {
                time: t,
                sizes: made.then(|| Sizes {
                    maxcpu: maxcpu.into(),
                    maxmem,
                    maxdisk,
                    disk: 0,
                }),
                load: up.then(|| Load {
                    cpu: 0.0123,
                    mem: maxmem / 4,
                    netin: 1500,
                    netout: 300,
                    diskread: 4096,
                    diskwrite: 2048,
                    memhost: v9.then_some(maxmem / 4),
                    pressure: v9.then(Pressure::default),
                }),
            }
        })
        .collect();
    if points.last().is_some_and(|p| p.sizes.is_none()) {
        points.pop();
    }
    points
}

/// When the VM was created, from its `meta` option
/// (`creation-qemu=...,ctime=<epoch>`): its RRD file holds nothing from
/// before. `None` when the config has no creation time (its history is
/// older than any frame).
fn created(meta: Option<&str>) -> Option<i64> {
    meta?
        .split(',')
        .find_map(|kv| kv.strip_prefix("ctime="))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::{created, setup};

    #[test]
    fn creation_time_from_meta() {
        assert_eq!(
            created(Some("creation-qemu=9.2.0,ctime=1790000000")),
            Some(1_790_000_000)
        );
        assert_eq!(created(Some("ctime=17,creation-qemu=9.2.0")), Some(17));
        assert_eq!(created(Some("creation-qemu=9.2.0")), None);
        assert_eq!(created(Some("ctime=soon")), None);
        assert_eq!(created(None), None);
    }

    #[test]
    fn resolutions() {
        assert_eq!(setup(false, "day"), (1800, 70));
        assert_eq!(setup(true, "day"), (60, 1440));
        assert_eq!(setup(true, "hour"), (60, 60));
    }
}
