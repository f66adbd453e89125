//! ACME: plugins and accounts the scenario makes (removed after it), and
//! which certificate the TLS listener presents.

use cucumber::gherkin::Step;
use cucumber::{then, when};
use pve_client::api::tasks::Upid;
use pve_client::{Method, Params};

use super::table_params;
use crate::world::Made;
use crate::world::PveWorld;

#[when(expr = "I add the ACME plugin {string} with:")]
async fn add_plugin(w: &mut PveWorld, step: &Step, id: String) {
    let id = w.expand(&id);
    let mut params = Params::new().set("id", id.as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    w.call(Method::POST, "/cluster/acme/plugins", params).await;
    if w.last().ok() {
        w.made(Made::AcmePlugin(id));
    }
}

#[when(expr = "I register the ACME account {string} with:")]
async fn register_account(w: &mut PveWorld, step: &Step, name: String) {
    let name = w.expand(&name);
    let mut params = Params::new().set("name", name.as_str());
    for (k, v) in table_params(w, step).pairs() {
        params.push(k.clone(), v.clone());
    }
    w.call(Method::POST, "/cluster/acme/account", params).await;
    let o = w.last();
    if o.ok() {
        let upid: Upid = o
            .data
            .as_str()
            .unwrap_or_default()
            .parse()
            .unwrap_or_else(|e| panic!("the registration answered {}: {e}", o.data));
        w.upids.push(upid);
        w.made(Made::AcmeAccount(name));
    }
}

/// Accepts any certificate: the step reads what is presented.
#[derive(Debug)]
struct AnyCertificate(std::sync::Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _: &rustls::pki_types::CertificateDer<'_>,
        _: &[rustls::pki_types::CertificateDer<'_>],
        _: &rustls::pki_types::ServerName<'_>,
        _: &[u8],
        _: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// The fingerprint of the certificate a TLS handshake with `addr`
/// presents first, as PVE writes fingerprints.
fn presented(addr: std::net::SocketAddr) -> String {
    use std::io::Write;
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .dangerous()
        .with_custom_certificate_verifier(std::sync::Arc::new(AnyCertificate(provider)))
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("a name");
    let mut conn =
        rustls::ClientConnection::new(std::sync::Arc::new(config), name).expect("a connection");
    let mut tcp = std::net::TcpStream::connect(addr).expect("connect");
    while conn.is_handshaking() {
        conn.complete_io(&mut tcp).expect("the handshake");
    }
    let _ = tcp.flush();
    let der = conn
        .peer_certificates()
        .and_then(|c| c.first())
        .expect("a certificate")
        .as_ref()
        .to_vec();
    use sha2::Digest;
    sha2::Sha256::digest(&der)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

#[then(expr = "the TLS listener presents the certificate {string}")]
async fn listener_presents(w: &mut PveWorld, fingerprint: String) {
    let want = w.expand(&fingerprint);
    let addr = w.fake().addr();
    let got = tokio::task::spawn_blocking(move || presented(addr))
        .await
        .expect("the handshake ran");
    assert_eq!(got, want, "the listener presents another certificate");
}
