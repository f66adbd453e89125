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
    let worker = w.c.vzdump(r, &mut ctx).expect("accepted").expect("a task");
    w.run_as("pve", worker, "root@pam", 2000)
}

/// Runs a vzdump to its end; answers the UPID.
fn dump(w: &mut World, r: VzdumpRequest) -> String {
    let upid = start_dump(w, r);
    w.tick(2000);
    upid
}

fn backups(w: &World, vmid: Option<u32>) -> Vec<serde_json::Value> {
    w.c.content_list("local", "pve", Some("backup"), vmid)
        .expect("content")
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
    assert_eq!(refused(lab.c.vzdump(r, &mut rq())), (400, msg.into()));
}

#[rstest]
fn guests_on_another_node_are_left_to_it(mut lab: World) {
    let mut r = req(100);
    r.node = "elsewhere".into();
    assert!(lab.c.vzdump(r, &mut rq()).expect("accepted").is_none());
}

#[rstest]
fn the_config_comes_out_of_the_archive(mut lab: World) {
    dump(&mut lab, req(100));
    let volid = backups(&lab, None)[0]["volid"]
        .as_str()
        .expect("volid")
        .to_string();
    let text = lab.c.extract_config("pve", &volid).expect("config");
    assert!(text.contains("name: web\n"), "{text}");
    assert!(text.contains("memory: 2048\n"), "{text}");
    assert!(!text.contains("lock:"), "{text}");
    assert!(
        text.ends_with("#qmdump#map:scsi0:drive-scsi0:local-lvm:raw:\n"),
        "{text}"
    );
    assert_eq!(
        refused(lab.c.extract_config("pve", "local:backup/nope.vma")),
        (500, "volume 'local:backup/nope.vma' does not exist".into())
    );
    // Deleting the volume takes its content with it.
    let name = volid.trim_start_matches("local:").to_string();
    lab.c.drop_volume("local", "pve", &name);
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
    let worker = w.c.restore_vm(r, &mut ctx).expect("accepted");
    let upid = w.run_as("pve", worker, "root@pam", 1000);
    w.tick(1000);
    upid
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
    let r = lab.c.restore_vm(restore_req(100, &volid), &mut rq());
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
    let r = lab.c.restore_vm(restore_req(130, archive), &mut rq());
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
        .prune_dryrun("local", "pve", Some("keep-last=1"), Some(100), None)
        .expect("dry run");
    let by: BTreeMap<String, String> = marks
        .iter()
        .map(|m| {
            (
                m["volid"].as_str().expect("v").to_string(),
                m["mark"].as_str().expect("m").to_string(),
            )
        })
        .collect();
    assert_eq!(by[&vols[0]], "protected");
    assert_eq!(by[&vols[1]], "remove");
    assert_eq!(by[&vols[2]], "keep");
    let worker = lab
        .c
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
        refused(lab.c.prune_dryrun("local", "pve", None, None, None)),
        (
            500,
            "no prune-backups options configured for storage 'local'".into()
        )
    );
    assert_eq!(
        refused(
            lab.c
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
        .create_backup_job(None, opts, &mut rq())
        .expect("create");
    assert!(id.starts_with("backup-") && id.len() == 20, "{id}");
    let view = lab.c.backup_jobs_view(T0);
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
        .not_backed_up()
        .iter()
        .map(|g| g["vmid"].as_u64().expect("vmid"))
        .collect();
    assert_eq!(not, [101, 900]);
}

#[rstest]
fn jobs_are_changed_and_deleted(mut lab: World) {
    let opts = map(&[("schedule", "sat 02:00"), ("all", "1"), ("exclude", "900")]);
    let id = lab
        .c
        .create_backup_job(Some("weekly-all".into()), opts, &mut rq())
        .expect("create");
    assert_eq!(id, "weekly-all");
    let vols = lab.c.job_included_volumes(&id, |_| true).expect("volumes");
    let ids: Vec<u64> = vols["children"]
        .as_array()
        .expect("children")
        .iter()
        .map(|c| c["id"].as_u64().expect("id"))
        .collect();
    assert_eq!(ids, [100, 101]);
    assert_eq!(vols["children"][0]["children"][0]["id"], "100:scsi0");
    lab.c
        .update_backup_job(&id, map(&[("vmid", "101")]), &[])
        .expect("update");
    let job = lab.c.backup_job(&id).expect("job");
    assert_eq!(job["vmid"], "101");
    assert!(job.get("all").is_none() && job.get("exclude").is_none());
    assert_eq!(
        refused(
            lab.c
                .update_backup_job(&id, BTreeMap::new(), &["bogus".into()])
        ),
        (400, "delete: unknown option 'bogus'".into())
    );
    assert_eq!(
        refused(lab.c.create_backup_job(
            Some(id.clone()),
            map(&[("schedule", "daily"), ("all", "1")]),
            &mut rq()
        )),
        (500, "Job 'weekly-all' already exists".into())
    );
    lab.c.delete_backup_job(&id).expect("delete");
    assert_eq!(
        refused(lab.c.delete_backup_job(&id)),
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
        refused(lab.c.create_backup_job(None, map(opts), &mut rq())),
        (400, msg.into())
    );
}

#[rstest]
fn a_purged_guest_leaves_the_backup_jobs(mut lab: World) {
    let mk = |lab: &mut World, id: &str, opts: &[(&str, &str)]| {
        lab.c
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
    assert_eq!(lab.c.backup_job("both").expect("job")["vmid"], "101");
    assert!(
        lab.c.backup_job("only").is_err(),
        "a job left without guests goes"
    );
    let rest = lab.c.backup_job("rest").expect("job");
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
