//! Backups: `vzdump`, its defaults and `extractconfig`, pruning, backup
//! jobs and the guests no job covers (pve-manager `API2/VZDump.pm`,
//! `API2/Backup.pm`, `API2/BackupInfo.pm`; pve-storage
//! `API2/Storage/PruneBackups.pm`); file-restore's `list` and
//! `download` from a Proxmox Backup Server snapshot (`FileRestore.pm`),
//! and the checks of an import source's metadata (`Status.pm`), whose
//! work is not emulated.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::backup::VzdumpRequest;
use crate::model::backup::jobs::shell_quote;
use crate::model::backup::schedule::CalendarEvent;
use crate::model::tasks::Worker;
use crate::model::{Error, Result};
use crate::spec::formats::split_list;

pub mod view;

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        post("/nodes/{node}/vzdump", vzdump),
        get("/nodes/{node}/vzdump/defaults", defaults),
        get("/nodes/{node}/vzdump/extractconfig", extractconfig),
        get(
            "/nodes/{node}/storage/{storage}/file-restore/list",
            file_restore_list,
        ),
        get(
            "/nodes/{node}/storage/{storage}/file-restore/download",
            file_restore_download,
        ),
        get(
            "/nodes/{node}/storage/{storage}/import-metadata",
            get_import_metadata,
        ),
        get("/nodes/{node}/storage/{storage}/prunebackups", dryrun),
        delete("/nodes/{node}/storage/{storage}/prunebackups", prune),
        get("/cluster/backup", index),
        post("/cluster/backup", create_job),
        get("/cluster/backup/{id}", read_job),
        put("/cluster/backup/{id}", update_job),
        delete("/cluster/backup/{id}", delete_job),
        get(
            "/cluster/backup/{id}/included_volumes",
            get_volume_backup_included,
        ),
        get("/cluster/jobs/schedule-analyze", schedule_analyze),
        get("/cluster/backup-info", backup_info_index),
        get(
            "/cluster/backup-info/not-backed-up",
            get_guests_not_in_backup,
        ),
    ]
}

fn vmid_list(ctx: &Ctx<'_>, name: &str) -> Result<Vec<u32>> {
    let Some(v) = ctx.params.str(name) else {
        return Ok(Vec::new());
    };
    split_list(&v)
        .into_iter()
        .map(|x| {
            x.parse::<u32>().map_err(|_| {
                Error::invalid(
                    name,
                    format!("value '{x}' does not look like a valid VM ID"),
                )
            })
        })
        .collect()
}

/// `assert_param_permission_common`: options only root@pam may set.
fn root_only_options(ctx: &Ctx<'_>, keys: &[&str]) -> Result<()> {
    if ctx.who()?.to_string() == "root@pam" {
        return Ok(());
    }
    for k in keys {
        if ctx.params.get(k).is_some() {
            return Err(Error::invalid(*k, "Only root may set this option."));
        }
    }
    Ok(())
}

/// `POST /nodes/{node}/vzdump`.
fn vzdump(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    if ctx.params.bool("stdout")?.unwrap_or(false) {
        return Err(Error::invalid(
            "stdout",
            "option is only allowed on the command line interface.",
        ));
    }
    root_only_options(ctx, &["tmpdir", "dumpdir", "script", "job-id"])?;
    let who = ctx.who()?.clone();
    let storage = ctx.params.str("storage");
    let sid = storage.clone().unwrap_or_else(|| "local".into());
    ctx.with(|c| {
        if ctx.params.get("prune-backups").is_some() {
            c.access()
                .check_perm(&who, &format!("/storage/{sid}"), &["Datastore.Allocate"])?;
        }
        for k in ["bwlimit", "performance", "ionice"] {
            if ctx.params.get(k).is_some() {
                c.access().check_perm(&who, "/", &["Sys.Modify"])?;
            }
        }
        Ok::<_, Error>(())
    })?;
    let mut names: Vec<&str> = ctx.params.names().collect();
    names.sort_unstable();
    let mut cmdline = "vzdump".to_string();
    for v in vmid_list(ctx, "vmid")? {
        cmdline.push_str(&format!(" {v}"));
    }
    for k in names.iter().filter(|k| !["vmid", "stdout"].contains(*k)) {
        let v = ctx.params.str(k).unwrap_or_default();
        cmdline.push_str(&format!(" --{k} {}", shell_quote(&v)));
    }
    let mut req = VzdumpRequest {
        node: node.clone(),
        vmid: vmid_list(ctx, "vmid")?,
        all: ctx.params.bool("all")?.unwrap_or(false),
        pool: ctx.params.str("pool"),
        exclude: vmid_list(ctx, "exclude")?,
        mode: ctx.params.str("mode").unwrap_or_else(|| "snapshot".into()),
        compress: ctx.params.str("compress").unwrap_or_else(|| "0".into()),
        storage,
        notes_template: ctx.params.str("notes-template"),
        protected: ctx.params.bool("protected")?.unwrap_or(false),
        prune_backups: ctx.params.str("prune-backups"),
        remove: ctx.params.bool("remove")?.unwrap_or(true),
        cmdline,
        denied: Vec::new(),
        notice: crate::model::notify::events::BackupNotice {
            job_id: ctx.params.str("job-id"),
            mailto: ctx
                .params
                .str("mailto")
                .map(|m| {
                    crate::spec::formats::split_list(&m)
                        .into_iter()
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
            policy: ctx.params.str("mailnotification"),
            mode: ctx.params.str("notification-mode"),
        },
    };
    let now_ms = ctx.now_ms();
    let ms = ctx.task_ms("vzdump");
    let answer = ctx.with(|c| {
        if !c.access().is_superuser(&who) {
            // Checked per guest in the task, as `exec_backup` does.
            let ids = c.backup_reader().included_guests(
                Some(&node),
                &req.vmid,
                req.all,
                req.pool.as_deref(),
                &req.exclude,
            );
            req.denied = ids
                .into_iter()
                .filter(|id| {
                    !c.access()
                        .has_priv(&who, &format!("/vms/{id}"), "VM.Backup")
                })
                .collect();
            c.access().check_perm(
                &who,
                &format!("/storage/{sid}"),
                &["Datastore.AllocateSpace"],
            )?;
        }
        match c.backup_ops().vzdump(req, &mut ctx.rq())? {
            None => Ok::<_, Error>("OK".to_string()),
            Some(worker) => Ok(c.start_task(&node, worker, &who.to_string(), now_ms, ms)),
        }
    })?;
    Ok(json!(answer).into())
}

/// `GET /nodes/{node}/vzdump/defaults`: the defaults of `vzdump.conf`'s
/// schema, the storage (`local` unless given) and its retention.
fn defaults(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let who = ctx.who()?.clone();
    let storage = ctx.params.str("storage").unwrap_or_else(|| "local".into());
    let version = ctx.state.settings().version;
    let mut res = serde_json::Map::new();
    if let Some(e) = crate::spec::spec(version).endpoint("GET", "/nodes/{node}/vzdump/defaults")
        && let Some(props) = e.returns.get("properties").and_then(Value::as_object)
    {
        for (k, p) in props {
            if let Some(d) = p.get("default") {
                res.insert(k.clone(), d.clone());
            }
        }
    }
    res.insert("storage".into(), json!(storage));
    ctx.with(|c| {
        c.access().check_any(
            &who,
            &format!("/storage/{storage}"),
            &["Datastore.Audit", "Datastore.AllocateSpace"],
        )?;
        let s = c.storages().existing(&storage)?;
        if !s.content.iter().any(|x| x == "backup") {
            return Err(Error::failed(format!(
                "can't use storage '{storage}' for backups - wrong content type"
            )));
        }
        if let Some(p) = s.options.get("prune-backups") {
            res.insert("prune-backups".into(), json!(p));
        }
        if !c
            .access()
            .has_priv(&who, &format!("/nodes/{node}"), "Sys.Audit")
        {
            for k in ["mailto", "tmpdir", "dumpdir", "script", "ionice"] {
                res.remove(k);
            }
        }
        Ok(())
    })?;
    Ok(Value::Object(res).into())
}

/// `GET /nodes/{node}/vzdump/extractconfig`.
fn extractconfig(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let volume = ctx.param("volume")?;
    let who = ctx.who()?.clone();
    let text = ctx.with(|c| {
        if !c.access().is_superuser(&who) {
            let sid = volume.split(':').next().unwrap_or_default();
            c.access().check_perm(
                &who,
                &format!("/storage/{sid}"),
                &["Datastore.AllocateSpace"],
            )?;
            let file = volume.rsplit('/').next().unwrap_or_default();
            if let (_, Some(owner), _) = crate::model::storage::content::backup_info(file) {
                c.access()
                    .check_perm(&who, &format!("/vms/{owner}"), &["VM.Backup"])?;
            }
        }
        c.backup_reader().extract_config(&node, &volume)
    })?;
    Ok(json!(text).into())
}

/// `GET /nodes/{node}/storage/{storage}/file-restore/list`: `filepath`
/// `/` lists the snapshot's archives, else a base64 path in one.
fn file_restore_list(ctx: &Ctx<'_>) -> Result<Reply> {
    ctx.node()?;
    let storage = ctx.param("storage")?;
    let volume = ctx.param("volume")?;
    let filepath = ctx.params.str("filepath").unwrap_or_else(|| "/".into());
    let who = ctx.who()?.clone();
    let entries = ctx.with(|c| {
        c.backup_reader()
            .file_restore_list(&who, &storage, &volume, &filepath)
    })?;
    Ok(view::file_restore_entries(&entries).into())
}

/// `GET /nodes/{node}/storage/{storage}/file-restore/download`: a
/// `pbs-download` task, and the file's bytes (a directory as a zip, or
/// with `tar=1` a `tar.zst`).
fn file_restore_download(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let storage = ctx.param("storage")?;
    let volume = ctx.param("volume")?;
    let filepath = ctx.param("filepath")?;
    let tar = ctx.params.bool("tar")?.unwrap_or(false);
    let who = ctx.who()?.clone();
    let (name, bytes) = ctx.with(|c| {
        c.backup_reader()
            .file_restore_download(&who, &storage, &volume, &filepath, tar)
    })?;
    let w = Worker::new("pbs-download", "").log(format!("Starting download of file: {name}"));
    ctx.start_task(&node, w)?;
    Ok(Reply {
        download: Some(bytes.into()),
        ..Reply::default()
    })
}

/// `GET /nodes/{node}/storage/{storage}/import-metadata`: access to the
/// volume, then what its OVA archive or OVF manifest gives a guest.
fn get_import_metadata(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let storage = ctx.param("storage")?;
    let volume = ctx.param("volume")?;
    let who = ctx.who()?.clone();
    let m = ctx.with(|c| {
        c.backup_reader()
            .check_import_metadata(&who, &storage, &volume)?;
        c.storages().import_metadata(&storage, &node, &volume)
    })?;
    Ok(crate::api::storage::view::import_metadata(&m).into())
}

/// `GET /cluster/jobs/schedule-analyze`: the next runs of a calendar
/// event from `starttime` (now by default).
fn schedule_analyze(ctx: &Ctx<'_>) -> Result<Reply> {
    let spec = ctx.params.req_str("schedule")?;
    let event =
        CalendarEvent::parse(&spec).map_err(|e| Error::invalid("schedule", e.to_string()))?;
    let start = ctx
        .params
        .int("starttime", None, None)?
        .unwrap_or_else(|| ctx.now());
    let iterations = ctx
        .params
        .int("iterations", Some(1), Some(100))?
        .unwrap_or(10);
    let runs = event.runs(start, usize::try_from(iterations).unwrap_or(10));
    Ok(runs
        .into_iter()
        .map(view::schedule_run)
        .collect::<Value>()
        .into())
}

/// The parameters of both prune calls: node, storage, retention, VMID
/// and guest type.
type PruneParams = (String, String, Option<String>, Option<u32>, Option<String>);

fn prune_params(ctx: &Ctx<'_>) -> Result<PruneParams> {
    let node = ctx.node()?;
    let storage = ctx.param("storage")?;
    let vmid = ctx
        .params
        .int("vmid", Some(100), Some(999_999_999))?
        .and_then(|n| u32::try_from(n).ok());
    Ok((
        node,
        storage,
        ctx.params.str("prune-backups"),
        vmid,
        ctx.params.str("type"),
    ))
}

/// `GET .../prunebackups`: the dry run.
fn dryrun(ctx: &Ctx<'_>) -> Result<Reply> {
    let (node, sid, keep, vmid, kind) = prune_params(ctx)?;
    let items = ctx.with(|c| {
        if let Some(s) = c.pbs_storage(&sid, &node)? {
            let k = c.storage.prune_keep(&sid, &node, keep.as_deref())?;
            let (marks, _) = c.pbs().prune_marks(&s, vmid, kind.as_deref(), &k)?;
            return Ok(marks.iter().map(view::prune_entry).collect());
        }
        c.storage
            .prune_dryrun(&sid, &node, keep.as_deref(), vmid, kind.as_deref())
            .map(|l| l.iter().map(view::prune_entry).collect())
    })?;
    Ok(Value::Array(items).into())
}

/// `DELETE .../prunebackups`: the `prunebackups` task.
fn prune(ctx: &Ctx<'_>) -> Result<Reply> {
    let (node, sid, keep, vmid, kind) = prune_params(ctx)?;
    let who = ctx.who()?.clone();
    let now_ms = ctx.now_ms();
    let ms = ctx.task_ms("prunebackups");
    let upid = ctx.with(|c| {
        let spath = format!("/storage/{sid}");
        match vmid {
            Some(id) => {
                c.access()
                    .check_perm(&who, &spath, &["Datastore.AllocateSpace"])?;
                c.access()
                    .check_perm(&who, &format!("/vms/{id}"), &["VM.Backup"])?;
            }
            None => c
                .access()
                .check_perm(&who, &spath, &["Datastore.Allocate"])?,
        }
        let worker = match c.pbs_storage(&sid, &node)? {
            Some(s) => c.pbs_prune_worker(&s, &node, keep.as_deref(), vmid, kind.as_deref())?,
            None => c
                .storage
                .prune_backups(&sid, &node, keep.as_deref(), vmid, kind.as_deref())?,
        };
        Ok::<_, Error>(c.start_task(&node, worker, &who.to_string(), now_ms, ms))
    })?;
    Ok(json!(upid).into())
}

/// The options of a job call, without `id` and `delete`.
fn job_options(ctx: &Ctx<'_>) -> BTreeMap<String, String> {
    ctx.params
        .names()
        .filter(|k| !["id", "delete"].contains(k))
        .filter_map(|k| Some((k.to_string(), ctx.params.str(k)?)))
        .collect()
}

/// `GET /cluster/backup`.
fn index(ctx: &Ctx<'_>) -> Result<Reply> {
    let now = ctx.now();
    Ok(ctx.with(|c| view::jobs(&c.backups.backup_jobs(now))).into())
}

/// The checks of create and update on a job's `pool`.
fn check_job_pool(ctx: &Ctx<'_>) -> Result<()> {
    let Some(pool) = ctx.params.str("pool") else {
        return Ok(());
    };
    let who = ctx.who()?.clone();
    ctx.with(|c| {
        c.access().check_pool_exist(&pool)?;
        c.access()
            .check_perm(&who, &format!("/pool/{pool}"), &["VM.Backup"])
    })
}

/// `POST /cluster/backup`.
fn create_job(ctx: &Ctx<'_>) -> Result<Reply> {
    root_only_options(ctx, &["tmpdir", "dumpdir", "script"])?;
    check_job_pool(ctx)?;
    let id = ctx.params.str("id");
    let opts = job_options(ctx);
    ctx.with(|c| c.backups.create_backup_job(id, opts, &mut ctx.rq()))?;
    Ok(Value::Null.into())
}

/// `GET /cluster/backup/{id}`.
fn read_job(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    Ok(ctx
        .with(|c| c.backups.backup_job(&id).map(|j| view::job(&id, j)))?
        .into())
}

/// `PUT /cluster/backup/{id}`.
fn update_job(ctx: &Ctx<'_>) -> Result<Reply> {
    root_only_options(ctx, &["tmpdir", "dumpdir", "script"])?;
    check_job_pool(ctx)?;
    let id = ctx.param("id")?;
    let delete: Vec<String> = ctx
        .params
        .str("delete")
        .map(|d| split_list(&d).into_iter().map(str::to_string).collect())
        .unwrap_or_default();
    let opts = job_options(ctx);
    ctx.with(|c| c.backups.update_backup_job(&id, opts, &delete))?;
    Ok(Value::Null.into())
}

/// `DELETE /cluster/backup/{id}`.
fn delete_job(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    ctx.with(|c| c.backups.delete_backup_job(&id))?;
    Ok(Value::Null.into())
}

/// `GET /cluster/backup/{id}/included_volumes`: the guests the caller
/// may audit.
fn get_volume_backup_included(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    let who = ctx.who()?.clone();
    Ok(ctx
        .with(|c| {
            c.backup_reader()
                .job_included_volumes(&id, |v| {
                    c.access().has_priv(&who, &format!("/vms/{v}"), "VM.Audit")
                })
                .map(|l| view::included_volumes(&l))
        })?
        .into())
}

/// `GET /cluster/backup-info`.
fn backup_info_index(_: &Ctx<'_>) -> Result<Reply> {
    Ok(json!([{ "subdir": "not-backed-up" }]).into())
}

/// `GET /cluster/backup-info/not-backed-up`.
fn get_guests_not_in_backup(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?.clone();
    // Guests the caller may not audit are left out, not to leak names.
    let items = ctx.with(|c| {
        c.backup_reader()
            .not_backed_up()
            .into_iter()
            .filter(|e| {
                c.access()
                    .has_priv(&who, &format!("/vms/{}", e.vmid), "VM.Audit")
            })
            .map(|e| view::not_backed_up(&e))
            .collect::<Vec<_>>()
    });
    Ok(Value::Array(items).into())
}

/// `POST /nodes/{node}/qemu` with `archive`: the `qmrestore` task.
pub(crate) fn restore_vm(ctx: &Ctx<'_>, node: &str, vmid: u32) -> Result<Reply> {
    let overrides: BTreeMap<String, String> = ctx
        .params
        .names()
        .filter(|k| !crate::model::qemu::CREATE_ONLY.contains(k))
        .filter_map(|k| Some((k.to_string(), ctx.params.str(k)?)))
        .collect();
    if let Some(k) = overrides
        .keys()
        .find(|k| crate::model::qemu::is_drive_key(k))
    {
        return Err(Error::invalid(
            k.clone(),
            "option conflicts with option 'archive'",
        ));
    }
    let pool = ctx.params.str("pool");
    if let Some(p) = &pool {
        ctx.with(|c| c.access().check_pool_exist(p))?;
    }
    let who = ctx.who()?.to_string();
    let start = ctx
        .params
        .bool("start")?
        .unwrap_or(false)
        .then(|| (who.clone(), ctx.task_ms("qmstart")));
    let req = crate::model::backup::RestoreRequest {
        node: node.to_string(),
        vmid,
        archive: ctx.param("archive")?,
        force: ctx.params.bool("force")?.unwrap_or(false),
        unique: ctx.params.bool("unique")?.unwrap_or(false),
        storage: ctx.params.str("storage"),
        pool,
        start,
        overrides,
        user: Some(who.clone()),
        bwlimit: ctx
            .params
            .int("bwlimit", Some(0), None)?
            .and_then(|b| u64::try_from(b).ok()),
    };
    let now_ms = ctx.now_ms();
    let ms = ctx.task_ms("qmrestore");
    let upid = ctx.with(|c| {
        let worker = c.backup_ops().restore_vm(req, &mut ctx.rq())?;
        Ok::<_, Error>(c.start_task(node, worker, &who, now_ms, ms))
    })?;
    Ok(json!(upid).into())
}
