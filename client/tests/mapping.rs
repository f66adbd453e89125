//! The cluster's resource mappings (`api::mapping`) against an
//! in-process fake-pve; every answer is checked against the schema.

mod common;

use common::{Mode, checked_client, start};
use pve_client::api::mapping::{MappingKind, MappingSpec};

/// The T4 of a fresh fake-pve node, mapped as PVE's GUI maps it.
const GPU: &str = "node=pve,path=0000:65:00.0,id=10de:1eb8,iommugroup=30,subsystem-id=10de:12a2";

#[tokio::test]
async fn a_pci_mapping_is_made_checked_changed_and_removed() {
    let run = start().await;
    let (pve, checked) = checked_client(&run, Mode::Token);
    let pci = pve.mappings(MappingKind::Pci);
    assert!(pci.index(None).await.expect("list").is_empty());

    let spec = MappingSpec {
        mdev: Some(true),
        description: Some("the T4".into()),
        ..MappingSpec::of(&[GPU])
    };
    pci.create("gpu", &spec).await.expect("create");
    let err = pci.create("gpu", &spec).await.expect_err("taken");
    assert!(
        err.to_string()
            .contains("create hardware mapping failed: pci ID 'gpu' already defined"),
        "{err}"
    );
    let listed = pci.index(Some("pve")).await.expect("checked list");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id.as_deref(), Some("gpu"));
    assert!(listed[0].findings().is_empty(), "{:?}", listed[0]);

    // Without `mdev`, the GPU with mediated devices no longer matches.
    let got = pci.get("gpu").await.expect("get");
    assert_eq!(got.mdev, Some(true));
    let digest = got.digest.clone().expect("digest");
    pci.update("gpu", &MappingSpec::of(&[GPU]), &["mdev"], Some(&digest))
        .await
        .expect("update");
    let listed = pci.index(Some("pve")).await.expect("checked list");
    let findings = listed[0].findings();
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].severity, "error");
    assert!(
        findings[0]
            .message
            .starts_with("Invalid configuration: 'mdev' does not match for 'gpu' (1 != 0)"),
        "{findings:?}"
    );
    let err = pci
        .update("gpu", &MappingSpec::of(&[GPU]), &[], Some(&digest))
        .await
        .expect_err("stale digest");
    assert!(
        err.to_string().contains("detected modified configuration"),
        "{err}"
    );

    pci.delete("gpu").await.expect("delete");
    pci.delete("gpu").await.expect("a missing id is no error");
    let err = pci.get("gpu").await.expect_err("gone");
    assert!(err.to_string().contains("mapping 'gpu' not found"), "{err}");
    let names = checked.names();
    for call in [
        "POST create",
        "GET index",
        "GET get",
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
async fn usb_and_directory_mappings_report_their_findings() {
    let run = start().await;
    let (pve, _checked) = checked_client(&run, Mode::Password);
    let usb = pve.mappings(MappingKind::Usb);
    usb.create("stick", &MappingSpec::of(&["node=pve,id=0781:5584"]))
        .await
        .expect("create");
    let listed = usb.index(Some("pve")).await.expect("list");
    assert_eq!(listed[0].errors.as_ref().map(Vec::len), Some(1));
    assert!(
        listed[0].findings()[0]
            .message
            .contains("usb device '0781:5584' not found"),
        "{listed:?}"
    );

    let dir = pve.mappings(MappingKind::Dir);
    let err = dir
        .create("share", &MappingSpec::of(&["node=pve,path=/nowhere"]))
        .await
        .expect_err("no such directory");
    assert!(
        err.to_string().contains("Path /nowhere does not exist"),
        "{err}"
    );
    dir.create("share", &MappingSpec::of(&["node=pve,path=/srv"]))
        .await
        .expect("create");
    let got = dir.get("share").await.expect("get");
    assert_eq!(got.kind.as_deref(), Some("dir"));
    assert_eq!(got.map, vec!["node=pve,path=/srv".to_string()]);
}
