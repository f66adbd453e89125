//! The SDN answers as JSON, built from what the model hands over: a
//! node's zones and VNets, the applied VNets of the network listing. The
//! keys come in PVE's order (serde_json keeps the order they are
//! inserted in).

use serde_json::{Value, json};

use crate::model::sdn::cluster::LocalVnet;
use crate::model::sdn::status::VnetStatus;

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
