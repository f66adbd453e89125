//! The control API (`/_fake`) over a real socket: who may use it (root@pam
//! holding `Sys.Modify` on `/`, and `Permissions.Modify` too for the calls
//! that read or replace accounts), and the documents it refuses before
//! parsing them (nested too deeply).

mod common;

use std::time::Duration;

use common::{Auth, Pve, builder, control, start_with};
use fake_pve::Scenario;
use reqwest::Method;

const SCENARIO: &str = "\
users:
  - userid: root@pam
    tokens:
      - { tokenid: sep, secret: 11111111-0000-0000-0000-000000000001 }
      - { tokenid: full, secret: 11111111-0000-0000-0000-000000000002, privsep: false }
      - { tokenid: admin, secret: 11111111-0000-0000-0000-000000000003 }
      - { tokenid: sysmod, secret: 11111111-0000-0000-0000-000000000004 }
  - userid: alice@pve
    password: secret12
roles:
  - { roleid: SysModOnly, privs: [Sys.Modify] }
acl:
  - { path: /, roles: [Administrator], tokens: ['root@pam!admin'] }
  - { path: /, roles: [SysModOnly], tokens: ['root@pam!sysmod'] }
  - { path: /, roles: [Administrator], users: [alice@pve] }
";

fn token(name: &str, n: u8) -> Auth {
    Auth::Token(format!(
        "PVEAPIToken=root@pam!{name}=11111111-0000-0000-0000-00000000000{n}"
    ))
}

async fn lab() -> Pve {
    let s = Scenario::parse(SCENARIO, "control.yaml").expect("scenario");
    start_with(builder().scenario(s)).await
}

/// Every call of the control API, with a body where it needs one.
const CALLS: &[(&str, &str, Option<&str>)] = &[
    ("GET", "/_fake/health", None),
    ("GET", "/_fake/state", None),
    ("POST", "/_fake/reset", None),
    ("POST", "/_fake/seed", Some(SCENARIO)),
    ("GET", "/_fake/clock", None),
    ("POST", "/_fake/checkpoints", Some("name=base")),
    ("GET", "/_fake/checkpoints", None),
    ("GET", "/_fake/faults", None),
    ("GET", "/_fake/latency", None),
    ("GET", "/_fake/openapi.json", None),
    ("POST", "/_fake/nodes/pve/boot", None),
];

async fn call(pve: &Pve, auth: &Auth, method: &str, path: &str, body: Option<&str>) -> u16 {
    let method = Method::from_bytes(method.as_bytes()).expect("method");
    let r = control(pve, auth, method, path, body.map(str::to_string)).await;
    r.status
}

#[tokio::test]
async fn a_separated_root_token_without_acls_has_no_control_api() {
    let pve = lab().await;
    let sep = token("sep", 1);
    for (method, path, body) in CALLS {
        let m = Method::from_bytes(method.as_bytes()).expect("method");
        control(&pve, &sep, m, path, body.map(str::to_string))
            .await
            .assert_error(403, "Permission check failed (/, Sys.Modify)\n");
    }
    // The dashboard's event stream is the control API's too.
    control(&pve, &sep, Method::GET, "/_fake/events", None)
        .await
        .assert_error(403, "Permission check failed (/, Sys.Modify)\n");
    // Nothing was reset: root@pam's tokens are still there.
    let root = pve.root().await;
    let state = control(&pve, &root, Method::GET, "/_fake/state", None)
        .await
        .data();
    assert!(
        state.to_string().contains("sysmod"),
        "the world was not reset"
    );
}

#[tokio::test]
async fn root_and_its_tokens_with_the_privileges_have_it() {
    let pve = lab().await;
    let root = pve.root().await;
    for auth in [&root, &token("full", 2), &token("admin", 3)] {
        for (method, path, body) in CALLS {
            assert_eq!(
                call(&pve, auth, method, path, *body).await,
                200,
                "{method} {path} as {auth:?}"
            );
        }
    }
}

#[tokio::test]
async fn accounts_need_permissions_modify_as_well() {
    let pve = lab().await;
    let sysmod = token("sysmod", 4);
    for (method, path) in [("GET", "/_fake/health"), ("GET", "/_fake/clock")] {
        assert_eq!(call(&pve, &sysmod, method, path, None).await, 200, "{path}");
    }
    for (method, path, body) in [
        (Method::GET, "/_fake/state", None),
        (Method::PUT, "/_fake/state", Some("{}")),
        (Method::POST, "/_fake/reset", None),
        (
            Method::POST,
            "/_fake/seed",
            Some("nodes: [{ name: pve }]\n"),
        ),
        (Method::POST, "/_fake/checkpoints/base/restore", None),
    ] {
        control(&pve, &sysmod, method, path, body.map(str::to_string))
            .await
            .assert_error(403, "Permission check failed (/, Permissions.Modify)\n");
    }
}

#[tokio::test]
async fn other_users_are_refused_whatever_their_privileges() {
    let pve = lab().await;
    let alice = pve.login_as("alice@pve", "secret12").await;
    control(&pve, &alice, Method::GET, "/_fake/health", None)
        .await
        .assert_error(403, "Permission check failed (/_fake, root@pam)\n");
}

/// `{"a":` 400,000 times: JSON's parser gives up at once, YAML's would
/// spend minutes; the depth is measured first and the body refused.
#[tokio::test]
async fn deeply_nested_seeds_are_refused_at_once() {
    let pve = lab().await;
    let root = pve.root().await;
    let deep = r#"{"a":"#.repeat(400_000);
    let yaml_deep = format!("a: x\nb: {}", "[".repeat(100_000));
    for (path, method, body) in [
        ("/_fake/seed", Method::POST, deep.clone()),
        ("/_fake/seed", Method::POST, yaml_deep),
        ("/_fake/state", Method::PUT, deep),
    ] {
        let r = tokio::time::timeout(
            Duration::from_secs(20),
            control(&pve, &root, method, path, Some(body)),
        )
        .await
        .expect("answered in time");
        assert_eq!(r.status, 400, "{path}: {r:?}");
        let j = r.json();
        let msg = j["errors"]
            .as_object()
            .and_then(|e| e.values().next())
            .and_then(|m| m.as_str())
            .unwrap_or_default()
            .to_string();
        assert!(msg.contains("nests deeper than 128 levels"), "{path}: {j}");
    }
    // The server still answers.
    assert_eq!(call(&pve, &root, "GET", "/_fake/health", None).await, 200);
}
