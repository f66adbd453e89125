//! SDN: zones, VNets, subnets and controllers made in the pending
//! configuration (`/cluster/sdn/zones`, `/cluster/sdn/vnets`,
//! `.../subnets`, `/cluster/sdn/controllers`), and applying it
//! (`PUT /cluster/sdn`, task `reloadnetworkall`). Reads go through the
//! generic `I call GET` step.
//!
//! IDs are short (`{zone:a}`, `{vnet:a}`, `{controller:a}`: a letter,
//! the scenario's SDN tag, a few letters of the name), and each one made
//! is removed after the scenario (newest first: a zone before the
//! controllers it names); a scenario that applied applies its removals
//! too.

use cucumber::gherkin::Step;
use cucumber::{given, then, when};
use pve_client::api::seg;
use pve_client::api::tasks::Upid;
use pve_client::{Method, Params};

use super::table_params;
use crate::world::{Made, PveWorld};

#[when(expr = "I create SDN zone {string} of type {string}")]
#[given(expr = "SDN zone {string} of type {string} exists")]
async fn create_zone(w: &mut PveWorld, step: &Step, zone: String, kind: String) {
    let zone = w.expand(&zone);
    let mut params = Params::new()
        .set("zone", zone.as_str())
        .set("type", w.expand(&kind).as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    w.made(Made::SdnZone(zone));
    w.call(Method::POST, "/cluster/sdn/zones", params).await;
}

/// A controller; a `secondary-controllers` or other row may repeat.
#[when(expr = "I create SDN controller {string} of type {string}")]
#[given(expr = "SDN controller {string} of type {string} exists")]
async fn create_controller(w: &mut PveWorld, step: &Step, id: String, kind: String) {
    let id = w.expand(&id);
    let mut params = Params::new()
        .set("controller", id.as_str())
        .set("type", w.expand(&kind).as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    w.made(Made::SdnController(id));
    w.call(Method::POST, "/cluster/sdn/controllers", params)
        .await;
}

#[when(expr = "I create VNet {string} in zone {string}")]
#[given(expr = "VNet {string} in zone {string} exists")]
async fn create_vnet(w: &mut PveWorld, step: &Step, vnet: String, zone: String) {
    let vnet = w.expand(&vnet);
    let zone = w.expand(&zone);
    let mut params = Params::new()
        .set("vnet", vnet.as_str())
        .set("zone", zone.as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    w.vars.insert(format!("zone-of-{vnet}"), zone);
    w.made(Made::SdnVnet(vnet));
    w.call(Method::POST, "/cluster/sdn/vnets", params).await;
}

#[when(expr = "I create subnet {string} on VNet {string}")]
#[given(expr = "subnet {string} on VNet {string} exists")]
async fn create_subnet(w: &mut PveWorld, step: &Step, cidr: String, vnet: String) {
    let vnet = w.expand(&vnet);
    let cidr = w.expand(&cidr);
    let zone = w
        .vars
        .get(&format!("zone-of-{vnet}"))
        .cloned()
        .unwrap_or_default();
    let mut params = Params::new()
        .set("subnet", cidr.as_str())
        .set("type", "subnet");
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    let id = format!("{zone}-{}", cidr.replace('/', "-"));
    w.made(Made::SdnSubnet(vnet.clone(), id));
    let path = format!("/cluster/sdn/vnets/{}/subnets", seg(&vnet));
    w.call(Method::POST, &path, params).await;
}

#[when("I apply the SDN configuration")]
#[given("the SDN configuration was applied")]
async fn reload(w: &mut PveWorld) {
    w.sdn_applied = true;
    w.call(Method::PUT, "/cluster/sdn", Params::new()).await;
    let o = w.last();
    if o.ok() {
        let upid: Upid = o
            .data
            .as_str()
            .unwrap_or_default()
            .parse()
            .unwrap_or_else(|e| panic!("PUT /cluster/sdn answered {}: {e}", o.data));
        w.upids.push(upid);
    }
}

/// PVE prints the file and line of a `die` without a trailing newline
/// (and of a parameter exception) into the message: scenarios match
/// such messages by pattern (`(?s)`, so `.` spans lines).
#[then(expr = "PVE answers {int} with a message matching {string}")]
fn answers_matching(w: &mut PveWorld, status: u16, pattern: String) {
    let pattern = w.expand(&pattern);
    let re = regex::Regex::new(&format!("(?s){pattern}")).unwrap_or_else(|e| panic!("{e}"));
    let o = w.last();
    assert_eq!(o.status, status, "{}: {o:?}", o.request);
    assert!(
        re.is_match(&o.message),
        "{}: {:?} does not match {pattern}",
        o.request,
        o.message
    );
}

#[when(expr = "I remember the answer as {string}")]
fn remember_answer(w: &mut PveWorld, var: String) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let v = o
        .data
        .as_str()
        .unwrap_or_else(|| panic!("{}: not a string: {}", o.request, o.data))
        .to_string();
    w.vars.insert(var, v);
}
