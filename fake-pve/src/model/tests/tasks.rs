//! Tasks: UPIDs, the task index, when tasks end and what their end does,
//! stopping, and the list filters.

use rstest::rstest;
use serde_json::{Value, json};

use super::{T0, World, lab, qm_worker, refused};
use crate::model::qemu::QemuOp;
use crate::model::tasks::TaskFilter;
use crate::model::tasks::Upid;
use crate::model::{Task, TaskEffect, Worker};

/// `GET /nodes/{node}/tasks`'s items (as JSON) and total.
fn listed(
    w: &World,
    node: &str,
    f: &TaskFilter,
    visible: impl Fn(&Task) -> bool,
) -> (Vec<Value>, usize) {
    let (items, total) = w.c.tasks.list(node, f, visible);
    (items.iter().map(|i| json!(i)).collect(), total)
}

fn all() -> TaskFilter {
    TaskFilter {
        limit: 50,
        source: "all".into(),
        ..TaskFilter::default()
    }
}

fn list(w: &World, f: &TaskFilter) -> (Vec<String>, usize) {
    let (items, total) = listed(w, "pve", f, |_| true);
    let kinds = items
        .iter()
        .map(|v| {
            format!(
                "{}:{}",
                v["type"].as_str().unwrap_or(""),
                v["id"].as_str().unwrap_or("")
            )
        })
        .collect();
    (kinds, total)
}

/// Three finished tasks (qmstart 100 OK, qmstop 101 OK by ci@pve, a
/// failing vzdump) a second apart, and a running qmclone.
fn history(mut w: World) -> World {
    w.run("pve", Worker::new("qmstart", "100"));
    w.tick(1_000);
    w.run_as("pve", Worker::new("qmstop", "101"), "ci@pve", 0);
    w.tick(1_000);
    w.run("pve", Worker::new("vzdump", "").fail("backup failed"));
    w.tick(1_000);
    w.run_as("pve", Worker::new("qmclone", "900"), "root@pam", 60_000);
    w
}

#[rstest]
fn a_upid_names_node_pid_start_time_type_id_and_user(mut lab: World) {
    let upid = lab.run_as("pve", Worker::new("qmstart", "100"), "ci@pve!runner", 0);
    assert!(upid.starts_with("UPID:pve:"), "{upid}");
    assert!(upid.ends_with(":qmstart:100:ci@pve!runner:"), "{upid}");
    let u = Upid::parse(&upid).expect("parses");
    assert_eq!(u.starttime, T0);
    assert_eq!(u.to_string(), upid);
    // pstart counts clock ticks (100 Hz) since the node booted.
    let uptime = lab.c.nodes.members()[0].uptime(T0);
    assert!(
        u.pstart / 100 >= u64::try_from(uptime).expect("positive"),
        "{u:?}"
    );
}

#[rstest]
fn pids_increase_from_task_to_task(mut lab: World) {
    let a = Upid::parse(&lab.run("pve", Worker::new("a", ""))).expect("a");
    let b = Upid::parse(&lab.run("pve", Worker::new("b", ""))).expect("b");
    assert_eq!(b.pid, a.pid + 1);
}

#[rstest]
#[case("UPID:pve:nothex", "upid: unable to parse worker upid")]
#[case(
    "UPID:pve:00000FA0:00000001:6AB1C000:qmstart:100:root@pam:",
    "upid: no such task"
)]
fn unknown_upids_are_a_400(lab: World, #[case] upid: &str, #[case] msg: &str) {
    assert_eq!(
        refused(lab.c.tasks.get(upid).map(|t| t.upid_str.clone())),
        (400, msg.to_string())
    );
}

#[rstest]
fn a_task_runs_until_its_time_comes(mut lab: World) {
    let upid = lab.run_as("pve", Worker::new("qmstart", "100"), "root@pam", 2_500);
    assert!(lab.task(&upid).running());
    assert_eq!(json!(lab.task(&upid).status())["status"], json!("running"));
    assert!(json!(lab.task(&upid).status()).get("exitstatus").is_none());
    lab.tick(2_499);
    assert!(lab.task(&upid).running());
    lab.tick(1);
    let st = json!(lab.task(&upid).status());
    assert_eq!(st["status"], json!("stopped"));
    assert_eq!(st["exitstatus"], json!("OK"));
}

#[rstest]
fn the_log_ends_with_task_ok_warnings_or_error(mut lab: World) {
    let ok = lab.run("pve", Worker::new("a", "").log("hello"));
    let warn = lab.run("pve", Worker::new("b", "").log_end("WARN: careful"));
    let err = lab.run("pve", Worker::new("c", "").log("x").fail("it broke"));
    assert_eq!(lab.task(&ok).log, ["hello", "TASK OK"]);
    assert_eq!(lab.task(&warn).log, ["WARN: careful", "TASK WARNINGS: 1"]);
    assert_eq!(lab.exit(&warn), "WARNINGS: 1");
    assert_eq!(lab.task(&err).log, ["x", "TASK ERROR: it broke"]);
}

#[rstest]
fn tasks_end_in_the_order_of_their_end_times(mut lab: World) {
    // A long stop and a short start of the same VM: the start ends first
    // and sees the VM stopped; the stop then stops it.
    let stop = lab.run_as(
        "pve",
        qm_worker("qmstop", 100, QemuOp::Stop { skiplock: false }),
        "root@pam",
        5_000,
    );
    let start = lab.run_as(
        "pve",
        qm_worker("qmstart", 100, QemuOp::Start { skiplock: false }),
        "root@pam",
        1_000,
    );
    lab.tick(10_000);
    assert_eq!(lab.exit(&start), "OK");
    assert_eq!(lab.exit(&stop), "OK");
    assert!(!lab.c.guests[&100].running());
    let ends = |u: &str| {
        json!(lab.task(u).list_item())["endtime"]
            .as_i64()
            .expect("endtime")
    };
    assert_eq!(ends(&start), T0 + 1);
    assert_eq!(ends(&stop), T0 + 5);
}

#[rstest]
fn the_effect_runs_only_when_the_task_ends(mut lab: World) {
    let upid = lab.run_as(
        "pve",
        qm_worker("qmstart", 100, QemuOp::Start { skiplock: false }),
        "root@pam",
        3_000,
    );
    assert!(!lab.c.guests[&100].running());
    lab.tick(3_000);
    assert!(lab.c.guests[&100].running());
    assert_eq!(lab.exit(&upid), "OK");
}

#[rstest]
fn stopping_a_running_task_interrupts_it_without_its_effect(mut lab: World) {
    let upid = lab.run_as(
        "pve",
        qm_worker("qmstart", 100, QemuOp::Start { skiplock: false }),
        "root@pam",
        3_000,
    );
    lab.c.stop_task(&upid, T0 + 1).expect("stopped");
    assert_eq!(lab.exit(&upid), "received interrupt");
    assert_eq!(
        lab.task(&upid).log.last().map(String::as_str),
        Some("TASK ERROR: received interrupt")
    );
    lab.tick(10_000);
    assert!(!lab.c.guests[&100].running(), "the effect never runs");
}

#[rstest]
fn stopping_a_stopped_task_changes_nothing(mut lab: World) {
    let upid = lab.run("pve", Worker::new("a", ""));
    lab.c.stop_task(&upid, T0 + 5).expect("accepted");
    assert_eq!(lab.exit(&upid), "OK");
}

#[rstest]
fn a_node_crash_ends_running_tasks_with_unexpected_status(mut lab: World) {
    let a = lab.run_as("pve", Worker::new("a", ""), "root@pam", 9_000);
    let b = lab.run_as("pve", Worker::new("b", ""), "root@pam", 9_000);
    let done = lab.run("pve", Worker::new("c", ""));
    assert_eq!(lab.c.interrupt_running(T0 + 2), 2);
    assert_eq!(lab.exit(&a), "unexpected status");
    assert_eq!(lab.exit(&b), "unexpected status");
    assert_eq!(lab.exit(&done), "OK");
    assert_eq!(lab.task(&a).status_class(), "unknown");
    // The index is rebuilt: the tasks are still found.
    lab.tick(10_000);
    assert_eq!(lab.exit(&a), "unexpected status");
}

#[rstest]
fn startall_starts_every_vm_it_can(mut lab: World) {
    let w = Worker::new("startall", "").effect(TaskEffect::SetVmStatus {
        vmids: vec![100, 900],
        status: crate::model::qemu::VmStatus::Running,
    });
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "OK", "a template is skipped");
    assert!(lab.c.guests[&100].running());
    assert!(!lab.c.guests[&900].running());
}

#[rstest]
fn a_token_task_shows_user_and_tokenid(mut lab: World) {
    let upid = lab.run_as("pve", Worker::new("qmstart", "100"), "ci@pve!runner", 0);
    let v = json!(lab.task(&upid).status());
    assert_eq!(
        (v["user"].clone(), v["tokenid"].clone()),
        (json!("ci@pve"), json!("runner"))
    );
    let item = json!(lab.task(&upid).list_item());
    assert_eq!(item["tokenid"], json!("runner"));
}

#[rstest]
fn list_items_of_running_and_finished_tasks(lab: World) {
    let w = history(lab);
    let (items, _) = listed(&w, "pve", &all(), |_| true);
    assert_eq!(
        items[0]["status"],
        json!("RUNNING"),
        "running tasks come first"
    );
    assert_eq!(items[0]["saved"], json!("0"));
    assert_eq!(items[1]["status"], json!("backup failed"));
    assert_eq!(items[1]["endtime"], json!(T0 + 2));
}

#[rstest]
#[case(all(), &["qmclone:900", "vzdump:", "qmstop:101", "qmstart:100"], 4)]
#[case(TaskFilter { source: "active".into(), ..all() }, &["qmclone:900"], 1)]
#[case(TaskFilter { source: "archive".into(), ..all() }, &["vzdump:", "qmstop:101", "qmstart:100"], 3)]
#[case(TaskFilter { typefilter: Some("qmstop".into()), ..all() }, &["qmstop:101"], 1)]
#[case(TaskFilter { userfilter: Some("CI".into()), ..all() }, &["qmstop:101"], 1)]
#[case(TaskFilter { vmid: Some(100), ..all() }, &["qmstart:100"], 1)]
#[case(TaskFilter { errors: true, ..all() }, &["qmclone:900", "vzdump:"], 2)]
#[case(TaskFilter { since: Some(T0 + 1), until: Some(T0 + 2), ..all() }, &["vzdump:", "qmstop:101"], 2)]
#[case(TaskFilter { statusfilter: Some(vec!["error".into()]), ..all() }, &["vzdump:"], 1)]
#[case(TaskFilter { statusfilter: Some(vec!["ok".into(), "unknown".into()]), ..all() },
    &["qmclone:900", "qmstop:101", "qmstart:100"], 3)]
#[case(TaskFilter { start: 1, limit: 2, ..all() }, &["vzdump:", "qmstop:101"], 4)]
fn task_list_filters(
    lab: World,
    #[case] f: TaskFilter,
    #[case] want: &[&str],
    #[case] total: usize,
) {
    let w = history(lab);
    let (kinds, n) = list(&w, &f);
    assert_eq!(kinds, want);
    assert_eq!(n, total, "total counts every match, not the page");
}

#[rstest]
fn the_list_shows_only_what_the_caller_may_see(lab: World) {
    let w = history(lab);
    let (items, total) = listed(&w, "pve", &all(), |t| t.upid.user.starts_with("ci@pve"));
    assert_eq!(total, 1);
    assert_eq!(items[0]["type"], json!("qmstop"));
}

#[rstest]
fn tasks_of_another_node_are_not_listed(lab: World) {
    let w = history(lab);
    let (items, total) = listed(&w, "pve2", &all(), |_| true);
    assert!(items.is_empty());
    assert_eq!(total, 0);
}

#[rstest]
fn limit_zero_lists_nothing_but_counts_everything(lab: World) {
    let w = history(lab);
    let (kinds, total) = list(&w, &TaskFilter { limit: 0, ..all() });
    assert!(kinds.is_empty());
    assert_eq!(total, 4);
}

#[rstest]
fn errors_ignores_the_statusfilter(lab: World) {
    let w = history(lab);
    let f = TaskFilter {
        errors: true,
        statusfilter: Some(vec!["ok".into()]),
        ..all()
    };
    assert_eq!(list(&w, &f).0, ["qmclone:900", "vzdump:"]);
}

#[rstest]
fn a_task_with_warnings_is_not_ok(mut lab: World) {
    lab.run("pve", Worker::new("vzdump", "100").log_end("WARN: slow"));
    let (kinds, _) = list(
        &lab,
        &TaskFilter {
            statusfilter: Some(vec!["warning".into()]),
            ..all()
        },
    );
    assert_eq!(kinds, ["vzdump:100"]);
    let (kinds, _) = list(
        &lab,
        &TaskFilter {
            errors: true,
            ..all()
        },
    );
    assert_eq!(kinds, ["vzdump:100"], "errors=1 lists all but OK");
}
