//! SDN prefix lists and route maps (9.2): a prefix list made in the
//! pending configuration (`POST /cluster/sdn/prefix-lists`, an `entries`
//! row may repeat) and a route map entry
//! (`POST /cluster/sdn/route-maps/entries`, `match` and `set` rows may
//! repeat). Reads, updates and deletes go through the generic
//! `I call ...` steps.
//!
//! IDs are short (`{prefix-list:a}`, `{route-map:a}`: `p` or `r`, the
//! scenario's SDN tag, a few letters of the name); what is made is
//! removed after the scenario, route map entries before the lists they
//! match.

use cucumber::gherkin::Step;
use cucumber::{given, when};
use pve_client::{Method, Params};

use super::table_params;
use crate::world::{Made, PveWorld};

#[when(expr = "I create SDN prefix list {string}")]
#[given(expr = "SDN prefix list {string} exists")]
async fn create_prefix_list(w: &mut PveWorld, step: &Step, id: String) {
    let id = w.expand(&id);
    let mut params = Params::new().set("id", id.as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    w.made(Made::SdnPrefixList(id));
    w.call(Method::POST, "/cluster/sdn/prefix-lists", params)
        .await;
}

#[when(expr = "I create entry {int} of SDN route map {string} with action {string}")]
#[given(expr = "entry {int} of SDN route map {string} with action {string} exists")]
async fn create_route_map_entry(
    w: &mut PveWorld,
    step: &Step,
    order: u16,
    route_map: String,
    action: String,
) {
    let route_map = w.expand(&route_map);
    let mut params = Params::new()
        .set("route-map-id", route_map.as_str())
        .set("order", u64::from(order))
        .set("action", w.expand(&action).as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    w.made(Made::SdnRouteMapEntry(route_map, order));
    w.call(Method::POST, "/cluster/sdn/route-maps/entries", params)
        .await;
}
