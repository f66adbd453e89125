//! Plain HTTP against the target, for what a typed client hides on
//! purpose: requests without credentials, without or with a wrong CSRF
//! token, the spellings of the `Authorization` header, and the reason
//! phrase PVE puts in the status line. Trusts the target as `pve-client`
//! would: the fake's own certificate, or the `PVE_*` TLS settings.

use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use serde_json::Value;

/// How the target's certificate is trusted.
#[derive(Debug, Clone)]
pub enum Trust {
    /// Exactly these PEM certificates (fake-pve's, or `PVE_CA_BUNDLE`).
    CaPem(String),
    /// The certificate with this SHA-256 fingerprint (`PVE_TLS_FINGERPRINT`).
    Fingerprint(String),
    /// Any certificate (`PVE_INSECURE_SKIP_VERIFY=true`).
    Insecure,
    /// The public web PKI.
    WebPki,
}

/// Why a raw client cannot be built, or a raw request got no answer.
#[derive(Debug, thiserror::Error)]
pub enum RawError {
    /// The CA bundle does not read as PEM certificates.
    #[error("CA bundle: {0}")]
    CaBundle(#[source] reqwest::Error),
    /// The pinned fingerprint is malformed.
    #[error(transparent)]
    Fingerprint(pve_client::Error),
    /// rustls cannot set up its default protocol versions.
    #[error(transparent)]
    Tls(rustls::Error),
    /// The HTTP client cannot be built.
    #[error("HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    /// The request got no answer, or its body could not be read.
    #[error("{method} {url}: {source}")]
    Request {
        /// The method.
        method: Method,
        /// The whole URL.
        url: String,
        /// What the HTTP client answered.
        source: reqwest::Error,
    },
}

/// An HTTP client for one target.
#[derive(Debug, Clone)]
pub struct Raw {
    http: reqwest::Client,
    /// `https://host:port`, without `/api2/json`.
    root: String,
}

/// What came back, as sent.
#[derive(Debug, Clone)]
pub struct RawReply {
    /// The HTTP status.
    pub status: u16,
    /// The reason phrase of the status line.
    pub reason: String,
    /// The body.
    pub text: String,
}

impl RawReply {
    /// The body as JSON, if it is JSON.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_str(&self.text).ok()
    }
}

impl Raw {
    /// A client for the API at `api_url` (`https://host:port/api2/json`).
    ///
    /// # Errors
    /// When the TLS settings cannot be used.
    pub fn new(api_url: &str, trust: &Trust) -> Result<Self, RawError> {
        let root = api_url
            .trim_end_matches('/')
            .trim_end_matches("/api2/json")
            .to_string();
        let mut b = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .user_agent("fake-pve-conformance");
        b = match trust {
            Trust::CaPem(pem) => {
                let mut b = b.tls_built_in_root_certs(false);
                for c in reqwest::Certificate::from_pem_bundle(pem.as_bytes())
                    .map_err(RawError::CaBundle)?
                {
                    b = b.add_root_certificate(c);
                }
                b
            }
            Trust::Insecure => b.danger_accept_invalid_certs(true),
            Trust::Fingerprint(fp) => {
                let want = pve_client::tls::parse_fingerprint(fp).map_err(RawError::Fingerprint)?;
                let provider = Arc::new(rustls::crypto::ring::default_provider());
                let config = rustls::ClientConfig::builder_with_provider(provider.clone())
                    .with_safe_default_protocol_versions()
                    .map_err(RawError::Tls)?
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(Pinned { want, provider }))
                    .with_no_client_auth();
                b.use_preconfigured_tls(config)
            }
            Trust::WebPki => b,
        };
        let http = b.build().map_err(RawError::Client)?;
        Ok(Self { http, root })
    }

    /// Sends `method path` (`path` from `/api2/json` or `/_fake`) with
    /// these headers and, for POST and PUT, this form.
    ///
    /// # Errors
    /// When the target cannot be reached.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        headers: &[(String, String)],
        form: &[(String, String)],
    ) -> Result<RawReply, RawError> {
        let url = format!("{}{path}", self.root);
        let mut rb = self.http.request(method.clone(), &url);
        for (k, v) in headers {
            rb = rb.header(k.as_str(), v.as_str());
        }
        if !form.is_empty() {
            rb = if method == Method::GET || method == Method::DELETE {
                rb.query(form)
            } else {
                rb.form(form)
            };
        }
        let failed = |source| RawError::Request {
            method: method.clone(),
            url: url.clone(),
            source,
        };
        let r = rb.send().await.map_err(failed)?;
        let status = r.status().as_u16();
        let reason = r
            .extensions()
            .get::<hyper::ext::ReasonPhrase>()
            .map(|p| String::from_utf8_lossy(p.as_bytes()).into_owned())
            .or_else(|| r.status().canonical_reason().map(str::to_string))
            .unwrap_or_default();
        let text = r.text().await.map_err(failed)?;
        Ok(RawReply {
            status,
            reason,
            text,
        })
    }
}

/// Accepts exactly the certificate with the pinned fingerprint, as
/// `pve-client` does with `PVE_TLS_FINGERPRINT`.
#[derive(Debug)]
struct Pinned {
    want: [u8; 32],
    provider: Arc<rustls::crypto::CryptoProvider>,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let got = pve_client::tls::fingerprint_of(end_entity.as_ref());
        if got == pve_client::tls::format_fingerprint(&self.want) {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::General(format!(
                "certificate fingerprint {got} is not the pinned one"
            )))
        }
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
