//! `/access/openid`: logins through an `openid` realm (pve-access-control
//! `API2/OpenId.pm`). Both calls need no ticket.

use super::*;

/// `POST /access/openid/auth-url`: the provider's authorization URL for
/// a new pending login.
pub(super) fn auth_url(ctx: &Ctx<'_>) -> Result<Reply> {
    let realm = ctx.param("realm")?;
    let redirect = ctx.param("redirect-url")?;
    let mut rq = ctx.rq();
    ctx.with(|c| c.access_mut().openid_auth_url(&realm, &redirect, &mut rq))
        .map(|url| Value::String(url).into())
}

/// `POST /access/openid/login`: the code exchanged and checked, a ticket
/// as `/access/ticket` answers one. Every refusal is the same 401.
pub(super) fn login(ctx: &Ctx<'_>) -> Result<Reply> {
    let state = ctx.param("state")?;
    let code = ctx.param("code")?;
    let redirect = ctx.param("redirect-url")?;
    let now = ctx.now();
    let keys = ctx.state.keys();
    let key = keys.secret();
    ctx.with(|c| {
        let login = c
            .access_mut()
            .openid_login(&state, &code, &redirect, &key, now)
            .map_err(|e| {
                tracing::info!("openid authentication failure; msg={}", e.message());
                auth_failure()
            })?;
        let userid = login.userid;
        let who = AuthId::User(userid.clone());
        let mut data = json!({
            "ticket": keys.ticket(&userid, now),
            "username": userid,
            "CSRFPreventionToken": keys.csrf(&userid, now),
            "cap": ticket::capabilities(c.access(), &who),
        });
        if let Some(name) = c.nodes().cluster_name()
            && c.access().has_priv(&who, "/", "Sys.Audit")
        {
            data["clustername"] = json!(name);
        }
        let local = c.nodes().local().to_string();
        c.clusterlog.openid_login(&local, &userid, now);
        Ok(data.into())
    })
}
