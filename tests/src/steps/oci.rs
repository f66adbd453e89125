//! OCI registries (PVE 9.1 and later): `query_oci_repo_tags` and
//! `oci_registry_pull`, a container created from the pulled image, and
//! fake-pve's emulated registries (`/_fake/oci-images`).
//!
//! A pulled archive is remembered before the call and deleted after the
//! scenario.

use cucumber::gherkin::Step;
use cucumber::{given, then, when};
use pve_client::api::seg;
use pve_client::{Method, Params};
use serde_json::{Value, json};

use super::vm::{call_task, vmid};
use super::{table_objects, table_params};
use crate::world::{Made, PveWorld};

/// What the emulated registries hold (`PUT /_fake/oci-images`): a header
/// row (`reference`, `layers`, `entrypoint`, `cmd`, `env`, `volumes`,
/// `ostype`, ...), then one row per image. A list is written as JSON
/// (`["/entry.sh"]`), or as one word for a list of one.
#[given("the registry holds:")]
async fn registry_holds(w: &mut PveWorld, step: &Step) {
    let list = table_objects(w, step, |k, v| match k {
        "entrypoint" | "cmd" | "env" | "volumes" | "layers" => {
            serde_json::from_str(&v).unwrap_or_else(|_| json!([v]))
        }
        _ => json!(v),
    });
    w.control(
        Method::PUT,
        "/_fake/oci-images",
        Some(("application/json", Value::Array(list).to_string())),
    )
    .await;
}

#[when(expr = "I list the tags of OCI repository {string}")]
async fn query_oci_repo_tags(w: &mut PveWorld, reference: String) {
    let path = format!("/nodes/{}/query-oci-repo-tags", seg(&w.target().node));
    let params = Params::new().set("reference", w.expand(&reference).as_str());
    w.call(Method::GET, &path, params).await;
}

#[then(expr = "the tags are {string}")]
fn tags_are(w: &mut PveWorld, want: String) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let got: Vec<&str> = o
        .data
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert_eq!(got.join(","), want, "{}", o.request);
}

/// Pulls an image; the table may give `filename`. The archive it would
/// write (`vztmpl/<file>.tar`) is remembered for the clean-up.
#[when(expr = "I pull OCI image {string} to storage {string}")]
async fn oci_registry_pull(w: &mut PveWorld, step: &Step, reference: String, storage: String) {
    let sid = w.expand(&storage);
    let reference = w.expand(&reference);
    let params = table_params(w, step);
    let base = params
        .pairs()
        .iter()
        .find(|(k, _)| k == "filename")
        .map_or(reference.clone(), |(_, v)| v.to_string());
    let base = base.rsplit('/').next().unwrap_or(&base).to_string();
    let file: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    w.made(Made::Volume(
        sid.clone(),
        format!("{sid}:vztmpl/{file}.tar"),
    ));
    let mut p = Params::new().set("reference", reference.as_str());
    for (k, v) in params.pairs() {
        p.push(k.clone(), v.clone());
    }
    let path = format!(
        "/nodes/{}/storage/{}/oci-registry-pull",
        seg(&w.target().node),
        seg(&sid)
    );
    call_task(w, Method::POST, &path, p).await;
}

/// `create_vm` from the template volume given.
#[when(expr = "I create container {string} from {string} with:")]
async fn create_from(w: &mut PveWorld, step: &Step, ct: String, template: String) {
    let id = vmid(w, &ct);
    w.made(Made::Ct(id));
    let mut p = Params::new()
        .set("vmid", id)
        .set("ostemplate", w.expand(&template).as_str());
    for (k, v) in table_params(w, step).pairs() {
        p.push(k.clone(), v.clone());
    }
    let path = format!("/nodes/{}/lxc", seg(&w.target().node));
    call_task(w, Method::POST, &path, p).await;
}

#[then(expr = "the log has a line containing {string}")]
fn log_line_containing(w: &mut PveWorld, end: String) {
    let end = w.expand(&end);
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let found = o.data.as_array().is_some_and(|a| {
        a.iter()
            .any(|l| l["t"].as_str().is_some_and(|t| t.contains(&end)))
    });
    assert!(
        found,
        "{}: no line containing {end:?} in {}",
        o.request, o.data
    );
}
