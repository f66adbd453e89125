//! Consoles opened for real: `vncwebsocket` upgraded to a websocket,
//! over TLS as a browser opens it and over plain HTTP, then the RFB
//! handshake with the VNC password and the framebuffer a key typed
//! changes, or the termproxy protocol and the node's shell; the proxy's
//! task held while the connection lasts; pveproxy's refusals of an
//! upgrade.

mod common;

use common::{Auth, enc};
use fake_pve::console::{rfb, screen::Screen};
use fake_pve::ws;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

const WORLD: &str = r"
nodes:
  - { name: pve, ip: 192.0.2.10 }
users:
  - { userid: alice@pve, password: alice-password }
  - { userid: eve@pve, password: eve-password }
  - { userid: bob@pve, password: bob-password }
acl:
  - { path: /nodes/pve, roles: [PVEAdmin], users: [bob@pve] }
  - { path: /vms/100, roles: [PVEVMUser], users: [alice@pve] }
  - { path: /vms/200, roles: [PVEVMUser], users: [alice@pve] }
vms:
  - { vmid: 100, name: web, status: running }
  - { vmid: 101, name: off }
  - { vmid: 102, name: other, status: running }
containers:
  - { vmid: 200, hostname: box, status: running }
";

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// A websocket client: what a browser's noVNC or xterm.js does.
struct Client {
    io: Box<dyn Io>,
    buf: Vec<u8>,
}

/// The answer to an upgrade: its status line, and the rest of the head
/// and body.
struct Opened {
    status: u16,
    head: String,
    client: Client,
}

fn ticket_of(auth: &Auth) -> String {
    match auth {
        Auth::Ticket { ticket, .. } => ticket.clone(),
        _ => panic!("a ticket"),
    }
}

/// Connects over TLS (trusting the cluster CA) or plain HTTP.
async fn connect(pve: &common::Pve) -> Box<dyn Io> {
    match pve.run.cert_pem() {
        Some(ca) => Box::new(
            common::tls_connect(pve, ca, "localhost")
                .await
                .expect("TLS"),
        ),
        None => Box::new(
            tokio::net::TcpStream::connect(pve.run.addr())
                .await
                .expect("connect"),
        ),
    }
}

/// Sends an upgrade of `GET /api2/json<path>` with `headers`.
async fn upgrade(pve: &common::Pve, path: &str, cookie: &str, headers: &[&str]) -> Opened {
    let mut io = connect(pve).await;
    let mut req = format!(
        "GET /api2/json{path} HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nCookie: PVEAuthCookie={cookie}\r\n"
    );
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str("\r\n");
    io.write_all(req.as_bytes()).await.expect("sent");
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = tokio::time::timeout(std::time::Duration::from_secs(10), io.read(&mut chunk))
            .await
            .expect("an answer in time")
            .expect("read");
        assert!(
            n > 0,
            "closed before answering: {:?}",
            String::from_utf8_lossy(&buf)
        );
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_string();
    let status = head[9..12].parse().expect("a status");
    let rest = buf[end..].to_vec();
    let mut client = Client { io, buf: rest };
    let mut head = head;
    if status != 101 {
        // The body, by its length.
        let len: usize = head
            .lines()
            .find_map(|l| {
                l.to_lowercase()
                    .strip_prefix("content-length: ")
                    .map(str::to_string)
            })
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while client.buf.len() < len {
            let n = client.io.read(&mut chunk).await.expect("read");
            assert!(n > 0);
            client.buf.extend_from_slice(&chunk[..n]);
        }
        head.push_str(&String::from_utf8_lossy(&client.buf));
    }
    Opened {
        status,
        head,
        client,
    }
}

const WS: [&str; 4] = [
    "Upgrade: websocket",
    "Sec-WebSocket-Version: 13",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Protocol: binary",
];

impl Client {
    async fn send(&mut self, data: &[u8]) {
        self.io
            .write_all(&ws::client_frame(2, data, [0x37, 0xfa, 0x21, 0x3d]))
            .await
            .expect("sent");
    }

    /// The next frame's payload; none once the server closed.
    async fn frame(&mut self) -> Option<Vec<u8>> {
        let mut chunk = [0u8; 65536];
        loop {
            if let Some((op, payload, used)) = ws::read_server_frame(&self.buf) {
                self.buf.drain(..used);
                assert_eq!(op, 2, "binary frames");
                return Some(payload);
            }
            let n =
                tokio::time::timeout(std::time::Duration::from_secs(10), self.io.read(&mut chunk))
                    .await
                    .expect("data in time")
                    .ok()?;
            if n == 0 {
                return None;
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Exactly `n` bytes of the stream inside the frames.
    async fn bytes(&mut self, pending: &mut Vec<u8>, n: usize) -> Vec<u8> {
        while pending.len() < n {
            let f = self.frame().await.expect("more data");
            pending.extend(f);
        }
        pending.drain(..n).collect()
    }
}

/// Opens a VNC console of `vmid` for `auth`: the proxy's answer.
async fn vncproxy(pve: &common::Pve, auth: &Auth, vmid: u32) -> serde_json::Value {
    pve.post(
        &format!("/nodes/pve/qemu/{vmid}/vncproxy"),
        auth,
        "websocket=1",
    )
    .await
    .data()
}

fn socket_path(kind: &str, vmid: u32, d: &serde_json::Value) -> String {
    format!(
        "/nodes/pve/{kind}/{vmid}/vncwebsocket?port={}&vncticket={}",
        d["port"],
        enc(d["ticket"].as_str().expect("ticket"))
    )
}

/// Reads a framebuffer update of 32-bit pixels into `fb` (lit or not).
async fn read_update(c: &mut Client, pending: &mut Vec<u8>, fb: &mut [bool], width: usize) {
    let head = c.bytes(pending, 4).await;
    assert_eq!(head[0], 0, "a framebuffer update");
    let rects = u16::from_be_bytes([head[2], head[3]]);
    for _ in 0..rects {
        let r = c.bytes(pending, 12).await;
        let f = |i: usize| usize::from(u16::from_be_bytes([r[i], r[i + 1]]));
        let (x, y, w, h) = (f(0), f(2), f(4), f(6));
        assert_eq!(&r[8..12], &[0, 0, 0, 0], "raw encoding");
        let px = c.bytes(pending, w * h * 4).await;
        for row in 0..h {
            for col in 0..w {
                let i = (row * w + col) * 4;
                fb[(y + row) * width + x + col] = px[i..i + 4] != [0, 0, 0, 0];
            }
        }
    }
}

/// Whether `fb` shows `text` as fake-pve's VGA screen draws it.
fn shows(fb: &[bool], text: &[u8]) -> bool {
    let mut want = Screen::new(720, 400, 9);
    want.write(text);
    (0..400).all(|y| (0..720).all(|x| fb[y * 720 + x] == want.lit(x, y)))
}

async fn status_of(pve: &common::Pve, upid: &str) -> serde_json::Value {
    let root = pve.root().await;
    pve.get(&format!("/nodes/pve/tasks/{}/status", enc(upid)), &root)
        .await
        .data()
}

async fn vm_console_end_to_end(pve: &common::Pve) {
    let alice = pve.login_as("alice@pve", "alice-password").await;
    let d = vncproxy(pve, &alice, 100).await;
    let upid = d["upid"].as_str().expect("upid").to_string();
    let password = d["password"].as_str().expect("password").to_string();
    let mut o = upgrade(pve, &socket_path("qemu", 100, &d), &ticket_of(&alice), &WS).await;
    assert_eq!(o.status, 101, "{}", o.head);
    let lower = o.head.to_lowercase();
    assert!(
        lower.contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="),
        "{}",
        o.head
    );
    assert!(
        lower.contains("sec-websocket-protocol: binary"),
        "{}",
        o.head
    );
    // The task runs while the connection lasts, past the proxy's wait.
    pve.run.clock().advance(60);
    assert_eq!(status_of(pve, &upid).await["status"], "running");

    let c = &mut o.client;
    let mut pending = Vec::new();
    assert_eq!(c.bytes(&mut pending, 12).await, b"RFB 003.008\n");
    c.send(b"RFB 003.008\n").await;
    assert_eq!(c.bytes(&mut pending, 2).await, vec![1, 2]);
    c.send(&[2]).await;
    let challenge: [u8; 16] = c.bytes(&mut pending, 16).await.try_into().expect("16");
    // noVNC is given the whole ticket as its password: the first eight
    // characters are the VNC password.
    let ticket = d["ticket"].as_str().expect("ticket");
    c.send(&rfb::vnc_response(ticket, &challenge)).await;
    assert_eq!(c.bytes(&mut pending, 4).await, vec![0, 0, 0, 0]);
    c.send(&[1]).await;
    let init = c.bytes(&mut pending, 24).await;
    assert_eq!(&init[..4], &[2, 208, 1, 144], "720x400");
    let name_len = u32::from_be_bytes([init[20], init[21], init[22], init[23]]) as usize;
    assert_eq!(c.bytes(&mut pending, name_len).await, b"web");
    assert_eq!(password.len(), 8);

    let mut fb = vec![false; 720 * 400];
    c.send(&[3, 0, 0, 0, 0, 0, 2, 208, 1, 144]).await;
    read_update(c, &mut pending, &mut fb, 720).await;
    assert!(shows(&fb, b"Booting from Hard Disk...\r\n\r\nweb login: "));
    // A key typed shows up.
    let mut keys = Vec::new();
    for k in b"root" {
        keys.extend_from_slice(&[4, 1, 0, 0, 0, 0, 0, *k]);
        keys.extend_from_slice(&[4, 0, 0, 0, 0, 0, 0, *k]);
    }
    keys.extend_from_slice(&[3, 1, 0, 0, 0, 0, 2, 208, 1, 144]);
    c.send(&keys).await;
    read_update(c, &mut pending, &mut fb, 720).await;
    assert!(shows(
        &fb,
        b"Booting from Hard Disk...\r\n\r\nweb login: root"
    ));
    assert!(!shows(&fb, b"Booting from Hard Disk...\r\n\r\nweb login: "));

    // Closing ends the task well.
    c.io.write_all(&ws::client_frame(8, &[3, 232], [1, 2, 3, 4]))
        .await
        .expect("close");
    assert!(c.frame().await.is_none(), "the server closes too");
    let st = stopped(pve, &upid).await;
    assert_eq!(st["exitstatus"], "OK", "{st}");
}

#[tokio::test]
async fn a_vm_console_over_tls_draws_its_screen_and_the_keys_typed() {
    let pve = common::start_scenario(WORLD).await;
    assert!(pve.run.cert_pem().is_some());
    vm_console_end_to_end(&pve).await;
}

#[tokio::test]
async fn a_vm_console_over_plain_http_too() {
    let s = fake_pve::Scenario::parse(WORLD, "test.yaml").expect("valid");
    let pve = common::start_with(common::builder().scenario(s).tls(fake_pve::Tls::Off)).await;
    vm_console_end_to_end(&pve).await;
}

#[tokio::test]
async fn a_wrong_vnc_password_is_refused_and_the_port_takes_one_connection() {
    let pve = common::start_scenario(WORLD).await;
    let alice = pve.login_as("alice@pve", "alice-password").await;
    let d = vncproxy(&pve, &alice, 100).await;
    let path = socket_path("qemu", 100, &d);
    let mut o = upgrade(&pve, &path, &ticket_of(&alice), &WS).await;
    assert_eq!(o.status, 101);
    let c = &mut o.client;
    let mut pending = Vec::new();
    c.bytes(&mut pending, 12).await;
    c.send(b"RFB 003.008\n").await;
    c.bytes(&mut pending, 2).await;
    c.send(&[2]).await;
    let challenge: [u8; 16] = c.bytes(&mut pending, 16).await.try_into().expect("16");
    c.send(&rfb::vnc_response("notright", &challenge)).await;
    let mut want = vec![0, 0, 0, 1, 0, 0, 0, 21];
    want.extend_from_slice(b"Authentication failed");
    assert_eq!(c.bytes(&mut pending, want.len()).await, want);
    assert!(c.frame().await.is_none());
    // The one connection was taken: the ticket still checks, but nothing
    // listens on the port any more, and the connection closes unanswered.
    let mut io = connect(&pve).await;
    let req = format!(
        "GET /api2/json{path} HTTP/1.1\r\nHost: localhost\r\nCookie: PVEAuthCookie={}\r\n{}\r\n\r\n",
        ticket_of(&alice),
        WS.join("\r\n")
    );
    io.write_all(req.as_bytes()).await.expect("sent");
    let mut buf = Vec::new();
    let n = tokio::time::timeout(std::time::Duration::from_secs(10), io.read_to_end(&mut buf))
        .await
        .expect("closed in time");
    assert!(
        n.is_err() || buf.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&buf)
    );
}

#[tokio::test]
async fn a_stopped_vm_closes_its_console_and_its_task_fails_as_pve_s() {
    let pve = common::start_scenario(WORLD).await;
    let root = pve.root().await;
    let d = vncproxy(&pve, &root, 101).await;
    let upid = d["upid"].as_str().expect("upid").to_string();
    let mut o = upgrade(&pve, &socket_path("qemu", 101, &d), &ticket_of(&root), &WS).await;
    assert_eq!(o.status, 101);
    assert!(o.client.frame().await.is_none(), "no RFB greeting");
    let st = stopped(&pve, &upid).await;
    assert_eq!(st["exitstatus"], "Failed to run vncproxy.", "{st}");
    let log = common::task_log(&pve, &root, &upid).await;
    assert!(log.iter().any(|l| l == "VM 101 not running"), "{log:?}");
}

#[rstest::rstest]
#[case::not_websocket(&["Upgrade: h2c", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: x"], "unable to upgrade to protocol 'h2c'")]
#[case::old_version(&["Upgrade: websocket", "Sec-WebSocket-Version: 8", "Sec-WebSocket-Key: x"], "unsupported websocket-version '8'")]
#[case::no_key(&["Upgrade: websocket", "Sec-WebSocket-Version: 13"], "missing websocket-key")]
#[tokio::test]
async fn a_bad_handshake_is_refused_as_pveproxy_refuses_it(
    #[case] headers: &[&str],
    #[case] msg: &str,
) {
    let pve = common::start_scenario(WORLD).await;
    let root = pve.root().await;
    let d = vncproxy(&pve, &root, 100).await;
    let o = upgrade(
        &pve,
        &socket_path("qemu", 100, &d),
        &ticket_of(&root),
        headers,
    )
    .await;
    assert_eq!(o.status, 500, "{}", o.head);
    assert!(
        o.head.starts_with(&format!("HTTP/1.1 500 {msg}")),
        "{}",
        o.head
    );
}

#[tokio::test]
async fn a_ticket_for_another_port_gets_the_api_s_refusal_not_an_upgrade() {
    let pve = common::start_scenario(WORLD).await;
    let alice = pve.login_as("alice@pve", "alice-password").await;
    let d = vncproxy(&pve, &alice, 100).await;
    let path = format!(
        "/nodes/pve/qemu/100/vncwebsocket?port=5999&vncticket={}",
        enc(d["ticket"].as_str().expect("ticket"))
    );
    let o = upgrade(&pve, &path, &ticket_of(&alice), &WS).await;
    assert_eq!(o.status, 401, "{}", o.head);
    assert!(o.head.contains("invalid PVEVNC ticket"), "{}", o.head);
}

/// Opens a terminal through termproxy on `base` (a guest's or a node's
/// path) for `auth`, and sends the ticket line as `user`: the answer of
/// the proxy call and the websocket.
async fn termproxy(
    pve: &common::Pve,
    auth: &Auth,
    base: &str,
    user: &str,
) -> (serde_json::Value, Client) {
    let d = pve
        .post(&format!("{base}/termproxy"), auth, "")
        .await
        .data();
    let ticket = d["ticket"].as_str().expect("ticket");
    let path = format!(
        "{base}/vncwebsocket?port={}&vncticket={}",
        d["port"],
        enc(ticket)
    );
    let mut o = upgrade(pve, &path, &ticket_of(auth), &WS).await;
    assert_eq!(o.status, 101, "{}", o.head);
    o.client.send(format!("{user}:{ticket}\n").as_bytes()).await;
    (d, o.client)
}

/// The task's status once it stopped (the connection's end reaches the
/// model a little after the socket closes).
async fn stopped(pve: &common::Pve, upid: &str) -> serde_json::Value {
    let mut st = status_of(pve, upid).await;
    for _ in 0..50 {
        if st["status"] == "stopped" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        st = status_of(pve, upid).await;
    }
    st
}

/// Logs in at a login prompt: the user name, then the password.
async fn log_in(c: &mut Client, prompt: &str, user: &str, password: &str) {
    read_until(c, prompt).await;
    type_in(c, &format!("{user}\r")).await;
    read_until(c, "Password: ").await;
    type_in(c, &format!("{password}\r")).await;
}

/// What the terminal printed until it shows `until`.
async fn read_until(c: &mut Client, until: &str) -> String {
    let mut seen = String::new();
    while !seen.contains(until) {
        let f = c
            .frame()
            .await
            .unwrap_or_else(|| panic!("closed; saw {seen:?}"));
        seen.push_str(&String::from_utf8_lossy(&f));
    }
    seen
}

/// Types `text` as xterm.js sends it.
async fn type_in(c: &mut Client, text: &str) {
    c.send(format!("0:{}:{text}", text.len()).as_bytes()).await;
}

#[tokio::test]
async fn the_node_shell_answers_from_the_api_through_termproxy() {
    let pve = common::start_scenario(WORLD).await;
    let root = pve.root().await;
    let (d, mut c) = termproxy(&pve, &root, "/nodes/pve", "root@pam").await;
    let hello = read_until(&mut c, "root@pve:~# ").await;
    assert!(hello.starts_with("OK"), "{hello:?}");
    c.send(b"1:120:40:").await;
    c.send(b"2").await;
    type_in(&mut c, "qm list\r").await;
    let out = read_until(&mut c, "root@pve:~# ").await;
    assert!(
        out.contains("      VMID NAME                 STATUS     MEM(MB)    BOOTDISK(GB) PID"),
        "{out:?}"
    );
    assert!(
        out.contains("       100 web                  running"),
        "{out:?}"
    );
    assert!(
        out.contains("       101 off                  stopped"),
        "{out:?}"
    );
    type_in(&mut c, "pct list\r").await;
    let out = read_until(&mut c, "root@pve:~# ").await;
    assert!(
        out.contains("200        running                 box"),
        "{out:?}"
    );
    type_in(
        &mut c,
        "pvesh get /nodes/pve/qemu/100/config --output-format json\r",
    )
    .await;
    let out = read_until(&mut c, "root@pve:~# ").await;
    let line = out
        .lines()
        .find(|l| l.starts_with('{'))
        .expect("a JSON line");
    let v: serde_json::Value = serde_json::from_str(line.trim()).expect("JSON");
    assert_eq!(v["name"], "web");
    type_in(&mut c, "pvesh get /nodes/nope/status\r").await;
    let out = read_until(&mut c, "root@pve:~# ").await;
    assert!(out.contains("nope"), "{out:?}");
    type_in(&mut c, "hostname\r").await;
    assert!(
        read_until(&mut c, "root@pve:~# ")
            .await
            .contains("\r\npve\r\n")
    );
    type_in(&mut c, "pveversion\r").await;
    let out = read_until(&mut c, "root@pve:~# ").await;
    assert!(
        out.contains(&format!("pve-manager/{}/", pve.version.version())),
        "{out:?}"
    );
    type_in(&mut c, "rm -rf /\r").await;
    assert!(
        read_until(&mut c, "root@pve:~# ")
            .await
            .contains("-bash: rm: command not found")
    );
    let upid = d["upid"].as_str().expect("upid").to_string();
    assert_eq!(status_of(&pve, &upid).await["status"], "running");
    type_in(&mut c, "exit\r").await;
    read_until(&mut c, "logout").await;
    assert!(c.frame().await.is_none());
    let st = stopped(&pve, &upid).await;
    assert_eq!(st["exitstatus"], "OK", "{st}");
}

#[tokio::test]
async fn a_container_console_logs_in_to_a_prompt_named_after_it() {
    let pve = common::start_scenario(WORLD).await;
    let alice = pve.login_as("alice@pve", "alice-password").await;
    let (_, mut c) = termproxy(&pve, &alice, "/nodes/pve/lxc/200", "alice@pve").await;
    log_in(&mut c, "box login: ", "root", "secret").await;
    let out = read_until(&mut c, "root@box:~# ").await;
    assert!(
        !out.contains("secret"),
        "the password is not echoed: {out:?}"
    );
    type_in(&mut c, "hostname\r").await;
    assert!(
        read_until(&mut c, "root@box:~# ")
            .await
            .contains("\r\nbox\r\n")
    );
}

#[tokio::test]
async fn termproxy_refuses_a_ticket_of_someone_else_and_its_task_fails() {
    let pve = common::start_scenario(WORLD).await;
    let alice = pve.login_as("alice@pve", "alice-password").await;
    // The ticket is alice's: claiming to be someone else fails.
    let (d, mut c) = termproxy(&pve, &alice, "/nodes/pve/lxc/200", "eve@pve").await;
    assert!(c.frame().await.is_none(), "no OK");
    let upid = d["upid"].as_str().expect("upid").to_string();
    let st = stopped(&pve, &upid).await;
    let err = st["exitstatus"].as_str().expect("ended");
    assert!(err.starts_with("command '/usr/bin/termproxy "), "{st}");
    assert!(err.ends_with("' failed: exit code 1"), "{st}");
}

#[tokio::test]
async fn a_node_shell_for_another_user_asks_for_a_login() {
    let pve = common::start_scenario(WORLD).await;
    let bob = pve.login_as("bob@pve", "bob-password").await;
    let (_, mut c) = termproxy(&pve, &bob, "/nodes/pve", "bob@pve").await;
    log_in(&mut c, "pve login: ", "root", "wrong").await;
    log_in(&mut c, "Login incorrect\r\npve login: ", "root", "password").await;
    let out = read_until(&mut c, "root@pve:~# ").await;
    assert!(out.contains("Linux pve "), "{out:?}");
}
