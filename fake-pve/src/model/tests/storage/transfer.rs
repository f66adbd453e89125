//! Downloads, uploads, file content and backups.

use super::*;

// ---------------------------------------------------------------------
// Downloads, uploads, file content and backups

const FILES: &str = r#"
storages:
  - { id: local, type: dir, path: /var/lib/vz, content: [iso, vztmpl, backup, images] }
  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve }
downloads:
  - { url: 'https://example.org/debian.iso', size: 1000, checksum: abc, checksum-algorithm: sha256 }
  - { url: 'https://self-signed.example/x.iso', size: 10, insecure: true }
  - { url: 'https://example.org/broken.iso', fail: 'download failed: 500 Internal Server Error' }
"#;

fn files() -> World {
    World::from_yaml(FILES)
}

fn download(url: &str, filename: &str) -> DownloadRequest {
    DownloadRequest {
        node: "pve".into(),
        storage: "local".into(),
        content: "iso".into(),
        filename: filename.into(),
        url: url.into(),
        checksum: None,
        checksum_algorithm: None,
        compression: None,
        verify_certificates: true,
        pid: 1234,
        now: super::T0,
    }
}

fn run_download(w: &mut World, r: &DownloadRequest) -> String {
    let worker = w.c.storage.download_task(r).expect("accepted");
    let upid = w.run_as("pve", worker, "root@pam", 1_000);
    w.tick(1_000);
    w.exit(&upid)
}

#[rstest]
fn a_download_appears_when_its_task_ends() {
    let mut w = files();
    let worker =
        w.c.storage
            .download_task(&download("https://example.org/debian.iso", "debian.iso"))
            .expect("accepted");
    assert_eq!(worker.kind, "download");
    assert_eq!(worker.id, "debian.iso");
    let upid = w.run_as("pve", worker, "root@pam", 1_000);
    assert!(
        w.c.storage.volume("local:iso/debian.iso", "pve").is_none(),
        "not before the end"
    );
    w.tick(1_000);
    assert_eq!(w.exit(&upid), "OK");
    let v =
        w.c.storage
            .volume("local:iso/debian.iso", "pve")
            .expect("downloaded");
    assert_eq!((v.size, v.format.as_str()), (1000, "iso"));
    let log = &w.task(&upid).log;
    assert_eq!(
        log[0],
        "downloading https://example.org/debian.iso to /var/lib/vz/template/iso/debian.iso"
    );
    assert_eq!(
        log[log.len() - 2],
        "download of 'https://example.org/debian.iso' to '/var/lib/vz/template/iso/debian.iso' finished"
    );
}

#[rstest]
fn a_second_download_refuses_to_override() {
    let mut w = files();
    let r = download("https://example.org/debian.iso", "debian.iso");
    assert_eq!(run_download(&mut w, &r), "OK");
    assert_eq!(
        run_download(&mut w, &r),
        "refusing to override existing file '/var/lib/vz/template/iso/debian.iso'"
    );
    let with_sum = DownloadRequest {
        checksum: Some("ABC".into()),
        checksum_algorithm: Some("sha256".into()),
        ..r
    };
    assert_eq!(
        run_download(&mut w, &with_sum),
        "OK",
        "the same file is kept"
    );
}

#[rstest]
#[case(Some("abc"), "OK")]
#[case(Some("def"), "checksum mismatch: got 'abc' != expect 'def'")]
fn download_checksums(#[case] sum: Option<&str>, #[case] exit: &str) {
    let mut w = files();
    let r = DownloadRequest {
        checksum: sum.map(str::to_string),
        checksum_algorithm: Some("sha256".into()),
        ..download("https://example.org/debian.iso", "debian.iso")
    };
    assert_eq!(run_download(&mut w, &r), exit);
    assert_eq!(
        w.c.storage.volume("local:iso/debian.iso", "pve").is_some(),
        exit == "OK"
    );
}

#[rstest]
fn an_untrusted_certificate_fails_unless_unverified() {
    let mut w = files();
    let r = download("https://self-signed.example/x.iso", "x.iso");
    assert_eq!(
        run_download(&mut w, &r),
        "download failed: command 'wget --progress=dot:giga -O /var/lib/vz/template/iso/x.iso.tmp_dwnl.1234 https://self-signed.example/x.iso' failed: exit code 5"
    );
    let r = DownloadRequest {
        verify_certificates: false,
        ..r
    };
    assert_eq!(run_download(&mut w, &r), "OK");
}

#[rstest]
fn a_failing_url_ends_the_task_with_its_error() {
    let mut w = files();
    let r = download("https://example.org/broken.iso", "broken.iso");
    assert_eq!(
        run_download(&mut w, &r),
        "download failed: 500 Internal Server Error"
    );
}

#[rstest]
fn decompression_is_for_isos_only() {
    let mut w = files();
    let r = DownloadRequest {
        content: "vztmpl".into(),
        compression: Some("gz".into()),
        ..download("https://example.org/t.tar.zst", "t.tar.zst")
    };
    assert_eq!(
        run_download(&mut w, &r),
        "decompression not supported for vztmpl"
    );
}

#[rstest]
#[case("local", "iso", "x.txt", 400, "filename: wrong file extension")]
#[case(
    "local",
    "import",
    "x.ovf",
    500,
    "storage 'local' is not configured for content-type 'import'"
)]
#[case(
    "local-lvm",
    "iso",
    "x.iso",
    500,
    "can't upload to storage type 'lvmthin', not a file based storage!"
)]
fn download_checks(
    #[case] sid: &str,
    #[case] ct: &str,
    #[case] file: &str,
    #[case] code: u16,
    #[case] msg: &str,
) {
    let w = files();
    assert_eq!(
        refused(w.c.storage.download_check(sid, "pve", ct, file)),
        (code, msg.to_string())
    );
}

#[rstest]
#[case("../../etc/passwd.iso", "passwd.iso")]
#[case("my file (1).iso", "my_file__1_.iso")]
#[case("C:\\isos\\x.iso", "x.iso")]
fn file_names_are_normalised(#[case] given: &str, #[case] stored: &str) {
    assert_eq!(normalize_filename(given), stored);
}

fn upload(content: &str, filename: &str) -> UploadRequest {
    UploadRequest {
        node: "pve".into(),
        storage: "local".into(),
        content: content.into(),
        filename: filename.into(),
        tmpfilename: "/var/tmp/pveupload-0123".into(),
        size: 4096,
        ova: None,
        checksum: None,
        now: super::T0,
    }
}

#[rstest]
#[case(
    "local-lvm",
    "iso",
    "x.iso",
    500,
    "can't upload to storage type 'lvmthin'"
)]
#[case(
    "local",
    "backup",
    "x.vma",
    400,
    "content: upload content type 'backup' not allowed"
)]
#[case(
    "local",
    "import",
    "disk.qcow2",
    500,
    "storage 'local' does not support 'import' content"
)]
#[case("local", "vztmpl", "x.zip", 400, "filename: wrong file extension")]
fn upload_checks(
    #[case] sid: &str,
    #[case] ct: &str,
    #[case] file: &str,
    #[case] code: u16,
    #[case] msg: &str,
) {
    let w = files();
    assert_eq!(
        refused(w.c.storage.upload_check(sid, "pve", ct, file)),
        (code, msg.to_string())
    );
}

#[rstest]
fn an_upload_replaces_a_file_of_the_same_name() {
    let mut w = files();
    for size in [4096, 8192] {
        let r = UploadRequest {
            size,
            ..upload("iso", "x.iso")
        };
        let worker = w.c.storage.upload_task(&r).expect("accepted");
        assert_eq!((worker.kind.as_str(), worker.id.as_str()), ("imgcopy", ""));
        let upid = w.run("pve", worker);
        assert_eq!(w.exit(&upid), "OK");
        assert_eq!(
            w.c.storage.volume("local:iso/x.iso", "pve").map(|v| v.size),
            Some(size)
        );
    }
}

#[rstest]
fn an_upload_with_a_wrong_checksum_fails() {
    let mut w = files();
    let r = UploadRequest {
        checksum: Some(("aaa".into(), "bbb".into())),
        ..upload("iso", "x.iso")
    };
    let worker = w.c.storage.upload_task(&r).expect("accepted");
    let upid = w.run("pve", worker);
    assert_eq!(
        w.exit(&upid),
        "checksum mismatch: got 'bbb' != expect 'aaa'"
    );
    assert!(w.c.storage.volume("local:iso/x.iso", "pve").is_none());
}

#[rstest]
#[case("https://example.org/debian.iso", true, Ok(("debian.iso", Some(1000), "application/x-iso9660-image")))]
#[case(
    "https://example.org/none.iso",
    true,
    Err("invalid server response: '404 Not Found'")
)]
#[case(
    "https://self-signed.example/x.iso",
    true,
    Err(
        "invalid server response: '500 Can't connect to self-signed.example:443 (certificate verify failed)'"
    )
)]
#[case("https://self-signed.example/x.iso", false, Ok(("x.iso", Some(10), "application/x-iso9660-image")))]
fn url_metadata(
    #[case] url: &str,
    #[case] verify: bool,
    #[case] want: Result<(&str, Option<u64>, &str), &str>,
) {
    let w = files();
    let got = w.c.storage.query_url_metadata(url, verify);
    match want {
        Ok((name, size, mime)) => {
            let v = got.expect("metadata");
            assert_eq!(v.filename.as_deref(), Some(name));
            assert_eq!(v.size, size);
            assert_eq!(v.mimetype, mime);
        }
        Err(msg) => assert_eq!(refused(got), (500, msg.to_string())),
    }
}

fn put_backup(w: &mut World, name: &str) {
    let s = w.c.storage.existing("local").expect("local").clone();
    w.c.storage.put_file_volume(
        &s,
        "pve",
        Volume {
            storage: "local".into(),
            name: format!("backup/{name}"),
            size: 1 << 20,
            format: "vma.zst".into(),
            vmid: 0,
            ctime: super::T0,
        },
    );
}

#[rstest]
fn backups_list_their_guest_time_notes_and_protection() {
    let mut w = files();
    put_backup(&mut w, "vzdump-qemu-100-2026_09_01-10_20_30.vma.zst");
    w.c.storage
        .update_volume_attrs(
            "local",
            "pve",
            "backup/vzdump-qemu-100-2026_09_01-10_20_30.vma.zst",
            Some("first line\nsecond".into()),
            Some(true),
        )
        .expect("updated");
    let items =
        w.c.content_list("local", "pve", Some("backup"), None)
            .expect("list");
    let items = crate::model::tests::rows(&items);
    assert_eq!(items.len(), 1);
    let b = &items[0];
    assert_eq!(b["subtype"], json!("qemu"));
    assert_eq!(b["vmid"], json!(100));
    assert_eq!(b["ctime"], json!(1_788_258_030), "from the file name");
    assert_eq!(b["notes"], json!("first line"));
    assert_eq!(b["protected"], json!(1));
    let (_, plan) =
        w.c.storage
            .plan_volume_delete(
                "local",
                "pve",
                "backup/vzdump-qemu-100-2026_09_01-10_20_30.vma.zst",
            )
            .expect("planned");
    assert_eq!(
        plan,
        Err(crate::model::tasks::TaskFailure("cannot remove protected volume 'backup/vzdump-qemu-100-2026_09_01-10_20_30.vma.zst' on 'local'".into()))
    );
}

#[rstest]
fn backups_of_other_guests_are_filtered_by_vmid() {
    let mut w = files();
    put_backup(&mut w, "vzdump-qemu-100-2026_09_01-10_20_30.vma.zst");
    put_backup(&mut w, "vzdump-qemu-101-2026_09_01-10_20_30.vma.zst");
    let items =
        w.c.content_list("local", "pve", None, Some(101))
            .expect("list");
    let items = crate::model::tests::rows(&items);
    let volids: Vec<&str> = items.iter().filter_map(|i| i["volid"].as_str()).collect();
    assert_eq!(
        volids,
        ["local:backup/vzdump-qemu-101-2026_09_01-10_20_30.vma.zst"]
    );
}

#[rstest]
#[case("iso/x.iso", Some("n"), None, "only backups can have notes")]
#[case(
    "iso/x.iso",
    None,
    Some(true),
    "only backups support attribute 'protected'"
)]
fn attributes_are_for_backups(
    #[case] name: &str,
    #[case] notes: Option<&str>,
    #[case] protected: Option<bool>,
    #[case] msg: &str,
) {
    let mut w = files();
    let worker =
        w.c.storage
            .upload_task(&upload("iso", "x.iso"))
            .expect("accepted");
    w.run("pve", worker);
    assert_eq!(
        refused(w.c.storage.update_volume_attrs(
            "local",
            "pve",
            name,
            notes.map(str::to_string),
            protected
        )),
        (500, msg.to_string())
    );
}

#[rstest]
fn notes_on_lvm_are_not_supported() {
    let mut w = World::from_yaml(super::LAB);
    assert_eq!(
        refused(w.c.storage.update_volume_attrs("local-lvm", "pve", "vm-100-disk-0", Some("n".into()), None)),
        (
            500,
            "volume notes are not supported for PVE::Storage::LvmThinPlugin at /usr/share/perl5/PVE/Storage/Plugin.pm line 1300."
                .into()
        )
    );
}

#[rstest]
fn an_inactive_storage_has_no_used_fraction(lab: World) {
    let mut s = lab.c.storage.existing("local-lvm").expect("s").clone();
    let st = lab.c.storage.status(&s, "pve", None).expect("listed");
    assert!(st.used_fraction.is_some());
    s.disable = true;
    let st = lab.c.storage.status(&s, "pve", None).expect("listed");
    assert!(st.used_fraction.is_none());
    assert_eq!(st.enabled, 0);
}
