//! `/version` and the cluster read side (pve-manager `API2.pm`,
//! `API2/Cluster.pm`).

use serde_json::{Value, json};

use super::{Ctx, Reply, Route, get};
use crate::model::{Error, Result};

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/", api_index, &[]),
        get("/version", version, &[]),
        get("/cluster/status", get_status, &[]).perm("/", &["Sys.Audit"]),
        get("/cluster/resources", resources, &["type"]),
        get("/cluster/nextid", nextid, &["vmid"]),
    ]
}

/// `GET /api2/json/`.
fn api_index(_: &Ctx<'_>) -> Result<Reply> {
    let dirs = ["version", "cluster", "nodes", "storage", "access", "pools"];
    Ok(json!(
        dirs.iter()
            .map(|d| json!({ "subdir": d }))
            .collect::<Vec<_>>()
    )
    .into())
}

/// `GET /version`.
fn version(ctx: &Ctx<'_>) -> Result<Reply> {
    let v = ctx.state.settings().version;
    Ok(json!({ "version": v.version(), "release": v.release(), "repoid": v.repoid() }).into())
}

/// `GET /cluster/status`.
fn get_status(ctx: &Ctx<'_>) -> Result<Reply> {
    Ok(Value::Array(ctx.with(|c| c.status_view())).into())
}

/// `GET /cluster/resources`.
fn resources(ctx: &Ctx<'_>) -> Result<Reply> {
    let kind = ctx
        .params
        .enumeration("type", &["vm", "storage", "node", "sdn"])?;
    let now = ctx.now();
    Ok(Value::Array(ctx.with(|c| c.resources_view(kind.as_deref(), now))).into())
}

/// `GET /cluster/nextid`: a string, as PVE answers it.
fn nextid(ctx: &Ctx<'_>) -> Result<Reply> {
    let vmid = match ctx.params.str("vmid") {
        None => None,
        Some(_) => {
            let n = ctx.params.int("vmid", None, None)?.unwrap_or_default();
            let text = ctx.params.str("vmid").unwrap_or_default();
            if !valid_vmid_text(&text) {
                return Err(Error::invalid(
                    "vmid",
                    "invalid format - value does not look like a valid VM ID\n",
                ));
            }
            Some(u32::try_from(n).map_err(|_| {
                Error::invalid("vmid", "value must have a maximum value of 999999999")
            })?)
        }
    };
    Ok(json!(ctx.with(|c| c.nextid(vmid))?).into())
}

/// PVE's `pve-vmid` format: `[1-9][0-9]{2,8}`.
pub fn valid_vmid_text(s: &str) -> bool {
    let b = s.as_bytes();
    (3..=9).contains(&b.len()) && b[0] != b'0' && b.iter().all(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("100", true)]
    #[case("999999999", true)]
    #[case("99", false)]
    #[case("0100", false)]
    #[case("1000000000", false)]
    #[case("+100", false)]
    fn vmid_format(#[case] s: &str, #[case] ok: bool) {
        assert_eq!(valid_vmid_text(s), ok);
    }
}
