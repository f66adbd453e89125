//! Unit tests of the data directory: the journal, snapshots, the lock.

use super::*;

#[test]
fn an_api_call_is_kept_parsed_and_comes_back_the_same() {
    let call = ApiCall {
        method: "POST".into(),
        format: Some("json".into()),
        path: "/nodes/pve/qemu".into(),
        params: Ok(BTreeMap::from([("vmid".into(), serde_json::json!("500"))])),
        upload: None,
    };
    let rec = Record::of(Call::Api(call.clone()), Some("root@pam".into()), Some(7), 9);
    let text = serde_json::to_string(&rec).expect("json");
    assert!(!text.contains("body"), "{text}");
    let back: Record = serde_json::from_str(&text).expect("record");
    assert_eq!(back.api_call(), Some(call));
    assert_eq!(back.who.as_deref(), Some("root@pam"));
    let refused = ApiCall {
        params: Err((501, "no such uri".into())),
        ..back.api_call().expect("api")
    };
    let rec = Record::of(Call::Api(refused.clone()), None, None, 1);
    assert_eq!(rec.api_call(), Some(refused));
}

#[test]
fn a_record_of_the_older_layout_replays_as_the_request_it_kept() {
    let old = r#"{"seq":3,"kind":"api","method":"POST","path":"/api2/json/nodes/pve/qemu","query":null,"content_type":"application/x-www-form-urlencoded","body":"vmid=500","who":"root@pam","now_ms":5,"seed":2}"#;
    let rec: Record = serde_json::from_str(old).expect("record");
    assert_eq!(rec.api_call(), None);
    let c = rec.control_call();
    assert_eq!(c.path, "/api2/json/nodes/pve/qemu");
    assert_eq!(c.body, b"vmid=500");
}

#[test]
fn crc32_is_zlibs() {
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32(b""), 0);
}

#[test]
fn fsync_modes_parse() {
    assert_eq!("always".parse::<Fsync>(), Ok(Fsync::Always));
    let e = "sometimes".parse::<Fsync>().expect_err("refused");
    assert_eq!(
        e.to_string(),
        "unknown fsync mode 'sometimes' (always, interval or never)"
    );
}
