//! Storage replication: the job configuration's checks, each node's
//! view of its jobs, and pvescheduler's runs on the emulated clock
//! (last_sync, next_sync, failures and their back-off, removal).

use rstest::rstest;

use super::{T0, World, refused};
use crate::api::replication::view;
use crate::model::PveVersion;
use crate::model::replication::{JobUpdate, parse_job_id};

/// Three nodes (pve3 offline), a ZFS pool on each node, and guests on
/// pve1: 100 on ZFS, 101 on LVM-thin, 102 without disks, container 103
/// on a ZFS subvolume, 104 on ZFS with its disk opted out.
const REPL: &str = r#"
cluster: lab
nodes:
  - name: pve1
  - name: pve2
  - name: pve3
    status: offline
storages:
  - { id: local, type: dir, path: /var/lib/vz }
  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve }
  - { id: local-zfs, type: zfspool, pool: rpool/data, size: 500G }
vms:
  - vmid: 100
    node: pve1
    status: running
    config:
      scsi0: local-zfs:vm-100-disk-0,size=8G
      ide2: local:iso/debian.iso,media=cdrom
      net0: virtio=BC:24:11:00:01:00,bridge=vmbr0
  - vmid: 101
    node: pve1
    config:
      scsi0: local-lvm:vm-101-disk-0,size=8G
  - vmid: 102
    node: pve1
    config:
      memory: 512
  - vmid: 104
    node: pve1
    config:
      scsi0: local-zfs:vm-104-disk-0,size=8G,replicate=0
containers:
  - vmid: 103
    node: pve1
    hostname: box
    config:
      rootfs: local-zfs:subvol-103-disk-0,size=4G
"#;

fn world() -> World {
    World::from_yaml(REPL)
}

fn to(target: &str) -> JobUpdate {
    JobUpdate {
        target: Some(target.into()),
        ..JobUpdate::default()
    }
}

fn status(w: &World, node: &str) -> Vec<serde_json::Value> {
    w.c.replication_reader()
        .replication_status(node, None, |_| true)
        .iter()
        .map(view::status_line)
        .collect()
}

/// `GET /cluster/replication/{id}` as the API answers it.
fn read(w: &World, id: &str) -> crate::model::Result<serde_json::Value> {
    let (job, digest) = w.c.replication().read(id)?;
    Ok(view::read(id, job, &digest))
}

/// A job's log on `node` as the API answers it, and its line count.
fn log_of(
    w: &World,
    node: &str,
    id: &str,
    start: usize,
    limit: usize,
) -> crate::model::Result<(Vec<serde_json::Value>, usize)> {
    let (lines, total) =
        w.c.replication_reader()
            .replication_log(node, id, start, limit)?;
    Ok((view::log(&lines), total))
}

#[rstest]
#[case("100-0", Ok((100, 0)))]
#[case("100-007", Ok((100, 7)))]
#[case(
    "99-0",
    Err("invalid replication job id '99-0' (guest IDs < 100 are reserved)")
)]
#[case("100", Err("invalid replication job id '100'"))]
#[case("a-1", Err("invalid replication job id 'a-1'"))]
fn job_ids_parse(#[case] id: &str, #[case] want: Result<(u32, u64), &str>) {
    match want {
        Ok(v) => assert_eq!(parse_job_id(id).expect("parses"), v),
        Err(m) => assert_eq!(refused(parse_job_id(id)).1, m),
    }
}

#[rstest]
#[case("102-0", "pve2", "No replicatable volumes found")]
#[case("104-0", "pve2", "No replicatable volumes found")]
#[case(
    "101-0",
    "pve2",
    "missing replicate feature on volume 'local-lvm:vm-101-disk-0'"
)]
#[case("100-0", "pve1", "Source and target must not be identical")]
#[case("100-0", "nope", "Target 'nope' does not exist.")]
#[case("555-0", "pve2", "Guest '555' does not exist.")]
fn create_refusals(#[case] id: &str, #[case] target: &str, #[case] msg: &str) {
    let mut w = world();
    let (code, m) = refused(
        w.c.replication_ops()
            .create_replication_job(id, &to(target), T0),
    );
    assert_eq!((code, m.as_str()), (500, msg));
}

#[test]
fn a_source_must_be_the_guests_node() {
    let mut w = world();
    let up = JobUpdate {
        source: Some("pve2".into()),
        ..to("pve2")
    };
    assert_eq!(
        refused(
            w.c.replication_ops()
                .create_replication_job("100-0", &up, T0)
        )
        .1,
        "Source 'pve2' does not match current node of guest '100' (pve1)"
    );
}

#[test]
fn one_job_per_guest_and_target() {
    let mut w = world();
    w.c.replication_ops()
        .create_replication_job("100-0", &to("pve2"), T0)
        .expect("created");
    assert_eq!(
        refused(
            w.c.replication_ops()
                .create_replication_job("100-0", &to("pve3"), T0)
        )
        .1,
        "replication job '100-0' already exists"
    );
    assert_eq!(
        refused(
            w.c.replication_ops()
                .create_replication_job("100-1", &to("pve2"), T0)
        )
        .1,
        "replication job for guest '100' to target 'local/pve2' already exists"
    );
    w.c.replication_ops()
        .create_replication_job("100-1", &to("pve3"), T0)
        .expect("another target");
    let job = read(&w, "100-0").expect("reads");
    assert_eq!(job["source"], "pve1");
    assert_eq!(job["type"], "local");
    assert_eq!(job["jobnum"], 0);
    assert_eq!(job["digest"].as_str().map(str::len), Some(40));
}

#[test]
fn a_new_job_runs_at_the_next_minute_and_then_on_its_schedule() {
    let mut w = world();
    w.c.replication_ops()
        .create_replication_job("100-0", &to("pve2"), w.now_ms / 1000)
        .expect("created");
    let before = status(&w, "pve1");
    assert_eq!(before.len(), 1);
    assert_eq!(before[0]["last_sync"], 0);
    assert_eq!(before[0]["fail_count"], 0);
    assert_eq!(before[0]["next_sync"], 900, "the first */15 event after 0");
    assert!(status(&w, "pve2").is_empty(), "listed on the guest's node");
    w.tick(60_000);
    let minute = T0 - T0.rem_euclid(60) + 60;
    let after = status(&w, "pve1");
    assert_eq!(after[0]["last_sync"], minute);
    assert_eq!(after[0]["last_try"], minute);
    let next = after[0]["next_sync"].as_i64().expect("next");
    assert!(next > minute && next % 900 == 0, "{next}");
    assert!(after[0]["duration"].as_f64().is_some());
    let (log, total) = log_of(&w, "pve1", "100-0", 0, 0).expect("log");
    assert_eq!(total, log.len());
    let text: Vec<&str> = log.iter().filter_map(|l| l["t"].as_str()).collect();
    assert!(
        text[0].ends_with("100-0: start replication job"),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|l| l.ends_with("guest => VM 100, running => 10100"))
    );
    assert!(text.iter().any(|l| l.ends_with(&format!(
        "full sync 'local-zfs:vm-100-disk-0' (__replicate_100-0_{minute}__)"
    ))));
    assert!(
        text.last()
            .is_some_and(|l| l.ends_with("end replication job"))
    );
    // The next run is incremental, from the last sync's snapshot.
    w.tick((next - minute + 60) * 1000);
    let (log, _) = log_of(&w, "pve1", "100-0", 0, 0).expect("log");
    assert!(log.iter().any(|l| {
        l["t"].as_str().is_some_and(|t| {
            t.contains(&format!(
                "incremental sync 'local-zfs:vm-100-disk-0' (__replicate_100-0_{minute}__ =>"
            ))
        })
    }));
    assert_eq!(status(&w, "pve1")[0]["last_sync"], next);
}

#[test]
fn an_offline_target_fails_and_is_not_retried_until_it_is_back() {
    let mut w = world();
    w.c.replication_ops()
        .create_replication_job("103-0", &to("pve3"), w.now_ms / 1000)
        .expect("created");
    w.tick(60_000);
    let s = &status(&w, "pve1")[0];
    assert_eq!(s["fail_count"], 1);
    assert_eq!(s["last_sync"], 0);
    assert_eq!(s["vmtype"], "lxc");
    let err = s["error"].as_str().expect("error");
    assert!(
        err.starts_with("command '/usr/bin/ssh -e none -o 'BatchMode=yes' -o 'HostKeyAlias=pve3'"),
        "{err}"
    );
    assert!(err.ends_with("failed: exit code 255"), "{err}");
    assert_eq!(s["next_sync"], 0, "never while the target is offline");
    w.tick(3_600_000);
    assert_eq!(status(&w, "pve1")[0]["fail_count"], 1);
    w.c.nodes_mut().get_mut("pve3").expect("pve3").status = crate::model::NodeStatus::Online;
    let s = &status(&w, "pve1")[0];
    let last_try = s["last_try"].as_i64().expect("last_try");
    assert_eq!(
        s["next_sync"],
        last_try + 300,
        "five minutes after one failure"
    );
    w.tick(60_000);
    let s = &status(&w, "pve1")[0];
    assert_eq!(s["fail_count"], 0);
    assert!(s.get("error").is_none());
}

#[test]
fn disabled_jobs_are_listed_but_do_not_run() {
    let mut w = world();
    let up = JobUpdate {
        disable: Some(true),
        ..to("pve2")
    };
    w.c.replication_ops()
        .create_replication_job("100-0", &up, w.now_ms / 1000)
        .expect("created");
    w.tick(120_000);
    let s = &status(&w, "pve1")[0];
    assert_eq!(s["disable"], 1);
    assert_eq!(s["last_try"], 0);
}

#[test]
fn schedule_now_makes_a_job_due_at_once() {
    let mut w = world();
    let up = JobUpdate {
        schedule: Some("daily".into()),
        ..to("pve2")
    };
    w.c.replication_ops()
        .create_replication_job("100-0", &up, w.now_ms / 1000)
        .expect("created");
    w.tick(60_000);
    let first = status(&w, "pve1")[0]["last_sync"].as_i64().expect("ran");
    assert!(first > 0);
    w.c.replication_ops()
        .replication_schedule_now("100-0")
        .expect("scheduled");
    assert_eq!(status(&w, "pve1")[0]["last_try"], 0);
    w.tick(60_000);
    assert_eq!(status(&w, "pve1")[0]["last_sync"], first + 60);
    assert_eq!(
        refused(w.c.replication_ops().replication_schedule_now("100-9")).1,
        "no such replication job '100-9'"
    );
}

#[test]
fn delete_marks_for_removal_and_the_next_run_removes_the_job() {
    let mut w = world();
    w.c.replication_ops()
        .create_replication_job("100-0", &to("pve2"), w.now_ms / 1000)
        .expect("created");
    w.tick(60_000);
    w.c.replication_ops()
        .delete_replication_job("100-0", false, false)
        .expect("marked");
    assert_eq!(
        read(&w, "100-0").expect("still there")["remove_job"],
        "full"
    );
    w.tick(60_000);
    assert_eq!(
        refused(read(&w, "100-0")),
        (500, "no such replication job '100-0'".into())
    );
    assert!(status(&w, "pve1").is_empty());
    assert_eq!(
        refused(
            w.c.replication_ops()
                .delete_replication_job("100-0", false, false)
        )
        .1,
        "no such job '100-0'"
    );
    assert_eq!(
        refused(
            w.c.replication_ops()
                .delete_replication_job("100-0", true, true)
        ),
        (400, "keep: conflicts with parameter 'force'".into())
    );
    w.c.replication_ops()
        .delete_replication_job("100-0", false, true)
        .expect("force on a missing job is quiet");
}

#[rstest]
#[case(&["target"], "unable to delete required option 'target'")]
#[case(&["bogus"], "no such option 'bogus'")]
fn update_refusals(#[case] delete: &[&str], #[case] msg: &str) {
    let mut w = world();
    w.c.replication_ops()
        .create_replication_job("100-0", &to("pve2"), T0)
        .expect("created");
    let up = JobUpdate {
        delete: delete.iter().map(|s| (*s).to_string()).collect(),
        ..JobUpdate::default()
    };
    assert_eq!(
        refused(w.c.replication_ops().update_replication_job("100-0", &up)).1,
        msg
    );
}

#[test]
fn update_sets_deletes_and_checks_the_digest() {
    let mut w = world();
    let up = JobUpdate {
        comment: Some("nightly".into()),
        ..to("pve2")
    };
    w.c.replication_ops()
        .create_replication_job("100-0", &up, T0)
        .expect("created");
    let digest = w.c.replication().digest();
    let up = JobUpdate {
        rate: Some(10.5),
        schedule: Some("*/30".into()),
        delete: vec!["comment".into()],
        digest: Some(digest.clone()),
        ..JobUpdate::default()
    };
    w.c.replication_ops()
        .update_replication_job("100-0", &up)
        .expect("updated");
    let job = read(&w, "100-0").expect("reads");
    assert_eq!(job["rate"], 10.5);
    assert_eq!(job["schedule"], "*/30");
    assert!(job.get("comment").is_none());
    let stale = JobUpdate {
        digest: Some(digest),
        ..JobUpdate::default()
    };
    assert_eq!(
        refused(
            w.c.replication_ops()
                .update_replication_job("100-0", &stale)
        )
        .1,
        "detected modified configuration - file changed by other user? Try again."
    );
    assert_eq!(
        refused(
            w.c.replication_ops()
                .update_replication_job("100-5", &JobUpdate::default())
        )
        .1,
        "no such job '100-5'"
    );
}

#[test]
fn a_job_whose_guest_went_to_the_target_is_not_listed() {
    let mut w = World::from_yaml_v(REPL, PveVersion::V8_4);
    w.c.replication_ops()
        .create_replication_job("100-0", &to("pve2"), T0)
        .expect("created");
    if let Some(vm) = w.c.guests.get_mut(&100) {
        vm.node = "pve2".into();
    }
    assert!(status(&w, "pve1").is_empty());
    assert!(status(&w, "pve2").is_empty());
    assert_eq!(
        refused(
            w.c.replication_reader()
                .replication_job_status("pve2", "100-0")
        )
        .1,
        "no such replication job '100-0'"
    );
}

#[test]
fn a_log_not_written_on_a_node_reads_as_a_missing_file() {
    let mut w = world();
    w.c.replication_ops()
        .create_replication_job("100-0", &to("pve2"), T0)
        .expect("created");
    let (lines, total) = log_of(&w, "pve2", "100-0", 0, 50).expect("log");
    assert_eq!(total, 1);
    assert_eq!(
        lines[0]["t"],
        "unable to open file - No such file or directory"
    );
}
