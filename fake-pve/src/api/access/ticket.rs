//! Login and the caller's own view: tickets (with their second factor),
//! capabilities, the `/access/permissions` of a user or token and
//! password changes
//! (pve-access-control `API2/AccessControl.pm`, `API2/Domains.pm`).

use super::*;

/// `GET /access/ticket`: a no-op PVE keeps for its login page.
pub(super) fn get_ticket(_: &Ctx<'_>) -> Result<Reply> {
    Ok(Value::Null.into())
}

/// `POST /access/ticket`: log in, or renew a ticket by passing it as the
/// password.
pub(super) fn create_ticket(ctx: &Ctx<'_>) -> Result<Reply> {
    let p = &ctx.params;
    let username = p.req_str("username")?;
    if username.chars().count() > 64 {
        return Err(Error::invalid(
            "username",
            "value may only be 64 characters long",
        ));
    }
    let password = p.req_str("password")?;
    // In a replayed login, the journal's form of the password.
    let given =
        crate::model::access::shadow::Given::new(&password, ctx.rq.borrow().is_sealed("password"));
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
    let otp = p.str("otp");
    let tfa_challenge = p.str("tfa-challenge");
    let userid = match realm {
        Some(r) => format!("{username}@{r}"),
        None => username,
    };
    let now = ctx.now();
    let state = ctx.state;
    let renewal = (tfa_challenge.is_none()
        && matches!(given, crate::model::access::shadow::Given::Clear(_))
        && password.starts_with("PVE:"))
    .then(|| state.keys().verify_ticket(&password, now))
    .flatten();
    let who = AuthId::User(userid.clone());
    ctx.with(|c| -> Result<Reply> {
        if let Some((path, privs)) = path_privs {
            let privs: Vec<&str> = privs
                .split([',', ';', ' '])
                .filter(|s| !s.is_empty())
                .collect();
            // An old-style VNC ticket (no port) for this user and path
            // stands for the password, as termproxy on PVE 8.4 shows it.
            let vnc = crate::model::acl::normalize_path(&path).is_some_and(|norm| {
                crate::api::console::check_vnc_ticket(ctx, &password, &userid, &norm, None).is_ok()
            });
            match &renewal {
                Some((owner, _)) if *owner == userid => {
                    c.access()
                        .check_user_enabled(&userid, now)
                        .map_err(|_| auth_failure())?;
                }
                _ if vnc => {}
                _ => c.access().check_given(&userid, given, now)?,
            }
            c.access()
                .check_perm(&who, &path, &privs)
                .map_err(|_| auth_failure())?;
            return Ok(json!({ "username": userid }).into());
        }
        // Every refusal below is the same 401, as PVE hides the reason.
        let challenge = (|| -> Result<Option<String>> {
            let a = c.access_mut();
            a.check_user_enabled(&userid, now)?;
            if otp.is_some() && tfa_challenge.is_some() {
                return Err(Error::failed(
                    "TFA response should be in 'password', not 'otp' when 'tfa-challenge' is set",
                ));
            }
            if let Some(t) = &tfa_challenge {
                state
                    .keys()
                    .verify_tfa_ticket(t, &userid, now)
                    .ok_or_else(|| Error::failed("bad ticket"))?;
                a.answer_challenge(&userid, &password, now)?;
                return Ok(None);
            }
            match &renewal {
                Some((owner, _)) if owner == &userid || owner == "root@pam" => Ok(None),
                _ => {
                    a.authenticate_given(&userid, given, now)?;
                    a.second_factor(&userid, otp.as_deref(), now)
                }
            }
        })()
        .map_err(|_| auth_failure())?;
        let ticket = match &challenge {
            Some(ch) => state.keys().tfa_ticket(ch, &userid, now),
            None => state.keys().ticket(&userid, now),
        };
        let mut data = json!({
            "username": userid,
            "ticket": ticket,
            "CSRFPreventionToken": state.keys().csrf(&userid, now),
        });
        if challenge.is_some() {
            data["NeedTFA"] = json!(1);
        } else {
            data["cap"] = capabilities(c.access(), &who);
        }
        if let Some(name) = c.nodes().cluster_name()
            && c.access().has_priv(&who, "/", "Sys.Audit")
        {
            data["clustername"] = json!(name);
        }
        let local = c.nodes().local().to_string();
        c.clusterlog.login(&local, &userid, now);
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

/// `GET /access/permissions`: the caller's (or, with Sys.Audit on
/// `/access`, anyone's) effective privileges.
pub(super) fn permissions(ctx: &Ctx<'_>) -> Result<Reply> {
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
        let a = &c.access();
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
pub(super) fn change_password(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let userid = userid_param(ctx)?;
    let password = ctx.param("password")?;
    let password = (password, ctx.rq.borrow().is_sealed("password"));
    if !password.1 {
        check_password_length(&password.0)?;
    }
    let confirm = password_param(ctx, "confirmation-password");
    let me = who.userid().to_string();
    ctx.with(|c| {
        let a = c.access_mut();
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
            let Some((pw, sealed)) = &confirm else {
                return Err(Error::invalid(
                    "confirmation-password",
                    "password is required to modify user",
                ));
            };
            let realm = me.rsplit_once('@').map_or("", |(_, r)| r);
            let given = crate::model::access::shadow::Given::new(pw, *sealed);
            let ok = given.matches(a.user(&me)?.password.as_deref());
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
        let hash = password_hash(ctx, &userid, &password);
        if let Some(u) = a.user_entry(&userid) {
            u.password = Some(hash);
        }
        Ok(Value::Null.into())
    })
}
