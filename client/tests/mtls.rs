//! Mutual TLS: a client certificate for a server that asks for one.
//! fake-pve, like pveproxy, never asks for a client certificate (its TLS
//! configuration has no client verifier), so a small TLS server here
//! requires one signed by its CA and answers `GET /api2/json/version`.

use std::net::SocketAddr;
use std::sync::Arc;

use pve_client::{Client, Config};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, ExtendedKeyUsagePurpose, IsCa, KeyPair,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

struct Pki {
    ca: String,
    server: (String, String),
    client: (String, String),
    stranger: (String, String),
}

fn leaf(
    issuer: &rcgen::Issuer<'_, KeyPair>,
    names: &[&str],
    usage: ExtendedKeyUsagePurpose,
) -> (String, String) {
    let key = KeyPair::generate().expect("key");
    let mut params =
        CertificateParams::new(names.iter().map(|n| (*n).to_string()).collect::<Vec<_>>())
            .expect("params");
    params.extended_key_usages = vec![usage];
    let cert = params.signed_by(&key, issuer).expect("signed");
    (cert.pem(), key.serialize_pem())
}

fn new_ca() -> CertifiedIssuer<'static, KeyPair> {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    CertifiedIssuer::self_signed(params, KeyPair::generate().expect("key")).expect("CA")
}

fn pki() -> Pki {
    let ca = new_ca();
    let other = new_ca();
    Pki {
        ca: ca.pem(),
        server: leaf(&ca, &["localhost"], ExtendedKeyUsagePurpose::ServerAuth),
        client: leaf(&ca, &["operator"], ExtendedKeyUsagePurpose::ClientAuth),
        stranger: leaf(&other, &["stranger"], ExtendedKeyUsagePurpose::ClientAuth),
    }
}

/// A TLS server that requires a client certificate of `pki`'s CA.
async fn serve(pki: &Pki) -> SocketAddr {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(pki.ca.as_bytes()).expect("CA"))
        .expect("root");
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .expect("verifier");
    let chain = vec![CertificateDer::from_pem_slice(pki.server.0.as_bytes()).expect("cert")];
    let key = PrivateKeyDer::from_pem_slice(pki.server.1.as_bytes()).expect("key");
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)
        .expect("server config");
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(cfg));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                for _ in 0..64 {
                    let n = tls.read(&mut buf).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    head.extend_from_slice(&buf[..n]);
                    if head.windows(4).any(|w| w == b"\r\n\r\n") {
                        break;
                    }
                }
                let body =
                    r#"{"data":{"version":"9.1.5","release":"9.1","repoid":"80cf92a64bef6889"}}"#;
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json;charset=UTF-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = tls.write_all(answer.as_bytes()).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    addr
}

fn config(pki: &Pki, addr: SocketAddr) -> pve_client::ConfigBuilder {
    Config::builder()
        .endpoint(format!("https://localhost:{}", addr.port()))
        .token(
            "root@pam!automation",
            "0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60",
        )
        .ca_bundle_pem(pki.ca.clone())
        .retry(pve_client::RetryPolicy::none())
        .timeout(std::time::Duration::from_secs(5))
}

#[tokio::test]
async fn a_client_certificate_is_presented_to_a_server_that_asks() {
    let pki = pki();
    let addr = serve(&pki).await;
    let cfg = config(&pki, addr)
        .client_certificate_pem(pki.client.0.clone(), pki.client.1.clone())
        .build()
        .expect("config");
    let pve = Client::connect(cfg).await.expect("mutual TLS");
    assert_eq!(pve.version().await.expect("version").release, "9.1");
}

#[tokio::test]
async fn without_the_right_client_certificate_the_server_refuses() {
    let pki = pki();
    let addr = serve(&pki).await;
    let none = config(&pki, addr).build().expect("config");
    assert!(
        Client::connect(none).await.is_err(),
        "no client certificate"
    );
    let stranger = config(&pki, addr)
        .client_certificate_pem(pki.stranger.0.clone(), pki.stranger.1.clone())
        .build()
        .expect("config");
    assert!(
        Client::connect(stranger).await.is_err(),
        "a certificate of another CA"
    );
}

#[test]
fn a_certificate_and_a_key_that_do_not_belong_together_are_refused() {
    let pki = pki();
    let e = Config::builder()
        .endpoint("https://localhost:8006")
        .token("root@pam!automation", "x")
        .client_certificate_pem(pki.client.0.clone(), pki.stranger.1.clone())
        .build()
        .expect_err("mismatch");
    assert!(e.to_string().contains("do not belong together"), "{e}");
    let e = Config::builder()
        .endpoint("https://localhost:8006")
        .token("root@pam!automation", "x")
        .client_certificate_pem("not PEM", pki.client.1.clone())
        .build()
        .expect_err("not PEM");
    assert!(e.to_string().contains("client certificate"), "{e}");
}
