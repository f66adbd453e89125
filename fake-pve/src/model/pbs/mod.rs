//! Proxmox Backup Servers as a `pbs` storage reaches them (pve-storage
//! `Storage/PBSPlugin.pm`, pve-common `PBSClient.pm`, pve-apiclient
//! `APIClient/LWP.pm`).
//!
//! A scenario declares the servers (`pbs:`): a name, the address storages
//! name in `server`, optionally the certificate's fingerprint, and the
//! datastores with their namespaces. Each datastore keeps its backup
//! snapshots (`vm/100/2026-11-29T18:00:00Z`) in their namespace, with
//! the files a backup uploads, the comment (PVE's notes), protection,
//! the encryption key's fingerprint and the last verification. A
//! snapshot also keeps what the guest was ([`Archive`]), so that a
//! restore and file-restore find the config and volumes again.
//!
//! - this module: the servers, how a storage reaches one (and how that
//!   fails), the snapshots and their attributes;
//! - [`files`]: the file tree `proxmox-file-restore` lists in a snapshot
//!   and what its `extract` streams (a file, or a directory as a zip or
//!   a `tar.zst`).

mod cluster;
pub mod content;
pub mod files;
pub mod keys;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::backup::Archive;
use crate::model::cluster::Storage;

/// The port PBS listens on.
pub const DEFAULT_PORT: u16 = 8007;

/// A declared Proxmox Backup Server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Server {
    /// Its name (a storage may name it in `server` too).
    pub name: String,
    /// The host name or address storages name in `server` (default: the
    /// name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// The port (default 8007).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// The SHA-256 fingerprint of its self-signed certificate: a storage
    /// must pin it (`fingerprint`). None: a certificate every node trusts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// Its datastores, by name.
    #[serde(default)]
    pub datastores: BTreeMap<String, Datastore>,
}

/// A datastore of a server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Datastore {
    /// Namespaces below the root (`dev`, `dev/team`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<String>,
    /// PBS's `verify-new`: a new snapshot is verified when its backup
    /// ends.
    #[serde(
        default,
        rename = "verify-new",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub verify_new: bool,
    /// The backup snapshots, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub snapshots: Vec<Snapshot>,
    /// The size of the file system it lives on, in bytes (default: the
    /// size a storage on it declares).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
}

impl Datastore {
    /// `proxmox-backup-client status`: the datastore's `total` (else
    /// `declared`) and `used` bytes. Used counts every snapshot's files
    /// in every namespace once (the chunks two snapshots share are not
    /// told apart).
    pub fn usage(&self, declared: u64) -> (u64, u64) {
        let total = self.total.unwrap_or(declared);
        let used: u64 = self
            .snapshots
            .iter()
            .flat_map(|s| &s.files)
            .map(|f| f.size)
            .sum();
        (total, used.min(total))
    }
}

/// A file of a snapshot (`index.json.blob`, `drive-scsi0.img.fidx`...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapFile {
    /// The file name.
    pub filename: String,
    /// Bytes (an image's: the drive's size).
    pub size: u64,
    /// `none`, `encrypt` or `sign-only`.
    #[serde(rename = "crypt-mode")]
    pub crypt_mode: String,
}

/// The last verification of a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    /// `ok` or `failed`.
    pub state: String,
    /// The verify task's UPID on the server.
    pub upid: String,
}

/// A backup snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Its namespace (empty: the root).
    #[serde(default)]
    pub ns: String,
    /// `vm` or `ct`.
    #[serde(rename = "backup-type")]
    pub btype: String,
    /// The guest's VMID.
    #[serde(rename = "backup-id")]
    pub id: String,
    /// Its time, epoch seconds.
    #[serde(rename = "backup-time")]
    pub time: i64,
    /// Its files.
    pub files: Vec<SnapFile>,
    /// The comment (the first line of PVE's notes), and the notes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// Protected from pruning and removal.
    #[serde(default)]
    pub protected: bool,
    /// The encryption key's fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// The last verification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
    /// Who owns the group (the storage's `username`).
    pub owner: String,
    /// What the guest was.
    pub archive: Archive,
}

impl Snapshot {
    /// `vm/100/2026-11-29T18:00:00Z`.
    pub fn name(&self) -> String {
        format!("{}/{}/{}", self.btype, self.id, rfc3339(self.time))
    }

    /// The sum of its files' sizes.
    pub fn size(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }
}

/// `strftime("%FT%TZ", gmtime(t))`.
pub fn rfc3339(t: i64) -> String {
    let (y, mo, d, h, mi, s, _) = crate::clock::civil(t);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// The epoch time of `2026-11-29T18:00:00Z`.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[19] != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let days = crate::model::storage::content::days_from_civil(y, mo, d);
    Some(days * 86_400 + h * 3600 + mi * 60 + se)
}

/// A PBS volume name (`backup/vm/100/2026-11-29T18:00:00Z`) as
/// `parse_volname` reads it: type, id, time.
///
/// # Errors
/// `unable to parse PBS volume name 'x'`.
pub fn parse_volname(name: &str) -> Result<(String, String, i64), String> {
    let bad = || format!("unable to parse PBS volume name '{name}'");
    let rest = name.strip_prefix("backup/").ok_or_else(bad)?;
    let mut parts = rest.splitn(3, '/');
    let (Some(t), Some(id), Some(time)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(bad());
    };
    let word = |w: &str| !w.is_empty() && !w.contains(|c: char| c.is_whitespace() || c == '_');
    if !word(t) || !word(id) || id.contains('/') || t.contains('/') {
        return Err(bad());
    }
    let time = parse_rfc3339(time).ok_or_else(bad)?;
    Ok((t.to_string(), id.to_string(), time))
}

/// Why a storage does not reach its server's datastore.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreachable {
    /// No declared server answers at that address.
    Connect {
        /// `host:port`.
        target: String,
    },
    /// The server's self-signed certificate is not pinned by the storage.
    Fingerprint(String),
    /// The server has no datastore of that name.
    Datastore(String),
}

impl Unreachable {
    /// What `PVE::APIClient::LWP` raises (an API call of the plugin).
    pub fn api_message(&self) -> String {
        match self {
            Self::Connect { target } => {
                format!("500 Can't connect to {target} (Connection refused)")
            }
            Self::Fingerprint(fp) => format!("fingerprint '{fp}' not verified, abort!"),
            Self::Datastore(ds) => format!("400 no such datastore '{ds}'"),
        }
    }

    /// What `activate_storage` dies with.
    pub fn activate_message(&self, sid: &str) -> String {
        match self {
            Self::Datastore(ds) => {
                format!("{sid}: Cannot find datastore '{ds}', check permissions and existence!")
            }
            e => format!("{sid}: error fetching datastores - {}", e.api_message()),
        }
    }

    /// What `proxmox-backup-client` (or QEMU's PBS driver) prints.
    pub fn client_message(&self) -> String {
        match self {
            Self::Connect { .. } => {
                "error trying to connect: tcp connect error: Connection refused (os error 111)"
                    .into()
            }
            Self::Fingerprint(_) => {
                "error trying to connect: the server's certificate fingerprint is not trusted"
                    .into()
            }
            Self::Datastore(ds) => format!("no such datastore '{ds}'"),
        }
    }
}

/// The `namespace` of a storage, as `ns` (empty: the root).
pub fn storage_ns(s: &Storage) -> String {
    s.options.get("namespace").cloned().unwrap_or_default()
}

/// `get_repository`: `user@realm@server[:port]:datastore`.
pub fn repository(s: &Storage) -> String {
    let mut server = s.options.get("server").cloned().unwrap_or_default();
    if server.contains(':') {
        server = format!("[{server}]");
    }
    if let Some(p) = s.options.get("port").filter(|p| p.as_str() != "8007") {
        server = format!("{server}:{p}");
    }
    let user = s.options.get("username").map_or("root@pam", String::as_str);
    let ds = s.options.get("datastore").map_or("", String::as_str);
    format!("{user}@{server}:{ds}")
}

/// The declared servers and their datastores.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Pbs {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    servers: Vec<Server>,
    /// The `pbs` storages' encryption keys (`/etc/pve/priv/storage/<id>.enc`),
    /// by storage.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    keys: BTreeMap<String, String>,
}

impl Pbs {
    /// Whether no server is declared and no storage has a key.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty() && self.keys.is_empty()
    }

    /// Declares a server (a scenario's `pbs:` entry).
    ///
    /// # Errors
    /// A name or address taken, a bad namespace.
    pub fn declare(&mut self, server: Server) -> Result<(), String> {
        let addr = server
            .address
            .clone()
            .unwrap_or_else(|| server.name.clone());
        if self
            .servers
            .iter()
            .any(|s| s.name == server.name || s.address.as_deref().unwrap_or(&s.name) == addr)
        {
            return Err(format!("server '{}' is declared twice", server.name));
        }
        for (name, ds) in &server.datastores {
            for ns in &ds.namespaces {
                let ok = ns.split('/').count() <= 7
                    && ns.split('/').all(|c| {
                        !c.is_empty()
                            && c.chars()
                                .all(|ch| ch.is_ascii_alphanumeric() || "_-.".contains(ch))
                    });
                if !ok {
                    return Err(format!("datastore '{name}': bad namespace '{ns}'"));
                }
            }
        }
        self.servers.push(server);
        Ok(())
    }

    /// The declared servers.
    pub fn servers(&self) -> &[Server] {
        &self.servers
    }

    fn server_index(&self, s: &Storage) -> Result<usize, Unreachable> {
        let host = s.options.get("server").map_or("", String::as_str);
        let port: u16 = s
            .options
            .get("port")
            .and_then(|p| p.parse().ok())
            .unwrap_or(DEFAULT_PORT);
        let i = self
            .servers
            .iter()
            .position(|x| {
                (x.name == host || x.address.as_deref() == Some(host))
                    && x.port.unwrap_or(DEFAULT_PORT) == port
            })
            .ok_or_else(|| Unreachable::Connect {
                target: format!("{host}:{port}"),
            })?;
        if let Some(fp) = &self.servers[i].fingerprint {
            let pinned = s.options.get("fingerprint").map(|f| f.to_uppercase());
            if pinned.as_deref() != Some(fp.to_uppercase().as_str()) {
                return Err(Unreachable::Fingerprint(fp.to_uppercase()));
            }
        }
        Ok(i)
    }

    /// The datastore a `pbs` storage names, as the plugin reaches it.
    ///
    /// # Errors
    /// [`Unreachable`].
    pub fn datastore(&self, s: &Storage) -> Result<&Datastore, Unreachable> {
        let i = self.server_index(s)?;
        let name = s.options.get("datastore").map_or("", String::as_str);
        self.servers[i]
            .datastores
            .get(name)
            .ok_or_else(|| Unreachable::Datastore(name.to_string()))
    }

    /// The datastore, to change.
    ///
    /// # Errors
    /// [`Unreachable`].
    pub fn datastore_mut(&mut self, s: &Storage) -> Result<&mut Datastore, Unreachable> {
        let i = self.server_index(s)?;
        let name = s.options.get("datastore").map_or("", String::as_str);
        self.servers[i]
            .datastores
            .get_mut(name)
            .ok_or_else(|| Unreachable::Datastore(name.to_string()))
    }

    /// `list_volumes`: the storage namespace's `vm` and `ct` snapshots of
    /// numeric ids (of `vmid` only if given), oldest first.
    ///
    /// # Errors
    /// `error listing snapshots - ...`, `namespace 'x' not found`.
    pub fn list(&self, s: &Storage, vmid: Option<u32>) -> Result<Vec<&Snapshot>, String> {
        let ds = self
            .datastore(s)
            .map_err(|e| format!("error listing snapshots - {}", e.api_message()))?;
        let ns = storage_ns(s);
        if !ns.is_empty() && !ds.namespaces.contains(&ns) {
            return Err(format!(
                "error listing snapshots - 400 namespace '{ns}' not found"
            ));
        }
        let mut out: Vec<&Snapshot> = ds
            .snapshots
            .iter()
            .filter(|x| x.ns == ns)
            .filter(|x| matches!(x.btype.as_str(), "vm" | "ct"))
            .filter(|x| x.id.parse::<u32>().is_ok())
            .filter(|x| vmid.is_none_or(|v| x.id == v.to_string()))
            .collect();
        out.sort_by_key(|x| (x.btype.clone(), x.id.clone(), x.time));
        Ok(out)
    }

    /// The snapshot a volume name of storage `s` names.
    ///
    /// # Errors
    /// The name's parse; the server's; `snapshot 'x' does not exist`.
    pub fn snapshot(&self, s: &Storage, name: &str) -> Result<&Snapshot, String> {
        let (t, id, time) = parse_volname(name)?;
        let ds = self.datastore(s).map_err(|e| e.api_message())?;
        let ns = storage_ns(s);
        ds.snapshots
            .iter()
            .find(|x| x.ns == ns && x.btype == t && x.id == id && x.time == time)
            .ok_or_else(|| format!("snapshot '{t}/{id}/{}' does not exist", rfc3339(time)))
    }

    fn snapshot_mut(&mut self, s: &Storage, name: &str) -> Result<&mut Snapshot, String> {
        let (t, id, time) = parse_volname(name)?;
        let ns = storage_ns(s);
        let ds = self.datastore_mut(s).map_err(|e| e.api_message())?;
        ds.snapshots
            .iter_mut()
            .find(|x| x.ns == ns && x.btype == t && x.id == id && x.time == time)
            .ok_or_else(|| format!("snapshot '{t}/{id}/{}' does not exist", rfc3339(time)))
    }

    /// Stores a finished backup in the storage's datastore and namespace;
    /// with `verify-new`, verified at once (`upid` of that task).
    ///
    /// # Errors
    /// [`Unreachable`]'s client message.
    pub fn put(&mut self, s: &Storage, mut snap: Snapshot, upid: &str) -> Result<(), String> {
        let ds = self.datastore_mut(s).map_err(|e| e.client_message())?;
        if ds.verify_new {
            snap.verification = Some(Verification {
                state: "ok".into(),
                upid: upid.to_string(),
            });
        }
        ds.snapshots.retain(|x| {
            !(x.ns == snap.ns && x.btype == snap.btype && x.id == snap.id && x.time == snap.time)
        });
        ds.snapshots.push(snap);
        Ok(())
    }

    /// `update_volume_attribute`: `notes` (the snapshot's comment) or
    /// `protected`.
    ///
    /// # Errors
    /// The snapshot's lookup.
    pub fn set_attrs(
        &mut self,
        s: &Storage,
        name: &str,
        notes: Option<String>,
        protected: Option<bool>,
    ) -> Result<(), String> {
        let snap = self.snapshot_mut(s, name)?;
        if let Some(n) = notes {
            snap.notes = (!n.is_empty()).then_some(n);
        }
        if let Some(p) = protected {
            snap.protected = p;
        }
        Ok(())
    }

    /// `proxmox-backup-client forget`.
    ///
    /// # Errors
    /// The lookup; a protected snapshot (PBS's refusal).
    pub fn forget(&mut self, s: &Storage, name: &str) -> Result<(), String> {
        let snap = self.snapshot(s, name)?;
        if snap.protected {
            return Err(
                "proxmox-backup-client failed: Error: cannot remove protected snapshot".into(),
            );
        }
        let (t, id, time) = parse_volname(name)?;
        let ns = storage_ns(s);
        let ds = self.datastore_mut(s).map_err(|e| e.api_message())?;
        ds.snapshots
            .retain(|x| !(x.ns == ns && x.btype == t && x.id == id && x.time == time));
        Ok(())
    }
}

#[cfg(test)]
mod tests;
