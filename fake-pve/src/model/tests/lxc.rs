//! LXC containers: one VMID space with VMs, create from a template,
//! config updates with pending changes, power, destroy, snapshots,
//! templates and clones, volumes, migration, the views.

use rstest::rstest;
use serde_json::json;

use super::{T0, World, cluster, lab, map, refused, root, rq};
use crate::model::lxc::power::PowerCall;
use crate::model::lxc::schema::{canonical, detect_ostype, new_disk};
use crate::model::lxc::status::ct_status;
use crate::model::lxc::{CtCloneRequest, CtCreateRequest, CtMigrateJob, CtMoveRequest, CtUpdate};
use crate::model::{Cluster, PveVersion, Worker};

const TEMPLATE: &str = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst";

/// Downloads the Debian template into `local` through the appliance index.
fn with_template(w: &mut World, node: &str) {
    let worker = crate::model::lxc::aplinfo::apl_download(
        &w.c.storage,
        node,
        "local",
        "debian-12-standard_12.7-1_amd64.tar.zst",
        w.now(),
    )
    .expect("download accepted");
    let upid = w.run(node, worker);
    assert_eq!(w.exit(&upid), "OK");
}

fn req(vmid: u32, conf: &[(&str, &str)]) -> CtCreateRequest {
    CtCreateRequest {
        vmid,
        node: "pve".into(),
        ostemplate: TEMPLATE.into(),
        storage: None,
        config: map(conf),
        unprivileged: None,
        is_root: true,
        start: None,
        pool: None,
    }
}

/// Creates a container on `pve` and runs the task; answers the exit status.
fn create(w: &mut World, vmid: u32, conf: &[(&str, &str)]) -> String {
    let worker =
        w.c.ct_ops()
            .create_ct(req(vmid, conf), &mut rq())
            .expect("create accepted");
    let upid = w.run("pve", worker);
    w.exit(&upid)
}

fn run(w: &mut World, worker: Worker) -> String {
    let upid = w.run("pve", worker);
    w.exit(&upid)
}

/// Runs the checks of `f` and the task they answer; answers its exit
/// status.
fn go(w: &mut World, f: impl FnOnce(&mut Cluster) -> crate::model::Result<Worker>) -> String {
    let worker = f(&mut w.c).expect("request accepted");
    run(w, worker)
}

fn conf(w: &World, vmid: u32, key: &str) -> Option<String> {
    w.c.guests()
        .ct_by_id(vmid)
        .and_then(|c| c.config().get(key).cloned())
}

fn ct_world() -> World {
    let mut w = lab();
    with_template(&mut w, "pve");
    let st = create(
        &mut w,
        200,
        &[
            ("rootfs", "local-lvm:8"),
            ("hostname", "web"),
            ("net0", "name=eth0,bridge=vmbr0,ip=dhcp"),
            ("password", "secret123"),
            ("memory", "1024"),
        ],
    );
    assert_eq!(st, "OK");
    w
}

fn update(set: &[(&str, &str)], delete: &[&str]) -> CtUpdate {
    CtUpdate {
        set: map(set),
        delete: delete.iter().map(|s| (*s).to_string()).collect(),
        ..CtUpdate::default()
    }
}

#[rstest]
fn create_allocates_rootfs_and_writes_pves_defaults() {
    let w = ct_world();
    assert_eq!(
        conf(&w, 200, "rootfs").as_deref(),
        Some("local-lvm:vm-200-disk-0,size=8G")
    );
    let net = conf(&w, 200, "net0").expect("net0");
    assert!(
        net.starts_with("name=eth0,bridge=vmbr0,hwaddr=BC:24:11:"),
        "{net}"
    );
    assert!(net.ends_with(",ip=dhcp,type=veth"), "{net}");
    for (k, v) in [
        ("arch", "amd64"),
        ("ostype", "debian"),
        ("hostname", "web"),
        ("memory", "1024"),
        ("swap", "512"),
        ("unprivileged", "1"),
    ] {
        assert_eq!(conf(&w, 200, k).as_deref(), Some(v), "{k}");
    }
    let ct = w.c.guests().ct_by_id(200).expect("ct");
    assert!(ct.config().get("password").is_none() && ct.lock().is_none());
    assert!(
        w.c.storage
            .volume("local-lvm:vm-200-disk-0", "pve")
            .is_some()
    );
}

#[rstest]
fn the_create_task_logs_as_pve_does() {
    let mut w = lab();
    with_template(&mut w, "pve");
    let worker =
        w.c.ct_ops()
            .create_ct(req(201, &[("rootfs", "local-lvm:2")]), &mut rq())
            .expect("accepted");
    assert_eq!(
        w.c.guests().ct_by_id(201).and_then(|c| c.lock()),
        Some("create")
    );
    let upid = w.run("pve", worker);
    let log = w.task(&upid).log.join("\n");
    assert!(
        log.contains("  Logical volume \"vm-201-disk-0\" created."),
        "{log}"
    );
    assert!(
        log.contains("Creating filesystem with 524288 4k blocks"),
        "{log}"
    );
    assert!(log.contains(
        "extracting archive '/var/lib/vz/template/cache/debian-12-standard_12.7-1_amd64.tar.zst'"
    ));
    assert!(log.contains("Detected container architecture: amd64"));
    assert!(log.contains("Creating SSH host key 'ssh_host_ed25519_key'"));
    assert_eq!(conf(&w, 201, "hostname").as_deref(), Some("CT201"));
}

#[rstest]
fn a_missing_template_fails_the_task_and_frees_the_volume() {
    let mut w = lab();
    let mut r = req(202, &[("rootfs", "local-lvm:1")]);
    r.ostemplate = "local:vztmpl/none.tar.zst".into();
    let worker = w.c.ct_ops().create_ct(r, &mut rq()).expect("accepted");
    let upid = w.run("pve", worker);
    assert_eq!(
        w.exit(&upid),
        "unable to create CT 202 - can't find file 'local:vztmpl/none.tar.zst'"
    );
    assert!(w.c.guests().ct_by_id(202).is_none());
    assert!(
        w.c.storage
            .volume("local-lvm:vm-202-disk-0", "pve")
            .is_none()
    );
}

#[rstest]
#[case(100, &[("rootfs", "local-lvm:1")], 500, "VM 100 already exists on node 'pve'")]
#[case(203, &[], 400, "storage: storage 'local' does not support container directories")]
#[case(203, &[("mp0", "local-lvm:1,mp=/data")], 500, "mount points configured, but 'rootfs' not set - aborting")]
#[case(203, &[("rootfs", "nosuch:1")], 500, "storage 'nosuch' does not exist")]
fn create_refusals(
    #[case] vmid: u32,
    #[case] c: &[(&str, &str)],
    #[case] code: u16,
    #[case] msg: &str,
) {
    let mut w = lab();
    let got = refused(w.c.ct_ops().create_ct(req(vmid, c), &mut rq()));
    assert_eq!(got, (code, msg.to_string()));
}

#[rstest]
fn one_vmid_space_for_vms_and_containers() {
    let mut w = ct_world();
    assert_eq!(
        refused(
            w.c.ct_ops()
                .create_ct(req(200, &[("rootfs", "local-lvm:1")]), &mut rq())
        )
        .1,
        "CT 200 already exists on node 'pve'"
    );
    let vm = crate::model::qemu::CreateRequest {
        vmid: 200,
        node: "pve".into(),
        ..Default::default()
    };
    assert_eq!(
        refused(w.c.vm_ops().create_vm(vm, &mut rq())).1,
        "unable to create VM 200 - CT 200 already exists on node 'pve'"
    );
    assert_eq!(
        refused(
            w.c.guests()
                .nextid(Some(200), crate::model::datacenter::NEXT_ID_DEFAULT)
        )
        .1,
        "vmid: VM 200 already exists"
    );
    assert_eq!(
        w.c.guests()
            .nextid(None, crate::model::datacenter::NEXT_ID_DEFAULT)
            .expect("free"),
        "102"
    );
}

#[rstest]
fn privileged_by_default_on_8_4() {
    let mut w = World::from_yaml_v(super::LAB, PveVersion::V8_4);
    with_template(&mut w, "pve");
    assert_eq!(create(&mut w, 210, &[("rootfs", "local-lvm:1")]), "OK");
    assert_eq!(conf(&w, 210, "unprivileged"), None);
}

#[rstest]
fn config_updates_of_a_stopped_container_apply_at_once() {
    let mut w = ct_world();
    let digest = w.c.guests.ct("pve", 200).expect("ct").digest();
    let mut u = update(
        &[("cores", "2"), ("tags", "b;a,a"), ("onboot", "yes")],
        &["swap"],
    );
    u.digest = Some(digest);
    w.c.ct_ops()
        .update_ct_config("pve", 200, &u, &mut rq())
        .expect("update");
    assert_eq!(conf(&w, 200, "cores").as_deref(), Some("2"));
    assert_eq!(conf(&w, 200, "tags").as_deref(), Some("a;b"));
    assert_eq!(conf(&w, 200, "onboot").as_deref(), Some("1"));
    assert_eq!(conf(&w, 200, "swap"), None);
    let ct = w.c.guests.ct("pve", 200).expect("ct");
    let effective = ct.effective();
    assert_eq!(effective.get("cores").map(String::as_str), Some("2"));
    assert_eq!(effective.get("memory").map(String::as_str), Some("1024"));
    assert_eq!(ct.digest().len(), 40);
    // A new mount point gets its volume.
    w.c.ct_ops()
        .update_ct_config(
            "pve",
            200,
            &update(&[("mp0", "local-lvm:2,mp=/data")], &[]),
            &mut rq(),
        )
        .expect("mp0");
    assert_eq!(
        conf(&w, 200, "mp0").as_deref(),
        Some("local-lvm:vm-200-disk-1,mp=/data,size=2G")
    );
    // Deleting it leaves the volume as unused0.
    w.c.ct_ops()
        .update_ct_config("pve", 200, &update(&[], &["mp0"]), &mut rq())
        .expect("delete mp0");
    assert_eq!(
        conf(&w, 200, "unused0").as_deref(),
        Some("local-lvm:vm-200-disk-1")
    );
}

#[rstest]
#[case(update(&[], &[]), 500, "no options specified")]
#[case(update(&[], &["memory"]), 500, "unable to delete required option 'memory'")]
#[case(update(&[], &["unprivileged"]), 500, "unable to delete read-only option: 'unprivileged'")]
#[case(update(&[("unprivileged", "0")], &[]), 500, "unable to modify read-only option: 'unprivileged'")]
#[case(update(&[], &["bogus"]), 400, "delete: unknown option 'bogus'")]
#[case(update(&[("cores", "2")], &["cores"]), 400, "delete: you can't use '-cores' and -delete cores' at the same time")]
#[case(CtUpdate { digest: Some("0".repeat(40)), ..update(&[("cores", "2")], &[]) }, 500,
    "detected modified configuration - file changed by other user? Try again.")]
fn config_update_refusals(#[case] u: CtUpdate, #[case] code: u16, #[case] msg: &str) {
    let mut w = ct_world();
    let before = w.c.guests.ct("pve", 200).expect("ct").digest();
    assert_eq!(
        refused(w.c.ct_ops().update_ct_config("pve", 200, &u, &mut rq())),
        (code, msg.to_string())
    );
    assert_eq!(w.c.guests.ct("pve", 200).expect("ct").digest(), before);
}

#[rstest]
fn a_running_container_takes_some_changes_and_keeps_others_pending() {
    let mut w = ct_world();
    let st = go(&mut w, |c| {
        c.guests
            .ct_power("pve", 200, PowerCall::Start { skiplock: false })
    });
    assert_eq!(st, "OK");
    let u = update(
        &[
            ("memory", "2048"),
            ("hostname", "web2"),
            ("nameserver", "1.1.1.1,9.9.9.9"),
        ],
        &[],
    );
    w.c.ct_ops()
        .update_ct_config("pve", 200, &u, &mut rq())
        .expect("update");
    assert_eq!(conf(&w, 200, "memory").as_deref(), Some("2048"));
    assert_eq!(conf(&w, 200, "hostname").as_deref(), Some("web2"));
    assert_eq!(conf(&w, 200, "nameserver"), None);
    let ct = w.c.guests.ct("pve", 200).expect("ct");
    assert_eq!(
        ct.pending().get("nameserver").map(String::as_str),
        Some("1.1.1.1 9.9.9.9")
    );
    // The effective config shows it; `current` does not.
    assert_eq!(
        ct.effective().get("nameserver").map(String::as_str),
        Some("1.1.1.1 9.9.9.9")
    );
    assert!(ct.config().get("nameserver").is_none());
    // A reboot applies it.
    assert_eq!(
        go(&mut w, |c| c.guests.ct_power("pve", 200, PowerCall::Reboot)),
        "OK"
    );
    assert_eq!(
        conf(&w, 200, "nameserver").as_deref(),
        Some("1.1.1.1 9.9.9.9")
    );
    assert!(
        w.c.guests()
            .ct_by_id(200)
            .is_some_and(|c| c.running() && c.pending().is_empty())
    );
}

#[rstest]
fn power_calls_check_the_state_first() {
    let mut w = ct_world();
    let p = |w: &World, call| refused(w.c.guests.ct_power("pve", 200, call)).1;
    assert_eq!(
        p(&w, PowerCall::Stop { skiplock: false }),
        "CT 200 not running"
    );
    assert_eq!(p(&w, PowerCall::Reboot), "VM 200 not running");
    assert_eq!(p(&w, PowerCall::Suspend), "CT 200 not running");
    go(&mut w, |c| {
        c.guests
            .ct_power("pve", 200, PowerCall::Start { skiplock: false })
    });
    assert_eq!(
        p(&w, PowerCall::Start { skiplock: false }),
        "CT 200 already running"
    );
    assert_eq!(p(&w, PowerCall::Resume), "CT 200 already running");
    let status = ct_status(
        w.c.guests.ct("pve", 200).expect("ct"),
        &w.c.nodes,
        &w.c.ha,
        w.c.version,
        w.now_ms + 5000,
        true,
    );
    assert_eq!(status.status, crate::model::qemu::VmStatus::Running);
    assert_eq!(status.pid, Some(20_200));
    assert_eq!(status.figures.uptime, 5);
    assert_eq!(status.maxswap, 512u64 << 20);
    assert_eq!(status.ha, Some(crate::model::ha::ServiceStatus::Unmanaged));
    let sd =
        w.c.guests
            .ct_power(
                "pve",
                200,
                PowerCall::Shutdown {
                    timeout: 60,
                    force_stop: false,
                },
            )
            .expect("shutdown");
    assert_eq!(sd.kind, "vzshutdown");
    assert_eq!(run(&mut w, sd), "OK");
    assert!(!w.c.guests().ct_by_id(200).expect("ct").running());
}

#[rstest]
fn suspend_checkpoints_and_resume_restores() {
    let mut w = ct_world();
    go(&mut w, |c| {
        c.guests
            .ct_power("pve", 200, PowerCall::Start { skiplock: false })
    });
    assert_eq!(
        go(&mut w, |c| c.guests.ct_power(
            "pve",
            200,
            PowerCall::Suspend
        )),
        "OK"
    );
    assert!(!w.c.guests().ct_by_id(200).expect("ct").running());
    assert_eq!(
        go(&mut w, |c| c.guests.ct_power("pve", 200, PowerCall::Resume)),
        "OK"
    );
    assert!(w.c.guests().ct_by_id(200).expect("ct").running());
}

#[rstest]
fn a_missing_bridge_fails_the_start() {
    let mut w = ct_world();
    w.c.ct_ops()
        .update_ct_config(
            "pve",
            200,
            &update(&[("net1", "name=eth1,bridge=vmbr9")], &[]),
            &mut rq(),
        )
        .expect("net1");
    let st = go(&mut w, |c| {
        c.guests
            .ct_power("pve", 200, PowerCall::Start { skiplock: false })
    });
    assert_eq!(st, "startup for container '200' failed");
}

#[rstest]
fn destroy_checks_protection_and_frees_the_volumes() {
    let mut w = ct_world();
    w.c.ct_ops()
        .update_ct_config("pve", 200, &update(&[("protection", "1")], &[]), &mut rq())
        .expect("protect");
    assert_eq!(
        refused(w.c.guests.destroy_ct("pve", 200, false, false, false)).1,
        "can't remove CT 200 - protection mode enabled"
    );
    w.c.ct_ops()
        .update_ct_config("pve", 200, &update(&[], &["protection"]), &mut rq())
        .expect("unprotect");
    go(&mut w, |c| {
        c.guests
            .ct_power("pve", 200, PowerCall::Start { skiplock: false })
    });
    assert_eq!(
        refused(w.c.guests.destroy_ct("pve", 200, false, false, false)).1,
        "unable to destroy CT 200 - container is running"
    );
    let st = go(&mut w, |c| {
        c.guests.destroy_ct("pve", 200, true, true, true)
    });
    assert_eq!(st, "OK");
    assert!(w.c.guests().ct_by_id(200).is_none());
    assert!(
        w.c.storage
            .volume("local-lvm:vm-200-disk-0", "pve")
            .is_none()
    );
}

#[rstest]
fn snapshots_rollback_and_delete() {
    let mut w = ct_world();
    let st = go(&mut w, |c| {
        c.snapshots()
            .snapshot_ct("pve", 200, "s1", Some("first".into()), T0)
    });
    assert_eq!(st, "OK");
    w.c.ct_ops()
        .update_ct_config("pve", 200, &update(&[("cores", "4")], &[]), &mut rq())
        .expect("cores");
    let list = w.c.guests.ct("pve", 200).expect("ct").snapshot_list();
    assert_eq!(list.snapshots[0].name, "s1");
    assert_eq!(list.snapshots[0].description, "first");
    assert_eq!(
        list.snapshots[0].vmstate, None,
        "a container has no RAM state"
    );
    assert_eq!(list.snapshots.len(), 1);
    assert_eq!(list.current.parent, Some("s1"));
    assert_eq!(
        refused(w.c.snapshots().snapshot_ct("pve", 200, "current", None, T0)).1,
        "unable to use snapshot name 'current' (reserved name)"
    );
    assert_eq!(
        go(&mut w, |c| c
            .snapshots()
            .snapshot_ct("pve", 200, "s1", None, T0)),
        "snapshot name 's1' already used"
    );
    assert_eq!(
        go(&mut w, |c| c
            .snapshots()
            .rollback_ct("pve", 200, "s1", true)),
        "OK"
    );
    assert_eq!(conf(&w, 200, "cores"), None);
    assert!(w.c.guests().ct_by_id(200).expect("ct").running());
    assert_eq!(
        go(&mut w, |c| c
            .snapshots()
            .delete_ct_snapshot("pve", 200, "s1", false)),
        "OK"
    );
    assert_eq!(conf(&w, 200, "parent"), None);
}

#[rstest]
fn template_then_linked_and_full_clones() {
    let mut w = ct_world();
    assert_eq!(go(&mut w, |c| c.ct_ops().template_ct("pve", 200)), "OK");
    assert_eq!(
        conf(&w, 200, "rootfs").as_deref(),
        Some("local-lvm:base-200-disk-0,size=8G")
    );
    let linked = CtCloneRequest {
        newid: 300,
        hostname: Some("linked".into()),
        ..Default::default()
    };
    assert_eq!(
        go(&mut w, |c| c.ct_ops().clone_ct(
            "pve",
            200,
            linked,
            &mut crate::model::Context::new(T0 * 1000, 99)
        )),
        "OK"
    );
    assert_eq!(
        conf(&w, 300, "rootfs").as_deref(),
        Some("local-lvm:vm-300-disk-0,size=8G")
    );
    assert_eq!(conf(&w, 300, "hostname").as_deref(), Some("linked"));
    assert_ne!(conf(&w, 300, "net0"), conf(&w, 200, "net0"));
    let full = CtCloneRequest {
        newid: 301,
        full: Some(true),
        storage: Some("local-lvm".into()),
        ..Default::default()
    };
    assert_eq!(
        go(&mut w, |c| c.ct_ops().clone_ct("pve", 200, full, &mut rq())),
        "OK"
    );
    assert_eq!(
        conf(&w, 301, "rootfs").as_deref(),
        Some("local-lvm:vm-301-disk-0,size=8G")
    );
    let bad = CtCloneRequest {
        newid: 302,
        full: Some(false),
        storage: Some("local-lvm".into()),
        ..Default::default()
    };
    assert_eq!(
        refused(w.c.ct_ops().clone_ct("pve", 200, bad, &mut rq())).1,
        "parameter 'storage' not allowed for linked clones"
    );
}

#[rstest]
fn a_template_neither_starts_nor_snapshots() {
    let mut w = ct_world();
    go(&mut w, |c| c.ct_ops().template_ct("pve", 200));
    let st = go(&mut w, |c| {
        c.guests
            .ct_power("pve", 200, PowerCall::Start { skiplock: false })
    });
    assert_eq!(st, "you can't start a CT if it's a template");
    let st = go(&mut w, |c| {
        c.snapshots().snapshot_ct("pve", 200, "s", None, T0)
    });
    assert_eq!(st, "you can't take a snapshot if it's a template");
    assert_eq!(
        refused(w.c.ct_ops().template_ct("pve", 200)).1,
        "you can't convert a template to a template"
    );
}

#[rstest]
fn resize_grows_and_move_volume_copies() {
    let mut w = ct_world();
    assert_eq!(
        refused(w.c.ct_ops().resize_ct("pve", 200, "rootfs", "4G", None)).1,
        "unable to shrink disk size"
    );
    assert_eq!(
        refused(w.c.ct_ops().resize_ct("pve", 200, "rootfs", "8G", None)).1,
        "disk is already at specified size"
    );
    let worker =
        w.c.ct_ops()
            .resize_ct("pve", 200, "rootfs", "+2G", None)
            .expect("resize");
    let upid = w.run("pve", worker);
    assert_eq!(w.exit(&upid), "OK");
    assert_eq!(
        conf(&w, 200, "rootfs").as_deref(),
        Some("local-lvm:vm-200-disk-0,size=10G")
    );
    let log = w.task(&upid).log.join("\n");
    assert!(
        log.contains("The filesystem on /dev/pve/vm-200-disk-0 is now 2621440 (4k) blocks long."),
        "{log}"
    );
    let mv = CtMoveRequest {
        volume: "rootfs".into(),
        storage: "tank".into(),
        ..Default::default()
    };
    let worker = w.c.ct_ops().move_ct_volume("pve", 200, mv).expect("move");
    assert_eq!(
        w.c.guests().ct_by_id(200).and_then(|c| c.lock()),
        Some("disk")
    );
    assert_eq!(run(&mut w, worker), "OK");
    assert_eq!(
        conf(&w, 200, "rootfs").as_deref(),
        Some("tank:subvol-200-disk-0,size=10G")
    );
    assert_eq!(
        conf(&w, 200, "unused0").as_deref(),
        Some("local-lvm:vm-200-disk-0")
    );
    assert_eq!(w.c.guests().ct_by_id(200).and_then(|c| c.lock()), None);
}

#[rstest]
fn offline_migration_moves_config_and_local_volumes() {
    let mut w = cluster();
    with_template(&mut w, "pve1");
    let mut r = req(400, &[("rootfs", "local-lvm:1")]);
    r.node = "pve1".into();
    let worker = w.c.ct_ops().create_ct(r, &mut rq()).expect("create");
    let upid = w.run("pve1", worker);
    assert_eq!(w.exit(&upid), "OK");
    let job = |target: &str| CtMigrateJob {
        target: target.into(),
        restart: false,
        timeout: 180,
        online: false,
        target_storage: None,
    };
    assert_eq!(
        refused(w.c.ct_ops().migrate_ct("pve1", 400, job("pve1"))).1,
        "target: target is local node."
    );
    let worker =
        w.c.ct_ops()
            .migrate_ct("pve1", 400, job("pve2"))
            .expect("migrate");
    assert_eq!(
        w.c.guests().ct_by_id(400).and_then(|c| c.lock()),
        Some("migrate")
    );
    let upid = w.run("pve1", worker);
    assert_eq!(w.exit(&upid), "OK");
    assert_eq!(w.c.guests().ct_by_id(400).map(|c| c.node()), Some("pve2"));
    assert!(
        w.c.storage
            .volume("local-lvm:vm-400-disk-0", "pve2")
            .is_some()
    );
    assert!(
        w.c.storage
            .volume("local-lvm:vm-400-disk-0", "pve1")
            .is_none()
    );
}

#[rstest]
fn resources_list_containers_beside_vms() {
    let w = ct_world();
    let res = crate::api::cluster::view::resources(&w.c.resources(), Some("vm"), w.now());
    let ct = res
        .iter()
        .find(|r| r["id"] == "lxc/200")
        .expect("container listed");
    assert_eq!(ct["type"], json!("lxc"));
    assert_eq!(ct["name"], json!("web"));
    assert_eq!(ct["maxdisk"], json!(8u64 << 30));
    assert!(res.iter().any(|r| r["id"] == "qemu/100"));
    let root = root();
    assert!(w.c.access.has_priv(&root, "/vms/200", "VM.Audit"));
}

#[rstest]
#[case("rootfs", "local-lvm:8", "local-lvm:8")]
#[case("features", "keyctl=1,nesting=1", "keyctl=1,nesting=1")]
#[case("onboot", "yes", "1")]
#[case("searchdomain", "a.example,b.example", "a.example b.example")]
#[case(
    "net0",
    "bridge=vmbr0,name=eth0,hwaddr=BC:24:11:00:00:01",
    "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:00:01,type=veth"
)]
fn canonical_forms(#[case] key: &str, #[case] value: &str, #[case] want: &str) {
    assert_eq!(
        canonical(PveVersion::V9_1, key, value, None).expect("canonical"),
        want
    );
}

#[rstest]
fn helpers() {
    assert_eq!(new_disk("local-lvm:8"), Some(("local-lvm", 8u64 << 30)));
    assert_eq!(new_disk("local-lvm:0.5"), Some(("local-lvm", 512u64 << 20)));
    assert_eq!(new_disk("local-lvm:vm-100-disk-0"), None);
    assert_eq!(
        detect_ostype("local:vztmpl/ubuntu-24.04-standard_24.04-2_amd64.tar.zst"),
        "ubuntu"
    );
    assert_eq!(
        detect_ostype("local:vztmpl/rockylinux-9-default_20240912_amd64.tar.xz"),
        "centos"
    );
    assert_eq!(detect_ostype("local:vztmpl/custom.tar.gz"), "unmanaged");
}

#[rstest]
fn interfaces_come_from_the_config_or_the_control_api() {
    let mut w = ct_world();
    assert_eq!(
        crate::api::lxc::view::interfaces(
            w.c.guests
                .ct_interfaces("pve", 200)
                .expect("stopped")
                .as_ref()
        ),
        serde_json::Value::Null
    );
    go(&mut w, |c| {
        c.guests
            .ct_power("pve", 200, PowerCall::Start { skiplock: false })
    });
    let shown = |w: &World| {
        crate::api::lxc::view::interfaces(
            w.c.guests
                .ct_interfaces("pve", 200)
                .expect("running")
                .as_ref(),
        )
    };
    let made = shown(&w);
    assert_eq!(made[1]["name"], json!("eth0"));
    assert_eq!(made[1]["inet"], json!("10.0.0.202/24"));
    assert_eq!(made[1]["hwaddr"], made[1]["hardware-address"]);
    w.c.guests.agent_mut(200).interfaces = Some(json!([{
        "name": "eth0",
        "hardware-address": "bc:24:11:00:00:09",
        "ip-addresses": [{ "ip-address": "192.0.2.7", "ip-address-type": "ipv4", "prefix": 24 }],
    }]));
    let set = shown(&w);
    assert_eq!(set[0]["inet"], json!("192.0.2.7/24"));
    assert_eq!(set[0]["ip-addresses"][0]["ip-address-type"], json!("inet"));
    // Destroying the container forgets what was set for it.
    go(&mut w, |c| {
        c.guests.destroy_ct("pve", 200, false, false, true)
    });
    assert!(w.c.guests().agent(200).is_none());
}

#[rstest]
fn scenarios_declare_containers() {
    let yaml = r#"
nodes: [{ name: pve }]
storages:
  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve }
vms:
  - { vmid: 100, name: vm }
containers:
  - vmid: 200
    hostname: seeded
    status: running
    config:
      rootfs: local-lvm:vm-200-disk-0,size=4G
      memory: 1024
      net0: name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:02:00,ip=dhcp,type=veth
"#;
    let w = World::from_yaml(yaml);
    let ct = w.c.guests().ct_by_id(200).expect("seeded");
    assert!(ct.running());
    assert_eq!(
        ct.config().get("hostname").map(String::as_str),
        Some("seeded")
    );
    let vol =
        w.c.storage
            .volume("local-lvm:vm-200-disk-0", "pve")
            .expect("volume made");
    assert_eq!((vol.size, vol.vmid), (4u64 << 30, 200));
    let status = ct_status(ct, &w.c.nodes, &w.c.ha, w.c.version, w.now_ms, false);
    assert_eq!(status.figures.uptime, 3600);
    // A container may not take a VM's VMID.
    let dup = yaml.replace("vmid: 200", "vmid: 100");
    let e = crate::model::scenario::Scenario::parse(&dup, "dup.yaml")
        .and_then(|s| s.build(PveVersion::V9_1, "pw", T0).map(|_| ()))
        .expect_err("refused");
    assert!(e.to_string().contains("duplicate vmid 100"), "{e}");
}

#[rstest]
fn each_option_needs_its_own_privilege() {
    let mut w = ct_world();
    let ci = super::user("ci@pve");
    let old = w.c.guests.ct("pve", 200).expect("ct").config().clone();
    let check = |w: &World, set: &[(&str, &str)], delete: &[&str]| {
        let delete: Vec<String> = delete.iter().map(|s| (*s).to_string()).collect();
        w.c.perms()
            .check_ct_modify_config_perm(&ci, 200, Some(&old), &map(set), &delete, true)
    };
    assert_eq!(
        refused(check(&w, &[("cores", "2")], &[])),
        (
            403,
            "Permission check failed (/vms/200, VM.Config.CPU)".into()
        )
    );
    assert_eq!(
        refused(check(&w, &[("features", "keyctl=1")], &[])).1,
        "Permission check failed (changing feature flags (except nesting) is only allowed for root@pam)"
    );
    assert_eq!(
        refused(check(&w, &[("mp0", "/srv,mp=/srv")], &[])).1,
        "Permission check failed (/vms/200, VM.Config.Disk)"
    );
    w.c.access.grant("/vms/200", "PVEVMAdmin", "ci@pve");
    assert!(check(&w, &[("cores", "2"), ("memory", "1024")], &["swap"]).is_ok());
    assert_eq!(
        refused(check(&w, &[("mp0", "/srv,mp=/srv")], &[])).1,
        "Permission check failed (mount point type bind is only allowed for root@pam)"
    );
    assert!(
        w.c.perms()
            .check_ct_modify_config_perm(
                &root(),
                200,
                Some(&old),
                &map(&[("hookscript", "local:snippets/h.pl")]),
                &[],
                true
            )
            .is_ok()
    );
}

#[rstest]
fn a_volume_moves_to_another_container() {
    use crate::model::lxc::CtReassignRequest;
    let mut w = ct_world();
    assert_eq!(create(&mut w, 201, &[("rootfs", "local-lvm:2")]), "OK");
    w.c.ct_ops()
        .update_ct_config(
            "pve",
            200,
            &update(&[("mp0", "local-lvm:1,mp=/data")], &[]),
            &mut rq(),
        )
        .expect("mp0");
    let req = |volume: &str, target: u32, key: Option<&str>| CtReassignRequest {
        volume: volume.into(),
        target_vmid: target,
        target_volume: key.map(str::to_string),
        ..Default::default()
    };
    for (r, msg) in [
        (req("rootfs", 201, None), "Cannot move to/from 'rootfs'"),
        (
            req("mp0", 201, Some("rootfs")),
            "Cannot move to/from 'rootfs'",
        ),
        (req("mp0", 555, None), "could not find CT 555"),
        (
            req("mp0", 100, None),
            "Configuration file 'nodes/pve/lxc/100.conf' does not exist",
        ),
        (
            req("mp7", 201, None),
            "volume 'mp7' for container '200' does not exist",
        ),
        (
            req("unused0", 201, Some("mp1")),
            "Moving an unused volume to a used one is not possible",
        ),
    ] {
        assert_eq!(
            refused(w.c.ct_ops().reassign_ct_volume("pve", 200, r)).1,
            msg
        );
    }
    let worker =
        w.c.ct_ops()
            .reassign_ct_volume("pve", 200, req("mp0", 201, Some("mp3")))
            .expect("accepted");
    assert_eq!(worker.kind, "move_volume");
    assert_eq!(worker.id, "200-mp0>201-mp3");
    assert_eq!(run(&mut w, worker), "OK");
    assert_eq!(conf(&w, 200, "mp0"), None);
    assert_eq!(
        conf(&w, 201, "mp3").as_deref(),
        Some("local-lvm:vm-201-disk-1,mp=/data,size=1G")
    );
    assert!(
        w.c.storage
            .volume("local-lvm:vm-201-disk-1", "pve")
            .is_some()
    );
    assert!(
        w.c.storage
            .volume("local-lvm:vm-200-disk-1", "pve")
            .is_none()
    );
    // The key is taken now; a running source keeps its mount points.
    assert_eq!(
        refused(
            w.c.ct_ops()
                .reassign_ct_volume("pve", 201, req("mp3", 201, None))
        )
        .1,
        "Target volume key 'mp3' is already in use for container '201'"
    );
    assert_eq!(
        go(&mut w, |c| c.guests.ct_power(
            "pve",
            201,
            PowerCall::Start { skiplock: false }
        )),
        "OK"
    );
    assert_eq!(
        refused(
            w.c.ct_ops()
                .reassign_ct_volume("pve", 201, req("mp3", 200, None))
        )
        .1,
        "Cannot move in-use volume while the source CT is running - detach or shutdown first"
    );
}
