//! Requests to the servers compared: the login, the first read (whose
//! answer the bare server repeats, saved in a file), and the bare server
//! itself.

use std::net::SocketAddr;
use std::path::Path;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use tokio_rustls::TlsConnector;

use super::servers::Server;
use crate::Error;

/// Writes fake-pve's answer for the bare server: the headers as
/// `name: value` lines, an empty line, the body.
pub(super) fn write_answer(
    path: &Path,
    body: &Bytes,
    headers: &http::HeaderMap,
) -> Result<(), Error> {
    let mut out = Vec::new();
    for (k, v) in headers {
        out.extend_from_slice(k.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(v.as_bytes());
        out.push(b'\n');
    }
    out.push(b'\n');
    out.extend_from_slice(body);
    std::fs::write(path, out).map_err(Error::Io)
}

/// Reads what [`write_answer`] wrote.
///
/// # Errors
/// An unreadable file or header.
pub fn read_answer(path: &Path) -> Result<(Bytes, http::HeaderMap), Error> {
    let data = std::fs::read(path).map_err(Error::file(path))?;
    let split = data
        .windows(2)
        .position(|w| w == b"\n\n")
        .ok_or(Error::NoHeaderEnd)?;
    let mut headers = http::HeaderMap::new();
    for line in data[..split].split(|b| *b == b'\n') {
        let text = std::str::from_utf8(line)?;
        let (k, v) = text.split_once(": ").ok_or(Error::HeaderLine)?;
        headers.append(
            http::HeaderName::from_bytes(k.as_bytes())?,
            http::HeaderValue::from_str(v)?,
        );
    }
    Ok((Bytes::copy_from_slice(&data[split + 2..]), headers))
}

pub(super) type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

/// One request; the status, headers and body.
pub(super) async fn send(
    s: &mut Sender,
    req: http::Request<Full<Bytes>>,
) -> Result<(http::StatusCode, http::HeaderMap, Bytes), Error> {
    s.ready().await?;
    let resp = s.send_request(req).await?;
    let (status, headers) = (resp.status(), resp.headers().clone());
    let body = resp.into_body().collect().await?.to_bytes();
    Ok((status, headers, body))
}

pub(super) fn request(
    addr: SocketAddr,
    method: http::Method,
    path: &str,
    cookie: &str,
    csrf: &str,
    form: Option<String>,
) -> http::Request<Full<Bytes>> {
    let mut b = http::Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::HOST, addr.to_string());
    if !cookie.is_empty() {
        b = b.header(http::header::COOKIE, cookie);
    }
    if !csrf.is_empty() {
        b = b.header("CSRFPreventionToken", csrf);
    }
    let body = match form {
        Some(f) => {
            b = b.header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            );
            Bytes::from(f)
        }
        None => Bytes::new(),
    };
    b.body(Full::new(body)).unwrap_or_default()
}

/// Logs in as root@pam: the ticket cookie and the CSRF token.
///
/// # Errors
/// The connection or the login.
pub async fn login(
    connector: &TlsConnector,
    addr: SocketAddr,
    password: &str,
) -> Result<(String, String), Error> {
    let mut s = crate::throughput::connect(connector, addr).await?;
    let form = format!("username=root%40pam&password={password}");
    let (status, _, body) = send(
        &mut s,
        request(
            addr,
            http::Method::POST,
            "/api2/json/access/ticket",
            "",
            "",
            Some(form),
        ),
    )
    .await?;
    let v: serde_json::Value =
        serde_json::from_slice(&body).map_err(|source| Error::LoginAnswer { status, source })?;
    let ticket = v["data"]["ticket"]
        .as_str()
        .ok_or_else(|| Error::NoTicket {
            status,
            answer: v.clone(),
        })?;
    let csrf = v["data"]["CSRFPreventionToken"]
        .as_str()
        .unwrap_or_default();
    Ok((format!("PVEAuthCookie={ticket}"), csrf.to_string()))
}

/// The server's answer to the read: its body and the headers the bare
/// server repeats (all but those hyper writes itself).
pub(super) async fn first_answer(
    connector: &TlsConnector,
    t: &Server,
) -> Result<(Bytes, http::HeaderMap), Error> {
    let mut s = crate::throughput::connect(connector, t.addr).await?;
    let (status, mut headers, body) = send(
        &mut s,
        request(t.addr, http::Method::GET, &t.path, &t.cookie, "", None),
    )
    .await?;
    if status != http::StatusCode::OK {
        return Err(Error::Refused {
            server: t.name.clone(),
            status,
            body: String::from_utf8_lossy(&body).into_owned(),
        });
    }
    for h in [
        http::header::DATE,
        http::header::CONTENT_LENGTH,
        http::header::CONNECTION,
        http::header::TRANSFER_ENCODING,
    ] {
        headers.remove(h);
    }
    Ok((body, headers))
}

/// The bare server (`pve-throughput --serve-bare FILE --listen ADDR`):
/// answers the saved answer at every path, behind the same stack as
/// fake-pve, until killed.
///
/// # Errors
/// When the answer cannot be read or the address bound.
pub async fn serve_bare(answer: &Path, listen: SocketAddr) -> Result<(), Error> {
    let (body, headers) = read_answer(answer)?;
    let id = fake_pve::Identity::self_signed(&[])?;
    let (addr, _stop) = crate::throughput::serve_bare_at(&id, body, headers, listen).await?;
    println!("bare server listening on {addr}");
    std::future::pending::<()>().await;
    Ok(())
}
