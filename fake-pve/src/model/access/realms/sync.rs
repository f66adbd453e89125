//! A realm sync (`POST /access/domains/{realm}/sync`): its options, as
//! given and as the realm's `sync-defaults-options` complete them, and
//! its worker, which brings the realm's users and groups into
//! `user.cfg` from the directory (pve-access-control `API2/Domains.pm`).

use super::*;

/// `$map_sync_default_options`: the deprecated `full` and `purge` of
/// `sync-defaults-options` become `remove-vanished`.
pub(super) fn map_sync_defaults(options: &mut BTreeMap<String, ConfValue>) {
    let Some(text) = options
        .get("sync-defaults-options")
        .and_then(ConfValue::as_str)
    else {
        return;
    };
    let mut map = parse_property_string(text);
    let on = |v: Option<&String>| v.is_some_and(|v| v == "1" || v == "true");
    if !map.contains_key("remove-vanished") && (on(map.get("full")) || on(map.get("purge"))) {
        let mut props = Vec::new();
        if on(map.get("full")) {
            props.extend(["entry", "properties"]);
        }
        if on(map.get("purge")) {
            props.push("acl");
        }
        map.insert("remove-vanished".into(), props.join(";"));
    }
    map.remove("full");
    map.remove("purge");
    let text: Vec<String> = map.iter().map(|(k, v)| format!("{k}={v}")).collect();
    options.insert("sync-defaults-options".into(), text.join(",").into());
}

/// The options of one sync, after `$parse_sync_opts`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncOptions {
    /// `users`, `groups` or `both`.
    pub scope: String,
    /// `none` or a `;`-list of `acl`, `properties`, `entry`.
    pub remove_vanished: String,
    /// Whether new users are enabled.
    pub enable_new: bool,
}

/// What a sync request gives: each option may be missing.
#[derive(Debug, Clone, Default)]
pub struct SyncParams {
    /// `scope`.
    pub scope: Option<String>,
    /// `remove-vanished`.
    pub remove_vanished: Option<String>,
    /// `enable-new`.
    pub enable_new: Option<bool>,
    /// Deprecated `full`.
    pub full: Option<bool>,
    /// Deprecated `purge`.
    pub purge: Option<bool>,
}

impl Access {
    /// The checks `POST /access/domains/{realm}/sync` makes before its
    /// worker starts, and the options the worker uses.
    ///
    /// # Errors
    /// 400 `realm: Realm does not exist.`; 500 for a realm that is not
    /// LDAP or AD; 400 `scope: ...` when no scope is given or configured.
    pub fn sync_options(&self, realm: &str, p: &SyncParams) -> Result<SyncOptions> {
        let Some(r) = self.realms.get(realm) else {
            return Err(Error::invalid("realm", "Realm does not exist."));
        };
        if !r.kind.is_directory() {
            return Err(Error::failed(format!(
                "Cannot sync realm type '{}'! Only LDAP/AD realms can be synced.",
                r.kind.as_str()
            )));
        }
        let defaults = r
            .text("sync-defaults-options")
            .map(|t| parse_property_string(&t))
            .unwrap_or_default();
        let flag = |v: Option<&String>| v.map(|v| v == "1" || v == "true");
        let scope = p.scope.clone().or_else(|| defaults.get("scope").cloned());
        let mut remove = p
            .remove_vanished
            .clone()
            .or_else(|| defaults.get("remove-vanished").cloned());
        let full = p.full.or_else(|| flag(defaults.get("full")));
        let purge = p.purge.or_else(|| flag(defaults.get("purge")));
        if remove.is_none() && (full == Some(true) || purge == Some(true)) {
            let mut props = Vec::new();
            if full == Some(true) {
                props.extend(["entry", "properties"]);
            }
            if purge == Some(true) {
                props.push("acl");
            }
            remove = Some(props.join(";"));
        }
        let enable_new = p
            .enable_new
            .or_else(|| flag(defaults.get("enable-new")))
            .unwrap_or(true);
        let Some(scope) = scope else {
            return Err(Error::invalid(
                "scope",
                "Not passed as parameter and not defined in realm default sync options.",
            ));
        };
        Ok(SyncOptions {
            scope,
            remove_vanished: remove.unwrap_or_else(|| "none".into()),
            enable_new,
        })
    }

    /// The worker of a realm sync: reads the realm's directory and
    /// updates `user.cfg` as `$update_users` and `$update_groups` do
    /// (unless `dry_run`). Answers the task log.
    ///
    /// # Errors
    /// The log so far and the task's error (a realm gone meanwhile, a
    /// bind without password).
    pub fn run_realm_sync(
        &mut self,
        realm: &str,
        opts: &SyncOptions,
        dry_run: bool,
    ) -> std::result::Result<Vec<String>, (Vec<String>, String)> {
        let mut log = Vec::new();
        let prefix = if dry_run { "(dry test run) " } else { "" };
        log.push(format!("{prefix}starting sync for realm {realm}"));
        let Some(r) = self.realms.get(realm).cloned() else {
            return Err((log, format!("domain '{realm}' does not exist")));
        };
        if let Err(e) = r.connect(realm) {
            return Err((log, e.to_string()));
        }
        let what = if opts.scope == "both" {
            "users and groups".to_string()
        } else {
            opts.scope.clone()
        };
        let synced_users: BTreeMap<String, &DirectoryUser> = r
            .directory
            .users
            .iter()
            .map(|(n, u)| (format!("{n}@{realm}"), u))
            .collect();
        let synced_groups: BTreeMap<String, BTreeSet<String>> = r
            .directory
            .groups
            .iter()
            .map(|(g, members)| {
                let users = members
                    .iter()
                    .filter(|m| r.directory.users.contains_key(*m))
                    .map(|m| format!("{m}@{realm}"))
                    .collect();
                (format!("{g}-{realm}"), users)
            })
            .collect();
        let mut work = self.clone();
        log.push(format!("got data from server, updating {what}"));
        let remove: BTreeSet<&str> = opts.remove_vanished.split(';').collect();
        let vanished = format!(" (remove-vanished opts: {})", opts.remove_vanished);
        if opts.scope == "users" || opts.scope == "both" {
            log.push(format!("syncing users{vanished}"));
            if remove.contains("entry") {
                log.push("deleting outdated existing users first".into());
            }
            let suffix = format!("@{realm}");
            let old: Vec<String> = work
                .users
                .keys()
                .filter(|u| u.ends_with(&suffix) && !synced_users.contains_key(*u))
                .cloned()
                .collect();
            for userid in old {
                if remove.contains("entry") {
                    log.push(format!("remove user '{userid}'"));
                    work.users.remove(&userid);
                    for g in work.groups.values_mut() {
                        g.members.remove(&userid);
                    }
                }
                if remove.contains("acl") {
                    log.push(format!("purge users '{userid}' ACL entries"));
                    work.remove_acl_subject(UgKind::User, &userid);
                }
            }
            for (userid, du) in &synced_users {
                let old = work.users.get(userid).cloned();
                let mut user = match &old {
                    Some(o) if !remove.contains("properties") => {
                        log.push(format!("updating user '{userid}'"));
                        o.clone()
                    }
                    Some(o) => {
                        log.push(format!("overwriting user '{userid}'"));
                        let mut u = User::new(userid);
                        u.enable = o.enable;
                        u.tokens = o.tokens.clone();
                        u
                    }
                    None => {
                        log.push(format!("adding user '{userid}'"));
                        let mut u = User::new(userid);
                        u.enable = opts.enable_new;
                        u
                    }
                };
                for (field, v) in [
                    (&mut user.email, &du.email),
                    (&mut user.firstname, &du.firstname),
                    (&mut user.lastname, &du.lastname),
                    (&mut user.comment, &du.comment),
                ] {
                    if v.is_some() {
                        field.clone_from(v);
                    }
                }
                work.users.insert(userid.clone(), user);
            }
        }
        if opts.scope == "groups" || opts.scope == "both" {
            log.push(format!("syncing groups{vanished}"));
            if remove.contains("entry") {
                log.push("deleting outdated existing groups first".into());
            }
            let suffix = format!("-{realm}");
            let old: Vec<String> = work
                .groups
                .keys()
                .filter(|g| g.ends_with(&suffix) && !synced_groups.contains_key(*g))
                .cloned()
                .collect();
            for groupid in old {
                if remove.contains("entry") {
                    log.push(format!("remove group '{groupid}'"));
                    work.groups.remove(&groupid);
                }
                if remove.contains("acl") {
                    log.push(format!("purge groups '{groupid}' ACL entries"));
                    work.remove_acl_subject(UgKind::Group, &groupid);
                }
            }
            for (groupid, members) in &synced_groups {
                let members: BTreeSet<String> = members
                    .iter()
                    .filter(|m| work.users.contains_key(*m))
                    .cloned()
                    .collect();
                match work.groups.get_mut(groupid) {
                    Some(g) if !remove.contains("properties") => {
                        log.push(format!("updating group '{groupid}'"));
                        g.members = members;
                    }
                    Some(g) => {
                        log.push(format!("overwriting group '{groupid}'"));
                        *g = Group {
                            comment: None,
                            members,
                        };
                    }
                    None => {
                        log.push(format!("adding group '{groupid}'"));
                        work.groups.insert(
                            groupid.clone(),
                            Group {
                                comment: None,
                                members,
                            },
                        );
                    }
                }
            }
        }
        if dry_run {
            log.push(String::new());
            log.push("NOTE: Dry test run, changes were NOT written to the configuration.".into());
            return Ok(log);
        }
        *self = work;
        log.push(format!("successfully updated {what} configuration"));
        Ok(log)
    }
}
