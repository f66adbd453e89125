//! `/cluster/sdn`: zones, VNets, subnets, controllers, IPAMs and DNS
//! servers with their pending and running configuration, apply, the 9.x
//! global lock and rollback, the VNets' IPs and the PVE IPAM's status
//! (pve-network `API2/Network/SDN.pm` and `API2/Network/SDN/*.pm`).
//! The VNet firewall ([`vnet_firewall`]) and a node's SDN views
//! ([`node_status`]) are submodules, the answers' JSON is built in
//! [`view`]; the 9.x fabrics are not handled here. The 9.x dry run
//! answers the diffs of the files [`crate::model::sdn::generate`]
//! renders.

pub mod node_status;
pub mod view;
pub mod vnet_firewall;

use serde_json::{Value, json};

use super::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::sdn::config::canonical;
use crate::model::sdn::{Entry, File, Sdn, View};
use crate::model::{Cluster, Error, Result, Worker};

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/cluster/sdn", index),
        put("/cluster/sdn", reload),
        post("/cluster/sdn/lock", lock),
        delete("/cluster/sdn/lock", release_lock),
        post("/cluster/sdn/rollback", rollback),
        get("/cluster/sdn/dry-run", dry_run),
        get("/cluster/sdn/zones", zones_index),
        post("/cluster/sdn/zones", create_zone),
        get("/cluster/sdn/zones/{zone}", read_zone),
        put("/cluster/sdn/zones/{zone}", update_zone),
        delete("/cluster/sdn/zones/{zone}", delete_zone),
        get("/cluster/sdn/vnets", vnets_index),
        post("/cluster/sdn/vnets", create_vnet),
        get("/cluster/sdn/vnets/{vnet}", read_vnet),
        put("/cluster/sdn/vnets/{vnet}", update_vnet),
        delete("/cluster/sdn/vnets/{vnet}", delete_vnet),
        get("/cluster/sdn/vnets/{vnet}/subnets", subnets_index),
        post("/cluster/sdn/vnets/{vnet}/subnets", create_subnet),
        get("/cluster/sdn/vnets/{vnet}/subnets/{subnet}", read_subnet),
        put("/cluster/sdn/vnets/{vnet}/subnets/{subnet}", update_subnet),
        delete("/cluster/sdn/vnets/{vnet}/subnets/{subnet}", delete_subnet),
        post("/cluster/sdn/vnets/{vnet}/ips", ipcreate),
        put("/cluster/sdn/vnets/{vnet}/ips", ipupdate),
        delete("/cluster/sdn/vnets/{vnet}/ips", ipdelete),
        get("/cluster/sdn/controllers", controllers_index),
        post("/cluster/sdn/controllers", create_controller),
        get("/cluster/sdn/controllers/{controller}", read_controller),
        put("/cluster/sdn/controllers/{controller}", update_controller),
        delete("/cluster/sdn/controllers/{controller}", delete_controller),
        get("/cluster/sdn/ipams", ipams_index),
        post("/cluster/sdn/ipams", create_ipam),
        get("/cluster/sdn/ipams/{ipam}", read_ipam),
        put("/cluster/sdn/ipams/{ipam}", update_ipam),
        delete("/cluster/sdn/ipams/{ipam}", delete_ipam),
        get("/cluster/sdn/ipams/{ipam}/status", ipamindex),
        get("/cluster/sdn/dns", dns_index),
        post("/cluster/sdn/dns", create_dns),
        get("/cluster/sdn/dns/{dns}", read_dns),
        put("/cluster/sdn/dns/{dns}", update_dns),
        delete("/cluster/sdn/dns/{dns}", delete_dns),
    ]
}

/// `check_any` on `path`, refusing with PVE's permission message.
fn check_any(ctx: &Ctx<'_>, c: &Cluster, path: &str, privs: &[&str]) -> Result<()> {
    let who = ctx.who()?;
    if c.access().has_any(who, path, privs) {
        Ok(())
    } else {
        Err(Error::permission(path, privs))
    }
}

fn may(ctx: &Ctx<'_>, c: &Cluster, path: &str, privs: &[&str]) -> bool {
    ctx.who().is_ok_and(|w| c.access().has_any(w, path, privs))
}

const AUDIT: [&str; 2] = ["SDN.Audit", "SDN.Allocate"];

/// `$check_vnet_access`: the VNet must exist; the caller needs `privs`
/// on `/sdn/zones/<zone>/<vnet>`.
fn check_vnet_access(ctx: &Ctx<'_>, c: &Cluster, vnet: &str, privs: &[&str]) -> Result<()> {
    let zone = c.sdn().vnet_zone(vnet)?;
    check_any(ctx, c, &format!("/sdn/zones/{zone}/{vnet}"), privs)
}

/// The sections of a file in a view that `keep(id, section)` keeps, as
/// the index answers them.
fn listed(c: &Cluster, f: File, v: View, keep: impl Fn(&str, &Entry) -> bool) -> Value {
    let l = c.sdn().sections(f, v);
    let items = l
        .items
        .iter()
        .filter(|(id, e)| keep(id, e))
        .map(|(id, e)| view::section(f, id, e, l.digest.as_deref()))
        .collect();
    Value::Array(items)
}

/// Whether a section is of the type a list asks for (`type`).
fn of_type(e: &Entry, kind: Option<&str>) -> bool {
    kind.is_none_or(|k| e.values.get("type").and_then(Value::as_str) == Some(k))
}

/// `GET /cluster/sdn`.
fn index(ctx: &Ctx<'_>) -> Result<Reply> {
    let v9 = ctx.with(|c| c.version().is_v9());
    Ok(view::index(v9).into())
}

/// `PUT /cluster/sdn`: the running configuration becomes the pending
/// one, then a `reloadnetworkall` task reloads every node's network.
fn reload(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?.to_string();
    let token = ctx.params.str("lock-token");
    let release = ctx.params.bool("release-lock")?.unwrap_or(true);
    let now_ms = ctx.now_ms();
    let ms = ctx.task_ms("reloadnetworkall");
    let upid = ctx.with(|c| {
        c.sdn_mut()
            .commit_at(token.as_deref(), release, now_ms / 1000)?;
        let local = c.nodes().local().to_string();
        let mut worker = Worker::new("reloadnetworkall", "");
        for n in c.nodes().iter() {
            worker = worker.log(format!("{}: reloading network config", n.name));
        }
        Ok::<_, Error>(c.start_task(&local, worker, &who, now_ms, ms))
    })?;
    Ok(json!(upid).into())
}

/// `GET /cluster/sdn/dry-run` (9.x): the diffs of the node's
/// interfaces and FRR files between the running configuration and the
/// configuration as written.
fn dry_run(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let now = ctx.now();
    let d = ctx.with(|c| crate::model::sdn::generate::cluster::dry_run(c, &node, now));
    Ok(view::dry_run(&d).into())
}

/// `POST /cluster/sdn/lock` (9.x).
fn lock(ctx: &Ctx<'_>) -> Result<Reply> {
    let allow = ctx.params.bool("allow-pending")?.unwrap_or(false);
    let token = ctx.with(|c| c.sdn_mut().lock(allow, &mut ctx.rq()))?;
    Ok(json!(token).into())
}

/// `DELETE /cluster/sdn/lock` (9.x).
fn release_lock(ctx: &Ctx<'_>) -> Result<Reply> {
    let token = ctx.params.str("lock-token");
    let force = ctx.params.bool("force")?.unwrap_or(false);
    ctx.with(|c| c.sdn_mut().release_lock(token.as_deref(), force))?;
    Ok(Value::Null.into())
}

/// `POST /cluster/sdn/rollback` (9.x).
fn rollback(ctx: &Ctx<'_>) -> Result<Reply> {
    let token = ctx.params.str("lock-token");
    let release = ctx.params.bool("release-lock")?.unwrap_or(true);
    ctx.with(|c| c.sdn_mut().rollback(token.as_deref(), release))?;
    Ok(Value::Null.into())
}

// ------------------------------------------------------------------ zones

/// `GET /cluster/sdn/zones`: the zones the caller may audit.
fn zones_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let v = ctx.params.sdn_view()?;
    let kind = ctx.params.str("type");
    let items = ctx.with(|c| {
        listed(c, File::Zones, v, |id, e| {
            may(ctx, c, &format!("/sdn/zones/{id}"), &AUDIT) && of_type(e, kind.as_deref())
        })
    });
    Ok(items.into())
}

fn read_zone(ctx: &Ctx<'_>) -> Result<Reply> {
    read(ctx, File::Zones)
}

fn read(ctx: &Ctx<'_>, f: File) -> Result<Reply> {
    let id = ctx.param(f.id_key())?;
    let v = if matches!(f, File::Ipams | File::Dns) {
        View::Current
    } else {
        ctx.params.sdn_view()?
    };
    let s = ctx.with(|c| c.sdn().read(f, &id, v))?;
    Ok(view::section(f, &id, &s.entry, s.digest.as_deref()).into())
}

fn create_zone(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| {
        let v = c.version();
        c.sdn_mut().create_zone(v, &p, &mut ctx.rq())
    })?;
    Ok(Value::Null.into())
}

fn update_zone(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| {
        let v = c.version();
        c.sdn_mut().update_zone(v, &p, &mut ctx.rq())
    })?;
    Ok(Value::Null.into())
}

fn delete_zone(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| c.sdn_mut().delete_zone(&p))?;
    Ok(Value::Null.into())
}

// ------------------------------------------------------------------ vnets

/// `GET /cluster/sdn/vnets`: the VNets the caller may audit on
/// `/sdn/zones/<zone>/<vnet>`.
fn vnets_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let v = ctx.params.sdn_view()?;
    let items = ctx.with(|c| {
        listed(c, File::Vnets, v, |id, e| {
            let zone = e.text_or_pending("zone").unwrap_or_default();
            may(ctx, c, &format!("/sdn/zones/{zone}/{id}"), &AUDIT)
        })
    });
    Ok(items.into())
}

fn read_vnet(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("vnet")?;
    let v = ctx.params.sdn_view()?;
    let s = ctx.with(|c| {
        check_vnet_access(ctx, c, &id, &AUDIT)?;
        c.sdn().read(File::Vnets, &id, v)
    })?;
    Ok(view::section(File::Vnets, &id, &s.entry, s.digest.as_deref()).into())
}

fn create_vnet(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| c.sdn_mut().create_vnet(&p))?;
    Ok(Value::Null.into())
}

fn update_vnet(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("vnet")?;
    let p = ctx.params.to_map();
    ctx.with(|c| {
        check_vnet_access(ctx, c, &id, &["SDN.Allocate"])?;
        c.sdn_mut().update_vnet(&p)
    })?;
    Ok(Value::Null.into())
}

fn delete_vnet(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("vnet")?;
    let p = ctx.params.to_map();
    ctx.with(|c| {
        check_vnet_access(ctx, c, &id, &["SDN.Allocate"])?;
        c.sdn_mut().delete_vnet(&p)
    })?;
    Ok(Value::Null.into())
}

// ---------------------------------------------------------------- subnets

/// `GET /cluster/sdn/vnets/{vnet}/subnets`: the VNet's subnets.
fn subnets_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let vnet = ctx.param("vnet")?;
    let v = ctx.params.sdn_view()?;
    let items = ctx.with(|c| {
        check_vnet_access(ctx, c, &vnet, &AUDIT)?;
        Ok::<_, Error>(listed(c, File::Subnets, v, |_, e| {
            e.values.get("vnet").and_then(Value::as_str) == Some(vnet.as_str())
        }))
    })?;
    Ok(items.into())
}

fn read_subnet(ctx: &Ctx<'_>) -> Result<Reply> {
    let vnet = ctx.param("vnet")?;
    let id = ctx.param("subnet")?;
    let v = ctx.params.sdn_view()?;
    let s = ctx.with(|c| {
        check_vnet_access(ctx, c, &vnet, &AUDIT)?;
        c.sdn().read(File::Subnets, &id, v)
    })?;
    if s.entry.values.get("vnet").and_then(Value::as_str) != Some(vnet.as_str()) {
        return Err(Error::invalid("vnet", "wrong vnet"));
    }
    Ok(view::section(File::Subnets, &id, &s.entry, s.digest.as_deref()).into())
}

fn subnet_call(
    ctx: &Ctx<'_>,
    f: fn(&mut Sdn, &crate::model::sdn::config::Params) -> Result<()>,
) -> Result<Reply> {
    let vnet = ctx.param("vnet")?;
    let p = ctx.params.to_map();
    ctx.with(|c| {
        check_vnet_access(ctx, c, &vnet, &["SDN.Allocate"])?;
        f(c.sdn_mut(), &p)
    })?;
    Ok(Value::Null.into())
}

fn create_subnet(ctx: &Ctx<'_>) -> Result<Reply> {
    subnet_call(ctx, Sdn::create_subnet)
}

fn update_subnet(ctx: &Ctx<'_>) -> Result<Reply> {
    subnet_call(ctx, Sdn::update_subnet)
}

fn delete_subnet(ctx: &Ctx<'_>) -> Result<Reply> {
    subnet_call(ctx, Sdn::delete_subnet)
}

// -------------------------------------------------------------------- ips

fn ipcreate(ctx: &Ctx<'_>) -> Result<Reply> {
    let vnet = ctx.param("vnet")?;
    let ip = canonical(&ctx.param("ip")?);
    let mac = ctx.params.str("mac");
    ctx.with(|c| c.sdn_mut().ipcreate(&vnet, &ip, mac.as_deref()))?;
    Ok(Value::Null.into())
}

fn ipupdate(ctx: &Ctx<'_>) -> Result<Reply> {
    let vnet = ctx.param("vnet")?;
    let ip = canonical(&ctx.param("ip")?);
    let mac = ctx.params.str("mac");
    let vmid = ctx
        .params
        .int("vmid", None, None)?
        .and_then(|v| u32::try_from(v).ok());
    ctx.with(|c| c.sdn_mut().ipupdate(&vnet, &ip, mac.as_deref(), vmid))?;
    Ok(Value::Null.into())
}

fn ipdelete(ctx: &Ctx<'_>) -> Result<Reply> {
    let vnet = ctx.param("vnet")?;
    let ip = canonical(&ctx.param("ip")?);
    ctx.with(|c| c.sdn_mut().ipdelete(&vnet, &ip))?;
    Ok(Value::Null.into())
}

// ------------------------------------------- controllers, IPAMs and DNS

fn plugin_index(ctx: &Ctx<'_>, f: File, area: &str) -> Result<Reply> {
    let v = if matches!(f, File::Ipams | File::Dns) {
        View::Current
    } else {
        ctx.params.sdn_view()?
    };
    let kind = ctx.params.str("type");
    let items = ctx.with(|c| {
        listed(c, f, v, |id, e| {
            may(ctx, c, &format!("/sdn/{area}/{id}"), &AUDIT) && of_type(e, kind.as_deref())
        })
    });
    Ok(items.into())
}

/// The cluster's node names (`PVE::Cluster::get_nodelist`), where a
/// 9.2 evpn controller without `nodes` runs.
fn node_names(c: &Cluster) -> Vec<String> {
    c.nodes().iter().map(|n| n.name.clone()).collect()
}

fn plugin_create(ctx: &Ctx<'_>, f: File) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| {
        let v = c.version();
        let nodes = node_names(c);
        c.sdn_mut().create_plugin(v, f, &p, &nodes)
    })?;
    Ok(Value::Null.into())
}

fn plugin_update(ctx: &Ctx<'_>, f: File) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| {
        let v = c.version();
        let nodes = node_names(c);
        c.sdn_mut().update_plugin(v, f, &p, &nodes)
    })?;
    Ok(Value::Null.into())
}

fn plugin_delete(ctx: &Ctx<'_>, f: File) -> Result<Reply> {
    let p = ctx.params.to_map();
    ctx.with(|c| c.sdn_mut().delete_plugin(f, &p))?;
    Ok(Value::Null.into())
}

fn controllers_index(ctx: &Ctx<'_>) -> Result<Reply> {
    plugin_index(ctx, File::Controllers, "controllers")
}
fn create_controller(ctx: &Ctx<'_>) -> Result<Reply> {
    plugin_create(ctx, File::Controllers)
}
fn read_controller(ctx: &Ctx<'_>) -> Result<Reply> {
    read(ctx, File::Controllers)
}
fn update_controller(ctx: &Ctx<'_>) -> Result<Reply> {
    plugin_update(ctx, File::Controllers)
}
fn delete_controller(ctx: &Ctx<'_>) -> Result<Reply> {
    plugin_delete(ctx, File::Controllers)
}

fn ipams_index(ctx: &Ctx<'_>) -> Result<Reply> {
    plugin_index(ctx, File::Ipams, "ipams")
}
fn create_ipam(ctx: &Ctx<'_>) -> Result<Reply> {
    plugin_create(ctx, File::Ipams)
}
fn read_ipam(ctx: &Ctx<'_>) -> Result<Reply> {
    read(ctx, File::Ipams)
}
fn update_ipam(ctx: &Ctx<'_>) -> Result<Reply> {
    plugin_update(ctx, File::Ipams)
}
fn delete_ipam(ctx: &Ctx<'_>) -> Result<Reply> {
    plugin_delete(ctx, File::Ipams)
}

/// `GET /cluster/sdn/ipams/{ipam}/status`.
fn ipamindex(ctx: &Ctx<'_>) -> Result<Reply> {
    let ipam = ctx.param("ipam")?;
    let items = ctx.with(|c| {
        let v9 = c.version().is_v9();
        let rows = c.sdn().ipam_status(&ipam, |zone, vnet| {
            may(ctx, c, &format!("/sdn/zones/{zone}/{vnet}"), &AUDIT)
        })?;
        Ok::<_, Error>(rows.iter().map(|a| view::ipam_address(a, v9)).collect())
    })?;
    Ok(Value::Array(items).into())
}

fn dns_index(ctx: &Ctx<'_>) -> Result<Reply> {
    plugin_index(ctx, File::Dns, "dns")
}
fn create_dns(ctx: &Ctx<'_>) -> Result<Reply> {
    plugin_create(ctx, File::Dns)
}
fn read_dns(ctx: &Ctx<'_>) -> Result<Reply> {
    read(ctx, File::Dns)
}
fn update_dns(ctx: &Ctx<'_>) -> Result<Reply> {
    plugin_update(ctx, File::Dns)
}
fn delete_dns(ctx: &Ctx<'_>) -> Result<Reply> {
    plugin_delete(ctx, File::Dns)
}
