use super::*;
use rstest::rstest;

#[rstest]
#[case("1024", Some(1024))]
#[case("1K", Some(1024))]
#[case("512M", Some(512 << 20))]
#[case("32G", Some(32 << 30))]
#[case("32GiB", Some(32 << 30))]
#[case("1.5T", Some(3 << 39))]
#[case("1KiB", Some(1024))]
#[case("5B", Some(5))]
#[case("512m", Some(512 << 20))]
#[case(" 2G ", Some(2 << 30))]
#[case("x", None)]
#[case("-1G", None)]
#[case("1e3", None)]
#[case("1GiBB", None)]
fn sizes(#[case] s: &str, #[case] v: Option<u64>) {
    assert_eq!(parse_scenario_size(s), v);
}

/// A JSON scenario is read by the JSON parser and builds what the
/// same scenario in YAML builds; its errors name their line.
#[test]
fn json_scenarios_are_yaml_scenarios() {
    let yaml = "nodes:\n  - {name: a, cpus: 8}\nvms:\n  - {vmid: 100, node: a, name: web, status: running, config: {cores: 2, memory: 1024}}\n";
    let json = r#"{"nodes": [{"name": "a", "cpus": 8}],
 "vms": [{"vmid": 100, "node": "a", "name": "web", "status": "running", "config": {"cores": 2, "memory": 1024}}]}"#;
    let build = |text: &str| {
        Scenario::parse(text, "t")
            .expect("valid")
            .build(PveVersion::V9_1, "pw", 1_700_000_000)
            .map(|c| crate::api::cluster::view::resources(&c.resources(), None, 1_700_000_100))
            .expect("builds")
    };
    assert_eq!(build(yaml), build(json));
    let bad = "{\n \"nodes\": [{\"name\": \"a\"}],\n \"vms\": [{\"vmid\": \"x\"}]\n}";
    let e = Scenario::parse(bad, "t.json").expect_err("a bad vmid");
    assert_eq!((e.file.as_str(), e.line), ("t.json", Some(3)), "{e:?}");
    assert!(!e.reason.contains(" at line "), "{e:?}");
    // YAML in flow style starts with a brace too.
    let flow = "{nodes: [{name: a, cpus: 8}], vms: [{vmid: 100, node: a, name: web, status: running, config: {cores: 2, memory: 1024}}]}";
    assert_eq!(build(flow), build(json));
}

/// Guests of both kinds with numbers, booleans and text in their
/// configs, snapshots, and a guest agent.
const SEEDED: &str = "
nodes:
  - {name: a, cpus: 8}
vms:
  - vmid: 100
    node: a
    name: web
    status: running
    config: {cores: 2, memory: 1024, agent: true, onboot: false, tags: 'x;y', parent: s1}
    snapshots:
      s1: {snaptime: 1700000000, description: first, cores: 1}
  - {vmid: 101, config: }
containers:
  - {vmid: 200, hostname: c1, status: running, config: {cores: 1, memory: 512, unprivileged: true}}
";

/// A world as text, to compare two.
fn text_of(c: &Cluster) -> String {
    serde_json::to_string(c).expect("a world serializes")
}

/// A scenario read from text hands its guests to the world it seeds
/// and reads them again from its text for the next: both worlds are
/// the world the scenario builds.
#[rstest]
fn a_seed_read_from_text_gives_its_guests_and_builds_the_same_world_again(
    #[values(PveVersion::V8_4, PveVersion::V9_1)] version: PveVersion,
) {
    let read = Scenario::read(SEEDED, "t").expect("reads");
    let built = read.build(version, "pw", 1_700_000_000).expect("builds");
    let (seeded, seed) = read
        .build_seed(version, "pw", 1_700_000_000)
        .expect("builds");
    assert_eq!(text_of(&seeded), text_of(&built));
    assert!(seed.vms.is_empty() && seed.containers.is_empty());
    let again = seed.build(version, "pw", 1_700_000_000).expect("again");
    assert_eq!(text_of(&again), text_of(&built));
    // And again, from a seed that gave its guests already.
    let (third, _) = seed
        .clone()
        .build_seed(version, "pw", 1_700_000_000)
        .expect("a third time");
    assert_eq!(text_of(&third), text_of(&built));
    let vm = built.guests.vm("a", 100).expect("VM 100");
    let conf = |k: &str| vm.config.get(k).map(String::as_str);
    assert_eq!(
        [conf("cores"), conf("memory"), conf("agent"), conf("onboot")],
        [Some("2"), Some("1024"), Some("1"), Some("0")]
    );
    assert_eq!(conf("name"), Some("web"));
    assert!(
        built.guests.vm("a", 101).is_ok(),
        "a VM with an empty config"
    );
}

/// A scenario made in code (not read from text) keeps its guests:
/// there is no text to read them from again.
#[rstest]
fn a_scenario_made_in_code_keeps_its_guests() {
    let mut s = Scenario::default_single_node();
    s.vms.push(VmSpec {
        vmid: 100,
        node: None,
        name: Some("made".into()),
        status: None,
        config: BTreeMap::from([("cores".into(), "4".into())]),
        snapshots: BTreeMap::new(),
        pending: BTreeMap::new(),
        pending_delete: Vec::new(),
    });
    let (c, seed) = s
        .build_seed(PveVersion::V9_1, "pw", 1_700_000_000)
        .expect("builds");
    assert_eq!(seed.vms.len(), 1);
    assert!(c.guests.vm("pve", 100).is_ok());
    let again = seed
        .build(PveVersion::V9_1, "pw", 1_700_000_000)
        .expect("again");
    assert_eq!(text_of(&again), text_of(&c));
}

/// A scenario whose guests do not build says so, whichever way it is
/// built.
#[rstest]
fn a_seed_that_does_not_build_says_why() {
    let bad = "nodes: [{name: a}]\nvms:\n  - {vmid: 100, node: b}\n";
    let read = Scenario::read(bad, "t").expect("reads");
    let e = read
        .build_seed(PveVersion::V9_1, "pw", 0)
        .expect_err("an unknown node");
    assert_eq!(e.reason, "VM 100: unknown node 'b'");
    assert_eq!(e.line, Some(3), "{e:?}");
}

#[test]
fn default_is_a_fresh_install() {
    let c = Scenario::default_single_node()
        .build(PveVersion::V9_1, "pw", 1_700_000_000)
        .expect("default builds");
    assert_eq!(c.nodes.local(), "pve");
    assert_eq!(c.nodes.cluster_name(), None);
    assert_eq!(c.nodes.members()[0].bridges, vec!["vmbr0"]);
    let ids: Vec<_> = c.storage.cfg().iter().map(|s| s.storage.as_str()).collect();
    assert_eq!(ids, ["local", "local-lvm"]);
    assert_eq!(
        c.storage.cfg()[0].content,
        ["iso", "vztmpl", "backup", "snippets"]
    );
    assert!(c.access.users.contains_key("root@pam"));
}

#[rstest]
#[case("nodes: [{name: pve, cpus: many}]", Some(1), "invalid type")]
#[case(
    "nodes:\n  - name: pve\n    colour: red\n",
    Some(3),
    "unknown field `colour`"
)]
#[case(
    "nodes:\n  - name: a\n  - name: a\n",
    Some(3),
    "duplicate node name 'a'"
)]
#[case("nodes:\n  - name: -bad\n", Some(2), "invalid node name '-bad'")]
#[case("users:\n  - userid: bob\n", Some(2), "invalid userid 'bob'")]
#[case("users:\n  - userid: bob@ldap\n", Some(2), "unknown realm 'ldap'")]
#[case(
    "vms:\n  - vmid: 100\n    node: nope\n",
    Some(3),
    "unknown node 'nope'"
)]
#[case(
    "storages:\n  - id: s1\n    type: floppy\n",
    Some(3),
    "unknown storage type 'floppy'"
)]
#[case(
    "nodes:\n  - name: pve\n    memory: lots\n",
    Some(3),
    "invalid size 'lots'"
)]
#[case("groups:\n  - groupid: 'a b'\n", Some(2), "invalid group id 'a b'")]
#[case(
    "users:\n  - userid: bob@pve\n    groups: [ops]\n",
    Some(3),
    "user 'bob@pve': unknown group 'ops'"
)]
#[case(
    "groups:\n  - groupid: ops\n    members: [eve@pve]\n",
    Some(3),
    "group 'ops': unknown user 'eve@pve'"
)]
#[case(
    "roles:\n  - roleid: Ops\n    privs: [VM.Audit, VM.Monitor]\n",
    Some(3),
    "role 'Ops': invalid privilege 'VM.Monitor' in PVE 9.2"
)]
#[case("roles:\n  - roleid: PVEVMUser\n", Some(2), "is built in")]
#[case("roles:\n  - roleid: pveOps\n", Some(2), "'PVE' namespace")]
#[case(
    "acl:\n  - path: /nowhere\n    roles: [PVEAuditor]\n    users: [root@pam]\n",
    Some(2),
    "invalid ACL path '/nowhere'"
)]
#[case(
    "acl:\n  - path: /vms\n    roles: [Nope]\n    users: [root@pam]\n",
    Some(3),
    "acl '/vms': unknown role 'Nope'"
)]
#[case(
    "acl:\n  - path: /vms\n    roles: [PVEAuditor]\n    tokens: [root@pam!ci]\n",
    Some(4),
    "acl '/vms': unknown token 'root@pam!ci'"
)]
#[case(
    "acl:\n  - path: /vms\n    roles: [PVEAuditor]\n",
    Some(2),
    "either users, groups or tokens is required"
)]
#[case(
    "volumes:\n  - { volid: 'local-lvm:vm-100-disk-0', size: 1G }\n",
    Some(2),
    "guest disks come from the guests' configs"
)]
#[case(
    "volumes:\n  - { volid: 'nowhere:iso/a.iso' }\n",
    Some(2),
    "volumes: storage 'nowhere' does not exist"
)]
#[case(
    "volumes:\n  - { volid: 'local:iso/a.txt' }\n",
    Some(2),
    "'a.txt' has the wrong file extension for iso"
)]
#[case(
    "volumes:\n  - { volid: 'local:iso/a.iso', notes: hello }\n",
    Some(2),
    "only backups can have notes"
)]
#[case(
    "nodes:\n  - { name: pve, nics: [eth0.5] }\n",
    Some(2),
    "invalid NIC name 'eth0.5'"
)]
#[case(
    "users:\n  - userid: bob@pve\n    tfa: [{ type: webauthn }]\n",
    Some(2),
    "user 'bob@pve': tfa type 'webauthn' cannot be recreated (totp or recovery)"
)]
#[case(
    "users:\n  - userid: bob@pve\n    tfa: [{ type: recovery }, { type: recovery }]\n",
    Some(2),
    "user already has recovery keys"
)]
fn bad_scenarios(#[case] text: &str, #[case] line: Option<usize>, #[case] reason: &str) {
    let e = Scenario::parse(text, "s.yaml").expect_err("must be refused");
    assert_eq!(e.file, "s.yaml");
    assert_eq!(e.line, line, "{e}");
    assert!(e.reason.contains(reason), "{e}");
}

#[test]
fn access_entries_build() {
    let s = Scenario::parse(
            "users:\n  - userid: bob@pve\n    groups: [ops]\n    tokens: [{tokenid: ci}]\ngroups:\n  - { groupid: ops, comment: Operators }\n  - { groupid: dev, members: [bob@pve] }\nroles:\n  - { roleid: Starter, privs: [VM.PowerMgmt] }\nacl:\n  - { path: /vms/, roles: [Starter], groups: [ops], propagate: false }\n  - { path: /nodes, roles: [PVEAuditor], tokens: ['bob@pve!ci'] }\n",
            "s.yaml",
        )
        .expect("valid");
    let c = s.build(PveVersion::V8_4, "pw", 0).expect("builds");
    let a = &c.access;
    assert_eq!(a.user_groups("bob@pve"), ["dev", "ops"]);
    assert_eq!(a.groups["ops"].comment.as_deref(), Some("Operators"));
    assert!(!a.acl["/vms"].groups["ops"]["Starter"]);
    assert!(a.acl["/nodes"].tokens["bob@pve!ci"]["PVEAuditor"]);
    let bob = AuthId::User("bob@pve".into());
    assert!(a.has_priv(&bob, "/vms", "VM.PowerMgmt"));
    assert!(!a.has_priv(&bob, "/vms/100", "VM.PowerMgmt"));
}

#[test]
fn node_storages_merge_by_id() {
    let s = Scenario::parse(
            "cluster: lab\nnodes:\n  - name: a\n    storages: [{id: fast, type: zfspool, pool: rpool}]\n  - name: b\n    storages: [{id: fast, type: zfspool, pool: rpool}]\n",
            "s.yaml",
        )
        .expect("valid");
    let c = s.build(PveVersion::V8_4, "pw", 0).expect("builds");
    let fast = c
        .storages()
        .cfg()
        .iter()
        .find(|s| s.storage == "fast")
        .expect("fast");
    assert_eq!(
        fast.nodes.as_deref(),
        Some(&["a".to_string(), "b".to_string()][..])
    );
    assert_eq!(fast.options.get("pool").map(String::as_str), Some("rpool"));
    assert_eq!(c.nodes.members()[1].nodeid, 2);
}

/// Pending changes and snapshots of both guest kinds, as a capture
/// writes them.
#[test]
fn guests_keep_pending_changes_and_snapshots() {
    let yaml = "nodes: [{name: a}]
vms:
  - vmid: 100
    config: {memory: 1024, tags: x, cores: 1, parent: s1}
    snapshots: {s1: {snaptime: 1700000000, memory: 512}}
    pending: {memory: 2048}
    pending_delete: [tags, '!cores']
containers:
  - vmid: 200
    config: {memory: 256, parent: base}
    snapshots: {base: {snaptime: 1700000000, description: fresh}}
    pending: {memory: 512}
    pending_delete: [swap]
";
    let c = Scenario::parse(yaml, "t")
        .expect("valid")
        .build(PveVersion::V9_2, "pw", 1_700_000_000)
        .expect("builds");
    let vm = c.guests.vm("a", 100).expect("vm");
    assert_eq!(vm.pending.get("memory").map(String::as_str), Some("2048"));
    assert_eq!(vm.kind.pending_delete.get("tags"), Some(&false));
    assert_eq!(vm.kind.pending_delete.get("cores"), Some(&true));
    assert_eq!(vm.snapshots["s1"]["memory"], "512");
    let ct = c.guests.ct("a", 200).expect("ct");
    assert_eq!(ct.pending.get("memory").map(String::as_str), Some("512"));
    assert_eq!(ct.kind.pending_delete, ["swap"]);
    assert_eq!(ct.snapshots["base"]["description"], "fresh");
}

/// A container's snapshot tree is checked as a VM's.
#[rstest]
#[case(
    "{base: {snaptime: 1}}",
    "parent: nope",
    "CT 200: parent 'nope' is not a snapshot"
)]
#[case(
    "{'1bad': {snaptime: 1}}",
    "memory: 1",
    "CT 200: invalid snapshot name '1bad'"
)]
fn container_snapshots_are_checked(#[case] snaps: &str, #[case] conf: &str, #[case] msg: &str) {
    let yaml = format!(
        "nodes: [{{name: a}}]\ncontainers:\n  - {{vmid: 200, config: {{{conf}}}, snapshots: {snaps}}}\n"
    );
    let e = Scenario::parse(&yaml, "t").expect_err("refused");
    assert_eq!(e.reason, msg);
}

/// `setup` holds writes of API paths, read with their parameters.
#[rstest]
#[case(
    "{method: POST, path: /cluster/firewall/rules, params: {type: in, action: ACCEPT}}",
    None
)]
#[case("{method: PUT, path: /cluster/sdn, may_fail: true}", None)]
#[case(
    "{method: GET, path: /version}",
    Some("setup: method 'GET' is not POST, PUT or DELETE")
)]
#[case(
    "{method: POST, path: cluster/backup}",
    Some("setup: invalid path 'cluster/backup'")
)]
#[case("{method: POST, path: /a/../b}", Some("setup: invalid path '/a/../b'"))]
fn setup_calls(#[case] call: &str, #[case] err: Option<&str>) {
    let yaml = format!("nodes: [{{name: a}}]\nsetup:\n  - {call}\n");
    match (Scenario::parse(&yaml, "t"), err) {
        (Ok(s), None) => assert_eq!(s.setup.len(), 1),
        (Err(e), Some(msg)) => assert_eq!(e.reason, msg),
        (r, _) => panic!("{call}: {r:?}"),
    }
}

/// A node's certificate fingerprint, as a capture copies it.
#[rstest]
#[case("AB:CD", false)]
#[case(
    "zz:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00",
    false
)]
fn node_fingerprints(#[case] fp: &str, #[case] ok: bool) {
    let yaml = format!("nodes: [{{name: a, fingerprint: '{fp}'}}]\n");
    assert_eq!(Scenario::parse(&yaml, "t").is_ok(), ok);
    let good = ["0A"; 32].join(":");
    let yaml = format!("nodes: [{{name: a, fingerprint: '{good}'}}]\n");
    let c = Scenario::parse(&yaml, "t")
        .expect("valid")
        .build(PveVersion::V9_2, "pw", 0)
        .expect("builds");
    assert_eq!(
        c.nodes().get("a").map(|n| n.ssl_fingerprint.clone()),
        Some(good)
    );
}

/// A scenario declares Ceph installed, initialised, with daemons and
/// flags; a bad release or flag names itself.
#[rstest]
#[case("ceph: {release: squid}\n", Ok((false, 0, 0)))]
#[case(
    "ceph: {release: reef, network: 127.0.0.0/8, mons: [a, {id: m2, node: b, running: false}], mgrs: [a], flags: [noout]}\n",
    Ok((true, 2, 1))
)]
#[case("ceph: {release: pacific}\n", Err("unknown release 'pacific'"))]
#[case(
    "ceph: {release: squid, flags: [nosuch]}\n",
    Err("unknown flag 'nosuch'")
)]
#[case("ceph: {release: squid, mons: [zz]}\n", Err("unknown node 'zz'"))]
fn scenarios_declare_ceph(
    #[case] ceph: &str,
    #[case] want: std::result::Result<(bool, usize, usize), &str>,
) {
    let text = format!("cluster: c\nnodes:\n  - {{name: a}}\n  - {{name: b}}\n{ceph}");
    let built =
        Scenario::parse(&text, "t").and_then(|s| s.build(PveVersion::V9_2, "pw", 1_700_000_000));
    match (built, want) {
        (Ok(c), Ok((inited, mons, mgrs))) => {
            let ceph = c.ceph();
            assert!(
                ceph.check_installed("b", crate::model::ceph::Binary::Ceph)
                    .is_ok()
            );
            assert_eq!(ceph.check_inited("a").is_ok(), inited);
            assert_eq!((ceph.mons().len(), ceph.mgrs().len()), (mons, mgrs));
            if inited {
                assert!(ceph.flag("noout"));
                // One of two monitors runs: no quorum.
                assert!(ceph.quorum_names().is_empty());
                assert_eq!(ceph.mons()[1].id, "m2");
            }
        }
        (Err(e), Err(msg)) => assert!(e.to_string().contains(msg), "{e}"),
        (got, want) => panic!("{:?} vs {want:?}", got.map(|_| ())),
    }
}

#[test]
fn file_volumes_build_with_their_attributes() {
    let s = Scenario::parse(
        "volumes:\n  - { volid: 'local:iso/a.iso', size: 1G, ctime: 1790000000 }\n  - { volid: 'local:backup/vzdump-qemu-100-2026_01_02-03_04_05.vma.zst', notes: \"a\\nb\", protected: true }\n",
        "s.yaml",
    )
    .expect("valid");
    let c = s.build(PveVersion::V9_2, "pw", 0).expect("builds");
    let local = c.storage.existing("local").expect("local").clone();
    let iso = c
        .storage
        .volumes()
        .get(&local, "pve", "iso/a.iso")
        .expect("iso");
    assert_eq!(
        (iso.size, iso.format.as_str(), iso.ctime),
        (1 << 30, "iso", 1_790_000_000)
    );
    let name = "backup/vzdump-qemu-100-2026_01_02-03_04_05.vma.zst";
    let b = c
        .storage
        .volumes()
        .get(&local, "pve", name)
        .expect("backup");
    assert_eq!((b.vmid, b.format.as_str()), (100, "vma.zst"));
    let a = c.storage.volume_attrs(&local, "pve", name);
    assert_eq!((a.notes.as_deref(), a.protected), (Some("a\nb"), true));
}

#[test]
fn nodes_have_the_nics_they_declare() {
    let s = Scenario::parse(
        "nodes:\n  - { name: pve, nics: [enp1s0f0, enp1s0f1] }\n",
        "s.yaml",
    )
    .expect("valid");
    let mut c = s.build(PveVersion::V9_2, "pw", 0).expect("builds");
    let nodes = c.nodes.clone();
    let net = c.network.node_mut(&nodes, "pve", 0);
    let physical: Vec<&String> = net.physical.iter().collect();
    assert_eq!(physical, ["enp1s0f0", "enp1s0f1"]);
    let vmbr0 = &net.current["vmbr0"];
    assert_eq!(
        vmbr0.get("bridge_ports").and_then(|v| v.as_str()),
        Some("enp1s0f0")
    );
}
