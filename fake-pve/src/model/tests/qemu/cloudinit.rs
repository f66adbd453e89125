//! Cloud-init: drives, generated config, and cloud-init in clones and templates.

use super::*;

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
            .storage
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
        .guests
        .cloudinit_dump(&fresh.c.nodes, "pve", 100, "user", true)
        .expect("dump");
    assert!(masked.contains("user: ops"), "{masked}");
    assert!(!masked.contains("pw\n"), "{masked}");
}

#[rstest]
fn cloudinit_of_a_vm_without_a_drive(lab: World) {
    // PVE answers the options even without a drive; the dump works too.
    assert!(lab.c.guests.cloudinit_pending("pve", 100).is_ok());
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
// Cloud-init drives in clones and templates, storages without snapshots

fn with_cloudinit(w: &mut World, vmid: u32) {
    w.c.vm_ops()
        .update_config(
            "pve",
            vmid,
            &update(&[("ide0", "local-lvm:cloudinit")], &[]),
            w.now_ms / 1000,
        )
        .expect("drive added");
}

#[rstest]
fn a_clone_gets_a_new_cloudinit_drive(mut lab: World) {
    with_cloudinit(&mut lab, 100);
    let w = lab
        .c
        .vm_ops()
        .clone_vm(clone_req(100, 200), &mut rq())
        .expect("accepted");
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "OK", "{:?}", lab.task(&upid).log);
    // clone_disk sets the size of every new drive, cloud-init included.
    assert_eq!(
        lab.conf(200, "ide0").as_deref(),
        Some("local-lvm:vm-200-cloudinit,media=cdrom,size=4M")
    );
    assert!(
        lab.c
            .storage
            .volume("local-lvm:vm-200-cloudinit", "pve")
            .is_some()
    );
    assert!(
        lab.c
            .storage
            .volume("local-lvm:vm-100-cloudinit", "pve")
            .is_some(),
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
        .storage
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
        .snapshots()
        .snapshot_vm("pve", 100, "s1", false, None, now)
        .expect("a task");
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "snapshot feature is not available");
    assert_eq!(lab.conf(100, "lock"), None, "nothing was locked");
    let f = super::feature(&lab.c, "pve", 100, "snapshot", None)
        .map(|f| crate::api::qemu::view::feature(&f))
        .expect("answer");
    assert_eq!(f["hasFeature"], json!(0));
}

#[rstest]
fn a_qcow2_file_can_be_snapshotted(mut lab: World) {
    let now = lab.now();
    let (volid, _) = lab
        .c
        .storage
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
        .snapshots()
        .snapshot_vm("pve", 100, "s1", false, None, now)
        .expect("a task");
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "OK");
}
