use std::collections::BTreeMap;

use rstest::rstest;
use serde_json::{Value, json};

use super::outbox::Status;
use super::*;

fn change(set: Value) -> Change {
    Change {
        set: serde_json::from_value(set).expect("accepted"),
        ..Default::default()
    }
}

fn no_mail(_: &str) -> Option<String> {
    None
}

fn root_mail(u: &str) -> Option<String> {
    (u == "root@pam").then(|| "root@example.com".to_string())
}

fn with_gotify() -> Notifications {
    let mut n = Notifications::default();
    n.create(
        Kind::Gotify,
        "g1",
        Change {
            set: BTreeMap::from([("server".into(), json!("http://127.0.0.1:9"))]),
            private: BTreeMap::from([("token".into(), json!("tok"))]),
            ..Default::default()
        },
    )
    .expect("accepted");
    n
}

#[test]
fn a_fresh_cluster_has_the_builtins() {
    let n = Notifications::default();
    assert!(n.is_empty());
    assert_eq!(
        n.get(Kind::Sendmail, "mail-to-root")
            .expect("accepted")
            .list("mailto-user"),
        vec!["root@pam"]
    );
    assert_eq!(
        n.get(Kind::Matcher, "default-matcher")
            .expect("accepted")
            .list("target"),
        vec!["mail-to-root"]
    );
    assert_eq!(n.origin("mail-to-root"), Origin::Builtin);
}

#[rstest]
#[case(Kind::Sendmail, "mail-to-root")]
#[case(Kind::Matcher, "g1")]
#[case(Kind::Webhook, "default-matcher")]
fn names_are_unique_across_kinds(#[case] kind: Kind, #[case] name: &str) {
    let mut n = with_gotify();
    let e = n
        .create(kind, name, change(json!({"mailto": ["a@example.com"]})))
        .expect_err("refused");
    assert_eq!(e.kind(), crate::model::ErrorKind::BadRequest);
    assert_eq!(
        e.to_string(),
        format!("Cannot create '{name}', an entity with the same name already exists")
    );
}

#[test]
fn a_target_in_use_cannot_be_deleted_until_unused() {
    let mut n = with_gotify();
    n.create(Kind::Matcher, "m1", change(json!({"target": ["g1"]})))
        .expect("accepted");
    let e = n.delete(Kind::Gotify, "g1").expect_err("refused");
    assert_eq!(e.to_string(), "cannot delete 'g1', referenced by: m1");
    n.delete(Kind::Matcher, "m1").expect("accepted");
    n.delete(Kind::Gotify, "g1").expect("accepted");
    assert!(n.private.is_empty());
    assert!(n.is_empty());
}

#[test]
fn deleting_a_builtin_resets_it() {
    let mut n = Notifications::default();
    n.update(
        Kind::Sendmail,
        "mail-to-root",
        change(json!({"comment": "mine"})),
    )
    .expect("accepted");
    assert_eq!(n.origin("mail-to-root"), Origin::ModifiedBuiltin);
    // Referenced by default-matcher, yet a built-in resets.
    n.delete(Kind::Sendmail, "mail-to-root").expect("accepted");
    assert_eq!(n.origin("mail-to-root"), Origin::Builtin);
}

#[rstest]
#[case(Kind::Gotify, "mail-to-root", "endpoint 'mail-to-root' not found")]
#[case(Kind::Matcher, "nope", "matcher 'nope' not found")]
fn the_wrong_kind_is_not_found(#[case] kind: Kind, #[case] name: &str, #[case] msg: &str) {
    let mut n = Notifications::default();
    assert_eq!(n.delete(kind, name).expect_err("refused").to_string(), msg);
}

#[test]
fn matchers_name_existing_targets_only() {
    let mut n = Notifications::default();
    let e = n
        .create(Kind::Matcher, "m1", change(json!({"target": ["ghost"]})))
        .expect_err("refused");
    assert_eq!(e.to_string(), "endpoint 'ghost' does not exist");
}

#[test]
fn mail_targets_need_a_recipient() {
    let mut n = Notifications::default();
    let e = n
        .create(Kind::Sendmail, "s1", change(json!({"comment": "x"})))
        .expect_err("refused");
    assert_eq!(e.to_string(), NO_RECIPIENT);
    n.create(
        Kind::Sendmail,
        "s1",
        change(json!({"mailto": ["a@example.com"]})),
    )
    .expect("accepted");
    let mut del = change(json!({}));
    del.delete = vec!["mailto".into()];
    assert_eq!(
        n.update(Kind::Sendmail, "s1", del)
            .expect_err("refused")
            .to_string(),
        NO_RECIPIENT
    );
}

#[test]
fn a_stale_digest_is_refused() {
    let mut n = with_gotify();
    let mut c = change(json!({"comment": "x"}));
    c.digest = Some("0".repeat(64));
    assert_eq!(
        n.update(Kind::Gotify, "g1", c)
            .expect_err("refused")
            .to_string(),
        MODIFIED
    );
    let mut c = change(json!({"comment": "x"}));
    c.digest = Some(n.digest());
    n.update(Kind::Gotify, "g1", c).expect("accepted");
}

#[test]
fn webhook_secrets_are_kept_by_name_and_never_shown() {
    let mut n = Notifications::default();
    n.create(
        Kind::Webhook,
        "w1",
        Change {
            set: serde_json::from_value(json!({"url": "http://127.0.0.1:1/x", "method": "post"}))
                .expect("accepted"),
            private: BTreeMap::from([("secret".into(), json!(["name=tok,value=czNjcjN0"]))]),
            ..Default::default()
        },
    )
    .expect("accepted");
    assert_eq!(n.secret_names("w1"), vec!["tok"]);
    assert!(!n.cfg_text().contains("czNjcjN0"));
    // Naming a secret without a value keeps it; an unknown one is refused.
    let keep = Change {
        private: BTreeMap::from([("secret".into(), json!(["name=tok"]))]),
        ..Default::default()
    };
    n.update(Kind::Webhook, "w1", keep).expect("accepted");
    assert_eq!(n.secrets("w1")["tok"], "s3cr3t");
    let unknown = Change {
        private: BTreeMap::from([("secret".into(), json!(["name=other"]))]),
        ..Default::default()
    };
    assert_eq!(
        n.update(Kind::Webhook, "w1", unknown)
            .expect_err("refused")
            .to_string(),
        "secret 'other' not known"
    );
    let bad_header = change(json!({"header": ["name=X-A"]}));
    assert_eq!(
        n.update(Kind::Webhook, "w1", bad_header)
            .expect_err("refused")
            .to_string(),
        "header 'X-A' has empty value"
    );
}

#[test]
fn notify_goes_through_the_matchers_to_enabled_targets() {
    let mut n = with_gotify();
    n.create(
        Kind::Sendmail,
        "ops",
        change(json!({"mailto": ["ops@example.com"]})),
    )
    .expect("accepted");
    n.create(
        Kind::Matcher,
        "failures",
        change(json!({"match-severity": ["error"], "target": ["ops", "g1"]})),
    )
    .expect("accepted");
    n.update(Kind::Gotify, "g1", change(json!({"disable": true})))
        .expect("accepted");
    let mut note = Notification::test("x", 0);
    note.severity = Severity::Error;
    n.notify(&note, &root_mail);
    let targets: Vec<&str> = n
        .outbox()
        .deliveries()
        .iter()
        .map(|d| d.target.as_str())
        .collect();
    // default-matcher sends everything to mail-to-root; g1 is disabled.
    assert_eq!(targets, vec!["mail-to-root", "ops"]);
    let root = &n.outbox().deliveries()[0];
    assert_eq!(
        root.mail.as_ref().expect("accepted")["to"],
        json!(["root@example.com"])
    );
    assert_eq!(root.status, Status::NotDelivered);
    note.severity = Severity::Info;
    n.outbox_mut().clear();
    n.notify(&note, &no_mail);
    assert_eq!(n.outbox().deliveries().len(), 1);
}

#[test]
fn a_test_on_loopback_is_queued_with_the_rendered_request() {
    let mut n = Notifications::default();
    use base64::Engine;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    n.create(
        Kind::Webhook,
        "hook",
        change(json!({
            "url": "http://127.0.0.1:8080/hook/{{ severity }}",
            "method": "put",
            "header": [format!("name=Content-Type,value={}", b64("application/json"))],
            "body": b64("{\"t\": \"{{ title }}\", \"m\": \"{{ escape message }}\"}"),
        })),
    )
    .expect("accepted");
    n.test_target("hook", 100, &no_mail).expect("accepted");
    let sends = n.outbox_mut().take_pending();
    assert_eq!(sends.len(), 1);
    let r = &sends[0].request;
    assert_eq!(r.method, "PUT");
    assert_eq!(r.url, "http://127.0.0.1:8080/hook/info");
    assert_eq!(
        r.body,
        "{\"t\": \"Test notification\", \"m\": \"This is a test of the notification target 'hook'.\"}"
    );
    assert_eq!(
        r.headers[0],
        ("Content-Type".into(), "application/json".into())
    );
    assert_eq!(n.outbox().deliveries()[0].status, Status::Pending);
    n.outbox_mut().settle(sends[0].id, true, "HTTP 200".into());
    assert_eq!(n.outbox().deliveries()[0].status, Status::Delivered);
    assert_eq!(
        n.test_target("ghost", 0, &no_mail)
            .expect_err("refused")
            .to_string(),
        "notification target 'ghost' does not exist"
    );
}

#[rstest]
#[case("http://127.0.0.1:80/x", true)]
#[case("https://localhost/x", true)]
#[case("http://[::1]:9/", true)]
#[case("http://user@127.1.2.3", true)]
#[case("http://example.com/127.0.0.1", false)]
#[case("http://10.0.0.1/", false)]
#[case("ftp://127.0.0.1/", false)]
fn only_loopback_urls_are_sent(#[case] url: &str, #[case] sent: bool) {
    assert_eq!(outbox::on_loopback(url), sent);
}

#[test]
fn a_saved_world_keeps_the_config_but_not_the_outbox() {
    let mut n = with_gotify();
    n.test_target("g1", 0, &no_mail).expect("sent");
    let saved = serde_json::to_string(&n).expect("saved");
    let back: Notifications = serde_json::from_str(&saved).expect("read back");
    assert_eq!(back.entries, n.entries);
    assert_eq!(back.private_text("g1", "token").as_deref(), Some("tok"));
    assert!(back.outbox().deliveries().is_empty());
    // A world saved without the area has the built-ins.
    let fresh: Notifications = serde_json::from_str("{}").expect("read");
    assert!(fresh.is_empty());
}
