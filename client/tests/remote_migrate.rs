//! The remote migration calls (`api::remote_migrate`): a VM moved from
//! one in-process fake-pve to another, and a target's tunnel endpoint
//! opened directly.

mod common;

use common::{MODES, ROOT_TOKEN, ROOT_TOKEN_SECRET, builder, client};
use pve_client::Error;
use pve_client::api::remote_migrate::RemoteMigrate;

const SOURCE: &str = r"
users:
  - userid: root@pam
    tokens:
      - { tokenid: automation, secret: 0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60, privsep: false }
vms:
  - { vmid: 100, name: web, config: { scsi0: 'local-lvm:vm-100-disk-0,size=2G', net0: 'virtio=BC:24:11:00:00:01,bridge=vmbr0' } }
";

const TARGET: &str = r"
users:
  - userid: root@pam
    tokens:
      - { tokenid: automation, secret: 0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60, privsep: false }
vms:
  - { vmid: 150, name: taken }
";

async fn run(yaml: &str) -> fake_pve::Running {
    builder()
        .scenario(fake_pve::Scenario::parse(yaml, "remote.yaml").expect("scenario"))
        .start()
        .await
        .expect("fake-pve starts")
}

#[tokio::test]
async fn a_vm_moves_to_another_fake_pve() {
    for mode in MODES {
        let src = run(SOURCE).await;
        let dst = run(TARGET).await;
        let endpoint = format!(
            "host=127.0.0.1,port={},apitoken=PVEAPIToken={ROOT_TOKEN}={ROOT_TOKEN_SECRET},fingerprint={}",
            dst.addr().port(),
            dst.fingerprint().expect("TLS")
        );
        let pve = client(&src, mode);
        let req = RemoteMigrate::new(&endpoint, "local-lvm", "1").target_vmid(300);
        let st = pve
            .qemu()
            .remote_migrate_vm_and_wait("pve", 100, &req)
            .await
            .expect("migrated");
        assert_eq!(st.upid.kind(), "qmigrate", "{mode:?}");
        let there = client(&dst, mode);
        let c = there
            .qemu()
            .vm_config("pve", 300, &pve_client::api::qemu::ConfigView::Current)
            .await
            .expect("the VM is there");
        assert_eq!(c.disks["scsi0"].size.as_deref(), Some("2G"), "{mode:?}");
        // The target's own refusal, through the task.
        let err = pve
            .qemu()
            .remote_migrate_vm_and_wait(
                "pve",
                100,
                &RemoteMigrate::new(&endpoint, "local-lvm", "1").target_vmid(301),
            )
            .await
            .expect_err("locked here");
        assert!(err.to_string().contains("VM is locked (migrate)"), "{err}");
    }
}

#[tokio::test]
async fn mtunnel_opens_the_targets_tunnel() {
    let dst = run(TARGET).await;
    let pve = client(&dst, common::Mode::Token);
    let t = pve
        .qemu()
        .mtunnel("localhost", 400, &["local-lvm"], &["vmbr0"])
        .await
        .expect("opened");
    assert_eq!(t.socket, "/run/qemu-server/400.mtunnel");
    assert!(t.ticket.starts_with("PVETUNNEL:"), "{}", t.ticket);
    assert!(t.upid.contains(":qmtunnel:400:"), "{}", t.upid);
    let err = pve
        .lxc()
        .mtunnel("localhost", 150, &[], &[])
        .await
        .expect_err("taken");
    match err {
        Error::Validation { ref errors, .. } => assert_eq!(
            errors.get("vmid").map(|e| e.trim_end()),
            Some("unable to create empty CT config - VM 150 already exists on node 'pve'"),
            "{err:?}"
        ),
        other => panic!("{other:?}"),
    }
}
