//! `/nodes/{node}/qemu`: VMs, their config and pending changes, their
//! power state, creation and destruction (qemu-server `API2/Qemu.pm`).
//!
//! The schema has checked permissions, types and formats before a
//! handler runs; handlers make PVE's own checks and call the model.
//!
//! This module has the routes, the list, creation, destruction, clone,
//! migration and the read views; `config` the config and its updates,
//! `power` the power state, `snapshot` the snapshots and `disk`
//! resize and disk moves.

mod config;
pub mod cpu_models;
mod disk;
mod monitor;
mod power;
mod snapshot;
pub mod status;
pub mod view;

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{Ctx, Reply, Route, delete, get, post, put, start_prepared};
use crate::model::ha::HaRequest;
use crate::model::qemu::{self, CreateRequest, QemuOp};
use crate::model::{Error, Result, TaskEffect, Worker};
use config::{unlink, update_vm, update_vm_async, vm_config, vm_pending};
use disk::{move_vm_disk, resize_vm};
use power::{
    vm_reboot, vm_reset, vm_resume, vm_shutdown, vm_start, vm_status, vm_stop, vm_suspend,
};
use snapshot::{
    delsnapshot, get_snapshot_config, rollback, snapshot, snapshot_list, update_snapshot_config,
};

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/nodes/{node}/qemu", vmlist),
        post("/nodes/{node}/qemu", create_vm),
        delete("/nodes/{node}/qemu/{vmid}", destroy_vm),
        get("/nodes/{node}/qemu/{vmid}/config", vm_config),
        put("/nodes/{node}/qemu/{vmid}/config", update_vm),
        post("/nodes/{node}/qemu/{vmid}/config", update_vm_async),
        get("/nodes/{node}/qemu/{vmid}/pending", vm_pending),
        get("/nodes/{node}/qemu/{vmid}/status/current", vm_status),
        post("/nodes/{node}/qemu/{vmid}/status/start", vm_start),
        post("/nodes/{node}/qemu/{vmid}/status/stop", vm_stop),
        post("/nodes/{node}/qemu/{vmid}/status/shutdown", vm_shutdown),
        post("/nodes/{node}/qemu/{vmid}/status/reboot", vm_reboot),
        post("/nodes/{node}/qemu/{vmid}/status/reset", vm_reset),
        post("/nodes/{node}/qemu/{vmid}/status/suspend", vm_suspend),
        post("/nodes/{node}/qemu/{vmid}/status/resume", vm_resume),
        put("/nodes/{node}/qemu/{vmid}/resize", resize_vm),
        post("/nodes/{node}/qemu/{vmid}/move_disk", move_vm_disk),
        put("/nodes/{node}/qemu/{vmid}/unlink", unlink),
        get("/nodes/{node}/qemu/{vmid}/migrate", migrate_vm_precondition),
        post("/nodes/{node}/qemu/{vmid}/migrate", migrate_vm),
        get("/nodes/{node}/qemu/{vmid}/feature", vm_feature),
        put("/nodes/{node}/qemu/{vmid}/sendkey", vm_sendkey),
        get("/nodes/{node}/qemu/{vmid}/rrddata", rrddata),
        get("/nodes/{node}/qemu/{vmid}/rrd", rrd),
        get("/nodes/{node}/qemu/{vmid}/cloudinit", cloudinit_pending),
        put("/nodes/{node}/qemu/{vmid}/cloudinit", cloudinit_update),
        get(
            "/nodes/{node}/qemu/{vmid}/cloudinit/dump",
            cloudinit_generated_config_dump,
        ),
        post("/nodes/{node}/qemu/{vmid}/clone", clone_vm),
        post("/nodes/{node}/qemu/{vmid}/template", template),
        post("/nodes/{node}/qemu/{vmid}/monitor", monitor::monitor),
        post("/nodes/{node}/qemu/{vmid}/dbus-vmstate", dbus_vmstate),
        get("/nodes/{node}/qemu/{vmid}/snapshot", snapshot_list),
        post("/nodes/{node}/qemu/{vmid}/snapshot", snapshot),
        get(
            "/nodes/{node}/qemu/{vmid}/snapshot/{snapname}/config",
            get_snapshot_config,
        ),
        put(
            "/nodes/{node}/qemu/{vmid}/snapshot/{snapname}/config",
            update_snapshot_config,
        ),
        post(
            "/nodes/{node}/qemu/{vmid}/snapshot/{snapname}/rollback",
            rollback,
        ),
        delete("/nodes/{node}/qemu/{vmid}/snapshot/{snapname}", delsnapshot),
    ]
    .into_iter()
    .chain(cpu_models::routes())
    .collect()
}

/// `raise_param_exc({ <param> => "Only root may use this option." })`.
fn root_only(ctx: &Ctx<'_>, param: &str) -> Result<bool> {
    let set = ctx.params.bool(param)?.unwrap_or(false);
    if set && ctx.who()?.to_string() != "root@pam" {
        return Err(Error::invalid(param, "Only root may use this option."));
    }
    Ok(set)
}

/// Starts a VM task and answers its UPID.
fn run_task(ctx: &Ctx<'_>, node: &str, worker: Worker) -> Result<Reply> {
    Ok(json!(ctx.start_task(node, worker)?).into())
}

fn qemu_worker(kind: &str, vmid: u32, op: QemuOp) -> Worker {
    Worker::new(kind, &vmid.to_string()).effect(TaskEffect::Qemu { vmid, op })
}

/// `GET /nodes/{node}/qemu`: the VMs the caller may audit.
fn vmlist(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let full = ctx.params.bool("full")?.unwrap_or(false);
    let who = ctx.who()?.clone();
    let now_ms = ctx.now_ms();
    let items = ctx.with(|c| {
        c.guests
            .vms_on(&node)
            .filter(|v| {
                c.access()
                    .has_priv(&who, &format!("/vms/{}", v.vmid()), "VM.Audit")
            })
            .map(|v| {
                crate::api::qemu::status::vm_status(&c.vm_status_reader(), v, now_ms, full, false)
            })
            .collect::<Vec<_>>()
    });
    Ok(Value::Array(items).into())
}

/// `POST /nodes/{node}/qemu`.
fn create_vm(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let pool = ctx.params.str("pool");
    let start = ctx.params.bool("start")?.unwrap_or(false);
    let storage = ctx.params.str("storage");
    let config: BTreeMap<String, String> = ctx
        .params
        .names()
        .filter(|k| !qemu::CREATE_ONLY.contains(k))
        .filter_map(|k| Some((k.to_string(), ctx.params.str(k)?)))
        .collect();
    let archive = ctx.params.str("archive");
    let extraction = ctx.params.str("import-working-storage");
    let check = qemu::perm::CreatePerm {
        vmid,
        node: &node,
        config: &config,
        storage: storage.as_deref(),
        pool: pool.as_deref(),
        start,
        ha_managed: ctx.params.bool("ha-managed")?.unwrap_or(false),
        archive: archive.as_deref(),
        force: ctx.params.bool("force")?.unwrap_or(false),
        extraction_storage: extraction.as_deref(),
    };
    let who = ctx.who()?.clone();
    ctx.with(|c| c.perms().check_create_vm_perm(&who, &check))?;
    if archive.is_some() {
        return super::backup::restore_vm(ctx, &node, vmid);
    }
    if let Some(tags) = config.get("tags") {
        let who = ctx.who()?.clone();
        ctx.with(|c| {
            crate::model::access::tags::assert_tag_permissions(
                &c.access,
                &c.guests,
                &who,
                vmid,
                None,
                Some(tags),
            )
        })?;
    }
    let who = ctx.who()?.to_string();
    let now_ms = ctx.now_ms();
    let start = start.then(|| (who.clone(), ctx.task_ms("qmstart")));
    let ms = ctx.task_ms("qmcreate");
    let upid = ctx.with(|c| {
        let worker = c.vm_ops().create_vm(
            CreateRequest {
                vmid,
                node: node.clone(),
                config,
                storage,
                start,
                pool,
            },
            &mut ctx.rq(),
        )?;
        Ok::<_, Error>(c.start_task(&node, worker, &who, now_ms, ms))
    })?;
    Ok(json!(upid).into())
}

/// `DELETE /nodes/{node}/qemu/{vmid}`.
fn destroy_vm(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let skiplock = root_only(ctx, "skiplock")?;
    let purge = ctx.params.bool("purge")?.unwrap_or(false);
    let unreferenced = ctx
        .params
        .bool("destroy-unreferenced-disks")?
        .unwrap_or(false);
    ctx.with(|c| {
        let vm = c.guests.vm(&node, vmid)?;
        if vm.config().get("protection").is_some_and(|p| p == "1") {
            return Err(Error::conflict(format!(
                "can't remove VM {vmid} - protection mode enabled"
            )));
        }
        if vm.running() {
            return Err(Error::conflict(format!(
                "VM {vmid} is running - destroy failed"
            )));
        }
        super::ha::destroy_guest(c, vmid, purge)
    })?;
    run_task(
        ctx,
        &node,
        qemu_worker(
            "qmdestroy",
            vmid,
            QemuOp::Destroy {
                skiplock,
                purge,
                unreferenced,
            },
        ),
    )
}

/// `POST .../clone` (`clone_vm`): a `qmclone` task whose id is the
/// source VMID.
fn clone_vm(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let newid = ctx
        .params
        .int("newid", Some(100), Some(999_999_999))?
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| super::params::missing("newid"))?;
    let req = qemu::CloneRequest {
        node: node.clone(),
        vmid,
        newid,
        name: ctx.params.str("name"),
        description: ctx.params.str("description"),
        pool: ctx.params.str("pool"),
        snapname: ctx.params.str("snapname"),
        storage: ctx.params.str("storage"),
        format: ctx.params.str("format"),
        full: ctx.params.bool("full")?,
        target: ctx.params.str("target"),
        who: Some(ctx.who()?.clone()),
        bwlimit: ctx
            .params
            .int("bwlimit", Some(0), None)?
            .and_then(|b| u64::try_from(b).ok()),
    };
    let who = ctx.who()?.to_string();
    let now_ms = ctx.now_ms();
    let ms = ctx.task_ms("qmclone");
    let upid = ctx.with(|c| {
        let worker = c.vm_ops().clone_vm(req, &mut ctx.rq())?;
        Ok::<_, Error>(c.start_task(&node, worker, &who, now_ms, ms))
    })?;
    Ok(json!(upid).into())
}

/// `POST .../template`: a `qmtemplate` task.
fn template(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let disk = ctx.params.str("disk");
    ctx.with(|c| c.vm_ops().check_template(&node, vmid, disk.as_deref()))?;
    run_task(
        ctx,
        &node,
        qemu_worker("qmtemplate", vmid, QemuOp::Template { disk }),
    )
}

/// `POST .../migrate`: a `qmigrate` task (`lock: migrate` while it runs).
fn migrate_vm(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let target = ctx.param("target")?;
    if target == node {
        return Err(Error::invalid("target", "target is local node."));
    }
    ctx.with(|c| {
        if c.nodes().iter().any(|n| n.name == target) {
            Ok(())
        } else {
            Err(Error::not_found(format!("no such cluster node '{target}'")))
        }
    })?;
    root_only(ctx, "force")?;
    for p in ["migration_type", "migration_network"] {
        if ctx.params.str(p).is_some() && ctx.who()?.to_string() != "root@pam" {
            return Err(Error::invalid(p, "Only root may use this option."));
        }
    }
    let req = qemu::MigrateRequest {
        node: node.clone(),
        vmid,
        target,
        online: ctx.params.bool("online")?.unwrap_or(false),
        with_local_disks: ctx.params.bool("with-local-disks")?.unwrap_or(false),
        targetstorage: ctx.params.str("targetstorage"),
        who: ctx.who()?.clone(),
        now: ctx.now(),
        options: qemu::MigrateOptions {
            migration_type: ctx.params.str("migration_type"),
            migration_network: ctx.params.str("migration_network"),
            bwlimit: ctx
                .params
                .int("bwlimit", Some(0), None)?
                .and_then(|b| u64::try_from(b).ok()),
        },
    };
    let ha = HaRequest::Migrate {
        target: req.target.clone(),
    };
    let now = req.now;
    start_prepared(ctx, &node, |c| {
        c.guests.vm(&req.node, vmid)?;
        match super::ha::divert(c, vmid, &ha, now)? {
            Some(w) => Ok(w),
            None => c.vm_ops().migrate_vm(req),
        }
    })
}

/// `GET .../migrate` (`migrate_vm_precondition`).
fn migrate_vm_precondition(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    ctx.with(|c| {
        Ok(view::migrate_precondition(&c.vm_ops().migrate_precondition(&node, vmid)?).into())
    })
}

/// `GET .../feature` (`vm_feature`): `{hasFeature, nodes}`.
fn vm_feature(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let feature = ctx.param("feature")?;
    let snapname = ctx.params.str("snapname");
    Ok(ctx
        .with(|c| {
            let vm = c.guests.vm(&node, vmid)?;
            qemu::vm_feature(
                vm,
                &c.nodes,
                &c.storage,
                c.version,
                &feature,
                snapname.as_deref(),
            )
        })
        .map(|f| view::feature(&f))?
        .into())
}

/// `POST .../dbus-vmstate` (9.x): starts or stops the VM's dbus-vmstate
/// helper; answers null.
fn dbus_vmstate(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let action =
        crate::model::qemu::dbus_vmstate::DbusAction::parse(&ctx.params.req_str("action")?)?;
    let now = ctx.now();
    ctx.with(|c| crate::model::qemu::dbus_vmstate::dbus_vmstate(c, &node, vmid, action, now))?;
    Ok(Value::Null.into())
}

/// `PUT .../sendkey`: the key goes to the VM's monitor; answers null.
fn vm_sendkey(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    root_only(ctx, "skiplock")?;
    ctx.param("key")?;
    ctx.with(|c| c.guests.vm_sendkey(&node, vmid))?;
    Ok(Value::Null.into())
}

/// `GET .../cloudinit`: cloud-init options with the values the drive
/// still holds.
fn cloudinit_pending(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    Ok(ctx
        .with(|c| {
            c.guests
                .cloudinit_pending(&node, vmid)
                .map(|v| view::cloudinit_pending(&v))
        })?
        .into())
}

/// `PUT .../cloudinit`: regenerates the drive; answers null.
fn cloudinit_update(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    ctx.with(|c| c.guests.cloudinit_update(&node, vmid))?;
    Ok(Value::Null.into())
}

/// `GET .../cloudinit/dump`: the generated user, network or meta data;
/// the password is masked for callers without VM.Config.Cloudinit.
fn cloudinit_generated_config_dump(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let kind = ctx.param("type")?;
    let who = ctx.who()?.clone();
    let path = format!("/vms/{vmid}");
    let text = ctx.with(|c| {
        let mask = !c.access().has_priv(&who, &path, "VM.Config.Cloudinit");
        c.guests.cloudinit_dump(&c.nodes, &node, vmid, &kind, mask)
    })?;
    Ok(json!(text).into())
}

/// `GET .../rrddata`: the statistics series of a time frame.
fn rrddata(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let timeframe = ctx.param("timeframe")?;
    let now_ms = ctx.now_ms();
    ctx.with(|c| {
        let vm = c.guests.vm(&node, vmid)?;
        let points = qemu::vm_rrddata(vm, &c.nodes, &c.storage, c.version, &timeframe, now_ms);
        Ok(crate::api::guest::view::rrddata(&points).into())
    })
}

/// The smallest valid PNG (1x1, transparent), standing in for the graph
/// rrdtool would draw.
const BLANK_PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x60, 0x00, 0x02, 0x00,
    0x00, 0x05, 0x00, 0x01, 0xE9, 0xFA, 0xDC, 0xD8, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44,
    0xAE, 0x42, 0x60, 0x82,
];

/// What `rrd` answers once the RRD file is found: the graph's file name
/// (`<file>_<ds>_<ds>.png`) and the PNG bytes as PVE's JSON formatter
/// sends them, a string of code points 0-255.
pub(crate) fn rrd_graph(ctx: &Ctx<'_>, file: &str) -> Result<Reply> {
    let ds = ctx.param("ds")?;
    let ds = crate::spec::formats::split_list(&ds).join("_");
    let image: String = BLANK_PNG.iter().map(|b| char::from(*b)).collect();
    Ok(json!({ "filename": format!("{file}_{ds}.png"), "image": image }).into())
}

/// `GET .../rrd`: PVE renders a PNG graph of the data sources with
/// rrdtool and answers its file name and bytes (pve-cluster `RRD.pm`
/// `create_rrd_graph`; the JSON formatter carries the bytes as a string of
/// code points 0-255).
fn rrd(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let v9 = ctx.with(|c| c.version().is_v9());
    let rrdname = if v9 {
        format!("pve-vm-9.0/{vmid}")
    } else {
        format!("pve2-vm/{vmid}")
    };
    let file = format!("/var/lib/rrdcached/db/{rrdname}");
    // The RRD files are kept for every guest of the cluster, whatever node
    // the call names; rrdtool reads nothing else.
    let _ = node;
    if !ctx.with(|c| c.guests().contains_key(&vmid)) {
        return Err(Error::failed(format!(
            "RRD error: opening '{file}': No such file or directory"
        )));
    }
    rrd_graph(ctx, &file)
}
