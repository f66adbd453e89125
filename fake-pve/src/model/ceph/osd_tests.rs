//! OSDs with their `block.db`/`block.wal` on other devices and several
//! OSDs per device.

use rstest::rstest;

use super::daemons::CephOp;
use super::osds::{NewLv, disk_requirements};
use super::*;
use crate::model::node_hw::{Hardware, NodeHw};
use crate::model::storage::Storages;

fn cluster() -> Ceph {
    let mut c = Ceph::default();
    c.install("pve1", Release::Squid, None);
    let opts = InitOptions {
        network: Some("127.0.0.0/8".into()),
        ..Default::default()
    };
    c.init("pve1", &opts, "0b5e5a8c-0000-4000-8000-000000000001")
        .expect("init");
    let ip = c
        .prepare_create_mon("pve1", "127.0.0.1", "pve1", &[])
        .expect("prepare");
    c.apply(
        "pve1",
        &CephOp::CreateMon {
            id: "pve1".into(),
            addr: ip,
        },
        1_000,
    )
    .expect("mon");
    c
}

fn uuid(n: u8, tail: char) -> String {
    format!("0000000{n}-0000-4000-8000-00000000000{tail}")
}

fn new_osd(dev: &str, n: u8) -> NewOsd {
    NewOsd {
        devpath: dev.into(),
        size: 4_000_787_030_016,
        class: "hdd".into(),
        uuid: uuid(n, 'a'),
        vg_uuid: uuid(n, 'b'),
        ..NewOsd::default()
    }
}

fn lv(dev: &str, n: u8, size: Option<u64>) -> Option<NewLv> {
    Some(NewLv {
        dev: dev.into(),
        size,
        vg_uuid: uuid(n, 'c'),
        lv_uuid: uuid(n, 'd'),
    })
}

/// Runs a Ceph task on `pve1` with `hw` as its disks.
fn run(c: &mut Ceph, hw: &mut Hardware, op: &CephOp) -> Result<Vec<String>, (Vec<String>, String)> {
    let mut st = Storages::default();
    let mut around = Around {
        storages: &mut st,
        hardware: hw,
    };
    c.apply_in(&mut around, "pve1", op, 5_000)
}

fn create(c: &mut Ceph, hw: &mut Hardware, osd: NewOsd) -> Vec<String> {
    run(c, hw, &CephOp::CreateOsd { osd: Box::new(osd) }).expect("created")
}

#[test]
fn a_db_takes_a_tenth_of_the_osd_on_a_new_volume_group() {
    let (mut c, mut hw) = (cluster(), Hardware::default());
    let mut osd = new_osd("/dev/sdb", 1);
    osd.db = lv("/dev/nvme0n1", 1, None);
    let lines = create(&mut c, &mut hw, osd);
    let vg = format!("ceph-{}", uuid(1, 'c'));
    let lv = format!("osd-db-{}", uuid(1, 'd'));
    assert_eq!(lines[0], "create OSD on /dev/sdb (bluestore)");
    assert_eq!(lines[1], "creating block.db on '/dev/nvme0n1'");
    assert_eq!(
        lines[2],
        "  Physical volume \"/dev/nvme0n1\" successfully created."
    );
    assert_eq!(
        lines[3],
        format!("  Volume group \"{vg}\" successfully created")
    );
    assert_eq!(lines[4], format!("  Logical volume \"{lv}\" created."));
    assert_eq!(lines[5], format!("using '{vg}/{lv}' for block.db"));
    assert!(lines.contains(&format!(
        "Running command: /bin/ln -snf /dev/{vg}/{lv} /var/lib/ceph/osd/ceph-0/block.db"
    )));
    let db = c.osd(0).and_then(|o| o.db.clone()).expect("db");
    // 10% of the OSD's disk, in whole extents.
    assert_eq!(
        db.size,
        400_078_703_001u64 / 1024 * 1024 / (4 << 20) * (4 << 20) + (4 << 20)
    );
    assert_eq!(db.class, "nvme");
    let info = c.volume_info("pve1", "/dev/nvme0n1").expect("db there");
    assert_eq!((info.osdids.len(), info.db, info.wal), (0, 1, 0));
    let node = hw.node("pve1");
    let nvme = node.osd_device_info("/dev/nvme0n1").expect("nvme");
    assert_eq!(nvme.used.as_deref(), Some("LVM"));
}

#[test]
fn a_second_db_goes_into_the_ceph_volume_group_there_and_zaps_one_by_one() {
    let (mut c, mut hw) = (cluster(), Hardware::default());
    let mut first = new_osd("/dev/sdb", 1);
    first.db = lv("/dev/nvme0n1", 1, Some(8 << 30));
    first.wal = lv("/dev/nvme0n1", 3, Some(1 << 30));
    create(&mut c, &mut hw, first);
    let mut second = new_osd("/dev/sdc", 2);
    second.db = lv("/dev/nvme0n1", 2, Some(8 << 30));
    let lines = create(&mut c, &mut hw, second);
    let vg = format!("ceph-{}", uuid(1, 'c'));
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("Physical volume \"/dev/nvme0n1\""))
    );
    assert_eq!(c.osd(1).and_then(|o| o.db.clone()).expect("db").vg, vg);
    assert_eq!(c.osd(0).and_then(|o| o.wal.clone()).expect("wal").vg, vg);
    let info = c.volume_info("pve1", "/dev/nvme0n1").expect("there");
    assert_eq!((info.db, info.wal), (2, 1));
    for id in [0, 1] {
        c.set_osd_in(&id.to_string(), false).expect("out");
    }
    for id in ["osd.0", "osd.1"] {
        let op = CephOp::Service {
            action: "stop".into(),
            service: Some(id.into()),
        };
        run(&mut c, &mut hw, &op).expect("stop");
    }
    let lines = run(
        &mut c,
        &mut hw,
        &CephOp::DestroyOsd {
            id: 0,
            cleanup: true,
        },
    )
    .expect("destroyed");
    assert!(
        lines.contains(
            &"--> More than 1 LV left in VG, will proceed to destroy LV only".to_string()
        )
    );
    assert_eq!(
        hw.node("pve1")
            .vgs()
            .iter()
            .find(|v| v.name == vg)
            .map(|v| v.lvcount),
        Some(1)
    );
    let lines = run(
        &mut c,
        &mut hw,
        &CephOp::DestroyOsd {
            id: 1,
            cleanup: true,
        },
    )
    .expect("destroyed");
    assert!(lines.contains(&format!(
        "--> Only 1 LV left in VG, will proceed to destroy volume group {vg}"
    )));
    let node = hw.node("pve1");
    assert_eq!(
        node.osd_device_info("/dev/nvme0n1").expect("nvme").used,
        None
    );
    assert!(c.volume_info("pve1", "/dev/nvme0n1").is_none());
}

#[rstest]
#[case(Some("osd"), "1073741824", Ok(1 << 30))]
#[case(Some("global"), "2147483648", Ok(2 << 30))]
#[case(None, "3221225472", Ok(3 << 30))]
#[case(Some("osd"), "1G", Err("invalid size '1G'"))]
fn the_db_size_comes_from_the_config(
    #[case] who: Option<&str>,
    #[case] value: &str,
    #[case] want: Result<u64, &str>,
) {
    let (mut c, mut hw) = (cluster(), Hardware::default());
    match who {
        Some(w) => c.db_set(w, "bluestore_block_db_size", value),
        None => {
            if let Some(conf) = c.conf.as_mut() {
                conf.set("osd", "bluestore_block_db_size", value);
            }
        }
    }
    let mut osd = new_osd("/dev/sdb", 1);
    osd.db = lv("/dev/nvme0n1", 1, None);
    let got = run(&mut c, &mut hw, &CephOp::CreateOsd { osd: Box::new(osd) })
        .map(|_| c.osd(0).and_then(|o| o.db.clone()).map_or(0, |d| d.size))
        .map_err(|(_, e)| e);
    assert_eq!(got, want.map_err(str::to_string));
}

#[rstest]
#[case(
    Some(2_000_000_000_000),
    "'/dev/nvme0n1' is smaller than requested size '2000000000000' bytes"
)]
#[case(
    Some(1_000_204_000_000),
    "lvcreate 'ceph-00000001-0000-4000-8000-00000000000c/osd-db-00000001-0000-4000-8000-00000000000d' error:   Volume group \"ceph-00000001-0000-4000-8000-00000000000c\" has insufficient free space (238467 extents): 238468 required."
)]
fn a_db_too_big_fails_the_task(#[case] size: Option<u64>, #[case] msg: &str) {
    let (mut c, mut hw) = (cluster(), Hardware::default());
    let mut osd = new_osd("/dev/sdb", 1);
    osd.db = lv("/dev/nvme0n1", 1, size);
    let (_, e) =
        run(&mut c, &mut hw, &CephOp::CreateOsd { osd: Box::new(osd) }).expect_err("too big");
    assert_eq!(e, msg);
    assert!(c.osds().is_empty());
}

#[rstest]
#[case("/dev/sdb", None, "device '/dev/sdb' is already in use")]
#[case(
    "/dev/sdc",
    lv("/dev/sda", 1, None),
    "device '/dev/sda' is not GPT partitioned"
)]
#[case(
    "/dev/sdc",
    lv("/dev/sda3", 1, None),
    "device '/dev/sda3' is already in use and has no LVM on it"
)]
fn the_devices_are_checked(#[case] dev: &str, #[case] db: Option<NewLv>, #[case] msg: &str) {
    let mut hw = NodeHw::fresh();
    hw.ceph_osd_create("/dev/sdb", "ceph-x").expect("osd");
    let mut osd = new_osd(dev, 1);
    osd.db = db;
    let mut node = hw.clone();
    if msg.contains("GPT") {
        node = strip_gpt(hw);
    } else if msg.contains("no LVM") {
        node = other_use(hw);
    }
    assert_eq!(
        disk_requirements(&node, &osd)
            .expect_err("refused")
            .to_string(),
        msg
    );
}

/// The system disk with its GPT flag off.
fn strip_gpt(hw: NodeHw) -> NodeHw {
    let mut v = serde_json::to_value(&hw).expect("json");
    if let Some(disks) = v["disks"].as_array_mut() {
        for d in disks.iter_mut().filter(|d| d["devpath"] == "/dev/sda") {
            d["gpt"] = serde_json::json!(false);
        }
    }
    serde_json::from_value(v).expect("back")
}

/// The system disk's third partition holding a file system.
fn other_use(hw: NodeHw) -> NodeHw {
    let mut v = serde_json::to_value(&hw).expect("json");
    if let Some(disks) = v["disks"].as_array_mut() {
        for d in disks.iter_mut().filter(|d| d["devpath"] == "/dev/sda") {
            d["partitions"][2]["used"] = serde_json::json!("ext4");
        }
    }
    serde_json::from_value(v).expect("back")
}

#[test]
fn a_batch_splits_the_disk_between_its_osds() {
    let (mut c, mut hw) = (cluster(), Hardware::default());
    let mut osd = new_osd("/dev/nvme0n1", 1);
    osd.per_device = Some(2);
    osd.more_uuids = vec![uuid(2, 'a')];
    let lines = create(&mut c, &mut hw, osd);
    assert!(lines.contains(&"--> relative data size: 0.5".to_string()));
    assert_eq!(c.osds().len(), 2);
    let half = c.osd(0).map(|o| o.size).expect("osd.0");
    assert_eq!(Some(half), c.osd(1).map(|o| o.size));
    assert!(half < 1_000_204_886_016 / 2 + 1);
    let info = c.volume_info("pve1", "/dev/nvme0n1").expect("osds");
    assert_eq!(info.osdids.len(), 2);
    c.set_osd_in("0", false).expect("out");
    run(
        &mut c,
        &mut hw,
        &CephOp::Service {
            action: "stop".into(),
            service: Some("osd.0".into()),
        },
    )
    .expect("stop");
    run(
        &mut c,
        &mut hw,
        &CephOp::DestroyOsd {
            id: 0,
            cleanup: true,
        },
    )
    .expect("destroyed");
    let node = hw.node("pve1");
    assert_eq!(
        node.osd_device_info("/dev/nvme0n1")
            .expect("nvme")
            .used
            .as_deref(),
        Some("LVM")
    );
}

#[test]
fn a_batch_refuses_a_partition() {
    let (mut c, mut hw) = (cluster(), Hardware::default());
    hw.node_mut("pve1")
        .apply(
            "pve1",
            &crate::model::node_hw::disks::DiskOp::DirCreate {
                name: "d".into(),
                device: "/dev/sdb".into(),
                filesystem: "ext4".into(),
                add_storage: false,
            },
        )
        .expect("dir");
    hw.node_mut("pve1")
        .apply(
            "pve1",
            &crate::model::node_hw::disks::DiskOp::DirRemove {
                name: "d".into(),
                cleanup_config: false,
                cleanup_disks: false,
            },
        )
        .expect("gone");
    hw.node_mut("pve1")
        .apply(
            "pve1",
            &crate::model::node_hw::disks::DiskOp::Wipe {
                disk: "/dev/sdb1".into(),
            },
        )
        .expect("wiped");
    let mut osd = new_osd("/dev/sdb1", 1);
    osd.per_device = Some(2);
    let (lines, e) =
        run(&mut c, &mut hw, &CephOp::CreateOsd { osd: Box::new(osd) }).expect_err("partition");
    assert_eq!(
        e,
        "command 'ceph-volume lvm batch --osds-per-device 2 --yes --no-auto -- /dev/sdb1' failed: exit code 2"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.ends_with("is a partition, please pass LVs or raw block devices"))
    );
    assert!(c.osds().is_empty());
}
