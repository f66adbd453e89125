//! The answers of `/nodes/{node}/lxc` as pve-container's API writes them
//! (`API2/LXC.pm` `vmlist`, `API2/LXC/Status.pm` `vm_status`): the
//! model's container data turned into JSON, keys in PVE's order.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::model::PveVersion;
use crate::model::guest::Kind;
use crate::model::lxc::Ct;
use crate::model::lxc::aplinfo::{APPLIANCES, SOURCE};
use crate::model::lxc::schema::config_prop;
use crate::model::lxc::status::CtStatus;

/// A config value as GET config types it (`check_type`): integers and
/// booleans as numbers, numbers as numbers, the rest as text.
pub fn typed(version: PveVersion, key: &str, value: &str) -> Value {
    let kind = config_prop(version, key).and_then(|p| p.kind.as_deref());
    match kind {
        Some("integer" | "boolean") => value
            .parse::<i64>()
            .map_or_else(|_| json!(value), |n| json!(n)),
        Some("number") => value
            .parse::<f64>()
            .ok()
            .and_then(|f| {
                if f.fract() == 0.0 && f.abs() < 1e15 {
                    #[allow(clippy::cast_possible_truncation)]
                    Some(json!(f as i64))
                } else {
                    serde_json::Number::from_f64(f).map(Value::Number)
                }
            })
            .unwrap_or_else(|| json!(value)),
        _ => json!(value),
    }
}

/// `GET /nodes/{node}/aplinfo`: the built-in appliance index.
pub fn aplinfo() -> Value {
    APPLIANCES
        .iter()
        .map(|a| {
            json!({
                "os": a.os,
                "package": a.package,
                "version": a.version,
                "template": a.template,
                "headline": a.headline,
                "description": a.headline,
                "type": "lxc",
                "section": "system",
                "architecture": "amd64",
                "maintainer": "Proxmox Support Team <support@proxmox.com>",
                "infopage": "https://pve.proxmox.com/wiki/Linux_Container#pct_supported_distributions",
                "location": format!("{SOURCE}/{}", a.template),
                "source": format!("{SOURCE}/{}", a.template),
            })
        })
        .collect()
}

/// `GET .../config` (the current or effective config, or a snapshot's):
/// its values typed, then `digest`.
pub fn config(version: PveVersion, conf: &BTreeMap<String, String>, digest: &str) -> Value {
    let mut out = Map::new();
    for (k, v) in conf {
        out.insert(k.clone(), typed(version, k, v));
    }
    out.insert("digest".into(), json!(digest));
    Value::Object(out)
}

/// `GET .../pending`: `{key, value, pending?, delete?}` per current key,
/// `digest`, then `{key, pending}` per key only pending.
pub fn pending(version: PveVersion, ct: &Ct) -> Value {
    let deleted = ct.pending_deletions();
    let mut items = Vec::new();
    for (k, val) in ct.config() {
        let mut item = json!({ "key": k, "value": typed(version, k, val) });
        if let Some(p) = ct.pending().get(k) {
            item["pending"] = typed(version, k, p);
        }
        if deleted.contains(k) {
            item["delete"] = json!(1);
        }
        items.push(item);
    }
    items.push(json!({ "key": "digest", "value": ct.digest() }));
    for (k, p) in ct.pending() {
        if !ct.config().contains_key(k) {
            items.push(json!({ "key": k, "pending": typed(version, k, p) }));
        }
    }
    Value::Array(items)
}

/// `vmstatus()` of one container (a row of `GET /nodes/{node}/lxc`, or
/// `status/current` with its `ha`).
pub fn status(s: &CtStatus<'_>) -> Value {
    let f = &s.figures;
    let mut v = json!({
        "vmid": s.vmid,
        "type": "lxc",
        "status": s.status,
        "name": f.name,
        "cpus": f.cpus,
        "maxmem": f.maxmem,
        "maxswap": s.maxswap,
        "maxdisk": f.maxdisk,
        "disk": f.disk,
        "mem": f.mem,
        "swap": 0,
        "cpu": f.cpu,
        "uptime": f.uptime,
        "netin": f.netin,
        "netout": f.netout,
        "diskread": f.diskread,
        "diskwrite": f.diskwrite,
    });
    if let Some(pid) = s.pid {
        v["pid"] = json!(pid);
    }
    if s.pressure {
        for k in crate::model::guest::rrd::PRESSURE_KEYS {
            v[k] = json!(0);
        }
    }
    if let Some(t) = s.tags {
        v["tags"] = json!(t);
    }
    if s.template {
        v["template"] = json!(1);
    }
    if let Some(l) = s.lock {
        v["lock"] = json!(l);
    }
    if let Some(ha) = s.ha {
        v["ha"] = json!(ha);
    }
    v
}

/// `GET .../interfaces`: what the container reports, each interface
/// as `get_interfaces` shapes it; `null` when it is stopped.
pub(crate) fn interfaces(reported: Option<&Value>) -> Value {
    match reported {
        None => Value::Null,
        Some(list) => list
            .as_array()
            .map(|a| a.iter().map(lxc_shape).collect::<Vec<_>>())
            .unwrap_or_default()
            .into(),
    }
}

/// An interface in the guest agent's shape as `get_interfaces` answers
/// it: `hwaddr` beside `hardware-address`, the first address of each
/// family as `inet`/`inet6`, families named as `ip` names them.
fn lxc_shape(iface: &Value) -> Value {
    let mut out = json!({
        "name": iface["name"],
        "hardware-address": iface["hardware-address"],
        "hwaddr": iface["hardware-address"],
    });
    let mut list = Vec::new();
    for ip in iface["ip-addresses"].as_array().into_iter().flatten() {
        let family = match ip["ip-address-type"].as_str() {
            Some("ipv4" | "inet") => "inet",
            _ => "inet6",
        };
        let addr = format!(
            "{}/{}",
            ip["ip-address"].as_str().unwrap_or_default(),
            ip["prefix"]
        );
        if out.get(family).is_none() {
            out[family] = json!(addr);
        }
        list.push(json!({
            "ip-address-type": family,
            "ip-address": ip["ip-address"],
            "prefix": ip["prefix"],
        }));
    }
    out["ip-addresses"] = Value::Array(list);
    out
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[rstest]
    #[case::number("cpulimit", "1.5", json!(1.5))]
    #[case::whole_number("cpulimit", "2", json!(2))]
    #[case::integer("memory", "512", json!(512))]
    #[case::boolean("onboot", "1", json!(1))]
    #[case::text("hostname", "web", json!("web"))]
    #[case::bad_integer("memory", "lots", json!("lots"))]
    fn config_values_are_typed_by_the_schema(
        #[case] key: &str,
        #[case] value: &str,
        #[case] want: Value,
    ) {
        assert_eq!(typed(PveVersion::V9_1, key, value), want);
    }

    #[rstest]
    fn pending_rows_show_values_pending_values_and_deletions() {
        // A container as a saved world holds it.
        let ct: Ct = serde_json::from_value(json!({
            "vmid": 200, "node": "pve", "status": "stopped",
            "config": {"memory": "512", "swap": "0"},
            "pending": {"memory": "1024", "hostname": "web"},
            "pending_delete": ["swap"],
        }))
        .expect("a container");
        let digest = ct.digest();
        assert_eq!(
            pending(PveVersion::V9_1, &ct),
            json!([
                {"key": "memory", "value": 512, "pending": 1024},
                {"key": "swap", "value": 0, "delete": 1},
                {"key": "digest", "value": digest},
                {"key": "hostname", "pending": "web"},
            ])
        );
    }
}
