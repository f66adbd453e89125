//! A node's statistics series (`/nodes/{node}/rrddata`, the `pve2-node`
//! layout on 8.4 and `pve-node-9.0` on 9.x) and its system report
//! (`/nodes/{node}/report`, `pvereport`).

use serde::Serialize;

use super::NodeServices;
use super::ops::node_seed;
use super::services::{self, ServiceState};
use crate::model::guests::Guests;
use crate::model::nodes::Nodes;
use crate::model::storage::Storages;
use crate::model::{PveVersion, Result};

/// The data sources of a node's RRD file (`pve2-node` on 8.4,
/// `pve-node-9.0` on 9.x), as pvestatd creates it.
pub fn node_rrd_sources(v9: bool) -> &'static [&'static str] {
    const V8: &[&str] = &[
        "loadavg",
        "maxcpu",
        "cpu",
        "iowait",
        "memtotal",
        "memused",
        "swaptotal",
        "swapused",
        "roottotal",
        "rootused",
        "netin",
        "netout",
    ];
    const V9: &[&str] = &[
        "loadavg",
        "maxcpu",
        "cpu",
        "iowait",
        "memtotal",
        "memused",
        "swaptotal",
        "swapused",
        "roottotal",
        "rootused",
        "netin",
        "netout",
        "memavailable",
        "arcsize",
        "pressurecpusome",
        "pressureiosome",
        "pressureiofull",
        "pressurememorysome",
        "pressurememoryfull",
    ];
    if v9 { V9 } else { V8 }
}

/// `GET /nodes/{node}/rrd`: the node's RRD file once the graph of
/// `ds` (a list) can be drawn from it. pve-cluster's
/// `create_rrd_graph` has two line colours, so a third data source
/// dies in Perl before rrdtool runs; rrdtool then refuses a data
/// source the file does not have.
///
/// # Errors
/// An unknown node, `fixme: no color definition at ... line N.`,
/// `RRD error: No DS called 'x' in '<file>'`.
pub fn node_rrd_file(
    nodes: &Nodes,
    version: PveVersion,
    node: &str,
    ds: &[&str],
) -> Result<String> {
    let n = node_seed(nodes, version, node)?;
    let v9 = version.is_v9();
    let dir = if v9 { "pve-node-9.0" } else { "pve2-node" };
    let file = format!("/var/lib/rrdcached/db/{dir}/{}", n.name);
    if ds.len() > 2 {
        // The line of the `die` in the release's pve-cluster RRD.pm.
        let line = if v9 { 206 } else { 113 };
        return Err(crate::model::Error::failed(format!(
            "fixme: no color definition at /usr/share/perl5/PVE/RRD.pm line {line}."
        )));
    }
    if let Some(bad) = ds.iter().find(|d| !node_rrd_sources(v9).contains(d)) {
        return Err(crate::model::Error::failed(format!(
            "RRD error: No DS called '{bad}' in '{file}'"
        )));
    }
    Ok(file)
}

/// A point of a node's statistics series: only `time` before pvestatd
/// wrote anything (serialized as PVE answers it, in its order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodePoint {
    /// The step's time (epoch seconds).
    pub time: i64,
    /// The figures, once the node has booted.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub figures: Option<NodeFigures>,
}

/// The figures of a node's statistics point (`pve2-node` data sources,
/// and those `pve-node-9.0` adds).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeFigures {
    /// The load average.
    pub loadavg: f64,
    /// The CPUs.
    pub maxcpu: u32,
    /// The CPU usage (0..1).
    pub cpu: f64,
    /// The share of time waiting for I/O.
    pub iowait: f64,
    /// Memory, bytes.
    pub memtotal: u64,
    /// Memory in use, bytes.
    pub memused: u64,
    /// Swap, bytes.
    pub swaptotal: u64,
    /// Swap in use, bytes.
    pub swapused: u64,
    /// The root file system, bytes.
    pub roottotal: u64,
    /// The root file system in use, bytes.
    pub rootused: u64,
    /// Bytes received per second.
    pub netin: usize,
    /// Bytes sent per second.
    pub netout: usize,
    /// The 9.x sources.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub v9: Option<NodeFigures9>,
}

/// The data sources `pve-node-9.0` adds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeFigures9 {
    /// Memory available, bytes.
    pub memavailable: u64,
    /// The ZFS ARC, bytes.
    pub arcsize: u64,
    /// CPU pressure (some).
    pub pressurecpusome: u64,
    /// I/O pressure (some).
    pub pressureiosome: u64,
    /// I/O pressure (full).
    pub pressureiofull: u64,
    /// Memory pressure (some).
    pub pressurememorysome: u64,
    /// Memory pressure (full).
    pub pressurememoryfull: u64,
}

/// The series of `node` for `timeframe` ending at `now_ms`: the figures
/// `status` reports at each step since the node booted, only `time`
/// before (pvestatd wrote nothing yet). `load` is the memory of the
/// node's running guests and how many run.
///
/// # Errors
/// An unknown node.
pub fn node_rrddata(
    nodes: &Nodes,
    version: PveVersion,
    load: (u64, usize),
    node: &str,
    timeframe: &str,
    now_ms: i64,
) -> Result<Vec<NodePoint>> {
    let n = node_seed(nodes, version, node)?;
    let n = nodes
        .get(n.name)
        .ok_or_else(|| crate::model::Error::failed("no such node"))?;
    let v9 = version.is_v9();
    let (reso, count) = crate::model::qemu::rrd::setup(v9, timeframe);
    let now = now_ms.div_euclid(1000);
    let ctime = reso * now.div_euclid(reso);
    let start = ctime - reso * count;
    let (guest_mem, running) = load;
    let memused = n.mem_used(guest_mem);
    let cpu = n.cpu_load(running);
    Ok((0..count)
        .map(|i| {
            let t = start + i * reso;
            if t < n.boot_time {
                return NodePoint {
                    time: t,
                    figures: None,
                };
            }
            NodePoint {
                time: t,
                figures: Some(NodeFigures {
                    loadavg: (cpu * f64::from(n.cpus) * 100.0).round() / 100.0,
                    maxcpu: n.cpus,
                    cpu,
                    iowait: 0.0002,
                    memtotal: n.memory,
                    memused,
                    swaptotal: n.swap,
                    swapused: 0,
                    roottotal: n.rootfs,
                    rootused: n.rootfs_used(),
                    netin: 2100 + 900 * running,
                    netout: 1800 + 700 * running,
                    v9: v9.then(|| NodeFigures9 {
                        memavailable: n.memory - memused,
                        arcsize: 0,
                        pressurecpusome: 0,
                        pressureiosome: 0,
                        pressureiofull: 0,
                        pressurememorysome: 0,
                        pressurememoryfull: 0,
                    }),
                }),
            }
        })
        .collect())
}

/// `pvereport` of `node`: the sections an administrator sends to
/// support, made of what the model knows.
///
/// # Errors
/// An unknown node.
pub fn node_report(
    nodes: &Nodes,
    version: PveVersion,
    services: &NodeServices,
    guests: &Guests,
    storage: &Storages,
    node: &str,
    now: i64,
) -> Result<String> {
    let seed = node_seed(nodes, version, node)?;
    let sys = services.get(seed);
    let n = nodes
        .get(seed.name)
        .ok_or_else(|| crate::model::Error::failed("no such node"))?;
    let v = version;
    let mut out = String::new();
    let mut section = |title: &str, body: String| {
        out.push_str(&format!("==== {title} ====\n\n"));
        out.push_str(&body);
        if !body.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
    };
    let (y, mo, d, h, mi, s, _) = crate::clock::civil(now + super::tz::offset(sys.timezone(), now));
    section(
        "general system info",
        format!(
            "# hostname\n{name}\n\n# date\n{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02} ({tz})\n\n\
             # pveversion --verbose\n{packages}\n# cat /etc/hosts\n{hosts}\n\
             # uptime\nup {up} seconds\n",
            name = n.name,
            tz = sys.timezone(),
            packages = crate::model::node_hw::catalog::pveversion_verbose(v),
            hosts = sys.hosts(),
            up = n.uptime(now),
        ),
    );
    let mut resolv = String::new();
    if let Some(s) = sys.search() {
        resolv.push_str(&format!("search {s}\n"));
    }
    for ns in sys.nameservers() {
        resolv.push_str(&format!("nameserver {ns}\n"));
    }
    section(
        "info about network",
        format!("# cat /etc/resolv.conf\n{resolv}"),
    );
    let mut units = String::new();
    for u in services::units(v) {
        let st = match sys.service_state(u, seed.clustered) {
            ServiceState::Running => "active",
            ServiceState::Stopped => "inactive",
            ServiceState::Failed => "failed",
        };
        units.push_str(&format!("{:<20} {:<10} {}\n", u.name, st, u.desc));
    }
    section(
        "overall system load info",
        format!("# systemctl status (PVE units)\n{units}"),
    );
    let mut qm = String::new();
    for vm in guests.values().filter(|g| g.node == n.name) {
        qm.push_str(&format!(
            "{:>10} {:<20} {}\n",
            vm.vmid,
            vm.config().get("name").map_or("", String::as_str),
            if vm.running() { "running" } else { "stopped" }
        ));
    }
    section("info about virtual guests", format!("# qm list\n{qm}"));
    let mut storages = String::new();
    for st in storage.cfg().iter().filter(|s| s.active_on(&n.name)) {
        storages.push_str(&format!(
            "{}: {}\n\tcontent {}\n\n",
            st.kind,
            st.storage,
            st.content.join(",")
        ));
    }
    section(
        "info about storage",
        format!("# cat /etc/pve/storage.cfg\n{storages}"),
    );
    let status = sys.subscription().map_or_else(
        || "notfound".to_string(),
        |s| s.checked(n.sockets).status().to_string(),
    );
    section(
        "subscription",
        format!("# pvesubscription get\nstatus: {status}\n"),
    );
    Ok(out)
}
