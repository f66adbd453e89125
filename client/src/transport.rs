//! The transport: base URL, authentication (ticket with CSRF token and
//! renewal, or API token), retries with exponential backoff and jitter,
//! PVE's `{"data": ...}` envelope, and errors read from the body's
//! `message` member or, failing that, the HTTP reason phrase.
//!
//! Parameters travel as PVE expects: in the query string for GET and
//! DELETE (a body there is refused with 501), as a form for POST and PUT.
//! Neither parameters nor credentials are ever logged.

use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::Value;
use tokio::sync::Mutex;

use crate::config::{Config, Credentials, Secret, ticket_user};
use crate::error::{Error, Result};

/// When and how often a failed request is tried again.
///
/// A request is retried when its error [`is
/// retryable`](Error::is_retryable) (connection failures, timeouts,
/// 502/503/504, `VM is locked`) and, for anything but a GET, only when PVE
/// certainly did not act on it: the connection never opened, a proxy
/// answered 502/503, or PVE refused it because of a lock. 400, 401 and
/// 403 are never retried. The delay before retry `n` (from 0) is drawn
/// between half and all of `min(max_delay, initial_delay * 2^n)`.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    max_retries: u32,
    initial_delay: Duration,
    max_delay: Duration,
}

impl Default for RetryPolicy {
    /// 3 retries, starting at 500 ms, at most 30 s apart.
    fn default() -> Self {
        Self {
            max_retries: 3,
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// How many times a request is retried after the first attempt.
    #[must_use]
    pub fn max_retries(mut self, n: u32) -> Self {
        self.max_retries = n;
        self
    }

    /// The delay before the first retry (before jitter).
    #[must_use]
    pub fn initial_delay(mut self, d: Duration) -> Self {
        self.initial_delay = d;
        self
    }

    /// The longest delay between two attempts.
    #[must_use]
    pub fn max_delay(mut self, d: Duration) -> Self {
        self.max_delay = d;
        self
    }

    /// The configured number of retries.
    pub fn retries(&self) -> u32 {
        self.max_retries
    }

    /// The delay before retry `attempt` (0 for the first retry), with
    /// jitter.
    pub fn delay(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.min(30));
        let cap = self
            .initial_delay
            .saturating_mul(factor)
            .min(self.max_delay);
        let half = cap / 2;
        let spread = u64::try_from((cap - half).as_micros()).unwrap_or(u64::MAX);
        half + Duration::from_micros(if spread == 0 {
            0
        } else {
            rand::random_range(0..=spread)
        })
    }
}

/// Request parameters: `key=value` pairs, in order. A key may repeat
/// (PVE's array parameters, such as an agent `command`); keys added with
/// [`Params::array`] are sent as JSON arrays (see there).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Params(Vec<(String, String)>, Vec<String>);

impl fmt::Debug for Params {
    /// Keys only: values may be passwords.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(k, _)| k))
            .finish()
    }
}

/// A value PVE reads from a parameter.
pub trait ParamValue {
    /// The text sent; booleans become `1`/`0` as PVE wants them.
    fn to_param(&self) -> String;
}

impl ParamValue for bool {
    fn to_param(&self) -> String {
        if *self { "1" } else { "0" }.to_string()
    }
}

impl ParamValue for str {
    fn to_param(&self) -> String {
        self.to_string()
    }
}

impl ParamValue for String {
    fn to_param(&self) -> String {
        self.clone()
    }
}

impl<T: ParamValue + ?Sized> ParamValue for &T {
    fn to_param(&self) -> String {
        (**self).to_param()
    }
}

macro_rules! numeric_params {
    ($($t:ty),*) => {$(
        impl ParamValue for $t {
            fn to_param(&self) -> String {
                self.to_string()
            }
        }
    )*};
}
numeric_params!(u8, u16, u32, u64, usize, i8, i16, i32, i64, f64);

impl Params {
    /// No parameters.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `key=value`.
    #[must_use]
    pub fn set(mut self, key: impl Into<String>, value: impl ParamValue) -> Self {
        self.push(key, value);
        self
    }

    /// Adds `key=value` when there is a value.
    #[must_use]
    pub fn opt<V: ParamValue>(mut self, key: impl Into<String>, value: Option<V>) -> Self {
        if let Some(v) = value {
            self.push(key, v);
        }
        self
    }

    /// Adds `key=value` in place.
    pub fn push(&mut self, key: impl Into<String>, value: impl ParamValue) {
        self.0.push((key.into(), value.to_param()));
    }

    /// Adds an array parameter (PVE's `type => 'array'`, such as the
    /// agent's `exec` `command`). A POST or PUT that has one is sent as
    /// a JSON body, since PVE refuses a form's single `key=value` for an
    /// array (`type check ('array') failed`).
    #[must_use]
    pub fn array<V: ParamValue>(mut self, key: impl Into<String>, values: &[V]) -> Self {
        let key = key.into();
        for v in values {
            self.0.push((key.clone(), v.to_param()));
        }
        if !self.1.contains(&key) {
            self.1.push(key);
        }
        self
    }

    /// The body of a request with array parameters: an object of strings,
    /// and of arrays for the array keys.
    fn json_body(&self) -> Value {
        let mut obj = serde_json::Map::new();
        for (k, v) in &self.0 {
            if self.1.contains(k) {
                let entry = obj
                    .entry(k.clone())
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(a) = entry {
                    a.push(Value::String(v.clone()));
                }
            } else {
                obj.insert(k.clone(), Value::String(v.clone()));
            }
        }
        for k in &self.1 {
            obj.entry(k.clone())
                .or_insert_with(|| Value::Array(Vec::new()));
        }
        Value::Object(obj)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The pairs, in order.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.0
    }
}

impl<K: Into<String>, V: ParamValue> FromIterator<(K, V)> for Params {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut p = Self::new();
        for (k, v) in iter {
            p.push(k, v);
        }
        p
    }
}

/// A successful answer: the `data` member, `total` where PVE sends one
/// (task logs and lists), and any other top-level member (`changes` of
/// `GET /nodes/{node}/network`) in `extra`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Answer {
    /// The `data` member.
    pub data: Value,
    /// The top-level `total`.
    pub total: Option<u64>,
    /// The other top-level members besides `data` and `total`.
    pub extra: serde_json::Map<String, Value>,
    /// A download's bytes (an `application/octet-stream` answer, such as
    /// file-restore's `download`): no envelope, no `data`.
    pub download: Option<Vec<u8>>,
}

/// A logged-in session.
#[derive(Clone)]
struct Session {
    userid: String,
    ticket: Secret,
    csrf: Secret,
    obtained: Instant,
}

/// The credentials one request carries.
enum Auth {
    None,
    Token(String),
    Ticket(Session),
}

/// A failed attempt: the error, and whether the connection never opened.
struct Failure {
    error: Error,
    connect_failed: bool,
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Self {
            error,
            connect_failed: false,
        }
    }
}

/// The HTTP layer under [`crate::Client`].
pub(crate) struct Transport {
    http: reqwest::Client,
    base: String,
    credentials: Credentials,
    retry: RetryPolicy,
    renew_after: Duration,
    timeout: Duration,
    session: Mutex<Option<Session>>,
    totp_secret: Option<Secret>,
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transport")
            .field("base", &self.base)
            .field("credentials", &self.credentials)
            .finish_non_exhaustive()
    }
}

/// Information about the ticket in use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TicketInfo {
    /// The user the ticket is for.
    pub userid: String,
    /// When PVE issued it, in epoch seconds by PVE's clock.
    pub issued: i64,
}

impl Transport {
    pub(crate) fn new(config: &Config) -> Result<Self> {
        let tls = crate::tls::client_config(&config.tls)?;
        let mut http = reqwest::Client::builder()
            .use_preconfigured_tls(tls)
            .timeout(config.timeout)
            .connect_timeout(config.connect_timeout)
            .user_agent(concat!("pve-client/", env!("CARGO_PKG_VERSION")));
        for (host, addr) in &config.resolve {
            http = http.resolve(host, *addr);
        }
        let http = http
            .build()
            .map_err(|e| Error::Config(format!("cannot build the HTTP client: {e}")))?;
        let session = match &config.credentials {
            Credentials::Ticket { ticket, csrf } => Some(Session {
                userid: ticket_user(ticket.expose()).unwrap_or_default().to_string(),
                ticket: ticket.clone(),
                csrf: csrf.clone(),
                obtained: Instant::now(),
            }),
            _ => None,
        };
        Ok(Self {
            http,
            base: config.base.clone(),
            credentials: config.credentials.clone(),
            retry: config.retry.clone(),
            renew_after: config.ticket_renew_after,
            timeout: config.timeout,
            session: Mutex::new(session),
            totp_secret: config.totp_secret.clone(),
        })
    }

    /// Sends a request with the client's credentials, retrying as the
    /// policy says and logging in again once when PVE rejects a ticket.
    pub(crate) async fn call(&self, method: Method, path: &str, params: &Params) -> Result<Answer> {
        let mut attempt = 0u32;
        let mut relogged = false;
        loop {
            let outcome = match self.auth().await {
                Ok(auth) => {
                    let ticket = match &auth {
                        Auth::Ticket(s) => Some(s.ticket.clone()),
                        _ => None,
                    };
                    let r = self.send(&method, path, params, &auth).await;
                    if let Err(f) = &r
                        && matches!(f.error, Error::Authentication { .. })
                        && let Some(ticket) = ticket
                        && !relogged
                        && matches!(self.credentials, Credentials::Password { .. })
                    {
                        tracing::debug!(%method, path, "ticket rejected; logging in again");
                        relogged = true;
                        self.forget(&ticket).await;
                        continue;
                    }
                    r
                }
                Err(e) => Err(Failure {
                    // A failed login sent nothing to the API call itself.
                    connect_failed: true,
                    error: e,
                }),
            };
            match outcome {
                Ok(a) => return Ok(a),
                Err(Failure {
                    error,
                    connect_failed,
                }) => {
                    let may_retry = error.is_retryable()
                        && (method == Method::GET || error.not_acted_on(connect_failed));
                    if may_retry && attempt < self.retry.max_retries {
                        let delay = self.retry.delay(attempt);
                        attempt += 1;
                        tracing::warn!(
                            %method,
                            path,
                            attempt,
                            delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                            "retrying after: {error}"
                        );
                        tokio::time::sleep(delay).await;
                        continue;
                    }
                    return Err(error);
                }
            }
        }
    }

    /// The credentials for the next request: the token, or a ticket
    /// (logging in or renewing first when needed).
    async fn auth(&self) -> Result<Auth> {
        match &self.credentials {
            Credentials::Token { token_id, secret } => Ok(Auth::Token(format!(
                "PVEAPIToken={token_id}={}",
                secret.expose()
            ))),
            Credentials::Password { .. } | Credentials::Ticket { .. } => {
                Ok(Auth::Ticket(self.session(false).await?))
            }
        }
    }

    /// The current session: logged in if there is none, renewed if it is
    /// older than the renewal age or `force_renew` is set.
    async fn session(&self, force_renew: bool) -> Result<Session> {
        let mut guard = self.session.lock().await;
        if let Some(s) = guard.as_ref() {
            if !force_renew && s.obtained.elapsed() < self.renew_after {
                return Ok(s.clone());
            }
            // Renew with the old ticket as the password, as PVE allows.
            let old = s.clone();
            match self.create_ticket(&old.userid, &old.ticket).await {
                Ok(new) => {
                    tracing::debug!(user = %new.userid, "ticket renewed");
                    *guard = Some(new.clone());
                    return Ok(new);
                }
                Err(Error::Authentication { message })
                    if !matches!(self.credentials, Credentials::Password { .. }) =>
                {
                    return Err(Error::Authentication {
                        message: format!("{message} (the ticket could not be renewed)"),
                    });
                }
                Err(Error::Authentication { .. }) => {
                    tracing::debug!("ticket renewal refused; logging in with the password");
                }
                Err(e) => return Err(e),
            }
        }
        let Credentials::Password { username, password } = &self.credentials else {
            return Err(Error::Authentication {
                message: "the ticket is no longer valid and there is no password to log in with"
                    .into(),
            });
        };
        let s = self.create_ticket(username, password).await?;
        tracing::debug!(user = %s.userid, "logged in");
        *guard = Some(s.clone());
        Ok(s)
    }

    /// Drops the session if it still holds `ticket`.
    async fn forget(&self, ticket: &Secret) {
        let mut guard = self.session.lock().await;
        if guard.as_ref().is_some_and(|s| s.ticket == *ticket) {
            *guard = None;
        }
    }

    /// `POST /access/ticket`. Not retried here: the request that needed
    /// the login is, as one that PVE did not act on.
    async fn create_ticket(&self, username: &str, password: &Secret) -> Result<Session> {
        let params = Params::new()
            .set("username", username)
            .set("password", password.expose());
        let mut answer = self
            .send(&Method::POST, "/access/ticket", &params, &Auth::None)
            .await
            .map_err(|f| f.error)?;
        if answer.data["NeedTFA"].as_i64() == Some(1)
            || answer.data["NeedTFA"].as_bool() == Some(true)
        {
            answer = self.answer_tfa(username, &answer.data).await?;
        }
        let field = |name: &str| {
            answer.data[name]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| Error::Decode {
                    message: format!("login answer without '{name}'"),
                })
        };
        Ok(Session {
            userid: field("username")?,
            ticket: Secret::new(field("ticket")?),
            csrf: Secret::new(field("CSRFPreventionToken")?),
            obtained: Instant::now(),
        })
    }

    /// Completes a login that asks for a second factor with the TOTP
    /// value of the configured secret.
    async fn answer_tfa(&self, username: &str, first: &Value) -> Result<Answer> {
        let Some(secret) = &self.totp_secret else {
            return Err(Error::Authentication {
                message: "the login asks for a second factor and no TOTP secret is configured"
                    .into(),
            });
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let Some(code) = crate::api::tfa::totp_code(secret.expose(), now) else {
            return Err(Error::Config("the TOTP secret is not base32".into()));
        };
        let challenge = first["ticket"].as_str().unwrap_or_default();
        let params = Params::new()
            .set("username", username)
            .set("password", format!("totp:{code}"))
            .set("tfa-challenge", challenge);
        self.send(&Method::POST, "/access/ticket", &params, &Auth::None)
            .await
            .map_err(|f| f.error)
    }

    /// Renews the ticket now (ticket credentials only).
    pub(crate) async fn renew(&self) -> Result<()> {
        match self.credentials {
            Credentials::Token { .. } => Ok(()),
            _ => self.session(true).await.map(|_| ()),
        }
    }

    /// Logs in now unless a valid session exists.
    pub(crate) async fn login(&self) -> Result<()> {
        match self.credentials {
            Credentials::Token { .. } => Ok(()),
            _ => self.session(false).await.map(|_| ()),
        }
    }

    /// The ticket in use, if any.
    pub(crate) async fn ticket_info(&self) -> Option<TicketInfo> {
        let guard = self.session.lock().await;
        let s = guard.as_ref()?;
        let (plain, _) = s.ticket.expose().split_once("::")?;
        let hex = plain.rsplit(':').next()?;
        Some(TicketInfo {
            userid: s.userid.clone(),
            issued: i64::from_str_radix(hex, 16).ok()?,
        })
    }

    /// One HTTP exchange.
    async fn send(
        &self,
        method: &Method,
        path: &str,
        params: &Params,
        auth: &Auth,
    ) -> std::result::Result<Answer, Failure> {
        let url = format!("{}{path}", self.base);
        let mut rb = self.http.request(method.clone(), &url);
        if !params.is_empty() {
            rb = if *method == Method::GET || *method == Method::DELETE {
                rb.query(params.pairs())
            } else if !params.1.is_empty() {
                rb.json(&params.json_body())
            } else {
                rb.form(params.pairs())
            };
        }
        // pveproxy wants the CSRF token on every write.
        let rb = with_auth(rb, auth, *method != Method::GET);
        self.exchange(rb, method, path, &url).await
    }

    /// Sends a `multipart/form-data` upload: the text fields, then the
    /// file as part `filename`. Not retried: PVE may have stored part of
    /// it.
    pub(crate) async fn upload(
        &self,
        path: &str,
        fields: &[(String, String)],
        file_name: &str,
        data: &[u8],
    ) -> Result<Answer> {
        let auth = self.auth().await?;
        let url = format!("{}{path}", self.base);
        let boundary = format!("pve-client-{:016x}", rand::random::<u64>());
        let mut head = Vec::new();
        for (k, v) in fields {
            head.extend_from_slice(
                format!(
                    "--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n"
                )
                .as_bytes(),
            );
        }
        let quoted = file_name.replace(['"', '\r', '\n'], "_");
        head.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"filename\"; filename=\"{quoted}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        let mut body = head;
        body.extend_from_slice(data);
        body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        let rb = self
            .http
            .post(&url)
            .header(
                reqwest::header::CONTENT_TYPE,
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(body);
        // An upload needs no CSRF token: an HTML form cannot send one.
        let rb = with_auth(rb, &auth, false);
        self.exchange(rb, &Method::POST, path, &url)
            .await
            .map_err(|f| f.error)
    }

    /// Sends a built request and decodes PVE's answer.
    async fn exchange(
        &self,
        rb: reqwest::RequestBuilder,
        method: &Method,
        path: &str,
        url: &str,
    ) -> std::result::Result<Answer, Failure> {
        tracing::debug!(%method, path, "request");
        let resp = rb.send().await.map_err(|e| self.transport_error(&e, url))?;
        let status = resp.status();
        let reason = resp
            .extensions()
            .get::<hyper::ext::ReasonPhrase>()
            .map(|r| String::from_utf8_lossy(r.as_bytes()).into_owned())
            .or_else(|| status.canonical_reason().map(str::to_string))
            .unwrap_or_default();
        let is_download = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .is_some_and(|t| t.as_bytes().starts_with(b"application/octet-stream"));
        let body = resp
            .bytes()
            .await
            .map_err(|e| self.transport_error(&e, url))?;
        if status.is_success() {
            if is_download {
                return Ok(Answer {
                    download: Some(body.to_vec()),
                    ..Answer::default()
                });
            }
            return decode_success(&body).map_err(Failure::from);
        }
        let error = decode_failure(status.as_u16(), &reason, &body);
        tracing::debug!(%method, path, status = status.as_u16(), "{error}");
        Err(error.into())
    }

    fn transport_error(&self, e: &reqwest::Error, url: &str) -> Failure {
        let chain = cause_chain(e);
        let connect_failed = e.is_connect();
        let error = if let Some(tls) = find_tls_error(e) {
            Error::Tls {
                message: format!("{url}: {tls}"),
            }
        } else if e.is_timeout() {
            Error::Timeout {
                message: if connect_failed {
                    format!("connecting to {url} timed out ({chain})")
                } else {
                    format!("no answer from {url} within {:?}", self.timeout)
                },
            }
        } else if connect_failed {
            Error::Network {
                message: format!("cannot connect to {url}: {chain}"),
                status: None,
            }
        } else {
            Error::Network {
                message: format!("{url}: {chain}"),
                status: None,
            }
        };
        Failure {
            error,
            connect_failed,
        }
    }
}

/// A request with the credentials: the API token header, or the ticket
/// cookie plus, when `csrf`, the CSRF token header.
fn with_auth(mut rb: reqwest::RequestBuilder, auth: &Auth, csrf: bool) -> reqwest::RequestBuilder {
    match auth {
        Auth::None => {}
        Auth::Token(header) => rb = rb.header(reqwest::header::AUTHORIZATION, header),
        Auth::Ticket(s) => {
            rb = rb.header(
                reqwest::header::COOKIE,
                format!("PVEAuthCookie={}", s.ticket.expose()),
            );
            if csrf {
                rb = rb.header("CSRFPreventionToken", s.csrf.expose());
            }
        }
    }
    rb
}

/// The sources of an error, joined, without repeats.
fn cause_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur = e.source();
    while let Some(c) = cur {
        let s = c.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
        cur = c.source();
    }
    if parts.is_empty() {
        e.to_string()
    } else {
        parts.join(": ")
    }
}

/// The rustls error in a chain, if the failure was the TLS handshake.
fn find_tls_error(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cur {
        if let Some(t) = c.downcast_ref::<rustls::Error>() {
            return Some(t.to_string());
        }
        // rustls errors travel inside (possibly nested) io::Errors, whose
        // `source` skips the wrapped error itself.
        let mut io = c.downcast_ref::<std::io::Error>();
        while let Some(inner) = io.and_then(std::io::Error::get_ref) {
            if let Some(t) = inner.downcast_ref::<rustls::Error>() {
                return Some(t.to_string());
            }
            io = inner.downcast_ref::<std::io::Error>();
        }
        cur = c.source();
    }
    None
}

/// `{"data": ..., "total": n}`.
fn decode_success(body: &[u8]) -> Result<Answer> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Answer::default());
    }
    let v: Value = serde_json::from_slice(body).map_err(|e| Error::Decode {
        message: format!("the answer is not JSON ({e})"),
    })?;
    let total = v.get("total").and_then(|t| match t {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    });
    match v {
        Value::Object(mut o) => {
            let data = o.remove("data").unwrap_or(Value::Null);
            o.remove("total");
            Ok(Answer {
                data,
                total,
                extra: o,
                download: None,
            })
        }
        _ => Err(Error::Decode {
            message: "the answer has no data member".into(),
        }),
    }
}

/// PVE's message: the body's `message` (since PVE 8.4), else the reason
/// phrase, else a plain-text body.
fn decode_failure(status: u16, reason: &str, body: &[u8]) -> Error {
    let json: Option<Value> = serde_json::from_slice(body).ok();
    let from_body = json
        .as_ref()
        .and_then(|v| v.get("message"))
        .and_then(Value::as_str)
        .map(|m| m.trim_end().to_string())
        .filter(|m| !m.is_empty());
    let plain = (json.is_none())
        .then(|| String::from_utf8_lossy(body).trim().to_string())
        .filter(|t| !t.is_empty() && !t.starts_with('<'));
    let message = from_body
        .or_else(|| (!reason.is_empty()).then(|| reason.to_string()))
        .or(plain)
        .unwrap_or_else(|| format!("HTTP {status}"));
    let errors: BTreeMap<String, String> = json
        .as_ref()
        .and_then(|v| v.get("errors"))
        .and_then(Value::as_object)
        .map(|o| {
            o.iter()
                .map(|(k, v)| {
                    let text = match v {
                        Value::String(s) => s.trim_end().to_string(),
                        other => other.to_string(),
                    };
                    (k.clone(), text)
                })
                .collect()
        })
        .unwrap_or_default();
    Error::from_status(status, message, errors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Category;

    #[test]
    fn backoff_grows_and_stays_under_the_cap() {
        let p = RetryPolicy::default()
            .initial_delay(Duration::from_millis(100))
            .max_delay(Duration::from_secs(1));
        for attempt in 0..12 {
            let cap = Duration::from_millis(100)
                .saturating_mul(2u32.saturating_pow(attempt))
                .min(Duration::from_secs(1));
            for _ in 0..50 {
                let d = p.delay(attempt);
                assert!(
                    d >= cap / 2 && d <= cap,
                    "attempt {attempt}: {d:?} vs {cap:?}"
                );
            }
        }
        let defaults = RetryPolicy::default();
        assert_eq!(defaults.retries(), 3);
        assert!(defaults.delay(40) <= Duration::from_secs(30));
        assert!(defaults.delay(40) >= Duration::from_secs(15));
    }

    #[test]
    fn jitter_spreads_delays() {
        let p = RetryPolicy::default().initial_delay(Duration::from_secs(1));
        let seen: std::collections::BTreeSet<Duration> = (0..20).map(|_| p.delay(2)).collect();
        assert!(seen.len() > 1, "no jitter: {seen:?}");
    }

    #[test]
    fn envelopes() {
        let a = decode_success(br#"{"data":[{"n":1,"t":"TASK OK"}],"total":1}"#).expect("ok");
        assert_eq!(a.total, Some(1));
        assert_eq!(a.data[0]["t"], "TASK OK");
        assert!(a.extra.is_empty());
        let a = decode_success(br#"{"data":[],"changes":"--- a\n+++ b\n"}"#).expect("ok");
        assert_eq!(a.extra["changes"], "--- a\n+++ b\n");
        assert_eq!(a.total, None);
        let n = decode_success(br#"{"data":null}"#).expect("ok");
        assert_eq!(n.data, Value::Null);
        assert!(decode_success(b"<html>").is_err());
    }

    #[test]
    fn messages_come_from_the_body_then_the_reason_phrase() {
        let e = decode_failure(
            500,
            "VM is locked (backup)",
            br#"{"data":null,"message":"VM is locked (backup)\n"}"#,
        );
        assert_eq!(e.category(), Category::Conflict);
        assert_eq!(e.message(), "VM is locked (backup)");
        // PVE before 8.4: no message member, the reason phrase says it.
        let e = decode_failure(500, "VM 100 not running", br#"{"data":null}"#);
        assert_eq!(e.message(), "VM 100 not running");
        // The authentication layer: a status line and no body.
        let e = decode_failure(401, "No ticket", b"");
        assert_eq!(e.category(), Category::Authentication);
        assert_eq!(e.message(), "No ticket");
        let e = decode_failure(
            400,
            "Parameter verification failed.",
            br#"{"data":null,"message":"Parameter verification failed.\n","errors":{"vmid":"VM 100 already exists\n"}}"#,
        );
        assert_eq!(
            e.to_string(),
            "Parameter verification failed. vmid: VM 100 already exists"
        );
    }

    #[test]
    fn params_hide_their_values() {
        let p = Params::new()
            .set("username", "root@pam")
            .set("password", "hunter2")
            .set("force", true)
            .opt("limit", Some(5u32))
            .opt::<u32>("start", None);
        let dbg = format!("{p:?}");
        assert!(!dbg.contains("hunter2"), "{dbg}");
        assert_eq!(
            p.pairs()[2..],
            [
                ("force".to_string(), "1".to_string()),
                ("limit".to_string(), "5".to_string())
            ]
        );
    }
}
