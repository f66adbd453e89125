//! `/_openid/...`: the OpenID Connect provider fake-pve emulates for its
//! `openid` realms (`model::access::openid::provider`), over HTTP and
//! without authentication, as a browser and a relying party reach one:
//!
//! - `GET /_openid/.well-known/openid-configuration`: the discovery
//!   document, for the issuer `https://<Host>/_openid` (`http` when the
//!   request says so in `X-Forwarded-Proto`);
//! - `GET /_openid/authorize?...`: the login form (or, for a request it
//!   refuses, a redirect with `error` back to the client);
//!   `POST /_openid/authorize?...` with `username` and `password`: a
//!   redirect (303) to the `redirect_uri` with `code` and `state`;
//! - `POST /_openid/token`: the code exchanged for an access token and
//!   an ID token (client credentials by HTTP Basic or in the form);
//! - `GET /_openid/userinfo` with `Authorization: Bearer ...`: the
//!   user's claims;
//! - `GET /_openid/jwks`: the key the ID tokens are signed with.

use axum::extract::{RawQuery, State as Ext};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine as _;
use bytes::Bytes;
use http::{HeaderMap, StatusCode, header};
use serde_json::{Value, json};

use crate::model::access::openid::provider::{
    self, AuthRequest, Metadata, OAuthError, TokenRequest,
};
use crate::state::State;

/// The provider's routes, for paths below [`provider::PATH`].
pub fn routes(state: State) -> axum::Router {
    axum::Router::new()
        .route("/.well-known/openid-configuration", get(discovery))
        .route("/authorize", get(authorize_form).post(authorize_login))
        .route("/token", axum::routing::post(token))
        .route("/userinfo", get(userinfo).post(userinfo))
        .route("/jwks", get(jwks))
        .with_state(state)
}

fn json_answer(status: StatusCode, v: &Value) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        v.to_string(),
    )
        .into_response()
}

/// The issuer a request reaches: its host, below [`provider::PATH`].
fn issuer(headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    let proto = headers
        .get("x-forwarded-proto")
        .and_then(|h| h.to_str().ok())
        .filter(|p| *p == "http")
        .unwrap_or("https");
    format!("{proto}://{host}{}", provider::PATH)
}

async fn discovery(headers: HeaderMap) -> Response {
    json_answer(StatusCode::OK, &Metadata::of(&issuer(&headers)).document())
}

async fn jwks() -> Response {
    json_answer(StatusCode::OK, &provider::jwks())
}

fn redirect(to: &str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, to.to_string())]).into_response()
}

/// A refused authorization request: back to the client with `error` when
/// the client and its redirect URI are known, else shown.
fn refused(state: &State, req: &AuthRequest, e: &OAuthError) -> Response {
    match state.with(|c| req.error_redirect(c.access().realms(), e)) {
        Some(to) => redirect(&to),
        None => (
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            format!("{}: {}\n", e.code, e.description),
        )
            .into_response(),
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The login form: it posts `username` and `password` to the same URL.
fn form(query: &str, message: Option<&str>, status: StatusCode) -> Response {
    let note = message
        .map(|m| format!("<p class=\"error\">{}</p>\n", escape(m)))
        .unwrap_or_default();
    let page = format!(
        "<!DOCTYPE html>\n<html><head><title>Sign in - fake-pve OpenID provider</title></head>\n\
         <body>\n<h1>Sign in</h1>\n{note}<form method=\"post\" action=\"authorize?{}\">\n\
         <label>Username <input name=\"username\" autocomplete=\"username\"></label>\n\
         <label>Password <input name=\"password\" type=\"password\"></label>\n\
         <button type=\"submit\">Sign in</button>\n</form>\n</body></html>\n",
        escape(query)
    );
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        page,
    )
        .into_response()
}

async fn authorize_form(Ext(state): Ext<State>, RawQuery(query): RawQuery) -> Response {
    let query = query.unwrap_or_default();
    let req = AuthRequest::parse(&query);
    if let Err(e) = state.with(|c| req.check(c.access().realms())) {
        return refused(&state, &req, &e);
    }
    if req.prompt_none() {
        let e = OAuthError {
            code: "login_required",
            description: "the user is not signed in".into(),
        };
        return refused(&state, &req, &e);
    }
    form(&query, None, StatusCode::OK)
}

fn form_fields(body: &[u8]) -> std::collections::BTreeMap<String, String> {
    form_urlencoded::parse(body)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

async fn authorize_login(
    Ext(state): Ext<State>,
    RawQuery(query): RawQuery,
    body: Bytes,
) -> Response {
    let query = query.unwrap_or_default();
    let req = AuthRequest::parse(&query);
    let fields = form_fields(&body);
    let user = fields.get("username").map_or("", String::as_str);
    let password = fields.get("password").map_or("", String::as_str);
    let key = state.keys().secret();
    let now = state.clock().now();
    match state.with(|c| req.grant(c.access().realms(), &key, user, password, now)) {
        Ok(to) => redirect(&to),
        Err(e) if e.code == "access_denied" => {
            form(&query, Some(&e.description), StatusCode::UNAUTHORIZED)
        }
        Err(e) => refused(&state, &req, &e),
    }
}

/// The client's credentials of HTTP Basic: both parts form-encoded.
fn basic(headers: &HeaderMap) -> Option<(String, String)> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let encoded = value.strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (id, secret) = text.split_once(':')?;
    let dec = |s: &str| {
        percent_encoding::percent_decode_str(&s.replace('+', " "))
            .decode_utf8_lossy()
            .into_owned()
    };
    Some((dec(id), dec(secret)))
}

async fn token(Ext(state): Ext<State>, headers: HeaderMap, body: Bytes) -> Response {
    let f = form_fields(&body);
    let field = |k: &str| f.get(k).cloned();
    let (client_id, client_secret) = match basic(&headers) {
        Some((id, secret)) => (id, Some(secret)),
        None => (
            field("client_id").unwrap_or_default(),
            field("client_secret"),
        ),
    };
    let req = TokenRequest {
        grant_type: field("grant_type").unwrap_or_default(),
        code: field("code").unwrap_or_default(),
        redirect_uri: field("redirect_uri").unwrap_or_default(),
        code_verifier: field("code_verifier"),
        client_id,
        client_secret,
    };
    let key = state.keys().secret();
    let now = state.clock().now();
    let issuer = issuer(&headers);
    match state.with(|c| provider::token(c.access().realms(), &key, &issuer, &req, now)) {
        Ok(t) => json_answer(StatusCode::OK, &t.document()),
        Err(e) => {
            let status = if e.code == "invalid_client" {
                StatusCode::UNAUTHORIZED
            } else {
                StatusCode::BAD_REQUEST
            };
            json_answer(
                status,
                &json!({"error": e.code, "error_description": e.description}),
            )
        }
    }
}

async fn userinfo(Ext(state): Ext<State>, headers: HeaderMap) -> Response {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let key = state.keys().secret();
    let now = state.clock().now();
    let answer = match bearer {
        Some(t) => state.with(|c| provider::userinfo(c.access().realms(), &key, t, now)),
        None => Err(OAuthError {
            code: "invalid_token",
            description: "no access token".into(),
        }),
    };
    match answer {
        Ok(claims) => json_answer(StatusCode::OK, &claims),
        Err(e) => (
            StatusCode::UNAUTHORIZED,
            [(
                header::WWW_AUTHENTICATE,
                format!(
                    "Bearer error=\"{}\", error_description=\"{}\"",
                    e.code, e.description
                ),
            )],
        )
            .into_response(),
    }
}
