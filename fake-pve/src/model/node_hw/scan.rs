//! The storage servers a scan from the node reaches (NFS, CIFS, iSCSI,
//! Proxmox Backup Server), as a scenario declares them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// An NFS export a server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NfsExport {
    /// `/export/pve`.
    pub path: String,
    /// Who may mount it (`192.0.2.0/24`, `*`).
    #[serde(default = "everyone")]
    pub options: String,
}

fn everyone() -> String {
    "*".into()
}

/// A CIFS share a server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CifsShare {
    /// Share name.
    pub share: String,
    /// Its comment.
    #[serde(default)]
    pub description: String,
}

/// A CIFS server: its shares and, when it wants a login, the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CifsServer {
    /// The shares.
    pub shares: Vec<CifsShare>,
    /// The user it accepts; none: guest access.
    #[serde(default)]
    pub username: Option<String>,
    /// That user's password.
    #[serde(default)]
    pub password: Option<String>,
}

/// A Proxmox Backup Server: its login and datastores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PbsServer {
    /// `user@realm` (or a token id).
    pub username: String,
    /// Its password or token secret.
    pub password: String,
    /// The server certificate's fingerprint.
    #[serde(default)]
    pub fingerprint: Option<String>,
    /// Datastores: name and comment.
    pub datastores: Vec<PbsStore>,
}

/// A datastore of a Proxmox Backup Server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PbsStore {
    /// Datastore name.
    pub store: String,
    /// Its comment.
    #[serde(default)]
    pub comment: Option<String>,
}

/// The storage servers a scan from the node reaches, by address (as
/// given to the scan; a name is resolved only if it is declared here).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScanServers {
    /// NFS servers and their exports (also what a 8.x GlusterFS scan,
    /// which asks showmount, finds).
    #[serde(default)]
    pub nfs: BTreeMap<String, Vec<NfsExport>>,
    /// CIFS servers.
    #[serde(default)]
    pub cifs: BTreeMap<String, CifsServer>,
    /// iSCSI portals and their targets.
    #[serde(default)]
    pub iscsi: BTreeMap<String, Vec<String>>,
    /// Proxmox Backup Servers.
    #[serde(default)]
    pub pbs: BTreeMap<String, PbsServer>,
}

impl ScanServers {
    pub(super) fn is_empty(&self) -> bool {
        self.nfs.is_empty() && self.cifs.is_empty() && self.iscsi.is_empty() && self.pbs.is_empty()
    }
}
