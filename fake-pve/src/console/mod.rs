//! The consoles behind `vncwebsocket`: pveproxy's websocket upgrade
//! (`websocket_proxy`, after the API call checked the ticket and port),
//! then what listens on the proxy's port, as fake-pve plays it:
//!
//! - `qm vncproxy` (a VM's display) and `vncterm -notls` (a container's
//!   console, a node's shell, a VM's serial port): an RFB server with VNC
//!   authentication by the proxy's password ([`rfb`]), showing a text
//!   screen ([`screen`]);
//! - `termproxy`: PVE's termproxy protocol ([`termproxy`]), the ticket
//!   checked as `/access/vncticket` checks it.
//!
//! Behind both runs a small terminal ([`shell`]): the guest's login
//! prompt, or the node's shell answering a few commands from the API.
//! The proxy's task runs while the connection lasts and ends when it
//! closes.
//!
//! The same upgrade of `mtunnelwebsocket` connects to a remote
//! migration's tunnel instead (`crate::remote::serve`).

pub mod rfb;
pub mod screen;
pub mod shell;
pub mod termproxy;
use crate::ws;

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::model::console::{Behind, Program, Session};
use crate::model::tasks::{Upid, Worker};
use crate::state::State;
use screen::Screen;
use shell::{Action, Facts, Terminal};

/// A websocket upgrade asked of a `...websocket` call, taken from its
/// request before the API answers it.
pub(crate) struct Upgrade {
    on: hyper::upgrade::OnUpgrade,
    headers: HeaderMap,
}

impl Upgrade {
    /// The upgrade a request asks, as pveproxy sees one: a `GET` with an
    /// `Upgrade` header to a path ending in `websocket`.
    pub(crate) fn take<B>(req: &mut http::Request<B>) -> Option<Self> {
        if req.method() != http::Method::GET
            || !req.headers().contains_key(http::header::UPGRADE)
            || !req.uri().path().ends_with("websocket")
        {
            return None;
        }
        let on = req.extensions_mut().remove::<hyper::upgrade::OnUpgrade>()?;
        Some(Self {
            on,
            headers: req.headers().clone(),
        })
    }

    /// pveproxy's checks of the handshake, made after the API call: what
    /// it refuses with (a 500).
    fn refusal(&self) -> Option<String> {
        let header = |name: &str| {
            self.headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let upgrade = header("upgrade").unwrap_or_default().to_lowercase();
        if upgrade != "websocket" {
            return Some(format!("unable to upgrade to protocol '{upgrade}'\n"));
        }
        let version = header("sec-websocket-version").unwrap_or_default();
        if version != "13" {
            return Some(format!("unsupported websocket-version '{version}'\n"));
        }
        if header("sec-websocket-key").is_none_or(|k| k.is_empty()) {
            return Some("missing websocket-key\n".into());
        }
        None
    }

    /// The answer to the upgrade, given the API's answer `resp`: a
    /// refusal of the handshake, the API's own answer when it is not a
    /// success, else `101 Switching Protocols` with the console served on
    /// the upgraded connection. `None`: nothing listens on the port, and
    /// the connection is closed without an answer.
    pub(crate) async fn answer(
        self,
        resp: axum::response::Response,
        wire: Arc<crate::app::Wire>,
    ) -> Option<axum::response::Response> {
        if let Some(refused) = self.refusal() {
            return Some(crate::app::reply(crate::api::plain(500, &refused)));
        }
        if resp.status() != StatusCode::OK {
            return Some(resp);
        }
        let body = axum::body::to_bytes(resp.into_body(), 1 << 16).await.ok()?;
        let data: Value = serde_json::from_slice(&body).ok()?;
        let state = wire.state().clone();
        // A migration tunnel's socket (`mtunnelwebsocket`).
        if let Some(socket) = data["data"]["socket"].as_str() {
            let socket = socket.to_string();
            let conn = crate::remote::serve::connect(&state, &socket)?;
            let out = self.switching();
            let on = self.on;
            tokio::spawn(async move {
                match on.await {
                    Ok(upgraded) => {
                        let io = hyper_util::rt::TokioIo::new(upgraded);
                        crate::remote::serve::serve(io, state, socket, conn).await;
                    }
                    Err(e) => {
                        tracing::debug!("websocket upgrade failed: {e}");
                        let now_ms = state.clock().now_millis();
                        state.at(now_ms, |c| c.mtunnel_closed(&socket, now_ms));
                    }
                }
            });
            return Some(out);
        }
        let port = match &data["data"]["port"] {
            Value::String(s) => s.parse::<u16>().ok()?,
            Value::Number(n) => u16::try_from(n.as_u64()?).ok()?,
            _ => return None,
        };
        let session = connect(&state, port)?;
        let out = self.switching();
        let on = self.on;
        tokio::spawn(async move {
            match on.await {
                Ok(upgraded) => {
                    let io = hyper_util::rt::TokioIo::new(upgraded);
                    serve(io, &state, &wire, session).await;
                }
                Err(e) => {
                    tracing::debug!("websocket upgrade failed: {e}");
                    end(&state, &session, Vec::new(), None);
                }
            }
        });
        Some(out)
    }

    /// `101 Switching Protocols`, as pveproxy answers an upgrade.
    fn switching(&self) -> axum::response::Response {
        let key = self
            .headers
            .get("sec-websocket-key")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let mut out = axum::response::Response::new(axum::body::Body::empty());
        *out.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
        let h = out.headers_mut();
        h.insert(http::header::UPGRADE, HeaderValue::from_static("websocket"));
        h.insert(
            http::header::CONNECTION,
            HeaderValue::from_static("upgrade"),
        );
        if let Ok(v) = HeaderValue::from_str(&ws::accept_key(key)) {
            h.insert("sec-websocket-accept", v);
        }
        // pveproxy answers with the subprotocol asked, whatever it is.
        if let Some(p) = self.headers.get("sec-websocket-protocol") {
            h.insert("sec-websocket-protocol", p.clone());
        }
        out
    }
}

/// Takes the one connection of the proxy on `port` of the local node:
/// its task now runs until the connection ends.
fn connect(state: &State, port: u16) -> Option<Session> {
    let now_ms = state.clock().now_millis();
    state
        .at(now_ms, |c| {
            let node = c.nodes().local().to_string();
            let s = c.consoles.connect(&node, port, now_ms)?;
            let upid = Upid::parse(&s.upid)?;
            let held = Worker::new(&upid.kind, &upid.id);
            c.replan_task(&s.upid, i64::MAX, held, now_ms).ok()?;
            Some(s)
        })
        .inspect(|_| state.changed())
}

/// Ends a connected proxy's task now, with `log` and `error`; its port
/// is free again.
fn end(state: &State, s: &Session, log: Vec<String>, error: Option<String>) {
    let now_ms = state.clock().now_millis();
    state.at(now_ms, |c| {
        c.consoles.close(&s.upid);
        let Some(upid) = Upid::parse(&s.upid) else {
            return;
        };
        let mut w = Worker::new(&upid.kind, &upid.id);
        for l in log {
            w = w.log(l);
        }
        if let Some(e) = error {
            w = w.fail(e);
        }
        let _ = c.replan_task(&s.upid, now_ms, w, now_ms);
    });
    state.changed();
}

/// The websocket of one console: pveproxy's frames around the bytes of
/// the program behind.
struct Socket<I> {
    io: I,
    reader: ws::Reader,
    buf: Vec<u8>,
}

impl<I: AsyncRead + AsyncWrite + Unpin> Socket<I> {
    async fn send(&mut self, bytes: &[u8]) -> bool {
        bytes.is_empty() || self.io.write_all(&ws::binary(bytes)).await.is_ok()
    }

    /// The next bytes the client sent; none once it closed (or sent what
    /// pveproxy refuses).
    async fn recv(&mut self) -> Option<Vec<u8>> {
        loop {
            match self.reader.next_frame() {
                Ok(Some(ws::Frame::Data(d))) => return Some(d),
                Ok(Some(ws::Frame::Ping(p))) => {
                    self.io.write_all(&ws::pong(&p)).await.ok()?;
                    continue;
                }
                Ok(Some(ws::Frame::Pong)) => continue,
                Ok(Some(ws::Frame::Close)) => return None,
                Ok(None) => {}
                Err(e) => {
                    tracing::debug!("websocket closed: {e}");
                    return None;
                }
            }
            let n = self.io.read(&mut self.buf).await.ok()?;
            if n == 0 {
                return None;
            }
            self.reader.push(&self.buf[..n]);
        }
    }
}

/// What a console shows, as read from the model when it connects.
struct Shown {
    /// The desktop's name (RFB).
    name: String,
    /// The terminal and what it prints first; none when the program
    /// behind fails at once (with its output and its error).
    terminal: Result<(Terminal, Vec<u8>), (String, String)>,
}

/// Reads what `s` shows from the model.
fn shown(state: &State, s: &Session) -> Shown {
    let version = state.settings().version;
    state.with(|c| match &s.behind {
        Behind::NodeShell { node, root } => {
            let kernel = crate::model::node_hw::catalog::kernel_release(version);
            let facts = Facts {
                host: node.clone(),
                pveversion: format!(
                    "pve-manager/{}/{} (running kernel: {kernel})",
                    version.version(),
                    version.repoid()
                ),
                pveversion_verbose: crate::model::node_hw::catalog::pveversion_verbose(version),
                uptime: String::new(),
                uname: format!(
                    "Linux {node} {kernel} {} x86_64",
                    crate::model::node_hw::catalog::kernel_build(version)
                ),
            };
            Shown {
                name: "VNC Command Terminal".into(),
                terminal: Ok(Terminal::node(facts, *root)),
            }
        }
        Behind::CtConsole { vmid } => {
            let ct = c.guests.ct_by_id(*vmid);
            let host = ct
                .and_then(|ct| ct.config().get("hostname").cloned())
                .unwrap_or_else(|| format!("CT{vmid}"));
            let running = ct.is_some_and(|ct| ct.running());
            let facts = Facts {
                host,
                ..Facts::default()
            };
            Shown {
                name: "VNC Command Terminal".into(),
                terminal: if running {
                    Ok(Terminal::guest(facts, ""))
                } else {
                    Err((format!("lxc-console: {vmid} is not running"), String::new()))
                },
            }
        }
        Behind::VmDisplay { vmid } | Behind::VmSerial { vmid, .. } => {
            let vm = c.guests.get(vmid);
            let host = vm
                .and_then(|vm| vm.config().get("name").cloned())
                .unwrap_or_else(|| format!("vm{vmid}"));
            let running = vm.is_some_and(|vm| vm.running());
            let display = matches!(s.behind, Behind::VmDisplay { .. });
            let facts = Facts {
                host: host.clone(),
                ..Facts::default()
            };
            // `qm terminal`'s checks: the serial port, then the VM.
            let serial = match &s.behind {
                Behind::VmSerial { iface, .. } => {
                    let conf = vm.map(|vm| vm.config());
                    let has = |i: &str| conf.is_some_and(|c| c.contains_key(i));
                    match iface {
                        Some(i) if !has(i) => {
                            Some(format!("serial interface '{i}' is not configured"))
                        }
                        Some(_) => None,
                        None if (0..4).any(|n| has(&format!("serial{n}"))) => None,
                        None => Some("unable to find a serial interface".into()),
                    }
                }
                _ => None,
            };
            let terminal = if let Some(err) = serial {
                Err((err, String::new()))
            } else if !running {
                let err = format!("VM {vmid} not running");
                if display {
                    Err((err, "Failed to run vncproxy.".into()))
                } else {
                    Err((err, String::new()))
                }
            } else if display {
                Ok(Terminal::guest(facts, "Booting from Hard Disk...\n"))
            } else {
                Ok(Terminal::guest(facts, ""))
            };
            Shown {
                name: if display {
                    host
                } else {
                    "VNC Command Terminal".into()
                },
                terminal,
            }
        }
    })
}

/// Serves a console on an upgraded connection until either side ends
/// it, then ends its task.
async fn serve<I>(io: I, state: &State, wire: &Arc<crate::app::Wire>, s: Session)
where
    I: AsyncRead + AsyncWrite + Unpin,
{
    let mut sock = Socket {
        io,
        reader: ws::Reader::default(),
        buf: vec![0; 16 * 1024],
    };
    let shown = shown(state, &s);
    let outcome = match s.program {
        Program::Termproxy => termproxy_session(&mut sock, state, wire, &s, shown).await,
        Program::QmVncProxy | Program::Vncterm => match s.password.clone() {
            Some(pw) => rfb_session(&mut sock, state, wire, &s, shown, &pw).await,
            // vncterm without `-notls` asks a TLS VNC client (VeNCrypt),
            // which is not emulated: it closes.
            None => Outcome::default(),
        },
        Program::Spiceterm => Outcome::default(),
    };
    // The task ends as the program does, before the connection closes.
    end(state, &s, outcome.log, outcome.error);
    let _ = sock.io.shutdown().await;
}

/// How a console's program ended: its task's log lines and error.
#[derive(Debug, Default)]
struct Outcome {
    log: Vec<String>,
    error: Option<String>,
}

/// Runs the terminal's actions: what to print, and whether it ended.
async fn act(
    term: &mut Terminal,
    mut actions: Vec<Action>,
    state: &State,
    wire: &crate::app::Wire,
) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let mut exit = false;
    let mut queue: std::collections::VecDeque<Action> = actions.drain(..).collect();
    while let Some(a) = queue.pop_front() {
        match a {
            Action::Print(b) => out.extend(b),
            Action::Exit => exit = true,
            Action::Login(user, password) => {
                let now = state.clock().now_millis().div_euclid(1000);
                let userid = format!("{user}@pam");
                let ok = state.with(|c| c.access().check_password(&userid, &password, now).is_ok());
                queue.extend(term.logged_in(ok));
            }
            Action::Get(path, then) => {
                let answer = api_get(state, wire, &path).await;
                queue.extend(term.answered(&then, answer));
            }
        }
    }
    (out, exit)
}

/// `GET /api2/json<path>` as root@pam, as `pvesh` on the node asks it:
/// the answer's `data`, or its error's message.
async fn api_get(state: &State, wire: &crate::app::Wire, path: &str) -> Result<Value, String> {
    let now = state.clock().now_millis().div_euclid(1000);
    let ticket = state.keys().ticket("root@pam", now);
    let resp = wire
        .local_get(path, &ticket)
        .await
        .ok_or_else(|| format!("no such resource '{path}'"))?;
    let status = resp.status();
    let reason = resp
        .extensions()
        .get::<hyper::ext::ReasonPhrase>()
        .map(|r| String::from_utf8_lossy(r.as_bytes()).to_string());
    let body: Bytes = http_body_util::BodyExt::collect(resp.into_body())
        .await
        .map(http_body_util::Collected::to_bytes)
        .unwrap_or_default();
    let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if status.is_success() {
        return Ok(v.get("data").cloned().unwrap_or(Value::Null));
    }
    let mut msg = v
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or(reason)
        .unwrap_or_else(|| status.to_string());
    if let Some(errs) = v.get("errors").and_then(Value::as_object) {
        for (k, e) in errs {
            msg.push_str(&format!("\n{k}: {}", e.as_str().unwrap_or_default()));
        }
    }
    Err(format!("{} {}", status.as_u16(), msg.trim_end()))
}

/// A console through `termproxy`: the ticket line, `OK`, then the
/// terminal.
async fn termproxy_session<I: AsyncRead + AsyncWrite + Unpin>(
    sock: &mut Socket<I>,
    state: &State,
    wire: &crate::app::Wire,
    s: &Session,
    shown: Shown,
) -> Outcome {
    let failed = Outcome {
        log: Vec::new(),
        error: Some(format!("command '{}' failed: exit code 1", s.command)),
    };
    let mut reader = termproxy::Reader::default();
    let mut term: Option<Terminal> = None;
    let mut shown = Some(shown);
    while let Some(data) = sock.recv().await {
        let Ok(msgs) = reader.input(&data) else {
            return failed;
        };
        for m in msgs {
            match m {
                termproxy::Msg::Auth { user, ticket } => {
                    if !ticket_ok(state, s, &user, &ticket) {
                        return failed;
                    }
                    if !sock.send(b"OK").await {
                        return Outcome::default();
                    }
                    match shown.take().map(|x| x.terminal) {
                        Some(Ok((t, first))) => {
                            if !sock.send(&first).await {
                                return Outcome::default();
                            }
                            term = Some(t);
                        }
                        Some(Err((printed, error))) => {
                            let _ = sock.send(format!("{printed}\r\n").as_bytes()).await;
                            return Outcome {
                                log: Vec::new(),
                                error: (!error.is_empty()).then_some(error),
                            };
                        }
                        None => return failed,
                    }
                }
                termproxy::Msg::Input(keys) => {
                    let Some(t) = term.as_mut() else {
                        return failed;
                    };
                    set_uptime(state, s, t);
                    let actions = t.input(&keys);
                    let (out, exit) = act(t, actions, state, wire).await;
                    if !sock.send(&out).await || exit {
                        return Outcome::default();
                    }
                }
                termproxy::Msg::Resize { .. } | termproxy::Msg::Ping => {}
            }
        }
    }
    Outcome::default()
}

/// Whether `ticket` lets `user` in to `s`: a VNC ticket for the user,
/// the proxy's path and port, and the privilege the proxy asks on that
/// path (`termproxy --path --perm --verify-port`, through
/// `/access/vncticket`).
fn ticket_ok(state: &State, s: &Session, user: &str, ticket: &str) -> bool {
    let now = state.clock().now_millis().div_euclid(1000);
    // PVE 8.4's tickets name no port (its termproxy asks
    // `/access/ticket` with the ticket as the password).
    let port = s.port.to_string();
    let port = state.settings().version.is_v9().then_some(port.as_str());
    if !crate::api::console::vnc_ticket_holds(state, ticket, user, &s.authpath, port, now) {
        return false;
    }
    let perm = if s.authpath.starts_with("/nodes/") {
        "Sys.Console"
    } else {
        "VM.Console"
    };
    let Some(who) = crate::model::AuthId::parse(user) else {
        return false;
    };
    state.with(|c| c.access().check_perm(&who, &s.authpath, &[perm]).is_ok())
}

/// Gives a node's shell the node's `uptime` line now.
fn set_uptime(state: &State, s: &Session, t: &mut Terminal) {
    let Behind::NodeShell { node, .. } = &s.behind else {
        return;
    };
    let now = state.clock().now_millis().div_euclid(1000);
    let boot = state.with(|c| c.nodes().get(node).map(|n| n.boot_time));
    t.set_uptime(uptime_line(now, boot.unwrap_or(now)));
}

/// `uptime`'s line at `now` for a node booted at `boot`.
fn uptime_line(now: i64, boot: i64) -> String {
    let (_, _, _, h, mi, sec, _) = crate::clock::civil(now);
    let up = (now - boot).max(0);
    let (days, hours, mins) = (up / 86_400, (up % 86_400) / 3_600, (up % 3_600) / 60);
    let mut since = String::new();
    if days > 0 {
        since.push_str(&format!("{days} day{}, ", if days == 1 { "" } else { "s" }));
    }
    if hours > 0 {
        since.push_str(&format!("{hours:2}:{mins:02}"));
    } else {
        since.push_str(&format!("{mins} min"));
    }
    format!(" {h:02}:{mi:02}:{sec:02} up {since},  1 user,  load average: 0.00, 0.00, 0.00")
}

/// A console through VNC: the RFB handshake with the proxy's password,
/// then the screen and the keys typed.
async fn rfb_session<I: AsyncRead + AsyncWrite + Unpin>(
    sock: &mut Socket<I>,
    state: &State,
    wire: &crate::app::Wire,
    s: &Session,
    shown: Shown,
    password: &str,
) -> Outcome {
    let (mut term, first) = match shown.terminal {
        Ok(x) => x,
        Err((printed, error)) => {
            // `qm vncproxy` fails before it speaks: the client sees the
            // connection close; `vncterm` shows what the command printed.
            if error.is_empty() {
                return Outcome::default();
            }
            return Outcome {
                log: vec![printed],
                error: Some(error),
            };
        }
    };
    let display = matches!(s.behind, Behind::VmDisplay { .. });
    let mut screen = if display {
        Screen::new(720, 400, 9)
    } else {
        Screen::new(744, 400, 8)
    };
    screen.write(&first);
    let challenge = {
        let mut c = [0u8; 16];
        rand::RngCore::fill_bytes(&mut rand::rng(), &mut c);
        c
    };
    let mut rfb = rfb::Rfb::new(&shown.name, password, challenge);
    if !sock.send(rfb::VERSION).await {
        return Outcome::default();
    }
    let mut ctrl = false;
    while let Some(data) = sock.recv().await {
        let step = rfb.input(&data, &screen);
        if !sock.send(&step.send).await || step.close.is_some() {
            break;
        }
        let mut exit = false;
        for ev in step.events {
            let rfb::Event::Key { down, keysym } = ev else {
                continue;
            };
            if matches!(keysym, 0xffe3 | 0xffe4) {
                ctrl = down;
                continue;
            }
            if !down {
                continue;
            }
            let Some(keys) = keysym_bytes(keysym, ctrl) else {
                continue;
            };
            set_uptime(state, s, &mut term);
            let actions = term.input(&keys);
            let (out, ended) = act(&mut term, actions, state, wire).await;
            screen.write(&out);
            if ended {
                if matches!(s.behind, Behind::NodeShell { .. }) {
                    exit = true;
                } else {
                    // A guest's getty comes back.
                    let facts = term.facts().clone();
                    let (t, again) = Terminal::guest(facts, "");
                    term = t;
                    screen.write(&again);
                }
            }
        }
        if !sock.send(&rfb.update(&mut screen)).await || exit {
            break;
        }
    }
    Outcome::default()
}

/// What a key typed sends to a terminal (an X keysym), with Ctrl held
/// or not.
fn keysym_bytes(keysym: u32, ctrl: bool) -> Option<Vec<u8>> {
    let b = match keysym {
        0x20..=0x7e => {
            let c = u8::try_from(keysym).ok()?;
            if ctrl && c.is_ascii_alphabetic() {
                return Some(vec![c.to_ascii_lowercase() & 0x1f]);
            }
            vec![c]
        }
        0xff0d | 0xff8d => vec![b'\r'],
        0xff08 => vec![0x7f],
        0xff09 => vec![b'\t'],
        0xff1b => vec![0x1b],
        0xff51 => b"\x1b[D".to_vec(),
        0xff52 => b"\x1b[A".to_vec(),
        0xff53 => b"\x1b[C".to_vec(),
        0xff54 => b"\x1b[B".to_vec(),
        0xffff => b"\x1b[3~".to_vec(),
        _ => return None,
    };
    Some(b)
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[rstest]
    #[case(0x61, false, Some(b"a".to_vec()))]
    #[case(0x63, true, Some(vec![3]))]
    #[case(0xff0d, false, Some(b"\r".to_vec()))]
    #[case(0xff08, false, Some(vec![0x7f]))]
    #[case(0xffe1, false, None)]
    fn keys_become_a_terminals_bytes(
        #[case] keysym: u32,
        #[case] ctrl: bool,
        #[case] want: Option<Vec<u8>>,
    ) {
        assert_eq!(keysym_bytes(keysym, ctrl), want);
    }

    #[rstest]
    #[case(3_600 * 5 + 60 * 7, " 00:00:00 up  5:07,  1 user,  load average: 0.00, 0.00, 0.00")]
    #[case(86_400 + 120, " 00:00:00 up 1 day, 2 min,  1 user,  load average: 0.00, 0.00, 0.00")]
    fn uptime_reads_as_procps_prints_it(#[case] up: i64, #[case] want: &str) {
        let now = 86_400 * 20_000;
        assert_eq!(uptime_line(now, now - up), want);
    }
}
