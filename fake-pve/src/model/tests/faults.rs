//! Fault rules: their checks, request and task matching, counts, and a
//! task fault ending a task without its effect.

use rstest::rstest;

use super::{World, lab, qm_worker};
use crate::model::faults::{FaultRule, Faults};
use crate::model::qemu::QemuOp;

fn rule(json: &str) -> FaultRule {
    serde_json::from_str(json).expect("rule")
}

#[rstest]
#[case(
    r#"{"path": "/nodes"}"#,
    "a fault rule needs an effect: status, delay_ms, drop or task_error"
)]
#[case(r#"{"task_error": "boom"}"#, "task_error needs task_type")]
#[case(
    r#"{"status": 500, "probability": 1.5}"#,
    "probability must be between 0 and 1, got 1.5"
)]
#[case(r#"{"status": 42}"#, "status must be an HTTP status code, got 42")]
fn bad_rules(#[case] json: &str, #[case] msg: &str) {
    assert_eq!(
        Faults::default().add(rule(json)),
        Err(crate::model::Error::failed(msg))
    );
}

#[rstest]
fn rules_get_increasing_ids_and_can_be_removed() {
    let mut f = Faults::default();
    let a = f.add(rule(r#"{"status": 503}"#)).expect("a");
    let b = f.add(rule(r#"{"drop": true}"#)).expect("b");
    assert_eq!(b, a + 1);
    assert!(f.remove(a));
    assert!(!f.remove(a));
    f.clear();
    assert!(f.rules.is_empty());
}

#[rstest]
#[case(Some("GET"), "/nodes/pve/status", Some("root@pam"), true)]
#[case(Some("get"), "/nodes/pve/status", Some("root@pam"), true)]
#[case(Some("POST"), "/nodes/pve/status", Some("root@pam"), false)]
#[case(Some("GET"), "/nodes/pve/qemu", Some("root@pam"), false)]
#[case(Some("GET"), "/nodes/pve/status", Some("ci@pve"), false)]
#[case(Some("GET"), "/nodes/pve/status", None, false)]
fn requests_match_method_path_and_user(
    #[case] method: Option<&str>,
    #[case] path: &str,
    #[case] who: Option<&str>,
    #[case] hit: bool,
) {
    let mut f = Faults::default();
    f.add(rule(r#"{"method": "GET", "path": "/nodes/*/status", "user": "root@pam", "status": 503, "message": "down"}"#))
        .expect("rule");
    let got = f.on_request(method.unwrap_or("GET"), path, who);
    assert_eq!(got.is_some(), hit);
    if let Some(fault) = got {
        assert_eq!(fault.status, Some((503, "down".to_string())));
        assert!(!fault.drop);
    }
}

#[rstest]
#[case("ci@pve", "ci@pve!runner", true)]
#[case("ci@pve", "ci@pve", true)]
#[case("ci@pve!runner", "ci@pve", false)]
#[case("ci@pve!runner", "ci@pve!other", false)]
fn a_user_rule_covers_its_tokens(#[case] user: &str, #[case] who: &str, #[case] hit: bool) {
    let mut f = Faults::default();
    f.add(FaultRule {
        user: Some(user.into()),
        delay_ms: Some(10),
        ..FaultRule::default()
    })
    .expect("rule");
    assert_eq!(f.on_request("GET", "/version", Some(who)).is_some(), hit);
}

#[rstest]
fn a_counted_rule_fires_that_often() {
    let mut f = Faults::default();
    f.add(rule(r#"{"status": 500, "count": 2}"#)).expect("rule");
    let fired: Vec<bool> = (0..4)
        .map(|_| f.on_request("GET", "/version", None).is_some())
        .collect();
    assert_eq!(fired, [true, true, false, false]);
    assert_eq!(f.rules[0].hits, 2);
}

#[rstest]
fn the_default_message_is_injected_fault() {
    let mut f = Faults::default();
    f.add(rule(r#"{"status": 502}"#)).expect("rule");
    let fault = f.on_request("GET", "/version", None).expect("fires");
    assert_eq!(fault.status, Some((502, "injected fault".into())));
}

#[rstest]
fn task_rules_do_not_match_requests() {
    let mut f = Faults::default();
    f.add(rule(r#"{"task_type": "qmstart", "task_error": "boom"}"#))
        .expect("rule");
    assert!(
        f.on_request("POST", "/nodes/pve/qemu/100/status/start", None)
            .is_none()
    );
    assert_eq!(f.on_task("qmstop", "root@pam"), None);
    assert_eq!(
        f.on_task("qmstart", "root@pam").map(|(_, e)| e),
        Some("boom".into())
    );
}

#[rstest]
fn a_task_fault_ends_the_task_without_its_effect(mut lab: World) {
    lab.c
        .faults
        .add(rule(
            r#"{"task_type": "qmstart", "task_error": "start failed: injected", "count": 1}"#,
        ))
        .expect("rule");
    let upid = lab.run(
        "pve",
        qm_worker("qmstart", 100, QemuOp::Start { skiplock: false }),
    );
    assert_eq!(lab.exit(&upid), "start failed: injected");
    assert!(!lab.c.guests[&100].running());
    let again = lab.run(
        "pve",
        qm_worker("qmstart", 100, QemuOp::Start { skiplock: false }),
    );
    assert_eq!(lab.exit(&again), "OK", "the rule fired its count");
    assert!(lab.c.guests[&100].running());
}

#[rstest]
fn a_task_fault_on_a_migration_releases_the_lock() {
    let mut w = World::from_yaml(super::CLUSTER);
    w.c.faults
        .add(rule(
            r#"{"task_type": "qmigrate", "task_error": "migration aborted"}"#,
        ))
        .expect("rule");
    let req = crate::model::qemu::MigrateRequest {
        node: "pve1".into(),
        vmid: 200,
        target: "pve2".into(),
        online: true,
        with_local_disks: false,
        targetstorage: None,
        who: super::root(),
        options: Default::default(),
        now: super::T0,
    };
    let worker = w.c.vm_ops().migrate_vm(req).expect("accepted");
    let upid = w.run("pve1", worker);
    assert_eq!(w.exit(&upid), "migration aborted");
    assert_eq!(w.c.guests[&200].node, "pve1");
    assert_eq!(w.conf(200, "lock"), None);
}

#[rstest]
fn probability_draws_repeat_for_a_seed() {
    let draw = |seed| {
        let mut f = Faults::new(seed);
        f.add(rule(r#"{"status": 500, "probability": 0.5}"#))
            .expect("rule");
        (0..32)
            .map(|_| f.on_request("GET", "/", None).is_some())
            .collect::<Vec<_>>()
    };
    assert_eq!(draw(7), draw(7));
    let hits = draw(7).iter().filter(|h| **h).count();
    assert!((4..=28).contains(&hits), "{hits} of 32");
}
