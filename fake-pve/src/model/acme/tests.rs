//! Unit tests of the ACME model.

use std::collections::BTreeMap;

use rstest::rstest;

use super::directory::{Ca, LE_STAGING, LE_V2, unreachable};
use super::order::{Kind, node_acme, plan, plan_revoke};
use super::{Acme, AcmeOp};
use crate::model::tasks::TaskEffect;

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn failure(w: &crate::model::Worker) -> String {
    w.outcome.clone().err().map(|f| f.0).unwrap_or_default()
}

/// An account registered with the staging directory and saved.
fn registered(acme: &mut Acme, name: &str) {
    let w = acme
        .register(
            name,
            LE_STAGING,
            &["mailto:admin@example.com".into()],
            Some(super::directory::TOS),
            String::new(),
            1_780_000_000,
        )
        .expect("registered");
    let TaskEffect::Acme(op) = w.effect else {
        panic!("no effect: {w:?}")
    };
    acme.apply(op);
}

#[test]
fn the_standalone_plugin_is_always_there_and_plugins_keep_their_options() {
    let mut acme = Acme::default();
    assert!(acme.plugins().is_empty());
    assert_eq!(
        acme.plugins().load().keys().collect::<Vec<_>>(),
        ["standalone"]
    );
    let empty_digest = acme.plugins().digest();
    assert_eq!(empty_digest, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    // `data` comes base64-encoded and is kept decoded.
    let data = "Q0ZfVG9rZW49dG9rCkNGX0FjY291bnRfSUQ9YWNjdA==";
    acme.plugins_mut()
        .add("cf1", "dns", &map(&[("api", "cf"), ("data", data)]))
        .expect("added");
    let p = acme.plugins().get("cf1").expect("there");
    assert_eq!(p["data"], "CF_Token=tok\nCF_Account_ID=acct");
    assert!(
        acme.plugins()
            .raw()
            .contains(&format!("dns: cf1\n\tapi cf\n\tdata {data}\n"))
    );
    assert_ne!(acme.plugins().digest(), empty_digest);
    // Refusals, with PVE's messages.
    let refused = |r: crate::model::Result<()>| r.expect_err("refused").message().to_string();
    let mut a = acme.clone();
    assert_eq!(
        refused(a.plugins_mut().add("standalone", "standalone", &map(&[]))),
        "ACME plugin ID 'standalone' already exists"
    );
    assert_eq!(
        refused(a.plugins_mut().add("d", "dns", &map(&[]))),
        "missing value for required option 'api'"
    );
    assert_eq!(
        refused(
            a.plugins_mut()
                .add("s", "standalone", &map(&[("api", "cf")]))
        ),
        "unexpected property 'api'"
    );
    assert_eq!(
        refused(a.plugins_mut().update("nope", &map(&[]), &[], None)),
        "ACME plugin ID 'nope' does not exist"
    );
    assert_eq!(
        refused(
            a.plugins_mut()
                .update("cf1", &map(&[]), &["api".into()], None)
        ),
        "unable to delete required option 'api'"
    );
    assert_eq!(
        refused(
            a.plugins_mut()
                .update("cf1", &map(&[]), &["x".into()], None)
        ),
        "no such option 'x'"
    );
    assert_eq!(
        refused(a.plugins_mut().update("cf1", &map(&[]), &[], Some("00"))),
        crate::model::node_services::MODIFIED
    );
    let digest = a.plugins().digest();
    a.plugins_mut()
        .update(
            "cf1",
            &map(&[("validation-delay", "0")]),
            &["data".into()],
            Some(&digest),
        )
        .expect("updated");
    let p = a.plugins().get("cf1").expect("there");
    assert_eq!(p.get("validation-delay").map(String::as_str), Some("0"));
    assert!(!p.contains_key("data"));
    a.plugins_mut().remove("cf1");
    a.plugins_mut().remove("standalone");
    assert_eq!(
        a.plugins().load().keys().collect::<Vec<_>>(),
        ["standalone"]
    );
}

#[test]
fn accounts_register_update_and_deactivate_into_a_renamed_file() {
    let mut acme = Acme::default();
    registered(&mut acme, "default");
    let a = acme.account("default").expect("saved");
    assert_eq!(a.directory, LE_STAGING);
    assert!(
        a.location
            .starts_with("https://acme-staging-v02.api.letsencrypt.org/acme/acct/"),
        "{}",
        a.location
    );
    assert_eq!(a.account["status"], "valid");
    assert_eq!(a.account["contact"][0], "mailto:admin@example.com");
    assert_eq!(acme.account_names(), ["default"]);
    // A second of that name is refused before the task.
    let again = acme.register("default", LE_V2, &[], Some("x"), String::new(), 0);
    assert_eq!(
        again.expect_err("exists").errors().expect("param")["name"],
        "ACME account config file 'default' already exists."
    );
    // Contacts change; deactivation renames the file out of the list.
    let w = acme
        .update("default", &["mailto:ops@example.com".into()])
        .expect("update");
    assert_eq!(w.kind, "acmeupdate");
    let TaskEffect::Acme(op) = w.effect else {
        panic!()
    };
    acme.apply(op);
    assert_eq!(
        acme.account("default").expect("there").account["contact"][0],
        "mailto:ops@example.com"
    );
    assert_eq!(
        acme.update("default", &[]).expect("refresh").kind,
        "acmerefresh"
    );
    let w = acme.deactivate("default").expect("deactivate");
    assert!(w.start_lines[0].ends_with("'/etc/pve/priv/acme/_deactivated_default_0'"));
    acme.apply(AcmeOp::Deactivate {
        name: "default".into(),
    });
    assert!(acme.account_names().is_empty());
    assert_eq!(
        acme.account("_deactivated_default_0")
            .expect("renamed")
            .account["status"],
        "deactivated"
    );
    assert!(acme.deactivate("default").is_err());
}

#[rstest]
#[case::no_tos(LE_STAGING, None, "must agree to terms of service")]
#[case::unknown(
    "https://acme.example.net/directory",
    Some("x"),
    "Registration failed: Error: GET to https://acme.example.net/directory\nCan't connect to acme.example.net:443 (Name or service not known)"
)]
fn a_registration_that_fails_fails_in_its_task(
    #[case] dir: &str,
    #[case] tos: Option<&str>,
    #[case] msg: &str,
) {
    let mut acme = Acme::default();
    let w = acme
        .register("default", dir, &[], tos, String::new(), 0)
        .expect("task");
    assert!(failure(&w).contains(msg), "{}", failure(&w));
    assert_eq!(w.effect, TaskEffect::None);
}

#[rstest]
#[case::http(
    "http://127.0.0.1:14000/dir",
    "Access to 'http' URIs has been disabled"
)]
#[case::address(
    "https://127.0.0.1:14000/dir",
    "Can't connect to 127.0.0.1:14000 (Connection refused)"
)]
#[case::name(
    "https://ca.example/dir",
    "Can't connect to ca.example:443 (Name or service not known)"
)]
fn unknown_directories_are_unreachable(#[case] url: &str, #[case] lwp: &str) {
    assert_eq!(unreachable(url), format!("Error: GET to {url}\n{lwp}"));
    assert!(Ca::of(url).is_err());
    assert_eq!(Ca::of(LE_STAGING), Ok(Ca::Staging));
}

#[test]
fn the_node_settings_merge_acme_domains_and_acmedomain_entries() {
    let conf = node_acme(&map(&[
        ("acme", "account=prod,domains=B.example.com;a.example.com"),
        (
            "acmedomain0",
            "c.example.com,plugin=cf1,alias=x.example.net",
        ),
    ]));
    assert_eq!(conf.account, "prod");
    let d: Vec<_> = conf
        .domains
        .iter()
        .map(|d| (d.domain.as_str(), d.plugin.as_str(), d.alias.as_deref()))
        .collect();
    assert_eq!(
        d,
        [
            ("a.example.com", "standalone", None),
            ("b.example.com", "standalone", None),
            ("c.example.com", "cf1", Some("x.example.net")),
        ]
    );
    assert_eq!(node_acme(&map(&[])).account, "default");
}

fn stub_issue(_: bool, d: &[String]) -> Result<crate::pki::Issued, String> {
    Ok(crate::pki::Issued {
        cert: format!("chain for {}", d.join(",")),
        key: "key".into(),
    })
}

#[test]
fn an_order_validates_each_domain_then_sets_the_certificate() {
    let mut acme = Acme::default();
    registered(&mut acme, "default");
    acme.plugins_mut()
        .add(
            "cf1",
            "dns",
            &map(&[
                ("api", "cf"),
                ("data", "Q0ZfVG9rZW49dApDRl9BY2NvdW50X0lEPWE="),
            ]),
        )
        .expect("plugin");
    let conf = node_acme(&map(&[
        ("acme", "domains=pve.example.com"),
        ("acmedomain0", "domain=dns.example.com,plugin=cf1"),
    ]));
    let w = plan(&mut acme, "pve", &conf, Kind::New, None, &stub_issue);
    assert_eq!(w.kind, "acmenewcert");
    assert_eq!(failure(&w), "");
    let log = w.start_lines.join("\n");
    for line in [
        "Loading ACME account details",
        "Placing ACME order",
        "The validation for dns.example.com is pending!",
        "Add TXT record: _acme-challenge.dns.example.com",
        "Sleeping 30 seconds to wait for TXT record propagation",
        "Remove TXT record: _acme-challenge.dns.example.com",
        "The validation for pve.example.com is pending!",
        "Setting up webserver",
        "Status is 'valid', domain 'pve.example.com' OK!",
        "All domains validated!",
        "Creating CSR",
        "valid!",
        "Downloading certificate",
        "Setting pveproxy certificate and key",
        "Restarting pveproxy",
    ] {
        assert!(log.contains(line), "{line} missing from\n{log}");
    }
    let TaskEffect::NodeCert { node, cert } = w.effect else {
        panic!("no certificate")
    };
    assert_eq!(node, "pve");
    assert_eq!(
        cert.expect("set").pem,
        "chain for dns.example.com,pve.example.com"
    );
}

#[rstest]
#[case::no_account(&[("acme", "account=other,domains=a.example.com")], "ACME account config file 'other' does not exist.")]
#[case::rejected(&[("acme", "domains=pve.invalid")], "Domain name does not end with a valid public suffix (TLD)")]
#[case::plugin_gone(&[("acmedomain0", "domain=a.example.com,plugin=gone")], "plugin 'gone' for domain 'a.example.com' not found!")]
#[case::dns_data(
    &[("acmedomain0", "domain=a.example.com,plugin=cf_empty")],
    "command 'setpriv --reuid nobody --regid nogroup --clear-groups --reset-env -- /bin/bash /usr/share/proxmox-acme/proxmox-acme setup cf a.example.com' failed: exit code 1"
)]
fn an_order_that_cannot_complete_fails_with_pves_message(
    #[case] conf: &[(&str, &str)],
    #[case] msg: &str,
) {
    let mut acme = Acme::default();
    registered(&mut acme, "default");
    acme.plugins_mut()
        .add("cf_empty", "dns", &map(&[("api", "cf")]))
        .expect("plugin");
    let w = plan(
        &mut acme,
        "pve",
        &node_acme(&map(conf)),
        Kind::New,
        None,
        &stub_issue,
    );
    assert!(failure(&w).contains(msg), "{}", failure(&w));
    assert_eq!(w.effect, TaskEffect::None);
}

#[test]
fn revocation_accepts_the_emulated_cas_certificates_only() {
    let mut acme = Acme::default();
    registered(&mut acme, "default");
    let conf = node_acme(&map(&[("acme", "domains=pve.example.com")]));
    let ours = crate::pki::acme_ca::issue(true, &["pve.example.com".into()], 1_780_000_000)
        .expect("issued");
    let w = plan_revoke(&acme, "pve", &conf, &ours.cert);
    assert_eq!(failure(&w), "");
    assert_eq!(
        w.effect,
        TaskEffect::NodeCert {
            node: "pve".into(),
            cert: None
        }
    );
    let pki = crate::pki::Pki::in_memory();
    let ca = pki.ca(1_780_000_000).expect("ca");
    let w = plan_revoke(&acme, "pve", &conf, &ca.cert);
    assert!(
        failure(&w).starts_with("Revoke request to CA failed: Error: POST to https://acme-staging-v02.api.letsencrypt.org/acme/revoke-cert"),
        "{}",
        failure(&w)
    );
    // A renewal revokes the old one, warning when the CA refuses.
    let w = plan(
        &mut acme,
        "pve",
        &conf,
        Kind::Renew,
        Some(&ca.cert),
        &stub_issue,
    );
    assert_eq!(w.kind, "acmerenew");
    assert!(
        w.start_lines
            .iter()
            .any(|l| l.starts_with("WARN: Revoke request to CA failed")),
        "{:?}",
        w.start_lines
    );
}

#[test]
fn a_saved_world_keeps_the_accounts_plugins_and_numbers() {
    let mut acme = Acme::default();
    assert!(acme.is_empty());
    registered(&mut acme, "default");
    acme.plugins_mut()
        .add("cf1", "dns", &map(&[("api", "cf")]))
        .expect("plugin");
    let text = serde_json::to_string(&acme).expect("saved");
    let back: Acme = serde_json::from_str(&text).expect("read back");
    assert_eq!(back, acme);
    assert!(!back.is_empty());
    assert_eq!(back.plugins().digest(), acme.plugins().digest());
}
