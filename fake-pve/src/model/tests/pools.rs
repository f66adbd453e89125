//! Resource pools: their life, their members, and the roles a pool's ACL
//! gives on its members.

use rstest::{fixture, rstest};
use serde_json::json;

use super::{LAB, World, qm_worker, refused, root, rq, user};
use crate::model::pools::PoolUpdate;
use crate::model::qemu::{CreateRequest, QemuOp};

/// [`LAB`] with pool `dev` holding VM 100 and storage `local`, and
/// `ci@pve` holding PVEVMAdmin on `/pool/dev`.
#[fixture]
fn pooled() -> World {
    let mut w = World::from_yaml(LAB);
    w.c.access
        .pools_mut()
        .create("dev", Some("Development".into()))
        .expect("create");
    let up = PoolUpdate {
        vms: vec![100],
        storage: vec!["local".into()],
        ..PoolUpdate::default()
    };
    w.c.access.update_pool(&root(), "dev", &up).expect("update");
    w.c.access.grant("/pool/dev", "PVEVMAdmin", "ci@pve");
    w
}

fn add(vms: &[u32]) -> PoolUpdate {
    PoolUpdate {
        vms: vms.to_vec(),
        ..PoolUpdate::default()
    }
}

#[rstest]
#[case("dev", "create pool failed: pool 'dev' already exists")]
#[case("a/b", "create pool failed: parent 'a' of pool 'a/b' does not exist")]
#[case("9lives", "create pool failed: pool name must start with a letter")]
#[case("dev/9", "create pool failed: pool name must start with a letter")]
#[case("a/b/c/d", "pool name 'a/b/c/d' nested too deeply (max levels = 3)")]
#[case("a b", "pool name 'a b' contains invalid characters")]
fn create_refusals(mut pooled: World, #[case] id: &str, #[case] msg: &str) {
    let r = pooled.c.access.pools_mut().create(id, None);
    assert_eq!(refused(r), (500, msg.into()));
}

#[rstest]
fn nested_pools_need_their_parent_and_keep_it_from_deletion(mut pooled: World) {
    let pools = pooled.c.access.pools_mut();
    pools.create("dev/web", None).expect("nested");
    let r = pooled.c.access.delete_pool("dev", |_| false, |_| false);
    assert_eq!(
        refused(r),
        (
            500,
            "delete pool failed: pool 'dev' is not empty (contains pool 'dev/web')".into()
        )
    );
}

#[rstest]
#[case(add(&[100]), "update pools failed: VM 100 is already a pool member")]
#[case(PoolUpdate { vms: vec![101], delete: true, ..PoolUpdate::default() },
       "update pools failed: VM 101 is not a pool member")]
#[case(PoolUpdate { storage: vec!["local".into()], ..PoolUpdate::default() },
       "update pools failed: Storage 'local' is already a pool member")]
fn update_refusals(mut pooled: World, #[case] up: PoolUpdate, #[case] msg: &str) {
    let r = pooled.c.access.update_pool(&root(), "dev", &up);
    assert_eq!(refused(r), (500, msg.into()));
}

#[rstest]
fn a_failed_update_changes_nothing(mut pooled: World) {
    let up = PoolUpdate {
        comment: Some("changed".into()),
        vms: vec![101, 100],
        ..PoolUpdate::default()
    };
    assert!(pooled.c.access.update_pool(&root(), "dev", &up).is_err());
    let dev = pooled.c.access.pools().get("dev").expect("dev");
    assert_eq!(dev.comment(), Some("Development"));
    assert!(!dev.vms().contains(&101));
}

#[rstest]
fn moving_a_guest_needs_allow_move(mut pooled: World) {
    pooled
        .c
        .access
        .pools_mut()
        .create("ops", None)
        .expect("ops");
    let r = pooled.c.access.update_pool(&root(), "ops", &add(&[100]));
    assert_eq!(
        refused(r),
        (
            500,
            "update pools failed: VM 100 belongs already to pool 'dev' and 'allow-move' is not set"
                .into()
        )
    );
    let up = PoolUpdate {
        allow_move: true,
        ..add(&[100])
    };
    pooled
        .c
        .access
        .update_pool(&root(), "ops", &up)
        .expect("move");
    assert_eq!(pooled.c.access.pools().pool_of(100), Some("ops"));
}

#[rstest]
fn adding_members_needs_the_right_to_modify_their_permissions(mut pooled: World) {
    // The schema checks Pool.Allocate on the pool; the model checks each
    // member it adds.
    let r = pooled
        .c
        .access
        .update_pool(&user("ci@pve"), "dev", &add(&[101]));
    assert_eq!(
        refused(r),
        (
            500,
            "update pools failed: Permission check failed (/vms/101, Permissions.Modify|VM.Allocate)"
                .into()
        )
    );
}

#[rstest]
fn a_pool_acl_applies_to_its_guests_and_storages_only(pooled: World) {
    let a = &pooled.c.access;
    let ci = user("ci@pve");
    assert!(a.has_priv(&ci, "/vms/100", "VM.PowerMgmt"));
    assert!(!a.has_priv(&ci, "/vms/101", "VM.PowerMgmt"));
    // Pool roles never propagate below the member.
    assert_eq!(
        a.privileges(&ci, "/vms/100").get("VM.PowerMgmt"),
        Some(&false)
    );
    // PVEVMAdmin has no Datastore privileges: the storage member gets none.
    assert!(!a.has_priv(&ci, "/storage/local", "Datastore.Audit"));
    // The members appear among the effective permissions.
    assert!(a.effective_permissions(&ci).contains_key("/vms/100"));
}

#[rstest]
fn no_access_on_the_vm_is_not_trumped_by_the_pool(mut pooled: World) {
    pooled.c.access.grant("/vms/100", "NoAccess", "ci@pve");
    assert!(
        !pooled
            .c
            .access
            .has_priv(&user("ci@pve"), "/vms/100", "VM.Audit")
    );
}

#[rstest]
fn deleting_a_pool_with_a_live_guest_is_refused_and_drops_its_acl(mut pooled: World) {
    let r = pooled.c.access.delete_pool("dev", |v| v == 100, |_| false);
    assert_eq!(
        refused(r),
        (
            500,
            "delete pool failed: pool 'dev' is not empty (contains VM 100)".into()
        )
    );
    // Members that no longer exist do not count.
    pooled
        .c
        .access
        .delete_pool("dev", |_| false, |_| false)
        .expect("delete");
    assert!(pooled.c.access.pools().get("dev").is_none());
    assert!(
        !pooled
            .c
            .access
            .has_priv(&user("ci@pve"), "/pool/dev", "VM.Audit")
    );
    let r = pooled.c.access.delete_pool("dev", |_| false, |_| false);
    assert_eq!(
        refused(r),
        (500, "delete pool failed: pool 'dev' does not exist".into())
    );
}

#[rstest]
fn resources_show_the_pool_and_its_member(pooled: World) {
    let rows = crate::api::cluster::view::resources(&pooled.c.resources(), None, super::T0);
    assert_eq!(
        rows[0],
        json!({ "id": "/pool/dev", "pool": "dev", "type": "pool" })
    );
    let vm = rows.iter().find(|r| r["id"] == "qemu/100").expect("vm 100");
    assert_eq!(vm["pool"], "dev");
    let other = rows.iter().find(|r| r["id"] == "qemu/101").expect("vm 101");
    assert!(other.get("pool").is_none());
}

#[rstest]
fn a_pool_lists_its_members(pooled: World) {
    let v = crate::api::pools::pool_view(&pooled.c, "dev", None, super::T0).expect("view");
    assert_eq!(v["comment"], "Development");
    let ids: Vec<&str> = v["members"]
        .as_array()
        .expect("members")
        .iter()
        .map(|m| m["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, ["qemu/100", "storage/pve/local"]);
    let only =
        crate::api::pools::pool_view(&pooled.c, "dev", Some("storage"), super::T0).expect("view");
    assert_eq!(only["members"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        refused(crate::api::pools::pool_view(
            &pooled.c,
            "nope",
            None,
            super::T0
        )),
        (500, "pool 'nope' does not exist".into())
    );
}

#[rstest]
fn destroying_a_guest_removes_it_from_its_pool(mut pooled: World) {
    let op = QemuOp::Destroy {
        skiplock: false,
        purge: false,
        unreferenced: false,
    };
    pooled.run("pve", qm_worker("qmdestroy", 100, op));
    assert_eq!(pooled.c.access.pools().pool_of(100), None);
}

#[rstest]
fn a_new_guest_joins_its_pool_when_its_task_ends(mut pooled: World) {
    let worker = pooled
        .c
        .vm_ops()
        .create_vm(
            CreateRequest {
                vmid: 120,
                node: "pve".into(),
                pool: Some("dev".into()),
                ..CreateRequest::default()
            },
            &mut rq(),
        )
        .expect("create");
    let upid = pooled.run_as("pve", worker, "root@pam", 1000);
    assert_eq!(pooled.c.access.pools().pool_of(120), None);
    pooled.tick(1000);
    assert_eq!(pooled.exit(&upid), "OK");
    assert_eq!(pooled.c.access.pools().pool_of(120), Some("dev"));
}

#[rstest]
fn an_unknown_pool_is_a_permission_failure(pooled: World) {
    assert_eq!(
        refused(pooled.c.access.check_pool_exist("nope")),
        (
            403,
            "Permission check failed (pool 'nope' does not exist)".into()
        )
    );
}
