//! The guest agent calls (`api::agent`) against an in-process fake-pve,
//! in both authentication modes, every answer checked against the schema.

mod common;

use std::net::IpAddr;

use common::{MODES, Mode, checked_client};
use fake_pve::{Running, Scenario};
use pve_client::api::agent::{FileReadOptions, usable_addresses};
use pve_client::api::qemu::{ConfigView, UpdateVm};
use pve_client::{Category, Client};

const NODE: &str = "pve";

/// 100 runs with an agent and a static address; 101 runs without an
/// agent; 102 has an agent but is stopped.
const SCENARIO: &str = r"
users:
  - userid: root@pam
    tokens:
      - { tokenid: automation, secret: 0f6c2b1e-5d4a-4e39-8b7c-2a1d9e8f7c60, privsep: false }
vms:
  - vmid: 100
    node: pve
    name: gateway
    status: running
    config:
      agent: 1
      net0: virtio=BC:24:11:2E:5A:01,bridge=vmbr0
      ipconfig0: ip=192.0.2.10/24,gw=192.0.2.1,ip6=2001:db8::10/64
  - { vmid: 101, node: pve, name: plain, status: running }
  - { vmid: 102, node: pve, name: sleeper, status: stopped, config: { agent: 1 } }
";

async fn start() -> Running {
    common::builder()
        .scenario(Scenario::parse(SCENARIO, "agent.yaml").expect("scenario"))
        .start()
        .await
        .expect("fake-pve starts")
}

/// Lets the guests' agents boot (5 s of emulated time).
fn boot(run: &Running) {
    run.clock().advance(6);
}

fn client(run: &Running, mode: Mode) -> (Client, common::Checked) {
    checked_client(run, mode)
}

#[tokio::test]
async fn the_agent_refuses_as_pve_does() {
    for mode in MODES {
        let run = start().await;
        let (pve, _) = client(&run, mode);
        let a = pve.agent();
        a.ping(NODE, 100).await.expect("ping");
        let e = a.get_host_name(NODE, 102).await.expect_err("stopped");
        assert_eq!(e.message(), "VM 102 is not running");
        // Just started: the agent is not up yet.
        pve.qemu()
            .vm_start_and_wait(NODE, 102, &Default::default())
            .await
            .expect("start");
        let e = a.ping(NODE, 102).await.expect_err("booting");
        assert_eq!(e.message(), "QEMU guest agent is not running", "{mode:?}");
        boot(&run);
        a.ping(NODE, 102).await.expect("booted");
        let e = a.ping(NODE, 101).await.expect_err("no agent");
        assert_eq!(e.message(), "No QEMU guest agent configured");
        assert!(!e.is_retryable());
        let e = a
            .network_get_interfaces(NODE, 101)
            .await
            .expect_err("no agent");
        assert_eq!(e.message(), "No QEMU guest agent configured");
        let e = a.ping(NODE, 999).await.expect_err("no such VM");
        assert_eq!(e.category(), Category::NotFound, "{e}");
    }
}

#[tokio::test]
async fn interfaces_and_usable_addresses() {
    for mode in MODES {
        let run = start().await;
        boot(&run);
        let (pve, checked) = client(&run, mode);
        let a = pve.agent();
        let ifaces = a
            .network_get_interfaces(NODE, 100)
            .await
            .expect("interfaces");
        assert_eq!(ifaces.len(), 2, "{mode:?}: {ifaces:?}");
        assert!(ifaces[0].is_loopback());
        let ens = &ifaces[1];
        assert!(!ens.is_loopback());
        assert_eq!(ens.hardware_address.as_deref(), Some("bc:24:11:2e:5a:01"));
        assert!(
            ens.ip_addresses
                .iter()
                .any(|i| i.ip_address.starts_with("fe80::") && !i.is_usable()),
            "{ens:?}"
        );
        assert!(ens.statistics.is_some());
        let want: Vec<IpAddr> = vec![
            "192.0.2.10".parse().expect("ip"),
            "2001:db8::10".parse().expect("ip"),
        ];
        assert_eq!(usable_addresses(&ifaces), want);
        assert_eq!(a.ip_addresses(NODE, 100).await.expect("ips"), want);
        assert!(
            checked
                .names()
                .iter()
                .any(|n| n == "GET network-get-interfaces")
        );
    }
}

#[tokio::test]
async fn every_agent_command() {
    for mode in MODES {
        let run = start().await;
        boot(&run);
        let (pve, checked) = client(&run, mode);
        let a = pve.agent();

        a.ping(NODE, 100).await.expect("ping");
        let info = a.info(NODE, 100).await.expect("info");
        assert!(!info.version.is_empty());
        assert!(
            info.supported_commands
                .iter()
                .any(|c| c.name == "guest-ping" && c.enabled == Some(true))
        );
        let ns = a.get_time(NODE, 100).await.expect("time");
        assert_eq!(ns / 1_000_000_000, run.clock().now(), "{mode:?}");
        assert_eq!(a.get_host_name(NODE, 100).await.expect("host"), "gateway");
        let os = a.get_osinfo(NODE, 100).await.expect("osinfo");
        assert_eq!(os.id.as_deref(), Some("debian"));
        assert!(os.extra.contains_key("version-id"));
        let tz = a.get_timezone(NODE, 100).await.expect("tz");
        assert_eq!(tz.offset, 0);
        assert!(a.get_users(NODE, 100).await.expect("users").is_empty());
        let cpus = a.get_vcpus(NODE, 100).await.expect("vcpus");
        assert!(!cpus.is_empty() && cpus.iter().all(|c| c.online));
        let blocks = a.get_memory_blocks(NODE, 100).await.expect("blocks");
        assert!(!blocks.is_empty());
        assert_eq!(
            a.get_memory_block_info(NODE, 100)
                .await
                .expect("block size"),
            128 << 20
        );
        let fs = a.get_fsinfo(NODE, 100).await.expect("fsinfo");
        let n_fs = fs.len() as u64;
        assert_eq!(
            a.agent(NODE, 100, "get-host-name").await.expect("generic")["host-name"],
            "gateway"
        );
        let e = a
            .agent(NODE, 100, "nope")
            .await
            .expect_err("unknown command");
        assert_eq!(e.category(), Category::Validation, "{e}");

        // Freezing.
        assert_eq!(
            a.fsfreeze_status(NODE, 100).await.expect("status"),
            "thawed"
        );
        assert_eq!(a.fsfreeze_freeze(NODE, 100).await.expect("freeze"), n_fs);
        assert_eq!(
            a.fsfreeze_status(NODE, 100).await.expect("status"),
            "frozen"
        );
        let e = a.fstrim(NODE, 100).await.expect_err("frozen");
        assert!(e.message().starts_with("Agent error: "), "{e}");
        assert_eq!(a.fsfreeze_thaw(NODE, 100).await.expect("thaw"), n_fs);
        assert!(a.fstrim(NODE, 100).await.expect("fstrim")["paths"].is_array());

        // Processes and files.
        let pid = a
            .exec(NODE, 100, &["cat"], Some("hello"))
            .await
            .expect("exec");
        let st = a.exec_status(NODE, 100, pid).await.expect("exec-status");
        assert!(st.exited);
        assert_eq!(st.exitcode, Some(0));
        assert_eq!(st.out_data.as_deref(), Some("hello"));
        a.file_write(NODE, 100, "/etc/motd", "welcome\n", None)
            .await
            .expect("write");
        let f = a
            .file_read(NODE, 100, "/etc/motd", &FileReadOptions::default())
            .await
            .expect("read");
        assert_eq!(f.content, "welcome\n");
        let e = a
            .file_read(NODE, 100, "/nope", &FileReadOptions::default())
            .await
            .expect_err("missing file");
        assert!(e.message().starts_with("Agent error: "), "{e}");
        a.set_user_password(NODE, 100, "root", "s3cret!pw", false)
            .await
            .expect("password");
        let e = a
            .set_user_password(NODE, 100, "nobody-here", "s3cret!pw", false)
            .await
            .expect_err("unknown user");
        assert!(e.message().contains("failed to set user password"), "{e}");

        // Power through the agent.
        a.suspend_ram(NODE, 100).await.expect("suspend-ram");
        assert!(
            pve.qemu()
                .vm_status(NODE, 100)
                .await
                .expect("status")
                .is_paused()
        );
        let e = a.ping(NODE, 100).await.expect_err("paused");
        assert_eq!(e.message(), "QEMU guest agent is not running");
        pve.qemu()
            .vm_resume_and_wait(NODE, 100, false)
            .await
            .expect("resume");
        a.suspend_hybrid(NODE, 100).await.expect("suspend-hybrid");
        pve.qemu()
            .vm_resume_and_wait(NODE, 100, false)
            .await
            .expect("resume");
        a.shutdown(NODE, 100).await.expect("shutdown");
        assert_eq!(
            pve.qemu()
                .vm_status(NODE, 100)
                .await
                .expect("status")
                .status,
            "stopped"
        );
        pve.qemu()
            .vm_start_and_wait(NODE, 100, &Default::default())
            .await
            .expect("start");
        boot(&run);
        a.suspend_disk(NODE, 100).await.expect("suspend-disk");
        assert!(
            !pve.qemu()
                .vm_status(NODE, 100)
                .await
                .expect("s")
                .is_running()
        );

        // The agent can be switched off in the config.
        pve.qemu()
            .update_vm(NODE, 102, &UpdateVm::new().delete("agent"))
            .await
            .expect("no agent");
        assert!(
            !pve.qemu()
                .vm_config(NODE, 102, &ConfigView::Pending)
                .await
                .expect("config")
                .agent_enabled()
        );

        let names = checked.names();
        for want in [
            "POST agent",
            "POST ping",
            "GET info",
            "GET get-time",
            "GET get-vcpus",
            "GET get-fsinfo",
            "GET get-memory-blocks",
            "GET get-memory-block-info",
            "GET get-host-name",
            "GET get-osinfo",
            "GET get-users",
            "GET get-timezone",
            "POST fsfreeze-status",
            "POST fsfreeze-freeze",
            "POST fsfreeze-thaw",
            "POST fstrim",
            "POST suspend-disk",
            "POST suspend-ram",
            "POST suspend-hybrid",
            "POST shutdown",
            "POST exec",
            "GET exec-status",
            "GET file-read",
            "POST file-write",
            "POST set-user-password",
        ] {
            assert!(
                names.iter().any(|n| n == want),
                "{mode:?}: {want} not checked"
            );
        }
    }
}
