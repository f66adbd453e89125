//! The twin round trip: a fake-pve started from a rich world (tests/twin/
//! rich.yaml) is captured (`fake-pve scenario capture`'s code), a twin is
//! started from the capture and `compare`'s code finds no difference; a
//! twin that lost something is found out.

use std::sync::Arc;
use std::time::Duration;

use fake_pve::twin::compare::{CompareReport, compare_client, compare_readers};
use fake_pve::twin::{Reader, capture};
use fake_pve::{FakePve, PveVersion, Running, Scenario, Tls};
use pve_client::{Client, Config};

const RICH: &str = include_str!("twin/rich.yaml");

async fn start(yaml: &str, v: PveVersion) -> Running {
    let s = Scenario::parse(yaml, "rich.yaml").expect("scenario");
    FakePve::builder()
        .listen("127.0.0.1:0".parse().expect("address"))
        .tls(Tls::Off)
        .root_password("secret")
        .pve_version(v)
        .auth_failure_delay(Duration::ZERO)
        .scenario(s)
        .start()
        .await
        .expect("start")
}

fn client(pve: &Running) -> Client {
    Config::builder()
        .endpoint(pve.url())
        .password("root@pam", "secret")
        .build()
        .and_then(Client::new)
        .expect("client")
}

fn assert_faithful(report: &CompareReport) {
    assert!(report.faithful(), "{}", report.to_text());
    assert_eq!(report.summary.unread, 0, "{}", report.to_text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_twin_of_a_rich_world_answers_as_it_does() {
    for v in [PveVersion::V9_2, PveVersion::V9_1, PveVersion::V8_4] {
        let a = start(RICH, v).await;
        let report = compare_client(client(&a), &a.url(), None)
            .await
            .expect("compare");
        assert_faithful(&report);
        assert_eq!(report.release, v.release());
        // Every area was read.
        for path in [
            "/cluster/status",
            "/nodes/pve2/network",
            "/nodes/pve3/network",
            "/nodes/pve2/hardware/pci",
            "/nodes/pve2/hardware/pci/0000:65:00.0/mdev",
            "/nodes/pve2/hardware/usb",
            "/storage",
            "/nodes/pve1/storage/local/content",
            "/nodes/pve2/storage/local/content",
            "/nodes/pve1/storage/shared/content",
            "/nodes/pve1/qemu/100/pending",
            "/nodes/pve1/qemu/100/snapshot",
            "/nodes/pve1/lxc/200/snapshot",
            "/pools/prod",
            "/access/acl",
            "/access/tfa",
            "/cluster/firewall/rules",
            "/nodes/pve1/qemu/100/firewall/aliases",
            "/cluster/sdn/vnets",
            "/cluster/sdn/zones?pending=1",
            "/cluster/sdn/ipams/pve/status",
            "/cluster/ha/resources",
            "/cluster/backup",
            "/cluster/replication",
            "/cluster/options",
            "/cluster/metrics/server",
            "/cluster/notifications/endpoints/sendmail",
            "/cluster/notifications/matchers",
            "/cluster/notifications/targets",
            "/cluster/acme/account/main",
            "/cluster/acme/plugins",
        ] {
            assert!(
                report.calls.iter().any(|c| c.path == path),
                "{path} not compared (release {})",
                v.release()
            );
        }
        a.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_capture_keeps_each_area() {
    let a = start(RICH, PveVersion::V9_2).await;
    let cap = capture(Arc::new(Reader::new(client(&a))), &a.url())
        .await
        .expect("capture");
    let s = &cap.scenario;
    assert_eq!(s["cluster"], "lab");
    assert_eq!(s["nodes"].as_array().map(Vec::len), Some(3));
    assert_eq!(s["vms"].as_array().map(Vec::len), Some(3));
    assert_eq!(s["containers"].as_array().map(Vec::len), Some(2));
    let web = &s["vms"][0];
    assert_eq!(web["pending"]["memory"], "8192");
    assert_eq!(web["pending_delete"][0], "tags");
    assert_eq!(web["snapshots"]["daily"]["parent"], "clean");
    assert_eq!(web["config"]["parent"], "daily");
    assert_eq!(
        s["containers"][0]["snapshots"]["base"]["description"],
        "fresh"
    );
    assert_eq!(
        s["nodes"][2]["nics"],
        serde_json::json!(["enp1s0f0", "enp1s0f1", "eno1"])
    );
    // Second factors as listed, without secrets.
    let alice = serde_json::to_string(&s["users"][0]["tfa"]).expect("json");
    assert!(alice.contains(r#""description":"phone""#), "{alice}");
    assert!(alice.contains(r#""type":"recovery""#), "{alice}");
    assert!(!alice.contains("secret"), "{alice}");
    assert_eq!(s["users"][1]["tfa"][0]["enable"], false);
    // Files on storages: an ISO, a template, backups with notes and
    // protection.
    let vols = serde_json::to_string(&s["volumes"]).expect("json");
    for needle in [
        r#""volid":"local:iso/debian-12.6.0-amd64-netinst.iso""#,
        r#""node":"pve2""#,
        r#""size":658505728"#,
        r#""notes":"before the upgrade\nkept for a month""#,
        r#""protected":true"#,
    ] {
        assert!(vols.contains(needle), "{needle} not in volumes: {vols}");
    }
    let setup = serde_json::to_string(&s["setup"]).expect("json");
    for needle in [
        "/cluster/sdn/zones",
        "webgrp",
        "vm:101",
        "nightly",
        "101-0",
        "bond0.30",
        "/cluster/sdn/vnets/green/ips",
        "BC:24:11:00:00:50",
        "blue net",
    ] {
        assert!(setup.contains(needle), "{needle} not in setup: {setup}");
    }
    // No secret is read: the capture has no password and no token secret.
    let text = cap.to_yaml(&a.url());
    assert!(!text.contains("secret12"), "{text}");
    assert!(!text.contains("password:"), "{text}");
    a.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_twin_that_lost_something_is_found_out() {
    let a = start(RICH, PveVersion::V9_2).await;
    let cap = capture(Arc::new(Reader::new(client(&a))), &a.url())
        .await
        .expect("capture");
    // The twin of a capture that dropped VM 100's pending change, the
    // cluster's firewall aliases and, from each area read besides, one
    // thing.
    let mut scenario = cap.scenario.clone();
    scenario["vms"][0]
        .as_object_mut()
        .expect("vm")
        .remove("pending");
    scenario["setup"]
        .as_array_mut()
        .expect("setup")
        .retain(|c| {
            c["path"] != "/cluster/firewall/aliases"
                && c["path"] != "/cluster/sdn/vnets/green/ips"
                && c["params"]["zone"] != "dev"
                && c["path"] != "/cluster/notifications/matchers"
        });
    // Areas beyond the guests: a twin without the captured ISO image,
    // with fake-pve's NICs instead of pve3's.
    scenario["nodes"][2]
        .as_object_mut()
        .expect("node")
        .remove("nics");
    scenario["nodes"][1]
        .as_object_mut()
        .expect("node")
        .remove("usb");
    scenario["users"][0]
        .as_object_mut()
        .expect("user")
        .remove("tfa");
    scenario["volumes"]
        .as_array_mut()
        .expect("volumes")
        .retain(|v| !v["volid"].as_str().is_some_and(|i| i.contains(":iso/")));
    let yaml = serde_yaml::to_string(&scenario).expect("yaml");
    let b = start(&yaml, PveVersion::V9_2).await;
    let calls = compare_readers(
        &Reader::new(client(&a)),
        &Reader::new(client(&b)),
        cap.paths.clone(),
    )
    .await;
    let report = CompareReport::new(&a.url(), PveVersion::V9_2, cap.calls, calls);
    assert!(!report.faithful());
    let differing: Vec<&str> = report
        .calls
        .iter()
        .filter(|c| c.outcome == "differs")
        .map(|c| c.path.as_str())
        .collect();
    assert!(
        differing.contains(&"/nodes/pve1/qemu/100/pending"),
        "{differing:?}"
    );
    assert!(
        differing.contains(&"/cluster/firewall/aliases"),
        "{differing:?}"
    );
    for path in [
        "/nodes/pve1/storage/local/content",
        "/nodes/pve3/network",
        "/access/tfa",
        "/cluster/sdn/ipams/pve/status",
        "/cluster/sdn/zones?pending=1",
        "/cluster/notifications/matchers",
        "/nodes/pve2/hardware/usb",
    ] {
        assert!(
            differing.contains(&path),
            "{path} not found out: {differing:?}"
        );
    }
    let text = report.to_text();
    assert!(
        text.contains("DIFFERS GET /cluster/firewall/aliases"),
        "{text}"
    );
    a.shutdown().await;
    b.shutdown().await;
}

const BIN: &str = env!("CARGO_BIN_EXE_fake-pve");

/// Runs the binary with `args` (off the runtime's threads, which serve
/// the in-process fake-pve it reads): its exit status, output and error.
async fn run(args: Vec<String>) -> (Option<i32>, String, String) {
    tokio::task::spawn_blocking(move || {
        let out = std::process::Command::new(BIN)
            .args(&args)
            .env("RUST_LOG", "warn")
            .output()
            .expect("run fake-pve");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    })
    .await
    .expect("join")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_commands_capture_and_compare() {
    let a = start(RICH, PveVersion::V9_1).await;
    let dir = tempfile::tempdir().expect("dir");
    let pw = dir.path().join("pw");
    std::fs::write(&pw, "secret\n").expect("password file");
    let out = dir.path().join("twin.yaml");
    let login = |cmd: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = cmd.iter().map(ToString::to_string).collect();
        v.extend(
            [
                "--from",
                &a.url(),
                "--username",
                "root@pam",
                "--password-file",
                pw.to_str().expect("path"),
            ]
            .map(String::from),
        );
        v
    };
    let mut args = login(&["scenario", "capture"]);
    args.extend(["--output".into(), out.display().to_string()]);
    let (code, _, err) = run(args).await;
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("captured PVE 9.1"), "{err}");
    let text = std::fs::read_to_string(&out).expect("capture written");
    let s = Scenario::parse(&text, "twin.yaml").expect("the capture is a scenario");
    assert_eq!(s.vms.len(), 3);
    let json = dir.path().join("report.json");
    let mut args = login(&["compare"]);
    args.extend(["--json".into(), json.display().to_string()]);
    let (code, stdout, err) = run(args).await;
    assert_eq!(code, Some(0), "{stdout}{err}");
    assert!(stdout.contains("0 differ"), "{stdout}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("report")).expect("json");
    assert_eq!(report["summary"]["differ"], 0);
    assert_eq!(report["release"], "9.1");
    a.shutdown().await;
}

/// A server on loopback that answers every request with `body` (of
/// `content_type`): its URL.
async fn stub(content_type: &'static str, body: &'static str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        while let Ok((mut s, _)) = listener.accept().await {
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf).await;
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = s.write_all((head + body).as_bytes()).await;
        }
    });
    url
}

/// Runs both commands against `url`: their exit statuses and errors.
async fn refusals(url: &str) -> Vec<(Option<i32>, String)> {
    let mut out = Vec::new();
    for cmd in [&["scenario", "capture", "-o", "-"][..], &["compare"][..]] {
        let mut args: Vec<String> = cmd.iter().map(ToString::to_string).collect();
        args.extend(["--from", url, "--token", "a@pve!t=x"].map(String::from));
        let (code, _, err) = run(args).await;
        out.push((code, err));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_that_is_no_pve_is_refused() {
    let url = stub("text/html", "<html>hello</html>").await;
    for (code, err) in refusals(&url).await {
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains(&format!("{url} does not answer as a Proxmox VE API")),
            "{err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_fake_pve_does_not_emulate_is_refused() {
    let url = stub(
        "application/json",
        r#"{"data":{"version":"7.4-3","release":"7.4","repoid":"9002ab8a"}}"#,
    )
    .await;
    for (code, err) in refusals(&url).await {
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains("PVE 7.4-3 is not a release fake-pve emulates (8.4, 9.1 or 9.2)"),
            "{err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn help_says_only_gets_are_sent() {
    let (code, out, _) = run(vec!["scenario".into(), "capture".into(), "--help".into()]).await;
    assert_eq!(code, Some(0));
    assert!(out.contains("GETs only"), "{out}");
    let (_, out, _) = run(vec!["compare".into(), "--help".into()]).await;
    assert!(out.contains("Only GETs are sent"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_offline_node_is_reported_not_fatal() {
    let yaml = "cluster: lab
nodes:
  - { name: pve1 }
  - { name: pve2, status: offline }
vms:
  - { vmid: 100, node: pve1, name: up, config: { memory: 1024 } }
  - { vmid: 101, node: pve2, name: down, config: { memory: 2048, cores: 2 } }
";
    let a = start(yaml, PveVersion::V9_2).await;
    let cap = capture(Arc::new(Reader::new(client(&a))), &a.url())
        .await
        .expect("an offline node does not stop the capture");
    assert!(
        cap.unread
            .iter()
            .any(|u| u.path.starts_with("/nodes/pve2/qemu/101/config")),
        "{:?}",
        cap.unread
    );
    assert_eq!(cap.scenario["nodes"][1]["status"], "offline");
    // What the cluster's list says of the guest it could not read.
    let down = &cap.scenario["vms"][1];
    assert_eq!(down["config"]["name"], "down");
    assert_eq!(down["config"]["memory"], "2048");
    assert!(
        cap.to_yaml(&a.url())
            .contains("# not read: /nodes/pve2/qemu/101/config")
    );
    Scenario::parse(&cap.to_yaml(&a.url()), "twin.yaml").expect("the capture is a scenario");
    a.shutdown().await;
}
