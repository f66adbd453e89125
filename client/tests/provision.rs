//! The provisioning journey a controller makes, end to end through
//! pve-client against an in-process fake-pve, in both authentication
//! modes: discover storage and bridges, download an image, create a VM on
//! them, start it, wait for its agent, read its addresses, run a command
//! in it, and watch the storage's content follow its disk, with PVE's
//! refusals where a step can fail.

mod common;

use std::net::IpAddr;

use common::{MODES, T0, checked_client};
use fake_pve::{Clock, FakePve, Running, Scenario};
use pve_client::Error;
use pve_client::api::qemu::CreateVm;
use pve_client::api::storage::{ContentFilter, DownloadUrl, StorageFilter};
use pve_client::propstring::{Disk, IpConfig, NetworkDevice};

const NODE: &str = "pve";
const GIB: u64 = 1 << 30;
const ISO_URL: &str = "https://mirror.example.com/debian-12.5.0-amd64-netinst.iso";

const SCENARIO: &str = r"
users:
  - userid: root@pam
    tokens:
      - { tokenid: automation, secret: 0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60, privsep: false }
downloads:
  - { url: 'https://mirror.example.com/debian-12.5.0-amd64-netinst.iso', size: 659554304, checksum: 'c2d1e0f9', checksum-algorithm: sha256 }
  - { url: 'https://mirror.example.com/missing.iso', fail: 'download failed: command ''wget --progress=dot:giga -O /x https://mirror.example.com/missing.iso'' failed: exit code 8' }
";

async fn start() -> Running {
    FakePve::builder()
        .listen("127.0.0.1:0".parse().expect("address"))
        .auth_failure_delay(std::time::Duration::ZERO)
        .clock(Clock::manual(T0))
        .scenario(Scenario::parse(SCENARIO, "provision.yaml").expect("scenario"))
        .start()
        .await
        .expect("fake-pve starts")
}

fn task_failed(e: &Error) -> &str {
    match e {
        Error::TaskFailed { exitstatus, .. } => exitstatus,
        other => panic!("expected a failed task, got {other:?}"),
    }
}

fn vm(vmid: u32, bridge: &str) -> CreateVm {
    CreateVm::new(vmid)
        .name("app-1")
        .memory(2048)
        .cores(2)
        .net(
            0,
            &NetworkDevice {
                bridge: Some(bridge.into()),
                ..NetworkDevice::new("virtio")
            },
        )
        .disk("scsi0", &Disk::new("local-lvm:4"))
        .disk(
            "ide2",
            &Disk {
                media: Some("cdrom".into()),
                ..Disk::new("local:iso/debian-12.iso")
            },
        )
        .ipconfig(0, &IpConfig::static_v4("192.0.2.50/24", Some("192.0.2.1")))
        .agent(true)
}

#[tokio::test]
async fn discover_download_create_start_wait_for_the_agent_and_clean_up() {
    for mode in MODES {
        let run = start().await;
        let (pve, _) = checked_client(&run, mode);
        let (storage, content) = (pve.storage(), pve.storage_content());

        // Discover: where images and ISOs can go, and which bridges exist.
        let images = storage
            .node_storage_index(
                NODE,
                &StorageFilter {
                    content: Some("images".into()),
                    ..Default::default()
                },
            )
            .await
            .expect("storages");
        let ids: Vec<&str> = images.iter().map(|s| s.storage.as_str()).collect();
        assert_eq!(ids, ["local-lvm"], "{mode:?}");
        let bridges = pve
            .network()
            .index(NODE, Some("any_bridge"))
            .await
            .expect("bridges");
        assert!(bridges.iter().any(|b| b.iface == "vmbr0"), "{bridges:?}");
        assert!(!bridges.iter().any(|b| b.iface == "vmbr9"));

        // Download the installer ISO; a URL that fails fails its task.
        let missing = DownloadUrl::new("https://mirror.example.com/missing.iso", "iso", "x.iso");
        let e = storage
            .download_url_and_wait(NODE, "local", &missing)
            .await
            .expect_err("missing URL");
        assert!(task_failed(&e).starts_with("download failed:"), "{e}");
        let iso = DownloadUrl::new(ISO_URL, "iso", "debian-12.iso").checksum("sha256", "c2d1e0f9");
        storage
            .download_url_and_wait(NODE, "local", &iso)
            .await
            .expect("download");
        let isos = content
            .index(NODE, "local", &ContentFilter::default())
            .await
            .expect("content");
        let item = isos
            .iter()
            .find(|i| i.volid == "local:iso/debian-12.iso")
            .expect("downloaded ISO listed");
        assert_eq!(item.size, Some(659_554_304));

        // Create the VM on what was discovered: its disk shows up as a
        // volume of the storage.
        let q = pve.qemu();
        q.create_vm_and_wait(NODE, &vm(300, "vmbr0"))
            .await
            .expect("create");
        let disks = content
            .index(
                NODE,
                "local-lvm",
                &ContentFilter {
                    vmid: Some(300),
                    ..Default::default()
                },
            )
            .await
            .expect("disks");
        assert_eq!(disks.len(), 1, "{disks:?}");
        assert_eq!(disks[0].volid, "local-lvm:vm-300-disk-0");
        assert_eq!(disks[0].size, Some(4 * GIB));

        // As on PVE, a missing bridge is only noticed at start.
        q.create_vm_and_wait(NODE, &vm(301, "vmbr9"))
            .await
            .expect("created despite the missing bridge");
        let e = q
            .vm_start_and_wait(NODE, 301, &Default::default())
            .await
            .expect_err("no such bridge");
        assert_eq!(task_failed(&e), "bridge 'vmbr9' does not exist");

        // Start, and wait for the agent: not up until the guest booted.
        q.vm_start_and_wait(NODE, 300, &Default::default())
            .await
            .expect("start");
        let agent = pve.agent();
        let e = agent.ping(NODE, 300).await.expect_err("still booting");
        assert_eq!(e.message(), "QEMU guest agent is not running");
        run.clock().advance(10);
        agent.ping(NODE, 300).await.expect("agent up");

        // Its addresses: the guest reports loopback and link-local ones
        // too, which a consumer filters out.
        let ifaces = agent
            .network_get_interfaces(NODE, 300)
            .await
            .expect("interfaces");
        let all: Vec<&str> = ifaces
            .iter()
            .flat_map(|i| i.ip_addresses.iter().map(|a| a.ip_address.as_str()))
            .collect();
        assert!(all.contains(&"127.0.0.1"), "{all:?}");
        assert!(all.iter().any(|a| a.starts_with("fe80:")), "{all:?}");
        let usable = agent.ip_addresses(NODE, 300).await.expect("addresses");
        let want: IpAddr = "192.0.2.50".parse().expect("ip");
        assert!(usable.contains(&want), "{usable:?}");
        assert!(
            usable
                .iter()
                .all(|ip| !ip.is_loopback() && !ip.to_string().starts_with("fe80:")),
            "{usable:?}"
        );

        // Run a command in it; an unknown one exits 127.
        let pid = agent
            .exec(NODE, 300, &["sh", "-c", "echo ready"], None)
            .await
            .expect("exec");
        let st = agent.exec_status(NODE, 300, pid).await.expect("status");
        assert!(st.exited);
        assert_eq!(st.exitcode, Some(0));
        assert_eq!(st.out_data.as_deref(), Some("ready\n"));
        let pid = agent
            .exec(NODE, 300, &["cloud-init-status"], None)
            .await
            .expect("exec");
        let st = agent.exec_status(NODE, 300, pid).await.expect("status");
        assert_eq!(st.exitcode, Some(127));

        // Stop and destroy: the disk leaves the storage, the ISO stays.
        q.vm_stop_and_wait(NODE, 300, &Default::default())
            .await
            .expect("stop");
        q.destroy_vm_and_wait(NODE, 300, &Default::default())
            .await
            .expect("destroy");
        let left = content
            .index(NODE, "local-lvm", &ContentFilter::default())
            .await
            .expect("content");
        assert!(
            !left.iter().any(|i| i.volid == "local-lvm:vm-300-disk-0"),
            "{left:?}"
        );
        let isos = content
            .index(NODE, "local", &ContentFilter::default())
            .await
            .expect("content");
        assert!(isos.iter().any(|i| i.volid == "local:iso/debian-12.iso"));
    }
}
