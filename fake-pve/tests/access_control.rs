//! Users, groups, roles, ACLs and privilege-separated tokens over a real
//! socket, with PVE's answers and messages (pve-access-control
//! `API2/User.pm`, `Group.pm`, `Role.pm`, `ACL.pm`, `AccessControl.pm`).

mod common;

use common::{Auth, Pve, start, start_scenario, start_version};
use fake_pve::PveVersion;
use serde_json::{Value, json};

const SCENARIO: &str = r"
users:
  - userid: audit@pve
    password: auditpass
    tokens:
      - { tokenid: mon, secret: 11111111-2222-3333-4444-555555555555, privsep: true }
      - { tokenid: full, secret: 66666666-2222-3333-4444-555555555555, privsep: false }
  - userid: op@pve
    password: operator1
    groups: [ops]
  - userid: root@pam
    tokens:
      - { tokenid: sep, secret: 77777777-2222-3333-4444-555555555555, privsep: true }
groups:
  - { groupid: ops, comment: Operators }
roles:
  - { roleid: Starter, privs: [VM.PowerMgmt, VM.Audit] }
acl:
  - { path: /, roles: [PVEAuditor], users: [audit@pve] }
  - { path: /nodes, roles: [PVEAuditor], tokens: ['audit@pve!mon'] }
  - { path: /vms, roles: [Starter], groups: [ops] }
  - { path: /storage, roles: [PVEDatastoreUser], tokens: ['root@pam!sep'] }
";

fn token(id: &str, secret: &str) -> Auth {
    Auth::Token(format!("PVEAPIToken={id}={secret}"))
}

fn mon() -> Auth {
    token("audit@pve!mon", "11111111-2222-3333-4444-555555555555")
}

async fn lab() -> (Pve, Auth) {
    let pve = start_scenario(SCENARIO).await;
    let root = pve.root().await;
    (pve, root)
}

#[tokio::test]
async fn privsep_token_sees_exactly_its_acls() {
    let (pve, _) = lab().await;
    // PVEAuditor on /nodes (and the user's PVEAuditor on /) lets it read.
    let st = pve.get("/nodes/pve/status", &mon()).await;
    assert_eq!(st.status, 200, "{st:?}");
    // It has nothing on /, so startall is refused there.
    pve.post("/nodes/pve/startall", &mon(), "")
        .await
        .assert_error(403, "Permission check failed (/, VM.PowerMgmt)\n");
    // /cluster/status needs Sys.Audit on /: the user has it, the token not.
    pve.get("/cluster/status", &mon())
        .await
        .assert_error(403, "Permission check failed (/, Sys.Audit)\n");
    let full = token("audit@pve!full", "66666666-2222-3333-4444-555555555555");
    assert_eq!(pve.get("/cluster/status", &full).await.status, 200);
}

#[tokio::test]
async fn permissions_answers() {
    let (pve, root) = lab().await;
    let me = pve.get("/access/permissions", &mon()).await.data();
    // Intersection with the user (PVEAuditor on / propagated) on /nodes.
    assert_eq!(
        me,
        json!({ "/nodes": {
            "Datastore.Audit": 1, "Mapping.Audit": 1, "Pool.Audit": 1, "SDN.Audit": 1,
            "Sys.Audit": 1, "VM.Audit": 1, "VM.GuestAgent.Audit": 1
        }})
    );
    let op = pve
        .get("/access/permissions?userid=op@pve&path=/vms/100", &root)
        .await
        .data();
    assert_eq!(
        op,
        json!({ "/vms/100": { "VM.Audit": 1, "VM.PowerMgmt": 1 } })
    );
    let nothing = pve
        .get("/access/permissions?userid=op@pve&path=/nodes", &root)
        .await
        .data();
    assert_eq!(nothing, json!({ "/nodes": {} }));
    // A user may ask about its own tokens but not about others.
    let audit = pve.login_as("audit@pve", "auditpass").await;
    let own = pve
        .get("/access/permissions?userid=audit@pve!mon", &audit)
        .await
        .data();
    assert_eq!(own, me);
    pve.get("/access/permissions?userid=op@pve", &mon())
        .await
        .assert_error(403, "Permission check failed (/access, Sys.Audit)\n");
    // root@pam's privsep token gets exactly its own ACLs.
    let sep = token("root@pam!sep", "77777777-2222-3333-4444-555555555555");
    let r = pve.get("/access/permissions", &sep).await.data();
    assert_eq!(
        r,
        json!({ "/storage": { "Datastore.AllocateSpace": 1, "Datastore.Audit": 1 } })
    );
    let all = pve.get("/access/permissions?path=/", &root).await.data();
    assert_eq!(all["/"].as_object().map(serde_json::Map::len), Some(47));
}

#[tokio::test]
async fn login_cap_follows_privileges() {
    let (pve, _) = lab().await;
    let d = pve
        .post(
            "/access/ticket",
            &Auth::None,
            "username=op@pve&password=operator1",
        )
        .await
        .data();
    assert_eq!(d["cap"]["vms"], json!({ "VM.Audit": 1, "VM.PowerMgmt": 1 }));
    assert_eq!(d["cap"]["nodes"], json!({}));
    let d = pve
        .post(
            "/access/ticket",
            &Auth::None,
            "username=audit@pve&password=auditpass",
        )
        .await
        .data();
    assert_eq!(d["cap"]["dc"], json!({ "SDN.Audit": 1, "Sys.Audit": 1 }));
    assert_eq!(d["cap"]["access"], json!({}));
}

#[tokio::test]
async fn user_crud() {
    let (pve, root) = lab().await;
    let r = pve
        .post(
            "/access/users",
            &root,
            "userid=bob@pve&password=bobsecret&comment=Bob&groups=ops&expire=0",
        )
        .await;
    assert_eq!(r.data(), Value::Null);
    pve.post("/access/users", &root, "userid=bob@pve")
        .await
        .assert_error(500, "create user failed: user 'bob@pve' already exists\n");
    pve.post("/access/users", &root, "userid=eve@pve&groups=nope")
        .await
        .assert_error(500, "create user failed: no such group 'nope'\n");
    pve.post("/access/users", &root, "userid=eve@pve&password=short")
        .await
        .assert_param_error("password", "value must be at least 8 characters long");
    let bob = pve.get("/access/users/bob@pve", &root).await.data();
    assert_eq!(
        bob,
        json!({ "enable": 1, "expire": 0, "comment": "Bob", "email": "",
                "groups": ["ops"], "tokens": null })
    );
    pve.put("/access/users/bob@pve", &root, "append=1")
        .await
        .assert_param_error("groups", "missing property required by 'append'");
    assert_eq!(
        pve.put("/access/users/bob@pve", &root, "groups=&enable=0")
            .await
            .data(),
        Value::Null
    );
    let list = pve.get("/access/users?full=1", &root).await.data();
    let b = list
        .as_array()
        .and_then(|l| l.iter().find(|u| u["userid"] == "bob@pve"))
        .cloned()
        .expect("bob listed");
    assert_eq!(b["groups"], "");
    assert_eq!(b["enable"], 0);
    assert_eq!(b["realm-type"], "pve");
    let audit = list
        .as_array()
        .and_then(|l| l.iter().find(|u| u["userid"] == "audit@pve"))
        .cloned()
        .expect("audit listed");
    assert_eq!(audit["tokens"][0]["tokenid"], "full");
    let enabled = pve.get("/access/users?enabled=1", &root).await.data();
    assert!(
        enabled
            .as_array()
            .is_some_and(|l| l.iter().all(|u| u["userid"] != "bob@pve"))
    );
    assert_eq!(
        pve.delete("/access/users/bob@pve", &root).await.data(),
        Value::Null
    );
    pve.get("/access/users/bob@pve", &root)
        .await
        .assert_error(500, "no such user ('bob@pve')\n");
    pve.put("/access/users/bob@pve", &root, "comment=x")
        .await
        .assert_error(500, "update user failed: no such user ('bob@pve')\n");
}

#[tokio::test]
async fn user_list_and_reads_follow_privileges() {
    let (pve, _) = lab().await;
    let op = pve.login_as("op@pve", "operator1").await;
    let list = pve.get("/access/users", &op).await.data();
    let ids: Vec<&str> = list
        .as_array()
        .map(|l| l.iter().filter_map(|u| u["userid"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(ids, ["op@pve"]);
    pve.get("/access/users/audit@pve", &op)
        .await
        .assert_error(403, "Permission check failed\n");
    pve.post("/access/users", &op, "userid=x@pve")
        .await
        .assert_error(
            403,
            "Permission check failed (/access/realm/pve, Realm.AllocateUser)\n",
        );
    // The auditor holds Sys.Audit on /access/groups (propagated from /).
    let audit = pve.login_as("audit@pve", "auditpass").await;
    assert_eq!(
        pve.get("/access/users/op@pve", &audit).await.data()["groups"],
        json!(["ops"])
    );
}

#[tokio::test]
async fn group_crud() {
    let (pve, root) = lab().await;
    assert_eq!(
        pve.post("/access/groups", &root, "groupid=dev&comment=Developers")
            .await
            .data(),
        Value::Null
    );
    pve.post("/access/groups", &root, "groupid=dev")
        .await
        .assert_error(500, "create group failed: group 'dev' already exists\n");
    let list = pve.get("/access/groups", &root).await.data();
    assert_eq!(
        list,
        json!([
            { "groupid": "dev", "comment": "Developers", "users": "" },
            { "groupid": "ops", "comment": "Operators", "users": "op@pve" }
        ])
    );
    assert_eq!(
        pve.get("/access/groups/ops", &root).await.data(),
        json!({ "members": ["op@pve"], "comment": "Operators" })
    );
    pve.put("/access/groups/dev", &root, "comment=Devs")
        .await
        .data();
    assert_eq!(
        pve.get("/access/groups/dev", &root).await.data()["comment"],
        "Devs"
    );
    pve.get("/access/groups/nope", &root)
        .await
        .assert_error(500, "group 'nope' does not exist\n");
    pve.put("/access/groups/nope", &root, "comment=x")
        .await
        .assert_error(500, "update group failed: group 'nope' does not exist\n");
    let op = pve.login_as("op@pve", "operator1").await;
    pve.post("/access/groups", &op, "groupid=x")
        .await
        .assert_error(
            403,
            "Permission check failed (/access/groups, Group.Allocate)\n",
        );
    pve.get("/access/groups/ops", &op).await.assert_error(
        403,
        "Permission check failed (/access/groups, Sys.Audit|Group.Allocate)\n",
    );
    assert_eq!(pve.get("/access/groups", &op).await.data(), json!([]));
    // Deleting a group drops its ACL entries.
    pve.delete("/access/groups/ops", &root).await.data();
    pve.delete("/access/groups/ops", &root)
        .await
        .assert_error(500, "delete group failed: group 'ops' does not exist\n");
    let acl = pve.get("/access/acl", &root).await.data();
    assert!(
        acl.as_array()
            .is_some_and(|l| l.iter().all(|e| e["ugid"] != "ops"))
    );
}

#[tokio::test]
async fn role_crud() {
    let (pve, root) = lab().await;
    let roles = pve.get("/access/roles", &root).await.data();
    let find = |roles: &Value, id: &str| {
        roles
            .as_array()
            .and_then(|l| l.iter().find(|r| r["roleid"] == id))
            .cloned()
    };
    assert_eq!(
        find(&roles, "PVEVMUser"),
        Some(json!({
            "roleid": "PVEVMUser", "special": 1,
            "privs": "VM.Audit,VM.Backup,VM.Config.CDROM,VM.Config.Cloudinit,VM.Console,VM.GuestAgent.Audit,VM.GuestAgent.FileRead,VM.GuestAgent.FileSystemMgmt,VM.GuestAgent.FileWrite,VM.PowerMgmt"
        }))
    );
    assert_eq!(
        find(&roles, "Starter"),
        Some(json!({ "roleid": "Starter", "special": 0, "privs": "VM.Audit,VM.PowerMgmt" }))
    );
    pve.post("/access/roles", &root, "roleid=PVEMine")
        .await
        .assert_param_error(
            "roleid",
            "cannot use role ID starting with the (case-insensitive) 'PVE' namespace",
        );
    pve.post("/access/roles", &root, "roleid=Mine&privs=VM.Monitor")
        .await
        .assert_param_error("privs", "invalid format - invalid privilege 'VM.Monitor'\n");
    pve.post("/access/roles", &root, "roleid=Mine&privs=VM.Audit")
        .await
        .data();
    pve.post("/access/roles", &root, "roleid=Mine")
        .await
        .assert_error(500, "create role failed: role 'Mine' already exists\n");
    pve.put("/access/roles/Mine", &root, "privs=Sys.Audit&append=1")
        .await
        .data();
    assert_eq!(
        pve.get("/access/roles/Mine", &root).await.data(),
        json!({ "Sys.Audit": 1, "VM.Audit": 1 })
    );
    pve.put("/access/roles/PVEAuditor", &root, "privs=Sys.Audit")
        .await
        .assert_error(500, "auto-generated role 'PVEAuditor' cannot be modified\n");
    pve.delete("/access/roles/NoAccess", &root)
        .await
        .assert_error(500, "auto-generated role 'NoAccess' cannot be deleted\n");
    pve.delete("/access/roles/Mine", &root).await.data();
    pve.get("/access/roles/Mine", &root)
        .await
        .assert_error(500, "role 'Mine' does not exist\n");
    let op = pve.login_as("op@pve", "operator1").await;
    pve.post("/access/roles", &op, "roleid=X")
        .await
        .assert_error(403, "Permission check failed (/access, Sys.Modify)\n");
}

#[tokio::test]
async fn roles_differ_per_release() {
    let pve = start_version(PveVersion::V8_4).await;
    let root = pve.root().await;
    let d = pve.get("/access/roles/PVEVMAdmin", &root).await.data();
    assert_eq!(d["VM.Monitor"], 1);
    assert_eq!(d["VM.Replicate"], Value::Null);
    assert_eq!(d.as_object().map(serde_json::Map::len), Some(18));
}

#[tokio::test]
async fn acl_crud() {
    let (pve, root) = lab().await;
    let r = pve
        .put(
            "/access/acl",
            &root,
            "path=/vms/100&roles=PVEVMUser&users=op@pve&propagate=0",
        )
        .await;
    assert_eq!(r.data(), Value::Null);
    let acl = pve.get("/access/acl", &root).await.data();
    assert_eq!(
        acl,
        json!([
            { "path": "/", "type": "user", "ugid": "audit@pve", "roleid": "PVEAuditor", "propagate": 1 },
            { "path": "/nodes", "type": "token", "ugid": "audit@pve!mon", "roleid": "PVEAuditor", "propagate": 1 },
            { "path": "/storage", "type": "token", "ugid": "root@pam!sep", "roleid": "PVEDatastoreUser", "propagate": 1 },
            { "path": "/vms", "type": "group", "ugid": "ops", "roleid": "Starter", "propagate": 1 },
            { "path": "/vms/100", "type": "user", "ugid": "op@pve", "roleid": "PVEVMUser", "propagate": 0 }
        ])
    );
    // The user entry on /vms/100 replaces the group's inherited role there.
    let p = pve
        .get("/access/permissions?userid=op@pve&path=/vms/100", &root)
        .await
        .data();
    assert_eq!(p["/vms/100"]["VM.Console"], 0);
    assert_eq!(p["/vms/100"]["VM.PowerMgmt"], 0);
    pve.put("/access/acl", &root, "path=/vms/100&roles=PVEVMUser")
        .await
        .assert_param_error("users", "either 'users', 'groups' or 'tokens' is required.");
    pve.put(
        "/access/acl",
        &root,
        "path=/nowhere&roles=PVEVMUser&users=op@pve",
    )
    .await
    .assert_param_error("path", "invalid ACL path '/nowhere'");
    pve.put("/access/acl", &root, "path=/vms&roles=Nope&users=op@pve")
        .await
        .assert_error(500, "ACL update failed: role 'Nope' does not exist\n");
    pve.put("/access/acl", &root, "path=/vms&roles=NoAccess&groups=nope")
        .await
        .assert_error(500, "ACL update failed: group 'nope' does not exist\n");
    pve.put(
        "/access/acl",
        &root,
        "path=/vms&roles=NoAccess&users=nope@pve",
    )
    .await
    .assert_error(500, "ACL update failed: user 'nope@pve' does not exist\n");
    pve.put(
        "/access/acl",
        &root,
        "path=/vms/100&roles=PVEVMUser&users=op@pve&delete=1",
    )
    .await
    .data();
    // NoAccess on a deeper level takes everything away.
    pve.put(
        "/access/acl",
        &root,
        "path=/vms/101&roles=NoAccess&groups=ops",
    )
    .await
    .data();
    let p = pve
        .get("/access/permissions?userid=op@pve&path=/vms/101", &root)
        .await
        .data();
    assert_eq!(p, json!({ "/vms/101": {} }));
    // Without Permissions.Modify there, op may not hand out roles.
    let op = pve.login_as("op@pve", "operator1").await;
    pve.put(
        "/access/acl",
        &op,
        "path=/vms/100&roles=PVEVMUser&users=op@pve",
    )
    .await
    .assert_error(
        403,
        "Permission check failed (/vms/100, Permissions.Modify|VM.Allocate)\n",
    );
    // op sees only entries on paths it may modify: none.
    assert_eq!(pve.get("/access/acl", &op).await.data(), json!([]));
}

#[tokio::test]
async fn acl_for_a_privsep_token_changes_what_it_may_do() {
    let (pve, root) = lab().await;
    pve.put(
        "/access/acl",
        &root,
        "path=/&roles=PVEVMUser&tokens=audit@pve!mon",
    )
    .await
    .data();
    // The user (PVEAuditor) lacks VM.PowerMgmt, so the intersection does too.
    pve.post("/nodes/pve/startall", &mon(), "")
        .await
        .assert_error(403, "Permission check failed (/, VM.PowerMgmt)\n");
    pve.put(
        "/access/acl",
        &root,
        "path=/&roles=PVEVMAdmin&users=audit@pve",
    )
    .await
    .data();
    let r = pve.post("/nodes/pve/startall", &mon(), "").await;
    assert_eq!(r.status, 200, "{r:?}");
    // Deleting the token drops its ACL entries.
    pve.delete("/access/users/audit@pve/token/mon", &root)
        .await
        .data();
    let acl = pve.get("/access/acl", &root).await.data();
    assert!(
        acl.as_array()
            .is_some_and(|l| l.iter().all(|e| e["ugid"] != "audit@pve!mon"))
    );
}

#[tokio::test]
async fn password_change() {
    let (pve, root) = lab().await;
    let op = pve.login_as("op@pve", "operator1").await;
    pve.put("/access/password", &op, "userid=op@pve&password=newsecret")
        .await
        .assert_param_error(
            "confirmation-password",
            "password is required to modify user",
        );
    pve.put(
        "/access/password",
        &op,
        "userid=op@pve&password=newsecret&confirmation-password=operator1",
    )
    .await
    .data();
    pve.login_as("op@pve", "newsecret").await;
    pve.put(
        "/access/password",
        &op,
        "userid=audit@pve&password=newsecret",
    )
    .await
    // PVE's `and` inside the `or` raises its own refusal (RPCEnvironment.pm
    // exec_api2_perm_check does not pass `noerr` down to `and`).
    .assert_error(
        403,
        "Permission check failed (/access/realm/pve, Realm.AllocateUser)\n",
    );
    pve.put(
        "/access/password",
        &root,
        "userid=audit@pve&password=rootset1",
    )
    .await
    .data();
    pve.login_as("audit@pve", "rootset1").await;
}

#[tokio::test]
async fn fresh_install_has_only_root() {
    let pve = start().await;
    let root = pve.root().await;
    assert_eq!(pve.get("/access/acl", &root).await.data(), json!([]));
    assert_eq!(pve.get("/access/groups", &root).await.data(), json!([]));
    let roles = pve.get("/access/roles", &root).await.data();
    assert_eq!(roles.as_array().map(Vec::len), Some(17));
    let d = pve
        .post(
            "/access/ticket",
            &Auth::None,
            "username=root@pam&password=password",
        )
        .await
        .data();
    assert_eq!(d["cap"]["access"]["Permissions.Modify"], 1);
    assert_eq!(
        d["cap"]["vms"].as_object().map(serde_json::Map::len),
        Some(24)
    );
}
