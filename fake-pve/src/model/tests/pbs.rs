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
