//! The monitors, managers and metadata servers (pve-manager
//! `API2/Ceph/{MON,MGR,MDS}.pm`, `Ceph/Services.pm`): the checks made
//! before a task starts, and what its worker does when it gets there
//! ([`Ceph::apply`]).

use serde::{Deserialize, Serialize};

use super::Around;
use super::{Binary, Ceph};
use crate::model::node_hw::Hardware;
use crate::model::storage::Storages;
use crate::model::{Error, Result};

/// A monitor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mon {
    /// Its id (the node name by default).
    pub id: String,
    /// The node it runs on.
    pub host: String,
    /// Its public address.
    pub addr: String,
    /// Whether `ceph-mon@<id>` runs.
    pub running: bool,
}

/// A manager or a metadata server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Daemon {
    /// Its id.
    pub id: String,
    /// The node it runs on.
    pub host: String,
    /// Whether its service runs.
    pub running: bool,
}

/// A kind of daemon.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DaemonKind {
    /// `ceph-mon`.
    Mon,
    /// `ceph-mgr`.
    Mgr,
    /// `ceph-mds`.
    Mds,
    /// `ceph-osd`.
    Osd,
}

impl DaemonKind {
    /// Its name in service names (`mon`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Mon => "mon",
            Self::Mgr => "mgr",
            Self::Mds => "mds",
            Self::Osd => "osd",
        }
    }
}

/// What a Ceph task does when its worker gets there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum CephOp {
    /// `cephcreatemon`.
    CreateMon {
        /// The id.
        id: String,
        /// Its address.
        addr: String,
    },
    /// `cephdestroymon`.
    DestroyMon {
        /// The id.
        id: String,
    },
    /// `cephcreatemgr`.
    CreateMgr {
        /// The id.
        id: String,
    },
    /// `cephdestroymgr`.
    DestroyMgr {
        /// The id.
        id: String,
    },
    /// `cephcreatemds`.
    CreateMds {
        /// The id.
        id: String,
    },
    /// `cephdestroymds`.
    DestroyMds {
        /// The id.
        id: String,
    },
    /// `srvstart`, `srvstop`, `srvrestart` of `ceph.target`, a kind's
    /// target (`mon`) or one daemon (`mon.pve1`).
    Service {
        /// `start`, `stop` or `restart`.
        action: String,
        /// The service as the call named it; `None` for all.
        service: Option<String>,
    },
    /// `cephsetflags`: each flag PVE offers to set or unset.
    SetFlags {
        /// `(flag, value)`.
        flags: Vec<(String, bool)>,
    },
    /// `cephcreateosd`.
    CreateOsd {
        /// The OSD as asked.
        osd: Box<super::NewOsd>,
    },
    /// `cephdestroyosd`.
    DestroyOsd {
        /// The id.
        id: u32,
        /// `cleanup`: the volume group and the disk freed.
        cleanup: bool,
    },
    /// `srvrestart` of `<node>-osd`: the rolling restart of a node's
    /// OSDs.
    RestartBulk {
        /// The call's options.
        opts: super::restart::BulkRestart,
    },
    /// `srvrestart` of `cluster-<type>`: the cluster-wide rolling restart
    /// of a type's daemons; it starts sub-tasks on other nodes, so the
    /// cluster runs it ([`super::Ceph::run_cluster_restart`]).
    RestartCluster {
        /// `mon`, `mgr`, `mds` or `osd`.
        kind: String,
        /// The call's options.
        opts: super::restart::BulkRestart,
    },
    /// `cephfscreate`, `cephdestroyfs`.
    Fs {
        /// What the task does.
        fs: super::FsOp,
    },
    /// `cephcreatepool`, `cephsetpool`, `cephdestroypool`.
    Pool {
        /// What the task does.
        pool: super::PoolOp,
    },
}

/// The data directory of a daemon.
fn data_dir(kind: DaemonKind, id: &str) -> String {
    format!("/var/lib/ceph/{}/ceph-{id}", kind.name())
}

/// Whether `ip` lies in `cidr` (IPv4 and IPv6).
pub fn in_cidr(ip: &str, cidr: &str) -> bool {
    let Some((net, bits)) = cidr.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u32>() else {
        return false;
    };
    match (
        ip.parse::<std::net::IpAddr>(),
        net.parse::<std::net::IpAddr>(),
    ) {
        (Ok(std::net::IpAddr::V4(a)), Ok(std::net::IpAddr::V4(n))) if bits <= 32 => {
            let mask = if bits == 0 {
                0
            } else {
                u32::MAX << (32 - bits)
            };
            u32::from(a) & mask == u32::from(n) & mask
        }
        (Ok(std::net::IpAddr::V6(a)), Ok(std::net::IpAddr::V6(n))) if bits <= 128 => {
            let mask = if bits == 0 {
                0
            } else {
                u128::MAX << (128 - bits)
            };
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

impl Ceph {
    /// The monitors, in rank order.
    pub fn mons(&self) -> &[Mon] {
        &self.mons
    }

    /// The managers.
    pub fn mgrs(&self) -> &[Daemon] {
        &self.mgrs
    }

    /// The metadata servers.
    pub fn mdss(&self) -> &[Daemon] {
        &self.mdss
    }

    /// The active manager: the first that runs.
    pub fn active_mgr(&self) -> Option<&Daemon> {
        self.mgrs.iter().find(|m| m.running)
    }

    /// Adds a daemon as a scenario declares it (no checks but the id).
    ///
    /// # Errors
    /// When the id is taken.
    pub fn declare(
        &mut self,
        kind: DaemonKind,
        id: &str,
        host: &str,
        addr: &str,
        running: bool,
    ) -> std::result::Result<(), String> {
        let taken = match kind {
            DaemonKind::Mon => self.mons.iter().any(|m| m.id == id),
            DaemonKind::Mgr => self.mgrs.iter().any(|m| m.id == id),
            DaemonKind::Mds => self.mdss.iter().any(|m| m.id == id),
            DaemonKind::Osd => return Err("OSDs are not declared this way".into()),
        };
        if taken {
            return Err(format!("{} '{id}' declared twice", kind.name()));
        }
        match kind {
            DaemonKind::Mon => {
                let conf = self.conf.get_or_insert_with(Default::default);
                let host_line = conf
                    .get("global", "mon_host")
                    .map_or_else(|| addr.to_string(), |h| format!("{h} {addr}"));
                conf.set("global", "mon_host", host_line);
                conf.set(&format!("mon.{id}"), "public_addr", addr);
                self.mons.push(Mon {
                    id: id.into(),
                    host: host.into(),
                    addr: addr.into(),
                    running,
                });
                self.mon_epoch += 1;
            }
            DaemonKind::Mgr => {
                self.mgrs.push(Daemon {
                    id: id.into(),
                    host: host.into(),
                    running,
                });
                self.mgr_epoch += 1;
            }
            DaemonKind::Mds => {
                let conf = self.conf.get_or_insert_with(Default::default);
                if conf.get("mds", "keyring").is_none() {
                    conf.set("mds", "keyring", "/var/lib/ceph/mds/ceph-$id/keyring");
                }
                conf.set(&format!("mds.{id}"), "host", host);
                self.mdss.push(Daemon {
                    id: id.into(),
                    host: host.into(),
                    running,
                });
            }
            DaemonKind::Osd => {}
        }
        Ok(())
    }

    /// Marks the cluster made by a scenario: its creation time and the
    /// first monitor's settings.
    pub fn declare_created(&mut self, ms: i64) {
        self.created_ms.get_or_insert(ms);
        if !self.mons.is_empty() {
            self.db_set("mon", "auth_allow_insecure_global_id_reclaim", "false");
            if let Some(conf) = self.conf.as_mut() {
                conf.set(
                    "client.crash",
                    "keyring",
                    "/etc/pve/ceph/$cluster.$name.keyring",
                );
            }
            if self.log.is_empty() {
                self.log_leader(ms);
            }
        }
    }

    /// `POST .../ceph/mon/{monid}` up to the fork: the binary,
    /// initialisation, the link, a connection (or none at all for the
    /// first monitor), the address in the public network, an unused
    /// address and id. Answers the monitor's address.
    ///
    /// # Errors
    /// PVE's refusals in its order.
    pub fn prepare_create_mon(
        &mut self,
        node: &str,
        node_ip: &str,
        id: &str,
        mon_address: &[String],
    ) -> Result<String> {
        self.check_installed(node, Binary::Mon)?;
        self.check_inited(node)?;
        self.link(node);
        let connected = self.rados(node).is_ok();
        let first = self.mons.is_empty()
            && self
                .conf
                .as_ref()
                .is_none_or(|c| c.get("global", "mon_host").is_none());
        if !connected && !first {
            return Err(Error::failed(
                "Could not connect to ceph cluster despite configured monitors",
            ));
        }
        let ip = self.mon_ip(node, node_ip, mon_address)?;
        self.assert_mon_prerequisites(id, &ip)?;
        Ok(ip)
    }

    /// `$find_mon_ips`: the node's address in the public network, or
    /// the one asked for.
    fn mon_ip(&self, node: &str, node_ip: &str, asked: &[String]) -> Result<String> {
        let pubnet = self
            .conf
            .as_ref()
            .and_then(|c| c.get("global", "public_network"))
            .map(str::to_string);
        let Some(pubnet) = pubnet else {
            return Ok(asked
                .first()
                .cloned()
                .unwrap_or_else(|| node_ip.to_string()));
        };
        let nets: Vec<&str> = pubnet
            .split([',', ';', ' '])
            .filter(|s| !s.is_empty())
            .collect();
        if let Some(ip) = asked.first() {
            if ip == node_ip && nets.iter().any(|n| in_cidr(ip, n)) {
                return Ok(ip.clone());
            }
            return Err(Error::failed(format!(
                "Specified monitor IP '{ip}' not configured or up on {node}!"
            )));
        }
        for net in &nets {
            if !in_cidr(node_ip, net) {
                return Err(Error::failed(format!(
                    "No active IP found for the requested ceph public network '{net}' on node '{node}'"
                )));
            }
        }
        Ok(node_ip.to_string())
    }

    /// `$assert_mon_prerequisites`.
    fn assert_mon_prerequisites(&self, id: &str, ip: &str) -> Result<()> {
        let in_host_line = self.conf.as_ref().is_some_and(|c| {
            c.get("global", "mon_host").is_some_and(|h| {
                h.split([',', ';', ' '])
                    .any(|part| strip_addr(part) == Some(ip))
            })
        });
        if in_host_line || self.mons.iter().any(|m| m.addr == ip) {
            return Err(Error::failed(format!(
                "monitor address '{ip}' already in use"
            )));
        }
        if self.mons.iter().any(|m| m.id == id) {
            return Err(Error::exists(format!("monitor '{id}' already exists")));
        }
        Ok(())
    }

    /// `DELETE .../ceph/mon/{monid}` up to the fork.
    ///
    /// # Errors
    /// PVE's refusals in its order.
    pub fn prepare_destroy_mon(&self, node: &str, id: &str) -> Result<()> {
        self.check_inited(node)?;
        self.rados(node)?;
        self.assert_mon_can_remove(node, id)
    }

    /// `$assert_mon_can_remove`.
    fn assert_mon_can_remove(&self, node: &str, id: &str) -> Result<()> {
        let Some(mon) = self.mons.iter().find(|m| m.id == id) else {
            return Err(Error::not_found(format!("no such monitor id '{id}'")));
        };
        if mon.host != node {
            return Err(Error::failed(format!(
                "monitor filesystem '{}' does not exist on this node",
                data_dir(DaemonKind::Mon, id)
            )));
        }
        if self.mons.len() <= 1 {
            return Err(Error::failed("can't remove last monitor"));
        }
        Ok(())
    }

    /// `POST .../ceph/mgr/{id}` up to the fork.
    ///
    /// # Errors
    /// The binary, initialisation.
    pub fn prepare_create_mgr(&mut self, node: &str) -> Result<()> {
        self.check_installed(node, Binary::Mgr)?;
        self.check_inited(node)?;
        self.link(node);
        Ok(())
    }

    /// `POST .../ceph/mds/{name}` up to the fork.
    ///
    /// # Errors
    /// The binary, initialisation, an id starting with a digit.
    pub fn prepare_create_mds(&self, node: &str, id: &str) -> Result<()> {
        self.check_installed(node, Binary::Mds)?;
        self.check_inited(node)?;
        if id.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(Error::failed("ID of the MDS cannot start with a number!"));
        }
        Ok(())
    }

    /// What a Ceph task's worker does on `node` at `ms`: the lines it
    /// logs, or them and why it fails.
    ///
    /// # Errors
    /// The lines so far and the worker's `die`.
    pub fn apply(
        &mut self,
        node: &str,
        op: &CephOp,
        ms: i64,
    ) -> std::result::Result<Vec<String>, (Vec<String>, String)> {
        let mut storages = Storages::default();
        let mut hardware = Hardware::default();
        let mut around = Around {
            storages: &mut storages,
            hardware: &mut hardware,
        };
        self.apply_in(&mut around, node, op, ms)
    }

    /// [`Ceph::apply`] with the cluster's `storage.cfg` and disks, which
    /// the pool, file system and OSD tasks change.
    ///
    /// # Errors
    /// The lines so far and the worker's `die`.
    pub fn apply_in(
        &mut self,
        around: &mut Around<'_>,
        node: &str,
        op: &CephOp,
        ms: i64,
    ) -> std::result::Result<Vec<String>, (Vec<String>, String)> {
        let mut lines = Vec::new();
        let r = self.run(around, node, op, ms, &mut lines);
        match r {
            Ok(()) => Ok(lines),
            Err(e) => Err((lines, e.to_string())),
        }
    }

    fn run(
        &mut self,
        around: &mut Around<'_>,
        node: &str,
        op: &CephOp,
        ms: i64,
        out: &mut Vec<String>,
    ) -> Result<()> {
        match op {
            CephOp::Pool { pool } => self.run_pool(around.storages, node, pool, out),
            CephOp::Fs { fs } => self.run_fs(around.storages, node, fs, out),
            CephOp::RestartBulk { opts } => self.run_bulk_restart(node, opts, out),
            // Without sub-tasks: the cluster runs it with them.
            CephOp::RestartCluster { kind, opts } => {
                let known = [node.to_string()];
                self.run_cluster_restart(kind, opts, node, &known, &mut |_| String::new(), out)
            }
            CephOp::CreateOsd { osd } => {
                let hw = around.hardware.node_mut(node);
                self.run_create_osd(hw, node, osd, ms, out).map(|_| ())
            }
            CephOp::DestroyOsd { id, cleanup } => {
                self.rados(node)?;
                let gone = self.destroy_osd(*id, out)?;
                let hw = around.hardware.node_mut(&gone.host);
                super::osds::zap(&gone, *cleanup, hw, out);
                Ok(())
            }
            CephOp::CreateMon { id, addr } => self.create_mon(node, id, addr, ms, out),
            CephOp::DestroyMon { id } => {
                self.rados(node)?;
                self.assert_mon_can_remove(node, id)?;
                self.mons.retain(|m| &m.id != id);
                self.mon_epoch += 1;
                if let Some(conf) = self.conf.as_mut() {
                    conf.remove_section(&format!("mon.{id}"));
                    if let Some(h) = conf.get("global", "mon_host") {
                        let kept: Vec<String> = h
                            .split([',', ';', ' '])
                            .filter(|p| !p.is_empty())
                            .filter(|p| self.mons.iter().any(|m| strip_addr(p) == Some(&m.addr)))
                            .map(str::to_string)
                            .collect();
                        conf.set("global", "mon_host", kept.join(" "));
                    }
                }
                self.log_line(
                    ms,
                    &format!(
                        "mon.{}",
                        self.quorum_names().first().cloned().unwrap_or_default()
                    ),
                    "INF",
                    format!("mon.{id} removed from monmap"),
                );
                Ok(())
            }
            CephOp::CreateMgr { id } => self.create_mgr(node, id, out),
            CephOp::DestroyMgr { id } => {
                let dir = data_dir(DaemonKind::Mgr, id);
                if !self.mgrs.iter().any(|m| &m.id == id && m.host == node) {
                    return Err(Error::failed(format!(
                        "ceph manager directory '{dir}' not found"
                    )));
                }
                out.push(format!("disabling service 'ceph-mgr@{id}.service'"));
                out.push(format!("stopping service 'ceph-mgr@{id}.service'"));
                out.push(format!("removing manager directory '{dir}'"));
                out.push(format!("removing authkeys for mgr.{id}"));
                self.rados(node)?;
                self.mgrs.retain(|m| &m.id != id);
                self.mgr_epoch += 1;
                Ok(())
            }
            CephOp::CreateMds { id } => {
                self.rados(node)?;
                let section = format!("mds.{id}");
                if self.conf.as_ref().is_some_and(|c| c.has(&section)) {
                    return Err(Error::failed(format!(
                        "MDS '{id}' already referenced in ceph config, abort!"
                    )));
                }
                self.declare(DaemonKind::Mds, id, node, "", true)
                    .map_err(Error::failed)?;
                let dir = data_dir(DaemonKind::Mds, id);
                out.push(format!("creating MDS directory '{dir}'"));
                out.push(format!("creating keys for 'mds.{id}'"));
                out.push("setting ceph as owner for service directory".into());
                out.push(format!("enabling service 'ceph-mds@{id}.service'"));
                out.push(format!("starting service 'ceph-mds@{id}.service'"));
                Ok(())
            }
            CephOp::DestroyMds { id } => {
                self.rados(node)?;
                if let Some(conf) = self.conf.as_mut() {
                    conf.remove_section(&format!("mds.{id}"));
                }
                out.push(format!("disabling service 'ceph-mds@{id}.service'"));
                out.push(format!("stopping service 'ceph-mds@{id}.service'"));
                let dir = data_dir(DaemonKind::Mds, id);
                if self.mdss.iter().any(|m| &m.id == id && m.host == node) {
                    out.push(format!("removing ceph-mds directory '{dir}'"));
                } else {
                    out.push(format!(
                        "cannot cleanup MDS {id} directory, '{dir}' not found"
                    ));
                }
                out.push(format!("removing ceph auth for 'mds.{id}'"));
                self.mdss.retain(|m| !(&m.id == id && m.host == node));
                Ok(())
            }
            CephOp::Service { action, service } => {
                self.service(node, action, service.as_deref());
                Ok(())
            }
            CephOp::SetFlags { flags } => {
                self.rados(node)?;
                for (flag, on) in flags {
                    if self.flag(flag) == *on {
                        continue;
                    }
                    out.push(format!("{} {flag}", if *on { "set" } else { "unset" }));
                    self.set_flag(flag, *on);
                }
                Ok(())
            }
        }
    }

    fn create_mon(
        &mut self,
        node: &str,
        id: &str,
        addr: &str,
        ms: i64,
        out: &mut Vec<String>,
    ) -> Result<()> {
        let first = self.mons.is_empty();
        if !first {
            self.rados(node)?;
        }
        self.assert_mon_prerequisites(id, addr)?;
        if first && self.created_ms.is_none() {
            out.push("creating new monitor keyring".into());
        }
        self.admin_keyring = true;
        let conf = self.conf.get_or_insert_with(Default::default);
        if addr.contains(':') {
            conf.set("global", "ms_bind_ipv6", "true");
            if first {
                conf.set("global", "ms_bind_ipv4", "false");
            }
        } else {
            conf.set("global", "ms_bind_ipv4", "true");
            if first {
                conf.set("global", "ms_bind_ipv6", "false");
            }
        }
        self.declare(DaemonKind::Mon, id, node, addr, true)
            .map_err(Error::failed)?;
        self.link(node);
        self.log_leader(ms);
        if first {
            self.created_ms.get_or_insert(ms);
            out.push(
                "created the first monitor, assume it's safe to disable insecure global ID reclaim for new setup"
                    .into(),
            );
            self.db_set("mon", "auth_allow_insecure_global_id_reclaim", "false");
            out.push("Configuring keyring for ceph-crash.service".into());
            if let Some(conf) = self.conf.as_mut() {
                conf.set(
                    "client.crash",
                    "keyring",
                    "/etc/pve/ceph/$cluster.$name.keyring",
                );
            }
            self.create_mgr(node, node, out)?;
        }
        Ok(())
    }

    fn create_mgr(&mut self, node: &str, id: &str, out: &mut Vec<String>) -> Result<()> {
        self.rados(node)?;
        let dir = data_dir(DaemonKind::Mgr, id);
        if self.mgrs.iter().any(|m| m.id == id) {
            return Err(Error::failed(format!(
                "ceph manager directory '{dir}' already exists"
            )));
        }
        out.push(format!("creating manager directory '{dir}'"));
        out.push(format!("creating keys for 'mgr.{id}'"));
        out.push("setting owner for directory".into());
        out.push(format!("enabling service 'ceph-mgr@{id}.service'"));
        out.push(format!("starting service 'ceph-mgr@{id}.service'"));
        self.declare(DaemonKind::Mgr, id, node, "", true)
            .map_err(Error::failed)?;
        Ok(())
    }

    /// Logs the quorum's leader (the first in quorum) as the monitors do
    /// after an election.
    pub fn log_leader(&mut self, ms: i64) {
        let names = self.quorum_names();
        let ranks: Vec<String> = self.quorum().iter().map(ToString::to_string).collect();
        if let Some(leader) = names.first() {
            let text = format!(
                "mon.{leader} is new leader, mons {} in quorum (ranks {})",
                names.join(","),
                ranks.join(",")
            );
            self.log_line(ms, &format!("mon.{leader}"), "INF", text);
        }
    }

    /// The names of the monitors in quorum.
    pub fn quorum_names(&self) -> Vec<String> {
        self.quorum()
            .into_iter()
            .filter_map(|i| self.mons.get(i).map(|m| m.id.clone()))
            .collect()
    }

    /// `systemctl <action>` of `ceph.target`, `ceph-<kind>.target` or
    /// `ceph-<kind>@<id>` on `node`.
    pub(super) fn service(&mut self, node: &str, action: &str, service: Option<&str>) {
        let (kind, id) = match service.and_then(|s| {
            let (k, rest) = s.split_once('.').map_or((s, None), |(k, i)| (k, Some(i)));
            matches!(k, "mon" | "mgr" | "mds" | "osd").then_some((k, rest))
        }) {
            Some((k, id)) => (Some(k), id),
            None => (None, None),
        };
        let running = action != "stop";
        let fits = |k: &str, daemon_id: &str| {
            kind.is_none_or(|want| want == k) && id.is_none_or(|want| want == daemon_id)
        };
        for m in self.mons.iter_mut().filter(|m| m.host == node) {
            if fits("mon", &m.id) {
                m.running = running;
            }
        }
        for (k, list) in [("mgr", &mut self.mgrs), ("mds", &mut self.mdss)] {
            for d in list.iter_mut().filter(|d| d.host == node) {
                if fits(k, &d.id) {
                    d.running = running;
                }
            }
        }
        if kind.is_none_or(|k| k == "osd") {
            self.run_osds(node, id, running);
        }
    }
}

/// The IP of one `mon_host` entry (`10.0.0.1`, `10.0.0.1:6789`,
/// `[v2:10.0.0.1:3300/0,v1:10.0.0.1:6789/0]`).
fn strip_addr(part: &str) -> Option<&str> {
    let p = part.trim_start_matches('[');
    let p = p
        .strip_prefix("v2:")
        .or_else(|| p.strip_prefix("v1:"))
        .unwrap_or(p);
    let p = p.split('/').next()?;
    let p = p.trim_end_matches(']');
    if p.parse::<std::net::IpAddr>().is_ok() {
        return Some(p);
    }
    p.rsplit_once(':')
        .map(|(ip, _)| ip)
        .filter(|ip| !ip.is_empty())
}
