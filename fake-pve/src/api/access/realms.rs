//! `/access/domains`: realms and their sync, and `/cluster/jobs/realm-sync`
//! (pve-access-control `API2/Domains.pm`, `API2/Jobs/RealmSync.pm`).

use std::collections::BTreeMap;

use super::*;
use crate::model::access::realms::SyncParams;
use crate::model::{TaskEffect, Worker};

/// The options of a call, without the names in `skip`.
fn options(ctx: &Ctx<'_>, skip: &[&str]) -> BTreeMap<String, String> {
    ctx.params
        .names()
        .filter(|k| !skip.contains(k))
        .filter_map(|k| Some((k.to_string(), ctx.params.str(k)?)))
        .collect()
}

/// `GET /access/domains`.
pub(super) fn list_domains(ctx: &Ctx<'_>) -> Result<Reply> {
    Ok(ctx
        .with(|c| super::view::realms(c.access().realms()))
        .into())
}

/// `GET /access/domains/{realm}`.
pub(super) fn read_domain(ctx: &Ctx<'_>) -> Result<Reply> {
    let realm = ctx.param("realm")?;
    ctx.with(|c| {
        let realms = c.access().realms();
        realms
            .existing(&realm)
            .map(|r| super::view::realm(realms, r))
    })
    .map(Reply::from)
}

/// `POST /access/domains`.
pub(super) fn create_domain(ctx: &Ctx<'_>) -> Result<Reply> {
    let realm = ctx.param("realm")?;
    let kind = ctx.param("type")?;
    let check = ctx.params.bool("check-connection")?;
    let password = ctx.params.str("password");
    let opts = options(ctx, &["realm", "type", "check-connection", "password"]);
    ctx.with(|c| {
        c.access_mut()
            .realms_mut()
            .create(&realm, &kind, opts, password, check)
    })?;
    Ok(Value::Null.into())
}

/// `PUT /access/domains/{realm}`.
pub(super) fn update_domain(ctx: &Ctx<'_>) -> Result<Reply> {
    let realm = ctx.param("realm")?;
    let check = ctx.params.bool("check-connection")?;
    let password = ctx.params.str("password");
    let digest = ctx.params.str("digest");
    let delete = ctx
        .params
        .str("delete")
        .map(|d| split_list(&d))
        .unwrap_or_default();
    let opts = options(
        ctx,
        &["realm", "check-connection", "password", "digest", "delete"],
    );
    ctx.with(|c| {
        c.access_mut().realms_mut().update(
            &realm,
            opts,
            &delete,
            digest.as_deref(),
            password,
            check,
        )
    })?;
    Ok(Value::Null.into())
}

/// `DELETE /access/domains/{realm}`.
pub(super) fn delete_domain(ctx: &Ctx<'_>) -> Result<Reply> {
    let realm = ctx.param("realm")?;
    ctx.with(|c| c.access_mut().realms_mut().delete(&realm))?;
    Ok(Value::Null.into())
}

/// `POST /access/domains/{realm}/sync`: an `auth-realm-sync` task
/// (`auth-realm-sync-test` with `dry-run`).
pub(super) fn sync_domain(ctx: &Ctx<'_>) -> Result<Reply> {
    let who = ctx.who()?.to_string();
    let realm = ctx.param("realm")?;
    let dry_run = ctx.params.bool("dry-run")?.unwrap_or(false);
    let p = SyncParams {
        scope: ctx.params.str("scope"),
        remove_vanished: ctx.params.str("remove-vanished"),
        enable_new: ctx.params.bool("enable-new")?,
        full: ctx.params.bool("full")?,
        purge: ctx.params.bool("purge")?,
    };
    let kind = if dry_run {
        "auth-realm-sync-test"
    } else {
        "auth-realm-sync"
    };
    let now_ms = ctx.now_ms();
    let ms = ctx.task_ms(kind);
    let upid = ctx.with(|c| {
        let options = c.access().sync_options(&realm, &p)?;
        let mut worker = Worker::new(kind, &realm);
        worker.effect = TaskEffect::RealmSync {
            realm: realm.clone(),
            options,
            dry_run,
        };
        let node = c.nodes().local().to_string();
        Ok::<_, Error>(c.start_task(&node, worker, &who, now_ms, ms))
    })?;
    Ok(json!(upid).into())
}

/// `GET /cluster/jobs/realm-sync`.
pub(super) fn syncjob_index(ctx: &Ctx<'_>) -> Result<Reply> {
    let now = ctx.now();
    Ok(ctx
        .with(|c| {
            c.access()
                .sync_jobs()
                .map(|(id, j)| super::view::sync_job_row(id, j, now))
                .collect::<Value>()
        })
        .into())
}

/// `GET /cluster/jobs/realm-sync/{id}`.
pub(super) fn read_job(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    ctx.with(|c| c.access().sync_job(&id).map(super::view::sync_job))
        .map(Reply::from)
}

/// `POST /cluster/jobs/realm-sync/{id}`.
pub(super) fn create_job(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    let opts = options(ctx, &["id"]);
    let now = ctx.now();
    ctx.with(|c| {
        let taken = c.backups().jobs().contains_key(&id);
        c.access_mut().create_sync_job(&id, opts, taken, now)
    })?;
    Ok(Value::Null.into())
}

/// `PUT /cluster/jobs/realm-sync/{id}`.
pub(super) fn update_job(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    let delete = ctx
        .params
        .str("delete")
        .map(|d| split_list(&d))
        .unwrap_or_default();
    let opts = options(ctx, &["id", "delete"]);
    ctx.with(|c| c.access_mut().update_sync_job(&id, opts, &delete))?;
    Ok(Value::Null.into())
}

/// `DELETE /cluster/jobs/realm-sync/{id}`.
pub(super) fn delete_job(ctx: &Ctx<'_>) -> Result<Reply> {
    let id = ctx.param("id")?;
    ctx.with(|c| c.access_mut().delete_sync_job(&id))?;
    Ok(Value::Null.into())
}
