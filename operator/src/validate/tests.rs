use super::*;
use crate::types::{DiskSpec, NetworkSpec, Source};
use rstest::rstest;

#[rstest]
#[case("web-server-01", None)]
#[case("vm.001", None)]
#[case("my vm", None)]
#[case("a_b", None)]
#[case("", Some("VM name must not be empty"))]
#[case(" lead", Some("VM name cannot start or end with a space"))]
#[case("trail ", Some("VM name cannot start or end with a space"))]
#[case("bad/name", Some("VM name contains invalid characters"))]
#[case("ünïcode", Some("VM name contains invalid characters"))]
fn names(#[case] name: &str, #[case] err: Option<&str>) {
    assert_eq!(
        check_name(name).err().map(|e| e.to_string()).as_deref(),
        err
    );
}

#[test]
fn names_longer_than_100_are_refused() {
    assert!(check_name(&"a".repeat(100)).is_ok());
    assert_eq!(
        check_name(&"a".repeat(101)).unwrap_err().to_string(),
        "VM name is 101 characters long, the maximum is 100"
    );
}

#[rstest]
#[case(Quantity::Str("4Gi".into()), Ok(4 * GIB))]
#[case(Quantity::Str("4gi".into()), Ok(4 * GIB))]
#[case(Quantity::Str("4GI".into()), Ok(4 * GIB))]
#[case(Quantity::Str("8192Mi".into()), Ok(8 * GIB))]
#[case(Quantity::Str("4096".into()), Ok(4 * GIB))]
#[case(Quantity::Str("128 MiB".into()), Ok(128 * MIB))]
#[case(Quantity::Str("2G".into()), Ok(2 * GIB))]
#[case(Quantity::Str("131072K".into()), Ok(128 * MIB))]
#[case(Quantity::Str("2Ti".into()), Ok(2 * TIB))]
#[case(Quantity::Int(2_147_483_648), Ok(2 * GIB))]
#[case(Quantity::Str("64Mi".into()), Err("memory 64Mi is below minimum of 128 MB"))]
#[case(Quantity::Int(1024), Err("memory 1024 is below minimum of 128 MB"))]
#[case(Quantity::Str("3Ti".into()), Err("memory 3Ti exceeds maximum of 2 TB"))]
#[case(Quantity::Str("4Xi".into()), Err("invalid memory unit in \"4Xi\": use Ki, Mi, Gi, Ti, K, M, G or T"))]
#[case(Quantity::Str("lots".into()), Err("invalid memory format \"lots\": use a number with Ki, Mi, Gi, Ti, K, M, G or T"))]
fn memory_sizes(#[case] q: Quantity, #[case] want: Result<u64, &str>) {
    assert_eq!(
        parse_memory(&q).map_err(|e| e.to_string()),
        want.map_err(str::to_string)
    );
}

#[rstest]
#[case(Quantity::Str("50Gi".into()), Ok(50 * GIB))]
#[case(Quantity::Str("50gi".into()), Ok(50 * GIB))]
#[case(Quantity::Str("50GI".into()), Ok(50 * GIB))]
#[case(Quantity::Str("1Ti".into()), Ok(TIB))]
#[case(Quantity::Str("100".into()), Ok(100 * GIB))]
#[case(Quantity::Int(20), Ok(20 * GIB))]
#[case(Quantity::Str("20G".into()), Ok(20 * GIB))]
#[case(Quantity::Str("2048M".into()), Ok(2 * GIB))]
#[case(Quantity::Str("100Ti".into()), Ok(100 * TIB))]
#[case(Quantity::Str("512Mi".into()), Err("disk 512Mi is below minimum of 1 GB"))]
#[case(Quantity::Str("101T".into()), Err("disk 101T exceeds maximum of 100 TB"))]
#[case(Quantity::Str("10Ki".into()), Err("invalid disk size unit in \"10Ki\": use Ti, Gi, Mi, T, G or M"))]
#[case(Quantity::Str("G".into()), Err("invalid disk size format \"G\": use a number with Ti, Gi, Mi, T, G or M"))]
fn disk_sizes(#[case] q: Quantity, #[case] want: Result<u64, &str>) {
    assert_eq!(
        parse_disk(&q).map_err(|e| e.to_string()),
        want.map_err(str::to_string)
    );
}

#[rstest]
#[case("100", Ok(ImageRef::Vmid(100)))]
#[case("1000", Ok(ImageRef::Vmid(1000)))]
#[case("99", Err("template VMID 99 is out of range 100-999999999"))]
#[case("local:iso/ubuntu-22.04.iso", Ok(ImageRef::Volume { storage: "local".into(), path: "iso/ubuntu-22.04.iso".into() }))]
#[case("ubuntu-22.04-cloud", Ok(ImageRef::Name("ubuntu-22.04-cloud".into())))]
#[case(
    ":iso/x.iso",
    Err("invalid volume ID \":iso/x.iso\": expected storage:path, as local:iso/ubuntu.iso")
)]
#[case(
    "local:",
    Err("invalid volume ID \"local:\": expected storage:path, as local:iso/ubuntu.iso")
)]
#[case("", Err("image must not be empty"))]
fn images(#[case] s: &str, #[case] want: Result<ImageRef, &str>) {
    assert_eq!(
        parse_image(s).map_err(|e| e.to_string()),
        want.map_err(str::to_string)
    );
}

#[test]
fn image_names_are_at_most_255_characters() {
    assert!(parse_image(&"a".repeat(255)).is_ok());
    assert_eq!(
        parse_image(&"a".repeat(256)).unwrap_err().to_string(),
        "image name is 256 characters long, the maximum is 255"
    );
}

#[rstest]
#[case("vmbr0", true)]
#[case("custom-bridge", true)]
#[case("bridge_01", true)]
#[case("vm br", false)]
#[case("", false)]
#[case("br.0", false)]
fn bridges(#[case] b: &str, #[case] ok: bool) {
    assert_eq!(check_bridge(b).is_ok(), ok);
}

fn spec() -> MachineSpec {
    MachineSpec {
        cluster: "lab".into(),
        ..Default::default()
    }
}

#[rstest]
#[case::cores(|s: &mut MachineSpec| s.cpu.cores = 129, "spec.cpu.cores", "cpu cores 129 out of range 1-128")]
#[case::cores0(|s: &mut MachineSpec| s.cpu.cores = 0, "spec.cpu.cores", "cpu cores 0 out of range 1-128")]
#[case::sockets(|s: &mut MachineSpec| s.cpu.sockets = 5, "spec.cpu.sockets", "cpu sockets 5 out of range 1-4")]
#[case::threads(|s: &mut MachineSpec| s.cpu.threads = 3, "spec.cpu.threads", "cpu threads per core 3 out of range 1-2")]
#[case::vcpus(|s: &mut MachineSpec| { s.cpu.cores = 2; s.cpu.sockets = 2; s.cpu.vcpus = Some(5) }, "spec.cpu.vcpus", "cpu vcpus 5 out of range 1-4 (cores x sockets)")]
#[case::vcpus0(|s: &mut MachineSpec| s.cpu.vcpus = Some(0), "spec.cpu.vcpus", "cpu vcpus 0 out of range 1-1 (cores x sockets)")]
#[case::shutdown(|s: &mut MachineSpec| s.shutdown_timeout_seconds = Some(0), "spec.shutdownTimeoutSeconds", "shutdown timeout 0 s out of range 1-3600")]
#[case::memory(|s: &mut MachineSpec| s.memory = Quantity::Str("64Mi".into()), "spec.memory", "memory 64Mi is below minimum of 128 MB")]
#[case::vmid(|s: &mut MachineSpec| s.vmid = Some(99), "spec.vmid", "vmid 99 is out of range 100-999999999")]
#[case::vlan(|s: &mut MachineSpec| s.networks = vec![NetworkSpec { vlan: Some(4095), ..net() }], "spec.networks[0].vlan", "VLAN 4095 out of range 1-4094")]
#[case::vlan0(|s: &mut MachineSpec| s.networks = vec![NetworkSpec { vlan: Some(0), ..net() }], "spec.networks[0].vlan", "VLAN 0 out of range 1-4094")]
#[case::bridge(|s: &mut MachineSpec| s.networks = vec![NetworkSpec { bridge: "vm br".into(), ..net() }], "spec.networks[0].bridge", "invalid network bridge name \"vm br\": use letters, digits, '-' and '_'")]
#[case::mac(|s: &mut MachineSpec| s.networks = vec![NetworkSpec { mac_address: Some("zz".into()), ..net() }], "spec.networks[0].macAddress", "invalid MAC address \"zz\"")]
#[case::ip(|s: &mut MachineSpec| s.networks = vec![NetworkSpec { ip: Some("10.0.0.1".into()), ..net() }], "spec.networks[0].ip", "invalid address \"10.0.0.1\": use CIDR (192.0.2.10/24) or dhcp")]
#[case::gw(|s: &mut MachineSpec| s.networks = vec![NetworkSpec { gateway: Some("10.0.0.1".into()), ..net() }], "spec.networks[0].gateway", "a gateway needs a static ip")]
#[case::model(|s: &mut MachineSpec| s.networks = vec![NetworkSpec { model: "ne2k".into(), ..net() }], "spec.networks[0].model", "invalid NIC model \"ne2k\": use virtio, e1000, e1000e, rtl8139 or vmxnet3")]
#[case::disk(|s: &mut MachineSpec| s.disks = vec![DiskSpec { size: Quantity::Str("0.5G".into()), ..disk() }], "spec.disks[0].size", "disk 0.5G is below minimum of 1 GB")]
#[case::bus(|s: &mut MachineSpec| s.disks = vec![DiskSpec { bus: "nvme".into(), ..disk() }], "spec.disks[0].bus", "invalid disk bus \"nvme\": use ide, sata, scsi or virtio")]
#[case::cache(|s: &mut MachineSpec| s.disks = vec![DiskSpec { cache: Some("fast".into()), ..disk() }], "spec.disks[0].cache", "invalid cache mode \"fast\": use none, writethrough, writeback, directsync or unsafe")]
#[case::format(|s: &mut MachineSpec| s.disks = vec![DiskSpec { format: Some("vdi".into()), ..disk() }], "spec.disks[0].format", "invalid disk format \"vdi\": use raw, qcow2 or vmdk")]
#[case::provisioning(|s: &mut MachineSpec| s.disks = vec![DiskSpec { provisioning: Some("eager".into()), ..disk() }], "spec.disks[0].provisioning", "invalid provisioning \"eager\": use thin or thick")]
#[case::source(|s: &mut MachineSpec| s.source = Some(Source { template: Some("9000".into()), volume: Some("local:iso/x.iso".into()), ..Source::default() }), "spec.source", "give exactly one of template, image and volume")]
#[case::template(|s: &mut MachineSpec| s.source = Some(Source { template: Some("42".into()), ..Source::default() }), "spec.source.template", "template VMID 42 is out of range 100-999999999")]
#[case::volume(|s: &mut MachineSpec| s.source = Some(Source { volume: Some("ubuntu".into()), ..Source::default() }), "spec.source.volume", "invalid volume ID \"ubuntu\": expected storage:path, as local:iso/ubuntu.iso")]
#[case::ostype(|s: &mut MachineSpec| s.os_type = Some("beos".into()), "spec.osType", "invalid os type \"beos\": use linux, windows, solaris, other or a PVE ostype")]
#[case::boot(|s: &mut MachineSpec| s.boot_order = vec!["floppy".into()], "spec.bootOrder[0]", "invalid boot device \"floppy\": use disk, network, cdrom or a device (scsi0)")]
#[case::tag(|s: &mut MachineSpec| s.tags = vec!["a b".into()], "spec.tags[0]", "invalid tag \"a b\"")]
#[case::tenant(|s: &mut MachineSpec| s.tenant = Some("a/b".into()), "spec.tenant", "invalid tenant id \"a/b\": letters, digits, '_', '-', '+', '.'")]
#[case::cluster(|s: &mut MachineSpec| s.cluster.clear(), "spec.cluster", "cluster is required")]
fn machine_rules(#[case] change: fn(&mut MachineSpec), #[case] field: &str, #[case] msg: &str) {
    assert!(validate_machine("ok", &spec()).is_empty());
    let mut s = spec();
    change(&mut s);
    let e = validate_machine("ok", &s);
    assert_eq!(e.get(field).map(String::as_str), Some(msg), "{e:?}");
    assert_eq!(e.len(), 1, "{e:?}");
}

fn net() -> NetworkSpec {
    serde_yaml::from_str("{}").expect("defaults")
}

fn disk() -> DiskSpec {
    serde_yaml::from_str("{size: 10G}").expect("defaults")
}

#[test]
fn pve_names_are_dns_names() {
    assert_eq!(pve_name("my vm_1.x"), "my-vm-1.x");
}

#[test]
fn snapshot_and_image_rules() {
    let s = MachineSnapshotSpec {
        machine: "web".into(),
        ..Default::default()
    };
    assert!(validate_snapshot("before-upgrade", &s).is_empty());
    assert_eq!(snapshot_name("pre.upgrade", &s), "pre_upgrade");
    assert!(validate_snapshot("1st", &s).contains_key("spec.snapshotName"));
    let i = MachineImageSpec {
        cluster: "lab".into(),
        url: Some("https://example.com/jammy.qcow2".into()),
        ..Default::default()
    };
    assert!(validate_image("jammy", &i).is_empty());
    let bad = MachineImageSpec {
        url: Some("ftp://x/y.iso".into()),
        ..i.clone()
    };
    let e = validate_image("jammy", &bad);
    assert!(
        e.contains_key("spec.url") && e.contains_key("spec.fileName"),
        "{e:?}"
    );
    let both = MachineImageSpec {
        template: Some("9000".into()),
        ..i
    };
    assert!(validate_image("jammy", &both).contains_key("spec"));
}
