//! The wire: `/api2/...` (every format) to the schema-driven dispatcher
//! [`api::handle`]; through an axum [`Router`](axum::Router),
//! `/_fake/...` to the control API's routes ([`control::routes`]), `/`
//! and `/dashboard/...` to the dashboard ([`crate::dashboard`]), anything
//! else `no such file`. In front of them all, pveproxy's own side of a
//! request (tower-http's would not answer PVE's bytes) logs it (and keeps
//! the latest in the dashboard's request log), refuses what pveproxy
//! refuses before routing (methods other than GET, POST, PUT and DELETE;
//! chunked bodies), caps bodies, and fails bodies that stall
//! ([`StallTimeout`]). The API, polled hardest, is reached
//! without the router: no route is matched, cloned or boxed for it.
//!
//! [`app`] needs no socket: tests can call it with
//! `tower::ServiceExt::oneshot`. The server ([`crate::server`]) serves the
//! same `Wire` over TLS and turns an answer marked
//! [`api::DropConnection`] into a closed connection.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::extract::{FromRequest, NestedPath, Request, State as Ext};
use axum::response::Response;
use axum::routing::get;
use bytes::Bytes;
use http::{HeaderMap, Method};
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Body as _;

use crate::access_log::{self, AccessLog};
use crate::api;
use crate::control;
use crate::model::AuthId;
use crate::state::State;

/// The largest body the control API reads (a state document of a large
/// world).
const CONTROL_MAX_BODY: usize = 1 << 30;

/// How long a request body may pause before the connection is closed
/// (a client that stops sending in the middle of a body does not hold
/// its request forever), unless the server is told otherwise
/// ([`crate::Builder::request_body_timeout`]).
pub const BODY_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// What the API's handlers share.
#[derive(Clone)]
struct App {
    state: State,
    router: Arc<api::Router>,
}

/// The whole wire of one emulated cluster as an axum router, without a
/// socket (and without an access log): the answers
/// [`crate::FakePve::builder`]'s server gives, for tests to call directly
/// (`tower::ServiceExt::oneshot`).
///
/// An answer that carries [`api::DropConnection`] (an injected `drop`
/// fault) is one the server does not send: it closes the connection
/// instead.
pub fn app(state: State) -> axum::Router {
    let wire = Arc::new(wire(state, BODY_IDLE_TIMEOUT, None));
    axum::Router::new().fallback_service(WireService(wire))
}

/// The wire the server answers with: pveproxy's front around the API
/// and the rest of the routes.
pub(crate) fn wire(state: State, body_timeout: Duration, access_log: Option<AccessLog>) -> Wire {
    let control = tower::ServiceBuilder::new()
        .map_request(control::trim_trailing_slash)
        .service(control::routes(state.clone()));
    let app = App {
        state,
        router: Arc::new(api::Router::default()),
    };
    let rest = axum::Router::new()
        .route("/", get(index))
        .route("/dashboard/{file}", get(dashboard_file))
        .nest_service("/_fake", control)
        .fallback(no_such_file)
        .method_not_allowed_fallback(no_such_file)
        .with_state(app.clone());
    Wire {
        body_timeout,
        access_log,
        app,
        rest,
    }
}

/// pveproxy's side of a request before routing, around everything it
/// serves: the request logs (the access log, and the dashboard's ring of
/// the latest requests), the refusals and the body limits. Then `/api2`
/// (every format) goes straight to the API ([`api_entry`]), and the rest
/// (the control API, the dashboard, `no such file`) through an axum
/// router.
pub(crate) struct Wire {
    body_timeout: Duration,
    access_log: Option<AccessLog>,
    app: App,
    rest: axum::Router,
}

impl Wire {
    /// The answer to one request from `peer` (none without a socket).
    pub(crate) async fn answer(&self, req: Request, peer: Option<SocketAddr>) -> Response {
        let started = Instant::now();
        let logged = Logged::start(&req, peer, self.access_log.as_ref());
        let recorded = Recorded::start(&req, &self.app.state);
        let (resp, who) = match refusal(&req) {
            Some(refused) => (refused, None),
            None => {
                let req = limit_body(req, self.body_timeout);
                if is_api(req.uri().path()) {
                    api_entry(&self.app, req).await
                } else {
                    use tower::ServiceExt as _;
                    // Boxed: the API's requests do not carry the
                    // router's future in their own.
                    let Ok(resp) = Box::pin(self.rest.clone().oneshot(req)).await;
                    (resp, None)
                }
            }
        };
        if let Some(r) = recorded {
            r.finish(&resp, started);
        }
        if let Some(l) = logged {
            l.finish(&resp, who.as_ref());
        }
        resp
    }
}

/// Whether a path is the API's: `/api2` and below.
fn is_api(path: &str) -> bool {
    path.strip_prefix("/api2")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// [`Wire`] as a tower service (for [`app`]: the same answers without a
/// socket).
#[derive(Clone)]
struct WireService(Arc<Wire>);

impl tower::Service<Request> for WireService {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let wire = self.0.clone();
        Box::pin(async move { Ok(wire.answer(req, None).await) })
    }
}

/// The header the dashboard's own requests carry (a name made once, not
/// parsed per request).
static DASHBOARD_HEADER: http::HeaderName = http::HeaderName::from_static("x-fake-pve-dashboard");

/// A request on its way into the dashboard's request log
/// ([`crate::dashboard::Hub::record`]): all but the event stream
/// itself, whose answer lasts as long as the dashboard stays.
struct Recorded<'a> {
    state: &'a State,
    method: Method,
    uri: http::Uri,
    dashboard: bool,
}

impl<'a> Recorded<'a> {
    fn start(req: &Request, state: &'a State) -> Option<Self> {
        let uri = req.uri();
        let path = uri.path();
        if path
            .strip_prefix("/_fake")
            .is_some_and(|p| p.trim_end_matches('/') == control::EVENTS)
        {
            return None;
        }
        let dashboard = path == "/"
            || path.starts_with("/dashboard/")
            || req.headers().contains_key(&DASHBOARD_HEADER);
        Some(Self {
            state,
            method: req.method().clone(),
            // A clone of the URI shares its bytes: nothing is copied
            // before the answer.
            uri: uri.clone(),
            dashboard,
        })
    }

    fn finish(self, resp: &Response, started: Instant) {
        let status = if api::DropConnection::marks(resp) {
            0
        } else {
            resp.status().as_u16()
        };
        self.state.hub().record(
            &self.method,
            self.uri.path(),
            status,
            started.elapsed(),
            self.dashboard,
        );
    }
}

/// A request on its way into the access log ([`AccessLog`]): what its
/// line needs of the request, kept until the answer is known.
struct Logged<'a> {
    log: &'a AccessLog,
    peer: Option<std::net::IpAddr>,
    method: Method,
    uri: http::Uri,
    version: http::Version,
}

impl<'a> Logged<'a> {
    fn start(req: &Request, peer: Option<SocketAddr>, log: Option<&'a AccessLog>) -> Option<Self> {
        Some(Self {
            log: log?,
            peer: peer.map(|p| p.ip()),
            method: req.method().clone(),
            uri: req.uri().clone(),
            version: req.version(),
        })
    }

    fn finish(self, resp: &Response, who: Option<&AuthId>) {
        // A request the server closes the connection on instead of
        // answering is logged as pveproxy logs an aborted one: 500, no
        // length.
        let dropped = api::DropConnection::marks(resp);
        // A token's name is put together; a user's is logged as it is.
        let token;
        let user = match who {
            None => None,
            Some(AuthId::User(user)) => Some(user.as_str()),
            Some(who) => {
                token = who.to_string();
                Some(token.as_str())
            }
        };
        let uri = self
            .uri
            .path_and_query()
            .map_or_else(|| self.uri.path(), http::uri::PathAndQuery::as_str);
        let version = match self.version {
            http::Version::HTTP_10 => "HTTP/1.0",
            http::Version::HTTP_2 => "HTTP/2.0",
            _ => "HTTP/1.1",
        };
        self.log.record(&access_log::Line {
            peer: self.peer,
            user,
            method: self.method.as_str(),
            uri,
            version,
            status: if dropped { 500 } else { resp.status().as_u16() },
            length: if dropped {
                None
            } else {
                resp.body().size_hint().exact()
            },
        });
    }
}

/// How many lines after the request line pveproxy reads before it gives
/// up on a request (`$limit_max_headers` in pve-http-server's
/// `AnyEvent.pm`, the line that ends the headers counted too).
const MAX_HEADER_LINES: usize = 64;

/// What pveproxy refuses before it looks at the path.
fn refusal(req: &Request) -> Option<Response> {
    // `too many http header lines (> 64)`: pveproxy stops reading and
    // never answers; the client is left with a closed connection.
    if req.headers().len() + 1 >= MAX_HEADER_LINES {
        return Some(Whole::drop_connection());
    }
    let method = req.method();
    if !matches!(
        *method,
        Method::GET | Method::POST | Method::PUT | Method::DELETE
    ) {
        return Some(reply(api::status_only(
            501,
            &format!("method '{method}' not available"),
        )));
    }
    if req
        .headers()
        .get(http::header::TRANSFER_ENCODING)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"chunked"))
    {
        return Some(reply(api::plain(
            501,
            "chunked transfer encoding not supported",
        )));
    }
    None
}

/// Marks a request whose declared body is over its limit: the body is
/// not read at all.
#[derive(Debug, Clone, Copy)]
struct TooLarge;

/// Caps the body a handler reads ([`Whole`]): [`api::MAX_BODY`] for the
/// API (refused after authentication, as PVE does), [`CONTROL_MAX_BODY`]
/// for the control API (it takes whole worlds), none for a streamed
/// upload. A body that pauses for longer than `timeout` fails.
fn limit_body(req: Request, timeout: Duration) -> Request {
    if req.body().is_end_stream() {
        return req;
    }
    let path = req.uri().path();
    if upload_boundary(req.method(), path, req.headers()).is_some() {
        return req.map(|b| Body::new(StallTimeout::new(timeout, b)));
    }
    let limit = if path == "/_fake" || path.starts_with("/_fake/") {
        CONTROL_MAX_BODY
    } else {
        api::MAX_BODY
    };
    let declared = req
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    if declared > limit {
        let (mut parts, _) = req.into_parts();
        parts.extensions.insert(TooLarge);
        return Request::from_parts(parts, Body::empty());
    }
    req.map(|b| Body::new(Limited::new(StallTimeout::new(timeout, b), limit)))
}

/// A request body that fails once it has made its reader wait longer
/// than its timeout for the next part. The timer is set only when the
/// body makes its reader wait: a body that came with the request's head
/// (a form, most of all) is read without one.
struct StallTimeout {
    timeout: Duration,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    body: Body,
}

/// What a [`StallTimeout`] body fails with.
#[derive(Debug, thiserror::Error)]
#[error("the request body stalled")]
struct Stalled;

impl StallTimeout {
    fn new(timeout: Duration, body: Body) -> Self {
        Self {
            timeout,
            sleep: None,
            body,
        }
    }
}

impl hyper::body::Body for StallTimeout {
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
        let timeout = this.timeout;
        let sleep = this
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(Stalled)))),
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

/// The multipart boundary of an upload, whose body is streamed rather
/// than read whole.
fn upload_boundary(method: &Method, path: &str, headers: &HeaderMap) -> Option<String> {
    if method != Method::POST || !api::upload::is_upload_path(path) {
        return None;
    }
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(api::upload::boundary)
}

/// A request with its body read whole, up to the limit [`limit_body`]
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
            match body.collect().await {
                Ok(b) => Some(b.to_bytes()),
                Err(e)
                    if std::error::Error::source(&e)
                        .is_some_and(|e| e.is::<LengthLimitError>()) =>
                {
                    None
                }
                Err(_) => return Ok(Self::Broken),
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

/// `/api2/...`: an upload streamed, anything else read whole and handed
/// to [`api::answer`]; with who the request authenticated as.
async fn api_entry(app: &App, req: Request) -> (Response, Option<AuthId>) {
    if let Some(boundary) = upload_boundary(req.method(), req.uri().path(), req.headers()) {
        // Boxed, as the rest of the API's requests are no uploads.
        let (resp, who) = Box::pin(upload(app, req, &boundary)).await;
        return (reply(resp), who);
    }
    let Ok(whole) = Whole::from_request(req, &()).await;
    let req = match whole {
        Whole::Read(req) => req,
        // Refused after authentication, as PVE does.
        Whole::TooLarge(mut req) => {
            req.body = Bytes::from(vec![0u8; api::MAX_BODY + 1]);
            req
        }
        Whole::Broken => return (Whole::drop_connection(), None),
    };
    let (resp, who) = api::answer(&app.state, &app.router, req).await;
    (reply(resp), who)
}

/// An upload: credentials checked before any of it is read, then its
/// file counted and hashed as it streams by, never kept.
async fn upload(
    app: &App,
    req: Request,
    boundary: &str,
) -> (http::Response<Full<Bytes>>, Option<AuthId>) {
    let (parts, body) = req.into_parts();
    if let Some(refused) =
        api::refuse_unauthenticated_upload(&app.state, &parts.method, &parts.headers).await
    {
        return (refused, None);
    }
    let (fields, info) = match api::upload::read(body, boundary, std::process::id()).await {
        Ok(x) => x,
        Err(e @ api::upload::UploadError::TooLarge) => {
            return (api::plain(501, &e.to_string()), None);
        }
        Err(e) => return (api::plain(400, &e.to_string()), None),
    };
    let form = {
        let mut form = form_urlencoded::Serializer::new(String::new());
        for (k, v) in &fields {
            form.append_pair(k, v);
        }
        form.append_pair("tmpfilename", &info.tmpfilename);
        form.finish()
    };
    let mut headers = parts.headers;
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/x-www-form-urlencoded"),
    );
    let req = api::Request {
        method: parts.method,
        path: parts.uri.path().to_string(),
        query: parts.uri.query().map(str::to_string),
        headers,
        body: Bytes::from(form),
        upload: Some(info),
    };
    api::answer(&app.state, &app.router, req).await
}

/// `GET /`: the dashboard ([`crate::dashboard`]).
async fn index(Ext(app): Ext<App>, headers: HeaderMap, req: Whole) -> Response {
    if let Whole::Broken = req {
        return Whole::drop_connection();
    }
    crate::dashboard::index(&app.state, &headers)
}

/// `GET /dashboard/{file}`: the dashboard's script and style sheet.
async fn dashboard_file(req: Whole) -> Response {
    let (Whole::Read(r) | Whole::TooLarge(r)) = &req else {
        return Whole::drop_connection();
    };
    match crate::dashboard::file(&r.path) {
        Some(resp) => resp,
        None => no_such_file(req).await,
    }
}

/// Anything outside `/api2`, `/_fake`, `GET /` and the dashboard's files.
async fn no_such_file(req: Whole) -> Response {
    let (Whole::Read(req) | Whole::TooLarge(req)) = req else {
        return Whole::drop_connection();
    };
    reply(api::plain(500, &format!("no such file '{}'\n", req.path)))
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

    #[rstest]
    #[case("/api2", true)]
    #[case("/api2/", true)]
    #[case("/api2/json/version", true)]
    #[case("/api2//json/version", true)]
    #[case("/api2json", false)]
    #[case("/api", false)]
    #[case("/", false)]
    #[case("/_fake/state", false)]
    #[case("/dashboard/app.js", false)]
    fn the_api_is_api2_and_below(#[case] path: &str, #[case] api: bool) {
        assert_eq!(is_api(path), api);
    }

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

    #[rstest]
    #[case::pauses_shorter_than_the_timeout(&[150, 150, 150], true)]
    #[case::a_pause_longer_than_the_timeout(&[50, 700], false)]
    #[tokio::test]
    async fn a_body_fails_only_once_it_stalls_longer_than_its_timeout(
        #[case] pauses_ms: &'static [u64],
        #[case] whole: bool,
    ) {
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        let body = StallTimeout::new(Duration::from_millis(300), Body::new(Parts(rx)));
        let sender = tokio::spawn(async move {
            for ms in pauses_ms {
                tokio::time::sleep(Duration::from_millis(*ms)).await;
                if tx.send(Bytes::from_static(b"part")).await.is_err() {
                    return;
                }
            }
        });
        let read = body.collect().await;
        assert_eq!(read.is_ok(), whole);
        if let Ok(b) = read {
            assert_eq!(b.to_bytes().len(), 4 * pauses_ms.len());
        }
        sender.abort();
    }

    #[rstest]
    #[case(0, false)]
    #[case(62, false)]
    #[case(63, true)]
    #[case(90, true)]
    fn a_request_of_too_many_header_lines_is_not_answered(
        #[case] headers: usize,
        #[case] dropped: bool,
    ) {
        let mut req = Request::get("/api2/json/version")
            .body(Body::empty())
            .expect("in the test");
        for i in 0..headers {
            req.headers_mut().insert(
                http::HeaderName::try_from(format!("x-h{i}")).expect("a name"),
                http::HeaderValue::from_static("1"),
            );
        }
        let refused = refusal(&req);
        assert_eq!(
            refused.as_ref().is_some_and(api::DropConnection::marks),
            dropped
        );
        assert_eq!(refused.is_some(), dropped);
    }

    /// The access log's line for `GET /api2/json/version` from 127.0.0.1
    /// answered with `resp`, `who` having authenticated.
    fn logged_line(resp: &Response, who: Option<&AuthId>) -> String {
        let sink = crate::access_log::tests::Sink::default();
        let log = AccessLog::to_writer(Box::new(sink.clone())).expect("a writer thread");
        let req = Request::get("/api2/json/version")
            .body(Body::empty())
            .expect("in the test");
        let peer = "127.0.0.1:40000".parse().expect("in the test");
        let logged = Logged::start(&req, Some(peer), Some(&log)).expect("a log");
        logged.finish(resp, who);
        log.flush();
        let text = sink.0.lock().expect("in the test").clone();
        String::from_utf8(text).expect("UTF-8")
    }

    #[rstest]
    fn a_request_not_answered_is_logged_as_aborted() {
        let text = logged_line(&Whole::drop_connection(), None);
        assert!(
            text.ends_with("\"GET /api2/json/version HTTP/1.1\" 500 -\n"),
            "{text}"
        );
    }

    #[rstest]
    #[case(None, "127.0.0.1 - - [")]
    #[case(Some(AuthId::User("root@pam".into())), "127.0.0.1 - root@pam [")]
    #[case(
        Some(AuthId::Token { userid: "ci@pve".into(), tokenid: "runner".into() }),
        "127.0.0.1 - ci@pve!runner ["
    )]
    fn the_access_log_names_who_authenticated(#[case] who: Option<AuthId>, #[case] start: &str) {
        let text = logged_line(&Response::new(Body::empty()), who.as_ref());
        assert!(text.starts_with(start), "{text}");
        assert!(
            text.ends_with("\"GET /api2/json/version HTTP/1.1\" 200 0\n"),
            "{text}"
        );
    }
}
