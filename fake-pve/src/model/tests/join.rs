//! Joining a cluster: `assert_joinable`'s findings and report, the
//! arguments of the cluster's `addnode`, `corosync.conf` written and
//! read back, the shared configuration read from the cluster's answers,
//! and the node that is a member once the join ends.

use std::collections::BTreeMap;

use rstest::rstest;
use serde_json::json;

use super::{World, cluster, fresh, rq};
use crate::model::corosync::{self, AddNode, Link};
use crate::model::join::{self, Answers, Finished, JoinParams, Membership, SharedConfig};
use crate::model::nodes::NodeStatus;
use crate::model::tasks::Worker;

/// The joining node: standalone pve4.
const JOINER: &str = "nodes:\n  - { name: pve4, ip: 192.0.2.14 }\n";

fn link(address: &str) -> Link {
    Link {
        address: address.into(),
        priority: None,
    }
}

fn links(pairs: &[(u32, &str)]) -> BTreeMap<u32, Link> {
    pairs.iter().map(|(n, a)| (*n, link(a))).collect()
}

#[rstest]
fn a_fresh_node_may_join(fresh: World) {
    assert!(join::joinable_errors(&fresh.c, &BTreeMap::new()).is_empty());
    let ip = fresh.c.nodes.get("pve").expect("pve").ip.clone();
    assert!(join::joinable_errors(&fresh.c, &links(&[(0, &ip), (1, "127.0.0.1")])).is_empty());
    assert_eq!(join::joinable_report(&[], false), (Vec::new(), None));
}

#[rstest]
fn a_member_with_guests_and_a_foreign_link_may_not(cluster: World) {
    let errors = join::joinable_errors(&cluster.c, &links(&[(0, "192.0.2.200")]));
    assert_eq!(
        errors,
        [
            "authentication key '/etc/corosync/authkey' already exists",
            "cluster config '/etc/pve/corosync.conf' already exists",
            "this host already contains virtual guests",
            "corosync is already running, is this node already in a cluster?!",
            "link0: cannot use IP '192.0.2.200', not found on local node!\n",
        ]
    );
    let (lines, error) = join::joinable_report(&errors, false);
    assert_eq!(error.as_deref(), Some(join::NOT_JOINABLE));
    assert_eq!(lines.len(), 7);
    assert_eq!(lines[0], "detected the following error(s):");
    assert_eq!(
        lines[5],
        "* link0: cannot use IP '192.0.2.200', not found on local node!"
    );
    assert_eq!(lines[6], "");
    let (forced, error) = join::joinable_report(&errors, true);
    assert_eq!(error, None);
    assert_eq!(
        forced[7..],
        ["", "WARNING : detected error but forced to continue!", ""]
    );
}

#[rstest]
fn a_host_name_link_is_looked_up(fresh: World) {
    let errors = join::joinable_errors(&fresh.c, &links(&[(0, "nowhere"), (1, "pve")]));
    assert_eq!(
        errors,
        [
            "link0: cannot use 'nowhere': hostname lookup 'nowhere' failed - failed to get address info for: nowhere: Name or service not known\n\n"
        ]
    );
}

#[rstest]
#[case::fallback_v1(&[], None, 1, &[("new_node_ip", "192.0.2.14"), ("apiversion", "1")], true)]
#[case::fallback_v0(&[], None, 0, &[("link0", "192.0.2.14")], true)]
#[case::links(&[(0, "192.0.2.14"), (1, "198.51.100.14")], Some(false), 1, &[("force", "0"), ("link0", "192.0.2.14"), ("link1", "198.51.100.14"), ("apiversion", "1")], false)]
fn addnode_is_asked_as_pve_asks_it(
    #[case] given: &[(u32, &str)],
    #[case] force: Option<bool>,
    #[case] apiver: i64,
    #[case] want: &[(&str, &str)],
    #[case] fallback: bool,
) {
    let p = JoinParams {
        links: links(given),
        force,
        ..JoinParams::default()
    };
    let (args, line) = join::addnode_args(&p, "192.0.2.14", apiver);
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect();
    assert_eq!(args, want);
    assert_eq!(
        line,
        fallback.then(|| {
            "No cluster network links passed explicitly, fallback to local node IP '192.0.2.14'"
                .to_string()
        })
    );
}

#[test]
fn votes_nodeid_and_priorities_go_along() {
    let mut l = links(&[(0, "192.0.2.14")]);
    l.get_mut(&0).expect("link").priority = Some(20);
    let p = JoinParams {
        links: l,
        nodeid: Some(7),
        votes: Some(2),
        ..JoinParams::default()
    };
    let (args, _) = join::addnode_args(&p, "192.0.2.14", 1);
    assert_eq!(
        args,
        [
            ("nodeid".to_string(), "7".to_string()),
            ("votes".into(), "2".into()),
            ("link0".into(), "192.0.2.14,priority=20".into()),
            ("apiversion".into(), "1".into()),
        ]
    );
}

#[rstest]
#[case(1, true)]
#[case(0, true)]
#[case(-1, false)]
fn the_cluster_speaks_a_join_api_version(#[case] v: i64, #[case] ok: bool) {
    let r = join::check_cluster_version(v);
    assert_eq!(r.is_ok(), ok);
    if let Err(e) = r {
        assert_eq!(
            e.message(),
            "error: incompatible join API version on cluster (-1), local node has 1 and supports >= 0. Make sureall cluster nodes are up-to-date."
        );
    }
}

/// The cluster with pve4 added (node id 4, link 0 at its address).
fn with_pve4(mut cluster: World) -> World {
    let req = AddNode {
        node: "pve4".into(),
        links: links(&[(0, "192.0.2.14")]),
        apiversion: Some(1),
        ..AddNode::default()
    };
    let now = cluster.now();
    corosync::addnode(&mut cluster.c.nodes, &mut cluster.c.corosync, &req, now).expect("added");
    cluster
}

#[rstest]
fn corosync_conf_is_written_and_read_back(cluster: World) {
    let cluster = with_pve4(cluster);
    let text = corosync::corosync_text(&cluster.c.nodes, &cluster.c.corosync, &cluster.c.version);
    assert!(text.starts_with("logging {\n  debug: off\n  to_syslog: yes\n}\n\nnodelist {\n"));
    assert!(text.contains(
        "totem {\n  cluster_name: lab\n  config_version: 4\n  interface {\n    linknumber: 0\n  }\n"
    ));
    assert!(text.ends_with("  version: 2\n}\n\n"));
    let conf = corosync::parse_conf(&text).expect("parses");
    assert_eq!(conf.cluster_name, "lab");
    let names: Vec<&str> = conf.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["pve1", "pve2", "pve3", "pve4"]);
    assert_eq!(conf.nodes[3].nodeid, 4);
    assert_eq!(conf.nodes[3].links[&0], "192.0.2.14");
    assert_eq!(conf.interfaces, BTreeMap::from([(0, None)]));
    assert_eq!(conf.token_coefficient, Some(125));
}

#[rstest]
#[case("nodelist { node { name pve1 } }", "missing ':' after key 'name'")]
#[case("totem { }\n}", "parse error - uncexpected '}'")]
#[case("totem { cluster_name:", "parse error - no value for 'cluster_name'")]
#[case("nodelist { }", "invalid corosync.conf")]
fn a_broken_corosync_conf_is_refused(#[case] text: &str, #[case] msg: &str) {
    let e = corosync::parse_conf(text).expect_err("refused");
    assert_eq!(e.message(), msg);
}

/// What a cluster answers of its shared configuration.
fn answers() -> Answers {
    Answers {
        storage: json!([
            {"storage": "local", "type": "dir", "path": "/var/lib/vz", "content": "iso,backup", "digest": "x"},
            {"storage": "nfs", "type": "nfs", "server": "192.0.2.99", "export": "/export",
             "path": "/mnt/pve/nfs", "content": "images", "shared": 1, "nodes": "pve1,pve4"},
            {"storage": "off", "type": "dir", "path": "/srv", "content": "none", "disable": 1},
        ]),
        users: json!([
            {"userid": "root@pam", "enable": 1, "expire": 0, "email": "root@example.com"},
            {"userid": "alice@pve", "enable": 0, "expire": 5, "comment": "Alice",
             "tokens": [{"tokenid": "ci", "privsep": 0, "expire": 0}]},
        ]),
        groups: json!([{"groupid": "ops", "users": "alice@pve", "comment": "Operators"}]),
        roles: json!([
            {"roleid": "PVEAdmin", "privs": "VM.Audit", "special": 1},
            {"roleid": "Watcher", "privs": "VM.Audit,Sys.Audit", "special": 0},
        ]),
        acl: json!([
            {"path": "/vms", "type": "group", "ugid": "ops", "roleid": "Watcher", "propagate": 1},
            {"path": "/", "type": "token", "ugid": "alice@pve!ci", "roleid": "PVEAuditor", "propagate": 0},
        ]),
        pools: vec![
            json!({"poolid": "prod", "comment": "Production", "members": [
                {"type": "storage", "storage": "nfs", "node": "pve1", "id": "storage/pve1/nfs"},
                {"type": "qemu", "vmid": 100, "node": "pve1", "id": "qemu/100"},
            ]}),
        ],
        options: json!({
            "description": "Lab\n", "mac_prefix": "BC:24:11", "allowed-tags": ["a"],
            "registered-tags": ["prod", "web"], "keyboard": "de",
            "tag-style": {"ordering": "config", "case-sensitive": 1},
        }),
    }
}

#[test]
fn the_shared_configuration_is_read_from_the_answers() {
    let s = SharedConfig::from_answers(&answers());
    let ids: Vec<&str> = s.storages.iter().map(|s| s.storage.as_str()).collect();
    assert_eq!(ids, ["local", "nfs", "off"]);
    assert_eq!(s.storages[0].content, ["iso", "backup"]);
    assert_eq!(s.storages[0].options["path"], "/var/lib/vz");
    assert!(!s.storages[0].options.contains_key("digest"));
    assert!(s.storages[1].shared);
    assert_eq!(
        s.storages[1].nodes.as_deref(),
        Some(&["pve1".to_string(), "pve4".to_string()][..])
    );
    assert!(s.storages[2].content.is_empty() && s.storages[2].disable);
    let alice = s
        .users
        .iter()
        .find(|u| u.userid == "alice@pve")
        .expect("alice");
    assert!(!alice.enable);
    assert_eq!(alice.expire, 5);
    assert!(!alice.tokens["ci"].privsep);
    assert!(alice.password.is_none());
    assert_eq!(
        s.groups["ops"].members.iter().collect::<Vec<_>>(),
        ["alice@pve"]
    );
    assert_eq!(s.roles.keys().collect::<Vec<_>>(), ["Watcher"]);
    assert!(s.acl["/vms"].groups["ops"]["Watcher"]);
    assert!(!s.acl["/"].tokens["alice@pve!ci"]["PVEAuditor"]);
    assert_eq!(s.pools[0].storage, ["nfs"]);
    assert_eq!(s.datacenter["description"], "Lab");
    assert_eq!(s.datacenter["registered-tags"], "prod;web");
    assert_eq!(
        s.datacenter["tag-style"],
        "ordering=config,case-sensitive=1"
    );
    assert!(!s.datacenter.contains_key("allowed-tags"));
}

/// The membership the cluster with pve4 added gives pve4.
fn membership(cluster: &World) -> Membership {
    let c = &cluster.c;
    let conf = corosync::corosync_text(&c.nodes, &c.corosync, &c.version);
    let status = json!([
        {"type": "cluster", "name": "lab"},
        {"type": "node", "name": "pve1", "online": 1, "ip": "192.0.2.21", "level": "c"},
        {"type": "node", "name": "pve2", "online": 1},
        {"type": "node", "name": "pve3", "online": 0},
        {"type": "node", "name": "pve4", "online": 0},
    ]);
    let nodes = json!([
        {"node": "pve1", "ssl_fingerprint": "AA:BB", "maxcpu": 32, "maxmem": 1024, "uptime": 600},
    ]);
    Membership {
        corosync_conf: conf,
        members: join::member_facts(&status, &nodes),
        shared: SharedConfig::from_answers(&answers()),
    }
}

#[rstest]
fn a_joined_node_is_a_member_with_the_shared_configuration(cluster: World) {
    let cluster = with_pve4(cluster);
    let mut me = World::from_yaml(&format!(
        "{JOINER}users:\n  - {{ userid: bob@pve, password: bob-secret }}\nvms:\n  - {{ vmid: 300, node: pve4 }}\n"
    ));
    let root_hash = me.c.access.users["root@pam"].password.clone();
    let m = membership(&cluster);
    me.c.join_cluster(&m, &mut rq()).expect("joined");
    let nodes = &me.c.nodes;
    assert_eq!(nodes.cluster_name().map(String::as_str), Some("lab"));
    assert_eq!(nodes.local(), "pve4");
    let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["pve1", "pve2", "pve3", "pve4"]);
    let pve1 = nodes.get("pve1").expect("pve1");
    assert_eq!(
        (pve1.ip.as_str(), pve1.cpus, pve1.memory),
        ("192.0.2.21", 32, 1024)
    );
    assert_eq!(pve1.ssl_fingerprint, "AA:BB");
    assert_eq!(pve1.boot_time, super::T0 - 600);
    assert_eq!(pve1.level, "c");
    assert_eq!(nodes.get("pve3").expect("pve3").status, NodeStatus::Offline);
    let mine = nodes.get("pve4").expect("pve4");
    assert_eq!((mine.nodeid, mine.status), (4, NodeStatus::Online));
    assert!(nodes.quorate());
    // corosync.conf reads the same from either side.
    assert_eq!(
        corosync::corosync_text(nodes, &me.c.corosync, &me.c.version),
        m.corosync_conf
    );
    // The node's own configuration database is gone, its guests with it.
    assert!(me.c.guests.all_ids().is_empty());
    let users: Vec<&String> = me.c.access.users.keys().collect();
    assert_eq!(users, ["alice@pve", "root@pam"]);
    assert_eq!(me.c.access.users["root@pam"].password, root_hash);
    assert_eq!(
        me.c.access.users["root@pam"].email.as_deref(),
        Some("root@example.com")
    );
    let secret = &me.c.access.users["alice@pve"].tokens["ci"].secret;
    assert!(
        crate::model::access::shadow::is_token_digest(secret),
        "{secret}"
    );
    let storages: Vec<&str> =
        me.c.storage
            .cfg()
            .iter()
            .map(|s| s.storage.as_str())
            .collect();
    assert_eq!(storages, ["local", "nfs", "off"]);
    assert!(me.c.access.pools().get("prod").is_some());
    assert_eq!(me.c.datacenter.get("keyboard"), Some("de"));
    assert!(me.c.datacenter.get("mac_prefix").is_none());
    assert!(me.c.datacenter.tag_style(me.c.version).config_order);
}

#[rstest]
fn a_conf_without_the_node_is_refused(cluster: World) {
    let mut me = World::from_yaml(JOINER);
    let mut m = membership(&cluster);
    m.corosync_conf =
        corosync::corosync_text(&cluster.c.nodes, &cluster.c.corosync, &cluster.c.version);
    let e = me.c.join_cluster(&m, &mut rq()).expect_err("not listed");
    assert_eq!(e.message(), "invalid corosync.conf");
    assert!(me.c.nodes.cluster_name().is_none());
}

#[rstest]
fn a_join_ends_its_held_task(cluster: World) {
    let cluster = with_pve4(cluster);
    let mut me = World::from_yaml(JOINER);
    let upid = me.run_as("pve4", Worker::new(join::TASK, ""), "root@pam", u64::MAX);
    assert_eq!(me.exit(&upid), "running");
    let failed = Finished {
        upid: upid.clone(),
        lines: vec!["Establishing API connection with host 'x'".into()],
        error: Some("401 authentication failure".into()),
        membership: None,
    };
    me.c.finish_join(&failed, &mut rq());
    assert_eq!(me.exit(&upid), "401 authentication failure");
    assert_eq!(
        me.task(&upid).log,
        [
            "Establishing API connection with host 'x'",
            "TASK ERROR: 401 authentication failure"
        ]
    );
    // A task that ended already is left as it is.
    let ok = Finished {
        upid: upid.clone(),
        lines: Vec::new(),
        error: None,
        membership: Some(Box::new(membership(&cluster))),
    };
    me.c.finish_join(&ok, &mut rq());
    assert!(me.c.nodes.cluster_name().is_none());
    let upid = me.run_as("pve4", Worker::new(join::TASK, ""), "root@pam", u64::MAX);
    let ok = Finished {
        upid: upid.clone(),
        ..ok
    };
    me.c.finish_join(&ok, &mut rq());
    assert_eq!(me.exit(&upid), "OK");
    assert_eq!(me.c.nodes.cluster_name().map(String::as_str), Some("lab"));
}

#[rstest]
fn the_cluster_sees_the_new_member_come_up(cluster: World) {
    let mut cluster = with_pve4(cluster);
    assert_eq!(
        cluster.c.nodes.get("pve4").expect("pve4").status,
        NodeStatus::Offline
    );
    let facts = join::JoinedFacts {
        ssl_fingerprint: Some("CC:DD".into()),
        cpus: Some(4),
        memory: Some(2048),
        uptime: Some(60),
    };
    let now = cluster.now();
    join::node_joined(&mut cluster.c.nodes, "pve4", &facts, now).expect("joined");
    let n = cluster.c.nodes.get("pve4").expect("pve4");
    assert_eq!(n.status, NodeStatus::Online);
    assert_eq!(
        (n.ssl_fingerprint.as_str(), n.cpus, n.memory),
        ("CC:DD", 4, 2048)
    );
    assert_eq!(n.boot_time, now - 60);
    let e = join::node_joined(&mut cluster.c.nodes, "pve9", &facts, now).expect_err("no member");
    assert_eq!(e.message(), "no such cluster node 'pve9'");
}
