//! The answers of `/nodes/{node}/lxc` as pve-container's API writes them
//! (`API2/LXC.pm` `vmlist`, `API2/LXC/Status.pm` `vm_status`): the
//! model's container data turned into JSON, keys in PVE's order.

use serde_json::{Value, json};

use crate::model::lxc::status::CtStatus;

/// `vmstatus()` of one container (a row of `GET /nodes/{node}/lxc`, or
/// `status/current` with its `ha`).
pub fn status(s: &CtStatus<'_>) -> Value {
    let f = &s.figures;
    let mut v = json!({
        "vmid": s.vmid,
        "type": "lxc",
        "status": s.status,
        "name": f.name,
        "cpus": f.cpus,
        "maxmem": f.maxmem,
        "maxswap": s.maxswap,
        "maxdisk": f.maxdisk,
        "disk": f.disk,
        "mem": f.mem,
        "swap": 0,
        "cpu": f.cpu,
        "uptime": f.uptime,
        "netin": f.netin,
        "netout": f.netout,
        "diskread": f.diskread,
        "diskwrite": f.diskwrite,
    });
    if let Some(pid) = s.pid {
        v["pid"] = json!(pid);
    }
    if s.pressure {
        for k in [
            "pressurecpusome",
            "pressurecpufull",
            "pressureiosome",
            "pressureiofull",
            "pressurememorysome",
            "pressurememoryfull",
        ] {
            v[k] = json!(0);
        }
    }
    if let Some(t) = s.tags {
        v["tags"] = json!(t);
    }
    if s.template {
        v["template"] = json!(1);
    }
    if let Some(l) = s.lock {
        v["lock"] = json!(l);
    }
    if let Some(ha) = s.ha {
        v["ha"] = json!(ha);
    }
    v
}
