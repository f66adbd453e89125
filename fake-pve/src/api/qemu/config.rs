//! `.../config`, `.../pending` and `.../unlink`: a VM's configuration
//! read and changed as `update_vm_api` checks and applies it.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{qemu_worker, root_only, run_task};
use crate::api::{Ctx, Reply};
use crate::model::qemu::{self, ConfigUpdate, QemuOp};
use crate::model::{Error, Result, Worker};

/// `GET .../config`.
pub(super) fn vm_config(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
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
            let vm = c.guests.vm(&node, vmid)?;
            let mut conf = super::view::snapshot_config(c.version, vm.snapshot(&snap)?);
            conf.insert("digest".into(), json!(vm.digest()));
            return Ok(Value::Object(conf).into());
        }
        Ok(super::view::config(&c.guests().config_view(c.version(), &node, vmid, current)?).into())
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
        let old = c.guests.vm(node, vmid)?.config().get("tags").cloned();
        let new = if deleting {
            Some("")
        } else {
            u.set.get("tags").map(String::as_str)
        };
        crate::model::access::tags::assert_tag_permissions(
            &c.access,
            &c.guests,
            &who,
            vmid,
            old.as_deref(),
            new,
        )
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
        let current = c.guests.vm(node, vmid)?.config().clone();
        c.perms().check_update_vm_perm(
            &who,
            vmid,
            &current,
            &u.set,
            &u.delete,
            storage.as_deref(),
        )?;
        Ok(c.perms()
            .check_update_vm_values_perm(&who, vmid, &current, &u.set, &u.delete))
    })
}

/// `PUT .../config`: synchronous, answers null.
pub(super) fn update_vm(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let u = parse_update(ctx, vmid)?;
    check_update_perm(ctx, &node, vmid, &u)??;
    check_tags(ctx, &node, vmid, &u)?;
    apply_update(ctx, &node, vmid, &u)
}

/// Checks and applies a config update at once; answers null.
fn apply_update(ctx: &Ctx<'_>, node: &str, vmid: u32, u: &ConfigUpdate) -> Result<Reply> {
    let now = ctx.now();
    ctx.with(|c| {
        c.guests.vm(node, vmid)?;
        c.vm_ops().check_update(node, vmid, u)?;
        c.vm_ops()
            .update_config(node, vmid, u, now)
            .map_err(|(_, e)| e)
    })?;
    Ok(Value::Null.into())
}

/// `POST .../config`: a `qmconfig` task.
pub(super) fn update_vm_async(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let u = parse_update(ctx, vmid)?;
    let in_task = check_update_perm(ctx, &node, vmid, &u)?;
    check_tags(ctx, &node, vmid, &u)?;
    ctx.with(|c| c.vm_ops().check_update(&node, vmid, &u))?;
    let worker = match in_task {
        Ok(()) => qemu_worker("qmconfig", vmid, QemuOp::Config(u)),
        Err(e) => Worker::new("qmconfig", &vmid.to_string()).fail(e.to_string()),
    };
    run_task(ctx, &node, worker)
}

/// `GET .../pending`.
pub(super) fn vm_pending(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    Ok(ctx
        .with(|c| {
            c.guests()
                .pending_view(c.version(), &node, vmid)
                .map(|v| super::view::pending(&v))
        })?
        .into())
}

/// `PUT .../unlink`: `update_vm` with `delete=<idlist>`; answers null.
pub(super) fn unlink(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
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
