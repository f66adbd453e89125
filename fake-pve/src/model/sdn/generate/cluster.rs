//! Where generation meets the rest of the cluster: each node's applied
//! network configuration, the NICs of the running guests on VNets, and
//! the dry run on a node.

use std::collections::BTreeMap;

use super::vrf::GuestNic;
use super::{DryRun, Host};
use crate::model::cluster::Cluster;
use crate::model::sdn::cluster::nic_bridge_mac;

/// Every node as the generators see it.
pub fn hosts(c: &Cluster, now: i64) -> BTreeMap<String, Host> {
    c.nodes
        .iter()
        .map(|n| {
            let net = c.network.node_or_fresh(&c.nodes, &n.name, now);
            (n.name.clone(), Host::of(&n.name, &n.ip, &net))
        })
        .collect()
}

/// A static address of a guest's configuration (`ip=10.0.0.5/24`),
/// without its prefix length; none for `dhcp`, `manual` or `auto`.
fn static_ips(value: &str) -> Vec<String> {
    value
        .split(',')
        .filter_map(|p| {
            let (k, v) = p.split_once('=')?;
            if !matches!(k, "ip" | "ip6") || matches!(v, "dhcp" | "manual" | "auto") {
                return None;
            }
            Some(v.split('/').next().unwrap_or(v).to_string())
        })
        .collect()
}

/// The NICs of the running guests of every node: bridge, MAC and the
/// addresses their configuration sets (a container's `ip`/`ip6`, a
/// VM's `ipconfig<n>`).
pub fn guest_nics(c: &Cluster) -> Vec<GuestNic> {
    let mut out = Vec::new();
    for n in c.nodes.iter() {
        let node = &n.name;
        let mut add = |conf: &BTreeMap<String, String>, container: bool| {
            for (k, v) in conf {
                let Some(index) = k.strip_prefix("net") else {
                    continue;
                };
                let Some((bridge, mac)) = nic_bridge_mac(v) else {
                    continue;
                };
                let ips = if container {
                    static_ips(v)
                } else {
                    conf.get(&format!("ipconfig{index}"))
                        .map(|x| static_ips(x))
                        .unwrap_or_default()
                };
                out.push(GuestNic {
                    node: node.clone(),
                    bridge,
                    mac,
                    ips,
                });
            }
        };
        for vm in c.guests.vms_on(node).filter(|v| v.running()) {
            add(vm.config(), false);
        }
        for ct in c.guests.cts_on(node).filter(|c| c.running()) {
            add(ct.config(), true);
        }
    }
    out
}

/// `GET /cluster/sdn/dry-run` on `node`: the temporary files are the
/// API worker's (`/proc/<pid>/fd/<n>`).
pub fn dry_run(c: &Cluster, node: &str, now: i64) -> DryRun {
    let hosts = hosts(c, now);
    let host = hosts.get(node).cloned().unwrap_or_else(|| Host {
        node: node.to_string(),
        ..Host::default()
    });
    let pid = c.tasks().next_pid();
    c.sdn.dry_run(
        &host,
        now,
        &format!("/proc/{pid}/fd/11"),
        &format!("/proc/{pid}/fd/12"),
    )
}
