//! The seeds' own kinds on Kubernetes, against a mocked API server
//! (tower-test): every kind is listed (a missing CRD's 404 skipped), and
//! the operator's own objects made from them are applied by server-side
//! apply, owned by what they come from.
#![allow(missing_docs, clippy::unwrap_used)]

use std::time::Duration;

use http::{Method, Request, Response};
use kube::client::Body;
use pve_operator::controller::World;
use pve_operator::types::SecretObject;
use serde_json::{Value, json};
use tower_test::mock::{Handle, pair};

/// A request, as the mock saw it.
#[derive(Debug)]
struct Seen {
    method: Method,
    uri: String,
    content_type: String,
    body: Value,
}

async fn answer(
    handle: &mut Handle<Request<Body>, Response<Body>>,
    code: u16,
    answer: Value,
) -> Seen {
    answer_by(handle, |_| code, answer).await
}

/// As [`answer`], with the status code chosen by the request's URI.
async fn answer_by(
    handle: &mut Handle<Request<Body>, Response<Body>>,
    code: impl Fn(&str) -> u16,
    answer: Value,
) -> Seen {
    let Some((req, send)) = tokio::time::timeout(Duration::from_secs(10), handle.next_request())
        .await
        .expect("a request in time")
    else {
        return Seen {
            method: Method::OPTIONS,
            uri: String::new(),
            content_type: String::new(),
            body: Value::Null,
        };
    };
    let method = req.method().clone();
    let uri = req.uri().to_string();
    let content_type = req
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let bytes = req.into_body().collect_bytes().await.unwrap();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let code = code(&uri);
    // `null`: answer with what was sent (an apply's result); an error:
    // a Status
    let answer = if code >= 400 {
        json!({ "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "refused by the test", "reason": "InternalError", "code": code })
    } else if answer.is_null() {
        body.clone()
    } else {
        answer
    };
    send.send_response(
        Response::builder()
            .status(code)
            .body(Body::from(serde_json::to_vec(&answer).unwrap()))
            .unwrap(),
    );
    Seen {
        method,
        uri,
        content_type,
        body,
    }
}

fn obj(kind: &str, name: &str, uid: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "infra.virtrigaud.io/v1beta1",
        "kind": kind,
        "metadata": { "name": name, "namespace": "default", "uid": uid, "resourceVersion": "1" },
        "spec": spec,
    })
}

/// The seed's VirtRigaud world as a list of `kind` answers it: Provider
/// `proxmox-prod`, VMClass `small`, and VirtualMachine `web-server` (with
/// `status` when given); other kinds are empty.
fn seed_items(kind: &str, status: Option<&Value>) -> Vec<Value> {
    match kind {
        "Provider" => vec![obj(
            "Provider",
            "proxmox-prod",
            "u-1",
            json!({ "type": "proxmox", "endpoint": "https://pve.example.com:8006", "credentialSecretRef": { "name": "pve-credentials" } }),
        )],
        "VMClass" => vec![obj(
            "VMClass",
            "small",
            "u-2",
            json!({ "cpus": 2, "memory": "4Gi" }),
        )],
        "VirtualMachine" => {
            let mut vm = obj(
                "VirtualMachine",
                "web-server",
                "u-3",
                json!({ "providerRef": { "name": "proxmox-prod" }, "classRef": { "name": "small" } }),
            );
            if let Some(st) = status {
                vm["status"] = st.clone();
            }
            vec![vm]
        }
        _ => vec![],
    }
}

/// The list answer of a foreign kind.
fn list_of(k: &pve_operator::dialects::ForeignKind, items: Vec<Value>) -> Value {
    json!({
        "apiVersion": format!("{}/{}", k.group, k.version),
        "kind": format!("{}List", k.kind),
        "metadata": { "resourceVersion": "1" },
        "items": items,
    })
}

#[tokio::test]
async fn the_seeds_objects_are_applied_as_owned_native_objects() {
    let (svc, mut handle) = pair::<Request<Body>, Response<Body>>();
    let client = kube::Client::new(svc, "default");
    let mut w = World::default();
    let secret: SecretObject = serde_json::from_value(json!({
        "apiVersion": "v1",
        "metadata": { "name": "pve-credentials" },
        "stringData": { "token_id": "virtrigaud@pve!vrtg-token", "token_secret": "x" },
    }))
    .unwrap();
    w.secrets.insert("pve-credentials".into(), secret);
    let task = tokio::spawn(async move {
        pve_operator::kubernetes::sync_dialects(
            &client,
            &pve_operator::kubernetes::FixedWorld(w),
            &pve_operator::dialects::Context::default(),
        )
        .await
    });
    for k in pve_operator::dialects::FOREIGN_KINDS {
        let items = seed_items(k.kind, None);
        let seen = if k.group == "infra.virtrigaud.io" {
            answer(&mut handle, 200, list_of(k, items)).await
        } else {
            answer(
                &mut handle,
                404,
                json!({ "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "the server could not find the requested resource", "reason": "NotFound", "code": 404 }),
            )
            .await
        };
        if seen.method == Method::OPTIONS {
            panic!("no request: {:?}", task.await);
        }
        assert_eq!(seen.method, Method::GET);
        assert!(
            seen.uri
                .starts_with(&format!("/apis/{}/{}/{}", k.group, k.version, k.plural)),
            "{}",
            seen.uri
        );
    }
    let cluster = answer(&mut handle, 200, Value::Null).await;
    assert_eq!(cluster.method, Method::PATCH);
    assert_eq!(
        cluster.uri,
        "/apis/pve.fake-pve.io/v1alpha1/namespaces/default/proxmoxclusters/proxmox-prod?&force=true&fieldManager=pve-operator"
    );
    assert_eq!(cluster.content_type, "application/apply-patch+yaml");
    assert_eq!(
        cluster.body["spec"]["credentials"]["tokenID"],
        "virtrigaud@pve!vrtg-token"
    );
    let m = answer(&mut handle, 200, Value::Null).await;
    assert_eq!(
        m.uri,
        "/apis/pve.fake-pve.io/v1alpha1/namespaces/default/machines/web-server?&force=true&fieldManager=pve-operator"
    );
    assert_eq!(m.body["spec"]["cpu"]["cores"], 2);
    assert_eq!(m.body["metadata"]["ownerReferences"][0]["uid"], "u-3");
    assert_eq!(
        m.body["metadata"]["ownerReferences"][0]["kind"],
        "VirtualMachine"
    );
    assert_eq!(task.await.unwrap().unwrap(), 2);
}

/// A VirtualMachine whose Machine was reconciled shows that Machine's
/// phase, VMID, node and addresses in its own status (patched by
/// server-side apply on its status subresource), and is not patched again
/// while it shows them.
#[tokio::test]
async fn an_object_of_another_system_shows_the_status_of_its_machine() {
    let machine: pve_operator::types::Object<pve_operator::types::MachineSpec> =
        serde_json::from_value(json!({
            "apiVersion": "pve.fake-pve.io/v1alpha1",
            "metadata": { "name": "web-server" },
            "spec": { "cluster": "proxmox-prod" },
        }))
        .unwrap();
    let status: pve_operator::types::MachineStatus = serde_json::from_value(json!({
        "phase": "Running",
        "vmid": 10000,
        "node": "pve-node-1",
        "ipAddresses": ["192.168.1.100", "fd00::1234:5678:9abc:def0"],
        "conditions": [{ "type": "Ready", "status": "True", "reason": "Running", "message": "" }],
    }))
    .unwrap();
    let mut w = World::default();
    w.machines
        .insert("web-server".into(), (machine, status.clone()));
    let secret: SecretObject = serde_json::from_value(json!({
        "apiVersion": "v1",
        "metadata": { "name": "pve-credentials" },
        "stringData": { "token_id": "virtrigaud@pve!vrtg-token", "token_secret": "x" },
    }))
    .unwrap();
    w.secrets.insert("pve-credentials".into(), secret);
    let want = pve_operator::dialects::foreign_status(
        "infra.virtrigaud.io/v1beta1",
        "VirtualMachine",
        &status,
    )
    .unwrap();
    for shown in [Value::Null, want.clone()] {
        let (svc, mut handle) = pair::<Request<Body>, Response<Body>>();
        let client = kube::Client::new(svc, "default");
        let world = pve_operator::kubernetes::FixedWorld(w.clone());
        let task = tokio::spawn(async move {
            pve_operator::kubernetes::sync_dialects(
                &client,
                &world,
                &pve_operator::dialects::Context::default(),
            )
            .await
        });
        for k in pve_operator::dialects::FOREIGN_KINDS {
            let status = (!shown.is_null()).then_some(&shown);
            answer(&mut handle, 200, list_of(k, seed_items(k.kind, status))).await;
        }
        if shown.is_null() {
            let patch = answer(&mut handle, 200, Value::Null).await;
            assert_eq!(patch.method, Method::PATCH);
            assert_eq!(
                patch.uri,
                "/apis/infra.virtrigaud.io/v1beta1/namespaces/default/virtualmachines/web-server/status?&force=true&fieldManager=pve-operator"
            );
            assert_eq!(patch.content_type, "application/apply-patch+yaml");
            assert_eq!(patch.body["kind"], "VirtualMachine");
            assert_eq!(patch.body["status"]["phase"], "Running");
            assert_eq!(patch.body["status"]["vmid"], 10000);
            assert_eq!(
                patch.body["status"]["ipAddresses"],
                json!(["192.168.1.100", "fd00::1234:5678:9abc:def0"])
            );
        }
        // Then (and, when the status is shown already, at once) the
        // cluster and the Machine are applied.
        for what in ["/proxmoxclusters/proxmox-prod?", "/machines/web-server?"] {
            let next = answer(&mut handle, 200, Value::Null).await;
            if next.method == Method::OPTIONS {
                panic!("no request for {what}: {:?}", task.await);
            }
            assert!(
                next.uri.contains(what),
                "shown {shown}: {} {}",
                next.method,
                next.uri
            );
        }
        assert_eq!(task.await.unwrap().unwrap(), 2);
    }
}

#[rstest::rstest]
#[case::vitistack("vitistack.io/v1alpha1", "Machine", json!({ "phase": "Stopped", "vmid": 101, "node": "pve", "ipAddresses": ["10.0.0.5"], "conditions": [] }))]
#[case::virtrigaud_clone("infra.virtrigaud.io/v1beta1", "VMClone", json!({ "phase": "Stopped", "powerState": "Off", "vmid": 101, "node": "pve", "ipAddresses": ["10.0.0.5"], "ips": ["10.0.0.5"], "conditions": [] }))]
#[case::crossplane("proxmox.sankofa.nexus/v1alpha1", "ProxmoxVM", json!({ "vmId": 101, "state": "stopped", "ipAddress": "10.0.0.5", "conditions": [] }))]
fn each_system_s_status_has_the_fields_its_documentation_names(
    #[case] api_version: &str,
    #[case] kind: &str,
    #[case] want: Value,
) {
    let status: pve_operator::types::MachineStatus = serde_json::from_value(json!({
        "phase": "Stopped", "vmid": 101, "node": "pve", "ipAddresses": ["10.0.0.5"],
    }))
    .unwrap();
    assert_eq!(
        pve_operator::dialects::foreign_status(api_version, kind, &status),
        Some(want)
    );
    assert_eq!(
        pve_operator::dialects::foreign_status("infra.virtrigaud.io/v1beta1", "VMClass", &status),
        None
    );
}

#[test]
fn a_machine_without_a_cluster_goes_to_the_default_or_the_only_one() {
    use pve_operator::kubernetes::default_cluster;
    let mut w = World::default();
    assert_eq!(default_cluster(None, &w), None);
    let c: pve_operator::types::Object<pve_operator::types::ProxmoxClusterSpec> =
        serde_json::from_value(json!({
            "apiVersion": "pve.fake-pve.io/v1alpha1",
            "metadata": { "name": "lab" },
            "spec": { "endpoint": "https://pve:8006", "credentials": {} },
        }))
        .unwrap();
    w.clusters.insert("lab".into(), c.clone());
    assert_eq!(default_cluster(None, &w).as_deref(), Some("lab"));
    w.clusters.insert("other".into(), c);
    assert_eq!(default_cluster(None, &w), None, "two: ambiguous");
    assert_eq!(
        default_cluster(Some("other".into()), &w).as_deref(),
        Some("other")
    );
    assert_eq!(default_cluster(Some(" ".into()), &w), None);
}

/// A VirtualMachine named as a Machine made by hand (no owner) takes
/// nothing over: the Machine is not applied, the VirtualMachine's status
/// says why (`NameConflict`) and a Warning Event is recorded, once: when
/// its status says so already, neither is sent again. A Machine the
/// VirtualMachine controls is applied as before.
#[tokio::test]
async fn an_object_named_as_a_machine_it_does_not_own_takes_nothing_over() {
    let secret: SecretObject = serde_json::from_value(json!({
        "apiVersion": "v1",
        "metadata": { "name": "pve-credentials" },
        "stringData": { "token_id": "virtrigaud@pve!vrtg-token", "token_secret": "x" },
    }))
    .unwrap();
    let key = pve_operator::types::Key {
        kind: "Machine".into(),
        name: "web-server".into(),
    };
    let mut told = Value::Null;
    for (owner, shown) in [(None, false), (None, true), (Some("u-3"), false)] {
        let mut w = World::default();
        w.secrets.insert("pve-credentials".into(), secret.clone());
        w.owners.insert(key.clone(), owner.map(str::to_string));
        let (svc, mut handle) = pair::<Request<Body>, Response<Body>>();
        let client = kube::Client::new(svc, "default");
        let world = pve_operator::kubernetes::FixedWorld(w);
        let task = tokio::spawn(async move {
            pve_operator::kubernetes::sync_dialects(
                &client,
                &world,
                &pve_operator::dialects::Context::default(),
            )
            .await
        });
        for k in pve_operator::dialects::FOREIGN_KINDS {
            let status = shown.then_some(&told);
            answer(&mut handle, 200, list_of(k, seed_items(k.kind, status))).await;
        }
        if owner.is_none() && !shown {
            let patch = answer(&mut handle, 200, Value::Null).await;
            assert_eq!(
                patch.uri,
                "/apis/infra.virtrigaud.io/v1beta1/namespaces/default/virtualmachines/web-server/status?&force=true&fieldManager=pve-operator"
            );
            let c = &patch.body["status"]["conditions"][0];
            assert_eq!(c["reason"], "NameConflict", "{}", patch.body);
            assert_eq!(c["status"], "False");
            let msg = c["message"].as_str().unwrap();
            assert!(
                msg.contains("Machine/web-server already exists")
                    && msg.contains("VirtualMachine/web-server"),
                "{msg}"
            );
            told = patch.body["status"].clone();
            let ev = answer(&mut handle, 200, Value::Null).await;
            assert_eq!(ev.method, Method::POST);
            assert!(ev.uri.contains("/events"), "{}", ev.uri);
            assert_eq!(ev.body["type"], "Warning");
            assert_eq!(ev.body["reason"], "NameConflict");
            assert_eq!(ev.body["regarding"]["kind"], "VirtualMachine");
            assert_eq!(ev.body["note"], msg);
        }
        let mut applied = Vec::new();
        loop {
            let next = answer(&mut handle, 200, Value::Null).await;
            if next.method == Method::OPTIONS {
                break;
            }
            applied.push(next.uri);
        }
        let n = task.await.unwrap().unwrap();
        let machine = applied.iter().any(|u| u.contains("/machines/web-server?"));
        assert!(
            applied
                .iter()
                .all(|u| !u.contains("/status") && !u.contains("/events")),
            "told once: {applied:?}"
        );
        assert!(
            applied
                .iter()
                .any(|u| u.contains("/proxmoxclusters/proxmox-prod?")),
            "{applied:?}"
        );
        if owner.is_some() {
            assert!(machine, "its own Machine is applied: {applied:?}");
            assert_eq!(n, 2);
        } else {
            assert!(!machine, "not taken over: {applied:?}");
            assert_eq!(n, 1);
        }
    }
}

/// Two objects of one namespace that make the same Machine (a
/// VirtualMachine and a VMClone both named web) are both refused with
/// NameConflict, naming each other; the rest is applied.
#[test]
fn two_objects_making_one_machine_are_both_refused() {
    let secret: SecretObject = serde_json::from_value(json!({
        "apiVersion": "v1",
        "metadata": { "name": "pve-credentials" },
        "stringData": { "token_id": "virtrigaud@pve!vrtg-token", "token_secret": "x" },
    }))
    .unwrap();
    let mut ctx = pve_operator::dialects::Context::default();
    ctx.secrets.insert("pve-credentials".into(), secret);
    let objects = vec![
        obj(
            "Provider",
            "proxmox-prod",
            "u-1",
            json!({ "type": "proxmox", "endpoint": "https://pve.example.com:8006", "credentialSecretRef": { "name": "pve-credentials" } }),
        ),
        obj(
            "VMClass",
            "small",
            "u-2",
            json!({ "cpus": 2, "memory": "4Gi" }),
        ),
        obj(
            "VirtualMachine",
            "web",
            "u-3",
            json!({ "providerRef": { "name": "proxmox-prod" }, "classRef": { "name": "small" } }),
        ),
        obj(
            "VMClone",
            "web",
            "u-4",
            json!({ "sourceVMRef": { "name": "template-vm" }, "providerRef": { "name": "proxmox-prod" } }),
        ),
    ];
    let t = pve_operator::dialects::kubernetes_translation(&objects, "default", &ctx);
    let kinds: Vec<&str> = t
        .native
        .iter()
        .map(|(_, v)| v["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["ProxmoxCluster"], "{:?}", t.native);
    let mut refused: Vec<(usize, &str)> = t.refused.iter().map(|r| (r.object, r.reason)).collect();
    refused.sort_unstable();
    assert_eq!(refused, [(2, "NameConflict"), (3, "NameConflict")]);
    for r in &t.refused {
        assert!(
            r.message.contains("Machine/web is made from 2 objects")
                && r.message.contains("default/VirtualMachine/web")
                && r.message.contains("default/VMClone/web"),
            "{}",
            r.message
        );
    }
}

fn seed_world() -> World {
    let secret: SecretObject = serde_json::from_value(json!({
        "apiVersion": "v1",
        "metadata": { "name": "pve-credentials" },
        "stringData": { "token_id": "virtrigaud@pve!vrtg-token", "token_secret": "x" },
    }))
    .unwrap();
    let mut w = World::default();
    w.secrets.insert("pve-credentials".into(), secret);
    w
}

/// Runs `sync_dialects` over the seed's VirtRigaud objects (`edit`
/// changes the VirtualMachine), answering each request after the lists
/// with the status code `code(uri)`: those requests, and the result.
async fn sync_seed(
    edit: impl Fn(&mut Value),
    code: impl Fn(&str) -> u16,
) -> (Vec<Seen>, Result<usize, kube::Error>) {
    let (svc, mut handle) = pair::<Request<Body>, Response<Body>>();
    let client = kube::Client::new(svc, "default");
    let world = pve_operator::kubernetes::FixedWorld(seed_world());
    let task = tokio::spawn(async move {
        pve_operator::kubernetes::sync_dialects(
            &client,
            &world,
            &pve_operator::dialects::Context::default(),
        )
        .await
    });
    for k in pve_operator::dialects::FOREIGN_KINDS {
        let mut items = seed_items(k.kind, None);
        for i in items.iter_mut().filter(|i| i["kind"] == "VirtualMachine") {
            edit(i);
        }
        answer(&mut handle, 200, list_of(k, items)).await;
    }
    let mut seen = Vec::new();
    loop {
        let next = answer_by(&mut handle, &code, Value::Null).await;
        if next.method == Method::OPTIONS {
            break;
        }
        seen.push(next);
    }
    (seen, task.await.unwrap())
}

/// A VirtualMachine that cannot be translated is told so: a `Ready=False`
/// condition (reason `TranslationFailed`, the message naming the field)
/// in its status and a Warning Event; the rest is applied.
#[tokio::test]
async fn an_object_that_cannot_be_translated_gets_a_condition_and_an_event() {
    let (seen, r) = sync_seed(|vm| vm["spec"]["powerState"] = json!("Sideways"), |_| 200).await;
    assert_eq!(r.unwrap(), 1, "the cluster only: {seen:?}");
    let status = seen
        .iter()
        .find(|s| s.uri.contains("/virtualmachines/web-server/status?"))
        .unwrap_or_else(|| panic!("no status: {seen:?}"));
    let c = &status.body["status"]["conditions"][0];
    assert_eq!(
        (&c["type"], &c["status"]),
        (&json!("Ready"), &json!("False"))
    );
    assert_eq!(c["reason"], "TranslationFailed", "{}", status.body);
    assert!(c["message"].as_str().unwrap().contains("powerState"), "{c}");
    let ev = seen
        .iter()
        .find(|s| s.uri.contains("/events"))
        .unwrap_or_else(|| panic!("no event: {seen:?}"));
    assert_eq!(ev.body["type"], "Warning");
    assert_eq!(ev.body["reason"], "TranslationFailed");
    assert_eq!(ev.body["regarding"]["kind"], "VirtualMachine");
    assert!(
        !seen.iter().any(|s| s.uri.contains("/machines/web-server?")),
        "not applied: {seen:?}"
    );
    assert!(
        seen.iter()
            .any(|s| s.uri.contains("/proxmoxclusters/proxmox-prod?")),
        "{seen:?}"
    );
}

/// One apply the API server refuses does not keep the others from being
/// sent; the error is returned after them.
#[tokio::test]
async fn one_failed_apply_does_not_abort_the_others() {
    let (seen, r) = sync_seed(
        |_| {},
        |uri| {
            if uri.contains("/proxmoxclusters/") {
                500
            } else {
                200
            }
        },
    )
    .await;
    let uris: Vec<&str> = seen.iter().map(|s| s.uri.as_str()).collect();
    assert!(
        uris.iter()
            .any(|u| u.contains("/proxmoxclusters/proxmox-prod?")),
        "{uris:?}"
    );
    assert!(
        uris.iter().any(|u| u.contains("/machines/web-server?")),
        "the Machine is applied after the cluster's failure: {uris:?}"
    );
    assert!(r.is_err(), "the failure is returned: {r:?}");
}

/// Runs `sync_dialects` over `items` (any kinds) in world `w`: the
/// requests after the lists (each answered with what was sent), and the
/// result.
async fn sync_items(w: World, items: &[Value]) -> (Vec<Seen>, Result<usize, kube::Error>) {
    let (svc, mut handle) = pair::<Request<Body>, Response<Body>>();
    let client = kube::Client::new(svc, "default");
    let world = pve_operator::kubernetes::FixedWorld(w);
    let task = tokio::spawn(async move {
        pve_operator::kubernetes::sync_dialects(
            &client,
            &world,
            &pve_operator::dialects::Context::default(),
        )
        .await
    });
    for k in pve_operator::dialects::FOREIGN_KINDS {
        let of_kind = items
            .iter()
            .filter(|i| i["kind"] == k.kind && i["apiVersion"] == k.api_version())
            .cloned()
            .collect();
        answer(&mut handle, 200, list_of(k, of_kind)).await;
    }
    let mut seen = Vec::new();
    loop {
        let next = answer(&mut handle, 200, Value::Null).await;
        if next.method == Method::OPTIONS {
            break;
        }
        seen.push(next);
    }
    (seen, task.await.unwrap())
}

/// Objects that do not become Machines, named as objects of the
/// operator's own kinds they do not control (a VirtRigaud Provider as a
/// ProxmoxCluster, a VMSnapshot as a MachineSnapshot, a Crossplane
/// ProviderConfig as one of its sites' clusters), are refused as
/// Machines are: nothing of theirs is applied (none of the
/// ProviderConfig's clusters), their status says why (`NameConflict`)
/// and a Warning Event is recorded, once. Once the names are theirs,
/// they are applied and their status says so.
#[tokio::test]
async fn providers_provider_configs_and_snapshots_are_refused_as_machines_are() {
    let mut w = seed_world();
    let creds: SecretObject = serde_json::from_value(json!({
        "apiVersion": "v1",
        "metadata": { "name": "proxmox-credentials" },
        "stringData": { "credentials.json": "{\"tokenID\": \"root@pam!automation\", \"tokenSecret\": \"x\"}" },
    }))
    .unwrap();
    w.secrets.insert("proxmox-credentials".into(), creds);
    let key = |kind: &str, name: &str| pve_operator::types::Key {
        kind: kind.into(),
        name: name.into(),
    };
    let taken = [
        (key("ProxmoxCluster", "proxmox-prod"), "u-1"),
        (key("MachineSnapshot", "before-upgrade"), "u-5"),
        (
            key("ProxmoxCluster", "proxmox-provider-config.eu-west-1"),
            "u-6",
        ),
    ];
    let mut items = vec![
        obj(
            "Provider",
            "proxmox-prod",
            "u-1",
            json!({ "type": "proxmox", "endpoint": "https://pve.example.com:8006", "credentialSecretRef": { "name": "pve-credentials" } }),
        ),
        obj(
            "VMSnapshot",
            "before-upgrade",
            "u-5",
            json!({ "vmRef": { "name": "web-server" }, "description": "Snapshot before system upgrade" }),
        ),
        json!({
            "apiVersion": "proxmox.sankofa.nexus/v1alpha1",
            "kind": "ProviderConfig",
            "metadata": { "name": "proxmox-provider-config", "namespace": "default", "uid": "u-6", "resourceVersion": "1" },
            "spec": {
                "credentials": { "source": "Secret", "secretRef": { "name": "proxmox-credentials", "namespace": "crossplane-system", "key": "credentials.json" } },
                "sites": [
                    { "name": "us-sfvalley", "endpoint": "https://ml110-01.sankofa.nexus:8006", "node": "ML110-01" },
                    { "name": "eu-west-1", "endpoint": "https://r630-01.sankofa.nexus:8006", "node": "R630-01" },
                ],
            },
        }),
    ];
    let targets = [
        (
            "providers/proxmox-prod",
            "Provider",
            "ProxmoxCluster/proxmox-prod",
        ),
        (
            "vmsnapshots/before-upgrade",
            "VMSnapshot",
            "MachineSnapshot/before-upgrade",
        ),
        (
            "providerconfigs/proxmox-provider-config",
            "ProviderConfig",
            "ProxmoxCluster/proxmox-provider-config.eu-west-1",
        ),
    ];

    // Taken by objects they do not control (made by hand).
    for (k, _) in &taken {
        w.owners.insert(k.clone(), None);
    }
    let (seen, r) = sync_items(w.clone(), &items).await;
    assert_eq!(r.unwrap(), 0, "nothing applied: {seen:?}");
    for (path, kind, native) in targets {
        let status = seen
            .iter()
            .find(|s| s.uri.contains(&format!("/{path}/status?")))
            .unwrap_or_else(|| panic!("no status for {kind}: {seen:?}"));
        let c = &status.body["status"]["conditions"][0];
        assert_eq!(
            (&c["type"], &c["status"], &c["reason"]),
            (&json!("Ready"), &json!("False"), &json!("NameConflict")),
            "{}",
            status.body
        );
        let msg = c["message"].as_str().unwrap();
        assert!(msg.contains(&format!("{native} already exists")), "{msg}");
        let ev = seen
            .iter()
            .find(|s| s.uri.contains("/events") && s.body["regarding"]["kind"] == kind)
            .unwrap_or_else(|| panic!("no event for {kind}: {seen:?}"));
        assert_eq!(ev.body["type"], "Warning");
        assert_eq!(ev.body["reason"], "NameConflict");
        assert_eq!(ev.body["note"], msg);
        // Told in its status: the next sync tells nothing again.
        let i = items.iter().position(|i| i["kind"] == kind).unwrap();
        items[i]["status"] = status.body["status"].clone();
    }
    assert!(
        !seen
            .iter()
            .any(|s| s.uri.contains("/proxmoxclusters/") || s.uri.contains("/machinesnapshots/")),
        "something was applied: {seen:?}"
    );
    let (again, _) = sync_items(w.clone(), &items).await;
    assert!(again.is_empty(), "told again: {again:?}");

    // The names are theirs now: applied, and their statuses say so.
    for (k, uid) in &taken {
        w.owners.insert(k.clone(), Some((*uid).to_string()));
    }
    let (seen, r) = sync_items(w, &items).await;
    assert_eq!(r.unwrap(), 4, "{seen:?}");
    for (path, kind, native) in targets {
        let status = seen
            .iter()
            .find(|s| s.uri.contains(&format!("/{path}/status?")))
            .unwrap_or_else(|| panic!("no status for {kind}: {seen:?}"));
        let c = &status.body["status"]["conditions"][0];
        assert_eq!(
            (&c["status"], &c["reason"]),
            (&json!("True"), &json!("Applied")),
            "{}",
            status.body
        );
        assert!(
            c["message"].as_str().unwrap().contains(native),
            "{}",
            status.body
        );
    }
}
