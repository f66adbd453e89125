//! Every typed method against an in-process fake-pve, in both
//! authentication modes.

mod common;

use std::time::Duration;

use common::{MODES, Mode, T0, client, start, start_with_latency};
use pve_client::api::access::TokenOptions;
use pve_client::api::cluster::ResourceType;
use pve_client::api::nodes::{StartAll, StopAll};
use pve_client::api::tasks::{TaskFilter, TaskSource, TaskState, WaitOptions};
use pve_client::{Category, Error};

#[tokio::test]
async fn version_in_both_modes() {
    for mode in MODES {
        let run = start().await;
        let pve = client(&run, mode);
        let v = pve.version().await.expect("version");
        assert_eq!(v.release, "9.2", "{mode:?}");
        assert!(v.version.starts_with("9.2."), "{mode:?}: {v:?}");
        assert!(v.repoid.len() >= 8, "{v:?}");
        assert_eq!(
            pve.nodes().node_version("pve").await.expect("node version"),
            v
        );
    }
}

#[tokio::test]
async fn version_of_an_8_4_server() {
    let run = common::builder()
        .pve_version(fake_pve::PveVersion::V8_4)
        .start()
        .await
        .expect("starts");
    let pve = client(&run, Mode::Token);
    // Until the client has asked, it assumes the newest schema.
    assert_eq!(pve.known_release(), None);
    assert_eq!(pve.release(), pve_client::pve_schema::Release::V9_2);
    let v = pve.version().await.expect("version");
    assert_eq!(v.release, "8.4");
    assert_eq!(pve.release(), pve_client::pve_schema::Release::V8_4);
    assert_eq!(pve.spec().release, "8.4");
    let connected = pve_client::Client::connect(
        common::config(&run, Mode::Password)
            .build()
            .expect("config"),
    )
    .await
    .expect("connects");
    assert_eq!(
        connected.known_release(),
        Some(pve_client::pve_schema::Release::V8_4)
    );
}

#[tokio::test]
async fn cluster_status_resources_and_nextid() {
    for mode in MODES {
        let run = start().await;
        let pve = client(&run, mode);
        let status = pve.cluster().get_status().await.expect("status");
        assert_eq!(status.len(), 1, "{mode:?}: a standalone node lists itself");
        assert_eq!(status[0].kind, "node");
        assert_eq!(status[0].name, "pve");
        assert_eq!(status[0].local, Some(true));
        assert_eq!(status[0].online, Some(true));

        let all = pve.cluster().resources(None).await.expect("resources");
        let kinds: Vec<&str> = all.iter().map(|r| r.kind.as_str()).collect();
        assert!(
            kinds.contains(&"node") && kinds.contains(&"storage"),
            "{kinds:?}"
        );
        let gw = all
            .iter()
            .find(|r| r.id == "qemu/100")
            .expect("guest 100 listed");
        assert_eq!(gw.name.as_deref(), Some("gateway"));
        assert_eq!(gw.vmid, Some(100));
        assert_eq!(gw.template, Some(false));

        let vms = pve
            .cluster()
            .resources(Some(ResourceType::Vm))
            .await
            .expect("vms");
        assert_eq!(vms.len(), 2);
        assert!(vms.iter().all(|r| r.kind == "qemu"), "{vms:?}");
        let storages = pve
            .cluster()
            .resources(Some(ResourceType::Storage))
            .await
            .expect("storages");
        assert!(
            storages
                .iter()
                .any(|s| s.storage.as_deref() == Some("local-lvm"))
        );

        assert_eq!(pve.cluster().nextid(None).await.expect("nextid"), 102);
        assert_eq!(pve.cluster().nextid(Some(200)).await.expect("free"), 200);
        let taken = pve.cluster().nextid(Some(100)).await.expect_err("taken");
        assert_eq!(taken.category(), Category::Validation, "{taken}");
        assert_eq!(taken.message(), "Parameter verification failed.");
        assert_eq!(
            taken
                .param_errors()
                .and_then(|e| e.get("vmid"))
                .map(String::as_str),
            Some("VM 100 already exists")
        );
        assert!(!taken.is_retryable());
    }
}

#[tokio::test]
async fn datacenter_tag_style() {
    for mode in MODES {
        let run = start().await;
        let pve = client(&run, mode);
        let opts = pve.cluster().get_options().await.expect("options");
        assert_eq!(opts.tag_style, None, "{mode:?}");
        assert_eq!(
            opts.extra.get("mac_prefix"),
            Some(&serde_json::json!("BC:24:11"))
        );
        pve.cluster()
            .set_tag_style(Some("case-sensitive=1,ordering=config"))
            .await
            .expect("set");
        let style = pve
            .cluster()
            .get_options()
            .await
            .expect("options")
            .tag_style
            .expect("a tag style");
        assert_eq!(style.case_sensitive, Some(true));
        assert_eq!(style.ordering.as_deref(), Some("config"));
        let bad = pve
            .cluster()
            .set_tag_style(Some("shape=round"))
            .await
            .expect_err("not a shape");
        assert_eq!(bad.category(), Category::Validation, "{bad}");
        pve.cluster().set_tag_style(None).await.expect("removed");
        let opts = pve.cluster().get_options().await.expect("options");
        assert_eq!(opts.tag_style, None);

        // Every option, read back parsed; next-id bounds /cluster/nextid.
        let first_free = pve.cluster().nextid(None).await.expect("nextid");
        pve.cluster()
            .set_options(&[("keyboard", "de"), ("next-id", "lower=4242")], &[])
            .await
            .expect("set");
        let opts = pve.cluster().get_options().await.expect("options");
        assert_eq!(opts.extra.get("keyboard"), Some(&serde_json::json!("de")));
        assert_eq!(
            opts.extra.get("next-id"),
            Some(&serde_json::json!({"lower": "4242"}))
        );
        assert_eq!(pve.cluster().nextid(None).await.expect("nextid"), 4242);
        let crossed = pve
            .cluster()
            .set_options(&[("next-id", "lower=900,upper=800")], &[])
            .await
            .expect_err("crossed bounds");
        assert!(
            crossed
                .to_string()
                .contains("lower (900) <= upper (800) boundary rule broken"),
            "{crossed}"
        );
        pve.cluster()
            .set_options(&[], &["keyboard", "next-id"])
            .await
            .expect("deleted");
        assert_eq!(
            pve.cluster().nextid(None).await.expect("nextid"),
            first_free
        );
    }
}

#[tokio::test]
async fn cluster_status_of_a_cluster() {
    let yaml = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fake-pve/scenarios/three-node-cluster.yaml"
    ))
    .expect("scenario file");
    let run = common::builder()
        .scenario(fake_pve::Scenario::parse(&yaml, "three-node-cluster.yaml").expect("valid"))
        .start()
        .await
        .expect("starts");
    let pve = pve_client::Client::new(
        common::base(&run)
            .password("root@pam", "password")
            .node_selector(["pve3", "pve2"])
            .build()
            .expect("config"),
    )
    .expect("client");
    let status = pve.cluster().get_status().await.expect("status");
    let cluster = status
        .iter()
        .find(|s| s.kind == "cluster")
        .expect("cluster entry");
    assert_eq!(cluster.name, "lab");
    assert_eq!(cluster.nodes, Some(3));
    assert_eq!(cluster.quorate, Some(true));
    let pve3 = status.iter().find(|s| s.name == "pve3").expect("pve3");
    assert_eq!(pve3.online, Some(false));

    let nodes = pve.nodes().list_nodes().await.expect("nodes");
    assert_eq!(nodes.len(), 3);
    // pve3 is preferred but offline: the selector falls through to pve2.
    assert_eq!(pve.nodes().select_node().await.expect("a node"), "pve2");
    // Calls proxied to an offline node fail as a network error (595).
    let e = pve.nodes().node_status("pve3").await.expect_err("offline");
    assert_eq!(e.category(), Category::Network, "{e}");
    assert_eq!(e.status(), Some(595));
    assert!(e.is_retryable());
}

#[tokio::test]
async fn nodes_list_status_and_selection() {
    for mode in MODES {
        let run = start().await;
        let pve = client(&run, mode);
        let nodes = pve.nodes().list_nodes().await.expect("nodes");
        assert_eq!(nodes.len(), 1, "{mode:?}");
        assert_eq!(nodes[0].node, "pve");
        assert!(nodes[0].is_online());
        assert_eq!(nodes[0].maxcpu, Some(8));
        assert!(nodes[0].ssl_fingerprint.is_some());

        let st = pve.nodes().node_status("pve").await.expect("status");
        assert_eq!(st.cpuinfo.as_ref().and_then(|c| c.cpus), Some(8));
        let mem = st.memory.expect("memory");
        assert_eq!(mem.total, 32 * 1024 * 1024 * 1024);
        assert!(mem.used <= mem.total);
        assert_eq!(st.loadavg.len(), 3);
        assert!(
            st.pveversion
                .as_deref()
                .is_some_and(|v| v.starts_with("pve-manager/9.2"))
        );

        assert_eq!(pve.nodes().select_node().await.expect("a node"), "pve");

        let e = pve
            .nodes()
            .node_status("nope")
            .await
            .expect_err("unknown node");
        assert!(e.message().contains("hostname lookup 'nope' failed"), "{e}");
    }
}

#[tokio::test]
async fn startall_and_stopall_run_tasks() {
    for mode in MODES {
        let run = start().await;
        let pve = client(&run, mode);
        let upid = pve
            .nodes()
            .startall("pve", &StartAll::default())
            .await
            .expect("startall");
        assert_eq!(upid.kind(), "startall");
        assert_eq!(upid.node(), "pve");
        let user = if mode == Mode::Token {
            common::ROOT_TOKEN
        } else {
            "root@pam"
        };
        assert_eq!(upid.user(), user);
        let done = pve.tasks().wait(&upid).await.expect("task ends");
        assert_eq!(done.exitstatus.as_deref(), Some("OK"));
        let log = pve.tasks().read_task_log(&upid, 0, 0).await.expect("log");
        let lines: Vec<&str> = log.lines.iter().map(|l| l.t.as_str()).collect();
        assert_eq!(lines, ["Starting VM 100", "TASK OK"], "{mode:?}");
        assert_eq!(log.total, 2);
        let gw = pve
            .cluster()
            .resources(Some(ResourceType::Vm))
            .await
            .expect("vms")
            .into_iter()
            .find(|r| r.vmid == Some(100))
            .expect("vm 100");
        assert_eq!(gw.status.as_deref(), Some("running"));

        let stop = pve
            .nodes()
            .stopall(
                "pve",
                &StopAll {
                    timeout: Some(30),
                    vms: vec![101],
                    ..StopAll::default()
                },
            )
            .await
            .expect("stopall");
        pve.tasks().wait(&stop).await.expect("stopall ends");
        let log = pve.tasks().read_task_log(&stop, 0, 0).await.expect("log");
        assert_eq!(log.lines[0].t, "Stopping VM 101 (timeout = 30 seconds)");

        let forced = pve
            .nodes()
            .startall(
                "pve",
                &StartAll {
                    force: Some(true),
                    vms: vec![101],
                    max_workers: Some(2),
                },
            )
            .await
            .expect("startall with options");
        pve.tasks().wait(&forced).await.expect("ends");

        let bad = pve
            .nodes()
            .stopall(
                "pve",
                &StopAll {
                    timeout: Some(99_999),
                    ..StopAll::default()
                },
            )
            .await
            .expect_err("timeout out of range");
        assert_eq!(bad.category(), Category::Validation);
        assert!(
            bad.param_errors()
                .is_some_and(|e| e.contains_key("timeout")),
            "{bad}"
        );
    }
}

#[tokio::test]
async fn task_list_status_and_log() {
    for mode in MODES {
        let run = start().await;
        let pve = client(&run, mode);
        let a = pve
            .nodes()
            .startall("pve", &StartAll::default())
            .await
            .expect("a");
        let b = pve
            .nodes()
            .stopall("pve", &StopAll::default())
            .await
            .expect("b");
        let list = pve
            .tasks()
            .node_tasks("pve", &TaskFilter::default())
            .await
            .expect("list");
        assert_eq!(list.total, 2, "{mode:?}");
        assert_eq!(list.tasks[0].upid, b, "newest first");
        assert_eq!(list.tasks[1].upid, a);
        assert_eq!(list.tasks[1].status.as_deref(), Some("OK"));
        let only = pve
            .tasks()
            .node_tasks(
                "pve",
                &TaskFilter {
                    typefilter: Some("startall".into()),
                    limit: Some(10),
                    source: Some(TaskSource::All),
                    since: Some(T0 - 10),
                    statusfilter: vec!["ok".into()],
                    ..TaskFilter::default()
                },
            )
            .await
            .expect("filtered");
        assert_eq!(only.tasks.len(), 1);
        assert_eq!(only.tasks[0].kind, "startall");
        let none = pve
            .tasks()
            .node_tasks(
                "pve",
                &TaskFilter {
                    errors: Some(true),
                    ..TaskFilter::default()
                },
            )
            .await
            .expect("errors only");
        assert_eq!(none.tasks.len(), 0);
        assert_eq!(none.total, 0);

        let st = pve.tasks().read_task_status(&a).await.expect("status");
        assert_eq!(st.status, TaskState::Stopped);
        assert_eq!(st.upid, a);
        assert_eq!(st.kind, "startall");
        assert_eq!(st.starttime, T0);
        assert!(st.succeeded());

        let page = pve.tasks().read_task_log(&a, 1, 1).await.expect("page");
        assert_eq!(page.total, 2);
        assert_eq!(page.lines.len(), 1);
        assert_eq!(page.lines[0].n, 2);
        assert_eq!(page.lines[0].t, "TASK OK");
        assert_eq!(
            pve.tasks().log_tail(&a, 1).await.expect("tail"),
            ["TASK OK"]
        );

        let bad = pve
            .tasks()
            .node_tasks(
                "pve",
                &TaskFilter {
                    statusfilter: vec!["fine".into()],
                    ..TaskFilter::default()
                },
            )
            .await
            .expect_err("bad filter");
        assert_eq!(bad.category(), Category::Validation);
        assert!(
            bad.param_errors()
                .and_then(|e| e.get("statusfilter"))
                .is_some_and(|m| m.trim_end() == "invalid format - invalid status 'fine'"),
            "{bad}"
        );
    }
}

#[tokio::test]
async fn waiting_follows_the_emulated_clock() {
    for mode in MODES {
        let run = start_with_latency("startall", 5_000).await;
        let pve = client(&run, mode);
        let upid = pve
            .nodes()
            .startall("pve", &StartAll::default())
            .await
            .expect("startall");
        let st = pve.tasks().read_task_status(&upid).await.expect("status");
        assert!(st.is_running(), "{mode:?}: {st:?}");
        assert_eq!(st.exitstatus, None);
        let running = pve
            .tasks()
            .node_tasks(
                "pve",
                &TaskFilter {
                    source: Some(TaskSource::Active),
                    ..TaskFilter::default()
                },
            )
            .await
            .expect("active");
        assert_eq!(running.tasks.len(), 1);

        let waiter = {
            let pve = pve.clone();
            let upid = upid.clone();
            tokio::spawn(async move { pve.tasks().wait(&upid).await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            !waiter.is_finished(),
            "the task cannot end before the clock moves"
        );
        run.clock().advance(5);
        let done = waiter.await.expect("joined").expect("task ends");
        assert_eq!(done.exitstatus.as_deref(), Some("OK"));
    }
}

#[tokio::test]
async fn waiting_gives_up_after_the_timeout() {
    let run = start_with_latency("startall", 60_000).await;
    let pve = client(&run, Mode::Token);
    let upid = pve
        .nodes()
        .startall("pve", &StartAll::default())
        .await
        .expect("startall");
    let opts = WaitOptions::default()
        .poll_interval(Duration::from_millis(5))
        .timeout(Duration::from_millis(50));
    let e = pve
        .tasks()
        .wait_with(&upid, &opts)
        .await
        .expect_err("times out");
    assert_eq!(e.category(), Category::Timeout, "{e}");
    assert!(e.message().contains("still running"), "{e}");
    assert!(
        pve.tasks()
            .read_task_status(&upid)
            .await
            .expect("status")
            .is_running()
    );
}

#[tokio::test]
async fn a_stopped_task_fails_with_its_log() {
    for mode in MODES {
        let run = start_with_latency("startall", 60_000).await;
        let pve = client(&run, mode);
        let upid = pve
            .nodes()
            .startall("pve", &StartAll::default())
            .await
            .expect("startall");
        pve.tasks().stop_task(&upid).await.expect("stop");
        let e = pve.tasks().wait(&upid).await.expect_err("task failed");
        match &e {
            Error::TaskFailed {
                upid: failed,
                exitstatus,
                log_tail,
            } => {
                assert_eq!(failed, upid.as_str());
                assert_eq!(exitstatus, "received interrupt");
                assert_eq!(
                    log_tail.last().map(String::as_str),
                    Some("TASK ERROR: received interrupt"),
                    "{mode:?}"
                );
            }
            other => panic!("{mode:?}: {other:?}"),
        }
        assert_eq!(e.category(), Category::TaskFailed);
        assert!(!e.is_retryable());
        // Stopping an ended task is a no-op, as in PVE.
        pve.tasks().stop_task(&upid).await.expect("no-op");
        let listed = pve
            .tasks()
            .node_tasks(
                "pve",
                &TaskFilter {
                    errors: Some(true),
                    ..TaskFilter::default()
                },
            )
            .await
            .expect("failed tasks");
        assert_eq!(listed.tasks.len(), 1);
        assert_eq!(
            listed.tasks[0].status.as_deref(),
            Some("received interrupt")
        );
    }
}

#[tokio::test]
async fn unknown_tasks_are_refused() {
    let run = start().await;
    let pve = client(&run, Mode::Password);
    let ghost: pve_client::api::tasks::Upid =
        "UPID:pve:00001234:00005678:6A9C3E80:qmstart:100:root@pam:"
            .parse()
            .expect("well-formed");
    let e = pve
        .tasks()
        .read_task_status(&ghost)
        .await
        .expect_err("unknown");
    assert_eq!(e.category(), Category::Validation, "{e}");
    assert_eq!(
        e.param_errors()
            .and_then(|m| m.get("upid"))
            .map(String::as_str),
        Some("no such task")
    );
}

#[tokio::test]
async fn access_domains_tickets_and_tokens() {
    for mode in MODES {
        let run = start().await;
        let pve = client(&run, mode);
        let realms = pve.access().list_domains().await.expect("domains");
        let names: Vec<&str> = realms.iter().map(|d| d.realm.as_str()).collect();
        assert!(
            names.contains(&"pam") && names.contains(&"pve"),
            "{names:?}"
        );

        let t = pve
            .access()
            .create_ticket("root@pam", "password")
            .await
            .expect("login");
        assert_eq!(t.username, "root@pam");
        let ticket = t.ticket.expect("ticket");
        assert!(ticket.expose().starts_with("PVE:root@pam:"));
        assert!(t.csrf_prevention_token.is_some());
        assert!(!format!("{ticket:?}").contains("PVE:"));
        let renewed = pve
            .access()
            .create_ticket("root@pam", ticket.expose())
            .await
            .expect("renewal with the ticket as password");
        assert_eq!(renewed.username, "root@pam");
        let wrong = pve
            .access()
            .create_ticket("root@pam", "wrong")
            .await
            .expect_err("wrong password");
        assert_eq!(wrong.category(), Category::Authentication);
        assert_eq!(wrong.message(), "authentication failure");

        let access = pve.access();
        let made = access
            .generate_token(
                "root@pam",
                "deploy",
                &TokenOptions {
                    comment: Some("deployments".into()),
                    privsep: Some(false),
                    ..TokenOptions::default()
                },
            )
            .await
            .expect("generate");
        assert_eq!(made.full_tokenid, "root@pam!deploy");
        assert_eq!(made.info.privsep, Some(false));
        assert_eq!(made.value.expose().len(), 36, "a UUID");

        // The new token works on its own.
        let with_token = pve_client::Client::new(
            common::base(&run)
                .token(&made.full_tokenid, made.value.clone())
                .build()
                .expect("config"),
        )
        .expect("client");
        assert_eq!(with_token.version().await.expect("version").release, "9.2");

        let listed = access.token_index("root@pam").await.expect("index");
        assert!(
            listed
                .iter()
                .any(|t| t.tokenid.as_deref() == Some("deploy")),
            "{listed:?}"
        );
        let read = access.read_token("root@pam", "deploy").await.expect("read");
        assert_eq!(read.comment.as_deref(), Some("deployments"));
        let updated = access
            .update_token_info(
                "root@pam",
                "deploy",
                &TokenOptions {
                    comment: Some("rotated".into()),
                    expire: Some(T0 + 86_400),
                    ..TokenOptions::default()
                },
            )
            .await
            .expect("update");
        assert_eq!(updated.comment.as_deref(), Some("rotated"));
        assert_eq!(updated.expire, Some(T0 + 86_400));
        let cleared = access
            .update_token_info(
                "root@pam",
                "deploy",
                &TokenOptions {
                    delete: vec!["comment".into()],
                    ..TokenOptions::default()
                },
            )
            .await
            .expect("delete comment");
        assert_eq!(cleared.comment, None);

        // A new secret (9.2): the old one stops working at once.
        let rotated = access
            .regenerate_token("root@pam", "deploy", &TokenOptions::default())
            .await
            .expect("regenerate");
        assert_eq!(rotated.full_tokenid, "root@pam!deploy");
        assert_ne!(rotated.value.expose(), made.value.expose());
        assert_eq!(rotated.info.privsep, Some(false));
        let e = with_token.version().await.expect_err("old secret");
        assert_eq!(e.category(), Category::Authentication, "{mode:?}: {e}");
        let with_token = pve_client::Client::new(
            common::base(&run)
                .token(&rotated.full_tokenid, rotated.value.clone())
                .build()
                .expect("config"),
        )
        .expect("client");
        assert_eq!(with_token.version().await.expect("version").release, "9.2");

        access
            .remove_token("root@pam", "deploy")
            .await
            .expect("remove");
        let gone = access
            .read_token("root@pam", "deploy")
            .await
            .expect_err("gone");
        assert!(gone.message().contains("deploy"), "{gone}");
        let e = with_token.version().await.expect_err("removed token");
        assert_eq!(e.category(), Category::Authentication, "{mode:?}: {e}");

        let dup = access
            .generate_token("root@pam", "automation", &TokenOptions::default())
            .await
            .expect_err("exists");
        assert_eq!(dup.category(), Category::Validation, "{dup}");
        assert_eq!(
            dup.param_errors()
                .and_then(|e| e.get("tokenid"))
                .map(String::as_str),
            Some("Token already exists.")
        );
    }
}

#[tokio::test]
async fn node_power_execute_and_bulk_actions() {
    use pve_client::api::node_power::{BulkOptions, Command, PowerCommand};
    let run = start().await;
    let pve = client(&run, Mode::Password);
    // execute: one answer per command, failures included.
    let answers = pve
        .nodes()
        .execute(
            "pve",
            &[
                Command {
                    path: "version".into(),
                    method: "GET".into(),
                    args: Default::default(),
                },
                Command {
                    path: "nothing".into(),
                    method: "GET".into(),
                    args: Default::default(),
                },
            ],
        )
        .await
        .expect("execute");
    assert_eq!(answers.len(), 2);
    assert_eq!(answers[0].status, 200);
    assert!(
        answers[0]
            .data
            .as_ref()
            .is_some_and(|d| d["release"] == "9.2")
    );
    assert_eq!(answers[1].status, 500);
    assert_eq!(
        answers[1].message.as_deref(),
        Some("no handler for 'nodes/pve/nothing'\n")
    );
    // A bulk start of VM 100.
    let upid = pve
        .bulk_guests()
        .start(&BulkOptions {
            vms: vec![100],
            ..BulkOptions::default()
        })
        .await
        .expect("bulk start");
    assert_eq!(upid.kind(), "bulk-start");
    let done = pve.tasks().wait(&upid).await.expect("task ends");
    assert_eq!(done.exitstatus.as_deref(), Some("OK"));
    // The node reboots: offline, then back.
    pve.nodes()
        .node_cmd("pve", PowerCommand::Reboot)
        .await
        .expect("reboot");
    let nodes = pve.nodes().list_nodes().await.expect("nodes");
    assert_eq!(nodes[0].status, "offline");
}
