use super::provider::{AuthRequest, TokenRequest};
use super::*;
use crate::model::access::realms::{Directory, DirectoryUser};
use rstest::rstest;
use serde_json::json;

const ISSUER: &str = "https://127.0.0.1:8006/_openid";
const REDIRECT: &str = "https://pve.example.com:8006";
const NOW: i64 = 1_780_000_000;

fn key() -> SecretKey {
    SecretKey([7; 32])
}

fn accounts() -> Directory {
    let mut d = Directory::default();
    d.users.insert(
        "alice".into(),
        DirectoryUser {
            password: Some("wonderland".into()),
            email: Some("alice@example.com".into()),
            firstname: Some("Alice".into()),
            lastname: Some("Liddell".into()),
            comment: None,
        },
    );
    d.users.insert(
        "bob".into(),
        DirectoryUser {
            password: Some("builder1".into()),
            ..DirectoryUser::default()
        },
    );
    d.groups
        .insert("devs".into(), ["alice".to_string()].into_iter().collect());
    d.groups.insert(
        "bad group!".into(),
        ["alice".to_string()].into_iter().collect(),
    );
    d
}

/// An access state with the realm `sso` of the emulated provider and
/// `extra` options.
fn access(extra: &[(&str, &str)]) -> Access {
    let mut a = Access::default();
    let mut o: BTreeMap<String, String> = [("issuer-url", ISSUER), ("client-id", "pve")]
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect();
    for (k, v) in extra {
        o.insert((*k).to_string(), (*v).to_string());
    }
    a.realms
        .declare("sso", "openid", o, None, accounts())
        .expect("declare");
    a
}

fn rq() -> Context {
    Context::new(NOW * 1000, 42).keyed(key())
}

/// auth-url, then the provider's login form with `user` and `password`:
/// the `code` and `state` the browser comes back with.
fn authorize(a: &mut Access, user: &str, password: &str) -> (String, String) {
    let url = a.openid_auth_url("sso", REDIRECT, &mut rq()).expect("url");
    let query = url.split_once('?').expect("query").1;
    let req = AuthRequest::parse(query);
    let back = req
        .grant(&a.realms, &key(), user, password, NOW)
        .expect("granted");
    let q = AuthRequest::parse(back.split_once('?').expect("query").1);
    (q.params["code"].clone(), q.params["state"].clone())
}

#[test]
fn auth_url_names_pves_parameters() {
    let mut a = access(&[("prompt", "login"), ("acr-values", "urn:mfa")]);
    let url = a.openid_auth_url("sso", REDIRECT, &mut rq()).expect("url");
    let (base, query) = url.split_once('?').expect("query");
    assert_eq!(base, format!("{ISSUER}/authorize"));
    let p = AuthRequest::parse(query).params;
    assert_eq!(p["response_type"], "code");
    assert_eq!(p["client_id"], "pve");
    assert_eq!(p["redirect_uri"], REDIRECT);
    assert_eq!(p["scope"], "openid email profile");
    assert_eq!(p["code_challenge_method"], "S256");
    assert_eq!(p["display"], "page");
    assert_eq!(p["prompt"], "login");
    assert_eq!(p["acr_values"], "urn:mfa");
    let state: Value = serde_json::from_str(&p["state"]).expect("json state");
    assert_eq!(state["realm"], "sso");
    assert_eq!(state["csrf_token"].as_str().map(str::len), Some(22));
    let kept = &a.openid_states.states[0];
    assert_eq!(p["nonce"], kept.nonce);
    assert_eq!(
        p["code_challenge"],
        provider::pkce_challenge(&kept.pkce_verifier)
    );
}

#[rstest]
#[case("nosuch", "authentication domain 'nosuch' does not exist")]
#[case("pve", "wrong realm type (pve != openid)")]
fn auth_url_refusals(#[case] realm: &str, #[case] msg: &str) {
    let mut a = access(&[]);
    let e = a
        .openid_auth_url(realm, REDIRECT, &mut rq())
        .expect_err("refused");
    assert_eq!(e.message(), msg);
}

#[test]
fn an_issuer_elsewhere_cannot_be_reached() {
    let mut a = Access::default();
    let o = [
        ("issuer-url", "https://login.example.com"),
        ("client-id", "pve"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
    .collect();
    a.realms
        .create("ext", "openid", o, None, None)
        .expect("create");
    let e = a
        .openid_auth_url("ext", REDIRECT, &mut rq())
        .expect_err("refused");
    assert_eq!(e.message(), "Request failed");
}

#[test]
fn login_creates_the_user_and_its_groups() {
    let mut a = access(&[
        ("autocreate", "1"),
        ("groups-claim", "groups"),
        ("groups-autocreate", "1"),
    ]);
    let (code, state) = authorize(&mut a, "alice", "wonderland");
    let login = a
        .openid_login(&state, &code, REDIRECT, &key(), NOW + 5)
        .expect("login");
    assert_eq!(login.userid, "alice@sso");
    assert!(login.created);
    assert_eq!(login.groups, vec!["devs-sso".to_string()]);
    let u = &a.users["alice@sso"];
    assert_eq!(u.email.as_deref(), Some("alice@example.com"));
    assert_eq!(u.firstname.as_deref(), Some("Alice"));
    assert_eq!(u.lastname.as_deref(), Some("Liddell"));
    assert!(a.groups["devs-sso"].members.contains("alice@sso"));
    // The state is used up.
    let e = a
        .openid_login(&state, &code, REDIRECT, &key(), NOW + 6)
        .expect_err("once");
    assert_eq!(e.message(), "no openid auth state found (possible timeout)");
}

#[test]
fn without_autocreate_the_user_must_exist() {
    let mut a = access(&[]);
    let (code, state) = authorize(&mut a, "bob", "builder1");
    let e = a
        .openid_login(&state, &code, REDIRECT, &key(), NOW)
        .expect_err("refused");
    assert_eq!(e.message(), "no such user ('bob@sso')");
    a.users.insert("bob@sso".into(), User::new("bob@sso"));
    let (code, state) = authorize(&mut a, "bob", "builder1");
    let login = a
        .openid_login(&state, &code, REDIRECT, &key(), NOW)
        .expect("login");
    assert_eq!(login.userid, "bob@sso");
    assert!(!login.created);
}

#[rstest]
#[case("email", Some("alice@example.com@sso"))]
#[case("preferred_username", Some("alice@sso"))]
#[case("username", Some("alice@sso"))]
#[case("subject", Some("alice@sso"))]
#[case("nickname", None)]
fn the_username_claim_names_the_user(#[case] claim: &str, #[case] userid: Option<&str>) {
    let mut a = access(&[("autocreate", "1"), ("username-claim", claim)]);
    let (code, state) = authorize(&mut a, "alice", "wonderland");
    let r = a.openid_login(&state, &code, REDIRECT, &key(), NOW);
    match userid {
        Some(u) => assert_eq!(r.expect("login").userid, u),
        None => assert_eq!(
            r.expect_err("refused").message(),
            "missing configured claim 'nickname' in returned info object"
        ),
    }
}

#[test]
fn groups_join_only_existing_ones_and_overwrite_clears_the_rest() {
    let mut a = access(&[
        ("autocreate", "1"),
        ("groups-claim", "groups"),
        ("groups-overwrite", "1"),
    ]);
    a.create_group("old", None).expect("group");
    a.users.insert("alice@sso".into(), User::new("alice@sso"));
    a.groups
        .get_mut("old")
        .expect("old")
        .members
        .insert("alice@sso".into());
    let (code, state) = authorize(&mut a, "alice", "wonderland");
    let login = a
        .openid_login(&state, &code, REDIRECT, &key(), NOW)
        .expect("login");
    assert!(login.groups.is_empty(), "devs-sso does not exist");
    assert!(!a.groups.contains_key("devs-sso"));
    assert!(a.groups["old"].members.is_empty());
    a.create_group("devs-sso", None).expect("group");
    let (code, state) = authorize(&mut a, "alice", "wonderland");
    let login = a
        .openid_login(&state, &code, REDIRECT, &key(), NOW)
        .expect("login");
    assert_eq!(login.groups, vec!["devs-sso".to_string()]);
}

#[test]
fn the_provider_refuses_a_wrong_password() {
    let mut a = access(&[]);
    let url = a.openid_auth_url("sso", REDIRECT, &mut rq()).expect("url");
    let req = AuthRequest::parse(url.split_once('?').expect("q").1);
    let e = req
        .grant(&a.realms, &key(), "alice", "wrong", NOW)
        .expect_err("refused");
    assert_eq!(e.code, "access_denied");
    let back = req.error_redirect(&a.realms, &e).expect("redirect");
    assert!(back.starts_with(&format!("{REDIRECT}?error=access_denied")));
}

#[rstest]
#[case::other_redirect("https://evil.example.com", None, "redirect_uri mismatch")]
#[case::wrong_verifier(REDIRECT, Some("x".repeat(43)), "PKCE verification failed")]
#[case::no_verifier(REDIRECT, None, "missing code_verifier")]
fn the_token_endpoint_checks_the_grant(
    #[case] redirect: &str,
    #[case] verifier: Option<String>,
    #[case] msg: &str,
) {
    let mut a = access(&[]);
    let (code, _) = authorize(&mut a, "alice", "wonderland");
    let req = TokenRequest {
        grant_type: "authorization_code".into(),
        code,
        redirect_uri: redirect.into(),
        code_verifier: verifier,
        client_id: "pve".into(),
        client_secret: None,
    };
    let e = provider::token(&a.realms, &key(), ISSUER, &req, NOW).expect_err("refused");
    assert_eq!((e.code, e.description.as_str()), ("invalid_grant", msg));
}

#[test]
fn a_confidential_client_must_authenticate() {
    let mut a = access(&[("client-key", "s3cret")]);
    let (code, _) = authorize(&mut a, "alice", "wonderland");
    let state = &a.openid_states.states[0];
    let mut req = TokenRequest {
        grant_type: "authorization_code".into(),
        code,
        redirect_uri: REDIRECT.into(),
        code_verifier: Some(state.pkce_verifier.clone()),
        client_id: "pve".into(),
        client_secret: Some("wrong".into()),
    };
    let e = provider::token(&a.realms, &key(), ISSUER, &req, NOW).expect_err("refused");
    assert_eq!(e.code, "invalid_client");
    req.client_secret = Some("s3cret".into());
    let t = provider::token(&a.realms, &key(), ISSUER, &req, NOW).expect("tokens");
    let info = provider::userinfo(&a.realms, &key(), &t.access_token, NOW).expect("userinfo");
    assert_eq!(info["email"], "alice@example.com");
    assert_eq!(info["groups"], json!(["bad group!", "devs"]));
}

#[test]
fn an_expired_code_or_state_is_refused() {
    let mut a = access(&[("autocreate", "1")]);
    let (code, state) = authorize(&mut a, "alice", "wonderland");
    let e = a
        .openid_login(&state, &code, REDIRECT, &key(), NOW + 120)
        .expect_err("refused");
    assert_eq!(
        e.message(),
        "Failed to contact token endpoint: invalid_grant: authorization code expired"
    );
    let (code, state) = authorize(&mut a, "alice", "wonderland");
    let e = a
        .openid_login(&state, &code, REDIRECT, &key(), NOW + STATE_TIMEOUT + 1)
        .expect_err("refused");
    assert_eq!(e.message(), "no openid auth state found (possible timeout)");
}

fn claims(over: &[(&str, Value)]) -> Value {
    let mut c = json!({
        "iss": ISSUER, "aud": "pve", "sub": "alice", "exp": NOW + 60, "iat": NOW, "nonce": "n1",
    });
    for (k, v) in over {
        c[*k] = v.clone();
    }
    c
}

fn expect() -> jwt::Expect<'static> {
    jwt::Expect {
        issuer: ISSUER,
        client_id: "pve",
        audiences: &[],
        nonce: "n1",
        now: NOW,
    }
}

#[rstest]
#[case::issuer(&[("iss", json!("https://other/_openid"))], "Invalid issuer: expected `https://127.0.0.1:8006/_openid`, found `https://other/_openid`")]
#[case::audience(&[("aud", json!("someone"))], "Invalid audiences: `someone` is not a trusted audience")]
#[case::expired(&[("exp", json!(NOW - 1))], "Expired: ID token expired at 1779999999")]
#[case::nonce(&[("nonce", json!("n2"))], "Invalid nonce: nonce mismatch")]
fn an_id_token_is_checked(#[case] over: &[(&str, Value)], #[case] msg: &str) {
    let token = provider::sign_for_test(&claims(over));
    let e = jwt::verify(&token, &provider::jwks(), expect()).expect_err("refused");
    assert_eq!(e.to_string(), msg);
}

#[test]
fn a_tampered_id_token_fails_the_signature() {
    let token = provider::sign_for_test(&claims(&[]));
    assert_eq!(
        jwt::verify(&token, &provider::jwks(), expect()).expect("valid")["sub"],
        "alice"
    );
    let mut parts: Vec<String> = token.split('.').map(str::to_string).collect();
    parts[1] = B64.encode(claims(&[("sub", json!("root"))]).to_string());
    let forged = parts.join(".");
    assert_eq!(
        jwt::verify(&forged, &provider::jwks(), expect()),
        Err(jwt::TokenError::BadSignature)
    );
}

#[test]
fn der_round_trip() {
    let n = vec![0x80, 1, 2, 3];
    let e = vec![1, 0, 1];
    let der = jwt::rsa_public_der(&n, &e);
    assert_eq!(jwt::rsa_public_parts(&der), Some((n, e)));
}

#[rstest]
#[case("https://127.0.0.1:8006/_openid", true)]
#[case("http://fake-pve/_openid/", true)]
#[case("https://login.example.com/realms/x", false)]
#[case("https:///_openid", false)]
fn which_issuer_is_ours(#[case] url: &str, #[case] ours: bool) {
    assert_eq!(provider::is_ours(url), ours);
}
