//! The answers of `/cluster/config` as `API2/ClusterConfig.pm` writes
//! them: the model's members, totem section and join information turned
//! into JSON, text values as `parse_conf` reads them.

use serde_json::{Value, json};

use crate::model::corosync::{JoinInfo, Member, Totem};

/// A member's entry of the node list: `name`, `nodeid`, `quorum_votes`,
/// `ringN_addr`.
fn member(m: &Member<'_>) -> Value {
    let n = m.node;
    let mut v = json!({
        "name": n.name,
        "nodeid": n.nodeid.to_string(),
        "quorum_votes": m.votes.to_string(),
    });
    for (i, l) in &m.links {
        v[format!("ring{i}_addr")] = json!(l.address);
    }
    v
}

/// The totem section.
pub fn totem(t: &Totem) -> Value {
    json!(t)
}

/// `GET /cluster/config/nodes`: each member with its `node`.
pub fn nodes(members: &[Member<'_>]) -> Value {
    members
        .iter()
        .map(|m| {
            let mut v = member(m);
            v["node"] = json!(m.node.name);
            v
        })
        .collect()
}

/// `GET /cluster/config/join`.
pub fn join_info(j: &JoinInfo<'_>) -> Value {
    let nodelist: Vec<Value> = j
        .nodelist
        .iter()
        .map(|m| {
            let mut v = member(m);
            v["pve_fp"] = json!(m.node.ssl_fingerprint);
            v["pve_addr"] = json!(m.node.ip);
            v
        })
        .collect();
    json!({
        "nodelist": nodelist,
        "preferred_node": j.preferred_node,
        "totem": totem(&j.totem),
        "config_digest": j.config_digest,
    })
}

/// `POST /cluster/config/nodes/{node}`: the new `corosync.conf`, the
/// auth key and the warnings.
pub fn added(conf: &str, authkey: &str, warnings: &[String]) -> Value {
    json!({
        "corosync_conf": conf,
        "corosync_authkey": authkey,
        "warnings": warnings,
    })
}
