//! The record every guest shares, VM or container: VMID, node, power
//! state, config with pending values, start time and snapshot sections,
//! and a part of its own kind ([`Kind`]: QEMU's or LXC's). What both
//! kinds do the same way (the accessors, the config file and its
//! digest, the snapshot tree) is written here once.

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};

use super::qemu::{VmStatus, sha1_hex};
use super::{Error, Result};

pub mod rrd;
pub mod snapshot;
pub mod volumes;

/// What a guest kind keeps beside the shared record, and where its
/// config file and messages differ.
pub trait Kind: Clone + std::fmt::Debug + Default + Sized {
    /// How PVE's messages name a guest of this kind (`VM`, `CT`).
    const NOUN: &'static str;
    /// The header of the pending section of its config file.
    const PENDING_SECTION: &'static str;
    /// Whether an empty `description` is written as a bare `#` line
    /// outside the pending section too.
    const EMPTY_DESCRIPTION_LINE: bool;

    /// The keys whose deletion is pending, with `!` before a forced one
    /// (the `delete:` value of the pending section).
    fn pending_deletions(&self) -> Vec<String>;

    /// The sections of its own its config file holds after the pending
    /// one (QEMU's `[special:cloudinit]`).
    fn own_sections(_guest: &Guest<Self>) -> Vec<(&'static str, &BTreeMap<String, String>)> {
        Vec::new()
    }
}

/// One guest: the shared record and its kind's part (reached through
/// the record, as `guest.pending_delete`).
#[derive(Debug, Clone)]
pub struct Guest<K: Kind> {
    /// The VMID.
    pub(in crate::model) vmid: u32,
    /// The node that holds its config.
    pub(in crate::model) node: String,
    /// Whether its process runs.
    pub(in crate::model) status: VmStatus,
    /// The current configuration, key by key, as PVE stores it.
    pub(in crate::model) config: BTreeMap<String, String>,
    /// Pending values.
    pub(in crate::model) pending: BTreeMap<String, String>,
    /// When its process started, epoch milliseconds.
    pub(in crate::model) started_ms: Option<i64>,
    /// Snapshot sections by name.
    pub(in crate::model) snapshots: BTreeMap<String, BTreeMap<String, String>>,
    /// What its kind keeps beside.
    pub(in crate::model) kind: K,
}

impl<K: Kind> Deref for Guest<K> {
    type Target = K;
    fn deref(&self) -> &K {
        &self.kind
    }
}

impl<K: Kind> DerefMut for Guest<K> {
    fn deref_mut(&mut self) -> &mut K {
        &mut self.kind
    }
}

impl<K: Kind> Guest<K> {
    /// A guest with `config`, nothing pending and no snapshot.
    pub(in crate::model) fn with(
        vmid: u32,
        node: &str,
        status: VmStatus,
        config: BTreeMap<String, String>,
    ) -> Self {
        Guest {
            vmid,
            node: node.to_string(),
            status,
            config,
            pending: BTreeMap::new(),
            started_ms: None,
            snapshots: BTreeMap::new(),
            kind: K::default(),
        }
    }

    /// The VMID.
    pub fn vmid(&self) -> u32 {
        self.vmid
    }

    /// The node that holds its config.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// Whether its process runs.
    pub fn status(&self) -> VmStatus {
        self.status
    }

    /// Whether it runs (a paused VM counts as running).
    pub fn running(&self) -> bool {
        self.status == VmStatus::Running
    }

    /// The current configuration, key by key, as PVE stores it (pending
    /// changes not applied).
    pub fn config(&self) -> &BTreeMap<String, String> {
        &self.config
    }

    /// The pending values.
    pub fn pending(&self) -> &BTreeMap<String, String> {
        &self.pending
    }

    /// Snapshot sections by name.
    pub fn snapshots(&self) -> &BTreeMap<String, BTreeMap<String, String>> {
        &self.snapshots
    }

    /// When its process started, epoch milliseconds.
    pub fn started_ms(&self) -> Option<i64> {
        self.started_ms
    }

    /// The config lock, if any.
    pub fn lock(&self) -> Option<&str> {
        self.config.get("lock").map(String::as_str)
    }

    /// `check_lock`: `VM is locked (<lock>)` (`CT is locked` for a
    /// container).
    ///
    /// # Errors
    /// When a lock is set.
    pub fn check_lock(&self) -> Result<()> {
        match self.lock() {
            Some(l) => Err(Error::locked(format!("{} is locked ({l})", K::NOUN))),
            None => Ok(()),
        }
    }

    /// Whether it is a template.
    pub fn template(&self) -> bool {
        self.config.get("template").is_some_and(|t| t == "1")
    }

    /// The config with pending values applied, then pending deletions
    /// (`load_current_config`, GET config without `current`).
    pub fn effective(&self) -> BTreeMap<String, String> {
        let mut c = self.config.clone();
        c.extend(self.pending.clone());
        for k in self.kind.pending_deletions() {
            c.remove(k.trim_start_matches('!'));
        }
        c
    }

    /// The config file as PVE writes it (`write_vm_config`,
    /// `write_pct_config`).
    pub fn config_text(&self) -> String {
        let mut raw = section::<K>(&self.config, false);
        let deletions = self.kind.pending_deletions();
        if !self.pending.is_empty() || !deletions.is_empty() {
            let mut p = self.pending.clone();
            if !deletions.is_empty() {
                p.insert("delete".into(), deletions.join(","));
            }
            raw.push_str(&format!("\n{}\n", K::PENDING_SECTION));
            raw.push_str(&section::<K>(&p, true));
        }
        for (header, conf) in K::own_sections(self) {
            raw.push_str(&format!("\n{header}\n"));
            raw.push_str(&section::<K>(conf, false));
        }
        for (name, snap) in &self.snapshots {
            raw.push_str(&format!("\n[{name}]\n"));
            raw.push_str(&section::<K>(snap, false));
        }
        raw
    }

    /// The SHA-1 of the config text, as GET config's `digest`.
    pub fn digest(&self) -> String {
        sha1_hex(self.config_text().as_bytes())
    }
}

/// One section of a config file: the description as `#` lines, then
/// every other key but `digest`.
fn section<K: Kind>(conf: &BTreeMap<String, String>, pending: bool) -> String {
    let mut raw = String::new();
    if let Some(d) = conf.get("description")
        && (!d.is_empty() || pending || K::EMPTY_DESCRIPTION_LINE)
    {
        for line in d.split('\n') {
            raw.push('#');
            raw.push_str(&encode_text(line));
            raw.push('\n');
        }
    }
    for (k, v) in conf {
        if k == "description" || k == "digest" {
            continue;
        }
        raw.push_str(&format!("{k}: {v}\n"));
    }
    raw
}

/// PVE's `encode_text` for description lines.
fn encode_text(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == '%' || (c as u32) < 0x20 || c as u32 == 0x7f {
                format!("%{:02X}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
pub(in crate::model) mod tests {
    use rstest::rstest;

    use super::*;
    use crate::model::lxc::Ct;
    use crate::model::qemu::Vm;

    /// A config section of `key: value` pairs.
    pub(in crate::model) fn conf(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    #[rstest]
    #[case::vm(Vm::new(100, "pve", VmStatus::Stopped, conf(&[("lock", "backup")])).check_lock(), "VM is locked (backup)")]
    #[case::ct(Ct::new(200, "pve", conf(&[("lock", "backup")])).check_lock(), "CT is locked (backup)")]
    fn a_lock_is_refused_in_the_kinds_words(#[case] r: Result<()>, #[case] message: &str) {
        assert_eq!(r.expect_err("locked").to_string(), message);
    }

    #[rstest]
    fn a_vm_writes_its_pending_section_and_forced_deletions() {
        let mut vm = Vm::new(
            100,
            "pve",
            VmStatus::Stopped,
            conf(&[("cores", "1"), ("description", ""), ("digest", "x")]),
        );
        vm.pending = conf(&[("cores", "2"), ("description", "")]);
        vm.kind.pending_delete.insert("net1".into(), true);
        vm.kind.pending_delete.insert("agent".into(), false);
        assert_eq!(
            vm.config_text(),
            "cores: 1\n\n[PENDING]\n#\ncores: 2\ndelete: agent,!net1\n"
        );
        assert_eq!(vm.digest(), sha1_hex(vm.config_text().as_bytes()));
    }

    #[rstest]
    fn a_container_writes_an_empty_description_and_its_own_pending_header() {
        let mut ct = Ct::new(200, "pve", conf(&[("description", ""), ("memory", "512")]));
        ct.kind.pending_delete.push("swap".into());
        assert_eq!(
            ct.config_text(),
            "#\nmemory: 512\n\n[pve:pending]\ndelete: swap\n"
        );
    }

    #[rstest]
    fn description_lines_are_encoded() {
        let ct = Ct::new(200, "pve", conf(&[("description", "100%\nok")]));
        assert_eq!(ct.config_text(), "#100%25\n#ok\n");
    }

    #[rstest]
    #[case::vm(Vm::new(100, "pve", VmStatus::Stopped, conf(&[("cores", "1"), ("net1", "x")])))]
    fn effective_applies_pending_values_then_deletions(#[case] mut vm: Vm) {
        vm.pending = conf(&[("cores", "4")]);
        vm.kind.pending_delete.insert("net1".into(), true);
        assert_eq!(vm.effective(), conf(&[("cores", "4")]));
    }

    #[rstest]
    fn a_container_applies_its_deletions_too() {
        let mut ct = Ct::new(200, "pve", conf(&[("swap", "512"), ("memory", "512")]));
        ct.pending = conf(&[("memory", "1024")]);
        ct.kind.pending_delete.push("swap".into());
        assert_eq!(ct.effective(), conf(&[("memory", "1024")]));
    }
}
