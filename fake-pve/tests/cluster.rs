//! The cluster read side: nodes, status, resources and nextid.

mod common;

use common::{builder, start, start_scenario, start_version, start_with, task, upid};
use fake_pve::PveVersion;
use serde_json::json;

const LAB: &str = "cluster: lab
nodes:
  - { name: pve1, cpus: 16, memory: 64G }
  - { name: pve2, cpus: 16, memory: 64G }
  - { name: pve3, status: offline }
storages:
  - { id: local, type: dir, path: /var/lib/vz, content: [iso, vztmpl, backup] }
  - { id: ceph, type: rbd, pool: vms, size: 10T }
vms:
  - { vmid: 100, node: pve1, name: web, status: running, config: { memory: 2048, cores: 2 } }
  - { vmid: 101, node: pve2 }
  - { vmid: 1000, node: pve2, config: { template: 1 } }
";

#[tokio::test]
async fn single_node_defaults() {
    let pve = start().await;
    let root = pve.root().await;
    let nodes = pve.get("/nodes", &root).await.data();
    assert_eq!(nodes.as_array().map(Vec::len), Some(1));
    let n = &nodes[0];
    assert_eq!(
        (
            n["id"].as_str(),
            n["node"].as_str(),
            n["type"].as_str(),
            n["status"].as_str()
        ),
        (Some("node/pve"), Some("pve"), Some("node"), Some("online"))
    );
    for k in [
        "cpu",
        "maxcpu",
        "mem",
        "maxmem",
        "disk",
        "maxdisk",
        "uptime",
        "level",
        "ssl_fingerprint",
    ] {
        assert!(n.get(k).is_some(), "{k} missing in {n}");
    }
    let status = pve.get("/cluster/status", &root).await.data();
    assert_eq!(
        status.as_array().map(Vec::len),
        Some(1),
        "a standalone node lists only itself"
    );
    assert_eq!(status[0]["type"], "node");
    assert_eq!(
        (
            status[0]["local"].clone(),
            status[0]["nodeid"].clone(),
            status[0]["online"].clone()
        ),
        (json!(1), json!(0), json!(1))
    );
    let storages = pve
        .get("/cluster/resources?type=storage", &root)
        .await
        .data();
    let ids: Vec<&str> = storages
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    assert_eq!(ids, ["storage/pve/local", "storage/pve/local-lvm"]);
    assert_eq!(storages[0]["content"], "iso,vztmpl,backup,snippets");
    assert_eq!(storages[1]["plugintype"], "lvmthin");
    assert_eq!(
        pve.get("/cluster/resources?type=vm", &root).await.data(),
        json!([])
    );
    assert_eq!(pve.get("/cluster/nextid", &root).await.data(), json!("100"));
}

#[tokio::test]
async fn node_status_and_version() {
    let pve = start().await;
    let root = pve.root().await;
    let st = pve.get("/nodes/pve/status", &root).await.data();
    for k in [
        "uptime",
        "idle",
        "cpu",
        "wait",
        "loadavg",
        "kversion",
        "current-kernel",
        "boot-info",
        "cpuinfo",
        "memory",
        "swap",
        "ksm",
        "rootfs",
        "pveversion",
    ] {
        assert!(st.get(k).is_some(), "{k} missing");
    }
    assert_eq!(st["idle"], 0);
    assert!(
        st["loadavg"]
            .as_array()
            .is_some_and(|l| l.len() == 3 && l.iter().all(|x| x.is_string()))
    );
    assert!(
        st["memory"]["available"].is_u64(),
        "9.x reports available memory"
    );
    assert_eq!(st["cpuinfo"]["cpus"], 8);
    assert_eq!(st["pveversion"], "pve-manager/9.2.11/f6997e698c7933ea");
    let v = pve.get("/nodes/localhost/version", &root).await.data();
    assert_eq!(
        v,
        json!({"version": "9.2.11", "release": "9.2", "repoid": "f6997e698c7933ea"})
    );
    let idx = pve.get("/nodes/pve", &root).await.data();
    assert!(
        idx.as_array()
            .expect("list")
            .contains(&json!({"name": "tasks"}))
    );
    // Not proxied: any well-formed name answers.
    assert_eq!(pve.get("/nodes/elsewhere", &root).await.status, 200);
    pve.get("/nodes/bad_name", &root).await.assert_param_error(
        "node",
        "invalid format - value does not look like a valid node name\n",
    );
    let pve8 = start_version(PveVersion::V8_4).await;
    let root8 = pve8.root().await;
    let st8 = pve8.get("/nodes/pve/status", &root8).await.data();
    assert!(st8["memory"].get("available").is_none());
}

#[tokio::test]
async fn three_node_cluster() {
    let pve = start_scenario(LAB).await;
    let root = pve.root().await;
    let login = pve
        .post(
            "/access/ticket",
            &common::Auth::None,
            "username=root@pam&password=password",
        )
        .await
        .data();
    assert_eq!(login["clustername"], "lab");
    let status = pve.get("/cluster/status", &root).await.data();
    assert_eq!(
        status[0],
        json!({"type": "cluster", "id": "cluster", "name": "lab", "nodes": 3, "quorate": 1, "version": 3})
    );
    assert_eq!(status[1]["name"], "pve1");
    assert_eq!(
        (status[1]["local"].clone(), status[1]["nodeid"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(
        (status[3]["online"].clone(), status[3]["local"].clone()),
        (json!(0), json!(0))
    );
    let nodes = pve.get("/nodes", &root).await.data();
    let off = &nodes[2];
    assert_eq!(off["status"], "offline");
    assert!(off.get("uptime").is_none() && off.get("cpu").is_none() && off.get("mem").is_none());
    assert!(
        off.get("maxmem").is_some(),
        "an offline node keeps its max figures"
    );

    // Calls proxied to an offline member fail as pveproxy's proxy does.
    let r = pve.get("/nodes/pve3/status", &root).await;
    assert_eq!((r.status, r.reason.as_str()), (595, "No route to host"));
    pve.get("/nodes/pve9/status", &root).await.assert_error(
        500,
        "hostname lookup 'pve9' failed - failed to get address info for: pve9: Name or service not known\n",
    );
    assert_eq!(pve.get("/nodes/pve2/status", &root).await.status, 200);
}

#[tokio::test]
async fn resources_list_guests_nodes_and_storage() {
    let pve = start_scenario(LAB).await;
    let root = pve.root().await;
    let all = pve.get("/cluster/resources", &root).await.data();
    let ids: Vec<&str> = all
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(
        ids,
        [
            "qemu/100",
            "qemu/1000",
            "qemu/101",
            "node/pve1",
            "node/pve2",
            "node/pve3",
            "storage/pve1/local",
            "storage/pve1/ceph",
            "storage/pve2/local",
            "storage/pve2/ceph",
            "storage/pve3/local",
            "storage/pve3/ceph",
            "network/pve1/zone/localnetwork",
            "network/pve2/zone/localnetwork",
            "network/pve3/zone/localnetwork"
        ]
    );
    let web = &all[0];
    assert_eq!(
        (
            web["name"].as_str(),
            web["status"].as_str(),
            web["node"].as_str()
        ),
        (Some("web"), Some("running"), Some("pve1"))
    );
    assert_eq!(
        (
            web["maxmem"].clone(),
            web["maxcpu"].clone(),
            web["template"].clone()
        ),
        (json!(2_147_483_648_u64), json!(2), json!(0))
    );
    assert!(web["memhost"].is_u64());
    assert_eq!(all[1]["template"], 1);
    assert_eq!(all[6]["shared"], 0);
    assert_eq!(all[7]["shared"], 1);
    assert_eq!(all[11]["status"], "unknown", "storage of an offline node");
    let nodes = pve.get("/cluster/resources?type=node", &root).await.data();
    assert_eq!(nodes.as_array().map(Vec::len), Some(3));
    assert!(nodes[0].get("ssl_fingerprint").is_none());
    assert_eq!(nodes[0]["cgroup-mode"], 2);
    assert_eq!(
        pve.get("/cluster/resources?type=sdn", &root).await.data(),
        json!([]),
        "9.1 has no sdn entries"
    );

    let pve8 = common::start_with(
        common::builder()
            .pve_version(PveVersion::V8_4)
            .scenario(fake_pve::Scenario::parse(LAB, "lab").expect("lab")),
    )
    .await;
    let root8 = pve8.root().await;
    let sdn = pve8.get("/cluster/resources?type=sdn", &root8).await.data();
    assert_eq!(
        sdn[0],
        json!({"id": "sdn/pve1/localnetwork", "sdn": "localnetwork", "node": "pve1", "type": "sdn", "status": "ok"})
    );
}

#[tokio::test]
async fn nextid_semantics() {
    let pve = start_scenario(LAB).await;
    let root = pve.root().await;
    assert_eq!(pve.get("/cluster/nextid", &root).await.data(), json!("102"));
    assert_eq!(
        pve.get("/cluster/nextid?vmid=555", &root).await.data(),
        json!("555")
    );
    pve.get("/cluster/nextid?vmid=101", &root)
        .await
        .assert_param_error("vmid", "VM 101 already exists");
    for bad in ["99", "0100", "1000000000", "-5"] {
        pve.get(&format!("/cluster/nextid?vmid={bad}"), &root)
            .await
            .assert_param_error(
                "vmid",
                "invalid format - value does not look like a valid VM ID\n",
            );
    }
    pve.get("/cluster/nextid?vmid=abc", &root)
        .await
        .assert_param_error("vmid", "type check ('integer') failed - got 'abc'");
}

#[tokio::test]
async fn datacenter_tag_style_decides_how_vm_tags_are_written() {
    let pve = start_scenario(LAB).await;
    let root = pve.root().await;
    let fresh = pve.get("/cluster/options", &root).await.data();
    assert_eq!(
        fresh,
        json!({"description": "", "mac_prefix": "BC:24:11", "allowed-tags": []})
    );
    // `;` escaped: pveproxy splits a form's pairs on `;` as on `&`.
    let tags = "web,Prod%3Bdb%20prod";
    pve.put(
        "/nodes/pve1/qemu/100/config",
        &root,
        &format!("tags={tags}"),
    )
    .await
    .data();
    let conf = pve.get("/nodes/pve1/qemu/100/config", &root).await.data();
    assert_eq!(conf["tags"], "db;prod;web", "the default style");

    let style = common::enc("case-sensitive=1,ordering=config,shape=dense");
    let r = pve
        .put("/cluster/options", &root, &format!("tag-style={style}"))
        .await;
    assert_eq!(r.data(), serde_json::Value::Null);
    let opts = pve.get("/cluster/options", &root).await.data();
    assert_eq!(
        opts["tag-style"],
        json!({"case-sensitive": 1, "ordering": "config", "shape": "dense"})
    );
    assert_eq!(opts["allowed-tags"], json!(["db", "prod", "web"]));
    pve.put(
        "/nodes/pve1/qemu/100/config",
        &root,
        &format!("tags={tags}"),
    )
    .await
    .data();
    let conf = pve.get("/nodes/pve1/qemu/100/config", &root).await.data();
    assert_eq!(conf["tags"], "web;Prod;db;prod");

    pve.put("/cluster/options", &root, "delete=tag-style")
        .await
        .data();
    let opts = pve.get("/cluster/options", &root).await.data();
    assert!(opts.get("tag-style").is_none(), "{opts}");

    pve.put("/cluster/options", &root, "tag-style=shape%3Dround")
        .await
        .assert_param_error(
            "tag-style",
            "invalid format - format error\ntag-style.shape: value 'round' does not have a value in the enumeration 'full, circle, dense, none'\n",
        );
}

/// The status `node` has in `/nodes`.
async fn node_state(pve: &common::Pve, auth: &common::Auth, node: &str) -> String {
    let nodes = pve.get("/nodes", auth).await.data();
    nodes
        .as_array()
        .and_then(|a| a.iter().find(|n| n["node"] == node))
        .and_then(|n| n["status"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn a_rebooted_node_goes_offline_and_comes_back() {
    let pve = start_scenario(LAB).await;
    let root = pve.root().await;
    // The command is checked against the schema's enum.
    pve.post("/nodes/pve1/status", &root, "command=halt")
        .await
        .assert_param_error(
            "command",
            "value 'halt' does not have a value in the enumeration 'reboot, shutdown'",
        );
    let r = pve
        .post("/nodes/pve1/status", &root, "command=reboot")
        .await;
    assert_eq!(r.data(), serde_json::Value::Null);
    assert_eq!(node_state(&pve, &root, "pve1").await, "offline");
    // Its guests stopped; calls proxied to it fail as for any offline node.
    pve.get("/nodes/pve1/qemu", &root)
        .await
        .assert_error(595, "No route to host\n");
    let res = pve.get("/cluster/resources?type=node", &root).await.data();
    let row = res
        .as_array()
        .and_then(|a| a.iter().find(|n| n["node"] == "pve1"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(row["status"], "offline", "{res}");
    pve.run.clock().advance(60);
    assert_eq!(node_state(&pve, &root, "pve1").await, "online");
    let vm = pve
        .get("/nodes/pve1/qemu/100/status/current", &root)
        .await
        .data();
    assert_eq!(vm["status"], "stopped", "not onboot: stays off");
}

#[tokio::test]
async fn a_shut_down_node_wakes_on_lan() {
    let pve = start_scenario(LAB).await;
    let root = pve.root().await;
    pve.put(
        "/nodes/pve2/config",
        &root,
        "wakeonlan=mac%3DBC%3A24%3A11%3AAA%3ABB%3ACC",
    )
    .await
    .data();
    pve.post("/nodes/pve2/status", &root, "command=shutdown")
        .await
        .data();
    pve.run.clock().advance(600);
    assert_eq!(node_state(&pve, &root, "pve2").await, "offline");
    let mac = pve.post("/nodes/pve2/wakeonlan", &root, "").await.data();
    assert_eq!(mac, "BC:24:11:AA:BB:CC");
    pve.run.clock().advance(60);
    assert_eq!(node_state(&pve, &root, "pve2").await, "online");
}

#[tokio::test]
async fn execute_answers_each_command() {
    let pve = start_scenario(LAB).await;
    let root = pve.root().await;
    let commands = json!([
        { "method": "GET", "path": "/version" },
        { "method": "GET", "path": "qemu/100/config" },
        { "method": "POST", "path": "qemu/100/config", "args": { "name": "renamed" } },
        { "method": "GET", "path": "nothing/here" },
        { "method": "PUT", "path": "qemu/100/config", "args": { "cores": "many" } },
        { "method": "GET", "path": "qemu/100/config", "args": { "vmid": "101" } },
    ]);
    let r = pve
        .post(
            "/nodes/pve1/execute",
            &root,
            &format!("commands={}", common::enc(&commands.to_string())),
        )
        .await
        .data();
    let items = r.as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 6, "{r}");
    assert_eq!(items[0]["status"], 200);
    assert!(items[0]["data"]["release"].is_string(), "{r}");
    assert_eq!(items[1]["data"]["memory"], "2048", "{r}");
    assert_eq!(items[2]["status"], 200, "{r}");
    assert_eq!(items[3]["status"], 500);
    assert_eq!(
        items[3]["message"],
        "no handler for 'nodes/pve1/nothing/here'\n"
    );
    assert_eq!(items[4]["status"], 400);
    assert_eq!(items[4]["message"], "Parameter verification failed.\n");
    assert!(items[4]["errors"]["cores"].is_string(), "{r}");
    assert_eq!(items[5]["errors"]["vmid"], "duplicate parameter", "{r}");
    // The commands changed the world as their own requests would.
    let conf = pve.get("/nodes/pve1/qemu/100/config", &root).await.data();
    assert_eq!(conf["name"], "renamed");
}

/// [`LAB`] with starts that take five seconds.
async fn slow_starts() -> common::Pve {
    let mut latency = fake_pve::Latency::instant();
    latency.set_task_ms("qmstart", 5_000);
    let scenario =
        fake_pve::Scenario::parse(&format!("{LAB}  - {{ vmid: 102, node: pve2 }}\n"), "t.yaml")
            .expect("scenario");
    start_with(builder().latency(latency).scenario(scenario)).await
}

#[tokio::test]
async fn bulk_start_runs_as_many_tasks_at_once_as_max_workers() {
    let pve = slow_starts().await;
    let root = pve.root().await;
    // Two starts, one at a time: ten seconds.
    let r = pve
        .post(
            "/cluster/bulk-action/guest/start",
            &root,
            "vms=101&vms=102&max-workers=1",
        )
        .await;
    let id = upid(&r);
    assert!(id.contains(":bulk-start::root@pam:"), "{id}");
    pve.run.clock().advance(9);
    assert_eq!(pve.task_status(&id, &root).await["status"], "running");
    pve.run.clock().advance(1);
    let (exit, log) = task(&pve, &root, &r).await;
    assert_eq!(exit, "OK", "{log:?}");
    assert_eq!(
        log[..3],
        [
            "Starting guests: 101, 102",
            "Starting VM 101",
            "Starting VM 102"
        ],
        "{log:?}"
    );
    let vm = pve
        .get("/nodes/pve2/qemu/102/status/current", &root)
        .await
        .data();
    assert_eq!(vm["status"], "running");
    // Already running: skipped with a warning.
    let again = pve
        .post("/cluster/bulk-action/guest/start", &root, "vms=101")
        .await;
    let (exit, log) = task(&pve, &root, &again).await;
    assert_eq!(exit, "WARNINGS: 1", "{log:?}");
    assert!(
        log.contains(&"WARN: Skipping VM 101, already running.".to_string()),
        "{log:?}"
    );
}

#[tokio::test]
async fn datacenter_max_workers_is_the_bulk_default() {
    let pve = slow_starts().await;
    let root = pve.root().await;
    pve.put("/cluster/options", &root, "max_workers=2")
        .await
        .data();
    let r = pve
        .post("/cluster/bulk-action/guest/start", &root, "vms=101&vms=102")
        .await;
    let id = upid(&r);
    pve.run.clock().advance(5);
    assert_eq!(pve.task_status(&id, &root).await["status"], "stopped");
}

#[tokio::test]
async fn migrateall_needs_max_workers_and_moves_the_guests() {
    let pve = start_scenario(LAB).await;
    let root = pve.root().await;
    pve.post("/nodes/pve2/migrateall", &root, "target=pve1")
        .await
        .assert_error(
            500,
            "either 'max-workers' parameter or max_workers in datacenter.cfg must be set!\n",
        );
    pve.post("/nodes/pve2/migrateall", &root, "target=pve2&maxworkers=1")
        .await
        .assert_param_error("target", "target is local node.");
    let r = pve
        .post("/nodes/pve2/migrateall", &root, "target=pve1&maxworkers=2")
        .await;
    let (exit, log) = task(&pve, &root, &r).await;
    assert_eq!(exit, "OK", "{log:?}");
    assert!(log.contains(&"Migrating VM 1000".to_string()), "{log:?}");
    assert!(
        log.contains(&"All jobs finished, used 2 workers in total.".to_string()),
        "{log:?}"
    );
    let vms = pve.get("/nodes/pve1/qemu", &root).await.data();
    let ids: Vec<u64> = vms
        .as_array()
        .map(|a| a.iter().filter_map(|v| v["vmid"].as_u64()).collect())
        .unwrap_or_default();
    assert!(ids.contains(&101) && ids.contains(&1000), "{vms}");
}

#[tokio::test]
async fn suspendall_and_bulk_shutdown_take_the_running_vms() {
    let pve = start_scenario(LAB).await;
    let root = pve.root().await;
    let r = pve.post("/nodes/pve1/suspendall", &root, "").await;
    let (exit, log) = task(&pve, &root, &r).await;
    assert_eq!(exit, "OK", "{log:?}");
    assert!(log.contains(&"Suspending VM 100".to_string()), "{log:?}");
    let vm = pve
        .get("/nodes/pve1/qemu/100/status/current", &root)
        .await
        .data();
    assert_eq!(vm["status"], "stopped", "suspended to disk: {vm}");
    let r = pve
        .post(
            "/cluster/bulk-action/guest/shutdown",
            &root,
            "vms=100&vms=101",
        )
        .await;
    let (exit, log) = task(&pve, &root, &r).await;
    assert_eq!(exit, "WARNINGS: 2", "{log:?}");
    assert_eq!(
        log[..3],
        [
            "Shutting down guests: 100, 101",
            "WARN: Skipping VM 100, not running.",
            "WARN: Skipping VM 101, not running.",
        ],
        "{log:?}"
    );
}
