//! `POST /cluster/config/join` between two fake-pve servers on
//! loopback: a standalone node joins the cluster of another over HTTPS
//! (its certificate pinned by fingerprint, a ticket login, the join API
//! version, `addnode`), both sides see the new member, the shared
//! configuration comes over; and PVE's refusals (guests without
//! `force`, a wrong fingerprint, a wrong password, a member of a
//! cluster, an unreachable host, the cluster's own refusal).

mod common;

use std::time::{Duration, Instant};

use common::{Auth, Pve, builder, enc, start_with};
use fake_pve::Scenario;
use serde_json::Value;

/// The cluster: `lab` with pve1 (online) and pve3 (online), and what
/// pmxcfs shares.
const CLUSTER: &str = r"
cluster: lab
nodes:
  - { name: pve1, ip: 192.0.2.11 }
  - { name: pve3, ip: 192.0.2.13 }
storages:
  - { id: local, type: dir, path: /var/lib/vz, content: [iso, vztmpl, backup] }
  - { id: shared-nfs, type: nfs, server: 192.0.2.50, export: /export/pve, content: [images, rootdir] }
users:
  - { userid: alice@pve, password: alice-secret, comment: Alice, email: alice@example.com, tokens: [{ tokenid: ci, privsep: true }] }
groups:
  - { groupid: ops, comment: Operators, members: [alice@pve] }
roles:
  - { roleid: Watcher, privs: [VM.Audit, Sys.Audit] }
acl:
  - { path: /vms, roles: [Watcher], groups: [ops] }
  - { path: /storage/shared-nfs, roles: [PVEDatastoreUser], users: [alice@pve] }
pools:
  - { poolid: prod, comment: Production, storage: [shared-nfs] }
datacenter:
  registered-tags: [prod, web]
vms:
  - { vmid: 100, node: pve1, name: web }
";

/// The joining node: standalone pve2.
const JOINER: &str = r"
nodes:
  - { name: pve2, ip: 192.0.2.12 }
";

/// The joining node with a guest of its own.
const JOINER_WITH_GUEST: &str = r"
nodes:
  - { name: pve2, ip: 192.0.2.12 }
vms:
  - { vmid: 200, node: pve2, name: mine }
";

async fn start(yaml: &str) -> Pve {
    let s = Scenario::parse(yaml, "join.yaml").expect("scenario");
    start_with(builder().scenario(s)).await
}

/// The cluster's address as the `hostname` parameter names it.
fn host(pve: &Pve) -> String {
    pve.run.url().trim_start_matches("https://").to_string()
}

fn fingerprint(pve: &Pve) -> String {
    pve.run.fingerprint().expect("TLS").to_string()
}

/// Asks `joiner` to join `cluster` with `extra` parameters; answers the
/// task's UPID.
async fn join(joiner: &Pve, auth: &Auth, form: &str) -> String {
    let r = joiner.post("/cluster/config/join", auth, form).await;
    assert_eq!(r.status, 200, "{r:?}");
    r.data().as_str().expect("a UPID").to_string()
}

fn form(cluster: &Pve, password: &str, extra: &str) -> String {
    format!(
        "hostname={}&fingerprint={}&password={}{extra}",
        enc(&host(cluster)),
        enc(&fingerprint(cluster)),
        enc(password)
    )
}

/// Waits (in real time: the worker talks over the network) for the task
/// to end; answers its exit status and log.
async fn ended(pve: &Pve, auth: &Auth, upid: &str) -> (String, Vec<String>) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let st = pve.task_status(upid, auth).await;
        if st["status"] == "stopped" {
            let exit = st["exitstatus"].as_str().unwrap_or_default().to_string();
            return (exit, common::task_log(pve, auth, upid).await);
        }
        assert!(Instant::now() < deadline, "{upid} still runs: {st}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn names(list: &Value, key: &str) -> Vec<String> {
    let mut out: Vec<String> = list
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|e| e[key].as_str().map(str::to_string))
        .collect();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standalone_node_joins_the_cluster_of_another() {
    let cluster = start(CLUSTER).await;
    let joiner = start(JOINER).await;
    let (a, b) = (cluster.root().await, joiner.root().await);
    let upid = join(&joiner, &b, &form(&cluster, "password", "")).await;
    assert!(upid.contains(":clusterjoin::root@pam:"), "{upid}");
    let (exit, log) = ended(&joiner, &b, &upid).await;
    assert_eq!(exit, "OK", "{log:#?}");
    let expected = [
        format!("Establishing API connection with host '{}'", host(&cluster)),
        "Login succeeded.".into(),
        "check cluster join API version".into(),
        "No cluster network links passed explicitly, fallback to local node IP '192.0.2.12'".into(),
        "Request addition of this node".into(),
        "Join request OK, finishing setup locally".into(),
        "stopping pve-cluster service".into(),
        format!(
            "backup old database to '/var/lib/pve-cluster/backup/config-{}.sql.gz'",
            common::T0
        ),
        "waiting for quorum...OK".into(),
        "(re)generate node files".into(),
        "generate new node certificate".into(),
        "merge authorized SSH keys".into(),
        "generated new node certificate, restart pveproxy and pvedaemon services".into(),
        "successfully added node 'pve2' to cluster.".into(),
        "TASK OK".into(),
    ];
    assert_eq!(log, expected);

    // The joining side is a member, as the returned corosync.conf says.
    let nodes = joiner.get("/cluster/config/nodes", &b).await.data();
    assert_eq!(names(&nodes, "node"), ["pve1", "pve2", "pve3"]);
    let me = nodes
        .as_array()
        .and_then(|l| l.iter().find(|n| n["node"] == "pve2"))
        .expect("pve2");
    assert_eq!(me["nodeid"], "3");
    assert_eq!(me["ring0_addr"], "192.0.2.12");
    let status = joiner.get("/cluster/status", &b).await.data();
    let entry = |name: &str| {
        status
            .as_array()
            .and_then(|l| l.iter().find(|e| e["name"] == name))
            .cloned()
            .expect("listed")
    };
    assert_eq!(entry("lab")["type"], "cluster");
    assert_eq!(entry("lab")["nodes"], 3);
    assert_eq!(entry("lab")["quorate"], 1);
    assert_eq!(entry("pve1")["online"], 1);
    assert_eq!(entry("pve1")["ip"], "192.0.2.11");
    assert_eq!(entry("pve2")["local"], 1);
    let totem = joiner.get("/cluster/config/totem", &b).await.data();
    assert_eq!(totem["cluster_name"], "lab");
    let listed = joiner.get("/nodes", &b).await.data();
    assert_eq!(names(&listed, "node"), ["pve1", "pve2", "pve3"]);
    let pve1 = listed
        .as_array()
        .and_then(|l| l.iter().find(|n| n["node"] == "pve1"))
        .expect("pve1");
    let a_nodes = cluster.get("/nodes", &a).await.data();
    let a_pve1 = a_nodes
        .as_array()
        .and_then(|l| l.iter().find(|n| n["node"] == "pve1"))
        .expect("pve1");
    assert_eq!(pve1["ssl_fingerprint"], a_pve1["ssl_fingerprint"]);
    assert_eq!(pve1["status"], "online");

    // The shared configuration came over.
    let storage = joiner.get("/storage", &b).await.data();
    assert_eq!(names(&storage, "storage"), ["local", "shared-nfs"]);
    let users = joiner.get("/access/users?full=1", &b).await.data();
    assert_eq!(names(&users, "userid"), ["alice@pve", "root@pam"]);
    let alice = users
        .as_array()
        .and_then(|l| l.iter().find(|u| u["userid"] == "alice@pve"))
        .expect("alice");
    assert_eq!(alice["email"], "alice@example.com");
    assert_eq!(alice["groups"], "ops");
    assert_eq!(alice["tokens"][0]["tokenid"], "ci");
    let groups = joiner.get("/access/groups", &b).await.data();
    assert_eq!(groups[0]["groupid"], "ops");
    assert_eq!(groups[0]["users"], "alice@pve");
    let role = joiner.get("/access/roles/Watcher", &b).await;
    assert_eq!(role.status, 200, "{role:?}");
    let acl = joiner.get("/access/acl", &b).await.data();
    assert_eq!(acl, cluster.get("/access/acl", &a).await.data());
    let pool = joiner.get("/pools/prod", &b).await.data();
    assert_eq!(pool["comment"], "Production");
    // (PVE answers the list its parser makes, whatever the schema says.)
    let options = joiner.get("/cluster/options", &b).await.json()["data"].clone();
    assert_eq!(
        options["registered-tags"],
        serde_json::json!(["prod", "web"])
    );
    // Passwords are not in any answer: alice has none here; root@pam
    // keeps the joining node's own (PAM).
    let r = joiner
        .post(
            "/access/ticket",
            &Auth::None,
            "username=alice@pve&password=alice-secret",
        )
        .await;
    assert_eq!(r.status, 401, "{r:?}");
    joiner.root().await;
    // The other node's guests stay the other instance's.
    let vms = joiner.get("/cluster/resources?type=vm", &b).await.data();
    assert_eq!(vms, serde_json::json!([]));

    // The cluster lists the new member, online.
    let nodes = cluster.get("/cluster/config/nodes", &a).await.data();
    assert_eq!(names(&nodes, "node"), ["pve1", "pve2", "pve3"]);
    let status = cluster.get("/cluster/status", &a).await.data();
    let pve2 = status
        .as_array()
        .and_then(|l| l.iter().find(|e| e["name"] == "pve2"))
        .expect("pve2");
    assert_eq!(pve2["online"], 1);
    let a_nodes = cluster.get("/nodes", &a).await.data();
    let pve2 = a_nodes
        .as_array()
        .and_then(|l| l.iter().find(|n| n["node"] == "pve2"))
        .expect("pve2");
    assert_eq!(pve2["status"], "online");
    assert_eq!(
        pve2["ssl_fingerprint"].as_str(),
        joiner.run.fingerprint(),
        "{pve2}"
    );
    let log = cluster.get("/cluster/log", &a).await.data();
    assert!(
        log.as_array()
            .expect("lines")
            .iter()
            .any(|l| l["msg"] == "adding node pve2 to cluster"),
        "{log}"
    );

    // Joined, the node refuses another join.
    let upid = join(&joiner, &b, &form(&cluster, "password", "")).await;
    let (exit, log) = ended(&joiner, &b, &upid).await;
    assert_eq!(exit, "Check if node may join a cluster failed!");
    assert_eq!(
        log,
        [
            "detected the following error(s):",
            "* authentication key '/etc/corosync/authkey' already exists",
            "* cluster config '/etc/pve/corosync.conf' already exists",
            "* corosync is already running, is this node already in a cluster?!",
            "TASK ERROR: Check if node may join a cluster failed!",
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_with_guests_joins_only_by_force_and_loses_their_configs() {
    let cluster = start(CLUSTER).await;
    let joiner = start(JOINER_WITH_GUEST).await;
    let b = joiner.root().await;
    let upid = join(&joiner, &b, &form(&cluster, "password", "")).await;
    let (exit, log) = ended(&joiner, &b, &upid).await;
    assert_eq!(exit, "Check if node may join a cluster failed!");
    assert_eq!(
        log,
        [
            "detected the following error(s):",
            "* this host already contains virtual guests",
            "TASK ERROR: Check if node may join a cluster failed!",
        ]
    );
    let upid = join(
        &joiner,
        &b,
        &form(&cluster, "password", "&force=1&link0=192.0.2.12"),
    )
    .await;
    let (exit, log) = ended(&joiner, &b, &upid).await;
    assert_eq!(exit, "OK", "{log:#?}");
    assert_eq!(
        log[..6],
        [
            "detected the following error(s):",
            "* this host already contains virtual guests",
            "",
            "WARNING : detected error but forced to continue!",
            "",
            &format!("Establishing API connection with host '{}'", host(&cluster)),
        ]
    );
    assert!(
        !log.iter()
            .any(|l| l.starts_with("No cluster network links"))
    );
    let vms = joiner.get("/cluster/resources?type=vm", &b).await.data();
    assert_eq!(vms, serde_json::json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pve_refusals_end_the_task() {
    let cluster = start(CLUSTER).await;
    let joiner = start(JOINER).await;
    let b = joiner.root().await;

    // A certificate other than the one named.
    let wrong = "AA:".repeat(31) + "AA";
    let f = format!(
        "hostname={}&fingerprint={}&password=password",
        enc(&host(&cluster)),
        enc(&wrong)
    );
    let upid = join(&joiner, &b, &f).await;
    let (exit, log) = ended(&joiner, &b, &upid).await;
    let msg = format!(
        "fingerprint '{}' not verified, abort!",
        fingerprint(&cluster)
    );
    assert_eq!(exit, msg);
    assert_eq!(
        log,
        [
            format!("Establishing API connection with host '{}'", host(&cluster)),
            format!("TASK ERROR: {msg}"),
        ]
    );

    // A wrong password: the login's status line.
    let upid = join(&joiner, &b, &form(&cluster, "wrong", "")).await;
    let (exit, _) = ended(&joiner, &b, &upid).await;
    assert_eq!(exit, "401 authentication failure");

    // Nothing listens.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let f = format!(
        "hostname=127.0.0.1:{port}&fingerprint={}&password=password",
        enc(&fingerprint(&cluster))
    );
    let upid = join(&joiner, &b, &f).await;
    let (exit, _) = ended(&joiner, &b, &upid).await;
    assert_eq!(
        exit,
        format!("500 Can't connect to 127.0.0.1:{port} (Connection refused)")
    );

    // The cluster's own refusal: a link address in use.
    let upid = join(
        &joiner,
        &b,
        &form(&cluster, "password", "&link0=192.0.2.11&force=1"),
    )
    .await;
    let (exit, log) = ended(&joiner, &b, &upid).await;
    assert_eq!(exit, "Cluster join aborted!");
    assert!(
        log.contains(&"* link0: cannot use IP '192.0.2.11', not found on local node!".to_string()),
        "{log:#?}"
    );
    assert!(
        log.contains(
            &"An error occurred on the cluster node: corosync: address '192.0.2.11' already used on link ring0_addr by node 'pve1'"
                .to_string()
        ),
        "{log:#?}"
    );
    // Still standalone.
    let nodes = joiner.get("/cluster/config/nodes", &b).await.data();
    assert_eq!(nodes, serde_json::json!([]));

    // Only root@pam joins.
    let a = joiner.root().await;
    joiner
        .post("/access/users", &a, "userid=bob@pve&password=bob-secret")
        .await
        .data();
    let bob = joiner.login_as("bob@pve", "bob-secret").await;
    let r = joiner
        .post(
            "/cluster/config/join",
            &bob,
            &form(&cluster, "password", ""),
        )
        .await;
    r.assert_error(403, "Permission check failed (user != root@pam)\n");
    // The schema's checks.
    let r = joiner
        .post("/cluster/config/join", &a, "hostname=x&password=y")
        .await;
    r.assert_param_error("fingerprint", "property is missing and it is not optional");
}

/// A joining node that keeps its world in a data directory: a restart
/// finds it a member, the task ended as it did, and no password in the
/// directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_join_survives_a_restart_from_the_data_directory() {
    let cluster = start(CLUSTER).await;
    let dir = tempfile::Builder::new()
        .prefix("fake-pve-join-")
        .tempdir()
        .expect("a temporary directory");
    let scenario = || Scenario::parse(JOINER, "join.yaml").expect("scenario");
    let joiner = start_with(builder().scenario(scenario()).data_dir(dir.path())).await;
    let b = joiner.root().await;
    let upid = join(&joiner, &b, &form(&cluster, "cluster-pw-in-clear", "")).await;
    let (exit, _) = ended(&joiner, &b, &upid).await;
    assert_eq!(exit, "401 authentication failure");
    let upid = join(&joiner, &b, &form(&cluster, "password", "")).await;
    let (exit, log) = ended(&joiner, &b, &upid).await;
    assert_eq!(exit, "OK", "{log:#?}");
    joiner.run.shutdown().await;

    let again = start_with(builder().scenario(scenario()).data_dir(dir.path())).await;
    let b = again.root().await;
    let (exit2, log2) = ended(&again, &b, &upid).await;
    assert_eq!((exit2, log2), ("OK".to_string(), log));
    let totem = again.get("/cluster/config/totem", &b).await.data();
    assert_eq!(totem["cluster_name"], "lab");
    let users = again.get("/access/users", &b).await.data();
    assert_eq!(names(&users, "userid"), ["alice@pve", "root@pam"]);
    for entry in std::fs::read_dir(dir.path()).expect("dir") {
        let path = entry.expect("entry").path();
        let bytes = std::fs::read(&path).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains("cluster-pw-in-clear"), "{}", path.display());
    }
    again.run.shutdown().await;
}

/// While the cluster takes its time to answer `addnode`, the task runs
/// with the log so far and the joining node answers other calls (the
/// worker does not hold the model while it waits).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_grows_while_the_cluster_answers() {
    let mut latency = fake_pve::latency::Latency::instant();
    latency
        .requests
        .insert("addnode".into(), fake_pve::latency::Dist::Fixed(1500));
    let s = Scenario::parse(CLUSTER, "join.yaml").expect("scenario");
    let cluster = start_with(builder().scenario(s).latency(latency)).await;
    let joiner = start(JOINER).await;
    let b = joiner.root().await;
    let upid = join(&joiner, &b, &form(&cluster, "password", "")).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let log = common::task_log(&joiner, &b, &upid).await;
        if log.last().map(String::as_str) == Some("Request addition of this node") {
            let st = joiner.task_status(&upid, &b).await;
            assert_eq!(st["status"], "running", "{st}");
            break;
        }
        assert!(Instant::now() < deadline, "{log:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let started = Instant::now();
    let version = joiner.get("/version", &b).await;
    assert_eq!(version.status, 200);
    assert!(started.elapsed() < Duration::from_millis(1000));
    let (exit, _) = ended(&joiner, &b, &upid).await;
    assert_eq!(exit, "OK");
}
