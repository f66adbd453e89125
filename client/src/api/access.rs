//! `/access`: tickets, realms, users, groups, roles, ACLs, effective
//! permissions, passwords and API tokens.
//!
//! Method names are PVE's (the schema's `name`). Three listings share
//! the schema name `index` (`GET /access/users`, `/access/groups`,
//! `/access/roles`), as does `/access/domains`; they are called
//! [`Access::list_users`], [`Access::list_groups`], [`Access::list_roles`]
//! and [`Access::list_domains`], as fake-pve's handlers are.

use reqwest::Method;
use std::collections::BTreeMap;

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
    /// Set when the ticket is only half of a login: the user must answer
    /// the second factor (see [`crate::api::tfa::Tfa::answer_challenge`]).
    #[serde(default, rename = "NeedTFA", deserialize_with = "de::opt_bool01")]
    pub need_tfa: Option<bool>,
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

/// A token's new secret (`update_token_info` with `regenerate`, 9.2):
/// shown this once.
#[derive(Debug, Clone, Deserialize)]
pub struct RegeneratedToken {
    /// `USER@REALM!TOKENID`.
    #[serde(rename = "full-tokenid")]
    pub full_tokenid: String,
    /// The new secret; the old one no longer authenticates.
    pub value: Secret,
    /// The token's settings.
    #[serde(flatten)]
    pub info: TokenInfo,
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

    /// `POST /access/openid/auth-url` (`auth_url`; `openid_auth_url`
    /// here): the OpenID provider's authorization URL for a login to the
    /// `openid` realm `realm`, which sends the browser back to
    /// `redirect_url` with `code` and `state`. Needs no authentication.
    ///
    /// # Errors
    /// [`crate::Error::Api`] for a realm that does not exist or is not an
    /// `openid` realm, or whose provider cannot be reached.
    pub async fn openid_auth_url(&self, realm: &str, redirect_url: &str) -> Result<String> {
        let params = Params::new()
            .set("realm", realm)
            .set("redirect-url", redirect_url);
        self.client
            .call(Method::POST, "/access/openid/auth-url", &params)
            .await
    }

    /// `POST /access/openid/login` (`login`; `openid_login` here): the
    /// `code` and `state` the provider sent the browser back with,
    /// exchanged for a ticket. `redirect_url` is the one given to
    /// [`Access::openid_auth_url`]. Needs no authentication.
    ///
    /// # Errors
    /// [`crate::Error::Authentication`] for any refusal (PVE does not say
    /// why).
    pub async fn openid_login(
        &self,
        state: &str,
        code: &str,
        redirect_url: &str,
    ) -> Result<Ticket> {
        let params = Params::new()
            .set("state", state)
            .set("code", code)
            .set("redirect-url", redirect_url);
        self.client
            .call(Method::POST, "/access/openid/login", &params)
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

    /// `PUT /access/users/{userid}/token/{tokenid}` (`update_token_info`)
    /// with `regenerate` (9.2): a new secret for the token, with `opts`
    /// set as [`Access::update_token_info`] sets them.
    ///
    /// # Errors
    /// As [`Access::read_token`]; before 9.2 `regenerate` is refused as a
    /// parameter the schema does not have.
    pub async fn regenerate_token(
        &self,
        userid: &str,
        tokenid: &str,
        opts: &TokenOptions,
    ) -> Result<RegeneratedToken> {
        let params = opts.params().set("regenerate", true);
        self.client
            .call(Method::PUT, &token_path(userid, tokenid), &params)
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

/// One entry of `GET /access/users` (`index`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserListItem {
    /// `user@realm`.
    pub userid: String,
    /// Whether the account may log in (PVE's default: yes).
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub enable: Option<bool>,
    /// When the account expires, epoch seconds; 0 never.
    #[serde(default, deserialize_with = "de::opt_i64")]
    pub expire: Option<i64>,
    /// First name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firstname: Option<String>,
    /// Last name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lastname: Option<String>,
    /// E-mail address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The realm's type (`pam`, `pve`, `ldap`, ...).
    #[serde(
        default,
        rename = "realm-type",
        skip_serializing_if = "Option::is_none"
    )]
    pub realm_type: Option<String>,
    /// \[full\] the groups it belongs to.
    #[serde(default, deserialize_with = "de::list")]
    pub groups: Vec<String>,
    /// \[full\] its API tokens.
    #[serde(default, deserialize_with = "de::null_default")]
    pub tokens: Vec<TokenInfo>,
    /// Anything else PVE sent (`keys`, `tfa-locked-until`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What `GET /access/users/{userid}` (`read_user`) answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct User {
    /// Whether the account may log in.
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub enable: Option<bool>,
    /// When the account expires, epoch seconds; 0 never.
    #[serde(default, deserialize_with = "de::opt_i64")]
    pub expire: Option<i64>,
    /// First name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firstname: Option<String>,
    /// Last name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lastname: Option<String>,
    /// E-mail address (PVE may send `""`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The groups it belongs to.
    #[serde(default, deserialize_with = "de::list")]
    pub groups: Vec<String>,
    /// Its API tokens by token ID.
    #[serde(default, deserialize_with = "de::null_default")]
    pub tokens: BTreeMap<String, TokenInfo>,
    /// Anything else PVE sent (`keys`).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Settings of [`Access::create_user`] and [`Access::update_user`]; all
/// optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserOptions {
    /// Whether the account may log in (PVE's default: yes).
    pub enable: Option<bool>,
    /// Expiry, epoch seconds; 0 never.
    pub expire: Option<i64>,
    /// First name.
    pub firstname: Option<String>,
    /// Last name.
    pub lastname: Option<String>,
    /// E-mail address.
    pub email: Option<String>,
    /// Comment (an empty one removes it).
    pub comment: Option<String>,
    /// Second-factor keys (legacy).
    pub keys: Option<String>,
    /// Group memberships: on update they replace the current ones unless
    /// `append` is set.
    pub groups: Option<Vec<String>>,
    /// \[create\] the password (`pve` realm; 8 - 64 characters).
    pub password: Option<Secret>,
    /// \[update\] add `groups` instead of replacing them.
    pub append: Option<bool>,
}

impl UserOptions {
    fn params(&self) -> Params {
        Params::new()
            .opt("enable", self.enable)
            .opt("expire", self.expire)
            .opt("firstname", self.firstname.as_deref())
            .opt("lastname", self.lastname.as_deref())
            .opt("email", self.email.as_deref())
            .opt("comment", self.comment.as_deref())
            .opt("keys", self.keys.as_deref())
            .opt("groups", self.groups.as_ref().map(|g| g.join(",")))
            .opt("password", self.password.as_ref().map(Secret::expose))
            .opt("append", self.append)
    }
}

/// One entry of `GET /access/groups` (`index`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupListItem {
    /// The group's name.
    pub groupid: String,
    /// Its comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Its members (`user@realm`).
    #[serde(default, deserialize_with = "de::list")]
    pub users: Vec<String>,
}

/// What `GET /access/groups/{groupid}` (`read_group`) answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// Its comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Its members.
    #[serde(default, deserialize_with = "de::list")]
    pub members: Vec<String>,
}

/// One entry of `GET /access/roles` (`index`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoleListItem {
    /// The role's name.
    pub roleid: String,
    /// Its privileges.
    #[serde(default, deserialize_with = "de::list")]
    pub privs: Vec<String>,
    /// Whether it is built in (and cannot be changed).
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub special: Option<bool>,
}

/// Who an ACL entry is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AclType {
    /// A user.
    User,
    /// A group.
    Group,
    /// An API token.
    Token,
}

/// One entry of `GET /access/acl` (`read_acl`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AclEntry {
    /// The ACL path (`/`, `/vms/100`, `/storage/local`).
    pub path: String,
    /// Whom it is for.
    #[serde(rename = "type")]
    pub kind: AclType,
    /// The user, group or token.
    pub ugid: String,
    /// The role granted.
    pub roleid: String,
    /// Whether it also applies below the path (PVE's default: yes).
    #[serde(default, deserialize_with = "de::opt_bool01")]
    pub propagate: Option<bool>,
}

/// A change of [`Access::update_acl`]: `roles` for `users`, `groups`
/// and/or `tokens` on `path` (at least one of the three).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AclUpdate {
    /// The ACL path.
    pub path: String,
    /// The roles to grant (or remove).
    pub roles: Vec<String>,
    /// Users.
    pub users: Vec<String>,
    /// Groups.
    pub groups: Vec<String>,
    /// API tokens (`user@realm!tokenid`).
    pub tokens: Vec<String>,
    /// Whether the entries apply below the path (PVE's default: yes).
    pub propagate: Option<bool>,
    /// Remove the entries instead of adding them.
    pub delete: bool,
}

impl AclUpdate {
    /// Grant `roles` on `path` (add `users`, `groups` or `tokens`).
    pub fn grant(path: impl Into<String>, roles: &[&str]) -> Self {
        Self {
            path: path.into(),
            roles: roles.iter().map(ToString::to_string).collect(),
            ..Self::default()
        }
    }

    fn params(&self) -> Params {
        let list = |v: &[String]| (!v.is_empty()).then(|| v.join(","));
        Params::new()
            .set("path", self.path.as_str())
            .set("roles", self.roles.join(","))
            .opt("users", list(&self.users))
            .opt("groups", list(&self.groups))
            .opt("tokens", list(&self.tokens))
            .opt("propagate", self.propagate)
            .opt("delete", self.delete.then_some(true))
    }
}

/// Effective privileges: ACL path → privilege → whether it propagates.
pub type Permissions = BTreeMap<String, BTreeMap<String, bool>>;

fn user_path(userid: &str) -> String {
    format!("/access/users/{}", seg(userid))
}

impl Access<'_> {
    /// `GET /access/users` (`index`): the users the caller may see;
    /// `full` adds groups and tokens, `enabled` filters.
    ///
    /// # Errors
    /// As any call.
    pub async fn list_users(&self, enabled: Option<bool>, full: bool) -> Result<Vec<UserListItem>> {
        let params = Params::new()
            .opt("enabled", enabled)
            .opt("full", full.then_some(true));
        self.client
            .call(Method::GET, "/access/users", &params)
            .await
    }

    /// `POST /access/users` (`create_user`).
    ///
    /// # Errors
    /// [`crate::Error::Validation`] for a malformed user ID or setting;
    /// [`crate::Error::Conflict`] when the user exists; a server error
    /// for an unknown group.
    pub async fn create_user(&self, userid: &str, opts: &UserOptions) -> Result<()> {
        let mut params = Params::new().set("userid", userid);
        for (k, v) in opts.params().pairs() {
            params.push(k.as_str(), v.as_str());
        }
        let _: Value = self
            .client
            .call(Method::POST, "/access/users", &params)
            .await?;
        Ok(())
    }

    /// `GET /access/users/{userid}` (`read_user`).
    ///
    /// # Errors
    /// When the user does not exist or is out of the caller's reach.
    pub async fn read_user(&self, userid: &str) -> Result<User> {
        self.client
            .call(Method::GET, &user_path(userid), &Params::new())
            .await
    }

    /// `PUT /access/users/{userid}` (`update_user`).
    ///
    /// # Errors
    /// As [`Access::read_user`], and for a malformed setting.
    pub async fn update_user(&self, userid: &str, opts: &UserOptions) -> Result<()> {
        let _: Value = self
            .client
            .call(Method::PUT, &user_path(userid), &opts.params())
            .await?;
        Ok(())
    }

    /// `DELETE /access/users/{userid}` (`delete_user`), with its tokens,
    /// memberships and ACL entries.
    ///
    /// # Errors
    /// [`crate::Error::Permission`] without the rights on the user.
    pub async fn delete_user(&self, userid: &str) -> Result<()> {
        let _: Value = self
            .client
            .call(Method::DELETE, &user_path(userid), &Params::new())
            .await?;
        Ok(())
    }

    /// `GET /access/groups` (`index`).
    ///
    /// # Errors
    /// As any call.
    pub async fn list_groups(&self) -> Result<Vec<GroupListItem>> {
        self.client
            .call(Method::GET, "/access/groups", &Params::new())
            .await
    }

    /// `POST /access/groups` (`create_group`).
    ///
    /// # Errors
    /// [`crate::Error::Permission`] without Group.Allocate; an error when
    /// the group exists.
    pub async fn create_group(&self, groupid: &str, comment: Option<&str>) -> Result<()> {
        let params = Params::new()
            .set("groupid", groupid)
            .opt("comment", comment);
        let _: Value = self
            .client
            .call(Method::POST, "/access/groups", &params)
            .await?;
        Ok(())
    }

    /// `GET /access/groups/{groupid}` (`read_group`).
    ///
    /// # Errors
    /// [`crate::Error::NotFound`] for an unknown group.
    pub async fn read_group(&self, groupid: &str) -> Result<Group> {
        let path = format!("/access/groups/{}", seg(groupid));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `PUT /access/groups/{groupid}` (`update_group`): its comment (an
    /// empty one removes it).
    ///
    /// # Errors
    /// As [`Access::read_group`].
    pub async fn update_group(&self, groupid: &str, comment: Option<&str>) -> Result<()> {
        let path = format!("/access/groups/{}", seg(groupid));
        let params = Params::new().opt("comment", comment);
        let _: Value = self.client.call(Method::PUT, &path, &params).await?;
        Ok(())
    }

    /// `DELETE /access/groups/{groupid}` (`delete_group`).
    ///
    /// # Errors
    /// As [`Access::read_group`].
    pub async fn delete_group(&self, groupid: &str) -> Result<()> {
        let path = format!("/access/groups/{}", seg(groupid));
        let _: Value = self
            .client
            .call(Method::DELETE, &path, &Params::new())
            .await?;
        Ok(())
    }

    /// `GET /access/roles` (`index`): built-in and custom roles.
    ///
    /// # Errors
    /// As any call.
    pub async fn list_roles(&self) -> Result<Vec<RoleListItem>> {
        self.client
            .call(Method::GET, "/access/roles", &Params::new())
            .await
    }

    /// `POST /access/roles` (`create_role`).
    ///
    /// # Errors
    /// [`crate::Error::Validation`] for an unknown privilege or a name in
    /// PVE's `PVE` namespace; an error when the role exists.
    pub async fn create_role(&self, roleid: &str, privs: &[&str]) -> Result<()> {
        let params = Params::new()
            .set("roleid", roleid)
            .opt("privs", (!privs.is_empty()).then(|| privs.join(",")));
        let _: Value = self
            .client
            .call(Method::POST, "/access/roles", &params)
            .await?;
        Ok(())
    }

    /// `GET /access/roles/{roleid}` (`read_role`): its privileges,
    /// sorted.
    ///
    /// # Errors
    /// [`crate::Error::NotFound`] for an unknown role.
    pub async fn read_role(&self, roleid: &str) -> Result<Vec<String>> {
        let path = format!("/access/roles/{}", seg(roleid));
        let privs: BTreeMap<String, Value> =
            self.client.call(Method::GET, &path, &Params::new()).await?;
        Ok(privs
            .into_iter()
            .filter(|(_, v)| {
                !matches!(v, Value::Null | Value::Bool(false)) && v.as_i64() != Some(0)
            })
            .map(|(k, _)| k)
            .collect())
    }

    /// `PUT /access/roles/{roleid}` (`update_role`): replaces its
    /// privileges, or adds them with `append`.
    ///
    /// # Errors
    /// As [`Access::create_role`]; built-in roles cannot be changed.
    pub async fn update_role(&self, roleid: &str, privs: &[&str], append: bool) -> Result<()> {
        let path = format!("/access/roles/{}", seg(roleid));
        let params = Params::new()
            .set("privs", privs.join(","))
            .opt("append", append.then_some(true));
        let _: Value = self.client.call(Method::PUT, &path, &params).await?;
        Ok(())
    }

    /// `DELETE /access/roles/{roleid}` (`delete_role`).
    ///
    /// # Errors
    /// As [`Access::read_role`]; built-in roles cannot be deleted.
    pub async fn delete_role(&self, roleid: &str) -> Result<()> {
        let path = format!("/access/roles/{}", seg(roleid));
        let _: Value = self
            .client
            .call(Method::DELETE, &path, &Params::new())
            .await?;
        Ok(())
    }

    /// `GET /access/acl` (`read_acl`): the entries on paths where the
    /// caller may change permissions.
    ///
    /// # Errors
    /// As any call.
    pub async fn read_acl(&self) -> Result<Vec<AclEntry>> {
        self.client
            .call(Method::GET, "/access/acl", &Params::new())
            .await
    }

    /// `PUT /access/acl` (`update_acl`): grants or (with `delete`)
    /// removes roles.
    ///
    /// # Errors
    /// [`crate::Error::Validation`] for a malformed path, role or
    /// subject, or none of users, groups and tokens;
    /// [`crate::Error::Permission`] without Permissions.Modify (or the
    /// privileges being granted); a server error for an unknown role.
    pub async fn update_acl(&self, change: &AclUpdate) -> Result<()> {
        let _: Value = self
            .client
            .call(Method::PUT, "/access/acl", &change.params())
            .await?;
        Ok(())
    }

    /// `GET /access/permissions` (`permissions`): the effective
    /// privileges of the caller, or of `userid` (a user or token; others
    /// need Sys.Audit on `/access`), on every path with an entry or on
    /// `path` only.
    ///
    /// # Errors
    /// [`crate::Error::Permission`] for someone else without Sys.Audit.
    pub async fn permissions(
        &self,
        userid: Option<&str>,
        path: Option<&str>,
    ) -> Result<Permissions> {
        let params = Params::new().opt("userid", userid).opt("path", path);
        let raw: BTreeMap<String, BTreeMap<String, Value>> = self
            .client
            .call(Method::GET, "/access/permissions", &params)
            .await?;
        Ok(raw
            .into_iter()
            .map(|(p, privs)| {
                let privs = privs
                    .into_iter()
                    .map(|(k, v)| {
                        let prop = match v {
                            Value::Bool(b) => b,
                            Value::Number(n) => n.as_i64() != Some(0),
                            Value::String(s) => s != "0",
                            _ => false,
                        };
                        (k, prop)
                    })
                    .collect();
                (p, privs)
            })
            .collect())
    }

    /// `PUT /access/password` (`change_password`). Anyone but root@pam
    /// confirms with their own current password. Not available with API
    /// tokens.
    ///
    /// # Errors
    /// [`crate::Error::Validation`] for a password shorter than 8 or
    /// longer than 64 characters, or a missing confirmation;
    /// [`crate::Error::Permission`] without the rights on the user.
    pub async fn change_password(
        &self,
        userid: &str,
        password: &str,
        confirmation_password: Option<&str>,
    ) -> Result<()> {
        let params = Params::new()
            .set("userid", userid)
            .set("password", password)
            .opt("confirmation-password", confirmation_password);
        let _: Value = self
            .client
            .call(Method::PUT, "/access/password", &params)
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acl_updates_as_parameters() {
        let mut change = AclUpdate::grant("/vms/100", &["PVEVMUser", "PVEAuditor"]);
        change.users.push("ci@pve".into());
        change.tokens.push("ci@pve!runner".into());
        change.propagate = Some(false);
        let params = change.params();
        let pairs: Vec<(&str, &str)> = params
            .pairs()
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("path", "/vms/100"),
                ("roles", "PVEVMUser,PVEAuditor"),
                ("users", "ci@pve"),
                ("tokens", "ci@pve!runner"),
                ("propagate", "0")
            ]
        );
    }

    #[test]
    fn users_read_leniently() {
        let u: UserListItem = serde_json::from_value(serde_json::json!({
            "userid": "ci@pve", "enable": 1, "expire": 0, "groups": "ops,dev",
            "tokens": [{"tokenid": "runner", "privsep": 0}], "realm-type": "pve"
        }))
        .expect("user");
        assert_eq!(u.groups, ["ops", "dev"]);
        assert_eq!(u.tokens[0].privsep, Some(false));
        let u: User = serde_json::from_value(serde_json::json!({
            "enable": 1, "expire": 0, "groups": [], "tokens": null
        }))
        .expect("user");
        assert!(u.tokens.is_empty());
    }
}
