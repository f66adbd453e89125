//! ACME as PVE does it (pve-manager `API2/ACMEAccount.pm`,
//! `API2/ACMEPlugin.pm`, `API2/ACME.pm`; `proxmox-acme`'s `PVE::ACME`):
//! the accounts in `/etc/pve/priv/acme/<name>`, the challenge plugins in
//! `/etc/pve/priv/acme/plugins.cfg`, and the orders a node's certificate
//! comes from, placed with a CA fake-pve emulates itself (no network).
//!
//! The emulated CA is an object in the process, not a server: it goes
//! through RFC 8555's steps (account, order, one authorization per
//! domain, challenge, finalize, certificate) as [`order::plan`] does, and
//! Let's Encrypt's two directory URLs name it (their production and
//! staging hierarchies, `crate::pki::acme_ca`). A `standalone` (http-01)
//! challenge passes for every domain the CA accepts (the node is taken to
//! answer on port 80 for it); a `dns` (dns-01) challenge passes when the
//! plugin's data sets the fields its DNS API needs.

pub mod directory;
pub mod dns_schema;
pub mod order;
pub mod plugins;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::model::Worker;
use crate::model::tasks::TaskEffect;
use directory::{Ca, problem};

/// An account file (`/etc/pve/priv/acme/<name>`), as `PVE::ACME`
/// saves it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    /// The directory URL.
    pub directory: String,
    /// The account's URL at the CA.
    pub location: String,
    /// The account object the CA answered.
    pub account: Value,
    /// The terms of service agreed to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tos: Option<String>,
    /// The account key (RSA 4096, PEM).
    pub key: String,
}

impl Account {
    /// The account's number at the CA (the last part of its URL).
    pub fn id(&self) -> u64 {
        self.location
            .rsplit('/')
            .next()
            .and_then(|s| s.parse().ok())
            .unwrap_or_default()
    }
}

/// What an account task does when it ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum AcmeOp {
    /// The account file is written (register, update, refresh).
    Save {
        /// Its name.
        name: String,
        /// Its content.
        account: Box<Account>,
    },
    /// The account is deactivated: its file is renamed
    /// `_deactivated_<name>_<n>` (the first free `n` up to 100).
    Deactivate {
        /// Its name.
        name: String,
    },
}

/// The cluster's ACME files and the emulated CA's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Acme {
    /// The account files by file name (deactivated ones included).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    accounts: BTreeMap<String, Account>,
    /// `plugins.cfg`.
    #[serde(default, skip_serializing_if = "plugins::Plugins::is_empty")]
    plugins: plugins::Plugins,
    /// The last number the emulated CA gave an account, order or
    /// authorization.
    #[serde(default)]
    serial: u64,
}

/// `pve_verify_configid`: what `list_acme_accounts` lists.
fn is_configid(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.len() >= 2
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// base64url without padding, as ACME encodes.
fn b64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The public JWK (`kty`, `n`, `e`) of an RSA key in PEM.
pub fn jwk(key_pem: &str) -> Value {
    let Ok(kp) = rcgen::KeyPair::from_pem(key_pem) else {
        return json!({});
    };
    use rcgen::PublicKeyData;
    use x509_parser::prelude::FromDer;
    let der = kp.subject_public_key_info();
    let Ok((_, spki)) = x509_parser::x509::SubjectPublicKeyInfo::from_der(&der) else {
        return json!({});
    };
    match spki.parsed() {
        Ok(x509_parser::public_key::PublicKey::RSA(rsa)) => {
            let strip = |b: &[u8]| {
                let i = b.iter().position(|x| *x != 0).unwrap_or(b.len());
                b64url(&b[i..])
            };
            json!({ "kty": "RSA", "n": strip(rsa.modulus), "e": strip(rsa.exponent) })
        }
        _ => json!({}),
    }
}

/// An RFC 3339 UTC time, as Let's Encrypt writes `createdAt`.
fn rfc3339(epoch: i64) -> String {
    let (y, mo, d, h, mi, s, _) = crate::clock::civil(epoch);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// `account_contact_from_param`: the addresses of a `contact` list as
/// `mailto:` URLs.
pub fn contact_urls(contact: &str) -> Vec<String> {
    contact
        .split([',', ';', ' ', '\t', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| format!("mailto:{s}"))
        .collect()
}

impl Acme {
    /// Whether nothing was ever written.
    pub fn is_empty(&self) -> bool {
        self.accounts.is_empty() && self.plugins.is_empty() && self.serial == 0
    }

    /// `plugins.cfg`.
    pub fn plugins(&self) -> &plugins::Plugins {
        &self.plugins
    }

    /// `plugins.cfg`, to change.
    pub fn plugins_mut(&mut self) -> &mut plugins::Plugins {
        &mut self.plugins
    }

    /// `GET /cluster/acme/account`: the account names, deactivated ones
    /// left out.
    pub fn account_names(&self) -> Vec<String> {
        self.accounts
            .keys()
            .filter(|n| is_configid(n))
            .cloned()
            .collect()
    }

    /// An account file.
    pub fn account(&self, name: &str) -> Option<&Account> {
        self.accounts.get(name)
    }

    /// The account file `name`, or PVE's parameter error.
    ///
    /// # Errors
    /// `ACME account config file '<name>' does not exist.`
    pub fn existing(&self, name: &str) -> crate::model::Result<&Account> {
        self.accounts.get(name).ok_or_else(|| {
            crate::model::Error::invalid(
                "name",
                format!("ACME account config file '{name}' does not exist."),
            )
        })
    }

    fn next_serial(&mut self) -> u64 {
        self.serial += 1;
        // Numbers in the range of Let's Encrypt's.
        100_000_000 + self.serial
    }

    /// The task `POST /cluster/acme/account` starts (`acmeregister`):
    /// the account key `key` is made, then the account registered with
    /// the directory, which must be one the emulated CA serves and whose
    /// terms of service must be agreed to (`tos_url`).
    ///
    /// # Errors
    /// An account file of that name exists.
    pub fn register(
        &mut self,
        name: &str,
        directory: &str,
        contact: &[String],
        tos_url: Option<&str>,
        key: String,
        now: i64,
    ) -> crate::model::Result<Worker> {
        if self.accounts.contains_key(name) {
            return Err(crate::model::Error::invalid(
                "name",
                format!("ACME account config file '{name}' already exists."),
            ));
        }
        let worker = Worker::new("acmeregister", "")
            .log("Generating ACME account key..")
            .log("Registering ACME account..");
        let ca = match Ca::of(directory) {
            Ok(ca) => ca,
            Err(e) => return Ok(worker.fail(format!("Registration failed: {e}"))),
        };
        if tos_url.is_none_or(str::is_empty) {
            return Ok(worker.fail(format!(
                "Registration failed: {}",
                problem(
                    "POST",
                    &ca.new_account_url(),
                    "malformed",
                    "must agree to terms of service",
                    400
                )
            )));
        }
        let id = self.next_serial();
        let location = ca.account_url(id);
        let account = Account {
            directory: directory.to_string(),
            location: location.clone(),
            account: json!({
                "key": jwk(&key),
                "contact": contact,
                "createdAt": rfc3339(now),
                "status": "valid",
            }),
            tos: tos_url.map(str::to_string),
            key,
        };
        Ok(worker
            .log(format!(
                "Registration successful, account URL: '{location}'"
            ))
            .effect(TaskEffect::Acme(AcmeOp::Save {
                name: name.to_string(),
                account: Box::new(account),
            })))
    }

    /// The task `PUT /cluster/acme/account/{name}` starts: `acmeupdate`
    /// with new contacts, else `acmerefresh` (the CA's account object read
    /// again).
    ///
    /// # Errors
    /// No account file of that name.
    pub fn update(&self, name: &str, contact: &[String]) -> crate::model::Result<Worker> {
        let mut account = self.existing(name)?.clone();
        let kind = if contact.is_empty() {
            "acmerefresh"
        } else {
            "acmeupdate"
        };
        let worker = Worker::new(kind, "");
        if let Err(e) = Ca::of(&account.directory) {
            return Ok(worker.fail(e));
        }
        if account.account.get("status").and_then(Value::as_str) == Some("deactivated") {
            return Ok(worker.fail(format!(
                "POST to '{}' failed - {}",
                account.location,
                problem(
                    "POST",
                    &account.location,
                    "unauthorized",
                    "Account is not valid, has status \"deactivated\"",
                    403
                )
            )));
        }
        if !contact.is_empty() {
            account.account["contact"] = json!(contact);
        }
        Ok(worker.effect(TaskEffect::Acme(AcmeOp::Save {
            name: name.to_string(),
            account: Box::new(account),
        })))
    }

    /// The task `DELETE /cluster/acme/account/{name}` starts
    /// (`acmedeactivate`).
    ///
    /// # Errors
    /// No account file of that name.
    pub fn deactivate(&self, name: &str) -> crate::model::Result<Worker> {
        let account = self.existing(name)?;
        let worker = Worker::new("acmedeactivate", "");
        if let Err(e) = Ca::of(&account.directory) {
            return Ok(worker.fail(e));
        }
        let Some(slot) = (0..=100).find(|i| {
            !self
                .accounts
                .contains_key(&format!("_deactivated_{name}_{i}"))
        }) else {
            return Ok(worker
                .log(format!(
                    "WARN: No free slot to rename deactivated account file '/etc/pve/priv/acme/{name}', leaving in place"
                ))
                .effect(TaskEffect::Acme(AcmeOp::Deactivate {
                    name: name.to_string(),
                })));
        };
        Ok(worker
            .log(format!(
                "Renaming account file from '/etc/pve/priv/acme/{name}' to '/etc/pve/priv/acme/_deactivated_{name}_{slot}'"
            ))
            .effect(TaskEffect::Acme(AcmeOp::Deactivate {
                name: name.to_string(),
            })))
    }

    /// What an account task does when it ends.
    pub fn apply(&mut self, op: AcmeOp) {
        match op {
            AcmeOp::Save { name, account } => {
                self.accounts.insert(name, *account);
            }
            AcmeOp::Deactivate { name } => {
                let Some(mut account) = self.accounts.remove(&name) else {
                    return;
                };
                account.account["status"] = json!("deactivated");
                match (0..=100)
                    .map(|i| format!("_deactivated_{name}_{i}"))
                    .find(|n| !self.accounts.contains_key(n))
                {
                    Some(renamed) => self.accounts.insert(renamed, account),
                    None => self.accounts.insert(name, account),
                };
            }
        }
    }

    /// Numbers for an order and its authorizations.
    pub fn order_numbers(&mut self, authorizations: usize) -> (u64, Vec<u64>) {
        let order = self.next_serial();
        let authz = (0..authorizations).map(|_| self.next_serial()).collect();
        (order, authz)
    }
}
