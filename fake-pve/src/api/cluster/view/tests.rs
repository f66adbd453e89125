//! The listing written straight to text is the listing as values.

use rstest::rstest;
use serde_json::Value;

use crate::model::PveVersion;
use crate::model::access::AuthId;
use crate::model::scenario::Scenario;

/// Guests of every kind and state: running and stopped VMs and
/// containers, a template, a lock, tags, a pool, VMIDs whose text
/// order differs from their numeric one.
const WORLD: &str = "
nodes:
  - {name: pve1, cpus: 8}
  - {name: pve2, cpus: 4}
pools: [{poolid: web, vms: [1000]}]
users:
  - {userid: alice@pve}
acl:
  - {path: /vms/1000, roles: [PVEAuditor], users: [alice@pve]}
  - {path: /vms/200, roles: [PVEAuditor], users: [alice@pve]}
  - {path: /storage/local, roles: [PVEAuditor], users: [alice@pve]}
  - {path: /nodes/pve1, roles: [PVEAuditor], users: [alice@pve]}
vms:
  - {vmid: 100, node: pve1, name: a, status: running, config: {cores: '16', memory: '2048', tags: 'x;y', scsi0: 'local-lvm:vm-100-disk-0,size=32G'}}
  - {vmid: 1000, node: pve2, status: stopped, config: {vcpus: '2', sockets: '2', cores: '2', lock: backup}}
  - {vmid: 101, node: pve1, name: tpl, status: stopped, config: {template: '1'}}
containers:
  - {vmid: 200, node: pve2, hostname: c1, status: running, config: {cores: '2', rootfs: 'local-lvm:subvol-200-disk-0,size=8G'}}
  - {vmid: 2000, node: pve1, status: stopped, config: {cpulimit: '1.5', tags: t}}
  - {vmid: 201, node: pve1, status: stopped}
";

/// The world, with VM 100 an HA resource.
fn world(version: PveVersion) -> crate::model::cluster::Cluster {
    let mut c = Scenario::parse(WORLD, "t")
        .expect("scenario")
        .build(version, "pw", 1_790_000_000)
        .expect("builds");
    let up = crate::model::ha::ResourceUpdate {
        state: Some("started".into()),
        ..Default::default()
    };
    c.ha_mut()
        .create_resource(
            version,
            "vm:100",
            &up,
            |_| Some(crate::model::ha::GuestType::Qemu),
            1_790_000_000,
        )
        .expect("an HA resource");
    c
}

#[rstest]
#[case(PveVersion::V8_4)]
#[case(PveVersion::V9_1)]
fn the_written_rows_are_the_listed_ones(#[case] version: PveVersion) {
    let c = world(version);
    let root = AuthId::User("root@pam".into());
    for kind in [
        None,
        Some("vm"),
        Some("node"),
        Some("storage"),
        Some("pool"),
    ] {
        let written = super::resources_json(&c.resources(), kind, 1_790_000_100, &root);
        let written: Value = serde_json::from_slice(&written).expect("JSON");
        let listed = Value::Array(super::resources(&c.resources(), kind, 1_790_000_100));
        // Byte for byte: the same keys in the same order, the same
        // number types.
        assert_eq!(written.to_string(), listed.to_string(), "{kind:?}");
    }
    let vms: Vec<String> = super::resources(&c.resources(), Some("vm"), 1_790_000_100)
        .iter()
        .map(|r| r["id"].as_str().expect("in the test").to_string())
        .collect();
    assert_eq!(
        vms,
        [
            "qemu/100",
            "qemu/1000",
            "qemu/101",
            "lxc/200",
            "lxc/2000",
            "lxc/201"
        ]
    );
}

/// The listing written after the envelope's opening is the
/// listing, and it ends the text.
#[rstest]
fn the_listing_is_written_after_what_the_buffer_holds(
    #[values("root@pam", "alice@pve")] user: &str,
) {
    let c = world(PveVersion::V9_1);
    let who = AuthId::User(user.into());
    let mut out = b"{\"data\":".to_vec();
    super::write_resources(&c.resources(), None, 1_790_000_100, &who, &mut out);
    let alone = super::resources_json(&c.resources(), None, 1_790_000_100, &who);
    assert_eq!(out[..8], *b"{\"data\":");
    assert_eq!(
        String::from_utf8_lossy(&out[8..]),
        String::from_utf8_lossy(&alone)
    );
    let rows: Value = serde_json::from_slice(&alone).expect("JSON");
    assert!(rows.as_array().is_some_and(|r| r.len() > 3), "{rows}");
    // A node's load counts every guest running on it, also those
    // the caller may not see.
    let nodes = |rows: &Value| -> Vec<Value> {
        rows.as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["type"] == "node")
            .cloned()
            .collect()
    };
    // Their figures are left out for a caller without Sys.Audit on
    // the node (alice audits pve1 alone).
    let mut listed = Value::Array(super::resources(
        &c.resources(),
        Some("node"),
        1_790_000_100,
    ));
    for row in listed.as_array_mut().into_iter().flatten() {
        if user != "root@pam"
            && row["node"] != "pve1"
            && let Some(o) = row.as_object_mut()
        {
            for key in super::NODE_STATS {
                o.remove(*key);
            }
        }
    }
    assert_eq!(nodes(&rows), nodes(&listed));
    assert!(nodes(&rows).iter().any(|n| n["mem"].as_u64() > Some(0)));
}

/// `extract_node_stats` with `exclude_stats`: a node's figures only
/// for those who may audit it; its name, status and level for all.
#[rstest]
#[case("root@pam", &["pve1", "pve2"])]
#[case("alice@pve", &["pve1"])]
#[case("bob@pve", &[])]
fn node_figures_need_sys_audit(#[case] user: &str, #[case] audited: &[&str]) {
    let c = world(PveVersion::V9_1);
    let who = AuthId::User(user.into());
    let rows: Value = serde_json::from_slice(&super::resources_json(
        &c.resources(),
        Some("node"),
        1_790_000_100,
        &who,
    ))
    .expect("JSON");
    let rows = rows.as_array().expect("list");
    assert_eq!(rows.len(), 2);
    for row in rows {
        let node = row["node"].as_str().expect("node");
        assert_eq!(row["status"], "online", "{row}");
        for key in super::NODE_STATS {
            assert_eq!(
                row.get(*key).is_some(),
                audited.contains(&node),
                "{user} {node} {key}: {row}"
            );
        }
    }
}

/// The guests' rows written on two threads are the rows one thread
/// writes, with the same nodes' loads, for root and for a user who
/// sees only some guests.
#[rstest]
fn rows_written_on_two_threads_are_the_rows_of_one(
    #[values("root@pam", "alice@pve")] user: &str,
    #[values(None, Some("vm"))] kind: Option<&str>,
) {
    let c = world(PveVersion::V9_1);
    let who = AuthId::User(user.into());
    let written = |split: bool| {
        let mut out = b"{\"data\":".to_vec();
        super::write_resources_split(
            &c.resources(),
            kind,
            1_790_000_100,
            &who,
            &mut out,
            Some(split),
        );
        String::from_utf8(out).expect("UTF-8")
    };
    let (one, two) = (written(false), written(true));
    assert_eq!(two, one);
    let rows: Value = serde_json::from_str(&two[8..]).expect("JSON");
    assert!(rows.as_array().is_some_and(|r| r.len() >= 2), "{rows}");
}

/// What another user is shown: the guests and storages it may
/// audit, a guest's pool only with the pool's audit (as the handler
/// filtered the listed rows).
#[rstest]
fn a_user_sees_what_it_may_audit() {
    let c = world(PveVersion::V9_1);
    let alice = AuthId::User("alice@pve".into());
    let written = super::resources_json(&c.resources(), None, 1_790_000_100, &alice);
    let rows: Value = serde_json::from_slice(&written).expect("JSON");
    let ids: Vec<&str> = rows
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert!(
        ids.contains(&"qemu/1000") && ids.contains(&"lxc/200"),
        "{ids:?}"
    );
    assert!(
        !ids.contains(&"qemu/100") && !ids.contains(&"pool/web"),
        "{ids:?}"
    );
    assert!(ids.iter().any(|i| i.starts_with("node/")), "{ids:?}");
    let storages: Vec<&&str> = ids.iter().filter(|i| i.starts_with("storage/")).collect();
    assert!(
        storages.iter().all(|i| i.ends_with("/local")),
        "{storages:?}"
    );
    let vm = rows
        .as_array()
        .and_then(|r| r.iter().find(|r| r["id"] == "qemu/1000"))
        .expect("qemu/1000");
    assert!(vm.get("pool").is_none(), "{vm}");
    // root sees the pool and the HA state.
    let root = AuthId::User("root@pam".into());
    let all: Value = serde_json::from_slice(&super::resources_json(
        &c.resources(),
        None,
        1_790_000_100,
        &root,
    ))
    .expect("JSON");
    let find = |id: &str| {
        all.as_array()
            .and_then(|r| r.iter().find(|r| r["id"] == id))
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(find("qemu/1000")["pool"], "web");
    assert!(
        find("qemu/100").get("hastate").is_some(),
        "{}",
        find("qemu/100")
    );
}
