//! Nodes (size, network, DNS, time zone, firewall) and storages.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::super::convert::{call, field, items, params, split_list, texts, truthy};
use super::super::{Reader, TwinError};
use super::cluster::firewall;

/// A node: its size from its status (or the list when it is offline),
/// bridges, DNS, time zone; its other interfaces and firewall as setup.
pub(super) async fn node(
    reader: &Reader,
    name: &str,
    entry: &Value,
    row: Option<&Value>,
    setup: &mut Vec<Value>,
) -> Result<Value, TwinError> {
    let mut n = Map::new();
    n.insert("name".into(), json!(name));
    let online = entry.get("online").is_none_or(|o| truthy(Some(o)))
        && row.is_none_or(|r| r["status"].as_str() != Some("offline"));
    if !online {
        n.insert("status".into(), json!("offline"));
    }
    if let Some(ip) = field(entry, "ip") {
        n.insert("ip".into(), json!(ip));
    }
    if let Some(fp) = row.and_then(|r| field(r, "ssl_fingerprint")) {
        n.insert("fingerprint".into(), json!(fp));
    }
    if let Some(level) = row.and_then(|r| field(r, "level")) {
        n.insert("level".into(), json!(level));
    }
    let base = format!("/nodes/{name}");
    let status = if online {
        reader.get(&format!("{base}/status")).await?
    } else {
        None
    };
    if let Some(st) = &status {
        if let Some(c) = st["cpuinfo"]["cpus"].as_u64() {
            n.insert("cpus".into(), json!(c));
        }
        if let Some(c) = st["cpuinfo"]["sockets"].as_u64() {
            n.insert("sockets".into(), json!(c));
        }
        if let Some(m) = st["memory"]["total"].as_u64() {
            n.insert("memory".into(), json!(m));
        }
        if let Some(d) = st["rootfs"]["total"].as_u64() {
            n.insert("disk".into(), json!(d));
        }
    } else if let Some(r) = row {
        if let Some(c) = r["maxcpu"].as_u64() {
            n.insert("cpus".into(), json!(c));
        }
        if let Some(m) = r["maxmem"].as_u64() {
            n.insert("memory".into(), json!(m));
        }
    }
    if !online {
        return Ok(Value::Object(n));
    }
    // Network: bridges by name; bonds, VLANs and the rest as calls.
    if let Some(ifaces) = reader.get(&format!("{base}/network")).await? {
        let (mut bridges, mut nics) = (Vec::new(), Vec::new());
        let mut made = false;
        let mut list: Vec<&Value> = items(Some(&ifaces)).iter().collect();
        // Bonds before the VLANs on them; NICs in their order.
        list.sort_by_key(|i| {
            (
                i["type"].as_str() == Some("vlan"),
                i["priority"].as_i64(),
                field(i, "iface"),
            )
        });
        for i in list {
            let iface = field(i, "iface").unwrap_or_default();
            match i["type"].as_str() {
                Some("bridge") => {
                    // Its settings over the twin's defaults.
                    let p = params(
                        i,
                        &[
                            "iface", "active", "exists", "priority", "families", "method",
                            "method6", "options", "options6",
                        ],
                    );
                    let p = by_cidr(p);
                    setup.push(call("PUT", &format!("{base}/network/{iface}"), p));
                    bridges.push(json!(iface));
                    made = true;
                }
                Some("eth") => {
                    // A physical NIC; its settings (an address, an MTU, a
                    // comment) over the twin's.
                    nics.push(json!(iface));
                    let p = params(
                        i,
                        &[
                            "iface", "active", "exists", "priority", "families", "method",
                            "method6", "options", "options6", "altnames",
                        ],
                    );
                    let p = by_cidr(p);
                    if p.keys().any(|k| k != "type") {
                        setup.push(call("PUT", &format!("{base}/network/{iface}"), p));
                        made = true;
                    }
                }
                Some("alias" | "unknown") | None => {}
                Some(_) => {
                    let p = params(
                        i,
                        &[
                            "active", "exists", "priority", "families", "method", "method6",
                            "options", "options6",
                        ],
                    );
                    setup.push(call("POST", &format!("{base}/network"), p));
                    made = true;
                }
            }
        }
        n.insert("bridges".into(), Value::Array(bridges));
        if !nics.is_empty() {
            n.insert("nics".into(), Value::Array(nics));
        }
        if made {
            setup.push(call("PUT", &format!("{base}/network"), Default::default()));
        }
    }
    if let Some(dns) = reader.get(&format!("{base}/dns")).await? {
        let d = texts(&dns, &[]);
        if !d.is_empty() {
            n.insert("dns".into(), Value::Object(d));
        }
    }
    if let Some(tz) = reader
        .get(&format!("{base}/time"))
        .await?
        .and_then(|t| field(&t, "timezone"))
    {
        n.insert("timezone".into(), json!(tz));
    }
    super::hardware::hardware(reader, &base, &mut n).await?;
    firewall(reader, &format!("{base}/firewall"), false, setup).await?;
    Ok(Value::Object(n))
}

/// Each node's storages as `/nodes/{node}/storage` lists them.
pub(super) type NodeStorages = Vec<(String, Vec<Value>)>;

/// `storage.cfg`, with the capacity and use a node reports; and what
/// each node lists.
pub(super) async fn storages(
    reader: &Reader,
    nodes: &[(u64, String, Value)],
) -> Result<(Value, NodeStorages), TwinError> {
    let mut listed = Vec::new();
    let Some(cfg) = reader.get("/storage").await? else {
        return Ok((Value::Array(Vec::new()), listed));
    };
    let mut figures: Map<String, Value> = Map::new();
    for (_, name, entry) in nodes {
        if !entry.get("online").is_none_or(|o| truthy(Some(o))) {
            continue;
        }
        if let Some(list) = reader.get(&format!("/nodes/{name}/storage")).await? {
            for st in items(Some(&list)) {
                if let Some(id) = field(st, "storage")
                    && st["total"].as_u64().unwrap_or(0) > 0
                {
                    figures.entry(id).or_insert_with(|| st.clone());
                }
            }
            listed.push((name.clone(), items(Some(&list)).to_vec()));
        }
    }
    let mut out = Vec::new();
    for st in items(Some(&cfg)) {
        let id = field(st, "storage").unwrap_or_default();
        let mut m = Map::new();
        m.insert("id".into(), json!(id));
        m.insert("type".into(), json!(field(st, "type").unwrap_or_default()));
        m.insert("content".into(), json!(split_list(st.get("content"))));
        if st.get("shared").is_some() {
            m.insert("shared".into(), json!(truthy(st.get("shared"))));
        }
        if st.get("nodes").is_some() {
            m.insert("nodes".into(), json!(split_list(st.get("nodes"))));
        }
        if truthy(st.get("disable")) {
            m.insert("disable".into(), json!(true));
        }
        if let Some(f) = figures.get(&id) {
            m.insert("size".into(), f["total"].clone());
            m.insert("used".into(), f["used"].clone());
        }
        for (k, v) in texts(
            st,
            &["storage", "type", "content", "shared", "nodes", "disable"],
        ) {
            m.insert(k, v);
        }
        out.push(Value::Object(m));
    }
    Ok((Value::Array(out), listed))
}

/// An interface's parameters with its address as `cidr` only (the
/// `address` and `netmask` it covers left out).
fn by_cidr(mut p: BTreeMap<String, Value>) -> BTreeMap<String, Value> {
    for (cidr, covered) in [
        ("cidr", ["address", "netmask"]),
        ("cidr6", ["address6", "netmask6"]),
    ] {
        if p.contains_key(cidr) {
            for k in covered {
                p.remove(k);
            }
        }
    }
    p
}
