//! `/access/users`: list, create, read, update, delete
//! (pve-access-control `API2/User.pm`).

use super::*;

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
    // `set_user_tfa_enabled` marks a user with second factors.
    if access.tfa().has_user(&user.userid) {
        m.insert("keys".into(), json!("x"));
    }
    if full {
        m.insert("groups".into(), json!(access.user_groups(&user.userid)));
        let tokens: Map<String, Value> = user
            .tokens
            .iter()
            .map(|(id, t)| (id.clone(), super::view::token_info(t)))
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
pub(super) fn check_realm_allocate(access: &Access, who: &AuthId, userid: &str) -> Result<()> {
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
pub(super) fn list_users(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let enabled = ctx.params.bool("enabled")?;
    let full = ctx.params.bool("full")?.unwrap_or(false);
    let privs = ["User.Modify", "Sys.Audit"];
    ctx.with(|c| {
        let a = &c.access();
        let all = a.has_any(who, "/access/groups", &privs);
        let reachable: Vec<&String> = a
            .groups()
            .keys()
            .filter(|g| a.has_any(who, &format!("/access/groups/{g}"), &privs))
            .collect();
        let mut out = Vec::new();
        for (id, user) in a.users() {
            let me = matches!(who, AuthId::User(u) if u == id);
            if !(all
                || me
                || reachable
                    .iter()
                    .any(|g| a.groups()[*g].members.contains(id)))
            {
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
                        let mut v = super::view::token_info(t);
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
            if let Ok((_, realm)) = a.realms().of_user(id) {
                m.insert("realm-type".into(), json!(realm.kind().as_str()));
            }
            if let Some(status) = a.tfa().lock_status(id, ctx.now()) {
                m.extend(status);
            }
            m.insert("userid".into(), json!(id));
            out.push(Value::Object(m));
        }
        Ok(json!(out).into())
    })
}

/// `POST /access/users`.
pub(super) fn create_user(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let userid = userid_param(ctx)?;
    let f = user_fields(ctx)?;
    let password = password_param(ctx, "password");
    if let Some((pw, false)) = &password {
        check_password_length(pw)?;
    }
    let realm = userid.rsplit_once('@').map_or("", |(_, r)| r).to_string();
    ctx.with(|c| {
        let a = c.access_mut();
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
        if password.is_some() {
            let Some(r) = a.realms().get(&realm) else {
                return Err(failed(Error::not_found(format!(
                    "auth domain '{realm}' does not exist"
                ))));
            };
            let kind = r.kind().as_str();
            if !matches!(kind, "pam" | "pve") {
                return Err(failed(Error::failed(format!(
                    "can't set password on auth type '{kind}'"
                ))));
            }
        }
        let groups = f.groups.clone().unwrap_or_default();
        if let Some(g) = groups.iter().find(|g| !a.groups().contains_key(*g)) {
            return Err(failed(Error::not_found(format!("no such group '{g}'"))));
        }
        let mut user = User::new(&userid);
        user.enable = f.enable.unwrap_or(true);
        user.expire = f.expire.unwrap_or(0);
        user.password = password.map(|p| password_hash(ctx, &userid, &p));
        set_text(&mut user.firstname, f.firstname);
        set_text(&mut user.lastname, f.lastname);
        set_text(&mut user.email, f.email);
        set_text(&mut user.comment, f.comment);
        a.put_user(user);
        a.set_user_groups(&userid, &groups, false)?;
        Ok(Value::Null.into())
    })
}

/// `GET /access/users/{userid}`.
pub(super) fn read_user(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let userid = userid_param(ctx)?;
    ctx.with(|c| {
        let a = &c.access();
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
pub(super) fn update_user(ctx: &Ctx<'_>) -> Result<Reply> {
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
        let a = c.access_mut();
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
        let user = a.user_entry(&userid).ok_or_else(perm_denied)?;
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
pub(super) fn delete_user(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let userid = userid_param(ctx)?;
    ctx.with(|c| {
        let a = c.access_mut();
        if !is_root(who) {
            check_realm_allocate(a, who, &userid)?;
            check_userid_group(a, who, &userid, &["User.Modify"], GroupsParam::None, &[])?;
        }
        let root_pw = a.users().get("root@pam").and_then(|u| u.password.clone());
        a.delete_user(&userid);
        if userid == "root@pam" {
            let mut root = User::new("root@pam");
            root.password = root_pw;
            a.put_user(root);
        }
        Ok(Value::Null.into())
    })
}
