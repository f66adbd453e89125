//! Both authentication modes and their failure paths: wrong credentials,
//! expired and renewed tickets, CSRF, 403; raw calls.

mod common;

use std::time::Duration;

use common::{CI_TOKEN, CI_TOKEN_SECRET, MODES, Mode, T0, base, client, config, start};
use pve_client::api::nodes::StartAll;
use pve_client::{Category, Client, Params};

#[tokio::test]
async fn connect_checks_the_credentials() {
    for mode in MODES {
        let run = start().await;
        let pve = Client::connect(config(&run, mode).build().expect("config"))
            .await
            .expect("connects");
        assert_eq!(pve.version().await.expect("version").release, "9.2");
    }
    let run = start().await;
    let e = Client::connect(
        base(&run)
            .password("root@pam", "wrong")
            .build()
            .expect("config"),
    )
    .await
    .expect_err("wrong password");
    assert_eq!(e.category(), Category::Authentication);
    assert_eq!(
        e.to_string(),
        "authentication failed: authentication failure"
    );
    assert!(!e.is_retryable());

    let e = Client::connect(
        base(&run)
            .token(common::ROOT_TOKEN, "00000000-0000-0000-0000-000000000000")
            .build()
            .expect("config"),
    )
    .await
    .expect_err("wrong secret");
    assert_eq!(e.category(), Category::Authentication);
    assert_eq!(e.message(), "Authentication failed!");
}

#[tokio::test]
async fn an_expired_ticket_means_one_new_login() {
    let run = start().await;
    let pve = client(&run, Mode::Password);
    pve.version().await.expect("logged in");
    assert_eq!(pve.ticket_info().await.map(|t| t.issued), Some(T0));
    // Past the two hours: PVE refuses the ticket, the client logs in again.
    run.clock().advance(7201);
    pve.version().await.expect("logged in again");
    let info = pve.ticket_info().await.expect("ticket");
    assert_eq!(info.issued, T0 + 7201);
    assert_eq!(info.userid, "root@pam");
    // Writes carry the new CSRF token too.
    let upid = pve
        .nodes()
        .startall("pve", &StartAll::default())
        .await
        .expect("write");
    pve.tasks().wait(&upid).await.expect("task");
}

#[tokio::test]
async fn tickets_are_renewed_before_they_expire() {
    let run = start().await;
    let login = client(&run, Mode::Password)
        .access()
        .create_ticket("root@pam", "password")
        .await
        .expect("login");
    // A client with only a ticket (no password) survives only by renewing.
    let pve = Client::new(
        base(&run)
            .ticket(
                login.ticket.expect("ticket"),
                login.csrf_prevention_token.expect("csrf"),
            )
            .ticket_renew_after(Duration::ZERO)
            .build()
            .expect("config"),
    )
    .expect("client");
    pve.version().await.expect("first call");
    run.clock().advance(7000);
    pve.version().await.expect("renewed at T0+7000");
    assert_eq!(pve.ticket_info().await.map(|t| t.issued), Some(T0 + 7000));
    run.clock().advance(7000);
    // The first ticket died at T0+7200; the renewed one is still good.
    pve.version().await.expect("renewed again");
    assert_eq!(pve.ticket_info().await.map(|t| t.issued), Some(T0 + 14_000));

    // Explicit renewal with a password client.
    let pw = client(&run, Mode::Password);
    pw.version().await.expect("login");
    run.clock().advance(60);
    pw.renew_ticket().await.expect("renew");
    assert_eq!(pw.ticket_info().await.map(|t| t.issued), Some(T0 + 14_060));
    // Tokens have nothing to renew.
    let tok = client(&run, Mode::Token);
    tok.renew_ticket().await.expect("no-op");
    assert_eq!(tok.ticket_info().await, None);
}

#[tokio::test]
async fn an_expired_ticket_without_a_password_is_an_authentication_error() {
    let run = start().await;
    let login = client(&run, Mode::Password)
        .access()
        .create_ticket("root@pam", "password")
        .await
        .expect("login");
    let pve = Client::new(
        base(&run)
            .ticket(
                login.ticket.expect("ticket"),
                login.csrf_prevention_token.expect("csrf"),
            )
            .build()
            .expect("config"),
    )
    .expect("client");
    pve.version().await.expect("valid ticket");
    run.clock().advance(7201);
    let e = pve.version().await.expect_err("expired");
    assert_eq!(e.category(), Category::Authentication);
    assert_eq!(e.message(), "Authentication failed!");
    let e = pve.renew_ticket().await.expect_err("cannot renew");
    assert_eq!(e.category(), Category::Authentication);
    assert!(e.message().contains("could not be renewed"), "{e}");
}

#[tokio::test]
async fn writes_need_the_csrf_token() {
    let run = start().await;
    let login = client(&run, Mode::Password)
        .access()
        .create_ticket("root@pam", "password")
        .await
        .expect("login");
    let pve = Client::new(
        base(&run)
            .ticket(login.ticket.expect("ticket"), "00000000:bogus")
            .build()
            .expect("config"),
    )
    .expect("client");
    pve.version().await.expect("reads need no CSRF token");
    let e = pve
        .nodes()
        .startall("pve", &StartAll::default())
        .await
        .expect_err("bad CSRF token");
    assert_eq!(e.category(), Category::Authentication);
    assert_eq!(e.message(), "Permission denied - invalid csrf token");
    // The password client sends the right one.
    let ok = client(&run, Mode::Password);
    ok.nodes()
        .startall("pve", &StartAll::default())
        .await
        .expect("write with the CSRF token");
}

#[tokio::test]
async fn unprivileged_users_get_403() {
    let run = start().await;
    let user = Client::new(
        base(&run)
            .password("ci@pve", "ci-password")
            .build()
            .expect("cfg"),
    )
    .expect("client");
    let token = Client::new(
        base(&run)
            .token(CI_TOKEN, CI_TOKEN_SECRET)
            .build()
            .expect("cfg"),
    )
    .expect("client");
    for pve in [user, token] {
        let e = pve.cluster().get_status().await.expect_err("no Sys.Audit");
        assert_eq!(e.category(), Category::Permission, "{e}");
        assert_eq!(e.status(), Some(403));
        assert_eq!(e.message(), "Permission check failed (/, Sys.Audit)");
        assert!(!e.is_retryable());
        let e = pve
            .nodes()
            .startall("pve", &StartAll::default())
            .await
            .expect_err("no VM.PowerMgmt");
        assert_eq!(e.category(), Category::Permission, "{e}");
        // What needs no privilege still works.
        pve.version().await.expect("version");
    }
}

#[tokio::test]
async fn raw_calls_in_both_modes() {
    for mode in MODES {
        let run = start().await;
        let pve = client(&run, mode);
        let v = pve.get("/version", &Params::new()).await.expect("get");
        assert_eq!(v["release"], "9.2");
        let id = pve
            .get("cluster/nextid", &Params::new().set("vmid", 300))
            .await
            .expect("get with a query");
        assert_eq!(id, "300");
        let upid = pve
            .post("/nodes/pve/startall", &Params::new().set("force", true))
            .await
            .expect("post");
        let upid = upid.as_str().expect("a UPID").to_string();
        let st = pve
            .get(&format!("/nodes/pve/tasks/{upid}/status"), &Params::new())
            .await
            .expect("raw UPID in the path");
        assert_eq!(st["status"], "stopped");
        let made = pve
            .post(
                "/access/users/root@pam/token/raw",
                &Params::new().set("privsep", false),
            )
            .await
            .expect("post");
        assert_eq!(made["full-tokenid"], "root@pam!raw");
        let updated = pve
            .put(
                "/access/users/root@pam/token/raw",
                &Params::new().set("comment", "via put"),
            )
            .await
            .expect("put");
        assert_eq!(updated["comment"], "via put");
        let gone = pve
            .delete("/access/users/root@pam/token/raw", &Params::new())
            .await
            .expect("delete");
        assert_eq!(gone, serde_json::Value::Null);
        let log = pve
            .request(
                pve_client::Method::GET,
                &format!("/nodes/pve/tasks/{upid}/log"),
                &Params::new(),
            )
            .await
            .expect("request");
        assert_eq!(log.total, Some(2), "Starting VM 100, TASK OK");
        let e = pve
            .get("/nope", &Params::new())
            .await
            .expect_err("no such path");
        assert_eq!(e.category(), Category::NotFound, "{mode:?}: {e}");
        assert_eq!(e.message(), "Method 'GET /nope' not implemented");
    }
}
