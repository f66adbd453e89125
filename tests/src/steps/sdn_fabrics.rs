//! SDN fabrics (9.x): a fabric made in the pending configuration
//! (`POST /cluster/sdn/fabrics/fabric`) and a node added to it
//! (`POST /cluster/sdn/fabrics/node/{fabric_id}`). Reads, updates and
//! deletes go through the generic `I call ...` steps.
//!
//! Fabric IDs are short (`{fabric:a}`: `f`, the scenario's SDN tag, a
//! few letters of the name); each fabric made is removed (with its
//! nodes) after the scenario.

use cucumber::gherkin::Step;
use cucumber::{given, when};
use pve_client::api::seg;
use pve_client::{Method, Params};

use super::table_params;
use crate::world::{Made, PveWorld};

#[when(expr = "I create SDN fabric {string} with protocol {string}")]
#[given(expr = "SDN fabric {string} with protocol {string} exists")]
async fn add_fabric(w: &mut PveWorld, step: &Step, id: String, protocol: String) {
    let id = w.expand(&id);
    let mut params = Params::new()
        .set("id", id.as_str())
        .set("protocol", w.expand(&protocol).as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    w.made(Made::SdnFabric(id));
    w.call(Method::POST, "/cluster/sdn/fabrics/fabric", params)
        .await;
}

/// A node of a fabric; an `interfaces` row may repeat (a list).
#[when(expr = "I add node {string} to SDN fabric {string} with protocol {string}")]
#[given(expr = "node {string} is in SDN fabric {string} with protocol {string}")]
async fn add_node(w: &mut PveWorld, step: &Step, node: String, fabric: String, protocol: String) {
    let fabric = w.expand(&fabric);
    let mut params = Params::new()
        .set("node_id", w.expand(&node).as_str())
        .set("protocol", w.expand(&protocol).as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    let path = format!("/cluster/sdn/fabrics/node/{}", seg(&fabric));
    w.call(Method::POST, &path, params).await;
}
