//! The SDN answers as JSON, built from what the model hands over: the
//! IPAM's addresses, a node's zones and VNets, the applied VNets of the network listing. The
//! keys come in PVE's order (serde_json keeps the order they are
//! inserted in).

use serde_json::{Map, Value, json};

use crate::model::sdn::cluster::LocalVnet;
use crate::model::sdn::ipam::IpamAddress;
use crate::model::sdn::status::VnetStatus;

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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::ipam_address;
    use crate::model::sdn::ipam::{IpamAddress, IpamEntry};
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
