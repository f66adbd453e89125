//! Prometheus metrics with seed 003's names, rendered in the text
//! exposition format. A handful of series does not need a metrics crate.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;

/// Histogram buckets of reconcile durations, seconds.
const BUCKETS: [f64; 12] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

#[derive(Debug, Default, Clone)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

#[derive(Debug, Default)]
struct Inner {
    machines: BTreeMap<(String, String), u64>,
    durations: BTreeMap<String, Histogram>,
    requests: BTreeMap<(String, String, String), u64>,
    errors: BTreeMap<(String, String), u64>,
    nodes_available: BTreeMap<String, u64>,
    connection: BTreeMap<String, u64>,
}

/// The operator's metrics. Shared by every reconcile.
#[derive(Debug, Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
}

/// The route a request took, as PVE's API schema names it
/// (`/nodes/{node}/qemu/{vmid}/config`,
/// `/nodes/{node}/storage/{storage}/content/{volume}`), so that the
/// metrics keep one series per route, not one per VM or volume. A path
/// the schema does not know has the parts after the usual collection
/// names (`nodes`, `qemu`, `storage`, ...) named.
pub fn endpoint_template(method: &str, path: &str) -> String {
    let path = path.split('?').next().unwrap_or("");
    let segs = pve_client::schema::segments(path);
    for release in [pve_schema::Release::V9_1, pve_schema::Release::V8_4] {
        if let Some(f) = pve_schema::spec(release).find(method, &segs) {
            return f.endpoint.path.clone();
        }
    }
    let segs: Vec<&str> = path.split('/').collect();
    let mut out = Vec::with_capacity(segs.len());
    for (i, s) in segs.iter().enumerate() {
        let prev = if i > 0 { segs[i - 1] } else { "" };
        let named = match prev {
            "nodes" => Some("{node}"),
            "qemu" | "lxc" => Some("{vmid}"),
            "storage" => Some("{storage}"),
            "snapshot" => Some("{snapname}"),
            "tasks" => Some("{upid}"),
            "network" => Some("{iface}"),
            _ => None,
        };
        out.push(named.unwrap_or(s));
    }
    out.join("/")
}

fn lock(m: &Mutex<Inner>) -> std::sync::MutexGuard<'_, Inner> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

impl Metrics {
    /// Counts a PVE API request (`status`: the HTTP status, or `error`).
    pub fn api_request(&self, method: &str, path: &str, status: &str) {
        *lock(&self.inner)
            .requests
            .entry((
                method.into(),
                endpoint_template(method, path),
                status.into(),
            ))
            .or_default() += 1;
    }

    /// Counts an error of a controller.
    pub fn error(&self, error_type: &str, controller: &str) {
        *lock(&self.inner)
            .errors
            .entry((error_type.into(), controller.into()))
            .or_default() += 1;
    }

    /// Records how long a reconcile took.
    pub fn reconcile_duration(&self, controller: &str, secs: f64) {
        let mut g = lock(&self.inner);
        let h = g.durations.entry(controller.into()).or_default();
        for (i, b) in BUCKETS.iter().enumerate() {
            if secs <= *b {
                h.counts[i] += 1;
            }
        }
        h.sum += secs;
        h.count += 1;
    }

    /// Replaces the machine gauge: count per `(phase, node)`.
    pub fn set_machines(&self, counts: BTreeMap<(String, String), u64>) {
        lock(&self.inner).machines = counts;
    }

    /// Sets a cluster's connection status and online node count.
    pub fn set_cluster(&self, cluster: &str, connected: bool, nodes_available: u64) {
        let mut g = lock(&self.inner);
        g.connection.insert(cluster.into(), u64::from(connected));
        g.nodes_available.insert(cluster.into(), nodes_available);
    }

    /// A counter's value (for tests and the status command).
    pub fn api_requests(&self, method: &str, endpoint: &str) -> u64 {
        lock(&self.inner)
            .requests
            .iter()
            .filter(|((m, e, _), _)| m == method && e == endpoint)
            .map(|(_, n)| n)
            .sum()
    }

    /// The text exposition.
    pub fn render(&self) -> String {
        let g = lock(&self.inner);
        let mut o = String::new();
        let _ = writeln!(
            o,
            "# HELP proxmox_operator_machines_total Machines by phase and node."
        );
        let _ = writeln!(o, "# TYPE proxmox_operator_machines_total gauge");
        for ((phase, node), n) in &g.machines {
            let _ = writeln!(
                o,
                "proxmox_operator_machines_total{{phase=\"{}\",node=\"{}\"}} {n}",
                esc(phase),
                esc(node)
            );
        }
        let _ = writeln!(
            o,
            "# HELP proxmox_operator_reconciliation_duration_seconds Reconciliation duration."
        );
        let _ = writeln!(
            o,
            "# TYPE proxmox_operator_reconciliation_duration_seconds histogram"
        );
        for (c, h) in &g.durations {
            let c = esc(c);
            for (i, b) in BUCKETS.iter().enumerate() {
                let _ = writeln!(
                    o,
                    "proxmox_operator_reconciliation_duration_seconds_bucket{{controller=\"{c}\",le=\"{b}\"}} {}",
                    h.counts[i]
                );
            }
            let _ = writeln!(
                o,
                "proxmox_operator_reconciliation_duration_seconds_bucket{{controller=\"{c}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(
                o,
                "proxmox_operator_reconciliation_duration_seconds_sum{{controller=\"{c}\"}} {}",
                h.sum
            );
            let _ = writeln!(
                o,
                "proxmox_operator_reconciliation_duration_seconds_count{{controller=\"{c}\"}} {}",
                h.count
            );
        }
        let _ = writeln!(
            o,
            "# HELP proxmox_operator_api_requests_total Proxmox API requests."
        );
        let _ = writeln!(o, "# TYPE proxmox_operator_api_requests_total counter");
        for ((m, e, s), n) in &g.requests {
            let _ = writeln!(
                o,
                "proxmox_operator_api_requests_total{{method=\"{}\",endpoint=\"{}\",status=\"{}\"}} {n}",
                esc(m),
                esc(e),
                esc(s)
            );
        }
        let _ = writeln!(o, "# HELP proxmox_operator_errors_total Error occurrences.");
        let _ = writeln!(o, "# TYPE proxmox_operator_errors_total counter");
        for ((t, c), n) in &g.errors {
            let _ = writeln!(
                o,
                "proxmox_operator_errors_total{{error_type=\"{}\",controller=\"{}\"}} {n}",
                esc(t),
                esc(c)
            );
        }
        let _ = writeln!(
            o,
            "# HELP proxmox_cluster_nodes_available Available nodes per cluster."
        );
        let _ = writeln!(o, "# TYPE proxmox_cluster_nodes_available gauge");
        for (c, n) in &g.nodes_available {
            let _ = writeln!(
                o,
                "proxmox_cluster_nodes_available{{cluster=\"{}\"}} {n}",
                esc(c)
            );
        }
        let _ = writeln!(
            o,
            "# HELP proxmox_cluster_connection_status Cluster connectivity (1 connected)."
        );
        let _ = writeln!(o, "# TYPE proxmox_cluster_connection_status gauge");
        for (c, n) in &g.connection {
            let _ = writeln!(
                o,
                "proxmox_cluster_connection_status{{cluster=\"{}\"}} {n}",
                esc(c)
            );
        }
        o
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_templated() {
        assert_eq!(
            endpoint_template("POST", "/nodes/pve/qemu/10000/snapshot/pre/rollback"),
            "/nodes/{node}/qemu/{vmid}/snapshot/{snapname}/rollback"
        );
        assert_eq!(
            endpoint_template("GET", "/cluster/resources?type=vm"),
            "/cluster/resources"
        );
        assert_eq!(
            endpoint_template("POST", "/nodes/pve/storage/local/download-url"),
            "/nodes/{node}/storage/{storage}/download-url"
        );
        // volume ids (percent-encoded, as the client sends them) and task
        // ids are the route's parameters
        assert_eq!(
            endpoint_template(
                "GET",
                "/nodes/pve/storage/local-lvm/content/local-lvm%3Avm-10000-disk-0"
            ),
            "/nodes/{node}/storage/{storage}/content/{volume}"
        );
        assert_eq!(
            endpoint_template(
                "GET",
                "/nodes/pve/tasks/UPID%3Apve%3A0000A1B2%3A0001C3D4%3A6720F000%3Aqmstart%3A100%3Aroot%40pam%3A/status"
            ),
            "/nodes/{node}/tasks/{upid}/status"
        );
        // not in the schema: the usual collections still named
        assert_eq!(
            endpoint_template("GET", "/nodes/pve/qemu/100/not-a-route"),
            "/nodes/{node}/qemu/{vmid}/not-a-route"
        );
    }

    #[test]
    fn one_series_per_route_not_per_volume() {
        let m = Metrics::default();
        for v in ["local-lvm%3Avm-10000-disk-0", "local-lvm%3Avm-10001-disk-0"] {
            m.api_request(
                "GET",
                &format!("/nodes/pve/storage/local-lvm/content/{v}"),
                "200",
            );
        }
        let t = m.render();
        let series: Vec<&str> = t
            .lines()
            .filter(|l| l.starts_with("proxmox_operator_api_requests_total{"))
            .collect();
        assert_eq!(
            series,
            [
                "proxmox_operator_api_requests_total{method=\"GET\",endpoint=\"/nodes/{node}/storage/{storage}/content/{volume}\",status=\"200\"} 2"
            ],
            "{t}"
        );
    }

    #[test]
    fn the_exposition_has_every_series() {
        let m = Metrics::default();
        m.api_request("GET", "/nodes/pve/status", "200");
        m.api_request("GET", "/nodes/pve2/status", "200");
        m.error("network", "machine");
        m.reconcile_duration("machine", 0.2);
        m.set_machines([(("Running".to_string(), "pve".to_string()), 3)].into());
        m.set_cluster("lab", true, 2);
        let t = m.render();
        for line in [
            "proxmox_operator_api_requests_total{method=\"GET\",endpoint=\"/nodes/{node}/status\",status=\"200\"} 2",
            "proxmox_operator_errors_total{error_type=\"network\",controller=\"machine\"} 1",
            "proxmox_operator_reconciliation_duration_seconds_bucket{controller=\"machine\",le=\"0.25\"} 1",
            "proxmox_operator_reconciliation_duration_seconds_bucket{controller=\"machine\",le=\"0.1\"} 0",
            "proxmox_operator_reconciliation_duration_seconds_count{controller=\"machine\"} 1",
            "proxmox_operator_machines_total{phase=\"Running\",node=\"pve\"} 3",
            "proxmox_cluster_nodes_available{cluster=\"lab\"} 2",
            "proxmox_cluster_connection_status{cluster=\"lab\"} 1",
        ] {
            assert!(t.lines().any(|l| l == line), "missing {line} in\n{t}");
        }
    }
}
