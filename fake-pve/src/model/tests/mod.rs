//! Unit tests of the model's rules, without a server: worlds are built
//! from scenario fixtures at a fixed time, requests are made through the
//! model's public functions, refusals are compared as the wire answers
//! them (status and message).

use std::collections::BTreeMap;

use rstest::fixture;

use super::access::AuthId;
use super::qemu::QemuOp;
use super::scenario::Scenario;
use super::{Cluster, Error, PveVersion, Task, TaskEffect, Worker};

mod access;
mod agent;
mod backup;
mod clusterlog;
mod corosync;
mod datacenter;
mod faults;
mod firewall;
mod guest_perm;
mod ha;
mod join;
mod lxc;
mod metrics;
mod mtunnel;
mod network;
mod node_services;
mod nodes;
mod oci;
mod overview;
mod pbs;
mod pbs_keys;
mod pools;
mod power;
mod qemu;
mod replication;
mod scenario;
mod sdn;
mod sdn_controllers;
mod sdn_fabric_bgp;
mod sdn_fabric_status;
mod sdn_fabrics;
mod sdn_wireguard;
mod storage;
mod tasks;

/// The fixed start of every world (2026-09-21, epoch seconds).
pub const T0: i64 = 1_790_000_000;
/// The root password of every world.
pub const ROOT_PW: &str = "rootpw";

/// A refusal as the wire answers it: the HTTP status and the message
/// (for a 400, each `param: message` on its own line, sorted by param).
pub fn refusal(e: &Error) -> (u16, String) {
    let code = crate::api::status_of(e);
    match e.errors() {
        Some(map) => (
            code,
            map.iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        None => (code, e.message().to_string()),
    }
}

/// A request context at T0 with a fixed seed, for the model calls that
/// draw at random.
pub fn rq() -> crate::model::Context {
    crate::model::Context::new(T0 * 1000, 7)
}

/// The refusal of a result that must be one.
#[track_caller]
/// Typed answers as the JSON rows the API answers with.
pub fn rows<T: serde::Serialize>(items: &[T]) -> Vec<serde_json::Value> {
    items
        .iter()
        .map(|i| serde_json::to_value(i).expect("serializable"))
        .collect()
}

pub fn refused<T: std::fmt::Debug>(r: Result<T, Error>) -> (u16, String) {
    match r {
        Ok(v) => panic!("expected a refusal, got {v:?}"),
        Err(e) => refusal(&e),
    }
}

/// A key/value map from pairs.
pub fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect()
}

/// `root@pam` as an auth id.
pub fn root() -> AuthId {
    AuthId::User("root@pam".into())
}

/// A user as an auth id.
pub fn user(id: &str) -> AuthId {
    AuthId::parse(id).expect("valid auth id")
}

/// A cluster and its clock.
pub struct World {
    /// The cluster.
    pub c: Cluster,
    /// The clock, epoch milliseconds.
    pub now_ms: i64,
}

impl World {
    /// Builds `yaml` for PVE 9.1 at [`T0`].
    pub fn from_yaml(yaml: &str) -> Self {
        Self::from_yaml_v(yaml, PveVersion::V9_1)
    }

    /// Builds `yaml` for `version` at [`T0`].
    pub fn from_yaml_v(yaml: &str, version: PveVersion) -> Self {
        let s = Scenario::parse(yaml, "test.yaml").expect("scenario parses");
        let c = s.build(version, ROOT_PW, T0).expect("scenario builds");
        Self {
            c,
            now_ms: T0 * 1000,
        }
    }

    /// The clock in seconds.
    pub fn now(&self) -> i64 {
        self.now_ms.div_euclid(1000)
    }

    /// Lets `ms` pass, ending the tasks due.
    pub fn tick(&mut self, ms: i64) {
        self.now_ms += ms;
        self.c.advance(self.now_ms);
    }

    /// Runs a worker as root@pam to its end at once; answers the UPID.
    pub fn run(&mut self, node: &str, worker: Worker) -> String {
        self.run_as(node, worker, "root@pam", 0)
    }

    /// Starts a worker as `who`, lasting `ms`.
    pub fn run_as(&mut self, node: &str, worker: Worker, who: &str, ms: u64) -> String {
        self.c.start_task(node, worker, who, self.now_ms, ms)
    }

    /// Runs a VM operation as root@pam to its end; answers the task's
    /// exit status.
    pub fn qm(&mut self, kind: &str, vmid: u32, op: QemuOp) -> String {
        let node = self
            .c
            .guests
            .get(&vmid)
            .map_or("pve".into(), |v| v.node.clone());
        let upid = self.run(&node, qm_worker(kind, vmid, op));
        self.exit(&upid)
    }

    /// A task by UPID.
    pub fn task(&self, upid: &str) -> &Task {
        self.c.tasks.get(upid).expect("task exists")
    }

    /// The exit status of a task (`running` while it runs).
    pub fn exit(&self, upid: &str) -> String {
        self.task(upid)
            .exitstatus()
            .unwrap_or("running")
            .to_string()
    }

    /// The current config value of a VM's key.
    /// VM `vmid`'s status as the API answers it now (`full`: `?full=1`,
    /// `current`: `status/current`).
    pub fn vm_status(&self, vmid: u32, full: bool, current: bool) -> serde_json::Value {
        crate::api::qemu::status::vm_status(
            &self.c.vm_status_reader(),
            &self.c.guests[&vmid],
            self.now_ms,
            full,
            current,
        )
    }

    pub fn conf(&self, vmid: u32, key: &str) -> Option<String> {
        self.c
            .guests
            .get(&vmid)
            .and_then(|v| v.config.get(key).cloned())
    }
}

/// A worker for a VM task.
pub fn qm_worker(kind: &str, vmid: u32, op: QemuOp) -> Worker {
    Worker::new(kind, &vmid.to_string()).effect(TaskEffect::Qemu { vmid, op })
}

/// A fresh single-node install (`pve`, storages `local` and `local-lvm`).
#[fixture]
pub fn fresh() -> World {
    let c = Scenario::default_single_node()
        .build(PveVersion::V9_1, ROOT_PW, T0)
        .expect("default builds");
    World {
        c,
        now_ms: T0 * 1000,
    }
}

/// One node `pve` with three guests: 100 stopped, 101 running with the
/// agent on, 900 a template; and a `ci@pve` user.
pub const LAB: &str = r#"
nodes:
  - name: pve
    cpus: 16
    memory: 64G
    bridges: [vmbr0, vmbr1]
storages:
  - { id: local, type: dir, path: /var/lib/vz, content: [iso, vztmpl, backup, snippets, images] }
  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve, size: 200G }
  - { id: tank, type: zfspool, pool: tank, size: 500G }
users:
  - userid: ci@pve
    password: secret
    tokens: [{ tokenid: runner, secret: s3cret, privsep: true }]
vms:
  - vmid: 100
    name: web
    config:
      memory: 2048
      cores: 2
      scsi0: local-lvm:vm-100-disk-0,size=8G
      ide2: local:iso/debian.iso,media=cdrom
      net0: virtio=BC:24:11:00:01:00,bridge=vmbr0
      boot: order=scsi0;ide2;net0
  - vmid: 101
    name: db
    status: running
    config:
      memory: 4096
      agent: 1
      scsi0: local-lvm:vm-101-disk-0,size=16G
      net0: virtio=BC:24:11:00:01:01,bridge=vmbr0
  - vmid: 900
    name: tmpl
    config:
      template: 1
      memory: 1024
      scsi0: local-lvm:base-900-disk-0,size=4G
      net0: virtio=BC:24:11:00:09:00,bridge=vmbr0
"#;

/// The [`LAB`] world.
#[fixture]
pub fn lab() -> World {
    World::from_yaml(LAB)
}

/// A three-node cluster `lab` (pve1, pve2, pve3 offline) with a shared
/// NFS storage and local storages; VM 100 on pve1 with a local disk,
/// VM 200 on pve1 with a shared disk, running.
pub const CLUSTER: &str = r#"
cluster: lab
nodes:
  - name: pve1
  - name: pve2
  - name: pve3
    status: offline
storages:
  - { id: local, type: dir, path: /var/lib/vz }
  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve }
  - { id: nfs, type: nfs, server: 192.0.2.99, export: /export, path: /mnt/pve/nfs }
vms:
  - vmid: 100
    node: pve1
    config:
      scsi0: local-lvm:vm-100-disk-0,size=8G
      net0: virtio=BC:24:11:00:01:00,bridge=vmbr0
  - vmid: 200
    node: pve1
    status: running
    config:
      scsi0: nfs:200/vm-200-disk-0.qcow2,size=8G
      net0: virtio=BC:24:11:00:02:00,bridge=vmbr0
"#;

/// The [`CLUSTER`] world.
#[fixture]
pub fn cluster() -> World {
    World::from_yaml(CLUSTER)
}
