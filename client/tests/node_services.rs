//! A node's own settings and services (`api::node_services`) against an
//! in-process fake-pve: DNS, hosts, time zone, node options, services
//! as tasks, the subscription and the logs; every answer is checked
//! against the schema.

mod common;

use common::{Mode, T0, checked_client, start};
use pve_client::api::node_services::{Dns, JournalFilter, NodeOptions, SyslogFilter};

const NODE: &str = "pve";

#[tokio::test]
async fn dns_hosts_time_and_options_round_trip() {
    let run = start().await;
    let (pve, checked) = checked_client(&run, Mode::Token);
    let ns = pve.node_services();

    let dns = ns.dns(NODE).await.expect("dns");
    assert_eq!(dns.search.as_deref(), Some("example.com"));
    let want = Dns {
        search: Some("lab.example".into()),
        dns1: Some("192.0.2.53".into()),
        dns2: Some("2001:db8::53".into()),
        dns3: None,
    };
    ns.update_dns(NODE, &want).await.expect("update");
    assert_eq!(ns.dns(NODE).await.expect("dns"), want);
    let err = ns
        .update_dns(
            NODE,
            &Dns {
                dns1: Some("resolver".into()),
                ..want.clone()
            },
        )
        .await
        .expect_err("not an address");
    assert!(err.to_string().contains("dns1"), "{err}");

    let hosts = ns.get_etc_hosts(NODE).await.expect("hosts");
    assert!(hosts.data.contains("pve.example.com pve"), "{}", hosts.data);
    let digest = hosts.digest.expect("digest");
    let data = "127.0.0.1 localhost\n192.0.2.10 pve.lab.example pve\n";
    ns.write_etc_hosts(NODE, data, Some(&digest))
        .await
        .expect("write");
    assert_eq!(ns.get_etc_hosts(NODE).await.expect("hosts").data, data);
    let err = ns
        .write_etc_hosts(NODE, data, Some(&digest))
        .await
        .expect_err("stale digest");
    assert!(
        err.to_string().contains("detected modified configuration"),
        "{err}"
    );

    let t = ns.time(NODE).await.expect("time");
    assert_eq!((t.timezone.as_str(), t.time, t.localtime), ("UTC", T0, T0));
    ns.set_timezone(NODE, "Europe/Vienna").await.expect("zone");
    let t = ns.time(NODE).await.expect("time");
    assert_eq!(t.localtime - t.time, 7200, "September is summer time");
    let err = ns.set_timezone(NODE, "Mars/Base").await.expect_err("zone");
    assert!(err.to_string().contains("No such timezone"), "{err}");

    assert!(ns.get_config(NODE, None).await.expect("config").is_empty());
    let opts = NodeOptions {
        description: Some("rack 4".into()),
        wakeonlan: Some("BC:24:11:00:00:01".into()),
        ..NodeOptions::default()
    };
    ns.set_options(NODE, &opts).await.expect("set");
    let conf = ns.get_config(NODE, None).await.expect("config");
    assert_eq!(conf["description"], "rack 4\n");
    let digest = conf["digest"].as_str().expect("digest").to_string();
    let delete = NodeOptions {
        delete: vec!["wakeonlan".into()],
        digest: Some(digest.clone()),
        ..NodeOptions::default()
    };
    ns.set_options(NODE, &delete).await.expect("delete");
    let err = ns.set_options(NODE, &delete).await.expect_err("stale");
    assert!(
        err.to_string().contains("detected modified configuration"),
        "{err}"
    );
    let one = ns.get_config(NODE, Some("description")).await.expect("one");
    assert_eq!(one.len(), 1);

    let err = ns.wakeonlan(NODE).await.expect_err("local node");
    assert!(
        err.to_string()
            .contains("'pve' is local node, cannot wake my self!"),
        "{err}"
    );

    let names = checked.names();
    for want in ["GET dns", "GET get_etc_hosts", "GET time", "GET get_config"] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
}

#[tokio::test]
async fn services_change_through_tasks_and_show_in_the_logs() {
    let run = start().await;
    let (pve, _checked) = checked_client(&run, Mode::Token);
    let ns = pve.node_services();

    let list = ns.services(NODE).await.expect("services");
    assert_eq!(list.len(), 23);
    let proxy = list
        .iter()
        .find(|s| s.service == "pveproxy")
        .expect("pveproxy");
    assert!(proxy.is_active());
    assert_eq!(proxy.desc.as_deref(), Some("PVE API Proxy Server"));

    let upid = ns.service_stop(NODE, "pvestatd").await.expect("stop");
    assert_eq!(upid.kind(), "srvstop");
    let done = pve.tasks().wait(&upid).await.expect("wait");
    assert!(done.succeeded(), "{done:?}");
    let st = ns.service_state(NODE, "pvestatd").await.expect("state");
    assert_eq!((st.state.as_str(), st.is_active()), ("dead", false));
    let upid = ns.service_start(NODE, "pvestatd").await.expect("start");
    assert!(pve.tasks().wait(&upid).await.expect("wait").succeeded());
    assert!(
        ns.service_state(NODE, "pvestatd")
            .await
            .expect("state")
            .is_active()
    );

    // pveproxy is essential: the task fails, the unit keeps running.
    let upid = ns.service_stop(NODE, "pveproxy").await.expect("task");
    let err = pve.tasks().wait(&upid).await.expect_err("the task fails");
    assert!(
        err.to_string()
            .contains("invalid service cmd 'pveproxy stop': refusing to stop essential service!"),
        "{err}"
    );
    assert!(
        ns.service_state(NODE, "pveproxy")
            .await
            .expect("state")
            .is_active()
    );
    let err = ns
        .service_state(NODE, "nginx")
        .await
        .expect_err("no such service");
    assert!(err.to_string().contains("service"), "{err}");

    let (lines, total) = ns
        .syslog(
            NODE,
            &SyslogFilter {
                limit: Some(500),
                ..SyslogFilter::default()
            },
        )
        .await
        .expect("syslog");
    assert_eq!(total as usize, lines.len());
    assert!(
        lines
            .iter()
            .any(|l| l.t.contains("starting service pvestatd: UPID:pve:"))
    );
    assert!(lines.iter().any(|l| {
        l.t.ends_with("Stopped pvestatd.service - PVE Status Daemon.")
    }));
    let (only, _) = ns
        .syslog(
            NODE,
            &SyslogFilter {
                service: Some("pvestatd".into()),
                ..SyslogFilter::default()
            },
        )
        .await
        .expect("syslog");
    assert!(only.iter().all(|l| l.t.contains("pvestatd")), "{only:?}");
    let (page, total) = ns
        .syslog(
            NODE,
            &SyslogFilter {
                start: Some(1),
                limit: Some(2),
                ..SyslogFilter::default()
            },
        )
        .await
        .expect("page");
    assert_eq!((page.len(), page[0].n), (2, 2));
    assert!(total > 2);

    let journal = ns
        .journal(
            NODE,
            &JournalFilter {
                lastentries: Some(2),
                ..JournalFilter::default()
            },
        )
        .await
        .expect("journal");
    assert_eq!(journal.len(), 4, "{journal:?}");
    assert!(journal[0].starts_with("s="));

    assert!(
        ns.netstat(NODE)
            .await
            .expect("netstat")
            .iter()
            .all(|r| r.vmid == 101)
    );
    let report = ns.report(NODE).await.expect("report");
    assert!(report.contains("==== general system info ===="));
    let rrd = ns.rrddata(NODE, "hour").await.expect("rrddata");
    assert_eq!(rrd.len(), 60);
}

#[tokio::test]
async fn a_subscription_key_is_set_checked_and_removed() {
    let run = start().await;
    let (pve, _checked) = checked_client(&run, Mode::Token);
    let ns = pve.node_services();
    let sub = ns.subscription(NODE).await.expect("get");
    assert_eq!(sub.status, "notfound");
    assert_eq!(sub.message.as_deref(), Some("There is no subscription key"));
    let err = ns
        .set_subscription(NODE, "pve1x-123")
        .await
        .expect_err("format");
    assert!(err.to_string().contains("key"), "{err}");
    ns.set_subscription(NODE, "pve1c-0123456789")
        .await
        .expect("set");
    let sub = ns.subscription(NODE).await.expect("get");
    assert_eq!(
        (sub.status.as_str(), sub.level.as_deref()),
        ("active", Some("c"))
    );
    let nodes = pve.nodes().list_nodes().await.expect("nodes");
    assert_eq!(nodes[0].level.as_deref(), Some("c"));
    ns.update_subscription(NODE, true).await.expect("update");
    ns.delete_subscription(NODE).await.expect("delete");
    assert_eq!(ns.subscription(NODE).await.expect("get").status, "notfound");
}

#[tokio::test]
async fn the_node_graph_names_its_rrd_file() {
    let run = start().await;
    let (pve, checked) = checked_client(&run, Mode::Token);
    let ns = pve.node_services();
    let g = ns
        .rrd(NODE, "hour", &["cpu", "iowait"], Some("MAX"))
        .await
        .expect("graph");
    assert_eq!(
        g.filename,
        "/var/lib/rrdcached/db/pve-node-9.0/pve_cpu_iowait.png"
    );
    assert!(g.image.expect("image").starts_with("\u{89}PNG"));
    let err = ns
        .rrd(NODE, "hour", &["bogomips"], None)
        .await
        .expect_err("no such data source");
    assert!(
        err.to_string().contains(
            "RRD error: No DS called 'bogomips' in '/var/lib/rrdcached/db/pve-node-9.0/pve'"
        ),
        "{err}"
    );
    assert!(checked.names().iter().any(|n| n == "GET rrd"));
}

#[tokio::test]
async fn apt_repositories_are_changed_and_added_under_their_digest() {
    let run = start().await;
    let (pve, checked) = checked_client(&run, Mode::Token);
    let ns = pve.node_services();
    let repos = ns.repositories(NODE).await.expect("repositories");
    let paths: Vec<&str> = repos.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/etc/apt/sources.list.d/ceph.sources",
            "/etc/apt/sources.list.d/debian.sources",
            "/etc/apt/sources.list.d/pve-enterprise.sources",
        ]
    );
    let status = |r: &pve_client::api::node_services::AptRepositories, h: &str| {
        r.standard_repos
            .iter()
            .find(|s| s.handle == h)
            .and_then(|s| s.status)
    };
    assert_eq!(status(&repos, "enterprise"), Some(true));
    assert_eq!(status(&repos, "no-subscription"), None);

    let enterprise = "/etc/apt/sources.list.d/pve-enterprise.sources";
    ns.change_repository(NODE, enterprise, 0, Some(false), Some(&repos.digest))
        .await
        .expect("disable");
    let err = ns
        .add_repository(NODE, "no-subscription", Some(&repos.digest))
        .await
        .expect_err("stale digest");
    assert!(
        err.to_string().contains("detected modified configuration"),
        "{err}"
    );
    ns.add_repository(NODE, "no-subscription", None)
        .await
        .expect("add");
    let after = ns.repositories(NODE).await.expect("repositories");
    assert_eq!(status(&after, "enterprise"), Some(false));
    assert_eq!(status(&after, "no-subscription"), Some(true));
    let added = after
        .files
        .iter()
        .find(|f| f.path == "/etc/apt/sources.list.d/proxmox.sources")
        .expect("proxmox.sources");
    assert_eq!(added.repositories[0].components, ["pve-no-subscription"]);
    let err = ns
        .change_repository(NODE, enterprise, 4, Some(true), None)
        .await
        .expect_err("index");
    assert!(err.to_string().contains("invalid index - 4"), "{err}");

    let names = checked.names();
    for want in [
        "GET repositories",
        "POST change_repository",
        "PUT add_repository",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
}

#[tokio::test]
async fn metrics_export_has_the_cached_rounds() {
    use pve_client::api::metrics::ExportQuery;
    let run = start().await;
    let (pve, checked) = checked_client(&run, Mode::Token);
    let m = pve.metrics();
    let now = m.export(&ExportQuery::default()).await.expect("export");
    assert!(
        now.iter()
            .any(|x| x.id == "node/pve" && x.metric == "cpu_max" && x.kind == "gauge")
    );
    let history = m
        .export(&ExportQuery {
            history: true,
            start_time: Some(T0 - 60),
            ..ExportQuery::default()
        })
        .await
        .expect("history");
    let rounds = history
        .iter()
        .filter(|x| x.id == "node/pve" && x.metric == "uptime")
        .count();
    assert_eq!(rounds, 6);
    assert!(history.windows(2).all(|w| w[0].timestamp <= w[1].timestamp));
    let err = m
        .export(&ExportQuery {
            node_list: vec!["elsewhere".into()],
            ..ExportQuery::default()
        })
        .await
        .expect_err("unknown node");
    assert!(
        err.to_string()
            .contains("Requested node-list contains unknown nodes - elsewhere"),
        "{err}"
    );
    assert!(checked.names().iter().any(|n| n == "GET export"));
}
