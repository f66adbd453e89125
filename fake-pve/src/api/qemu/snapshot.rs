//! `.../snapshot`: a VM's snapshots listed, taken, described, rolled
//! back to and deleted.

use serde_json::Value;

use super::start_prepared;
use crate::api::guest::view::snapshot_list as snapshot_view;
use crate::api::{Ctx, Reply};
use crate::model::{Error, Result};

/// `GET .../snapshot`.
pub(super) fn snapshot_list(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    Ok(ctx
        .with(|c| Ok::<_, Error>(snapshot_view(&c.guests.vm(&node, vmid)?.snapshot_list())))?
        .into())
}

/// `POST .../snapshot`: a `qmsnapshot` task.
pub(super) fn snapshot(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let name = ctx.param("snapname")?;
    let vmstate = ctx.params.bool("vmstate")?.unwrap_or(false);
    let description = ctx.params.str("description");
    let now = ctx.now();
    start_prepared(ctx, &node, |c| {
        c.snapshots()
            .snapshot_vm(&node, vmid, &name, vmstate, description, now)
    })
}

/// `GET .../snapshot/{snapname}/config`.
pub(super) fn get_snapshot_config(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let name = ctx.param("snapname")?;
    ctx.with(|c| {
        let conf = c.guests.vm(&node, vmid)?.snapshot(&name)?;
        Ok(Value::Object(super::view::snapshot_config(c.version, conf)).into())
    })
}

/// `PUT .../snapshot/{snapname}/config`: the description; answers null.
pub(super) fn update_snapshot_config(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let name = ctx.param("snapname")?;
    let description = ctx.params.str("description");
    ctx.with(|c| {
        c.snapshots()
            .update_snapshot(&node, vmid, &name, description)
    })?;
    Ok(Value::Null.into())
}

/// `POST .../snapshot/{snapname}/rollback`: a `qmrollback` task.
pub(super) fn rollback(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
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
        Ok(c.snapshots()
            .rollback_vm(&node, vmid, &name, start, &mut ctx.rq()))
    })
}

/// `DELETE .../snapshot/{snapname}`: a `qmdelsnapshot` task.
pub(super) fn delsnapshot(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let name = ctx.param("snapname")?;
    let _force = ctx.params.bool("force")?.unwrap_or(false);
    start_prepared(ctx, &node, |c| {
        Ok(c.snapshots().delete_snapshot(&node, vmid, &name))
    })
}
