//! Storages: `storage.cfg` CRUD, volumes, content listing, allocation and
//! capacity.

use rstest::rstest;
use serde_json::json;

use super::{World, cluster, fresh, lab, map, refused};
use crate::model::storage::content::{
    DownloadRequest, UploadRequest, file_format, normalize_filename, real_volume_id, vtype,
};
use crate::model::storage::{Volume, VolumeKind, parse_volid, path_based};

fn alloc(w: &mut World, sid: &str, vmid: u32, size: u64) -> Result<String, crate::model::Error> {
    let now = w.now();
    w.c.alloc_volume(sid, "pve", vmid, &VolumeKind::Disk, None, size, now)
        .map(|(v, _)| v)
}

// ---------------------------------------------------------------------
// storage.cfg

#[rstest]
#[case(&[("storage", "s1"), ("type", "dir")], "missing value for required option 'path'")]
#[case(&[("storage", "s1"), ("type", "nfs"), ("path", "/mnt")], "missing value for required option 'export'")]
#[case(&[("storage", "s1"), ("type", "lvmthin"), ("vgname", "pve")], "missing value for required option 'thinpool'")]
#[case(&[("storage", "s1"), ("type", "zfspool")], "missing value for required option 'pool'")]
#[case(&[("storage", "local"), ("type", "dir"), ("path", "/x")], "create storage failed: storage ID 'local' already defined")]
fn storage_create_refusals(mut fresh: World, #[case] p: &[(&str, &str)], #[case] msg: &str) {
    let before = fresh.c.storage.cfg().len();
    assert_eq!(
        refused(fresh.c.storage_create(&map(p))),
        (500, msg.to_string())
    );
    assert_eq!(fresh.c.storage.cfg().len(), before);
}

#[rstest]
fn storage_create_answers_id_and_type(mut fresh: World) {
    let v = fresh
        .c
        .storage_create(&map(&[
            ("storage", "nfs1"),
            ("type", "nfs"),
            ("server", "192.0.2.5"),
            ("export", "/e"),
            ("path", "/mnt/pve/nfs1"),
        ]))
        .expect("created");
    assert_eq!(v, json!({"storage": "nfs1", "type": "nfs"}));
    let s = fresh.c.storage("nfs1").expect("exists");
    let view = fresh.c.storage_config_view(s);
    assert_eq!(view["shared"], json!(1), "NFS is always shared");
    assert_eq!(view["server"], json!("192.0.2.5"));
}

#[rstest]
fn the_storage_digest_changes_with_the_config(mut fresh: World) {
    let d0 = fresh.c.storage_digest();
    assert_eq!(d0.len(), 40);
    fresh
        .c
        .storage_create(&map(&[("storage", "d2"), ("type", "dir"), ("path", "/d2")]))
        .expect("created");
    assert_ne!(fresh.c.storage_digest(), d0);
}

#[rstest]
#[case("local", &[("digest", "0000")], &[], "update storage failed: detected modified configuration - file changed by other user? Try again.")]
#[case("local", &[("path", "/elsewhere")], &[], "update storage failed: can't change value of fixed parameter 'path'")]
#[case("local-lvm", &[], &["vgname"], "update storage failed: unable to delete required option 'vgname'")]
#[case("local", &[("nodes", "pve")], &["nodes"], "update storage failed: cannot set and delete property 'nodes' at the same time!")]
#[case("nope", &[("disable", "1")], &[], "update storage failed: storage 'nope' does not exist")]
fn storage_update_refusals(
    mut fresh: World,
    #[case] sid: &str,
    #[case] p: &[(&str, &str)],
    #[case] delete: &[&str],
    #[case] msg: &str,
) {
    let delete: Vec<String> = delete.iter().map(|s| (*s).to_string()).collect();
    assert_eq!(
        refused(fresh.c.storage_update(sid, &map(p), &delete)),
        (500, msg.to_string())
    );
}

#[rstest]
fn storage_update_with_the_current_digest_applies(mut fresh: World) {
    let d = fresh.c.storage_digest();
    fresh
        .c
        .storage_update("local", &map(&[("digest", &d), ("disable", "1")]), &[])
        .expect("updated");
    assert!(fresh.c.storage("local").expect("s").disable);
    let (code, msg) = refused(fresh.c.usable_storage("local", "pve"));
    assert_eq!((code, msg.as_str()), (500, "storage 'local' is disabled"));
}

#[rstest]
fn storage_delete(mut fresh: World) {
    fresh.c.storage_delete("local").expect("deleted");
    assert_eq!(
        refused(fresh.c.storage("local")),
        (500, "storage 'local' does not exist".into())
    );
    assert_eq!(
        refused(fresh.c.storage_delete("local")),
        (
            500,
            "delete storage failed: storage 'local' does not exist".into()
        )
    );
}

#[rstest]
fn a_storage_restricted_to_other_nodes_is_unavailable(mut cluster: World) {
    cluster
        .c
        .storage_update("nfs", &map(&[("nodes", "pve2")]), &[])
        .expect("updated");
    assert_eq!(
        refused(cluster.c.usable_storage("nfs", "pve1")),
        (500, "storage 'nfs' is not available on node 'pve1'".into())
    );
    assert!(cluster.c.usable_storage("nfs", "pve2").is_ok());
    let s = cluster.c.storage("nfs").expect("nfs").clone();
    assert!(cluster.c.storage_status(&s, "pve1", None).is_none());
}

// ---------------------------------------------------------------------
// Status and capacity

#[rstest]
fn storage_status_counts_allocated_volumes(mut lab: World) {
    let s = lab.c.storage("local-lvm").expect("s").clone();
    let before = lab.c.storage_status(&s, "pve", None).expect("status");
    // Seeded disks: 8G (100), 16G (101), 4G (900).
    assert_eq!(before["used"], json!(28u64 << 30));
    assert_eq!(before["total"], json!(200u64 << 30));
    assert_eq!(before["avail"], json!(172u64 << 30));
    alloc(&mut lab, "local-lvm", 100, 2 << 30).expect("allocated");
    let after = lab.c.storage_status(&s, "pve", None).expect("status");
    assert_eq!(after["used"], json!(30u64 << 30));
    assert_eq!(after["active"], json!(1));
    assert_eq!(after["enabled"], json!(1));
}

#[rstest]
#[case(Some("images"), true)]
#[case(Some("iso"), false)]
#[case(Some("iso,rootdir"), true)]
#[case(None, true)]
fn storage_status_filters_by_content(
    lab: World,
    #[case] content: Option<&str>,
    #[case] listed: bool,
) {
    let s = lab.c.storage("local-lvm").expect("s");
    assert_eq!(lab.c.storage_status(s, "pve", content).is_some(), listed);
}

#[rstest]
fn a_disabled_storage_reports_nothing_in_use(mut lab: World) {
    if let Some(s) = lab.c.storage.find_mut("local-lvm") {
        s.disable = true;
    }
    let s = lab.c.storage("local-lvm").expect("s");
    let st = lab.c.storage_status(s, "pve", None).expect("listed");
    assert_eq!(
        (st["active"].clone(), st["total"].clone()),
        (json!(0), json!(0))
    );
}

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
        .alloc_volume("local", "pve", 100, &VolumeKind::Disk, None, 1 << 30, now)
        .expect("allocated");
    assert_eq!(raw, "local:100/vm-100-disk-1.raw");
}

#[rstest]
fn lvmthin_prints_the_lvcreate_line(mut lab: World) {
    let now = lab.now();
    let (_, lines) = lab
        .c
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
            .free_volume("local-lvm:vm-100-disk-0", "pve")
            .is_some()
    );
    assert!(
        lab.c
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
        .alloc_named_volume(sid, "pve", vmid, name, fmt, kib, now);
    match want {
        Ok(volid) => {
            assert_eq!(got.expect("allocated"), volid);
            assert_eq!(lab.c.volume(volid, "pve").map(|v| v.size), Some(kib * 1024));
        }
        Err(msg) => assert_eq!(refused(got), (500, msg.to_string())),
    }
}

// ---------------------------------------------------------------------
// Content

#[rstest]
fn image_content_lists_the_seeded_disks(lab: World) {
    let items = lab
        .c
        .content_list("local-lvm", "pve", None, None)
        .expect("list");
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
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["volid"], json!("local-lvm:vm-101-disk-0"));
    let isos = lab
        .c
        .content_list("local-lvm", "pve", Some("iso"), None)
        .expect("list");
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
        refused(lab.c.volume_info("local-lvm", "pve", "vm-100-disk-9")),
        (
            500,
            "volume_size_info on 'local-lvm:vm-100-disk-9' failed - no format".into()
        )
    );
    let v = lab
        .c
        .volume_info("local-lvm", "pve", "vm-100-disk-0")
        .expect("info");
    assert_eq!(v["size"], json!(8u64 << 30));
    assert_eq!(v["format"], json!("raw"));
    assert_eq!(v["path"], json!("/dev/pve/vm-100-disk-0"));
}

#[rstest]
fn deleting_a_missing_lv_fails_like_lvremove(lab: World) {
    let (id, plan) = lab
        .c
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
        refused(lab.c.download_check("local-lvm", "pve", "iso", "x.iso")),
        (
            500,
            "can't upload to storage type 'lvmthin', not a file based storage!".into()
        )
    );
    assert_eq!(
        refused(lab.c.download_check("tank", "pve", "iso", "x.iso")),
        (
            500,
            "can't upload to storage type 'zfspool', not a file based storage!".into()
        )
    );
    assert_eq!(
        lab.c
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
        .alloc_volume("nfs", "pve1", 300, &VolumeKind::Disk, None, 1 << 30, now)
        .expect("allocated");
    assert!(cluster.c.volume(&volid, "pve2").is_some(), "shared");
    let (local, _) = cluster
        .c
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
    assert!(cluster.c.volume(&local, "pve1").is_some());
    assert!(cluster.c.volume(&local, "pve2").is_none(), "local to pve1");
}

// ---------------------------------------------------------------------
// Downloads, uploads, file content and backups

const FILES: &str = r#"
storages:
  - { id: local, type: dir, path: /var/lib/vz, content: [iso, vztmpl, backup, images] }
  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve }
downloads:
  - { url: 'https://example.org/debian.iso', size: 1000, checksum: abc, checksum-algorithm: sha256 }
  - { url: 'https://self-signed.example/x.iso', size: 10, insecure: true }
  - { url: 'https://example.org/broken.iso', fail: 'download failed: 500 Internal Server Error' }
"#;

fn files() -> World {
    World::from_yaml(FILES)
}

fn download(url: &str, filename: &str) -> DownloadRequest {
    DownloadRequest {
        node: "pve".into(),
        storage: "local".into(),
        content: "iso".into(),
        filename: filename.into(),
        url: url.into(),
        checksum: None,
        checksum_algorithm: None,
        compression: None,
        verify_certificates: true,
        pid: 1234,
        now: super::T0,
    }
}

fn run_download(w: &mut World, r: &DownloadRequest) -> String {
    let worker = w.c.download_task(r).expect("accepted");
    let upid = w.run_as("pve", worker, "root@pam", 1_000);
    w.tick(1_000);
    w.exit(&upid)
}

#[rstest]
fn a_download_appears_when_its_task_ends() {
    let mut w = files();
    let worker =
        w.c.download_task(&download("https://example.org/debian.iso", "debian.iso"))
            .expect("accepted");
    assert_eq!(worker.kind, "download");
    assert_eq!(worker.id, "debian.iso");
    let upid = w.run_as("pve", worker, "root@pam", 1_000);
    assert!(
        w.c.volume("local:iso/debian.iso", "pve").is_none(),
        "not before the end"
    );
    w.tick(1_000);
    assert_eq!(w.exit(&upid), "OK");
    let v =
        w.c.volume("local:iso/debian.iso", "pve")
            .expect("downloaded");
    assert_eq!((v.size, v.format.as_str()), (1000, "iso"));
    let log = &w.task(&upid).log;
    assert_eq!(
        log[0],
        "downloading https://example.org/debian.iso to /var/lib/vz/template/iso/debian.iso"
    );
    assert_eq!(
        log[log.len() - 2],
        "download of 'https://example.org/debian.iso' to '/var/lib/vz/template/iso/debian.iso' finished"
    );
}

#[rstest]
fn a_second_download_refuses_to_override() {
    let mut w = files();
    let r = download("https://example.org/debian.iso", "debian.iso");
    assert_eq!(run_download(&mut w, &r), "OK");
    assert_eq!(
        run_download(&mut w, &r),
        "refusing to override existing file '/var/lib/vz/template/iso/debian.iso'"
    );
    let with_sum = DownloadRequest {
        checksum: Some("ABC".into()),
        checksum_algorithm: Some("sha256".into()),
        ..r
    };
    assert_eq!(
        run_download(&mut w, &with_sum),
        "OK",
        "the same file is kept"
    );
}

#[rstest]
#[case(Some("abc"), "OK")]
#[case(Some("def"), "checksum mismatch: got 'abc' != expect 'def'")]
fn download_checksums(#[case] sum: Option<&str>, #[case] exit: &str) {
    let mut w = files();
    let r = DownloadRequest {
        checksum: sum.map(str::to_string),
        checksum_algorithm: Some("sha256".into()),
        ..download("https://example.org/debian.iso", "debian.iso")
    };
    assert_eq!(run_download(&mut w, &r), exit);
    assert_eq!(
        w.c.volume("local:iso/debian.iso", "pve").is_some(),
        exit == "OK"
    );
}

#[rstest]
fn an_untrusted_certificate_fails_unless_unverified() {
    let mut w = files();
    let r = download("https://self-signed.example/x.iso", "x.iso");
    assert_eq!(
        run_download(&mut w, &r),
        "download failed: command 'wget --progress=dot:giga -O /var/lib/vz/template/iso/x.iso.tmp_dwnl.1234 https://self-signed.example/x.iso' failed: exit code 5"
    );
    let r = DownloadRequest {
        verify_certificates: false,
        ..r
    };
    assert_eq!(run_download(&mut w, &r), "OK");
}

#[rstest]
fn a_failing_url_ends_the_task_with_its_error() {
    let mut w = files();
    let r = download("https://example.org/broken.iso", "broken.iso");
    assert_eq!(
        run_download(&mut w, &r),
        "download failed: 500 Internal Server Error"
    );
}

#[rstest]
fn decompression_is_for_isos_only() {
    let mut w = files();
    let r = DownloadRequest {
        content: "vztmpl".into(),
        compression: Some("gz".into()),
        ..download("https://example.org/t.tar.zst", "t.tar.zst")
    };
    assert_eq!(
        run_download(&mut w, &r),
        "decompression not supported for vztmpl"
    );
}

#[rstest]
#[case("local", "iso", "x.txt", 400, "filename: wrong file extension")]
#[case(
    "local",
    "import",
    "x.ovf",
    500,
    "storage 'local' is not configured for content-type 'import'"
)]
#[case(
    "local-lvm",
    "iso",
    "x.iso",
    500,
    "can't upload to storage type 'lvmthin', not a file based storage!"
)]
fn download_checks(
    #[case] sid: &str,
    #[case] ct: &str,
    #[case] file: &str,
    #[case] code: u16,
    #[case] msg: &str,
) {
    let w = files();
    assert_eq!(
        refused(w.c.download_check(sid, "pve", ct, file)),
        (code, msg.to_string())
    );
}

#[rstest]
#[case("../../etc/passwd.iso", "passwd.iso")]
#[case("my file (1).iso", "my_file__1_.iso")]
#[case("C:\\isos\\x.iso", "x.iso")]
fn file_names_are_normalised(#[case] given: &str, #[case] stored: &str) {
    assert_eq!(normalize_filename(given), stored);
}

fn upload(content: &str, filename: &str) -> UploadRequest {
    UploadRequest {
        node: "pve".into(),
        storage: "local".into(),
        content: content.into(),
        filename: filename.into(),
        tmpfilename: "/var/tmp/pveupload-0123".into(),
        size: 4096,
        checksum: None,
        now: super::T0,
    }
}

#[rstest]
#[case(
    "local-lvm",
    "iso",
    "x.iso",
    500,
    "can't upload to storage type 'lvmthin'"
)]
#[case(
    "local",
    "backup",
    "x.vma",
    400,
    "content: upload content type 'backup' not allowed"
)]
#[case(
    "local",
    "import",
    "disk.qcow2",
    500,
    "storage 'local' does not support 'import' content"
)]
#[case("local", "vztmpl", "x.zip", 400, "filename: wrong file extension")]
fn upload_checks(
    #[case] sid: &str,
    #[case] ct: &str,
    #[case] file: &str,
    #[case] code: u16,
    #[case] msg: &str,
) {
    let w = files();
    assert_eq!(
        refused(w.c.upload_check(sid, "pve", ct, file)),
        (code, msg.to_string())
    );
}

#[rstest]
fn an_upload_replaces_a_file_of_the_same_name() {
    let mut w = files();
    for size in [4096, 8192] {
        let r = UploadRequest {
            size,
            ..upload("iso", "x.iso")
        };
        let worker = w.c.upload_task(&r).expect("accepted");
        assert_eq!((worker.kind.as_str(), worker.id.as_str()), ("imgcopy", ""));
        let upid = w.run("pve", worker);
        assert_eq!(w.exit(&upid), "OK");
        assert_eq!(
            w.c.volume("local:iso/x.iso", "pve").map(|v| v.size),
            Some(size)
        );
    }
}

#[rstest]
fn an_upload_with_a_wrong_checksum_fails() {
    let mut w = files();
    let r = UploadRequest {
        checksum: Some(("aaa".into(), "bbb".into())),
        ..upload("iso", "x.iso")
    };
    let worker = w.c.upload_task(&r).expect("accepted");
    let upid = w.run("pve", worker);
    assert_eq!(
        w.exit(&upid),
        "checksum mismatch: got 'bbb' != expect 'aaa'"
    );
    assert!(w.c.volume("local:iso/x.iso", "pve").is_none());
}

#[rstest]
#[case("https://example.org/debian.iso", true, Ok(("debian.iso", Some(1000), "application/x-iso9660-image")))]
#[case(
    "https://example.org/none.iso",
    true,
    Err("invalid server response: '404 Not Found'")
)]
#[case(
    "https://self-signed.example/x.iso",
    true,
    Err(
        "invalid server response: '500 Can't connect to self-signed.example:443 (certificate verify failed)'"
    )
)]
#[case("https://self-signed.example/x.iso", false, Ok(("x.iso", Some(10), "application/x-iso9660-image")))]
fn url_metadata(
    #[case] url: &str,
    #[case] verify: bool,
    #[case] want: Result<(&str, Option<u64>, &str), &str>,
) {
    let w = files();
    let got = w.c.query_url_metadata(url, verify);
    match want {
        Ok((name, size, mime)) => {
            let v = got.expect("metadata");
            assert_eq!(v["filename"], json!(name));
            assert_eq!(v.get("size").and_then(serde_json::Value::as_u64), size);
            assert_eq!(v["mimetype"], json!(mime));
        }
        Err(msg) => assert_eq!(refused(got), (500, msg.to_string())),
    }
}

fn put_backup(w: &mut World, name: &str) {
    let s = w.c.storage("local").expect("local").clone();
    w.c.put_file_volume(
        &s,
        "pve",
        Volume {
            storage: "local".into(),
            name: format!("backup/{name}"),
            size: 1 << 20,
            format: "vma.zst".into(),
            vmid: 0,
            ctime: super::T0,
        },
    );
}

#[rstest]
fn backups_list_their_guest_time_notes_and_protection() {
    let mut w = files();
    put_backup(&mut w, "vzdump-qemu-100-2026_09_01-10_20_30.vma.zst");
    w.c.update_volume_attrs(
        "local",
        "pve",
        "backup/vzdump-qemu-100-2026_09_01-10_20_30.vma.zst",
        Some("first line\nsecond".into()),
        Some(true),
    )
    .expect("updated");
    let items =
        w.c.content_list("local", "pve", Some("backup"), None)
            .expect("list");
    assert_eq!(items.len(), 1);
    let b = &items[0];
    assert_eq!(b["subtype"], json!("qemu"));
    assert_eq!(b["vmid"], json!(100));
    assert_eq!(b["ctime"], json!(1_788_258_030), "from the file name");
    assert_eq!(b["notes"], json!("first line"));
    assert_eq!(b["protected"], json!(1));
    let (_, plan) =
        w.c.plan_volume_delete(
            "local",
            "pve",
            "backup/vzdump-qemu-100-2026_09_01-10_20_30.vma.zst",
        )
        .expect("planned");
    assert_eq!(
        plan,
        Err(crate::model::tasks::TaskFailure("cannot remove protected volume 'backup/vzdump-qemu-100-2026_09_01-10_20_30.vma.zst' on 'local'".into()))
    );
}

#[rstest]
fn backups_of_other_guests_are_filtered_by_vmid() {
    let mut w = files();
    put_backup(&mut w, "vzdump-qemu-100-2026_09_01-10_20_30.vma.zst");
    put_backup(&mut w, "vzdump-qemu-101-2026_09_01-10_20_30.vma.zst");
    let items =
        w.c.content_list("local", "pve", None, Some(101))
            .expect("list");
    let volids: Vec<&str> = items.iter().filter_map(|i| i["volid"].as_str()).collect();
    assert_eq!(
        volids,
        ["local:backup/vzdump-qemu-101-2026_09_01-10_20_30.vma.zst"]
    );
}

#[rstest]
#[case("iso/x.iso", Some("n"), None, "only backups can have notes")]
#[case(
    "iso/x.iso",
    None,
    Some(true),
    "only backups support attribute 'protected'"
)]
fn attributes_are_for_backups(
    #[case] name: &str,
    #[case] notes: Option<&str>,
    #[case] protected: Option<bool>,
    #[case] msg: &str,
) {
    let mut w = files();
    let worker = w.c.upload_task(&upload("iso", "x.iso")).expect("accepted");
    w.run("pve", worker);
    assert_eq!(
        refused(w.c.update_volume_attrs(
            "local",
            "pve",
            name,
            notes.map(str::to_string),
            protected
        )),
        (500, msg.to_string())
    );
}

#[rstest]
fn notes_on_lvm_are_not_supported() {
    let mut w = World::from_yaml(super::LAB);
    assert_eq!(
        refused(w.c.update_volume_attrs("local-lvm", "pve", "vm-100-disk-0", Some("n".into()), None)),
        (
            500,
            "volume notes are not supported for PVE::Storage::LvmThinPlugin at /usr/share/perl5/PVE/Storage/Plugin.pm line 1300."
                .into()
        )
    );
}

#[rstest]
fn an_inactive_storage_has_no_used_fraction(lab: World) {
    let mut s = lab.c.storage("local-lvm").expect("s").clone();
    let st = lab.c.storage_status(&s, "pve", None).expect("listed");
    assert!(st.get("used_fraction").is_some());
    s.disable = true;
    let st = lab.c.storage_status(&s, "pve", None).expect("listed");
    assert!(st.get("used_fraction").is_none());
    assert_eq!(st["enabled"], json!(0));
}
