//! Creating VMs: refusals, `lock: create`, disks, MACs, identities and `start`.

use super::*;

// ---------------------------------------------------------------------
// Create

#[rstest]
fn create_of_an_existing_vmid_names_the_node(mut lab: World) {
    let r = lab.c.vm_ops().create_vm(
        CreateRequest {
            vmid: 100,
            node: "pve".into(),
            ..CreateRequest::default()
        },
        &mut rq(),
    );
    assert_eq!(
        refused(r),
        (
            500,
            "unable to create VM 100 - VM 100 already exists on node 'pve'".into()
        )
    );
}

#[rstest]
#[case(&[("scsi0", "nope:8")], None, 500, "storage 'nope' does not exist")]
#[case(&[("scsi0", "local:8")], None, 400, "storage: storage 'local' does not support vm images")]
#[case(&[("scsi0", "8")], None, 500, "no storage ID specified (and no default storage)")]
#[case(&[("scsi0", "8")], Some("local"), 400, "storage: storage 'local' does not support vm images")]
#[case(
    &[("scsi0", "local-lvm:8,import-from=local:iso/x.qcow2")],
    None,
    400,
    "scsi0: 'import-from' requires special syntax - use <storage ID>:0,import-from=<source>"
)]
fn create_refuses_bad_storage(
    mut fresh: World,
    #[case] conf: &[(&str, &str)],
    #[case] storage: Option<&str>,
    #[case] code: u16,
    #[case] msg: &str,
) {
    let r = fresh.c.vm_ops().create_vm(
        CreateRequest {
            vmid: 100,
            node: "pve".into(),
            config: map(conf),
            storage: storage.map(str::to_string),
            start: None,
            pool: None,
        },
        &mut rq(),
    );
    assert_eq!(refused(r), (code, msg.to_string()));
    assert!(!fresh.c.guests.contains_key(&100), "nothing is left behind");
}

#[rstest]
fn create_holds_lock_create_until_the_task_ends(mut fresh: World) {
    let worker = fresh
        .c
        .vm_ops()
        .create_vm(
            CreateRequest {
                vmid: 100,
                node: "pve".into(),
                config: map(&[("scsi0", "local-lvm:8")]),
                ..CreateRequest::default()
            },
            &mut rq(),
        )
        .expect("accepted");
    let upid = fresh.run_as("pve", worker, "root@pam", 5_000);
    assert_eq!(fresh.conf(100, "lock").as_deref(), Some("create"));
    assert_eq!(fresh.exit(&upid), "running");
    fresh.tick(5_000);
    assert_eq!(fresh.exit(&upid), "OK");
    assert_eq!(fresh.conf(100, "lock"), None);
}

#[rstest]
fn create_allocates_disks_and_prints_them(mut fresh: World) {
    let st = create(
        &mut fresh,
        100,
        &[("scsi0", "local-lvm:8"), ("virtio1", "local-lvm:2")],
        None,
    );
    assert_eq!(st, "OK");
    assert_eq!(
        fresh.conf(100, "scsi0").as_deref(),
        Some("local-lvm:vm-100-disk-0,size=8G")
    );
    assert_eq!(
        fresh.conf(100, "virtio1").as_deref(),
        Some("local-lvm:vm-100-disk-1,size=2G")
    );
    let vol = fresh
        .c
        .storage
        .volume("local-lvm:vm-100-disk-0", "pve")
        .expect("volume allocated");
    assert_eq!(vol.size, 8 << 30);
    assert_eq!(vol.vmid, 100);
}

#[rstest]
fn create_uses_the_default_storage_for_a_bare_size(mut fresh: World) {
    assert_eq!(
        create(&mut fresh, 100, &[("sata0", "1")], Some("local-lvm")),
        "OK"
    );
    assert_eq!(
        fresh.conf(100, "sata0").as_deref(),
        Some("local-lvm:vm-100-disk-0,size=1G")
    );
}

#[rstest]
fn create_generates_a_mac_for_a_new_nic(mut fresh: World) {
    assert_eq!(
        create(&mut fresh, 100, &[("net0", "virtio,bridge=vmbr0")], None),
        "OK"
    );
    let net = fresh.conf(100, "net0").expect("net0");
    let mac = net
        .strip_prefix("virtio=")
        .and_then(|r| r.split(',').next())
        .expect("model=mac first");
    assert!(mac.starts_with("BC:24:11:"), "{net}");
    assert_eq!(mac.len(), 17, "{net}");
    assert!(net.ends_with(",bridge=vmbr0"), "{net}");
}

#[rstest]
fn create_writes_meta_smbios_vmgenid_and_boot(mut fresh: World) {
    create(
        &mut fresh,
        100,
        &[("scsi0", "local-lvm:1"), ("net0", "virtio,bridge=vmbr0")],
        None,
    );
    let meta = fresh.conf(100, "meta").expect("meta");
    assert!(meta.starts_with("creation-qemu="), "{meta}");
    assert!(meta.ends_with(&format!(",ctime={}", super::T0)), "{meta}");
    assert!(
        fresh
            .conf(100, "smbios1")
            .expect("smbios1")
            .starts_with("uuid=")
    );
    assert_eq!(fresh.conf(100, "vmgenid").map(|v| v.len()), Some(36));
    assert_eq!(fresh.conf(100, "boot").as_deref(), Some("order=scsi0;net0"));
}

#[rstest]
fn create_pins_the_machine_of_a_windows_guest(mut fresh: World) {
    create(&mut fresh, 100, &[("ostype", "win11")], None);
    assert_eq!(
        fresh.conf(100, "machine").as_deref(),
        Some("pc-i440fx-10.1+pve0")
    );
}

#[rstest]
fn create_turns_cdrom_into_ide2(mut fresh: World) {
    create(&mut fresh, 100, &[("cdrom", "local:iso/x.iso")], None);
    assert_eq!(
        fresh.conf(100, "ide2").as_deref(),
        Some("local:iso/x.iso,media=cdrom")
    );
    assert_eq!(fresh.conf(100, "cdrom"), None);
}

#[rstest]
fn a_create_that_fails_allocating_leaves_no_vm(mut fresh: World) {
    // A thick LVM of 1 GiB cannot hold 8 GiB.
    let s = fresh.c.storage.cfg()[1].storage.clone();
    let s = fresh.c.storage.find_mut(&s).expect("the second storage");
    s.kind = "lvm".into();
    s.total = 1 << 30;
    let st = create(&mut fresh, 100, &[("scsi0", "local-lvm:8")], None);
    assert!(
        st.starts_with("unable to create VM 100 - not enough free space"),
        "{st}"
    );
    assert!(!fresh.c.guests.contains_key(&100));
}

#[rstest]
fn create_with_start_starts_a_follow_up_task(mut fresh: World) {
    let worker = fresh
        .c
        .vm_ops()
        .create_vm(
            CreateRequest {
                vmid: 100,
                node: "pve".into(),
                config: map(&[("scsi0", "local-lvm:1")]),
                start: Some(("root@pam".into(), 0)),
                ..CreateRequest::default()
            },
            &mut rq(),
        )
        .expect("accepted");
    fresh.run("pve", worker);
    let kinds: Vec<&str> = fresh.c.tasks.iter().map(|t| t.upid.kind.as_str()).collect();
    assert_eq!(kinds, ["qmcreate", "qmstart"]);
    fresh.tick(1);
    assert!(fresh.c.guests[&100].running());
}
