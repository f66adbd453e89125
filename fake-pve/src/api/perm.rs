//! The schema's `permissions` evaluated as PVE's
//! `RPCEnvironment::check_api2_permissions` does, before the handler runs.
//!
//! `user: world` and `user: all` let everyone in (the handler may check
//! more, as PVE's do for `description`-only entries); `check` lists are
//! `perm`, `and`, `or`, `userid-param`, `userid-group` and `perm-modify`
//! expressions; an endpoint without permissions is for root@pam alone.
//!
//! The checks see the raw URI and body parameters, before they are
//! validated, so for anyone but root@pam a check can refuse what
//! validation would have refused otherwise: `userid-param` verifies the
//! user name and dies (500) on a malformed one even inside an `or`, and
//! `userid-param self` and `userid-group`, outside an `or`, die with `no
//! such user ('...')` (500) for an unknown user (pve-access-control
//! `RPCEnvironment::exec_api2_perm_check`, `AccessControl::check_user_exist`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::params::value_text;
use crate::model::access::{Access, GroupsParam};
use crate::model::{AuthId, Error, Result};
use crate::spec::formats::split_list;

fn denied(what: Option<String>) -> Error {
    match what {
        Some(w) => Error::Forbidden(format!("Permission check failed ({w})")),
        None => Error::Forbidden("Permission check failed".into()),
    }
}

/// PVE's `template_replace`: `{name}` replaced by the parameter.
fn template(path: &str, params: &BTreeMap<String, Value>) -> String {
    let mut out = String::new();
    let mut rest = path;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let Some(end) = rest[start..].find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let name = &rest[start + 1..start + end];
        out.push_str(&params.get(name).map(value_text).unwrap_or_default());
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
    normalize(&out)
}

/// PVE's `normalize_path`: single slashes, no trailing slash.
fn normalize(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    format!("/{}", parts.join("/"))
}

/// Evaluates an endpoint's `permissions` for `who`.
///
/// # Errors
/// 403 `Permission check failed (...)` as PVE words it.
pub fn check(
    access: &Access,
    who: &AuthId,
    perms: &Value,
    params: &BTreeMap<String, Value>,
) -> Result<()> {
    let user = perms.get("user").and_then(Value::as_str);
    if user == Some("world") {
        return Ok(());
    }
    if matches!(who, AuthId::User(u) if u == "root@pam") {
        return Ok(());
    }
    if perms.as_object().is_none_or(serde_json::Map::is_empty) {
        return Err(denied(Some("user != root@pam".into())));
    }
    if user == Some("all") {
        return Ok(());
    }
    match perms.get("check") {
        Some(c) => exec(access, who, c, params, false).map(|_| ()),
        None => Err(denied(None)),
    }
}

/// Runs one check expression; with `noerr` a failure answers `Ok(false)`.
fn exec(
    access: &Access,
    who: &AuthId,
    check: &Value,
    params: &BTreeMap<String, Value>,
    noerr: bool,
) -> Result<bool> {
    let Some(list) = check.as_array() else {
        return Err(denied(None));
    };
    let test = list.first().and_then(Value::as_str).unwrap_or_default();
    let fail = |what: Option<String>| if noerr { Ok(false) } else { Err(denied(what)) };
    match test {
        "and" => {
            for sub in &list[1..] {
                exec(access, who, sub, params, false)?;
            }
            Ok(true)
        }
        "or" => {
            for sub in &list[1..] {
                if exec(access, who, sub, params, true)? {
                    return Ok(true);
                }
            }
            fail(None)
        }
        "perm" => {
            let path = list.get(1).and_then(Value::as_str).unwrap_or("/");
            let privs: Vec<&str> = list
                .get(2)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let opts = options(&list[3..]);
            if let Some(p) = opts.get("require_param").and_then(|v| v.as_str())
                && !params.contains_key(p)
            {
                return fail(None);
            }
            let any = opts
                .get("any")
                .is_some_and(|v| v.as_i64() == Some(1) || v.as_bool() == Some(true));
            let path = template(path, params);
            if any {
                if privs.iter().any(|p| access.has_priv(who, &path, p)) {
                    return Ok(true);
                }
                return fail(Some(format!("{path}, {}", privs.join("|"))));
            }
            for p in &privs {
                if !access.has_priv(who, &path, p) {
                    return fail(Some(format!("{path}, {p}")));
                }
            }
            Ok(true)
        }
        "userid-param" => {
            let userid = params.get("userid").map(value_text).unwrap_or_default();
            // `verify_username` without `noerr`: a malformed name dies.
            let realm = verify_username(&userid)?;
            match list.get(1).and_then(Value::as_str) {
                Some("self") => {
                    if !user_exist(access, &userid, noerr)? {
                        return Ok(false);
                    }
                    let is_self = matches!(who, AuthId::User(u) if *u == userid);
                    if is_self { Ok(true) } else { fail(None) }
                }
                Some("Realm.AllocateUser") => {
                    let path = format!("/access/realm/{realm}");
                    if access.has_priv(who, &path, "Realm.AllocateUser") {
                        Ok(true)
                    } else {
                        fail(Some(format!("{path}, Realm.AllocateUser")))
                    }
                }
                _ => fail(None),
            }
        }
        "userid-group" => {
            let privs: Vec<&str> = list
                .get(1)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mode = match options(&list[2..])
                .get("groups_param")
                .and_then(Value::as_str)
            {
                Some("create") => GroupsParam::Create,
                Some(_) => GroupsParam::Update,
                None => GroupsParam::None,
            };
            let userid = params.get("userid").map(value_text).unwrap_or_default();
            if mode != GroupsParam::Create && !user_exist(access, &userid, noerr)? {
                return Ok(false);
            }
            let groups: Vec<String> = params
                .get("groups")
                .map(value_text)
                .map(|g| split_list(&g).into_iter().map(str::to_string).collect())
                .unwrap_or_default();
            if access.check_userid_group(who, &userid, &privs, mode, &groups)? {
                Ok(true)
            } else {
                fail(None)
            }
        }
        "perm-modify" => {
            // Without a path PVE checks Permissions.Modify on /access.
            let result = match list.get(1).and_then(Value::as_str) {
                Some(p) => access.check_perm_modify(who, &template(p, params)),
                None => access.check_perm(who, "/access", &["Permissions.Modify"]),
            };
            match result {
                Ok(()) => Ok(true),
                Err(_) if noerr => Ok(false),
                Err(e) => Err(e),
            }
        }
        _ => fail(None),
    }
}

/// PVE's `verify_username` (pve-access-control `Auth/Plugin.pm`) without
/// `noerr`: the realm of a well-formed `name@realm`.
///
/// # Errors
/// 500 `user name '...' is too short`, `... is too long (N > 64)` or
/// `value '...' does not look like a valid user name`.
fn verify_username(userid: &str) -> Result<&str> {
    let len = userid.len();
    if len < 3 {
        return Err(Error::failed(format!("user name '{userid}' is too short")));
    }
    if len > 64 {
        return Err(Error::failed(format!(
            "user name '{userid}' is too long ({len} > 64)"
        )));
    }
    let valid = userid.rsplit_once('@').and_then(|(name, realm)| {
        let name_ok = !name.is_empty()
            && !name
                .chars()
                .any(|c| c.is_whitespace() || c == ':' || c == '/');
        let mut rc = realm.chars();
        let realm_ok = realm.len() >= 2
            && rc.next().is_some_and(|c| c.is_ascii_alphabetic())
            && rc.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
        (name_ok && realm_ok).then_some(realm)
    });
    valid.ok_or_else(|| {
        Error::failed(format!(
            "value '{userid}' does not look like a valid user name"
        ))
    })
}

/// PVE's `check_user_exist`: whether `userid` is a user; without `noerr`
/// a malformed or unknown one dies.
///
/// # Errors
/// Those of [`verify_username`]; 500 `no such user ('...')`.
fn user_exist(access: &Access, userid: &str, noerr: bool) -> Result<bool> {
    if noerr {
        return Ok(verify_username(userid).is_ok() && access.user_exists(userid));
    }
    verify_username(userid)?;
    if access.user_exists(userid) {
        Ok(true)
    } else {
        Err(Error::failed(format!("no such user ('{userid}')")))
    }
}

/// The `key, value` options after a `perm` check's privileges.
fn options(rest: &[Value]) -> BTreeMap<String, Value> {
    rest.chunks(2)
        .filter_map(|c| Some((c.first()?.as_str()?.to_string(), c.get(1)?.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::access::User;
    use serde_json::json;

    fn access() -> Access {
        let mut a = Access::default();
        a.put_user(User::new("root@pam"));
        a.put_user(User::new("bob@pve"));
        a
    }

    #[test]
    fn world_all_root_and_checks() {
        let a = access();
        let bob = AuthId::User("bob@pve".into());
        let root = AuthId::User("root@pam".into());
        let p = BTreeMap::from([
            ("vmid".to_string(), json!("100")),
            ("userid".to_string(), json!("bob@pve")),
        ]);
        assert!(check(&a, &bob, &json!({"user": "world"}), &p).is_ok());
        assert!(check(&a, &bob, &json!({"user": "all"}), &p).is_ok());
        assert!(
            check(
                &a,
                &root,
                &json!({"check": ["perm", "/vms/{vmid}", ["VM.Allocate"]]}),
                &p
            )
            .is_ok()
        );
        assert_eq!(
            check(
                &a,
                &bob,
                &json!({"check": ["perm", "/vms/{vmid}", ["VM.Audit", "VM.Allocate"]]}),
                &p
            ),
            Err(Error::Forbidden(
                "Permission check failed (/vms/100, VM.Audit)".into()
            ))
        );
        assert_eq!(
            check(
                &a,
                &bob,
                &json!({"check": ["perm", "/vms/{vmid}", ["VM.Audit", "VM.Console"], "any", 1]}),
                &p
            ),
            Err(Error::Forbidden(
                "Permission check failed (/vms/100, VM.Audit|VM.Console)".into()
            ))
        );
        assert_eq!(
            check(&a, &bob, &json!({}), &p),
            Err(Error::Forbidden(
                "Permission check failed (user != root@pam)".into()
            ))
        );
        let self_or =
            json!({"check": ["or", ["userid-param", "self"], ["userid-group", ["User.Modify"]]]});
        assert!(check(&a, &bob, &self_or, &p).is_ok());
        let other = BTreeMap::from([("userid".to_string(), json!("root@pam"))]);
        assert_eq!(
            check(&a, &bob, &self_or, &other),
            Err(Error::Forbidden("Permission check failed".into()))
        );
    }

    #[test]
    fn unknown_and_malformed_users_die_in_the_checks() {
        let mut a = access();
        a.put_user(User::new("ann@pve"));
        let ann = AuthId::User("ann@pve".into());
        let uid = |u: &str| BTreeMap::from([("userid".to_string(), json!(u))]);
        let failed = |m: &str| Err(Error::failed(m));
        // `userid-group` outside an `or`: check_user_exist dies.
        let read = json!({"check": ["userid-group", ["User.Modify", "Sys.Audit"]]});
        assert_eq!(
            check(&a, &ann, &read, &uid("ghost@pve")),
            failed("no such user ('ghost@pve')")
        );
        assert_eq!(
            check(&a, &ann, &read, &uid("root")),
            failed("value 'root' does not look like a valid user name")
        );
        assert_eq!(
            check(&a, &ann, &read, &uid("ro")),
            failed("user name 'ro' is too short")
        );
        let long = format!("{}@pve", "x".repeat(70));
        assert_eq!(
            check(&a, &ann, &read, &uid(&long)),
            failed(&format!("user name '{long}' is too long (74 > 64)"))
        );
        // A creation does not ask whether the user exists.
        let create = json!({"check": ["userid-group", ["User.Modify"], "groups_param", "create"]});
        assert_eq!(
            check(&a, &ann, &create, &uid("ghost@pve")),
            Err(Error::Forbidden(
                "Permission check failed (/access/groups, User.Modify)".into()
            ))
        );
        // Inside an `or` an unknown user fails the alternative quietly,
        // a malformed name still dies in `userid-param`.
        let self_or =
            json!({"check": ["or", ["userid-param", "self"], ["userid-group", ["User.Modify"]]]});
        assert_eq!(
            check(&a, &ann, &self_or, &uid("ghost@pve")),
            Err(Error::Forbidden("Permission check failed".into()))
        );
        assert_eq!(
            check(&a, &ann, &self_or, &uid("bad")),
            failed("value 'bad' does not look like a valid user name")
        );
        // An `and` inside an `or` dies as it would alone.
        let password = json!({"check": ["or", ["userid-param", "self"],
            ["and", ["userid-param", "Realm.AllocateUser"], ["userid-group", ["User.Modify"]]]]});
        assert!(matches!(
            check(&a, &ann, &password, &uid("ghost@pve")),
            Err(Error::Forbidden(_))
        ));
        // root@pam skips every check.
        let root = AuthId::User("root@pam".into());
        assert!(check(&a, &root, &read, &uid("ghost@pve")).is_ok());
        assert!(check(&a, &root, &self_or, &uid("bad")).is_ok());
    }

    #[test]
    fn user_names_as_pve_verifies_them() {
        assert_eq!(verify_username("a@pve"), Ok("pve"));
        assert_eq!(verify_username("me@x.example"), Ok("x.example"));
        assert_eq!(verify_username("a@b@pve"), Ok("pve"));
        assert!(verify_username("a b@pve").is_err());
        assert!(verify_username("a:b@pve").is_err());
        assert!(verify_username("ab@1x").is_err());
        assert!(verify_username("abc@p").is_err());
        assert!(verify_username("abc").is_err());
    }

    #[test]
    fn templates_normalize() {
        let p = BTreeMap::from([("storage".to_string(), json!("local"))]);
        assert_eq!(template("/storage/{storage}/", &p), "/storage/local");
        assert_eq!(template("//nodes//{node}", &p), "/nodes");
    }
}
