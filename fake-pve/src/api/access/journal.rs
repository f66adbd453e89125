//! What the journal keeps of a request that sets or checks a password:
//! the password's hash in its place, never the password (see
//! [`crate::model::access::shadow::Given`]).
//!
//! A password set (`POST /access/users`, `PUT /access/password`) is
//! journaled as the hash the handler keeps (salted with the server's key
//! and the user, so the same). A password checked (the confirmation of
//! `PUT /access/password`, the `password` of the TFA changes, a login
//! journaled while fault rules are in force) is journaled as
//! [`shadow::check_form`] of what it is checked against, looked up with
//! the model as the request will find it, so that a replay reaches the
//! same verdict. A value the schema or the handler refuses for its length
//! is journaled as as many `*`, refused again alike. A login's ticket
//! (a renewal) and second-factor answer are kept as they came. The
//! cluster's root password a join (`POST /cluster/config/join`) is given
//! is journaled as as many `*`: the journal keeps how the join ended.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::model::AuthId;
use crate::model::access::shadow;
use crate::persist::{ApiCall, Call};
use crate::state::State;

/// Replaces the passwords of `call` (by `who`, run at `now_ms`) with the
/// forms the journal keeps, and names the parameters replaced.
pub(crate) fn seal(
    state: &State,
    call: &mut Call,
    who: Option<&AuthId>,
    now_ms: i64,
) -> Vec<String> {
    let Call::Api(ApiCall {
        method,
        path,
        params: Ok(params),
        ..
    }) = call
    else {
        return Vec::new();
    };
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let me = who.map(|w| w.userid().to_string()).unwrap_or_default();
    let mut sealed = Vec::new();
    match (method.as_str(), segs.as_slice()) {
        ("POST", ["access", "users"]) => {
            let userid = text(params, "userid");
            set(state, params, "password", &userid, &mut sealed);
        }
        ("PUT", ["access", "password"]) => {
            let userid = text(params, "userid");
            set(state, params, "password", &userid, &mut sealed);
            // Checked against the caller's own password.
            let stored =
                state.peek(|c| c.access().users().get(&me).and_then(|u| u.password.clone()));
            check(
                params,
                "confirmation-password",
                stored.as_deref(),
                Some(5..=64),
                &mut sealed,
            );
        }
        ("POST", ["access", "tfa", _]) | ("PUT" | "DELETE", ["access", "tfa", _, _]) => {
            let stored = state.peek(|c| c.access().credential(&me).map(str::to_owned));
            check(
                params,
                "password",
                stored.as_deref(),
                Some(5..=64),
                &mut sealed,
            );
        }
        ("POST", ["cluster", "config", "join"]) => {
            // The cluster's root password: kept as as many `*` (refused
            // again alike for its length); its replay starts no join.
            if let Some(pw) = password_text(params, "password") {
                params.insert("password".into(), masked(&pw));
                sealed.push("password".into());
            }
        }
        ("POST", ["access", "ticket"]) => {
            if params.contains_key("tfa-challenge") {
                // The password is the second factor's answer.
                return sealed;
            }
            let Some(pw) = password_text(params, "password") else {
                return sealed;
            };
            let now = now_ms.div_euclid(1000);
            if pw.starts_with("PVE:") && state.keys().verify_ticket(&pw, now).is_some() {
                // A ticket renewed.
                return sealed;
            }
            let username = text(params, "username");
            let userid = match params.get("realm").and_then(Value::as_str) {
                Some(r) => format!("{username}@{r}"),
                None => username,
            };
            let stored = state.peek(|c| c.access().credential(&userid).map(str::to_owned));
            check(params, "password", stored.as_deref(), None, &mut sealed);
        }
        _ => {}
    }
    sealed
}

fn text(params: &BTreeMap<String, Value>, name: &str) -> String {
    params
        .get(name)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// A password parameter as the handler reads it: text, or a JSON number's
/// text (a JSON body may send `"password": 12345678`).
fn password_text(params: &BTreeMap<String, Value>, name: &str) -> Option<String> {
    match params.get(name)? {
        Value::String(s) => Some(s.clone()),
        n @ Value::Number(_) => Some(n.to_string()),
        _ => None,
    }
}

/// The value refused for its length, as as many `*`: refused again alike.
fn masked(value: &str) -> Value {
    Value::String("*".repeat(value.chars().count()))
}

/// A password set for `userid`: its hash when the handler takes it (8 to
/// 64 characters; the hash has 63).
fn set(
    state: &State,
    params: &mut BTreeMap<String, Value>,
    name: &str,
    userid: &str,
    sealed: &mut Vec<String>,
) {
    let Some(pw) = password_text(params, name) else {
        return;
    };
    let value = if (8..=64).contains(&pw.chars().count()) {
        sealed.push(name.to_string());
        let salt = shadow::keyed_salt(&state.keys().secret(), userid, &pw);
        Value::String(shadow::hash(&pw, &salt))
    } else {
        masked(&pw)
    };
    params.insert(name.to_string(), value);
}

/// A password checked against `stored`: its [`shadow::check_form`] (43
/// characters) when it has a length the schema takes.
fn check(
    params: &mut BTreeMap<String, Value>,
    name: &str,
    stored: Option<&str>,
    bounds: Option<std::ops::RangeInclusive<usize>>,
    sealed: &mut Vec<String>,
) {
    let Some(pw) = password_text(params, name) else {
        return;
    };
    let value = if bounds.is_none_or(|b| b.contains(&pw.chars().count())) {
        sealed.push(name.to_string());
        Value::String(shadow::check_form(stored, &pw))
    } else {
        masked(&pw)
    };
    params.insert(name.to_string(), value);
}
