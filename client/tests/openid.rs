//! An OpenID login end to end over loopback: `openid_auth_url` through
//! pve-client, the emulated provider's login form and redirect through a
//! plain HTTP client (as a browser), `openid_login` through pve-client,
//! and the ticket it answers used for a call. The provider's token,
//! userinfo, discovery and JWKS endpoints are reached over HTTP too.

mod common;

use common::{Mode, ROOT_TOKEN, ROOT_TOKEN_SECRET, base, builder, checked_client};
use pve_client::{Client, Error};
use serde_json::Value;

const REDIRECT: &str = "https://pve.example.com:8006";

fn scenario(issuer: &str) -> String {
    format!(
        r"
users:
  - userid: root@pam
    tokens:
      - {{ tokenid: automation, secret: 0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60, privsep: false }}
realms:
  - realm: sso
    type: openid
    options: {{ issuer-url: '{issuer}', client-id: pve, client-key: s3cret, autocreate: 1, groups-claim: groups, groups-autocreate: 1 }}
    directory:
      users:
        alice: {{ password: wonderland, email: alice@example.com, firstname: Alice }}
      groups:
        devs: [alice]
"
    )
}

fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("HTTP client")
}

fn query(url: &str) -> std::collections::BTreeMap<String, String> {
    let q = url.split_once('?').map_or("", |(_, q)| q);
    url_pairs(q)
}

fn url_pairs(q: &str) -> std::collections::BTreeMap<String, String> {
    q.split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| {
            let dec = |s: &str| percent_decode(&s.replace('+', " "));
            (dec(k), dec(v))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(h) = s.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(h, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).expect("UTF-8")
}

#[tokio::test]
async fn an_openid_login_runs_end_to_end() {
    // The realm's issuer is the server itself: its address is known once
    // it listens, so the realm is declared by a second seed.
    let run = builder().start().await.expect("fake-pve starts");
    let issuer = format!("{}/_openid", run.url());
    let (admin, _) = checked_client(&run, Mode::Token);
    let http = browser();
    let seeded = http
        .post(format!("{}/_fake/seed", run.url()))
        .header(
            "Authorization",
            format!("PVEAPIToken={ROOT_TOKEN}={ROOT_TOKEN_SECRET}"),
        )
        .header("Content-Type", "application/yaml")
        .body(scenario(&issuer))
        .send()
        .await
        .expect("seed");
    assert_eq!(seeded.status(), 200, "{:?}", seeded.text().await);
    // The OpenID calls need no credentials; PVE ignores the ones given.
    let anonymous = admin.clone();

    // Discovery and keys.
    let doc: Value = http
        .get(format!("{issuer}/.well-known/openid-configuration"))
        .send()
        .await
        .expect("discovery")
        .json()
        .await
        .expect("JSON");
    assert_eq!(doc["issuer"], issuer.as_str());
    assert_eq!(doc["authorization_endpoint"], format!("{issuer}/authorize"));
    let jwks: Value = http
        .get(format!("{issuer}/jwks"))
        .send()
        .await
        .expect("jwks")
        .json()
        .await
        .expect("JSON");
    assert_eq!(jwks["keys"][0]["alg"], "RS256");

    // auth-url: the provider's authorization URL with PVE's parameters.
    let url = anonymous
        .access()
        .openid_auth_url("sso", REDIRECT)
        .await
        .expect("auth-url");
    assert!(url.starts_with(&format!("{issuer}/authorize?")), "{url}");
    let p = query(&url);
    assert_eq!(p["client_id"], "pve");
    assert_eq!(p["scope"], "openid email profile");
    assert_eq!(p["code_challenge_method"], "S256");
    assert_eq!(p["redirect_uri"], REDIRECT);

    // The browser: the login form, a wrong password, then the right one.
    let form = http.get(&url).send().await.expect("form");
    assert_eq!(form.status(), 200);
    assert!(
        form.text()
            .await
            .expect("page")
            .contains("name=\"password\"")
    );
    let wrong = http
        .post(&url)
        .form(&[("username", "alice"), ("password", "wrong")])
        .send()
        .await
        .expect("post");
    assert_eq!(wrong.status(), 401);
    let back = http
        .post(&url)
        .form(&[("username", "alice"), ("password", "wonderland")])
        .send()
        .await
        .expect("post");
    assert_eq!(back.status(), 303);
    let location = back.headers()["location"]
        .to_str()
        .expect("location")
        .to_string();
    assert!(location.starts_with(REDIRECT), "{location}");
    let back = query(&location);
    assert_eq!(back["state"], p["state"]);

    // The provider's token endpoint refuses a code without the client's
    // secret and PKCE verifier (which only fake-pve's login holds).
    let refused = http
        .post(format!("{issuer}/token"))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", back["code"].as_str()),
            ("redirect_uri", REDIRECT),
            ("client_id", "pve"),
        ])
        .send()
        .await
        .expect("token");
    assert_eq!(refused.status(), 401);
    let refused = http
        .post(format!("{issuer}/token"))
        .basic_auth("pve", Some("s3cret"))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", back["code"].as_str()),
            ("redirect_uri", REDIRECT),
        ])
        .send()
        .await
        .expect("token");
    assert_eq!(refused.status(), 400);
    let err: Value = refused.json().await.expect("JSON");
    assert_eq!(err["error"], "invalid_grant");

    // login: a ticket for the user, created in the realm.
    let ticket = anonymous
        .access()
        .openid_login(&back["state"], &back["code"], REDIRECT)
        .await
        .expect("login");
    assert_eq!(ticket.username, "alice@sso");
    let again = anonymous
        .access()
        .openid_login(&back["state"], &back["code"], REDIRECT)
        .await
        .expect_err("the state is used up");
    assert!(matches!(again, Error::Authentication { .. }), "{again:?}");
    let user = admin
        .access()
        .read_user("alice@sso")
        .await
        .expect("created");
    assert_eq!(user.email.as_deref(), Some("alice@example.com"));
    assert_eq!(user.firstname.as_deref(), Some("Alice"));
    let group = admin.access().read_group("devs-sso").await.expect("group");
    assert_eq!(group.members, vec!["alice@sso".to_string()]);

    // The ticket works.
    let as_alice = Client::new(
        base(&run)
            .ticket(
                ticket.ticket.expect("ticket").expose(),
                ticket.csrf_prevention_token.expect("csrf").expose(),
            )
            .build()
            .expect("config"),
    )
    .expect("client");
    let perms = as_alice
        .access()
        .permissions(None, None)
        .await
        .expect("permissions");
    assert!(perms.is_empty() || perms.keys().all(|k| k.starts_with('/')));

    // An unknown realm and a realm of another type.
    let e = anonymous
        .access()
        .openid_auth_url("nosuch", REDIRECT)
        .await
        .expect_err("refused");
    assert!(
        e.to_string()
            .contains("authentication domain 'nosuch' does not exist"),
        "{e}"
    );
    let e = anonymous
        .access()
        .openid_auth_url("pve", REDIRECT)
        .await
        .expect_err("refused");
    assert!(
        e.to_string().contains("wrong realm type (pve != openid)"),
        "{e}"
    );
}
