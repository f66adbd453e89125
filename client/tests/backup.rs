//! Backups and pools (`api::backup`, `api::pools`) against an in-process
//! fake-pve: a VM is put in a pool, backed up twice, pruned and
//! restored; every answer checked against the schema.

mod common;

use common::{Mode, checked_client, start};
use pve_client::api::backup::Vzdump;
use pve_client::api::lxc::CreateCt;
use pve_client::api::pools::PoolUpdate;
use pve_client::api::qemu::{ConfigView, CreateVm};
use pve_client::api::storage::ContentFilter;

const NODE: &str = "pve";

#[tokio::test]
async fn a_vm_is_pooled_backed_up_pruned_and_restored() {
    let run = start().await;
    let (pve, checked) = checked_client(&run, Mode::Token);
    let pools = pve.pools();
    pools
        .create_pool("prod", Some("Production"))
        .await
        .expect("pool");
    pools
        .update_pool("prod", &PoolUpdate::default().vms(&[100]))
        .await
        .expect("members");
    let pool = pools.read_pool("prod", None).await.expect("read");
    assert_eq!(pool.comment.as_deref(), Some("Production"));
    assert_eq!(pool.members.len(), 1);
    assert_eq!(pool.members[0].id, "qemu/100");

    // Two backups of the pool's guests, an hour apart.
    let b = pve.backup();
    let req = Vzdump::pool("prod")
        .storage("local")
        .compress("zstd")
        .notes_template("{{guestname}}");
    for _ in 0..2 {
        let upid = b.vzdump(NODE, &req).await.expect("vzdump").expect("a task");
        let status = pve.tasks().wait(&upid).await.expect("done");
        assert!(status.succeeded(), "{status:?}");
        run.clock().advance(3600);
    }
    let filter = ContentFilter {
        content: Some("backup".into()),
        vmid: Some(100),
    };
    let list = pve
        .storage_content()
        .index(NODE, "local", &filter)
        .await
        .expect("content");
    assert_eq!(list.len(), 2);
    let config = b.extractconfig(NODE, &list[1].volid).await.expect("config");
    assert!(config.contains("name: gateway"), "{config}");

    // Prune to the newest.
    let marks = b
        .dryrun(NODE, "local", Some("keep-last=1"), Some(100))
        .await
        .expect("dry run");
    let removed: Vec<&str> = marks
        .iter()
        .filter(|m| m.mark == "remove")
        .map(|m| m.volid.as_str())
        .collect();
    assert_eq!(removed, [list[0].volid.as_str()]);
    let upid = b
        .delete(NODE, "local", Some("keep-last=1"), Some(100))
        .await
        .expect("prune");
    pve.tasks().wait(&upid).await.expect("pruned");
    let left = pve
        .storage_content()
        .index(NODE, "local", &filter)
        .await
        .expect("content");
    assert_eq!(left.len(), 1);

    // Restore it as a new VM in the pool.
    let restore = CreateVm::new(120)
        .archive(&left[0].volid)
        .unique(true)
        .pool("prod");
    let upid = pve.qemu().create_vm(NODE, &restore).await.expect("restore");
    assert_eq!(upid.kind(), "qmrestore");
    let status = pve.tasks().wait(&upid).await.expect("restored");
    assert!(status.succeeded(), "{status:?}");
    let conf = pve
        .qemu()
        .vm_config(NODE, 120, &ConfigView::Pending)
        .await
        .expect("config");
    assert_eq!(conf.name.as_deref(), Some("gateway"));
    let pool = pools.read_pool("prod", Some("qemu")).await.expect("read");
    assert_eq!(pool.members.len(), 2);

    // Restoring over it again needs force.
    let err = pve
        .qemu()
        .create_vm(NODE, &CreateVm::new(120).archive(&left[0].volid))
        .await
        .expect_err("exists");
    assert!(
        err.to_string()
            .contains("VM 120 already exists on node 'pve'"),
        "{err}"
    );
    let names = checked.names();
    for call in [
        "POST vzdump",
        "GET dryrun",
        "DELETE delete",
        "GET extractconfig",
        "GET index",
    ] {
        assert!(
            names.iter().any(|n| n == call),
            "{call} not checked: {names:?}"
        );
    }
}

#[tokio::test]
async fn backup_jobs_run_on_the_emulated_clock() {
    let run = start().await;
    let (pve, _) = checked_client(&run, Mode::Password);
    let b = pve.backup();
    b.create_job(
        Some("nightly"),
        "daily",
        &Vzdump::vmids(&[101]).storage("local"),
    )
    .await
    .expect("job");
    let jobs = b.index().await.expect("jobs");
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].id, "nightly");
    let next = jobs[0].next_run.expect("next run");
    assert_eq!(next % 86_400, 0, "midnight");
    let runs = b
        .schedule_analyze("daily", None, Some(2))
        .await
        .expect("schedule-analyze");
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].timestamp, next, "the job's next run");
    assert_eq!(runs[1].timestamp, next + 86_400);
    assert_eq!(runs[0].utc, "Tue Sep 22 00:00:00 2026");
    run.clock().advance(next - common::T0 + 60);
    let not = b.get_guests_not_in_backup().await.expect("not backed up");
    assert!(not.iter().all(|g| g["vmid"] != 101));
    let filter = ContentFilter {
        content: Some("backup".into()),
        vmid: Some(101),
    };
    let list = pve
        .storage_content()
        .index(NODE, "local", &filter)
        .await
        .expect("content");
    assert_eq!(list.len(), 1, "the job ran once");
    b.update_job("nightly", &Vzdump::default().set("comment", "nightly"), &[])
        .await
        .expect("update");
    assert_eq!(
        b.read_job("nightly").await.expect("job").options["comment"],
        "nightly"
    );
    b.delete_job("nightly").await.expect("delete");
    assert!(b.index().await.expect("jobs").is_empty());
}

#[tokio::test]
async fn a_container_is_backed_up_pruned_and_restored() {
    let run = start().await;
    let (pve, checked) = checked_client(&run, Mode::Token);
    let ct = pve.lxc();
    let appliance = "debian-12-standard_12.7-1_amd64.tar.zst";
    ct.apl_download_and_wait(NODE, "local", appliance)
        .await
        .expect("template");
    let create = CreateCt::new(300, &format!("local:vztmpl/{appliance}"))
        .hostname("ct-web")
        .memory(768)
        .rootfs("local-lvm:2")
        .net(0, "name=eth0,bridge=vmbr0,ip=dhcp")
        .unprivileged(true);
    ct.create_vm_and_wait(NODE, &create).await.expect("create");
    ct.vm_start_and_wait(NODE, 300).await.expect("start");

    // Two backups, an hour apart, of the VM and the container.
    let b = pve.backup();
    let req = Vzdump::vmids(&[100, 300])
        .storage("local")
        .compress("zstd")
        .notes_template("{{guestname}}");
    for _ in 0..2 {
        let upid = b.vzdump(NODE, &req).await.expect("vzdump").expect("a task");
        let status = pve.tasks().wait(&upid).await.expect("done");
        assert!(status.succeeded(), "{status:?}");
        run.clock().advance(3600);
    }
    let filter = ContentFilter {
        content: Some("backup".into()),
        vmid: Some(300),
    };
    let list = pve
        .storage_content()
        .index(NODE, "local", &filter)
        .await
        .expect("content");
    assert_eq!(list.len(), 2);
    assert!(list.iter().all(|i| i.format == "tar.zst"), "{list:?}");
    assert!(
        list[0].volid.starts_with("local:backup/vzdump-lxc-300-"),
        "{list:?}"
    );
    assert_eq!(list[0].notes.as_deref(), Some("ct-web"));
    let config = b.extractconfig(NODE, &list[1].volid).await.expect("config");
    assert!(config.contains("hostname: ct-web\n"), "{config}");

    // Prune the container's group to the newest; the VM's stay.
    let upid = b
        .delete(NODE, "local", Some("keep-last=1"), Some(300))
        .await
        .expect("prune");
    pve.tasks().wait(&upid).await.expect("pruned");
    let left = pve
        .storage_content()
        .index(NODE, "local", &filter)
        .await
        .expect("content");
    assert_eq!(left.len(), 1);
    let vm_filter = ContentFilter {
        content: Some("backup".into()),
        vmid: Some(100),
    };
    let vm_backups = pve
        .storage_content()
        .index(NODE, "local", &vm_filter)
        .await
        .expect("content");
    assert_eq!(vm_backups.len(), 2);

    // Restore the container as a new one, and the VM as well.
    let restore = CreateCt::restore(320, &left[0].volid)
        .storage("local-lvm")
        .unique(true);
    let upid = ct.create_vm(NODE, &restore).await.expect("restore");
    assert_eq!(upid.kind(), "vzrestore");
    let status = pve.tasks().wait(&upid).await.expect("restored");
    assert!(status.succeeded(), "{status:?}");
    let conf = ct.vm_config(NODE, 320, false).await.expect("config");
    assert_eq!(conf.hostname.as_deref(), Some("ct-web"));
    assert_eq!(conf.memory, Some(768));
    assert_eq!(
        conf.rootfs.as_deref(),
        Some("local-lvm:vm-320-disk-0,size=2G")
    );
    let restore = CreateVm::new(120).archive(&vm_backups[1].volid);
    let upid = pve.qemu().create_vm(NODE, &restore).await.expect("restore");
    let status = pve.tasks().wait(&upid).await.expect("restored");
    assert!(status.succeeded(), "{status:?}");

    // Restoring over the running container is refused, even with force.
    let e = ct
        .create_vm(NODE, &CreateCt::restore(300, &left[0].volid).force(true))
        .await
        .expect_err("running");
    assert_eq!(e.message(), "can't overwrite running container");
    let e = ct
        .create_vm(NODE, &CreateCt::restore(320, &left[0].volid))
        .await
        .expect_err("exists");
    assert_eq!(e.message(), "CT 320 already exists on node 'pve'");
    let names = checked.names();
    for call in ["POST vzdump", "DELETE delete", "GET extractconfig"] {
        assert!(
            names.iter().any(|n| n == call),
            "{call} not checked: {names:?}"
        );
    }
}
