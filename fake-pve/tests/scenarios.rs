//! Scenario files: the shipped examples load, malformed ones are refused
//! with file, line and reason, and the control API seeds and resets.

mod common;

use std::path::PathBuf;

use common::{Auth, builder, start, start_with};
use fake_pve::Scenario;
use serde_json::json;

fn examples() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scenarios dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files
}

#[tokio::test]
async fn shipped_examples_load_and_serve() {
    let files = examples();
    assert!(files.len() >= 2, "{files:?}");
    for f in files {
        let s = Scenario::load(&f).unwrap_or_else(|e| panic!("{e}"));
        let pve = start_with(builder().scenario(s.clone())).await;
        let root = pve.root().await;
        let nodes = pve.get("/nodes", &root).await.data();
        assert_eq!(
            nodes.as_array().map(Vec::len),
            Some(s.nodes.len()),
            "{}",
            f.display()
        );
    }
}

#[tokio::test]
async fn the_default_is_the_single_node_example() {
    let pve = start().await;
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/single-node.yaml");
    let example = start_with(builder().scenario(Scenario::load(&file).expect("example"))).await;
    let (a, b) = (pve.root().await, example.root().await);
    for path in ["/cluster/resources?type=storage", "/cluster/status"] {
        assert_eq!(
            pve.get(path, &a).await.data(),
            example.get(path, &b).await.data(),
            "{path}"
        );
    }
}

#[tokio::test]
async fn example_cluster_token_works() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/three-node-cluster.yaml");
    let pve = start_with(builder().scenario(Scenario::load(&file).expect("example"))).await;
    let tok =
        Auth::Token("PVEAPIToken=root@pam!automation=2b9e6f31-8c47-4d0a-b5e2-91c3f7a8d604".into());
    assert_eq!(pve.get("/cluster/nextid", &tok).await.data(), json!("102"));
    let ci = pve.login_as("ci@pve", "ci-password").await;
    assert_eq!(pve.get("/version", &ci).await.status, 200);
}

#[test]
fn malformed_scenarios_name_file_line_and_reason() {
    let dir = tempfile::Builder::new()
        .prefix("fake-pve-scn-")
        .tempdir()
        .expect("a temporary directory")
        .keep();
    std::fs::create_dir_all(&dir).expect("tmp");
    let f = dir.join("bad.yaml");
    std::fs::write(&f, "nodes:\n  - name: pve\n    cpus: lots\n").expect("write");
    let e = Scenario::load(&f).expect_err("refused");
    assert_eq!(
        e.to_string(),
        format!(
            "{}:3: nodes[0].cpus: invalid type: string \"lots\", expected u32",
            f.display()
        )
    );
    let missing = dir.join("missing.yaml");
    let e = Scenario::load(&missing).expect_err("refused");
    assert!(
        e.to_string().starts_with(&missing.display().to_string()),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn control_api_seed_reset_state_health() {
    let pve = start().await;
    let root = pve.root().await;
    let health = pve
        .send(reqwest::Method::GET, "/_fake/health", &root, None)
        .await
        .data();
    assert_eq!(
        (health["status"].as_str(), health["nodes"].as_u64()),
        (Some("ok"), Some(1))
    );

    let seed = "cluster: demo\nnodes: [{name: a}, {name: b}]\nvms: [{vmid: 100, node: b}]\n";
    let r = pve
        .send(
            reqwest::Method::POST,
            "/_fake/seed",
            &root,
            Some(("application/yaml", seed.into())),
        )
        .await;
    assert_eq!(r.data()["nodes"], 2);
    // root's ticket survives a reseed.
    let names: Vec<String> = pve
        .get("/nodes", &root)
        .await
        .data()
        .as_array()
        .expect("list")
        .iter()
        .map(|n| n["node"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(names, ["a", "b"]);
    pve.post("/nodes/a/startall", &root, "").await.data();
    let state = pve
        .send(reqwest::Method::GET, "/_fake/state", &root, None)
        .await
        .data();
    assert_eq!(state["cluster"]["name"], "demo");
    assert_eq!(state["cluster"]["tasks"].as_array().map(Vec::len), Some(1));
    assert_eq!(state["cluster"]["vms"]["100"]["node"], "b");
    assert_eq!(state["clock"]["now"], common::T0);

    // Reset goes back to the last seed, without its tasks.
    let r = pve
        .send(reqwest::Method::POST, "/_fake/reset", &root, None)
        .await;
    assert_eq!(r.status, 200);
    let state = pve
        .send(reqwest::Method::GET, "/_fake/state", &root, None)
        .await
        .data();
    assert_eq!(state["cluster"]["tasks"], json!([]));
    assert_eq!(state["cluster"]["name"], "demo");

    // A malformed seed is refused and changes nothing.
    let r = pve
        .send(
            reqwest::Method::POST,
            "/_fake/seed",
            &root,
            Some(("application/yaml", "nodes: [{name: a, ram: 1}]".into())),
        )
        .await;
    r.assert_param_error("scenario", "<request body>:1: nodes[0]: unknown field `ram`, expected one of `name`, `cpus`, `sockets`, `memory`, `disk`, `status`, `ip`, `level`, `nics`, `bridges`, `storages`, `disks`, `pci`, `usb`, `updates`, `scan`, `dns`, `hosts`, `timezone`, `services`, `subscription`, `fingerprint`");
    assert_eq!(
        pve.get("/nodes", &root)
            .await
            .data()
            .as_array()
            .map(Vec::len),
        Some(2)
    );

    // The clock moves on request.
    let c = pve
        .send(
            reqwest::Method::POST,
            "/_fake/clock",
            &root,
            Some(("application/x-www-form-urlencoded", "advance=90".into())),
        )
        .await
        .data();
    assert_eq!(c["now"], common::T0 + 90);
}

#[tokio::test]
async fn control_api_is_for_root_only() {
    let pve = common::start_scenario("users: [{userid: bob@pve, password: pw}]").await;
    let r = pve
        .send(reqwest::Method::GET, "/_fake/health", &Auth::None, None)
        .await;
    assert_eq!((r.status, r.reason.as_str()), (401, "No ticket"));
    let bob = pve.login_as("bob@pve", "pw").await;
    let r = pve
        .send(reqwest::Method::POST, "/_fake/reset", &bob, None)
        .await;
    assert_eq!(r.status, 403);
    let root = pve.root().await;
    let Auth::Ticket { ticket, .. } = root.clone() else {
        unreachable!()
    };
    let no_csrf = Auth::Ticket {
        ticket,
        csrf: String::new(),
    };
    assert_eq!(
        pve.send(reqwest::Method::POST, "/_fake/reset", &no_csrf, None)
            .await
            .status,
        401
    );
    let r = pve
        .send(reqwest::Method::GET, "/_fake/nothing", &root, None)
        .await;
    assert_eq!(r.status, 501);
}

/// A scenario's `setup` calls run once the world is built, and again
/// after a reset; a failing one stops the start unless it `may_fail`.
#[tokio::test]
async fn setup_calls_run_at_start_and_after_a_reset() {
    let yaml = "nodes: [{name: pve}]
setup:
  - { method: POST, path: /cluster/firewall/aliases, params: { name: office, cidr: 198.51.100.0/24 } }
  - { method: PUT, path: /cluster/options, params: { keyboard: de }, may_fail: true }
";
    let pve = start_with(builder().scenario(Scenario::parse(yaml, "t.yaml").expect("valid"))).await;
    let root = pve.root().await;
    let names = |v: serde_json::Value| -> Vec<String> {
        v.as_array()
            .expect("list")
            .iter()
            .map(|a| a["name"].as_str().expect("name").to_string())
            .collect()
    };
    let aliases = pve.get("/cluster/firewall/aliases", &root).await.data();
    assert_eq!(names(aliases), ["office"]);
    let r = pve.delete("/cluster/firewall/aliases/office", &root).await;
    assert_eq!(r.status, 200);
    assert!(names(pve.get("/cluster/firewall/aliases", &root).await.data()).is_empty());
    let r = common::control(&pve, &root, reqwest::Method::POST, "/_fake/reset", None).await;
    assert_eq!(r.status, 200);
    let root = pve.root().await;
    let aliases = pve.get("/cluster/firewall/aliases", &root).await.data();
    assert_eq!(names(aliases), ["office"]);

    let bad = "nodes: [{name: pve}]\nsetup:\n  - { method: PUT, path: /cluster/options, params: { next-id: 'lower=900,upper=800' } }\n";
    let Err(e) = builder()
        .scenario(Scenario::parse(bad, "bad.yaml").expect("reads"))
        .start()
        .await
    else {
        panic!("a failing setup call must stop the start");
    };
    assert!(
        e.to_string().contains(
            "setup: PUT /cluster/options: lower (900) <= upper (800) boundary rule broken"
        ),
        "{e}"
    );
}
