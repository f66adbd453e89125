//! Who may set which guest tags: `datacenter.cfg`'s `registered-tags` and
//! `user-tag-access`, and pve-guest-common `GuestHelpers.pm`
//! `get_allowed_tags` and `assert_tag_permissions`.
//!
//! A user needs `VM.Config.Options` on the guest for any tag change;
//! beyond that, `Sys.Modify` on `/` lets one set any tag. Others may set
//! registered tags never, and other tags as `user-allow` says: `free`
//! (the default) any tag, `existing` tags of guests they may audit and
//! those of `user-allow-list`, `list` only those of the list, `none` no
//! tag at all.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::{Access, AuthId};
use crate::model::guests::Guests;
use crate::model::{Error, Result};

/// `datacenter.cfg`'s tag rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagAccess {
    /// `registered-tags`: tags only `Sys.Modify` on `/` may set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub registered: Vec<String>,
    /// `user-tag-access.user-allow`: `none`, `list`, `existing` or
    /// `free`.
    #[serde(default = "free")]
    pub user_allow: String,
    /// `user-tag-access.user-allow-list`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_list: Vec<String>,
}

fn free() -> String {
    "free".into()
}

impl Default for TagAccess {
    fn default() -> Self {
        Self {
            registered: Vec::new(),
            user_allow: free(),
            allow_list: Vec::new(),
        }
    }
}

impl TagAccess {
    /// Whether these are PVE's defaults (nothing to save).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

impl Access {
    /// `datacenter.cfg`'s tag rules.
    pub fn tag_access(&self) -> &TagAccess {
        &self.tag_access
    }

    /// Replaces the tag rules.
    pub fn set_tag_access(&mut self, rules: TagAccess) {
        self.tag_access = rules;
    }
}

/// `split_list` of a tags value.
fn tags_of(v: Option<&str>) -> Vec<String> {
    v.unwrap_or_default()
        .split([';', ',', ' ', '\t', '\n', '\0'])
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// `get_allowed_tags` for a caller without `Sys.Modify` on `/`: the
/// tags allowed, and whether any tag is (`free`).
fn allowed_tags(access: &Access, guests: &Guests, who: &AuthId) -> (BTreeSet<String>, bool) {
    let rules = access.tag_access();
    let mut allowed: BTreeSet<String> = BTreeSet::new();
    if rules.user_allow != "none" {
        allowed.extend(rules.allow_list.iter().cloned());
    }
    if rules.user_allow == "free" || rules.user_allow == "existing" {
        let vms = guests
            .values()
            .map(|v| (v.vmid, v.config.get("tags").map(String::as_str)));
        let cts = guests
            .cts()
            .values()
            .map(|c| (c.vmid(), c.config().get("tags").map(String::as_str)));
        for (vmid, tags) in vms.chain(cts) {
            if access.has_priv(who, &format!("/vms/{vmid}"), "VM.Audit") {
                allowed.extend(tags_of(tags));
            }
        }
    }
    for r in &rules.registered {
        allowed.remove(r);
    }
    (allowed, rules.user_allow == "free")
}

/// `assert_tag_permissions`: `VM.Config.Options` on the guest, and
/// for each tag added or removed, that the caller may set it.
///
/// # Errors
/// 403 `Permission check failed (/vms/N, VM.Config.Options)`, 403
/// `Permission check failed (/, Sys.Modify for modifying tag 'x')`.
pub fn assert_tag_permissions(
    access: &Access,
    guests: &Guests,
    who: &AuthId,
    vmid: u32,
    old: Option<&str>,
    new: Option<&str>,
) -> Result<()> {
    access.check_perm(who, &format!("/vms/{vmid}"), &["VM.Config.Options"])?;
    if access.has_priv(who, "/", "Sys.Modify") {
        return Ok(());
    }
    let count = |tags: &[String], t: &str| tags.iter().filter(|x| *x == t).count();
    let (old, new) = (tags_of(old), tags_of(new));
    let all: BTreeSet<&String> = old.iter().chain(new.iter()).collect();
    let changed: Vec<&String> = all
        .into_iter()
        .filter(|t| count(&old, t) != count(&new, t))
        .collect();
    if changed.is_empty() {
        return Ok(());
    }
    let (allowed, freeform) = allowed_tags(access, guests, who);
    let registered = &access.tag_access().registered;
    for t in changed {
        if (!allowed.contains(t) && !freeform) || registered.contains(t) {
            return Err(Error::Forbidden(format!(
                "Permission check failed (/, Sys.Modify for modifying tag '{t}')"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_split_as_pve_splits_lists() {
        assert_eq!(tags_of(Some("a;b c,d")), vec!["a", "b", "c", "d"]);
        assert!(tags_of(None).is_empty());
        assert!(TagAccess::default().is_default());
    }
}
