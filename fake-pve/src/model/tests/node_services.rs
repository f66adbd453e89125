//! A node's own files and services: configuration, DNS, hosts, time
//! zone, services as tasks, the subscription and the journal.

use rstest::rstest;
use serde_json::json;

use super::{CLUSTER, LAB, T0, World, fresh, refused, root};
use crate::api::node_services::view;
use crate::model::node_services::logs::{self, JournalQuery, SyslogQuery};
use crate::model::node_services::stats::{node_report, node_rrd_file, node_rrddata};
use crate::model::node_services::{
    LogLine, NodeSys, ServiceAction, set_subscription_key, store_subscription, subscription, tz,
    update_subscription,
};
use crate::model::{Cluster, PveVersion, Result};

/// `node`'s own files and services.
fn sys<'a>(c: &'a Cluster, node: &str) -> std::borrow::Cow<'a, NodeSys> {
    c.node_services
        .sys(&c.nodes, c.version, node)
        .expect("node")
}

/// `node`'s own files and services, to change.
fn sys_mut<'a>(c: &'a mut Cluster, node: &str) -> &'a mut NodeSys {
    c.node_services
        .sys_mut(&c.nodes, c.version, node)
        .expect("node")
}

/// `node`'s journal.
fn journal(c: &Cluster, node: &str) -> Vec<LogLine> {
    c.node_services
        .journal(&c.nodes, c.version, node)
        .expect("journal")
}

/// `PUT /nodes/{node}/subscription`.
fn set_key(c: &mut Cluster, node: &str, key: &str, now: i64) -> Result<()> {
    set_subscription_key(
        &mut c.nodes,
        &mut c.node_services,
        c.version,
        node,
        key,
        now,
    )
}

/// Runs `action` on `service` of `node` to its end; answers the task's
/// exit status.
fn systemctl(w: &mut World, node: &str, service: &str, action: ServiceAction) -> String {
    let worker =
        w.c.node_services
            .service_worker(&w.c.nodes, w.c.version, node, service, action)
            .expect("a service of the release");
    let upid = w.run_as(node, worker, "root@pam", 1000);
    w.tick(1000);
    w.exit(&upid)
}

/// The `state` and `active-state` of a service.
fn state(w: &World, node: &str, service: &str) -> (String, String) {
    let (unit, st) =
        w.c.node_services
            .service(&w.c.nodes, w.c.version, node, service)
            .expect("service");
    let v = view::service(unit, st);
    (
        v["state"].as_str().unwrap_or_default().to_string(),
        v["active-state"].as_str().unwrap_or_default().to_string(),
    )
}

#[rstest]
fn a_fresh_node_has_the_installers_files(fresh: World) {
    let sys = sys(&fresh.c, "pve");
    assert_eq!(
        view::dns(&sys),
        json!({ "search": "example.com", "dns1": "192.0.2.1" })
    );
    let hosts = view::hosts(&sys);
    assert!(
        hosts["data"]
            .as_str()
            .expect("data")
            .contains("192.0.2.10 pve.example.com pve\n")
    );
    assert_eq!(hosts["digest"].as_str().expect("digest").len(), 40);
    assert_eq!(view::config(&sys, None), json!({}));
    assert_eq!(
        view::time(&sys, T0),
        json!({ "timezone": "UTC", "time": T0, "localtime": T0 })
    );
    // Nothing is kept for a node left as installed.
    assert!(fresh.c.node_services.is_empty());
}

#[rstest]
fn the_node_config_reads_back_as_pve_writes_it(mut fresh: World) {
    let set = super::map(&[
        ("description", "rack 4\nslot 2"),
        ("startall-onboot-delay", "10"),
        ("wakeonlan", "mac=BC:24:11:00:00:01"),
    ]);
    let sys = sys_mut(&mut fresh.c, "pve");
    sys.set_config(&set, &[], None, &Default::default())
        .expect("set");
    let v = view::config(sys, None);
    assert_eq!(v["description"], "rack 4\nslot 2\n");
    assert_eq!(v["startall-onboot-delay"], "10");
    assert_eq!(sys.wakeonlan_mac().as_deref(), Some("BC:24:11:00:00:01"));
    let digest = v["digest"].as_str().expect("digest").to_string();
    assert_eq!(
        view::config(sys, Some("wakeonlan")),
        json!({ "wakeonlan": "mac=BC:24:11:00:00:01" })
    );
    assert_eq!(view::config(sys, Some("acme")), json!({}));
    // A stale digest is refused; the right one passes; delete removes.
    let none = super::map(&[]);
    assert_eq!(
        refused(sys.set_config(
            &none,
            &["wakeonlan".into()],
            Some("0123"),
            &Default::default()
        )),
        (500, crate::model::node_services::MODIFIED.into())
    );
    sys.set_config(
        &none,
        &["wakeonlan".into()],
        Some(&digest),
        &Default::default(),
    )
    .expect("delete");
    assert!(view::config(sys, None).get("wakeonlan").is_none());
}

#[rstest]
#[case::newline(&[("acme", "domains=a.example\nb")], "detected invalid newline inside property 'acme'")]
#[case::twice(
    &[("acme", "domains=a.example;A.example")],
    "duplicate domain 'a.example' in ACME config properties"
)]
#[case::twice_across(
    &[("acme", "domains=a.example"), ("acmedomain0", "a.example")],
    "duplicate domain 'a.example' in ACME config properties 'acmedomain0' and 'acme'"
)]
#[case::plugin(
    &[("acmedomain1", "domain=b.example,plugin=dns1")],
    "plugin 'dns1' for domain 'b.example' not found!"
)]
fn node_config_refusals(mut fresh: World, #[case] set: &[(&str, &str)], #[case] msg: &str) {
    let sys = sys_mut(&mut fresh.c, "pve");
    assert_eq!(
        refused(sys.set_config(&super::map(set), &[], None, &Default::default())),
        (500, msg.into())
    );
}

#[rstest]
fn dns_servers_replace_all_and_collapse_duplicates(mut fresh: World) {
    let sys = sys_mut(&mut fresh.c, "pve");
    sys.set_dns(
        "lab.example",
        [Some("192.0.2.53"), Some("192.0.2.53"), Some("2001:db8::53")],
    );
    assert_eq!(
        view::dns(sys),
        json!({ "search": "lab.example", "dns1": "192.0.2.53", "dns2": "2001:db8::53" })
    );
    sys.set_dns("lab.example", [None, Some("0.0.0.0"), None]);
    assert_eq!(view::dns(sys), json!({ "search": "lab.example" }));
}

#[rstest]
#[case::bad_ip("300.1.1.1 host\n", "data: Invalid IP '300.1.1.1'")]
#[case::indented(" 192.0.2.1 host\n", "data: Invalid IP ''")]
#[case::bad_name("192.0.2.1 ho_st\n", "data: Invalid Hostname 'ho_st'")]
fn hosts_lines_are_checked(mut fresh: World, #[case] data: &str, #[case] msg: &str) {
    let sys = sys_mut(&mut fresh.c, "pve");
    assert_eq!(refused(sys.write_hosts(data, None)), (400, msg.into()));
}

#[rstest]
fn hosts_are_written_under_their_digest(mut fresh: World) {
    let sys = sys_mut(&mut fresh.c, "pve");
    let digest = view::hosts(sys)["digest"]
        .as_str()
        .expect("digest")
        .to_string();
    let data = "# lab\n127.0.0.1 localhost\n192.0.2.10 pve.lab.example pve\n";
    sys.write_hosts(data, Some(&digest)).expect("write");
    assert_eq!(view::hosts(sys)["data"], data);
    assert_eq!(
        refused(sys.write_hosts(data, Some(&digest))),
        (500, crate::model::node_services::MODIFIED.into())
    );
}

#[rstest]
#[case::winter("Europe/Vienna", 1_767_225_600, 3600)] // 2026-01-01
#[case::summer("Europe/Vienna", 1_782_864_000, 7200)] // 2026-07-01
#[case::ny_summer("America/New_York", 1_782_864_000, -14_400)]
#[case::ny_winter("America/New_York", 1_767_225_600, -18_000)]
#[case::utc("UTC", 1_782_864_000, 0)]
#[case::kolkata("Asia/Kolkata", 1_782_864_000, 19_800)]
fn zones_keep_their_offsets(#[case] zone: &str, #[case] at: i64, #[case] offset: i64) {
    assert_eq!(tz::offset(zone, at), offset);
}

#[rstest]
fn the_time_zone_changes_localtime(mut fresh: World) {
    let sys = sys_mut(&mut fresh.c, "pve");
    assert_eq!(
        refused(sys.set_timezone("Mars/Olympus")),
        (400, "timezone: No such timezone".into())
    );
    sys.set_timezone("Europe/Vienna").expect("zone");
    // T0 is 2026-09-21, summer time in Vienna.
    assert_eq!(view::time(sys, T0)["localtime"], T0 + 7200);
}

#[rstest]
fn services_start_and_stop_through_tasks(mut fresh: World) {
    assert_eq!(
        state(&fresh, "pve", "pvestatd"),
        ("running".into(), "active".into())
    );
    assert_eq!(
        systemctl(&mut fresh, "pve", "pvestatd", ServiceAction::Stop),
        "OK"
    );
    assert_eq!(
        state(&fresh, "pve", "pvestatd"),
        ("dead".into(), "inactive".into())
    );
    // try-reload-or-restart leaves a stopped unit stopped.
    assert_eq!(
        systemctl(&mut fresh, "pve", "pvestatd", ServiceAction::Reload),
        "OK"
    );
    assert_eq!(
        state(&fresh, "pve", "pvestatd"),
        ("dead".into(), "inactive".into())
    );
    assert_eq!(
        systemctl(&mut fresh, "pve", "pvestatd", ServiceAction::Start),
        "OK"
    );
    assert_eq!(
        state(&fresh, "pve", "pvestatd"),
        ("running".into(), "active".into())
    );
    let kinds: Vec<String> = fresh.c.tasks.iter().map(|t| t.upid.kind.clone()).collect();
    assert_eq!(kinds, ["srvstop", "srvreload", "srvstart"]);
}

#[rstest]
#[case::pveproxy("pveproxy")]
#[case::pvedaemon("pvedaemon")]
#[case::cluster("pve-cluster")]
fn essential_services_refuse_to_stop(mut fresh: World, #[case] service: &str) {
    let exit = systemctl(&mut fresh, "pve", service, ServiceAction::Stop);
    assert_eq!(
        exit,
        format!("invalid service cmd '{service} stop': refusing to stop essential service!")
    );
    assert_eq!(state(&fresh, "pve", service).0, "running");
    // A restart is allowed.
    assert_eq!(
        systemctl(&mut fresh, "pve", service, ServiceAction::Restart),
        "OK"
    );
}

#[rstest]
fn a_unit_that_is_not_installed_fails_its_task(mut fresh: World) {
    let exit = systemctl(&mut fresh, "pve", "syslog", ServiceAction::Start);
    assert_eq!(exit, "command 'systemctl start syslog' failed: exit code 5");
    let task = fresh.c.tasks.iter().last().expect("task");
    assert_eq!(
        task.log[0],
        "Failed to start syslog.service: Unit syslog.service not found."
    );
    let (unit, st) = fresh
        .c
        .node_services
        .service(&fresh.c.nodes, fresh.c.version, "pve", "syslog")
        .expect("state");
    let v = view::service(unit, st);
    assert_eq!(v["unit-state"], "not-found");
}

#[rstest]
fn corosync_runs_only_in_a_cluster(mut fresh: World) {
    assert_eq!(state(&fresh, "pve", "corosync").0, "dead");
    // The start succeeds, the condition keeps the unit dead.
    assert_eq!(
        systemctl(&mut fresh, "pve", "corosync", ServiceAction::Start),
        "OK"
    );
    assert_eq!(state(&fresh, "pve", "corosync").0, "dead");
    let c = World::from_yaml(CLUSTER);
    assert_eq!(state(&c, "pve1", "corosync").0, "running");
}

#[rstest]
#[case::v8(PveVersion::V8_4, 19)]
#[case::v9(PveVersion::V9_1, 23)]
fn each_release_lists_its_services(#[case] v: PveVersion, #[case] n: usize) {
    let w = World::from_yaml_v(LAB, v);
    let list: Vec<serde_json::Value> =
        w.c.node_services
            .services(&w.c.nodes, w.c.version, "pve")
            .expect("list")
            .into_iter()
            .map(|(u, st)| view::service(u, st))
            .collect();
    assert_eq!(list.len(), n);
    let has_qmeventd = list.iter().any(|s| s["service"] == "qmeventd");
    assert_eq!(has_qmeventd, v.is_v9());
    assert!(
        w.c.node_services
            .service_worker(
                &w.c.nodes,
                w.c.version,
                "pve",
                "qmeventd",
                ServiceAction::Start
            )
            .is_err()
            != v.is_v9()
    );
}

#[rstest]
fn the_journal_has_the_tasks_and_the_units_lines(mut fresh: World) {
    systemctl(&mut fresh, "pve", "pvestatd", ServiceAction::Restart);
    let lines = journal(&fresh.c, "pve");
    let text: Vec<String> = lines.iter().map(|l| l.render("pve", "UTC")).collect();
    let upid = fresh.c.tasks.iter().last().expect("task").upid_str.clone();
    assert!(
        text.iter()
            .any(|t| t.ends_with(&format!("<root@pam> starting task {upid}"))),
        "{text:#?}"
    );
    assert!(
        text.iter()
            .any(|t| t.ends_with(&format!("re-starting service pvestatd: {upid}")))
    );
    assert!(
        text.iter()
            .any(|t| t.ends_with(&format!("<root@pam> end task {upid} OK")))
    );
    assert!(
        text.iter()
            .any(|t| t.ends_with("systemd[1]: Started pvestatd.service - PVE Status Daemon."))
    );
    // Only the unit's lines for `service`.
    let q = SyslogQuery {
        unit: Some("pvestatd".into()),
        limit: 500,
        ..SyslogQuery::default()
    };
    let (n, rows) = logs::syslog(&lines, "pve", "UTC", &q);
    assert_eq!(n as usize, rows.len());
    assert!(rows.iter().all(|(_, t)| t.contains("pvestatd")));
    // start and limit page through the lines; `total` counts them all.
    let (total, page) = logs::syslog(
        &lines,
        "pve",
        "UTC",
        &SyslogQuery {
            start: 2,
            limit: 3,
            ..SyslogQuery::default()
        },
    );
    assert_eq!(total as usize, lines.len());
    assert_eq!(page.len(), 3);
    assert_eq!(page[0].0, 3);
    // Nothing selected: PVE's `no content` line.
    let (total, none) = logs::syslog(
        &lines,
        "pve",
        "UTC",
        &SyslogQuery {
            since: Some(T0 + 86_400),
            ..SyslogQuery::default()
        },
    );
    assert_eq!(
        (total, view::syslog(none)),
        (1, json!([{ "n": 1, "t": "no content" }]))
    );
}

#[rstest]
fn the_journal_pages_by_cursor(mut fresh: World) {
    systemctl(&mut fresh, "pve", "pvestatd", ServiceAction::Restart);
    let lines = journal(&fresh.c, "pve");
    let last3 = logs::journal(
        &lines,
        "pve",
        "UTC",
        &JournalQuery {
            lastentries: Some(3),
            ..JournalQuery::default()
        },
    );
    assert_eq!(last3.len(), 5, "start cursor, three lines, end cursor");
    let end = last3[4].clone();
    systemctl(&mut fresh, "pve", "pvestatd", ServiceAction::Reload);
    let lines = journal(&fresh.c, "pve");
    let newer = logs::journal(
        &lines,
        "pve",
        "UTC",
        &JournalQuery {
            startcursor: Some(end),
            ..JournalQuery::default()
        },
    );
    assert!(
        newer
            .iter()
            .any(|l| l.contains("reloading service pvestatd")),
        "{newer:#?}"
    );
    assert!(!newer.iter().any(|l| l.contains("re-starting service")));
}

#[rstest]
#[case::single_level("3", Some((0, 3)))]
#[case::range("2..5", Some((2, 5)))]
#[case::range_either_way("5..2", Some((2, 5)))]
#[case::empty_is_no_filter("", None)]
fn journal_priorities(#[case] text: &str, #[case] want: Option<(u8, u8)>) {
    assert_eq!(JournalQuery::priority_range(text), want);
}

/// 9.2's filters: identifier globs, units (with `.service` implied),
/// the kernel, priorities.
#[rstest]
#[case::service_glob(JournalQuery { service: Some("pve*".into()), ..JournalQuery::default() }, "pvedaemon", true)]
#[case::service_glob_excludes(JournalQuery { service: Some("pve*".into()), ..JournalQuery::default() }, "systemd", false)]
#[case::service_class(JournalQuery { service: Some("[!p]*".into()), ..JournalQuery::default() }, "pvedaemon", false)]
#[case::unit(JournalQuery { unit: Some("pvestatd.service".into()), ..JournalQuery::default() }, "systemd", true)]
#[case::unit_excludes(JournalQuery { unit: Some("pvestatd".into()), ..JournalQuery::default() }, "kernel", false)]
#[case::kernel(JournalQuery { kernel: true, ..JournalQuery::default() }, "kernel", true)]
#[case::kernel_only(JournalQuery { kernel: true, ..JournalQuery::default() }, "systemd", false)]
#[case::notice_and_worse(JournalQuery { priority: Some((0, 5)), ..JournalQuery::default() }, "kernel", true)]
#[case::info_is_not_a_notice(JournalQuery { priority: Some((0, 5)), ..JournalQuery::default() }, "systemd", false)]
fn journal_filters(
    mut fresh: World,
    #[case] q: JournalQuery,
    #[case] identifier: &str,
    #[case] present: bool,
) {
    systemctl(&mut fresh, "pve", "pvestatd", ServiceAction::Restart);
    let lines = journal(&fresh.c, "pve");
    let picked = logs::pick(&lines, &q);
    assert!(!lines.is_empty());
    assert_eq!(
        picked.iter().any(|(_, l)| l.identifier() == identifier),
        present,
        "{picked:#?}"
    );
    if let Some(u) = &q.unit {
        assert!(
            picked
                .iter()
                .all(|(_, l)| l.unit.as_deref() == Some(u.trim_end_matches(".service")))
        );
    }
}

/// `structured` answers records, with the identifiers and units the
/// journal holds when asked.
#[rstest]
fn the_structured_journal(mut fresh: World) {
    systemctl(&mut fresh, "pve", "pvestatd", ServiceAction::Restart);
    let lines = journal(&fresh.c, "pve");
    let q = JournalQuery {
        lastentries: Some(2),
        ..JournalQuery::default()
    };
    let picked = logs::pick(&lines, &q);
    let v = view::journal_structured(&picked, &lines, "pve", true, true);
    let recs = v.as_array().expect("array");
    assert_eq!(recs.len(), 4, "{v:#}");
    let last = &recs[1];
    assert_eq!(last["hostname"], "pve");
    assert_eq!(last["identifier"], "pvedaemon");
    assert_eq!(last["priority"], 6);
    assert_eq!(last["unit"], "pvedaemon.service");
    assert!(
        last["message"]
            .as_str()
            .is_some_and(|m| m.contains("end task"))
    );
    assert!(last["pid"].as_u64().is_some());
    assert_eq!(last["cursor"], json!(picked[1].0));
    let ids = recs[2]["identifiers"].as_array().expect("identifiers");
    assert!(ids.contains(&json!("kernel")) && ids.contains(&json!("systemd")));
    let units = recs[3]["units"].as_array().expect("units");
    assert!(units.contains(&json!("pvestatd.service")));
}

#[rstest]
fn syslog_times_are_the_nodes_local_time() {
    let at = logs::parse_local("2026-09-21 10:00", "Europe/Vienna").expect("parses");
    assert_eq!(
        at,
        logs::parse_local("2026-09-21 08:00:00", "UTC").expect("parses")
    );
    assert!(logs::parse_local("yesterday", "UTC").is_none());
}

#[rstest]
fn no_subscription_reads_notfound(fresh: World) {
    let sys = sys(&fresh.c, "pve");
    let v = view::subscription(sys.subscription(), "pve", 1, true);
    assert_eq!(v["status"], "notfound");
    assert_eq!(v["message"], "There is no subscription key");
    assert_eq!(v["url"], subscription::URL);
    assert_eq!(v["serverid"].as_str().expect("serverid").len(), 32);
    let v = view::subscription(sys.subscription(), "pve", 1, false);
    assert!(v.get("serverid").is_none());
}

#[rstest]
fn a_key_sets_the_level_and_delete_clears_it(mut fresh: World) {
    set_key(&mut fresh.c, "pve", " pve1c-0123456789 ", T0).expect("key");
    assert_eq!(fresh.c.nodes.get("pve").expect("pve").level, "c");
    let sys = sys(&fresh.c, "pve");
    let v = view::subscription(sys.subscription(), "pve", 1, true);
    assert_eq!(v["status"], "active");
    assert_eq!(v["key"], "pve1c-0123456789");
    assert_eq!(v["level"], "c");
    assert_eq!(
        v["productname"],
        "Proxmox VE Community Subscription 1 CPU/year"
    );
    assert_eq!(v["nextduedate"], "2027-09-21");
    // Without Sys.Audit: the status only.
    let v = view::subscription(sys.subscription(), "pve", 1, false);
    assert_eq!(v, json!({ "status": "active", "url": subscription::URL }));
    let c = &mut fresh.c;
    update_subscription(
        &mut c.nodes,
        &mut c.node_services,
        c.version,
        "pve",
        true,
        T0 + 60,
    )
    .expect("update");
    store_subscription(&mut c.nodes, &mut c.node_services, c.version, "pve", None).expect("delete");
    assert_eq!(fresh.c.nodes.get("pve").expect("pve").level, "");
    let _ = root();
}

#[rstest]
fn a_key_for_fewer_sockets_is_refused() {
    let mut w = World::from_yaml("nodes:\n  - { name: pve, sockets: 2, cpus: 16 }\n");
    assert_eq!(
        refused(set_key(&mut w.c, "pve", "pve1b-0123456789", T0)),
        (500, "wrong number of sockets (1 < 2)".into())
    );
    assert_eq!(
        refused(set_key(&mut w.c, "pve", "pve2x-0123456789", T0)),
        (500, "Wrong subscription key format".into())
    );
    set_key(&mut w.c, "pve", "pve2b-0123456789", T0).expect("two sockets");
}

#[rstest]
fn scenario_fields_seed_the_node() {
    let w = World::from_yaml(
        "nodes:\n  - name: pve\n    level: s\n    timezone: Europe/Berlin\n    dns: { search: lab.example, dns1: 192.0.2.53 }\n    services: { pve-ha-lrm: stopped, chrony: failed }\n",
    );
    let sys = sys(&w.c, "pve");
    assert_eq!(sys.timezone(), "Europe/Berlin");
    assert_eq!(
        view::dns(&sys),
        json!({ "search": "lab.example", "dns1": "192.0.2.53" })
    );
    assert_eq!(state(&w, "pve", "pve-ha-lrm").0, "dead");
    assert_eq!(
        state(&w, "pve", "chrony"),
        ("failed".into(), "failed".into())
    );
    assert_eq!(sys.subscription().expect("sub").status(), "active");
    assert_eq!(w.c.nodes.get("pve").expect("pve").level, "s");
}

#[rstest]
#[case::zone(
    "nodes:\n  - { name: pve, timezone: Mars/Base }\n",
    "unknown time zone 'Mars/Base'"
)]
#[case::service(
    "nodes:\n  - { name: pve, services: { nginx: running } }\n",
    "unknown service 'nginx'"
)]
#[case::state(
    "nodes:\n  - { name: pve, services: { cron: sleeping } }\n",
    "service state must be running, stopped or failed"
)]
#[case::key(
    "nodes:\n  - { name: pve, subscription: { key: abc } }\n",
    "Wrong subscription key format"
)]
#[case::dns(
    "nodes:\n  - { name: pve, dns: { dns1: nowhere } }\n",
    "invalid name server 'nowhere'"
)]
fn bad_node_fields_are_refused(#[case] yaml: &str, #[case] msg: &str) {
    // Parsing checks by building already.
    let e = match crate::model::scenario::Scenario::parse(yaml, "t.yaml") {
        Err(e) => e,
        Ok(s) => s.build(PveVersion::V9_1, "pw", T0).expect_err("refused"),
    };
    assert!(e.to_string().contains(msg), "{e}");
}

#[rstest]
fn netstat_lists_the_running_guests_taps() {
    let w = World::from_yaml(LAB);
    let now_ms = T0 * 1000 + 60_000;
    let counters = |st: &serde_json::Value| {
        let num = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
        (num(&st["netin"]), num(&st["netout"]))
    };
    let rows = crate::model::node_services::netstat(
        &w.c.nodes,
        &w.c.guests,
        "pve",
        |vm| {
            counters(&crate::api::qemu::status::vm_status(
                &w.c.vm_status_reader(),
                vm,
                now_ms,
                false,
                false,
            ))
        },
        |ct| {
            let f = crate::model::lxc::status::ct_status(
                ct,
                &w.c.nodes,
                &w.c.ha,
                w.c.version,
                now_ms.div_euclid(1000) * 1000,
                false,
            )
            .figures;
            (f.netin, f.netout)
        },
    )
    .expect("netstat");
    let rows = view::netstat(&rows);
    let rows = rows.as_array().expect("rows");
    assert_eq!(rows.len(), 1, "only VM 101 runs: {rows:?}");
    assert_eq!(rows[0]["vmid"], "101");
    assert_eq!(rows[0]["dev"], "net0");
    assert!(rows[0]["in"].is_string());
}

#[rstest]
#[case::v8(PveVersion::V8_4, "day", 70)]
#[case::v9(PveVersion::V9_1, "hour", 60)]
fn node_rrddata_spans_the_frame(#[case] v: PveVersion, #[case] frame: &str, #[case] n: usize) {
    let w = World::from_yaml_v(LAB, v);
    let load = crate::model::resources::guest_load(&w.c.nodes, &w.c.guests, "pve");
    let points = node_rrddata(&w.c.nodes, w.c.version, load, "pve", frame, T0 * 1000).expect("rrd");
    let points = view::rrddata(&points);
    let points = points.as_array().expect("array");
    assert_eq!(points.len(), n);
    let last = &points[n - 1];
    assert_eq!(last["maxcpu"], 16);
    assert_eq!(last.get("memavailable").is_some(), v.is_v9());
}

#[rstest]
#[case::v8_file(PveVersion::V8_4, &["cpu", "iowait"], Ok("/var/lib/rrdcached/db/pve2-node/pve"))]
#[case::v9_file(PveVersion::V9_1, &["memavailable"], Ok("/var/lib/rrdcached/db/pve-node-9.0/pve"))]
#[case::v8_no_ds(PveVersion::V8_4, &["memavailable"], Err("RRD error: No DS called 'memavailable' in '/var/lib/rrdcached/db/pve2-node/pve'"))]
#[case::v8_colours(PveVersion::V8_4, &["cpu", "x", "y"], Err("fixme: no color definition at /usr/share/perl5/PVE/RRD.pm line 113."))]
#[case::v9_colours(PveVersion::V9_1, &["cpu", "iowait", "loadavg"], Err("fixme: no color definition at /usr/share/perl5/PVE/RRD.pm line 206."))]
fn node_rrd_graphs_the_nodes_file(
    #[case] v: PveVersion,
    #[case] ds: &[&str],
    #[case] want: std::result::Result<&str, &str>,
) {
    let w = World::from_yaml_v(LAB, v);
    let got = node_rrd_file(&w.c.nodes, w.c.version, "pve", ds).map_err(|e| e.to_string());
    assert_eq!(got, want.map(str::to_string).map_err(str::to_string));
    // The data sources are those rrddata reports.
    let load = crate::model::resources::guest_load(&w.c.nodes, &w.c.guests, "pve");
    let points =
        node_rrddata(&w.c.nodes, w.c.version, load, "pve", "hour", T0 * 1000).expect("rrd");
    let point = view::rrddata(&points)[59].clone();
    let mut keys: Vec<&str> = point
        .as_object()
        .expect("point")
        .keys()
        .map(String::as_str)
        .filter(|k| *k != "time")
        .collect();
    keys.sort_unstable();
    let mut sources = crate::model::node_services::stats::node_rrd_sources(v.is_v9()).to_vec();
    sources.sort_unstable();
    assert_eq!(keys, sources);
}

#[rstest]
fn the_report_has_pvereports_sections(fresh: World) {
    let c = &fresh.c;
    let r = node_report(
        &c.nodes,
        c.version,
        &c.node_services,
        &c.guests,
        &c.storage,
        "pve",
        T0,
    )
    .expect("report");
    for s in [
        "==== general system info ====",
        "# pveversion --verbose",
        "==== info about storage ====",
    ] {
        assert!(r.contains(s), "{s} missing from {r}");
    }
    // pveversion lists apt/versions' packages, with the running kernel
    // and manager.
    let kernel = crate::model::node_hw::catalog::kernel_release(c.version);
    assert!(
        r.contains(&format!(
            "# pveversion --verbose\nproxmox-ve: {}.0 (running kernel: {kernel})\npve-manager: ",
            c.version.release()
        )),
        "{r}"
    );
    assert!(r.contains(&format!(
        "(running version: {}/{})\n",
        c.version.version(),
        c.version.repoid()
    )));
    assert!(r.contains("\nqemu-server: "), "{r}");
}
