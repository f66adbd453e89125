//! Guests to import over the wire: an OVA uploaded as `import` content,
//! its `import-metadata` read from the archive's OVF manifest, and a VM
//! created from the disk inside with `import-from`.

mod common;

use common::{Auth, Pve, enc, start_scenario};
use reqwest::Method;
use serde_json::{Value, json};

const SCENARIO: &str = "\
storages:
  - { id: local, type: dir, path: /var/lib/vz, content: [iso, import, images], size: 100G }
  - { id: local-lvm, type: lvmthin, thinpool: data, vgname: pve, size: 100G }
";

const OVF: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<Envelope xmlns="http://schemas.dmtf.org/ovf/envelope/1" xmlns:ovf="http://schemas.dmtf.org/ovf/envelope/1" xmlns:rasd="http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/CIM_ResourceAllocationSettingData">
  <References><File ovf:href="tiny-disk1.vmdk" ovf:id="file1"/></References>
  <DiskSection><Disk ovf:capacity="2" ovf:capacityAllocationUnits="byte * 2^30" ovf:diskId="vmdisk1" ovf:fileRef="file1"/></DiskSection>
  <VirtualSystem ovf:id="tiny">
    <Name>tiny vm</Name>
    <OperatingSystemSection ovf:id="94"/>
    <VirtualHardwareSection>
      <Item><rasd:InstanceID>1</rasd:InstanceID><rasd:ResourceType>3</rasd:ResourceType><rasd:VirtualQuantity>1</rasd:VirtualQuantity></Item>
      <Item><rasd:InstanceID>2</rasd:InstanceID><rasd:ResourceType>4</rasd:ResourceType><rasd:VirtualQuantity>512</rasd:VirtualQuantity></Item>
      <Item><rasd:InstanceID>3</rasd:InstanceID><rasd:ResourceType>5</rasd:ResourceType></Item>
      <Item><rasd:AddressOnParent>0</rasd:AddressOnParent><rasd:HostResource>ovf:/disk/vmdisk1</rasd:HostResource><rasd:InstanceID>4</rasd:InstanceID><rasd:Parent>3</rasd:Parent><rasd:ResourceType>17</rasd:ResourceType></Item>
      <Item><rasd:InstanceID>5</rasd:InstanceID><rasd:ResourceSubType>vmxnet3</rasd:ResourceSubType><rasd:ResourceType>10</rasd:ResourceType></Item>
    </VirtualHardwareSection>
  </VirtualSystem>
</Envelope>
"#;

/// A ustar archive of text members.
fn tar_of(members: &[(&str, &str)]) -> String {
    let mut out = Vec::new();
    for (name, data) in members {
        let mut h = [0u8; 512];
        h[..name.len()].copy_from_slice(name.as_bytes());
        h[100..107].copy_from_slice(b"0000644");
        h[124..135].copy_from_slice(format!("{:011o}", data.len()).as_bytes());
        h[156] = b'0';
        h[257..263].copy_from_slice(b"ustar\0");
        h[148..156].copy_from_slice(b"        ");
        let sum: u32 = h.iter().map(|b| u32::from(*b)).sum();
        h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
        out.extend_from_slice(&h);
        out.extend_from_slice(data.as_bytes());
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    out.resize(out.len() + 1024, 0);
    String::from_utf8(out).expect("text members")
}

async fn upload(pve: &Pve, auth: &Auth, file: &str, data: &str) -> Value {
    let boundary = "----fakepve-import-boundary";
    let body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"content\"\r\n\r\nimport\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"filename\"; filename=\"{file}\"\r\n\
         Content-Type: application/octet-stream\r\n\r\n{data}\r\n--{boundary}--\r\n"
    );
    let r = pve
        .send(
            Method::POST,
            "/api2/json/nodes/pve/storage/local/upload",
            auth,
            Some((&format!("multipart/form-data; boundary={boundary}"), body)),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let upid = r.data().as_str().expect("a UPID").to_string();
    pve.task_status(&upid, auth).await
}

async fn metadata(pve: &Pve, auth: &Auth, volume: &str) -> common::Resp {
    pve.get(
        &format!(
            "/nodes/pve/storage/local/import-metadata?volume={}",
            enc(volume)
        ),
        auth,
    )
    .await
}

#[tokio::test]
async fn an_uploaded_ova_answers_its_guest_and_its_disk_imports() {
    let pve = start_scenario(SCENARIO).await;
    let root = pve.root().await;
    let disk = "KDMV streamOptimized stand-in\n".repeat(100);
    let ova = tar_of(&[("tiny.ovf", OVF), ("tiny-disk1.vmdk", &disk)]);
    let st = upload(&pve, &root, "tiny.ova", &ova).await;
    assert_eq!(st["exitstatus"], "OK", "{st}");

    let r = metadata(&pve, &root, "import/tiny.ova").await;
    assert_eq!(
        r.data(),
        json!({
            "type": "vm",
            "source": "import/tiny.ova",
            "create-args": {
                "boot": "order=ide0",
                "cores": "1",
                "memory": "512",
                "name": "tiny-vm",
                "ostype": "l26",
            },
            "disks": {
                "ide0": { "volid": "local:import/tiny.ova/tiny-disk1.vmdk", "size": 2u64 << 30 },
            },
            "warnings": [{ "type": "ova-needs-extracting" }],
            "net": { "net0": { "model": "vmxnet3" } },
        })
    );

    // The disk inside is imported with the size its manifest gives.
    let r = pve
        .post(
            "/nodes/pve/qemu",
            &root,
            "vmid=120&ide0=local-lvm%3A0%2Cimport-from%3Dlocal%3Aimport%2Ftiny.ova%2Ftiny-disk1.vmdk",
        )
        .await;
    let upid = r.data().as_str().expect("a UPID").to_string();
    let st = pve.task_status(&upid, &root).await;
    assert_eq!(st["exitstatus"], "OK", "{st}");
    let config = pve.get("/nodes/pve/qemu/120/config", &root).await.data();
    assert_eq!(config["ide0"], "local-lvm:vm-120-disk-0,size=2G");

    // A member the archive does not hold cannot be imported.
    let r = pve
        .post(
            "/nodes/pve/qemu",
            &root,
            "vmid=121&scsi0=local-lvm%3A0%2Cimport-from%3Dlocal%3Aimport%2Ftiny.ova%2Fother.vmdk",
        )
        .await;
    let upid = r.data().as_str().expect("a UPID").to_string();
    let st = pve.task_status(&upid, &root).await;
    assert!(
        st["exitstatus"]
            .as_str()
            .is_some_and(|e| e.contains("cannot import from 'local:import/tiny.ova/other.vmdk'")),
        "{st}"
    );
}

#[tokio::test]
async fn what_has_no_metadata_is_refused_as_pve_refuses_it() {
    let pve = start_scenario(SCENARIO).await;
    let root = pve.root().await;
    let st = upload(&pve, &root, "broken.ova", &"not a tar archive\n".repeat(50)).await;
    assert_eq!(st["exitstatus"], "OK", "{st}");
    metadata(&pve, &root, "import/broken.ova").await.assert_error(
        500,
        "command 'tar -xO --wildcards --occurrence=1 -f /var/lib/vz/import/broken.ova '*.ovf'' failed: exit code 2\n",
    );
    metadata(&pve, &root, "import/disk.qcow2")
        .await
        .assert_error(500, "invalid format\n");
    metadata(&pve, &root, "iso/x.iso")
        .await
        .assert_error(500, "invalid content type 'iso'\n");
    pve.get(
        "/nodes/pve/storage/local-lvm/import-metadata?volume=vm-100-disk-0",
        &root,
    )
    .await
    .assert_error(500, "storage does not support the importer API\n");
}
