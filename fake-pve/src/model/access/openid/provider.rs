//! The OpenID Connect provider fake-pve emulates for its `openid` realms.
//!
//! An issuer URL whose path is [`PATH`] (`/_openid`), on any host, names
//! this provider; fake-pve also serves it over HTTP below that path
//! (`crate::openid`): the discovery document, the authorization endpoint
//! (a login form that answers with a redirect carrying `code` and
//! `state`), the token endpoint (an ID token signed with RS256), the
//! userinfo endpoint and the JWKS. A login of PVE reaches the same
//! functions without a socket.
//!
//! A client is an `openid` realm of this provider: its `client-id`, and
//! its `client-key` as the client secret when it has one. The accounts
//! the provider authenticates are the realm's directory (users with their
//! passwords, e-mail and names; groups with their members), as a
//! scenario declares it. The provider keeps no state of its own: an
//! authorization code and an access token carry what they stand for,
//! authenticated with the server's key, so that they outlive nothing but
//! their own lifetime.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::super::realms::{RealmType, Realms};
use crate::model::conf_value::ConfValue;
use crate::model::context::SecretKey;

/// The path of an issuer URL that names this provider.
pub const PATH: &str = "/_openid";

/// How long an authorization code holds, in seconds.
pub const CODE_LIFETIME: i64 = 60;

/// How long an ID token and an access token hold, in seconds.
pub const TOKEN_LIFETIME: i64 = 300;

/// Whether an issuer URL names this provider: `http` or `https`, any
/// host, the path [`PATH`] (a trailing `/` allowed).
pub fn is_ours(issuer: &str) -> bool {
    let Some(rest) = issuer
        .strip_prefix("https://")
        .or_else(|| issuer.strip_prefix("http://"))
    else {
        return false;
    };
    let Some(slash) = rest.find('/') else {
        return false;
    };
    let (host, path) = rest.split_at(slash);
    !host.is_empty() && path.trim_end_matches('/') == PATH
}

fn base(issuer: &str) -> &str {
    issuer.trim_end_matches('/')
}

/// The provider's endpoints for an issuer, as its discovery document
/// names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    /// `issuer`.
    pub issuer: String,
    /// `authorization_endpoint`.
    pub authorization_endpoint: String,
    /// `token_endpoint`.
    pub token_endpoint: String,
    /// `userinfo_endpoint`.
    pub userinfo_endpoint: String,
    /// `jwks_uri`.
    pub jwks_uri: String,
}

impl Metadata {
    /// The endpoints of this provider under `issuer`.
    pub fn of(issuer: &str) -> Self {
        let b = base(issuer);
        Self {
            issuer: issuer.to_string(),
            authorization_endpoint: format!("{b}/authorize"),
            token_endpoint: format!("{b}/token"),
            userinfo_endpoint: format!("{b}/userinfo"),
            jwks_uri: format!("{b}/jwks"),
        }
    }

    /// `/.well-known/openid-configuration`.
    pub fn document(&self) -> Value {
        json!({
            "issuer": self.issuer,
            "authorization_endpoint": self.authorization_endpoint,
            "token_endpoint": self.token_endpoint,
            "userinfo_endpoint": self.userinfo_endpoint,
            "jwks_uri": self.jwks_uri,
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "scopes_supported": ["openid", "email", "profile", "groups"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "code_challenge_methods_supported": ["S256", "plain"],
            "grant_types_supported": ["authorization_code"],
            "claims_supported": [
                "sub", "iss", "aud", "exp", "iat", "nonce", "email", "email_verified",
                "preferred_username", "name", "given_name", "family_name", "groups"
            ],
        })
    }
}

/// A refusal of the provider, as OAuth 2.0 names it: the `error` code
/// and its `error_description`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {description}")]
pub struct OAuthError {
    /// `invalid_request`, `invalid_client`, `invalid_grant`,
    /// `unsupported_response_type`, `access_denied`, `login_required`,
    /// `invalid_token`, ...
    pub code: &'static str,
    /// What was wrong.
    pub description: String,
}

fn oauth(code: &'static str, description: impl Into<String>) -> OAuthError {
    OAuthError {
        code,
        description: description.into(),
    }
}

/// A client of the provider: an `openid` realm whose issuer is this
/// provider.
struct Client<'a> {
    secret: Option<String>,
    accounts: &'a super::super::realms::Directory,
}

fn client<'a>(realms: &'a Realms, client_id: &str) -> Option<Client<'a>> {
    realms.iter().map(|(_, r)| r).find_map(|r| {
        let issuer = r.options().get("issuer-url").map(ConfValue::text)?;
        let id = r.options().get("client-id").map(ConfValue::text)?;
        (r.kind() == RealmType::Openid && is_ours(&issuer) && id == client_id).then(|| Client {
            secret: r.options().get("client-key").map(ConfValue::text),
            accounts: r.directory(),
        })
    })
}

/// An authorization request (the query of the authorization endpoint).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthRequest {
    /// The query's parameters.
    pub params: BTreeMap<String, String>,
}

impl AuthRequest {
    /// From a query string.
    pub fn parse(query: &str) -> Self {
        Self {
            params: form_urlencoded::parse(query.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        }
    }

    fn get(&self, k: &str) -> Option<&str> {
        self.params.get(k).map(String::as_str)
    }

    /// Where the answer goes: the `redirect_uri`, if it is an `http` or
    /// `https` URL.
    pub fn redirect_uri(&self) -> Option<&str> {
        self.get("redirect_uri")
            .filter(|u| u.starts_with("https://") || u.starts_with("http://"))
    }

    /// The `state` to send back.
    pub fn state(&self) -> Option<&str> {
        self.get("state")
    }

    /// Whether the request asks for no login form (`prompt=none`).
    pub fn prompt_none(&self) -> bool {
        self.get("prompt")
            .is_some_and(|p| p.split(' ').any(|x| x == "none"))
    }

    /// Checks the request: a known client, `response_type=code`, the
    /// `openid` scope, a PKCE method the provider knows.
    ///
    /// # Errors
    /// The OAuth error the provider redirects with (or shows, without a
    /// usable `redirect_uri` or client).
    pub fn check(&self, realms: &Realms) -> Result<(), OAuthError> {
        let id = self
            .get("client_id")
            .ok_or_else(|| oauth("invalid_request", "missing client_id"))?;
        if client(realms, id).is_none() {
            return Err(oauth("invalid_client", format!("unknown client '{id}'")));
        }
        if self.redirect_uri().is_none() {
            return Err(oauth("invalid_request", "missing or invalid redirect_uri"));
        }
        if self.get("response_type") != Some("code") {
            return Err(oauth(
                "unsupported_response_type",
                "only the authorization code flow is supported",
            ));
        }
        if !self
            .get("scope")
            .is_some_and(|s| s.split(' ').any(|x| x == "openid"))
        {
            return Err(oauth("invalid_scope", "the scope must include 'openid'"));
        }
        if self.get("code_challenge").is_some()
            && !matches!(
                self.get("code_challenge_method"),
                None | Some("S256" | "plain")
            )
        {
            return Err(oauth(
                "invalid_request",
                "unsupported code_challenge_method",
            ));
        }
        Ok(())
    }

    /// Authenticates `username` with `password` against the client's
    /// accounts and answers the URL to redirect to: the `redirect_uri`
    /// with `code` and `state`.
    ///
    /// # Errors
    /// `access_denied` for a wrong user name or password; the refusals of
    /// [`AuthRequest::check`].
    pub fn grant(
        &self,
        realms: &Realms,
        key: &SecretKey,
        username: &str,
        password: &str,
        now: i64,
    ) -> Result<String, OAuthError> {
        self.check(realms)?;
        let client_id = self.get("client_id").unwrap_or_default();
        let accounts = client(realms, client_id)
            .map(|c| c.accounts)
            .ok_or_else(|| oauth("invalid_client", "unknown client"))?;
        let known = accounts.users.get(username).is_some_and(|u| {
            super::super::shadow::Given::Clear(password).matches(u.password.as_deref())
        });
        if !known {
            return Err(oauth("access_denied", "Invalid username or password."));
        }
        let grant = Grant {
            client_id: client_id.to_string(),
            user: username.to_string(),
            redirect_uri: self.redirect_uri().unwrap_or_default().to_string(),
            scope: self.get("scope").unwrap_or_default().to_string(),
            nonce: self.get("nonce").map(str::to_string),
            challenge: self.get("code_challenge").map(|c| {
                (
                    c.to_string(),
                    self.get("code_challenge_method")
                        .unwrap_or("plain")
                        .to_string(),
                )
            }),
            exp: now + CODE_LIFETIME,
        };
        let code = seal(key, "code", &grant);
        let mut answer = vec![("code", code.as_str())];
        if let Some(s) = self.state() {
            answer.push(("state", s));
        }
        Ok(with_query(&grant.redirect_uri, &answer))
    }

    /// The URL to redirect to with an error (`None` without a usable
    /// `redirect_uri` or client: the error is shown instead).
    pub fn error_redirect(&self, realms: &Realms, e: &OAuthError) -> Option<String> {
        let uri = self.redirect_uri()?;
        client(realms, self.get("client_id")?)?;
        let mut answer = vec![("error", e.code), ("error_description", &e.description)];
        if let Some(s) = self.state() {
            answer.push(("state", s));
        }
        Some(with_query(uri, &answer))
    }
}

/// `url` with `pairs` added to its query.
pub fn with_query(url: &str, pairs: &[(&str, &str)]) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        q.append_pair(k, v);
    }
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{}", q.finish())
}

/// What an authorization code stands for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Grant {
    client_id: String,
    user: String,
    redirect_uri: String,
    scope: String,
    nonce: Option<String>,
    /// The PKCE challenge and its method.
    challenge: Option<(String, String)>,
    exp: i64,
}

/// What an access token stands for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Access {
    client_id: String,
    user: String,
    scope: String,
    exp: i64,
}

/// `payload.mac`, both base64url: a value only this server can make.
fn seal<T: Serialize>(key: &SecretKey, kind: &str, value: &T) -> String {
    let payload = serde_json::to_vec(value).unwrap_or_default();
    let mac = key.mac(&[b"openid", kind.as_bytes(), &payload]);
    format!("{}.{}", B64.encode(&payload), B64.encode(mac))
}

fn open<T: for<'de> Deserialize<'de>>(key: &SecretKey, kind: &str, sealed: &str) -> Option<T> {
    let (payload, mac) = sealed.split_once('.')?;
    let payload = B64.decode(payload).ok()?;
    let mac = B64.decode(mac).ok()?;
    let want = key.mac(&[b"openid", kind.as_bytes(), &payload]);
    if !super::super::shadow::same(&want, &mac) {
        return None;
    }
    serde_json::from_slice(&payload).ok()
}

/// A token request (the form of the token endpoint), with the client's
/// credentials as it gave them (HTTP Basic or the form).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenRequest {
    /// `grant_type`.
    pub grant_type: String,
    /// `code`.
    pub code: String,
    /// `redirect_uri`.
    pub redirect_uri: String,
    /// `code_verifier`.
    pub code_verifier: Option<String>,
    /// `client_id`.
    pub client_id: String,
    /// `client_secret`.
    pub client_secret: Option<String>,
}

/// The token endpoint's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tokens {
    /// `access_token`.
    pub access_token: String,
    /// `id_token`: a JWT signed with RS256.
    pub id_token: String,
}

impl Tokens {
    /// As the token endpoint answers it.
    pub fn document(&self) -> Value {
        json!({
            "access_token": self.access_token,
            "token_type": "Bearer",
            "expires_in": TOKEN_LIFETIME,
            "id_token": self.id_token,
        })
    }
}

/// The token endpoint: exchanges an authorization code for an access
/// token and an ID token, issued by `issuer`.
///
/// # Errors
/// `invalid_client` for an unknown client or a wrong secret,
/// `invalid_grant` for a code that is not this client's, has expired,
/// was given for another redirect URI, or whose PKCE verifier does not
/// match.
pub fn token(
    realms: &Realms,
    key: &SecretKey,
    issuer: &str,
    req: &TokenRequest,
    now: i64,
) -> Result<Tokens, OAuthError> {
    if req.grant_type != "authorization_code" {
        return Err(oauth(
            "unsupported_grant_type",
            "only authorization_code is supported",
        ));
    }
    let c = client(realms, &req.client_id)
        .ok_or_else(|| oauth("invalid_client", "client authentication failed"))?;
    if let Some(secret) = &c.secret
        && req.client_secret.as_deref() != Some(secret.as_str())
    {
        return Err(oauth("invalid_client", "client authentication failed"));
    }
    let grant: Grant = open(key, "code", &req.code)
        .ok_or_else(|| oauth("invalid_grant", "invalid authorization code"))?;
    if grant.client_id != req.client_id {
        return Err(oauth("invalid_grant", "code was issued to another client"));
    }
    if grant.exp < now {
        return Err(oauth("invalid_grant", "authorization code expired"));
    }
    if grant.redirect_uri != req.redirect_uri {
        return Err(oauth("invalid_grant", "redirect_uri mismatch"));
    }
    if let Some((challenge, method)) = &grant.challenge {
        let Some(verifier) = &req.code_verifier else {
            return Err(oauth("invalid_grant", "missing code_verifier"));
        };
        let derived = if method == "S256" {
            pkce_challenge(verifier)
        } else {
            verifier.clone()
        };
        if &derived != challenge {
            return Err(oauth("invalid_grant", "PKCE verification failed"));
        }
    }
    if !c.accounts.users.contains_key(&grant.user) {
        return Err(oauth("invalid_grant", "the user no longer exists"));
    }
    let mut claims = profile_claims(c.accounts, &grant.user, &grant.scope);
    claims.insert("iss".into(), json!(issuer));
    claims.insert("aud".into(), json!(grant.client_id));
    claims.insert("iat".into(), json!(now));
    claims.insert("auth_time".into(), json!(now));
    claims.insert("exp".into(), json!(now + TOKEN_LIFETIME));
    if let Some(n) = &grant.nonce {
        claims.insert("nonce".into(), json!(n));
    }
    let access = Access {
        client_id: grant.client_id,
        user: grant.user,
        scope: grant.scope,
        exp: now + TOKEN_LIFETIME,
    };
    Ok(Tokens {
        access_token: seal(key, "access", &access),
        id_token: sign_jwt(&Value::Object(claims)),
    })
}

/// The userinfo endpoint: the claims of the access token's user.
///
/// # Errors
/// `invalid_token` for a token that is not this server's, or has
/// expired, or whose user or client is gone.
pub fn userinfo(
    realms: &Realms,
    key: &SecretKey,
    access_token: &str,
    now: i64,
) -> Result<Value, OAuthError> {
    let invalid = || oauth("invalid_token", "the access token is invalid");
    let a: Access = open(key, "access", access_token).ok_or_else(invalid)?;
    if a.exp < now {
        return Err(oauth("invalid_token", "the access token expired"));
    }
    let c = client(realms, &a.client_id).ok_or_else(invalid)?;
    if !c.accounts.users.contains_key(&a.user) {
        return Err(invalid());
    }
    Ok(Value::Object(profile_claims(c.accounts, &a.user, &a.scope)))
}

/// A user's claims for `scope`: `sub` always, `email` with the `email`
/// scope, the names with `profile`, and `groups` (the groups the user is
/// a member of) always.
fn profile_claims(
    accounts: &super::super::realms::Directory,
    user: &str,
    scope: &str,
) -> serde_json::Map<String, Value> {
    let scopes: Vec<&str> = scope.split(' ').collect();
    let mut c = serde_json::Map::new();
    c.insert("sub".into(), json!(user));
    let Some(u) = accounts.users.get(user) else {
        return c;
    };
    if scopes.contains(&"email")
        && let Some(e) = &u.email
    {
        c.insert("email".into(), json!(e));
        c.insert("email_verified".into(), json!(true));
    }
    if scopes.contains(&"profile") {
        c.insert("preferred_username".into(), json!(user));
        if let Some(f) = &u.firstname {
            c.insert("given_name".into(), json!(f));
        }
        if let Some(l) = &u.lastname {
            c.insert("family_name".into(), json!(l));
        }
        let name: Vec<&str> = [u.firstname.as_deref(), u.lastname.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        if !name.is_empty() {
            c.insert("name".into(), json!(name.join(" ")));
        }
    }
    let groups: Vec<&String> = accounts
        .groups
        .iter()
        .filter(|(_, members)| members.contains(user))
        .map(|(g, _)| g)
        .collect();
    c.insert("groups".into(), json!(groups));
    c
}

/// PKCE's S256: base64url(SHA-256(verifier)).
pub fn pkce_challenge(verifier: &str) -> String {
    B64.encode(Sha256::digest(verifier.as_bytes()))
}

/// The provider's signing key: an RSA key made once per process.
struct SigningKey {
    pair: rcgen::KeyPair,
    kid: String,
    n: Vec<u8>,
    e: Vec<u8>,
}

fn signing_key() -> &'static SigningKey {
    static KEY: OnceLock<SigningKey> = OnceLock::new();
    KEY.get_or_init(|| {
        let pair =
            rcgen::KeyPair::generate_rsa_for(&rcgen::PKCS_RSA_SHA256, rcgen::RsaKeySize::_2048)
                .expect("an RSA key can be made");
        let raw = pair.public_key_raw();
        let (n, e) = super::jwt::rsa_public_parts(raw).expect("an RSA public key");
        let kid = hex::encode(&Sha256::digest(raw)[..8]);
        SigningKey { pair, kid, n, e }
    })
}

/// The JWKS: the provider's one signing key.
pub fn jwks() -> Value {
    let k = signing_key();
    json!({
        "keys": [{
            "kty": "RSA",
            "use": "sig",
            "alg": "RS256",
            "kid": k.kid,
            "n": B64.encode(&k.n),
            "e": B64.encode(&k.e),
        }]
    })
}

fn sign_jwt(claims: &Value) -> String {
    use rcgen::SigningKey as _;
    let k = signing_key();
    let header = json!({"alg": "RS256", "typ": "JWT", "kid": k.kid});
    let input = format!(
        "{}.{}",
        B64.encode(header.to_string()),
        B64.encode(claims.to_string())
    );
    let sig = k.pair.sign(input.as_bytes()).expect("an RSA key signs");
    format!("{input}.{}", B64.encode(sig))
}

#[cfg(test)]
pub(super) fn sign_for_test(claims: &Value) -> String {
    sign_jwt(claims)
}
