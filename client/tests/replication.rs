//! Storage replication, metric servers, the cluster's tasks and log and
//! the corosync configuration (`api::replication`, `api::metrics`,
//! `api::clusterlog`, `api::clusterconfig`) against an in-process
//! fake-pve; every answer is checked against the schema.

mod common;

use common::{Mode, base, checked_client, start};
use pve_client::api::replication::ReplicationJobConfig;
use pve_client::{Client, ConfigBuilder};

/// Two nodes with a ZFS pool each; VM 100 on pve1 with a ZFS disk, VM
/// 101 on LVM-thin.
const CLUSTER: &str = r"
cluster: lab
nodes:
  - name: pve1
  - name: pve2
storages:
  - { id: local, type: dir, path: /var/lib/vz }
  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve }
  - { id: local-zfs, type: zfspool, pool: rpool/data, size: 500G }
vms:
  - vmid: 100
    node: pve1
    name: db
    config: { scsi0: 'local-zfs:vm-100-disk-0,size=8G' }
  - vmid: 101
    node: pve1
    config: { scsi0: 'local-lvm:vm-101-disk-0,size=8G' }
";

async fn cluster() -> (fake_pve::Running, Client) {
    let run = common::builder()
        .scenario(fake_pve::Scenario::parse(CLUSTER, "replication.yaml").expect("scenario"))
        .start()
        .await
        .expect("starts");
    let b: ConfigBuilder = base(&run).password("root@pam", "password");
    let pve = Client::new(b.build().expect("config")).expect("client");
    (run, pve)
}

#[tokio::test]
async fn a_job_is_made_runs_on_the_clock_and_is_removed() {
    let (run, pve) = cluster().await;
    let repl = pve.replication();
    let e = repl
        .create("101-0", "pve2", &ReplicationJobConfig::default())
        .await
        .expect_err("LVM-thin cannot replicate");
    assert!(
        e.to_string()
            .contains("missing replicate feature on volume 'local-lvm:vm-101-disk-0'"),
        "{e}"
    );
    repl.create(
        "100-0",
        "pve2",
        &ReplicationJobConfig::default()
            .schedule("*/30")
            .comment("db to pve2"),
    )
    .await
    .expect("create");
    let jobs = repl.index().await.expect("index");
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].target, "pve2");
    assert_eq!(jobs[0].source.as_deref(), Some("pve1"));
    let job = repl.read("100-0").await.expect("read");
    assert_eq!(job.schedule.as_deref(), Some("*/30"));

    let st = repl.status("pve1", None).await.expect("status");
    assert_eq!(st[0].last_sync, Some(0));
    run.clock().advance(60);
    let st = repl.job_status("pve1", "100-0").await.expect("job status");
    assert!(st.last_sync.unwrap_or(0) > 0, "{st:?}");
    assert_eq!(st.fail_count, Some(0));
    let log = repl.read_job_log("pve1", "100-0", 0, 0).await.expect("log");
    assert_eq!(log.total, log.lines.len() as u64);
    assert!(log.lines[0].t.ends_with("100-0: start replication job"));
    repl.schedule_now("pve1", "100-0").await.expect("now");
    assert_eq!(
        repl.job_status("pve1", "100-0").await.expect("st").last_try,
        Some(0)
    );

    repl.update(
        "100-0",
        &ReplicationJobConfig::default()
            .rate(20.0)
            .delete(&["comment"]),
    )
    .await
    .expect("update");
    let job = repl.read("100-0").await.expect("read");
    assert_eq!(job.rate, Some(20.0));
    assert_eq!(job.comment, None);

    repl.delete("100-0", false, false).await.expect("delete");
    assert_eq!(
        repl.read("100-0")
            .await
            .expect("marked")
            .remove_job
            .as_deref(),
        Some("full")
    );
    run.clock().advance(60);
    assert!(repl.index().await.expect("index").is_empty());
}

#[tokio::test]
async fn metric_servers_tasks_log_and_corosync() {
    let run = start().await;
    let (pve, checked) = checked_client(&run, Mode::Password);
    let m = pve.metrics();
    m.create(
        "g1",
        "graphite",
        &[("server", "192.0.2.10"), ("port", "2003")],
    )
    .await
    .expect("create");
    let list = m.server_index().await.expect("index");
    assert_eq!(list[0].id, "g1");
    assert_eq!(list[0].port, Some(2003));
    assert!(!list[0].disable);
    m.update(
        "g1",
        &[("server", "192.0.2.10"), ("port", "2004"), ("path", "pve")],
        &[],
    )
    .await
    .expect("update");
    let r = m.read("g1").await.expect("read");
    assert_eq!(r["path"], "pve");
    assert_eq!(r["port"], 2004);
    m.delete("g1").await.expect("delete");
    let e = m.delete("g1").await.expect_err("gone");
    assert!(e.to_string().contains("unknown section type ''"), "{e}");

    let tasks = pve.cluster_log().tasks().await.expect("tasks");
    assert!(tasks.is_empty(), "{tasks:?}");
    let log = pve.cluster_log().log(Some(5)).await.expect("log");
    assert!(
        log.iter()
            .any(|e| e.msg == "successful auth for user 'root@pam'"),
        "{log:?}"
    );

    let cfg = pve.cluster_config();
    assert!(cfg.nodes().await.expect("nodes").is_empty());
    assert!(cfg.totem().await.expect("totem").is_null());
    assert_eq!(cfg.join_api_version().await.expect("version"), 1);
    let e = cfg.join_info(None).await.expect_err("standalone");
    assert_eq!(e.status(), Some(424), "{e}");
    let upid = cfg.create("lab", &[]).await.expect("create");
    pve.tasks().wait(&upid).await.expect("done");
    let nodes = cfg.nodes().await.expect("nodes");
    assert_eq!(nodes[0]["node"], "pve");
    assert_eq!(nodes[0]["nodeid"], "1");
    assert_eq!(cfg.totem().await.expect("totem")["cluster_name"], "lab");
    let info = cfg.join_info(None).await.expect("join info");
    assert_eq!(info["preferred_node"], "pve");
    let e = cfg.create("other", &[]).await.expect_err("exists");
    assert!(
        e.to_string()
            .contains("cluster config '/etc/pve/corosync.conf' already exists"),
        "{e}"
    );
    let tasks = pve.cluster_log().tasks().await.expect("tasks");
    assert_eq!(tasks[0].kind, "clustercreate");
    assert!(checked.names().len() > 10);
}

#[tokio::test]
async fn a_node_enters_and_leaves_the_node_list() {
    use pve_client::api::clusterconfig::AddNodeRequest;
    let (_run, pve) = cluster().await;
    let cfg = pve.cluster_config();
    let req = AddNodeRequest {
        apiversion: Some(1),
        ..Default::default()
    };
    let added = cfg
        .addnode("pve3", &[(0, "192.0.2.30")], &req)
        .await
        .expect("addnode");
    assert!(
        added.corosync_conf.contains("ring0_addr: 192.0.2.30"),
        "{}",
        added.corosync_conf
    );
    assert!(!added.corosync_authkey.is_empty());
    assert!(added.warnings.is_empty());
    let e = cfg
        .addnode("pve3", &[(0, "192.0.2.31")], &req)
        .await
        .expect_err("listed");
    assert!(
        e.to_string().contains("can't add existing node 'pve3'"),
        "{e}"
    );
    let nodes = cfg.nodes().await.expect("nodes");
    assert_eq!(nodes.len(), 3);
    assert_eq!(nodes[2]["nodeid"], "3");
    cfg.delnode("pve3").await.expect("delnode");
    assert_eq!(cfg.nodes().await.expect("nodes").len(), 2);
    let e = cfg.delnode("pve1").await.expect_err("myself");
    assert!(
        e.to_string().contains("Cannot delete myself from cluster!"),
        "{e}"
    );
}
