//! Storage content calls (`api::storage`'s `StorageContent`, and
//! `download_url` / `query_url_metadata`) against an in-process
//! fake-pve, in both authentication modes, every answer checked against
//! the schema.

mod common;

use common::{MODES, Mode, ROOT_TOKEN, ROOT_TOKEN_SECRET, checked_client, start};
use fake_pve::Running;
use fake_pve::model::storage::Volume;
use pve_client::api::storage::{AllocateVolume, ContentFilter, DownloadUrl, VolumeAttributes};
use pve_client::{Category, Error};

const NODE: &str = "pve";
const GIB: u64 = 1 << 30;
const BACKUP: &str = "backup/vzdump-qemu-100-2025_01_02-03_04_05.vma.zst";
const DEBIAN: &str = "https://example.com/debian-12.iso";
const GONE: &str = "https://example.com/gone.iso";
const GONE_MSG: &str = "download failed: command 'wget --progress=dot:giga -O /x https://example.com/gone.iso' failed: exit code 8";

fn task_failed(e: &Error) -> &str {
    match e {
        Error::TaskFailed { exitstatus, .. } => exitstatus,
        other => panic!("expected a failed task, got {other:?}"),
    }
}

fn assert_checked(names: &[String], want: &[&str]) {
    for w in want {
        assert!(names.iter().any(|n| n == w), "{w} not checked: {names:?}");
    }
}

/// A backup file on `local`, as vzdump would leave it.
fn seed_backup(run: &Running) {
    run.state().with(|c| {
        let s = c.storages().existing("local").expect("local").clone();
        c.storages_mut().put_file_volume(
            &s,
            NODE,
            Volume {
                storage: "local".into(),
                name: BACKUP.into(),
                size: 4096,
                format: "vma.zst".into(),
                vmid: 100,
                ctime: 1,
            },
        );
    });
}

/// Declares the URLs fake-pve knows through `PUT /_fake/downloads`.
async fn declare_downloads(run: &Running) {
    let body = serde_json::json!([
        { "url": DEBIAN, "size": 658_505_728, "checksum": "abc123",
          "checksum-algorithm": "sha256", "mimetype": "application/x-iso9660-image" },
        { "url": GONE, "fail": GONE_MSG },
    ]);
    let http = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .expect("http");
    let r = http
        .put(format!("{}/_fake/downloads", run.url()))
        .header(
            "Authorization",
            format!("PVEAPIToken={ROOT_TOKEN}={ROOT_TOKEN_SECRET}"),
        )
        .json(&body)
        .send()
        .await
        .expect("declare downloads");
    assert!(r.status().is_success(), "{r:?}");
}

#[tokio::test]
async fn allocate_list_read_update_copy_and_delete() {
    for mode in MODES {
        let run = start().await;
        seed_backup(&run);
        let (pve, checked) = checked_client(&run, mode);
        let c = pve.storage_content();

        let volid = c
            .create(
                NODE,
                "local-lvm",
                &AllocateVolume::new(100, "vm-100-disk-7", "1G"),
            )
            .await
            .expect("allocate");
        assert_eq!(volid, "local-lvm:vm-100-disk-7", "{mode:?}");
        let e = c
            .create(
                NODE,
                "local-lvm",
                &AllocateVolume::new(100, "vm-101-disk-0", "1G"),
            )
            .await
            .expect_err("wrong owner");
        assert_eq!(
            e.message(),
            "illegal name 'vm-101-disk-0' - should be 'vm-100-*'"
        );

        let mine = c
            .index(
                NODE,
                "local-lvm",
                &ContentFilter {
                    vmid: Some(100),
                    ..ContentFilter::default()
                },
            )
            .await
            .expect("list");
        let item = mine.iter().find(|i| i.volid == volid).expect("listed");
        assert_eq!((item.size, item.format.as_str()), (Some(GIB), "raw"));
        assert_eq!(item.vmid, Some(100));
        assert_eq!(item.content.as_deref(), Some("images"));
        let backups = c
            .index(
                NODE,
                "local",
                &ContentFilter {
                    content: Some("backup".into()),
                    ..ContentFilter::default()
                },
            )
            .await
            .expect("backups");
        assert_eq!(backups.len(), 1);
        assert_eq!(backups[0].volid, format!("local:{BACKUP}"));
        let e = c
            .index(NODE, "nope", &ContentFilter::default())
            .await
            .expect_err("unknown storage");
        assert_eq!(e.message(), "storage 'nope' does not exist");

        let info = c
            .info(NODE, "local-lvm", "vm-100-disk-7")
            .await
            .expect("info");
        assert_eq!(info.path, "/dev/pve/vm-100-disk-7");
        assert_eq!(info.size, GIB);
        let same = c
            .info(NODE, "local-lvm", &volid)
            .await
            .expect("by volume ID");
        assert_eq!(same, info);
        let e = c
            .updateattributes(
                NODE,
                "local-lvm",
                "vm-100-disk-7",
                &VolumeAttributes {
                    protected: Some(true),
                    ..VolumeAttributes::default()
                },
            )
            .await
            .expect_err("not on lvmthin");
        assert_eq!(
            e.message(),
            "attribute 'protected' is not supported for storage type 'lvmthin'"
        );

        c.updateattributes(
            NODE,
            "local",
            BACKUP,
            &VolumeAttributes {
                notes: Some("before the upgrade".into()),
                protected: Some(true),
            },
        )
        .await
        .expect("notes and protection");
        let info = c.info(NODE, "local", BACKUP).await.expect("info");
        assert_eq!(info.notes.as_deref(), Some("before the upgrade"));
        assert_eq!(info.protected, Some(true));

        // Copy, then a copy onto an existing volume fails the task. The
        // endpoint has no permission rule: root@pam only, not its tokens.
        let copy = "local:backup/vzdump-qemu-100-2025_01_03-03_04_05.vma.zst";
        if mode == Mode::Token {
            let e = c
                .copy(NODE, "local", BACKUP, copy, None)
                .await
                .expect_err("root@pam only");
            assert_eq!(e.category(), Category::Permission, "{e}");
            assert_eq!(e.message(), "Permission check failed (user != root@pam)");
        } else {
            let st = c
                .copy_and_wait(NODE, "local", BACKUP, copy, None)
                .await
                .expect("copy");
            assert_eq!(st.kind, "imgcopy");
            let e = c
                .copy_and_wait(NODE, "local", BACKUP, copy, None)
                .await
                .expect_err("exists");
            assert_eq!(
                task_failed(&e),
                "volume 'local:backup/vzdump-qemu-100-2025_01_03-03_04_05.vma.zst' already exists on 'pve'"
            );
        }

        // A protected volume stays; the task says why.
        let e = c
            .delete_and_wait(NODE, "local", BACKUP, None)
            .await
            .expect_err("protected");
        assert_eq!(
            task_failed(&e),
            format!("cannot remove protected volume '{BACKUP}' on 'local'")
        );
        let e = c
            .delete(NODE, "local", BACKUP, Some(5))
            .await
            .expect_err("protected, within the delay");
        assert_eq!(
            e.message(),
            format!("cannot remove protected volume '{BACKUP}' on 'local'")
        );
        c.updateattributes(
            NODE,
            "local",
            BACKUP,
            &VolumeAttributes {
                protected: Some(false),
                ..VolumeAttributes::default()
            },
        )
        .await
        .expect("unprotect");
        assert_eq!(
            c.delete(NODE, "local", BACKUP, Some(5))
                .await
                .expect("delete"),
            None,
            "ended within the delay"
        );
        let st = c
            .delete_and_wait(NODE, "local-lvm", &volid, None)
            .await
            .expect("delete")
            .expect("a task");
        assert_eq!(st.kind, "imgdel");
        assert!(
            c.index(NODE, "local-lvm", &ContentFilter::default())
                .await
                .expect("list")
                .iter()
                .all(|i| i.volid != volid)
        );
        assert_checked(
            &checked.names(),
            &[
                "GET index",
                "POST create",
                "GET info",
                "PUT updateattributes",
                "DELETE delete",
            ],
        );
        if mode == Mode::Password {
            assert_checked(&checked.names(), &["POST copy"]);
        }
    }
}

#[tokio::test]
async fn downloads_and_url_metadata() {
    for mode in [Mode::Password, Mode::Token] {
        let run = start().await;
        declare_downloads(&run).await;
        let (pve, checked) = checked_client(&run, mode);
        let s = pve.storage();

        let m = s
            .query_url_metadata(NODE, DEBIAN, None)
            .await
            .expect("metadata");
        assert_eq!(m.size, Some(658_505_728), "{mode:?}");
        assert_eq!(m.mimetype.as_deref(), Some("application/x-iso9660-image"));
        let e = s
            .query_url_metadata(NODE, "https://example.com/nothing.iso", None)
            .await
            .expect_err("404");
        assert_eq!(e.message(), "invalid server response: '404 Not Found'");

        let st = s
            .download_url_and_wait(
                NODE,
                "local",
                &DownloadUrl::new(DEBIAN, "iso", "debian-12.iso").checksum("sha256", "abc123"),
            )
            .await
            .expect("download");
        assert_eq!(st.kind, "download");
        let isos = pve
            .storage_content()
            .index(
                NODE,
                "local",
                &ContentFilter {
                    content: Some("iso".into()),
                    ..ContentFilter::default()
                },
            )
            .await
            .expect("isos");
        let iso = isos
            .iter()
            .find(|i| i.volid == "local:iso/debian-12.iso")
            .expect("downloaded");
        assert_eq!(iso.size, Some(658_505_728));

        let e = s
            .download_url_and_wait(
                NODE,
                "local",
                &DownloadUrl::new(DEBIAN, "iso", "other.iso").checksum("sha256", "deadbeef"),
            )
            .await
            .expect_err("checksum");
        assert!(task_failed(&e).starts_with("checksum mismatch"), "{e}");
        let e = s
            .download_url_and_wait(NODE, "local", &DownloadUrl::new(GONE, "iso", "gone.iso"))
            .await
            .expect_err("failed download");
        assert_eq!(task_failed(&e), GONE_MSG);
        let e = s
            .download_url(
                NODE,
                "local",
                &DownloadUrl::new(DEBIAN, "iso", "debian.txt"),
            )
            .await
            .expect_err("extension");
        assert_eq!(e.category(), Category::Validation);
        assert_eq!(
            e.param_errors()
                .and_then(|p| p.get("filename"))
                .map(String::as_str),
            Some("wrong file extension")
        );
        assert_checked(
            &checked.names(),
            &["GET query_url_metadata", "POST download_url"],
        );
    }
}

#[tokio::test]
async fn uploads_a_file_as_multipart_in_both_modes() {
    // sha256 of "hello\n", a well-known test vector.
    const HELLO_SHA256: &str = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";
    for mode in MODES {
        let run = start().await;
        let (pve, checked) = checked_client(&run, mode);
        let s = pve.storage();
        let st = s
            .upload_and_wait(
                NODE,
                "local",
                &pve_client::api::storage::Upload::new(
                    "iso",
                    "hello world.iso",
                    b"hello\n".to_vec(),
                )
                .checksum("sha256", HELLO_SHA256),
            )
            .await
            .expect("upload");
        assert_eq!(st.kind, "imgcopy", "{mode:?}");
        let isos = pve
            .storage_content()
            .index(
                NODE,
                "local",
                &ContentFilter {
                    content: Some("iso".into()),
                    ..ContentFilter::default()
                },
            )
            .await
            .expect("isos");
        let iso = isos
            .iter()
            .find(|i| i.volid == "local:iso/hello_world.iso")
            .expect("uploaded, with the name normalised");
        assert_eq!(iso.size, Some(6));

        let e = s
            .upload_and_wait(
                NODE,
                "local",
                &pve_client::api::storage::Upload::new("iso", "bad.iso", b"hello\n".to_vec())
                    .checksum("sha256", "00"),
            )
            .await
            .expect_err("checksum");
        assert_eq!(
            task_failed(&e),
            format!("checksum mismatch: got '{HELLO_SHA256}' != expect '00'")
        );
        let e = s
            .upload(
                NODE,
                "local",
                &pve_client::api::storage::Upload::new("iso", "hello.txt", b"x".to_vec()),
            )
            .await
            .expect_err("extension");
        assert_eq!(e.category(), Category::Validation);
        assert_eq!(
            e.param_errors()
                .and_then(|p| p.get("filename"))
                .map(String::as_str),
            Some("wrong file extension")
        );
        assert_checked(&checked.names(), &["POST upload"]);
    }
}
