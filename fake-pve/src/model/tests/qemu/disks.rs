//! Disks: resize, move, reassign, special kinds, numbering; and migration.

use super::*;

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
            .storage
            .volume("local-lvm:vm-100-disk-0", "pve")
            .map(|v| v.size),
        Some(9 << 30)
    );
}

// ---------------------------------------------------------------------
// Move disk

#[rstest]
#[case(mv("scsi9", "tank"), 500, "disk 'scsi9' does not exist")]
#[case(mv("ide2", "tank"), 500, "you can't move a cdrom")]
#[case(mv("scsi0", "nope"), 500, "storage 'nope' does not exist")]
#[case(MoveJob { digest: Some("0".repeat(40)), ..mv("scsi0", "tank") }, 500,
    "detected modified configuration - file changed by other user? Try again.")]
fn move_disk_refusals(mut lab: World, #[case] job: MoveJob, #[case] code: u16, #[case] msg: &str) {
    assert_eq!(
        refused(lab.c.vm_ops().check_move_disk("pve", 100, &job)),
        (code, msg.to_string())
    );
}

#[rstest]
fn move_disk_to_the_same_storage_is_refused(mut lab: World) {
    assert_eq!(
        refused(
            lab.c
                .vm_ops()
                .check_move_disk("pve", 100, &mv("scsi0", "local-lvm"))
        ),
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
    assert!(
        lab.c
            .storage
            .volume("local-lvm:vm-100-disk-0", "pve")
            .is_none()
    );
}

#[rstest]
fn a_running_move_mirrors_at_the_storages_limit(mut lab: World) {
    assert_eq!(
        lab.qm("qmstart", 100, QemuOp::Start { skiplock: false }),
        "OK"
    );
    lab.c
        .storage
        .find_mut("tank")
        .expect("tank")
        .options
        .insert("bwlimit".into(), "move=102400,default=1".into());
    let upid = lab.run(
        "pve",
        qm_worker(
            "qmmove",
            100,
            QemuOp::MoveDisk(Box::new(mv("scsi0", "tank"))),
        ),
    );
    assert_eq!(lab.exit(&upid), "OK");
    let log = lab.task(&upid).log.clone();
    // 8 GiB at 100 MiB/s: 82 s.
    assert!(
        log.contains(
            &"drive mirror is starting for drive-scsi0 with bandwidth limit: 102400 KiB/s"
                .to_string()
        ),
        "{log:#?}"
    );
    assert!(
        log.contains(
            &"drive-scsi0: transferred 8.0 GiB of 8.0 GiB (100.00%) in 1m 22s, ready".to_string()
        ),
        "{log:#?}"
    );
    // Root's own limit overrides the storage's.
    let job = MoveJob {
        bwlimit: Some(2_097_152),
        who: Some("root@pam".into()),
        ..mv("scsi0", "local-lvm")
    };
    let upid = lab.run(
        "pve",
        qm_worker("qmmove", 100, QemuOp::MoveDisk(Box::new(job))),
    );
    let log = lab.task(&upid).log.clone();
    assert!(
        log.contains(
            &"drive-scsi0: transferred 8.0 GiB of 8.0 GiB (100.00%) in 4s, ready".to_string()
        ),
        "{log:#?}"
    );
}

// ---------------------------------------------------------------------
// Migrate

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
    let (c, m) = refused(cluster.c.vm_ops().migrate_vm(req));
    assert_eq!(c, code);
    assert!(m.starts_with(msg), "{m}");
}

#[rstest]
fn migrate_takes_lock_migrate_and_moves_the_config(mut cluster: World) {
    let w = cluster
        .c
        .vm_ops()
        .migrate_vm(migrate(200, "pve2", true))
        .expect("accepted");
    assert_eq!(cluster.conf(200, "lock").as_deref(), Some("migrate"));
    let upid = cluster.run("pve1", w);
    assert_eq!(cluster.exit(&upid), "OK");
    let vm = &cluster.c.guests[&200];
    assert_eq!(vm.node, "pve2");
    assert_eq!(vm.lock(), None);
    assert!(vm.running(), "an online migration keeps it running");
    assert!(cluster.c.guests.vm("pve1", 200).is_err());
}

#[rstest]
fn migrate_precondition_lists_local_disks(mut cluster: World) {
    let p = cluster
        .c
        .vm_ops()
        .migrate_precondition("pve1", 100)
        .expect("answer");
    assert!(!p.running);
    assert!(
        p.local_disks
            .iter()
            .any(|d| d.volid == "local-lvm:vm-100-disk-0" && d.usage.attached),
        "{p:?}"
    );
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
fn reassign_refusals(
    mut lab: World,
    #[case] vmid: u32,
    #[case] job: ReassignJob,
    #[case] msg: &str,
) {
    assert_eq!(
        refused(lab.c.vm_ops().check_reassign(vmid, &job)),
        (500, msg.to_string())
    );
}

#[rstest]
fn reassigning_renames_the_volume_for_the_target(mut lab: World) {
    let job = reassign("scsi0", 101, "scsi1");
    assert_eq!(
        lab.c.vm_ops().check_reassign(100, &job).expect("allowed"),
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
        .vm_ops()
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
    assert_eq!(
        lab.c.storage.volume(&file, "pve").map(|v| v.size),
        Some(bytes)
    );
}

#[rstest]
fn import_from_copies_the_source_size(mut lab: World) {
    let worker = lab
        .c
        .vm_ops()
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
        .vm_ops()
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
        .vm_ops()
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
        .vm_ops()
        .update_config("pve", 101, &update(&[("ciuser", "new")], &[]), now)
        .expect("accepted");
    let pending = crate::api::qemu::view::cloudinit_pending(
        &lab.c.guests.cloudinit_pending("pve", 101).expect("view"),
    );
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
    lab.c
        .guests
        .cloudinit_update("pve", 101)
        .expect("regenerated");
    let pending = crate::api::qemu::view::cloudinit_pending(
        &lab.c.guests.cloudinit_pending("pve", 101).expect("view"),
    );
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
        refused(lab.c.guests.cloudinit_update("pve", 100)),
        (500, "VM is locked (backup)".into())
    );
}

#[rstest]
fn a_feature_is_limited_to_the_nodes_holding_the_disks(cluster: World) {
    let local = super::feature(&cluster.c, "pve1", 100, "copy", None)
        .map(|f| crate::api::qemu::view::feature(&f))
        .expect("answer");
    assert_eq!(local["nodes"], json!(["pve1"]));
    let shared = super::feature(&cluster.c, "pve1", 200, "snapshot", None)
        .map(|f| crate::api::qemu::view::feature(&f))
        .expect("answer");
    assert_eq!(shared["hasFeature"], json!(1), "qcow2 on NFS snapshots");
    assert_eq!(shared["nodes"], json!(["pve1", "pve2", "pve3"]));
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
        .storage
        .alloc_volume("nfs", "pve1", 300, &kind, Some("qcow2"), 1 << 30, now)
        .expect("qcow2");
    let (r, _) = cluster
        .c
        .storage
        .alloc_volume("nfs", "pve1", 300, &kind, Some("raw"), 1 << 30, now)
        .expect("raw");
    assert_eq!(q, "nfs:300/vm-300-disk-0.qcow2");
    assert_eq!(r, "nfs:300/vm-300-disk-0.raw");
}
