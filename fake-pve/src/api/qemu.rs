//! `/nodes/{node}/qemu`: VMs, their config and pending changes, their
//! power state, creation and destruction (qemu-server `API2/Qemu.pm`).
//!
//! The schema has checked permissions, types and formats before a
//! handler runs; handlers make PVE's own checks and call the model.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{Ctx, RawData, Reply, Route, delete, get, post, put};
use crate::model::ha::HaRequest;
use crate::model::qemu::{self, ConfigUpdate, CreateRequest, QemuOp};
use crate::model::{Error, Result, TaskEffect, Worker};

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
}

/// The node a call names, `localhost` resolved.
fn node_name(ctx: &Ctx<'_>) -> Result<String> {
    let node = ctx.param("node")?;
    ctx.with(|c| c.nodes().reach(&node).map(|n| n.name.clone()))
}

fn vmid(ctx: &Ctx<'_>) -> Result<u32> {
    ctx.params
        .int("vmid", Some(100), Some(999_999_999))?
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| super::params::missing("vmid"))
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
    let who = ctx.who()?.to_string();
    let now_ms = ctx.now_ms();
    let ms = ctx.task_ms(&worker.kind);
    let upid = ctx.with(|c| c.start_task(node, worker, &who, now_ms, ms));
    Ok(json!(upid).into())
}

fn qemu_worker(kind: &str, vmid: u32, op: QemuOp) -> Worker {
    Worker::new(kind, &vmid.to_string()).effect(TaskEffect::Qemu { vmid, op })
}

/// `GET /nodes/{node}/qemu`: the VMs the caller may audit.
fn vmlist(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let full = ctx.params.bool("full")?.unwrap_or(false);
    let who = ctx.who()?.clone();
    let now_ms = ctx.now_ms();
    let items = ctx.with(|c| {
        c.vms_on(&node)
            .filter(|v| {
                c.access()
                    .has_priv(&who, &format!("/vms/{}", v.vmid()), "VM.Audit")
            })
            .map(|v| c.vm_status(v, now_ms, full, false))
            .collect::<Vec<_>>()
    });
    Ok(Value::Array(items).into())
}

/// `POST /nodes/{node}/qemu`.
fn create_vm(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
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
    ctx.with(|c| c.check_create_vm_perm(&who, &check))?;
    if archive.is_some() {
        return super::backup::restore_vm(ctx, &node, vmid);
    }
    if let Some(tags) = config.get("tags") {
        let who = ctx.who()?.clone();
        ctx.with(|c| c.assert_tag_permissions(&who, vmid, None, Some(tags)))?;
    }
    let who = ctx.who()?.to_string();
    let now_ms = ctx.now_ms();
    let start = start.then(|| (who.clone(), ctx.task_ms("qmstart")));
    let ms = ctx.task_ms("qmcreate");
    let upid = ctx.with(|c| {
        let worker = c.create_vm(
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

/// `GET .../config`.
fn vm_config(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let current = ctx.params.bool("current")?.unwrap_or(false);
    let snapshot = ctx.params.str("snapshot");
    if snapshot.as_deref().is_some_and(|s| !s.is_empty()) && current {
        let msg = "cannot use 'snapshot' parameter with 'current'";
        let mut errors = BTreeMap::new();
        errors.insert("snapshot".to_string(), msg.to_string());
        errors.insert("current".to_string(), msg.to_string());
        return Err(Error::Invalid(errors));
    }
    ctx.with(|c| {
        if let Some(snap) = snapshot {
            // load_snapshot_config adds the digest of the file.
            let mut conf = c.snapshot_config(&node, vmid, &snap)?;
            conf["digest"] = json!(c.vm(&node, vmid)?.digest());
            return Ok(conf.into());
        }
        Ok(c.config_view(&node, vmid, current)?.into())
    })
}

/// Parameters of update_vm that are not config keys.
const UPDATE_PARAMS: &[&str] = &[
    "node",
    "vmid",
    "delete",
    "revert",
    "digest",
    "skiplock",
    "force",
    "background_delay",
    "skip_cloud_init",
    "import-working-storage",
];

/// Reads and checks an update as `update_vm_api` does before locking.
fn parse_update(ctx: &Ctx<'_>, vmid: u32) -> Result<ConfigUpdate> {
    let version = ctx.state.settings().version;
    let mut paramarr = Vec::new();
    for k in ctx.params.names() {
        if matches!(
            k,
            "node"
                | "vmid"
                | "digest"
                | "background_delay"
                | "skip_cloud_init"
                | "import-working-storage"
        ) {
            continue;
        }
        let v = if k == "cipassword" {
            "<hidden>".to_string()
        } else {
            ctx.params.str(k).unwrap_or_default()
        };
        paramarr.push(format!("-{k} {v}"));
    }
    let skiplock = root_only(ctx, "skiplock")?;
    let force = ctx.params.bool("force")?.unwrap_or(false);
    let mut set: BTreeMap<String, String> = ctx
        .params
        .names()
        .filter(|k| !UPDATE_PARAMS.contains(k))
        .filter_map(|k| Some((k.to_string(), ctx.params.str(k)?)))
        .collect();
    let delete_str = ctx.params.str("delete").unwrap_or_default();
    let revert_str = ctx.params.str("revert").unwrap_or_default();
    if delete_str.is_empty() && revert_str.is_empty() && set.is_empty() {
        return Err(Error::failed("no options specified"));
    }
    if let Some(cd) = set.remove("cdrom") {
        set.insert("ide2".into(), format!("{cd},media=cdrom"));
    }
    let split = |s: &str| -> Vec<String> {
        s.split([',', ';', ' ', '\t', '\n', '\0'])
            .filter(|x| !x.is_empty())
            .map(str::to_string)
            .collect()
    };
    let mut revert = Vec::new();
    for opt in split(&revert_str) {
        if !qemu::option_exists(version, &opt) {
            return Err(Error::invalid("revert", format!("unknown option '{opt}'")));
        }
        if set.contains_key(&opt) {
            return Err(Error::invalid(
                "delete",
                format!("you can't use '-{opt}' and -revert {opt}' at the same time"),
            ));
        }
        revert.push(opt);
    }
    let mut delete = Vec::new();
    for opt in split(&delete_str) {
        let opt = if opt == "cdrom" {
            "ide2".to_string()
        } else {
            opt
        };
        if set.contains_key(&opt) {
            return Err(Error::invalid(
                "delete",
                format!("you can't use '-{opt}' and -delete {opt}' at the same time"),
            ));
        }
        if revert.contains(&opt) {
            return Err(Error::invalid(
                "revert",
                format!("you can't use '-delete {opt}' and -revert {opt}' at the same time"),
            ));
        }
        if !qemu::option_exists(version, &opt) {
            return Err(Error::invalid("delete", format!("unknown option '{opt}'")));
        }
        delete.push(opt);
    }
    for (k, v) in &mut set {
        if !qemu::is_drive_key(k) {
            *v = qemu::canonical_update(version, k, v, &mut ctx.rq())?;
        }
    }
    Ok(ConfigUpdate {
        set,
        delete,
        revert,
        force,
        skiplock,
        digest: ctx.params.str("digest"),
        log: format!("update VM {vmid}: {}", paramarr.join(" ")),
    })
}

/// `assert_tag_permissions` for a config update that sets or deletes
/// `tags`.
fn check_tags(ctx: &Ctx<'_>, node: &str, vmid: u32, u: &ConfigUpdate) -> Result<()> {
    let deleting = u.delete.iter().any(|k| k == "tags");
    if !u.set.contains_key("tags") && !deleting {
        return Ok(());
    }
    let who = ctx.who()?.clone();
    ctx.with(|c| {
        let old = c.vm(node, vmid)?.config().get("tags").cloned();
        let new = if deleting {
            Some("")
        } else {
            u.set.get("tags").map(String::as_str)
        };
        c.assert_tag_permissions(&who, vmid, old.as_deref(), new)
    })
}

/// `update_vm_api`'s permission checks of an update: those made before
/// the config is locked (by option, storage and bridge access), then
/// those made while the change is applied (each option's old and new
/// value), answered apart: an asynchronous update's task fails with the
/// latter.
fn check_update_perm(ctx: &Ctx<'_>, node: &str, vmid: u32, u: &ConfigUpdate) -> Result<Result<()>> {
    let who = ctx.who()?.clone();
    let storage = ctx.params.str("import-working-storage");
    ctx.with(|c| {
        let current = c.vm(node, vmid)?.config().clone();
        c.check_update_vm_perm(&who, vmid, &current, &u.set, &u.delete, storage.as_deref())?;
        Ok(c.check_update_vm_values_perm(&who, vmid, &current, &u.set, &u.delete))
    })
}

/// `PUT .../config`: synchronous, answers null.
fn update_vm(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let u = parse_update(ctx, vmid)?;
    check_update_perm(ctx, &node, vmid, &u)??;
    check_tags(ctx, &node, vmid, &u)?;
    apply_update(ctx, &node, vmid, &u)
}

/// Checks and applies a config update at once; answers null.
fn apply_update(ctx: &Ctx<'_>, node: &str, vmid: u32, u: &ConfigUpdate) -> Result<Reply> {
    let now = ctx.now();
    ctx.with(|c| {
        c.vm(node, vmid)?;
        c.check_update(node, vmid, u)?;
        c.update_config(node, vmid, u, now).map_err(|(_, e)| e)
    })?;
    Ok(Value::Null.into())
}

/// `POST .../config`: a `qmconfig` task.
fn update_vm_async(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let u = parse_update(ctx, vmid)?;
    let in_task = check_update_perm(ctx, &node, vmid, &u)?;
    check_tags(ctx, &node, vmid, &u)?;
    ctx.with(|c| c.check_update(&node, vmid, &u))?;
    let worker = match in_task {
        Ok(()) => qemu_worker("qmconfig", vmid, QemuOp::Config(u)),
        Err(e) => Worker::new("qmconfig", &vmid.to_string()).fail(e.to_string()),
    };
    run_task(ctx, &node, worker)
}

/// `GET .../pending`.
fn vm_pending(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    Ok(ctx.with(|c| c.pending_view(&node, vmid))?.into())
}

/// `GET .../status/current`.
fn vm_status(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let now_ms = ctx.now_ms();
    let json = ctx.with(|c| -> Result<RawData> {
        let vm = c.vm(&node, vmid)?;
        Ok(RawData::written(1280, |out| {
            c.write_vm_status(vm, now_ms, true, true, out);
        }))
    })?;
    Ok(Reply {
        raw: Some(json),
        ..Reply::default()
    })
}

/// `POST .../status/start`.
fn vm_start(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let skiplock = root_only(ctx, "skiplock")?;
    if ctx.params.get("migratedfrom").is_some() && ctx.who()?.to_string() != "root@pam" {
        return Err(Error::invalid(
            "migratedfrom",
            "Only root may use this option.",
        ));
    }
    ctx.with(|c| c.vm(&node, vmid).map(|_| ()))?;
    let now = ctx.now();
    start_prepared(ctx, &node, |c| {
        Ok(super::ha::divert(c, vmid, &HaRequest::Start, now)?
            .unwrap_or_else(|| qemu_worker("qmstart", vmid, QemuOp::Start { skiplock })))
    })
}

/// `POST .../status/stop`.
fn vm_stop(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let skiplock = root_only(ctx, "skiplock")?;
    root_only(ctx, "keepActive")?;
    ctx.with(|c| c.vm(&node, vmid).map(|_| ()))?;
    let overrule = ctx.params.bool("overrule-shutdown")?.unwrap_or(false);
    let now = ctx.now();
    let migrating = ctx.params.get("migratedfrom").is_some();
    start_prepared(ctx, &node, |c| {
        if migrating {
            return Ok(qemu_worker("qmstop", vmid, QemuOp::Stop { skiplock }));
        }
        super::ha::overrule_refused(c, vmid, overrule)?;
        Ok(
            super::ha::divert(c, vmid, &HaRequest::Stop { timeout: 0 }, now)?
                .unwrap_or_else(|| qemu_worker("qmstop", vmid, QemuOp::Stop { skiplock })),
        )
    })
}

/// `POST .../status/shutdown`.
fn vm_shutdown(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    root_only(ctx, "skiplock")?;
    root_only(ctx, "keepActive")?;
    let force_stop = ctx.params.bool("forceStop")?.unwrap_or(false);
    let timeout = ctx.params.int("timeout", Some(0), None)?.unwrap_or(60);
    let paused = ctx.with(|c| c.vm(&node, vmid).map(|v| v.paused()))?;
    if paused && !force_stop {
        return Err(Error::conflict("VM is paused - cannot shutdown"));
    }
    let timeout = u64::try_from(timeout).unwrap_or(60);
    let now = ctx.now();
    start_prepared(ctx, &node, |c| {
        Ok(
            super::ha::divert(c, vmid, &HaRequest::Stop { timeout }, now)?.unwrap_or_else(|| {
                qemu_worker(
                    "qmshutdown",
                    vmid,
                    QemuOp::Shutdown {
                        force_stop,
                        timeout,
                        hard: paused,
                    },
                )
            }),
        )
    })
}

/// `check_running` for calls that need a running VM.
fn must_run(ctx: &Ctx<'_>, node: &str, vmid: u32, paused_msg: bool) -> Result<()> {
    ctx.with(|c| {
        let vm = c.vm_on_node(node, vmid)?;
        if paused_msg && vm.paused() {
            return Err(Error::conflict("VM is paused - cannot shutdown"));
        }
        if !vm.running() {
            return Err(Error::conflict(format!("VM {vmid} not running")));
        }
        Ok(())
    })
}

/// `POST .../status/reboot`.
fn vm_reboot(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    must_run(ctx, &node, vmid, true)?;
    run_task(ctx, &node, qemu_worker("qmreboot", vmid, QemuOp::Reboot))
}

/// `POST .../status/reset`.
fn vm_reset(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let skiplock = root_only(ctx, "skiplock")?;
    must_run(ctx, &node, vmid, false)?;
    run_task(
        ctx,
        &node,
        qemu_worker("qmreset", vmid, QemuOp::Reset { skiplock }),
    )
}

/// `POST .../status/suspend`: `qmpause`, or `qmsuspend` with `todisk`.
fn vm_suspend(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let skiplock = root_only(ctx, "skiplock")?;
    let todisk = ctx.params.bool("todisk")?.unwrap_or(false);
    must_run(ctx, &node, vmid, false)?;
    let statestorage = if todisk {
        let given = ctx.params.str("statestorage");
        Some(ctx.with(|c| {
            let vm = c.vm(&node, vmid)?;
            if vm.config().keys().any(|k| k.starts_with("hostpci")) {
                return Err(Error::failed(
                    "cannot suspend VM to disk due to passed-through PCI device(s), which lack the possibility to save/restore their internal state",
                ));
            }
            Ok::<_, Error>(given.unwrap_or_else(|| find_vmstate_storage(vm.config())))
        })?)
    } else {
        None
    };
    let kind = if todisk { "qmsuspend" } else { "qmpause" };
    run_task(
        ctx,
        &node,
        qemu_worker(
            kind,
            vmid,
            QemuOp::Suspend {
                skiplock,
                todisk: statestorage,
            },
        ),
    )
}

/// `find_vmstate_storage`: `vmstatestorage`, else the storage of the
/// first disk, else `local`.
fn find_vmstate_storage(conf: &BTreeMap<String, String>) -> String {
    if let Some(s) = conf.get("vmstatestorage") {
        return s.clone();
    }
    conf.iter()
        .filter(|(k, v)| qemu::is_drive_key(k) && !v.contains("media=cdrom"))
        .find_map(|(_, v)| {
            qemu::drive_file(v)
                .split_once(':')
                .map(|(s, _)| s.to_string())
        })
        .unwrap_or_else(|| "local".into())
}

/// `POST .../status/resume`.
fn vm_resume(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let skiplock = root_only(ctx, "skiplock")?;
    ctx.with(|c| {
        let vm = c.vm(&node, vmid)?;
        if vm.lock() != Some("suspended") && !vm.running() {
            return Err(Error::conflict(format!("VM {vmid} not running")));
        }
        Ok(())
    })?;
    run_task(
        ctx,
        &node,
        qemu_worker("qmresume", vmid, QemuOp::Resume { skiplock }),
    )
}

/// `DELETE /nodes/{node}/qemu/{vmid}`.
fn destroy_vm(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let skiplock = root_only(ctx, "skiplock")?;
    let purge = ctx.params.bool("purge")?.unwrap_or(false);
    let unreferenced = ctx
        .params
        .bool("destroy-unreferenced-disks")?
        .unwrap_or(false);
    ctx.with(|c| {
        let vm = c.vm(&node, vmid)?;
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
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
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
    };
    let who = ctx.who()?.to_string();
    let now_ms = ctx.now_ms();
    let ms = ctx.task_ms("qmclone");
    let upid = ctx.with(|c| {
        let worker = c.clone_vm(req, &mut ctx.rq())?;
        Ok::<_, Error>(c.start_task(&node, worker, &who, now_ms, ms))
    })?;
    Ok(json!(upid).into())
}

/// `POST .../template`: a `qmtemplate` task.
fn template(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let disk = ctx.params.str("disk");
    ctx.with(|c| c.check_template(&node, vmid, disk.as_deref()))?;
    run_task(
        ctx,
        &node,
        qemu_worker("qmtemplate", vmid, QemuOp::Template { disk }),
    )
}

/// `GET .../snapshot`.
fn snapshot_list(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    Ok(ctx.with(|c| c.snapshot_list(&node, vmid))?.into())
}

/// Starts a task whose worker the model prepared.
fn start_prepared(
    ctx: &Ctx<'_>,
    node: &str,
    prepare: impl FnOnce(&mut crate::model::Cluster) -> Result<Worker>,
) -> Result<Reply> {
    let who = ctx.who()?.to_string();
    let now_ms = ctx.now_ms();
    let upid = ctx.with(|c| {
        let worker = prepare(c)?;
        let ms = ctx.task_ms(&worker.kind);
        Ok::<_, Error>(c.start_task(node, worker, &who, now_ms, ms))
    })?;
    Ok(json!(upid).into())
}

/// `POST .../snapshot`: a `qmsnapshot` task.
fn snapshot(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let name = ctx.param("snapname")?;
    let vmstate = ctx.params.bool("vmstate")?.unwrap_or(false);
    let description = ctx.params.str("description");
    let now = ctx.now();
    start_prepared(ctx, &node, |c| {
        c.snapshot_vm(&node, vmid, &name, vmstate, description, now)
    })
}

/// `GET .../snapshot/{snapname}/config`.
fn get_snapshot_config(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let name = ctx.param("snapname")?;
    Ok(ctx.with(|c| c.snapshot_config(&node, vmid, &name))?.into())
}

/// `PUT .../snapshot/{snapname}/config`: the description; answers null.
fn update_snapshot_config(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let name = ctx.param("snapname")?;
    let description = ctx.params.str("description");
    ctx.with(|c| c.update_snapshot(&node, vmid, &name, description))?;
    Ok(Value::Null.into())
}

/// `POST .../snapshot/{snapname}/rollback`: a `qmrollback` task.
fn rollback(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let name = ctx.param("snapname")?;
    let start = ctx.params.bool("start")?.unwrap_or(false);
    if start {
        let who = ctx.who()?.clone();
        let path = format!("/vms/{vmid}");
        if !ctx.with(|c| c.access().has_priv(&who, &path, "VM.PowerMgmt")) {
            return Err(Error::permission(&path, &["VM.PowerMgmt"]));
        }
    }
    start_prepared(ctx, &node, |c| {
        Ok(c.rollback_vm(&node, vmid, &name, start, &mut ctx.rq()))
    })
}

/// `DELETE .../snapshot/{snapname}`: a `qmdelsnapshot` task.
fn delsnapshot(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let name = ctx.param("snapname")?;
    let _force = ctx.params.bool("force")?.unwrap_or(false);
    start_prepared(ctx, &node, |c| Ok(c.delete_snapshot(&node, vmid, &name)))
}

/// `PUT .../resize`: a `resize` task (asynchronous on 8.4 too); every
/// check, the missing disk and shrinking included, happens in the task.
fn resize_vm(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let skiplock = root_only(ctx, "skiplock")?;
    let job = qemu::ResizeJob {
        node: node.clone(),
        disk: ctx.param("disk")?,
        size: ctx.param("size")?,
        skiplock,
        digest: ctx.params.str("digest"),
        who: ctx.who()?.clone(),
    };
    run_task(
        ctx,
        &node,
        qemu_worker("resize", vmid, QemuOp::Resize(Box::new(job))),
    )
}

/// `POST .../move_disk` (`move_vm_disk`): a `qmmove` task, to another
/// storage or (`target-vmid`) to another VM.
fn move_vm_disk(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let storage = ctx.params.str("storage");
    let target = ctx.params.str("target-vmid");
    let storage = match (storage, target) {
        (Some(_), Some(_)) => {
            let msg = "either set 'storage' or 'target-vmid', but not both";
            let mut errors = BTreeMap::new();
            errors.insert("target-vmid".to_string(), msg.to_string());
            errors.insert("storage".to_string(), msg.to_string());
            return Err(Error::Invalid(errors));
        }
        (None, Some(t)) => return reassign_disk(ctx, &node, vmid, &t),
        (None, None) => {
            let msg = "both 'storage' and 'target-vmid' missing, either needs to be set";
            let mut errors = BTreeMap::new();
            errors.insert("target-vmid".to_string(), msg.to_string());
            errors.insert("storage".to_string(), msg.to_string());
            return Err(Error::Invalid(errors));
        }
        (Some(s), None) => s,
    };
    let who = ctx.who()?.clone();
    let path = format!("/storage/{storage}");
    if !ctx.with(|c| c.access().has_priv(&who, &path, "Datastore.AllocateSpace")) {
        return Err(Error::permission(&path, &["Datastore.AllocateSpace"]));
    }
    let job = qemu::MoveJob {
        disk: ctx.param("disk")?,
        storage,
        format: ctx.params.str("format"),
        delete: ctx.params.bool("delete")?.unwrap_or(false),
        digest: ctx.params.str("digest"),
    };
    ctx.with(|c| c.check_move_disk(&node, vmid, &job))?;
    run_task(
        ctx,
        &node,
        qemu_worker("qmmove", vmid, QemuOp::MoveDisk(Box::new(job))),
    )
}

/// `PUT .../unlink`: `update_vm` with `delete=<idlist>`; answers null.
fn unlink(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let version = ctx.state.settings().version;
    let idlist = ctx.param("idlist")?;
    let force = ctx.params.bool("force")?.unwrap_or(false);
    let mut delete = Vec::new();
    for opt in idlist
        .split([',', ';', ' ', '\t', '\n', '\0'])
        .filter(|x| !x.is_empty())
    {
        let opt = if opt == "cdrom" { "ide2" } else { opt };
        if !qemu::option_exists(version, opt) {
            return Err(Error::invalid("delete", format!("unknown option '{opt}'")));
        }
        delete.push(opt.to_string());
    }
    let mut log = format!("update VM {vmid}: -delete {idlist}");
    if force {
        log.push_str(" -force 1");
    }
    let u = ConfigUpdate {
        delete,
        force,
        log,
        ..ConfigUpdate::default()
    };
    apply_update(ctx, &node, vmid, &u)
}

/// `POST .../migrate`: a `qmigrate` task (`lock: migrate` while it runs).
fn migrate_vm(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
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
    };
    let ha = HaRequest::Migrate {
        target: req.target.clone(),
    };
    let now = req.now;
    start_prepared(ctx, &node, |c| {
        c.vm(&req.node, vmid)?;
        match super::ha::divert(c, vmid, &ha, now)? {
            Some(w) => Ok(w),
            None => c.migrate_vm(req),
        }
    })
}

/// `GET .../migrate` (`migrate_vm_precondition`).
fn migrate_vm_precondition(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    Ok(ctx.with(|c| c.migrate_precondition(&node, vmid))?.into())
}

/// `GET .../feature` (`vm_feature`): `{hasFeature, nodes}`.
fn vm_feature(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let feature = ctx.param("feature")?;
    let snapname = ctx.params.str("snapname");
    Ok(ctx
        .with(|c| c.vm_feature(&node, vmid, &feature, snapname.as_deref()))?
        .into())
}

/// `PUT .../sendkey`: the key goes to the VM's monitor; answers null.
fn vm_sendkey(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    root_only(ctx, "skiplock")?;
    ctx.param("key")?;
    ctx.with(|c| c.vm_sendkey(&node, vmid))?;
    Ok(Value::Null.into())
}

/// `GET .../cloudinit`: cloud-init options with the values the drive
/// still holds.
fn cloudinit_pending(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    Ok(ctx.with(|c| c.cloudinit_pending(&node, vmid))?.into())
}

/// `PUT .../cloudinit`: regenerates the drive; answers null.
fn cloudinit_update(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    ctx.with(|c| c.cloudinit_update(&node, vmid))?;
    Ok(Value::Null.into())
}

/// `GET .../cloudinit/dump`: the generated user, network or meta data;
/// the password is masked for callers without VM.Config.Cloudinit.
fn cloudinit_generated_config_dump(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let kind = ctx.param("type")?;
    let who = ctx.who()?.clone();
    let path = format!("/vms/{vmid}");
    let text = ctx.with(|c| {
        let mask = !c.access().has_priv(&who, &path, "VM.Config.Cloudinit");
        c.cloudinit_dump(&node, vmid, &kind, mask)
    })?;
    Ok(json!(text).into())
}

/// `GET .../rrddata`: the statistics series of a time frame.
fn rrddata(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
    let timeframe = ctx.param("timeframe")?;
    let now_ms = ctx.now_ms();
    Ok(ctx
        .with(|c| c.vm_rrddata(&node, vmid, &timeframe, now_ms))?
        .into())
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
    let node = node_name(ctx)?;
    let vmid = vmid(ctx)?;
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

/// `move_vm_disk` with `target-vmid`: a `qmmove` task whose id is
/// `<vmid>-<disk>><target>-<target-disk>`.
fn reassign_disk(ctx: &Ctx<'_>, node: &str, vmid: u32, target: &str) -> Result<Reply> {
    let who = ctx.who()?.clone();
    let target_vmid: u32 = target
        .parse()
        .map_err(|_| Error::invalid("target-vmid", "invalid format"))?;
    if who.to_string() != "root@pam" {
        let path = format!("/vms/{target_vmid}");
        if !ctx.with(|c| c.access().has_priv(&who, &path, "VM.Config.Disk")) {
            return Err(Error::permission(&path, &["VM.Config.Disk"]));
        }
    }
    if target_vmid == vmid {
        return Err(Error::invalid(
            "target-vmid",
            "must be different than source VMID to reassign disk",
        ));
    }
    let disk = ctx.param("disk")?;
    let job = qemu::ReassignJob {
        node: node.to_string(),
        target_disk: ctx
            .params
            .str("target-disk")
            .unwrap_or_else(|| disk.clone()),
        disk,
        target_vmid,
        digest: ctx.params.str("digest"),
        target_digest: ctx.params.str("target-digest"),
    };
    let volid = ctx.with(|c| c.check_reassign(vmid, &job))?;
    let sid = volid.split(':').next().unwrap_or_default().to_string();
    let path = format!("/storage/{sid}");
    if !ctx.with(|c| c.access().has_priv(&who, &path, "Datastore.AllocateSpace")) {
        return Err(Error::permission(&path, &["Datastore.AllocateSpace"]));
    }
    let id = format!("{vmid}-{}>{target_vmid}-{}", job.disk, job.target_disk);
    let worker = Worker::new("qmmove", &id).effect(TaskEffect::Qemu {
        vmid,
        op: QemuOp::Reassign(Box::new(job)),
    });
    run_task(ctx, node, worker)
}
