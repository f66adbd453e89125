//! The typed access-control calls (users, groups, roles, ACLs,
//! permissions, passwords) against an in-process fake-pve, in both
//! authentication modes, every answer checked against the schema's
//! `returns`.

mod common;

use common::{MODES, Mode, checked_client, start};
use pve_client::api::access::{AclEntry, AclType, AclUpdate, UserOptions};
use pve_client::pve_schema::Release;
use pve_client::{Category, Method, Secret};
use serde_json::json;

#[tokio::test]
async fn users_groups_roles_and_acls() {
    for mode in MODES {
        let run = start().await;
        let (pve, checked) = checked_client(&run, mode);
        let access = pve.access();

        // Groups.
        access
            .create_group("ops", Some("Operators"))
            .await
            .expect("create_group");
        let groups = access.list_groups().await.expect("list_groups");
        assert_eq!(groups.len(), 1, "{mode:?}: {groups:?}");
        assert_eq!(groups[0].groupid, "ops");
        assert_eq!(groups[0].comment.as_deref(), Some("Operators"));
        assert!(groups[0].users.is_empty());

        // Users.
        let opts = UserOptions {
            password: Some(Secret::new("alice-secret-1")),
            groups: Some(vec!["ops".into()]),
            email: Some("alice@example.com".into()),
            firstname: Some("Alice".into()),
            comment: Some("on call".into()),
            ..UserOptions::default()
        };
        access
            .create_user("alice@pve", &opts)
            .await
            .expect("create_user");
        let alice = access.read_user("alice@pve").await.expect("read_user");
        assert_eq!(alice.groups, ["ops"]);
        assert_eq!(alice.enable, Some(true));
        assert_eq!(alice.expire, Some(0));
        assert_eq!(alice.email.as_deref(), Some("alice@example.com"));
        assert_eq!(alice.firstname.as_deref(), Some("Alice"));
        assert!(alice.tokens.is_empty());
        let root = access.read_user("root@pam").await.expect("root");
        assert_eq!(
            root.tokens.get("automation").and_then(|t| t.privsep),
            Some(false)
        );

        let all = access.list_users(None, true).await.expect("list_users");
        let a = all
            .iter()
            .find(|u| u.userid == "alice@pve")
            .expect("alice listed");
        assert_eq!(a.groups, ["ops"]);
        assert_eq!(a.realm_type.as_deref(), Some("pve"));
        let r = all.iter().find(|u| u.userid == "root@pam").expect("root");
        assert_eq!(r.tokens.len(), 1);
        assert_eq!(r.tokens[0].tokenid.as_deref(), Some("automation"));
        let members = access.read_group("ops").await.expect("read_group");
        assert_eq!(members.members, ["alice@pve"]);
        assert_eq!(
            access.list_groups().await.expect("groups")[0].users,
            ["alice@pve"]
        );

        let dup = access
            .create_user("alice@pve", &UserOptions::default())
            .await
            .expect_err("exists");
        assert_eq!(
            dup.message(),
            "create user failed: user 'alice@pve' already exists"
        );
        let bad = access
            .create_user("alice", &UserOptions::default())
            .await
            .expect_err("no realm");
        match mode {
            // PVE skips permission checks for root@pam alone, so its
            // parameters are validated.
            Mode::Password => {
                assert_eq!(bad.category(), Category::Validation);
                assert_eq!(
                    bad.param_errors()
                        .and_then(|e| e.get("userid"))
                        .map(String::as_str),
                    Some("invalid format - value 'alice' does not look like a valid user name")
                );
            }
            // Its tokens are checked, and the `userid-param` check dies on
            // the malformed name before validation runs.
            Mode::Token => {
                assert_eq!(bad.category(), Category::Server);
                assert_eq!(
                    bad.message(),
                    "value 'alice' does not look like a valid user name"
                );
            }
        }

        access
            .update_user(
                "alice@pve",
                &UserOptions {
                    enable: Some(false),
                    comment: Some("on leave".into()),
                    ..UserOptions::default()
                },
            )
            .await
            .expect("update_user");
        let alice = access.read_user("alice@pve").await.expect("read_user");
        assert_eq!(alice.enable, Some(false));
        assert_eq!(alice.comment.as_deref(), Some("on leave"));
        let enabled = access.list_users(Some(true), false).await.expect("enabled");
        assert!(
            enabled.iter().all(|u| u.userid != "alice@pve"),
            "{enabled:?}"
        );
        access
            .update_user(
                "alice@pve",
                &UserOptions {
                    enable: Some(true),
                    ..UserOptions::default()
                },
            )
            .await
            .expect("enable again");

        // Roles.
        access
            .create_role("Starter", &["VM.PowerMgmt", "VM.Audit"])
            .await
            .expect("create_role");
        assert_eq!(
            access.read_role("Starter").await.expect("read_role"),
            ["VM.Audit", "VM.PowerMgmt"]
        );
        access
            .update_role("Starter", &["Sys.Audit"], true)
            .await
            .expect("append");
        assert_eq!(
            access.read_role("Starter").await.expect("read_role"),
            ["Sys.Audit", "VM.Audit", "VM.PowerMgmt"]
        );
        let roles = access.list_roles().await.expect("list_roles");
        let starter = roles
            .iter()
            .find(|r| r.roleid == "Starter")
            .expect("listed");
        assert_eq!(starter.special, Some(false));
        assert_eq!(starter.privs.len(), 3);
        let admin = roles
            .iter()
            .find(|r| r.roleid == "PVEAdmin")
            .expect("built in");
        assert_eq!(admin.special, Some(true));
        let pve_ns = access
            .create_role("PVEMine", &[])
            .await
            .expect_err("PVE namespace");
        assert_eq!(
            pve_ns
                .param_errors()
                .and_then(|e| e.get("roleid"))
                .map(String::as_str),
            Some("cannot use role ID starting with the (case-insensitive) 'PVE' namespace")
        );
        let no_priv = access
            .create_role("Other", &["VM.Fly"])
            .await
            .expect_err("unknown privilege");
        assert_eq!(
            no_priv
                .param_errors()
                .and_then(|e| e.get("privs"))
                .map(String::as_str),
            Some("invalid format - invalid privilege 'VM.Fly'")
        );

        // ACLs and the permissions they give.
        let mut grant = AclUpdate::grant("/vms", &["Starter"]);
        grant.groups.push("ops".into());
        access.update_acl(&grant).await.expect("update_acl");
        let acl = access.read_acl().await.expect("read_acl");
        assert_eq!(
            acl,
            [AclEntry {
                path: "/vms".into(),
                kind: AclType::Group,
                ugid: "ops".into(),
                roleid: "Starter".into(),
                propagate: Some(true),
            }]
        );
        let perms = access
            .permissions(Some("alice@pve"), Some("/vms/100"))
            .await
            .expect("permissions");
        let on_vm = &perms["/vms/100"];
        assert_eq!(
            on_vm.keys().collect::<Vec<_>>(),
            ["Sys.Audit", "VM.Audit", "VM.PowerMgmt"]
        );
        assert!(on_vm.values().all(|p| *p), "{on_vm:?}");
        let everywhere = access
            .permissions(Some("alice@pve"), None)
            .await
            .expect("permissions");
        assert!(everywhere.contains_key("/vms"), "{everywhere:?}");

        let nobody = access
            .update_acl(&AclUpdate::grant("/vms", &["Starter"]))
            .await
            .expect_err("no subject");
        assert_eq!(nobody.category(), Category::Validation);
        assert_eq!(
            nobody
                .param_errors()
                .map(|e| e.keys().cloned().collect::<Vec<_>>()),
            Some(vec!["groups".into(), "tokens".into(), "users".into()])
        );
        let mut bad_path = AclUpdate::grant("/nowhere", &["Starter"]);
        bad_path.users.push("alice@pve".into());
        let e = access.update_acl(&bad_path).await.expect_err("bad path");
        assert_eq!(
            e.param_errors()
                .and_then(|e| e.get("path"))
                .map(String::as_str),
            Some("invalid ACL path '/nowhere'")
        );

        // Remove it all again.
        grant.delete = true;
        access.update_acl(&grant).await.expect("remove the entry");
        assert!(access.read_acl().await.expect("read_acl").is_empty());
        access.delete_role("Starter").await.expect("delete_role");
        let gone = access.read_role("Starter").await.expect_err("deleted");
        assert_eq!(gone.message(), "role 'Starter' does not exist");
        access.delete_user("alice@pve").await.expect("delete_user");
        access
            .update_group("ops", Some(""))
            .await
            .expect("update_group");
        let ops = access.read_group("ops").await.expect("read_group");
        assert_eq!(ops.comment, None);
        assert!(ops.members.is_empty(), "{ops:?}");
        access.delete_group("ops").await.expect("delete_group");
        assert!(access.list_groups().await.expect("groups").is_empty());
        let e = access.read_group("ops").await.expect_err("deleted");
        assert_eq!(e.message(), "group 'ops' does not exist");
        assert_eq!(e.category(), Category::NotFound, "{e}");

        // Every call above went through the shape check.
        let names = checked.names();
        for want in [
            "GET index",
            "POST create_user",
            "GET read_user",
            "PUT update_user",
            "DELETE delete_user",
            "POST create_group",
            "GET read_group",
            "PUT update_group",
            "DELETE delete_group",
            "POST create_role",
            "GET read_role",
            "PUT update_role",
            "DELETE delete_role",
            "GET read_acl",
            "PUT update_acl",
            "GET permissions",
        ] {
            assert!(
                names.iter().any(|n| n == want),
                "{mode:?}: {want} not checked in {names:?}"
            );
        }
    }
}

#[tokio::test]
async fn passwords() {
    let run = start().await;
    let (pve, checked) = checked_client(&run, Mode::Password);
    let access = pve.access();
    access
        .change_password("ci@pve", "a-new-password", None)
        .await
        .expect("root changes ci's password");
    assert!(checked.names().contains(&"PUT change_password".to_string()));
    access
        .create_ticket("ci@pve", "a-new-password")
        .await
        .expect("the new password works");
    let old = access
        .create_ticket("ci@pve", "ci-password")
        .await
        .expect_err("the old one does not");
    assert_eq!(old.category(), Category::Authentication);
    let short = access
        .change_password("ci@pve", "short", None)
        .await
        .expect_err("too short");
    assert_eq!(
        short
            .param_errors()
            .and_then(|e| e.get("password"))
            .map(String::as_str),
        Some("value must be at least 8 characters long")
    );

    // ci changes its own password, confirming with the current one.
    let ci = pve_client::Client::new(
        common::base(&run)
            .password("ci@pve", "a-new-password")
            .build()
            .expect("config"),
    )
    .expect("client");
    let unconfirmed = ci
        .access()
        .change_password("ci@pve", "third-password", None)
        .await
        .expect_err("needs confirmation");
    assert_eq!(
        unconfirmed
            .param_errors()
            .and_then(|e| e.get("confirmation-password"))
            .map(String::as_str),
        Some("password is required to modify user")
    );
    ci.access()
        .change_password("ci@pve", "third-password", Some("a-new-password"))
        .await
        .expect("confirmed");
    access
        .create_ticket("ci@pve", "third-password")
        .await
        .expect("changed");
    let root = ci
        .access()
        .change_password("root@pam", "take-over-1", Some("third-password"))
        .await
        .expect_err("not root's");
    assert_eq!(root.category(), Category::Permission, "{root}");

    // Not with an API token.
    let token = common::client(&run, Mode::Token);
    let e = token
        .access()
        .change_password("ci@pve", "fourth-password", None)
        .await
        .expect_err("tickets only");
    assert!(
        e.message()
            .contains("not available with API token, need proper ticket"),
        "{e}"
    );
}

#[test]
fn the_shape_check_can_fail() {
    let get = Method::GET;
    assert!(
        common::shape_problems(
            Release::V9_1,
            &get,
            "/access/users",
            &json!([{"userid": "a@pve"}])
        )
        .is_empty()
    );
    assert_eq!(
        common::shape_problems(
            Release::V9_1,
            &get,
            "/access/users",
            &json!([{"enable": 1}])
        ),
        ["GET /access/users (index): data[0].userid: missing"]
    );
    assert_eq!(
        common::shape_problems(
            Release::V9_1,
            &get,
            "/access/acl",
            &json!([{"path": "/", "type": "user", "ugid": "a@pve", "roleid": "X", "propagate": "yes"}])
        ),
        ["GET /access/acl (read_acl): data[0].propagate: expected boolean, got \"yes\""]
    );
    assert!(!common::shape_problems(Release::V8_4, &get, "/version", &json!("9.1")).is_empty());
    // Paths the schema does not know (fake-pve's control API) pass.
    assert!(common::shape_problems(Release::V9_1, &get, "/_fake/health", &json!(1)).is_empty());
}

#[test]
#[should_panic(expected = "answer does not fit the schema")]
fn the_observer_fails_a_test_on_a_wrong_shape() {
    let observe = common::shape_observer(&common::Checked::default());
    let answer = pve_client::Answer {
        data: json!([{"privs": "VM.Audit"}]),
        ..pve_client::Answer::default()
    };
    observe(&Method::GET, "/access/roles", &answer);
}
