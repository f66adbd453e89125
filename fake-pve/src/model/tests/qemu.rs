//! QEMU guests: create, config updates, locks, power, templates,
//! snapshots, clone, resize, move disk, migrate, cloud-init, feature and
//! the status views.

use rstest::rstest;
use serde_json::json;

use super::{World, cluster, fresh, lab, map, qm_worker, refused, root, rq, user};
use crate::model::qemu::{
    CloneRequest, ConfigUpdate, CreateRequest, MigrateRequest, MoveJob, QemuOp, ReassignJob,
    ResizeJob, canonical, default_boot, drive_file, is_drive_key, option_exists,
};
use crate::model::{Error, PveVersion};

/// Starts a create of `vmid` on `pve` and runs it to its end.
fn create(w: &mut World, vmid: u32, conf: &[(&str, &str)], storage: Option<&str>) -> String {
    let worker =
        w.c.create_vm(
            CreateRequest {
                vmid,
                node: "pve".into(),
                config: map(conf),
                storage: storage.map(str::to_string),
                start: None,
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

// ---------------------------------------------------------------------
// Create

#[rstest]
fn create_of_an_existing_vmid_names_the_node(mut lab: World) {
    let r = lab.c.create_vm(
        CreateRequest {
            vmid: 100,
            node: "pve".into(),
            ..CreateRequest::default()
        },
        &mut rq(),
    );
    assert_eq!(
        refused(r),
        (
            500,
            "unable to create VM 100 - VM 100 already exists on node 'pve'".into()
        )
    );
}

#[rstest]
#[case(&[("scsi0", "nope:8")], None, 500, "storage 'nope' does not exist")]
#[case(&[("scsi0", "local:8")], None, 400, "storage: storage 'local' does not support vm images")]
#[case(&[("scsi0", "8")], None, 500, "no storage ID specified (and no default storage)")]
#[case(&[("scsi0", "8")], Some("local"), 400, "storage: storage 'local' does not support vm images")]
#[case(
    &[("scsi0", "local-lvm:8,import-from=local:iso/x.qcow2")],
    None,
    400,
    "scsi0: 'import-from' requires special syntax - use <storage ID>:0,import-from=<source>"
)]
fn create_refuses_bad_storage(
    mut fresh: World,
    #[case] conf: &[(&str, &str)],
    #[case] storage: Option<&str>,
    #[case] code: u16,
    #[case] msg: &str,
) {
    let r = fresh.c.create_vm(
        CreateRequest {
            vmid: 100,
            node: "pve".into(),
            config: map(conf),
            storage: storage.map(str::to_string),
            start: None,
        },
        &mut rq(),
    );
    assert_eq!(refused(r), (code, msg.to_string()));
    assert!(!fresh.c.guests.contains_key(&100), "nothing is left behind");
}

#[rstest]
fn create_holds_lock_create_until_the_task_ends(mut fresh: World) {
    let worker = fresh
        .c
        .create_vm(
            CreateRequest {
                vmid: 100,
                node: "pve".into(),
                config: map(&[("scsi0", "local-lvm:8")]),
                ..CreateRequest::default()
            },
            &mut rq(),
        )
        .expect("accepted");
    let upid = fresh.run_as("pve", worker, "root@pam", 5_000);
    assert_eq!(fresh.conf(100, "lock").as_deref(), Some("create"));
    assert_eq!(fresh.exit(&upid), "running");
    fresh.tick(5_000);
    assert_eq!(fresh.exit(&upid), "OK");
    assert_eq!(fresh.conf(100, "lock"), None);
}

#[rstest]
fn create_allocates_disks_and_prints_them(mut fresh: World) {
    let st = create(
        &mut fresh,
        100,
        &[("scsi0", "local-lvm:8"), ("virtio1", "local-lvm:2")],
        None,
    );
    assert_eq!(st, "OK");
    assert_eq!(
        fresh.conf(100, "scsi0").as_deref(),
        Some("local-lvm:vm-100-disk-0,size=8G")
    );
    assert_eq!(
        fresh.conf(100, "virtio1").as_deref(),
        Some("local-lvm:vm-100-disk-1,size=2G")
    );
    let vol = fresh
        .c
        .volume("local-lvm:vm-100-disk-0", "pve")
        .expect("volume allocated");
    assert_eq!(vol.size, 8 << 30);
    assert_eq!(vol.vmid, 100);
}

#[rstest]
fn create_uses_the_default_storage_for_a_bare_size(mut fresh: World) {
    assert_eq!(
        create(&mut fresh, 100, &[("sata0", "1")], Some("local-lvm")),
        "OK"
    );
    assert_eq!(
        fresh.conf(100, "sata0").as_deref(),
        Some("local-lvm:vm-100-disk-0,size=1G")
    );
}

#[rstest]
fn create_generates_a_mac_for_a_new_nic(mut fresh: World) {
    assert_eq!(
        create(&mut fresh, 100, &[("net0", "virtio,bridge=vmbr0")], None),
        "OK"
    );
    let net = fresh.conf(100, "net0").expect("net0");
    let mac = net
        .strip_prefix("virtio=")
        .and_then(|r| r.split(',').next())
        .expect("model=mac first");
    assert!(mac.starts_with("BC:24:11:"), "{net}");
    assert_eq!(mac.len(), 17, "{net}");
    assert!(net.ends_with(",bridge=vmbr0"), "{net}");
}

#[rstest]
fn create_writes_meta_smbios_vmgenid_and_boot(mut fresh: World) {
    create(
        &mut fresh,
        100,
        &[("scsi0", "local-lvm:1"), ("net0", "virtio,bridge=vmbr0")],
        None,
    );
    let meta = fresh.conf(100, "meta").expect("meta");
    assert!(meta.starts_with("creation-qemu="), "{meta}");
    assert!(meta.ends_with(&format!(",ctime={}", super::T0)), "{meta}");
    assert!(
        fresh
            .conf(100, "smbios1")
            .expect("smbios1")
            .starts_with("uuid=")
    );
    assert_eq!(fresh.conf(100, "vmgenid").map(|v| v.len()), Some(36));
    assert_eq!(fresh.conf(100, "boot").as_deref(), Some("order=scsi0;net0"));
}

#[rstest]
fn create_pins_the_machine_of_a_windows_guest(mut fresh: World) {
    create(&mut fresh, 100, &[("ostype", "win11")], None);
    assert_eq!(
        fresh.conf(100, "machine").as_deref(),
        Some("pc-i440fx-10.1+pve0")
    );
}

#[rstest]
fn create_turns_cdrom_into_ide2(mut fresh: World) {
    create(&mut fresh, 100, &[("cdrom", "local:iso/x.iso")], None);
    assert_eq!(
        fresh.conf(100, "ide2").as_deref(),
        Some("local:iso/x.iso,media=cdrom")
    );
    assert_eq!(fresh.conf(100, "cdrom"), None);
}

#[rstest]
fn a_create_that_fails_allocating_leaves_no_vm(mut fresh: World) {
    // A thick LVM of 1 GiB cannot hold 8 GiB.
    let s = fresh.c.storage.cfg()[1].storage.clone();
    let s = fresh.c.storage.find_mut(&s).expect("the second storage");
    s.kind = "lvm".into();
    s.total = 1 << 30;
    let st = create(&mut fresh, 100, &[("scsi0", "local-lvm:8")], None);
    assert!(
        st.starts_with("unable to create VM 100 - not enough free space"),
        "{st}"
    );
    assert!(!fresh.c.guests.contains_key(&100));
}

#[rstest]
fn create_with_start_starts_a_follow_up_task(mut fresh: World) {
    let worker = fresh
        .c
        .create_vm(
            CreateRequest {
                vmid: 100,
                node: "pve".into(),
                config: map(&[("scsi0", "local-lvm:1")]),
                start: Some(("root@pam".into(), 0)),
                ..CreateRequest::default()
            },
            &mut rq(),
        )
        .expect("accepted");
    fresh.run("pve", worker);
    let kinds: Vec<&str> = fresh.c.tasks.iter().map(|t| t.upid.kind.as_str()).collect();
    assert_eq!(kinds, ["qmcreate", "qmstart"]);
    fresh.tick(1);
    assert!(fresh.c.guests[&100].running());
}

// ---------------------------------------------------------------------
// Config updates: digest, lock, pending, delete, revert

#[rstest]
fn a_stale_digest_is_refused(lab: World) {
    let mut u = update(&[("name", "x")], &[]);
    u.digest = Some("0".repeat(40));
    assert_eq!(
        refused(lab.c.check_update("pve", 100, &u)),
        (500, "checksum mismatch (file change by other user?)".into())
    );
}

#[rstest]
fn the_current_digest_is_accepted_and_changes_with_the_config(mut lab: World) {
    let before = lab.c.guests[&100].digest();
    let mut u = update(&[("name", "web2")], &[]);
    u.digest = Some(before.clone());
    lab.c
        .update_config("pve", 100, &u, lab.now())
        .expect("applied");
    let after = lab.c.guests[&100].digest();
    assert_ne!(before, after);
    assert_eq!(
        lab.c.config_view("pve", 100, false).expect("view")["digest"],
        json!(after)
    );
}

#[rstest]
#[case("backup")]
#[case("clone")]
#[case("migrate")]
#[case("snapshot")]
#[case("suspended")]
fn a_locked_vm_refuses_updates(mut lab: World, #[case] lock: &str) {
    set_lock(&mut lab, 100, lock);
    assert_eq!(
        refused(
            lab.c
                .check_update("pve", 100, &update(&[("name", "x")], &[]))
        ),
        (500, format!("VM is locked ({lock})"))
    );
    let mut u = update(&[("name", "x")], &[]);
    u.skiplock = true;
    assert!(
        lab.c.check_update("pve", 100, &u).is_ok(),
        "skiplock passes"
    );
}

#[rstest]
fn a_held_file_lock_times_out(mut lab: World) {
    lab.c.guests.get_mut(&100).expect("vm").flock.shared = 1;
    assert_eq!(
        refused(
            lab.c
                .check_update("pve", 100, &update(&[("name", "x")], &[]))
        ),
        (
            500,
            "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout".into()
        )
    );
}

#[rstest]
fn balloon_above_memory_is_refused(lab: World) {
    assert_eq!(
        refused(
            lab.c
                .check_update("pve", 100, &update(&[("balloon", "4096")], &[]))
        ),
        (
            500,
            "balloon value too large (must be smaller than assigned memory)".into()
        )
    );
    assert!(
        lab.c
            .check_update("pve", 100, &update(&[("balloon", "1024")], &[]))
            .is_ok()
    );
}

#[rstest]
fn update_of_a_vm_on_another_node_says_the_config_is_missing(cluster: World) {
    assert_eq!(
        refused(
            cluster
                .c
                .check_update("pve2", 100, &update(&[("name", "x")], &[]))
        ),
        (
            500,
            "Configuration file 'nodes/pve2/qemu-server/100.conf' does not exist".into()
        )
    );
}

#[rstest]
fn a_stopped_vm_applies_changes_at_once(mut lab: World) {
    lab.c
        .update_config("pve", 100, &update(&[("cores", "4")], &["boot"]), lab.now())
        .expect("applied");
    let vm = &lab.c.guests[&100];
    assert_eq!(vm.config.get("cores").map(String::as_str), Some("4"));
    assert!(!vm.config.contains_key("boot"));
    assert!(vm.pending.is_empty() && vm.pending_delete.is_empty());
}

#[rstest]
fn a_running_vm_keeps_cold_changes_pending(mut lab: World) {
    lab.c
        .update_config(
            "pve",
            101,
            &update(&[("cores", "4"), ("name", "db2")], &[]),
            lab.now(),
        )
        .expect("applied");
    let vm = &lab.c.guests[&101];
    assert_eq!(vm.pending.get("cores").map(String::as_str), Some("4"));
    assert_eq!(vm.config.get("cores"), None);
    assert_eq!(
        vm.config.get("name").map(String::as_str),
        Some("db2"),
        "name is live"
    );
    // GET config shows the pending value, current=1 does not.
    assert_eq!(
        lab.c.config_view("pve", 101, false).expect("v")["cores"],
        json!(4)
    );
    assert_eq!(
        lab.c.config_view("pve", 101, true).expect("v").get("cores"),
        None
    );
}

#[rstest]
fn pending_view_lists_value_pending_and_delete(mut lab: World) {
    lab.c
        .update_config(
            "pve",
            101,
            &update(&[("memory", "8192"), ("cores", "2")], &["agent"]),
            lab.now(),
        )
        .expect("applied");
    let items = lab.c.pending_view("pve", 101).expect("view");
    let find = |k: &str| {
        items
            .as_array()
            .expect("list")
            .iter()
            .find(|i| i["key"] == k)
            .cloned()
            .unwrap_or_else(|| panic!("no {k}"))
    };
    // `memory` is a property string (`[current=]<integer>`) since PVE 8.1.
    assert_eq!(
        find("memory"),
        json!({"key": "memory", "value": "4096", "pending": "8192"})
    );
    assert_eq!(find("cores"), json!({"key": "cores", "pending": 2}));
    assert_eq!(find("agent")["delete"], json!(1));
    assert!(find("digest")["value"].is_string());
}

#[rstest]
fn revert_drops_a_pending_change(mut lab: World) {
    let now = lab.now();
    lab.c
        .update_config(
            "pve",
            101,
            &update(&[("cores", "4"), ("memory", "8192")], &[]),
            now,
        )
        .expect("applied");
    let u = ConfigUpdate {
        revert: vec!["cores".into(), "memory".into()],
        log: "revert".into(),
        ..ConfigUpdate::default()
    };
    lab.c.update_config("pve", 101, &u, now).expect("reverted");
    let vm = &lab.c.guests[&101];
    assert!(vm.pending.is_empty(), "{:?}", vm.pending);
    assert_eq!(vm.config.get("memory").map(String::as_str), Some("4096"));
}

#[rstest]
fn deleting_an_unset_key_warns(mut lab: World) {
    let log = lab
        .c
        .update_config("pve", 100, &update(&[], &["tablet"]), lab.now())
        .expect("applied");
    assert!(
        log.iter()
            .any(|l| l == "cannot delete 'tablet' - not set in current configuration!"),
        "{log:?}"
    );
}

#[rstest]
fn replacing_a_disk_keeps_the_old_volume_as_unused(mut lab: World) {
    lab.c
        .update_config(
            "pve",
            100,
            &update(&[("scsi0", "local-lvm:2")], &[]),
            lab.now(),
        )
        .expect("applied");
    assert_eq!(
        lab.conf(100, "scsi0").as_deref(),
        Some("local-lvm:vm-100-disk-1,size=2G")
    );
    assert_eq!(
        lab.conf(100, "unused0").as_deref(),
        Some("local-lvm:vm-100-disk-0")
    );
}

#[rstest]
fn deleting_a_disk_makes_it_unused_and_deleting_unused_frees_it(mut lab: World) {
    let now = lab.now();
    lab.c
        .update_config("pve", 100, &update(&[], &["scsi0"]), now)
        .expect("applied");
    assert_eq!(
        lab.conf(100, "unused0").as_deref(),
        Some("local-lvm:vm-100-disk-0")
    );
    assert!(lab.c.volume("local-lvm:vm-100-disk-0", "pve").is_some());
    lab.c
        .update_config("pve", 100, &update(&[], &["unused0"]), now)
        .expect("applied");
    assert_eq!(lab.conf(100, "unused0"), None);
    assert!(
        lab.c.volume("local-lvm:vm-100-disk-0", "pve").is_none(),
        "freed"
    );
}

#[rstest]
fn a_forced_delete_frees_the_disk(mut lab: World) {
    let mut u = update(&[], &["scsi0"]);
    u.force = true;
    lab.c
        .update_config("pve", 100, &u, lab.now())
        .expect("applied");
    assert_eq!(lab.conf(100, "unused0"), None);
    assert!(lab.c.volume("local-lvm:vm-100-disk-0", "pve").is_none());
}

#[rstest]
#[case("scsi0", "can't remove drive 'scsi0' - protection mode enabled")]
fn protection_guards_drives(mut lab: World, #[case] key: &str, #[case] msg: &str) {
    let now = lab.now();
    lab.c
        .update_config("pve", 100, &update(&[("protection", "1")], &[]), now)
        .expect("applied");
    let r = lab.c.update_config("pve", 100, &update(&[], &[key]), now);
    let (_, e) = r.expect_err("refused");
    assert_eq!(super::refusal(&e), (500, msg.to_string()));
}

#[rstest]
fn hotplugging_a_nic_to_a_missing_bridge_is_a_400(mut lab: World) {
    let r = lab.c.update_config(
        "pve",
        101,
        &update(&[("net1", "virtio=BC:24:11:00:01:99,bridge=vmbr9")], &[]),
        lab.now(),
    );
    let (_, e) = r.expect_err("refused");
    assert_eq!(
        super::refusal(&e),
        (
            400,
            "net1: hotplug problem - bridge 'vmbr9' does not exist".into()
        )
    );
}

#[rstest]
fn tags_are_sorted_and_deduplicated() {
    assert_eq!(
        canonical(PveVersion::V9_1, "tags", "b,a;b c").expect("ok"),
        "a;b;c"
    );
}

#[rstest]
#[case("onboot", "true", "1")]
#[case("onboot", "no", "0")]
#[case("cores", "4", "4")]
fn booleans_are_stored_as_digits(#[case] key: &str, #[case] value: &str, #[case] stored: &str) {
    assert_eq!(canonical(PveVersion::V9_1, key, value).expect("ok"), stored);
}

#[rstest]
#[case("scsi0", true)]
#[case("virtio15", true)]
#[case("efidisk0", true)]
#[case("tpmstate0", true)]
#[case("net0", false)]
#[case("scsi", false)]
#[case("unused0", false)]
fn drive_keys(#[case] key: &str, #[case] drive: bool) {
    assert_eq!(is_drive_key(key), drive);
}

#[rstest]
#[case("local-lvm:vm-100-disk-0,size=8G", "local-lvm:vm-100-disk-0")]
#[case("file=local:iso/x.iso,media=cdrom", "local:iso/x.iso")]
#[case("media=cdrom,volume=none", "none")]
fn drive_files(#[case] value: &str, #[case] file: &str) {
    assert_eq!(drive_file(value), file);
}

#[rstest]
#[case(PveVersion::V8_4, "net31", true)]
#[case(PveVersion::V8_4, "ipconfig31", true)]
#[case(PveVersion::V9_1, "scsi30", true)]
#[case(PveVersion::V9_1, "scsi31", false)]
fn option_names(#[case] v: PveVersion, #[case] key: &str, #[case] exists: bool) {
    assert_eq!(option_exists(v, key), exists);
}

#[rstest]
fn the_default_boot_order_skips_efidisks() {
    let conf = map(&[
        ("efidisk0", "local-lvm:vm-1-disk-1"),
        ("virtio0", "local-lvm:vm-1-disk-0"),
        ("net1", "virtio,bridge=vmbr0"),
    ]);
    assert_eq!(default_boot(&conf), "order=virtio0;net1");
}

// ---------------------------------------------------------------------
// Power

#[rstest]
fn start_applies_pending_and_records_the_start(mut lab: World) {
    lab.c
        .update_config("pve", 100, &update(&[("cores", "4")], &[]), lab.now())
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
    let st = lab
        .c
        .vm_status(&lab.c.guests[&101], lab.now_ms, true, false);
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
    assert!(lab.c.volume(&state, "pve").is_some());
    assert_eq!(
        lab.qm("qmresume", 101, QemuOp::Resume { skiplock: false }),
        "OK"
    );
    let vm = &lab.c.guests[&101];
    assert!(vm.running());
    assert_eq!(vm.lock(), None);
    assert!(lab.c.volume(&state, "pve").is_none(), "state freed");
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
    assert!(lab.c.volume("local-lvm:vm-100-disk-0", "pve").is_none());
    assert!(lab.c.volume("local-lvm:vm-100-disk-7", "pve").is_none());
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
fn template_refusals(lab: World, #[case] vmid: u32, #[case] disk: Option<&str>, #[case] msg: &str) {
    assert_eq!(
        refused(lab.c.check_template("pve", vmid, disk)),
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
        refused(lab.c.check_template("pve", 100, None)),
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
    assert!(lab.c.volume("local-lvm:base-100-disk-0", "pve").is_some());
    assert!(lab.c.volume("local-lvm:vm-100-disk-0", "pve").is_none());
}

// ---------------------------------------------------------------------
// Snapshots

#[rstest]
#[case("current", "unable to use snapshot name 'current' (reserved name)")]
#[case("PENDING", "unable to use snapshot name 'pending' (reserved name)")]
fn reserved_snapshot_names(mut lab: World, #[case] name: &str, #[case] msg: &str) {
    let r = lab.c.snapshot_vm("pve", 100, name, false, None, lab.now());
    assert_eq!(refused(r), (500, msg.to_string()));
}

#[rstest]
fn a_snapshot_is_prepared_then_committed(mut lab: World) {
    let now = lab.now();
    let worker = lab
        .c
        .snapshot_vm("pve", 100, "before", false, Some("first".into()), now)
        .expect("accepted");
    assert_eq!(lab.conf(100, "lock").as_deref(), Some("snapshot"));
    let snap = &lab.c.guests[&100].snapshots["before"];
    assert_eq!(snap.get("snapstate").map(String::as_str), Some("prepare"));
    let upid = lab.run("pve", worker);
    assert_eq!(lab.exit(&upid), "OK");
    assert_eq!(lab.conf(100, "lock"), None);
    assert_eq!(lab.conf(100, "parent").as_deref(), Some("before"));
    let list = lab.c.snapshot_list("pve", 100).expect("list");
    let names: Vec<&str> = list
        .as_array()
        .expect("list")
        .iter()
        .map(|s| s["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["before", "current"]);
    assert_eq!(list[0]["description"], json!("first"));
    assert_eq!(list[1]["parent"], json!("before"));
    assert_eq!(list[1]["description"], json!("You are here!"));
}

#[rstest]
#[case("locked", "VM is locked (backup)")]
#[case("template", "you can't take a snapshot if it's a template")]
#[case("dup", "snapshot name 'dup' already used")]
fn snapshot_refusals_end_the_task(mut lab: World, #[case] what: &str, #[case] msg: &str) {
    let vmid = match what {
        "template" => 900,
        _ => 100,
    };
    match what {
        "locked" => set_lock(&mut lab, 100, "backup"),
        "dup" => {
            lab.c
                .guests
                .get_mut(&100)
                .expect("vm")
                .snapshots
                .insert("dup".into(), map(&[]));
        }
        _ => {}
    }
    let now = lab.now();
    let worker = lab
        .c
        .snapshot_vm(
            "pve",
            vmid,
            if what == "dup" { "dup" } else { "s1" },
            false,
            None,
            now,
        )
        .expect("a task");
    let upid = lab.run("pve", worker);
    assert_eq!(lab.exit(&upid), msg);
}

#[rstest]
fn a_stopped_snapshot_task_is_undone(mut lab: World) {
    let now = lab.now();
    let worker = lab
        .c
        .snapshot_vm("pve", 100, "s1", false, None, now)
        .expect("accepted");
    let upid = lab.run_as("pve", worker, "root@pam", 10_000);
    lab.c.stop_task(&upid, now).expect("stopped");
    assert_eq!(lab.exit(&upid), "received interrupt");
    assert_eq!(lab.conf(100, "lock"), None);
    assert!(!lab.c.guests[&100].snapshots.contains_key("s1"));
}

#[rstest]
fn snapshot_config_and_description(mut lab: World) {
    let now = lab.now();
    let w = lab
        .c
        .snapshot_vm("pve", 100, "s1", false, None, now)
        .expect("ok");
    lab.run("pve", w);
    let conf = lab.c.snapshot_config("pve", 100, "s1").expect("config");
    assert_eq!(conf["snaptime"], json!(now));
    assert_eq!(conf["cores"], json!(2));
    lab.c
        .update_snapshot("pve", 100, "s1", Some("edited".into()))
        .expect("updated");
    assert_eq!(
        lab.c.snapshot_config("pve", 100, "s1").expect("c")["description"],
        json!("edited")
    );
    assert_eq!(
        refused(lab.c.snapshot_config("pve", 100, "nope")),
        (500, "snapshot 'nope' does not exist".into())
    );
    assert_eq!(
        refused(lab.c.update_snapshot("pve", 100, "nope", Some("x".into()))),
        (500, "snapshot 'nope' does not exist".into())
    );
}

#[rstest]
fn rollback_restores_the_config_and_stops_a_running_vm(mut lab: World) {
    let now = lab.now();
    let w = lab
        .c
        .snapshot_vm("pve", 101, "s1", false, None, now)
        .expect("ok");
    lab.run("pve", w);
    lab.c
        .update_config("pve", 101, &update(&[("name", "changed")], &[]), now)
        .expect("applied");
    let w = lab.c.rollback_vm("pve", 101, "s1", false, &mut rq());
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "OK");
    assert_eq!(lab.conf(101, "name").as_deref(), Some("db"));
    assert!(!lab.c.guests[&101].running(), "PVE stops it first");
    assert_eq!(lab.conf(101, "lock"), None);
}

#[rstest]
fn rollback_and_delete_of_a_missing_snapshot_fail_in_the_task(mut lab: World) {
    let w = lab.c.rollback_vm("pve", 100, "nope", false, &mut rq());
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "snapshot 'nope' does not exist");
    let w = lab.c.delete_snapshot("pve", 100, "nope");
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "snapshot 'nope' does not exist");
}

#[rstest]
fn deleting_a_snapshot_relinks_the_parent(mut lab: World) {
    let now = lab.now();
    for s in ["a", "b"] {
        let w = lab
            .c
            .snapshot_vm("pve", 100, s, false, None, now)
            .expect("ok");
        lab.run("pve", w);
    }
    assert_eq!(
        lab.c.guests[&100].snapshots["b"]
            .get("parent")
            .map(String::as_str),
        Some("a")
    );
    let w = lab.c.delete_snapshot("pve", 100, "b");
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "OK");
    assert_eq!(lab.conf(100, "parent").as_deref(), Some("a"));
    assert!(!lab.c.guests[&100].snapshots.contains_key("b"));
}

// ---------------------------------------------------------------------
// Clone

fn clone_req(vmid: u32, newid: u32) -> CloneRequest {
    CloneRequest {
        node: "pve".into(),
        vmid,
        newid,
        who: Some(root()),
        ..CloneRequest::default()
    }
}

#[rstest]
#[case(CloneRequest { full: Some(false), ..clone_req(100, 200) }, 500,
    "Linked clone feature is not supported for 'local-lvm:vm-100-disk-0' (scsi0)")]
#[case(CloneRequest { full: Some(false), storage: Some("local-lvm".into()), ..clone_req(900, 200) }, 500,
    "parameter 'storage' not allowed for linked clones")]
#[case(CloneRequest { full: Some(false), format: Some("qcow2".into()), ..clone_req(900, 200) }, 500,
    "parameter 'format' not allowed for linked clones")]
#[case(CloneRequest { pool: Some("p".into()), ..clone_req(100, 200) }, 500, "pool 'p' does not exist")]
#[case(CloneRequest { target: Some("pve9".into()), ..clone_req(100, 200) }, 500, "no such cluster node 'pve9'")]
#[case(CloneRequest { snapname: Some("nope".into()), ..clone_req(100, 200) }, 500, "snapshot 'nope' does not exist")]
#[case(CloneRequest { storage: Some("nope".into()), ..clone_req(100, 200) }, 500, "storage 'nope' does not exist")]
#[case(
    clone_req(100, 101),
    500,
    "unable to create VM 101: config file already exists"
)]
fn clone_refusals(mut lab: World, #[case] req: CloneRequest, #[case] code: u16, #[case] msg: &str) {
    assert_eq!(
        refused(lab.c.clone_vm(req, &mut rq())),
        (code, msg.to_string())
    );
    assert!(!lab.c.guests.contains_key(&200));
}

#[rstest]
fn clone_needs_allocate_space_on_the_target_storage(mut lab: World) {
    let mut req = clone_req(100, 200);
    req.who = Some(user("ci@pve"));
    assert_eq!(
        refused(lab.c.clone_vm(req, &mut rq())),
        (
            403,
            "Permission check failed (/storage/local-lvm, Datastore.AllocateSpace)".into()
        )
    );
}

#[rstest]
fn a_clone_target_holds_lock_clone_while_it_runs(mut lab: World) {
    let w = lab
        .c
        .clone_vm(clone_req(100, 200), &mut rq())
        .expect("accepted");
    let upid = lab.run_as("pve", w, "root@pam", 10_000);
    assert_eq!(lab.conf(200, "lock").as_deref(), Some("clone"));
    assert_eq!(lab.task(&upid).upid.id, "100", "the task id is the source");
    lab.tick(10_000);
    assert_eq!(lab.exit(&upid), "OK");
    assert_eq!(lab.conf(200, "lock"), None);
    assert_eq!(
        lab.conf(200, "scsi0").as_deref(),
        Some("local-lvm:vm-200-disk-0,size=8G")
    );
}

#[rstest]
fn a_full_clone_gets_new_macs_and_uuid(mut lab: World) {
    let w = lab
        .c
        .clone_vm(clone_req(100, 200), &mut rq())
        .expect("accepted");
    lab.run("pve", w);
    let old = lab.conf(100, "net0").expect("net0");
    let new = lab.conf(200, "net0").expect("net0");
    assert_ne!(old, new);
    assert!(new.ends_with(",bridge=vmbr0"), "{new}");
    assert_eq!(lab.conf(200, "memory").as_deref(), Some("2048"));
    assert!(
        lab.conf(200, "smbios1")
            .expect("smbios")
            .starts_with("uuid=")
    );
}

#[rstest]
fn a_linked_clone_of_a_template_refers_to_the_base(mut lab: World) {
    let w = lab
        .c
        .clone_vm(clone_req(900, 200), &mut rq())
        .expect("accepted");
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "OK");
    // LVM-thin's clone_image answers the new LV's name alone.
    assert_eq!(
        lab.conf(200, "scsi0").as_deref(),
        Some("local-lvm:vm-200-disk-0,size=4G")
    );
    assert!(
        lab.task(&upid)
            .log
            .iter()
            .any(|l| l.starts_with("create linked clone of drive scsi0")),
        "{:?}",
        lab.task(&upid).log
    );
    assert_eq!(lab.conf(200, "template"), None);
}

// ---------------------------------------------------------------------
// Resize

fn resize(disk: &str, size: &str) -> QemuOp {
    QemuOp::Resize(Box::new(ResizeJob {
        node: "pve".into(),
        disk: disk.into(),
        size: size.into(),
        skiplock: false,
        digest: None,
        who: root(),
    }))
}

#[rstest]
#[case("scsi0", "+2G", "OK", "local-lvm:vm-100-disk-0,size=10G")]
#[case("scsi0", "12G", "OK", "local-lvm:vm-100-disk-0,size=12G")]
#[case("scsi0", "8G", "OK", "local-lvm:vm-100-disk-0,size=8G")]
#[case(
    "scsi0",
    "4G",
    "shrinking disks is not supported",
    "local-lvm:vm-100-disk-0,size=8G"
)]
fn resize_only_grows(
    mut lab: World,
    #[case] disk: &str,
    #[case] size: &str,
    #[case] exit: &str,
    #[case] after: &str,
) {
    assert_eq!(lab.qm("resize", 100, resize(disk, size)), exit);
    assert_eq!(lab.conf(100, "scsi0").as_deref(), Some(after));
}

#[rstest]
#[case("scsi5", "disk 'scsi5' does not exist")]
#[case("ide2", "you can't resize a cdrom")]
fn resize_refusals_end_the_task(mut lab: World, #[case] disk: &str, #[case] msg: &str) {
    assert_eq!(lab.qm("resize", 100, resize(disk, "+1G")), msg);
}

#[rstest]
fn resize_checks_the_digest_and_lock_in_the_task(mut lab: World) {
    let mut job = ResizeJob {
        node: "pve".into(),
        disk: "scsi0".into(),
        size: "+1G".into(),
        skiplock: false,
        digest: Some("0".repeat(40)),
        who: root(),
    };
    assert_eq!(
        lab.qm("resize", 100, QemuOp::Resize(Box::new(job.clone()))),
        "checksum mismatch (file change by other user?)"
    );
    job.digest = None;
    set_lock(&mut lab, 100, "backup");
    assert_eq!(
        lab.qm("resize", 100, QemuOp::Resize(Box::new(job))),
        "VM is locked (backup)"
    );
}

#[rstest]
fn resize_grows_the_volume(mut lab: World) {
    lab.qm("resize", 100, resize("scsi0", "+1G"));
    assert_eq!(
        lab.c
            .volume("local-lvm:vm-100-disk-0", "pve")
            .map(|v| v.size),
        Some(9 << 30)
    );
}

// ---------------------------------------------------------------------
// Move disk

fn mv(disk: &str, storage: &str) -> MoveJob {
    MoveJob {
        disk: disk.into(),
        storage: storage.into(),
        format: None,
        delete: false,
        digest: None,
    }
}

#[rstest]
#[case(mv("scsi9", "tank"), 500, "disk 'scsi9' does not exist")]
#[case(mv("ide2", "tank"), 500, "you can't move a cdrom")]
#[case(mv("scsi0", "nope"), 500, "storage 'nope' does not exist")]
#[case(MoveJob { digest: Some("0".repeat(40)), ..mv("scsi0", "tank") }, 500,
    "detected modified configuration - file changed by other user? Try again.")]
fn move_disk_refusals(lab: World, #[case] job: MoveJob, #[case] code: u16, #[case] msg: &str) {
    assert_eq!(
        refused(lab.c.check_move_disk("pve", 100, &job)),
        (code, msg.to_string())
    );
}

#[rstest]
fn move_disk_to_the_same_storage_is_refused(lab: World) {
    assert_eq!(
        refused(lab.c.check_move_disk("pve", 100, &mv("scsi0", "local-lvm"))),
        (
            500,
            "you can't move to the same storage with same format".into()
        )
    );
}

#[rstest]
fn move_disk_keeps_the_source_as_unused(mut lab: World) {
    let op = QemuOp::MoveDisk(Box::new(mv("scsi0", "tank")));
    assert_eq!(lab.qm("qmmove", 100, op), "OK");
    assert_eq!(
        lab.conf(100, "scsi0").as_deref(),
        Some("tank:vm-100-disk-0,size=8G")
    );
    assert_eq!(
        lab.conf(100, "unused0").as_deref(),
        Some("local-lvm:vm-100-disk-0")
    );
}

#[rstest]
fn move_disk_with_delete_frees_the_source(mut lab: World) {
    let op = QemuOp::MoveDisk(Box::new(MoveJob {
        delete: true,
        ..mv("scsi0", "tank")
    }));
    assert_eq!(lab.qm("qmmove", 100, op), "OK");
    assert_eq!(lab.conf(100, "unused0"), None);
    assert!(lab.c.volume("local-lvm:vm-100-disk-0", "pve").is_none());
}

// ---------------------------------------------------------------------
// Migrate

fn migrate(vmid: u32, target: &str, online: bool) -> MigrateRequest {
    MigrateRequest {
        node: "pve1".into(),
        vmid,
        target: target.into(),
        online,
        with_local_disks: false,
        targetstorage: None,
        who: root(),
        now: super::T0,
    }
}

#[rstest]
#[case(migrate(200, "pve1", true), 400, "target: target is local node.")]
#[case(migrate(200, "pve9", true), 500, "no such cluster node 'pve9'")]
#[case(
    migrate(200, "pve2", false),
    500,
    "can't migrate running VM without --online"
)]
#[case(MigrateRequest { targetstorage: Some("1,local".into()), ..migrate(100, "pve2", false) }, 400,
    "targetstorage: failed to parse storage map: identity mapping cannot be combined with other mappings")]
fn migrate_refusals(
    mut cluster: World,
    #[case] req: MigrateRequest,
    #[case] code: u16,
    #[case] msg: &str,
) {
    let (c, m) = refused(cluster.c.migrate_vm(req));
    assert_eq!(c, code);
    assert!(m.starts_with(msg), "{m}");
}

#[rstest]
fn migrate_takes_lock_migrate_and_moves_the_config(mut cluster: World) {
    let w = cluster
        .c
        .migrate_vm(migrate(200, "pve2", true))
        .expect("accepted");
    assert_eq!(cluster.conf(200, "lock").as_deref(), Some("migrate"));
    let upid = cluster.run("pve1", w);
    assert_eq!(cluster.exit(&upid), "OK");
    let vm = &cluster.c.guests[&200];
    assert_eq!(vm.node, "pve2");
    assert_eq!(vm.lock(), None);
    assert!(vm.running(), "an online migration keeps it running");
    assert!(cluster.c.vm("pve1", 200).is_err());
}

#[rstest]
fn migrate_precondition_lists_local_disks(cluster: World) {
    let p = cluster.c.migrate_precondition("pve1", 100).expect("answer");
    assert_eq!(p["running"], json!(0));
    let disks = p["local_disks"].as_array().expect("local_disks");
    assert!(
        disks
            .iter()
            .any(|d| d["volid"] == "local-lvm:vm-100-disk-0"),
        "{p}"
    );
}

// ---------------------------------------------------------------------
// Feature, sendkey, status views

#[rstest]
#[case(100, "snapshot", 1)]
#[case(100, "clone", 0)]
#[case(100, "copy", 1)]
#[case(900, "clone", 1)]
fn features_of_lvmthin_disks(lab: World, #[case] vmid: u32, #[case] f: &str, #[case] has: u8) {
    let v = lab.c.vm_feature("pve", vmid, f, None).expect("answer");
    assert_eq!(v["hasFeature"], json!(has), "{v}");
    assert_eq!(v["nodes"], json!(["pve"]));
}

#[rstest]
fn an_unknown_feature_is_a_400(lab: World) {
    assert_eq!(
        refused(lab.c.vm_feature("pve", 100, "teleport", None)),
        (
            400,
            "feature: value 'teleport' does not have a value in the enumeration 'snapshot, clone, copy'"
                .into()
        )
    );
}

#[rstest]
fn sendkey_needs_a_running_vm(lab: World) {
    assert_eq!(
        refused(lab.c.vm_sendkey("pve", 100)),
        (500, "VM 100 not running".into())
    );
    assert!(lab.c.vm_sendkey("pve", 101).is_ok());
}

#[rstest]
fn status_of_a_running_vm(lab: World) {
    let vm = &lab.c.guests[&101];
    let st = lab.c.vm_status(vm, lab.now_ms, true, true);
    assert_eq!(st["status"], json!("running"));
    assert_eq!(st["qmpstatus"], json!("running"));
    assert_eq!(st["uptime"], json!(3600), "seeded VMs have run for an hour");
    assert_eq!(st["maxmem"], json!(4096u64 << 20));
    assert_eq!(st["maxdisk"], json!(16u64 << 30));
    assert_eq!(st["ha"], json!({"managed": 0}));
    assert_eq!(st["agent"], json!(1));
    assert_eq!(st["name"], json!("db"));
}

#[rstest]
fn status_of_a_stopped_template(lab: World) {
    let st = lab
        .c
        .vm_status(&lab.c.guests[&900], lab.now_ms, false, false);
    assert_eq!(st["status"], json!("stopped"));
    assert_eq!(st["template"], json!(1));
    assert_eq!(st["uptime"], json!(0));
    assert_eq!(st["mem"], json!(0));
    assert!(st.get("pid").is_none());
}

#[rstest]
fn config_view_masks_the_cloudinit_password(mut lab: World) {
    lab.c
        .guests
        .get_mut(&100)
        .expect("vm")
        .config
        .insert("cipassword".into(), "$5$hash".into());
    let v = lab.c.config_view("pve", 100, false).expect("view");
    assert_eq!(v["cipassword"], json!("**********"));
    assert_eq!(v["cores"], json!(2), "integers are typed");
    assert_eq!(v["memory"], json!("2048"), "memory is a property string");
}

#[rstest]
fn a_vm_missing_on_the_node_is_a_500(lab: World) {
    assert_eq!(
        refused(lab.c.config_view("pve", 555, false)),
        (
            500,
            "Configuration file 'nodes/pve/qemu-server/555.conf' does not exist".into()
        )
    );
    assert_eq!(
        refused(lab.c.vm_on_node("pve", 555)),
        (
            500,
            "unable to find configuration file for VM 555 on node 'pve'".into()
        )
    );
}

// ---------------------------------------------------------------------
// Cloud-init

#[rstest]
fn a_cloudinit_drive_is_allocated_on_create(mut fresh: World) {
    assert_eq!(
        create(&mut fresh, 100, &[("ide2", "local-lvm:cloudinit")], None),
        "OK"
    );
    assert_eq!(
        fresh.conf(100, "ide2").as_deref(),
        Some("local-lvm:vm-100-cloudinit,media=cdrom")
    );
    assert!(
        fresh
            .c
            .volume("local-lvm:vm-100-cloudinit", "pve")
            .is_some()
    );
}

#[rstest]
fn a_second_cloudinit_drive_is_refused(mut fresh: World) {
    let st = create(
        &mut fresh,
        100,
        &[
            ("ide2", "local-lvm:cloudinit"),
            ("scsi1", "local-lvm:cloudinit"),
        ],
        None,
    );
    assert_eq!(
        st,
        "unable to create VM 100 - scsi1 - cloud-init drive is already attached at 'ide2'"
    );
}

#[rstest]
fn cloudinit_dump_masks_the_password_on_request(mut fresh: World) {
    create(
        &mut fresh,
        100,
        &[
            ("ide2", "local-lvm:cloudinit"),
            ("ciuser", "ops"),
            ("cipassword", "pw"),
        ],
        None,
    );
    let masked = fresh
        .c
        .cloudinit_dump("pve", 100, "user", true)
        .expect("dump");
    assert!(masked.contains("user: ops"), "{masked}");
    assert!(!masked.contains("pw\n"), "{masked}");
}

#[rstest]
fn cloudinit_of_a_vm_without_a_drive(lab: World) {
    // PVE answers the options even without a drive; the dump works too.
    assert!(lab.c.cloudinit_pending("pve", 100).is_ok());
}

#[rstest]
fn the_error_helper_reads_every_variant() {
    assert_eq!(super::refusal(&Error::failed("x")), (500, "x".into()));
    assert_eq!(
        super::refusal(&Error::permission("/vms", &["VM.Audit", "VM.Allocate"])),
        (
            403,
            "Permission check failed (/vms, VM.Audit|VM.Allocate)".into()
        )
    );
    assert_eq!(
        super::refusal(&Error::Unreachable("No route to host".into())),
        (595, "No route to host".into())
    );
}

// ---------------------------------------------------------------------
// Hotplug on a running VM (default hotplug: network,disk,usb)

#[rstest]
#[case("name", "db2", true)]
#[case("onboot", "1", true)]
#[case("balloon", "1024", true)]
#[case("ciuser", "ops", true)]
#[case("cores", "4", false)]
#[case("memory", "8192", false)]
#[case("vcpus", "1", false)]
#[case("agent", "0", false)]
#[case("net1", "virtio=BC:24:11:00:01:77,bridge=vmbr1", true)]
#[case("scsi1", "local-lvm:1", true)]
#[case("sata1", "local-lvm:1", false)]
fn what_a_running_vm_takes_at_once(
    mut lab: World,
    #[case] key: &str,
    #[case] value: &str,
    #[case] live: bool,
) {
    lab.c
        .update_config("pve", 101, &update(&[(key, value)], &[]), lab.now())
        .expect("accepted");
    let vm = &lab.c.guests[&101];
    // A new disk is allocated, so its stored value differs from the request.
    let applied = if is_drive_key(key) {
        vm.config.contains_key(key)
    } else {
        vm.config.get(key).map(String::as_str) == Some(value)
    };
    assert_eq!(applied, live, "config: {:?}", vm.config);
    assert_eq!(
        vm.pending.contains_key(key),
        !live,
        "pending: {:?}",
        vm.pending
    );
}

#[rstest]
fn memory_hotplug_when_enabled(mut lab: World) {
    lab.c
        .guests
        .get_mut(&101)
        .expect("vm")
        .config
        .insert("hotplug".into(), "network,disk,memory".into());
    lab.c
        .update_config("pve", 101, &update(&[("memory", "8192")], &[]), lab.now())
        .expect("accepted");
    assert_eq!(lab.conf(101, "memory").as_deref(), Some("8192"));
}

#[rstest]
fn hotplug_off_keeps_even_nics_pending(mut lab: World) {
    lab.c
        .guests
        .get_mut(&101)
        .expect("vm")
        .config
        .insert("hotplug".into(), "0".into());
    lab.c
        .update_config(
            "pve",
            101,
            &update(&[("net1", "virtio=BC:24:11:00:01:77,bridge=vmbr1")], &[]),
            lab.now(),
        )
        .expect("accepted");
    assert!(lab.c.guests[&101].pending.contains_key("net1"));
}

#[rstest]
fn the_next_start_applies_what_was_pending(mut lab: World) {
    let now = lab.now();
    lab.c
        .update_config("pve", 101, &update(&[("cores", "4")], &["agent"]), now)
        .expect("accepted");
    lab.qm("qmstop", 101, QemuOp::Stop { skiplock: false });
    assert_eq!(lab.conf(101, "cores"), None, "a stop applies nothing");
    lab.qm("qmstart", 101, QemuOp::Start { skiplock: false });
    let vm = &lab.c.guests[&101];
    assert_eq!(vm.config.get("cores").map(String::as_str), Some("4"));
    assert!(!vm.config.contains_key("agent"));
    assert!(vm.pending.is_empty() && vm.pending_delete.is_empty());
}

#[rstest]
fn revert_drops_a_pending_delete(mut lab: World) {
    let now = lab.now();
    lab.c
        .update_config("pve", 101, &update(&[], &["agent"]), now)
        .expect("accepted");
    assert!(lab.c.guests[&101].pending_delete.contains_key("agent"));
    let u = ConfigUpdate {
        revert: vec!["agent".into()],
        log: "revert".into(),
        ..ConfigUpdate::default()
    };
    lab.c.update_config("pve", 101, &u, now).expect("reverted");
    let vm = &lab.c.guests[&101];
    assert!(vm.pending_delete.is_empty());
    assert!(vm.pending.is_empty());
    assert_eq!(vm.config.get("agent").map(String::as_str), Some("1"));
}

#[rstest]
fn a_forced_pending_delete_is_shown_as_2(mut lab: World) {
    let mut u = update(&[], &["cores"]);
    u.force = true;
    lab.c
        .guests
        .get_mut(&101)
        .expect("vm")
        .config
        .insert("cores".into(), "2".into());
    lab.c
        .update_config("pve", 101, &u, lab.now())
        .expect("accepted");
    let items = lab.c.pending_view("pve", 101).expect("view");
    let cores = items
        .as_array()
        .expect("list")
        .iter()
        .find(|i| i["key"] == "cores")
        .cloned()
        .expect("cores");
    assert_eq!(cores["delete"], json!(2));
    assert!(
        lab.c.guests[&101]
            .config_text()
            .contains("\n[PENDING]\ndelete: !cores\n"),
        "{}",
        lab.c.guests[&101].config_text()
    );
}

#[rstest]
fn the_config_text_encodes_the_description_as_comments(mut lab: World) {
    lab.c
        .update_config(
            "pve",
            100,
            &update(&[("description", "two\nlines 100%")], &[]),
            lab.now(),
        )
        .expect("accepted");
    let text = lab.c.guests[&100].config_text();
    assert!(text.starts_with("#two\n#lines 100%25\n"), "{text}");
    assert!(!text.contains("description:"), "{text}");
}

#[rstest]
fn a_digest_is_the_sha1_of_the_config_text(lab: World) {
    let vm = &lab.c.guests[&100];
    assert_eq!(
        vm.digest(),
        crate::model::qemu::sha1_hex(vm.config_text().as_bytes())
    );
    assert_eq!(vm.digest().len(), 40);
}

// ---------------------------------------------------------------------
// More snapshot, rollback, move and migrate rules

#[rstest]
fn a_snapshot_of_a_running_vm_saves_its_state(mut lab: World) {
    let now = lab.now();
    let w = lab
        .c
        .snapshot_vm("pve", 101, "live", true, None, now)
        .expect("accepted");
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "OK");
    let snap = &lab.c.guests[&101].snapshots["live"];
    let state = snap.get("vmstate").cloned().expect("vmstate");
    assert!(state.starts_with("local-lvm:vm-101-state-live"), "{state}");
    assert!(lab.c.volume(&state, "pve").is_some());
    assert!(
        lab.c.guests[&101].running(),
        "a snapshot does not stop the VM"
    );
    let list = lab.c.snapshot_list("pve", 101).expect("list");
    assert_eq!(list[0]["vmstate"], json!(1));
    let w = lab.c.delete_snapshot("pve", 101, "live");
    lab.run("pve", w);
    assert!(
        lab.c.volume(&state, "pve").is_none(),
        "the state goes with it"
    );
}

#[rstest]
fn rollback_with_start_runs_the_vm_again(mut lab: World) {
    let now = lab.now();
    let w = lab
        .c
        .snapshot_vm("pve", 100, "s1", false, None, now)
        .expect("ok");
    lab.run("pve", w);
    let w = lab.c.rollback_vm("pve", 100, "s1", true, &mut rq());
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "OK");
    lab.tick(1);
    assert!(lab.c.guests[&100].running());
}

#[rstest]
fn rollback_of_a_template_fails(mut lab: World) {
    lab.c
        .guests
        .get_mut(&900)
        .expect("vm")
        .snapshots
        .insert("s1".into(), map(&[("snaptime", "1")]));
    let w = lab.c.rollback_vm("pve", 900, "s1", false, &mut rq());
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "you can't rollback if vm is a template");
}

#[rstest]
fn a_disk_with_snapshots_cannot_move_and_delete_its_source(mut lab: World) {
    let now = lab.now();
    let w = lab
        .c
        .snapshot_vm("pve", 100, "s1", false, None, now)
        .expect("ok");
    lab.run("pve", w);
    let job = MoveJob {
        delete: true,
        ..mv("scsi0", "tank")
    };
    assert_eq!(
        refused(lab.c.check_move_disk("pve", 100, &job)),
        (
            500,
            "you can't move a disk with snapshots and delete the source".into()
        )
    );
    let (old, snapshotted) = lab
        .c
        .check_move_disk("pve", 100, &mv("scsi0", "tank"))
        .expect("a copy is allowed");
    assert_eq!(
        (old.as_str(), snapshotted),
        ("local-lvm:vm-100-disk-0", true)
    );
}

#[rstest]
fn an_offline_migration_copies_local_disks(mut cluster: World) {
    let w = cluster
        .c
        .migrate_vm(migrate(100, "pve2", false))
        .expect("accepted");
    let upid = cluster.run("pve1", w);
    assert_eq!(cluster.exit(&upid), "OK");
    assert_eq!(cluster.c.guests[&100].node, "pve2");
    assert!(
        cluster
            .c
            .volume("local-lvm:vm-100-disk-0", "pve2")
            .is_some()
    );
    assert!(
        cluster
            .c
            .volume("local-lvm:vm-100-disk-0", "pve1")
            .is_none()
    );
}

#[rstest]
fn a_live_migration_needs_with_local_disks(mut cluster: World) {
    cluster.qm("qmstart", 100, QemuOp::Start { skiplock: false });
    let w = cluster
        .c
        .migrate_vm(migrate(100, "pve2", true))
        .expect("accepted");
    let upid = cluster.run("pve1", w);
    assert_eq!(
        cluster.exit(&upid),
        "migration aborted",
        "{:?}",
        cluster.task(&upid).log
    );
    assert!(
        cluster.task(&upid).log.iter().any(|l| l
            .contains("can't live migrate attached local disks without with-local-disks option")),
        "{:?}",
        cluster.task(&upid).log
    );
    assert_eq!(cluster.c.guests[&100].node, "pve1");
    assert_eq!(cluster.conf(100, "lock"), None);
}

#[rstest]
fn a_locked_vm_does_not_migrate(mut cluster: World) {
    set_lock(&mut cluster, 100, "backup");
    assert_eq!(
        refused(cluster.c.migrate_vm(migrate(100, "pve2", false))),
        (500, "VM is locked (backup)".into())
    );
    assert_eq!(
        refused(cluster.c.migrate_precondition("pve1", 100)),
        (500, "VM is locked (backup)".into())
    );
}

#[rstest]
fn a_clone_to_another_node_needs_shared_storage(mut cluster: World) {
    let req = CloneRequest {
        node: "pve1".into(),
        target: Some("pve2".into()),
        who: Some(root()),
        ..clone_req(100, 300)
    };
    assert_eq!(
        refused(cluster.c.clone_vm(req, &mut rq())),
        (
            500,
            "can't clone VM to node 'pve2' (VM uses local storage)".into()
        )
    );
    let req = CloneRequest {
        node: "pve1".into(),
        target: Some("pve2".into()),
        storage: Some("local-lvm".into()),
        who: Some(root()),
        ..clone_req(100, 300)
    };
    assert_eq!(
        refused(cluster.c.clone_vm(req, &mut rq())),
        (500, "can't clone to non-shared storage 'local-lvm'".into())
    );
}

#[rstest]
fn a_clone_of_a_vm_on_shared_storage_can_go_to_another_node(mut cluster: World) {
    cluster.qm("qmstop", 200, QemuOp::Stop { skiplock: false });
    let req = CloneRequest {
        node: "pve1".into(),
        target: Some("pve2".into()),
        who: Some(root()),
        ..clone_req(200, 300)
    };
    let w = cluster.c.clone_vm(req, &mut rq()).expect("accepted");
    let upid = cluster.run("pve1", w);
    assert_eq!(cluster.exit(&upid), "OK", "{:?}", cluster.task(&upid).log);
    assert_eq!(cluster.c.guests[&300].node, "pve2");
}

// ---------------------------------------------------------------------
// Reassigning a disk to another VM

fn reassign(disk: &str, target: u32, target_disk: &str) -> ReassignJob {
    ReassignJob {
        node: "pve".into(),
        disk: disk.into(),
        target_vmid: target,
        target_disk: target_disk.into(),
        digest: None,
        target_digest: None,
    }
}

#[rstest]
#[case(100, reassign("scsi0", 555, "scsi1"), "could not find target VM 555")]
#[case(
    100,
    reassign("scsi0", 900, "scsi1"),
    "Can't move disks from or to template VMs"
)]
#[case(
    100,
    reassign("scsi7", 101, "scsi1"),
    "Disk 'scsi7' for VM '100' does not exist"
)]
#[case(
    100,
    reassign("scsi0", 101, "scsi0"),
    "Target disk key 'scsi0' is already in use for VM '101'"
)]
#[case(
    100,
    reassign("ide2", 101, "ide2"),
    "CD drive contents can't be moved to another VM"
)]
#[case(
    101,
    reassign("scsi0", 100, "scsi5"),
    "Cannot move disk to another VM while the source VM is running - detach first"
)]
#[case(100, ReassignJob { digest: Some("0".repeat(40)), ..reassign("scsi0", 101, "scsi1") },
    "VM 100: detected modified configuration - file changed by other user? Try again.")]
fn reassign_refusals(lab: World, #[case] vmid: u32, #[case] job: ReassignJob, #[case] msg: &str) {
    assert_eq!(
        refused(lab.c.check_reassign(vmid, &job)),
        (500, msg.to_string())
    );
}

#[rstest]
fn reassigning_renames_the_volume_for_the_target(mut lab: World) {
    let job = reassign("scsi0", 101, "scsi1");
    assert_eq!(
        lab.c.check_reassign(100, &job).expect("allowed"),
        "local-lvm:vm-100-disk-0"
    );
    let st = lab.qm("qmmove", 100, QemuOp::Reassign(Box::new(job)));
    assert_eq!(st, "OK");
    assert_eq!(lab.conf(100, "scsi0"), None);
    let scsi1 = lab.conf(101, "scsi1").expect("given to 101");
    assert!(scsi1.starts_with("local-lvm:vm-101-disk-"), "{scsi1}");
    assert_eq!(
        lab.conf(100, "boot").as_deref(),
        Some("order=ide2;net0"),
        "the disk leaves the boot order"
    );
}

// ---------------------------------------------------------------------
// Disks of special kinds

#[rstest]
#[case("local-lvm", "efidisk0", "local-lvm:1,efitype=4m", 4 << 20)]
#[case("local", "efidisk0", "local:1,efitype=4m", 540_672)]
#[case("local", "efidisk0", "local:1,efitype=2m", 128 << 10)]
#[case("local-lvm", "tpmstate0", "local-lvm:1,version=v2.0", 4 << 20)]
fn efi_and_tpm_disks_have_fixed_sizes(
    mut lab: World,
    #[case] sid: &str,
    #[case] key: &str,
    #[case] value: &str,
    #[case] bytes: u64,
) {
    let worker = lab
        .c
        .create_vm(
            CreateRequest {
                vmid: 300,
                node: "pve".into(),
                config: map(&[(key, value)]),
                ..CreateRequest::default()
            },
            &mut rq(),
        )
        .expect("accepted");
    let upid = lab.run("pve", worker);
    assert_eq!(lab.exit(&upid), "OK", "{:?}", lab.task(&upid).log);
    let conf = lab.conf(300, key).expect("drive");
    let file = drive_file(&conf).to_string();
    assert!(file.starts_with(&format!("{sid}:")), "{conf}");
    assert_eq!(lab.c.volume(&file, "pve").map(|v| v.size), Some(bytes));
}

#[rstest]
fn import_from_copies_the_source_size(mut lab: World) {
    let worker = lab
        .c
        .create_vm(
            CreateRequest {
                vmid: 300,
                node: "pve".into(),
                config: map(&[("scsi0", "tank:0,import-from=local-lvm:vm-101-disk-0")]),
                ..CreateRequest::default()
            },
            &mut rq(),
        )
        .expect("accepted");
    let upid = lab.run("pve", worker);
    assert_eq!(lab.exit(&upid), "OK");
    assert_eq!(
        lab.conf(300, "scsi0").as_deref(),
        Some("tank:vm-300-disk-0,size=16G")
    );
}

#[rstest]
fn import_from_a_missing_volume_fails_in_the_task(mut lab: World) {
    let worker = lab
        .c
        .create_vm(
            CreateRequest {
                vmid: 300,
                node: "pve".into(),
                config: map(&[("scsi0", "tank:0,import-from=local-lvm:vm-999-disk-0")]),
                ..CreateRequest::default()
            },
            &mut rq(),
        )
        .expect("accepted");
    let upid = lab.run("pve", worker);
    assert_eq!(
        lab.exit(&upid),
        "unable to create VM 300 - cannot import from 'local-lvm:vm-999-disk-0' - could not get size of local-lvm:vm-999-disk-0"
    );
    assert!(!lab.c.guests.contains_key(&300));
}

#[rstest]
fn cloudinit_changes_on_a_running_vm_wait_for_the_drive(mut lab: World) {
    let now = lab.now();
    lab.c
        .update_config(
            "pve",
            101,
            &update(&[("ide2", "local-lvm:cloudinit"), ("ciuser", "old")], &[]),
            now,
        )
        .expect("accepted");
    lab.qm("qmstop", 101, QemuOp::Stop { skiplock: false });
    lab.qm("qmstart", 101, QemuOp::Start { skiplock: false });
    assert!(
        lab.conf(101, "ide2")
            .is_some_and(|v| v.contains("vm-101-cloudinit"))
    );
    lab.c
        .update_config("pve", 101, &update(&[("ciuser", "new")], &[]), now)
        .expect("accepted");
    let pending = lab.c.cloudinit_pending("pve", 101).expect("view");
    let ciuser = pending
        .as_array()
        .expect("list")
        .iter()
        .find(|i| i["key"] == "ciuser")
        .cloned()
        .expect("ciuser");
    assert_eq!(
        ciuser,
        json!({"key": "ciuser", "value": "old", "pending": "new"})
    );
    lab.c.cloudinit_update("pve", 101).expect("regenerated");
    let pending = lab.c.cloudinit_pending("pve", 101).expect("view");
    assert!(
        pending
            .as_array()
            .expect("list")
            .iter()
            .any(|i| *i == json!({"key": "ciuser", "value": "new"})),
        "{pending}"
    );
}

#[rstest]
fn cloudinit_update_of_a_locked_vm(mut lab: World) {
    set_lock(&mut lab, 100, "backup");
    assert_eq!(
        refused(lab.c.cloudinit_update("pve", 100)),
        (500, "VM is locked (backup)".into())
    );
}

#[rstest]
fn a_feature_is_limited_to_the_nodes_holding_the_disks(cluster: World) {
    let local = cluster
        .c
        .vm_feature("pve1", 100, "copy", None)
        .expect("answer");
    assert_eq!(local["nodes"], json!(["pve1"]));
    let shared = cluster
        .c
        .vm_feature("pve1", 200, "snapshot", None)
        .expect("answer");
    assert_eq!(shared["hasFeature"], json!(1), "qcow2 on NFS snapshots");
    assert_eq!(shared["nodes"], json!(["pve1", "pve2", "pve3"]));
}

// ---------------------------------------------------------------------
// PVE-ANSWERS rules: hotplug without the hotplug features

/// `vmconfig_update_net` changes the bridge, tag, trunks, firewall, rate
/// and link_down of a running NIC without hotplug; only a new model, MAC,
/// queues or MTU need `network` hotplug.
#[rstest]
#[ignore = "hotplug_pending needs the network hotplug feature for every netN change, even a bridge-only one"]
fn a_bridge_change_is_live_without_network_hotplug(mut lab: World) {
    lab.c
        .guests
        .get_mut(&101)
        .expect("vm")
        .config
        .insert("hotplug".into(), "0".into());
    lab.c
        .update_config(
            "pve",
            101,
            &update(&[("net0", "virtio=BC:24:11:00:01:01,bridge=vmbr1")], &[]),
            lab.now(),
        )
        .expect("accepted");
    assert_eq!(
        lab.conf(101, "net0").as_deref(),
        Some("virtio=BC:24:11:00:01:01,bridge=vmbr1")
    );
    assert!(lab.c.guests[&101].pending.is_empty());
}

#[rstest]
fn a_new_mac_without_network_hotplug_stays_pending(mut lab: World) {
    lab.c
        .guests
        .get_mut(&101)
        .expect("vm")
        .config
        .insert("hotplug".into(), "0".into());
    lab.c
        .update_config(
            "pve",
            101,
            &update(&[("net0", "virtio=BC:24:11:00:01:99,bridge=vmbr0")], &[]),
            lab.now(),
        )
        .expect("accepted");
    assert!(lab.c.guests[&101].pending.contains_key("net0"));
}

/// `vmconfig_update_agent`: a running VM takes a change of
/// `fstrim_cloned_disks` alone at once.
#[rstest]
#[ignore = "hotplug_pending never applies `agent` live, not even when only fstrim_cloned_disks changes"]
fn fstrim_cloned_disks_changes_live(mut lab: World) {
    lab.c
        .update_config(
            "pve",
            101,
            &update(&[("agent", "1,fstrim_cloned_disks=1")], &[]),
            lab.now(),
        )
        .expect("accepted");
    assert_eq!(
        lab.conf(101, "agent").as_deref(),
        Some("1,fstrim_cloned_disks=1")
    );
}

#[rstest]
fn switching_the_agent_off_waits_for_a_restart(mut lab: World) {
    lab.c
        .update_config("pve", 101, &update(&[("agent", "0")], &[]), lab.now())
        .expect("accepted");
    assert_eq!(lab.conf(101, "agent").as_deref(), Some("1"));
    assert_eq!(
        lab.c.guests[&101].pending.get("agent").map(String::as_str),
        Some("0")
    );
}

#[rstest]
#[case("efidisk0")]
#[case("ide2")]
fn removing_ide_sata_and_efi_never_happens_live(mut lab: World, #[case] key: &str) {
    let value = if key == "ide2" {
        "none,media=cdrom"
    } else {
        "local-lvm:vm-101-disk-1,size=4M"
    };
    lab.c
        .guests
        .get_mut(&101)
        .expect("vm")
        .config
        .insert(key.into(), value.into());
    lab.c
        .update_config("pve", 101, &update(&[], &[key]), lab.now())
        .expect("accepted");
    assert!(lab.c.guests[&101].pending_delete.contains_key(key));
    assert!(lab.c.guests[&101].config.contains_key(key));
}

// ---------------------------------------------------------------------
// Numbering on file storages

/// `get_vm_disk_number`: on NFS (no `subvol` format) only names with the
/// new disk's extension count.
#[rstest]
fn on_nfs_only_the_same_extension_counts(mut cluster: World) {
    let now = cluster.now();
    let kind = crate::model::storage::VolumeKind::Disk;
    let (q, _) = cluster
        .c
        .alloc_volume("nfs", "pve1", 300, &kind, Some("qcow2"), 1 << 30, now)
        .expect("qcow2");
    let (r, _) = cluster
        .c
        .alloc_volume("nfs", "pve1", 300, &kind, Some("raw"), 1 << 30, now)
        .expect("raw");
    assert_eq!(q, "nfs:300/vm-300-disk-0.qcow2");
    assert_eq!(r, "nfs:300/vm-300-disk-0.raw");
}

// ---------------------------------------------------------------------
// Clone details

#[rstest]
fn a_clone_is_named_after_its_source(mut lab: World) {
    let w = lab
        .c
        .clone_vm(clone_req(100, 200), &mut rq())
        .expect("accepted");
    lab.run("pve", w);
    assert_eq!(lab.conf(200, "name").as_deref(), Some("Copy-of-VM-web"));
    let mut req = clone_req(100, 201);
    req.name = Some("given".into());
    let w = lab.c.clone_vm(req, &mut rq()).expect("accepted");
    lab.run("pve", w);
    assert_eq!(lab.conf(201, "name").as_deref(), Some("given"));
}

#[rstest]
fn a_clone_copies_meta_and_renews_vmgenid_only_if_present(mut lab: World) {
    {
        let conf = &mut lab.c.guests.get_mut(&100).expect("vm").config;
        conf.insert("meta".into(), "creation-qemu=9.2.0,ctime=1".into());
        conf.insert(
            "vmgenid".into(),
            "00000000-0000-0000-0000-000000000001".into(),
        );
    }
    let w = lab
        .c
        .clone_vm(clone_req(100, 200), &mut rq())
        .expect("accepted");
    lab.run("pve", w);
    assert_eq!(
        lab.conf(200, "meta").as_deref(),
        Some("creation-qemu=9.2.0,ctime=1")
    );
    let genid = lab.conf(200, "vmgenid").expect("vmgenid");
    assert_ne!(genid, "00000000-0000-0000-0000-000000000001");
    let w = lab
        .c
        .clone_vm(clone_req(900, 201), &mut rq())
        .expect("accepted");
    lab.run("pve", w);
    assert_eq!(lab.conf(201, "vmgenid"), None, "900 has none");
}

#[rstest]
fn a_clone_discards_pending_changes_with_a_warning(mut lab: World) {
    lab.c
        .update_config("pve", 101, &update(&[("cores", "4")], &[]), lab.now())
        .expect("pending");
    let w = lab
        .c
        .clone_vm(clone_req(101, 200), &mut rq())
        .expect("accepted");
    let upid = lab.run("pve", w);
    assert_eq!(lab.conf(200, "cores"), None);
    assert!(
        lab.task(&upid)
            .log
            .iter()
            .any(|l| l.contains("found pending changes for 'cores', discarding for clone")),
        "{:?}",
        lab.task(&upid).log
    );
}

// ---------------------------------------------------------------------
// Snapshot and rollback details

#[rstest]
fn vmstate_is_ignored_for_a_stopped_vm(mut lab: World) {
    let now = lab.now();
    let w = lab
        .c
        .snapshot_vm("pve", 100, "s1", true, None, now)
        .expect("ok");
    lab.run("pve", w);
    assert!(!lab.c.guests[&100].snapshots["s1"].contains_key("vmstate"));
}

#[rstest]
fn the_vm_state_takes_twice_the_memory_and_500_mib(mut lab: World) {
    let now = lab.now();
    let w = lab
        .c
        .snapshot_vm("pve", 101, "s1", true, None, now)
        .expect("ok");
    lab.run("pve", w);
    let state = lab.c.guests[&101].snapshots["s1"]["vmstate"].clone();
    assert_eq!(
        lab.c.volume(&state, "pve").map(|v| v.size),
        Some(2 * (4096 << 20) + (500 << 20))
    );
}

#[rstest]
fn a_snapshot_leaves_out_unused_disks_and_the_description(mut lab: World) {
    {
        let conf = &mut lab.c.guests.get_mut(&100).expect("vm").config;
        conf.insert("unused0".into(), "local-lvm:vm-100-disk-9".into());
        conf.insert("description".into(), "web server".into());
    }
    let now = lab.now();
    let w = lab
        .c
        .snapshot_vm("pve", 100, "s1", false, None, now)
        .expect("ok");
    lab.run("pve", w);
    let snap = &lab.c.guests[&100].snapshots["s1"];
    assert!(!snap.contains_key("unused0"));
    assert!(!snap.contains_key("description"));
    assert_eq!(
        snap.get("snaptime").map(String::as_str),
        Some(now.to_string().as_str())
    );
}

#[rstest]
fn rollback_keeps_description_and_unused_and_sets_parent(mut lab: World) {
    let now = lab.now();
    let w = lab
        .c
        .snapshot_vm("pve", 100, "s1", false, None, now)
        .expect("ok");
    lab.run("pve", w);
    {
        let conf = &mut lab.c.guests.get_mut(&100).expect("vm").config;
        conf.insert("description".into(), "kept".into());
        conf.insert("unused3".into(), "local-lvm:vm-100-disk-3".into());
        conf.insert("cores".into(), "8".into());
        conf.insert(
            "vmgenid".into(),
            "00000000-0000-0000-0000-000000000001".into(),
        );
    }
    lab.c
        .guests
        .get_mut(&100)
        .expect("vm")
        .snapshots
        .get_mut("s1")
        .expect("s1")
        .insert(
            "vmgenid".into(),
            "00000000-0000-0000-0000-000000000002".into(),
        );
    let w = lab.c.rollback_vm("pve", 100, "s1", false, &mut rq());
    lab.run("pve", w);
    assert_eq!(lab.conf(100, "description").as_deref(), Some("kept"));
    assert_eq!(
        lab.conf(100, "unused3").as_deref(),
        Some("local-lvm:vm-100-disk-3")
    );
    assert_eq!(lab.conf(100, "cores").as_deref(), Some("2"));
    assert_eq!(lab.conf(100, "parent").as_deref(), Some("s1"));
    let genid = lab.conf(100, "vmgenid").expect("vmgenid");
    assert!(
        !genid.ends_with("0001") && !genid.ends_with("0002"),
        "a new vmgenid: {genid}"
    );
}

#[rstest]
fn rollback_to_a_snapshot_with_state_resumes_the_vm(mut lab: World) {
    let now = lab.now();
    let w = lab
        .c
        .snapshot_vm("pve", 101, "live", true, None, now)
        .expect("ok");
    lab.run("pve", w);
    let w = lab.c.rollback_vm("pve", 101, "live", false, &mut rq());
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "OK");
    assert!(lab.c.guests[&101].running());
}

#[rstest]
fn task_logs_show_the_storage_tools(mut lab: World) {
    let now = lab.now();
    let w = lab
        .c
        .snapshot_vm("pve", 100, "snap1", false, None, now)
        .expect("ok");
    let upid = lab.run("pve", w);
    let log = &lab.task(&upid).log;
    assert!(
        log.iter()
            .any(|l| l == "snapshotting 'drive-scsi0' (local-lvm:vm-100-disk-0)"),
        "{log:?}"
    );
    assert!(
        log.iter()
            .any(|l| l == "  Logical volume \"snap_vm-100-disk-0_snap1\" created."),
        "{log:?}"
    );
    let w = lab.c.delete_snapshot("pve", 100, "snap1");
    let upid = lab.run("pve", w);
    assert!(
        lab.task(&upid)
            .log
            .iter()
            .any(|l| l == "  Logical volume \"snap_vm-100-disk-0_snap1\" successfully removed."),
        "{:?}",
        lab.task(&upid).log
    );
    let upid = lab.run(
        "pve",
        qm_worker("qmtemplate", 100, QemuOp::Template { disk: None }),
    );
    assert!(
        lab.task(&upid)
            .log
            .iter()
            .any(|l| l
                == "  Renamed \"vm-100-disk-0\" to \"base-100-disk-0\" in volume group \"pve\""),
        "{:?}",
        lab.task(&upid).log
    );
    let op = QemuOp::Destroy {
        skiplock: false,
        purge: false,
        unreferenced: false,
    };
    let upid = lab.run("pve", qm_worker("qmdestroy", 100, op));
    assert!(
        lab.task(&upid)
            .log
            .iter()
            .any(|l| l == "  Logical volume \"base-100-disk-0\" successfully removed."),
        "{:?}",
        lab.task(&upid).log
    );
}

#[rstest]
fn a_create_logs_each_created_disk(mut fresh: World) {
    let worker = fresh
        .c
        .create_vm(
            CreateRequest {
                vmid: 100,
                node: "pve".into(),
                config: map(&[("scsi0", "local-lvm:8")]),
                ..CreateRequest::default()
            },
            &mut rq(),
        )
        .expect("accepted");
    let upid = fresh.run("pve", worker);
    assert_eq!(
        fresh.task(&upid).log,
        [
            "  Logical volume \"vm-100-disk-0\" created.",
            "scsi0: successfully created disk 'local-lvm:vm-100-disk-0,size=8G'",
            "TASK OK"
        ]
    );
}

#[rstest]
fn migration_to_a_node_without_the_storage_is_refused(mut cluster: World) {
    cluster
        .c
        .storage_update("local-lvm", &map(&[("nodes", "pve1")]), &[])
        .expect("restricted");
    if let Some(s) = cluster.c.storage.find_mut("local-lvm") {
        s.nodes = Some(vec!["pve1".into()]);
    }
    assert_eq!(
        refused(cluster.c.migrate_vm(migrate(100, "pve2", false))),
        (
            500,
            "storage 'local-lvm' is not available on node 'pve2'".into()
        )
    );
    assert_eq!(cluster.conf(100, "lock"), None);
}

// ---------------------------------------------------------------------
// Status details

#[rstest]
fn a_stopped_vm_in_full_status(lab: World) {
    let st = lab.c.vm_status(&lab.c.guests[&100], lab.now_ms, true, true);
    assert_eq!(st["qmpstatus"], json!("stopped"));
    for absent in [
        "diskread",
        "nics",
        "blockstat",
        "running-machine",
        "pid",
        "balloon",
    ] {
        assert!(st.get(absent).is_none(), "{absent}: {st}");
    }
    assert!(st.get("agent").is_none(), "100 has no agent");
}

#[rstest]
fn status_without_full_has_no_run_details(lab: World) {
    let st = lab
        .c
        .vm_status(&lab.c.guests[&101], lab.now_ms, false, false);
    for absent in [
        "qmpstatus",
        "nics",
        "blockstat",
        "ha",
        "agent",
        "proxmox-support",
    ] {
        assert!(st.get(absent).is_none(), "{absent}: {st}");
    }
    assert_eq!(st["pid"], json!(10_101));
}

#[rstest]
fn a_hibernated_vm_shows_stopped_with_lock_suspended(mut lab: World) {
    lab.qm(
        "qmsuspend",
        101,
        QemuOp::Suspend {
            skiplock: false,
            todisk: Some("local-lvm".into()),
        },
    );
    let st = lab.c.vm_status(&lab.c.guests[&101], lab.now_ms, true, true);
    assert_eq!(st["status"], json!("stopped"));
    assert_eq!(st["qmpstatus"], json!("stopped"));
    assert_eq!(st["lock"], json!("suspended"));
}

#[rstest]
fn status_fields_that_follow_the_config(mut lab: World) {
    {
        let conf = &mut lab.c.guests.get_mut(&100).expect("vm").config;
        conf.insert("sockets".into(), "4".into());
        conf.insert("cores".into(), "8".into());
        conf.insert("balloon".into(), "1024".into());
        conf.insert("serial0".into(), "socket".into());
        conf.insert("tags".into(), "a;b".into());
        conf.insert("vga".into(), "std".into());
    }
    let st = lab
        .c
        .vm_status(&lab.c.guests[&100], lab.now_ms, false, true);
    assert_eq!(st["cpus"], json!(16), "capped at the host's 16 CPUs");
    assert_eq!(st["balloon_min"], json!(1024u64 << 20));
    assert_eq!(st["shares"], json!(1000));
    assert_eq!(st["serial"], json!(1));
    assert_eq!(st["tags"], json!("a;b"));
    assert_eq!(st["clipboard"], json!(null), "present once vga is set");
    assert!(st.get("spice").is_none());
    lab.c
        .guests
        .get_mut(&100)
        .expect("vm")
        .config
        .insert("vga".into(), "qxl,clipboard=vnc".into());
    let st = lab
        .c
        .vm_status(&lab.c.guests[&100], lab.now_ms, false, true);
    assert_eq!(st["spice"], json!(1));
    assert_eq!(st["clipboard"], json!("vnc"));
}

#[rstest]
fn vcpus_win_over_sockets_and_cores(mut lab: World) {
    {
        let conf = &mut lab.c.guests.get_mut(&100).expect("vm").config;
        conf.insert("vcpus".into(), "3".into());
    }
    let st = lab
        .c
        .vm_status(&lab.c.guests[&100], lab.now_ms, false, false);
    assert_eq!(st["cpus"], json!(3));
}

// ---------------------------------------------------------------------
// Cloud-init drives in clones and templates, storages without snapshots

fn with_cloudinit(w: &mut World, vmid: u32) {
    w.c.update_config(
        "pve",
        vmid,
        &update(&[("ide0", "local-lvm:cloudinit")], &[]),
        w.now(),
    )
    .expect("drive added");
}

#[rstest]
fn a_clone_gets_a_new_cloudinit_drive(mut lab: World) {
    with_cloudinit(&mut lab, 100);
    let w = lab
        .c
        .clone_vm(clone_req(100, 200), &mut rq())
        .expect("accepted");
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "OK", "{:?}", lab.task(&upid).log);
    // clone_disk sets the size of every new drive, cloud-init included.
    assert_eq!(
        lab.conf(200, "ide0").as_deref(),
        Some("local-lvm:vm-200-cloudinit,media=cdrom,size=4M")
    );
    assert!(lab.c.volume("local-lvm:vm-200-cloudinit", "pve").is_some());
    assert!(
        lab.c.volume("local-lvm:vm-100-cloudinit", "pve").is_some(),
        "the source keeps its own"
    );
}

#[rstest]
fn a_template_leaves_cloudinit_and_cdrom_drives_alone(mut lab: World) {
    with_cloudinit(&mut lab, 100);
    assert_eq!(
        lab.qm("qmtemplate", 100, QemuOp::Template { disk: None }),
        "OK"
    );
    assert_eq!(
        lab.conf(100, "ide0").as_deref(),
        Some("local-lvm:vm-100-cloudinit,media=cdrom")
    );
    assert_eq!(
        lab.conf(100, "ide2").as_deref(),
        Some("local:iso/debian.iso,media=cdrom")
    );
    assert!(
        lab.conf(100, "scsi0")
            .is_some_and(|v| v.contains("base-100-disk-0"))
    );
}

#[rstest]
fn a_raw_file_cannot_be_snapshotted(mut lab: World) {
    let now = lab.now();
    let (volid, _) = lab
        .c
        .alloc_volume(
            "local",
            "pve",
            100,
            &crate::model::storage::VolumeKind::Disk,
            Some("raw"),
            1 << 30,
            now,
        )
        .expect("allocated");
    lab.c
        .guests
        .get_mut(&100)
        .expect("vm")
        .config
        .insert("scsi1".into(), format!("{volid},size=1G"));
    let w = lab
        .c
        .snapshot_vm("pve", 100, "s1", false, None, now)
        .expect("a task");
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "snapshot feature is not available");
    assert_eq!(lab.conf(100, "lock"), None, "nothing was locked");
    let f = lab
        .c
        .vm_feature("pve", 100, "snapshot", None)
        .expect("answer");
    assert_eq!(f["hasFeature"], json!(0));
}

#[rstest]
fn a_qcow2_file_can_be_snapshotted(mut lab: World) {
    let now = lab.now();
    let (volid, _) = lab
        .c
        .alloc_volume(
            "local",
            "pve",
            100,
            &crate::model::storage::VolumeKind::Disk,
            Some("qcow2"),
            1 << 30,
            now,
        )
        .expect("allocated");
    lab.c
        .guests
        .get_mut(&100)
        .expect("vm")
        .config
        .insert("scsi1".into(), format!("{volid},size=1G"));
    let w = lab
        .c
        .snapshot_vm("pve", 100, "s1", false, None, now)
        .expect("a task");
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "OK");
}
