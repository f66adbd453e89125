//! Access control: users, groups, roles, ACLs, tokens, realms and the
//! permissions they give on paths.

use rstest::{fixture, rstest};

use super::{ROOT_PW, T0, World, refused, root, rq, user};
use crate::model::PveVersion;
use crate::model::access::tags::assert_tag_permissions;
use crate::model::access::{Access, AclUpdate, AuthId, GroupsParam, valid_groupid, valid_tokenid};
use crate::model::acl::UgKind;

const ACL: &str = r#"
users:
  - userid: root@pam
    tokens:
      - { tokenid: auto, secret: r1, privsep: false }
      - { tokenid: sep, secret: r2 }
  - userid: alice@pve
    password: pw
    groups: [ops]
    tokens:
      - { tokenid: sep, secret: s1 }
      - { tokenid: full, secret: s2, privsep: false }
      - { tokenid: old, secret: s3, expire: 1 }
  - { userid: bob@pve, password: pw, enable: false }
  - { userid: carol@pve, password: pw, expire: 1 }
  - { userid: dave@pam, password: pw, groups: [ops, dev] }
groups:
  - { groupid: ops, comment: Operators }
  - { groupid: dev }
roles:
  - { roleid: Starter, privs: [VM.PowerMgmt, VM.Audit] }
acl:
  - { path: /vms, roles: [Starter], groups: [ops] }
  - { path: /vms/100, roles: [NoAccess], users: [alice@pve] }
  - { path: /vms/102, roles: [PVEVMAdmin], groups: [dev] }
  - { path: /storage, roles: [PVEDatastoreUser], users: [alice@pve], propagate: false }
  - { path: /vms, roles: [PVEAuditor], tokens: ['alice@pve!sep'] }
  - { path: /access/groups/dev, roles: [PVEUserAdmin], users: [alice@pve] }
"#;

#[fixture]
fn acl() -> World {
    World::from_yaml(ACL)
}

fn a(w: &World) -> &Access {
    &w.c.access
}

// ---------------------------------------------------------------------
// Logins and tokens

#[rstest]
#[case("alice@pve", "pw", None)]
#[case("root@pam", ROOT_PW, None)]
#[case("alice@pve", "wrong", Some((401, "authentication failure")))]
#[case("nobody@pve", "pw", Some((401, "authentication failure")))]
#[case("bob@pve", "pw", Some((401, "authentication failure")))]
#[case("carol@pve", "pw", Some((401, "authentication failure")))]
fn passwords(acl: World, #[case] id: &str, #[case] pw: &str, #[case] want: Option<(u16, &str)>) {
    let r = a(&acl).check_password(id, pw, T0);
    match want {
        None => assert!(r.is_ok(), "{r:?}"),
        Some((code, msg)) => assert_eq!(refused(r), (code, msg.to_string())),
    }
}

#[rstest]
#[case("bob@pve", "user 'bob@pve' is disabled")]
#[case("carol@pve", "user 'carol@pve' access expired")]
#[case("nobody@pve", "no such user ('nobody@pve')")]
fn why_a_user_may_not_log_in(acl: World, #[case] id: &str, #[case] msg: &str) {
    assert_eq!(
        refused(a(&acl).check_user_enabled(id, T0).map(|u| u.userid.clone())),
        (500, msg.to_string())
    );
}

#[rstest]
#[case("alice@pve", "sep", "s1", None)]
#[case("alice@pve", "sep", "bad", Some("invalid token value!"))]
#[case(
    "alice@pve",
    "nope",
    "s1",
    Some("no such token 'nope' for user 'alice@pve'")
)]
#[case("alice@pve", "old", "s3", Some("token 'old' access expired"))]
#[case("bob@pve", "x", "y", Some("user 'bob@pve' is disabled"))]
fn tokens(
    acl: World,
    #[case] u: &str,
    #[case] t: &str,
    #[case] secret: &str,
    #[case] want: Option<&str>,
) {
    let r = a(&acl).check_token(u, t, secret, T0);
    match want {
        None => assert!(r.is_ok(), "{r:?}"),
        Some(msg) => assert_eq!(refused(r), (500, msg.to_string())),
    }
}

#[rstest]
fn creating_a_token_twice_is_a_400(mut acl: World) {
    let (t, secret) = acl
        .c
        .access
        .create_token("alice@pve", "new", true, 0, Some("c".into()), &mut rq())
        .expect("created");
    assert_eq!(secret.len(), 36, "a UUID secret");
    assert!(t.privsep);
    assert_eq!(
        refused(
            acl.c
                .access
                .create_token("alice@pve", "new", true, 0, None, &mut rq())
        ),
        (400, "tokenid: Token already exists.".into())
    );
    assert_eq!(
        refused(
            acl.c
                .access
                .create_token("nobody@pve", "x", true, 0, None, &mut rq())
        ),
        (500, "no such user ('nobody@pve')".into())
    );
}

#[rstest]
fn updating_and_deleting_tokens(mut acl: World) {
    let ac = &mut acl.c.access;
    let t = ac
        .update_token(
            "alice@pve",
            "sep",
            Some(false),
            Some(T0 + 60),
            Some("now".into()),
        )
        .expect("updated");
    assert!(!t.privsep);
    assert_eq!(t.expire, T0 + 60);
    assert_eq!(
        ac.clear_token_comment("alice@pve", "sep")
            .expect("c")
            .comment,
        None
    );
    ac.delete_token("alice@pve", "sep").expect("deleted");
    assert!(
        !ac.acl["/vms"].tokens.contains_key("alice@pve!sep"),
        "its ACL entries go too"
    );
    assert_eq!(
        refused(ac.delete_token("alice@pve", "sep")),
        (500, "no such token 'sep' for user 'alice@pve'".into())
    );
}

#[rstest]
#[case("root@pam", true)]
#[case("root@pam!auto", true)]
#[case("root@pam!sep", false)]
#[case("alice@pve", false)]
#[case("alice@pve!full", false)]
fn superusers(acl: World, #[case] who: &str, #[case] yes: bool) {
    assert_eq!(a(&acl).is_superuser(&user(who)), yes);
}

// ---------------------------------------------------------------------
// Permissions on paths

#[rstest]
#[case("alice@pve", "/vms/101", "VM.PowerMgmt", true)]
#[case("alice@pve", "/vms", "VM.PowerMgmt", true)]
#[case("alice@pve", "/vms/101", "VM.Allocate", false)]
// A user entry overrides the group's; NoAccess wins.
#[case("alice@pve", "/vms/100", "VM.Audit", false)]
// Not propagated: only on /storage itself.
#[case("alice@pve", "/storage", "Datastore.AllocateSpace", true)]
#[case("alice@pve", "/storage/local", "Datastore.AllocateSpace", false)]
#[case("dave@pam", "/vms/100", "VM.PowerMgmt", true)]
// A deeper group entry replaces the upper one.
#[case("dave@pam", "/vms/102", "VM.Allocate", true)]
#[case("alice@pve", "/vms/102", "VM.PowerMgmt", true)]
#[case("alice@pve", "/nodes/pve", "Sys.Audit", false)]
#[case("root@pam", "/nodes/pve", "Sys.Modify", true)]
// A separated token has its own roles, within the user's.
#[case("alice@pve!sep", "/vms/101", "VM.Audit", true)]
#[case("alice@pve!sep", "/vms/101", "VM.PowerMgmt", false)]
#[case("alice@pve!full", "/vms/101", "VM.PowerMgmt", true)]
#[case("root@pam!auto", "/vms/101", "VM.Allocate", true)]
#[case("root@pam!sep", "/vms/101", "VM.Audit", false)]
#[case("bogus", "/", "Sys.Audit", false)]
fn privileges_on_paths(
    acl: World,
    #[case] who: &str,
    #[case] path: &str,
    #[case] p: &str,
    #[case] yes: bool,
) {
    let who = AuthId::parse(who).unwrap_or(AuthId::User(who.into()));
    assert_eq!(a(&acl).has_priv(&who, path, p), yes);
    // The check answers what the whole privilege map holds.
    assert_eq!(a(&acl).privileges(&who, path).contains_key(p), yes);
}

/// `has_priv` (which does not build the privilege map) agrees with
/// `privileges` for every subject, path and privilege of the fixture.
#[rstest]
fn has_priv_agrees_with_the_privilege_map(acl: World) {
    let access = a(&acl);
    let subjects = [
        "root@pam",
        "alice@pve",
        "dave@pam",
        "bogus",
        "alice@pve!sep",
        "alice@pve!full",
        "root@pam!auto",
        "root@pam!sep",
        "alice@pve!none",
    ];
    let paths = [
        "/",
        "/vms",
        "/vms/100",
        "/vms/101",
        "/vms/102",
        "/storage",
        "/storage/local",
        "/nodes/pve",
        "/pool/p1",
        "/access",
    ];
    let privs = crate::model::acl::valid_privs(access.version);
    let mut checked = 0;
    for who in subjects {
        let who = AuthId::parse(who).unwrap_or(AuthId::User(who.into()));
        for path in paths {
            let map = access.privileges(&who, path);
            for p in &privs {
                assert_eq!(
                    access.has_priv(&who, path, p),
                    map.contains_key(*p),
                    "{who} {path} {p}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 1000);
}

#[rstest]
fn check_perm_names_the_first_missing_privilege(acl: World) {
    assert_eq!(
        refused(a(&acl).check_perm(
            &user("alice@pve"),
            "/vms/101",
            &["VM.Audit", "VM.Console", "VM.Monitor"]
        )),
        (403, "Permission check failed (/vms/101, VM.Console)".into())
    );
    assert!(
        a(&acl)
            .check_perm(&user("alice@pve"), "/vms/101", &["VM.Audit"])
            .is_ok()
    );
}

#[rstest]
fn check_any_names_every_alternative(acl: World) {
    assert_eq!(
        refused(a(&acl).check_any(&user("alice@pve"), "/nodes", &["Sys.Audit", "Sys.Modify"])),
        (
            403,
            "Permission check failed (/nodes, Sys.Audit|Sys.Modify)".into()
        )
    );
    assert!(
        a(&acl)
            .check_any(&user("alice@pve"), "/vms/5", &["VM.Allocate", "VM.Audit"])
            .is_ok()
    );
}

#[rstest]
#[case(
    "/vms/101",
    "Permission check failed (/vms/101, Permissions.Modify|VM.Allocate)"
)]
#[case(
    "/storage/local",
    "Permission check failed (/storage/local, Permissions.Modify|Datastore.Allocate)"
)]
#[case(
    "/pool/p1",
    "Permission check failed (/pool/p1, Permissions.Modify|Pool.Allocate)"
)]
#[case("/vms", "Permission check failed (/vms, Permissions.Modify)")]
fn modifying_permissions(acl: World, #[case] path: &str, #[case] msg: &str) {
    assert_eq!(
        refused(a(&acl).check_perm_modify(&user("alice@pve"), path)),
        (403, msg.to_string())
    );
}

#[rstest]
fn a_vm_admin_may_modify_permissions_of_its_vm(acl: World) {
    assert!(
        a(&acl)
            .check_perm_modify(&user("dave@pam"), "/vms/102")
            .is_ok()
    );
}

#[rstest]
fn effective_permissions_leave_out_empty_paths(acl: World) {
    let eff = a(&acl).effective_permissions(&user("alice@pve"));
    assert!(eff.contains_key("/vms"));
    assert!(eff.contains_key("/vms/101") || !a(&acl).acl.contains_key("/vms/101"));
    assert!(!eff.contains_key("/vms/100"), "NoAccess gives nothing");
    assert!(!eff.contains_key("/nodes"));
    assert_eq!(
        eff["/storage"].get("Datastore.AllocateSpace"),
        Some(&false),
        "not propagated"
    );
    assert_eq!(eff["/vms"].get("VM.PowerMgmt"), Some(&true), "propagated");
}

#[rstest]
fn permission_paths_include_the_tree_and_the_top_levels(acl: World) {
    let paths = a(&acl).permission_paths();
    for p in [
        "/",
        "/access",
        "/access/groups",
        "/access/groups/dev",
        "/vms/100",
        "/vms/102",
        "/storage",
    ] {
        assert!(paths.contains(p), "{p}: {paths:?}");
    }
}

#[rstest]
#[case("alice@pve", "dave@pam", true)]
#[case("alice@pve", "alice@pve", false)]
#[case("alice@pve", "nobody@pve", false)]
fn group_admins_reach_members_of_their_groups(
    acl: World,
    #[case] who: &str,
    #[case] target: &str,
    #[case] yes: bool,
) {
    assert_eq!(
        a(&acl).userid_group_allowed(&user(who), target, &["User.Modify"]),
        yes
    );
}

#[rstest]
fn creating_a_user_in_an_unreachable_group_is_refused(acl: World) {
    let r = a(&acl).check_userid_group(
        &user("alice@pve"),
        "new@pve",
        &["User.Modify"],
        GroupsParam::Create,
        &["ops".to_string()],
    );
    assert_eq!(
        refused(r),
        (
            403,
            "Permission check failed (/access/groups/ops, User.Modify)".into()
        )
    );
    let r = a(&acl).check_userid_group(
        &user("alice@pve"),
        "new@pve",
        &["User.Modify"],
        GroupsParam::Create,
        &[],
    );
    assert_eq!(
        refused(r),
        (
            403,
            "Permission check failed (/access/groups, User.Modify)".into()
        )
    );
    let ok = a(&acl).check_userid_group(
        &user("alice@pve"),
        "new@pve",
        &["User.Modify"],
        GroupsParam::Create,
        &["dev".to_string()],
    );
    assert!(ok.expect("allowed"));
}

// ---------------------------------------------------------------------
// ACL updates

fn upd<'a>(
    roles: &'a [String],
    users: &'a [String],
    groups: &'a [String],
    tokens: &'a [String],
    delete: bool,
) -> AclUpdate<'a> {
    AclUpdate {
        roles,
        users,
        groups,
        tokens,
        propagate: true,
        delete,
    }
}

fn v(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| (*x).to_string()).collect()
}

#[rstest]
#[case(&["Nope"], &["alice@pve"], &[], &[], "role 'Nope' does not exist")]
#[case(&["PVEAuditor"], &["ghost@pve"], &[], &[], "user 'ghost@pve' does not exist")]
#[case(&["PVEAuditor"], &[], &["ghosts"], &[], "group 'ghosts' does not exist")]
#[case(&["PVEAuditor"], &[], &[], &["alice@pve"], "'alice@pve' is not a valid token ID - not able to split into user and token parts")]
#[case(&["PVEAuditor"], &[], &[], &["alice@pve!ghost"], "no such token 'ghost' for user 'alice@pve'")]
fn acl_update_refusals(
    mut acl: World,
    #[case] roles: &[&str],
    #[case] users: &[&str],
    #[case] groups: &[&str],
    #[case] tokens: &[&str],
    #[case] msg: &str,
) {
    let (r, u, g, t) = (v(roles), v(users), v(groups), v(tokens));
    let before = acl.c.access.acl.len();
    assert_eq!(
        refused(
            acl.c
                .access
                .update_acl("/nodes", &upd(&r, &u, &g, &t, false))
        ),
        (500, msg.to_string())
    );
    assert_eq!(acl.c.access.acl.len(), before);
}

#[rstest]
fn root_pam_is_never_written_to_the_acl(mut acl: World) {
    let (r, u) = (v(&["PVEAuditor"]), v(&["root@pam"]));
    acl.c
        .access
        .update_acl("/nodes", &upd(&r, &u, &[], &[], false))
        .expect("accepted");
    assert!(!acl.c.access.acl.contains_key("/nodes"));
}

#[rstest]
fn deleting_the_last_role_removes_the_path(mut acl: World) {
    let (r, u) = (v(&["PVEDatastoreUser"]), v(&["alice@pve"]));
    acl.c
        .access
        .update_acl("/storage", &upd(&r, &u, &[], &[], true))
        .expect("deleted");
    assert!(!acl.c.access.acl.contains_key("/storage"));
    let entries = acl.c.access.acl_entries();
    assert!(entries.iter().all(|(p, ..)| p != "/storage"));
}

#[rstest]
fn acl_entries_are_listed_depth_first_users_then_groups_then_tokens(acl: World) {
    let e = a(&acl).acl_entries();
    let at_vms: Vec<(UgKind, String)> = e
        .iter()
        .filter(|(p, ..)| p == "/vms")
        .map(|(_, k, id, ..)| (*k, id.clone()))
        .collect();
    assert_eq!(
        at_vms,
        [
            (UgKind::Group, "ops".to_string()),
            (UgKind::Token, "alice@pve!sep".to_string())
        ]
    );
    let paths: Vec<&str> = e.iter().map(|(p, ..)| p.as_str()).collect();
    let first_vms = paths.iter().position(|p| *p == "/vms").expect("vms");
    let vm100 = paths.iter().position(|p| *p == "/vms/100").expect("vm100");
    assert!(first_vms < vm100, "{paths:?}");
}

// ---------------------------------------------------------------------
// Roles, groups, users

#[rstest]
#[case("PVEAdmin", "create role failed: role 'PVEAdmin' already exists")]
#[case("Starter", "create role failed: role 'Starter' already exists")]
fn creating_an_existing_role(mut acl: World, #[case] id: &str, #[case] msg: &str) {
    assert_eq!(
        refused(acl.c.access.create_role(id, &[])),
        (500, msg.to_string())
    );
}

#[rstest]
fn a_role_with_an_unknown_privilege_is_refused(mut acl: World) {
    assert_eq!(
        refused(acl.c.access.create_role("R", &v(&["VM.Fly"]))),
        (500, "create role failed: invalid privilege 'VM.Fly'".into())
    );
    assert!(acl.c.access.role_privs("R").is_none());
}

#[rstest]
fn updating_a_role_appends_or_replaces(mut acl: World) {
    let ac = &mut acl.c.access;
    ac.update_role("Starter", &v(&["VM.Console"]), true)
        .expect("appended");
    assert_eq!(ac.role_privs("Starter").expect("r").len(), 3);
    ac.update_role("Starter", &v(&["VM.Console"]), false)
        .expect("replaced");
    assert_eq!(
        ac.role_privs("Starter")
            .expect("r")
            .into_iter()
            .collect::<Vec<_>>(),
        ["VM.Console"]
    );
}

#[rstest]
#[case(
    "PVEAuditor",
    "auto-generated role 'PVEAuditor' cannot be modified",
    "auto-generated role 'PVEAuditor' cannot be deleted"
)]
#[case(
    "Ghost",
    "update role failed: role 'Ghost' does not exist",
    "delete role failed: role 'Ghost' does not exist"
)]
fn built_in_and_missing_roles(
    mut acl: World,
    #[case] id: &str,
    #[case] upd_msg: &str,
    #[case] del_msg: &str,
) {
    assert_eq!(
        refused(acl.c.access.update_role(id, &[], true)),
        (500, upd_msg.to_string())
    );
    assert_eq!(
        refused(acl.c.access.delete_role(id)),
        (500, del_msg.to_string())
    );
}

#[rstest]
fn deleting_a_role_removes_it_from_the_acl(mut acl: World) {
    acl.c.access.delete_role("Starter").expect("deleted");
    assert!(!a(&acl).has_priv(&user("dave@pam"), "/vms/100", "VM.PowerMgmt"));
    assert!(!acl.c.access.acl["/vms"].groups.contains_key("ops"));
}

#[rstest]
fn groups_create_and_delete(mut acl: World) {
    let ac = &mut acl.c.access;
    assert_eq!(
        refused(ac.create_group("ops", None)),
        (
            500,
            "create group failed: group 'ops' already exists".into()
        )
    );
    ac.delete_group("ops").expect("deleted");
    assert!(
        !ac.acl["/vms"].groups.contains_key("ops"),
        "its ACL entries go too"
    );
    assert_eq!(
        refused(ac.delete_group("ops")),
        (
            500,
            "delete group failed: group 'ops' does not exist".into()
        )
    );
}

#[rstest]
fn setting_groups_checks_them_all_first(mut acl: World) {
    let ac = &mut acl.c.access;
    assert_eq!(
        refused(ac.set_user_groups("dave@pam", &v(&["ops", "ghosts"]), true)),
        (500, "no such group 'ghosts'".into())
    );
    assert_eq!(ac.user_groups("dave@pam"), ["dev", "ops"], "unchanged");
    ac.set_user_groups("dave@pam", &v(&["ops"]), true)
        .expect("replaced");
    assert_eq!(ac.user_groups("dave@pam"), ["ops"]);
    ac.set_user_groups("dave@pam", &v(&["dev"]), false)
        .expect("appended");
    assert_eq!(ac.user_groups("dave@pam"), ["dev", "ops"]);
}

#[rstest]
fn deleting_a_user_removes_memberships_tokens_and_acl(mut acl: World) {
    acl.c.access.delete_user("alice@pve");
    let ac = a(&acl);
    assert!(!ac.user_exists("alice@pve"));
    assert!(!ac.groups["ops"].members.contains("alice@pve"));
    assert!(!ac.acl.contains_key("/vms/100"));
    assert!(!ac.acl["/vms"].tokens.contains_key("alice@pve!sep"));
    assert_eq!(
        refused(ac.token("alice@pve", "sep").map(|t| t.tokenid.clone())),
        (500, "no such user ('alice@pve')".into())
    );
}

#[rstest]
#[case("ops", true)]
#[case("a.b-c_d", true)]
#[case("a b", false)]
#[case("", false)]
fn group_ids(#[case] id: &str, #[case] ok: bool) {
    assert_eq!(valid_groupid(id), ok);
}

#[rstest]
#[case("runner", true)]
#[case("r-1_2.x", true)]
#[case("1runner", false)]
#[case("has space", false)]
fn token_ids(#[case] id: &str, #[case] ok: bool) {
    assert_eq!(valid_tokenid(id), ok);
}

#[rstest]
#[case("alice@pve!sep", Some(("alice@pve", true)))]
#[case("alice@pve", Some(("alice@pve", false)))]
#[case("alice", None)]
fn auth_ids(#[case] s: &str, #[case] want: Option<(&str, bool)>) {
    let got = AuthId::parse(s).map(|a| (a.userid().to_string(), a.is_token()));
    assert_eq!(got, want.map(|(u, t)| (u.to_string(), t)));
}

#[rstest]
fn root_has_every_privilege_of_the_release(acl: World) {
    let all = a(&acl).privileges(&root(), "/");
    assert!(all.values().all(|p| *p));
    assert_eq!(
        all.len(),
        crate::model::acl::valid_privs(acl.c.version).len()
    );
}

#[rstest]
fn a_separated_token_ands_the_propagate_flags(mut acl: World) {
    // The token's own entry on /storage propagates; alice's does not.
    let (r, t) = (v(&["PVEDatastoreUser"]), v(&["alice@pve!sep"]));
    acl.c
        .access
        .update_acl("/storage", &upd(&r, &[], &[], &t, false))
        .expect("granted");
    let eff = acl.c.access.privileges(&user("alice@pve!sep"), "/storage");
    assert_eq!(eff.get("Datastore.AllocateSpace"), Some(&false));
    assert!(
        !acl.c
            .access
            .has_priv(&user("alice@pve!sep"), "/storage/local", "Datastore.Audit")
    );
}

#[rstest]
fn a_separated_root_token_gets_exactly_its_own_acl(mut acl: World) {
    let (r, t) = (v(&["PVEAuditor"]), v(&["root@pam!sep"]));
    acl.c
        .access
        .update_acl("/vms", &upd(&r, &[], &[], &t, false))
        .expect("granted");
    let tok = user("root@pam!sep");
    assert!(acl.c.access.has_priv(&tok, "/vms/100", "VM.Audit"));
    assert!(!acl.c.access.has_priv(&tok, "/vms/100", "VM.PowerMgmt"));
    assert!(!acl.c.access.has_priv(&tok, "/nodes", "Sys.Audit"));
}

#[rstest]
fn an_unknown_token_has_no_privileges(acl: World) {
    assert!(
        a(&acl)
            .privileges(&user("alice@pve!ghost"), "/vms")
            .is_empty()
    );
}

#[rstest]
#[case(PveVersion::V8_4, "VM.Monitor", true)]
#[case(PveVersion::V9_1, "VM.Monitor", false)]
#[case(PveVersion::V8_4, "VM.GuestAgent.Audit", false)]
#[case(PveVersion::V9_1, "VM.GuestAgent.Audit", true)]
fn pveauditor_and_vmadmin_per_release(
    #[case] version: PveVersion,
    #[case] privilege: &str,
    #[case] in_vmadmin: bool,
) {
    let w = World::from_yaml_v("", version);
    let admin = w.c.access.role_privs("PVEVMAdmin").expect("built in");
    assert_eq!(admin.contains(privilege), in_vmadmin);
    let auditor = w.c.access.role_privs("PVEAuditor").expect("built in");
    assert_eq!(auditor.contains("VM.GuestAgent.Audit"), version.is_v9());
}

/// A world whose `datacenter.cfg` registers `prod` and lets users set
/// only `user-allow` tags; ci@pve administers VM 100 and container 200,
/// audits VM 101 (tagged `db`).
fn tag_world(user_allow: &str) -> World {
    World::from_yaml(&format!(
        r#"
datacenter:
  registered-tags: [prod]
  user-tag-access: {{ user-allow: {user_allow}, user-allow-list: [web] }}
users:
  - {{ userid: ci@pve, password: pw }}
  - {{ userid: ops@pve, password: pw }}
acl:
  - {{ path: /vms/100, roles: [PVEVMAdmin], users: [ci@pve] }}
  - {{ path: /vms/200, roles: [PVEVMAdmin], users: [ci@pve] }}
  - {{ path: /vms/101, roles: [PVEAuditor], users: [ci@pve] }}
  - {{ path: /, roles: [Administrator], users: [ops@pve] }}
vms:
  - {{ vmid: 100, config: {{ tags: old }} }}
  - {{ vmid: 101, config: {{ tags: db }} }}
containers:
  - {{ vmid: 200, config: {{ rootfs: 'local-lvm:vm-200-disk-0,size=1G' }} }}
"#
    ))
}

#[rstest]
#[case::free_any_tag("free", "anything", None)]
#[case::free_but_not_registered("free", "prod", Some("prod"))]
#[case::list_allows_the_list("list", "web", None)]
#[case::list_refuses_others("list", "db", Some("db"))]
#[case::existing_allows_audited_tags("existing", "db", None)]
#[case::existing_refuses_new_ones("existing", "new", Some("new"))]
#[case::none_refuses_the_list("none", "web", Some("web"))]
fn tags_need_what_datacenter_cfg_says(
    #[case] allow: &str,
    #[case] tag: &str,
    #[case] refused_tag: Option<&str>,
) {
    let w = tag_world(allow);
    let ci = user("ci@pve");
    for vmid in [100, 200] {
        let old = if vmid == 100 { Some("old") } else { None };
        let new = match old {
            // Keeping a tag one may not set is fine; adding one is not.
            Some(o) => format!("{o};{tag}"),
            None => tag.to_string(),
        };
        let r = assert_tag_permissions(&w.c.access, &w.c.guests, &ci, vmid, old, Some(&new));
        match refused_tag {
            None => assert!(r.is_ok(), "{vmid} {tag}: {r:?}"),
            Some(t) => assert_eq!(
                refused(r),
                (
                    403,
                    format!("Permission check failed (/, Sys.Modify for modifying tag '{t}')")
                )
            ),
        }
    }
    // Sys.Modify on / sets any tag, registered ones too.
    assert!(
        assert_tag_permissions(
            &w.c.access,
            &w.c.guests,
            &user("ops@pve"),
            100,
            None,
            Some("prod;x")
        )
        .is_ok()
    );
}

#[rstest]
fn tags_need_vm_config_options_first() {
    let w = tag_world("free");
    assert_eq!(
        refused(assert_tag_permissions(
            &w.c.access,
            &w.c.guests,
            &user("ci@pve"),
            101,
            Some("db"),
            Some("")
        )),
        (
            403,
            "Permission check failed (/vms/101, VM.Config.Options)".into()
        )
    );
    // Removing a tag counts as changing it.
    let w = tag_world("none");
    assert_eq!(
        refused(assert_tag_permissions(
            &w.c.access,
            &w.c.guests,
            &user("ci@pve"),
            100,
            Some("old"),
            Some("")
        ))
        .1,
        "Permission check failed (/, Sys.Modify for modifying tag 'old')"
    );
    assert!(
        assert_tag_permissions(
            &w.c.access,
            &w.c.guests,
            &user("ci@pve"),
            100,
            Some("old"),
            Some("old")
        )
        .is_ok()
    );
}
