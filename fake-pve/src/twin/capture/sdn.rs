//! SDN as calls: IPAMs and DNS servers; the running configuration
//! (controllers, zones, VNets, subnets) made and applied; the IPAM's
//! entries; then the changes not applied yet (new, changed, deleted),
//! left pending as they are on the cluster.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::super::convert::{call, field, items, params};
use super::super::{Reader, TwinError};

/// What only a listing shows.
const SHOWN: &[&str] = &["state", "pending"];

/// One object of the SDN configuration: the collection it is made in,
/// its id, and the parameters that make it.
struct Object {
    list: String,
    id: String,
    params: BTreeMap<String, Value>,
}

impl Object {
    fn path(&self) -> String {
        format!("{}/{}", self.list, self.id)
    }
}

/// Controllers, zones, VNets and each VNet's subnets, in the order they
/// are made, as `query` (`?running=1`: applied; none: with the changes
/// not applied yet) shows them.
async fn objects(reader: &Reader, query: &str) -> Result<Vec<Object>, TwinError> {
    let mut out = Vec::new();
    for (list, key) in [
        ("/cluster/sdn/controllers", "controller"),
        ("/cluster/sdn/zones", "zone"),
        ("/cluster/sdn/vnets", "vnet"),
    ] {
        for e in items(reader.get(&format!("{list}{query}")).await?.as_ref()) {
            let Some(id) = field(e, key) else { continue };
            out.push(Object {
                list: list.to_string(),
                id: id.clone(),
                params: params(e, SHOWN),
            });
            if key != "vnet" {
                continue;
            }
            let path = format!("/cluster/sdn/vnets/{id}/subnets");
            for sub in items(reader.get(&format!("{path}{query}")).await?.as_ref()) {
                let Some(sid) = field(sub, "subnet").or_else(|| field(sub, "id")) else {
                    continue;
                };
                let mut p = params(
                    sub,
                    &[
                        "state", "pending", "cidr", "network", "mask", "vnet", "zone", "id",
                    ],
                );
                if let Some(cidr) = field(sub, "cidr") {
                    p.insert("subnet".into(), json!(cidr));
                }
                out.push(Object {
                    list: path.clone(),
                    id: sid,
                    params: p,
                });
            }
        }
    }
    Ok(out)
}

/// The SDN configuration as calls (see the module).
pub(super) async fn sdn(reader: &Reader, setup: &mut Vec<Value>) -> Result<(), TwinError> {
    let mut pve_ipams = Vec::new();
    for (list, key) in [("/cluster/sdn/ipams", "ipam"), ("/cluster/sdn/dns", "dns")] {
        for e in items(reader.get(list).await?.as_ref()) {
            let id = field(e, key).unwrap_or_default();
            if key == "ipam" && field(e, "type").as_deref() == Some("pve") {
                pve_ipams.push(id.clone());
            }
            if key == "ipam" && id == "pve" {
                continue;
            }
            setup.push(call("POST", list, params(e, SHOWN)));
        }
    }
    let running = objects(reader, "?running=1").await?;
    for o in &running {
        setup.push(call("POST", &o.list, o.params.clone()));
    }
    if !running.is_empty() {
        setup.push(call("PUT", "/cluster/sdn", Default::default()));
    }
    // The IPAM's entries: a mapping of an address to a MAC, and the
    // guest it is for; a subnet's gateway comes with the subnet.
    for ipam in pve_ipams {
        let rows = reader
            .get(&format!("/cluster/sdn/ipams/{ipam}/status"))
            .await?;
        for r in items(rows.as_ref()) {
            let (Some(vnet), Some(ip)) = (field(r, "vnet"), field(r, "ip")) else {
                continue;
            };
            if field(r, "gateway").is_some() || field(r, "mac").is_none() {
                continue;
            }
            let path = format!("/cluster/sdn/vnets/{vnet}/ips");
            let mut p: BTreeMap<String, Value> = ["zone", "mac"]
                .iter()
                .filter_map(|k| field(r, k).map(|v| ((*k).to_string(), json!(v))))
                .collect();
            p.insert("ip".into(), json!(ip));
            setup.push(call("POST", &path, p.clone()));
            if let Some(vmid) = field(r, "vmid") {
                p.insert("vmid".into(), json!(vmid));
                setup.push(call("PUT", &path, p));
            }
        }
    }
    // What is not applied yet: made, changed or deleted, not applied.
    let current = objects(reader, "").await?;
    for o in &current {
        match running.iter().find(|r| r.list == o.list && r.id == o.id) {
            None => setup.push(call("POST", &o.list, o.params.clone())),
            Some(r) if r.params != o.params => {
                let mut p = o.params.clone();
                let gone: Vec<&str> = r
                    .params
                    .keys()
                    .filter(|k| !o.params.contains_key(*k))
                    .map(String::as_str)
                    .collect();
                if !gone.is_empty() {
                    p.insert("delete".into(), json!(gone.join(",")));
                }
                p.remove("type");
                setup.push(call("PUT", &o.path(), p));
            }
            Some(_) => {}
        }
    }
    for r in running.iter().rev() {
        if !current.iter().any(|o| o.list == r.list && o.id == r.id) {
            setup.push(call("DELETE", &r.path(), Default::default()));
        }
    }
    // What `compare` reads besides: the changes as PVE shows them.
    for list in ["/cluster/sdn/zones", "/cluster/sdn/vnets"] {
        reader.get(&format!("{list}?pending=1")).await?;
    }
    Ok(())
}
