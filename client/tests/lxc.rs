//! The container calls (`api::lxc`) against an in-process fake-pve, in
//! both authentication modes, every answer checked against the schema.

mod common;

use common::{MODES, checked_client, start};
use pve_client::api::lxc::{CloneCt, CreateCt, UpdateCt};
use pve_client::api::qemu::Feature;
use pve_client::{Category, Error};

const NODE: &str = "pve";
const APPLIANCE: &str = "debian-12-standard_12.7-1_amd64.tar.zst";

fn task_failed(e: &Error) -> &str {
    match e {
        Error::TaskFailed { exitstatus, .. } => exitstatus,
        other => panic!("expected a failed task, got {other:?}"),
    }
}

#[tokio::test]
async fn a_containers_life() {
    for mode in MODES {
        let run = start().await;
        let (pve, checked) = checked_client(&run, mode);
        let ct = pve.lxc();

        let index = ct.aplinfo(NODE).await.expect("aplinfo");
        assert!(
            index
                .iter()
                .any(|a| a.template == APPLIANCE && a.kind == "lxc")
        );
        let done = ct
            .apl_download_and_wait(NODE, "local", APPLIANCE)
            .await
            .expect("download");
        assert_eq!(done.exitstatus.as_deref(), Some("OK"));

        let create = CreateCt::new(300, &format!("local:vztmpl/{APPLIANCE}"))
            .hostname("ct-1")
            .memory(512)
            .rootfs("local-lvm:2")
            .net(0, "name=eth0,bridge=vmbr0,ip=dhcp")
            .password("secret-pw")
            .unprivileged(true);
        let done = ct.create_vm_and_wait(NODE, &create).await.expect("create");
        assert_eq!(done.exitstatus.as_deref(), Some("OK"));
        let config = ct.vm_config(NODE, 300, false).await.expect("config");
        assert_eq!(config.hostname.as_deref(), Some("ct-1"));
        assert_eq!(config.memory, Some(512));
        assert!(config.unprivileged);
        assert_eq!(
            config.rootfs.as_deref(),
            Some("local-lvm:vm-300-disk-0,size=2G")
        );
        assert!(config.nets[&0].contains(",hwaddr=BC:24:11:"));
        assert!(config.get("password").is_none());
        // The VMID is taken for VMs and containers alike.
        let e = ct.create_vm(NODE, &create).await.expect_err("taken");
        assert_eq!(e.category(), Category::Conflict);
        assert_eq!(e.message(), "CT 300 already exists on node 'pve'");

        let digest = config.digest.clone().expect("digest");
        ct.update_vm(NODE, 300, &UpdateCt::new().cores(2).digest(&digest))
            .await
            .expect("update");
        let stale = ct
            .update_vm(NODE, 300, &UpdateCt::new().cores(3).digest(&digest))
            .await
            .expect_err("stale digest");
        assert_eq!(stale.category(), Category::Conflict);

        ct.vm_start_and_wait(NODE, 300).await.expect("start");
        let status = ct.vm_status(NODE, 300).await.expect("status");
        assert!(status.is_running());
        assert_eq!(status.extra["type"], "lxc");
        let e = ct.vm_start_and_wait(NODE, 300).await.expect_err("running");
        assert_eq!(e.message(), "CT 300 already running");
        assert!(
            ct.vmlist(NODE)
                .await
                .expect("list")
                .iter()
                .any(|c| c.vmid == 300 && c.is_running())
        );
        let ifaces = ct
            .ip(NODE, 300)
            .await
            .expect("interfaces")
            .expect("running");
        assert!(ifaces.iter().any(|i| i.name == "eth0" && i.inet.is_some()));

        ct.snapshot_and_wait(NODE, 300, "first", Some("from the client"))
            .await
            .expect("snapshot");
        let snaps = ct.list(NODE, 300).await.expect("list");
        assert_eq!(snaps.len(), 2);
        assert_eq!(snaps[1].parent.as_deref(), Some("first"));
        let has = ct
            .vm_feature(NODE, 300, Feature::Snapshot, None)
            .await
            .expect("feature");
        assert!(has.has_feature);

        let clone = CloneCt {
            newid: 301,
            snapname: Some("first".into()),
            hostname: Some("ct-2".into()),
            ..CloneCt::default()
        };
        ct.clone_vm_and_wait(NODE, 300, &clone)
            .await
            .expect("clone");
        let copy = ct.vm_config(NODE, 301, false).await.expect("clone config");
        assert_eq!(copy.hostname.as_deref(), Some("ct-2"));
        assert_ne!(copy.nets[&0], config.nets[&0]);

        ct.resize_vm_and_wait(NODE, 301, "rootfs", "+1G")
            .await
            .expect("resize");
        assert_eq!(
            ct.vm_config(NODE, 301, false)
                .await
                .expect("config")
                .rootfs
                .as_deref(),
            Some("local-lvm:vm-301-disk-0,size=3G")
        );

        ct.vm_shutdown_and_wait(NODE, 300, Some(30), false)
            .await
            .expect("shutdown");
        assert!(!ct.vm_status(NODE, 300).await.expect("status").is_running());
        ct.template(NODE, 301).await.expect("template");
        let e = ct.vm_start_and_wait(NODE, 301).await.expect_err("template");
        assert_eq!(task_failed(&e), "you can't start a CT if it's a template");
        for id in [301, 300] {
            ct.destroy_vm_and_wait(NODE, id, true, false)
                .await
                .expect("destroy");
        }
        let gone = ct.vm_config(NODE, 300, false).await.expect_err("gone");
        assert_eq!(gone.category(), Category::NotFound);
        assert!(
            checked.names().iter().any(|n| n == "POST create_vm"),
            "{:?}",
            checked.names()
        );
    }
}
