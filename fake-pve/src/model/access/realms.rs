//! Authentication realms (`domains.cfg`) and the directories behind the
//! LDAP and AD ones (pve-access-control `API2/Domains.pm`,
//! `Auth/Plugin.pm`, `Auth/{PAM,PVE,LDAP,AD,OpenId}.pm`).
//!
//! A realm keeps its options as `domains.cfg` keeps them; what PVE would
//! ask an LDAP or AD server is answered from the realm's directory, which
//! a scenario declares (users with their passwords and attributes, groups
//! with their members). `pam` and `pve` always exist: deleting them
//! brings them back bare, as PVE's `parse_config` re-adds them.

use super::shadow::Given;
use super::*;
use crate::model::qemu::sha1_hex;

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
fn typed(key: &str, value: &str) -> Value {
    if NUMERIC.contains(&key) {
        let n = match value.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Some(1),
            "0" | "false" | "no" | "off" => Some(0),
            other => other.parse::<i64>().ok(),
        };
        if let Some(n) = n {
            return json!(n);
        }
    }
    json!(value)
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
    options: BTreeMap<String, Value>,
    /// The bind password (`/etc/pve/priv/realm/<realm>.pw`), never shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bind_password: Option<String>,
    /// What the server behind an LDAP or AD realm holds.
    #[serde(default, skip_serializing_if = "Directory::is_empty")]
    directory: Directory,
}

impl Realm {
    fn builtin(kind: RealmType) -> Self {
        let comment = match kind {
            RealmType::Pam => "Linux PAM standard authentication",
            _ => "Proxmox VE authentication server",
        };
        let mut options = BTreeMap::new();
        options.insert("comment".to_string(), json!(comment));
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

    /// The realm's `tfa` option, parsed: its `type` (`oath` or `yubico`)
    /// and the other keys.
    pub fn tfa(&self) -> Option<BTreeMap<String, String>> {
        let text = self.options.get("tfa")?.as_str()?;
        let map = parse_property_string(text);
        map.contains_key("type").then_some(map)
    }

    fn text(&self, key: &str) -> Option<String> {
        self.options.get(key).map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
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
                let v = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
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
        let mut stored = check_config(kind, options, true).map_err(failed)?;
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
            realm.connect(id).map_err(failed)?;
        }
        if realm.options.contains_key("default") && realm.options["default"] == json!(1) {
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
        let mut stored = check_config(kind, options, false).map_err(failed)?;
        if kind.is_directory() {
            map_sync_defaults(&mut stored);
        }
        let makes_default = stored.get("default") == Some(&json!(1));
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
            realm.connect(id).map_err(failed)?;
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

    /// `GET /access/domains`.
    pub fn index(&self) -> Vec<Value> {
        self.realms
            .iter()
            .map(|(id, r)| {
                let mut e = json!({ "realm": id, "type": r.kind.as_str() });
                if let Some(c) = r.text("comment").filter(|c| !c.is_empty()) {
                    e["comment"] = json!(c);
                }
                if r.options.get("default") == Some(&json!(1)) {
                    e["default"] = json!(1);
                }
                if let Some(t) = r.tfa().and_then(|t| t.get("type").cloned()) {
                    e["tfa"] = json!(t);
                }
                e
            })
            .collect()
    }

    /// `GET /access/domains/{realm}`.
    ///
    /// # Errors
    /// 500 `domain 'x' does not exist`.
    pub fn read(&self, id: &str) -> Result<Value> {
        let r = self
            .realms
            .get(id)
            .ok_or_else(|| Error::not_found(format!("domain '{id}' does not exist")))?;
        let mut v = json!(r.options);
        v["type"] = json!(r.kind.as_str());
        if r.kind == RealmType::Pam {
            v["plugin"] = json!("PVE::Auth::PAM");
        }
        v["digest"] = json!(self.digest());
        Ok(v)
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

impl Realm {
    /// `connect_and_bind`: with a `bind_dn` the bind password must be
    /// stored. The directory itself always answers.
    fn connect(&self, id: &str) -> std::result::Result<(), String> {
        if self.options.contains_key("bind_dn") && self.bind_password.is_none() {
            return Err(format!("missing password for realm {id}"));
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
                self.connect(id).map_err(Error::failed)?;
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
) -> std::result::Result<BTreeMap<String, Value>, String> {
    let mut stored = BTreeMap::new();
    for (k, v) in &options {
        if k == "type" {
            continue;
        }
        if !create && kind.option(k).is_some_and(|(_, fixed)| fixed) {
            return Err(format!("can't change value of fixed parameter '{k}'"));
        }
        if kind.option(k).is_none() || k == "password" {
            return Err(format!("unexpected property '{k}'"));
        }
        if v.contains(['\n', '\r']) {
            return Err("property contains a line feed".into());
        }
        stored.insert(k.clone(), typed(k, v));
    }
    if create
        && let Some((k, _, _)) = kind
            .options()
            .iter()
            .find(|(k, req, _)| *req && !options.contains_key(*k))
    {
        return Err(format!("missing value for required option '{k}'"));
    }
    Ok(stored)
}

/// `$map_sync_default_options`: the deprecated `full` and `purge` of
/// `sync-defaults-options` become `remove-vanished`.
fn map_sync_defaults(options: &mut BTreeMap<String, Value>) {
    let Some(text) = options.get("sync-defaults-options").and_then(Value::as_str) else {
        return;
    };
    let mut map = parse_property_string(text);
    let on = |v: Option<&String>| v.is_some_and(|v| v == "1" || v == "true");
    if !map.contains_key("remove-vanished") && (on(map.get("full")) || on(map.get("purge"))) {
        let mut props = Vec::new();
        if on(map.get("full")) {
            props.extend(["entry", "properties"]);
        }
        if on(map.get("purge")) {
            props.push("acl");
        }
        map.insert("remove-vanished".into(), props.join(";"));
    }
    map.remove("full");
    map.remove("purge");
    let text: Vec<String> = map.iter().map(|(k, v)| format!("{k}={v}")).collect();
    options.insert("sync-defaults-options".into(), json!(text.join(",")));
}

/// The options of one sync, after `$parse_sync_opts`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncOptions {
    /// `users`, `groups` or `both`.
    pub scope: String,
    /// `none` or a `;`-list of `acl`, `properties`, `entry`.
    pub remove_vanished: String,
    /// Whether new users are enabled.
    pub enable_new: bool,
}

/// What a sync request gives: each option may be missing.
#[derive(Debug, Clone, Default)]
pub struct SyncParams {
    /// `scope`.
    pub scope: Option<String>,
    /// `remove-vanished`.
    pub remove_vanished: Option<String>,
    /// `enable-new`.
    pub enable_new: Option<bool>,
    /// Deprecated `full`.
    pub full: Option<bool>,
    /// Deprecated `purge`.
    pub purge: Option<bool>,
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

    /// The checks `POST /access/domains/{realm}/sync` makes before its
    /// worker starts, and the options the worker uses.
    ///
    /// # Errors
    /// 400 `realm: Realm does not exist.`; 500 for a realm that is not
    /// LDAP or AD; 400 `scope: ...` when no scope is given or configured.
    pub fn sync_options(&self, realm: &str, p: &SyncParams) -> Result<SyncOptions> {
        let Some(r) = self.realms.get(realm) else {
            return Err(Error::invalid("realm", "Realm does not exist."));
        };
        if !r.kind.is_directory() {
            return Err(Error::failed(format!(
                "Cannot sync realm type '{}'! Only LDAP/AD realms can be synced.",
                r.kind.as_str()
            )));
        }
        let defaults = r
            .text("sync-defaults-options")
            .map(|t| parse_property_string(&t))
            .unwrap_or_default();
        let flag = |v: Option<&String>| v.map(|v| v == "1" || v == "true");
        let scope = p.scope.clone().or_else(|| defaults.get("scope").cloned());
        let mut remove = p
            .remove_vanished
            .clone()
            .or_else(|| defaults.get("remove-vanished").cloned());
        let full = p.full.or_else(|| flag(defaults.get("full")));
        let purge = p.purge.or_else(|| flag(defaults.get("purge")));
        if remove.is_none() && (full == Some(true) || purge == Some(true)) {
            let mut props = Vec::new();
            if full == Some(true) {
                props.extend(["entry", "properties"]);
            }
            if purge == Some(true) {
                props.push("acl");
            }
            remove = Some(props.join(";"));
        }
        let enable_new = p
            .enable_new
            .or_else(|| flag(defaults.get("enable-new")))
            .unwrap_or(true);
        let Some(scope) = scope else {
            return Err(Error::invalid(
                "scope",
                "Not passed as parameter and not defined in realm default sync options.",
            ));
        };
        Ok(SyncOptions {
            scope,
            remove_vanished: remove.unwrap_or_else(|| "none".into()),
            enable_new,
        })
    }

    /// The worker of a realm sync: reads the realm's directory and
    /// updates `user.cfg` as `$update_users` and `$update_groups` do
    /// (unless `dry_run`). Answers the task log.
    ///
    /// # Errors
    /// The log so far and the task's error (a realm gone meanwhile, a
    /// bind without password).
    pub fn run_realm_sync(
        &mut self,
        realm: &str,
        opts: &SyncOptions,
        dry_run: bool,
    ) -> std::result::Result<Vec<String>, (Vec<String>, String)> {
        let mut log = Vec::new();
        let prefix = if dry_run { "(dry test run) " } else { "" };
        log.push(format!("{prefix}starting sync for realm {realm}"));
        let Some(r) = self.realms.get(realm).cloned() else {
            return Err((log, format!("domain '{realm}' does not exist")));
        };
        if let Err(e) = r.connect(realm) {
            return Err((log, e));
        }
        let what = if opts.scope == "both" {
            "users and groups".to_string()
        } else {
            opts.scope.clone()
        };
        let synced_users: BTreeMap<String, &DirectoryUser> = r
            .directory
            .users
            .iter()
            .map(|(n, u)| (format!("{n}@{realm}"), u))
            .collect();
        let synced_groups: BTreeMap<String, BTreeSet<String>> = r
            .directory
            .groups
            .iter()
            .map(|(g, members)| {
                let users = members
                    .iter()
                    .filter(|m| r.directory.users.contains_key(*m))
                    .map(|m| format!("{m}@{realm}"))
                    .collect();
                (format!("{g}-{realm}"), users)
            })
            .collect();
        let mut work = self.clone();
        log.push(format!("got data from server, updating {what}"));
        let remove: BTreeSet<&str> = opts.remove_vanished.split(';').collect();
        let vanished = format!(" (remove-vanished opts: {})", opts.remove_vanished);
        if opts.scope == "users" || opts.scope == "both" {
            log.push(format!("syncing users{vanished}"));
            if remove.contains("entry") {
                log.push("deleting outdated existing users first".into());
            }
            let suffix = format!("@{realm}");
            let old: Vec<String> = work
                .users
                .keys()
                .filter(|u| u.ends_with(&suffix) && !synced_users.contains_key(*u))
                .cloned()
                .collect();
            for userid in old {
                if remove.contains("entry") {
                    log.push(format!("remove user '{userid}'"));
                    work.users.remove(&userid);
                    for g in work.groups.values_mut() {
                        g.members.remove(&userid);
                    }
                }
                if remove.contains("acl") {
                    log.push(format!("purge users '{userid}' ACL entries"));
                    work.remove_acl_subject(UgKind::User, &userid);
                }
            }
            for (userid, du) in &synced_users {
                let old = work.users.get(userid).cloned();
                let mut user = match &old {
                    Some(o) if !remove.contains("properties") => {
                        log.push(format!("updating user '{userid}'"));
                        o.clone()
                    }
                    Some(o) => {
                        log.push(format!("overwriting user '{userid}'"));
                        let mut u = User::new(userid);
                        u.enable = o.enable;
                        u.tokens = o.tokens.clone();
                        u
                    }
                    None => {
                        log.push(format!("adding user '{userid}'"));
                        let mut u = User::new(userid);
                        u.enable = opts.enable_new;
                        u
                    }
                };
                for (field, v) in [
                    (&mut user.email, &du.email),
                    (&mut user.firstname, &du.firstname),
                    (&mut user.lastname, &du.lastname),
                    (&mut user.comment, &du.comment),
                ] {
                    if v.is_some() {
                        field.clone_from(v);
                    }
                }
                work.users.insert(userid.clone(), user);
            }
        }
        if opts.scope == "groups" || opts.scope == "both" {
            log.push(format!("syncing groups{vanished}"));
            if remove.contains("entry") {
                log.push("deleting outdated existing groups first".into());
            }
            let suffix = format!("-{realm}");
            let old: Vec<String> = work
                .groups
                .keys()
                .filter(|g| g.ends_with(&suffix) && !synced_groups.contains_key(*g))
                .cloned()
                .collect();
            for groupid in old {
                if remove.contains("entry") {
                    log.push(format!("remove group '{groupid}'"));
                    work.groups.remove(&groupid);
                }
                if remove.contains("acl") {
                    log.push(format!("purge groups '{groupid}' ACL entries"));
                    work.remove_acl_subject(UgKind::Group, &groupid);
                }
            }
            for (groupid, members) in &synced_groups {
                let members: BTreeSet<String> = members
                    .iter()
                    .filter(|m| work.users.contains_key(*m))
                    .cloned()
                    .collect();
                match work.groups.get_mut(groupid) {
                    Some(g) if !remove.contains("properties") => {
                        log.push(format!("updating group '{groupid}'"));
                        g.members = members;
                    }
                    Some(g) => {
                        log.push(format!("overwriting group '{groupid}'"));
                        *g = Group {
                            comment: None,
                            members,
                        };
                    }
                    None => {
                        log.push(format!("adding group '{groupid}'"));
                        work.groups.insert(
                            groupid.clone(),
                            Group {
                                comment: None,
                                members,
                            },
                        );
                    }
                }
            }
        }
        if dry_run {
            log.push(String::new());
            log.push("NOTE: Dry test run, changes were NOT written to the configuration.".into());
            return Ok(log);
        }
        *self = work;
        log.push(format!("successfully updated {what} configuration"));
        Ok(log)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn opts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    fn ldap() -> BTreeMap<String, String> {
        opts(&[
            ("server1", "ldap.example.com"),
            ("base_dn", "dc=example,dc=com"),
            ("user_attr", "uid"),
        ])
    }

    #[rstest]
    #[case(
        "pam",
        "ldap",
        ldap(),
        "add auth server failed: domain 'pam' already exists"
    )]
    #[case("corp", "pve", opts(&[]), "add auth server failed: unable to create builtin type 'pve'")]
    #[case("corp", "ldap", opts(&[("server1", "x"), ("user_attr", "uid")]), "add auth server failed: missing value for required option 'base_dn'")]
    #[case("corp", "ad", opts(&[("server1", "x"), ("domain", "x"), ("issuer-url", "x")]), "add auth server failed: unexpected property 'issuer-url'")]
    #[case("corp", "openid", opts(&[("issuer-url", "x")]), "add auth server failed: missing value for required option 'client-id'")]
    fn create_refusals(
        #[case] id: &str,
        #[case] kind: &str,
        #[case] o: BTreeMap<String, String>,
        #[case] msg: &str,
    ) {
        let mut r = Realms::default();
        let e = r.create(id, kind, o, None, None).expect_err("refused");
        assert_eq!(e.message(), msg);
    }

    #[test]
    fn default_moves_and_builtins_come_back() {
        let mut r = Realms::default();
        let mut o = ldap();
        o.insert("default".into(), "1".into());
        r.create("corp", "ldap", o, Some("pw".into()), None)
            .expect("create");
        assert_eq!(r.read("corp").expect("read")["default"], json!(1));
        r.update("pve", opts(&[("default", "1")]), &[], None, None, None)
            .expect("update");
        assert!(r.read("corp").expect("read").get("default").is_none());
        let idx = r.index();
        assert_eq!(idx.len(), 3);
        assert_eq!(idx[2]["default"], json!(1));
        r.delete("pve").expect("delete pve");
        assert!(r.read("pve").expect("pve back").get("default").is_none());
        r.delete("corp").expect("delete");
        assert_eq!(
            r.delete("corp").expect_err("gone").message(),
            "delete auth server failed: authentication domain 'corp' does not exist"
        );
    }

    #[test]
    fn update_checks() {
        let mut r = Realms::default();
        r.create(
            "oidc",
            "openid",
            opts(&[
                ("issuer-url", "https://id.example.com"),
                ("client-id", "pve"),
                ("username-claim", "email"),
            ]),
            None,
            None,
        )
        .expect("create");
        let e = r
            .update(
                "oidc",
                opts(&[("username-claim", "sub")]),
                &[],
                None,
                None,
                None,
            )
            .expect_err("fixed");
        assert_eq!(
            e.message(),
            "update auth server failed: can't change value of fixed parameter 'username-claim'"
        );
        let e = r
            .update("oidc", opts(&[]), &[], None, None, None)
            .expect_err("empty");
        assert_eq!(
            e.message(),
            "update auth server failed: no options specified"
        );
        let e = r
            .update(
                "oidc",
                opts(&[("comment", "x")]),
                &[],
                Some("00"),
                None,
                None,
            )
            .expect_err("digest");
        assert_eq!(e.kind(), crate::model::ErrorKind::Conflict);
        let e = r
            .update("nope", opts(&[("comment", "x")]), &[], None, None, None)
            .expect_err("missing");
        assert_eq!(
            e.message(),
            "update auth server failed: domain 'nope' does not exist"
        );
    }

    #[test]
    fn deprecated_sync_defaults_are_mapped() {
        let mut r = Realms::default();
        let mut o = ldap();
        o.insert(
            "sync-defaults-options".into(),
            "scope=users,full=1,purge=1".into(),
        );
        r.create("corp", "ldap", o, None, None).expect("create");
        assert_eq!(
            r.read("corp").expect("read")["sync-defaults-options"],
            json!("remove-vanished=entry;properties;acl,scope=users")
        );
    }

    fn synced() -> Access {
        let mut a = Access::default();
        let mut dir = Directory::default();
        dir.users.insert(
            "alice".into(),
            DirectoryUser {
                password: Some("wonderland".into()),
                email: Some("alice@example.com".into()),
                ..DirectoryUser::default()
            },
        );
        dir.users.insert("bob".into(), DirectoryUser::default());
        dir.groups
            .insert("devs".into(), ["alice".to_string()].into_iter().collect());
        a.realms
            .declare("corp", "ldap", ldap(), None, dir)
            .expect("declare");
        a
    }

    #[test]
    fn sync_adds_users_and_groups() {
        let mut a = synced();
        let o = a
            .sync_options(
                "corp",
                &SyncParams {
                    scope: Some("both".into()),
                    enable_new: Some(false),
                    ..SyncParams::default()
                },
            )
            .expect("options");
        let log = a.run_realm_sync("corp", &o, true).expect("dry run");
        assert_eq!(log[0], "(dry test run) starting sync for realm corp");
        assert!(!a.user_exists("alice@corp"));
        let log = a.run_realm_sync("corp", &o, false).expect("sync");
        assert_eq!(
            log,
            [
                "starting sync for realm corp",
                "got data from server, updating users and groups",
                "syncing users (remove-vanished opts: none)",
                "adding user 'alice@corp'",
                "adding user 'bob@corp'",
                "syncing groups (remove-vanished opts: none)",
                "adding group 'devs-corp'",
                "successfully updated users and groups configuration",
            ]
        );
        let alice = a.user("alice@corp").expect("alice");
        assert!(!alice.enable);
        assert_eq!(alice.email.as_deref(), Some("alice@example.com"));
        assert!(a.groups()["devs-corp"].members.contains("alice@corp"));
        a.user_entry("alice@corp").expect("alice").enable = true;
        assert!(a.authenticate_first("alice@corp", "wonderland", 0).is_ok());
        assert!(a.authenticate_first("alice@corp", "wrong", 0).is_err());
    }

    #[test]
    fn sync_removes_vanished_entries() {
        let mut a = synced();
        let mut ghost = User::new("ghost@corp");
        ghost.enable = true;
        a.put_user(ghost);
        let o = a
            .sync_options(
                "corp",
                &SyncParams {
                    scope: Some("users".into()),
                    remove_vanished: Some("entry;acl".into()),
                    ..SyncParams::default()
                },
            )
            .expect("options");
        let log = a.run_realm_sync("corp", &o, false).expect("sync");
        assert!(log.contains(&"remove user 'ghost@corp'".to_string()));
        assert!(!a.user_exists("ghost@corp"));
    }

    #[rstest]
    #[case("nope", SyncParams::default(), "Parameter verification failed.")]
    #[case(
        "pve",
        SyncParams::default(),
        "Cannot sync realm type 'pve'! Only LDAP/AD realms can be synced."
    )]
    #[case("corp", SyncParams::default(), "Parameter verification failed.")]
    fn sync_refusals(#[case] realm: &str, #[case] p: SyncParams, #[case] msg: &str) {
        let a = synced();
        assert_eq!(
            a.sync_options(realm, &p).expect_err("refused").message(),
            msg
        );
    }
}
