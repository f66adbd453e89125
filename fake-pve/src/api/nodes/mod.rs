//! `/nodes`: the members, their status and version, and the node-wide
//! power calls (pve-manager `API2/Nodes.pm`): reboot and shutdown,
//! `startall`/`stopall`, `execute`; the calls on many guests are in
//! `bulk`.

use serde_json::{Value, json};

use super::{Ctx, Reply, Route, get, post};
use crate::model::Result;
use crate::model::power::PowerCommand;

mod bulk;
mod execute;
pub mod view;

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/nodes", list_nodes),
        get("/nodes/{node}", node_index),
        get("/nodes/{node}/status", node_status),
        get("/nodes/{node}/version", node_version),
        post("/nodes/{node}/status", node_cmd),
        post("/nodes/{node}/execute", execute::execute),
        post("/nodes/{node}/startall", startall),
        post("/nodes/{node}/stopall", stopall),
        post("/nodes/{node}/suspendall", bulk::suspendall),
        post("/nodes/{node}/migrateall", bulk::migrateall),
        post("/cluster/bulk-action/guest/start", bulk::bulk_start),
        post("/cluster/bulk-action/guest/shutdown", bulk::bulk_shutdown),
        post("/cluster/bulk-action/guest/suspend", bulk::bulk_suspend),
        post("/cluster/bulk-action/guest/migrate", bulk::bulk_migrate),
    ]
}

/// The children of `/nodes/{node}`, as 9.x lists them.
const NODE_DIRS_9: &[&str] = &[
    "aplinfo",
    "apt",
    "capabilities",
    "ceph",
    "certificates",
    "config",
    "disks",
    "dns",
    "firewall",
    "hardware",
    "hosts",
    "journal",
    "lxc",
    "migrateall",
    "netstat",
    "network",
    "qemu",
    "query-oci-repo-tags",
    "query-url-metadata",
    "replication",
    "report",
    "rrd",
    "rrddata",
    "scan",
    "sdn",
    "services",
    "spiceshell",
    "startall",
    "status",
    "stopall",
    "storage",
    "subscription",
    "suspendall",
    "syslog",
    "tasks",
    "termproxy",
    "time",
    "version",
    "vncshell",
    "vzdump",
    "wakeonlan",
];

/// `GET /nodes`: every member; the figures only with Sys.Audit.
fn list_nodes(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let now = ctx.now();
    let items = ctx.with(|c| {
        let res = c.resources();
        let loads = res.guest_loads();
        res.nodes(&loads, None)
            .iter()
            .map(|row| {
                let mut item = super::cluster::view::node(row, now, false);
                let name = item["node"].as_str().unwrap_or_default().to_string();
                if !c
                    .access()
                    .has_priv(who, &format!("/nodes/{name}"), "Sys.Audit")
                    && let Some(o) = item.as_object_mut()
                {
                    for k in [
                        "cpu", "maxcpu", "mem", "maxmem", "disk", "maxdisk", "uptime", "level",
                    ] {
                        o.remove(k);
                    }
                }
                item
            })
            .collect::<Vec<_>>()
    });
    // each member's own certificate's fingerprint (read outside the model)
    let items = items
        .into_iter()
        .map(|mut item| {
            if let (Some(name), Some(fp)) =
                (item["node"].as_str(), item["ssl_fingerprint"].as_str())
            {
                let fp = super::node_hw::member_fingerprint(ctx, name, fp);
                item["ssl_fingerprint"] = json!(fp);
            }
            item
        })
        .collect();
    Ok(Value::Array(items).into())
}

/// `GET /nodes/{node}`: answered for any well-formed name (not proxied).
fn node_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let v9 = ctx.with(|c| c.version().is_v9());
    let mut dirs: Vec<&str> = NODE_DIRS_9
        .iter()
        .copied()
        .filter(|d| v9 || (*d != "query-oci-repo-tags" && *d != "sdn"))
        .collect();
    if !v9 {
        dirs.push("sdn");
    }
    Ok(json!(
        dirs.iter()
            .map(|d| json!({ "name": d }))
            .collect::<Vec<_>>()
    )
    .into())
}

/// `GET /nodes/{node}/status`.
fn node_status(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let now = ctx.now();
    ctx.with(|c| {
        let (mem, running) = crate::model::resources::guest_load(&c.nodes, &c.guests, &node);
        let n = c.nodes().reach(&node)?;
        Ok(view::node_status(n, now, mem, running, c.version()).into())
    })
}

/// `GET /nodes/{node}/version`.
fn node_version(ctx: &Ctx<'_>) -> Result<Reply> {
    ctx.node()?;
    let v = ctx.state.settings().version;
    Ok(json!({ "version": v.version(), "release": v.release(), "repoid": v.repoid() }).into())
}

/// The `vms` list of startall/stopall (validated by the schema as a
/// `pve-vmid-list`).
fn vm_list(ctx: &Ctx<'_>) -> Result<Option<Vec<u32>>> {
    Ok(ctx.params.str("vms").map(|text| {
        crate::spec::formats::split_list(&text)
            .into_iter()
            .filter_map(|s| s.parse().ok())
            .collect()
    }))
}

/// The permission of startall/stopall: VM.PowerMgmt on `/`, or on each
/// listed VM.
fn check_power(ctx: &Ctx<'_>, vms: Option<&[u32]>) -> Result<()> {
    let who = ctx.who()?;
    let vms = vms.unwrap_or_default();
    ctx.with(|c| {
        c.access()
            .check_node_guests(who, vms, &["VM.PowerMgmt"], "VM.PowerMgmt")
    })
}

/// `POST /nodes/{node}/startall`: starts the guests marked `onboot` (or
/// all with `force`, or those listed in `vms`), skipping templates and
/// guests already running.
fn startall(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let force = ctx.params.bool("force")?.unwrap_or(false);
    let vms = vm_list(ctx)?;
    check_power(ctx, vms.as_deref())?;
    let upid = ctx.start_prepared(&node, |c| {
        let guests = c.startall_guests(&node, vms.as_deref(), force);
        Ok(crate::model::Cluster::startall_worker(&guests))
    })?;
    Ok(json!(upid).into())
}

/// `POST /nodes/{node}/stopall`: stops the running guests, highest VMID
/// first.
fn stopall(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    ctx.params.bool("force-stop")?;
    let timeout = ctx
        .params
        .int("timeout", Some(0), Some(7200))?
        .unwrap_or(180);
    let vms = vm_list(ctx)?;
    check_power(ctx, vms.as_deref())?;
    let upid = ctx.start_prepared(&node, |c| {
        let guests = c.stopall_guests(&node, vms.as_deref());
        Ok(crate::model::Cluster::stopall_worker(&guests, timeout))
    })?;
    Ok(json!(upid).into())
}

/// `POST /nodes/{node}/status` (`node_cmd`): reboots or shuts the node
/// down. Its guests stop, then it goes offline; a reboot comes back by
/// itself. Answers `null` at once, as PVE does before the node goes.
fn node_cmd(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let command = ctx.param("command")?;
    let cmd = PowerCommand::parse(&command)
        .ok_or_else(|| crate::model::Error::invalid("command", "value is not in enum"))?;
    let now_ms = ctx.now_ms();
    ctx.with(|c| c.node_power(&node, cmd, now_ms))?;
    Ok(Value::Null.into())
}
