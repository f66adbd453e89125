//! The permission checks guest handlers make themselves: creating,
//! restoring, cloning and reconfiguring a VM, a container's options,
//! access to volumes and bridges.

use std::collections::BTreeMap;

use rstest::{fixture, rstest};

use crate::model::PveVersion;

use super::{World, map, refused, root, user};
use crate::model::guest_perm::check_volume_access;
use crate::model::qemu::perm::{CreatePerm, OptionPriv, option_priv};

/// One node with VM 100 (ann's to configure), a pool `web` nobody has
/// rights on, a pool `team` where ann may allocate, and users with
/// narrow grants.
const PERMS: &str = r#"
nodes:
  - { name: pve, bridges: [vmbr0, vmbr1] }
storages:
  - { id: local, type: dir, path: /var/lib/vz, content: [iso, vztmpl, backup, snippets, images] }
  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve }
roles:
  - { roleid: Alloc, privs: [VM.Allocate] }
users:
  - userid: nobody@pve
  - userid: aud@pve
  - userid: ann@pve
  - userid: bob@pve
pools:
  - { poolid: web }
  - { poolid: team }
acl:
  - { path: /vms/4242, roles: [PVEAuditor], users: [aud@pve] }
  - { path: /vms/4242, roles: [PVEVMAdmin], users: [ann@pve] }
  - { path: /vms/100, roles: [PVEVMAdmin], users: [ann@pve] }
  - { path: /pool/team, roles: [PVEVMAdmin], users: [ann@pve] }
  - { path: /vms/4243, roles: [Alloc], users: [bob@pve] }
  - { path: /storage/local-lvm, roles: [PVEDatastoreUser], users: [bob@pve] }
vms:
  - { vmid: 100, name: src, config: { scsi0: 'local-lvm:vm-100-disk-0,size=4G', net0: 'virtio=BC:24:11:00:00:01,bridge=vmbr0' } }
"#;

#[fixture]
fn w() -> World {
    World::from_yaml(PERMS)
}

fn grant(w: &mut World, path: &str, role: &str, who: &str) {
    w.c.access.grant(path, role, who);
}

fn create(
    w: &World,
    who: &str,
    vmid: u32,
    config: &BTreeMap<String, String>,
    pool: Option<&str>,
    archive: Option<&str>,
) -> Result<(), crate::model::Error> {
    let req = CreatePerm {
        vmid,
        node: "pve",
        config,
        storage: None,
        pool,
        start: false,
        ha_managed: false,
        archive,
        force: false,
        extraction_storage: None,
    };
    let who = if who == "root@pam" { root() } else { user(who) };
    w.c.perms().check_create_vm_perm(&who, &req)
}

const DENIED: (u16, &str) = (403, "Permission check failed");

fn denied(what: &str) -> (u16, String) {
    (403, format!("Permission check failed ({what})"))
}

#[rstest]
#[case::no_acl("nobody@pve", None)]
#[case::auditor("aud@pve", None)]
#[case::pool_without_rights("aud@pve", Some("web"))]
fn creating_needs_vm_allocate(w: World, #[case] who: &str, #[case] pool: Option<&str>) {
    let conf = map(&[("scsi0", "local-lvm:1"), ("net0", "virtio,bridge=vmbr0")]);
    let (code, msg) = refused(create(&w, who, 4242, &conf, pool, None));
    assert_eq!((code, msg.as_str()), DENIED);
}

#[rstest]
fn a_missing_pool_is_named(w: World) {
    assert_eq!(
        refused(create(
            &w,
            "ann@pve",
            4242,
            &BTreeMap::new(),
            Some("nope"),
            None
        )),
        denied("pool 'nope' does not exist")
    );
}

#[rstest]
fn vm_allocate_on_the_pool_will_do(w: World) {
    assert!(
        create(
            &w,
            "ann@pve",
            5000,
            &map(&[("cores", "2")]),
            Some("team"),
            None
        )
        .is_ok()
    );
    assert_eq!(
        refused(create(
            &w,
            "ann@pve",
            5000,
            &map(&[("cores", "2")]),
            None,
            None
        )),
        (DENIED.0, DENIED.1.to_string())
    );
}

#[rstest]
#[case::new_disk(&[("scsi0", "local-lvm:1")], "/storage/local-lvm, Datastore.AllocateSpace")]
#[case::default_storage_size(&[("virtio0", "local:2")], "/storage/local, Datastore.AllocateSpace")]
#[case::bridge(&[("net0", "virtio,bridge=vmbr0")], "/sdn/zones/localnetwork/vmbr0, SDN.Use")]
#[case::vlan(&[("net0", "virtio,bridge=vmbr0,tag=5")], "/sdn/zones/localnetwork/vmbr0/5, SDN.Use")]
#[case::trunks(&[("net0", "virtio,bridge=vmbr1,trunks=7;9")], "/sdn/zones/localnetwork/vmbr1/7, SDN.Use")]
#[case::iso(&[("ide2", "local:iso/d.iso,media=cdrom")], "/storage/local, Datastore.AllocateSpace|Datastore.Audit")]
#[case::host_cdrom(&[("cdrom", "cdrom")], "/, Sys.Console")]
#[case::other_vms_disk(&[("scsi1", "local-lvm:vm-100-disk-0")], "/storage/local-lvm, Datastore.Audit")]
#[case::import_from(&[("scsi0", "local-lvm:0,import-from=local-lvm:vm-100-disk-0")], "/storage/local-lvm, Datastore.AllocateSpace")]
#[case::vmstate_storage(&[("vmstatestorage", "local")], "/storage/local, Datastore.AllocateSpace")]
#[case::usb_mapping(&[("usb0", "mapping=stick")], "/mapping/usb/stick, Mapping.Use")]
#[case::pci_mapping(&[("hostpci0", "mapping=gpu")], "/mapping/pci/gpu, Mapping.Use")]
#[case::hwrng(&[("rng0", "source=/dev/hwrng")], "/mapping/hwrng, Mapping.Use")]
#[case::custom_cpu(&[("cpu", "custom-fast")], "/nodes, Sys.Audit")]
fn each_resource_needs_its_privilege(w: World, #[case] conf: &[(&str, &str)], #[case] what: &str) {
    // ann may do anything to VM 4242, nothing on storages, bridges or
    // mappings.
    assert_eq!(
        refused(create(&w, "ann@pve", 4242, &map(conf), None, None)),
        denied(what)
    );
    assert!(create(&w, "root@pam", 4242, &map(conf), None, None).is_ok());
}

#[rstest]
#[case(PveVersion::V8_4, "/nodes, Sys.Audit")]
#[case(PveVersion::V9_1, "/nodes, Sys.Audit")]
#[case(PveVersion::V9_2, "/mapping/cpu/fast, Mapping.Use")]
fn a_custom_cpu_model_needs_what_the_release_asks(#[case] v: PveVersion, #[case] what: &str) {
    let mut w = World::from_yaml_v(PERMS, v);
    let conf = map(&[("cpu", "custom-fast")]);
    assert_eq!(
        refused(create(&w, "ann@pve", 4242, &conf, None, None)),
        denied(what)
    );
    // Mapping.Use on the one model lets a 9.2 user through.
    if v == PveVersion::V9_2 {
        grant(&mut w, "/mapping/cpu/fast", "PVEMappingUser", "ann@pve");
    } else {
        grant(&mut w, "/nodes", "PVEAuditor", "ann@pve");
    }
    assert!(create(&w, "ann@pve", 4242, &conf, None, None).is_ok());
}

#[rstest]
fn privileges_on_the_resources_let_it_through(mut w: World) {
    grant(&mut w, "/storage", "PVEDatastoreUser", "ann@pve");
    grant(
        &mut w,
        "/sdn/zones/localnetwork/vmbr0",
        "PVESDNUser",
        "ann@pve",
    );
    let conf = map(&[
        ("scsi0", "local-lvm:1"),
        ("ide2", "local:iso/d.iso,media=cdrom"),
        ("net0", "virtio,bridge=vmbr0,tag=5"),
        ("net1", "virtio,bridge=vmbr0"),
    ]);
    assert!(create(&w, "ann@pve", 4242, &conf, None, None).is_ok());
    // Only on vmbr0: a device on vmbr1 is refused.
    let other = map(&[("net0", "virtio,bridge=vmbr1")]);
    assert_eq!(
        refused(create(&w, "ann@pve", 4242, &other, None, None)),
        denied("/sdn/zones/localnetwork/vmbr1, SDN.Use")
    );
}

#[rstest]
#[case::cpu("cores", "VM.Config.CPU")]
#[case::memory("memory", "VM.Config.Memory")]
#[case::hwtype("vga", "VM.Config.HWType")]
#[case::options("name", "VM.Config.Options")]
#[case::network("net0", "VM.Config.Network")]
#[case::disk("boot", "VM.Config.Disk")]
#[case::cloudinit("ciuser", "VM.Config.Cloudinit|VM.Config.Network")]
fn options_need_the_privilege_of_their_class(w: World, #[case] opt: &str, #[case] privilege: &str) {
    // bob holds VM.Allocate alone on 4243 (and room on local-lvm).
    let value = if opt == "net0" { "virtio" } else { "x" };
    assert_eq!(
        refused(create(
            &w,
            "bob@pve",
            4243,
            &map(&[(opt, value)]),
            None,
            None
        )),
        denied(&format!("/vms/4243, {privilege}"))
    );
}

#[rstest]
#[case("args", "only root can set 'args' config")]
#[case("hookscript", "only root can set 'hookscript' config")]
#[case("serial0", "only root can set 'serial0' config for real devices")]
#[case("usb0", "only root can set 'usb0' config for real devices")]
#[case(
    "hostpci0",
    "only root can set 'hostpci0' config for non-mapped devices"
)]
fn host_options_are_root_pams(w: World, #[case] opt: &str, #[case] msg: &str) {
    let value = match opt {
        "serial0" => "/dev/ttyS0",
        "usb0" => "host=1234:5678",
        "hostpci0" => "0000:01:00.0",
        _ => "x",
    };
    let conf = map(&[(opt, value)]);
    assert_eq!(
        refused(create(&w, "ann@pve", 4242, &conf, None, None)),
        (500, msg.to_string())
    );
    assert!(create(&w, "root@pam", 4242, &conf, None, None).is_ok());
}

#[rstest]
fn option_classes() {
    assert_eq!(option_priv("startup"), OptionPriv::Options);
    assert_eq!(option_priv("scsi3"), OptionPriv::Elsewhere);
    assert_eq!(option_priv("tags"), OptionPriv::Elsewhere);
    assert_eq!(option_priv("numa1"), OptionPriv::All(&["VM.Config.CPU"]));
    assert_eq!(
        option_priv("vmstate"),
        OptionPriv::All(&["VM.Config.Disk", "VM.PowerMgmt"])
    );
    assert_eq!(option_priv("affinity"), OptionPriv::RootOnly);
}

#[rstest]
fn startup_needs_sys_modify(w: World) {
    assert_eq!(
        refused(create(
            &w,
            "ann@pve",
            4242,
            &map(&[("startup", "order=1")]),
            None,
            None
        )),
        denied("/, Sys.Modify")
    );
}

#[rstest]
fn restoring_another_vms_backup(mut w: World) {
    let archive = "local:backup/vzdump-qemu-100-2026_01_02-03_04_05.vma.zst";
    // Allocating 4243 is not enough to read VM 100's backup.
    assert_eq!(
        refused(create(
            &w,
            "bob@pve",
            4243,
            &BTreeMap::new(),
            None,
            Some(archive)
        )),
        denied("/storage/local, Datastore.AllocateSpace")
    );
    grant(&mut w, "/storage/local", "PVEDatastoreUser", "bob@pve");
    assert_eq!(
        refused(create(
            &w,
            "bob@pve",
            4243,
            &BTreeMap::new(),
            None,
            Some(archive)
        )),
        denied("/vms/100, VM.Backup")
    );
    // The VM's own backup is its own.
    let own = "local:backup/vzdump-qemu-4243-2026_01_02-03_04_05.vma.zst";
    assert!(create(&w, "bob@pve", 4243, &BTreeMap::new(), None, Some(own)).is_ok());
    // A backup is what a restore reads.
    assert_eq!(
        refused(create(
            &w,
            "bob@pve",
            4243,
            &BTreeMap::new(),
            None,
            Some("local:iso/d.iso")
        )),
        (
            500,
            "unable to use volume local:iso/d.iso - content type needs to be 'backup'".into()
        )
    );
    // Disks come from the archive.
    assert_eq!(
        refused(create(
            &w,
            "root@pam",
            4243,
            &map(&[("scsi0", "local-lvm:1")]),
            None,
            Some(own)
        )),
        (400, "scsi0: option conflicts with option 'archive'".into())
    );
}

#[rstest]
#[case::allocate(
    "local",
    "backup/vzdump-qemu-100-2026_01_02-03_04_05.vma.zst",
    "PVEDatastoreAdmin",
    None
)]
#[case::iso_audit("local", "iso/d.iso", "PVEAuditor", None)]
#[case::iso("local", "iso/d.iso", "NoAccess", Some((403, "Permission check failed (/storage/local, Datastore.AllocateSpace|Datastore.Audit)")))]
#[case::backup("local", "backup/vzdump-qemu-100-2026_01_02-03_04_05.vma.zst", "PVEDatastoreUser", Some((403, "Permission check failed (/vms/100, VM.Backup)")))]
#[case::image("local-lvm", "vm-100-disk-0", "PVEAuditor", Some((403, "Permission check failed (/vms/100, VM.Config.Disk)")))]
#[case::snippet("local", "snippets/s.yaml", "PVEDatastoreUser", Some((500, "missing privileges to access local:snippets/s.yaml")))]
fn volume_access(
    mut w: World,
    #[case] sid: &str,
    #[case] name: &str,
    #[case] role: &str,
    #[case] want: Option<(u16, &str)>,
) {
    grant(&mut w, &format!("/storage/{sid}"), role, "nobody@pve");
    let got = check_volume_access(
        &w.c.access,
        &w.c.storage,
        &user("nobody@pve"),
        None,
        &format!("{sid}:{name}"),
        None,
    );
    match want {
        None => assert!(got.is_ok(), "{got:?}"),
        Some((code, msg)) => assert_eq!(refused(got), (code, msg.to_string())),
    }
}

#[rstest]
fn paths_are_root_pams_alone(w: World) {
    assert!(
        check_volume_access(&w.c.access, &w.c.storage, &root(), None, "/dev/sdb", None).is_ok()
    );
    let token = user("root@pam!auto");
    assert_eq!(
        refused(check_volume_access(
            &w.c.access,
            &w.c.storage,
            &token,
            None,
            "/dev/sdb",
            None
        )),
        (500, "Only root can pass arbitrary filesystem paths.".into())
    );
}

#[rstest]
fn updates_check_old_and_new_values(mut w: World) {
    grant(&mut w, "/vms/100", "PVEVMUser", "bob@pve");
    let bob = user("bob@pve");
    let current = w.c.guests.get(&100).expect("vm").config.clone();
    // PVEVMUser may change the CD-ROM, not a disk.
    assert!(
        w.c.perms()
            .check_update_vm_values_perm(
                &bob,
                100,
                &current,
                &map(&[("ide2", "none,media=cdrom")]),
                &[]
            )
            .is_ok()
    );
    assert_eq!(
        refused(w.c.perms().check_update_vm_values_perm(
            &bob,
            100,
            &current,
            &BTreeMap::new(),
            &["scsi0".into()]
        )),
        denied("/vms/100, VM.Config.Disk")
    );
    // Replacing a network device checks the bridge it was on.
    assert_eq!(
        refused(w.c.perms().check_update_vm_values_perm(
            &bob,
            100,
            &current,
            &map(&[("net0", "virtio,bridge=vmbr1")]),
            &[]
        )),
        denied("/sdn/zones/localnetwork/vmbr0, SDN.Use")
    );
    // Before the lock: the option's class, then the new bridge.
    assert_eq!(
        refused(w.c.perms().check_update_vm_perm(
            &bob,
            100,
            &current,
            &map(&[("cores", "4")]),
            &[],
            None
        )),
        denied("/vms/100, VM.Config.CPU")
    );
    assert_eq!(
        refused(w.c.perms().check_update_vm_perm(
            &user("ann@pve"),
            100,
            &current,
            &map(&[("net1", "virtio,bridge=vmbr1")]),
            &[],
            None
        )),
        denied("/sdn/zones/localnetwork/vmbr1, SDN.Use")
    );
}

#[rstest]
fn clones_check_storage_and_bridges(mut w: World) {
    let conf = w.c.guests.get(&100).expect("vm").config.clone();
    let ann = user("ann@pve");
    assert_eq!(
        refused(w.c.perms().check_clone_vm_perm(&ann, &conf, None)),
        denied("/storage/local-lvm, Datastore.AllocateSpace")
    );
    grant(&mut w, "/storage", "PVEDatastoreUser", "ann@pve");
    assert_eq!(
        refused(w.c.perms().check_clone_vm_perm(&ann, &conf, None)),
        denied("/sdn/zones/localnetwork/vmbr0, SDN.Use")
    );
    grant(&mut w, "/sdn/zones/localnetwork", "PVESDNUser", "ann@pve");
    assert_eq!(
        w.c.perms().check_clone_vm_perm(&ann, &conf, None),
        Ok(false)
    );
}

#[rstest]
fn container_options_check_bridges_volumes_and_pools(mut w: World) {
    let ann = user("ann@pve");
    let check = |w: &World, pool: Option<&str>, set: &[(&str, &str)]| {
        w.c.perms()
            .check_ct_config_perm_in_pool(&ann, 4300, pool, None, &map(set), &[], true)
    };
    // ann has no rights on CT 4300, all on pool `team`.
    assert_eq!(
        refused(check(&w, None, &[("cores", "1")])),
        denied("/vms/4300, VM.Config.CPU")
    );
    assert!(check(&w, Some("team"), &[("cores", "1")]).is_ok());
    assert_eq!(
        refused(check(
            &w,
            Some("team"),
            &[("net0", "name=eth0,bridge=vmbr0")]
        )),
        denied("/sdn/zones/localnetwork/vmbr0, SDN.Use")
    );
    assert_eq!(
        refused(check(&w, Some("team"), &[("mp0", "/dev/sdb,mp=/mnt")])),
        denied("mount point type device is only allowed for root@pam")
    );
    assert_eq!(
        refused(check(
            &w,
            Some("team"),
            &[("rootfs", "local-lvm:vm-100-disk-0")]
        )),
        denied("/storage/local-lvm, Datastore.Audit")
    );
    grant(&mut w, "/storage/local-lvm", "PVEDatastoreUser", "ann@pve");
    assert!(check(&w, Some("team"), &[("rootfs", "local-lvm:8")]).is_ok());
}
