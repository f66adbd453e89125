//! `/_fake/...`: everything that is not PVE. Health, reset, state dumps,
//! seeding, the clock and task durations, for root@pam only.

use bytes::Bytes;
use http::{Method, Response};
use http_body_util::Full;
use serde_json::{Value, json};

use crate::api::{self, Format, Params, Reply, Request};
use crate::model::faults::FaultRule;
use crate::model::scenario::Scenario;
use crate::model::{AuthId, Context, Error, Result};
use crate::state::{Latency, State};

/// Answers one `/_fake` request.
pub async fn handle(state: &State, req: Request) -> Response<Full<Bytes>> {
    let who = match api::authenticate(state, &req.method, &req.headers, false) {
        Ok(who) => who,
        Err(api::AuthReject(msg)) => {
            api::delay(state).await;
            return api::status_only(401, &msg);
        }
    };
    if who.userid() != "root@pam" {
        return api::failure(Format::Json, &Error::permission("/_fake", &["root@pam"]));
    }
    let path = req.path.trim_end_matches('/').to_string();
    if req.method == Method::GET && path == "/_fake/openapi.json" {
        // Served bare, not in the `data` envelope, for generic tools.
        return api::raw_json(openapi(state.settings().version));
    }
    let result = match state.store() {
        Some(store) if req.method != Method::GET => {
            // Moving the clock runs at the moved time, not a fixed one.
            let journaled = store.journaled(
                state,
                crate::persist::Kind::Control,
                &req,
                Some(who.to_string()),
                path == "/_fake/clock",
                |rq| route(state, &req, &path, &who, &rq),
            );
            match journaled {
                Ok(r) => r,
                Err(e) => return api::failure(Format::Json, &e),
            }
        }
        _ => route(state, &req, &path, &who, &state.request_context()),
    };
    match result {
        Ok(reply) => api::success(Format::Json, reply),
        Err(e) => api::failure(Format::Json, &e),
    }
}

/// Runs a journaled control request again, as it ran.
pub fn replay(state: &State, rec: &crate::persist::Record) {
    let req = rec.request();
    let path = req.path.trim_end_matches('/');
    let who = rec
        .who
        .as_deref()
        .and_then(AuthId::parse)
        .unwrap_or_else(|| AuthId::parse("root@pam").expect("root@pam parses"));
    let _ = route(state, &req, path, &who, &rec.context(state));
}

fn route(state: &State, req: &Request, path: &str, _who: &AuthId, rq: &Context) -> Result<Reply> {
    match (req.method.clone(), path) {
        (Method::GET, "/_fake/health") => Ok(health(state, rq).into()),
        (Method::POST, "/_fake/reset") => {
            state.reset(rq.now());
            Ok(Value::Null.into())
        }
        (Method::GET, "/_fake/state") => Ok(serde_json::to_value(state.export())
            .unwrap_or(Value::Null)
            .into()),
        (Method::PUT, "/_fake/state") => {
            let text = std::str::from_utf8(&req.body)
                .map_err(|_| Error::invalid("state", "the state is not UTF-8 text"))?;
            let doc = crate::model::world::parse(text, "<request body>")
                .map_err(|e| Error::invalid("state", e.reason))?;
            state.import(doc).map_err(|e| Error::invalid("state", e))?;
            Ok(health(state, rq).into())
        }
        (Method::GET, "/_fake/checkpoints") => Ok(json!(state.list_checkpoints()).into()),
        (Method::POST, "/_fake/checkpoints") => {
            let p = params(req)?;
            let name = p.str("name").ok_or_else(|| {
                Error::invalid("name", "property is missing and it is not optional")
            })?;
            state
                .checkpoint(&name)
                .map_err(|e| Error::invalid("name", e))?;
            Ok(json!(name).into())
        }
        (Method::POST, p) if p.starts_with("/_fake/checkpoints/") && p.ends_with("/restore") => {
            let name = p
                .trim_start_matches("/_fake/checkpoints/")
                .trim_end_matches("/restore");
            state.restore(name).map_err(Error::failed)?;
            Ok(health(state, rq).into())
        }
        (Method::DELETE, p) if p.starts_with("/_fake/checkpoints/") => {
            let name = p.trim_start_matches("/_fake/checkpoints/");
            state.drop_checkpoint(name).map_err(Error::failed)?;
            Ok(Value::Null.into())
        }
        (Method::POST, "/_fake/seed") => seed(state, rq, req),
        (Method::GET, "/_fake/clock") => Ok(state.clock().view().into()),
        (Method::POST, "/_fake/clock") => {
            let p = params(req)?;
            let secs = p.int("advance", Some(0), None)?.unwrap_or(0);
            let ms = p.int("advance_ms", Some(0), None)?.unwrap_or(0);
            state
                .clock()
                .advance_millis(secs.saturating_mul(1000).saturating_add(ms));
            state.with(|_| ());
            Ok(state.clock().view().into())
        }
        (Method::GET, "/_fake/faults") => Ok(json!(state.faults(|f| f.rules.clone())).into()),
        (Method::POST, "/_fake/faults") => add_faults(state, req),
        (Method::DELETE, "/_fake/faults") => {
            state.faults(crate::model::faults::Faults::clear);
            Ok(Value::Null.into())
        }
        (Method::DELETE, p) if p.starts_with("/_fake/faults/") => {
            let id = p.trim_start_matches("/_fake/faults/");
            match id.parse::<u64>() {
                Ok(id) if state.faults(|f| f.remove(id)) => Ok(Value::Null.into()),
                _ => Err(Error::not_found(format!("no such fault rule '{id}'"))),
            }
        }
        (Method::GET, "/_fake/latency") => Ok(json!(state.latency()).into()),
        (Method::PUT, "/_fake/latency") => {
            let v: Value = serde_json::from_slice(&req.body).map_err(|e| {
                Error::invalid("latency", format!("expected a JSON latency profile: {e}"))
            })?;
            let l = Latency::from_json(v).map_err(|e| Error::invalid("latency", e))?;
            state.set_latency(l);
            Ok(json!(state.latency()).into())
        }
        (Method::GET, "/_fake/downloads") => {
            Ok(json!(state.at(rq.now_ms(), |c| c.storages().volumes().downloads.clone())).into())
        }
        (Method::PUT, "/_fake/downloads") => put_downloads(state, rq, req),
        (Method::GET, p) if p.starts_with("/_fake/guests/") => {
            let vmid = guest_vmid(state, rq, p)?;
            Ok(state
                .at(rq.now_ms(), |c| {
                    c.leaving_no_trace(vmid, |c| {
                        serde_json::to_value(c.guest_mut(vmid)).unwrap_or(Value::Null)
                    })
                })
                .into())
        }
        (Method::PUT, p) if p.starts_with("/_fake/guests/") => put_guest(state, rq, req, p),
        (m, p) => Err(Error::NotImplemented(format!(
            "Method '{m} {p}' not implemented"
        ))),
    }
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
    let mut map = api::body_params(req).map_err(|(code, msg)| match code {
        500 => Error::Failed(msg),
        _ => Error::NotImplemented(msg),
    })?;
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
            "nodes": c.nodes.len(),
            "vms": c.guests().len(),
            "tasks": c.tasks().len(),
            "time": state.clock().now(),
        })
    })
}

/// `POST /_fake/faults`: one rule or a list of rules (JSON); answers the
/// ids given.
fn add_faults(state: &State, req: &Request) -> Result<Reply> {
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

/// `PUT /_fake/downloads`: replaces the table of known URLs with a JSON
/// list of `{url, size, checksum, checksum-algorithm, filename, mimetype,
/// insecure, fail}`.
fn put_downloads(state: &State, rq: &Context, req: &Request) -> Result<Reply> {
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
        c.storages_mut().volumes_mut().downloads.clone_from(&list)
    });
    Ok(json!(list).into())
}

/// `POST /_fake/seed`: the body is a scenario (YAML or JSON) or a state
/// document (`GET /_fake/state`).
fn seed(state: &State, rq: &Context, req: &Request) -> Result<Reply> {
    let text = std::str::from_utf8(&req.body)
        .map_err(|_| Error::invalid("scenario", "the scenario is not UTF-8 text"))?;
    let scenario = Scenario::parse(text, "<request body>")
        .map_err(|e| Error::invalid("scenario", e.to_string()))?;
    state
        .load(scenario, rq.now())
        .map_err(|e| Error::invalid("scenario", e.to_string()))?;
    Ok(health(state, rq).into())
}

/// The VMID of `/_fake/guests/{vmid}`, which must exist.
fn guest_vmid(state: &State, rq: &Context, path: &str) -> Result<u32> {
    let id = path.trim_start_matches("/_fake/guests/");
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
fn put_guest(state: &State, rq: &Context, req: &Request, path: &str) -> Result<Reply> {
    let vmid = guest_vmid(state, rq, path)?;
    let body: Value = serde_json::from_slice(&req.body)
        .map_err(|e| Error::invalid("guest", format!("expected a JSON object: {e}")))?;
    let Value::Object(changes) = body else {
        return Err(Error::invalid("guest", "expected a JSON object"));
    };
    state.at(rq.now_ms(), |c| {
        let guest = c.guest_mut(vmid);
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
