//! The console calls over the wire: the proxies' answers, tickets and
//! tasks, the websocket calls' ticket checks, `/access/vncticket`, and
//! the SPICE settings in both formats.

mod common;

use common::{Auth, enc, start_scenario, task_log};
use reqwest::Method;

const WORLD: &str = r"
nodes:
  - { name: pve, ip: 192.0.2.10 }
  - { name: pve2, ip: 192.0.2.11 }
users:
  - userid: root@pam
    tokens:
      - { tokenid: ci, secret: 5b6b9f0e-0f7a-4c61-9a3e-2f1d0c9b8a77, privsep: false }
  - { userid: alice@pve, password: alice-password }
  - { userid: bob@pve, password: bob-password }
acl:
  - { path: /vms/100, roles: [PVEVMUser], users: [alice@pve] }
  - { path: /nodes/pve, roles: [PVEAdmin], users: [bob@pve] }
vms:
  - { vmid: 100, name: web, status: running, config: { vga: qxl } }
  - { vmid: 101, name: serial, config: { vga: serial0 } }
  - { vmid: 102, name: plain, status: running }
containers:
  - { vmid: 200, hostname: box, status: running }
  - { vmid: 201, hostname: off }
";

async fn login(pve: &common::Pve, user: &str, pw: &str) -> Auth {
    pve.login_as(user, pw).await
}

/// The exit status and log of a proxy's task, ended.
async fn ended(pve: &common::Pve, auth: &Auth, r: &common::Resp) -> (String, Vec<String>) {
    let upid = r.data()["upid"].as_str().expect("a UPID").to_string();
    let st = pve.task_status(&upid, auth).await;
    assert_eq!(st["status"], "stopped", "{st}");
    (
        st["exitstatus"].as_str().unwrap_or_default().to_string(),
        task_log(pve, auth, &upid).await,
    )
}

/// The UPID a proxy call answered.
fn upid(r: &common::Resp) -> String {
    r.data()["upid"].as_str().expect("a UPID").to_string()
}

/// `POST /access/vncticket` as termproxy sends it.
async fn verify(pve: &common::Pve, form: &str) -> u16 {
    let r = pve.post("/access/vncticket", &Auth::None, form).await;
    if r.status != 401 {
        assert_eq!(r.data(), serde_json::Value::Null);
    } else {
        eprintln!("{r:?}");
    }
    r.status
}

#[tokio::test]
async fn a_vm_console_answers_a_ticket_for_its_port_and_times_out_unused() {
    let pve = start_scenario(WORLD).await;
    let alice = login(&pve, "alice@pve", "alice-password").await;
    let r = pve
        .post("/nodes/pve/qemu/100/vncproxy", &alice, "websocket=1")
        .await;
    let d = r.data();
    assert_eq!(d["user"], "alice@pve");
    assert_eq!(d["port"], 5900);
    let pw = d["password"].as_str().expect("a VNC password");
    assert_eq!(pw.len(), 8);
    assert!(pw.bytes().all(|b| (b'!'..=b'`').contains(&b)), "{pw}");
    let ticket = d["ticket"].as_str().expect("present");
    assert!(ticket.starts_with(&format!("{pw}:PVEVNC:")), "{ticket}");
    assert!(
        d["cert"]
            .as_str()
            .expect("present")
            .starts_with("-----BEGIN CERTIFICATE-----")
    );
    let task_id = d["upid"].as_str().expect("present").to_string();
    assert!(task_id.contains(":vncproxy:100:alice@pve:"), "{task_id}");

    // The ticket holds for alice, /vms/100 and its port only, with or
    // without the password in front.
    // The password may hold a `:` itself: it is the first eight characters.
    let bare = ticket
        .strip_prefix(&format!("{pw}:"))
        .expect("the password in front");
    for (t, port, path, privs, want) in [
        (ticket, "5900", "/vms/100", "VM.Console", 200),
        (bare, "5900", "/vms/100", "VM.Console", 200),
        (bare, "5901", "/vms/100", "VM.Console", 401),
        (bare, "5900", "/vms/102", "VM.Console", 401),
        (bare, "5900", "/vms/100", "Sys.Console", 401),
    ] {
        let form = format!(
            "authid=alice%40pve&vncticket={}&path={}&privs={privs}&port={port}",
            enc(t),
            enc(path)
        );
        assert_eq!(verify(&pve, &form).await, want, "{port} {path} {privs}");
    }
    let ws = pve
        .get(
            &format!(
                "/nodes/pve/qemu/100/vncwebsocket?port=5900&vncticket={}",
                enc(ticket)
            ),
            &alice,
        )
        .await;
    assert_eq!(ws.data()["port"], "5900");
    pve.get(
        &format!(
            "/nodes/pve/qemu/100/vncwebsocket?port=5901&vncticket={}",
            enc(ticket)
        ),
        &alice,
    )
    .await
    .assert_error(401, "permission denied - invalid PVEVNC ticket\n");

    // A second console takes the next port; after 40 s the ticket is
    // gone, and the unused proxy ended as `qm vncproxy` does.
    let second = pve.post("/nodes/pve/qemu/100/vncproxy", &alice, "").await;
    assert_eq!(second.data()["port"], 5901);
    pve.run.clock().advance(40);
    let form = format!(
        "authid=alice%40pve&vncticket={}&path=%2Fvms%2F100&privs=VM.Console&port=5900",
        enc(bare)
    );
    assert_eq!(verify(&pve, &form).await, 401);
    let (exit, _) = ended(&pve, &alice, &r).await;
    assert_eq!(exit, "connection timed out");
    let third = pve.post("/nodes/pve/qemu/100/vncproxy", &alice, "").await;
    assert_eq!(third.data()["port"], 5900, "the port is free again");
}

#[tokio::test]
async fn terminals_and_serial_displays_run_as_pve_runs_them() {
    let pve = start_scenario(WORLD).await;
    let root = pve.root().await;
    // `vga: serial0` shows through vncterm: no password without
    // websocket, and the task ends without an error.
    let r = pve.post("/nodes/pve/qemu/101/vncproxy", &root, "").await;
    let d = r.data();
    assert!(d.get("password").is_none(), "{d}");
    assert!(
        d["ticket"]
            .as_str()
            .expect("present")
            .starts_with("PVEVNC:")
    );
    // termproxy gives no CA and no password, and fails when unused.
    let t = pve.post("/nodes/pve/lxc/200/termproxy", &root, "").await;
    let td = t.data();
    assert!(
        td.get("cert").is_none() && td.get("password").is_none(),
        "{td}"
    );
    assert!(upid(&t).contains(":vncproxy:200:root@pam:"));
    let shell = pve.post("/nodes/pve2/termproxy", &root, "").await;
    assert!(upid(&shell).contains(":vncshell::root@pam:"));
    pve.run.clock().advance(11);
    let (exit, _) = ended(&pve, &root, &r).await;
    assert_eq!(exit, "OK");
    let (exit, log) = ended(&pve, &root, &t).await;
    assert!(
        exit.starts_with("command '/usr/bin/termproxy ")
            && exit.contains(" --path /vms/200 --perm VM.Console ")
            && exit.ends_with("failed: exit code 1"),
        "{exit}"
    );
    assert!(
        log.iter()
            .any(|l| l == "failed waiting for client: timed out"),
        "{log:?}"
    );
    let (exit, _) = ended(&pve, &root, &shell).await;
    assert!(
        exit.contains("/usr/bin/ssh "),
        "a remote shell goes through SSH: {exit}"
    );
}

#[tokio::test]
async fn a_node_shell_other_than_login_is_root_s() {
    let pve = start_scenario(WORLD).await;
    let bob = login(&pve, "bob@pve", "bob-password").await;
    pve.post("/nodes/pve/vncshell", &bob, "cmd=upgrade")
        .await
        .assert_error(403, "Permission check failed (user != root@pam)\n");
    let ok = pve.post("/nodes/pve/vncshell", &bob, "").await;
    assert_eq!(ok.data()["user"], "bob@pve");
    // Sys.Console on another node is missing.
    pve.post("/nodes/pve2/termproxy", &bob, "")
        .await
        .assert_error(403, "Permission check failed (/nodes/pve2, Sys.Console)\n");
    // A token's ID is no user name to `vncshell` and `spiceshell`;
    // `termproxy` takes it.
    let token = Auth::Token("PVEAPIToken=root@pam!ci=5b6b9f0e-0f7a-4c61-9a3e-2f1d0c9b8a77".into());
    for path in ["/nodes/pve/vncshell", "/nodes/pve/spiceshell"] {
        pve.post(path, &token, "").await.assert_error(
            500,
            "value 'root@pam!ci' does not look like a valid user name\n",
        );
    }
    assert_eq!(
        pve.post("/nodes/pve/termproxy", &token, "").await.data()["user"],
        "root@pam!ci"
    );
    let ticket = ok.data()["ticket"].as_str().expect("present").to_string();
    let ws = pve
        .get(
            &format!(
                "/nodes/pve/vncwebsocket?port=5900&vncticket={}",
                enc(&ticket)
            ),
            &bob,
        )
        .await;
    assert_eq!(ws.data()["port"], "5900");
}

#[tokio::test]
async fn spice_settings_come_as_json_and_as_a_viewer_file() {
    let pve = start_scenario(WORLD).await;
    let root = pve.root().await;
    let d = pve
        .post("/nodes/pve/qemu/100/spiceproxy", &root, "proxy=fd00%3A%3A1")
        .await
        .data();
    assert_eq!(d["type"], "spice");
    assert_eq!(d["title"], "VM 100 - web");
    assert_eq!(d["proxy"], "http://[fd00::1]:3128");
    assert_eq!(d["tls-port"], 61000);
    let host = d["host"].as_str().expect("present");
    assert!(
        host.starts_with("pvespiceproxy:") && host.contains(":100:pve:61000::"),
        "{host}"
    );
    assert_eq!(d["password"].as_str().expect("present").len(), 40);
    assert!(
        d["host-subject"]
            .as_str()
            .expect("present")
            .contains("OU=PVE Cluster Node,O=Proxmox Virtual Environment,CN=pve"),
        "{d}"
    );
    assert!(d["ca"].as_str().expect("present").contains("\\n"));
    for (path, msg) in [
        ("/nodes/pve/qemu/101/spiceproxy", "VM 101 not running"),
        ("/nodes/pve/qemu/102/spiceproxy", "no spice port"),
        ("/nodes/pve/lxc/201/spiceproxy", "CT 201 not running"),
    ] {
        pve.post(path, &root, "")
            .await
            .assert_error(500, &format!("{msg}\n"));
    }
    // The viewer file of a container's console, and of a node's shell.
    let file = pve
        .send(
            Method::POST,
            "/api2/spiceconfig/nodes/pve/lxc/200/spiceproxy",
            &root,
            Some(("application/x-www-form-urlencoded", String::new())),
        )
        .await;
    assert_eq!(file.status, 200);
    assert_eq!(
        file.header("content-type"),
        Some("application/x-virt-viewer;charset=UTF-8")
    );
    assert!(file.text.starts_with("[virt-viewer]\n"), "{}", file.text);
    assert!(file.text.contains("\ntitle=CT 200\n"), "{}", file.text);
    assert!(file.text.contains("\ntls-port=61000\n"), "{}", file.text);
    let shell = pve.post("/nodes/pve/spiceshell", &root, "").await.data();
    assert_eq!(shell["title"], "Shell on 'pve'");
    assert_eq!(
        shell["tls-port"], 61001,
        "the container's spiceterm holds 61000"
    );
    let refused = pve
        .send(
            Method::POST,
            "/api2/spiceconfig/nodes/pve/lxc/201/spiceproxy",
            &root,
            None,
        )
        .await;
    assert_eq!((refused.status, refused.text.as_str()), (500, ""));
    assert_eq!(refused.reason, "CT 201 not running");
}

#[tokio::test]
async fn on_8_4_a_ticket_names_no_port_and_access_ticket_takes_it_as_termproxy_asks() {
    let s = fake_pve::Scenario::parse(WORLD, "test.yaml").expect("valid");
    let pve = common::start_with(
        common::builder()
            .scenario(s)
            .pve_version(fake_pve::PveVersion::V8_4),
    )
    .await;
    let alice = login(&pve, "alice@pve", "alice-password").await;
    let d = pve
        .post("/nodes/pve/qemu/100/termproxy", &alice, "")
        .await
        .data();
    let ticket = d["ticket"].as_str().expect("ticket").to_string();
    // The websocket call checks the user and path only: any port.
    let r = pve
        .get(
            &format!(
                "/nodes/pve/qemu/100/vncwebsocket?port=5999&vncticket={}",
                enc(&ticket)
            ),
            &alice,
        )
        .await;
    assert_eq!(r.data()["port"], "5999");
    // termproxy's check: the ticket stands for the password, with the
    // privilege asked on the path.
    let form = |user: &str, path: &str, privs: &str| {
        format!(
            "username={}&password={}&path={}&privs={privs}",
            enc(user),
            enc(&ticket),
            enc(path)
        )
    };
    let r = pve
        .post(
            "/access/ticket",
            &Auth::None,
            &form("alice@pve", "/vms/100", "VM.Console"),
        )
        .await;
    assert_eq!(r.data(), serde_json::json!({ "username": "alice@pve" }));
    for (user, path, privs) in [
        ("bob@pve", "/vms/100", "VM.Console"),
        ("alice@pve", "/vms/102", "VM.Console"),
        ("alice@pve", "/vms/100", "Sys.Modify"),
    ] {
        let r = pve
            .post("/access/ticket", &Auth::None, &form(user, path, privs))
            .await;
        assert_eq!(r.status, 401, "{user} {path} {privs}: {r:?}");
    }
}
