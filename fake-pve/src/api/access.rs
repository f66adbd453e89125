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
    Access, AclUpdate, GroupsParam, REALMS, User, auth_failure, valid_groupid, valid_realm,
    valid_tokenid, valid_userid,
};
use crate::model::acl;
use crate::model::{AuthId, Error, Result};

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/access/domains", list_domains),
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
    ]
}

/// `GET /access/domains`.
fn list_domains(_: &Ctx<'_>) -> Result<Reply> {
    let items: Vec<Value> = REALMS
        .iter()
        .map(|(realm, kind, comment)| json!({ "realm": realm, "type": kind, "comment": comment }))
        .collect();
    Ok(json!(items).into())
}

/// `GET /access/ticket`: a no-op PVE keeps for its login page.
fn get_ticket(_: &Ctx<'_>) -> Result<Reply> {
    Ok(Value::Null.into())
}

/// `POST /access/ticket`: log in, or renew a ticket by passing it as the
/// password.
fn create_ticket(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = &ctx.params;
    let username = p.req_str("username")?;
    if username.chars().count() > 64 {
        return Err(Error::invalid(
            "username",
            "value may only be 64 characters long",
        ));
    }
    let password = p.req_str("password")?;
    let realm = p.str("realm");
    if let Some(r) = &realm
        && !valid_realm(r)
    {
        return Err(Error::invalid(
            "realm",
            "invalid format - value does not look like a valid realm\n",
        ));
    }
    let path_privs = match (p.str("path"), p.str("privs")) {
        (Some(path), Some(privs)) => Some((path, privs)),
        (None, None) => None,
        (Some(_), None) => {
            return Err(Error::invalid(
                "privs",
                "missing property required by 'path'",
            ));
        }
        (None, Some(_)) => {
            return Err(Error::invalid(
                "path",
                "missing property required by 'privs'",
            ));
        }
    };
    p.bool("new-format")?;
    let userid = match realm {
        Some(r) => format!("{username}@{r}"),
        None => username,
    };
    let now = ctx.now();
    let state = ctx.state;
    let renewal = password
        .starts_with("PVE:")
        .then(|| state.keys().verify_ticket(&password, now))
        .flatten();
    let who = AuthId::User(userid.clone());
    ctx.with(|c| -> Result<Reply> {
        match renewal {
            Some((owner, _)) if owner == userid || owner == "root@pam" => {
                c.access
                    .check_user_enabled(&userid, now)
                    .map_err(|_| auth_failure())?;
            }
            _ => c.access.check_password(&userid, &password, now)?,
        }
        if let Some((path, privs)) = path_privs {
            let privs: Vec<&str> = privs
                .split([',', ';', ' '])
                .filter(|s| !s.is_empty())
                .collect();
            c.access
                .check_perm(&who, &path, &privs)
                .map_err(|_| auth_failure())?;
            return Ok(json!({ "username": userid }).into());
        }
        let mut data = json!({
            "username": userid,
            "ticket": state.keys().ticket(&userid, now),
            "CSRFPreventionToken": state.keys().csrf(&userid, now),
            "cap": capabilities(&c.access, &who),
        });
        if let Some(name) = &c.name
            && c.access.has_priv(&who, "/", "Sys.Audit")
        {
            data["clustername"] = json!(name);
        }
        Ok(data.into())
    })
}

/// The `cap` object of a login answer: per GUI area, the privileges the
/// user holds there (PVE's `compute_api_permission`).
pub fn capabilities(access: &Access, who: &AuthId) -> Value {
    let cap: Map<String, Value> = access
        .api_capabilities(who)
        .into_iter()
        .map(|(area, privs)| {
            let set: Map<String, Value> = privs.into_iter().map(|p| (p, json!(1))).collect();
            (area.to_string(), Value::Object(set))
        })
        .collect();
    Value::Object(cap)
}

/// The `userid` and `tokenid` of a token call, checked as the schema
/// does, and the `["or", ["userid-param", "self"], ["userid-group",
/// ["User.Modify"]]]` permission.
fn token_target(ctx: &Ctx<'_>, with_token: bool) -> Result<(String, String)> {
    let userid = userid_param(ctx)?;
    let tokenid = if with_token {
        let t = ctx.param("tokenid")?;
        if !valid_tokenid(&t) {
            return Err(Error::invalid(
                "tokenid",
                "value does not match the regex pattern",
            ));
        }
        t
    } else {
        String::new()
    };
    let who = ctx.who()?;
    let is_self = matches!(who, AuthId::User(u) if *u == userid);
    let allowed = ctx.with(|c| {
        is_root(who)
            || (is_self && c.access.user_exists(&userid))
            || c.access
                .userid_group_allowed(who, &userid, &["User.Modify"])
    });
    if !allowed {
        return Err(perm_denied());
    }
    Ok((userid, tokenid))
}

/// `GET /access/users/{userid}/token`.
fn token_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let (userid, _) = token_target(ctx, false)?;
    ctx.with(|c| {
        let user = c.access.user(&userid)?;
        let items: Vec<Value> = user
            .tokens
            .values()
            .map(|t| {
                let mut v = t.info();
                v["tokenid"] = json!(t.tokenid);
                v
            })
            .collect();
        Ok(json!(items).into())
    })
}

/// `GET /access/users/{userid}/token/{tokenid}`.
fn read_token(ctx: &Ctx<'_>) -> Result<Reply> {
    let (userid, tokenid) = token_target(ctx, true)?;
    ctx.with(|c| Ok(c.access.token(&userid, &tokenid)?.info().into()))
}

/// `POST /access/users/{userid}/token/{tokenid}`: answers the secret,
/// once.
fn generate_token(ctx: &Ctx<'_>) -> Result<Reply> {
    let (userid, tokenid) = token_target(ctx, true)?;
    let p = &ctx.params;
    let privsep = p.bool("privsep")?;
    let expire = p.int("expire", Some(0), None)?;
    let comment = p.str("comment").filter(|c| !c.is_empty());
    ctx.with(|c| {
        let user_expire = c.access.user(&userid)?.expire;
        let token = c.access.create_token(
            &userid,
            &tokenid,
            privsep.unwrap_or(true),
            expire.unwrap_or(user_expire),
            comment.clone(),
            &mut ctx.rq(),
        )?;
        // PVE echoes the parameters as it received them.
        let mut info = json!({ "privsep": p.get("privsep").cloned().unwrap_or(json!(1)) });
        if let Some(e) = p.get("expire") {
            info["expire"] = e.clone();
        }
        if let Some(c) = comment {
            info["comment"] = json!(c);
        }
        Ok(json!({
            "full-tokenid": format!("{userid}!{tokenid}"),
            "info": info,
            "value": token.secret,
        })
        .into())
    })
}

/// `PUT /access/users/{userid}/token/{tokenid}`.
fn update_token_info(ctx: &Ctx<'_>) -> Result<Reply> {
    let (userid, tokenid) = token_target(ctx, true)?;
    let p = &ctx.params;
    let version = ctx.with(|c| c.version);
    let privsep = p.bool("privsep")?;
    let expire = p.int("expire", Some(0), None)?;
    let mut comment = p.str("comment");
    let mut drop_comment = false;
    if let Some(list) = p.str("delete") {
        if !version.is_v9() {
            return Err(Error::invalid(
                "delete",
                "property is not defined in schema and the schema does not allow additional properties",
            ));
        }
        for key in list.split([',', ';', ' ']).filter(|s| !s.is_empty()) {
            if key != "comment" {
                return Err(Error::invalid("delete", format!("unknown option '{key}'")));
            }
            drop_comment = true;
        }
    }
    if comment.as_deref() == Some("") {
        comment = None;
        drop_comment |= version.is_v9();
    }
    ctx.with(|c| {
        c.access.token(&userid, &tokenid)?;
        let mut token = c
            .access
            .update_token(&userid, &tokenid, privsep, expire, comment)?;
        if drop_comment {
            token = c.access.clear_token_comment(&userid, &tokenid)?;
        }
        Ok(token.info().into())
    })
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

/// The user fields every user call reads.
struct UserFields {
    enable: Option<bool>,
    expire: Option<i64>,
    firstname: Option<String>,
    lastname: Option<String>,
    email: Option<String>,
    comment: Option<String>,
    keys: Option<String>,
    groups: Option<Vec<String>>,
}

fn user_fields(ctx: &Ctx<'_>) -> Result<UserFields> {
    let p = &ctx.params;
    let keys = p.str("keys");
    if let Some(k) = &keys
        && (k.len() > 4096
            || !k
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'!' || c == b'='))
    {
        return Err(Error::invalid(
            "keys",
            "value does not match the regex pattern",
        ));
    }
    let email = text_param(ctx, "email", 254)?;
    if let Some(e) = &email
        && !e.is_empty()
        && !valid_email(e)
    {
        return Err(Error::invalid(
            "email",
            format!("invalid format - value '{e}' does not look like a valid email address\n"),
        ));
    }
    Ok(UserFields {
        enable: p.bool("enable")?,
        expire: p.int("expire", Some(0), None)?,
        firstname: text_param(ctx, "firstname", 1024)?,
        lastname: text_param(ctx, "lastname", 1024)?,
        email,
        comment: text_param(ctx, "comment", 2048)?,
        keys,
        groups: group_list(ctx, "groups")?,
    })
}

/// A loose `email-opt` check: something before and after one `@`.
fn valid_email(e: &str) -> bool {
    e.split_once('@').is_some_and(|(a, b)| {
        !a.is_empty() && !b.is_empty() && !b.contains('@') && !e.contains(char::is_whitespace)
    })
}

/// Sets a text field as PVE's `user.cfg` keeps it: an empty value is
/// not written.
fn set_text(field: &mut Option<String>, value: Option<String>) {
    if let Some(v) = value {
        *field = (!v.is_empty()).then_some(v);
    }
}

/// `$extract_user_data`: what a user read answers. `email` reads as an
/// empty string when the user has none but a comment or keys, because
/// PVE's `user.cfg` parser then sees an empty field.
fn user_data(access: &Access, user: &User, full: bool) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("enable".into(), json!(u8::from(user.enable)));
    m.insert("expire".into(), json!(user.expire));
    for (k, v) in [
        ("firstname", &user.firstname),
        ("lastname", &user.lastname),
        ("email", &user.email),
        ("comment", &user.comment),
    ] {
        if let Some(v) = v {
            m.insert(k.into(), json!(v));
        }
    }
    if user.email.is_none() && user.comment.is_some() {
        m.insert("email".into(), json!(""));
    }
    if full {
        m.insert("groups".into(), json!(access.user_groups(&user.userid)));
        let tokens: Map<String, Value> = user
            .tokens
            .iter()
            .map(|(id, t)| (id.clone(), t.info()))
            .collect();
        m.insert(
            "tokens".into(),
            if tokens.is_empty() {
                Value::Null
            } else {
                Value::Object(tokens)
            },
        );
    }
    m
}

/// `userid-param` with `Realm.AllocateUser`.
fn check_realm_allocate(access: &Access, who: &AuthId, userid: &str) -> Result<()> {
    let realm = userid.rsplit_once('@').map_or("", |(_, r)| r);
    access.check_perm(
        who,
        &format!("/access/realm/{realm}"),
        &["Realm.AllocateUser"],
    )
}

/// `userid-group` as an `and` member: a missing user is PVE's `no such
/// user`, a user out of reach a bare `Permission check failed`.
fn check_userid_group(
    access: &Access,
    who: &AuthId,
    userid: &str,
    privs: &[&str],
    mode: GroupsParam,
    groups: &[String],
) -> Result<()> {
    if mode != GroupsParam::Create && !access.user_exists(userid) {
        return Err(Error::not_found(format!("no such user ('{userid}')")));
    }
    if access.check_userid_group(who, userid, privs, mode, groups)? {
        Ok(())
    } else {
        Err(perm_denied())
    }
}

/// `GET /access/users`.
fn list_users(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let enabled = ctx.params.bool("enabled")?;
    let full = ctx.params.bool("full")?.unwrap_or(false);
    let privs = ["User.Modify", "Sys.Audit"];
    ctx.with(|c| {
        let a = &c.access;
        let all = a.has_any(who, "/access/groups", &privs);
        let reachable: Vec<&String> = a
            .groups
            .keys()
            .filter(|g| a.has_any(who, &format!("/access/groups/{g}"), &privs))
            .collect();
        let mut out = Vec::new();
        for (id, user) in &a.users {
            let me = matches!(who, AuthId::User(u) if u == id);
            if !(all || me || reachable.iter().any(|g| a.groups[*g].members.contains(id))) {
                continue;
            }
            if enabled.is_some_and(|e| e != user.enable) {
                continue;
            }
            let mut m = user_data(a, user, full);
            if full {
                m.insert("groups".into(), json!(a.user_groups(id).join(",")));
                let tokens: Vec<Value> = user
                    .tokens
                    .values()
                    .map(|t| {
                        let mut v = t.info();
                        v["tokenid"] = json!(t.tokenid);
                        v
                    })
                    .collect();
                m.insert(
                    "tokens".into(),
                    if tokens.is_empty() {
                        Value::Null
                    } else {
                        json!(tokens)
                    },
                );
            }
            let realm = id.rsplit_once('@').map_or("", |(_, r)| r);
            if let Some((_, kind, _)) = REALMS.iter().find(|(r, _, _)| *r == realm) {
                m.insert("realm-type".into(), json!(kind));
            }
            m.insert("userid".into(), json!(id));
            out.push(Value::Object(m));
        }
        Ok(json!(out).into())
    })
}

/// `POST /access/users`.
fn create_user(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let userid = userid_param(ctx)?;
    let f = user_fields(ctx)?;
    let password = ctx.params.str("password");
    if let Some(pw) = &password {
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
    }
    let realm = userid.rsplit_once('@').map_or("", |(_, r)| r).to_string();
    ctx.with(|c| {
        let a = &mut c.access;
        if !is_root(who) {
            check_realm_allocate(a, who, &userid)?;
            let groups = f.groups.clone().unwrap_or_default();
            check_userid_group(
                a,
                who,
                &userid,
                &["User.Modify"],
                GroupsParam::Create,
                &groups,
            )?;
        }
        let failed = |e: Error| e.map_message(|m| format!("create user failed: {m}"));
        if a.user_exists(&userid) {
            return Err(failed(Error::exists(format!(
                "user '{userid}' already exists"
            ))));
        }
        if password.is_some() && !REALMS.iter().any(|(r, _, _)| *r == realm) {
            return Err(failed(Error::not_found(format!(
                "auth domain '{realm}' does not exist"
            ))));
        }
        let groups = f.groups.clone().unwrap_or_default();
        if let Some(g) = groups.iter().find(|g| !a.groups.contains_key(*g)) {
            return Err(failed(Error::not_found(format!("no such group '{g}'"))));
        }
        let mut user = User::new(&userid);
        user.enable = f.enable.unwrap_or(true);
        user.expire = f.expire.unwrap_or(0);
        user.password = password;
        set_text(&mut user.firstname, f.firstname);
        set_text(&mut user.lastname, f.lastname);
        set_text(&mut user.email, f.email);
        set_text(&mut user.comment, f.comment);
        a.users.insert(userid.clone(), user);
        a.set_user_groups(&userid, &groups, false)?;
        Ok(Value::Null.into())
    })
}

/// `GET /access/users/{userid}`.
fn read_user(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let userid = userid_param(ctx)?;
    ctx.with(|c| {
        let a = &c.access;
        if !is_root(who) {
            check_userid_group(
                a,
                who,
                &userid,
                &["User.Modify", "Sys.Audit"],
                GroupsParam::None,
                &[],
            )?;
        }
        let user = a.user(&userid)?;
        Ok(Value::Object(user_data(a, user, true)).into())
    })
}

/// `PUT /access/users/{userid}`.
fn update_user(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let userid = userid_param(ctx)?;
    let f = user_fields(ctx)?;
    let append = ctx.params.bool("append")?;
    if append.is_some() && f.groups.is_none() {
        return Err(Error::invalid(
            "groups",
            "missing property required by 'append'",
        ));
    }
    ctx.with(|c| {
        let a = &mut c.access;
        if !is_root(who) {
            let groups = f.groups.clone().unwrap_or_default();
            check_userid_group(
                a,
                who,
                &userid,
                &["User.Modify"],
                GroupsParam::Update,
                &groups,
            )?;
        }
        let failed = |e: Error| e.map_message(|m| format!("update user failed: {m}"));
        a.user(&userid).map_err(failed)?;
        if let Some(groups) = &f.groups {
            a.set_user_groups(&userid, groups, !append.unwrap_or(false))
                .map_err(failed)?;
        }
        let user = a.users.get_mut(&userid).ok_or_else(perm_denied)?;
        if let Some(e) = f.enable {
            user.enable = e;
        }
        if let Some(e) = f.expire {
            user.expire = e;
        }
        set_text(&mut user.firstname, f.firstname);
        set_text(&mut user.lastname, f.lastname);
        set_text(&mut user.email, f.email);
        set_text(&mut user.comment, f.comment);
        let _ = f.keys;
        Ok(Value::Null.into())
    })
}

/// `DELETE /access/users/{userid}`. PVE lets root@pam delete a user that
/// does not exist; deleting root@pam brings it back bare, as PVE's
/// `userconfig_force_defaults` does.
fn delete_user(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let userid = userid_param(ctx)?;
    ctx.with(|c| {
        let a = &mut c.access;
        if !is_root(who) {
            check_realm_allocate(a, who, &userid)?;
            check_userid_group(a, who, &userid, &["User.Modify"], GroupsParam::None, &[])?;
        }
        let root_pw = a.users.get("root@pam").and_then(|u| u.password.clone());
        a.delete_user(&userid);
        if userid == "root@pam" {
            let mut root = User::new("root@pam");
            root.password = root_pw;
            a.users.insert(root.userid.clone(), root);
        }
        Ok(Value::Null.into())
    })
}

/// `GET /access/groups`: the groups where the caller holds User.Modify,
/// Sys.Audit or Group.Allocate.
fn list_groups(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    ctx.with(|c| {
        let a = &c.access;
        let items: Vec<Value> = a
            .groups
            .iter()
            .filter(|(g, _)| {
                a.has_any(
                    who,
                    &format!("/access/groups/{g}"),
                    &["User.Modify", "Sys.Audit", "Group.Allocate"],
                )
            })
            .map(|(g, d)| {
                let mut v = json!({
                    "groupid": g,
                    "users": d.members.iter().cloned().collect::<Vec<_>>().join(","),
                });
                if let Some(cm) = &d.comment {
                    v["comment"] = json!(cm);
                }
                v
            })
            .collect();
        Ok(json!(items).into())
    })
}

/// `POST /access/groups`.
fn create_group(ctx: &Ctx<'_>) -> Result<Reply> {
    let groupid = name_param(ctx, "groupid", "group")?;
    let comment = ctx.params.str("comment").filter(|c| !c.is_empty());
    ctx.with(|c| c.access.create_group(&groupid, comment))?;
    Ok(Value::Null.into())
}

/// `GET /access/groups/{groupid}`.
fn read_group(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let groupid = name_param(ctx, "groupid", "group")?;
    ctx.with(|c| {
        let a = &c.access;
        if !is_root(who) {
            a.check_any(who, "/access/groups", &["Sys.Audit", "Group.Allocate"])?;
        }
        let g = a
            .groups
            .get(&groupid)
            .ok_or_else(|| Error::not_found(format!("group '{groupid}' does not exist")))?;
        let mut v = json!({ "members": g.members });
        if let Some(cm) = &g.comment {
            v["comment"] = json!(cm);
        }
        Ok(v.into())
    })
}

/// `PUT /access/groups/{groupid}`.
fn update_group(ctx: &Ctx<'_>) -> Result<Reply> {
    let groupid = name_param(ctx, "groupid", "group")?;
    let comment = ctx.params.str("comment");
    ctx.with(|c| {
        let g = c.access.groups.get_mut(&groupid).ok_or_else(|| {
            Error::not_found(format!(
                "update group failed: group '{groupid}' does not exist"
            ))
        })?;
        if let Some(cm) = comment {
            g.comment = (!cm.is_empty()).then_some(cm);
        }
        Ok(Value::Null.into())
    })
}

/// `DELETE /access/groups/{groupid}`.
fn delete_group(ctx: &Ctx<'_>) -> Result<Reply> {
    let groupid = name_param(ctx, "groupid", "group")?;
    ctx.with(|c| c.access.delete_group(&groupid))?;
    Ok(Value::Null.into())
}

/// `GET /access/roles`: every role; `special` marks the built-in ones.
fn list_roles(ctx: &Ctx<'_>) -> Result<Reply> {
    ctx.with(|c| {
        let items: Vec<Value> = c
            .access
            .all_roles()
            .into_iter()
            .map(|(id, privs)| {
                json!({
                    "roleid": id,
                    "privs": privs.into_iter().collect::<Vec<_>>().join(","),
                    "special": u8::from(acl::role_is_special(&id)),
                })
            })
            .collect();
        Ok(json!(items).into())
    })
}

/// The `privs` parameter (`pve-priv-list`).
fn privs_param(ctx: &Ctx<'_>) -> Result<Option<Vec<String>>> {
    let Some(text) = ctx.params.str("privs") else {
        return Ok(None);
    };
    let version = ctx.with(|c| c.access.version);
    let list = split_list(&text);
    if let Some(bad) = list.iter().find(|p| !acl::is_valid_priv(version, p)) {
        return Err(Error::invalid(
            "privs",
            format!("invalid format - invalid privilege '{bad}'\n"),
        ));
    }
    Ok(Some(list))
}

/// `POST /access/roles`.
fn create_role(ctx: &Ctx<'_>) -> Result<Reply> {
    let roleid = name_param(ctx, "roleid", "role")?;
    let privs = privs_param(ctx)?.unwrap_or_default();
    if roleid.to_ascii_lowercase().starts_with("pve") {
        return Err(Error::invalid(
            "roleid",
            "cannot use role ID starting with the (case-insensitive) 'PVE' namespace",
        ));
    }
    ctx.with(|c| c.access.create_role(&roleid, &privs))?;
    Ok(Value::Null.into())
}

/// `GET /access/roles/{roleid}`: `{ "<priv>": 1, ... }`.
fn read_role(ctx: &Ctx<'_>) -> Result<Reply> {
    let roleid = name_param(ctx, "roleid", "role")?;
    ctx.with(|c| {
        let privs = c
            .access
            .role_privs(&roleid)
            .ok_or_else(|| Error::not_found(format!("role '{roleid}' does not exist")))?;
        let m: Map<String, Value> = privs.into_iter().map(|p| (p, json!(1))).collect();
        Ok(Value::Object(m).into())
    })
}

/// `PUT /access/roles/{roleid}`.
fn update_role(ctx: &Ctx<'_>) -> Result<Reply> {
    let roleid = name_param(ctx, "roleid", "role")?;
    let privs = privs_param(ctx)?;
    let append = ctx.params.bool("append")?;
    if append.is_some() && privs.is_none() {
        return Err(Error::invalid(
            "privs",
            "missing property required by 'append'",
        ));
    }
    ctx.with(|c| {
        c.access
            .update_role(&roleid, &privs.unwrap_or_default(), append.unwrap_or(false))
    })?;
    Ok(Value::Null.into())
}

/// `DELETE /access/roles/{roleid}`.
fn delete_role(ctx: &Ctx<'_>) -> Result<Reply> {
    let roleid = name_param(ctx, "roleid", "role")?;
    ctx.with(|c| c.access.delete_role(&roleid))?;
    Ok(Value::Null.into())
}

/// `GET /access/acl`: the entries on paths where the caller may modify
/// permissions (all of them with Sys.Audit on `/access`).
fn read_acl(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    ctx.with(|c| {
        let a = &c.access;
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
fn update_acl(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let p = &ctx.params;
    let raw_path = p.req_str("path")?;
    let normalized = acl::normalize_path(&raw_path);
    // `perm-modify` on the path; an unnormalizable path passes here and
    // fails below, as in PVE.
    if let Some(path) = &normalized
        && !is_root(who)
    {
        ctx.with(|c| c.access.check_perm_modify(who, path))?;
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
        let a = &mut c.access;
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

/// `GET /access/permissions`: the caller's (or, with Sys.Audit on
/// `/access`, anyone's) effective privileges.
fn permissions(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let me = who.to_string();
    let target = match ctx.params.str("userid") {
        Some(u) => u,
        None => me.clone(),
    };
    let Some(target_id) = AuthId::parse(&target).filter(|t| match t {
        AuthId::Token { tokenid, .. } => tokenid.len() >= 2,
        AuthId::User(_) => true,
    }) else {
        return Err(Error::invalid(
            "userid",
            "value does not match the regex pattern",
        ));
    };
    let path = ctx.params.str("path");
    ctx.with(|c| {
        let a = &c.access;
        let owned = matches!(&target_id, AuthId::Token { userid, .. } if *userid == me);
        if target != me && !owned && !is_root(who) {
            a.check_perm(who, "/access", &["Sys.Audit"])?;
        }
        let as_json = |privs: std::collections::BTreeMap<String, bool>| -> Value {
            Value::Object(
                privs
                    .into_iter()
                    .map(|(p, prop)| (p, json!(u8::from(prop))))
                    .collect(),
            )
        };
        let mut out = Map::new();
        match path.filter(|p| !p.is_empty()) {
            Some(path) => {
                out.insert(path.clone(), as_json(a.privileges(&target_id, &path)));
            }
            None => {
                for (p, privs) in a.effective_permissions(&target_id) {
                    out.insert(p, as_json(privs));
                }
            }
        }
        Ok(Value::Object(out).into())
    })
}

/// `PUT /access/password`.
fn change_password(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let userid = userid_param(ctx)?;
    let password = ctx.param("password")?;
    let n = password.chars().count();
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
    let confirm = ctx.params.str("confirmation-password");
    let me = who.userid().to_string();
    ctx.with(|c| {
        let a = &mut c.access;
        let is_self = me == userid;
        if !(is_root(who) || is_self && a.user_exists(&userid)) {
            check_realm_allocate(a, who, &userid).map_err(|_| perm_denied())?;
            if !a.userid_group_allowed(who, &userid, &["User.Modify"]) {
                return Err(perm_denied());
            }
        }
        a.user(&userid)?;
        if userid == "root@pam" && !is_root(who) {
            return Err(perm_denied());
        }
        if !is_root(who) {
            let Some(pw) = &confirm else {
                return Err(Error::invalid(
                    "confirmation-password",
                    "password is required to modify user",
                ));
            };
            let realm = me.rsplit_once('@').map_or("", |(_, r)| r);
            let ok = a.user(&me)?.password.as_deref() == Some(pw.as_str());
            if !ok {
                return Err(Error::failed(if realm == "pam" {
                    "Authentication failure"
                } else {
                    "invalid credentials"
                }));
            }
            if is_self {
                a.check_user_enabled(&userid, ctx.now())?;
            } else if userid.ends_with("@pam") {
                return Err(perm_denied());
            }
        }
        if let Some(u) = a.users.get_mut(&userid) {
            u.password = Some(password);
        }
        Ok(Value::Null.into())
    })
}

/// `DELETE /access/users/{userid}/token/{tokenid}`.
fn remove_token(ctx: &Ctx<'_>) -> Result<Reply> {
    let (userid, tokenid) = token_target(ctx, true)?;
    ctx.with(|c| c.access.delete_token(&userid, &tokenid))?;
    Ok(Value::Null.into())
}
