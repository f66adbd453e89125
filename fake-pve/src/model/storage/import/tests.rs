use std::collections::BTreeMap;

use rstest::rstest;

use super::tar::TarScan;
use super::*;
use crate::model::cluster::Storage;
use crate::model::storage::{Volume, Volumes};

/// A manifest: two disks on a SCSI and a SATA controller, a CD drive,
/// two NICs, EFI firmware.
pub(crate) const OVF_TEXT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<Envelope xmlns="http://schemas.dmtf.org/ovf/envelope/1" xmlns:ovf="http://schemas.dmtf.org/ovf/envelope/1" xmlns:rasd="http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/CIM_ResourceAllocationSettingData" xmlns:vmw="http://www.vmware.com/schema/ovf">
  <References>
    <File ovf:href="web 01-disk1.vmdk" ovf:id="file1" ovf:size="1000"/>
    <File ovf:href="web-disk2.vmdk" ovf:id="file2" ovf:size="2000"/>
  </References>
  <DiskSection>
    <Disk ovf:capacity="16" ovf:capacityAllocationUnits="byte * 2^30" ovf:diskId="vmdisk1" ovf:fileRef="file1"/>
    <Disk ovf:capacity="4096" ovf:diskId="vmdisk2" ovf:fileRef="file2"/>
  </DiskSection>
  <VirtualSystem ovf:id="web-01">
    <Name>web 01 (prod)</Name>
    <OperatingSystemSection ovf:id="96"><Info>Debian</Info></OperatingSystemSection>
    <VirtualHardwareSection>
      <Item><rasd:InstanceID>1</rasd:InstanceID><rasd:ResourceType>3</rasd:ResourceType><rasd:VirtualQuantity>2</rasd:VirtualQuantity></Item>
      <Item><rasd:InstanceID>2</rasd:InstanceID><rasd:ResourceType>4</rasd:ResourceType><rasd:VirtualQuantity>2048</rasd:VirtualQuantity></Item>
      <Item><rasd:InstanceID>3</rasd:InstanceID><rasd:ResourceType>6</rasd:ResourceType></Item>
      <Item><rasd:InstanceID>4</rasd:InstanceID><rasd:ResourceType>20</rasd:ResourceType></Item>
      <Item><rasd:AddressOnParent>0</rasd:AddressOnParent><rasd:HostResource>ovf:/disk/vmdisk1</rasd:HostResource><rasd:InstanceID>5</rasd:InstanceID><rasd:Parent>3</rasd:Parent><rasd:ResourceType>17</rasd:ResourceType></Item>
      <Item><rasd:AddressOnParent>1</rasd:AddressOnParent><rasd:HostResource>/disk/vmdisk2</rasd:HostResource><rasd:InstanceID>6</rasd:InstanceID><rasd:Parent>4</rasd:Parent><rasd:ResourceType>17</rasd:ResourceType></Item>
      <Item><rasd:AddressOnParent>0</rasd:AddressOnParent><rasd:InstanceID>7</rasd:InstanceID><rasd:Parent>4</rasd:Parent><rasd:ResourceType>15</rasd:ResourceType></Item>
      <Item><rasd:InstanceID>8</rasd:InstanceID><rasd:ResourceSubType>VmxNet3</rasd:ResourceSubType><rasd:ResourceType>10</rasd:ResourceType></Item>
      <Item><rasd:InstanceID>9</rasd:InstanceID><rasd:ResourceSubType>PCNet32</rasd:ResourceSubType><rasd:ResourceType>10</rasd:ResourceType></Item>
      <vmw:Config vmw:key="firmware" vmw:value="efi"/>
    </VirtualHardwareSection>
  </VirtualSystem>
</Envelope>
"#;

/// A tar archive of the given members (the ustar writer of file-restore's
/// downloads).
pub(crate) fn tar_of(members: &[(&str, &[u8])]) -> Vec<u8> {
    let entries: Vec<(String, Option<Vec<u8>>)> = members
        .iter()
        .map(|(name, data)| ((*name).to_string(), Some(data.to_vec())))
        .collect();
    crate::model::pbs::files::tar_archive(&entries, 0)
}

#[rstest]
#[case::whole(usize::MAX)]
#[case::in_small_reads(7)]
#[case::header_sized_reads(512)]
fn a_tar_read_as_it_streams_gives_its_manifest_and_members(#[case] chunk: usize) {
    let bytes = tar_of(&[
        ("web.ovf", OVF_TEXT.as_bytes()),
        ("web.mf", b"SHA256(web.ovf)= 00"),
        ("web 01-disk1.vmdk", &[7u8; 1500]),
        ("other.ovf", b"<ignored/>"),
    ]);
    let mut scan = TarScan::new();
    for part in bytes.chunks(chunk.min(bytes.len())) {
        scan.feed(part);
    }
    let c = scan.finish().expect("a tar");
    assert_eq!(c.ovf.as_deref(), Some(OVF_TEXT));
    assert_eq!(
        c.members,
        vec![
            ("web.ovf".to_string(), OVF_TEXT.len() as u64),
            ("web.mf".to_string(), 19),
            ("web 01-disk1.vmdk".to_string(), 1500),
            ("other.ovf".to_string(), 10),
        ]
    );
}

#[rstest]
#[case::not_a_tar(b"ISO 9660 image, not a tar archive at all".repeat(20))]
#[case::zeros(vec![0u8; 2048])]
#[case::empty(Vec::new())]
fn what_is_not_a_tar_has_no_content(#[case] bytes: Vec<u8>) {
    let mut scan = TarScan::new();
    scan.feed(&bytes);
    assert_eq!(scan.finish(), None);
}

#[rstest]
fn a_tar_without_a_manifest_has_members_only() {
    let mut scan = TarScan::new();
    scan.feed(&tar_of(&[("disk.vmdk", b"abc")]));
    let c = scan.finish().expect("a tar");
    assert_eq!(c.ovf, None);
    assert_eq!(c.members, vec![("disk.vmdk".to_string(), 3)]);
}

#[rstest]
fn the_manifest_gives_what_pve_reads() {
    let mut log = Vec::new();
    let o = ovf::parse(OVF_TEXT, &mut log).expect("parsed");
    let qm: BTreeMap<&str, &str> = o.qm.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(
        qm,
        BTreeMap::from([
            ("bios", "ovmf"),
            ("boot", "order=scsi0;sata1"),
            ("cores", "2"),
            ("memory", "2048"),
            ("name", "web-01-prod"),
            ("ostype", "l26"),
        ])
    );
    assert_eq!(
        o.disks,
        vec![
            ovf::OvfDisk {
                address: "scsi0".into(),
                path: "web 01-disk1.vmdk".into(),
                virtual_size: Some(16 << 30),
            },
            ovf::OvfDisk {
                address: "sata1".into(),
                path: "web-disk2.vmdk".into(),
                virtual_size: None,
            },
        ]
    );
    assert_eq!(
        o.net,
        BTreeMap::from([
            ("net0".to_string(), "vmxnet3".to_string()),
            ("net1".to_string(), "e1000".to_string())
        ])
    );
    assert!(log.is_empty(), "{log:?}");
}

#[rstest]
#[case::no_name_takes_the_id(
    r#"<Envelope xmlns="http://schemas.dmtf.org/ovf/envelope/1" xmlns:ovf="http://schemas.dmtf.org/ovf/envelope/1"><VirtualSystem ovf:id="vm 7"/></Envelope>"#,
    &[("cores", ""), ("memory", ""), ("name", "vm-7"), ("ostype", "other")]
)]
#[case::not_an_ovf_envelope(
    r#"<Envelope><VirtualSystem><Name>x</Name></VirtualSystem></Envelope>"#,
    &[("cores", ""), ("memory", ""), ("ostype", "other")]
)]
#[case::windows_11(
    r#"<Envelope xmlns="http://schemas.dmtf.org/ovf/envelope/1" xmlns:ovf="http://schemas.dmtf.org/ovf/envelope/1"><VirtualSystem><Name>w</Name><OperatingSystemSection ovf:id="122"/></VirtualSystem></Envelope>"#,
    &[("cores", ""), ("memory", ""), ("name", "w"), ("ostype", "win11")]
)]
fn sparse_manifests(#[case] text: &str, #[case] want: &[(&str, &str)]) {
    let o = ovf::parse(text, &mut Vec::new()).expect("parsed");
    let got: Vec<(&str, &str)> = o.qm.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(got, want);
}

#[rstest]
#[case::entity(
    "<!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><Envelope><Name>&e;</Name></Envelope>"
)]
#[case::unclosed("<Envelope><VirtualSystem></Envelope>")]
#[case::empty("")]
fn bad_xml_is_refused(#[case] text: &str) {
    assert!(ovf::parse(text, &mut Vec::new()).is_err());
}

#[rstest]
fn a_disk_path_with_a_slash_is_refused() {
    let text = OVF_TEXT.replace("web-disk2.vmdk", "../etc/disk.vmdk");
    assert_eq!(
        ovf::parse(&text, &mut Vec::new()),
        Err("referenced path '../etc/disk.vmdk' is invalid".to_string())
    );
}

#[rstest]
#[case("import/x.ova", Ok(("import", "ova")))]
#[case("import/x.ovf", Ok(("import", "ovf")))]
#[case("import/my disk.qcow2", Ok(("import", "qcow2")))]
#[case("import/x.ova/disk 1.vmdk", Ok(("import", "ova+vmdk")))]
#[case("iso/debian.iso", Ok(("iso", "raw")))]
#[case("100/vm-100-disk-0.qcow2", Ok(("images", "qcow2")))]
#[case("import/x.zip", Err(()))]
#[case("import/x.OVA", Err(()))]
#[case("nothing", Err(()))]
fn volume_names_as_a_file_storage_parses_them(
    #[case] name: &str,
    #[case] want: Result<(&str, &str), ()>,
) {
    match (parse_volname(name), want) {
        (Ok((t, f)), Ok((wt, wf))) => assert_eq!((t, f.as_str()), (wt, wf)),
        (Err(e), Err(())) => assert_eq!(
            e.to_string(),
            format!("unable to parse directory volume name '{name}'")
        ),
        (got, want) => panic!("{name}: {got:?} != {want:?}"),
    }
}

fn storages() -> Storages {
    let storage = |id: &str, kind: &str| Storage {
        storage: id.into(),
        kind: kind.into(),
        content: vec!["import".into(), "iso".into()],
        shared: false,
        nodes: None,
        disable: false,
        total: 1 << 40,
        used: 0,
        options: BTreeMap::from([("path".to_string(), "/var/lib/vz".to_string())]),
    };
    let mut s = Storages::new(
        vec![
            storage("local", "dir"),
            storage("lvm", "lvm"),
            storage("esx", "esxi"),
        ],
        Volumes::default(),
    );
    for (name, ova) in [
        (
            "import/web.ova",
            Some(OvaContent::from_manifest("web", OVF_TEXT)),
        ),
        (
            "import/bare.ova",
            Some(OvaContent {
                ovf: None,
                members: vec![("disk.vmdk".into(), 3)],
            }),
        ),
    ] {
        let vol = Volume {
            storage: "local".into(),
            name: name.into(),
            size: 4096,
            format: "ova".into(),
            vmid: 0,
            ctime: 0,
        };
        s.apply_volume_change(
            "pve",
            crate::model::tasks::VolumeChange::Put {
                volume: vol,
                oci: None,
                ova: ova.map(Box::new),
            },
        );
    }
    s
}

#[rstest]
fn an_ova_answers_its_guest() {
    let m = storages()
        .import_metadata("local", "pve", "import/web.ova")
        .expect("metadata");
    assert_eq!(m.source, "import/web.ova");
    assert_eq!(m.create_args["name"], "web-01-prod");
    assert_eq!(
        m.disks,
        BTreeMap::from([
            ("efidisk0".to_string(), ImportDisk::Efi(1)),
            (
                "sata1".to_string(),
                ImportDisk::Volume {
                    volid: "local:import/web.ova/web-disk2.vmdk".into(),
                    size: None
                }
            ),
            (
                "scsi0".to_string(),
                ImportDisk::Volume {
                    volid: "local:import/web.ova/web 01-disk1.vmdk".into(),
                    size: Some(16 << 30)
                }
            ),
        ])
    );
    let kinds: Vec<_> = m.warnings.iter().map(|w| w.kind.as_str()).collect();
    assert_eq!(kinds, ["ova-needs-extracting", "efi-state-lost"]);
    assert_eq!(m.warnings[1].key.as_deref(), Some("bios"));
    assert_eq!(m.net.len(), 2);
}

#[rstest]
#[case("lvm", "import/web.ova", "storage does not support the importer API")]
#[case(
    "esx",
    "ha-datacenter/datastore1/web/web.vmx",
    "Method 'GET /api2/json/nodes/pve/storage/esx/import-metadata' is not emulated by fake-pve for ESXi storages"
)]
#[case("gone", "import/web.ova", "storage 'gone' does not exist")]
#[case("local", "iso/x.iso", "invalid content type 'iso'")]
#[case("local", "import/disk.qcow2", "invalid format")]
#[case("local", "import/web.ova/web-disk2.vmdk", "invalid format")]
#[case(
    "local",
    "import/x.zip",
    "unable to parse directory volume name 'import/x.zip'"
)]
#[case(
    "local",
    "import/none.ova",
    "command 'tar -xO --wildcards --occurrence=1 -f /var/lib/vz/import/none.ova '*.ovf'' failed: exit code 2"
)]
#[case(
    "local",
    "import/bare.ova",
    "command 'tar -xO --wildcards --occurrence=1 -f /var/lib/vz/import/bare.ova '*.ovf'' failed: exit code 2"
)]
#[case(
    "local",
    "import/x.ovf",
    "unable to open file '/var/lib/vz/import/x.ovf' - No such file or directory"
)]
fn what_has_no_metadata(#[case] sid: &str, #[case] name: &str, #[case] msg: &str) {
    let e = storages()
        .import_metadata(sid, "pve", name)
        .expect_err("refused");
    assert_eq!(e.to_string(), msg);
}

#[rstest]
#[case("local:import/web.ova/web 01-disk1.vmdk", Some(16 << 30))]
#[case("local:import/web.ova/web-disk2.vmdk", Some(2000))]
#[case("local:import/web.ova/missing.vmdk", None)]
#[case("local:import/bare.ova/disk.vmdk", Some(3))]
#[case("local:import/web.ova", None)]
fn a_disk_in_an_archive_has_the_size_extracting_gives(
    #[case] volid: &str,
    #[case] want: Option<u64>,
) {
    assert_eq!(storages().ova_disk_size(volid, "pve"), want);
}
