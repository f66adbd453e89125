//! Authentication realms (`domains.cfg`) and the directories behind the
//! LDAP and AD ones (pve-access-control `API2/Domains.pm`,
//! `Auth/Plugin.pm`, `Auth/{PAM,PVE,LDAP,AD,OpenId}.pm`).
//!
//! A realm keeps its options as `domains.cfg` keeps them; what PVE would
//! ask an LDAP or AD server is answered from the realm's directory, which
//! a scenario declares (users with their passwords and attributes, groups
//! with their members). `pam` and `pve` always exist: deleting them
//! brings them back bare, as PVE's `parse_config` re-adds them.
//!
//! A realm sync, its options and its worker, are in `sync`.

mod sync;

use super::shadow::Given;
use super::*;
use crate::model::conf_value::ConfValue;
use crate::model::qemu::sha1_hex;
use sync::map_sync_defaults;
pub use sync::{SyncOptions, SyncParams};

/// The kind of a realm (its `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RealmType {
    /// Linux PAM.
    Pam,
    /// Proxmox VE's own passwords.
    Pve,
    /// An LDAP server.
    Ldap,
    /// A Microsoft Active Directory.
    Ad,
    /// An OpenID Connect provider.
    Openid,
}

impl RealmType {
    /// Parses a `type` value.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "pam" => Self::Pam,
            "pve" => Self::Pve,
            "ldap" => Self::Ldap,
            "ad" => Self::Ad,
            "openid" => Self::Openid,
            _ => return None,
        })
    }

    /// The `type` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pam => "pam",
            Self::Pve => "pve",
            Self::Ldap => "ldap",
            Self::Ad => "ad",
            Self::Openid => "openid",
        }
    }

    /// Whether the realm can be synced (LDAP and AD).
    pub fn is_directory(self) -> bool {
        matches!(self, Self::Ldap | Self::Ad)
    }

    /// The plugin's `options()`: each option with whether it is required
    /// and whether it is fixed after creation.
    fn options(self) -> &'static [(&'static str, bool, bool)] {
        const BASE: &[(&str, bool, bool)] = &[
            ("default", false, false),
            ("comment", false, false),
            ("tfa", false, false),
        ];
        const LDAP: &[(&str, bool, bool)] = &[
            ("server1", true, false),
            ("server2", false, false),
            ("base_dn", true, false),
            ("bind_dn", false, false),
            ("password", false, false),
            ("user_attr", true, false),
            ("port", false, false),
            ("secure", false, false),
            ("sslversion", false, false),
            ("default", false, false),
            ("comment", false, false),
            ("tfa", false, false),
            ("verify", false, false),
            ("capath", false, false),
            ("cert", false, false),
            ("certkey", false, false),
            ("filter", false, false),
            ("sync_attributes", false, false),
            ("user_classes", false, false),
            ("group_dn", false, false),
            ("group_name_attr", false, false),
            ("group_filter", false, false),
            ("group_classes", false, false),
            ("sync-defaults-options", false, false),
            ("mode", false, false),
            ("case-sensitive", false, false),
        ];
        const AD: &[(&str, bool, bool)] = &[
            ("server1", true, false),
            ("server2", false, false),
            ("domain", true, false),
            ("port", false, false),
            ("secure", false, false),
            ("sslversion", false, false),
            ("default", false, false),
            ("comment", false, false),
            ("tfa", false, false),
            ("verify", false, false),
            ("capath", false, false),
            ("cert", false, false),
            ("certkey", false, false),
            ("base_dn", false, false),
            ("bind_dn", false, false),
            ("password", false, false),
            ("user_attr", false, false),
            ("filter", false, false),
            ("sync_attributes", false, false),
            ("user_classes", false, false),
            ("group_dn", false, false),
            ("group_name_attr", false, false),
            ("group_filter", false, false),
            ("group_classes", false, false),
            ("sync-defaults-options", false, false),
            ("mode", false, false),
            ("case-sensitive", false, false),
        ];
        const OPENID: &[(&str, bool, bool)] = &[
            ("issuer-url", true, false),
            ("client-id", true, false),
            ("client-key", false, false),
            ("autocreate", false, false),
            ("username-claim", false, true),
            ("groups-claim", false, false),
            ("groups-autocreate", false, false),
            ("groups-overwrite", false, false),
            ("prompt", false, false),
            ("scopes", false, false),
            ("acr-values", false, false),
            ("default", false, false),
            ("comment", false, false),
            ("query-userinfo", false, false),
            ("audiences", false, false),
        ];
        match self {
            Self::Pam | Self::Pve => BASE,
            Self::Ldap => LDAP,
            Self::Ad => AD,
            Self::Openid => OPENID,
        }
    }

    fn option(self, key: &str) -> Option<(bool, bool)> {
        self.options()
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, req, fixed)| (*req, *fixed))
    }
}

/// Options stored as numbers: the booleans and `port`.
const NUMERIC: &[&str] = &[
    "autocreate",
    "case-sensitive",
    "default",
    "groups-autocreate",
    "groups-overwrite",
    "port",
    "query-userinfo",
    "secure",
    "verify",
];

/// A value as `domains.cfg` keeps it: booleans as 0/1, `port` a number.
fn typed(key: &str, value: &str) -> ConfValue {
    if NUMERIC.contains(&key) {
        let n = match value.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Some(1),
            "0" | "false" | "no" | "off" => Some(0),
            other => other.parse::<i64>().ok(),
        };
        if let Some(n) = n {
            return ConfValue::Int(n);
        }
    }
    value.into()
}

/// A user entry of an LDAP or AD directory.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectoryUser {
    /// The password the directory accepts for a bind as this user: its
    /// crypt(3) hash once loaded (see `Access::seal`), saved as
    /// `password_hash`; given in clear as `password`.
    #[serde(
        rename = "password_hash",
        alias = "password",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub password: Option<String>,
    /// `email`, as synced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// `firstname`, as synced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firstname: Option<String>,
    /// `lastname`, as synced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lastname: Option<String>,
    /// `comment`, as synced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// What an LDAP or AD server holds: users by name, groups by name with
/// the names of their members.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Directory {
    /// Users by their name in the directory (without the realm).
    #[serde(default)]
    pub users: BTreeMap<String, DirectoryUser>,
    /// Groups by name, with member user names.
    #[serde(default)]
    pub groups: BTreeMap<String, BTreeSet<String>>,
}

impl Directory {
    fn is_empty(&self) -> bool {
        self.users.is_empty() && self.groups.is_empty()
    }
}

/// One realm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Realm {
    kind: RealmType,
    /// The options as `domains.cfg` keeps them (without `type`).
    #[serde(default)]
    options: BTreeMap<String, ConfValue>,
    /// The bind password (`/etc/pve/priv/realm/<realm>.pw`), never shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bind_password: Option<String>,
    /// What the server behind an LDAP or AD realm holds.
    #[serde(default, skip_serializing_if = "Directory::is_empty")]
    directory: Directory,
}

impl Realm {
    /// The options as `domains.cfg` keeps them (without `type`), each
    /// typed as the schema types it.
    pub fn options(&self) -> &BTreeMap<String, ConfValue> {
        &self.options
    }

    /// Whether this is the default realm of the login form.
    pub fn is_default(&self) -> bool {
        self.options.get("default") == Some(&ConfValue::Int(1))
    }

    /// The comment, if not empty.
    pub fn comment(&self) -> Option<String> {
        self.text("comment").filter(|c| !c.is_empty())
    }

    fn builtin(kind: RealmType) -> Self {
        let comment = match kind {
            RealmType::Pam => "Linux PAM standard authentication",
            _ => "Proxmox VE authentication server",
        };
        let mut options = BTreeMap::new();
        options.insert("comment".to_string(), comment.into());
        Self {
            kind,
            options,
            bind_password: None,
            directory: Directory::default(),
        }
    }

    /// The realm's type.
    pub fn kind(&self) -> RealmType {
        self.kind
    }

    /// What the server behind the realm holds: an LDAP or AD realm's
    /// directory, the accounts of an `openid` realm's emulated provider.
    pub fn directory(&self) -> &Directory {
        &self.directory
    }

    /// The realm's `tfa` option, parsed: its `type` (`oath` or `yubico`)
    /// and the other keys.
    pub fn tfa(&self) -> Option<BTreeMap<String, String>> {
        let text = self.options.get("tfa")?.as_str()?;
        let map = parse_property_string(text);
        map.contains_key("type").then_some(map)
    }

    fn text(&self, key: &str) -> Option<String> {
        self.options.get(key).map(ConfValue::text)
    }
}

/// `k=v,k=v` as a map (a bare value is the `type`, `tfa`'s default key).
pub fn parse_property_string(text: &str) -> BTreeMap<String, String> {
    text.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
            None => ("type".to_string(), p.trim().to_string()),
        })
        .collect()
}

/// The realms of the cluster, `pam` and `pve` always among them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Realms {
    realms: BTreeMap<String, Realm>,
}

impl Default for Realms {
    fn default() -> Self {
        let mut realms = BTreeMap::new();
        realms.insert("pam".to_string(), Realm::builtin(RealmType::Pam));
        realms.insert("pve".to_string(), Realm::builtin(RealmType::Pve));
        Self { realms }
    }
}

impl Realms {
    /// Whether only the built-in realms exist, untouched.
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// Realm `id`.
    pub fn get(&self, id: &str) -> Option<&Realm> {
        self.realms.get(id)
    }

    /// `domains.cfg` as PVE writes it, for the digest.
    fn text(&self) -> String {
        let mut out = String::new();
        for (id, r) in &self.realms {
            out.push_str(&format!("{}: {id}\n", r.kind.as_str()));
            for (k, v) in &r.options {
                out.push_str(&format!("\t{k} {v}\n"));
            }
            out.push('\n');
        }
        out
    }

    /// The SHA-1 of `domains.cfg`.
    pub fn digest(&self) -> String {
        sha1_hex(self.text().as_bytes())
    }

    /// Adds a realm declared by a scenario.
    ///
    /// # Errors
    /// The refusal `POST /access/domains` gives.
    pub fn declare(
        &mut self,
        id: &str,
        kind: &str,
        options: BTreeMap<String, String>,
        password: Option<String>,
        directory: Directory,
    ) -> Result<()> {
        self.create(id, kind, options, password, None)?;
        if let Some(r) = self.realms.get_mut(id) {
            r.directory = directory;
        }
        Ok(())
    }

    /// `POST /access/domains`.
    ///
    /// # Errors
    /// 500 `add auth server failed: ...` with PVE's reasons.
    pub fn create(
        &mut self,
        id: &str,
        kind: &str,
        options: BTreeMap<String, String>,
        password: Option<String>,
        check_connection: Option<bool>,
    ) -> Result<()> {
        let failed = |m: String| Error::failed(format!("add auth server failed: {m}"));
        if self.realms.contains_key(id) {
            return Err(Error::exists(format!(
                "add auth server failed: domain '{id}' already exists"
            )));
        }
        if id == "pam" || id == "pve" {
            return Err(failed(format!("unable to use reserved name '{id}'")));
        }
        let Some(kind) = RealmType::parse(kind) else {
            return Err(Error::invalid(
                "type",
                format!(
                    "value '{kind}' does not have a value in the enumeration 'ad, ldap, openid, pam, pve'"
                ),
            ));
        };
        if matches!(kind, RealmType::Pam | RealmType::Pve) {
            return Err(failed(format!(
                "unable to create builtin type '{}'",
                kind.as_str()
            )));
        }
        if check_connection.is_some() && !kind.is_directory() {
            return Err(failed(
                "'check-connection' parameter can only be set for realms of type 'ldap' or 'ad'"
                    .into(),
            ));
        }
        let mut stored = check_config(kind, options, true).map_err(|e| failed(e.to_string()))?;
        if kind.is_directory() {
            map_sync_defaults(&mut stored);
        }
        let password = if kind.is_directory() { password } else { None };
        let realm = Realm {
            kind,
            options: stored,
            bind_password: password,
            directory: Directory::default(),
        };
        if check_connection == Some(true) {
            realm.connect(id).map_err(|e| failed(e.to_string()))?;
        }
        if realm.options.contains_key("default") && realm.options["default"] == ConfValue::Int(1) {
            self.clear_default();
        }
        self.realms.insert(id.to_string(), realm);
        Ok(())
    }

    fn clear_default(&mut self) {
        for r in self.realms.values_mut() {
            r.options.remove("default");
        }
    }

    /// `PUT /access/domains/{realm}`.
    ///
    /// # Errors
    /// 500 `update auth server failed: ...` with PVE's reasons.
    pub fn update(
        &mut self,
        id: &str,
        options: BTreeMap<String, String>,
        delete: &[String],
        digest: Option<&str>,
        password: Option<String>,
        check_connection: Option<bool>,
    ) -> Result<()> {
        let failed = |m: String| Error::failed(format!("update auth server failed: {m}"));
        if let Some(d) = digest
            && d != self.digest()
        {
            return Err(Error::conflict(
                "update auth server failed: detected modified configuration - file changed by other user? Try again.",
            ));
        }
        let Some(kind) = self.realms.get(id).map(|r| r.kind) else {
            return Err(Error::not_found(format!(
                "update auth server failed: domain '{id}' does not exist"
            )));
        };
        if check_connection.is_some() && !kind.is_directory() {
            return Err(failed(
                "'check-connection' parameter can only be set for realms of type 'ldap' or 'ad'"
                    .into(),
            ));
        }
        if delete.is_empty() && options.is_empty() && password.is_none() {
            return Err(failed("no options specified".into()));
        }
        let mut stored = check_config(kind, options, false).map_err(|e| failed(e.to_string()))?;
        if kind.is_directory() {
            map_sync_defaults(&mut stored);
        }
        let makes_default = stored.get("default") == Some(&ConfValue::Int(1));
        let mut realm = self.realms[id].clone();
        for k in delete {
            realm.options.remove(k);
            if k == "password" {
                realm.bind_password = None;
            }
        }
        realm.options.extend(stored);
        if kind.is_directory() && password.is_some() {
            realm.bind_password = password;
        }
        if check_connection == Some(true) {
            realm.connect(id).map_err(|e| failed(e.to_string()))?;
        }
        if makes_default {
            self.clear_default();
        }
        self.realms.insert(id.to_string(), realm);
        Ok(())
    }

    /// `DELETE /access/domains/{realm}`. `pam` and `pve` come back bare.
    ///
    /// # Errors
    /// 500 `delete auth server failed: authentication domain 'x' does
    /// not exist`.
    pub fn delete(&mut self, id: &str) -> Result<()> {
        if self.realms.remove(id).is_none() {
            return Err(Error::not_found(format!(
                "delete auth server failed: authentication domain '{id}' does not exist"
            )));
        }
        match id {
            "pam" => {
                self.realms
                    .insert(id.into(), Realm::builtin(RealmType::Pam));
            }
            "pve" => {
                self.realms
                    .insert(id.into(), Realm::builtin(RealmType::Pve));
            }
            _ => {}
        }
        Ok(())
    }

    /// The realms by id, in `domains.cfg`'s order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Realm)> {
        self.realms.iter()
    }

    /// A realm.
    ///
    /// # Errors
    /// 500 `domain 'x' does not exist`.
    pub fn existing(&self, id: &str) -> Result<&Realm> {
        self.realms
            .get(id)
            .ok_or_else(|| Error::not_found(format!("domain '{id}' does not exist")))
    }

    /// The realm of a user id, or PVE's refusal.
    ///
    /// # Errors
    /// 500 `auth domain 'x' does not exist`.
    pub fn of_user(&self, userid: &str) -> Result<(&str, &Realm)> {
        let realm = userid.rsplit_once('@').map_or("", |(_, r)| r);
        self.realms
            .get_key_value(realm)
            .map(|(k, r)| (k.as_str(), r))
            .ok_or_else(|| Error::not_found(format!("auth domain '{realm}' does not exist")))
    }

    /// Hashes the directories' passwords given in clear (see
    /// `Access::seal`).
    pub(super) fn seal(&mut self, key: &crate::model::context::SecretKey) {
        for (id, realm) in &mut self.realms {
            for (name, user) in &mut realm.directory.users {
                if let Some(pw) = &user.password
                    && !super::shadow::is_hash(pw)
                {
                    let salt = super::shadow::keyed_salt(key, &format!("{name}@{id}"), pw);
                    user.password = Some(super::shadow::hash(pw, &salt));
                }
            }
        }
    }
}

/// `connect_and_bind`'s refusal of a realm with a `bind_dn` but no stored
/// password (the realm's id).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("missing password for realm {0}")]
struct MissingBindPassword(String);

/// Why SectionConfig's `check_config` refuses a realm's options.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum RealmConfigError {
    /// An update of an option fixed at creation.
    #[error("can't change value of fixed parameter '{0}'")]
    Fixed(String),
    /// An option the realm type does not have.
    #[error("unexpected property '{0}'")]
    Unexpected(String),
    /// A value with a line feed.
    #[error("property contains a line feed")]
    LineFeed,
    /// A required option left out at creation.
    #[error("missing value for required option '{0}'")]
    MissingRequired(String),
}

impl Realm {
    /// `connect_and_bind`: with a `bind_dn` the bind password must be
    /// stored. The directory itself always answers.
    fn connect(&self, id: &str) -> std::result::Result<(), MissingBindPassword> {
        if self.options.contains_key("bind_dn") && self.bind_password.is_none() {
            return Err(MissingBindPassword(id.to_string()));
        }
        Ok(())
    }

    /// The first factor of a login of `name` (the user name without the
    /// realm) with `password` against this realm's server.
    ///
    /// # Errors
    /// 500 with the plugin's reason (the login turns every reason into
    /// a 401).
    pub fn authenticate(&self, id: &str, name: &str, password: Given<'_>) -> Result<()> {
        match self.kind {
            RealmType::Openid => Err(Error::failed(
                "OpenID realm does not allow password verification.",
            )),
            RealmType::Ldap | RealmType::Ad => {
                self.connect(id).map_err(|e| Error::failed(e.to_string()))?;
                match self.directory.users.get(name) {
                    Some(u) if password.matches(u.password.as_deref()) => Ok(()),
                    Some(_) => Err(Error::failed("Invalid credentials")),
                    None => Err(Error::failed(format!("user '{name}' not found"))),
                }
            }
            // pam and pve check the user's own password (see `Access`).
            RealmType::Pam | RealmType::Pve => Err(Error::failed("invalid credentials")),
        }
    }
}

/// SectionConfig's `check_config` for a realm type: every key must be
/// one of the type's options, fixed ones stay, required ones are there on
/// create. Answers the options as stored.
fn check_config(
    kind: RealmType,
    options: BTreeMap<String, String>,
    create: bool,
) -> std::result::Result<BTreeMap<String, ConfValue>, RealmConfigError> {
    let mut stored = BTreeMap::new();
    for (k, v) in &options {
        if k == "type" {
            continue;
        }
        if !create && kind.option(k).is_some_and(|(_, fixed)| fixed) {
            return Err(RealmConfigError::Fixed(k.clone()));
        }
        if kind.option(k).is_none() || k == "password" {
            return Err(RealmConfigError::Unexpected(k.clone()));
        }
        if v.contains(['\n', '\r']) {
            return Err(RealmConfigError::LineFeed);
        }
        stored.insert(k.clone(), typed(k, v));
    }
    if create
        && let Some((k, _, _)) = kind
            .options()
            .iter()
            .find(|(k, req, _)| *req && !options.contains_key(*k))
    {
        return Err(RealmConfigError::MissingRequired((*k).to_string()));
    }
    Ok(stored)
}

impl Access {
    /// The realms.
    pub fn realms(&self) -> &Realms {
        &self.realms
    }

    /// The realms, to change them.
    pub fn realms_mut(&mut self) -> &mut Realms {
        &mut self.realms
    }

    /// The first factor of a login: pam and pve check the user's password,
    /// LDAP and AD the realm's directory, OpenID refuses.
    ///
    /// # Errors
    /// 500 with PVE's reason (the login answers 401).
    pub fn authenticate_first(&self, userid: &str, password: &str, now: i64) -> Result<()> {
        self.authenticate_given(userid, Given::Clear(password), now)
    }

    /// [`Access::authenticate_first`] of a password as a request gives it
    /// (in a replayed request, in the form the journal keeps).
    ///
    /// # Errors
    /// As [`Access::authenticate_first`].
    pub fn authenticate_given(&self, userid: &str, password: Given<'_>, now: i64) -> Result<()> {
        let user = self.check_user_enabled(userid, now)?;
        let (id, realm) = self.realms.of_user(userid)?;
        match realm.kind {
            RealmType::Pam | RealmType::Pve => {
                if password.matches(user.password.as_deref()) {
                    Ok(())
                } else {
                    Err(Error::failed(if realm.kind == RealmType::Pam {
                        "Authentication failure"
                    } else {
                        "invalid credentials"
                    }))
                }
            }
            _ => {
                let name = userid.rsplit_once('@').map_or(userid, |(n, _)| n);
                realm.authenticate(id, name, password)
            }
        }
    }

    /// What a password of `userid` is checked against: a pam or pve
    /// user's own hash, an LDAP or AD user's in the realm's directory;
    /// none for an unknown user or realm, or one that keeps none.
    pub fn credential(&self, userid: &str) -> Option<&str> {
        let (_, realm) = self.realms.of_user(userid).ok()?;
        match realm.kind {
            RealmType::Pam | RealmType::Pve => self.users.get(userid)?.password.as_deref(),
            RealmType::Ldap | RealmType::Ad => {
                let name = userid.rsplit_once('@').map_or(userid, |(n, _)| n);
                realm.directory.users.get(name)?.password.as_deref()
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
