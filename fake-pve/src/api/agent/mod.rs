//! `/nodes/{node}/qemu/{vmid}/agent/...`: the QEMU guest agent's 27 calls
//! and the legacy `POST .../agent` (qemu-server `API2/Qemu/Agent.pm`).
//!
//! Generic commands answer `{"result": ...}`; `exec`, `exec-status`,
//! `file-read` and `file-write` answer unwrapped, as PVE does.

pub(crate) mod view;

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{Ctx, Reply, Route, get, post};
use crate::model::Result;

macro_rules! commands {
    ($($name:ident => $cmd:literal),* $(,)?) => {
        $(
            #[doc = concat!("`", $cmd, "`.")]
            fn $name(ctx: &Ctx<'_>) -> Result<Reply> {
                command(ctx, $cmd)
            }
        )*
    };
}

commands! {
    ping => "ping",
    info => "info",
    get_time => "get-time",
    network_get_interfaces => "network-get-interfaces",
    get_vcpus => "get-vcpus",
    get_fsinfo => "get-fsinfo",
    get_memory_blocks => "get-memory-blocks",
    get_memory_block_info => "get-memory-block-info",
    get_host_name => "get-host-name",
    get_osinfo => "get-osinfo",
    get_users => "get-users",
    get_timezone => "get-timezone",
    fsfreeze_status => "fsfreeze-status",
    fsfreeze_freeze => "fsfreeze-freeze",
    fsfreeze_thaw => "fsfreeze-thaw",
    fstrim => "fstrim",
    suspend_disk => "suspend-disk",
    suspend_ram => "suspend-ram",
    suspend_hybrid => "suspend-hybrid",
    shutdown => "shutdown",
}

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        post("/nodes/{node}/qemu/{vmid}/agent", agent),
        post("/nodes/{node}/qemu/{vmid}/agent/ping", ping),
        get("/nodes/{node}/qemu/{vmid}/agent/info", info),
        get("/nodes/{node}/qemu/{vmid}/agent/get-time", get_time),
        get(
            "/nodes/{node}/qemu/{vmid}/agent/network-get-interfaces",
            network_get_interfaces,
        ),
        get("/nodes/{node}/qemu/{vmid}/agent/get-vcpus", get_vcpus),
        get("/nodes/{node}/qemu/{vmid}/agent/get-fsinfo", get_fsinfo),
        get(
            "/nodes/{node}/qemu/{vmid}/agent/get-memory-blocks",
            get_memory_blocks,
        ),
        get(
            "/nodes/{node}/qemu/{vmid}/agent/get-memory-block-info",
            get_memory_block_info,
        ),
        get(
            "/nodes/{node}/qemu/{vmid}/agent/get-host-name",
            get_host_name,
        ),
        get("/nodes/{node}/qemu/{vmid}/agent/get-osinfo", get_osinfo),
        get("/nodes/{node}/qemu/{vmid}/agent/get-users", get_users),
        get("/nodes/{node}/qemu/{vmid}/agent/get-timezone", get_timezone),
        post(
            "/nodes/{node}/qemu/{vmid}/agent/fsfreeze-status",
            fsfreeze_status,
        ),
        post(
            "/nodes/{node}/qemu/{vmid}/agent/fsfreeze-freeze",
            fsfreeze_freeze,
        ),
        post(
            "/nodes/{node}/qemu/{vmid}/agent/fsfreeze-thaw",
            fsfreeze_thaw,
        ),
        post("/nodes/{node}/qemu/{vmid}/agent/fstrim", fstrim),
        post("/nodes/{node}/qemu/{vmid}/agent/suspend-disk", suspend_disk),
        post("/nodes/{node}/qemu/{vmid}/agent/suspend-ram", suspend_ram),
        post(
            "/nodes/{node}/qemu/{vmid}/agent/suspend-hybrid",
            suspend_hybrid,
        ),
        post("/nodes/{node}/qemu/{vmid}/agent/shutdown", shutdown),
        post("/nodes/{node}/qemu/{vmid}/agent/exec", exec),
        get("/nodes/{node}/qemu/{vmid}/agent/exec-status", exec_status),
        get("/nodes/{node}/qemu/{vmid}/agent/file-read", file_read),
        post("/nodes/{node}/qemu/{vmid}/agent/file-write", file_write),
        post(
            "/nodes/{node}/qemu/{vmid}/agent/set-user-password",
            set_user_password,
        ),
    ]
}

/// The node and VMID of the call.
fn target(ctx: &Ctx<'_>) -> Result<(String, u32)> {
    let node = ctx.param("node")?;
    let node = ctx.with(|c| c.nodes().reach(&node).map(|n| n.name.clone()))?;
    let vmid = ctx
        .params
        .int("vmid", Some(100), Some(999_999_999))?
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| super::params::missing("vmid"))?;
    Ok((node, vmid))
}

fn run(ctx: &Ctx<'_>, cmd: &str, args: &BTreeMap<String, Value>) -> Result<Value> {
    let (node, vmid) = target(ctx)?;
    let now_ms = ctx.now_ms();
    ctx.with(|c| c.guests.agent_command(&node, vmid, cmd, args, now_ms))
}

/// A command without parameters: `{"result": ...}`.
fn command(ctx: &Ctx<'_>, cmd: &str) -> Result<Reply> {
    let res = run(ctx, cmd, &BTreeMap::new())?;
    Ok(json!({ "result": res }).into())
}

/// The legacy `POST .../agent` with `command=<name>`.
fn agent(ctx: &Ctx<'_>) -> Result<Reply> {
    let cmd = ctx.param("command")?;
    command(ctx, &cmd)
}

/// `set-user-password`.
fn set_user_password(ctx: &Ctx<'_>) -> Result<Reply> {
    let mut args = BTreeMap::new();
    for k in ["username", "password"] {
        args.insert(k.to_string(), json!(ctx.param(k)?));
    }
    let res = run(ctx, "set-user-password", &args)?;
    Ok(json!({ "result": res }).into())
}

/// `exec`: `{pid}`.
fn exec(ctx: &Ctx<'_>) -> Result<Reply> {
    let (node, vmid) = target(ctx)?;
    let command: Vec<String> = match ctx.params.get("command") {
        Some(Value::Array(a)) => a.iter().map(super::params::value_text).collect(),
        Some(other) => vec![super::params::value_text(other)],
        None => Vec::new(),
    };
    let input = ctx.params.str("input-data");
    let now_ms = ctx.now_ms();
    let res = ctx.with(|c| {
        c.guests
            .agent_exec(&node, vmid, &command, input.as_deref(), now_ms)
    })?;
    Ok(view::exec(res).into())
}

/// `exec-status`.
fn exec_status(ctx: &Ctx<'_>) -> Result<Reply> {
    let (node, vmid) = target(ctx)?;
    let pid = ctx
        .params
        .int("pid", Some(0), None)?
        .and_then(|p| u32::try_from(p).ok())
        .unwrap_or(u32::MAX);
    let now_ms = ctx.now_ms();
    Ok(ctx
        .with(|c| c.guests.agent_exec_status(&node, vmid, pid, now_ms))
        .map(|s| view::exec_status(&s))?
        .into())
}

/// `file-read`: `{content, bytes-read, truncated?}`.
fn file_read(ctx: &Ctx<'_>) -> Result<Reply> {
    let (node, vmid) = target(ctx)?;
    let file = ctx.param("file")?;
    let count = ctx
        .params
        .int("count", Some(1), None)?
        .and_then(|c| usize::try_from(c).ok());
    let offset = ctx
        .params
        .int("offset", Some(0), None)?
        .and_then(|c| usize::try_from(c).ok())
        .unwrap_or(0);
    let decode = ctx.params.bool("decode")?.unwrap_or(true);
    let now_ms = ctx.now_ms();
    Ok(ctx
        .with(|c| {
            c.guests
                .agent_file_read(&node, vmid, &file, count, offset, decode, now_ms)
        })
        .map(|c| view::file_read(&c))?
        .into())
}

/// `file-write`: null.
fn file_write(ctx: &Ctx<'_>) -> Result<Reply> {
    let (node, vmid) = target(ctx)?;
    let file = ctx.param("file")?;
    let content = ctx.param("content")?;
    let encode = ctx.params.bool("encode")?.unwrap_or(true);
    let now_ms = ctx.now_ms();
    ctx.with(|c| {
        c.guests
            .agent_file_write(&node, vmid, &file, &content, encode, now_ms)
    })?;
    Ok(Value::Null.into())
}
