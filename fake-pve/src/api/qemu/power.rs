//! `.../status/*`: a VM's power state read and changed (start, stop,
//! shutdown, reboot, reset, suspend, resume), through HA when it manages
//! the VM.

use std::collections::BTreeMap;

use super::{qemu_worker, root_only, run_task, start_prepared};
use crate::api::{Ctx, RawData, Reply};
use crate::model::ha::HaRequest;
use crate::model::qemu::{self, QemuOp};
use crate::model::{Error, Result};

/// `GET .../status/current`.
pub(super) fn vm_status(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let now_ms = ctx.now_ms();
    let json = ctx.with(|c| -> Result<RawData> {
        let vm = c.guests.vm(&node, vmid)?;
        Ok(RawData::written(1280, |out| {
            crate::api::qemu::status::write_vm_status(
                &c.vm_status_reader(),
                vm,
                now_ms,
                true,
                true,
                out,
            );
        }))
    })?;
    Ok(Reply {
        raw: Some(json),
        ..Reply::default()
    })
}

/// `POST .../status/start`.
pub(super) fn vm_start(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let skiplock = root_only(ctx, "skiplock")?;
    if ctx.params.get("migratedfrom").is_some() && ctx.who()?.to_string() != "root@pam" {
        return Err(Error::invalid(
            "migratedfrom",
            "Only root may use this option.",
        ));
    }
    ctx.with(|c| c.guests.vm(&node, vmid).map(|_| ()))?;
    let now = ctx.now();
    start_prepared(ctx, &node, |c| {
        Ok(crate::api::ha::divert(c, vmid, &HaRequest::Start, now)?
            .unwrap_or_else(|| qemu_worker("qmstart", vmid, QemuOp::Start { skiplock })))
    })
}

/// `POST .../status/stop`.
pub(super) fn vm_stop(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let skiplock = root_only(ctx, "skiplock")?;
    root_only(ctx, "keepActive")?;
    ctx.with(|c| c.guests.vm(&node, vmid).map(|_| ()))?;
    let overrule = ctx.params.bool("overrule-shutdown")?.unwrap_or(false);
    let now = ctx.now();
    let migrating = ctx.params.get("migratedfrom").is_some();
    start_prepared(ctx, &node, |c| {
        if migrating {
            return Ok(qemu_worker("qmstop", vmid, QemuOp::Stop { skiplock }));
        }
        crate::api::ha::overrule_refused(c, vmid, overrule)?;
        Ok(
            crate::api::ha::divert(c, vmid, &HaRequest::Stop { timeout: 0 }, now)?
                .unwrap_or_else(|| qemu_worker("qmstop", vmid, QemuOp::Stop { skiplock })),
        )
    })
}

/// `POST .../status/shutdown`.
pub(super) fn vm_shutdown(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    root_only(ctx, "skiplock")?;
    root_only(ctx, "keepActive")?;
    let force_stop = ctx.params.bool("forceStop")?.unwrap_or(false);
    let timeout = ctx.params.int("timeout", Some(0), None)?.unwrap_or(60);
    let paused = ctx.with(|c| c.guests.vm(&node, vmid).map(|v| v.paused()))?;
    if paused && !force_stop {
        return Err(Error::conflict("VM is paused - cannot shutdown"));
    }
    let timeout = u64::try_from(timeout).unwrap_or(60);
    let now = ctx.now();
    start_prepared(ctx, &node, |c| {
        Ok(
            crate::api::ha::divert(c, vmid, &HaRequest::Stop { timeout }, now)?.unwrap_or_else(
                || {
                    qemu_worker(
                        "qmshutdown",
                        vmid,
                        QemuOp::Shutdown {
                            force_stop,
                            timeout,
                            hard: paused,
                        },
                    )
                },
            ),
        )
    })
}

/// `check_running` for calls that need a running VM.
fn must_run(ctx: &Ctx<'_>, node: &str, vmid: u32, paused_msg: bool) -> Result<()> {
    ctx.with(|c| {
        let vm = c.guests.vm_on_node(node, vmid)?;
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
pub(super) fn vm_reboot(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    must_run(ctx, &node, vmid, true)?;
    run_task(ctx, &node, qemu_worker("qmreboot", vmid, QemuOp::Reboot))
}

/// `POST .../status/reset`.
pub(super) fn vm_reset(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let skiplock = root_only(ctx, "skiplock")?;
    must_run(ctx, &node, vmid, false)?;
    run_task(
        ctx,
        &node,
        qemu_worker("qmreset", vmid, QemuOp::Reset { skiplock }),
    )
}

/// `POST .../status/suspend`: `qmpause`, or `qmsuspend` with `todisk`.
pub(super) fn vm_suspend(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let skiplock = root_only(ctx, "skiplock")?;
    let todisk = ctx.params.bool("todisk")?.unwrap_or(false);
    must_run(ctx, &node, vmid, false)?;
    let statestorage = if todisk {
        let given = ctx.params.str("statestorage");
        Some(ctx.with(|c| {
            let vm = c.guests.vm(&node, vmid)?;
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
pub(super) fn vm_resume(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let skiplock = root_only(ctx, "skiplock")?;
    ctx.with(|c| {
        let vm = c.guests.vm(&node, vmid)?;
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
