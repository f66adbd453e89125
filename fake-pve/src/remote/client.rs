//! The source's connections to the target cluster: its API over HTTPS
//! as `PVE::APIClient::LWP` calls it (an API token, the certificate
//! checked against a pinned fingerprint, or else against the system's
//! CAs and the host name), and the websockets of the tunnel as
//! `proxmox-websocket-tunnel` opens them (the same check, the token as
//! given in `Authorization`).
//!
//! Failures read as the client's exceptions print: `500 Can't connect to
//! <host>:<port> (Connection refused)`, `fingerprint '<fp>' not verified,
//! abort!`, or the target's own `<code> <reason>` with its parameter
//! errors one per line.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::model::mtunnel::Endpoint;
use crate::model::node_hw::certs::fingerprint;
use crate::ws;

/// How long an API call may take (`PVE::APIClient::LWP`'s default
/// timeout).
const TIMEOUT: Duration = Duration::from_secs(60);

/// The certificate check of `PVE::APIClient::LWP`: with a fingerprint
/// pinned, the leaf must have it (nothing else counts); without one, the
/// chain must lead to a CA of the system store and name the host. A
/// leaf refused is remembered (`last_unknown`), for the refusal to name
/// its fingerprint.
#[derive(Debug)]
pub(crate) struct Verifier {
    pinned: Option<String>,
    system: Arc<dyn ServerCertVerifier>,
    provider: Arc<rustls::crypto::CryptoProvider>,
    unknown: Mutex<Option<String>>,
}

impl Verifier {
    /// The check of `fingerprint` (upper-case) when one is pinned, else
    /// of the system's CAs and the host name.
    ///
    /// # Errors
    /// When the system's check cannot be made.
    pub(crate) fn new(
        fingerprint: Option<String>,
        provider: Arc<rustls::crypto::CryptoProvider>,
    ) -> Result<Arc<Self>, String> {
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        let system = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            provider.clone(),
        )
        .build()
        .map_err(|e| e.to_string())?;
        Ok(Arc::new(Self {
            pinned: fingerprint,
            system,
            provider,
            unknown: Mutex::new(None),
        }))
    }

    /// The fingerprint of the certificate refused last, taken.
    pub(crate) fn refused(&self) -> Option<String> {
        self.unknown.lock().ok().and_then(|mut u| u.take())
    }
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let fp = fingerprint(end_entity);
        let trusted = match &self.pinned {
            Some(pinned) => *pinned == fp,
            None => self
                .system
                .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
                .is_ok(),
        };
        if trusted {
            return Ok(ServerCertVerified::assertion());
        }
        if let Ok(mut u) = self.unknown.lock() {
            *u = Some(fp);
        }
        Err(rustls::Error::General("certificate verify failed".into()))
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The target's API, as the source's migration calls it.
pub(crate) struct RemoteApi {
    endpoint: Endpoint,
    verifier: Arc<Verifier>,
    tls: Arc<rustls::ClientConfig>,
    http: reqwest::Client,
}

impl RemoteApi {
    /// A client of `endpoint`, its certificate checked against
    /// `fingerprint` (upper-case) when one is pinned.
    ///
    /// # Errors
    /// When no TLS client can be made.
    pub(crate) fn new(endpoint: &Endpoint, fingerprint: Option<String>) -> Result<Self, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = Verifier::new(fingerprint, provider.clone())?;
        let mut tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .dangerous()
            .with_custom_certificate_verifier(verifier.clone())
            .with_no_client_auth();
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        let http = reqwest::Client::builder()
            .use_preconfigured_tls(tls.clone())
            .no_proxy()
            .http1_only()
            .timeout(TIMEOUT)
            .connect_timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Self {
            endpoint: endpoint.clone(),
            verifier,
            tls: Arc::new(tls),
            http,
        })
    }

    fn authority(&self) -> String {
        let host = &self.endpoint.host;
        if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]:{}", self.endpoint.port)
        } else {
            format!("{host}:{}", self.endpoint.port)
        }
    }

    /// The refusal of a connection that failed: the fingerprint of a
    /// certificate that did not pass, else LWP's `Can't connect`.
    fn connect_failure(&self, reason: &str) -> String {
        if let Some(fp) = self.verifier.refused() {
            return format!("fingerprint '{fp}' not verified, abort!\n");
        }
        format!("500 Can't connect to {} ({reason})\n", self.authority())
    }

    /// `GET /api2/json<path>`: its `data`.
    ///
    /// # Errors
    /// The client's exception, as text.
    pub(crate) async fn get(&self, path: &str) -> Result<Value, String> {
        self.call(reqwest::Method::GET, path, &[]).await
    }

    /// `POST /api2/json<path>` with form parameters: its `data`.
    ///
    /// # Errors
    /// The client's exception, as text.
    pub(crate) async fn post(
        &self,
        path: &str,
        params: &[(&str, String)],
    ) -> Result<Value, String> {
        self.call(reqwest::Method::POST, path, params).await
    }

    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        params: &[(&str, String)],
    ) -> Result<Value, String> {
        let url = format!("https://{}/api2/json{path}", self.authority());
        let mut rb = self
            .http
            .request(method.clone(), &url)
            .header("Authorization", self.endpoint.authorization());
        if method == reqwest::Method::GET {
            if !params.is_empty() {
                rb = rb.query(params);
            }
        } else {
            let body: String = form_urlencoded::Serializer::new(String::new())
                .extend_pairs(params.iter().map(|(k, v)| (*k, v.as_str())))
                .finish();
            rb = rb
                .header("Content-Type", "application/x-www-form-urlencoded")
                .body(body);
        }
        let resp = match rb.send().await {
            Ok(r) => r,
            Err(e) => return Err(self.connect_failure(&io_reason(&e))),
        };
        let code = resp.status().as_u16();
        let reason = resp
            .extensions()
            .get::<hyper::ext::ReasonPhrase>()
            .map(|r| String::from_utf8_lossy(r.as_bytes()).into_owned())
            .or_else(|| resp.status().canonical_reason().map(str::to_string))
            .unwrap_or_default();
        let json_type = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.contains("application/json"));
        let body = resp.bytes().await.unwrap_or_default();
        if (200..300).contains(&code) {
            if !json_type {
                return Err(format!("{code} got unexpected content type\n"));
            }
            let v: Value = serde_json::from_slice(&body).map_err(|e| format!("{e}\n"))?;
            return Ok(v.get("data").cloned().unwrap_or(Value::Null));
        }
        let mut msg = format!("{code} {reason}\n");
        if json_type
            && let Ok(v) = serde_json::from_slice::<Value>(&body)
            && let Some(errors) = v.get("errors").and_then(Value::as_object)
        {
            for (k, e) in errors {
                let e = e.as_str().map_or_else(|| e.to_string(), str::to_string);
                msg.push_str(&format!("{k}: {e}"));
                if !msg.ends_with('\n') {
                    msg.push('\n');
                }
            }
        }
        Err(msg)
    }

    /// Opens `GET /api2/json<path_and_query>` as a websocket, as
    /// `proxmox-websocket-tunnel` does (the token in `Authorization` as
    /// the endpoint gives it).
    ///
    /// # Errors
    /// The connection, the TLS handshake or the upgrade refused, as text.
    pub(crate) async fn websocket(&self, path_and_query: &str) -> Result<WsClient, String> {
        let addr = (self.endpoint.host.as_str(), self.endpoint.port);
        let tcp = tokio::time::timeout(
            Duration::from_secs(10),
            tokio::net::TcpStream::connect(addr),
        )
        .await
        .map_err(|_| self.connect_failure("Connection timed out"))?
        .map_err(|e| self.connect_failure(&io_text(&e)))?;
        let name = match self.endpoint.host.parse::<std::net::IpAddr>() {
            Ok(ip) => ServerName::IpAddress(ip.into()),
            Err(_) => ServerName::try_from(self.endpoint.host.clone())
                .map_err(|e| format!("invalid host name - {e}\n"))?,
        };
        let mut tls = tokio_rustls::TlsConnector::from(self.tls.clone())
            .connect(name, tcp)
            .await
            .map_err(|e| self.connect_failure(&io_text(&e)))?;
        let mut key = [0u8; 16];
        rand::RngCore::fill_bytes(&mut rand::rng(), &mut key);
        let key = base64::engine::general_purpose::STANDARD.encode(key);
        let req = format!(
            "GET /api2/json{path_and_query} HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: {key}\r\nAuthorization: {}\r\n\r\n",
            self.authority(),
            self.endpoint.apitoken
        );
        tls.write_all(req.as_bytes())
            .await
            .map_err(|e| format!("failed to send websocket request - {e}\n"))?;
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            if buf.len() > 64 * 1024 {
                return Err("websocket answer too long\n".into());
            }
            let n = tokio::time::timeout(TIMEOUT, tls.read(&mut chunk))
                .await
                .map_err(|_| "websocket answer timed out\n".to_string())?
                .map_err(|e| format!("failed to read websocket answer - {e}\n"))?;
            if n == 0 {
                return Err("connection closed before the websocket upgrade\n".into());
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_string();
        let status_line = head.lines().next().unwrap_or_default();
        let status = status_line.get(9..12).unwrap_or_default();
        if status != "101" {
            let reason = status_line.get(9..).unwrap_or(status_line).trim();
            return Err(format!("{reason}\n"));
        }
        Ok(WsClient {
            io: Box::new(tls),
            buf: buf[end..].to_vec(),
        })
    }
}

/// Why a request failed to connect, in LWP's words.
fn io_reason(e: &reqwest::Error) -> String {
    let mut source: Option<&dyn std::error::Error> = Some(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return io_text(io);
        }
        source = s.source();
    }
    if e.is_timeout() {
        return "Connection timed out".into();
    }
    "SSL connect attempt failed".into()
}

/// An I/O error as the C library prints it.
fn io_text(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "Connection refused".into(),
        std::io::ErrorKind::TimedOut => "Connection timed out".into(),
        std::io::ErrorKind::ConnectionReset => "Connection reset by peer".into(),
        _ => {
            let t = e.to_string();
            match t.find(" (os error") {
                Some(i) => t[..i].to_string(),
                None => t,
            }
        }
    }
}

trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Io for T {}

/// A websocket as a client holds it: masked frames out, the server's
/// read back.
pub(crate) struct WsClient {
    io: Box<dyn Io>,
    buf: Vec<u8>,
}

impl WsClient {
    /// Sends `data` as binary frames.
    ///
    /// # Errors
    /// When the connection is gone.
    pub(crate) async fn send(&mut self, data: &[u8]) -> std::io::Result<()> {
        for chunk in data.chunks(ws::MAX_PAYLOAD) {
            let mut mask = [0u8; 4];
            rand::RngCore::fill_bytes(&mut rand::rng(), &mut mask);
            self.io.write_all(&ws::client_frame(2, chunk, mask)).await?;
        }
        Ok(())
    }

    /// The next data the server sent; none once it closed.
    pub(crate) async fn recv(&mut self, timeout: Duration) -> Option<Vec<u8>> {
        let mut chunk = vec![0u8; 16 * 1024];
        loop {
            if let Some((op, payload, used)) = ws::read_server_frame(&self.buf) {
                self.buf.drain(..used);
                match op {
                    1 | 2 => return Some(payload),
                    8 => return None,
                    9 => {
                        let mut mask = [0u8; 4];
                        rand::RngCore::fill_bytes(&mut rand::rng(), &mut mask);
                        let _ = self
                            .io
                            .write_all(&ws::client_frame(10, &payload, mask))
                            .await;
                        continue;
                    }
                    _ => continue,
                }
            }
            let n = tokio::time::timeout(timeout, self.io.read(&mut chunk))
                .await
                .ok()?
                .ok()?;
            if n == 0 {
                return None;
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Closes its side and waits (a while) for the server to close its
    /// own: the server has then dealt with all that was sent.
    pub(crate) async fn close(mut self) {
        let _ = self
            .io
            .write_all(&ws::client_frame(8, &1000u16.to_be_bytes(), [0, 0, 0, 0]))
            .await;
        while self.recv(Duration::from_secs(30)).await.is_some() {}
        let _ = self.io.shutdown().await;
    }
}
