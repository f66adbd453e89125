//! Proxmox Backup Server storages: backups to a declared server, the
//! storage's content, notes, protection, pruning, restores and
//! file-restore.

use rstest::{fixture, rstest};
use serde_json::json;

use super::{T0, World, refused};
use crate::model::Context;
use crate::model::backup::VzdumpRequest;

/// One node with a VM (100), a container (200), a declared server
/// `pbs1` (datastore `store1`, namespace `dev`) and storages on it.
pub const PBS: &str = r#"
nodes:
  - name: pve
    bridges: [vmbr0]
storages:
  - { id: local, type: dir, path: /var/lib/vz, content: [iso, vztmpl, backup, images, rootdir] }
  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve, size: 200G }
  - { id: backup, type: pbs, server: 127.0.0.5, datastore: store1, content: [backup] }
  - { id: backup-dev, type: pbs, server: 127.0.0.5, datastore: store1, namespace: dev, content: [backup], encryption-key: "aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99" }
  - { id: nowhere, type: pbs, server: 127.0.0.9, datastore: store1, content: [backup] }
  - { id: wrong-store, type: pbs, server: 127.0.0.5, datastore: nope, content: [backup] }
pbs:
  - name: pbs1
    address: 127.0.0.5
    datastores:
      store1:
        namespaces: [dev]
        verify-new: true
vms:
  - vmid: 100
    name: web
    config:
      memory: 2048
      scsi0: local-lvm:vm-100-disk-0,size=8G
      net0: virtio=BC:24:11:00:01:00,bridge=vmbr0
containers:
  - vmid: 200
    hostname: ct200
    config:
      rootfs: local-lvm:vm-200-disk-0,size=4G
      memory: 512
      net0: name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:02:00,ip=dhcp,type=veth
"#;

#[fixture]
pub fn pbs() -> World {
    World::from_yaml(PBS)
}

/// A vzdump of `vmid` to `storage`.
pub fn req(vmid: u32, storage: &str) -> VzdumpRequest {
    VzdumpRequest {
        node: "pve".into(),
        vmid: vec![vmid],
        mode: "snapshot".into(),
        compress: "zstd".into(),
        storage: Some(storage.into()),
        remove: true,
        cmdline: format!("vzdump {vmid} --storage {storage}"),
        ..VzdumpRequest::default()
    }
}

/// Runs a vzdump to its end; answers the UPID.
pub fn dump(w: &mut World, r: VzdumpRequest) -> String {
    let mut ctx = Context::new(w.now_ms, 11);
    let worker =
        w.c.backup_ops()
            .vzdump(r, &mut ctx)
            .expect("accepted")
            .expect("a task");
    let upid = w.run_as("pve", worker, "root@pam", 2000);
    w.tick(2000);
    upid
}

fn content(w: &World, sid: &str, vmid: Option<u32>) -> Vec<serde_json::Value> {
    super::rows(&w.c.content_list(sid, "pve", None, vmid).expect("content"))
}

#[rstest]
fn a_vm_backup_becomes_a_snapshot_of_the_group(mut pbs: World) {
    let mut r = req(100, "backup");
    r.notes_template = Some("{{guestname}}".into());
    let upid = dump(&mut pbs, r);
    assert_eq!(pbs.exit(&upid), "OK");
    let log = pbs.task(&upid).log.clone();
    for want in [
        "INFO: Starting Backup of VM 100 (qemu)".to_string(),
        format!(
            "INFO: creating Proxmox Backup Server archive 'vm/100/{}'",
            crate::model::pbs::rfc3339(T0)
        ),
        "INFO: starting kvm to execute backup task".into(),
        "INFO: scsi0: dirty-bitmap status: created new".into(),
        "INFO: adding notes to backup".into(),
        "INFO: running 'proxmox-backup-client prune' for 'vm/100'".into(),
        "INFO: Backup job finished successfully".into(),
    ] {
        assert!(log.contains(&want), "missing {want:?} in {log:#?}");
    }
    assert!(!log.iter().any(|l| l.contains("archive file size")));
    let items = content(&pbs, "backup", None);
    assert_eq!(items.len(), 1);
    let b = &items[0];
    assert_eq!(
        b["volid"],
        json!(format!(
            "backup:backup/vm/100/{}",
            crate::model::pbs::rfc3339(T0)
        ))
    );
    assert_eq!(b["format"], "pbs-vm");
    assert_eq!(b["subtype"], "qemu");
    assert_eq!(b["vmid"], 100);
    assert_eq!(b["ctime"], T0);
    assert_eq!(b["notes"], "web");
    assert_eq!(b["verification"]["state"], "ok");
    assert!(b.get("encrypted").is_none());
    assert!(b["size"].as_u64().expect("size") > 8 << 30);
    // The namespace keeps its own snapshots.
    assert!(content(&pbs, "backup-dev", None).is_empty());
}

#[rstest]
fn a_container_backup_uploads_its_pxar_and_is_encrypted_with_the_key(mut pbs: World) {
    let upid = dump(&mut pbs, req(200, "backup-dev"));
    assert_eq!(pbs.exit(&upid), "OK");
    let log = pbs.task(&upid).log.clone();
    assert!(
        log.iter().any(|l| l
            .starts_with("INFO: run: /usr/bin/proxmox-backup-client backup --crypt-mode=encrypt")
            && l.ends_with("--ns dev")),
        "{log:#?}"
    );
    assert!(log.contains(&"INFO: No previous manifest available.".to_string()));
    let items = content(&pbs, "backup-dev", Some(200));
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["format"], "pbs-ct");
    assert_eq!(items[0]["subtype"], "lxc");
    assert_eq!(
        items[0]["encrypted"],
        "aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99"
    );
    // A second backup is incremental.
    pbs.now_ms += 3_600_000;
    let upid = dump(&mut pbs, req(200, "backup-dev"));
    assert!(
        pbs.task(&upid)
            .log
            .iter()
            .any(|l| l.contains("backup was done incrementally"))
    );
    assert_eq!(content(&pbs, "backup-dev", Some(200)).len(), 2);
}

#[rstest]
fn retention_prunes_the_group_but_keeps_protected_snapshots(mut pbs: World) {
    let mut first = req(100, "backup");
    first.protected = true;
    dump(&mut pbs, first);
    for _ in 0..2 {
        pbs.now_ms += 3_600_000;
        dump(&mut pbs, req(100, "backup"));
    }
    pbs.now_ms += 3_600_000;
    let mut r = req(100, "backup");
    r.prune_backups = Some("keep-last=1".into());
    let upid = dump(&mut pbs, r);
    let log = pbs.task(&upid).log.clone();
    assert!(log.contains(&"INFO: prune older backups with retention: keep-last=1".to_string()));
    assert!(
        log.contains(&"INFO: pruned 2 backup(s) not covered by keep-retention policy".to_string()),
        "{log:#?}"
    );
    let items = content(&pbs, "backup", Some(100));
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["protected"], 1);
}

#[rstest]
#[case(
    "nowhere",
    "nowhere: error fetching datastores - 500 Can't connect to 127.0.0.9:8007 (Connection refused)"
)]
#[case(
    "wrong-store",
    "wrong-store: Cannot find datastore 'nope', check permissions and existence!"
)]
fn a_storage_that_does_not_reach_its_datastore_fails_as_pve_does(
    pbs: World,
    #[case] sid: &str,
    #[case] msg: &str,
) {
    assert_eq!(
        refused(pbs.c.content_list(sid, "pve", None, None)),
        (500, msg.to_string())
    );
}

#[rstest]
fn a_backup_to_an_unknown_server_fails_the_guest(mut pbs: World) {
    let upid = dump(&mut pbs, req(100, "nowhere"));
    assert_ne!(pbs.exit(&upid), "OK");
    let log = pbs.task(&upid).log.clone();
    assert!(
        log.contains(&"ERROR: Backup of VM 100 failed - VM 100 qmp command 'backup' failed - backup connect failed: command error: error trying to connect: tcp connect error: Connection refused (os error 111)".to_string()),
        "{log:#?}"
    );
    assert_eq!(pbs.conf(100, "lock"), None);
}

#[rstest]
fn notes_and_protection_are_the_snapshot_s(mut pbs: World) {
    dump(&mut pbs, req(100, "backup"));
    let name = format!("backup/vm/100/{}", crate::model::pbs::rfc3339(T0));
    let s = pbs
        .c
        .pbs_storage("backup", "pve")
        .expect("usable")
        .expect("pbs");
    pbs.c
        .pbs_mut()
        .update_volume_attrs(&s, &name, Some("first line\nsecond".into()), Some(true), -1)
        .expect("updated");
    let (info, protected) = pbs.c.pbs().volume_info(&s, &name).expect("info");
    assert!(protected);
    assert_eq!(info.notes.as_deref(), Some("first line\nsecond"));
    assert_eq!(info.format, "pbs-vm");
    assert_eq!(
        info.path,
        format!(
            "pbs://root@pam@127.0.0.5:store1/vm/100/{}",
            crate::model::pbs::rfc3339(T0)
        )
    );
    assert_eq!(content(&pbs, "backup", None)[0]["notes"], "first line");
    let (id, plan) = pbs.c.pbs().plan_delete(&s, &name).expect("plan");
    assert_eq!(id, "100@backup");
    assert_eq!(
        plan,
        Err("proxmox-backup-client failed: Error: cannot remove protected snapshot".into())
    );
    pbs.c
        .pbs_mut()
        .update_volume_attrs(&s, &name, None, Some(false), -1)
        .expect("unprotected");
    let (_, plan) = pbs.c.pbs().plan_delete(&s, &name).expect("plan");
    assert_eq!(plan, Ok(vec![format!("Removed volume 'backup:{name}'")]));
}

fn snap_name(kind: &str, vmid: u32) -> String {
    format!("backup/{kind}/{vmid}/{}", crate::model::pbs::rfc3339(T0))
}

#[rstest]
fn a_vm_comes_back_from_its_snapshot(mut pbs: World) {
    dump(&mut pbs, req(100, "backup"));
    let r = crate::model::backup::RestoreRequest {
        node: "pve".into(),
        vmid: 101,
        archive: format!("backup:{}", snap_name("vm", 100)),
        storage: Some("local-lvm".into()),
        ..Default::default()
    };
    let mut ctx = Context::new(pbs.now_ms, 5);
    let worker = pbs
        .c
        .backup_ops()
        .restore_vm(r, &mut ctx)
        .expect("accepted");
    let upid = pbs.run_as("pve", worker, "root@pam", 1000);
    pbs.tick(1000);
    assert_eq!(pbs.exit(&upid), "OK");
    let log = pbs.task(&upid).log.clone();
    let snap = snap_name("vm", 100);
    let snap = snap.strip_prefix("backup/").unwrap_or_default();
    assert!(
        log.contains(&"new volume ID is 'local-lvm:vm-101-disk-0'".to_string()),
        "{log:#?}"
    );
    assert!(log.contains(&format!(
        "restore proxmox backup image: /usr/bin/pbs-restore --repository root@pam@127.0.0.5:store1 {snap} drive-scsi0.img.fidx /dev/pve/vm-101-disk-0 --verbose --format raw --skip-zero"
    )), "{log:#?}");
    assert!(log.contains(&format!("starting to restore snapshot '{snap}'")));
    assert!(!log.iter().any(|l| l.starts_with("restore vma archive")));
    assert_eq!(pbs.conf(101, "name").as_deref(), Some("web"));
    assert_eq!(pbs.conf(101, "memory").as_deref(), Some("2048"));
    assert!(
        pbs.conf(101, "scsi0")
            .is_some_and(|d| d.starts_with("local-lvm:vm-101-disk-0"))
    );
}

#[rstest]
fn a_missing_snapshot_fails_the_restore(mut pbs: World) {
    let r = crate::model::backup::RestoreRequest {
        node: "pve".into(),
        vmid: 101,
        archive: format!("backup:{}", snap_name("vm", 100)),
        ..Default::default()
    };
    let mut ctx = Context::new(pbs.now_ms, 5);
    let worker = pbs
        .c
        .backup_ops()
        .restore_vm(r, &mut ctx)
        .expect("accepted");
    let upid = pbs.run_as("pve", worker, "root@pam", 1000);
    pbs.tick(1000);
    assert!(
        pbs.exit(&upid).contains("does not exist"),
        "{}",
        pbs.exit(&upid)
    );
}

#[rstest]
fn a_container_comes_back_with_its_config(mut pbs: World) {
    dump(&mut pbs, req(200, "backup"));
    let r = crate::model::lxc::CtRestoreRequest {
        vmid: 201,
        node: "pve".into(),
        archive: format!("backup:{}", snap_name("ct", 200)),
        storage: Some("local-lvm".into()),
        is_root: true,
        sys_modify: true,
        ..Default::default()
    };
    let mut ctx = Context::new(pbs.now_ms, 5);
    let worker = pbs.c.ct_ops().restore_ct(r, &mut ctx).expect("accepted");
    let upid = pbs.run_as("pve", worker, "root@pam", 1000);
    pbs.tick(1000);
    assert_eq!(pbs.exit(&upid), "OK");
    let log = pbs.task(&upid).log.clone();
    assert!(log.contains(&format!(
        "recovering backed-up configuration from 'backup:{}'",
        snap_name("ct", 200)
    )));
    assert!(!log.iter().any(|l| l.starts_with("extracting archive")));
    let ct = pbs.c.guests.ct_by_id(201).expect("restored");
    assert_eq!(
        ct.config().get("hostname").map(String::as_str),
        Some("ct200")
    );
    assert_eq!(ct.config().get("memory").map(String::as_str), Some("512"));
}

fn b64(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

#[rstest]
fn file_restore_walks_a_container_s_pxar(mut pbs: World) {
    dump(&mut pbs, req(200, "backup"));
    let who = crate::model::access::AuthId::parse("root@pam").expect("id");
    let volume = format!("backup:{}", snap_name("ct", 200));
    let r = pbs.c.backup_reader();
    let top = r
        .file_restore_list(&who, "backup", &volume, "/")
        .expect("list");
    let names: Vec<(&str, char, bool)> = top
        .iter()
        .map(|e| (e.path.as_str(), e.kind, e.leaf))
        .collect();
    assert_eq!(names, vec![("/root.pxar.didx", 'd', false)]);
    let root = r
        .file_restore_list(&who, "backup", &volume, &b64("/root.pxar.didx"))
        .expect("root");
    let etc = root.iter().find(|e| e.text == "etc").expect("etc");
    assert_eq!(
        (etc.path.as_str(), etc.kind, etc.leaf),
        ("root.pxar.didx/etc", 'd', false)
    );
    assert!(root.iter().any(|e| e.text == "bin" && e.kind == 'l'));
    let etc = r
        .file_restore_list(&who, "backup", &volume, &b64("root.pxar.didx/etc"))
        .expect("etc");
    let hostname = etc.iter().find(|e| e.text == "hostname").expect("hostname");
    assert_eq!(hostname.kind, 'f');
    assert_eq!(hostname.size, Some(6));
    assert_eq!(hostname.mtime, Some(T0));
    let (_, bytes) = r
        .file_restore_download(
            &who,
            "backup",
            &volume,
            &b64("root.pxar.didx/etc/hostname"),
            false,
        )
        .expect("download");
    assert_eq!(bytes, b"ct200\n");
    let (_, zip) = r
        .file_restore_download(&who, "backup", &volume, &b64("root.pxar.didx/etc"), false)
        .expect("zip");
    assert_eq!(&zip[..4], b"PK\x03\x04");
    let (_, zst) = r
        .file_restore_download(&who, "backup", &volume, &b64("root.pxar.didx/etc"), true)
        .expect("tar.zst");
    assert_eq!(&zst[..4], &[0x28, 0xb5, 0x2f, 0xfd]);
    assert_eq!(
        refused(r.file_restore_list(&who, "backup", &volume, &b64("root.pxar.didx/nope"))),
        (500, "no such file or directory: 'nope'".into())
    );
}

#[rstest]
fn file_restore_walks_a_vm_s_partitions(mut pbs: World) {
    dump(&mut pbs, req(100, "backup"));
    let who = crate::model::access::AuthId::parse("root@pam").expect("id");
    let volume = format!("backup:{}", snap_name("vm", 100));
    let r = pbs.c.backup_reader();
    let top = r
        .file_restore_list(&who, "backup", &volume, "/")
        .expect("list");
    assert_eq!(top.len(), 1);
    assert_eq!(
        (top[0].text.as_str(), top[0].kind),
        ("drive-scsi0.img.fidx", 'v')
    );
    assert_eq!(top[0].size, Some(8 << 30));
    let buckets = r
        .file_restore_list(&who, "backup", &volume, &b64("/drive-scsi0.img.fidx"))
        .expect("buckets");
    assert_eq!(buckets[0].path, "drive-scsi0.img.fidx/part");
    assert_eq!(buckets[0].kind, 'v');
    let parts = r
        .file_restore_list(&who, "backup", &volume, &b64("drive-scsi0.img.fidx/part"))
        .expect("parts");
    assert_eq!(parts[0].path, "drive-scsi0.img.fidx/part/1");
    assert_eq!(parts[0].kind, 'd');
    let (_, bytes) = r
        .file_restore_download(
            &who,
            "backup",
            &volume,
            &b64("drive-scsi0.img.fidx/part/1/etc/hostname"),
            false,
        )
        .expect("download");
    assert_eq!(bytes, b"web\n");
}

#[rstest]
fn file_restore_needs_a_pbs_storage_and_a_reachable_server(mut pbs: World) {
    dump(&mut pbs, req(100, "local"));
    let who = crate::model::access::AuthId::parse("root@pam").expect("id");
    let r = pbs.c.backup_reader();
    assert_eq!(
        refused(r.file_restore_list(&who, "local", "backup/vzdump-qemu-100.vma.zst", "/")).1,
        "storage: Only PBS storages supported for file-restore."
    );
    assert_eq!(
        refused(r.file_restore_list(&who, "nowhere", &snap_name("vm", 100), "/")),
        (
            500,
            "error trying to connect: tcp connect error: Connection refused (os error 111)".into()
        )
    );
}

#[rstest]
fn prunebackups_of_a_pbs_storage_prunes_each_group(mut pbs: World) {
    for _ in 0..3 {
        dump(&mut pbs, req(100, "backup"));
        pbs.now_ms += 3_600_000;
    }
    dump(&mut pbs, req(200, "backup"));
    let s = pbs
        .c
        .pbs_storage("backup", "pve")
        .expect("usable")
        .expect("pbs");
    let keep = crate::model::backup::prune::KeepOptions::parse("keep-last=1").expect("keep");
    let (marks, groups) = pbs
        .c
        .pbs()
        .prune_marks(&s, None, None, &keep)
        .expect("marks");
    assert_eq!(groups, vec!["ct/200".to_string(), "vm/100".to_string()]);
    let m: Vec<(&str, &str)> = marks
        .iter()
        .map(|e| (e.kind.as_str(), e.mark.as_str()))
        .collect();
    assert_eq!(
        m,
        vec![
            ("lxc", "keep"),
            ("qemu", "remove"),
            ("qemu", "remove"),
            ("qemu", "keep")
        ]
    );
    let worker = pbs
        .c
        .pbs_prune_worker(&s, "pve", Some("keep-last=1"), Some(100), Some("qemu"))
        .expect("worker");
    let upid = pbs.run_as("pve", worker, "root@pam", 1000);
    pbs.tick(1000);
    assert_eq!(pbs.exit(&upid), "OK");
    assert_eq!(
        pbs.task(&upid).log,
        vec![
            "running 'proxmox-backup-client prune' for 'vm/100'".to_string(),
            "TASK OK".into()
        ]
    );
    assert_eq!(content(&pbs, "backup", Some(100)).len(), 1);
    assert_eq!(content(&pbs, "backup", Some(200)).len(), 1);
}
