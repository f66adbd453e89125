//! Content listings and volume attributes.

use super::*;

// ---------------------------------------------------------------------
// Content

#[rstest]
fn image_content_lists_the_seeded_disks(lab: World) {
    let items = lab
        .c
        .content_list("local-lvm", "pve", None, None)
        .expect("list");
    let items = crate::model::tests::rows(&items);
    let volids: Vec<&str> = items
        .iter()
        .map(|v| v["volid"].as_str().expect("volid"))
        .collect();
    assert_eq!(
        volids,
        [
            "local-lvm:base-900-disk-0",
            "local-lvm:vm-100-disk-0",
            "local-lvm:vm-101-disk-0"
        ]
    );
    let v100 = &items[1];
    assert_eq!(v100["vmid"], json!(100));
    assert_eq!(v100["size"], json!(8u64 << 30));
    assert_eq!(v100["content"], json!("images"));
}

#[rstest]
fn content_filters_by_vmid_and_type(lab: World) {
    let items = lab
        .c
        .content_list("local-lvm", "pve", None, Some(101))
        .expect("list");
    let items = crate::model::tests::rows(&items);
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["volid"], json!("local-lvm:vm-101-disk-0"));
    let isos = lab
        .c
        .content_list("local-lvm", "pve", Some("iso"), None)
        .expect("list");
    let isos = crate::model::tests::rows(&isos);
    assert!(isos.is_empty());
}

#[rstest]
fn content_of_a_missing_storage(lab: World) {
    assert_eq!(
        refused(lab.c.content_list("nope", "pve", None, None)),
        (500, "storage 'nope' does not exist".into())
    );
}

#[rstest]
fn volume_info_of_a_missing_volume(lab: World) {
    assert_eq!(
        refused(
            lab.c
                .storage
                .volume_info("local-lvm", "pve", "vm-100-disk-9")
        ),
        (
            500,
            "volume_size_info on 'local-lvm:vm-100-disk-9' failed - no format".into()
        )
    );
    let v = lab
        .c
        .storage
        .volume_info("local-lvm", "pve", "vm-100-disk-0")
        .expect("info");
    let v = serde_json::to_value(&v).expect("json");
    assert_eq!(v["size"], json!(8u64 << 30));
    assert_eq!(v["format"], json!("raw"));
    assert_eq!(v["path"], json!("/dev/pve/vm-100-disk-0"));
}

#[rstest]
fn deleting_a_missing_lv_fails_like_lvremove(lab: World) {
    let (id, plan) = lab
        .c
        .storage
        .plan_volume_delete("local-lvm", "pve", "vm-100-disk-9")
        .expect("planned");
    assert_eq!(id, "100@local-lvm");
    assert_eq!(
        plan,
        Err(crate::model::tasks::TaskFailure("lvremove 'pve/vm-100-disk-9' error:   Failed to find logical volume \"pve/vm-100-disk-9\"".into()))
    );
}

#[rstest]
fn deleting_an_lv_logs_its_removal(lab: World) {
    let (id, plan) = lab
        .c
        .storage
        .plan_volume_delete("local-lvm", "pve", "vm-100-disk-0")
        .expect("planned");
    assert_eq!(id, "100@local-lvm");
    assert_eq!(
        plan.expect("ok"),
        [
            "  Logical volume \"vm-100-disk-0\" successfully removed.",
            "Removed volume 'local-lvm:vm-100-disk-0'"
        ]
    );
}

#[rstest]
#[case("iso/debian.iso", "iso")]
#[case("vztmpl/d.tar.zst", "vztmpl")]
#[case("backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst", "backup")]
#[case("snippets/u.yaml", "snippets")]
#[case("100/vm-100-disk-0.qcow2", "images")]
fn volume_types(#[case] name: &str, #[case] ct: &str) {
    assert_eq!(vtype(name), ct);
}

#[rstest]
#[case("iso", "x.ISO", Some("iso"))]
#[case("iso", "x.qcow2", None)]
#[case("vztmpl", "d.tar.xz", Some("txz"))]
#[case("backup", "vzdump-qemu-100-x.vma.zst", Some("vma.zst"))]
#[case("import", "disk.vmdk", Some("vmdk"))]
#[case("import", "bad name.vmdk", None)]
fn file_formats(#[case] ct: &str, #[case] file: &str, #[case] fmt: Option<&str>) {
    assert_eq!(file_format(ct, file).as_deref(), fmt);
}

#[rstest]
#[case("local", "local:iso/x.iso", Ok(("local", "iso/x.iso")))]
#[case("local", "iso/x.iso", Ok(("local", "iso/x.iso")))]
#[case(
    "local",
    "other:iso/x.iso",
    Err("volume: storage ID mismatch (other != local)\n")
)]
fn real_volume_ids(#[case] sid: &str, #[case] vol: &str, #[case] want: Result<(&str, &str), &str>) {
    let got = real_volume_id(sid, vol);
    match want {
        Ok((s, n)) => assert_eq!(got.expect("ok"), (s.to_string(), n.to_string())),
        Err(m) => assert_eq!(refused(got), (400, m.to_string())),
    }
}

#[rstest]
#[case("local-lvm:vm-100-disk-0", Some(("local-lvm", "vm-100-disk-0")))]
#[case("local:iso/x.iso", Some(("local", "iso/x.iso")))]
#[case("vm-100-disk-0", None)]
fn volids(#[case] volid: &str, #[case] want: Option<(&str, &str)>) {
    assert_eq!(parse_volid(volid), want);
}

#[rstest]
#[case("dir", true)]
#[case("nfs", true)]
#[case("lvmthin", false)]
#[case("zfspool", false)]
fn path_based_kinds(#[case] kind: &str, #[case] yes: bool) {
    assert_eq!(path_based(kind), yes);
}

#[rstest]
fn download_needs_a_file_storage_with_the_content(lab: World) {
    assert_eq!(
        refused(
            lab.c
                .storage
                .download_check("local-lvm", "pve", "iso", "x.iso")
        ),
        (
            500,
            "can't upload to storage type 'lvmthin', not a file based storage!".into()
        )
    );
    assert_eq!(
        refused(lab.c.storage.download_check("tank", "pve", "iso", "x.iso")),
        (
            500,
            "can't upload to storage type 'zfspool', not a file based storage!".into()
        )
    );
    assert_eq!(
        lab.c
            .storage
            .download_check("local", "pve", "iso", "x.iso")
            .expect("ok"),
        ("x.iso".to_string(), "iso/x.iso".to_string())
    );
}

#[rstest]
fn shared_storages_are_seen_by_every_node(mut cluster: World) {
    let now = cluster.now();
    let (volid, _) = cluster
        .c
        .storage
        .alloc_volume("nfs", "pve1", 300, &VolumeKind::Disk, None, 1 << 30, now)
        .expect("allocated");
    assert!(cluster.c.storage.volume(&volid, "pve2").is_some(), "shared");
    let (local, _) = cluster
        .c
        .storage
        .alloc_volume(
            "local-lvm",
            "pve1",
            300,
            &VolumeKind::Disk,
            None,
            1 << 30,
            now,
        )
        .expect("allocated");
    assert!(cluster.c.storage.volume(&local, "pve1").is_some());
    assert!(
        cluster.c.storage.volume(&local, "pve2").is_none(),
        "local to pve1"
    );
}

/// `qemu-img measure`'s fully-allocated size, rounded up to LVM's 4 MiB
/// extents.
#[rstest]
#[case::one_gib(1 << 30, (1u64 << 30) + (4 << 20))]
#[case::thirty_two_gib(32 << 30, 8194 * (4 << 20))]
fn a_qcow2_logical_volume_s_size(#[case] virtual_size: u64, #[case] lv: u64) {
    assert_eq!(crate::model::storage::lvm_qcow2_lv_size(virtual_size), lv);
}

/// 9.2 lists a qcow2 image on thick LVM by its logical volume's size
/// (`approximate-size`) unless its guest runs; 9.1 by its size.
#[rstest]
#[case::v9_2(crate::model::PveVersion::V9_2, true)]
#[case::v9_1(crate::model::PveVersion::V9_1, false)]
fn qcow2_on_lvm_is_listed_by_its_approximate_size(
    #[case] version: crate::model::PveVersion,
    #[case] approximate: bool,
) {
    let mut w = World::from_yaml_v(LAB, version);
    if let Some(s) = w.c.storage.find_mut("local-lvm") {
        s.kind = "lvm".into();
        s.options.remove("thinpool");
    }
    let now = w.now();
    let refused_without_chain = w.c.storage.alloc_volume(
        "local-lvm",
        "pve",
        100,
        &VolumeKind::Disk,
        Some("qcow2"),
        1 << 30,
        now,
    );
    assert_eq!(
        refused(refused_without_chain),
        (
            500,
            "snapshot-as-volume-chain option need to be enabled to use qcow2 format".into()
        )
    );
    if let Some(s) = w.c.storage.find_mut("local-lvm") {
        s.options
            .insert("snapshot-as-volume-chain".into(), "1".into());
    }
    for vmid in [100, 101] {
        let (volid, log) =
            w.c.storage
                .alloc_volume(
                    "local-lvm",
                    "pve",
                    vmid,
                    &VolumeKind::Disk,
                    Some("qcow2"),
                    1 << 30,
                    now,
                )
                .expect("allocated");
        assert_eq!(volid, format!("local-lvm:vm-{vmid}-disk-1.qcow2"));
        assert!(log[1].starts_with(&format!(
            "Formatting '/dev/pve/vm-{vmid}-disk-1.qcow2', fmt=qcow2"
        )));
    }
    let items =
        w.c.content_list("local-lvm", "pve", None, None)
            .expect("list");
    let items = crate::model::tests::rows(&items);
    let row = |volid: &str| {
        items
            .iter()
            .find(|i| i["volid"] == json!(volid))
            .cloned()
            .expect("listed")
    };
    // VM 100 is stopped, 101 runs.
    let stopped = row("local-lvm:vm-100-disk-1.qcow2");
    if approximate {
        assert_eq!(stopped.get("size"), None);
        assert_eq!(stopped["approximate-size"], json!((1u64 << 30) + (4 << 20)));
    } else {
        assert_eq!(stopped["size"], json!(1u64 << 30));
        assert_eq!(stopped.get("approximate-size"), None);
    }
    let running = row("local-lvm:vm-101-disk-1.qcow2");
    assert_eq!(running["size"], json!(1u64 << 30));
    assert_eq!(running["format"], json!("qcow2"));
    // raw LVs keep their size
    assert_eq!(row("local-lvm:vm-100-disk-0")["size"], json!(8u64 << 30));
}
