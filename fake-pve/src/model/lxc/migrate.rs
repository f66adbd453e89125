//! Migrating a container to another node: offline, or with `restart=1`
//! (shut down, move, start again); no live migration (pve-container
//! `API2/LXC.pm` `migrate_vm`, `migrate_vm_precondition`, `LXC/Migrate.pm`).

use serde::{Deserialize, Serialize};

use super::CtOps;
use super::schema::{is_storage_volume, is_volume_key, mp_volume};
use super::{LxcOp, lxc_worker};
use crate::model::nodes::NodeStatus;
use crate::model::qemu::{EffectResult, ymd};
use crate::model::tasks::Worker;
use crate::model::{Error, Result};

/// A `vzmigrate` task's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CtMigrateJob {
    /// The target node.
    pub target: String,
    /// Shut down, migrate and start again.
    pub restart: bool,
    /// The shutdown timeout of a restart migration.
    pub timeout: u64,
    /// `online=1` was asked for.
    pub online: bool,
    /// One storage every local volume goes to (`target-storage`).
    pub target_storage: Option<String>,
}

fn stamp(epoch: i64) -> String {
    let s = epoch.rem_euclid(86_400);
    format!(
        "{} {:02}:{:02}:{:02}",
        ymd(epoch),
        s / 3600,
        (s / 60) % 60,
        s % 60
    )
}

impl CtOps<'_> {
    /// `POST .../migrate`: the checks PVE makes before forking, and the
    /// `vzmigrate` worker (which takes `lock: migrate` at once).
    ///
    /// # Errors
    /// A missing container; the local node or an unknown node as target;
    /// a running container without `online` or `restart`.
    pub fn migrate_ct(&mut self, node: &str, vmid: u32, mut job: CtMigrateJob) -> Result<Worker> {
        if job.target == node {
            return Err(Error::invalid("target", "target is local node."));
        }
        if !self.nodes.iter().any(|n| n.name == job.target) {
            return Err(Error::failed(format!(
                "no such cluster node '{}'",
                job.target
            )));
        }
        let ct = self.guests.ct(node, vmid)?;
        if ct.running() && !job.online && !job.restart {
            return Err(Error::failed(
                "can't migrate running container without --online or --restart",
            ));
        }
        if !ct.running() {
            job.restart = false;
        }
        let worker = lxc_worker("vzmigrate", vmid, LxcOp::Migrate(Box::new(job.clone())));
        if let Err(e) = ct.check_lock() {
            return Ok(worker.fail(e.to_string()));
        }
        if job.online {
            return Ok(Worker::new("vzmigrate", &vmid.to_string())
                .fail("lxc live migration is currently not implemented"));
        }
        if let Some(ct) = self.guests.ct_by_id_mut(vmid) {
            ct.config.insert("lock".into(), "migrate".into());
        }
        Ok(worker)
    }

    /// `vzmigrate`: moves the local volumes and the config to the target,
    /// restarting the container there with `restart`.
    pub(in crate::model) fn finish_ct_migrate(
        &mut self,
        node: &str,
        vmid: u32,
        job: &CtMigrateJob,
        end_ms: i64,
    ) -> EffectResult {
        let start = end_ms.div_euclid(1000) - 5;
        let mut t = start;
        let mut lines = Vec::new();
        let mut say = |t: i64, l: String| lines.push(format!("{} {l}", stamp(t)));
        let Some(ct) = self.guests.ct_by_id(vmid).cloned() else {
            return Err((vec![], super::config_missing(node, vmid).to_string()));
        };
        let target_ip = self
            .nodes
            .iter()
            .find(|n| n.name == job.target)
            .map(|n| (n.ip.clone(), n.status))
            .unwrap_or_default();
        if target_ip.1 == NodeStatus::Offline {
            if let Some(c) = self.guests.ct_by_id_mut(vmid) {
                c.config.remove("lock");
            }
            return Err((
                lines,
                "migration aborted (duration 00:00:00): Can't connect to destination address using public key".to_string(),
            ));
        }
        if job.restart {
            say(t, format!("shutdown CT {vmid}"));
            t += 2;
        }
        say(
            t,
            format!(
                "starting migration of CT {vmid} to node '{}' ({})",
                job.target, target_ip.0
            ),
        );
        let mut vols: Vec<String> = Vec::new();
        let mut scan = |conf: &std::collections::BTreeMap<String, String>| {
            for (k, v) in conf {
                if is_volume_key(k)
                    && let Some(vol) = mp_volume(v).filter(|x| is_storage_volume(x))
                    && !vols.iter().any(|x| x == vol)
                {
                    vols.push(vol.to_string());
                }
            }
        };
        scan(ct.config());
        for s in ct.snapshots().values() {
            scan(s);
        }
        let mut moves = Vec::new();
        for v in &vols {
            if self.storage.volume_shared(v) {
                continue;
            }
            say(
                t,
                format!("found local volume '{v}' (in current VM config)"),
            );
            moves.push(v.clone());
        }
        for v in &moves {
            if let Some(sid) = &job.target_storage {
                let size = self.storage.volume(v, node).map_or(0, |x| x.size);
                match self.alloc_ct_volume(sid, &job.target, vmid, size, t) {
                    Ok((new, _)) => {
                        self.storage.free_volume(v, node);
                        say(t, format!("volume '{v}' is '{new}' on the target"));
                        if let Some(c) = self.guests.ct_by_id_mut(vmid) {
                            for val in c.config.values_mut() {
                                if mp_volume(val) == Some(v.as_str()) {
                                    *val = val.replacen(v.as_str(), &new, 1);
                                }
                            }
                        }
                    }
                    Err(e) => {
                        if let Some(c) = self.guests.ct_by_id_mut(vmid) {
                            c.config.remove("lock");
                        }
                        return Err((
                            lines,
                            format!(
                                "migration aborted (duration 00:00:05): storage migration for '{v}' to storage '{sid}' failed - {e}"
                            ),
                        ));
                    }
                }
            } else {
                self.storage.transfer_volume(v, node, &job.target);
                say(t, format!("volume '{v}' is '{v}' on the target"));
            }
        }
        t += 2;
        say(t, "start final cleanup".into());
        if job.restart {
            say(t, "start container on target node".into());
            t += 1;
        }
        let dur = (t - start).max(1);
        say(
            t,
            format!("migration finished successfully (duration 00:00:{dur:02})"),
        );
        if let Some(c) = self.guests.ct_by_id_mut(vmid) {
            c.config.remove("lock");
            c.node = job.target.clone();
            if job.restart {
                c.set_running(end_ms);
            } else {
                c.set_stopped();
            }
        }
        Ok(lines)
    }
}

impl<'a> CtOps<'a> {
    /// `GET .../migrate` (9.x): whether it runs and the (online) nodes
    /// it may go to.
    ///
    /// # Errors
    /// A missing container.
    pub fn ct_migrate_precondition(&self, node: &str, vmid: u32) -> Result<(bool, Vec<&'a str>)> {
        let ct = self.guests.ct(node, vmid)?;
        let allowed: Vec<&str> = self
            .nodes
            .iter()
            .filter(|n| n.name != node && n.status == NodeStatus::Online)
            .map(|n| n.name.as_str())
            .collect();
        Ok((ct.running(), allowed))
    }
}
