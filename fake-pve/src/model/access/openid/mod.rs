//! OpenID Connect logins to `openid` realms (pve-access-control
//! `API2/OpenId.pm`, proxmox-openid's authenticator), against the
//! provider fake-pve emulates (`provider`).
//!
//! `auth-url` keeps a pending login (its CSRF token, nonce and PKCE
//! verifier, for ten minutes) and answers the provider's authorization
//! URL, whose `state` is the public half: the CSRF token and the realm as
//! JSON. `login` takes that pending login back by its `state` (once),
//! exchanges the code at the token endpoint with the PKCE verifier and
//! the client's credentials, checks the ID token (signature by a key of
//! the JWKS, issuer, audience, expiry, nonce), merges the userinfo
//! claims, names the user by the realm's `username-claim`, creates it
//! with `autocreate`, and maps the `groups-claim` to `<group>-<realm>`
//! groups. Every refusal of a login is the same 401, as PVE hides why.

pub mod jwt;
pub mod provider;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;

use super::realms::{Realm, RealmType};
use super::*;
use crate::model::conf_value::ConfValue;
use crate::model::context::{Context, SecretKey};

/// How long a pending login waits for its `login`, in seconds.
pub const STATE_TIMEOUT: i64 = 600;

/// A pending login (proxmox-openid's `PrivateAuthState`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthState {
    realm: String,
    csrf_token: String,
    nonce: String,
    pkce_verifier: String,
    ctime: i64,
}

/// The public half of a pending login, as `state` carries it.
#[derive(Debug, Serialize, Deserialize)]
struct PublicState {
    csrf_token: String,
    realm: String,
}

/// The pending logins of every realm.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthStates {
    states: Vec<AuthState>,
}

impl AuthStates {
    /// Whether no login is pending.
    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }

    fn store(&mut self, state: AuthState, now: i64) {
        self.states
            .retain(|s| s.realm != state.realm || s.ctime + STATE_TIMEOUT >= now);
        self.states.push(state);
    }

    /// Takes a pending login back by the public `state`: its realm and
    /// what was kept.
    ///
    /// # Errors
    /// `no openid auth state found (possible timeout)`, or the JSON
    /// error of a `state` that is not one.
    fn take(&mut self, public: &str, now: i64) -> Result<AuthState> {
        let p: PublicState =
            serde_json::from_str(public).map_err(|e| Error::failed(e.to_string()))?;
        self.states
            .retain(|s| s.realm != p.realm || s.ctime + STATE_TIMEOUT >= now);
        let at = self
            .states
            .iter()
            .position(|s| s.realm == p.realm && s.csrf_token == p.csrf_token)
            .ok_or_else(|| Error::failed("no openid auth state found (possible timeout)"))?;
        Ok(self.states.remove(at))
    }
}

/// A realm's OpenID options, as `lookup_openid_auth` reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Settings {
    issuer: String,
    client_id: String,
    client_key: Option<String>,
    scopes: Vec<String>,
    prompt: Option<String>,
    acr_values: Vec<String>,
    audiences: Vec<String>,
    query_userinfo: bool,
    username_claim: String,
    autocreate: bool,
    groups_claim: Option<String>,
    groups_autocreate: bool,
    groups_overwrite: bool,
}

fn split(s: &str) -> Vec<String> {
    s.split(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .filter(|x| !x.is_empty())
        .map(str::to_string)
        .collect()
}

impl Settings {
    fn of(realm: &Realm) -> Self {
        let o = realm.options();
        let text = |k: &str| o.get(k).map(ConfValue::text);
        let flag = |k: &str, default: bool| {
            o.get(k)
                .map_or(default, |v| matches!(v, ConfValue::Int(n) if *n != 0))
        };
        Self {
            issuer: text("issuer-url").unwrap_or_default(),
            client_id: text("client-id").unwrap_or_default(),
            client_key: text("client-key"),
            scopes: split(&text("scopes").unwrap_or_else(|| "email profile".into())),
            prompt: text("prompt"),
            acr_values: text("acr-values").map(|a| split(&a)).unwrap_or_default(),
            audiences: text("audiences").map(|a| split(&a)).unwrap_or_default(),
            query_userinfo: flag("query-userinfo", true),
            username_claim: text("username-claim").unwrap_or_else(|| "sub".into()),
            autocreate: flag("autocreate", false),
            groups_claim: text("groups-claim"),
            groups_autocreate: flag("groups-autocreate", false),
            groups_overwrite: flag("groups-overwrite", false),
        }
    }

    /// The provider's metadata (its discovery).
    ///
    /// # Errors
    /// `Request failed` for an issuer that is not the emulated provider:
    /// the node reaches no other.
    fn discover(&self) -> Result<provider::Metadata> {
        if provider::is_ours(&self.issuer) {
            Ok(provider::Metadata::of(&self.issuer))
        } else {
            Err(Error::failed("Request failed"))
        }
    }
}

/// A random base64url string of `bytes` secret bytes.
fn random_b64(rq: &mut Context, bytes: usize) -> String {
    let mut out = Vec::with_capacity(bytes + 8);
    while out.len() < bytes {
        out.extend(rq.secret_u64().to_le_bytes());
    }
    out.truncate(bytes);
    B64.encode(out)
}

/// What a successful OpenID login found: the user and the groups it was
/// put into (for the syslog lines PVE writes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenIdLogin {
    /// `name@realm`.
    pub userid: String,
    /// Whether the user was created now.
    pub created: bool,
    /// The groups the user was added to.
    pub groups: Vec<String>,
}

impl Access {
    /// `lookup_openid_auth`: an `openid` realm's settings.
    ///
    /// # Errors
    /// `authentication domain 'x' does not exist`, `wrong realm type (t !=
    /// openid)`, and the discovery's error.
    fn openid_realm(&self, realm: &str) -> Result<(Settings, provider::Metadata)> {
        let r = self.realms.get(realm).ok_or_else(|| {
            Error::failed(format!("authentication domain '{realm}' does not exist"))
        })?;
        if r.kind() != RealmType::Openid {
            return Err(Error::failed(format!(
                "wrong realm type ({} != openid)",
                r.kind().as_str()
            )));
        }
        let s = Settings::of(r);
        let meta = s.discover()?;
        Ok((s, meta))
    }

    /// `POST /access/openid/auth-url`: keeps a pending login and answers
    /// the provider's authorization URL for it.
    ///
    /// # Errors
    /// As `lookup_openid_auth` refuses.
    pub fn openid_auth_url(
        &mut self,
        realm: &str,
        redirect_url: &str,
        rq: &mut Context,
    ) -> Result<String> {
        let (s, meta) = self.openid_realm(realm)?;
        let now = rq.now();
        let state = AuthState {
            realm: realm.to_string(),
            csrf_token: random_b64(rq, 16),
            nonce: random_b64(rq, 16),
            pkce_verifier: random_b64(rq, 32),
            ctime: now,
        };
        let public = serde_json::to_string(&PublicState {
            csrf_token: state.csrf_token.clone(),
            realm: realm.to_string(),
        })
        .map_err(|e| Error::failed(e.to_string()))?;
        let challenge = provider::pkce_challenge(&state.pkce_verifier);
        let mut scope = vec!["openid".to_string()];
        scope.extend(s.scopes.iter().cloned());
        let scope = scope.join(" ");
        let acr = s.acr_values.join(" ");
        let mut pairs = vec![
            ("response_type", "code"),
            ("client_id", s.client_id.as_str()),
            ("state", public.as_str()),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("redirect_uri", redirect_url),
            ("scope", scope.as_str()),
            ("nonce", state.nonce.as_str()),
        ];
        if !acr.is_empty() {
            pairs.push(("acr_values", acr.as_str()));
        }
        pairs.push(("display", "page"));
        if let Some(p) = &s.prompt {
            pairs.push(("prompt", p.as_str()));
        }
        let url = provider::with_query(&meta.authorization_endpoint, &pairs);
        self.openid_states.store(state, now);
        Ok(url)
    }

    /// `POST /access/openid/login`: the code exchanged, the ID token
    /// checked, the user found or created, its groups mapped.
    ///
    /// # Errors
    /// The reason (the API answers every one with 401 `authentication
    /// failure`).
    pub fn openid_login(
        &mut self,
        state: &str,
        code: &str,
        redirect_url: &str,
        key: &SecretKey,
        now: i64,
    ) -> Result<OpenIdLogin> {
        let pending = self.openid_states.take(state, now)?;
        let realm = pending.realm.clone();
        let (s, meta) = self.openid_realm(&realm)?;
        let req = provider::TokenRequest {
            grant_type: "authorization_code".into(),
            code: code.to_string(),
            redirect_uri: redirect_url.to_string(),
            code_verifier: Some(pending.pkce_verifier.clone()),
            client_id: s.client_id.clone(),
            client_secret: s.client_key.clone(),
        };
        let tokens = provider::token(&self.realms, key, &meta.issuer, &req, now)
            .map_err(|e| Error::failed(format!("Failed to contact token endpoint: {e}")))?;
        let expect = jwt::Expect {
            issuer: &meta.issuer,
            client_id: &s.client_id,
            audiences: &s.audiences,
            nonce: &pending.nonce,
            now,
        };
        let mut info = jwt::verify(&tokens.id_token, &provider::jwks(), expect)
            .map_err(|e| Error::failed(format!("Failed to verify ID token: {e}")))?;
        if s.query_userinfo {
            let extra = provider::userinfo(&self.realms, key, &tokens.access_token, now)
                .map_err(|e| Error::failed(format!("Failed to contact userinfo endpoint: {e}")))?;
            if let (Some(map), Value::Object(more)) = (info.as_object_mut(), extra) {
                for (k, v) in more {
                    map.entry(k).or_insert(v);
                }
            }
        }
        self.openid_user(&realm, &s, &info, now)
    }

    /// The user of a login's claims, created with `autocreate`, and its
    /// groups from the `groups-claim`.
    fn openid_user(
        &mut self,
        realm: &str,
        s: &Settings,
        info: &Value,
        now: i64,
    ) -> Result<OpenIdLogin> {
        let claim = s.username_claim.as_str();
        let unique = match &info[claim] {
            Value::String(v) => v.clone(),
            Value::Null if claim == "subject" => claim_text(&info["sub"]),
            Value::Null if claim == "username" => match &info["preferred_username"] {
                Value::Null => {
                    return Err(Error::failed("missing claim 'preferred_username'"));
                }
                v => claim_text(v),
            },
            Value::Null => {
                return Err(Error::failed(format!(
                    "missing configured claim '{claim}' in returned info object"
                )));
            }
            v => claim_text(v),
        };
        let userid = format!("{unique}@{realm}");
        if !valid_userid(&userid) {
            return Err(Error::failed(format!(
                "value '{userid}' does not look like a valid user name"
            )));
        }
        let mut created = false;
        if s.autocreate && !self.users.contains_key(&userid) {
            let mut u = User::new(&userid);
            u.email = info["email"].as_str().map(str::to_string);
            u.firstname = info["given_name"].as_str().map(str::to_string);
            u.lastname = info["family_name"].as_str().map(str::to_string);
            self.users.insert(userid.clone(), u);
            created = true;
        } else {
            self.check_user_enabled(&userid, now)?;
        }
        let groups = match &s.groups_claim {
            Some(g) => self.openid_groups(realm, &userid, s, &info[g.as_str()]),
            None => Vec::new(),
        };
        Ok(OpenIdLogin {
            userid,
            created,
            groups,
        })
    }

    /// The groups claim mapped: `<group>-<realm>` for each valid name,
    /// the existing ones (all with `groups-autocreate`, which creates the
    /// others), after removing the user from every group with
    /// `groups-overwrite`. A claim that is missing or not a list changes
    /// nothing.
    fn openid_groups(
        &mut self,
        realm: &str,
        userid: &str,
        s: &Settings,
        claim: &Value,
    ) -> Vec<String> {
        let Value::Array(list) = claim else {
            return Vec::new();
        };
        let named: BTreeSet<String> = list
            .iter()
            .filter_map(Value::as_str)
            .filter(|g| valid_groupid(g))
            .map(|g| format!("{g}-{realm}"))
            .collect();
        let joined: BTreeSet<String> = if s.groups_autocreate {
            named
        } else {
            named
                .into_iter()
                .filter(|g| self.groups.contains_key(g))
                .collect()
        };
        if s.groups_overwrite {
            for g in self.groups.values_mut() {
                g.members.remove(userid);
            }
        }
        for g in &joined {
            self.groups
                .entry(g.clone())
                .or_default()
                .members
                .insert(userid.to_string());
        }
        joined.into_iter().collect()
    }
}

/// A claim as Perl would make it a string.
fn claim_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests;
