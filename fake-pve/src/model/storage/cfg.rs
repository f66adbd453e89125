//! `storage.cfg` as the API shows and changes it, and each storage's
//! status on a node (pve-storage `API2/Storage/Config.pm`,
//! `API2/Storage/Status.pm`, `Storage.pm::storage_info`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::Storages;
use super::no_such_storage;
use crate::model::cluster::Storage;
use crate::model::qemu::sha1_hex;
use crate::model::{Error, Result};

/// Storage types whose entries are always shared.
/// The options a storage type requires at creation, which are also fixed
/// afterwards (the `options` of PVE's storage plugins without
/// `optional`), sorted.
fn required_options(kind: &str) -> &'static [&'static str] {
    match kind {
        "dir" | "btrfs" | "cephfs" => &["path"],
        "nfs" => &["export", "path", "server"],
        "cifs" => &["path", "server", "share"],
        "lvm" => &["vgname"],
        "lvmthin" => &["thinpool", "vgname"],
        "iscsi" | "iscsidirect" => &["portal", "target"],
        "zfspool" => &["pool"],
        "zfs" => &["blocksize", "iscsiprovider", "pool", "portal", "target"],
        "pbs" => &["datastore", "server"],
        "esxi" => &["server", "username"],
        _ => &[],
    }
}

/// A plugin's `check_config` on create: the defaults a plugin sets before
/// SectionConfig's check (`path` under `/mnt/pve` for a network file
/// system), that check (`missing value for required option`), and what
/// the directory plugins make of a path (`illegal path for directory
/// storage`, then `File::Spec->canonpath`).
///
/// # Errors
/// PVE's messages, unprefixed: the call dies before it takes the lock.
fn check_config(
    sid: &str,
    kind: &str,
    given: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>> {
    let mut p = given.clone();
    if matches!(kind, "nfs" | "cifs" | "cephfs" | "glusterfs")
        && p.get("path").is_none_or(|v| v.is_empty() || v == "0")
    {
        p.insert("path".into(), format!("/mnt/pve/{sid}"));
    }
    if let Some(k) = required_options(kind).iter().find(|k| !p.contains_key(**k)) {
        return Err(Error::failed(format!(
            "missing value for required option '{k}'"
        )));
    }
    if matches!(kind, "dir" | "btrfs")
        && let Some(path) = p.get_mut("path")
    {
        let legal = path.starts_with('/')
            && path.len() > 1
            && path
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-/_.@".contains(&b));
        if !legal {
            return Err(Error::failed(format!(
                "illegal path for directory storage: {path}"
            )));
        }
        *path = canonpath(path);
    }
    Ok(p)
}

/// `File::Spec::Unix->canonpath`: slashes collapsed, `.` parts and a
/// trailing slash dropped, `..` right after the root dropped (no other
/// `..` is resolved).
fn canonpath(path: &str) -> String {
    let mut parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if path.starts_with('/') {
        while parts.first() == Some(&"..") {
            parts.remove(0);
        }
        format!("/{}", parts.join("/"))
    } else {
        parts.join("/")
    }
}

/// A plugin's `on_add_hook`, under the lock once the ID is known to be
/// free: ESXi needs its password, ZFS over iSCSI works out
/// `zfs-base-path` from its provider.
///
/// # Errors
/// `create storage failed: missing password`, an unknown iSCSI provider.
fn on_add_hook(s: &mut Storage, p: &BTreeMap<String, String>) -> Result<()> {
    match s.kind.as_str() {
        "esxi" if !p.contains_key("password") => {
            Err(Error::failed("create storage failed: missing password"))
        }
        "zfs" if !s.options.contains_key("zfs-base-path") => {
            // comstar's base, istgt's; iet and LIO ask the portal over
            // ssh, which no emulated host answers, and fall back to
            // /dev/zvol as PVE does when the command fails.
            let base = match p.get("iscsiprovider").map(String::as_str) {
                Some("comstar") => "/dev/zvol/rdsk",
                Some("istgt" | "iet" | "LIO") => "/dev/zvol",
                other => {
                    return Err(Error::failed(format!(
                        "create storage failed: {}: unknown iscsi provider. Available [comstar, istgt, iet, LIO] at /usr/share/perl5/PVE/Storage/ZFSPlugin.pm line 35.",
                        other.unwrap_or_default()
                    )));
                }
            };
            s.options.insert("zfs-base-path".into(), base.into());
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Whether a plugin is always shared (network storages), whatever
/// `shared` says.
pub fn always_shared(kind: &str) -> bool {
    matches!(
        kind,
        "nfs" | "cifs" | "rbd" | "cephfs" | "iscsi" | "iscsidirect" | "zfs" | "drbd" | "pbs"
    )
}

/// Options that are not type-specific (kept in [`Storage`]'s own fields).
const COMMON: &[&str] = &[
    "storage", "type", "content", "shared", "nodes", "disable", "digest", "delete",
];

impl Storage {
    /// The section of `storage.cfg`.
    fn section(&self) -> String {
        let mut s = format!("{}: {}\n", self.kind, self.storage);
        for (k, v) in &self.options {
            s.push_str(&format!("\t{k} {v}\n"));
        }
        s.push_str(&format!("\tcontent {}\n", self.content_text()));
        if let Some(n) = &self.nodes {
            s.push_str(&format!("\tnodes {}\n", n.join(",")));
        }
        if self.shared && !always_shared(&self.kind) {
            s.push_str("\tshared 1\n");
        }
        if self.disable {
            s.push_str("\tdisable\n");
        }
        s
    }

    /// `content` as PVE prints it (`none` when empty).
    pub fn content_text(&self) -> String {
        if self.content.is_empty() {
            "none".into()
        } else {
            self.content.join(",")
        }
    }
}

/// `storage_info` of one storage on a node: a row of
/// `GET /nodes/{node}/storage`, and its `status`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StorageStatus {
    /// The storage ID.
    pub storage: String,
    /// The plugin.
    #[serde(rename = "type")]
    pub kind: String,
    /// The content types, comma-separated.
    pub content: String,
    /// 1 when shared (always for network storages).
    pub shared: u8,
    /// 0 when disabled.
    pub enabled: u8,
    /// 1 when active (enabled here).
    pub active: u8,
    /// Bytes in all.
    pub total: u64,
    /// Bytes used.
    pub used: u64,
    /// Bytes free.
    pub avail: u64,
    /// `used / total`, where there is a total.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used_fraction: Option<f64>,
}

/// A storage as `POST /storage` and `PUT /storage/{storage}` answer it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StorageRef {
    /// The storage ID.
    pub storage: String,
    /// The plugin.
    #[serde(rename = "type")]
    pub kind: String,
}

/// One point of a storage's `rrddata`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StoragePoint {
    /// The step's start, epoch seconds.
    pub time: i64,
    /// Bytes in all.
    pub total: u64,
    /// Bytes used.
    pub used: u64,
}

impl super::Storages {
    /// Bytes used on a storage as `node` sees it.
    pub fn used(&self, s: &Storage, node: &str) -> u64 {
        s.used.saturating_add(self.volumes().allocated(s, node))
    }

    /// `storage_info` of one storage on `node`, or `None` if the storage
    /// is not configured there or has none of `content`.
    pub fn status(&self, s: &Storage, node: &str, content: Option<&str>) -> Option<StorageStatus> {
        if s.nodes
            .as_ref()
            .is_some_and(|n| !n.iter().any(|x| x == node))
        {
            return None;
        }
        if let Some(c) = content
            && !c.split(',').any(|c| s.content.iter().any(|x| x == c))
        {
            return None;
        }
        let active = !s.disable;
        let (total, used) = if active {
            (s.total, self.used(s, node))
        } else {
            (0, 0)
        };
        let avail = total.saturating_sub(used);
        Some(StorageStatus {
            storage: s.storage.clone(),
            kind: s.kind.clone(),
            content: s.content_text(),
            shared: u8::from(s.shared || always_shared(&s.kind)),
            enabled: u8::from(!s.disable),
            active: u8::from(active),
            total,
            used,
            avail,
            used_fraction: (total > 0).then(|| used as f64 / total as f64),
        })
    }

    /// The SHA-1 of `storage.cfg`, as `digest`.
    pub fn digest(&self) -> String {
        let text: String = self
            .cfg()
            .iter()
            .map(|s| format!("{}\n", s.section()))
            .collect();
        sha1_hex(text.as_bytes())
    }

    /// `POST /storage`: answers `{storage, type}`.
    ///
    /// # Errors
    /// `storage ID 'x' already defined`; unknown nodes.
    pub fn create(&mut self, p: &BTreeMap<String, String>) -> Result<StorageRef> {
        self.create_with(p, |_| Ok(()))
    }

    /// [`Storages::create`], with `hook` run on the new storage once its
    /// plugin's own `on_add_hook` passed and before it is written (the
    /// hooks and the activation that reach beyond `storage.cfg`).
    ///
    /// # Errors
    /// Those of [`Storages::create`], and `hook`'s.
    pub fn create_with(
        &mut self,
        p: &BTreeMap<String, String>,
        hook: impl FnOnce(&mut Storage) -> Result<()>,
    ) -> Result<StorageRef> {
        let sid = p.get("storage").cloned().unwrap_or_default();
        let kind = p.get("type").cloned().unwrap_or_default();
        let p = &check_config(&sid, &kind, p)?;
        let mut s = Storage {
            storage: sid.clone(),
            kind: kind.clone(),
            content: default_content(&kind),
            shared: always_shared(&kind),
            nodes: None,
            disable: false,
            total: 100 << 30,
            used: 0,
            options: BTreeMap::new(),
        };
        apply_options(&mut s, p, &[]);
        if self.find(&sid).is_some() {
            return Err(Error::exists(format!(
                "create storage failed: storage ID '{sid}' already defined"
            )));
        }
        on_add_hook(&mut s, p)?;
        hook(&mut s)?;
        let _ = self.add(s);
        Ok(StorageRef { storage: sid, kind })
    }

    /// `PUT /storage/{storage}`.
    ///
    /// # Errors
    /// `storage 'x' does not exist`; a digest mismatch; setting and
    /// deleting the same option.
    pub fn update(
        &mut self,
        sid: &str,
        p: &BTreeMap<String, String>,
        delete: &[String],
    ) -> Result<StorageRef> {
        self.update_with(sid, p, delete, |_| Ok(()))
    }

    /// [`Storages::update`], with `hook` run on the storage once the
    /// checks passed and before the options change (a plugin's
    /// `on_update_hook`).
    ///
    /// # Errors
    /// Those of [`Storages::update`], and `hook`'s.
    pub fn update_with(
        &mut self,
        sid: &str,
        p: &BTreeMap<String, String>,
        delete: &[String],
        hook: impl FnOnce(&mut Storage) -> Result<()>,
    ) -> Result<StorageRef> {
        if let Some(d) = p.get("digest")
            && *d != self.digest()
        {
            return Err(Error::conflict(
                "update storage failed: detected modified configuration - file changed by other user? Try again.",
            ));
        }
        let kind = self.find(sid).map(|s| s.kind.clone()).unwrap_or_default();
        let required = required_options(&kind);
        if let Some(k) = required.iter().find(|k| p.contains_key(**k)) {
            return Err(Error::failed(format!(
                "update storage failed: can't change value of fixed parameter '{k}'"
            )));
        }
        for k in delete {
            if required.contains(&k.as_str()) {
                return Err(Error::failed(format!(
                    "update storage failed: unable to delete required option '{k}'"
                )));
            }
            if p.contains_key(k) {
                return Err(Error::failed(format!(
                    "update storage failed: cannot set and delete property '{k}' at the same time!"
                )));
            }
        }
        let s = self.find_mut(sid).ok_or_else(|| {
            Error::not_found(format!(
                "update storage failed: storage '{sid}' does not exist"
            ))
        })?;
        hook(s)?;
        apply_options(s, p, delete);
        Ok(StorageRef {
            storage: sid.to_string(),
            kind: s.kind.clone(),
        })
    }

    /// `DELETE /storage/{storage}`.
    ///
    /// # Errors
    /// `storage 'x' does not exist`.
    pub fn delete(&mut self, sid: &str) -> Result<()> {
        self.remove(sid).ok_or_else(|| {
            Error::failed(format!("delete storage failed: {}", no_such_storage(sid)))
        })?;
        Ok(())
    }
}

/// The image formats a storage plugin declares (`plugindata`'s `format`),
/// sorted, with the default; `None` where the plugin declares none.
pub fn plugin_formats(kind: &str, v9: bool) -> Option<&'static [&'static str]> {
    Some(match kind {
        "dir" => &["qcow2", "raw", "subvol", "vmdk"],
        "nfs" | "cifs" | "glusterfs" | "esxi" => &["qcow2", "raw", "vmdk"],
        "btrfs" | "zfspool" => &["raw", "subvol"],
        "lvm" if v9 => &["qcow2", "raw"],
        _ => return None,
    })
}

impl Storages {
    /// The RRD file of a storage on a node, as `rrddata` (`v9_layout`:
    /// `pve-storage-9.0` on 9.x) or `rrd` (always `pve2-storage`) opens it.
    pub fn storage_rrd_file(node: &str, sid: &str, v9_layout: bool) -> String {
        let dir = if v9_layout {
            "pve-storage-9.0"
        } else {
            "pve2-storage"
        };
        format!("/var/lib/rrdcached/db/{dir}/{node}/{sid}")
    }

    /// The status behind a storage's RRD `file`, which the node keeps for
    /// the storages it sees.
    ///
    /// # Errors
    /// `RRD error: opening '<file>': No such file or directory`.
    pub fn storage_rrd_status(&self, node: &str, sid: &str, file: &str) -> Result<StorageStatus> {
        self.find(sid)
            .and_then(|s| self.status(s, node, None))
            .ok_or_else(|| {
                Error::failed(format!(
                    "RRD error: opening '{file}': No such file or directory"
                ))
            })
    }

    /// `GET /nodes/{node}/storage/{storage}/rrddata`: the storage's `total`
    /// and `used` for `timeframe` at PVE's resolutions, as
    /// `/nodes/{node}/storage/{storage}/status` reports them now.
    ///
    /// # Errors
    /// As [`Storages::storage_rrd_status`].
    pub fn storage_rrddata(
        &self,
        node: &str,
        sid: &str,
        timeframe: &str,
        now_ms: i64,
        v9: bool,
    ) -> Result<Vec<StoragePoint>> {
        let status = self.storage_rrd_status(node, sid, &Self::storage_rrd_file(node, sid, v9))?;
        let (reso, count) = crate::model::qemu::rrd::setup(v9, timeframe);
        let ctime = reso * now_ms.div_euclid(1000).div_euclid(reso);
        let start = ctime - reso * count;
        Ok((0..count)
            .map(|i| StoragePoint {
                time: start + i * reso,
                total: status.total,
                used: status.used,
            })
            .collect())
    }
}

fn default_content(kind: &str) -> Vec<String> {
    let c: &[&str] = match kind {
        "dir" | "nfs" | "cifs" | "cephfs" | "glusterfs" | "btrfs" => &["images", "rootdir"],
        "lvmthin" => &["images", "rootdir"],
        "pbs" => &["backup"],
        _ => &["images"],
    };
    c.iter().map(|x| (*x).to_string()).collect()
}

fn apply_options(s: &mut Storage, p: &BTreeMap<String, String>, delete: &[String]) {
    for k in delete {
        match k.as_str() {
            "nodes" => s.nodes = None,
            "disable" => s.disable = false,
            "shared" => s.shared = always_shared(&s.kind),
            "content" => s.content = default_content(&s.kind),
            other => {
                s.options.remove(other);
            }
        }
    }
    for (k, v) in p {
        match k.as_str() {
            "content" => {
                s.content = v
                    .split([',', ';', ' '])
                    .filter(|c| !c.is_empty() && *c != "none")
                    .map(str::to_string)
                    .collect();
            }
            "nodes" => {
                let n: Vec<String> = v
                    .split([',', ';', ' '])
                    .filter(|c| !c.is_empty())
                    .map(str::to_string)
                    .collect();
                s.nodes = (!n.is_empty()).then_some(n);
            }
            "shared" => s.shared = v == "1" || always_shared(&s.kind),
            "disable" => s.disable = v == "1",
            k if COMMON.contains(&k) => {}
            // Secrets are not written to storage.cfg.
            "password" | "keyring" | "encryption-key" | "master-pubkey" => {}
            _ => {
                s.options.insert(k.to_string(), v.clone());
            }
        }
    }
}
