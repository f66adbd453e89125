//! `/access/groups` (pve-access-control `API2/Group.pm`).

use super::*;

/// `GET /access/groups`: the groups where the caller holds User.Modify,
/// Sys.Audit or Group.Allocate.
pub(super) fn list_groups(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    ctx.with(|c| {
        let a = &c.access();
        let items: Vec<Value> = a
            .groups()
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
pub(super) fn create_group(ctx: &Ctx<'_>) -> Result<Reply> {
    let groupid = name_param(ctx, "groupid", "group")?;
    let comment = ctx.params.str("comment").filter(|c| !c.is_empty());
    ctx.with(|c| c.access_mut().create_group(&groupid, comment))?;
    Ok(Value::Null.into())
}

/// `GET /access/groups/{groupid}`.
pub(super) fn read_group(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?;
    let groupid = name_param(ctx, "groupid", "group")?;
    ctx.with(|c| {
        let a = &c.access();
        if !is_root(who) {
            a.check_any(who, "/access/groups", &["Sys.Audit", "Group.Allocate"])?;
        }
        let g = a
            .groups()
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
pub(super) fn update_group(ctx: &Ctx<'_>) -> Result<Reply> {
    let groupid = name_param(ctx, "groupid", "group")?;
    let comment = ctx.params.str("comment");
    ctx.with(|c| {
        let g = c.access_mut().group_entry(&groupid).ok_or_else(|| {
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
pub(super) fn delete_group(ctx: &Ctx<'_>) -> Result<Reply> {
    let groupid = name_param(ctx, "groupid", "group")?;
    ctx.with(|c| c.access_mut().delete_group(&groupid))?;
    Ok(Value::Null.into())
}
