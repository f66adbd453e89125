//! The tasks' list, ids and lives.

use super::*;
use rstest::rstest;

#[test]
fn upid_round_trip() {
    let s = "UPID:pve:000A1B2C:0012D687:6740F1A2:qmstart:100:root@pam:";
    let u = Upid::parse(s).expect("parse");
    assert_eq!(u.node, "pve");
    assert_eq!(u.pid, 0x000A_1B2C);
    assert_eq!(u.kind, "qmstart");
    assert_eq!(u.id, "100");
    assert_eq!(u.to_string(), s);
    let t = "UPID:node-2:00000001:00000002:00000003:startall::root@pam!ci:";
    let u = Upid::parse(t).expect("token upid");
    assert_eq!(u.user, "root@pam!ci");
    assert_eq!(u.id, "");
    assert_eq!(u.to_string(), t);
}

#[rstest]
#[case("")]
#[case("UPID:pve:000A1B2C:0012D687:6740F1A2:qmstart:100:root@pam")]
#[case("UPID:pve:0A1B2C:0012D687:6740F1A2:qmstart:100:root@pam:")]
#[case("UPID:-pve:000A1B2C:0012D687:6740F1A2:qmstart:100:root@pam:")]
#[case("UPID:pve:000A1B2G:0012D687:6740F1A2:qmstart:100:root@pam:")]
#[case("UPID:pve:000A1B2C:0012D687:6740F1A2::100:root@pam:")]
#[case("UPID:pve:000A1B2C:0012D687:6740F1A2:qmstart:100::")]
#[case("XUPID:pve:000A1B2C:0012D687:6740F1A2:qmstart:100:root@pam:")]
fn bad_upids(#[case] s: &str) {
    assert!(Upid::parse(s).is_none(), "{s}");
}

fn task(exit: Option<&str>) -> Task {
    let upid =
        Upid::parse("UPID:pve:00000001:00000002:00000003:qmstart:100:root@pam:").expect("upid");
    Task {
        upid_str: upid.to_string(),
        upid,
        log: vec![],
        state: match exit {
            None => TaskState::Running { until_ms: 0 },
            Some(e) => TaskState::Stopped {
                endtime: 4,
                exitstatus: e.into(),
            },
        },
        worker: Some(Box::new(Worker::new("qmstart", "100"))),
    }
}

#[rstest]
#[case("UPID:pve:00000001:00000002:00000003:qmstart:100:root@pam:", Some(0))]
#[case("UPID:pve:00000001:00000002:00000009:qmstop:100:root@pam:", Some(1))]
#[case("UPID:pve:00000005:00000002:00000003:qmstop:100:root@pam:", Some(2))]
#[case("UPID:pve:00000001:00000002:00000004:qmstart:100:root@pam:", None)]
#[case("UPID:pve:00000007:00000002:00000003:qmstart:100:root@pam:", None)]
fn a_task_is_found_by_its_upid_though_another_has_its_pid(
    #[case] upid: &str,
    #[case] found: Option<usize>,
) {
    // A saved world whose first two tasks share pid 1.
    let with = |text: &str| {
        let mut t = task(Some("OK"));
        t.upid = Upid::parse(text).expect("upid");
        t.upid_str = text.to_string();
        t
    };
    let tasks = Tasks::new(
        vec![
            with("UPID:pve:00000001:00000002:00000003:qmstart:100:root@pam:"),
            with("UPID:pve:00000001:00000002:00000009:qmstop:100:root@pam:"),
            with("UPID:pve:00000005:00000002:00000003:qmstop:100:root@pam:"),
        ],
        6,
    );
    match found {
        Some(i) => assert_eq!(
            tasks.get(upid).expect("found").upid_str,
            tasks.tasks[i].upid_str
        ),
        None => {
            let e = tasks.get(upid).expect_err("no such task");
            assert!(format!("{e:?}").contains("no such task"), "{e:?}");
        }
    }
}

#[rstest]
#[case(0)]
#[case(0x3E8)]
#[case(0xFFFF_FFFF)]
#[case(0x1_0000_0000)]
#[case(u64::MAX)]
fn hex_is_as_format_writes_it(#[case] v: u64) {
    let mut buf = [0u8; 16];
    assert_eq!(hex08(v, &mut buf), format!("{v:08X}"));
}

#[rstest]
#[case(1_795_000_000)]
#[case(-1)]
#[case(0)]
fn a_upid_is_written_as_pve_writes_it(#[case] starttime: i64) {
    let upid = Upid {
        node: "pve-1".into(),
        pid: 0x3E8,
        pstart: 0x1_2345_6789,
        starttime,
        kind: "qmstart".into(),
        id: "100".into(),
        user: "root@pam!ci".into(),
    };
    assert_eq!(
        upid.to_string(),
        format!("UPID:pve-1:000003E8:123456789:{starttime:08X}:qmstart:100:root@pam!ci:")
    );
}

#[rstest]
#[case(Some("OK"), "ok")]
#[case(Some("WARNINGS: 2"), "warning")]
#[case(Some("unexpected status"), "unknown")]
#[case(Some("VM 100 already running"), "error")]
#[case(None, "unknown")]
fn status_classes(#[case] exit: Option<&str>, #[case] class: &str) {
    assert_eq!(task(exit).status_class(), class);
}

#[test]
fn finish_writes_closing_lines() {
    let mut t = task(None);
    t.worker = Some(Box::new(
        Worker::new("qmstart", "100")
            .log_end("WARN: a")
            .log_end("WARN: b"),
    ));
    t.finish(9, None);
    assert_eq!(t.log.last().map(String::as_str), Some("TASK WARNINGS: 2"));
    assert_eq!(t.exitstatus(), Some("WARNINGS: 2"));
    // What was left to do is gone with the task's end.
    assert!(t.worker.is_none());

    let mut t = task(None);
    t.worker = Some(Box::new(
        Worker::new("qmstart", "100")
            .log_end("never")
            .fail("boom\nbang"),
    ));
    t.finish(9, None);
    assert_eq!(t.log, vec!["TASK ERROR: boom bang".to_string()]);
    assert_eq!(t.exitstatus(), Some("boom bang"));
}
