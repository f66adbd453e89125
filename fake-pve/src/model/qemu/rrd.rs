//! `GET .../rrddata` (`PVE::RRD::create_rrd_data`): the VM's statistics
//! series for a time frame, at PVE's resolutions (the `pve2-vm` layout on
//! 8.4, `pve-vm-9.0` on 9.x). The figures are the ones `status/current`
//! reports, as per-second rates for network and disk I/O, while the VM
//! runs; before it started (or while it is stopped) a point has only the
//! VM's sizes, as pvestatd records the rest as unknown.

use serde_json::{Value, json};

use super::{Cluster, Result};

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

impl Cluster {
    /// The series of `vmid` for `timeframe` ending at `now_ms`.
    ///
    /// # Errors
    /// A missing VM.
    pub fn vm_rrddata(&self, node: &str, vmid: u32, timeframe: &str, now_ms: i64) -> Result<Value> {
        let vm = self.vm(node, vmid)?;
        let v9 = self.version.is_v9();
        let (reso, count) = setup(v9, timeframe);
        let now = now_ms.div_euclid(1000);
        let ctime = reso * now.div_euclid(reso);
        let start = ctime - reso * count;
        let maxmem = vm.maxmem();
        let maxcpu = vm.maxcpu().min(
            self.nodes
                .iter()
                .find(|n| n.name == vm.node)
                .map_or(u64::MAX, |n| u64::from(n.cpus)),
        );
        let maxdisk = self.vm_maxdisk(vm);
        let started = if vm.running() {
            vm.started_ms.map(|ms| ms.div_euclid(1000))
        } else {
            None
        };
        let points = (0..count)
            .map(|i| {
                let t = start + i * reso;
                let up = started.is_some_and(|s| s <= t);
                let mut p = json!({
                    "time": t,
                    "maxcpu": maxcpu,
                    "maxmem": maxmem,
                    "maxdisk": maxdisk,
                    "disk": 0,
                });
                // pvestatd writes `U` (unknown) for these while the VM is
                // stopped, and rrddata leaves unknown values out.
                if !up {
                    return p;
                }
                p["cpu"] = json!(0.0123);
                p["mem"] = json!(maxmem / 4);
                p["netin"] = json!(1500);
                p["netout"] = json!(300);
                p["diskread"] = json!(4096);
                p["diskwrite"] = json!(2048);
                if v9 {
                    p["memhost"] = json!(maxmem / 4);
                    for k in [
                        "pressurecpusome",
                        "pressurecpufull",
                        "pressureiosome",
                        "pressureiofull",
                        "pressurememorysome",
                        "pressurememoryfull",
                    ] {
                        p[k] = json!(0);
                    }
                }
                p
            })
            .collect();
        Ok(Value::Array(points))
    }
}

#[cfg(test)]
mod tests {
    use super::setup;

    #[test]
    fn resolutions() {
        assert_eq!(setup(false, "day"), (1800, 70));
        assert_eq!(setup(true, "day"), (60, 1440));
        assert_eq!(setup(true, "hour"), (60, 60));
    }
}
