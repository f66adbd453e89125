//! `/access/roles` (pve-access-control `API2/Role.pm`).

use super::*;

/// `GET /access/roles`: every role; `special` marks the built-in ones.
pub(super) fn list_roles(ctx: &Ctx<'_>) -> Result<Reply> {
    ctx.with(|c| {
        let items: Vec<Value> = c
            .access()
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
    let version = ctx.with(|c| c.access().version());
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
pub(super) fn create_role(ctx: &Ctx<'_>) -> Result<Reply> {
    let roleid = name_param(ctx, "roleid", "role")?;
    let privs = privs_param(ctx)?.unwrap_or_default();
    if roleid.to_ascii_lowercase().starts_with("pve") {
        return Err(Error::invalid(
            "roleid",
            "cannot use role ID starting with the (case-insensitive) 'PVE' namespace",
        ));
    }
    ctx.with(|c| c.access_mut().create_role(&roleid, &privs))?;
    Ok(Value::Null.into())
}

/// `GET /access/roles/{roleid}`: `{ "<priv>": 1, ... }`.
pub(super) fn read_role(ctx: &Ctx<'_>) -> Result<Reply> {
    let roleid = name_param(ctx, "roleid", "role")?;
    ctx.with(|c| {
        let privs = c
            .access()
            .role_privs(&roleid)
            .ok_or_else(|| Error::not_found(format!("role '{roleid}' does not exist")))?;
        let m: Map<String, Value> = privs.into_iter().map(|p| (p, json!(1))).collect();
        Ok(Value::Object(m).into())
    })
}

/// `PUT /access/roles/{roleid}`.
pub(super) fn update_role(ctx: &Ctx<'_>) -> Result<Reply> {
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
        c.access_mut()
            .update_role(&roleid, &privs.unwrap_or_default(), append.unwrap_or(false))
    })?;
    Ok(Value::Null.into())
}

/// `DELETE /access/roles/{roleid}`.
pub(super) fn delete_role(ctx: &Ctx<'_>) -> Result<Reply> {
    let roleid = name_param(ctx, "roleid", "role")?;
    ctx.with(|c| c.access_mut().delete_role(&roleid))?;
    Ok(Value::Null.into())
}
