//! `/etc/pve/priv/acme/plugins.cfg`: the ACME challenge plugins, a
//! section config of two types, `standalone` (http-01 from a webserver
//! the node starts on port 80) and `dns` (dns-01 through one of
//! `proxmox-acme`'s DNS API plugins, configured by `data`, the plugin's
//! `KEY=value` lines). Reading it always yields a `standalone` plugin of
//! that id, written or not, as PVE's parser adds one.

use std::collections::BTreeMap;

use base64::Engine;
use serde::{Deserialize, Serialize};

use crate::model::{Error, Result};

/// A plugin's settings: `type` and the options of its type (`api`,
/// `data` decoded, `nodes`, `disable`, `validation-delay`).
pub type Plugin = BTreeMap<String, String>;

/// The options of a plugin type and whether each is required.
fn options(kind: &str) -> &'static [(&'static str, bool)] {
    match kind {
        "dns" => &[
            ("api", true),
            ("data", false),
            ("nodes", false),
            ("disable", false),
            ("validation-delay", false),
        ],
        _ => &[("nodes", false), ("disable", false)],
    }
}

/// The plugins file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plugins {
    /// The sections as last written; `None` while the file does not
    /// exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    written: Option<BTreeMap<String, Plugin>>,
}

/// `decode_base64`, which skips what is not of the alphabet and never
/// fails.
fn decode_lenient(text: &str) -> String {
    let clean: String = text
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/'))
        .collect();
    // A last group of one character carries no whole byte.
    let usable = if clean.len() % 4 == 1 {
        clean.len() - 1
    } else {
        clean.len()
    };
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    let bytes = engine.decode(&clean[..usable]).unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

impl Plugins {
    /// Whether nothing was ever written.
    pub fn is_empty(&self) -> bool {
        self.written.is_none()
    }

    /// The plugins as PVE reads them: the file's, with `standalone`.
    pub fn load(&self) -> BTreeMap<String, Plugin> {
        let mut ids = self.written.clone().unwrap_or_default();
        if ids
            .get("standalone")
            .and_then(|p| p.get("type"))
            .map(String::as_str)
            != Some("standalone")
        {
            ids.insert(
                "standalone".into(),
                BTreeMap::from([("type".to_string(), "standalone".to_string())]),
            );
        }
        ids
    }

    /// One plugin as read.
    pub fn get(&self, id: &str) -> Option<Plugin> {
        self.load().remove(id)
    }

    /// The file's text (empty while it does not exist): sections in id
    /// order, `data` base64-encoded as PVE writes it.
    pub fn raw(&self) -> String {
        let Some(ids) = &self.written else {
            return String::new();
        };
        let mut out = String::new();
        for (id, p) in ids {
            let kind = p.get("type").map_or("standalone", String::as_str);
            out.push_str(&format!("{kind}: {id}\n"));
            for (k, v) in p.iter().filter(|(k, _)| *k != "type") {
                let v = if k == "data" {
                    base64::engine::general_purpose::STANDARD.encode(v)
                } else {
                    v.clone()
                };
                out.push_str(&format!("\t{k} {v}\n"));
            }
            out.push('\n');
        }
        out
    }

    /// The file's SHA-1, the `digest` of its answers.
    pub fn digest(&self) -> String {
        crate::model::qemu::sha1_hex(self.raw().as_bytes())
    }

    /// `check_config`: the options `params` sets for a plugin of `kind`,
    /// `data` decoded.
    fn check(kind: &str, params: &BTreeMap<String, String>, create: bool) -> Result<Plugin> {
        let opts = options(kind);
        let mut out = Plugin::new();
        for (k, v) in params {
            if !opts.iter().any(|(o, _)| o == k) {
                return Err(Error::failed(format!("unexpected property '{k}'")));
            }
            if v.contains(['\n', '\r']) && k != "data" {
                return Err(Error::failed(format!(
                    "property '{k}' contains a line feed"
                )));
            }
            let v = if k == "data" {
                decode_lenient(v)
            } else {
                v.clone()
            };
            out.insert(k.clone(), v);
        }
        if create {
            for (k, required) in opts {
                if *required && !params.contains_key(*k) {
                    return Err(Error::failed(format!(
                        "missing value for required option '{k}'"
                    )));
                }
            }
        }
        Ok(out)
    }

    /// `POST /cluster/acme/plugins`.
    ///
    /// # Errors
    /// An id in use (`standalone` always is), an option the type does not
    /// have, a required one missing.
    pub fn add(&mut self, id: &str, kind: &str, params: &BTreeMap<String, String>) -> Result<()> {
        let mut ids = self.load();
        if ids.contains_key(id) {
            return Err(Error::failed(format!(
                "ACME plugin ID '{id}' already exists"
            )));
        }
        let mut plugin = Self::check(kind, params, true)?;
        plugin.insert("type".into(), kind.into());
        ids.insert(id.into(), plugin);
        self.written = Some(ids);
        Ok(())
    }

    /// `PUT /cluster/acme/plugins/{id}`: removes `delete`, then sets
    /// `params`.
    ///
    /// # Errors
    /// A changed digest, a plugin that does not exist, an option its type
    /// does not have, a required one deleted.
    pub fn update(
        &mut self,
        id: &str,
        params: &BTreeMap<String, String>,
        delete: &[String],
        digest: Option<&str>,
    ) -> Result<()> {
        if let Some(d) = digest.filter(|d| !d.is_empty())
            && d != self.digest()
        {
            return Err(Error::conflict(crate::model::node_services::MODIFIED));
        }
        let mut ids = self.load();
        let plugin = ids
            .get_mut(id)
            .ok_or_else(|| Error::failed(format!("ACME plugin ID '{id}' does not exist")))?;
        let kind = plugin.get("type").cloned().unwrap_or_default();
        let opts = options(&kind);
        for k in delete {
            let Some((_, required)) = opts.iter().find(|(o, _)| o == k) else {
                return Err(Error::failed(format!("no such option '{k}'")));
            };
            if *required {
                return Err(Error::failed(format!(
                    "unable to delete required option '{k}'"
                )));
            }
            plugin.remove(k);
        }
        let set = Self::check(&kind, params, false)?;
        plugin.extend(set);
        self.written = Some(ids);
        Ok(())
    }

    /// `DELETE /cluster/acme/plugins/{id}`: gone if it was there (the
    /// `standalone` plugin comes back when the file is read).
    pub fn remove(&mut self, id: &str) {
        let mut ids = self.load();
        ids.remove(id);
        self.written = Some(ids);
    }
}

/// The `KEY=value` lines of a DNS plugin's data.
pub fn data_fields(data: &str) -> BTreeMap<String, String> {
    data.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .filter(|(k, _)| !k.is_empty())
        .collect()
}
