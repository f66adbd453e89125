use rstest::rstest;

use super::*;
use crate::model::node_hw::certs::{CertInfo, certificate_info};

/// 2026-11-29 06:00 UTC.
const NOW: i64 = 1_795_932_000;

fn info(pem: &str, file: &str) -> CertInfo {
    certificate_info(pem, file).expect("a certificate")
}

/// Whether `cert` carries a signature `issuer`'s key made.
fn signed_by(cert: &str, issuer: &str) -> bool {
    let (_, c) = x509_parser::pem::parse_x509_pem(cert.as_bytes()).expect("PEM");
    let (_, i) = x509_parser::pem::parse_x509_pem(issuer.as_bytes()).expect("PEM");
    let (c, i) = (
        c.parse_x509().expect("X.509"),
        i.parse_x509().expect("X.509"),
    );
    c.verify_signature(Some(i.public_key())).is_ok()
}

#[test]
fn the_ca_is_a_self_signed_rsa_4096_cluster_ca_of_ten_years_from_yesterday() {
    let ca = Pki::in_memory().ca(NOW).expect("a CA");
    let i = info(&ca.cert, CA_FILE);
    let ou = i
        .subject
        .strip_prefix("/CN=Proxmox Virtual Environment/OU=")
        .and_then(|r| r.strip_suffix("/O=PVE Cluster Manager CA"))
        .expect("PVE's CA subject");
    assert!(uuid::Uuid::parse_str(ou).is_ok(), "{ou}");
    assert_eq!(i.issuer, i.subject);
    assert_eq!((i.key_type, i.key_bits), ("rsaEncryption", 4096));
    assert_eq!(i.notbefore, NOW - DAY);
    assert_eq!(i.notafter, NOW - DAY + 3650 * DAY);
    assert!(i.san.is_empty());
    assert!(signed_by(&ca.cert, &ca.cert));
}

#[rstest]
#[case::with_domain("pve1", "192.0.2.11", Some("example.com"),
    "/OU=PVE Cluster Node/O=Proxmox Virtual Environment/CN=pve1.example.com",
    &["127.0.0.1", "0000:0000:0000:0000:0000:0000:0000:0001", "localhost", "192.0.2.11", "pve1", "pve1.example.com"])]
#[case::without_domain("node-b", "192.0.2.12", None,
    "/OU=PVE Cluster Node/O=Proxmox Virtual Environment/CN=node-b",
    &["127.0.0.1", "0000:0000:0000:0000:0000:0000:0000:0001", "localhost", "192.0.2.12", "node-b"])]
#[case::ipv6("pve6", "2001:db8::6", Some("lab.test"),
    "/OU=PVE Cluster Node/O=Proxmox Virtual Environment/CN=pve6.lab.test",
    &["127.0.0.1", "0000:0000:0000:0000:0000:0000:0000:0001", "localhost", "2001:0db8:0000:0000:0000:0000:0000:0006", "pve6", "pve6.lab.test"])]
fn a_node_certificate_names_the_node_and_its_address(
    #[case] name: &str,
    #[case] ip: &str,
    #[case] domain: Option<&str>,
    #[case] subject: &str,
    #[case] san: &[&str],
) {
    let pki = Pki::in_memory();
    let node = pki
        .node(&NodeNames { name, ip, domain }, NOW)
        .expect("a node certificate");
    let ca = pki.ca(NOW).expect("the CA");
    let i = info(&node.cert, NODE_FILE);
    assert_eq!(i.subject, subject);
    assert_eq!(i.issuer, info(&ca.cert, CA_FILE).subject);
    assert_eq!(i.san, san);
    assert_eq!((i.key_type, i.key_bits), ("rsaEncryption", 2048));
    assert_eq!(i.notbefore, NOW - DAY);
    assert_eq!(i.notafter, NOW - DAY + 730 * DAY);
    assert!(signed_by(&node.cert, &ca.cert));
    assert!(!signed_by(&node.cert, &node.cert));
}

#[test]
fn each_node_has_its_own_certificate_and_key_under_one_ca() {
    let pki = Pki::in_memory();
    let names = |name| NodeNames {
        name,
        ip: "192.0.2.10",
        domain: None,
    };
    let a = pki.node(&names("a"), NOW).expect("a");
    let b = pki.node(&names("b"), NOW).expect("b");
    assert_eq!(pki.node(&names("a"), NOW + 99).expect("a again"), a);
    assert_ne!(
        info(&a.cert, "a").fingerprint,
        info(&b.cert, "b").fingerprint
    );
    assert_ne!(a.key, b.key);
    let ca = pki.ca(NOW).expect("the CA");
    assert!(signed_by(&a.cert, &ca.cert) && signed_by(&b.cert, &ca.cert));
}

#[test]
fn another_world_has_another_ca() {
    let (one, two) = (Pki::in_memory(), Pki::in_memory());
    let (a, b) = (one.ca(NOW).expect("one"), two.ca(NOW).expect("two"));
    assert_ne!(
        info(&a.cert, CA_FILE).subject,
        info(&b.cert, CA_FILE).subject
    );
}

#[test]
fn a_node_certificate_lasts_no_longer_than_its_ca_less_two_days() {
    // A CA made 3,000 days ago has 649 days left.
    let pki = Pki::in_memory();
    pki.ca(NOW - 3000 * DAY).expect("the CA");
    let names = NodeNames {
        name: "pve",
        ip: "192.0.2.10",
        domain: None,
    };
    let i = info(&pki.node(&names, NOW).expect("a node").cert, NODE_FILE);
    assert_eq!(i.notafter, NOW - DAY + 647 * DAY);
}

#[rstest]
#[case::slash("../x")]
#[case::empty("")]
fn a_name_that_cannot_be_a_directory_is_refused(#[case] name: &str) {
    let names = NodeNames {
        name,
        ip: "192.0.2.10",
        domain: None,
    };
    let err = Pki::in_memory().node(&names, NOW).expect_err("refused");
    assert!(err.contains("invalid node name"), "{err}");
}

#[test]
fn kept_certificates_are_read_back() {
    let dir = tempfile::tempdir().expect("a directory");
    let pki = Pki::kept_in(dir.path()).expect("kept");
    let names = NodeNames {
        name: "pve",
        ip: "192.0.2.10",
        domain: Some("example.com"),
    };
    let node = pki.node(&names, NOW).expect("a node");
    let ca = pki.ca(NOW).expect("the CA");
    assert!(dir.path().join("nodes/pve/pve-ssl.key").exists());
    let again = Pki::kept_in(dir.path()).expect("read back");
    assert_eq!(again.ca(NOW + DAY).expect("the CA"), ca);
    assert_eq!(again.node(&names, NOW + DAY).expect("the node"), node);
    let other = NodeNames {
        name: "pve2",
        ..names
    };
    let second = again.node(&other, NOW).expect("a second node");
    assert!(signed_by(&second.cert, &ca.cert));
}
