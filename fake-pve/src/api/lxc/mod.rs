//! `/nodes/{node}/lxc`: containers, their config and pending changes,
//! power state, snapshots, templates and clones, volumes, migration, and
//! the appliance index `/nodes/{node}/aplinfo` (pve-container
//! `API2/LXC.pm`, `API2/LXC/Config.pm`, `API2/LXC/Status.pm`,
//! `API2/LXC/Snapshot.pm`; pve-manager `API2/Nodes.pm`).
//!
//! The schema has checked permissions, types and formats before a
//! handler runs; handlers make PVE's own checks and call the model.

use serde_json::{Value, json};

pub(crate) mod view;

use super::{Ctx, Reply, Route, delete, get, post, put};
use crate::api::guest::view::snapshot_list as snapshot_view;
use crate::model::ha::HaRequest;
use crate::model::lxc::power::PowerCall;
use crate::model::lxc::status::{ct_rrddata, ct_status};
use crate::model::lxc::{
    CtCloneRequest, CtCreateRequest, CtMigrateJob, CtMoveRequest, CtReassignRequest,
    CtRestoreRequest, CtUpdate, schema,
};
use crate::model::storage::ops::Feature;
use crate::model::{Error, Result};

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/nodes/{node}/lxc", vmlist),
        post("/nodes/{node}/lxc", create_vm),
        get("/nodes/{node}/lxc/{vmid}", vmdiridx),
        delete("/nodes/{node}/lxc/{vmid}", destroy_vm),
        get("/nodes/{node}/lxc/{vmid}/config", vm_config),
        put("/nodes/{node}/lxc/{vmid}/config", update_vm),
        get("/nodes/{node}/lxc/{vmid}/pending", vm_pending),
        get("/nodes/{node}/lxc/{vmid}/status/current", vm_status),
        post("/nodes/{node}/lxc/{vmid}/status/start", vm_start),
        post("/nodes/{node}/lxc/{vmid}/status/stop", vm_stop),
        post("/nodes/{node}/lxc/{vmid}/status/shutdown", vm_shutdown),
        post("/nodes/{node}/lxc/{vmid}/status/reboot", vm_reboot),
        post("/nodes/{node}/lxc/{vmid}/status/suspend", vm_suspend),
        post("/nodes/{node}/lxc/{vmid}/status/resume", vm_resume),
        get("/nodes/{node}/lxc/{vmid}/snapshot", list),
        post("/nodes/{node}/lxc/{vmid}/snapshot", snapshot),
        get(
            "/nodes/{node}/lxc/{vmid}/snapshot/{snapname}/config",
            get_snapshot_config,
        ),
        put(
            "/nodes/{node}/lxc/{vmid}/snapshot/{snapname}/config",
            update_snapshot_config,
        ),
        post(
            "/nodes/{node}/lxc/{vmid}/snapshot/{snapname}/rollback",
            rollback,
        ),
        delete("/nodes/{node}/lxc/{vmid}/snapshot/{snapname}", delsnapshot),
        post("/nodes/{node}/lxc/{vmid}/template", template),
        post("/nodes/{node}/lxc/{vmid}/clone", clone_vm),
        put("/nodes/{node}/lxc/{vmid}/resize", resize_vm),
        post("/nodes/{node}/lxc/{vmid}/move_volume", move_volume),
        get("/nodes/{node}/lxc/{vmid}/migrate", migrate_vm_precondition),
        post("/nodes/{node}/lxc/{vmid}/migrate", migrate_vm),
        get("/nodes/{node}/lxc/{vmid}/feature", vm_feature),
        get("/nodes/{node}/lxc/{vmid}/interfaces", ip),
        get("/nodes/{node}/lxc/{vmid}/rrddata", rrddata),
        get("/nodes/{node}/lxc/{vmid}/rrd", rrd),
        get("/nodes/{node}/aplinfo", aplinfo),
        post("/nodes/{node}/aplinfo", apl_download),
    ]
}

fn is_root(ctx: &Ctx<'_>) -> Result<bool> {
    Ok(ctx.who()?.to_string() == "root@pam")
}

/// `raise_param_exc({ <param> => "Only root may use this option." })`.
fn root_only(ctx: &Ctx<'_>, param: &str) -> Result<bool> {
    let set = ctx.params.bool(param)?.unwrap_or(false);
    if set && !is_root(ctx)? {
        return Err(Error::invalid(param, "Only root may use this option."));
    }
    Ok(set)
}

/// `GET /nodes/{node}/lxc`: the containers the caller may audit.
fn vmlist(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let who = ctx.who()?.clone();
    let now_ms = ctx.now_ms();
    let items = ctx.with(|c| {
        c.guests
            .cts_on(&node)
            .filter(|ct| {
                c.access()
                    .has_priv(&who, &format!("/vms/{}", ct.vmid()), "VM.Audit")
            })
            .map(|ct| view::status(&ct_status(ct, &c.nodes, &c.ha, c.version, now_ms, false)))
            .collect::<Vec<_>>()
    });
    Ok(Value::Array(items).into())
}

/// `POST /nodes/{node}/lxc`.
fn create_vm(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    if ctx.params.bool("restore")?.unwrap_or(false) {
        return restore_ct(ctx, &node, vmid);
    }
    let pool = ctx.params.str("pool");
    let who = ctx.who()?.clone();
    let version = ctx.state.settings().version;
    let unprivileged = ctx.params.bool("unprivileged")?;
    let ha_managed = ctx.params.bool("ha-managed")?.unwrap_or(false);
    let ostemplate = ctx.param("ostemplate")?;
    ctx.with(|c| {
        // A privileged container needs Sys.Modify on / since pve-container
        // of the 9.x line (8.4's schema and handler ask for no such thing).
        if version.is_v9() && !unprivileged.unwrap_or(true) {
            c.access().check_perm(&who, "/", &["Sys.Modify"])?;
        }
        if ha_managed {
            c.access().check_perm(&who, "/", &["Sys.Console"])?;
        }
        if let Some(p) = &pool {
            c.access().check_pool_exist(p)?;
        }
        let allocate = c
            .access()
            .has_priv(&who, &format!("/vms/{vmid}"), "VM.Allocate")
            || pool.as_ref().is_some_and(|p| {
                c.access()
                    .has_priv(&who, &format!("/pool/{p}"), "VM.Allocate")
            });
        if !allocate {
            return Err(Error::Forbidden("Permission check failed".into()));
        }
        Ok::<_, Error>(())
    })?;
    let storage = ctx.params.str("storage");
    let config: std::collections::BTreeMap<String, String> = ctx
        .params
        .names()
        .filter(|k| !schema::CREATE_ONLY.contains(k))
        .filter_map(|k| Some((k.to_string(), ctx.params.str(k)?)))
        .collect();
    // Datastore.AllocateSpace on each storage a volume is made on.
    let mut sids: Vec<String> = ctx
        .params
        .names()
        .filter(|k| schema::is_mount_key(k))
        .filter_map(|k| ctx.params.str(k))
        .filter_map(|v| {
            let vol = schema::mp_volume(&v)?.to_string();
            Some(match vol.split_once(':') {
                Some((s, _)) => s.to_string(),
                None => storage.clone().unwrap_or_else(|| "local".into()),
            })
        })
        .collect();
    if !ctx.params.names().any(|k| k == "rootfs") {
        sids.push(storage.clone().unwrap_or_else(|| "local".into()));
    }
    ctx.with(|c| {
        c.perms().check_ct_config_perm_in_pool(
            &who,
            vmid,
            pool.as_deref(),
            None,
            &config,
            &[],
            unprivileged.unwrap_or(version.is_v9()),
        )?;
        if ostemplate != "-" {
            crate::model::guest_perm::check_volume_access(
                &c.access,
                &c.storage,
                &who,
                Some(vmid),
                &ostemplate,
                Some("vztmpl"),
            )?;
        }
        sids.iter().try_for_each(|s| {
            c.access()
                .check_perm(&who, &format!("/storage/{s}"), &["Datastore.AllocateSpace"])
        })
    })?;
    let start = ctx.params.bool("start")?.unwrap_or(false);
    let start = start.then(|| (who.to_string(), ctx.task_ms("vzstart")));
    let req = CtCreateRequest {
        vmid,
        node: node.clone(),
        ostemplate,
        storage,
        config,
        unprivileged,
        is_root: is_root(ctx)?,
        start,
        pool,
    };
    start_create(ctx, &node, req)
}

/// `POST /nodes/{node}/lxc` with `restore=1`: the `vzrestore` task.
fn restore_ct(ctx: &Ctx<'_>, node: &str, vmid: u32) -> Result<Reply> {
    let who = ctx.who()?.clone();
    let force = ctx.params.bool("force")?.unwrap_or(false);
    let unprivileged = ctx.params.bool("unprivileged")?;
    let pool = ctx.params.str("pool");
    let archive = ctx.param("ostemplate")?;
    let storage = ctx.params.str("storage");
    let config: std::collections::BTreeMap<String, String> = ctx
        .params
        .names()
        .filter(|k| !schema::CREATE_ONLY.contains(k))
        .filter_map(|k| Some((k.to_string(), ctx.params.str(k)?)))
        .collect();
    let mut sids: Vec<String> = config
        .iter()
        .filter(|(k, _)| schema::is_mount_key(k))
        .filter_map(|(_, v)| {
            let vol = schema::mp_volume(v)?.to_string();
            if vol.starts_with('/') {
                return None;
            }
            Some(match vol.split_once(':') {
                Some((s, _)) => s.to_string(),
                None => storage.clone().unwrap_or_else(|| "local".into()),
            })
        })
        .collect();
    if !config.contains_key("rootfs") {
        sids.push(storage.clone().unwrap_or_else(|| "local".into()));
    }
    let ha_managed = ctx.params.bool("ha-managed")?.unwrap_or(false);
    let sys_modify = ctx.with(|c| {
        if ha_managed {
            c.access().check_perm(&who, "/", &["Sys.Console"])?;
        }
        if let Some(p) = &pool {
            c.access().check_pool_exist(p)?;
        }
        let access = c.access();
        let same = c
            .guests()
            .ct_by_id(vmid)
            .is_some_and(|ct| ct.node() == node);
        if access.has_priv(&who, &format!("/vms/{vmid}"), "VM.Allocate")
            || pool
                .as_ref()
                .is_some_and(|p| access.has_priv(&who, &format!("/pool/{p}"), "VM.Allocate"))
        {
            // OK
        } else if force && same && access.has_priv(&who, &format!("/vms/{vmid}"), "VM.Backup") {
            let was_unprivileged = c
                .guests()
                .ct_by_id(vmid)
                .is_some_and(|ct| ct.config().get("unprivileged").is_some_and(|u| u == "1"));
            if was_unprivileged && unprivileged == Some(false) {
                access.check_perm(&who, "/", &["Sys.Modify"])?;
            }
        } else {
            return Err(Error::Forbidden("Permission check failed".into()));
        }
        c.perms().check_ct_config_perm_in_pool(
            &who,
            vmid,
            pool.as_deref(),
            None,
            &config,
            &[],
            unprivileged.unwrap_or(false),
        )?;
        // check_volume_access on the archive, as content `backup`.
        if archive != "-" {
            crate::model::guest_perm::check_volume_access(
                &c.access,
                &c.storage,
                &who,
                Some(vmid),
                &archive,
                Some("backup"),
            )?;
        }
        for s in &sids {
            access.check_perm(&who, &format!("/storage/{s}"), &["Datastore.AllocateSpace"])?;
        }
        Ok::<_, Error>(access.has_priv(&who, "/", "Sys.Modify"))
    })?;
    let start = ctx
        .params
        .bool("start")?
        .unwrap_or(false)
        .then(|| (who.to_string(), ctx.task_ms("vzstart")));
    let req = CtRestoreRequest {
        vmid,
        node: node.to_string(),
        archive,
        force,
        unique: ctx.params.bool("unique")?.unwrap_or(false),
        storage,
        config,
        unprivileged,
        is_root: is_root(ctx)?,
        sys_modify,
        pool,
        start,
    };
    let now_ms = ctx.now_ms();
    let ms = ctx.task_ms("vzrestore");
    let upid = ctx.with(|c| {
        let worker = c.ct_ops().restore_ct(req, &mut ctx.rq())?;
        Ok::<_, Error>(c.start_task(node, worker, &who.to_string(), now_ms, ms))
    })?;
    Ok(json!(upid).into())
}

fn start_create(ctx: &Ctx<'_>, node: &str, req: CtCreateRequest) -> Result<Reply> {
    let who = ctx.who()?.to_string();
    let now_ms = ctx.now_ms();
    let ms = ctx.task_ms("vzcreate");
    let upid = ctx.with(|c| {
        let worker = c.ct_ops().create_ct(req, &mut ctx.rq())?;
        Ok::<_, Error>(c.start_task(node, worker, &who, now_ms, ms))
    })?;
    Ok(json!(upid).into())
}

/// `GET /nodes/{node}/lxc/{vmid}`: the index, once the config loads (a
/// missing container answers as a missing config does).
fn vmdiridx(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    ctx.with(|c| c.guests.ct(&node, vmid).map(|_| ()))?;
    let subdirs = [
        "config",
        "pending",
        "status",
        "vncproxy",
        "termproxy",
        "vncwebsocket",
        "spiceproxy",
        "migrate",
        "clone",
        "rrd",
        "rrddata",
        "firewall",
        "snapshot",
        "resize",
        "interfaces",
    ];
    Ok(Value::Array(subdirs.iter().map(|s| json!({ "subdir": s })).collect()).into())
}

/// `DELETE /nodes/{node}/lxc/{vmid}`.
fn destroy_vm(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let purge = ctx.params.bool("purge")?.unwrap_or(false);
    let force = ctx.params.bool("force")?.unwrap_or(false);
    let unreferenced = ctx
        .params
        .bool("destroy-unreferenced-disks")?
        .unwrap_or(false);
    super::start_prepared(ctx, &node, |c| {
        let worker = c
            .guests
            .destroy_ct(&node, vmid, purge, unreferenced, force)?;
        super::ha::destroy_guest(c, vmid, purge)?;
        Ok(worker)
    })
}

/// `GET .../config`.
fn vm_config(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let current = ctx.params.bool("current")?.unwrap_or(false);
    let snapshot = ctx.params.str("snapshot").filter(|s| !s.is_empty());
    if snapshot.is_some() && current {
        let msg = "cannot use 'snapshot' parameter with 'current'";
        let mut errors = std::collections::BTreeMap::new();
        errors.insert("snapshot".to_string(), msg.to_string());
        errors.insert("current".to_string(), msg.to_string());
        return Err(Error::Invalid(errors));
    }
    ctx.with(|c| {
        let ct = c.guests.ct(&node, vmid)?;
        let digest = ct.digest();
        Ok(match snapshot {
            Some(s) => view::config(c.version, ct.snapshot(&s)?, &digest),
            None if current => view::config(c.version, ct.config(), &digest),
            None => view::config(c.version, &ct.effective(), &digest),
        }
        .into())
    })
}

/// `PUT .../config`: synchronous, answers null.
fn update_vm(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let split = |s: Option<String>| -> Vec<String> {
        s.unwrap_or_default()
            .split([',', ';', ' ', '\t', '\n', '\0'])
            .filter(|x| !x.is_empty())
            .map(str::to_string)
            .collect()
    };
    let set = ctx
        .params
        .names()
        .filter(|k| !matches!(*k, "node" | "vmid" | "digest" | "delete" | "revert"))
        .filter_map(|k| Some((k.to_string(), ctx.params.str(k)?)))
        .collect();
    let u = CtUpdate {
        set,
        delete: split(ctx.params.str("delete")),
        revert: split(ctx.params.str("revert")),
        digest: ctx.params.str("digest"),
    };
    let who = ctx.who()?.clone();
    ctx.with(|c| {
        let ct = c.guests.ct(&node, vmid)?;
        let old = ct.config().clone();
        let unprivileged = old.get("unprivileged").is_some_and(|u| u == "1");
        let removed: Vec<String> = u.delete.iter().chain(&u.revert).cloned().collect();
        c.perms().check_ct_modify_config_perm(
            &who,
            vmid,
            Some(&old),
            &u.set,
            &removed,
            unprivileged,
        )?;
        c.ct_ops().update_ct_config(&node, vmid, &u, &mut ctx.rq())
    })?;
    Ok(Value::Null.into())
}

/// `GET .../pending`.
fn vm_pending(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    ctx.with(|c| Ok(view::pending(c.version, c.guests.ct(&node, vmid)?).into()))
}

/// `GET .../status/current`.
fn vm_status(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let now_ms = ctx.now_ms();
    ctx.with(|c| {
        let ct = c.guests.ct(&node, vmid)?;
        Ok(view::status(&ct_status(ct, &c.nodes, &c.ha, c.version, now_ms, true)).into())
    })
}

fn power(ctx: &Ctx<'_>, call: PowerCall) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let overrule = ctx.params.bool("overrule-shutdown")?.unwrap_or(false);
    let now = ctx.now();
    super::start_prepared(ctx, &node, |c| {
        let worker = c.guests.ct_power(&node, vmid, call)?;
        let ha = match call {
            PowerCall::Start { .. } => HaRequest::Start,
            PowerCall::Stop { .. } => {
                super::ha::overrule_refused(c, vmid, overrule)?;
                HaRequest::Stop { timeout: 0 }
            }
            PowerCall::Shutdown { timeout, .. } => HaRequest::Stop { timeout },
            _ => return Ok(worker),
        };
        Ok(super::ha::divert(c, vmid, &ha, now)?.unwrap_or(worker))
    })
}

/// `POST .../status/start`.
fn vm_start(ctx: &Ctx<'_>) -> Result<Reply> {
    let skiplock = root_only(ctx, "skiplock")?;
    power(ctx, PowerCall::Start { skiplock })
}

/// `POST .../status/stop`.
fn vm_stop(ctx: &Ctx<'_>) -> Result<Reply> {
    let skiplock = root_only(ctx, "skiplock")?;
    power(ctx, PowerCall::Stop { skiplock })
}

/// `POST .../status/shutdown`.
fn vm_shutdown(ctx: &Ctx<'_>) -> Result<Reply> {
    let force_stop = ctx.params.bool("forceStop")?.unwrap_or(false);
    let timeout = ctx.params.int("timeout", Some(0), None)?.unwrap_or(60);
    power(
        ctx,
        PowerCall::Shutdown {
            timeout: u64::try_from(timeout).unwrap_or(60),
            force_stop,
        },
    )
}

/// `POST .../status/reboot`.
fn vm_reboot(ctx: &Ctx<'_>) -> Result<Reply> {
    power(ctx, PowerCall::Reboot)
}

/// `POST .../status/suspend`.
fn vm_suspend(ctx: &Ctx<'_>) -> Result<Reply> {
    power(ctx, PowerCall::Suspend)
}

/// `POST .../status/resume`.
fn vm_resume(ctx: &Ctx<'_>) -> Result<Reply> {
    power(ctx, PowerCall::Resume)
}

/// `GET .../snapshot`.
fn list(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    Ok(ctx
        .with(|c| Ok::<_, Error>(snapshot_view(&c.guests.ct(&node, vmid)?.snapshot_list())))?
        .into())
}

/// `POST .../snapshot`.
fn snapshot(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let name = ctx.param("snapname")?;
    let description = ctx.params.str("description");
    let now = ctx.now();
    super::start_prepared(ctx, &node, |c| {
        c.snapshots()
            .snapshot_ct(&node, vmid, &name, description, now)
    })
}

/// `GET .../snapshot/{snapname}/config`.
fn get_snapshot_config(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let name = ctx.param("snapname")?;
    ctx.with(|c| {
        let ct = c.guests.ct(&node, vmid)?;
        Ok(view::config(c.version, ct.snapshot(&name)?, &ct.digest()).into())
    })
}

/// `PUT .../snapshot/{snapname}/config`.
fn update_snapshot_config(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let name = ctx.param("snapname")?;
    let description = ctx.params.str("description");
    ctx.with(|c| {
        c.snapshots()
            .update_ct_snapshot(&node, vmid, &name, description)
    })?;
    Ok(Value::Null.into())
}

/// `POST .../snapshot/{snapname}/rollback`.
fn rollback(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let name = ctx.param("snapname")?;
    let start_after = ctx.params.bool("start")?.unwrap_or(false);
    super::start_prepared(ctx, &node, |c| {
        c.snapshots().rollback_ct(&node, vmid, &name, start_after)
    })
}

/// `DELETE .../snapshot/{snapname}`.
fn delsnapshot(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let name = ctx.param("snapname")?;
    let force = ctx.params.bool("force")?.unwrap_or(false);
    super::start_prepared(ctx, &node, |c| {
        c.snapshots().delete_ct_snapshot(&node, vmid, &name, force)
    })
}

/// `POST .../template`: forks a `vztemplate` task but, as PVE does,
/// answers null.
fn template(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    super::start_prepared(ctx, &node, |c| c.ct_ops().template_ct(&node, vmid))?;
    Ok(Value::Null.into())
}

/// `POST .../clone`.
fn clone_vm(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    if let Some(pool) = ctx.params.str("pool") {
        return Err(Error::not_found(format!("pool '{pool}' does not exist")));
    }
    let newid = ctx
        .params
        .int("newid", Some(100), Some(999_999_999))?
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| super::params::missing("newid"))?;
    let who = ctx.who()?.clone();
    let snapname = ctx.params.str("snapname");
    let storage = ctx.params.str("storage");
    ctx.with(|c| {
        c.access()
            .check_perm(&who, &format!("/vms/{newid}"), &["VM.Allocate"])?;
        // The config cloned, when there is one to clone: the clone's own
        // checks refuse the rest.
        let conf = c.guests().ct_by_id(vmid).and_then(|ct| match &snapname {
            Some(s) => ct.snapshots().get(s),
            None => Some(ct.config()),
        });
        match conf {
            Some(conf) => c
                .perms()
                .check_ct_clone_perm(&who, conf, storage.as_deref()),
            None => Ok(()),
        }
    })?;
    let req = CtCloneRequest {
        newid,
        target: ctx.params.str("target"),
        storage,
        full: ctx.params.bool("full")?,
        snapname,
        hostname: ctx.params.str("hostname"),
        description: ctx.params.str("description"),
    };
    super::start_prepared(ctx, &node, |c| {
        c.ct_ops().clone_ct(&node, vmid, req, &mut ctx.rq())
    })
}

/// `PUT .../resize`: a `resize` task.
fn resize_vm(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let disk = ctx.param("disk")?;
    let size = ctx.param("size")?;
    let digest = ctx.params.str("digest");
    super::start_prepared(ctx, &node, |c| {
        c.ct_ops()
            .resize_ct(&node, vmid, &disk, &size, digest.as_deref())
    })
}

/// `POST .../move_volume`.
fn move_volume(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let storage = ctx.params.str("storage");
    let target = ctx.params.str("target-vmid");
    match (storage, target) {
        (Some(_), Some(_)) => Err(Error::failed(
            "either set storage or target-vmid, but not both",
        )),
        (None, None) => {
            let msg = "both 'storage' and 'target-vmid' missing, either needs to be set";
            let mut e = std::collections::BTreeMap::new();
            e.insert("target-vmid".to_string(), msg.to_string());
            e.insert("storage".to_string(), msg.to_string());
            Err(Error::Invalid(e))
        }
        (None, Some(target)) => {
            let target_vmid = target.parse::<u32>().map_err(|_| {
                Error::invalid(
                    "target-vmid",
                    format!("value '{target}' does not look like a valid VM ID"),
                )
            })?;
            let who = ctx.who()?.clone();
            let req = CtReassignRequest {
                volume: ctx.param("volume")?,
                target_vmid,
                target_volume: ctx.params.str("target-volume"),
                digest: ctx.params.str("digest"),
                target_digest: ctx.params.str("target-digest"),
            };
            ctx.with(|c| {
                if !is_root(ctx)? {
                    c.access().check_perm(
                        &who,
                        &format!("/vms/{target_vmid}"),
                        &["VM.Config.Disk"],
                    )?;
                }
                let sid = c.ct_ops().ct_reassign_storage(&node, vmid, &req)?;
                c.access().check_perm(
                    &who,
                    &format!("/storage/{sid}"),
                    &["Datastore.AllocateSpace"],
                )
            })?;
            super::start_prepared(ctx, &node, |c| {
                c.ct_ops().reassign_ct_volume(&node, vmid, req)
            })
        }
        (Some(storage), None) => {
            let who = ctx.who()?.clone();
            ctx.with(|c| {
                c.access().check_perm(
                    &who,
                    &format!("/storage/{storage}"),
                    &["Datastore.AllocateSpace"],
                )
            })?;
            let req = CtMoveRequest {
                volume: ctx.param("volume")?,
                storage,
                delete: ctx.params.bool("delete")?.unwrap_or(false),
                digest: ctx.params.str("digest"),
            };
            super::start_prepared(ctx, &node, |c| c.ct_ops().move_ct_volume(&node, vmid, req))
        }
    }
}

/// `GET .../migrate` (9.x).
fn migrate_vm_precondition(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    ctx.with(|c| {
        let (running, allowed) = c.ct_ops().ct_migrate_precondition(&node, vmid)?;
        Ok(json!({
            "running": running,
            "allowed-nodes": allowed,
            "not-allowed-nodes": {},
        })
        .into())
    })
}

/// `POST .../migrate`.
fn migrate_vm(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let job = CtMigrateJob {
        target: ctx.param("target")?,
        restart: ctx.params.bool("restart")?.unwrap_or(false),
        timeout: u64::try_from(ctx.params.int("timeout", Some(0), None)?.unwrap_or(180))
            .unwrap_or(180),
        online: ctx.params.bool("online")?.unwrap_or(false),
        target_storage: ctx.params.str("target-storage"),
    };
    let ha = HaRequest::Migrate {
        target: job.target.clone(),
    };
    let now = ctx.now();
    super::start_prepared(ctx, &node, |c| {
        c.guests.ct(&node, vmid)?;
        match super::ha::divert(c, vmid, &ha, now)? {
            Some(w) => Ok(w),
            None => c.ct_ops().migrate_ct(&node, vmid, job),
        }
    })
}

/// `GET .../feature`: whether every mount point's storage offers it.
fn vm_feature(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let feature = match ctx.param("feature")?.as_str() {
        "snapshot" => Feature::Snapshot,
        "clone" => Feature::Clone,
        _ => Feature::Copy,
    };
    let snapname = ctx.params.str("snapname");
    ctx.with(|c| {
        let ct = c.guests.ct(&node, vmid)?;
        let conf = match &snapname {
            Some(s) => ct
                .snapshots()
                .get(s)
                .ok_or_else(|| Error::failed(format!("snapshot '{s}' does not exist")))?,
            None => ct.config(),
        };
        let has = conf
            .iter()
            .filter(|(k, _)| schema::is_mount_key(k))
            .filter_map(|(_, v)| schema::mp_volume(v))
            .all(|vol| {
                schema::is_storage_volume(vol)
                    && c.storages().volume_has_feature(
                        feature,
                        vol,
                        snapname.is_some(),
                        c.version().is_v9(),
                    )
            });
        Ok(json!({ "hasFeature": u8::from(has) }).into())
    })
}

/// `GET .../interfaces`.
fn ip(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    Ok(ctx
        .with(|c| c.guests.ct_interfaces(&node, vmid))
        .map(|r| view::interfaces(r.as_ref()))?
        .into())
}

/// `GET .../rrddata`.
fn rrddata(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let timeframe = ctx.param("timeframe")?;
    let now_ms = ctx.now_ms();
    ctx.with(|c| {
        let ct = c.guests.ct(&node, vmid)?;
        let points = ct_rrddata(ct, &c.nodes, c.version, &timeframe, now_ms);
        Ok(crate::api::guest::view::rrddata(&points).into())
    })
}

/// `GET .../rrd`: the graph's file name and a PNG, as for VMs.
fn rrd(ctx: &Ctx<'_>) -> Result<Reply> {
    let vmid = ctx.vmid()?;
    let v9 = ctx.with(|c| c.version().is_v9());
    let rrdname = if v9 {
        format!("pve-vm-9.0/{vmid}")
    } else {
        format!("pve2-vm/{vmid}")
    };
    let file = format!("/var/lib/rrdcached/db/{rrdname}");
    if !ctx.with(|c| c.guests().ct_by_id(vmid).is_some()) {
        return Err(Error::failed(format!(
            "RRD error: opening '{file}': No such file or directory"
        )));
    }
    super::qemu::rrd_graph(ctx, &file)
}

/// `GET /nodes/{node}/aplinfo`.
fn aplinfo(ctx: &Ctx<'_>) -> Result<Reply> {
    ctx.node()?;
    Ok(view::aplinfo().into())
}

/// `POST /nodes/{node}/aplinfo`: a `download` task.
fn apl_download(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let storage = ctx.param("storage")?;
    let template = ctx.param("template")?;
    let now = ctx.now();
    super::start_prepared(ctx, &node, |c| {
        crate::model::lxc::aplinfo::apl_download(&c.storage, &node, &storage, &template, now)
    })
}
