//! The access answers' JSON, built from the model's realms, realm-sync
//! jobs and tokens.

use serde_json::{Value, json};

use crate::model::access::Token;
use crate::model::access::realms::{Realm, RealmType, Realms};
use crate::model::access::sync_jobs::SyncJob;

/// A row of `GET /access/domains`.
pub fn realm_row(id: &str, r: &Realm) -> Value {
    let mut e = json!({ "realm": id, "type": r.kind().as_str() });
    if let Some(c) = r.comment() {
        e["comment"] = json!(c);
    }
    if r.is_default() {
        e["default"] = json!(1);
    }
    if let Some(t) = r.tfa().and_then(|t| t.get("type").cloned()) {
        e["tfa"] = json!(t);
    }
    e
}

/// `GET /access/domains`.
pub fn realms(realms: &Realms) -> Value {
    realms.iter().map(|(id, r)| realm_row(id, r)).collect()
}

/// `GET /access/domains/{realm}`: the options, the type (PAM's plugin),
/// the digest of `domains.cfg`.
pub fn realm(realms: &Realms, r: &Realm) -> Value {
    let mut v = json!(r.options());
    v["type"] = json!(r.kind().as_str());
    if r.kind() == RealmType::Pam {
        v["plugin"] = json!("PVE::Auth::PAM");
    }
    v["digest"] = json!(realms.digest());
    v
}

/// A row of `GET /cluster/jobs/realm-sync`: the options, `id`, `type`,
/// `last-run` once it ran, `next-run`.
pub fn sync_job_row(id: &str, j: &SyncJob, now: i64) -> Value {
    let mut v = json!(j.options());
    v["id"] = json!(id);
    v["type"] = json!("realm-sync");
    if let Some(last) = j.last_run() {
        v["last-run"] = json!(last);
    }
    if let Some(next) = j.next_run(now) {
        v["next-run"] = json!(next);
    }
    v
}

/// `GET /cluster/jobs/realm-sync/{id}`.
pub fn sync_job(j: &SyncJob) -> Value {
    let mut v = json!(j.options());
    v["type"] = json!("realm-sync");
    v
}

/// The `info` object PVE answers for a token.
pub fn token_info(t: &Token) -> Value {
    let mut v = json!({ "privsep": u8::from(t.privsep), "expire": t.expire });
    if let Some(c) = &t.comment {
        v["comment"] = json!(c);
    }
    v
}
