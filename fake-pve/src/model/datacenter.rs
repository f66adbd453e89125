//! `datacenter.cfg` (pve-cluster `DataCenterConfig.pm`, pve-manager
//! `API2/Cluster.pm` `get_options`/`set_options`), as far as fake-pve
//! holds it: the `tag-style` option, which decides how a guest's `tags`
//! are written (pve-guest-common `GuestHelpers::get_unique_tags`).
//!
//! The option is kept as the file keeps it, the string that was given;
//! `GET /cluster/options` answers it parsed (`parse_property_string`
//! with the option's format), next to what `parse_datacenter_config`
//! always fills in (`description` from the file's comment lines, the
//! default `mac_prefix`). Other datacenter options are not held: setting
//! one is refused as not emulated rather than silently dropped.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::access::{Access, AuthId};
use super::guests::Guests;
use super::{Error, Result};
use crate::PveVersion;
use crate::spec::Format;
use pve_schema::propstring;

/// The options fake-pve holds.
const HELD: &[&str] = &["tag-style"];

/// `$PROXMOX_OUI`, which `parse_datacenter_config` answers as
/// `mac_prefix` when the file sets none.
const PROXMOX_OUI: &str = "BC:24:11";

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

/// The format of `tag-style` in the release's schema.
fn tag_style_format(version: PveVersion) -> Option<&'static BTreeMap<String, pve_schema::Prop>> {
    let props = &crate::spec::spec(version)
        .endpoint("PUT", "/cluster/options")?
        .parameters
        .properties;
    match &props.get("tag-style")?.format {
        Some(Format::Object(f)) => Some(f),
        _ => None,
    }
}

/// A value of a parsed property string: a boolean (answered 0/1) or
/// text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prop {
    /// A boolean property.
    Flag(bool),
    /// Any other property, as written.
    Text(String),
}

/// A parsed `tag-style` as `parse_property_string` answers it, by key.
pub type TagStyleProps = BTreeMap<String, Prop>;

/// A parsed `tag-style`: booleans as flags, the rest as text.
fn parse_tag_style(version: PveVersion, value: &str) -> Result<TagStyleProps> {
    let Some(format) = tag_style_format(version) else {
        return Ok(TagStyleProps::new());
    };
    let parsed = propstring::parse(format, value)
        .map_err(|e| Error::invalid("tag-style", e.to_string().trim_end().to_string()))?;
    Ok(parsed
        .into_iter()
        .map(|(k, v)| {
            let is_bool = format
                .get(&k)
                .is_some_and(|p| p.kind.as_deref() == Some("boolean"));
            let v = match propstring::parse_boolean(&v) {
                Some(b) if is_bool => Prop::Flag(b),
                _ => Prop::Text(v),
            };
            (k, v)
        })
        .collect())
}

/// What `GET /cluster/options` answers of datacenter.cfg (without
/// `allowed-tags`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// `mac_prefix` (`$PROXMOX_OUI`), answered with an empty
    /// `description` before it, with `Sys.Audit` on `/` only.
    pub mac_prefix: Option<&'static str>,
    /// `tag-style`, parsed, when set.
    pub tag_style: Option<TagStyleProps>,
}

impl Datacenter {
    /// Whether no option is set (a fresh cluster).
    pub fn is_empty(&self) -> bool {
        self.options.is_empty()
    }

    /// `PUT /cluster/options`: each given option is written as given,
    /// then the ones in `delete` are removed (`set_options`).
    ///
    /// # Errors
    /// A `tag-style` that is no valid property string (400); an option
    /// fake-pve does not hold (501); nothing is changed then.
    pub fn set(
        &mut self,
        version: PveVersion,
        set: &BTreeMap<String, String>,
        delete: &[String],
    ) -> Result<()> {
        for (k, v) in set {
            if !HELD.contains(&k.as_str()) {
                return Err(Error::NotImplemented(format!(
                    "datacenter option '{k}' is not emulated by fake-pve (only {})",
                    HELD.join(", ")
                )));
            }
            parse_tag_style(version, v)?;
        }
        for (k, v) in set {
            self.options.insert(k.clone(), v.clone());
        }
        for k in delete {
            self.options.remove(k);
        }
        Ok(())
    }

    /// `GET /cluster/options` without `allowed-tags`: every option with
    /// `Sys.Audit` on `/`, else only `console` and `tag-style`.
    pub fn options(&self, version: PveVersion, audit: bool) -> Options {
        Options {
            mac_prefix: audit.then_some(PROXMOX_OUI),
            tag_style: self
                .options
                .get("tag-style")
                .map(|style| parse_tag_style(version, style).unwrap_or_default()),
        }
    }

    /// The tag style in force.
    pub fn tag_style(&self, version: PveVersion) -> TagStyle {
        let Some(parsed) = self
            .options
            .get("tag-style")
            .and_then(|s| parse_tag_style(version, s).ok())
        else {
            return TagStyle::default();
        };
        TagStyle {
            case_sensitive: parsed.get("case-sensitive") == Some(&Prop::Flag(true)),
            config_order: parsed.get("ordering") == Some(&Prop::Text("config".into())),
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
