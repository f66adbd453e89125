//! The certificate authority behind fake-pve's emulated ACME directories
//! (see `model::acme`): a root and an intermediate per directory, made
//! once per process, and the leaf certificates an order ends with.
//!
//! The names are fake-pve's own, in the style of Let's Encrypt's staging
//! hierarchy: the staging directory's intermediate is
//! `(STAGING) Faux Fig R1` under the root `(STAGING) Faux Fig X1`, the
//! production directory's `Faux Fig R1` under `Faux Fig X1`, both of the
//! organization `fake-pve emulated ACME CA`. A leaf is valid for 90 days
//! (backdated one hour, as Let's Encrypt does), names the order's
//! domains as its alternative names and the first as its common name, and
//! comes as the chain an ACME client downloads: the leaf, then the
//! intermediate.

use std::sync::OnceLock;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, PKCS_RSA_SHA256, RsaKeySize, SanType, SerialNumber,
};

use super::Issued;

/// A leaf's lifetime.
pub const LIFETIME_DAYS: i64 = 90;

/// One directory's hierarchy: the intermediate that signs and its key.
struct Hierarchy {
    intermediate: Issued,
}

/// The common name of a directory's intermediate.
pub fn intermediate_name(staging: bool) -> &'static str {
    if staging {
        "(STAGING) Faux Fig R1"
    } else {
        "Faux Fig R1"
    }
}

fn organization(staging: bool) -> &'static str {
    if staging {
        "(STAGING) fake-pve emulated ACME CA"
    } else {
        "fake-pve emulated ACME CA"
    }
}

fn random_serial() -> SerialNumber {
    let mut bytes = rand::random::<[u8; 16]>();
    bytes[0] &= 0x7f;
    bytes[0] |= 0x01;
    SerialNumber::from_slice(&bytes)
}

fn date(secs: i64) -> Result<time::OffsetDateTime, String> {
    time::OffsetDateTime::from_unix_timestamp(secs).map_err(|e| e.to_string())
}

fn make_hierarchy(staging: bool, now: i64) -> Result<Hierarchy, String> {
    let day = 86_400;
    let root_key = KeyPair::generate().map_err(|e| e.to_string())?;
    let mut root = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::OrganizationName, organization(staging));
    let root_cn = if staging {
        "(STAGING) Faux Fig X1"
    } else {
        "Faux Fig X1"
    };
    dn.push(DnType::CommonName, root_cn);
    root.distinguished_name = dn;
    root.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    root.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    root.not_before = date(now - 365 * day)?;
    root.not_after = date(now + 20 * 365 * day)?;
    root.serial_number = Some(random_serial());
    let root_cert = root.self_signed(&root_key).map_err(|e| e.to_string())?;
    let root_issuer = Issuer::new(root, root_key);

    let key = KeyPair::generate().map_err(|e| e.to_string())?;
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::OrganizationName, organization(staging));
    dn.push(DnType::CommonName, intermediate_name(staging));
    params.distinguished_name = dn;
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params.use_authority_key_identifier_extension = true;
    params.not_before = date(now - 180 * day)?;
    params.not_after = date(now + 3 * 365 * day)?;
    params.serial_number = Some(random_serial());
    let cert = params
        .signed_by(&key, &root_issuer)
        .map_err(|e| e.to_string())?;
    drop(root_cert);
    Ok(Hierarchy {
        intermediate: Issued {
            cert: cert.pem(),
            key: key.serialize_pem(),
        },
    })
}

fn hierarchy(staging: bool, now: i64) -> Result<&'static Hierarchy, String> {
    static STAGING: OnceLock<Result<Hierarchy, String>> = OnceLock::new();
    static PRODUCTION: OnceLock<Result<Hierarchy, String>> = OnceLock::new();
    let cell = if staging { &STAGING } else { &PRODUCTION };
    cell.get_or_init(|| make_hierarchy(staging, now))
        .as_ref()
        .map_err(Clone::clone)
}

/// A certificate for `domains` (at least one), issued at `now` (epoch
/// seconds) by the staging or production hierarchy, with a new RSA 2048
/// key (the key of the CSR PVE makes): `cert` is the chain, leaf first.
///
/// # Errors
/// When a domain is not a DNS name or a key cannot be made.
pub fn issue(staging: bool, domains: &[String], now: i64) -> Result<Issued, String> {
    let first = domains.first().ok_or("no identifiers")?;
    let ca = hierarchy(staging, now)?;
    let ca_key = KeyPair::from_pem(&ca.intermediate.key).map_err(|e| e.to_string())?;
    let issuer =
        Issuer::from_ca_cert_pem(&ca.intermediate.cert, ca_key).map_err(|e| e.to_string())?;
    let key = KeyPair::generate_rsa_for(&PKCS_RSA_SHA256, RsaKeySize::_2048)
        .map_err(|e| format!("unable to generate RSA key: {e}"))?;
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, first.as_str());
    params.distinguished_name = dn;
    params.subject_alt_names = domains
        .iter()
        .map(|d| {
            d.clone()
                .try_into()
                .map(SanType::DnsName)
                .map_err(|_| format!("invalid DNS name '{d}'"))
        })
        .collect::<Result<_, _>>()?;
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.use_authority_key_identifier_extension = true;
    let start = now - 3600;
    params.not_before = date(start)?;
    params.not_after = date(start + LIFETIME_DAYS * 86_400 - 1)?;
    params.serial_number = Some(random_serial());
    let cert = params.signed_by(&key, &issuer).map_err(|e| e.to_string())?;
    Ok(Issued {
        cert: format!("{}{}", cert.pem(), ca.intermediate.cert),
        key: key.serialize_pem(),
    })
}

/// The intermediate of the staging or production hierarchy (PEM), what
/// a client given the emulated CA trusts.
///
/// # Errors
/// When the hierarchy cannot be made.
#[cfg_attr(not(feature = "internals"), allow(dead_code))]
pub fn intermediate(staging: bool, now: i64) -> Result<String, String> {
    hierarchy(staging, now).map(|h| h.intermediate.cert.clone())
}

/// Whether `issuer_cn` is the common name of one of the emulated
/// intermediates (a certificate the emulated CA can revoke).
pub fn is_ours(issuer_cn: &str) -> bool {
    issuer_cn == intermediate_name(true) || issuer_cn == intermediate_name(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::node_hw::certs::certificate_info;

    #[test]
    fn a_leaf_names_the_domains_for_ninety_days_under_the_staging_intermediate() {
        let now = 1_780_000_000;
        let domains = vec!["pve.example.com".to_string(), "alt.example.com".to_string()];
        let issued = issue(true, &domains, now).expect("issued");
        let info = certificate_info(&issued.cert, "pveproxy-ssl.pem").expect("readable");
        assert_eq!(info.subject, "/CN=pve.example.com");
        assert_eq!(
            info.issuer,
            "/O=(STAGING) fake-pve emulated ACME CA/CN=(STAGING) Faux Fig R1"
        );
        assert_eq!(info.san, domains);
        assert_eq!(info.notafter - info.notbefore, 90 * 86_400 - 1);
        assert_eq!(info.key_type, "rsaEncryption");
        assert_eq!(issued.cert.matches("BEGIN CERTIFICATE").count(), 2);
        assert!(is_ours("(STAGING) Faux Fig R1"));
        assert!(!is_ours("Proxmox Virtual Environment"));
    }

    #[test]
    fn production_and_staging_sign_with_their_own_intermediate() {
        let now = 1_780_000_000;
        let d = vec!["a.example.org".to_string()];
        let prod = issue(false, &d, now).expect("issued");
        let info = certificate_info(&prod.cert, "x").expect("readable");
        assert!(info.issuer.ends_with("/CN=Faux Fig R1"), "{}", info.issuer);
        assert!(issue(true, &[], now).is_err());
    }
}
