//! ACL entries and roles: `/access/acl` and `/access/roles` edits
//! (pve-access-control `API2/ACL.pm`, `API2/Role.pm`).

use super::*;

impl Access {
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

    /// Gives `userid` `role` on `path` (propagated): the ACL entry the
    /// model's tests grant most.
    #[cfg(test)]
    pub(crate) fn grant(&mut self, path: &str, role: &str, userid: &str) {
        let (roles, users) = ([role.to_string()], [userid.to_string()]);
        let change = AclUpdate {
            roles: &roles,
            users: &users,
            groups: &[],
            tokens: &[],
            propagate: true,
            delete: false,
        };
        self.update_acl(path, &change)
            .expect("a grant the test can make");
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
