//! `storage.cfg`: creating, updating and removing storages; status and capacity.

use super::*;

// ---------------------------------------------------------------------
// storage.cfg

#[rstest]
#[case(&[("storage", "s1"), ("type", "dir")], "missing value for required option 'path'")]
#[case(&[("storage", "s1"), ("type", "nfs"), ("path", "/mnt")], "missing value for required option 'export'")]
#[case(&[("storage", "s1"), ("type", "lvmthin"), ("vgname", "pve")], "missing value for required option 'thinpool'")]
#[case(&[("storage", "s1"), ("type", "zfspool")], "missing value for required option 'pool'")]
#[case(&[("storage", "local"), ("type", "dir"), ("path", "/x")], "create storage failed: storage ID 'local' already defined")]
#[case(&[("storage", "s1"), ("type", "dir"), ("path", "/srv/a:b")], "illegal path for directory storage: /srv/a:b")]
#[case(&[("storage", "s1"), ("type", "btrfs"), ("path", "/srv/my disk")], "illegal path for directory storage: /srv/my disk")]
#[case(&[("storage", "s1"), ("type", "esxi"), ("server", "192.0.2.9"), ("username", "root")], "create storage failed: missing password")]
#[case(&[("storage", "s1"), ("type", "zfs"), ("blocksize", "4k"), ("iscsiprovider", "tgt"), ("pool", "tank"),
    ("portal", "192.0.2.7"), ("target", "iqn.2003-01.org.example:t")],
    "create storage failed: tgt: unknown iscsi provider. Available [comstar, istgt, iet, LIO] at /usr/share/perl5/PVE/Storage/ZFSPlugin.pm line 35.")]
fn storage_create_refusals(mut fresh: World, #[case] p: &[(&str, &str)], #[case] msg: &str) {
    let before = fresh.c.storage.cfg().len();
    assert_eq!(
        refused(fresh.c.storages_mut().create(&map(p))),
        (500, msg.to_string())
    );
    assert_eq!(fresh.c.storage.cfg().len(), before);
}

/// What a plugin sets on create: a network file system's mount point,
/// a directory's path made canonical, ZFS over iSCSI's base path.
#[rstest]
#[case(&[("type", "nfs"), ("server", "192.0.2.5"), ("export", "/e")], "path", "/mnt/pve/s1")]
#[case(&[("type", "cifs"), ("server", "192.0.2.5"), ("share", "data")], "path", "/mnt/pve/s1")]
#[case(&[("type", "cephfs")], "path", "/mnt/pve/s1")]
#[case(&[("type", "nfs"), ("server", "192.0.2.5"), ("export", "/e"), ("path", "/srv/n")], "path", "/srv/n")]
#[case(&[("type", "dir"), ("path", "/var//tmp/./x/")], "path", "/var/tmp/x")]
#[case(&[("type", "dir"), ("path", "/../srv/a/../b")], "path", "/srv/a/../b")]
#[case(&[("type", "zfs"), ("blocksize", "4k"), ("iscsiprovider", "comstar"), ("pool", "tank"),
    ("portal", "192.0.2.7"), ("target", "iqn.2003-01.org.example:t")], "zfs-base-path", "/dev/zvol/rdsk")]
#[case(&[("type", "zfs"), ("blocksize", "4k"), ("iscsiprovider", "LIO"), ("pool", "tank"),
    ("portal", "192.0.2.7"), ("target", "iqn.2003-01.org.example:t")], "zfs-base-path", "/dev/zvol")]
#[case(&[("type", "esxi"), ("server", "192.0.2.9"), ("username", "root"), ("password", "pw")], "username", "root")]
fn storage_create_sets_what_the_plugin_sets(
    mut fresh: World,
    #[case] p: &[(&str, &str)],
    #[case] key: &str,
    #[case] want: &str,
) {
    let mut p = map(p);
    p.insert("storage".into(), "s1".into());
    fresh.c.storage.create(&p).expect("created");
    let s = fresh.c.storage.existing("s1").expect("exists");
    let view = crate::api::storage::view::storage_config(fresh.c.storages(), s);
    assert_eq!(view[key], json!(want), "{view}");
}

#[rstest]
fn storage_create_answers_id_and_type(mut fresh: World) {
    let v = fresh
        .c
        .storage
        .create(&map(&[
            ("storage", "nfs1"),
            ("type", "nfs"),
            ("server", "192.0.2.5"),
            ("export", "/e"),
            ("path", "/mnt/pve/nfs1"),
        ]))
        .expect("created");
    assert_eq!(
        crate::api::storage::view::storage_ref(&v),
        json!({"storage": "nfs1", "type": "nfs"})
    );
    let s = fresh.c.storage.existing("nfs1").expect("exists");
    let view = crate::api::storage::view::storage_config(fresh.c.storages(), s);
    assert_eq!(view["shared"], json!(1), "NFS is always shared");
    assert_eq!(view["server"], json!("192.0.2.5"));
}

#[rstest]
fn the_storage_digest_changes_with_the_config(mut fresh: World) {
    let d0 = fresh.c.storages().digest();
    assert_eq!(d0.len(), 40);
    fresh
        .c
        .storage
        .create(&map(&[("storage", "d2"), ("type", "dir"), ("path", "/d2")]))
        .expect("created");
    assert_ne!(fresh.c.storages().digest(), d0);
}

#[rstest]
#[case("local", &[("digest", "0000")], &[], "update storage failed: detected modified configuration - file changed by other user? Try again.")]
#[case("local", &[("path", "/elsewhere")], &[], "update storage failed: can't change value of fixed parameter 'path'")]
#[case("local-lvm", &[], &["vgname"], "update storage failed: unable to delete required option 'vgname'")]
#[case("local", &[("nodes", "pve")], &["nodes"], "update storage failed: cannot set and delete property 'nodes' at the same time!")]
#[case("nope", &[("disable", "1")], &[], "update storage failed: storage 'nope' does not exist")]
fn storage_update_refusals(
    mut fresh: World,
    #[case] sid: &str,
    #[case] p: &[(&str, &str)],
    #[case] delete: &[&str],
    #[case] msg: &str,
) {
    let delete: Vec<String> = delete.iter().map(|s| (*s).to_string()).collect();
    assert_eq!(
        refused(fresh.c.storages_mut().update(sid, &map(p), &delete)),
        (500, msg.to_string())
    );
}

#[rstest]
fn storage_update_with_the_current_digest_applies(mut fresh: World) {
    let d = fresh.c.storages().digest();
    fresh
        .c
        .storage
        .update("local", &map(&[("digest", &d), ("disable", "1")]), &[])
        .expect("updated");
    assert!(fresh.c.storage.existing("local").expect("s").disable);
    let (code, msg) = refused(fresh.c.storage.usable_storage("local", "pve"));
    assert_eq!((code, msg.as_str()), (500, "storage 'local' is disabled"));
}

#[rstest]
fn storage_delete(mut fresh: World) {
    fresh.c.storages_mut().delete("local").expect("deleted");
    assert_eq!(
        refused(fresh.c.storage.existing("local")),
        (500, "storage 'local' does not exist".into())
    );
    assert_eq!(
        refused(fresh.c.storages_mut().delete("local")),
        (
            500,
            "delete storage failed: storage 'local' does not exist".into()
        )
    );
}

#[rstest]
fn a_storage_restricted_to_other_nodes_is_unavailable(mut cluster: World) {
    cluster
        .c
        .storage
        .update("nfs", &map(&[("nodes", "pve2")]), &[])
        .expect("updated");
    assert_eq!(
        refused(cluster.c.storage.usable_storage("nfs", "pve1")),
        (500, "storage 'nfs' is not available on node 'pve1'".into())
    );
    assert!(cluster.c.storage.usable_storage("nfs", "pve2").is_ok());
    let s = cluster.c.storage.existing("nfs").expect("nfs").clone();
    assert!(cluster.c.storage.status(&s, "pve1", None).is_none());
}

// ---------------------------------------------------------------------
// Status and capacity

#[rstest]
fn storage_status_counts_allocated_volumes(mut lab: World) {
    let s = lab.c.storage.existing("local-lvm").expect("s").clone();
    let before = lab.c.storage.status(&s, "pve", None).expect("status");
    // Seeded disks: 8G (100), 16G (101), 4G (900).
    assert_eq!(before.used, 28u64 << 30);
    assert_eq!(before.total, 200u64 << 30);
    assert_eq!(before.avail, 172u64 << 30);
    alloc(&mut lab, "local-lvm", 100, 2 << 30).expect("allocated");
    let after = lab.c.storage.status(&s, "pve", None).expect("status");
    assert_eq!(after.used, 30u64 << 30);
    assert_eq!(after.active, 1);
    assert_eq!(after.enabled, 1);
}

#[rstest]
#[case(Some("images"), true)]
#[case(Some("iso"), false)]
#[case(Some("iso,rootdir"), true)]
#[case(None, true)]
fn storage_status_filters_by_content(
    lab: World,
    #[case] content: Option<&str>,
    #[case] listed: bool,
) {
    let s = lab.c.storage.existing("local-lvm").expect("s");
    assert_eq!(lab.c.storage.status(s, "pve", content).is_some(), listed);
}

#[rstest]
fn a_disabled_storage_reports_nothing_in_use(mut lab: World) {
    if let Some(s) = lab.c.storage.find_mut("local-lvm") {
        s.disable = true;
    }
    let s = lab.c.storage.existing("local-lvm").expect("s");
    let st = lab.c.storage.status(s, "pve", None).expect("listed");
    assert_eq!((st.active, st.total), (0, 0));
}
