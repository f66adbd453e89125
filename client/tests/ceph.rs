//! Ceph's pools, OSDs, file systems and safety checks (`api::ceph`)
//! against an in-process fake-pve; every answer checked against the
//! schema.

mod common;

use common::{Mode, checked_client};
use fake_pve::{Running, Scenario};
use pve_client::api::ceph::PoolSpec;

const NODE: &str = "pve";

/// One node with Ceph initialised: a monitor, a manager, a metadata
/// server and an OSD on `/dev/sdb`.
const SCENARIO: &str = r"
nodes:
  - { name: pve, ip: 127.0.0.1 }
users:
  - userid: root@pam
    tokens:
      - { tokenid: automation, secret: 0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60, privsep: false }
ceph:
  release: squid
  network: 127.0.0.0/8
  mons: [pve]
  mgrs: [pve]
  mdss: [pve]
  osds: [{ node: pve, disk: /dev/sdb }]
";

async fn start() -> Running {
    common::builder()
        .scenario(Scenario::parse(SCENARIO, "ceph.yaml").expect("scenario"))
        .start()
        .await
        .expect("fake-pve starts")
}

#[tokio::test]
async fn a_pool_is_made_changed_and_destroyed() {
    let run = start().await;
    let (pve, checked) = checked_client(&run, Mode::Token);
    let ceph = pve.ceph(NODE);
    assert!(ceph.lspools().await.expect("list").is_empty());

    let upid = ceph
        .createpool("vm", &PoolSpec::default(), true)
        .await
        .expect("create");
    pve.tasks().wait(&upid).await.expect("created");
    let pools = ceph.lspools().await.expect("list");
    assert_eq!(pools.len(), 1);
    assert_eq!(
        (
            pools[0].pool_name.as_str(),
            pools[0].size,
            pools[0].min_size
        ),
        ("vm", 3, 2)
    );
    assert_eq!(pools[0].kind, "replicated");

    let upid = ceph
        .setpool(
            "vm",
            &PoolSpec {
                min_size: Some(5),
                ..PoolSpec::default()
            },
        )
        .await
        .expect("set");
    let err = pve.tasks().wait(&upid).await.expect_err("refused");
    assert!(err.to_string().contains("Could not set: min_size"), "{err}");
    let status = ceph.getpool("vm", true).await.expect("status");
    assert_eq!(status["min_size"], 2);
    assert_eq!(status["application_list"][0], "rbd");
    let err = ceph.getpool("nope", false).await.expect_err("unknown");
    assert!(
        err.to_string().contains("unrecognized pool 'nope'"),
        "{err}"
    );

    let upid = ceph.destroypool("vm", false, true).await.expect("destroy");
    pve.tasks().wait(&upid).await.expect("destroyed");
    assert!(ceph.lspools().await.expect("list").is_empty());
    let names = checked.names();
    for call in [
        "GET lspools",
        "POST createpool",
        "PUT setpool",
        "GET getpool",
        "DELETE destroypool",
    ] {
        assert!(
            names.iter().any(|n| n == call),
            "{call} not checked: {names:?}"
        );
    }
}

/// `createosd` and `destroyosd` name no permissions: only root@pam
/// itself may call them, not a token of it.
#[tokio::test]
async fn osds_come_and_go_and_safety_is_asked() {
    let run = start().await;
    let (token, _) = checked_client(&run, Mode::Token);
    let err = token
        .ceph(NODE)
        .createosd("/dev/sdc", None)
        .await
        .expect_err("root only");
    assert!(
        err.to_string()
            .contains("Permission check failed (user != root@pam)"),
        "{err}"
    );
    let (pve, checked) = checked_client(&run, Mode::Password);
    let ceph = pve.ceph(NODE);
    let tree = ceph.osd_index().await.expect("tree");
    assert_eq!(
        tree["root"]["children"][0]["children"][0]["children"][0]["name"],
        "osd.0"
    );
    let safe = ceph.cmd_safety("osd", "0", "stop").await.expect("safety");
    assert!(safe.safe, "{safe:?}");

    let upid = ceph
        .createosd("/dev/sdc", Some("ssd"))
        .await
        .expect("create");
    pve.tasks().wait(&upid).await.expect("created");
    let err = ceph.createosd("/dev/sdc", None).await.expect_err("used");
    assert!(
        err.to_string()
            .contains("device '/dev/sdc' is already in use"),
        "{err}"
    );
    let meta = ceph.osddetails(1).await.expect("metadata");
    assert_eq!(meta["devices"][0]["physical_device"], "sdc");
    let lv = ceph.osdvolume(1).await.expect("lv-info");
    assert!(
        lv["vg_name"]
            .as_str()
            .is_some_and(|v| v.starts_with("ceph-")),
        "{lv}"
    );
    ceph.scrub(1, true).await.expect("scrub");

    let err = ceph.destroyosd(1, true).await.expect_err("in");
    assert!(err.to_string().contains("osd is in use (in == 1)"), "{err}");
    ceph.set_osd_in(1, false).await.expect("out");
    let err = ceph.destroyosd(1, true).await.expect_err("up");
    assert!(
        err.to_string().contains("osd is still running (up == 1)"),
        "{err}"
    );

    let upid = ceph.createfs("cephfs", false).await.expect("fs");
    pve.tasks().wait(&upid).await.expect("fs made");
    let fs = ceph.fs_index().await.expect("fs list");
    assert_eq!(fs[0].data_pool, "cephfs_data");
    let names = checked.names();
    for call in [
        "GET index",
        "POST createosd",
        "GET osddetails",
        "GET osdvolume",
        "POST scrub",
        "POST out",
        "GET cmd_safety",
        "POST createfs",
    ] {
        assert!(
            names.iter().any(|n| n == call),
            "{call} not checked: {names:?}"
        );
    }
}

/// An OSD with its `block.db` on the NVMe disk: the volume shows in its
/// metadata and `lv-info`; the same disk twice is refused.
#[tokio::test]
async fn an_osd_gets_its_db_on_another_disk() {
    let run = start().await;
    let (pve, _checked) = checked_client(&run, Mode::Password);
    let ceph = pve.ceph(NODE);
    let twice = pve_client::api::ceph::OsdSpec {
        db_dev: Some("/dev/sdc".into()),
        ..Default::default()
    };
    let err = ceph
        .createosd_with("/dev/sdc", &twice)
        .await
        .expect_err("twice");
    assert!(
        err.to_string()
            .contains("cannot chose '/dev/sdc' for more than one type."),
        "{err}"
    );
    let spec = pve_client::api::ceph::OsdSpec {
        db_dev: Some("/dev/nvme0n1".into()),
        db_dev_size: Some(1.5),
        ..Default::default()
    };
    let upid = ceph
        .createosd_with("/dev/sdc", &spec)
        .await
        .expect("create");
    pve.tasks().wait(&upid).await.expect("created");
    let meta = ceph.osddetails(1).await.expect("metadata");
    assert_eq!(meta["devices"][1]["device"], "db");
    let db = ceph.osdvolume_of(1, "db").await.expect("db volume");
    assert_eq!(db["lv_size"], 1_610_612_736u64);
    let err = ceph.osdvolume_of(1, "wal").await.expect_err("no wal");
    assert!(
        err.to_string()
            .contains("volume type 'wal' not found for OSD 1"),
        "{err}"
    );
}
