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
    pub version: PveVersion,
    /// Users by userid.
    pub users: BTreeMap<String, User>,
    /// Groups by groupid.
    #[serde(default)]
    pub groups: BTreeMap<String, Group>,
    /// Custom roles (the built-in ones come from the release).
    #[serde(default)]
    pub roles: BTreeMap<String, BTreeSet<String>>,
    /// ACL entries by normalized path.
    #[serde(default)]
    pub acl: BTreeMap<String, AclNode>,
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
        self.privileges(who, path).contains_key(privilege)
    }

    /// Whether `who` holds any of `privs` on `path`.
    pub fn has_any(&self, who: &AuthId, path: &str, privs: &[&str]) -> bool {
        let have = self.privileges(who, path);
        privs.iter().any(|p| have.contains_key(*p))
    }

    /// Whether the user exists.
    pub fn user_exists(&self, userid: &str) -> bool {
        self.users.contains_key(userid)
    }

    /// The privileges of a role, built-in or custom.
    pub fn role_privs(&self, role: &str) -> Option<BTreeSet<String>> {
        acl::builtin_roles(self.version)
            .remove(role)
            .or_else(|| self.roles.get(role).cloned())
    }

    /// Every role, built-in and custom, with its privileges.
    pub fn all_roles(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut all = self.roles.clone();
        all.extend(acl::builtin_roles(self.version));
        all
    }

    /// The groups `userid` is a member of.
    pub fn user_groups(&self, userid: &str) -> Vec<String> {
        self.groups
            .iter()
            .filter(|(_, g)| g.members.contains(userid))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// PVE's `permissions()`: the privileges `who` holds on `path`, each
    /// with its propagate flag.
    pub fn privileges(&self, who: &AuthId, path: &str) -> BTreeMap<String, bool> {
        match who {
            AuthId::User(u) if u == "root@pam" => acl::valid_privs(self.version)
                .into_iter()
                .map(|p| (p.to_string(), true))
                .collect(),
            AuthId::User(u) => {
                if valid_userid(u) {
                    self.privs_of_roles(&self.roles_at(u, path))
                } else {
                    BTreeMap::new()
                }
            }
            AuthId::Token { userid, tokenid } => {
                let Some(token) = self.users.get(userid).and_then(|u| u.tokens.get(tokenid)) else {
                    return BTreeMap::new();
                };
                let user = self.privileges(&AuthId::User(userid.clone()), path);
                if !token.privsep {
                    return user;
                }
                let own = self.privs_of_roles(&self.roles_at(&who.to_string(), path));
                if userid == "root@pam" {
                    return own;
                }
                own.into_iter()
                    .filter_map(|(p, prop)| user.get(&p).map(|up| (p, prop && *up)))
                    .collect()
            }
        }
    }

    /// PVE's `roles()` for a userid or full token id, without the
    /// token's privilege separation (the caller handles it): the roles in
    /// force on `path` with their propagate flags.
    fn roles_at(&self, subject: &str, path: &str) -> BTreeMap<String, bool> {
        let mut comps: Vec<&str> = path.split('/').collect();
        while comps.len() > 1 && comps.last() == Some(&"") {
            comps.pop();
        }
        if path == "/" {
            comps = vec![""];
        }
        let mut roles = BTreeMap::new();
        let mut cur = String::new();
        let n = comps.len();
        for (i, p) in comps.into_iter().enumerate() {
            let last = i + 1 == n;
            if !p.is_empty() {
                cur.push('/');
                cur.push_str(p);
            }
            let key = if cur.is_empty() { "/" } else { cur.as_str() };
            let Some(node) = self.acl.get(key) else {
                continue;
            };
            let pick = |ri: &BTreeMap<String, bool>, into: &mut BTreeMap<String, bool>| {
                for (role, prop) in ri {
                    if last || *prop {
                        let e = into.entry(role.clone()).or_insert(false);
                        *e |= *prop;
                    }
                }
            };
            let mut new = BTreeMap::new();
            if let Some(ri) = node.tokens.get(subject) {
                pick(ri, &mut new);
            }
            if new.is_empty()
                && let Some(ri) = node.users.get(subject)
            {
                pick(ri, &mut new);
            }
            if new.is_empty() {
                for (g, ri) in &node.groups {
                    if self
                        .groups
                        .get(g)
                        .is_some_and(|g| g.members.contains(subject))
                    {
                        pick(ri, &mut new);
                    }
                }
            }
            if !new.is_empty() {
                roles = new;
            }
        }
        if let Some(prop) = roles.get("NoAccess") {
            return BTreeMap::from([("NoAccess".to_string(), *prop)]);
        }
        roles
    }

    fn privs_of_roles(&self, roles: &BTreeMap<String, bool>) -> BTreeMap<String, bool> {
        let mut privs = BTreeMap::new();
        for (role, prop) in roles {
            for p in self.role_privs(role).unwrap_or_default() {
                let e = privs.entry(p).or_insert(false);
                *e |= *prop;
            }
        }
        privs
    }

    /// The paths PVE's `get_effective_permissions` reports on: the top
    /// levels and every node of the ACL tree.
    pub fn permission_paths(&self) -> BTreeSet<String> {
        let mut paths: BTreeSet<String> = [
            "/",
            "/access",
            "/access/groups",
            "/nodes",
            "/pool",
            "/sdn",
            "/storage",
            "/vms",
        ]
        .iter()
        .map(|p| (*p).to_string())
        .collect();
        paths.extend(self.acl_tree_paths());
        paths
    }

    /// Every node of PVE's ACL tree: the ACL paths and their ancestors.
    pub fn acl_tree_paths(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::from(["/".to_string()]);
        for path in self.acl.keys() {
            let mut cur = String::new();
            for p in path.split('/').filter(|p| !p.is_empty()) {
                cur.push('/');
                cur.push_str(p);
                out.insert(cur.clone());
            }
        }
        out
    }

    /// PVE's `get_effective_permissions`: per path, the privileges held,
    /// leaving out paths without any.
    pub fn effective_permissions(&self, who: &AuthId) -> BTreeMap<String, BTreeMap<String, bool>> {
        self.permission_paths()
            .into_iter()
            .filter_map(|p| {
                let privs = self.privileges(who, &p);
                (!privs.is_empty()).then_some((p, privs))
            })
            .collect()
    }

    /// PVE's `compute_api_permission`: the login's `cap`, per GUI area the
    /// privileges held on the area's paths.
    pub fn api_capabilities(&self, who: &AuthId) -> BTreeMap<&'static str, BTreeSet<String>> {
        fn area_match(area: &str, p: &str) -> bool {
            let pm = p.starts_with("Permissions.Modify");
            match area {
                "vms" => p.starts_with("VM.") || pm,
                "access" => p.starts_with("User.") || p.starts_with("Group.") || pm,
                "storage" => p.starts_with("Datastore.") || pm,
                "nodes" => p.starts_with("Sys.") || pm,
                "sdn" => p.starts_with("SDN.") || pm,
                "dc" => {
                    p.starts_with("Sys.Audit")
                        || p.starts_with("Sys.Modify")
                        || p.starts_with("SDN.")
                }
                "mapping" => p.starts_with("Mapping.") || pm,
                _ => false,
            }
        }
        const AREAS: [&str; 7] = ["vms", "access", "storage", "nodes", "sdn", "dc", "mapping"];
        let mut res: BTreeMap<&'static str, BTreeSet<String>> =
            AREAS.iter().map(|a| (*a, BTreeSet::new())).collect();
        let mut paths: Vec<String> = [
            "/",
            "/nodes",
            "/access/groups",
            "/vms",
            "/storage",
            "/sdn",
            "/mapping",
        ]
        .iter()
        .map(|p| (*p).to_string())
        .collect();
        paths.extend(self.acl_tree_paths());
        let mut seen = BTreeSet::new();
        for path in paths {
            if !seen.insert(path.clone()) {
                continue;
            }
            let privs = self.privileges(who, &path);
            let top: String = path
                .strip_prefix('/')
                .unwrap_or("")
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let top = if top.is_empty() {
                "dc".to_string()
            } else {
                top
            };
            if top == "pool" {
                for p in privs.keys() {
                    if p.starts_with("VM.") {
                        res.entry("vms").or_default().insert(p.clone());
                    } else if p.starts_with("Datastore.") {
                        res.entry("storage").or_default().insert(p.clone());
                    } else if p == "Permissions.Modify" {
                        res.entry("storage").or_default().insert(p.clone());
                        res.entry("vms").or_default().insert(p.clone());
                    }
                }
                continue;
            }
            let Some(area) = AREAS.iter().find(|a| **a == top) else {
                continue;
            };
            for p in privs.keys().filter(|p| area_match(area, p)) {
                res.entry(area).or_default().insert(p.clone());
            }
        }
        res
    }

    /// PVE's `userid-group` permission test (without `groups_param`):
    /// the target user exists, and `who` holds one of `privs` on
    /// `/access/groups` or on a group the user is a member of. Like
    /// PVE's test itself it does not exempt root@pam; the API layer does.
    pub fn userid_group_allowed(&self, who: &AuthId, userid: &str, privs: &[&str]) -> bool {
        self.check_userid_group(who, userid, privs, GroupsParam::None, &[])
            .unwrap_or(false)
    }

    /// PVE's `userid-group` test with its `groups_param` variants;
    /// `groups` is the request's `groups` list. `Ok(false)` is the silent
    /// refusal (the caller raises `Permission check failed` or tries the
    /// next alternative of an `or`).
    ///
    /// # Errors
    /// 403 `Permission check failed (/access/groups[/<g>], <privs>)` when
    /// a listed group is out of reach.
    pub fn check_userid_group(
        &self,
        who: &AuthId,
        userid: &str,
        privs: &[&str],
        mode: GroupsParam,
        groups: &[String],
    ) -> Result<bool> {
        let check_existing = mode != GroupsParam::Create;
        if check_existing && !self.user_exists(userid) {
            return Ok(false);
        }
        if self.has_any(who, "/access/groups", privs) {
            return Ok(true);
        }
        let reachable: BTreeSet<&String> = self
            .groups
            .keys()
            .filter(|g| self.has_any(who, &format!("/access/groups/{g}"), privs))
            .collect();
        if mode != GroupsParam::None {
            if groups.is_empty() {
                return Err(Error::permission("/access/groups", privs));
            }
            for g in groups {
                if !reachable.contains(g) {
                    return Err(Error::permission(&format!("/access/groups/{g}"), privs));
                }
            }
        }
        if check_existing {
            return Ok(reachable
                .iter()
                .any(|g| self.groups[*g].members.contains(userid)));
        }
        Ok(true)
    }

    /// PVE's `check_perm_modify`: `Permissions.Modify` on `path`, or the
    /// object's allocate privilege for guests, storages and pools.
    ///
    /// # Errors
    /// 403 `Permission check failed (<path>, <privs joined by |>)`.
    pub fn check_perm_modify(&self, who: &AuthId, path: &str) -> Result<()> {
        let mut privs = vec!["Permissions.Modify"];
        let under = |prefix: &str| {
            path.strip_prefix(prefix)
                .is_some_and(|rest| !rest.is_empty())
        };
        if under("/storage/") {
            privs.push("Datastore.Allocate");
        } else if under("/vms/") {
            privs.push("VM.Allocate");
        } else if under("/pool/") {
            privs.push("Pool.Allocate");
        }
        self.check_any(who, path, &privs)
    }

    /// The ACL entries as `GET /access/acl` lists them, in PVE's order:
    /// paths depth-first by name, then users, groups and tokens.
    pub fn acl_entries(&self) -> Vec<(String, UgKind, String, String, bool)> {
        let mut out = Vec::new();
        let mut paths: Vec<&String> = self.acl.keys().collect();
        paths.sort_by(|a, b| {
            let sa: Vec<&str> = a.split('/').filter(|s| !s.is_empty()).collect();
            let sb: Vec<&str> = b.split('/').filter(|s| !s.is_empty()).collect();
            sa.cmp(&sb)
        });
        for path in paths {
            let node = &self.acl[path];
            for (kind, map) in [
                (UgKind::User, &node.users),
                (UgKind::Group, &node.groups),
                (UgKind::Token, &node.tokens),
            ] {
                for (id, roles) in map {
                    for (role, prop) in roles {
                        out.push((path.clone(), kind, id.clone(), role.clone(), *prop));
                    }
                }
            }
        }
        out
    }

    /// Adds or removes ACL entries (the model side of `PUT /access/acl`).
    /// `path` must be normalized. root@pam's own user entries are not
    /// kept, as PVE never writes them.
    ///
    /// # Errors
    /// 500 for an unknown role, group, user or token, with PVE's messages.
    pub fn update_acl(&mut self, path: &str, change: &AclUpdate<'_>) -> Result<()> {
        let AclUpdate {
            roles,
            users,
            groups,
            tokens,
            propagate,
            delete,
        } = *change;
        let mut node = self.acl.get(path).cloned().unwrap_or_default();
        for role in roles {
            if self.role_privs(role).is_none() {
                return Err(Error::not_found(format!("role '{role}' does not exist")));
            }
            for g in groups {
                if !self.groups.contains_key(g) {
                    return Err(Error::not_found(format!("group '{g}' does not exist")));
                }
                set_role(&mut node.groups, g, role, propagate, delete);
            }
            for u in users {
                if !self.users.contains_key(u) {
                    return Err(Error::not_found(format!("user '{u}' does not exist")));
                }
                if u != "root@pam" {
                    set_role(&mut node.users, u, role, propagate, delete);
                }
            }
            for t in tokens {
                let Some(AuthId::Token { userid, tokenid }) = AuthId::parse(t) else {
                    return Err(Error::failed(format!(
                        "'{t}' is not a valid token ID - not able to split into user and token parts"
                    )));
                };
                self.token(&userid, &tokenid)?;
                set_role(&mut node.tokens, t, role, propagate, delete);
            }
        }
        node.prune();
        if node.is_empty() {
            self.acl.remove(path);
        } else {
            self.acl.insert(path.to_string(), node);
        }
        Ok(())
    }

    /// Removes every ACL entry of a subject (user, group or token).
    pub fn remove_acl_subject(&mut self, kind: UgKind, id: &str) {
        for node in self.acl.values_mut() {
            match kind {
                UgKind::User => node.users.remove(id),
                UgKind::Group => node.groups.remove(id),
                UgKind::Token => node.tokens.remove(id),
            };
        }
        self.acl.retain(|_, n| !n.is_empty());
    }

    /// Removes a role from every ACL entry (PVE drops such entries when it
    /// next reads `user.cfg`).
    fn remove_acl_role(&mut self, role: &str) {
        for node in self.acl.values_mut() {
            for m in [&mut node.users, &mut node.groups, &mut node.tokens] {
                for roles in m.values_mut() {
                    roles.remove(role);
                }
            }
            node.prune();
        }
        self.acl.retain(|_, n| !n.is_empty());
    }

    /// Creates a custom role.
    ///
    /// # Errors
    /// 500 `create role failed: ...` as PVE words it.
    pub fn create_role(&mut self, roleid: &str, privs: &[String]) -> Result<()> {
        if self.role_privs(roleid).is_some() {
            return Err(Error::exists(format!(
                "create role failed: role '{roleid}' already exists"
            )));
        }
        let set = self
            .checked_privs(privs)
            .map_err(|e| e.map_message(|m| format!("create role failed: {m}")))?;
        self.roles.insert(roleid.to_string(), set);
        Ok(())
    }

    /// Replaces (or, with `append`, extends) a custom role's privileges.
    ///
    /// # Errors
    /// 500 for built-in or unknown roles and invalid privileges.
    pub fn update_role(&mut self, roleid: &str, privs: &[String], append: bool) -> Result<()> {
        if acl::role_is_special(roleid) {
            return Err(Error::failed(format!(
                "auto-generated role '{roleid}' cannot be modified"
            )));
        }
        if !self.roles.contains_key(roleid) {
            return Err(Error::not_found(format!(
                "update role failed: role '{roleid}' does not exist"
            )));
        }
        let set = self
            .checked_privs(privs)
            .map_err(|e| e.map_message(|m| format!("update role failed: {m}")))?;
        let role = self.roles.entry(roleid.to_string()).or_default();
        if !append {
            role.clear();
        }
        role.extend(set);
        Ok(())
    }

    /// Deletes a custom role and the ACL entries that name it.
    ///
    /// # Errors
    /// 500 for built-in or unknown roles.
    pub fn delete_role(&mut self, roleid: &str) -> Result<()> {
        if acl::role_is_special(roleid) {
            return Err(Error::failed(format!(
                "auto-generated role '{roleid}' cannot be deleted"
            )));
        }
        if self.roles.remove(roleid).is_none() {
            return Err(Error::not_found(format!(
                "delete role failed: role '{roleid}' does not exist"
            )));
        }
        self.remove_acl_role(roleid);
        Ok(())
    }

    fn checked_privs(&self, privs: &[String]) -> Result<BTreeSet<String>> {
        privs
            .iter()
            .map(|p| {
                if acl::is_valid_priv(self.version, p) {
                    Ok(p.clone())
                } else {
                    Err(Error::failed(format!("invalid privilege '{p}'")))
                }
            })
            .collect()
    }

    /// Creates a group.
    ///
    /// # Errors
    /// 500 `create group failed: group '<g>' already exists`.
    pub fn create_group(&mut self, groupid: &str, comment: Option<String>) -> Result<()> {
        if self.groups.contains_key(groupid) {
            return Err(Error::exists(format!(
                "create group failed: group '{groupid}' already exists"
            )));
        }
        self.groups.insert(
            groupid.to_string(),
            Group {
                comment,
                members: BTreeSet::new(),
            },
        );
        Ok(())
    }

    /// Deletes a group and its ACL entries.
    ///
    /// # Errors
    /// 500 `delete group failed: group '<g>' does not exist`.
    pub fn delete_group(&mut self, groupid: &str) -> Result<()> {
        if self.groups.remove(groupid).is_none() {
            return Err(Error::not_found(format!(
                "delete group failed: group '{groupid}' does not exist"
            )));
        }
        self.remove_acl_subject(UgKind::Group, groupid);
        Ok(())
    }

    /// Puts a user into groups; with `replace`, takes it out of every
    /// other group first (`update_user` without `append`).
    ///
    /// # Errors
    /// 500 `no such group '<g>'` (the caller adds its prefix).
    pub fn set_user_groups(
        &mut self,
        userid: &str,
        groups: &[String],
        replace: bool,
    ) -> Result<()> {
        if let Some(g) = groups.iter().find(|g| !self.groups.contains_key(*g)) {
            // PVE has removed the old memberships by then, but the whole
            // change is not written.
            return Err(Error::not_found(format!("no such group '{g}'")));
        }
        if replace {
            for g in self.groups.values_mut() {
                g.members.remove(userid);
            }
        }
        for g in groups {
            if let Some(group) = self.groups.get_mut(g) {
                group.members.insert(userid.to_string());
            }
        }
        Ok(())
    }

    /// Deletes a user with its tokens, group memberships and ACL entries.
    pub fn delete_user(&mut self, userid: &str) {
        if let Some(user) = self.users.remove(userid) {
            for t in user.tokens.keys() {
                self.remove_acl_subject(UgKind::Token, &format!("{userid}!{t}"));
            }
        }
        for g in self.groups.values_mut() {
            g.members.remove(userid);
        }
        self.remove_acl_subject(UgKind::User, userid);
    }

    /// Looks up a user.
    ///
    /// # Errors
    /// 500 `no such user ('<userid>')`.
    pub fn user(&self, userid: &str) -> Result<&User> {
        self.users
            .get(userid)
            .ok_or_else(|| Error::not_found(format!("no such user ('{userid}')")))
    }

    fn user_mut(&mut self, userid: &str) -> Result<&mut User> {
        self.users
            .get_mut(userid)
            .ok_or_else(|| Error::not_found(format!("no such user ('{userid}')")))
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
        rq: &mut super::Context,
    ) -> Result<Token> {
        let user = self.user_mut(userid)?;
        if user.tokens.contains_key(tokenid) {
            return Err(Error::invalid("tokenid", "Token already exists."));
        }
        let token = Token {
            tokenid: tokenid.to_string(),
            secret: rq.uuid_v4(),
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
            .ok_or_else(|| no_such_token(userid, tokenid))?;
        self.remove_acl_subject(UgKind::Token, &format!("{userid}!{tokenid}"));
        Ok(())
    }
}

fn set_role(
    map: &mut BTreeMap<String, BTreeMap<String, bool>>,
    id: &str,
    role: &str,
    propagate: bool,
    delete: bool,
) {
    if delete {
        if let Some(roles) = map.get_mut(id) {
            roles.remove(role);
        }
    } else {
        map.entry(id.to_string())
            .or_default()
            .insert(role.to_string(), propagate);
    }
}

fn no_such_token(userid: &str, tokenid: &str) -> Error {
    Error::not_found(format!("no such token '{tokenid}' for user '{userid}'"))
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
        let t = a
            .create_token(
                "root@pam",
                "ci",
                false,
                0,
                None,
                &mut crate::model::Context::new(0, 1),
            )
            .expect("create");
        assert!(a.check_token("root@pam", "ci", &t.secret, 0).is_ok());
        assert_eq!(
            a.check_token("root@pam", "ci", "wrong", 0),
            Err(Error::failed("invalid token value!"))
        );
        assert_eq!(
            a.check_token("root@pam", "cd", &t.secret, 0),
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
