//! The calls on many guests: a node's `suspendall` and `migrateall`
//! (`API2/Nodes.pm`) and the cluster's bulk actions (9.x,
//! `API2/Cluster/BulkAction/Guest.pm`). Each answers the UPID of its
//! worker (`suspendall`, `migrateall`, `bulk-start`, `bulk-shutdown`,
//! `bulk-suspend`, `bulk-migrate`), whose log says what it did with each
//! guest; the guests' own tasks (start, shutdown, suspend, migrate) are
//! the API calls PVE's worker makes, made here through the request
//! pipeline as the caller, at the request's instant.
//!
//! `max_workers` (the call's `max-workers`/`maxworkers`, else
//! datacenter.cfg's `max_workers`, else PVE's default) sets how many of
//! the guests' tasks run at once: the worker ends when the last of its
//! waves would have ended (each wave as long as its longest task).

use std::collections::BTreeMap;

use http::Method;
use serde_json::{Value, json};

use super::super::{Ctx, Reply};
use super::execute::call_as_caller;
use crate::model::bulk::{BulkGuest, OrderGroups};
use crate::model::{Error, Result, Worker};

/// What the worker does with one guest.
enum Step {
    /// Nothing: the lines it logs instead.
    Skip(Vec<String>),
    /// The API call it makes (`POST`), after logging `line`.
    Call {
        vmid: u32,
        kind: &'static str,
        line: String,
        path: String,
        args: BTreeMap<String, Value>,
    },
}

/// A bulk worker to run.
struct Bulk {
    /// The task type.
    kind: &'static str,
    /// The lines it starts with.
    header: Vec<String>,
    /// The steps of each group, in order (a group waits for the one
    /// before).
    groups: Vec<Vec<Step>>,
    /// Tasks at once.
    max_workers: usize,
    /// The warning of a guest whose task failed (its type text, VMID and
    /// error), if PVE logs one.
    failed_line: Option<fn(&str, u32, &str) -> String>,
    /// Whether a refused call is logged as a warning (`log_warn`), not
    /// as a plain line (`warn`).
    warn_refusals: bool,
    /// The error the worker dies with when it started no task, if any.
    none_started: Option<&'static str>,
    /// The error the worker dies with when guests failed (the VMIDs
    /// appended), if it does.
    failed_error: Option<&'static str>,
    /// Lines it ends with when it does not die.
    footer: fn(usize) -> Vec<String>,
}

/// The milliseconds left to the task `upid`, and its failure if it has
/// one already.
fn task_left(ctx: &Ctx<'_>, upid: &str, now_ms: i64) -> (i64, Option<String>) {
    ctx.with(|c| match c.tasks().get(upid) {
        Ok(t) => match &t.state {
            crate::model::tasks::TaskState::Running { until_ms } => (
                (until_ms - now_ms).max(0),
                t.worker
                    .as_ref()
                    .and_then(|w| w.outcome.clone().err())
                    .map(|f| f.0),
            ),
            crate::model::tasks::TaskState::Stopped { exitstatus, .. } => {
                let failed = exitstatus != "OK" && !exitstatus.starts_with("WARNINGS");
                (0, failed.then(|| exitstatus.clone()))
            }
        },
        Err(_) => (0, None),
    })
}

/// Runs `bulk` as the caller's task on `node`: its UPID.
fn run(ctx: &Ctx<'_>, node: &str, bulk: Bulk) -> Result<Reply> {
    let now_ms = ctx.now_ms();
    let mut worker = Worker::new(bulk.kind, "");
    for l in bulk.header {
        worker = worker.log(l);
    }
    let (mut failed, mut started, mut total_ms) = (Vec::new(), 0usize, 0i64);
    for group in bulk.groups {
        let mut wave: Vec<i64> = Vec::new();
        for step in group {
            let (vmid, kind, line, path, args) = match step {
                Step::Skip(lines) => {
                    for l in lines {
                        worker = worker.log(l);
                    }
                    continue;
                }
                Step::Call {
                    vmid,
                    kind,
                    line,
                    path,
                    args,
                } => (vmid, kind, line, path, args),
            };
            for l in line.split('\n') {
                worker = worker.log(l);
            }
            match call_as_caller(ctx, Method::POST, &path, args) {
                Ok(reply) => {
                    started += 1;
                    let upid = reply.data.as_str().unwrap_or_default().to_string();
                    let (left, failure) = task_left(ctx, &upid, now_ms);
                    if let Some(err) = failure {
                        failed.push(vmid);
                        if let Some(f) = bulk.failed_line {
                            worker = worker.log(f(kind, vmid, &err));
                        }
                    }
                    wave.push(left);
                    if wave.len() >= bulk.max_workers {
                        total_ms += wave.iter().copied().max().unwrap_or(0);
                        wave.clear();
                    }
                }
                Err(e) => {
                    failed.push(vmid);
                    let msg = e.message().trim_end().to_string();
                    worker = worker.log(if bulk.warn_refusals {
                        format!("WARN: {msg}")
                    } else {
                        msg
                    });
                }
            }
        }
        total_ms += wave.iter().copied().max().unwrap_or(0);
    }
    match (bulk.failed_error, failed.is_empty()) {
        _ if started == 0 && bulk.none_started.is_some() => {
            worker = worker.fail(bulk.none_started.unwrap_or_default());
        }
        (Some(prefix), false) => {
            let ids: Vec<String> = failed.iter().map(u32::to_string).collect();
            worker = worker.fail(format!("{prefix}{}", ids.join(", ")));
        }
        _ => {
            for l in (bulk.footer)(started) {
                worker = worker.log(l);
            }
        }
    }
    let who = ctx.who()?.to_string();
    let ms = u64::try_from(total_ms).unwrap_or(0);
    let upid = ctx.with(|c| c.start_task(node, worker, &who, now_ms, ms));
    Ok(json!(upid).into())
}

/// The guests' VMIDs of a `pve-vmid-list` parameter.
fn vmid_list(ctx: &Ctx<'_>) -> Option<Vec<u32>> {
    ctx.params.str("vms").map(|text| {
        crate::spec::formats::split_list(&text)
            .into_iter()
            .filter_map(|s| s.parse().ok())
            .collect()
    })
}

/// The `max-workers` (or its alias `maxworkers`) given.
fn given_workers(ctx: &Ctx<'_>) -> Result<Option<i64>> {
    let own = ctx.params.int("max-workers", Some(1), Some(64))?;
    let alias = ctx.params.int("maxworkers", Some(1), Some(64))?;
    Ok(own.or(alias))
}

/// The groups in the order a bulk action takes them: by `startup`
/// order, the highest first when `reverse`; by VMID within a group.
fn ordered(groups: OrderGroups, reverse: bool) -> Vec<Vec<BulkGuest>> {
    let mut out: Vec<Vec<BulkGuest>> = groups.into_values().collect();
    if reverse {
        out.reverse();
    }
    out
}

/// The `print_start_action` line of a bulk action.
fn action_line(vms: &[u32], prefix: &str, suffix: Option<&str>) -> String {
    let suffix = suffix.map(|s| format!(" {s}")).unwrap_or_default();
    if vms.is_empty() {
        format!("{prefix} all guests{suffix}")
    } else {
        let ids: Vec<String> = vms.iter().map(u32::to_string).collect();
        format!("{prefix} guests{suffix}: {}", ids.join(", "))
    }
}

/// The path of a guest's call.
fn guest_path(g: &BulkGuest, rest: &str) -> String {
    format!("/nodes/{}/{}/{}/{rest}", g.node, g.api_type(), g.vmid)
}

/// `POST /nodes/{node}/suspendall`: VM.PowerMgmt and VM.Config.Disk on
/// `/`, or VM.PowerMgmt on each listed guest; suspends the node's running
/// VMs to disk, highest order and VMID first.
pub(super) fn suspendall(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vms = vmid_list(ctx);
    let who = ctx.who()?;
    let listed = vms.clone().unwrap_or_default();
    ctx.with(|c| {
        c.access().check_node_guests(
            who,
            &listed,
            &["VM.PowerMgmt", "VM.Config.Disk"],
            "VM.PowerMgmt",
        )
    })?;
    let given = given_workers(ctx)?;
    let (groups, max_workers) = ctx.with(|c| {
        let cpus = c.nodes().get(&node).map_or(1, |n| n.cpus as usize);
        let fallback = (cpus.saturating_sub(1)).clamp(1, 8);
        (
            c.start_stop_groups(Some(&node), vms.as_deref()),
            c.bulk_max_workers(given, Some(fallback)).unwrap_or(1),
        )
    });
    let groups = ordered(groups, true)
        .into_iter()
        .map(|mut g| {
            g.reverse();
            g.into_iter()
                .map(|g| {
                    if g.lxc {
                        Step::Skip(vec![format!(
                            "WARN: skipping {}, only VMs can be suspended",
                            g.vmid
                        )])
                    } else if !g.running {
                        Step::Skip(vec![format!(
                            "VM {} not running, skipping suspension",
                            g.vmid
                        )])
                    } else {
                        Step::Call {
                            vmid: g.vmid,
                            kind: "VM",
                            line: format!("Suspending VM {}", g.vmid),
                            path: guest_path(&g, "status/suspend"),
                            args: BTreeMap::from([("todisk".into(), json!(1))]),
                        }
                    }
                })
                .collect()
        })
        .collect();
    run(
        ctx,
        &node,
        Bulk {
            kind: "suspendall",
            header: Vec::new(),
            groups,
            max_workers,
            failed_line: None,
            warn_refusals: false,
            none_started: None,
            failed_error: None,
            footer: |_| Vec::new(),
        },
    )
}

/// `POST /nodes/{node}/migrateall`: VM.Migrate on `/` or on each listed
/// guest; migrates the node's guests (templates and HA-managed ones too)
/// to `target`.
pub(super) fn migrateall(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let vms = vmid_list(ctx);
    let who = ctx.who()?;
    let listed = vms.clone().unwrap_or_default();
    ctx.with(|c| {
        c.access()
            .check_node_guests(who, &listed, &["VM.Migrate"], "VM.Migrate")
    })?;
    let target = ctx.param("target")?;
    let local_disks = ctx.params.bool("with-local-disks")?;
    if target == node {
        return Err(Error::invalid("target", "target is local node."));
    }
    let given = given_workers(ctx)?;
    let (guests, max_workers) = ctx.with(|c| {
        if !c.nodes().quorate() {
            return Err(Error::failed("cluster not ready - no quorum?"));
        }
        if !c.nodes().contains(&target) {
            return Err(Error::failed(format!("no such cluster node '{target}'")));
        }
        let max = c.bulk_max_workers(given, None).ok_or_else(|| {
            Error::failed(
                "either 'max-workers' parameter or max_workers in datacenter.cfg must be set!",
            )
        })?;
        Ok((c.bulk_guests(Some(&node), vms.as_deref(), true, true), max))
    })?;
    let mut header = Vec::new();
    if guests.is_empty() {
        header.push("WARN: no virtual guests matched, nothing to do..".to_string());
    }
    let steps = guests
        .iter()
        .map(|g| {
            let mut args = BTreeMap::from([("target".to_string(), json!(target))]);
            let line = if g.lxc {
                args.insert("restart".into(), json!(u8::from(g.running)));
                format!("Migrating CT {}", g.vmid)
            } else {
                args.insert("online".into(), json!(u8::from(g.running)));
                if let Some(l) = local_disks {
                    args.insert("with-local-disks".into(), json!(u8::from(l)));
                }
                format!(
                    "Check VM {}: precondition check passed\nMigrating VM {}",
                    g.vmid, g.vmid
                )
            };
            Step::Call {
                vmid: g.vmid,
                kind: g.type_text(),
                line,
                path: guest_path(g, "migrate"),
                args,
            }
        })
        .collect();
    let empty = guests.is_empty();
    run(
        ctx,
        &node,
        Bulk {
            kind: "migrateall",
            header,
            groups: vec![steps],
            max_workers,
            failed_line: None,
            warn_refusals: false,
            none_started: (!empty).then_some("no migrations worker started..."),
            failed_error: None,
            footer: if empty {
                |_| Vec::new()
            } else {
                |n| vec![format!("All jobs finished, used {n} workers in total.")]
            },
        },
    )
}

/// The guests of a bulk action's `vms` (an array).
fn bulk_vms(ctx: &Ctx<'_>) -> Vec<u32> {
    let texts: Vec<String> = match ctx.params.get("vms") {
        Some(Value::Array(items)) => items.iter().map(crate::api::params::value_text).collect(),
        Some(v) => vec![crate::api::params::value_text(v)],
        None => Vec::new(),
    };
    texts
        .iter()
        .flat_map(|t| crate::spec::formats::split_list(t))
        .filter_map(|s| s.parse().ok())
        .collect()
}

/// The cluster-wide groups of a bulk start, shutdown or suspend, checked
/// for `privs` first (`check_guest_permissions`).
fn bulk_groups(
    ctx: &Ctx<'_>,
    vms: &[u32],
    default_workers: usize,
) -> Result<(OrderGroups, usize, String)> {
    let given = given_workers(ctx)?;
    Ok(ctx.with(|c| {
        let filter = (!vms.is_empty()).then_some(vms);
        (
            c.start_stop_groups(None, filter),
            c.bulk_max_workers(given, Some(default_workers))
                .unwrap_or(1),
            c.nodes().local().to_string(),
        )
    }))
}

/// The permission check of a bulk action.
fn check(ctx: &Ctx<'_>, vms: &[u32], privs: &[&str]) -> Result<()> {
    let who = ctx.who()?;
    ctx.with(|c| c.access().check_bulk_guests(who, vms, privs))
}

/// `POST /cluster/bulk-action/guest/start` (9.x): starts (or resumes)
/// the guests, lowest order first.
pub(super) fn bulk_start(ctx: &Ctx<'_>) -> Result<Reply> {
    let vms = bulk_vms(ctx);
    check(ctx, &vms, &["VM.PowerMgmt"])?;
    let timeout = ctx.params.int("timeout", None, None)?;
    let (groups, max_workers, local) = bulk_groups(ctx, &vms, 4)?;
    let groups = ordered(groups, false)
        .into_iter()
        .map(|g| {
            g.into_iter()
                .map(|g| {
                    let t = g.type_text();
                    if g.running && !g.paused {
                        return Step::Skip(vec![format!(
                            "WARN: Skipping {t} {}, already running.",
                            g.vmid
                        )]);
                    }
                    let op = if g.paused { "resume" } else { "start" };
                    let mut args = BTreeMap::new();
                    if let (Some(t), "start", false) = (timeout, op, g.lxc) {
                        args.insert("timeout".into(), json!(t));
                    }
                    let mut line = format!("Starting {t} {}", g.vmid);
                    if let Some(up) = g.up.filter(|u| *u > 0) {
                        line.push_str(&format!("\nWaiting for {up} seconds (startup delay)"));
                    }
                    Step::Call {
                        vmid: g.vmid,
                        kind: t,
                        line,
                        path: guest_path(&g, &format!("status/{op}")),
                        args,
                    }
                })
                .collect()
        })
        .collect();
    run(
        ctx,
        &local,
        Bulk {
            kind: "bulk-start",
            header: vec![action_line(&vms, "Starting", None)],
            groups,
            max_workers,
            failed_line: Some(|t, vmid, err| format!("WARN: Starting {t} {vmid} failed: {err}")),
            warn_refusals: true,
            none_started: None,
            failed_error: Some("Some guests failed to start: "),
            footer: |_| Vec::new(),
        },
    )
}

/// `POST /cluster/bulk-action/guest/shutdown` (9.x): shuts the running
/// guests down, highest order first.
pub(super) fn bulk_shutdown(ctx: &Ctx<'_>) -> Result<Reply> {
    let vms = bulk_vms(ctx);
    check(ctx, &vms, &["VM.PowerMgmt"])?;
    let timeout = ctx.params.int("timeout", None, None)?;
    let force = ctx.params.bool("force-stop")?.unwrap_or(true);
    let (groups, max_workers, local) = bulk_groups(ctx, &vms, 4)?;
    let groups = ordered(groups, true)
        .into_iter()
        .map(|g| {
            g.into_iter()
                .map(|g| {
                    let t = g.type_text();
                    if !g.running {
                        return Step::Skip(vec![format!(
                            "WARN: Skipping {t} {}, not running.",
                            g.vmid
                        )]);
                    }
                    if g.paused && !force {
                        return Step::Skip(vec![format!(
                            "WARN: Skipping {t} {}, resume paused VM before shutdown.",
                            g.vmid
                        )]);
                    }
                    let secs = g.down.or(timeout).unwrap_or(180);
                    Step::Call {
                        vmid: g.vmid,
                        kind: t,
                        line: format!("Shutting down {t} {} (Timeout = {secs} seconds)", g.vmid),
                        path: guest_path(&g, "status/shutdown"),
                        args: BTreeMap::from([
                            ("forceStop".to_string(), json!(u8::from(force))),
                            ("timeout".to_string(), json!(secs)),
                        ]),
                    }
                })
                .collect()
        })
        .collect();
    run(
        ctx,
        &local,
        Bulk {
            kind: "bulk-shutdown",
            header: vec![action_line(&vms, "Shutting down", None)],
            groups,
            max_workers,
            failed_line: Some(|t, vmid, err| format!("WARN: Stopping {t} {vmid} failed: {err}")),
            warn_refusals: true,
            none_started: None,
            failed_error: Some("Some guests failed to shutdown "),
            footer: |_| Vec::new(),
        },
    )
}

/// `POST /cluster/bulk-action/guest/suspend` (9.x): VM.PowerMgmt on each
/// guest (or `/`); suspending `to-disk` also VM.Config.Disk there and
/// Datastore.AllocateSpace on a `statestorage`. Suspends the running
/// VMs, highest order first.
pub(super) fn bulk_suspend(ctx: &Ctx<'_>) -> Result<Reply> {
    let vms = bulk_vms(ctx);
    let to_disk = ctx.params.bool("to-disk")?.unwrap_or(false);
    let state = ctx.params.str("statestorage");
    check(ctx, &vms, &["VM.PowerMgmt"])?;
    if to_disk {
        check(ctx, &vms, &["VM.Config.Disk"])?;
        if let Some(sid) = &state {
            let who = ctx.who()?;
            ctx.with(|c| {
                c.access().check_perm(
                    who,
                    &format!("/storage/{sid}"),
                    &["Datastore.AllocateSpace"],
                )
            })?;
        }
    }
    let (groups, max_workers, local) = bulk_groups(ctx, &vms, 4)?;
    let groups = ordered(groups, true)
        .into_iter()
        .map(|g| {
            g.into_iter()
                .map(|g| {
                    if g.lxc {
                        return Step::Skip(vec![format!(
                            "WARN: skipping {}, only VMs can be suspended",
                            g.vmid
                        )]);
                    }
                    if !g.running {
                        return Step::Skip(vec![format!(
                            "WARN: Skipping VM {}, not running.",
                            g.vmid
                        )]);
                    }
                    let mut args =
                        BTreeMap::from([("todisk".to_string(), json!(u8::from(to_disk)))]);
                    if let (true, Some(sid)) = (to_disk, &state) {
                        args.insert("statestorage".into(), json!(sid));
                    }
                    Step::Call {
                        vmid: g.vmid,
                        kind: "VM",
                        line: format!("Suspending VM {}", g.vmid),
                        path: guest_path(&g, "status/suspend"),
                        args,
                    }
                })
                .collect()
        })
        .collect();
    run(
        ctx,
        &local,
        Bulk {
            kind: "bulk-suspend",
            header: vec![action_line(&vms, "Suspending", None)],
            groups,
            max_workers,
            failed_line: Some(|t, vmid, err| format!("WARN: Stopping {t} {vmid} failed: {err}")),
            warn_refusals: true,
            none_started: None,
            failed_error: Some("Some guests failed to suspend "),
            footer: |_| Vec::new(),
        },
    )
}

/// `POST /cluster/bulk-action/guest/migrate` (9.x): migrates the guests
/// (templates and HA-managed ones too) to `target`, one at a time unless
/// told otherwise.
pub(super) fn bulk_migrate(ctx: &Ctx<'_>) -> Result<Reply> {
    let vms = bulk_vms(ctx);
    check(ctx, &vms, &["VM.Migrate"])?;
    let target = ctx.param("target")?;
    let online = ctx.params.bool("online")?;
    let local_disks = ctx.params.bool("with-local-disks")?;
    let given = given_workers(ctx)?;
    let (guests, max_workers, local) = ctx.with(|c| {
        let filter = (!vms.is_empty()).then_some(vms.as_slice());
        (
            c.bulk_guests(None, filter, true, true),
            c.bulk_max_workers(given, Some(1)).unwrap_or(1),
            c.nodes().local().to_string(),
        )
    });
    let steps = guests
        .iter()
        .map(|g| {
            let t = g.type_text();
            if g.node == target {
                return Step::Skip(vec![format!(
                    "WARN: {t} {} already on {target}, skipping.",
                    g.vmid
                )]);
            }
            let mut args = BTreeMap::from([("target".to_string(), json!(target))]);
            if let Some(o) = online {
                let key = if g.lxc { "restart" } else { "online" };
                args.insert(key.into(), json!(u8::from(o)));
            }
            if let (Some(l), false) = (local_disks, g.lxc) {
                args.insert("with-local-disks".into(), json!(u8::from(l)));
            }
            Step::Call {
                vmid: g.vmid,
                kind: t,
                line: format!("Migrating {t} {}", g.vmid),
                path: guest_path(g, "migrate"),
                args,
            }
        })
        .collect();
    run(
        ctx,
        &local,
        Bulk {
            kind: "bulk-migrate",
            header: vec![action_line(
                &vms,
                "Migrating",
                Some(&format!("to {target}")),
            )],
            groups: vec![steps],
            max_workers,
            failed_line: Some(|t, vmid, err| format!("WARN: Migrating {t} {vmid} failed: {err}")),
            warn_refusals: true,
            none_started: None,
            failed_error: Some("Some guests failed to migrate "),
            footer: |_| Vec::new(),
        },
    )
}
