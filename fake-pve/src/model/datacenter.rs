//! `datacenter.cfg` (pve-cluster `DataCenterConfig.pm`, pve-manager
//! `API2/Cluster.pm` `get_options`/`set_options`): every option of the
//! release's schema, kept as the file keeps it (the string that was
//! given, with the rewrites `write_datacenter_config` makes), and
//! answered as `parse_datacenter_config` reads it back: the property
//! strings it parses as objects (booleans as 0/1), `registered-tags` and
//! `user-allow-list` as lists, `description` from the file's comment
//! lines, the default `mac_prefix`.
//!
//! The options that change behaviour elsewhere are read from here:
//! `tag-style` (how a guest's `tags` are written, pve-guest-common
//! `GuestHelpers::get_unique_tags`), `next-id` (`/cluster/nextid`),
//! `mac_prefix` (generated MAC addresses), `registered-tags` and
//! `user-tag-access` (who may set which tag, kept by
//! [`super::access::tags`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::access::{Access, AuthId};
use super::guests::Guests;
use super::{Error, Result};
use crate::PveVersion;
use crate::spec::Format;
use pve_schema::propstring;

/// The options `parse_datacenter_config` turns into objects.
const PARSED: &[&str] = &[
    "crs",
    "migration",
    "replication",
    "next-id",
    "ha",
    "notify",
    "u2f",
    "webauthn",
    "tag-style",
    "user-tag-access",
];

/// `next-id`'s defaults (`/cluster/nextid` searches `[lower, upper)`).
pub const NEXT_ID_LOWER: u32 = 100;
/// See [`NEXT_ID_LOWER`].
pub const NEXT_ID_UPPER: u32 = 1_000_000;
/// Both defaults.
pub const NEXT_ID_DEFAULT: (u32, u32) = (NEXT_ID_LOWER, NEXT_ID_UPPER);

/// `$PROXMOX_OUI`, which `parse_datacenter_config` answers as
/// `mac_prefix` when the file sets none.
pub(crate) const PROXMOX_OUI: &str = "BC:24:11";

/// The datacenter options that were set, as written to `datacenter.cfg`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Datacenter {
    /// Option name to the value as given.
    #[serde(default)]
    options: BTreeMap<String, String>,
}

/// How tags are made unique and ordered (`tag-style`'s `case-sensitive`
/// and `ordering`; `shape` and `color-map` are for the web interface).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TagStyle {
    /// `case-sensitive=1`: `Prod` and `prod` are two tags, kept as
    /// written; otherwise tags are lower-cased.
    pub case_sensitive: bool,
    /// `ordering=config`: tags stay in the order given; otherwise
    /// (`alphabetical`, the default) they are sorted.
    pub config_order: bool,
}

impl TagStyle {
    /// `get_unique_tags`: the tags of `value` (split as `split_list`
    /// splits: on `;`, `,` and white space), sorted unless the ordering is
    /// `config` (case-insensitively unless case-sensitive), lower-cased
    /// unless case-sensitive, each once, joined with `;`.
    pub fn unique_tags(self, value: &str) -> String {
        let mut tags = pve_schema::formats::split_list(value);
        if !self.config_order {
            // Perl's sort is stable: equal keys keep their order.
            if self.case_sensitive {
                tags.sort();
            } else {
                tags.sort_by_key(|t| t.to_ascii_lowercase());
            }
        }
        let mut seen: Vec<String> = Vec::new();
        for tag in tags {
            let tag = if self.case_sensitive {
                tag.to_string()
            } else {
                tag.to_ascii_lowercase()
            };
            if !seen.contains(&tag) {
                seen.push(tag);
            }
        }
        seen.join(";")
    }
}

/// An option's definition in the release's schema.
fn option_prop(version: PveVersion, key: &str) -> Option<&'static pve_schema::Prop> {
    crate::spec::spec(version)
        .endpoint("PUT", "/cluster/options")?
        .parameters
        .properties
        .get(key)
}

/// The property-string format of an option in the release's schema.
fn option_format(
    version: PveVersion,
    key: &str,
) -> Option<&'static BTreeMap<String, pve_schema::Prop>> {
    match &option_prop(version, key)?.format {
        Some(Format::Object(f)) => Some(f),
        _ => None,
    }
}

/// A value of a parsed property string: a boolean (answered 0/1), a list
/// (`user-allow-list`) or text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prop {
    /// A boolean property.
    Flag(bool),
    /// A list split on `;`.
    List(Vec<String>),
    /// Any other property, as written.
    Text(String),
}

/// A parsed property string as `parse_property_string` answers it, by
/// key.
pub type TagStyleProps = BTreeMap<String, Prop>;

/// A parsed property-string option: booleans as flags, the rest as text.
fn parse_option(version: PveVersion, key: &str, value: &str) -> Result<TagStyleProps> {
    let Some(format) = option_format(version, key) else {
        return Ok(TagStyleProps::new());
    };
    let parsed = propstring::parse(format, value)
        .map_err(|e| Error::invalid(key, e.to_string().trim_end().to_string()))?;
    Ok(parsed
        .into_iter()
        .map(|(k, v)| {
            let is_bool = format
                .get(&k)
                .is_some_and(|p| p.kind.as_deref() == Some("boolean"));
            let v = match propstring::parse_boolean(&v) {
                Some(b) if is_bool => Prop::Flag(b),
                _ if key == "user-tag-access" && k == "user-allow-list" => {
                    Prop::List(v.split(';').map(str::to_string).collect())
                }
                _ => Prop::Text(v),
            };
            (k, v)
        })
        .collect())
}

/// `next-id`'s `lower` and `upper` in `options` (the defaults unless set).
fn next_id_bounds(options: &BTreeMap<String, String>, version: PveVersion) -> (u32, u32) {
    let parsed = options
        .get("next-id")
        .and_then(|s| parse_option(version, "next-id", s).ok())
        .unwrap_or_default();
    let bound = |key: &str, default: u32| match parsed.get(key) {
        Some(Prop::Text(t)) => t.parse().unwrap_or(default),
        _ => default,
    };
    let (lower, upper) = NEXT_ID_DEFAULT;
    (bound("lower", lower), bound("upper", upper))
}

/// An option as `GET /cluster/options` answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptionValue {
    /// A property string, parsed.
    Parsed(TagStyleProps),
    /// `registered-tags`, split on `;`.
    List(Vec<String>),
    /// A boolean (`migration_unsecure`), as 0/1.
    Flag(bool),
    /// Any other option, as written.
    Text(String),
}

/// What `GET /cluster/options` answers of datacenter.cfg (without
/// `allowed-tags`), by option.
pub type Options = BTreeMap<String, OptionValue>;

impl Datacenter {
    /// Whether no option is set (a fresh cluster).
    pub fn is_empty(&self) -> bool {
        self.options.is_empty()
    }

    /// An option as written, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.options.get(key).map(String::as_str)
    }

    /// `migration`'s `type` and `network` (its default key is `type`);
    /// `migration_unsecure` alone reads as the type.
    pub fn migration(&self) -> (Option<String>, Option<String>) {
        let Some(m) = self.get("migration") else {
            let insecure = self
                .get("migration_unsecure")
                .and_then(propstring::parse_boolean)
                .is_some_and(|b| b);
            return (insecure.then(|| "insecure".to_string()), None);
        };
        let (mut kind, mut network) = (None, None);
        for part in m.split(',') {
            match part.split_once('=') {
                Some(("type", v)) => kind = Some(v.to_string()),
                Some(("network", v)) => network = Some(v.to_string()),
                Some(_) => {}
                None => kind = Some(part.to_string()),
            }
        }
        (kind, network)
    }

    /// `PUT /cluster/options` (`set_options`): each given option is set as
    /// given, the ones in `delete` are removed, and the file is written
    /// as `write_datacenter_config` writes it: `migration_unsecure`
    /// becomes `migration`'s `type` when no `migration` is set, `applet`
    /// is `html5`, the default `mac_prefix` and an empty `crs` are left
    /// out, the lists kept from before are sorted, and `next-id` must
    /// keep its lower bound under its upper one.
    ///
    /// # Errors
    /// A property string that does not parse (400); `lower (x) <= upper
    /// (y) boundary rule broken`; nothing is changed then.
    pub fn set(
        &mut self,
        version: PveVersion,
        set: &BTreeMap<String, String>,
        delete: &[String],
    ) -> Result<()> {
        for (k, v) in set {
            if option_format(version, k).is_some() {
                parse_option(version, k, v)?;
            }
        }
        let mut next = self.options.clone();
        // What was read from the file is written again as
        // `print_property_string` prints it: its lists sorted.
        for (k, v) in &mut next {
            if set.contains_key(k) {
                continue;
            }
            if k == "registered-tags" {
                let mut tags: Vec<&str> = v.split(';').collect();
                tags.sort_unstable();
                *v = tags.join(";");
            }
        }
        for (k, v) in set {
            next.insert(k.clone(), v.clone());
        }
        for k in delete {
            next.remove(k);
        }
        if let Some(u) = next.remove("migration_unsecure") {
            if next.contains_key("migration") {
                next.insert("migration_unsecure".into(), u);
            } else {
                let secure = propstring::parse_boolean(&u) != Some(true);
                let kind = if secure { "secure" } else { "insecure" };
                next.insert("migration".into(), format!("type={kind}"));
            }
        }
        if next.get("console").is_some_and(|c| c == "applet") {
            next.insert("console".into(), "html5".into());
        }
        if next
            .get("mac_prefix")
            .is_some_and(|m| m.eq_ignore_ascii_case(PROXMOX_OUI))
        {
            next.remove("mac_prefix");
        }
        if next.get("crs").is_some_and(String::is_empty) {
            next.remove("crs");
        }
        let (lower, upper) = next_id_bounds(&next, version);
        if lower > upper {
            return Err(Error::failed(format!(
                "lower ({lower}) <= upper ({upper}) boundary rule broken"
            )));
        }
        self.options = next;
        Ok(())
    }

    /// `GET /cluster/options` without `allowed-tags`: every option with
    /// `Sys.Audit` on `/`, else only `console` and `tag-style`.
    pub fn options(&self, version: PveVersion, audit: bool) -> Options {
        let mut out = Options::new();
        for (k, v) in &self.options {
            if !audit && k != "console" && k != "tag-style" {
                continue;
            }
            let value = if k == "description" {
                continue;
            } else if PARSED.contains(&k.as_str()) {
                OptionValue::Parsed(parse_option(version, k, v).unwrap_or_default())
            } else if k == "registered-tags" {
                OptionValue::List(v.split(';').map(str::to_string).collect())
            } else if option_prop(version, k).is_some_and(|p| p.kind.as_deref() == Some("boolean"))
            {
                OptionValue::Flag(propstring::parse_boolean(v).unwrap_or(false))
            } else {
                OptionValue::Text(v.clone())
            };
            out.insert(k.clone(), value);
        }
        if audit {
            // The description is the file's comment lines, each ending
            // in a newline.
            let description: String = self
                .options
                .get("description")
                .map(|d| d.lines().map(|l| format!("{l}\n")).collect())
                .unwrap_or_default();
            out.insert("description".into(), OptionValue::Text(description));
            out.entry("mac_prefix".into())
                .or_insert_with(|| OptionValue::Text(PROXMOX_OUI.into()));
            // `migration_unsecure` next to no `migration` reads as its type.
            if let Some(OptionValue::Flag(u)) = out.get("migration_unsecure").cloned()
                && !matches!(out.get("migration"), Some(OptionValue::Parsed(p)) if p.contains_key("type"))
            {
                let kind = if u { "insecure" } else { "secure" };
                let entry = out
                    .entry("migration".into())
                    .or_insert_with(|| OptionValue::Parsed(TagStyleProps::new()));
                if let OptionValue::Parsed(p) = entry {
                    p.insert("type".into(), Prop::Text(kind.into()));
                }
            }
        }
        out
    }

    /// The tag style in force.
    pub fn tag_style(&self, version: PveVersion) -> TagStyle {
        let Some(parsed) = self
            .options
            .get("tag-style")
            .and_then(|s| parse_option(version, "tag-style", s).ok())
        else {
            return TagStyle::default();
        };
        TagStyle {
            case_sensitive: parsed.get("case-sensitive") == Some(&Prop::Flag(true)),
            config_order: parsed.get("ordering") == Some(&Prop::Text("config".into())),
        }
    }

    /// `next-id`'s `lower` and `upper` (100 and 1000000 unless set).
    pub fn next_id_bounds(&self, version: PveVersion) -> (u32, u32) {
        next_id_bounds(&self.options, version)
    }

    /// The tag rules `registered-tags` and `user-tag-access` set.
    pub fn tag_access(&self, version: PveVersion) -> super::access::tags::TagAccess {
        let mut rules = super::access::tags::TagAccess::default();
        if let Some(r) = self.options.get("registered-tags") {
            rules.registered = r
                .split(';')
                .filter(|t| !t.is_empty())
                .map(str::to_string)
                .collect();
        }
        if let Some(u) = self.options.get("user-tag-access") {
            let parsed = parse_option(version, "user-tag-access", u).unwrap_or_default();
            if let Some(Prop::Text(a)) = parsed.get("user-allow") {
                rules.user_allow.clone_from(a);
            }
            if let Some(Prop::List(l)) = parsed.get("user-allow-list") {
                rules.allow_list.clone_from(l);
            }
        }
        rules
    }

    /// A scenario's `registered-tags` and `user-tag-access`, written into
    /// the file as PVE would write them.
    pub fn declare_tag_access(&mut self, rules: &super::access::tags::TagAccess) {
        if !rules.registered.is_empty() {
            self.options
                .insert("registered-tags".into(), rules.registered.join(";"));
        }
        if rules.user_allow != "free" || !rules.allow_list.is_empty() {
            let mut v = format!("user-allow={}", rules.user_allow);
            if !rules.allow_list.is_empty() {
                v.push_str(&format!(",user-allow-list={}", rules.allow_list.join(";")));
            }
            self.options.insert("user-tag-access".into(), v);
        }
    }
}

/// `allowed-tags` of `GET /cluster/options` for `who`
/// (`get_allowed_tags` with the default `user-tag-access`,
/// `user-allow=free`): the tags of every guest for a user with
/// `Sys.Modify` on `/`, else of the guests `who` may audit; sorted, each
/// once.
pub fn allowed_tags(access: &Access, guests: &Guests, who: &AuthId) -> Vec<String> {
    let privileged = access.has_priv(who, "/", "Sys.Modify");
    let vms = guests.values().map(|v| (v.vmid(), v.config()));
    let cts = guests.cts().values().map(|c| (c.vmid(), c.config()));
    let mut tags: Vec<String> = vms
        .chain(cts)
        .filter(|(vmid, _)| privileged || access.has_priv(who, &format!("/vms/{vmid}"), "VM.Audit"))
        .filter_map(|(_, conf)| conf.get("tags"))
        .flat_map(|t| pve_schema::formats::split_list(t))
        .map(str::to_string)
        .collect();
    tags.sort();
    tags.dedup();
    tags
}
