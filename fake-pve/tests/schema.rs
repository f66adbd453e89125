//! The schema backbone over a socket: every endpoint of each release is
//! routed, authenticates, validates, and answers honestly when it has no
//! behaviour yet; the generated spec and coverage report are fresh.

mod common;

use std::path::PathBuf;

use common::{Auth, builder, start_with};
use fake_pve::PveVersion;
use fake_pve::spec::spec;
use reqwest::Method;
use serde_json::json;

/// A concrete path for a template: `{node}` is the scenario's node, the
/// other placeholders get values of the right shape.
fn concrete(path: &str) -> String {
    path.split('/')
        .map(|s| match s {
            "{node}" => "pve".to_string(),
            "{vmid}" => "100".to_string(),
            "{upid}" => "UPID:pve:00001234:00005678:6A000000:qmstart:100:root@pam:".to_string(),
            "{userid}" => "root@pam".to_string(),
            s if s.starts_with('{') => "xy".to_string(),
            s => s.to_string(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn method(m: &str) -> Method {
    Method::from_bytes(m.as_bytes()).expect("method")
}

#[tokio::test]
async fn every_endpoint_is_routed_and_authenticated() {
    for version in PveVersion::ALL {
        let pve = start_with(builder().pve_version(version)).await;
        let s = spec(version);
        let mut checked = 0;
        for e in &s.endpoints {
            let path = format!("/api2/json{}", common::enc_path(&concrete(&e.path)));
            let r = pve.send(method(&e.method), &path, &Auth::None, None).await;
            let open = matches!(
                (e.method.as_str(), e.path.as_str()),
                ("GET", "/access/domains")
                    | ("GET" | "POST", "/access/ticket")
                    | (
                        "POST",
                        "/access/vncticket" | "/access/openid/auth-url" | "/access/openid/login"
                    )
            );
            if open {
                assert_ne!(r.status, 401, "{} {}", e.method, e.path);
            } else {
                assert_eq!(
                    (r.status, r.reason.as_str()),
                    (401, "No ticket"),
                    "{} {}",
                    e.method,
                    e.path
                );
            }
            checked += 1;
        }
        let endpoints = match version {
            PveVersion::V8_4 => 605,
            PveVersion::V9_1 => 649,
            PveVersion::V9_2 => 680,
        };
        assert_eq!(checked, endpoints);
    }
}

#[tokio::test]
async fn every_endpoint_refuses_an_unknown_parameter() {
    for version in PveVersion::ALL {
        let pve = start_with(builder().pve_version(version)).await;
        let root = pve.root().await;
        for e in &spec(version).endpoints {
            if e.parameters.additional.is_none() {
                // PVE refuses other parameters only where the method sets
                // `additionalProperties` (the 9.x fabrics' do not).
                continue;
            }
            let path = format!("/api2/json{}", common::enc_path(&concrete(&e.path)));
            let r = if e.method == "GET" || e.method == "DELETE" {
                pve.send(
                    method(&e.method),
                    &format!("{path}?fake-pve-bogus=1"),
                    &root,
                    None,
                )
                .await
            } else {
                pve.send(
                    method(&e.method),
                    &path,
                    &root,
                    Some((
                        "application/x-www-form-urlencoded",
                        "fake-pve-bogus=1".into(),
                    )),
                )
                .await
            };
            assert_eq!(r.status, 400, "{} {}: {r:?}", e.method, e.path);
            assert_eq!(
                r.json()["errors"]["fake-pve-bogus"],
                "property is not defined in schema and the schema does not allow additional properties",
                "{} {}",
                e.method,
                e.path
            );
        }
    }
}

#[tokio::test]
async fn releases_differ_where_the_schemas_do() {
    let v8 = start_with(builder().pve_version(PveVersion::V8_4)).await;
    let v9 = start_with(builder()).await;
    let (r8, r9) = (v8.root().await, v9.root().await);
    // HA rules arrived with 9.0.
    v8.get("/cluster/ha/rules", &r8)
        .await
        .assert_error(501, "Method 'GET /cluster/ha/rules' not implemented");
    assert_eq!(v9.get("/cluster/ha/rules", &r9).await.data(), json!([]));
    // `max-workers` of startall too.
    v8.post("/nodes/pve/startall", &r8, "max-workers=2")
        .await
        .assert_param_error(
            "max-workers",
            "property is not defined in schema and the schema does not allow additional properties",
        );
    assert_eq!(
        v9.post("/nodes/pve/startall", &r9, "max-workers=2")
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn honest_answers_without_behaviour() {
    let pve = start_with(builder()).await;
    let root = pve.root().await;
    // Work that is not emulated for some parameters says so.
    pve.get("/nodes/pve/capabilities/qemu/machines?arch=aarch64", &root)
        .await
        .assert_error(
            501,
            "Method 'GET /api2/json/nodes/pve/capabilities/qemu/machines' is not emulated by fake-pve for arch 'aarch64'",
        );
    // A call whose handler's checks are made first: a node without Ceph.
    pve.get(
        "/nodes/pve/ceph/cmd-safety?service=osd&id=0&action=stop",
        &root,
    )
    .await
    .assert_error(500, "binary not installed: /usr/bin/ceph-mon\n");
    // Directory indexes come from the schema's tree.
    let cluster = pve.get("/cluster", &root).await.data();
    assert!(
        cluster
            .as_array()
            .expect("list")
            .contains(&json!({"name": "resources"})),
        "{cluster}"
    );
    let access = pve.get("/access", &root).await.data();
    assert!(
        access
            .as_array()
            .expect("list")
            .contains(&json!({"subdir": "ticket"})),
        "{access}"
    );
    // Collections that are empty on a fresh install.
    assert_eq!(pve.get("/pools", &root).await.data(), json!([]));
    assert_eq!(pve.get("/nodes/pve/lxc", &root).await.data(), json!([]));
    // Validation happens before the 501.
    pve.get(
        "/nodes/pve/ceph/cmd-safety?service=osd&id=0&action=explode",
        &root,
    )
    .await
    .assert_param_error(
        "action",
        "value 'explode' does not have a value in the enumeration 'stop, destroy'",
    );
    pve.post("/nodes/pve/qemu", &root, "vmid=100&net0=virtio,bridge%3Dvm%20br")
        .await
        .assert_param_error("net0", "invalid format - format error\nnet0.bridge: invalid format - invalid bridge ID 'vm br'\n\n");
    // Permissions come from the schema too.
    let sep = pve
        .post("/access/users/root@pam/token/sep", &root, "privsep=1")
        .await
        .data()["value"]
        .as_str()
        .expect("secret")
        .to_string();
    let tok = Auth::Token(format!("PVEAPIToken=root@pam!sep={sep}"));
    pve.get("/nodes/pve/qemu/100/rrddata?timeframe=hour", &tok)
        .await
        .assert_error(403, "Permission check failed (/vms/100, VM.Audit)\n");
}

#[tokio::test]
async fn openapi_document() {
    let pve = start_with(builder()).await;
    let root = pve.root().await;
    let r = pve
        .send(Method::GET, "/_fake/openapi.json", &root, None)
        .await;
    assert_eq!(r.status, 200);
    let doc = r.json();
    assert_eq!(doc["openapi"], "3.0.3");
    let paths = doc["paths"].as_object().expect("paths");
    assert_eq!(paths.len(), 449);
    let create = &paths["/nodes/{node}/qemu"]["post"];
    assert_eq!(create["operationId"], "create_vm_post");
    let props = &create["requestBody"]["content"]["application/x-www-form-urlencoded"]["schema"]["properties"];
    assert!(props.get("net31").is_some() && props.get("net32").is_none());
}

#[test]
fn committed_coverage_is_fresh() {
    let committed =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../COVERAGE.md"))
            .expect("COVERAGE.md");
    assert!(
        committed == fake_pve::coverage::report(),
        "COVERAGE.md is stale: run `cargo run -p xtask -- coverage`"
    );
}

#[test]
fn the_book_states_the_coverage_totals() {
    let chapter = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/book/src/api-surface.md"),
    )
    .expect("docs/book/src/api-surface.md");
    let summary = fake_pve::coverage::summary();
    assert!(
        chapter.contains(&summary),
        "docs/book/src/api-surface.md's coverage totals are stale; put these lines there:\n{summary}"
    );
}
