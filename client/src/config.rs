//! Configuration: where PVE is, how to log in, how to trust its
//! certificate, and how patient to be.
//!
//! Build one with [`Config::builder`], or read the environment with
//! [`Config::from_env`] (the variables the seed systems use:
//! `PVE_ENDPOINT`, `PVE_USERNAME`/`PVE_PASSWORD`,
//! `PVE_TOKEN_ID`/`PVE_TOKEN_SECRET`, `PVE_INSECURE_SKIP_VERIFY`,
//! `PVE_CA_BUNDLE`, `PVE_NODE_SELECTOR`, plus `PVE_TLS_FINGERPRINT`).
//! Everything is checked when the configuration is built, so that a
//! misconfigured program stops at start with a message that says what to
//! fix.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::api::tasks::WaitOptions;
use crate::error::{Error, Result};
use crate::tls::TlsOptions;
use crate::transport::RetryPolicy;

/// A secret (password, token secret, ticket) that never shows in `Debug`
/// output or logs.
#[derive(Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(s: impl Into<String>) -> Self {
        Self(s.into())
    }

    /// The secret itself, for the one place that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl From<String> for Secret {
    fn from(s: String) -> Self {
        Self(s)
    }
}

impl From<&str> for Secret {
    fn from(s: &str) -> Self {
        Self(s.to_string())
    }
}

/// How the client authenticates.
#[derive(Clone, Debug)]
pub enum Credentials {
    /// Ticket login with `USER@REALM` and a password: the client logs in,
    /// sends the CSRF token on writes, renews the ticket before its two
    /// hours run out and logs in again once when PVE rejects it.
    Password {
        /// `USER@REALM`, e.g. `root@pam`.
        username: String,
        /// The password.
        password: Secret,
    },
    /// An API token: `USER@REALM!TOKENID` and its secret. No login, no
    /// CSRF token.
    Token {
        /// `USER@REALM!TOKENID`.
        token_id: String,
        /// The token's secret (a UUID).
        secret: Secret,
    },
    /// A ticket obtained elsewhere, with its CSRF token. The client renews
    /// it while it is valid but cannot log in again once it has expired.
    Ticket {
        /// `PVE:USER@REALM:...`.
        ticket: Secret,
        /// The CSRF prevention token that came with it.
        csrf: Secret,
    },
}

impl Credentials {
    /// The user (or token) these credentials act as.
    pub fn principal(&self) -> String {
        match self {
            Self::Password { username, .. } => username.clone(),
            Self::Token { token_id, .. } => token_id.clone(),
            Self::Ticket { ticket, .. } => {
                ticket_user(ticket.expose()).unwrap_or_default().to_string()
            }
        }
    }
}

/// The user of a ticket `PVE:<userid>:<hex time>::<signature>`.
pub(crate) fn ticket_user(ticket: &str) -> Option<&str> {
    let (plain, _) = ticket.split_once("::")?;
    let rest = plain.strip_prefix("PVE:")?;
    rest.rsplit_once(':').map(|(user, _)| user)
}

/// What [`ConfigBuilder::observer`] installs: called with the method,
/// the (encoded) path relative to `/api2/json`, and the answer.
#[derive(Clone)]
pub struct Observer(pub(crate) std::sync::Arc<ObserverFn>);

/// The function an [`Observer`] calls.
type ObserverFn = dyn Fn(&reqwest::Method, &str, &crate::transport::Answer) + Send + Sync;

impl fmt::Debug for Observer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Observer(..)")
    }
}

/// What [`ConfigBuilder::error_observer`] installs: called with the
/// method, the (encoded) path relative to `/api2/json`, and the error.
#[derive(Clone)]
pub struct ErrorObserver(pub(crate) std::sync::Arc<ErrorObserverFn>);

/// The function an [`ErrorObserver`] calls.
type ErrorObserverFn = dyn Fn(&reqwest::Method, &str, &crate::Error) + Send + Sync;

impl fmt::Debug for ErrorObserver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ErrorObserver(..)")
    }
}

/// A complete, checked configuration. Make one with [`Config::builder`]
/// or [`Config::from_env`].
#[derive(Clone, Debug)]
pub struct Config {
    pub(crate) base: String,
    pub(crate) credentials: Credentials,
    pub(crate) tls: TlsOptions,
    pub(crate) node_selector: Vec<String>,
    pub(crate) timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) retry: RetryPolicy,
    pub(crate) ticket_renew_after: Duration,
    pub(crate) wait: WaitOptions,
    pub(crate) observer: Option<Observer>,
    pub(crate) error_observer: Option<ErrorObserver>,
    pub(crate) resolve: Vec<(String, std::net::SocketAddr)>,
    pub(crate) totp_secret: Option<Secret>,
}

impl Config {
    /// A builder with the defaults: certificate verification on, 60 s per
    /// request, 10 s to connect, [`RetryPolicy::default`], tickets renewed
    /// after one hour, tasks polled every 2 s for at most 5 minutes.
    pub fn builder() -> ConfigBuilder {
        ConfigBuilder::default()
    }

    /// The configuration the `PVE_*` environment variables describe.
    ///
    /// # Errors
    /// [`Error::Config`] when the endpoint or the credentials are missing
    /// or malformed, or a TLS setting cannot be used.
    pub fn from_env() -> Result<Self> {
        Self::builder().with_env(|k| std::env::var(k).ok())?.build()
    }

    /// The base URL of the API, always ending in `/api2/json`.
    pub fn api_url(&self) -> &str {
        &self.base
    }

    /// The credentials.
    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    /// The preferred nodes (`PVE_NODE_SELECTOR`), in order.
    pub fn node_selector(&self) -> &[String] {
        &self.node_selector
    }

    /// The retry policy.
    pub fn retry(&self) -> &RetryPolicy {
        &self.retry
    }

    /// How tasks are waited for by default.
    pub fn wait_options(&self) -> &WaitOptions {
        &self.wait
    }
}

/// Where a CA bundle comes from.
#[derive(Clone, Debug)]
enum CaSource {
    Pem(String),
    File(PathBuf),
}

/// Builds a [`Config`]; every setting is optional but the endpoint and
/// one kind of credentials.
#[derive(Clone, Debug)]
pub struct ConfigBuilder {
    endpoint: Option<String>,
    username: Option<String>,
    password: Option<Secret>,
    token_id: Option<String>,
    token_secret: Option<Secret>,
    ticket: Option<(Secret, Secret)>,
    insecure: bool,
    ca: Option<CaSource>,
    fingerprint: Option<String>,
    node_selector: Vec<String>,
    timeout: Duration,
    connect_timeout: Duration,
    retry: RetryPolicy,
    ticket_renew_after: Duration,
    wait: WaitOptions,
    observer: Option<Observer>,
    error_observer: Option<ErrorObserver>,
    resolve: Vec<(String, std::net::SocketAddr)>,
    client_identity: Option<(String, Secret)>,
    totp_secret: Option<Secret>,
}

impl Default for ConfigBuilder {
    fn default() -> Self {
        Self {
            endpoint: None,
            username: None,
            password: None,
            token_id: None,
            token_secret: None,
            ticket: None,
            insecure: false,
            ca: None,
            fingerprint: None,
            node_selector: Vec::new(),
            timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            retry: RetryPolicy::default(),
            ticket_renew_after: Duration::from_secs(3600),
            wait: WaitOptions::default(),
            observer: None,
            error_observer: None,
            resolve: Vec::new(),
            client_identity: None,
            totp_secret: None,
        }
    }
}

/// Reads a boolean as the seed systems write it.
fn parse_bool(name: &str, v: &str) -> Result<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" | "" => Ok(false),
        _ => Err(Error::Config(format!(
            "{name} must be true or false, not '{v}'"
        ))),
    }
}

impl ConfigBuilder {
    /// The PVE endpoint: `https://host:8006`, with or without `/api2` or
    /// `/api2/json`. Without a scheme, `https://` is assumed, and port
    /// 8006 when none is given.
    #[must_use]
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into());
        self
    }

    /// Ticket login with `USER@REALM` and a password.
    #[must_use]
    pub fn password(mut self, username: impl Into<String>, password: impl Into<Secret>) -> Self {
        self.username = Some(username.into());
        self.password = Some(password.into());
        self
    }

    /// An API token `USER@REALM!TOKENID` and its secret. A token wins
    /// over a username and password when both are given.
    #[must_use]
    pub fn token(mut self, token_id: impl Into<String>, secret: impl Into<Secret>) -> Self {
        self.token_id = Some(token_id.into());
        self.token_secret = Some(secret.into());
        self
    }

    /// A ticket obtained elsewhere, with its CSRF token.
    #[must_use]
    pub fn ticket(mut self, ticket: impl Into<Secret>, csrf: impl Into<Secret>) -> Self {
        self.ticket = Some((ticket.into(), csrf.into()));
        self
    }

    /// Accept any certificate. For development against self-signed
    /// certificates only; a warning is logged.
    #[must_use]
    pub fn insecure_skip_verify(mut self, yes: bool) -> Self {
        self.insecure = yes;
        self
    }

    /// Trust only the certificates of this PEM bundle (instead of the
    /// built-in Mozilla roots).
    #[must_use]
    pub fn ca_bundle_pem(mut self, pem: impl Into<String>) -> Self {
        self.ca = Some(CaSource::Pem(pem.into()));
        self
    }

    /// Like [`ConfigBuilder::ca_bundle_pem`], read from a file when the
    /// configuration is built.
    #[must_use]
    pub fn ca_bundle_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.ca = Some(CaSource::File(path.into()));
        self
    }

    /// Accept exactly the certificate with this SHA-256 fingerprint
    /// (`AB:CD:...` as PVE shows it, or 64 hex digits), whatever its
    /// issuer and names. Wins over the other TLS settings.
    #[must_use]
    pub fn fingerprint(mut self, sha256: impl Into<String>) -> Self {
        self.fingerprint = Some(sha256.into());
        self
    }

    /// Preferred nodes, in order (see [`crate::api::nodes::Nodes::select_node`]).
    #[must_use]
    pub fn node_selector<I, S>(mut self, nodes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.node_selector = nodes.into_iter().map(Into::into).collect();
        self
    }

    /// The time one HTTP request may take (default 60 s).
    #[must_use]
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = d;
        self
    }

    /// The time a connection may take to open (default 10 s).
    #[must_use]
    pub fn connect_timeout(mut self, d: Duration) -> Self {
        self.connect_timeout = d;
        self
    }

    /// The retry policy (default [`RetryPolicy::default`]).
    #[must_use]
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// The age at which a ticket is renewed (default one hour; PVE's
    /// tickets live two).
    #[must_use]
    pub fn ticket_renew_after(mut self, d: Duration) -> Self {
        self.ticket_renew_after = d;
        self
    }

    /// How tasks are waited for by default.
    #[must_use]
    pub fn wait_options(mut self, w: WaitOptions) -> Self {
        self.wait = w;
        self
    }

    /// Calls `f` with every successful answer of a call made through the
    /// [`crate::Client`] (typed and raw calls; not the client's own
    /// logins): for metrics, audit trails, or checking answers against
    /// the schema's `returns` in tests. The answer may hold secrets (a
    /// new token's value, a ticket): an observer must not log it as is.
    #[must_use]
    pub fn observer(
        mut self,
        f: impl Fn(&reqwest::Method, &str, &crate::transport::Answer) + Send + Sync + 'static,
    ) -> Self {
        self.observer = Some(Observer(std::sync::Arc::new(f)));
        self
    }

    /// Calls `f` with every failed call made through the
    /// [`crate::Client`] (typed and raw; after the retries): with
    /// [`ConfigBuilder::observer`], every request's outcome, for metrics.
    #[must_use]
    pub fn error_observer(
        mut self,
        f: impl Fn(&reqwest::Method, &str, &crate::Error) + Send + Sync + 'static,
    ) -> Self {
        self.error_observer = Some(ErrorObserver(std::sync::Arc::new(f)));
        self
    }

    /// The base32 TOTP secret of the password login's user: when PVE asks
    /// for a second factor (`NeedTFA`), the client answers the challenge
    /// with the current value (`totp:<value>`, RFC 6238 with SHA-1, six
    /// digits, 30-second steps, by this machine's clock).
    #[must_use]
    pub fn totp_secret(mut self, secret: impl Into<Secret>) -> Self {
        self.totp_secret = Some(secret.into());
        self
    }

    /// A client certificate (PEM chain) and its private key (PEM), for
    /// mutual TLS with a server that asks for one (pveproxy itself never
    /// does; a TLS proxy in front of it may). Checked by
    /// [`ConfigBuilder::build`].
    #[must_use]
    pub fn client_certificate_pem(
        mut self,
        cert: impl Into<String>,
        key: impl Into<Secret>,
    ) -> Self {
        self.client_identity = Some((cert.into(), key.into()));
        self
    }

    /// Connects to `ip` whenever the endpoint's host is `host`, instead
    /// of resolving the name (as curl's `--resolve`): the URL, its port,
    /// the `Host` header and the name the certificate is checked against
    /// stay the endpoint's.
    #[must_use]
    pub fn resolve(mut self, host: impl Into<String>, ip: std::net::IpAddr) -> Self {
        self.resolve
            .push((host.into(), std::net::SocketAddr::new(ip, 0)));
        self
    }

    /// Takes the settings of the `PVE_*` variables that `lookup` finds
    /// (empty values count as unset), over those already given.
    ///
    /// # Errors
    /// [`Error::Config`] when `PVE_INSECURE_SKIP_VERIFY` is not a boolean.
    pub fn with_env(mut self, lookup: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let get = |k: &str| lookup(k).filter(|v| !v.trim().is_empty());
        if let Some(v) = get("PVE_ENDPOINT") {
            self.endpoint = Some(v);
        }
        if let Some(v) = get("PVE_USERNAME") {
            self.username = Some(v);
        }
        if let Some(v) = get("PVE_PASSWORD") {
            self.password = Some(Secret(v));
        }
        if let Some(v) = get("PVE_TOKEN_ID") {
            self.token_id = Some(v);
        }
        if let Some(v) = get("PVE_TOKEN_SECRET") {
            self.token_secret = Some(Secret(v));
        }
        if let Some(v) = get("PVE_INSECURE_SKIP_VERIFY") {
            self.insecure = parse_bool("PVE_INSECURE_SKIP_VERIFY", &v)?;
        }
        if let Some(v) = get("PVE_CA_BUNDLE") {
            self.ca = Some(if v.contains("-----BEGIN") {
                CaSource::Pem(v)
            } else {
                CaSource::File(PathBuf::from(v.trim()))
            });
        }
        if let Some(v) = get("PVE_TLS_FINGERPRINT") {
            self.fingerprint = Some(v);
        }
        if let Some(v) = get("PVE_NODE_SELECTOR") {
            self.node_selector = v
                .split([',', ';', ' '])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
        }
        Ok(self)
    }

    /// Checks everything and makes the configuration.
    ///
    /// # Errors
    /// [`Error::Config`]: `endpoint is required`, `invalid endpoint URL:
    /// ...`, missing or half-given credentials, a malformed token ID or
    /// user name, an unreadable CA bundle, a malformed fingerprint.
    pub fn build(self) -> Result<Config> {
        let base = normalize_endpoint(self.endpoint.as_deref().unwrap_or(""))?;
        let credentials = self.credentials()?;
        let ca_pem = match &self.ca {
            None => None,
            Some(CaSource::Pem(p)) => Some(p.clone()),
            Some(CaSource::File(path)) => Some(std::fs::read_to_string(path).map_err(|e| {
                Error::Config(format!("cannot read CA bundle {}: {e}", path.display()))
            })?),
        };
        let mut tls = TlsOptions::new(
            self.insecure,
            ca_pem.as_deref(),
            self.fingerprint.as_deref(),
        )?;
        if let Some((cert, key)) = &self.client_identity {
            tls.identity = Some(crate::tls::ClientIdentity::from_pem(cert, key.expose())?);
        }
        if self.insecure && self.fingerprint.is_none() {
            tracing::warn!("TLS certificate verification is off (insecure_skip_verify)");
        }
        Ok(Config {
            base,
            credentials,
            tls,
            node_selector: self.node_selector,
            timeout: self.timeout,
            connect_timeout: self.connect_timeout,
            retry: self.retry,
            ticket_renew_after: self.ticket_renew_after,
            wait: self.wait,
            observer: self.observer,
            error_observer: self.error_observer,
            resolve: self.resolve,
            totp_secret: self.totp_secret,
        })
    }

    fn credentials(&self) -> Result<Credentials> {
        match (&self.token_id, &self.token_secret) {
            (Some(id), Some(secret)) => {
                let valid = id
                    .split_once('!')
                    .is_some_and(|(user, tok)| user.contains('@') && !tok.is_empty());
                if !valid {
                    return Err(Error::Config(format!(
                        "invalid token ID '{id}': expected USER@REALM!TOKENID"
                    )));
                }
                return Ok(Credentials::Token {
                    token_id: id.clone(),
                    secret: secret.clone(),
                });
            }
            (Some(_), None) => {
                return Err(Error::Config(
                    "a token secret (PVE_TOKEN_SECRET) is required with a token ID".into(),
                ));
            }
            (None, Some(_)) => {
                return Err(Error::Config(
                    "a token ID (PVE_TOKEN_ID) is required with a token secret".into(),
                ));
            }
            (None, None) => {}
        }
        match (&self.username, &self.password) {
            (Some(user), Some(password)) => {
                if !user.contains('@') {
                    return Err(Error::Config(format!(
                        "invalid username '{user}': expected USER@REALM, e.g. root@pam"
                    )));
                }
                return Ok(Credentials::Password {
                    username: user.clone(),
                    password: password.clone(),
                });
            }
            (Some(_), None) => {
                return Err(Error::Config(
                    "a password (PVE_PASSWORD) is required with a username".into(),
                ));
            }
            (None, Some(_)) => {
                return Err(Error::Config(
                    "a username (PVE_USERNAME) is required with a password".into(),
                ));
            }
            (None, None) => {}
        }
        if let Some((ticket, csrf)) = &self.ticket {
            if ticket_user(ticket.expose()).is_none() {
                return Err(Error::Config(
                    "invalid ticket: expected PVE:USER@REALM:...".into(),
                ));
            }
            return Ok(Credentials::Ticket {
                ticket: ticket.clone(),
                csrf: csrf.clone(),
            });
        }
        Err(Error::Config(
            "credentials are required: PVE_TOKEN_ID and PVE_TOKEN_SECRET, \
             or PVE_USERNAME and PVE_PASSWORD"
                .into(),
        ))
    }
}

/// `https://host:8006[/prefix][/api2[/json]]` to `.../api2/json`.
fn normalize_endpoint(raw: &str) -> Result<String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Err(Error::Config("endpoint is required".into()));
    }
    let invalid = |why: &str| Error::Config(format!("invalid endpoint URL '{raw}': {why}"));
    let has_scheme = raw.contains("://");
    let text = if has_scheme {
        raw.to_string()
    } else {
        format!("https://{raw}")
    };
    let mut url = reqwest::Url::parse(&text).map_err(|e| invalid(&e.to_string()))?;
    if !matches!(url.scheme(), "https" | "http") {
        return Err(invalid("the scheme must be https (or http)"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(invalid("no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid("credentials do not belong in the URL"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid("no query or fragment allowed"));
    }
    // `url` hides a default port (443 for https), so ask a scheme
    // without one whether a port was written.
    let port_written = reqwest::Url::parse(&format!("x-endpoint://{raw}"))
        .ok()
        .and_then(|u| u.port())
        .is_some();
    if !has_scheme && !port_written {
        url.set_port(Some(8006))
            .map_err(|()| invalid("cannot set the port"))?;
    }
    let path = url.path().trim_end_matches('/').to_string();
    let path = if path.ends_with("/api2/json") {
        path
    } else if path.ends_with("/api2") {
        format!("{path}/json")
    } else {
        format!("{path}/api2/json")
    };
    url.set_path(&path);
    Ok(url.as_str().trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use std::collections::HashMap;

    #[rstest]
    #[case(
        "https://pve.example.com:8006",
        "https://pve.example.com:8006/api2/json"
    )]
    #[case(
        "https://pve.example.com:8006/",
        "https://pve.example.com:8006/api2/json"
    )]
    #[case(
        "https://pve.example.com:8006/api2",
        "https://pve.example.com:8006/api2/json"
    )]
    #[case(
        "https://pve.example.com:8006/api2/json/",
        "https://pve.example.com:8006/api2/json"
    )]
    #[case("https://10.0.0.1:8006/api2/json", "https://10.0.0.1:8006/api2/json")]
    #[case("pve.example.com", "https://pve.example.com:8006/api2/json")]
    #[case("pve.example.com:443", "https://pve.example.com/api2/json")]
    #[case("http://127.0.0.1:8006", "http://127.0.0.1:8006/api2/json")]
    #[case(
        "https://proxy.example.com/pve",
        "https://proxy.example.com/pve/api2/json"
    )]
    #[case("https://[::1]:8006", "https://[::1]:8006/api2/json")]
    fn endpoints_are_normalized(#[case] given: &str, #[case] want: &str) {
        assert_eq!(normalize_endpoint(given).expect("valid"), want);
    }

    #[rstest]
    #[case("", "endpoint is required")]
    #[case("   ", "endpoint is required")]
    #[case(
        "ftp://pve:8006",
        "invalid endpoint URL 'ftp://pve:8006': the scheme must be https (or http)"
    )]
    #[case("https://", "invalid endpoint URL 'https://': empty host")]
    #[case(
        "https://pve:notaport",
        "invalid endpoint URL 'https://pve:notaport': invalid port number"
    )]
    #[case(
        "https://root:pw@pve:8006",
        "invalid endpoint URL 'https://root:pw@pve:8006': credentials do not belong in the URL"
    )]
    #[case(
        "https://pve:8006/?x=1",
        "invalid endpoint URL 'https://pve:8006/?x=1': no query or fragment allowed"
    )]
    fn bad_endpoints_say_why(#[case] given: &str, #[case] want: &str) {
        match normalize_endpoint(given) {
            Err(Error::Config(m)) => assert_eq!(m, want),
            other => panic!("{given}: {other:?}"),
        }
    }

    fn env(pairs: &[(&str, &str)]) -> Result<Config> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect();
        Config::builder().with_env(|k| map.get(k).cloned())?.build()
    }

    fn config_error(r: Result<Config>) -> String {
        match r {
            Err(Error::Config(m)) => m,
            other => panic!("expected a configuration error, got {other:?}"),
        }
    }

    #[test]
    fn environment_with_a_token() {
        let c = env(&[
            ("PVE_ENDPOINT", "https://pve.example.com:8006/api2/json"),
            ("PVE_TOKEN_ID", "ci@pve!runner"),
            ("PVE_TOKEN_SECRET", "7d1c4a52-0e2b-4b8f-9a61-3f5e8d2c9b10"),
            ("PVE_NODE_SELECTOR", "pve-node-1, pve-node-2"),
            ("PVE_INSECURE_SKIP_VERIFY", "true"),
        ])
        .expect("valid");
        assert_eq!(c.api_url(), "https://pve.example.com:8006/api2/json");
        assert!(
            matches!(c.credentials(), Credentials::Token { token_id, .. } if token_id == "ci@pve!runner")
        );
        assert_eq!(c.node_selector(), ["pve-node-1", "pve-node-2"]);
        assert!(c.tls.insecure);
        let dbg = format!("{c:?}");
        assert!(!dbg.contains("7d1c4a52"), "{dbg}");
    }

    #[test]
    fn environment_with_a_password() {
        let c = env(&[
            ("PVE_ENDPOINT", "https://pve:8006"),
            ("PVE_USERNAME", "root@pam"),
            ("PVE_PASSWORD", "hunter2-secret"),
        ])
        .expect("valid");
        assert_eq!(c.credentials().principal(), "root@pam");
        let dbg = format!("{c:?}");
        assert!(!dbg.contains("hunter2"), "{dbg}");
        assert!(dbg.contains("Secret(***)"), "{dbg}");
    }

    #[rstest]
    #[case(&[], "endpoint is required")]
    #[case(&[("PVE_ENDPOINT", "https://pve:8006")], "credentials are required: PVE_TOKEN_ID and PVE_TOKEN_SECRET, or PVE_USERNAME and PVE_PASSWORD")]
    #[case(&[("PVE_ENDPOINT", "https://pve:8006"), ("PVE_USERNAME", "root@pam")], "a password (PVE_PASSWORD) is required with a username")]
    #[case(&[("PVE_ENDPOINT", "https://pve:8006"), ("PVE_TOKEN_ID", "a@pve!t")], "a token secret (PVE_TOKEN_SECRET) is required with a token ID")]
    #[case(&[("PVE_ENDPOINT", "https://pve:8006"), ("PVE_TOKEN_ID", "root@pam"), ("PVE_TOKEN_SECRET", "x")], "invalid token ID 'root@pam': expected USER@REALM!TOKENID")]
    #[case(&[("PVE_ENDPOINT", "https://pve:8006"), ("PVE_USERNAME", "root"), ("PVE_PASSWORD", "x")], "invalid username 'root': expected USER@REALM, e.g. root@pam")]
    #[case(&[("PVE_ENDPOINT", "https://pve:8006"), ("PVE_USERNAME", "root@pam"), ("PVE_PASSWORD", "x"), ("PVE_INSECURE_SKIP_VERIFY", "maybe")], "PVE_INSECURE_SKIP_VERIFY must be true or false, not 'maybe'")]
    #[case(&[("PVE_ENDPOINT", "https://pve:8006"), ("PVE_USERNAME", "root@pam"), ("PVE_PASSWORD", "x"), ("PVE_CA_BUNDLE", "/nonexistent/ca.pem")], "cannot read CA bundle /nonexistent/ca.pem: No such file or directory (os error 2)")]
    #[case(&[("PVE_ENDPOINT", "https://pve:8006"), ("PVE_USERNAME", "root@pam"), ("PVE_PASSWORD", "x"), ("PVE_CA_BUNDLE", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")], "PVE_CA_BUNDLE: no usable certificate (invalid certificate)")]
    #[case(&[("PVE_ENDPOINT", "https://pve:8006"), ("PVE_USERNAME", "root@pam"), ("PVE_PASSWORD", "x"), ("PVE_TLS_FINGERPRINT", "AB:CD")], "invalid certificate fingerprint 'AB:CD': expected 32 bytes of SHA-256 in hex")]
    fn startup_validation_messages(#[case] pairs: &[(&str, &str)], #[case] want: &str) {
        assert_eq!(config_error(env(pairs)), want);
    }

    #[test]
    fn tickets_name_their_user() {
        assert_eq!(
            ticket_user("PVE:root@pam:4A5B6C7D::sig=="),
            Some("root@pam")
        );
        assert_eq!(ticket_user("PVE:a@pve!tok:4A5B6C7D::s"), Some("a@pve!tok"));
        assert_eq!(ticket_user("garbage"), None);
    }
}
