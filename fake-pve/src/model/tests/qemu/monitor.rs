//! The QEMU monitor: what a running VM's monitor answers, the state
//! `stop` and `cont` leave, and the commands it does not take.

use super::*;

fn known(name: &str) -> bool {
    matches!(
        name,
        "info" | "stop" | "cont" | "c" | "sendkey" | "system_reset" | "block_resize"
    )
}

fn hmp(w: &mut World, vmid: u32, command: &str) -> crate::model::Result<String> {
    let version = w.c.version;
    let paths = std::collections::BTreeMap::from([(
        "local-lvm:vm-101-disk-0".to_string(),
        "/dev/pve/vm-101-disk-0".to_string(),
    )]);
    w.c.guests
        .monitor("pve", vmid, command, version, known, &paths)
}

#[rstest]
fn a_stopped_vm_answers_an_error_line(mut lab: World) {
    assert_eq!(
        hmp(&mut lab, 100, "info status").expect("answered"),
        "ERROR: VM 100 not running\n"
    );
}

#[rstest]
fn stop_and_cont_pause_and_resume_the_guest(mut lab: World) {
    assert_eq!(
        hmp(&mut lab, 101, "info status").expect("status"),
        "VM status: running\r\n"
    );
    assert_eq!(hmp(&mut lab, 101, "stop").expect("stop"), "");
    assert_eq!(
        hmp(&mut lab, 101, "  info   status ").expect("status"),
        "VM status: paused\r\n"
    );
    let vm = &lab.c.guests[&101];
    let st =
        crate::api::qemu::status::vm_status(&lab.c.vm_status_reader(), vm, lab.now_ms, true, true);
    assert_eq!(st["qmpstatus"], json!("paused"), "PVE sees the pause");
    assert_eq!(hmp(&mut lab, 101, "c").expect("cont"), "");
    assert_eq!(
        hmp(&mut lab, 101, "info status").expect("status"),
        "VM status: running\r\n"
    );
    assert_eq!(hmp(&mut lab, 101, "system_reset").expect("reset"), "");
}

#[rstest]
#[case("info cpus", "* CPU #0: thread_id=10103\r\n")]
#[case("info balloon", "balloon: actual=4096\r\n")]
#[case("info version", "10.1.2pve-qemu-kvm_10.1.2-4\r\n")]
#[case("sendkey ctrl-alt-delete", "")]
#[case("sendkey ctrl-0x1c", "")]
#[case("sendkey ctrl-nokey", "invalid parameter: nokey\r\n")]
#[case("frobnicate now", "unknown command: 'frobnicate'\r\n")]
#[case("   ", "")]
fn what_the_monitor_prints(mut lab: World, #[case] command: &str, #[case] want: &str) {
    assert_eq!(hmp(&mut lab, 101, command).expect("answered"), want);
}

#[rstest]
fn the_cpus_and_the_balloon_follow_the_config(mut lab: World) {
    let vm = lab.c.guests.vm_mut("pve", 101).expect("vm");
    vm.config.insert("cores".into(), "2".into());
    vm.config.insert("sockets".into(), "2".into());
    vm.config.insert("balloon".into(), "0".into());
    assert_eq!(
        hmp(&mut lab, 101, "info cpus")
            .expect("cpus")
            .lines()
            .count(),
        4
    );
    assert_eq!(
        hmp(&mut lab, 101, "info balloon").expect("balloon"),
        "Error: No balloon device has been activated\r\n"
    );
}

#[rstest]
#[case("block_resize drive-scsi0 20G")]
#[case("info mtree")]
fn a_command_qemu_knows_but_not_emulated_is_refused(mut lab: World, #[case] command: &str) {
    let (code, msg) = refused(hmp(&mut lab, 101, command));
    assert_eq!(code, 501);
    assert!(msg.contains("is not emulated by fake-pve"), "{msg}");
}

#[rstest]
fn a_missing_vm_is_refused(mut lab: World) {
    assert!(hmp(&mut lab, 4242, "info status").is_err());
}

#[rstest]
fn info_block_and_info_network_follow_the_config(mut lab: World) {
    let vm = lab.c.guests.get_mut(&101).expect("present");
    vm.config
        .retain(|k, _| !k.starts_with("net") && !crate::model::qemu::is_drive_key(k));
    vm.config.insert(
        "scsi0".into(),
        "local-lvm:vm-101-disk-0,discard=on,size=32G".into(),
    );
    vm.config.insert("ide2".into(), "none,media=cdrom".into());
    vm.config.insert(
        "net0".into(),
        "virtio=BC:24:11:AA:BB:CC,bridge=vmbr0".into(),
    );
    vm.config
        .insert("net1".into(), "e1000=BC:24:11:00:00:01,bridge=vmbr1".into());
    let block = hmp(&mut lab, 101, "info block").expect("answered");
    assert_eq!(
        block,
        "drive-ide2: [not inserted]\r\n    Attached to:      ide2\r\n    Removable device: not locked, tray closed\r\n\r\n\
         drive-scsi0 (#block158): /dev/pve/vm-101-disk-0 (raw)\r\n    Attached to:      scsi0\r\n    Cache mode:       writeback, direct\r\n    Detect zeroes:    unmap\r\n"
    );
    let net = hmp(&mut lab, 101, "info network").expect("answered");
    let scripts = if lab.c.version.is_v9() {
        "/usr/libexec/qemu-server"
    } else {
        "/var/lib/qemu-server"
    };
    assert_eq!(
        net,
        format!(
            "net0: index=0,type=nic,model=virtio-net-pci,macaddr=bc:24:11:aa:bb:cc\r\n \\ net0: index=0,type=tap,ifname=tap101i0,script={scripts}/pve-bridge,downscript={scripts}/pve-bridgedown\r\n\
             net1: index=0,type=nic,model=e1000,macaddr=bc:24:11:00:00:01\r\n \\ net1: index=0,type=tap,ifname=tap101i1,script={scripts}/pve-bridge,downscript={scripts}/pve-bridgedown\r\n"
        )
    );
}
