//! The dashboard's overview: one read of every area, changing nothing.

use rstest::rstest;
use serde_json::{Value, json};

use super::{World, cluster, lab, map, qm_worker};
use crate::api::cluster::overview::{Limits, overview as overview_of};
use crate::model::qemu::{ConfigUpdate, QemuOp};
use crate::model::{TaskEffect, Worker};

fn overview(w: &World) -> Value {
    overview_of(&w.c, w.now_ms, Limits::default())
}

fn guest(v: &Value, vmid: u32) -> Value {
    v["guests"]
        .as_array()
        .expect("guests")
        .iter()
        .find(|g| g["vmid"] == vmid)
        .cloned()
        .unwrap_or_else(|| panic!("no guest {vmid} in {v}"))
}

#[rstest]
fn nodes_guests_and_storages_as_the_resources_list_them(lab: World) {
    let v = overview(&lab);
    assert_eq!(v["now_ms"], lab.now_ms);
    let nodes = v["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 1);
    assert_eq!(nodes[0]["node"], "pve");
    assert_eq!(nodes[0]["status"], "online");
    assert_eq!(nodes[0]["guests"], 3);
    assert_eq!(nodes[0]["maxcpu"], 16);
    assert_eq!(v["guests_total"], 3);
    let ids: Vec<&Value> = v["guests"]
        .as_array()
        .expect("guests")
        .iter()
        .map(|g| &g["vmid"])
        .collect();
    assert_eq!(ids, [100, 101, 900]);
    let web = guest(&v, 100);
    assert_eq!(
        (&web["type"], &web["name"], &web["status"]),
        (&json!("qemu"), &json!("web"), &json!("stopped"))
    );
    assert_eq!(web["pending"], json!([]));
    assert_eq!(guest(&v, 900)["template"], 1);
    let storages: Vec<&Value> = v["storages"]
        .as_array()
        .expect("storages")
        .iter()
        .map(|s| &s["storage"])
        .collect();
    assert_eq!(storages, ["local", "local-lvm", "tank"]);
    assert!(v["storages"][1]["maxdisk"].as_u64().is_some_and(|n| n > 0));
}

#[rstest]
fn a_guest_shows_its_pending_changes_lock_tags_and_agent_addresses(mut lab: World) {
    let u = ConfigUpdate {
        set: map(&[("cores", "4"), ("tags", "db;prod")]),
        delete: vec!["agent".into()],
        log: "update VM".into(),
        ..ConfigUpdate::default()
    };
    // 101 runs with its agent up an hour after start.
    lab.tick(3_600_000);
    let before = overview(&lab);
    let ips = guest(&before, 101)["ips"].clone();
    assert_eq!(ips, json!(["10.0.0.103"]), "{before}");
    // A stopped VM has no agent to ask.
    assert_eq!(guest(&before, 100).get("ips"), None);
    lab.c
        .vm_ops()
        .update_config("pve", 101, &u, lab.now_ms / 1000)
        .expect("updated");
    lab.c
        .guests
        .get_mut(&100)
        .expect("vm 100")
        .config
        .insert("lock".into(), "backup".into());
    let v = overview(&lab);
    let db = guest(&v, 101);
    assert_eq!(db["pending"], json!(["agent", "cores"]));
    assert_eq!(db["tags"], "db;prod");
    assert_eq!(guest(&v, 100)["lock"], "backup");
}

#[rstest]
fn running_tasks_come_first_with_their_end_and_failures_are_marked(mut lab: World) {
    lab.run("pve", Worker::new("vzdump", "100").fail("backup failed"));
    lab.run("pve", Worker::new("qmstop", "101"));
    let start = lab.run_as(
        "pve",
        qm_worker("qmstart", 100, QemuOp::Start { skiplock: false }),
        "root@pam",
        3_000,
    );
    assert_eq!(lab.c.tasks().next_end_ms(), Some(lab.now_ms + 3_000));
    let v = overview(&lab);
    assert_eq!(
        (v["tasks_total"].as_u64(), v["tasks_running"].as_u64()),
        (Some(3), Some(1))
    );
    let tasks = v["tasks"].as_array().expect("tasks");
    let kinds: Vec<&Value> = tasks.iter().map(|t| &t["type"]).collect();
    assert_eq!(kinds, ["qmstart", "qmstop", "vzdump"]);
    assert_eq!(tasks[0]["upid"], start.as_str());
    assert_eq!(tasks[0]["status"], "RUNNING");
    assert_eq!(tasks[0]["until_ms"], lab.now_ms + 3_000);
    assert_eq!(tasks[0]["failed"], false);
    assert_eq!(tasks[1]["status"], "OK");
    assert_eq!(tasks[2]["status"], "backup failed");
    assert_eq!(tasks[2]["failed"], true);
    assert_eq!(tasks[2]["lines"], 1);
    lab.tick(3_000);
    assert_eq!(lab.c.tasks().next_end_ms(), None);
    let v = overview(&lab);
    assert_eq!(v["tasks_running"], 0);
    assert_eq!(v["tasks"][0]["status"], "OK");
    assert_eq!(guest(&v, 100)["status"], "running");
}

#[rstest]
fn limits_bound_large_worlds(mut lab: World) {
    for i in 0..5 {
        lab.run(
            "pve",
            Worker::new("qmstart", &i.to_string()).effect(TaskEffect::None),
        );
    }
    let v = overview_of(
        &lab.c,
        lab.now_ms,
        Limits {
            guests: 2,
            tasks: 3,
        },
    );
    assert_eq!(v["guests"].as_array().map(Vec::len), Some(2));
    assert_eq!(v["guests_total"], 3);
    assert_eq!(v["tasks"].as_array().map(Vec::len), Some(3));
    assert_eq!(v["tasks"][0]["id"], "4");
    assert_eq!(v["tasks_total"], 5);
}

#[rstest]
fn the_network_shows_pending_changes_without_making_a_config(cluster: World) {
    let v = overview(&cluster);
    assert!(cluster.c.networks().get("pve1").is_none(), "read only");
    let pve1 = &v["network"][0];
    assert_eq!(pve1["node"], "pve1");
    assert_eq!(pve1["changes"], Value::Null);
    let names: Vec<&Value> = pve1["interfaces"]
        .as_array()
        .expect("interfaces")
        .iter()
        .map(|i| &i["iface"])
        .collect();
    assert_eq!(names, ["eno1", "eno2", "vmbr0"]);
    let mut w = cluster;
    let now = w.now();
    let bridge = [("type".to_string(), json!("bridge"))]
        .into_iter()
        .collect();
    w.c.network
        .node_mut(&w.c.nodes, "pve1", now)
        .create("vmbr7", &bridge, now)
        .expect("created");
    let v = overview(&w);
    let changes = v["network"][0]["changes"].as_str().expect("a diff");
    assert!(changes.contains("+iface vmbr7 inet manual"), "{changes}");
    assert_eq!(v["network"][1]["changes"], Value::Null);
}

#[rstest]
fn fault_rules_are_listed_with_their_hits(mut lab: World) {
    let rule: crate::model::faults::FaultRule =
        serde_json::from_value(json!({"path": "/nodes/pve/status", "status": 503})).expect("rule");
    let id = lab.c.faults.add(rule).expect("added");
    assert!(
        lab.c
            .faults
            .on_request("GET", "/nodes/pve/status", None)
            .is_some()
    );
    let v = overview(&lab);
    assert_eq!(v["faults"][0]["id"], id);
    assert_eq!(v["faults"][0]["hits"], 1);
}
