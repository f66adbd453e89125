//! A request's body as pveproxy bounds it: read whole within a size
//! limit ([`Whole`], set by [`bound_body`]), with no long pause and no
//! longer than a deadline in all ([`TimedBody`]), into one buffer
//! ([`read_whole`]); or streamed (an upload), with the pause limit only.
//! The API's entry ([`crate::app`]) and the control API
//! ([`crate::control`]) read their bodies through it.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{FromRequest, NestedPath, Request};
use axum::response::Response;
use bytes::Bytes;
use http::HeaderMap;
use http_body_util::{BodyExt, Full};
use hyper::body::Body as _;

use crate::api;

/// How long a request body may pause before the connection is closed
/// (a client that stops sending in the middle of a body does not hold
/// its request forever), unless the server is told otherwise
/// ([`crate::Builder::request_body_timeout`]).
pub const BODY_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// How long reading a body whole (the API's, the control API's) may take
/// in all, from its first byte to its last, before the connection is
/// closed, unless the server is told otherwise
/// ([`crate::Builder::request_body_deadline`]): a client that sends a
/// byte now and then does not hold its connection for longer. An
/// upload, streamed and checked for its credentials first, has only
/// the pause limit ([`BODY_IDLE_TIMEOUT`]): a large file takes minutes.
pub const BODY_DEADLINE: Duration = Duration::from_secs(30);

/// How long a body may take: the longest pause and the longest read in
/// all (see [`BODY_IDLE_TIMEOUT`], [`BODY_DEADLINE`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyTimes {
    /// The longest pause.
    pub(crate) idle: Duration,
    /// The longest read in all of a body read whole.
    pub(crate) deadline: Duration,
}

impl Default for BodyTimes {
    fn default() -> Self {
        Self {
            idle: BODY_IDLE_TIMEOUT,
            deadline: BODY_DEADLINE,
        }
    }
}

/// Marks a request whose declared body is over its limit: the body is
/// not read at all.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TooLarge;

/// The most a [`Whole`] request's body may hold (set by [`bound_body`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyLimit(usize);

/// Bounds the body a handler reads: at most `limit` bytes read whole
/// ([`Whole`]; [`api::MAX_BODY`] for the API, refused after
/// authentication as PVE does; [`crate::app`]'s `CONTROL_MAX_BODY` for the control
/// API), within [`BodyTimes::deadline`] in all; or, without a limit,
/// streamed (an upload, which bounds its own size). Either way a body
/// that pauses for longer than [`BodyTimes::idle`] fails.
pub(crate) fn bound_body(req: Request, times: BodyTimes, limit: Option<usize>) -> Request {
    if req.body().is_end_stream() {
        return req;
    }
    let Some(limit) = limit else {
        return req.map(|b| Body::new(TimedBody::new(times.idle, None, b)));
    };
    let (mut parts, body) = req.into_parts();
    if declared_length(&parts.headers).is_some_and(|n| n > limit) {
        parts.extensions.insert(TooLarge);
        return Request::from_parts(parts, Body::empty());
    }
    parts.extensions.insert(BodyLimit(limit));
    let deadline = tokio::time::Instant::now() + times.deadline;
    let body = Body::new(TimedBody::new(times.idle, Some(deadline), body));
    Request::from_parts(parts, body)
}

/// The body length a request's head declares (`Content-Length`).
pub(crate) fn declared_length(headers: &HeaderMap) -> Option<usize> {
    headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<usize>().ok())
}

/// A request body that fails once it has made its reader wait longer
/// than its idle timeout for the next part, or once its deadline has
/// passed while the reader waits. One timer, set only when the body
/// makes its reader wait: a body that came with the request's head (a
/// form, most of all) is read without one.
pub(crate) struct TimedBody {
    idle: Duration,
    deadline: Option<tokio::time::Instant>,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    body: Body,
}

/// What a [`TimedBody`] fails with.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Late {
    /// It paused for longer than its idle timeout.
    #[error("the request body stalled")]
    Stalled,
    /// It was still coming at its deadline.
    #[error("the request body took longer than its deadline")]
    Deadline,
}

impl TimedBody {
    fn new(idle: Duration, deadline: Option<tokio::time::Instant>, body: Body) -> Self {
        Self {
            idle,
            deadline,
            sleep: None,
            body,
        }
    }
}

impl hyper::body::Body for TimedBody {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.body).poll_frame(cx) {
            this.sleep = None;
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        let (idle, deadline) = (this.idle, this.deadline);
        let sleep = this.sleep.get_or_insert_with(|| {
            let paused = tokio::time::Instant::now() + idle;
            Box::pin(tokio::time::sleep_until(
                deadline.map_or(paused, |d| d.min(paused)),
            ))
        });
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => {
                let late = if deadline.is_some_and(|d| tokio::time::Instant::now() >= d) {
                    Late::Deadline
                } else {
                    Late::Stalled
                };
                Poll::Ready(Some(Err(Box::new(late))))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// Why [`read_whole`] read no body.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Unread {
    /// More than the limit came.
    TooLarge,
    /// The body stopped coming (it paused too long, its deadline passed,
    /// or the client went away).
    Broken,
}

/// Reads a body whole, at most `limit` bytes of it: a body that comes as
/// one part is that part; one that comes in parts is copied into one
/// buffer, set aside for its declared length up to the limit (a large
/// limit is the control API's, whose requests are authenticated before
/// their bodies are read), so that no part is kept (each holds the read
/// buffer it came in) and the buffer is not copied as it grows.
pub(crate) async fn read_whole<B>(
    mut body: B,
    limit: usize,
    declared: usize,
) -> Result<Bytes, Unread>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
{
    let mut first: Option<Bytes> = None;
    let mut buf = bytes::BytesMut::new();
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.map_err(|_| Unread::Broken)?.into_data() else {
            // Trailers carry no body.
            continue;
        };
        let had = first.as_ref().map_or(buf.len(), Bytes::len);
        if had + data.len() > limit {
            return Err(Unread::TooLarge);
        }
        if had == 0 {
            first = Some(data);
            continue;
        }
        if let Some(part) = first.take() {
            buf.reserve(declared.min(limit).max(had + data.len()));
            buf.extend_from_slice(&part);
        }
        buf.extend_from_slice(&data);
    }
    Ok(first.unwrap_or_else(|| buf.freeze()))
}

/// A request with its body read whole, up to the limit [`bound_body`]
/// set; the path is the request's own, also below a nested router.
pub enum Whole {
    /// The body was read.
    Read(api::Request),
    /// The body was over the limit: the request without it.
    TooLarge(api::Request),
    /// The body stopped coming (it paused for longer than the body
    /// timeout, or the client went away): nothing to answer, the
    /// connection is closed ([`Whole::drop_connection`]).
    Broken,
}

impl Whole {
    /// The answer to a [`Whole::Broken`] request: none, the server closes
    /// the connection.
    pub fn drop_connection() -> Response {
        let mut r = Response::new(Body::empty());
        r.extensions_mut().insert(api::DropConnection);
        r
    }
}

impl<S: Send + Sync> FromRequest<S> for Whole {
    type Rejection = Infallible;

    async fn from_request(req: Request, _: &S) -> Result<Self, Infallible> {
        let (parts, body) = req.into_parts();
        let body = if parts.extensions.get::<TooLarge>().is_some() {
            None
        } else if body.is_end_stream() {
            // Nothing to read (a GET, most of all).
            Some(Bytes::new())
        } else {
            let limit = parts
                .extensions
                .get::<BodyLimit>()
                .map_or(api::MAX_BODY, |l| l.0);
            let declared = declared_length(&parts.headers).unwrap_or(0);
            match read_whole(body, limit, declared).await {
                Ok(b) => Some(b),
                Err(Unread::TooLarge) => None,
                Err(Unread::Broken) => return Ok(Self::Broken),
            }
        };
        // Below a nested router (the control API), the path is the
        // request's own again.
        let path = match parts.extensions.get::<NestedPath>() {
            Some(nested) => format!("{}{}", nested.as_str(), parts.uri.path()),
            None => parts.uri.path().to_string(),
        };
        let req = api::Request {
            method: parts.method.clone(),
            path,
            query: parts.uri.query().map(str::to_string),
            headers: parts.headers,
            body: body.clone().unwrap_or_default(),
            upload: None,
        };
        Ok(match body {
            Some(_) => Self::Read(req),
            None => Self::TooLarge(req),
        })
    }
}

/// An answer of [`api`] as axum's (its extensions, the reason phrase and
/// [`api::DropConnection`], stay).
pub(crate) fn reply(r: http::Response<Full<Bytes>>) -> Response {
    r.map(Body::new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// A body of the parts sent on a channel, ending when it closes.
    struct Parts(tokio::sync::mpsc::Receiver<Bytes>);

    impl hyper::body::Body for Parts {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
            self.0
                .poll_recv(cx)
                .map(|part| part.map(|b| Ok(hyper::body::Frame::data(b))))
        }
    }

    /// A body of four-byte parts sent after the pauses given
    /// (milliseconds), read by a [`TimedBody`] of a 300 ms idle timeout
    /// and a deadline `deadline_ms` after the start: what it failed with,
    /// if it did.
    async fn timed(pauses_ms: &'static [u64], deadline_ms: Option<u64>) -> Option<String> {
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        let deadline =
            deadline_ms.map(|ms| tokio::time::Instant::now() + Duration::from_millis(ms));
        let body = TimedBody::new(Duration::from_millis(300), deadline, Body::new(Parts(rx)));
        let sender = tokio::spawn(async move {
            for ms in pauses_ms {
                tokio::time::sleep(Duration::from_millis(*ms)).await;
                if tx.send(Bytes::from_static(b"part")).await.is_err() {
                    return;
                }
            }
        });
        let read = body.collect().await;
        sender.abort();
        match read {
            Ok(b) => {
                assert_eq!(b.to_bytes().len(), 4 * pauses_ms.len());
                None
            }
            Err(e) => Some(e.to_string()),
        }
    }

    #[rstest]
    #[case::pauses_shorter_than_the_timeout(&[150, 150, 150], None, None)]
    #[case::a_pause_longer_than_the_timeout(&[50, 700], None, Some("the request body stalled"))]
    #[case::within_its_deadline(&[150, 150, 150], Some(1000), None)]
    #[case::short_pauses_past_its_deadline(
        &[150, 150, 150, 150, 150, 150],
        Some(500),
        Some("the request body took longer than its deadline")
    )]
    #[case::a_long_pause_before_its_deadline(
        &[50, 700],
        Some(2000),
        Some("the request body stalled")
    )]
    #[tokio::test]
    async fn a_body_fails_once_it_stalls_or_its_deadline_passes(
        #[case] pauses_ms: &'static [u64],
        #[case] deadline_ms: Option<u64>,
        #[case] failure: Option<&str>,
    ) {
        assert_eq!(timed(pauses_ms, deadline_ms).await.as_deref(), failure);
    }

    /// A body of the parts given, each sent as its own frame.
    fn parts_of(parts: &[&'static str]) -> Body {
        let (tx, rx) = tokio::sync::mpsc::channel(parts.len().max(1));
        for &p in parts {
            tx.try_send(Bytes::from_static(p.as_bytes()))
                .expect("room for each part");
        }
        Body::new(Parts(rx))
    }

    #[rstest]
    #[case::one_part(&["vmid=100"], 100, 8, Ok("vmid=100"))]
    #[case::parts_joined(&["vm", "id=", "100"], 100, 8, Ok("vmid=100"))]
    #[case::declared_shorter_than_sent(&["vm", "id=", "100"], 100, 2, Ok("vmid=100"))]
    #[case::at_the_limit(&["1234", "5678"], 8, 8, Ok("12345678"))]
    #[case::over_the_limit_in_one_part(&["123456789"], 8, 9, Err(Unread::TooLarge))]
    #[case::over_the_limit_in_parts(&["1234", "56789"], 8, 9, Err(Unread::TooLarge))]
    #[case::nothing(&[], 8, 0, Ok(""))]
    #[tokio::test]
    async fn a_body_is_read_whole_up_to_its_limit(
        #[case] parts: &[&'static str],
        #[case] limit: usize,
        #[case] declared: usize,
        #[case] read: Result<&'static str, Unread>,
    ) {
        let got = read_whole(parts_of(parts), limit, declared).await;
        assert_eq!(got, read.map(|b| Bytes::from_static(b.as_bytes())));
    }

    #[tokio::test]
    async fn a_body_in_parts_keeps_none_of_them() {
        // Parts cut from one large buffer, as hyper's frames are: what is
        // read holds its own bytes, not the buffer.
        let big = Bytes::from(vec![7u8; 64 * 1024]);
        let parts: Vec<Bytes> = (0..4).map(|i| big.slice(i..=i)).collect();
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        for p in parts {
            tx.try_send(p).expect("room");
        }
        drop(tx);
        let read = read_whole(Body::new(Parts(rx)), 100, 4)
            .await
            .expect("read");
        assert_eq!(&read[..], &[7, 7, 7, 7]);
        // The large buffer is no longer shared: it can be taken back
        // whole (it could not while a part of it lived).
        assert!(big.try_into_mut().is_ok(), "a part of the buffer was kept");
    }
}
