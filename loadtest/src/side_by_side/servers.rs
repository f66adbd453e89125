//! The servers compared, each a process of its own on loopback: started,
//! waited for, logged in to, and measured from `/proc`.

use std::io::Read as _;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio_rustls::TlsConnector;

use super::answers::{first_answer, login};
use super::{Cpu, Options};
use crate::Error;

/// A child process, killed when dropped.
pub struct Process {
    child: Child,
}

impl Process {
    /// Starts `cmd` with its output in `out`, and waits until that
    /// output has a line containing `ready` (30 s at most).
    ///
    /// # Errors
    /// When it cannot start, ends, or is not ready in time.
    pub fn spawn(cmd: Command, out: &Path, ready: &str) -> Result<Self, Error> {
        spawn(cmd, out, ready).map(|child| Self { child })
    }

    /// The processor time it has used so far (all its threads).
    pub fn cpu(&self) -> Option<Cpu> {
        cpu_of(&format!("/proc/{}/stat", self.child.id()))
    }

    /// Its resident memory, bytes.
    pub fn rss(&self) -> Option<u64> {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    }
}

/// The processor time a process has used so far (all its threads), from
/// its `/proc/.../stat` (clock ticks of 1/100 s, Linux's `USER_HZ`).
fn cpu_of(stat: &str) -> Option<Cpu> {
    let s = std::fs::read_to_string(stat).ok()?;
    // The fields after the command's name, which is in parentheses.
    let rest = &s[s.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    // utime and stime are the 14th and 15th fields; `rest` starts at
    // the 3rd.
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(Cpu {
        user: Duration::from_millis(utime * 10),
        system: Duration::from_millis(stime * 10),
    })
}

/// This process's processor time (the load generator's).
pub(super) fn own_cpu() -> Option<Cpu> {
    cpu_of("/proc/self/stat")
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server process and how to reach it.
pub(super) struct Server {
    pub(super) name: String,
    pub(super) process: Process,
    pub(super) addr: SocketAddr,
    pub(super) path: String,
    pub(super) cookie: String,
    pub(super) csrf: String,
    pub(super) node: String,
}

impl Server {
    pub(super) fn rss(&self) -> Option<u64> {
        self.process.rss()
    }

    pub(super) fn cpu(&self) -> Option<Cpu> {
        self.process.cpu()
    }
}

/// The one-VM world of fakepve (fake-pve's is `SCENARIO`).
const FAKEPVE_GUESTS: &str =
    r#"{"guests": [{"vmid": 100, "name": "web", "node": "pve", "status": "running"}]}"#;

/// A free loopback port (bound, then let go).
fn free_port() -> Result<u16, Error> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

/// Starts `cmd` with its output in `out`, and waits until that output
/// has a line containing `ready` (30 s at most).
fn spawn(mut cmd: Command, out: &Path, ready: &str) -> Result<Child, Error> {
    let file = std::fs::File::create(out).map_err(Error::file(out))?;
    let err = file.try_clone()?;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .spawn()
        .map_err(|source| Error::Spawn {
            command: format!("{cmd:?}"),
            source,
        })?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut text = String::new();
        if let Ok(mut f) = std::fs::File::open(out) {
            let _ = f.read_to_string(&mut text);
        }
        if text.contains(ready) {
            return Ok(child);
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(Error::Ended {
                command: format!("{cmd:?}"),
                status,
                output: text,
            });
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            return Err(Error::NotReady {
                command: format!("{cmd:?}"),
                output: text,
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub(super) async fn start_fake_pve(
    connector: &TlsConnector,
    opts: &Options,
    name: &str,
    seed: &str,
    extra: &[&str],
    out: &Path,
) -> Result<Server, Error> {
    let port = free_port()?;
    let mut cmd = Command::new(&opts.fake_pve);
    cmd.args(["--listen", &format!("127.0.0.1:{port}"), "--seed", seed])
        .args(extra)
        .env_remove("RUST_LOG");
    let process = Process::spawn(cmd, out, "  login: root@pam")?;
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let (cookie, csrf) = login(connector, addr, "password").await?;
    Ok(Server {
        name: name.into(),
        process,
        addr,
        path: "/api2/json/nodes/pve/qemu/100/status/current".into(),
        cookie,
        csrf,
        node: "pve".into(),
    })
}

pub(super) async fn start_bare(
    connector: &TlsConnector,
    opts: &Options,
    answer: &Path,
    fake: &Server,
) -> Result<Server, Error> {
    let port = free_port()?;
    let mut cmd = Command::new(&opts.this);
    cmd.args([
        "--serve-bare",
        &answer.display().to_string(),
        "--listen",
        &format!("127.0.0.1:{port}"),
    ]);
    let process = Process::spawn(cmd, &opts.dir.join("bare.out"), "listening on")?;
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    // The bare server answers whatever cookie; a first request shows it
    // serves.
    let s = Server {
        name: "bare axum, same bytes".into(),
        process,
        addr,
        path: fake.path.clone(),
        cookie: fake.cookie.clone(),
        csrf: String::new(),
        node: "pve".into(),
    };
    first_answer(connector, &s).await?;
    Ok(s)
}

pub(super) async fn start_fakepve(
    connector: &TlsConnector,
    opts: &Options,
    exe: &Path,
) -> Result<Server, Error> {
    let guests = opts.dir.join("fakepve-guests.json");
    std::fs::write(&guests, FAKEPVE_GUESTS)?;
    let port = free_port()?;
    let mut cmd = Command::new(exe);
    cmd.arg(&guests).args([
        "--host",
        "127.0.0.1",
        "--port",
        &port.to_string(),
        "--time-scale",
        "0",
    ]);
    let process = Process::spawn(cmd, &opts.dir.join("fakepve.out"), "listening on")?;
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let (cookie, csrf) = login(connector, addr, "secret").await?;
    let s = Server {
        name: "fakepve 0.5 (Python)".into(),
        process,
        addr,
        path: "/api2/json/nodes/pve/qemu/100/status/current".into(),
        cookie,
        csrf,
        node: "pve".into(),
    };
    first_answer(connector, &s).await?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::side_by_side::Row;
    use crate::throughput::Measured;

    #[test]
    fn a_server_s_processor_time_is_read_from_proc() {
        let dir = std::env::temp_dir().join(format!("pve-throughput-cpu-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory");
        let mut cmd = Command::new("sh");
        // Ready at once, then busy for a while, then idle.
        cmd.args([
            "-c",
            "echo ready; i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; echo busy; sleep 30",
        ]);
        let p = Process::spawn(cmd, &dir.join("out"), "ready").expect("it starts");
        let start = p.cpu().expect("its processor time");
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !std::fs::read_to_string(dir.join("out"))
            .unwrap_or_default()
            .contains("busy")
        {
            assert!(std::time::Instant::now() < deadline, "the loop ends");
            std::thread::sleep(Duration::from_millis(20));
        }
        let after = p.cpu().expect("its processor time");
        assert!(after.total() > start.total(), "{start:?} then {after:?}");
        let row = Row {
            name: "sh".into(),
            measured: Measured {
                ok: 1000,
                failed: 0,
                elapsed: Duration::from_secs(1),
            },
            rss: p.rss(),
            cpu: Some(start.until(after)),
            client_cpu: own_cpu(),
            rounds: Vec::new(),
        };
        let us = row.cpu_per_request_us().expect("a figure");
        let spent = start.until(after);
        assert!((us - spent.total().as_secs_f64() * 1000.0).abs() < 1e-6);
        let sys = row.system_per_request_us().expect("a figure");
        assert!((sys - spent.system.as_secs_f64() * 1000.0).abs() < 1e-6);
        assert!(sys <= us);
        // The load generator's own time is read the same way: it grows
        // while this process works.
        assert!(row.client_per_request_us().is_some());
        let mine = own_cpu().expect("this process's processor time");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let mut n = 0u64;
        while own_cpu().is_some_and(|c| c.total() <= mine.total()) {
            assert!(std::time::Instant::now() < deadline, "own time grows");
            n = std::hint::black_box(n.wrapping_add(1));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
