//! `/cluster/tasks` and `/cluster/log`: every node's recent tasks as the
//! `active` files list them, and the cluster log's task and login lines.

use rstest::rstest;
use serde_json::Value;

use super::{T0, World, cluster};
use crate::api::clusterlog::view;
use crate::model::{Worker, clusterlog};

/// `GET /cluster/tasks`'s rows.
fn tasks(w: &World) -> Vec<Value> {
    clusterlog::recent_tasks(&w.c.nodes, &w.c.tasks)
        .into_iter()
        .map(view::task)
        .collect()
}

/// `GET /cluster/log`'s rows.
fn log(w: &World, user: Option<&str>, max: usize) -> Vec<Value> {
    clusterlog::lines(&w.c.clusterlog, &w.c.tasks, user, max)
        .iter()
        .map(view::line)
        .collect()
}

#[rstest]
fn tasks_of_every_node_running_first(mut cluster: World) {
    let done = cluster.run("pve1", Worker::new("qmstart", "100"));
    let running = cluster.run_as("pve2", Worker::new("vzdump", ""), "ci@pve!runner", 60_000);
    let rows = tasks(&cluster);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["upid"], done.as_str());
    assert_eq!(rows[0]["status"], "OK");
    assert_eq!(rows[0]["saved"], "1");
    assert!(rows[0].get("pid").is_none(), "a finished task has no pid");
    assert_eq!(rows[1]["upid"], running.as_str());
    assert_eq!(rows[1]["saved"], "0");
    assert_eq!(rows[1]["user"], "ci@pve");
    assert_eq!(rows[1]["tokenid"], "runner");
    assert!(rows[1].get("endtime").is_none());
}

#[rstest]
fn at_most_25_tasks_per_node(mut cluster: World) {
    for i in 0..30 {
        cluster.run("pve1", Worker::new("qmstart", &format!("{}", 100 + i)));
        cluster.tick(1000);
    }
    let rows = tasks(&cluster);
    assert_eq!(rows.len(), 25);
    assert_eq!(rows[0]["id"], "129", "newest first");
}

#[rstest]
fn the_log_has_task_lines_and_logins_newest_first(mut cluster: World) {
    let upid = cluster.run("pve1", Worker::new("qmstart", "100"));
    cluster.tick(1000);
    cluster.c.clusterlog.login("pve1", "ci@pve", T0 + 1);
    let rows = log(&cluster, None, 0);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["msg"], "successful auth for user 'ci@pve'");
    assert_eq!(rows[0]["user"], "root@pam");
    assert_eq!(rows[0]["uid"], 3);
    assert_eq!(rows[0]["id"], "3:pve1");
    assert_eq!(rows[1]["msg"], format!("end task {upid} OK"));
    assert_eq!(rows[2]["msg"], format!("starting task {upid}"));
    assert_eq!(rows[2]["pri"], 6);
    assert_eq!(log(&cluster, None, 1).len(), 1);
    assert!(log(&cluster, Some("ci@pve"), 0).is_empty());
    assert_eq!(log(&cluster, Some("root@pam"), 0).len(), 3);
}

#[rstest]
fn a_failed_task_ends_with_an_error_line(mut cluster: World) {
    let upid = cluster.run("pve1", Worker::new("qmstart", "100").fail("boom"));
    let rows = log(&cluster, None, 0);
    assert_eq!(rows[0]["msg"], format!("end task {upid} boom"));
    assert_eq!(rows[0]["pri"], 3);
}
