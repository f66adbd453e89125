//! Users, groups, roles, ACLs, API tokens and permission checks
//! (pve-access-control `AccessControl.pm`, `RPCEnvironment.pm`).
//!
//! Privileges resolve as PVE's `roles()` and `permissions()` do: walk the
//! path from `/`; at each level the token's ACLs, else the user's, else
//! the union of the user's groups' replace what was inherited; an entry
//! on an ancestor counts only when it propagates; `NoAccess` wins.
//! root@pam holds everything. A token without privilege separation is
//! its user; a privilege-separated one gets only its own ACLs,
//! intersected with its user's privileges (except root@pam's). Pools are
//! not modelled, so pool ACLs grant nothing to their members.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::acl::{self, AclNode, UgKind};
use super::{Error, PveVersion, Result};

mod guest_lists;
pub mod keys;
pub mod openid;
mod privileges;
pub mod realms;
mod roles;
pub mod shadow;
pub mod sync_jobs;
pub mod tags;
pub mod tfa;
mod users;
use users::no_such_token;

/// A user of the `pam` or `pve` realm.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct User {
    /// `name@realm`.
    pub userid: String,
    /// The login password's crypt(3) hash, as `shadow.cfg` keeps it (see
    /// [`shadow`]). Saved as `password_hash`; a `password` of an older
    /// save or of a hand-written document is hashed when it is loaded
    /// ([`Access::seal`]).
    #[serde(
        rename = "password_hash",
        alias = "password",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub password: Option<String>,
    /// Disabled users cannot log in.
    pub enable: bool,
    /// Account expiry, epoch seconds; 0 never expires.
    pub expire: i64,
    /// Free-form comment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// E-mail address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// First name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub firstname: Option<String>,
    /// Last name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lastname: Option<String>,
    /// API tokens by token name.
    pub tokens: BTreeMap<String, Token>,
}

impl User {
    /// A new enabled user without password, expiry or tokens.
    pub fn new(userid: &str) -> Self {
        Self {
            userid: userid.to_string(),
            password: None,
            enable: true,
            expire: 0,
            comment: None,
            email: None,
            firstname: None,
            lastname: None,
            tokens: BTreeMap::new(),
        }
    }
}

/// An API token of a user.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Token {
    /// The token name (the part after `!`).
    pub tokenid: String,
    /// What is kept of the secret (a UUID): its digest (see
    /// [`shadow::token_digest`]), saved as `secret_hash`; the `secret` of
    /// an older save or a hand-written document is replaced by its digest
    /// when it is loaded ([`Access::seal`]).
    #[serde(rename = "secret_hash", alias = "secret")]
    pub secret: String,
    /// Privilege separation: the token only gets what ACLs grant it.
    pub privsep: bool,
    /// Expiry, epoch seconds; 0 never expires.
    pub expire: i64,
    /// Free-form comment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// Who makes a request: a user or one of its API tokens.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AuthId {
    /// A ticket holder.
    User(String),
    /// An API token.
    Token {
        /// The owning user.
        userid: String,
        /// The token name.
        tokenid: String,
    },
}

impl AuthId {
    /// The user behind the identity.
    pub fn userid(&self) -> &str {
        match self {
            AuthId::User(u) => u,
            AuthId::Token { userid, .. } => userid,
        }
    }

    /// Whether this is an API token.
    pub fn is_token(&self) -> bool {
        matches!(self, AuthId::Token { .. })
    }

    /// Parses `user@realm` or `user@realm!token`.
    pub fn parse(s: &str) -> Option<Self> {
        match s.split_once('!') {
            Some((u, t)) if valid_userid(u) && valid_tokenid(t) => Some(AuthId::Token {
                userid: u.to_string(),
                tokenid: t.to_string(),
            }),
            None if valid_userid(s) => Some(AuthId::User(s.to_string())),
            _ => None,
        }
    }
}

impl fmt::Display for AuthId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuthId::User(u) => f.write_str(u),
            AuthId::Token { userid, tokenid } => write!(f, "{userid}!{tokenid}"),
        }
    }
}

/// PVE's `pve-userid` rule: `name@realm`, at most 64 characters, no white
/// space, `:` or `/` in the name, and a realm of letters, digits, `.-_`.
pub fn valid_userid(s: &str) -> bool {
    if s.len() > 64 {
        return false;
    }
    let Some((name, realm)) = s.rsplit_once('@') else {
        return false;
    };
    !name.is_empty()
        && !name
            .chars()
            .any(|c| c.is_whitespace() || c == ':' || c == '/')
        && valid_realm(realm)
}

/// `pve-realm`: a letter, then letters, digits, `.`, `-` or `_`, and a
/// letter or digit last; 2 to 32 characters.
pub fn valid_realm(s: &str) -> bool {
    let b = s.as_bytes();
    (2..=32).contains(&b.len())
        && b[0].is_ascii_alphabetic()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_'))
}

/// `pve-groupid`: letters, digits, `.`, `-` and `_`.
pub fn valid_groupid(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_'))
}

/// `pve-tokenid`: a letter, then letters, digits, `.`, `-` or `_`.
pub fn valid_tokenid(s: &str) -> bool {
    let b = s.as_bytes();
    // `[A-Za-z][A-Za-z0-9.\-_]+`: at least two characters.
    b.len() >= 2
        && b.len() <= 64
        && b[0].is_ascii_alphabetic()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_'))
}

/// A group of users.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    /// Free-form comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Member userids.
    #[serde(default)]
    pub members: BTreeSet<String>,
}

/// The access-control part of the cluster state (`user.cfg`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Access {
    /// The release, which decides the built-in roles and privileges.
    #[serde(default)]
    pub(in crate::model) version: PveVersion,
    /// Users by userid.
    pub(in crate::model) users: BTreeMap<String, User>,
    /// Groups by groupid.
    #[serde(default)]
    pub(in crate::model) groups: BTreeMap<String, Group>,
    /// Custom roles (the built-in ones come from the release).
    #[serde(default)]
    pub(in crate::model) roles: BTreeMap<String, BTreeSet<String>>,
    /// ACL entries by normalized path.
    #[serde(default)]
    pub(in crate::model) acl: BTreeMap<String, AclNode>,
    /// Resource pools (`pool:` lines), see [`crate::model::pools`].
    #[serde(default, skip_serializing_if = "crate::model::pools::Pools::is_empty")]
    pub(in crate::model) pools: crate::model::pools::Pools,
    /// `datacenter.cfg`'s tag rules (`registered-tags`,
    /// `user-tag-access`).
    #[serde(default, skip_serializing_if = "tags::TagAccess::is_default")]
    pub(in crate::model) tag_access: tags::TagAccess,
    /// The realms (`domains.cfg`) and the directories behind them.
    #[serde(default, skip_serializing_if = "realms::Realms::is_default")]
    pub(in crate::model) realms: realms::Realms,
    /// Second factors (`priv/tfa.cfg`) and their lockouts.
    #[serde(default, skip_serializing_if = "tfa::Tfa::is_empty")]
    pub(in crate::model) tfa: tfa::Tfa,
    /// Realm sync jobs (the `realm-sync` sections of `jobs.cfg`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(in crate::model) sync_jobs: BTreeMap<String, sync_jobs::SyncJob>,
    /// OpenID logins between `auth-url` and `login`.
    #[serde(default, skip_serializing_if = "openid::AuthStates::is_empty")]
    pub(in crate::model) openid_states: openid::AuthStates,
}

/// One change of `PUT /access/acl`: every role for every subject.
#[derive(Debug, Clone, Copy)]
pub struct AclUpdate<'a> {
    /// Role ids.
    pub roles: &'a [String],
    /// Userids.
    pub users: &'a [String],
    /// Groupids.
    pub groups: &'a [String],
    /// Full token ids.
    pub tokens: &'a [String],
    /// Whether the entries propagate.
    pub propagate: bool,
    /// Remove instead of add.
    pub delete: bool,
}

/// What `groups` means to PVE's `userid-group` permission test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupsParam {
    /// No `groups_param`: the target user must exist and be in reach.
    None,
    /// `groups_param => 'create'`: every listed group must be in reach;
    /// the user need not exist.
    Create,
    /// `groups_param => 'update'`: both.
    Update,
}

impl Access {
    /// Checks a login: the user exists, is enabled, has not expired, and the
    /// password matches. Every failure is the same 401, as in PVE.
    ///
    /// # Errors
    /// 401 `authentication failure`.
    pub fn check_password(&self, userid: &str, password: &str, now: i64) -> Result<()> {
        self.check_given(userid, shadow::Given::Clear(password), now)
    }

    /// [`Access::check_password`] of a password as a request gives it.
    ///
    /// # Errors
    /// 401 `authentication failure`.
    pub fn check_given(&self, userid: &str, password: shadow::Given<'_>, now: i64) -> Result<()> {
        self.authenticate_given(userid, password, now)
            .map_err(|_| auth_failure())
    }

    /// PVE's `check_user_enabled`: the user exists, is enabled and has not
    /// expired.
    ///
    /// # Errors
    /// 500 with PVE's reason (the auth layer turns it into a 401).
    pub fn check_user_enabled(&self, userid: &str, now: i64) -> Result<&User> {
        let user = self.user(userid)?;
        if !user.enable {
            return Err(Error::failed(format!("user '{userid}' is disabled")));
        }
        if user.expire != 0 && user.expire < now {
            return Err(Error::failed(format!("user '{userid}' access expired")));
        }
        Ok(user)
    }

    /// PVE's `verify_token`: the user is enabled, the token exists, has
    /// not expired, and the secret matches.
    ///
    /// # Errors
    /// 500 with PVE's reason (the auth layer turns it into a 401).
    pub fn check_token(&self, userid: &str, tokenid: &str, secret: &str, now: i64) -> Result<()> {
        let user = self.check_user_enabled(userid, now)?;
        let token = user
            .tokens
            .get(tokenid)
            .ok_or_else(|| no_such_token(userid, tokenid))?;
        if token.expire != 0 && token.expire < now {
            return Err(Error::failed(format!("token '{tokenid}' access expired")));
        }
        if !shadow::token_matches(&token.secret, secret) {
            return Err(Error::failed("invalid token value!"));
        }
        Ok(())
    }

    /// Whether `who` holds every privilege anywhere without looking at
    /// ACLs: root@pam, and root's tokens without privilege separation.
    pub fn is_superuser(&self, who: &AuthId) -> bool {
        match who {
            AuthId::User(u) => u == "root@pam",
            AuthId::Token { userid, tokenid } => {
                userid == "root@pam"
                    && self
                        .users
                        .get(userid)
                        .and_then(|u| u.tokens.get(tokenid))
                        .is_some_and(|t| !t.privsep)
            }
        }
    }

    /// PVE's `check`: every privilege in `privs` on `path`.
    ///
    /// # Errors
    /// 403 `Permission check failed (<path>, <priv>)` naming the first
    /// missing privilege, as PVE does.
    pub fn check_perm(&self, who: &AuthId, path: &str, privs: &[&str]) -> Result<()> {
        let have = self.privileges(who, path);
        match privs.iter().find(|p| !have.contains_key(**p)) {
            Some(missing) => Err(Error::permission(path, &[missing])),
            None => Ok(()),
        }
    }

    /// PVE's `check_any`: at least one privilege of `privs` on `path`.
    ///
    /// # Errors
    /// 403 `Permission check failed (<path>, <privs joined by |>)`.
    pub fn check_any(&self, who: &AuthId, path: &str, privs: &[&str]) -> Result<()> {
        let have = self.privileges(who, path);
        if privs.iter().any(|p| have.contains_key(*p)) {
            Ok(())
        } else {
            Err(Error::permission(path, privs))
        }
    }

    /// Whether `who` holds the privilege on `path` (for answers that are
    /// filtered rather than refused).
    pub fn has_priv(&self, who: &AuthId, path: &str, privilege: &str) -> bool {
        self.holds(who, path, privilege)
    }

    /// Whether `who` holds any of `privs` on `path`.
    pub fn has_any(&self, who: &AuthId, path: &str, privs: &[&str]) -> bool {
        privs.iter().any(|p| self.holds(who, path, p))
    }

    /// Whether the user exists.
    pub fn user_exists(&self, userid: &str) -> bool {
        self.users.contains_key(userid)
    }

    /// Keeps every password as a crypt(3) hash and every token secret as
    /// its digest, as PVE keeps them: those given in clear (by a scenario,
    /// a hand-written state document or a save of an older release) are
    /// hashed now, salted with `key` and what they belong to, so that
    /// sealing the same world again gives the same hashes.
    pub fn seal(&mut self, key: &super::context::SecretKey) {
        for (userid, user) in &mut self.users {
            if let Some(pw) = &user.password
                && !shadow::is_hash(pw)
            {
                let salt = shadow::keyed_salt(key, userid, pw);
                user.password = Some(shadow::hash(pw, &salt));
            }
            for token in user.tokens.values_mut() {
                if !shadow::is_token_digest(&token.secret) {
                    token.secret = shadow::token_digest(&token.secret);
                }
            }
        }
        self.realms.seal(key);
    }
}
/// The 401 of a failed login.
pub fn auth_failure() -> Error {
    Error::Unauthorized("authentication failure".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("root@pam", true)]
    #[case("alice@pve", true)]
    #[case("a.b-c@my-ldap", true)]
    #[case("root", false)]
    #[case("@pam", false)]
    #[case("ro ot@pam", false)]
    #[case("a:b@pam", false)]
    #[case("root@p", false)]
    #[case("root@1pam", false)]
    fn userids(#[case] id: &str, #[case] ok: bool) {
        assert_eq!(valid_userid(id), ok, "{id}");
    }

    #[rstest]
    #[case("root@pam!ci", true)]
    #[case("root@pam!1ci", false)]
    #[case("root@pam!c", false)]
    #[case("root@pam!", false)]
    #[case("root@pam", true)]
    fn authids(#[case] id: &str, #[case] ok: bool) {
        assert_eq!(AuthId::parse(id).is_some(), ok, "{id}");
    }

    #[test]
    fn tokens_round_trip() {
        let mut a = Access::default();
        a.users.insert("root@pam".into(), User::new("root@pam"));
        let (t, secret) = a
            .create_token(
                "root@pam",
                "ci",
                false,
                0,
                None,
                &mut crate::model::Context::new(0, 1),
            )
            .expect("create");
        assert!(a.check_token("root@pam", "ci", &secret, 0).is_ok());
        assert!(
            shadow::is_token_digest(&t.secret),
            "only the digest is kept"
        );
        assert!(!serde_json::to_string(&a).expect("json").contains(&secret));
        assert_eq!(
            a.check_token("root@pam", "ci", "wrong", 0),
            Err(Error::failed("invalid token value!"))
        );
        assert_eq!(
            a.check_token("root@pam", "cd", &secret, 0),
            Err(Error::not_found("no such token 'cd' for user 'root@pam'"))
        );
        assert!(a.is_superuser(&AuthId::parse("root@pam!ci").expect("id")));
        assert!(
            a.create_token(
                "root@pam",
                "ci",
                true,
                0,
                None,
                &mut crate::model::Context::new(0, 2)
            )
            .is_err()
        );
        a.update_token("root@pam", "ci", Some(true), None, None)
            .expect("update");
        assert!(!a.is_superuser(&AuthId::parse("root@pam!ci").expect("id")));
        a.delete_token("root@pam", "ci").expect("delete");
        assert!(a.delete_token("root@pam", "ci").is_err());
    }
}
