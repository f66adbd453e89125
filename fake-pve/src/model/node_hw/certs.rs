//! The node's TLS certificates as `PVE::Certificate::get_certificate_info`
//! reads them, and the checks of a custom certificate's upload
//! (pve-manager `API2/Certificates.pm`, `CertHelpers.pm`; pve-common
//! `Certificate.pm`).

use super::CustomCert;
use crate::model::{Error, Result};

/// SHA-256 of a DER certificate, upper-case hex pairs joined by `:`, as
/// PVE shows a certificate's `fingerprint`.
pub fn fingerprint(der: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(der)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The `/`-separated one-line name (`X509_NAME_oneline`).
fn oneline(name: &x509_parser::x509::X509Name<'_>) -> String {
    let mut out = String::new();
    for attr in name.iter_attributes() {
        let oid = attr.attr_type().to_id_string();
        let short = match oid.as_str() {
            "2.5.4.3" => "CN".to_string(),
            "2.5.4.6" => "C".to_string(),
            "2.5.4.7" => "L".to_string(),
            "2.5.4.8" => "ST".to_string(),
            "2.5.4.10" => "O".to_string(),
            "2.5.4.11" => "OU".to_string(),
            "1.2.840.113549.1.9.1" => "emailAddress".to_string(),
            other => other.to_string(),
        };
        let value = attr.as_str().unwrap_or_default();
        out.push_str(&format!("/{short}={value}"));
    }
    out
}

/// The PEM blocks of a text, in order (`-----BEGIN <label>-----`).
fn pem_blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN ") {
        let after = &rest[start + 11..];
        let Some(end_label) = after.find("-----") else {
            break;
        };
        let label = after[..end_label].to_string();
        let footer = format!("-----END {label}-----");
        let Some(end) = rest[start..].find(&footer) else {
            break;
        };
        let block = &rest[start..start + end + footer.len()];
        out.push((label, format!("{block}\n")));
        rest = &rest[start + end + footer.len()..];
    }
    out
}

/// What `get_certificate_info` reads of a certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertInfo {
    /// The file it was read from (`pve-ssl.pem`).
    pub filename: String,
    /// Its SHA-256 fingerprint, colon-separated.
    pub fingerprint: String,
    /// The subject, one line (`/CN=pve.example.com`).
    pub subject: String,
    /// The issuer, one line.
    pub issuer: String,
    /// Valid from, epoch seconds.
    pub notbefore: i64,
    /// Valid until, epoch seconds.
    pub notafter: i64,
    /// The DNS names and IP addresses of its subject alternative names.
    pub san: Vec<String>,
    /// The certificate's PEM block.
    pub pem: String,
    /// `rsaEncryption`, `id-ecPublicKey`, `ED25519` or `UNDEF`.
    pub key_type: &'static str,
    /// The public key's size in bits.
    pub key_bits: usize,
}

/// `get_certificate_info` of the first certificate of `pem`.
///
/// # Errors
/// `unable to read certificate from '<file>'` when there is none.
pub fn certificate_info(pem: &str, filename: &str) -> Result<CertInfo> {
    let unreadable = || Error::failed(format!("unable to read certificate from '{filename}'"));
    let (label, block) = pem_blocks(pem)
        .into_iter()
        .find(|(l, _)| l == "CERTIFICATE")
        .ok_or_else(unreadable)?;
    let _ = label;
    let (_, parsed) =
        x509_parser::pem::parse_x509_pem(block.as_bytes()).map_err(|_| unreadable())?;
    let cert = parsed.parse_x509().map_err(|_| unreadable())?;
    let fingerprint = fingerprint(&parsed.contents);
    let mut san = Vec::new();
    if let Ok(Some(ext)) = cert.subject_alternative_name() {
        for name in &ext.value.general_names {
            match name {
                x509_parser::extensions::GeneralName::DNSName(d) => san.push((*d).to_string()),
                x509_parser::extensions::GeneralName::IPAddress(ip) => match ip.len() {
                    4 => san.push(format!("{}.{}.{}.{}", ip[0], ip[1], ip[2], ip[3])),
                    16 => san.push(
                        ip.chunks(2)
                            .map(|c| format!("{:02x}{:02x}", c[0], c[1]))
                            .collect::<Vec<_>>()
                            .join(":"),
                    ),
                    _ => {}
                },
                _ => {}
            }
        }
    }
    let spki = cert.public_key();
    let key_type = match spki.algorithm.algorithm.to_id_string().as_str() {
        "1.2.840.113549.1.1.1" => "rsaEncryption",
        "1.2.840.10045.2.1" => "id-ecPublicKey",
        "1.3.101.112" => "ED25519",
        _ => "UNDEF",
    };
    let bits = spki.parsed().map_or(0, |k| k.key_size());
    Ok(CertInfo {
        filename: filename.to_string(),
        fingerprint,
        subject: oneline(cert.subject()),
        issuer: oneline(cert.issuer()),
        notbefore: cert.validity().not_before.timestamp(),
        notafter: cert.validity().not_after.timestamp(),
        san,
        pem: block,
        key_type,
        key_bits: bits,
    })
}

/// The custom certificate an upload leaves (`set_cert_files`): the
/// chain and key stripped of leading text, the key matching the
/// certificate.
///
/// # Errors
/// `key` missing without an existing key (a parameter error), an
/// existing certificate without `force`, an unreadable certificate or a
/// key that does not match, with PVE's messages.
pub fn upload(
    existing: Option<&CustomCert>,
    certificates: &str,
    key: Option<&str>,
    force: bool,
) -> Result<(CustomCert, CertInfo)> {
    let blocks = pem_blocks(certificates);
    let chain: String = blocks.iter().map(|(_, b)| b.as_str()).collect();
    let key = match key {
        Some(k) => pem_blocks(k)
            .into_iter()
            .next()
            .map(|(_, b)| b)
            .unwrap_or_else(|| k.to_string()),
        None => match existing {
            Some(c) => c.key.clone(),
            None => {
                return Err(Error::invalid(
                    "key",
                    "Attempted to upload custom certificate without (existing) key.",
                ));
            }
        },
    };
    let failed = |m: &str| Error::failed(format!("Setting certificate files failed - {m}"));
    if existing.is_some() && !force {
        return Err(failed(
            "Custom certificate file exists but force flag is not set.",
        ));
    }
    let info = certificate_info(&chain, "pveproxy-ssl.pem").map_err(|e| failed(e.message()))?;
    let matches = rcgen::KeyPair::from_pem(&key).ok().is_some_and(|kp| {
        use rcgen::PublicKeyData;
        let (_, parsed) = match x509_parser::pem::parse_x509_pem(chain.as_bytes()) {
            Ok(p) => p,
            Err(_) => return false,
        };
        parsed
            .parse_x509()
            .is_ok_and(|cert| cert.public_key().subject_public_key.data.as_ref() == kp.der_bytes())
    });
    if !matches {
        return Err(failed(
            "key does not match the certificate (chain) (No such file or directory)",
        ));
    }
    Ok((CustomCert { pem: chain, key }, info))
}
