//! QEMU guests: create, config updates, locks, power, templates,
//! snapshots, clone, resize, move disk, migrate, cloud-init, feature and
//! the status views.

use rstest::rstest;
use serde_json::json;

use super::{T0, World, cluster, fresh, lab, map, qm_worker, refusal, refused, root, rq, user};
use crate::model::qemu::{
    CloneRequest, ConfigUpdate, CreateRequest, MigrateRequest, MoveJob, QemuOp, ReassignJob,
    ResizeJob, canonical, default_boot, drive_file, is_drive_key, option_exists,
};
use crate::model::{Error, PveVersion};

mod clone;
mod cloudinit;
mod config;
mod create;
mod disks;
mod monitor;
mod power;
mod snapshot;
mod status;

/// Starts a create of `vmid` on `pve` and runs it to its end.
fn create(w: &mut World, vmid: u32, conf: &[(&str, &str)], storage: Option<&str>) -> String {
    let worker =
        w.c.vm_ops()
            .create_vm(
                CreateRequest {
                    vmid,
                    node: "pve".into(),
                    config: map(conf),
                    storage: storage.map(str::to_string),
                    start: None,
                    pool: None,
                },
                &mut rq(),
            )
            .expect("create accepted");
    let upid = w.run("pve", worker);
    w.exit(&upid)
}

fn update(set: &[(&str, &str)], delete: &[&str]) -> ConfigUpdate {
    ConfigUpdate {
        set: map(set),
        delete: delete.iter().map(|s| (*s).to_string()).collect(),
        log: "update VM".into(),
        ..ConfigUpdate::default()
    }
}

fn set_lock(w: &mut World, vmid: u32, lock: &str) {
    w.c.guests
        .get_mut(&vmid)
        .expect("vm")
        .config
        .insert("lock".into(), lock.into());
}

fn clone_req(vmid: u32, newid: u32) -> CloneRequest {
    CloneRequest {
        node: "pve".into(),
        vmid,
        newid,
        who: Some(root()),
        ..CloneRequest::default()
    }
}

fn mv(disk: &str, storage: &str) -> MoveJob {
    MoveJob {
        disk: disk.into(),
        storage: storage.into(),
        format: None,
        delete: false,
        digest: None,
        bwlimit: None,
        who: None,
    }
}

fn migrate(vmid: u32, target: &str, online: bool) -> MigrateRequest {
    MigrateRequest {
        node: "pve1".into(),
        vmid,
        target: target.into(),
        online,
        with_local_disks: false,
        targetstorage: None,
        who: root(),
        options: Default::default(),
        now: super::T0,
    }
}

/// `GET .../feature` of VM `vmid` on `node`.
fn feature(
    c: &crate::model::Cluster,
    node: &str,
    vmid: u32,
    feature: &str,
    snapname: Option<&str>,
) -> crate::model::Result<crate::model::qemu::FeatureAnswer> {
    let vm = c.guests.vm(node, vmid)?;
    crate::model::qemu::vm_feature(vm, &c.nodes, &c.storage, c.version, feature, snapname)
}
