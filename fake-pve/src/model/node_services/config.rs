//! `/etc/pve/nodes/<node>/config` as pve-manager's `NodeConfig.pm`
//! writes and reads it: the description as `#` comment lines on top,
//! then `key: value` lines in key order; its digest is the SHA-1 of the
//! text.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Error, Result};

/// The node configuration file, kept as its text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeConfig {
    raw: String,
}

/// `encode_text`: `%`, control characters and non-ASCII as `%XX`.
fn encode_text(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b == b'%' || !(0x20..0x7f).contains(&b) {
            out.push_str(&format!("%{b:02X}"));
        } else {
            out.push(char::from(b));
        }
    }
    out
}

/// `decode_text`, the reverse of [`encode_text`].
fn decode_text(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(hex) = std::str::from_utf8(&bytes[i + 1..i + 3])
            && let Ok(v) = u8::from_str_radix(hex, 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses a node configuration as `parse_node_config` does: comment lines
/// make the description (each with its newline), `key: value` the rest.
pub fn parse_node_config(raw: &str) -> BTreeMap<String, String> {
    let mut conf = BTreeMap::new();
    let mut descr = String::new();
    for line in raw.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(c) = line.strip_prefix('#') {
            descr.push_str(&decode_text(c.trim_end()));
            descr.push('\n');
            continue;
        }
        if let Some((k, v)) = line.split_once(':')
            && !k.is_empty()
            && !k.contains(char::is_whitespace)
        {
            conf.insert(k.to_string(), v.trim_start().to_string());
        }
    }
    conf.insert("description".into(), descr);
    conf
}

/// Writes a configuration as `write_node_config` does.
fn write_node_config(conf: &BTreeMap<String, String>) -> Result<String> {
    let mut raw = String::new();
    if let Some(d) = conf.get("description") {
        // Perl's `split(/\n/, ...)` drops the trailing empty fields.
        let mut lines: Vec<&str> = d.split('\n').collect();
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        for line in lines {
            raw.push('#');
            raw.push_str(&encode_text(line));
            raw.push('\n');
        }
    }
    for (k, v) in conf {
        if k == "description" || k == "digest" {
            continue;
        }
        if v.contains('\n') {
            return Err(Error::failed(format!(
                "detected invalid newline inside property '{k}'"
            )));
        }
        raw.push_str(&format!("{k}: {v}\n"));
    }
    Ok(raw)
}

/// The value of key `key` (or of the default key) of a property string.
fn prop(value: &str, key: &str, default_key: bool) -> Option<String> {
    for (i, part) in value.split(',').enumerate() {
        match part.split_once('=') {
            Some((k, v)) if k == key => return Some(v.to_string()),
            None if i == 0 && default_key => return Some(part.to_string()),
            _ => {}
        }
    }
    None
}

impl NodeConfig {
    /// The options as they read back.
    pub fn options(&self) -> BTreeMap<String, String> {
        parse_node_config(&self.raw)
    }

    /// The SHA-1 of the file.
    pub fn digest(&self) -> String {
        super::super::qemu::sha1_hex(self.raw.as_bytes())
    }

    /// The MAC of the `wakeonlan` option.
    pub fn wakeonlan_mac(&self) -> Option<String> {
        let conf = parse_node_config(&self.raw);
        prop(conf.get("wakeonlan")?, "mac", true)
    }

    /// Sets `set`, then removes `delete`, and checks the ACME domains.
    ///
    /// # Errors
    /// A value with a newline; an ACME domain named twice or with a DNS
    /// plugin that does not exist.
    pub fn update(
        &mut self,
        set: &BTreeMap<String, String>,
        delete: &[String],
        plugins: &std::collections::BTreeSet<String>,
    ) -> Result<()> {
        let mut conf = parse_node_config(&self.raw);
        for (k, v) in set {
            conf.insert(k.clone(), v.clone());
        }
        for k in delete {
            conf.remove(k);
        }
        verify_acme(&conf, plugins)?;
        self.raw = write_node_config(&conf)?;
        Ok(())
    }
}

/// `get_acme_conf`'s checks: a domain appears once among `acme`'s
/// `domains` and the `acmedomainN` entries; a plugin other than
/// `standalone` must be one of `plugins` (`plugins.cfg`'s ids).
fn verify_acme(
    conf: &BTreeMap<String, String>,
    plugins: &std::collections::BTreeSet<String>,
) -> Result<()> {
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    if let Some(acme) = conf.get("acme") {
        for d in prop(acme, "domains", false)
            .unwrap_or_default()
            .split(';')
            .filter(|d| !d.is_empty())
        {
            let d = d.to_lowercase();
            if seen.insert(d.clone(), "acme".into()).is_some() {
                return Err(Error::failed(format!(
                    "duplicate domain '{d}' in ACME config properties"
                )));
            }
        }
    }
    for i in 0..=5 {
        let key = format!("acmedomain{i}");
        let Some(rec) = conf.get(&key) else { continue };
        let domain = prop(rec, "domain", true).unwrap_or_default().to_lowercase();
        if let Some(other) = seen.get(&domain) {
            return Err(Error::failed(format!(
                "duplicate domain '{domain}' in ACME config properties '{key}' and '{other}'"
            )));
        }
        let plugin = prop(rec, "plugin", false).unwrap_or_else(|| "standalone".into());
        if plugin != "standalone" && !plugins.contains(&plugin) {
            return Err(Error::failed(format!(
                "plugin '{plugin}' for domain '{domain}' not found!"
            )));
        }
        seen.insert(domain, key);
    }
    Ok(())
}
