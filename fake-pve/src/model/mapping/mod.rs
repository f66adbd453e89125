//! Resource mappings: the cluster-wide names of a PCI device, a USB
//! device or a directory, with an entry per node saying which device or
//! path stands for it there (pve-guest-common `PVE/Mapping/{PCI,USB,
//! Dir}.pm`, one section config each: `mapping/pci.cfg`,
//! `mapping/usb.cfg`, `mapping/dir.cfg`; the API is pve-manager's
//! `API2/Cluster/Mapping/*.pm`).
//!
//! A mapping's `map` is a list of property strings, one a node:
//! `node=..,path=..,id=vendor:device,iommugroup=..,subsystem-id=..` for
//! PCI, `node=..,id=vendor:product[,path=bus-port]` for USB,
//! `node=..,path=/dir` for a directory. What the entries are checked
//! against (the node's devices and directories) is in [`check`].

pub mod check;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::qemu::sha1_hex;
use crate::model::{Error, Result};

/// The message of a digest that no longer matches.
const MODIFIED: &str = "detected modified configuration - file changed by other user? Try again.";

/// The three kinds of mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// `mapping/pci.cfg`.
    Pci,
    /// `mapping/usb.cfg`.
    Usb,
    /// `mapping/dir.cfg`.
    Dir,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 3] = [Kind::Pci, Kind::Usb, Kind::Dir];

    /// `pci`, `usb`, `dir`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Pci => "pci",
            Kind::Usb => "usb",
            Kind::Dir => "dir",
        }
    }

    /// The kind a path segment names.
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The options `delete` may name (`options` without `map`, which is
    /// required).
    fn deletable(self) -> &'static [&'static str] {
        match self {
            Kind::Pci => &["description", "live-migration-capable", "mdev"],
            Kind::Usb | Kind::Dir => &["description"],
        }
    }

    /// What a failed create, update is prefixed with (the lock's
    /// `$errmsg`).
    fn failed(self, what: &str) -> String {
        match self {
            Kind::Dir => format!("{what} directory mapping failed"),
            Kind::Pci | Kind::Usb => format!("{what} hardware mapping failed"),
        }
    }
}

/// One mapping: its description, flags (PCI) and per-node entries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[serde(deny_unknown_fields)]
pub struct Mapping {
    /// The mapping's description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// PCI: the devices can provide mediated devices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mdev: Option<bool>,
    /// PCI: the devices can be live-migrated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_migration_capable: Option<bool>,
    /// The per-node entries, as property strings.
    #[serde(default)]
    pub map: Vec<String>,
}

impl Mapping {
    /// The set options in the file's (sorted) order, `map` once per
    /// entry.
    pub fn lines(&self) -> Vec<(&'static str, String)> {
        let flag = |b: bool| u8::from(b).to_string();
        let mut out = Vec::new();
        if let Some(d) = &self.description {
            out.push(("description", d.clone()));
        }
        if let Some(b) = self.live_migration_capable {
            out.push(("live-migration-capable", flag(b)));
        }
        for m in &self.map {
            out.push(("map", m.clone()));
        }
        if let Some(b) = self.mdev {
            out.push(("mdev", flag(b)));
        }
        out
    }

    /// Whether the option is given.
    fn has(&self, key: &str) -> bool {
        match key {
            "description" => self.description.is_some(),
            "mdev" => self.mdev.is_some(),
            "live-migration-capable" => self.live_migration_capable.is_some(),
            _ => false,
        }
    }

    /// Removes an option.
    fn clear(&mut self, key: &str) {
        match key {
            "description" => self.description = None,
            "mdev" => self.mdev = None,
            "live-migration-capable" => self.live_migration_capable = None,
            _ => {}
        }
    }

    /// The entries for `node` (`get_node_mapping`): those whose property
    /// string parses and names the node.
    pub fn on_node(&self, node: &str) -> Vec<Entry> {
        self.map
            .iter()
            .filter_map(|m| Entry::parse(m))
            .filter(|e| e.node == node)
            .collect()
    }

    /// Whether any entry names `node`.
    pub fn has_node(&self, node: &str) -> bool {
        !self.on_node(node).is_empty()
    }
}

/// A mapping's entry for one node, parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entry {
    /// The node.
    pub node: String,
    /// `path`: PCI addresses (`;`-separated), a USB `bus-port`, a
    /// directory.
    pub path: Option<String>,
    /// `id`: `vendor:device`.
    pub id: Option<String>,
    /// PCI: `iommugroup`.
    pub iommugroup: Option<String>,
    /// PCI: `subsystem-id`.
    pub subsystem_id: Option<String>,
}

impl Entry {
    /// A property string `key=value,...` with a `node`.
    pub fn parse(text: &str) -> Option<Entry> {
        let mut e = Entry::default();
        let mut node = None;
        for part in text.split(',').filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=')?;
            let v = Some(v.to_string());
            match k {
                "node" => node = v,
                "path" => e.path = v,
                "id" => e.id = v,
                "iommugroup" => e.iommugroup = v,
                "subsystem-id" => e.subsystem_id = v,
                "description" => {}
                _ => return None,
            }
        }
        e.node = node?;
        Some(e)
    }
}

/// The three mapping files.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mappings {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pci: BTreeMap<String, Mapping>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    usb: BTreeMap<String, Mapping>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    dir: BTreeMap<String, Mapping>,
}

/// `pve_verify_configid`.
fn verify_configid(name: &str) -> Result<()> {
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.len() >= 2
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(Error::failed(format!("invalid configuration ID '{name}'")))
    }
}

impl Mappings {
    /// Whether no mapping of any kind is defined.
    pub fn is_empty(&self) -> bool {
        self.pci.is_empty() && self.usb.is_empty() && self.dir.is_empty()
    }

    fn ids(&self, kind: Kind) -> &BTreeMap<String, Mapping> {
        match kind {
            Kind::Pci => &self.pci,
            Kind::Usb => &self.usb,
            Kind::Dir => &self.dir,
        }
    }

    fn ids_mut(&mut self, kind: Kind) -> &mut BTreeMap<String, Mapping> {
        match kind {
            Kind::Pci => &mut self.pci,
            Kind::Usb => &mut self.usb,
            Kind::Dir => &mut self.dir,
        }
    }

    /// The mappings of a kind, by id.
    pub fn iter(&self, kind: Kind) -> impl Iterator<Item = (&str, &Mapping)> {
        self.ids(kind).iter().map(|(k, v)| (k.as_str(), v))
    }

    /// A mapping, if defined.
    pub fn find(&self, kind: Kind, id: &str) -> Option<&Mapping> {
        self.ids(kind).get(id)
    }

    /// The file as written (a section per id, its options indented).
    pub fn cfg_text(&self, kind: Kind) -> String {
        let mut out = String::new();
        for (id, m) in self.ids(kind) {
            out.push_str(id);
            out.push('\n');
            for (k, v) in m.lines() {
                out.push_str(&format!("\t{k} {v}\n"));
            }
            out.push('\n');
        }
        out
    }

    /// The file's digest.
    pub fn digest(&self, kind: Kind) -> String {
        sha1_hex(self.cfg_text(kind).as_bytes())
    }

    /// `GET /cluster/mapping/{kind}/{id}`.
    ///
    /// # Errors
    /// `mapping 'x' not found`.
    pub fn get(&self, kind: Kind, id: &str) -> Result<&Mapping> {
        self.find(kind, id)
            .ok_or_else(|| Error::not_found(format!("mapping '{id}' not found")))
    }

    /// `POST /cluster/mapping/{kind}`; `check_map` is the directory
    /// mappings' `assert_valid_map_list`, run before the lock.
    ///
    /// # Errors
    /// What `check_map` refuses; `create ... mapping failed: <kind> ID
    /// 'x' already defined`.
    pub fn create(
        &mut self,
        kind: Kind,
        id: &str,
        given: Mapping,
        check_map: &dyn Fn(&[String]) -> Result<()>,
    ) -> Result<()> {
        verify_configid(id)?;
        if kind == Kind::Dir {
            check_map(&given.map)?;
        }
        if self.ids(kind).contains_key(id) {
            return Err(Error::exists(format!(
                "{}: {} ID '{id}' already defined",
                kind.failed("create"),
                kind.as_str()
            )));
        }
        self.ids_mut(kind).insert(id.to_string(), given);
        Ok(())
    }

    /// `PUT /cluster/mapping/{kind}/{id}`: `map` is required (the
    /// handler checks the options as for a create; `None`: no `map`
    /// given), set, then delete.
    ///
    /// # Errors
    /// `update ... mapping failed: ` and the digest check, `<kind> ID
    /// 'x' does not exist`, `missing value for required option 'map'`,
    /// what `check_map` refuses (directories), `no such option 'x'`,
    /// `unable to delete required option 'map'`, `cannot set and delete
    /// property 'x' at the same time!`.
    pub fn update(
        &mut self,
        kind: Kind,
        id: &str,
        given: Option<Mapping>,
        delete: &[String],
        digest: Option<&str>,
        check_map: &dyn Fn(&[String]) -> Result<()>,
    ) -> Result<()> {
        let fail = |msg: String| Error::failed(format!("{}: {msg}", kind.failed("update")));
        if let Some(d) = digest
            && d != self.digest(kind)
        {
            return Err(Error::conflict(format!(
                "{}: {MODIFIED}",
                kind.failed("update")
            )));
        }
        let Some(current) = self.ids(kind).get(id) else {
            return Err(Error::not_found(format!(
                "{}: {} ID '{id}' does not exist",
                kind.failed("update"),
                kind.as_str()
            )));
        };
        let Some(given) = given else {
            return Err(fail("missing value for required option 'map'".into()));
        };
        if kind == Kind::Dir {
            check_map(&given.map).map_err(|e| fail(e.to_string()))?;
        }
        let mut m = current.clone();
        for k in delete {
            if k == "map" {
                return Err(fail("unable to delete required option 'map'".into()));
            }
            if !kind.deletable().contains(&k.as_str()) {
                return Err(fail(format!("no such option '{k}'")));
            }
            if given.has(k) {
                return Err(fail(format!(
                    "cannot set and delete property '{k}' at the same time!"
                )));
            }
            m.clear(k);
        }
        let Mapping {
            description,
            mdev,
            live_migration_capable,
            map,
        } = given;
        m.description = description.or(m.description.take());
        m.mdev = mdev.or(m.mdev.take());
        m.live_migration_capable = live_migration_capable.or(m.live_migration_capable.take());
        m.map = map;
        self.ids_mut(kind).insert(id.to_string(), m);
        Ok(())
    }

    /// `DELETE /cluster/mapping/{kind}/{id}`: a missing id is no error,
    /// and PVE does not look for guests that use the mapping.
    pub fn delete(&mut self, kind: Kind, id: &str) {
        self.ids_mut(kind).remove(id);
    }

    /// A mapping a scenario declares, as the file would hold it.
    ///
    /// # Errors
    /// An invalid id, an entry that is not a property string with a
    /// `node`.
    pub fn declare(&mut self, kind: Kind, id: &str, m: Mapping) -> Result<()> {
        verify_configid(id)?;
        if let Some(bad) = m.map.iter().find(|e| Entry::parse(e).is_none()) {
            return Err(Error::failed(format!("invalid map entry '{bad}'")));
        }
        self.ids_mut(kind).insert(id.to_string(), m);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
