//! ACME over HTTP: an account registered with the emulated staging
//! directory, a node's domains, the certificate ordered, listed and
//! served over TLS, renewed only with `force` within 30 days, revoked.

mod common;

use common::{ok, presented, start, task};

const STAGING: &str = "https%3A%2F%2Facme-staging-v02.api.letsencrypt.org%2Fdirectory";
const TOS: &str = "https%3A%2F%2Fletsencrypt.org%2Fdocuments%2FLE-SA-v1.5-February-24-2025.pdf";

#[tokio::test]
async fn an_ordered_certificate_is_listed_served_renewed_with_force_and_revoked() {
    let pve = start().await;
    let root = pve.root().await;
    // Register with the staging directory: the account file appears when
    // the task ends.
    let r = pve
        .post(
            "/cluster/acme/account",
            &root,
            &format!("contact=admin%40example.com&directory={STAGING}&tos_url={TOS}"),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let log = ok(&pve, &root, &r).await;
    assert_eq!(log[0], "Generating ACME account key..");
    assert!(
        log[2].starts_with("Registration successful, account URL: 'https://acme-staging-v02.api.letsencrypt.org/acme/acct/"),
        "{log:?}"
    );
    let accounts = pve.get("/cluster/acme/account", &root).await.data();
    assert_eq!(accounts, serde_json::json!([{ "name": "default" }]));
    let again = pve
        .post(
            "/cluster/acme/account",
            &root,
            &format!("contact=a%40example.com&directory={STAGING}&tos_url={TOS}"),
        )
        .await;
    again.assert_param_error("name", "ACME account config file 'default' already exists.");
    // Without domains there is nothing to order.
    let r = pve
        .post("/nodes/pve/certificates/acme/certificate", &root, "")
        .await;
    r.assert_error(400, "ACME domain list in node configuration is missing!\n");
    let r = pve
        .put(
            "/nodes/pve/config",
            &root,
            "acme=domains%3Dpve.example.com%3Bwww.example.com",
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = pve
        .post("/nodes/pve/certificates/acme/certificate", &root, "")
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let log = ok(&pve, &root, &r).await;
    for line in [
        "Loading ACME account details",
        "The validation for pve.example.com is pending!",
        "Setting up webserver",
        "All domains validated!",
        "Downloading certificate",
        "Restarting pveproxy",
    ] {
        assert!(log.iter().any(|l| l == line), "{line} not in {log:?}");
    }
    let info = pve.get("/nodes/pve/certificates/info", &root).await.data();
    let proxy = info
        .as_array()
        .expect("list")
        .iter()
        .find(|c| c["filename"] == "pveproxy-ssl.pem")
        .expect("pveproxy-ssl.pem")
        .clone();
    assert_eq!(proxy["subject"], "/CN=pve.example.com");
    assert_eq!(
        proxy["issuer"],
        "/O=(STAGING) fake-pve emulated ACME CA/CN=(STAGING) Faux Fig R1"
    );
    assert_eq!(
        proxy["san"],
        serde_json::json!(["pve.example.com", "www.example.com"])
    );
    let (start, end) = (
        proxy["notbefore"].as_i64().expect("start"),
        proxy["notafter"].as_i64().expect("end"),
    );
    assert_eq!(end - start, 90 * 86_400 - 1);
    // The listener serves it, with the intermediate after it.
    let intermediate = fake_pve::pki::acme_ca::intermediate(true, start).expect("the intermediate");
    let chain = presented(&pve, &intermediate, "www.example.com")
        .await
        .expect("the ordered certificate is served");
    assert_eq!(chain.len(), 2);
    let served_fp = fake_pve::model::node_hw::certs::fingerprint(&chain[0]);
    assert_eq!(proxy["fingerprint"].as_str(), Some(served_fp.as_str()));
    // A second order needs force; a renewal 90 days ahead needs force.
    let r = pve
        .post("/nodes/pve/certificates/acme/certificate", &root, "")
        .await;
    r.assert_param_error("force", "Custom certificate exists but 'force' is not set.");
    let r = pve
        .put("/nodes/pve/certificates/acme/certificate", &root, "")
        .await;
    r.assert_param_error(
        "force",
        "Certificate does not expire within the next 30 days, and 'force' is not set.",
    );
    let r = pve
        .put("/nodes/pve/certificates/acme/certificate", &root, "force=1")
        .await;
    let log = ok(&pve, &root, &r).await;
    assert!(
        log.iter().any(|l| l == "Revoking old certificate"),
        "{log:?}"
    );
    let renewed = presented(&pve, &intermediate, "pve.example.com")
        .await
        .expect("the renewed certificate is served");
    assert_ne!(renewed[0], chain[0]);
    // Revoked: the node's own certificate is served again.
    let r = pve
        .delete("/nodes/pve/certificates/acme/certificate", &root)
        .await;
    let log = ok(&pve, &root, &r).await;
    assert_eq!(log.last().map(String::as_str), Some("TASK OK"), "{log:?}");
    assert!(
        presented(&pve, &intermediate, "pve.example.com")
            .await
            .is_err()
    );
    let ca = pve.run.cert_pem().expect("the CA").to_string();
    presented(&pve, &ca, "localhost")
        .await
        .expect("the node certificate again");
    let info = pve.get("/nodes/pve/certificates/info", &root).await.data();
    assert_eq!(info.as_array().map(Vec::len), Some(2), "{info}");
    let r = pve
        .delete("/nodes/pve/certificates/acme/certificate", &root)
        .await;
    r.assert_error(
        500,
        "unable to open file '/etc/pve/nodes/pve/pveproxy-ssl.pem' - No such file or directory\n",
    );
}

#[tokio::test]
async fn a_dns_plugin_validates_its_domain_when_its_data_is_complete() {
    let pve = start().await;
    let root = pve.root().await;
    let r = pve
        .post(
            "/cluster/acme/account",
            &root,
            &format!("name=dns&contact=admin%40example.com&directory={STAGING}&tos_url={TOS}"),
        )
        .await;
    ok(&pve, &root, &r).await;
    // No such plugin yet: the node's configuration refuses it.
    let set = "acme=account%3Ddns&acmedomain0=domain%3Dpve.example.org%2Cplugin%3Dcf1";
    let r = pve.put("/nodes/pve/config", &root, set).await;
    r.assert_error(
        500,
        "plugin 'cf1' for domain 'pve.example.org' not found!\n",
    );
    let r = pve
        .post(
            "/cluster/acme/plugins",
            &root,
            "id=cf1&type=dns&api=cf&validation-delay=0",
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = pve.put("/nodes/pve/config", &root, set).await;
    assert_eq!(r.status, 200, "{r:?}");
    // Without credentials the plugin's script fails.
    let r = pve
        .post("/nodes/pve/certificates/acme/certificate", &root, "")
        .await;
    let (exit, log) = task(&pve, &root, &r).await;
    assert!(
        exit.ends_with("setup cf pve.example.org' failed: exit code 1"),
        "{exit}"
    );
    assert!(log.contains(&"You didn't specify a Cloudflare api key and email yet.".to_string()));
    // CF_Token=tok / CF_Account_ID=acct
    let r = pve
        .put(
            "/cluster/acme/plugins/cf1",
            &root,
            "data=Q0ZfVG9rZW49dG9rCkNGX0FjY291bnRfSUQ9YWNjdA%3D%3D",
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let p = pve.get("/cluster/acme/plugins/cf1", &root).await.data();
    assert_eq!(p["data"], "CF_Token=tok\nCF_Account_ID=acct");
    let r = pve
        .post("/nodes/pve/certificates/acme/certificate", &root, "")
        .await;
    let log = ok(&pve, &root, &r).await;
    assert!(
        log.iter()
            .any(|l| l == "Add TXT record: _acme-challenge.pve.example.org"),
        "{log:?}"
    );
}

#[tokio::test]
async fn directories_answer_without_network_and_unknown_ones_are_unreachable() {
    let pve = start().await;
    let root = pve.root().await;
    let dirs = pve.get("/cluster/acme/directories", &root).await.data();
    assert_eq!(dirs[1]["name"], "Let's Encrypt V2 Staging");
    let tos = pve.get("/cluster/acme/tos", &root).await.data();
    assert_eq!(
        tos,
        "https://letsencrypt.org/documents/LE-SA-v1.5-February-24-2025.pdf"
    );
    let meta = pve
        .get(&format!("/cluster/acme/meta?directory={STAGING}"), &root)
        .await
        .data();
    assert_eq!(
        meta["caaIdentities"],
        serde_json::json!(["letsencrypt.org"])
    );
    let r = pve
        .get(
            "/cluster/acme/meta?directory=https%3A%2F%2Fca.example.net%2Fdirectory",
            &root,
        )
        .await;
    r.assert_error(
        500,
        "Error: GET to https://ca.example.net/directory\nCan't connect to ca.example.net:443 (Name or service not known)\n",
    );
}
