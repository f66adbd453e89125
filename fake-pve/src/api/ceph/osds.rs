//! OSDs (pve-manager `API2/Ceph/OSD.pm`): the tree of `osd df tree`,
//! `cephcreateosd` on an unused disk of the node, `cephdestroyosd` of
//! an OSD that is out and down, `in`, `out`, `scrub`, the metadata and
//! the logical volume.

use serde_json::{Value, json};

use super::{check, inited_and_connected, node_of, not_emulated, view};
use crate::api::{Ctx, Reply, Route, delete, get, post};
use crate::model::ceph::daemons::CephOp;
use crate::model::ceph::{Binary, NewOsd};
use crate::model::node_hw::disks::Dev;
use crate::model::{Error, Result, TaskEffect, Worker};
use crate::version::PveVersion;

/// The routes of the OSDs.
pub fn routes() -> Vec<Route> {
    vec![
        get("/nodes/{node}/ceph/osd", osd_index),
        post("/nodes/{node}/ceph/osd", createosd),
        delete("/nodes/{node}/ceph/osd/{osdid}", destroyosd),
        post("/nodes/{node}/ceph/osd/{osdid}/in", osd_in),
        post("/nodes/{node}/ceph/osd/{osdid}/out", osd_out),
        post("/nodes/{node}/ceph/osd/{osdid}/scrub", osd_scrub),
        get("/nodes/{node}/ceph/osd/{osdid}/metadata", osddetails),
        get("/nodes/{node}/ceph/osd/{osdid}/lv-info", osdvolume),
    ]
}

/// `GET /nodes/{node}/ceph/osd`.
fn osd_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    Ok(ctx
        .with(|c| {
            let ceph = c.ceph();
            view::osd_tree(ceph, &|h| ceph.install_of(h).cloned())
        })
        .into())
}

/// `POST /nodes/{node}/ceph/osd`.
fn createosd(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    check(ctx, &node, |c, n| c.check_inited(n))?;
    ctx.with(|c| c.ceph_mut().link(&node));
    check(ctx, &node, |c, n| {
        c.check_installed(n, Binary::Osd)?;
        c.check_installed(n, Binary::Volume)
    })?;
    if ctx.params.int("osds-per-device", Some(1), None)?.is_some() {
        for t in ["db_dev", "wal_dev"] {
            if ctx.params.str(t).is_some() {
                return Err(Error::invalid(
                    t,
                    format!("cannot use 'osds-per-device' parameter with '{t}'"),
                ));
            }
        }
    }
    let ip = ctx.with(|c| {
        c.nodes()
            .get(&node)
            .map(|n| n.ip.clone())
            .unwrap_or_default()
    });
    let net = ctx.with(|c| {
        let conf = c.ceph().conf()?;
        conf.get("global", "cluster_network")
            .or_else(|| conf.get("global", "public_network"))
            .map(str::to_string)
    });
    if let Some(net) = net {
        let nets: Vec<&str> = net
            .split([',', ';', ' '])
            .filter(|s| !s.is_empty())
            .collect();
        if !nets
            .iter()
            .any(|n| crate::model::ceph::daemons::in_cidr(&ip, n))
        {
            return Err(Error::failed(format!(
                "No address from ceph cluster network ({net}) found on node '{node}'. Check your network config."
            )));
        }
    }
    let dev = ctx.param("dev")?;
    let (devpath, size, kind) = ctx.with(|c| {
        let hw = c.hardware().node(&node);
        let (d, path) = hw.verify_blockdev_path(&dev)?;
        let (used, size, kind) = match d {
            Dev::Disk(i) => {
                let disk = &hw.disks()[i];
                (disk.is_used(), disk.size, disk.kind)
            }
            Dev::Part(i, j) => {
                let disk = &hw.disks()[i];
                let p = &disk.partitions[j];
                (p.usage().is_some(), p.size, disk.kind)
            }
        };
        if used {
            return Err(Error::failed(format!("device '{path}' is already in use")));
        }
        Ok::<_, Error>((path, size, kind))
    })?;
    if ctx.params.str("db_dev").is_some()
        || ctx.params.str("wal_dev").is_some()
        || ctx.params.get("osds-per-device").is_some()
    {
        return Err(not_emulated("POST", &format!("/nodes/{node}/ceph/osd")));
    }
    check(ctx, &node, |c, n| c.rados(n))?;
    let class = ctx
        .params
        .str("crush-device-class")
        .unwrap_or_else(|| match kind.as_str() {
            "usb" => "hdd".to_string(),
            k => k.to_string(),
        });
    let (uuid, vg_uuid) = {
        let mut rq = ctx.rq();
        (rq.uuid_v4(), rq.uuid_v4())
    };
    let osd = NewOsd {
        devpath: devpath.clone(),
        size,
        class,
        encrypted: ctx.params.bool("encrypted")?.unwrap_or(false),
        uuid,
        vg_uuid,
    };
    let name = devpath.trim_start_matches("/dev/").to_string();
    let worker = Worker::new("cephcreateosd", &name).effect(TaskEffect::Ceph {
        node: node.clone(),
        op: CephOp::CreateOsd { osd },
    });
    Ok(json!(ctx.start_task(&node, worker)?).into())
}

/// The line of pve-manager's `OSD.pm` where `destroyosd` dies without a
/// newline (Perl appends where).
fn belongs_die_line(v: PveVersion) -> u32 {
    match v {
        PveVersion::V8_4 => 966,
        PveVersion::V9_1 => 989,
        PveVersion::V9_2 => 1008,
    }
}

/// `DELETE /nodes/{node}/ceph/osd/{osdid}`.
fn destroyosd(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    let id = ctx.param("osdid")?;
    let cleanup = ctx.params.bool("cleanup")?.unwrap_or(false);
    let line = ctx.with(|c| belongs_die_line(c.version()));
    let n = ctx.with(|c| c.ceph().prepare_destroy_osd(&node, &id, line))?;
    let worker = Worker::new("cephdestroyosd", &format!("osd.{n}")).effect(TaskEffect::Ceph {
        node: node.clone(),
        op: CephOp::DestroyOsd { id: n, cleanup },
    });
    Ok(json!(ctx.start_task(&node, worker)?).into())
}

/// `in` and `out`: the OSD must exist.
fn set_in(ctx: &Ctx<'_>, is_in: bool) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    let id = ctx.param("osdid")?;
    ctx.with(|c| c.ceph_mut().set_osd_in(&id, is_in))?;
    Ok(Value::Null.into())
}

/// `POST /nodes/{node}/ceph/osd/{osdid}/in`.
fn osd_in(ctx: &Ctx<'_>) -> Result<Reply> {
    set_in(ctx, true)
}

/// `POST /nodes/{node}/ceph/osd/{osdid}/out`.
fn osd_out(ctx: &Ctx<'_>) -> Result<Reply> {
    set_in(ctx, false)
}

/// `POST /nodes/{node}/ceph/osd/{osdid}/scrub`.
fn osd_scrub(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    let id = ctx.param("osdid")?;
    ctx.params.bool("deep")?;
    check(ctx, &node, |c, _| c.scrub_osd(&id))?;
    Ok(Value::Null.into())
}

/// `GET /nodes/{node}/ceph/osd/{osdid}/metadata`.
fn osddetails(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    inited_and_connected(ctx, &node)?;
    let id = ctx.param("osdid")?;
    ctx.with(|c| {
        let ceph = c.ceph();
        let osd = id
            .parse::<u32>()
            .ok()
            .and_then(|n| ceph.osd(n))
            .filter(|o| o.host == node)
            .ok_or_else(|| Error::failed(format!("OSD '{id}' does not exists on host '{node}'")))?;
        let ip = c
            .nodes()
            .get(&node)
            .map(|n| n.ip.clone())
            .unwrap_or_default();
        let v92 = c.version() == PveVersion::V9_2;
        Ok(view::osd_details(osd, ceph.install_of(&node), &ip, v92).into())
    })
}

/// `GET /nodes/{node}/ceph/osd/{osdid}/lv-info`.
fn osdvolume(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = node_of(ctx)?;
    check(ctx, &node, |c, n| c.check_inited(n))?;
    let id = ctx.param("osdid")?;
    let kind = ctx.params.str("type").unwrap_or_else(|| "block".into());
    ctx.with(|c| {
        let osd = id
            .parse::<u32>()
            .ok()
            .and_then(|n| c.ceph().osd(n))
            .filter(|o| o.host == node)
            .ok_or_else(|| {
                Error::failed(format!(
                    "OSD '{id}' not found in 'ceph-volume lvm list' on node '{node}'.\n\
                     Maybe it was created before LVM became the default?"
                ))
            })?;
        if kind != "block" {
            return Err(Error::failed(format!(
                "volume type '{kind}' not found for OSD {id}"
            )));
        }
        Ok(view::osd_volume(osd).into())
    })
}
