//! Realms (`/access/domains`: `create`, `read`, `update`, `delete`,
//! `sync`), realm sync jobs (`create_job`, `read_job`, `update_job`,
//! `delete_job`, `syncjob_index`) and second factors (`add_tfa_entry`,
//! `list_user_tfa`, `get_tfa_entry`, `update_tfa_entry`, `delete_tfa`,
//! `list_tfa`, `unlock_tfa`, and a login's `tfa-challenge`), and OpenID
//! logins (`openid_auth_url`, `openid_login`, with a browser's visit to
//! fake-pve's emulated provider between them).
//!
//! Realm names in features are placeholders (`{realm:corp}`, the
//! scenario's own id) or, in `@fake-only` scenarios, the names a seeded
//! scenario declares. TOTP values are computed from the target's clock
//! as the last ticket shows it, so that they hold on fake-pve's manual
//! clock and on a real cluster alike.

use cucumber::gherkin::Step;
use cucumber::{given, then, when};
use pve_client::api::seg;
use pve_client::api::tfa::{totp_code, totp_uri};
use pve_client::{Method, Params};

use super::table_params;
use super::vm::remember_upid;
use crate::world::{Made, PveWorld};

/// The secret of every TOTP key the features add (RFC 6238's test key).
const SECRET: &str = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";

async fn create_domain(w: &mut PveWorld, realm: &str, kind: &str, mut params: Params) {
    let id = w.expand(realm);
    params.push("realm", id.as_str());
    params.push("type", kind);
    w.call(Method::POST, "/access/domains", params).await;
    if w.last().ok() {
        w.made(Made::Realm(id));
    }
}

#[given(expr = "an LDAP realm {string}")]
async fn given_ldap(w: &mut PveWorld, step: &Step, realm: String) {
    let mut params = table_params(w, step);
    for (k, v) in [
        ("server1", "ldap.example.com"),
        ("base_dn", "dc=example,dc=com"),
        ("user_attr", "uid"),
    ] {
        if !params.pairs().iter().any(|(n, _)| n == k) {
            params.push(k, v);
        }
    }
    create_domain(w, &realm, "ldap", params).await;
    let o = w.last();
    assert!(o.ok(), "creating the realm {realm} failed: {o:?}");
}

#[when(expr = "I create the realm {string} of type {string}")]
async fn when_create(w: &mut PveWorld, step: &Step, realm: String, kind: String) {
    let params = table_params(w, step);
    create_domain(w, &realm, &kind, params).await;
}

#[when("I list the realms")]
async fn list_domains(w: &mut PveWorld) {
    w.call(Method::GET, "/access/domains", Params::new()).await;
}

#[when(expr = "I read the realm {string}")]
async fn read_domain(w: &mut PveWorld, realm: String) {
    let path = format!("/access/domains/{}", seg(&w.expand(&realm)));
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I update the realm {string} with:")]
async fn update_domain(w: &mut PveWorld, step: &Step, realm: String) {
    let path = format!("/access/domains/{}", seg(&w.expand(&realm)));
    let params = table_params(w, step);
    w.call(Method::PUT, &path, params).await;
}

#[when(expr = "I delete the realm {string}")]
async fn delete_domain(w: &mut PveWorld, realm: String) {
    let path = format!("/access/domains/{}", seg(&w.expand(&realm)));
    w.call(Method::DELETE, &path, Params::new()).await;
}

#[when(expr = "I sync the realm {string}")]
async fn sync(w: &mut PveWorld, step: &Step, realm: String) {
    let path = format!("/access/domains/{}/sync", seg(&w.expand(&realm)));
    let params = table_params(w, step);
    w.call(Method::POST, &path, params).await;
    remember_upid(w);
}

#[when(expr = "I create the realm sync job {string}")]
async fn create_job(w: &mut PveWorld, step: &Step, id: String) {
    let id = w.expand(&id);
    let path = format!("/cluster/jobs/realm-sync/{}", seg(&id));
    let params = table_params(w, step);
    w.call(Method::POST, &path, params).await;
    if w.last().ok() {
        w.made(Made::RealmSyncJob(id));
    }
}

#[when(expr = "I read the realm sync job {string}")]
async fn read_job(w: &mut PveWorld, id: String) {
    let path = format!("/cluster/jobs/realm-sync/{}", seg(&w.expand(&id)));
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I update the realm sync job {string} with:")]
async fn update_job(w: &mut PveWorld, step: &Step, id: String) {
    let path = format!("/cluster/jobs/realm-sync/{}", seg(&w.expand(&id)));
    let params = table_params(w, step);
    w.call(Method::PUT, &path, params).await;
}

#[when(expr = "I delete the realm sync job {string}")]
async fn delete_job(w: &mut PveWorld, id: String) {
    let path = format!("/cluster/jobs/realm-sync/{}", seg(&w.expand(&id)));
    w.call(Method::DELETE, &path, Params::new()).await;
}

#[when("I list the realm sync jobs")]
async fn syncjob_index(w: &mut PveWorld) {
    w.call(Method::GET, "/cluster/jobs/realm-sync", Params::new())
        .await;
}

// ---- second factors -------------------------------------------------

/// The target's time in a ticket (`PVE:<data>:<8 hex digits>::<sig>`).
fn ticket_time(ticket: &str) -> u64 {
    let plain = ticket.split_once("::").map_or(ticket, |(p, _)| p);
    let hex = plain.rsplit(':').next().unwrap_or_default();
    u64::from_str_radix(hex, 16).unwrap_or_else(|e| panic!("no time in ticket {ticket}: {e}"))
}

/// The password `who` made with, to confirm changes to second factors.
fn password_of(w: &PveWorld, who: &str) -> String {
    let userid = w.userid(&w.expand(who));
    w.passwords
        .get(&userid)
        .cloned()
        .unwrap_or_else(|| panic!("no password known for {userid}"))
}

#[when(expr = "{string} adds the TOTP key {string}")]
#[given(expr = "{string} adds the TOTP key {string}")]
async fn add_totp(w: &mut PveWorld, who: String, description: String) {
    let userid = w.userid(&w.expand(&who));
    let (ticket, _) = w.ticket_of(&who);
    let code = totp_code(SECRET, ticket_time(&ticket)).unwrap_or_default();
    let password = password_of(w, &who);
    let uri = totp_uri("pve", &userid, SECRET);
    let params = Params::new()
        .set("type", "totp")
        .set("description", description.as_str())
        .set("totp", uri.as_str())
        .set("value", code.as_str())
        .set("password", password.as_str());
    w.act_as(&who);
    let path = format!("/access/tfa/{}", seg(&userid));
    w.call(Method::POST, &path, params).await;
    let o = w.last();
    if o.ok()
        && let Some(id) = o.data["id"].as_str()
    {
        let id = id.to_string();
        w.vars.insert(format!("totp-{description}"), id);
    }
}

#[when(expr = "{string} adds recovery keys")]
#[given(expr = "{string} adds recovery keys")]
async fn add_recovery(w: &mut PveWorld, who: String) {
    let userid = w.userid(&w.expand(&who));
    let password = password_of(w, &who);
    let params = Params::new()
        .set("type", "recovery")
        .set("password", password.as_str());
    w.act_as(&who);
    let path = format!("/access/tfa/{}", seg(&userid));
    w.call(Method::POST, &path, params).await;
    let keys: Vec<String> = w.last().data["recovery"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|k| k.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    for (i, k) in keys.into_iter().enumerate() {
        w.vars.insert(format!("recovery-{i}"), k);
    }
}

/// Answers the challenge of the last login answer with `response`.
async fn answer(w: &mut PveWorld, who: &str, response: &str) {
    let userid = w.userid(&w.expand(who));
    let challenge = w.last().data["ticket"]
        .as_str()
        .unwrap_or_else(|| panic!("the last answer holds no ticket: {:?}", w.last()))
        .to_string();
    let params = Params::new()
        .set("username", userid.as_str())
        .set("password", response)
        .set("tfa-challenge", challenge.as_str());
    super::auth::create_ticket(w, who, params).await;
}

#[when(expr = "{string} answers the challenge with the TOTP key")]
async fn answer_totp(w: &mut PveWorld, who: String) {
    let challenge = w.last().data["ticket"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // The next step's value: the step the key was added in is used up.
    let code = totp_code(SECRET, ticket_time(&challenge) + 30).unwrap_or_default();
    answer(w, &who, &format!("totp:{code}")).await;
}

#[when(expr = "{string} answers the challenge with a wrong TOTP value")]
async fn answer_wrong_totp(w: &mut PveWorld, who: String) {
    let challenge = w.last().data["ticket"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let t = ticket_time(&challenge);
    let near: Vec<String> = (0..4)
        .filter_map(|i| totp_code(SECRET, (t + i * 30).saturating_sub(30)))
        .collect();
    let wrong = (0..1_000_000u32)
        .map(|n| format!("{n:06}"))
        .find(|c| !near.contains(c))
        .unwrap_or_default();
    answer(w, &who, &format!("totp:{wrong}")).await;
}

#[when(expr = "{string} answers the challenge with {string}")]
async fn answer_with(w: &mut PveWorld, who: String, response: String) {
    let response = w.expand(&response);
    answer(w, &who, &response).await;
}

#[when(expr = "I list the second factors of {string}")]
async fn list_user_tfa(w: &mut PveWorld, who: String) {
    let path = format!("/access/tfa/{}", seg(&w.userid(&w.expand(&who))));
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I read the second factor {string} of {string}")]
async fn get_tfa_entry(w: &mut PveWorld, id: String, who: String) {
    let path = format!(
        "/access/tfa/{}/{}",
        seg(&w.userid(&w.expand(&who))),
        seg(&w.expand(&id))
    );
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I update the second factor {string} of {string} with:")]
async fn update_tfa_entry(w: &mut PveWorld, step: &Step, id: String, who: String) {
    let path = format!(
        "/access/tfa/{}/{}",
        seg(&w.userid(&w.expand(&who))),
        seg(&w.expand(&id))
    );
    let params = table_params(w, step);
    w.call(Method::PUT, &path, params).await;
}

#[when(expr = "I delete the second factor {string} of {string}")]
async fn delete_tfa(w: &mut PveWorld, step: &Step, id: String, who: String) {
    let path = format!(
        "/access/tfa/{}/{}",
        seg(&w.userid(&w.expand(&who))),
        seg(&w.expand(&id))
    );
    let params = table_params(w, step);
    w.call(Method::DELETE, &path, params).await;
}

#[when(expr = "I add a second factor for {string} with:")]
async fn add_tfa_entry(w: &mut PveWorld, step: &Step, who: String) {
    let path = format!("/access/tfa/{}", seg(&w.userid(&w.expand(&who))));
    let params = table_params(w, step);
    w.call(Method::POST, &path, params).await;
}

#[when("I list the second factors")]
async fn list_tfa(w: &mut PveWorld) {
    w.call(Method::GET, "/access/tfa", Params::new()).await;
}

#[when(expr = "I unlock the second factors of {string}")]
async fn unlock_tfa(w: &mut PveWorld, who: String) {
    let path = format!(
        "/access/users/{}/unlock-tfa",
        seg(&w.userid(&w.expand(&who)))
    );
    w.call(Method::PUT, &path, Params::new()).await;
}

#[then("the login asks for a second factor")]
fn needs_tfa(w: &mut PveWorld) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    assert_eq!(o.data["NeedTFA"], 1, "{:?}", o.data);
    let ticket = o.data["ticket"].as_str().unwrap_or_default();
    assert!(ticket.starts_with("PVE:!tfa!"), "{ticket}");
    assert!(o.data.get("cap").is_none(), "{:?}", o.data);
}

#[then("the login is complete")]
fn login_complete(w: &mut PveWorld) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    assert!(o.data.get("NeedTFA").is_none(), "{:?}", o.data);
    assert!(o.data.get("cap").is_some(), "{:?}", o.data);
}

/// Where the OpenID features' logins send the browser back to.
const OPENID_REDIRECT: &str = "https://pve.example.com:8006";

/// The parameters of a URL's query, decoded.
fn query_params(url: &str) -> std::collections::BTreeMap<String, String> {
    let q = url.split_once('?').map_or("", |(_, q)| q);
    q.split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| {
            let dec = |s: &str| crate::world::percent_decode(&s.replace('+', " "));
            (dec(k), dec(v))
        })
        .collect()
}

/// `POST /access/openid/auth-url` (`openid_auth_url`) without
/// credentials; the URL is remembered as `{var:openid-url}`.
#[when(expr = "I ask for the OpenID authorization URL of realm {string}")]
async fn openid_auth_url(w: &mut PveWorld, realm: String) {
    let params = Params::new()
        .set("realm", w.expand(&realm).as_str())
        .set("redirect-url", OPENID_REDIRECT);
    w.call_raw(Method::POST, "/access/openid/auth-url", &[], params)
        .await;
    let o = w.last();
    if o.ok() {
        let url = o.data.as_str().unwrap_or_default().to_string();
        w.vars.insert("openid-url".into(), url);
    }
}

#[then(expr = "the OpenID authorization URL has {string} = {string}")]
fn openid_url_has(w: &mut PveWorld, key: String, want: String) {
    let url = w.expand("{var:openid-url}");
    let params = query_params(&url);
    assert_eq!(params.get(&key), Some(&w.expand(&want)), "{url}");
}

#[then(expr = "the OpenID authorization URL goes to the provider's {string}")]
fn openid_url_goes_to(w: &mut PveWorld, endpoint: String) {
    let url = w.expand("{var:openid-url}");
    let base = url.split('?').next().unwrap_or_default();
    assert!(base.ends_with(&format!("/_openid/{endpoint}")), "{url}");
}

/// A browser at fake-pve's emulated provider: the login form of the
/// remembered authorization URL sent with `user` and `password`. A
/// redirect back leaves its `code` and `state` as `{var:openid-code}`
/// and `{var:openid-state}`; the status is `{var:openid-status}`.
#[when(expr = "{string} signs in at the OpenID provider with password {string}")]
async fn openid_sign_in(w: &mut PveWorld, user: String, password: String) {
    let url = w.expand("{var:openid-url}");
    let at = url
        .find("/_openid/")
        .unwrap_or_else(|| panic!("not the emulated provider: {url}"));
    let fake = w.fake();
    let http = reqwest::Client::builder()
        .add_root_certificate(
            reqwest::Certificate::from_pem(fake.cert_pem().unwrap_or_default().as_bytes())
                .unwrap_or_else(|e| panic!("{e}")),
        )
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let form = [
        ("username", w.expand(&user)),
        ("password", w.expand(&password)),
    ];
    let r = http
        .post(format!("{}{}", fake.url(), &url[at..]))
        .form(&form)
        .send()
        .await
        .unwrap_or_else(|e| panic!("the provider: {e}"));
    let status = r.status().as_u16();
    let location = r
        .headers()
        .get("location")
        .and_then(|l| l.to_str().ok())
        .map(str::to_string);
    w.vars.insert("openid-status".into(), status.to_string());
    if let Some(location) = location {
        assert!(location.starts_with(OPENID_REDIRECT), "{location}");
        let back = query_params(&location);
        for k in ["code", "state", "error"] {
            if let Some(v) = back.get(k) {
                w.vars.insert(format!("openid-{k}"), v.clone());
            }
        }
    }
}

#[then(expr = "the OpenID provider answers {int}")]
fn openid_provider_answers(w: &mut PveWorld, status: u16) {
    assert_eq!(w.expand("{var:openid-status}"), status.to_string());
}

/// `POST /access/openid/login` (`openid_login`) without credentials, with
/// the `code` and `state` the provider sent back.
#[when("I log in with the OpenID provider's answer")]
async fn openid_login(w: &mut PveWorld) {
    let params = Params::new()
        .set("state", w.expand("{var:openid-state}").as_str())
        .set("code", w.expand("{var:openid-code}").as_str())
        .set("redirect-url", OPENID_REDIRECT);
    w.call_raw(Method::POST, "/access/openid/login", &[], params)
        .await;
}
