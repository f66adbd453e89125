//! Power: start, stop, shutdown, pause, hibernate, reboot; destroy and templates.

use super::*;

// ---------------------------------------------------------------------
// Power

#[rstest]
fn start_applies_pending_and_records_the_start(mut lab: World) {
    lab.c
        .vm_ops()
        .update_config(
            "pve",
            100,
            &update(&[("cores", "4")], &[]),
            lab.now_ms / 1000,
        )
        .expect("applied");
    assert_eq!(
        lab.qm("qmstart", 100, QemuOp::Start { skiplock: false }),
        "OK"
    );
    let vm = &lab.c.guests[&100];
    assert!(vm.running());
    assert_eq!(vm.started_ms, Some(lab.now_ms));
}

#[rstest]
#[case(100, "lock", "VM is locked (backup)")]
#[case(101, "", "VM 101 already running")]
#[case(900, "", "you can't start a vm if it's a template")]
fn start_refusals_end_the_task(
    mut lab: World,
    #[case] vmid: u32,
    #[case] lock: &str,
    #[case] msg: &str,
) {
    if !lock.is_empty() {
        set_lock(&mut lab, vmid, "backup");
    }
    assert_eq!(
        lab.qm("qmstart", vmid, QemuOp::Start { skiplock: false }),
        msg
    );
}

#[rstest]
fn start_with_a_missing_bridge_fails_in_the_task(mut lab: World) {
    lab.c.guests.get_mut(&100).expect("vm").config.insert(
        "net1".into(),
        "virtio=BC:24:11:00:01:09,bridge=vmbr9".into(),
    );
    assert_eq!(
        lab.qm("qmstart", 100, QemuOp::Start { skiplock: false }),
        "bridge 'vmbr9' does not exist"
    );
    assert!(!lab.c.guests[&100].running());
}

#[rstest]
fn stop_of_a_stopped_vm_is_ok(mut lab: World) {
    assert_eq!(
        lab.qm("qmstop", 100, QemuOp::Stop { skiplock: false }),
        "OK"
    );
    assert_eq!(
        lab.qm("qmstop", 101, QemuOp::Stop { skiplock: false }),
        "OK"
    );
    assert!(!lab.c.guests[&101].running());
}

#[rstest]
fn shutdown_without_acpi_needs_force_stop(mut lab: World) {
    set_lock(&mut lab, 101, "x");
    lab.c
        .guests
        .get_mut(&101)
        .expect("vm")
        .config
        .remove("lock");
    lab.c
        .guests
        .get_mut(&101)
        .expect("vm")
        .config
        .insert("acpi".into(), "0".into());
    let op = |force_stop| QemuOp::Shutdown {
        force_stop,
        timeout: 60,
        hard: false,
    };
    assert_eq!(
        lab.qm("qmshutdown", 101, op(false)),
        "VM quit/powerdown failed - got timeout"
    );
    assert!(lab.c.guests[&101].running());
    assert_eq!(lab.qm("qmshutdown", 101, op(true)), "OK");
    assert!(!lab.c.guests[&101].running());
}

#[rstest]
#[case("qmreboot", QemuOp::Reboot)]
#[case("qmreset", QemuOp::Reset { skiplock: false })]
#[case("qmresume", QemuOp::Resume { skiplock: false })]
#[case("qmpause", QemuOp::Suspend { skiplock: false, todisk: None })]
fn these_need_a_running_vm(mut lab: World, #[case] kind: &str, #[case] op: QemuOp) {
    assert_eq!(lab.qm(kind, 100, op), "VM 100 not running");
}

#[rstest]
fn pause_and_resume(mut lab: World) {
    let pause = QemuOp::Suspend {
        skiplock: false,
        todisk: None,
    };
    assert_eq!(lab.qm("qmpause", 101, pause), "OK");
    assert!(lab.c.guests[&101].paused());
    let st = lab.vm_status(101, true, false);
    assert_eq!(
        (st["status"].clone(), st["qmpstatus"].clone()),
        (json!("running"), json!("paused"))
    );
    assert_eq!(
        lab.qm("qmresume", 101, QemuOp::Resume { skiplock: false }),
        "OK"
    );
    assert!(!lab.c.guests[&101].paused());
}

#[rstest]
fn hibernate_writes_a_state_volume_and_resume_starts_from_it(mut lab: World) {
    let op = QemuOp::Suspend {
        skiplock: false,
        todisk: Some("local-lvm".into()),
    };
    assert_eq!(lab.qm("qmsuspend", 101, op), "OK");
    let vm = &lab.c.guests[&101];
    assert!(!vm.running());
    assert_eq!(vm.lock(), Some("suspended"));
    let state = vm.config.get("vmstate").cloned().expect("vmstate");
    assert_eq!(state, "local-lvm:vm-101-state-suspend-2026-09-21");
    assert!(lab.c.storage.volume(&state, "pve").is_some());
    assert_eq!(
        lab.qm("qmresume", 101, QemuOp::Resume { skiplock: false }),
        "OK"
    );
    let vm = &lab.c.guests[&101];
    assert!(vm.running());
    assert_eq!(vm.lock(), None);
    assert!(lab.c.storage.volume(&state, "pve").is_none(), "state freed");
}

#[rstest]
fn reboot_stops_and_starts_again(mut lab: World) {
    assert_eq!(lab.qm("qmreboot", 101, QemuOp::Reboot), "OK");
    let last = lab.c.tasks.iter().last().expect("task");
    assert_eq!(last.upid.kind, "qmstart");
    lab.tick(1);
    assert!(lab.c.guests[&101].running());
}

#[rstest]
#[case(101, false, "VM 101 is running - destroy failed")]
fn destroy_refusals(mut lab: World, #[case] vmid: u32, #[case] _p: bool, #[case] msg: &str) {
    let op = QemuOp::Destroy {
        skiplock: false,
        purge: false,
        unreferenced: false,
    };
    assert_eq!(lab.qm("qmdestroy", vmid, op), msg);
    assert!(lab.c.guests.contains_key(&vmid));
}

#[rstest]
fn destroy_of_a_protected_vm_is_refused(mut lab: World) {
    lab.c
        .guests
        .get_mut(&100)
        .expect("vm")
        .config
        .insert("protection".into(), "1".into());
    let op = QemuOp::Destroy {
        skiplock: false,
        purge: false,
        unreferenced: false,
    };
    assert_eq!(
        lab.qm("qmdestroy", 100, op),
        "can't remove VM 100 - protection mode enabled"
    );
}

#[rstest]
fn destroy_frees_the_disks_and_unreferenced_volumes(mut lab: World) {
    lab.c
        .storage
        .adopt_volume("local-lvm:vm-100-disk-7", "pve", 100, 1 << 30, lab.now());
    let op = QemuOp::Destroy {
        skiplock: false,
        purge: true,
        unreferenced: true,
    };
    let node = "pve";
    let upid = lab.run(node, qm_worker("qmdestroy", 100, op));
    assert_eq!(lab.exit(&upid), "OK");
    assert!(!lab.c.guests.contains_key(&100));
    assert!(
        lab.c
            .storage
            .volume("local-lvm:vm-100-disk-0", "pve")
            .is_none()
    );
    assert!(
        lab.c
            .storage
            .volume("local-lvm:vm-100-disk-7", "pve")
            .is_none()
    );
    assert!(
        lab.task(&upid)
            .log
            .iter()
            .any(|l| l == "purging VM 100 from related configurations..")
    );
}

// ---------------------------------------------------------------------
// Templates

#[rstest]
#[case(900, None, "you can't convert a template to a template")]
#[case(101, None, "you can't convert a VM to template if VM is running")]
fn template_refusals(
    mut lab: World,
    #[case] vmid: u32,
    #[case] disk: Option<&str>,
    #[case] msg: &str,
) {
    assert_eq!(
        refused(lab.c.vm_ops().check_template("pve", vmid, disk)),
        (500, msg.to_string())
    );
}

#[rstest]
fn a_vm_with_snapshots_cannot_become_a_template(mut lab: World) {
    lab.c
        .guests
        .get_mut(&100)
        .expect("vm")
        .snapshots
        .insert("s1".into(), map(&[("snaptime", "1")]));
    assert_eq!(
        refused(lab.c.vm_ops().check_template("pve", 100, None)),
        (
            500,
            "unable to create template, because VM contains snapshots".into()
        )
    );
}

#[rstest]
fn template_renames_disks_to_base_volumes(mut lab: World) {
    assert_eq!(
        lab.qm("qmtemplate", 100, QemuOp::Template { disk: None }),
        "OK"
    );
    assert_eq!(lab.conf(100, "template").as_deref(), Some("1"));
    assert_eq!(
        lab.conf(100, "scsi0").as_deref(),
        Some("local-lvm:base-100-disk-0,size=8G")
    );
    assert!(
        lab.c
            .storage
            .volume("local-lvm:base-100-disk-0", "pve")
            .is_some()
    );
    assert!(
        lab.c
            .storage
            .volume("local-lvm:vm-100-disk-0", "pve")
            .is_none()
    );
}
