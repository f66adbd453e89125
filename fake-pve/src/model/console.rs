//! Consoles: the VNC, terminal and SPICE proxies PVE starts for a
//! guest's console or a node's shell (qemu-server's and pve-container's
//! `vncproxy`, `termproxy` and `spiceproxy`, pve-manager `Nodes.pm`'s
//! `vncshell`, `termproxy` and `spiceshell`), and the ports they hold
//! while they wait for their one connection (pve-common
//! `next_unused_port`).
//!
//! A proxy is a worker task that listens on its port: nobody connecting
//! within its timeout ends the task (and frees the port) as the program
//! behind it ends. A port just handed out stays reserved for five
//! seconds, as PVE's `/var/tmp/pve-reserved-ports` keeps it.

use super::{Error, Result, Worker};

/// The ports of VNC and terminal proxies (`next_vnc_port`): 5900 up to,
/// not including, 6000.
pub const VNC_PORTS: (u16, u16) = (5900, 6000);
/// The ports of SPICE terminals (`spice_port_range`): 61000 up to, not
/// including, 61999.
pub const SPICE_PORTS: (u16, u16) = (61000, 61999);
/// How long a port handed out stays reserved, milliseconds.
const RESERVED_MS: i64 = 5_000;
/// How long `vncterm`, `termproxy` and `qm vncproxy` wait for their
/// connection, milliseconds.
pub const VNC_TIMEOUT_MS: u64 = 10_000;
/// How long `spiceterm` waits for its connection, milliseconds.
pub const SPICE_TIMEOUT_MS: u64 = 40_000;

/// What listens on a proxy's port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Program {
    /// `qm vncproxy` behind a TLS (or, for a websocket, plain loopback)
    /// listener of the worker itself: the VM's VNC display.
    QmVncProxy,
    /// `vncterm` running a terminal (a container's console, a node's
    /// shell, a VM's serial port).
    Vncterm,
    /// `termproxy` running a terminal for xterm.js.
    Termproxy,
    /// `spiceterm` running a terminal for a SPICE client.
    Spiceterm,
}

impl Program {
    /// How long it waits for its connection.
    pub fn timeout_ms(self) -> u64 {
        match self {
            Program::Spiceterm => SPICE_TIMEOUT_MS,
            _ => VNC_TIMEOUT_MS,
        }
    }
}

/// What a console shows: the program at the end of a proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Behind {
    /// A VM's display (`qm vncproxy`).
    VmDisplay {
        /// The VM.
        vmid: u32,
    },
    /// A VM's serial port (`qm terminal`).
    VmSerial {
        /// The VM.
        vmid: u32,
        /// The serial port asked (`serialN`), else the first configured.
        iface: Option<String>,
    },
    /// A container's console (`lxc-console` under `dtach`).
    CtConsole {
        /// The container.
        vmid: u32,
    },
    /// A node's shell: `login -f root` (`root`), or `/bin/login` asking
    /// who logs in.
    NodeShell {
        /// The node.
        node: String,
        /// Whether root is logged in already.
        root: bool,
    },
}

/// One proxy waiting on its port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The node it listens on.
    pub node: String,
    /// Its port.
    pub port: u16,
    /// What runs behind it.
    pub program: Program,
    /// The ACL path its ticket is good for (`/vms/100`, `/nodes/pve`).
    pub authpath: String,
    /// Whom it was opened for.
    pub user: String,
    /// Its task.
    pub upid: String,
    /// When it gives up waiting, epoch milliseconds.
    pub until_ms: i64,
    /// What it shows.
    pub behind: Behind,
    /// The password of the VNC protocol (`websocket`, or a VM's display),
    /// none when its ticket is all it asks.
    pub password: Option<String>,
    /// Whether its one connection was made.
    pub connected: bool,
    /// The command line of a `termproxy` (what its task's error names).
    pub command: String,
}

/// The proxies of the cluster and the ports they hold.
#[derive(Debug, Clone, Default)]
pub struct Consoles {
    sessions: Vec<Session>,
    /// Ports handed out: node, port and when.
    reserved: Vec<(String, u16, i64)>,
}

impl Consoles {
    /// Forgets the proxies that ended and the reservations that expired
    /// by `now_ms`.
    fn forget(&mut self, now_ms: i64) {
        self.sessions.retain(|s| s.until_ms > now_ms);
        self.reserved.retain(|(_, _, at)| at + RESERVED_MS > now_ms);
    }

    /// The first port of `range` on `node` that no proxy holds and none
    /// was handed out within the last five seconds; reserved from now.
    ///
    /// # Errors
    /// `unable to find free port (<start>-<end>)` when all are taken.
    pub fn next_port(&mut self, node: &str, range: (u16, u16), now_ms: i64) -> Result<u16> {
        self.forget(now_ms);
        let taken = |p: u16| {
            self.sessions.iter().any(|s| s.node == node && s.port == p)
                || self.reserved.iter().any(|(n, q, _)| n == node && *q == p)
        };
        let port = (range.0..range.1).find(|p| !taken(*p)).ok_or_else(|| {
            Error::failed(format!(
                "unable to find free port ({}-{})",
                range.0, range.1
            ))
        })?;
        self.reserved.push((node.to_string(), port, now_ms));
        Ok(port)
    }

    /// Records a proxy that waits from `now_ms` for its program's timeout.
    pub fn open(&mut self, mut session: Session, now_ms: i64) {
        self.forget(now_ms);
        let timeout = i64::try_from(session.program.timeout_ms()).unwrap_or(i64::MAX);
        session.until_ms = now_ms.saturating_add(timeout);
        self.sessions.push(session);
    }

    /// Takes the one connection the proxy on `port` of `node` allows at
    /// `now_ms`: the proxy, now held until [`Consoles::close`]. None when
    /// nothing listens there (no proxy, gone, or connected already).
    pub fn connect(&mut self, node: &str, port: u16, now_ms: i64) -> Option<Session> {
        self.forget(now_ms);
        let s = self
            .sessions
            .iter_mut()
            .find(|s| s.node == node && s.port == port && !s.connected)?;
        s.connected = true;
        s.until_ms = i64::MAX;
        Some(s.clone())
    }

    /// Ends the connected proxy of task `upid`: its port is free.
    pub fn close(&mut self, upid: &str) {
        self.sessions.retain(|s| s.upid != upid);
    }

    /// The proxy listening on `port` of `node` at `now_ms`.
    #[cfg(test)]
    pub fn session(&self, node: &str, port: u16, now_ms: i64) -> Option<&Session> {
        self.sessions
            .iter()
            .find(|s| s.node == node && s.port == port && s.until_ms > now_ms)
    }
}

/// A VNC password as `generate_vnc_password` draws it: eight characters
/// from `!` to `` ` ``, taken from `draw` (64 random bits per call).
pub fn vnc_password(mut draw: impl FnMut() -> u64) -> String {
    const FIRST: u8 = b'!';
    const SPAN: u64 = (b'`' - b'!' + 1) as u64;
    let mut bits = draw();
    (0..8)
        .map(|i| {
            if i == 4 {
                bits = draw();
            }
            let c = FIRST + u8::try_from(bits % SPAN).unwrap_or(0);
            bits /= SPAN;
            char::from(c)
        })
        .collect()
}

/// The worker of a proxy that nobody connects to: what its task logs and
/// how it ends once the program gives up waiting.
///
/// - `qm vncproxy`'s own listener dies with `connection timed out`;
/// - `termproxy` prints `failed waiting for client: timed out` and exits
///   1, which `run_command` turns into the task's error;
/// - `vncterm` and `spiceterm` exit, and their workers end without an
///   error (the node shell's and spiceterm's log the failure to syslog).
pub fn idle_worker(kind: &str, id: &str, program: Program, command: &str) -> Worker {
    let worker = Worker::new(kind, id);
    match program {
        Program::QmVncProxy => worker.fail("connection timed out"),
        Program::Termproxy => worker
            .log("failed waiting for client: timed out")
            .fail(format!("command '{command}' failed: exit code 1")),
        Program::Vncterm | Program::Spiceterm => worker,
    }
}

/// The command line `termproxy` runs with (`Nodes.pm`, `API2/Qemu.pm`,
/// `API2/LXC.pm`): the port, the ACL path and privilege, and the
/// terminal command after `--`. The ticket comes in on descriptor 3.
pub fn termproxy_command(port: u16, authpath: &str, perm: &str, terminal: &[&str]) -> String {
    format!(
        "/usr/bin/termproxy {port} --path {authpath} --perm {perm} --vncticket-endpoint --verify-port --ticket-fd 3 -- {}",
        terminal.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    fn session(node: &str, port: u16) -> Session {
        Session {
            node: node.into(),
            port,
            program: Program::Termproxy,
            authpath: "/nodes/pve".into(),
            user: "root@pam".into(),
            upid: "UPID:x".into(),
            until_ms: 0,
            behind: Behind::NodeShell {
                node: node.into(),
                root: true,
            },
            password: None,
            connected: false,
            command: String::new(),
        }
    }

    #[test]
    fn ports_go_to_the_first_free_one_and_come_back_after_the_timeout() {
        let mut c = Consoles::default();
        let p = c.next_port("pve", VNC_PORTS, 0).expect("present");
        assert_eq!(p, 5900);
        c.open(session("pve", p), 0);
        // Another node has its own ports.
        assert_eq!(c.next_port("pve2", VNC_PORTS, 0).expect("present"), 5900);
        assert_eq!(c.next_port("pve", VNC_PORTS, 1_000).expect("present"), 5901);
        // 5901 was only reserved: free again after five seconds; 5900 is
        // held until its proxy gives up at 10 s.
        assert_eq!(c.next_port("pve", VNC_PORTS, 7_000).expect("present"), 5901);
        assert!(c.session("pve", 5900, 9_999).is_some());
        assert!(c.session("pve", 5900, 10_000).is_none());
        assert_eq!(
            c.next_port("pve", VNC_PORTS, 20_000).expect("present"),
            5900
        );
    }

    #[test]
    fn a_proxy_takes_one_connection_and_holds_its_port_until_it_closes() {
        let mut c = Consoles::default();
        let mut s = session("pve", 5900);
        s.upid = "UPID:a".into();
        c.open(s, 0);
        assert!(
            c.connect("pve", 5901, 1_000).is_none(),
            "nothing listens there"
        );
        let got = c.connect("pve", 5900, 1_000).expect("listening");
        assert!(got.connected);
        assert!(
            c.connect("pve", 5900, 2_000).is_none(),
            "one connection only"
        );
        // Past its wait, the connected proxy still holds its port.
        assert_eq!(
            c.next_port("pve", VNC_PORTS, 60_000).expect("present"),
            5901
        );
        c.close("UPID:a");
        assert_eq!(
            c.next_port("pve", VNC_PORTS, 70_000).expect("present"),
            5900
        );
        // A proxy nobody connected to within its wait is gone.
        let mut late = session("pve", 5902);
        late.upid = "UPID:b".into();
        c.open(late, 100_000);
        assert!(c.connect("pve", 5902, 110_000).is_none());
    }

    #[test]
    fn a_full_range_is_refused_as_pve_does() {
        let mut c = Consoles::default();
        for _ in 5900..6000 {
            c.next_port("pve", VNC_PORTS, 0).expect("present");
        }
        assert_eq!(
            c.next_port("pve", VNC_PORTS, 1)
                .expect_err("refused")
                .to_string(),
            "unable to find free port (5900-6000)"
        );
    }

    #[rstest]
    #[case(0)]
    #[case(u64::MAX)]
    #[case(0x1234_5678_9abc_def0)]
    fn vnc_passwords_are_eight_characters_from_bang_to_backtick(#[case] seed: u64) {
        let mut n = seed;
        let pw = vnc_password(|| {
            n = n.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            n
        });
        assert_eq!(pw.len(), 8);
        assert!(pw.bytes().all(|b| (b'!'..=b'`').contains(&b)), "{pw}");
    }

    #[rstest]
    #[case(Program::QmVncProxy, Some("connection timed out"))]
    #[case(
        Program::Termproxy,
        Some("command '/usr/bin/termproxy 5900' failed: exit code 1")
    )]
    #[case(Program::Vncterm, None)]
    #[case(Program::Spiceterm, None)]
    fn an_unused_proxy_ends_as_its_program_does(
        #[case] program: Program,
        #[case] error: Option<&str>,
    ) {
        let w = idle_worker("vncproxy", "100", program, "/usr/bin/termproxy 5900");
        assert_eq!(w.outcome.err().map(|e| e.0).as_deref(), error);
    }
}
