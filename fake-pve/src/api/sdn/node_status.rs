//! `/nodes/{node}/sdn`: a node's view of the applied SDN configuration
//! (pve-network `API2/Network/SDN/Nodes/{Zones,Zone,Vnet}.pm`): the
//! zones with their status, a zone's VNets and its bridges as the
//! kernel has them (`bridges`). The views that read FRR's routing tables
//! (`ip-vrf`, `mac-vrf`) and the fabrics' views are not handled here.

use serde_json::{Value, json};

use super::{check_vnet_access, view};
use crate::api::{Ctx, Reply, Route, get};
use crate::model::Result;

/// The routes of the node's SDN views.
pub fn routes() -> Vec<Route> {
    vec![
        get("/nodes/{node}/sdn/zones", zones_status),
        get("/nodes/{node}/sdn/zones/{zone}/content", zone_content),
        get("/nodes/{node}/sdn/zones/{zone}/bridges", bridges),
        get("/nodes/{node}/sdn/zones/{zone}/ip-vrf", ip_vrf).checks_only(),
        get("/nodes/{node}/sdn/vnets/{vnet}", vnet_diridx),
        get("/nodes/{node}/sdn/vnets/{vnet}/mac-vrf", vnet_mac_vrf).checks_only(),
    ]
}

/// `GET /nodes/{node}/sdn/zones` (`index`): the running zones on the
/// node and their status; nothing before the first apply.
fn zones_status(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let items = ctx.with(|c| {
        c.sdn()
            .node_zones(&node)
            .iter()
            .map(|(zone, status)| view::node_zone(zone, status))
            .collect()
    });
    Ok(Value::Array(items).into())
}

/// `GET /nodes/{node}/sdn/zones/{zone}/content` (`index`): the zone's
/// running VNets on the node with their status.
fn zone_content(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let zone = ctx.param("zone")?;
    let items = ctx.with(|c| {
        c.sdn()
            .zone_content(&node, &zone)
            .iter()
            .map(|(vnet, v)| view::zone_vnet(vnet, v))
            .collect()
    });
    Ok(Value::Array(items).into())
}

/// `GET /nodes/{node}/sdn/zones/{zone}/bridges` (9.x): the zone's
/// bridges on the node with their ports, those the caller may audit.
fn bridges(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let zone = ctx.param("zone")?;
    let now = ctx.now();
    let items = ctx.with(|c| {
        crate::model::sdn::zone_bridges(c, &node, &zone, now, |z, b| {
            super::may(ctx, c, &format!("/sdn/zones/{z}/{b}"), &super::AUDIT)
        })
        .map(|l| l.iter().map(view::zone_bridge).collect())
    })?;
    Ok(Value::Array(items).into())
}

/// `GET /nodes/{node}/sdn/vnets/{vnet}` (9.x `diridx`): SDN.Audit on the
/// VNet of the configuration as written.
fn vnet_diridx(ctx: &Ctx<'_>) -> Result<Reply> {
    let vnet = ctx.param("vnet")?;
    ctx.with(|c| check_vnet_access(ctx, c, &vnet, &["SDN.Audit"]))?;
    Ok(json!([{ "subdir": "mac-vrf" }]).into())
}

/// `GET /nodes/{node}/sdn/vnets/{vnet}/mac-vrf` (9.x): SDN.Audit on the
/// VNet, then a running VNet of a running EVPN zone on the node, as PVE
/// checks them before reading FRR's EVPN table, which is not emulated
/// (501).
fn vnet_mac_vrf(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.param("node")?;
    let vnet = ctx.param("vnet")?;
    ctx.with(|c| {
        check_vnet_access(ctx, c, &vnet, &["SDN.Audit"])?;
        c.sdn().check_mac_vrf(&node, &vnet)
    })?;
    Err(crate::model::Error::NotImplemented(format!(
        "Method 'GET /api2/json/nodes/{node}/sdn/vnets/{vnet}/mac-vrf' is not emulated by fake-pve"
    )))
}

/// `GET /nodes/{node}/sdn/zones/{zone}/ip-vrf` (9.x): the zone must be
/// a running EVPN zone on the node, as PVE checks before it reads the
/// zone's VRF from FRR, which is not emulated (501).
fn ip_vrf(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let zone = ctx.param("zone")?;
    ctx.with(|c| c.sdn().check_ip_vrf(&node, &zone))?;
    Err(crate::model::Error::NotImplemented(format!(
        "Method 'GET /api2/json/nodes/{node}/sdn/zones/{zone}/ip-vrf' is not emulated by fake-pve"
    )))
}
