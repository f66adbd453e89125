//! The notification dispatcher: makes the HTTP requests of the webhook
//! and gotify targets on loopback that the model queued (see
//! `model::notify::outbox`), each in its own task with PVE's 10-second
//! timeout, and records the receiver's status or the error in the
//! outbox. A request never waits for it.

use std::time::Duration;

use tokio::sync::watch;

use crate::model::notify::Send;
use crate::state::State;

/// How long a request may take (the crate's `HTTP_TIMEOUT`).
const TIMEOUT: Duration = Duration::from_secs(10);

/// Sends what is queued until `stop` turns.
pub async fn run(state: State, mut stop: watch::Receiver<bool>) {
    let Ok(client) = reqwest::Client::builder()
        .timeout(TIMEOUT)
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
    else {
        tracing::warn!("no HTTP client: notifications stay in the outbox");
        return;
    };
    loop {
        for send in state.take_outgoing() {
            tokio::spawn(send_one(client.clone(), state.clone(), send));
        }
        tokio::select! {
            _ = stop.changed() => break,
            () = state.outgoing_ready() => {}
        }
    }
}

/// Makes one request and records how it went.
async fn send_one(client: reqwest::Client, state: State, send: Send) {
    let r = &send.request;
    let Ok(method) = reqwest::Method::from_bytes(r.method.as_bytes()) else {
        state.settle_delivery(send.id, false, format!("invalid method '{}'", r.method));
        return;
    };
    let mut req = client.request(method, &r.url);
    for (k, v) in &r.headers {
        if !k.eq_ignore_ascii_case("content-length") {
            req = req.header(k, v);
        }
    }
    if !(r.method == "GET" && r.body.is_empty()) {
        req = req.body(r.body.clone());
    }
    let (ok, detail) = match req.send().await {
        Ok(resp) => {
            let status = resp.status();
            (status.is_success(), format!("HTTP {}", status.as_u16()))
        }
        Err(e) => (false, format!("could not notify via target: {e}")),
    };
    let detail = r
        .masks
        .iter()
        .fold(detail, |d, secret| d.replace(secret, "<masked>"));
    state.settle_delivery(send.id, ok, detail);
}
