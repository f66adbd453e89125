//! A node certificate's order, renewal and revocation with the emulated
//! CA (pve-manager `API2/ACME.pm`): the node's ACME settings (`acme`,
//! `acmedomainN` of `/etc/pve/nodes/<node>/config`), the steps of the
//! order with the log PVE writes for each, and the certificate it ends
//! with.

use std::collections::BTreeMap;

use super::directory::{Ca, problem, rejected_identifier};
use super::{Acme, dns_schema, plugins};
use crate::model::Worker;
use crate::model::node_hw::CustomCert;
use crate::model::tasks::TaskEffect;

/// One domain of a node's ACME settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainConf {
    /// The domain, lower case.
    pub domain: String,
    /// The plugin that validates it (`standalone` by default).
    pub plugin: String,
    /// The alias a DNS plugin sets the TXT record of, if any.
    pub alias: Option<String>,
}

/// `get_acme_conf`: a node's ACME account and domains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeAcme {
    /// The account (`default` unless `acme` names one).
    pub account: String,
    /// The domains, in name order.
    pub domains: Vec<DomainConf>,
}

/// The `key=value` pairs of a property string, a first bare value under
/// `default_key`.
fn props(value: &str, default_key: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (i, part) in value.split(',').enumerate() {
        match part.split_once('=') {
            Some((k, v)) => {
                out.insert(k.trim().to_string(), v.trim().to_string());
            }
            None if i == 0 && !default_key.is_empty() => {
                out.insert(default_key.to_string(), part.trim().to_string());
            }
            None => {}
        }
    }
    out
}

/// The node's ACME settings from its configuration's options.
pub fn node_acme(conf: &BTreeMap<String, String>) -> NodeAcme {
    let mut account = "default".to_string();
    let mut domains: BTreeMap<String, DomainConf> = BTreeMap::new();
    if let Some(acme) = conf.get("acme") {
        let p = props(acme, "");
        if let Some(a) = p.get("account") {
            account = a.clone();
        }
        for d in p
            .get("domains")
            .map(String::as_str)
            .unwrap_or_default()
            .split(';')
            .filter(|d| !d.is_empty())
        {
            let domain = d.to_lowercase();
            domains.insert(
                domain.clone(),
                DomainConf {
                    domain,
                    plugin: "standalone".into(),
                    alias: None,
                },
            );
        }
    }
    for i in 0..=5 {
        let Some(rec) = conf.get(&format!("acmedomain{i}")) else {
            continue;
        };
        let p = props(rec, "domain");
        let domain = p.get("domain").cloned().unwrap_or_default().to_lowercase();
        domains.entry(domain.clone()).or_insert(DomainConf {
            domain,
            plugin: p
                .get("plugin")
                .cloned()
                .unwrap_or_else(|| "standalone".into()),
            alias: p.get("alias").cloned(),
        });
    }
    NodeAcme {
        account,
        domains: domains.into_values().collect(),
    }
}

/// What an order asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `POST .../acme/certificate` (`acmenewcert`).
    New,
    /// `PUT .../acme/certificate` (`acmerenew`): the old certificate is
    /// revoked once the new one is in place.
    Renew,
}

/// Issues the certificate of an order: `(staging, domains)` to the
/// chain and key.
pub type Issue<'a> = &'a dyn Fn(bool, &[String]) -> Result<crate::pki::Issued, String>;

/// The `proxmox-acme` command a DNS plugin runs.
fn dns_command(action: &str, api: &str, domain: &str) -> String {
    format!(
        "setpriv --reuid nobody --regid nogroup --clear-groups --reset-env -- /bin/bash /usr/share/proxmox-acme/proxmox-acme {action} {api} {domain}"
    )
}

/// The revocation of `cert` by the CA of `ca`.
///
/// # Errors
/// A certificate the emulated CA did not issue, with Let's Encrypt's
/// error document.
fn revoke(ca: Ca, cert: &str) -> Result<(), String> {
    let issuer = crate::model::node_hw::certs::certificate_info(cert, "pveproxy-ssl.pem")
        .map(|i| i.issuer)
        .unwrap_or_default();
    let cn = issuer.rsplit("/CN=").next().unwrap_or_default();
    if issuer.contains("/CN=") && crate::pki::acme_ca::is_ours(cn) {
        return Ok(());
    }
    Err(problem(
        "POST",
        &ca.revoke_url(),
        "malformed",
        "Unable to revoke: certificate from unrecognized issuer",
        400,
    ))
}

/// The task of an order (`acmenewcert`, `acmerenew`) for `node`: its log
/// step by step, ending with the certificate set as the node's
/// `pveproxy-ssl.pem` and pveproxy restarted, or with the error PVE's
/// worker dies with.
pub fn plan(
    acme: &mut Acme,
    node: &str,
    conf: &NodeAcme,
    kind: Kind,
    old_cert: Option<&str>,
    issue: Issue<'_>,
) -> Worker {
    let task = match kind {
        Kind::New => "acmenewcert",
        Kind::Renew => "acmerenew",
    };
    let mut w = Worker::new(task, "");
    let Some(account) = acme.account(&conf.account).cloned() else {
        return w.fail(format!(
            "ACME account config file '{}' does not exist.",
            conf.account
        ));
    };
    w = w
        .log("Loading ACME account details")
        .log("Placing ACME order");
    let ca = match Ca::of(&account.directory) {
        Ok(ca) => ca,
        Err(e) => return w.fail(e),
    };
    if account.account.get("status").and_then(|s| s.as_str()) != Some("valid") {
        return w.fail(problem(
            "POST",
            &ca.new_order_url(),
            "unauthorized",
            "Account is not valid, has status \"deactivated\"",
            403,
        ));
    }
    if let Some(why) = conf
        .domains
        .iter()
        .find_map(|d| rejected_identifier(&d.domain))
    {
        return w.fail(problem(
            "POST",
            &ca.new_order_url(),
            "rejectedIdentifier",
            &format!("Invalid identifiers requested :: {why}"),
            400,
        ));
    }
    let (order_id, authz) = acme.order_numbers(conf.domains.len());
    let acct = account.id();
    w = w.log(format!("Order URL: {}", ca.order_url(acct, order_id)));
    let plugins = acme.plugins().load();
    for (d, id) in conf.domains.iter().zip(authz) {
        let auth_url = ca.authz_url(acct, id);
        w = w
            .log("")
            .log(format!("Getting authorization details from '{auth_url}'"))
            .log(format!("The validation for {} is pending!", d.domain));
        let Some(plugin) = plugins.get(&d.plugin) else {
            return w.fail(format!(
                "plugin '{}' for domain '{}' not found!",
                d.plugin, d.domain
            ));
        };
        match plugin.get("type").map(String::as_str) {
            Some("dns") => {
                let api = plugin.get("api").cloned().unwrap_or_default();
                let target = d.alias.as_deref().unwrap_or(&d.domain);
                let data = plugins::data_fields(plugin.get("data").map_or("", String::as_str));
                if let Err(e) = dns_schema::check_data(&api, &data) {
                    return w.log(e).fail(format!(
                        "command '{}' failed: exit code 1",
                        dns_command("setup", &api, target)
                    ));
                }
                w = w.log(format!("Add TXT record: _acme-challenge.{}", d.domain));
                let delay: u64 = plugin
                    .get("validation-delay")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(30);
                if delay > 0 {
                    w = w.log(format!(
                        "Sleeping {delay} seconds to wait for TXT record propagation"
                    ));
                }
                w = w
                    .log("Triggering validation")
                    .log("Sleeping for 5 seconds")
                    .log(format!("Status is 'valid', domain '{}' OK!", d.domain))
                    .log(format!("Remove TXT record: _acme-challenge.{}", d.domain));
            }
            _ => {
                w = w
                    .log("Setting up webserver")
                    .log("Triggering validation")
                    .log("Sleeping for 5 seconds")
                    .log(format!("Status is 'valid', domain '{}' OK!", d.domain));
            }
        }
    }
    w = w
        .log("")
        .log("All domains validated!")
        .log("")
        .log("Creating CSR")
        .log("Checking order status")
        .log("Order is ready, finalizing order")
        .log("valid!")
        .log("")
        .log("Downloading certificate");
    let domains: Vec<String> = conf.domains.iter().map(|d| d.domain.clone()).collect();
    let issued = match issue(ca.staging(), &domains) {
        Ok(i) => i,
        Err(e) => return w.fail(e),
    };
    w = w
        .log("Setting pveproxy certificate and key")
        .log("Restarting pveproxy");
    if kind == Kind::Renew {
        w = w.log("Revoking old certificate");
        if let Some(old) = old_cert
            && let Err(e) = revoke(ca, old)
        {
            let mut lines = format!("Revoke request to CA failed: {e}")
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>();
            if let Some(first) = lines.first_mut() {
                *first = format!("WARN: {first}");
            }
            for l in lines {
                w = w.log(l);
            }
        }
    }
    w.effect(TaskEffect::NodeCert {
        node: node.to_string(),
        cert: Some(CustomCert {
            pem: issued.cert,
            key: issued.key,
        }),
    })
}

/// The task of `DELETE .../acme/certificate` (`acmerevoke`): the
/// certificate revoked at the CA, then removed and pveproxy restarted
/// with the node's own certificate.
pub fn plan_revoke(acme: &Acme, node: &str, conf: &NodeAcme, cert: &str) -> Worker {
    let w = Worker::new("acmerevoke", "");
    let Some(account) = acme.account(&conf.account) else {
        return w.fail(format!(
            "ACME account config file '{}' does not exist.",
            conf.account
        ));
    };
    let w = w
        .log("Loading ACME account details")
        .log("Revoking old certificate");
    let outcome = Ca::of(&account.directory).and_then(|ca| revoke(ca, cert));
    if let Err(e) = outcome {
        return w.fail(format!("Revoke request to CA failed: {e}"));
    }
    w.log("Deleting certificate files")
        .log("Restarting pveproxy to revert to self-signed certificates")
        .effect(TaskEffect::NodeCert {
            node: node.to_string(),
            cert: None,
        })
}
