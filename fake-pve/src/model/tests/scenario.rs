//! Scenario files: what a scenario builds, and the file and line of each
//! refusal.

use rstest::rstest;

use super::{T0, World};
use crate::model::PveVersion;
use crate::model::scenario::Scenario;

#[rstest]
#[case("cluster: a_b\n", Some(1), "invalid cluster name 'a_b'")]
#[case(
    "cluster: waytoolongclustername\n",
    Some(1),
    "invalid cluster name 'waytoolongclustername'"
)]
#[case(
    "nodes:\n  - name: pve\n    bridges: [vmbr0, 0bad]\n",
    Some(3),
    "invalid bridge name '0bad'"
)]
#[case(
    "nodes:\n  - name: pve\n    cpus: 0\n",
    Some(2),
    "node 'pve' needs at least one cpu"
)]
#[case(
    "storages:\n  - { id: 1st, type: dir, path: /x }\n",
    Some(2),
    "invalid storage id '1st'"
)]
#[case(
    "storages:\n  - { id: s, type: dir, path: /x }\n  - { id: s, type: dir, path: /y }\n",
    Some(3),
    "duplicate storage id 's'"
)]
#[case(
    "storages:\n  - { id: s, type: dir, path: /x, nodes: [ghost] }\n",
    Some(2),
    "storage 's': unknown node 'ghost'"
)]
#[case("vms:\n  - vmid: 99\n", Some(2), "invalid vmid 99")]
#[case("vms:\n  - vmid: 100\n  - vmid: 100\n", Some(3), "duplicate vmid 100")]
#[case(
    "vms:\n  - vmid: 100\n    status: paused\n",
    Some(3),
    "VM 100: status must be running or stopped"
)]
#[case(
    "vms:\n  - vmid: 100\n    snapshots:\n      current: {}\n",
    Some(4),
    "VM 100: invalid snapshot name 'current'"
)]
#[case(
    "vms:\n  - vmid: 100\n    snapshots:\n      1st: {}\n",
    Some(4),
    "VM 100: invalid snapshot name '1st'"
)]
#[case(
    "vms:\n  - vmid: 100\n    config:\n      parent: gone\n",
    Some(4),
    "VM 100: parent 'gone' is not a snapshot"
)]
#[case("guests:\n  100: { hostname: x }\n", Some(2), "guests: unknown VM 100")]
#[case(
    "downloads:\n  - { url: 'ftp://x/y.iso', size: 1 }\n",
    Some(2),
    "downloads: 'ftp://x/y.iso' is not an http(s) URL"
)]
#[case(
    "users:\n  - userid: a@pve\n  - userid: a@pve\n",
    Some(3),
    "duplicate user 'a@pve'"
)]
#[case(
    "users:\n  - userid: a@pve\n    tokens: [{tokenid: tt}, {tokenid: tt}]\n",
    Some(3),
    "duplicate token 'tt'"
)]
#[case(
    "users:\n  - userid: a@pve\n    tokens: [{tokenid: '1t'}]\n",
    Some(3),
    "invalid token id '1t'"
)]
#[case(
    "groups:\n  - groupid: g\n  - groupid: g\n",
    Some(3),
    "duplicate group 'g'"
)]
#[case(
    "roles:\n  - roleid: R\n  - roleid: R\n",
    Some(3),
    "duplicate role 'R'"
)]
#[case("roles:\n  - roleid: 'a b'\n", Some(2), "invalid role id 'a b'")]
#[case(
    "acl:\n  - { path: /vms, roles: [], users: [root@pam] }\n",
    Some(2),
    "acl '/vms': no roles"
)]
#[case(
    "acl:\n  - { path: /vms, roles: [PVEAuditor], users: [ghost@pve] }\n",
    Some(2),
    "acl '/vms': unknown user 'ghost@pve'"
)]
#[case(
    "acl:\n  - { path: /vms, roles: [PVEAuditor], groups: [ghosts] }\n",
    Some(2),
    "acl '/vms': unknown group 'ghosts'"
)]
#[case(
    "faults:\n  - { path: /nodes }\n",
    Some(1),
    "faults: a fault rule needs an effect"
)]
#[case(
    "pools:\n  - { poolid: a/b }\n",
    Some(2),
    "pools: create pool failed: parent 'a' of pool 'a/b' does not exist"
)]
#[case(
    "pools:\n  - { poolid: a, vms: [100, 100] }\n",
    Some(2),
    "pools: update pools failed: VM 100 is already a pool member"
)]
#[case("nodes: [\n", Some(2), "")]
#[case("flavour: vanilla\n", Some(1), "unknown field `flavour`")]
fn refusals_name_file_and_line(
    #[case] text: &str,
    #[case] line: Option<usize>,
    #[case] reason: &str,
) {
    let e = Scenario::parse(text, "lab.yaml").expect_err("refused");
    assert_eq!(e.file, "lab.yaml");
    assert_eq!(e.line, line, "{e}");
    assert!(e.reason.contains(reason), "{e}");
    let shown = e.to_string();
    assert!(
        shown.starts_with(&format!("lab.yaml:{}: ", line.unwrap_or(0))),
        "{shown}"
    );
}

#[rstest]
fn privileges_depend_on_the_release() {
    // VM.Monitor exists on 8.4 only; the parse check builds for the
    // default release, 9.2.
    let text = "roles:\n  - roleid: Mon\n    privs: [VM.Monitor]\n";
    let e = Scenario::parse(text, "s.yaml").expect_err("refused on 9.2");
    assert!(e.reason.contains("in PVE 9.2"), "{e}");
}

#[rstest]
fn an_empty_scenario_is_the_default_install() {
    let w = World::from_yaml("");
    assert_eq!(w.c.nodes.local(), "pve");
    assert_eq!(w.c.nodes.cluster_name(), None);
    let ids: Vec<&str> =
        w.c.storage
            .cfg()
            .iter()
            .map(|s| s.storage.as_str())
            .collect();
    assert_eq!(ids, ["local", "local-lvm"]);
}

#[rstest]
fn defaults_of_nodes_in_a_cluster() {
    let w = World::from_yaml(
        "cluster: lab\nnodes:\n  - name: a\n  - name: b\n    ip: 198.51.100.7\n    memory: 16G\n",
    );
    let (a, b) = (&w.c.nodes.members()[0], &w.c.nodes.members()[1]);
    assert_eq!((a.nodeid, b.nodeid), (1, 2));
    assert_eq!(a.ip, "192.0.2.10");
    assert_eq!(b.ip, "198.51.100.7");
    assert_eq!(a.cpus, 8);
    assert_eq!(a.memory, 32 << 30);
    assert_eq!(b.memory, 16 << 30);
    assert_eq!(a.bridges, ["vmbr0"]);
    assert!(a.boot_time < T0 - 3 * 86_400, "up for more than three days");
    assert_ne!(a.ssl_fingerprint, b.ssl_fingerprint);
}

#[rstest]
fn two_nodes_without_a_name_are_still_a_cluster_member_list() {
    let w = World::from_yaml("nodes:\n  - name: a\n  - name: b\n");
    assert_eq!(w.c.nodes.members()[0].nodeid, 1);
    assert_eq!(w.c.nodes.cluster_name(), None);
}

#[rstest]
#[case("nfs", true)]
#[case("cephfs", true)]
#[case("dir", false)]
#[case("zfspool", false)]
fn shared_defaults_by_type(#[case] kind: &str, #[case] shared: bool) {
    let w = World::from_yaml(&format!("storages:\n  - {{ id: s, type: {kind} }}\n"));
    assert_eq!(w.c.storage.cfg()[0].shared, shared);
}

#[rstest]
fn storage_sizes_and_content() {
    let w = World::from_yaml(
        "storages:\n  - { id: s, type: lvmthin, size: 1T, used: 100G }\n  - { id: b, type: pbs }\n",
    );
    let s = &w.c.storage.cfg()[0];
    assert_eq!((s.total, s.used), (1 << 40, 100 << 30));
    assert_eq!(s.content, ["images", "rootdir"]);
    assert_eq!(w.c.storage.cfg()[1].content, ["backup"]);
}

#[rstest]
fn seeded_vms_own_their_volumes_and_running_ones_have_run_an_hour() {
    let w = World::from_yaml(super::LAB);
    let v =
        w.c.storage
            .volume("local-lvm:vm-101-disk-0", "pve")
            .expect("adopted");
    assert_eq!((v.vmid, v.size), (101, 16 << 30));
    assert_eq!(w.c.guests[&101].started_ms, Some((T0 - 3_600) * 1000));
    assert_eq!(w.c.guests[&100].started_ms, None);
    assert!(
        w.c.storage.volume("local:iso/debian.iso", "pve").is_none(),
        "a CD-ROM is not a disk"
    );
}

#[rstest]
fn snapshots_of_a_seeded_vm() {
    let w = World::from_yaml(
        "vms:\n  - vmid: 100\n    config: { parent: s2, scsi0: 'local-lvm:vm-100-disk-0,size=1G' }\n    snapshots:\n      s1: { snaptime: 1 }\n      s2: { snaptime: 2, parent: s1 }\n",
    );
    let list = w.c.guests.vm("pve", 100).expect("vm").snapshot_list();
    assert_eq!(list.snapshots[0].parent, None);
    assert_eq!(list.snapshots[1].parent, Some("s1"));
    assert_eq!(list.current.parent, Some("s2"));
}

#[rstest]
fn yaml_scalars_become_config_text() {
    let w = World::from_yaml(
        "vms:\n  - vmid: 100\n    config: { onboot: true, cores: 4, description: hi }\n",
    );
    assert_eq!(w.conf(100, "onboot").as_deref(), Some("1"));
    assert_eq!(w.conf(100, "cores").as_deref(), Some("4"));
}

#[rstest]
fn a_saved_world_rebuilds_only_for_its_release() {
    let w = World::from_yaml(super::LAB);
    let s = Scenario::from_world(w.c.clone(), "state.json");
    let again = s
        .build(PveVersion::V9_1, "other", T0 + 99)
        .expect("same release");
    assert_eq!(again.guests.len(), 3);
    assert_eq!(
        again.nodes.members()[0].boot_time,
        w.c.nodes.members()[0].boot_time,
        "as it was"
    );
    let e = s
        .build(PveVersion::V8_4, "x", T0)
        .expect_err("other release");
    assert_eq!(e.file, "state.json");
    assert_eq!(e.line, None);
}

#[rstest]
fn root_keeps_its_password_unless_the_scenario_sets_one() {
    let w =
        World::from_yaml("users:\n  - userid: root@pam\n    tokens: [{tokenid: ci, secret: s}]\n");
    assert!(
        w.c.access
            .check_password("root@pam", super::ROOT_PW, T0)
            .is_ok()
    );
    assert!(w.c.access.check_token("root@pam", "ci", "s", T0).is_ok());
    let w = World::from_yaml("users:\n  - { userid: root@pam, password: mine }\n");
    assert!(w.c.access.check_password("root@pam", "mine", T0).is_ok());
}

#[rstest]
fn the_pid_counter_follows_the_start_time() {
    let s = Scenario::default_single_node();
    let a = s.build(PveVersion::V9_1, "x", T0).expect("a");
    let b = s.build(PveVersion::V9_1, "x", T0 + 1).expect("b");
    assert_eq!(b.tasks().next_pid(), a.tasks().next_pid() + 1);
}

fn state_doc(w: &World, pve: &str) -> String {
    serde_json::json!({
        "format": crate::model::world::FORMAT,
        "version": crate::model::world::VERSION,
        "pve": pve,
        "cluster": w.c,
    })
    .to_string()
}

#[rstest]
fn a_saved_world_comes_back_with_its_tasks_findable_and_running() {
    let mut w = World::from_yaml(super::LAB);
    let done = w.run("pve", crate::model::Worker::new("qmstart", "100"));
    let running = w.run_as(
        "pve",
        super::qm_worker(
            "qmstart",
            100,
            crate::model::qemu::QemuOp::Start { skiplock: false },
        ),
        "root@pam",
        5_000,
    );
    let text = state_doc(&w, "9.1");
    let s = Scenario::parse(&text, "state.json").expect("a state document");
    let mut c = s.build(PveVersion::V9_1, "pw", T0).expect("same release");
    assert_eq!(c.tasks.get(&done).expect("found").exitstatus(), Some("OK"));
    assert!(c.tasks.get(&running).expect("found").running());
    c.advance(w.now_ms + 5_000);
    assert_eq!(
        c.tasks.get(&running).expect("found").exitstatus(),
        Some("OK")
    );
    assert!(
        c.guests[&100].running(),
        "the effect survives the round trip"
    );
    assert_eq!(
        c.storage
            .volume("local-lvm:vm-100-disk-0", "pve")
            .map(|v| v.size),
        Some(8 << 30)
    );
}

#[rstest]
fn a_state_document_of_another_release_is_refused() {
    let w = World::from_yaml(super::LAB);
    let s = Scenario::parse(&state_doc(&w, "9.1"), "state.json").expect("parses");
    let e = s
        .build(PveVersion::V8_4, "pw", T0)
        .expect_err("release mismatch");
    assert_eq!(
        e.to_string(),
        "state.json: the state is of PVE 9.1, but this fake-pve impersonates PVE 8.4"
    );
    let e = Scenario::parse(&state_doc(&w, "8.4"), "state.json").expect_err("pve disagrees");
    assert_eq!(
        e.to_string(),
        "state.json: 'pve' says 8.4 but the cluster is of PVE 9.1"
    );
}

#[rstest]
fn pools_of_a_scenario() {
    let w = World::from_yaml(
        "vms:\n  - { vmid: 100 }\npools:\n  - { poolid: dev, comment: Dev, vms: [100], storage: [local] }\n  - { poolid: dev/web }\n",
    );
    let pools = w.c.access.pools();
    assert_eq!(pools.pool_of(100), Some("dev"));
    assert_eq!(pools.get("dev").and_then(|p| p.comment()), Some("Dev"));
    assert!(
        pools
            .get("dev")
            .is_some_and(|p| p.storage().contains("local"))
    );
    assert!(pools.get("dev/web").is_some());
}
