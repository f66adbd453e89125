//! The SDN answers as JSON, built from what the model hands over: the
//! sections of the configuration files (with the pending view's `state`
//! and `pending`), the fabrics and their nodes, the IPAM's addresses, a
//! node's zones and VNets, the applied VNets of the network listing. The
//! keys come in PVE's order (serde_json keeps the order they are
//! inserted in).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::model::sdn::bridges::ZoneBridge;
use crate::model::sdn::cluster::LocalVnet;
use crate::model::sdn::ipam::IpamAddress;
use crate::model::sdn::status::VnetStatus;
use crate::model::sdn::{Entry, File, State, parse_range, split_subnet_id, text};

/// `GET /cluster/sdn`: the subdirectories (`fabrics` on 9.x).
pub fn index(v9: bool) -> Value {
    let mut ids = vec!["vnets", "zones", "controllers", "ipams", "dns"];
    if v9 {
        ids.push("fabrics");
    }
    Value::Array(ids.into_iter().map(|id| json!({ "id": id })).collect())
}

/// `GET /cluster/sdn/fabrics`: the subdirectories.
pub fn fabrics_index() -> Value {
    let items: Vec<Value> = ["fabric", "node", "all"]
        .into_iter()
        .map(|s| json!({ "subdir": s }))
        .collect();
    Value::Array(items)
}

fn state(s: State) -> &'static str {
    match s {
        State::New => "new",
        State::Changed => "changed",
        State::Deleted => "deleted",
    }
}

/// A section's members as PVE's hash holds them, sorted by name: its
/// options and, in the pending view, `pending` (the removed options as
/// `deleted` first, then the new values) and `state`.
fn members(e: &Entry) -> BTreeMap<String, Value> {
    let mut m = e.values.clone();
    if let Some(p) = &e.pending {
        let mut pending = Map::new();
        for k in &p.deleted {
            pending.insert(k.clone(), json!("deleted"));
        }
        for (k, v) in &p.set {
            pending.insert(k.clone(), v.clone());
        }
        m.insert("pending".into(), Value::Object(pending));
    }
    if let Some(s) = e.state {
        m.insert("state".into(), json!(state(s)));
    }
    m
}

/// A section of a configuration file as the API answers it: its members,
/// its id under the file's key, the digest; a subnet's `id`, `cidr`,
/// `zone`, `network` and `mask` (`sdn_subnets_config`) and its
/// `dhcp-range` as objects.
pub fn section(f: File, id: &str, e: &Entry, digest: Option<&str>) -> Value {
    let mut m: Map<String, Value> = members(e).into_iter().collect();
    m.insert(f.id_key().into(), json!(id));
    if let Some(d) = digest {
        m.insert("digest".into(), json!(d));
    }
    if f == File::Subnets {
        if let Some((zone, network, mask)) = split_subnet_id(id) {
            m.insert("id".into(), json!(id));
            m.insert("cidr".into(), json!(format!("{network}/{mask}")));
            m.insert("zone".into(), json!(zone));
            m.insert("network".into(), json!(network));
            m.insert("mask".into(), json!(mask));
        }
        let ranges = e
            .values
            .get("dhcp-range")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|r| parse_range(&text(r)).ok())
                    .map(|(s, e)| json!({"start-address": s, "end-address": e}))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        m.insert("dhcp-range".into(), Value::Array(ranges));
    }
    Value::Object(m)
}

/// A fabric or a fabric's node as the API answers it: its members and
/// the digest, sorted by name (as PVE's hash is).
pub fn fabric_record(e: &Entry, digest: Option<&str>) -> Value {
    let mut m = members(e);
    if let Some(d) = digest {
        m.insert("digest".into(), json!(d));
    }
    Value::Object(m.into_iter().collect())
}

/// An address of `GET /cluster/sdn/ipams/{ipam}/status`: what holds it,
/// then where. A guest's `vmid` is an integer since PVE 9 (pve-network's
/// "ensure that guest ID is returned as an integer", a breaking change
/// meant for 9.0); 8.x sends the IPAM database's string.
pub fn ipam_address(a: &IpamAddress<'_>, v9: bool) -> Value {
    let e = a.entry;
    let mut m = Map::new();
    if e.gateway {
        m.insert("gateway".into(), json!(1));
    }
    if let Some(h) = &e.hostname {
        m.insert("hostname".into(), json!(h));
    }
    if let Some(mac) = &e.mac {
        m.insert("mac".into(), json!(mac));
    }
    if let Some(v) = &e.vmid {
        let vmid = match v.parse::<u64>() {
            Ok(n) if v9 => json!(n),
            _ => json!(v),
        };
        m.insert("vmid".into(), vmid);
    }
    m.insert("zone".into(), json!(a.zone));
    m.insert("subnet".into(), json!(a.subnet));
    m.insert("ip".into(), json!(a.ip));
    m.insert("vnet".into(), json!(a.vnet));
    Value::Object(m)
}

/// A zone of `GET /nodes/{node}/sdn/zones`.
pub fn node_zone(zone: &str, status: &str) -> Value {
    json!({ "zone": zone, "status": status })
}

/// A VNet of `GET /nodes/{node}/sdn/zones/{zone}/content`: `statusmsg`
/// is null when there is nothing to say, as PVE's undefined value reads.
pub fn zone_vnet(vnet: &str, v: &VnetStatus) -> Value {
    json!({ "vnet": vnet, "status": v.status, "statusmsg": v.statusmsg })
}

/// A bridge of `GET /nodes/{node}/sdn/zones/{zone}/bridges`: the
/// guest's VMID as the port name's digits (text, as PVE's regex capture
/// is), `index` as `net<n>`, and on a VLAN-aware bridge the PVID and
/// VLANs; `vlan_filtering` is null where the bridge does not exist.
pub fn zone_bridge(b: &ZoneBridge) -> Value {
    let ports: Vec<Value> = b
        .ports
        .iter()
        .map(|p| {
            let mut port = json!({ "name": p.name });
            if let Some((vmid, index)) = &p.guest {
                port["vmid"] = json!(vmid.to_string());
                port["index"] = json!(index);
            }
            if let Some((pvid, vlans)) = &p.vlans {
                port["vlans"] = json!(vlans);
                port["primary_vlan"] = json!(pvid);
            }
            port
        })
        .collect();
    json!({ "name": b.name, "vlan_filtering": b.vlan_filtering, "ports": ports })
}

/// An applied VNet in a node's network listing (`get_local_vnets`).
pub fn local_vnet(v: &LocalVnet) -> Value {
    let mut item = json!({
        "iface": v.vnet,
        "type": "vnet",
        "active": "1",
        "ipam": u8::from(v.ipam),
        "vlanaware": u8::from(v.vlanaware),
    });
    if let Some(alias) = &v.alias {
        item["comments"] = alias.clone();
    }
    item
}

/// A prefix list of `GET /cluster/sdn/prefix-lists`: with `verbose` its
/// members (`type`, `id`, `entries`) and the digest, else its `id` and,
/// in the pending view, its `state`.
pub fn prefix_list(id: &str, e: &Entry, verbose: bool, digest: Option<&str>) -> Value {
    if verbose {
        return fabric_record(e, digest);
    }
    let mut m = Map::new();
    m.insert("id".into(), json!(id));
    if let Some(s) = e.state {
        m.insert("state".into(), json!(state(s)));
    }
    Value::Object(m)
}

/// A record the model made (a prefix list, its entry, a route map
/// entry), as an object.
pub fn object(o: crate::model::sdn::Obj) -> Value {
    Value::Object(o.into_iter().collect())
}

/// `GET /cluster/sdn/dry-run`: both diffs, `null` where a file would
/// not change.
pub fn dry_run(d: &crate::model::sdn::generate::DryRun) -> Value {
    json!({ "frr-diff": d.frr, "interfaces-diff": d.interfaces })
}

/// An entry of `GET /nodes/{node}/sdn/vnets/{vnet}/mac-vrf`.
pub fn mac_route(r: &crate::model::sdn::generate::vrf::MacRoute) -> Value {
    json!({ "ip": r.ip, "mac": r.mac, "nexthop": r.nexthop })
}

/// An entry of `GET /nodes/{node}/sdn/zones/{zone}/ip-vrf`.
pub fn vrf_route(r: &crate::model::sdn::generate::vrf::VrfRoute) -> Value {
    json!({
        "ip": r.ip,
        "metric": r.metric,
        "nexthops": r.nexthops,
        "protocol": r.protocol,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{ipam_address, section};
    use crate::model::sdn::ipam::{IpamAddress, IpamEntry};
    use crate::model::sdn::{Entry, File, Obj, Pending, State};

    fn obj(pairs: &[(&str, Value)]) -> Obj {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), v.clone()))
            .collect()
    }

    fn keys(v: &Value) -> Vec<String> {
        v.as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// A subnet: its options, its id, the digest, then what its id says
    /// (`sdn_subnets_config`); the ranges as objects in their place.
    #[test]
    fn a_subnet_shows_its_cidr_zone_and_ranges() {
        let e = Entry {
            values: obj(&[
                (
                    "dhcp-range",
                    json!(["start-address=10.10.0.100,end-address=10.10.0.101"]),
                ),
                ("type", json!("subnet")),
                ("vnet", json!("labnet")),
            ]),
            state: None,
            pending: None,
        };
        let s = section(File::Subnets, "lab-10.10.0.0-24", &e, Some("d"));
        assert_eq!(s["cidr"], json!("10.10.0.0/24"));
        assert_eq!(s["zone"], json!("lab"));
        assert_eq!(s["mask"], json!("24"));
        assert_eq!(
            s["dhcp-range"],
            json!([{"start-address": "10.10.0.100", "end-address": "10.10.0.101"}])
        );
        assert_eq!(
            keys(&s),
            [
                "dhcp-range",
                "type",
                "vnet",
                "subnet",
                "digest",
                "id",
                "cidr",
                "zone",
                "network",
                "mask"
            ]
        );
    }

    /// The pending view: `pending` and `state` among the options by
    /// name, the removed options first in `pending`.
    #[test]
    fn a_pending_section_shows_removed_options_first() {
        let e = Entry {
            values: obj(&[
                ("dhcp", json!("dnsmasq")),
                ("mtu", json!(1450)),
                ("type", json!("simple")),
            ]),
            state: Some(State::Changed),
            pending: Some(Pending {
                deleted: vec!["mtu".into()],
                set: obj(&[("dhcp", json!("kea"))]),
            }),
        };
        let s = section(File::Zones, "lab", &e, None);
        assert_eq!(
            s,
            json!({
                "dhcp": "dnsmasq",
                "mtu": 1450,
                "pending": {"mtu": "deleted", "dhcp": "kea"},
                "state": "changed",
                "type": "simple",
                "zone": "lab",
            })
        );
        assert_eq!(
            keys(&s),
            ["dhcp", "mtu", "pending", "state", "type", "zone"]
        );
        assert_eq!(keys(&s["pending"]), ["mtu", "dhcp"]);
    }

    /// A guest's VMID: an integer since PVE 9, the database's text before.
    #[test]
    fn the_vmid_is_sent_as_each_release_does() {
        let entry = IpamEntry {
            mac: Some("BC:24:11:00:01:00".into()),
            vmid: Some("100".into()),
            ..IpamEntry::default()
        };
        let a = IpamAddress {
            zone: "lab",
            subnet: "10.10.0.0/24",
            ip: "10.10.0.100",
            vnet: "labnet".into(),
            entry: &entry,
        };
        assert_eq!(ipam_address(&a, false)["vmid"], json!("100"));
        assert_eq!(ipam_address(&a, true)["vmid"], json!(100));
        let keys: Vec<String> = ipam_address(&a, true)
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        assert_eq!(keys, ["mac", "vmid", "zone", "subnet", "ip", "vnet"]);
    }
}
