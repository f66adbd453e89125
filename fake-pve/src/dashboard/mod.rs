//! fake-pve's own dashboard, served where PVE serves its web UI
//! (`https://host:8006/`): a page of its own (not PVE's UI) embedded in
//! the binary, which logs in through `/api2/json/access/ticket` (the
//! ticket in the `PVEAuthCookie` cookie, the CSRF token for writes, as
//! PVE's UI keeps them), shows the world as `/_fake/events` pushes it
//! ([`events`]) and drives the control API (`/_fake/...`).
//!
//! The page, its script and its style sheet are `include_str!`ed: no
//! build step and nothing fetched from elsewhere (its
//! `Content-Security-Policy` allows only its own origin).

pub mod events;

use axum::body::Body;
use axum::response::Response;
use http::Method;
use serde_json::{Value, json};

use crate::api::cluster::overview::{Limits, overview};
use crate::state::State;

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/dashboard.js");
const STYLE: &str = include_str!("assets/dashboard.css");

/// Where the page's script is served.
pub const SCRIPT_PATH: &str = "/dashboard/dashboard.js";
/// Where the page's style sheet is served.
pub const STYLE_PATH: &str = "/dashboard/dashboard.css";

/// Only the page's own origin, no inline code.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
img-src 'self' data:; connect-src 'self'; form-action 'self'; \
frame-ancestors 'none'; base-uri 'none'";

fn asset(content_type: &'static str, body: String) -> Response {
    http::Response::builder()
        .header(http::header::CONTENT_TYPE, content_type)
        .header(http::header::CACHE_CONTROL, "no-cache")
        .header("X-Content-Type-Options", "nosniff")
        .header("Content-Security-Policy", CSP)
        .header("Server", "pve-api-daemon/3.0")
        .body(Body::from(body))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

/// `GET /`: the page. With a valid ticket cookie, the user and a CSRF
/// token are written into it, as pve-manager's index does, so that a
/// reload needs no new login.
pub fn index(state: &State, headers: &http::HeaderMap) -> Response {
    let (user, csrf) =
        match state.with(|c| crate::api::authenticate(state, c, &Method::GET, headers, false)) {
            Ok(crate::model::AuthId::User(userid)) => {
                let csrf = state.keys().csrf(&userid, state.clock().now());
                (userid, csrf)
            }
            _ => (String::new(), String::new()),
        };
    let page = INDEX
        .replace("{{user}}", &escape(&user))
        .replace("{{csrf}}", &escape(&csrf));
    asset("text/html; charset=utf-8", page)
}

/// `GET /dashboard/...`: the script and the style sheet; `None` for
/// anything else.
pub fn file(path: &str) -> Option<Response> {
    match path {
        SCRIPT_PATH => Some(asset(
            "application/javascript; charset=utf-8",
            SCRIPT.to_string(),
        )),
        STYLE_PATH => Some(asset("text/css; charset=utf-8", STYLE.to_string())),
        _ => None,
    }
}

/// Text safe inside an HTML attribute.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// What the `view` event carries: the world's overview
/// ([`crate::api::cluster::overview::overview`]) with the release, the user,
/// the clock, the latency profile and the checkpoints; and when the
/// next running task ends (emulated epoch milliseconds).
pub fn view(state: &State, user: &str) -> (Value, Option<i64>) {
    let now_ms = state.clock().now_millis();
    let (mut v, next_end) = state.at(now_ms, |c| {
        (
            overview(c, now_ms, Limits::default()),
            c.tasks().next_end_ms(),
        )
    });
    let version = state.settings().version;
    let latency = state.latency();
    let clock = state.clock();
    if let Value::Object(m) = &mut v {
        m.insert(
            "pve".into(),
            json!({ "version": version.version(), "release": version.release() }),
        );
        m.insert("user".into(), json!(user));
        m.insert(
            "clock".into(),
            json!({
                "now_ms": now_ms,
                "manual": clock.is_manual(),
                "scale": clock.scale(),
                "advanced_ms": clock.advanced_millis(),
            }),
        );
        m.insert(
            "latency".into(),
            json!({ "name": latency.name, "time_scale": latency.time_scale }),
        );
        m.insert("checkpoints".into(), json!(state.list_checkpoints()));
    }
    (v, next_end)
}
