//! Users, API tokens and permission checks (pve-access-control).
//!
//! Full roles and ACLs are not modelled yet: root@pam and its tokens
//! without privilege separation may do everything, every other identity
//! holds no privilege and is refused with PVE's 403.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Error, Result};

/// A user of the `pam` or `pve` realm.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct User {
    /// `name@realm`.
    pub userid: String,
    /// Login password.
    #[serde(skip_serializing_if = "Option::is_none")]
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
    /// The secret (a UUID).
    pub secret: String,
    /// Privilege separation: the token only gets what ACLs grant it.
    pub privsep: bool,
    /// Expiry, epoch seconds; 0 never expires.
    pub expire: i64,
    /// Free-form comment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

impl Token {
    /// The `info` object PVE answers for a token.
    pub fn info(&self) -> Value {
        let mut v = json!({ "privsep": u8::from(self.privsep), "expire": self.expire });
        if let Some(c) = &self.comment {
            v["comment"] = json!(c);
        }
        v
    }
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

/// The realms of a fresh install, as `GET /access/domains` lists them.
pub const REALMS: &[(&str, &str, &str)] = &[
    ("pam", "pam", "Linux PAM standard authentication"),
    ("pve", "pve", "Proxmox VE authentication server"),
];

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

/// `pve-tokenid`: a letter, then letters, digits, `.`, `-` or `_`.
pub fn valid_tokenid(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_alphabetic()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_'))
}

/// The access-control part of the cluster state.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Access {
    /// Users by userid.
    pub users: BTreeMap<String, User>,
}

impl Access {
    /// Checks a login: the user exists, is enabled, has not expired, and the
    /// password matches. Every failure is the same 401, as in PVE.
    ///
    /// # Errors
    /// 401 `authentication failure`.
    pub fn check_password(&self, userid: &str, password: &str, now: i64) -> Result<()> {
        match self.check_user_enabled(userid, now) {
            Ok(u) if u.password.as_deref() == Some(password) => Ok(()),
            _ => Err(auth_failure()),
        }
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
        if token.secret != secret {
            return Err(Error::failed("invalid token value!"));
        }
        Ok(())
    }

    /// Whether `who` holds every privilege anywhere: root@pam, and root's
    /// tokens without privilege separation. Roles and ACLs for everyone
    /// else are not modelled yet, so they hold none.
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

    /// PVE's `check_perm`: every privilege (or, with `any`, one of them) on
    /// `path`.
    ///
    /// # Errors
    /// 403 `Permission check failed (<path>, <privs>)`.
    pub fn check_perm(&self, who: &AuthId, path: &str, privs: &[&str]) -> Result<()> {
        if self.is_superuser(who) {
            Ok(())
        } else {
            Err(Error::permission(path, privs))
        }
    }

    /// Whether `who` holds the privilege on `path` (for answers that are
    /// filtered rather than refused).
    pub fn has_priv(&self, who: &AuthId, _path: &str, _privilege: &str) -> bool {
        self.is_superuser(who)
    }

    /// Looks up a user.
    ///
    /// # Errors
    /// 500 `no such user ('<userid>')`.
    pub fn user(&self, userid: &str) -> Result<&User> {
        self.users
            .get(userid)
            .ok_or_else(|| Error::failed(format!("no such user ('{userid}')")))
    }

    fn user_mut(&mut self, userid: &str) -> Result<&mut User> {
        self.users
            .get_mut(userid)
            .ok_or_else(|| Error::failed(format!("no such user ('{userid}')")))
    }

    /// Looks up a token.
    ///
    /// # Errors
    /// 500 for an unknown user or token, with PVE's messages.
    pub fn token(&self, userid: &str, tokenid: &str) -> Result<&Token> {
        self.user(userid)?
            .tokens
            .get(tokenid)
            .ok_or_else(|| no_such_token(userid, tokenid))
    }

    /// Creates a token and returns it (with its secret).
    ///
    /// # Errors
    /// 500 when the user is unknown or the token exists.
    pub fn create_token(
        &mut self,
        userid: &str,
        tokenid: &str,
        privsep: bool,
        expire: i64,
        comment: Option<String>,
    ) -> Result<Token> {
        let user = self.user_mut(userid)?;
        if user.tokens.contains_key(tokenid) {
            return Err(Error::invalid("tokenid", "Token already exists."));
        }
        let token = Token {
            tokenid: tokenid.to_string(),
            secret: uuid::Uuid::new_v4().to_string(),
            privsep,
            expire,
            comment,
        };
        user.tokens.insert(tokenid.to_string(), token.clone());
        Ok(token)
    }

    /// Changes a token's settings; `None` keeps a value.
    ///
    /// # Errors
    /// 500 when the user or token is unknown.
    pub fn update_token(
        &mut self,
        userid: &str,
        tokenid: &str,
        privsep: Option<bool>,
        expire: Option<i64>,
        comment: Option<String>,
    ) -> Result<Token> {
        let token = self
            .user_mut(userid)?
            .tokens
            .get_mut(tokenid)
            .ok_or_else(|| no_such_token(userid, tokenid))?;
        if let Some(p) = privsep {
            token.privsep = p;
        }
        if let Some(e) = expire {
            token.expire = e;
        }
        if let Some(c) = comment {
            token.comment = Some(c);
        }
        Ok(token.clone())
    }

    /// Removes a token's comment.
    ///
    /// # Errors
    /// 500 when the user or token is unknown.
    pub fn clear_token_comment(&mut self, userid: &str, tokenid: &str) -> Result<Token> {
        let token = self
            .user_mut(userid)?
            .tokens
            .get_mut(tokenid)
            .ok_or_else(|| no_such_token(userid, tokenid))?;
        token.comment = None;
        Ok(token.clone())
    }

    /// Removes a token.
    ///
    /// # Errors
    /// 500 when the user or token is unknown.
    pub fn delete_token(&mut self, userid: &str, tokenid: &str) -> Result<()> {
        self.user_mut(userid)?
            .tokens
            .remove(tokenid)
            .map(|_| ())
            .ok_or_else(|| no_such_token(userid, tokenid))
    }
}

fn no_such_token(userid: &str, tokenid: &str) -> Error {
    Error::failed(format!("no such token '{tokenid}' for user '{userid}'"))
}

/// The 401 of a failed login.
pub fn auth_failure() -> Error {
    Error::Status {
        code: 401,
        msg: "authentication failure".into(),
    }
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
    #[case("root@pam!", false)]
    #[case("root@pam", true)]
    fn authids(#[case] id: &str, #[case] ok: bool) {
        assert_eq!(AuthId::parse(id).is_some(), ok, "{id}");
    }

    #[test]
    fn tokens_round_trip() {
        let mut a = Access::default();
        a.users.insert("root@pam".into(), User::new("root@pam"));
        let t = a
            .create_token("root@pam", "ci", false, 0, None)
            .expect("create");
        assert!(a.check_token("root@pam", "ci", &t.secret, 0).is_ok());
        assert_eq!(
            a.check_token("root@pam", "ci", "wrong", 0),
            Err(Error::failed("invalid token value!"))
        );
        assert_eq!(
            a.check_token("root@pam", "cd", &t.secret, 0),
            Err(Error::failed("no such token 'cd' for user 'root@pam'"))
        );
        assert!(a.is_superuser(&AuthId::parse("root@pam!ci").expect("id")));
        assert!(a.create_token("root@pam", "ci", true, 0, None).is_err());
        a.update_token("root@pam", "ci", Some(true), None, None)
            .expect("update");
        assert!(!a.is_superuser(&AuthId::parse("root@pam!ci").expect("id")));
        a.delete_token("root@pam", "ci").expect("delete");
        assert!(a.delete_token("root@pam", "ci").is_err());
    }
}
