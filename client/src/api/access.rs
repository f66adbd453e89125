//! `/access`: tickets, realms and API tokens.

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::seg;
use crate::Client;
use crate::config::Secret;
use crate::de;
use crate::error::Result;
use crate::transport::Params;

/// The `/access` area; see [`Client::access`].
#[derive(Debug, Clone, Copy)]
pub struct Access<'a> {
    client: &'a Client,
}

impl Client {
    /// The `/access` calls.
    pub fn access(&self) -> Access<'_> {
        Access { client: self }
    }
}

/// What a login answers. The client logs itself in; this is for callers
/// that need a ticket for someone or something else (a browser, a VNC
/// console).
#[derive(Debug, Clone, Deserialize)]
pub struct Ticket {
    /// The user logged in.
    pub username: String,
    /// The ticket (`PVE:user@realm:...`), valid two hours.
    #[serde(default)]
    pub ticket: Option<Secret>,
    /// The CSRF token to send with writes.
    #[serde(default, rename = "CSRFPreventionToken")]
    pub csrf_prevention_token: Option<Secret>,
    /// The cluster's name, when clustered and visible to the user.
    #[serde(default)]
    pub clustername: Option<String>,
    /// The user's privileges by GUI area.
    #[serde(default)]
    pub cap: Option<Value>,
}

/// A realm of `/access/domains`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Domain {
    /// Its name (`pam`, `pve`, ...).
    pub realm: String,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Its second factor, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tfa: Option<String>,
    /// Anything else PVE sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An API token's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenInfo {
    /// Its ID (in listings only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenid: Option<String>,
    /// Its comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// When it expires, epoch seconds; 0 never.
    #[serde(default, deserialize_with = "de::opt_i64")]
    pub expire: Option<i64>,
    /// Whether it is restricted to its own ACLs (privilege separation).
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub privsep: Option<bool>,
}

/// A new token: PVE shows its secret this once.
#[derive(Debug, Clone, Deserialize)]
pub struct GeneratedToken {
    /// `USER@REALM!TOKENID`.
    #[serde(rename = "full-tokenid")]
    pub full_tokenid: String,
    /// Its settings.
    pub info: TokenInfo,
    /// The secret.
    pub value: Secret,
}

/// Settings for [`Access::generate_token`] and
/// [`Access::update_token_info`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenOptions {
    /// A comment.
    pub comment: Option<String>,
    /// Expiry, epoch seconds; 0 never (default: the user's).
    pub expire: Option<i64>,
    /// Privilege separation (PVE's default: on).
    pub privsep: Option<bool>,
    /// \[update, 9.x\] settings to remove (`comment`).
    pub delete: Vec<String>,
}

impl TokenOptions {
    fn params(&self) -> Params {
        Params::new()
            .opt("comment", self.comment.as_deref())
            .opt("expire", self.expire)
            .opt("privsep", self.privsep)
            .opt(
                "delete",
                (!self.delete.is_empty()).then(|| self.delete.join(",")),
            )
    }
}

fn token_path(userid: &str, tokenid: &str) -> String {
    format!("/access/users/{}/token/{}", seg(userid), seg(tokenid))
}

impl Access<'_> {
    /// `POST /access/ticket` (`create_ticket`): a login, apart from the
    /// client's own session. Renews a ticket when given one as the
    /// password.
    ///
    /// # Errors
    /// [`crate::Error::Authentication`] for wrong credentials.
    pub async fn create_ticket(&self, username: &str, password: &str) -> Result<Ticket> {
        let params = Params::new()
            .set("username", username)
            .set("password", password);
        self.client
            .call(Method::POST, "/access/ticket", &params)
            .await
    }

    /// `GET /access/domains` (`index`; fake-pve's `list_domains`): the
    /// realms one can log in to. Needs no authentication.
    ///
    /// # Errors
    /// As any call.
    pub async fn list_domains(&self) -> Result<Vec<Domain>> {
        self.client
            .call(Method::GET, "/access/domains", &Params::new())
            .await
    }

    /// `GET /access/users/{userid}/token` (`token_index`).
    ///
    /// # Errors
    /// [`crate::Error::Permission`] for another user's tokens without
    /// User.Modify.
    pub async fn token_index(&self, userid: &str) -> Result<Vec<TokenInfo>> {
        let path = format!("/access/users/{}/token", seg(userid));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `GET /access/users/{userid}/token/{tokenid}` (`read_token`).
    ///
    /// # Errors
    /// As [`Access::token_index`], and when the token does not exist.
    pub async fn read_token(&self, userid: &str, tokenid: &str) -> Result<TokenInfo> {
        self.client
            .call(Method::GET, &token_path(userid, tokenid), &Params::new())
            .await
    }

    /// `POST /access/users/{userid}/token/{tokenid}` (`generate_token`).
    ///
    /// # Errors
    /// As [`Access::token_index`], and when the token exists.
    pub async fn generate_token(
        &self,
        userid: &str,
        tokenid: &str,
        opts: &TokenOptions,
    ) -> Result<GeneratedToken> {
        self.client
            .call(Method::POST, &token_path(userid, tokenid), &opts.params())
            .await
    }

    /// `PUT /access/users/{userid}/token/{tokenid}` (`update_token_info`).
    ///
    /// # Errors
    /// As [`Access::read_token`].
    pub async fn update_token_info(
        &self,
        userid: &str,
        tokenid: &str,
        opts: &TokenOptions,
    ) -> Result<TokenInfo> {
        self.client
            .call(Method::PUT, &token_path(userid, tokenid), &opts.params())
            .await
    }

    /// `DELETE /access/users/{userid}/token/{tokenid}` (`remove_token`).
    ///
    /// # Errors
    /// As [`Access::read_token`].
    pub async fn remove_token(&self, userid: &str, tokenid: &str) -> Result<()> {
        let _: Value = self
            .client
            .call(Method::DELETE, &token_path(userid, tokenid), &Params::new())
            .await?;
        Ok(())
    }
}
