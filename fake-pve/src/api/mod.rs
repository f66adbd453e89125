//! The wire: PVE's `/api2/json` (and `/api2/extjs`) with its envelope,
//! authentication, status lines and reason phrases (pve-http-server
//! `AnyEvent.pm`, `Formatter/Standard.pm`; pve-manager `HTTPServer.pm`).
//!
//! Each area has a module with a `routes()` list, one line per route.
//! Handlers are thin: read parameters, call the model under the lock,
//! answer with the `data` member.

pub mod access;
pub mod agent;
pub mod auth;
pub mod cluster;
pub mod network;
pub mod nodes;
pub mod params;
pub mod qemu;
pub mod storage;
pub mod tasks;
pub mod upload;

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Response, StatusCode};
use http_body_util::Full;
use serde_json::{Value, json};

use crate::model::{AuthId, Context, Error, ErrorKind, Result};
use crate::state::State;
use auth::Credentials;
pub use params::Params;

/// What a handler answers: the `data` member, and `total` where PVE sets it.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The `data` member.
    pub data: Value,
    /// The top-level `total` (left out when zero, as PVE does).
    pub total: Option<u64>,
    /// Other top-level members a handler sets (`set_result_attrib`, e.g.
    /// the `changes` of `GET /nodes/{node}/network`).
    pub attribs: serde_json::Map<String, Value>,
}

impl From<Value> for Reply {
    fn from(data: Value) -> Self {
        Self {
            data,
            total: None,
            attribs: serde_json::Map::new(),
        }
    }
}

/// One request as a handler sees it.
#[derive(Debug)]
pub struct Ctx<'a> {
    /// The server state.
    pub state: &'a State,
    /// Who asks; `None` on the calls that need no authentication.
    pub who: Option<AuthId>,
    /// Path, query and body parameters, merged.
    pub params: Params,
    /// The spooled file of an upload.
    pub upload: Option<upload::UploadInfo>,
    /// The request's instant and random draws.
    pub rq: std::cell::RefCell<Context>,
}

impl Ctx<'_> {
    /// The authenticated identity.
    ///
    /// # Errors
    /// 401 when the call was made without credentials.
    pub fn who(&self) -> Result<&AuthId> {
        self.who
            .as_ref()
            .ok_or_else(|| Error::Unauthorized("No ticket".into()))
    }

    /// Runs `f` on the cluster as of the request's instant (see
    /// [`State::at`]).
    pub fn with<R>(&self, f: impl FnOnce(&mut crate::model::Cluster) -> R) -> R {
        self.state.at(self.now_ms(), f)
    }

    /// The request's instant, in epoch seconds.
    pub fn now(&self) -> i64 {
        self.rq.borrow().now()
    }

    /// The request's instant, in epoch milliseconds.
    pub fn now_ms(&self) -> i64 {
        self.rq.borrow().now_ms()
    }

    /// The request's context, for the model calls that draw at random.
    pub fn rq(&self) -> std::cell::RefMut<'_, Context> {
        self.rq.borrow_mut()
    }

    /// How long a task of `kind` runs under the latency profile.
    pub fn task_ms(&self, kind: &str) -> u64 {
        let draw = self.rq().duration_draw();
        self.state.latency().task_ms(kind, draw)
    }

    /// A required path or body parameter as text.
    ///
    /// # Errors
    /// 400 when it is missing.
    pub fn param(&self, name: &str) -> Result<String> {
        self.params.req_str(name)
    }
}

/// A handler: parameters in, `data` out.
pub type Handler = fn(&Ctx<'_>) -> Result<Reply>;

/// One route: method, path template (as the schema spells it) and the
/// handler that gives it behaviour. Routing, permissions and parameter
/// validation come from the schema, not from here.
#[derive(Clone)]
pub struct Route {
    method: Method,
    template: &'static str,
    handler: Handler,
}

impl Route {
    /// A route. `path` is the schema's path template.
    pub fn new(method: Method, path: &'static str, handler: Handler) -> Self {
        Self {
            method,
            template: path,
            handler,
        }
    }
}

/// Shorthand for a GET route.
pub fn get(path: &'static str, handler: Handler) -> Route {
    Route::new(Method::GET, path, handler)
}

/// Shorthand for a POST route.
pub fn post(path: &'static str, handler: Handler) -> Route {
    Route::new(Method::POST, path, handler)
}

/// Shorthand for a PUT route.
pub fn put(path: &'static str, handler: Handler) -> Route {
    Route::new(Method::PUT, path, handler)
}

/// Shorthand for a DELETE route.
pub fn delete(path: &'static str, handler: Handler) -> Route {
    Route::new(Method::DELETE, path, handler)
}

/// Every `/api2` route.
pub struct Router {
    routes: Vec<Route>,
}

impl Default for Router {
    fn default() -> Self {
        let mut routes = Vec::new();
        routes.extend(access::routes());
        routes.extend(cluster::routes());
        routes.extend(nodes::routes());
        routes.extend(tasks::routes());
        routes.extend(qemu::routes());
        routes.extend(network::routes());
        routes.extend(agent::routes());
        routes.extend(storage::routes());
        Self { routes }
    }
}

impl Router {
    /// The handler for a method and path template, if fake-pve has
    /// behaviour for it.
    pub fn handler(&self, method: &Method, path: &str) -> Option<Handler> {
        self.routes
            .iter()
            .find(|r| r.method == method && r.template == path)
            .map(|r| r.handler)
    }
}

/// The answer format after `/api2/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `/api2/json`.
    Json,
    /// `/api2/extjs`: the ExtJS form with `success`.
    Extjs,
}

/// The calls PVE answers without authentication (pve-manager
/// `HTTPServer.pm::auth_handler`).
fn needs_no_auth(method: &Method, rel: &str) -> bool {
    let rel = rel.trim_end_matches('/');
    matches!(
        (method.as_str(), rel),
        ("GET", "/access/domains")
            | ("GET" | "POST", "/access/ticket")
            | ("POST", "/access/vncticket")
            | ("POST", "/access/openid/auth-url" | "/access/openid/login")
    )
}

/// A refusal from the authentication layer: status line only, no body.
#[derive(Debug)]
pub(crate) struct AuthReject(pub(crate) String);

/// Checks the credentials of a request and returns who makes it. Before
/// 9.1.5 (and 8.4.17) PVE said why; since then every refusal but the
/// missing ticket and the CSRF check reads `Authentication failed!`.
pub(crate) fn authenticate(
    state: &State,
    method: &Method,
    headers: &HeaderMap,
    csrf_exempt: bool,
) -> std::result::Result<AuthId, AuthReject> {
    let v = state.settings().version;
    let say = |old: String| {
        AuthReject(if v.is_v9() {
            v.invalid_ticket_message().to_string()
        } else {
            old
        })
    };
    let now = state.clock().now();
    match auth::credentials(headers) {
        None => Err(AuthReject("No ticket".into())),
        Some(Credentials::BadToken) => Err(say("no tokenid specified".into())),
        Some(Credentials::Ticket(t)) => {
            let Some((userid, _)) = state.keys().verify_ticket(&t, now) else {
                return Err(say(v.invalid_ticket_message().into()));
            };
            state
                .with(|c| c.access.check_user_enabled(&userid, now).map(|_| ()))
                .map_err(|e| say(e.to_string()))?;
            // Uploads come from a browser form without the header.
            if method != Method::GET && !csrf_exempt {
                let csrf = headers
                    .get("CSRFPreventionToken")
                    .and_then(|h| h.to_str().ok())
                    .unwrap_or("");
                if !state.keys().verify_csrf(csrf, &userid, now) {
                    return Err(AuthReject("Permission denied - invalid csrf token".into()));
                }
            }
            Ok(AuthId::User(userid))
        }
        Some(Credentials::Token { authid, secret }) => {
            let Some(AuthId::Token { userid, tokenid }) = AuthId::parse(&authid) else {
                return Err(say(format!(
                    "'{authid}' is not a valid token ID - not able to split into user and token parts"
                )));
            };
            state
                .with(|c| c.access.check_token(&userid, &tokenid, &secret, now))
                .map_err(|e| say(e.to_string()))?;
            Ok(AuthId::Token { userid, tokenid })
        }
    }
}

/// A request as the wire layer received it.
#[derive(Debug)]
pub struct Request {
    /// The method.
    pub method: Method,
    /// The path, still percent-encoded.
    pub path: String,
    /// The raw query string.
    pub query: Option<String>,
    /// The headers.
    pub headers: HeaderMap,
    /// The body.
    pub body: Bytes,
    /// The spooled file of an upload (`.../storage/{storage}/upload`).
    pub upload: Option<upload::UploadInfo>,
}

/// Marks a response the server must not send: an injected fault that
/// closes the connection instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DropConnection;

impl std::fmt::Display for DropConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection dropped by an injected fault")
    }
}

impl std::error::Error for DropConnection {}

/// The body size PVE accepts (`$limit_max_post`).
pub const MAX_BODY: usize = 512 * 1024;

/// Splits `/api2/<format>/<rest>` as PVE does: `None` when the path has
/// no format.
fn split_api2(path: &str) -> Option<(&str, &str)> {
    let rest = path.strip_prefix("/api2/")?.trim_start_matches('/');
    let end = rest.find('/').unwrap_or(rest.len());
    let (fmt, rel) = rest.split_at(end);
    let b = fmt.as_bytes();
    let ok = !b.is_empty()
        && b[0].is_ascii_lowercase()
        && b.len() >= 2
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    ok.then_some((fmt, rel))
}

/// pveproxy checks a request's credentials from its headers before it
/// reads the body: an upload without valid credentials is refused with
/// 401 before any of its file is read.
pub async fn refuse_unauthenticated_upload(
    state: &State,
    method: &Method,
    headers: &HeaderMap,
) -> Option<Response<Full<Bytes>>> {
    match authenticate(state, method, headers, true) {
        Ok(_) => None,
        Err(AuthReject(msg)) => {
            delay(state).await;
            Some(status_only(401, &msg))
        }
    }
}

/// Answers one `/api2` request (the caller has read the body, up to
/// [`MAX_BODY`] and one byte more).
pub async fn handle(state: &State, router: &Router, req: Request) -> Response<Full<Bytes>> {
    let decoded = decoded_path(&req.path);
    let split = split_api2(&decoded);
    let rel = relative(split);

    let who = if needs_no_auth(&req.method, &rel) {
        None
    } else {
        match authenticate(
            state,
            &req.method,
            &req.headers,
            upload::is_upload_path(&req.path),
        ) {
            Ok(who) => Some(who),
            Err(AuthReject(msg)) => {
                delay(state).await;
                return status_only(401, &msg);
            }
        }
    };
    let authid = who.as_ref().map(ToString::to_string);
    // A request that can change the world is journaled before it runs and
    // runs alone, at one instant, with its own random draws (see
    // `crate::persist`). Reads are not, nor logins (they change nothing,
    // and their passwords stay out of the journal), except while fault
    // rules are in force, since those count every request.
    let changes =
        req.method != Method::GET && !(req.method == Method::POST && rel == "/access/ticket");
    let step = match state.store() {
        Some(store) if changes || state.faults(|f| !f.rules.is_empty()) => {
            let journaled = store.journaled(
                state,
                crate::persist::Kind::Api,
                &req,
                authid.clone(),
                false,
                |rq| core(state, router, &req, &rel, split, who, rq),
            );
            match journaled {
                Ok(step) => step,
                Err(e) => return failure(Format::Json, &e),
            }
        }
        _ => core(
            state,
            router,
            &req,
            &rel,
            split,
            who,
            state.request_context(),
        ),
    };
    let (format, name, result) = match step {
        Step::Answer(r) => return r,
        Step::Fault(fault, format) => {
            if fault.delay_ms > 0 {
                tokio::time::sleep(Duration::from_millis(fault.delay_ms)).await;
            }
            if fault.drop {
                let mut r = Response::new(Full::new(Bytes::new()));
                r.extensions_mut().insert(DropConnection);
                return r;
            }
            let (code, msg) = fault.status.unwrap_or((500, "injected fault".into()));
            return failure_status(format, code, &msg, None);
        }
        Step::Dispatched(format, name, result, delay_ms) => {
            if delay_ms > 0 {
                tokio::time::sleep(Duration::from_millis(delay_ms)).await;
            }
            (format, name, result)
        }
    };
    let started = tokio::time::Instant::now();
    // The latency profile's time for this PVE method.
    if let Some(name) = name {
        let ms = state.latency().request_ms(name);
        if ms > 0 {
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
    }
    if matches!(result, Err(Error::Unauthorized(_))) {
        let d = state.settings().auth_failure_delay;
        tokio::time::sleep_until(started + d).await;
    }
    match result {
        Ok(reply) => success(format, reply),
        Err(e) => failure(format, &e),
    }
}

/// Where the synchronous part of a request ended.
enum Step {
    /// An answer made already (a malformed request).
    Answer(Response<Full<Bytes>>),
    /// An injected fault, with the format to answer in.
    Fault(crate::model::faults::RequestFault, Format),
    /// The handler ran; answer after the injected delay (milliseconds).
    Dispatched(Format, Option<&'static str>, Result<Reply>, u64),
}

/// The part of a request that reads or changes the world: injected
/// faults, the body's checks, routing and the handler.
fn core(
    state: &State,
    router: &Router,
    req: &Request,
    rel: &str,
    split: Option<(&str, &str)>,
    who: Option<AuthId>,
    rq: Context,
) -> Step {
    let authid = who.as_ref().map(ToString::to_string);
    let format = if matches!(split, Some(("extjs", _))) {
        Format::Extjs
    } else {
        Format::Json
    };
    let mut delay_ms = 0;
    if let Some(fault) = state.faults(|f| f.on_request(req.method.as_str(), rel, authid.as_deref()))
    {
        tracing::warn!(rule = fault.rule, method = %req.method, path = %rel, "injected fault");
        if fault.drop || fault.status.is_some() {
            return Step::Fault(fault, format);
        }
        // A delay alone: the request runs, and its answer waits.
        delay_ms = fault.delay_ms;
    }
    match split {
        None => return Step::Answer(plain(501, "no such uri")),
        Some(("json" | "extjs", _)) => {}
        Some((other, _)) => {
            return Step::Answer(plain(501, &format!("no formatter for uri {rel}, {other}")));
        }
    }
    if !req.body.is_empty() && req.method != Method::POST && req.method != Method::PUT {
        return Step::Answer(plain(
            501,
            &format!("Unexpected content for method '{}'", req.method),
        ));
    }
    if req.body.len() > MAX_BODY {
        return Step::Answer(plain(501, "for data too large"));
    }
    let body = match body_params(req) {
        Ok(b) => b,
        Err((code, msg)) => return Step::Answer(plain(code, &msg)),
    };
    let call = Call { who, map: body, rq };
    let (name, result) = dispatch(state, router, req, rel, call);
    Step::Dispatched(format, name, result, delay_ms)
}

/// A request path with its percent-escapes decoded.
fn decoded_path(path: &str) -> String {
    percent_encoding::percent_decode_str(path)
        .decode_utf8_lossy()
        .into_owned()
}

/// The path below `/api2/{format}` (`/` for the root).
fn relative(split: Option<(&str, &str)>) -> String {
    match split {
        Some((_, "")) | None => "/".to_string(),
        Some((_, r)) => r.to_string(),
    }
}

/// Runs a journaled API request again, as it ran (when a data directory
/// is loaded).
pub fn replay(state: &State, router: &Router, rec: &crate::persist::Record) {
    let req = rec.request();
    let decoded = decoded_path(&req.path);
    let split = split_api2(&decoded);
    let rel = relative(split);
    let who = rec.who.as_deref().and_then(AuthId::parse);
    let _ = core(state, router, &req, &rel, split, who, rec.context(state));
}

pub(crate) async fn delay(state: &State) {
    let d = state.settings().auth_failure_delay;
    if d > Duration::ZERO {
        tokio::time::sleep(d).await;
    }
}

/// What a request brings to its handler besides the request itself: who
/// asks, the body's parameters and the request's context.
struct Call {
    who: Option<AuthId>,
    map: BTreeMap<String, Value>,
    rq: Context,
}

/// Routes, checks and answers a request; also names the PVE method it
/// reached, for the latency profile.
fn dispatch(
    state: &State,
    router: &Router,
    req: &Request,
    rel: &str,
    call: Call,
) -> (Option<&'static str>, Result<Reply>) {
    let mut name = None;
    let result = answer(state, router, req, rel, call, &mut name);
    (name, result)
}

/// The path segments as PVE's router splits them: after
/// `/nodes/{node}/storage/{storage}/content` the rest is one segment,
/// because volume IDs may contain a slash (`fragmentDelimiter => ''` in
/// pve-storage `API2/Storage/Status.pm`).
fn path_segments(rel: &str) -> Vec<String> {
    let mut segs: Vec<String> = rel
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    if segs.len() > 6 && segs[0] == "nodes" && segs[2] == "storage" && segs[4] == "content" {
        let rest = segs.split_off(5).join("/");
        segs.push(rest);
    }
    segs
}

fn answer(
    state: &State,
    router: &Router,
    req: &Request,
    rel: &str,
    call: Call,
    name: &mut Option<&'static str>,
) -> Result<Reply> {
    let Call { who, mut map, rq } = call;
    let now_ms = rq.now_ms();
    let segs = path_segments(rel);
    let spec = crate::spec::spec(state.settings().version);
    if segs.is_empty()
        && let Some(handler) = router.handler(&req.method, "/")
    {
        // The API root is not in the schema, but PVE answers it.
        let ctx = Ctx {
            state,
            who,
            params: Params::default(),
            upload: None,
            rq: std::cell::RefCell::new(rq),
        };
        return handler(&ctx);
    }
    let Some(found) = spec.find(req.method.as_str(), &segs) else {
        return Err(Error::NotImplemented(format!(
            "Method '{} {rel}' not implemented",
            req.method
        )));
    };
    let endpoint = found.endpoint;
    *name = Some(endpoint.name.as_str());
    if let Some(q) = &req.query {
        for (k, v) in form_urlencoded::parse(q.as_bytes()) {
            map.insert(k.into_owned(), Value::String(v.into_owned()));
        }
    }
    map.remove("_dc");
    for (name, value) in &found.params {
        if let Some(other) = map.get(name)
            && params::value_text(other) != *value
        {
            return Err(Error::invalid(
                name.clone(),
                "duplicate parameter (already defined in URI) with conflicting values!",
            ));
        }
        map.insert(name.clone(), Value::String(value.clone()));
    }
    if let Some(who) = &who {
        if !endpoint.allowtoken && who.is_token() {
            return Err(Error::Forbidden(format!(
                "Permission check failed (URI '{rel}' not available with API token, need proper ticket.\n)"
            )));
        }
        state.at(now_ms, |c| {
            crate::spec::perm::check(&c.access, who, &endpoint.permissions, &map)
        })?;
    }
    if endpoint.proxyto.as_deref() == Some("node")
        && let Some(node) = map.get("node").map(params::value_text)
    {
        state.at(now_ms, |c| c.node(&node).map(|_| ()))?;
    }
    crate::spec::validate::validate(endpoint, &map).map_err(Error::Invalid)?;
    let ctx = Ctx {
        state,
        who,
        params: Params::new(map),
        upload: req.upload.clone(),
        rq: std::cell::RefCell::new(rq),
    };
    match router.handler(&req.method, &endpoint.path) {
        Some(handler) => handler(&ctx),
        None => fallback(endpoint, &format!("/api2/json{rel}")),
    }
}

/// What an endpoint without behaviour answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fallback {
    /// A directory index: its children, from the schema.
    Index(String),
    /// A collection that is empty on a fresh install and cannot be filled
    /// yet.
    EmptyList,
    /// 501: not emulated yet.
    NotEmulated,
}

/// Collections that are empty on a fresh install and that fake-pve cannot
/// fill yet, so that `[]` is the truth.
const EMPTY_ON_FRESH_INSTALL: &[&str] = &[
    "/pools",
    "/access/tfa",
    "/cluster/backup",
    "/cluster/backup-info/not-backed-up",
    "/cluster/firewall/aliases",
    "/cluster/firewall/groups",
    "/cluster/firewall/ipset",
    "/cluster/firewall/rules",
    "/cluster/ha/groups",
    "/cluster/ha/resources",
    "/cluster/ha/rules",
    "/cluster/jobs/realm-sync",
    "/cluster/mapping/dir",
    "/cluster/mapping/pci",
    "/cluster/mapping/usb",
    "/cluster/metrics/server",
    "/cluster/replication",
    "/cluster/sdn/controllers",
    "/cluster/sdn/dns",
    "/cluster/sdn/vnets",
    "/cluster/sdn/zones",
    "/nodes/{node}/firewall/rules",
    "/nodes/{node}/lxc",
    "/nodes/{node}/replication",
];

/// How an endpoint without a handler answers.
pub fn fallback_kind(e: &crate::spec::Endpoint) -> Fallback {
    if e.method != "GET" {
        return Fallback::NotEmulated;
    }
    if !e.children.is_empty()
        && e.returns_list()
        && let Some(key) = e.index_key()
    {
        return Fallback::Index(key);
    }
    if e.returns_list() && EMPTY_ON_FRESH_INSTALL.contains(&e.path.as_str()) {
        return Fallback::EmptyList;
    }
    Fallback::NotEmulated
}

fn fallback(e: &crate::spec::Endpoint, full_path: &str) -> Result<Reply> {
    match fallback_kind(e) {
        Fallback::Index(key) => Ok(Value::Array(
            e.children
                .iter()
                .map(|c| json!({ key.as_str(): c }))
                .collect(),
        )
        .into()),
        Fallback::EmptyList => Ok(json!([]).into()),
        Fallback::NotEmulated => Err(Error::NotImplemented(format!(
            "Method '{} {full_path}' is not emulated by fake-pve",
            e.method
        ))),
    }
}

/// Reads a POST/PUT body: JSON, or a form (also without Content-Type).
pub(crate) fn body_params(
    req: &Request,
) -> std::result::Result<BTreeMap<String, Value>, (u16, String)> {
    let mut map = BTreeMap::new();
    if req.body.is_empty() {
        return Ok(map);
    }
    let ctype = req
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if ctype == "application/json" {
        match serde_json::from_slice::<Value>(&req.body) {
            Ok(Value::Object(o)) => map.extend(o.into_iter().filter(|(_, v)| !v.is_null())),
            Ok(_) => {
                return Err((
                    500,
                    "malformed JSON string, neither array, object, number, string or atom".into(),
                ));
            }
            Err(e) => return Err((500, format!("malformed JSON string: {e}"))),
        }
    } else if ctype.is_empty() || ctype == "application/x-www-form-urlencoded" {
        for (k, v) in form_urlencoded::parse(&req.body) {
            // A repeated key is a list (`command=ls&command=-l`), as
            // clients send array parameters.
            let v = Value::String(v.into_owned());
            match map.get_mut(k.as_ref()) {
                Some(Value::Array(list)) => list.push(v),
                Some(first) => *first = Value::Array(vec![first.take(), v]),
                None => {
                    map.insert(k.into_owned(), v);
                }
            }
        }
    } else {
        return Err((
            506,
            format!("upload 'Content-Type '{ctype}' not implemented"),
        ));
    }
    Ok(map)
}

/// The content type of every JSON answer, byte for byte as PVE sends it.
pub const JSON_CONTENT_TYPE: &str = "application/json;charset=UTF-8";

fn base_response(code: u16, reason: &str) -> http::response::Builder {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut b = Response::builder()
        .status(status)
        .header("Cache-Control", "max-age=0")
        .header("Pragma", "no-cache")
        .header("Expires", expires(now))
        .header("Server", "pve-api-daemon/3.0");
    // pveproxy closes the connection after every error answer.
    if code >= 400 {
        b = b.header(http::header::CONNECTION, "close");
    }
    if let Some(r) = reason_phrase(status, reason) {
        b = b.extension(r);
    }
    b
}

/// [`http_date`] of `now`, made once a second per thread.
fn expires(now: u64) -> HeaderValue {
    thread_local! {
        static LAST: std::cell::RefCell<(u64, HeaderValue)> =
            const { std::cell::RefCell::new((u64::MAX, HeaderValue::from_static(""))) };
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if last.0 != now {
            let v = HeaderValue::from_str(&http_date(now))
                .unwrap_or_else(|_| HeaderValue::from_static(""));
            *last = (now, v);
        }
        last.1.clone()
    })
}

/// An RFC 7231 date (`Sun, 06 Nov 1994 08:49:37 GMT`).
pub fn http_date(epoch: u64) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (year, month, day, h, m, sec, wd) = crate::clock::civil(i64::try_from(epoch).unwrap_or(0));
    format!(
        "{}, {day:02} {} {year} {h:02}:{m:02}:{sec:02} GMT",
        DAYS[wd as usize % 7],
        MONTHS[(month as usize + 11) % 12]
    )
}

fn reason_phrase(status: StatusCode, msg: &str) -> Option<hyper::ext::ReasonPhrase> {
    let first = msg.lines().next().unwrap_or("").trim_end();
    if first.is_empty() || status.canonical_reason() == Some(first) {
        return None;
    }
    hyper::ext::ReasonPhrase::try_from(first.as_bytes().to_vec()).ok()
}

fn build(b: http::response::Builder, body: Bytes) -> Response<Full<Bytes>> {
    b.body(Full::new(body))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

/// An answer with the message as its reason phrase and as a plain body
/// (the transport layer's errors).
pub fn plain(code: u16, msg: &str) -> Response<Full<Bytes>> {
    build(base_response(code, msg), Bytes::from(msg.to_string()))
}

/// An answer with a status line and no body (the authentication layer).
pub fn status_only(code: u16, msg: &str) -> Response<Full<Bytes>> {
    build(base_response(code, msg), Bytes::new())
}

fn json_response(code: u16, reason: &str, body: &Value) -> Response<Full<Bytes>> {
    let b = base_response(code, reason).header(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static(JSON_CONTENT_TYPE),
    );
    build(b, Bytes::from(serde_json::to_vec(body).unwrap_or_default()))
}

/// A JSON document as it is, without PVE's envelope.
pub fn raw_json(body: &Value) -> Response<Full<Bytes>> {
    json_response(200, "", body)
}

/// The success answer.
pub fn success(format: Format, reply: Reply) -> Response<Full<Bytes>> {
    // The envelope is written around the data (`{"data":...,"total":n,
    // <attribs>,"success":1}`) instead of moving it into a new value.
    // Writing a `Value` into a `Vec` cannot fail.
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(b"{\"data\":");
    let _ = serde_json::to_writer(&mut out, &reply.data);
    if let Some(t) = reply.total.filter(|t| *t != 0) {
        out.extend_from_slice(format!(",\"total\":{t}").as_bytes());
    }
    for (k, v) in &reply.attribs {
        if matches!(k.as_str(), "data" | "total" | "success") {
            continue;
        }
        out.push(b',');
        let _ = serde_json::to_writer(&mut out, k);
        out.push(b':');
        let _ = serde_json::to_writer(&mut out, v);
    }
    if format == Format::Extjs {
        out.extend_from_slice(b",\"success\":1");
    }
    out.push(b'}');
    let b = base_response(200, "").header(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static(JSON_CONTENT_TYPE),
    );
    build(b, Bytes::from(out))
}

/// The status a refusal of each kind is answered with: PVE `die`s with
/// 500 whatever the reason, except for parameters (400), permissions
/// (403), credentials (401), unreachable nodes (pveproxy's 595) and
/// methods it does not have (501).
pub fn status_of(e: &Error) -> u16 {
    match e.kind() {
        ErrorKind::Invalid => 400,
        ErrorKind::Unauthorized => 401,
        ErrorKind::Forbidden => 403,
        ErrorKind::NotImplemented => 501,
        ErrorKind::Unreachable => 595,
        ErrorKind::Failed
        | ErrorKind::NotFound
        | ErrorKind::Exists
        | ErrorKind::Locked
        | ErrorKind::Conflict => 500,
    }
}

/// The error answer for a domain error.
pub fn failure(format: Format, e: &Error) -> Response<Full<Bytes>> {
    failure_status(format, status_of(e), e.message(), e.errors())
}

/// The error answer with a given status (an injected fault's, or a
/// refusal's).
pub fn failure_status(
    format: Format,
    code: u16,
    msg: &str,
    errors: Option<&BTreeMap<String, String>>,
) -> Response<Full<Bytes>> {
    // PVE's own 501 for an unknown method has no newline; every `die`
    // message has one.
    let msg = if msg.ends_with('\n') || code == 501 {
        msg.to_string()
    } else {
        format!("{msg}\n")
    };
    let mut body = json!({ "data": null, "message": msg });
    if let Some(errs) = errors {
        body["errors"] = json!(errs);
    }
    if format == Format::Extjs {
        body["success"] = json!(0);
        body["status"] = json!(code);
        return json_response(200, "", &body);
    }
    json_response(code, &msg, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dates() {
        assert_eq!(http_date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(http_date(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(http_date(1_795_000_000), "Wed, 18 Nov 2026 11:06:40 GMT");
    }

    #[test]
    fn api2_paths() {
        assert_eq!(split_api2("/api2/json/version"), Some(("json", "/version")));
        assert_eq!(split_api2("/api2/json"), Some(("json", "")));
        assert_eq!(split_api2("/api2//extjs/nodes"), Some(("extjs", "/nodes")));
        assert_eq!(split_api2("/api2/"), None);
        assert_eq!(split_api2("/api2/JSON/version"), None);
    }

    /// Each kind of refusal gets PVE's status line and body: the message
    /// (with the newline of a `die`) as reason phrase and `message`.
    #[rstest::rstest]
    #[case(Error::failed("boom"), 500, "boom")]
    #[case(
        Error::not_found("volume 'x' does not exist"),
        500,
        "volume 'x' does not exist"
    )]
    #[case(
        Error::exists("user 'a@pve' already exists"),
        500,
        "user 'a@pve' already exists"
    )]
    #[case(Error::locked("VM is locked (backup)"), 500, "VM is locked (backup)")]
    #[case(Error::conflict("VM 100 not running"), 500, "VM 100 not running")]
    #[case(
        Error::invalid("vmid", "value must be at least 100"),
        400,
        "Parameter verification failed."
    )]
    #[case(Error::Forbidden("Permission check failed (/, Sys.Audit)".into()), 403, "Permission check failed (/, Sys.Audit)")]
    #[case(Error::Unauthorized("authentication failure".into()), 401, "authentication failure")]
    #[case(Error::Unreachable("No route to host".into()), 595, "No route to host")]
    fn refusals_become_status_lines(#[case] e: Error, #[case] code: u16, #[case] msg: &str) {
        assert_eq!(status_of(&e), code);
        let r = failure(Format::Json, &e);
        assert_eq!(r.status().as_u16(), code);
        let reason = r
            .extensions()
            .get::<hyper::ext::ReasonPhrase>()
            .map(|p| String::from_utf8_lossy(p.as_bytes()).into_owned());
        assert_eq!(reason.as_deref(), Some(msg));
        let body = futures_body(r);
        assert_eq!(body["message"], format!("{msg}\n"));
        assert_eq!(body["data"], Value::Null);
        assert_eq!(body.get("errors").is_some(), code == 400);
    }

    /// PVE's own 501s carry no newline.
    #[test]
    fn not_implemented_keeps_its_message_bare() {
        let e = Error::NotImplemented("Method 'GET /nodes/x' not implemented".into());
        assert_eq!(status_of(&e), 501);
        let body = futures_body(failure(Format::Json, &e));
        assert_eq!(body["message"], "Method 'GET /nodes/x' not implemented");
    }

    /// In the extjs format every refusal is a 200 with `success: 0`.
    #[test]
    fn extjs_refusals_are_200_with_their_status_inside() {
        let r = failure(Format::Extjs, &Error::locked("VM is locked (clone)"));
        assert_eq!(r.status().as_u16(), 200);
        let body = futures_body(r);
        assert_eq!(body["success"], 0);
        assert_eq!(body["status"], 500);
    }

    /// A wrapped message keeps its kind; a parameter error becomes a plain
    /// refusal with its summary line, as PVE's `"... failed: $@"` does.
    #[test]
    fn wrapped_refusals_keep_their_kind() {
        let e = Error::exists("role 'x' already exists")
            .map_message(|m| format!("create role failed: {m}"));
        assert_eq!(e.kind(), ErrorKind::Exists);
        assert_eq!(e.message(), "create role failed: role 'x' already exists");
        let e = Error::invalid("privs", "bad").map_message(|m| format!("update failed: {m}"));
        assert_eq!(
            e,
            Error::failed("update failed: Parameter verification failed.")
        );
    }

    fn futures_body(r: Response<Full<Bytes>>) -> Value {
        use http_body_util::BodyExt;
        let collected = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
            .block_on(r.into_body().collect());
        let Ok(collected) = collected;
        serde_json::from_slice(&collected.to_bytes()).expect("JSON body")
    }
}
