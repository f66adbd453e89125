//! The access log: one line per request, as pveproxy writes
//! `/var/log/pveproxy/access.log` (pve-http-server's `log_request`, the
//! common log format without referrer and agent):
//!
//! ```text
//! 127.0.0.1 - root@pam [27/11/2026:10:45:01 +0000] "GET /api2/json/version HTTP/1.1" 200 86
//! ```
//!
//! The peer, the user or token that authenticated (`-` before
//! authentication), the time, the request line, the status and the
//! length of the answer's body.
//!
//! A request only appends its line to a buffer in memory (one short
//! lock, no allocation once the buffer has grown); a thread of the log's
//! own writes the buffer out every [`FLUSH_EVERY`], or sooner once it
//! holds [`FLUSH_AT`] bytes, so no request waits on the terminal or the
//! disk. Should the writer fall [`MAX_BUFFERED`] bytes behind, new lines
//! are counted and dropped instead of holding the memory, and a line
//! says how many were lost.

use std::io::Write;
use std::net::IpAddr;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How often the writer thread writes what was buffered.
pub const FLUSH_EVERY: Duration = Duration::from_millis(200);
/// How much makes the writer thread write before its time.
pub const FLUSH_AT: usize = 64 * 1024;
/// How far the writer may fall behind before lines are dropped.
pub const MAX_BUFFERED: usize = 16 * 1024 * 1024;

/// A request as the log line shows it.
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    /// The client's address (`-` when unknown).
    pub peer: Option<IpAddr>,
    /// Who authenticated: `user@realm` or `user@realm!token`.
    pub user: Option<&'a str>,
    /// The method.
    pub method: &'a str,
    /// The path and query as sent.
    pub uri: &'a str,
    /// `HTTP/1.1`, `HTTP/1.0`, ...
    pub version: &'a str,
    /// The status sent.
    pub status: u16,
    /// The length of the body sent, if known.
    pub length: Option<u64>,
}

/// The shared access log (cheap to clone). The last clone dropped writes
/// what is left and ends the writer thread.
#[derive(Clone)]
pub struct AccessLog {
    inner: Arc<Shared>,
    _owner: Arc<Owner>,
}

impl std::fmt::Debug for AccessLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AccessLog")
    }
}

struct Shared {
    buf: Mutex<Buffer>,
    wake: Condvar,
}

#[derive(Default)]
struct Buffer {
    lines: Vec<u8>,
    dropped: u64,
    closed: bool,
    /// How many times the writer took the buffer, and which of those
    /// takes it has written out (for [`AccessLog::flush`]).
    taken: u64,
    written: u64,
}

/// Ends the writer thread when the last [`AccessLog`] goes.
struct Owner {
    inner: Arc<Shared>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Drop for Owner {
    fn drop(&mut self) {
        lock(&self.inner.buf).closed = true;
        self.inner.wake.notify_all();
        if let Some(t) = lock(&self.thread).take() {
            let _ = t.join();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl AccessLog {
    /// A log written to `out` by a thread of its own.
    ///
    /// # Errors
    /// When the thread cannot be started.
    pub fn to_writer(out: Box<dyn Write + Send>) -> std::io::Result<Self> {
        let inner = Arc::new(Shared {
            buf: Mutex::new(Buffer::default()),
            wake: Condvar::new(),
        });
        let shared = inner.clone();
        let thread = std::thread::Builder::new()
            .name("access-log".into())
            .spawn(move || writer(&shared, out))?;
        Ok(Self {
            _owner: Arc::new(Owner {
                inner: inner.clone(),
                thread: Mutex::new(Some(thread)),
            }),
            inner,
        })
    }

    /// A log to the standard output.
    ///
    /// # Errors
    /// When the thread cannot be started.
    pub fn stdout() -> std::io::Result<Self> {
        Self::to_writer(Box::new(std::io::stdout()))
    }

    /// A log appended to the file at `path` (created if missing).
    ///
    /// # Errors
    /// When the file cannot be opened or the thread started.
    pub fn file(path: &std::path::Path) -> std::io::Result<Self> {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Self::to_writer(Box::new(f))
    }

    /// Appends one request's line (the request path: no I/O). The line
    /// is written in a buffer of the thread's own; the log's lock is held
    /// only to copy it in, so that the runtime's threads seldom meet there.
    pub fn record(&self, line: &Line<'_>) {
        /// The thread's line, and its date stamp with the second it is
        /// for (`[dd/mm/yyyy:HH:MM:SS +0000]`, made once a second).
        #[derive(Default)]
        struct Scratch {
            line: Vec<u8>,
            second: i64,
            stamp: String,
        }
        thread_local! {
            static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0));
        SCRATCH.with_borrow_mut(|s| {
            if s.second != now || s.stamp.is_empty() {
                s.second = now;
                s.stamp = stamp(now);
            }
            s.line.clear();
            format_line(&mut s.line, &s.stamp, line);
            let mut b = lock(&self.inner.buf);
            if b.lines.len() >= MAX_BUFFERED {
                b.dropped += 1;
                return;
            }
            b.lines.extend_from_slice(&s.line);
            let full = b.lines.len() >= FLUSH_AT;
            drop(b);
            if full {
                self.inner.wake.notify_all();
            }
        });
    }

    /// Waits until every line recorded so far is written out.
    pub fn flush(&self) {
        let mut b = lock(&self.inner.buf);
        if b.lines.is_empty() && b.dropped == 0 {
            return;
        }
        // The writer's next take holds every line recorded so far.
        let target = b.taken + 1;
        self.inner.wake.notify_all();
        while b.written < target && !b.closed {
            b = self
                .inner
                .wake
                .wait_timeout(b, FLUSH_EVERY)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

/// `[27/11/2026:10:45:01 +0000]`: pveproxy's `%d/%m/%Y:%H:%M:%S %z`, in
/// UTC.
fn stamp(epoch: i64) -> String {
    let (y, mo, d, h, mi, s, _) = crate::clock::civil(epoch);
    format!("[{d:02}/{mo:02}/{y:04}:{h:02}:{mi:02}:{s:02} +0000]")
}

fn format_line(out: &mut Vec<u8>, stamp: &str, l: &Line<'_>) {
    let mut n = itoa::Buffer::new();
    match l.peer {
        // An IPv4 address (loopback, most of all) without the
        // formatting machinery.
        Some(IpAddr::V4(ip)) => {
            for (i, octet) in ip.octets().into_iter().enumerate() {
                if i > 0 {
                    out.push(b'.');
                }
                out.extend_from_slice(n.format(octet).as_bytes());
            }
        }
        Some(ip) => {
            let _ = write!(out, "{ip}");
        }
        None => out.push(b'-'),
    }
    out.extend_from_slice(b" - ");
    out.extend_from_slice(l.user.unwrap_or("-").as_bytes());
    out.push(b' ');
    out.extend_from_slice(stamp.as_bytes());
    out.extend_from_slice(b" \"");
    out.extend_from_slice(l.method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(l.uri.as_bytes());
    out.push(b' ');
    out.extend_from_slice(l.version.as_bytes());
    out.extend_from_slice(b"\" ");
    out.extend_from_slice(n.format(l.status).as_bytes());
    out.push(b' ');
    match l.length {
        Some(len) => out.extend_from_slice(n.format(len).as_bytes()),
        None => out.push(b'-'),
    }
    out.push(b'\n');
}

/// The writer thread: takes the buffer whole (leaving the request path
/// an empty one with the same capacity) and writes it.
fn writer(shared: &Shared, mut out: Box<dyn Write + Send>) {
    let mut spare: Vec<u8> = Vec::new();
    loop {
        let (closed, dropped, take) = {
            let mut b = lock(&shared.buf);
            if b.lines.is_empty() && b.dropped == 0 && !b.closed {
                b = shared
                    .wake
                    .wait_timeout(b, FLUSH_EVERY)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            spare.clear();
            std::mem::swap(&mut b.lines, &mut spare);
            b.taken += 1;
            (b.closed, std::mem::take(&mut b.dropped), b.taken)
        };
        if !spare.is_empty() {
            let _ = out.write_all(&spare);
        }
        if dropped > 0 {
            let _ = writeln!(
                out,
                "fake-pve: {dropped} access log lines dropped (the log's output did not keep up)"
            );
        }
        let _ = out.flush();
        {
            let mut b = lock(&shared.buf);
            b.written = take;
        }
        shared.wake.notify_all();
        if closed {
            return;
        }
        // Gives the request path time to fill the buffer rather than
        // waking for every line.
        if spare.len() < FLUSH_AT {
            let b = lock(&shared.buf);
            if b.lines.len() < FLUSH_AT && !b.closed {
                let _ = shared.wake.wait_timeout(b, FLUSH_EVERY);
            }
        }
        // Keeps a large buffer from staying allocated after a burst.
        if spare.capacity() > 4 * FLUSH_AT {
            spare = Vec::with_capacity(FLUSH_AT);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An output the tests read back.
    #[derive(Clone, Default)]
    pub(crate) struct Sink(pub(crate) Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("in the test").extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn line(user: Option<&str>, status: u16) -> Line<'_> {
        Line {
            peer: Some("127.0.0.1".parse().expect("in the test")),
            user,
            method: "GET",
            uri: "/api2/json/version?x=1",
            version: "HTTP/1.1",
            status,
            length: Some(86),
        }
    }

    #[test]
    fn a_line_is_pveproxys_common_log_format() {
        let mut out = Vec::new();
        format_line(
            &mut out,
            &stamp(1_795_344_301),
            &line(Some("root@pam"), 200),
        );
        assert_eq!(
            String::from_utf8(out).expect("in the test"),
            "127.0.0.1 - root@pam [22/11/2026:10:45:01 +0000] \"GET /api2/json/version?x=1 HTTP/1.1\" 200 86\n"
        );
        let mut out = Vec::new();
        let mut l = line(None, 401);
        l.peer = None;
        l.length = None;
        format_line(&mut out, &stamp(0), &l);
        assert_eq!(
            String::from_utf8(out).expect("in the test"),
            "- - - [01/01/1970:00:00:00 +0000] \"GET /api2/json/version?x=1 HTTP/1.1\" 401 -\n"
        );
    }

    #[rstest::rstest]
    #[case("10.0.255.7", "10.0.255.7 - ")]
    #[case("0.0.0.0", "0.0.0.0 - ")]
    #[case("::1", "::1 - ")]
    #[case("fe80::1:2", "fe80::1:2 - ")]
    #[case("::ffff:192.0.2.1", "::ffff:192.0.2.1 - ")]
    fn a_peer_is_written_as_its_address_is_spelled(#[case] peer: &str, #[case] start: &str) {
        let mut out = Vec::new();
        let mut l = line(None, 200);
        l.peer = Some(peer.parse().expect("in the test"));
        format_line(&mut out, &stamp(0), &l);
        let out = String::from_utf8(out).expect("in the test");
        assert!(out.starts_with(start), "{out}");
    }

    #[test]
    fn lines_reach_the_output_in_order_and_flush_waits_for_them() {
        let sink = Sink::default();
        let log = AccessLog::to_writer(Box::new(sink.clone())).expect("in the test");
        for status in 200..300 {
            log.record(&line(Some("u@pve!t"), status));
        }
        log.flush();
        let text =
            String::from_utf8(sink.0.lock().expect("in the test").clone()).expect("in the test");
        let statuses: Vec<u16> = text
            .lines()
            .map(|l| {
                l.split(' ')
                    .nth_back(1)
                    .expect("in the test")
                    .parse()
                    .expect("in the test")
            })
            .collect();
        assert_eq!(statuses, (200..300).collect::<Vec<_>>());
        assert!(text.lines().all(|l| l.contains(" - u@pve!t [")));
    }

    #[test]
    fn dropping_the_last_handle_writes_what_is_left() {
        let sink = Sink::default();
        let log = AccessLog::to_writer(Box::new(sink.clone())).expect("in the test");
        let other = log.clone();
        other.record(&line(None, 204));
        drop(log);
        drop(other);
        let text =
            String::from_utf8(sink.0.lock().expect("in the test").clone()).expect("in the test");
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.ends_with("\" 204 86\n"));
    }

    #[test]
    fn a_writer_that_falls_behind_costs_dropped_lines_not_memory() {
        let shared = Shared {
            buf: Mutex::new(Buffer::default()),
            wake: Condvar::new(),
        };
        // No writer thread: the buffer only grows, up to its bound.
        let log = AccessLog {
            inner: Arc::new(shared),
            _owner: Arc::new(Owner {
                inner: Arc::new(Shared {
                    buf: Mutex::new(Buffer::default()),
                    wake: Condvar::new(),
                }),
                thread: Mutex::new(None),
            }),
        };
        let n = MAX_BUFFERED / 80 + 1000;
        for _ in 0..n {
            log.record(&line(Some("root@pam"), 200));
        }
        let b = lock(&log.inner.buf);
        assert!(b.lines.len() < MAX_BUFFERED + 200);
        assert!(b.dropped > 0);
        assert_eq!(
            b.lines.iter().filter(|c| **c == b'\n').count() as u64 + b.dropped,
            n as u64
        );
    }
}
