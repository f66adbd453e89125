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

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Response};
use http_body_util::Full;
use serde_json::Value;

use super::fallback::fallback;
use super::*;
use crate::model::{AuthId, Context, Error, Result};
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
}
