//! The cluster's read side: `version`, the node list (`index`, fake-pve's
//! `list_nodes`), node `status` and `version`, cluster `get_status`,
//! `resources` and `nextid`.

use cucumber::{then, when};
use pve_client::api::seg;
use pve_client::{Method, Params};

use crate::world::PveWorld;

#[when("I read the version")]
async fn version(w: &mut PveWorld) {
    w.call(Method::GET, "/version", Params::new()).await;
}

#[then("the version is the release the target runs")]
async fn version_matches_release(w: &mut PveWorld) {
    let release = crate::target::release_name(w.release());
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    assert_eq!(o.data["release"].as_str(), Some(release), "{}", o.data);
    let version = o.data["version"].as_str().unwrap_or_default();
    assert!(version.starts_with(&format!("{release}.")), "{version}");
    let repoid = o.data["repoid"].as_str().unwrap_or_default();
    assert!(
        (8..=64).contains(&repoid.len()) && repoid.chars().all(|c| c.is_ascii_hexdigit()),
        "repoid {repoid}"
    );
}

#[when("I list the nodes")]
async fn list_nodes(w: &mut PveWorld) {
    w.call(Method::GET, "/nodes", Params::new()).await;
}

#[when(expr = "I read the status of node {string}")]
async fn node_status(w: &mut PveWorld, node: String) {
    let path = format!("/nodes/{}/status", seg(&w.expand(&node)));
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I read the version of node {string}")]
async fn node_version(w: &mut PveWorld, node: String) {
    let path = format!("/nodes/{}/version", seg(&w.expand(&node)));
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I read the node {string}")]
async fn node_index(w: &mut PveWorld, node: String) {
    let path = format!("/nodes/{}", seg(&w.expand(&node)));
    w.call(Method::GET, &path, Params::new()).await;
}

#[when("I read the cluster status")]
async fn get_status(w: &mut PveWorld) {
    w.call(Method::GET, "/cluster/status", Params::new()).await;
}

#[when("I list the cluster resources")]
async fn resources(w: &mut PveWorld) {
    w.call(Method::GET, "/cluster/resources", Params::new())
        .await;
}

#[when(expr = "I list the cluster resources of type {string}")]
async fn resources_of_type(w: &mut PveWorld, kind: String) {
    let params = Params::new().set("type", kind.as_str());
    w.call(Method::GET, "/cluster/resources", params).await;
}

#[when("I ask for the next free VMID")]
async fn nextid(w: &mut PveWorld) {
    w.call(Method::GET, "/cluster/nextid", Params::new()).await;
}

#[when(expr = "I ask whether VMID {string} is free")]
async fn nextid_vmid(w: &mut PveWorld, vmid: String) {
    let params = Params::new().set("vmid", w.expand(&vmid).as_str());
    w.call(Method::GET, "/cluster/nextid", params).await;
}

#[then("the answer is a VMID as a string")]
fn vmid_string(w: &mut PveWorld) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let id = o
        .data
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {}", o.data));
    let n: u32 = id.parse().unwrap_or_else(|_| panic!("not a VMID: {id}"));
    assert!(n >= 100, "{n}");
}
