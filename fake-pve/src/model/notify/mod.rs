//! The notification system as PVE keeps it (`/etc/pve/notifications.cfg`
//! and `priv/notifications.cfg`, read and written by the `proxmox-notify`
//! crate through pve-manager `API2/Cluster/Notifications.pm`): the
//! targets (sendmail, gotify, smtp and webhook endpoints) and the
//! matchers that route a notification to them, with the built-in
//! `mail-to-root` target and `default-matcher`.
//!
//! Names are unique across every kind; a target a matcher names cannot be
//! deleted; deleting a built-in resets it to its default. The secrets
//! (a gotify `token`, an smtp `password`, a webhook's `secret` values)
//! live apart and are never shown.
//!
//! What is sent goes through [`matcher`] to the targets and lands in the
//! [`outbox`] (not part of a saved world).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::model::{Error, Result};

pub mod events;
pub mod matcher;
pub mod outbox;
pub mod render;
#[cfg(test)]
mod tests;

pub use outbox::{Notification, Outbox, Send, Severity};

/// The message of a digest that no longer matches.
const MODIFIED: &str = "detected modified configuration - file changed by other user? Try again.";

/// The message of a sendmail or smtp target without recipients.
const NO_RECIPIENT: &str =
    "must at least provide one recipient, either in mailto or in mailto-user";

/// The kind of a section of `notifications.cfg`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A Gotify server.
    Gotify,
    /// Mail through the local `sendmail`.
    Sendmail,
    /// Mail through an SMTP relay.
    Smtp,
    /// An HTTP request.
    Webhook,
    /// A matcher (not a target).
    Matcher,
}

/// The target kinds, in the order `get_targets` lists them.
pub const TARGET_KINDS: [Kind; 4] = [Kind::Gotify, Kind::Sendmail, Kind::Smtp, Kind::Webhook];

impl Kind {
    /// The section type's name (`sendmail`, `matcher` ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Gotify => "gotify",
            Kind::Sendmail => "sendmail",
            Kind::Smtp => "smtp",
            Kind::Webhook => "webhook",
            Kind::Matcher => "matcher",
        }
    }

    /// The kind of a path's `{type}` (`endpoints/<type>`).
    pub fn target(name: &str) -> Option<Kind> {
        TARGET_KINDS.into_iter().find(|k| k.as_str() == name)
    }

    /// The properties kept in `priv/notifications.cfg`.
    pub fn private_keys(self) -> &'static [&'static str] {
        match self {
            Kind::Gotify => &["token"],
            Kind::Smtp => &["password"],
            Kind::Webhook => &["secret"],
            _ => &[],
        }
    }

    /// The properties that hold a list.
    pub fn list_keys(self) -> &'static [&'static str] {
        match self {
            Kind::Sendmail | Kind::Smtp => &["mailto", "mailto-user"],
            Kind::Webhook => &["header", "secret"],
            Kind::Matcher => &["match-field", "match-severity", "match-calendar", "target"],
            Kind::Gotify => &[],
        }
    }

    /// The properties `delete` may name (the crate's `Deleteable...`).
    pub fn deletable(self) -> &'static [&'static str] {
        match self {
            Kind::Gotify => &["comment", "disable"],
            Kind::Sendmail => &[
                "author",
                "comment",
                "disable",
                "from-address",
                "mailto",
                "mailto-user",
            ],
            Kind::Smtp => &[
                "author",
                "comment",
                "disable",
                "from-address",
                "mailto",
                "mailto-user",
                "mode",
                "password",
                "port",
                "username",
            ],
            Kind::Webhook => &["body", "comment", "disable", "header", "secret"],
            Kind::Matcher => &[
                "comment",
                "disable",
                "invert-match",
                "match-calendar",
                "match-field",
                "match-severity",
                "mode",
                "target",
            ],
        }
    }

    /// The word the crate's "not found" messages use.
    fn noun(self) -> &'static str {
        if self == Kind::Matcher {
            "matcher"
        } else {
            "endpoint"
        }
    }
}

/// Where an entry comes from, as the API shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Made by a user.
    UserCreated,
    /// A built-in as shipped.
    Builtin,
    /// A built-in the user changed.
    ModifiedBuiltin,
}

impl Origin {
    /// The API's word.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::UserCreated => "user-created",
            Origin::Builtin => "builtin",
            Origin::ModifiedBuiltin => "modified-builtin",
        }
    }
}

/// One section of `notifications.cfg`: its kind and public properties
/// (text, flags, numbers and lists of text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The section type.
    pub kind: Kind,
    /// The properties, by name.
    #[serde(default)]
    pub props: BTreeMap<String, Value>,
}

impl Entry {
    /// A text property.
    pub fn text(&self, key: &str) -> Option<&str> {
        self.props.get(key).and_then(Value::as_str)
    }

    /// A list property (empty when not set).
    pub fn list(&self, key: &str) -> Vec<String> {
        match self.props.get(key) {
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            Some(Value::String(s)) => vec![s.clone()],
            _ => Vec::new(),
        }
    }

    /// A flag property.
    pub fn flag(&self, key: &str) -> bool {
        match self.props.get(key) {
            Some(Value::Bool(b)) => *b,
            Some(Value::Number(n)) => n.as_i64() == Some(1),
            _ => false,
        }
    }

    /// Whether the entry is disabled.
    pub fn disabled(&self) -> bool {
        self.flag("disable")
    }
}

/// The built-in entries PVE's context adds when the file lacks them.
pub fn builtins() -> BTreeMap<String, Entry> {
    let text = |s: &str| Value::String(s.into());
    let list = |s: &str| Value::Array(vec![Value::String(s.into())]);
    BTreeMap::from([
        (
            "mail-to-root".to_string(),
            Entry {
                kind: Kind::Sendmail,
                props: BTreeMap::from([
                    (
                        "comment".to_string(),
                        text("Send mails to root@pam's email address"),
                    ),
                    ("mailto-user".to_string(), list("root@pam")),
                ]),
            },
        ),
        (
            "default-matcher".to_string(),
            Entry {
                kind: Kind::Matcher,
                props: BTreeMap::from([
                    ("mode".to_string(), text("all")),
                    ("target".to_string(), list("mail-to-root")),
                    (
                        "comment".to_string(),
                        text("Route all notifications to mail-to-root"),
                    ),
                ]),
            },
        ),
    ])
}

/// A change to an entry: the properties set, those deleted, the secrets
/// given and the digest the caller read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Change {
    /// Public properties to set.
    pub set: BTreeMap<String, Value>,
    /// Private properties to set (`token`, `password`, `secret`).
    pub private: BTreeMap<String, Value>,
    /// Properties to delete.
    pub delete: Vec<String>,
    /// The digest the caller read.
    pub digest: Option<String>,
}

/// `notifications.cfg` and its private part, and the outbox.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Notifications {
    /// Every section by name, built-ins included.
    #[serde(default = "builtins")]
    entries: BTreeMap<String, Entry>,
    /// The private sections by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    private: BTreeMap<String, BTreeMap<String, Value>>,
    /// What was sent (not saved).
    #[serde(skip)]
    outbox: Outbox,
    /// The package versions notified, as `node/package/version`
    /// (apt's `NotifyStatus`; not saved).
    #[serde(skip)]
    updates_notified: std::collections::BTreeSet<String>,
}

impl Default for Notifications {
    fn default() -> Self {
        Self {
            entries: builtins(),
            private: BTreeMap::new(),
            outbox: Outbox::default(),
            updates_notified: std::collections::BTreeSet::new(),
        }
    }
}

/// A webhook `header`/`secret` entry: `name=<name>[,value=<base64>]`.
pub fn key_value(s: &str) -> (String, Option<String>) {
    let mut name = String::new();
    let mut value = None;
    for part in s.split(',') {
        match part.split_once('=') {
            Some(("name", v)) => name = v.to_string(),
            Some(("value", v)) => value = Some(v.to_string()),
            None if name.is_empty() => name = part.to_string(),
            _ => {}
        }
    }
    (name, value)
}

/// A base64 value decoded as UTF-8 text.
pub fn decode_b64(v: &str) -> Option<String> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(v.trim())
        .ok()?;
    String::from_utf8(bytes).ok()
}

fn bad(msg: impl Into<String>) -> Error {
    Error::BadRequest(msg.into())
}

impl Notifications {
    /// Whether only the built-ins, as shipped, are configured.
    pub fn is_empty(&self) -> bool {
        self.private.is_empty() && self.entries == builtins()
    }

    /// An entry by name, of any kind.
    pub fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.get(name)
    }

    /// Where an entry comes from.
    pub fn origin(&self, name: &str) -> Origin {
        match (builtins().get(name), self.entries.get(name)) {
            (Some(b), Some(e)) if b == e => Origin::Builtin,
            (Some(_), _) => Origin::ModifiedBuiltin,
            (None, _) => Origin::UserCreated,
        }
    }

    /// The entries of a kind, by name.
    pub fn of_kind(&self, kind: Kind) -> impl Iterator<Item = (&str, &Entry)> {
        self.entries
            .iter()
            .filter(move |(_, e)| e.kind == kind)
            .map(|(n, e)| (n.as_str(), e))
    }

    /// Every target, by kind (gotify, sendmail, smtp, webhook) then name.
    pub fn targets(&self) -> Vec<(&str, &Entry)> {
        TARGET_KINDS
            .into_iter()
            .flat_map(|k| self.of_kind(k))
            .collect()
    }

    /// An entry of the kind asked for.
    ///
    /// # Errors
    /// 404 `endpoint '<name>' not found` / `matcher '<name>' not found`.
    pub fn get(&self, kind: Kind, name: &str) -> Result<&Entry> {
        self.entries
            .get(name)
            .filter(|e| e.kind == kind)
            .ok_or_else(|| Error::HttpNotFound(format!("{} '{name}' not found", kind.noun())))
    }

    /// The names of a webhook's secrets (never their values).
    pub fn secret_names(&self, name: &str) -> Vec<String> {
        self.private
            .get(name)
            .map(|p| {
                list_of(p.get("secret"))
                    .iter()
                    .map(|s| key_value(s).0)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A private property (a secret), for sending.
    pub fn private_text(&self, name: &str, key: &str) -> Option<String> {
        self.private
            .get(name)
            .and_then(|p| p.get(key))
            .and_then(|v| v.as_str().map(str::to_string))
    }

    /// A webhook's secrets, decoded, by name.
    pub fn secrets(&self, name: &str) -> BTreeMap<String, String> {
        self.private
            .get(name)
            .map(|p| {
                list_of(p.get("secret"))
                    .iter()
                    .map(|s| key_value(s))
                    .map(|(k, v)| (k, v.as_deref().and_then(decode_b64).unwrap_or_default()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `notifications.cfg` as written (without the private part).
    pub fn cfg_text(&self) -> String {
        let mut out = String::new();
        for (name, e) in &self.entries {
            out.push_str(&format!("{}: {name}\n", e.kind.as_str()));
            for (k, v) in &e.props {
                match v {
                    Value::Array(a) => {
                        for item in a {
                            out.push_str(&format!("\t{k} {}\n", text_of(item)));
                        }
                    }
                    Value::Bool(b) => out.push_str(&format!("\t{k} {}\n", u8::from(*b))),
                    other => out.push_str(&format!("\t{k} {}\n", text_of(other))),
                }
            }
            out.push('\n');
        }
        out
    }

    /// The digest of `notifications.cfg` (SHA-256, hex).
    pub fn digest(&self) -> String {
        hex::encode(Sha256::digest(self.cfg_text().as_bytes()))
    }

    fn check_digest(&self, digest: Option<&str>) -> Result<()> {
        match digest {
            Some(d) if d != self.digest() => Err(bad(MODIFIED)),
            _ => Ok(()),
        }
    }

    /// Refuses a matcher's targets that are not endpoints.
    fn check_targets(&self, targets: &[String]) -> Result<()> {
        for t in targets {
            if self.entries.get(t).is_none_or(|e| e.kind == Kind::Matcher) {
                return Err(Error::HttpNotFound(format!(
                    "endpoint '{t}' does not exist"
                )));
            }
        }
        Ok(())
    }

    /// Refuses what the crate refuses of an entry's settings.
    fn check_entry(&self, entry: &Entry) -> Result<()> {
        match entry.kind {
            Kind::Sendmail | Kind::Smtp
                if entry.list("mailto").is_empty() && entry.list("mailto-user").is_empty() =>
            {
                Err(bad(NO_RECIPIENT))
            }
            Kind::Matcher => {
                matcher::Matcher::from_entry(entry)?;
                self.check_targets(&entry.list("target"))
            }
            _ => Ok(()),
        }
    }

    /// Adds an entry (`add_*_endpoint`, `add_matcher`).
    ///
    /// # Errors
    /// 400 when the name is taken by an entry of any kind, a sendmail or
    /// smtp target has no recipient; 404 when a matcher names a target
    /// that does not exist; 500 for a match statement the crate cannot
    /// read.
    pub fn create(&mut self, kind: Kind, name: &str, change: Change) -> Result<()> {
        if self.entries.contains_key(name) {
            return Err(bad(format!(
                "Cannot create '{name}', an entity with the same name already exists"
            )));
        }
        let entry = Entry {
            kind,
            props: change
                .set
                .into_iter()
                .filter(|(_, v)| !is_empty(v))
                .collect(),
        };
        self.check_entry(&entry)?;
        let private: BTreeMap<String, Value> = change
            .private
            .into_iter()
            .filter(|(_, v)| !is_empty(v))
            .collect();
        if !private.is_empty() {
            self.private.insert(name.to_string(), private);
        }
        self.entries.insert(name.to_string(), entry);
        Ok(())
    }

    /// Changes an entry (`update_*`).
    ///
    /// # Errors
    /// 400 for a stale digest, a webhook header or secret the crate
    /// refuses, a target left without recipients; 404 for an entry that
    /// does not exist or a matcher target that does not.
    pub fn update(&mut self, kind: Kind, name: &str, change: Change) -> Result<()> {
        self.check_digest(change.digest.as_deref())?;
        let mut entry = self.get(kind, name)?.clone();
        let mut private = self.private.get(name).cloned().unwrap_or_default();
        for d in &change.delete {
            if !kind.deletable().contains(&d.as_str()) {
                return Err(Error::failed(format!(
                    "unknown variant `{d}`, expected one of {}",
                    kind.deletable()
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            entry.props.remove(d);
            private.remove(d);
        }
        if kind == Kind::Webhook {
            for h in list_of(change.set.get("header")) {
                let (hname, value) = key_value(&h);
                match value {
                    None => return Err(bad(format!("header '{hname}' has empty value"))),
                    Some(v) if decode_b64(&v).is_none() => {
                        return Err(bad(format!(
                            "header '{hname}' does not have valid base64 encoded data"
                        )));
                    }
                    Some(_) => {}
                }
            }
        }
        for (k, v) in change.set {
            entry.props.insert(k, v);
        }
        if kind == Kind::Webhook {
            if let Some(given) = change.private.get("secret") {
                let old = list_of(private.get("secret"));
                let mut kept: Vec<String> = Vec::new();
                for s in list_of(Some(given)) {
                    let (sname, value) = key_value(&s);
                    let item = match value {
                        Some(v) if decode_b64(&v).is_none() => {
                            return Err(bad(format!(
                                "secret '{sname}' does not have valid base64 encoded data"
                            )));
                        }
                        Some(_) => s.clone(),
                        None => old
                            .iter()
                            .find(|o| key_value(o).0 == sname)
                            .cloned()
                            .ok_or_else(|| bad(format!("secret '{sname}' not known")))?,
                    };
                    if kept.iter().any(|k| key_value(k).0 == sname) {
                        return Err(bad(format!("secret '{sname}' defined multiple times")));
                    }
                    kept.push(item);
                }
                private.insert(
                    "secret".into(),
                    Value::Array(kept.into_iter().map(Value::String).collect()),
                );
            }
        } else {
            for (k, v) in change.private {
                private.insert(k, v);
            }
        }
        entry.props.retain(|_, v| !is_empty(v));
        private.retain(|_, v| !is_empty(v));
        self.check_entry(&entry)?;
        self.entries.insert(name.to_string(), entry);
        if private.is_empty() {
            self.private.remove(name);
        } else {
            self.private.insert(name.to_string(), private);
        }
        Ok(())
    }

    /// Removes an entry; a built-in is reset to its default instead.
    ///
    /// # Errors
    /// 404 for an entry that does not exist; 400 for a target a matcher
    /// names.
    pub fn delete(&mut self, kind: Kind, name: &str) -> Result<()> {
        self.get(kind, name)?;
        if let Some(default) = builtins().remove(name) {
            self.entries.insert(name.to_string(), default);
            self.private.remove(name);
            return Ok(());
        }
        if kind != Kind::Matcher {
            let referrers: Vec<&str> = self
                .of_kind(Kind::Matcher)
                .filter(|(_, m)| m.list("target").iter().any(|t| t == name))
                .map(|(n, _)| n)
                .collect();
            if !referrers.is_empty() {
                return Err(bad(format!(
                    "cannot delete '{name}', referenced by: {}",
                    referrers.join(", ")
                )));
            }
        }
        self.entries.remove(name);
        self.private.remove(name);
        Ok(())
    }

    /// The matchers, parsed (a matcher the crate cannot read is skipped,
    /// as `check_matches` logs and goes on).
    pub fn matchers(&self) -> Vec<(String, matcher::Matcher)> {
        self.of_kind(Kind::Matcher)
            .filter_map(|(n, e)| {
                matcher::Matcher::from_entry(e)
                    .ok()
                    .map(|m| (n.to_string(), m))
            })
            .collect()
    }

    /// Whether a package version on a node is notified for the first
    /// time (and remembers it).
    pub fn first_update_notice(&mut self, node: &str, package: &str, version: &str) -> bool {
        self.updates_notified
            .insert(format!("{node}/{package}/{version}"))
    }

    /// The outbox.
    pub fn outbox(&self) -> &Outbox {
        &self.outbox
    }

    /// The outbox, to record or clear.
    pub fn outbox_mut(&mut self) -> &mut Outbox {
        &mut self.outbox
    }

    /// Sends a notification as `PVE::Notify::notify` does: through the
    /// enabled matchers to the enabled targets they select. `email_of`
    /// gives a user's mail address (for `mailto-user`).
    pub fn notify(&mut self, n: &Notification, email_of: &dyn Fn(&str) -> Option<String>) {
        let mut targets = std::collections::BTreeSet::new();
        for (name, m) in self.matchers() {
            if self.entries.get(&name).is_some_and(Entry::disabled) {
                continue;
            }
            if let Some(t) = m.targets_for(n) {
                targets.extend(t.iter().cloned());
            }
        }
        for t in targets {
            let Some(entry) = self.entries.get(&t).filter(|e| e.kind != Kind::Matcher) else {
                continue;
            };
            if entry.disabled() {
                continue;
            }
            let d = outbox::prepare(self, &t, entry, n, email_of);
            self.outbox.push(d);
        }
    }

    /// A backup's mail to its `mailto` in the legacy mode: a sendmail
    /// target of its own (`<a@x,b@y>`, author `vzdump backup tool`), no
    /// matcher.
    pub fn legacy_mail(&mut self, n: &Notification, mailto: &[String]) {
        let name = format!("<{}>", mailto.join(","));
        let entry = Entry {
            kind: Kind::Sendmail,
            props: BTreeMap::from([
                (
                    "mailto".to_string(),
                    Value::Array(mailto.iter().cloned().map(Value::String).collect()),
                ),
                (
                    "author".to_string(),
                    Value::String("vzdump backup tool".into()),
                ),
            ]),
        };
        let d = outbox::prepare(self, &name, &entry, n, &|_| None);
        self.outbox.push(d);
    }

    /// `test_target`: a test notification to one target, disabled or
    /// not.
    ///
    /// # Errors
    /// 500 `notification target '<name>' does not exist`.
    pub fn test_target(
        &mut self,
        name: &str,
        now: i64,
        email_of: &dyn Fn(&str) -> Option<String>,
    ) -> Result<()> {
        let Some(entry) = self.entries.get(name).filter(|e| e.kind != Kind::Matcher) else {
            return Err(Error::failed(format!(
                "notification target '{name}' does not exist"
            )));
        };
        let n = Notification::test(name, now);
        let d = outbox::prepare(self, name, entry, &n, email_of);
        self.outbox.push(d);
        Ok(())
    }
}

/// A property's value as a list of text.
pub fn list_of(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(a)) => a.iter().map(text_of).collect(),
        Some(Value::Null) | None => Vec::new(),
        Some(other) => vec![text_of(other)],
    }
}

/// An empty list or text, which the file does not keep.
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.is_empty(),
        Value::Null => true,
        _ => false,
    }
}

/// A scalar's text (a string as is, anything else as JSON).
pub fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(b) => u8::from(*b).to_string(),
        other => other.to_string(),
    }
}
