//! The answers of `/nodes/{node}/status` and `/cluster/status` as
//! pve-manager's `API2/Nodes.pm` and `API2/ClusterStatus.pm` (via
//! pve-cluster) write them: the model's members turned into JSON, keys
//! in PVE's order, flags as 0/1.

use serde_json::{Value, json};

use crate::model::PveVersion;
use crate::model::node_hw::catalog::kernel_release;
use crate::model::nodes::{Node, NodeStatus, Nodes, kernel_build};

/// `GET /nodes/{node}/status`, given the memory and the number of the
/// running guests on the node.
pub fn node_status(
    n: &Node,
    now: i64,
    guest_mem: u64,
    running: usize,
    version: PveVersion,
) -> Value {
    let used = n.mem_used(guest_mem);
    let cores = (n.cpus / n.sockets.max(1)).max(1);
    let kernel_release = kernel_release(version);
    let kernel_version = kernel_build(version);
    let load = n.cpu_load(running);
    let loadavg = format!("{:.2}", load * f64::from(n.cpus));
    let mut memory = json!({
        "total": n.memory,
        "used": used,
        "free": n.memory - used,
    });
    if version.is_v9() {
        memory["available"] = json!(n.memory - used);
    }
    // `vendor` and `family` came with PVE 9.2's pve-common; 8.4 and
    // 9.1 nodes do not send them.
    let cpuinfo = json!({
        "user_hz": 100,
        "model": n.cpu_model,
        "mhz": "2899.998",
        "cpus": n.cpus,
        "sockets": n.sockets,
        "cores": cores,
        "flags": crate::model::node_hw::catalog::HOST_CPU_FLAGS,
        "hvm": "1",
    });
    json!({
        "uptime": n.uptime(now),
        "idle": 0,
        "cpu": load,
        "wait": 0.0002,
        "loadavg": [loadavg.clone(), loadavg.clone(), loadavg],
        "kversion": format!("Linux {kernel_release} {kernel_version}"),
        "current-kernel": {
            "sysname": "Linux",
            "release": kernel_release,
            "version": kernel_version,
            "machine": "x86_64",
        },
        "boot-info": { "mode": "efi", "secureboot": 0 },
        "cpuinfo": cpuinfo,
        "memory": memory,
        "swap": { "total": n.swap, "used": 0, "free": n.swap },
        "ksm": { "shared": 0 },
        "rootfs": {
            "total": n.rootfs,
            "avail": n.rootfs - n.rootfs_used(),
            "used": n.rootfs_used(),
            "free": n.rootfs - n.rootfs_used(),
        },
        "pveversion": format!("pve-manager/{}/{}", version.version(), version.repoid()),
    })
}

/// `GET /cluster/status`: the cluster (when there is one), then every
/// member in `nodelist` order.
pub fn cluster_status(nodes: &Nodes) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(name) = nodes.cluster_name() {
        out.push(json!({
            "type": "cluster",
            "id": "cluster",
            "name": name,
            "nodes": nodes.len(),
            "quorate": u8::from(nodes.quorate()),
            "version": nodes.len(),
        }));
    }
    for n in nodes {
        out.push(json!({
            "type": "node",
            "id": format!("node/{}", n.name),
            "name": n.name,
            "nodeid": n.nodeid,
            "ip": n.ip,
            "local": u8::from(n.name == nodes.local()),
            "online": u8::from(n.status == NodeStatus::Online),
            "level": n.level,
        }));
    }
    out
}
