//! The wire: `/api2/...` (every format) to the schema-driven dispatcher
//! [`api::handle`]; through an axum [`Router`](axum::Router),
//! `/_fake/...` to the control API's routes ([`control::routes`]),
//! `/_openid/...` to the emulated OpenID provider ([`crate::openid`]),
//! `/v2/...` to the emulated container registries ([`crate::oci`]), `/`
//! and `/dashboard/...` to the dashboard ([`crate::dashboard`]), anything
//! else `no such file`. In front of them all, pveproxy's own side of a
//! request (tower-http's would not answer PVE's bytes) logs it (and keeps
//! the latest in the dashboard's request log), refuses what pveproxy
//! refuses before routing (methods other than GET, POST, PUT and DELETE;
//! any transfer encoding), checks the credentials of `/api2` and `/_fake`
//! requests from their heads before it reads a byte of their bodies, and
//! reads a body within its route's size limit and in time
//! ([`crate::body`]: no long pause, no longer than a deadline in all),
//! into one buffer. The API, polled hardest, is reached
//! without the router: no route is matched, cloned or boxed for it.
//!
//! [`app`] needs no socket: tests can call it with
//! `tower::ServiceExt::oneshot`. The server ([`crate::server`]) serves the
//! same `Wire` over TLS and turns an answer marked
//! [`api::DropConnection`] into a closed connection.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::extract::{FromRequest, Request, State as Ext};
use axum::response::Response;
use axum::routing::get;
use bytes::Bytes;
use http::{HeaderMap, Method};
use http_body_util::Full;
use hyper::body::Body as _;

use crate::access_log::{self, AccessLog};
use crate::api;
use crate::body::bound_body;
pub use crate::body::{BODY_DEADLINE, BODY_IDLE_TIMEOUT, Whole};
pub(crate) use crate::body::{BodyTimes, reply};
use crate::control;
use crate::model::AuthId;
use crate::state::State;

/// The largest body the control API reads (a state document of a large
/// world), once the request's credentials and permission are checked.
const CONTROL_MAX_BODY: usize = 1 << 30;

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
/// An answer that carries `api::DropConnection` (an injected `drop`
/// fault) is one the server does not send: it closes the connection
/// instead.
pub fn app(state: State) -> axum::Router {
    let wire = Arc::new(wire(state, BodyTimes::default(), None));
    axum::Router::new().fallback_service(WireService(wire))
}

/// The wire the server answers with: pveproxy's front around the API
/// and the rest of the routes.
pub(crate) fn wire(state: State, body: BodyTimes, access_log: Option<AccessLog>) -> Wire {
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
        .nest_service(
            crate::model::access::openid::provider::PATH,
            crate::openid::routes(app.state.clone()),
        )
        .nest_service("/v2", crate::oci::routes(app.state.clone()))
        .fallback(no_such_file)
        .method_not_allowed_fallback(no_such_file)
        .with_state(app.clone());
    Wire {
        body,
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
    body: BodyTimes,
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
            None if is_api(req.uri().path()) => api_entry(&self.app, req, self.body).await,
            // Boxed: the API's requests do not carry the router's future
            // in their own.
            None => (Box::pin(self.rest(req)).await, None),
        };
        if let Some(r) = recorded {
            r.finish(&resp, started);
        }
        if let Some(l) = logged {
            l.finish(&resp, who.as_ref());
        }
        resp
    }

    /// The world it serves.
    pub(crate) fn state(&self) -> &State {
        &self.app.state
    }

    /// `GET /api2/json<path>` with the ticket `cookie`, answered by the
    /// API without pveproxy's side (no request log): what `pvesh` on a
    /// node's shell asks. None for a path that is no URI.
    pub(crate) async fn local_get(
        &self,
        path: &str,
        cookie: &str,
    ) -> Option<http::Response<Full<Bytes>>> {
        let (path, query) = match path.split_once('?') {
            Some((p, q)) => (p, Some(q.to_string())),
            None => (path, None),
        };
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::COOKIE,
            http::HeaderValue::from_str(&format!("PVEAuthCookie={cookie}")).ok()?,
        );
        let req = api::Request {
            method: Method::GET,
            path: format!("/api2/json{path}"),
            query,
            headers,
            body: Bytes::new(),
            upload: None,
        };
        Some(api::answer(&self.app.state, &self.app.router, req).await.0)
    }

    /// Anything but the API: the control API (its credentials and
    /// permission checked before its body is read), the dashboard and
    /// `no such file`, through the router.
    async fn rest(&self, req: Request) -> Response {
        use tower::ServiceExt as _;
        let control = is_control(req.uri().path());
        if control && !req.body().is_end_stream() {
            let (method, path, headers) = (req.method(), req.uri().path(), req.headers());
            if let Err(refused) = control::admit_head(&self.app.state, method, path, headers).await
            {
                return refused;
            }
        }
        let limit = if control {
            CONTROL_MAX_BODY
        } else {
            api::MAX_BODY
        };
        let req = bound_body(req, self.body, Some(limit));
        let Ok(resp) = self.rest.clone().oneshot(req).await;
        resp
    }
}

/// Whether a path is the control API's: `/_fake` and below.
fn is_control(path: &str) -> bool {
    path.strip_prefix("/_fake")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
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
/// ([`crate::state::hub::Hub::record`]): all but the event stream
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
        // pveproxy logs the request line as it came: a request in
        // absolute form (`GET http://host/...`, served as its path) with
        // its scheme and host.
        let absolute;
        let uri = if self.uri.scheme().is_some() {
            absolute = self.uri.to_string();
            absolute.as_str()
        } else {
            self.uri
                .path_and_query()
                .map_or_else(|| self.uri.path(), http::uri::PathAndQuery::as_str)
        };
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
    // pveproxy reads no body sent in a transfer encoding, `chunked` or any
    // other (the header's lines taken as one list).
    let mut encodings = req
        .headers()
        .get_all(http::header::TRANSFER_ENCODING)
        .iter();
    let first = encodings.next()?;
    let te = encodings.fold(String::from_utf8_lossy(first.as_bytes()), |te, more| {
        format!("{te}, {}", String::from_utf8_lossy(more.as_bytes())).into()
    });
    Some(reply(if te.eq_ignore_ascii_case("chunked") {
        api::plain(501, "chunked transfer encoding not supported")
    } else {
        api::plain(501, &format!("Unknown transfer encoding '{te}'"))
    }))
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

/// `/api2/...`: an upload streamed, anything else read whole and handed
/// to [`api::answer`]; with who the request authenticated as. As
/// pveproxy does, a request with a body (and an upload) has its
/// credentials checked from its head first: refused, none of its body
/// is read (and the connection closes after the answer).
async fn api_entry(app: &App, req: Request, times: BodyTimes) -> (Response, Option<AuthId>) {
    let boundary = upload_boundary(req.method(), req.uri().path(), req.headers());
    if boundary.is_some() || !req.body().is_end_stream() {
        let (method, path, headers) = (req.method(), req.uri().path(), req.headers());
        // Boxed, as most of the API's requests have no body.
        if let Some(refused) = Box::pin(api::refuse_unauthenticated(
            &app.state, method, path, headers,
        ))
        .await
        {
            return (reply(refused), None);
        }
    }
    if let Some(boundary) = boundary {
        let req = bound_body(req, times, None);
        // Boxed, as the rest of the API's requests are no uploads.
        let (resp, who) = Box::pin(upload(app, req, &boundary)).await;
        return (reply(resp), who);
    }
    let req = bound_body(req, times, Some(api::MAX_BODY));
    let Ok(whole) = Whole::from_request(req, &()).await;
    let req = match whole {
        Whole::Read(req) => req,
        // Refused after authentication, as PVE does.
        Whole::TooLarge(mut req) => {
            req.body = Bytes::from_static(&OVER_THE_LIMIT);
            req
        }
        Whole::Broken => return (Whole::drop_connection(), None),
    };
    let (resp, who) = api::answer(&app.state, &app.router, req).await;
    (reply(resp), who)
}

/// A body one byte over the API's limit, for the API to refuse a body
/// declared larger than it (without reading it) as it refuses one that
/// is (zeros, not allocated per request).
static OVER_THE_LIMIT: [u8; api::MAX_BODY + 1] = [0; api::MAX_BODY + 1];

/// An upload (its credentials checked already, before any of it is
/// read): its file counted and hashed as it streams by, never kept.
async fn upload(
    app: &App,
    req: Request,
    boundary: &str,
) -> (http::Response<Full<Bytes>>, Option<AuthId>) {
    let (parts, body) = req.into_parts();
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

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
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

    #[rstest]
    #[case::none(&[], None)]
    #[case::chunked(&["chunked"], Some("chunked transfer encoding not supported"))]
    #[case::chunked_in_capitals(&["Chunked"], Some("chunked transfer encoding not supported"))]
    #[case::gzip_then_chunked(&["gzip, chunked"], Some("Unknown transfer encoding 'gzip, chunked'"))]
    #[case::two_lines(&["gzip", "chunked"], Some("Unknown transfer encoding 'gzip, chunked'"))]
    #[case::identity(&["identity"], Some("Unknown transfer encoding 'identity'"))]
    fn a_transfer_encoding_is_refused(#[case] te: &[&str], #[case] refused: Option<&str>) {
        let mut req = Request::post("/api2/json/access/ticket")
            .body(Body::empty())
            .expect("in the test");
        for v in te {
            req.headers_mut().append(
                http::header::TRANSFER_ENCODING,
                http::HeaderValue::from_str(v).expect("a value"),
            );
        }
        let answer = refusal(&req);
        assert_eq!(
            answer.as_ref().map(|r| r.status().as_u16()),
            refused.map(|_| 501)
        );
        let reason = answer
            .as_ref()
            .and_then(|r| r.extensions().get::<hyper::ext::ReasonPhrase>())
            .map(|p| String::from_utf8_lossy(p.as_bytes()).into_owned());
        assert_eq!(reason.as_deref(), refused);
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
