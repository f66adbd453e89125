//! A storage's content over the wire: the listing with PVE's fields per
//! content type, allocation with PVE's naming rules and refusals, volume
//! attributes, deletion and copy as tasks, and `download-url` /
//! `query-url-metadata` answered from the table of known URLs.

mod common;

use common::{Auth, Pve, enc, start_scenario};
use fake_pve::model::storage::Volume;
use reqwest::Method;
use serde_json::{Value, json};

const GIB: u64 = 1 << 30;

const SCENARIO: &str = "\
storages:
  - { id: local, type: dir, path: /var/lib/vz, content: [iso, vztmpl, backup, snippets, import, images], size: 100G }
  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve, size: 10G }
  - { id: thick, type: lvm, vgname: vg0, size: 10G }
  - { id: isos, type: dir, path: /mnt/isos, content: [iso] }
vms:
  - { vmid: 100, name: web }
downloads:
  - { url: 'https://example.com/debian-12.iso', size: 658505728, checksum: 'abc123', checksum-algorithm: sha256, mimetype: 'application/x-iso9660-image; charset=binary' }
  - { url: 'https://example.com/gone.iso', fail: \"download failed: command 'wget --progress=dot:giga -O /x https://example.com/gone.iso' failed: exit code 8\" }
  - { url: 'https://self-signed.example.com/a.iso', size: 1024, insecure: true }
  - { url: 'https://example.com/get?id=7', size: 2048, filename: 'alpine.tar.xz' }
";

async fn task(pve: &Pve, auth: &Auth, upid: &str) -> (Value, Vec<String>) {
    let st = pve.task_status(upid, auth).await;
    let node = upid.split(':').nth(1).expect("node");
    let log = pve
        .get(&format!("/nodes/{node}/tasks/{}/log", enc(upid)), auth)
        .await
        .data();
    let lines = log
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l["t"].as_str().map(str::to_string))
        .collect();
    (st, lines)
}

/// Checks an answer of a `content/{volume}` call against the schema (the
/// shared helper cannot find these endpoints: the volume holds slashes).
fn fits(pve: &Pve, method: &str, data: &Value) {
    let e = fake_pve::spec::spec(pve.version)
        .endpoint(method, "/nodes/{node}/storage/{storage}/content/{volume}")
        .expect("endpoint");
    let problems = fake_pve::spec::returns::check(&e.returns, data);
    assert!(problems.is_empty(), "{problems:?}\n{data}");
}

fn upid(r: &common::Resp) -> String {
    r.data().as_str().expect("upid").to_string()
}

async fn list(pve: &Pve, auth: &Auth, sid: &str, query: &str) -> Vec<Value> {
    pve.get(&format!("/nodes/pve/storage/{sid}/content{query}"), auth)
        .await
        .data()
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn volids(items: &[Value]) -> Vec<&str> {
    items.iter().filter_map(|v| v["volid"].as_str()).collect()
}

fn seed_backup(pve: &Pve, file: &str, vmid: u32) {
    pve.run.state().with(|c| {
        let s = c.storages().existing("local").expect("local").clone();
        c.storages_mut().put_file_volume(
            &s,
            "pve",
            Volume {
                storage: "local".into(),
                name: format!("backup/{file}"),
                size: 4096,
                format: "vma.zst".into(),
                vmid,
                ctime: 1,
            },
        );
    });
}

#[tokio::test]
async fn the_listing_shows_every_content_type_with_its_fields_and_filters() {
    let pve = start_scenario(SCENARIO).await;
    let root = pve.root().await;
    let r = pve
        .post(
            "/nodes/pve/storage/local/content",
            &root,
            "vmid=100&filename=vm-100-disk-0.qcow2&size=1G",
        )
        .await;
    assert_eq!(r.data(), "local:100/vm-100-disk-0.qcow2");
    for (content, file, url) in [
        ("iso", "Debian-12.iso", "https://example.com/debian-12.iso"),
        ("iso", "alpha.iso", "https://example.com/alpha.iso"),
        ("vztmpl", "alpine.tar.xz", "https://example.com/get?id=7"),
        ("import", "disk.vmdk", "https://example.com/unknown.vmdk"),
    ] {
        let r = pve
            .post(
                "/nodes/pve/storage/local/download-url",
                &root,
                &format!("content={content}&filename={file}&url={}", enc(url)),
            )
            .await;
        let (st, _) = task(&pve, &root, &upid(&r)).await;
        assert_eq!(st["exitstatus"], "OK", "{file}");
    }
    seed_backup(&pve, "vzdump-qemu-100-2025_01_02-03_04_05.vma.zst", 100);
    seed_backup(&pve, "vzdump-qemu-200-2025_01_02-03_04_05.vma.zst", 200);

    let all = list(&pve, &root, "local", "").await;
    assert_eq!(
        volids(&all),
        [
            "local:100/vm-100-disk-0.qcow2",
            "local:backup/vzdump-qemu-100-2025_01_02-03_04_05.vma.zst",
            "local:backup/vzdump-qemu-200-2025_01_02-03_04_05.vma.zst",
            "local:import/disk.vmdk",
            "local:iso/alpha.iso",
            "local:iso/Debian-12.iso",
            "local:vztmpl/alpine.tar.xz",
        ],
        "sorted case-insensitively by volid"
    );
    let by = |id: &str| {
        all.iter()
            .find(|v| v["volid"] == id)
            .cloned()
            .unwrap_or(Value::Null)
    };
    let iso = by("local:iso/Debian-12.iso");
    assert_eq!(iso["content"], "iso");
    assert_eq!(iso["format"], "iso");
    assert_eq!(iso["size"], 658_505_728);
    assert_eq!(iso.get("vmid"), None);
    let tmpl = by("local:vztmpl/alpine.tar.xz");
    assert_eq!(tmpl["format"], "txz");
    assert_eq!(tmpl["size"], 2048);
    let imp = by("local:import/disk.vmdk");
    assert_eq!(imp["format"], "vmdk");
    assert_eq!(imp["size"], 512 << 20, "unknown URLs get the default size");
    let img = by("local:100/vm-100-disk-0.qcow2");
    assert_eq!(img["content"], "images");
    assert_eq!(img["format"], "qcow2");
    assert_eq!(img["size"], GIB);
    assert_eq!(img["vmid"], 100);
    let bak = by("local:backup/vzdump-qemu-100-2025_01_02-03_04_05.vma.zst");
    assert_eq!(bak["content"], "backup");
    assert_eq!(bak["format"], "vma.zst");
    assert_eq!(bak["subtype"], "qemu");
    assert_eq!(bak["vmid"], 100);
    assert_eq!(bak["ctime"], 1_735_787_045, "the time in the name");

    let isos = list(&pve, &root, "local", "?content=iso").await;
    assert_eq!(
        volids(&isos),
        ["local:iso/alpha.iso", "local:iso/Debian-12.iso"]
    );
    let mine = list(&pve, &root, "local", "?vmid=100").await;
    assert_eq!(
        volids(&mine),
        [
            "local:100/vm-100-disk-0.qcow2",
            "local:backup/vzdump-qemu-100-2025_01_02-03_04_05.vma.zst",
            "local:import/disk.vmdk",
        ],
        "iso and vztmpl have no owner; import is listed whatever the vmid"
    );
    assert!(
        list(&pve, &root, "local", "?content=rootdir")
            .await
            .is_empty()
    );
    assert!(
        list(&pve, &root, "local-lvm", "?content=iso")
            .await
            .is_empty(),
        "local-lvm is not configured for iso"
    );
    pve.get("/nodes/pve/storage/nope/content", &root)
        .await
        .assert_error(500, "storage 'nope' does not exist\n");
}

#[tokio::test]
async fn allocation_follows_pves_naming_rules_and_capacity() {
    let pve = start_scenario(SCENARIO).await;
    let root = pve.root().await;
    let alloc = |sid: &'static str, form: &'static str| {
        let pve = &pve;
        let root = &root;
        async move {
            pve.post(&format!("/nodes/pve/storage/{sid}/content"), root, form)
                .await
        }
    };
    assert_eq!(
        alloc("local-lvm", "vmid=100&filename=vm-100-disk-3&size=4G")
            .await
            .data(),
        "local-lvm:vm-100-disk-3"
    );
    let items = list(&pve, &root, "local-lvm", "").await;
    assert_eq!(items[0]["format"], "raw");
    assert_eq!(items[0]["size"], 4 * GIB);
    assert_eq!(items[0].get("used"), None, "lvmthin reports no used");
    let st = pve
        .get("/nodes/pve/storage/local-lvm/status", &root)
        .await
        .data();
    assert_eq!(st["used"], 4 * GIB, "the volume counts in the usage");
    assert_eq!(
        alloc("local-lvm", "vmid=100&filename=vm-100-disk-4&size=20G")
            .await
            .data(),
        "local-lvm:vm-100-disk-4",
        "a thin pool overcommits"
    );

    alloc("local-lvm", "vmid=100&filename=vm-100-disk-3&size=4G")
        .await
        .assert_error(
            500,
            "lvcreate 'pve/vm-100-disk-3' error:   Logical Volume \"vm-100-disk-3\" already exists in volume group \"pve\"\n",
        );
    alloc("local-lvm", "vmid=100&filename=vm-101-disk-0&size=4G")
        .await
        .assert_error(500, "illegal name 'vm-101-disk-0' - should be 'vm-100-*'\n");
    alloc("thick", "vmid=100&filename=vm-100-disk-0&size=20G")
        .await
        .assert_error(
            500,
            &format!(
                "not enough free space ({} < {})\n",
                10 * GIB,
                20 * 1024 * 1024
            ),
        );
    alloc("local", "vmid=100&filename=disk&size=1M")
        .await
        .assert_error(500, "unable to parse volume filename 'disk'\n");
    alloc(
        "local",
        "vmid=100&filename=vm-100-disk-0.raw&size=1M&format=qcow2",
    )
    .await
    .assert_param_error("format", "different storage formats (qcow2 != raw)");
    assert_eq!(
        alloc("local", "vmid=100&filename=vm-100-disk-0.raw&size=1024")
            .await
            .data(),
        "local:100/vm-100-disk-0.raw"
    );
    alloc("local", "vmid=100&filename=vm-100-disk-0.raw&size=1024")
        .await
        .assert_error(
            500,
            "disk image '/var/lib/vz/images/100/vm-100-disk-0.raw' already exists\n",
        );
    alloc("isos", "vmid=100&filename=vm-100-disk-0.raw&size=1")
        .await
        .data();
}

#[tokio::test]
async fn volumes_read_update_and_delete_as_pve_does() {
    let pve = start_scenario(SCENARIO).await;
    let root = pve.root().await;
    pve.post(
        "/nodes/pve/storage/local-lvm/content",
        &root,
        "vmid=100&filename=vm-100-disk-0&size=1G",
    )
    .await
    .data();
    let info = pve
        .get("/nodes/pve/storage/local-lvm/content/vm-100-disk-0", &root)
        .await
        .data();
    fits(&pve, "GET", &info);
    assert_eq!(info["path"], "/dev/pve/vm-100-disk-0");
    assert_eq!(info["size"], GIB);
    assert_eq!(info["format"], "raw");
    assert_eq!(info.get("notes"), None);
    let same = pve
        .get(
            &format!(
                "/nodes/pve/storage/local-lvm/content/{}",
                enc("local-lvm:vm-100-disk-0")
            ),
            &root,
        )
        .await
        .data();
    assert_eq!(same, info, "a full volume ID works too");
    pve.get(
        &format!(
            "/nodes/pve/storage/local-lvm/content/{}",
            enc("local:vm-100-disk-0")
        ),
        &root,
    )
    .await
    .assert_param_error("volume", "storage ID mismatch (local != local-lvm)\n");
    pve.get("/nodes/pve/storage/local/content/iso%2Fnone.iso", &root)
        .await
        .assert_error(
            500,
            "volume_size_info on 'local:iso/none.iso' failed - no format\n",
        );
    pve.put(
        "/nodes/pve/storage/local-lvm/content/vm-100-disk-0",
        &root,
        "protected=1",
    )
    .await
    .assert_error(
        500,
        "attribute 'protected' is not supported for storage type 'lvmthin'\n",
    );

    seed_backup(&pve, "vzdump-qemu-100-2025_01_02-03_04_05.vma.zst", 100);
    let bak =
        "/nodes/pve/storage/local/content/backup%2Fvzdump-qemu-100-2025_01_02-03_04_05.vma.zst";
    let info = pve.get(bak, &root).await.data();
    fits(&pve, "GET", &info);
    assert_eq!(info["notes"], "");
    assert_eq!(info["protected"], 0);
    assert_eq!(
        info["path"],
        "/var/lib/vz/dump/vzdump-qemu-100-2025_01_02-03_04_05.vma.zst"
    );
    pve.put(bak, &root, "notes=first%20line%0Asecond&protected=1")
        .await
        .data();
    let info = pve.get(bak, &root).await.data();
    assert_eq!(info["notes"], "first line\nsecond");
    assert_eq!(info["protected"], 1);
    let listed = list(&pve, &root, "local", "?content=backup").await;
    assert_eq!(listed[0]["notes"], "first line", "only the first line");
    assert_eq!(listed[0]["protected"], 1);

    let r = pve.delete(bak, &root).await;
    let id = upid(&r);
    assert!(id.contains(":imgdel:100@local:root@pam:"), "{id}");
    let (st, _) = task(&pve, &root, &id).await;
    assert_eq!(
        st["exitstatus"],
        "cannot remove protected volume 'backup/vzdump-qemu-100-2025_01_02-03_04_05.vma.zst' on 'local'"
    );
    assert_eq!(list(&pve, &root, "local", "?content=backup").await.len(), 1);
    pve.put(bak, &root, "protected=0").await.data();
    let r = pve
        .send(
            Method::DELETE,
            &format!("/api2/json{bak}?delay=5"),
            &root,
            None,
        )
        .await;
    assert_eq!(r.data(), Value::Null, "the task ended within the delay");
    assert!(
        list(&pve, &root, "local", "?content=backup")
            .await
            .is_empty()
    );

    let r = pve
        .delete("/nodes/pve/storage/local-lvm/content/vm-100-disk-0", &root)
        .await;
    let id = upid(&r);
    fits(&pve, "DELETE", &json!(id));
    assert!(id.contains(":imgdel:100@local-lvm:"), "{id}");
    let (st, log) = task(&pve, &root, &id).await;
    assert_eq!(st["exitstatus"], "OK");
    assert_eq!(
        log,
        [
            "  Logical volume \"vm-100-disk-0\" successfully removed.",
            "Removed volume 'local-lvm:vm-100-disk-0'",
            "TASK OK"
        ]
    );
    assert!(list(&pve, &root, "local-lvm", "").await.is_empty());
    let st = pve
        .get("/nodes/pve/storage/local-lvm/status", &root)
        .await
        .data();
    assert_eq!(st["used"], 0);
}

#[tokio::test]
async fn deleting_needs_datastore_allocate_and_copy_is_a_task() {
    let pve = start_scenario(&format!(
        "{SCENARIO}users:\n  - {{ userid: alice@pve, password: secret12 }}\nacl:\n  - {{ path: /storage/local, roles: [PVEDatastoreUser], users: [alice@pve] }}\n"
    ))
    .await;
    let root = pve.root().await;
    pve.post(
        "/nodes/pve/storage/local/content",
        &root,
        "vmid=100&filename=vm-100-disk-0.qcow2&size=1G",
    )
    .await
    .data();
    let alice = pve.login_as("alice@pve", "secret12").await;
    pve.delete(
        "/nodes/pve/storage/local/content/100%2Fvm-100-disk-0.qcow2",
        &alice,
    )
    .await
    .assert_error(
        403,
        "Permission check failed (/storage/local, Datastore.Allocate)\n",
    );

    let r = pve
        .post(
            "/nodes/pve/storage/local/content/100%2Fvm-100-disk-0.qcow2",
            &root,
            "target=100%2Fvm-100-disk-1.qcow2",
        )
        .await;
    let id = upid(&r);
    assert!(id.contains(":imgcopy::root@pam:"), "{id}");
    let (st, log) = task(&pve, &root, &id).await;
    assert_eq!(st["exitstatus"], "OK");
    assert_eq!(log.first(), Some(&format!("DEBUG: starting worker {id}")));
    let items = list(&pve, &root, "local", "?content=images").await;
    assert_eq!(
        volids(&items),
        [
            "local:100/vm-100-disk-0.qcow2",
            "local:100/vm-100-disk-1.qcow2"
        ]
    );
    assert_eq!(items[1]["size"], GIB);
}

#[tokio::test]
async fn download_url_refuses_early_and_fails_in_the_task_as_pve() {
    let pve = start_scenario(SCENARIO).await;
    let root = pve.root().await;
    let dl = |sid: &'static str, form: String| {
        let pve = &pve;
        let root = &root;
        async move {
            pve.post(
                &format!("/nodes/pve/storage/{sid}/download-url"),
                root,
                &form,
            )
            .await
        }
    };
    let url = enc("https://example.com/debian-12.iso");
    dl("local-lvm", format!("content=iso&filename=a.iso&url={url}"))
        .await
        .assert_error(
            500,
            "can't upload to storage type 'lvmthin', not a file based storage!\n",
        );
    dl(
        "isos",
        format!("content=vztmpl&filename=a.tar.zst&url={url}"),
    )
    .await
    .assert_error(
        500,
        "storage 'isos' is not configured for content-type 'vztmpl'\n",
    );
    dl("local", format!("content=iso&filename=a.img.txt&url={url}"))
        .await
        .assert_param_error("filename", "wrong file extension");
    dl("local", format!("content=import&filename=a.ovf&url={url}"))
        .await
        .assert_param_error("filename", "invalid filename or wrong extension");

    let r = dl(
        "local",
        format!(
            "content=iso&filename=sub%2Fmy%20debian.iso&url={url}&checksum=ABC123&checksum-algorithm=sha256"
        ),
    )
    .await;
    let id = upid(&r);
    assert!(id.contains(":download:my_debian.iso:root@pam:"), "{id}");
    let (st, log) = task(&pve, &root, &id).await;
    assert_eq!(st["exitstatus"], "OK");
    let dest = "/var/lib/vz/template/iso/my_debian.iso";
    assert_eq!(
        log.first().map(String::as_str),
        Some(&*format!(
            "downloading https://example.com/debian-12.iso to {dest}"
        ))
    );
    assert!(log.contains(&"calculating checksum...OK, checksum verified".to_string()));
    let n = log.len();
    assert_eq!(
        log[n - 2],
        format!("download of 'https://example.com/debian-12.iso' to '{dest}' finished")
    );
    assert_eq!(log[n - 1], "TASK OK");

    let again = dl(
        "local",
        format!("content=iso&filename=my_debian.iso&url={url}"),
    )
    .await;
    let (st, _) = task(&pve, &root, &upid(&again)).await;
    assert_eq!(
        st["exitstatus"],
        format!("refusing to override existing file '{dest}'")
    );

    let bad = dl(
        "local",
        format!("content=iso&filename=b.iso&url={url}&checksum=ffff&checksum-algorithm=sha256"),
    )
    .await;
    let (st, log) = task(&pve, &root, &upid(&bad)).await;
    assert_eq!(
        st["exitstatus"],
        "checksum mismatch: got 'abc123' != expect 'ffff'"
    );
    assert!(log.contains(&"calculating checksum...".to_string()));
    assert!(
        list(&pve, &root, "local", "?content=iso")
            .await
            .iter()
            .all(|v| v["volid"] != "local:iso/b.iso"),
        "a failed download leaves no file"
    );

    let gone = dl(
        "local",
        format!(
            "content=iso&filename=gone.iso&url={}",
            enc("https://example.com/gone.iso")
        ),
    )
    .await;
    let (st, _) = task(&pve, &root, &upid(&gone)).await;
    assert_eq!(
        st["exitstatus"],
        "download failed: command 'wget --progress=dot:giga -O /x https://example.com/gone.iso' failed: exit code 8"
    );

    let insecure = enc("https://self-signed.example.com/a.iso");
    let r = dl(
        "local",
        format!("content=iso&filename=s.iso&url={insecure}"),
    )
    .await;
    let (st, _) = task(&pve, &root, &upid(&r)).await;
    assert!(
        st["exitstatus"]
            .as_str()
            .is_some_and(|e| e.ends_with("failed: exit code 5")),
        "{st}"
    );
    let r = dl(
        "local",
        format!("content=iso&filename=s.iso&url={insecure}&verify-certificates=0"),
    )
    .await;
    assert_eq!(task(&pve, &root, &upid(&r)).await.0["exitstatus"], "OK");

    let r = dl(
        "local",
        format!("content=vztmpl&filename=t.tar.gz&url={url}&compression=gz"),
    )
    .await;
    assert_eq!(
        task(&pve, &root, &upid(&r)).await.0["exitstatus"],
        "decompression not supported for vztmpl"
    );
}

#[tokio::test]
async fn url_metadata_and_the_control_table_agree() {
    let pve = start_scenario(SCENARIO).await;
    let root = pve.root().await;
    let q = |url: &str| format!("/nodes/pve/query-url-metadata?url={}", enc(url));
    let m = pve
        .get(&q("https://example.com/debian-12.iso"), &root)
        .await
        .data();
    assert_eq!(
        m,
        json!({"filename": "debian-12.iso", "size": 658_505_728, "mimetype": "application/x-iso9660-image"})
    );
    let m = pve
        .get(&q("https://example.com/get?id=7"), &root)
        .await
        .data();
    assert_eq!(m["filename"], "alpine.tar.xz");
    pve.get(&q("https://example.com/nothing.iso"), &root)
        .await
        .assert_error(500, "invalid server response: '404 Not Found'\n");
    pve.get(&q("https://self-signed.example.com/a.iso"), &root)
        .await
        .assert_error(
            500,
            "invalid server response: '500 Can't connect to self-signed.example.com:443 (certificate verify failed)'\n",
        );

    let table = pve
        .send(Method::GET, "/_fake/downloads", &root, None)
        .await
        .data();
    assert_eq!(table.as_array().map(Vec::len), Some(4));
    let r = pve
        .send(
            Method::PUT,
            "/_fake/downloads",
            &root,
            Some((
                "application/json",
                r#"[{"url":"http://mirror.local/x.iso","size":5}]"#.to_string(),
            )),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let m = pve.get(&q("http://mirror.local/x.iso"), &root).await.data();
    assert_eq!(m["size"], 5);
    pve.get(&q("https://example.com/debian-12.iso"), &root)
        .await
        .assert_error(500, "invalid server response: '404 Not Found'\n");
    let r = pve
        .send(
            Method::PUT,
            "/_fake/downloads",
            &root,
            Some(("application/json", r#"[{"url":"ftp://x/y"}]"#.to_string())),
        )
        .await;
    assert_eq!(r.status, 400, "{r:?}");
}

/// A `multipart/form-data` body as browsers and PVE clients send it: the
/// fields first, the file part last.
fn multipart(fields: &[(&str, &str)], file: (&str, &[u8])) -> (String, String) {
    let boundary = "----fakepve-test-boundary-7d91";
    let mut body = String::new();
    for (k, v) in fields {
        body.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n"
        ));
    }
    body.push_str(&format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"filename\"; filename=\"{}\"\r\nContent-Type: application/octet-stream\r\n\r\n",
        file.0
    ));
    body.push_str(std::str::from_utf8(file.1).expect("text file"));
    body.push_str(&format!("\r\n--{boundary}--\r\n"));
    (format!("multipart/form-data; boundary={boundary}"), body)
}

async fn upload(
    pve: &Pve,
    auth: &Auth,
    sid: &str,
    fields: &[(&str, &str)],
    file: (&str, &[u8]),
) -> common::Resp {
    let (ctype, body) = multipart(fields, file);
    pve.send(
        Method::POST,
        &format!("/api2/json/nodes/pve/storage/{sid}/upload"),
        auth,
        Some((ctype.as_str(), body)),
    )
    .await
}

#[tokio::test]
async fn upload_streams_the_file_checks_its_checksum_and_stores_the_volume() {
    use sha2::Digest;
    let pve = start_scenario(SCENARIO).await;
    let root = pve.root().await;
    let data = "not really an ISO image\n".repeat(1000);
    let sha = hex(&sha2::Sha256::digest(data.as_bytes()));

    let r = upload(
        &pve,
        &root,
        "local",
        &[
            ("content", "iso"),
            ("checksum", &sha),
            ("checksum-algorithm", "sha256"),
        ],
        ("My Disk.iso", data.as_bytes()),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let id = upid(&r);
    assert!(id.contains(":imgcopy::root@pam:"), "{id}");
    let (st, log) = task(&pve, &root, &id).await;
    assert_eq!(st["exitstatus"], "OK", "{log:?}");
    let tmp = log[0]
        .strip_prefix("starting file import from: ")
        .expect("first line names the spool file");
    assert!(tmp.starts_with("/var/tmp/pveupload-"), "{tmp}");
    assert_eq!(
        log[1..],
        [
            "calculating checksum...OK, checksum verified".to_string(),
            "target node: pve".into(),
            "target file: /var/lib/vz/template/iso/My_Disk.iso".into(),
            format!("file size is: {}", data.len()),
            format!("command: cp -- {tmp} /var/lib/vz/template/iso/My_Disk.iso"),
            "finished file import successfully".into(),
            "TASK OK".into(),
        ]
    );
    let isos = list(&pve, &root, "local", "?content=iso").await;
    let vol = isos
        .iter()
        .find(|v| v["volid"] == "local:iso/My_Disk.iso")
        .expect("the uploaded volume is listed");
    assert_eq!(vol["size"], data.len() as u64);
    assert_eq!(vol["format"], "iso");

    // A wrong checksum fails the task; the file is not stored.
    let r = upload(
        &pve,
        &root,
        "local",
        &[
            ("content", "vztmpl"),
            ("checksum", "00ff"),
            ("checksum-algorithm", "md5"),
        ],
        ("alpine.tar.gz", data.as_bytes()),
    )
    .await;
    let (st, log) = task(&pve, &root, &upid(&r)).await;
    let md5 = hex(&md5::Md5::digest(data.as_bytes()));
    let msg = format!("checksum mismatch: got '{md5}' != expect '00ff'");
    assert_eq!(st["exitstatus"], msg);
    assert_eq!(
        log[1..],
        [
            "calculating checksum...".to_string(),
            format!("TASK ERROR: {msg}")
        ]
    );
    assert!(
        list(&pve, &root, "local", "?content=vztmpl")
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn upload_refuses_as_pve_before_any_task() {
    let pve = start_scenario(SCENARIO).await;
    let root = pve.root().await;
    let file = ("a.iso", b"x".as_slice());
    upload(
        &pve,
        &root,
        "local",
        &[("content", "iso")],
        ("notes.txt", b"x"),
    )
    .await
    .assert_param_error("filename", "wrong file extension");
    upload(
        &pve,
        &root,
        "local",
        &[("content", "import")],
        ("a.ovf", b"x"),
    )
    .await
    .assert_param_error("filename", "invalid filename or wrong extension");
    upload(&pve, &root, "local", &[("content", "backup")], file)
        .await
        .assert_param_error(
            "content",
            "value 'backup' does not have a value in the enumeration 'iso, vztmpl, import'",
        );
    upload(&pve, &root, "thick", &[("content", "iso")], file)
        .await
        .assert_error(500, "can't upload to storage type 'lvm'\n");
    upload(
        &pve,
        &root,
        "isos",
        &[("content", "vztmpl")],
        ("a.tar.gz", b"x"),
    )
    .await
    .assert_error(500, "storage 'isos' does not support 'vztmpl' content\n");
    upload(&pve, &root, "nope", &[("content", "iso")], file)
        .await
        .assert_error(500, "storage 'nope' does not exist\n");
    // Without a file part there is no spool file.
    pve.post(
        "/nodes/pve/storage/local/upload",
        &root,
        "content=iso&filename=a.iso",
    )
    .await
    .assert_error(500, "missing temporary file name\n");
    pve.post(
        "/nodes/pve/storage/local/upload",
        &root,
        "content=iso&filename=a.iso&tmpfilename=%2Fvar%2Ftmp%2Fpveupload-abc",
    )
    .await
    .assert_error(
        500,
        "temporary file '/var/tmp/pveupload-abc' does not exist\n",
    );
    // Without a login the call is refused.
    let anon = Auth::None;
    assert_eq!(
        upload(&pve, &anon, "local", &[("content", "iso")], file)
            .await
            .status,
        401
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

async fn isos(pve: &Pve, root: &Auth) -> String {
    volids(&list(pve, root, "local", "?content=iso").await).join(",")
}

async fn status(pve: &Pve, root: &Auth, id: String) -> Value {
    pve.task_status(&id, root).await["status"].clone()
}

/// With tasks that take time, a volume written or removed by a task
/// appears or goes when the task ends, as on PVE, not when it is asked.
#[tokio::test]
async fn task_volume_changes_take_effect_when_the_task_ends() {
    let mut latency = fake_pve::latency::Latency::instant();
    for kind in ["download", "imgcopy", "imgdel"] {
        latency.set_task_ms(kind, 3_000);
    }
    let s = fake_pve::model::scenario::Scenario::parse(SCENARIO, "test.yaml").expect("scenario");
    let pve = common::start_with(common::builder().scenario(s).latency(latency)).await;
    let root = pve.root().await;
    // download-url: the ISO is there once the task has ended.
    let r = pve
        .post(
            "/nodes/pve/storage/local/download-url",
            &root,
            &format!(
                "content=iso&filename=debian-12.iso&url={}",
                enc("https://example.com/debian-12.iso")
            ),
        )
        .await;
    let dl = upid(&r);
    assert_eq!(status(&pve, &root, dl.clone()).await, "running");
    assert_eq!(isos(&pve, &root).await, "");
    let (_, log) = task(&pve, &root, &dl).await;
    assert!(!log.iter().any(|l| l.starts_with("download of")), "{log:?}");
    pve.run.clock().advance(3);
    assert_eq!(status(&pve, &root, dl.clone()).await, "stopped");
    assert_eq!(isos(&pve, &root).await, "local:iso/debian-12.iso");

    // upload: the file is copied into the storage by the imgcopy task.
    let r = upload(
        &pve,
        &root,
        "local",
        &[("content", "iso")],
        ("up.iso", b"abc"),
    )
    .await;
    let up = upid(&r);
    assert_eq!(isos(&pve, &root).await, "local:iso/debian-12.iso");
    pve.run.clock().advance(3);
    assert_eq!(task(&pve, &root, &up).await.0["exitstatus"], "OK");
    assert_eq!(
        isos(&pve, &root).await,
        "local:iso/debian-12.iso,local:iso/up.iso"
    );

    // copy: the target appears at the end.
    let r = pve
        .post(
            "/nodes/pve/storage/local/content/iso%2Fup.iso",
            &root,
            "target=local%3Aiso%2Fcopy.iso",
        )
        .await;
    let cp = upid(&r);
    assert_eq!(isos(&pve, &root).await.matches(',').count(), 1);
    pve.run.clock().advance(3);
    assert_eq!(task(&pve, &root, &cp).await.0["exitstatus"], "OK");
    assert_eq!(
        isos(&pve, &root).await,
        "local:iso/copy.iso,local:iso/debian-12.iso,local:iso/up.iso"
    );

    // delete: the volume stays listed while imgdel runs; an interrupted
    // delete leaves it in place.
    let r = pve
        .delete(
            "/nodes/pve/storage/local/content/local%3Aiso%2Fcopy.iso",
            &root,
        )
        .await;
    let del = upid(&r);
    assert!(isos(&pve, &root).await.contains("copy.iso"));
    pve.run.clock().advance(3);
    assert_eq!(task(&pve, &root, &del).await.0["exitstatus"], "OK");
    assert!(!isos(&pve, &root).await.contains("copy.iso"));

    let r = pve
        .delete(
            "/nodes/pve/storage/local/content/local%3Aiso%2Fup.iso",
            &root,
        )
        .await;
    let del = upid(&r);
    pve.delete(&format!("/nodes/pve/tasks/{}", enc(&del)), &root)
        .await
        .data();
    pve.run.clock().advance(3);
    let (st, _) = task(&pve, &root, &del).await;
    assert_eq!(st["exitstatus"], "received interrupt");
    assert!(isos(&pve, &root).await.contains("up.iso"));
}

/// As pveproxy, an upload is authenticated from its headers before its
/// body is read: a client without credentials gets 401 while it is still
/// sending the file.
#[tokio::test]
async fn an_unauthenticated_upload_is_refused_before_its_body_is_read() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let s = fake_pve::model::scenario::Scenario::parse(SCENARIO, "test.yaml").expect("scenario");
    let pve = common::start_with(common::builder().scenario(s).tls(fake_pve::Tls::Off)).await;
    let mut conn = tokio::net::TcpStream::connect(pve.run.addr())
        .await
        .expect("connect");
    let head = "POST /api2/json/nodes/pve/storage/local/upload HTTP/1.1\r\n\
        Host: 127.0.0.1\r\n\
        Content-Type: multipart/form-data; boundary=XyZ\r\n\
        Content-Length: 10000000000\r\n\r\n\
        --XyZ\r\nContent-Disposition: form-data; name=\"content\"\r\n\r\niso\r\n";
    conn.write_all(head.as_bytes()).await.expect("send");
    let mut answer = vec![0u8; 512];
    let n = tokio::time::timeout(std::time::Duration::from_secs(10), conn.read(&mut answer))
        .await
        .expect("answered before the body was sent")
        .expect("read");
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 401 No ticket"), "{answer}");
}
