//! What a user or token may do: roles and privileges per path, the
//! effective permissions, API capabilities and the checks on users'
//! groups (pve-access-control `RPCEnvironment.pm` `permissions`,
//! `check_user_*`).

use super::*;

impl Access {
    /// The privileges of a role, built-in or custom.
    pub fn role_privs(&self, role: &str) -> Option<BTreeSet<String>> {
        self.role_privs_ref(role).cloned()
    }

    /// [`Self::role_privs`] without a copy.
    fn role_privs_ref(&self, role: &str) -> Option<&BTreeSet<String>> {
        acl::builtin_roles_shared(self.version)
            .get(role)
            .or_else(|| self.roles.get(role))
    }

    /// Whether `who` holds `privilege` on `path`: what
    /// `privileges(who, path)` has, without making the whole map (every
    /// permission check asks it).
    pub(super) fn holds(&self, who: &AuthId, path: &str, privilege: &str) -> bool {
        let granted = |roles: &BTreeMap<String, bool>| {
            roles.keys().any(|r| {
                self.role_privs_ref(r)
                    .is_some_and(|p| p.contains(privilege))
            })
        };
        match who {
            AuthId::User(u) if u == "root@pam" => acl::is_valid_priv(self.version, privilege),
            AuthId::User(u) => valid_userid(u) && granted(&self.roles_with_pools(u, path)),
            AuthId::Token { userid, tokenid } => {
                let Some(token) = self.users.get(userid).and_then(|u| u.tokens.get(tokenid)) else {
                    return false;
                };
                let user = || self.holds(&AuthId::User(userid.clone()), path, privilege);
                if !token.privsep {
                    return user();
                }
                let own = granted(&self.roles_with_pools(&who.to_string(), path));
                if userid == "root@pam" {
                    return own;
                }
                own && user()
            }
        }
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
                    self.privs_of_roles(&self.roles_with_pools(u, path))
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
                let own = self.privs_of_roles(&self.roles_with_pools(&who.to_string(), path));
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

    /// [`Self::roles_at`] with the roles held on the pools a guest or
    /// storage belongs to (`RPCEnvironment::compute_api_permission`'s
    /// pool roles): they never propagate, never override a role set by
    /// the ACL, and a `NoAccess` on the pool trumps the ACL unless the
    /// ACL itself says `NoAccess`.
    fn roles_with_pools(&self, subject: &str, path: &str) -> BTreeMap<String, bool> {
        let mut roles = self.roles_at(subject, path);
        let mut from_pools = BTreeSet::new();
        for pool in self.pools.pools_of_path(path) {
            from_pools.extend(self.roles_at(subject, &format!("/pool/{pool}")).into_keys());
        }
        if from_pools.is_empty() || roles.contains_key("NoAccess") {
            return roles;
        }
        if from_pools.contains("NoAccess") {
            return BTreeMap::from([("NoAccess".to_string(), false)]);
        }
        for role in from_pools {
            roles.entry(role).or_insert(false);
        }
        roles
    }

    fn privs_of_roles(&self, roles: &BTreeMap<String, bool>) -> BTreeMap<String, bool> {
        let mut privs = BTreeMap::new();
        for (role, prop) in roles {
            for p in self.role_privs_ref(role).into_iter().flatten() {
                let e = privs.entry(p.clone()).or_insert(false);
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
        for (_, pool) in self.pools.iter() {
            paths.extend(pool.vms().iter().map(|v| format!("/vms/{v}")));
            paths.extend(pool.storage().iter().map(|s| format!("/storage/{s}")));
        }
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
}
