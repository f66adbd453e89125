//! `/_fake/...`: everything that is not PVE. Health, reset, state dumps,
//! seeding, the clock and task durations, for root@pam only.

use axum::extract::State as Ext;
use axum::routing::{MethodFilter, MethodRouter, get, on};
use http::Method;
use serde_json::{Value, json};

use crate::api::{self, Format, Params, Reply, Request};
use crate::body::reply;
use crate::model::faults::FaultRule;
use crate::model::scenario::Scenario;
use crate::model::{AuthId, Context, Error, Result};
use crate::state::{Latency, State};

/// The path of the OpenAPI document, served bare (not in the `data`
/// envelope) for generic tools.
const OPENAPI: &str = "/openapi.json";

/// The path of the dashboard's event stream
/// ([`crate::dashboard::events`]).
pub const EVENTS: &str = "/events";

/// One control call: the state, the request's context (its instant and
/// random draws), the request and the values of its path's `{...}`
/// segments, in order.
pub type Call = fn(&State, &Context, &Request, &[&str]) -> Result<Reply>;

/// The control API below `/_fake`: one line per call. [`routes`] serves
/// it, [`find`] looks a recorded request up in it for [`replay`].
#[rustfmt::skip]
const CALLS: &[(Method, &str, Call)] = &[
    (Method::GET,    "/health",                      get_health),
    (Method::POST,   "/reset",                       reset),
    (Method::GET,    "/state",                       get_state),
    (Method::PUT,    "/state",                       put_state),
    (Method::GET,    "/checkpoints",                 list_checkpoints),
    (Method::POST,   "/checkpoints",                 add_checkpoint),
    (Method::POST,   "/checkpoints/{name}/restore",  restore_checkpoint),
    (Method::DELETE, "/checkpoints/{name}",          drop_checkpoint),
    (Method::POST,   "/seed",                        seed),
    (Method::GET,    "/clock",                       get_clock),
    (Method::POST,   "/clock",                       advance_clock),
    (Method::GET,    "/faults",                      list_faults),
    (Method::POST,   "/faults",                      add_faults),
    (Method::DELETE, "/faults",                      clear_faults),
    (Method::DELETE, "/faults/{id}",                 drop_fault),
    (Method::GET,    "/latency",                     get_latency),
    (Method::PUT,    "/latency",                     put_latency),
    (Method::GET,    "/downloads",                   list_downloads),
    (Method::PUT,    "/downloads",                   put_downloads),
    (Method::GET,    "/oci-images",                  list_oci_images),
    (Method::PUT,    "/oci-images",                  put_oci_images),
    (Method::GET,    "/pbs",                         list_pbs),
    (Method::POST,   "/pbs",                         add_pbs),
    (Method::GET,    "/guests/{vmid}",               get_guest),
    (Method::PUT,    "/guests/{vmid}",               put_guest),
    (Method::POST,   "/nodes/{node}/boot",           boot_node),
    (Method::POST,   "/nodes/{node}/joined",         node_joined),
    (Method::GET,    "/notifications/outbox",        get_outbox),
    (Method::DELETE, "/notifications/outbox",        clear_outbox),
];

/// The control API as an axum router for paths below `/_fake` (nest it
/// there, behind [`trim_trailing_slash`]): one route per line of
/// [`CALLS`], the OpenAPI document, and `Method '...' not implemented`
/// for anything else.
pub fn routes(state: State) -> axum::Router {
    let mut by_path: Vec<(&'static str, MethodRouter<State>)> = Vec::new();
    for (method, pattern, call) in CALLS {
        let (pattern, call) = (*pattern, *call);
        let filter = MethodFilter::try_from(method.clone()).expect("the calls' methods are HTTP's");
        let handler = move |Ext(state): Ext<State>, req: crate::body::Whole| async move {
            answer(&state, req, Some((pattern, call))).await
        };
        match by_path.iter_mut().find(|(p, _)| *p == pattern) {
            Some((_, m)) => *m = std::mem::take(m).on(filter, handler),
            None => by_path.push((pattern, on(filter, handler))),
        }
    }
    let not_implemented = |Ext(state): Ext<State>, req: crate::body::Whole| async move {
        answer(&state, req, None).await
    };
    by_path
        .into_iter()
        .fold(axum::Router::new(), |r, (p, m)| r.route(p, m))
        .route(
            EVENTS,
            get(
                |Ext(state): Ext<State>, req: crate::body::Whole| async move {
                    match admit(&state, req).await {
                        Ok((_, who)) => crate::dashboard::events::stream(&state, &who),
                        Err(refused) => refused,
                    }
                },
            ),
        )
        .route(
            OPENAPI,
            get(
                |Ext(state): Ext<State>, req: crate::body::Whole| async move {
                    openapi_document(&state, req).await
                },
            ),
        )
        .fallback(not_implemented)
        .method_not_allowed_fallback(not_implemented)
        .with_state(state)
}

/// `/health/` is `/health`: the path below `/_fake` without its trailing
/// `/`, for [`routes`] (they are matched as before routing).
pub fn trim_trailing_slash(mut req: axum::extract::Request) -> axum::extract::Request {
    let path = req.uri().path();
    if path.len() > 1 && path.ends_with('/') {
        let trimmed = match path.trim_end_matches('/') {
            "" => "/",
            p => p,
        };
        let pq = match req.uri().query() {
            Some(q) => format!("{trimmed}?{q}"),
            None => trimmed.to_string(),
        };
        let mut parts = req.uri().clone().into_parts();
        if let Ok(pq) = pq.parse() {
            parts.path_and_query = Some(pq);
            if let Ok(uri) = http::Uri::from_parts(parts) {
                *req.uri_mut() = uri;
            }
        }
    }
    req
}

/// The call for `method path` (a path below `/_fake`, a trailing `/`
/// ignored) and its pattern, as the routes of [`routes`] find it.
pub fn find(method: &Method, path: &str) -> Option<(&'static str, Call)> {
    let path = path.trim_end_matches('/');
    CALLS
        .iter()
        .find(|(m, p, _)| m == method && captures(p, path).is_some())
        .map(|(_, p, c)| (*p, *c))
}

/// The values of `pattern`'s `{...}` segments in `path`, when it matches.
fn captures<'a>(pattern: &str, path: &'a str) -> Option<Vec<&'a str>> {
    let mut pat = pattern.split('/');
    let mut got = path.split('/');
    let mut values = Vec::new();
    loop {
        match (pat.next(), got.next()) {
            (None, None) => return Some(values),
            (Some(p), Some(g)) if p.starts_with('{') && p.ends_with('}') && !g.is_empty() => {
                values.push(g);
            }
            (Some(p), Some(g)) if p == g => {}
            _ => return None,
        }
    }
}

/// The path below `/_fake` of a full request path.
fn below(path: &str) -> &str {
    let rest = path.strip_prefix("/_fake").unwrap_or(path);
    rest.trim_end_matches('/')
}

/// Authenticates a control request (root@pam only); the refusal when it
/// is not root@pam's, or the body was too large.
async fn admit(
    state: &State,
    req: crate::body::Whole,
) -> std::result::Result<(Request, AuthId), axum::response::Response> {
    let req = match req {
        crate::body::Whole::Read(req) => req,
        crate::body::Whole::TooLarge(_) => {
            return Err(reply(api::plain(501, "for data too large")));
        }
        crate::body::Whole::Broken => return Err(crate::body::Whole::drop_connection()),
    };
    let who = admit_head(state, &req.method, &req.path, &req.headers).await?;
    Ok((req, who))
}

/// [`admit`] from a request's head alone (`path` is the full request
/// path): who makes it, or the refusal (401 after PVE's delay, or 403).
/// The wire asks it before it reads a body, so that a body is read only
/// for whom may send it.
pub(crate) async fn admit_head(
    state: &State,
    method: &Method,
    path: &str,
    headers: &http::HeaderMap,
) -> std::result::Result<AuthId, axum::response::Response> {
    let who = match state.with(|c| api::authenticate(state, c, method, headers, false)) {
        Ok(who) => who,
        Err(api::AuthReject(msg)) => {
            api::delay(state).await;
            return Err(reply(api::status_only(401, &msg)));
        }
    };
    if let Err(refused) = state.with(|c| permitted(c.access(), &who, method, path)) {
        return Err(reply(api::failure(Format::Json, &refused)));
    }
    Ok(who)
}

/// Whether `who` may make the control call `method path` (a full
/// request path): it is root@pam's (the user or one of its tokens) and
/// holds `Sys.Modify` on `/`, through the ACLs as any API call's
/// privileges are found (root@pam and its tokens without privilege
/// separation hold everything; a separated token only what its own ACLs
/// grant). The calls that read or replace the world's accounts
/// (credentials, tokens, ACLs) also need `Permissions.Modify` on `/`:
/// with them a caller could read every secret or grant itself anything.
///
/// # Errors
/// 403 `Permission check failed (/_fake, root@pam)` for anyone else, and
/// `Permission check failed (/, <privilege>)` for the first privilege a
/// root@pam token lacks.
fn permitted(
    access: &crate::model::access::Access,
    who: &AuthId,
    method: &Method,
    path: &str,
) -> Result<()> {
    if who.userid() != "root@pam" {
        return Err(Error::permission("/_fake", &["root@pam"]));
    }
    access.check_perm(who, "/", control_privileges(method, below(path)))
}

/// The privileges on `/` the control call `method path` (below `/_fake`)
/// needs ([`permitted`]).
fn control_privileges(method: &Method, path: &str) -> &'static [&'static str] {
    const ACCOUNTS: &[&str] = &["Sys.Modify", "Permissions.Modify"];
    let restore = path.starts_with("/checkpoints/") && path.ends_with("/restore");
    match (method, path) {
        (&Method::GET | &Method::PUT, "/state") | (&Method::POST, "/seed" | "/reset") => ACCOUNTS,
        (&Method::POST, _) if restore => ACCOUNTS,
        _ => &["Sys.Modify"],
    }
}

/// `GET /_fake/openapi.json`.
async fn openapi_document(state: &State, req: crate::body::Whole) -> axum::response::Response {
    match admit(state, req).await {
        Ok(_) => reply(api::raw_json(openapi(state.settings().version))),
        Err(refused) => refused,
    }
}

/// Answers one `/_fake` request with `call` (the one its route found;
/// `None`: no such call). Changes are journaled with the data directory.
async fn answer(
    state: &State,
    req: crate::body::Whole,
    call: Option<(&'static str, Call)>,
) -> axum::response::Response {
    let (req, who) = match admit(state, req).await {
        Ok(x) => x,
        Err(refused) => return refused,
    };
    let path = req.path.trim_end_matches('/').to_string();
    let doc = match Document::prepare(&req.method, call.map(|(p, _)| p), &req.body).await {
        Ok(doc) => doc,
        Err(e) => return reply(api::failure(Format::Json, &e)),
    };
    let run = |rq: Context| match doc {
        Some(doc) => take_up(state, &rq, doc),
        None => run(state, &rq, &req, &path, call),
    };
    let result = match state.store() {
        Some(store) if req.method != Method::GET => {
            // Moving the clock runs at the moved time, not a fixed one.
            let call = crate::persist::Call::Control(req.to_control_call());
            let clock_moves = path == "/_fake/clock";
            let journaled = crate::persist::blocking(|| {
                store.journaled(state, call, Some(who.to_string()), clock_moves, run)
            });
            match journaled {
                Ok(r) => r,
                Err(e) => return reply(api::failure(Format::Json, &e)),
            }
        }
        _ => run(state.request_context()),
    };
    if req.method != Method::GET {
        state.changed();
    }
    reply(match result {
        Ok(r) => api::success(Format::Json, r),
        Err(e) => api::failure(Format::Json, &e),
    })
}

/// Runs a control call on a request whose (trimmed) path is `path`.
fn run(
    state: &State,
    rq: &Context,
    req: &Request,
    path: &str,
    call: Option<(&'static str, Call)>,
) -> Result<Reply> {
    let found = call.and_then(|(pattern, call)| Some((call, captures(pattern, below(path))?)));
    match found {
        Some((call, values)) => call(state, rq, req, &values),
        None => Err(Error::NotImplemented(format!(
            "Method '{} {path}' not implemented",
            req.method
        ))),
    }
}

/// Runs a journaled control request again, as it ran.
pub fn replay(state: &State, rec: &crate::persist::Record) {
    let req = Request::from_call(rec.control_call());
    let path = req.path.trim_end_matches('/');
    let call = find(&req.method, below(path));
    let _ = run(state, &rec.context(state), &req, path, call);
}

fn get_health(state: &State, rq: &Context, _: &Request, _: &[&str]) -> Result<Reply> {
    Ok(health(state, rq).into())
}

fn reset(state: &State, rq: &Context, _: &Request, _: &[&str]) -> Result<Reply> {
    state.reset(rq.now());
    crate::api::run_setup(state, &crate::api::Router::default()).map_err(Error::failed)?;
    Ok(Value::Null.into())
}

fn get_state(state: &State, _: &Context, _: &Request, _: &[&str]) -> Result<Reply> {
    Ok(serde_json::to_value(state.export())
        .unwrap_or(Value::Null)
        .into())
}

fn put_state(state: &State, rq: &Context, req: &Request, _: &[&str]) -> Result<Reply> {
    take_up(state, rq, Document::read(Document::STATE, &req.body)?)
}

fn list_checkpoints(state: &State, _: &Context, _: &Request, _: &[&str]) -> Result<Reply> {
    Ok(json!(state.list_checkpoints()).into())
}

fn add_checkpoint(state: &State, _: &Context, req: &Request, _: &[&str]) -> Result<Reply> {
    let p = params(req)?;
    let name = p
        .str("name")
        .ok_or_else(|| Error::invalid("name", "property is missing and it is not optional"))?;
    state
        .checkpoint(&name)
        .map_err(|e| Error::invalid("name", e.to_string()))?;
    Ok(json!(name).into())
}

fn restore_checkpoint(state: &State, rq: &Context, _: &Request, at: &[&str]) -> Result<Reply> {
    let name = at.first().copied().unwrap_or_default();
    state
        .restore(name)
        .map_err(|e| Error::not_found(e.to_string()))?;
    Ok(health(state, rq).into())
}

fn drop_checkpoint(state: &State, _: &Context, _: &Request, at: &[&str]) -> Result<Reply> {
    let name = at.first().copied().unwrap_or_default();
    state
        .drop_checkpoint(name)
        .map_err(|e| Error::not_found(e.to_string()))?;
    Ok(Value::Null.into())
}

fn get_clock(state: &State, _: &Context, _: &Request, _: &[&str]) -> Result<Reply> {
    Ok(state.clock().view().into())
}

fn advance_clock(state: &State, _: &Context, req: &Request, _: &[&str]) -> Result<Reply> {
    let p = params(req)?;
    let secs = p.int("advance", Some(0), None)?.unwrap_or(0);
    let ms = p.int("advance_ms", Some(0), None)?.unwrap_or(0);
    state
        .clock()
        .advance_millis(secs.saturating_mul(1000).saturating_add(ms));
    state.with(|_| ());
    Ok(state.clock().view().into())
}

fn list_faults(state: &State, _: &Context, _: &Request, _: &[&str]) -> Result<Reply> {
    Ok(json!(state.faults(|f| f.rules().to_vec())).into())
}

fn clear_faults(state: &State, _: &Context, _: &Request, _: &[&str]) -> Result<Reply> {
    state.faults(crate::model::faults::Faults::clear);
    Ok(Value::Null.into())
}

fn drop_fault(state: &State, _: &Context, _: &Request, at: &[&str]) -> Result<Reply> {
    let id = at.first().copied().unwrap_or_default();
    match id.parse::<u64>() {
        Ok(id) if state.faults(|f| f.remove(id)) => Ok(Value::Null.into()),
        _ => Err(Error::not_found(format!("no such fault rule '{id}'"))),
    }
}

fn get_latency(state: &State, _: &Context, _: &Request, _: &[&str]) -> Result<Reply> {
    Ok(json!(state.latency()).into())
}

fn put_latency(state: &State, _: &Context, req: &Request, _: &[&str]) -> Result<Reply> {
    let v: Value = serde_json::from_slice(&req.body)
        .map_err(|e| Error::invalid("latency", format!("expected a JSON latency profile: {e}")))?;
    let l = Latency::from_json(v).map_err(|e| Error::invalid("latency", e.to_string()))?;
    state.set_latency(l);
    Ok(json!(state.latency()).into())
}

fn list_downloads(state: &State, rq: &Context, _: &Request, _: &[&str]) -> Result<Reply> {
    Ok(json!(state.at(rq.now_ms(), |c| c.storages().volumes().downloads.clone())).into())
}

/// What the notification system sent, oldest first (the tasks due by
/// now end first, so a backup that has ended has notified).
fn get_outbox(state: &State, rq: &Context, _: &Request, _: &[&str]) -> Result<Reply> {
    Ok(state
        .at(rq.now_ms(), |c| {
            crate::api::notify::outbox(c.notifications())
        })
        .into())
}

fn clear_outbox(state: &State, rq: &Context, _: &Request, _: &[&str]) -> Result<Reply> {
    state.at(rq.now_ms(), |c| c.notifications_mut().outbox_mut().clear());
    state.changed();
    Ok(Value::Null.into())
}

fn get_guest(state: &State, rq: &Context, _: &Request, at: &[&str]) -> Result<Reply> {
    let vmid = guest_vmid(state, rq, at.first().copied().unwrap_or_default())?;
    Ok(state
        .at(rq.now_ms(), |c| {
            c.guests.leaving_no_trace(vmid, |g| {
                serde_json::to_value(g.agent_mut(vmid)).unwrap_or(Value::Null)
            })
        })
        .into())
}

/// The OpenAPI document of a release, built once.
fn openapi(version: crate::model::PveVersion) -> &'static Value {
    static V8: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    static V9: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    let cell = if version.is_v9() { &V9 } else { &V8 };
    cell.get_or_init(|| {
        crate::spec::openapi::document(crate::spec::spec(version), version.version())
    })
}

fn params(req: &Request) -> Result<Params> {
    let body = api::body_params(req).map_err(|(code, msg)| match code {
        500 => Error::Failed(msg),
        _ => Error::NotImplemented(msg),
    })?;
    let mut map: std::collections::BTreeMap<String, Value> = body
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect();
    if let Some(q) = &req.query {
        for (k, v) in form_urlencoded::parse(q.as_bytes()) {
            map.insert(k.into_owned(), Value::String(v.into_owned()));
        }
    }
    Ok(Params::new(map))
}

fn health(state: &State, rq: &Context) -> Value {
    let v = state.settings().version;
    state.at(rq.now_ms(), |c| {
        json!({
            "status": "ok",
            "version": v.version(),
            "release": v.release(),
            "nodes": c.nodes().len(),
            "vms": c.guests().len(),
            "tasks": c.tasks().len(),
            "time": state.clock().now(),
        })
    })
}

/// `POST /_fake/faults`: one rule or a list of rules (JSON); answers the
/// ids given.
fn add_faults(state: &State, _: &Context, req: &Request, _: &[&str]) -> Result<Reply> {
    let body: Value = serde_json::from_slice(&req.body).map_err(|e| {
        Error::invalid(
            "rule",
            format!("expected a JSON fault rule or a list of them: {e}"),
        )
    })?;
    let list = match body {
        Value::Array(a) => a,
        other => vec![other],
    };
    let rules: Vec<FaultRule> = list
        .into_iter()
        .map(serde_json::from_value)
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| Error::invalid("rule", e.to_string()))?;
    let ids = state.faults(|f| {
        rules
            .into_iter()
            .map(|r| f.add(r))
            .collect::<Result<Vec<u64>>>()
    });
    Ok(json!(ids.map_err(|e| Error::invalid("rule", e.to_string()))?).into())
}

/// `GET /_fake/pbs`: the declared Proxmox Backup Servers with their
/// datastores and snapshots.
fn list_pbs(state: &State, rq: &Context, _: &Request, _: &[&str]) -> Result<Reply> {
    Ok(json!(state.at(rq.now_ms(), |c| c.pbs().servers().to_vec())).into())
}

/// `POST /_fake/pbs`: declares a Proxmox Backup Server, as a scenario's
/// `pbs:` entry does (JSON `{name, address, port, fingerprint,
/// datastores: {NAME: {namespaces, verify-new}}}`).
fn add_pbs(state: &State, rq: &Context, req: &Request, _: &[&str]) -> Result<Reply> {
    let server: crate::model::pbs::Server = serde_json::from_slice(&req.body)
        .map_err(|e| Error::invalid("pbs", format!("expected a JSON server: {e}")))?;
    let name = server.name.clone();
    state
        .at(rq.now_ms(), |c| c.pbs_mut().declare(server))
        .map_err(|e| Error::invalid("pbs", e))?;
    Ok(json!(name).into())
}

/// `PUT /_fake/downloads`: replaces the table of known URLs with a JSON
/// list of `{url, size, checksum, checksum-algorithm, filename, mimetype,
/// insecure, fail}`.
fn put_downloads(state: &State, rq: &Context, req: &Request, _: &[&str]) -> Result<Reply> {
    let list: Vec<crate::model::storage::content::KnownUrl> = serde_json::from_slice(&req.body)
        .map_err(|e| Error::invalid("downloads", format!("expected a JSON list of URLs: {e}")))?;
    if let Some(bad) = list
        .iter()
        .find(|d| !d.url.starts_with("http://") && !d.url.starts_with("https://"))
    {
        return Err(Error::invalid(
            "downloads",
            format!("'{}' is not an http(s) URL", bad.url),
        ));
    }
    state.at(rq.now_ms(), |c| {
        c.storages_mut().volumes_mut().downloads.clone_from(&list);
    });
    Ok(json!(list).into())
}

/// `GET /_fake/oci-images`: the images the emulated registries hold.
fn list_oci_images(state: &State, rq: &Context, _: &Request, _: &[&str]) -> Result<Reply> {
    Ok(json!(state.at(rq.now_ms(), |c| {
        c.storages().volumes().oci.images().to_vec()
    }))
    .into())
}

/// `PUT /_fake/oci-images`: replaces the images of the emulated
/// registries with a JSON list of `{reference, layers, created,
/// entrypoint, cmd, env, user, working-dir, stop-signal, volumes, ostype,
/// architecture}`.
fn put_oci_images(state: &State, rq: &Context, req: &Request, _: &[&str]) -> Result<Reply> {
    let list: Vec<crate::model::oci::Image> = serde_json::from_slice(&req.body).map_err(|e| {
        Error::invalid("oci-images", format!("expected a JSON list of images: {e}"))
    })?;
    let registry = crate::model::oci::Registry::new(list.clone())
        .map_err(|e| Error::invalid("oci-images", e))?;
    state.at(rq.now_ms(), |c| {
        c.storages_mut().volumes_mut().oci = registry;
    });
    Ok(json!(list).into())
}

/// `POST /_fake/seed`: the body is a scenario (YAML or JSON) or a state
/// document (`GET /_fake/state`).
fn seed(state: &State, rq: &Context, req: &Request, _: &[&str]) -> Result<Reply> {
    take_up(state, rq, Document::read(Document::SCENARIO, &req.body)?)
}

/// A whole world a control call brings (`POST /_fake/seed`, `PUT
/// /_fake/state`), parsed. Parsing (and checking) a large document takes
/// time: [`Document::prepare`] does it on a blocking thread, before the
/// call, so that the runtime's threads go on serving and a shutdown does
/// not wait for it (the request is dropped, the parse's result with it).
enum Document {
    Scenario(Box<Scenario>),
    State(Box<crate::model::world::StateDoc>),
}

impl Document {
    const SCENARIO: &'static str = "/seed";
    const STATE: &'static str = "/state";

    /// Parses the body of the call whose pattern is `pattern`
    /// ([`Self::SCENARIO`] or [`Self::STATE`]).
    fn read(pattern: &str, body: &[u8]) -> Result<Self> {
        if pattern == Self::STATE {
            let text = std::str::from_utf8(body)
                .map_err(|_| Error::invalid("state", "the state is not UTF-8 text"))?;
            let doc = crate::model::world::parse(text, "<request body>")
                .map_err(|e| Error::invalid("state", e.reason))?;
            return Ok(Self::State(Box::new(doc)));
        }
        let text = std::str::from_utf8(body)
            .map_err(|_| Error::invalid("scenario", "the scenario is not UTF-8 text"))?;
        let scenario = Scenario::parse(text, "<request body>")
            .map_err(|e| Error::invalid("scenario", e.to_string()))?;
        Ok(Self::Scenario(Box::new(scenario)))
    }

    /// The document of `method pattern`'s body, parsed on a blocking
    /// thread; `None` for the calls that bring none.
    async fn prepare(
        method: &Method,
        pattern: Option<&str>,
        body: &bytes::Bytes,
    ) -> Result<Option<Self>> {
        let pattern = match (method, pattern) {
            (&Method::POST, Some(Self::SCENARIO)) => Self::SCENARIO,
            (&Method::PUT, Some(Self::STATE)) => Self::STATE,
            _ => return Ok(None),
        };
        let body = body.clone();
        tokio::task::spawn_blocking(move || Self::read(pattern, &body))
            .await
            .map_err(|e| Error::failed(format!("parsing the document failed: {e}")))?
            .map(Some)
    }
}

/// Makes `doc` the world (a scenario becomes what `reset` returns to).
fn take_up(state: &State, rq: &Context, doc: Document) -> Result<Reply> {
    match doc {
        Document::Scenario(scenario) => {
            state
                .load(*scenario, rq.now())
                .map_err(|e| Error::invalid("scenario", e.to_string()))?;
            crate::api::run_setup(state, &crate::api::Router::default())
                .map_err(|e| Error::invalid("scenario", e))?;
        }
        Document::State(doc) => state
            .import(*doc)
            .map_err(|e| Error::invalid("state", e.to_string()))?,
    }
    Ok(health(state, rq).into())
}

/// The VMID of `/_fake/guests/{vmid}`, which must exist.
fn guest_vmid(state: &State, rq: &Context, id: &str) -> Result<u32> {
    let vmid: u32 = id
        .parse()
        .map_err(|_| Error::invalid("vmid", format!("invalid VMID '{id}'")))?;
    if !state.at(rq.now_ms(), |c| c.guests().contains_key(&vmid)) {
        return Err(Error::not_found(format!("VM {vmid} does not exist")));
    }
    Ok(vmid)
}

/// `PUT /_fake/guests/{vmid}`: the members given (JSON, as a scenario's
/// `guests:` entry) replace those of the guest; answers the guest.
fn put_guest(state: &State, rq: &Context, req: &Request, at: &[&str]) -> Result<Reply> {
    let vmid = guest_vmid(state, rq, at.first().copied().unwrap_or_default())?;
    let body: Value = serde_json::from_slice(&req.body)
        .map_err(|e| Error::invalid("guest", format!("expected a JSON object: {e}")))?;
    let Value::Object(changes) = body else {
        return Err(Error::invalid("guest", "expected a JSON object"));
    };
    state.at(rq.now_ms(), |c| {
        let guest = c.guests.agent_mut(vmid);
        let mut merged = match serde_json::to_value(&*guest) {
            Ok(Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        };
        merged.extend(changes);
        let new: crate::model::agent::Guest = serde_json::from_value(Value::Object(merged))
            .map_err(|e| Error::invalid("guest", e.to_string()))?;
        *guest = new;
        Ok(serde_json::to_value(&*guest).unwrap_or(Value::Null).into())
    })
}

/// `POST /_fake/nodes/{node}/joined`: a member that joined this cluster
/// through its own fake-pve (`POST /cluster/config/join` there) is up,
/// as corosync sees it once it has joined: online, with the facts the
/// JSON document gives (`ssl_fingerprint`, `cpus`, `memory`, `uptime`;
/// all optional). The joining fake-pve calls it at the end of its join.
/// Answers the node's status.
fn node_joined(state: &State, rq: &Context, req: &Request, at: &[&str]) -> Result<Reply> {
    let node = at.first().copied().unwrap_or_default();
    let facts: crate::model::join::JoinedFacts = if req.body.iter().all(u8::is_ascii_whitespace) {
        crate::model::join::JoinedFacts::default()
    } else {
        serde_json::from_slice(&req.body)
            .map_err(|e| Error::invalid("facts", format!("expected a JSON object: {e}")))?
    };
    state.at(rq.now_ms(), |c| {
        crate::model::join::node_joined(c.nodes_mut(), node, &facts, rq.now())?;
        Ok(json!({ "node": node, "status": "online" }).into())
    })
}

/// `POST /_fake/nodes/{node}/boot`: a node that is down (shut down, or
/// rebooting) is online at once and starts its `onboot` guests; an
/// online node stays as it is. Answers the node's status.
fn boot_node(state: &State, rq: &Context, _: &Request, at: &[&str]) -> Result<Reply> {
    let node = at.first().copied().unwrap_or_default();
    state.at(rq.now_ms(), |c| {
        c.power_on(node, rq.now_ms())?;
        c.advance(rq.now_ms());
        Ok(json!({ "node": node, "status": "online" }).into())
    })
}
