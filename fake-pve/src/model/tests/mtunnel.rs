//! Remote migration's model: the endpoint and maps a call gives, the
//! target's tunnel worker and its commands, the source's checks, scan
//! and what it keeps.

use rstest::rstest;
use serde_json::{Value, json};

use super::{T0, World, map, refusal, refused, root, user};
use crate::model::Error;
use crate::model::mtunnel::{
    Endpoint, GuestType, OpenRequest, Outgoing, exception_text, mapped_lines, parse_config_text,
};
use crate::model::qemu::StorageMap;

const TARGET: &str = r"
nodes:
  - { name: dst, bridges: [vmbr0, vmbr1] }
storages:
  - { id: local, type: dir, path: /var/lib/vz, content: [iso] }
  - { id: tank, type: lvmthin, thinpool: tank, vgname: tank, content: [images, rootdir] }
  - { id: files, type: dir, path: /srv/files, content: [images, rootdir] }
  - { id: pool, type: zfspool, pool: rpool/data, content: [images, rootdir] }
users:
  - { userid: bob@pve, password: pw }
acl:
  - { path: /, roles: [PVEVMAdmin], users: [bob@pve] }
vms:
  - { vmid: 150, name: taken }
";

const SOURCE: &str = r"
nodes:
  - { name: src, bridges: [vmbr0] }
storages:
  - { id: local, type: dir, path: /var/lib/vz, content: [iso, images] }
  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve, content: [images, rootdir] }
vms:
  - vmid: 100
    config: { scsi0: 'local-lvm:vm-100-disk-0,size=4G', ide2: 'local:iso/d.iso,media=cdrom', net0: 'virtio=BC:24:11:00:00:01,bridge=vmbr0', unused0: 'local-lvm:vm-100-disk-1' }
  - vmid: 101
    status: running
    config: { scsi0: 'local-lvm:vm-101-disk-0,size=8G', hostpci0: '0000:01:00.0' }
  - vmid: 102
    config: { scsi0: 'local-lvm:vm-102-disk-0,size=1G' }
    snapshots:
      s1: { scsi0: 'local-lvm:vm-102-disk-0,size=1G' }
containers:
  - vmid: 200
    status: running
    config: { rootfs: 'local-lvm:vm-200-disk-0,size=2G', mp0: '/srv/data,mp=/data', net0: 'name=eth0,bridge=vmbr0,type=veth' }
";

fn sign(user: &str, path: &str) -> String {
    format!("T({user}:{path})")
}

fn open(
    w: &mut World,
    kind: GuestType,
    vmid: u32,
    storages: &[&str],
    bridges: &[&str],
) -> Result<(String, String), Error> {
    let now_ms = w.now_ms;
    w.c.mtunnel_open(OpenRequest {
        kind,
        node: "dst".into(),
        vmid,
        who: root(),
        storages: storages.iter().map(|s| (*s).to_string()).collect(),
        bridges: bridges.iter().map(|s| (*s).to_string()).collect(),
        now_ms,
    })
}

fn cmd(w: &mut World, socket: &str, c: Value) -> Value {
    let now_ms = w.now_ms;
    w.c.mtunnel_command(socket, &c.to_string(), now_ms, &sign)
        .json
}

#[rstest]
#[case(
    "host=10.0.0.2,apitoken=PVEAPIToken=root@pam!m=s",
    ("10.0.0.2", 8006, None, "PVEAPIToken=root@pam!m=s")
)]
#[case(
    "host=pve2,port=8443,apitoken=root@pam!m=s,fingerprint=ab:cd",
    ("pve2", 8443, Some("AB:CD"), "PVEAPIToken=root@pam!m=s")
)]
fn an_endpoint_reads_as_pve_reads_it(
    #[case] value: &str,
    #[case] want: (&str, u16, Option<&str>, &str),
) {
    let e = Endpoint::parse(value).expect("valid");
    assert_eq!(
        (
            e.host.as_str(),
            e.port,
            e.fingerprint.as_deref(),
            e.authorization().as_str()
        ),
        want
    );
}

#[test]
fn an_endpoint_without_a_token_is_refused() {
    assert_eq!(
        refused(Endpoint::parse("host=x")),
        (
            400,
            "target-endpoint: invalid format - property 'apitoken' is missing".into()
        )
    );
}

#[rstest]
#[case(Error::permission("/", &["Sys.Incoming"]), "403 Permission check failed (/, Sys.Incoming)\n")]
#[case(Error::failed("boom"), "boom\n")]
#[case(
    Error::invalid("vmid", "taken"),
    "400 Parameter verification failed.\nvmid: taken\n"
)]
fn errors_print_as_perl_exceptions_do(#[case] e: Error, #[case] want: &str) {
    assert_eq!(exception_text(&e), want);
}

#[test]
fn a_config_file_reads_back_to_its_main_section() {
    let text = "#web%3A server\n#second\ncores: 2\nnet0: virtio=BC:24:11:00:00:01,bridge=vmbr0\n\n[snap]\ncores: 1\n";
    assert_eq!(
        parse_config_text(text),
        map(&[
            ("cores", "2"),
            ("net0", "virtio=BC:24:11:00:00:01,bridge=vmbr0"),
            ("description", "web: server\nsecond"),
        ])
    );
}

#[test]
fn mapped_bridges_are_listed_by_target() {
    let m = vec![
        ("net1".to_string(), "vmbr0".to_string(), "vmbr1".to_string()),
        ("net0".to_string(), "vmbr2".to_string(), "vmbr0".to_string()),
    ];
    assert_eq!(
        mapped_lines(&m),
        [
            "mapped: net0 from vmbr2 to vmbr0",
            "mapped: net1 from vmbr0 to vmbr1"
        ]
    );
}

#[rstest]
#[case(&["nope"], &[], (500, "storage 'nope' does not exist".to_string()))]
#[case(&["local"], &[], (500, "storage 'local' does not support vm images".to_string()))]
#[case(&["tank"], &["vmbr9"], (500, "bridge 'vmbr9' does not exist".to_string()))]
fn mtunnel_checks_storages_and_bridges(
    #[case] storages: &[&str],
    #[case] bridges: &[&str],
    #[case] want: (u16, String),
) {
    let mut w = World::from_yaml(TARGET);
    assert_eq!(
        refused(open(&mut w, GuestType::Qemu, 300, storages, bridges)),
        want
    );
    assert!(w.c.guests.get(&300).is_none());
}

#[test]
fn mtunnel_refuses_a_taken_vmid() {
    let mut w = World::from_yaml(TARGET);
    assert_eq!(
        refused(open(&mut w, GuestType::Lxc, 150, &[], &[])),
        (
            400,
            "vmid: unable to create empty CT config - VM 150 already exists on node 'dst'".into()
        )
    );
}

#[test]
fn a_tunnel_nobody_takes_ends_after_300_seconds() {
    let mut w = World::from_yaml(TARGET);
    let (upid, socket) = open(&mut w, GuestType::Qemu, 300, &["tank"], &["vmbr1"]).expect("opens");
    assert_eq!(socket, "/run/qemu-server/300.mtunnel");
    assert_eq!(w.conf(300, "lock").as_deref(), Some("create"));
    w.tick(299_000);
    assert_eq!(w.exit(&upid), "running");
    w.tick(1_000);
    assert_eq!(w.exit(&upid), "Exiting mtunnel");
    assert!(w.c.guests.get(&300).is_none());
    assert!(w.c.tunnels().is_empty());
}

#[test]
fn a_session_imports_a_disk_takes_a_config_and_quits() {
    let mut w = World::from_yaml(TARGET);
    let (upid, socket) = open(&mut w, GuestType::Qemu, 300, &[], &[]).expect("opens");
    let now = w.now_ms;
    assert_eq!(
        w.c.mtunnel_connect(&socket, now),
        Some(crate::model::mtunnel::Connection::Control)
    );
    assert_eq!(w.c.mtunnel_connect(&socket, now), None, "one connection");
    assert_eq!(
        cmd(&mut w, &socket, json!({"cmd": "version"})),
        json!({"api": 2, "age": 0, "success": true})
    );
    // The config must carry the lock the session expects.
    assert_eq!(
        cmd(
            &mut w,
            &socket,
            json!({"cmd": "disk-import", "volname": "vm-100-disk-0.qcow2",
            "format": "qcow2", "export_formats": "qcow2+size", "storage": "tank"})
        ),
        json!({"success": false, "msg": "failed to handle 'disk-import' command - unsupported format 'qcow2' for storage type lvmthin\n"})
    );
    assert_eq!(
        cmd(
            &mut w,
            &socket,
            json!({"cmd": "disk-import", "volname": "vm-100-disk-0",
            "format": "raw", "export_formats": "zfs", "storage": "tank"})
        ),
        json!({"success": false, "msg": "failed to handle 'disk-import' command - no matching import/export format found for storage 'tank'\n"})
    );
    let r = cmd(
        &mut w,
        &socket,
        json!({"cmd": "disk-import", "volname": "vm-300-disk-0.qcow2",
        "format": "qcow2", "export_formats": "qcow2+size", "storage": "files",
        "with_snapshots": 1, "allow_rename": "1"}),
    );
    assert_eq!(r["socket"], "/run/qemu-server/300.storage");
    assert_eq!(r["format"], "qcow2+size");
    let t = cmd(
        &mut w,
        &socket,
        json!({"cmd": "ticket", "path": "/run/qemu-server/300.storage"}),
    );
    assert_eq!(
        t,
        json!({"ticket": "T(root@pam:/run/qemu-server/300.storage)", "success": true})
    );
    assert_eq!(
        w.c.mtunnel_connect("/run/qemu-server/300.storage", now),
        Some(crate::model::mtunnel::Connection::Data)
    );
    w.c.mtunnel_data(
        "/run/qemu-server/300.storage",
        &(1u64 << 30).to_le_bytes(),
        now,
    );
    let q = cmd(&mut w, &socket, json!({"cmd": "query-disk-import"}));
    assert_eq!(q["status"], "pending");
    assert!(
        q["msg"]
            .as_str()
            .is_some_and(|m| m
                .starts_with("Formatting '/srv/files/images/300/vm-300-disk-0.qcow2', fmt=qcow2")),
        "{q}"
    );
    assert_eq!(
        cmd(&mut w, &socket, json!({"cmd": "query-disk-import"})),
        json!({"status": "complete", "volid": "files:300/vm-300-disk-0.qcow2", "success": true})
    );
    assert_eq!(
        w.c.storage
            .volume("files:300/vm-300-disk-0.qcow2", "dst")
            .map(|v| v.size),
        Some(1 << 30)
    );
    // A config refused leaves the lock `create`; one taken locks `migrate`.
    assert_eq!(
        cmd(
            &mut w,
            &socket,
            json!({"cmd": "config", "conf": "bogus: 1\n"})
        ),
        json!({"success": false, "msg": "failed to handle 'config' command - 400 Parameter verification failed.\nbogus: property is not defined in schema and the schema does not allow additional properties\n"})
    );
    assert_eq!(w.conf(300, "lock").as_deref(), Some("create"));
    let conf = "cores: 2\nlock: migrate\nscsi0: files:300/vm-300-disk-0.qcow2,size=1G\nvmgenid: 11111111-2222-3333-4444-555555555555\n";
    assert_eq!(
        cmd(&mut w, &socket, json!({"cmd": "config", "conf": conf})),
        json!({"success": true})
    );
    assert_eq!(w.conf(300, "lock").as_deref(), Some("migrate"));
    assert_eq!(
        w.conf(300, "vmgenid").as_deref(),
        Some("11111111-2222-3333-4444-555555555555")
    );
    // `quit` with `cleanup` removes the guest and what the tunnel made.
    assert_eq!(
        cmd(&mut w, &socket, json!({"cmd": "quit", "cleanup": 1})),
        json!({"success": true})
    );
    assert!(w.c.guests.get(&300).is_none());
    assert!(
        w.c.storage
            .volume("files:300/vm-300-disk-0.qcow2", "dst")
            .is_none()
    );
    w.c.mtunnel_closed(&socket, now);
    assert_eq!(w.exit(&upid), "OK");
    let log = &w.task(&upid).log;
    assert!(
        log.contains(
            &"freeing volume 'files:300/vm-300-disk-0.qcow2' as part of cleanup".to_string()
        ),
        "{log:#?}"
    );
    assert_eq!(log.last().map(String::as_str), Some("TASK OK"));
}

#[test]
fn a_session_checks_its_user_for_the_config_and_the_storages() {
    let mut w = World::from_yaml(TARGET);
    let now_ms = w.now_ms;
    let (_, socket) =
        w.c.mtunnel_open(OpenRequest {
            kind: GuestType::Lxc,
            node: "dst".into(),
            vmid: 310,
            who: user("bob@pve"),
            storages: vec![],
            bridges: vec![],
            now_ms,
        })
        .expect("opens");
    w.c.mtunnel_connect(&socket, now_ms);
    // bob has no Sys.Modify on / for a privileged container, and no
    // room on the storages.
    assert_eq!(
        cmd(
            &mut w,
            &socket,
            json!({"cmd": "config", "conf": "hostname: box\n"})
        ),
        json!({"success": false, "msg": "failed to handle 'config' command - 403 Permission check failed (/, Sys.Modify)\n"})
    );
    assert_eq!(
        cmd(
            &mut w,
            &socket,
            json!({"cmd": "disk-import", "volname": "vm-200-disk-0",
            "format": "raw", "export_formats": "raw+size", "storage": "tank"})
        ),
        json!({"success": false, "msg": "failed to handle 'disk-import' command - 403 Permission check failed (/storage/tank, Datastore.AllocateSpace)\n"})
    );
    assert_eq!(
        cmd(
            &mut w,
            &socket,
            json!({"cmd": "config", "conf": "hostname: box\nunprivileged: 1\n"})
        ),
        json!({"success": true})
    );
    let ct = w.c.guests.ct_by_id(310).expect("container");
    assert_eq!(ct.lock(), Some("migrate"));
    assert_eq!(
        ct.config().get("unprivileged").map(String::as_str),
        Some("1")
    );
}

fn outgoing(kind: GuestType, vmid: u32, storagemap: &str, bridgemap: &str) -> Outgoing {
    Outgoing {
        kind,
        node: "src".into(),
        vmid,
        target_vmid: vmid + 200,
        target_node: "dst".into(),
        host: "198.51.100.2".into(),
        online: false,
        restart: true,
        timeout: 180,
        delete: false,
        storagemap: StorageMap::parse(storagemap).expect("map"),
        bridgemap: StorageMap::parse(bridgemap).expect("map"),
        bwlimit: None,
        who: root(),
    }
}

#[rstest]
#[case(GuestType::Qemu, 101, "can't migrate running VM without --online")]
#[case(GuestType::Lxc, 200, "cannot migrate local bind mount point 'mp0'")]
fn prepare_refuses_what_pve_refuses(
    #[case] kind: GuestType,
    #[case] vmid: u32,
    #[case] want: &str,
) {
    let w = World::from_yaml(SOURCE);
    let job = outgoing(kind, vmid, "local-lvm:tank", "vmbr0:vmbr1");
    assert_eq!(w.c.remote_prepare(&job).expect_err("refused"), want);
}

#[test]
fn a_vm_with_host_devices_stays() {
    let w = World::from_yaml(SOURCE);
    let mut job = outgoing(GuestType::Qemu, 101, "tank", "1");
    job.online = true;
    assert_eq!(
        w.c.remote_prepare(&job).expect_err("refused"),
        "can't migrate VM which uses local devices: hostpci0"
    );
}

#[test]
fn prepare_names_the_target_storages_and_bridges() {
    let w = World::from_yaml(SOURCE);
    let job = outgoing(GuestType::Qemu, 100, "local-lvm:tank,files", "vmbr0:vmbr1");
    let p = w.c.remote_prepare(&job).expect("prepared");
    assert!(!p.running);
    assert_eq!(p.storages, ["files", "tank"]);
    assert_eq!(p.bridges, ["vmbr1"]);
}

#[test]
fn the_scan_refuses_an_iso_and_snapshots() {
    let w = World::from_yaml(SOURCE);
    let job = outgoing(GuestType::Qemu, 100, "tank", "1");
    let scan = w.c.remote_scan(&job, false);
    assert_eq!(
        scan.lines,
        [
            "found local disk 'local-lvm:vm-100-disk-0' (attached)",
            "found local disk 'local-lvm:vm-100-disk-1' (unused)",
            "found local disk 'local:iso/d.iso' (attached)",
            "can't migrate local disk 'local:iso/d.iso': local cdrom image",
        ]
    );
    assert_eq!(
        scan.error.as_deref(),
        Some("Problem found while scanning volumes - can't migrate VM - check log")
    );
    assert_eq!(scan.bwlimits.len(), 3);
    let job = outgoing(GuestType::Qemu, 102, "tank", "1");
    let scan = w.c.remote_scan(&job, false);
    assert_eq!(
        scan.lines,
        [
            "found local disk 'local-lvm:vm-102-disk-0' (attached)",
            "can't migrate local disk 'local-lvm:vm-102-disk-0': remote migration with snapshots not supported yet",
        ]
    );
}

#[test]
fn a_volume_goes_under_the_targets_vmid() {
    let w = World::from_yaml(SOURCE);
    let job = outgoing(GuestType::Qemu, 100, "tank", "1");
    let vol = crate::model::mtunnel::LocalVolume {
        volid: "local-lvm:vm-100-disk-0".into(),
        sid: "local-lvm".into(),
        targetsid: "tank".into(),
        size: 4 << 30,
        format: "raw".into(),
        drivename: Some("scsi0".into()),
        online: false,
    };
    let e = w.c.remote_export(&job, &vol).expect("exports");
    assert_eq!(e.volname, "vm-300-disk-0");
    assert_eq!(e.export_formats, ["raw+size"]);
    assert!(!e.with_snapshots && !e.migration_snapshot);
}

#[test]
fn the_source_keeps_a_migrated_guest_locked_unless_deleted() {
    let mut w = World::from_yaml(SOURCE);
    let mut job = outgoing(GuestType::Qemu, 100, "tank", "1");
    w.c.remote_lock(&job);
    assert!(w.c.remote_finish(&job).is_empty());
    assert_eq!(w.conf(100, "lock").as_deref(), Some("migrate"));
    job.delete = true;
    assert_eq!(
        w.c.remote_finish(&job),
        [
            "  Logical volume \"vm-100-disk-0\" successfully removed.",
            "  Logical volume \"vm-100-disk-1\" successfully removed.",
        ]
    );
    assert!(w.c.guests.get(&100).is_none());
    // An aborted migration unlocks; a container stopped for it starts
    // again.
    let job = outgoing(GuestType::Lxc, 200, "tank", "1");
    w.c.remote_shutdown(200);
    w.c.remote_lock(&job);
    w.c.remote_abort(&job, true, T0 * 1000);
    let ct = w.c.guests.ct_by_id(200).expect("container");
    assert!(ct.running());
    assert_eq!(ct.lock(), None);
}

#[test]
fn remote_migrate_refuses_ha_guests_and_running_containers() {
    let mut w = World::from_yaml(SOURCE);
    assert_eq!(
        refused(w.c.remote_migrate_check(GuestType::Lxc, "src", 200, false, false)),
        (
            500,
            "can't migrate running container without --online or --restart".into()
        )
    );
    assert_eq!(
        refusal(
            &w.c.remote_migrate_check(GuestType::Qemu, "src", 999, false, false)
                .expect_err("missing")
        ),
        (
            500,
            "Configuration file 'nodes/src/qemu-server/999.conf' does not exist".into()
        )
    );
    w.c.guests
        .get_mut(&102)
        .expect("vm")
        .config
        .insert("lock".into(), "backup".into());
    assert_eq!(
        refused(w.c.remote_migrate_check(GuestType::Qemu, "src", 102, false, false)),
        (500, "VM is locked (backup)".into())
    );
}
