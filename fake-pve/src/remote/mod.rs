//! Remote migration over the network: a guest moved from this fake-pve
//! to another PVE (or fake-pve) cluster, as `qm remote-migrate` and `pct
//! remote-migrate` move it, and the tunnel's target side.
//!
//! - [`client`]: the target's API over HTTPS with a pinned fingerprint,
//!   and the websockets of the tunnel (`proxmox-websocket-tunnel`);
//! - [`migrate`]: `remote_migrate_vm`'s calls to the target before its
//!   task starts, and the `qmigrate`/`vzmigrate` task itself, whose log
//!   grows as it goes;
//! - [`serve`]: `mtunnelwebsocket` on the target: the tunnel's commands
//!   answered by the model (`crate::model::mtunnel`), the data sockets'
//!   streams taken.
//!
//! What the migration does to the guests (here and there) is the
//! model's; this module moves its commands and data.

pub(crate) mod client;
pub(crate) mod migrate;
pub(crate) mod serve;
pub(crate) mod tunnel;

pub(crate) use migrate::{Request, remote_migrate};

use crate::state::State;

/// Runs `f` on the model now, and keeps its change when the world is
/// kept in a data directory: these changes come from no request the
/// journal holds (the tasks and tunnels of a migration), so a snapshot is
/// written with them.
pub(crate) fn durable<R>(state: &State, f: impl FnOnce(&mut crate::model::Cluster, i64) -> R) -> R {
    let now_ms = state.clock().now_millis();
    let Some(store) = state.store().cloned() else {
        let r = state.at(now_ms, |c| f(c, now_ms));
        state.changed();
        return r;
    };
    let r = crate::persist::blocking(|| {
        let _gate = store.gate();
        let r = state.at(now_ms, |c| f(c, now_ms));
        if let Err(e) = store.write_snapshot(state.snapshot()) {
            tracing::error!("snapshot failed: {e}");
        }
        r
    });
    state.changed();
    r
}

/// `uri_escape` (URI::Escape): everything but unreserved characters
/// percent-encoded.
pub(crate) fn uri_escape(s: &str) -> String {
    const SET: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~');
    percent_encoding::utf8_percent_encode(s, SET).to_string()
}

/// PVE's `strftime("%F %H:%M:%S")` of an epoch time (the node's time
/// zone is UTC here).
pub(crate) fn stamp(epoch: i64) -> String {
    let (y, m, d, h, mi, s, _) = crate::clock::civil(epoch);
    format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}")
}

/// `render_bytes($v, 1)`: `2.0 GiB`.
pub(crate) fn render_bytes(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    #[allow(clippy::cast_precision_loss)]
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    format!("{v:.1} {}", units[i])
}

/// A task's log: what a running worker prints, added as it goes.
#[derive(Clone)]
pub(crate) struct TaskLog {
    state: State,
    upid: String,
}

impl TaskLog {
    pub(crate) fn new(state: State, upid: String) -> Self {
        Self { state, upid }
    }

    /// The clock now, epoch milliseconds.
    pub(crate) fn now_ms(&self) -> i64 {
        self.state.clock().now_millis()
    }

    /// Lines printed as they are (a tool's output, the tunnel's).
    pub(crate) fn raw(&self, lines: impl IntoIterator<Item = String>) {
        let lines: Vec<String> = lines.into_iter().collect();
        if lines.is_empty() {
            return;
        }
        let now_ms = self.now_ms();
        let upid = self.upid.clone();
        self.state.at(now_ms, |c| c.append_task_log(&upid, lines));
        self.state.changed();
    }

    /// `AbstractMigrate::log('info', ...)`: each line after the time
    /// stamp; nothing for an empty message.
    pub(crate) fn info(&self, msg: &str) {
        self.logged(msg, false);
    }

    /// `AbstractMigrate::log('err', ...)`: each line after the time
    /// stamp and `ERROR:`.
    pub(crate) fn err(&self, msg: &str) {
        self.logged(msg, true);
    }

    fn logged(&self, msg: &str, err: bool) {
        let msg = msg.strip_suffix('\n').unwrap_or(msg);
        if msg.is_empty() {
            return;
        }
        let mut prefix = stamp(self.now_ms().div_euclid(1000));
        if err {
            prefix.push_str(" ERROR:");
        }
        let mut lines: Vec<&str> = msg.split('\n').collect();
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        self.raw(lines.into_iter().map(|l| format!("{prefix} {l}")));
    }

    /// Ends the task now: `TASK OK`, or `TASK ERROR: <error>`.
    pub(crate) fn end(&self, kind: &str, id: &str, error: Option<String>) {
        let mut w = crate::model::Worker::new(kind, id);
        if let Some(e) = error {
            w = w.fail(e);
        }
        let upid = self.upid.clone();
        durable(&self.state, |c, now_ms| {
            let _ = c.replan_task(&upid, now_ms, w, now_ms);
        });
    }
}
