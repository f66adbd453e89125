//! Joining a cluster (`@fake-only`): a second in-process fake-pve runs
//! the cluster the scenario's own fake-pve joins. It is the actor "the
//! cluster"; its address and certificate fingerprint are
//! `{var:cluster_host}` (`{var:cluster_ip}`, `{var:cluster_port}`) and
//! `{var:cluster_fingerprint}`. Remote migrations use it too.

use std::time::{Duration, Instant};

use cucumber::gherkin::Step;
use cucumber::{given, when};
use pve_client::api::seg;
use pve_client::api::tasks::Upid;
use pve_client::{Client, Config, Params, RetryPolicy};
use pve_schema::Release;

use crate::world::{ADMIN, FAKE_ROOT_PASSWORD, FAKE_T0, PveWorld};

#[given("a second fake-pve runs the cluster:")]
async fn second_fake(w: &mut PveWorld, step: &Step) {
    // Only beside an in-process fake-pve.
    let _ = w.fake();
    let yaml = w.expand(step.docstring.as_deref().unwrap_or_default());
    let version = match w.release() {
        Release::V8_4 => fake_pve::PveVersion::V8_4,
        Release::V9_1 => fake_pve::PveVersion::V9_1,
        Release::V9_2 => fake_pve::PveVersion::V9_2,
    };
    let scenario = fake_pve::Scenario::parse(&yaml, "cluster.yaml")
        .unwrap_or_else(|e| panic!("the cluster's scenario: {e}"));
    let run = fake_pve::FakePve::builder()
        .listen(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
        .auth_failure_delay(Duration::ZERO)
        .clock(fake_pve::Clock::manual(FAKE_T0))
        .pve_version(version)
        .scenario(scenario)
        .start()
        .await
        .unwrap_or_else(|e| panic!("the second fake-pve does not start: {e}"));
    let config = Config::builder()
        .endpoint(run.url())
        .password("root@pam", FAKE_ROOT_PASSWORD)
        .ca_bundle_pem(run.cert_pem().unwrap_or_default().to_string())
        .retry(RetryPolicy::none())
        .build()
        .unwrap_or_else(|e| panic!("client configuration: {e}"));
    let client = Client::connect(config)
        .await
        .unwrap_or_else(|e| panic!("cannot log in to the second fake-pve: {e}"));
    let host = run.url().trim_start_matches("https://").to_string();
    let fingerprint = run.fingerprint().unwrap_or_default().to_string();
    if let Some((ip, port)) = host.rsplit_once(':') {
        // a remote migration's `target-endpoint` names them apart
        w.vars.insert("cluster_ip".into(), ip.to_string());
        w.vars.insert("cluster_port".into(), port.to_string());
    }
    w.vars.insert("cluster_host".into(), host);
    w.vars.insert("cluster_fingerprint".into(), fingerprint);
    w.add_peer("the cluster", run, client);
}

/// Waits for the task the last call started: a join's (or a remote
/// migration's) worker talks to the cluster over the network, so its end
/// comes in real time (within 30 seconds), whatever the emulated clock
/// says.
#[when("the join has ended")]
#[when("the migration has ended")]
async fn join_ended(w: &mut PveWorld) {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    let text = o.data.as_str().unwrap_or_default().to_string();
    let upid: Upid = text
        .parse()
        .unwrap_or_else(|e| panic!("{}: not a UPID ({e})", o.data));
    let path = format!(
        "/nodes/{}/tasks/{}/status",
        seg(upid.node()),
        seg(upid.as_str())
    );
    let client = w.client_of(ADMIN);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let st = client
            .get(&path, &Params::new())
            .await
            .unwrap_or_else(|e| panic!("reading the status of {upid}: {e}"));
        if st["status"] != "running" {
            break;
        }
        assert!(Instant::now() < deadline, "{upid} still runs after 30 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    w.upids.push(upid);
}
