use super::*;
use rstest::rstest;

/// RFC 6238's test secrets ("12345678901234567890" and its longer
/// forms) and its table's values at 59 s and 1111111109 s.
#[rstest]
#[case(
    Algorithm::Sha1,
    "3132333435363738393031323334353637383930",
    59,
    "94287082"
)]
#[case(
    Algorithm::Sha1,
    "3132333435363738393031323334353637383930",
    1_111_111_109,
    "07081804"
)]
#[case(
    Algorithm::Sha256,
    "3132333435363738393031323334353637383930313233343536373839303132",
    59,
    "46119246"
)]
#[case(
    Algorithm::Sha512,
    "31323334353637383930313233343536373839303132333435363738393031323334353637383930313233343536373839303132333435363738393031323334",
    59,
    "90693936"
)]
fn rfc6238_vectors(
    #[case] algorithm: Algorithm,
    #[case] secret: &str,
    #[case] at: i64,
    #[case] want: &str,
) {
    let t = Totp {
        secret: secret.into(),
        digits: 8,
        step: 30,
        algorithm,
    };
    assert_eq!(t.value(t.counter(at)), want);
    assert!(t.verify(want, at).is_some());
    assert!(t.verify(want, at + 120).is_none());
}

#[rstest]
#[case("otpauth://hotp/x?secret=AA", "not an otpauth uri")]
#[case("otpauth://totp/x", "missing '?' in otp uri")]
#[case("otpauth://totp/x?digits=6", "missing secret in otpauth url")]
#[case(
    "otpauth://totp/x?secret=A1",
    "failed to decode otp secret in otpauth url"
)]
#[case(
    "otpauth://totp/x?secret=AA&foo=1",
    "unrecognized otpauth uri parameter: foo"
)]
fn bad_uris(#[case] uri: &str, #[case] msg: &str) {
    assert_eq!(Totp::parse(uri).expect_err("refused").to_string(), msg);
}

const URI: &str = "otpauth://totp/pve:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&period=30&digits=6&algorithm=SHA1&issuer=pve";

fn code(at: i64) -> String {
    let t = Totp::parse(URI).expect("uri");
    t.value(t.counter(at))
}

#[test]
fn totp_entries_verify_once() {
    let mut tfa = Tfa::default();
    let mut rq = Context::new(1_700_000_000_000, 7);
    let add = |value: &str, desc: Option<&str>| AddTfa {
        kind: "totp".into(),
        description: desc.map(str::to_string),
        totp: Some(URI.into()),
        value: Some(value.into()),
        challenge: None,
    };
    let e = tfa
        .add("alice@pve", add("000000", None), &mut rq)
        .expect_err("desc");
    assert_eq!(e.message(), "'description' is required for new entries");
    let now = 1_700_000_000;
    let bad = if code(now) == "000000" {
        "111111"
    } else {
        "000000"
    };
    let e = tfa
        .add("alice@pve", add(bad, Some("phone")), &mut rq)
        .expect_err("value");
    assert_eq!(e.message(), "failed to verify TOTP challenge");
    let v = tfa
        .add("alice@pve", add(&code(now), Some("phone")), &mut rq)
        .expect("add");
    let id = v["id"].as_str().expect("id").to_string();
    assert_eq!(
        tfa.challenge("alice@pve").as_deref(),
        Some(r#"{"totp":true}"#)
    );
    tfa.verify("alice@pve", &format!("totp:{}", code(now + 30)), now + 30)
        .expect("verify");
    assert_eq!(
        tfa.verify("alice@pve", &format!("totp:{}", code(now + 30)), now + 31)
            .expect_err("reused")
            .message(),
        "failed 2nd factor"
    );
    tfa.update("alice@pve", &id, None, Some(false))
        .expect("disable");
    assert_eq!(tfa.challenge("alice@pve"), None);
    assert_eq!(tfa.list_user("alice@pve")[0]["enable"], json!(0));
    assert!(!tfa.delete("alice@pve", &id).expect("delete"));
    assert!(tfa.delete("alice@pve", &id).is_err());
}

#[test]
fn recovery_keys_unlock_totp() {
    let mut tfa = Tfa::default();
    let mut rq = Context::new(1_700_000_000_000, 9);
    let now = 1_700_000_000;
    tfa.add(
        "bob@pve",
        AddTfa {
            kind: "totp".into(),
            description: Some("app".into()),
            totp: Some(URI.into()),
            value: Some(code(now)),
            challenge: None,
        },
        &mut rq,
    )
    .expect("totp");
    let v = tfa
        .add(
            "bob@pve",
            AddTfa {
                kind: "recovery".into(),
                ..AddTfa::default()
            },
            &mut rq,
        )
        .expect("recovery");
    let keys: Vec<String> = serde_json::from_value(v["recovery"].clone()).expect("keys");
    assert_eq!(keys.len(), 10);
    assert_eq!(keys[0].len(), 19);
    let again = tfa.add(
        "bob@pve",
        AddTfa {
            kind: "recovery".into(),
            ..AddTfa::default()
        },
        &mut rq,
    );
    assert_eq!(
        again.expect_err("twice").message(),
        "user already has recovery keys"
    );
    for i in 0..8 {
        let r = tfa.verify("bob@pve", "totp:99999x", now + i);
        assert!(r.is_err());
    }
    assert_eq!(tfa.list(now)[0]["totp-locked"], json!(1));
    assert!(
        tfa.verify("bob@pve", &format!("totp:{}", code(now + 60)), now + 60)
            .is_err()
    );
    tfa.verify("bob@pve", &format!("recovery:{}", keys[3]), now + 61)
        .expect("recovery");
    assert!(
        tfa.verify("bob@pve", &format!("recovery:{}", keys[3]), now + 62)
            .is_err()
    );
    assert_eq!(
        tfa.challenge("bob@pve").as_deref(),
        Some(r#"{"totp":true,"recovery":[0,1,2,4,5,6,7,8,9]}"#)
    );
    assert!(!tfa.unlock("bob@pve", now));
}
