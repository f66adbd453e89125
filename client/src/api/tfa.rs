//! Second factors: `/access/tfa`, `/access/users/{userid}/tfa`,
//! `unlock-tfa`, and answering a login's TFA challenge.
//!
//! A login of a user with a second factor answers a half ticket with
//! `NeedTFA`; [`Tfa::answer_challenge`] completes it with
//! `totp:<value>` or `recovery:<key>`. The client's own login does that
//! by itself when the configuration holds the user's TOTP secret
//! ([`crate::ConfigBuilder::totp_secret`]).

use hmac::{Hmac, Mac};
use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::access::Ticket;
use super::seg;
use crate::Client;
use crate::error::Result;
use crate::transport::Params;

/// The second factor calls; see [`Client::tfa`].
#[derive(Debug, Clone, Copy)]
pub struct Tfa<'a> {
    client: &'a Client,
}

impl Client {
    /// The second factor calls.
    pub fn tfa(&self) -> Tfa<'_> {
        Tfa { client: self }
    }
}

/// One second factor of a user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TfaEntry {
    /// `totp`, `recovery`, `webauthn`, `u2f` or `yubico`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its id (`recovery` for the recovery keys).
    pub id: String,
    /// Its description.
    #[serde(default)]
    pub description: Option<String>,
    /// When it was added, epoch seconds.
    pub created: i64,
    /// Anything else (`enable` when it is disabled).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One user of `GET /access/tfa`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TfaUser {
    /// The user.
    pub userid: String,
    /// Its second factors.
    pub entries: Vec<TfaEntry>,
    /// Anything else (`totp-locked`, `tfa-locked-until`).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What adding a second factor answers.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TfaUpdateInfo {
    /// The new entry's id.
    #[serde(default)]
    pub id: Option<String>,
    /// New recovery keys, shown this once.
    #[serde(default)]
    pub recovery: Vec<String>,
    /// A challenge to answer (WebAuthn, U2F).
    #[serde(default)]
    pub challenge: Option<String>,
}

/// Decodes RFC 4648 base32 (case and padding ignored).
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

/// The six-digit TOTP value (RFC 6238, HMAC-SHA1, 30-second steps) of a
/// base32 secret at `unix_time`; `None` for a secret that is not base32.
pub fn totp_code(secret_base32: &str, unix_time: u64) -> Option<String> {
    let key = base32_decode(secret_base32)?;
    let mut mac = <Hmac<sha1::Sha1> as Mac>::new_from_slice(&key).ok()?;
    mac.update(&(unix_time / 30).to_be_bytes());
    let h = mac.finalize().into_bytes();
    let off = usize::from(h[h.len() - 1] & 0x0f);
    let bin = (u32::from(h[off] & 0x7f) << 24)
        | (u32::from(h[off + 1]) << 16)
        | (u32::from(h[off + 2]) << 8)
        | u32::from(h[off + 3]);
    Some(format!("{:06}", bin % 1_000_000))
}

/// The `otpauth://` URI PVE's GUI makes for a TOTP secret.
pub fn totp_uri(issuer: &str, account: &str, secret_base32: &str) -> String {
    format!(
        "otpauth://totp/{}:{}?secret={secret_base32}&period=30&digits=6&algorithm=SHA1&issuer={}",
        seg(issuer),
        seg(account),
        seg(issuer)
    )
}

fn user_path(userid: &str) -> String {
    format!("/access/tfa/{}", seg(userid))
}

fn entry_path(userid: &str, id: &str) -> String {
    format!("/access/tfa/{}/{}", seg(userid), seg(id))
}

impl Tfa<'_> {
    /// `GET /access/tfa` (`list_tfa`): the users with second factors the
    /// caller may see.
    ///
    /// # Errors
    /// As any call.
    pub async fn list_tfa(&self) -> Result<Vec<TfaUser>> {
        self.client
            .call(Method::GET, "/access/tfa", &Params::new())
            .await
    }

    /// `GET /access/tfa/{userid}` (`list_user_tfa`).
    ///
    /// # Errors
    /// Without the rights on the user.
    pub async fn list_user_tfa(&self, userid: &str) -> Result<Vec<TfaEntry>> {
        self.client
            .call(Method::GET, &user_path(userid), &Params::new())
            .await
    }

    /// `POST /access/tfa/{userid}` (`add_tfa_entry`) of a TOTP key: its
    /// `otpauth://` URI and its current value. `password` is the
    /// caller's own (not needed for root@pam).
    ///
    /// # Errors
    /// A value that does not match, a missing description or password.
    pub async fn add_tfa_entry(
        &self,
        userid: &str,
        kind: &str,
        description: Option<&str>,
        totp: Option<&str>,
        value: Option<&str>,
        password: Option<&str>,
    ) -> Result<TfaUpdateInfo> {
        let params = Params::new()
            .set("type", kind)
            .opt("description", description)
            .opt("totp", totp)
            .opt("value", value)
            .opt("password", password);
        self.client
            .call(Method::POST, &user_path(userid), &params)
            .await
    }

    /// `GET /access/tfa/{userid}/{id}` (`get_tfa_entry`).
    ///
    /// # Errors
    /// 404 for an unknown entry.
    pub async fn get_tfa_entry(&self, userid: &str, id: &str) -> Result<TfaEntry> {
        self.client
            .call(Method::GET, &entry_path(userid, id), &Params::new())
            .await
    }

    /// `PUT /access/tfa/{userid}/{id}` (`update_tfa_entry`).
    ///
    /// # Errors
    /// An unknown entry, a missing password.
    pub async fn update_tfa_entry(
        &self,
        userid: &str,
        id: &str,
        description: Option<&str>,
        enable: Option<bool>,
        password: Option<&str>,
    ) -> Result<()> {
        let params = Params::new()
            .opt("description", description)
            .opt("enable", enable)
            .opt("password", password);
        let _: Value = self
            .client
            .call(Method::PUT, &entry_path(userid, id), &params)
            .await?;
        Ok(())
    }

    /// `DELETE /access/tfa/{userid}/{id}` (`delete_tfa`).
    ///
    /// # Errors
    /// An unknown entry, a missing password.
    pub async fn delete_tfa(&self, userid: &str, id: &str, password: Option<&str>) -> Result<()> {
        let params = Params::new().opt("password", password);
        let _: Value = self
            .client
            .call(Method::DELETE, &entry_path(userid, id), &params)
            .await?;
        Ok(())
    }

    /// `GET /access/users/{userid}/tfa` (`read_user_tfa_type`).
    ///
    /// # Errors
    /// For a user of an unknown realm.
    pub async fn read_user_tfa_type(
        &self,
        userid: &str,
        multiple: bool,
    ) -> Result<Map<String, Value>> {
        let path = format!("/access/users/{}/tfa", seg(userid));
        let params = Params::new().opt("multiple", multiple.then_some(true));
        self.client.call(Method::GET, &path, &params).await
    }

    /// `PUT /access/users/{userid}/unlock-tfa` (`unlock_tfa`): whether the
    /// user was locked out.
    ///
    /// # Errors
    /// Without User.Modify on the user.
    pub async fn unlock_tfa(&self, userid: &str) -> Result<bool> {
        let path = format!("/access/users/{}/unlock-tfa", seg(userid));
        let v: Value = self.client.call(Method::PUT, &path, &Params::new()).await?;
        Ok(v.as_bool()
            .unwrap_or_else(|| v.as_i64().is_some_and(|n| n != 0)))
    }

    /// `POST /access/ticket` (`create_ticket`) answering a login's
    /// challenge: `challenge` is the half ticket of the `NeedTFA` answer,
    /// `response` `totp:<value>` or `recovery:<key>`.
    ///
    /// # Errors
    /// [`crate::Error::Authentication`] for a wrong response.
    pub async fn answer_challenge(
        &self,
        username: &str,
        challenge: &str,
        response: &str,
    ) -> Result<Ticket> {
        let params = Params::new()
            .set("username", username)
            .set("password", response)
            .set("tfa-challenge", challenge);
        self.client
            .call(Method::POST, "/access/ticket", &params)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6238's SHA-1 vector, truncated to six digits.
    #[test]
    fn rfc6238_sha1() {
        let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";
        assert_eq!(totp_code(secret, 59).as_deref(), Some("287082"));
        assert_eq!(totp_code(secret, 1_111_111_109).as_deref(), Some("081804"));
        assert_eq!(totp_code("not base32!", 59), None);
    }
}
