//! `get_import_metadata` (`api::storage_import`) against an in-process
//! fake-pve, in both authentication modes, the answer checked against
//! the schema: an OVA downloaded as `import` content answers the guest
//! its OVF manifest describes.

mod common;

use common::{MODES, ROOT_TOKEN, ROOT_TOKEN_SECRET, checked_client, start};
use pve_client::api::storage::{DownloadUrl, StorageUpdate};
use pve_client::api::storage_import::ImportDisk;

const NODE: &str = "pve";
const URL: &str = "https://example.com/router.ova";
const OVF: &str = r#"<?xml version="1.0"?>
<Envelope xmlns="http://schemas.dmtf.org/ovf/envelope/1" xmlns:ovf="http://schemas.dmtf.org/ovf/envelope/1" xmlns:rasd="http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/CIM_ResourceAllocationSettingData" xmlns:vmw="http://www.vmware.com/schema/ovf">
  <References><File ovf:href="router-disk1.vmdk" ovf:id="f1" ovf:size="4096"/></References>
  <DiskSection><Disk ovf:capacity="8" ovf:capacityAllocationUnits="byte * 2^30" ovf:diskId="d1" ovf:fileRef="f1"/></DiskSection>
  <VirtualSystem ovf:id="router">
    <Name>router</Name>
    <OperatingSystemSection ovf:id="36"/>
    <VirtualHardwareSection>
      <Item><rasd:InstanceID>1</rasd:InstanceID><rasd:ResourceType>3</rasd:ResourceType><rasd:VirtualQuantity>2</rasd:VirtualQuantity></Item>
      <Item><rasd:InstanceID>2</rasd:InstanceID><rasd:ResourceType>4</rasd:ResourceType><rasd:VirtualQuantity>1024</rasd:VirtualQuantity></Item>
      <Item><rasd:InstanceID>3</rasd:InstanceID><rasd:ResourceType>20</rasd:ResourceType></Item>
      <Item><rasd:AddressOnParent>0</rasd:AddressOnParent><rasd:HostResource>ovf:/disk/d1</rasd:HostResource><rasd:InstanceID>4</rasd:InstanceID><rasd:Parent>3</rasd:Parent><rasd:ResourceType>17</rasd:ResourceType></Item>
      <vmw:Config vmw:key="firmware" vmw:value="efi"/>
    </VirtualHardwareSection>
  </VirtualSystem>
</Envelope>"#;

async fn declare_ova(run: &fake_pve::Running) {
    let body = serde_json::json!([{ "url": URL, "size": 4096, "ovf": OVF }]);
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
async fn an_ova_answers_its_guest() {
    for mode in MODES {
        let run = start().await;
        declare_ova(&run).await;
        let (pve, checked) = checked_client(&run, mode);
        pve.storage()
            .update(
                "local",
                &StorageUpdate::default().content(&["iso", "vztmpl", "backup", "import"]),
            )
            .await
            .expect("import content");
        let st = pve
            .storage()
            .download_url_and_wait(
                NODE,
                "local",
                &DownloadUrl::new(URL, "import", "router.ova"),
            )
            .await
            .expect("downloaded");
        assert!(st.succeeded(), "{st:?}");

        let m = pve
            .storage()
            .get_import_metadata(NODE, "local", "import/router.ova")
            .await
            .expect("metadata");
        assert_eq!(
            (m.kind.as_str(), m.source.as_str()),
            ("vm", "import/router.ova")
        );
        assert_eq!(m.create_args["name"], "router");
        assert_eq!(m.create_args["bios"], "ovmf");
        assert_eq!(m.create_args["boot"], "order=sata0");
        assert_eq!(
            m.disks["sata0"],
            ImportDisk::Volume {
                volid: "local:import/router.ova/router-disk1.vmdk".into(),
                size: Some(8 << 30),
            }
        );
        assert!(matches!(m.disks["efidisk0"], ImportDisk::New(_)));
        let kinds: Vec<&str> = m.warnings.iter().map(|w| w.kind.as_str()).collect();
        assert_eq!(kinds, ["ova-needs-extracting", "efi-state-lost"]);
        assert!(m.net.is_empty());

        let e = pve
            .storage()
            .get_import_metadata(NODE, "local", "iso/none.iso")
            .await
            .expect_err("not an import");
        assert_eq!(e.message(), "invalid content type 'iso'");
        assert!(
            checked
                .names()
                .iter()
                .any(|n| n == "GET get_import_metadata"),
            "{:?}",
            checked.names()
        );
    }
}
