//! Backups and pools: `vzdump`, `extractconfig`, the prune calls
//! (`dryrun`, `delete`), restoring with `create_vm` and `archive`, backup
//! jobs (`create_job`, `read_job`, `update_job`, `delete_job`,
//! `get_volume_backup_included`) and pools (`create_pool`, `read_pool`,
//! `update_pool`, `delete_pool`).
//!
//! Pools and jobs are named `{pool:NAME}` and `{job:NAME}` (the
//! scenario's prefix) and removed after it; every backup a scenario makes
//! is remembered as a volume and deleted after it; restored VMs are
//! destroyed as created ones are.

use cucumber::gherkin::Step;
use cucumber::{given, then, when};
use pve_client::api::seg;
use pve_client::{Method, Params};

use super::table_params;
use super::vm::{call_task, remember_upid, task_ok, vmid};
use crate::world::{Made, PveWorld, wait_task};

fn node_path(w: &PveWorld, tail: &str) -> String {
    format!("/nodes/{}{tail}", seg(&w.target().node))
}

/// The backups of `vmid` on `storage`, sorted by volume ID (their time).
async fn backups(w: &mut PveWorld, storage: &str, id: u32) -> Vec<String> {
    let path = node_path(w, &format!("/storage/{}/content", seg(storage)));
    let params = Params::new().set("content", "backup").set("vmid", id);
    let list = w
        .client()
        .get(&path, &params)
        .await
        .unwrap_or_else(|e| panic!("listing the backups of {id}: {e}"));
    let mut out: Vec<String> = list
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v["volid"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

async fn vzdump(w: &mut PveWorld, step: &Step, vm: &str, storage: &str, wait: bool) {
    let id = vmid(w, vm);
    let sid = w.expand(storage);
    let mut params = Params::new().set("vmid", id).set("storage", sid.as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    let path = node_path(w, "/vzdump");
    call_task(w, Method::POST, &path, params).await;
    if !wait || !w.last().ok() {
        return;
    }
    let upid = w.last_upid().to_string();
    let _ = wait_task(&w.client(), &upid).await;
    for volid in backups(w, &sid, id).await {
        w.made(Made::Volume(sid.clone(), volid));
    }
}

/// `vzdump` of one VM to a storage; waits for the task and remembers
/// the backups for cleanup.
#[when(expr = "I back up VM {string} to storage {string}")]
#[given(expr = "VM {string} was backed up to storage {string}")]
async fn vzdump_vm(w: &mut PveWorld, step: &Step, vm: String, storage: String) {
    vzdump(w, step, &vm, &storage, true).await;
}

/// `vzdump` of one container (the same call: vzdump takes any guest).
#[when(expr = "I back up container {string} to storage {string}")]
#[given(expr = "container {string} was backed up to storage {string}")]
async fn vzdump_ct(w: &mut PveWorld, step: &Step, ct: String, storage: String) {
    vzdump(w, step, &ct, &storage, true).await;
}

/// `vzdump` without waiting for its task.
#[when(expr = "I start a backup of VM {string} to storage {string}")]
async fn vzdump_start(w: &mut PveWorld, step: &Step, vm: String, storage: String) {
    vzdump(w, step, &vm, &storage, false).await;
}

/// Any `vzdump` call with the table as parameters.
#[when("I call vzdump with:")]
async fn vzdump_raw(w: &mut PveWorld, step: &Step) {
    let params = table_params(w, step);
    let path = node_path(w, "/vzdump");
    call_task(w, Method::POST, &path, params).await;
}

/// Remembers the newest (or oldest) backup of a VM as `{var:NAME}`.
#[when(
    regex = r#"^I remember the (newest|oldest) backup of VM "([^"]*)" on storage "([^"]*)" as "([^"]*)"$"#
)]
async fn remember_backup(
    w: &mut PveWorld,
    which: String,
    vm: String,
    storage: String,
    var: String,
) {
    let id = vmid(w, &vm);
    let sid = w.expand(&storage);
    let list = backups(w, &sid, id).await;
    let volid = if which == "newest" {
        list.last()
    } else {
        list.first()
    }
    .unwrap_or_else(|| panic!("VM {id} has no backup on {sid}"))
    .clone();
    w.vars.insert(var, volid);
}

/// Remembers the newest backup of a container as `{var:NAME}`.
#[when(expr = "I remember the newest backup of container {string} on storage {string} as {string}")]
async fn remember_ct_backup(w: &mut PveWorld, ct: String, storage: String, var: String) {
    remember_backup(w, "newest".into(), ct, storage, var).await;
}

#[when(expr = "I list the backups of container {string} on storage {string}")]
#[when(expr = "I list the backups of VM {string} on storage {string}")]
async fn list_backups(w: &mut PveWorld, vm: String, storage: String) {
    let id = vmid(w, &vm);
    let path = node_path(w, &format!("/storage/{}/content", seg(&w.expand(&storage))));
    let params = Params::new().set("content", "backup").set("vmid", id);
    w.call(Method::GET, &path, params).await;
}

#[when(expr = "I extract the config of backup {string}")]
async fn extractconfig(w: &mut PveWorld, volume: String) {
    let path = node_path(w, "/vzdump/extractconfig");
    let params = Params::new().set("volume", w.expand(&volume).as_str());
    w.call(Method::GET, &path, params).await;
}

#[when("I read the backup defaults")]
async fn defaults(w: &mut PveWorld, step: &Step) {
    let params = table_params(w, step);
    let path = node_path(w, "/vzdump/defaults");
    w.call(Method::GET, &path, params).await;
}

/// `create_vm` with `archive`: restores a backup as a VM (destroyed after
/// the scenario).
#[when(expr = "I restore {string} as VM {string}")]
async fn restore(w: &mut PveWorld, step: &Step, volume: String, vm: String) {
    let id = vmid(w, &vm);
    w.made(Made::Vm(id));
    let mut params = Params::new()
        .set("vmid", id)
        .set("archive", w.expand(&volume).as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    let path = node_path(w, "/qemu");
    call_task(w, Method::POST, &path, params).await;
}

/// `create_vm` of a container with `restore=1` and the backup as
/// `ostemplate` (a vzrestore task; the container is destroyed after the
/// scenario).
#[when(expr = "I restore {string} as container {string}")]
async fn restore_ct(w: &mut PveWorld, step: &Step, volume: String, ct: String) {
    let id = vmid(w, &ct);
    w.made(Made::Ct(id));
    let mut params = Params::new()
        .set("vmid", id)
        .set("ostemplate", w.expand(&volume).as_str())
        .set("restore", true);
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    let path = node_path(w, "/lxc");
    call_task(w, Method::POST, &path, params).await;
}

#[when(expr = "I dry-run a prune of storage {string}")]
async fn dryrun(w: &mut PveWorld, step: &Step, storage: String) {
    let params = table_params(w, step);
    let path = node_path(
        w,
        &format!("/storage/{}/prunebackups", seg(&w.expand(&storage))),
    );
    w.call(Method::GET, &path, params).await;
}

#[when(expr = "I prune storage {string}")]
async fn prune(w: &mut PveWorld, step: &Step, storage: String) {
    let params = table_params(w, step);
    let path = node_path(
        w,
        &format!("/storage/{}/prunebackups", seg(&w.expand(&storage))),
    );
    w.call(Method::DELETE, &path, params).await;
    remember_upid(w);
}

// ---- jobs ------------------------------------------------------------

#[when(expr = "I create backup job {string} with:")]
#[given(expr = "backup job {string} was created with:")]
async fn create_job(w: &mut PveWorld, step: &Step, id: String) {
    let id = w.expand(&id);
    w.made(Made::BackupJob(id.clone()));
    let mut params = Params::new().set("id", id.as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    w.call(Method::POST, "/cluster/backup", params).await;
}

#[when(expr = "I read backup job {string}")]
async fn read_job(w: &mut PveWorld, id: String) {
    let path = format!("/cluster/backup/{}", seg(&w.expand(&id)));
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I update backup job {string} with:")]
async fn update_job(w: &mut PveWorld, step: &Step, id: String) {
    let params = table_params(w, step);
    let path = format!("/cluster/backup/{}", seg(&w.expand(&id)));
    w.call(Method::PUT, &path, params).await;
}

#[when(expr = "I delete backup job {string}")]
async fn delete_job(w: &mut PveWorld, id: String) {
    let path = format!("/cluster/backup/{}", seg(&w.expand(&id)));
    w.call(Method::DELETE, &path, Params::new()).await;
}

#[when(expr = "I list the volumes backup job {string} includes")]
async fn included_volumes(w: &mut PveWorld, id: String) {
    let path = format!("/cluster/backup/{}/included_volumes", seg(&w.expand(&id)));
    w.call(Method::GET, &path, Params::new()).await;
}

// ---- pools -----------------------------------------------------------

#[when(expr = "I create pool {string}")]
#[given(expr = "pool {string} exists")]
async fn create_pool(w: &mut PveWorld, step: &Step, id: String) {
    let id = w.expand(&id);
    w.made(Made::Pool(id.clone()));
    let mut params = Params::new().set("poolid", id.as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    w.call(Method::POST, "/pools", params).await;
}

#[when(expr = "I update pool {string} with:")]
async fn update_pool(w: &mut PveWorld, step: &Step, id: String) {
    let mut params = Params::new().set("poolid", w.expand(&id).as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    w.call(Method::PUT, "/pools", params).await;
}

#[when(expr = "I read pool {string}")]
async fn read_pool(w: &mut PveWorld, step: &Step, id: String) {
    let mut params = Params::new().set("poolid", w.expand(&id).as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    w.call(Method::GET, "/pools", params).await;
}

#[when(expr = "I delete pool {string}")]
async fn delete_pool(w: &mut PveWorld, id: String) {
    let params = Params::new().set("poolid", w.expand(&id).as_str());
    w.call(Method::DELETE, "/pools", params).await;
}

/// Waits for the last task and asserts it ended `OK`.
#[when("the task has ended well")]
async fn ended_well(w: &mut PveWorld) {
    task_ok(w).await;
}

/// The members of the pool the last call read (`GET /pools?poolid=`), as
/// their sorted IDs joined by commas (`qemu/100,storage/pve/local`).
#[then(expr = "the pool's members are {string}")]
fn pool_members(w: &mut PveWorld, want: String) {
    let want = w.expand(&want);
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let mut ids: Vec<String> = o.data[0]["members"]
        .as_array()
        .unwrap_or_else(|| panic!("no members in {}", o.data))
        .iter()
        .filter_map(|m| m["id"].as_str().map(str::to_string))
        .collect();
    ids.sort();
    assert_eq!(ids.join(","), want, "{}", o.data);
}

/// Lets time pass: fake-pve's clock moves on, a real cluster is waited
/// for (backup names carry the second they were made in).
#[when(regex = r"^the clock moves on (\d+) seconds?$")]
async fn clock_moves_on(w: &mut PveWorld, secs: u64) {
    if !w.advance_fake_clock(i64::try_from(secs).unwrap_or(i64::MAX)) {
        tokio::time::sleep(std::time::Duration::from_secs(secs)).await;
    }
}

/// The last answer is a text holding `needle`.
#[then(expr = "the answer contains {string}")]
fn answer_contains(w: &mut PveWorld, needle: String) {
    let needle = w.expand(&needle);
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let text = o.data.as_str().unwrap_or_default();
    assert!(
        text.contains(&needle),
        "{}: {needle:?} not in {text:?}",
        o.request
    );
}

/// The listed item whose `key` is `value` has a field `name`, whatever
/// its value (`next-run`, which depends on the time).
#[then(expr = "the item with {string} = {string} has {string}")]
fn item_has_field(w: &mut PveWorld, key: String, value: String, name: String) {
    let (key, value) = (w.expand(&key), w.expand(&value));
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let item = o
        .data
        .as_array()
        .and_then(|a| {
            a.iter()
                .find(|i| i[key.as_str()].as_str() == Some(value.as_str()))
        })
        .unwrap_or_else(|| panic!("{}: no item with {key} = {value}", o.request));
    assert!(
        item.get(&name).is_some(),
        "{}: no {name} in {item}",
        o.request
    );
}
