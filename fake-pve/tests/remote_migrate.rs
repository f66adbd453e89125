//! Remote migration between two fake-pve servers on loopback, as `qm
//! remote-migrate` and `pct remote-migrate` drive it: the source's
//! `remote_migrate` call reaches the target over HTTPS (the certificate
//! pinned by its fingerprint), opens the tunnel (`mtunnel`, then
//! `mtunnelwebsocket`) and moves the guest through it. Both sides are
//! checked: the guest there, what stays here, the tasks' logs on both
//! sides, and the refusals. The tunnel's commands are also spoken
//! directly on the target's websocket.

mod common;

use std::time::Duration;

use common::{Auth, Pve, T0, enc, start_scenario};
use fake_pve::ws;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

const SECRET: &str = "0d2c9a4e-6f1b-4e3a-9c7d-5b8a1e2f3c4d";

const SOURCE: &str = r"
nodes:
  - { name: src, ip: 192.0.2.10, bridges: [vmbr0] }
storages:
  - { id: local, type: dir, path: /var/lib/vz, content: [iso, vztmpl, backup, images] }
  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve, content: [images, rootdir] }
vms:
  - vmid: 100
    name: web
    config: { scsi0: 'local-lvm:vm-100-disk-0,size=4G', net0: 'virtio=BC:24:11:00:00:01,bridge=vmbr0', memory: '2048', cores: '2' }
  - vmid: 101
    name: live
    status: running
    config: { scsi0: 'local-lvm:vm-101-disk-0,size=8G', net0: 'virtio=BC:24:11:00:00:02,bridge=vmbr0', memory: '2048' }
  - vmid: 102
    name: usb
    config: { scsi0: 'local-lvm:vm-102-disk-0,size=1G', usb0: 'host=1234:5678' }
containers:
  - vmid: 200
    hostname: box
    status: running
    config: { rootfs: 'local-lvm:vm-200-disk-0,size=2G', net0: 'name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:00:03,type=veth', ostype: debian, arch: amd64, unprivileged: '1', memory: '512' }
";

fn target() -> String {
    format!(
        r"
nodes:
  - {{ name: dst, ip: 198.51.100.20, bridges: [vmbr0, vmbr1] }}
storages:
  - {{ id: local, type: dir, path: /var/lib/vz, content: [iso, vztmpl, backup] }}
  - {{ id: tank, type: lvmthin, thinpool: tank, vgname: tank, content: [images, rootdir] }}
  - {{ id: files, type: dir, path: /srv/files, content: [images, rootdir] }}
users:
  - userid: root@pam
    tokens:
      - {{ tokenid: mig, secret: {SECRET}, privsep: false }}
  - userid: bob@pve
    password: bob-password
    tokens:
      - {{ tokenid: mig, secret: {SECRET}, privsep: false }}
  - userid: carol@pve
    password: carol-password
    tokens:
      - {{ tokenid: mig, secret: {SECRET}, privsep: false }}
  - userid: dave@pve
    password: dave-password
    tokens:
      - {{ tokenid: mig, secret: {SECRET}, privsep: false }}
roles:
  - {{ roleid: Incoming, privs: [VM.Allocate, Sys.Incoming, Sys.Audit, Datastore.AllocateSpace] }}
acl:
  - {{ path: /, roles: [PVEAuditor], users: [bob@pve] }}
  - {{ path: /vms/300, roles: [PVEVMAdmin], users: [bob@pve] }}
  - {{ path: /, roles: [Incoming], users: [carol@pve] }}
vms:
  - {{ vmid: 150, name: taken }}
"
    )
}

struct Pair {
    src: Pve,
    src_root: Auth,
    dst: Pve,
    dst_root: Auth,
    fp: String,
}

async fn pair() -> Pair {
    let src = start_scenario(SOURCE).await;
    let dst = start_scenario(&target()).await;
    let src_root = src.root().await;
    let dst_root = dst.root().await;
    let fp = dst.run.fingerprint().expect("TLS").to_string();
    Pair {
        src,
        src_root,
        dst,
        dst_root,
        fp,
    }
}

impl Pair {
    fn endpoint(&self, token: &str) -> String {
        format!(
            "host=127.0.0.1,port={},apitoken=PVEAPIToken={token}={SECRET},fingerprint={}",
            self.dst.run.addr().port(),
            self.fp
        )
    }

    async fn migrate(&self, kind: &str, vmid: u32, form: &str, token: &str) -> common::Resp {
        let body = format!("target-endpoint={}&{form}", enc(&self.endpoint(token)));
        self.src
            .post(
                &format!("/nodes/src/{kind}/{vmid}/remote_migrate"),
                &self.src_root,
                &body,
            )
            .await
    }
}

/// Waits (in real time: the migration runs on its own) for a task to
/// stop: its exit status and log.
async fn finished(pve: &Pve, auth: &Auth, upid: &str) -> (String, Vec<String>) {
    for _ in 0..400 {
        let st = pve.task_status(upid, auth).await;
        if st["status"] == "stopped" {
            let log = common::task_log(pve, auth, upid).await;
            return (st["exitstatus"].as_str().unwrap_or_default().into(), log);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("task {upid} did not end");
}

/// The tasks of `kind` on a node, newest first.
async fn tasks_of(pve: &Pve, auth: &Auth, node: &str, kind: &str) -> Vec<String> {
    pve.get(
        &format!("/nodes/{node}/tasks?typefilter={kind}&source=all"),
        auth,
    )
    .await
    .data()
    .as_array()
    .expect("tasks")
    .iter()
    .map(|t| t["upid"].as_str().unwrap_or_default().to_string())
    .collect()
}

/// `2026-09-21 14:13:20`: every line's stamp (the clock stands still).
fn ts() -> String {
    let (y, m, d, h, mi, s) = (2026, 9, 21, 14, 13, 20);
    assert_eq!(T0, 1_790_000_000);
    format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}")
}

fn stamped(lines: &[&str]) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            if let Some(l) = l.strip_suffix(" (stamped)") {
                format!("{} {l}", ts())
            } else if l.starts_with("tunnel: ")
                || l.starts_with("TASK ")
                || *l == "websocket tunnel started"
                || l.starts_with("drive")
                || l.starts_with("all '")
                || l.starts_with("  Logical")
            {
                (*l).to_string()
            } else {
                format!("{} {l}", ts())
            }
        })
        .collect()
}

#[tokio::test]
async fn an_offline_vm_moves_to_the_other_cluster_and_stays_here_locked() {
    let p = pair().await;
    let r = p
        .migrate(
            "qemu",
            100,
            "target-vmid=300&target-storage=local-lvm:tank&target-bridge=vmbr0:vmbr1",
            "root@pam!mig",
        )
        .await;
    let upid = common::upid(&r);
    let f: Vec<&str> = upid.split(':').collect();
    assert_eq!(
        (f[1], f[5], f[6], f[7]),
        ("src", "qmigrate", "100", "root@pam")
    );
    let (exit, log) = finished(&p.src, &p.src_root, &upid).await;
    let remote = tasks_of(&p.dst, &p.dst_root, "dst", "qmtunnel").await;
    assert_eq!(remote.len(), 1);
    let rupid = &remote[0];
    assert!(rupid.contains(":qmtunnel:300:root@pam!mig:"), "{rupid}");
    assert_eq!(exit, "OK", "{log:#?}");
    let want = stamped(&[
        &format!("remote: started tunnel worker '{rupid}'"),
        "tunnel: -> sending command \"version\" to remote",
        "tunnel: <- got reply",
        "local WS tunnel version: 2",
        "remote WS tunnel version: 2",
        "minimum required WS tunnel version: 2",
        "websocket tunnel started",
        "starting migration of VM 100 to node 'dst' (127.0.0.1)",
        "tunnel: -> sending command \"bwlimit\" to remote",
        "tunnel: <- got reply",
        "found local disk 'local-lvm:vm-100-disk-0' (attached)",
        "copying local disk images",
        "tunnel: -> sending command \"disk-import\" to remote",
        "tunnel: <- got reply",
        "tunnel: accepted new connection on '/run/pve/100.storage'",
        "tunnel: requesting WS ticket via tunnel",
        "tunnel: established new WS for forwarding '/run/pve/100.storage'",
        "tunnel: done handling forwarded connection from '/run/pve/100.storage'",
        "tunnel: -> sending command \"query-disk-import\" to remote",
        "tunnel: <- got reply",
        "disk-import:   Logical volume \"vm-300-disk-0\" created.",
        "tunnel: -> sending command \"query-disk-import\" to remote",
        "tunnel: <- got reply",
        "volume 'local-lvm:vm-100-disk-0' is 'tank:vm-300-disk-0' on the target",
        "mapped: net0 from vmbr0 to vmbr1",
        "tunnel: -> sending command \"config\" to remote",
        "tunnel: <- got reply",
        "tunnel: -> sending command \"unlock\" to remote",
        "tunnel: <- got reply",
        "tunnel: -> sending command \"quit\" to remote",
        "tunnel: <- got reply",
        "migration finished successfully (duration 00:00:00)",
        "TASK OK",
    ]);
    assert_eq!(log, want);

    // There: the VM with the target's VMID, storage and bridge, unlocked
    // and stopped, its disk allocated with its size.
    let c = p
        .dst
        .get("/nodes/dst/qemu/300/config", &p.dst_root)
        .await
        .data();
    assert_eq!(c["scsi0"], "tank:vm-300-disk-0,size=4G", "{c}");
    assert_eq!(c["net0"], "virtio=BC:24:11:00:00:01,bridge=vmbr1", "{c}");
    assert_eq!(c["name"], "web");
    assert_eq!(c["memory"], "2048");
    assert!(c.get("lock").is_none(), "{c}");
    let st = p
        .dst
        .get("/nodes/dst/qemu/300/status/current", &p.dst_root)
        .await
        .data();
    assert_eq!(st["status"], "stopped");
    let vols = p
        .dst
        .get("/nodes/dst/storage/tank/content", &p.dst_root)
        .await
        .data();
    assert_eq!(vols[0]["volid"], "tank:vm-300-disk-0");
    assert_eq!(vols[0]["size"], 4u64 << 30);
    assert_eq!(vols[0]["vmid"], 300);
    // The tunnel worker's log.
    let (rexit, rlog) = finished(&p.dst, &p.dst_root, rupid).await;
    assert_eq!(rexit, "OK");
    assert_eq!(
        rlog,
        [
            "mtunnel started",
            "received command 'version'",
            "received command 'bwlimit'",
            "received command 'disk-import'",
            "ready",
            "",
            "received command 'ticket'",
            "received command 'query-disk-import'",
            "disk-import:   Logical volume \"vm-300-disk-0\" created.",
            "",
            "received command 'query-disk-import'",
            "disk-import: successfully imported 'tank:vm-300-disk-0'",
            "",
            "received command 'config'",
            "received command 'unlock'",
            "received command 'quit'",
            "switching to exit-mode, waiting for client to disconnect",
            "mtunnel exited",
            "TASK OK",
        ]
    );

    // Here: the VM stays, stopped and locked `migrate`, with its disk.
    let c = p
        .src
        .get("/nodes/src/qemu/100/config", &p.src_root)
        .await
        .data();
    assert_eq!(c["lock"], "migrate");
    assert_eq!(c["scsi0"], "local-lvm:vm-100-disk-0,size=4G");
    assert!(
        common::volids(&p.src, &p.src_root, "src", "local-lvm")
            .await
            .contains(&"local-lvm:vm-100-disk-0".to_string())
    );

    // Once more: the VM is locked here now.
    let r = p
        .migrate(
            "qemu",
            100,
            "target-vmid=301&target-storage=tank&target-bridge=vmbr0",
            "root@pam!mig",
        )
        .await;
    r.assert_error(500, "VM is locked (migrate)\n");
}

#[tokio::test]
async fn a_running_vm_migrates_live_and_is_deleted_here() {
    let p = pair().await;
    let r = p
        .migrate(
            "qemu",
            101,
            "online=1&delete=1&target-storage=files&target-bridge=1",
            "root@pam!mig",
        )
        .await;
    let upid = common::upid(&r);
    let (exit, log) = finished(&p.src, &p.src_root, &upid).await;
    assert_eq!(exit, "OK", "{log:#?}");
    let remote = tasks_of(&p.dst, &p.dst_root, "dst", "qmtunnel").await;
    let rupid = &remote[0];
    let want = stamped(&[
        "conntrack state migration not supported or disabled, active connections might get dropped",
        &format!("remote: started tunnel worker '{rupid}'"),
        "tunnel: -> sending command \"version\" to remote",
        "tunnel: <- got reply",
        "local WS tunnel version: 2",
        "remote WS tunnel version: 2",
        "minimum required WS tunnel version: 2",
        "websocket tunnel started",
        "starting migration of VM 101 to node 'dst' (127.0.0.1)",
        "tunnel: -> sending command \"bwlimit\" to remote",
        "tunnel: <- got reply",
        "found local disk 'local-lvm:vm-101-disk-0' (attached)",
        "mapped: net0 from vmbr0 to vmbr0",
        "Allocating volume for drive 'scsi0' on remote storage 'files'..",
        "tunnel: -> sending command \"disk\" to remote",
        "tunnel: <- got reply",
        "volume 'local-lvm:vm-101-disk-0' is 'files:101/vm-101-disk-0.raw' on the target",
        "tunnel: -> sending command \"config\" to remote",
        "tunnel: <- got reply",
        "tunnel: -> sending command \"start\" to remote",
        "tunnel: <- got reply",
        "Setting up tunnel for '/run/qemu-server/101.migrate'",
        "Setting up tunnel for '/run/qemu-server/101_nbd.migrate'",
        "starting storage migration",
        "scsi0: start migration to nbd:unix:/run/qemu-server/101_nbd.migrate:exportname=drive-scsi0",
        "drive mirror is starting for drive-scsi0",
        "tunnel: accepted new connection on '/run/qemu-server/101_nbd.migrate'",
        "tunnel: requesting WS ticket via tunnel",
        "tunnel: established new WS for forwarding '/run/qemu-server/101_nbd.migrate'",
        "drive-scsi0: transferred 8.0 GiB of 8.0 GiB (100.00%) in 0s, ready",
        "all 'mirror' jobs are ready",
        "switching mirror jobs to actively synced mode",
        "drive-scsi0: switching to actively synced mode",
        "drive-scsi0: successfully switched to actively synced mode",
        "starting online/live migration on unix:/run/qemu-server/101.migrate",
        "set migration capabilities",
        "tunnel: -> sending command \"bwlimit\" to remote",
        "tunnel: <- got reply",
        "migration downtime limit: 100 ms",
        "migration cachesize: 256.0 MiB",
        "set migration parameters",
        "start migrate command to unix:/run/qemu-server/101.migrate",
        "tunnel: accepted new connection on '/run/qemu-server/101.migrate'",
        "tunnel: requesting WS ticket via tunnel",
        "tunnel: established new WS for forwarding '/run/qemu-server/101.migrate'",
        "migration completed, transferred 2.0 GiB VM-state",
        "migration status: completed",
        "drive-scsi0: Completing block job...",
        "drive-scsi0: Completed successfully.",
        "drive-scsi0: mirror-job finished",
        "tunnel: done handling forwarded connection from '/run/qemu-server/101.migrate'",
        "stopping NBD storage migration server on target.",
        "tunnel: -> sending command \"nbdstop\" to remote",
        "tunnel: <- got reply",
        "tunnel: -> sending command \"resume\" to remote",
        "tunnel: <- got reply",
        "tunnel: -> sending command \"unlock\" to remote",
        "tunnel: <- got reply",
        "tunnel: -> sending command \"quit\" to remote",
        "tunnel: <- got reply",
        "  Logical volume \"vm-101-disk-0\" successfully removed.",
        "migration finished successfully (duration 00:00:00)",
        "TASK OK",
    ]);
    assert_eq!(log, want);

    // There it runs, on the new disk.
    let st = p
        .dst
        .get("/nodes/dst/qemu/101/status/current", &p.dst_root)
        .await
        .data();
    assert_eq!(st["status"], "running", "{st}");
    assert_eq!(st["qmpstatus"], "running", "{st}");
    let c = p
        .dst
        .get("/nodes/dst/qemu/101/config", &p.dst_root)
        .await
        .data();
    assert_eq!(
        c["scsi0"], "files:101/vm-101-disk-0.raw,format=raw,size=8G",
        "{c}"
    );
    assert!(c.get("lock").is_none(), "{c}");
    let (_, rlog) = finished(&p.dst, &p.dst_root, rupid).await;
    assert!(
        rlog.contains(&"migration listens on unix:/run/qemu-server/101.migrate".to_string()),
        "{rlog:#?}"
    );
    assert!(rlog.contains(&"storage migration listens on nbd:unix:/run/qemu-server/101_nbd.migrate:exportname=drive-scsi0 volume:files:101/vm-101-disk-0.raw,format=raw,size=8G".to_string()), "{rlog:#?}");
    // Here it is gone, with its disk.
    p.src
        .get("/nodes/src/qemu/101/config", &p.src_root)
        .await
        .assert_error(
            500,
            "Configuration file 'nodes/src/qemu-server/101.conf' does not exist\n",
        );
    assert!(
        !common::volids(&p.src, &p.src_root, "src", "local-lvm")
            .await
            .contains(&"local-lvm:vm-101-disk-0".to_string())
    );
}

#[tokio::test]
async fn a_running_container_moves_in_restart_mode() {
    let p = pair().await;
    let r = p
        .migrate(
            "lxc",
            200,
            "restart=1&target-storage=local-lvm:tank&target-bridge=vmbr0:vmbr1",
            "root@pam!mig",
        )
        .await;
    let upid = common::upid(&r);
    let f: Vec<&str> = upid.split(':').collect();
    assert_eq!((f[5], f[6]), ("vzmigrate", "200"));
    let (exit, log) = finished(&p.src, &p.src_root, &upid).await;
    assert_eq!(exit, "OK", "{log:#?}");
    let remote = tasks_of(&p.dst, &p.dst_root, "dst", "vzmtunnel").await;
    let rupid = &remote[0];
    let want = stamped(&[
        &format!("remote: started tunnel worker '{rupid}'"),
        "tunnel: -> sending command \"version\" to remote",
        "tunnel: <- got reply",
        "local WS tunnel version: 2",
        "remote WS tunnel version: 2",
        "minimum required WS tunnel version: 2",
        "websocket tunnel started (stamped)",
        "shutdown CT 200",
        "starting migration of CT 200 to node 'dst' (127.0.0.1)",
        "tunnel: -> sending command \"bwlimit\" to remote",
        "tunnel: <- got reply",
        "found local volume 'local-lvm:vm-200-disk-0' (in current VM config)",
        "tunnel: -> sending command \"disk-import\" to remote",
        "tunnel: <- got reply",
        "tunnel: accepted new connection on '/run/pve/200.storage'",
        "tunnel: requesting WS ticket via tunnel",
        "tunnel: established new WS for forwarding '/run/pve/200.storage'",
        "tunnel: done handling forwarded connection from '/run/pve/200.storage'",
        "tunnel: -> sending command \"query-disk-import\" to remote",
        "tunnel: <- got reply",
        "disk-import:   Logical volume \"vm-200-disk-0\" created.",
        "tunnel: -> sending command \"query-disk-import\" to remote",
        "tunnel: <- got reply",
        "volume 'local-lvm:vm-200-disk-0' is 'tank:vm-200-disk-0' on the target",
        "mapped: net0 from vmbr0 to vmbr1",
        "tunnel: -> sending command \"config\" to remote",
        "tunnel: <- got reply",
        "start final cleanup",
        "tunnel: -> sending command \"unlock\" to remote",
        "tunnel: <- got reply",
        "start container on target node",
        "tunnel: -> sending command \"start\" to remote",
        "tunnel: <- got reply",
        "tunnel: -> sending command \"quit\" to remote",
        "tunnel: <- got reply",
        "migration finished successfully (duration 00:00:00)",
        "TASK OK",
    ]);
    assert_eq!(log, want);
    let c = p
        .dst
        .get("/nodes/dst/lxc/200/config", &p.dst_root)
        .await
        .data();
    assert_eq!(c["rootfs"], "tank:vm-200-disk-0,size=2G", "{c}");
    assert!(
        c["net0"]
            .as_str()
            .unwrap_or_default()
            .contains("bridge=vmbr1"),
        "{c}"
    );
    assert_eq!(c["hostname"], "box");
    assert_eq!(c["unprivileged"], 1);
    assert!(c.get("lock").is_none(), "{c}");
    let st = p
        .dst
        .get("/nodes/dst/lxc/200/status/current", &p.dst_root)
        .await
        .data();
    assert_eq!(st["status"], "running");
    // Here: stopped, locked, kept.
    let c = p
        .src
        .get("/nodes/src/lxc/200/config", &p.src_root)
        .await
        .data();
    assert_eq!(c["lock"], "migrate");
    let st = p
        .src
        .get("/nodes/src/lxc/200/status/current", &p.src_root)
        .await
        .data();
    assert_eq!(st["status"], "stopped");
}

/// A refusal of the target's `mtunnel`: the task stops before anything
/// moved, and the guest here is as it was.
async fn refused_by_mtunnel(p: &Pair, form: &str, token: &str, want: &[&str]) {
    let r = p.migrate("qemu", 100, form, token).await;
    let upid = common::upid(&r);
    let (exit, log) = finished(&p.src, &p.src_root, &upid).await;
    assert_eq!(exit, "migration aborted", "{log:#?}");
    let mut lines: Vec<String> = want
        .iter()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                format!("{} ERROR: migration aborted (duration 00:00:00): {l}", ts())
            } else {
                format!("{} ERROR: {l}", ts())
            }
        })
        .collect();
    lines.push("TASK ERROR: migration aborted".into());
    assert_eq!(log, lines);
    let c = p
        .src
        .get("/nodes/src/qemu/100/config", &p.src_root)
        .await
        .data();
    assert!(c.get("lock").is_none(), "{c}");
}

#[tokio::test]
async fn the_targets_refusals_reach_the_task_and_nothing_moves() {
    let p = pair().await;
    // The VMID is taken there.
    refused_by_mtunnel(
        &p,
        "target-vmid=150&target-storage=tank&target-bridge=vmbr0",
        "root@pam!mig",
        &[
            "400 Parameter verification failed.",
            "vmid: unable to create empty VM config - VM 150 already exists on node 'dst'",
        ],
    )
    .await;
    // No such bridge, no such storage there.
    refused_by_mtunnel(
        &p,
        "target-vmid=300&target-storage=tank&target-bridge=vmbr0:vmbr9",
        "root@pam!mig",
        &["500 bridge 'vmbr9' does not exist"],
    )
    .await;
    refused_by_mtunnel(
        &p,
        "target-vmid=300&target-storage=nope&target-bridge=vmbr0",
        "root@pam!mig",
        &["500 storage 'nope' does not exist"],
    )
    .await;
    // A token without the privileges `mtunnel` asks.
    refused_by_mtunnel(
        &p,
        "target-vmid=301&target-storage=tank&target-bridge=vmbr0",
        "bob@pve!mig",
        &["403 Permission check failed (/vms/301, VM.Allocate)"],
    )
    .await;
    refused_by_mtunnel(
        &p,
        "target-vmid=300&target-storage=tank&target-bridge=vmbr0",
        "bob@pve!mig",
        &["403 Permission check failed (/, Sys.Incoming)"],
    )
    .await;
    // Nothing was left there.
    p.dst
        .get("/nodes/dst/qemu/300/config", &p.dst_root)
        .await
        .assert_error(
            500,
            "Configuration file 'nodes/dst/qemu-server/300.conf' does not exist\n",
        );
}

#[tokio::test]
async fn a_target_that_fails_midway_removes_what_it_made_and_the_source_keeps_its_vm() {
    let p = pair().await;
    // carol may open a tunnel and allocate, but not configure a VM: the
    // disk arrives, then `config` is refused and the tunnel cleans up.
    let r = p
        .migrate(
            "qemu",
            100,
            "target-vmid=310&target-storage=local-lvm:tank&target-bridge=vmbr0",
            "carol@pve!mig",
        )
        .await;
    let upid = common::upid(&r);
    let (exit, log) = finished(&p.src, &p.src_root, &upid).await;
    assert_eq!(exit, "migration aborted", "{log:#?}");
    let config_cmd = log
        .iter()
        .find(|l| l.contains("ERROR: error - tunnel command '{\"conf\""))
        .unwrap_or_else(|| panic!("{log:#?}"));
    assert!(
        config_cmd.ends_with(
            "\"cmd\":\"config\"}' failed - failed to handle 'config' command - 403 Permission check failed (/vms/310, VM.Config.CPU)"
        ),
        "{config_cmd}"
    );
    let tail: Vec<&str> = log
        .iter()
        .skip_while(|l| !l.contains("aborting phase 1"))
        .map(String::as_str)
        .collect();
    assert_eq!(
        tail[..3],
        [
            format!("{} aborting phase 1 - cleanup resources", ts()).as_str(),
            "tunnel: -> sending command \"quit\" to remote",
            "tunnel: <- got reply",
        ]
    );
    assert!(
        tail[3].contains("ERROR: migration aborted (duration 00:00:00): error - tunnel command")
    );
    // There: nothing left, the imported disk freed.
    let rupid = &tasks_of(&p.dst, &p.dst_root, "dst", "qmtunnel").await[0];
    let (rexit, rlog) = finished(&p.dst, &p.dst_root, rupid).await;
    assert_eq!(rexit, "OK", "{rlog:#?}");
    assert!(
        rlog.contains(&"freeing volume 'tank:vm-310-disk-0' as part of cleanup".to_string()),
        "{rlog:#?}"
    );
    p.dst
        .get("/nodes/dst/qemu/310/config", &p.dst_root)
        .await
        .assert_error(
            500,
            "Configuration file 'nodes/dst/qemu-server/310.conf' does not exist\n",
        );
    assert!(
        common::volids(&p.dst, &p.dst_root, "dst", "tank")
            .await
            .is_empty()
    );
    // Here: unlocked, whole.
    let c = p
        .src
        .get("/nodes/src/qemu/100/config", &p.src_root)
        .await
        .data();
    assert!(c.get("lock").is_none(), "{c}");
    assert_eq!(c["scsi0"], "local-lvm:vm-100-disk-0,size=4G");
}

#[tokio::test]
async fn refusals_before_the_task() {
    let p = pair().await;
    let post = |vmid: u32, form: String| {
        let p = &p;
        async move {
            p.src
                .post(
                    &format!("/nodes/src/qemu/{vmid}/remote_migrate"),
                    &p.src_root,
                    &form,
                )
                .await
        }
    };
    let ep = enc(&p.endpoint("root@pam!mig"));
    // Only an explicit storage map.
    post(
        100,
        format!("target-endpoint={ep}&target-storage=1&target-bridge=vmbr0"),
    )
    .await
    .assert_error(500, "remote migration requires explicit storage mapping!\n");
    // A running VM needs `online`.
    post(
        101,
        format!("target-endpoint={ep}&target-storage=tank&target-bridge=vmbr0"),
    )
    .await
    .assert_error(500, "can't migrate running VM without --online\n");
    // The token must see the target's cluster (`/cluster/status`).
    let blind = enc(&p.endpoint("dave@pve!mig"));
    post(
        100,
        format!("target-endpoint={blind}&target-storage=tank&target-bridge=vmbr0"),
    )
    .await
    .assert_error(500, "403 Permission check failed (/, Sys.Audit)\n");
    // Nothing listens there.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let nowhere = enc(&format!(
        "host=127.0.0.1,port={port},apitoken=PVEAPIToken=root@pam!mig={SECRET},fingerprint={}",
        p.fp
    ));
    post(
        100,
        format!("target-endpoint={nowhere}&target-storage=tank&target-bridge=vmbr0"),
    )
    .await
    .assert_error(
        500,
        &format!("500 Can't connect to 127.0.0.1:{port} (Connection refused)\n"),
    );
    // Another certificate than the one pinned; none pinned, and the
    // target's is in no system store.
    let other = "AA:".repeat(31) + "AA";
    let wrong = enc(&format!(
        "host=127.0.0.1,port={},apitoken=PVEAPIToken=root@pam!mig={SECRET},fingerprint={other}",
        p.dst.run.addr().port()
    ));
    post(
        100,
        format!("target-endpoint={wrong}&target-storage=tank&target-bridge=vmbr0"),
    )
    .await
    .assert_error(
        500,
        &format!("fingerprint '{}' not verified, abort!\n", p.fp),
    );
    let unpinned = enc(&format!(
        "host=127.0.0.1,port={},apitoken=PVEAPIToken=root@pam!mig={SECRET}",
        p.dst.run.addr().port()
    ));
    post(
        100,
        format!("target-endpoint={unpinned}&target-storage=tank&target-bridge=vmbr0"),
    )
    .await
    .assert_error(
        500,
        &format!("fingerprint '{}' not verified, abort!\n", p.fp),
    );
    // A VM with a host device: the task refuses it.
    let r = post(
        102,
        format!("target-endpoint={ep}&target-storage=tank&target-bridge=vmbr0"),
    )
    .await;
    let (exit, log) = finished(&p.src, &p.src_root, &common::upid(&r)).await;
    assert_eq!(exit, "migration aborted");
    assert_eq!(
        log,
        [
            format!(
                "{} ERROR: migration aborted (duration 00:00:00): can't migrate VM which uses local devices: usb0",
                ts()
            ),
            "TASK ERROR: migration aborted".to_string(),
        ]
    );
}

// ---------------------------------------------------------------------
// The tunnel spoken directly.

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

struct Ws {
    io: Box<dyn Io>,
    buf: Vec<u8>,
    lines: Vec<u8>,
}

impl Ws {
    /// Upgrades `GET /api2/json<path>` with `cookie`: the status and,
    /// on 101, the socket.
    async fn open(pve: &Pve, path: &str, cookie: &str) -> (u16, Option<Ws>) {
        let ca = pve.run.cert_pem().expect("TLS");
        let mut io = common::tls_connect(pve, ca, "localhost")
            .await
            .expect("TLS");
        let req = format!(
            "GET /api2/json{path} HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nCookie: PVEAuthCookie={cookie}\r\n\r\n"
        );
        io.write_all(req.as_bytes()).await.expect("sent");
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let n = tokio::time::timeout(Duration::from_secs(10), io.read(&mut chunk))
                .await
                .expect("in time")
                .unwrap_or(0);
            if n == 0 {
                return (0, None);
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let status: u16 = String::from_utf8_lossy(&buf[9..12])
            .parse()
            .expect("status");
        if status != 101 {
            return (status, None);
        }
        (
            status,
            Some(Ws {
                io: Box::new(io),
                buf: buf[end..].to_vec(),
                lines: Vec::new(),
            }),
        )
    }

    async fn send(&mut self, data: &[u8]) {
        self.io
            .write_all(&ws::client_frame(2, data, [7, 3, 1, 9]))
            .await
            .expect("sent");
    }

    async fn frame(&mut self) -> Option<Vec<u8>> {
        let mut chunk = [0u8; 16384];
        loop {
            if let Some((op, payload, used)) = ws::read_server_frame(&self.buf) {
                self.buf.drain(..used);
                if op == 8 {
                    return None;
                }
                return Some(payload);
            }
            let n = tokio::time::timeout(Duration::from_secs(10), self.io.read(&mut chunk))
                .await
                .expect("in time")
                .ok()?;
            if n == 0 {
                return None;
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Sends a command line, answers its reply line.
    async fn cmd(&mut self, cmd: Value) -> Value {
        self.send(format!("{cmd}\n").as_bytes()).await;
        loop {
            if let Some(i) = self.lines.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.lines.drain(..=i).collect();
                return serde_json::from_slice(&line).expect("JSON");
            }
            let f = self.frame().await.expect("a reply");
            self.lines.extend(f);
        }
    }

    async fn close(mut self) {
        let _ = self
            .io
            .write_all(&ws::client_frame(8, &[3, 232], [1, 2, 3, 4]))
            .await;
        while self.frame().await.is_some() {}
    }
}

fn ticket_of(a: &Auth) -> String {
    match a {
        Auth::Ticket { ticket, .. } => ticket.clone(),
        _ => panic!("a ticket"),
    }
}

#[tokio::test]
async fn the_tunnel_speaks_its_commands_on_the_targets_websocket() {
    let dst = start_scenario(&target()).await;
    let root = dst.root().await;
    let cookie = ticket_of(&root);
    // `node` must be this one; the guest must be new.
    dst.post("/nodes/elsewhere/qemu/400/mtunnel", &root, "")
        .await
        .assert_param_error(
            "node",
            "node needs to be 'localhost' or local hostname 'dst'",
        );
    let t = dst
        .post(
            "/nodes/localhost/qemu/400/mtunnel",
            &root,
            "storages=tank&bridges=vmbr1",
        )
        .await
        .data();
    let socket = t["socket"].as_str().expect("socket").to_string();
    assert_eq!(socket, "/run/qemu-server/400.mtunnel");
    let upid = t["upid"].as_str().expect("upid").to_string();
    assert!(upid.contains(":qmtunnel:400:root@pam:"), "{upid}");
    let ticket = t["ticket"].as_str().expect("ticket").to_string();
    assert!(ticket.starts_with("PVETUNNEL:"), "{ticket}");
    let c = dst.get("/nodes/dst/qemu/400/config", &root).await.data();
    assert_eq!(c["lock"], "create");
    // The ticket is checked for the socket.
    let path = |socket: &str, ticket: &str| {
        format!(
            "/nodes/dst/qemu/400/mtunnelwebsocket?socket={}&ticket={}",
            enc(socket),
            enc(ticket)
        )
    };
    dst.get(&path("/run/qemu-server/400.storage", &ticket), &root)
        .await
        .assert_error(401, "permission denied - invalid PVETUNNEL ticket\n");
    let ok = dst.get(&path(&socket, &ticket), &root).await.data();
    assert_eq!(ok, json!({ "socket": socket }));
    let (status, ws) = Ws::open(&dst, &path(&socket, &ticket), &cookie).await;
    assert_eq!(status, 101);
    let mut ws = ws.expect("upgraded");
    // One connection only.
    let (status, _) = Ws::open(&dst, &path(&socket, &ticket), &cookie).await;
    assert_eq!(status, 0, "a second connection finds nothing listening");
    // The worker now runs past its 300 seconds.
    dst.run.clock().advance(400);
    assert_eq!(dst.task_status(&upid, &root).await["status"], "running");

    assert_eq!(
        ws.cmd(json!({"cmd": "version"})).await,
        json!({"api": 2, "age": 0, "success": true})
    );
    assert_eq!(
        ws.cmd(json!({"cmd": "bogus"})).await,
        json!({"success": false, "msg": "unknown command 'bogus' given"})
    );
    assert_eq!(
        ws.cmd(json!({"nocmd": 1})).await,
        json!({"success": false, "msg": "'cmd' missing"})
    );
    assert_eq!(
        ws.cmd(json!({"cmd": "ticket", "path": "/run/x"})).await,
        json!({"success": false, "msg": "failed to handle 'ticket' command - Not allowed to generate ticket for unknown socket '/run/x'\n"})
    );
    assert_eq!(
        ws.cmd(json!({"cmd": "ticket"})).await,
        json!({"success": false, "msg": "failed to handle 'ticket' command - 400 Parameter verification failed.\npath: property is missing and it is not optional\n"})
    );
    // A disk: imported from a stream on the socket `disk-import` names.
    let imp = ws
        .cmd(
            json!({"cmd": "disk-import", "volname": "vm-99-disk-0", "format": "raw",
            "export_formats": "raw+size", "storage": "tank", "allow_rename": "1"}),
        )
        .await;
    assert_eq!(
        imp,
        json!({"socket": "/run/qemu-server/400.storage", "format": "raw+size", "success": true})
    );
    let pending = ws.cmd(json!({"cmd": "query-disk-import"})).await;
    assert_eq!(
        pending,
        json!({"status": "pending", "msg": null, "success": true})
    );
    let t2 = ws
        .cmd(json!({"cmd": "ticket", "path": "/run/qemu-server/400.storage"}))
        .await;
    let t2 = t2["ticket"].as_str().expect("ticket").to_string();
    let (status, data) = Ws::open(&dst, &path("/run/qemu-server/400.storage", &t2), &cookie).await;
    assert_eq!(status, 101);
    let mut data = data.expect("data socket");
    data.send(&(3u64 << 30).to_le_bytes()).await;
    data.close().await;
    assert_eq!(
        ws.cmd(json!({"cmd": "query-disk-import"})).await,
        json!({"status": "pending", "msg": "  Logical volume \"vm-99-disk-0\" created.\n", "success": true})
    );
    assert_eq!(
        ws.cmd(json!({"cmd": "query-disk-import"})).await,
        json!({"status": "complete", "volid": "tank:vm-99-disk-0", "success": true})
    );
    // The config, adapted to this cluster.
    let conf = "cores: 2\nmemory: 1024\nname: direct\nnet0: virtio=BC:24:11:00:00:09,bridge=vmbr1\nscsi0: tank:vm-99-disk-0,size=3G\n";
    assert_eq!(
        ws.cmd(json!({"cmd": "config", "conf": conf})).await,
        json!({"success": true})
    );
    let c = dst.get("/nodes/dst/qemu/400/config", &root).await.data();
    assert_eq!(c["lock"], "migrate");
    assert_eq!(c["scsi0"], "tank:vm-99-disk-0,size=3G");
    assert_eq!(
        ws.cmd(json!({"cmd": "resume"})).await,
        json!({"success": false, "msg": "failed to handle 'resume' command - VM 400 not running\n"})
    );
    assert_eq!(
        ws.cmd(json!({"cmd": "unlock"})).await,
        json!({"success": true})
    );
    assert_eq!(
        ws.cmd(json!({"cmd": "quit", "cleanup": 0})).await,
        json!({"success": true})
    );
    assert_eq!(
        ws.cmd(json!({"cmd": "version"})).await,
        json!({"success": false, "msg": "tunnel is in exit-mode, processing 'version' cmd not possible"})
    );
    ws.close().await;
    let (exit, log) = finished(&dst, &root, &upid).await;
    assert_eq!(exit, "OK", "{log:#?}");
    assert_eq!(log.last().map(String::as_str), Some("TASK OK"));
    assert!(log.contains(&"mtunnel exited".to_string()));
    let c = dst.get("/nodes/dst/qemu/400/config", &root).await.data();
    assert!(c.get("lock").is_none(), "{c}");
    assert_eq!(c["name"], "direct");
}

#[tokio::test]
async fn a_tunnel_nobody_connects_to_ends_and_takes_its_config_along() {
    let dst = start_scenario(&target()).await;
    let root = dst.root().await;
    let t = dst
        .post("/nodes/dst/lxc/410/mtunnel", &root, "storages=tank")
        .await
        .data();
    assert_eq!(t["socket"], "/run/pve/ct-410.mtunnel");
    let upid = t["upid"].as_str().expect("upid").to_string();
    dst.get("/nodes/dst/lxc/410/config", &root).await.data();
    dst.run.clock().advance(300);
    let (exit, log) = finished(&dst, &root, &upid).await;
    assert_eq!(exit, "Exiting mtunnel");
    assert_eq!(
        log,
        [
            "mtunnel started",
            "Failed to accept tunnel connection - got timeout",
            "",
            "Removing tunnel socket..",
            "Removing temporary VM config..",
            "TASK ERROR: Exiting mtunnel",
        ]
    );
    dst.get("/nodes/dst/lxc/410/config", &root)
        .await
        .assert_error(
            500,
            "Configuration file 'nodes/dst/lxc/410.conf' does not exist\n",
        );
    // A dropped connection ends the worker with an error; the guest is
    // left locked there.
    let t = dst
        .post("/nodes/dst/qemu/411/mtunnel", &root, "")
        .await
        .data();
    let upid = t["upid"].as_str().expect("upid").to_string();
    let path = format!(
        "/nodes/dst/qemu/411/mtunnelwebsocket?socket={}&ticket={}",
        enc(t["socket"].as_str().expect("socket")),
        enc(t["ticket"].as_str().expect("ticket"))
    );
    let (status, ws) = Ws::open(&dst, &path, &ticket_of(&root)).await;
    assert_eq!(status, 101);
    ws.expect("upgraded").close().await;
    let (exit, _) = finished(&dst, &root, &upid).await;
    assert_eq!(exit, "mtunnel exited unexpectedly");
    let c = dst.get("/nodes/dst/qemu/411/config", &root).await.data();
    assert_eq!(c["lock"], "create");
}
