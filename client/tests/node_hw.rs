//! A node's disks, hardware, packages and scans (`api::node_hw`) against
//! an in-process fake-pve: a ZFS mirror made with its storage and
//! destroyed with its disks wiped, an LVM volume group, the capabilities
//! and packages of the release; every answer is checked against the
//! schema.

mod common;

use common::{Mode, checked_client, start};
use pve_client::api::node_hw::{Cleanup, ZfsCreate};

const NODE: &str = "pve";

#[tokio::test]
async fn a_zfs_mirror_takes_two_disks_and_gives_them_back() {
    let run = start().await;
    let (pve, checked) = checked_client(&run, Mode::Token);
    let disks = pve.disks();
    let unused = disks.list(NODE, Some("unused")).await.expect("list");
    let names: Vec<&str> = unused.iter().map(|d| d.devpath.as_str()).collect();
    assert_eq!(names, ["/dev/nvme0n1", "/dev/sdb", "/dev/sdc"]);
    let upid = disks
        .zfs_create(
            NODE,
            &ZfsCreate::new("tank", "mirror", &["/dev/sdb", "/dev/sdc"]).add_storage(true),
        )
        .await
        .expect("create");
    assert_eq!(upid.kind(), "zfscreate");
    assert_eq!(upid.id(), "tank");
    let done = pve.tasks().wait(&upid).await.expect("wait");
    assert!(done.succeeded(), "{done:?}");
    let all = disks.list(NODE, None).await.expect("list");
    let sdb = all.iter().find(|d| d.devpath == "/dev/sdb").expect("sdb");
    assert_eq!(sdb.used.as_deref(), Some("ZFS"));
    assert!(sdb.gpt);
    let pools = disks.zfs_index(NODE).await.expect("pools");
    assert_eq!(pools[0]["name"], "tank");
    let detail = disks.zfs_detail(NODE, "tank").await.expect("detail");
    assert_eq!(detail["children"][0]["children"][0]["name"], "mirror-0");
    let err = disks
        .zfs_create(NODE, &ZfsCreate::new("tank", "single", &["/dev/nvme0n1"]))
        .await
        .expect_err("twice");
    assert!(
        err.to_string()
            .contains("pool 'tank' already exists on node 'pve'"),
        "{err}"
    );
    let storage: serde_json::Value = pve
        .get("/storage/tank", &pve_client::Params::new())
        .await
        .expect("storage");
    assert_eq!(storage["type"], "zfspool");
    assert_eq!(storage["nodes"], NODE);

    let upid = disks
        .zfs_delete(
            NODE,
            "tank",
            Cleanup {
                config: true,
                disks: true,
            },
        )
        .await
        .expect("delete");
    assert!(pve.tasks().wait(&upid).await.expect("wait").succeeded());
    assert_eq!(
        disks.list(NODE, Some("unused")).await.expect("list").len(),
        3
    );
    assert!(
        pve.get("/storage/tank", &pve_client::Params::new())
            .await
            .is_err()
    );

    let upid = disks
        .lvm_create(NODE, "vg1", "/dev/nvme0n1", false)
        .await
        .expect("lvm");
    assert!(pve.tasks().wait(&upid).await.expect("wait").succeeded());
    let tree = disks.lvm_index(NODE).await.expect("lvm");
    let vgs: Vec<&str> = tree["children"]
        .as_array()
        .expect("children")
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert_eq!(vgs, ["pve", "vg1"]);
    let smart = disks
        .smart(NODE, "/dev/nvme0n1", true)
        .await
        .expect("smart");
    assert_eq!(smart, serde_json::json!({ "health": "PASSED" }));

    let names = checked.names();
    for want in ["GET list", "GET detail", "GET smart"] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
}

#[tokio::test]
async fn capabilities_packages_and_scans_of_the_release() {
    let run = start().await;
    let (pve, _checked) = checked_client(&run, Mode::Password);
    let cpus = pve.hardware().cpu_models(NODE).await.expect("cpu");
    assert!(cpus.iter().any(|c| c["name"] == "x86-64-v2-AES"));
    let machines = pve.hardware().types(NODE).await.expect("machines");
    assert_eq!(machines[0]["id"], "pc-q35-11.0+pve2");
    let pci = pve.hardware().pci_scan(NODE, None).await.expect("pci");
    assert!(pci.iter().all(|d| d["class"] != "0x060000"));
    let mdev = pve
        .hardware()
        .mdevscan(NODE, "0000:65:00.0")
        .await
        .expect("mdev");
    assert_eq!(mdev.len(), 4);
    assert_eq!(pve.hardware().usbscan(NODE).await.expect("usb").len(), 2);
    let versions = pve.apt().versions(NODE).await.expect("versions");
    assert_eq!(versions[1]["Package"], "pve-manager");
    assert_eq!(versions[1]["Version"], "9.2.11");
    assert!(
        pve.apt()
            .list_updates(NODE)
            .await
            .expect("updates")
            .is_empty()
    );
    let upid = pve.apt().update_database(NODE).await.expect("update");
    assert_eq!(upid.kind(), "aptupdate");
    let log = pve
        .apt()
        .changelog(NODE, "nope", None)
        .await
        .expect("changelog");
    assert_eq!(log, "E: Unable to locate package nope\nRC: 100");
    let vgs = pve.scan().lvmscan(NODE).await.expect("lvm");
    assert_eq!(vgs[0]["vg"], "pve");
    let thin = pve.scan().lvmthinscan(NODE, "pve").await.expect("thin");
    assert_eq!(thin[0]["lv"], "data");
    let err = pve
        .scan()
        .nfsscan(NODE, "nas.invalid")
        .await
        .expect_err("unknown");
    assert!(
        err.to_string()
            .contains("unable to resolve address for server 'nas.invalid'"),
        "{err}"
    );
    assert!(
        pve.scan()
            .iscsiscan(NODE, "192.0.2.99")
            .await
            .expect("iscsi")
            .is_empty()
    );
}
