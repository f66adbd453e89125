use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::types::{
    DeletionPolicy, MachineSnapshotSpec, MachineSnapshotStatus, MachineSpec, Metadata, NetworkSpec,
    Phase, Placement, Quantity, Source,
};

fn machine(yaml: &str) -> Desired {
    let spec: MachineSpec = serde_yaml::from_str(yaml).expect("spec");
    Desired::new(
        &Metadata {
            name: "web".into(),
            ..Metadata::default()
        },
        &spec,
    )
}

fn node(name: &str) -> NodeInfo {
    NodeInfo {
        name: name.into(),
        online: true,
        maxmem: 32 * GIB,
        maxcpu: 8,
        bridges: Some(vec!["vmbr0".into()]),
        ..NodeInfo::default()
    }
}

fn observed() -> Observed {
    Observed {
        cluster: "lab".into(),
        nodes: vec![node("pve")],
        ..Observed::default()
    }
}

const BASIC: &str = "
cluster: lab
cpu: { cores: 2 }
memory: 2Gi
disks: [{ size: 20G }]
networks: [{ bridge: vmbr0, vlan: 100 }]
tags: [web]
tenant: acme
";

/// The VM `plan` would create for `d`, as PVE then holds it.
fn created(d: &Desired, running: bool) -> ObservedVm {
    let mut config: BTreeMap<String, String> = d.config("lab", &BTreeMap::new());
    config.insert(
        "net0".into(),
        "virtio=BC:24:11:00:00:01,bridge=vmbr0,tag=100".into(),
    );
    config.insert("scsi0".into(), "local-lvm:vm-10000-disk-0,size=20G".into());
    ObservedVm {
        vmid: 10000,
        node: "pve".into(),
        running,
        config,
        ..ObservedVm::default()
    }
}

#[test]
fn a_new_machine_is_created_on_the_lowest_free_vmid() {
    let d = machine(BASIC);
    let mut o = observed();
    o.used_vmids = [100, 10000, 10001, 10003].into();
    let p = plan_machine(&d, &o);
    let Some(Step::Create {
        node,
        vmid,
        auto,
        params,
    }) = p.steps.first()
    else {
        panic!("{p:?}")
    };
    assert_eq!((node.as_str(), *vmid, *auto), ("pve", 10002, true));
    let params: BTreeMap<_, _> = params.iter().cloned().collect();
    assert_eq!(params["scsi0"], "local-lvm:20");
    assert_eq!(params["net0"], "virtio,bridge=vmbr0,tag=100");
    assert_eq!(params["memory"], "2048");
    assert_eq!(params["cores"], "2");
    assert_eq!(params["tags"], "pve-operator;tenant_acme;web");
    assert_eq!(
        params["description"],
        "managed-by=pve-operator machine=lab/web"
    );
    assert_eq!(p.phase, Phase::Creating);
    assert_eq!(p.steps.len(), 1);
}

#[test]
fn an_explicit_vmid_in_use_is_an_error() {
    let d = machine(&format!("{BASIC}vmid: 500\n"));
    let mut o = observed();
    o.used_vmids = [500].into();
    let p = plan_machine(&d, &o);
    assert!(p.steps.is_empty());
    assert_eq!(p.phase, Phase::Error);
    assert_eq!(p.conditions[0].message, "VM 500 already exists");
}

#[test]
fn validation_failures_block_everything() {
    let d = machine("cluster: lab\nmemory: 64Mi\n");
    let p = plan_machine(&d, &observed());
    assert!(p.steps.is_empty() && p.blocked);
    assert_eq!(p.conditions[0].reason, "ValidationFailed");
    assert_eq!(
        p.conditions[0].message,
        "spec.memory: memory 64Mi is below minimum of 128 MB"
    );
}

#[test]
fn a_missing_bridge_is_a_network_error() {
    let d = machine("cluster: lab\nnode: pve\nnetworks: [{bridge: vmbr9}]\n");
    let p = plan_machine(&d, &observed());
    assert!(p.steps.is_empty());
    let c = p
        .conditions
        .iter()
        .find(|c| c.kind == "NetworkConfigured")
        .expect("cond");
    assert_eq!(c.reason, "NetworkError");
    assert_eq!(
        c.message,
        "network bridge 'vmbr9' does not exist on node 'pve'"
    );
}

#[test]
fn node_selection_honours_resources_labels_limits_and_anti_affinity() {
    let mut d = machine("cluster: lab\nmemory: 4Gi\n");
    d.labels.insert("app".into(), "db".into());
    let mut o = observed();
    let mut a = node("a");
    a.allocated_mem = 30 * GIB; // 2 GiB free
    let mut b = node("b");
    b.allocated_mem = 8 * GIB;
    b.labels.insert("zone".into(), "east".into());
    let mut c = node("c");
    c.allocated_mem = 4 * GIB;
    c.max_vms = Some(3);
    c.vm_count = 3;
    o.nodes = vec![a, b, c];
    assert_eq!(select_node(&d, &o), Ok("b".into()));
    // anti-affinity: a peer with app=db on b
    d.spec.placement = Some(Placement {
        anti_affinity: vec!["app".into()],
        ..Placement::default()
    });
    o.peers.push(Peer {
        machine: "db-0".into(),
        labels: d.labels.clone(),
        node: "b".into(),
    });
    let e = select_node(&d, &o).unwrap_err().to_string();
    assert_eq!(
        e,
        "no node fits: a: insufficient resources: 2048 MiB free, 4096 MiB requested; \
         b: holds 'db-0' (anti-affinity); c: has 3 VMs, the limit is 3"
    );
    // node selector
    o.peers.clear();
    d.spec.placement = Some(Placement {
        node_selector: [("zone".to_string(), "west".to_string())].into(),
        ..Placement::default()
    });
    assert!(
        select_node(&d, &o)
            .unwrap_err()
            .to_string()
            .contains("b: does not match the node selector")
    );
    // minFreeMemory and maxVMsPerNode
    d.spec.placement = Some(Placement {
        min_free_memory: Some(Quantity::Str("25Gi".into())),
        ..Placement::default()
    });
    let e = select_node(&d, &o).unwrap_err().to_string();
    assert!(e.contains("b: insufficient resources: 24576 MiB free, 4096 MiB requested plus 25600 MiB to keep free"), "{e}");
    d.spec.placement = Some(Placement {
        max_vms_per_node: Some(3),
        ..Placement::default()
    });
    assert_eq!(select_node(&d, &o), Ok("b".into()));
}

#[test]
fn the_emptiest_node_wins() {
    let d = machine("cluster: lab\n");
    let mut o = observed();
    let mut a = node("a");
    a.allocated_mem = 10 * GIB;
    o.nodes = vec![a, node("b"), node("c")];
    assert_eq!(select_node(&d, &o), Ok("b".into()));
    o.nodes[2].online = false;
    o.allowed_nodes = vec!["a".into(), "c".into()];
    assert_eq!(select_node(&d, &o), Ok("a".into()));
}

#[test]
fn vmids_come_from_the_operator_range() {
    assert_eq!(assign_vmid(&BTreeSet::new()), Some(10_000));
    assert_eq!(assign_vmid(&[10_000, 10_002].into()), Some(10_001));
    let full: BTreeSet<u32> = VMID_RANGE.collect();
    assert_eq!(assign_vmid(&full), None);
}

#[test]
fn a_vm_matching_its_spec_needs_nothing() {
    let d = machine(BASIC);
    let mut o = observed();
    o.vm = Some(created(&d, true));
    let p = plan_machine(&d, &o);
    assert_eq!(p.steps, vec![]);
    assert_eq!(p.phase, Phase::Running);
    let ready = p
        .conditions
        .iter()
        .find(|c| c.kind == "Ready")
        .expect("ready");
    assert!(ready.is_true(), "{p:?}");
}

#[test]
fn a_stopped_vm_is_configured_then_started() {
    let d = machine(BASIC);
    let mut o = observed();
    let mut vm = created(&d, false);
    vm.config.insert("cores".into(), "1".into());
    o.vm = Some(vm);
    let p = plan_machine(&d, &o);
    assert_eq!(
        p.steps,
        vec![
            Step::Configure {
                node: "pve".into(),
                vmid: 10000,
                set: vec![("cores".into(), "2".into())],
                delete: vec![],
            },
            Step::Start {
                node: "pve".into(),
                vmid: 10000
            }
        ]
    );
}

#[rstest::rstest]
#[case::lvm("lvm", None, None)]
#[case::iscsi("iscsi", None, None)]
#[case::zfs("zfspool", Some(serde_json::json!({})), None)]
#[case::zfs_sparse("zfspool", Some(serde_json::json!({ "sparse": 1 })), Some("is sparse"))]
#[case::dir_full("dir", Some(serde_json::json!({ "preallocation": "full" })), None)]
#[case::dir_falloc("nfs", Some(serde_json::json!({ "preallocation": "falloc" })), None)]
#[case::dir_default("dir", Some(serde_json::json!({})), Some("preallocates metadata"))]
#[case::dir_unread("dir", None, Some("could not be read"))]
#[case::lvmthin("lvmthin", None, Some("provisions thinly"))]
#[case::rbd("rbd", Some(serde_json::json!({})), Some("provisions thinly"))]
fn thick_provisioning_follows_the_storage_type_and_options(
    #[case] kind: &str,
    #[case] options: Option<serde_json::Value>,
    #[case] refused: Option<&str>,
) {
    let got = thick_refusal(
        "scsi0",
        "ssd-storage",
        kind,
        options.as_ref().and_then(|o| o.as_object()),
    );
    match (refused, got) {
        (None, None) => {}
        (Some(why), Some(m)) => {
            assert!(
                m.starts_with(&format!("disk scsi0: storage 'ssd-storage' ({kind}) ")),
                "{m}"
            );
            assert!(m.contains(why), "{m}");
        }
        (want, got) => panic!("{kind}: want {want:?}, got {got:?}"),
    }
}

#[test]
fn a_machine_whose_thick_disks_cannot_be_thick_is_not_created() {
    let d =
        machine("cluster: lab\ndisks: [{ size: 10G, storage: local-lvm, provisioning: thick }]\n");
    let mut o = observed();
    o.provisioning_refused = vec![thick_refusal("scsi0", "local-lvm", "lvmthin", None).unwrap()];
    let p = plan_machine(&d, &o);
    assert!(p.steps.is_empty(), "{p:?}");
    assert_eq!(p.phase, Phase::Error);
    let c = p
        .conditions
        .iter()
        .find(|c| c.kind == "ResourcesAllocated")
        .expect("cond");
    assert_eq!(c.reason, "ThinProvisionedStorage");
    assert!(
        c.message
            .contains("storage 'local-lvm' (lvmthin) provisions thinly"),
        "{}",
        c.message
    );
    o.provisioning_refused.clear();
    assert!(matches!(
        plan_machine(&d, &o).steps.first(),
        Some(Step::Create { .. })
    ));
}

#[test]
fn a_clone_that_keeps_its_template_s_hardware_is_not_reconfigured_to_defaults() {
    let d = machine("cluster: lab\nsource: { template: tmpl, keepHardware: true }\n");
    let mut o = observed();
    let mut vm = created(&d, true);
    for (k, v) in [
        ("cores", "4"),
        ("sockets", "2"),
        ("vcpus", "6"),
        ("memory", "512"),
        ("balloon", "0"),
        ("net0", "virtio=BC:24:11:00:00:09,bridge=vmbr1"),
        ("ipconfig0", "ip=dhcp"),
    ] {
        vm.config.insert(k.into(), v.into());
    }
    o.vm = Some(vm);
    let p = plan_machine(&d, &o);
    let touched: Vec<String> = p
        .steps
        .iter()
        .flat_map(|s| match s {
            Step::Configure { set, delete, .. } => set
                .iter()
                .map(|(k, _)| k.clone())
                .chain(delete.iter().cloned())
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    for k in [
        "cores",
        "sockets",
        "vcpus",
        "memory",
        "balloon",
        "net0",
        "ipconfig0",
    ] {
        assert!(!touched.contains(&k.to_string()), "{k} changed: {p:?}");
    }
    // Without the flag the same VM is brought to the machine's defaults.
    let d = machine("cluster: lab\nsource: { template: tmpl }\n");
    let desired = d.config("lab", &BTreeMap::new());
    assert_eq!(
        (desired["cores"].as_str(), desired["memory"].as_str()),
        ("1", "2048")
    );
}

#[test]
fn drift_is_undone_and_the_mac_is_kept() {
    let d = machine(BASIC);
    let mut o = observed();
    let mut vm = created(&d, true);
    vm.config.insert("memory".into(), "4096".into()); // larger: decrease
    vm.config.insert(
        "net0".into(),
        "virtio=BC:24:11:00:00:01,bridge=vmbr0".into(),
    );
    vm.config.insert("tags".into(), "pve-operator;web".into());
    vm.config.insert("net1".into(), "e1000,bridge=vmbr0".into());
    vm.config.insert("protection".into(), "1".into());
    o.vm = Some(vm);
    let p = plan_machine(&d, &o);
    let Some(Step::Configure { set, delete, .. }) = p.steps.first() else {
        panic!("{p:?}")
    };
    let set: BTreeMap<_, _> = set.iter().cloned().collect();
    assert_eq!(set["net0"], "virtio=BC:24:11:00:00:01,bridge=vmbr0,tag=100");
    assert_eq!(set["tags"], "pve-operator;tenant_acme;web");
    assert!(
        !set.contains_key("memory"),
        "memory decrease waits for a power cycle"
    );
    assert_eq!(delete, &vec!["net1".to_string(), "protection".to_string()]);
    let c = p
        .conditions
        .iter()
        .find(|c| c.kind == "ResourcesAllocated")
        .expect("cond");
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("False", "PowerCycleRequired")
    );
    assert_eq!(
        c.message,
        "takes effect after a power cycle: memory 4096 MiB -> 2048 MiB"
    );
}

#[test]
fn memory_decrease_applies_when_stopped_and_increase_online() {
    let d = machine(&BASIC.replace("2Gi", "1Gi").replace("power", ""));
    let mut o = observed();
    let mut vm = created(&d, false);
    vm.config.insert("memory".into(), "2048".into());
    o.vm = Some(vm);
    let p = plan_machine(&d, &o);
    assert!(
        matches!(&p.steps[0], Step::Configure { set, .. } if set == &vec![("memory".to_string(), "1024".to_string())])
    );
    let d = machine(&BASIC.replace("2Gi", "4Gi"));
    let mut vm = created(&d, true);
    vm.config.insert("memory".into(), "2048".into());
    o.vm = Some(vm);
    let p = plan_machine(&d, &o);
    assert!(
        matches!(&p.steps[..], [Step::Configure { set, .. }] if set == &vec![("memory".to_string(), "4096".to_string())]),
        "{p:?}"
    );
}

#[test]
fn disks_grow_and_never_shrink() {
    let d = machine(&BASIC.replace("20G", "40G"));
    let mut o = observed();
    o.vm = Some(created(&d, true));
    let p = plan_machine(&d, &o);
    assert_eq!(
        p.steps,
        vec![Step::Resize {
            node: "pve".into(),
            vmid: 10000,
            disk: "scsi0".into(),
            size: "40G".into()
        }]
    );
    let d = machine(&BASIC.replace("20G", "10G"));
    o.vm = Some(created(&d, true));
    let p = plan_machine(&d, &o);
    assert!(p.steps.is_empty());
    let c = p
        .conditions
        .iter()
        .find(|c| c.kind == "ResourcesAllocated")
        .expect("c");
    assert_eq!(c.reason, "DiskShrinkRefused");
    assert_eq!(c.message, "scsi0 is 20G, shrinking to 10G is not supported");
}

/// Issue #16: after a rollback PVE's config says 20G while the volume
/// kept its 40G; resizing to 40G is a no-op, so planning it again and
/// again (with Start behind it) kept the VM down for ever.
#[test]
fn a_volume_already_grown_is_not_resized_and_start_comes_first() {
    let d = machine(&BASIC.replace("20G", "40G"));
    let mut o = observed();
    let mut vm = created(&machine(BASIC), false);
    vm.volume_sizes.insert("scsi0".into(), 40 << 30);
    o.vm = Some(vm);
    let p = plan_machine(&d, &o);
    assert_eq!(
        p.steps,
        vec![Step::Start {
            node: "pve".into(),
            vmid: 10000
        }]
    );
    // a stopped VM whose disk does need to grow: started first
    let mut vm = created(&machine(BASIC), false);
    vm.volume_sizes.insert("scsi0".into(), 20 << 30);
    o.vm = Some(vm);
    let p = plan_machine(&d, &o);
    assert!(
        matches!(&p.steps[..], [Step::Start { .. }, Step::Resize { size, .. }] if size == "40G"),
        "{p:?}"
    );
}

#[test]
fn vcpus_are_set_online_and_removed_when_unset() {
    let d = machine(&BASIC.replace("cores: 2", "cores: 4, vcpus: 2"));
    let mut o = observed();
    o.vm = Some(created(&machine(BASIC), true));
    let p = plan_machine(&d, &o);
    let Some(Step::Configure { set, delete, .. }) = p.steps.first() else {
        panic!("{p:?}")
    };
    let set: BTreeMap<_, _> = set.iter().cloned().collect();
    assert_eq!((set["cores"].as_str(), set["vcpus"].as_str()), ("4", "2"));
    assert!(delete.is_empty());
    let mut vm = created(&machine(BASIC), true);
    vm.config.insert("vcpus".into(), "1".into());
    o.vm = Some(vm);
    let p = plan_machine(&machine(BASIC), &o);
    assert!(
        matches!(&p.steps[..], [Step::Configure { set, delete, .. }] if set.is_empty() && delete == &vec!["vcpus".to_string()]),
        "{p:?}"
    );
}

/// More vCPUs than a running VM's cores allow are not sent (PVE would
/// answer a hotplug problem): the new cores wait for a power cycle, and
/// the vCPUs with them.
#[test]
fn vcpus_beyond_the_running_cores_wait_for_a_power_cycle() {
    let d = machine(&BASIC.replace("cores: 2", "cores: 8, vcpus: 8"));
    let mut o = observed();
    o.vm = Some(created(&machine(BASIC), true));
    let p = plan_machine(&d, &o);
    let Some(Step::Configure { set, .. }) = p.steps.first() else {
        panic!("{p:?}")
    };
    let set: BTreeMap<_, _> = set.iter().cloned().collect();
    assert_eq!(set.get("cores").map(String::as_str), Some("8"));
    assert!(!set.contains_key("vcpus"), "{set:?}");
    // Once cores 8 are pending (2 in force): still not sent.
    let mut vm = created(&machine(BASIC), true);
    vm.config.insert("cores".into(), "8".into());
    vm.pending.insert("cores".into(), "8".into());
    vm.in_force.insert("cores".into(), "2".into());
    o.vm = Some(vm);
    let p = plan_machine(&d, &o);
    assert!(p.steps.is_empty(), "{p:?}");
    let c = p
        .conditions
        .iter()
        .find(|c| c.kind == "ResourcesAllocated")
        .expect("cond");
    assert_eq!(c.reason, "PowerCycleRequired");
    assert!(
        c.message
            .contains("vcpus 8 (the VM runs with 2 cores x sockets)"),
        "{}",
        c.message
    );
    // Stopped, both are sent.
    o.vm = Some(created(&machine(BASIC), false));
    let p = plan_machine(&d, &o);
    assert!(
        matches!(&p.steps[0], Step::Configure { set, .. } if set.iter().any(|(k, v)| k == "vcpus" && v == "8")),
        "{p:?}"
    );
}

/// `coresFromNode`: a new VM gets as many cores as its node has CPUs,
/// `cores` of them plugged; a larger count is then hot-plugged into the
/// running VM, its cores kept; a VM with too few cores gets the node's.
#[test]
fn cores_from_node_leave_room_to_hot_plug_vcpus() {
    let small = machine(&BASIC.replace("cores: 2", "cores: 2, coresFromNode: true"));
    let p = plan_machine(&small, &observed());
    let Some(Step::Create { params, .. }) = p.steps.first() else {
        panic!("{p:?}")
    };
    let params: BTreeMap<_, _> = params.iter().cloned().collect();
    assert_eq!(
        (params["cores"].as_str(), params["vcpus"].as_str()),
        ("8", "2")
    );
    let mut vm = created(&small, true);
    vm.config.insert("cores".into(), "8".into());
    let large = machine(&BASIC.replace("cores: 2", "cores: 8, coresFromNode: true"));
    let mut o = observed();
    o.vm = Some(vm.clone());
    let p = plan_machine(&large, &o);
    assert!(
        matches!(&p.steps[..], [Step::Configure { set, delete, .. }] if set == &vec![("vcpus".to_string(), "8".to_string())] && delete.is_empty()),
        "{p:?}"
    );
    // Nothing changes a VM that has room already.
    vm.config.insert("vcpus".into(), "8".into());
    o.vm = Some(vm.clone());
    let p = plan_machine(&large, &o);
    assert!(p.steps.is_empty(), "{p:?}");
    let c = p
        .conditions
        .iter()
        .find(|c| c.kind == "ResourcesAllocated")
        .expect("cond");
    assert_eq!(c.reason, "AllocationSucceeded");
    // A VM made with too few cores gets the node's.
    vm.config.insert("cores".into(), "2".into());
    vm.config.insert("vcpus".into(), "2".into());
    vm.running = false;
    o.vm = Some(vm);
    let p = plan_machine(&large, &o);
    let Some(Step::Configure { set, .. }) = p.steps.first() else {
        panic!("{p:?}")
    };
    let set: BTreeMap<_, _> = set.iter().cloned().collect();
    assert_eq!((set["cores"].as_str(), set["vcpus"].as_str()), ("8", "8"));
}

#[test]
fn a_reboot_is_asked_once_per_value_after_the_changes() {
    let d = machine(&format!("{BASIC}rebootRequest: '1'\n").replace("cores: 2", "cores: 4"));
    let mut o = observed();
    o.vm = Some(created(&machine(BASIC), true));
    let p = plan_machine(&d, &o);
    assert!(
        matches!(
            &p.steps[..],
            [Step::Configure { .. }, Step::Reboot { vmid: 10000, .. }]
        ),
        "{p:?}"
    );
    o.last_reboot = Some("1".into());
    let p = plan_machine(&d, &o);
    assert!(
        !p.steps.iter().any(|s| matches!(s, Step::Reboot { .. })),
        "{p:?}"
    );
    // not while stopped
    o.last_reboot = None;
    o.vm = Some(created(&d, false));
    let p = plan_machine(&d, &o);
    assert!(matches!(&p.steps[..], [Step::Start { .. }]), "{p:?}");
}

#[test]
fn suspend_and_resume() {
    let d = machine(&format!("{BASIC}powerState: Suspended\n"));
    let mut o = observed();
    o.vm = Some(created(&d, true));
    let p = plan_machine(&d, &o);
    assert!(
        matches!(&p.steps[..], [Step::Suspend { vmid: 10000, .. }]),
        "{p:?}"
    );
    // stopped: started, then suspended
    o.vm = Some(created(&d, false));
    let p = plan_machine(&d, &o);
    assert!(
        matches!(&p.steps[..], [Step::Start { .. }, Step::Suspend { .. }]),
        "{p:?}"
    );
    let mut vm = created(&d, true);
    vm.paused = true;
    o.vm = Some(vm.clone());
    let p = plan_machine(&d, &o);
    assert!(p.steps.is_empty(), "{p:?}");
    assert_eq!(p.phase, Phase::Suspended);
    // On again: resumed
    let p = plan_machine(&machine(BASIC), &o);
    assert!(matches!(&p.steps[..], [Step::Resume { .. }]), "{p:?}");
}

#[test]
fn pending_keys_on_a_running_vm_are_reported_not_resent() {
    let d = machine(&BASIC.replace("cores: 2", "cores: 4"));
    let mut o = observed();
    let mut vm = created(&d, true);
    vm.config.insert("cores".into(), "2".into());
    vm.pending.insert("cores".into(), "4".into());
    o.vm = Some(vm);
    let p = plan_machine(&d, &o);
    assert!(p.steps.is_empty(), "{p:?}");
    let c = p
        .conditions
        .iter()
        .find(|c| c.kind == "ResourcesAllocated")
        .expect("c");
    assert_eq!(c.message, "takes effect after a power cycle: cores");
}

#[test]
fn power_off_shuts_down_first_or_stops_when_hard() {
    let d = machine(&format!("{BASIC}powerState: Off\n"));
    let mut o = observed();
    o.vm = Some(created(&d, true));
    let p = plan_machine(&d, &o);
    assert_eq!(
        p.steps,
        vec![Step::Shutdown {
            node: "pve".into(),
            vmid: 10000,
            timeout: 60
        }]
    );
    let hard = machine(&format!(
        "{BASIC}powerState: Off\npowerOffMode: Hard\nshutdownTimeoutSeconds: 5\n"
    ));
    let p = plan_machine(&hard, &o);
    assert_eq!(
        p.steps,
        vec![Step::Stop {
            node: "pve".into(),
            vmid: 10000
        }]
    );
    let slow = machine(&format!(
        "{BASIC}powerState: Off\nshutdownTimeoutSeconds: 5\n"
    ));
    let p = plan_machine(&slow, &o);
    assert!(
        matches!(p.steps[..], [Step::Shutdown { timeout: 5, .. }]),
        "{p:?}"
    );
    o.vm = Some(created(&d, false));
    let p = plan_machine(&d, &o);
    assert!(p.steps.is_empty());
    assert_eq!(p.phase, Phase::Stopped);
}

#[test]
fn a_locked_vm_is_waited_for() {
    let d = machine(BASIC);
    let mut o = observed();
    let mut vm = created(&d, false);
    vm.lock = Some("clone".into());
    o.vm = Some(vm);
    let p = plan_machine(&d, &o);
    assert!(p.steps.is_empty() && p.wait);
    assert_eq!(p.phase, Phase::Creating);
}

#[test]
fn templates_are_cloned_beside_them() {
    let mut d =
        machine("cluster: lab\nsource: { template: ubuntu, linked: false, storage: local-lvm }\n");
    d.spec.networks.push(NetworkSpec {
        bridge: "vmbr0".into(),
        model: "virtio".into(),
        mac_address: None,
        vlan: None,
        firewall: false,
        ip: None,
        gateway: None,
        name: None,
    });
    let mut o = observed();
    o.nodes.push(node("pve2"));
    o.source = SourceState::Found {
        node: "pve2".into(),
        vmid: 9000,
    };
    let p = plan_machine(&d, &o);
    assert_eq!(
        p.steps,
        vec![Step::Clone {
            node: "pve2".into(),
            source: 9000,
            vmid: 10000,
            auto: true,
            target: None,
            name: "web".into(),
            description: "managed-by=pve-operator machine=lab/web".into(),
            full: true,
            storage: Some("local-lvm".into()),
        }]
    );
    o.source = SourceState::Missing("template 'ubuntu' not found".into());
    let p = plan_machine(&d, &o);
    assert!(p.steps.is_empty());
    assert_eq!(p.phase, Phase::Pending);
    let _ = Source::default();
}

#[test]
fn cloud_init_and_iso_drives_are_added() {
    let d = machine(
        "cluster: lab\nsource: { volume: 'local:iso/x.iso' }\nnetworks: [{ip: 192.0.2.10/24, gateway: 192.0.2.1}]\ncloudInit: { user: ops, dns: [192.0.2.53], sshKeys: ['ssh-ed25519 AAA a@b'] }\nbootOrder: [cdrom, network]\n",
    );
    let p: BTreeMap<_, _> = d.create_params("lab", 10000).into_iter().collect();
    assert_eq!(p["ide2"], "local:iso/x.iso,media=cdrom");
    assert_eq!(p["ide3"], "local-lvm:cloudinit");
    assert_eq!(p["ipconfig0"], "ip=192.0.2.10/24,gw=192.0.2.1");
    assert_eq!(p["nameserver"], "192.0.2.53");
    assert_eq!(p["ciuser"], "ops");
    assert_eq!(p["sshkeys"], "ssh-ed25519%20AAA%20a%40b");
    assert_eq!(p["boot"], "order=ide2;net0");
}

#[test]
fn deletion_respects_policy_and_protection() {
    let vm = ObservedVm {
        vmid: 10000,
        node: "pve".into(),
        running: true,
        ..ObservedVm::default()
    };
    let p = plan_delete(DeletionPolicy::Delete, false, Some(&vm));
    assert_eq!(p.steps.len(), 2);
    assert!(matches!(p.steps[1], Step::Destroy { vmid: 10000, .. }));
    assert!(plan_delete(DeletionPolicy::Orphan, false, Some(&vm)).done);
    assert!(plan_delete(DeletionPolicy::Delete, false, None).done);
    let mut protected = vm.clone();
    protected.config.insert("protection".into(), "1".into());
    // the Machine asks for protection: blocked
    let p = plan_delete(DeletionPolicy::Delete, true, Some(&protected));
    assert!(p.steps.is_empty() && !p.done && p.blocked.is_some());
    // it does not (protection: false in the deleting edit): lifted first,
    // nothing destroyed in this step
    let p = plan_delete(DeletionPolicy::Delete, false, Some(&protected));
    assert_eq!(p.blocked, None);
    assert!(
        matches!(&p.steps[..], [Step::Configure { vmid: 10000, set, delete, .. }]
            if set.is_empty() && delete == &["protection".to_string()]),
        "{:?}",
        p.steps
    );
    // an Orphan keeps the VM, protected or not
    assert!(plan_delete(DeletionPolicy::Orphan, true, Some(&protected)).done);
}

#[test]
fn snapshots_are_taken_rolled_back_once_and_deleted() {
    let spec = MachineSnapshotSpec {
        machine: "web".into(),
        include_memory: true,
        rollback_request: Some("1".into()),
        ..Default::default()
    };
    let mut st = MachineSnapshotStatus::default();
    let vm = Some(("pve", 10000));
    let s = plan_snapshot("pre", &spec, &st, vm, &[], false);
    assert!(matches!(&s[..], [Step::Snapshot { vmstate: true, .. }]));
    let have = vec!["pre".to_string()];
    let s = plan_snapshot("pre", &spec, &st, vm, &have, false);
    assert!(matches!(&s[..], [Step::Rollback { .. }]));
    st.last_rollback = Some("1".into());
    assert!(plan_snapshot("pre", &spec, &st, vm, &have, false).is_empty());
    let s = plan_snapshot("pre", &spec, &st, vm, &have, true);
    assert!(matches!(&s[..], [Step::DeleteSnapshot { .. }]));
    assert!(plan_snapshot("pre", &spec, &st, None, &have, false).is_empty());
}

#[test]
fn agent_addresses_skip_loopback_and_link_local() {
    let answer = serde_json::json!({"result": [
        {"name": "lo", "ip-addresses": [{"ip-address": "127.0.0.1"}, {"ip-address": "::1"}]},
        {"name": "eth0", "ip-addresses": [
            {"ip-address": "192.0.2.10"}, {"ip-address": "fe80::1"},
            {"ip-address": "169.254.1.1"}, {"ip-address": "2001:db8::10"}]},
        {"name": "eth1", "ip-addresses": [{"ip-address": "127.0.0.2"}]}
    ]});
    assert_eq!(agent_ips(&answer), vec!["192.0.2.10", "2001:db8::10"]);
}

#[test]
fn ownership_marks_are_exact() {
    assert!(has_mark(
        Some("managed-by=pve-operator machine=lab/web\n"),
        "lab",
        "web"
    ));
    assert!(!has_mark(
        Some("managed-by=pve-operator machine=lab/web2"),
        "lab",
        "web"
    ));
    assert!(!has_mark(None, "lab", "web"));
}

#[test]
fn a_rewritten_vm_name_is_reported() {
    let renamed = machine(&format!("{BASIC}name: my vm_1\n"));
    assert_eq!(renamed.vm_name, "my-vm-1");
    let p = plan_machine(&renamed, &observed());
    let c = p
        .conditions
        .iter()
        .find(|c| c.kind == NAME_CONDITION)
        .expect("reported");
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("False", "NameRewritten")
    );
    assert!(
        c.message.contains("'my-vm-1'") && c.message.contains("'my vm_1'"),
        "{}",
        c.message
    );
    // refused specs say it too
    let invalid = machine(&format!("{}name: my vm\n", BASIC.replace("2Gi", "1Mi")));
    assert!(!invalid.errors.is_empty());
    assert!(
        plan_machine(&invalid, &observed())
            .conditions
            .iter()
            .any(|c| c.kind == NAME_CONDITION)
    );
    let kept = machine(BASIC);
    assert!(
        !plan_machine(&kept, &observed())
            .conditions
            .iter()
            .any(|c| c.kind == NAME_CONDITION)
    );
}

#[test]
fn a_disk_whose_configuration_and_volume_disagree_is_not_ready() {
    let d = machine(&BASIC.replace("20G", "30G"));
    let mut vm = created(&d, true);
    // after a rollback: the configuration's older 20G, the volume's 30G
    vm.config
        .insert("scsi0".into(), "local-lvm:vm-10000-disk-0,size=20G".into());
    vm.volume_sizes.insert("scsi0".into(), 30 * GIB);
    let mut o = observed();
    o.vm = Some(vm.clone());
    let p = plan_machine(&d, &o);
    assert!(
        !p.steps.iter().any(|s| matches!(s, Step::Resize { .. })),
        "{:?}",
        p.steps
    );
    let ready = p.conditions.iter().find(|c| c.kind == "Ready").unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "DiskSizeMismatch")
    );
    assert!(
        ready.message.contains("says 20G") && ready.message.contains("is 30G"),
        "{}",
        ready.message
    );
    // agreeing: ready
    vm.config
        .insert("scsi0".into(), "local-lvm:vm-10000-disk-0,size=30G".into());
    o.vm = Some(vm);
    let p = plan_machine(&d, &o);
    let ready = p.conditions.iter().find(|c| c.kind == "Ready").unwrap();
    assert!(ready.is_true(), "{ready:?}");
}
