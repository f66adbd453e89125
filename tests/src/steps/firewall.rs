//! The firewall: security groups (`create_security_group`), aliases
//! (`create_alias`) and IP sets (`create_ipset`) of the cluster, each
//! named `{fw:NAME}` (the scenario's prefix; PVE allows 18 characters in
//! a group's name) and removed after the scenario; and the assertions on
//! rule lists. Everything else goes through `I call ...`.

use cucumber::gherkin::Step;
use cucumber::{given, then, when};
use pve_client::{Method, Params};

use super::{field, table_params, text};
use crate::world::{Made, PveWorld};

/// Makes a cluster firewall object and remembers it when PVE took it.
async fn make(w: &mut PveWorld, path: &str, params: Params, made: Made) {
    w.call(Method::POST, path, params).await;
    if w.last().ok() {
        w.made(made);
    }
}

#[when(expr = "I create security group {string}")]
#[given(expr = "security group {string} exists")]
async fn create_security_group(w: &mut PveWorld, step: &Step, name: String) {
    let group = w.expand(&name);
    let mut params = table_params(w, step);
    params.push("group", group.as_str());
    make(
        w,
        "/cluster/firewall/groups",
        params,
        Made::FwGroup(group.to_lowercase()),
    )
    .await;
}

#[when(expr = "I create alias {string} for {string}")]
#[given(expr = "alias {string} stands for {string}")]
async fn create_alias(w: &mut PveWorld, step: &Step, name: String, cidr: String) {
    let name = w.expand(&name);
    let mut params = table_params(w, step);
    params.push("name", name.as_str());
    params.push("cidr", w.expand(&cidr));
    make(w, "/cluster/firewall/aliases", params, Made::FwAlias(name)).await;
}

#[when(expr = "I create IP set {string}")]
#[given(expr = "IP set {string} exists")]
async fn create_ipset(w: &mut PveWorld, step: &Step, name: String) {
    let name = w.expand(&name);
    let mut params = table_params(w, step);
    params.push("name", name.as_str());
    make(
        w,
        "/cluster/firewall/ipset",
        params,
        Made::FwIpset(name.to_lowercase()),
    )
    .await;
}

/// The `key` of every item of the last answer, in order, `-` for an item
/// without it.
fn column(w: &PveWorld, key: &str) -> Vec<String> {
    let o = w.last();
    assert!(o.ok(), "{}: {} {}", o.request, o.status, o.message);
    o.data
        .as_array()
        .unwrap_or_else(|| panic!("{}: not a list: {}", o.request, o.data))
        .iter()
        .map(|item| field(item, key).map_or_else(|| "-".to_string(), text))
        .collect()
}

#[then(expr = "the items' {string} are {string}")]
fn items_are(w: &mut PveWorld, key: String, want: String) {
    let want = w.expand(&want);
    let want: Vec<&str> = if want.is_empty() {
        Vec::new()
    } else {
        want.split(", ").collect()
    };
    assert_eq!(column(w, &key), want, "{}", w.last().request);
}

#[then("every item has the same digest")]
fn same_digest(w: &mut PveWorld) {
    let d = column(w, "digest");
    assert!(
        d.windows(2).all(|p| p[0] == p[1]) && d.iter().all(|x| x.len() == 40),
        "{d:?}"
    );
}
