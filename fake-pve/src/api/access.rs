//! `/access`: login, realms and API tokens (pve-access-control
//! `API2/AccessControl.pm`, `API2/Domains.pm`, `API2/User.pm`).

use serde_json::{Map, Value, json};

use super::{Ctx, Reply, Route, get, post, put};
use crate::model::access::{REALMS, auth_failure, valid_realm, valid_tokenid, valid_userid};
use crate::model::{AuthId, Error, PveVersion, Result};

/// The routes of this area.
pub fn routes() -> Vec<Route> {
    vec![
        get("/access/domains", list_domains, &[]),
        get("/access/ticket", get_ticket, &[]),
        post(
            "/access/ticket",
            create_ticket,
            &[
                "username",
                "password",
                "realm",
                "otp",
                "new-format",
                "path",
                "privs",
                "tfa-challenge",
            ],
        )
        .no_token(),
        get("/access/users/{userid}/token", token_index, &[]),
        get("/access/users/{userid}/token/{tokenid}", read_token, &[]),
        post(
            "/access/users/{userid}/token/{tokenid}",
            generate_token,
            &["comment", "expire", "privsep"],
        ),
        put(
            "/access/users/{userid}/token/{tokenid}",
            update_token_info,
            &["comment", "expire", "privsep", "delete"],
        ),
        super::delete("/access/users/{userid}/token/{tokenid}", remove_token, &[]),
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
            "cap": capabilities(c.version, c.access.is_superuser(&who)),
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
/// user holds (all of them for root@pam, none otherwise until ACLs exist).
pub fn capabilities(version: PveVersion, all: bool) -> Value {
    let vm_privs: &[&str] = if version.is_v9() {
        &[
            "VM.Allocate",
            "VM.Audit",
            "VM.Backup",
            "VM.Clone",
            "VM.Config.CDROM",
            "VM.Config.CPU",
            "VM.Config.Cloudinit",
            "VM.Config.Disk",
            "VM.Config.HWType",
            "VM.Config.Memory",
            "VM.Config.Network",
            "VM.Config.Options",
            "VM.Console",
            "VM.GuestAgent.Audit",
            "VM.GuestAgent.FileRead",
            "VM.GuestAgent.FileSystemMgmt",
            "VM.GuestAgent.FileWrite",
            "VM.GuestAgent.Unrestricted",
            "VM.Migrate",
            "VM.PowerMgmt",
            "VM.Replicate",
            "VM.Snapshot",
            "VM.Snapshot.Rollback",
            "Permissions.Modify",
        ]
    } else {
        &[
            "VM.Allocate",
            "VM.Audit",
            "VM.Backup",
            "VM.Clone",
            "VM.Config.CDROM",
            "VM.Config.CPU",
            "VM.Config.Cloudinit",
            "VM.Config.Disk",
            "VM.Config.HWType",
            "VM.Config.Memory",
            "VM.Config.Network",
            "VM.Config.Options",
            "VM.Console",
            "VM.Migrate",
            "VM.Monitor",
            "VM.PowerMgmt",
            "VM.Snapshot",
            "VM.Snapshot.Rollback",
            "Permissions.Modify",
        ]
    };
    let areas: [(&str, &[&str]); 7] = [
        ("vms", vm_privs),
        (
            "access",
            &["User.Modify", "Group.Allocate", "Permissions.Modify"],
        ),
        (
            "storage",
            &[
                "Datastore.Allocate",
                "Datastore.AllocateSpace",
                "Datastore.AllocateTemplate",
                "Datastore.Audit",
                "Permissions.Modify",
            ],
        ),
        (
            "nodes",
            &[
                "Sys.Audit",
                "Sys.Console",
                "Sys.Syslog",
                "Sys.Modify",
                "Sys.PowerMgmt",
                "Sys.Incoming",
                "Sys.AccessNetwork",
                "Permissions.Modify",
            ],
        ),
        (
            "sdn",
            &["SDN.Allocate", "SDN.Audit", "SDN.Use", "Permissions.Modify"],
        ),
        (
            "dc",
            &[
                "Sys.Audit",
                "Sys.Modify",
                "SDN.Allocate",
                "SDN.Audit",
                "SDN.Use",
            ],
        ),
        (
            "mapping",
            &[
                "Mapping.Audit",
                "Mapping.Modify",
                "Mapping.Use",
                "Permissions.Modify",
            ],
        ),
    ];
    let mut cap = Map::new();
    for (area, privs) in areas {
        let set: Map<String, Value> = if all {
            privs.iter().map(|p| ((*p).to_string(), json!(1))).collect()
        } else {
            Map::new()
        };
        cap.insert(area.to_string(), Value::Object(set));
    }
    Value::Object(cap)
}

/// The `userid` and `tokenid` of a token call, checked as the schema
/// does, and the `["or", ["userid-param", "self"], ["userid-group",
/// ["User.Modify"]]]` permission.
fn token_target(ctx: &Ctx<'_>, with_token: bool) -> Result<(String, String)> {
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
        (is_self && c.access.users.contains_key(&userid))
            || c.access.has_priv(who, "/access/groups", "User.Modify")
    });
    if !allowed {
        return Err(Error::Forbidden("Permission check failed".into()));
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

/// `DELETE /access/users/{userid}/token/{tokenid}`.
fn remove_token(ctx: &Ctx<'_>) -> Result<Reply> {
    let (userid, tokenid) = token_target(ctx, true)?;
    ctx.with(|c| c.access.delete_token(&userid, &tokenid))?;
    Ok(Value::Null.into())
}
