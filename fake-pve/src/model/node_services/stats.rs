//! A node's statistics series (`/nodes/{node}/rrddata`, the `pve2-node`
//! layout on 8.4 and `pve-node-9.0` on 9.x) and its system report
//! (`/nodes/{node}/report`, `pvereport`).

use serde_json::{Value, json};

use super::services::{self, ServiceState};
use crate::model::{Cluster, Result};

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

impl Cluster {
    /// `GET /nodes/{node}/rrd`: the node's RRD file once the graph of
    /// `ds` (a list) can be drawn from it. pve-cluster's
    /// `create_rrd_graph` has two line colours, so a third data source
    /// dies in Perl before rrdtool runs; rrdtool then refuses a data
    /// source the file does not have.
    ///
    /// # Errors
    /// An unknown node, `fixme: no color definition at ... line N.`,
    /// `RRD error: No DS called 'x' in '<file>'`.
    pub fn node_rrd_file(&self, node: &str, ds: &[&str]) -> Result<String> {
        let n = self.node_seed(node)?;
        let v9 = self.version.is_v9();
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

    /// The series of `node` for `timeframe` ending at `now_ms`: the figures
    /// `status` reports at each step since the node booted, only `time`
    /// before (pvestatd wrote nothing yet).
    ///
    /// # Errors
    /// An unknown node.
    pub fn node_rrddata(&self, node: &str, timeframe: &str, now_ms: i64) -> Result<Value> {
        let n = self.node_seed(node)?;
        let n = self
            .nodes
            .get(n.name)
            .ok_or_else(|| crate::model::Error::failed("no such node"))?;
        let v9 = self.version.is_v9();
        let (reso, count) = crate::model::qemu::rrd::setup(v9, timeframe);
        let now = now_ms.div_euclid(1000);
        let ctime = reso * now.div_euclid(reso);
        let start = ctime - reso * count;
        let (guest_mem, running) = crate::model::resources::guest_load(&self.nodes, &self.guests, &n.name);
        let memused = n.mem_used(guest_mem);
        let cpu = n.cpu_load(running);
        let points: Vec<Value> = (0..count)
            .map(|i| {
                let t = start + i * reso;
                if t < n.boot_time {
                    return json!({ "time": t });
                }
                let mut p = json!({
                    "time": t,
                    "loadavg": (cpu * f64::from(n.cpus) * 100.0).round() / 100.0,
                    "maxcpu": n.cpus,
                    "cpu": cpu,
                    "iowait": 0.0002,
                    "memtotal": n.memory,
                    "memused": memused,
                    "swaptotal": n.swap,
                    "swapused": 0,
                    "roottotal": n.rootfs,
                    "rootused": n.rootfs_used(),
                    "netin": 2100 + 900 * running,
                    "netout": 1800 + 700 * running,
                });
                if v9 {
                    p["memavailable"] = json!(n.memory - memused);
                    p["arcsize"] = json!(0);
                    for k in [
                        "pressurecpusome",
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

    /// `pvereport` of `node`: the sections an administrator sends to
    /// support, made of what the model knows.
    ///
    /// # Errors
    /// An unknown node.
    pub fn node_report(&self, node: &str, now: i64) -> Result<String> {
        let seed = self.node_seed(node)?;
        let sys = self.node_services.get(seed);
        let n = self
            .nodes
            .get(seed.name)
            .ok_or_else(|| crate::model::Error::failed("no such node"))?;
        let v = self.version;
        let mut out = String::new();
        let mut section = |title: &str, body: String| {
            out.push_str(&format!("==== {title} ====\n\n"));
            out.push_str(&body);
            if !body.ends_with('\n') {
                out.push('\n');
            }
            out.push('\n');
        };
        let (y, mo, d, h, mi, s, _) =
            crate::clock::civil(now + super::tz::offset(sys.timezone(), now));
        section(
            "general system info",
            format!(
                "# hostname\n{name}\n\n# date\n{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02} ({tz})\n\n\
                 # pveversion --verbose\nproxmox-ve: {rel} (running kernel: {kernel})\n\
                 pve-manager: {ver} ({repoid})\n\n# cat /etc/hosts\n{hosts}\n\
                 # uptime\nup {up} seconds\n",
                name = n.name,
                tz = sys.timezone(),
                rel = v.release(),
                kernel = if v.is_v9() {
                    "6.17.2-1-pve"
                } else {
                    "6.8.12-15-pve"
                },
                ver = v.version(),
                repoid = v.repoid(),
                hosts = sys.hosts_view()["data"].as_str().unwrap_or_default(),
                up = n.uptime(now),
            ),
        );
        let dns = sys.dns_view();
        let mut resolv = String::new();
        if let Some(s) = dns["search"].as_str() {
            resolv.push_str(&format!("search {s}\n"));
        }
        for k in ["dns1", "dns2", "dns3"] {
            if let Some(ns) = dns[k].as_str() {
                resolv.push_str(&format!("nameserver {ns}\n"));
            }
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
        let mut guests = String::new();
        for vm in self.guests.values().filter(|g| g.node == n.name) {
            guests.push_str(&format!(
                "{:>10} {:<20} {}\n",
                vm.vmid,
                vm.config().get("name").map_or("", String::as_str),
                if vm.running() { "running" } else { "stopped" }
            ));
        }
        section("info about virtual guests", format!("# qm list\n{guests}"));
        let mut storages = String::new();
        for st in self.storage.cfg().iter().filter(|s| s.active_on(&n.name)) {
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
        let sub = super::subscription::view(sys.subscription(), &n.name, n.sockets, false);
        section(
            "subscription",
            format!(
                "# pvesubscription get\nstatus: {}\n",
                sub["status"].as_str().unwrap_or_default()
            ),
        );
        Ok(out)
    }
}
