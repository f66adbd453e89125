//! The points of a guest's `rrddata` series (`PVE::RRD::create_rrd_data`
//! over a `pve2-vm` or `pve-vm-9.0` file), the same for both kinds: the
//! time, the guest's sizes once its file exists, and its load while it
//! runs. The fields serialize in the order `rrddata` answers them.

use serde::Serialize;

/// The starts of the steps of a `timeframe` series ending at `now_ms`,
/// at its resolution (`pve2-vm` on 8.4, `pve-vm-9.0` on 9.x).
pub(crate) fn steps(v9: bool, timeframe: &str, now_ms: i64) -> impl Iterator<Item = i64> {
    let (reso, count) = crate::model::qemu::rrd::setup(v9, timeframe);
    let now = now_ms.div_euclid(1000);
    let ctime = reso * now.div_euclid(reso);
    let start = ctime - reso * count;
    (0..count).map(move |i| start + i * reso)
}

/// One step of a guest's series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GuestPoint {
    /// The start of the step, epoch seconds.
    pub time: i64,
    /// The guest's sizes (nothing before its RRD file was made).
    #[serde(flatten)]
    pub sizes: Option<Sizes>,
    /// Its load (nothing while pvestatd wrote `U`: stopped, for a VM).
    #[serde(flatten)]
    pub load: Option<Load>,
}

/// What a step says of a guest's sizes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sizes {
    /// CPUs.
    pub maxcpu: serde_json::Number,
    /// Memory, bytes.
    pub maxmem: u64,
    /// Root disk size, bytes.
    pub maxdisk: u64,
    /// Root disk use, bytes.
    pub disk: u64,
}

/// What a step says of a guest's load.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Load {
    /// CPU use (a fraction of `maxcpu`).
    pub cpu: f64,
    /// Memory used, bytes.
    pub mem: u64,
    /// Bytes per second in.
    pub netin: u64,
    /// Bytes per second out.
    pub netout: u64,
    /// Bytes per second read.
    pub diskread: u64,
    /// Bytes per second written.
    pub diskwrite: u64,
    /// Memory the host gives the VM (9.x, VMs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memhost: Option<u64>,
    /// The pressure stall figures (9.x).
    #[serde(flatten)]
    pub pressure: Option<Pressure>,
}

/// The members of [`Pressure`] in PVE's order: what `vmstatus` adds
/// for a running guest on 9.x (each `avg10 * 1`).
pub const PRESSURE_KEYS: [&str; 6] = [
    "pressurecpusome",
    "pressurecpufull",
    "pressureiosome",
    "pressureiofull",
    "pressurememorysome",
    "pressurememoryfull",
];

/// The pressure stall figures of a step (PVE 9's files have them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[allow(clippy::struct_field_names)]
pub struct Pressure {
    /// `some` CPU stall share.
    pub pressurecpusome: u64,
    /// `full` CPU stall share.
    pub pressurecpufull: u64,
    /// `some` I/O stall share.
    pub pressureiosome: u64,
    /// `full` I/O stall share.
    pub pressureiofull: u64,
    /// `some` memory stall share.
    pub pressurememorysome: u64,
    /// `full` memory stall share.
    pub pressurememoryfull: u64,
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;

    fn sizes() -> Sizes {
        Sizes {
            maxcpu: 2.into(),
            maxmem: 512,
            maxdisk: 1024,
            disk: 0,
        }
    }

    #[rstest]
    #[case::before_the_file(GuestPoint { time: 60, sizes: None, load: None }, json!({"time": 60}))]
    #[case::stopped(
        GuestPoint { time: 60, sizes: Some(sizes()), load: None },
        json!({"time": 60, "maxcpu": 2, "maxmem": 512, "maxdisk": 1024, "disk": 0}),
    )]
    fn a_point_says_only_what_its_file_holds(
        #[case] p: GuestPoint,
        #[case] want: serde_json::Value,
    ) {
        assert_eq!(
            serde_json::to_string(&p).expect("json"),
            serde_json::to_string(&want).expect("json")
        );
    }

    #[rstest]
    fn a_running_vm_on_9_has_memhost_then_pressure() {
        let p = GuestPoint {
            time: 0,
            sizes: Some(sizes()),
            load: Some(Load {
                cpu: 0.0,
                mem: 1,
                netin: 2,
                netout: 3,
                diskread: 4,
                diskwrite: 5,
                memhost: Some(6),
                pressure: Some(Pressure::default()),
            }),
        };
        assert_eq!(
            serde_json::to_string(&p).expect("json"),
            concat!(
                r#"{"time":0,"maxcpu":2,"maxmem":512,"maxdisk":1024,"disk":0,"#,
                r#""cpu":0.0,"mem":1,"netin":2,"netout":3,"diskread":4,"diskwrite":5,"memhost":6,"#,
                r#""pressurecpusome":0,"pressurecpufull":0,"pressureiosome":0,"pressureiofull":0,"#,
                r#""pressurememorysome":0,"pressurememoryfull":0}"#
            )
        );
    }
}
