//! The cluster's certificates as PVE makes them when a cluster is set
//! up (pve-cluster `PVE::Cluster::Setup`): one CA per cluster,
//! `pve-root-ca.pem` (RSA 4096, `/CN=Proxmox Virtual Environment/OU=<uuid>/O=PVE Cluster Manager CA`,
//! ten years from yesterday), and per node a `pve-ssl.pem` it signs
//! (RSA 2048, `/OU=PVE Cluster Node/O=Proxmox Virtual Environment/CN=<fqdn>`,
//! alternative names `127.0.0.1`, `::1`, `localhost`, the node's address,
//! its name and its fully qualified name, two years from yesterday).
//!
//! They are made when first needed and, with a data directory, kept in
//! its `pki/` (`pve-root-ca.pem`, `pve-root-ca.key`,
//! `nodes/<node>/pve-ssl.pem`, `nodes/<node>/pve-ssl.key`), so that a
//! world keeps its certificates across restarts. RSA keys take a while to
//! make (hundreds of milliseconds for 4096 bits): a process makes each
//! key once ([`rsa_key`]) and the worlds it serves one after another
//! share them, each with certificates of its own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, PKCS_RSA_SHA256, RsaKeySize, SanType, SerialNumber,
};

/// The CA certificate's file name.
pub const CA_FILE: &str = "pve-root-ca.pem";
/// A node certificate's file name.
pub const NODE_FILE: &str = "pve-ssl.pem";

/// A certificate and its private key, both PEM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issued {
    /// The certificate.
    pub cert: String,
    /// Its private key (PKCS#8).
    pub key: String,
}

/// What a node's certificate names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeNames<'a> {
    /// The node name (`pve`).
    pub name: &'a str,
    /// Its address (`/cluster/status`'s `ip`).
    pub ip: &'a str,
    /// The `search` domain of its `/etc/resolv.conf`, if any.
    pub domain: Option<&'a str>,
}

impl NodeNames<'_> {
    /// The common name: the node name with its domain.
    pub fn fqdn(&self) -> String {
        match self.domain {
            Some(d) if !d.is_empty() => format!("{}.{d}", self.name),
            _ => self.name.to_string(),
        }
    }
}

/// The cluster CA and the node certificates of one world.
#[derive(Debug, Default)]
pub struct Pki {
    /// Where they are kept, when they are.
    dir: Option<PathBuf>,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    ca: Option<Issued>,
    nodes: BTreeMap<String, Issued>,
}

/// Seconds in a day.
const DAY: i64 = 86_400;

impl Pki {
    /// Certificates kept in memory only.
    pub fn in_memory() -> Self {
        Self::default()
    }

    /// Certificates kept in `dir` (the data directory's `pki/`): those
    /// already there are read.
    ///
    /// # Errors
    /// When a file there cannot be read.
    pub fn kept_in(dir: &Path) -> Result<Self, String> {
        let read = |cert: PathBuf, key: PathBuf| -> Result<Option<Issued>, String> {
            if !(cert.exists() && key.exists()) {
                return Ok(None);
            }
            let text =
                |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
            Ok(Some(Issued {
                cert: text(&cert)?,
                key: text(&key)?,
            }))
        };
        let mut inner = Inner {
            ca: read(dir.join(CA_FILE), dir.join("pve-root-ca.key"))?,
            nodes: BTreeMap::new(),
        };
        if let Ok(entries) = std::fs::read_dir(dir.join("nodes")) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let path = entry.path();
                if let Some(issued) = read(path.join(NODE_FILE), path.join("pve-ssl.key"))? {
                    inner.nodes.insert(name, issued);
                }
            }
        }
        Ok(Self {
            dir: Some(dir.to_path_buf()),
            inner: Mutex::new(inner),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The cluster CA (`pve-root-ca.pem`), made at `now` (epoch seconds)
    /// if there is none yet.
    ///
    /// # Errors
    /// When it cannot be made or kept.
    pub fn ca(&self, now: i64) -> Result<Issued, String> {
        let mut inner = self.lock();
        self.ca_locked(&mut inner, now)
    }

    fn ca_locked(&self, inner: &mut Inner, now: i64) -> Result<Issued, String> {
        if let Some(ca) = &inner.ca {
            return Ok(ca.clone());
        }
        let ca = make_ca(now, &uuid::Uuid::new_v4().to_string())?;
        if let Some(dir) = &self.dir {
            keep(dir, CA_FILE, "pve-root-ca.key", &ca)?;
        }
        inner.ca = Some(ca.clone());
        Ok(ca)
    }

    /// `node`'s `pve-ssl.pem`, made at `now` and signed by the CA if it
    /// has none yet.
    ///
    /// # Errors
    /// When it cannot be made or kept, or the name cannot be a file's.
    pub fn node(&self, node: &NodeNames<'_>, now: i64) -> Result<Issued, String> {
        let mut inner = self.lock();
        if let Some(c) = inner.nodes.get(node.name) {
            return Ok(c.clone());
        }
        if node.name.is_empty() || node.name.contains(['/', '\\']) || node.name.starts_with('.') {
            return Err(format!("invalid node name '{}'", node.name));
        }
        let slot = inner.nodes.len();
        let ca = if inner.ca.is_some() {
            self.ca_locked(&mut inner, now)?
        } else {
            // The node's key is made while the CA's is.
            std::thread::scope(|s| {
                let key = s.spawn(|| rsa_key(2048, slot));
                let ca = self.ca_locked(&mut inner, now);
                let _ = key.join();
                ca
            })?
        };
        let serial = slot as u64 + 1;
        let cert = make_node_cert(&ca, node, now, serial, slot)?;
        if let Some(dir) = &self.dir {
            let sub = dir.join("nodes").join(node.name);
            keep(&sub, NODE_FILE, "pve-ssl.key", &cert)?;
        }
        inner.nodes.insert(node.name.to_string(), cert.clone());
        Ok(cert)
    }
}

/// Writes a certificate and its key into `dir` (made the owner's alone).
fn keep(dir: &Path, cert: &str, key: &str, issued: &Issued) -> Result<(), String> {
    crate::persist::make_private(dir).map_err(|e| e.to_string())?;
    for (name, text) in [(key, &issued.key), (cert, &issued.cert)] {
        let path = dir.join(name);
        crate::persist::write_private(&path, text.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// An RSA key of `bits` bits, PEM: the process's `slot`th of that size,
/// made on first use.
pub(crate) fn rsa_key(bits: usize, slot: usize) -> Result<String, String> {
    type Slot = Arc<OnceLock<Result<String, String>>>;
    static POOL: Mutex<BTreeMap<(usize, usize), Slot>> = Mutex::new(BTreeMap::new());
    let cell = Arc::clone(
        POOL.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry((bits, slot))
            .or_default(),
    );
    // Servers starting together wait for one key rather than each make
    // their own; keys of other slots are made meanwhile.
    cell.get_or_init(|| {
        let size = if bits >= 4096 {
            RsaKeySize::_4096
        } else {
            RsaKeySize::_2048
        };
        KeyPair::generate_rsa_for(&PKCS_RSA_SHA256, size)
            .map(|k| k.serialize_pem())
            .map_err(|e| format!("unable to generate RSA key: {e}"))
    })
    .clone()
}

/// The time `days` days after yesterday, as the certificates are dated
/// (PVE runs openssl under `faketime yesterday`).
fn from_yesterday(now: i64, days: i64) -> Result<time::OffsetDateTime, String> {
    time::OffsetDateTime::from_unix_timestamp(now - DAY + days * DAY).map_err(|e| e.to_string())
}

fn rsa_pair(bits: usize, slot: usize) -> Result<KeyPair, String> {
    let pem = rsa_key(bits, slot)?;
    KeyPair::from_pem_and_sign_algo(&pem, &PKCS_RSA_SHA256).map_err(|e| e.to_string())
}

/// A new cluster CA with `ou` as its organizational unit.
fn make_ca(now: i64, ou: &str) -> Result<Issued, String> {
    let key = rsa_pair(4096, 0)?;
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, "Proxmox Virtual Environment");
    dn.push(DnType::OrganizationalUnitName, ou);
    dn.push(DnType::OrganizationName, "PVE Cluster Manager CA");
    params.distinguished_name = dn;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params.not_before = from_yesterday(now, 0)?;
    params.not_after = from_yesterday(now, 3650)?;
    params.serial_number = Some(SerialNumber::from_slice(
        &rand::random::<[u8; 8]>().map(|b| b & 0x7f),
    ));
    let cert = params.self_signed(&key).map_err(|e| e.to_string())?;
    Ok(Issued {
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

/// A node certificate signed by `ca`, with serial number `serial`.
fn make_node_cert(
    ca: &Issued,
    node: &NodeNames<'_>,
    now: i64,
    serial: u64,
    slot: usize,
) -> Result<Issued, String> {
    let ca_key =
        KeyPair::from_pem_and_sign_algo(&ca.key, &PKCS_RSA_SHA256).map_err(|e| e.to_string())?;
    let ca_notafter = crate::model::node_hw::certs::certificate_info(&ca.cert, CA_FILE)
        .map_err(|e| e.message().to_string())?
        .notafter;
    let days_left = (ca_notafter - now) / DAY;
    if days_left < 14 {
        return Err("CA expires in less than 2 weeks, unable to generate certificate.".into());
    }
    let days = (days_left - 2).min(2 * 365);
    let issuer = Issuer::from_ca_cert_pem(&ca.cert, ca_key).map_err(|e| e.to_string())?;
    let key = rsa_pair(2048, slot)?;
    let fqdn = node.fqdn();
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::OrganizationalUnitName, "PVE Cluster Node");
    dn.push(DnType::OrganizationName, "Proxmox Virtual Environment");
    dn.push(DnType::CommonName, fqdn.as_str());
    params.distinguished_name = dn;
    let ip = |s: &str| {
        s.parse()
            .map(SanType::IpAddress)
            .map_err(|_| format!("invalid IP address '{s}'"))
    };
    let dns = |s: &str| {
        s.to_string()
            .try_into()
            .map(SanType::DnsName)
            .map_err(|_| format!("invalid DNS name '{s}'"))
    };
    let mut sans = vec![ip("127.0.0.1")?, ip("::1")?, dns("localhost")?];
    if let Ok(addr) = node.ip.parse() {
        sans.push(SanType::IpAddress(addr));
    }
    sans.push(dns(node.name)?);
    if fqdn != node.name {
        sans.push(dns(&fqdn)?);
    }
    params.subject_alt_names = sans;
    params.is_ca = IsCa::ExplicitNoCa;
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.use_authority_key_identifier_extension = true;
    params.not_before = from_yesterday(now, 0)?;
    params.not_after = from_yesterday(now, days)?;
    params.serial_number = Some(SerialNumber::from(serial));
    let cert = params.signed_by(&key, &issuer).map_err(|e| e.to_string())?;
    Ok(Issued {
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

pub mod acme_ca;

#[cfg(test)]
mod tests;
