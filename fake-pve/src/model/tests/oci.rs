//! OCI images: references read as skopeo reads them, the emulated
//! registries' tags and blobs, `oci-registry-pull`'s checks and task, and
//! a container created from a pulled archive.

use rstest::rstest;

use super::{World, map, refused, rq};
use crate::model::lxc::CtCreateRequest;
use crate::model::oci::{self, PullRequest, Reference, Registry};

const SCENARIO: &str = r#"
nodes: [{ name: pve }]
storages:
  - { id: local, type: dir, path: /var/lib/vz, content: [vztmpl, iso, backup] }
  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve }
  - { id: isos, type: dir, path: /srv/iso, content: [iso] }
oci_images:
  - reference: registry.example:5000/apps/web:1.0
    layers: [4K, 2K]
    entrypoint: [/docker-entrypoint.sh]
    cmd: [nginx, -g, "daemon off;"]
    env: [PATH=/usr/bin, MODE=prod]
    volumes: [/var/cache/web]
    ostype: debian
  - reference: registry.example:5000/apps/web:1.1
    layers: [1K]
  - reference: alpine:3.20
    layers: [1K]
    cmd: [/bin/sh]
    ostype: alpine
"#;

fn world() -> World {
    World::from_yaml(SCENARIO)
}

fn registry(w: &World) -> &Registry {
    &w.c.storage.volumes().oci
}

fn pull(w: &World, storage: &str, reference: &str) -> PullRequest {
    PullRequest {
        node: "pve".into(),
        storage: storage.into(),
        reference: reference.into(),
        filename: None,
        pid: 4242,
        now: w.now(),
        stamp: "2026-09-21T12:00:00Z".into(),
    }
}

#[rstest]
#[case("alpine", "docker.io", "library/alpine", None)]
#[case("alpine:3.20", "docker.io", "library/alpine", Some("3.20"))]
#[case("docker.io/nginx:1", "docker.io", "library/nginx", Some("1"))]
#[case("index.docker.io/nginx", "docker.io", "library/nginx", None)]
#[case("bitnami/redis:7", "docker.io", "bitnami/redis", Some("7"))]
#[case("ghcr.io/org/app:v2", "ghcr.io", "org/app", Some("v2"))]
#[case("localhost/app", "localhost", "app", None)]
#[case("127.0.0.1:8006/lib/app:x", "127.0.0.1:8006", "lib/app", Some("x"))]
fn a_reference_is_read_as_skopeo_reads_it(
    #[case] text: &str,
    #[case] host: &str,
    #[case] repo: &str,
    #[case] tag: Option<&str>,
) {
    let r = Reference::parse(text).expect("parses");
    assert_eq!(r.host, host);
    assert_eq!(r.repository, repo);
    assert_eq!(r.tag.as_deref(), tag);
}

#[rstest]
fn tags_come_in_the_registry_s_order() {
    let w = world();
    assert_eq!(
        registry(&w)
            .list_tags("registry.example:5000/apps/web")
            .expect("tags"),
        ["1.0", "1.1"]
    );
    assert_eq!(registry(&w).list_tags("alpine").expect("tags"), ["3.20"]);
    assert_eq!(
        registry(&w)
            .list_tags("docker.io/library/alpine")
            .expect("tags"),
        ["3.20"]
    );
}

#[rstest]
#[case(
    "registry.example:5000/apps/none",
    "skopeo list-tags docker://registry.example:5000/apps/none"
)]
#[case("nowhere.example/app", "skopeo list-tags docker://nowhere.example/app")]
#[case("busybox", "skopeo list-tags docker://busybox")]
fn a_failed_listing_answers_the_command_that_failed(#[case] reference: &str, #[case] cmd: &str) {
    let w = world();
    assert_eq!(
        refused(registry(&w).list_tags(reference)),
        (500, format!("command '{cmd}' failed: exit code 1"))
    );
}

#[rstest]
#[case("isos", "storage 'isos' is not configured for content-type 'vztmpl'")]
#[case(
    "local-lvm",
    "can't upload to storage type 'lvmthin', not a file based storage!"
)]
#[case("nope", "storage 'nope' does not exist")]
fn a_pull_needs_a_file_storage_for_templates(#[case] storage: &str, #[case] msg: &str) {
    let w = world();
    let got = refused(w.c.storage.oci_pull_task(&pull(&w, storage, "alpine:3.20")));
    assert_eq!(got, (500, msg.to_string()));
}

#[rstest]
fn a_pull_writes_the_archive_when_its_task_ends() {
    let mut w = world();
    let worker =
        w.c.storage
            .oci_pull_task(&pull(&w, "local", "registry.example:5000/apps/web:1.0"))
            .expect("accepted");
    assert_eq!(worker.kind, "ociregistrypull");
    assert_eq!(worker.id, "web_1.0.tar");
    let img = &registry(&w).images()[0];
    let layers = oci::registry::layers(img);
    assert_eq!(
        layers.iter().map(Vec::len).collect::<Vec<_>>(),
        [4096, 2048]
    );
    let want: Vec<String> = std::iter::once("Getting image source signatures".to_string())
        .chain(
            layers
                .iter()
                .map(|l| format!("Copying blob {}", oci::digest(l))),
        )
        .chain([
            format!(
                "Copying config {}",
                oci::digest(&oci::registry::config_blob(img))
            ),
            "Writing manifest to image destination".to_string(),
        ])
        .collect();
    assert_eq!(worker.start_lines, want);
    let upid = w.run("pve", worker);
    assert_eq!(w.exit(&upid), "OK");
    let s = w.c.storage.find("local").expect("local").clone();
    let vol =
        w.c.storage
            .volumes()
            .get(&s, "pve", "vztmpl/web_1.0.tar")
            .expect("archive");
    assert_eq!(vol.format, "tar");
    // Seven entries (layout, index, manifest, config, two layers, two
    // directories) of a header each, data in 512-byte blocks, the end.
    assert!(vol.size > 4096 + 2048 + 8 * 512, "{}", vol.size);
    assert_eq!(vol.size % 512, 0);
    let again = refused(w.c.storage.oci_pull_task(&pull(
        &w,
        "local",
        "registry.example:5000/apps/web:1.0",
    )));
    assert_eq!(
        again,
        (
            500,
            "refusing to override existing file 'web_1.0.tar'".into()
        )
    );
}

#[rstest]
#[case(
    "registry.example:5000/apps/web:2.0",
    "reading manifest 2.0 in registry.example:5000/apps/web: manifest unknown"
)]
#[case(
    "nowhere.example/app:1",
    "pinging container registry nowhere.example: Get \\\"https://nowhere.example/v2/\\\": dial tcp: lookup nowhere.example: no such host"
)]
#[case(
    "busybox:1",
    "reading manifest 1 in docker.io/library/busybox: manifest unknown"
)]
fn a_pull_of_what_the_registry_lacks_fails_in_its_task(#[case] reference: &str, #[case] msg: &str) {
    let mut w = world();
    let worker =
        w.c.storage
            .oci_pull_task(&pull(&w, "local", reference))
            .expect("accepted");
    assert_eq!(
        worker.start_lines,
        [format!(
            "time=\"2026-09-21T12:00:00Z\" level=fatal msg=\"initializing source docker://{reference}: {msg}\""
        )]
    );
    let file = crate::model::storage::content::normalize_filename(reference);
    let upid = w.run("pve", worker);
    assert_eq!(
        w.exit(&upid),
        format!(
            "command 'skopeo copy docker://{reference} oci-archive:/var/lib/vz/template/cache/{file}.tar.tmp.4242' failed: exit code 1"
        )
    );
}

#[rstest]
fn a_file_name_may_be_given_and_is_normalised() {
    let w = world();
    let mut r = pull(&w, "local", "alpine:3.20");
    r.filename = Some("my image/ä.x".into());
    let worker = w.c.storage.oci_pull_task(&r).expect("accepted");
    assert_eq!(worker.id, "_.x.tar");
}

#[rstest]
fn the_registry_serves_manifests_and_blobs_by_digest() {
    let w = world();
    let r = registry(&w);
    let img = r
        .manifest_of("registry.example:5000", "apps/web", "1.0")
        .expect("by tag");
    let manifest: serde_json::Value = serde_json::from_slice(&oci::manifest(img)).expect("json");
    let digest = oci::digest(&oci::manifest(img));
    assert_eq!(
        r.manifest_of("registry.example:5000", "apps/web", &digest)
            .map(|i| &i.reference),
        Some(&img.reference)
    );
    let config = manifest["config"]["digest"]
        .as_str()
        .expect("config digest");
    let blob = r
        .blob("registry.example:5000", "apps/web", config)
        .expect("config blob");
    let doc: serde_json::Value = serde_json::from_slice(&blob.bytes).expect("json");
    assert_eq!(
        doc["config"]["Entrypoint"],
        serde_json::json!(["/docker-entrypoint.sh"])
    );
    assert_eq!(doc["architecture"], "amd64");
    let layer = manifest["layers"][1]["digest"]
        .as_str()
        .expect("layer digest");
    let blob = r
        .blob("registry.example:5000", "apps/web", layer)
        .expect("layer blob");
    assert_eq!(blob.bytes.len(), 2048);
    assert_eq!(oci::digest(&blob.bytes), layer);
    assert!(
        r.blob("registry.example:5000", "apps/other", layer)
            .is_none()
    );
    assert!(
        r.manifest_of("registry.example:5000", "apps/web", "9")
            .is_none()
    );
}

#[rstest]
#[case("[{reference: alpine}]", "image 'alpine' has no tag")]
#[case(
    "[{reference: 'a:1', layers: [0]}]",
    "image 'a:1' has a layer of 0 bytes"
)]
#[case(
    "[{reference: 'a:1'}, {reference: 'docker.io/library/a:1'}]",
    "image 'docker.io/library/a:1' is declared twice"
)]
fn a_badly_declared_image_is_refused(#[case] yaml: &str, #[case] msg: &str) {
    let images: Vec<oci::Image> = serde_yaml::from_str(yaml).expect("yaml");
    assert_eq!(Registry::new(images).expect_err("refused"), msg);
}

fn create_from(w: &mut World, vmid: u32, template: &str, conf: &[(&str, &str)]) -> String {
    let req = CtCreateRequest {
        vmid,
        node: "pve".into(),
        ostemplate: template.into(),
        storage: None,
        config: map(conf),
        unprivileged: None,
        is_root: true,
        start: None,
        pool: None,
    };
    let worker =
        w.c.ct_ops()
            .create_ct(req, &mut rq())
            .expect("create accepted");
    w.run("pve", worker)
}

#[rstest]
fn a_container_from_a_pulled_image_takes_its_config() {
    let mut w = world();
    let worker =
        w.c.storage
            .oci_pull_task(&pull(&w, "local", "registry.example:5000/apps/web:1.0"))
            .expect("accepted");
    let upid = w.run("pve", worker);
    assert_eq!(w.exit(&upid), "OK");
    let upid = create_from(
        &mut w,
        300,
        "local:vztmpl/web_1.0.tar",
        &[
            ("rootfs", "local-lvm:1"),
            ("net0", "name=eth0,bridge=vmbr0,ip=dhcp"),
        ],
    );
    assert_eq!(w.exit(&upid), "OK");
    let log = w.task(&upid).log.clone();
    assert!(log.iter().any(|l| l == "Detected OCI archive"), "{log:?}");
    assert!(
        log.iter()
            .any(|l| l == "creating base directory for volume at /var/cache/web")
    );
    assert!(
        log.iter()
            .any(|l| l == "Auto-Enabling host-managed network for network device net0.")
    );
    assert!(
        !log.iter().any(|l| l.starts_with("Creating SSH host key")),
        "{log:?}"
    );
    let conf = |k: &str| {
        w.c.guests()
            .ct_by_id(300)
            .and_then(|c| c.config().get(k).cloned())
    };
    assert_eq!(
        conf("entrypoint").as_deref(),
        Some("/docker-entrypoint.sh nginx -g 'daemon off;'")
    );
    assert_eq!(conf("cmode").as_deref(), Some("console"));
    assert_eq!(conf("env").as_deref(), Some("PATH=/usr/bin\0MODE=prod"));
    assert_eq!(conf("ostype").as_deref(), Some("debian"));
    assert!(
        conf("net0").is_some_and(|n| n.contains("host-managed=1")),
        "{:?}",
        conf("net0")
    );
}

#[rstest]
fn an_image_without_an_init_command_of_its_own_keeps_the_console() {
    let mut w = world();
    let mut r = pull(&w, "local", "registry.example:5000/apps/web:1.1");
    r.filename = Some("plain".into());
    let worker = w.c.storage.oci_pull_task(&r).expect("accepted");
    w.run("pve", worker);
    let upid = create_from(
        &mut w,
        301,
        "local:vztmpl/plain.tar",
        &[("rootfs", "local-lvm:1")],
    );
    assert_eq!(w.exit(&upid), "OK");
    let conf = |k: &str| {
        w.c.guests()
            .ct_by_id(301)
            .and_then(|c| c.config().get(k).cloned())
    };
    assert_eq!(conf("entrypoint"), None);
    assert_eq!(conf("cmode"), None);
    assert_eq!(conf("ostype").as_deref(), Some("unmanaged"));
}
