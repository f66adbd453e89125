//! `/etc/pve/ceph.conf` as pve-storage's `PVE::CephConfig` keeps it: named
//! sections of keys and values, written section by section in its order
//! (`global`, `client`, `client.*`, `mds`, `mds.*`, `mon`, `mon.*`, `osd`,
//! `osd.*`, `mgr`, `mgr.*`, then the rest), each section's keys sorted,
//! indented with a tab, an empty line after each section, and the comment
//! characters `;` and `#` escaped.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The sections of `ceph.conf`, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CephConf(BTreeMap<String, BTreeMap<String, String>>);

/// The order the writer puts sections in: an exact name, or a prefix
/// followed by a dot.
const ORDER: &[(&str, bool)] = &[
    ("global", false),
    ("client", false),
    ("client", true),
    ("mds", false),
    ("mds", true),
    ("mon", false),
    ("mon", true),
    ("osd", false),
    ("osd", true),
    ("mgr", false),
    ("mgr", true),
];

impl CephConf {
    /// Whether the file has no section.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A section, if the file has it.
    pub fn section(&self, name: &str) -> Option<&BTreeMap<String, String>> {
        self.0.get(name)
    }

    /// Whether the file has the section.
    pub fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// One value.
    pub fn get(&self, section: &str, key: &str) -> Option<&str> {
        self.0.get(section)?.get(key).map(String::as_str)
    }

    /// Sets one value (the section is made when missing).
    pub fn set(&mut self, section: &str, key: &str, value: impl Into<String>) {
        self.0
            .entry(section.to_string())
            .or_default()
            .insert(key.to_string(), value.into());
    }

    /// Removes one value.
    pub fn unset(&mut self, section: &str, key: &str) {
        if let Some(s) = self.0.get_mut(section) {
            s.remove(key);
        }
    }

    /// Removes a section with its values.
    pub fn remove_section(&mut self, section: &str) {
        self.0.remove(section);
    }

    /// The sections' names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// The file's text, as `write_ceph_config` writes it.
    pub fn text(&self) -> String {
        let mut written: Vec<&str> = Vec::new();
        let mut out = String::new();
        let write = |out: &mut String, name: &str, keys: &BTreeMap<String, String>| {
            out.push('[');
            out.push_str(name);
            out.push_str("]\n");
            for (k, v) in keys {
                out.push('\t');
                out.push_str(k);
                out.push_str(" = ");
                out.push_str(v);
                out.push('\n');
            }
            out.push('\n');
        };
        for (stem, dotted) in ORDER {
            for (name, keys) in &self.0 {
                let fits = if *dotted {
                    name.strip_prefix(stem)
                        .is_some_and(|rest| rest.starts_with('.'))
                } else {
                    name == stem
                };
                if fits && !written.contains(&name.as_str()) {
                    write(&mut out, name, keys);
                    written.push(name);
                }
            }
        }
        for (name, keys) in &self.0 {
            if !written.contains(&name.as_str()) {
                write(&mut out, name, keys);
            }
        }
        escape_comments(&out)
    }
}

/// Escapes `;` and `#` that are not escaped already.
fn escape_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut prev = '\0';
    for c in text.chars() {
        if (c == ';' || c == '#') && prev != '\\' {
            out.push('\\');
        }
        out.push(c);
        prev = c;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// Sections come in the writer's order, keys sorted, tab-indented.
    #[test]
    fn sections_are_written_in_pve_order() {
        let mut c = CephConf::default();
        c.set("mon.pve1", "public_addr", "127.0.0.1");
        c.set("zzz", "a", "b");
        c.set("client", "keyring", "/etc/pve/priv/$cluster.$name.keyring");
        c.set("global", "fsid", "x");
        c.set("global", "auth_client_required", "cephx");
        c.set(
            "client.crash",
            "keyring",
            "/etc/pve/ceph/$cluster.$name.keyring",
        );
        c.set("mds", "keyring", "/var/lib/ceph/mds/ceph-$id/keyring");
        assert_eq!(
            c.text(),
            "[global]\n\tauth_client_required = cephx\n\tfsid = x\n\n\
             [client]\n\tkeyring = /etc/pve/priv/$cluster.$name.keyring\n\n\
             [client.crash]\n\tkeyring = /etc/pve/ceph/$cluster.$name.keyring\n\n\
             [mds]\n\tkeyring = /var/lib/ceph/mds/ceph-$id/keyring\n\n\
             [mon.pve1]\n\tpublic_addr = 127.0.0.1\n\n\
             [zzz]\n\ta = b\n\n"
        );
    }

    #[rstest]
    #[case("a;b", "a\\;b")]
    #[case("a#b", "a\\#b")]
    #[case("a\\;b", "a\\;b")]
    #[case("plain", "plain")]
    fn comment_characters_are_escaped(#[case] text: &str, #[case] want: &str) {
        assert_eq!(escape_comments(text), want);
    }

    #[test]
    fn values_are_set_and_removed() {
        let mut c = CephConf::default();
        assert!(c.is_empty());
        c.set("global", "mon_host", "127.0.0.1");
        assert_eq!(c.get("global", "mon_host"), Some("127.0.0.1"));
        c.unset("global", "mon_host");
        assert_eq!(c.get("global", "mon_host"), None);
        c.remove_section("global");
        assert!(!c.has("global"));
    }
}
