//! Authentication: logins (`create_ticket`), renewal, tickets as cookie
//! or header, CSRF tokens, and API tokens (`generate_token`,
//! `token_index`, `read_token`, `update_token_info`, `remove_token`).

use cucumber::gherkin::Step;
use cucumber::{given, then, when};
use pve_client::api::seg;
use pve_client::{Method, Params};

use super::table_params;
use crate::world::{Made, PveWorld};

/// `POST /access/ticket` without credentials, as a login form does; a
/// success opens a ticket session for `actor`.
pub(crate) async fn create_ticket(w: &mut PveWorld, actor: &str, params: Params) {
    w.call_raw(Method::POST, "/access/ticket", &[], params)
        .await;
    let o = w.last();
    if o.ok() {
        let ticket = o.data["ticket"].as_str().unwrap_or_default().to_string();
        let csrf = o.data["CSRFPreventionToken"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        w.add_ticket_session(actor, &ticket, &csrf);
    }
}

#[when(expr = "{string} logs in with password {string}")]
#[given(expr = "{string} logs in with password {string}")]
async fn login(w: &mut PveWorld, who: String, password: String) {
    let userid = w.userid(&w.expand(&who));
    let params = Params::new()
        .set("username", userid.as_str())
        .set("password", w.expand(&password).as_str());
    create_ticket(w, &who, params).await;
}

#[when(expr = "{string} logs in to realm {string} with password {string}")]
async fn login_realm(w: &mut PveWorld, who: String, realm: String, password: String) {
    let userid = w.userid(&w.expand(&who));
    let user = userid.split('@').next().unwrap_or_default().to_string();
    let params = Params::new()
        .set("username", user.as_str())
        .set("realm", w.expand(&realm).as_str())
        .set("password", w.expand(&password).as_str());
    create_ticket(w, &who, params).await;
}

#[when(expr = "I log in with:")]
async fn login_with(w: &mut PveWorld, step: &Step) {
    let params = table_params(w, step);
    create_ticket(w, "login", params).await;
}

#[when(expr = "{string} renews the ticket")]
async fn renew_ticket(w: &mut PveWorld, who: String) {
    let (ticket, csrf) = w.ticket_of(&who);
    // The old ticket stays known as `{ticket:WHO-old}`.
    w.tickets
        .insert(format!("{who}-old"), (ticket.clone(), csrf));
    let userid = w.userid(&who);
    let params = Params::new()
        .set("username", userid.as_str())
        .set("password", ticket.as_str());
    create_ticket(w, &who, params).await;
}

#[when(expr = "{string} asks for a ticket for {string} with the own ticket")]
async fn ticket_for_another(w: &mut PveWorld, who: String, other: String) {
    let (ticket, _) = w.ticket_of(&who);
    let userid = w.userid(&other);
    let params = Params::new()
        .set("username", userid.as_str())
        .set("password", ticket.as_str());
    create_ticket(w, &other, params).await;
}

#[then(expr = "the ticket is for {string}")]
fn ticket_is_for(w: &mut PveWorld, who: String) {
    let userid = w.userid(&who);
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    assert_eq!(
        o.data["username"].as_str(),
        Some(userid.as_str()),
        "{}",
        o.data
    );
    let ticket = o.data["ticket"].as_str().unwrap_or_default();
    let re = regex::Regex::new(&format!(
        "^PVE:{}:[0-9A-F]{{8}}::[A-Za-z0-9+/=]+$",
        regex::escape(&userid)
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(re.is_match(ticket), "not a PVE ticket: {ticket}");
    let csrf = o.data["CSRFPreventionToken"].as_str().unwrap_or_default();
    assert!(
        regex::Regex::new("^[0-9A-F]{8}:[A-Za-z0-9+/]+$")
            .unwrap_or_else(|e| panic!("{e}"))
            .is_match(csrf),
        "not a CSRF prevention token: {csrf}"
    );
}

#[then(expr = "the ticket was issued at {int}")]
fn ticket_issued_at(w: &mut PveWorld, at: i64) {
    let o = w.last();
    let ticket = o.data["ticket"].as_str().unwrap_or_default();
    let hex = ticket
        .split("::")
        .next()
        .and_then(|p| p.rsplit(':').next())
        .unwrap_or_default();
    assert_eq!(i64::from_str_radix(hex, 16).ok(), Some(at), "{ticket}");
}

#[when(expr = "{string} calls {word} {string} with the ticket but without the CSRF token")]
async fn without_csrf(w: &mut PveWorld, step: &Step, who: String, m: String, path: String) {
    let (ticket, _) = w.ticket_of(&who);
    let params = table_params(w, step);
    let path = w.expand(&path);
    let headers = [("Cookie".to_string(), format!("PVEAuthCookie={ticket}"))];
    w.call_raw(super::method(&m), &path, &headers, params).await;
}

#[when(expr = "{string} calls {word} {string} with the ticket and the CSRF token {string}")]
async fn with_csrf(
    w: &mut PveWorld,
    step: &Step,
    who: String,
    m: String,
    path: String,
    csrf: String,
) {
    let (ticket, _) = w.ticket_of(&who);
    let params = table_params(w, step);
    let path = w.expand(&path);
    let headers = [
        ("Cookie".to_string(), format!("PVEAuthCookie={ticket}")),
        ("CSRFPreventionToken".to_string(), w.expand(&csrf)),
    ];
    w.call_raw(super::method(&m), &path, &headers, params).await;
}

fn token_path(w: &PveWorld, token: &str) -> (String, String, String) {
    let full = w.tokenid(&w.expand(token));
    let (user, id) = full.split_once('!').unwrap_or_default();
    (
        format!("/access/users/{}/token/{}", seg(user), seg(id)),
        user.to_string(),
        id.to_string(),
    )
}

/// `POST /access/users/{userid}/token/{tokenid}`; a success opens a
/// session for the token (actor `alice!ci`).
async fn generate_token(w: &mut PveWorld, token: &str, params: Params) {
    let (path, user, id) = token_path(w, token);
    w.call(Method::POST, &path, params).await;
    let o = w.last().clone();
    if o.ok() {
        let full = o.data["full-tokenid"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let secret = o.data["value"].as_str().unwrap_or_default().to_string();
        w.made(Made::Token(user, id));
        w.secrets.insert(full.clone(), secret.clone());
        w.add_token_session(token, &full, &secret);
    }
}

#[given(expr = "{string} has an API token {string}")]
async fn given_user_token(w: &mut PveWorld, step: &Step, user: String, token: String) {
    assert!(
        token.starts_with(&format!("{user}!")),
        "the token {token} is not {user}'s"
    );
    given_token(w, step, token).await;
}

#[given(expr = "an API token {string}")]
async fn given_token(w: &mut PveWorld, step: &Step, token: String) {
    let params = table_params(w, step);
    generate_token(w, &token, params).await;
    let o = w.last();
    assert!(o.ok(), "creating the token {token} failed: {o:?}");
}

#[when(expr = "I create the API token {string}")]
async fn create_token(w: &mut PveWorld, step: &Step, token: String) {
    let params = table_params(w, step);
    generate_token(w, &token, params).await;
}

#[when(expr = "I use the API token {string}")]
#[given(expr = "I use the API token {string}")]
fn use_token(w: &mut PveWorld, token: String) {
    w.act_as(&token);
}

#[when(expr = "I use the API token {string} with the wrong secret")]
fn use_token_wrong_secret(w: &mut PveWorld, token: String) {
    let full = w.tokenid(&token);
    let actor = format!("{token} (wrong secret)");
    w.add_token_session(&actor, &full, "00000000-0000-0000-0000-000000000000");
    w.act_as(&actor);
}

#[when(expr = "I list the API tokens of {string}")]
async fn token_index(w: &mut PveWorld, who: String) {
    let userid = w.userid(&w.expand(&who));
    let path = format!("/access/users/{}/token", seg(&userid));
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I read the API token {string}")]
async fn read_token(w: &mut PveWorld, token: String) {
    let (path, ..) = token_path(w, &token);
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I update the API token {string} with:")]
async fn update_token_info(w: &mut PveWorld, step: &Step, token: String) {
    let (path, ..) = token_path(w, &token);
    let params = table_params(w, step);
    w.call(Method::PUT, &path, params).await;
}

/// `PUT .../token/{tokenid}` with `regenerate` (9.2): the token's session
/// takes the new secret; the old one stays as the actor
/// `<token> (old secret)`.
#[when(expr = "I regenerate the API token {string}")]
async fn regenerate_token(w: &mut PveWorld, token: String) {
    let (path, ..) = token_path(w, &token);
    let full = w.tokenid(&w.expand(&token));
    let old = w.secrets.get(&full).cloned();
    w.call(Method::PUT, &path, Params::new().set("regenerate", 1))
        .await;
    let o = w.last().clone();
    if o.ok() {
        let secret = o.data["value"].as_str().unwrap_or_default().to_string();
        if let Some(old) = old {
            w.add_token_session(&format!("{token} (old secret)"), &full, &old);
        }
        w.secrets.insert(full.clone(), secret.clone());
        w.add_token_session(&token, &full, &secret);
    }
}

#[when(expr = "I remove the API token {string}")]
async fn remove_token(w: &mut PveWorld, token: String) {
    let (path, user, id) = token_path(w, &token);
    w.call(Method::DELETE, &path, Params::new()).await;
    if w.last().ok() {
        w.unmade(&Made::Token(user, id));
    }
}

#[then(expr = "the new token's secret is a UUID")]
fn secret_is_uuid(w: &mut PveWorld) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let secret = o.data["value"].as_str().unwrap_or_default();
    let re = regex::Regex::new("^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(re.is_match(secret), "not a UUID secret");
}
