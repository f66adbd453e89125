//! `join`: a standalone fake-pve joins the cluster of another over
//! HTTPS, and a wrong password ends the task as PVE's join does.

mod common;

use common::{base, builder};
use pve_client::Client;
use pve_client::api::clusterconfig::JoinRequest;
use pve_client::error::Error;

const CLUSTER: &str = "cluster: lab\nnodes:\n  - { name: pve1, ip: 192.0.2.11 }\n";
const JOINER: &str = "nodes:\n  - { name: pve2, ip: 192.0.2.12 }\n";

async fn start(yaml: &str) -> (fake_pve::Running, Client) {
    let run = builder()
        .scenario(fake_pve::Scenario::parse(yaml, "join.yaml").expect("scenario"))
        .start()
        .await
        .expect("starts");
    let b = base(&run).password("root@pam", "password");
    let pve = Client::new(b.build().expect("config")).expect("client");
    (run, pve)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_joins_a_cluster_and_a_wrong_password_fails_the_task() {
    let (cluster_run, cluster) = start(CLUSTER).await;
    let (_joiner_run, joiner) = start(JOINER).await;
    let host = cluster_run.url().trim_start_matches("https://").to_string();
    let fp = cluster_run.fingerprint().expect("TLS").to_string();

    let wrong = JoinRequest::new(host.clone(), fp.clone(), "wrong");
    let upid = joiner.cluster_config().join(&wrong).await.expect("started");
    assert_eq!(upid.kind(), "clusterjoin");
    match joiner.tasks().wait(&upid).await {
        Err(Error::TaskFailed { exitstatus, .. }) => {
            assert_eq!(exitstatus, "401 authentication failure");
        }
        other => panic!("expected the task to fail: {other:?}"),
    }

    let mut req = JoinRequest::new(host, fp, "password");
    req.links.push((0, "192.0.2.12".into()));
    let upid = joiner.cluster_config().join(&req).await.expect("started");
    joiner.tasks().wait(&upid).await.expect("joined");
    let nodes = joiner.cluster_config().nodes().await.expect("nodes");
    let names: Vec<&str> = nodes.iter().filter_map(|n| n["node"].as_str()).collect();
    assert_eq!(names, ["pve1", "pve2"]);
    let theirs = cluster.cluster_config().nodes().await.expect("nodes");
    assert_eq!(theirs.len(), 2);
    assert_eq!(
        joiner.cluster_config().totem().await.expect("totem")["cluster_name"],
        "lab"
    );
}
