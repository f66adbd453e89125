//! `/access`: login, realms, users, groups, roles, ACLs, permissions and
//! API tokens (pve-access-control `API2/AccessControl.pm`,
//! `API2/Domains.pm`, `API2/User.pm`, `API2/Group.pm`, `API2/Role.pm`,
//! `API2/ACL.pm`).
//!
//! Permission checks follow each method's schema `permissions`; like
//! PVE's `check_api2_permissions`, root@pam skips them.

use serde_json::{Map, Value, json};

use super::{Ctx, Reply, Route, delete, get, post, put};
use crate::model::access::{
    Access, AclUpdate, GroupsParam, User, auth_failure, valid_groupid, valid_realm, valid_tokenid,
    valid_userid,
};
use crate::model::acl;
use crate::model::{AuthId, Error, Result};

mod acls;
mod groups;
pub(crate) mod journal;
mod openid;
mod realms;
mod roles;
mod tfa;
mod ticket;
mod tokens;
mod users;
pub mod view;

use acls::{read_acl, update_acl};
use groups::{create_group, delete_group, list_groups, read_group, update_group};
use roles::{create_role, delete_role, list_roles, read_role, update_role};
use ticket::{change_password, create_ticket, get_ticket, permissions};
use tokens::{generate_token, read_token, remove_token, token_index, update_token_info};
use users::{check_realm_allocate, create_user, delete_user, list_users, read_user, update_user};

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    let mut routes = vec![
        get("/access/ticket", get_ticket),
        post("/access/ticket", create_ticket),
        get("/access/users", list_users),
        post("/access/users", create_user),
        get("/access/users/{userid}", read_user),
        put("/access/users/{userid}", update_user),
        delete("/access/users/{userid}", delete_user),
        get("/access/groups", list_groups),
        post("/access/groups", create_group),
        get("/access/groups/{groupid}", read_group),
        put("/access/groups/{groupid}", update_group),
        delete("/access/groups/{groupid}", delete_group),
        get("/access/roles", list_roles),
        post("/access/roles", create_role),
        get("/access/roles/{roleid}", read_role),
        put("/access/roles/{roleid}", update_role),
        delete("/access/roles/{roleid}", delete_role),
        get("/access/acl", read_acl),
        put("/access/acl", update_acl),
        get("/access/permissions", permissions),
        put("/access/password", change_password),
        get("/access/users/{userid}/token", token_index),
        get("/access/users/{userid}/token/{tokenid}", read_token),
        post("/access/users/{userid}/token/{tokenid}", generate_token),
        put("/access/users/{userid}/token/{tokenid}", update_token_info),
        delete("/access/users/{userid}/token/{tokenid}", remove_token),
        post("/access/openid/auth-url", openid::auth_url),
        post("/access/openid/login", openid::login),
    ];
    routes.extend(realm_routes());
    routes.extend(tfa_routes());
    routes
}

/// Realms, their sync and the realm sync jobs.
fn realm_routes() -> Vec<Route> {
    use realms::*;
    vec![
        get("/access/domains", list_domains),
        post("/access/domains", create_domain),
        get("/access/domains/{realm}", read_domain),
        put("/access/domains/{realm}", update_domain),
        delete("/access/domains/{realm}", delete_domain),
        post("/access/domains/{realm}/sync", sync_domain),
        get("/cluster/jobs/realm-sync", syncjob_index),
        get("/cluster/jobs/realm-sync/{id}", read_job),
        post("/cluster/jobs/realm-sync/{id}", create_job),
        put("/cluster/jobs/realm-sync/{id}", update_job),
        delete("/cluster/jobs/realm-sync/{id}", delete_job),
    ]
}

/// Second factors.
fn tfa_routes() -> Vec<Route> {
    use tfa::*;
    vec![
        get("/access/tfa", list_tfa),
        get("/access/tfa/{userid}", list_user_tfa),
        post("/access/tfa/{userid}", add_tfa_entry),
        get("/access/tfa/{userid}/{id}", get_tfa_entry),
        put("/access/tfa/{userid}/{id}", update_tfa_entry),
        delete("/access/tfa/{userid}/{id}", delete_tfa),
        get("/access/users/{userid}/tfa", read_user_tfa_type),
        put("/access/users/{userid}/unlock-tfa", unlock_tfa),
    ]
}

/// `check_api2_permissions` lets root@pam through before any test.
fn is_root(who: &AuthId) -> bool {
    matches!(who, AuthId::User(u) if u == "root@pam")
}

/// `raise_perm_exc()` without details.
fn perm_denied() -> Error {
    Error::Forbidden("Permission check failed".into())
}

/// PVE's `split_list`: items separated by `,`, `;` or white space.
fn split_list(s: &str) -> Vec<String> {
    s.split(|c: char| c == ',' || c == ';' || c.is_whitespace() || c == '\0')
        .filter(|x| !x.is_empty())
        .map(str::to_string)
        .collect()
}

/// A password parameter as the request gives it: its value and whether
/// it carries the journal's form of a password rather than the password
/// (a request replayed from the journal, see
/// [`crate::model::access::shadow::Given`]).
fn password_param(ctx: &Ctx<'_>, name: &str) -> Option<(String, bool)> {
    let value = ctx.params.str(name)?;
    let sealed = ctx.rq.borrow().is_sealed(name);
    Some((value, sealed))
}

/// The hash kept of a password set for `userid` (PVE's `encrypt_pw`),
/// salted with the server's key.
fn password_hash(ctx: &Ctx<'_>, userid: &str, (pw, sealed): &(String, bool)) -> String {
    use crate::model::access::shadow;
    let given = shadow::Given::new(pw, *sealed);
    match given {
        shadow::Given::Clear(pw) => shadow::hash(
            pw,
            &shadow::keyed_salt(&ctx.state.keys().secret(), userid, pw),
        ),
        shadow::Given::Journaled(_) => given.to_hash(""),
    }
}

/// A password's length, as the schema's `password` format bounds it: 8
/// to 64 characters.
fn check_password_length(pw: &str) -> Result<()> {
    let n = pw.chars().count();
    if n < 8 {
        return Err(Error::invalid(
            "password",
            "value must be at least 8 characters long",
        ));
    }
    if n > 64 {
        return Err(Error::invalid(
            "password",
            "value may only be 64 characters long",
        ));
    }
    Ok(())
}

/// The `userid` parameter, checked as the `pve-userid` format does.
fn userid_param(ctx: &Ctx<'_>) -> Result<String> {
    let userid = ctx.param("userid")?;
    if userid.len() > 64 {
        return Err(Error::invalid(
            "userid",
            "value may only be 64 characters long",
        ));
    }
    if !valid_userid(&userid) {
        return Err(Error::invalid(
            "userid",
            format!("invalid format - value '{userid}' does not look like a valid user name\n"),
        ));
    }
    Ok(userid)
}

/// A `pve-groupid-list` parameter.
fn group_list(ctx: &Ctx<'_>, name: &str) -> Result<Option<Vec<String>>> {
    let Some(text) = ctx.params.str(name) else {
        return Ok(None);
    };
    let list = split_list(&text);
    if let Some(bad) = list.iter().find(|g| !valid_groupid(g)) {
        return Err(Error::invalid(
            name,
            format!("invalid format - group name '{bad}' contains invalid characters\n"),
        ));
    }
    Ok(Some(list))
}

/// The `groupid` (or `roleid`) path parameter, checked as its format does.
fn name_param(ctx: &Ctx<'_>, name: &str, what: &str) -> Result<String> {
    let id = ctx.param(name)?;
    if !valid_groupid(&id) {
        return Err(Error::invalid(
            name,
            format!("invalid format - {what} name '{id}' contains invalid characters\n"),
        ));
    }
    Ok(id)
}

/// A string parameter with PVE's `maxLength`.
fn text_param(ctx: &Ctx<'_>, name: &str, max: usize) -> Result<Option<String>> {
    match ctx.params.str(name) {
        Some(v) if v.chars().count() > max => Err(Error::invalid(
            name,
            format!("value may only be {max} characters long"),
        )),
        other => Ok(other),
    }
}
