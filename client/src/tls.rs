//! TLS: which certificates the client trusts.
//!
//! In order of precedence: a pinned SHA-256 fingerprint (exactly that
//! certificate, whatever its issuer and names: how PVE's self-signed
//! certificates are usually trusted), the explicit insecure switch (any
//! certificate), a CA bundle (only its certificates as roots), and by
//! default the Mozilla roots built into the binary. rustls with the ring
//! provider does the work; only HTTP/1.1 is offered, as pveproxy speaks
//! nothing else.

use std::fmt;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// The checked TLS settings of a [`crate::Config`].
#[derive(Clone)]
pub(crate) struct TlsOptions {
    pub(crate) insecure: bool,
    pub(crate) roots: Option<Vec<CertificateDer<'static>>>,
    pub(crate) fingerprint: Option<[u8; 32]>,
    /// A client certificate chain and its key, for a server (or a proxy
    /// in front of pveproxy) that asks for one.
    pub(crate) identity: Option<ClientIdentity>,
}

/// A client certificate chain and key.
pub(crate) struct ClientIdentity {
    pub(crate) chain: Vec<CertificateDer<'static>>,
    pub(crate) key: rustls::pki_types::PrivateKeyDer<'static>,
}

impl Clone for ClientIdentity {
    fn clone(&self) -> Self {
        Self {
            chain: self.chain.clone(),
            key: self.key.clone_key(),
        }
    }
}

impl ClientIdentity {
    /// Reads a PEM certificate chain and a PEM private key, and checks
    /// that they belong together.
    pub(crate) fn from_pem(cert: &str, key: &str) -> Result<Self> {
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert.as_bytes())
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| Error::Config(format!("client certificate: not PEM ({e})")))?;
        if chain.is_empty() {
            return Err(Error::Config(
                "client certificate: no certificate in the PEM text".into(),
            ));
        }
        let key = rustls::pki_types::PrivateKeyDer::from_pem_slice(key.as_bytes())
            .map_err(|e| Error::Config(format!("client key: not a PEM private key ({e})")))?;
        let provider = rustls::crypto::ring::default_provider();
        let signing = provider
            .key_provider
            .load_private_key(key.clone_key())
            .map_err(|e| Error::Config(format!("client key: {e}")))?;
        rustls::sign::CertifiedKey::new(chain.clone(), signing)
            .keys_match()
            .map_err(|e| {
                Error::Config(format!(
                    "client certificate and key do not belong together ({e})"
                ))
            })?;
        Ok(Self { chain, key })
    }
}

impl fmt::Debug for TlsOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsOptions")
            .field("insecure", &self.insecure)
            .field("ca_bundle_certs", &self.roots.as_ref().map(Vec::len))
            .field(
                "fingerprint",
                &self.fingerprint.map(|f| format_fingerprint(&f)),
            )
            .field("client_certificate", &self.identity.is_some())
            .finish()
    }
}

impl TlsOptions {
    /// Checks the CA bundle and the fingerprint.
    pub(crate) fn new(
        insecure: bool,
        ca_pem: Option<&str>,
        fingerprint: Option<&str>,
    ) -> Result<Self> {
        let roots = match ca_pem {
            None => None,
            Some(pem) => {
                let certs: Vec<CertificateDer<'static>> =
                    CertificateDer::pem_slice_iter(pem.as_bytes())
                        .collect::<std::result::Result<_, _>>()
                        .map_err(|e| {
                            Error::Config(format!("PVE_CA_BUNDLE: not a PEM bundle ({e})"))
                        })?;
                if certs.is_empty() {
                    return Err(Error::Config(
                        "PVE_CA_BUNDLE: no certificate in the bundle".into(),
                    ));
                }
                // Refuse a bundle that rustls cannot use rather than fail
                // every handshake later.
                let mut store = RootCertStore::empty();
                let (_, bad) = store.add_parsable_certificates(certs.iter().cloned());
                if store.is_empty() {
                    return Err(Error::Config(
                        "PVE_CA_BUNDLE: no usable certificate (invalid certificate)".into(),
                    ));
                }
                if bad > 0 {
                    tracing::warn!("{bad} certificate(s) of the CA bundle were skipped");
                }
                Some(certs)
            }
        };
        let fingerprint = fingerprint.map(parse_fingerprint).transpose()?;
        Ok(Self {
            insecure,
            roots,
            fingerprint,
            identity: None,
        })
    }
}

/// Reads `AB:CD:...` (PVE's form) or plain hex.
pub fn parse_fingerprint(s: &str) -> Result<[u8; 32]> {
    let bad = || {
        Error::Config(format!(
            "invalid certificate fingerprint '{s}': expected 32 bytes of SHA-256 in hex"
        ))
    };
    let hex: String = s
        .trim()
        .chars()
        .filter(|c| !matches!(c, ':' | ' ' | '-'))
        .collect();
    if hex.len() != 64 || !hex.is_ascii() {
        return Err(bad());
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(out)
}

/// `AB:CD:...`, upper case, as PVE shows fingerprints.
pub fn format_fingerprint(fp: &[u8]) -> String {
    fp.iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The SHA-256 fingerprint of a DER certificate, as PVE shows it.
pub fn fingerprint_of(der: &[u8]) -> String {
    format_fingerprint(&Sha256::digest(der))
}

/// The rustls configuration for `opts`.
pub(crate) fn client_config(opts: &TlsOptions) -> Result<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Config(format!("TLS: {e}")))?;
    let algs = provider.signature_verification_algorithms;
    let verifier: Arc<dyn ServerCertVerifier> = if let Some(fp) = opts.fingerprint {
        Arc::new(Pinned { fp, algs })
    } else if opts.insecure {
        Arc::new(AcceptAny { algs })
    } else {
        let mut roots = RootCertStore::empty();
        match &opts.roots {
            Some(certs) => {
                roots.add_parsable_certificates(certs.iter().cloned());
            }
            None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        }
        rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|e| Error::Config(format!("TLS: {e}")))?
    };
    let builder = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let mut cfg = match &opts.identity {
        Some(id) => builder
            .with_client_auth_cert(id.chain.clone(), id.key.clone_key())
            .map_err(|e| Error::Config(format!("client certificate: {e}")))?,
        None => builder.with_no_client_auth(),
    };
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(cfg)
}

fn verify_signatures_12(
    algs: &WebPkiSupportedAlgorithms,
    message: &[u8],
    cert: &CertificateDer<'_>,
    dss: &DigitallySignedStruct,
) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
    rustls::crypto::verify_tls12_signature(message, cert, dss, algs)
}

fn verify_signatures_13(
    algs: &WebPkiSupportedAlgorithms,
    message: &[u8],
    cert: &CertificateDer<'_>,
    dss: &DigitallySignedStruct,
) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
    rustls::crypto::verify_tls13_signature(message, cert, dss, algs)
}

/// Accepts exactly one certificate, by fingerprint. The handshake
/// signatures are still checked, so the server must hold its key.
#[derive(Debug)]
struct Pinned {
    fp: [u8; 32],
    algs: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        let got: [u8; 32] = Sha256::digest(end_entity.as_ref()).into();
        if got == self.fp {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::General(format!(
                "certificate fingerprint mismatch: expected {}, got {}",
                format_fingerprint(&self.fp),
                format_fingerprint(&got)
            )))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_signatures_12(&self.algs, message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_signatures_13(&self.algs, message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}

/// Accepts any certificate (the insecure switch).
#[derive(Debug)]
struct AcceptAny {
    algs: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for AcceptAny {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_signatures_12(&self.algs, message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_signatures_13(&self.algs, message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_in_either_form() {
        let pve = "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89";
        let fp = parse_fingerprint(pve).expect("valid");
        assert_eq!(format_fingerprint(&fp), pve);
        let plain = pve.replace(':', "").to_lowercase();
        assert_eq!(parse_fingerprint(&plain).expect("valid"), fp);
        assert!(parse_fingerprint("AB:CD").is_err());
        assert!(parse_fingerprint(&"ZZ".repeat(32)).is_err());
    }
}
