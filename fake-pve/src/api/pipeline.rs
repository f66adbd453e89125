//! One `/api2` request, stage by stage, as pveproxy and PVE's API server
//! take it: parse the path, authenticate, then (under the journal when
//! the request can change the world) fault rules, the body, routing by
//! the schema, the permission check, parameter validation and the
//! handler; last the envelope, after the delays the latency profile and
//! fault rules ask for.
//!
//! Fault rules are evaluated under the journal because their hit
//! counts and random draws are part of the world: a replayed journal
//! must reach the same verdicts.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Response};
use http_body_util::Full;
use serde_json::Value;

use super::fallback::fallback;
use super::*;
use crate::model::{AuthId, Cluster, Context, Error, Result};
use crate::state::State;

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

/// Answers one `/api2` request (the caller has read the body, up to
/// [`MAX_BODY`] and one byte more): the in-process entry of fake-pve's
/// own tests.
#[cfg(feature = "internals")]
pub async fn handle(state: &State, router: &Router, req: Request) -> Response<Full<Bytes>> {
    answer(state, router, req).await.0
}

/// The answer to one `/api2` request, with who the request authenticated as beside the answer
/// (for the access log).
pub async fn answer(
    state: &State,
    router: &Router,
    req: Request,
) -> (Response<Full<Bytes>>, Option<AuthId>) {
    // 1. Parse: the format, the path below it and the parameters.
    let parsed = parse(&req);
    let login = parsed.path == "/access/ticket";
    let method = req.method.clone();
    // 2 to 8 under one lock of the model, at one instant (the tasks due
    // by then end first); a request that can change the world while a
    // journal is kept runs its stages 3 to 8 under the journal instead,
    // with the model locked again there.
    let now_ms = state.clock().now_millis();
    let ran = {
        // Waiting for the model is the rare case: its future (boxed) is
        // not part of every request's own.
        let mut cluster = if let Some(c) = state.try_lock_at(now_ms) {
            c
        } else {
            Box::pin(state.lock_for_request(now_ms)).await
        };
        // 2. Authenticate.
        let head = (&req.method, req.path.as_str(), &req.headers);
        authenticate_request(state, &cluster, head, &parsed.path).map(|who| {
            let user = who.clone();
            match journal(state, &cluster, &req, &parsed.path) {
                Some(store) => (user, Err((store.clone(), who, parsed))),
                None => {
                    let rq = state.request_context_at(now_ms);
                    let step = core(state, &mut cluster, router, parsed, who, rq);
                    (user, Ok(step))
                }
            }
        })
    };
    let (user, step) = match ran {
        Ok(ran) => ran,
        Err(AuthReject(msg)) => {
            // PVE's delay before it answers a refused authentication.
            Box::pin(delay(state)).await;
            return (status_only(401, &msg), None);
        }
    };
    let step = match step {
        Ok(step) => step,
        Err((store, who, parsed)) => {
            let call = crate::persist::Call::Api(parsed.clone());
            let authid = who.as_ref().map(ToString::to_string);
            let journaled = crate::persist::blocking(|| {
                // The journal keeps a password's hash in its place.
                let caller = who.clone();
                let seal = move |call: &mut _, now_ms| {
                    super::access::journal::seal(state, call, caller.as_ref(), now_ms)
                };
                store.journaled_sealed(state, call, authid, false, seal, |rq| {
                    let mut cluster = state.lock_at(rq.now_ms());
                    core(state, &mut cluster, router, parsed, who, rq)
                })
            });
            match journaled {
                Ok(step) => step,
                Err(e) => return (failure(Format::Json, &e), user),
            }
        }
    };
    // A handler's deferred answer (one that waits for another server),
    // now that the model is released.
    let step = match step {
        Step::Dispatched(format, name, Ok(mut reply), delay) if reply.deferred.is_some() => {
            let result = match reply.deferred.take() {
                Some(d) => Box::pin(d.run()).await,
                None => Ok(reply),
            };
            Step::Dispatched(format, name, result, delay)
        }
        other => other,
    };
    if changes_world(&method, login, &step) {
        state.changed();
    }
    // 9. The envelope, after the delays asked for (most requests have
    // none, and are answered without the waiting's future).
    let resp = match at_once(state, step) {
        Ok(resp) => resp,
        Err(step) => Box::pin(envelope(state, *step)).await,
    };
    (resp, user)
}

/// Stage 9 for a request with no delay to wait for: its answer, or the
/// step back when [`envelope`] has to wait first.
fn at_once(state: &State, step: Step) -> std::result::Result<Response<Full<Bytes>>, Box<Step>> {
    match step {
        Step::Answer(r) => Ok(r),
        Step::Dispatched(format, name, result, 0)
            if name.is_none_or(|n| state.request_delay_ms(n) == 0)
                && (!matches!(result, Err(Error::Unauthorized(_)))
                    || state.settings().auth_failure_delay.is_zero()) =>
        {
            Ok(enveloped(format, result))
        }
        step => Err(Box::new(step)),
    }
}

/// Stage 1: the request as the API server parses it, which is also what
/// the journal keeps of it: the method, the format and the path below it,
/// and the parameters of the query and the body (or why pve-http-server
/// refuses the body, answered after the fault rules).
fn parse(req: &Request) -> Parsed {
    let decoded = super::percent_decoded(&req.path);
    let split = split_api2(&decoded);
    let path = relative(split);
    let params = body(req, &path, split).map(|map| {
        let query = req
            .query
            .as_deref()
            .map(|q| super::form::decode(q.as_bytes()))
            .unwrap_or_default();
        super::form::merge(map, query)
    });
    Parsed {
        method: req.method.as_str().to_owned(),
        format: split.map(|(format, _)| format.to_owned()),
        path,
        params,
        upload: req.upload.clone(),
    }
}

/// A parsed API request (see [`parse`]).
type Parsed = crate::persist::ApiCall;

/// Whether a request may have changed the world (for the dashboards,
/// [`State::changed`]): a write other than a login, or a fault rule that
/// fired (its hit count moved).
fn changes_world(method: &Method, login: bool, step: &Step) -> bool {
    match step {
        Step::Fault(..) | Step::Dispatched(.., 1..) => true,
        _ => *method != Method::GET && !(*method == Method::POST && login),
    }
}

/// Stage 2: who asks (`None` on the calls that need no credentials), or
/// why not (answered 401 after PVE's delay), from the request's head:
/// its method, path and headers; `rel` is its path below the format.
fn authenticate_request(
    state: &State,
    cluster: &Cluster,
    (method, path, headers): (&Method, &str, &http::HeaderMap),
    rel: &str,
) -> std::result::Result<Option<AuthId>, AuthReject> {
    if needs_no_auth(method, rel) {
        return Ok(None);
    }
    // Only a write is checked for its CSRF token (an upload is exempt).
    let upload = method != Method::GET && upload::is_upload_path(path);
    authenticate(state, cluster, method, headers, upload).map(Some)
}

/// Stage 2 from a request's head, before its body is read, as pveproxy
/// checks credentials before it reads a body: the 401 (after PVE's
/// delay) of a request whose credentials fail, `None` for one that may
/// go on (its body is read then, and [`answer`] authenticates it again
/// at the instant it runs). The calls that need no credentials (the
/// login) go on.
pub async fn refuse_unauthenticated(
    state: &State,
    method: &Method,
    path: &str,
    headers: &http::HeaderMap,
) -> Option<Response<Full<Bytes>>> {
    let decoded = super::percent_decoded(path);
    let rel = relative(split_api2(&decoded));
    if needs_no_auth(method, &rel) {
        return None;
    }
    let now_ms = state.clock().now_millis();
    let checked = {
        let cluster = if let Some(c) = state.try_lock_at(now_ms) {
            c
        } else {
            state.lock_for_request(now_ms).await
        };
        authenticate_request(state, &cluster, (method, path, headers), &rel)
    };
    let AuthReject(msg) = checked.err()?;
    delay(state).await;
    Some(status_only(401, &msg))
}

/// The journal a request goes to, if any: one that can change the world
/// is journaled before it runs and runs alone, at one instant, with its
/// own random draws (see `crate::persist`). Reads are not, nor logins
/// (they change nothing, and their passwords stay out of the journal),
/// except while fault rules are in force, since those count every
/// request.
fn journal<'s>(
    state: &'s State,
    cluster: &Cluster,
    req: &Request,
    rel: &str,
) -> Option<&'s std::sync::Arc<crate::persist::Store>> {
    let store = state.store()?;
    let changes =
        req.method != Method::GET && !(req.method == Method::POST && rel == "/access/ticket");
    (changes || !cluster.faults().rules().is_empty()).then_some(store)
}

/// Stage 9: the answer in PVE's envelope, after the delays of a fault
/// rule and of the latency profile, and PVE's delay after a refused
/// login.
async fn envelope(state: &State, step: Step) -> Response<Full<Bytes>> {
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
        let ms = state.request_delay_ms(name);
        if ms > 0 {
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
    }
    if matches!(result, Err(Error::Unauthorized(_))) {
        let d = state.settings().auth_failure_delay;
        tokio::time::sleep_until(started + d).await;
    }
    enveloped(format, result)
}

/// A handler's result in PVE's envelope.
fn enveloped(format: Format, result: Result<Reply>) -> Response<Full<Bytes>> {
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

/// Stages 3 to 8, the part of a request that reads or changes the world
/// (run under the journal when it can change it): fault rules, the
/// body, routing by the schema, the permission check, validation and the
/// handler.
fn core(
    state: &State,
    cluster: &mut Cluster,
    router: &Router,
    parsed: Parsed,
    who: Option<AuthId>,
    rq: Context,
) -> Step {
    let format = match parsed.format.as_deref() {
        Some("extjs") => Format::Extjs,
        Some("spiceconfig") => Format::SpiceConfig,
        _ => Format::Json,
    };
    let method = Method::from_bytes(parsed.method.as_bytes()).unwrap_or(Method::GET);
    // 3. Fault rules.
    let delay_ms = match fault_rules(cluster, &method, &parsed.path, who.as_ref()) {
        Ok(delay_ms) => delay_ms,
        Err(fault) => return Step::Fault(fault, format),
    };
    // 4. The body, once the format is one PVE answers in.
    let map = match parsed.params {
        Ok(map) => map,
        Err((code, msg)) => return Step::Answer(plain(code, &msg)),
    };
    let call = Call {
        method,
        who,
        map,
        upload: parsed.upload,
        rq,
    };
    let (name, result) = dispatch(state, cluster, router, &parsed.path, call, &mut None);
    Step::Dispatched(format, name, result, delay_ms)
}

/// Stage 3: the fault rules in force. A rule that answers (a status or a
/// dropped connection) ends the request; a delay alone lets it run and
/// holds its answer (milliseconds).
fn fault_rules(
    cluster: &mut Cluster,
    method: &Method,
    rel: &str,
    who: Option<&AuthId>,
) -> std::result::Result<u64, crate::model::faults::RequestFault> {
    if cluster.faults().rules().is_empty() {
        return Ok(0);
    }
    let authid = who.map(ToString::to_string);
    let Some(fault) = cluster
        .faults_mut()
        .on_request(method.as_str(), rel, authid.as_deref())
    else {
        return Ok(0);
    };
    tracing::warn!(rule = fault.rule, method = %method, path = %rel, "injected fault");
    if fault.drop || fault.status.is_some() {
        return Err(fault);
    }
    Ok(fault.delay_ms)
}

/// Stage 4: the format and the body, as pve-http-server checks them: a
/// format it has, content only with POST and PUT, at most [`MAX_BODY`],
/// JSON or a form.
fn body(
    req: &Request,
    rel: &str,
    split: Option<(&str, &str)>,
) -> std::result::Result<BTreeMap<String, Option<Value>>, (u16, String)> {
    match split {
        None => return Err((501, "no such uri".into())),
        Some(("json" | "extjs" | "spiceconfig", _)) => {}
        Some((other, _)) => {
            return Err((501, format!("no formatter for uri {rel}, {other}")));
        }
    }
    if !req.body.is_empty() && req.method != Method::POST && req.method != Method::PUT {
        return Err((
            501,
            format!("Unexpected content for method '{}'", req.method),
        ));
    }
    if req.body.len() > MAX_BODY {
        return Err((501, "for data too large".into()));
    }
    body_params(req)
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
    // Records from before requests were journaled parsed keep the request.
    let parsed = rec
        .api_call()
        .unwrap_or_else(|| parse(&Request::from_call(rec.control_call())));
    let who = rec.who.as_deref().and_then(AuthId::parse);
    let rq = rec.context(state);
    let mut cluster = state.lock_at(rq.now_ms());
    let _ = core(state, &mut cluster, router, parsed, who, rq);
}

/// Runs the seed scenario's `setup` calls as root@pam, in order, on the
/// world just built from it (at start, and again after a reset).
///
/// # Errors
/// The first call that fails: its method, path and PVE's message.
pub fn run_setup(state: &State, router: &Router) -> std::result::Result<(), String> {
    let calls = state.setup_calls();
    let root = AuthId::parse("root@pam");
    for c in calls {
        let parsed = crate::persist::ApiCall {
            method: c.method.clone(),
            format: Some("json".into()),
            path: c.path.clone(),
            params: Ok(c.params.clone()),
            upload: None,
        };
        let now_ms = state.clock().now_millis();
        let rq = state.request_context_at(now_ms);
        let step = {
            let mut cluster = state.lock_at(now_ms);
            core(state, &mut cluster, router, parsed, root.clone(), rq)
        };
        let failed = match step {
            Step::Dispatched(_, _, Err(e), _) => {
                let mut msg = e.to_string().trim_end().to_string();
                for (k, v) in e.errors().into_iter().flatten() {
                    msg.push_str(&format!(" {k}: {}", v.trim_end()));
                }
                Some(msg)
            }
            Step::Dispatched(..) => None,
            Step::Answer(r) => Some(format!("status {}", r.status())),
            Step::Fault(..) => Some("a fault rule answered".into()),
        };
        if let Some(msg) = failed {
            let msg = format!("setup: {} {}: {}", c.method, c.path, msg.trim_end());
            if !c.may_fail {
                return Err(msg);
            }
            tracing::warn!("{msg}");
        }
    }
    if !state.setup_calls().is_empty() {
        state.changed();
    }
    Ok(())
}

/// What a request brings to its handler: the method, who asks, the
/// parameters, an upload's file and the request's context.
pub(crate) struct Call {
    pub(crate) method: Method,
    pub(crate) who: Option<AuthId>,
    pub(crate) map: BTreeMap<String, Value>,
    pub(crate) upload: Option<upload::UploadInfo>,
    pub(crate) rq: Context,
}

/// Stages 5 to 8; also names the PVE method the request reached, for the
/// latency profile. The request's context comes back in `back` when its
/// handler ran (with the draws it made).
pub(crate) fn dispatch(
    state: &State,
    cluster: &mut Cluster,
    router: &Router,
    rel: &str,
    call: Call,
    back: &mut Option<Context>,
) -> (Option<&'static str>, Result<Reply>) {
    let Call {
        method,
        who,
        map,
        upload,
        rq,
    } = call;
    // A read asked again without parameters of its own routes and
    // validates as it did before (see `RouteCache`). Writes are not kept:
    // most name a guest or task of their own once (a create, a start, a
    // delete), and would only push the polled reads out.
    let version = state.settings().version;
    let cacheable = map.is_empty() && method == Method::GET;
    let hit = cacheable
        .then(|| ROUTES.with(|r| r.borrow().get(version, &method, rel)))
        .flatten();
    // The parameters: the cache's (checked already) or the request's.
    let (endpoint, map) = match hit {
        Some((endpoint, map)) => (endpoint, Ok(map)),
        None => {
            let segs = path_segments(rel);
            if segs.is_empty()
                && let Some(handler) = router.handler(&method, "/")
            {
                // The API root is not in the schema, but PVE answers it.
                let ctx = Ctx {
                    state,
                    who,
                    params: Params::default(),
                    upload: None,
                    rq: std::cell::RefCell::new(rq),
                    cluster: std::cell::RefCell::new(cluster),
                };
                return (None, handler(&ctx));
            }
            // 5. Route by the schema.
            match route(state, &method, rel, &segs, map) {
                Ok((endpoint, map)) => (endpoint, Err(map)),
                Err(e) => return (None, Err(e)),
            }
        }
    };
    let name = Some(endpoint.name.as_str());
    let mut rq = rq;
    if let Some(prefix) = cluster.datacenter().get("mac_prefix") {
        rq.set_mac_prefix(prefix);
    }
    let result = (|| {
        // 6. Permissions.
        let given = match &map {
            Ok(checked) => &**checked,
            Err(map) => map,
        };
        permission(cluster, rel, endpoint, who.as_ref(), given)?;
        let map = match map {
            Ok(checked) => checked,
            Err(mut map) => {
                // 7. Validation (a single value of a list parameter is a
                // list of one first, as PVE's handler makes it).
                crate::spec::validate::normalize(endpoint, &mut map);
                if map.contains_key("cpu") {
                    // A VM's `cpu` names a model of the release's QEMU or
                    // of cpu-models.conf.
                    let context = crate::spec::registered::CpuContext {
                        models: crate::model::node_hw::catalog::all_cpu_model_names(version),
                        custom: cluster.cpu_models().names(),
                        qemu_server_9_2: version == crate::model::PveVersion::V9_2,
                    };
                    crate::spec::registered::with_cpu_context(context, || {
                        crate::spec::validate::validate(endpoint, &map)
                    })
                } else {
                    crate::spec::validate::validate(endpoint, &map)
                }
                .map_err(Error::Invalid)?;
                let map = std::sync::Arc::new(map);
                if cacheable {
                    ROUTES.with(|r| r.borrow_mut().put(version, &method, rel, endpoint, &map));
                }
                map
            }
        };
        // 8. The handler, or what the schema says of an endpoint without one.
        let ctx = Ctx {
            state,
            who,
            params: Params::shared(map),
            upload,
            rq: std::cell::RefCell::new(rq),
            cluster: std::cell::RefCell::new(cluster),
        };
        let out = match router.handler(&method, &endpoint.path) {
            Some(handler) => handler(&ctx),
            None => fallback(endpoint, &format!("/api2/json{rel}")),
        };
        *back = Some(ctx.rq.into_inner());
        out
    })();
    (name, result)
}

thread_local! {
    /// Each worker's [`RouteCache`].
    static ROUTES: std::cell::RefCell<RouteCache> = std::cell::RefCell::new(RouteCache::default());
}

/// The routes of the reads (GET) asked without parameters of their own (the
/// reads polled hardest, such as a VM's `status/current`): the schema's
/// endpoint and the path's parameters, normalized and found valid. What a
/// path routes to and whether its own parameters are valid depends on
/// the release, the method and the path alone, so a path asked again
/// skips stages 5 and 7; permissions are checked every time. Only
/// successes are kept, and at most [`RouteCache::MAX`] paths (the cache
/// starts over when full).
#[derive(Default)]
struct RouteCache {
    /// Per release and method, the paths (looked up by `&str`).
    routes: std::collections::HashMap<(crate::model::PveVersion, Method), Routes, PathHash>,
    len: usize,
}

/// The paths of one release and method in a [`RouteCache`].
type Routes =
    std::collections::HashMap<String, (&'static crate::spec::Endpoint, SharedParams), PathHash>;

/// A path's parameters, checked once and shared by the requests that ask
/// it again.
type SharedParams = std::sync::Arc<BTreeMap<String, Value>>;

/// The hash of a [`RouteCache`]: its keys are the clients' paths, but
/// the cache is bounded ([`RouteCache::MAX`]) and starts over when full,
/// so a fast hash without a random seed is enough.
type PathHash = foldhash::fast::FixedState;

impl RouteCache {
    const MAX: usize = 4096;

    fn get(
        &self,
        version: crate::model::PveVersion,
        method: &Method,
        rel: &str,
    ) -> Option<(&'static crate::spec::Endpoint, SharedParams)> {
        let (endpoint, map) = self.routes.get(&(version, method.clone()))?.get(rel)?;
        Some((*endpoint, map.clone()))
    }

    fn put(
        &mut self,
        version: crate::model::PveVersion,
        method: &Method,
        rel: &str,
        endpoint: &'static crate::spec::Endpoint,
        map: &SharedParams,
    ) {
        if self.len >= Self::MAX {
            self.routes.clear();
            self.len = 0;
        }
        let paths = self.routes.entry((version, method.clone())).or_default();
        if paths
            .insert(rel.to_owned(), (endpoint, map.clone()))
            .is_none()
        {
            self.len += 1;
        }
    }
}

/// The path segments as PVE's router splits them: after
/// `/nodes/{node}/storage/{storage}/content` the rest is one segment,
/// because volume IDs may contain a slash (`fragmentDelimiter => ''` in
/// pve-storage `API2/Storage/Status.pm`); so is the rest after a
/// firewall IP set's name, a network (`10.0.0.0/8`) (pve-firewall
/// `API2/Firewall/IPSet.pm`).
pub(crate) fn path_segments(rel: &str) -> Vec<Cow<'_, str>> {
    let mut segs: Vec<Cow<'_, str>> = rel
        .split('/')
        .filter(|s| !s.is_empty())
        .map(Cow::Borrowed)
        .collect();
    let join_from = |segs: &mut Vec<Cow<'_, str>>, at: usize| {
        let rest = segs.split_off(at).join("/");
        segs.push(Cow::Owned(rest));
    };
    if segs.len() > 6 && segs[0] == "nodes" && segs[2] == "storage" && segs[4] == "content" {
        join_from(&mut segs, 5);
    } else if segs.len() > 5 && segs[0] == "cluster" && segs[1] == "firewall" && segs[2] == "ipset"
    {
        join_from(&mut segs, 4);
    } else if segs.len() > 8
        && segs[0] == "nodes"
        && matches!(&*segs[2], "qemu" | "lxc")
        && segs[4] == "firewall"
        && segs[5] == "ipset"
    {
        join_from(&mut segs, 7);
    }
    segs
}

/// Stage 5: the schema's endpoint for the method and path, and the
/// request's parameters (query and body, parsed, and the path's own)
/// merged.
fn route(
    state: &State,
    method: &Method,
    rel: &str,
    segs: &[Cow<'_, str>],
    mut map: BTreeMap<String, Value>,
) -> Result<(&'static crate::spec::Endpoint, BTreeMap<String, Value>)> {
    let spec = crate::spec::spec(state.settings().version);
    let Some(found) = spec.find(method.as_str(), segs) else {
        return Err(Error::NotImplemented(format!(
            "Method '{method} {rel}' not implemented"
        )));
    };
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
    Ok((found.endpoint, map))
}

/// Stage 6: tokens where the schema allows them, the schema's permission
/// check, and the node a call is proxied to.
fn permission(
    cluster: &Cluster,
    rel: &str,
    endpoint: &crate::spec::Endpoint,
    who: Option<&AuthId>,
    map: &BTreeMap<String, Value>,
) -> Result<()> {
    if let Some(who) = who {
        if !endpoint.allowtoken && who.is_token() {
            return Err(Error::Forbidden(format!(
                "Permission check failed (URI '{rel}' not available with API token, need proper ticket.\n)"
            )));
        }
        super::perm::check(cluster.access(), who, &endpoint.permissions, map)?;
    }
    if endpoint.proxyto.as_deref() == Some("node")
        && let Some(node) = map.get("node").map(params::value_text)
    {
        cluster.nodes().reach(&node)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api2_paths() {
        assert_eq!(split_api2("/api2/json/version"), Some(("json", "/version")));
        assert_eq!(split_api2("/api2/json"), Some(("json", "")));
        assert_eq!(split_api2("/api2//extjs/nodes"), Some(("extjs", "/nodes")));
        assert_eq!(split_api2("/api2/"), None);
        assert_eq!(split_api2("/api2/JSON/version"), None);
    }

    fn state() -> State {
        let settings = crate::state::Settings {
            version: crate::model::PveVersion::default(),
            root_password: "password".into(),
            auth_failure_delay: Duration::ZERO,
            fingerprint: None,
            proxy_pem: None,
            pki: Default::default(),
            served: None,
            random_seed: 1,
        };
        State::new(
            crate::model::scenario::Scenario::default_single_node(),
            settings,
            crate::clock::Clock::manual(1_795_000_000),
            crate::state::Latency::default(),
        )
        .expect("the default scenario")
    }

    fn request(state: &State, method: Method, path: &str, body: &str) -> Request {
        let now = state.clock().now();
        let mut headers = http::HeaderMap::new();
        let ticket = state.keys().ticket("root@pam", now);
        headers.insert(
            http::header::COOKIE,
            format!("PVEAuthCookie={ticket}")
                .parse()
                .expect("in the test"),
        );
        headers.insert(
            "CSRFPreventionToken",
            state
                .keys()
                .csrf("root@pam", now)
                .parse()
                .expect("in the test"),
        );
        headers.insert(
            http::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded"
                .parse()
                .expect("in the test"),
        );
        Request {
            method,
            path: path.into(),
            query: None,
            headers,
            body: Bytes::from(body.to_string()),
            upload: None,
        }
    }

    #[tokio::test]
    async fn a_request_waits_for_the_model_and_goes_on_once_it_is_released() {
        let state = state();
        let router = Router::default();
        let held = state.lock_at(state.clock().now_millis());
        let req = request(&state, Method::GET, "/api2/json/version", "");
        let mut answer = std::pin::pin!(handle(&state, &router, req));
        // While another holds the model, the request waits.
        let wait = tokio::time::timeout(Duration::from_millis(50), answer.as_mut()).await;
        assert!(wait.is_err(), "answered while the model was held");
        assert_eq!(state.waiting_for_model(), 1);
        drop(held);
        let resp = tokio::time::timeout(Duration::from_secs(5), answer)
            .await
            .expect("answered once the model is released");
        assert_eq!(resp.status(), 200);
        assert_eq!(state.waiting_for_model(), 0);
    }

    #[tokio::test]
    async fn a_request_dropped_while_it_waits_for_the_model_is_not_counted_any_more() {
        let state = state();
        let router = Router::default();
        let held = state.lock_at(state.clock().now_millis());
        let req = request(&state, Method::GET, "/api2/json/version", "");
        let wait =
            tokio::time::timeout(Duration::from_millis(50), handle(&state, &router, req)).await;
        assert!(wait.is_err(), "answered while the model was held");
        assert_eq!(state.waiting_for_model(), 0);
        drop(held);
        // The next request is not held up.
        let req = request(&state, Method::GET, "/api2/json/version", "");
        let resp = tokio::time::timeout(Duration::from_secs(5), handle(&state, &router, req))
            .await
            .expect("answered");
        assert_eq!(resp.status(), 200);
    }

    #[tokio::test]
    async fn only_reads_are_kept_by_the_route_cache() {
        let s = state();
        let kept = || ROUTES.with(|r| r.borrow().len);
        let root = |m: Method, p: &str, body: &str| request(&s, m, p, body);
        let create = root(
            Method::POST,
            "/api2/json/nodes/pve/qemu",
            "vmid=4242&memory=512",
        );
        assert_eq!(answer(&s, create).await.0, 200);
        let before = kept();
        let start = root(
            Method::POST,
            "/api2/json/nodes/pve/qemu/4242/status/start",
            "",
        );
        assert_eq!(answer(&s, start).await.0, 200);
        assert_eq!(kept(), before, "a write without parameters is not kept");
        let status = root(
            Method::GET,
            "/api2/json/nodes/pve/qemu/4242/status/current",
            "",
        );
        assert_eq!(answer(&s, status).await.0, 200);
        assert_eq!(kept(), before + 1, "a read is kept");
    }

    /// Runs one request and counts the times it took the model's lock.
    async fn locks(state: &State, req: Request) -> (u16, usize) {
        let router = Router::default();
        let before = crate::state::LOCKS.with(std::cell::Cell::get);
        let resp = handle(state, &router, req).await;
        let after = crate::state::LOCKS.with(std::cell::Cell::get);
        (resp.status().as_u16(), after - before)
    }

    async fn answer(state: &State, req: Request) -> (u16, String) {
        let router = Router::default();
        let resp = handle(state, &router, req).await;
        let status = resp.status().as_u16();
        let body = http_body_util::BodyExt::collect(resp.into_body())
            .await
            .map(|b| String::from_utf8_lossy(&b.to_bytes()).into_owned())
            .unwrap_or_default();
        (status, body)
    }

    #[tokio::test]
    async fn a_path_asked_again_routes_as_before_and_is_still_checked() {
        let s = state();
        let root = |m: Method, p: &str, body: &str| request(&s, m, p, body);
        let create = root(
            Method::POST,
            "/api2/json/nodes/pve/qemu",
            "vmid=100&memory=512",
        );
        assert_eq!(answer(&s, create).await.0, 200);
        let status = "/api2/json/nodes/pve/qemu/100/status/current";
        let first = answer(&s, root(Method::GET, status, "")).await;
        let again = answer(&s, root(Method::GET, status, "")).await;
        assert_eq!(first.0, 200);
        assert_eq!(again, first);
        // A refusal by the schema is not kept: it is refused again.
        let bad = "/api2/json/nodes/pve/qemu/1/status/current";
        for _ in 0..2 {
            let (code, body) = answer(&s, root(Method::GET, bad, "")).await;
            assert_eq!(code, 400, "{body}");
        }
        // Permissions are checked on a path the cache knows.
        let user = root(Method::POST, "/api2/json/access/users", "userid=ci@pve");
        assert_eq!(answer(&s, user).await.0, 200);
        let mut other = root(Method::GET, status, "");
        let ticket = s.keys().ticket("ci@pve", s.clock().now());
        other.headers.insert(
            http::header::COOKIE,
            format!("PVEAuthCookie={ticket}")
                .parse()
                .expect("in the test"),
        );
        assert_eq!(answer(&s, other).await.0, 403);
        // And the VM's state is read each time.
        let start = root(
            Method::POST,
            "/api2/json/nodes/pve/qemu/100/status/start",
            "",
        );
        assert_eq!(answer(&s, start).await.0, 200);
        assert!(first.1.contains("\"status\":\"stopped\""), "{}", first.1);
        let after = answer(&s, root(Method::GET, status, "")).await;
        assert!(after.1.contains("\"status\":\"running\""), "{}", after.1);
    }

    #[tokio::test]
    async fn a_request_locks_the_model_once() {
        let s = state();
        let get = |p: &str| request(&s, Method::GET, p, "");
        assert_eq!(locks(&s, get("/api2/json/nodes/pve/qemu")).await, (200, 1));
        assert_eq!(
            locks(&s, get("/api2/json/cluster/resources")).await,
            (200, 1)
        );
        let create = request(
            &s,
            Method::POST,
            "/api2/json/nodes/pve/qemu",
            "vmid=100&memory=512",
        );
        assert_eq!(locks(&s, create).await, (200, 1));
        let start = request(
            &s,
            Method::POST,
            "/api2/json/nodes/pve/qemu/100/status/start",
            "",
        );
        assert_eq!(locks(&s, start).await, (200, 1));
        assert_eq!(
            locks(&s, get("/api2/json/nodes/pve/qemu/100/status/current")).await,
            (200, 1)
        );
        // Refused ones too: by the schema, by a permission, by the login.
        let bad = request(&s, Method::POST, "/api2/json/nodes/pve/qemu", "vmid=x");
        assert_eq!(locks(&s, bad).await, (400, 1));
        assert_eq!(locks(&s, get("/api2/json/nodes/nowhere/qemu")).await.1, 1);
        let mut anonymous = get("/api2/json/version");
        anonymous.headers.remove(http::header::COOKIE);
        assert_eq!(locks(&s, anonymous).await, (401, 1));
    }
}
