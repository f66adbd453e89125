//! The VM disk, migration, feature, cloud-init and statistics calls
//! (`api::qemu`) against an in-process fake-pve, in both authentication
//! modes, every answer checked against the schema.

mod common;

use common::{MODES, Mode, SCENARIO, builder, checked_client, client, start};
use pve_client::api::qemu::{
    CloudInitDump, ConfigView, Consolidation, CreateVm, Feature, MigrateVm, MoveDisk, ResizeVm,
    Timeframe, UpdateVm,
};
use pve_client::api::storage::StorageCreate;
use pve_client::propstring::Disk;
use pve_client::{Category, Client, Error};

const NODE: &str = "pve";

fn task_failed(e: &Error) -> &str {
    match e {
        Error::TaskFailed { exitstatus, .. } => exitstatus,
        other => panic!("expected a failed task, got {other:?}"),
    }
}

async fn vm_with_disk(pve: &Client, vmid: u32, disk: &str) {
    pve.qemu()
        .create_vm_and_wait(
            NODE,
            &CreateVm::new(vmid)
                .name("disks")
                .disk("scsi0", &Disk::new(disk)),
        )
        .await
        .expect("create");
}

fn assert_checked(names: &[String], want: &[&str]) {
    for w in want {
        assert!(names.iter().any(|n| n == w), "{w} not checked: {names:?}");
    }
}

#[tokio::test]
async fn resize_grows_and_refuses_to_shrink() {
    for mode in MODES {
        let run = start().await;
        let (pve, checked) = checked_client(&run, mode);
        let q = pve.qemu();
        vm_with_disk(&pve, 200, "local-lvm:4").await;

        let st = q
            .resize_vm_and_wait(NODE, 200, &ResizeVm::new("scsi0", "+2G"))
            .await
            .expect("grow by 2G");
        assert_eq!(st.kind, "resize", "{mode:?}");
        let c = q
            .vm_config(NODE, 200, &ConfigView::Pending)
            .await
            .expect("config");
        assert_eq!(c.disks["scsi0"].size.as_deref(), Some("6G"));
        let digest = c.digest.clone().expect("digest");
        q.resize_vm_and_wait(NODE, 200, &ResizeVm::new("scsi0", "8G").digest(&digest))
            .await
            .expect("grow to 8G");
        let c = q
            .vm_config(NODE, 200, &ConfigView::Pending)
            .await
            .expect("config");
        assert_eq!(c.disks["scsi0"].size.as_deref(), Some("8G"));

        let e = q
            .resize_vm_and_wait(NODE, 200, &ResizeVm::new("scsi0", "4G"))
            .await
            .expect_err("shrink");
        assert_eq!(task_failed(&e), "shrinking disks is not supported");
        let e = q
            .resize_vm_and_wait(NODE, 200, &ResizeVm::new("scsi9", "+1G"))
            .await
            .expect_err("no such disk");
        assert_eq!(task_failed(&e), "disk 'scsi9' does not exist");
        let e = q
            .resize_vm(NODE, 200, &ResizeVm::new("scsi0", "lots"))
            .await
            .expect_err("bad size");
        assert_eq!(e.category(), Category::Validation, "{e}");
        assert_checked(&checked.names(), &["PUT resize_vm"]);
    }
}

#[tokio::test]
async fn move_disks_between_storages_and_vms_and_unlink() {
    for mode in MODES {
        let run = start().await;
        let (pve, checked) = checked_client(&run, mode);
        let q = pve.qemu();
        pve.storage()
            .create(
                &StorageCreate::new("images2", "dir")
                    .option("path", "/mnt/images2")
                    .content(&["images"]),
            )
            .await
            .expect("a second image storage");
        vm_with_disk(&pve, 200, "local-lvm:2").await;

        let st = q
            .move_vm_disk_and_wait(
                NODE,
                200,
                &MoveDisk::to_storage("scsi0", "images2").format("qcow2"),
            )
            .await
            .expect("move");
        assert_eq!(st.kind, "qmmove", "{mode:?}");
        let c = q
            .vm_config(NODE, 200, &ConfigView::Pending)
            .await
            .expect("config");
        assert_eq!(c.disks["scsi0"].file, "images2:200/vm-200-disk-0.qcow2");
        assert_eq!(
            c.get_other("unused0").as_deref(),
            Some("local-lvm:vm-200-disk-0"),
            "without delete the source stays"
        );

        // Refusals, with PVE's messages.
        let e = q
            .move_vm_disk(
                NODE,
                200,
                &MoveDisk::to_storage("scsi0", "images2").format("qcow2"),
            )
            .await
            .expect_err("same place");
        assert_eq!(
            e.message(),
            "you can't move to the same storage with same format"
        );
        let e = q
            .move_vm_disk(NODE, 200, &MoveDisk::to_storage("scsi0", "local"))
            .await
            .expect_err("no images on local");
        assert_eq!(
            e.param_errors()
                .and_then(|p| p.get("storage"))
                .map(String::as_str),
            Some("storage 'local' does not support vm images")
        );

        // To another VM, then unlinked there.
        vm_with_disk(&pve, 201, "local-lvm:1").await;
        q.move_vm_disk_and_wait(NODE, 200, &MoveDisk::to_vm("unused0", 201, "scsi1"))
            .await
            .expect("reassign");
        let c = q
            .vm_config(NODE, 201, &ConfigView::Pending)
            .await
            .expect("config");
        assert!(c.disks.contains_key("scsi1"), "{c:?}");
        assert!(
            q.vm_config(NODE, 200, &ConfigView::Pending)
                .await
                .expect("config")
                .get_other("unused0")
                .is_none()
        );
        q.unlink(NODE, 201, &["scsi1"], false)
            .await
            .expect("unlink");
        let c = q
            .vm_config(NODE, 201, &ConfigView::Pending)
            .await
            .expect("config");
        assert!(!c.disks.contains_key("scsi1"));
        assert!(c.get_other("unused0").is_some(), "{c:?}");
        q.unlink(NODE, 201, &["unused0"], true)
            .await
            .expect("unlink and delete");
        let c = q
            .vm_config(NODE, 201, &ConfigView::Pending)
            .await
            .expect("config");
        assert!(c.get_other("unused0").is_none(), "{c:?}");
        assert_checked(&checked.names(), &["POST move_vm_disk", "PUT unlink"]);
    }
}

#[tokio::test]
async fn migrate_with_preconditions() {
    for mode in MODES {
        let scenario = format!("{SCENARIO}nodes:\n  - name: pve\n  - name: pve2\n");
        let run = builder()
            .scenario(fake_pve::Scenario::parse(&scenario, "migrate.yaml").expect("scenario"))
            .start()
            .await
            .expect("fake-pve starts");
        let (pve, checked) = checked_client(&run, mode);
        let q = pve.qemu();
        vm_with_disk(&pve, 300, "local-lvm:1").await;

        let pre = q
            .migrate_vm_precondition(NODE, 300, Some("pve2"))
            .await
            .expect("precondition");
        assert!(!pre.running, "{mode:?}");
        assert!(pre.allowed_nodes.contains(&"pve2".to_string()), "{pre:?}");
        assert!(
            pre.local_disks
                .iter()
                .any(|d| d.volid == "local-lvm:vm-300-disk-0"),
            "{pre:?}"
        );

        let e = q
            .migrate_vm(NODE, 300, &MigrateVm::new("pve"))
            .await
            .expect_err("to itself");
        assert_eq!(e.category(), Category::Validation);
        assert_eq!(
            e.param_errors()
                .and_then(|p| p.get("target"))
                .map(String::as_str),
            Some("target is local node.")
        );
        let e = q
            .migrate_vm(NODE, 300, &MigrateVm::new("pve9"))
            .await
            .expect_err("unknown node");
        assert_eq!(e.message(), "no such cluster node 'pve9'");

        let st = q
            .migrate_vm_and_wait(NODE, 300, &MigrateVm::new("pve2").with_local_disks(true))
            .await
            .expect("migrate");
        assert_eq!(st.kind, "qmigrate");
        let moved = q.vm_status("pve2", 300).await.expect("on pve2");
        assert_eq!(moved.status, "stopped");
        assert!(q.vm_status(NODE, 300).await.is_err(), "gone from pve");
        assert_checked(
            &checked.names(),
            &["GET migrate_vm_precondition", "POST migrate_vm"],
        );
    }
}

#[tokio::test]
async fn features_and_keys() {
    for mode in MODES {
        let run = start().await;
        let (pve, checked) = checked_client(&run, mode);
        let q = pve.qemu();
        vm_with_disk(&pve, 200, "local-lvm:1").await;

        let f = q
            .vm_feature(NODE, 200, Feature::Copy, None)
            .await
            .expect("copy");
        assert!(f.has_feature, "{mode:?}: {f:?}");
        assert_eq!(f.nodes, ["pve"]);
        let f = q
            .vm_feature(NODE, 200, Feature::Clone, None)
            .await
            .expect("clone");
        assert!(!f.has_feature, "linked clones need a template");
        let e = q
            .vm_feature(NODE, 200, Feature::Snapshot, Some("nope"))
            .await
            .expect_err("no snapshot");
        assert_eq!(e.message(), "snapshot 'nope' does not exist");

        let e = q
            .vm_sendkey(NODE, 200, "ctrl-alt-delete", false)
            .await
            .expect_err("stopped");
        assert_eq!(e.message(), "VM 200 not running");
        q.vm_sendkey(NODE, 101, "ctrl-alt-delete", false)
            .await
            .expect("running VM");
        assert_eq!(
            q.monitor(NODE, 101, "info status").await.expect("monitor"),
            "VM status: running\r\n"
        );
        assert_eq!(
            q.monitor(NODE, 200, "info status").await.expect("monitor"),
            "ERROR: VM 200 not running\n"
        );
        assert_checked(
            &checked.names(),
            &["GET vm_feature", "POST monitor", "PUT vm_sendkey"],
        );
    }
}

#[tokio::test]
async fn cloud_init_pending_update_and_dumps() {
    for mode in MODES {
        let run = start().await;
        let (pve, checked) = checked_client(&run, mode);
        let q = pve.qemu();
        q.create_vm_and_wait(
            NODE,
            &CreateVm::new(200)
                .name("ci")
                .disk("scsi0", &Disk::new("local-lvm:1"))
                .set("ide2", "local-lvm:cloudinit")
                .set("ciuser", "admin")
                .set("cipassword", "secret"),
        )
        .await
        .expect("create");

        let items = q.cloudinit_pending(NODE, 200).await.expect("pending");
        let ciuser = items.iter().find(|i| i.key == "ciuser").expect("ciuser");
        assert_eq!(
            ciuser.value.as_ref().and_then(|v| v.as_str()),
            Some("admin"),
            "{mode:?}"
        );
        assert!(!ciuser.is_pending());
        let pw = items
            .iter()
            .find(|i| i.key == "cipassword")
            .expect("cipassword");
        assert_eq!(
            pw.value.as_ref().and_then(|v| v.as_str()),
            Some("**********")
        );

        let user = q
            .cloudinit_generated_config_dump(NODE, 200, CloudInitDump::User)
            .await
            .expect("user-data");
        assert!(user.starts_with("#cloud-config"), "{user}");
        assert!(user.contains("admin"), "{user}");
        let net = q
            .cloudinit_generated_config_dump(NODE, 200, CloudInitDump::Network)
            .await
            .expect("network-config");
        assert!(!net.is_empty());
        let meta = q
            .cloudinit_generated_config_dump(NODE, 200, CloudInitDump::Meta)
            .await
            .expect("meta-data");
        assert!(!meta.is_empty());

        q.cloudinit_update(NODE, 200).await.expect("regenerate");
        // Only root@pam may set `lock`; a token may not, root's own
        // included (qemu-server's check_vm_modify_config_perm).
        let lock = UpdateVm::new().set("lock", "backup");
        if matches!(mode, Mode::Token) {
            let e = q.update_vm(NODE, 200, &lock).await.expect_err("a token");
            assert_eq!(e.message(), "only root can set 'lock' config");
        }
        client(&run, Mode::Password)
            .qemu()
            .update_vm(NODE, 200, &lock)
            .await
            .expect("lock");
        let e = q.cloudinit_update(NODE, 200).await.expect_err("locked");
        assert_eq!(e.message(), "VM is locked (backup)");
        assert_checked(
            &checked.names(),
            &[
                "GET cloudinit_pending",
                "PUT cloudinit_update",
                "GET cloudinit_generated_config_dump",
            ],
        );
    }
}

#[tokio::test]
async fn rrd_points_are_typed() {
    for mode in MODES {
        let run = start().await;
        let (pve, checked) = checked_client(&run, mode);
        let q = pve.qemu();
        run.clock().advance(600);

        let points = q
            .rrddata(NODE, 101, Timeframe::Hour, None)
            .await
            .expect("hour");
        assert_eq!(points.len(), 60, "{mode:?}");
        assert!(points.windows(2).all(|w| w[1].time - w[0].time == 60));
        let last = points.last().expect("a point");
        assert!(last.maxmem.is_some_and(|m| m > 0.0), "{last:?}");
        assert!(last.mem.is_some());
        let day = q
            .rrddata(NODE, 101, Timeframe::Day, Some(Consolidation::Max))
            .await
            .expect("day");
        assert_eq!(day.len(), 1440);

        let e = q
            .rrddata(NODE, 999, Timeframe::Hour, None)
            .await
            .expect_err("no such VM");
        assert_eq!(
            e.message(),
            "Configuration file 'nodes/pve/qemu-server/999.conf' does not exist"
        );
        assert_checked(&checked.names(), &["GET rrddata"]);
    }
}
