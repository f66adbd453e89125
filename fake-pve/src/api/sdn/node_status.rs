//! `/nodes/{node}/sdn`: a node's view of the applied SDN configuration
//! (pve-network `API2/Network/SDN/Nodes/{Zones,Zone,Vnet}.pm`): the
//! zones with their status, a zone's VNets and its bridges as the
//! kernel has them (`bridges`), and the EVPN tables FRR holds (`ip-vrf`,
//! `mac-vrf`), derived from the model
//! ([`crate::model::sdn::generate::vrf`]). The fabrics' views are not
//! handled here.

use serde_json::{Value, json};

use super::{check_vnet_access, view};
use crate::api::{Ctx, Reply, Route, get};
use crate::model::Result;
use crate::model::sdn::generate;

/// The routes of the node's SDN views.
pub fn routes() -> Vec<Route> {
    vec![
        get("/nodes/{node}/sdn/zones", zones_status),
        get("/nodes/{node}/sdn/zones/{zone}/content", zone_content),
        get("/nodes/{node}/sdn/zones/{zone}/bridges", bridges),
        get("/nodes/{node}/sdn/zones/{zone}/ip-vrf", ip_vrf),
        get("/nodes/{node}/sdn/vnets/{vnet}", vnet_diridx),
        get("/nodes/{node}/sdn/vnets/{vnet}/mac-vrf", vnet_mac_vrf),
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
/// checks them; then the VNet's type-2 routes FRR holds.
fn vnet_mac_vrf(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.param("node")?;
    let vnet = ctx.param("vnet")?;
    let now = ctx.now();
    let items = ctx.with(|c| {
        check_vnet_access(ctx, c, &vnet, &["SDN.Audit"])?;
        c.sdn().check_mac_vrf(&node, &vnet)?;
        let hosts = generate::cluster::hosts(c, now);
        let nics = generate::cluster::guest_nics(c);
        Ok::<_, crate::model::Error>(
            c.sdn()
                .mac_vrf(&vnet, &hosts, &nics)
                .iter()
                .map(view::mac_route)
                .collect(),
        )
    })?;
    Ok(Value::Array(items).into())
}

/// `GET /nodes/{node}/sdn/zones/{zone}/ip-vrf` (9.x): the zone must be
/// a running EVPN zone on the node, as PVE checks; then the installed
/// routes of the zone's VRF there.
fn ip_vrf(ctx: &Ctx<'_>) -> Result<Reply> {
    let node = ctx.node()?;
    let zone = ctx.param("zone")?;
    let now = ctx.now();
    let items = ctx.with(|c| {
        c.sdn().check_ip_vrf(&node, &zone)?;
        let hosts = generate::cluster::hosts(c, now);
        let nics = generate::cluster::guest_nics(c);
        Ok::<_, crate::model::Error>(
            c.sdn()
                .ip_vrf(&node, &zone, &hosts, &nics)
                .iter()
                .map(view::vrf_route)
                .collect(),
        )
    })?;
    Ok(Value::Array(items).into())
}
