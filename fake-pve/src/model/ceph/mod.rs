//! Ceph as PVE manages it (pve-manager `PVE/Ceph/Tools.pm`,
//! `PVE/API2/Ceph*.pm`): which nodes have the packages installed (a
//! release and its point version), `/etc/pve/ceph.conf` and the
//! `/etc/pve/ceph` directory, the admin keyring, each node's
//! `/etc/ceph/ceph.conf` link, the monitors, managers and metadata
//! servers with their host and whether they run, the OSD map's flags,
//! the muted health checks, the central config database and the cluster
//! log.
//!
//! The checks PVE's handlers make before anything else are methods here
//! ([`Ceph::check_installed`], [`Ceph::check_inited`],
//! [`Ceph::check_configured`], [`Ceph::rados`]), with PVE's messages.

pub mod conf;
pub mod daemons;
pub mod erasure;
pub mod fs;
pub mod health;
#[cfg(test)]
mod osd_tests;
pub mod osds;
pub mod pools;
pub mod restart;
pub mod safety;
#[cfg(test)]
mod tests;
pub mod usage;
#[cfg(test)]
mod usage_tests;

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::model::{Error, Result};
pub use conf::CephConf;
pub use daemons::{Daemon, DaemonKind, Mon};
pub use fs::{CephFs, FsOp};
pub use osds::{NewOsd, Osd};
pub use pools::{Pool, PoolOp};

/// A Ceph release PVE's repositories ship.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Release {
    /// 17.2.
    Quincy,
    /// 18.2.
    Reef,
    /// 19.2.
    Squid,
    /// 20.2.
    Tentacle,
}

impl Release {
    /// Every release fake-pve knows, oldest first.
    pub const ALL: [Release; 4] = [Self::Quincy, Self::Reef, Self::Squid, Self::Tentacle];

    /// Its code name.
    pub fn codename(self) -> &'static str {
        match self {
            Self::Quincy => "quincy",
            Self::Reef => "reef",
            Self::Squid => "squid",
            Self::Tentacle => "tentacle",
        }
    }

    /// The release by code name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.codename() == name)
    }

    /// The major number (`19` for squid).
    pub fn major(self) -> u32 {
        match self {
            Self::Quincy => 17,
            Self::Reef => 18,
            Self::Squid => 19,
            Self::Tentacle => 20,
        }
    }

    /// The newest point release in Proxmox's repositories.
    pub fn newest(self) -> &'static str {
        match self {
            Self::Quincy => "17.2.8",
            Self::Reef => "18.2.7",
            Self::Squid => "19.2.3",
            Self::Tentacle => "20.2.0",
        }
    }

    /// The commit `ceph --version` names for [`Release::newest`].
    fn newest_sha(self) -> &'static str {
        match self {
            Self::Quincy => "f817ceb7f187defb1d021d6328fa833eb8e943b3",
            Self::Reef => "6b0e988052ec84cf2d4a54ff9bbbc5e720b621ad",
            Self::Squid => "c92aebb279828e9c3c1f5d24613efca272649e62",
            Self::Tentacle => "69f84cc2651aa259a15bc192ddaabd3baba07489",
        }
    }
}

/// A node's Ceph packages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Install {
    /// The release.
    pub release: Release,
    /// Its point version (`19.2.3`).
    pub version: String,
}

impl Install {
    /// The newest point version of `release`.
    pub fn newest(release: Release) -> Self {
        Self {
            release,
            version: release.newest().to_string(),
        }
    }

    /// What `ceph --version` prints (a point version other than the
    /// newest names no commit: zeros).
    pub fn version_line(&self) -> String {
        let sha = if self.version == self.release.newest() {
            self.release.newest_sha()
        } else {
            "0000000000000000000000000000000000000000"
        };
        format!(
            "ceph version {} ({sha}) {} (stable)",
            self.version,
            self.release.codename()
        )
    }
}

/// A binary `check_ceph_installed` looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binary {
    /// `/usr/bin/ceph`.
    Ceph,
    /// `/usr/bin/ceph-mon`.
    Mon,
    /// `/usr/bin/ceph-mgr`.
    Mgr,
    /// `/usr/bin/ceph-osd`.
    Osd,
    /// `/usr/bin/ceph-mds`.
    Mds,
    /// `/usr/sbin/ceph-volume`.
    Volume,
}

impl Binary {
    /// Its path.
    pub fn path(self) -> &'static str {
        match self {
            Self::Ceph => "/usr/bin/ceph",
            Self::Mon => "/usr/bin/ceph-mon",
            Self::Mgr => "/usr/bin/ceph-mgr",
            Self::Osd => "/usr/bin/ceph-osd",
            Self::Mds => "/usr/bin/ceph-mds",
            Self::Volume => "/usr/sbin/ceph-volume",
        }
    }
}

/// A muted health check (`ceph health mute`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mute {
    /// Stays muted when the check clears and comes back.
    #[serde(default)]
    pub sticky: bool,
    /// How long, as given (`1h`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<String>,
}

/// One line of the cluster log (`/var/log/ceph/ceph.log`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogLine {
    /// When, epoch milliseconds.
    pub ms: i64,
    /// Who logs it (`mon.pve1`).
    pub who: String,
    /// `INF`, `WRN`, `ERR`, `DBG`.
    pub level: String,
    /// The text.
    pub text: String,
}

/// The Ceph of a cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ceph {
    /// The nodes with Ceph packages installed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    installs: BTreeMap<String, Install>,
    /// `/etc/pve/ceph.conf`; `None` while it does not exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    conf: Option<CephConf>,
    /// Whether `/etc/pve/ceph` exists.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    dir: bool,
    /// Whether `/etc/pve/priv/ceph.client.admin.keyring` exists.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    admin_keyring: bool,
    /// The nodes whose `/etc/ceph/ceph.conf` links to the PVE one.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    linked: BTreeSet<String>,
    /// The monitors, in rank order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    mons: Vec<Mon>,
    /// The managers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    mgrs: Vec<Daemon>,
    /// The metadata servers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    mdss: Vec<Daemon>,
    /// The pools, by id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pools: Vec<Pool>,
    /// The erasure-code profiles made (`default` is Ceph's own).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    ec_profiles: BTreeMap<String, BTreeMap<String, String>>,
    /// The OSDs, by id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    osds: Vec<Osd>,
    /// The file systems, in creation order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    filesystems: Vec<CephFs>,
    /// The OSD map's flags, as Ceph names them (`pauserd`, `noout`).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    flags: BTreeSet<String>,
    /// Muted health checks by code.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    mutes: BTreeMap<String, Mute>,
    /// The monitors' config database: `(who, name) -> value`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    db: BTreeMap<String, BTreeMap<String, String>>,
    /// The cluster log, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    log: Vec<LogLine>,
    /// When the first monitor was made, epoch milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    created_ms: Option<i64>,
    /// The monitor map's epoch.
    #[serde(default, skip_serializing_if = "is_zero")]
    mon_epoch: u32,
    /// The OSD map's epoch.
    #[serde(default, skip_serializing_if = "is_zero")]
    osd_epoch: u32,
    /// The manager map's epoch.
    #[serde(default, skip_serializing_if = "is_zero")]
    mgr_epoch: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// What `rados_connect` says when there is no monitor to ask.
pub const NO_MONITOR: &str = "rados_connect failed - No such file or directory";
/// What `PVE::RADOS` says when the monitors do not answer.
pub const TIMEOUT: &str = "got timeout";

/// The OSD flags PVE offers (`get_possible_osd_flags`), sorted.
pub const OSD_FLAGS: &[&str] = &[
    "nobackfill",
    "nodeep-scrub",
    "nodown",
    "noin",
    "noout",
    "norebalance",
    "norecover",
    "noscrub",
    "notieragent",
    "noup",
    "pause",
];

/// The flag Ceph's OSD map shows for one PVE offers
/// (`get_real_flag_name`): `pause` sets `pauserd` and `pausewr`.
pub fn real_flag_name(flag: &str) -> &str {
    if flag == "pause" { "pauserd" } else { flag }
}

impl Ceph {
    /// Whether nothing of Ceph is there (a fresh install).
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }

    /// The packages on `node`.
    pub fn install_of(&self, node: &str) -> Option<&Install> {
        self.installs.get(node)
    }

    /// Installs the packages of `release` (its newest point version, or
    /// `version`) on `node`.
    pub fn install(&mut self, node: &str, release: Release, version: Option<&str>) {
        let mut i = Install::newest(release);
        if let Some(v) = version {
            i.version = v.to_string();
        }
        self.installs.insert(node.to_string(), i);
    }

    /// `check_ceph_installed`.
    ///
    /// # Errors
    /// `binary not installed: <path>`.
    pub fn check_installed(&self, node: &str, bin: Binary) -> Result<()> {
        if self.installs.contains_key(node) {
            Ok(())
        } else {
            Err(Error::failed(format!(
                "binary not installed: {}",
                bin.path()
            )))
        }
    }

    /// `check_ceph_inited`: the monitor binary, then `ceph.conf` and the
    /// `/etc/pve/ceph` directory.
    ///
    /// # Errors
    /// As [`Ceph::check_installed`]; `pveceph configuration not
    /// initialized - missing ...`.
    pub fn check_inited(&self, node: &str) -> Result<()> {
        self.check_installed(node, Binary::Mon)?;
        let mut missing = Vec::new();
        if self.conf.is_none() {
            missing.push("missing '/etc/pve/ceph.conf'");
        }
        if !self.dir {
            missing.push("missing '/etc/pve/ceph'");
        }
        if missing.is_empty() {
            Ok(())
        } else {
            Err(Error::failed(format!(
                "pveceph configuration not initialized - {}",
                missing.join(", ")
            )))
        }
    }

    /// `check_ceph_configured`: initialised, and the admin keyring.
    ///
    /// # Errors
    /// As [`Ceph::check_inited`]; `ceph not fully configured - missing
    /// ...`.
    pub fn check_configured(&self, node: &str) -> Result<()> {
        self.check_inited(node)?;
        if self.admin_keyring {
            Ok(())
        } else {
            Err(Error::failed(
                "ceph not fully configured - missing '/etc/pve/priv/ceph.client.admin.keyring'",
            ))
        }
    }

    /// `PVE::RADOS->new()` on `node`: the monitors it finds through
    /// `/etc/ceph/ceph.conf` must form a quorum.
    ///
    /// # Errors
    /// [`NO_MONITOR`] without a link or a configured monitor;
    /// [`TIMEOUT`] when too few monitors run for a quorum.
    pub fn rados(&self, node: &str) -> Result<()> {
        let configured = self.conf.as_ref().is_some_and(|c| {
            c.get("global", "mon_host")
                .is_some_and(|h| !h.trim().is_empty())
        });
        if !self.linked.contains(node) || !configured || self.mons.is_empty() {
            return Err(Error::failed(NO_MONITOR));
        }
        if self.quorum().is_empty() {
            return Err(Error::failed(TIMEOUT));
        }
        Ok(())
    }

    /// The ranks of the monitors in quorum: every running one while a
    /// majority runs, else none.
    pub fn quorum(&self) -> Vec<usize> {
        let up: Vec<usize> = self
            .mons
            .iter()
            .enumerate()
            .filter(|(_, m)| m.running)
            .map(|(i, _)| i)
            .collect();
        if up.len() * 2 > self.mons.len() {
            up
        } else {
            Vec::new()
        }
    }

    /// `/etc/pve/ceph.conf`, if it exists.
    pub fn conf(&self) -> Option<&CephConf> {
        self.conf.as_ref()
    }

    /// Whether `node`'s `/etc/ceph/ceph.conf` is the PVE one.
    pub fn is_linked(&self, node: &str) -> bool {
        self.linked.contains(node)
    }

    /// `setup_pve_symlinks` on `node`.
    pub fn link(&mut self, node: &str) {
        self.linked.insert(node.to_string());
    }

    /// `POST /nodes/{node}/ceph/init`: the `[global]` section when there
    /// is none (an existing one keeps its fsid, auth and pool defaults),
    /// the client keyring, the networks, the admin keyring and the link.
    ///
    /// # Errors
    /// `Ceph Nautilus required - please run 'pveceph install'` where the
    /// packages are missing.
    pub fn init(&mut self, node: &str, opts: &InitOptions, fsid: &str) -> Result<()> {
        if !self.installs.contains_key(node) {
            return Err(Error::failed(
                "Ceph Nautilus required - please run 'pveceph install'",
            ));
        }
        self.dir = true;
        let auth = if opts.disable_cephx { "none" } else { "cephx" };
        let conf = self.conf.get_or_insert_with(CephConf::default);
        if !conf.has("global") {
            conf.set("global", "fsid", fsid);
            conf.set("global", "auth_cluster_required", auth);
            conf.set("global", "auth_service_required", auth);
            conf.set("global", "auth_client_required", auth);
            conf.set(
                "global",
                "osd_pool_default_size",
                opts.size.unwrap_or(3).to_string(),
            );
            conf.set(
                "global",
                "osd_pool_default_min_size",
                opts.min_size.unwrap_or(2).to_string(),
            );
            conf.set("global", "mon_allow_pool_delete", "true");
        }
        if auth == "cephx" {
            conf.set("client", "keyring", "/etc/pve/priv/$cluster.$name.keyring");
        }
        if let Some(net) = &opts.network {
            conf.set("global", "public_network", net.clone());
            conf.set("global", "cluster_network", net.clone());
        }
        if let Some(net) = &opts.cluster_network {
            conf.set("global", "cluster_network", net.clone());
        }
        if auth == "cephx" {
            self.admin_keyring = true;
        }
        self.linked.insert(node.to_string());
        Ok(())
    }

    /// The cluster's fsid.
    pub fn fsid(&self) -> Option<&str> {
        self.conf.as_ref()?.get("global", "fsid")
    }

    /// A `[global]` value, or Ceph's default for the pool sizes.
    pub fn pool_default(&self, key: &str) -> u32 {
        let fallback = if key == "osd_pool_default_size" { 3 } else { 2 };
        self.conf
            .as_ref()
            .and_then(|c| c.get("global", key))
            .and_then(|v| v.parse().ok())
            .unwrap_or(fallback)
    }

    /// The OSD map's flags.
    pub fn flags(&self) -> &BTreeSet<String> {
        &self.flags
    }

    /// Whether one of PVE's flags is set.
    pub fn flag(&self, flag: &str) -> bool {
        self.flags.contains(real_flag_name(flag))
    }

    /// `ceph osd set|unset <flag>`; answers whether it changed.
    pub fn set_flag(&mut self, flag: &str, on: bool) -> bool {
        let names: Vec<&str> = if flag == "pause" {
            vec!["pauserd", "pausewr"]
        } else {
            vec![flag]
        };
        let mut changed = false;
        for n in names {
            changed |= if on {
                self.flags.insert(n.to_string())
            } else {
                self.flags.remove(n)
            };
        }
        if changed {
            self.osd_epoch += 1;
        }
        changed
    }

    /// The muted checks.
    pub fn mutes(&self) -> &BTreeMap<String, Mute> {
        &self.mutes
    }

    /// Mutes (`Some`) or unmutes (`None`) a check.
    pub fn mute(&mut self, code: &str, mute: Option<Mute>) {
        match mute {
            Some(m) => {
                self.mutes.insert(code.to_string(), m);
            }
            None => {
                self.mutes.remove(code);
            }
        }
    }

    /// The config database, by section and name.
    pub fn db(&self) -> &BTreeMap<String, BTreeMap<String, String>> {
        &self.db
    }

    /// `ceph config set <who> <name> <value>`.
    pub fn db_set(&mut self, who: &str, name: &str, value: &str) {
        self.db
            .entry(who.to_string())
            .or_default()
            .insert(name.to_string(), value.to_string());
    }

    /// The cluster log.
    pub fn log(&self) -> &[LogLine] {
        &self.log
    }

    /// Adds a line to the cluster log.
    pub fn log_line(&mut self, ms: i64, who: &str, level: &str, text: String) {
        self.log.push(LogLine {
            ms,
            who: who.to_string(),
            level: level.to_string(),
            text,
        });
    }

    /// When the cluster's first monitor was made.
    pub fn created_ms(&self) -> Option<i64> {
        self.created_ms
    }

    /// The epochs of the monitor, OSD and manager maps.
    pub fn epochs(&self) -> (u32, u32, u32) {
        (self.mon_epoch, self.osd_epoch.max(1), self.mgr_epoch)
    }
}

/// What a Ceph task changes beside Ceph: `storage.cfg` (a pool's or a
/// file system's storage) and the nodes' disks (an OSD's).
#[derive(Debug)]
pub struct Around<'a> {
    /// `storage.cfg` and the volumes.
    pub storages: &'a mut crate::model::storage::Storages,
    /// The nodes' disks.
    pub hardware: &'a mut crate::model::node_hw::Hardware,
}

/// The options of `init`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InitOptions {
    /// The public network (and the cluster network unless given).
    pub network: Option<String>,
    /// A separate cluster network.
    pub cluster_network: Option<String>,
    /// `osd_pool_default_size`.
    pub size: Option<u32>,
    /// `osd_pool_default_min_size`.
    pub min_size: Option<u32>,
    /// `auth_*_required = none`.
    pub disable_cephx: bool,
}
