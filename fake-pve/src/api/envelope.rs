//! PVE's envelope and status lines: `{"data": ...}` (and the extjs
//! form), the error body with `message` and `errors`, reason phrases and
//! the headers pveproxy sends (pve-http-server `AnyEvent.pm`,
//! `Formatter/Standard.pm`).

use std::collections::BTreeMap;

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode};
use http_body_util::Full;
use serde_json::{Value, json};

use super::{Format, RawData, Reply};
use crate::model::{Error, ErrorKind};

/// The content type of every JSON answer, byte for byte as PVE sends it.
pub const JSON_CONTENT_TYPE: &str = "application/json;charset=UTF-8";
/// The content type of the `spiceconfig` format.
pub const SPICE_CONTENT_TYPE: &str = "application/x-virt-viewer;charset=UTF-8";

/// An answer with PVE's headers (and `content_type`, if any) around
/// `body`. The names and values are typed already and the headers are
/// put straight into a map of their size: nothing is parsed or moved
/// per header.
fn answer(
    code: u16,
    reason: &str,
    content_type: Option<&'static str>,
    body: Bytes,
) -> Response<Full<Bytes>> {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut r = Response::new(Full::new(body));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.reserve(6);
    h.insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_static("max-age=0"),
    );
    h.insert(http::header::PRAGMA, HeaderValue::from_static("no-cache"));
    h.insert(http::header::EXPIRES, expires(now));
    h.insert(
        http::header::SERVER,
        HeaderValue::from_static("pve-api-daemon/3.0"),
    );
    // pveproxy closes the connection after every error answer.
    if code >= 400 {
        h.insert(http::header::CONNECTION, HeaderValue::from_static("close"));
    }
    if let Some(t) = content_type {
        h.insert(http::header::CONTENT_TYPE, HeaderValue::from_static(t));
    }
    if let Some(p) = reason_phrase(status, reason) {
        r.extensions_mut().insert(p);
    }
    r
}

/// [`http_date`] of `now`, made once a second per thread.
fn expires(now: u64) -> HeaderValue {
    thread_local! {
        static LAST: std::cell::RefCell<(u64, HeaderValue)> =
            const { std::cell::RefCell::new((u64::MAX, HeaderValue::from_static(""))) };
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if last.0 != now {
            let v = HeaderValue::from_str(&http_date(now))
                .unwrap_or_else(|_| HeaderValue::from_static(""));
            *last = (now, v);
        }
        last.1.clone()
    })
}

/// An RFC 7231 date (`Sun, 06 Nov 1994 08:49:37 GMT`).
pub fn http_date(epoch: u64) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (year, month, day, h, m, sec, wd) = crate::clock::civil(i64::try_from(epoch).unwrap_or(0));
    format!(
        "{}, {day:02} {} {year} {h:02}:{m:02}:{sec:02} GMT",
        DAYS[wd as usize % 7],
        MONTHS[(month as usize + 11) % 12]
    )
}

fn reason_phrase(status: StatusCode, msg: &str) -> Option<hyper::ext::ReasonPhrase> {
    let first = msg.lines().next().unwrap_or("").trim_end();
    if first.is_empty() || status.canonical_reason() == Some(first) {
        return None;
    }
    hyper::ext::ReasonPhrase::try_from(first.as_bytes().to_vec()).ok()
}

/// An answer with the message as its reason phrase and as a plain body
/// (the transport layer's errors).
pub fn plain(code: u16, msg: &str) -> Response<Full<Bytes>> {
    answer(code, msg, None, Bytes::from(msg.to_string()))
}

/// An answer with a status line and no body (the authentication layer).
pub fn status_only(code: u16, msg: &str) -> Response<Full<Bytes>> {
    answer(code, msg, None, Bytes::new())
}

fn json_response(code: u16, reason: &str, body: &Value) -> Response<Full<Bytes>> {
    answer(
        code,
        reason,
        Some(JSON_CONTENT_TYPE),
        Bytes::from(serde_json::to_vec(body).unwrap_or_default()),
    )
}

/// A JSON document as it is, without PVE's envelope.
pub fn raw_json(body: &Value) -> Response<Full<Bytes>> {
    json_response(200, "", body)
}

/// The success answer.
pub fn success(format: Format, reply: Reply) -> Response<Full<Bytes>> {
    if let Some(bytes) = reply.download {
        return answer(200, "", Some("application/octet-stream"), bytes);
    }
    if format == Format::SpiceConfig {
        let text = super::console::view::spiceconfig(&reply.data).unwrap_or_default();
        return answer(200, "", Some(SPICE_CONTENT_TYPE), Bytes::from(text));
    }
    // The envelope is written around the data (`{"data":...,"total":n,
    // <attribs>,"success":1}`) instead of moving it into a new value.
    // Writing a `Value` into a `Vec` cannot fail.
    let mut out = match reply.raw {
        Some(raw) => raw.into_opened(),
        None => {
            let mut out = Vec::with_capacity(512);
            out.extend_from_slice(RawData::OPENING);
            let _ = serde_json::to_writer(&mut out, &reply.data);
            out
        }
    };
    if let Some(t) = reply.total.filter(|t| *t != 0) {
        out.extend_from_slice(format!(",\"total\":{t}").as_bytes());
    }
    for (k, v) in &reply.attribs {
        if matches!(k.as_str(), "data" | "total" | "success") {
            continue;
        }
        out.push(b',');
        let _ = serde_json::to_writer(&mut out, k);
        out.push(b':');
        let _ = serde_json::to_writer(&mut out, v);
    }
    if format == Format::Extjs {
        out.extend_from_slice(b",\"success\":1");
    }
    out.push(b'}');
    answer(200, "", Some(JSON_CONTENT_TYPE), super::recycle::bytes(out))
}

/// The status a refusal of each kind is answered with: PVE `die`s with
/// 500 whatever the reason, except for parameters (400), permissions
/// (403), credentials (401), unreachable nodes (pveproxy's 595),
/// methods it does not have (501) and what it raises with a code of its
/// own (a missing second factor's 404, `join_info`'s 424).
pub fn status_of(e: &Error) -> u16 {
    match e.kind() {
        ErrorKind::Invalid | ErrorKind::BadRequest => 400,
        ErrorKind::Unauthorized => 401,
        ErrorKind::Forbidden => 403,
        ErrorKind::NotImplemented => 501,
        ErrorKind::FailedDependency => 424,
        ErrorKind::HttpNotFound => 404,
        ErrorKind::Unreachable => 595,
        ErrorKind::Failed
        | ErrorKind::NotFound
        | ErrorKind::Exists
        | ErrorKind::Locked
        | ErrorKind::Conflict => 500,
    }
}

/// The error answer for a domain error.
pub fn failure(format: Format, e: &Error) -> Response<Full<Bytes>> {
    failure_status(format, status_of(e), e.message(), e.errors())
}

/// The error answer with a given status (an injected fault's, or a
/// refusal's).
pub fn failure_status(
    format: Format,
    code: u16,
    msg: &str,
    errors: Option<&BTreeMap<String, String>>,
) -> Response<Full<Bytes>> {
    // PVE's own 501 for an unknown method has no newline; every `die`
    // message has one.
    let msg = if msg.ends_with('\n') || code == 501 {
        msg.to_string()
    } else {
        format!("{msg}\n")
    };
    if format == Format::SpiceConfig {
        // No data, no file: the status line says why.
        return answer(code, msg.trim_end(), Some(SPICE_CONTENT_TYPE), Bytes::new());
    }
    let mut body = json!({ "data": null, "message": msg });
    if let Some(errs) = errors {
        body["errors"] = json!(errs);
    }
    if format == Format::Extjs {
        body["success"] = json!(0);
        body["status"] = json!(code);
        return json_response(200, "", &body);
    }
    json_response(code, &msg, &body)
}
