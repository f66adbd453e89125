//! LXC containers: config with pending changes and digests, creation from
//! an OS template, power state and its tasks, snapshots, templates and
//! clones, volumes, migration (pve-container `API2/LXC.pm`,
//! `API2/LXC/Config.pm`, `API2/LXC/Status.pm`, `API2/LXC/Snapshot.pm`,
//! `LXC.pm`, `LXC/Config.pm`, `LXC/Create.pm`; pve-guest-common
//! `AbstractConfig.pm`).
//!
//! A container lives in [`super::guests::Guests`] beside the VMs, in the
//! same VMID space. Its config is kept as PVE keeps it in
//! `/etc/pve/nodes/<node>/lxc/<vmid>.conf`: key to text, in canonical
//! form (property strings in PVE's order, MAC addresses generated,
//! volumes allocated). Requests check what PVE checks before forking and
//! hand the rest to a task ([`LxcOp`]) whose effect runs when it ends.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::guest::{Guest, Kind};
use super::qemu::{EffectResult, VmStatus};
use super::tasks::{TaskEffect, Worker};
use super::{Error, PveVersion, Result};

pub mod aplinfo;
pub mod backup;
mod clone;
mod config;
mod create;
mod disk;
mod migrate;
mod perm;
pub mod power;
mod restore;
pub mod schema;
mod snapshot;
pub(crate) mod status;
pub(crate) use status::ct_figures;

pub use clone::CtCloneRequest;
pub use config::CtUpdate;
pub use create::{CreateJob, CtCreateRequest};
pub use disk::{CtMoveRequest, CtReassignJob, CtReassignRequest, MoveJob};
pub use migrate::CtMigrateJob;
pub use restore::{CtRestoreJob, CtRestoreRequest};

/// One emulated container.
pub type Ct = Guest<Lxc>;

/// What a container keeps beside the shared guest record.
#[derive(Debug, Clone, Default)]
pub struct Lxc {
    /// Pending deletions (`delete:` of the `[pending]` section).
    pub(in crate::model) pending_delete: Vec<String>,
    /// A checkpoint `lxc-checkpoint` wrote when it was suspended.
    pub(in crate::model) checkpoint: bool,
}

impl Kind for Lxc {
    const NOUN: &'static str = "CT";
    const PENDING_SECTION: &'static str = "[pve:pending]";
    const EMPTY_DESCRIPTION_LINE: bool = true;

    fn pending_deletions(&self) -> Vec<String> {
        self.pending_delete.clone()
    }
}

/// A container as a saved world keeps it (the fields in this order).
#[derive(Serialize)]
struct CtOut<'a> {
    vmid: u32,
    node: &'a str,
    status: VmStatus,
    config: &'a BTreeMap<String, String>,
    pending: &'a BTreeMap<String, String>,
    pending_delete: &'a [String],
    started_ms: Option<i64>,
    snapshots: &'a BTreeMap<String, BTreeMap<String, String>>,
    checkpoint: bool,
}

/// A container as a saved world holds it (older worlds lack some
/// fields).
#[derive(Deserialize)]
struct CtIn {
    vmid: u32,
    node: String,
    status: VmStatus,
    config: BTreeMap<String, String>,
    #[serde(default)]
    pending: BTreeMap<String, String>,
    #[serde(default)]
    pending_delete: Vec<String>,
    #[serde(default)]
    started_ms: Option<i64>,
    #[serde(default)]
    snapshots: BTreeMap<String, BTreeMap<String, String>>,
    #[serde(default)]
    checkpoint: bool,
}

impl Serialize for Ct {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        CtOut {
            vmid: self.vmid,
            node: &self.node,
            status: self.status,
            config: &self.config,
            pending: &self.pending,
            pending_delete: &self.kind.pending_delete,
            started_ms: self.started_ms,
            snapshots: &self.snapshots,
            checkpoint: self.kind.checkpoint,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Ct {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let c = CtIn::deserialize(d)?;
        Ok(Guest {
            vmid: c.vmid,
            node: c.node,
            status: c.status,
            config: c.config,
            pending: c.pending,
            started_ms: c.started_ms,
            snapshots: c.snapshots,
            kind: Lxc {
                pending_delete: c.pending_delete,
                checkpoint: c.checkpoint,
            },
        })
    }
}

impl Ct {
    /// A stopped container with `config` and nothing pending.
    pub fn new(vmid: u32, node: &str, config: BTreeMap<String, String>) -> Self {
        Guest::with(vmid, node, VmStatus::Stopped, config)
    }

    /// A container of a scenario, in the power state it declares.
    pub fn seeded(
        vmid: u32,
        node: &str,
        status: VmStatus,
        config: BTreeMap<String, String>,
    ) -> Self {
        Self {
            status,
            ..Self::new(vmid, node, config)
        }
    }

    /// Whether protection mode is on.
    pub fn protected(&self) -> bool {
        self.config.get("protection").is_some_and(|t| t == "1")
    }

    /// `check_protection`: `<prefix> - protection mode enabled`.
    ///
    /// # Errors
    /// When protection is on.
    pub fn check_protection(&self, prefix: &str) -> Result<()> {
        if self.protected() {
            return Err(Error::conflict(format!(
                "{prefix} - protection mode enabled"
            )));
        }
        Ok(())
    }

    /// Memory in bytes (`memory` in MiB, default 512).
    pub fn maxmem(&self) -> u64 {
        self.config
            .get("memory")
            .and_then(|m| m.parse::<u64>().ok())
            .unwrap_or(512)
            << 20
    }

    /// Swap in bytes (`swap` in MiB, default 0 in status views).
    pub fn maxswap(&self) -> u64 {
        self.config
            .get("swap")
            .and_then(|m| m.parse::<u64>().ok())
            .unwrap_or(0)
            << 20
    }

    pub(in crate::model) fn set_running(&mut self, now_ms: i64) {
        self.status = VmStatus::Running;
        self.started_ms = Some(now_ms);
        self.checkpoint = false;
    }

    pub(in crate::model) fn set_stopped(&mut self) {
        self.status = VmStatus::Stopped;
        self.started_ms = None;
    }
}

/// What a container task does when it ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum LxcOp {
    /// `vzcreate`: allocate and format the volumes, extract the template,
    /// write the config, maybe start.
    Create(Box<CreateJob>),
    /// `vzstart`.
    Start {
        /// Skip the lock check.
        skiplock: bool,
    },
    /// `vzstop`.
    Stop {
        /// Skip the lock check.
        skiplock: bool,
    },
    /// `vzshutdown`.
    Shutdown {
        /// Seconds to wait.
        timeout: u64,
        /// Kill it when it does not stop in time.
        force_stop: bool,
    },
    /// `vzreboot`.
    Reboot,
    /// `vzsuspend`: `lxc-checkpoint -s`.
    Suspend,
    /// `vzresume`: `lxc-checkpoint -r`.
    Resume,
    /// `vzdestroy`.
    Destroy {
        /// Log the purge.
        purge: bool,
        /// Also free unreferenced volumes of this VMID.
        unreferenced: bool,
        /// Stop a running container first.
        force: bool,
    },
    /// `vzsnapshot`: commit the prepared snapshot.
    Snapshot {
        /// The snapshot.
        name: String,
    },
    /// `vzrollback`.
    Rollback {
        /// The snapshot.
        name: String,
        /// Start afterwards.
        start: bool,
    },
    /// `vzdelsnapshot`.
    DeleteSnapshot {
        /// The snapshot.
        name: String,
        /// Remove the config section even if a volume snapshot fails.
        force: bool,
    },
    /// `vztemplate`.
    Template,
    /// `vzclone`.
    Clone(Box<clone::CloneJob>),
    /// `resize` of a mount point.
    Resize {
        /// `rootfs` or `mpN`.
        disk: String,
        /// The new size in bytes.
        size: u64,
    },
    /// `move_volume` to another storage.
    MoveVolume(Box<MoveJob>),
    /// `vzmigrate`.
    Migrate(Box<CtMigrateJob>),
    /// `move_volume` to another container.
    Reassign(Box<CtReassignJob>),
    /// `vzrestore`: the container from a backup.
    Restore(Box<CtRestoreJob>),
}

/// `Configuration file 'nodes/<node>/lxc/<vmid>.conf' does not exist`.
pub fn config_missing(node: &str, vmid: u32) -> Error {
    Error::not_found(format!(
        "Configuration file 'nodes/{node}/lxc/{vmid}.conf' does not exist"
    ))
}

/// The areas a container's operations read and change: the guests, the
/// storages their volumes live on, the ACLs and pools (a pool to join),
/// the SDN (a node's bridges), the guests' firewall files, the members (a
/// clone's or migration's target), the backup archives (a restore's
/// source) and the release. Built by
/// [`Cluster::ct_ops`](crate::model::cluster::Cluster::ct_ops); the steps
/// of a container task are its methods.
pub struct CtOps<'a> {
    /// The guests.
    pub(in crate::model) guests: &'a mut crate::model::guests::Guests,
    /// The storages and their volumes.
    pub(in crate::model) storage: &'a mut crate::model::storage::Storages,
    /// Users, ACLs and pools.
    pub(in crate::model) access: &'a mut crate::model::access::Access,
    /// The SDN configuration.
    pub(in crate::model) sdn: &'a crate::model::sdn::Sdn,
    /// The guests' firewall files.
    pub(in crate::model) firewall: &'a mut crate::model::firewall::Firewall,
    /// The members.
    pub(in crate::model) nodes: &'a crate::model::nodes::Nodes,
    /// The backup archives.
    pub(in crate::model) backups: &'a crate::model::backup::Backups,
    /// The Proxmox Backup Servers (a restore from one).
    pub(in crate::model) pbs: &'a crate::model::pbs::Pbs,
    /// The release.
    pub(in crate::model) version: PveVersion,
}

/// `lxc_worker`: a container task of `kind` whose effect is `op`.
pub fn lxc_worker(kind: &str, vmid: u32, op: LxcOp) -> Worker {
    Worker::new(kind, &vmid.to_string()).effect(TaskEffect::Lxc { vmid, op })
}

impl CtOps<'_> {
    /// `vzdestroy`: the protection and lock checks again under the lock,
    /// then every volume freed and the config removed.
    pub(in crate::model) fn finish_ct_destroy(
        &mut self,
        node: &str,
        vmid: u32,
        purge: bool,
        unreferenced: bool,
        force: bool,
    ) -> EffectResult {
        let fail = |e: Error| (Vec::new(), e.to_string());
        let ct = self.guests.ct(node, vmid).map_err(fail)?;
        ct.check_protection(&format!("can't remove CT {vmid}"))
            .map_err(fail)?;
        ct.check_lock().map_err(fail)?;
        let mut lines = Vec::new();
        if ct.running() {
            if !force {
                return Err((
                    lines,
                    format!("unable to destroy CT {vmid} - container is running"),
                ));
            }
            lines.push(format!("forced to stop CT {vmid} before destroying!"));
        }
        let mut vols: Vec<String> = Vec::new();
        let mut push = |v: String| {
            if !vols.contains(&v) {
                vols.push(v);
            }
        };
        for (k, v) in ct.config.iter().chain(ct.pending.iter()) {
            if schema::is_volume_key(k)
                && let Some(vol) = schema::mp_volume(v)
                && schema::is_storage_volume(vol)
            {
                push(vol.to_string());
            }
        }
        for snap in ct.snapshots.values() {
            for (k, v) in snap {
                if schema::is_volume_key(k)
                    && let Some(vol) = schema::mp_volume(v)
                    && schema::is_storage_volume(vol)
                {
                    push(vol.to_string());
                }
            }
        }
        for v in &vols {
            if let Some(l) = self.storage.free_volume(v, node) {
                lines.extend(l);
            }
        }
        if unreferenced {
            let owned: Vec<String> = self
                .storage
                .cfg()
                .iter()
                .filter(|s| s.active_on(node))
                .flat_map(|s| {
                    self.storage
                        .volumes()
                        .on(s, node)
                        .filter(|v| {
                            v.vmid == vmid && super::storage::content::vtype(&v.name) == "images"
                        })
                        .map(super::storage::Volume::volid)
                        .collect::<Vec<_>>()
                })
                .collect();
            for v in owned {
                if let Some(l) = self.storage.free_volume(&v, node) {
                    lines.extend(l);
                }
            }
        }
        if purge {
            lines.push(format!("purging CT {vmid} from related configurations.."));
        }
        self.guests.remove_ct(vmid);
        self.firewall.remove_guest(vmid);
        Ok(lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A saved world's container, every field set: the exact text it is
    /// saved as, and loaded back unchanged.
    #[test]
    fn a_saved_container_keeps_its_fields_and_their_order() {
        let mut ct = Ct::seeded(
            200,
            "pve",
            VmStatus::Running,
            BTreeMap::from([("hostname".to_string(), "web".to_string())]),
        );
        ct.pending.insert("memory".into(), "1024".into());
        ct.pending_delete = vec!["swap".into(), "mp0".into()];
        ct.started_ms = Some(1_700_000_000_456);
        ct.snapshots.insert(
            "s1".into(),
            BTreeMap::from([("snaptime".to_string(), "1700000000".to_string())]),
        );
        ct.checkpoint = true;
        let text = serde_json::to_string(&ct).expect("in the test");
        let want = concat!(
            r#"{"vmid":200,"node":"pve","status":"running","config":{"hostname":"web"},"#,
            r#""pending":{"memory":"1024"},"pending_delete":["swap","mp0"],"#,
            r#""started_ms":1700000000456,"snapshots":{"s1":{"snaptime":"1700000000"}},"#,
            r#""checkpoint":true}"#
        );
        assert_eq!(text, want);
        let back: Ct = serde_json::from_str(&text).expect("in the test");
        assert_eq!(serde_json::to_string(&back).expect("in the test"), want);
    }

    /// A container saved before the optional fields existed loads with
    /// them empty.
    #[test]
    fn an_old_saved_container_loads() {
        let ct: Ct = serde_json::from_str(
            r#"{"vmid":201,"node":"pve","status":"stopped","config":{"arch":"amd64"}}"#,
        )
        .expect("in the test");
        assert_eq!(
            serde_json::to_string(&ct).expect("in the test"),
            concat!(
                r#"{"vmid":201,"node":"pve","status":"stopped","config":{"arch":"amd64"},"#,
                r#""pending":{},"pending_delete":[],"started_ms":null,"snapshots":{},"#,
                r#""checkpoint":false}"#
            )
        );
    }
}
