//! PVE 9.2's custom CPU models and CPU flags (`api::cpu_models`) against
//! an in-process fake-pve; every answer is checked against the schema.

mod common;

use common::{Mode, checked_client, start};
use pve_client::api::cpu_models::CpuModelSpec;

const NODE: &str = "pve";

#[tokio::test]
async fn a_custom_model_is_made_read_changed_listed_and_removed() {
    let run = start().await;
    let (pve, checked) = checked_client(&run, Mode::Token);
    let models = pve.cpu_models();
    assert!(models.config().await.expect("list").is_empty());

    let spec = CpuModelSpec {
        flags: Some("+aes;+avx2".into()),
        hidden: Some(false),
        ..CpuModelSpec::reporting("Skylake-Server")
    };
    models.create("custom-fast", &spec).await.expect("create");
    let err = models.create("fast", &spec).await.expect_err("taken");
    assert!(
        err.to_string()
            .contains("custom CPU model 'fast' already exists"),
        "{err}"
    );

    let listed = models.config().await.expect("list");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].cputype, "custom-fast");
    assert_eq!(listed[0].hidden, Some(false));
    let info = models.info("fast").await.expect("info");
    assert_eq!(info.reported_model.as_deref(), Some("Skylake-Server"));
    assert_eq!(info.flags.as_deref(), Some("+aes;+avx2"));
    // `get_custom_model` leaves out a false `hidden`.
    assert_eq!(info.hidden, None);
    let digest = info.digest.clone().expect("digest");

    let change = CpuModelSpec {
        level: Some(30),
        ..CpuModelSpec::default()
    };
    models
        .update("fast", &change, &["flags"], Some(&digest))
        .await
        .expect("update");
    let info = models.info("custom-fast").await.expect("info");
    assert_eq!(info.level, Some(30));
    assert_eq!(info.flags, None);
    let err = models
        .update("fast", &change, &[], Some(&digest))
        .await
        .expect_err("stale digest");
    assert!(
        err.to_string().contains("detected modified configuration"),
        "{err}"
    );

    // The node lists it with the vendor of the model it reports.
    let cpus = pve.hardware().cpu_models(NODE).await.expect("cpu models");
    let custom = cpus
        .iter()
        .find(|m| m["name"] == "custom-fast")
        .expect("listed");
    assert_eq!(custom["custom"], 1);
    assert_eq!(custom["vendor"], "GenuineIntel");

    models.delete("fast").await.expect("delete");
    let err = models.info("fast").await.expect_err("gone");
    assert!(
        err.to_string().contains("Custom cputype 'fast' not found"),
        "{err}"
    );
    let names = checked.names();
    for call in [
        "POST create",
        "GET config",
        "GET info",
        "PUT update",
        "DELETE delete",
    ] {
        assert!(
            names.iter().any(|n| n == call),
            "{call} not checked: {names:?}"
        );
    }
}

#[tokio::test]
async fn the_cluster_s_cpu_flags_say_which_nodes_support_them() {
    let run = start().await;
    let (pve, _checked) = checked_client(&run, Mode::Password);
    let flags = pve.cpu_models().cpu_flags(None).await.expect("flags");
    assert_eq!(flags[0].name, "nested-virt");
    assert_eq!(flags[0].supported_on, vec![NODE.to_string()]);
    let aes = flags.iter().find(|f| f.name == "aes").expect("aes");
    assert_eq!(aes.supported_on, vec![NODE.to_string()]);
    assert!(aes.description.is_some());
    // Flags no node supports come last.
    let first_unsupported = flags
        .iter()
        .position(|f| f.supported_on.is_empty())
        .expect("some unsupported");
    assert!(
        flags[first_unsupported..]
            .iter()
            .all(|f| f.supported_on.is_empty())
    );
    assert!(flags.iter().any(|f| f.name == "avx512f"));
    // Without hardware virtualization under TCG, nested-virt is nowhere.
    let tcg = pve
        .cpu_models()
        .cpu_flags(Some("tcg"))
        .await
        .expect("flags");
    assert!(tcg[0].supported_on.is_empty());
}
