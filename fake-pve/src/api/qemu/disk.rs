//! `.../resize` and `.../move_disk`: a VM's disks grown, moved to another
//! storage or reassigned to another VM.

use std::collections::BTreeMap;

use super::{qemu_worker, root_only, run_task};
use crate::api::{Ctx, Reply};
use crate::model::qemu::{self, QemuOp};
use crate::model::{Error, Result, TaskEffect, Worker};

/// `PUT .../resize`: a `resize` task (asynchronous on 8.4 too); every
/// check, the missing disk and shrinking included, happens in the task.
pub(super) fn resize_vm(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
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
pub(super) fn move_vm_disk(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
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
        bwlimit: ctx
            .params
            .int("bwlimit", Some(0), None)?
            .and_then(|b| u64::try_from(b).ok()),
        who: Some(who.to_string()),
    };
    ctx.with(|c| c.vm_ops().check_move_disk(&node, vmid, &job))?;
    run_task(
        ctx,
        &node,
        qemu_worker("qmmove", vmid, QemuOp::MoveDisk(Box::new(job))),
    )
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
    let volid = ctx.with(|c| c.vm_ops().check_reassign(vmid, &job))?;
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
