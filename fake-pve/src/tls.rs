//! TLS as pveproxy offers it: HTTP/1.1 only in ALPN, the node's
//! `pve-ssl.pem` with the cluster CA that signed it ([`crate::pki`])
//! unless PEM files are given.

use std::path::Path;
use std::sync::{Arc, PoisonError, RwLock};

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use crate::Error;

/// A server certificate with its key and fingerprint.
pub struct Identity {
    /// The certificate chain, leaf first.
    pub chain: Vec<CertificateDer<'static>>,
    /// The private key.
    pub key: PrivateKeyDer<'static>,
    /// The leaf certificate's PEM text.
    pub cert_pem: String,
    /// The PEM text a client verifies the server against: the CA's for a
    /// node certificate, else the certificate file's.
    pub trust_pem: String,
}

impl Identity {
    /// A new self-signed certificate for `localhost`, `127.0.0.1`, `::1`
    /// and the given node names.
    ///
    /// # Errors
    /// When the certificate cannot be generated.
    pub fn self_signed(names: &[String]) -> Result<Self, Error> {
        let mut sans = vec![
            "localhost".to_string(),
            "127.0.0.1".to_string(),
            "::1".to_string(),
        ];
        sans.extend(names.iter().cloned());
        let ck = rcgen::generate_simple_self_signed(sans).map_err(|e| Error::Tls(e.to_string()))?;
        let cert_pem = ck.cert.pem();
        Ok(Self {
            chain: vec![ck.cert.der().clone()],
            key: PrivateKeyDer::Pkcs8(ck.signing_key.serialize_der().into()),
            trust_pem: cert_pem.clone(),
            cert_pem,
        })
    }

    /// A node's certificate (`pve-ssl.pem`) served with the CA that
    /// signed it, as pveproxy serves it.
    ///
    /// # Errors
    /// When either is not a PEM certificate, or the key is not a key.
    pub fn issued(node: &crate::pki::Issued, ca: &crate::pki::Issued) -> Result<Self, Error> {
        let der = |pem: &str| {
            CertificateDer::from_pem_slice(pem.as_bytes()).map_err(|e| Error::Tls(e.to_string()))
        };
        Ok(Self {
            chain: vec![der(&node.cert)?, der(&ca.cert)?],
            key: PrivateKeyDer::from_pem_slice(node.key.as_bytes())
                .map_err(|e| Error::Tls(e.to_string()))?,
            cert_pem: node.cert.clone(),
            trust_pem: ca.cert.clone(),
        })
    }

    /// The self-signed certificate kept in `dir` (`cert.pem`, `key.pem`),
    /// made and saved there on first use.
    ///
    /// # Errors
    /// When the files cannot be read or written, or do not hold a
    /// certificate and key.
    pub fn kept_in(dir: &Path, names: &[String]) -> Result<Self, Error> {
        let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
        if cert.exists() && key.exists() {
            return Self::from_pem_files(&cert, &key);
        }
        let id = Self::self_signed(names)?;
        let key_pem = pem("PRIVATE KEY", id.key.secret_der());
        let write = |path: &Path, text: &str| {
            // The key is the data directory's owner's alone.
            crate::persist::write_private(path, text.as_bytes())
                .map_err(|e| Error::Tls(format!("{}: {e}", path.display())))
        };
        write(&key, &key_pem)?;
        write(&cert, &id.cert_pem)?;
        Ok(id)
    }

    /// Reads a certificate chain and key from PEM files.
    ///
    /// # Errors
    /// When a file cannot be read or holds no certificate or key.
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<Self, Error> {
        let cert_pem = std::fs::read_to_string(cert)
            .map_err(|e| Error::Tls(format!("{}: {e}", cert.display())))?;
        let chain: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(cert_pem.as_bytes())
                .collect::<Result<_, _>>()
                .map_err(|e| Error::Tls(format!("{}: {e}", cert.display())))?;
        if chain.is_empty() {
            return Err(Error::Tls(format!(
                "{}: no certificate found",
                cert.display()
            )));
        }
        let key = PrivateKeyDer::from_pem_file(key)
            .map_err(|e| Error::Tls(format!("{}: {e}", key.display())))?;
        Ok(Self {
            chain,
            key,
            trust_pem: cert_pem.clone(),
            cert_pem,
        })
    }

    /// The SHA-256 fingerprint of the leaf, as PVE shows it
    /// (`AB:CD:...`).
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.chain[0])
    }

    /// The rustls configuration: TLS 1.2 and 1.3, ALPN `http/1.1`.
    ///
    /// # Errors
    /// When the key does not match the certificate.
    pub fn server_config(&self) -> Result<Arc<ServerConfig>, Error> {
        Ok(served_config(self.served()?))
    }

    /// What the listener serves, starting with this certificate.
    ///
    /// # Errors
    /// When the key is not one rustls can sign with, or does not match
    /// the certificate.
    pub fn served(&self) -> Result<Arc<Served>, Error> {
        let first = certified(self.chain.clone(), self.key.clone_key()).map_err(Error::Tls)?;
        Ok(Arc::new(Served {
            first: Arc::clone(&first),
            current: RwLock::new(first),
        }))
    }
}

/// The rustls configuration of a listener serving `served`: TLS 1.2 and
/// 1.3, ALPN `http/1.1`.
pub fn served_config(served: Arc<Served>) -> Arc<ServerConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap_or_else(|_| unreachable!("ring offers TLS 1.2 and 1.3"))
        .with_no_client_auth()
        .with_cert_resolver(served);
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(cfg)
}

/// A certificate chain and its key, as rustls serves them.
fn certified(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<Arc<CertifiedKey>, String> {
    let provider = rustls::crypto::ring::default_provider();
    let signer = provider
        .key_provider
        .load_private_key(key)
        .map_err(|e| e.to_string())?;
    let ck = CertifiedKey::new(chain, signer);
    ck.keys_match().map_err(|e| e.to_string())?;
    Ok(Arc::new(ck))
}

/// The certificate a TLS listener serves: the one it started with, or a
/// node's custom certificate once pveproxy would have been restarted to
/// serve it (`restart` of `certificates/custom`). New connections get
/// the one served at their handshake.
#[derive(Debug)]
pub struct Served {
    first: Arc<CertifiedKey>,
    current: RwLock<Arc<CertifiedKey>>,
}

impl Served {
    /// Serves the PEM chain `pem` with its key `key` from now on.
    ///
    /// # Errors
    /// When they are not a certificate chain and a matching key.
    pub fn serve_pem(&self, pem: &str, key: &str) -> Result<(), String> {
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(pem.as_bytes())
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        if chain.is_empty() {
            return Err("no certificate".into());
        }
        let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).map_err(|e| e.to_string())?;
        let ck = certified(chain, key)?;
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = ck;
        Ok(())
    }

    /// Serves the certificate the listener started with again.
    pub fn serve_first(&self) {
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::clone(&self.first);
    }

    /// The SHA-256 fingerprint of the certificate served now.
    pub fn fingerprint(&self) -> String {
        let current = self.current.read().unwrap_or_else(PoisonError::into_inner);
        current
            .cert
            .first()
            .map(|c| fingerprint(c))
            .unwrap_or_default()
    }
}

impl ResolvesServerCert for Served {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(Arc::clone(
            &self.current.read().unwrap_or_else(PoisonError::into_inner),
        ))
    }
}

/// SHA-256 of a DER certificate, upper-case hex pairs joined by `:`
/// (the model's form of a fingerprint, which a node's certificate
/// information shows too).
pub use crate::model::node_hw::certs::fingerprint;

/// PEM text of a DER object.
fn pem(label: &str, der: &[u8]) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(chunk));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}
