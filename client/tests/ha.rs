//! High availability (`api::ha`) against an in-process fake-pve: a VM is
//! put under HA, started through the HA manager, and rules are made on
//! 9.1; every answer is checked against the schema.

mod common;

use common::{Mode, checked_client, start};
use pve_client::api::ha::{HaResourceConfig, HaRuleConfig};
use pve_client::api::qemu::StartOptions;

const NODE: &str = "pve";

#[tokio::test]
async fn a_vm_under_ha_starts_through_the_manager() {
    let run = start().await;
    let (pve, checked) = checked_client(&run, Mode::Token);
    let ha = pve.ha();
    ha.create(
        "100",
        &HaResourceConfig::default()
            .state("stopped")
            .comment("gateway")
            .auto_rebalance(false),
    )
    .await
    .expect("create");
    let err = ha
        .create("vm:100", &HaResourceConfig::default())
        .await
        .expect_err("twice");
    assert!(
        err.to_string()
            .contains("create resource failed: resource ID 'vm:100' already defined"),
        "{err}"
    );
    let r = ha.read("vm:100").await.expect("read");
    assert_eq!(r.kind, "vm");
    assert_eq!(r.state.as_deref(), Some("stopped"));
    assert_eq!(r.comment.as_deref(), Some("gateway"));
    assert_eq!(r.auto_rebalance, Some(false));
    assert_eq!(r.digest.len(), 40);

    // `status/start` of an HA VM is an `hastart` task.
    let upid = pve
        .qemu()
        .vm_start(NODE, 100, &StartOptions::default())
        .await
        .expect("start");
    assert_eq!(upid.kind(), "hastart");
    let done = pve.tasks().wait(&upid).await.expect("wait");
    assert!(done.succeeded(), "{done:?}");
    let log = pve.tasks().log_tail(&upid, 10).await.expect("log");
    assert!(
        log.iter().any(|l| l == "Requesting HA start for VM 100"),
        "{log:?}"
    );
    assert_eq!(
        ha.read("vm:100").await.expect("read").state.as_deref(),
        Some("started")
    );
    assert!(
        !pve.qemu()
            .vm_status(NODE, 100)
            .await
            .expect("st")
            .is_running()
    );

    // The manager's round and the LRM's start task follow the clock.
    run.clock().advance(12);
    let st = pve.qemu().vm_status(NODE, 100).await.expect("status");
    assert!(st.is_running(), "{st:?}");
    assert_eq!(st.ha.as_ref().map(|h| h["managed"].clone()), Some(1.into()));
    run.clock().advance(10);
    let lines = ha.status().await.expect("status");
    let svc = lines
        .iter()
        .find(|l| l.id == "service:vm:100")
        .expect("service line");
    assert_eq!(svc.state.as_deref(), Some("started"));
    assert_eq!(svc.status, "vm:100 (pve, started)");
    assert!(lines.iter().any(|l| l.kind == "master" && l.node == NODE));
    let ms = ha.manager_status().await.expect("manager status");
    assert_eq!(
        ms["manager_status"]["service_status"]["vm:100"]["state"],
        "started"
    );

    // Rules (9.1): a resource affinity rule needs two resources.
    ha.create("vm:101", &HaResourceConfig::default())
        .await
        .expect("101");
    let err = ha
        .create_rule(
            "alone",
            &HaRuleConfig::resource_affinity(&["vm:100"], "positive"),
        )
        .await
        .expect_err("one resource");
    assert!(
        err.to_string()
            .contains("rule is ineffective as there are less than two resources"),
        "{err}"
    );
    ha.create_rule(
        "home",
        &HaRuleConfig::node_affinity(&["vm:100", "vm:101"], &["pve:2"], false).comment("prefer"),
    )
    .await
    .expect("rule");
    let rules = ha.rules(None, Some("vm:101")).await.expect("rules");
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].nodes, ["pve:2"]);
    assert_eq!(rules[0].resources, ["vm:100", "vm:101"]);
    let moved = ha.migrate("vm:100", NODE).await.expect("migrate");
    assert_eq!(moved.map(|m| m.requested_node), Some(NODE.to_string()));
    let err = ha.groups().await.expect_err("9.1 has no groups");
    assert!(
        err.to_string()
            .contains("ha groups have been migrated to rules")
    );
    ha.delete("vm:101").await.expect("delete");
    let rule = ha.read_rule("home").await.expect("purged, not gone");
    assert_eq!(rule.resources, ["vm:100"]);
    ha.delete_rule("home").await.expect("delete rule");
    assert!(ha.rules(None, None).await.expect("rules").is_empty());

    let names = checked.names();
    for want in [
        "GET status",
        "GET manager_status",
        "GET read_rule",
        "GET read",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
}
