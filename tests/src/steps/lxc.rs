//! Containers: `create_vm`, `vm_config`, `update_vm`, `vm_pending`,
//! `vm_status`, `vmlist`, the power calls, `destroy_vm`, snapshots
//! (`snapshot`, `list`, `rollback`, `delsnapshot`), `template`,
//! `clone_vm`, `resize_vm`, `ip` (interfaces) and the appliance index
//! (`aplinfo`, `apl_download`), under `/nodes/{node}/lxc`.
//!
//! Containers need an OS template volume: `PVE_TEST_OSTEMPLATE` names one
//! that exists on a real cluster; otherwise Debian 12 is downloaded into
//! `local` from the appliance index (once; it is left there). Its volume
//! ID is `{var:ostemplate}`. Every container a scenario creates (or
//! clones) is stopped and destroyed with `purge` afterwards.

use cucumber::gherkin::Step;
use cucumber::{given, when};
use pve_client::api::seg;
use pve_client::{Method, Params};

use super::table_params;
use super::vm::{call_task, task_ok, vmid};
use crate::world::{Made, PveWorld, wait_task};

/// The appliance the features create containers from.
const APPLIANCE: &str = "debian-12-standard_12.7-1_amd64.tar.zst";

/// `/nodes/{node}/lxc/{vmid}` plus `tail`.
fn ct_path(w: &PveWorld, ct: &str, tail: &str) -> String {
    format!("/nodes/{}/lxc/{}{tail}", seg(&w.target().node), vmid(w, ct))
}

#[given("the OS template is available")]
async fn ostemplate(w: &mut PveWorld) {
    if let Some(t) = std::env::var("PVE_TEST_OSTEMPLATE")
        .ok()
        .filter(|t| !t.trim().is_empty())
    {
        w.vars.insert("ostemplate".into(), t);
        return;
    }
    let volid = format!("local:vztmpl/{APPLIANCE}");
    let node = w.target().node.clone();
    let admin = w.admin();
    let content = admin
        .get(
            &format!("/nodes/{}/storage/local/content", seg(&node)),
            &Params::new().set("content", "vztmpl"),
        )
        .await
        .unwrap_or_else(|e| panic!("listing the templates of 'local': {e}"));
    let have = content
        .as_array()
        .is_some_and(|a| a.iter().any(|c| c["volid"] == volid.as_str()));
    if !have {
        let upid = admin
            .post(
                &format!("/nodes/{}/aplinfo", seg(&node)),
                &Params::new()
                    .set("storage", "local")
                    .set("template", APPLIANCE),
            )
            .await
            .unwrap_or_else(|e| panic!("downloading {APPLIANCE}: {e}"));
        let exit = wait_task(&admin, upid.as_str().unwrap_or_default())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(exit, "OK", "downloading {APPLIANCE}");
    }
    w.vars.insert("ostemplate".into(), volid);
}

async fn create(w: &mut PveWorld, ct: &str, params: Params) {
    let id = vmid(w, ct);
    w.made(Made::Ct(id));
    let template = w.vars.get("ostemplate").cloned().unwrap_or_else(|| {
        panic!("no OS template: start with 'Given the OS template is available'")
    });
    let mut p = Params::new()
        .set("vmid", id)
        .set("ostemplate", template.as_str());
    for (k, v) in params.pairs() {
        p.push(k.clone(), v.clone());
    }
    let path = format!("/nodes/{}/lxc", seg(&w.target().node));
    call_task(w, Method::POST, &path, p).await;
}

/// What a minimal container gets unless the feature says otherwise.
fn minimal(w: &PveWorld) -> Params {
    Params::new()
        .set("memory", "256")
        .set("rootfs", format!("{}:1", w.target().storage).as_str())
        .set(
            "net0",
            format!("name=eth0,bridge={},ip=dhcp", w.target().bridge).as_str(),
        )
        .set("unprivileged", true)
}

#[when(expr = "I create container {string} with:")]
async fn create_vm(w: &mut PveWorld, step: &Step, ct: String) {
    let params = table_params(w, step);
    create(w, &ct, params).await;
}

#[given(expr = "container {string} was created")]
async fn ct_created(w: &mut PveWorld, ct: String) {
    let params = minimal(w);
    create(w, &ct, params).await;
    task_ok(w).await;
}

#[when(expr = "I read the config of container {string}")]
async fn vm_config(w: &mut PveWorld, step: &Step, ct: String) {
    let params = table_params(w, step);
    let path = ct_path(w, &ct, "/config");
    w.call(Method::GET, &path, params).await;
}

#[when(expr = "I update container {string} with:")]
async fn update_vm(w: &mut PveWorld, step: &Step, ct: String) {
    let params = table_params(w, step);
    let path = ct_path(w, &ct, "/config");
    w.call(Method::PUT, &path, params).await;
}

#[when(expr = "I read the pending changes of container {string}")]
async fn vm_pending(w: &mut PveWorld, ct: String) {
    let path = ct_path(w, &ct, "/pending");
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I read the status of container {string}")]
async fn vm_status(w: &mut PveWorld, ct: String) {
    let path = ct_path(w, &ct, "/status/current");
    w.call(Method::GET, &path, Params::new()).await;
}

#[when("I list the containers")]
async fn vmlist(w: &mut PveWorld) {
    let path = format!("/nodes/{}/lxc", seg(&w.target().node));
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I {word} container {string}")]
async fn power(w: &mut PveWorld, step: &Step, action: String, ct: String) {
    let tail = match action.as_str() {
        "start" | "stop" | "shutdown" | "reboot" | "suspend" | "resume" => {
            format!("/status/{action}")
        }
        "destroy" => String::new(),
        other => panic!("unknown container action {other}"),
    };
    let method = if action == "destroy" {
        Method::DELETE
    } else {
        Method::POST
    };
    let params = table_params(w, step);
    let path = ct_path(w, &ct, &tail);
    call_task(w, method, &path, params).await;
}

/// `template` answers null while its `vztemplate` task runs: the step
/// waits (up to a minute) until the config says `template: 1`.
#[when(expr = "I convert container {string} to a template")]
async fn template(w: &mut PveWorld, ct: String) {
    let path = ct_path(w, &ct, "/template");
    w.call(Method::POST, &path, Params::new()).await;
    if !w.last().ok() {
        return;
    }
    let admin = w.admin();
    let config = ct_path(w, &ct, "/config");
    for _ in 0..300 {
        let c = admin
            .get(&config, &Params::new())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        if c["template"] == 1 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    panic!("{path}: the container did not become a template within a minute");
}

#[given(expr = "container {string} was started")]
async fn ct_started(w: &mut PveWorld, ct: String) {
    let path = ct_path(w, &ct, "/status/start");
    call_task(w, Method::POST, &path, Params::new()).await;
    task_ok(w).await;
}

#[when(expr = "I take snapshot {string} of container {string}")]
async fn snapshot(w: &mut PveWorld, step: &Step, snap: String, ct: String) {
    let mut params = Params::new().set("snapname", w.expand(&snap).as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    let path = ct_path(w, &ct, "/snapshot");
    call_task(w, Method::POST, &path, params).await;
}

#[when(expr = "I list the snapshots of container {string}")]
async fn list(w: &mut PveWorld, ct: String) {
    let path = ct_path(w, &ct, "/snapshot");
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I roll container {string} back to snapshot {string}")]
async fn rollback(w: &mut PveWorld, step: &Step, ct: String, snap: String) {
    let params = table_params(w, step);
    let tail = format!("/snapshot/{}/rollback", seg(&w.expand(&snap)));
    let path = ct_path(w, &ct, &tail);
    call_task(w, Method::POST, &path, params).await;
}

#[when(expr = "I delete snapshot {string} of container {string}")]
async fn delsnapshot(w: &mut PveWorld, snap: String, ct: String) {
    let tail = format!("/snapshot/{}", seg(&w.expand(&snap)));
    let path = ct_path(w, &ct, &tail);
    call_task(w, Method::DELETE, &path, Params::new()).await;
}

#[when(expr = "I clone container {string} as {string} with:")]
async fn clone_vm(w: &mut PveWorld, step: &Step, ct: String, new: String) {
    let newid = vmid(w, &new);
    w.made(Made::Ct(newid));
    let mut params = Params::new().set("newid", newid);
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    let path = ct_path(w, &ct, "/clone");
    call_task(w, Method::POST, &path, params).await;
}

#[when(expr = "I resize {string} of container {string} to {string}")]
async fn resize_vm(w: &mut PveWorld, disk: String, ct: String, size: String) {
    let params = Params::new()
        .set("disk", disk.as_str())
        .set("size", w.expand(&size).as_str());
    let path = ct_path(w, &ct, "/resize");
    call_task(w, Method::PUT, &path, params).await;
}

#[when(expr = "I read the interfaces of container {string}")]
async fn ip(w: &mut PveWorld, ct: String) {
    let path = ct_path(w, &ct, "/interfaces");
    w.call(Method::GET, &path, Params::new()).await;
}

#[when("I read the appliance index")]
async fn aplinfo(w: &mut PveWorld) {
    let path = format!("/nodes/{}/aplinfo", seg(&w.target().node));
    w.call(Method::GET, &path, Params::new()).await;
}

/// Sets what `interfaces` answers through fake-pve's control API
/// (`PUT /_fake/guests/{vmid}`, the guest agent's shape: a JSON list).
#[given(expr = "container {string} has the interfaces:")]
async fn set_interfaces(w: &mut PveWorld, step: &Step, ct: String) {
    let id = vmid(w, &ct);
    let list: serde_json::Value =
        serde_json::from_str(&w.expand(step.docstring.as_deref().unwrap_or("[]")))
            .unwrap_or_else(|e| panic!("interfaces are a JSON list: {e}"));
    let body = serde_json::json!({ "interfaces": list }).to_string();
    w.control(
        Method::PUT,
        &format!("/_fake/guests/{id}"),
        Some(("application/json", body)),
    )
    .await;
}

/// `move_volume` with the table as parameters (`target-vmid` given as
/// `{vmN}`): a `move_volume` task.
#[when(expr = "I move a volume of container {string} with:")]
async fn move_volume(w: &mut PveWorld, step: &Step, ct: String) {
    let params = table_params(w, step);
    let path = ct_path(w, &ct, "/move_volume");
    call_task(w, Method::POST, &path, params).await;
}
