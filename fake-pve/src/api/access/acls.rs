//! `/access/acl`: reading and editing ACL entries
//! (pve-access-control `API2/ACL.pm`).

use super::*;

/// `GET /access/acl`: the entries on paths where the caller may modify
/// permissions (all of them with Sys.Audit on `/access`).
pub(super) fn read_acl(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    ctx.with(|c| {
        let a = &c.access();
        let audit = a.has_priv(who, "/access", "Sys.Audit");
        let items: Vec<Value> = a
            .acl_entries()
            .into_iter()
            .filter(|(path, ..)| audit || a.check_perm_modify(who, path).is_ok())
            .map(|(path, kind, ugid, roleid, prop)| {
                json!({
                    "path": path,
                    "type": kind.as_str(),
                    "ugid": ugid,
                    "roleid": roleid,
                    "propagate": u8::from(prop),
                })
            })
            .collect();
        Ok(json!(items).into())
    })
}

/// `PUT /access/acl`.
pub(super) fn update_acl(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let p = &ctx.params;
    let raw_path = p.req_str("path")?;
    let normalized = acl::normalize_path(&raw_path);
    // `perm-modify` on the path; an unnormalizable path passes here and
    // fails below, as in PVE.
    if let Some(path) = &normalized
        && !is_root(who)
    {
        ctx.with(|c| c.access().check_perm_modify(who, path))?;
    }
    let roles_text = p.req_str("roles")?;
    let roles = split_list(&roles_text);
    if let Some(bad) = roles.iter().find(|r| !valid_groupid(r)) {
        return Err(Error::invalid(
            "roles",
            format!("invalid format - role name '{bad}' contains invalid characters\n"),
        ));
    }
    let users = p.str("users").map(|s| split_list(&s)).unwrap_or_default();
    if let Some(bad) = users.iter().find(|u| !valid_userid(u)) {
        return Err(Error::invalid(
            "users",
            format!("invalid format - value '{bad}' does not look like a valid user name\n"),
        ));
    }
    let groups = group_list(ctx, "groups")?.unwrap_or_default();
    let tokens = p.str("tokens").map(|s| split_list(&s)).unwrap_or_default();
    if let Some(bad) = tokens
        .iter()
        .find(|t| !matches!(AuthId::parse(t), Some(AuthId::Token { .. })))
    {
        return Err(Error::invalid(
            "tokens",
            format!("invalid format - value '{bad}' does not look like a valid token ID\n"),
        ));
    }
    let propagate = p.bool("propagate")?.unwrap_or(true);
    let delete = p.bool("delete")?.unwrap_or(false);
    let given = |n: &str| p.str(n).is_some_and(|v| !v.is_empty() && v != "0");
    if !(given("users") || given("groups") || given("tokens")) {
        let msg = "either 'users', 'groups' or 'tokens' is required.";
        return Err(Error::Invalid(
            ["users", "groups", "tokens"]
                .iter()
                .map(|k| ((*k).to_string(), msg.to_string()))
                .collect(),
        ));
    }
    let Some(path) = normalized.filter(|n| delete || acl::check_path(n)) else {
        return Err(Error::invalid(
            "path",
            format!("invalid ACL path '{raw_path}'"),
        ));
    };
    ctx.with(|c| {
        let a = c.access_mut();
        let failed = |e: Error| match e {
            Error::Invalid(errs) => {
                let mut msg = "ACL update failed: 400 Parameter verification failed.\n".to_string();
                for (k, v) in errs {
                    msg.push_str(&format!("{k}: {v}\n"));
                }
                Error::Failed(msg)
            }
            other => Error::failed(format!("ACL update failed: {other}")),
        };
        let mine = a.privileges(who, &path);
        if !mine.contains_key("Permissions.Modify") {
            let verb = if delete { "remove" } else { "add" };
            for role in &roles {
                let Some(privs) = a.role_privs(role) else {
                    return Err(failed(Error::not_found(format!(
                        "role '{role}' does not exist"
                    ))));
                };
                for privilege in &privs {
                    match mine.get(privilege) {
                        None => {
                            return Err(failed(Error::invalid(
                                "role",
                                format!(
                                    "Cannot {verb} role '{role}' - requires 'Permissions.Modify' or superset of privileges."
                                ),
                            )));
                        }
                        Some(false) if propagate && !delete => {
                            return Err(failed(Error::invalid(
                                "role",
                                format!(
                                    "Cannot {verb} role '{role}' with propagation - requires 'Permissions.Modify' or propagated superset of privileges."
                                ),
                            )));
                        }
                        Some(_) => {}
                    }
                }
                if role == "NoAccess" {
                    return Err(failed(Error::invalid(
                        "role",
                        format!("Cannot {verb} role '{role}' - requires 'Permissions.Modify'"),
                    )));
                }
            }
        }
        let change = AclUpdate {
            roles: &roles,
            users: &users,
            groups: &groups,
            tokens: &tokens,
            propagate,
            delete,
        };
        a.update_acl(&path, &change).map_err(failed)?;
        Ok(Value::Null.into())
    })
}
