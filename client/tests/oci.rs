//! OCI registries (`api::oci`) against an in-process fake-pve whose
//! emulated registry holds two images: tags, a pull into `local`, a
//! container from the pulled image, and the registry's own `/v2/` API,
//! in both authentication modes, every answer checked against the schema.

mod common;

use common::{MODES, ROOT_TOKEN, ROOT_TOKEN_SECRET, checked_client, start};
use fake_pve::Running;
use pve_client::Error;
use pve_client::api::lxc::CreateCt;

const NODE: &str = "pve";
const WEB: &str = "registry.example:5000/apps/web";

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .expect("http")
}

/// Declares the registry's images through `PUT /_fake/oci-images`.
async fn declare_images(run: &Running) {
    let body = serde_json::json!([
        { "reference": format!("{WEB}:1.0"), "layers": ["8K"],
          "entrypoint": ["/entry.sh"], "cmd": ["serve"], "env": ["PORT=80"], "ostype": "debian" },
        { "reference": format!("{WEB}:1.1") },
    ]);
    let r = http()
        .put(format!("{}/_fake/oci-images", run.url()))
        .header(
            "Authorization",
            format!("PVEAPIToken={ROOT_TOKEN}={ROOT_TOKEN_SECRET}"),
        )
        .json(&body)
        .send()
        .await
        .expect("declare images");
    assert!(r.status().is_success(), "{r:?}");
}

fn task_failed(e: &Error) -> &str {
    match e {
        Error::TaskFailed { exitstatus, .. } => exitstatus,
        other => panic!("expected a failed task, got {other:?}"),
    }
}

#[tokio::test]
async fn tags_pull_and_a_container_from_the_image() {
    for (n, mode) in MODES.into_iter().enumerate() {
        let run = start().await;
        declare_images(&run).await;
        let (pve, _checked) = checked_client(&run, mode);
        let s = pve.storage();

        let tags = s.query_oci_repo_tags(NODE, WEB).await.expect("tags");
        assert_eq!(tags, ["1.0", "1.1"], "{mode:?}");
        let e = s
            .query_oci_repo_tags(NODE, "registry.example:5000/apps/none")
            .await
            .expect_err("unknown repository");
        assert_eq!(
            e.message(),
            "command 'skopeo list-tags docker://registry.example:5000/apps/none' failed: exit code 1"
        );

        let st = s
            .oci_registry_pull_and_wait(NODE, "local", &format!("{WEB}:1.0"), None)
            .await
            .expect("pull");
        assert_eq!(
            (st.kind.as_str(), st.id.as_str()),
            ("ociregistrypull", "web_1.0.tar")
        );
        let e = s
            .oci_registry_pull(NODE, "local", &format!("{WEB}:1.0"), None)
            .await
            .expect_err("exists");
        assert_eq!(
            e.message(),
            "refusing to override existing file 'web_1.0.tar'"
        );
        let e = s
            .oci_registry_pull_and_wait(NODE, "local", &format!("{WEB}:2.0"), None)
            .await
            .expect_err("no such tag");
        assert!(
            task_failed(&e).starts_with(&format!(
                "command 'skopeo copy docker://{WEB}:2.0 oci-archive:/var/lib/vz/template/cache/web_2.0.tar.tmp."
            )),
            "{e}"
        );

        let vmid = 300 + u32::try_from(n).expect("small");
        let create = CreateCt::new(vmid, "local:vztmpl/web_1.0.tar")
            .rootfs("local-lvm:1")
            .net(0, "name=eth0,bridge=vmbr0,ip=dhcp");
        let upid = pve.lxc().create_vm(NODE, &create).await.expect("create");
        pve.tasks().wait(&upid).await.expect("created");
        let conf = pve
            .lxc()
            .vm_config(NODE, vmid, false)
            .await
            .expect("config");
        assert_eq!(conf.raw["entrypoint"], "/entry.sh serve");
        assert_eq!(conf.raw["cmode"], "console");
        assert_eq!(conf.raw["env"], "PORT=80");
        assert_eq!(conf.ostype.as_deref(), Some("debian"));
        assert!(conf.nets[&0].contains("host-managed=1"), "{:?}", conf.nets);
    }
}

#[tokio::test]
async fn the_registry_serves_the_image_over_its_own_api() {
    let run = start().await;
    declare_images(&run).await;
    let get = |path: &str| {
        http()
            .get(format!("{}/v2/{path}", run.url()))
            .header("Host", "registry.example:5000")
            .send()
    };
    let tags: serde_json::Value = get("apps/web/tags/list")
        .await
        .expect("tags")
        .json()
        .await
        .expect("json");
    assert_eq!(
        tags,
        serde_json::json!({ "name": "apps/web", "tags": ["1.0", "1.1"] })
    );
    let r = get("apps/web/manifests/1.0").await.expect("manifest");
    assert_eq!(r.status(), 200);
    let digest = r.headers()["docker-content-digest"]
        .to_str()
        .expect("digest")
        .to_string();
    let bytes = r.bytes().await.expect("body");
    assert_eq!(digest, fake_pve::model::oci::digest(&bytes));
    let manifest: serde_json::Value = serde_json::from_slice(&bytes).expect("json");
    let layer = manifest["layers"][0]["digest"].as_str().expect("layer");
    let blob = get(&format!("apps/web/blobs/{layer}"))
        .await
        .expect("blob")
        .bytes()
        .await
        .expect("bytes");
    assert_eq!(blob.len(), 8192);
    assert_eq!(fake_pve::model::oci::digest(&blob), layer);
    let r = get("apps/web/manifests/9.9").await.expect("answer");
    assert_eq!(r.status(), 404);
    let err: serde_json::Value = r.json().await.expect("json");
    assert_eq!(err["errors"][0]["code"], "MANIFEST_UNKNOWN");
    let r = http()
        .get(format!("{}/v2/apps/web/tags/list", run.url()))
        .header("Host", "other.example")
        .send()
        .await
        .expect("answer");
    assert_eq!(r.status(), 404);
}
