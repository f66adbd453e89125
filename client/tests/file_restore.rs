//! A Proxmox Backup Server storage (`api::backup` `list`/`download`,
//! `api::storage` content) against an in-process fake-pve whose scenario
//! declares the server: a VM is backed up to it, listed, its files
//! listed and downloaded, and restored; every answer checked against the
//! schema.

mod common;

use common::{Mode, checked_client};
use fake_pve::{Running, Scenario};
use pve_client::api::backup::Vzdump;
use pve_client::api::qemu::{ConfigView, CreateVm};
use pve_client::api::storage::{ContentFilter, StorageCreate};

const NODE: &str = "pve";

/// One node, VM 100 and a `pbs` storage on a declared server.
const SCENARIO: &str = r"
nodes:
  - { name: pve, ip: 127.0.0.1 }
users:
  - userid: root@pam
    tokens:
      - { tokenid: automation, secret: 0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60, privsep: false }
storages:
  - { id: local, type: dir, path: /var/lib/vz, content: [iso, vztmpl, backup, images] }
  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve, content: [images, rootdir] }
  - { id: pbs, type: pbs, server: 127.0.0.5, datastore: store1, content: [backup] }
pbs:
  - { name: pbs1, address: 127.0.0.5, datastores: { store1: {} } }
vms:
  - vmid: 100
    name: gateway
    config:
      memory: 1024
      scsi0: local-lvm:vm-100-disk-0,size=4G
";

async fn start() -> Running {
    common::builder()
        .scenario(Scenario::parse(SCENARIO, "file-restore.yaml").expect("scenario"))
        .start()
        .await
        .expect("fake-pve starts")
}

fn b64(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

#[tokio::test]
async fn a_vm_backed_up_to_pbs_is_browsed_downloaded_and_restored() {
    let run = start().await;
    let (pve, checked) = checked_client(&run, Mode::Token);
    let b = pve.backup();
    let upid = b
        .vzdump(NODE, &Vzdump::vmids(&[100]).storage("pbs"))
        .await
        .expect("vzdump")
        .expect("a task");
    let status = pve.tasks().wait(&upid).await.expect("done");
    assert!(status.succeeded(), "{status:?}");
    let filter = ContentFilter {
        content: Some("backup".into()),
        vmid: Some(100),
    };
    let list = pve
        .storage_content()
        .index(NODE, "pbs", &filter)
        .await
        .expect("content");
    assert_eq!(list.len(), 1);
    let volid = list[0].volid.clone();
    assert!(volid.starts_with("pbs:backup/vm/100/"), "{volid}");
    assert_eq!(list[0].format, "pbs-vm");

    let top = b.list(NODE, "pbs", &volid, "/").await.expect("archives");
    assert_eq!(top.len(), 1);
    assert_eq!(top[0].text, "drive-scsi0.img.fidx");
    assert_eq!(top[0].kind, "v");
    assert_eq!(top[0].leaf, Some(false));
    let parts = b
        .list(NODE, "pbs", &volid, &b64("drive-scsi0.img.fidx/part"))
        .await
        .expect("partitions");
    assert_eq!(parts[0].text, "1");
    let etc = b
        .list(NODE, "pbs", &volid, &b64("drive-scsi0.img.fidx/part/1/etc"))
        .await
        .expect("etc");
    let hostname = etc
        .iter()
        .find(|e| e.text == "hostname")
        .expect("/etc/hostname");
    assert_eq!(hostname.kind, "f");
    let bytes = b
        .download(NODE, "pbs", &volid, &hostname.filepath, false)
        .await
        .expect("download");
    assert_eq!(bytes, b"gateway\n");
    let zip = b
        .download(
            NODE,
            "pbs",
            &volid,
            &b64("drive-scsi0.img.fidx/part/1/etc"),
            false,
        )
        .await
        .expect("zip");
    assert_eq!(&zip[..2], b"PK");
    let err = b
        .list(NODE, "local", "backup/vzdump-qemu-100.vma", "/")
        .await
        .expect_err("not a PBS storage");
    assert!(
        err.to_string()
            .contains("Only PBS storages supported for file-restore."),
        "{err}"
    );

    let upid = pve
        .qemu()
        .create_vm(
            NODE,
            &CreateVm::new(101).archive(&volid).storage("local-lvm"),
        )
        .await
        .expect("restore");
    let status = pve.tasks().wait(&upid).await.expect("restored");
    assert!(status.succeeded(), "{status:?}");
    let config = pve
        .qemu()
        .vm_config(NODE, 101, &ConfigView::Pending)
        .await
        .expect("config");
    assert_eq!(config.name.as_deref(), Some("gateway"));
    let names = checked.names();
    for call in ["POST vzdump", "GET list", "GET index", "POST create_vm"] {
        assert!(
            names.iter().any(|n| n == call),
            "{call} not checked: {names:?}"
        );
    }
}

#[tokio::test]
async fn a_backup_server_storage_has_the_server_s_identity() {
    let run = start().await;
    let (pve, checked) = checked_client(&run, Mode::Token);
    let s = pve.storage();
    for id in ["pbs-main", "pbs-archive"] {
        s.create(
            &StorageCreate::new(id, "pbs")
                .content(&["backup"])
                .option("server", "127.0.0.5")
                .option("datastore", "store1")
                .option("username", "root@pam")
                .option("password", "secret"),
        )
        .await
        .expect("create");
    }
    let main = s.identity("pve", "pbs-main").await.expect("identity");
    assert_eq!(main.kind, "pbs");
    assert_eq!(main.id.len(), 64);
    let archive = s.identity("pve", "pbs-archive").await.expect("identity");
    assert_eq!(archive.id, main.id, "one server, one instance id");
    let err = s.identity("pve", "local").await.expect_err("a dir storage");
    assert!(
        err.to_string()
            .contains("get_identity not implemented for this plugin"),
        "{err}"
    );
    assert!(checked.names().iter().any(|n| n == "GET identity"));
}

#[tokio::test]
async fn a_backup_server_storage_is_created_only_when_its_server_answers_and_keeps_its_key() {
    let run = start().await;
    let (pve, checked) = checked_client(&run, Mode::Token);
    let s = pve.storage();
    let err = s
        .create(
            &StorageCreate::new("elsewhere", "pbs")
                .option("server", "127.0.0.9")
                .option("datastore", "store1")
                .option("username", "root@pam"),
        )
        .await
        .expect_err("no server there");
    assert!(
        err.to_string().contains(
            "create storage failed: elsewhere: error fetching datastores - 500 Can't connect to 127.0.0.9:8007 (Connection refused)"
        ),
        "{err}"
    );
    let made = s
        .create(
            &StorageCreate::new("sealed", "pbs")
                .option("server", "127.0.0.5")
                .option("datastore", "store1")
                .option("username", "root@pam")
                .option("encryption-key", "autogen"),
        )
        .await
        .expect("create");
    let key = made
        .config
        .as_ref()
        .and_then(|c| c.get("encryption-key"))
        .and_then(|k| k.as_str())
        .expect("the generated key");
    let key: serde_json::Value = serde_json::from_str(key).expect("a key file");
    let cfg = s.read("sealed").await.expect("read");
    assert_eq!(cfg.extra["encryption-key"], key["fingerprint"]);
    let status = s.read_status(NODE, "sealed").await.expect("status");
    assert_eq!(status.active, Some(true));
    assert_eq!(status.total, Some(100 << 30));
    assert!(checked.names().iter().any(|n| n == "POST create"));
}
