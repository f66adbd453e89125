//! CephFS (pve-manager `API2/Ceph/FS.pm`): the list of `fs ls`, the
//! tasks `cephfscreate` and `cephdestroyfs`.

use serde_json::{Value, json};

use super::{check, inited_and_connected, node_of};
use crate::api::{Ctx, Reply, Route, delete, get, post};
use crate::model::ceph::FsOp;
use crate::model::ceph::daemons::CephOp;
use crate::model::{Error, Result, TaskEffect, Worker};
use crate::version::PveVersion;

/// The routes of CephFS.
pub fn routes() -> Vec<Route> {
    vec![
        get("/nodes/{node}/ceph/fs", fs_index),
        post("/nodes/{node}/ceph/fs/{name}", createfs),
        delete("/nodes/{node}/ceph/fs/{name}", destroyfs),
    ]
}

/// A file system task on `node`.
fn task(ctx: &Ctx<'_>, node: &str, kind: &str, id: &str, fs: FsOp) -> Result<Reply> {
    let worker = Worker::new(kind, id).effect(TaskEffect::Ceph {
        node: node.to_string(),
        op: CephOp::Fs { fs },
    });
    Ok(json!(ctx.start_task(node, worker)?).into())
}

/// `GET /nodes/{node}/ceph/fs`: on 9.2 with the pools' ids and every
/// data pool.
fn fs_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    Ok(ctx
        .with(|c| {
            let ceph = c.ceph();
            let v92 = c.version() == PveVersion::V9_2;
            Value::Array(
                ceph.filesystems()
                    .iter()
                    .map(|f| {
                        let mut v = json!({
                            "name": f.name,
                            "metadata_pool": f.metadata_pool,
                            "data_pool": f.data_pools.first(),
                        });
                        if v92 {
                            v["metadata_pool_id"] = json!(ceph.pool_id(&f.metadata_pool));
                            v["data_pools"] = json!(f.data_pools);
                            v["data_pool_ids"] = json!(
                                f.data_pools
                                    .iter()
                                    .filter_map(|p| ceph.pool_id(p))
                                    .collect::<Vec<_>>()
                            );
                        }
                        v
                    })
                    .collect(),
            )
        })
        .into())
}

/// `POST /nodes/{node}/ceph/fs/{name}`.
fn createfs(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    let name = ctx.params.str("name").unwrap_or_else(|| "cephfs".into());
    let pg_num = ctx
        .params
        .int("pg_num", Some(8), Some(32768))?
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(128);
    check(ctx, &node, |c, n| c.prepare_create_fs(n, &name))?;
    let add_storage = ctx.params.bool("add-storage")?.unwrap_or(false);
    if add_storage && ctx.with(|c| c.storage.find(&name).is_some()) {
        return Err(Error::failed(format!(
            "storage ID '{name}' already defined"
        )));
    }
    let id = name.clone();
    task(
        ctx,
        &node,
        "cephfscreate",
        &id,
        FsOp::Create {
            name,
            pg_num,
            add_storage,
        },
    )
}

/// `DELETE /nodes/{node}/ceph/fs/{name}` (9.2).
fn destroyfs(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    let name = ctx.param("name")?;
    if ctx.with(|c| !c.ceph().filesystems().iter().any(|f| f.name == name)) {
        return Err(Error::not_found(format!("no such cephfs '{name}'")));
    }
    let remove_storages = ctx.params.bool("remove-storages")?.unwrap_or(false);
    let remove_pools = ctx.params.bool("remove-pools")?.unwrap_or(false);
    let id = name.clone();
    task(
        ctx,
        &node,
        "cephdestroyfs",
        &id,
        FsOp::Destroy {
            name,
            remove_storages,
            remove_pools,
        },
    )
}
