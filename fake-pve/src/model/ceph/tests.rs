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
