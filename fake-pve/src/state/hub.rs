//! What the dashboard's event streams wait on: a world version that
//! moves when the world changes, and the request log, a small ring of
//! the latest requests. Both cost next to nothing while no dashboard
//! is connected: [`Hub::changed`] is one atomic load then, and a
//! request is recorded by one short lock that reuses the oldest entry's
//! buffer (no allocation once the ring is full).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use http::Method;
use serde::Serialize;
use tokio::sync::Notify;

/// How many requests the log keeps.
pub const REQUEST_LOG_LEN: usize = 200;

/// The world version, the request log and the dashboards waiting on
/// them (one per server, in [`crate::State`]).
#[derive(Debug, Default)]
pub struct Hub {
    subscribers: AtomicUsize,
    world: AtomicU64,
    closed: AtomicBool,
    notify: Notify,
    requests: Mutex<RequestLog>,
}

/// One request of the log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoggedRequest {
    /// Its number, counting from 1 since the start.
    pub seq: u64,
    /// When it was answered (wall clock, epoch milliseconds).
    pub time_ms: i64,
    /// The method.
    pub method: String,
    /// The path (without the query).
    pub path: String,
    /// The status answered (0: the connection was dropped).
    pub status: u16,
    /// How long the answer took, milliseconds.
    pub ms: f64,
    /// Whether the dashboard itself made it.
    pub dashboard: bool,
}

#[derive(Debug, Default)]
struct RequestLog {
    entries: VecDeque<LoggedRequest>,
    seq: u64,
}

/// A connected dashboard; it counts as one until dropped.
#[derive(Debug)]
pub struct Subscription<'a>(&'a Hub);

impl Drop for Subscription<'_> {
    fn drop(&mut self) {
        self.0.subscribers.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Hub {
    /// Marks the world changed and wakes the dashboards; nothing but one
    /// atomic load while none is connected.
    pub fn changed(&self) {
        if self.subscribers.load(Ordering::Acquire) > 0 {
            self.world.fetch_add(1, Ordering::AcqRel);
            self.notify.notify_waiters();
        }
    }

    /// The world version (it moves only while a dashboard is connected).
    pub fn world(&self) -> u64 {
        self.world.load(Ordering::Acquire)
    }

    /// How many dashboards are connected.
    pub fn subscribers(&self) -> usize {
        self.subscribers.load(Ordering::Acquire)
    }

    /// Counts a dashboard in for as long as the subscription lives.
    pub fn subscribe(&self) -> Subscription<'_> {
        self.subscribers.fetch_add(1, Ordering::AcqRel);
        Subscription(self)
    }

    /// What wakes a waiting dashboard: a change, a request, the end.
    pub fn notified(&self) -> tokio::sync::futures::Notified<'_> {
        self.notify.notified()
    }

    /// Ends every event stream (the server stops).
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.notify.notify_waiters();
    }

    /// Whether the server stops.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    fn log(&self) -> std::sync::MutexGuard<'_, RequestLog> {
        self.requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records an answered request.
    pub fn record(
        &self,
        method: &Method,
        path: &str,
        status: u16,
        took: Duration,
        dashboard: bool,
    ) {
        let time_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        {
            let mut log = self.log();
            log.seq += 1;
            let seq = log.seq;
            let mut entry = if log.entries.len() >= REQUEST_LOG_LEN {
                log.entries.pop_front().unwrap_or_else(empty)
            } else {
                empty()
            };
            entry.seq = seq;
            entry.time_ms = time_ms;
            entry.method.clear();
            entry.method.push_str(method.as_str());
            entry.path.clear();
            entry.path.push_str(path);
            entry.status = status;
            entry.ms = took.as_secs_f64() * 1000.0;
            entry.dashboard = dashboard;
            log.entries.push_back(entry);
        }
        if self.subscribers.load(Ordering::Acquire) > 0 {
            self.notify.notify_waiters();
        }
    }

    /// The number of the latest request recorded.
    pub fn last_request(&self) -> u64 {
        self.log().seq
    }

    /// The requests of the log after number `seq`, oldest first.
    pub fn requests_after(&self, seq: u64) -> Vec<LoggedRequest> {
        self.log()
            .entries
            .iter()
            .filter(|e| e.seq > seq)
            .cloned()
            .collect()
    }
}

fn empty() -> LoggedRequest {
    LoggedRequest {
        seq: 0,
        time_ms: 0,
        method: String::new(),
        path: String::new(),
        status: 0,
        ms: 0.0,
        dashboard: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_count_only_while_a_dashboard_listens() {
        let hub = Hub::default();
        hub.changed();
        assert_eq!(hub.world(), 0);
        let sub = hub.subscribe();
        assert_eq!(hub.subscribers(), 1);
        hub.changed();
        hub.changed();
        assert_eq!(hub.world(), 2);
        drop(sub);
        assert_eq!(hub.subscribers(), 0);
        hub.changed();
        assert_eq!(hub.world(), 2);
    }

    #[test]
    fn the_request_log_keeps_the_latest() {
        let hub = Hub::default();
        let n = REQUEST_LOG_LEN + 25;
        for i in 0..n {
            let path = format!("/api2/json/nodes/pve/qemu/{i}");
            let status = if i % 2 == 0 { 200 } else { 500 };
            hub.record(
                &Method::GET,
                &path,
                status,
                Duration::from_micros(1500),
                i == 3,
            );
        }
        assert_eq!(hub.last_request(), n as u64);
        let all = hub.requests_after(0);
        assert_eq!(all.len(), REQUEST_LOG_LEN);
        let first = &all[0];
        assert_eq!(first.seq, 26);
        assert_eq!(first.path, "/api2/json/nodes/pve/qemu/25");
        assert_eq!((first.status, first.method.as_str()), (500, "GET"));
        assert!((first.ms - 1.5).abs() < 1e-9, "{}", first.ms);
        assert!(all.iter().all(|e| !e.dashboard));
        let tail = hub.requests_after(n as u64 - 2);
        assert_eq!(
            tail.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [n as u64 - 1, n as u64]
        );
    }

    #[tokio::test]
    async fn close_wakes_the_streams() {
        let hub = Hub::default();
        let _sub = hub.subscribe();
        let woken = hub.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        hub.close();
        tokio::time::timeout(Duration::from_secs(5), woken)
            .await
            .expect("woken");
        assert!(hub.is_closed());
    }
}
