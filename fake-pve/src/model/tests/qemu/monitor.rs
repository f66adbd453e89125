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
    w.c.guests.monitor("pve", vmid, command, version, known)
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
#[case("info block")]
fn a_command_qemu_knows_but_not_emulated_is_refused(mut lab: World, #[case] command: &str) {
    let (code, msg) = refused(hmp(&mut lab, 101, command));
    assert_eq!(code, 501);
    assert!(msg.contains("is not emulated by fake-pve"), "{msg}");
}

#[rstest]
fn a_missing_vm_is_refused(mut lab: World) {
    assert!(hmp(&mut lab, 4242, "info status").is_err());
}
