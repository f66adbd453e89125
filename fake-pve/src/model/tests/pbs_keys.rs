//! A `pbs` storage's creation (the server must answer), its encryption
//! key (given, generated, replaced, removed) and what a restore makes of
//! a key that does not match, and its status from the datastore.

use rstest::rstest;

use super::pbs::{dump, pbs, req};
use super::{T0, World, map, refused};
use crate::model::Context;

fn create(w: &mut World, pairs: &[(&str, &str)]) -> crate::model::Result<Option<String>> {
    let mut rq = Context::new(w.now_ms, 3);
    w.c.create_storage(&map(pairs), &mut rq)
        .map(|x| x.encryption_key)
}

fn update(
    w: &mut World,
    sid: &str,
    pairs: &[(&str, &str)],
    delete: &[&str],
) -> crate::model::Result<Option<String>> {
    let mut rq = Context::new(w.now_ms, 4);
    let delete: Vec<String> = delete.iter().map(|d| (*d).to_string()).collect();
    w.c.update_storage(sid, &map(pairs), &delete, &mut rq)
        .map(|x| x.encryption_key)
}

const STORE: [(&str, &str); 4] = [
    ("type", "pbs"),
    ("server", "127.0.0.5"),
    ("datastore", "store1"),
    ("username", "root@pam"),
];

fn with(
    extra: &[(&'static str, &'static str)],
    sid: &'static str,
) -> Vec<(&'static str, &'static str)> {
    let mut v = vec![("storage", sid)];
    v.extend(STORE);
    v.extend(extra);
    v
}

#[rstest]
#[case::no_server(&[("storage", "x"), ("type", "pbs"), ("server", "127.0.0.9"), ("datastore", "store1"), ("username", "root@pam")],
    "create storage failed: x: error fetching datastores - 500 Can't connect to 127.0.0.9:8007 (Connection refused)")]
#[case::no_datastore(&[("storage", "x"), ("type", "pbs"), ("server", "127.0.0.5"), ("datastore", "nope"), ("username", "root@pam")],
    "create storage failed: x: Cannot find datastore 'nope', check permissions and existence!")]
#[case::not_a_key(&[("storage", "x"), ("type", "pbs"), ("server", "127.0.0.5"), ("datastore", "store1"), ("username", "root@pam"), ("encryption-key", "{\"kdf\":null}")],
    "create storage failed: Value does not seems like a valid, JSON formatted encryption key!")]
#[case::master_without_key(&[("storage", "x"), ("type", "pbs"), ("server", "127.0.0.5"), ("datastore", "store1"), ("username", "root@pam"), ("master-pubkey", "LS0tLS1CRUdJTg==")],
    "create storage failed: 'master-pubkey' can only be used together with 'encryption-key'")]
fn a_pbs_storage_is_refused_when_its_server_or_key_is_not_right(
    #[case] pairs: &[(&str, &str)],
    #[case] msg: &str,
    mut pbs: World,
) {
    assert_eq!(refused(create(&mut pbs, pairs)).1, msg);
    assert!(pbs.c.storages().find("x").is_none());
    assert!(pbs.c.pbs().key("x").is_none());
}

#[rstest]
fn a_disabled_or_elsewhere_storage_is_not_activated_on_creation(mut pbs: World) {
    let mut pairs = vec![
        ("storage", "later"),
        ("type", "pbs"),
        ("server", "127.0.0.9"),
    ];
    pairs.extend([
        ("datastore", "store1"),
        ("username", "root@pam"),
        ("disable", "1"),
    ]);
    create(&mut pbs, &pairs).expect("created disabled");
    assert!(pbs.c.storages().find("later").is_some());
}

#[rstest]
fn a_generated_key_is_answered_kept_and_its_fingerprint_written(mut pbs: World) {
    let key = create(&mut pbs, &with(&[("encryption-key", "autogen")], "enc"))
        .expect("created")
        .expect("the key is answered");
    let doc: serde_json::Value = serde_json::from_str(&key).expect("JSON");
    let fp = doc["fingerprint"]
        .as_str()
        .expect("fingerprint")
        .to_string();
    assert_eq!(fp.len(), 32 * 3 - 1);
    assert!(doc["data"].as_str().is_some_and(|d| d.len() == 44));
    assert!(doc["kdf"].is_null());
    let s = pbs.c.storages().find("enc").expect("storage").clone();
    assert_eq!(s.options.get("encryption-key"), Some(&fp));
    assert_eq!(pbs.c.pbs().key("enc"), Some(key.as_str()));
    // A backup is encrypted with it.
    let upid = dump(&mut pbs, req(100, "enc"));
    let log = pbs.task(&upid).log.clone();
    assert!(
        log.contains(&"INFO: enabling encryption".to_string()),
        "{log:#?}"
    );
    let items = super::rows(
        &pbs.c
            .content_list("enc", "pve", None, None)
            .expect("content"),
    );
    assert_eq!(items[0]["encrypted"], serde_json::json!(fp));
}

#[rstest]
fn a_given_key_is_kept_as_given(mut pbs: World) {
    let given = r#"{"kdf":null,"data":"AAAA","fingerprint":"01:02"}"#;
    let key = create(&mut pbs, &with(&[("encryption-key", given)], "enc")).expect("created");
    assert_eq!(key.as_deref(), Some(given));
    let s = pbs.c.storages().find("enc").expect("storage");
    assert_eq!(
        s.options.get("encryption-key").map(String::as_str),
        Some("01:02")
    );
    // Without a fingerprint, storage.cfg says `1`.
    let bare = r#"{"data":"AAAA"}"#;
    update(&mut pbs, "enc", &[("encryption-key", bare)], &[]).expect("updated");
    let s = pbs.c.storages().find("enc").expect("storage");
    assert_eq!(
        s.options.get("encryption-key").map(String::as_str),
        Some("1")
    );
    assert_eq!(
        refused(update(&mut pbs, "enc", &[("encryption-key", "nope")], &[])).1,
        "update storage failed: Value does not seems like a valid, JSON formatted encryption key!"
    );
    // Deleting the storage takes its key file.
    pbs.c.delete_storage("enc").expect("deleted");
    assert!(pbs.c.pbs().key("enc").is_none());
}

/// Restores VM 100's snapshot from `sid` as `vmid`: the task's exit and
/// log.
fn restore(w: &mut World, sid: &str, vmid: u32) -> (String, Vec<String>) {
    let r = crate::model::backup::RestoreRequest {
        node: "pve".into(),
        vmid,
        archive: format!("{sid}:backup/vm/100/{}", crate::model::pbs::rfc3339(T0)),
        storage: Some("local-lvm".into()),
        ..Default::default()
    };
    let mut ctx = Context::new(w.now_ms, 5);
    let worker = w.c.backup_ops().restore_vm(r, &mut ctx).expect("accepted");
    let upid = w.run_as("pve", worker, "root@pam", 1000);
    w.tick(1000);
    (w.exit(&upid), w.task(&upid).log.clone())
}

#[rstest]
fn a_restore_needs_the_key_the_snapshot_was_made_with(mut pbs: World) {
    create(&mut pbs, &with(&[("encryption-key", "autogen")], "enc")).expect("created");
    let old_fp = pbs.c.pbs().key_fingerprint("enc").expect("fp");
    dump(&mut pbs, req(100, "enc"));
    // With its key: restored, pbs-restore given the key file.
    let (exit, log) = restore(&mut pbs, "enc", 101);
    assert_eq!(exit, "OK", "{log:#?}");
    assert!(
        log.iter()
            .any(|l| l.contains("--keyfile /etc/pve/priv/storage/enc.enc")),
        "{log:#?}"
    );
    // Another key.
    update(&mut pbs, "enc", &[("encryption-key", "autogen")], &[]).expect("new key");
    let new_fp = pbs.c.pbs().key_fingerprint("enc").expect("fp");
    assert_ne!(old_fp, new_fp);
    let (exit, log) = restore(&mut pbs, "enc", 102);
    assert_eq!(
        log.first().map(String::as_str),
        Some(
            format!(
                "Error: wrong key - manifest's key {old_fp} does not match provided key {new_fp}"
            )
            .as_str()
        ),
        "{log:#?}"
    );
    assert!(exit.starts_with("command '/usr/bin/proxmox-backup-client restore --crypt-mode=encrypt --keyfd=14 vm/100/"), "{exit}");
    assert!(
        exit.ends_with("index.json --repository root@pam@127.0.0.5:store1' failed: exit code 255"),
        "{exit}"
    );
    // No key at all.
    update(&mut pbs, "enc", &[], &["encryption-key"]).expect("key removed");
    assert!(
        pbs.c
            .storages()
            .find("enc")
            .is_some_and(|s| !s.options.contains_key("encryption-key"))
    );
    let (exit, log) = restore(&mut pbs, "enc", 103);
    assert_eq!(
        log.first().cloned(),
        Some(format!(
            "Error: missing key - manifest was created with key {old_fp}"
        ))
    );
    assert!(exit.contains("restore --crypt-mode=none vm/100/"), "{exit}");
    // file-restore says the same.
    let who = crate::model::access::AuthId::parse("root@pam").expect("id");
    let volume = format!("enc:backup/vm/100/{}", crate::model::pbs::rfc3339(T0));
    assert_eq!(
        refused(
            pbs.c
                .backup_reader()
                .file_restore_list(&who, "enc", &volume, "/")
        )
        .1,
        format!(
            "proxmox-file-restore failed: Error: missing key - manifest was created with key {old_fp}"
        )
    );
}

#[rstest]
fn a_storage_without_its_key_file_cannot_back_up(mut pbs: World) {
    // storage.cfg names a key whose file is gone.
    pbs.c.pbs_mut().on_delete_hook("backup-dev");
    let upid = dump(&mut pbs, req(100, "backup-dev"));
    let log = pbs.task(&upid).log.clone();
    assert!(
        log.iter().any(|l| l.contains("encryption configured ('aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99') but no encryption key file found!")),
        "{log:#?}"
    );
    assert_ne!(pbs.exit(&upid), "OK");
}

#[rstest]
fn the_status_is_the_datastore_s_or_inactive(mut pbs: World) {
    let s = pbs.c.storages().find("backup").expect("storage").clone();
    let before = pbs.c.storage_status(&s, "pve", None).expect("status");
    assert_eq!((before.active, before.total, before.used), (1, s.total, 0));
    dump(&mut pbs, req(100, "backup"));
    let after = pbs.c.storage_status(&s, "pve", None).expect("status");
    assert!(after.used > 0);
    assert_eq!(after.avail, after.total - after.used);
    for sid in ["nowhere", "wrong-store"] {
        let s = pbs.c.storages().find(sid).expect("storage").clone();
        let st = pbs.c.storage_status(&s, "pve", None).expect("status");
        assert_eq!(
            (st.enabled, st.active, st.total, st.used, st.avail),
            (1, 0, 0, 0, 0),
            "{sid}"
        );
        assert!(st.used_fraction.is_none());
    }
}
