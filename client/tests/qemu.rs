//! The VM calls (`api::qemu`) against an in-process fake-pve, in both
//! authentication modes, every answer checked against the schema.

mod common;

use common::{MODES, Mode, checked_client, start, start_with_latency};
use pve_client::api::qemu::{
    CloneVm, ConfigView, CreateVm, DestroyOptions, ShutdownOptions, SnapshotOptions, StartOptions,
    StopOptions, SuspendOptions, UpdateVm,
};
use pve_client::propstring::{Disk, IpConfig, NetworkDevice};
use pve_client::{Category, Error};

const NODE: &str = "pve";

fn new_vm(vmid: u32) -> CreateVm {
    CreateVm::new(vmid)
        .name("web-1")
        .memory(2048)
        .cores(2)
        .ostype("l26")
        .tags(&["ci", "web"])
        .net(
            0,
            &NetworkDevice {
                macaddr: Some("BC:24:11:2E:5A:01".into()),
                bridge: Some("vmbr0".into()),
                tag: Some(100),
                ..NetworkDevice::new("virtio")
            },
        )
        .disk(
            "scsi0",
            &Disk {
                discard: Some(true),
                ssd: Some(true),
                ..Disk::new("local-lvm:4")
            },
        )
        .ipconfig(0, &IpConfig::static_v4("192.0.2.10/24", Some("192.0.2.1")))
        .agent(true)
        .set("scsihw", "virtio-scsi-single")
}

fn task_failed(e: &Error) -> &str {
    match e {
        Error::TaskFailed { exitstatus, .. } => exitstatus,
        other => panic!("expected a failed task, got {other:?}"),
    }
}

#[tokio::test]
async fn create_configure_power_and_destroy() {
    for mode in MODES {
        let run = start().await;
        let (pve, checked) = checked_client(&run, mode);
        let q = pve.qemu();

        let done = q
            .create_vm_and_wait(NODE, &new_vm(200))
            .await
            .expect("create");
        assert_eq!(done.kind, "qmcreate", "{mode:?}");
        let e = q.create_vm(NODE, &new_vm(200)).await.expect_err("taken");
        assert_eq!(e.category(), Category::Conflict, "{e}");
        assert!(e.message().contains("already exists"), "{e}");

        // The typed config.
        let c = q
            .vm_config(NODE, 200, &ConfigView::Pending)
            .await
            .expect("config");
        assert_eq!(c.name.as_deref(), Some("web-1"));
        assert_eq!(c.memory, Some(2048));
        assert_eq!(c.cores, Some(2));
        assert_eq!(c.tags, ["ci", "web"]);
        assert!(c.agent_enabled());
        let net = &c.nets[&0];
        assert_eq!(net.model, "virtio");
        assert_eq!(net.macaddr.as_deref(), Some("BC:24:11:2E:5A:01"));
        assert_eq!(net.tag, Some(100));
        let disk = &c.disks["scsi0"];
        assert!(disk.file.starts_with("local-lvm:vm-200-disk-"), "{disk:?}");
        assert_eq!(disk.size.as_deref(), Some("4G"));
        assert_eq!((disk.ssd, disk.discard), (Some(true), Some(true)));
        assert_eq!(c.ipconfigs[&0].gw.as_deref(), Some("192.0.2.1"));
        assert_eq!(c.get_other("scsihw").as_deref(), Some("virtio-scsi-single"));
        let digest = c.digest.clone().expect("a digest");
        let current = q
            .vm_config(NODE, 200, &ConfigView::Current)
            .await
            .expect("current");
        assert_eq!(current.digest.as_deref(), Some(digest.as_str()));

        let list = q.vmlist(NODE, true).await.expect("vmlist");
        let vm = list.iter().find(|v| v.vmid == 200).expect("listed");
        assert_eq!(vm.status, "stopped");
        assert_eq!(vm.name.as_deref(), Some("web-1"));
        assert_eq!(q.vmlist(NODE, false).await.expect("vmlist").len(), 3);

        // Optimistic updates: the digest read, then a stale one.
        q.update_vm(
            NODE,
            200,
            &UpdateVm::new().cores(4).delete("tags").digest(&digest),
        )
        .await
        .expect("update with the current digest");
        let e = q
            .update_vm(NODE, 200, &UpdateVm::new().cores(8).digest(&digest))
            .await
            .expect_err("stale digest");
        assert_eq!(e.category(), Category::Conflict, "{e}");
        assert_eq!(
            e.message(),
            "checksum mismatch (file change by other user?)"
        );
        let e = q
            .update_vm(NODE, 200, &UpdateVm::new())
            .await
            .expect_err("nothing to do");
        assert_eq!(e.message(), "no options specified");
        let e = q
            .update_vm(NODE, 200, &UpdateVm::new().set("cores", "many"))
            .await
            .expect_err("bad value");
        assert_eq!(e.category(), Category::Validation);
        assert!(e.param_errors().is_some_and(|p| p.contains_key("cores")));
        let c = q
            .vm_config(NODE, 200, &ConfigView::Pending)
            .await
            .expect("config");
        assert_eq!(c.cores, Some(4));
        assert!(c.tags.is_empty());
        assert_ne!(c.digest.as_deref(), Some(digest.as_str()));

        let st = q
            .update_vm_async_and_wait(NODE, 200, &UpdateVm::new().description("async"))
            .await
            .expect("async update")
            .expect("a task");
        assert_eq!(st.kind, "qmconfig");
        assert_eq!(
            q.vm_config(NODE, 200, &ConfigView::Pending)
                .await
                .expect("config")
                .description
                .as_deref(),
            Some("async")
        );

        // Power.
        let st = q
            .vm_start_and_wait(NODE, 200, &StartOptions::default())
            .await
            .expect("start");
        assert!(st.succeeded());
        let s = q.vm_status(NODE, 200).await.expect("status");
        assert!(s.is_running(), "{s:?}");
        assert_eq!(s.agent, Some(true));
        let e = q
            .vm_start_and_wait(NODE, 200, &StartOptions::default())
            .await
            .expect_err("already running");
        assert_eq!(task_failed(&e), "VM 200 already running");

        // A change to a running VM that cannot be hot-plugged waits.
        q.update_vm(NODE, 200, &UpdateVm::new().cpu("host"))
            .await
            .expect("pending change");
        let pending = q.vm_pending(NODE, 200).await.expect("pending");
        let cpu = pending.iter().find(|p| p.key == "cpu").expect("cpu");
        assert!(cpu.is_pending(), "{cpu:?}");
        q.update_vm(NODE, 200, &UpdateVm::new().revert("cpu"))
            .await
            .expect("revert");
        let pending = q.vm_pending(NODE, 200).await.expect("pending");
        assert!(
            pending.iter().all(|p| p.key != "cpu" || !p.is_pending()),
            "{pending:?}"
        );

        let e = q
            .destroy_vm(NODE, 200, &DestroyOptions::default())
            .await
            .expect_err("running");
        assert_eq!(e.message(), "VM 200 is running - destroy failed");

        q.vm_suspend_and_wait(NODE, 200, &SuspendOptions::default())
            .await
            .expect("pause");
        assert!(q.vm_status(NODE, 200).await.expect("status").is_paused());
        let e = q
            .vm_shutdown(NODE, 200, &ShutdownOptions::default())
            .await
            .expect_err("paused");
        assert_eq!(e.message(), "VM is paused - cannot shutdown");
        q.vm_resume_and_wait(NODE, 200, false)
            .await
            .expect("resume");
        assert!(!q.vm_status(NODE, 200).await.expect("status").is_paused());
        q.vm_reboot_and_wait(NODE, 200, None).await.expect("reboot");
        q.vm_reset_and_wait(NODE, 200, false).await.expect("reset");
        q.vm_shutdown_and_wait(
            NODE,
            200,
            &ShutdownOptions {
                timeout: Some(30),
                ..ShutdownOptions::default()
            },
        )
        .await
        .expect("shutdown");
        assert_eq!(
            q.vm_status(NODE, 200).await.expect("status").status,
            "stopped"
        );
        let e = q.vm_reboot(NODE, 200, None).await.expect_err("stopped");
        assert_eq!(e.message(), "VM 200 not running");
        let e = q.vm_reset(NODE, 200, false).await.expect_err("stopped");
        assert_eq!(e.message(), "VM 200 not running");
        q.vm_start_and_wait(NODE, 200, &StartOptions::default())
            .await
            .expect("start again");
        q.vm_stop_and_wait(NODE, 200, &StopOptions::default())
            .await
            .expect("stop");

        let st = q
            .destroy_vm_and_wait(
                NODE,
                200,
                &DestroyOptions {
                    purge: Some(true),
                    ..DestroyOptions::default()
                },
            )
            .await
            .expect("destroy");
        assert_eq!(st.kind, "qmdestroy");
        let e = q
            .vm_config(NODE, 200, &ConfigView::Pending)
            .await
            .expect_err("gone");
        assert_eq!(e.category(), Category::NotFound, "{e}");

        let names = checked.names();
        for want in [
            "POST create_vm",
            "GET vm_config",
            "GET vmlist",
            "PUT update_vm",
            "POST update_vm_async",
            "GET vm_pending",
            "GET vm_status",
            "POST vm_start",
            "POST vm_stop",
            "POST vm_shutdown",
            "POST vm_reboot",
            "POST vm_reset",
            "POST vm_suspend",
            "POST vm_resume",
            "DELETE destroy_vm",
        ] {
            assert!(
                names.iter().any(|n| n == want),
                "{mode:?}: {want} not checked"
            );
        }
    }
}

#[tokio::test]
async fn snapshots_templates_and_clones() {
    for mode in MODES {
        let run = start().await;
        let (pve, checked) = checked_client(&run, mode);
        let q = pve.qemu();

        let st = q
            .snapshot_and_wait(
                NODE,
                100,
                "before",
                &SnapshotOptions {
                    description: Some("first".into()),
                    ..SnapshotOptions::default()
                },
            )
            .await
            .expect("snapshot");
        assert_eq!(st.kind, "qmsnapshot", "{mode:?}");
        let list = q.snapshot_list(NODE, 100).await.expect("list");
        let snap = list.iter().find(|s| s.name == "before").expect("listed");
        assert_eq!(snap.description.as_deref(), Some("first"));
        assert!(snap.snaptime.is_some());
        assert!(list.iter().any(|s| s.name == "current"));

        q.update_vm(NODE, 100, &UpdateVm::new().name("changed"))
            .await
            .expect("change after the snapshot");
        let sc = q
            .get_snapshot_config(NODE, 100, "before")
            .await
            .expect("snapshot config");
        assert_eq!(sc.name.as_deref(), Some("gateway"));
        let via_view = q
            .vm_config(NODE, 100, &ConfigView::Snapshot("before".into()))
            .await
            .expect("config of the snapshot");
        assert_eq!(via_view.name.as_deref(), Some("gateway"));
        assert!(via_view.digest.is_some());
        q.update_snapshot_config(NODE, 100, "before", "renamed later")
            .await
            .expect("describe");
        let list = q.snapshot_list(NODE, 100).await.expect("list");
        let snap = list.iter().find(|s| s.name == "before").expect("listed");
        assert_eq!(snap.description.as_deref(), Some("renamed later"));
        let e = q
            .get_snapshot_config(NODE, 100, "nope")
            .await
            .expect_err("no such snapshot");
        assert!(e.message().contains("does not exist"), "{e}");

        q.rollback_and_wait(NODE, 100, "before", false)
            .await
            .expect("rollback");
        let c = q
            .vm_config(NODE, 100, &ConfigView::Pending)
            .await
            .expect("config");
        assert_eq!(c.name.as_deref(), Some("gateway"));
        assert_eq!(c.parent.as_deref(), Some("before"));
        q.delsnapshot_and_wait(NODE, 100, "before", false)
            .await
            .expect("delete snapshot");
        assert_eq!(q.snapshot_list(NODE, 100).await.expect("list").len(), 1);
        let e = q
            .rollback_and_wait(NODE, 100, "before", false)
            .await
            .expect_err("gone");
        assert!(
            task_failed(&e).contains("does not exist") || e.message().contains("does not exist"),
            "{e}"
        );

        // A template, then a linked and a full clone.
        q.template_and_wait(NODE, 100, None)
            .await
            .expect("template");
        assert!(
            q.vm_config(NODE, 100, &ConfigView::Pending)
                .await
                .expect("config")
                .template
        );
        let st = q
            .clone_vm_and_wait(
                NODE,
                100,
                &CloneVm {
                    name: Some("linked".into()),
                    full: Some(false),
                    ..CloneVm::new(300)
                },
            )
            .await
            .expect("linked clone");
        assert_eq!(st.kind, "qmclone");
        let c = q
            .vm_config(NODE, 300, &ConfigView::Pending)
            .await
            .expect("clone's config");
        assert_eq!(c.name.as_deref(), Some("linked"));
        assert!(!c.template);
        q.clone_vm_and_wait(
            NODE,
            100,
            &CloneVm {
                full: Some(true),
                ..CloneVm::new(301)
            },
        )
        .await
        .expect("full clone");
        let e = q
            .clone_vm(NODE, 100, &CloneVm::new(301))
            .await
            .expect_err("ID taken");
        assert!(e.message().contains("already exists"), "{e}");

        let names = checked.names();
        for want in [
            "POST snapshot",
            "GET snapshot_list",
            "GET get_snapshot_config",
            "PUT update_snapshot_config",
            "POST rollback",
            "DELETE delsnapshot",
            "POST template",
            "POST clone_vm",
        ] {
            assert!(
                names.iter().any(|n| n == want),
                "{mode:?}: {want} not checked"
            );
        }
    }
}

#[tokio::test]
async fn a_clone_in_progress_locks_its_target() {
    for mode in [Mode::Password, Mode::Token] {
        let run = start_with_latency("qmclone", 60_000).await;
        let (pve, _) = checked_client(&run, mode);
        let q = pve.qemu();
        let upid = q
            .clone_vm(
                NODE,
                101,
                &CloneVm {
                    full: Some(true),
                    ..CloneVm::new(400)
                },
            )
            .await
            .expect("clone starts");
        let e = q
            .update_vm(NODE, 400, &UpdateVm::new().name("early"))
            .await
            .expect_err("locked");
        assert_eq!(e.message(), "VM is locked (clone)", "{mode:?}");
        assert!(e.is_locked() && e.is_retryable());
        let e = q
            .vm_start_and_wait(NODE, 400, &StartOptions::default())
            .await
            .expect_err("locked");
        assert!(
            e.message().contains("VM is locked (clone)") || task_failed(&e).contains("locked"),
            "{e}"
        );
        // The emulated clock, not the wall clock, ends the task.
        run.clock().advance(61);
        let done = pve.tasks().wait(&upid).await.expect("clone done");
        assert!(done.succeeded());
        q.update_vm(NODE, 400, &UpdateVm::new().name("late"))
            .await
            .expect("unlocked");
    }
}
