//! `/access/tfa`, `/access/users/{userid}/tfa` and `unlock-tfa`
//! (pve-access-control `API2/TFA.pm`, `API2/User.pm`).

use super::*;
use crate::model::access::tfa::AddTfa;

/// `reauth_user_for_user_modification`: the user exists, only root@pam
/// changes root@pam, and anyone else confirms with their own password.
fn reauth(
    access: &Access,
    who: &AuthId,
    userid: &str,
    password: Option<&(String, bool)>,
    now: i64,
) -> Result<()> {
    access.user(userid)?;
    if userid == "root@pam" && !is_root(who) {
        return Err(perm_denied());
    }
    if !is_root(who) {
        let Some((pw, sealed)) = password else {
            return Err(Error::invalid(
                "password",
                "password is required to modify user",
            ));
        };
        let given = crate::model::access::shadow::Given::new(pw, *sealed);
        access.authenticate_given(who.userid(), given, now)?;
    }
    Ok(())
}

/// `GET /access/tfa`: every user's entries the caller may see (all of
/// them with User.Modify or Sys.Audit on `/access/groups`, else its own
/// and those of the members of groups it holds these on).
pub(super) fn list_tfa(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let now = ctx.now();
    let privs = ["User.Modify", "Sys.Audit"];
    ctx.with(|c| {
        let a = c.access();
        let all = a.tfa().list(now);
        if is_root(who) || a.has_any(who, "/access/groups", &privs) {
            return Ok(json!(all).into());
        }
        let me = who.userid();
        let reachable: Vec<&String> = a
            .groups()
            .keys()
            .filter(|g| a.has_any(who, &format!("/access/groups/{g}"), &privs))
            .collect();
        let out: Vec<Value> = all
            .into_iter()
            .filter(|e| {
                let u = e["userid"].as_str().unwrap_or_default();
                u == me || reachable.iter().any(|g| a.groups()[*g].members.contains(u))
            })
            .collect();
        Ok(json!(out).into())
    })
}

/// `GET /access/tfa/{userid}`.
pub(super) fn list_user_tfa(ctx: &Ctx<'_>) -> Result<Reply> {
    let userid = userid_param(ctx)?;
    Ok(json!(ctx.with(|c| c.access().tfa().list_user(&userid))).into())
}

/// `GET /access/tfa/{userid}/{id}`.
pub(super) fn get_tfa_entry(ctx: &Ctx<'_>) -> Result<Reply> {
    let userid = userid_param(ctx)?;
    let id = ctx.param("id")?;
    ctx.with(|c| c.access().tfa().entry(&userid, &id))
        .map(Reply::from)
}

/// `POST /access/tfa/{userid}`.
pub(super) fn add_tfa_entry(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let userid = userid_param(ctx)?;
    let password = password_param(ctx, "password");
    let req = AddTfa {
        kind: ctx.param("type")?,
        description: text_param(ctx, "description", 255)?,
        totp: ctx.params.str("totp"),
        value: ctx.params.str("value"),
        challenge: ctx.params.str("challenge"),
    };
    let now = ctx.now();
    let answer = ctx.with(|c| {
        let a = c.access_mut();
        reauth(a, who, &userid, password.as_ref(), now)?;
        if req.kind == "yubico" {
            let (realm, r) = a.realms().of_user(&userid)?;
            let Some(tfa) = r.tfa() else {
                return Err(Error::failed(format!(
                    "no yubico otp configuration available for realm {realm}"
                )));
            };
            if tfa.get("type").map(String::as_str) != Some("yubico") {
                return Err(Error::failed("realm is not setup for Yubico OTP"));
            }
            return Err(Error::NotImplemented(
                "Yubico OTP is not emulated: checking a key needs Yubico's servers".into(),
            ));
        }
        a.tfa_mut().add(&userid, req, &mut ctx.rq())
    })?;
    Ok(answer.into())
}

/// `PUT /access/tfa/{userid}/{id}`.
pub(super) fn update_tfa_entry(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let userid = userid_param(ctx)?;
    let id = ctx.param("id")?;
    let password = password_param(ctx, "password");
    let description = text_param(ctx, "description", 255)?;
    let enable = ctx.params.bool("enable")?;
    let now = ctx.now();
    ctx.with(|c| {
        let a = c.access_mut();
        reauth(a, who, &userid, password.as_ref(), now)?;
        a.tfa_mut().update(&userid, &id, description, enable)
    })?;
    Ok(Value::Null.into())
}

/// `DELETE /access/tfa/{userid}/{id}`.
pub(super) fn delete_tfa(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let userid = userid_param(ctx)?;
    let id = ctx.param("id")?;
    let password = password_param(ctx, "password");
    let now = ctx.now();
    ctx.with(|c| {
        let a = c.access_mut();
        reauth(a, who, &userid, password.as_ref(), now)?;
        a.tfa_mut().delete(&userid, &id).map(|_| ())
    })?;
    Ok(Value::Null.into())
}

/// `GET /access/users/{userid}/tfa`: the realm's second factor, and with
/// `multiple` the kinds of entries the user has.
pub(super) fn read_user_tfa_type(ctx: &Ctx<'_>) -> Result<Reply> {
    let userid = userid_param(ctx)?;
    let multiple = ctx.params.bool("multiple")?.unwrap_or(false);
    ctx.with(|c| {
        let a = c.access();
        let (_, realm) = a.realms().of_user(&userid)?;
        let mut out = Map::new();
        if let Some(t) = realm.tfa().and_then(|t| t.get("type").cloned()) {
            out.insert("realm".into(), json!(t));
        }
        if multiple {
            out.insert("user".into(), json!(a.tfa().user_types(&userid)));
        }
        Ok(Value::Object(out).into())
    })
}

/// `PUT /access/users/{userid}/unlock-tfa`: whether the user was locked.
pub(super) fn unlock_tfa(ctx: &Ctx<'_>) -> Result<Reply> {
    let userid = userid_param(ctx)?;
    let now = ctx.now();
    let was = ctx.with(|c| c.access_mut().tfa_mut().unlock(&userid, now));
    Ok(json!(u8::from(was)).into())
}
