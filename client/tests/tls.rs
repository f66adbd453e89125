//! TLS against the fake's self-signed certificate: the CA bundle (as PEM
//! text or a file), the fingerprint pin, the insecure switch, and what
//! fails without them. Also startup validation from the environment.

mod common;

use std::collections::HashMap;

use common::{T0, fast, start};
use pve_client::{Category, Client, Config};

fn env_config(pairs: &[(&str, String)]) -> pve_client::Result<Config> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect();
    fast(Config::builder())
        .with_env(|k| map.get(k).cloned())?
        .build()
}

#[tokio::test]
async fn ca_bundle_as_text_or_file() {
    let run = start().await;
    let pem = run.cert_pem().expect("TLS").to_string();
    for endpoint in [run.url(), format!("{}/api2", run.url()), run.api_url()] {
        let cfg = env_config(&[
            ("PVE_ENDPOINT", endpoint.clone()),
            ("PVE_USERNAME", "root@pam".into()),
            ("PVE_PASSWORD", "password".into()),
            ("PVE_CA_BUNDLE", pem.clone()),
        ])
        .expect("config");
        assert_eq!(cfg.api_url(), run.api_url());
        let pve = Client::connect(cfg)
            .await
            .expect("verified against the bundle");
        assert_eq!(pve.version().await.expect("version").release, "9.2");
    }
    let path = std::env::temp_dir().join(format!("pve-client-ca-{}-{T0}.pem", std::process::id()));
    std::fs::write(&path, &pem).expect("write bundle");
    let cfg = env_config(&[
        ("PVE_ENDPOINT", run.url()),
        ("PVE_TOKEN_ID", common::ROOT_TOKEN.into()),
        ("PVE_TOKEN_SECRET", common::ROOT_TOKEN_SECRET.into()),
        ("PVE_CA_BUNDLE", path.display().to_string()),
    ])
    .expect("config");
    let result = Client::connect(cfg).await;
    let _ = std::fs::remove_file(&path);
    result.expect("verified against the bundle file");
}

#[tokio::test]
async fn without_trust_the_handshake_fails() {
    let run = start().await;
    let cfg = fast(Config::builder())
        .endpoint(run.url())
        .password("root@pam", "password")
        .build()
        .expect("config");
    let e = Client::connect(cfg).await.expect_err("self-signed");
    assert_eq!(e.category(), Category::Tls, "{e}");
    assert!(e.message().contains("invalid peer certificate"), "{e}");
    assert!(!e.is_retryable());
}

#[tokio::test]
async fn fingerprint_pinning() {
    let run = start().await;
    let fp = run.fingerprint().expect("TLS").to_string();
    for pin in [fp.clone(), fp.replace(':', "").to_lowercase()] {
        let cfg = env_config(&[
            ("PVE_ENDPOINT", run.url()),
            ("PVE_TOKEN_ID", common::ROOT_TOKEN.into()),
            ("PVE_TOKEN_SECRET", common::ROOT_TOKEN_SECRET.into()),
            ("PVE_TLS_FINGERPRINT", pin),
        ])
        .expect("config");
        let pve = Client::connect(cfg).await.expect("pinned");
        let nodes = pve.nodes().list_nodes().await.expect("nodes");
        // PVE shows the same fingerprint for the node.
        assert_eq!(nodes[0].ssl_fingerprint.as_deref(), Some(fp.as_str()));
    }
    let wrong = "00:".repeat(31) + "00";
    let cfg = fast(Config::builder())
        .endpoint(run.url())
        .password("root@pam", "password")
        .fingerprint(&wrong)
        .build()
        .expect("config");
    let e = Client::connect(cfg).await.expect_err("wrong pin");
    assert_eq!(e.category(), Category::Tls, "{e}");
    assert!(
        e.message().contains(&format!(
            "certificate fingerprint mismatch: expected {wrong}, got {fp}"
        )),
        "{e}"
    );
}

#[tokio::test]
async fn the_insecure_switch() {
    let run = start().await;
    let cfg = env_config(&[
        ("PVE_ENDPOINT", run.url()),
        ("PVE_USERNAME", "root@pam".into()),
        ("PVE_PASSWORD", "password".into()),
        ("PVE_INSECURE_SKIP_VERIFY", "true".into()),
    ])
    .expect("config");
    Client::connect(cfg).await.expect("anything goes");
}

#[tokio::test]
async fn plain_http() {
    let run = common::builder()
        .tls(fake_pve::Tls::Off)
        .start()
        .await
        .expect("starts");
    let pve = Client::connect(
        fast(Config::builder())
            .endpoint(run.url())
            .password("root@pam", "password")
            .build()
            .expect("config"),
    )
    .await
    .expect("http");
    assert_eq!(pve.version().await.expect("version").release, "9.2");
}

#[tokio::test]
async fn an_unreachable_server_is_a_network_error() {
    // A port that was free a moment ago.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let cfg = fast(Config::builder())
        .endpoint(format!("https://127.0.0.1:{port}"))
        .password("root@pam", "password")
        .build()
        .expect("config");
    let e = Client::connect(cfg).await.expect_err("nobody listens");
    assert_eq!(e.category(), Category::Network, "{e}");
    assert!(
        e.message().starts_with(&format!(
            "cannot connect to https://127.0.0.1:{port}/api2/json"
        )),
        "{e}"
    );
    assert!(e.is_retryable());
}
