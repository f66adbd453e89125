//! Second factors (`priv/tfa.cfg`, proxmox-tfa's `api` module as
//! pve-access-control `API2/TFA.pm` and `AccessControl.pm` use it).
//!
//! TOTP entries are checked as RFC 6238 says (HMAC-SHA1/256/512 over the
//! 30-second step count, a step either side accepted, a value never
//! accepted twice); recovery keys are ten one-time keys. WebAuthn and U2F
//! need a `webauthn`/`u2f` setting in `datacenter.cfg`, which fake-pve
//! does not hold, so PVE's refusal without one is answered; Yubico OTP
//! needs a realm set up for it and Yubico's servers.
//!
//! Failures lock out as proxmox-tfa does: 8 failed TOTP values lock the
//! user's TOTP until a recovery key is used or an administrator unlocks
//! it; 100 failed second factors lock every factor for 12 hours.

use hmac::{Hmac, Mac};

use super::*;
use crate::model::Context;

/// Failed TOTP values before TOTP is locked.
const TOTP_FAILURE_LIMIT: u32 = 8;
/// Failed second factors before every factor is locked.
const TFA_FAILURE_LIMIT: u32 = 100;
/// How long that lock lasts, in seconds.
const TFA_LOCK_SECONDS: i64 = 12 * 3600;

/// The hash of a TOTP entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Algorithm {
    /// HMAC-SHA1 (the default).
    #[serde(rename = "SHA1")]
    Sha1,
    /// HMAC-SHA256.
    #[serde(rename = "SHA256")]
    Sha256,
    /// HMAC-SHA512.
    #[serde(rename = "SHA512")]
    Sha512,
}

/// A TOTP key, as an `otpauth://totp/` URI describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totp {
    /// The shared secret, hex.
    secret: String,
    /// Digits of a value (6 to 8).
    digits: u32,
    /// Seconds per step.
    step: u64,
    /// The HMAC's hash.
    algorithm: Algorithm,
}

/// Decodes RFC 4648 base32 (upper or lower case, padding ignored).
fn base32_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut buf, mut bits) = (0u64, 0u32);
    for c in s.trim_end_matches('=').bytes() {
        let v = match c.to_ascii_uppercase() {
            c @ b'A'..=b'Z' => c - b'A',
            c @ b'2'..=b'7' => c - b'2' + 26,
            _ => return None,
        };
        buf = (buf << 5) | u64::from(v);
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push(((buf >> bits) & 0xff) as u8);
        }
    }
    Some(out)
}

/// Why an `otpauth://` URI is refused, in proxmox-tfa's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TotpUriError {
    /// Not `otpauth://totp/...`.
    #[error("not an otpauth uri")]
    NotOtpauth,
    /// No query.
    #[error("missing '?' in otp uri")]
    MissingQuery,
    /// A query part without `=`.
    #[error("bad value in otpauth uri")]
    BadValue,
    /// A secret that is not base32.
    #[error("failed to decode otp secret in otpauth url")]
    BadSecret,
    /// `digits` or `period` not a number.
    #[error("invalid digit found in string")]
    InvalidDigit,
    /// An algorithm other than SHA1, SHA256, SHA512.
    #[error("unsupported algorithm: '{0}'")]
    Algorithm(String),
    /// A parameter proxmox-tfa does not know.
    #[error("unrecognized otpauth uri parameter: {0}")]
    UnknownParameter(String),
    /// No `secret`.
    #[error("missing secret in otpauth url")]
    MissingSecret,
    /// Digits outside 6 to 8, or a zero period.
    #[error("invalid totp parameters")]
    InvalidParameters,
}

impl Totp {
    /// Parses an `otpauth://totp/LABEL?secret=...` URI.
    ///
    /// # Errors
    /// proxmox-tfa's reasons (`not an otpauth uri`, `missing secret in
    /// otpauth url`, ...).
    pub fn parse(uri: &str) -> std::result::Result<Self, TotpUriError> {
        let Some(rest) = uri.strip_prefix("otpauth://totp/") else {
            return Err(TotpUriError::NotOtpauth);
        };
        let Some((_, query)) = rest.split_once('?') else {
            return Err(TotpUriError::MissingQuery);
        };
        let mut totp = Self {
            secret: String::new(),
            digits: 6,
            step: 30,
            algorithm: Algorithm::Sha1,
        };
        for part in query.split('&') {
            let Some((k, v)) = part.split_once('=') else {
                return Err(TotpUriError::BadValue);
            };
            let v = crate::model::percent_decoded(v);
            match crate::model::percent_decoded(k).as_ref() {
                "secret" => {
                    totp.secret = hex::encode(base32_decode(&v).ok_or(TotpUriError::BadSecret)?);
                }
                "digits" => {
                    totp.digits = v.parse().map_err(|_| TotpUriError::InvalidDigit)?;
                }
                "step" | "period" => {
                    totp.step = v.parse().map_err(|_| TotpUriError::InvalidDigit)?;
                }
                "algorithm" => {
                    totp.algorithm = match v.to_ascii_uppercase().as_str() {
                        "SHA1" => Algorithm::Sha1,
                        "SHA256" => Algorithm::Sha256,
                        "SHA512" => Algorithm::Sha512,
                        _ => return Err(TotpUriError::Algorithm(v.to_string())),
                    };
                }
                "issuer" => {}
                other => return Err(TotpUriError::UnknownParameter(other.to_string())),
            }
        }
        if totp.secret.is_empty() {
            return Err(TotpUriError::MissingSecret);
        }
        if !(6..=8).contains(&totp.digits) || totp.step == 0 {
            return Err(TotpUriError::InvalidParameters);
        }
        Ok(totp)
    }

    /// The value for step `counter` (RFC 4226's HOTP over it).
    pub fn value(&self, counter: u64) -> String {
        let key = hex::decode(&self.secret).unwrap_or_default();
        let msg = counter.to_be_bytes();
        let mac = match self.algorithm {
            Algorithm::Sha1 => {
                let mut m = <Hmac<sha1::Sha1> as Mac>::new_from_slice(&key)
                    .expect("HMAC takes any key length");
                m.update(&msg);
                m.finalize().into_bytes().to_vec()
            }
            Algorithm::Sha256 => {
                let mut m = <Hmac<sha2::Sha256> as Mac>::new_from_slice(&key)
                    .expect("HMAC takes any key length");
                m.update(&msg);
                m.finalize().into_bytes().to_vec()
            }
            Algorithm::Sha512 => {
                let mut m = <Hmac<sha2::Sha512> as Mac>::new_from_slice(&key)
                    .expect("HMAC takes any key length");
                m.update(&msg);
                m.finalize().into_bytes().to_vec()
            }
        };
        let off = usize::from(mac[mac.len() - 1] & 0x0f);
        let bin = (u32::from(mac[off] & 0x7f) << 24)
            | (u32::from(mac[off + 1]) << 16)
            | (u32::from(mac[off + 2]) << 8)
            | u32::from(mac[off + 3]);
        let n = bin % 10u32.pow(self.digits);
        format!("{n:0width$}", width = self.digits as usize)
    }

    /// The step count at `now` (epoch seconds).
    pub fn counter(&self, now: i64) -> u64 {
        now.max(0).unsigned_abs() / self.step
    }

    /// The step count `value` is valid for at `now`, a step either side
    /// accepted.
    pub fn verify(&self, value: &str, now: i64) -> Option<u64> {
        if value.len() != self.digits as usize || !value.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let c = self.counter(now);
        [c.saturating_sub(1), c, c + 1]
            .into_iter()
            .find(|&n| self.value(n) == value)
    }
}

/// What every entry has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Info {
    id: String,
    description: String,
    created: i64,
    enable: bool,
}

impl Info {
    fn view(&self, kind: &str) -> Value {
        let mut v = json!({ "type": kind, "id": self.id });
        if !self.description.is_empty() {
            v["description"] = json!(self.description);
        }
        v["created"] = json!(self.created);
        if !self.enable {
            v["enable"] = json!(0);
        }
        v
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct TotpEntry {
    info: Info,
    totp: Totp,
    /// The last step count accepted (a value is never taken twice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_count: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Recovery {
    created: i64,
    /// The keys, as their digests (see [`super::shadow::token_digest`]:
    /// as PVE's `tfa.cfg`, not the keys themselves; a save of an older
    /// release keeps them in clear, which is still accepted); a used one
    /// is `None` (its index stays).
    keys: Vec<Option<String>>,
}

/// One user's second factors and lockout state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct UserTfa {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    totp: Vec<TotpEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    recovery: Option<Recovery>,
    #[serde(default)]
    totp_locked: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tfa_locked_until: Option<i64>,
    #[serde(default)]
    totp_failures: u32,
    #[serde(default)]
    tfa_failures: u32,
}

impl UserTfa {
    fn is_empty(&self) -> bool {
        self.totp.is_empty() && self.recovery.is_none()
    }

    fn entries(&self) -> Vec<Value> {
        let mut out = Vec::new();
        if let Some(r) = &self.recovery {
            out.push(recovery_info(r.created).view("recovery"));
        }
        for e in &self.totp {
            out.push(e.info.view("totp"));
        }
        out
    }

    fn recovery_state(&self) -> Option<Vec<usize>> {
        self.recovery.as_ref().map(|r| {
            r.keys
                .iter()
                .enumerate()
                .filter_map(|(i, k)| k.as_ref().map(|_| i))
                .collect()
        })
    }

    fn tfa_locked(&self, now: i64) -> bool {
        self.tfa_locked_until.is_some_and(|t| now < t)
    }
}

fn recovery_info(created: i64) -> Info {
    Info {
        id: "recovery".into(),
        description: "recovery keys".into(),
        created,
        enable: true,
    }
}

/// What a seeded entry is listed with.
#[derive(Debug, Clone)]
pub struct SeedInfo {
    /// Its id.
    pub id: String,
    /// Its description.
    pub description: String,
    /// When it was made, epoch seconds.
    pub created: i64,
    /// Whether it is enabled.
    pub enable: bool,
}

/// Every user's second factors.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tfa {
    users: BTreeMap<String, UserTfa>,
}

/// What `POST /access/tfa/{userid}` asks for.
#[derive(Debug, Clone, Default)]
pub struct AddTfa {
    /// `totp`, `recovery`, `webauthn`, `u2f` or `yubico`.
    pub kind: String,
    /// `description`.
    pub description: Option<String>,
    /// `totp`: the otpauth URI.
    pub totp: Option<String>,
    /// `value`: the current TOTP value (or a response).
    pub value: Option<String>,
    /// `challenge`.
    pub challenge: Option<String>,
}

impl Tfa {
    /// Whether no user has second factors.
    pub fn is_empty(&self) -> bool {
        self.users.is_empty()
    }

    /// Whether `userid` has second factors.
    pub fn has_user(&self, userid: &str) -> bool {
        self.users.contains_key(userid)
    }

    /// `GET /access/tfa` before its filter: every user with second
    /// factors.
    pub fn list(&self, now: i64) -> Vec<Value> {
        self.users
            .iter()
            .map(|(id, u)| {
                let mut v = json!({ "userid": id, "entries": u.entries() });
                if u.totp_locked {
                    v["totp-locked"] = json!(1);
                }
                if let Some(t) = u.tfa_locked_until.filter(|&t| t > now) {
                    v["tfa-locked-until"] = json!(t);
                }
                v
            })
            .collect()
    }

    /// `tfa_lock_status`: `totp-locked` and `tfa-locked-until` of a
    /// locked-out user, as `GET /access/users` adds them.
    pub fn lock_status(&self, userid: &str, now: i64) -> Option<serde_json::Map<String, Value>> {
        let u = self.users.get(userid)?;
        let mut m = serde_json::Map::new();
        if u.totp_locked {
            m.insert("totp-locked".into(), json!(1));
        }
        if let Some(t) = u.tfa_locked_until.filter(|&t| t > now) {
            m.insert("tfa-locked-until".into(), json!(t));
        }
        (!m.is_empty()).then_some(m)
    }

    /// `GET /access/tfa/{userid}`.
    pub fn list_user(&self, userid: &str) -> Vec<Value> {
        self.users
            .get(userid)
            .map(UserTfa::entries)
            .unwrap_or_default()
    }

    /// The kinds of entries a user has (`multiple` of
    /// `GET /access/users/{userid}/tfa`).
    pub fn user_types(&self, userid: &str) -> Vec<&'static str> {
        let Some(u) = self.users.get(userid) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if !u.totp.is_empty() {
            out.push("totp");
        }
        out
    }

    /// `GET /access/tfa/{userid}/{id}`.
    ///
    /// # Errors
    /// 404 `No such tfa entry 'x'`.
    pub fn entry(&self, userid: &str, id: &str) -> Result<Value> {
        let u = self.users.get(userid);
        let found = u.and_then(|u| {
            if id == "recovery" {
                return u
                    .recovery
                    .as_ref()
                    .map(|r| recovery_info(r.created).view("recovery"));
            }
            u.totp
                .iter()
                .find(|e| e.info.id == id)
                .map(|e| e.info.view("totp"))
        });
        found.ok_or_else(|| Error::HttpNotFound(format!("No such tfa entry '{id}'")))
    }

    /// `POST /access/tfa/{userid}` for the kinds fake-pve can add: a
    /// verified TOTP entry or a set of recovery keys. Answers PVE's
    /// `{id, recovery?}`.
    ///
    /// # Errors
    /// proxmox-tfa's refusals (500); 501 for a Yubico key on a realm set
    /// up for it.
    pub fn add(&mut self, userid: &str, req: AddTfa, rq: &mut Context) -> Result<Value> {
        let now = rq.now();
        let need_description = |d: Option<String>| {
            d.ok_or_else(|| Error::failed("'description' is required for new entries"))
        };
        match req.kind.as_str() {
            "totp" => {
                if req.challenge.is_some() {
                    return Err(Error::failed(
                        "'challenge' parameter is invalid for 'totp' entries",
                    ));
                }
                let description = need_description(req.description)?;
                let (Some(uri), Some(value)) = (req.totp, req.value) else {
                    return Err(Error::failed(
                        "'totp' type requires both 'totp' and 'value' parameters",
                    ));
                };
                let totp = Totp::parse(&uri).map_err(|e| Error::failed(e.to_string()))?;
                if totp.verify(&value, now).is_none() {
                    return Err(Error::failed("failed to verify TOTP challenge"));
                }
                let id = rq.uuid_v4();
                self.users
                    .entry(userid.to_string())
                    .or_default()
                    .totp
                    .push(TotpEntry {
                        info: Info {
                            id: id.clone(),
                            description,
                            created: now,
                            enable: true,
                        },
                        totp,
                        last_count: None,
                    });
                Ok(json!({ "id": id }))
            }
            "recovery" => {
                if req.totp.is_some() || req.value.is_some() || req.challenge.is_some() {
                    return Err(Error::failed(
                        "generating recovery tokens does not allow additional parameters",
                    ));
                }
                let user = self.users.entry(userid.to_string()).or_default();
                if user.recovery.is_some() {
                    return Err(Error::exists("user already has recovery keys"));
                }
                let keys: Vec<String> = (0..10)
                    .map(|_| {
                        // Drawn as secrets are: the journal's seed alone
                        // does not give them away.
                        let b = rq.secret_u64().to_be_bytes();
                        format!(
                            "{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}",
                            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]
                        )
                    })
                    .collect();
                user.recovery = Some(Recovery {
                    created: now,
                    keys: keys
                        .iter()
                        .map(|k| Some(super::shadow::token_digest(k)))
                        .collect(),
                });
                Ok(json!({ "id": "recovery", "recovery": keys }))
            }
            "webauthn" => {
                if req.totp.is_some() {
                    return Err(Error::failed(
                        "'totp' parameter is invalid for 'webauthn' entries",
                    ));
                }
                Err(Error::failed("no webauthn configuration available"))
            }
            "u2f" => {
                if req.totp.is_some() {
                    return Err(Error::failed(
                        "'totp' parameter is invalid for 'u2f' entries",
                    ));
                }
                Err(Error::failed("no u2f configuration available"))
            }
            other => Err(Error::invalid(
                "type",
                format!(
                    "value '{other}' does not have a value in the enumeration 'totp, u2f, webauthn, recovery, yubico'"
                ),
            )),
        }
    }

    /// `PUT /access/tfa/{userid}/{id}`.
    ///
    /// # Errors
    /// 500 `no such entry: <userid>/<id>` (recovery keys have no
    /// description or switch to change).
    pub fn update(
        &mut self,
        userid: &str,
        id: &str,
        description: Option<String>,
        enable: Option<bool>,
    ) -> Result<()> {
        let entry = self
            .users
            .get_mut(userid)
            .and_then(|u| u.totp.iter_mut().find(|e| e.info.id == id))
            .ok_or_else(|| Error::not_found(format!("no such entry: {userid}/{id}")))?;
        if let Some(d) = description {
            entry.info.description = d;
        }
        if let Some(e) = enable {
            entry.info.enable = e;
        }
        Ok(())
    }

    /// `DELETE /access/tfa/{userid}/{id}`; answers whether the user has
    /// entries left.
    ///
    /// # Errors
    /// 500 `no such entry: <userid>/<id>`.
    pub fn delete(&mut self, userid: &str, id: &str) -> Result<bool> {
        let missing = || Error::not_found(format!("no such entry: {userid}/{id}"));
        let user = self.users.get_mut(userid).ok_or_else(missing)?;
        if id == "recovery" && user.recovery.is_some() {
            user.recovery = None;
        } else if let Some(i) = user.totp.iter().position(|e| e.info.id == id) {
            user.totp.remove(i);
        } else {
            return Err(missing());
        }
        if user.is_empty() {
            self.users.remove(userid);
            return Ok(false);
        }
        Ok(true)
    }

    /// `PUT /access/users/{userid}/unlock-tfa`: answers whether the user
    /// was locked out, and clears the lock and failure counts.
    pub fn unlock(&mut self, userid: &str, now: i64) -> bool {
        let Some(u) = self.users.get_mut(userid) else {
            return false;
        };
        let was = u.totp_locked || u.tfa_locked(now);
        u.totp_locked = false;
        u.tfa_locked_until = None;
        u.totp_failures = 0;
        u.tfa_failures = 0;
        was
    }

    /// A scenario's entry, listed as it was but with a new secret
    /// (`key`: a TOTP key's 20 bytes, or ten recovery keys drawn from
    /// it): `totp` or `recovery`.
    ///
    /// # Errors
    /// Another kind, a second set of recovery keys, a TOTP id twice.
    pub fn seed(
        &mut self,
        userid: &str,
        kind: &str,
        info: SeedInfo,
        key: [u8; 20],
    ) -> std::result::Result<(), String> {
        let user = self.users.entry(userid.to_string()).or_default();
        match kind {
            "totp" if user.totp.iter().all(|e| e.info.id != info.id) => {
                let secret = key.iter().map(|b| format!("{b:02x}")).collect();
                let totp = Totp {
                    secret,
                    digits: 6,
                    step: 30,
                    algorithm: Algorithm::Sha1,
                };
                let info = Info {
                    id: info.id,
                    description: info.description,
                    created: info.created,
                    enable: info.enable,
                };
                user.totp.push(TotpEntry {
                    info,
                    totp,
                    last_count: None,
                });
            }
            "totp" => return Err(format!("duplicate tfa entry '{}'", info.id)),
            "recovery" if user.recovery.is_none() => {
                let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
                let keys =
                    (0..10).map(|i| Some(super::shadow::token_digest(&format!("{hex}-{i}"))));
                user.recovery = Some(Recovery {
                    created: info.created,
                    keys: keys.collect(),
                });
            }
            "recovery" => return Err("user already has recovery keys".into()),
            other => {
                return Err(format!(
                    "tfa type '{other}' cannot be recreated (totp or recovery)"
                ));
            }
        }
        Ok(())
    }

    /// Forgets a user's second factors (the user is deleted).
    pub fn remove_user(&mut self, userid: &str) {
        self.users.remove(userid);
    }

    /// The challenge of a login (`TfaChallenge` as JSON text), or `None`
    /// when the user has no enabled second factor.
    pub fn challenge(&self, userid: &str) -> Option<String> {
        let u = self.users.get(userid)?;
        let totp = u.totp.iter().any(|e| e.info.enable);
        let recovery = u.recovery_state();
        if !totp && recovery.is_none() {
            return None;
        }
        let mut m = serde_json::Map::new();
        if totp {
            m.insert("totp".into(), json!(true));
        }
        if let Some(r) = recovery {
            m.insert("recovery".into(), json!(r));
        }
        Some(Value::Object(m).to_string())
    }

    /// Checks a second factor (`totp:<value>` or `recovery:<key>`) and
    /// counts failures toward the lockouts.
    ///
    /// # Errors
    /// The reason, as PVE logs it (a login answers 401 whatever it is).
    pub fn verify(&mut self, userid: &str, response: &str, now: i64) -> Result<()> {
        let Some(user) = self.users.get_mut(userid) else {
            return Err(Error::failed("2nd factor failed"));
        };
        if user.tfa_locked(now) {
            return Err(Error::failed("failed 2nd factor"));
        }
        let (was_totp, result) = if let Some(value) = response.strip_prefix("totp:") {
            if user.totp_locked {
                return Err(Error::failed("failed 2nd factor"));
            }
            let mut ok = None;
            let mut reused = false;
            for e in user.totp.iter_mut().filter(|e| e.info.enable) {
                if let Some(count) = e.totp.verify(value, now) {
                    if e.last_count.is_some_and(|last| count <= last) {
                        reused = true;
                    } else {
                        e.last_count = Some(count);
                        ok = Some(());
                    }
                    break;
                }
            }
            match ok {
                Some(()) => {
                    user.totp_failures = 0;
                    (true, Ok(()))
                }
                None => {
                    user.totp_failures += 1;
                    (
                        true,
                        Err(if reused {
                            "rejecting reused TOTP value"
                        } else {
                            "totp verification failed"
                        }),
                    )
                }
            }
        } else if let Some(key) = response.strip_prefix("recovery:") {
            let hit = user.recovery.as_mut().and_then(|r| {
                r.keys.iter_mut().find(|k| {
                    k.as_deref()
                        .is_some_and(|kept| super::shadow::token_matches(kept, key.trim()))
                })
            });
            match hit {
                Some(k) => {
                    *k = None;
                    user.totp_locked = false;
                    user.tfa_locked_until = None;
                    user.totp_failures = 0;
                    (false, Ok(()))
                }
                None => (false, Err("recovery verification failed")),
            }
        } else {
            return Err(Error::failed("invalid tfa response"));
        };
        match result {
            Ok(()) => {
                user.tfa_failures = 0;
                Ok(())
            }
            Err(_) => {
                user.tfa_failures += 1;
                if was_totp && user.totp_failures >= TOTP_FAILURE_LIMIT {
                    user.totp_locked = true;
                    return Err(Error::failed(
                        "failed 2nd factor: TOTP limit reached, locked",
                    ));
                }
                if user.tfa_failures >= TFA_FAILURE_LIMIT {
                    user.tfa_locked_until = Some(now + TFA_LOCK_SECONDS);
                    return Err(Error::failed(
                        "failed 1nd factor: TFA limit reached, user locked out",
                    ));
                }
                Err(Error::failed("failed 2nd factor"))
            }
        }
    }
}

impl Access {
    /// The second factors.
    pub fn tfa(&self) -> &Tfa {
        &self.tfa
    }

    /// The second factors, to change them.
    pub fn tfa_mut(&mut self) -> &mut Tfa {
        &mut self.tfa
    }

    /// `authenticate_2nd_new`: after the first factor, the challenge to
    /// answer (`None` when the login is complete). An `otp` given with the
    /// password is checked at once.
    ///
    /// # Errors
    /// The second factor's refusal; `missing required 2nd keys` when the
    /// realm demands a second factor the user does not have.
    pub fn second_factor(
        &mut self,
        userid: &str,
        otp: Option<&str>,
        now: i64,
    ) -> Result<Option<String>> {
        let realm_tfa = self
            .realms
            .of_user(userid)?
            .1
            .tfa()
            .and_then(|t| t.get("type").cloned());
        if let (Some(kind), Some(resp)) = (&realm_tfa, otp) {
            check_realm_response(kind, resp)?;
        }
        let challenge = self.tfa.challenge(userid);
        if realm_tfa.is_some() && challenge.is_none() {
            return Err(Error::failed("missing required 2nd keys"));
        }
        match (challenge, otp) {
            (Some(_), Some(resp)) => self.tfa.verify(userid, resp, now).map(|()| None),
            (None, Some(_)) => Err(Error::failed("no such challenge")),
            (challenge, None) => Ok(challenge),
        }
    }

    /// The answer to a login's `tfa-challenge`: `response` (the
    /// `password` parameter) checked against the user's factors.
    ///
    /// # Errors
    /// The second factor's refusal.
    pub fn answer_challenge(&mut self, userid: &str, response: &str, now: i64) -> Result<()> {
        self.check_user_enabled(userid, now)?;
        let realm_tfa = self
            .realms
            .of_user(userid)?
            .1
            .tfa()
            .and_then(|t| t.get("type").cloned());
        if let Some(kind) = &realm_tfa {
            check_realm_response(kind, response)?;
        }
        self.tfa.verify(userid, response, now)
    }
}

/// A realm with `tfa` accepts only its own kind (or a recovery key).
fn check_realm_response(kind: &str, response: &str) -> Result<()> {
    let want = if kind == "oath" { "totp" } else { kind };
    let Some((given, _)) = response.split_once(':') else {
        return Err(Error::failed("bad otp response"));
    };
    if given != "recovery" && given != want {
        return Err(Error::failed(format!(
            "realm requires {want} authentication"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
