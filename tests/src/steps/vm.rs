//! QEMU guests: `create_vm`, `vm_config`, `update_vm`, `update_vm_async`,
//! `vm_pending`, `vm_status`, `vmlist`, the power calls (`vm_start`,
//! `vm_stop`, `vm_shutdown`, `vm_reboot`, `vm_reset`, `vm_suspend`,
//! `vm_resume`) and `destroy_vm`.
//!
//! Every VM a scenario creates (or clones) is remembered before the call
//! and stopped and destroyed with `purge` after the scenario, whether it
//! passed or not. VMIDs are `{vm1}`, `{vm2}`, ... of the reserved range.

use cucumber::gherkin::Step;
use cucumber::{given, then, when};
use pve_client::api::seg;
use pve_client::api::tasks::Upid;
use pve_client::{Method, Params};

use super::{field, table_params, text};
use crate::world::{Made, PveWorld, wait_task};

/// The VMID a feature names (`{vm1}`), checked against the reserved range.
pub fn vmid(w: &PveWorld, vm: &str) -> u32 {
    let v = w.expand(vm);
    let id: u32 = v.parse().unwrap_or_else(|_| panic!("not a VMID: {v}"));
    w.guard_vmid(id);
    id
}

/// `/nodes/{node}/qemu/{vmid}` plus `tail`.
pub fn vm_path(w: &PveWorld, vm: &str, tail: &str) -> String {
    format!(
        "/nodes/{}/qemu/{}{tail}",
        seg(&w.target().node),
        vmid(w, vm)
    )
}

/// Calls `method path`; when the answer is a task ID, remembers it as the
/// last task.
pub async fn call_task(w: &mut PveWorld, method: Method, path: &str, params: Params) {
    w.call(method, path, params).await;
    remember_upid(w);
}

/// Keeps the UPID the last call answered, if it started a task.
pub fn remember_upid(w: &mut PveWorld) {
    let o = w.last();
    if o.ok()
        && let Some(u) = o.data.as_str()
        && u.starts_with("UPID:")
    {
        let upid: Upid = u.parse().unwrap_or_else(|e| panic!("{u}: {e}"));
        w.upids.push(upid);
    }
}

/// Asserts that the last call started a task and waits for it to end
/// `OK` (polling through pve-client; on fake-pve it has ended already
/// unless the scenario made tasks take time).
pub async fn task_ok(w: &mut PveWorld) {
    let o = w.last();
    assert!(
        o.ok() && o.data.as_str().is_some_and(|u| u.starts_with("UPID:")),
        "{} did not start a task: {o:?}",
        o.request
    );
    let upid = w.last_upid().to_string();
    let exit = wait_task(&w.client(), &upid)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(exit, "OK", "{upid}");
}

/// What a minimal VM gets unless the feature says otherwise: a small
/// disk on `{storage}`, a NIC on `{bridge}`, little memory.
fn minimal(w: &PveWorld) -> Params {
    Params::new()
        .set("memory", "128")
        .set("cores", 1)
        .set(
            "net0",
            format!("virtio,bridge={}", w.target().bridge).as_str(),
        )
        .set("scsi0", format!("{}:1", w.target().storage).as_str())
}

async fn create(w: &mut PveWorld, vm: &str, params: Params) {
    let id = vmid(w, vm);
    // Remembered first: even a failed create may leave something behind.
    w.made(Made::Vm(id));
    let mut p = Params::new().set("vmid", id);
    for (k, v) in params.pairs() {
        p.push(k.clone(), v.clone());
    }
    let path = format!("/nodes/{}/qemu", seg(&w.target().node));
    call_task(w, Method::POST, &path, p).await;
}

#[when(expr = "I create VM {string} with:")]
async fn create_vm(w: &mut PveWorld, step: &Step, vm: String) {
    let params = table_params(w, step);
    create(w, &vm, params).await;
}

#[when(expr = "I create VM {string}")]
async fn create_vm_minimal(w: &mut PveWorld, vm: String) {
    let params = minimal(w);
    create(w, &vm, params).await;
}

#[given(expr = "VM {string} was created")]
async fn vm_created(w: &mut PveWorld, vm: String) {
    let params = minimal(w);
    create(w, &vm, params).await;
    task_ok(w).await;
}

#[given(expr = "VM {string} was created with:")]
async fn vm_created_with(w: &mut PveWorld, step: &Step, vm: String) {
    let params = table_params(w, step);
    create(w, &vm, params).await;
    task_ok(w).await;
}

#[given(expr = "VM {string} is running")]
async fn vm_running(w: &mut PveWorld, vm: String) {
    let path = vm_path(w, &vm, "/status/start");
    call_task(w, Method::POST, &path, Params::new()).await;
    task_ok(w).await;
}

/// `start`, `stop`, `shut down`, `reboot`, `reset`, `suspend`,
/// `hibernate` (suspend to disk) and `resume`, each a task.
#[when(regex = r#"^I (start|stop|shut down|reboot|reset|suspend|hibernate|resume) VM "([^"]*)"$"#)]
async fn vm_power(w: &mut PveWorld, step: &Step, action: String, vm: String) {
    let mut params = table_params(w, step);
    let call = match action.as_str() {
        "shut down" => "shutdown",
        "hibernate" => {
            params.push("todisk", "1");
            "suspend"
        }
        other => other,
    };
    let path = vm_path(w, &vm, &format!("/status/{call}"));
    call_task(w, Method::POST, &path, params).await;
}

#[then("the task succeeds")]
async fn the_task_succeeds(w: &mut PveWorld) {
    task_ok(w).await;
}

#[when(expr = "I read the config of VM {string}")]
async fn vm_config(w: &mut PveWorld, step: &Step, vm: String) {
    let params = table_params(w, step);
    let path = vm_path(w, &vm, "/config");
    w.call(Method::GET, &path, params).await;
}

#[when(expr = "I update VM {string} with:")]
async fn update_vm(w: &mut PveWorld, step: &Step, vm: String) {
    let params = table_params(w, step);
    let path = vm_path(w, &vm, "/config");
    w.call(Method::PUT, &path, params).await;
}

#[when(expr = "I update VM {string} in the background with:")]
async fn update_vm_async(w: &mut PveWorld, step: &Step, vm: String) {
    let params = table_params(w, step);
    let path = vm_path(w, &vm, "/config");
    call_task(w, Method::POST, &path, params).await;
}

#[when(expr = "I read the pending changes of VM {string}")]
async fn vm_pending(w: &mut PveWorld, vm: String) {
    let path = vm_path(w, &vm, "/pending");
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I read the status of VM {string}")]
async fn vm_status(w: &mut PveWorld, vm: String) {
    let path = vm_path(w, &vm, "/status/current");
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I read the directory of VM {string}")]
async fn vmdiridx(w: &mut PveWorld, vm: String) {
    let path = vm_path(w, &vm, "");
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I list the VMs of node {string}")]
async fn vmlist(w: &mut PveWorld, step: &Step, node: String) {
    let params = table_params(w, step);
    let path = format!("/nodes/{}/qemu", seg(&w.expand(&node)));
    w.call(Method::GET, &path, params).await;
}

#[when(expr = "I destroy VM {string}")]
async fn destroy_vm(w: &mut PveWorld, step: &Step, vm: String) {
    let params = table_params(w, step);
    let path = vm_path(w, &vm, "");
    call_task(w, Method::DELETE, &path, params).await;
}

#[then(expr = "VM {string} does not exist")]
async fn vm_gone(w: &mut PveWorld, vm: String) {
    let id = vmid(w, &vm);
    let path = vm_path(w, &vm, "/status/current");
    w.call(Method::GET, &path, Params::new()).await;
    let want = format!(
        "Configuration file 'nodes/{}/qemu-server/{id}.conf' does not exist",
        w.target().node
    );
    let o = w.last();
    assert_eq!(
        (o.status, o.message.as_str()),
        (500, want.as_str()),
        "{o:?}"
    );
}

#[when(expr = "I remember the answer's {string} as {string}")]
fn remember(w: &mut PveWorld, name: String, var: String) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let v = field(&o.data, &name)
        .map(text)
        .unwrap_or_else(|| panic!("{}: no {name} in {}", o.request, o.data));
    w.vars.insert(var, v);
}

#[then(expr = "the answer's {string} differs from {string}")]
fn differs(w: &mut PveWorld, name: String, var: String) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let got = field(&o.data, &name).map(text);
    let old = w.vars.get(&var).cloned();
    assert!(got.is_some(), "{}: no {name} in {}", o.request, o.data);
    assert_ne!(got, old, "{}: {name} did not change", o.request);
}

#[then(expr = "the answer's {string} is {string}")]
fn same_as(w: &mut PveWorld, name: String, var: String) {
    let want = w.expand(&var);
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    assert_eq!(
        field(&o.data, &name).map(text).as_deref(),
        Some(want.as_str()),
        "{}: {}",
        o.request,
        o.data
    );
}

#[then("the answer is a task ID")]
fn answer_is_upid(w: &mut PveWorld) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let u = o.data.as_str().unwrap_or_default();
    assert!(u.starts_with("UPID:"), "{}: {}", o.request, o.data);
}

#[then(expr = "the task ends with an error matching {string}")]
async fn task_error_matching(w: &mut PveWorld, pattern: String) {
    let pattern = w.expand(&pattern);
    let re = regex::Regex::new(&format!("^(?:{pattern})$")).unwrap_or_else(|e| panic!("{e}"));
    let upid = w.last_upid().to_string();
    let exit = wait_task(&w.client(), &upid)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        re.is_match(&exit),
        "{upid}: {exit:?} does not match {pattern}"
    );
}

#[then(regex = r#"^the log contains "(.*)"$"#)]
fn log_contains(w: &mut PveWorld, line: String) {
    let line = w.expand(&line);
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let found = o
        .data
        .as_array()
        .is_some_and(|a| a.iter().any(|l| text(&l["t"]) == line));
    assert!(found, "{}: no line {line:?} in {}", o.request, o.data);
}

// ---- custom CPU models (9.2) ----------------------------------------

#[when(expr = "I create custom CPU model {string} with:")]
#[given(expr = "custom CPU model {string} was created with:")]
async fn create_cpu_model(w: &mut PveWorld, step: &Step, name: String) {
    let name = w.expand(&name);
    let bare = name.strip_prefix("custom-").unwrap_or(&name).to_string();
    w.made(Made::CpuModel(bare));
    let mut params = Params::new().set("cputype", name.as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    w.call(Method::POST, "/cluster/qemu/custom-cpu-models", params)
        .await;
}
