//! The wire: PVE's `/api2/json` (and `/api2/extjs`) with its envelope,
//! authentication, status lines and reason phrases (pve-http-server
//! `AnyEvent.pm`, `Formatter/Standard.pm`; pve-manager `HTTPServer.pm`).
//!
//! Each area has a module with a `routes()` list, one line per route.
//! Handlers are thin: read parameters, call the model under the lock,
//! answer with the `data` member.

pub mod access;
pub mod acme;
pub mod agent;
pub mod auth;
pub mod backup;
pub mod ceph;
pub mod cluster;
pub mod clusterconfig;
pub mod clusterlog;
pub mod console;
mod envelope;
mod fallback;
pub mod firewall;
pub(crate) mod form;
pub mod guest;
pub mod ha;
pub mod lxc;
pub mod mapping;
pub(crate) mod members;
pub mod metrics;
pub mod mtunnel;
pub mod network;
pub mod node_hw;
pub mod node_services;
pub mod nodes;
pub mod notify;
pub mod oci;
pub mod params;
mod perm;
pub(crate) mod pipeline;
pub mod pools;
pub mod qemu;
mod recycle;
pub mod replication;
pub mod sdn;
pub mod sdn_fabrics;
pub mod sdn_routing;
pub mod storage;
pub mod tasks;
pub mod upload;

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method};
use serde_json::Value;

use crate::model::{AuthId, Context, Error, Result};
use crate::state::State;
use auth::Credentials;
pub use envelope::*;
#[cfg(feature = "internals")]
pub use fallback::{Fallback, fallback_kind};
pub use params::Params;
#[cfg(feature = "internals")]
pub use pipeline::handle;
pub use pipeline::{answer, refuse_unauthenticated, replay, run_setup};

/// What a handler answers: the `data` member, and `total` where PVE sets it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reply {
    /// The `data` member.
    pub data: Value,
    /// The `data` member's JSON text, written already (a large listing);
    /// when set, `data` is not sent.
    pub raw: Option<RawData>,
    /// The top-level `total` (left out when zero, as PVE does).
    pub total: Option<u64>,
    /// Other top-level members a handler sets (`set_result_attrib`, e.g.
    /// the `changes` of `GET /nodes/{node}/network`).
    pub attribs: serde_json::Map<String, Value>,
    /// The answer itself, still to be worked out once the model's lock
    /// is released (a call that waits for another server first); it
    /// replaces this reply.
    pub(crate) deferred: Option<Deferred>,
    /// A download's bytes (`download_allowed` methods that stream a
    /// file): sent as they are, `application/octet-stream`, instead of
    /// the envelope.
    pub download: Option<bytes::Bytes>,
}

/// The future a deferred answer comes from ([`Reply::deferred`]).
type Pending = std::pin::Pin<Box<dyn std::future::Future<Output = Result<Reply>> + Send>>;

/// An answer a handler defers: run once, after the handler returned and
/// the model's lock is released.
#[derive(Clone)]
pub(crate) struct Deferred(std::sync::Arc<std::sync::Mutex<Option<Pending>>>);

impl Deferred {
    /// The answer (a second run answers nothing but an error).
    pub(crate) async fn run(self) -> Result<Reply> {
        let pending = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        match pending {
            Some(f) => f.await,
            None => Err(Error::failed("answered already")),
        }
    }
}

impl std::fmt::Debug for Deferred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Deferred")
    }
}

impl PartialEq for Deferred {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Reply {
    /// A reply worked out by `f` once the handler returned and the
    /// model's lock is released: a handler that must wait for another
    /// server (`remote_migrate`'s calls to the target) does it there. A
    /// journal's replay does not run it.
    pub(crate) fn deferred(
        f: impl std::future::Future<Output = Result<Reply>> + Send + 'static,
    ) -> Self {
        Self {
            deferred: Some(Deferred(std::sync::Arc::new(std::sync::Mutex::new(Some(
                Box::pin(f),
            ))))),
            ..Self::default()
        }
    }
}

/// The `data` member's JSON text, written after the envelope's opening
/// so that the answer's text is not copied again (a listing of 100,000
/// guests is 35 MB).
#[derive(Debug, Clone, PartialEq)]
pub struct RawData(Vec<u8>);

impl RawData {
    /// What the envelope opens with, before the data.
    pub(crate) const OPENING: &'static [u8] = b"{\"data\":";

    /// The data `write` writes, about `capacity` bytes of it (a large
    /// answer is written into a buffer that another large answer used,
    /// see `recycle`).
    pub fn written(capacity: usize, write: impl FnOnce(&mut Vec<u8>)) -> Self {
        let mut out = recycle::buffer(capacity + 64);
        out.extend_from_slice(Self::OPENING);
        write(&mut out);
        Self(out)
    }

    /// The envelope's opening and the data, for the envelope to close.
    pub(crate) fn into_opened(self) -> Vec<u8> {
        self.0
    }
}

impl From<Value> for Reply {
    fn from(data: Value) -> Self {
        Self {
            data,
            raw: None,
            total: None,
            attribs: serde_json::Map::new(),
            deferred: None,
            download: None,
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
    /// The model, locked for the whole request (as of its instant).
    pub(crate) cluster: std::cell::RefCell<&'a mut crate::model::Cluster>,
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

    /// Runs `f` on the cluster as of the request's instant (the model
    /// stays locked for the whole request: see [`State::lock_at`]).
    pub fn with<R>(&self, f: impl FnOnce(&mut crate::model::Cluster) -> R) -> R {
        f(&mut self.cluster.borrow_mut())
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
        self.state.task_ms(kind, draw)
    }

    /// The node a call names (its `node` parameter), `localhost`
    /// resolved to the local node's name.
    ///
    /// # Errors
    /// 400 without the parameter; PVE's refusal of a node that is not a
    /// member or not reachable.
    pub fn node(&self) -> Result<String> {
        let node = self.param("node")?;
        self.with(|c| c.nodes().reach(&node).map(|n| n.name.clone()))
    }

    /// The guest a call names (its `vmid` parameter).
    ///
    /// # Errors
    /// 400 when it is missing or out of PVE's range.
    pub fn vmid(&self) -> Result<u32> {
        self.params
            .int("vmid", Some(100), Some(999_999_999))?
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| params::missing("vmid"))
    }

    /// Starts `worker` as a task of the caller on `node`, for as long as
    /// the latency profile says its kind runs: its UPID.
    ///
    /// # Errors
    /// 401 without a caller.
    pub fn start_task(&self, node: &str, worker: crate::model::Worker) -> Result<String> {
        self.start_prepared(node, |_| Ok(worker))
    }

    /// Starts the task whose worker `prepare` makes (the checks PVE makes
    /// before it forks, under the lock) as a task of the caller on
    /// `node`: its UPID.
    ///
    /// # Errors
    /// 401 without a caller; what `prepare` refuses.
    pub fn start_prepared(
        &self,
        node: &str,
        prepare: impl FnOnce(&mut crate::model::Cluster) -> Result<crate::model::Worker>,
    ) -> Result<String> {
        let who = self.who()?.to_string();
        let now_ms = self.now_ms();
        self.with(|c| {
            let worker = prepare(c)?;
            let ms = self.task_ms(&worker.kind);
            Ok(c.start_task(node, worker, &who, now_ms, ms))
        })
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
    checks_only: bool,
}

impl Route {
    /// A route. `path` is the schema's path template.
    pub fn new(method: Method, path: &'static str, handler: Handler) -> Self {
        Self {
            method,
            template: path,
            handler,
            checks_only: false,
        }
    }

    /// Marks a route whose handler makes only the checks PVE's handler
    /// makes itself (permissions, the objects it names) and then answers
    /// 501 `not emulated`: the coverage report does not count it as
    /// behaviour. No route of the release's schema is marked today; the
    /// router's own tests use it.
    #[must_use]
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn checks_only(mut self) -> Self {
        self.checks_only = true;
        self
    }
}

/// Starts a task whose worker the model prepared ([`Ctx::start_prepared`])
/// and answers its UPID.
///
/// # Errors
/// As [`Ctx::start_prepared`].
pub(crate) fn start_prepared(
    ctx: &Ctx<'_>,
    node: &str,
    prepare: impl FnOnce(&mut crate::model::Cluster) -> Result<crate::model::Worker>,
) -> Result<Reply> {
    Ok(serde_json::json!(ctx.start_prepared(node, prepare)?).into())
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

/// Every `/api2` route, in a table built once: a path template finds
/// its route by one hash lookup, then the method picks among at most
/// four, so no request is compared against every route.
pub struct Router {
    routes: Vec<Route>,
    /// Each template's routes by method ([`method_slot`]): indexes into
    /// `routes`.
    table: HashMap<&'static str, [Option<u32>; 4], foldhash::fast::FixedState>,
}

/// The slot of a method in a template's row of [`Router`]'s table; the
/// schema has no other methods.
fn method_slot(method: &Method) -> Option<usize> {
    match *method {
        Method::GET => Some(0),
        Method::POST => Some(1),
        Method::PUT => Some(2),
        Method::DELETE => Some(3),
        _ => None,
    }
}

impl Default for Router {
    fn default() -> Self {
        let mut routes = Vec::new();
        routes.extend(access::routes());
        routes.extend(cluster::routes());
        routes.extend(nodes::routes());
        routes.extend(tasks::routes());
        routes.extend(qemu::routes());
        routes.extend(lxc::routes());
        routes.extend(mapping::routes());
        routes.extend(network::routes());
        routes.extend(agent::routes());
        routes.extend(storage::routes());
        routes.extend(oci::routes());
        routes.extend(pools::routes());
        routes.extend(backup::routes());
        routes.extend(sdn::routes());
        routes.extend(sdn_fabrics::routes());
        routes.extend(sdn_routing::routes());
        // SDN: the VNet firewall and a node's SDN views.
        routes.extend(sdn::vnet_firewall::routes());
        routes.extend(sdn::node_status::routes());
        routes.extend(firewall::routes());
        routes.extend(ha::routes());
        // A node's disks, hardware, capabilities, packages, scans.
        routes.extend(node_hw::routes());
        routes.extend(acme::routes());
        // Cluster services: replication, metric servers, tasks and log.
        routes.extend(replication::routes());
        routes.extend(metrics::routes());
        routes.extend(notify::routes());
        routes.extend(clusterlog::routes());
        routes.extend(console::routes());
        routes.extend(mtunnel::routes());
        routes.extend(clusterconfig::routes());
        // A node's own settings, services, subscription and logs.
        routes.extend(node_services::routes());
        // Ceph: the checks of every call, daemons, status, flags.
        routes.extend(ceph::routes());
        Self::new(routes)
    }
}

impl Router {
    /// The table of `routes`. Where two name the same method and
    /// template, the first is the one served.
    fn new(routes: Vec<Route>) -> Self {
        let mut table: HashMap<&'static str, [Option<u32>; 4], _> =
            HashMap::with_capacity_and_hasher(routes.len(), foldhash::fast::FixedState::default());
        for (i, r) in routes.iter().enumerate() {
            let (Some(slot), Ok(i)) = (method_slot(&r.method), u32::try_from(i)) else {
                continue;
            };
            let row = table.entry(r.template).or_default();
            if row[slot].is_none() {
                row[slot] = Some(i);
            }
        }
        Self { routes, table }
    }

    /// The handler for a method and path template, if fake-pve has
    /// behaviour for it.
    pub fn handler(&self, method: &Method, path: &str) -> Option<Handler> {
        self.route(method, path).map(|r| r.handler)
    }

    /// Whether the route of `method` and a schema path template makes
    /// only its handler's checks before answering 501
    /// ([`Route::checks_only`]): what the coverage report reads.
    #[cfg(any(test, feature = "internals"))]
    pub fn is_checks_only(&self, method: &Method, path: &str) -> bool {
        self.route(method, path).is_some_and(|r| r.checks_only)
    }

    fn route(&self, method: &Method, path: &str) -> Option<&Route> {
        let i = self.table.get(path)?[method_slot(method)?]?;
        self.routes.get(usize::try_from(i).ok()?)
    }
}

/// The answer format after `/api2/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `/api2/json`.
    Json,
    /// `/api2/extjs`: the ExtJS form with `success`.
    Extjs,
    /// `/api2/spiceconfig`: a remote-viewer file (`[virt-viewer]` and a
    /// `key=value` line per setting of the data).
    SpiceConfig,
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
    cluster: &crate::model::Cluster,
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
            cluster
                .access()
                .check_user_enabled(&userid, now)
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
            cluster
                .access()
                .check_token(&userid, &tokenid, &secret, now)
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

impl Request {
    /// The control call to journal for this request.
    pub fn to_control_call(&self) -> crate::persist::ControlCall {
        crate::persist::ControlCall {
            method: self.method.to_string(),
            path: self.path.clone(),
            query: self.query.clone(),
            content_type: self
                .headers
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string),
            body: self.body.to_vec(),
        }
    }

    /// A journaled call as a request again, to replay it.
    pub fn from_call(call: crate::persist::ControlCall) -> Self {
        let mut headers = HeaderMap::new();
        if let Some(ct) = call
            .content_type
            .as_deref()
            .and_then(|c| http::HeaderValue::from_str(c).ok())
        {
            headers.insert(http::header::CONTENT_TYPE, ct);
        }
        Self {
            method: Method::from_bytes(call.method.as_bytes()).unwrap_or(Method::GET),
            path: call.path,
            query: call.query,
            headers,
            body: Bytes::from(call.body),
            upload: None,
        }
    }
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

impl DropConnection {
    /// Whether `resp` is marked so.
    pub fn marks<B>(resp: &http::Response<B>) -> bool {
        resp.extensions().get::<Self>().is_some()
    }
}

pub(crate) use crate::model::percent_decoded;

/// The body size PVE accepts (`$limit_max_post`).
pub const MAX_BODY: usize = 512 * 1024;

pub(crate) async fn delay(state: &State) {
    let d = state.settings().auth_failure_delay;
    if d > Duration::ZERO {
        tokio::time::sleep(d).await;
    }
}

/// Reads a POST/PUT body: JSON, or a form (also without Content-Type),
/// each key's value `None` where it is undefined (a JSON `null`, a form
/// key without a value).
pub(crate) fn body_params(
    req: &Request,
) -> std::result::Result<BTreeMap<String, Option<Value>>, (u16, String)> {
    if req.body.is_empty() {
        return Ok(BTreeMap::new());
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
            Ok(Value::Object(o)) => Ok(o
                .into_iter()
                .map(|(k, v)| (k, (!v.is_null()).then_some(v)))
                .collect()),
            Ok(_) => Err((
                500,
                "malformed JSON string, neither array, object, number, string or atom".into(),
            )),
            Err(e) => Err((500, format!("malformed JSON string: {e}"))),
        }
    } else if ctype.is_empty() || ctype == "application/x-www-form-urlencoded" {
        // A repeated key is a list (`command=ls&command=-l`), as
        // clients send array parameters.
        Ok(form::decode(&req.body))
    } else {
        Err((
            506,
            format!("upload 'Content-Type '{ctype}' not implemented"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ErrorKind;
    use http::Response;
    use http_body_util::Full;
    use rstest::rstest;

    #[rstest]
    #[case("/nodes/pve/qemu/100", "/nodes/pve/qemu/100", true)]
    #[case("PVE%3Aroot%40pam%3A1::x", "PVE:root@pam:1::x", false)]
    #[case("bad%FFbyte", "bad\u{FFFD}byte", false)]
    fn text_is_decoded_and_kept_as_it_is_without_an_escape(
        #[case] text: &str,
        #[case] decoded: &str,
        #[case] borrowed: bool,
    ) {
        let got = percent_decoded(text);
        assert_eq!(got, decoded);
        assert_eq!(matches!(got, std::borrow::Cow::Borrowed(_)), borrowed);
    }

    fn nothing(_: &Ctx<'_>) -> Result<Reply> {
        Err(Error::failed("first"))
    }

    fn other(_: &Ctx<'_>) -> Result<Reply> {
        Err(Error::failed("second"))
    }

    /// The table finds each route by its method and template, the first
    /// where two name the same, and nothing for a method or template it
    /// does not have.
    #[rstest]
    #[case(Method::GET, "/nodes/{node}/qemu", Some(0))]
    #[case(Method::POST, "/nodes/{node}/qemu", Some(1))]
    #[case(Method::DELETE, "/nodes/{node}/qemu/{vmid}", Some(3))]
    #[case(Method::PUT, "/nodes/{node}/qemu", None)]
    #[case(Method::PATCH, "/nodes/{node}/qemu", None)]
    #[case(Method::GET, "/nodes/{node}/qemu/", None)]
    #[case(Method::GET, "/nodes/pve/qemu", None)]
    fn the_table_finds_a_route_by_method_and_template(
        #[case] method: Method,
        #[case] path: &str,
        #[case] want: Option<usize>,
    ) {
        let routes = vec![
            get("/nodes/{node}/qemu", nothing),
            post("/nodes/{node}/qemu", nothing),
            post("/nodes/{node}/qemu", other),
            delete("/nodes/{node}/qemu/{vmid}", nothing).checks_only(),
        ];
        let router = Router::new(routes.clone());
        let got = router.route(&method, path).map(|r| {
            routes
                .iter()
                .position(|x| {
                    std::ptr::fn_addr_eq(x.handler, r.handler)
                        && x.method == r.method
                        && x.template == r.template
                })
                .unwrap_or(usize::MAX)
        });
        assert_eq!(got, want);
        assert_eq!(router.is_checks_only(&method, path), want == Some(3));
    }

    /// Every route of fake-pve is found by the table as a scan of the
    /// list in order finds it.
    #[test]
    fn the_table_agrees_with_a_scan_for_every_route() {
        let router = Router::default();
        assert!(router.routes.len() > 400, "{}", router.routes.len());
        for r in &router.routes {
            let scanned = router
                .routes
                .iter()
                .find(|x| x.method == r.method && x.template == r.template)
                .map(|x| x.handler);
            let found = router.handler(&r.method, r.template);
            assert!(
                matches!((scanned, found), (Some(a), Some(b)) if std::ptr::fn_addr_eq(a, b)),
                "{} {}",
                r.method,
                r.template
            );
        }
    }

    #[test]
    fn http_dates() {
        assert_eq!(http_date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(http_date(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(http_date(1_795_000_000), "Wed, 18 Nov 2026 11:06:40 GMT");
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
