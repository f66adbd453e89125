//! `/nodes`: the members, their status and version, and the node-wide
//! power calls (pve-manager `API2/Nodes.pm`); the permission checks of
//! the calls on many guests not emulated otherwise (`suspendall`,
//! `migrateall`, the cluster's bulk actions), made as PVE's handlers
//! make them before the 501.

use serde_json::{Value, json};

use super::{Ctx, Reply, Route, get, post};
use crate::model::Result;
use crate::model::power::PowerCommand;

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
        post("/nodes/{node}/suspendall", suspendall).checks_only(),
        post("/nodes/{node}/migrateall", migrateall).checks_only(),
        post("/cluster/bulk-action/guest/start", bulk_start).checks_only(),
        post("/cluster/bulk-action/guest/shutdown", bulk_shutdown).checks_only(),
        post("/cluster/bulk-action/guest/suspend", bulk_suspend).checks_only(),
        post("/cluster/bulk-action/guest/migrate", bulk_migrate).checks_only(),
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

/// The guests of a bulk action's `vms` (an array; a list in one text
/// is read too).
fn bulk_vms(ctx: &Ctx<'_>) -> Vec<u32> {
    let texts: Vec<String> = match ctx.params.get("vms") {
        Some(serde_json::Value::Array(items)) => {
            items.iter().map(crate::api::params::value_text).collect()
        }
        Some(v) => vec![crate::api::params::value_text(v)],
        None => Vec::new(),
    };
    texts
        .iter()
        .flat_map(|t| crate::spec::formats::split_list(t))
        .filter_map(|s| s.parse().ok())
        .collect()
}

/// The answer of a call whose permissions passed but whose work is not
/// emulated.
fn not_emulated(path: &str) -> crate::model::Error {
    crate::model::Error::NotImplemented(format!(
        "Method 'POST /api2/json{path}' is not emulated by fake-pve"
    ))
}

/// `POST /nodes/{node}/suspendall`: VM.PowerMgmt and VM.Config.Disk on
/// `/`, or VM.PowerMgmt on each listed guest; then 501.
fn suspendall(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.param("node")?;
    let vms = vm_list(ctx)?.unwrap_or_default();
    let who = ctx.who()?;
    ctx.with(|c| {
        c.access().check_node_guests(
            who,
            &vms,
            &["VM.PowerMgmt", "VM.Config.Disk"],
            "VM.PowerMgmt",
        )
    })?;
    Err(not_emulated(&format!("/nodes/{node}/suspendall")))
}

/// `POST /nodes/{node}/migrateall`: VM.Migrate on `/` or on each listed
/// guest; then 501.
fn migrateall(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.param("node")?;
    let vms = vm_list(ctx)?.unwrap_or_default();
    let who = ctx.who()?;
    ctx.with(|c| {
        c.access()
            .check_node_guests(who, &vms, &["VM.Migrate"], "VM.Migrate")
    })?;
    Err(not_emulated(&format!("/nodes/{node}/migrateall")))
}

/// A bulk action's check (`check_guest_permissions`), then 501.
fn bulk(ctx: &Ctx<'_>, action: &str, privs: &[&str]) -> Result<Reply> {
    let vms = bulk_vms(ctx);
    let who = ctx.who()?;
    ctx.with(|c| c.access().check_bulk_guests(who, &vms, privs))?;
    Err(not_emulated(&format!(
        "/cluster/bulk-action/guest/{action}"
    )))
}

/// `POST /cluster/bulk-action/guest/start` (9.x).
fn bulk_start(ctx: &Ctx<'_>) -> Result<Reply> {
    bulk(ctx, "start", &["VM.PowerMgmt"])
}

/// `POST /cluster/bulk-action/guest/shutdown` (9.x).
fn bulk_shutdown(ctx: &Ctx<'_>) -> Result<Reply> {
    bulk(ctx, "shutdown", &["VM.PowerMgmt"])
}

/// `POST /cluster/bulk-action/guest/suspend` (9.x): VM.PowerMgmt on each
/// guest (or `/`); suspending `to-disk` also VM.Config.Disk there and
/// Datastore.AllocateSpace on a `statestorage`.
fn bulk_suspend(ctx: &Ctx<'_>) -> Result<Reply> {
    let vms = bulk_vms(ctx);
    let to_disk = ctx.params.bool("to-disk")?.unwrap_or(false);
    let state = ctx.params.str("statestorage");
    let who = ctx.who()?;
    ctx.with(|c| {
        let access = c.access();
        access.check_bulk_guests(who, &vms, &["VM.PowerMgmt"])?;
        if to_disk {
            access.check_bulk_guests(who, &vms, &["VM.Config.Disk"])?;
            if let Some(sid) = &state {
                access.check_perm(
                    who,
                    &format!("/storage/{sid}"),
                    &["Datastore.AllocateSpace"],
                )?;
            }
        }
        Ok::<(), crate::model::Error>(())
    })?;
    Err(not_emulated("/cluster/bulk-action/guest/suspend"))
}

/// `POST /cluster/bulk-action/guest/migrate` (9.x).
fn bulk_migrate(ctx: &Ctx<'_>) -> Result<Reply> {
    bulk(ctx, "migrate", &["VM.Migrate"])
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
