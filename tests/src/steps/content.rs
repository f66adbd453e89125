//! A storage's content on the test node: `index` (`GET .../content`),
//! `create` (allocating a volume), `info`, `updateattributes` and
//! `delete` of `.../content/{volume}`, `download_url` and
//! `query_url_metadata`.
//!
//! Every volume a scenario allocates or downloads is remembered before
//! the call and deleted after the scenario (before the storages it
//! defined are removed).

use cucumber::gherkin::Step;
use cucumber::{given, when};
use pve_client::api::seg;
use pve_client::{Method, Params};
use serde_json::{Value, json};

use super::vm::{call_task, remember_upid, vmid};
use super::{table_objects, table_params};
use crate::world::{Made, PveWorld};

fn content_path(w: &PveWorld, storage: &str, tail: &str) -> String {
    format!(
        "/nodes/{}/storage/{}/content{tail}",
        seg(&w.target().node),
        seg(&w.expand(storage))
    )
}

fn volume_path(w: &PveWorld, storage: &str, volume: &str) -> String {
    content_path(w, storage, &format!("/{}", seg(&w.expand(volume))))
}

#[when(expr = "I list the content of storage {string}")]
async fn index(w: &mut PveWorld, step: &Step, storage: String) {
    let params = table_params(w, step);
    let path = content_path(w, &storage, "");
    w.call(Method::GET, &path, params).await;
}

#[when(expr = "I allocate {string} for VM {string} on storage {string}")]
async fn create(w: &mut PveWorld, step: &Step, file: String, vm: String, storage: String) {
    let sid = w.expand(&storage);
    let file = w.expand(&file);
    let id = vmid(w, &vm);
    let mut params = Params::new().set("vmid", id).set("filename", file.as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    let path = content_path(w, &storage, "");
    w.call(Method::POST, &path, params).await;
    let o = w.last();
    if o.ok()
        && let Some(volid) = o.data.as_str()
    {
        let volid = volid.to_string();
        w.made(Made::Volume(sid, volid));
    }
}

#[when(expr = "I read volume {string} of storage {string}")]
async fn info(w: &mut PveWorld, volume: String, storage: String) {
    let path = volume_path(w, &storage, &volume);
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I update volume {string} of storage {string} with:")]
async fn updateattributes(w: &mut PveWorld, step: &Step, volume: String, storage: String) {
    let params = table_params(w, step);
    let path = volume_path(w, &storage, &volume);
    w.call(Method::PUT, &path, params).await;
}

#[when(expr = "I delete volume {string} of storage {string}")]
async fn delete(w: &mut PveWorld, step: &Step, volume: String, storage: String) {
    let params = table_params(w, step);
    let path = volume_path(w, &storage, &volume);
    call_task(w, Method::DELETE, &path, params).await;
}

#[when(expr = "I download {string} as {word} {string} to storage {string}")]
async fn download_url(
    w: &mut PveWorld,
    step: &Step,
    url: String,
    content: String,
    file: String,
    storage: String,
) {
    let sid = w.expand(&storage);
    let file = w.expand(&file);
    // Remembered first: the file is there once the task ends.
    let name = file.rsplit('/').next().unwrap_or(&file).replace(' ', "_");
    w.made(Made::Volume(sid.clone(), format!("{sid}:{content}/{name}")));
    let mut params = Params::new()
        .set("url", w.expand(&url).as_str())
        .set("content", content.as_str())
        .set("filename", file.as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    let path = format!(
        "/nodes/{}/storage/{}/download-url",
        seg(&w.target().node),
        seg(&sid)
    );
    call_task(w, Method::POST, &path, params).await;
}

#[when(expr = "I upload {string} as {word} {string} to storage {string}")]
async fn upload(
    w: &mut PveWorld,
    step: &Step,
    text: String,
    content: String,
    file: String,
    storage: String,
) {
    let sid = w.expand(&storage);
    let file = w.expand(&file);
    let name = file.rsplit('/').next().unwrap_or(&file).replace(' ', "_");
    w.made(Made::Volume(sid.clone(), format!("{sid}:{content}/{name}")));
    let mut req =
        pve_client::api::storage::Upload::new(&content, &file, w.expand(&text).into_bytes());
    for (k, v) in table_params(w, step).pairs() {
        match k.as_str() {
            "checksum" => req.checksum = Some(v.clone()),
            "checksum-algorithm" => req.checksum_algorithm = Some(v.clone()),
            other => panic!("upload has no parameter '{other}' in this step"),
        }
    }
    w.call_upload(&sid, &req).await;
    remember_upid(w);
}

#[when(expr = "I query the metadata of URL {string}")]
async fn query_url_metadata(w: &mut PveWorld, url: String) {
    let path = format!("/nodes/{}/query-url-metadata", seg(&w.target().node));
    let params = Params::new().set("url", w.expand(&url).as_str());
    w.call(Method::GET, &path, params).await;
}

/// fake-pve's table of URLs it pretends to fetch (`/_fake/downloads`):
/// a header row (`url`, `size`, `checksum`, `checksum-algorithm`,
/// `mimetype`, `filename`, `fail`, `insecure`), then one row per URL.
#[given("the internet serves:")]
async fn known_urls(w: &mut PveWorld, step: &Step) {
    let list = table_objects(w, step, |k, v| match k {
        "size" => json!(v.parse::<u64>().unwrap_or_else(|_| panic!("size {v}"))),
        "insecure" => json!(v == "true" || v == "1"),
        _ => json!(v),
    });
    w.control(
        Method::PUT,
        "/_fake/downloads",
        Some(("application/json", Value::Array(list).to_string())),
    )
    .await;
}

/// Remembers the volume ID of a drive in the last config read (the part
/// of `scsi0` before its first comma).
#[when(expr = "I remember the volume of {string} as {string}")]
fn remember_volume(w: &mut PveWorld, drive: String, var: String) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let drive_value = o.data[drive.as_str()]
        .as_str()
        .unwrap_or_else(|| panic!("{}: no {drive} in {}", o.request, o.data));
    let volid = drive_value
        .split(',')
        .next()
        .unwrap_or_default()
        .to_string();
    w.vars.insert(var, volid);
}
