//! The access part of a scenario: users with their tokens, groups, roles
//! and ACL entries, checked as pve-access-control checks them.

use super::*;

impl Scenario {
    pub(super) fn build_access(
        &self,
        version: PveVersion,
        root_password: &str,
    ) -> Result<Access, ScenarioError> {
        let mut access = Access {
            version,
            ..Access::default()
        };
        let mut root = User::new("root@pam");
        root.password = Some(root_password.to_string());
        root.email = Some("root@localhost".into());
        access.users.insert(root.userid.clone(), root);
        self.build_realms(&mut access)?;
        for u in &self.users {
            if !valid_userid(&u.userid) {
                return Err(self.err(&u.userid, format!("invalid userid '{}'", u.userid)));
            }
            let realm = u.userid.rsplit('@').next().unwrap_or_default();
            if access.realms.get(realm).is_none() {
                return Err(self.err(
                    &u.userid,
                    format!(
                        "user '{}': unknown realm '{realm}' (pam, pve or one of realms)",
                        u.userid
                    ),
                ));
            }
            let is_root = u.userid == "root@pam";
            if !is_root && access.users.contains_key(&u.userid) {
                return Err(self.dup_err(&u.userid, format!("duplicate user '{}'", u.userid)));
            }
            let mut user = access
                .users
                .remove(&u.userid)
                .unwrap_or_else(|| User::new(&u.userid));
            if !is_root || u.password.is_some() {
                user.password.clone_from(&u.password);
            }
            user.enable = u.enable;
            user.expire = u.expire;
            user.comment.clone_from(&u.comment);
            if u.email.is_some() {
                user.email.clone_from(&u.email);
            }
            for t in &u.tokens {
                if !valid_tokenid(&t.tokenid) {
                    return Err(self.err(&t.tokenid, format!("invalid token id '{}'", t.tokenid)));
                }
                let token = Token {
                    tokenid: t.tokenid.clone(),
                    secret: t
                        .secret
                        .clone()
                        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
                    privsep: t.privsep,
                    expire: t.expire,
                    comment: t.comment.clone(),
                };
                if user.tokens.insert(t.tokenid.clone(), token).is_some() {
                    return Err(
                        self.dup_err(&t.tokenid, format!("duplicate token '{}'", t.tokenid))
                    );
                }
            }
            access.users.insert(u.userid.clone(), user);
            for f in &u.tfa {
                let mut key = [0u8; 20];
                key[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
                key[16..].copy_from_slice(&uuid::Uuid::new_v4().as_bytes()[..4]);
                let id = match (&f.id, f.kind.as_str()) {
                    (Some(id), _) => id.clone(),
                    (None, "recovery") => "recovery".into(),
                    (None, _) => uuid::Uuid::new_v4().to_string(),
                };
                let info = crate::model::access::tfa::SeedInfo {
                    id,
                    description: f.description.clone().unwrap_or_default(),
                    created: f.created.unwrap_or(0),
                    enable: f.enable,
                };
                access
                    .tfa
                    .seed(&u.userid, &f.kind, info, key)
                    .map_err(|e| self.err(&u.userid, format!("user '{}': {e}", u.userid)))?;
            }
        }
        self.build_groups(&mut access)?;
        self.build_roles(&mut access)?;
        self.build_acl(&mut access)?;
        self.build_pools(&mut access)?;
        self.build_tag_access(&mut access)?;
        Ok(access)
    }

    /// The realms besides pam and pve, checked as `POST /access/domains`
    /// checks them.
    fn build_realms(&self, access: &mut Access) -> Result<(), ScenarioError> {
        for r in &self.realms {
            if !valid_realm(&r.realm) {
                return Err(self.err(&r.realm, format!("invalid realm '{}'", r.realm)));
            }
            let options = r
                .options
                .iter()
                .map(|(k, v)| {
                    let text = match v {
                        serde_yaml::Value::Bool(b) => u8::from(*b).to_string(),
                        serde_yaml::Value::String(s) => s.clone(),
                        serde_yaml::Value::Number(n) => n.to_string(),
                        other => serde_yaml::to_string(other)
                            .unwrap_or_default()
                            .trim()
                            .to_string(),
                    };
                    (k.clone(), text)
                })
                .collect();
            access
                .realms
                .declare(
                    &r.realm,
                    &r.kind,
                    options,
                    r.password.clone(),
                    r.directory.clone(),
                )
                .map_err(|e| {
                    let msg = match e.errors() {
                        Some(errs) => errs
                            .iter()
                            .map(|(k, v)| format!("{k}: {v}"))
                            .collect::<Vec<_>>()
                            .join(", "),
                        None => e.message().to_string(),
                    };
                    self.err(&r.realm, format!("realm '{}': {msg}", r.realm))
                })?;
        }
        Ok(())
    }

    /// `datacenter.cfg`'s tag rules.
    fn build_tag_access(&self, access: &mut Access) -> Result<(), ScenarioError> {
        let dc = &self.datacenter;
        let mut rules = crate::model::access::tags::TagAccess {
            registered: dc.registered_tags.clone(),
            ..Default::default()
        };
        if let Some(u) = &dc.user_tag_access {
            if let Some(a) = &u.user_allow {
                if !["none", "list", "existing", "free"].contains(&a.as_str()) {
                    return Err(self.err(
                        a,
                        format!(
                            "datacenter: user-allow must be none, list, existing or free, not '{a}'"
                        ),
                    ));
                }
                rules.user_allow.clone_from(a);
            }
            rules.allow_list.clone_from(&u.user_allow_list);
        }
        access.set_tag_access(rules);
        Ok(())
    }

    /// The pools, as `POST /pools` and `PUT /pools` would make them.
    fn build_pools(&self, access: &mut Access) -> Result<(), ScenarioError> {
        for p in &self.pools {
            let mut set = |e: crate::model::Error| self.err(&p.poolid, format!("pools: {e}"));
            access
                .pools_mut()
                .create(&p.poolid, p.comment.clone())
                .map_err(&mut set)?;
            let up = crate::model::pools::PoolUpdate {
                vms: p.vms.clone(),
                storage: p.storage.clone(),
                ..Default::default()
            };
            let root = AuthId::User("root@pam".into());
            access.update_pool(&root, &p.poolid, &up).map_err(set)?;
        }
        Ok(())
    }

    fn build_groups(&self, access: &mut Access) -> Result<(), ScenarioError> {
        for g in &self.groups {
            if !valid_groupid(&g.groupid) {
                return Err(self.err(&g.groupid, format!("invalid group id '{}'", g.groupid)));
            }
            if access.groups.contains_key(&g.groupid) {
                return Err(self.dup_err(&g.groupid, format!("duplicate group '{}'", g.groupid)));
            }
            let mut group = Group {
                comment: g.comment.clone(),
                ..Group::default()
            };
            for m in &g.members {
                if !access.users.contains_key(m) {
                    return Err(self.err(m, format!("group '{}': unknown user '{m}'", g.groupid)));
                }
                group.members.insert(m.clone());
            }
            access.groups.insert(g.groupid.clone(), group);
        }
        for u in &self.users {
            for g in &u.groups {
                let Some(group) = access.groups.get_mut(g) else {
                    return Err(self.err(g, format!("user '{}': unknown group '{g}'", u.userid)));
                };
                group.members.insert(u.userid.clone());
            }
        }
        Ok(())
    }

    fn build_roles(&self, access: &mut Access) -> Result<(), ScenarioError> {
        for r in &self.roles {
            if r.roleid.is_empty()
                || !r
                    .roleid
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_'))
            {
                return Err(self.err(&r.roleid, format!("invalid role id '{}'", r.roleid)));
            }
            if role_is_special(&r.roleid) {
                return Err(self.err(
                    &r.roleid,
                    format!("role '{}' is built in and cannot be redefined", r.roleid),
                ));
            }
            if r.roleid.to_ascii_lowercase().starts_with("pve") {
                return Err(self.err(
                    &r.roleid,
                    format!(
                        "role '{}': cannot use role ID starting with the (case-insensitive) 'PVE' namespace",
                        r.roleid
                    ),
                ));
            }
            if access.roles.contains_key(&r.roleid) {
                return Err(self.dup_err(&r.roleid, format!("duplicate role '{}'", r.roleid)));
            }
            for p in &r.privs {
                if !is_valid_priv(access.version, p) {
                    return Err(self.err(
                        p,
                        format!(
                            "role '{}': invalid privilege '{p}' in PVE {}",
                            r.roleid, access.version
                        ),
                    ));
                }
            }
            access
                .roles
                .insert(r.roleid.clone(), r.privs.iter().cloned().collect());
        }
        Ok(())
    }

    fn build_acl(&self, access: &mut Access) -> Result<(), ScenarioError> {
        for a in &self.acl {
            let path = normalize_path(&a.path)
                .filter(|p| check_path(p))
                .ok_or_else(|| self.err(&a.path, format!("invalid ACL path '{}'", a.path)))?;
            if a.roles.is_empty() {
                return Err(self.err(&a.path, format!("acl '{}': no roles", a.path)));
            }
            if a.users.is_empty() && a.groups.is_empty() && a.tokens.is_empty() {
                return Err(self.err(
                    &a.path,
                    format!(
                        "acl '{}': either users, groups or tokens is required",
                        a.path
                    ),
                ));
            }
            for r in &a.roles {
                if access.role_privs(r).is_none() {
                    return Err(self.err(r, format!("acl '{}': unknown role '{r}'", a.path)));
                }
            }
            for u in &a.users {
                if !access.users.contains_key(u) {
                    return Err(self.err(u, format!("acl '{}': unknown user '{u}'", a.path)));
                }
            }
            for g in &a.groups {
                if !access.groups.contains_key(g) {
                    return Err(self.err(g, format!("acl '{}': unknown group '{g}'", a.path)));
                }
            }
            for t in &a.tokens {
                let known = match AuthId::parse(t) {
                    Some(AuthId::Token { userid, tokenid }) => {
                        access.token(&userid, &tokenid).is_ok()
                    }
                    _ => false,
                };
                if !known {
                    return Err(self.err(t, format!("acl '{}': unknown token '{t}'", a.path)));
                }
            }
            access
                .update_acl(
                    &path,
                    &AclUpdate {
                        roles: &a.roles,
                        users: &a.users,
                        groups: &a.groups,
                        tokens: &a.tokens,
                        propagate: a.propagate,
                        delete: false,
                    },
                )
                .map_err(|e| self.err(&a.path, format!("acl '{}': {e}", a.path)))?;
        }
        Ok(())
    }
}

/// A second factor of a scenario user (`tfa:`): listed as given, with a
/// new secret nobody knows (a TOTP key, ten recovery keys).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TfaSpec {
    /// `totp` or `recovery`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its id (a TOTP entry's default: a new UUID).
    #[serde(default)]
    pub id: Option<String>,
    /// Its description.
    #[serde(default)]
    pub description: Option<String>,
    /// When it was made, epoch seconds.
    #[serde(default)]
    pub created: Option<i64>,
    /// Whether it is enabled (default true).
    #[serde(default = "yes")]
    pub enable: bool,
}
