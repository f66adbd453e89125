use std::collections::BTreeMap;

use rstest::rstest;

use super::check::{self, Host, NodeFs};
use super::*;
use crate::model::node_hw::{Hardware, HardwareSpec};

/// The T4 of a fresh node, mapped as the GUI maps it.
const GPU: &str = "node=pve1,path=0000:65:00.0,id=10de:1eb8,iommugroup=30,subsystem-id=10de:12a2";

fn gpu() -> Mapping {
    Mapping {
        description: Some("the T4".into()),
        mdev: Some(true),
        map: vec![GPU.into()],
        ..Mapping::default()
    }
}

fn no_check(_: &[String]) -> Result<()> {
    Ok(())
}

fn one() -> Mappings {
    let mut m = Mappings::default();
    m.create(Kind::Pci, "gpu", gpu(), &no_check)
        .expect("created");
    m
}

fn hw() -> Hardware {
    let mut hw = Hardware::default();
    hw.seed("pve1", &HardwareSpec::default()).expect("seeded");
    hw
}

#[test]
fn a_created_mapping_is_written_as_its_file() {
    let m = one();
    assert_eq!(
        m.cfg_text(Kind::Pci),
        format!("gpu\n\tdescription the T4\n\tmap {GPU}\n\tmdev 1\n\n")
    );
    assert_eq!(m.digest(Kind::Pci).len(), 40);
    assert_ne!(m.digest(Kind::Pci), m.digest(Kind::Usb));
    assert_eq!(m.get(Kind::Pci, "gpu").expect("found"), &gpu());
    assert_eq!(
        m.get(Kind::Usb, "gpu").expect_err("other kind").to_string(),
        "mapping 'gpu' not found"
    );
}

#[rstest]
#[case(
    Kind::Pci,
    "gpu",
    "create hardware mapping failed: pci ID 'gpu' already defined"
)]
#[case(Kind::Pci, "1x", "invalid configuration ID '1x'")]
fn creating_refuses(#[case] kind: Kind, #[case] id: &str, #[case] msg: &str) {
    let mut m = one();
    let e = m.create(kind, id, gpu(), &no_check).expect_err("refused");
    assert_eq!(e.to_string(), msg);
    assert_eq!(m, one());
}

#[test]
fn an_update_sets_then_deletes_and_moves_the_digest() {
    let mut m = one();
    let before = m.digest(Kind::Pci);
    let given = Mapping {
        live_migration_capable: Some(true),
        map: vec![GPU.into(), GPU.replace("pve1", "pve2")],
        ..Mapping::default()
    };
    m.update(
        Kind::Pci,
        "gpu",
        Some(given),
        &["description".into()],
        Some(&before),
        &no_check,
    )
    .expect("updated");
    let g = m.get(Kind::Pci, "gpu").expect("found");
    assert_eq!(g.description, None);
    assert_eq!(g.mdev, Some(true));
    assert_eq!(g.live_migration_capable, Some(true));
    assert_eq!(g.map.len(), 2);
    assert!(g.has_node("pve2"));
    assert_ne!(m.digest(Kind::Pci), before);
}

#[rstest]
#[case("gpu", true, &["map"], None, "update hardware mapping failed: unable to delete required option 'map'")]
#[case("gpu", true, &["colour"], None, "update hardware mapping failed: no such option 'colour'")]
#[case("gpu", true, &["mdev"], None, "update hardware mapping failed: cannot set and delete property 'mdev' at the same time!")]
#[case("gpu", false, &[], None, "update hardware mapping failed: missing value for required option 'map'")]
#[case("nic", true, &[], None, "update hardware mapping failed: pci ID 'nic' does not exist")]
#[case("gpu", true, &[], Some("0000"), "update hardware mapping failed: detected modified configuration - file changed by other user? Try again.")]
fn an_update_refuses(
    #[case] id: &str,
    #[case] given_map: bool,
    #[case] delete: &[&str],
    #[case] digest: Option<&str>,
    #[case] msg: &str,
) {
    let mut m = one();
    let given = Mapping {
        mdev: Some(false),
        map: vec![GPU.into()],
        ..Mapping::default()
    };
    let delete: Vec<String> = delete.iter().map(|d| (*d).to_string()).collect();
    let e = m
        .update(
            Kind::Pci,
            id,
            given_map.then_some(given),
            &delete,
            digest,
            &no_check,
        )
        .expect_err("refused");
    assert_eq!(e.to_string(), msg);
    assert_eq!(m, one());
}

#[test]
fn deleting_a_missing_mapping_is_no_error() {
    let mut m = one();
    m.delete(Kind::Pci, "gpu");
    m.delete(Kind::Pci, "gpu");
    assert!(m.is_empty());
}

#[test]
fn the_gui_s_mapping_of_a_device_is_valid_on_its_node_only() {
    let hw = hw();
    let fs = NodeFs::of(&hw.node("pve1"), []);
    let node = hw.node("pve1");
    let m = one();
    let g = m.get(Kind::Pci, "gpu").expect("found");
    let at = |n| Host {
        node: n,
        hw: &node,
        fs: &fs,
    };
    assert!(check::check_node(Kind::Pci, "gpu", g, at("pve1")).is_empty());
    let other = check::check_node(Kind::Pci, "gpu", g, at("pve2"));
    assert_eq!(other.len(), 1);
    assert_eq!(other[0].severity, "warning");
    assert_eq!(other[0].message, "No mapping for node pve2.");
}

#[rstest]
#[case(
    "node=pve1,path=0000:01:00.0,id=10de:1eb8,iommugroup=30,subsystem-id=10de:12a2",
    true,
    "pci device '0000:01:00.0' not found"
)]
#[case(
    "node=pve1,path=0000:65:00,id=10de:1eb8,iommugroup=30,subsystem-id=10de:12a2",
    true,
    ""
)]
#[case(
    "node=pve1,path=0000:65:00.0,id=10de:1eb9,iommugroup=30,subsystem-id=10de:12a2",
    true,
    "'id' does not match for 'gpu' (10de:1eb8 != 10de:1eb9)"
)]
#[case(
    "node=pve1,path=0000:65:00.0,id=10de:1eb8,iommugroup=3,subsystem-id=10de:12a2",
    true,
    "'iommugroup' does not match for 'gpu' (30 != 3)"
)]
#[case(
    "node=pve1,path=0000:65:00.0,id=10de:1eb8,subsystem-id=10de:12a2",
    true,
    "missing expected property 'iommugroup' for device '0000:65:00.0'"
)]
#[case(
    "node=pve1,path=0000:65:00.0,id=10de:1eb8,iommugroup=30",
    true,
    "missing expected property 'subsystem-id' for device '0000:65:00.0'"
)]
#[case(
    "node=pve1,path=0000:65:00.0,id=10de:1eb8,iommugroup=30,subsystem-id=10de:12a2",
    false,
    "'mdev' does not match for 'gpu' (1 != 0)"
)]
#[case(
    "node=pve1,path=0000:18:00.1;0000:65:00.0,id=8086:1521,iommugroup=21,subsystem-id=8086:0000",
    false,
    "'id' does not match for 'gpu' (10de:1eb8 != 8086:1521)"
)]
fn a_pci_entry_is_checked_against_the_node_s_devices(
    #[case] entry: &str,
    #[case] mdev: bool,
    #[case] msg: &str,
) {
    let hw = hw();
    let e = Entry::parse(entry).expect("parsed");
    let got = check::assert_valid_pci("gpu", &e, mdev, hw.node("pve1").pci());
    assert_eq!(got.err().unwrap_or_default(), msg);
}

#[rstest]
#[case("node=pve1,id=0781:5583,path=2-1", "")]
#[case("node=pve1,id=0781:5583", "")]
#[case("node=pve1,id=0781:5584", "usb device '0781:5584' not found")]
#[case("node=pve1,id=0781:5583,path=3-1", "usb device '3-1' not found")]
#[case(
    "node=pve1,id=0557:2419,path=2-1",
    "'id' does not match for 'stick' (0781:5583 != 0557:2419)"
)]
fn a_usb_entry_is_checked_against_the_node_s_devices(#[case] entry: &str, #[case] msg: &str) {
    let hw = hw();
    let e = Entry::parse(entry).expect("parsed");
    let got = check::assert_valid_usb("stick", &e, hw.node("pve1").usb());
    assert_eq!(got.err().unwrap_or_default(), msg);
}

#[rstest]
#[case(&["node=pve1,path=/srv", "node=pve2,path=/nowhere"], "")]
#[case(&["node=pve1,path=/nowhere"], "Path /nowhere does not exist")]
#[case(&["node=pve1,path=/etc/hostname"], "Path /etc/hostname exists, but is not a directory")]
#[case(&["node=pve2,path=/a", "node=pve2,path=/b"], "Node 'pve2' is specified 2 times.")]
fn a_directory_map_list_is_checked_on_the_local_node(#[case] map: &[&str], #[case] msg: &str) {
    let hw = hw();
    let node = hw.node("pve1");
    let fs = NodeFs::of(&node, ["/data/share".to_string()]);
    let map: Vec<String> = map.iter().map(|m| (*m).to_string()).collect();
    let host = Host {
        node: "pve1",
        hw: &node,
        fs: &fs,
    };
    let got = check::assert_valid_map_list(&map, host);
    assert_eq!(got.err().map(|e| e.to_string()).unwrap_or_default(), msg);
    assert!(fs.assert_dir("/data/share/").is_ok());
}

fn conf(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect()
}

#[rstest]
#[case(&[("hostpci0", "mapping=gpu,pcie=1")], "pve1", "")]
#[case(&[("hostpci0", "mapping=gpu,pcie=1")], "pve2", "PCI device mapping not found for 'gpu'")]
#[case(&[("hostpci0", "mapping=nic")], "pve1", "PCI device mapping not found for 'nic'")]
#[case(&[("usb0", "mapping=stick")], "pve1", "USB device mapping not found for 'stick'")]
#[case(&[("virtiofs0", "dirid=share")], "pve1", "Directory ID share does not exist.")]
#[case(&[("virtiofs0", "share,cache=auto")], "pve1", "Directory ID share does not exist.")]
#[case(&[("usb0", "host=0781:5583"), ("net0", "virtio,bridge=vmbr0")], "pve1", "")]
fn a_start_checks_the_mapped_devices_on_the_vm_s_node(
    #[case] pairs: &[(&str, &str)],
    #[case] node: &str,
    #[case] msg: &str,
) {
    let hw = hw();
    let n = hw.node("pve1");
    let fs = NodeFs::of(&n, []);
    let host = Host {
        node,
        hw: &n,
        fs: &fs,
    };
    let got = one().assert_startable(&conf(pairs), host);
    assert_eq!(got.err().unwrap_or_default(), msg);
}

#[test]
fn a_changed_device_stops_the_start() {
    let mut m = one();
    let broken = Mapping {
        mdev: Some(false),
        ..gpu()
    };
    m.declare(Kind::Pci, "gpu", broken).expect("declared");
    let hw = hw();
    let n = hw.node("pve1");
    let fs = NodeFs::of(&n, []);
    let host = Host {
        node: "pve1",
        hw: &n,
        fs: &fs,
    };
    let e = m
        .assert_startable(&conf(&[("hostpci1", "mapping=gpu")]), host)
        .expect_err("refused");
    assert_eq!(
        e,
        "PCI device mapping invalid (hardware probably changed): 'mdev' does not match for 'gpu' (1 != 0)"
    );
}

#[test]
fn mapped_resources_name_the_nodes_without_an_entry() {
    let mut m = one();
    m.declare(
        Kind::Usb,
        "stick",
        Mapping {
            map: vec!["node=pve2,id=0781:5583".into()],
            ..Mapping::default()
        },
    )
    .expect("declared");
    let c = conf(&[
        ("hostpci0", "mapping=gpu"),
        ("usb1", "mapping=stick"),
        ("virtiofs0", "dirid=gone"),
    ]);
    let nodes = vec!["pve1".to_string(), "pve2".to_string()];
    let (res, missing) = m.mapped_resources(&c, &nodes);
    let keys: Vec<&str> = res.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(keys, vec!["hostpci0", "usb1", "virtiofs0"]);
    assert!(res.iter().all(|r| !r.live_migration));
    assert_eq!(missing["pve1"], vec!["usb1", "virtiofs0"]);
    assert_eq!(missing["pve2"], vec!["hostpci0", "virtiofs0"]);
}

#[test]
fn a_scenario_entry_must_be_a_property_string_with_a_node() {
    let mut m = Mappings::default();
    let bad = Mapping {
        map: vec!["path=/srv".into()],
        ..Mapping::default()
    };
    let e = m.declare(Kind::Dir, "share", bad).expect_err("refused");
    assert_eq!(e.to_string(), "invalid map entry 'path=/srv'");
    assert!(m.is_empty());
}

#[test]
fn a_saved_world_keeps_the_mappings() {
    let m = one();
    let text = serde_json::to_string(&m).expect("saved");
    assert!(text.contains("\"pci\"") && !text.contains("\"usb\""));
    let back: Mappings = serde_json::from_str(&text).expect("loaded");
    assert_eq!(back, m);
    assert_eq!(back.digest(Kind::Pci), m.digest(Kind::Pci));
}
