//! Login, tickets, CSRF, API tokens and the 401/403 answers, over a real
//! socket.

mod common;

use common::{Auth, T0, enc, start, start_scenario, start_version};
use fake_pve::PveVersion;
use reqwest::Method;
use serde_json::Value;

const TOKEN_SECRET: &str = "4f8d7c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f";

fn scenario() -> String {
    format!(
        "users:
  - userid: root@pam
    tokens:
      - {{ tokenid: ci, secret: {TOKEN_SECRET}, privsep: false }}
      - {{ tokenid: sep, secret: {TOKEN_SECRET}, privsep: true }}
  - userid: alice@pve
    password: wonderland
    tokens:
      - {{ tokenid: t1, secret: {TOKEN_SECRET}, privsep: false }}
  - userid: gone@pve
    password: pw
    enable: false
  - userid: old@pve
    password: pw
    expire: {}
",
        T0 - 10
    )
}

#[tokio::test]
async fn login_answers_ticket_csrf_and_cap() {
    let pve = start().await;
    let r = pve
        .post(
            "/access/ticket",
            &Auth::None,
            "username=root@pam&password=password",
        )
        .await;
    let d = r.data();
    assert_eq!(
        r.header("content-type"),
        Some("application/json;charset=UTF-8")
    );
    assert_eq!(d["username"], "root@pam");
    let ticket = d["ticket"].as_str().expect("ticket");
    assert!(
        ticket.starts_with(&format!("PVE:root@pam:{T0:08X}::")),
        "{ticket}"
    );
    let csrf = d["CSRFPreventionToken"].as_str().expect("csrf");
    assert!(csrf.starts_with(&format!("{T0:08X}:")), "{csrf}");
    assert!(
        d.get("clustername").is_none(),
        "standalone nodes send no clustername"
    );
    let cap = d["cap"].as_object().expect("cap");
    let mut keys: Vec<&str> = cap.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["access", "dc", "mapping", "nodes", "sdn", "storage", "vms"]
    );
    assert_eq!(cap["vms"]["VM.GuestAgent.Audit"], 1);
    assert!(cap["vms"].get("VM.Monitor").is_none());
    assert!(r.header("set-cookie").is_none(), "PVE sets no cookie");

    let pve8 = start_version(PveVersion::V8_4).await;
    let d = pve8
        .post(
            "/access/ticket",
            &Auth::None,
            "username=root@pam&password=password",
        )
        .await
        .data();
    assert_eq!(d["cap"]["vms"]["VM.Monitor"], 1);
    assert!(d["cap"]["vms"].get("VM.GuestAgent.Audit").is_none());
}

#[tokio::test]
async fn login_forms_json_and_realm() {
    let pve = start_scenario(&scenario()).await;
    let r = pve
        .send(
            Method::POST,
            "/api2/json/access/ticket",
            &Auth::None,
            Some((
                "application/json",
                r#"{"username":"alice","realm":"pve","password":"wonderland"}"#.into(),
            )),
        )
        .await;
    assert_eq!(r.data()["username"], "alice@pve");
    // A body without Content-Type is read as a form.
    let r = pve
        .send(
            Method::POST,
            "/api2/json/access/ticket",
            &Auth::None,
            Some(("", "username=root@pam&password=password".into())),
        )
        .await;
    assert_eq!(r.data()["username"], "root@pam");
    // `realm` is appended as it is, as PVE does.
    let r = pve
        .post(
            "/access/ticket",
            &Auth::None,
            "username=root@pam&realm=pam&password=password",
        )
        .await;
    r.assert_error(401, "authentication failure\n");
}

#[tokio::test]
async fn failed_logins_are_all_the_same_401() {
    let pve = start_scenario(&scenario()).await;
    for form in [
        "username=root@pam&password=wrong",
        "username=nobody@pve&password=x",
        "username=gone@pve&password=pw",
        "username=old@pve&password=pw",
        "username=root@nowhere&password=password",
        "username=root&password=password",
    ] {
        let r = pve.post("/access/ticket", &Auth::None, form).await;
        r.assert_error(401, "authentication failure\n");
        assert_eq!(
            r.header("content-type"),
            Some("application/json;charset=UTF-8")
        );
    }
    pve.post("/access/ticket", &Auth::None, "username=root@pam")
        .await
        .assert_param_error("password", "property is missing and it is not optional");
    pve.post(
        "/access/ticket",
        &Auth::None,
        "username=root&realm=p!&password=x",
    )
    .await
    .assert_param_error(
        "realm",
        "invalid format - value does not look like a valid realm\n",
    );
    // extjs answers 200 with success 0.
    let r = pve
        .send(
            Method::POST,
            "/api2/extjs/access/ticket",
            &Auth::None,
            Some((
                "application/x-www-form-urlencoded",
                "username=root@pam&password=no".into(),
            )),
        )
        .await;
    assert_eq!(r.status, 200);
    let j = r.json();
    assert_eq!(j["success"], 0);
    assert_eq!(j["status"], 401);
    assert_eq!(j["message"], "authentication failure\n");
}

#[tokio::test]
async fn failed_authentication_is_delayed() {
    let pve = common::start_with(
        common::builder().auth_failure_delay(std::time::Duration::from_millis(300)),
    )
    .await;
    let t = std::time::Instant::now();
    let r = pve.get("/version", &Auth::None).await;
    assert_eq!(r.status, 401);
    assert!(
        t.elapsed() >= std::time::Duration::from_millis(300),
        "{:?}",
        t.elapsed()
    );
    let t = std::time::Instant::now();
    let r = pve
        .post(
            "/access/ticket",
            &Auth::None,
            "username=root@pam&password=bad",
        )
        .await;
    assert_eq!(r.status, 401);
    assert!(
        t.elapsed() >= std::time::Duration::from_millis(300),
        "{:?}",
        t.elapsed()
    );
}

#[tokio::test]
async fn tickets_travel_as_cookie_or_header_and_expire() {
    let pve = start().await;
    let Auth::Ticket { ticket, csrf } = pve.root().await else {
        unreachable!()
    };
    for auth in [
        Auth::Header("Cookie", format!("PVEAuthCookie={ticket}")),
        Auth::Header("Cookie", format!("other=1; PVEAuthCookie={}", enc(&ticket))),
        Auth::Header("Authorization", format!("PVEAuthCookie={ticket}")),
    ] {
        let r = pve.get("/version", &auth).await;
        assert_eq!(r.data()["release"], "9.2", "{auth:?}");
    }
    // Valid for two hours by the emulated clock.
    let auth = Auth::Ticket {
        ticket: ticket.clone(),
        csrf,
    };
    pve.run.clock().advance(7199);
    assert_eq!(pve.get("/version", &auth).await.status, 200);
    pve.run.clock().advance(2);
    let r = pve.get("/version", &auth).await;
    assert_eq!(
        (r.status, r.reason.as_str(), r.text.as_str()),
        (401, "Authentication failed!", "")
    );
    // A tampered ticket.
    let bad = ticket.replace("root@pam", "root@pve");
    let r = pve
        .get(
            "/version",
            &Auth::Header("Cookie", format!("PVEAuthCookie={bad}")),
        )
        .await;
    assert_eq!(
        (r.status, r.reason.as_str()),
        (401, "Authentication failed!")
    );
}

#[tokio::test]
async fn pve8_names_the_reason() {
    let pve = common::start_with(
        common::builder()
            .pve_version(PveVersion::V8_4)
            .scenario(fake_pve::Scenario::parse(&scenario(), "s").expect("scenario")),
    )
    .await;
    let r = pve
        .get(
            "/version",
            &Auth::Header("Cookie", "PVEAuthCookie=PVE:root@pam:00000000::x".into()),
        )
        .await;
    assert_eq!(
        (r.status, r.reason.as_str()),
        (401, "permission denied - invalid PVE ticket")
    );
    let r = pve
        .get(
            "/version",
            &Auth::Token("PVEAPIToken=root@pam!ci=wrong".to_string()),
        )
        .await;
    assert_eq!((r.status, r.reason.as_str()), (401, "invalid token value!"));
    let r = pve
        .get(
            "/version",
            &Auth::Token(format!("PVEAPIToken=root@pam!nope={TOKEN_SECRET}")),
        )
        .await;
    assert_eq!(
        (r.status, r.reason.as_str()),
        (401, "no such token 'nope' for user 'root@pam'")
    );
    assert_eq!(pve.get("/version", &Auth::None).await.reason, "No ticket");
    let v = pve
        .get(
            "/version",
            &Auth::Token(format!("PVEAPIToken=root@pam!ci={TOKEN_SECRET}")),
        )
        .await
        .data();
    assert_eq!(v["version"], "8.4.14");
    assert_eq!(v["repoid"], "b502d23c55afcba1");
}

#[tokio::test]
async fn csrf_is_required_on_writes_with_tickets_only() {
    let pve = start_scenario(&scenario()).await;
    let Auth::Ticket { ticket, csrf } = pve.root().await else {
        unreachable!()
    };
    for bad in ["", "00000000:AAAA", &csrf[..csrf.len() - 1]] {
        let auth = Auth::Ticket {
            ticket: ticket.clone(),
            csrf: bad.to_string(),
        };
        let r = pve.post("/nodes/pve/startall", &auth, "").await;
        assert_eq!(
            (r.status, r.reason.as_str(), r.text.as_str()),
            (401, "Permission denied - invalid csrf token", "")
        );
        assert_eq!(r.header("connection"), Some("close"));
    }
    // Another user's CSRF token does not fit this ticket.
    let Auth::Ticket {
        csrf: alice_csrf, ..
    } = pve.login_as("alice@pve", "wonderland").await
    else {
        unreachable!()
    };
    let r = pve
        .post(
            "/nodes/pve/startall",
            &Auth::Ticket {
                ticket: ticket.clone(),
                csrf: alice_csrf,
            },
            "",
        )
        .await;
    assert_eq!(r.status, 401);
    let ok = pve
        .post("/nodes/pve/startall", &Auth::Ticket { ticket, csrf }, "")
        .await;
    assert!(ok.data().as_str().expect("upid").starts_with("UPID:pve:"));
    // Tokens need no CSRF token.
    let r = pve
        .post(
            "/nodes/pve/startall",
            &Auth::Token(format!("PVEAPIToken=root@pam!ci={TOKEN_SECRET}")),
            "",
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
}

#[tokio::test]
async fn api_tokens_with_equals_or_space() {
    let pve = start_scenario(&scenario()).await;
    for header in [
        format!("PVEAPIToken=root@pam!ci={TOKEN_SECRET}"),
        format!("PVEAPIToken root@pam!ci={TOKEN_SECRET}"),
    ] {
        let r = pve.get("/nodes", &Auth::Token(header.clone())).await;
        assert_eq!(r.data()[0]["node"], "pve", "{header}");
    }
    for header in [
        format!("PVEAPIToken=root@pam!ci {TOKEN_SECRET}"),
        "PVEAPIToken=root@pam!ci=00000000-0000-0000-0000-000000000000".to_string(),
        format!("PVEAPIToken=root@pam={TOKEN_SECRET}"),
        format!("PVEAPIToken=root@pam!missing={TOKEN_SECRET}"),
    ] {
        let r = pve.get("/nodes", &Auth::Token(header.clone())).await;
        assert_eq!(
            (r.status, r.reason.as_str()),
            (401, "Authentication failed!"),
            "{header}"
        );
    }
}

#[tokio::test]
async fn renewal_with_the_old_ticket() {
    let pve = start_scenario(&scenario()).await;
    let Auth::Ticket { ticket, .. } = pve.root().await else {
        unreachable!()
    };
    pve.run.clock().advance(3600);
    let r = pve
        .post(
            "/access/ticket",
            &Auth::None,
            &format!("username=root@pam&password={}", enc(&ticket)),
        )
        .await;
    let new = r.data()["ticket"].as_str().expect("ticket").to_string();
    assert_ne!(new, ticket);
    assert!(new.starts_with(&format!("PVE:root@pam:{:08X}::", T0 + 3600)));
    // The renewed ticket outlives the old one.
    pve.run.clock().advance(3601);
    let cookie = |t: &str| Auth::Header("Cookie", format!("PVEAuthCookie={t}"));
    assert_eq!(pve.get("/version", &cookie(&ticket)).await.status, 401);
    assert_eq!(pve.get("/version", &cookie(&new)).await.status, 200);
    // alice cannot renew root's ticket; root may mint alice's.
    let Auth::Ticket { ticket: alice, .. } = pve.login_as("alice@pve", "wonderland").await else {
        unreachable!()
    };
    let r = pve
        .post(
            "/access/ticket",
            &Auth::None,
            &format!("username=root@pam&password={}", enc(&alice)),
        )
        .await;
    assert_eq!(r.status, 401);
    let r = pve
        .post(
            "/access/ticket",
            &Auth::None,
            &format!("username=alice@pve&password={}", enc(&new)),
        )
        .await;
    assert_eq!(r.data()["username"], "alice@pve");
}

#[tokio::test]
async fn permission_denied_without_privileges() {
    let pve = start_scenario(&scenario()).await;
    let sep = Auth::Token(format!("PVEAPIToken=root@pam!sep={TOKEN_SECRET}"));
    pve.get("/cluster/status", &sep)
        .await
        .assert_error(403, "Permission check failed (/, Sys.Audit)\n");
    let alice = pve.login_as("alice@pve", "wonderland").await;
    pve.get("/nodes/pve/status", &alice)
        .await
        .assert_error(403, "Permission check failed (/nodes/pve, Sys.Audit)\n");
    pve.post("/nodes/pve/startall", &alice, "")
        .await
        .assert_error(403, "Permission check failed (/, VM.PowerMgmt)\n");
    // Without Sys.Audit the node list has no figures.
    let nodes = pve.get("/nodes", &alice).await.data();
    assert_eq!(nodes[0]["node"], "pve");
    assert!(nodes[0].get("maxmem").is_none(), "{nodes}");
    // A token refused on a ticket-only call.
    let ci = Auth::Token(format!("PVEAPIToken=root@pam!ci={TOKEN_SECRET}"));
    let r = pve
        .post("/access/ticket", &ci, "username=root@pam&password=password")
        .await;
    assert_eq!(
        r.status, 200,
        "POST /access/ticket needs no auth, so the token is not looked at"
    );
    // The root token without privilege separation may do everything.
    assert_eq!(pve.get("/cluster/status", &ci).await.status, 200);
}

#[tokio::test]
async fn token_management() {
    let pve = start_scenario(&scenario()).await;
    let root = pve.root().await;
    let r = pve
        .post(
            "/access/users/root@pam/token/deploy",
            &root,
            "comment=ci%20runner&privsep=0",
        )
        .await;
    let d = r.data();
    assert_eq!(d["full-tokenid"], "root@pam!deploy");
    assert_eq!(
        d["info"],
        serde_json::json!({"privsep": "0", "comment": "ci runner"})
    );
    let secret = d["value"].as_str().expect("secret").to_string();
    assert_eq!(secret.len(), 36);
    assert!(
        secret
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase() || c == '-')
    );
    let tok = Auth::Token(format!("PVEAPIToken=root@pam!deploy={secret}"));
    assert_eq!(pve.get("/cluster/status", &tok).await.status, 200);

    pve.post("/access/users/root@pam/token/deploy", &root, "")
        .await
        .assert_param_error("tokenid", "Token already exists.");
    let list = pve.get("/access/users/root@pam/token", &root).await.data();
    let ids: Vec<&str> = list
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|t| t["tokenid"].as_str())
        .collect();
    assert_eq!(ids, ["ci", "deploy", "sep"]);
    assert_eq!(list[1]["expire"], 0);
    let one = pve
        .get("/access/users/root@pam/token/deploy", &root)
        .await
        .data();
    assert_eq!(
        one,
        serde_json::json!({"privsep": 0, "expire": 0, "comment": "ci runner"})
    );
    let upd = pve
        .put(
            "/access/users/root@pam/token/deploy",
            &root,
            "privsep=1&expire=1900000000",
        )
        .await
        .data();
    assert_eq!(upd["privsep"], 1);
    assert_eq!(upd["expire"], 1_900_000_000);
    // Now privilege-separated: no longer allowed.
    assert_eq!(pve.get("/cluster/status", &tok).await.status, 403);
    assert_eq!(
        pve.delete("/access/users/root@pam/token/deploy", &root)
            .await
            .data(),
        Value::Null
    );
    assert_eq!(pve.get("/cluster/status", &tok).await.status, 401);
    pve.get("/access/users/root@pam/token/deploy", &root)
        .await
        .assert_error(500, "no such token 'deploy' for user 'root@pam'\n");
    pve.get("/access/users/nobody@pve/token", &root)
        .await
        .assert_error(500, "no such user ('nobody@pve')\n");
    pve.get("/access/users/bad/token", &root)
        .await
        .assert_param_error(
            "userid",
            "invalid format - value 'bad' does not look like a valid user name\n",
        );
    // alice manages her own tokens, not root's.
    let alice = pve.login_as("alice@pve", "wonderland").await;
    assert_eq!(
        pve.get("/access/users/alice@pve/token", &alice)
            .await
            .data()[0]["tokenid"],
        "t1"
    );
    pve.get("/access/users/root@pam/token", &alice)
        .await
        .assert_error(403, "Permission check failed\n");
}

#[tokio::test]
async fn domains_are_open() {
    let pve = start().await;
    let d = pve.get("/access/domains", &Auth::None).await.data();
    assert_eq!(
        d[0],
        serde_json::json!({"realm": "pam", "type": "pam", "comment": "Linux PAM standard authentication"})
    );
    assert_eq!(d[1]["realm"], "pve");
    assert_eq!(
        pve.get("/access/ticket", &Auth::None).await.data(),
        Value::Null
    );
}
