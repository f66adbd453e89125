//! Feature checks, sendkey and the status views.

use super::*;

// ---------------------------------------------------------------------
// Feature, sendkey, status views

#[rstest]
#[case(100, "snapshot", 1)]
#[case(100, "clone", 0)]
#[case(100, "copy", 1)]
#[case(900, "clone", 1)]
fn features_of_lvmthin_disks(lab: World, #[case] vmid: u32, #[case] f: &str, #[case] has: u8) {
    let v = crate::api::qemu::view::feature(
        &super::feature(&lab.c, "pve", vmid, f, None).expect("answer"),
    );
    assert_eq!(v["hasFeature"], json!(has), "{v}");
    assert_eq!(v["nodes"], json!(["pve"]));
}

#[rstest]
fn an_unknown_feature_is_a_400(lab: World) {
    assert_eq!(
        refused(super::feature(&lab.c, "pve", 100, "teleport", None)),
        (
            400,
            "feature: value 'teleport' does not have a value in the enumeration 'snapshot, clone, copy'"
                .into()
        )
    );
}

#[rstest]
fn sendkey_needs_a_running_vm(lab: World) {
    assert_eq!(
        refused(lab.c.guests.vm_sendkey("pve", 100)),
        (500, "VM 100 not running".into())
    );
    assert!(lab.c.guests.vm_sendkey("pve", 101).is_ok());
}

#[rstest]
fn status_of_a_running_vm(lab: World) {
    let vm = &lab.c.guests[&101];
    let st =
        crate::api::qemu::status::vm_status(&lab.c.vm_status_reader(), vm, lab.now_ms, true, true);
    assert_eq!(st["status"], json!("running"));
    assert_eq!(st["qmpstatus"], json!("running"));
    assert_eq!(st["uptime"], json!(3600), "seeded VMs have run for an hour");
    assert_eq!(st["maxmem"], json!(4096u64 << 20));
    assert_eq!(st["maxdisk"], json!(16u64 << 30));
    assert_eq!(st["ha"], json!({"managed": 0}));
    assert_eq!(st["agent"], json!(1));
    assert_eq!(st["name"], json!("db"));
}

#[rstest]
fn status_of_a_stopped_template(lab: World) {
    let st = lab.vm_status(900, false, false);
    assert_eq!(st["status"], json!("stopped"));
    assert_eq!(st["template"], json!(1));
    assert_eq!(st["uptime"], json!(0));
    assert_eq!(st["mem"], json!(0));
    assert!(st.get("pid").is_none());
}

#[rstest]
fn config_view_masks_the_cloudinit_password(mut lab: World) {
    lab.c
        .guests
        .get_mut(&100)
        .expect("vm")
        .config
        .insert("cipassword".into(), "$5$hash".into());
    let v = crate::api::qemu::view::config(
        &lab.c
            .guests()
            .config_view(lab.c.version(), "pve", 100, false)
            .expect("view"),
    );
    assert_eq!(v["cipassword"], json!("**********"));
    assert_eq!(v["cores"], json!(2), "integers are typed");
    assert_eq!(v["memory"], json!("2048"), "memory is a property string");
}

#[rstest]
fn a_vm_missing_on_the_node_is_a_500(lab: World) {
    assert_eq!(
        refused(
            lab.c
                .guests()
                .config_view(lab.c.version(), "pve", 555, false)
        ),
        (
            500,
            "Configuration file 'nodes/pve/qemu-server/555.conf' does not exist".into()
        )
    );
    assert_eq!(
        refused(lab.c.guests.vm_on_node("pve", 555)),
        (
            500,
            "unable to find configuration file for VM 555 on node 'pve'".into()
        )
    );
}

// ---------------------------------------------------------------------
// Status details

#[rstest]
fn a_stopped_vm_in_full_status(lab: World) {
    let st = lab.vm_status(100, true, true);
    assert_eq!(st["qmpstatus"], json!("stopped"));
    for absent in [
        "diskread",
        "nics",
        "blockstat",
        "running-machine",
        "pid",
        "balloon",
    ] {
        assert!(st.get(absent).is_none(), "{absent}: {st}");
    }
    assert!(st.get("agent").is_none(), "100 has no agent");
}

#[rstest]
fn status_without_full_has_no_run_details(lab: World) {
    let st = lab.vm_status(101, false, false);
    for absent in [
        "qmpstatus",
        "nics",
        "blockstat",
        "ha",
        "agent",
        "proxmox-support",
    ] {
        assert!(st.get(absent).is_none(), "{absent}: {st}");
    }
    assert_eq!(st["pid"], json!(10_101));
}

#[rstest]
fn a_hibernated_vm_shows_stopped_with_lock_suspended(mut lab: World) {
    lab.qm(
        "qmsuspend",
        101,
        QemuOp::Suspend {
            skiplock: false,
            todisk: Some("local-lvm".into()),
        },
    );
    let st = lab.vm_status(101, true, true);
    assert_eq!(st["status"], json!("stopped"));
    assert_eq!(st["qmpstatus"], json!("stopped"));
    assert_eq!(st["lock"], json!("suspended"));
}

#[rstest]
fn status_fields_that_follow_the_config(mut lab: World) {
    {
        let conf = &mut lab.c.guests.get_mut(&100).expect("vm").config;
        conf.insert("sockets".into(), "4".into());
        conf.insert("cores".into(), "8".into());
        conf.insert("balloon".into(), "1024".into());
        conf.insert("serial0".into(), "socket".into());
        conf.insert("tags".into(), "a;b".into());
        conf.insert("vga".into(), "std".into());
    }
    let st = lab.vm_status(100, false, true);
    assert_eq!(st["cpus"], json!(16), "capped at the host's 16 CPUs");
    assert_eq!(st["balloon_min"], json!(1024u64 << 20));
    assert_eq!(st["shares"], json!(1000));
    assert_eq!(st["serial"], json!(1));
    assert_eq!(st["tags"], json!("a;b"));
    assert_eq!(st["clipboard"], json!(null), "present once vga is set");
    assert!(st.get("spice").is_none());
    lab.c
        .guests
        .get_mut(&100)
        .expect("vm")
        .config
        .insert("vga".into(), "qxl,clipboard=vnc".into());
    let st = lab.vm_status(100, false, true);
    assert_eq!(st["spice"], json!(1));
    assert_eq!(st["clipboard"], json!("vnc"));
}

#[rstest]
fn vcpus_win_over_sockets_and_cores(mut lab: World) {
    {
        let conf = &mut lab.c.guests.get_mut(&100).expect("vm").config;
        conf.insert("vcpus".into(), "3".into());
    }
    let st = lab.vm_status(100, false, false);
    assert_eq!(st["cpus"], json!(3));
}

const PRESSURES: [&str; 6] = [
    "pressurecpusome",
    "pressurecpufull",
    "pressureiosome",
    "pressureiofull",
    "pressurememorysome",
    "pressurememoryfull",
];

#[rstest]
#[case(PveVersion::V9_1, true)]
#[case(PveVersion::V8_4, false)]
fn the_listing_has_a_running_vms_pressure_on_pve_9(#[case] version: PveVersion, #[case] has: bool) {
    let lab = World::from_yaml_v(super::super::LAB, version);
    let running = lab.vm_status(101, false, false);
    let stopped = lab.vm_status(100, false, false);
    for k in PRESSURES {
        assert_eq!(running.get(k).is_some(), has, "{k} in {running}");
        assert!(running.get(k).is_none_or(serde_json::Value::is_number));
        assert!(stopped.get(k).is_none(), "{k} of a stopped VM");
    }
}

#[rstest]
fn a_stopped_vm_uses_the_integer_zero_of_cpu(lab: World) {
    let stopped = lab.vm_status(100, true, true);
    assert!(stopped["cpu"].is_u64(), "{}", stopped["cpu"]);
    assert_eq!(stopped["cpu"], json!(0));
    let running = lab.vm_status(101, false, false);
    assert!(running["cpu"].is_f64());
}

/// QEMU's `BlockDeviceStats`: every member `query-blockstats` answers.
const BLOCK_DEVICE_STATS: [&str; 33] = [
    "rd_bytes",
    "wr_bytes",
    "zone_append_bytes",
    "unmap_bytes",
    "rd_operations",
    "wr_operations",
    "zone_append_operations",
    "flush_operations",
    "unmap_operations",
    "rd_total_time_ns",
    "wr_total_time_ns",
    "zone_append_total_time_ns",
    "flush_total_time_ns",
    "unmap_total_time_ns",
    "rd_merged",
    "wr_merged",
    "zone_append_merged",
    "unmap_merged",
    "wr_highest_offset",
    "idle_time_ns",
    "failed_rd_operations",
    "failed_wr_operations",
    "failed_zone_append_operations",
    "failed_flush_operations",
    "failed_unmap_operations",
    "invalid_rd_operations",
    "invalid_wr_operations",
    "invalid_zone_append_operations",
    "invalid_flush_operations",
    "invalid_unmap_operations",
    "account_invalid",
    "account_failed",
    "timed_stats",
];

#[rstest]
#[case(PveVersion::V9_1)]
#[case(PveVersion::V8_4)]
fn blockstat_has_every_counter_of_qemu(#[case] version: PveVersion) {
    let lab = World::from_yaml_v(super::super::LAB, version);
    let st = lab.vm_status(101, true, true);
    let disk = st["blockstat"]["scsi0"]
        .as_object()
        .expect("scsi0's counters");
    let mut keys: Vec<&str> = disk.keys().map(String::as_str).collect();
    keys.sort_unstable();
    let mut want = BLOCK_DEVICE_STATS.to_vec();
    want.sort_unstable();
    assert_eq!(keys, want);
}

#[rstest]
#[case(PveVersion::V9_1)]
#[case(PveVersion::V8_4)]
fn rrddata_of_a_stopped_vm_has_only_its_sizes(#[case] version: PveVersion) {
    let lab = World::from_yaml_v(super::super::LAB, version);
    let points = rrddata(&lab, 100, "hour");
    let points = points.as_array().expect("points");
    assert_eq!(points.len(), 60);
    for p in points {
        let mut keys: Vec<&str> = p
            .as_object()
            .expect("point")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(keys, ["disk", "maxcpu", "maxdisk", "maxmem", "time"], "{p}");
    }
    let running = rrddata(&lab, 101, "hour");
    let last = &running[59];
    for k in ["cpu", "mem", "netin", "netout", "diskread", "diskwrite"] {
        assert!(last.get(k).is_some(), "{k} in {last}");
    }
    assert_eq!(last.get("memhost").is_some(), version.is_v9());
}

#[rstest]
// T0 is 20 s past a minute: with 1-minute steps 31 points of the frame
// lie before the creation; 8.4's day has 30-minute steps, the newest
// starting before the creation, so every point is empty and the last one
// is dropped.
#[case(PveVersion::V9_1, "hour", 60, 31)]
#[case(PveVersion::V8_4, "hour", 60, 31)]
#[case(PveVersion::V9_1, "day", 1440, 1411)]
#[case(PveVersion::V8_4, "day", 69, 69)]
fn rrddata_before_the_vm_existed_has_only_times(
    #[case] version: PveVersion,
    #[case] timeframe: &str,
    #[case] len: usize,
    #[case] empty: usize,
) {
    let mut lab = World::from_yaml_v(super::super::LAB, version);
    let now = lab.now();
    // Created half an hour ago: the RRD file holds nothing from before.
    let meta = format!("creation-qemu=9.2.0,ctime={}", now - 1800);
    lab.c
        .guests
        .get_mut(&100)
        .expect("VM 100")
        .config
        .insert("meta".into(), meta);
    let points = rrddata(&lab, 100, timeframe);
    let points = points.as_array().expect("points");
    let (reso, _) = crate::model::qemu::rrd::setup(version.is_v9(), timeframe);
    assert_eq!(points.len(), len);
    let bare = points
        .iter()
        .take_while(|p| p.as_object().is_some_and(|o| o.len() == 1))
        .count();
    assert_eq!(bare, empty);
    for (i, p) in points.iter().enumerate() {
        let t = p["time"].as_i64().expect("time");
        assert_eq!(t % reso, 0, "{p}");
        if i < bare {
            assert!(t < now - 1800, "{p}");
        } else {
            assert!(t >= now - 1800, "{p}");
            assert!(p.get("maxmem").is_some(), "{p}");
        }
    }
}

#[rstest]
fn rrddata_of_a_vm_created_this_minute_drops_the_last_empty_point(mut lab: World) {
    let now = lab.now();
    let meta = format!("creation-qemu=9.2.0,ctime={now}");
    lab.c
        .guests
        .get_mut(&100)
        .expect("VM 100")
        .config
        .insert("meta".into(), meta);
    let points = rrddata(&lab, 100, "hour");
    let points = points.as_array().expect("points");
    assert_eq!(points.len(), 59, "the step being filled is left out");
    assert!(
        points
            .iter()
            .all(|p| p.as_object().is_some_and(|o| o.len() == 1))
    );
}

#[rstest]
#[case("qxl,memory=32", true)]
#[case("type=qxl,memory=32", true)]
#[case("memory=32,type=virtio", true)]
#[case("std", false)]
fn spice_follows_the_display_however_it_is_written(
    mut lab: World,
    #[case] vga: &str,
    #[case] spice: bool,
) {
    let now = lab.now();
    lab.c
        .vm_ops()
        .update_config("pve", 100, &update(&[("vga", vga)], &[]), now)
        .expect("applied");
    assert_eq!(
        lab.conf(100, "vga").as_deref(),
        Some(vga),
        "stored as given"
    );
    let st = lab.vm_status(100, true, true);
    assert_eq!(st.get("spice").is_some(), spice, "{vga}: {st}");
}

/// A VM with every member the status can have: NICs, drives, a balloon,
/// a lock, tags, a serial port, SPICE with a clipboard.
const EVERY_MEMBER: &str = r#"
nodes: [{ name: pve, cpus: 8 }]
storages:
  - { id: local, type: dir, path: /var/lib/vz, content: [iso, images] }
vms:
  - vmid: 100
    name: "a \"quoted\" name"
    status: running
    config:
      lock: backup
      memory: 4096
      balloon: 1024
      shares: 500
      tags: a;b
      serial0: socket
      agent: "1,fstrim_cloned_disks=1"
      vga: qxl,clipboard=vnc
      scsi0: local:100/vm-100-disk-0.raw,size=8G
      virtio1: local:100/vm-100-disk-1.raw,size=2G
      ide2: local:iso/debian.iso,media=cdrom
      net0: virtio=BC:24:11:00:01:00,bridge=vmbr0
      net10: e1000=BC:24:11:00:01:0A,bridge=vmbr0
  - vmid: 101
    status: stopped
    config: { memory: 512, vga: std }
"#;

#[rstest]
fn the_status_text_is_the_status_value_written_out(
    #[values(PveVersion::V8_4, PveVersion::V9_1)] version: PveVersion,
    #[values(100, 101)] vmid: u32,
    #[values(false, true)] full: bool,
    #[values(false, true)] current: bool,
) {
    let lab = World::from_yaml_v(EVERY_MEMBER, version);
    let vm = &lab.c.guests[&vmid];
    let value = crate::api::qemu::status::vm_status(
        &lab.c.vm_status_reader(),
        vm,
        lab.now_ms,
        full,
        current,
    );
    let text = crate::api::qemu::status::vm_status_json(
        &lab.c.vm_status_reader(),
        vm,
        lab.now_ms,
        full,
        current,
    );
    assert_eq!(
        String::from_utf8(text).expect("UTF-8"),
        serde_json::to_string(&value).expect("a value")
    );
    if vmid == 100 && full {
        // The document has its nested members, so the comparison holds
        // them too.
        assert_eq!(value["nics"].as_object().map(|m| m.len()), Some(2));
        assert_eq!(value["nics"]["tap100i10"]["netin"], json!(3600 * 1500));
        assert_eq!(value["blockstat"].as_object().map(|m| m.len()), Some(3));
        assert_eq!(value["blockstat"]["scsi0"]["timed_stats"], json!([]));
        assert_eq!(value["ballooninfo"]["actual"], json!(4096u64 << 20));
        assert_eq!(value["proxmox-support"]["pbs-masterkey"], json!(true));
    }
    if vmid == 100 && current {
        assert_eq!(value["clipboard"], json!("vnc"));
        assert_eq!(value["spice"], json!(1));
        assert_eq!(value["lock"], json!("backup"));
    }
}

/// The rrddata series of VM `vmid` on `pve` as its answer writes it.
fn rrddata(lab: &World, vmid: u32, timeframe: &str) -> serde_json::Value {
    let vm = lab.c.guests.vm("pve", vmid).expect("vm");
    let points = crate::model::qemu::vm_rrddata(
        vm,
        &lab.c.nodes,
        &lab.c.storage,
        lab.c.version,
        timeframe,
        lab.now_ms,
    );
    crate::api::guest::view::rrddata(&points)
}
