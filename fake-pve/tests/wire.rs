//! PVE's transport: paths, envelope, status lines, parameters and limits.

mod common;

use common::{Auth, start, start_http};

use reqwest::Method;
use serde_json::{Value, json};

#[tokio::test]
async fn envelope_and_headers() {
    let pve = start().await;
    let root = pve.root().await;
    let r = pve.get("/version", &root).await;
    assert_eq!(
        r.header("content-type"),
        Some("application/json;charset=UTF-8")
    );
    assert_eq!(r.header("server"), Some("pve-api-daemon/3.0"));
    assert_eq!(r.header("cache-control"), Some("max-age=0"));
    assert_eq!(r.header("pragma"), Some("no-cache"));
    assert!(r.header("expires").is_some_and(|e| e.ends_with(" GMT")));
    let j = r.json();
    assert_eq!(
        j,
        json!({"data": {"version": "9.2.11", "release": "9.2", "repoid": "f6997e698c7933ea"}})
    );
    // Trailing and doubled slashes are ignored.
    assert_eq!(pve.get("/version/", &root).await.status, 200);
    assert_eq!(
        pve.send(Method::GET, "/api2/json//version", &root, None)
            .await
            .status,
        200
    );
    // The API index.
    let idx = pve.get("/", &root).await.data();
    assert_eq!(idx[0], json!({"subdir": "version"}));
}

#[tokio::test]
async fn extjs_wraps_with_success() {
    let pve = start().await;
    let root = pve.root().await;
    let r = pve
        .send(Method::GET, "/api2/extjs/version", &root, None)
        .await;
    let j = r.json();
    assert_eq!(j["success"], 1);
    assert_eq!(j["data"]["release"], "9.2");
    let r = pve
        .send(
            Method::GET,
            "/api2/extjs/cluster/nextid?vmid=abc",
            &root,
            None,
        )
        .await;
    assert_eq!(r.status, 200);
    let j = r.json();
    assert_eq!(j["success"], 0);
    assert_eq!(j["status"], 400);
    assert_eq!(
        j["errors"]["vmid"],
        "type check ('integer') failed - got 'abc'"
    );
}

#[tokio::test]
async fn unknown_paths_and_methods() {
    let pve = start().await;
    let root = pve.root().await;
    let r = pve.get("/nodes/pve/frobnicate", &root).await;
    r.assert_error(501, "Method 'GET /nodes/pve/frobnicate' not implemented");
    assert_eq!(r.header("connection"), Some("close"));
    pve.put("/version", &root, "")
        .await
        .assert_error(501, "Method 'PUT /version' not implemented");
    // Unknown paths need authentication first.
    let r = pve.get("/nodes/pve/frobnicate", &Auth::None).await;
    assert_eq!(
        (r.status, r.reason.as_str(), r.text.as_str()),
        (401, "No ticket", "")
    );
    // No format, or an unknown one.
    let r = pve.send(Method::GET, "/api2/", &root, None).await;
    assert_eq!(
        (r.status, r.reason.as_str(), r.text.as_str()),
        (501, "no such uri", "no such uri")
    );
    let r = pve
        .send(Method::GET, "/api2/xml/version", &root, None)
        .await;
    assert_eq!(
        (r.status, r.reason.as_str()),
        (501, "no formatter for uri /version, xml")
    );
    // Outside /api2.
    let r = pve.send(Method::GET, "/nothing", &Auth::None, None).await;
    assert_eq!(
        (r.status, r.reason.as_str(), r.text.as_str()),
        (500, "no such file '/nothing'", "no such file '/nothing'\n")
    );
    assert_eq!(
        pve.send(Method::GET, "/", &Auth::None, None).await.status,
        200
    );
    let r = pve
        .send(Method::PATCH, "/api2/json/version", &root, None)
        .await;
    assert_eq!(
        (r.status, r.reason.as_str()),
        (501, "method 'PATCH' not available")
    );
}

#[tokio::test]
async fn bodies_on_get_and_delete_are_refused() {
    let pve = start().await;
    let root = pve.root().await;
    for m in [Method::GET, Method::DELETE] {
        let r = pve
            .send(
                m.clone(),
                "/api2/json/version",
                &root,
                Some(("application/x-www-form-urlencoded", "a=b".into())),
            )
            .await;
        let msg = format!("Unexpected content for method '{m}'");
        assert_eq!(
            (r.status, r.reason.as_str(), r.text.as_str()),
            (501, msg.as_str(), msg.as_str())
        );
    }
}

#[tokio::test]
async fn body_size_limit() {
    let pve = start().await;
    let root = pve.root().await;
    let big = format!("comment={}", "x".repeat(512 * 1024));
    let r = pve
        .send(
            Method::POST,
            "/api2/json/access/users/root@pam/token/big",
            &root,
            Some(("application/x-www-form-urlencoded", big)),
        )
        .await;
    assert_eq!((r.status, r.reason.as_str()), (501, "for data too large"));
    let ok = format!("comment={}", "x".repeat(1000));
    let r = pve
        .post("/access/users/root@pam/token/small", &root, &ok)
        .await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn json_bodies_and_query_override() {
    let pve = start().await;
    let root = pve.root().await;
    let r = pve
        .send(
            Method::POST,
            "/api2/json/access/users/root@pam/token/j1?comment=from-query",
            &root,
            Some((
                "application/json",
                r#"{"comment":"from-body","privsep":false}"#.into(),
            )),
        )
        .await;
    let d = r.data();
    assert_eq!(d["info"]["comment"], "from-query");
    assert_eq!(d["info"]["privsep"], false);
    let r = pve
        .send(
            Method::POST,
            "/api2/json/access/users/root@pam/token/j2",
            &root,
            Some(("application/json", "{nope".into())),
        )
        .await;
    assert_eq!(r.status, 500);
    assert!(r.reason.starts_with("malformed JSON string"), "{r:?}");
    let r = pve
        .send(
            Method::POST,
            "/api2/json/access/users/root@pam/token/j3",
            &root,
            Some(("text/plain", "x".into())),
        )
        .await;
    assert_eq!(
        (r.status, r.reason.as_str()),
        (506, "upload 'Content-Type 'text/plain' not implemented")
    );
}

#[tokio::test]
async fn parameter_errors() {
    let pve = start().await;
    let root = pve.root().await;
    pve.get("/cluster/resources?type=pool", &root)
        .await
        .assert_param_error(
            "type",
            "value 'pool' does not have a value in the enumeration 'vm, storage, node, sdn'",
        );
    pve.get("/cluster/nextid?color=red", &root)
        .await
        .assert_param_error(
            "color",
            "property is not defined in schema and the schema does not allow additional properties",
        );
    pve.get("/nodes/pve/tasks?errors=True", &root)
        .await
        .assert_param_error("errors", "type check ('boolean') failed - got 'True'");
    pve.get("/nodes/pve/tasks?limit=-1", &root)
        .await
        .assert_param_error("limit", "value must have a minimum value of 0");
    // A path parameter repeated with another value.
    pve.get("/nodes/pve/tasks?node=other", &root)
        .await
        .assert_param_error(
            "node",
            "duplicate parameter (already defined in URI) with conflicting values!",
        );
    assert_eq!(
        pve.get("/nodes/pve/tasks?node=pve", &root).await.status,
        200
    );
    // `_dc` (ExtJS cache buster) is ignored.
    assert_eq!(
        pve.get("/cluster/nextid?_dc=12345", &root).await.status,
        200
    );
}

#[tokio::test]
async fn plain_http_and_keep_alive() {
    let pve = start_http().await;
    assert!(pve.run.url().starts_with("http://"));
    assert!(pve.run.fingerprint().is_none());
    let root = pve.root().await;
    for _ in 0..3 {
        assert_eq!(pve.get("/version", &root).await.status, 200);
    }
}

#[tokio::test]
async fn tls_offers_http11_and_the_printed_fingerprint() {
    let pve = start().await;
    let fp = pve.run.fingerprint().expect("fingerprint").to_string();
    assert_eq!(fp.len(), 32 * 3 - 1);
    let root = pve.root().await;
    let nodes = pve.get("/nodes", &root).await.data();
    assert_eq!(
        nodes[0]["ssl_fingerprint"],
        Value::String(fp),
        "the node reports the served certificate"
    );
    let r = pve
        .http
        .get(pve.url("/api2/json/version"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.version(), reqwest::Version::HTTP_11);
}

/// The certificates the server presents to a client that trusts only
/// `trusted` (PEM) and connects as `localhost`.
async fn presented(pve: &common::Pve, trusted: &str) -> Result<Vec<Vec<u8>>, String> {
    common::presented(pve, trusted, "localhost").await
}

/// The DER of a PEM certificate.
fn der(pem: &str) -> Vec<u8> {
    let (_, p) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).expect("PEM");
    p.contents
}

#[tokio::test]
async fn tls_serves_the_node_certificate_with_the_cluster_ca_that_signed_it() {
    let pve = start().await;
    let root = pve.root().await;
    let info = pve.get("/nodes/pve/certificates/info", &root).await.data();
    let (ca, own) = (&info[0], &info[1]);
    assert_eq!(
        (ca["filename"].as_str(), own["filename"].as_str()),
        (Some("pve-root-ca.pem"), Some("pve-ssl.pem"))
    );
    assert_eq!(own["issuer"], ca["subject"]);
    assert_eq!(own["fingerprint"].as_str(), pve.run.fingerprint());
    // The CA is what a client trusts; the node certificate is served
    // first, the CA after it, as pveproxy serves them.
    assert_eq!(ca["pem"].as_str(), pve.run.cert_pem());
    let chain = presented(&pve, ca["pem"].as_str().expect("PEM"))
        .await
        .expect("the CA verifies the served certificate");
    assert_eq!(
        chain,
        vec![
            der(own["pem"].as_str().expect("PEM")),
            der(ca["pem"].as_str().expect("PEM"))
        ]
    );
    // Another world has another CA, which does not verify this one.
    let other = start().await;
    assert_ne!(other.run.cert_pem(), pve.run.cert_pem());
    let refused = presented(&pve, other.run.cert_pem().expect("PEM")).await;
    assert!(refused.is_err(), "{refused:?}");
}

#[tokio::test]
async fn a_certificate_given_as_files_is_served_and_listed_as_pveproxy_ssl() {
    let dir = tempfile::tempdir().expect("a directory");
    let id = fake_pve::Identity::self_signed(&["pve".to_string()]).expect("a certificate");
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert, &id.cert_pem).expect("cert");
    let key_der = rustls::pki_types::PrivateKeyDer::secret_der(&id.key);
    let key_pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        base64_lines(key_der)
    );
    std::fs::write(&key, key_pem).expect("key");
    let pve = common::start_with(common::builder().tls(fake_pve::Tls::Pem { cert, key })).await;
    let root = pve.root().await;
    let info = pve.get("/nodes/pve/certificates/info", &root).await.data();
    let names: Vec<&str> = info
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|c| c["filename"].as_str())
        .collect();
    assert_eq!(
        names,
        ["pve-root-ca.pem", "pve-ssl.pem", "pveproxy-ssl.pem"]
    );
    assert_eq!(info[2]["fingerprint"].as_str(), pve.run.fingerprint());
    assert_eq!(pve.run.cert_pem(), Some(id.cert_pem.as_str()));
    presented(&pve, &id.cert_pem)
        .await
        .expect("the given certificate is served");
}

/// Base64 of `bytes` in lines of 64 characters.
fn base64_lines(bytes: &[u8]) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
    b64.as_bytes()
        .chunks(64)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn an_uploaded_certificate_is_served_once_pveproxy_would_restart_and_removed_goes_back() {
    let pve = start().await;
    let root = pve.root().await;
    let ca = pve.run.cert_pem().expect("the CA").to_string();
    let id = fake_pve::Identity::self_signed(&[]).expect("a certificate");
    let key = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        base64_lines(rustls::pki_types::PrivateKeyDer::secret_der(&id.key))
    );
    let form = |restart: u8| {
        format!(
            "certificates={}&key={}&force=1&restart={restart}",
            common::enc(&id.cert_pem),
            common::enc(&key)
        )
    };
    // Without restart, pveproxy goes on serving its certificate.
    let r = pve
        .post("/nodes/pve/certificates/custom", &root, &form(0))
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    presented(&pve, &ca)
        .await
        .expect("still the node certificate");
    let r = pve
        .post("/nodes/pve/certificates/custom", &root, &form(1))
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let chain = presented(&pve, &id.cert_pem)
        .await
        .expect("the uploaded certificate is served");
    assert_eq!(chain, vec![der(&id.cert_pem)]);
    assert!(presented(&pve, &ca).await.is_err());
    let r = pve
        .delete("/nodes/pve/certificates/custom?restart=1", &root)
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let chain = presented(&pve, &ca)
        .await
        .expect("the node certificate again");
    assert_eq!(chain[1], der(&ca));
}
