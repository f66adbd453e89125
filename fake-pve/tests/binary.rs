//! The `fake-pve` binary: flags and their environment twins, the start
//! banner, refusal of a malformed scenario, a clean exit on SIGTERM and
//! the access log.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_fake-pve");

fn clean_env(cmd: &mut Command) -> &mut Command {
    for (k, _) in std::env::vars() {
        if k.starts_with("FAKE_PVE_") {
            cmd.env_remove(k);
        }
    }
    cmd
}

#[tokio::test]
async fn runs_with_env_twins_and_stops_on_sigterm() {
    let mut cmd = Command::new(BIN);
    clean_env(&mut cmd)
        .env("FAKE_PVE_LISTEN", "127.0.0.1:0")
        .env("FAKE_PVE_HTTP", "true")
        .env("FAKE_PVE_ROOT_PASSWORD", "s3cret")
        .env("FAKE_PVE_AUTH_FAILURE_DELAY", "0")
        .env("FAKE_PVE_PVE_VERSION", "9.1")
        .env("RUST_LOG", "warn")
        .args(["--pve-version", "8.4"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("spawn fake-pve");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().expect("a banner").expect("utf-8");
    let banner: Vec<String> = lines.by_ref().take(4).map_while(Result::ok).collect();
    assert!(
        first.starts_with("fake-pve: Proxmox VE 8.4.14 API at http://127.0.0.1:"),
        "{first}"
    );
    assert!(
        banner.iter().any(|l| l.contains("root@pam / s3cret")),
        "{banner:?}"
    );
    assert!(banner.iter().any(|l| l.contains("curl")), "{banner:?}");
    let url = first.rsplit(' ').next().expect("url").to_string();

    let http = reqwest::Client::new();
    let r = http
        .get(format!("{url}/version"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status().as_u16(), 401);
    let login: serde_json::Value = http
        .post(format!("{url}/access/ticket"))
        .form(&[("username", "root@pam"), ("password", "s3cret")])
        .send()
        .await
        .expect("login")
        .json()
        .await
        .expect("json");
    let ticket = login["data"]["ticket"].as_str().expect("ticket");
    let v: serde_json::Value = http
        .get(format!("{url}/version"))
        .header("Cookie", format!("PVEAuthCookie={ticket}"))
        .send()
        .await
        .expect("version")
        .json()
        .await
        .expect("json");
    assert_eq!(
        v["data"]["release"], "8.4",
        "the flag wins over its environment twin"
    );

    let pid = child.id().to_string();
    let killed = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "fake-pve did not stop on SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(status.success(), "{status:?}");

    // The access log went to the standard output (the default), one
    // line per request as pveproxy writes them, all written by the exit.
    let log: Vec<String> = lines
        .map_while(Result::ok)
        .filter(|l| l.starts_with("127.0.0.1 - "))
        .collect();
    assert_eq!(log.len(), 3, "{log:?}");
    let shape = |l: &str, user: &str, request: &str, status: &str| {
        let (head, tail) = l.split_once(" [").expect("a time");
        assert_eq!(head, format!("127.0.0.1 - {user}"), "{l}");
        let (stamp, rest) = tail.split_once("] ").expect("a time");
        assert_eq!(stamp.len(), 25, "dd/mm/yyyy:HH:MM:SS +0000: {l}");
        assert!(stamp.ends_with(" +0000"), "{l}");
        let (line, rest) = rest[1..].split_once("\" ").expect("a request line");
        assert_eq!(line, request, "{l}");
        let (code, length) = rest.split_once(' ').expect("a length");
        assert_eq!(code, status, "{l}");
        // A 401 has no body.
        let length: u64 = length.parse().expect("a length");
        assert_eq!(length == 0, status == "401", "{l}");
    };
    shape(&log[0], "-", "GET /api2/json/version HTTP/1.1", "401");
    shape(
        &log[1],
        "-",
        "POST /api2/json/access/ticket HTTP/1.1",
        "200",
    );
    shape(
        &log[2],
        "root@pam",
        "GET /api2/json/version HTTP/1.1",
        "200",
    );
}

#[test]
fn refuses_a_malformed_scenario_at_start() {
    let dir = tempfile::Builder::new()
        .prefix("fake-pve-bin-")
        .tempdir()
        .expect("a temporary directory")
        .keep();
    std::fs::create_dir_all(&dir).expect("tmp");
    let f = dir.join("broken.yaml");
    std::fs::write(&f, "nodes:\n  - name: a\n  - name: a\n").expect("write");
    let mut cmd = Command::new(BIN);
    let out = clean_env(&mut cmd)
        .args(["--listen", "127.0.0.1:0", "--seed"])
        .arg(&f)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "scenario {}:3: duplicate node name 'a'",
            f.display()
        )),
        "{err}"
    );
    let out = clean_env(&mut Command::new(BIN))
        .args(["--pve-version", "7.4"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unsupported PVE version '7.4'"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn help_names_every_environment_twin() {
    let out = clean_env(&mut Command::new(BIN))
        .arg("--help")
        .output()
        .expect("run");
    let help = String::from_utf8_lossy(&out.stdout);
    for var in [
        "FAKE_PVE_LISTEN",
        "FAKE_PVE_HTTP",
        "FAKE_PVE_CERT",
        "FAKE_PVE_KEY",
        "FAKE_PVE_ROOT_PASSWORD",
        "FAKE_PVE_SEED",
        "FAKE_PVE_PVE_VERSION",
        "FAKE_PVE_AUTH_FAILURE_DELAY",
        "FAKE_PVE_TASK_DURATION",
        "FAKE_PVE_PROFILE",
        "FAKE_PVE_TIME_SCALE",
        "FAKE_PVE_RANDOM_SEED",
    ] {
        assert!(help.contains(var), "{var} missing from --help");
    }
}
