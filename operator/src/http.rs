//! `/metrics`, `/healthz` and `/readyz` over hyper 1 (HTTP/1.1, plain).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::metrics::Metrics;

/// Liveness and readiness, as the main loop reports them. Live means the
/// loop is alive: it beats at each pass and, while a pass waits on PVE,
/// every quarter of the staleness window, so a long pass is not taken for
/// a hung one.
#[derive(Debug)]
pub struct Health {
    ready: AtomicBool,
    /// The last beat, epoch milliseconds; 0 before the first.
    heartbeat: AtomicI64,
    /// Milliseconds after which a silent main loop counts as dead.
    stale_after_ms: i64,
}

/// Seconds after which a silent main loop counts as dead.
const STALE_AFTER: i64 = 300;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl Default for Health {
    fn default() -> Self {
        Self::with_stale_after(std::time::Duration::from_secs(STALE_AFTER.unsigned_abs()))
    }
}

impl Health {
    /// A main loop that counts as dead after `stale_after` without a beat.
    pub fn with_stale_after(stale_after: std::time::Duration) -> Self {
        Self {
            ready: AtomicBool::new(false),
            heartbeat: AtomicI64::new(0),
            stale_after_ms: i64::try_from(stale_after.as_millis()).unwrap_or(i64::MAX),
        }
    }

    /// How often a loop that is busy beats: a quarter of the window.
    pub fn beat_every(&self) -> std::time::Duration {
        std::time::Duration::from_millis((self.stale_after_ms / 4).max(1).unsigned_abs())
    }

    /// The main loop is alive.
    pub fn beat(&self) {
        self.heartbeat.store(now_ms(), Ordering::Relaxed);
    }

    /// Manifests are loaded and a first pass ran.
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::Relaxed);
    }

    /// Whether the main loop beat recently.
    pub fn is_live(&self) -> bool {
        let hb = self.heartbeat.load(Ordering::Relaxed);
        hb == 0 || now_ms() - hb < self.stale_after_ms
    }

    /// Whether it is ready.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
    }
}

/// A bind address that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid bind address {addr:?}: {source}")]
pub struct BindAddressError {
    /// The address as given (trimmed).
    pub addr: String,
    /// Why it does not parse.
    pub source: std::net::AddrParseError,
}

/// Parses `:8080`, `0.0.0.0:8080` or `127.0.0.1:0`; `0` or empty turns
/// the server off.
///
/// # Errors
/// When the address is malformed.
pub fn parse_bind(s: &str) -> Result<Option<SocketAddr>, BindAddressError> {
    let s = s.trim();
    if s.is_empty() || s == "0" {
        return Ok(None);
    }
    let full = if s.starts_with(':') {
        format!("0.0.0.0{s}")
    } else {
        s.to_string()
    };
    full.parse().map(Some).map_err(|source| BindAddressError {
        addr: s.to_string(),
        source,
    })
}

fn respond(metrics: &Metrics, health: &Health, path: &str) -> Response<Full<Bytes>> {
    let (status, ctype, body) = match path {
        "/metrics" => (
            StatusCode::OK,
            "text/plain; version=0.0.4; charset=utf-8",
            metrics.render(),
        ),
        "/healthz" if health.is_live() => (StatusCode::OK, "text/plain", "ok\n".to_string()),
        "/healthz" => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "text/plain",
            "main loop stalled\n".to_string(),
        ),
        "/readyz" if health.is_ready() => (StatusCode::OK, "text/plain", "ok\n".to_string()),
        "/readyz" => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "text/plain",
            "not ready\n".to_string(),
        ),
        _ => (
            StatusCode::NOT_FOUND,
            "text/plain",
            "not found\n".to_string(),
        ),
    };
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    if let Ok(v) = hyper::header::HeaderValue::from_str(ctype) {
        r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    r
}

/// Binds `addr` and serves the three endpoints until the task is
/// dropped; returns the bound address (port 0 picks one).
///
/// # Errors
/// When the address cannot be bound.
pub async fn serve(
    addr: SocketAddr,
    metrics: Arc<Metrics>,
    health: Arc<Health>,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let handle = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let (m, h) = (metrics.clone(), health.clone());
            tokio::spawn(async move {
                let svc = service_fn(move |req: Request<Incoming>| {
                    let r = respond(&m, &h, req.uri().path());
                    async move { Ok::<_, Infallible>(r) }
                });
                if let Err(e) = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await
                {
                    tracing::debug!(error = %e, "metrics connection ended");
                }
            });
        }
    });
    Ok((local, handle))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn bind_addresses_follow_the_seed() {
        assert_eq!(
            parse_bind(":8080"),
            Ok(Some("0.0.0.0:8080".parse().expect("addr")))
        );
        assert_eq!(
            parse_bind("127.0.0.1:0"),
            Ok(Some("127.0.0.1:0".parse().expect("addr")))
        );
        assert_eq!(parse_bind("0"), Ok(None));
        assert!(parse_bind("nope").is_err());
    }

    #[test]
    fn probes_answer_by_state() {
        let m = Metrics::default();
        let h = Health::default();
        assert_eq!(respond(&m, &h, "/readyz").status(), 500);
        assert_eq!(respond(&m, &h, "/healthz").status(), 200);
        h.set_ready(true);
        assert_eq!(respond(&m, &h, "/readyz").status(), 200);
        assert_eq!(respond(&m, &h, "/metrics").status(), 200);
        assert_eq!(respond(&m, &h, "/x").status(), 404);
    }
}
