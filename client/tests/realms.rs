//! Realms, realm syncs and second factors (`api::realms`, `api::tfa`)
//! against an in-process fake-pve; every answer is checked against the
//! schema.

mod common;

use common::{Mode, T0, builder, checked_client};
use fake_pve::{Clock, Scenario};
use pve_client::api::realms::SyncOptions;
use pve_client::api::tfa::{totp_code, totp_uri};
use pve_client::{Client, Config};

const SECRET: &str = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";

const DIRECTORY: &str = r"
users:
  - userid: root@pam
    tokens:
      - { tokenid: automation, secret: 0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60, privsep: false }
  - { userid: ci@pve, password: ci-password }
realms:
  - realm: corp
    type: ldap
    options: { server1: ldap.example.com, base_dn: 'dc=example,dc=com', user_attr: uid }
    directory:
      users:
        alice: { password: wonderland, email: alice@example.com }
      groups:
        devs: [alice]
";

#[tokio::test]
async fn realms_are_made_changed_and_synced() {
    let run = builder()
        .scenario(Scenario::parse(DIRECTORY, "realms.yaml").expect("scenario"))
        .start()
        .await
        .expect("fake-pve starts");
    let (pve, checked) = checked_client(&run, Mode::Token);
    let realms = pve.realms();
    realms
        .create_domain(
            "sso",
            "openid",
            &[
                ("issuer-url", "https://id.example.com"),
                ("client-id", "pve"),
                ("default", "1"),
            ],
        )
        .await
        .expect("create");
    let err = realms
        .create_domain("sso", "openid", &[])
        .await
        .expect_err("twice");
    assert!(
        err.to_string()
            .contains("add auth server failed: domain 'sso' already exists"),
        "{err}"
    );
    let read = realms.read_domain("sso").await.expect("read");
    assert_eq!(read["type"], "openid");
    assert_eq!(read["default"], 1);
    realms
        .update_domain("sso", &[("comment", "single sign-on")], &["default"])
        .await
        .expect("update");
    let list = pve.access().list_domains().await.expect("list");
    let sso = list.iter().find(|d| d.realm == "sso").expect("sso listed");
    assert_eq!(sso.comment.as_deref(), Some("single sign-on"));

    // A sync is a task; the synced user logs in with the directory's
    // password.
    let upid = realms
        .sync(
            "corp",
            &SyncOptions {
                scope: Some("both".into()),
                ..SyncOptions::default()
            },
            false,
        )
        .await
        .expect("sync");
    assert_eq!(upid.kind(), "auth-realm-sync");
    assert!(pve.tasks().wait(&upid).await.expect("wait").succeeded());
    let alice = pve.access().read_user("alice@corp").await.expect("alice");
    assert_eq!(alice.email.as_deref(), Some("alice@example.com"));
    let t = pve
        .access()
        .create_ticket("alice@corp", "wonderland")
        .await
        .expect("login");
    assert_eq!(t.username, "alice@corp");

    realms
        .create_job(
            "corp-nightly",
            "corp",
            "02:00",
            &SyncOptions {
                scope: Some("users".into()),
                // PVE's schema calls both required in the listing, which
                // shows only what the job was given.
                remove_vanished: Some("none".into()),
                ..SyncOptions::default()
            },
            Some(true),
        )
        .await
        .expect("job");
    let jobs = realms.syncjob_index().await.expect("jobs");
    assert_eq!(jobs.len(), 1);
    assert!(jobs[0].next_run.is_some_and(|n| n > T0));
    realms.delete_job("corp-nightly").await.expect("delete job");
    realms.delete_domain("sso").await.expect("delete");
    assert!(
        checked.names().iter().any(|n| n.contains("syncjob_index")),
        "{:?}",
        checked.names()
    );
}

#[tokio::test]
async fn a_totp_login_is_completed_by_the_client() {
    // The client computes TOTP values by its own clock: the fake runs on
    // the system clock here.
    let run = builder()
        .clock(Clock::system())
        .start()
        .await
        .expect("fake-pve starts");
    let (pve, _) = checked_client(&run, Mode::Token);
    let now = u64::try_from(run.clock().now()).expect("time");
    let tfa = pve.tfa();
    let uri = totp_uri("pve", "ci@pve", SECRET);
    let code = totp_code(SECRET, now).expect("code");
    let added = tfa
        .add_tfa_entry(
            "ci@pve",
            "totp",
            Some("phone"),
            Some(&uri),
            Some(&code),
            None,
        )
        .await;
    // Tokens may not change second factors.
    assert!(added.is_err(), "{added:?}");
    let root = Client::new(
        common::base(&run)
            .password("root@pam", "password")
            .build()
            .expect("config"),
    )
    .expect("client");
    let added = root
        .tfa()
        .add_tfa_entry(
            "ci@pve",
            "totp",
            Some("phone"),
            Some(&uri),
            Some(&code),
            None,
        )
        .await
        .expect("add");
    let id = added.id.expect("id");
    let entries = root.tfa().list_user_tfa("ci@pve").await.expect("list");
    assert_eq!(entries[0].id, id);

    // A plain password login is only half a login now.
    let half = root
        .access()
        .create_ticket("ci@pve", "ci-password")
        .await
        .expect("half");
    assert_eq!(half.need_tfa, Some(true));
    assert!(half.cap.is_none());

    // The client answers the challenge itself with the secret.
    let ci = Client::new(
        common::base(&run)
            .password("ci@pve", "ci-password")
            .totp_secret(SECRET)
            .build()
            .expect("config"),
    )
    .expect("client");
    let me = ci
        .access()
        .permissions(None, None)
        .await
        .expect("a call with the completed login");
    let _ = me;
    // Without the secret the login fails with the reason.
    let plain = Client::new(
        Config::builder()
            .endpoint(run.url())
            .ca_bundle_pem(run.cert_pem().expect("TLS"))
            .password("ci@pve", "ci-password")
            .build()
            .expect("config"),
    )
    .expect("client");
    let err = plain
        .access()
        .permissions(None, None)
        .await
        .expect_err("no second factor");
    assert!(err.to_string().contains("second factor"), "{err}");
    assert!(!root.tfa().unlock_tfa("ci@pve").await.expect("unlock"));
    root.tfa()
        .delete_tfa("ci@pve", &id, None)
        .await
        .expect("delete");
}
