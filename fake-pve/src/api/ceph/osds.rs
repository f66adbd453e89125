//! OSDs (pve-manager `API2/Ceph/OSD.pm`): the tree of `osd df tree`,
//! `cephcreateosd` on an unused disk of the node, `cephdestroyosd` of
//! an OSD that is out and down, `in`, `out`, `scrub`, the metadata and
//! the logical volume.

use serde_json::{Value, json};

use super::{check, inited_and_connected, node_of, not_emulated, view};
use crate::api::{Ctx, Reply, Route, delete, get, post};
use crate::model::ceph::daemons::CephOp;
use crate::model::ceph::osds::{NewLv, disk_requirements};
use crate::model::ceph::{Binary, NewOsd};
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
    if ctx
        .params
        .int("osds-per-device", Some(1), None)?
        .is_some_and(|n| n != 0)
    {
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
    let mut names: Vec<(String, String)> = Vec::new();
    for t in ["dev", "db_dev", "wal_dev"] {
        let Some(given) = ctx.params.str(t).filter(|v| !v.is_empty()) else {
            if t == "dev" {
                ctx.param("dev")?;
            }
            continue;
        };
        let path = ctx.with(|c| {
            c.hardware()
                .node(&node)
                .verify_blockdev_path(&given)
                .map(|(_, p)| p)
        })?;
        if names.iter().any(|(_, p)| *p == path) {
            return Err(Error::invalid(
                t,
                format!("cannot chose '{path}' for more than one type."),
            ));
        }
        names.push((t.to_string(), path));
    }
    let path_of = |t: &str| names.iter().find(|(n, _)| n == t).map(|(_, p)| p.clone());
    let devpath = path_of("dev").unwrap_or_default();
    let (size, kind) = ctx.with(|c| {
        c.hardware()
            .node(&node)
            .osd_device_info(&devpath)
            .map(|i| (i.size, i.kind))
            .map_err(|_| Error::failed(format!("unable to get device info for '{devpath}'")))
    })?;
    let per_device = ctx
        .params
        .int("osds-per-device", Some(1), None)?
        .map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    let class_given = ctx.params.str("crush-device-class");
    let class = class_given.clone().unwrap_or_else(|| match kind.as_str() {
        "usb" => "hdd".to_string(),
        k => k.to_string(),
    });
    let mut osd = {
        let mut rq = ctx.rq();
        NewOsd {
            devpath: devpath.clone(),
            size,
            class,
            encrypted: false,
            uuid: rq.uuid_v4(),
            vg_uuid: rq.uuid_v4(),
            ..NewOsd::default()
        }
    };
    osd.encrypted = ctx.params.bool("encrypted")?.unwrap_or(false);
    osd.class_given = class_given;
    osd.per_device = per_device;
    for (t, slot) in [("db_dev", 0), ("wal_dev", 1)] {
        let Some(dev) = path_of(t) else { continue };
        let size = gib_param(ctx, &format!("{t}_size"))?;
        let mut rq = ctx.rq();
        let lv = NewLv {
            dev,
            size,
            vg_uuid: rq.uuid_v4(),
            lv_uuid: rq.uuid_v4(),
        };
        if slot == 0 {
            osd.db = Some(lv);
        } else {
            osd.wal = Some(lv);
        }
    }
    if let Some(n) = per_device {
        let mut rq = ctx.rq();
        osd.more_uuids = (1..n.min(64)).map(|_| rq.uuid_v4()).collect();
    }
    ctx.with(|c| {
        let hw = c.hardware().node(&node);
        disk_requirements(&hw, &osd)?;
        for lv in osd.db.iter().chain(osd.wal.iter()) {
            if hw.osd_device_info(&lv.dev)?.used.as_deref() == Some("partitions") {
                return Err(not_emulated("POST", &format!("/nodes/{node}/ceph/osd")));
            }
        }
        Ok::<_, Error>(())
    })?;
    check(ctx, &node, |c, n| c.rados(n))?;
    let name = devpath.trim_start_matches("/dev/").to_string();
    let worker = Worker::new("cephcreateosd", &name).effect(TaskEffect::Ceph {
        node: node.clone(),
        op: CephOp::CreateOsd { osd: Box::new(osd) },
    });
    Ok(json!(ctx.start_task(&node, worker)?).into())
}

/// A size in GiB (`db_dev_size`) as bytes, rounded up as PVE's
/// `convert_size` does.
fn gib_param(ctx: &Ctx<'_>, name: &str) -> Result<Option<u64>> {
    let Some(v) = ctx.params.get(name) else {
        return Ok(None);
    };
    let text = crate::api::params::value_text(v);
    let n: f64 = text
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite() && *n >= 0.0)
        .ok_or_else(|| {
            Error::invalid(name, format!("type check ('number') failed - got '{text}'"))
        })?;
    if n == 0.0 {
        return Ok(None);
    }
    Ok(Some((n * f64::from(1u32 << 30)).ceil() as u64))
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
        view::osd_volume(osd, &kind)
            .map(Into::into)
            .ok_or_else(|| Error::failed(format!("volume type '{kind}' not found for OSD {id}")))
    })
}
