//! `/storage` (storage.cfg) and `/nodes/{node}/storage` (status per node)
//! (pve-storage `API2/Storage/Config.pm`, `API2/Storage/Status.pm`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{Ctx, Reply, Route, delete, get, post, put};

pub mod view;
use crate::model::storage::Volume;
use crate::model::storage::content as storage_content;
use crate::model::tasks::TaskFailure;
use crate::model::{Error, Result, TaskEffect, VolumeChange, Worker};

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/storage", storage_index),
        post("/storage", create_storage),
        get("/storage/{storage}", read_storage),
        put("/storage/{storage}", update_storage),
        delete("/storage/{storage}", delete_storage),
        get("/nodes/{node}/storage", node_storage_index),
        get("/nodes/{node}/storage/{storage}/status", read_status),
        get("/nodes/{node}/storage/{storage}/identity", identity),
        get("/nodes/{node}/storage/{storage}/rrddata", rrddata),
        get("/nodes/{node}/storage/{storage}/rrd", rrd),
        get("/nodes/{node}/storage/{storage}/content", content_index),
        post("/nodes/{node}/storage/{storage}/content", content_create),
        get(
            "/nodes/{node}/storage/{storage}/content/{volume}",
            content_info,
        ),
        put(
            "/nodes/{node}/storage/{storage}/content/{volume}",
            content_update,
        ),
        delete(
            "/nodes/{node}/storage/{storage}/content/{volume}",
            content_delete,
        ),
        post(
            "/nodes/{node}/storage/{storage}/content/{volume}",
            content_copy,
        ),
        post("/nodes/{node}/storage/{storage}/download-url", download_url),
        post("/nodes/{node}/storage/{storage}/upload", upload),
        get("/nodes/{node}/query-url-metadata", query_url_metadata),
    ]
}

fn text_params(ctx: &Ctx<'_>) -> BTreeMap<String, String> {
    ctx.params
        .names()
        .filter_map(|k| Some((k.to_string(), ctx.params.str(k)?)))
        .collect()
}

/// Whether the caller sees a storage (Datastore.Audit or AllocateSpace).
fn may_see(ctx: &Ctx<'_>, c: &crate::model::Cluster, sid: &str) -> bool {
    let Some(who) = ctx.who.as_ref() else {
        return false;
    };
    let path = format!("/storage/{sid}");
    c.access().has_priv(who, &path, "Datastore.Audit")
        || c.access().has_priv(who, &path, "Datastore.AllocateSpace")
}

/// `GET /storage`, optionally by `type`.
fn storage_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let kind = ctx.params.str("type");
    let items = ctx.with(|c| {
        c.storages()
            .cfg()
            .iter()
            .filter(|s| kind.as_deref().is_none_or(|k| k == s.kind))
            .filter(|s| may_see(ctx, c, &s.storage))
            .map(|s| view::storage_config(c.storages(), s))
            .collect::<Vec<_>>()
    });
    Ok(Value::Array(items).into())
}

/// `GET /storage/{storage}`.
fn read_storage(ctx: &Ctx<'_>) -> Result<Reply> {
    let sid = ctx.param("storage")?;
    ctx.with(|c| {
        let s = c.storages().existing(&sid)?;
        Ok(view::storage_config(c.storages(), s).into())
    })
}

/// `POST /storage`.
fn create_storage(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = text_params(ctx);
    let nodes: Vec<String> = p
        .get("nodes")
        .map(|n| {
            n.split([',', ';', ' '])
                .filter(|x| !x.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    ctx.with(|c| {
        if let Some(n) = nodes
            .iter()
            .find(|n| !c.nodes().iter().any(|x| &x.name == *n))
        {
            return Err(Error::invalid(
                "nodes",
                format!("invalid format - value '{n}' does not look like a valid node name\n"),
            ));
        }
        Ok(view::storage_ref(&c.storages_mut().create(&p)?).into())
    })
}

/// `PUT /storage/{storage}`.
fn update_storage(ctx: &Ctx<'_>) -> Result<Reply> {
    let sid = ctx.param("storage")?;
    let delete: Vec<String> = ctx
        .params
        .str("delete")
        .map(|d| crate::model::network::split_list(&d))
        .unwrap_or_default();
    let p = text_params(ctx);
    Ok(ctx
        .with(|c| c.storages_mut().update(&sid, &p, &delete))
        .map(|r| view::storage_ref(&r))?
        .into())
}

/// `DELETE /storage/{storage}`.
fn delete_storage(ctx: &Ctx<'_>) -> Result<Reply> {
    let sid = ctx.param("storage")?;
    ctx.with(|c| {
        c.storages_mut().delete(&sid)?;
        c.access_mut().remove_storage_access(&sid);
        Ok::<_, crate::model::Error>(())
    })?;
    Ok(Value::Null.into())
}

/// `GET /nodes/{node}/storage`: `storage`, `content`, `enabled`,
/// `target` filters; `format` adds the image formats.
fn node_storage_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let storage = ctx.params.str("storage");
    let content = ctx.params.str("content");
    let enabled = ctx.params.bool("enabled")?.unwrap_or(false);
    let with_formats = ctx.params.bool("format")?.unwrap_or(false);
    let target = ctx
        .params
        .str("target")
        .filter(|t| *t != node && t != "localhost");
    ctx.with(|c| {
        let infos: Vec<(String, Value)> = c
            .storages()
            .cfg()
            .iter()
            .filter_map(|s| {
                let mut st = c.storages().status(s, &node, content.as_deref())?;
                crate::model::ceph::usage::rbd_status(c.ceph(), c.storages(), &node, &mut st);
                Some((s.storage.clone(), view::status(&st)))
            })
            .collect();
        if let Some(sid) = &storage
            && !infos.iter().any(|(k, _)| k == sid)
        {
            return Err(Error::invalid("storage", "No such storage."));
        }
        let mut out = Vec::new();
        for (sid, data) in infos {
            if !may_see(ctx, c, &sid) || storage.as_ref().is_some_and(|s| *s != sid) {
                continue;
            }
            let Ok(s) = c.storages().existing(&sid) else {
                continue;
            };
            if enabled && s.disable {
                continue;
            }
            if let Some(t) = &target
                && (!s.shared || !s.nodes.as_ref().is_none_or(|n| n.contains(t)))
            {
                continue;
            }
            let mut data = data;
            if with_formats {
                view::add_format_info(s, &mut data, c.version().is_v9());
            }
            out.push(data);
        }
        Ok(Value::Array(out).into())
    })
}

/// `GET /nodes/{node}/storage/{storage}/status`.
fn read_status(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let sid = ctx.param("storage")?;
    ctx.with(|c| {
        c.storages()
            .find(&sid)
            .and_then(|s| c.storages().status(s, &node, None))
            .map(|mut st| {
                crate::model::ceph::usage::rbd_status(c.ceph(), c.storages(), &node, &mut st);
                Reply::from(view::status(&st))
            })
            .ok_or_else(|| Error::invalid("storage", "No such storage."))
    })
}

/// `GET /nodes/{node}/storage/{storage}/identity` (9.2).
fn identity(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let sid = ctx.param("storage")?;
    let (kind, id) = ctx.with(|c| c.storages().identity(&sid, &node))?;
    Ok(view::identity(&kind, &id).into())
}

/// `GET /nodes/{node}/storage/{storage}/rrddata`.
fn rrddata(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let sid = ctx.param("storage")?;
    let timeframe = ctx.param("timeframe")?;
    let now_ms = ctx.now_ms();
    Ok(ctx
        .with(|c| {
            c.storages()
                .storage_rrddata(&node, &sid, &timeframe, now_ms, c.version().is_v9())
                .map(|p| view::rrddata(&p))
        })?
        .into())
}

/// `GET /nodes/{node}/storage/{storage}/rrd`: the graph's file name and
/// PNG bytes (see the QEMU `rrd` call).
fn rrd(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let sid = ctx.param("storage")?;
    let file = crate::model::storage::Storages::storage_rrd_file(&node, &sid, false);
    ctx.with(|c| c.storages().storage_rrd_status(&node, &sid, &file))?;
    super::qemu::rrd_graph(ctx, &file)
}

fn opt_vmid(ctx: &Ctx<'_>) -> Result<Option<u32>> {
    Ok(ctx
        .params
        .int("vmid", None, None)?
        .and_then(|n| u32::try_from(n).ok()))
}

/// `GET /nodes/{node}/storage/{storage}/content`: `content` and `vmid`
/// filters.
fn content_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let sid = ctx.param("storage")?;
    let content = ctx.params.str("content");
    let vmid = opt_vmid(ctx)?;
    let who = ctx.who()?.clone();
    let items = ctx.with(|c| {
        let items = c.content_list(&sid, &node, content.as_deref(), vmid)?;
        // Only the volumes the caller may access (`check_volume_access`).
        Ok::<_, Error>(
            items
                .into_iter()
                .filter(|v| check_volume_access(c, &who, v.volid()).is_ok())
                .collect::<Vec<_>>(),
        )
    })?;
    Ok(view::content(&items).into())
}

/// `POST /nodes/{node}/storage/{storage}/content`: allocates a disk image
/// (`size` in KiB, or with an `M`/`G` suffix).
fn content_create(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let sid = ctx.param("storage")?;
    let name = ctx.param("filename")?;
    let vmid = opt_vmid(ctx)?.ok_or_else(|| super::params::missing("vmid"))?;
    let sizestr = ctx.param("size")?;
    let parse = |s: &str, mul: u64| s.parse::<u64>().ok().map(|n| n.saturating_mul(mul));
    let size = if let Some(m) = sizestr.strip_suffix('M') {
        parse(m, 1024)
    } else if let Some(g) = sizestr.strip_suffix('G') {
        parse(g, 1024 * 1024)
    } else {
        parse(&sizestr, 1)
    }
    .ok_or_else(|| Error::invalid("size", format!("unable to parse size '{sizestr}'")))?;
    let mut format = ctx.params.str("format");
    if let Some((_, ext)) = name.rsplit_once('.')
        && ["raw", "qcow2", "vmdk"].contains(&ext)
    {
        if let Some(f) = &format
            && f != ext
        {
            return Err(Error::invalid(
                "format",
                format!("different storage formats ({f} != {ext})"),
            ));
        }
        format = Some(ext.to_string());
    }
    let now = ctx.now();
    let volid = ctx.with(|c| {
        c.storages_mut()
            .alloc_named_volume(&sid, &node, vmid, &name, format.as_deref(), size, now)
    })?;
    Ok(json!(volid).into())
}

/// The storage and volume name a `{volume}` call is about.
fn volume_of(ctx: &Ctx<'_>, param: &str) -> Result<(String, String)> {
    let sid = ctx.param("storage")?;
    let volume = ctx.param(param)?;
    storage_content::real_volume_id(&sid, &volume)
}

/// `check_volume_access` for a volume the caller names itself (no guest
/// config is being changed).
fn check_volume_access(
    c: &crate::model::cluster::Cluster,
    who: &crate::model::access::AuthId,
    volid: &str,
) -> Result<()> {
    crate::model::guest_perm::check_volume_access(&c.access, &c.storage, who, None, volid, None)
}

/// `GET .../content/{volume}`.
fn content_info(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let (sid, name) = volume_of(ctx, "volume")?;
    let who = ctx.who()?.clone();
    Ok(ctx
        .with(|c| {
            check_volume_access(c, &who, &format!("{sid}:{name}"))?;
            if let Some(s) = c.pbs_storage(&sid, &node)? {
                let (info, protected) = c.pbs().volume_info(&s, &name)?;
                let mut v = view::to_json(&info);
                v["protected"] = json!(protected);
                return Ok(v);
            }
            c.storages()
                .volume_info(&sid, &node, &name)
                .map(|i| view::to_json(&i))
        })?
        .into())
}

/// `PUT .../content/{volume}`: `notes`, `protected`.
fn content_update(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let (sid, name) = volume_of(ctx, "volume")?;
    let notes = ctx.params.str("notes");
    let protected = ctx.params.bool("protected")?;
    let who = ctx.who()?.clone();
    ctx.with(|c| {
        check_volume_access(c, &who, &format!("{sid}:{name}"))?;
        if let Some(s) = c.pbs_storage(&sid, &node)? {
            let max = match s.options.get("max-protected-backups") {
                Some(m) => m.parse().unwrap_or(-1),
                None if c.access().has_priv(
                    &who,
                    &format!("/storage/{sid}"),
                    "Datastore.Allocate",
                ) =>
                {
                    -1
                }
                None => 5,
            };
            return c
                .pbs_mut()
                .update_volume_attrs(&s, &name, notes, protected, max);
        }
        c.storages_mut()
            .update_volume_attrs(&sid, &node, &name, notes, protected)
    })?;
    Ok(Value::Null.into())
}

/// `DELETE .../content/{volume}`: task `imgdel`; with `delay`, `null`
/// when the task ended in time.
fn content_delete(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let (sid, name) = volume_of(ctx, "volume")?;
    let delay = ctx.params.int("delay", Some(1), Some(30))?;
    let who = ctx.who()?.clone();
    let (id, plan) = ctx.with(|c| {
        let (id, plan) = match c.pbs_storage(&sid, &node)? {
            Some(s) => {
                let (id, plan) = c.pbs().plan_delete(&s, &name)?;
                (id, plan.map_err(TaskFailure))
            }
            None => c.storages().plan_volume_delete(&sid, &node, &name)?,
        };
        let storage_path = format!("/storage/{sid}");
        let owner = id.split_once('@').map(|(o, _)| o.to_string());
        let backup = storage_content::vtype(&name) == "backup";
        if let (true, Some(o)) = (backup, &owner) {
            for (path, privilege) in [
                (storage_path.clone(), "Datastore.AllocateSpace"),
                (format!("/vms/{o}"), "VM.Backup"),
            ] {
                if !c.access().has_priv(&who, &path, privilege) {
                    return Err(Error::permission(&path, &[privilege]));
                }
            }
        } else if !c
            .access()
            .has_priv(&who, &storage_path, "Datastore.Allocate")
        {
            return Err(Error::permission(&storage_path, &["Datastore.Allocate"]));
        }
        Ok((id, plan))
    })?;
    let mut w = Worker::new("imgdel", &id);
    match plan {
        Ok(lines) => {
            for l in lines {
                w = w.log_end(l);
            }
            w = w.effect(TaskEffect::Volume {
                node: node.clone(),
                change: VolumeChange::Drop {
                    storage: sid.clone(),
                    name: name.clone(),
                },
            });
        }
        Err(e) => w = w.fail(e.0),
    }
    let upid = ctx.start_task(&node, w)?;
    if delay.is_some() {
        let done = ctx.with(|c| {
            c.tasks()
                .get(&upid)
                .ok()
                .and_then(|t| t.exitstatus().map(str::to_string))
        });
        match done.as_deref() {
            Some("OK") => return Ok(Value::Null.into()),
            Some(s) if s.starts_with("WARNINGS") => return Ok(Value::Null.into()),
            Some(e) => return Err(Error::failed(e.to_string())),
            None => {}
        }
    }
    Ok(json!(upid).into())
}

/// `POST .../content/{volume}` (copy): task `imgcopy` with an empty id.
fn content_copy(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let (sid, name) = volume_of(ctx, "volume")?;
    let (tsid, tname) = volume_of(ctx, "target")?;
    let target_node = match ctx.params.str("target_node") {
        Some(n) => ctx.with(|c| c.nodes().reach(&n).map(|n| n.name.clone()))?,
        None => node.clone(),
    };
    let now = ctx.now();
    let outcome = ctx.with(|c| -> Result<std::result::Result<Volume, TaskFailure>> {
        let s = c.storages().usable_storage(&sid, &node)?.clone();
        let Some(vol) = c.storages().volumes().get(&s, &node, &name).cloned() else {
            return Ok(Err(TaskFailure(format!(
                "volume_size_info on '{sid}:{name}' failed - no format"
            ))));
        };
        let t = match c.storages().usable_storage(&tsid, &target_node) {
            Ok(t) => t.clone(),
            Err(e) => return Ok(Err(e.into())),
        };
        if c.storages()
            .volumes()
            .get(&t, &target_node, &tname)
            .is_some()
        {
            return Ok(Err(TaskFailure(format!(
                "volume '{tsid}:{tname}' already exists on '{target_node}'"
            ))));
        }
        let mut copy = vol;
        copy.storage.clone_from(&tsid);
        copy.name.clone_from(&tname);
        copy.ctime = now;
        Ok(Ok(copy))
    })?;
    let w = Worker::new("imgcopy", "")
        .log("DEBUG: starting worker {upid}")
        .log_end("DEBUG: end worker {upid}");
    let w = match outcome {
        Ok(copy) => w.effect(storage_content::put_effect(&target_node, copy)),
        Err(e) => w.fail(e.0),
    };
    // The `{upid}` in its lines becomes the task's UPID.
    let upid = ctx.start_task(&node, w)?;
    Ok(json!(upid).into())
}

/// `POST /nodes/{node}/storage/{storage}/download-url`: task `download`.
/// Nothing is fetched: the file's size and checksum come from the table
/// of known URLs.
fn download_url(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let mut req = storage_content::DownloadRequest {
        node: node.clone(),
        storage: ctx.param("storage")?,
        content: ctx.param("content")?,
        filename: ctx.param("filename")?,
        url: ctx.param("url")?,
        checksum: ctx.params.str("checksum"),
        checksum_algorithm: ctx.params.str("checksum-algorithm"),
        compression: ctx.params.str("compression"),
        verify_certificates: ctx.params.bool("verify-certificates")?.unwrap_or(true),
        pid: 0,
        now: ctx.now(),
    };
    let worker = ctx.with(|c| {
        req.pid = c.tasks().next_pid();
        c.storages().download_task(&req)
    })?;
    Ok(json!(ctx.start_task(&node, worker)?).into())
}

/// `POST /nodes/{node}/storage/{storage}/upload`: task `imgcopy`. The
/// file part was streamed and hashed on arrival (see `api::upload`);
/// only its size and digests are kept.
fn upload(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let tmpfilename = ctx
        .params
        .str("tmpfilename")
        .filter(|t| !t.is_empty())
        .ok_or_else(|| Error::failed("missing temporary file name"))?;
    let Some(info) = ctx.upload.as_ref().filter(|u| u.tmpfilename == tmpfilename) else {
        return Err(Error::not_found(format!(
            "temporary file '{tmpfilename}' does not exist"
        )));
    };
    let checksum = match (
        ctx.params.str("checksum"),
        ctx.params.str("checksum-algorithm"),
    ) {
        (Some(expect), Some(alg)) => {
            let got = info.digests.get(&alg).cloned().unwrap_or_default();
            Some((expect, got))
        }
        _ => None,
    };
    let req = storage_content::UploadRequest {
        node: node.clone(),
        storage: ctx.param("storage")?,
        content: ctx.param("content")?,
        filename: ctx.param("filename")?,
        tmpfilename,
        size: info.size,
        checksum,
        now: ctx.now(),
    };
    let worker = ctx.with(|c| c.storages().upload_task(&req))?;
    Ok(json!(ctx.start_task(&node, worker)?).into())
}

/// `GET /nodes/{node}/query-url-metadata`.
fn query_url_metadata(ctx: &Ctx<'_>) -> Result<Reply> {
    ctx.node()?;
    let url = ctx.param("url")?;
    let verify = ctx.params.bool("verify-certificates")?.unwrap_or(true);
    Ok(ctx
        .with(|c| {
            c.storages()
                .query_url_metadata(&url, verify)
                .map(|m| view::to_json(&m))
        })?
        .into())
}
