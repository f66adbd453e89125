//! The wire without a socket: `fake_pve::app(state)` answered through
//! `tower::ServiceExt::oneshot`, as a test of an application embedding
//! fake-pve would call it.

use std::time::Duration;

use axum::body::Body;
use fake_pve::state::Settings;
use fake_pve::{Clock, Latency, PveVersion, Scenario, State};
use http::{Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

fn state() -> State {
    seeded(7)
}

async fn call(state: &State, req: Request<Body>) -> (Response<Body>, String) {
    let resp = fake_pve::app(state.clone())
        .oneshot(req)
        .await
        .expect("infallible");
    let (parts, body) = resp.into_parts();
    let bytes = body.collect().await.expect("body").to_bytes();
    let text = String::from_utf8(bytes.to_vec()).expect("UTF-8");
    (Response::from_parts(parts, Body::empty()), text)
}

fn reason(resp: &Response<Body>) -> String {
    resp.extensions()
        .get::<hyper::ext::ReasonPhrase>()
        .map(|r| String::from_utf8_lossy(r.as_bytes()).into_owned())
        .unwrap_or_default()
}

fn get(path: &str, ticket: Option<&str>) -> Request<Body> {
    let mut b = Request::get(path);
    if let Some(t) = ticket {
        b = b.header("Cookie", format!("PVEAuthCookie={t}"));
    }
    b.body(Body::empty()).expect("request")
}

/// root@pam's ticket and CSRF token.
async fn login_csrf(state: &State) -> (String, String) {
    let req = Request::post("/api2/json/access/ticket")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(Body::from("username=root@pam&password=password"))
        .expect("request");
    let (resp, text) = call(state, req).await;
    assert_eq!(resp.status(), StatusCode::OK, "{text}");
    let v: Value = serde_json::from_str(&text).expect("JSON");
    let field = |k: &str| v["data"][k].as_str().expect("login data").to_string();
    (field("ticket"), field("CSRFPreventionToken"))
}

async fn login(state: &State) -> String {
    login_csrf(state).await.0
}

#[tokio::test]
async fn version_with_pve_headers() {
    let state = state();
    let ticket = login(&state).await;
    let (resp, text) = call(&state, get("/api2/json/version", Some(&ticket))).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let h = resp.headers();
    assert_eq!(h["server"], "pve-api-daemon/3.0");
    assert_eq!(h["content-type"], "application/json;charset=UTF-8");
    assert_eq!(h["cache-control"], "max-age=0");
    assert!(h.contains_key("expires"));
    let v: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(v["data"]["release"], PveVersion::default().release());
}

#[tokio::test]
async fn no_ticket_is_401_with_pve_reason() {
    let state = state();
    let (resp, text) = call(&state, get("/api2/json/version", None)).await;
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(reason(&resp), "No ticket");
    assert_eq!(text, "");
}

#[tokio::test]
async fn unknown_method_is_501_not_implemented() {
    let state = state();
    let ticket = login(&state).await;
    let (resp, text) = call(
        &state,
        get("/api2/json/nodes/pve/frobnicate", Some(&ticket)),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::NOT_IMPLEMENTED);
    let msg = "Method 'GET /nodes/pve/frobnicate' not implemented";
    assert_eq!(reason(&resp), msg);
    let v: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(v["message"], msg);
    // Refused before routing, whatever the path.
    let req = Request::builder()
        .method(Method::PATCH)
        .uri("/nothing")
        .body(Body::empty())
        .expect("request");
    let (resp, _) = call(&state, req).await;
    assert_eq!(
        (resp.status().as_u16(), reason(&resp).as_str()),
        (501, "method 'PATCH' not available")
    );
}

#[tokio::test]
async fn control_calls() {
    let state = state();
    let (ticket, csrf) = login_csrf(&state).await;
    for path in ["/_fake/health", "/_fake/health/"] {
        let (resp, text) = call(&state, get(path, Some(&ticket))).await;
        assert_eq!(resp.status(), StatusCode::OK, "{path}: {text}");
        let v: Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(v["data"]["status"], "ok");
        assert_eq!(v["data"]["vms"], state.with(|c| c.guests().len()));
    }
    // Authentication comes before routing, also in the control API.
    let (resp, _) = call(&state, get("/_fake/nothing", None)).await;
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    let (resp, _) = call(&state, get("/_fake/nothing", Some(&ticket))).await;
    assert_eq!(
        (resp.status().as_u16(), reason(&resp).as_str()),
        (501, "Method 'GET /_fake/nothing' not implemented")
    );
    // A known path with another method.
    let req = Request::post("/_fake/health")
        .header("Cookie", format!("PVEAuthCookie={ticket}"))
        .header("CSRFPreventionToken", csrf)
        .body(Body::empty())
        .expect("request");
    let (resp, _) = call(&state, req).await;
    assert_eq!(
        (resp.status().as_u16(), reason(&resp).as_str()),
        (501, "Method 'POST /_fake/health' not implemented")
    );
}

#[tokio::test]
async fn index_page_and_no_such_file() {
    let state = state();
    let (resp, text) = call(&state, get("/", None)).await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "text/html; charset=utf-8");
    assert!(text.contains("fake-pve"), "{text}");
    let (resp, text) = call(&state, get("/nothing", None)).await;
    assert_eq!(
        (
            resp.status().as_u16(),
            reason(&resp).as_str(),
            text.as_str()
        ),
        (500, "no such file '/nothing'", "no such file '/nothing'\n")
    );
}

/// A state like [`state`] with another `--random-seed`.
fn seeded(seed: u64) -> State {
    let settings = Settings {
        version: PveVersion::default(),
        root_password: "password".into(),
        auth_failure_delay: Duration::ZERO,
        fingerprint: None,
        proxy_pem: None,
        pki: Default::default(),
        served: None,
        random_seed: seed,
    };
    State::new(
        Scenario::default_single_node(),
        settings,
        Clock::manual(1_790_000_000),
        Latency::default(),
    )
    .expect("state")
}

/// Creates VM 100 with a NIC without a MAC address and answers the
/// generated MAC, SMBIOS UUID and a new token's secret.
async fn generated(state: &State) -> (String, String, String) {
    let (ticket, csrf) = login_csrf(state).await;
    let post = |path: &str, form: &str| {
        Request::post(path)
            .header("Cookie", format!("PVEAuthCookie={ticket}"))
            .header("CSRFPreventionToken", csrf.clone())
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(Body::from(form.to_string()))
            .expect("request")
    };
    let (resp, text) = call(
        state,
        post(
            "/api2/json/nodes/pve/qemu",
            "vmid=100&net0=virtio%2Cbridge%3Dvmbr0",
        ),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::OK, "{text}");
    let (resp, text) = call(
        state,
        get("/api2/json/nodes/pve/qemu/100/config", Some(&ticket)),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::OK, "{text}");
    let conf: Value = serde_json::from_str(&text).expect("JSON");
    let net0 = conf["data"]["net0"].as_str().expect("net0").to_string();
    let smbios = conf["data"]["smbios1"]
        .as_str()
        .expect("smbios1")
        .to_string();
    let (resp, text) = call(
        state,
        post("/api2/json/access/users/root@pam/token/ci", "privsep=0"),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::OK, "{text}");
    let token: Value = serde_json::from_str(&text).expect("JSON");
    let secret = token["data"]["value"].as_str().expect("secret").to_string();
    (net0, smbios, secret)
}

/// The same `--random-seed` and the same requests give the same MAC
/// addresses, UUIDs and token secrets; another seed gives others.
#[tokio::test]
async fn a_random_seed_repeats_the_generated_values() {
    let a = generated(&seeded(11)).await;
    let b = generated(&seeded(11)).await;
    let c = generated(&seeded(12)).await;
    assert!(a.0.starts_with("virtio=BC:24:11:"), "{}", a.0);
    assert_eq!(a, b);
    assert_ne!(a.0, c.0);
    assert_ne!(a.1, c.1);
    assert_ne!(a.2, c.2);
}
