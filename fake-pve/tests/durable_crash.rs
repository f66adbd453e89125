//! The `fake-pve` binary with `--data-dir`, killed with SIGKILL at
//! moments picked at random while several clients write: after each
//! restart every acknowledged change is there, and nothing is there half.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_fake-pve");

fn spawn(dir: &std::path::Path) -> (Child, String) {
    let mut cmd = Command::new(BIN);
    for (k, _) in std::env::vars() {
        if k.starts_with("FAKE_PVE_") {
            cmd.env_remove(k);
        }
    }
    cmd.args([
        "--listen",
        "127.0.0.1:0",
        "--http",
        "--auth-failure-delay",
        "0",
    ])
    .arg("--data-dir")
    .arg(dir)
    .env("RUST_LOG", "warn")
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("spawn fake-pve");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().expect("a banner").expect("utf-8");
    let url = first.rsplit(' ').next().expect("url").to_string();
    // Keep reading the banner so that the pipe never fills.
    std::thread::spawn(move || for _ in lines {});
    (child, url)
}

async fn login(http: &reqwest::Client, url: &str) -> (String, String) {
    let v: Value = http
        .post(format!("{url}/access/ticket"))
        .form(&[("username", "root@pam"), ("password", "password")])
        .send()
        .await
        .expect("login")
        .json()
        .await
        .expect("json");
    (
        v["data"]["ticket"].as_str().expect("ticket").to_string(),
        v["data"]["CSRFPreventionToken"]
            .as_str()
            .expect("csrf")
            .to_string(),
    )
}

/// What the clients were told had happened.
#[derive(Default)]
struct Acked {
    created: Vec<u32>,
    described: BTreeMap<u32, String>,
}

async fn writer(url: String, auth: (String, String), first: u32, acked: Arc<Mutex<Acked>>) {
    let http = reqwest::Client::new();
    let send = |rb: reqwest::RequestBuilder| {
        rb.header("Cookie", format!("PVEAuthCookie={}", auth.0))
            .header("CSRFPreventionToken", &auth.1)
            .timeout(Duration::from_secs(5))
            .send()
    };
    for vmid in first..first + 10_000 {
        let r = send(http.post(format!("{url}/nodes/pve/qemu")).form(&[
            ("vmid", vmid.to_string()),
            ("name", format!("vm-{vmid}")),
            ("memory", "512".to_string()),
        ]))
        .await;
        match r {
            Ok(r) if r.status().is_success() => {
                acked.lock().expect("lock").created.push(vmid);
            }
            _ => return,
        }
        let desc = format!("written {vmid}");
        let r = send(
            http.put(format!("{url}/nodes/pve/qemu/{vmid}/config"))
                .form(&[("description", desc.as_str())]),
        )
        .await;
        match r {
            Ok(r) if r.status().is_success() => {
                acked.lock().expect("lock").described.insert(vmid, desc);
            }
            _ => return,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_at_random_moments_it_keeps_every_acknowledged_change() {
    let dir = tempfile::Builder::new()
        .prefix("fake-pve-crash-")
        .tempdir()
        .expect("a temporary directory")
        .keep();
    let _ = std::fs::remove_dir_all(&dir);
    let acked = Arc::new(Mutex::new(Acked::default()));
    let http = reqwest::Client::new();
    let started = Instant::now();
    // Moments picked at random (seeded, so that a failure repeats).
    let mut rng = 0x2545_F491_4F6C_DD1D_u64;
    for round in 0..4u32 {
        let (mut child, url) = spawn(&dir);
        let auth = login(&http, &url).await;
        check(&http, &url, &auth, &acked).await;
        let mut tasks = Vec::new();
        for client in 0..3u32 {
            let first = 1000 + round * 30_000 + client * 10_000;
            tasks.push(tokio::spawn(writer(
                url.clone(),
                auth.clone(),
                first,
                acked.clone(),
            )));
        }
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        tokio::time::sleep(Duration::from_millis(200 + rng % 600)).await;
        child.kill().expect("SIGKILL");
        let _ = child.wait();
        for t in tasks {
            let _ = t.await;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "bounded");
    }
    // A last start checks the last round.
    let (mut child, url) = spawn(&dir);
    let auth = login(&http, &url).await;
    check(&http, &url, &auth, &acked).await;
    let n = acked.lock().expect("lock").created.len();
    assert!(n > 10, "the clients wrote little: {n}");
    child.kill().expect("kill");
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every acknowledged VM is there with its acknowledged description, and
/// every VM there is whole (its config reads, with the name it was
/// created with).
async fn check(http: &reqwest::Client, url: &str, auth: &(String, String), acked: &Mutex<Acked>) {
    let get = |path: String| {
        http.get(format!("{url}{path}"))
            .header("Cookie", format!("PVEAuthCookie={}", auth.0))
            .send()
    };
    let list: Value = get("/nodes/pve/qemu".into())
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    let present: Vec<u32> = list["data"]
        .as_array()
        .expect("VMs")
        .iter()
        .filter_map(|v| v["vmid"].as_u64().and_then(|v| u32::try_from(v).ok()))
        .collect();
    let (created, described) = {
        let a = acked.lock().expect("lock");
        (a.created.clone(), a.described.clone())
    };
    for vmid in &created {
        assert!(present.contains(vmid), "acknowledged VM {vmid} lost");
    }
    for vmid in &present {
        let conf: Value = get(format!("/nodes/pve/qemu/{vmid}/config"))
            .await
            .expect("config")
            .json()
            .await
            .expect("json");
        assert_eq!(
            conf["data"]["name"].as_str(),
            Some(format!("vm-{vmid}").as_str()),
            "VM {vmid} is not whole: {conf}"
        );
        if let Some(desc) = described.get(vmid) {
            assert_eq!(
                conf["data"]["description"].as_str(),
                Some(desc.as_str()),
                "acknowledged description of VM {vmid} lost"
            );
        }
    }
}
