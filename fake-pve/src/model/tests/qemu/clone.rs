//! Clones: full and linked, their targets and details.

use super::*;

// ---------------------------------------------------------------------
// Clone

#[rstest]
#[case(CloneRequest { full: Some(false), ..clone_req(100, 200) }, 500,
    "Linked clone feature is not supported for 'local-lvm:vm-100-disk-0' (scsi0)")]
#[case(CloneRequest { full: Some(false), storage: Some("local-lvm".into()), ..clone_req(900, 200) }, 500,
    "parameter 'storage' not allowed for linked clones")]
#[case(CloneRequest { full: Some(false), format: Some("qcow2".into()), ..clone_req(900, 200) }, 500,
    "parameter 'format' not allowed for linked clones")]
#[case(CloneRequest { pool: Some("p".into()), ..clone_req(100, 200) }, 403, "Permission check failed (pool 'p' does not exist)")]
#[case(CloneRequest { target: Some("pve9".into()), ..clone_req(100, 200) }, 500, "no such cluster node 'pve9'")]
#[case(CloneRequest { snapname: Some("nope".into()), ..clone_req(100, 200) }, 500, "snapshot 'nope' does not exist")]
#[case(CloneRequest { storage: Some("nope".into()), ..clone_req(100, 200) }, 500, "storage 'nope' does not exist")]
#[case(
    clone_req(100, 101),
    500,
    "unable to create VM 101: config file already exists"
)]
fn clone_refusals(mut lab: World, #[case] req: CloneRequest, #[case] code: u16, #[case] msg: &str) {
    assert_eq!(
        refused(lab.c.vm_ops().clone_vm(req, &mut rq())),
        (code, msg.to_string())
    );
    assert!(!lab.c.guests.contains_key(&200));
}

#[rstest]
fn clone_needs_allocate_space_on_the_target_storage(mut lab: World) {
    let mut req = clone_req(100, 200);
    req.who = Some(user("ci@pve"));
    assert_eq!(
        refused(lab.c.vm_ops().clone_vm(req, &mut rq())),
        (
            403,
            "Permission check failed (/storage/local-lvm, Datastore.AllocateSpace)".into()
        )
    );
}

#[rstest]
fn a_clone_target_holds_lock_clone_while_it_runs(mut lab: World) {
    let w = lab
        .c
        .vm_ops()
        .clone_vm(clone_req(100, 200), &mut rq())
        .expect("accepted");
    let upid = lab.run_as("pve", w, "root@pam", 10_000);
    assert_eq!(lab.conf(200, "lock").as_deref(), Some("clone"));
    assert_eq!(lab.task(&upid).upid.id, "100", "the task id is the source");
    lab.tick(10_000);
    assert_eq!(lab.exit(&upid), "OK");
    assert_eq!(lab.conf(200, "lock"), None);
    assert_eq!(
        lab.conf(200, "scsi0").as_deref(),
        Some("local-lvm:vm-200-disk-0,size=8G")
    );
}

#[rstest]
fn a_full_clone_gets_new_macs_and_uuid(mut lab: World) {
    let w = lab
        .c
        .vm_ops()
        .clone_vm(clone_req(100, 200), &mut rq())
        .expect("accepted");
    lab.run("pve", w);
    let old = lab.conf(100, "net0").expect("net0");
    let new = lab.conf(200, "net0").expect("net0");
    assert_ne!(old, new);
    assert!(new.ends_with(",bridge=vmbr0"), "{new}");
    assert_eq!(lab.conf(200, "memory").as_deref(), Some("2048"));
    assert!(
        lab.conf(200, "smbios1")
            .expect("smbios")
            .starts_with("uuid=")
    );
}

#[rstest]
fn a_linked_clone_of_a_template_refers_to_the_base(mut lab: World) {
    let w = lab
        .c
        .vm_ops()
        .clone_vm(clone_req(900, 200), &mut rq())
        .expect("accepted");
    let upid = lab.run("pve", w);
    assert_eq!(lab.exit(&upid), "OK");
    // LVM-thin's clone_image answers the new LV's name alone.
    assert_eq!(
        lab.conf(200, "scsi0").as_deref(),
        Some("local-lvm:vm-200-disk-0,size=4G")
    );
    assert!(
        lab.task(&upid)
            .log
            .iter()
            .any(|l| l.starts_with("create linked clone of drive scsi0")),
        "{:?}",
        lab.task(&upid).log
    );
    assert_eq!(lab.conf(200, "template"), None);
}

// ---------------------------------------------------------------------
// Clone details

#[rstest]
fn a_clone_is_named_after_its_source(mut lab: World) {
    let w = lab
        .c
        .vm_ops()
        .clone_vm(clone_req(100, 200), &mut rq())
        .expect("accepted");
    lab.run("pve", w);
    assert_eq!(lab.conf(200, "name").as_deref(), Some("Copy-of-VM-web"));
    let mut req = clone_req(100, 201);
    req.name = Some("given".into());
    let w = lab.c.vm_ops().clone_vm(req, &mut rq()).expect("accepted");
    lab.run("pve", w);
    assert_eq!(lab.conf(201, "name").as_deref(), Some("given"));
}

#[rstest]
fn a_clone_copies_meta_and_renews_vmgenid_only_if_present(mut lab: World) {
    {
        let conf = &mut lab.c.guests.get_mut(&100).expect("vm").config;
        conf.insert("meta".into(), "creation-qemu=9.2.0,ctime=1".into());
        conf.insert(
            "vmgenid".into(),
            "00000000-0000-0000-0000-000000000001".into(),
        );
    }
    let w = lab
        .c
        .vm_ops()
        .clone_vm(clone_req(100, 200), &mut rq())
        .expect("accepted");
    lab.run("pve", w);
    assert_eq!(
        lab.conf(200, "meta").as_deref(),
        Some("creation-qemu=9.2.0,ctime=1")
    );
    let genid = lab.conf(200, "vmgenid").expect("vmgenid");
    assert_ne!(genid, "00000000-0000-0000-0000-000000000001");
    let w = lab
        .c
        .vm_ops()
        .clone_vm(clone_req(900, 201), &mut rq())
        .expect("accepted");
    lab.run("pve", w);
    assert_eq!(lab.conf(201, "vmgenid"), None, "900 has none");
}

#[rstest]
fn a_clone_discards_pending_changes_with_a_warning(mut lab: World) {
    lab.c
        .vm_ops()
        .update_config(
            "pve",
            101,
            &update(&[("cores", "4")], &[]),
            lab.now_ms / 1000,
        )
        .expect("pending");
    let w = lab
        .c
        .vm_ops()
        .clone_vm(clone_req(101, 200), &mut rq())
        .expect("accepted");
    let upid = lab.run("pve", w);
    assert_eq!(lab.conf(200, "cores"), None);
    assert!(
        lab.task(&upid)
            .log
            .iter()
            .any(|l| l.contains("found pending changes for 'cores', discarding for clone")),
        "{:?}",
        lab.task(&upid).log
    );
}
