//! `/access/users/{userid}/token`: API tokens
//! (pve-access-control `API2/User.pm` token methods).

use super::*;

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
            || (is_self && c.access().user_exists(&userid))
            || c.access()
                .userid_group_allowed(who, &userid, &["User.Modify"])
    });
    if !allowed {
        return Err(perm_denied());
    }
    Ok((userid, tokenid))
}

/// `GET /access/users/{userid}/token`.
pub(super) fn token_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let (userid, _) = token_target(ctx, false)?;
    ctx.with(|c| {
        let user = c.access().user(&userid)?;
        let items: Vec<Value> = user
            .tokens
            .values()
            .map(|t| {
                let mut v = super::view::token_info(t);
                v["tokenid"] = json!(t.tokenid);
                v
            })
            .collect();
        Ok(json!(items).into())
    })
}

/// `GET /access/users/{userid}/token/{tokenid}`.
pub(super) fn read_token(ctx: &Ctx<'_>) -> Result<Reply> {
    let (userid, tokenid) = token_target(ctx, true)?;
    ctx.with(|c| Ok(super::view::token_info(c.access().token(&userid, &tokenid)?).into()))
}

/// `POST /access/users/{userid}/token/{tokenid}`: answers the secret,
/// once.
pub(super) fn generate_token(ctx: &Ctx<'_>) -> Result<Reply> {
    let (userid, tokenid) = token_target(ctx, true)?;
    let p = &ctx.params;
    let privsep = p.bool("privsep")?;
    let expire = p.int("expire", Some(0), None)?;
    let comment = p.str("comment").filter(|c| !c.is_empty());
    ctx.with(|c| {
        let user_expire = c.access().user(&userid)?.expire;
        let (_, secret) = c.access_mut().create_token(
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
            "value": secret,
        })
        .into())
    })
}

/// `PUT /access/users/{userid}/token/{tokenid}`.
pub(super) fn update_token_info(ctx: &Ctx<'_>) -> Result<Reply> {
    let (userid, tokenid) = token_target(ctx, true)?;
    let p = &ctx.params;
    let version = ctx.with(|c| c.version());
    let privsep = p.bool("privsep")?;
    let expire = p.int("expire", Some(0), None)?;
    let mut comment = p.str("comment");
    // 9.2: a new secret, answered once.
    let regenerate = p.bool("regenerate")?.unwrap_or(false);
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
        c.access().token(&userid, &tokenid)?;
        let mut token = c
            .access_mut()
            .update_token(&userid, &tokenid, privsep, expire, comment)?;
        if drop_comment {
            token = c.access_mut().clear_token_comment(&userid, &tokenid)?;
        }
        let mut info = super::view::token_info(&token);
        if regenerate {
            let secret = c
                .access_mut()
                .regenerate_token(&userid, &tokenid, &mut ctx.rq())?;
            info["value"] = json!(secret);
            info["full-tokenid"] = json!(format!("{userid}!{tokenid}"));
        }
        Ok(info.into())
    })
}

/// `DELETE /access/users/{userid}/token/{tokenid}`.
pub(super) fn remove_token(ctx: &Ctx<'_>) -> Result<Reply> {
    let (userid, tokenid) = token_target(ctx, true)?;
    ctx.with(|c| c.access_mut().delete_token(&userid, &tokenid))?;
    Ok(Value::Null.into())
}
