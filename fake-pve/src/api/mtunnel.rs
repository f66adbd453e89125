//! Remote migration: `POST .../remote_migrate` (`remote_migrate_vm`),
//! `POST .../mtunnel` and `GET .../mtunnelwebsocket` of VMs and
//! containers (qemu-server `API2/Qemu.pm`, pve-container
//! `API2/LXC.pm`).
//!
//! `remote_migrate` calls the target before it answers, so its answer is
//! worked out after the model's lock is released ([`Reply::deferred`]);
//! its task then runs in the background (`crate::remote`). `mtunnel`
//! and `mtunnelwebsocket` are the target's side: neither is forwarded to
//! another node, and both refuse a `node` that is not this one.

use serde_json::json;

use super::{Ctx, Reply, Route, get, post};
use crate::model::mtunnel::{Endpoint, GuestType, OpenRequest};
use crate::model::{Error, Result};

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        post(
            "/nodes/{node}/qemu/{vmid}/remote_migrate",
            qemu_remote_migrate,
        ),
        post(
            "/nodes/{node}/lxc/{vmid}/remote_migrate",
            lxc_remote_migrate,
        ),
        post("/nodes/{node}/qemu/{vmid}/mtunnel", qemu_mtunnel),
        post("/nodes/{node}/lxc/{vmid}/mtunnel", lxc_mtunnel),
        get(
            "/nodes/{node}/qemu/{vmid}/mtunnelwebsocket",
            qemu_mtunnelwebsocket,
        ),
        get(
            "/nodes/{node}/lxc/{vmid}/mtunnelwebsocket",
            lxc_mtunnelwebsocket,
        ),
    ]
}

fn qemu_remote_migrate(ctx: &Ctx<'_>) -> Result<Reply> {
    remote_migrate(ctx, GuestType::Qemu)
}

fn lxc_remote_migrate(ctx: &Ctx<'_>) -> Result<Reply> {
    remote_migrate(ctx, GuestType::Lxc)
}

fn qemu_mtunnel(ctx: &Ctx<'_>) -> Result<Reply> {
    mtunnel(ctx, GuestType::Qemu)
}

fn lxc_mtunnel(ctx: &Ctx<'_>) -> Result<Reply> {
    mtunnel(ctx, GuestType::Lxc)
}

fn qemu_mtunnelwebsocket(ctx: &Ctx<'_>) -> Result<Reply> {
    mtunnelwebsocket(ctx, GuestType::Qemu)
}

fn lxc_mtunnelwebsocket(ctx: &Ctx<'_>) -> Result<Reply> {
    mtunnelwebsocket(ctx, GuestType::Lxc)
}

/// `remote_migrate_vm`: quorum, the guest, its lock (a running
/// container's mode), HA, the endpoint; then, off the lock, the target's
/// certificate and node, the maps, and the `qmigrate`/`vzmigrate` task.
fn remote_migrate(ctx: &Ctx<'_>, kind: GuestType) -> Result<Reply> {
    let node = ctx.node()?;
    let vmid = ctx.vmid()?;
    let target_vmid = ctx
        .params
        .int("target-vmid", Some(100), Some(999_999_999))?
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(vmid);
    let endpoint = ctx.param("target-endpoint")?;
    let delete = ctx.params.bool("delete")?.unwrap_or(false);
    let online = ctx.params.bool("online")?.unwrap_or(false);
    let restart = kind == GuestType::Lxc && ctx.params.bool("restart")?.unwrap_or(false);
    let timeout = ctx
        .params
        .int("timeout", None, None)?
        .and_then(|t| u64::try_from(t).ok())
        .unwrap_or(180);
    let bwlimit = ctx
        .params
        .str("bwlimit")
        .and_then(|b| b.parse::<f64>().ok());
    ctx.with(|c| c.remote_migrate_check(kind, &node, vmid, online, restart))?;
    let endpoint = Endpoint::parse(&endpoint)?;
    let req = crate::remote::Request {
        kind,
        node,
        vmid,
        target_vmid,
        endpoint,
        online,
        restart,
        timeout,
        delete,
        target_storage: ctx.param("target-storage")?,
        target_bridge: ctx.param("target-bridge")?,
        bwlimit,
        who: ctx.who()?.clone(),
    };
    let state = ctx.state.clone();
    Ok(Reply::deferred(async move {
        crate::remote::remote_migrate(state, req)
            .await
            .map(|upid| json!(upid).into())
    }))
}

/// The node these calls are made on: `localhost` or the local node's
/// name (they are not forwarded).
///
/// # Errors
/// `node: node needs to be 'localhost' or local hostname '<node>'`.
fn local_node(ctx: &Ctx<'_>) -> Result<String> {
    let node = ctx.param("node")?;
    let local = ctx.with(|c| c.nodes().local().to_string());
    if node != "localhost" && node != local {
        return Err(Error::invalid(
            "node",
            format!("node needs to be 'localhost' or local hostname '{local}'"),
        ));
    }
    Ok(local)
}

/// `mtunnel`: the storages and bridges checked, the guest's config made
/// and locked `create`, the tunnel worker started; its UPID, socket and
/// a ticket for the socket.
fn mtunnel(ctx: &Ctx<'_>, kind: GuestType) -> Result<Reply> {
    let node = local_node(ctx)?;
    let vmid = ctx.vmid()?;
    let list = |name: &str| {
        ctx.params
            .str(name)
            .map(|v| crate::model::network::split_list(&v))
            .unwrap_or_default()
    };
    let who = ctx.who()?.clone();
    let req = OpenRequest {
        kind,
        node,
        vmid,
        who: who.clone(),
        storages: list("storages"),
        bridges: list("bridges"),
        now_ms: ctx.now_ms(),
    };
    let (upid, socket) = ctx.with(|c| c.mtunnel_open(req))?;
    let ticket =
        crate::remote::serve::tunnel_ticket(ctx.state, &who.to_string(), &socket, ctx.now());
    Ok(json!({ "ticket": ticket, "upid": upid, "socket": socket }).into())
}

/// `mtunnelwebsocket` (without an upgrade, or before it): the guest must
/// exist and the ticket hold for the caller and the socket; the socket
/// back, which the upgrade then connects to.
fn mtunnelwebsocket(ctx: &Ctx<'_>, kind: GuestType) -> Result<Reply> {
    let node = local_node(ctx)?;
    let vmid = ctx.vmid()?;
    ctx.with(|c| match kind {
        GuestType::Qemu => c.guests.vm(&node, vmid).map(|_| ()),
        GuestType::Lxc => c.guests.ct(&node, vmid).map(|_| ()),
    })?;
    let socket = ctx.param("socket")?;
    let ticket = ctx.param("ticket")?;
    let user = ctx.who()?.to_string();
    if !crate::remote::serve::tunnel_ticket_holds(ctx.state, &ticket, &user, &socket, ctx.now()) {
        return Err(Error::Unauthorized(
            "permission denied - invalid PVETUNNEL ticket".into(),
        ));
    }
    Ok(json!({ "socket": socket }).into())
}
