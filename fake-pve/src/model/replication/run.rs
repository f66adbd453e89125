//! Replication across the cluster: the checks of `create` that read the
//! guests and storages (`get_replicatable_volumes`), each node's view of
//! its jobs (`job_status`), and the runs pvescheduler makes every minute
//! (`run_jobs`, `run_replication`, `replicate`), on the emulated clock.

use super::{Job, JobState, JobUpdate, StatusLine};
use crate::model::qemu::{drive_file, is_drive_key};
use crate::model::{Error, NodeStatus, Result};

/// What a run needs to know of a guest.
#[derive(Debug, Clone)]
pub struct GuestInfo {
    /// The node its config is on.
    pub node: String,
    /// `qemu` or `lxc`.
    pub vmtype: &'static str,
    /// What `__snapshot_check_freeze_needed` says of it running: the
    /// QEMU pid, 1 for a running container, 0 when stopped.
    pub running: u32,
    /// Whether the guest agent freezes the file systems.
    pub freeze: bool,
    /// Its drives and mount points (`key`, value), unused ones included.
    pub volumes: Vec<(String, String)>,
}

/// One volume a run replicates: its volid and size in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RepVolume {
    volid: String,
    size: u64,
}

fn size_of(value: &str) -> u64 {
    value
        .split(',')
        .find_map(|p| p.strip_prefix("size="))
        .and_then(crate::model::size::parse_size)
        .unwrap_or(0)
}

/// The owner VMID of a volume name (`vm-100-disk-0`, `base-100-disk-0`,
/// `subvol-100-disk-0`).
fn owner_of(volname: &str) -> Option<u32> {
    let rest = volname
        .strip_prefix("vm-")
        .or_else(|| volname.strip_prefix("base-"))
        .or_else(|| volname.strip_prefix("subvol-"))
        .or_else(|| volname.strip_prefix("basevol-"))?;
    rest.split('-').next()?.parse().ok()
}

/// ZFS sizes as `zfs send -nv` prints them.
fn zfs_size(bytes: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let b = bytes as f64;
    if bytes >= 1 << 30 {
        format!("{:.2}G", b / f64::from(1u32 << 30))
    } else if bytes >= 1 << 20 {
        format!("{:.2}M", b / f64::from(1u32 << 20))
    } else {
        format!("{bytes}B")
    }
}

/// `YYYY-MM-DD hh:mm:ss` as the job log stamps its lines.
fn log_time(t: i64) -> String {
    let (y, mo, d, h, mi, s, _) = crate::clock::civil(t);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}")
}

/// The `ssh` command line PVE runs on the target (`ssh_info_to_command`).
fn ssh_cmd(target: &str, ip: &str) -> String {
    format!(
        "/usr/bin/ssh -e none -o 'BatchMode=yes' -o 'HostKeyAlias={target}' -o \
         'UserKnownHostsFile=/etc/pve/nodes/{target}/ssh_known_hosts' -o \
         'GlobalKnownHostsFile=none' root@{ip}"
    )
}

/// The areas a replication reads and changes: `replication.cfg` with the
/// jobs' state and logs, the guests and the storages it copies from, and
/// the members. Built by
/// [`Cluster::replication_ops`](crate::model::cluster::Cluster::replication_ops).
pub struct ReplicationOps<'a> {
    /// The jobs, their state and logs.
    pub(in crate::model) replication: &'a mut super::Replication,
    /// The guests.
    pub(in crate::model) guests: &'a crate::model::guests::Guests,
    /// The storages.
    pub(in crate::model) storage: &'a crate::model::storage::Storages,
    /// The members.
    pub(in crate::model) nodes: &'a crate::model::nodes::Nodes,
}

/// What the replication answers read: the jobs with their state and
/// logs, the guests, the storages and the members. Built by
/// [`Cluster::replication_reader`](crate::model::cluster::Cluster::replication_reader).
#[derive(Clone, Copy)]
pub struct ReplicationReader<'a> {
    /// The jobs, their state and logs.
    pub(in crate::model) replication: &'a super::Replication,
    /// The guests.
    pub(in crate::model) guests: &'a crate::model::guests::Guests,
    /// The storages.
    pub(in crate::model) storage: &'a crate::model::storage::Storages,
    /// The members.
    pub(in crate::model) nodes: &'a crate::model::nodes::Nodes,
}

impl<'a> ReplicationReader<'a> {
    /// A guest as replication sees it.
    pub fn replication_guest(self, vmid: u32) -> Option<GuestInfo> {
        if let Some(vm) = self.guests.get(&vmid) {
            let running = if vm.running() { 10_000 + vmid } else { 0 };
            let agent = vm
                .config
                .get("agent")
                .is_some_and(|a| a.split(',').any(|p| p == "1" || p == "enabled=1"));
            let mut volumes: Vec<(String, String)> = vm
                .config
                .iter()
                .filter(|(k, _)| is_drive_key(k) || k.starts_with("unused"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            volumes.sort();
            return Some(GuestInfo {
                node: vm.node.clone(),
                vmtype: "qemu",
                running,
                freeze: running > 0 && agent,
                volumes,
            });
        }
        let ct = self.guests.ct_by_id(vmid)?;
        let volumes = ct
            .config()
            .iter()
            .filter(|(k, _)| *k == "rootfs" || k.starts_with("mp") || k.starts_with("unused"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Some(GuestInfo {
            node: ct.node().to_string(),
            vmtype: "lxc",
            running: u32::from(ct.running()),
            freeze: false,
            volumes,
        })
    }

    /// `get_replicatable_volumes` (not for cleanup): the local volumes
    /// of images the guest owns, each on a storage with the `replicate`
    /// feature (ZFS pools), sorted by volid.
    fn replicatable_volumes(self, vmid: u32, g: &GuestInfo) -> Result<Vec<RepVolume>> {
        let mut out = Vec::new();
        for (key, value) in &g.volumes {
            let cdrom = value.split(',').any(|p| p == "media=cdrom");
            if cdrom {
                continue;
            }
            let replicate = !value.split(',').any(|p| p == "replicate=0");
            let file = if g.vmtype == "qemu" || key.starts_with("unused") {
                drive_file(value)
            } else {
                value.split(',').next().unwrap_or_default()
            };
            if g.vmtype == "lxc" && file.starts_with('/') {
                if !replicate {
                    continue;
                }
                return Err(Error::failed("unable to replicate mountpoint type 'bind'"));
            }
            if g.vmtype == "qemu" {
                if !replicate {
                    continue;
                }
                if file.starts_with('/') {
                    return Err(Error::failed(format!(
                        "unable to replicate local file/device '{file}'"
                    )));
                }
            }
            let Some((storeid, volname)) = file.split_once(':') else {
                continue;
            };
            let Some(scfg) = self.storage.cfg().iter().find(|s| s.storage == storeid) else {
                return Err(Error::failed(format!("storage '{storeid}' does not exist")));
            };
            if scfg.shared {
                continue;
            }
            let name = volname.rsplit('/').next().unwrap_or(volname);
            if owner_of(name) != Some(vmid) {
                continue;
            }
            if volname.starts_with("iso/") || volname.starts_with("vztmpl/") {
                return Err(Error::failed(format!(
                    "unable to replicate volume '{file}', type 'iso'"
                )));
            }
            if g.vmtype == "lxc" && !replicate {
                continue;
            }
            if scfg.kind != "zfspool" {
                return Err(Error::failed(format!(
                    "missing replicate feature on volume '{file}'"
                )));
            }
            out.push(RepVolume {
                volid: file.to_string(),
                size: size_of(value),
            });
        }
        out.sort_by(|a, b| a.volid.cmp(&b.volid));
        out.dedup_by(|a, b| a.volid == b.volid);
        Ok(out)
    }

    fn node_online(self, name: &str) -> bool {
        self.nodes
            .get(name)
            .is_some_and(|n| n.status == NodeStatus::Online)
    }

    /// `job_status(1)` on `node`: the jobs of the guests on it, with
    /// their guest type and next sync (jobs whose target is the node
    /// itself are left out unless marked for removal).
    fn node_jobs(self, node: &str) -> Vec<(String, Job, &'static str, i64)> {
        let mut out = Vec::new();
        for (id, job) in self.replication.jobs() {
            let Some(g) = self.replication_guest(job.guest()) else {
                continue;
            };
            if g.node != node {
                continue;
            }
            if job.remove_job().is_none() && job.target() == node {
                continue;
            }
            let next = self
                .replication
                .next_sync(job, self.node_online(job.target()));
            out.push((id.clone(), job.clone(), g.vmtype, next));
        }
        out
    }

    /// `GET /nodes/{node}/replication`: the node's jobs the caller may
    /// see (`visible` on the guest), optionally of one guest.
    pub fn replication_status(
        self,
        node: &str,
        guest: Option<u32>,
        visible: impl Fn(u32) -> bool,
    ) -> Vec<StatusLine> {
        self.node_jobs(node)
            .into_iter()
            .filter(|(_, j, _, _)| guest.is_none_or(|g| g == j.guest()))
            .filter(|(_, j, _, _)| visible(j.guest()))
            .map(|(id, j, t, next)| self.replication.status_line(id, j, t, next))
            .collect()
    }

    /// `GET /nodes/{node}/replication/{id}/status`: the job's line and
    /// its guest (`job.guest()`, for the caller's permission check).
    ///
    /// # Errors
    /// `no such replication job 'x'` for a job that is not the node's.
    pub fn replication_job_status(self, node: &str, id: &str) -> Result<StatusLine> {
        self.node_jobs(node)
            .into_iter()
            .find(|(i, ..)| i == id)
            .map(|(id, j, t, next)| self.replication.status_line(id, j, t, next))
            .ok_or_else(|| Error::not_found(format!("no such replication job '{id}'")))
    }

    /// `GET /nodes/{node}/replication/{id}/log` as `dump_logfile` reads
    /// the node's log of the job: the lines `(n, t)` and the line count
    /// (`limit` 0 reads to the end).
    ///
    /// # Errors
    /// `no such replication job 'x'`.
    pub fn replication_log(
        self,
        node: &str,
        id: &str,
        start: usize,
        limit: usize,
    ) -> Result<(Vec<(usize, &'a str)>, usize)> {
        if self.replication.job(id).is_none() {
            return Err(Error::not_found(format!("no such replication job '{id}'")));
        }
        let Some(lines) = self.replication.log(node, id) else {
            return Ok((
                vec![(1, "unable to open file - No such file or directory")],
                1,
            ));
        };
        let take = if limit == 0 { usize::MAX } else { limit };
        let items = lines
            .iter()
            .enumerate()
            .skip(start)
            .take(take)
            .map(|(i, t)| (i + 1, t.as_str()))
            .collect();
        Ok((items, lines.len()))
    }
}

impl ReplicationOps<'_> {
    /// The same areas, to read.
    fn reader(&self) -> ReplicationReader<'_> {
        ReplicationReader {
            replication: self.replication,
            guests: self.guests,
            storage: self.storage,
            nodes: self.nodes,
        }
    }

    /// `POST /cluster/replication`: the checks of PVE's `create` in its
    /// order, then the job is written with its `source`.
    ///
    /// # Errors
    /// `Guest '100' does not exist.`, `Target 'x' does not exist.`,
    /// `Source 'x' does not match current node of guest '100' (pve)`,
    /// `Source and target must not be identical`, the volume checks
    /// (`missing replicate feature on volume '...'`, `No replicatable
    /// volumes found`), and those of the file.
    pub fn create_replication_job(&mut self, id: &str, up: &JobUpdate, now: i64) -> Result<()> {
        let (guest, _) = super::parse_job_id(id)?;
        let Some(info) = self.reader().replication_guest(guest) else {
            return Err(Error::not_found(format!("Guest '{guest}' does not exist.")));
        };
        let target = up.target.clone().unwrap_or_default();
        if !self.nodes.contains(&target) {
            return Err(Error::not_found(format!(
                "Target '{target}' does not exist."
            )));
        }
        if let Some(src) = &up.source
            && *src != info.node
        {
            return Err(Error::failed(format!(
                "Source '{src}' does not match current node of guest '{guest}' ({})",
                info.node
            )));
        }
        if target == info.node {
            return Err(Error::failed("Source and target must not be identical"));
        }
        if self.reader().replicatable_volumes(guest, &info)?.is_empty() {
            return Err(Error::failed("No replicatable volumes found"));
        }
        let mut up = up.clone();
        up.source = Some(info.node.clone());
        self.replication.create(id, &up, now)
    }

    /// `POST .../schedule_now`.
    ///
    /// # Errors
    /// `no such replication job 'x'`.
    pub fn replication_schedule_now(&mut self, id: &str) -> Result<()> {
        self.replication.schedule_now(id)
    }

    /// `PUT /cluster/replication/{id}`.
    ///
    /// # Errors
    /// As [`super::Replication::update`].
    pub fn update_replication_job(&mut self, id: &str, up: &JobUpdate) -> Result<()> {
        self.replication.update(id, up)
    }

    /// `DELETE /cluster/replication/{id}`.
    ///
    /// # Errors
    /// As [`super::Replication::delete`].
    pub fn delete_replication_job(&mut self, id: &str, keep: bool, force: bool) -> Result<()> {
        self.replication.delete(id, keep, force)
    }

    /// Runs pvescheduler's replication rounds due by `now_ms`: at each
    /// minute at which a job of a guest on an online node is due, every
    /// due job once, in `get_next_job`'s order.
    pub(crate) fn run_replication(
        &mut self,
        now_ms: i64,
    ) -> Vec<crate::model::notify::events::ReplicationFailure> {
        let mut failures = Vec::new();
        let now = now_ms.div_euclid(1000);
        if self.replication.jobs().is_empty() {
            return failures;
        }
        if self.replication.tick() == 0 {
            self.replication.set_tick(now - now.rem_euclid(60) - 60);
        }
        loop {
            let due: Vec<(String, Job, i64, i64)> = self
                .nodes
                .iter()
                .filter(|n| n.status == NodeStatus::Online)
                .flat_map(|n| self.reader().node_jobs(&n.name))
                .filter(|(_, j, ..)| !j.disabled() || j.remove_job().is_some())
                .filter(|(.., next)| *next > 0)
                .map(|(id, j, _, next)| {
                    let it = self.replication.state(&j).last_iteration;
                    (id, j, next, it)
                })
                .collect();
            let minute = now - now.rem_euclid(60);
            let t = due
                .iter()
                .map(|(_, _, next, _)| *next)
                .min()
                .map(|e| e + (60 - e.rem_euclid(60)).rem_euclid(60))
                .map(|e| e.max(self.replication.tick() + 60));
            let Some(t) = t.filter(|t| *t <= now) else {
                // Every round up to now has run, with nothing due.
                self.replication
                    .set_tick(self.replication.tick().max(minute));
                return failures;
            };
            self.replication.set_tick(t);
            let mut runs: Vec<(String, Job, i64, i64)> = due
                .into_iter()
                .filter(|(_, _, next, it)| *next <= t && *it < t)
                .collect();
            runs.sort_by(|a, b| {
                a.3.cmp(&b.3)
                    .then(a.2.cmp(&b.2))
                    .then(a.1.guest().cmp(&b.1.guest()))
                    .then(a.0.cmp(&b.0))
            });
            for (id, job, ..) in runs {
                failures.extend(self.replicate_job(&id, &job, t));
            }
        }
    }

    /// One run of a job at `t` (`run_replication_nolock`): the state's
    /// start, the log, the outcome.
    fn replicate_job(
        &mut self,
        id: &str,
        job: &Job,
        t: i64,
    ) -> Option<crate::model::notify::events::ReplicationFailure> {
        let g = self.reader().replication_guest(job.guest())?;
        let mut st = self.replication.state(job);
        st.last_try = t;
        st.last_iteration = t;
        st.last_node = Some(g.node.clone());
        let mut lines = Vec::new();
        let stamp = log_time(t);
        let mut log = |msg: String| lines.push(format!("{stamp} {id}: {msg}"));
        log("start replication job".into());
        let outcome = self.replicate(id, job, &g, &mut st, t, &mut log);
        match &outcome {
            Ok(_) => log("end replication job".into()),
            Err(e) => log(format!("end replication job with error: {}", e.message())),
        }
        let duration = match &outcome {
            Ok(secs) => *secs,
            Err(_) => 0.4,
        };
        st.duration = Some(duration);
        self.replication
            .logs
            .entry(g.node.clone())
            .or_default()
            .insert(id.to_string(), lines);
        match outcome {
            Err(e) => {
                st.fail_count += 1;
                st.error = Some(e.message().trim_end().to_string());
                let failure = crate::model::notify::events::ReplicationFailure {
                    id: id.to_string(),
                    target: job.target().to_string(),
                    schedule: job.schedule().to_string(),
                    fail_count: u32::try_from(st.fail_count).unwrap_or(u32::MAX),
                    last_sync: st.last_sync,
                    error: e.message().trim_end().to_string(),
                    node: g.node.clone(),
                    at: t,
                };
                self.replication.write_state(job, Some(st));
                return Some(failure);
            }
            Ok(_) if job.remove_job().is_some() => {
                self.replication.write_state(job, None);
            }
            Ok(_) => {
                st.last_sync = t;
                st.fail_count = 0;
                st.error = None;
                self.replication.write_state(job, Some(st));
            }
        }
        None
    }

    /// `replicate`: answers how long it took, in seconds.
    fn replicate(
        &mut self,
        id: &str,
        job: &Job,
        g: &GuestInfo,
        st: &mut JobState,
        t: i64,
        log: &mut impl FnMut(String),
    ) -> Result<f64> {
        let last_sync = st.last_sync;
        // A removal looks for volumes as `cleanup` does: without refusing
        // any.
        let vols = if job.remove_job().is_some() {
            self.reader()
                .replicatable_volumes(job.guest(), g)
                .unwrap_or_default()
        } else {
            self.reader().replicatable_volumes(job.guest(), g)?
        };
        let guest_name = if g.vmtype == "qemu" { "VM" } else { "CT" };
        log(format!(
            "guest => {guest_name} {}, running => {}",
            job.guest(),
            g.running
        ));
        let names: Vec<&str> = vols.iter().map(|v| v.volid.as_str()).collect();
        log(format!("volumes => {}", names.join(",")));
        let stores: Vec<String> = st
            .storeid_list
            .iter()
            .filter(|s| self.storage.cfg().iter().any(|c| c.storage == **s))
            .cloned()
            .collect();
        st.storeid_list.clone_from(&stores);
        let target_ip = self
            .nodes
            .get(job.target())
            .map(|n| n.ip.clone())
            .unwrap_or_default();
        let unreachable = |cmd: String| {
            Error::failed(format!(
                "command '{} -- pvesr {cmd}' failed: exit code 255",
                ssh_cmd(job.target(), &target_ip)
            ))
        };
        let target_online = self.reader().node_online(job.target());
        if let Some(mode) = job.remove_job() {
            log(format!("start job removal - mode '{mode}'"));
            if mode == "full" && job.target() != g.node && !target_online {
                let mut cmd = format!("prepare-local-job {id}");
                if !stores.is_empty() {
                    cmd.push_str(&format!(" --scan {}", stores.join(",")));
                }
                cmd.push_str(" --last_sync 1 --force");
                return Err(unreachable(cmd));
            }
            // `prepare` with last_sync 1: every replication snapshot of
            // the job goes.
            if last_sync > 0 {
                for v in &vols {
                    log(format!(
                        "delete stale replication snapshot '__replicate_{id}_{last_sync}__' on {}",
                        v.volid
                    ));
                }
            }
            self.replication.jobs.remove(id);
            log("job removed".into());
            return Ok(0.3);
        }
        let scan = if stores.is_empty() {
            String::new()
        } else {
            format!(" --scan {}", stores.join(","))
        };
        if !target_online {
            return Err(unreachable(format!(
                "prepare-local-job {id}{scan} {} --last_sync {last_sync}",
                names.join(" ")
            )));
        }
        let mut stores: Vec<String> = vols
            .iter()
            .filter_map(|v| v.volid.split_once(':').map(|(s, _)| s.to_string()))
            .collect();
        stores.sort();
        stores.dedup();
        st.storeid_list = stores;
        if g.freeze {
            log("freeze guest filesystem".into());
        }
        let snap = format!("__replicate_{id}_{t}__");
        for v in &vols {
            log(format!("create snapshot '{snap}' on {}", v.volid));
        }
        if g.freeze {
            log("thaw guest filesystem".into());
        }
        let rate = job
            .rate()
            .map_or_else(|| "none".to_string(), |r| format!("{r} MByte/s"));
        log(format!("using secure transmission, rate limit: {rate}"));
        let base = (last_sync > 0).then(|| format!("__replicate_{id}_{last_sync}__"));
        let mut secs = 0.6;
        for v in &vols {
            let (storeid, volname) = v.volid.split_once(':').unwrap_or_default();
            let pool = self
                .storage
                .cfg()
                .iter()
                .find(|s| s.storage == storeid)
                .and_then(|s| s.options.get("pool").cloned())
                .unwrap_or_else(|| "rpool/data".into());
            let dataset = format!("{pool}/{volname}");
            match &base {
                Some(b) => {
                    log(format!("incremental sync '{}' ({b} => {snap})", v.volid));
                    log(format!(
                        "send from @{b} to {dataset}@{snap} estimated size is 624B"
                    ));
                    log("total estimated size is 624B".into());
                    secs += 0.7;
                }
                None => {
                    log(format!("full sync '{}' ({snap})", v.volid));
                    let est = zfs_size(v.size / 8);
                    log(format!(
                        "full send of {dataset}@{snap} estimated size is {est}"
                    ));
                    log(format!("total estimated size is {est}"));
                    #[allow(clippy::cast_precision_loss)]
                    let gib = v.size as f64 / f64::from(1u32 << 30);
                    secs += 1.0 + gib / 8.0;
                }
            }
            log(format!("successfully imported '{}'", v.volid));
        }
        if let Some(b) = &base {
            for v in &vols {
                log(format!(
                    "delete previous replication snapshot '{b}' on {}",
                    v.volid
                ));
            }
            for v in &vols {
                log(format!(
                    "(remote_finalize_local_job) delete stale replication snapshot '{b}' on {}",
                    v.volid
                ));
            }
        }
        Ok((secs * 1000.0).round() / 1000.0)
    }
}
