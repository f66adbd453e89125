use rstest::rstest;
use serde_json::json;

use super::disks::DiskOp;
use super::*;
use crate::api::node_hw::view;
use crate::model::PveVersion;

fn fresh() -> NodeHw {
    NodeHw::fresh()
}

/// A fresh node: the system disk used by its first partition, the data
/// disks unused, partitions listed with their parent.
#[test]
fn fresh_disks_list_as_pve_lists_them() {
    let hw = fresh();
    let list = view::disks_list(&hw, None, false, false);
    let paths: Vec<&str> = list.iter().filter_map(|d| d["devpath"].as_str()).collect();
    assert_eq!(paths, ["/dev/nvme0n1", "/dev/sda", "/dev/sdb", "/dev/sdc"]);
    assert_eq!(list[1]["used"], "BIOS boot");
    assert_eq!(list[1]["wearout"], 99);
    assert!(list[2].get("used").is_none());
    assert_eq!(list[2]["wearout"], "N/A");
    let unused = view::disks_list(&hw, Some("unused"), false, false);
    assert_eq!(unused.len(), 3);
    let parts = view::disks_list(&hw, None, true, true);
    let sda3 = parts
        .iter()
        .find(|d| d["devpath"] == "/dev/sda3")
        .expect("sda3 listed");
    assert_eq!(sda3["parent"], "/dev/sda");
    assert_eq!(sda3["used"], "LVM");
    assert_eq!(
        parts
            .iter()
            .find(|d| d["devpath"] == "/dev/sda")
            .expect("sda")["used"],
        "partitions"
    );
    assert_eq!(
        parts
            .iter()
            .find(|d| d["devpath"] == "/dev/sdb")
            .expect("sdb")["health"],
        "UNKNOWN"
    );
}

#[rstest]
#[case("/dev/sdz", "not a valid block device")]
#[case("sdb", "got unusual device path '/sdb'")]
#[case("/dev/disk/by-id/nope", "not a valid block device")]
#[case("/dev/nosuch/disk", "failed to get absolute path to /dev/nosuch/disk")]
#[case("/tmp/x/y", "failed to get absolute path to /tmp/x/y")]
fn bad_device_paths_are_refused_as_pve_refuses_them(#[case] path: &str, #[case] msg: &str) {
    let e = fresh().verify_blockdev_path(path).expect_err("refused");
    assert_eq!(e.message(), msg);
}

#[rstest]
#[case("/dev/sda", "disk /dev/sda already in use")]
#[case("/dev/sda3", "/dev/sda3 is a partition")]
fn initgpt_refusals(#[case] disk: &str, #[case] msg: &str) {
    assert_eq!(
        fresh().check_initgpt(disk).expect_err("refused").message(),
        msg
    );
}

#[rstest]
#[case("/dev/sda", "disk/partition '/dev/sda2' is mounted")]
#[case("/dev/sda3", "disk/partition '/dev/sda3' has a holder")]
fn wipe_refusals(#[case] disk: &str, #[case] msg: &str) {
    assert_eq!(
        fresh().check_wipe(disk).expect_err("refused").message(),
        msg
    );
}

#[rstest]
#[case("single", &["/dev/sdb", "/dev/sdc"], "please give only one disk for single disk mode")]
#[case("mirror", &["/dev/sdb"], "mirror needs at least 2 disks")]
#[case("raid10", &["/dev/sdb", "/dev/sdc", "/dev/nvme0n1"], "raid10 needs an even number of disks")]
#[case("raidz", &["/dev/sdb", "/dev/sdc"], "raidz needs at least 3 disks")]
#[case("single", &["/dev/sda"], "device '/dev/sda' is already in use")]
fn zfs_creation_refusals(#[case] level: &str, #[case] devs: &[&str], #[case] msg: &str) {
    let devs: Vec<String> = devs.iter().map(|d| (*d).to_string()).collect();
    let e = fresh()
        .check_zfs("pve", "tank", &devs, level, None)
        .expect_err("refused");
    assert_eq!(e.message(), msg);
}

/// A mirror takes both disks: they are used by ZFS, the pool is listed,
/// and another pool of that name is refused.
#[test]
fn a_zfs_mirror_marks_its_disks_used() {
    let mut hw = fresh();
    let op = DiskOp::ZfsCreate {
        name: "tank".into(),
        devices: vec!["/dev/sdb".into(), "/dev/sdc".into()],
        raidlevel: "mirror".into(),
        ashift: 12,
        compression: "on".into(),
        draid: String::new(),
        add_storage: false,
    };
    assert!(hw.start_lines(&op)[0].starts_with(
        "# /sbin/zpool create -o ashift=12 tank mirror /dev/disk/by-id/ata-ST4000NM000A-2HZ100_"
    ));
    let (_, size) = hw.apply("pve", &op).expect("created");
    assert!(size > 3_000_000_000_000 && size < 4_000_787_030_016);
    let pools = view::zpools(&hw);
    assert_eq!(pools[0]["name"], "tank");
    assert_eq!(pools[0]["health"], "ONLINE");
    let list = view::disks_list(&hw, Some("unused"), true, false);
    assert_eq!(list.len(), 1);
    assert_eq!(view::disks_list(&hw, None, true, false)[2]["used"], "ZFS");
    let e = hw
        .check_zfs("pve", "tank", &["/dev/nvme0n1".into()], "single", None)
        .expect_err("exists");
    assert_eq!(e.message(), "pool 'tank' already exists on node 'pve'");
    let detail = view::zpool_detail(&hw, "tank").expect("detail");
    assert_eq!(detail["children"][0]["children"][0]["name"], "mirror-0");
    // Destroyed without cleanup, the disks keep their ZFS labels.
    let rm = DiskOp::ZfsRemove {
        name: "tank".into(),
        cleanup_config: false,
        cleanup_disks: false,
    };
    hw.apply("pve", &rm).expect("removed");
    assert!(view::zpools(&hw).is_empty());
    assert_eq!(
        view::disks_list(&hw, None, true, false)[2]["used"],
        "zfs_member"
    );
    let e = hw.apply("pve", &rm).expect_err("gone");
    assert_eq!(
        e.message(),
        "command 'zpool destroy tank' failed: exit code 1"
    );
}

/// LVM-thin on a disk: a volume group with one thin pool, the disk
/// held; removing the pool with cleanup-disks wipes the disk.
#[test]
fn lvmthin_create_and_remove_with_cleanup() {
    let mut hw = fresh();
    let op = DiskOp::LvmThinCreate {
        name: "fast".into(),
        device: "/dev/nvme0n1".into(),
        add_storage: false,
    };
    hw.apply("pve", &op).expect("created");
    let pools = view::thinpools(&hw, Some("fast"));
    assert_eq!(pools.len(), 1);
    assert_eq!(pools[0]["lv"], "fast");
    assert_eq!(
        hw.check_wipe("/dev/nvme0n1").expect_err("held").message(),
        "disk/partition '/dev/nvme0n1' has a holder"
    );
    let e = hw.apply("pve", &op).expect_err("in use");
    assert_eq!(e.message(), "device '/dev/nvme0n1' is already in use");
    let rm = DiskOp::LvmThinRemove {
        vg: "fast".into(),
        lv: "fast".into(),
        cleanup_config: false,
        cleanup_disks: true,
    };
    let (lines, _) = hw.apply("pve", &rm).expect("removed");
    assert!(lines.contains(&"wiping block device /dev/nvme0n1".to_string()));
    assert!(hw.disk("/dev/nvme0n1").expect("disk").used.is_none());
    assert!(
        !view::lvm(&hw)["children"]
            .as_array()
            .expect("vgs")
            .iter()
            .any(|v| v["name"] == "fast")
    );
    let e = hw.apply("pve", &rm).expect_err("gone");
    assert_eq!(e.message(), "no such thin pool fast/fast");
}

/// A directory storage: a partition with the file system, mounted by a
/// unit named after the escaped path.
#[test]
fn directory_on_a_disk_is_partitioned_and_mounted() {
    let mut hw = fresh();
    let op = DiskOp::DirCreate {
        name: "back-ups".into(),
        device: "/dev/sdb".into(),
        filesystem: "xfs".into(),
        add_storage: false,
    };
    assert!(
        hw.start_lines(&op)
            .contains(&"# /sbin/mkfs -t xfs /dev/sdb1".to_string())
    );
    hw.apply("pve", &op).expect("created");
    let units = view::mounts(&hw);
    assert_eq!(
        units[0]["unitfile"],
        "/etc/systemd/system/mnt-pve-back\\x2dups.mount"
    );
    assert_eq!(units[0]["type"], "xfs");
    assert_eq!(
        hw.check_wipe("/dev/sdb").expect_err("mounted").message(),
        "disk/partition '/dev/sdb1' is mounted"
    );
    assert_eq!(
        hw.check_dir("back-ups").expect_err("exists").message(),
        "a systemd mount unit already exists: /etc/systemd/system/mnt-pve-back\\x2dups.mount"
    );
    let rm = DiskOp::DirRemove {
        name: "back-ups".into(),
        cleanup_config: false,
        cleanup_disks: false,
    };
    hw.apply("pve", &rm).expect("removed");
    assert_eq!(view::disks_list(&hw, None, true, false)[2]["used"], "xfs");
}

/// `mounted` is there only on a mounted disk or partition, as 1:
/// `get_disks` leaves it out otherwise (pve-storage's "only set mounted
/// property for mounted devices"; a real 8.4/9.x node's list of unmounted
/// disks has no `mounted`).
#[test]
fn only_a_mounted_device_says_mounted() {
    let mut hw = fresh();
    let listed = |hw: &NodeHw, dev: &str| {
        view::disks_list(hw, None, true, true)
            .into_iter()
            .find(|d| d["devpath"] == dev)
            .unwrap_or_else(|| panic!("{dev} listed"))
    };
    assert!(listed(&hw, "/dev/sdb").get("mounted").is_none());
    assert!(listed(&hw, "/dev/sda3").get("mounted").is_none());
    let op = DiskOp::DirCreate {
        name: "back-ups".into(),
        device: "/dev/sdb".into(),
        filesystem: "ext4".into(),
        add_storage: false,
    };
    hw.apply("pve", &op).expect("created");
    assert_eq!(listed(&hw, "/dev/sdb1")["mounted"], 1);
    assert!(listed(&hw, "/dev/sdb").get("mounted").is_none());
}

#[test]
fn pci_scan_filters_classes_and_names_devices() {
    let hw = fresh();
    let all = view::pci_scan(&hw, &[], true);
    let filtered = view::pci_scan(&hw, &["05", "06", "0b"], true);
    assert!(all.len() > filtered.len());
    assert!(
        filtered
            .iter()
            .all(|d| !d["class"].as_str().unwrap_or("").starts_with("0x06"))
    );
    let gpu = filtered
        .iter()
        .find(|d| d["vendor"] == "0x10de")
        .expect("gpu");
    assert_eq!(gpu["mdev"], 1);
    assert_eq!(gpu["device_name"], "TU104GL [Tesla T4]");
    assert!(
        view::pci_scan(&hw, &[], false)[0]
            .get("vendor_name")
            .is_none()
    );
    assert_eq!(view::mdev_types(&hw, "65:00.0").len(), 4);
    assert!(view::mdev_types(&hw, "0000:00:14.0").is_empty());
}

#[rstest]
#[case(PveVersion::V8_4, "pc-q35-9.2+pve1", 76 + 4)]
#[case(PveVersion::V9_1, "pc-q35-10.1", 90 + 4)]
#[case(PveVersion::V9_2, "pc-q35-11.0+pve2", 90 + 9 + 4)]
fn capabilities_follow_the_release(
    #[case] v: PveVersion,
    #[case] first: &str,
    #[case] cpus: usize,
) {
    let view = crate::api::node_hw::view::machine;
    let machines: Vec<_> = catalog::machines(v).iter().map(view).collect();
    assert_eq!(machines[0]["id"], first);
    assert!(machines.iter().any(|m| m["id"] == "pc-i440fx-4.1+pve2"));
    assert_eq!(catalog::cpu_models(v, "x86_64").len(), cpus);
    let models: Vec<_> = catalog::cpu_models(v, "x86_64")
        .iter()
        .map(crate::api::node_hw::view::cpu_model)
        .collect();
    let v3 = models
        .iter()
        .find(|m| m["name"] == "x86-64-v3")
        .expect("x86-64-v3");
    assert_eq!(
        v3,
        &json!({ "name": "x86-64-v3", "custom": 0, "abstract": 1, "vendor": "default" })
    );
}

#[rstest]
#[case(PveVersion::V8_4, "8.4.14/b502d23c55afcba1", "6.8.12-15-pve")]
#[case(PveVersion::V9_1, "9.1.5/80cf92a64bef6889", "6.17.2-1-pve")]
#[case(PveVersion::V9_2, "9.2.11/f6997e698c7933ea", "7.0.14-12-pve")]
fn versions_name_the_running_manager_and_kernel(
    #[case] v: PveVersion,
    #[case] manager: &str,
    #[case] kernel: &str,
) {
    let list = crate::api::node_hw::view::apt_versions(v);
    assert_eq!(list[0]["Package"], "proxmox-ve");
    assert_eq!(list[0]["RunningKernel"], kernel);
    assert_eq!(list[1]["ManagerVersion"], manager);
    assert_eq!(
        list[2]["Package"],
        format!("proxmox-kernel-{kernel}-signed")
    );
}

/// The ids `GET .../capabilities/qemu/machines` lists on `version`.
fn machine_ids(version: PveVersion) -> Vec<String> {
    catalog::machines(version)
        .iter()
        .map(|m| {
            crate::api::node_hw::view::machine(m)["id"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

/// 9.2 ships QEMU 11.0: its two `+pveN` revisions come first, and the
/// machine versions of 9.1 follow unchanged; the packages are 9.2's.
#[test]
fn release_9_2_has_qemu_11_and_its_packages() {
    let ids = machine_ids(PveVersion::V9_2);
    assert_eq!(
        ids[..6],
        [
            "pc-q35-11.0+pve2",
            "pc-i440fx-11.0+pve2",
            "pc-q35-11.0+pve1",
            "pc-i440fx-11.0+pve1",
            "pc-q35-11.0",
            "pc-i440fx-11.0",
        ]
    );
    let older = machine_ids(PveVersion::V9_1);
    assert_eq!(ids[6..], older[..]);
    assert!(
        !older.iter().any(|id| id.contains("11.0")),
        "9.1 has no QEMU 11.0"
    );
    assert_eq!(
        catalog::is_installed(PveVersion::V9_2, "pve-qemu-kvm"),
        Some("11.0.2-1")
    );
    assert_eq!(
        catalog::is_installed(PveVersion::V9_2, "qemu-server"),
        Some("9.2.5")
    );
    assert_eq!(
        catalog::is_installed(PveVersion::V9_2, "proxmox-kernel-7.0"),
        Some("7.0.14-12")
    );
    assert_eq!(
        catalog::is_installed(PveVersion::V9_2, "proxmox-kernel-6.17"),
        None
    );
    assert_eq!(
        catalog::is_installed(PveVersion::V9_1, "qemu-server"),
        Some("9.1.4")
    );
}

#[test]
fn scenario_disks_replace_the_data_disks() {
    let spec: HardwareSpec = serde_yaml::from_str(
        "disks: [{ dev: sdd, size: 2T, type: ssd, wearout: 87 }, { dev: /dev/nvme1n1, size: 1T }]",
    )
    .expect("spec");
    let mut all = Hardware::default();
    all.seed("pve", &spec).expect("seeded");
    let list = view::disks_list(&all.node("pve"), None, false, false);
    let paths: Vec<&str> = list.iter().filter_map(|d| d["devpath"].as_str()).collect();
    assert_eq!(paths, ["/dev/nvme1n1", "/dev/sda", "/dev/sdd"]);
    assert_eq!(list[2]["wearout"], 87);
    assert_eq!(list[0]["type"], "nvme");
    let bad: HardwareSpec =
        serde_yaml::from_str("disks: [{ dev: floppy, size: 1M }]").expect("spec");
    assert_eq!(
        all.seed("pve", &bad).map_err(|e| e.to_string()),
        Err("invalid disk 'floppy'".into())
    );
    assert!(Hardware::default().is_empty());
}

/// A certificate reads back as `get_certificate_info` reads it; an
/// upload needs a key, `force` to replace one, a readable certificate
/// and a matching key.
#[test]
fn custom_certificates_are_checked_as_set_cert_files_does() {
    let ck =
        rcgen::generate_simple_self_signed(vec!["pve.example.com".into(), "192.0.2.10".into()])
            .expect("certificate");
    let pem = ck.cert.pem();
    let key = ck.signing_key.serialize_pem();
    let info = crate::api::node_hw::view::certificate(
        &certs::certificate_info(&pem, "pve-ssl.pem").expect("info"),
    );
    assert_eq!(info["filename"], "pve-ssl.pem");
    assert_eq!(info["san"], json!(["pve.example.com", "192.0.2.10"]));
    assert_eq!(info["public-key-type"], "id-ecPublicKey");
    assert_eq!(info["public-key-bits"], 256);
    assert_eq!(info["subject"], "/CN=rcgen self signed cert");
    assert_eq!(info["fingerprint"].as_str().map(str::len), Some(32 * 3 - 1));
    let e = certs::upload(None, &pem, None, false).expect_err("no key");
    assert_eq!(
        e.errors().and_then(|m| m.get("key")).map(String::as_str),
        Some("Attempted to upload custom certificate without (existing) key.")
    );
    let (cert, up) =
        certs::upload(None, &format!("leading text\n{pem}"), Some(&key), false).expect("uploaded");
    assert_eq!(up.filename, "pveproxy-ssl.pem");
    let e = certs::upload(Some(&cert), &pem, None, false).expect_err("exists");
    assert_eq!(
        e.message(),
        "Setting certificate files failed - Custom certificate file exists but force flag is not set."
    );
    certs::upload(Some(&cert), &pem, None, true).expect("forced, the old key kept");
    let other = rcgen::KeyPair::generate().expect("key").serialize_pem();
    let e = certs::upload(None, &pem, Some(&other), false).expect_err("mismatch");
    assert!(
        e.message()
            .starts_with("Setting certificate files failed - key does not match")
    );
    let e = certs::certificate_info("garbage", "pveproxy-ssl.pem").expect_err("unreadable");
    assert_eq!(
        e.message(),
        "unable to read certificate from 'pveproxy-ssl.pem'"
    );
}
