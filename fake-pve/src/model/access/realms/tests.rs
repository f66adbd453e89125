use super::*;
use rstest::rstest;

fn opts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect()
}

fn ldap() -> BTreeMap<String, String> {
    opts(&[
        ("server1", "ldap.example.com"),
        ("base_dn", "dc=example,dc=com"),
        ("user_attr", "uid"),
    ])
}

#[rstest]
#[case(
    "pam",
    "ldap",
    ldap(),
    "add auth server failed: domain 'pam' already exists"
)]
#[case("corp", "pve", opts(&[]), "add auth server failed: unable to create builtin type 'pve'")]
#[case("corp", "ldap", opts(&[("server1", "x"), ("user_attr", "uid")]), "add auth server failed: missing value for required option 'base_dn'")]
#[case("corp", "ad", opts(&[("server1", "x"), ("domain", "x"), ("issuer-url", "x")]), "add auth server failed: unexpected property 'issuer-url'")]
#[case("corp", "openid", opts(&[("issuer-url", "x")]), "add auth server failed: missing value for required option 'client-id'")]
fn create_refusals(
    #[case] id: &str,
    #[case] kind: &str,
    #[case] o: BTreeMap<String, String>,
    #[case] msg: &str,
) {
    let mut r = Realms::default();
    let e = r.create(id, kind, o, None, None).expect_err("refused");
    assert_eq!(e.message(), msg);
}

#[test]
fn default_moves_and_builtins_come_back() {
    let mut r = Realms::default();
    let mut o = ldap();
    o.insert("default".into(), "1".into());
    r.create("corp", "ldap", o, Some("pw".into()), None)
        .expect("create");
    assert_eq!(
        r.existing("corp").expect("read").options()["default"],
        ConfValue::Int(1)
    );
    r.update("pve", opts(&[("default", "1")]), &[], None, None, None)
        .expect("update");
    assert!(
        r.existing("corp")
            .expect("read")
            .options()
            .get("default")
            .is_none()
    );
    let defaults: Vec<(&String, bool)> = r.iter().map(|(id, r)| (id, r.is_default())).collect();
    assert_eq!(defaults.len(), 3);
    assert!(defaults[2].1, "{defaults:?}");
    r.delete("pve").expect("delete pve");
    assert!(
        r.existing("pve")
            .expect("pve back")
            .options()
            .get("default")
            .is_none()
    );
    r.delete("corp").expect("delete");
    assert_eq!(
        r.delete("corp").expect_err("gone").message(),
        "delete auth server failed: authentication domain 'corp' does not exist"
    );
}

#[test]
fn update_checks() {
    let mut r = Realms::default();
    r.create(
        "oidc",
        "openid",
        opts(&[
            ("issuer-url", "https://id.example.com"),
            ("client-id", "pve"),
            ("username-claim", "email"),
        ]),
        None,
        None,
    )
    .expect("create");
    let e = r
        .update(
            "oidc",
            opts(&[("username-claim", "sub")]),
            &[],
            None,
            None,
            None,
        )
        .expect_err("fixed");
    assert_eq!(
        e.message(),
        "update auth server failed: can't change value of fixed parameter 'username-claim'"
    );
    let e = r
        .update("oidc", opts(&[]), &[], None, None, None)
        .expect_err("empty");
    assert_eq!(
        e.message(),
        "update auth server failed: no options specified"
    );
    let e = r
        .update(
            "oidc",
            opts(&[("comment", "x")]),
            &[],
            Some("00"),
            None,
            None,
        )
        .expect_err("digest");
    assert_eq!(e.kind(), crate::model::ErrorKind::Conflict);
    let e = r
        .update("nope", opts(&[("comment", "x")]), &[], None, None, None)
        .expect_err("missing");
    assert_eq!(
        e.message(),
        "update auth server failed: domain 'nope' does not exist"
    );
}

#[test]
fn deprecated_sync_defaults_are_mapped() {
    let mut r = Realms::default();
    let mut o = ldap();
    o.insert(
        "sync-defaults-options".into(),
        "scope=users,full=1,purge=1".into(),
    );
    r.create("corp", "ldap", o, None, None).expect("create");
    assert_eq!(
        r.existing("corp").expect("read").options()["sync-defaults-options"],
        ConfValue::from("remove-vanished=entry;properties;acl,scope=users")
    );
}

fn synced() -> Access {
    let mut a = Access::default();
    let mut dir = Directory::default();
    dir.users.insert(
        "alice".into(),
        DirectoryUser {
            password: Some("wonderland".into()),
            email: Some("alice@example.com".into()),
            ..DirectoryUser::default()
        },
    );
    dir.users.insert("bob".into(), DirectoryUser::default());
    dir.groups
        .insert("devs".into(), ["alice".to_string()].into_iter().collect());
    a.realms
        .declare("corp", "ldap", ldap(), None, dir)
        .expect("declare");
    a
}

#[test]
fn sync_adds_users_and_groups() {
    let mut a = synced();
    let o = a
        .sync_options(
            "corp",
            &SyncParams {
                scope: Some("both".into()),
                enable_new: Some(false),
                ..SyncParams::default()
            },
        )
        .expect("options");
    let log = a.run_realm_sync("corp", &o, true).expect("dry run");
    assert_eq!(log[0], "(dry test run) starting sync for realm corp");
    assert!(!a.user_exists("alice@corp"));
    let log = a.run_realm_sync("corp", &o, false).expect("sync");
    assert_eq!(
        log,
        [
            "starting sync for realm corp",
            "got data from server, updating users and groups",
            "syncing users (remove-vanished opts: none)",
            "adding user 'alice@corp'",
            "adding user 'bob@corp'",
            "syncing groups (remove-vanished opts: none)",
            "adding group 'devs-corp'",
            "successfully updated users and groups configuration",
        ]
    );
    let alice = a.user("alice@corp").expect("alice");
    assert!(!alice.enable);
    assert_eq!(alice.email.as_deref(), Some("alice@example.com"));
    assert!(a.groups()["devs-corp"].members.contains("alice@corp"));
    a.user_entry("alice@corp").expect("alice").enable = true;
    assert!(a.authenticate_first("alice@corp", "wonderland", 0).is_ok());
    assert!(a.authenticate_first("alice@corp", "wrong", 0).is_err());
}

#[test]
fn sync_removes_vanished_entries() {
    let mut a = synced();
    let mut ghost = User::new("ghost@corp");
    ghost.enable = true;
    a.put_user(ghost);
    let o = a
        .sync_options(
            "corp",
            &SyncParams {
                scope: Some("users".into()),
                remove_vanished: Some("entry;acl".into()),
                ..SyncParams::default()
            },
        )
        .expect("options");
    let log = a.run_realm_sync("corp", &o, false).expect("sync");
    assert!(log.contains(&"remove user 'ghost@corp'".to_string()));
    assert!(!a.user_exists("ghost@corp"));
}

#[rstest]
#[case("nope", SyncParams::default(), "Parameter verification failed.")]
#[case(
    "pve",
    SyncParams::default(),
    "Cannot sync realm type 'pve'! Only LDAP/AD realms can be synced."
)]
#[case("corp", SyncParams::default(), "Parameter verification failed.")]
fn sync_refusals(#[case] realm: &str, #[case] p: SyncParams, #[case] msg: &str) {
    let a = synced();
    assert_eq!(
        a.sync_options(realm, &p).expect_err("refused").message(),
        msg
    );
}
