//! Cluster-wide areas: firewall, pools, access, SDN, HA, jobs,
//! datacenter options.

use serde_json::{Map, Value, json};

use super::super::convert::{call, field, items, params, split_list, texts, truthy};
use super::super::{Reader, TwinError};
use crate::PveVersion;

/// A firewall level's options and rules (and, for the cluster and
/// guests, its aliases and IP sets) as calls.
pub(super) async fn firewall(
    reader: &Reader,
    base: &str,
    sets: bool,
    setup: &mut Vec<Value>,
) -> Result<(), TwinError> {
    if sets {
        for a in items(reader.get(&format!("{base}/aliases")).await?.as_ref()) {
            setup.push(call(
                "POST",
                &format!("{base}/aliases"),
                params(a, &["ipversion"]),
            ));
        }
        for set in items(reader.get(&format!("{base}/ipset")).await?.as_ref()) {
            let Some(name) = field(set, "name") else {
                continue;
            };
            setup.push(call("POST", &format!("{base}/ipset"), params(set, &[])));
            let entries = reader.get(&format!("{base}/ipset/{name}")).await?;
            for e in items(entries.as_ref()) {
                setup.push(call(
                    "POST",
                    &format!("{base}/ipset/{name}"),
                    params(e, &[]),
                ));
            }
        }
    }
    rules(reader, &format!("{base}/rules"), setup).await?;
    if let Some(o) = reader.get(&format!("{base}/options")).await? {
        let p = params(&o, &[]);
        if !p.is_empty() {
            setup.push(call("PUT", &format!("{base}/options"), p));
        }
    }
    Ok(())
}

/// Firewall rules as POSTs, last first (a new rule goes on top).
async fn rules(reader: &Reader, path: &str, setup: &mut Vec<Value>) -> Result<(), TwinError> {
    let list = reader.get(path).await?;
    for r in items(list.as_ref()).iter().rev() {
        setup.push(call("POST", path, params(r, &["pos", "ipversion"])));
    }
    Ok(())
}

/// Resource pools with their members.
pub(super) async fn pools(reader: &Reader) -> Result<Value, TwinError> {
    let mut out = Vec::new();
    for p in items(reader.get("/pools").await?.as_ref()) {
        let Some(id) = field(p, "poolid") else {
            continue;
        };
        let mut m = Map::new();
        m.insert("poolid".into(), json!(id));
        if let Some(c) = field(p, "comment") {
            m.insert("comment".into(), json!(c));
        }
        let members = reader.get(&format!("/pools/{id}")).await?;
        let (mut vms, mut storage) = (Vec::new(), Vec::new());
        for mem in items(members.as_ref().and_then(|v| v.get("members"))) {
            match mem["type"].as_str() {
                Some("storage") => storage.extend(field(mem, "storage").map(Value::from)),
                _ => vms.extend(mem["vmid"].as_u64().map(Value::from)),
            }
        }
        m.insert("vms".into(), Value::Array(vms));
        m.insert("storage".into(), Value::Array(storage));
        out.push(Value::Object(m));
    }
    Ok(Value::Array(out))
}

/// Users (without passwords), tokens (without secrets), groups, custom
/// roles, ACL entries and realms.
pub(super) async fn access(
    reader: &Reader,
    s: &mut Map<String, Value>,
    setup: &mut Vec<Value>,
) -> Result<(), TwinError> {
    let mut realms = Vec::new();
    for r in items(reader.get("/access/domains").await?.as_ref()) {
        let Some(realm) = field(r, "realm") else {
            continue;
        };
        let kind = field(r, "type").unwrap_or_default();
        if kind == "pam" || kind == "pve" {
            let p = params(r, &["realm", "type"]);
            if !p.is_empty() {
                setup.push(call("PUT", &format!("/access/domains/{realm}"), p));
            }
            continue;
        }
        let conf = reader.get(&format!("/access/domains/{realm}")).await?;
        let options = conf
            .map(|c| texts(&c, &["realm", "type"]))
            .unwrap_or_default();
        realms.push(json!({"realm": realm, "type": kind, "options": options}));
    }
    s.insert("realms".into(), Value::Array(realms));
    let mut users = Vec::new();
    for u in items(reader.get("/access/users?full=1").await?.as_ref()) {
        let Some(userid) = field(u, "userid") else {
            continue;
        };
        let tokens: Vec<Value> = items(u.get("tokens"))
            .iter()
            .map(|t| {
                let mut m = texts(t, &[]);
                m.insert("privsep".into(), json!(truthy(t.get("privsep"))));
                if let Some(e) = t["expire"].as_i64() {
                    m.insert("expire".into(), json!(e));
                }
                Value::Object(m)
            })
            .collect();
        let extra = params(
            u,
            &[
                "userid",
                "enable",
                "expire",
                "comment",
                "email",
                "tokens",
                "groups",
                "realm-type",
                "tfa-locked-until",
                "totp-locked",
            ],
        );
        if !extra.is_empty() {
            setup.push(call("PUT", &format!("/access/users/{userid}"), extra));
        }
        if userid == "root@pam" {
            if !tokens.is_empty() {
                users.push(json!({"userid": userid, "tokens": tokens}));
            }
            continue;
        }
        let mut m = Map::new();
        m.insert("userid".into(), json!(userid));
        m.insert(
            "enable".into(),
            json!(u.get("enable").is_none_or(|e| truthy(Some(e)))),
        );
        m.insert("expire".into(), json!(u["expire"].as_i64().unwrap_or(0)));
        for k in ["comment", "email"] {
            if let Some(v) = field(u, k) {
                m.insert(k.into(), json!(v));
            }
        }
        m.insert("tokens".into(), Value::Array(tokens));
        m.insert("groups".into(), json!(split_list(u.get("groups"))));
        users.push(Value::Object(m));
    }
    tfa(reader, &mut users).await?;
    s.insert("users".into(), Value::Array(users));
    let groups: Vec<Value> = items(reader.get("/access/groups").await?.as_ref())
        .iter()
        .map(|g| {
            let mut m = texts(g, &["users"]);
            m.insert("members".into(), json!(split_list(g.get("users"))));
            Value::Object(m)
        })
        .collect();
    s.insert("groups".into(), Value::Array(groups));
    let roles: Vec<Value> = items(reader.get("/access/roles").await?.as_ref())
        .iter()
        .filter(|r| !truthy(r.get("special")))
        .map(|r| json!({"roleid": field(r, "roleid"), "privs": split_list(r.get("privs"))}))
        .collect();
    s.insert("roles".into(), Value::Array(roles));
    let acl: Vec<Value> = items(reader.get("/access/acl").await?.as_ref())
        .iter()
        .filter_map(|a| {
            let who = match a["type"].as_str()? {
                "user" => "users",
                "group" => "groups",
                "token" => "tokens",
                _ => return None,
            };
            Some(json!({
                "path": field(a, "path")?,
                "roles": [field(a, "roleid")?],
                who: [field(a, "ugid")?],
                "propagate": a.get("propagate").is_none_or(|p| truthy(Some(p))),
            }))
        })
        .collect();
    s.insert("acl".into(), Value::Array(acl));
    Ok(())
}

/// The cluster's firewall and SDN as calls.
pub(super) async fn cluster_setup(
    reader: &Reader,
    setup: &mut Vec<Value>,
) -> Result<(), TwinError> {
    for g in items(reader.get("/cluster/firewall/groups").await?.as_ref()) {
        let Some(name) = field(g, "group") else {
            continue;
        };
        setup.push(call("POST", "/cluster/firewall/groups", params(g, &[])));
        rules(reader, &format!("/cluster/firewall/groups/{name}"), setup).await?;
    }
    firewall(reader, "/cluster/firewall", true, setup).await?;
    super::sdn::sdn(reader, setup).await
}

/// HA groups (8.4) or rules (9.x) as calls.
pub(super) async fn ha_setup(
    reader: &Reader,
    release: PveVersion,
    setup: &mut Vec<Value>,
) -> Result<(), TwinError> {
    let ha = if release == PveVersion::V8_4 {
        ("/cluster/ha/groups", "group")
    } else {
        ("/cluster/ha/rules", "rule")
    };
    // A group's `type` is only shown; a rule's is its kind.
    let shown: &[&str] = if ha.1 == "group" {
        &["type", "digest"]
    } else {
        &["errors"]
    };
    for g in items(reader.get(ha.0).await?.as_ref()) {
        if field(g, ha.1).is_some() {
            setup.push(call("POST", ha.0, params(g, shown)));
        }
    }
    Ok(())
}

/// Backup and replication jobs and the datacenter options as calls.
pub(super) async fn jobs_setup(reader: &Reader, setup: &mut Vec<Value>) -> Result<(), TwinError> {
    for j in items(reader.get("/cluster/backup").await?.as_ref()) {
        setup.push(call(
            "POST",
            "/cluster/backup",
            params(j, &["next-run", "type"]),
        ));
    }
    for j in items(reader.get("/cluster/replication").await?.as_ref()) {
        setup.push(call(
            "POST",
            "/cluster/replication",
            params(j, &["jobnum", "guest", "source"]),
        ));
    }
    // One call an option: fake-pve emulates some of them only.
    if let Some(o) = reader.get("/cluster/options").await? {
        for (k, v) in params(&o, &["allowed-tags"]) {
            setup.push(call("PUT", "/cluster/options", [(k, v)].into()));
        }
    }
    Ok(())
}

/// Second factors: each user's TOTP entries and recovery keys as they
/// are listed (their secrets are not readable: the twin makes new ones).
/// WebAuthn, U2F and Yubico entries are noted, not recreated.
async fn tfa(reader: &Reader, users: &mut Vec<Value>) -> Result<(), TwinError> {
    for u in items(reader.get("/access/tfa").await?.as_ref()) {
        let Some(userid) = field(u, "userid") else {
            continue;
        };
        let mut entries = Vec::new();
        for e in items(u.get("entries")) {
            let kind = field(e, "type").unwrap_or_default();
            if kind != "totp" && kind != "recovery" {
                reader.note(
                    "/access/tfa",
                    format!(
                        "{userid}: {kind} entry '{}' not recreated (fake-pve holds TOTP and recovery keys only)",
                        field(e, "id").unwrap_or_default()
                    ),
                );
                continue;
            }
            let mut m = Map::new();
            m.insert("type".into(), json!(kind));
            for k in ["id", "description"] {
                if let Some(v) = field(e, k) {
                    m.insert(k.into(), json!(v));
                }
            }
            if let Some(c) = e["created"].as_i64() {
                m.insert("created".into(), json!(c));
            }
            if e.get("enable").is_some_and(|v| !truthy(Some(v))) {
                m.insert("enable".into(), json!(false));
            }
            entries.push(Value::Object(m));
        }
        if entries.is_empty() {
            continue;
        }
        match users
            .iter_mut()
            .find(|x| x["userid"].as_str() == Some(&userid))
        {
            Some(x) => {
                x["tfa"] = Value::Array(entries);
            }
            None => users.push(json!({"userid": userid, "tfa": entries})),
        }
    }
    Ok(())
}
