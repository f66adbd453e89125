//! Snapshots and rollback.

use super::*;

// ---------------------------------------------------------------------
// Snapshots

#[rstest]
#[case("current", "unable to use snapshot name 'current' (reserved name)")]
#[case("PENDING", "unable to use snapshot name 'pending' (reserved name)")]
fn reserved_snapshot_names(mut lab: World, #[case] name: &str, #[case] msg: &str) {
    let now = lab.now();
    let r = lab
        .c
        .snapshots()
        .snapshot_vm("pve", 100, name, false, None, now);
    assert_eq!(refused(r), (500, msg.to_string()));
}

#[rstest]
fn a_snapshot_is_prepared_then_committed(mut lab: World) {
    let now = lab.now();
    let worker = lab
        .c
        .snapshots()
        .snapshot_vm("pve", 100, "before", false, Some("first".into()), now)
        .expect("accepted");
    assert_eq!(lab.conf(100, "lock").as_deref(), Some("snapshot"));
    let snap = &lab.c.guests[&100].snapshots["before"];
    assert_eq!(snap.get("snapstate").map(String::as_str), Some("prepare"));
    let upid = lab.run("pve", worker);
    assert_eq!(lab.exit(&upid), "OK");
    assert_eq!(lab.conf(100, "lock"), None);
    assert_eq!(lab.conf(100, "parent").as_deref(), Some("before"));
    let list = lab.c.guests.vm("pve", 100).expect("vm").snapshot_list();
    let names: Vec<&str> = list.snapshots.iter().map(|s| s.name).collect();
    assert_eq!(names, ["before"]);
    assert_eq!(list.snapshots[0].description, "first");
    assert_eq!(list.snapshots[0].vmstate, Some(false));
    assert_eq!(list.current.parent, Some("before"));
    assert_eq!(
        list.current.digest,
        lab.c.guests.vm("pve", 100).expect("vm").digest()
    );
}

#[rstest]
#[case("locked", "VM is locked (backup)")]
#[case("template", "you can't take a snapshot if it's a template")]
#[case("dup", "snapshot name 'dup' already used")]
fn snapshot_refusals_end_the_task(mut lab: World, #[case] what: &str, #[case] msg: &str) {
    let vmid = match what {
        "template" => 900,
        _ => 100,
    };
    match what {
        "locked" => set_lock(&mut lab, 100, "backup"),
        "dup" => {
            lab.c
                .guests
                .get_mut(&100)
                .expect("vm")
                .snapshots
                .insert("dup".into(), map(&[]));
        }
        _ => {}
    }
    let now = lab.now();
    let worker = lab
        .c
        .snapshots()
        .snapshot_vm(
            "pve",
            vmid,
            if what == "dup" { "dup" } else { "s1" },
            false,
            None,
            now,
        )
        .expect("a task");
    let upid = lab.run("pve", worker);
    assert_eq!(lab.exit(&upid), msg);
}

#[rstest]
fn a_stopped_snapshot_task_is_undone(mut lab: World) {
    let now = lab.now();
    let worker = lab
        .c
        .snapshots()
        .snapshot_vm("pve", 100, "s1", false, None, now)
        .expect("accepted");
    let upid = lab.run_as("pve", worker, "root@pam", 10_000);
    lab.c.stop_task(&upid, now).expect("stopped");
    assert_eq!(lab.exit(&upid), "received interrupt");
    assert_eq!(lab.conf(100, "lock"), None);
    assert!(!lab.c.guests[&100].snapshots.contains_key("s1"));
}

#[rstest]
fn snapshot_config_and_description(mut lab: World) {
    let now = lab.now();
    let w = lab
        .c
        .snapshots()
        .snapshot_vm("pve", 100, "s1", false, None, now)
        .expect("ok");
    lab.run("pve", w);
    let snap = |lab: &World, name: &str, key: &str| -> crate::model::Result<Option<String>> {
        let vm = lab.c.guests.vm("pve", 100)?;
        Ok(vm.snapshot(name)?.get(key).cloned())
    };
    assert_eq!(
        snap(&lab, "s1", "snaptime").expect("s1"),
        Some(now.to_string())
    );
    assert_eq!(snap(&lab, "s1", "cores").expect("s1").as_deref(), Some("2"));
    lab.c
        .snapshots()
        .update_snapshot("pve", 100, "s1", Some("edited".into()))
        .expect("updated");
    assert_eq!(
        snap(&lab, "s1", "description").expect("s1").as_deref(),
        Some("edited")
    );
    assert_eq!(
        refused(snap(&lab, "nope", "cores")),
        (500, "snapshot 'nope' does not exist".into())
    );
    assert_eq!(
        refused(
            lab.c
                .snapshots()
                .update_snapshot("pve", 100, "nope", Some("x".into()))
        ),
        (500, "snapshot 'nope' does not exist".into())
    );
}

#[rstest]
fn rollback_restores_the_config_and_stops_a_running_vm(mut lab: World) {
    let now = lab.now();
    let w = lab
        .c
        .snapshots()
        .snapshot_vm("pve", 101, "s1", false, None, now)
        .expect("ok");
    lab.run("pve", w);
    lab.c
        .vm_ops()
        .update_config("pve", 101, &update(&[("name", "changed")], &[]), now)
        .expect("applied");
    let w = lab
        .c
        .snapshots()
        .rollback_vm("pve", 101, "s1", false, &mut rq());
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "OK");
    assert_eq!(lab.conf(101, "name").as_deref(), Some("db"));
    assert!(!lab.c.guests[&101].running(), "PVE stops it first");
    assert_eq!(lab.conf(101, "lock"), None);
}

#[rstest]
fn rollback_and_delete_of_a_missing_snapshot_fail_in_the_task(mut lab: World) {
    let w = lab
        .c
        .snapshots()
        .rollback_vm("pve", 100, "nope", false, &mut rq());
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "snapshot 'nope' does not exist");
    let w = lab.c.snapshots().delete_snapshot("pve", 100, "nope");
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "snapshot 'nope' does not exist");
}

#[rstest]
fn deleting_a_snapshot_relinks_the_parent(mut lab: World) {
    let now = lab.now();
    for s in ["a", "b"] {
        let w = lab
            .c
            .snapshots()
            .snapshot_vm("pve", 100, s, false, None, now)
            .expect("ok");
        lab.run("pve", w);
    }
    assert_eq!(
        lab.c.guests[&100].snapshots["b"]
            .get("parent")
            .map(String::as_str),
        Some("a")
    );
    let w = lab.c.snapshots().delete_snapshot("pve", 100, "b");
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "OK");
    assert_eq!(lab.conf(100, "parent").as_deref(), Some("a"));
    assert!(!lab.c.guests[&100].snapshots.contains_key("b"));
}

// ---------------------------------------------------------------------
// More snapshot, rollback, move and migrate rules

#[rstest]
fn a_snapshot_of_a_running_vm_saves_its_state(mut lab: World) {
    let now = lab.now();
    let w = lab
        .c
        .snapshots()
        .snapshot_vm("pve", 101, "live", true, None, now)
        .expect("accepted");
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "OK");
    let snap = &lab.c.guests[&101].snapshots["live"];
    let state = snap.get("vmstate").cloned().expect("vmstate");
    assert!(state.starts_with("local-lvm:vm-101-state-live"), "{state}");
    assert!(lab.c.storage.volume(&state, "pve").is_some());
    assert!(
        lab.c.guests[&101].running(),
        "a snapshot does not stop the VM"
    );
    let list = lab.c.guests.vm("pve", 101).expect("vm").snapshot_list();
    assert_eq!(list.snapshots[0].vmstate, Some(true));
    let w = lab.c.snapshots().delete_snapshot("pve", 101, "live");
    lab.run("pve", w);
    assert!(
        lab.c.storage.volume(&state, "pve").is_none(),
        "the state goes with it"
    );
}

#[rstest]
fn rollback_with_start_runs_the_vm_again(mut lab: World) {
    let now = lab.now();
    let w = lab
        .c
        .snapshots()
        .snapshot_vm("pve", 100, "s1", false, None, now)
        .expect("ok");
    lab.run("pve", w);
    let w = lab
        .c
        .snapshots()
        .rollback_vm("pve", 100, "s1", true, &mut rq());
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "OK");
    lab.tick(1);
    assert!(lab.c.guests[&100].running());
}

#[rstest]
fn rollback_of_a_template_fails(mut lab: World) {
    lab.c
        .guests
        .get_mut(&900)
        .expect("vm")
        .snapshots
        .insert("s1".into(), map(&[("snaptime", "1")]));
    let w = lab
        .c
        .snapshots()
        .rollback_vm("pve", 900, "s1", false, &mut rq());
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "you can't rollback if vm is a template");
}

#[rstest]
fn a_disk_with_snapshots_cannot_move_and_delete_its_source(mut lab: World) {
    let now = lab.now();
    let w = lab
        .c
        .snapshots()
        .snapshot_vm("pve", 100, "s1", false, None, now)
        .expect("ok");
    lab.run("pve", w);
    let job = MoveJob {
        delete: true,
        ..mv("scsi0", "tank")
    };
    assert_eq!(
        refused(lab.c.vm_ops().check_move_disk("pve", 100, &job)),
        (
            500,
            "you can't move a disk with snapshots and delete the source".into()
        )
    );
    let (old, snapshotted) = lab
        .c
        .vm_ops()
        .check_move_disk("pve", 100, &mv("scsi0", "tank"))
        .expect("a copy is allowed");
    assert_eq!(
        (old.as_str(), snapshotted),
        ("local-lvm:vm-100-disk-0", true)
    );
}

#[rstest]
fn an_offline_migration_copies_local_disks(mut cluster: World) {
    let w = cluster
        .c
        .vm_ops()
        .migrate_vm(migrate(100, "pve2", false))
        .expect("accepted");
    let upid = cluster.run("pve1", w);
    assert_eq!(cluster.exit(&upid), "OK");
    assert_eq!(cluster.c.guests[&100].node, "pve2");
    assert!(
        cluster
            .c
            .storage
            .volume("local-lvm:vm-100-disk-0", "pve2")
            .is_some()
    );
    assert!(
        cluster
            .c
            .storage
            .volume("local-lvm:vm-100-disk-0", "pve1")
            .is_none()
    );
}

#[rstest]
fn a_live_migration_needs_with_local_disks(mut cluster: World) {
    cluster.qm("qmstart", 100, QemuOp::Start { skiplock: false });
    let w = cluster
        .c
        .vm_ops()
        .migrate_vm(migrate(100, "pve2", true))
        .expect("accepted");
    let upid = cluster.run("pve1", w);
    assert_eq!(
        cluster.exit(&upid),
        "migration aborted",
        "{:?}",
        cluster.task(&upid).log
    );
    assert!(
        cluster.task(&upid).log.iter().any(|l| l
            .contains("can't live migrate attached local disks without with-local-disks option")),
        "{:?}",
        cluster.task(&upid).log
    );
    assert_eq!(cluster.c.guests[&100].node, "pve1");
    assert_eq!(cluster.conf(100, "lock"), None);
}

#[rstest]
fn a_locked_vm_does_not_migrate(mut cluster: World) {
    set_lock(&mut cluster, 100, "backup");
    assert_eq!(
        refused(cluster.c.vm_ops().migrate_vm(migrate(100, "pve2", false))),
        (500, "VM is locked (backup)".into())
    );
    assert_eq!(
        refused(cluster.c.vm_ops().migrate_precondition("pve1", 100)),
        (500, "VM is locked (backup)".into())
    );
}

#[rstest]
fn a_clone_to_another_node_needs_shared_storage(mut cluster: World) {
    let req = CloneRequest {
        node: "pve1".into(),
        target: Some("pve2".into()),
        who: Some(root()),
        ..clone_req(100, 300)
    };
    assert_eq!(
        refused(cluster.c.vm_ops().clone_vm(req, &mut rq())),
        (
            500,
            "can't clone VM to node 'pve2' (VM uses local storage)".into()
        )
    );
    let req = CloneRequest {
        node: "pve1".into(),
        target: Some("pve2".into()),
        storage: Some("local-lvm".into()),
        who: Some(root()),
        ..clone_req(100, 300)
    };
    assert_eq!(
        refused(cluster.c.vm_ops().clone_vm(req, &mut rq())),
        (500, "can't clone to non-shared storage 'local-lvm'".into())
    );
}

#[rstest]
fn a_clone_of_a_vm_on_shared_storage_can_go_to_another_node(mut cluster: World) {
    cluster.qm("qmstop", 200, QemuOp::Stop { skiplock: false });
    let req = CloneRequest {
        node: "pve1".into(),
        target: Some("pve2".into()),
        who: Some(root()),
        ..clone_req(200, 300)
    };
    let w = cluster
        .c
        .vm_ops()
        .clone_vm(req, &mut rq())
        .expect("accepted");
    let upid = cluster.run("pve1", w);
    assert_eq!(cluster.exit(&upid), "OK", "{:?}", cluster.task(&upid).log);
    assert_eq!(cluster.c.guests[&300].node, "pve2");
}

// ---------------------------------------------------------------------
// Snapshot and rollback details

#[rstest]
fn vmstate_is_ignored_for_a_stopped_vm(mut lab: World) {
    let now = lab.now();
    let w = lab
        .c
        .snapshots()
        .snapshot_vm("pve", 100, "s1", true, None, now)
        .expect("ok");
    lab.run("pve", w);
    assert!(!lab.c.guests[&100].snapshots["s1"].contains_key("vmstate"));
}

#[rstest]
fn the_vm_state_takes_twice_the_memory_and_500_mib(mut lab: World) {
    let now = lab.now();
    let w = lab
        .c
        .snapshots()
        .snapshot_vm("pve", 101, "s1", true, None, now)
        .expect("ok");
    lab.run("pve", w);
    let state = lab.c.guests[&101].snapshots["s1"]["vmstate"].clone();
    assert_eq!(
        lab.c.storage.volume(&state, "pve").map(|v| v.size),
        Some(2 * (4096 << 20) + (500 << 20))
    );
}

#[rstest]
fn a_snapshot_leaves_out_unused_disks_and_the_description(mut lab: World) {
    {
        let conf = &mut lab.c.guests.get_mut(&100).expect("vm").config;
        conf.insert("unused0".into(), "local-lvm:vm-100-disk-9".into());
        conf.insert("description".into(), "web server".into());
    }
    let now = lab.now();
    let w = lab
        .c
        .snapshots()
        .snapshot_vm("pve", 100, "s1", false, None, now)
        .expect("ok");
    lab.run("pve", w);
    let snap = &lab.c.guests[&100].snapshots["s1"];
    assert!(!snap.contains_key("unused0"));
    assert!(!snap.contains_key("description"));
    assert_eq!(
        snap.get("snaptime").map(String::as_str),
        Some(now.to_string().as_str())
    );
}

#[rstest]
fn rollback_keeps_description_and_unused_and_sets_parent(mut lab: World) {
    let now = lab.now();
    let w = lab
        .c
        .snapshots()
        .snapshot_vm("pve", 100, "s1", false, None, now)
        .expect("ok");
    lab.run("pve", w);
    {
        let conf = &mut lab.c.guests.get_mut(&100).expect("vm").config;
        conf.insert("description".into(), "kept".into());
        conf.insert("unused3".into(), "local-lvm:vm-100-disk-3".into());
        conf.insert("cores".into(), "8".into());
        conf.insert(
            "vmgenid".into(),
            "00000000-0000-0000-0000-000000000001".into(),
        );
    }
    lab.c
        .guests
        .get_mut(&100)
        .expect("vm")
        .snapshots
        .get_mut("s1")
        .expect("s1")
        .insert(
            "vmgenid".into(),
            "00000000-0000-0000-0000-000000000002".into(),
        );
    let w = lab
        .c
        .snapshots()
        .rollback_vm("pve", 100, "s1", false, &mut rq());
    lab.run("pve", w);
    assert_eq!(lab.conf(100, "description").as_deref(), Some("kept"));
    assert_eq!(
        lab.conf(100, "unused3").as_deref(),
        Some("local-lvm:vm-100-disk-3")
    );
    assert_eq!(lab.conf(100, "cores").as_deref(), Some("2"));
    assert_eq!(lab.conf(100, "parent").as_deref(), Some("s1"));
    let genid = lab.conf(100, "vmgenid").expect("vmgenid");
    assert!(
        !genid.ends_with("0001") && !genid.ends_with("0002"),
        "a new vmgenid: {genid}"
    );
}

#[rstest]
fn rollback_to_a_snapshot_with_state_resumes_the_vm(mut lab: World) {
    let now = lab.now();
    let w = lab
        .c
        .snapshots()
        .snapshot_vm("pve", 101, "live", true, None, now)
        .expect("ok");
    lab.run("pve", w);
    let w = lab
        .c
        .snapshots()
        .rollback_vm("pve", 101, "live", false, &mut rq());
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "OK");
    assert!(lab.c.guests[&101].running());
}

#[rstest]
fn task_logs_show_the_storage_tools(mut lab: World) {
    let now = lab.now();
    let w = lab
        .c
        .snapshots()
        .snapshot_vm("pve", 100, "snap1", false, None, now)
        .expect("ok");
    let upid = lab.run("pve", w);
    let log = &lab.task(&upid).log;
    assert!(
        log.iter()
            .any(|l| l == "snapshotting 'drive-scsi0' (local-lvm:vm-100-disk-0)"),
        "{log:?}"
    );
    assert!(
        log.iter()
            .any(|l| l == "  Logical volume \"snap_vm-100-disk-0_snap1\" created."),
        "{log:?}"
    );
    let w = lab.c.snapshots().delete_snapshot("pve", 100, "snap1");
    let upid = lab.run("pve", w);
    assert!(
        lab.task(&upid)
            .log
            .iter()
            .any(|l| l == "  Logical volume \"snap_vm-100-disk-0_snap1\" successfully removed."),
        "{:?}",
        lab.task(&upid).log
    );
    let upid = lab.run(
        "pve",
        qm_worker("qmtemplate", 100, QemuOp::Template { disk: None }),
    );
    assert!(
        lab.task(&upid)
            .log
            .iter()
            .any(|l| l
                == "  Renamed \"vm-100-disk-0\" to \"base-100-disk-0\" in volume group \"pve\""),
        "{:?}",
        lab.task(&upid).log
    );
    let op = QemuOp::Destroy {
        skiplock: false,
        purge: false,
        unreferenced: false,
    };
    let upid = lab.run("pve", qm_worker("qmdestroy", 100, op));
    assert!(
        lab.task(&upid)
            .log
            .iter()
            .any(|l| l == "  Logical volume \"base-100-disk-0\" successfully removed."),
        "{:?}",
        lab.task(&upid).log
    );
}

#[rstest]
fn a_create_logs_each_created_disk(mut fresh: World) {
    let worker = fresh
        .c
        .vm_ops()
        .create_vm(
            CreateRequest {
                vmid: 100,
                node: "pve".into(),
                config: map(&[("scsi0", "local-lvm:8")]),
                ..CreateRequest::default()
            },
            &mut rq(),
        )
        .expect("accepted");
    let upid = fresh.run("pve", worker);
    assert_eq!(
        fresh.task(&upid).log,
        [
            "  Logical volume \"vm-100-disk-0\" created.",
            "scsi0: successfully created disk 'local-lvm:vm-100-disk-0,size=8G'",
            "TASK OK"
        ]
    );
}

#[rstest]
fn migration_to_a_node_without_the_storage_is_refused(mut cluster: World) {
    cluster
        .c
        .storage
        .update("local-lvm", &map(&[("nodes", "pve1")]), &[])
        .expect("restricted");
    if let Some(s) = cluster.c.storage.find_mut("local-lvm") {
        s.nodes = Some(vec!["pve1".into()]);
    }
    assert_eq!(
        refused(cluster.c.vm_ops().migrate_vm(migrate(100, "pve2", false))),
        (
            500,
            "storage 'local-lvm' is not available on node 'pve2'".into()
        )
    );
    assert_eq!(cluster.conf(100, "lock"), None);
}
