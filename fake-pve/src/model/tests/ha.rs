//! High availability: resources, groups (8.4), rules (9.1), the 9.1
//! migration of groups to rules, and the manager's rounds that start,
//! stop and move HA-managed guests on the emulated clock.

use std::collections::BTreeMap;

use rstest::rstest;

use super::{CLUSTER, LAB, World, refused};
use crate::model::PveVersion;
use crate::model::ha::manager::Lrm;
use crate::model::ha::{
    Fencing, GroupUpdate, HaRequest, LrmLine, Manager, MoveRequested, Resource, ResourceUpdate,
    RuleUpdate, ServiceLine, ServiceStatus, StatusLine,
};

/// [`LAB`] plus container 300 (stopped) on `pve`.
const LAB_CT: &str = r#"
containers:
  - vmid: 300
    hostname: box
    config:
      rootfs: local-lvm:subvol-300-disk-0,size=8G
      memory: 512
"#;

fn world(v: PveVersion) -> World {
    World::from_yaml_v(&format!("{LAB}{LAB_CT}"), v)
}

fn add(w: &mut World, sid: &str, up: &ResourceUpdate) -> crate::model::Result<String> {
    let v = w.c.version();
    let now = w.now();
    let types = |id| crate::model::ha::guest_type(&w.c.guests, id);
    let types: Vec<_> = (0..1000).map(types).collect();
    w.c.ha_mut().create_resource(
        v,
        sid,
        up,
        |id| types.get(id as usize).copied().flatten(),
        now,
    )
}

fn state(s: &str) -> ResourceUpdate {
    ResourceUpdate {
        state: Some(s.into()),
        ..ResourceUpdate::default()
    }
}

fn running(w: &World, vmid: u32) -> bool {
    w.c.guests()
        .get(&vmid)
        .map(crate::model::qemu::Vm::running)
        .or_else(|| {
            w.c.guests()
                .ct_by_id(vmid)
                .map(crate::model::lxc::Ct::running)
        })
        .unwrap_or(false)
}

/// The service line of a `status/current` line.
fn service_line<'a>(l: &'a StatusLine<'_>) -> Option<&'a ServiceLine<'a>> {
    match l {
        StatusLine::Service(s) => Some(s),
        _ => None,
    }
}

/// The `id` of a `status/current` line.
fn line_id(l: &StatusLine<'_>) -> String {
    match l {
        StatusLine::Quorum { .. } => "quorum".into(),
        StatusLine::Master { .. } => "master".into(),
        StatusLine::Fencing { .. } => "fencing".into(),
        StatusLine::Lrm { node, .. } => format!("lrm:{node}"),
        StatusLine::Service(s) => format!("service:{}", s.sid),
    }
}

fn service(w: &World, sid: &str) -> Option<String> {
    w.c.ha()
        .manager()
        .and_then(|m| m.service(sid))
        .map(|s| s.state().to_string())
}

#[rstest]
#[case(
    PveVersion::V9_1,
    "vm:999",
    500,
    "resource 'vm:999' does not exist in cluster"
)]
#[case(
    PveVersion::V9_1,
    "999",
    500,
    "unable to detect SID from VMID - VM/CT 999 does not exist"
)]
#[case(
    PveVersion::V8_4,
    "999",
    500,
    "unable do detect SID from VMID - VM/CT 999 does not exist"
)]
#[case(PveVersion::V9_1, "vm:1a", 500, "invalid VMID")]
#[case(PveVersion::V9_1, "pve:100", 500, "unknown section type 'pve'")]
#[case(
    PveVersion::V9_1,
    "vm:300",
    500,
    "resource 'vm:300' - guest with ID 300 is not a VM"
)]
#[case(
    PveVersion::V9_1,
    "ct:100",
    500,
    "resource 'ct:100' - guest with ID 100 is not a container"
)]
fn resource_create_refusals(
    #[case] v: PveVersion,
    #[case] sid: &str,
    #[case] code: u16,
    #[case] msg: &str,
) {
    let mut w = world(v);
    assert_eq!(
        refused(add(&mut w, sid, &ResourceUpdate::default())),
        (code, msg.into())
    );
}

#[test]
fn a_bare_vmid_names_the_guests_type_and_a_resource_is_made_once() {
    let mut w = world(PveVersion::V9_1);
    assert_eq!(add(&mut w, "100", &state("stopped")).expect("vm"), "vm:100");
    assert_eq!(add(&mut w, "300", &state("stopped")).expect("ct"), "ct:300");
    assert_eq!(
        refused(add(&mut w, "vm:100", &ResourceUpdate::default())),
        (
            500,
            "create resource failed: resource ID 'vm:100' already defined".into()
        )
    );
    let typed = ResourceUpdate {
        kind: Some("ct".into()),
        ..ResourceUpdate::default()
    };
    assert_eq!(
        refused(add(&mut w, "101", &typed)),
        (500, "types does not match".into())
    );
    let list = w.c.ha().resources_index(PveVersion::V9_1, Some("ct"));
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].sid, "ct:300");
    assert_eq!(list[0].resource.state(), Some("stopped"));
    assert_eq!(list[0].resource.kind(), "ct");
}

#[test]
fn update_checks_digest_and_deletes_options() {
    let mut w = world(PveVersion::V9_1);
    let up = ResourceUpdate {
        state: Some("stopped".into()),
        max_restart: Some(3),
        comment: Some("web".into()),
        ..ResourceUpdate::default()
    };
    add(&mut w, "vm:100", &up).expect("add");
    let before =
        w.c.ha()
            .read_resource(PveVersion::V9_1, "vm:100")
            .expect("read");
    assert_eq!(before.resource.configured_max_restart(), Some(3));
    let before_digest = before.digest.clone();
    let types = |_| None;
    let stale = ResourceUpdate {
        digest: Some("0".repeat(40)),
        ..ResourceUpdate::default()
    };
    let now = w.now();
    assert_eq!(
        refused(w.c.ha_mut().update_resource(PveVersion::V9_1, "vm:100", &stale, types, now)),
        (
            500,
            "update resources config failed: detected modified configuration - file changed by other user? Try again.".into()
        )
    );
    let del = ResourceUpdate {
        digest: Some(before_digest.clone()),
        delete: vec!["comment".into(), "max_restart".into()],
        failback: Some(false),
        ..ResourceUpdate::default()
    };
    w.c.ha_mut()
        .update_resource(PveVersion::V9_1, "vm:100", &del, types, now)
        .expect("update");
    let after =
        w.c.ha()
            .read_resource(PveVersion::V9_1, "vm:100")
            .expect("read");
    assert!(
        after.resource.comment().is_none() && after.resource.configured_max_restart().is_none()
    );
    assert_eq!(after.resource.configured_failback(), Some(false));
    assert_ne!(after.digest, before_digest);
    let bad = ResourceUpdate {
        delete: vec!["sid".into()],
        ..ResourceUpdate::default()
    };
    assert_eq!(
        refused(
            w.c.ha_mut()
                .update_resource(PveVersion::V9_1, "vm:100", &bad, types, now)
        ),
        (
            500,
            "update resources config failed: no such option 'sid'".into()
        )
    );
    assert_eq!(
        refused(w.c.ha_mut().update_resource(
            PveVersion::V9_1,
            "vm:101",
            &state("started"),
            types,
            now
        )),
        (
            500,
            "update resources config failed: no such resource 'vm:101'".into()
        )
    );
    assert_eq!(
        refused(
            w.c.ha_mut()
                .delete_resource(PveVersion::V9_1, "vm:101", true, types)
        ),
        (
            500,
            "cannot delete service 'vm:101', not HA managed!".into()
        )
    );
}

fn group(nodes: &str) -> GroupUpdate {
    GroupUpdate {
        nodes: Some(nodes.into()),
        ..GroupUpdate::default()
    }
}

#[test]
fn groups_on_8_4_live_with_their_resources() {
    let v = PveVersion::V8_4;
    let mut w = world(v);
    let ha = w.c.ha_mut();
    ha.create_group(v, "prefer", &group("pve:2,pve"))
        .expect("create");
    assert_eq!(
        refused(ha.create_group(v, "prefer", &group("pve"))),
        (
            500,
            "create ha group failed: ha group ID 'prefer' already defined".into()
        )
    );
    let g = ha.read_group(v, "prefer").expect("read");
    assert_eq!(g.group.nodes().join(","), "pve:2,pve");
    assert_eq!(g.id, "prefer");
    let up = GroupUpdate {
        restricted: Some(true),
        delete: vec!["nodes".into()],
        ..GroupUpdate::default()
    };
    assert_eq!(
        refused(ha.update_group(v, "prefer", &up)),
        (
            500,
            "update ha group failed: unable to delete required option 'nodes'".into()
        )
    );
    let up = GroupUpdate {
        restricted: Some(true),
        nofailback: Some(true),
        ..GroupUpdate::default()
    };
    ha.update_group(v, "prefer", &up).expect("update");
    assert_eq!(
        ha.read_group(v, "prefer")
            .expect("read")
            .group
            .configured_restricted(),
        Some(true)
    );
    let in_group = ResourceUpdate {
        group: Some("prefer".into()),
        ..ResourceUpdate::default()
    };
    add(&mut w, "vm:100", &in_group).expect("add");
    let ha = w.c.ha_mut();
    assert_eq!(
        refused(ha.delete_group(v, "prefer")),
        (
            500,
            "delete ha group failed: ha group is used by service 'vm:100'".into()
        )
    );
    assert_eq!(
        refused(ha.read_group(v, "nope")),
        (500, "no such ha group 'nope'".into())
    );
    // The status shows the group of the service.
    let st =
        crate::model::ha::status_current(&w.c.ha, &w.c.nodes, &w.c.guests, w.c.version, w.now());
    let svc = st.iter().find_map(service_line).expect("service line");
    assert_eq!(svc.config.and_then(Resource::group), Some("prefer"));
    assert_eq!(svc.state, "queued");
    assert!(
        st.iter().all(|l| !matches!(l, StatusLine::Fencing { .. })),
        "8.4 has no fencing line"
    );
}

#[rstest]
#[case("index")]
#[case("create")]
#[case("read")]
fn groups_on_9_1_are_migrated_to_rules(#[case] call: &str) {
    let v = PveVersion::V9_1;
    let mut w = world(v);
    let ha = w.c.ha_mut();
    let r = match call {
        "index" => ha.groups_index(v).map(|_| ()),
        "create" => ha.create_group(v, "g", &group("pve")),
        _ => ha.read_group(v, "g").map(|_| ()),
    };
    let verb = match call {
        "index" => "index groups",
        "create" => "create group",
        _ => "read group",
    };
    assert_eq!(
        refused(r),
        (
            500,
            format!("cannot {verb}: ha groups have been migrated to rules")
        )
    );
    let with_group = ResourceUpdate {
        group: Some("g".into()),
        ..ResourceUpdate::default()
    };
    assert_eq!(
        refused(add(&mut w, "vm:100", &with_group)),
        (
            500,
            "invalid parameter 'group': ha groups have been migrated to rules".into()
        )
    );
}

fn rule(resources: &str) -> RuleUpdate {
    RuleUpdate {
        resources: Some(resources.into()),
        ..RuleUpdate::default()
    }
}

fn node_rule(resources: &str, nodes: &str) -> RuleUpdate {
    RuleUpdate {
        nodes: Some(nodes.into()),
        ..rule(resources)
    }
}

fn affinity(resources: &str, a: &str) -> RuleUpdate {
    RuleUpdate {
        affinity: Some(a.into()),
        ..rule(resources)
    }
}

fn managed(v: PveVersion) -> World {
    let mut w = World::from_yaml_v(CLUSTER, v);
    add(&mut w, "vm:100", &state("stopped")).expect("100");
    add(&mut w, "vm:200", &state("started")).expect("200");
    w
}

#[rstest]
#[case(
    "node-affinity",
    node_rule("vm:100,vm:999", "pve1"),
    "create ha rule failed: cannot use unmanaged resource(s) vm:999."
)]
#[case(
    "node-affinity",
    node_rule("vm:100", "pve1,pve9:2"),
    "create ha rule failed: cannot use non-existent node(s) pve9."
)]
#[case(
    "node-affinity",
    rule("vm:100"),
    "missing value for required option 'nodes'"
)]
#[case(
    "node-affinity",
    affinity("vm:100", "positive"),
    "unexpected property 'affinity'"
)]
#[case(
    "resource-affinity",
    affinity("vm:100", "positive"),
    "create ha rule failed: 400 Rule 'r1' is invalid.\nresources: rule is ineffective as there are less than two resources"
)]
#[case("location", rule("vm:100"), "unknown section type 'location'")]
fn rule_create_refusals(#[case] kind: &str, #[case] up: RuleUpdate, #[case] msg: &str) {
    let mut w = managed(PveVersion::V9_1);
    let r =
        w.c.ha_mut()
            .create_rule("r1", kind, &up, |n| n.starts_with("pve") && n != "pve9");
    assert_eq!(refused(r), (500, msg.into()));
}

#[test]
fn rules_are_checked_together() {
    let mut w = managed(PveVersion::V9_1);
    w.tick(10_000);
    let nodes = |n: &str| ["pve1", "pve2", "pve3"].contains(&n);
    let ha = w.c.ha_mut();
    ha.create_rule(
        "keep",
        "node-affinity",
        &node_rule("vm:100,vm:200", "pve1:2,pve2"),
        nodes,
    )
    .expect("node affinity");
    assert_eq!(
        refused(ha.create_rule("again", "node-affinity", &node_rule("vm:100", "pve2"), nodes)),
        (
            500,
            "create ha rule failed: 400 Rule 'again' is invalid.\nresources: resource 'vm:100' is already used in another node affinity rule".into()
        )
    );
    ha.create_rule(
        "apart",
        "resource-affinity",
        &affinity("vm:100,vm:200", "negative"),
        nodes,
    )
    .expect("negative");
    assert_eq!(
        refused(ha.create_rule("together", "resource-affinity", &affinity("vm:100,vm:200", "positive"), nodes)),
        (
            500,
            "create ha rule failed: 400 Rule 'together' is invalid.\nresources: rule shares two or more resources with a negative resource affinity rule".into()
        )
    );
    let list = ha.rules_index(None, Some("vm:200"));
    assert_eq!(list.len(), 2);
    assert_eq!(list[0].id, "keep");
    assert_eq!(list[0].rule.nodes_text(), "pve1:2,pve2");
    assert_eq!(list[0].rule.resources_text(), "vm:100,vm:200");
    // pve-ha-manager's next ordinal counts from the lowest order.
    assert_eq!(list[0].rule.order(), 1);
    assert_eq!(list[1].rule.order(), 2);
    let up = RuleUpdate {
        strict: Some(true),
        ..RuleUpdate::default()
    };
    ha.update_rule("keep", &up, nodes).expect("strict");
    assert_eq!(
        ha.read_rule("keep").expect("read").rule.configured_strict(),
        Some(true)
    );
    let up = RuleUpdate {
        delete: vec!["resources".into()],
        ..RuleUpdate::default()
    };
    assert_eq!(
        refused(ha.update_rule("keep", &up, nodes)),
        (
            500,
            "update HA rules failed: unable to delete required option 'resources'".into()
        )
    );
    // Deleting a resource purges it from the rules; a rule left with
    // none goes.
    ha.delete_resource(PveVersion::V9_1, "vm:100", true, |_| None)
        .expect("delete");
    let list = ha.rules_index(None, None);
    assert_eq!(list.len(), 2);
    assert_eq!(list[1].rule.resources_text(), "vm:200");
    assert_eq!(
        list[1].errors,
        Some(BTreeMap::from([(
            "resources",
            vec!["rule is ineffective as there are less than two resources".to_string()]
        )]))
    );
}

#[test]
fn groups_of_an_upgraded_cluster_become_rules_after_three_rounds() {
    let v = PveVersion::V9_1;
    let mut w = world(v);
    w.c.ha_mut()
        .seed_group("prefer", "pve:2", true, true)
        .expect("seed");
    let in_group = ResourceUpdate {
        group: Some("prefer".into()),
        state: Some("stopped".into()),
        ..ResourceUpdate::default()
    };
    add(&mut w, "vm:100", &in_group).expect("add");
    // Before the migration the API shows the group as a rule, and
    // refuses new rules.
    let list = w.c.ha().rules_index(None, None);
    assert_eq!(list[0].id, "ha-group-prefer");
    assert_eq!(
        list[0].rule.comment(),
        Some("Generated from HA group 'prefer'.")
    );
    assert_eq!(
        refused(w.c.ha_mut().create_rule(
            "r",
            "node-affinity",
            &node_rule("vm:100", "pve"),
            |_| true
        )),
        (
            500,
            "cannot create ha rule: ha groups have not been migrated yet".into()
        )
    );
    assert_eq!(
        w.c.ha().read_resource(v, "vm:100").expect("read").group,
        Some("prefer")
    );
    w.tick(20_000);
    assert!(!w.c.ha().groups_migrated(), "two rounds are not enough");
    w.tick(10_000);
    assert!(w.c.ha().groups_migrated());
    let r =
        w.c.ha()
            .read_rule("ha-group-prefer")
            .expect("persisted rule");
    assert_eq!(r.rule.nodes_text(), "pve:2");
    assert_eq!(r.rule.configured_strict(), Some(true));
    let res = w.c.ha().read_resource(v, "vm:100").expect("read");
    assert!(res.group.is_none());
    assert_eq!(res.resource.configured_failback(), Some(false));
}

#[test]
fn group_migration_waits_for_every_node() {
    let mut w = World::from_yaml_v(CLUSTER, PveVersion::V9_1);
    w.c.ha_mut()
        .seed_group("g", "pve1", false, false)
        .expect("seed");
    let in_group = ResourceUpdate {
        group: Some("g".into()),
        ..ResourceUpdate::default()
    };
    add(&mut w, "vm:200", &in_group).expect("add");
    w.tick(60_000);
    assert!(!w.c.ha().groups_migrated(), "pve3 is offline");
}

#[test]
fn the_manager_starts_and_stops_a_managed_vm() {
    let mut w = world(PveVersion::V9_1);
    assert!(!running(&w, 100));
    add(&mut w, "vm:100", &ResourceUpdate::default()).expect("add");
    assert_eq!(
        w.c.ha().guest_service_status("vm", 100),
        ServiceStatus::Managed(None)
    );
    let st =
        crate::model::ha::status_current(&w.c.ha, &w.c.nodes, &w.c.guests, w.c.version, w.now());
    assert_eq!(st.len(), 3, "quorum, fencing, one service: {st:?}");
    assert!(
        matches!(
            st[1],
            StatusLine::Fencing {
                node: "pve",
                fencing: Fencing::Standby
            }
        ),
        "{st:?}"
    );
    let svc = service_line(&st[2]).expect("service line");
    assert_eq!(
        (svc.node.as_deref(), svc.state.as_str()),
        (Some("pve"), "queued")
    );
    // The first round is on the ten-second grid; the LRM's start task
    // ends a second later.
    w.tick(10_000);
    w.tick(1_000);
    assert!(running(&w, 100));
    assert_eq!(service(&w, "vm:100").as_deref(), Some("started"));
    let started =
        w.c.tasks()
            .iter()
            .find(|t| t.upid.kind == "qmstart")
            .expect("a qmstart task");
    assert_eq!(started.upid.user, "root@pam");
    w.tick(10_000);
    let st =
        crate::model::ha::status_current(&w.c.ha, &w.c.nodes, &w.c.guests, w.c.version, w.now());
    let ids: Vec<String> = st.iter().map(line_id).collect();
    assert_eq!(
        ids,
        ["quorum", "master", "fencing", "lrm:pve", "service:vm:100"]
    );
    assert!(
        matches!(
            st[1],
            StatusLine::Master {
                node: "pve",
                state: "active",
                ..
            }
        ),
        "{st:?}"
    );
    assert!(
        matches!(
            &st[3],
            StatusLine::Lrm {
                node: "pve",
                status: Some(LrmLine {
                    state,
                    watchdog: Some("watchdog active"),
                    ..
                }),
            } if state == "active"
        ),
        "{st:?}"
    );
    let svc = service_line(&st[4]).expect("service line");
    assert_eq!(
        (svc.node.as_deref(), svc.state.as_str()),
        (Some("pve"), "started")
    );
    assert!(svc.config.is_some_and(|r| r.requested() == "started"));
    // `qm stop` of an HA VM asks the CRM; the VM stops within a round.
    let now = w.now();
    let worker =
        w.c.ha
            .divert(100, &HaRequest::Stop { timeout: 0 }, now)
            .expect("divert")
            .expect("managed");
    assert_eq!(worker.kind, "hastop");
    assert_eq!(worker.start_lines, ["Requesting HA stop for VM 100"]);
    w.tick(10_000);
    w.tick(1_000);
    assert!(!running(&w, 100));
    assert_eq!(
        w.c.ha()
            .read_resource(PveVersion::V9_1, "vm:100")
            .expect("read")
            .resource
            .state(),
        Some("stopped")
    );
    w.tick(10_000);
    assert_eq!(service(&w, "vm:100").as_deref(), Some("stopped"));
    let rows = crate::api::cluster::view::resources(&w.c.resources(), Some("vm"), w.now());
    let row = rows.iter().find(|r| r["vmid"] == 100).expect("row");
    assert_eq!(row["hastate"], "stopped");
    // Unmanaged guests are not diverted.
    assert!(
        w.c.ha
            .divert(101, &HaRequest::Start, now)
            .expect("ok")
            .is_none()
    );
}

#[test]
fn a_container_starts_through_ha_and_ignored_resources_are_left_alone() {
    let mut w = world(PveVersion::V8_4);
    add(&mut w, "ct:300", &state("stopped")).expect("add");
    let now = w.now();
    let worker =
        w.c.ha
            .divert(300, &HaRequest::Start, now)
            .expect("ok")
            .expect("managed");
    assert_eq!(worker.kind, "hastart");
    assert_eq!(worker.start_lines, ["Requesting HA start for CT 300"]);
    w.tick(11_000);
    assert!(running(&w, 300));
    let types = |_| None;
    w.c.ha_mut()
        .update_resource(PveVersion::V8_4, "ct:300", &state("ignored"), types, now)
        .expect("ignore");
    assert!(
        w.c.ha
            .divert(300, &HaRequest::Stop { timeout: 0 }, now)
            .expect("ok")
            .is_none()
    );
    w.tick(10_000);
    assert_eq!(
        service(&w, "ct:300"),
        None,
        "ignored services leave the manager"
    );
    let st =
        crate::model::ha::status_current(&w.c.ha, &w.c.nodes, &w.c.guests, w.c.version, w.now());
    let line = st.iter().find_map(service_line).expect("line");
    assert_eq!(line.state, "ignored");
    assert!(
        st.iter().any(|l| matches!(
            l,
            StatusLine::Lrm {
                node: "pve",
                status: Some(LrmLine {
                    state,
                    watchdog: None,
                    ..
                }),
            } if state == "idle"
        )),
        "{st:?}"
    );
}

#[test]
fn migrate_moves_a_running_vm_to_the_target_node() {
    let v = PveVersion::V9_1;
    let mut w = managed(v);
    w.tick(10_000);
    assert_eq!(service(&w, "vm:200").as_deref(), Some("started"));
    let now = w.now();
    let answer =
        w.c.ha_mut()
            .request_move(v, "vm:200", "pve2", false, |_| None, now)
            .expect("queued");
    assert_eq!(
        answer,
        Some(MoveRequested {
            sid: "vm:200".into(),
            node: "pve2".into(),
            comigrated: Vec::new(),
            blocking: Vec::new(),
        })
    );
    w.tick(10_000);
    assert_eq!(service(&w, "vm:200").as_deref(), Some("migrate"));
    w.tick(5_000);
    w.tick(10_000);
    assert_eq!(
        w.c.guests().get(&200).map(|v| v.node.as_str()),
        Some("pve2")
    );
    assert!(running(&w, 200));
    let m = w.c.ha().manager().expect("manager");
    assert_eq!(m.service("vm:200").map(|s| s.node()), Some("pve2"));
    assert_eq!(m.service("vm:200").map(|s| s.state()), Some("started"));
    assert_eq!(m.node_state("pve3"), Some("unknown"));
    // Not managed: refused.
    assert_eq!(
        refused(
            w.c.ha_mut()
                .request_move(v, "vm:999", "pve2", false, |_| None, now)
        ),
        (500, "resource 'vm:999' is not HA managed".into())
    );
    // 8.4 answers null.
    let mut w = managed(PveVersion::V8_4);
    let r =
        w.c.ha_mut()
            .request_move(PveVersion::V8_4, "vm:200", "pve2", true, |_| None, now)
            .expect("queued");
    assert_eq!(r, None);
    assert_eq!(w.c.ha().crm_commands(), ["relocate vm:200 pve2"]);
}

#[test]
fn a_vm_that_cannot_start_ends_in_error_after_its_restarts() {
    let mut w = world(PveVersion::V9_1);
    // A bridge the node does not have makes every start fail.
    let vm = w.c.guests.get_mut(&100).expect("vm");
    vm.config.insert(
        "net0".into(),
        "virtio=BC:24:11:00:01:00,bridge=vmbr9".into(),
    );
    add(&mut w, "vm:100", &ResourceUpdate::default()).expect("add");
    for _ in 0..4 {
        w.tick(10_000);
    }
    assert!(!running(&w, 100));
    assert_eq!(service(&w, "vm:100").as_deref(), Some("error"));
    let now = w.now();
    let worker =
        w.c.ha
            .divert(100, &HaRequest::Start, now)
            .expect("ok")
            .expect("managed");
    assert!(
        worker.outcome.is_err(),
        "a service in error takes only 'disabled'"
    );
    w.c.ha_mut()
        .update_resource(
            PveVersion::V9_1,
            "vm:100",
            &state("disabled"),
            |_| None,
            now,
        )
        .expect("disabled is allowed");
}

#[test]
fn a_long_jump_of_the_clock_runs_only_the_last_rounds_and_the_world_round_trips() {
    let mut w = world(PveVersion::V9_1);
    add(&mut w, "vm:100", &ResourceUpdate::default()).expect("add");
    w.tick(86_400_000);
    assert!(running(&w, 100));
    let rounds =
        w.c.tasks()
            .iter()
            .filter(|t| t.upid.kind == "qmstart")
            .count();
    assert_eq!(rounds, 1);
    let doc = serde_json::to_value(&w.c).expect("serialize");
    assert!(
        doc["ha"]["resources"]["vm:100"].is_object(),
        "{}",
        doc["ha"]
    );
    let back: crate::model::Cluster = serde_json::from_value(doc).expect("deserialize");
    assert_eq!(back.ha(), w.c.ha());
    let ms = back
        .ha
        .manager_status(back.nodes.local(), back.nodes.quorate());
    assert_eq!(ms.manager.map(Manager::master), Some("pve"));
    assert_eq!(
        ms.manager.and_then(|m| m.lrm("pve")).map(Lrm::mode),
        Some("active")
    );
    assert_eq!((ms.node, ms.quorate), ("pve", true));
}
