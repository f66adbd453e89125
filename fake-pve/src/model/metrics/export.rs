//! `GET /cluster/metrics/export` (pve-manager `API2/Cluster/MetricServer.pm`
//! `export`, `PVE/PullMetric.pm`): the figures pvestatd keeps in its
//! shared cache (`/run/pve/metrics`) at every 10-second round since the
//! node booted, the newest and 180 older rounds (30 minutes).
//!
//! Each round has the node's metrics (`node/<node>`: `uptime`, the
//! physical NICs' `net_in`/`net_out` byte counters, `cpu_avg1/5/15`,
//! `cpu_max`, `cpu_current`, `cpu_iowait`, `mem_*`, `swap_*`,
//! `disk_total`/`disk_used` of `/`), each guest's (`qemu/<vmid>`,
//! `lxc/<vmid>`: the running ones' `cpu_current`, `mem_used`, `disk_*`
//! and `net_*` counters, then `uptime`, `cpu_max`, `mem_total`,
//! `disk_total`) and each active storage's (`storage/<node>/<sid>`). The
//! figures are the ones `rrddata` reports; counters grow at its rates
//! from the node's boot (a guest's from its start).

use serde::Serialize;
use serde_json::Number;

use crate::model::guests::Guests;
use crate::model::nodes::Nodes;
use crate::model::storage::Storages;
use crate::model::{Error, NodeStatus, PveVersion, Result};

/// pvestatd's round.
const STEP: i64 = 10;
/// Rounds kept besides the newest (`OLD_GENERATIONS`).
const OLD_GENERATIONS: i64 = 180;

/// What `export` is asked for.
#[derive(Debug, Clone, Default)]
pub struct ExportQuery {
    /// `local-only`.
    pub local_only: bool,
    /// `node-list` (9.x), split.
    pub node_list: Vec<String>,
    /// `start-time`.
    pub start_time: Option<i64>,
    /// `history`.
    pub history: bool,
}

/// One metric of one round, as the export lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metric {
    /// Its name (`cpu_current`, `net_in`...).
    pub metric: &'static str,
    /// Whose: `node/<node>`, `qemu/<vmid>`, `lxc/<vmid>`,
    /// `storage/<node>/<sid>`.
    pub id: String,
    /// The figure; null where the round has none.
    pub value: Option<Number>,
    /// The round, epoch seconds.
    pub timestamp: i64,
    /// `gauge` or `derive` (a counter).
    #[serde(rename = "type")]
    pub kind: &'static str,
}

fn gauge(id: &str, t: i64, metric: &'static str, value: Option<Number>) -> Metric {
    Metric {
        metric,
        id: id.to_string(),
        value,
        timestamp: t,
        kind: "gauge",
    }
}

fn derive(id: &str, t: i64, metric: &'static str, value: i64) -> Metric {
    Metric {
        metric,
        id: id.to_string(),
        value: Some(value.into()),
        timestamp: t,
        kind: "derive",
    }
}

/// A float figure (none for what is not a number).
fn float(x: f64) -> Option<Number> {
    Number::from_f64(x)
}

/// An integer figure.
fn int(x: impl Into<Number>) -> Option<Number> {
    Some(x.into())
}

/// A guest's round as the export reads it.
struct GuestRound {
    id: String,
    load: Option<crate::model::guest::rrd::Load>,
    sizes: Option<crate::model::guest::rrd::Sizes>,
    started: Option<i64>,
    running: bool,
}

/// What `export` reads: the nodes, their guests and their storages, as
/// pvestatd's cache holds them.
pub struct Export<'a> {
    /// The nodes (their boot, load and status).
    pub nodes: &'a Nodes,
    /// The guests (their figures).
    pub guests: &'a Guests,
    /// The storages (their use).
    pub storage: &'a Storages,
    /// The release (its RRD layout).
    pub version: PveVersion,
}

impl Export<'_> {
    /// The answer of `export` on `local` at `now_ms`: the metrics sorted by
    /// their timestamp.
    ///
    /// # Errors
    /// `Requested node-list contains unknown nodes - a, b`.
    pub fn metrics_export(&self, local: &str, q: &ExportQuery, now_ms: i64) -> Result<Vec<Metric>> {
        let now = now_ms.div_euclid(1000);
        let generations = match (q.history, q.start_time) {
            (false, _) => 0,
            (true, Some(start)) => ((now - start) / STEP).max(0),
            (true, None) => OLD_GENERATIONS + 1,
        };
        let listed = !q.node_list.is_empty();
        let mut metrics = Vec::new();
        if !listed || q.node_list.iter().any(|n| n == local) {
            metrics.extend(self.local_metrics(local, generations, now_ms, q.start_time));
        }
        if !q.local_only || listed {
            let members: Vec<&str> = self.nodes.iter().map(|n| n.name.as_str()).collect();
            let names: Vec<String> = if listed {
                q.node_list.clone()
            } else {
                members.iter().map(|s| (*s).to_string()).collect()
            };
            let unknown: Vec<&str> = names
                .iter()
                .map(String::as_str)
                .filter(|n| !members.contains(n))
                .collect();
            if !unknown.is_empty() {
                return Err(Error::failed(format!(
                    "Requested node-list contains unknown nodes - {}",
                    unknown.join(", ")
                )));
            }
            for name in names {
                let online = self
                    .nodes
                    .iter()
                    .any(|n| n.name == name && n.status == NodeStatus::Online);
                if name == local || !online {
                    continue;
                }
                metrics.extend(self.local_metrics(&name, generations, now_ms, q.start_time));
            }
        }
        metrics.sort_by_key(|m| m.timestamp);
        Ok(metrics)
    }

    /// One node's rounds, newest first, `1 + old` of them at most, those
    /// after `start` only.
    fn local_metrics(&self, node: &str, old: i64, now_ms: i64, start: Option<i64>) -> Vec<Metric> {
        let Some(n) = self.nodes.iter().find(|n| n.name == node) else {
            return Vec::new();
        };
        let now = now_ms.div_euclid(1000);
        // pvestatd's rounds since the boot, the newest at or before now.
        let newest = n.boot_time + STEP * ((now - n.boot_time).max(0) / STEP);
        let load = crate::model::resources::guest_load(self.nodes, self.guests, node);
        let Ok(node_points) = crate::model::node_services::stats::node_rrddata(
            self.nodes,
            self.version,
            load,
            node,
            "hour",
            now_ms,
        ) else {
            return Vec::new();
        };
        let np = node_points.last().and_then(|p| p.figures.clone());
        let vms: Vec<GuestRound> = self
            .guests
            .values()
            .filter(|v| v.node == node)
            .filter_map(|v| {
                let pts = crate::model::qemu::vm_rrddata(
                    v,
                    self.nodes,
                    self.storage,
                    self.version,
                    "hour",
                    now_ms,
                );
                let p = pts.last()?.clone();
                let started = v
                    .started_ms
                    .map_or(Some(n.boot_time), |s| Some(s.div_euclid(1000)));
                Some(GuestRound {
                    id: format!("qemu/{}", v.vmid),
                    load: p.load,
                    sizes: p.sizes,
                    started,
                    running: v.running(),
                })
            })
            .collect();
        let cts: Vec<GuestRound> = self
            .guests
            .cts_on(node)
            .filter_map(|c| {
                let pts = crate::model::lxc::status::ct_rrddata(
                    c,
                    self.nodes,
                    self.version,
                    "hour",
                    now_ms,
                );
                let p = pts.last()?.clone();
                let started = c
                    .started_ms()
                    .map_or(Some(n.boot_time), |s| Some(s.div_euclid(1000)));
                Some(GuestRound {
                    id: format!("lxc/{}", c.vmid()),
                    load: p.load,
                    sizes: p.sizes,
                    started,
                    running: c.running(),
                })
            })
            .collect();
        let storages: Vec<(String, crate::model::storage::cfg::StorageStatus)> = self
            .storage
            .cfg()
            .iter()
            .filter(|s| s.active_on(node))
            .filter_map(|s| {
                let st = self.storage.status(s, node, None)?;
                Some((format!("storage/{node}/{}", s.storage), st))
            })
            .collect();
        let mut out = Vec::new();
        for g in 0..=old.min(OLD_GENERATIONS) {
            let t = newest - g * STEP;
            if t < n.boot_time {
                break;
            }
            if start.is_some_and(|s| t <= s) {
                continue;
            }
            let id = format!("node/{node}");
            let up = t - n.boot_time;
            out.push(gauge(&id, t, "uptime", int(up)));
            let f = np.as_ref();
            let counter = |x: Option<usize>| i64::try_from(x.unwrap_or(0)).unwrap_or(i64::MAX);
            out.push(derive(&id, t, "net_in", counter(f.map(|f| f.netin)) * up));
            out.push(derive(&id, t, "net_out", counter(f.map(|f| f.netout)) * up));
            for m in ["cpu_avg1", "cpu_avg5", "cpu_avg15"] {
                out.push(gauge(&id, t, m, f.and_then(|f| float(f.loadavg))));
            }
            out.push(gauge(&id, t, "cpu_max", f.and_then(|f| int(f.maxcpu))));
            out.push(gauge(&id, t, "cpu_current", f.and_then(|f| float(f.cpu))));
            out.push(gauge(&id, t, "cpu_iowait", f.and_then(|f| float(f.iowait))));
            out.push(gauge(&id, t, "mem_total", f.and_then(|f| int(f.memtotal))));
            out.push(gauge(&id, t, "mem_used", f.and_then(|f| int(f.memused))));
            out.push(gauge(
                &id,
                t,
                "swap_total",
                f.and_then(|f| int(f.swaptotal)),
            ));
            out.push(gauge(&id, t, "swap_used", f.and_then(|f| int(f.swapused))));
            out.push(gauge(
                &id,
                t,
                "disk_total",
                f.and_then(|f| int(f.roottotal)),
            ));
            out.push(gauge(&id, t, "disk_used", f.and_then(|f| int(f.rootused))));
            for g in vms.iter().chain(cts.iter()) {
                let gid = g.id.as_str();
                let since = g.started.filter(|s| g.running && *s <= t);
                if let Some(s) = since {
                    let secs = t - s;
                    let l = g.load.as_ref();
                    out.push(gauge(gid, t, "cpu_current", l.and_then(|l| float(l.cpu))));
                    out.push(gauge(gid, t, "mem_used", l.and_then(|l| int(l.mem))));
                    let rate = |x: Option<u64>| i64::try_from(x.unwrap_or(0)).unwrap_or(i64::MAX);
                    for (m, x) in [
                        ("disk_read", l.map(|l| l.diskread)),
                        ("disk_write", l.map(|l| l.diskwrite)),
                        ("net_in", l.map(|l| l.netin)),
                        ("net_out", l.map(|l| l.netout)),
                    ] {
                        out.push(derive(gid, t, m, rate(x) * secs));
                    }
                    if gid.starts_with("lxc/") {
                        let disk = g.sizes.as_ref().and_then(|z| int(z.disk));
                        out.push(gauge(gid, t, "disk_used", disk));
                    }
                }
                out.push(gauge(gid, t, "uptime", int(since.map_or(0, |s| t - s))));
                let z = g.sizes.as_ref();
                out.push(gauge(gid, t, "cpu_max", z.map(|z| z.maxcpu.clone())));
                out.push(gauge(gid, t, "mem_total", z.and_then(|z| int(z.maxmem))));
                out.push(gauge(gid, t, "disk_total", z.and_then(|z| int(z.maxdisk))));
            }
            for (sid, st) in &storages {
                out.push(gauge(sid, t, "disk_total", int(st.total)));
                out.push(gauge(sid, t, "disk_used", int(st.used)));
            }
        }
        out
    }
}
