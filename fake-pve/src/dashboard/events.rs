//! `GET /_fake/events`: the dashboard's server-sent events. One task per
//! connected dashboard waits on the [`Hub`](super::Hub) and pushes
//!
//! - `view`: the whole picture ([`super::view`]) when the world has
//!   changed (coalesced over [`COALESCE`]), when a running task's time
//!   has come (the stream wakes then, so that the task ends on the page
//!   without anybody asking), and every [`REFRESH`] (uptimes, the
//!   clock);
//! - `requests`: the requests answered since the last push.
//!
//! The stream ends when the dashboard goes away or the server stops.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use hyper::body::Frame;
use tokio::sync::mpsc;

use crate::model::AuthId;
use crate::state::State;

/// How long a change waits for others before the view is pushed.
pub const COALESCE: Duration = Duration::from_millis(150);
/// How often the view is pushed when nothing happens.
pub const REFRESH: Duration = Duration::from_secs(10);

/// The event stream for `who`, already authenticated.
pub fn stream(state: &State, who: &AuthId) -> Response {
    let (tx, rx) = mpsc::channel(4);
    tokio::spawn(pump(state.clone(), who.to_string(), tx));
    http::Response::builder()
        .header(http::header::CONTENT_TYPE, "text/event-stream")
        .header(http::header::CACHE_CONTROL, "no-cache")
        .header("Server", "pve-api-daemon/3.0")
        .body(Body::new(Events(rx)))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

/// The body of the stream: the events as the pump sends them.
struct Events(mpsc::Receiver<Bytes>);

impl hyper::body::Body for Events {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
    }
}

/// One server-sent event: its name and one line of JSON.
fn event(name: &str, data: &serde_json::Value) -> Bytes {
    Bytes::from(format!("event: {name}\ndata: {data}\n\n"))
}

/// Waits on the hub and pushes events until the dashboard goes away or
/// the server stops.
async fn pump(state: State, user: String, tx: mpsc::Sender<Bytes>) {
    let hub = state.hub();
    let _counted = hub.subscribe();
    if tx
        .send(Bytes::from_static(b"retry: 2000\n\n"))
        .await
        .is_err()
    {
        return;
    }
    let mut sent_world = None;
    let mut sent_request = 0;
    let mut refresh = true;
    loop {
        let woken = hub.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        if hub.is_closed() {
            return;
        }
        let world = hub.world();
        let mut next_end = None;
        if refresh || sent_world != Some(world) {
            let (view, end) = super::view(&state, &user);
            next_end = end;
            if tx.send(event("view", &view)).await.is_err() {
                return;
            }
            sent_world = Some(world);
            refresh = false;
        } else if let Some(end) = state.with(|c| c.tasks().next_end_ms()) {
            next_end = Some(end);
        }
        if hub.last_request() != sent_request {
            let new = hub.requests_after(sent_request);
            if let Some(last) = new.last() {
                sent_request = last.seq;
            }
            let json = serde_json::to_value(&new).unwrap_or_default();
            if tx.send(event("requests", &json)).await.is_err() {
                return;
            }
        }
        let task_due = until(&state, next_end);
        tokio::select! {
            () = &mut woken => tokio::time::sleep(COALESCE).await,
            () = tokio::time::sleep(task_due) => refresh = true,
            () = tokio::time::sleep(REFRESH) => refresh = true,
            () = tx.closed() => return,
        }
    }
}

/// How long until the emulated clock reaches `end_ms` (a manual clock
/// only moves when told to: [`REFRESH`] then).
fn until(state: &State, end_ms: Option<i64>) -> Duration {
    let clock = state.clock();
    let Some(end_ms) = end_ms else {
        return REFRESH;
    };
    if clock.is_manual() {
        return REFRESH;
    }
    let left = end_ms.saturating_sub(clock.now_millis()).max(0) as f64;
    let real = left / clock.scale().max(1e-6);
    // A little after the end, so that the task is due then.
    Duration::from_millis((real as u64).saturating_add(5)).min(REFRESH)
}
