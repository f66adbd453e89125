use rstest::rstest;

use super::daemons::{CephOp, in_cidr};
use super::health::Severity;
use super::*;

fn installed() -> Ceph {
    let mut c = Ceph::default();
    c.install("pve1", Release::Squid, None);
    c
}

fn inited() -> Ceph {
    let mut c = installed();
    let opts = InitOptions {
        network: Some("127.0.0.0/8".into()),
        ..Default::default()
    };
    c.init("pve1", &opts, "0b5e5a8c-0000-4000-8000-000000000001")
        .expect("init");
    c
}

fn with_first_mon() -> Ceph {
    let mut c = inited();
    let ip = c
        .prepare_create_mon("pve1", "127.0.0.1", "pve1", &[])
        .expect("prepare");
    let op = CephOp::CreateMon {
        id: "pve1".into(),
        addr: ip,
    };
    c.apply("pve1", &op, 1_000).expect("create");
    c
}

/// A fresh node answers each check with the binary it looks for.
#[rstest]
#[case(Binary::Ceph, "binary not installed: /usr/bin/ceph")]
#[case(Binary::Mon, "binary not installed: /usr/bin/ceph-mon")]
#[case(Binary::Volume, "binary not installed: /usr/sbin/ceph-volume")]
fn a_fresh_node_has_no_binary(#[case] bin: Binary, #[case] msg: &str) {
    let c = Ceph::default();
    assert_eq!(
        c.check_installed("pve1", bin)
            .expect_err("refused")
            .to_string(),
        msg
    );
    assert_eq!(
        c.check_inited("pve1").expect_err("refused").to_string(),
        "binary not installed: /usr/bin/ceph-mon"
    );
}

#[test]
fn installed_but_not_initialised() {
    let c = installed();
    assert_eq!(
        c.check_inited("pve1").expect_err("refused").to_string(),
        "pveceph configuration not initialized - missing '/etc/pve/ceph.conf', missing '/etc/pve/ceph'"
    );
    assert!(c.check_installed("pve2", Binary::Ceph).is_err());
}

#[test]
fn init_writes_global_and_is_idempotent() {
    let mut c = inited();
    c.check_configured("pve1").expect("configured");
    assert_eq!(
        c.rados("pve1").expect_err("refused").to_string(),
        NO_MONITOR
    );
    let text = c.conf().expect("conf").text();
    assert!(text.starts_with("[global]\n\tauth_client_required = cephx\n"));
    assert!(text.contains("\tpublic_network = 127.0.0.0/8\n"));
    assert!(text.contains("[client]\n\tkeyring = /etc/pve/priv/$cluster.$name.keyring\n"));
    let again = InitOptions {
        size: Some(2),
        ..Default::default()
    };
    c.init("pve1", &again, "other").expect("again");
    assert_eq!(c.fsid(), Some("0b5e5a8c-0000-4000-8000-000000000001"));
    assert_eq!(c.pool_default("osd_pool_default_size"), 3);
}

#[test]
fn init_needs_the_packages() {
    let mut c = Ceph::default();
    let e = c
        .init("pve1", &InitOptions::default(), "x")
        .expect_err("refused");
    assert_eq!(
        e.to_string(),
        "Ceph Nautilus required - please run 'pveceph install'"
    );
}

#[test]
fn the_first_monitor_makes_a_manager_and_a_quorum() {
    let c = with_first_mon();
    assert_eq!(c.mons().len(), 1);
    assert_eq!(c.mgrs().len(), 1);
    assert!(c.rados("pve1").is_ok());
    assert_eq!(c.quorum_names(), vec!["pve1".to_string()]);
    let conf = c.conf().expect("conf");
    assert_eq!(conf.get("global", "mon_host"), Some("127.0.0.1"));
    assert_eq!(conf.get("mon.pve1", "public_addr"), Some("127.0.0.1"));
    assert_eq!(
        c.db()["mon"]["auth_allow_insecure_global_id_reclaim"],
        "false"
    );
}

#[rstest]
#[case("pve1", "127.0.0.2", "monitor 'pve1' already exists")]
#[case("other", "127.0.0.1", "monitor address '127.0.0.1' already in use")]
fn a_second_monitor_is_refused(#[case] id: &str, #[case] ip: &str, #[case] msg: &str) {
    let mut c = with_first_mon();
    let e = c
        .prepare_create_mon("pve1", ip, id, &[])
        .expect_err("refused");
    assert_eq!(e.to_string(), msg);
}

#[test]
fn an_address_outside_the_public_network_is_refused() {
    let mut c = inited();
    let e = c
        .prepare_create_mon("pve1", "10.1.1.1", "pve1", &[])
        .expect_err("refused");
    assert_eq!(
        e.to_string(),
        "No active IP found for the requested ceph public network '127.0.0.0/8' on node 'pve1'"
    );
}

#[rstest]
#[case("nope", "no such monitor id 'nope'")]
#[case("pve1", "can't remove last monitor")]
fn destroying_a_monitor_is_checked(#[case] id: &str, #[case] msg: &str) {
    let c = with_first_mon();
    assert_eq!(
        c.prepare_destroy_mon("pve1", id)
            .expect_err("refused")
            .to_string(),
        msg
    );
}

#[test]
fn stopped_monitors_time_out_and_raise_mon_down() {
    let mut c = with_first_mon();
    c.declare(DaemonKind::Mon, "b", "pve2", "127.0.0.2", true)
        .expect("b");
    c.declare(DaemonKind::Mon, "c", "pve3", "127.0.0.3", true)
        .expect("c");
    c.apply(
        "pve3",
        &CephOp::Service {
            action: "stop".into(),
            service: Some("mon.c".into()),
        },
        2_000,
    )
    .expect("stop");
    let h = c.health(3);
    assert_eq!(h.status, Severity::Warn);
    assert_eq!(h.checks["MON_DOWN"].summary, "1/3 mons down, quorum pve1,b");
    c.apply(
        "pve2",
        &CephOp::Service {
            action: "stop".into(),
            service: None,
        },
        3_000,
    )
    .expect("stop all");
    assert_eq!(c.rados("pve1").expect_err("refused").to_string(), TIMEOUT);
}

#[test]
fn health_follows_osds_flags_and_mutes() {
    let mut c = with_first_mon();
    let h = c.health(0);
    assert_eq!(
        h.checks["TOO_FEW_OSDS"].summary,
        "OSD count 0 < osd_pool_default_size 3"
    );
    assert_eq!(c.health(3).status, Severity::Ok);
    assert!(c.set_flag("noout", true));
    assert!(!c.set_flag("noout", true));
    c.set_flag("pause", true);
    assert!(c.flag("pause"));
    assert_eq!(
        c.health(3).checks["OSDMAP_FLAGS"].summary,
        "pauserd,pausewr,noout flag(s) set"
    );
    c.mute(
        "OSDMAP_FLAGS",
        Some(Mute {
            sticky: false,
            ttl: None,
        }),
    );
    let h = c.health(3);
    assert!(h.checks["OSDMAP_FLAGS"].muted);
    assert_eq!(h.status, Severity::Ok);
}

#[rstest]
#[case("127.0.0.1", "127.0.0.0/8", true)]
#[case("10.0.0.1", "127.0.0.0/8", false)]
#[case("fd00::1", "fd00::/64", true)]
#[case("127.0.0.1", "fd00::/64", false)]
#[case("127.0.0.1", "bad", false)]
fn addresses_in_networks(#[case] ip: &str, #[case] net: &str, #[case] want: bool) {
    assert_eq!(in_cidr(ip, net), want);
}

#[test]
fn managers_and_metadata_servers_come_and_go() {
    let mut c = with_first_mon();
    assert_eq!(
        c.prepare_create_mds("pve1", "1a")
            .expect_err("refused")
            .to_string(),
        "ID of the MDS cannot start with a number!"
    );
    c.apply("pve1", &CephOp::CreateMds { id: "a".into() }, 5)
        .expect("mds");
    let (_, e) = c
        .apply("pve1", &CephOp::CreateMds { id: "a".into() }, 6)
        .expect_err("refused");
    assert_eq!(e, "MDS 'a' already referenced in ceph config, abort!");
    c.apply("pve1", &CephOp::DestroyMgr { id: "pve1".into() }, 7)
        .expect("mgr gone");
    assert!(c.health(3).checks.contains_key("MGR_DOWN"));
    let (_, e) = c
        .apply("pve1", &CephOp::DestroyMgr { id: "pve1".into() }, 8)
        .expect_err("refused");
    assert_eq!(
        e,
        "ceph manager directory '/var/lib/ceph/mgr/ceph-pve1' not found"
    );
}

#[test]
fn a_saved_ceph_reads_back() {
    let c = with_first_mon();
    let text = serde_json::to_string(&c).expect("json");
    let back: Ceph = serde_json::from_str(&text).expect("back");
    assert_eq!(back, c);
    assert!(Ceph::default().is_empty());
    assert_eq!(serde_json::to_string(&Ceph::default()).expect("json"), "{}");
}

fn pool_op(op: PoolOp) -> CephOp {
    CephOp::Pool { pool: op }
}

fn defaults() -> Vec<(String, String)> {
    [
        ("pg_num", "128"),
        ("size", "3"),
        ("min_size", "2"),
        ("application", "rbd"),
        ("pg_autoscale_mode", "warn"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

fn storages_with_rbd(sid: &str, pool: &str) -> crate::model::storage::Storages {
    let mut s = crate::model::storage::Storages::default();
    let p: std::collections::BTreeMap<String, String> =
        [("type", "rbd"), ("storage", sid), ("pool", pool)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    s.create(&p).expect("storage");
    s
}

#[test]
fn a_pool_is_made_with_pve_s_defaults_and_logs_what_it_applies() {
    let mut c = with_first_mon();
    let mut st = crate::model::storage::Storages::default();
    let mut hw = crate::model::node_hw::Hardware::default();
    let lines = c
        .apply_in(
            &mut Around {
                storages: &mut st,
                hardware: &mut hw,
            },
            "pve1",
            &pool_op(PoolOp::Create {
                name: "vm".into(),
                settings: defaults(),
                add_storage: true,
                erasure: None,
            }),
            5,
        )
        .expect("created");
    assert_eq!(
        lines,
        [
            "skipping 'size', did not change",
            "pool vm: applying application = rbd",
            "skipping 'min_size', did not change",
            "pool vm: applying pg_autoscale_mode = warn",
            "skipping 'pg_num', did not change",
        ]
    );
    let p = c.pool("vm").expect("pool");
    assert_eq!((p.id, p.size, p.min_size, p.pg_num), (1, 3, 2, 128));
    assert_eq!(p.applications, ["rbd"]);
    let s = st.find("vm").expect("rbd storage");
    assert_eq!(s.kind, "rbd");
    assert_eq!(s.options.get("pool").map(String::as_str), Some("vm"));
    let (_, e) = c
        .apply_in(
            &mut Around {
                storages: &mut st,
                hardware: &mut hw,
            },
            "pve1",
            &pool_op(PoolOp::Create {
                name: "vm".into(),
                settings: defaults(),
                add_storage: true,
                erasure: None,
            }),
            6,
        )
        .expect_err("storage exists");
    assert_eq!(
        e,
        "adding PVE storage for ceph pool 'vm' failed: create storage failed: storage ID 'vm' already defined"
    );
}

#[rstest]
#[case(&[("min_size", "4")], "mon_command failed - pool min_size must be between 1 and size, which is set to 3", "min_size")]
#[case(&[("size", "1")], "mon_command failed - configuring pool size as 1 is disabled by default.", "size")]
#[case(&[("crush_rule", "fast")], "mon_command failed - crush rule fast does not exist", "crush_rule")]
#[case(&[("application", "cephfs")], "mon_command failed - Are you SURE? Pool 'vm' already has an enabled application; pass --yes-i-really-mean-it to proceed anyway", "application")]
#[case(&[("pg_num_min", "256")], "mon_command failed - specified pg_num_min 256 > pg_num 128", "pg_num_min")]
fn set_pool_prints_ceph_s_refusal_and_fails(
    #[case] settings: &[(&str, &str)],
    #[case] printed: &str,
    #[case] missing: &str,
) {
    let mut c = with_first_mon();
    c.declare_pool("vm", &defaults()).expect("pool");
    let settings: Vec<(String, String)> = settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let (lines, e) = c
        .apply(
            "pve1",
            &pool_op(PoolOp::Set {
                name: "vm".into(),
                settings,
            }),
            7,
        )
        .expect_err("refused");
    assert!(lines.iter().any(|l| l == printed), "{lines:?}");
    assert_eq!(e, format!("Could not set: {missing}"));
}

#[test]
fn size_resets_min_size_and_goes_first() {
    let mut c = with_first_mon();
    c.declare_pool("vm", &defaults()).expect("pool");
    let settings = vec![
        ("min_size".to_string(), "1".to_string()),
        ("size".to_string(), "2".to_string()),
    ];
    let lines = c
        .apply(
            "pve1",
            &pool_op(PoolOp::Set {
                name: "vm".into(),
                settings,
            }),
            8,
        )
        .expect("set");
    assert_eq!(
        lines,
        [
            "pool vm: applying size = 2",
            "pool vm: applying min_size = 1"
        ]
    );
    let p = c.pool("vm").expect("pool");
    assert_eq!((p.size, p.min_size), (2, 1));
    let (_, e) = c
        .apply(
            "pve1",
            &pool_op(PoolOp::Set {
                name: "nope".into(),
                settings: Vec::new(),
            }),
            9,
        )
        .expect_err("unknown");
    assert_eq!(e, "mon_command failed - unrecognized pool 'nope'");
}

#[rstest]
#[case(
    false,
    false,
    Err("ceph pool 'vm' still in use by storage 'ceph-vm'"),
    true
)]
#[case(true, false, Ok(()), true)]
#[case(true, true, Ok(()), false)]
fn destroying_a_pool_minds_its_storages(
    #[case] force: bool,
    #[case] remove_storages: bool,
    #[case] want: std::result::Result<(), &str>,
    #[case] storage_stays: bool,
) {
    let mut c = with_first_mon();
    c.declare_pool("vm", &defaults()).expect("pool");
    let mut st = storages_with_rbd("ceph-vm", "vm");
    let s = st.find("ceph-vm").expect("storage").clone();
    st.volumes_mut().insert(
        &s,
        "pve1",
        crate::model::storage::Volume {
            storage: "ceph-vm".into(),
            name: "vm-100-disk-0".into(),
            size: 1 << 30,
            format: "raw".into(),
            vmid: 100,
            ctime: 0,
        },
    );
    let mut hw = crate::model::node_hw::Hardware::default();
    let r = c.apply_in(
        &mut Around {
            storages: &mut st,
            hardware: &mut hw,
        },
        "pve1",
        &pool_op(PoolOp::Destroy {
            name: "vm".into(),
            force,
            remove_storages,
            remove_ecprofile: true,
        }),
        9,
    );
    match (r, want) {
        (Ok(lines), Ok(())) => {
            assert!(c.pool("vm").is_none());
            assert_eq!(lines.is_empty(), force);
        }
        (Err((lines, e)), Err(msg)) => {
            assert_eq!(e, msg);
            assert_eq!(lines, ["checking storage 'ceph-vm' for RBD images.."]);
            assert!(c.pool("vm").is_some());
        }
        (r, w) => panic!("got {r:?}, wanted {w:?}"),
    }
    assert_eq!(st.find("ceph-vm").is_some(), storage_stays);
}

#[test]
fn pools_read_back_and_deletion_can_be_disabled() {
    let mut c = with_first_mon();
    c.declare_pool("vm", &defaults()).expect("pool");
    let back: Ceph = serde_json::from_str(&serde_json::to_string(&c).expect("json")).expect("back");
    assert_eq!(back, c);
    if let Some(conf) = c.conf.as_mut() {
        conf.set("global", "mon_allow_pool_delete", "false");
    }
    assert_eq!(
        c.destroy_pool("vm").expect_err("refused").to_string(),
        "mon_command failed - pool deletion is disabled; you must first set the mon_allow_pool_delete config option to true before you can destroy a pool"
    );
}

fn new_osd(dev: &str, n: u8) -> NewOsd {
    NewOsd {
        devpath: dev.into(),
        size: 4 << 40,
        class: "hdd".into(),
        encrypted: false,
        uuid: format!("0000000{n}-0000-4000-8000-000000000000"),
        vg_uuid: format!("0000000{n}-0000-4000-8000-00000000000f"),
        ..NewOsd::default()
    }
}

#[test]
fn an_osd_takes_a_free_disk_and_gives_it_back() {
    let mut c = with_first_mon();
    let mut st = crate::model::storage::Storages::default();
    let mut hw = crate::model::node_hw::Hardware::default();
    let mut around = Around {
        storages: &mut st,
        hardware: &mut hw,
    };
    let op = CephOp::CreateOsd {
        osd: Box::new(new_osd("/dev/sdb", 1)),
    };
    let lines = c.apply_in(&mut around, "pve1", &op, 10).expect("osd");
    assert_eq!(lines[0], "create OSD on /dev/sdb (bluestore)");
    assert_eq!(
        lines.last().map(String::as_str),
        Some("--> ceph-volume lvm create successful for: /dev/sdb")
    );
    let disk = around.hardware.node("pve1").disk("/dev/sdb").cloned();
    assert_eq!(disk.and_then(|d| d.usage(false)).as_deref(), Some("LVM"));
    let (_, e) = c.apply_in(&mut around, "pve1", &op, 11).expect_err("used");
    assert_eq!(e, "device '/dev/sdb' is already in use");
    assert_eq!(
        c.prepare_destroy_osd("pve1", "0", 1008)
            .expect_err("in")
            .to_string(),
        "osd is in use (in == 1)"
    );
    assert_eq!(
        c.prepare_destroy_osd("pve2", "0", 1008)
            .expect_err("elsewhere")
            .to_string(),
        "OSD osd.0 does not belong to node pve2! at /usr/share/perl5/PVE/API2/Ceph/OSD.pm line 1008."
    );
    c.set_osd_in("0", false).expect("out");
    assert_eq!(
        c.prepare_destroy_osd("pve1", "0", 1008)
            .expect_err("up")
            .to_string(),
        "osd is still running (up == 1)"
    );
    c.apply_in(
        &mut around,
        "pve1",
        &CephOp::Service {
            action: "stop".into(),
            service: Some("osd.0".into()),
        },
        12,
    )
    .expect("stopped");
    assert!(c.health(1).checks.contains_key("OSD_DOWN"));
    assert_eq!(c.prepare_destroy_osd("pve1", "0", 1008).expect("ok"), 0);
    c.apply_in(
        &mut around,
        "pve1",
        &CephOp::DestroyOsd {
            id: 0,
            cleanup: true,
        },
        13,
    )
    .expect("destroyed");
    assert!(c.osds().is_empty());
    let disk = around.hardware.node("pve1").disk("/dev/sdb").cloned();
    assert_eq!(disk.and_then(|d| d.usage(false)), None);
    assert_eq!(
        c.set_osd_in("0", true).expect_err("gone").to_string(),
        "no such OSD '0'"
    );
}

#[rstest]
#[case(
    "osd",
    "0",
    "stop",
    1,
    false,
    "unsafe to stop osd(s) at this time (128 PGs are or would become offline)"
)]
#[case(
    "osd",
    "0",
    "stop",
    3,
    true,
    "OSD(s) 0 are ok to stop without reducing availability or risking data, provided there are no other concurrent failures or interventions.\n128 PGs are likely to be degraded (but remain available) as a result."
)]
#[case("osd", "7", "stop", 3, false, "osd.7 does not exist")]
#[case(
    "osd",
    "0",
    "destroy",
    3,
    false,
    "OSD(s) 0 have 128 pgs currently mapped to them. "
)]
#[case(
    "mon",
    "pve1",
    "stop",
    3,
    false,
    "not enough monitors would be available () after stopping mons [pve1]"
)]
#[case("mon", "nope", "destroy", 3, true, "mon.nope does not exist")]
fn safety_follows_the_model(
    #[case] service: &str,
    #[case] id: &str,
    #[case] action: &str,
    #[case] osds: u8,
    #[case] safe: bool,
    #[case] status: &str,
) {
    let mut c = with_first_mon();
    for n in 0..osds {
        let dev = format!("/dev/sd{}", char::from(b'b' + n));
        c.declare_osd("pve1", &new_osd(&dev, n), true, true, 0)
            .expect("osd");
    }
    c.declare_pool("vm", &defaults()).expect("pool");
    let s = c.cmd_safety(service, id, action).expect("answer");
    assert_eq!((s.code == 0, s.status.as_str()), (safe, status));
    assert_eq!(
        c.cmd_safety("mds", "a", "destroy")
            .expect_err("unsupported")
            .to_string(),
        "Service does not support this action: mds: destroy"
    );
}

#[test]
fn a_file_system_needs_a_standby_and_makes_its_pools() {
    let mut c = with_first_mon();
    assert_eq!(
        c.prepare_create_fs("pve1", "cephfs")
            .expect_err("no mds")
            .to_string(),
        "no running Metadata Server (MDS) found!"
    );
    c.apply("pve1", &CephOp::CreateMds { id: "a".into() }, 5)
        .expect("mds");
    c.prepare_create_fs("pve1", "cephfs").expect("ok");
    let mut st = crate::model::storage::Storages::default();
    let mut hw = crate::model::node_hw::Hardware::default();
    let mut around = Around {
        storages: &mut st,
        hardware: &mut hw,
    };
    let op = CephOp::Fs {
        fs: FsOp::Create {
            name: "cephfs".into(),
            pg_num: 128,
            add_storage: true,
        },
    };
    let lines = c.apply_in(&mut around, "pve1", &op, 6).expect("fs");
    assert_eq!(lines[0], "creating data pool 'cephfs_data'...");
    assert!(
        lines
            .iter()
            .any(|l| l == "Successfully create CephFS 'cephfs'")
    );
    assert_eq!(c.pool("cephfs_metadata").map(|p| p.pg_num), Some(32));
    assert_eq!(c.active_mds().get("a").map(String::as_str), Some("cephfs"));
    assert_eq!(
        around.storages.find("cephfs").map(|s| s.kind.as_str()),
        Some("cephfs")
    );
    assert_eq!(
        c.prepare_create_fs("pve1", "other")
            .expect_err("no standby")
            .to_string(),
        "no standby Metadata Server (MDS) found!"
    );
    let destroy = |remove_storages| CephOp::Fs {
        fs: FsOp::Destroy {
            name: "cephfs".into(),
            remove_storages,
            remove_pools: true,
        },
    };
    let (_, e) = c
        .apply_in(&mut around, "pve1", &destroy(true), 7)
        .expect_err("enabled storage");
    assert_eq!(
        e,
        "storage 'cephfs' is not disabled, make sure to disable and unmount the storage first"
    );
    c.apply_in(&mut around, "pve1", &destroy(false), 8)
        .expect("destroyed");
    assert!(c.filesystems().is_empty());
    assert!(c.pools().is_empty());
}

/// Three OSDs on pve1's `/dev/sdb`..`/dev/sdd`, the first `up` of them
/// running.
fn three_osds(c: &mut Ceph, up: u8) {
    for n in 0..3u8 {
        let dev = format!("/dev/sd{}", char::from(b'b' + n));
        c.declare_osd("pve1", &new_osd(&dev, n), n < up, true, 0)
            .expect("osd");
    }
}

#[test]
fn a_rolling_restart_checks_health_then_goes_osd_by_osd() {
    let mut c = with_first_mon();
    three_osds(&mut c, 2);
    let opts = restart::BulkRestart {
        set_noout: true,
        timeout: 600,
        dry_run: false,
        force: false,
        only_outdated: false,
        resume: false,
    };
    let op = |opts: &restart::BulkRestart| CephOp::RestartBulk { opts: opts.clone() };
    let (_, e) = c.apply("pve1", &op(&opts), 1).expect_err("warn");
    assert_eq!(
        e,
        "Ceph cluster has blocking HEALTH_WARN issues, refusing rolling restart of 'osd' daemons (pass force=1 to override):\n  - OSD_DOWN: 1 osds down"
    );
    let dry = restart::BulkRestart {
        dry_run: true,
        ..opts.clone()
    };
    let lines = c.apply("pve1", &op(&dry), 2).expect("dry run");
    assert_eq!(
        lines,
        [
            "[DRY-RUN] planned rolling restart order on 'pve1':",
            "  [1/3] osd.0",
            "  [2/3] osd.1",
            "  [3/3] osd.2",
            "[DRY-RUN] no daemons were restarted",
        ]
    );
    let forced = restart::BulkRestart {
        force: true,
        ..opts
    };
    let lines = c.apply("pve1", &op(&forced), 3).expect("restarted");
    assert_eq!(
        lines[0],
        "WARNING: proceeding past HEALTH_WARN blockers due to force=1:"
    );
    assert_eq!(
        lines.last().map(String::as_str),
        Some("rolling restart of 'osd' daemons on node 'pve1' finished")
    );
    assert!(c.osds().iter().all(|o| o.up));
}

/// A cluster-wide restart run with `opts`: its lines (or its error and
/// lines) and the sub-tasks it started.
fn cluster_restart(
    c: &mut Ceph,
    kind: &str,
    opts: &restart::BulkRestart,
) -> (
    std::result::Result<(), String>,
    Vec<String>,
    Vec<restart::SubTask>,
) {
    let mut subs = Vec::new();
    let mut out = Vec::new();
    let known = ["pve1".to_string(), "pve2".to_string()];
    let r = c.run_cluster_restart(
        kind,
        opts,
        "pve1",
        &known,
        &mut |t| {
            subs.push(t);
            format!("UPID:{}", subs.len())
        },
        &mut out,
    );
    (r.map_err(|e| e.to_string()), out, subs)
}

fn restart_opts() -> restart::BulkRestart {
    restart::BulkRestart {
        set_noout: true,
        timeout: 600,
        dry_run: false,
        force: false,
        only_outdated: false,
        resume: false,
    }
}

#[test]
fn a_cluster_restart_of_managers_needs_a_standby_and_restarts_remote_ones_by_sub_task() {
    let mut c = with_first_mon();
    // Enough OSDs for a healthy cluster.
    three_osds(&mut c, 3);
    let (r, _, _) = cluster_restart(&mut c, "mgr", &restart_opts());
    assert_eq!(
        r.expect_err("no standby"),
        "[1/1] Ceph reports 'mgr.pve1' is not safe to stop: no standby mgr available for failover, would cause mgr outage"
    );
    c.mgrs.push(Daemon {
        id: "pve2".into(),
        host: "pve2".into(),
        running: true,
    });
    let (r, lines, subs) = cluster_restart(&mut c, "mgr", &restart_opts());
    r.expect("restarted");
    assert_eq!(
        lines,
        [
            "planned rolling restart order:",
            "  [1/2] pve1: mgr.pve1",
            "  [2/2] pve2: mgr.pve2",
            "[1/2] restarting mgr.pve1 on pve1 (local)",
            "[1/2] waiting up to 600s for mgr.pve1 to come back up",
            "[1/2] mgr.pve1 is up",
            "[2/2] restarting mgr.pve2 on pve2 (remote)",
            "[2/2] sub-task UPID: UPID:1",
            "[2/2] waiting up to 600s for mgr.pve2 to come back up",
            "[2/2] mgr.pve2 is up",
            "rolling restart of 'mgr' daemons across the cluster finished",
        ]
    );
    assert_eq!(subs.len(), 1);
    assert_eq!(
        (subs[0].node.as_str(), subs[0].id.as_str()),
        ("pve2", "mgr.pve2")
    );
    // A daemon on a node outside the cluster stops it before anything.
    c.mgrs.push(Daemon {
        id: "zz".into(),
        host: "gone".into(),
        running: true,
    });
    let (r, lines, _) = cluster_restart(&mut c, "mgr", &restart_opts());
    assert!(r.expect_err("stale").starts_with(
        "daemon 'mgr.zz' is registered on host 'gone' which is not in the cluster node list"
    ),);
    assert!(lines.is_empty());
    let (r, lines, _) = cluster_restart(&mut c, "mds", &restart_opts());
    r.expect("nothing to do");
    assert_eq!(lines, ["no 'mds' daemons found in cluster, nothing to do"]);
}

#[test]
fn a_cluster_restart_of_osds_runs_each_node_s_own_restart() {
    let mut c = with_first_mon();
    three_osds(&mut c, 2);
    let (r, _, subs) = cluster_restart(&mut c, "osd", &restart_opts());
    assert!(r.expect_err("warn").starts_with(
        "Ceph cluster has blocking HEALTH_WARN issues, refusing rolling restart of 'osd' daemons"
    ));
    assert!(subs.is_empty());
    let dry = restart::BulkRestart {
        dry_run: true,
        ..restart_opts()
    };
    let (_, lines, _) = cluster_restart(&mut c, "osd", &dry);
    assert_eq!(
        lines,
        [
            "[DRY-RUN] planned cluster-wide rolling restart of OSDs (per-node):",
            "  [1/1] pve1 (3 OSDs)",
            "[DRY-RUN] no daemons were restarted",
        ]
    );
    let outdated = restart::BulkRestart {
        only_outdated: true,
        ..dry
    };
    let (_, lines, _) = cluster_restart(&mut c, "osd", &outdated);
    assert_eq!(lines, ["no outdated OSDs found in cluster, nothing to do"]);
    let forced = restart::BulkRestart {
        force: true,
        ..restart_opts()
    };
    let (r, lines, subs) = cluster_restart(&mut c, "osd", &forced);
    r.expect("restarted");
    assert_eq!(
        &lines[lines.len() - 4..],
        [
            "[1/1] starting per-node OSD bulk-restart on pve1 (3 OSDs)",
            "[1/1] sub-task UPID: UPID:1",
            "[1/1] finished on pve1: rolling restart of 'osd' daemons on node 'pve1' finished",
            "cluster-wide OSD rolling restart finished",
        ]
    );
    assert_eq!(subs[0].id, "pve1-osd");
    assert!(subs[0].error.is_none());
    assert!(
        subs[0].log.iter().any(|l| l == "[1/3] restarting osd.0"),
        "{:?}",
        subs[0].log
    );
    assert!(c.osds().iter().all(|o| o.up));
}

#[test]
fn an_erasure_coded_pool_comes_with_its_profile_metadata_pool_and_storage() {
    let mut c = with_first_mon();
    let mut st = crate::model::storage::Storages::default();
    let mut hw = crate::model::node_hw::Hardware::default();
    let ec = crate::model::ceph::erasure::ErasureCoding::parse("k=2,m=1").expect("parses");
    let lines = c
        .apply_in(
            &mut Around {
                storages: &mut st,
                hardware: &mut hw,
            },
            "pve1",
            &pool_op(PoolOp::Create {
                name: "ec".into(),
                settings: defaults(),
                add_storage: true,
                erasure: Some(ec),
            }),
            5,
        )
        .expect("created");
    assert_eq!(
        lines,
        [
            "created new erasure code profile 'pve_ec_ec'",
            "pool ec-data: applying allow_ec_overwrites = true",
            "pool ec-data: applying application = rbd",
            "pool ec-data: applying pg_autoscale_mode = warn",
            "skipping 'pg_num', did not change",
            "skipping 'size', did not change",
            "pool ec-metadata: applying application = rbd",
            "skipping 'min_size', did not change",
            "pool ec-metadata: applying pg_autoscale_mode = warn",
            "skipping 'pg_num', did not change",
        ]
    );
    let data = c.pool("ec-data").expect("data pool");
    assert_eq!((data.size, data.min_size, data.pg_num), (3, 2, 128));
    assert_eq!(data.crush_rule(), "ec-data");
    assert_eq!(data.ec.as_ref().map(|e| e.overwrites), Some(true));
    let meta = c.pool("ec-metadata").expect("metadata pool");
    assert_eq!(
        (meta.size, meta.pg_num, meta.crush_rule()),
        (3, 32, "replicated_rule")
    );
    assert_eq!(
        c.ec_profile("pve_ec_ec")
            .and_then(|p| p.get("crush-failure-domain").cloned()),
        Some("host".into())
    );
    let s = st.find("ec").expect("rbd storage");
    assert_eq!(
        s.options.get("pool").map(String::as_str),
        Some("ec-metadata")
    );
    assert_eq!(
        s.options.get("data-pool").map(String::as_str),
        Some("ec-data")
    );
    let rules: Vec<String> = c.crush_rules().into_iter().map(|(_, r)| r).collect();
    assert_eq!(rules, ["replicated_rule", "ec-data"]);
    for (setting, value, msg) in [
        (
            "size",
            "4",
            "mon_command failed - can not change the size of an erasure-coded pool",
        ),
        (
            "min_size",
            "1",
            "mon_command failed - pool min_size must be between 2 and size, which is set to 3",
        ),
        (
            "allow_ec_overwrites",
            "false",
            "mon_command failed - ec overwrites cannot be disabled once enabled",
        ),
    ] {
        let e = c
            .set_pool_setting("ec-data", setting, value)
            .expect_err(setting);
        assert_eq!(e.to_string(), msg);
    }
    let e = c
        .set_pool_setting("ec-metadata", "allow_ec_overwrites", "true")
        .expect_err("replicated");
    assert_eq!(
        e.to_string(),
        "mon_command failed - ec overwrites can only be enabled for an erasure coded pool"
    );
    c.set_ec_profile(
        "pve_ec_ec",
        &crate::model::ceph::erasure::ErasureCoding::parse("k=2,m=1").expect("same"),
    )
    .expect("the same profile again is accepted");
    let e = c
        .set_ec_profile(
            "pve_ec_ec",
            &crate::model::ceph::erasure::ErasureCoding::parse("k=3,m=1").expect("other"),
        )
        .expect_err("another profile of that name");
    assert!(
        e.to_string()
            .starts_with("mon_command failed - will not override erasure code profile pve_ec_ec"),
        "{e}"
    );
}

#[rstest]
#[case("k=2,m=1", Ok((2, 1)))]
#[case("k=4,m=2,failure-domain=osd,device-class=ssd", Ok((4, 2)))]
#[case(
    "k=1,m=1",
    Err("erasure-coding: invalid format - k: value must have a minimum value of 2")
)]
#[case("m=1", Err("erasure-coding: invalid format - property 'k' is missing"))]
#[case(
    "k=2,m=1,x=3",
    Err("erasure-coding: invalid format - unexpected property 'x'")
)]
fn erasure_coding_is_read_as_pve_s_format(
    #[case] text: &str,
    #[case] want: std::result::Result<(u32, u32), &str>,
) {
    let got = crate::model::ceph::erasure::ErasureCoding::parse(text);
    match (got, want) {
        (Ok(ec), Ok(kv)) => assert_eq!((ec.k, ec.m), kv),
        (Err(e), Err(msg)) => {
            let map = e.errors().expect("parameter error");
            let text: Vec<String> = map.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            assert_eq!(text.join("\n"), msg);
        }
        (got, want) => panic!("got {got:?}, wanted {want:?}"),
    }
}

#[test]
fn destroying_an_erasure_coded_pool_removes_its_profile_unless_told_not_to() {
    for keep in [false, true] {
        let mut c = with_first_mon();
        let mut st = crate::model::storage::Storages::default();
        let mut hw = crate::model::node_hw::Hardware::default();
        let mut around = Around {
            storages: &mut st,
            hardware: &mut hw,
        };
        let ec = crate::model::ceph::erasure::ErasureCoding::parse("k=2,m=1").expect("parses");
        c.apply_in(
            &mut around,
            "pve1",
            &pool_op(PoolOp::Create {
                name: "ec".into(),
                settings: defaults(),
                add_storage: false,
                erasure: Some(ec),
            }),
            5,
        )
        .expect("created");
        let lines = c
            .apply_in(
                &mut around,
                "pve1",
                &pool_op(PoolOp::Destroy {
                    name: "ec-data".into(),
                    force: true,
                    remove_storages: false,
                    remove_ecprofile: !keep,
                }),
                6,
            )
            .expect("destroyed");
        let mut want =
            vec!["found erasure coded profile 'pve_ec_ec', destroying its CRUSH rule".to_string()];
        if !keep {
            want.push("destroying erasure coded profile 'pve_ec_ec'".into());
        }
        assert_eq!(lines, want);
        assert!(c.pool("ec-data").is_none());
        assert_eq!(c.ec_profile("pve_ec_ec").is_some(), keep);
        assert_eq!(c.crush_rules().len(), 1);
    }
}
