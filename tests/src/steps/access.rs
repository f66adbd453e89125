//! Access control: users (`create_user`, `index`, `read_user`,
//! `update_user`, `delete_user`), groups, roles, ACLs (`update_acl`,
//! `read_acl`), `permissions` and `change_password`.

use cucumber::gherkin::Step;
use cucumber::{given, then, when};
use pve_client::api::seg;
use pve_client::{Method, Params};

use super::{field, table_params, text};
use crate::world::{Made, PveWorld};

async fn create_user(w: &mut PveWorld, name: &str, mut params: Params) {
    let userid = w.userid(&w.expand(name));
    params.push("userid", userid.as_str());
    w.call(Method::POST, "/access/users", params).await;
    if w.last().ok() {
        w.made(Made::User(userid));
    }
}

#[given(expr = "a user {string} with password {string}")]
async fn given_user(w: &mut PveWorld, step: &Step, name: String, password: String) {
    let mut params = table_params(w, step);
    params.push("password", w.expand(&password));
    create_user(w, &name, params).await;
    let o = w.last();
    assert!(o.ok(), "creating the user {name} failed: {o:?}");
    let userid = w.userid(&name);
    w.passwords.insert(userid, password);
}

#[given(expr = "a user {string}")]
async fn given_user_without_password(w: &mut PveWorld, step: &Step, name: String) {
    let params = table_params(w, step);
    create_user(w, &name, params).await;
    let o = w.last();
    assert!(o.ok(), "creating the user {name} failed: {o:?}");
}

#[when(expr = "I create the user {string}")]
async fn when_create_user(w: &mut PveWorld, step: &Step, name: String) {
    let params = table_params(w, step);
    create_user(w, &name, params).await;
}

#[when("I list the users")]
async fn list_users(w: &mut PveWorld, step: &Step) {
    let params = table_params(w, step);
    w.call(Method::GET, "/access/users", params).await;
}

#[when(expr = "I read the user {string}")]
async fn read_user(w: &mut PveWorld, name: String) {
    let path = format!("/access/users/{}", seg(&w.userid(&w.expand(&name))));
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I update the user {string} with:")]
async fn update_user(w: &mut PveWorld, step: &Step, name: String) {
    let path = format!("/access/users/{}", seg(&w.userid(&w.expand(&name))));
    let params = table_params(w, step);
    w.call(Method::PUT, &path, params).await;
}

#[when(expr = "I delete the user {string}")]
async fn delete_user(w: &mut PveWorld, name: String) {
    let userid = w.userid(&w.expand(&name));
    let path = format!("/access/users/{}", seg(&userid));
    w.call(Method::DELETE, &path, Params::new()).await;
    if w.last().ok() {
        w.unmade(&Made::User(userid));
    }
}

#[when(expr = "{string} changes the password of {string} to {string}")]
async fn change_password(w: &mut PveWorld, who: String, whose: String, password: String) {
    let userid = w.userid(&w.expand(&whose));
    let mut params = Params::new()
        .set("userid", userid.as_str())
        .set("password", w.expand(&password).as_str());
    // PVE 9 wants the caller's own password to confirm.
    if let Some(own) = w.passwords.get(&w.userid(&who)).cloned() {
        params.push("confirmation-password", own);
    }
    w.act_as(&who);
    w.call(Method::PUT, "/access/password", params).await;
    if w.last().ok() {
        w.passwords.insert(userid, password);
    }
}

async fn create_group(w: &mut PveWorld, name: &str, mut params: Params) {
    let groupid = w.groupid(&w.expand(name));
    params.push("groupid", groupid.as_str());
    w.call(Method::POST, "/access/groups", params).await;
    if w.last().ok() {
        w.made(Made::Group(groupid));
    }
}

#[given(expr = "a group {string}")]
async fn given_group(w: &mut PveWorld, step: &Step, name: String) {
    let params = table_params(w, step);
    create_group(w, &name, params).await;
    let o = w.last();
    assert!(o.ok(), "creating the group {name} failed: {o:?}");
}

#[when(expr = "I create the group {string}")]
async fn when_create_group(w: &mut PveWorld, step: &Step, name: String) {
    let params = table_params(w, step);
    create_group(w, &name, params).await;
}

#[given(expr = "{string} is a member of group {string}")]
async fn member_of(w: &mut PveWorld, user: String, group: String) {
    let path = format!("/access/users/{}", seg(&w.userid(&user)));
    let params = Params::new()
        .set("groups", w.groupid(&group).as_str())
        .set("append", true);
    w.call(Method::PUT, &path, params).await;
    let o = w.last();
    assert!(o.ok(), "adding {user} to {group} failed: {o:?}");
}

#[when("I list the groups")]
async fn list_groups(w: &mut PveWorld) {
    w.call(Method::GET, "/access/groups", Params::new()).await;
}

#[when(expr = "I read the group {string}")]
async fn read_group(w: &mut PveWorld, name: String) {
    let path = format!("/access/groups/{}", seg(&w.groupid(&w.expand(&name))));
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I delete the group {string}")]
async fn delete_group(w: &mut PveWorld, name: String) {
    let groupid = w.groupid(&w.expand(&name));
    let path = format!("/access/groups/{}", seg(&groupid));
    w.call(Method::DELETE, &path, Params::new()).await;
    if w.last().ok() {
        w.unmade(&Made::Group(groupid));
    }
}

async fn create_role(w: &mut PveWorld, name: &str, privs: &str) {
    let roleid = w.roleid(&w.expand(name));
    let mut params = Params::new().set("roleid", roleid.as_str());
    if !privs.is_empty() {
        params.push("privs", privs);
    }
    w.call(Method::POST, "/access/roles", params).await;
    if w.last().ok() {
        w.made(Made::Role(roleid));
    }
}

#[given(expr = "a role {string} with the privileges {string}")]
async fn given_role(w: &mut PveWorld, name: String, privs: String) {
    create_role(w, &name, &privs).await;
    let o = w.last();
    assert!(o.ok(), "creating the role {name} failed: {o:?}");
}

#[when(expr = "I create the role {string} with the privileges {string}")]
async fn when_create_role(w: &mut PveWorld, name: String, privs: String) {
    create_role(w, &name, &privs).await;
}

#[when("I list the roles")]
async fn list_roles(w: &mut PveWorld) {
    w.call(Method::GET, "/access/roles", Params::new()).await;
}

#[when(expr = "I read the role {string}")]
async fn read_role(w: &mut PveWorld, name: String) {
    let path = format!("/access/roles/{}", seg(&w.roleid(&w.expand(&name))));
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I update the role {string} with:")]
async fn update_role(w: &mut PveWorld, step: &Step, name: String) {
    let path = format!("/access/roles/{}", seg(&w.roleid(&w.expand(&name))));
    let params = table_params(w, step);
    w.call(Method::PUT, &path, params).await;
}

#[when(expr = "I delete the role {string}")]
async fn delete_role(w: &mut PveWorld, name: String) {
    let roleid = w.roleid(&w.expand(&name));
    let path = format!("/access/roles/{}", seg(&roleid));
    w.call(Method::DELETE, &path, Params::new()).await;
    if w.last().ok() {
        w.unmade(&Made::Role(roleid));
    }
}

/// `PUT /access/acl` for `who` (`alice`, `group ops`, `token alice!ci`).
async fn update_acl(w: &mut PveWorld, who: &str, role: &str, path: &str, propagate: bool) {
    let (kind, id) = if let Some(g) = who.strip_prefix("group ") {
        ("groups", w.groupid(g))
    } else if let Some(t) = who.strip_prefix("token ") {
        ("tokens", w.tokenid(t))
    } else {
        ("users", w.userid(who))
    };
    let (role, path) = (w.roleid(role), w.expand(path));
    let mut params = Params::new()
        .set("path", path.as_str())
        .set("roles", role.as_str())
        .set(kind, id.as_str());
    if !propagate {
        params.push("propagate", false);
    }
    w.call(Method::PUT, "/access/acl", params).await;
    if w.last().ok() {
        w.made(Made::Acl {
            path,
            role,
            kind: kind.into(),
            who: id,
        });
    }
}

#[given(expr = "{string} has the role {string} on {string}")]
async fn has_role(w: &mut PveWorld, who: String, role: String, path: String) {
    update_acl(w, &who, &role, &path, true).await;
    let o = w.last();
    assert!(o.ok(), "granting {role} on {path} to {who} failed: {o:?}");
}

#[given(expr = "{string} has the role {string} on {string} only")]
async fn has_role_here(w: &mut PveWorld, who: String, role: String, path: String) {
    update_acl(w, &who, &role, &path, false).await;
    let o = w.last();
    assert!(o.ok(), "granting {role} on {path} to {who} failed: {o:?}");
}

#[when(expr = "I grant {string} the role {string} on {string}")]
async fn grant(w: &mut PveWorld, who: String, role: String, path: String) {
    update_acl(w, &who, &role, &path, true).await;
}

#[when("I read the ACL")]
async fn read_acl(w: &mut PveWorld) {
    w.call(Method::GET, "/access/acl", Params::new()).await;
}

#[when(expr = "I read the permissions of {string}")]
async fn permissions_of(w: &mut PveWorld, step: &Step, who: String) {
    let who = w.expand(&who);
    let id = if who.contains('!') {
        w.tokenid(&who)
    } else {
        w.userid(&who)
    };
    let mut params = table_params(w, step);
    params.push("userid", id);
    w.call(Method::GET, "/access/permissions", params).await;
}

#[when("I read my permissions")]
async fn permissions(w: &mut PveWorld, step: &Step) {
    let params = table_params(w, step);
    w.call(Method::GET, "/access/permissions", params).await;
}

async fn privileges(
    w: &mut PveWorld,
    who: &str,
    path: &str,
) -> serde_json::Map<String, serde_json::Value> {
    let id = if who.contains('!') {
        w.tokenid(who)
    } else {
        w.userid(who)
    };
    let path = w.expand(path);
    let params = Params::new()
        .set("userid", id.as_str())
        .set("path", path.as_str());
    let admin = w.admin();
    let data = admin
        .get("/access/permissions", &params)
        .await
        .unwrap_or_else(|e| panic!("reading the permissions of {id}: {e}"));
    data.get(&path)
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default()
}

#[then(expr = "{string} has {string} on {string}")]
async fn has_privilege(w: &mut PveWorld, who: String, privs: String, path: String) {
    let got = privileges(w, &who, &path).await;
    for p in privs.split(',').map(str::trim) {
        assert!(
            got.contains_key(p),
            "{who} lacks {p} on {path}: has {got:?}"
        );
    }
}

#[then(expr = "{string} does not have {string} on {string}")]
async fn lacks_privilege(w: &mut PveWorld, who: String, privs: String, path: String) {
    let got = privileges(w, &who, &path).await;
    for p in privs.split(',').map(str::trim) {
        assert!(!got.contains_key(p), "{who} has {p} on {path}: {got:?}");
    }
}

#[then(expr = "{string} has no privileges on {string}")]
async fn no_privileges(w: &mut PveWorld, who: String, path: String) {
    let got = privileges(w, &who, &path).await;
    assert!(got.is_empty(), "{who} has {got:?} on {path}");
}

#[then(expr = "the role {string} has exactly the privileges {string}")]
async fn role_privileges(w: &mut PveWorld, role: String, privs: String) {
    let path = format!("/access/roles/{}", seg(&w.roleid(&role)));
    let admin = w.admin();
    let data = admin
        .get(&path, &Params::new())
        .await
        .unwrap_or_else(|e| panic!("reading role {role}: {e}"));
    let mut got: Vec<String> = data
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    got.sort();
    let mut want: Vec<String> = privs
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    want.sort();
    assert_eq!(got, want, "{data}");
}

#[then(expr = "the privileges in {string} are sorted and joined by commas")]
fn privs_sorted(w: &mut PveWorld, name: String) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let items = o.data.as_array().cloned().unwrap_or_default();
    assert!(!items.is_empty(), "{}", o.data);
    for i in items {
        let privs = field(&i, &name).map(text).unwrap_or_default();
        let list: Vec<&str> = privs.split(',').filter(|s| !s.is_empty()).collect();
        let mut sorted = list.clone();
        sorted.sort_unstable();
        assert_eq!(list, sorted, "{i}");
    }
}
