//! ACME (`api::acme`) against an in-process fake-pve: an account with the
//! emulated staging directory, a DNS plugin, the node's certificate
//! ordered and revoked; every answer is checked against the schema.

mod common;

use common::{Mode, checked_client, start};
use pve_client::api::acme::{LE_STAGING, NewAccount};
use pve_client::api::node_services::NodeOptions;

#[tokio::test]
async fn an_account_a_plugin_and_a_certificate() {
    let run = start().await;
    let (pve, checked) = checked_client(&run, Mode::Password);
    let acme = pve.acme();
    let dirs = acme.get_directories().await.expect("directories");
    assert_eq!(dirs[1].url, LE_STAGING);
    let tos = acme.get_tos(Some(LE_STAGING)).await.expect("tos");
    let upid = acme
        .register_account(&NewAccount {
            contact: "admin@example.com".into(),
            directory: Some(LE_STAGING.into()),
            tos_url: tos,
            ..Default::default()
        })
        .await
        .expect("registers");
    let st = pve.tasks().wait(&upid).await.expect("ends");
    assert_eq!(st.exitstatus.as_deref(), Some("OK"), "{st:?}");
    assert_eq!(acme.account_index().await.expect("list"), ["default"]);
    let info = acme.get_account("default").await.expect("account");
    assert_eq!(info.account["status"], "valid");
    acme.add_plugin(
        "cf1",
        "dns",
        Some("cf"),
        Some("CF_Token=tok\nCF_Account_ID=acct"),
        &[("validation-delay", "0")],
    )
    .await
    .expect("plugin");
    let p = acme.get_plugin_config("cf1").await.expect("plugin");
    assert_eq!(p.data.as_deref(), Some("CF_Token=tok\nCF_Account_ID=acct"));
    assert_eq!(p.validation_delay, Some(0));
    let dns = acme.plugin_index(Some("dns")).await.expect("plugins");
    assert_eq!(dns.len(), 1);
    let opts = NodeOptions {
        acmedomains: vec![(0, "domain=pve.example.com,plugin=cf1".into())],
        ..NodeOptions::default()
    };
    pve.node_services()
        .set_options("pve", &opts)
        .await
        .expect("node config");
    let upid = acme.new_certificate("pve", false).await.expect("ordered");
    let st = pve.tasks().wait(&upid).await.expect("ends");
    assert_eq!(st.exitstatus.as_deref(), Some("OK"), "{st:?}");
    let e = acme
        .new_certificate("pve", false)
        .await
        .expect_err("force is needed");
    assert!(e.to_string().contains("'force' is not set"), "{e}");
    let upid = acme.revoke_certificate("pve").await.expect("revoked");
    let st = pve.tasks().wait(&upid).await.expect("ends");
    assert_eq!(st.exitstatus.as_deref(), Some("OK"), "{st:?}");
    let upid = acme
        .deactivate_account("default")
        .await
        .expect("deactivated");
    pve.tasks().wait(&upid).await.expect("ends");
    assert!(acme.account_index().await.expect("list").is_empty());
    acme.delete_plugin("cf1").await.expect("deleted");
    assert!(checked.names().len() > 10);
}
