//! Ceph (pve-manager `API2/Ceph.pm`, `API2/Ceph/*.pm`,
//! `API2/Cluster/Ceph.pm`): every handler makes PVE's checks in PVE's
//! order (`check_ceph_installed`, `check_ceph_inited`,
//! `check_ceph_configured`, the RADOS connection), so that a node
//! without Ceph answers as a real one does everywhere. Monitors,
//! managers, metadata servers, OSDs, pools, CephFS, services, flags,
//! health mutes, the safety checks, a node's and the cluster's rolling
//! restarts, the configuration, status, metadata, crush map, rules, log
//! and releases have behaviour.

use super::{Ctx, Route, get, post, put};
use crate::model::Result;
use crate::model::ceph::Ceph;

pub mod cluster;
pub mod daemons;
pub mod fs;
pub mod node;
pub mod osds;
pub mod pools;
pub mod view;

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    let mut r = vec![
        get("/nodes/{node}/ceph/releases", node::releases),
        post("/nodes/{node}/ceph/init", node::init),
        post("/nodes/{node}/ceph/start", node::start),
        post("/nodes/{node}/ceph/stop", node::stop),
        post("/nodes/{node}/ceph/restart", node::restart),
        post("/nodes/{node}/ceph/restart-bulk", node::restart_bulk),
        get("/nodes/{node}/ceph/status", node::status),
        get("/nodes/{node}/ceph/crush", node::crush),
        get("/nodes/{node}/ceph/log", node::log),
        get("/nodes/{node}/ceph/rules", node::rules),
        get("/nodes/{node}/ceph/cmd-safety", node::cmd_safety),
        get("/nodes/{node}/ceph/cfg/raw", node::cfg_raw),
        get("/nodes/{node}/ceph/cfg/db", node::cfg_db),
        get("/nodes/{node}/ceph/cfg/value", node::cfg_value),
        get("/cluster/ceph/status", cluster::status),
        get("/cluster/ceph/metadata", cluster::metadata),
        get("/cluster/ceph/flags", cluster::get_all_flags),
        put("/cluster/ceph/flags", cluster::set_flags),
        get("/cluster/ceph/flags/{flag}", cluster::get_flag),
        put("/cluster/ceph/flags/{flag}", cluster::update_flag),
        get("/cluster/ceph/health-mute", cluster::list_health_mutes),
        put(
            "/cluster/ceph/health-mute/{code}",
            cluster::update_health_mute,
        ),
        post("/cluster/ceph/restart-bulk", cluster::restart_bulk),
    ];
    r.extend(daemons::routes());
    r.extend(fs::routes());
    r.extend(osds::routes());
    r.extend(pools::routes());
    r
}

/// The node a `/nodes/{node}/ceph` call runs on (`proxyto => 'node'`).
pub(crate) fn node_of(ctx: &Ctx<'_>) -> Result<String> {
    ctx.node()
}

/// The node a `/cluster/ceph` call runs on: the one asked.
pub(crate) fn local(ctx: &Ctx<'_>) -> String {
    ctx.with(|c| c.nodes().local().to_string())
}

/// Runs `check` on the model's Ceph for `node`.
pub(crate) fn check(
    ctx: &Ctx<'_>,
    node: &str,
    check: impl FnOnce(&Ceph, &str) -> Result<()>,
) -> Result<()> {
    ctx.with(|c| check(c.ceph(), node))
}

/// `check_ceph_inited` and `PVE::RADOS->new()`.
pub(crate) fn inited_and_connected(ctx: &Ctx<'_>, node: &str) -> Result<()> {
    check(ctx, node, |c, n| {
        c.check_inited(n)?;
        c.rados(n)
    })
}

/// The answer of a call whose checks passed but whose work is not
/// emulated.
pub(crate) fn not_emulated(method: &str, path: &str) -> crate::model::Error {
    crate::model::Error::NotImplemented(format!(
        "Method '{method} /api2/json{path}' is not emulated by fake-pve"
    ))
}
