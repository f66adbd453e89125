//! Allocating volumes: names, sizes, formats and refusals.

use super::*;

// ---------------------------------------------------------------------
// Allocation

#[rstest]
fn disks_take_the_next_free_number(mut lab: World) {
    assert_eq!(
        alloc(&mut lab, "local-lvm", 100, 1 << 30).expect("a"),
        "local-lvm:vm-100-disk-1"
    );
    assert_eq!(
        alloc(&mut lab, "local-lvm", 100, 1 << 30).expect("b"),
        "local-lvm:vm-100-disk-2"
    );
    assert_eq!(
        alloc(&mut lab, "local-lvm", 102, 1 << 30).expect("c"),
        "local-lvm:vm-102-disk-0"
    );
}

#[rstest]
fn a_base_volume_takes_its_number(mut lab: World) {
    // base-900-disk-0 exists: a new disk of 900 is disk-1.
    assert_eq!(
        alloc(&mut lab, "local-lvm", 900, 1 << 30).expect("a"),
        "local-lvm:vm-900-disk-1"
    );
}

#[rstest]
fn path_storages_name_files_with_their_format(mut lab: World) {
    let now = lab.now();
    let (volid, lines) = lab
        .c
        .storage
        .alloc_volume(
            "local",
            "pve",
            100,
            &VolumeKind::Disk,
            Some("qcow2"),
            1 << 30,
            now,
        )
        .expect("allocated");
    assert_eq!(volid, "local:100/vm-100-disk-0.qcow2");
    assert!(
        lines[0].starts_with("Formatting '/var/lib/vz/images/100/vm-100-disk-0.qcow2', fmt=qcow2"),
        "{lines:?}"
    );
}

/// pve-storage `Plugin.pm` `get_vm_disk_number`: on a plugin whose
/// formats include `subvol` (dir, btrfs) the disk-name pattern has no
/// extension, so a raw disk after a qcow2 one is disk-1. (PVE-ANSWERS says
/// "only files with the same extension count" for dir; that holds for NFS
/// and CIFS, whose formats lack `subvol`.)
#[rstest]
#[ignore = "alloc_volume counts only names with the new disk's extension on every file storage; dir and btrfs count every extension"]
fn disk_numbers_are_shared_across_formats(mut lab: World) {
    let now = lab.now();
    lab.c
        .storage
        .alloc_volume(
            "local",
            "pve",
            100,
            &VolumeKind::Disk,
            Some("qcow2"),
            1 << 30,
            now,
        )
        .expect("allocated");
    let (raw, _) = lab
        .c
        .storage
        .alloc_volume("local", "pve", 100, &VolumeKind::Disk, None, 1 << 30, now)
        .expect("allocated");
    assert_eq!(raw, "local:100/vm-100-disk-1.raw");
}

#[rstest]
fn lvmthin_prints_the_lvcreate_line(mut lab: World) {
    let now = lab.now();
    let (_, lines) = lab
        .c
        .storage
        .alloc_volume(
            "local-lvm",
            "pve",
            100,
            &VolumeKind::Disk,
            None,
            1 << 30,
            now,
        )
        .expect("allocated");
    assert_eq!(lines, ["  Logical volume \"vm-100-disk-1\" created."]);
}

#[rstest]
fn thick_lvm_refuses_what_does_not_fit(mut lab: World) {
    if let Some(s) = lab.c.storage.find_mut("local-lvm") {
        s.kind = "lvm".into();
    }
    let (code, msg) = refused(alloc(&mut lab, "local-lvm", 100, 500 << 30));
    assert_eq!(code, 500);
    assert_eq!(
        msg,
        format!(
            "not enough free space ({} < {})",
            172u64 << 30,
            (500u64 << 30) / 1024
        )
    );
}

#[rstest]
fn a_zfs_pool_without_sparse_refuses_overcommit(mut lab: World) {
    assert_eq!(
        refused(alloc(&mut lab, "tank", 100, 600 << 30)),
        (
            500,
            "zfs error: cannot create 'tank/vm-100-disk-0': out of space".into()
        )
    );
    if let Some(s) = lab.c.storage.find_mut("tank") {
        s.options.insert("sparse".into(), "1".into());
    }
    assert!(
        alloc(&mut lab, "tank", 100, 600 << 30).is_ok(),
        "sparse pools overcommit"
    );
}

#[rstest]
fn thin_pools_overcommit(mut lab: World) {
    assert!(alloc(&mut lab, "local-lvm", 100, 1 << 40).is_ok());
}

#[rstest]
fn free_volume_answers_none_for_an_unknown_volume(mut lab: World) {
    assert!(
        lab.c
            .storage
            .free_volume("local-lvm:vm-100-disk-0", "pve")
            .is_some()
    );
    assert!(
        lab.c
            .storage
            .free_volume("local-lvm:vm-100-disk-0", "pve")
            .is_none()
    );
}

#[rstest]
#[case(
    "local-lvm",
    100,
    "vm-100-disk-5",
    None,
    1024,
    Ok("local-lvm:vm-100-disk-5")
)]
#[case(
    "local-lvm",
    100,
    "vm-101-disk-5",
    None,
    1024,
    Err("illegal name 'vm-101-disk-5' - should be 'vm-100-*'")
)]
#[case(
    "local-lvm",
    100,
    "base-100-disk-5",
    None,
    1024,
    Err("illegal name 'base-100-disk-5' - should be 'vm-100-*'")
)]
#[case(
    "local-lvm",
    100,
    "vm-100-disk-0",
    None,
    1024,
    Err(
        "lvcreate 'pve/vm-100-disk-0' error:   Logical Volume \"vm-100-disk-0\" already exists in volume group \"pve\""
    )
)]
#[case(
    "local-lvm",
    100,
    "vm-100-disk-5",
    Some("qcow2"),
    1024,
    Err("unsupported format 'qcow2' at /usr/share/perl5/PVE/Storage/LvmThinPlugin.pm line 101.")
)]
#[case(
    "local",
    100,
    "vm-100-disk-5.qcow2",
    Some("qcow2"),
    1024,
    Ok("local:100/vm-100-disk-5.qcow2")
)]
#[case(
    "local",
    100,
    "vm-100-disk-5.raw",
    Some("qcow2"),
    1024,
    Err("illegal name 'vm-100-disk-5.raw' - wrong extension for format ('raw != 'qcow2')")
)]
fn named_allocation(
    mut lab: World,
    #[case] sid: &str,
    #[case] vmid: u32,
    #[case] name: &str,
    #[case] fmt: Option<&str>,
    #[case] kib: u64,
    #[case] want: Result<&str, &str>,
) {
    let now = lab.now();
    let got = lab
        .c
        .storage
        .alloc_named_volume(sid, "pve", vmid, name, fmt, kib, now);
    match want {
        Ok(volid) => {
            assert_eq!(got.expect("allocated"), volid);
            assert_eq!(
                lab.c.storage.volume(volid, "pve").map(|v| v.size),
                Some(kib * 1024)
            );
        }
        Err(msg) => assert_eq!(refused(got), (500, msg.to_string())),
    }
}
