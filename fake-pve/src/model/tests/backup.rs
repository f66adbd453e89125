//! Backups: vzdump, restore, pruning and backup jobs.

use std::collections::BTreeMap;

use rstest::rstest;
use serde_json::json;

use super::{T0, World, lab, map, refused, rq};
use crate::model::Context;
use crate::model::backup::{RestoreRequest, VzdumpRequest};

/// A vzdump request for `vmid` on `pve` to `local`, zstd.
fn req(vmid: u32) -> VzdumpRequest {
    VzdumpRequest {
        node: "pve".into(),
        vmid: vec![vmid],
        mode: "snapshot".into(),
        compress: "zstd".into(),
        storage: Some("local".into()),
        remove: true,
        cmdline: format!("vzdump {vmid} --storage local"),
        ..VzdumpRequest::default()
    }
}

/// Starts a vzdump lasting 2 s at the world's clock; answers the UPID.
fn start_dump(w: &mut World, r: VzdumpRequest) -> String {
    let mut ctx = Context::new(w.now_ms, 11);
    let worker =
        w.c.backup_ops()
            .vzdump(r, &mut ctx)
            .expect("accepted")
            .expect("a task");
    w.run_as("pve", worker, "root@pam", 2000)
}

/// Runs a vzdump to its end; answers the UPID.
fn dump(w: &mut World, r: VzdumpRequest) -> String {
    let upid = start_dump(w, r);
    w.tick(2000);
    upid
}

fn backups(w: &World, vmid: Option<u32>) -> Vec<serde_json::Value> {
    crate::model::tests::rows(
        &w.c.content_list("local", "pve", Some("backup"), vmid)
            .expect("content"),
    )
}

fn log(w: &World, upid: &str) -> Vec<String> {
    w.task(upid).log.clone()
}

#[rstest]
fn a_backup_locks_the_guest_while_it_runs_and_leaves_an_archive(mut lab: World) {
    let mut r = req(100);
    r.notes_template = Some("{{guestname}} ({{vmid}})".into());
    r.protected = true;
    let upid = start_dump(&mut lab, r);
    assert_eq!(lab.conf(100, "lock").as_deref(), Some("backup"));
    lab.tick(2000);
    assert_eq!(lab.exit(&upid), "OK");
    assert_eq!(lab.conf(100, "lock"), None);
    let items = backups(&lab, None);
    assert_eq!(items.len(), 1);
    let b = &items[0];
    let name = format!(
        "local:backup/vzdump-qemu-100-{}.vma.zst",
        crate::model::backup::name_time(T0)
    );
    assert_eq!(b["volid"], json!(name));
    assert_eq!(b["subtype"], "qemu");
    assert_eq!(b["vmid"], 100);
    assert_eq!(b["format"], "vma.zst");
    assert_eq!(b["ctime"], T0);
    assert_eq!(b["notes"], "web (100)");
    assert_eq!(b["protected"], 1);
    let log = log(&lab, &upid);
    for want in [
        "INFO: starting new backup job: vzdump 100 --storage local",
        "INFO: Starting Backup of VM 100 (qemu)",
        "INFO: status = stopped",
        "INFO: backup mode: stop",
        "INFO: VM Name: web",
        "INFO: include disk 'scsi0' 'local-lvm:vm-100-disk-0' 8G",
        "INFO: starting kvm to execute backup task",
        "INFO: adding notes to backup",
        "INFO: marking backup as protected",
        "INFO: prune older backups with retention: keep-all=1",
        "INFO: pruned 0 backup(s)",
        "INFO: Backup job finished successfully",
    ] {
        assert!(
            log.iter().any(|l| l == want),
            "missing {want:?} in {log:#?}"
        );
    }
    assert!(
        log.iter().any(|l| l
            == &format!(
                "INFO: creating vzdump archive '/var/lib/vz/dump/{}'",
                &name[13..]
            )),
        "{log:#?}"
    );
}

#[rstest]
fn a_running_guest_is_backed_up_in_snapshot_mode(mut lab: World) {
    let upid = dump(&mut lab, req(101));
    assert_eq!(lab.exit(&upid), "OK");
    let log = log(&lab, &upid);
    assert!(log.iter().any(|l| l == "INFO: status = running"));
    assert!(log.iter().any(|l| l == "INFO: backup mode: snapshot"));
    assert!(
        log.iter()
            .any(|l| l == "INFO: issuing guest-agent 'fs-freeze' command")
    );
    assert!(log.iter().any(|l| l == "INFO: resuming VM again"));
}

#[rstest]
fn a_locked_guest_fails_the_job(mut lab: World) {
    if let Some(vm) = lab.c.guests.get_mut(&100) {
        vm.config.insert("lock".into(), "migrate".into());
    }
    let mut r = req(100);
    r.vmid = vec![100, 101];
    let upid = dump(&mut lab, r);
    assert_eq!(lab.exit(&upid), "job errors");
    let log = log(&lab, &upid);
    assert!(
        log.iter()
            .any(|l| l == "ERROR: Backup of VM 100 failed - VM is locked (migrate)")
    );
    assert!(
        log.iter()
            .any(|l| l == "INFO: Backup job finished with errors")
    );
    // The other guest is backed up, and keeps no lock.
    assert_eq!(backups(&lab, Some(101)).len(), 1);
    assert_eq!(lab.conf(101, "lock"), None);
    assert_eq!(lab.conf(100, "lock").as_deref(), Some("migrate"));
}

#[rstest]
fn an_unknown_guest_fails_visibly(mut lab: World) {
    let upid = dump(&mut lab, req(555));
    assert_eq!(lab.exit(&upid), "job errors");
    assert!(
        log(&lab, &upid)
            .iter()
            .any(|l| l == "ERROR: Backup of VM 555 failed - unable to find VM '555'")
    );
}

#[rstest]
fn a_storage_without_backup_content_fails_the_task(mut lab: World) {
    let mut r = req(100);
    r.storage = Some("local-lvm".into());
    let upid = dump(&mut lab, r);
    assert_eq!(
        lab.exit(&upid),
        "could not get storage information for 'local-lvm': can't use storage 'local-lvm' for backups - wrong content type"
    );
    assert_eq!(lab.conf(100, "lock"), None);
}

#[rstest]
#[case(|r: &mut VzdumpRequest| r.all = true, "all: option conflicts with option 'vmid'")]
#[case(|r: &mut VzdumpRequest| r.pool = Some("p".into()), "pool: option conflicts with option 'vmid'")]
#[case(|r: &mut VzdumpRequest| r.vmid.clear(), "vmid: property is missing")]
#[case(|r: &mut VzdumpRequest| r.notes_template = Some("{{x}}".into()),
       "notes-template: found unknown: variable 'x' at char 2")]
#[case(|r: &mut VzdumpRequest| r.prune_backups = Some("keep-all=1,keep-last=1".into()),
       "prune-backups: keep-all cannot be set together with other options.")]
fn vzdump_refusals(mut lab: World, #[case] change: fn(&mut VzdumpRequest), #[case] msg: &str) {
    let mut r = req(100);
    change(&mut r);
    assert_eq!(
        refused(lab.c.backup_ops().vzdump(r, &mut rq())),
        (400, msg.into())
    );
}

#[rstest]
fn guests_on_another_node_are_left_to_it(mut lab: World) {
    let mut r = req(100);
    r.node = "elsewhere".into();
    assert!(
        lab.c
            .backup_ops()
            .vzdump(r, &mut rq())
            .expect("accepted")
            .is_none()
    );
}

#[rstest]
fn the_config_comes_out_of_the_archive(mut lab: World) {
    dump(&mut lab, req(100));
    let volid = backups(&lab, None)[0]["volid"]
        .as_str()
        .expect("volid")
        .to_string();
    let text = lab
        .c
        .backup_reader()
        .extract_config("pve", &volid)
        .expect("config");
    assert!(text.contains("name: web\n"), "{text}");
    assert!(text.contains("memory: 2048\n"), "{text}");
    assert!(!text.contains("lock:"), "{text}");
    assert!(
        text.ends_with("#qmdump#map:scsi0:drive-scsi0:local-lvm:raw:\n"),
        "{text}"
    );
    assert_eq!(
        refused(
            lab.c
                .backup_reader()
                .extract_config("pve", "local:backup/nope.vma")
        ),
        (500, "volume 'local:backup/nope.vma' does not exist".into())
    );
    // Deleting the volume takes its content with it.
    let name = volid.trim_start_matches("local:").to_string();
    lab.c.backup_ops().drop_volume("local", "pve", &name);
    let key = crate::model::backup::archive_key(false, "pve", &volid);
    assert!(lab.c.backups().archive(&key).is_none());
}

fn restore_req(vmid: u32, archive: &str) -> RestoreRequest {
    RestoreRequest {
        node: "pve".into(),
        vmid,
        archive: archive.into(),
        ..RestoreRequest::default()
    }
}

fn restore(w: &mut World, r: RestoreRequest) -> String {
    let mut ctx = Context::new(w.now_ms, 5);
    let worker = w.c.backup_ops().restore_vm(r, &mut ctx).expect("accepted");
    let upid = w.run_as("pve", worker, "root@pam", 1000);
    w.tick(1000);
    upid
}

#[rstest]
#[case::a_user_without_sdn_use(
    Some("nobody@pve"),
    None,
    "Permission check failed (/sdn/zones/localnetwork/vmbr0, SDN.Use)"
)]
#[case::the_bridge_given_over_the_backed_up_one(
    Some("nobody@pve"),
    Some("virtio,bridge=vmbr9"),
    "Permission check failed (/sdn/zones/localnetwork/vmbr9, SDN.Use)"
)]
#[case::root_pam(Some("root@pam"), None, "OK")]
#[case::a_task_saved_without_its_user(None, None, "OK")]
fn a_restore_checks_the_restored_configs_bridges_for_its_user(
    mut lab: World,
    #[case] user: Option<&str>,
    #[case] net0: Option<&str>,
    #[case] exit: &str,
) {
    dump(&mut lab, req(100));
    let volid = backups(&lab, None)[0]["volid"]
        .as_str()
        .expect("volid")
        .to_string();
    let mut r = restore_req(121, &volid);
    r.user = user.map(str::to_string);
    if let Some(net) = net0 {
        r.overrides = map(&[("net0", net)]);
    }
    let upid = restore(&mut lab, r);
    assert_eq!(lab.exit(&upid), exit, "{:#?}", log(&lab, &upid));
    // Refused, the VM keeps no lock and nothing was restored to it.
    assert_eq!(lab.conf(121, "lock"), None);
    assert_eq!(lab.conf(121, "scsi0").is_some(), exit == "OK");
}

#[rstest]
fn a_backup_restores_to_a_new_vmid_with_its_config_and_disks(mut lab: World) {
    dump(&mut lab, req(100));
    let volid = backups(&lab, None)[0]["volid"]
        .as_str()
        .expect("volid")
        .to_string();
    lab.c
        .access
        .pools_mut()
        .create("restored", None)
        .expect("pool");
    let mut r = restore_req(120, &volid);
    r.unique = true;
    r.pool = Some("restored".into());
    r.overrides = map(&[("name", "web-copy")]);
    let upid = restore(&mut lab, r);
    assert_eq!(lab.exit(&upid), "OK", "{:#?}", log(&lab, &upid));
    assert_eq!(lab.conf(120, "name").as_deref(), Some("web-copy"));
    assert_eq!(lab.conf(120, "memory").as_deref(), Some("2048"));
    assert_eq!(
        lab.conf(120, "scsi0").as_deref(),
        Some("local-lvm:vm-120-disk-0,size=8G")
    );
    assert!(
        lab.c
            .storage
            .volume("local-lvm:vm-120-disk-0", "pve")
            .is_some()
    );
    assert_ne!(lab.conf(120, "net0"), lab.conf(100, "net0"), "unique MAC");
    assert_eq!(lab.conf(120, "lock"), None);
    assert_eq!(lab.c.access.pools().pool_of(120), Some("restored"));
    let log = log(&lab, &upid);
    assert!(
        log.iter()
            .any(|l| l == "new volume ID is 'local-lvm:vm-120-disk-0'")
    );
    assert!(
        log.iter()
            .any(|l| l.starts_with("restore vma archive: zstd -q -d -c /var/lib/vz/dump/"))
    );
}

#[rstest]
fn restoring_over_an_existing_vm_needs_force(mut lab: World) {
    dump(&mut lab, req(100));
    let volid = backups(&lab, None)[0]["volid"]
        .as_str()
        .expect("volid")
        .to_string();
    let r = lab
        .c
        .backup_ops()
        .restore_vm(restore_req(100, &volid), &mut rq());
    assert_eq!(
        refused(r),
        (
            500,
            "unable to restore VM 100 - VM 100 already exists on node 'pve'".into()
        )
    );
    // With force the VM is replaced: a new disk, the old one freed.
    if let Some(vm) = lab.c.guests.get_mut(&100) {
        vm.config.insert("memory".into(), "8192".into());
    }
    let mut r = restore_req(100, &volid);
    r.force = true;
    let upid = restore(&mut lab, r);
    assert_eq!(lab.exit(&upid), "OK", "{:#?}", log(&lab, &upid));
    assert_eq!(lab.conf(100, "memory").as_deref(), Some("2048"));
    assert_eq!(
        lab.conf(100, "scsi0").as_deref(),
        Some("local-lvm:vm-100-disk-0,size=8G")
    );
}

#[rstest]
fn restoring_over_a_running_vm_fails_in_the_task(mut lab: World) {
    dump(&mut lab, req(101));
    let volid = backups(&lab, None)[0]["volid"]
        .as_str()
        .expect("volid")
        .to_string();
    let mut r = restore_req(101, &volid);
    r.force = true;
    let upid = restore(&mut lab, r);
    assert_eq!(lab.exit(&upid), "unable to restore VM 101 - vm is running");
    assert_eq!(lab.conf(101, "lock"), None, "the create lock goes");
    assert!(
        log(&lab, &upid)
            .iter()
            .any(|l| l.contains("VM 101 state is NOT cleaned up"))
    );
}

#[rstest]
#[case(
    "local:backup/vzdump-qemu-100-2020_01_01-00_00_00.vma.zst",
    "can't find file 'local:backup/vzdump-qemu-100-2020_01_01-00_00_00.vma.zst'"
)]
#[case("nope:backup/x.vma", "storage 'nope' does not exist")]
#[case("/tmp/x.vma", "can't find file '/tmp/x.vma'")]
fn a_missing_archive_is_refused(mut lab: World, #[case] archive: &str, #[case] msg: &str) {
    let r = lab
        .c
        .backup_ops()
        .restore_vm(restore_req(130, archive), &mut rq());
    assert_eq!(refused(r), (500, msg.into()));
    assert!(!lab.c.guests.contains_key(&130));
}

/// Three backups of VM 100 a day apart (the newest protected) and one
/// of VM 101.
fn three_days(w: &mut World) -> Vec<String> {
    for i in 0..3 {
        let mut r = req(100);
        r.protected = i == 0;
        dump(w, r);
        w.tick(86_400_000);
    }
    dump(w, req(101));
    backups(w, Some(100))
        .iter()
        .map(|b| b["volid"].as_str().expect("volid").to_string())
        .collect()
}

#[rstest]
fn prune_keeps_the_newest_and_the_protected(mut lab: World) {
    let vols = three_days(&mut lab);
    assert_eq!(vols.len(), 3);
    let marks = lab
        .c
        .storage
        .prune_dryrun("local", "pve", Some("keep-last=1"), Some(100), None)
        .expect("dry run");
    let by: BTreeMap<String, String> = marks
        .iter()
        .map(|m| (m.volid.clone(), m.mark.clone()))
        .collect();
    assert_eq!(by[&vols[0]], "protected");
    assert_eq!(by[&vols[1]], "remove");
    assert_eq!(by[&vols[2]], "keep");
    let worker = lab
        .c
        .storage
        .prune_backups("local", "pve", Some("keep-last=1"), Some(100), None)
        .expect("prune");
    assert_eq!(worker.id, "100@local");
    let upid = lab.run("pve", worker);
    assert_eq!(lab.exit(&upid), "OK");
    assert_eq!(
        log(&lab, &upid)[0],
        format!("removing backup '{}'", vols[1])
    );
    assert_eq!(backups(&lab, Some(100)).len(), 2);
    assert_eq!(backups(&lab, Some(101)).len(), 1, "other guests untouched");
}

#[rstest]
fn prune_needs_a_retention(lab: World) {
    assert_eq!(
        refused(lab.c.storage.prune_dryrun("local", "pve", None, None, None)),
        (
            500,
            "no prune-backups options configured for storage 'local'".into()
        )
    );
    assert_eq!(
        refused(
            lab.c
                .storage
                .prune_dryrun("local-lvm", "pve", Some("keep-last=1"), None, None)
        ),
        (500, "storage 'local-lvm' does not support backups".into())
    );
}

#[rstest]
fn vzdump_prunes_with_its_retention(mut lab: World) {
    dump(&mut lab, req(100));
    lab.tick(3_600_000);
    let mut r = req(100);
    r.prune_backups = Some("keep-last=1".into());
    let upid = dump(&mut lab, r);
    let log = log(&lab, &upid);
    assert!(
        log.iter()
            .any(|l| l == "INFO: prune older backups with retention: keep-last=1")
    );
    assert!(
        log.iter()
            .any(|l| l == "INFO: pruned 1 backup(s) not covered by keep-retention policy")
    );
    assert_eq!(backups(&lab, Some(100)).len(), 1);
}

#[rstest]
fn a_job_runs_when_the_clock_passes_its_schedule(mut lab: World) {
    let opts = map(&[("schedule", "daily"), ("vmid", "100"), ("storage", "local")]);
    let id = lab
        .c
        .backups
        .create_backup_job(None, opts, &mut rq())
        .expect("create");
    assert!(id.starts_with("backup-") && id.len() == 20, "{id}");
    let view = crate::api::backup::view::jobs(&lab.c.backups.backup_jobs(T0));
    let midnight = T0 - T0 % 86_400 + 86_400;
    assert_eq!(view[0]["next-run"], midnight);
    assert_eq!(view[0]["enabled"], 1);
    assert_eq!(view[0]["type"], "vzdump");
    let before = lab.c.tasks().len();
    lab.now_ms = (midnight + 30) * 1000;
    lab.c.advance(lab.now_ms);
    let tasks: Vec<_> = lab.c.tasks().iter().skip(before).collect();
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].upid.kind, "vzdump");
    assert_eq!(tasks[0].upid.starttime, midnight);
    assert_eq!(tasks[0].upid.user, "root@pam");
    assert_eq!(backups(&lab, Some(100)).len(), 1);
    // It does not run again before the next midnight.
    lab.c.advance(lab.now_ms + 3_600_000);
    assert_eq!(lab.c.tasks().len(), before + 1);
    // The guests it covers are backed up; the others are not.
    let not: Vec<u64> = lab
        .c
        .backup_reader()
        .not_backed_up()
        .iter()
        .map(|g| u64::from(g.vmid))
        .collect();
    assert_eq!(not, [101, 900]);
}

#[rstest]
fn jobs_are_changed_and_deleted(mut lab: World) {
    let opts = map(&[("schedule", "sat 02:00"), ("all", "1"), ("exclude", "900")]);
    let id = lab
        .c
        .backups
        .create_backup_job(Some("weekly-all".into()), opts, &mut rq())
        .expect("create");
    assert_eq!(id, "weekly-all");
    let vols = crate::api::backup::view::included_volumes(
        &lab.c
            .backup_reader()
            .job_included_volumes(&id, |_| true)
            .expect("volumes"),
    );
    let ids: Vec<u64> = vols["children"]
        .as_array()
        .expect("children")
        .iter()
        .map(|c| c["id"].as_u64().expect("id"))
        .collect();
    assert_eq!(ids, [100, 101]);
    assert_eq!(vols["children"][0]["children"][0]["id"], "100:scsi0");
    lab.c
        .backups
        .update_backup_job(&id, map(&[("vmid", "101")]), &[])
        .expect("update");
    let job = crate::api::backup::view::job(&id, lab.c.backups.backup_job(&id).expect("job"));
    assert_eq!(job["vmid"], "101");
    assert!(job.get("all").is_none() && job.get("exclude").is_none());
    assert_eq!(
        refused(
            lab.c
                .backups
                .update_backup_job(&id, BTreeMap::new(), &["bogus".into()])
        ),
        (400, "delete: unknown option 'bogus'".into())
    );
    assert_eq!(
        refused(lab.c.backups.create_backup_job(
            Some(id.clone()),
            map(&[("schedule", "daily"), ("all", "1")]),
            &mut rq()
        )),
        (500, "Job 'weekly-all' already exists".into())
    );
    lab.c.backups.delete_backup_job(&id).expect("delete");
    assert_eq!(
        refused(lab.c.backups.delete_backup_job(&id)),
        (400, "id: No such job 'weekly-all'".into())
    );
}

#[rstest]
#[case(&[("vmid", "100")], "schedule: neither 'starttime' nor 'schedule' were set")]
#[case(&[("vmid", "100"), ("schedule", "someday")],
       "schedule: invalid calendar event 'someday' - unable to parse calendar event")]
#[case(&[("schedule", "daily")], "vmid: property is missing")]
fn job_refusals(mut lab: World, #[case] opts: &[(&str, &str)], #[case] msg: &str) {
    assert_eq!(
        refused(lab.c.backups.create_backup_job(None, map(opts), &mut rq())),
        (400, msg.into())
    );
}

#[rstest]
fn a_job_keeps_numbers_and_its_retention_typed(mut lab: World) {
    let opts = map(&[
        ("schedule", "daily"),
        ("vmid", "100"),
        ("bwlimit", "100"),
        ("prune-backups", "keep-last=3,keep-daily=7"),
    ]);
    lab.c
        .backups
        .create_backup_job(Some("typed".into()), opts, &mut rq())
        .expect("create");
    let text = job_view(&lab, "typed").to_string();
    assert_eq!(
        text,
        r#"{"bwlimit":100,"enabled":1,"prune-backups":{"keep-daily":7,"keep-last":3},"schedule":"daily","vmid":"100","id":"typed","type":"vzdump"}"#
    );
    let saved =
        serde_json::to_string(lab.c.backups.backup_job("typed").expect("job")).expect("save");
    let back: crate::model::backup::Job = serde_json::from_str(&saved).expect("load");
    assert_eq!(&back, lab.c.backups.backup_job("typed").expect("job"));
}

/// A job as `GET /cluster/backup/{id}` shows it.
fn job_view(lab: &World, id: &str) -> serde_json::Value {
    crate::api::backup::view::job(id, lab.c.backups.backup_job(id).expect("job"))
}

#[rstest]
fn a_purged_guest_leaves_the_backup_jobs(mut lab: World) {
    let mk = |lab: &mut World, id: &str, opts: &[(&str, &str)]| {
        lab.c
            .backups
            .create_backup_job(Some(id.into()), map(opts), &mut rq())
            .expect("create");
    };
    mk(
        &mut lab,
        "both",
        &[("schedule", "daily"), ("vmid", "100,101")],
    );
    mk(&mut lab, "only", &[("schedule", "daily"), ("vmid", "100")]);
    mk(
        &mut lab,
        "rest",
        &[("schedule", "daily"), ("exclude", "100")],
    );
    let op = crate::model::qemu::QemuOp::Destroy {
        skiplock: false,
        purge: true,
        unreferenced: false,
    };
    lab.run("pve", super::qm_worker("qmdestroy", 100, op));
    assert_eq!(job_view(&lab, "both")["vmid"], "101");
    assert!(
        lab.c.backups.backup_job("only").is_err(),
        "a job left without guests goes"
    );
    let rest = job_view(&lab, "rest");
    assert!(rest.get("exclude").is_none() && rest["all"] == 1, "{rest}");
}

#[rstest]
fn guests_without_vm_backup_fail_the_task_or_are_skipped_with_all(mut lab: World) {
    let mut r = req(100);
    r.vmid = vec![100, 101];
    r.denied = vec![101];
    let upid = dump(&mut lab, r);
    assert_eq!(
        lab.exit(&upid),
        "Permission check failed (/vms/101, VM.Backup)"
    );
    assert!(backups(&lab, None).is_empty(), "nothing is backed up");
    assert_eq!(lab.conf(100, "lock"), None);
    let mut r = req(100);
    r.vmid.clear();
    r.all = true;
    r.denied = vec![101, 900];
    let upid = dump(&mut lab, r);
    assert_eq!(lab.exit(&upid), "OK");
    assert_eq!(backups(&lab, None).len(), 1, "only VM 100");
}

/// [`super::LAB`] with `local` taking container volumes, and three
/// containers: 300 running on `local-lvm` with a backed-up and a
/// left-out mount point, 301 stopped on `local` (no snapshots there),
/// 302 running on `local`.
fn ct_lab() -> World {
    let yaml = super::LAB.replace(
        "content: [iso, vztmpl, backup, snippets, images]",
        "content: [iso, vztmpl, backup, snippets, images, rootdir]",
    ) + r#"
containers:
  - vmid: 300
    hostname: ct-web
    status: running
    config:
      arch: amd64
      ostype: debian
      memory: 1024
      unprivileged: 1
      rootfs: local-lvm:vm-300-disk-0,size=4G
      mp0: local-lvm:vm-300-disk-1,mp=/data,backup=1,size=2G
      mp1: local-lvm:vm-300-disk-2,mp=/scratch,size=1G
      net0: name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:03:00,ip=dhcp,type=veth
  - vmid: 301
    hostname: ct-dir
    config:
      arch: amd64
      ostype: debian
      unprivileged: 1
      rootfs: local:301/vm-301-disk-0.raw,size=2G
  - vmid: 302
    status: running
    config:
      arch: amd64
      ostype: debian
      rootfs: local:302/vm-302-disk-0.raw,size=2G
"#;
    World::from_yaml(&yaml)
}

fn ct_conf(w: &World, vmid: u32, key: &str) -> Option<String> {
    w.c.guests()
        .ct_by_id(vmid)
        .and_then(|c| c.config().get(key).cloned())
}

fn has(log: &[String], want: &str) -> bool {
    log.iter().any(|l| l == want)
}

#[rstest]
fn a_container_backup_snapshots_its_volumes_and_leaves_a_tar_archive() {
    let mut w = ct_lab();
    let mut r = req(300);
    r.notes_template = Some("{{guestname}} ({{vmid}})".into());
    let upid = start_dump(&mut w, r);
    assert_eq!(ct_conf(&w, 300, "lock").as_deref(), Some("backup"));
    w.tick(2000);
    assert_eq!(w.exit(&upid), "OK", "{:#?}", log(&w, &upid));
    assert_eq!(ct_conf(&w, 300, "lock"), None);
    let items = backups(&w, Some(300));
    assert_eq!(items.len(), 1);
    let b = &items[0];
    let file = format!(
        "vzdump-lxc-300-{}.tar.zst",
        crate::model::backup::name_time(T0)
    );
    assert_eq!(b["volid"], json!(format!("local:backup/{file}")));
    assert_eq!(b["subtype"], "lxc");
    assert_eq!(b["format"], "tar.zst");
    assert_eq!(b["vmid"], 300);
    assert_eq!(b["ctime"], T0);
    assert_eq!(b["notes"], "ct-web (300)");
    assert!(b["size"].as_u64().is_some_and(|s| s > 0));
    let l = log(&w, &upid);
    let order = [
        "INFO: Starting Backup of VM 300 (lxc)",
        "INFO: status = running",
        "INFO: CT Name: ct-web",
        "INFO: including mount point rootfs ('/') in backup",
        "INFO: including mount point mp0 ('/data') in backup",
        "INFO: excluding volume mount point mp1 ('/scratch') from backup (disabled)",
        "INFO: backup mode: snapshot",
        "INFO: ionice priority: 7",
        "INFO: suspend vm to make snapshot",
        "INFO: create storage snapshot 'vzdump'",
        "  Logical volume \"snap_vm-300-disk-0_vzdump\" created.",
        "  Logical volume \"snap_vm-300-disk-1_vzdump\" created.",
        "INFO: resume vm",
        &format!("INFO: creating vzdump archive '/var/lib/vz/dump/{file}'"),
        "INFO: adding notes to backup",
        "INFO: prune older backups with retention: keep-all=1",
        "INFO: pruned 0 backup(s)",
        "INFO: cleanup temporary 'vzdump' snapshot",
        "  Logical volume \"snap_vm-300-disk-0_vzdump\" successfully removed.",
        "INFO: Finished Backup of VM 300 (00:00:02)",
        "INFO: Backup job finished successfully",
    ];
    let mut at = 0;
    for want in order {
        let Some(i) = l[at..].iter().position(|x| x == want) else {
            panic!("missing {want:?} after line {at} in {l:#?}");
        };
        at += i + 1;
    }
    assert!(
        l.iter()
            .any(|x| x.starts_with("INFO: Total bytes written: ")),
        "{l:#?}"
    );
    // The archive holds the config, without the lock.
    let volid = format!("local:backup/{file}");
    let text =
        w.c.backup_reader()
            .extract_config("pve", &volid)
            .expect("config");
    assert!(text.contains("hostname: ct-web\n"), "{text}");
    assert!(
        text.contains("mp1: local-lvm:vm-300-disk-2,mp=/scratch,size=1G\n"),
        "{text}"
    );
    assert!(
        !text.contains("lock:") && !text.contains("#qmdump#"),
        "{text}"
    );
}

#[rstest]
#[case::stopped(301, "snapshot", "stop", &["INFO: status = stopped"], &["INFO: stopping virtual guest"])]
#[case::no_snapshots_on_dir(302, "snapshot", "suspend", &[
    "INFO: mode failure - some volumes do not support snapshots",
    "INFO: trying 'suspend' mode instead",
    "INFO: suspending guest",
    "INFO: resuming guest",
], &["INFO: create storage snapshot 'vzdump'"])]
#[case::stop_mode(302, "stop", "stop", &[
    "INFO: stopping virtual guest",
    "INFO: restarting vm",
], &["INFO: suspending guest"])]
#[case::suspend_mode(300, "suspend", "suspend", &["INFO: suspending guest"], &["INFO: restarting vm"])]
fn container_backup_modes(
    #[case] vmid: u32,
    #[case] asked: &str,
    #[case] used: &str,
    #[case] present: &[&str],
    #[case] absent: &[&str],
) {
    let mut w = ct_lab();
    let mut r = req(vmid);
    r.mode = asked.into();
    r.compress = "gzip".into();
    let upid = dump(&mut w, r);
    assert_eq!(w.exit(&upid), "OK", "{:#?}", log(&w, &upid));
    let l = log(&w, &upid);
    assert!(has(&l, &format!("INFO: backup mode: {used}")), "{l:#?}");
    for p in present {
        assert!(has(&l, p), "missing {p:?} in {l:#?}");
    }
    for a in absent {
        assert!(!has(&l, a), "unexpected {a:?} in {l:#?}");
    }
    let b = &backups(&w, Some(vmid))[0];
    assert_eq!(b["format"], "tar.gz");
    assert!(b["volid"].as_str().is_some_and(|v| v.ends_with(".tar.gz")));
    // The guest is in the power state it was in.
    let running = w.c.guests().ct_by_id(vmid).is_some_and(|c| c.running());
    assert_eq!(running, vmid != 301);
}

#[rstest]
fn all_backs_up_vms_and_containers_and_a_locked_container_fails() {
    let mut w = ct_lab();
    w.c.guests.lock_ct(301, "migrate").expect("lock");
    let mut r = req(0);
    r.vmid = vec![];
    r.all = true;
    r.exclude = vec![900];
    let upid = dump(&mut w, r);
    assert_eq!(w.exit(&upid), "job errors");
    let l = log(&w, &upid);
    assert!(
        has(
            &l,
            "ERROR: Backup of VM 301 failed - CT is locked (migrate)"
        ),
        "{l:#?}"
    );
    for vmid in [100, 101, 300, 302] {
        assert_eq!(backups(&w, Some(vmid)).len(), 1, "{vmid}: {l:#?}");
    }
    let kinds: Vec<String> = backups(&w, None)
        .iter()
        .map(|b| b["subtype"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(kinds.contains(&"qemu".to_string()) && kinds.contains(&"lxc".to_string()));
    assert_eq!(ct_conf(&w, 301, "lock").as_deref(), Some("migrate"));
    // not-backed-up names containers by hostname.
    let nb: Vec<_> =
        w.c.backup_reader()
            .not_backed_up()
            .iter()
            .map(crate::api::backup::view::not_backed_up)
            .collect();
    assert!(nb.contains(&json!({"vmid": 300, "type": "lxc", "name": "ct-web"})));
}

#[rstest]
fn pruning_a_container_group_leaves_the_vm_backups() {
    let mut w = ct_lab();
    for _ in 0..3 {
        dump(&mut w, req(300));
        w.tick(3_600_000);
    }
    let mut r = req(300);
    r.prune_backups = Some("keep-last=2".into());
    let upid = dump(&mut w, r);
    let l = log(&w, &upid);
    assert!(
        has(&l, "INFO: prune older backups with retention: keep-last=2"),
        "{l:#?}"
    );
    assert!(
        has(
            &l,
            "INFO: pruned 2 backup(s) not covered by keep-retention policy"
        ),
        "{l:#?}"
    );
    assert_eq!(backups(&w, Some(300)).len(), 2);
}

fn ct_restore_req(vmid: u32, archive: &str) -> crate::model::lxc::CtRestoreRequest {
    crate::model::lxc::CtRestoreRequest {
        vmid,
        node: "pve".into(),
        archive: archive.into(),
        storage: Some("local-lvm".into()),
        is_root: true,
        sys_modify: true,
        ..Default::default()
    }
}

fn ct_restore(w: &mut World, r: crate::model::lxc::CtRestoreRequest) -> String {
    let mut ctx = Context::new(w.now_ms, 5);
    let worker = w.c.ct_ops().restore_ct(r, &mut ctx).expect("accepted");
    assert_eq!(worker.kind, "vzrestore");
    let upid = w.run_as("pve", worker, "root@pam", 1000);
    w.tick(1000);
    upid
}

/// Backs up container `vmid`; answers the backup's volume ID.
fn ct_backup(w: &mut World, vmid: u32) -> String {
    let upid = dump(w, req(vmid));
    assert_eq!(w.exit(&upid), "OK");
    backups(w, Some(vmid))
        .last()
        .and_then(|b| b["volid"].as_str().map(str::to_string))
        .expect("a backup")
}

#[rstest]
fn a_container_restores_to_a_new_vmid_with_its_config_and_volumes() {
    let mut w = ct_lab();
    let volid = ct_backup(&mut w, 300);
    w.c.access
        .pools_mut()
        .create("restored", None)
        .expect("pool");
    let mut r = ct_restore_req(320, &volid);
    r.unique = true;
    r.pool = Some("restored".into());
    r.config = map(&[("memory", "2048")]);
    let upid = ct_restore(&mut w, r);
    assert_eq!(w.exit(&upid), "OK", "{:#?}", log(&w, &upid));
    assert_eq!(ct_conf(&w, 320, "hostname").as_deref(), Some("ct-web"));
    assert_eq!(ct_conf(&w, 320, "memory").as_deref(), Some("2048"));
    assert_eq!(ct_conf(&w, 320, "unprivileged").as_deref(), Some("1"));
    assert_eq!(
        ct_conf(&w, 320, "rootfs").as_deref(),
        Some("local-lvm:vm-320-disk-0,size=4G")
    );
    assert_eq!(
        ct_conf(&w, 320, "mp0").as_deref(),
        Some("local-lvm:vm-320-disk-1,mp=/data,backup=1,size=2G")
    );
    assert_eq!(
        ct_conf(&w, 320, "mp1").as_deref(),
        Some("local-lvm:vm-320-disk-2,mp=/scratch,size=1G")
    );
    assert!(
        w.c.storage
            .volume("local-lvm:vm-320-disk-1", "pve")
            .is_some()
    );
    let net = ct_conf(&w, 320, "net0").unwrap_or_default();
    assert!(
        net.contains("bridge=vmbr0") && !net.contains("BC:24:11:00:03:00"),
        "{net}"
    );
    assert_eq!(ct_conf(&w, 320, "lock"), None);
    assert_eq!(w.c.access.pools().pool_of(320), Some("restored"));
    let l = log(&w, &upid);
    for want in [
        format!("recovering backed-up configuration from '{volid}'"),
        "  Logical volume \"vm-320-disk-0\" created.".to_string(),
        format!("restoring '{volid}' now.."),
        format!(
            "extracting archive '/var/lib/vz/dump/{}'",
            volid.trim_start_matches("local:backup/")
        ),
        "merging backed-up and given configuration..".to_string(),
    ] {
        assert!(has(&l, &want), "missing {want:?} in {l:#?}");
    }
}

#[rstest]
fn a_rootfs_given_replaces_the_backed_up_mount_points() {
    let mut w = ct_lab();
    let volid = ct_backup(&mut w, 300);
    let mut r = ct_restore_req(321, &volid);
    r.config = map(&[("rootfs", "tank:8")]);
    let upid = ct_restore(&mut w, r);
    assert_eq!(w.exit(&upid), "OK", "{:#?}", log(&w, &upid));
    assert!(
        ct_conf(&w, 321, "rootfs").is_some_and(|v| v.starts_with("tank:subvol-321-disk-0")),
        "{:?}",
        ct_conf(&w, 321, "rootfs")
    );
    assert_eq!(ct_conf(&w, 321, "mp0"), None);
    // The MAC stays without unique.
    assert!(ct_conf(&w, 321, "net0").is_some_and(|n| n.contains("hwaddr=BC:24:11:00:03:00")));
}

#[rstest]
fn restoring_over_an_existing_container_needs_force_and_a_stopped_one() {
    let mut w = ct_lab();
    let volid = ct_backup(&mut w, 301);
    // Without force: the VMID is taken (by a container or a VM).
    assert_eq!(
        refused(
            w.c.ct_ops()
                .restore_ct(ct_restore_req(301, &volid), &mut rq())
        ),
        (500, "CT 301 already exists on node 'pve'".into())
    );
    assert_eq!(
        refused(
            w.c.ct_ops()
                .restore_ct(ct_restore_req(100, &volid), &mut rq())
        ),
        (500, "VM 100 already exists on node 'pve'".into())
    );
    let mut forced = ct_restore_req(100, &volid);
    forced.force = true;
    assert_eq!(
        refused(w.c.ct_ops().restore_ct(forced, &mut rq())),
        (500, "VM 100 already exists on node 'pve'".into())
    );
    // A running container is not overwritten.
    let running_backup = ct_backup(&mut w, 302);
    let mut r = ct_restore_req(302, &running_backup);
    r.force = true;
    assert_eq!(
        refused(w.c.ct_ops().restore_ct(r, &mut rq())),
        (500, "can't overwrite running container".into())
    );
    // With force: the old volume is freed, the backed-up config is back.
    let old_root = ct_conf(&w, 301, "rootfs").unwrap_or_default();
    w.c.ct_ops()
        .update_ct_config(
            "pve",
            301,
            &crate::model::lxc::CtUpdate {
                set: map(&[("memory", "4096")]),
                ..Default::default()
            },
            &mut rq(),
        )
        .expect("update");
    let mut r = ct_restore_req(301, &volid);
    r.force = true;
    let upid = ct_restore(&mut w, r);
    assert_eq!(w.exit(&upid), "OK", "{:#?}", log(&w, &upid));
    assert_eq!(
        ct_conf(&w, 301, "memory").as_deref(),
        Some("512"),
        "PVE's default again"
    );
    assert_eq!(
        ct_conf(&w, 301, "rootfs").as_deref(),
        Some("local-lvm:vm-301-disk-0,size=2G")
    );
    assert!(old_root.starts_with("local:301/"));
    assert!(
        w.c.storage
            .volume("local:301/vm-301-disk-0.raw", "pve")
            .is_none()
    );
}

#[rstest]
fn a_protected_container_is_not_overwritten() {
    let mut w = ct_lab();
    let volid = ct_backup(&mut w, 301);
    w.c.ct_ops()
        .update_ct_config(
            "pve",
            301,
            &crate::model::lxc::CtUpdate {
                set: map(&[("protection", "1")]),
                ..Default::default()
            },
            &mut rq(),
        )
        .expect("update");
    let mut r = ct_restore_req(301, &volid);
    r.force = true;
    assert_eq!(
        refused(w.c.ct_ops().restore_ct(r, &mut rq())),
        (
            500,
            "unable to restore CT 301 - protection mode enabled".into()
        )
    );
}

#[rstest]
#[case::missing(
    "local:backup/vzdump-lxc-300-2020_01_01-00_00_00.tar.zst",
    "unable to restore CT 330 - can't find file 'local:backup/vzdump-lxc-300-2020_01_01-00_00_00.tar.zst'"
)]
#[case::vm_archive(
    "VM",
    "unable to restore CT 330 - ERROR: archive contains no configuration file"
)]
fn a_missing_or_foreign_archive_fails_the_task(#[case] archive: &str, #[case] msg: &str) {
    let mut w = ct_lab();
    let archive = if archive == "VM" {
        dump(&mut w, req(100));
        backups(&w, Some(100))[0]["volid"]
            .as_str()
            .expect("volid")
            .to_string()
    } else {
        archive.to_string()
    };
    let upid = ct_restore(&mut w, ct_restore_req(330, &archive));
    assert_eq!(w.exit(&upid), msg);
    assert!(w.c.guests().ct_by_id(330).is_none(), "the config goes");
}

#[rstest]
fn restore_refusals_before_the_task() {
    let mut w = ct_lab();
    let volid = ct_backup(&mut w, 300);
    assert_eq!(
        refused(w.c.ct_ops().restore_ct(
            ct_restore_req(340, "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"),
            &mut rq()
        )),
        (
            500,
            "unable to use volume local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst - content type needs to be 'backup'"
                .into()
        )
    );
    let mut r = ct_restore_req(340, &volid);
    r.storage = Some("local-lvm".into());
    r.config = map(&[("mp0", "local-lvm:1,mp=/x")]);
    assert_eq!(
        refused(w.c.ct_ops().restore_ct(r, &mut rq())),
        (
            500,
            "mount points configured, but 'rootfs' not set - aborting".into()
        )
    );
    let mut r = ct_restore_req(340, &volid);
    r.storage = None;
    let mut lab = lab_ct_without_rootdir_on_local();
    assert_eq!(
        refused(lab.c.ct_ops().restore_ct(r, &mut rq())),
        (
            400,
            "storage: storage 'local' does not support container directories".into()
        )
    );
    assert!(lab.c.guests().ct_by_id(340).is_none());
}

/// The plain [`super::LAB`]: `local` takes no container volumes.
fn lab_ct_without_rootdir_on_local() -> World {
    World::from_yaml(super::LAB)
}

#[rstest]
fn a_privileged_backup_needs_sys_modify() {
    let mut w = ct_lab();
    let volid = ct_backup(&mut w, 302);
    let mut r = ct_restore_req(350, &volid);
    r.sys_modify = false;
    let upid = ct_restore(&mut w, r);
    assert_eq!(
        w.exit(&upid),
        "unable to restore CT 350 - Permission check failed (/, Sys.Modify)"
    );
    assert!(w.c.guests().ct_by_id(350).is_none());
}

#[rstest]
fn a_restore_applies_the_storages_and_datacenters_rate_limits(mut lab: World) {
    dump(&mut lab, req(100));
    let volid = backups(&lab, None)[0]["volid"]
        .as_str()
        .expect("volid")
        .to_string();
    // The backup storage limits reading; datacenter.cfg the target.
    lab.c
        .storage
        .find_mut("local")
        .expect("local")
        .options
        .insert("bwlimit".into(), "restore=2048,default=9999".into());
    let version = lab.c.version;
    lab.c
        .datacenter
        .set(version, &map(&[("bwlimit", "default=4096")]), &[])
        .expect("datacenter.cfg");
    let upid = restore(&mut lab, restore_req(130, &volid));
    assert_eq!(lab.exit(&upid), "OK", "{:#?}", log(&lab, &upid));
    let lines = log(&lab, &upid);
    let at = |want: &str| lines.iter().position(|l| l.starts_with(want));
    let read = at("applying read rate limit: 2048").expect("read limit");
    let cmd = at("restore vma archive: cstream -t 2097152 -- /var/lib/vz/dump/").expect("cstream");
    assert!(
        lines[cmd].contains(" | zstd -q -d -c - | vma extract -v -r "),
        "{}",
        lines[cmd]
    );
    let ctime = at("CTIME: ").expect("CTIME");
    let target = at("rate limit for storage local-lvm: 4096 KiB/s").expect("write limit");
    let alloc = at("new volume ID is").expect("allocation");
    assert!(
        read < cmd && cmd < ctime && ctime < target && target < alloc,
        "{lines:#?}"
    );

    // A caller's `bwlimit` is held to the limits unless they may change
    // them (root may: its 1 KiB/s wins everywhere).
    let mut r = restore_req(131, &volid);
    r.bwlimit = Some(1);
    r.user = Some("root@pam".into());
    let upid = restore(&mut lab, r);
    let lines = log(&lab, &upid);
    assert!(
        lines.contains(&"applying read rate limit: 1".to_string()),
        "{lines:#?}"
    );
    assert!(lines.contains(&"rate limit for storage local-lvm: 1 KiB/s".to_string()));

    // Without limits, none of it.
    lab.c
        .storage
        .find_mut("local")
        .expect("local")
        .options
        .remove("bwlimit");
    lab.c
        .datacenter
        .set(version, &BTreeMap::new(), &["bwlimit".to_string()])
        .expect("datacenter.cfg");
    let upid = restore(&mut lab, restore_req(132, &volid));
    let lines = log(&lab, &upid);
    assert!(
        !lines.iter().any(|l| l.contains("rate limit")),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("restore vma archive: zstd -q -d -c /var/lib/vz/dump/"))
    );
}
