//! The QEMU guest agent over the wire: PVE's three checks in order, the
//! agent's boot after a start on the emulated clock, what it reports
//! (interfaces with loopback and link-local addresses, OS, file systems),
//! exec, files, fsfreeze, power calls, and the `/_fake/guests` control.

mod common;

use common::{Auth, Pve, start_scenario};
use serde_json::{Value, json};

const SCENARIO: &str = r#"
vms:
  - vmid: 100
    name: web
    status: running
    config:
      agent: 1
      memory: 1024
      cores: 2
      ostype: l26
      net0: 'virtio=BC:24:11:AA:BB:CC,bridge=vmbr0'
      net1: 'virtio=BC:24:11:00:00:01,bridge=vmbr0'
      ipconfig0: 'ip=10.1.2.3/24,gw=10.1.2.1,ip6=2001:db8::3/64'
      scsi0: 'local-lvm:vm-100-disk-0,size=32G'
  - vmid: 101
    status: running
    config: { memory: 512 }
  - vmid: 102
    config: { agent: 'enabled=1', memory: 512 }
  - vmid: 103
    status: running
    config: { agent: 0 }
guests:
  100:
    files: { /etc/motd: "hello\n" }
    users: [{ user: alice, login-time: 1790000000.5 }]
"#;

async fn pve() -> (Pve, Auth) {
    let pve = start_scenario(SCENARIO).await;
    let root = pve.root().await;
    (pve, root)
}

async fn agent_get(pve: &Pve, auth: &Auth, vmid: u32, cmd: &str) -> common::Resp {
    pve.get(&format!("/nodes/pve/qemu/{vmid}/agent/{cmd}"), auth)
        .await
}

async fn agent_post(pve: &Pve, auth: &Auth, vmid: u32, cmd: &str, form: &str) -> common::Resp {
    pve.post(&format!("/nodes/pve/qemu/{vmid}/agent/{cmd}"), auth, form)
        .await
}

async fn vm_status(pve: &Pve, auth: &Auth, vmid: u32) -> Value {
    pve.get(&format!("/nodes/pve/qemu/{vmid}/status/current"), auth)
        .await
        .data()
}

#[tokio::test]
async fn the_three_checks_come_in_pves_order() {
    let (pve, root) = pve().await;
    // No agent option, although the VM runs.
    agent_post(&pve, &root, 101, "ping", "")
        .await
        .assert_error(500, "No QEMU guest agent configured\n");
    // Configured but stopped.
    agent_post(&pve, &root, 102, "ping", "")
        .await
        .assert_error(500, "VM 102 is not running\n");
    // Configured as disabled: no agent device answers the ping.
    agent_post(&pve, &root, 103, "ping", "")
        .await
        .assert_error(500, "QEMU guest agent is not running\n");
    agent_get(&pve, &root, 999, "info").await.assert_error(
        500,
        "Configuration file 'nodes/pve/qemu-server/999.conf' does not exist\n",
    );
    let r = agent_post(&pve, &root, 100, "ping", "").await;
    assert_eq!(r.data(), json!({"result": {}}));
    // The legacy call takes the command as a parameter.
    let r = pve
        .post("/nodes/pve/qemu/100/agent", &root, "command=get-host-name")
        .await;
    assert_eq!(r.data(), json!({"result": {"host-name": "web"}}));
}

#[tokio::test]
async fn the_agent_answers_a_few_seconds_after_the_start_and_not_while_paused() {
    let (pve, root) = pve().await;
    pve.post("/nodes/pve/qemu/102/status/start", &root, "")
        .await
        .data();
    assert_eq!(vm_status(&pve, &root, 102).await["status"], "running");
    agent_post(&pve, &root, 102, "ping", "")
        .await
        .assert_error(500, "QEMU guest agent is not running\n");
    pve.run.clock().advance_millis(4_999);
    agent_post(&pve, &root, 102, "ping", "")
        .await
        .assert_error(500, "QEMU guest agent is not running\n");
    pve.run.clock().advance_millis(1);
    assert_eq!(
        agent_post(&pve, &root, 102, "ping", "").await.data()["result"],
        json!({})
    );

    pve.post("/nodes/pve/qemu/102/status/suspend", &root, "")
        .await
        .data();
    agent_post(&pve, &root, 102, "ping", "")
        .await
        .assert_error(500, "QEMU guest agent is not running\n");
    pve.post("/nodes/pve/qemu/102/status/resume", &root, "")
        .await
        .data();
    agent_post(&pve, &root, 102, "ping", "").await.data();

    // A configurable delay.
    let ctl = pve
        .send(
            reqwest::Method::PUT,
            "/_fake/guests/102",
            &root,
            Some(("application/json", r#"{"boot_delay_ms": 30000}"#.into())),
        )
        .await;
    assert_eq!(ctl.json()["data"]["boot_delay_ms"], 30000);
    pve.post("/nodes/pve/qemu/102/status/stop", &root, "")
        .await
        .data();
    agent_post(&pve, &root, 102, "ping", "")
        .await
        .assert_error(500, "VM 102 is not running\n");
    pve.post("/nodes/pve/qemu/102/status/start", &root, "")
        .await
        .data();
    pve.run.clock().advance(29);
    agent_post(&pve, &root, 102, "ping", "")
        .await
        .assert_error(500, "QEMU guest agent is not running\n");
    pve.run.clock().advance(1);
    agent_post(&pve, &root, 102, "ping", "").await.data();
}

#[tokio::test]
async fn interfaces_list_loopback_the_configured_macs_and_link_local_addresses() {
    let (pve, root) = pve().await;
    let r = agent_get(&pve, &root, 100, "network-get-interfaces")
        .await
        .data();
    let ifs = r["result"].as_array().expect("interfaces").clone();
    assert_eq!(ifs.len(), 3);
    assert_eq!(ifs[0]["name"], "lo");
    assert_eq!(ifs[0]["hardware-address"], "00:00:00:00:00:00");
    assert_eq!(
        ifs[0]["ip-addresses"],
        json!([
            {"ip-address": "127.0.0.1", "ip-address-type": "ipv4", "prefix": 8},
            {"ip-address": "::1", "ip-address-type": "ipv6", "prefix": 128},
        ])
    );
    assert_eq!(ifs[1]["name"], "ens18");
    assert_eq!(ifs[1]["hardware-address"], "bc:24:11:aa:bb:cc");
    assert_eq!(
        ifs[1]["ip-addresses"],
        json!([
            {"ip-address": "10.1.2.3", "ip-address-type": "ipv4", "prefix": 24},
            {"ip-address": "2001:db8::3", "ip-address-type": "ipv6", "prefix": 64},
            {"ip-address": "fe80::be24:11ff:feaa:bbcc", "ip-address-type": "ipv6", "prefix": 64},
        ])
    );
    assert_eq!(ifs[2]["hardware-address"], "bc:24:11:00:00:01");
    assert_eq!(ifs[2]["ip-addresses"][0]["ip-address"], "10.0.1.102");
    assert_eq!(
        ifs[2]["ip-addresses"][1]["ip-address"],
        "fe80::be24:11ff:fe00:1"
    );
    assert!(ifs[1]["statistics"]["rx-bytes"].as_u64().is_some());
}

#[tokio::test]
async fn reports_follow_the_vm_config() {
    let (pve, root) = pve().await;
    let os = agent_get(&pve, &root, 100, "get-osinfo").await.data();
    assert_eq!(os["result"]["id"], "debian");
    let vcpus = agent_get(&pve, &root, 100, "get-vcpus").await.data();
    assert_eq!(vcpus["result"].as_array().map(Vec::len), Some(2));
    let blocks = agent_get(&pve, &root, 100, "get-memory-blocks")
        .await
        .data();
    assert_eq!(blocks["result"].as_array().map(Vec::len), Some(8));
    let info = agent_get(&pve, &root, 100, "get-memory-block-info")
        .await
        .data();
    assert_eq!(info["result"]["size"], 134_217_728);
    let fs = agent_get(&pve, &root, 100, "get-fsinfo").await.data();
    assert_eq!(fs["result"][0]["mountpoint"], "/");
    assert_eq!(fs["result"][0]["disk"][0]["bus-type"], "scsi");
    assert!(
        fs["result"][0]["total-bytes"]
            .as_u64()
            .is_some_and(|t| t < 32 << 30 && t > 30 << 30)
    );
    let t = agent_get(&pve, &root, 100, "get-time").await.data();
    assert_eq!(t["result"], json!(common::T0 * 1_000_000_000));
    let users = agent_get(&pve, &root, 100, "get-users").await.data();
    assert_eq!(users["result"][0]["user"], "alice");
    let tz = agent_get(&pve, &root, 100, "get-timezone").await.data();
    assert_eq!(tz["result"], json!({"zone": "UTC", "offset": 0}));
    let info = agent_get(&pve, &root, 100, "info").await.data();
    assert_eq!(info["result"]["version"], "7.2.11");
    assert!(
        info["result"]["supported_commands"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["name"] == "guest-exec"))
    );

    // Set through the control API.
    let r = pve
        .send(
            reqwest::Method::PUT,
            "/_fake/guests/100",
            &root,
            Some((
                "application/json",
                r#"{"hostname": "web01.lab", "osinfo": {"id": "ubuntu"}}"#.into(),
            )),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let h = agent_get(&pve, &root, 100, "get-host-name").await.data();
    assert_eq!(h["result"]["host-name"], "web01.lab");
    let os = agent_get(&pve, &root, 100, "get-osinfo").await.data();
    assert_eq!(os["result"], json!({"id": "ubuntu"}));
    let r = pve
        .send(
            reqwest::Method::PUT,
            "/_fake/guests/100",
            &root,
            Some(("application/json", r#"{"colour": "blue"}"#.into())),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.text);
    let r = pve
        .send(reqwest::Method::GET, "/_fake/guests/555", &root, None)
        .await;
    assert_eq!(r.status, 500, "{}", r.text);
}

#[tokio::test]
async fn exec_runs_a_tiny_shell() {
    let (pve, root) = pve().await;
    let run = |form: &'static str| {
        let pve = &pve;
        let root = root.clone();
        async move {
            let r = agent_post(pve, &root, 100, "exec", form).await.data();
            let pid = r["pid"].as_u64().expect("pid");
            agent_get(pve, &root, 100, &format!("exec-status?pid={pid}"))
                .await
                .data()
        }
    };
    let st = run("command=echo&command=hello&command=world").await;
    assert_eq!(
        st,
        json!({"exited": 1, "exitcode": 0, "out-data": "hello world\n"})
    );
    let st = run("command=cat&command=/etc/motd").await;
    assert_eq!(st["out-data"], "hello\n");
    let st = run("command=cat&command=/nope").await;
    assert_eq!(st["exitcode"], 1);
    assert_eq!(st["err-data"], "cat: /nope: No such file or directory\n");
    let st = run("command=sh&command=-c&command=hostname").await;
    assert_eq!(st["out-data"], "web\n");
    let st = run("command=sh&command=-c&command=false").await;
    assert_eq!(st, json!({"exited": 1, "exitcode": 1}));
    let st = run("command=sh&command=-c&command=true%3B%20frobnicate").await;
    assert_eq!(st["exitcode"], 127);
    assert_eq!(st["err-data"], "sh: 1: frobnicate: not found\n");
    let st = run("command=cat&command=-&input-data=piped").await;
    assert_eq!(st["out-data"], "piped");
    agent_post(&pve, &root, 100, "exec", "")
        .await
        .assert_param_error("command", "property is missing and it is not optional");
    agent_get(&pve, &root, 100, "exec-status?pid=4242")
        .await
        .assert_error(500, "Agent error: Invalid parameter 'pid'\n");
}

#[tokio::test]
async fn files_passwords_and_freezing() {
    let (pve, root) = pve().await;
    agent_post(&pve, &root, 100, "file-write", "file=/tmp/a&content=abc")
        .await
        .data();
    let r = agent_get(&pve, &root, 100, "file-read?file=/tmp/a")
        .await
        .data();
    assert_eq!(r, json!({"content": "abc", "bytes-read": 3}));
    // Already base64 with encode=0.
    agent_post(
        &pve,
        &root,
        100,
        "file-write",
        "file=/tmp/b&content=aGk%3D&encode=0",
    )
    .await
    .data();
    let r = agent_get(&pve, &root, 100, "file-read?file=/tmp/b")
        .await
        .data();
    assert_eq!(r["content"], "hi");
    agent_get(&pve, &root, 100, "file-read?file=/missing")
        .await
        .assert_error(
            500,
            "Agent error: failed to open file '/missing' (mode: 'r'): No such file or directory\n",
        );
    let big = "x".repeat(60 * 1024 + 1);
    agent_post(
        &pve,
        &root,
        100,
        "file-write",
        &format!("file=/tmp/c&content={big}"),
    )
    .await
    .assert_param_error("content", "value may only be 61440 characters long");

    let r = agent_post(
        &pve,
        &root,
        100,
        "set-user-password",
        "username=root&password=s3cret!",
    )
    .await
    .data();
    assert_eq!(r, json!({"result": {}}));
    agent_post(
        &pve,
        &root,
        100,
        "set-user-password",
        "username=mallory&password=s3cret!",
    )
    .await
    .assert_error(
        500,
        "Agent error: child process has failed to set user password\n",
    );

    let st = agent_post(&pve, &root, 100, "fsfreeze-status", "")
        .await
        .data();
    assert_eq!(st["result"], "thawed");
    let n = agent_post(&pve, &root, 100, "fsfreeze-freeze", "")
        .await
        .data();
    assert_eq!(n["result"], 1);
    let st = agent_post(&pve, &root, 100, "fsfreeze-status", "")
        .await
        .data();
    assert_eq!(st["result"], "frozen");
    agent_post(&pve, &root, 100, "file-write", "file=/tmp/a&content=x")
        .await
        .assert_error(
            500,
            "Agent error: Command guest-file-open has been disabled: the agent is in frozen state\n",
        );
    let n = agent_post(&pve, &root, 100, "fsfreeze-thaw", "")
        .await
        .data();
    assert_eq!(n["result"], 1);
    let n = agent_post(&pve, &root, 100, "fsfreeze-thaw", "")
        .await
        .data();
    assert_eq!(n["result"], 0);
    let t = agent_post(&pve, &root, 100, "fstrim", "").await.data();
    assert_eq!(t["result"]["paths"][0]["path"], "/");
}

#[tokio::test]
async fn shutdown_and_suspend_go_through_the_guest() {
    let (pve, root) = pve().await;
    let r = agent_post(&pve, &root, 100, "suspend-ram", "").await.data();
    assert_eq!(r, json!({"result": null}));
    assert_eq!(vm_status(&pve, &root, 100).await["qmpstatus"], "paused");
    pve.post("/nodes/pve/qemu/100/status/resume", &root, "")
        .await
        .data();
    let r = agent_post(&pve, &root, 100, "shutdown", "").await.data();
    assert_eq!(r, json!({"result": null}));
    assert_eq!(vm_status(&pve, &root, 100).await["status"], "stopped");
    agent_post(&pve, &root, 100, "shutdown", "")
        .await
        .assert_error(500, "VM 100 is not running\n");
}
