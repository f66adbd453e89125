//! The Kubernetes controller against a mocked API server (tower-test), as
//! kube-rs's controller-rs tests it: each reconcile's exact requests
//! (finalizer added, status by server-side apply, Events, finalizer
//! removed) are checked, while the shared core talks to an in-process
//! fake-pve for real.
#![allow(missing_docs, clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use fake_pve::Running;
use http::{Method, Request, Response};
use kube::client::Body;
use kube::runtime::events::{Recorder, Reporter};
use pve_operator::controller::World;
use pve_operator::kubernetes::{Ctx, FINALIZER, FixedWorld, reconcile_machine};
use pve_operator::types::{Machine, Object, ProxmoxClusterSpec, SecretObject};
use serde_json::{Value, json};
use tower_test::mock::{Handle, pair};

mod common;

use common::{SECRET, TOKEN, operator};

const SCENARIO: &str = r"
users:
  - userid: root@pam
    tokens:
      - { tokenid: automation, secret: 0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60, privsep: false }
";

const BASE: &str = "/apis/pve.fake-pve.io/v1alpha1/namespaces/default/machines";

async fn fake() -> Running {
    common::fake(SCENARIO).await
}

fn world(pve: &Running) -> World {
    let cluster: Object<ProxmoxClusterSpec> = serde_json::from_value(json!({
        "apiVersion": "pve.fake-pve.io/v1alpha1",
        "metadata": { "name": "lab" },
        "spec": {
            "endpoint": pve.url(),
            "caCertificate": { "value": pve.cert_pem().unwrap() },
            "credentials": {
                "tokenID": TOKEN,
                "tokenSecret": { "secretRef": { "name": "pve-token", "key": "secret" } },
            },
        },
    }))
    .unwrap();
    let secret: SecretObject = serde_json::from_value(json!({
        "apiVersion": "v1",
        "metadata": { "name": "pve-token" },
        "stringData": { "secret": SECRET },
    }))
    .unwrap();
    let mut w = World::default();
    w.clusters.insert("lab".into(), cluster);
    w.secrets.insert("pve-token".into(), secret);
    w
}

fn machine(finalizer: bool, deleting: bool, status: Value) -> Machine {
    let mut m = json!({
        "apiVersion": "pve.fake-pve.io/v1alpha1",
        "kind": "Machine",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "uid": "5d3e7c1a-0000-4000-8000-000000000001",
            "resourceVersion": "1",
        },
        "spec": { "cluster": "lab", "memory": "512Mi", "cpu": { "cores": 2 } },
    });
    if finalizer {
        m["metadata"]["finalizers"] = json!([FINALIZER]);
    }
    if deleting {
        m["metadata"]["deletionTimestamp"] = json!("2026-11-22T06:00:00Z");
    }
    if !status.is_null() {
        m["status"] = status;
    }
    serde_json::from_value(m).unwrap()
}

fn ctx(pve_world: World) -> (Arc<Ctx>, Handle<Request<Body>, Response<Body>>) {
    ctx_leading(pve_world, pve_operator::kubernetes::Leadership::always())
}

fn ctx_leading(
    pve_world: World,
    leadership: pve_operator::kubernetes::Leadership,
) -> (Arc<Ctx>, Handle<Request<Body>, Response<Body>>) {
    let (svc, handle) = pair::<Request<Body>, Response<Body>>();
    let client = kube::Client::new(svc, "default");
    let operator = operator();
    let recorder = Recorder::new(
        client.clone(),
        Reporter {
            controller: "pve-operator".into(),
            instance: Some("test".into()),
        },
    );
    let ctx = Arc::new(Ctx {
        client,
        operator,
        worlds: Arc::new(FixedWorld(pve_world)),
        recorder,
        interval: Duration::from_secs(30),
        retries: Default::default(),
        leadership: Arc::new(leadership),
    });
    (ctx, handle)
}

/// A request the controller made, as the mock saw it.
#[derive(Debug)]
struct Seen {
    method: Method,
    uri: String,
    content_type: String,
    body: Value,
}

/// Answers the next request with `answer` (JSON, 200) and returns it.
async fn expect(handle: &mut Handle<Request<Body>, Response<Body>>, answer: Value) -> Seen {
    answer_status(handle, 200, answer).await
}

fn event_answer() -> Value {
    json!({
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": { "name": "web.1", "namespace": "default" },
        "eventTime": "2026-11-22T06:00:00.000000Z",
    })
}

#[tokio::test]
async fn a_new_machine_first_gets_the_finalizer() {
    let pve = fake().await;
    let (ctx, mut handle) = ctx(world(&pve));
    let m = Arc::new(machine(false, false, Value::Null));
    let task = tokio::spawn(reconcile_machine(m, ctx));
    let seen = expect(
        &mut handle,
        serde_json::to_value(machine(true, false, Value::Null)).unwrap(),
    )
    .await;
    assert_eq!(seen.method, Method::PATCH);
    assert_eq!(seen.uri, format!("{BASE}/web?"));
    assert_eq!(seen.content_type, "application/json-patch+json");
    let ops = seen.body.as_array().unwrap();
    assert!(
        ops.iter()
            .any(|op| op["op"] == "add" && op["value"] == json!([FINALIZER])
                || op["value"] == FINALIZER),
        "{}",
        seen.body
    );
    task.await.unwrap().unwrap();
    // Nothing was made in PVE yet.
    assert_eq!(pve_vms(&pve).await, json!([]));
}

/// A replica whose Lease was lost (or never held, or not renewed in
/// time) reconciles nothing: no request to the API server, nothing made
/// in PVE; once it holds the Lease again, it reconciles.
#[tokio::test]
async fn a_replica_without_the_lease_reconciles_nothing_until_it_holds_it_again() {
    use pve_operator::kubernetes::Leadership;
    let lease = Duration::from_secs(15);
    let taken = std::time::Instant::now();
    for (what, leadership) in [
        ("never held", Leadership::new(lease)),
        ("lost", {
            let l = Leadership::new(lease);
            l.held(taken);
            l.lost();
            l
        }),
        ("not renewed in time", {
            let l = Leadership::new(lease);
            l.held(taken - Duration::from_secs(11));
            l
        }),
    ] {
        let pve = fake().await;
        let (ctx, mut handle) = ctx_leading(world(&pve), leadership);
        let m = Arc::new(machine(true, false, Value::Null));
        let action = tokio::time::timeout(
            Duration::from_secs(5),
            pve_operator::kubernetes::reconcile_machine(m.clone(), ctx.clone()),
        )
        .await
        .unwrap_or_else(|_| panic!("{what}: the reconcile waited on the API server"))
        .unwrap();
        assert!(
            format!("{action:?}").contains("requeue_after: Some"),
            "{what}: {action:?}"
        );
        assert!(
            tokio::time::timeout(Duration::from_millis(100), handle.next_request())
                .await
                .is_err(),
            "{what}: a request was sent"
        );
        assert_eq!(pve_vms(&pve).await, json!([]), "{what}");
        // Held again: the reconcile runs (its first request arrives).
        ctx.leadership.held(std::time::Instant::now());
        let task = tokio::spawn(pve_operator::kubernetes::reconcile_machine(m, ctx));
        assert!(
            tokio::time::timeout(Duration::from_secs(10), handle.next_request())
                .await
                .is_ok_and(|r| r.is_some()),
            "{what}: held again, nothing was reconciled"
        );
        task.abort();
    }
}

async fn pve_vms(pve: &Running) -> Value {
    reqwest::Client::builder()
        .add_root_certificate(
            reqwest::Certificate::from_pem(pve.cert_pem().unwrap().as_bytes()).unwrap(),
        )
        .build()
        .unwrap()
        .get(format!("{}/nodes/pve/qemu", pve.api_url()))
        .header("Authorization", format!("PVEAPIToken={TOKEN}={SECRET}"))
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap()["data"]
        .clone()
}

/// Answers the status writes of a reconcile (with the machine) until the
/// first other request, which is answered with `then` and returned after
/// them.
async fn statuses_then(
    handle: &mut Handle<Request<Body>, Response<Body>>,
    then: Value,
) -> (Vec<Seen>, Seen) {
    let mut statuses = Vec::new();
    loop {
        let (req, send) = tokio::time::timeout(Duration::from_secs(10), handle.next_request())
            .await
            .expect("a request in time")
            .expect("a request");
        let is_status = req.uri().path().ends_with("/status");
        let answer = if is_status {
            serde_json::to_value(machine(true, false, Value::Null)).unwrap()
        } else {
            then.clone()
        };
        let seen = Seen {
            method: req.method().clone(),
            uri: req.uri().to_string(),
            content_type: req
                .headers()
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string(),
            body: {
                let bytes = req.into_body().collect_bytes().await.unwrap();
                serde_json::from_slice(&bytes).unwrap_or(Value::Null)
            },
        };
        send.send_response(
            Response::builder()
                .status(200)
                .body(Body::from(serde_json::to_vec(&answer).unwrap()))
                .unwrap(),
        );
        if is_status {
            statuses.push(seen);
        } else {
            return (statuses, seen);
        }
    }
}

/// A new machine is created and started: its status is written after
/// each step (the VMID once made, the step done), then as it ends.
#[tokio::test]
async fn a_machine_with_its_finalizer_is_created_and_its_status_applied() {
    let pve = fake().await;
    let (ctx, mut handle) = ctx(world(&pve));
    let m = Arc::new(machine(true, false, Value::Null));
    let task = tokio::spawn(reconcile_machine(m, ctx));

    // The statuses, by server-side apply on the status subresource; an
    // Event after them says the VM was made, in the seed's words.
    let (statuses, ev) = statuses_then(&mut handle, event_answer()).await;
    let [created, started, status] = &statuses[..] else {
        panic!("create, start, the end: {statuses:?}")
    };
    for st in &statuses {
        assert_eq!(st.method, Method::PATCH);
        assert_eq!(
            st.uri,
            format!("{BASE}/web/status?&force=true&fieldManager=pve-operator")
        );
        assert_eq!(st.content_type, "application/apply-patch+yaml");
        assert_eq!(st.body["apiVersion"], "pve.fake-pve.io/v1alpha1");
        assert_eq!(st.body["kind"], "Machine");
    }
    assert_eq!(status.body["status"]["phase"], "Running");
    let vmid = status.body["status"]["vmid"].as_u64().unwrap();
    assert_eq!(status.body["status"]["node"], "pve");
    let ready = |s: &Seen| {
        s.body["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "Ready")
            .cloned()
            .unwrap()
    };
    assert_eq!(created.body["status"]["vmid"], vmid, "{}", created.body);
    assert_eq!(created.body["status"]["phase"], "Creating");
    assert_eq!(
        ready(created)["message"],
        format!("step 1: create of VM {vmid} done, reconciling goes on")
    );
    assert_eq!(ready(created)["status"], "False");
    assert_eq!(
        ready(started)["message"],
        format!("step 2: start of VM {vmid} done, reconciling goes on")
    );
    assert_eq!(ready(status)["status"], "True");

    assert_eq!(ev.method, Method::POST);
    assert_eq!(ev.method, Method::POST);
    assert_eq!(ev.uri, "/apis/events.k8s.io/v1/namespaces/default/events?");
    assert_eq!(ev.body["reason"], "Created");
    assert_eq!(
        ev.body["note"],
        format!("Successfully created VM vmid={vmid} node=pve")
    );
    assert_eq!(ev.body["regarding"]["name"], "web");
    assert_eq!(ev.body["reportingController"], "pve-operator");

    let action = task.await.unwrap().unwrap();
    assert_eq!(
        action,
        kube::runtime::controller::Action::requeue(Duration::from_secs(30))
    );
    // The VM is in fake-pve, running, with the operator's mark.
    let vms = pve_vms(&pve).await;
    let vm = vms
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["vmid"] == vmid)
        .expect("the VM");
    assert_eq!(vm["status"], "running");
    assert_eq!(vm["name"], "web");
}

#[tokio::test]
async fn deleting_a_machine_destroys_its_vm_then_drops_the_finalizer() {
    let pve = fake().await;
    // First make the VM.
    let (ctx1, mut handle1) = ctx(world(&pve));
    let task = tokio::spawn(reconcile_machine(
        Arc::new(machine(true, false, Value::Null)),
        ctx1,
    ));
    let (statuses, _) = statuses_then(&mut handle1, event_answer()).await;
    let status = statuses.last().unwrap();
    task.await.unwrap().unwrap();
    assert_eq!(pve_vms(&pve).await.as_array().unwrap().len(), 1);

    // Then delete the object: the VM is stopped and destroyed (the status
    // written after each step), an Event says so, and the finalizer is
    // removed (no status is written for a deleted object).
    let (ctx2, mut handle2) = ctx(world(&pve));
    let gone = machine(true, true, status.body["status"].clone());
    let task = tokio::spawn(reconcile_machine(Arc::new(gone), ctx2));
    let (steps, ev) = statuses_then(&mut handle2, event_answer()).await;
    assert_eq!(steps.len(), 2, "stop, destroy: {steps:?}");
    assert_eq!(ev.method, Method::POST);
    assert_eq!(ev.body["reason"], "Deleted");
    let fin = expect(
        &mut handle2,
        serde_json::to_value(machine(false, true, Value::Null)).unwrap(),
    )
    .await;
    assert_eq!(fin.method, Method::PATCH);
    assert_eq!(fin.uri, format!("{BASE}/web?"));
    assert_eq!(fin.content_type, "application/json-patch+json");
    assert!(
        fin.body
            .as_array()
            .unwrap()
            .iter()
            .any(|op| op["op"] == "remove"),
        "{}",
        fin.body
    );
    task.await.unwrap().unwrap();
    assert_eq!(pve_vms(&pve).await, json!([]));
}

#[tokio::test]
async fn a_machine_pve_refuses_gets_a_warning_event_and_backs_off() {
    let pve = fake().await;
    let mut w = world(&pve);
    // Credentials PVE refuses.
    w.secrets
        .get_mut("pve-token")
        .unwrap()
        .string_data
        .insert("secret".into(), "wrong".into());
    let (ctx, mut handle) = ctx(w);
    let task = tokio::spawn(reconcile_machine(
        Arc::new(machine(true, false, Value::Null)),
        ctx.clone(),
    ));
    let status = expect(
        &mut handle,
        serde_json::to_value(machine(true, false, Value::Null)).unwrap(),
    )
    .await;
    assert_eq!(status.method, Method::PATCH);
    let ev = expect(&mut handle, event_answer()).await;
    assert_eq!(ev.body["type"], "Warning");
    assert_eq!(ev.body["reason"], "AuthenticationError");
    let err = task.await.unwrap().unwrap_err();
    let action = pve_operator::kubernetes::error_policy(
        Arc::new(machine(true, false, Value::Null)),
        &err,
        ctx,
    );
    // Authentication errors are not retried: they wait for the resync.
    assert_eq!(
        action,
        kube::runtime::controller::Action::requeue(Duration::from_secs(30))
    );
}

/// Answers the next request with `answer` (JSON) and status `code`, and
/// returns it.
async fn answer_status(
    handle: &mut Handle<Request<Body>, Response<Body>>,
    code: u16,
    answer: Value,
) -> Seen {
    let (req, send) = tokio::time::timeout(Duration::from_secs(10), handle.next_request())
        .await
        .expect("a request in time")
        .expect("a request");
    let method = req.method().clone();
    let uri = req.uri().to_string();
    let content_type = req
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let bytes = req.into_body().collect_bytes().await.unwrap();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
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

fn lease_opts() -> pve_operator::kubernetes::KubeOptions {
    pve_operator::kubernetes::KubeOptions {
        interval: Duration::from_secs(30),
        max_concurrent: 5,
        lease_namespace: "pve-operator-system".into(),
        lease_name: "pve-operator-leader".into(),
        identity: "pod-a".into(),
        lease_duration: Duration::from_secs(15),
    }
}

const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/pve-operator-system/leases";

#[tokio::test]
async fn leader_election_takes_a_free_lease_and_respects_a_held_one() {
    let (svc, mut handle) = pair::<Request<Body>, Response<Body>>();
    let client = kube::Client::new(svc, "default");
    let o = lease_opts();

    // No Lease yet: it is created with this replica as holder.
    let c = client.clone();
    let oo = o.clone();
    let t = tokio::spawn(async move { pve_operator::kubernetes::try_lead(&c, &oo).await });
    let get = answer_status(
        &mut handle,
        404,
        json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404, "message": "not found"}),
    )
    .await;
    assert_eq!(get.method, Method::GET);
    assert_eq!(get.uri, format!("{LEASES}/pve-operator-leader"));
    let create = answer_status(&mut handle, 201, json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "pve-operator-leader"}})).await;
    assert_eq!(create.method, Method::POST);
    assert_eq!(create.uri, format!("{LEASES}?"));
    assert_eq!(create.body["spec"]["holderIdentity"], "pod-a");
    assert_eq!(create.body["spec"]["leaseDurationSeconds"], 15);
    assert!(t.await.unwrap().unwrap());

    // Held by another replica and renewed just now: not taken.
    let now = k8s_openapi::jiff::Timestamp::now();
    let c = client.clone();
    let oo = o.clone();
    let t = tokio::spawn(async move { pve_operator::kubernetes::try_lead(&c, &oo).await });
    let held = json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "pve-operator-leader", "resourceVersion": "7"},
        "spec": {"holderIdentity": "pod-b", "leaseDurationSeconds": 15,
                 "renewTime": now.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()},
    });
    let get = answer_status(&mut handle, 200, held).await;
    assert_eq!(get.method, Method::GET);
    assert!(!t.await.unwrap().unwrap());

    // Held by another replica that stopped renewing: taken over, by a
    // replace that carries the resourceVersion read.
    let c = client.clone();
    let t = tokio::spawn(async move { pve_operator::kubernetes::try_lead(&c, &o).await });
    let stale = json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "pve-operator-leader", "resourceVersion": "8"},
        "spec": {"holderIdentity": "pod-b", "leaseDurationSeconds": 15, "leaseTransitions": 2,
                 "renewTime": "2026-01-01T00:00:00.000000Z"},
    });
    let _ = answer_status(&mut handle, 200, stale.clone()).await;
    let put = answer_status(&mut handle, 200, stale).await;
    assert_eq!(put.method, Method::PUT);
    assert_eq!(put.uri, format!("{LEASES}/pve-operator-leader?"));
    assert_eq!(put.body["metadata"]["resourceVersion"], "8");
    assert_eq!(put.body["spec"]["holderIdentity"], "pod-a");
    assert_eq!(put.body["spec"]["leaseTransitions"], 3);
    assert!(t.await.unwrap().unwrap());
}

#[test]
fn the_stores_give_each_namespace_its_own_world() {
    use k8s_openapi::api::core::v1::Secret;
    use kube::runtime::reflector::store;
    use kube::runtime::watcher::Event;
    use pve_operator::kubernetes::{Stores, WorldSource};
    use pve_operator::types::{MachineImage, ProxmoxCluster, ProxmoxNode};

    fn filled<K>(objs: Vec<K>) -> kube::runtime::reflector::Store<K>
    where
        K: kube::Resource<DynamicType = ()> + Clone + 'static,
    {
        let (reader, mut writer) = store();
        for o in objs {
            writer.apply_watcher_event(&Event::Apply(o));
        }
        reader
    }
    let cluster = |ns: &str| -> ProxmoxCluster {
        serde_json::from_value(json!({
            "apiVersion": "pve.fake-pve.io/v1alpha1", "kind": "ProxmoxCluster",
            "metadata": {"name": "lab", "namespace": ns},
            "spec": {"endpoint": format!("https://{ns}.example:8006"),
                     "credentials": {"username": "root@pam", "password": {"value": "x"}}},
        }))
        .unwrap()
    };
    let mut m = machine(
        true,
        false,
        json!({"phase": "Running", "vmid": 10000, "node": "pve"}),
    );
    m.metadata.labels = Some([("app".to_string(), "web".to_string())].into());
    let secret: Secret = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "pve-token", "namespace": "default"},
        "data": {"secret": "czNjcmV0"},
    }))
    .unwrap();
    // a snapshot made from a VMSnapshot: controlled by it
    let snap: pve_operator::types::MachineSnapshot = serde_json::from_value(json!({
        "apiVersion": "pve.fake-pve.io/v1alpha1", "kind": "MachineSnapshot",
        "metadata": {"name": "before", "namespace": "default", "ownerReferences": [{
            "apiVersion": "infra.virtrigaud.io/v1beta1", "kind": "VMSnapshot",
            "name": "before", "uid": "u-9", "controller": true,
        }]},
        "spec": {"machine": "web"},
    }))
    .unwrap();
    let stores = Stores::new(
        filled(vec![cluster("default"), cluster("other")]),
        filled::<ProxmoxNode>(vec![]),
        filled(vec![m]),
        filled::<MachineImage>(vec![]),
        filled(vec![secret]),
    )
    .with_snapshots(filled(vec![snap]));
    let w = stores.world("default");
    // what another system's object may be applied onto
    let key = |kind: &str, name: &str| pve_operator::types::Key {
        kind: kind.into(),
        name: name.into(),
    };
    assert_eq!(w.owners.get(&key("Machine", "web")), Some(&None));
    assert_eq!(w.owners.get(&key("ProxmoxCluster", "lab")), Some(&None));
    assert_eq!(
        w.owners.get(&key("MachineSnapshot", "before")),
        Some(&Some("u-9".to_string()))
    );
    assert_eq!(w.owners.len(), 3, "{:?}", w.owners);
    assert_eq!(
        w.clusters["lab"].spec.endpoint,
        "https://default.example:8006"
    );
    let (obj, st) = &w.machines["web"];
    assert_eq!(obj.metadata.labels["app"], "web");
    assert_eq!(st.vmid, Some(10000));
    assert_eq!(w.secrets["pve-token"].string_data["secret"], "s3cret");
    let other = stores.world("other");
    assert_eq!(
        other.clusters["lab"].spec.endpoint,
        "https://other.example:8006"
    );
    assert!(other.machines.is_empty() && other.secrets.is_empty());
}

/// Issue #16: Kubernetes mode requeued every retryable failure after a
/// fixed 5 s; it backs off as standalone does (1, 2, 4 ... 300 s, per
/// object, with a tenth of jitter) and starts over after a fix.
#[tokio::test]
async fn retryable_failures_back_off_per_object() {
    let (ctx, _handle) = ctx(World::default());
    let transient = || {
        pve_operator::kubernetes::Error::Core(pve_operator::Error::Pve(pve_client::Error::Server {
            status: 503,
            message: "injected".into(),
        }))
    };
    let web = Arc::new(machine(true, false, Value::Null));
    let delay = |m: &Arc<Machine>, e: &pve_operator::kubernetes::Error| {
        let a = pve_operator::kubernetes::error_policy(m.clone(), e, ctx.clone());
        let d = requeue_of(&a);
        move |secs: u64| {
            (Duration::from_secs(secs).mul_f64(0.9)..=Duration::from_secs(secs).mul_f64(1.1))
                .contains(&d)
        }
    };
    for secs in [1, 2, 4, 8, 16] {
        assert!(delay(&web, &transient())(secs), "attempt after {secs} s");
    }
    // another object starts at 1 s
    let mut db = machine(true, false, Value::Null);
    db.metadata.name = Some("db".into());
    let db = Arc::new(db);
    assert!(delay(&db, &transient())(1));
    // a deletion still going on is retried the same way
    assert!(delay(&db, &pve_operator::kubernetes::Error::Deleting)(2));
    // an error that waits for a fix resets the count
    let auth = pve_operator::kubernetes::Error::Core(pve_operator::Error::Pve(
        pve_client::Error::Authentication {
            message: "authentication failure".into(),
        },
    ));
    assert!(delay(&web, &auth)(30));
    assert!(delay(&web, &transient())(1));
}

/// The delay of a requeue `Action` (its Debug form is the only view:
/// `Action { requeue_after: Some(1.02s) }`).
fn requeue_of(a: &kube::runtime::controller::Action) -> Duration {
    let d = format!("{a:?}");
    let inner = d
        .split("Some(")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .unwrap_or_else(|| panic!("not a requeue: {d}"));
    let (num, unit) = inner
        .find(|c: char| c.is_alphabetic() || c == '\u{b5}')
        .map(|i| inner.split_at(i))
        .unwrap();
    let n: f64 = num.parse().unwrap();
    Duration::from_secs_f64(match unit {
        "s" => n,
        "ms" => n / 1e3,
        "\u{b5}s" | "us" => n / 1e6,
        "ns" => n / 1e9,
        other => panic!("unit {other} in {d}"),
    })
}

/// A Secret's change concerns the clusters that name it and their
/// Machines (the controllers watch Secrets and reconcile those at once),
/// not the others; a Machine that names no cluster is on the default
/// one (`PROXMOX_DEFAULT_CLUSTER`, else the only cluster).
#[tokio::test]
async fn a_secret_concerns_the_clusters_naming_it_and_their_machines() {
    let pve = fake().await;
    let mut w = world(&pve);
    let other: Object<ProxmoxClusterSpec> = serde_json::from_value(json!({
        "apiVersion": "pve.fake-pve.io/v1alpha1",
        "metadata": { "name": "other" },
        "spec": {
            "endpoint": "https://pve.example.com:8006",
            "credentials": {
                "tokenID": TOKEN,
                "tokenSecret": { "secretRef": { "name": "other-token", "key": "secret" } },
            },
        },
    }))
    .unwrap();
    w.clusters.insert("other".into(), other);
    for (name, cluster) in [("web", "lab"), ("db", "other"), ("app", "")] {
        let m: Object<pve_operator::types::MachineSpec> = serde_json::from_value(json!({
            "apiVersion": "pve.fake-pve.io/v1alpha1",
            "metadata": { "name": name },
            "spec": { "cluster": cluster },
        }))
        .unwrap();
        w.machines.insert(name.into(), (m, Default::default()));
    }
    let names = |s: &str| pve_operator::kubernetes::secret_dependents(&w, s, None);
    // Two clusters and no default: `app` is on none of them.
    assert_eq!(
        names("pve-token"),
        [
            ("ProxmoxCluster", "lab".to_string()),
            ("Machine", "web".to_string())
        ]
    );
    assert_eq!(
        names("other-token"),
        [
            ("ProxmoxCluster", "other".to_string()),
            ("Machine", "db".to_string())
        ]
    );
    assert!(names("unrelated").is_empty());
    // With PROXMOX_DEFAULT_CLUSTER=lab, `app` is on lab.
    assert_eq!(
        pve_operator::kubernetes::secret_dependents(&w, "pve-token", Some("lab".into())),
        [
            ("ProxmoxCluster", "lab".to_string()),
            ("Machine", "app".to_string()),
            ("Machine", "web".to_string())
        ]
    );
    // The only cluster is the default one.
    w.clusters.remove("other");
    w.machines.remove("db");
    assert_eq!(
        pve_operator::kubernetes::secret_dependents(&w, "pve-token", None),
        [
            ("ProxmoxCluster", "lab".to_string()),
            ("Machine", "app".to_string()),
            ("Machine", "web".to_string())
        ]
    );
}
