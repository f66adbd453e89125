//! Real third-party PVE clients, unmodified, against an in-process
//! fake-pve: Python's proxmoxer (with requests) runs
//! `tests/python/proxmoxer_check.py` (a VM life cycle, a VM backed up,
//! pruned and restored into a pool, an SDN zone, VNet and subnet applied
//! with a VM started on the VNet, the firewall's security groups,
//! aliases, IP sets and a VM's rules, and a VM under HA started through
//! the HA manager); Ansible's community.proxmox modules drive a
//! container's life; prometheus-pve-exporter scrapes fake-pve with every
//! collector on (`tests/python/pve_exporter_check.py`).
//!
//! The interpreter is `$FAKE_PVE_PYTHON`, else the venv `ci/setup-python`
//! makes at `$HOME/.cache/fake-pve/venv`. Without either the test is
//! skipped, unless `FAKE_PVE_REQUIRE_PYTHON=1` (CI), where it fails.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use fake_pve::{FakePve, Scenario};

/// The secret of root@pam's token `ci`.
const TOKEN_SECRET: &str = "5f1c2a9e-3b7d-4e8a-9c61-0d2f4b8a7e13";

/// One node `pve`; root@pam has the token `ci` without privilege separation.
fn scenario_yaml() -> String {
    format!(
        "nodes:\n  - name: pve\nusers:\n  - userid: root@pam\n    tokens:\n      \
         - {{ tokenid: ci, secret: {TOKEN_SECRET}, privsep: false }}\n"
    )
}

/// How long one script may run.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(120);

/// The venv's python, or `None` (after failing or printing why) when there
/// is none.
fn python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FAKE_PVE_PYTHON").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        assert!(
            p.exists(),
            "FAKE_PVE_PYTHON={} does not exist; run ci/setup-python",
            p.display()
        );
        return Some(p);
    }
    if let Some(home) = std::env::var_os("HOME") {
        let p = Path::new(&home).join(".cache/fake-pve/venv/bin/python");
        if p.exists() {
            return Some(p);
        }
    }
    let why = "no Python with proxmoxer: set FAKE_PVE_PYTHON or run ci/setup-python \
               (it makes $HOME/.cache/fake-pve/venv)";
    if std::env::var("FAKE_PVE_REQUIRE_PYTHON").is_ok_and(|v| v == "1") {
        panic!("FAKE_PVE_REQUIRE_PYTHON=1 but {why}");
    }
    // Straight to stderr: libtest would swallow eprintln! of a passing test.
    let _ = writeln!(
        std::io::stderr(),
        "proxmoxer_works_unmodified skipped: {why}"
    );
    None
}

/// What a finished script did.
struct Outcome {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// Runs `cmd` to completion on this (blocking) thread, killing it after
/// `timeout`.
fn run_with_timeout(mut cmd: Command, timeout: Duration) -> Result<Outcome, String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                let stdout = out.join().unwrap_or_default();
                return Err(format!(
                    "{cmd:?} did not finish within {timeout:?}; stdout so far:\n{stdout}"
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("waiting for {cmd:?}: {e}")),
        }
    };
    Ok(Outcome {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

/// Reads a child's pipe to the end on its own thread.
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        String::from_utf8_lossy(&buf).into_owned()
    })
}

#[tokio::test]
async fn proxmoxer_works_unmodified() {
    let Some(python) = python() else { return };
    let scenario = Scenario::parse(&scenario_yaml(), "python_clients").expect("scenario");
    let pve = FakePve::builder()
        .listen("127.0.0.1:0".parse().expect("address"))
        .auth_failure_delay(Duration::ZERO)
        .scenario(scenario)
        .start()
        .await
        .expect("fake-pve starts");
    assert!(
        pve.url().starts_with("https://"),
        "TLS is expected: {}",
        pve.url()
    );

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/proxmoxer_check.py");
    let mut cmd = Command::new(&python);
    cmd.arg(&script)
        .env("PVE_HOST", pve.addr().ip().to_string())
        .env("PVE_PORT", pve.addr().port().to_string())
        .env("PVE_USER", "root@pam")
        .env("PVE_PASSWORD", "password")
        .env("PVE_TOKEN_NAME", "ci")
        .env("PVE_TOKEN_VALUE", TOKEN_SECRET)
        .env_remove("PVE_NODE")
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    // The server runs on this runtime; the script blocks another thread.
    let outcome = tokio::task::spawn_blocking(move || run_with_timeout(cmd, SCRIPT_TIMEOUT))
        .await
        .expect("runner thread")
        .unwrap_or_else(|e| panic!("{e}"));
    pve.shutdown().await;

    assert!(
        outcome.status.success(),
        "{} {} exited with {}\n--- stdout ---\n{}--- stderr ---\n{}",
        python.display(),
        script.display(),
        outcome.status,
        outcome.stdout,
        outcome.stderr
    );
    assert!(
        outcome.stdout.lines().any(|l| l == "ALL OK"),
        "the script did not print ALL OK\n--- stdout ---\n{}",
        outcome.stdout
    );
    // One line per check, shown with --nocapture.
    print!("{}", outcome.stdout);
    eprint!("{}", outcome.stderr);
}

/// How long the Ansible playbook may run (each module is a Python process).
const PLAYBOOK_TIMEOUT: Duration = Duration::from_secs(300);

/// Ansible's `community.proxmox` modules (from the `ansible` package that
/// `ci/setup-python` installs beside proxmoxer) drive a container's life:
/// template download, create, configure, start, snapshot, stop, clone and
/// destroy (`tests/python/ansible_lxc.yml`).
#[tokio::test]
async fn ansible_proxmox_modules_work_unmodified() {
    let Some(python) = python() else { return };
    let Some(playbook_bin) = python.parent().map(|d| d.join("ansible-playbook")) else {
        return;
    };
    if !playbook_bin.exists() {
        let why = format!(
            "{} not found: run ci/setup-python (it installs ansible)",
            playbook_bin.display()
        );
        if std::env::var("FAKE_PVE_REQUIRE_PYTHON").is_ok_and(|v| v == "1") {
            panic!("FAKE_PVE_REQUIRE_PYTHON=1 but {why}");
        }
        let _ = writeln!(std::io::stderr(), "ansible test skipped: {why}");
        return;
    }
    let scenario = Scenario::parse(&scenario_yaml(), "python_clients").expect("scenario");
    let pve = FakePve::builder()
        .listen("127.0.0.1:0".parse().expect("address"))
        .auth_failure_delay(Duration::ZERO)
        .scenario(scenario)
        .start()
        .await
        .expect("fake-pve starts");
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let playbook = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/ansible_lxc.yml");
    let mut cmd = Command::new(&playbook_bin);
    cmd.arg("-i")
        .arg("localhost,")
        .arg("-e")
        .arg(format!("ansible_python_interpreter={}", python.display()))
        .arg("-e")
        .arg(format!("pve_host={}", pve.addr().ip()))
        .arg("-e")
        .arg(format!("pve_port={}", pve.addr().port()))
        .arg("-e")
        .arg("pve_password=password")
        .arg("-e")
        .arg("pve_node=pve")
        .arg("-e")
        .arg("vmid=4200")
        .arg(&playbook)
        .env("ANSIBLE_LOCAL_TEMP", tmp.path().join("local"))
        .env("ANSIBLE_REMOTE_TEMP", tmp.path().join("remote"))
        .env("ANSIBLE_HOME", tmp.path().join("home"))
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_RETRY_FILES_ENABLED", "0")
        .env("ANSIBLE_LOCALHOST_WARNING", "0")
        .env("ANSIBLE_INVENTORY_UNPARSED_WARNING", "0")
        .env("LC_ALL", "C.UTF-8")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let outcome = tokio::task::spawn_blocking(move || run_with_timeout(cmd, PLAYBOOK_TIMEOUT))
        .await
        .expect("runner thread")
        .unwrap_or_else(|e| panic!("{e}"));
    pve.shutdown().await;
    assert!(
        outcome.status.success(),
        "ansible-playbook exited with {}\n--- stdout ---\n{}--- stderr ---\n{}",
        outcome.status,
        outcome.stdout,
        outcome.stderr
    );
    assert!(
        outcome.stdout.contains("failed=0") && outcome.stdout.contains("ok=10"),
        "unexpected play recap\n--- stdout ---\n{}",
        outcome.stdout
    );
    print!("{}", outcome.stdout);
}

/// A cluster of two nodes whose first has a community subscription, a
/// running VM that starts on boot, and root@pam's token `ci`.
fn exporter_scenario_yaml() -> String {
    format!(
        "cluster: lab\nnodes:\n  - {{ name: pve, level: c }}\n  - {{ name: pve2 }}\n\
         vms:\n  - {{ vmid: 100, node: pve, name: web, status: running, \
         config: {{ onboot: 1, net0: 'virtio=BC:24:11:00:01:00,bridge=vmbr0' }} }}\n\
         users:\n  - userid: root@pam\n    tokens:\n      \
         - {{ tokenid: ci, secret: {TOKEN_SECRET}, privsep: false }}\n"
    )
}

/// prometheus-pve-exporter (`ci/setup-python` installs it beside
/// proxmoxer), unmodified, with every collector on, scrapes fake-pve
/// (`tests/python/pve_exporter_check.py`): each collector's families and
/// no request error.
#[tokio::test]
async fn prometheus_pve_exporter_scrapes_every_collector() {
    let Some(python) = python() else { return };
    let has_exporter = Command::new(&python)
        .args(["-c", "import pve_exporter"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_exporter {
        let why = "the venv has no prometheus-pve-exporter: run ci/setup-python";
        if std::env::var("FAKE_PVE_REQUIRE_PYTHON").is_ok_and(|v| v == "1") {
            panic!("FAKE_PVE_REQUIRE_PYTHON=1 but {why}");
        }
        let _ = writeln!(std::io::stderr(), "exporter test skipped: {why}");
        return;
    }
    let scenario = Scenario::parse(&exporter_scenario_yaml(), "exporter").expect("scenario");
    let pve = FakePve::builder()
        .listen("127.0.0.1:0".parse().expect("address"))
        .auth_failure_delay(Duration::ZERO)
        .scenario(scenario)
        .start()
        .await
        .expect("fake-pve starts");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/pve_exporter_check.py");
    let mut cmd = Command::new(&python);
    cmd.arg(&script)
        .env("PVE_TARGET", pve.addr().to_string())
        .env("PVE_NODE", "pve")
        .env("PVE_USER", "root@pam")
        .env("PVE_TOKEN_NAME", "ci")
        .env("PVE_TOKEN_VALUE", TOKEN_SECRET)
        .env_remove("PVE_PASSWORD")
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let outcome = tokio::task::spawn_blocking(move || run_with_timeout(cmd, SCRIPT_TIMEOUT))
        .await
        .expect("runner thread")
        .unwrap_or_else(|e| panic!("{e}"));
    pve.shutdown().await;
    assert!(
        outcome.status.success() && outcome.stdout.lines().any(|l| l == "ALL OK"),
        "{} exited with {}\n--- stdout ---\n{}--- stderr ---\n{}",
        script.display(),
        outcome.status,
        outcome.stdout,
        outcome.stderr
    );
    print!("{}", outcome.stdout);
}
