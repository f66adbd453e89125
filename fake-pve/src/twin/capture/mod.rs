//! `fake-pve scenario capture`: a running PVE, read through its API
//! (GETs only), as the scenario that recreates it.
//!
//! The scenario's own fields take what they describe (cluster, nodes,
//! storages, guests with their pending changes and snapshots, pools,
//! users, groups, roles, ACLs, realms); the rest (firewall, SDN, HA,
//! backup and replication jobs, network interfaces besides bridges,
//! datacenter options, users' names and keys) becomes `setup` calls run
//! once the world is built. Nothing secret is read: passwords and token
//! secrets are not in any answer.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::convert::{field, items};
use super::{Reader, TwinError, Unread};
use crate::PveVersion;

mod cluster;
mod guests;
mod hardware;
mod nodes;
mod sdn;
mod services;
mod volumes;

use cluster::{access, cluster_setup, ha_setup, jobs_setup, pools};
use guests::guests;
use nodes::{node, storages};
use volumes::volumes;

/// Guests read at once.
pub(super) const PARALLEL: usize = 16;

/// A capture: the scenario and how it was read.
#[derive(Debug, Clone)]
pub struct Capture {
    /// The release `/version` gave.
    pub release: PveVersion,
    /// The scenario, as a JSON document (see [`Capture::to_yaml`]).
    pub scenario: Value,
    /// GETs sent.
    pub calls: u64,
    /// What could not be read (permissions, absent).
    pub unread: Vec<Unread>,
    /// The paths read.
    pub paths: Vec<String>,
    /// How long it took.
    pub elapsed: Duration,
}

impl Capture {
    /// The scenario as YAML, with a header saying where it comes from.
    pub fn to_yaml(&self, url: &str) -> String {
        let body = serde_yaml::to_string(&self.scenario).unwrap_or_default();
        let mut out = format!(
            "# fake-pve scenario captured from {url} (PVE {}) with {} GETs.\n\
             # Log in to the twin as root@pam with fake-pve's --root-password;\n\
             # other users have no password and tokens new secrets.\n",
            self.release.version(),
            self.calls
        );
        for u in &self.unread {
            out.push_str(&format!("# not read: {} ({})\n", u.path, u.reason));
        }
        out.push_str(&body);
        out
    }

    /// The number of guests captured.
    pub fn guests(&self) -> usize {
        ["vms", "containers"]
            .iter()
            .map(|k| self.scenario[k].as_array().map_or(0, Vec::len))
            .sum()
    }
}

/// Reads the cluster `reader` reaches (`url` for messages).
///
/// # Errors
/// A non-PVE endpoint, another release, or a read that failed for
/// another reason than permissions.
pub async fn capture(reader: Arc<Reader>, url: &str) -> Result<Capture, TwinError> {
    let started = Instant::now();
    let release = reader.release(url).await?;
    let mut s = Map::new();
    let mut setup: Vec<Value> = Vec::new();
    let status = reader.get("/cluster/status").await?;
    let mut nodes: Vec<(u64, String, Value)> = Vec::new();
    for e in items(status.as_ref()) {
        match e["type"].as_str() {
            Some("cluster") => {
                if let Some(name) = field(e, "name") {
                    s.insert("cluster".into(), json!(name));
                }
            }
            Some("node") => {
                let id = e["nodeid"].as_u64().unwrap_or(0);
                nodes.push((id, field(e, "name").unwrap_or_default(), e.clone()));
            }
            _ => {}
        }
    }
    nodes.sort_by_key(|(id, _, _)| *id);
    let listed = reader.get("/nodes").await?;
    if nodes.is_empty() {
        for n in items(listed.as_ref()) {
            nodes.push((0, field(n, "node").unwrap_or_default(), n.clone()));
        }
    }
    let mut node_specs = Vec::new();
    for (_, name, entry) in &nodes {
        let row = items(listed.as_ref())
            .iter()
            .find(|n| n["node"].as_str() == Some(name));
        node_specs.push(node(&reader, name, entry, row, &mut setup).await?);
    }
    s.insert("nodes".into(), Value::Array(node_specs));
    let (cfg, listed) = storages(&reader, &nodes).await?;
    s.insert("storages".into(), cfg);
    s.insert("volumes".into(), volumes(&reader, &listed).await?);
    let (vms, cts, guest_setup) = guests(&reader).await?;
    s.insert("vms".into(), Value::Array(vms));
    s.insert("containers".into(), Value::Array(cts));
    s.insert("pools".into(), pools(&reader).await?);
    access(&reader, &mut s, &mut setup).await?;
    // The cluster's firewall before the guests' (whose rules may name
    // its groups, aliases and IP sets); 8.4's HA groups before the
    // resources in them, 9.x's rules after the resources they name.
    cluster_setup(&reader, &mut setup).await?;
    let mut late = Vec::new();
    ha_setup(
        &reader,
        release,
        if release == PveVersion::V8_4 {
            &mut setup
        } else {
            &mut late
        },
    )
    .await?;
    setup.extend(guest_setup);
    setup.extend(late);
    jobs_setup(&reader, &mut setup).await?;
    services::services(&reader, &mut setup).await?;
    for c in &mut setup {
        schema_params(release, c);
    }
    s.insert("setup".into(), Value::Array(setup));
    Ok(Capture {
        release,
        scenario: Value::Object(s),
        calls: reader.calls(),
        unread: reader.unread(),
        paths: reader.read_paths(),
        elapsed: started.elapsed(),
    })
}

/// Leaves out of a call the parameters its method does not take in the
/// release's schema (what a read only shows: a rule's `order`, a
/// bridge's `bridge_fd` on 9.x), and those its path names already.
fn schema_params(release: PveVersion, call: &mut Value) {
    let (Some(method), Some(path)) = (call["method"].as_str(), call["path"].as_str()) else {
        return;
    };
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let Some(found) = crate::spec::spec(release).find(method, &segs) else {
        return;
    };
    let props = &found.endpoint.parameters.properties;
    // 9.2's `allOf` groups refuse what none of them knows: their union
    // is the list.
    let open = found.endpoint.parameters.all_of.is_none()
        && matches!(
            found.endpoint.parameters.additional,
            None | Some(Value::Bool(true))
        );
    let in_path: Vec<String> = found.params.iter().map(|(k, _)| k.clone()).collect();
    if let Some(Value::Object(p)) = call.get_mut("params") {
        p.retain(|k, _| {
            !in_path.contains(k)
                && (open
                    || props.contains_key(k)
                    || props.keys().any(|name| {
                        name.strip_suffix("[n]").is_some_and(|stem| {
                            k.strip_prefix(stem).is_some_and(|n| {
                                !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
                            })
                        })
                    }))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::convert::call;
    use super::*;

    #[test]
    fn parameters_a_method_does_not_take_are_left_out() {
        let mut c = call(
            "POST",
            "/cluster/ha/rules",
            [
                ("rule".to_string(), json!("home")),
                ("type".to_string(), json!("node-affinity")),
                ("order".to_string(), json!("1")),
            ]
            .into(),
        );
        // 9.1's schema lists the parameters, 9.2's as `allOf` groups.
        let mut c92 = c.clone();
        schema_params(PveVersion::V9_1, &mut c);
        let keys: Vec<&String> = c["params"].as_object().expect("params").keys().collect();
        assert_eq!(keys, ["rule", "type"]);
        schema_params(PveVersion::V9_2, &mut c92);
        let keys: Vec<&String> = c92["params"].as_object().expect("params").keys().collect();
        assert_eq!(keys, ["rule", "type"]);
        let mut c = call(
            "PUT",
            "/nodes/pve/network/vmbr0",
            [
                ("iface".to_string(), json!("vmbr0")),
                ("type".to_string(), json!("bridge")),
                ("comments".to_string(), json!("uplink")),
                ("bridge_fd".to_string(), json!("0")),
            ]
            .into(),
        );
        schema_params(PveVersion::V9_1, &mut c);
        let keys: Vec<&String> = c["params"].as_object().expect("params").keys().collect();
        assert_eq!(keys, ["comments", "type"]);
    }
}
